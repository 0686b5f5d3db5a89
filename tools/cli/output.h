/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Where named stacks go, for the live command and for `report` alike:
 * perf script's text, printed as each sample comes, or a profile
 * (folded, pprof, speedscope, SVG) counted in memory and written at the
 * end.
 */
#ifndef DS_OUTPUT_H
#define DS_OUTPUT_H

#include <getopt.h>
#include <stdbool.h>
#include <stdio.h>

#include "perfreader.h"
#include "prprofile.h"
#include "prscript.h"
#include "prsym.h"
#include "prunwind.h"

/* The formats: the profile's, and perf script's text after them. */
#define DS_FORMAT_PERF_SCRIPT PR_FORMAT_MAX
#define DS_MAX_TAGS 64

struct ds_output_opts {
	const char *path;            /* NULL: the caller's default */
	const char *format;          /* NULL: from the path's extension */
	bool per_thread;             /* --tid */
	bool annotate;               /* --annotate */
	const char *tags[DS_MAX_TAGS];  /* "KEY=VALUE" */
	size_t nr_tags;
	uint32_t fields;             /* perf-script: PR_SCRIPT_* (0: perf's default) */
	bool no_inline;              /* perf-script: no inlined lines */
	const char *title;           /* SVG, speedscope; NULL: "dwarfsample" */
	/* Set by the verb from what was (or is being) captured: */
	enum pr_profile_mode mode;   /* CPU, off-CPU or wall time */
	bool period_is_ns;           /* CPU samples' periods are ns (cpu-clock) */
	uint64_t off_cpu_min_ns;     /* --off-cpu-min */
	/* The sampled events' names, numbered as ds_sink_sample_event()
	 * takes them (0: one event, the sink's); the counters read with each
	 * sample (pr_profile_opts.counters); the event folded, SVG and
	 * speedscope show (report --event; NULL: the first).  Profiles only,
	 * in the CPU mode. */
	const char *const *events;
	size_t nr_events;
	const char *const *counters;
	size_t nr_counters;
	bool counters_per_cpu;
	const char *show_event;
};

/* The output options' getopt entries and help text. */
enum { DS_OPT_TID = 3000, DS_OPT_TAG, DS_OPT_ANNOTATE };
#define DS_OUTPUT_SHORTOPTS "o:f:"
extern const struct option ds_output_longopts[];
extern const char ds_output_help[];

/* One of those options: 1 when it was one (0 when `opt` is not an output
 * option), -1 after reporting a bad value. */
int ds_output_option(struct ds_output_opts *o, int opt, const char *arg);

/*
 * Settle the format: -f, else -o's extension, else `fallback`.  An
 * extension no format has is an error when `ext_required` (the live
 * command, whose default is a profile), else the fallback (report, whose
 * default is text).  Returns the format (PR_FORMAT_* or
 * DS_FORMAT_PERF_SCRIPT), or -1 after saying what was wrong.
 */
int ds_output_format(const struct ds_output_opts *o, int fallback, bool ext_required);

/* Whether format `fmt` written with `o` shows source lines: folded and
 * SVG never do, perf-script text with srcline only.  Naming reads no
 * line tables for what does not (pr_symbolizer_opts.no_lines). */
bool ds_output_shows_lines(const struct ds_output_opts *o, int fmt);

/* The name of format `fmt` and how to open a file of it. */
const char *ds_format_name(int fmt);
const char *ds_format_hint(int fmt);

struct ds_sink;

/*
 * A sink writing format `fmt` to `path` (NULL: standard output), opened
 * now so that an unwritable path is reported before anything else is
 * done.  `freq` is the sampling frequency (0: unknown), `event` the
 * event's name for perf script's text, right-aligned to `event_width`
 * (the longest event name; o->events' are measured too).  NULL after
 * reporting why (o->show_event not among o->events, say).
 */
struct ds_sink *ds_sink_open(const struct ds_output_opts *o, int fmt, const char *path,
			     uint64_t freq, const char *event, int event_width);

/*
 * A share of a sink for one of several workers: a profile like the one
 * ds_sink_open() would count into for `o`, `fmt` and `freq`, written
 * nowhere.  Not for perf script's text, which is written sample by
 * sample in time order.  NULL after reporting why.
 */
struct ds_sink *ds_sink_part(const struct ds_output_opts *o, int fmt, uint64_t freq);
/* Add what share `part` counted to `s` (NULL: nothing), and free it
 * (NULL: nothing to add).  Call after ds_sink_end() on the part.  0 or a
 * negative errno. */
int ds_sink_merge(struct ds_sink *s, struct ds_sink *part);

/* One unwound sample of thread `comm` of process `process`; `event` names
 * its event when it is not the sink's (NULL: the sink's). */
int ds_sink_sample(struct ds_sink *s, const struct pr_record *rec, const struct pr_stack *st,
		   struct pr_symbolizer *sym, const char *comm, const char *process,
		   const char *event);
/* ds_sink_sample() for a sample of event `idx` of o->events (its name in
 * perf script's text unless `event` names it). */
int ds_sink_sample_event(struct ds_sink *s, size_t idx, const struct pr_record *rec,
			 const struct pr_stack *st, struct pr_symbolizer *sym, const char *comm,
			 const char *process, const char *event);

/*
 * Off-CPU (o->mode not PR_PROFILE_CPU): a switch-out sample, with the same
 * arguments as ds_sink_sample(); every other record, in time order
 * (switches and exits end waits); and the end of the run at `time`
 * (event clock), which ends the waits still open.  A wait reaches the
 * output when it ends: counted in a profile, or printed as perf script
 * prints perf's off-CPU samples (event "offcpu-time", the wait's ns as
 * the period).  0 or a negative errno.
 */
int ds_sink_switch(struct ds_sink *s, const struct pr_record *rec, const struct pr_stack *st,
		   struct pr_symbolizer *sym, const char *comm, const char *process);
int ds_sink_record(struct ds_sink *s, const struct pr_record *rec);
int ds_sink_end(struct ds_sink *s, uint64_t time);

/* Where the time of process `pid` (0: all) went so far (set t->sz). */
int ds_sink_times(const struct ds_sink *s, uint32_t pid, struct pr_profile_times *t);

/*
 * The sink as a session's (prsession.h), into `out`: `o`, as given to
 * ds_sink_open() (it must outlive the session), makes the other workers'
 * shares (a profile: perf script's text takes one worker); `only_event`
 * >= 0 keeps that event's samples alone (perf script's text with
 * --event); `names` (may be NULL) names each sample's event in perf
 * script's text; with `publish_times`, each share says where time went
 * after each switch and sample (ds_sink_published()).
 */
struct pr_sink;
struct pr_file;
void ds_sink_session(struct ds_sink *s, const struct ds_output_opts *o, int only_event,
		     struct pr_file *names, bool publish_times, struct pr_sink *out);
/* Where time went, as the workers last said, over every share not yet
 * merged: CPU, off-CPU and of that preempted, in ns.  On the thread that
 * feeds the session. */
void ds_sink_published(const struct ds_sink *s, uint64_t *cpu_ns, uint64_t *off_cpu_ns,
		       uint64_t *preempted_ns);

/* `ns` as "1.23 s", "45.6 ms" or "789 us", written into buf. */
const char *ds_duration(uint64_t ns, char *buf, size_t len);

/* The summary of where time went: a line for everything, then one per
 * process (the busiest first, up to ten). */
void ds_sink_print_times(const struct ds_sink *s);

/* Samples and distinct stacks so far (stacks: 0 for perf script text). */
uint64_t ds_sink_samples(const struct ds_sink *s);
size_t ds_sink_stacks(const struct ds_sink *s);

/* Whether writing the output has failed (a reader that went away, a full
 * disk); ds_sink_close() says how. */
bool ds_sink_failed(const struct ds_sink *s);

/*
 * Write what is held (the profile, stamped with `start_ns` since the epoch
 * and `duration_ns`), close, and free.  Returns 0, or -1 after reporting
 * the failure.  With `discard`, remove the file instead (nothing was
 * sampled because the run failed before it began).
 */
int ds_sink_close(struct ds_sink *s, uint64_t start_ns, uint64_t duration_ns, bool discard);

#endif
