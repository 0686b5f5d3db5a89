/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The upload stage (prupload.h), internal: uploader.c (the uploader and
 * its thread, which encodes the windows), deliver.c (a thread per
 * backend: delivery, backoff, retries), spool.c (requests waiting for a backend, on disk),
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
#include <time.h>

#include "base/base.h"
#include "prupload.h"
#include "upload/curl.h"

#define DEFAULT_DIR_BYTES ((uint64_t)1 << 30)
#define DEFAULT_DIR_AGE_S (7 * 86400)
/* Windows waiting in memory for the uploader's thread, at most: over it
 * the oldest go (pr_uploader_submit()).  An agent makes one per group
 * and interval (tens to hundreds every 15 s), each tens of KiB. */
#define MAX_QUEUED_WINDOWS 512
#define DEFAULT_SPOOL_BYTES ((uint64_t)256 << 20)
/* What may wait in memory per backend while its spool cannot be written
 * (and no more than the spool's size). */
#define MEMORY_MAX ((uint64_t)16 << 20)
#define DEFAULT_TIMEOUT_S 30.0
/* Once a request's body is sent, its answer is awaited this many times
 * the timeout (which bounds connecting and sending): the window may
 * already be counted by the backend, and sending it again would count it
 * twice. */
#define ANSWER_WAIT_FACTOR 4
/* A window a backend answered with a fault of its own (a 500) this many
 * times is given up, and counted. */
#define MAX_TRIES 10
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
 * the backend's URL), its content type and encoding, its body, and how
 * many times the backend answered it with a fault (a 500) so far. */
struct pr__request {
	char *target;
	char *content_type;
	char *content_encoding;       /* "" for none */
	void *body;
	size_t len;
	unsigned tries;
};
/* A copy of `r` into *to (cleared first).  0 or -ENOMEM (*to cleared). */
int pr__request_copy(struct pr__request *to, const struct pr__request *r);
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
/* Which the oldest is: a number no other request of the spool has had. */
uint64_t pr__spool_head(const struct pr__spool *s);
/* The oldest, `r` as it now is (its tries), moved behind the others.
 * 0, or a negative errno (it stays where it was). */
int pr__spool_requeue(struct pr__spool *s, const struct pr__request *r);

size_t pr__spool_count(const struct pr__spool *s);

/* ---- uploader.c ---- */

/* A request held in memory while the spool cannot be written; and one
 * handed to a backend's thread, with the window it is of (for the log). */
struct held {
	struct pr__request r;
	uint64_t seq;
	char *service;
	uint64_t id;                 /* held: which one, as the backend counts them */
	struct held *next;
};

/*
 * A backend, with its own thread (deliver.c: so that one that is slow to
 * answer delays no other): it takes the requests the uploader's thread
 * encoded for it (`inbox`), sends them, and keeps in its spool, or in
 * memory, what it could not send.  `lock` guards the spool, `held`, the
 * inbox and the close's fields; the rest is its thread's.
 */
struct backend {
	struct pr_uploader *u;
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
	unsigned rand_state;
	uint64_t last_id;            /* of the held ones */
	pthread_t thread;
	bool started;
	pthread_mutex_t lock;
	pthread_cond_t wake;
	/* Requests to send, oldest first, at most MEMORY_MAX bytes of them
	 * (the rest go to the spool). */
	struct held *inbox, *inbox_last;
	size_t nr_inbox;
	uint64_t inbox_bytes;
	bool closing;
	double deadline;             /* closing: when to stop trying */
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
	/* What the directory held of our files when last read, and the
	 * windows written since (outdir.c): its bytes, its oldest file's
	 * time (0: none).  The uploader's thread's alone. */
	bool dir_read;
	uint64_t dir_bytes;
	time_t dir_oldest;
	double timeout_s;
	struct backend be[NR_BACKENDS];
	char user[256], password[256];

	/* The uploader's thread and the windows it is handed, under `lock`. */
	pthread_t thread;
	bool started;
	pthread_mutex_t lock;
	pthread_cond_t wake;
	struct queued *first, *last;
	size_t nr_queued;
	bool queue_full;             /* dropping since it was last half empty */
	bool closing;
	double clock_rate;           /* pr__now_s() seconds per real second */

	/* Written by the threads, read by pr_uploader_stats(). */
	_Atomic uint64_t sent, spooled, dropped, refused, lost, retries, bytes_sent, written;
	_Atomic uint64_t given_up, unconfirmed;
	_Atomic uint64_t latency_us;
	_Atomic size_t spool_count[NR_BACKENDS];
};

/* ---- deliver.c ---- */

/* The uploader's clock, in seconds (pr_uploader_opts.clock_rate). */
double pr__now_s(const struct pr_uploader *u);
/* Request `r` of window `w` handed to `be`'s thread (copied); lost, and
 * counted, only when out of memory. */
void pr__backend_hand_over(struct pr_uploader *u, struct backend *be, const struct pr_window *w,
			   const struct pr__request *r);
/* A backend's thread (pthread_create()'s function, `be` its argument):
 * it stops when be->closing is set and nothing is left to try before
 * be->deadline. */
void *pr__backend_run(void *be);
/* Requests handed over and not yet taken by the thread. */
size_t pr__backend_queued(struct backend *be);
/* After its thread stopped: what is held in memory spooled, or counted
 * lost; what is left logged. */
void pr__backend_close(struct pr_uploader *u, struct backend *be);
/* What it holds in memory, freed. */
void pr__backend_free(struct backend *be);

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
