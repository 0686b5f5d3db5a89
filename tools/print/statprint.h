/* SPDX-License-Identifier: Apache-2.0 */
/*
 * `dwarfsample stat`'s printing, in the layouts of perf stat (perf 6.1):
 * the table, CSV lines (-x SEP) and JSON lines (-j); totals, or interval
 * deltas (-I) with their time; for the whole target, or one row per
 * thread.  It sees only counts, so the tests hand it any (multiplexed,
 * never run, unsupported) without a kernel.
 */
#ifndef DS_STATPRINT_H
#define DS_STATPRINT_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/resource.h>
#include <sys/types.h>

#include "prcounter.h"
#include "prevent.h"

enum ds_stat_format { DS_STAT_TABLE, DS_STAT_CSV, DS_STAT_JSON };

/* What perf derives from an event's count for the comment column: the
 * clocks' CPUs utilized, a rate per second of the clock's time, and the
 * ratios of hardware events to their base event. */
enum ds_stat_kind {
	DS_STAT_COUNT,          /* events per second of task or CPU clock */
	DS_STAT_CLOCK,          /* task-clock, cpu-clock: msec, CPUs utilized */
	DS_STAT_CYCLES,         /* GHz */
	DS_STAT_INSTRUCTIONS,   /* insn per cycle */
	DS_STAT_BRANCHES,       /* per second; the base of branch-misses */
	DS_STAT_BRANCH_MISSES,  /* % of all branches */
	DS_STAT_CACHE_REFS,     /* per second; the base of cache-misses */
	DS_STAT_CACHE_MISSES,   /* % of all cache refs */
	DS_STAT_STALLED_FRONTEND, /* % frontend cycles idle */
	DS_STAT_STALLED_BACKEND,  /* % backend cycles idle */
	DS_STAT_KINDS
};

enum ds_stat_kind ds_stat_kind_of(const struct pr_event_desc *ev);

/* An event as printed. */
struct ds_stat_event {
	const char *name;
	enum ds_stat_kind kind;
	/* Not printed when the machine cannot count it (the default set's
	 * hardware events on a machine without a PMU). */
	bool hide_unsupported;
};

/* A row's thread (--per-thread): "comm-tid". */
struct ds_stat_thread {
	const char *comm;
	pid_t tid;
};

/* One reading to print: counts[row * nr_events + i] is event i's in each
 * row (one row for the whole target, else one per thread). */
struct ds_stat_reading {
	const struct pr_count *counts;
	const struct ds_stat_thread *threads;   /* NULL: one total row */
	size_t nr_rows;
	/* The time CPUs utilized divides by: the elapsed time, or with -I
	 * the interval's nominal length, as perf does. */
	double wall_ns;
	uint64_t time_ns;        /* -I: the interval's end since the start */
};

struct ds_stat_printer {
	FILE *f;
	enum ds_stat_format format;
	const char *sep;         /* CSV: the field separator */
	bool interval;           /* -I: rows start with the time */
	bool per_thread;
	unsigned printed;        /* -I: readings printed, for the header */
};

/* -o FILE starts with "# started on DATE" and a blank line, as perf's. */
void ds_stat_print_started(struct ds_stat_printer *p);

/* The table's title, "Performance counter stats for TARGET:" (TARGET as
 * perf quotes it: "'ls -l'", "process id '12'", "'system wide'"), with the
 * blank lines around it (nothing in CSV or JSON, or with -I). */
void ds_stat_print_header(const struct ds_stat_printer *p, const char *target);

/* A reading: each event's rows (threads by decreasing count), values,
 * multiplexing, and perf's derived comment.  -I: a column header first,
 * every 25 readings, in the table. */
void ds_stat_print(struct ds_stat_printer *p, const struct ds_stat_event *evs, size_t nr,
		   const struct ds_stat_reading *r);

/* The table's "seconds time elapsed", and with `ru` (a command's) the
 * user and system seconds (nothing in CSV or JSON). */
void ds_stat_print_footer(const struct ds_stat_printer *p, double elapsed_s,
			  const struct rusage *ru);

#endif
