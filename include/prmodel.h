/* SPDX-License-Identifier: Apache-2.0 */
/*
 * prmodel.h - the process model: every process's mappings and threads,
 * kept current from the records applied to it.
 */
#ifndef PRMODEL_H
#define PRMODEL_H

#include "prcommon.h"
#include "prrecord.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ------------------------------------------------------------------------
 * The process model: every process's mappings and threads, kept current
 * from MMAP, MMAP2, FORK, EXIT, COMM and SAMPLE records applied in
 * timestamp order (a file's records come in that order; so do synthesized
 * ones, at time 0).  After an exec, the old image's mappings stay behind
 * the new one's, for samples taken inside exec, until a SAMPLE shows the
 * new image running: feed it samples too, each before it is unwound.
 * Mapped files (DSOs) are shared by every process that maps them.
 * Not thread-safe: an unwinder and a symbolizer over the model read it
 * while they work, so they run on the thread that applies records, or
 * between applications.
 */

struct pr_model;
struct pr_dso;

struct pr_cache_opts;

struct pr_model_opts {
	size_t sz;
	/* Directories to find files by build-id in, beside /usr/lib/debug
	 * and perf's ~/.debug, which are searched after them: each is
	 * searched as DIR/.build-id/xx/rest and DIR/xx/rest, and for
	 * separate debug files.  The model finds each file once, for every
	 * unwinder and symbolizer made on it. */
	const char *const *debug_dirs;
	size_t nr_debug_dirs;
	/* Bounds on what the model and its unwinders and symbolizers keep,
	 * as pr_model_set_cache() sets them (see there).  NULL: no limit. */
	const struct pr_cache_opts *cache;
};

/* An empty model, owned by the caller; NULL with errno set on failure
 * (EINVAL for bad options).  `opts` may be NULL for all defaults; its
 * strings are copied.  (Binaries linked against version 2.0 of the
 * library keep its pr_model_new(void), which is this with NULL.) */
PR_API struct pr_model *pr_model_new(const struct pr_model_opts *opts);
/* Free the model and every process and DSO in it.  Accepts NULL. */
PR_API void pr_model_free(struct pr_model *m);

/* Apply one record (samples included); other record types are ignored.
 * Returns 0, -EINVAL or -ENOMEM. */
PR_API int pr_model_apply(struct pr_model *m, const struct pr_record *rec);

/* A thread's name (its COMM, or its creator's), or NULL when the model
 * has not seen the thread; "swapper" for thread 0, the idle task, as perf
 * calls it.  A thread that exited keeps its name for the samples taken
 * after its EXIT record, while it finishes exiting in the kernel (the 64
 * threads that exited last).  Valid until the next pr_model_apply(). */
PR_API const char *pr_model_comm(const struct pr_model *m, uint32_t tid);

/*
 * Tell the model the build-id of the file at `path`, as a perf.data file's
 * BUILD_ID feature records, so it can be found by build-id wherever this
 * machine keeps it.  Applies to mappings of that path seen before and
 * after.  Returns 0, -EINVAL or -ENOMEM.
 */
PR_API int pr_model_set_build_id(struct pr_model *m, const char *path,
				 const uint8_t *id, size_t len);

/* A mapped file's path as the mapping record names it (NULL for a NULL
 * dso), and its build-id through `id` when not NULL (returns the length,
 * 0 when unknown).  A pr_dso (from a pr_frame) and what these return are
 * valid as long as the model. */
/* The GNU build-id note of the ELF file open at `fd`, into `id` (room for
 * `size` bytes; PR_BUILD_ID_MAX is enough): its length, or a negative
 * errno (-ENOENT: the file has none; -ENOSPC: `size` is too small).  The
 * file offset is not used.  Thread-safe. */
PR_API int pr_build_id_read(int fd, uint8_t *id, size_t size);
PR_API const char *pr_dso_path(const struct pr_dso *d);
PR_API size_t pr_dso_build_id(const struct pr_dso *d, const uint8_t **id);

struct pr_file;

/* Tell `m` every build-id `f` records (pr_model_set_build_id()).  Returns
 * 0, -EINVAL or -ENOMEM. */
PR_API int pr_model_use_file(struct pr_model *m, const struct pr_file *f);

/* ------------------------------------------------------------------------
 * Bounding the model's caches, for a user that runs for days (an agent).
 *
 * The unwinders and symbolizers made on a model keep, per mapped file, the
 * file mapped read-only and what they built from it: unwind tables and
 * compiled rules; symbol tables, DWARF indexes, names and lines.  The model
 * keeps every DSO a process ever mapped.  By default all of it stays until
 * the model is freed, which suits a bounded run.  A long-running user sets
 * a budget (pr_model_opts.cache) and calls pr_model_trim() from time to
 * time, at a point where it holds nothing the unwinders and symbolizers
 * handed out (pr_frame's dso, pr_symbol's strings): the agent does it right
 * after cutting a window.
 */

struct pr_cache_opts {
	size_t sz;
	/* Bytes a trim leaves: files mapped (and their debug files) and the
	 * state the unwinders and symbolizers built from them, least
	 * recently sampled first out.  libdw's own allocations behind a
	 * symbolizer's DWARF are not counted: they grow with what is looked
	 * up, and go with the file.  0: no limit. */
	uint64_t max_bytes;
	/* A DSO no process maps any more is forgotten, with all state keyed
	 * by it, once it has been unmapped this long (event clock, ns). */
	uint64_t grace_ns;
	/* The records are of this machine's processes, now (a live reader,
	 * whose events' clock is CLOCK_MONOTONIC): a trim also forgets the
	 * processes that no longer exist, whose EXIT record never reached
	 * the model (lost when a ring overflowed).  One is forgotten once the
	 * trims' time is a second past the moment a trim first found it
	 * gone: a reader behind on a loaded host still has its samples to
	 * apply, and they keep their thread names and mappings. */
	bool check_processes;
	/* A file held this long (event clock, ns, from the trim that first
	 * counted it) is let go at a trim, with all that was built from it,
	 * and read again when next sampled: libdw's state behind a file's
	 * DWARF grows with the addresses looked up in it and is given back
	 * only when the file is closed, so the files a host keeps sampling
	 * (its libc, its interpreters) would grow for as long as it runs.
	 * 0: never. */
	uint64_t max_age_ns;
};

/* Set (or change) the bounds, as pr_model_opts.cache sets them first; NULL
 * opts: no limit, grace 0.  Returns 0 or -EINVAL. */
PR_API int pr_model_set_cache(struct pr_model *m, const struct pr_cache_opts *opts);

/*
 * Bring the caches within the bounds at event time `time` (ns, the clock of
 * the records applied): DSOs unmapped for the grace period are forgotten;
 * the unwinders and symbolizers drop what they keep of processes gone from
 * the model (address spaces, perf maps); then, while over max_bytes, the
 * least recently sampled files are evicted.  An evicted file is found and
 * read again if a later sample needs it.  Every pr_dso, pr_frame and
 * pr_symbol handed out before the call may be invalid after it.  Returns 0,
 * -EINVAL, -ENOMEM with nothing changed, or -EBUSY when a symbolizer made
 * on the model shares a pool (pr_symbolizer_opts.pool): what the others
 * took from it must stay.
 */
PR_API int pr_model_trim(struct pr_model *m, uint64_t time);

/* A frame landed in `d`, one of the model's files: pr_model_trim()
 * evicts the least recently sampled files first, and knows which were
 * sampled only from this (a session says it of every frame when the
 * model has a cache; the unwinder only reads the model).  Accepts NULLs. */
PR_API void pr_model_mark_sampled(struct pr_model *m, const struct pr_dso *d);

struct pr_cache_stats {
	size_t sz;
	uint64_t files;            /* mapped files held (not counting debug files) */
	uint64_t bytes;            /* what they weigh, at the last trim */
	uint64_t dsos;             /* DSOs known */
	uint64_t trims;
	uint64_t files_evicted;    /* by the limit */
	uint64_t bytes_evicted;
	/* Evicted although sampled since the trim before: the limit is
	 * below what the profiled processes use, and files are read again
	 * and again (raise it). */
	uint64_t files_evicted_hot;
	uint64_t dsos_forgotten;   /* unmapped past the grace period */
	uint64_t procs_gone;       /* check_processes: exited without an EXIT */
	/* Files of processes in another mount namespace not found (or not a
	 * regular file) inside their roots: their frames stay unnamed, since
	 * the host's file at the same path is another file. */
	uint64_t files_foreign_missing;
	/* Let go for their age (pr_cache_opts.max_age_ns), to be read anew. */
	uint64_t files_renewed;
	uint64_t procs;            /* processes the model holds */
};

/* Copy the counters; set st->sz first.  Returns 0 or -EINVAL. */
PR_API int pr_model_cache_stats(const struct pr_model *m, struct pr_cache_stats *st);

/* ------------------------------------------------------------------------
 * Off-CPU: when each thread left the CPU and when it came back.
 *
 * Off-CPU profiling samples every switch of a sampled thread out of the
 * CPU (PR_SOURCE_CONTEXT_SWITCH, prreader.h): a sample with the thread's
 * registers and stack as it leaves, and PERF_RECORD_SWITCH (or
 * _SWITCH_CPU_WIDE) records as it leaves and as it comes back.  The
 * tracker pairs them per thread into waits: from the switch out (the
 * switch record's time; the sample's, a little earlier, when the record
 * was lost) to the next switch in, its exit, or the end of the run.
 * The kernel marks a switch out of a task that was still runnable
 * (PERF_RECORD_MISC_SWITCH_OUT_PREEMPT): that wait is "preempted", a
 * wait in the run queue; any other is "blocked" (I/O, a lock, a sleep).
 *
 * Feed it every record in time order, as the model.  Each wait is handed
 * to the callback exactly once, whatever ends it, with the cookie its
 * switch-out sample was given (what the caller keeps for it: a stack);
 * none is dropped here, so a caller that holds something per cookie can
 * always release it.  Not thread-safe.
 */

enum pr_wait_kind {
	PR_WAIT_BLOCKED = 0,     /* asleep: I/O, a lock, a timer, a pipe */
	PR_WAIT_PREEMPTED = 1,   /* runnable, waiting for a CPU */
	PR_WAIT_KIND_MAX,
};

/* What ended a wait. */
enum pr_wait_end {
	PR_WAIT_SWITCHED_IN = 0, /* the thread ran again */
	PR_WAIT_EXITED,          /* it exited first (its EXIT record) */
	PR_WAIT_RUN_ENDED,       /* the run ended first (pr_switches_end()) */
	/* The thread left the CPU again before its switch in was seen (a
	 * record lost): the wait ends at that next switch out. */
	PR_WAIT_SUPERSEDED,
	/* Not ended: cut in two (pr_switches_split()); it goes on. */
	PR_WAIT_CUT,
	PR_WAIT_END_MAX,
};

struct pr_wait {
	uint32_t pid, tid;
	/* Event clock, ns: switched out, and what ended the wait. */
	uint64_t start, end;
	uint8_t kind;            /* enum pr_wait_kind */
	uint8_t how;             /* enum pr_wait_end */
	/* A switch-out sample began the wait (pr_switches_sample()): `cookie`
	 * is what it was given.  False when only the switch record was seen
	 * (the sample was lost): the wait has no stack. */
	bool has_sample;
	/* Its thread was off the CPU already when sampling started: the
	 * switch out (PR_RECORD_MISC_SWITCH_BEFORE_START) is when sampling
	 * started, not when the wait began. */
	bool before_start;
	uint64_t cookie;
};

/* Receives one ended wait, valid until it returns; a negative return
 * stops and is returned by the call that ended the wait. */
typedef int (*pr_wait_fn)(const struct pr_wait *w, void *ctx);

struct pr_switches;

/* An empty tracker, owned by the caller (pr_switches_free()); NULL with
 * errno set on failure. */
PR_API struct pr_switches *pr_switches_new(void);
/* Accepts NULL; waits still open are dropped without a callback (call
 * pr_switches_end() first to have them). */
PR_API void pr_switches_free(struct pr_switches *sw);

/*
 * A switch-out sample of thread rec->tid at rec->time begins a wait that
 * carries `cookie`.  A wait of that thread still open (its switch in was
 * lost) ends here first, through `cb`.  The idle task (tid 0) has no
 * waits: its samples are ignored, and their cookies never come back.  Returns 0, -EINVAL (no tid or
 * time in the record), -ENOMEM, or what `cb` returned.
 */
PR_API int pr_switches_sample(struct pr_switches *sw, const struct pr_record *rec,
			      uint64_t cookie, pr_wait_fn cb, void *ctx);

/*
 * Any other record: a switch out says how the wait began, a switch in or
 * an EXIT ends it (through `cb`); the rest are ignored, as are the idle
 * task's switches (tid 0).  Returns 0, -ENOMEM, or what `cb` returned.
 */
PR_API int pr_switches_apply(struct pr_switches *sw, const struct pr_record *rec,
			     pr_wait_fn cb, void *ctx);

/* End every wait still open at `time` (the end of the run, event clock),
 * through `cb`, in no particular order.  Returns 0 or what `cb` returned
 * (the waits not yet handed out stay open). */
PR_API int pr_switches_end(struct pr_switches *sw, uint64_t time, pr_wait_fn cb, void *ctx);

/*
 * Cut every wait open at `time` that began before it: `cb` gets its part
 * up to `time` (`how` PR_WAIT_CUT, the same cookie), and unless it returns
 * a positive value the wait goes on from `time`, so that a profile cut
 * into windows counts each window's part of it there (a positive return
 * leaves the wait whole).  The cookie stays the caller's.  Returns 0 or
 * the first negative value of `cb`.
 */
PR_API int pr_switches_split(struct pr_switches *sw, uint64_t time, pr_wait_fn cb, void *ctx);

/* Waits now open. */
PR_API size_t pr_switches_open(const struct pr_switches *sw);

/*
 * The container a process runs in, from its cgroup: the layouts of docker
 * (cgroup v1 /docker/ID, v2 docker-ID.scope), containerd
 * (cri-containerd-ID.scope, /kubepods/.../ID), CRI-O (crio-ID.scope) and
 * podman (libpod-ID.scope), and a Kubernetes pod's uid
 * (kubepods-QOS-podUID.slice, /kubepods/QOS/podUID/).  Conmon's scopes
 * (the runtimes' monitors) are not their containers.
 */
struct pr_container {
	char id[65];             /* the container's id (hex), "" when none */
	char pod_uid[37];        /* the pod's uid with dashes, "" when none */
	char runtime[16];        /* "docker", "containerd", "cri-o", "podman",
				  * or "" when the layout does not say */
};

/* From the text of a /proc/PID/cgroup file (NUL-terminated): 0 with *out
 * set (all "" outside containers), or -EINVAL.  Thread-safe. */
PR_API int pr_container_parse(const char *cgroup_text, struct pr_container *out);
/* From /proc/PID/cgroup: 0, or a negative errno (-ENOENT, -ESRCH: the
 * process is gone).  Thread-safe. */
PR_API int pr_container_of(uint32_t pid, struct pr_container *out);

/* The kind's name ("blocked", "preempted"), or NULL.  Thread-safe. */
PR_API const char *pr_wait_kind_name(enum pr_wait_kind kind);

#ifdef __cplusplus
}
#endif

#endif /* PRMODEL_H */
