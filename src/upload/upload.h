/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The upload stage (prupload.h), internal: uploader.c (the thread,
 * delivery, backoff), spool.c (requests waiting for a backend, on disk),
 * curl.c (libcurl, loaded when an uploader starts), outdir.c (the
 * directory sink), pyroscope.c (Pyroscope's push request); windows.c
 * (the windows, their groups and labels) needs none of it but the
 * public header.
 */
#ifndef PR_UPLOAD_INT_H
#define PR_UPLOAD_INT_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

#include "base/base.h"
#include "prupload.h"
#include "upload/curl.h"

#define DEFAULT_DIR_BYTES ((uint64_t)1 << 30)
#define DEFAULT_DIR_AGE_S (7 * 86400)
#define DEFAULT_SPOOL_BYTES ((uint64_t)256 << 20)
/* What may wait in memory per backend while its spool cannot be written
 * (and no more than the spool's size). */
#define MEMORY_MAX ((uint64_t)16 << 20)
#define DEFAULT_TIMEOUT_S 30.0
/* Backoff: 1 s doubling to 5 min; Retry-After is believed up to 1 h. */
#define BACKOFF_MIN_S 1.0
#define BACKOFF_MAX_S 300.0
#define RETRY_AFTER_MAX_S 3600.0
/* What a refusal's body may add to the log. */
#define REASON_MAX 200
/* The test hook's bound (pr_uploader_opts.clock_rate). */
#define CLOCK_RATE_MAX 1000

/* ---- spool.c ---- */

/*
 * A backend's spool: requests waiting to be delivered, one file each in a
 * directory, delivered oldest first.  The files outlive the uploader: a
 * restart delivers what the last run could not.  Bounded in bytes: when a
 * new request does not fit, the oldest are dropped (and counted).  Used by
 * the uploader's thread only.
 */

/* A request as it is kept: where it goes (path and query, appended to
 * the backend's URL), its content type and encoding, and its body. */
struct pr__request {
	char *target;
	char *content_type;
	char *content_encoding;       /* "" for none */
	void *body;
	size_t len;
};
void pr__request_clear(struct pr__request *r);

struct pr__spool;

/* The spool in `dir` (made, mode 0700, if need be), holding at most
 * `max_bytes`; what a previous run left there is kept, in order.  NULL
 * with errno set after logging why. */
struct pr__spool *pr__spool_open(const char *dir, uint64_t max_bytes, const struct pr_logger *lg);
void pr__spool_close(struct pr__spool *s);

/* Keep request `r` after the others; the oldest go while the total is
 * over the bound, each counted in *dropped.  0, or a negative errno (the
 * disk: the request is not kept). */
int pr__spool_push(struct pr__spool *s, const struct pr__request *r, uint64_t *dropped);
/* The oldest request into *r (the caller clears it).  1, 0 when the spool
 * is empty, or a negative errno; an unreadable or damaged file is removed,
 * logged, and counted in *dropped. */
int pr__spool_peek(struct pr__spool *s, struct pr__request *r, uint64_t *dropped);
/* Remove the oldest. */
void pr__spool_pop(struct pr__spool *s);

size_t pr__spool_count(const struct pr__spool *s);

/* ---- uploader.c ---- */

/* A request held in memory while the spool cannot be written. */
struct held {
	struct pr__request r;
	struct held *next;
};

struct backend {
	const char *name;            /* "Pyroscope" */
	char *url;                   /* base, without a trailing slash */
	struct pr__spool *spool;
	CURL *curl;
	struct curl_slist *headers;
	unsigned failures;           /* in a row */
	double next_try;             /* monotonic seconds */
	size_t counted;              /* the oldest in the spool counted as spooled */
	struct held *held, *held_last; /* after the spool's, oldest first */
	size_t nr_held;
	uint64_t held_bytes;
	bool spool_failing;          /* its last write failed */
};

struct queued {
	struct pr_window *w;
	struct queued *next;
};

enum { B_PYROSCOPE, B_OTLP, NR_BACKENDS };

struct pr_uploader {
	struct pr_logger lg;
	char *out_dir, *spool_dir;   /* NULL: none */
	uint64_t out_dir_max_bytes, out_dir_max_age_s, spool_max_bytes;
	double timeout_s;
	struct backend be[NR_BACKENDS];
	char user[256], password[256];

	pthread_t thread;
	pthread_mutex_t lock;
	pthread_cond_t wake;
	struct queued *first, *last;
	size_t nr_queued;
	bool closing;
	double deadline;             /* closing: when to stop trying */
	bool lost_any;               /* a window neither delivered nor kept */
	unsigned rand_state;
	double clock_rate;           /* now_s() seconds per real second */

	/* Written by the thread, read by pr_uploader_stats(). */
	_Atomic uint64_t sent, spooled, dropped, refused, lost, retries, bytes_sent, written;
	_Atomic uint64_t latency_us;
	_Atomic size_t spool_count[NR_BACKENDS];
};

/* ---- outdir.c ---- */

/* The directory sink: window `w`, encoded as `pprof` (`len` bytes),
 * written there; and the directory kept within its bounds. */
void pr__outdir_write(struct pr_uploader *u, const struct pr_window *w, const void *pprof,
		      size_t len);

/* ---- pyroscope.c ---- */

/* Window `w` as a call of Pyroscope's push API into *r (its target,
 * content type, encoding and body, the caller's to clear): a series per
 * profile type the window has (process_cpu, off_cpu, wall), each with
 * the window's labels.  0 or a negative errno (*r then empty). */
int pr__pyroscope_request(const struct pr_window *w, struct pr__request *r);

#endif
