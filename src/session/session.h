/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The session stage (prsession.h), internal: session.c is the per-record
 * path, pipeline.c hands records to worker threads.
 *
 * Records from the rings to worker threads.  The capture thread only
 * copies each record out of its ring (so the kernel never waits on
 * unwinding or on a symbolizer reading a large debug file for the first
 * time) and ends a round after each drain; each worker gets its records
 * in time order.  Both go through the library's pr_order (perfreader.h):
 * a sample on one CPU can follow the mmap, fork or exec on another CPU
 * that it depends on, and the order holds records back by perf's round
 * rule until nothing a later drain brings can be older.
 */
#ifndef PR_SESSION_INT_H
#define PR_SESSION_INT_H

#include <signal.h>
#include <stdbool.h>
#include <stdint.h>

#include "base/base.h"
#include "perfreader.h"
#include "prsession.h"

struct pr__pipeline;
struct perf_event_attr;

/*
 * What a worker is handed: every record, in time order, of its share.
 * Samples are shared out by thread (a thread's samples always go to the
 * same worker, so that what is kept per thread -- a stack to join, a
 * wait under way -- is never split); every other record goes to every
 * worker, each of which keeps its own replica of the process model, so
 * that no model is shared and no lock is taken per sample (the names
 * they find, they share: pr_sym_pool, locked per address new to a
 * worker).  `own` says
 * the record is this worker's to count (its thread is the worker's, or
 * it has none and this is worker 0), as opposed to a replica's copy.
 * After a negative return the rest is only released, and
 * pr__pipeline_finish() reports it.
 */
typedef int (*pr__process_fn)(const struct pr_record *rec, bool own, void *ctx);

/*
 * A pipeline of `nr_workers` workers (at least 1) feeding records of
 * events opened with `attr` to `process`, worker i with ctxs[i].
 * `max_bytes` bounds what may wait for the workers (each its share): past
 * it, samples are dropped and counted (other records are kept: the process model needs
 * them).  Once `*hurry` (may be NULL) exceeds 1 -- a second Ctrl-C --
 * what still waits is dropped and counted.  The workers start at once,
 * with SIGINT and SIGTERM blocked so they reach the capture thread.
 * `tick` (may be NULL; one worker only) is called on the worker after
 * each batch with a horizon: a time (event clock, ns) such that every
 * record older than it has been processed, by perf's round rule -- what
 * was read two drains ago -- so that a consumer cutting time into windows
 * can end one even when no record comes.  NULL on failure.
 */
struct pr__pipeline *pr__pipeline_new(const struct perf_event_attr *attr, size_t nr_workers,
				    pr__process_fn process,
				    int (*tick)(uint64_t horizon, void *ctx), void *const *ctxs,
				    size_t max_bytes, const volatile sig_atomic_t *hurry,
				    const struct pr_logger *lg);

/* Capture thread: copy one record (a pr_record_fn; ctx is the pipeline),
 * and end a round, handing over what was copied since the last call (a
 * round hook: call it after every drain of all the rings). */
int pr__pipeline_copy(const struct pr_record *rec, void *pipeline);
int pr__pipeline_flush(void *pipeline);

/* For a source that can wait and whose records come in time order (a
 * file, read faster than it is unwound): block until what waits for the
 * workers takes at most `max_bytes`, ending rounds meanwhile.  On the
 * thread that copies. */
void pr__pipeline_throttle(struct pr__pipeline *pl, size_t max_bytes);

/*
 * Worker: what unwinding a sample read of its stack (`used`,
 * pr_unwinder_stack_used(); `st` its stack).  From a stack unwound to
 * its outermost frame the pipeline learns where the thread's stacks end,
 * and copies its later samples' stacks only up to a little past there
 * (pr_order_add_cut()).  A cut sample whose unwind wanted more than the
 * cut left is counted, and its thread's samples are copied whole from
 * then on.  Call it for every sample unwound, in order.  Any worker, for
 * its own samples.  True when this sample was cut too short (its stack
 * ended early by the cut, not by the kernel's copy).
 */
struct pr_stack;
bool pr__pipeline_stack_used(struct pr__pipeline *pl, const struct pr_record *rec,
			    const struct pr_stack *st, uint64_t used);

/* Samples copied, samples dropped (the worker was behind, or a second
 * Ctrl-C), and samples the worker has processed.  Any thread. */
struct pr__pipeline_counts {
	uint64_t copied, dropped, processed;
	size_t queued_bytes;
	/* The most one worker had waiting at once. */
	uint64_t queued_peak;
	/* Samples whose stack was copied only up to where their thread's
	 * stacks end (pr__pipeline_stack_used()), the bytes that spared, and
	 * those an unwind found cut too short. */
	uint64_t cut, cut_bytes, cut_short;
};
void pr__pipeline_counts(struct pr__pipeline *pl, struct pr__pipeline_counts *c);

/* Hand over the rest, let the workers finish everything queued and join
 * them.  Returns 0 or the first error of `process`. */
int pr__pipeline_finish(struct pr__pipeline *pl);
/*
 * Where the pipeline's CPU went, once pr__pipeline_finish() has run (on
 * the thread that made the pipeline and copied into it): the copying
 * thread's time from pr__pipeline_new() to pr__pipeline_finish(), all the
 * workers' together, and the busiest one's.  With N workers on N cores,
 * the wall time is at least max(copier, busiest) and at least
 * (copier + workers) / cores: what bounds the speed-up of more workers.
 */
struct pr__pipeline_cpu {
	uint64_t copier_ns, workers_ns, busiest_ns;
};
void pr__pipeline_cpu(const struct pr__pipeline *pl, struct pr__pipeline_cpu *c);

/* Accepts NULL; finishes first when not yet finished. */
void pr__pipeline_free(struct pr__pipeline *pl);

#endif
