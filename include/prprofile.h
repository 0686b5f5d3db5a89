/* SPDX-License-Identifier: Apache-2.0 */
/*
 * prprofile.h: a profile in memory, and the files people open it in.
 *
 * Samples, once unwound (prunwind.h) and named (prsym.h), are added to a
 * profile, which keeps each distinct stack of each thread once with its
 * count: memory grows with the number of distinct stacks, not with the
 * number of samples.  The profile is then written as folded stacks
 * (flamegraph.pl, inferno, speedscope), pprof (go tool pprof), speedscope
 * JSON, or an interactive SVG flame graph.  The conventions written at the
 * top of perfreader.h hold.
 */
#ifndef PRPROFILE_H
#define PRPROFILE_H

#include <stdio.h>

#include "prcommon.h"
#include "prmodel.h"
#include "prrecord.h"
#include "prsym.h"
#include "prunwind.h"

#ifdef __cplusplus
extern "C" {
#endif

struct pr_profile;

/* What a profile measures, and so the unit of its values. */
enum pr_profile_mode {
	/* CPU samples: values are sample counts (and CPU time from the
	 * samples' periods or the frequency). */
	PR_PROFILE_CPU = 0,
	/* Off-CPU time only: each wait weighs its nanoseconds. */
	PR_PROFILE_OFF_CPU,
	/* CPU samples and waits, both in nanoseconds: each thread's total
	 * is its wall-clock time. */
	PR_PROFILE_WALL,
	PR_PROFILE_MODE_MAX,
};

struct pr_profile_opts {
	size_t sz;
	/* The sampling frequency in Hz (each sample stands for 1e9/freq ns
	 * of CPU); 0 when samples are not periodic in time. */
	uint64_t freq;
	pr_log_fn log;
	void *log_ctx;
	/* enum pr_profile_mode; default PR_PROFILE_CPU. */
	uint32_t mode;
	/* A CPU sample's period is the CPU time it stands for, in ns (the
	 * cpu-clock and task-clock events): weigh each by it rather than
	 * by 1e9/freq. */
	bool period_is_ns;
	/* Waits shorter than this (ns) are not counted; pr_profile_times()
	 * says how many there were. */
	uint64_t off_cpu_min_ns;
	/* Keep every sample's time and stack (a few bytes each, not the
	 * stack), so that speedscope's time-order view shows each thread's
	 * run as it happened.  Without it, each distinct stack is listed
	 * once, where it was first seen. */
	bool timeline;
	/* The sampled events' names ("page-faults", "cycles:u"), in
	 * event-index order (pr_profile_add_event()).  pprof then has a
	 * sample type per event, "NAME/count" ("NAME/nanoseconds" for
	 * cpu-clock and task-clock), each sample weighing its period (the
	 * events it stands for); folded, SVG and speedscope show one event
	 * (pr_profile_write_opts.event), weighed so.  Needs the CPU mode.
	 * 0: one CPU event, the output as without events.  Copied. */
	const char *const *events;
	size_t nr_events;
	/* Counters read with each sample (pr_sample read values): the last
	 * nr_counters values, in order, so that a read group's leader (its
	 * first value), whose count the samples' periods already are, can
	 * be left out by naming only the members.  Each gets a pprof sample type "NAME/count" whose value
	 * for a sample is the counter's growth since the previous sample of
	 * the same counter instance (the sample's id and tid, or with
	 * counters_per_cpu the id alone); an instance's first sample counts
	 * its whole value, the counter having started at 0.  Needs events.
	 * Copied. */
	const char *const *counters;
	size_t nr_counters;
	/* System-wide events: one counter per CPU spans tasks. */
	bool counters_per_cpu;
	/* In pprof, a sample's thread is told by its number labels alone,
	 * "pid" and "tid", without the "thread" and "process" name labels:
	 * Grafana Pyroscope makes a series label of every string label of a
	 * sample (a series per thread name) and ignores number labels.  The
	 * other formats keep the names (OTLP's sample attributes stay the
	 * sample's). */
	bool pprof_numeric_thread_labels;
};

/* An empty profile, owned by the caller (pr_profile_free()); NULL with
 * errno set on failure (EINVAL: a NULL or empty event or counter name,
 * counters without events, events in a mode other than CPU). */
PR_API struct pr_profile *pr_profile_new(const struct pr_profile_opts *opts);
/* Accepts NULL. */
PR_API void pr_profile_free(struct pr_profile *p);

/*
 * Count one sample: its unwound `stack` (from pr_unwinder_unwind() for
 * `rec`), each frame named through `sym` (which may be NULL: frames are
 * then only addresses), of thread rec->tid called `comm` in process
 * rec->pid called `process` (either may be NULL when unknown).  What the
 * profile keeps is its own copy.  A file's address is named once; JIT
 * code (anonymous memory) is named per process and asked of `sym` every
 * time, so that a name its perf map gains later reaches the profile.
 * Returns 0 or -ENOMEM (the sample is not counted).  Not thread-safe.
 */
PR_API int pr_profile_add(struct pr_profile *p, struct pr_symbolizer *sym,
			  const struct pr_record *rec, const struct pr_stack *stack,
			  const char *comm, const char *process);

/*
 * pr_profile_add() for a sample of event `event`, an index into
 * pr_profile_opts.events (pr_profile_add() is event 0).  A stack is kept
 * per event: the same frames sampled by two events are two stacks.
 * Returns 0, -EINVAL (`event` past the events; any but 0 without them)
 * or -ENOMEM.  Not thread-safe.
 */
PR_API int pr_profile_add_event(struct pr_profile *p, size_t event, struct pr_symbolizer *sym,
				const struct pr_record *rec, const struct pr_stack *stack,
				const char *comm, const char *process);

/*
 * The index of the event called `name` in pr_profile_opts.events, or of
 * the one event that, without its ":u", ":k" or ":uk" modifier, is called
 * so ("page-faults" finds "page-faults:u" when no other "page-faults"
 * is there).  -ENOENT when none is, or several are.  Thread-safe.
 */
PR_API int pr_profile_event_by_name(const struct pr_profile *p, const char *name);

/*
 * Off-CPU time: give the profile a switch-out sample (an event built as
 * PR_SOURCE_CONTEXT_SWITCH) with pr_profile_add_switch(), with the same
 * arguments as pr_profile_add(), and every other record in time order
 * with pr_profile_apply().  The stack is kept, interned, until the wait
 * it begins ends (prmodel.h: pr_switches), then counted with the wait's
 * length.  Its leaf-most frame is a pseudo-frame, "[off-cpu: blocked]" or
 * "[off-cpu: preempted]", so the two kinds of wait stay apart in every
 * format.  At the end of the run, pr_profile_end() ends the waits still
 * open at `time` (event clock, ns).  The profile's mode must be
 * PR_PROFILE_OFF_CPU or PR_PROFILE_WALL (-EINVAL otherwise).  Return 0,
 * -EINVAL or -ENOMEM.  Not thread-safe.  Samples of the idle task (pid
 * 0) are ignored.
 */
PR_API int pr_profile_add_switch(struct pr_profile *p, struct pr_symbolizer *sym,
				 const struct pr_record *rec, const struct pr_stack *stack,
				 const char *comm, const char *process);
PR_API int pr_profile_apply(struct pr_profile *p, const struct pr_record *rec);
PR_API int pr_profile_end(struct pr_profile *p, uint64_t time);

/* Where time went, for one process or all. */
struct pr_profile_times {
	size_t sz;
	uint64_t samples;           /* CPU samples counted */
	uint64_t cpu_ns;            /* their time (0 without a frequency or
				     * period_is_ns); with events, the
				     * periods of the cpu-clock and
				     * task-clock samples */
	uint64_t waits[PR_WAIT_KIND_MAX];     /* waits counted, by kind */
	uint64_t off_cpu_ns[PR_WAIT_KIND_MAX];
	/* Waits not counted: shorter than off_cpu_min_ns, or without a
	 * stack (their switch-out sample was lost). */
	uint64_t waits_short, waits_lost;
	/* Of the blocked waits counted, those under way already when
	 * sampling started (struct pr_wait's before_start), and their time,
	 * from the start: part of waits[] and off_cpu_ns[] too. */
	uint64_t waits_before_start, before_start_ns;
};

/*
 * The times of process `pid`, or of everything for pid 0, into `t` (set
 * t->sz first).  All are kept as samples come, so a thread other than the
 * one adding may call it only between additions.  Returns 0 or -EINVAL.
 */
PR_API int pr_profile_times(const struct pr_profile *p, uint32_t pid,
			    struct pr_profile_times *t);

/* The processes in the profile, most time first (with events, most
 * samples): up to `max` pids into `pids`.  Returns how many there are.
 * NULL `pids` with `max` 0 asks. */
PR_API size_t pr_profile_pids(const struct pr_profile *p, uint32_t *pids, size_t max);

/* The name process `pid` had when it was last sampled, or NULL when the
 * profile has none of its samples.  Valid as long as the profile. */
PR_API const char *pr_profile_process(const struct pr_profile *p, uint32_t pid);

/* A label the whole profile carries (pprof writes it on every sample).
 * Returns 0, -EINVAL or -ENOMEM. */
PR_API int pr_profile_tag(struct pr_profile *p, const char *key, const char *value);

/*
 * A label on every sample of process `pid` (pprof: after the thread's
 * pid, tid, thread and process labels; OTLP: a sample attribute), such as
 * the container it ran in.  May be called before or after the process's
 * samples; the same key again replaces the value.  Returns 0, -EINVAL or
 * -ENOMEM.  Not thread-safe.
 */
PR_API int pr_profile_process_tag(struct pr_profile *p, uint32_t pid, const char *key,
				  const char *value);

/*
 * Cut the profile at `time` (event clock, ns), for a profile taken in
 * windows: returns a new profile holding everything `p` counted so far,
 * and leaves `p` empty of it, its tables made anew so that memory does not
 * grow window after window, counting on.  A wait still open at `time` is
 * cut in two: its part so far counted in the returned profile (when the
 * wait has already lasted off_cpu_min_ns; else it stays whole and counts
 * where it ends), the rest in `p` when it ends, with the same stack.
 * What spans windows stays in `p`: open waits, the counters' last reads
 * (so that a counter's growths over the windows add up to its total), the
 * options and the profile-wide tags, which the returned profile has too.
 * The process tags go with the returned profile; its time is unset (the
 * caller sets it).  NULL with
 * errno ENOMEM (`p` unchanged) or EINVAL.  Not thread-safe.
 */
PR_API struct pr_profile *pr_profile_cut(struct pr_profile *p, uint64_t time);

/*
 * Add everything `src` counted to `dst`: its stacks with their counts and
 * times, its timelines and process tags, renumbered into dst's tables.
 * For profiles made with the same options (pr_profile_opts) over
 * disjoint sets of threads, such as the shares of parallel workers: a
 * thread both counted keeps two timelines, dst's then src's.  Call it
 * after pr_profile_end() on `src` (waits still open are not moved).
 * `src` is not changed.  Returns 0, -EINVAL (NULL, the same profile, or
 * other modes or events) or -ENOMEM (dst then holds part of src).  Not
 * thread-safe on `dst`; thread-safe against other readers of `src`.
 */
PR_API int pr_profile_merge(struct pr_profile *dst, const struct pr_profile *src);

/*
 * A new profile holding only the samples and waits of processes `pids`
 * (`nr` of them, in any order), with only the mappings, functions and
 * strings they use, their process tags, the profile's options, tags and
 * time; pr_profile_times() of it is theirs.  `p` is not changed.  NULL with
 * errno (EINVAL, ENOMEM).  Thread-safe against other readers of `p`.
 */
PR_API struct pr_profile *pr_profile_select(const struct pr_profile *p, const uint32_t *pids,
					    size_t nr);

/* When the profile was taken: its start (ns since the Unix epoch) and how
 * long it ran (ns).  Returns 0 or -EINVAL. */
PR_API int pr_profile_set_time(struct pr_profile *p, uint64_t start_ns, uint64_t duration_ns);

/* Samples counted, and distinct (thread, stack) pairs kept; 0 for NULL. */
PR_API uint64_t pr_profile_samples(const struct pr_profile *p);
PR_API size_t pr_profile_nr_stacks(const struct pr_profile *p);

/*
 * In an off-CPU or wall-clock profile (pr_profile_opts.mode) every format
 * counts nanoseconds, and a wait's stack ends in its pseudo-frame.  pprof
 * has the sample types samples/count and off_cpu/nanoseconds (off-CPU) or
 * samples/count, cpu/, off_cpu/ and wall/nanoseconds (wall-clock, "wall"
 * the default), and a "wait" label (blocked, preempted) on each wait;
 * the SVG draws frames mostly off the CPU blue; speedscope lists each
 * thread's samples as they came when the profile kept its timeline.
 *
 * A profile with events (pr_profile_opts.events) has, in pprof, a sample
 * type per event, "NAME/count" or "NAME/nanoseconds", the first the
 * default, then one per counter, "NAME/count": a stack's sample has its
 * periods in its event's column, 0 in the other events', and its counter
 * growths.  Folded, SVG and speedscope show the stacks of one event
 * (pr_profile_write_opts.event) weighed by their periods; the SVG says
 * which ("12 page-faults", "1.20 ms task-clock").
 */
enum pr_profile_format {
	PR_FORMAT_FOLDED = 0,     /* "comm;root;...;leaf COUNT" lines */
	PR_FORMAT_PPROF,          /* gzipped profile.proto */
	PR_FORMAT_SPEEDSCOPE,     /* speedscope's JSON, a profile per thread */
	PR_FORMAT_SVG,            /* an interactive flame graph */
	PR_FORMAT_MAX,
};

/* The format's name ("folded", "pprof", "speedscope", "svg") and the file
 * extension it is written with (".folded", ".pb.gz", ".speedscope.json",
 * ".svg"); NULL past the last.  Static strings.  Thread-safe. */
PR_API const char *pr_profile_format_name(enum pr_profile_format f);
PR_API const char *pr_profile_format_ext(enum pr_profile_format f);
/* The format called `name`, or the one whose extension ends `path`;
 * -EINVAL when none does. */
PR_API int pr_profile_format_by_name(const char *name);
PR_API int pr_profile_format_by_path(const char *path);

/*
 * A part of a profile, one kind of time, that a pprof can hold alone
 * (pr_profile_write_opts.part): what Grafana Pyroscope files under a
 * profile type of its own.  Each part's period type is its own time.
 */
enum pr_profile_part {
	/* The whole profile, every sample type. */
	PR_PART_ALL = 0,
	/* The CPU samples: samples/count and cpu/nanoseconds (or, with
	 * events, every event's and counter's type), period cpu/nanoseconds
	 * (or the first event's).  Pyroscope's process_cpu. */
	PR_PART_ON_CPU,
	/* The waits: samples/count (how many waits) and off_cpu/nanoseconds,
	 * period off_cpu/nanoseconds.  Pyroscope's off_cpu. */
	PR_PART_OFF_CPU,
	/* Every stack, CPU samples and waits: wall/nanoseconds alone, period
	 * wall/nanoseconds.  Pyroscope's wall. */
	PR_PART_WALL,
	PR_PART_MAX,
};

/* Whether profile `p` has part `part`: PR_PART_ALL always; PR_PART_ON_CPU
 * in the CPU and wall-clock modes, PR_PART_OFF_CPU in the off-CPU and
 * wall-clock modes, PR_PART_WALL in the wall-clock mode (a part can have
 * no samples in it).  false for NULL or an unknown part.  Thread-safe. */
PR_API bool pr_profile_has_part(const struct pr_profile *p, enum pr_profile_part part);

struct pr_profile_write_opts {
	size_t sz;
	/* Folded, SVG: a root frame per thread ("comm-PID/TID") under the
	 * process, instead of one per process name. */
	bool per_thread;
	/* Folded, SVG: mark kernel frames "_[k]", inlined ones "_[i]" and JIT
	 * code "_[j]", as flamegraph.pl's stackcollapse-perf.pl --all does,
	 * and frames joined from an earlier stack "_[joined]".  Folded, SVG
	 * and speedscope: frames from the sample's frame-pointer call chain
	 * (PR_FRAME_CHAIN) "_[fp]", after any other mark.  (speedscope
	 * marks joined frames always.) */
	bool annotate;
	/* SVG: the title; speedscope: the profile's name.  NULL: "dwarfsample". */
	const char *title;
	/* Folded, SVG, speedscope of a profile with events: the event shown
	 * (an index into pr_profile_opts.events, pr_profile_event_by_name()),
	 * its stacks weighed by their periods: nanoseconds for cpu-clock and
	 * task-clock, events for the others.  pprof has them all.  Past the
	 * events: -EINVAL. */
	size_t event;
	/* pprof: only this part of the profile (enum pr_profile_part; 0, the
	 * default, is all of it), its stacks and its sample types; the
	 * tables of mappings, functions and locations stay whole.  A part the
	 * profile does not have (pr_profile_has_part()), or a part in another
	 * format: -EINVAL. */
	int part;
};

/*
 * Write the profile to `out` in format `fmt`.  Returns 0, -EINVAL for an
 * unknown format, -ENOMEM, or the negative errno of the write that failed
 * (-ENOSPC, -EPIPE...; -EIO when stdio did not say).
 * The profile is not changed; it can be written again, in another format.
 */
PR_API int pr_profile_write(const struct pr_profile *p, enum pr_profile_format fmt,
			    FILE *out, const struct pr_profile_write_opts *opts);

/*
 * The OpenTelemetry profiles signal: an attribute of the resource the
 * profiles describe (service.name, host.name, process.pid ...): a string,
 * or with `str` NULL the integer `num`.
 */
struct pr_attr {
	const char *key;
	const char *str;
	int64_t num;
};

struct pr_otlp_opts {
	size_t sz;
	/* The resource's attributes (may be NULL with 0).  Copied while
	 * writing; not kept. */
	const struct pr_attr *resource;
	size_t nr_resource;
	/* The instrumentation scope: NULL for "dwarfsample", and no
	 * version. */
	const char *scope_name;
	const char *scope_version;
	/* gzip it, as an HTTP exporter sends it (Content-Encoding: gzip). */
	bool gzip;
};

/*
 * Write the profile as an OTLP ExportProfilesServiceRequest (the
 * OpenTelemetry profiles signal as opentelemetry-proto v1.11.0 defines it,
 * profiles/v1development), protobuf (gzipped with opts->gzip): one
 * ResourceProfiles with `opts`' attributes, one
 * ScopeProfiles, and one Profile per value type the pprof writer writes
 * (samples/count and cpu/nanoseconds for CPU time; off_cpu and wall for
 * off-CPU and wall-clock time; one per event and counter), the one pprof
 * shows by default first, all sharing one ProfilesDictionary: mappings
 * (build-ids as process.executable.build_id.gnu), functions, locations
 * with their inlined functions (innermost first), stacks, and on every
 * sample the attributes process.pid, thread.id, thread.name,
 * process.executable.name, the process's tags (pr_profile_process_tag()),
 * the profile's tags and, for a wait, dwarfsample.off_cpu.wait.  `opts`
 * may be NULL.  Returns 0, -EINVAL, -ENOMEM, or the negative errno of the
 * write that failed (-EIO when stdio did not say).  Thread-safe against
 * other readers of `p`.
 */
PR_API int pr_profile_write_otlp(const struct pr_profile *p, FILE *out,
				 const struct pr_otlp_opts *opts);

#ifdef __cplusplus
}
#endif

#endif /* PRPROFILE_H */
