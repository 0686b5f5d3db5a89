/* SPDX-License-Identifier: Apache-2.0 */
/*
 * prsession.h - the one per-record path: records in time order -> the
 * process model -> the unwinder -> the sample's event -> the sinks, on
 * the calling thread or on N worker threads.  Every front end (a live
 * capture, a perf.data file, a continuous agent) feeds a session and
 * attaches sinks; a change to the path lands in all of them at once.
 *
 * The session is a convenience over the objects of the other headers
 * (pr_model, pr_unwinder, pr_symbolizer, pr_order), which stay usable on
 * their own: it makes one of each per worker and drives them.
 *
 * Settled once for every front end:
 *  - every sample that unwinds reaches the sinks, an empty stack (a
 *    kernel thread's, a sample without user registers) included: it is
 *    CPU time all the same, shown as its process and thread alone;
 *  - a sink that has no memory for one sample (-ENOMEM) loses that
 *    sample only: it is counted (pr_session_stats.no_memory) and the run
 *    goes on; any other error from a sink ends the run (its worker stops,
 *    pr_session_opts.stop is raised, pr_session_finish() returns it);
 *  - every sink attached sees every sample: a profile and the quality
 *    counts, say, are fed the same samples in the same order.
 */
#ifndef PRSESSION_H
#define PRSESSION_H

#include <signal.h>

#include "prcommon.h"
#include "prrecord.h"
#include "prmodel.h"
#include "prunwind.h"
#include "prsym.h"

#ifdef __cplusplus
extern "C" {
#endif

struct pr_reader;
struct pr_file;
struct pr_session;

/* What a sink is handed for one sample.  Every pointer is valid until
 * the sink's callback returns (names and frames: as long as the session,
 * pr_stack's own rules). */
struct pr_sink_sample {
	const struct pr_record *rec;
	const struct pr_stack *st;
	/* The worker's symbolizer; NULL when the session names nothing
	 * (pr_session_opts.names NULL). */
	struct pr_symbolizer *sym;
	/* The thread's and the process's names (NULL when not known). */
	const char *comm, *process;
	/* The sample's event: its index among the source's events (0 when
	 * it has one). */
	size_t event;
	/* A switch-out sample of the off-CPU event (pr_event_source_of()
	 * PR_SOURCE_CONTEXT_SWITCH): a wait begins. */
	bool off_cpu;
	/* Its stack copy was cut by the live capture thread, too short for
	 * the unwind (pr_session_opts.cut_stacks). */
	bool cut_short;
};

/*
 * A sink: where unwound samples go.  The session calls it on the thread
 * of the worker whose share it is, one call at a time.  Every member but
 * `sz` may be NULL.  `ctx` is worker 0's; with more workers, `part_new`
 * makes each other worker a share of its own (the sink then takes more
 * than one worker: without it, the session refuses more than one), and
 * `part_merge` adds a share into `ctx` once the workers are done.
 *
 * Returns: 0 or a negative errno; `time`, `record` and `tick` may return
 * PR_SINK_RELEASED (> 0) to say the sink holds nothing the model handed
 * out any more (the agent's window was cut), so the session may trim the
 * model's caches now (pr_model_opts.cache).  A sink that keeps frames'
 * files or names across such a release (the quality counts) must not be
 * attached to a session whose models have a cache.
 */
#define PR_SINK_RELEASED 1
struct pr_sink {
	size_t sz;
	void *ctx;
	/* The time of the next record the worker handles (event clock, not
	 * 0), before the model or any sink takes it: a sink cutting time
	 * into windows ends those before it here. */
	int (*time)(void *ctx, uint64_t time);
	/* Every record that is not a sample, after the model took it, on
	 * the worker that owns it (records of no thread: worker 0). */
	int (*record)(void *ctx, const struct pr_record *rec);
	/* Every sample that unwound. */
	int (*sample)(void *ctx, const struct pr_sink_sample *s);
	/* On one worker only, after each batch: every record older than
	 * `horizon` (event clock, ns) has been handed over, so time can be
	 * cut into windows even when no record comes. */
	int (*tick)(void *ctx, uint64_t horizon);
	/* The run ended at `end` (event clock; 0 when not known): waits
	 * still open end there.  Called on every share. */
	int (*finish)(void *ctx, uint64_t end);
	/* A share for one more worker; NULL (errno set) on failure. */
	void *(*part_new)(void *ctx);
	/* Add share `part` into `ctx` and free it; with ctx NULL, only free
	 * it (after an error).  0 or a negative errno. */
	int (*part_merge)(void *ctx, void *part);
};

/*
 * Which samples the sinks see: false leaves `rec` out, counted as
 * skipped, before it is unwound.  `process` is its process's name (may
 * be NULL).  On the worker's thread.
 */
typedef bool (*pr_sample_filter_fn)(const struct pr_record *rec, const char *process, void *ctx);

/* Called with each worker's model before any record reaches it (a
 * caller's build-ids, an archive's index): 0 or a negative errno. */
typedef int (*pr_model_setup_fn)(struct pr_model *m, void *ctx);

struct pr_session_opts {
	size_t sz;
	pr_log_fn log;
	void *log_ctx;
	/*
	 * Worker threads: 0 handles every record on the thread that hands it
	 * in (a file read in order: no copies); N >= 1 copies each record
	 * and hands it to N workers, each its own model, unwinder and
	 * symbolizer (a thread's samples always go to the same one).
	 */
	size_t workers;
	/* Each worker's model's options (copied; NULL: defaults): the
	 * debug directories, and the caches' bounds -- when a sink
	 * releases (PR_SINK_RELEASED) the model is trimmed to them, and
	 * with `release_memory` what that freed goes back to the system. */
	const struct pr_model_opts *model;
	bool release_memory;
	/* The unwinder's options (copied; NULL: defaults).  `live` is set
	 * for a reader's session. */
	const struct pr_unwinder_opts *unwind;
	/* The symbolizer's (copied): NULL names nothing, and sinks get no
	 * symbolizer.  With more than one worker they share the names they
	 * find (pr_sym_pool) unless the options give a pool. */
	const struct pr_symbolizer_opts *names;
	/* Workers only: what may wait for them before samples are dropped
	 * and counted (0: no bound; a reader's source should bound it). */
	size_t max_bytes;
	/* Workers only: once *hurry exceeds 1 (a second interrupt), what
	 * still waits is dropped and counted.  May be NULL. */
	const volatile sig_atomic_t *hurry;
	/* Set to 1 when a worker fails (a sink's error): the capture
	 * feeding the session should stop.  May be NULL. */
	volatile sig_atomic_t *stop;
	/* Workers only, live: copy a thread's later stacks only up to where
	 * its stacks were seen to end (pr_order_add_cut()); a copy cut too
	 * short is counted, and its thread copied whole from then on. */
	bool cut_stacks;
	/* May be NULL. */
	pr_sample_filter_fn filter;
	void *filter_ctx;
	pr_model_setup_fn model_setup;
	void *model_setup_ctx;
};

/*
 * A session over a live reader's records, or over a perf.data file's.
 * The source must outlive the session.  NULL with errno set on failure
 * (ENOMEM; EINVAL for bad options).  Add sinks, then hand records in.
 */
PR_API struct pr_session *pr_session_new_reader(struct pr_reader *r,
						const struct pr_session_opts *opts);
PR_API struct pr_session *pr_session_new_file(struct pr_file *f,
					      const struct pr_session_opts *opts);
/* Frees the sinks' other shares, the workers' objects; finishes first
 * when not yet finished.  Accepts NULL. */
PR_API void pr_session_free(struct pr_session *s);

/* Attach `sink` (copied; its ctx stays the caller's), before the first
 * record.  0, -EINVAL (sz, or a sink without part_new on several
 * workers, or a tick with several), -EBUSY once records came, -ENOMEM. */
PR_API int pr_session_add_sink(struct pr_session *s, const struct pr_sink *sink);

/*
 * One record, in the source's order (a pr_record_fn; ctx is the
 * session).  With workers it is copied (the copy made before the call
 * returns) and handed over at the next round.  Returns 0 or a negative
 * errno (with no workers: the first sink's error).
 */
PR_API int pr_session_add(const struct pr_record *rec, void *session);
/* With workers: end a round -- call after every drain of all the rings
 * -- handing over what came since the last.  A round hook (ctx: the
 * session); 0 or a negative errno.  Without workers: nothing. */
PR_API int pr_session_round(void *session);

/* The session's file, read to its end through it (pr_file_consume()'s
 * result: the records read, or a negative errno; -EBADMSG after
 * damaged records were skipped).  With workers the reading waits for
 * them rather than hold more than a few rounds. */
PR_API int pr_session_consume_file(struct pr_session *s);

/*
 * The end: let the workers finish what they hold, tell every sink share
 * the run ended at `end` (event clock; 0 when not known), and merge the
 * shares into each sink's ctx.  Returns 0 or the first error of a
 * worker, a sink's finish or a merge.  Call once; the stats and the
 * workers' objects stay until pr_session_free().
 */
PR_API int pr_session_finish(struct pr_session *s, uint64_t end);

/* What the session counted.  Any thread, at any time (the counters are
 * read as they stand); the CPU figures once finished. */
struct pr_session_stats {
	size_t sz;
	uint64_t samples;            /* handed to the sinks */
	uint64_t complete;           /* of them, unwound to the outermost frame */
	uint64_t skipped;            /* left out by the filter */
	uint64_t no_memory;          /* a sink had no memory for them */
	/* Workers: samples copied; dropped (the workers were behind, a
	 * second interrupt, a copy that did not parse again); handed to a
	 * worker. */
	uint64_t copied, dropped, processed;
	uint64_t queued_bytes;
	/* Workers with cut_stacks: copies cut at the thread's learned top,
	 * the bytes that spared, and those cut too short. */
	uint64_t cut, cut_bytes, cut_short;
	/* Event clock: the first and last sample handed to the sinks, and
	 * the latest record of any kind (0: none). */
	uint64_t first_time, last_time, end_time;
	/* Once finished: the CPU time of the thread that handed records
	 * in (from pr_session_new_*() to pr_session_finish()), of all the
	 * workers, and of the busiest. */
	uint64_t feeder_ns, workers_ns, busiest_ns;
	/* Of the addresses new to a worker, those another had named. */
	uint64_t pool_hits, pool_lookups;
	/* The models' file caches as last trimmed (pr_cache_stats). */
	uint64_t cache_files, cache_bytes, cache_evicted, cache_evicted_hot;
	/* Files of processes in another mount namespace that their roots
	 * did not give (pr_cache_stats.files_foreign_missing), as last
	 * trimmed. */
	uint64_t cache_foreign_missing;
	/* The user frames of the samples handed to the sinks, by where they
	 * came from: unwound from the sample's stack copy (with DWARF, or
	 * by frame pointer through code without unwind information:
	 * PR_FRAME_FP); taken from its call chain, the kernel's
	 * frame-pointer walk (PR_FRAME_CHAIN); joined from an earlier stack
	 * of the thread (PR_FRAME_JOINED). */
	uint64_t frames_dwarf, frames_chain, frames_joined;
	/* As last trimmed: DSOs and processes the models hold, and the files
	 * let go for their age (pr_cache_stats). */
	uint64_t cache_dsos, cache_procs, cache_renewed;
	/* Since 2.1.  With workers, whose symbolizers share files' address
	 * indexes: the indexes built, and mapped from the index cache, each
	 * once among them; and the times one was taken as made already (by
	 * another worker, mostly) rather than made again. */
	uint64_t index_built, index_mapped, index_shared;
	/* Since 2.1.  With workers: the most bytes of samples that waited at
	 * once for one worker (queued_bytes is what waits now); at most
	 * pr_session_opts.max_bytes over the number of workers. */
	uint64_t queued_peak_bytes;
};
PR_API int pr_session_stats(const struct pr_session *s, struct pr_session_stats *st);

/* The workers' unwinders' and symbolizers' counters, summed (files
 * opened and missing: the most of one worker, since each opens what its
 * samples need).  Set st->sz.  After pr_session_finish(), or on the
 * thread handing records in without workers.  0 or -EINVAL. */
PR_API int pr_session_unwind_stats(const struct pr_session *s, struct pr_unwind_stats *st);
PR_API int pr_session_symbolizer_stats(const struct pr_session *s,
				       struct pr_symbolizer_stats *st);

/* The number of workers (1 without threads), and worker i's model (for
 * a caller's reports once finished, or without workers on the thread
 * handing records in; NULL past the last). */
PR_API size_t pr_session_nr_workers(const struct pr_session *s);
PR_API struct pr_model *pr_session_model(const struct pr_session *s, size_t i);

#ifdef __cplusplus
}
#endif

#endif /* PRSESSION_H */
