/* SPDX-License-Identifier: Apache-2.0 */
/*
 * proutput.h - an output file: a profile (prprofile.h) counted in memory
 * and written at the end, or perf script's text (prscript.h) written
 * sample by sample, behind one object, so that a program writes whichever
 * format was asked for without caring which it is.  The output's format
 * is chosen by name or by the file's extension; its file is opened first,
 * so that a path that cannot be written is said before anything is
 * sampled, and a profile is written whole at the end, under a temporary
 * name renamed over the path: a run that fails, or is killed, leaves what
 * the path held before.  The output also counts off-CPU waits, says where
 * time went, and is a session's sink (prsession.h), one share per worker.
 * The conventions written at the top of perfreader.h hold.
 */
#ifndef PROUTPUT_H
#define PROUTPUT_H

#include <stdio.h>

#include "prcommon.h"
#include "prprofile.h"
#include "prscript.h"
#include "prsession.h"

#ifdef __cplusplus
extern "C" {
#endif

struct pr_output;

/*
 * The formats of an output: a profile's (enum pr_profile_format), and
 * perf script's text after them.  A format is an int holding either.
 */
#define PR_OUTPUT_PERF_SCRIPT PR_FORMAT_MAX
#define PR_OUTPUT_FORMAT_MAX (PR_FORMAT_MAX + 1)

/*
 * Format `fmt`'s name ("svg", ..., "perf-script"), the extension a file
 * of it is given (".svg", ..., ".perf.txt") and what opens such a file,
 * for a person ("go tool pprof -http=: FILE (or -top, -traces)"); NULL
 * past the last.  Static strings.  Thread-safe.
 */
PR_API const char *pr_output_format_name(int fmt);
PR_API const char *pr_output_format_ext(int fmt);
PR_API const char *pr_output_format_hint(int fmt);

/*
 * The format called `name` ("perf-script", or a profile format's name,
 * pr_profile_format_by_name()), or the one whose extension ends `path`
 * (".txt", ".perf" and ".script" for perf script's text, else
 * pr_profile_format_by_path()).  -EINVAL when none is.  Thread-safe.
 */
PR_API int pr_output_format_by_name(const char *name);
PR_API int pr_output_format_by_path(const char *path);

/*
 * Whether format `fmt` shows source lines: folded and SVG never do,
 * perf script's text when `fields` (PR_SCRIPT_*; 0: PR_SCRIPT_DEFAULT)
 * has PR_SCRIPT_SRCLINE, the other profile formats always.  A symbolizer
 * for an output that does not need not read line tables
 * (pr_symbolizer_opts.no_lines).  Thread-safe.
 */
PR_API bool pr_output_shows_lines(int fmt, uint32_t fields);

/*
 * What an output counts and how it writes it.  The strings and arrays
 * pointed to are not copied: they must stay valid as long as the output
 * (the session's shares are made from them while it runs).
 */
struct pr_output_opts {
	size_t sz;
	pr_log_fn log;
	void *log_ctx;

	/* What the samples measure, as pr_profile_opts says: the sampling
	 * frequency (0: not periodic in time), the mode (enum
	 * pr_profile_mode: CPU, off-CPU or wall time), CPU samples' periods
	 * in ns, the shortest wait counted.  Both kinds of output. */
	uint64_t freq;
	uint32_t mode;
	bool period_is_ns;
	uint64_t off_cpu_min_ns;
	/* Profiles, in the CPU mode: the sampled events' names and the
	 * counters read with each sample, as pr_profile_opts has them.
	 * perf script's text names a sample by its event's name here. */
	const char *const *events;
	size_t nr_events;
	const char *const *counters;
	size_t nr_counters;
	bool counters_per_cpu;
	/* Profiles: labels for the whole profile, "KEY=VALUE" each, the key
	 * not empty and shorter than 256 bytes (pr_profile_tag()). */
	const char *const *tags;
	size_t nr_tags;
	/* Profiles: how they are written (pr_profile_write_opts): a root
	 * per thread, kernel, inlined, JIT, joined and call-chain frames
	 * marked (perf script's text too: pr_script_opts.annotate), the title
	 * (NULL: "dwarfsample"), and the event folded, SVG and speedscope
	 * show (an index into `events`). */
	bool per_thread;
	bool annotate;
	const char *title;
	size_t show_event;

	/* perf script's text (pr_script_opts): the fields (0:
	 * PR_SCRIPT_DEFAULT), no lines for inlined functions. */
	uint32_t fields;
	bool no_inline;
	/* perf script's text: a sample's event is named by
	 * event_names[its index] when that is not NULL, else by
	 * events[its index], else by `event_name` (NULL: empty).  Event
	 * names are right-aligned to event_width columns, or to the longest
	 * of `events` (and "offcpu-time" outside the CPU mode) when that is
	 * wider. */
	const char *event_name;
	const char *const *event_names;
	size_t nr_event_names;
	int event_width;
	/* perf script's text: with `filter_event`, only the CPU samples of
	 * event `only_event` (an index, as pr_sink_sample.event) are
	 * written; a profile holds every event and shows one (show_event). */
	bool filter_event;
	size_t only_event;

	/* Where time went, noted after each switch record, sample and the
	 * end, for pr_output_published() on another thread (a status
	 * line). */
	bool publish_times;
	/* perf script's text: the tracepoints' formats, which print their
	 * samples' fields (pr_script_opts.tp_formats; may be NULL). */
	const struct pr_tp_formats *tp_formats;
};

/*
 * An output of format `fmt` to `path` (NULL: standard output, written
 * in place), owned by the caller (pr_output_close()).  A regular file, or
 * a path where none is yet, is written under a temporary name beside it
 * (.NAME.dwarfsample-PID.XXXXXX, locked while its writer lives, made as
 * fopen() would make PATH) and renamed over `path` when closed; such
 * files of `path` that writers killed outright left are removed first.
 * Anything else (/dev/null, a fifo) is written in place.
 * A symbolic link is written through: the file it ends at
 * (pr_output_target()) is the one written so, the link left a link;
 * links that loop fail with ELOOP.
 * Everything that can be wrong is said now, to the log: the output path
 * that cannot be written, no memory.  NULL with errno set on failure
 * (EINVAL: `fmt`, `opts`, show_event past the events, a tag without
 * "="; ENOMEM; the file's open errno).
 */
PR_API struct pr_output *pr_output_open(const char *path, int fmt,
					const struct pr_output_opts *opts);

/*
 * The file a write to `path` lands in, into `buf` (`len` bytes): `path`
 * itself, or, when it is a symbolic link, the file at the end of its
 * links, followed as open() follows them (a relative target is taken
 * from its link's directory) -- whether that file exists or not: a
 * dangling link names the file to make, as it does for cp and the
 * shell's ">".  Replacing that file, rather than `path`, keeps the link a
 * link.  Returns 0, -ELOOP (links that loop, or more than 40 of them),
 * -ENAMETOOLONG (it does not fit), -EINVAL (NULL), or lstat()'s or
 * readlink()'s negative errno (EACCES, ENOTDIR...; not ENOENT).
 * Thread-safe.
 */
PR_API int pr_output_target(const char *path, char *buf, size_t len);

/*
 * Write what is held -- the profile, stamped with its start (`start_ns`
 * since the Unix epoch, 0: unknown) and `duration_ns` -- flush, rename
 * the temporary file over the path, close and free.  Returns 0, or the
 * negative errno of the write that failed (-EPIPE: the reader of
 * standard output went away), said to the log as "writing PATH failed"
 * (the temporary file is then removed, the path left as it was).
 * Accepts NULL (0).
 */
PR_API int pr_output_close(struct pr_output *o, uint64_t start_ns, uint64_t duration_ns);
/* Close without writing the profile, removing the temporary file: the
 * run failed before anything was sampled.  What perf script's text
 * already wrote is flushed; a failure to is said and returned as
 * pr_output_close() does.  Accepts NULL (0). */
PR_API int pr_output_discard(struct pr_output *o);

/*
 * One unwound sample, as a session hands it to a sink: counted in the
 * profile under its event (s->event, an index into opts.events), or
 * written as perf script's text.  An off-CPU switch-out sample
 * (s->off_cpu) begins a wait, counted or printed when it ends
 * (pr_profile_add_switch(), pr_script_switch()).  Returns 0, -ENOMEM
 * (that sample is lost), -EINVAL, or for perf script's text the negative
 * errno of the write that failed.  Not thread-safe.
 */
PR_API int pr_output_sample(struct pr_output *o, const struct pr_sink_sample *s);

/*
 * Off-CPU (opts.mode not PR_PROFILE_CPU): every record that is not a
 * sample, in time order (switches and exits end waits); and the end of
 * the run at `time` (event clock, ns), which ends the waits still open.
 * In the CPU mode they do nothing.  0 or a negative errno, as
 * pr_output_sample().  Not thread-safe.
 */
PR_API int pr_output_apply(struct pr_output *o, const struct pr_record *rec);
PR_API int pr_output_end(struct pr_output *o, uint64_t time);

/*
 * The output as a session's sink, into `sink`: its ctx is `o`; with
 * several workers each gets a share (a profile like o's, written
 * nowhere) merged into `o` when the session finishes.  perf script's
 * text is written in time order and takes one worker: its sink has no
 * part_new.  `o` must outlive the session.  0 or -EINVAL.
 */
PR_API int pr_output_sink(struct pr_output *o, struct pr_sink *sink);

/*
 * Where time went so far -- of process `pid`, or of everything for pid
 * 0 -- into `t` (set t->sz), as pr_profile_times() says.  0 or -EINVAL.
 * With a session's shares, `o`'s own once they were merged.  Not
 * thread-safe.
 */
PR_API int pr_output_times(const struct pr_output *o, uint32_t pid, struct pr_profile_times *t);
/* The processes seen, most time first: up to `max` pids into `pids`;
 * returns how many there are (pr_profile_pids(), pr_script_pids()).  Not
 * thread-safe. */
PR_API size_t pr_output_pids(const struct pr_output *o, uint32_t *pids, size_t max);
/* Process `pid`'s name, or NULL; valid as long as the output.  Not
 * thread-safe. */
PR_API const char *pr_output_process(const struct pr_output *o, uint32_t pid);

/*
 * Where time went, as `o` and its session's shares last noted it
 * (opts.publish_times): t->cpu_ns and t->off_cpu_ns, the rest 0.  Set
 * t->sz.  Thread-safe against the session's workers: for the thread
 * that feeds the session.  0 or -EINVAL.
 */
PR_API int pr_output_published(const struct pr_output *o, struct pr_profile_times *t);

/* Distinct stacks counted so far (0 for perf script's text, and for
 * NULL). */
PR_API size_t pr_output_nr_stacks(const struct pr_output *o);

/* Whether writing the output has failed already (a reader of standard
 * output that went away, a full disk); pr_output_close() says how.
 * false for NULL. */
PR_API bool pr_output_failed(const struct pr_output *o);

#ifdef __cplusplus
}
#endif

#endif /* PROUTPUT_H */
