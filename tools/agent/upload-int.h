/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The uploader's insides (upload.h), shared by its files: upload.c (the
 * thread, delivery, the spool), credentials.c, outdir.c (the directory
 * sink) and pyroscope.c (Pyroscope's ingest target).
 */
#ifndef DS_UPLOAD_INT_H
#define DS_UPLOAD_INT_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

#include "curl.h"
#include "spool.h"
#include "upload.h"

#define DEFAULT_DIR_BYTES ((uint64_t)1 << 30)
#define DEFAULT_DIR_AGE_S (7 * 86400)
#define DEFAULT_SPOOL_BYTES ((uint64_t)256 << 20)
#define DEFAULT_TIMEOUT_S 30.0
/* Backoff: 1 s doubling to 5 min; Retry-After is believed up to 1 h. */
#define BACKOFF_MIN_S 1.0
#define BACKOFF_MAX_S 300.0
#define RETRY_AFTER_MAX_S 3600.0
/* What a refusal's body may add to the log. */
#define REASON_MAX 200

struct backend {
	const char *name;            /* "Pyroscope" */
	char *url;                   /* base, without a trailing slash */
	struct ds_spool *spool;
	CURL *curl;
	struct curl_slist *headers;
	unsigned failures;           /* in a row */
	double next_try;             /* monotonic seconds */
	bool head_waited;            /* the oldest request failed once */
};

struct queued {
	struct ds_window *w;
	struct queued *next;
};

enum { B_PYROSCOPE, B_OTLP, NR_BACKENDS };

struct ds_uploader {
	struct ds_upload_opts o;
	struct backend be[NR_BACKENDS];
	char user[256], password[256];
	bool has_auth;

	pthread_t thread;
	pthread_mutex_t lock;
	pthread_cond_t wake;
	struct queued *first, *last;
	size_t nr_queued;
	bool closing;
	double deadline;             /* closing: when to stop trying */
	bool lost;                   /* a window neither delivered nor kept */
	unsigned rand_state;
	double clock_rate;           /* now_s() seconds per real second */

	/* Written by the thread, read by ds_uploader_stats(). */
	_Atomic uint64_t sent, spooled, dropped, failed, retries, bytes_sent, written;
	_Atomic uint64_t latency_us;
	_Atomic size_t spool_count[NR_BACKENDS];
};

/* Credentials (the file, else the environment): Pyroscope's user,
 * password and tenant, OTLP's headers, into `u` and its backends.  0, or
 * -1 after saying why. */
int ds_upload_credentials(struct ds_uploader *u);
/* The directory sink: window `w`, encoded as `pprof` (`len` bytes),
 * written there; and the directory kept within its bounds. */
void ds_outdir_write(struct ds_uploader *u, const struct ds_window *w, const void *pprof,
		     size_t len);
void ds_outdir_rotate(struct ds_uploader *u);
/* Pyroscope's /ingest target of window `w` (name with labels, from,
 * until, sample rate, spy name), malloc'd; NULL when out of memory. */
char *ds_pyroscope_target(struct ds_uploader *u, const struct ds_window *w);

#endif
