/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The uploader's thread.  Each window is encoded once per format (a
 * gzipped pprof; a gzipped OTLP request), written to the directory sink,
 * and for each backend kept in its spool
 * before the first try: so the order of delivery is the order of the
 * spool, a restart loses nothing, and a backend that is down costs the
 * agent a file per window, not memory.  A backend is tried when its
 * backoff allows; one that answers 429 or 5xx, or not at all, is tried
 * again later (exponential backoff with jitter, or what Retry-After
 * says), the same request first.
 */
#include <dirent.h>
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "cli.h"
#include "upload-int.h"

void ds_window_free(struct ds_window *w)
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

/*
 * The uploader's clock, in seconds: backoff, Retry-After and the close's
 * grace are measured in it (a request's --timeout is curl's, in real
 * time).  It is the monotonic clock, run faster only for the agent's test
 * (tests/test-agent.py), which so lives through a backend's long outage in
 * a few seconds: a test hook, set from the environment when the uploader
 * starts (test_clock()) and said in the log, never by an option.
 */
#define TEST_CLOCK_ENV "DWARFSAMPLE_TEST_UPLOAD_CLOCK_RATE"

static double now_s(const struct ds_uploader *u)
{
	return ds_now() * u->clock_rate;
}

/* The clock's rate: 1, or the test hook's.  0, or -1 after saying what
 * is wrong. */
static int test_clock(struct ds_uploader *u)
{
	const char *s = getenv(TEST_CLOCK_ENV);
	char *end;

	u->clock_rate = 1;
	if (!s)
		return 0;
	u->clock_rate = strtod(s, &end);
	if (end == s || *end || !(u->clock_rate >= 1 && u->clock_rate <= 1000)) {
		ds_err("%s=%s: a test hook, the rate of the uploader's clock, from 1 to 1000; "
		       "unset it", TEST_CLOCK_ENV, s);
		return -1;
	}
	ds_logf(PR_LOG_WARN, "%s=%s: a test hook: the uploader's backoff runs %g times as fast "
		"as real time; unset it outside tests", TEST_CLOCK_ENV, s, u->clock_rate);
	return 0;
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

static void backoff(struct ds_uploader *u, struct backend *be, double retry_after)
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

/* Try the oldest request of `be` once. */
static void attempt(struct ds_uploader *u, struct backend *be)
{
	struct ds_request r;
	struct body reply = { .buf = malloc(REASON_MAX) };
	double retry_after = -1, t0, timeout = u->o.timeout_s;
	uint64_t dropped = 0;
	char url[8192], why[REASON_MAX + 1], errbuf[CURL_ERROR_SIZE] = "";
	long status = 0;
	int got = ds_spool_peek(be->spool, &r, &dropped);
	CURLcode rc;

	atomic_fetch_add(&u->dropped, dropped);
	if (got <= 0 || !reply.buf) {
		if (got > 0)
			ds_request_clear(&r);
		free(reply.buf);
		return;
	}
	if (u->closing) {
		/* What is left of the grace, in real seconds. */
		double left = (u->deadline - now_s(u)) / u->clock_rate;

		if (left < timeout)
			timeout = left > 0.1 ? left : 0.1;
	}
	snprintf(url, sizeof(url), "%s%s", be->url, r.target);
	curl_easy_setopt(be->curl, CURLOPT_URL, url);
	curl_easy_setopt(be->curl, CURLOPT_POSTFIELDS, r.body);
	curl_easy_setopt(be->curl, CURLOPT_POSTFIELDSIZE_LARGE, (curl_off_t)r.len);
	curl_easy_setopt(be->curl, CURLOPT_TIMEOUT_MS, (long)(timeout * 1000));
	curl_easy_setopt(be->curl, CURLOPT_WRITEFUNCTION, keep_reply);
	curl_easy_setopt(be->curl, CURLOPT_WRITEDATA, &reply);
	curl_easy_setopt(be->curl, CURLOPT_HEADERFUNCTION, retry_after_header);
	curl_easy_setopt(be->curl, CURLOPT_HEADERDATA, &retry_after);
	curl_easy_setopt(be->curl, CURLOPT_ERRORBUFFER, errbuf);
	t0 = ds_now();
	rc = curl_easy_perform(be->curl);
	atomic_store(&u->latency_us, (uint64_t)((ds_now() - t0) * 1e6));
	if (rc == CURLE_OK)
		curl_easy_getinfo(be->curl, CURLINFO_RESPONSE_CODE, &status);
	reason(&reply, why, sizeof(why));
	if (rc == CURLE_OK && status >= 200 && status < 300) {
		if (be->failures)
			ds_logf(PR_LOG_INFO, "%s is back: delivering %zu waiting windows", be->name,
				ds_spool_count(be->spool));
		ds_spool_pop(be->spool);
		atomic_fetch_add(&u->sent, 1);
		atomic_fetch_add(&u->bytes_sent, r.len);
		be->failures = 0;
		be->head_waited = false;
		be->next_try = 0;
	} else if (rc != CURLE_OK || status == 429 || status >= 500) {
		char what[CURL_ERROR_SIZE + REASON_MAX + 32];

		if (rc != CURLE_OK)
			snprintf(what, sizeof(what), "%s", errbuf[0] ? errbuf : curl_easy_strerror(rc));
		else
			snprintf(what, sizeof(what), "HTTP %ld%s%s", status, why[0] ? ": " : "", why);
		if (!be->failures)
			ds_logf(PR_LOG_WARN, "%s did not take a window (%s); keeping it and the next "
				"ones in %s until it does", be->name, what, u->o.spool_dir);
		else
			ds_logf(PR_LOG_DEBUG, "%s: try %u failed (%s)", be->name, be->failures + 1,
				what);
		if (!be->head_waited)
			atomic_fetch_add(&u->spooled, 1);
		be->head_waited = true;
		be->failures++;
		atomic_fetch_add(&u->retries, 1);
		backoff(u, be, retry_after);
	} else {
		/* Not a passing fault: the same request would be refused again. */
		ds_logf(PR_LOG_ERROR, "%s refused a window with HTTP %ld: %s%s", be->name, status,
			why[0] ? why : "(no reason given)",
			status == 401 || status == 403 ? "; check the credentials" : "");
		ds_spool_pop(be->spool);
		atomic_fetch_add(&u->failed, 1);
		be->head_waited = false;
	}
	atomic_store(&u->spool_count[be - u->be], ds_spool_count(be->spool));
	ds_request_clear(&r);
	free(reply.buf);
}

/* `w`'s profile in `fmt` (PR_FORMAT_PPROF, or -1 for an OTLP request,
 * gzipped as it goes over HTTP) into *buf.  0 or a negative errno. */
static int encode(const struct ds_window *w, int fmt, char **buf, size_t *len)
{
	PR_OPTS(pr_otlp_opts, oo, .resource = w->resource, .nr_resource = w->nr_resource,
		.scope_name = "dwarfsample", .scope_version = DS_VERSION, .gzip = true);
	FILE *f = open_memstream(buf, len);
	int err = !f ? -ENOMEM : fmt < 0 ? pr_profile_write_otlp(w->profile, f, &oo)
					 : pr_profile_write(w->profile, PR_FORMAT_PPROF, f, NULL);

	if (f && fclose(f) && !err)
		err = -EIO;
	return err;
}

/* Keep request `r` for backend `be`, in order. */
static void spool(struct ds_uploader *u, struct backend *be, const struct ds_window *w,
		  const struct ds_request *r)
{
	uint64_t dropped = 0;
	int err = r->target && r->body ? ds_spool_push(be->spool, r, &dropped) : -ENOMEM;

	if (dropped)
		ds_logf(PR_LOG_WARN, "the spool of %s is full (--spool-size): %" PRIu64 " of the "
			"oldest windows dropped", be->name, dropped);
	atomic_fetch_add(&u->dropped, dropped);
	if (err) {
		ds_logf(PR_LOG_ERROR, "window %" PRIu64 " of %s could not be spooled for %s: %s",
			w->seq, w->service, be->name, strerror(-err));
		atomic_fetch_add(&u->failed, 1);
		u->lost = true;
	}
	atomic_store(&u->spool_count[be - u->be], ds_spool_count(be->spool));
}

/* Encode window `w` and hand it to every sink. */
static void take_window(struct ds_uploader *u, struct ds_window *w)
{
	char *buf = NULL;
	size_t len = 0;
	int err = u->o.out_dir || u->be[B_PYROSCOPE].url ? encode(w, PR_FORMAT_PPROF, &buf, &len)
							   : 0;

	if (!err && u->o.out_dir)
		ds_outdir_write(u, w, buf, len);
	if (!err && u->be[B_PYROSCOPE].url) {
		struct ds_request r = {
			.target = ds_pyroscope_target(u, w),
			.content_type = (char *)"application/octet-stream",
			.content_encoding = (char *)"",
			.body = buf, .len = len,
		};

		spool(u, &u->be[B_PYROSCOPE], w, &r);
		free(r.target);
	}
	free(buf);
	buf = NULL;
	if (!err && u->be[B_OTLP].url && !(err = encode(w, -1, &buf, &len))) {
		struct ds_request r = {
			.target = (char *)"/v1development/profiles",
			.content_type = (char *)"application/x-protobuf",
			.content_encoding = (char *)"gzip",
			.body = buf, .len = len,
		};

		spool(u, &u->be[B_OTLP], w, &r);
	}
	free(buf);
	if (err) {
		ds_logf(PR_LOG_ERROR, "window %" PRIu64 " of %s could not be encoded: %s", w->seq,
			w->service, strerror(-err));
		atomic_fetch_add(&u->failed, 1);
		u->lost = true;
	}
}

static bool due(const struct ds_uploader *u, const struct backend *be, double now)
{
	return be->url && ds_spool_count(be->spool) && (be->next_try <= now || (u->closing &&
		/* Closing: one more try once the backoff ends, if in time. */
		be->next_try <= u->deadline && now >= be->next_try));
}

/* Whether a backend still has something to try before the close's
 * deadline. */
static bool pending(const struct ds_uploader *u, const struct backend *be, double now)
{
	return be->url && ds_spool_count(be->spool) && now < u->deadline &&
	       be->next_try <= u->deadline;
}

static void *run(void *arg)
{
	struct ds_uploader *u = arg;

	pthread_mutex_lock(&u->lock);
	for (;;) {
		double now = now_s(u), until = 0;
		struct backend *ready = NULL;
		bool waiting = false;

		if (u->first) {
			struct queued *q = u->first;

			u->first = q->next;
			if (!u->first)
				u->last = NULL;
			u->nr_queued--;
			pthread_mutex_unlock(&u->lock);
			take_window(u, q->w);
			ds_window_free(q->w);
			free(q);
			pthread_mutex_lock(&u->lock);
			continue;
		}
		for (int b = 0; b < NR_BACKENDS && !ready; b++) {
			struct backend *be = &u->be[b];

			if (due(u, be, now) && (!u->closing || now < u->deadline))
				ready = be;
			else if (be->url && ds_spool_count(be->spool) &&
				 (!u->closing || pending(u, be, now))) {
				/* The soonest a backend may be tried again. */
				if (!waiting || be->next_try < until)
					until = be->next_try;
				waiting = true;
			}
		}
		if (ready) {
			pthread_mutex_unlock(&u->lock);
			attempt(u, ready);
			pthread_mutex_lock(&u->lock);
			continue;
		}
		if (u->closing && !waiting)
			break;
		if (waiting) {
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

static int open_backend(struct ds_uploader *u, struct backend *be, const char *name,
			const char *url, const char *spool_leaf, const char *const *headers)
{
	char dir[4096];
	size_t n = strlen(url);

	be->name = name;
	if (strncmp(url, "http://", 7) && strncmp(url, "https://", 8)) {
		ds_err("invalid %s URL '%s': it must start with http:// or https://", name, url);
		return -1;
	}
	while (n > 0 && url[n - 1] == '/')
		n--;
	snprintf(dir, sizeof(dir), "%s/%s", u->o.spool_dir, spool_leaf);
	if (!(be->url = strndup(url, n)) || !(be->curl = curl_easy_init())) {
		ds_err("out of memory");
		return -1;
	}
	for (const char *const *h = headers; *h; h++) {
		struct curl_slist *l = curl_slist_append(be->headers, *h);

		if (!l) {
			ds_err("out of memory");
			return -1;
		}
		be->headers = l;
	}
	if (!(be->spool = ds_spool_open(dir, u->o.spool_max_bytes)))
		return -1;
	curl_easy_setopt(be->curl, CURLOPT_NOSIGNAL, 1L);
	curl_easy_setopt(be->curl, CURLOPT_USERAGENT, "dwarfsample-agent/" DS_VERSION);
	curl_easy_setopt(be->curl, CURLOPT_CONNECTTIMEOUT_MS, 10000L);
	curl_easy_setopt(be->curl, CURLOPT_PROTOCOLS_STR, "http,https");
	curl_easy_setopt(be->curl, CURLOPT_HTTPHEADER, be->headers);
	if (ds_spool_count(be->spool))
		ds_logf(PR_LOG_INFO, "%zu windows left by an earlier run wait for %s; delivering "
			"them first", ds_spool_count(be->spool), name);
	return 0;
}

static void close_backend(struct backend *be)
{
	if (be->curl)
		curl_easy_cleanup(be->curl);
	curl_slist_free_all(be->headers);
	ds_spool_close(be->spool);
	free(be->url);
}

static void uploader_free(struct ds_uploader *u)
{
	for (int b = 0; b < NR_BACKENDS; b++)
		close_backend(&u->be[b]);
	explicit_bzero(u->password, sizeof(u->password));
	pthread_cond_destroy(&u->wake);
	pthread_mutex_destroy(&u->lock);
	free(u);
	curl_global_cleanup();
}

/* Header `h` ("Name: value") added to backend `be`'s.  0 or -1. */
struct ds_uploader *ds_uploader_new(const struct ds_upload_opts *o)
{
	struct ds_uploader *u;

	if (ds_curl_load())
		return NULL;
	if (curl_global_init(CURL_GLOBAL_DEFAULT)) {
		ds_err("cannot start libcurl");
		return NULL;
	}
	u = calloc(1, sizeof(*u));
	if (!u) {
		ds_err("out of memory");
		curl_global_cleanup();
		return NULL;
	}
	u->o = *o;
	if (!u->o.out_dir_max_bytes)
		u->o.out_dir_max_bytes = DEFAULT_DIR_BYTES;
	if (!u->o.out_dir_max_age_s)
		u->o.out_dir_max_age_s = DEFAULT_DIR_AGE_S;
	if (!u->o.spool_max_bytes)
		u->o.spool_max_bytes = DEFAULT_SPOOL_BYTES;
	if (u->o.timeout_s <= 0)
		u->o.timeout_s = DEFAULT_TIMEOUT_S;
	u->rand_state = (unsigned)getpid() ^ (unsigned)time(NULL);
	if (test_clock(u)) {
		free(u);
		curl_global_cleanup();
		return NULL;
	}
	pthread_mutex_init(&u->lock, NULL);
	{
		pthread_condattr_t ca;

		/* The thread's timed waits are in the monotonic clock (run()):
		 * in the condition's default, CLOCK_REALTIME, such a time is
		 * long past, and the thread spun through every backoff. */
		pthread_condattr_init(&ca);
		pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
		pthread_cond_init(&u->wake, &ca);
		pthread_condattr_destroy(&ca);
	}
	if (u->o.out_dir) {
		char probe[4200];
		FILE *f;

		ds_mkdirs(u->o.out_dir, 0755);
		snprintf(probe, sizeof(probe), "%s/.dwarfsample-probe", u->o.out_dir);
		f = fopen(probe, "we");
		if (!f) {
			ds_err("cannot write in %s: %s; give another directory with --out-dir",
			       u->o.out_dir, strerror(errno));
			uploader_free(u);
			return NULL;
		}
		fclose(f);
		unlink(probe);
	}
	{
		static const char *const py_headers[] = {
			"Content-Type: application/octet-stream", NULL,
		};
		static const char *const otlp_headers[] = {
			"Content-Type: application/x-protobuf", "Content-Encoding: gzip", NULL,
		};

		if ((o->pyroscope_url && open_backend(u, &u->be[B_PYROSCOPE], "Pyroscope",
						      o->pyroscope_url, "pyroscope", py_headers)) ||
		    (o->otlp_url && open_backend(u, &u->be[B_OTLP], "the OTLP receiver", o->otlp_url,
						 "otlp", otlp_headers)) ||
		    ds_upload_credentials(u)) {
			uploader_free(u);
			return NULL;
		}
	}
	{
		sigset_t all, old;

		/* Signals are the capture thread's. */
		sigfillset(&all);
		pthread_sigmask(SIG_BLOCK, &all, &old);
		errno = pthread_create(&u->thread, NULL, run, u);
		pthread_sigmask(SIG_SETMASK, &old, NULL);
	}
	if (errno) {
		ds_err("cannot start the uploader: %s", strerror(errno));
		uploader_free(u);
		return NULL;
	}
	return u;
}

int ds_uploader_submit(struct ds_uploader *u, struct ds_window *w)
{
	struct queued *q = malloc(sizeof(*q));

	if (!q) {
		ds_window_free(w);
		atomic_fetch_add(&u->failed, 1);
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

void ds_uploader_stats(struct ds_uploader *u, struct ds_upload_stats *s)
{
	pthread_mutex_lock(&u->lock);
	s->queued = u->nr_queued;
	pthread_mutex_unlock(&u->lock);
	for (int b = 0; b < NR_BACKENDS; b++)
		s->queued += atomic_load(&u->spool_count[b]);
	s->sent = atomic_load(&u->sent);
	s->spooled = atomic_load(&u->spooled);
	s->dropped = atomic_load(&u->dropped);
	s->failed = atomic_load(&u->failed);
	s->retries = atomic_load(&u->retries);
	s->bytes_sent = atomic_load(&u->bytes_sent);
	s->written = atomic_load(&u->written);
	s->last_latency_s = (double)atomic_load(&u->latency_us) / 1e6;
}

int ds_uploader_close(struct ds_uploader *u, double grace_s)
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
		left = u->be[b].spool ? ds_spool_count(u->be[b].spool) : 0;
		if (left)
			ds_logf(PR_LOG_WARN, "%zu windows wait in %s for %s; the next start delivers "
				"them", left, u->o.spool_dir, u->be[b].name);
	}
	lost = u->lost;
	uploader_free(u);
	return lost ? -1 : 0;
}
