/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The uploader (prupload.h) and its thread.  Each window is encoded once
 * per format (a gzipped pprof; a gzipped OTLP request), written to the
 * directory sink, and handed to each backend's thread (deliver.c), which
 * sends it at once when nothing waits for the backend; what the backend
 * does not take then is kept in its spool: so a restart loses nothing
 * spooled, a full disk stops no delivery to a backend that is up, a
 * backend that is down costs the agent a file per window, not memory,
 * and one slow to answer delays no other.
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
			pr__backend_hand_over(u, &u->be[B_PYROSCOPE], w, &r);
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

		pr__backend_hand_over(u, &u->be[B_OTLP], w, &r);
	}
	free(buf);
	if (err) {
		pr__log(&u->lg, PR_LOG_ERROR, "window %" PRIu64 " of %s could not be encoded: %s", w->seq,
			w->service, strerror(-err));
		atomic_fetch_add(&u->lost, 1);
	}
}

/* The uploader's thread: it encodes the windows and hands them to the
 * backends' threads. */
static void *run(void *arg)
{
	struct pr_uploader *u = arg;

	pthread_mutex_lock(&u->lock);
	for (;;) {
		struct queued *q = u->first;

		if (!q && u->closing)
			break;
		if (!q) {
			pthread_cond_wait(&u->wake, &u->lock);
			continue;
		}
		u->first = q->next;
		if (!u->first)
			u->last = NULL;
		u->nr_queued--;
		pthread_mutex_unlock(&u->lock);
		take_window(u, q->w);
		pr_window_free(q->w);
		free(q);
		pthread_mutex_lock(&u->lock);
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
			const char *url, const char *spool_leaf)
{
	char dir[4096];
	size_t n = strlen(url);
	int err;

	be->u = u;
	be->name = name;
	be->rand_state = (unsigned)getpid() ^ (unsigned)time(NULL) ^ (unsigned)(be - u->be);
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
	if (!(be->spool = pr__spool_open(dir, u->spool_max_bytes, &u->lg)))
		return -errno;
	curl_easy_setopt(be->curl, CURLOPT_NOSIGNAL, 1L);
	curl_easy_setopt(be->curl, CURLOPT_USERAGENT, "dwarfsample-agent/" PR_VERSION);
	curl_easy_setopt(be->curl, CURLOPT_CONNECTTIMEOUT_MS, 10000L);
	curl_easy_setopt(be->curl, CURLOPT_PROTOCOLS_STR, "http,https");
	/* The answer is awaited once the body is sent (deliver.c); an
	 * "Expect: 100-continue" would have it wait before sending.  A
	 * request's content type and encoding are its own. */
	if ((err = add_header(u, be, "Expect:")))
		return err;
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
	pr__backend_free(be);
	if (be->u) {
		pthread_cond_destroy(&be->wake);
		pthread_mutex_destroy(&be->lock);
	}
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

/*
 * The threads stopped: the uploader's once every window is handed over,
 * then the backends' once they have tried what waits until `grace_s`
 * from now (of the uploader's clock) is over.
 */
static void stop(struct pr_uploader *u, double grace_s)
{
	double deadline = pr__now_s(u) + grace_s;

	if (u->started) {
		pthread_mutex_lock(&u->lock);
		u->closing = true;
		pthread_cond_signal(&u->wake);
		pthread_mutex_unlock(&u->lock);
		pthread_join(u->thread, NULL);
		u->started = false;
	}
	for (int b = 0; b < NR_BACKENDS; b++) {
		struct backend *be = &u->be[b];

		if (!be->started)
			continue;
		pthread_mutex_lock(&be->lock);
		be->closing = true;
		be->deadline = deadline;
		pthread_cond_signal(&be->wake);
		pthread_mutex_unlock(&be->lock);
		pthread_join(be->thread, NULL);
		be->started = false;
	}
}

struct pr_uploader *pr_uploader_new(const struct pr_uploader_opts *o)
{
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
	pthread_mutex_init(&u->lock, NULL);
	pthread_cond_init(&u->wake, NULL);
	/* The backends' timed waits are in the monotonic clock (deliver.c):
	 * in the condition's default, CLOCK_REALTIME, such a time is long
	 * past, and the thread spun through every backoff. */
	pthread_condattr_init(&ca);
	pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
	for (int b = 0; b < NR_BACKENDS; b++) {
		u->be[b].u = u;
		pthread_mutex_init(&u->be[b].lock, NULL);
		pthread_cond_init(&u->be[b].wake, &ca);
	}
	pthread_condattr_destroy(&ca);
	if ((err = take_opts(u, o)) || (u->out_dir && (err = probe_out_dir(u))) ||
	    (py_url && (err = open_backend(u, &u->be[B_PYROSCOPE], "Pyroscope", py_url,
					   "pyroscope"))) ||
	    (otlp_url && (err = open_backend(u, &u->be[B_OTLP], "the OTLP receiver", otlp_url,
					     "otlp"))) ||
	    (err = credentials(u, o)))
		goto fail;
	/* Signals are the caller's threads'. */
	sigfillset(&all);
	pthread_sigmask(SIG_BLOCK, &all, &old);
	for (int b = 0; b < NR_BACKENDS && !err; b++) {
		struct backend *be = &u->be[b];

		if (be->url && !(err = -pthread_create(&be->thread, NULL, pr__backend_run, be)))
			be->started = true;
	}
	if (!err && !(err = -pthread_create(&u->thread, NULL, run, u)))
		u->started = true;
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	if (err) {
		pr__log(&u->lg, PR_LOG_ERROR, "cannot start the uploader: %s", strerror(-err));
		goto fail;
	}
	return u;
fail:
	stop(u, 0);
	uploader_free(u);
	errno = -err;
	return NULL;
}

int pr_uploader_submit(struct pr_uploader *u, struct pr_window *w)
{
	struct queued *q = malloc(sizeof(*q)), *old = NULL;
	bool first_drop = false;

	if (!q) {
		pr_window_free(w);
		atomic_fetch_add(&u->lost, 1);
		return -ENOMEM;
	}
	q->w = w;
	q->next = NULL;
	pthread_mutex_lock(&u->lock);
	/* Windows come faster than the thread takes them (a disk or an
	 * encoder starved of CPU): the oldest goes, so that what waits in
	 * memory stays bounded. */
	if (u->nr_queued >= MAX_QUEUED_WINDOWS) {
		old = u->first;
		u->first = old->next;
		u->nr_queued--;
		first_drop = !u->queue_full;
		u->queue_full = true;
	} else if (u->nr_queued < MAX_QUEUED_WINDOWS / 2) {
		u->queue_full = false;
	}
	if (u->first)
		u->last->next = q;
	else
		u->first = q;
	u->last = q;
	u->nr_queued++;
	pthread_cond_signal(&u->wake);
	pthread_mutex_unlock(&u->lock);
	if (old) {
		if (first_drop)
			pr__log(&u->lg, PR_LOG_WARN, "windows come faster than they are written or "
				"handed to a backend (%d waiting): the oldest are dropped, and "
				"counted lost", MAX_QUEUED_WINDOWS);
		pr_window_free(old->w);
		free(old);
		atomic_fetch_add(&u->lost, 1);
	}
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
		s.queued += atomic_load(&u->spool_count[b]) + pr__backend_queued(&u->be[b]);
	s.sent = atomic_load(&u->sent);
	s.spooled = atomic_load(&u->spooled);
	s.dropped = atomic_load(&u->dropped);
	s.refused = atomic_load(&u->refused);
	s.lost = atomic_load(&u->lost);
	s.retries = atomic_load(&u->retries);
	s.bytes_sent = atomic_load(&u->bytes_sent);
	s.written = atomic_load(&u->written);
	s.given_up = atomic_load(&u->given_up);
	s.unconfirmed = atomic_load(&u->unconfirmed);
	s.last_latency_s = (double)atomic_load(&u->latency_us) / 1e6;
	return pr__stats_copy(st, &s, sizeof(s));
}

int pr_uploader_close(struct pr_uploader *u, double grace_s, struct pr_uploader_stats *st)
{
	bool lost;

	if (!u)
		return 0;
	stop(u, grace_s);
	for (int b = 0; b < NR_BACKENDS; b++)
		if (u->be[b].url)
			pr__backend_close(u, &u->be[b]);
	lost = atomic_load(&u->lost) > 0;
	if (st)
		pr_uploader_stats(u, st);
	uploader_free(u);
	return lost ? -EIO : 0;
}
