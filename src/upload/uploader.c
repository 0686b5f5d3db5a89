/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The uploader (prupload.h) and its thread.  Each window is encoded once
 * per format (a gzipped pprof; a gzipped OTLP request), written to the
 * directory sink, and sent to each backend at once when nothing waits
 * for it; what it does not take then is kept in its spool: so the order
 * of delivery is the order of the spool, a restart loses nothing
 * spooled, a full disk stops no delivery to a backend that is up, and a
 * backend that is down costs the agent a file per window, not memory.
 * A backend is tried when its
 * backoff allows; one that answers 408, 429 or 5xx, or not at all, is tried
 * again later (exponential backoff with jitter, or what Retry-After
 * says), the same request first.
 */
#include <errno.h>
#include <inttypes.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "upload/upload.h"

void pr_window_free(struct pr_window *w)
{
	if (!w)
		return;
	pr_profile_free(w->profile);
	free(w->service);
	for (size_t i = 0; i < w->nr_labels; i++) {
		free((char *)w->labels[i].key);
		free((char *)w->labels[i].value);
	}
	free(w->labels);
	for (size_t i = 0; i < w->nr_resource; i++) {
		free((char *)w->resource[i].key);
		free((char *)w->resource[i].str);
	}
	free(w->resource);
	free(w);
}

/* ---- delivery ---- */

/* The monotonic clock, in real seconds. */
static double real_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/*
 * The uploader's clock, in seconds: backoff, Retry-After and the close's
 * grace are measured in it (a request's timeout is curl's, in real
 * time).  It is the monotonic clock, run faster only by the test hook
 * (pr_uploader_opts.clock_rate: the agent's test lives through a
 * backend's long outage in a few seconds).
 */
static double now_s(const struct pr_uploader *u)
{
	return real_s() * u->clock_rate;
}

struct body {
	char *buf;
	size_t len;
};

static size_t keep_reply(char *data, size_t size, size_t n, void *arg)
{
	struct body *b = arg;
	size_t take = size * n;

	/* Only the start of a refusal is logged. */
	if (b->len < REASON_MAX) {
		size_t room = REASON_MAX - b->len;
		size_t k = take < room ? take : room;

		memcpy(b->buf + b->len, data, k);
		b->len += k;
	}
	return take;
}

static size_t retry_after_header(char *data, size_t size, size_t n, void *arg)
{
	double *after = arg;
	size_t len = size * n;
	char line[256];

	if (len >= sizeof(line) || len < 12 || strncasecmp(data, "Retry-After:", 12))
		return len;
	memcpy(line, data + 12, len - 12);
	line[len - 12] = '\0';
	line[strcspn(line, "\r\n")] = '\0';
	{
		char *end;
		double s = strtod(line, &end);
		time_t when;

		if (end != line && (*end == '\0' || *end == ' ') && s >= 0)
			*after = s;
		else if ((when = curl_getdate(line, NULL)) > 0)
			*after = difftime(when, time(NULL)) > 0 ? difftime(when, time(NULL)) : 0;
	}
	return len;
}

/* The reply's printable start, for the log. */
static void reason(const struct body *b, char *out, size_t len)
{
	size_t n = 0;

	for (size_t i = 0; i < b->len && n + 1 < len; i++)
		out[n++] = b->buf[i] >= 0x20 && b->buf[i] < 0x7f ? b->buf[i] : ' ';
	out[n] = '\0';
}

static void backoff(struct pr_uploader *u, struct backend *be, double retry_after)
{
	double delay = BACKOFF_MIN_S;

	for (unsigned i = 1; i < be->failures && delay < BACKOFF_MAX_S; i++)
		delay *= 2;
	if (delay > BACKOFF_MAX_S)
		delay = BACKOFF_MAX_S;
	/* Half of it, and a random part of the other half: agents that lost
	 * a backend together do not all come back in the same second. */
	delay = delay / 2 + delay / 2 * ((double)rand_r(&u->rand_state) / RAND_MAX);
	if (retry_after >= 0)
		delay = retry_after < RETRY_AFTER_MAX_S ? retry_after : RETRY_AFTER_MAX_S;
	be->next_try = now_s(u) + delay;
}

/*
 * "spooled" counts windows that had to wait for a backend, each once:
 * those in the spool when it fails (sent first otherwise), and those that
 * come while it is failing.  The counted ones are the oldest `counted` of
 * the spool.  `dropped` of the oldest left it, dropped.
 */
static void gone(struct pr_uploader *u, struct backend *be, uint64_t dropped)
{
	atomic_fetch_add(&u->dropped, dropped);
	be->counted -= dropped < be->counted ? dropped : be->counted;
}

static void pop(struct backend *be)
{
	pr__spool_pop(be->spool);
	if (be->counted)
		be->counted--;
}

/* What waits for `be`: in its spool, then in memory. */
static size_t waiting(const struct backend *be)
{
	return pr__spool_count(be->spool) + be->nr_held;
}

/* The oldest window held in memory for `be` is gone. */
static void unhold(struct backend *be)
{
	struct held *h = be->held;

	be->held = h->next;
	if (!be->held)
		be->held_last = NULL;
	be->nr_held--;
	be->held_bytes -= h->r.len;
	pr__request_clear(&h->r);
	free(h);
}

/*
 * Request `r` held in memory for `be`: its spool cannot be written (a full
 * or read-only disk, a folder removed).  At most MEMORY_MAX bytes, and no
 * more than the spool may hold: the oldest held go first, counted as
 * dropped.  0 or -ENOMEM.
 */
static int hold(struct pr_uploader *u, struct backend *be, const struct pr__request *r)
{
	uint64_t max = u->spool_max_bytes < MEMORY_MAX ? u->spool_max_bytes : MEMORY_MAX;
	struct held *h = calloc(1, sizeof(*h));
	uint64_t dropped = 0;

	if (!h || !(h->r.target = strdup(r->target)) ||
	    !(h->r.content_type = strdup(r->content_type)) ||
	    !(h->r.content_encoding = strdup(r->content_encoding)) ||
	    !(h->r.body = malloc(r->len ? r->len : 1))) {
		if (h)
			pr__request_clear(&h->r);
		free(h);
		return -ENOMEM;
	}
	memcpy(h->r.body, r->body, r->len);
	h->r.len = r->len;
	while (be->held && be->held_bytes + r->len > max) {
		unhold(be);
		dropped++;
	}
	if (dropped)
		pr__log(&u->lg, PR_LOG_WARN, "%" PRIu64 " of the oldest windows held in memory for %s "
			"dropped (at most %" PRIu64 " bytes are held while the spool cannot be written)",
			dropped, be->name, max);
	atomic_fetch_add(&u->dropped, dropped);
	if (be->held_last)
		be->held_last->next = h;
	else
		be->held = h;
	be->held_last = h;
	be->nr_held++;
	be->held_bytes += r->len;
	return 0;
}

/* Backend `be` failed after taking every window: those in its spool wait. */
static void count_waiting(struct pr_uploader *u, struct backend *be)
{
	size_t n = pr__spool_count(be->spool);

	atomic_fetch_add(&u->spooled, n - be->counted);
	be->counted = n;
}

/* What became of a request. */
enum outcome { TAKEN, REFUSED, AGAIN };

/* Send request `r` to `be` once: counted, logged, and the backoff set. */
static enum outcome post(struct pr_uploader *u, struct backend *be, const struct pr__request *r)
{
	struct body reply = { .buf = malloc(REASON_MAX) };
	double retry_after = -1, t0, timeout = u->timeout_s;
	char url[8192], why[REASON_MAX + 1], errbuf[CURL_ERROR_SIZE] = "";
	long status = 0;
	enum outcome out;
	CURLcode rc;

	if (!reply.buf) {
		/* Tried again later, as if it had failed. */
		be->failures++;
		backoff(u, be, -1);
		return AGAIN;
	}
	if (u->closing) {
		/* What is left of the grace, in real seconds. */
		double left = (u->deadline - now_s(u)) / u->clock_rate;

		if (left < timeout)
			timeout = left > 0.1 ? left : 0.1;
	}
	snprintf(url, sizeof(url), "%s%s", be->url, r->target);
	curl_easy_setopt(be->curl, CURLOPT_URL, url);
	curl_easy_setopt(be->curl, CURLOPT_POSTFIELDS, r->body);
	curl_easy_setopt(be->curl, CURLOPT_POSTFIELDSIZE_LARGE, (curl_off_t)r->len);
	curl_easy_setopt(be->curl, CURLOPT_TIMEOUT_MS, (long)(timeout * 1000));
	curl_easy_setopt(be->curl, CURLOPT_WRITEFUNCTION, keep_reply);
	curl_easy_setopt(be->curl, CURLOPT_WRITEDATA, &reply);
	curl_easy_setopt(be->curl, CURLOPT_HEADERFUNCTION, retry_after_header);
	curl_easy_setopt(be->curl, CURLOPT_HEADERDATA, &retry_after);
	curl_easy_setopt(be->curl, CURLOPT_ERRORBUFFER, errbuf);
	t0 = real_s();
	rc = curl_easy_perform(be->curl);
	atomic_store(&u->latency_us, (uint64_t)((real_s() - t0) * 1e6));
	if (rc == CURLE_OK)
		curl_easy_getinfo(be->curl, CURLINFO_RESPONSE_CODE, &status);
	reason(&reply, why, sizeof(why));
	if (rc == CURLE_OK && status >= 200 && status < 300) {
		if (be->failures)
			pr__log(&u->lg, PR_LOG_INFO, "%s is back: delivering %zu waiting windows", be->name,
				waiting(be));
		atomic_fetch_add(&u->sent, 1);
		atomic_fetch_add(&u->bytes_sent, r->len);
		be->failures = 0;
		be->next_try = 0;
		out = TAKEN;
	} else if (rc != CURLE_OK || status == 408 || status == 429 || status >= 500) {
		char what[CURL_ERROR_SIZE + REASON_MAX + 32];

		if (rc != CURLE_OK)
			snprintf(what, sizeof(what), "%s", errbuf[0] ? errbuf : curl_easy_strerror(rc));
		else
			snprintf(what, sizeof(what), "HTTP %ld%s%s", status, why[0] ? ": " : "", why);
		if (!be->failures)
			pr__log(&u->lg, PR_LOG_WARN, "%s did not take a window (%s); keeping it and the next "
				"ones in %s until it does", be->name, what, u->spool_dir);
		else
			pr__log(&u->lg, PR_LOG_DEBUG, "%s: try %u failed (%s)", be->name, be->failures + 1,
				what);
		if (!be->failures)
			count_waiting(u, be);
		be->failures++;
		atomic_fetch_add(&u->retries, 1);
		backoff(u, be, retry_after);
		out = AGAIN;
	} else {
		/* Not a passing fault: the same request would be refused again. */
		pr__log(&u->lg, PR_LOG_ERROR, "%s refused a window with HTTP %ld: %s%s", be->name, status,
			why[0] ? why : "(no reason given)",
			status == 401 || status == 403 ? "; check the credentials" : "");
		atomic_fetch_add(&u->refused, 1);
		out = REFUSED;
	}
	free(reply.buf);
	return out;
}

/* Try the oldest request waiting for `be` once. */
static void attempt(struct pr_uploader *u, struct backend *be)
{
	struct pr__request r;
	uint64_t dropped = 0;
	int got = pr__spool_peek(be->spool, &r, &dropped);

	gone(u, be, dropped);
	if (got > 0 && post(u, be, &r) != AGAIN)
		pop(be);
	else if (!got && be->held && post(u, be, &be->held->r) != AGAIN)
		unhold(be);
	atomic_store(&u->spool_count[be - u->be], waiting(be));
	if (got > 0)
		pr__request_clear(&r);
}

/* `w`'s profile in `fmt` (PR_FORMAT_PPROF, or -1 for an OTLP request,
 * gzipped as it goes over HTTP) into *buf.  0 or a negative errno. */
static int encode(const struct pr_window *w, int fmt, char **buf, size_t *len)
{
	PR_OPTS(pr_otlp_opts, oo, .resource = w->resource, .nr_resource = w->nr_resource,
		.scope_name = "dwarfsample", .scope_version = PR_VERSION, .gzip = true);
	FILE *f = open_memstream(buf, len);
	int err = !f ? -ENOMEM : fmt < 0 ? pr_profile_write_otlp(w->profile, f, &oo)
					 : pr_profile_write(w->profile, PR_FORMAT_PPROF, f, NULL);

	if (f && fclose(f) && !err)
		err = -EIO;
	return err;
}

/* Keep request `r` for backend `be`, in order. */
static void spool(struct pr_uploader *u, struct backend *be, const struct pr_window *w,
		  const struct pr__request *r);

/*
 * Request `r` of window `w` to backend `be`: sent at once when nothing
 * waits for it and its backoff allows, spooled only when that cannot be
 * (so a full disk stops no delivery to a backend that takes windows);
 * else spooled behind the others, in order.
 */
static void deliver(struct pr_uploader *u, struct backend *be, const struct pr_window *w,
		    const struct pr__request *r)
{
	if (r->target && r->body && !waiting(be) && be->next_try <= now_s(u) &&
	    (!u->closing || now_s(u) < u->deadline) && post(u, be, r) != AGAIN)
		return;
	spool(u, be, w, r);
}

static void spool(struct pr_uploader *u, struct backend *be, const struct pr_window *w,
		  const struct pr__request *r)
{
	uint64_t dropped = 0;
	/* Behind what is held in memory, in order. */
	int err = !r->target || !r->body ? -ENOMEM : be->held ? -EAGAIN
				: pr__spool_push(be->spool, r, &dropped);

	if (err && err != -ENOMEM) {
		if (!be->held && !be->spool_failing)
			pr__log(&u->lg, PR_LOG_WARN, "the spool of %s cannot be written (%s): windows "
				"wait in memory until it can", be->name, strerror(-err));
		be->spool_failing = true;
		if (!(err = hold(u, be, r))) {
			atomic_fetch_add(&u->spooled, 1);
			atomic_store(&u->spool_count[be - u->be], waiting(be));
			return;
		}
	} else if (!err && be->spool_failing) {
		be->spool_failing = false;
		pr__log(&u->lg, PR_LOG_INFO, "the spool of %s can be written again", be->name);
	}
	if (dropped)
		pr__log(&u->lg, PR_LOG_WARN, "the spool of %s is full (" PR_LOG_SETTING_SPOOL_SIZE
			"): %" PRIu64 " of the oldest windows dropped", be->name, dropped);
	gone(u, be, dropped);
	if (err) {
		pr__log(&u->lg, PR_LOG_ERROR, "window %" PRIu64 " of %s could not be spooled for %s: %s",
			w->seq, w->service, be->name, strerror(-err));
		atomic_fetch_add(&u->lost, 1);
		u->lost_any = true;
	} else if (be->failures) {
		/* It waits behind the ones that could not be delivered. */
		atomic_fetch_add(&u->spooled, 1);
		be->counted++;
	}
	atomic_store(&u->spool_count[be - u->be], waiting(be));
}

/* Encode window `w` and hand it to every sink. */
static void take_window(struct pr_uploader *u, struct pr_window *w)
{
	char *buf = NULL;
	size_t len = 0;
	int err = u->out_dir ? encode(w, PR_FORMAT_PPROF, &buf, &len) : 0;

	if (!err && u->out_dir)
		pr__outdir_write(u, w, buf, len);
	if (!err && u->be[B_PYROSCOPE].url) {
		struct pr__request r;

		if (!(err = pr__pyroscope_request(w, &r)))
			deliver(u, &u->be[B_PYROSCOPE], w, &r);
		pr__request_clear(&r);
	}
	free(buf);
	buf = NULL;
	if (!err && u->be[B_OTLP].url && !(err = encode(w, -1, &buf, &len))) {
		struct pr__request r = {
			.target = (char *)"/v1development/profiles",
			.content_type = (char *)"application/x-protobuf",
			.content_encoding = (char *)"gzip",
			.body = buf, .len = len,
		};

		deliver(u, &u->be[B_OTLP], w, &r);
	}
	free(buf);
	if (err) {
		pr__log(&u->lg, PR_LOG_ERROR, "window %" PRIu64 " of %s could not be encoded: %s", w->seq,
			w->service, strerror(-err));
		atomic_fetch_add(&u->lost, 1);
		u->lost_any = true;
	}
}

static bool due(const struct pr_uploader *u, const struct backend *be, double now)
{
	return be->url && waiting(be) && (be->next_try <= now || (u->closing &&
		/* Closing: one more try once the backoff ends, if in time. */
		be->next_try <= u->deadline && now >= be->next_try));
}

/* Whether a backend still has something to try before the close's
 * deadline. */
static bool pending(const struct pr_uploader *u, const struct backend *be, double now)
{
	return be->url && waiting(be) && now < u->deadline &&
	       be->next_try <= u->deadline;
}

static void *run(void *arg)
{
	struct pr_uploader *u = arg;

	pthread_mutex_lock(&u->lock);
	for (;;) {
		double now = now_s(u), until = 0;
		struct backend *ready = NULL;
		bool wait = false;

		if (u->first) {
			struct queued *q = u->first;

			u->first = q->next;
			if (!u->first)
				u->last = NULL;
			u->nr_queued--;
			pthread_mutex_unlock(&u->lock);
			take_window(u, q->w);
			pr_window_free(q->w);
			free(q);
			pthread_mutex_lock(&u->lock);
			continue;
		}
		for (int b = 0; b < NR_BACKENDS && !ready; b++) {
			struct backend *be = &u->be[b];

			if (due(u, be, now) && (!u->closing || now < u->deadline))
				ready = be;
			else if (be->url && waiting(be) &&
				 (!u->closing || pending(u, be, now))) {
				/* The soonest a backend may be tried again. */
				if (!wait || be->next_try < until)
					until = be->next_try;
				wait = true;
			}
		}
		if (ready) {
			pthread_mutex_unlock(&u->lock);
			attempt(u, ready);
			pthread_mutex_lock(&u->lock);
			continue;
		}
		if (u->closing && !wait)
			break;
		if (wait) {
			struct timespec ts;

			if (u->closing && u->deadline < until)
				until = u->deadline;
			clock_gettime(CLOCK_MONOTONIC, &ts);
			/* In real seconds. */
			until = (until - now) / u->clock_rate;
			if (until < 0)
				until = 0;
			ts.tv_sec += (time_t)until;
			ts.tv_nsec += (long)((until - (double)(time_t)until) * 1e9);
			if (ts.tv_nsec >= 1000000000) {
				ts.tv_sec++;
				ts.tv_nsec -= 1000000000;
			}
			pthread_cond_timedwait(&u->wake, &u->lock, &ts);
		} else {
			pthread_cond_wait(&u->wake, &u->lock);
		}
	}
	pthread_mutex_unlock(&u->lock);
	return NULL;
}

/* ---- the uploader ---- */

/* Header `h` ("Name: value") added to backend `be`'s.  0 or -ENOMEM. */
static int add_header(struct pr_uploader *u, struct backend *be, const char *h)
{
	struct curl_slist *l = curl_slist_append(be->headers, h);

	if (!l) {
		pr__log(&u->lg, PR_LOG_ERROR, "out of memory");
		return -ENOMEM;
	}
	be->headers = l;
	return 0;
}

/* Whether `url` has a user (and password) before its host. */
static bool has_userinfo(const char *url)
{
	const char *host = strstr(url, "://");

	host = host ? host + 3 : url;
	return memchr(host, '@', strcspn(host, "/?#")) != NULL;
}

static int open_backend(struct pr_uploader *u, struct backend *be, const char *name,
			const char *url, const char *spool_leaf, const char *const *headers)
{
	char dir[4096];
	size_t n = strlen(url);
	int err;

	be->name = name;
	if (strncmp(url, "http://", 7) && strncmp(url, "https://", 8)) {
		pr__log(&u->lg, PR_LOG_ERROR, "invalid %s URL '%s': it must start with http:// or "
			"https://", name, url);
		return -EINVAL;
	}
	if (has_userinfo(url)) {
		/* Not the URL itself: it holds a secret. */
		pr__log(&u->lg, PR_LOG_ERROR, "the URL of %s carries credentials (user:password@host), "
			"which every user can read in the command line of a process: give them as %s",
			name, be == &u->be[B_PYROSCOPE] ? PR_LOG_SETTING_PYROSCOPE_CREDENTIALS
							 : PR_LOG_SETTING_OTLP_HEADERS);
		return -EINVAL;
	}
	while (n > 0 && url[n - 1] == '/')
		n--;
	snprintf(dir, sizeof(dir), "%s/%s", u->spool_dir, spool_leaf);
	if (!(be->url = strndup(url, n)) || !(be->curl = curl_easy_init())) {
		pr__log(&u->lg, PR_LOG_ERROR, "out of memory");
		return -ENOMEM;
	}
	for (const char *const *h = headers; *h; h++)
		if ((err = add_header(u, be, *h)))
			return err;
	if (!(be->spool = pr__spool_open(dir, u->spool_max_bytes, &u->lg)))
		return -errno;
	curl_easy_setopt(be->curl, CURLOPT_NOSIGNAL, 1L);
	curl_easy_setopt(be->curl, CURLOPT_USERAGENT, "dwarfsample-agent/" PR_VERSION);
	curl_easy_setopt(be->curl, CURLOPT_CONNECTTIMEOUT_MS, 10000L);
	curl_easy_setopt(be->curl, CURLOPT_PROTOCOLS_STR, "http,https");
	curl_easy_setopt(be->curl, CURLOPT_HTTPHEADER, be->headers);
	/* Counted by the run that spooled them. */
	be->counted = pr__spool_count(be->spool);
	if (pr__spool_count(be->spool))
		pr__log(&u->lg, PR_LOG_INFO, "%zu windows left by an earlier run wait for %s; "
			"delivering them first", pr__spool_count(be->spool), name);
	return 0;
}

/* The backends' credentials: Pyroscope's basic auth and tenant, OTLP's
 * headers.  0 or -ENOMEM. */
static int credentials(struct pr_uploader *u, const struct pr_uploader_opts *o)
{
	struct backend *py = &u->be[B_PYROSCOPE], *ot = &u->be[B_OTLP];
	const char *tenant = PR_OPTS_GET(o, pyroscope_tenant, "");
	const struct pr_label *h = PR_OPTS_GET(o, otlp_headers, NULL);
	size_t nr_h = h ? PR_OPTS_GET(o, nr_otlp_headers, 0) : 0;
	char *hdr = NULL;
	int err = 0;

	snprintf(u->user, sizeof(u->user), "%s", PR_OPTS_GET(o, pyroscope_user, ""));
	snprintf(u->password, sizeof(u->password), "%s", PR_OPTS_GET(o, pyroscope_password, ""));
	if (py->url && (u->user[0] || u->password[0])) {
		curl_easy_setopt(py->curl, CURLOPT_HTTPAUTH, (long)CURLAUTH_BASIC);
		curl_easy_setopt(py->curl, CURLOPT_USERNAME, u->user);
		curl_easy_setopt(py->curl, CURLOPT_PASSWORD, u->password);
	}
	if (py->url && tenant[0]) {
		err = asprintf(&hdr, "X-Scope-OrgID: %s", tenant) < 0 ? -ENOMEM
								      : add_header(u, py, hdr);
		free(hdr);
	}
	for (size_t i = 0; !err && ot->url && i < nr_h; i++) {
		hdr = NULL;
		err = asprintf(&hdr, "%s: %s", h[i].key, h[i].value) < 0 ? -ENOMEM
									 : add_header(u, ot, hdr);
		/* The value may be a secret. */
		if (hdr)
			explicit_bzero(hdr, strlen(hdr));
		free(hdr);
	}
	return err;
}

static void close_backend(struct backend *be)
{
	while (be->held)
		unhold(be);
	if (be->curl)
		curl_easy_cleanup(be->curl);
	curl_slist_free_all(be->headers);
	pr__spool_close(be->spool);
	free(be->url);
}

static void uploader_free(struct pr_uploader *u)
{
	for (int b = 0; b < NR_BACKENDS; b++)
		close_backend(&u->be[b]);
	explicit_bzero(u->password, sizeof(u->password));
	pthread_cond_destroy(&u->wake);
	pthread_mutex_destroy(&u->lock);
	free(u->out_dir);
	free(u->spool_dir);
	free(u);
	pr__curl_stop();
}

/* The directory sink's directory, made and written in.  0 or a negative
 * errno. */
static int probe_out_dir(struct pr_uploader *u)
{
	char probe[4200];
	FILE *f;
	int err;

	pr__mkdirs(u->out_dir, 0755);
	snprintf(probe, sizeof(probe), "%s/.dwarfsample-probe", u->out_dir);
	f = fopen(probe, "we");
	if (!f) {
		err = errno;
		pr__log(&u->lg, PR_LOG_ERROR, "cannot write in %s: %s; give another "
			PR_LOG_SETTING_OUT_DIR, u->out_dir, strerror(err));
		return -err;
	}
	fclose(f);
	unlink(probe);
	return 0;
}

/* The options every field of `u` but the backends' comes from.  0 or
 * -EINVAL, -ENOMEM. */
static int take_opts(struct pr_uploader *u, const struct pr_uploader_opts *o)
{
	const char *out_dir = PR_OPTS_GET(o, out_dir, NULL);
	const char *spool_dir = PR_OPTS_GET(o, spool_dir, NULL);

	u->lg.fn = PR_OPTS_GET(o, log, NULL);
	u->lg.ctx = PR_OPTS_GET(o, log_ctx, NULL);
	u->out_dir_max_bytes = PR_OPTS_GET(o, out_dir_max_bytes, DEFAULT_DIR_BYTES);
	u->out_dir_max_age_s = PR_OPTS_GET(o, out_dir_max_age_s, DEFAULT_DIR_AGE_S);
	u->spool_max_bytes = PR_OPTS_GET(o, spool_max_bytes, DEFAULT_SPOOL_BYTES);
	u->timeout_s = PR_OPTS_GET(o, timeout_s, 0) > 0 ? o->timeout_s : DEFAULT_TIMEOUT_S;
	u->clock_rate = PR_OPTS_GET(o, clock_rate, 1);
	if (!(u->clock_rate >= 1 && u->clock_rate <= CLOCK_RATE_MAX)) {
		pr__log(&u->lg, PR_LOG_ERROR, "the uploader's clock rate, a test hook, goes from 1 "
			"to %d", CLOCK_RATE_MAX);
		return -EINVAL;
	}
	if (!spool_dir && (PR_OPTS_GET(o, pyroscope_url, NULL) || PR_OPTS_GET(o, otlp_url, NULL))) {
		pr__log(&u->lg, PR_LOG_ERROR, "a backend needs a " PR_LOG_SETTING_SPOOL_DIR);
		return -EINVAL;
	}
	if ((out_dir && !(u->out_dir = strdup(out_dir))) ||
	    (spool_dir && !(u->spool_dir = strdup(spool_dir)))) {
		pr__log(&u->lg, PR_LOG_ERROR, "out of memory");
		return -ENOMEM;
	}
	return 0;
}

struct pr_uploader *pr_uploader_new(const struct pr_uploader_opts *o)
{
	static const char *const py_headers[] = {
		"Content-Type: application/proto", NULL,
	};
	static const char *const otlp_headers[] = {
		"Content-Type: application/x-protobuf", "Content-Encoding: gzip", NULL,
	};
	struct pr_logger lg = { PR_OPTS_GET(o, log, NULL), PR_OPTS_GET(o, log_ctx, NULL) };
	const char *py_url = PR_OPTS_GET(o, pyroscope_url, NULL);
	const char *otlp_url = PR_OPTS_GET(o, otlp_url, NULL);
	pthread_condattr_t ca;
	struct pr_uploader *u;
	sigset_t all, old;
	int err;

	if (!PR_OPTS_VALID(o)) {
		errno = EINVAL;
		return NULL;
	}
	if ((err = pr__curl_start(&lg))) {
		errno = -err;
		return NULL;
	}
	u = calloc(1, sizeof(*u));
	if (!u) {
		pr__log(&lg, PR_LOG_ERROR, "out of memory");
		pr__curl_stop();
		errno = ENOMEM;
		return NULL;
	}
	u->rand_state = (unsigned)getpid() ^ (unsigned)time(NULL);
	pthread_mutex_init(&u->lock, NULL);
	/* The thread's timed waits are in the monotonic clock (run()): in
	 * the condition's default, CLOCK_REALTIME, such a time is long past,
	 * and the thread spun through every backoff. */
	pthread_condattr_init(&ca);
	pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
	pthread_cond_init(&u->wake, &ca);
	pthread_condattr_destroy(&ca);
	if ((err = take_opts(u, o)) || (u->out_dir && (err = probe_out_dir(u))) ||
	    (py_url && (err = open_backend(u, &u->be[B_PYROSCOPE], "Pyroscope", py_url,
					   "pyroscope", py_headers))) ||
	    (otlp_url && (err = open_backend(u, &u->be[B_OTLP], "the OTLP receiver", otlp_url,
					     "otlp", otlp_headers))) ||
	    (err = credentials(u, o)))
		goto fail;
	/* Signals are the caller's threads'. */
	sigfillset(&all);
	pthread_sigmask(SIG_BLOCK, &all, &old);
	err = -pthread_create(&u->thread, NULL, run, u);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	if (err) {
		pr__log(&u->lg, PR_LOG_ERROR, "cannot start the uploader: %s", strerror(-err));
		goto fail;
	}
	return u;
fail:
	uploader_free(u);
	errno = -err;
	return NULL;
}

int pr_uploader_submit(struct pr_uploader *u, struct pr_window *w)
{
	struct queued *q = malloc(sizeof(*q));

	if (!q) {
		pr_window_free(w);
		atomic_fetch_add(&u->lost, 1);
		u->lost_any = true;
		return -ENOMEM;
	}
	q->w = w;
	q->next = NULL;
	pthread_mutex_lock(&u->lock);
	if (u->last)
		u->last->next = q;
	else
		u->first = q;
	u->last = q;
	u->nr_queued++;
	pthread_cond_signal(&u->wake);
	pthread_mutex_unlock(&u->lock);
	return 0;
}

int pr_uploader_stats(struct pr_uploader *u, struct pr_uploader_stats *st)
{
	struct pr_uploader_stats s = { .sz = sizeof(s) };

	if (!u)
		return -EINVAL;
	pthread_mutex_lock(&u->lock);
	s.queued = u->nr_queued;
	pthread_mutex_unlock(&u->lock);
	for (int b = 0; b < NR_BACKENDS; b++)
		s.queued += atomic_load(&u->spool_count[b]);
	s.sent = atomic_load(&u->sent);
	s.spooled = atomic_load(&u->spooled);
	s.dropped = atomic_load(&u->dropped);
	s.refused = atomic_load(&u->refused);
	s.lost = atomic_load(&u->lost);
	s.retries = atomic_load(&u->retries);
	s.bytes_sent = atomic_load(&u->bytes_sent);
	s.written = atomic_load(&u->written);
	s.last_latency_s = (double)atomic_load(&u->latency_us) / 1e6;
	return pr__stats_copy(st, &s, sizeof(s));
}

int pr_uploader_close(struct pr_uploader *u, double grace_s, struct pr_uploader_stats *st)
{
	size_t left;
	bool lost;

	if (!u)
		return 0;
	pthread_mutex_lock(&u->lock);
	u->closing = true;
	u->deadline = now_s(u) + grace_s;
	pthread_cond_signal(&u->wake);
	pthread_mutex_unlock(&u->lock);
	pthread_join(u->thread, NULL);
	for (int b = 0; b < NR_BACKENDS; b++) {
		struct backend *be = &u->be[b];
		uint64_t dropped = 0, nr_lost = 0;

		/* What is held in memory goes to the spool if it can now. */
		for (; be->held; unhold(be))
			if (pr__spool_push(be->spool, &be->held->r, &dropped))
				nr_lost++;
		gone(u, be, dropped);
		if (nr_lost) {
			pr__log(&u->lg, PR_LOG_ERROR, "%" PRIu64 " windows held in memory for %s could "
				"not be spooled: lost", nr_lost, be->name);
			atomic_fetch_add(&u->lost, nr_lost);
			u->lost_any = true;
		}
		left = be->spool ? pr__spool_count(be->spool) : 0;
		if (left)
			pr__log(&u->lg, PR_LOG_WARN, "%zu windows wait in %s for %s; the next start "
				"delivers them", left, u->spool_dir, u->be[b].name);
	}
	lost = u->lost_any;
	if (st)
		pr_uploader_stats(u, st);
	uploader_free(u);
	return lost ? -EIO : 0;
}
