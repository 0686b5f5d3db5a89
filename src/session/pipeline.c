/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Records from the capture thread to workers, a drain at a time, through
 * the library's pr_order, one per worker: the capture thread adds each
 * record to its worker's order (every worker's, for records other than
 * samples) and ends a round in each after each drain; each worker
 * delivers what its rounds let go.
 */
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdalign.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "base/base.h"
#include "session/session.h"

/* A clock in ns: the calling thread's CPU time, or the monotonic clock
 * that record times use. */
static uint64_t clock_ns(clockid_t id)
{
	struct timespec ts;

	if (clock_gettime(id, &ts))
		return 0;
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static uint64_t thread_cpu_ns(void)
{
	return clock_ns(CLOCK_THREAD_CPUTIME_ID);
}

/*
 * Where each thread's stacks end, learned by its worker, read by the
 * capture thread: a sample's copy keeps its stack only up to there (and
 * a little more), not the whole copy the kernel made.  A thread's
 * outermost frames stay put while it lives, and on this machine's C and
 * C++ workloads the rest of an 8 KiB copy was two thirds of the bytes
 * copied.  A slot is one word, (tid, top / 64), written by the thread's
 * worker alone and read whole by the capture thread, so neither locks;
 * top 0 means "copy whole" (a cut that proved too short).
 */
#define TOP_SLOTS 4096
#define TOP_TID_BITS 22              /* PID_MAX_LIMIT */
#define TOP_Q_BITS (64 - TOP_TID_BITS)
/* Kept past the learned top: what an unwind reads beyond a frame's
 * address varies little, if at all. */
#define TOP_MARGIN 128

/* One worker: its own order of the records it is handed, and its
 * thread.  Aligned so that what one worker writes per record never
 * shares a cache line with another's. */
struct worker {
	struct pr__pipeline *pl;
	size_t idx;
	void *ctx;
	struct pr_order *o;
	pthread_t thread;
	bool started;
	pthread_mutex_t lock;
	pthread_cond_t ready;
	bool rounds;                 /* a round ended since the worker looked */
	/* When the last two rounds ended (event clock): what the round
	 * before the last read is all delivered once the last has ended. */
	uint64_t round_ns[2];
	bool closed;
	int error;                   /* the worker's, read after the join */
	uint64_t cpu_ns;             /* its CPU time, set as it ends */
	_Atomic uint64_t *tops;      /* TOP_SLOTS, of its threads */
	alignas(64) _Atomic uint64_t processed, dropped_hurry, cut_short;
};

struct pr__pipeline {
	struct pr_logger lg;
	pr__process_fn process;
	int (*tick)(uint64_t horizon, void *ctx);
	size_t max_bytes;
	const volatile sig_atomic_t *hurry;
	struct worker *workers;
	size_t nr;
	bool joined;
	/* The copying thread's CPU time when the pipeline was made, then
	 * what it spent until pr__pipeline_finish() (on the same thread). */
	uint64_t copier_cpu_ns;
	bool copier_done;
	/* pr__pipeline_throttle(): the copying thread waits for room. */
	pthread_mutex_t room_lock;
	pthread_cond_t room;
	_Atomic bool waiting;
	/* Written by the capture thread, one per record: on a cache line of
	 * their own. */
	alignas(64) _Atomic uint64_t copied, dropped_full, cut, cut_bytes;
	/* The most one worker's order held once a sample was added (only the
	 * capture thread writes it). */
	_Atomic uint64_t queued_peak;
};

/* The worker whose record `rec` is: its thread's, else the first.
 * Threads started together have consecutive ids (a pool, the threads of
 * a server): each to another worker.  A hash would put two of them on one
 * worker half the time. */
static size_t owner(const struct pr__pipeline *pl, const struct pr_record *rec)
{
	return pl->nr > 1 && (rec->fields & PR_ID_TID) ? rec->tid % pl->nr : 0;
}

/* A worker: every record, in time order.  After an error, or once a
 * second Ctrl-C hurries the end, what is left only goes. */
static int deliver(const struct pr_record *rec, void *arg)
{
	struct worker *w = arg;
	struct pr__pipeline *pl = w->pl;
	bool sample = rec->type == PR_RECORD_SAMPLE;
	int err;

	if (w->error)
		return 0;
	if (pl->hurry && *pl->hurry > 1) {
		if (sample)
			atomic_fetch_add_explicit(&w->dropped_hurry, 1, memory_order_relaxed);
		return 0;
	}
	err = pl->process(rec, sample || owner(pl, rec) == w->idx, w->ctx);
	if (sample)
		atomic_fetch_add_explicit(&w->processed, 1, memory_order_relaxed);
	if (err < 0)
		w->error = err;
	return 0;
}

static void *run_worker(void *arg)
{
	struct worker *w = arg;
	struct pr__pipeline *pl = w->pl;
	uint64_t horizon;
	int err;

	pthread_mutex_lock(&w->lock);
	for (;;) {
		while (!w->rounds && !w->closed)
			pthread_cond_wait(&w->ready, &w->lock);
		if (!w->rounds)
			break;
		w->rounds = false;
		horizon = w->round_ns[0];
		pthread_mutex_unlock(&w->lock);
		err = pr_order_deliver(w->o, deliver, w);
		if (err >= 0 && pl->tick && horizon && !w->error)
			err = pl->tick(horizon, w->ctx);
		if (atomic_load_explicit(&pl->waiting, memory_order_relaxed)) {
			pthread_mutex_lock(&pl->room_lock);
			pthread_cond_signal(&pl->room);
			pthread_mutex_unlock(&pl->room_lock);
		}
		pthread_mutex_lock(&w->lock);
		if (err < 0 && !w->error)
			w->error = err;
	}
	pthread_mutex_unlock(&w->lock);
	/* The capture thread has stopped adding: everything held goes. */
	err = pr_order_flush(w->o, deliver, w);
	if (err < 0 && !w->error)
		w->error = err;
	w->cpu_ns = thread_cpu_ns();
	return NULL;
}

static void stop_workers(struct pr__pipeline *pl)
{
	for (size_t i = 0; i < pl->nr; i++) {
		struct worker *w = &pl->workers[i];

		if (!w->started)
			continue;
		pthread_mutex_lock(&w->lock);
		w->closed = true;
		pthread_cond_signal(&w->ready);
		pthread_mutex_unlock(&w->lock);
	}
	for (size_t i = 0; i < pl->nr; i++)
		if (pl->workers[i].started) {
			pthread_join(pl->workers[i].thread, NULL);
			pl->workers[i].started = false;
		}
	pl->joined = true;
}

static void free_workers(struct pr__pipeline *pl)
{
	for (size_t i = 0; i < pl->nr; i++) {
		free(pl->workers[i].tops);
		pr_order_free(pl->workers[i].o);
		pthread_cond_destroy(&pl->workers[i].ready);
		pthread_mutex_destroy(&pl->workers[i].lock);
	}
	free(pl->workers);
}

struct pr__pipeline *pr__pipeline_new(const struct perf_event_attr *attr, size_t nr_workers,
				    pr__process_fn process,
				    int (*tick)(uint64_t horizon, void *ctx), void *const *ctxs,
				    size_t max_bytes, const volatile sig_atomic_t *hurry,
				    const struct pr_logger *lg)
{
	PR_OPTS(pr_order_opts, oo, .log = lg ? lg->fn : NULL, .log_ctx = lg ? lg->ctx : NULL);
	struct pr__pipeline *pl;
	sigset_t block, old;
	size_t i;

	if (!nr_workers || (tick && nr_workers > 1)) {
		errno = EINVAL;
		return NULL;
	}
	pl = aligned_alloc(64, (sizeof(*pl) + 63) & ~(size_t)63);
	if (!pl)
		return NULL;
	memset(pl, 0, sizeof(*pl));
	pl->workers = aligned_alloc(64, nr_workers * sizeof(*pl->workers));
	if (!pl->workers) {
		free(pl);
		return NULL;
	}
	memset(pl->workers, 0, nr_workers * sizeof(*pl->workers));
	if (lg)
		pl->lg = *lg;
	pl->process = process;
	pl->tick = tick;
	pl->max_bytes = max_bytes;
	pl->hurry = hurry;
	pl->copier_cpu_ns = thread_cpu_ns();
	pthread_mutex_init(&pl->room_lock, NULL);
	pthread_cond_init(&pl->room, NULL);
	for (i = 0; i < nr_workers; i++) {
		struct worker *w = &pl->workers[i];

		w->pl = pl;
		w->idx = i;
		w->ctx = ctxs[i];
		pthread_mutex_init(&w->lock, NULL);
		pthread_cond_init(&w->ready, NULL);
		pl->nr++;
		if (!(w->o = pr_order_new(attr, &oo)) ||
		    !(w->tops = calloc(TOP_SLOTS, sizeof(*w->tops))))
			goto fail;
	}
	sigemptyset(&block);
	sigaddset(&block, SIGINT);
	sigaddset(&block, SIGTERM);
	pthread_sigmask(SIG_BLOCK, &block, &old);
	for (i = 0; i < nr_workers; i++) {
		errno = pthread_create(&pl->workers[i].thread, NULL, run_worker, &pl->workers[i]);
		if (errno)
			break;
		pl->workers[i].started = true;
	}
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	if (i == nr_workers)
		return pl;
	stop_workers(pl);
fail:
	i = (size_t)errno;
	free_workers(pl);
	pthread_cond_destroy(&pl->room);
	pthread_mutex_destroy(&pl->room_lock);
	free(pl);
	errno = i ? (int)i : ENOMEM;
	return NULL;
}

static uint64_t held_bytes(struct pr__pipeline *pl)
{
	uint64_t held = 0;

	for (size_t i = 0; i < pl->nr; i++) {
		struct pr_order_stats st = { .sz = sizeof(st) };

		pr_order_stats(pl->workers[i].o, &st);
		held += st.held_bytes;
	}
	return held;
}

/* The slot of a sample's thread in its worker's table, or NULL. */
static _Atomic uint64_t *top_slot(const struct pr__pipeline *pl, const struct pr_record *rec)
{
	if (rec->type != PR_RECORD_SAMPLE || !(rec->fields & PR_ID_TID) || !rec->tid ||
	    rec->tid >> TOP_TID_BITS || !rec->u.sample.stack)
		return NULL;
	return &pl->workers[owner(pl, rec)].tops[(rec->tid / pl->nr) % TOP_SLOTS];
}

/* Where the thread's stacks end by its slot: 0 when not known, or when
 * it is to be copied whole. */
static uint64_t top_of(uint64_t slot, uint32_t tid)
{
	if (slot >> TOP_Q_BITS != tid)
		return 0;
	return (slot & ((UINT64_C(1) << TOP_Q_BITS) - 1)) << 6;
}

/* How much of a sample's stack to copy: up to a little past where its
 * thread's stacks end, when that is within what the kernel copied. */
static uint64_t stack_to_copy(const struct pr__pipeline *pl, const struct pr_record *rec)
{
	const struct pr_sample *sm = &rec->u.sample;
	_Atomic uint64_t *slot = top_slot(pl, rec);
	uint64_t top = slot ? top_of(atomic_load_explicit(slot, memory_order_relaxed),
				     rec->tid) : 0;

	if (top <= sm->stack_addr || top - sm->stack_addr + TOP_MARGIN >= sm->stack_dyn_size)
		return UINT64_MAX;
	return top - sm->stack_addr + TOP_MARGIN;
}

bool pr__pipeline_stack_used(struct pr__pipeline *pl, const struct pr_record *rec,
			    const struct pr_stack *st, uint64_t used)
{
	const struct pr_sample *sm = &rec->u.sample;
	_Atomic uint64_t *slot = top_slot(pl, rec);
	uint64_t was, top, q;

	if (!slot)
		return false;
	was = atomic_load_explicit(slot, memory_order_relaxed);
	top = top_of(was, rec->tid);
	/* Cut (pr_order_add_cut() says so), and its unwind wanted more than
	 * the cut left: the thread's stacks reach further than it learned (a
	 * coroutine's stack carved from its own, a reused tid).  It is
	 * copied whole from now on (those cut before the capture thread saw
	 * that count too). */
	if (sm->stack_size == sm->stack_dyn_size + 8 && used > sm->stack_dyn_size) {
		pr__log(&pl->lg, PR_LOG_DEBUG, "thread %u: a stack copied to 0x%llx, up to where its "
			"stacks ended, needed more (it ended %s); copied whole from now on",
			rec->tid, (unsigned long long)(sm->stack_addr + sm->stack_dyn_size),
			pr_stack_end_name(st->end));
		atomic_store_explicit(slot, (uint64_t)rec->tid << TOP_Q_BITS, memory_order_relaxed);
		atomic_fetch_add_explicit(&pl->workers[owner(pl, rec)].cut_short, 1,
					  memory_order_relaxed);
		return true;
	}
	if (was >> TOP_Q_BITS == rec->tid && !top)
		return false;                /* copied whole from now on */
	/* Only a stack unwound to its outermost frame says where the
	 * thread's stacks end. */
	if (st->end != PR_END_OUTERMOST || !used ||
	    (st->nr > st->nr_kernel && (st->frames[st->nr - 1].flags & PR_FRAME_JOINED)))
		return false;
	q = (sm->stack_addr + used + 63) >> 6;
	if (q >> TOP_Q_BITS || (top && q <= top >> 6))
		return false;
	atomic_store_explicit(slot, (uint64_t)rec->tid << TOP_Q_BITS | q, memory_order_relaxed);
	return false;
}

int pr__pipeline_copy(const struct pr_record *rec, void *arg)
{
	struct pr__pipeline *pl = arg;
	int err = 0;

	if (rec->type == PR_RECORD_SAMPLE) {
		struct pr_order *o = pl->workers[owner(pl, rec)].o;
		struct pr_order_stats st = { .sz = sizeof(st) };
		uint64_t keep;

		/* Each worker's share of the bound: one order's counters per
		 * sample, however many workers there are. */
		pr_order_stats(o, &st);
		if (st.held_bytes + rec->size > pl->max_bytes / pl->nr) {
			atomic_fetch_add_explicit(&pl->dropped_full, 1, memory_order_relaxed);
			return 0;
		}
		keep = stack_to_copy(pl, rec);
		err = pr_order_add_cut(o, rec, keep);
		if (err)
			return err;
		atomic_fetch_add_explicit(&pl->copied, 1, memory_order_relaxed);
		if (st.held_bytes + rec->size > atomic_load_explicit(&pl->queued_peak,
								     memory_order_relaxed))
			atomic_store_explicit(&pl->queued_peak, st.held_bytes + rec->size,
					      memory_order_relaxed);
		if (keep != UINT64_MAX) {
			atomic_fetch_add_explicit(&pl->cut, 1, memory_order_relaxed);
			atomic_fetch_add_explicit(&pl->cut_bytes,
						  rec->u.sample.stack_dyn_size - keep,
						  memory_order_relaxed);
		}
		return 0;
	}
	/* Other records are kept whatever waits, by every worker: each
	 * keeps its own model of the processes. */
	for (size_t i = 0; !err && i < pl->nr; i++)
		err = pr_order_add(pl->workers[i].o, rec);
	return err;
}

int pr__pipeline_flush(void *arg)
{
	struct pr__pipeline *pl = arg;
	uint64_t now = clock_ns(CLOCK_MONOTONIC);

	for (size_t i = 0; i < pl->nr; i++) {
		struct worker *w = &pl->workers[i];
		int err = pr_order_round(w->o);

		if (err)
			return err;
		pthread_mutex_lock(&w->lock);
		w->round_ns[0] = w->round_ns[1];
		w->round_ns[1] = now;
		w->rounds = true;
		pthread_cond_signal(&w->ready);
		pthread_mutex_unlock(&w->lock);
	}
	return 0;
}

void pr__pipeline_throttle(struct pr__pipeline *pl, size_t max_bytes)
{
	/* `waiting` is set before what is held is looked at, under the lock
	 * a worker takes to signal: one that finishes after the look finds
	 * it set and signals once this thread waits, so no wakeup is missed
	 * (the time limit is only a net). */
	pthread_mutex_lock(&pl->room_lock);
	atomic_store(&pl->waiting, true);
	while (held_bytes(pl) > max_bytes) {
		struct timespec until;

		/* A round of its own lets go what the last one held back. */
		if (pr__pipeline_flush(pl))
			break;
		clock_gettime(CLOCK_REALTIME, &until);
		until.tv_nsec += 2000000;
		if (until.tv_nsec >= 1000000000) {
			until.tv_sec++;
			until.tv_nsec -= 1000000000;
		}
		pthread_cond_timedwait(&pl->room, &pl->room_lock, &until);
	}
	atomic_store(&pl->waiting, false);
	pthread_mutex_unlock(&pl->room_lock);
}

void pr__pipeline_counts(struct pr__pipeline *pl, struct pr__pipeline_counts *c)
{
	*c = (struct pr__pipeline_counts){
		.copied = atomic_load(&pl->copied),
		.dropped = atomic_load(&pl->dropped_full),
		.cut = atomic_load(&pl->cut),
		.cut_bytes = atomic_load(&pl->cut_bytes),
		.queued_peak = atomic_load(&pl->queued_peak),
	};
	for (size_t i = 0; i < pl->nr; i++) {
		struct pr_order_stats st = { .sz = sizeof(st) };

		pr_order_stats(pl->workers[i].o, &st);
		/* A copy that does not parse again, or that the order had no
		 * memory to merge, is not expected: counted, not lost
		 * silently. */
		c->dropped += atomic_load(&pl->workers[i].dropped_hurry) + st.corrupt + st.dropped;
		c->processed += atomic_load(&pl->workers[i].processed);
		c->cut_short += atomic_load(&pl->workers[i].cut_short);
		c->queued_bytes += st.held_bytes;
	}
}

int pr__pipeline_finish(struct pr__pipeline *pl)
{
	if (!pl->copier_done) {
		pl->copier_cpu_ns = thread_cpu_ns() - pl->copier_cpu_ns;
		pl->copier_done = true;
	}
	if (!pl->joined)
		stop_workers(pl);
	for (size_t i = 0; i < pl->nr; i++)
		if (pl->workers[i].error)
			return pl->workers[i].error;
	return 0;
}

void pr__pipeline_cpu(const struct pr__pipeline *pl, struct pr__pipeline_cpu *c)
{
	*c = (struct pr__pipeline_cpu){ .copier_ns = pl->copier_done ? pl->copier_cpu_ns : 0 };
	for (size_t i = 0; pl->joined && i < pl->nr; i++) {
		c->workers_ns += pl->workers[i].cpu_ns;
		if (pl->workers[i].cpu_ns > c->busiest_ns)
			c->busiest_ns = pl->workers[i].cpu_ns;
	}
}

void pr__pipeline_free(struct pr__pipeline *pl)
{
	if (!pl)
		return;
	pr__pipeline_finish(pl);
	free_workers(pl);
	pthread_cond_destroy(&pl->room);
	pthread_mutex_destroy(&pl->room_lock);
	free(pl);
}
