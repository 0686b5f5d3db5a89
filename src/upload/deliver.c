/* SPDX-License-Identifier: Apache-2.0 */
/*
 * A backend's thread: it sends each request the uploader's thread hands
 * it at once when nothing waits for the backend, and keeps in its spool
 * (or, while the spool cannot be written, in memory) what the backend
 * did not take, trying the oldest again when the backoff allows.  A
 * backend that answers 408, 429, 502 or 503, or not at all, is tried
 * again later (exponential backoff with jitter, or what Retry-After
 * says), the same request first.
 *
 * Never twice: a request's body must be sent within the timeout, and
 * its answer is then awaited ANSWER_WAIT_FACTOR times as long.  A
 * request sent whole that gets no answer (or a 504 from a gateway) may
 * already be counted by the backend -- Pyroscope adds up what it is
 * sent, it does not tell a window it has from a new one -- so it is not
 * sent again but counted as unconfirmed.  One cut before the backend
 * read all of it (a reset) is sent again.
 *
 * Never stuck: a request the backend answers with a fault of its own (a
 * 500, 501, 505 or above) goes behind the others, so that the windows
 * after it are delivered, and after MAX_TRIES such answers it is given
 * up, and counted.
 *
 * The lock: `be->lock` guards the spool, the windows held in memory and
 * the inbox, which the uploader's thread reaches too.  Requests are sent
 * without it.
 */
#include <errno.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "upload/upload.h"

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
double pr__now_s(const struct pr_uploader *u)
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

/* A request is sent whole within its timeout, or abandoned (and sent
 * again: the backend cannot have taken it); and none outlives the
 * close's grace. */
struct sending {
	struct pr_uploader *u;
	struct backend *be;
	double t0, send_s;
	curl_off_t len;
	bool closed;                 /* abandoned at the close's deadline */
};

static int watch_send(void *arg, curl_off_t dltotal, curl_off_t dlnow, curl_off_t ultotal,
		      curl_off_t ulnow)
{
	struct sending *s = arg;

	(void)dltotal;
	(void)dlnow;
	(void)ultotal;
	pthread_mutex_lock(&s->be->lock);
	s->closed = s->be->closing && pr__now_s(s->u) >= s->be->deadline;
	pthread_mutex_unlock(&s->be->lock);
	return s->closed || (ulnow < s->len && real_s() - s->t0 > s->send_s);
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
	delay = delay / 2 + delay / 2 * ((double)rand_r(&be->rand_state) / RAND_MAX);
	if (retry_after >= 0)
		delay = retry_after < RETRY_AFTER_MAX_S ? retry_after : RETRY_AFTER_MAX_S;
	be->next_try = pr__now_s(u) + delay;
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

static void free_held(struct held *h)
{
	pr__request_clear(&h->r);
	free(h->service);
	free(h);
}

/* The first of the list from *first to *last, taken off it; `nr` and
 * `bytes` count what it holds. */
static struct held *shift(struct held **first, struct held **last, size_t *nr, uint64_t *bytes)
{
	struct held *h = *first;

	*first = h->next;
	if (!*first)
		*last = NULL;
	(*nr)--;
	*bytes -= h->r.len;
	return h;
}

/* `h` put last on the list from *first to *last. */
static void push(struct held **first, struct held **last, size_t *nr, uint64_t *bytes,
		 struct held *h)
{
	h->next = NULL;
	if (*last)
		(*last)->next = h;
	else
		*first = h;
	*last = h;
	(*nr)++;
	*bytes += h->r.len;
}

/* The oldest window held in memory for `be` is gone. */
static void unhold(struct backend *be)
{
	free_held(shift(&be->held, &be->held_last, &be->nr_held, &be->held_bytes));
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

	if (!h || pr__request_copy(&h->r, r)) {
		free(h);
		return -ENOMEM;
	}
	h->id = ++be->last_id;
	while (be->held && be->held_bytes + r->len > max) {
		unhold(be);
		dropped++;
	}
	if (dropped)
		pr__log(&u->lg, PR_LOG_WARN, "%" PRIu64 " of the oldest windows held in memory for %s "
			"dropped (at most %" PRIu64 " bytes are held while the spool cannot be written)",
			dropped, be->name, max);
	atomic_fetch_add(&u->dropped, dropped);
	push(&be->held, &be->held_last, &be->nr_held, &be->held_bytes, h);
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
enum outcome {
	TAKEN,          /* a 2xx */
	REFUSED,        /* a 4xx but 408 and 429: it would be refused again */
	AGAIN,          /* not sent whole, or a passing fault: sent again */
	FAULT,          /* a 500, 501, 505...: the backend's fault, or the window's */
	UNCONFIRMED,    /* sent whole, and no answer: it may be counted already */
};

/* What an answer `status` (or, with 0, none: curl's `rc`) to a request
 * that was sent whole, or not, means. */
static enum outcome judge(CURLcode rc, long status, bool whole)
{
	if (rc != CURLE_OK)
		/* A reset: the backend threw away what it had not read.  A
		 * timeout or a closed connection after the whole body: it may
		 * have taken it. */
		return !whole || rc == CURLE_RECV_ERROR || rc == CURLE_SEND_ERROR ? AGAIN
										 : UNCONFIRMED;
	if (status >= 200 && status < 300)
		return TAKEN;
	if (status == 408 || status == 429 || status == 502 || status == 503)
		return AGAIN;
	/* A gateway that gave up waiting: the backend behind it had it. */
	if (status == 504)
		return whole ? UNCONFIRMED : AGAIN;
	return status >= 500 ? FAULT : REFUSED;
}

/* What is left of the close's grace, in real seconds, or `timeout`. */
static double time_left(const struct pr_uploader *u, struct backend *be, double timeout)
{
	double left;

	pthread_mutex_lock(&be->lock);
	left = be->closing ? (be->deadline - pr__now_s(u)) / u->clock_rate : timeout;
	pthread_mutex_unlock(&be->lock);
	return left < timeout ? (left > 0.1 ? left : 0.1) : timeout;
}

/* Log a failure of `be`, and set its backoff.  Under be->lock. */
static void failed(struct pr_uploader *u, struct backend *be, const char *what,
		   double retry_after)
{
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
}

/* The headers of request `r` to `be`: the backend's (credentials...),
 * then its content type and encoding.  NULL when out of memory. */
static struct curl_slist *headers_of(const struct backend *be, const struct pr__request *r)
{
	struct curl_slist *l = NULL, *n;
	char ct[256], ce[256];

	snprintf(ct, sizeof(ct), "Content-Type: %s", r->content_type);
	snprintf(ce, sizeof(ce), "Content-Encoding: %s", r->content_encoding);
	for (const struct curl_slist *h = be->headers; h; h = h->next, l = n)
		if (!(n = curl_slist_append(l, h->data)))
			goto fail;
	if (!(n = curl_slist_append(l, ct)))
		goto fail;
	l = n;
	if (r->content_encoding[0] && !(n = curl_slist_append(l, ce)))
		goto fail;
	return n;
fail:
	curl_slist_free_all(l);
	return NULL;
}

/* Send request `r` to `be` once: counted, logged, and the backoff set. */
static enum outcome post(struct pr_uploader *u, struct backend *be, const struct pr__request *r)
{
	struct body reply = { .buf = malloc(REASON_MAX) };
	struct curl_slist *headers = headers_of(be, r);
	double retry_after = -1, timeout = time_left(u, be, u->timeout_s);
	struct sending sd = { .u = u, .be = be, .send_s = timeout, .len = (curl_off_t)r->len };
	char url[8192], why[REASON_MAX + 1], errbuf[CURL_ERROR_SIZE] = "";
	char what[CURL_ERROR_SIZE + REASON_MAX + 32];
	curl_off_t sent = 0;
	long status = 0;
	enum outcome out;
	CURLcode rc;

	if (!reply.buf || !headers) {
		/* Tried again later, as if it had failed. */
		free(reply.buf);
		curl_slist_free_all(headers);
		pthread_mutex_lock(&be->lock);
		failed(u, be, "out of memory", -1);
		pthread_mutex_unlock(&be->lock);
		return AGAIN;
	}
	snprintf(url, sizeof(url), "%s%s", be->url, r->target);
	curl_easy_setopt(be->curl, CURLOPT_URL, url);
	curl_easy_setopt(be->curl, CURLOPT_HTTPHEADER, headers);
	curl_easy_setopt(be->curl, CURLOPT_POSTFIELDS, r->body);
	curl_easy_setopt(be->curl, CURLOPT_POSTFIELDSIZE_LARGE, (curl_off_t)r->len);
	/* The timeout bounds connecting and sending; the answer may take
	 * longer (time_left() when closing). */
	curl_easy_setopt(be->curl, CURLOPT_TIMEOUT_MS,
			 (long)(time_left(u, be, u->timeout_s * ANSWER_WAIT_FACTOR) * 1000));
	curl_easy_setopt(be->curl, CURLOPT_NOPROGRESS, 0L);
	curl_easy_setopt(be->curl, CURLOPT_XFERINFOFUNCTION, watch_send);
	curl_easy_setopt(be->curl, CURLOPT_XFERINFODATA, &sd);
	curl_easy_setopt(be->curl, CURLOPT_WRITEFUNCTION, keep_reply);
	curl_easy_setopt(be->curl, CURLOPT_WRITEDATA, &reply);
	curl_easy_setopt(be->curl, CURLOPT_HEADERFUNCTION, retry_after_header);
	curl_easy_setopt(be->curl, CURLOPT_HEADERDATA, &retry_after);
	curl_easy_setopt(be->curl, CURLOPT_ERRORBUFFER, errbuf);
	sd.t0 = real_s();
	rc = curl_easy_perform(be->curl);
	atomic_store(&u->latency_us, (uint64_t)((real_s() - sd.t0) * 1e6));
	if (rc == CURLE_OK)
		curl_easy_getinfo(be->curl, CURLINFO_RESPONSE_CODE, &status);
	curl_easy_getinfo(be->curl, CURLINFO_SIZE_UPLOAD_T, &sent);
	curl_easy_setopt(be->curl, CURLOPT_HTTPHEADER, NULL);
	curl_slist_free_all(headers);
	out = judge(rc, status, r->len > 0 && sent >= (curl_off_t)r->len);
	reason(&reply, why, sizeof(why));
	free(reply.buf);
	if (rc == CURLE_ABORTED_BY_CALLBACK && sd.closed)
		snprintf(what, sizeof(what), "the close's grace ended");
	else if (rc == CURLE_ABORTED_BY_CALLBACK)
		snprintf(what, sizeof(what), "not sent within %.3g s", timeout);
	else if (rc != CURLE_OK)
		snprintf(what, sizeof(what), "%s", errbuf[0] ? errbuf : curl_easy_strerror(rc));
	else
		snprintf(what, sizeof(what), "HTTP %ld%s%s", status, why[0] ? ": " : "", why);
	pthread_mutex_lock(&be->lock);
	switch (out) {
	case TAKEN:
		if (be->failures)
			pr__log(&u->lg, PR_LOG_INFO, "%s is back: delivering %zu waiting windows",
				be->name, waiting(be));
		atomic_fetch_add(&u->sent, 1);
		atomic_fetch_add(&u->bytes_sent, r->len);
		be->failures = 0;
		be->next_try = 0;
		break;
	case REFUSED:
		/* Not a passing fault: the same request would be refused again. */
		pr__log(&u->lg, PR_LOG_ERROR, "%s refused a window with HTTP %ld: %s%s", be->name,
			status, why[0] ? why : "(no reason given)",
			status == 401 || status == 403 ? "; check the credentials" : "");
		atomic_fetch_add(&u->refused, 1);
		break;
	case UNCONFIRMED:
		pr__log(&u->lg, PR_LOG_WARN, "%s was sent a window whole but did not confirm it (%s): "
			"not sent again, since it may have counted it already (unconfirmed)",
			be->name, what);
		atomic_fetch_add(&u->unconfirmed, 1);
		failed(u, be, what, -1);
		break;
	case AGAIN:
	case FAULT:
		failed(u, be, what, retry_after);
		break;
	}
	pthread_mutex_unlock(&be->lock);
	return out;
}

/* Request `r` of window `seq` of `service` for `be` kept behind the
 * others: in the spool, or in memory when the spool cannot be written.
 * Under be->lock. */
static void spool(struct pr_uploader *u, struct backend *be, uint64_t seq, const char *service,
		  const struct pr__request *r)
{
	uint64_t dropped = 0;
	/* Behind what is held in memory, in order. */
	int err = be->held ? -EAGAIN : pr__spool_push(be->spool, r, &dropped);

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
			seq, service, be->name, strerror(-err));
		atomic_fetch_add(&u->lost, 1);
	} else if (be->failures) {
		/* It waits behind the ones that could not be delivered. */
		atomic_fetch_add(&u->spooled, 1);
		be->counted++;
	}
	atomic_store(&u->spool_count[be - u->be], waiting(be));
}

/* Whether `be` may be sent a request now.  Under be->lock. */
static bool may_send(const struct pr_uploader *u, const struct backend *be, double now)
{
	return be->next_try <= now && (!be->closing || now < be->deadline);
}

/* Request `h` handed over: sent at once when nothing waits for `be` and
 * its backoff allows, spooled only when that cannot be (so a full disk
 * stops no delivery to a backend that takes windows); else spooled
 * behind the others. */
static void deliver(struct pr_uploader *u, struct backend *be, struct held *h)
{
	enum outcome out;

	pthread_mutex_lock(&be->lock);
	if (waiting(be) || !may_send(u, be, pr__now_s(u))) {
		spool(u, be, h->seq, h->service, &h->r);
		pthread_mutex_unlock(&be->lock);
		return;
	}
	pthread_mutex_unlock(&be->lock);
	out = post(u, be, &h->r);
	if (out != AGAIN && out != FAULT)
		return;
	h->r.tries = out == FAULT;
	pthread_mutex_lock(&be->lock);
	spool(u, be, h->seq, h->service, &h->r);
	pthread_mutex_unlock(&be->lock);
}

/*
 * The oldest waiting request `r` (spooled as `seq`, or held as `id`: the
 * uploader's thread may have dropped it meanwhile) after outcome `out`:
 * taken or refused, it goes; after a fault it goes behind the others, or
 * is given up after MAX_TRIES.  Under be->lock.
 */
static void settle(struct pr_uploader *u, struct backend *be, struct pr__request *r,
		   bool spooled, uint64_t seq, uint64_t id, enum outcome out)
{
	bool still = spooled ? pr__spool_count(be->spool) && pr__spool_head(be->spool) == seq
			     : be->held && be->held->id == id;
	bool give_up = out == FAULT && ++r->tries >= MAX_TRIES;

	if (!still || out == AGAIN)
		return;
	if (give_up) {
		pr__log(&u->lg, PR_LOG_ERROR, "%s answered a window with a fault %u times: given up",
			be->name, r->tries);
		atomic_fetch_add(&u->given_up, 1);
	}
	if (out != FAULT || give_up) {
		if (spooled)
			pop(be);
		else
			unhold(be);
	} else if (spooled) {
		if (pr__spool_requeue(be->spool, r))
			pr__log(&u->lg, PR_LOG_DEBUG, "%s: a window it answered with a fault stays first "
				"(the spool cannot be written)", be->name);
	} else {
		struct held *h = shift(&be->held, &be->held_last, &be->nr_held, &be->held_bytes);

		h->r.tries = r->tries;
		push(&be->held, &be->held_last, &be->nr_held, &be->held_bytes, h);
	}
}

/* Try the oldest request waiting for `be` once. */
static void attempt(struct pr_uploader *u, struct backend *be)
{
	struct pr__request r;
	uint64_t dropped = 0, seq = 0, id = 0;
	bool spooled;
	int got;

	pthread_mutex_lock(&be->lock);
	got = pr__spool_peek(be->spool, &r, &dropped);
	gone(u, be, dropped);
	spooled = got > 0;
	if (spooled)
		seq = pr__spool_head(be->spool);
	else if (!got && be->held && !pr__request_copy(&r, &be->held->r))
		id = be->held->id;
	if (!spooled && !id) {
		atomic_store(&u->spool_count[be - u->be], waiting(be));
		pthread_mutex_unlock(&be->lock);
		return;
	}
	pthread_mutex_unlock(&be->lock);
	{
		enum outcome out = post(u, be, &r);

		pthread_mutex_lock(&be->lock);
		settle(u, be, &r, spooled, seq, id, out);
		atomic_store(&u->spool_count[be - u->be], waiting(be));
		pthread_mutex_unlock(&be->lock);
	}
	pr__request_clear(&r);
}

/* Whether the oldest waiting request may be tried now.  Under be->lock. */
static bool due(const struct pr_uploader *u, const struct backend *be, double now)
{
	return waiting(be) && may_send(u, be, now);
}

/* Whether something is left to try before the close's deadline.  Under
 * be->lock. */
static bool pending(const struct backend *be, double now)
{
	return waiting(be) && now < be->deadline && be->next_try <= be->deadline;
}

/* Wait on be->wake until `until` (the uploader's clock; < 0: until
 * woken).  Under be->lock. */
static void sleep_until(struct pr_uploader *u, struct backend *be, double now, double until)
{
	struct timespec ts;

	if (until < 0) {
		pthread_cond_wait(&be->wake, &be->lock);
		return;
	}
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
	pthread_cond_timedwait(&be->wake, &be->lock, &ts);
}

void *pr__backend_run(void *arg)
{
	struct backend *be = arg;
	struct pr_uploader *u = be->u;

	pthread_mutex_lock(&be->lock);
	for (;;) {
		double now = pr__now_s(u);

		if (be->inbox) {
			struct held *h = shift(&be->inbox, &be->inbox_last, &be->nr_inbox,
					       &be->inbox_bytes);

			pthread_mutex_unlock(&be->lock);
			deliver(u, be, h);
			free_held(h);
			pthread_mutex_lock(&be->lock);
			continue;
		}
		if (due(u, be, now)) {
			pthread_mutex_unlock(&be->lock);
			attempt(u, be);
			pthread_mutex_lock(&be->lock);
			continue;
		}
		if (be->closing && !pending(be, now))
			break;
		if (waiting(be))
			sleep_until(u, be, now, be->closing && be->deadline < be->next_try
						? be->deadline : be->next_try);
		else
			sleep_until(u, be, now, -1);
	}
	pthread_mutex_unlock(&be->lock);
	return NULL;
}

void pr__backend_hand_over(struct pr_uploader *u, struct backend *be, const struct pr_window *w,
			   const struct pr__request *r)
{
	struct held *h = calloc(1, sizeof(*h));

	if (!h || pr__request_copy(&h->r, r) || !(h->service = strdup(w->service))) {
		pr__log(&u->lg, PR_LOG_ERROR, "window %" PRIu64 " of %s could not be kept for %s: out "
			"of memory", w->seq, w->service, be->name);
		atomic_fetch_add(&u->lost, 1);
		if (h)
			free_held(h);
		return;
	}
	h->seq = w->seq;
	pthread_mutex_lock(&be->lock);
	if (be->inbox_bytes + r->len > MEMORY_MAX) {
		/* The backend's thread is busy with a slow answer: this one
		 * waits in the spool, so that memory stays bounded. */
		spool(u, be, h->seq, h->service, &h->r);
		pthread_mutex_unlock(&be->lock);
		free_held(h);
		return;
	}
	push(&be->inbox, &be->inbox_last, &be->nr_inbox, &be->inbox_bytes, h);
	pthread_cond_signal(&be->wake);
	pthread_mutex_unlock(&be->lock);
}

size_t pr__backend_queued(struct backend *be)
{
	size_t n;

	pthread_mutex_lock(&be->lock);
	n = be->nr_inbox;
	pthread_mutex_unlock(&be->lock);
	return n;
}

void pr__backend_close(struct pr_uploader *u, struct backend *be)
{
	uint64_t dropped = 0, nr_lost = 0;
	size_t left;

	/* What is held in memory goes to the spool if it can now. */
	for (; be->held; unhold(be))
		if (pr__spool_push(be->spool, &be->held->r, &dropped))
			nr_lost++;
	gone(u, be, dropped);
	if (nr_lost) {
		pr__log(&u->lg, PR_LOG_ERROR, "%" PRIu64 " windows held in memory for %s could "
			"not be spooled: lost", nr_lost, be->name);
		atomic_fetch_add(&u->lost, nr_lost);
	}
	left = be->spool ? pr__spool_count(be->spool) : 0;
	if (left)
		pr__log(&u->lg, PR_LOG_WARN, "%zu windows wait in %s for %s; the next start "
			"delivers them", left, u->spool_dir, be->name);
}

void pr__backend_free(struct backend *be)
{
	while (be->held)
		unhold(be);
	while (be->inbox) {
		struct held *h = be->inbox;

		be->inbox = h->next;
		free_held(h);
	}
}
