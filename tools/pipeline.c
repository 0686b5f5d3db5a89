/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Records from the capture thread to a worker, a drain at a time, through
 * the library's pr_order: the capture thread adds each record and ends a
 * round after each drain; the worker delivers what the rounds let go.
 */
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdalign.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "pipeline.h"

struct ds_pipeline {
	struct pr_order *o;
	pr_record_fn process;
	int (*tick)(uint64_t horizon, void *ctx);
	void *ctx;
	size_t max_bytes;
	const volatile sig_atomic_t *hurry;

	pthread_mutex_t lock;
	pthread_cond_t ready;
	bool rounds;                 /* a round ended since the worker looked */
	/* When the last two rounds ended (event clock): what the round
	 * before the last read is all delivered once the last has ended. */
	uint64_t round_ns[2];
	bool closed, joined;
	int error;                   /* the worker's, read after the join */

	pthread_t worker;
	/* Counters each written by one thread, one per record: on cache
	 * lines of their own, so that neither thread's writes evict the
	 * line the other is writing. */
	alignas(64) _Atomic uint64_t copied, dropped_full;   /* capture thread */
	alignas(64) _Atomic uint64_t processed, dropped_hurry; /* worker */
};

/* The worker: every record, in time order.  After an error, or once a
 * second Ctrl-C hurries the end, what is left only goes. */
static int deliver(const struct pr_record *rec, void *arg)
{
	struct ds_pipeline *pl = arg;
	bool sample = rec->type == PR_RECORD_SAMPLE;
	int err;

	if (pl->error)
		return 0;
	if (pl->hurry && *pl->hurry > 1) {
		if (sample)
			atomic_fetch_add_explicit(&pl->dropped_hurry, 1, memory_order_relaxed);
		return 0;
	}
	err = pl->process(rec, pl->ctx);
	if (sample)
		atomic_fetch_add_explicit(&pl->processed, 1, memory_order_relaxed);
	if (err < 0)
		pl->error = err;
	return 0;
}

static void *worker(void *arg)
{
	struct ds_pipeline *pl = arg;
	uint64_t horizon;
	int err;

	pthread_mutex_lock(&pl->lock);
	for (;;) {
		while (!pl->rounds && !pl->closed)
			pthread_cond_wait(&pl->ready, &pl->lock);
		if (!pl->rounds)
			break;
		pl->rounds = false;
		horizon = pl->round_ns[0];
		pthread_mutex_unlock(&pl->lock);
		err = pr_order_deliver(pl->o, deliver, pl);
		if (err >= 0 && pl->tick && horizon && !pl->error)
			err = pl->tick(horizon, pl->ctx);
		pthread_mutex_lock(&pl->lock);
		if (err < 0 && !pl->error)
			pl->error = err;
	}
	pthread_mutex_unlock(&pl->lock);
	/* The capture thread has stopped adding: everything held goes. */
	err = pr_order_flush(pl->o, deliver, pl);
	if (err < 0 && !pl->error)
		pl->error = err;
	return NULL;
}

struct ds_pipeline *ds_pipeline_new(const struct pr_reader *r, pr_record_fn process,
				    int (*tick)(uint64_t horizon, void *ctx), void *ctx,
				    size_t max_bytes, const volatile sig_atomic_t *hurry)
{
	PR_OPTS(pr_order_opts, oo, .log = ds_log);
	struct ds_pipeline *pl = aligned_alloc(64, (sizeof(*pl) + 63) & ~(size_t)63);
	sigset_t block, old;

	if (!pl)
		return NULL;
	memset(pl, 0, sizeof(*pl));
	pl->o = pr_order_new(pr_reader_attr(r), &oo);
	if (!pl->o) {
		free(pl);
		return NULL;
	}
	pl->process = process;
	pl->tick = tick;
	pl->ctx = ctx;
	pl->max_bytes = max_bytes;
	pl->hurry = hurry;
	pthread_mutex_init(&pl->lock, NULL);
	pthread_cond_init(&pl->ready, NULL);
	sigemptyset(&block);
	sigaddset(&block, SIGINT);
	sigaddset(&block, SIGTERM);
	pthread_sigmask(SIG_BLOCK, &block, &old);
	errno = pthread_create(&pl->worker, NULL, worker, pl);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	if (errno) {
		pthread_cond_destroy(&pl->ready);
		pthread_mutex_destroy(&pl->lock);
		pr_order_free(pl->o);
		free(pl);
		return NULL;
	}
	return pl;
}

static uint64_t held_bytes(struct ds_pipeline *pl)
{
	struct pr_order_stats st = { .sz = sizeof(st) };

	pr_order_stats(pl->o, &st);
	return st.held_bytes;
}

int ds_pipeline_copy(const struct pr_record *rec, void *arg)
{
	struct ds_pipeline *pl = arg;
	int err;

	/* Other records are kept whatever waits: the model needs them. */
	if (rec->type == PR_RECORD_SAMPLE && held_bytes(pl) + rec->size > pl->max_bytes) {
		atomic_fetch_add_explicit(&pl->dropped_full, 1, memory_order_relaxed);
		return 0;
	}
	err = pr_order_add(pl->o, rec);
	if (!err && rec->type == PR_RECORD_SAMPLE)
		atomic_fetch_add_explicit(&pl->copied, 1, memory_order_relaxed);
	return err;
}

int ds_pipeline_flush(void *arg)
{
	struct ds_pipeline *pl = arg;
	uint64_t now = ds_now_ns();
	int err = pr_order_round(pl->o);

	if (err)
		return err;
	pthread_mutex_lock(&pl->lock);
	pl->round_ns[0] = pl->round_ns[1];
	pl->round_ns[1] = now;
	pl->rounds = true;
	pthread_cond_signal(&pl->ready);
	pthread_mutex_unlock(&pl->lock);
	return 0;
}

void ds_pipeline_counts(struct ds_pipeline *pl, struct ds_pipeline_counts *c)
{
	struct pr_order_stats st = { .sz = sizeof(st) };

	pr_order_stats(pl->o, &st);
	c->copied = atomic_load(&pl->copied);
	/* A copy that does not parse again, or that the order had no
	 * memory to merge, is not expected: counted, not lost silently. */
	c->dropped = atomic_load(&pl->dropped_full) + atomic_load(&pl->dropped_hurry) +
		     st.corrupt + st.dropped;
	c->processed = atomic_load(&pl->processed);
	c->queued_bytes = st.held_bytes;
}

int ds_pipeline_finish(struct ds_pipeline *pl)
{
	if (pl->joined)
		return pl->error;
	pthread_mutex_lock(&pl->lock);
	pl->closed = true;
	pthread_cond_signal(&pl->ready);
	pthread_mutex_unlock(&pl->lock);
	pthread_join(pl->worker, NULL);
	pl->joined = true;
	return pl->error;
}

void ds_pipeline_free(struct ds_pipeline *pl)
{
	if (!pl)
		return;
	ds_pipeline_finish(pl);
	pr_order_free(pl->o);
	pthread_cond_destroy(&pl->ready);
	pthread_mutex_destroy(&pl->lock);
	free(pl);
}
