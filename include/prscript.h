/* SPDX-License-Identifier: Apache-2.0 */
/*
 * prscript.h - samples written as `perf script` (perf 6.1) prints them:
 * its default fields or the subset -F names, line for line, with the
 * functions inlined at each frame and source lines when asked.  Unlike a
 * profile (prprofile.h), nothing is aggregated: each sample is written
 * when it is given, and an off-CPU sample when its wait ends (event
 * "offcpu-time", as perf names its own, the wait's length as the period
 * and its end as the time), so that the text is in time order.  Where
 * the time went is counted per
 * process as a profile counts it.  The conventions written at the top of
 * perfreader.h hold.
 */
#ifndef PRSCRIPT_H
#define PRSCRIPT_H

#include <stdio.h>

#include "prcommon.h"
#include "prprofile.h"
#include "prrecord.h"
#include "prsym.h"
#include "prunwind.h"
#include "prtrace.h"

#ifdef __cplusplus
extern "C" {
#endif

struct pr_script;

/* The fields of perf script's -F, as bits of pr_script_opts.fields. */
enum pr_script_field {
	PR_SCRIPT_COMM = 1 << 0,
	PR_SCRIPT_PID = 1 << 1,
	PR_SCRIPT_TID = 1 << 2,
	PR_SCRIPT_CPU = 1 << 3,
	PR_SCRIPT_TIME = 1 << 4,
	PR_SCRIPT_PERIOD = 1 << 5,
	PR_SCRIPT_EVENT = 1 << 6,
	PR_SCRIPT_IP = 1 << 7,
	PR_SCRIPT_SYM = 1 << 8,
	PR_SCRIPT_SYMOFF = 1 << 9,
	PR_SCRIPT_DSO = 1 << 10,
	PR_SCRIPT_SRCLINE = 1 << 11,
};

/* perf script's default for samples with a call chain. */
#define PR_SCRIPT_DEFAULT                                                          \
	(PR_SCRIPT_COMM | PR_SCRIPT_TID | PR_SCRIPT_CPU | PR_SCRIPT_TIME |         \
	 PR_SCRIPT_PERIOD | PR_SCRIPT_EVENT | PR_SCRIPT_IP | PR_SCRIPT_SYM |       \
	 PR_SCRIPT_SYMOFF | PR_SCRIPT_DSO)

/* The event name perf gives its off-CPU samples, which off-CPU samples
 * are printed with. */
#define PR_SCRIPT_OFFCPU_EVENT "offcpu-time"

/*
 * A -F list ("comm,tid,time,ip,sym,dso": the names of pr_script_field
 * without PR_SCRIPT_, in lowercase) as bits into *fields.  symoff without
 * sym is dropped, as perf drops it.  Returns 0, or -EINVAL for NULL or a
 * name not known: *fields is then unchanged, *bad (when not NULL) points
 * at the name in `list` and *bad_len (when not NULL) is its length.
 * Thread-safe.
 */
PR_API int pr_script_fields_parse(const char *list, uint32_t *fields, const char **bad,
				  size_t *bad_len);

struct pr_script_opts {
	size_t sz;
	/* What each sample shows: PR_SCRIPT_* bits (pr_script_fields_parse());
	 * 0: PR_SCRIPT_DEFAULT. */
	uint32_t fields;
	/* One line per frame, without lines for the functions inlined there
	 * (perf script --no-inline). */
	bool no_inline;
	/* Event names right-aligned to this many columns, as perf script
	 * aligns them: the longest name printed ("offcpu-time" among them
	 * when off-CPU samples are).  0: not padded. */
	int event_width;
	/* What a CPU sample stands for in the times (pr_script_times()), as
	 * pr_profile_opts says: its period when period_is_ns and it has one,
	 * else 1e9/freq ns (0 without a frequency). */
	uint64_t freq;
	bool period_is_ns;
	/* Off-CPU samples whose wait was shorter than this (ns) are not
	 * printed (counted in pr_profile_times.waits_short). */
	uint64_t off_cpu_min_ns;
	/* Name frames from the sample's call chain (PR_FRAME_CHAIN) with
	 * "_[fp]" after the function, as pr_profile_write_opts.annotate
	 * marks them.  Frames joined from an earlier stack (PR_FRAME_JOINED)
	 * are named with "_[joined]" after it always: perf shows no such
	 * frames. */
	bool annotate;
	/* The formats of the tracepoints sampled (prtrace.h; may be NULL):
	 * a tracepoint sample's fields follow its event, as perf script
	 * prints them, and with the default fields its period does not
	 * show, as in perf's.  Must outlive the writer. */
	const struct pr_tp_formats *tp_formats;
};

/*
 * A writer of perf script's text to `out`, owned by the caller
 * (pr_script_free()).  `out` stays the caller's and must outlive the
 * writer; the writer uses stdio's unlocked calls on it, so no other thread
 * may use `out` while a call on the writer runs.  `opts` may be NULL.
 * NULL with errno set on failure (EINVAL: `out` NULL, unknown fields or
 * options; ENOMEM).
 */
PR_API struct pr_script *pr_script_new(FILE *out, const struct pr_script_opts *opts);
/* Off-CPU samples still held (their waits never ended: call
 * pr_script_end() first to print them) are dropped unprinted.  `out` is
 * neither flushed nor closed.  Accepts NULL. */
PR_API void pr_script_free(struct pr_script *s);

/*
 * One CPU sample: its header (the fields asked for, `event` in the event
 * field, empty when NULL), its unwound `stack` (from pr_unwinder_unwind()
 * for `rec`) a frame a line, each named through `sym` (may be NULL:
 * frames are then unnamed addresses), then a blank line; rec->tid's
 * thread is called `comm` (NULL: ":TID", as perf prints it) in process
 * rec->pid called `process` (NULL when unknown; named in the times).
 * Counted in the times when written.  Returns 0, -ENOMEM, or the negative
 * errno of the write that failed (pr_script_error()).  Not thread-safe.
 */
PR_API int pr_script_sample(struct pr_script *s, struct pr_symbolizer *sym,
			    const struct pr_record *rec, const struct pr_stack *stack,
			    const char *comm, const char *process, const char *event);

/*
 * Off-CPU time: a switch-out sample (an event built as
 * PR_SOURCE_CONTEXT_SWITCH) with pr_script_switch(), with the same
 * arguments as pr_script_sample() but the event; every other record, in
 * time order, with pr_script_apply(): switches and exits end waits
 * (prmodel.h: pr_switches); and the end of the run at `time` (event
 * clock, ns) with pr_script_end(), which ends the waits still open.  A
 * switch-out sample's frames are named at once, while `sym` still knows
 * the process as it was, and held (one per thread off the CPU); the
 * sample is printed when its wait ends, with PR_SCRIPT_OFFCPU_EVENT as
 * its event, the wait's length (ns) as its period and its end as its
 * time, unless shorter than off_cpu_min_ns: a sample's time ends the
 * span its period covers, as a CPU sample's does, and the text stays in
 * the order of the records given, with nothing held but the one sample
 * per thread off the CPU.  Samples of the idle task
 * (tid 0) are ignored.  Each returns 0, -ENOMEM, or the negative errno
 * of the write that failed; pr_script_switch() also -EINVAL (no tid or
 * time in the record).  Not thread-safe.
 */
PR_API int pr_script_switch(struct pr_script *s, struct pr_symbolizer *sym,
			    const struct pr_record *rec, const struct pr_stack *stack,
			    const char *comm, const char *process);
PR_API int pr_script_apply(struct pr_script *s, const struct pr_record *rec);
PR_API int pr_script_end(struct pr_script *s, uint64_t time);

/*
 * Where the time went so far, as pr_profile_times() says for a profile:
 * of process `pid`, or of everything for pid 0, into `t` (set t->sz
 * first).  CPU samples and waits are counted as they are written; a
 * wait without its switch-out sample is counted lost.  Returns 0 or
 * -EINVAL.  Not thread-safe.
 */
PR_API int pr_script_times(const struct pr_script *s, uint32_t pid, struct pr_profile_times *t);

/* The processes seen, most time (on and off the CPU) first: up to `max`
 * pids into `pids`.  Returns how many there are (0 for NULL, or out of
 * memory).  NULL `pids` with `max` 0 asks.  Not thread-safe. */
PR_API size_t pr_script_pids(const struct pr_script *s, uint32_t *pids, size_t max);

/* The name the first sample of process `pid` gave it (a switch-out
 * sample's when the wait began), or NULL when none did.  Valid as long
 * as the writer.  Not thread-safe. */
PR_API const char *pr_script_process(const struct pr_script *s, uint32_t pid);

/*
 * 0, or the negative errno of the first write to `out` that failed
 * (-EPIPE: the reader went away; -EIO when stdio kept no errno).  Every
 * call above notes a failure as it happens; a caller that also writes to
 * `out` (or flushes it) asks right after, and gets stdio's error flag
 * with the errno of that moment.  -EINVAL for NULL.  Not thread-safe.
 */
PR_API int pr_script_error(struct pr_script *s);

#ifdef __cplusplus
}
#endif

#endif /* PRSCRIPT_H */
