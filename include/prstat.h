/* SPDX-License-Identifier: Apache-2.0 */
/*
 * prstat.h - counts (prcounter.h) printed as perf stat (perf 6.1) prints
 * them, field for field: its table, CSV lines (perf stat -x SEP) and JSON
 * lines (-j); totals, or interval deltas (-I) with their time; one row for
 * the whole target or one per thread (--per-thread); perf's derived
 * comments (CPUs utilized, GHz, insn per cycle, rates, miss ratios),
 * "<not counted>", "<not supported>" and the share of time counted when
 * the kernel multiplexed.  The printer sees only counts, so any can be
 * printed without a kernel.  The conventions written at the top of
 * perfreader.h hold.
 */
#ifndef PRSTAT_H
#define PRSTAT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/resource.h>
#include <sys/types.h>

#include "prcommon.h"
#include "prcounter.h"
#include "prevent.h"

#ifdef __cplusplus
extern "C" {
#endif

struct pr_stat_printer;

enum pr_stat_format {
	PR_STAT_TABLE,          /* perf stat's table */
	PR_STAT_CSV,            /* perf stat -x SEP */
	PR_STAT_JSON,           /* perf stat -j */
};

/* What perf derives from an event's count for the comment column: the
 * clocks' CPUs utilized, a rate per second of the clock's time, and the
 * ratios of hardware events to their base event. */
enum pr_stat_kind {
	PR_STAT_COUNT,          /* events per second of task or CPU clock */
	PR_STAT_CLOCK,          /* task-clock, cpu-clock: msec, CPUs utilized */
	PR_STAT_CYCLES,         /* GHz */
	PR_STAT_INSTRUCTIONS,   /* insn per cycle */
	PR_STAT_BRANCHES,       /* per second; the base of branch-misses */
	PR_STAT_BRANCH_MISSES,  /* % of all branches */
	PR_STAT_CACHE_REFS,     /* per second; the base of cache-misses */
	PR_STAT_CACHE_MISSES,   /* % of all cache refs */
	PR_STAT_STALLED_FRONTEND, /* % frontend cycles idle */
	PR_STAT_STALLED_BACKEND,  /* % backend cycles idle */
	PR_STAT_KINDS
};

/* The kind perf gives event `ev` (PR_STAT_COUNT for NULL, and for every
 * event but the clocks and the hardware events above).  Thread-safe. */
PR_API enum pr_stat_kind pr_event_stat_kind(const struct pr_event_desc *ev);

/* An event as printed: a plain value. */
struct pr_stat_event {
	const char *name;              /* not NULL */
	enum pr_stat_kind kind;
	/* Not printed when the machine cannot count it (perf stat's default
	 * set's hardware events on a machine without a PMU). */
	bool hide_unsupported;
};

/* A row's thread (per_thread): printed "comm-tid". */
struct pr_stat_thread {
	const char *comm;              /* not NULL */
	pid_t tid;
};

/* One reading to print: counts[row * nr_events + i] is event i's in each
 * row (one row for the whole target, else one per thread). */
struct pr_stat_reading {
	const struct pr_count *counts;
	const struct pr_stat_thread *threads;   /* NULL: one total row */
	size_t nr_rows;
	/* The time CPUs utilized divides by: the elapsed time, or for an
	 * interval its nominal length, as perf does. */
	double wall_ns;
	/* An interval's end, since the start (printed first on its rows). */
	uint64_t time_ns;
};

struct pr_stat_printer_opts {
	size_t sz;
	/* 0: the table. */
	enum pr_stat_format format;
	/* CSV's field separator (copied); NULL: ",". */
	const char *sep;
	/* Readings are intervals (-I): their rows start with the time, and
	 * the table has no title or footer but a column header every 25
	 * readings. */
	bool interval;
	/* Readings have a row per thread: the interval header says so. */
	bool per_thread;
	/* A thread's row is left out for each event it did not count at all
	 * (0), as perf stat -a --per-thread leaves out most of a machine's
	 * threads; an event not supported keeps one row, to say so. */
	bool hide_zero_rows;
};

/*
 * A printer of counts to `out`, owned by the caller
 * (pr_stat_printer_free()).  `out` stays the caller's and must outlive the
 * printer; what fails to be written is stdio's to tell (ferror(3),
 * fclose(3)).  `opts` may be NULL.  NULL with errno set on failure
 * (EINVAL: `out` NULL, a format not known, unknown options; ENOMEM).
 * Not thread-safe.
 */
PR_API struct pr_stat_printer *pr_stat_printer_new(FILE *out,
						   const struct pr_stat_printer_opts *opts);
/* `out` is neither flushed nor closed.  Accepts NULL. */
PR_API void pr_stat_printer_free(struct pr_stat_printer *p);

/* What perf stat -o FILE starts with: "# started on DATE" (the local
 * time now) and a blank line.  0 or -EINVAL. */
PR_API int pr_stat_printer_started(struct pr_stat_printer *p);

/*
 * The table's title, "Performance counter stats for TARGET:", with the
 * blank lines around it; nothing in CSV or JSON, or for intervals.
 * `target` is written as given: perf quotes it ("'ls -l'", "process id
 * '12'", "'system wide'").  0 or -EINVAL.
 */
PR_API int pr_stat_printer_header(struct pr_stat_printer *p, const char *target);

/*
 * A reading of `nr` events `evs` (in the order of each row's counts):
 * each event's rows (threads by decreasing count), their values,
 * multiplexing and perf's derived comment; for intervals, a column header
 * first every 25 readings in the table.  Then `out` is flushed.  0,
 * -EINVAL (a NULL, an event without a name or of a kind not known), or
 * -ENOMEM (nothing printed).
 */
PR_API int pr_stat_printer_reading(struct pr_stat_printer *p, const struct pr_stat_event *evs,
				   size_t nr, const struct pr_stat_reading *r);

/*
 * The table's "seconds time elapsed" and, with `ru` (a command's, as
 * wait4(2) gives it; may be NULL), its user and system seconds, then
 * `out` flushed; nothing in CSV or JSON, or for intervals.  0 or -EINVAL.
 */
PR_API int pr_stat_printer_footer(struct pr_stat_printer *p, double elapsed_s,
				  const struct rusage *ru);

#ifdef __cplusplus
}
#endif

#endif /* PRSTAT_H */
