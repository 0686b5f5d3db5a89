/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The events a capturing verb samples: -e LIST, -c PERIOD, --read-group,
 * checked before anything starts and turned into the reader's options and
 * the names the outputs show.
 */
#ifndef DS_EVENTS_H
#define DS_EVENTS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "perfreader.h"

#define DS_MAX_EVENTS 32

struct ds_events {
	struct pr_event_desc ev[DS_MAX_EVENTS];
	size_t nr;                   /* 0: no -e, the CPU event */
	bool grouped;                /* the list had a {group} */
	uint64_t period;             /* -c; 0: by frequency */
	bool read_group;             /* --read-group */
	const char *names[DS_MAX_EVENTS];  /* ev[i].name, for the outputs */
};

/* Parse -e's list `list` into evs[0..max) as pr_event_list_parse() does,
 * and into spelled[i] (may be NULL) each event as written there ("cs",
 * "faults:u"; a group member without the group's modifier), which perf
 * stat prints.  A list that does not parse is said as perf says it: the
 * list, and the parser's message under a pointer to the event at fault.
 * The number of events, or a negative errno. */
int ds_event_list_parse(const char *list, struct pr_event_desc *evs,
			char (*spelled)[PR_EVENT_NAME_MAX], size_t max);

/* One -e argument, appended to what earlier ones gave: 0, or -1 after
 * saying what is wrong with it. */
int ds_events_add(struct ds_events *e, const char *arg);

/* Check the events against each other and the machine, before anything
 * starts: groups only with --read-group, a read group of at least two
 * events, hardware events only where a PMU counts them (cycles alone falls
 * back to cpu-clock, saying so, as --hw-cycles does).  0, or -1 after
 * saying what to do. */
int ds_events_settle(struct ds_events *e);

/* Reader options for each event, from the CPU event's (`base`: stack
 * size, frequency, kernel chains), into `out` (e->nr of them). */
void ds_events_opts(const struct ds_events *e, const struct pr_event_opts *base,
		    struct pr_event_opts *out);

/* True when every sampled event counts nanoseconds (cpu-clock,
 * task-clock): their periods are CPU time. */
bool ds_events_in_ns(const struct ds_events *e);

/* The outputs' view of the events: their names, and with --read-group
 * the first as the one sampled and all as counters (a counter per CPU
 * when `system_wide`). */
void ds_events_output(const struct ds_events *e, bool system_wide, struct pr_output_opts *o);

/* The formats of the tracepoints among the events, which print their
 * samples' fields in perf script's text (the caller frees them); NULL
 * when there is none, or none could be read (said: the samples are
 * printed without their fields). */
struct pr_tp_formats *ds_events_tp_formats(const struct ds_events *e);

/* Whether some event is sampled at a period (-c, or its default:
 * pr_event_default_period()), and whether some is sampled by frequency
 * (the CPU event without -e), given -F's `freq` (0: none). */
bool ds_events_by_period(const struct ds_events *e, uint64_t freq);
bool ds_events_by_freq(const struct ds_events *e, uint64_t freq);

/* For the summary, a line each, `prefix` first: the events sampled at
 * their default period, and the sparse ones -F samples by frequency,
 * whose counts are the kernel's estimates. */
void ds_events_sampling_note(const struct ds_events *e, uint64_t freq, FILE *out,
			     const char *prefix);

/* The longest event name, `fallback` without -e: perf script aligns
 * the names to it. */
int ds_events_width(const struct ds_events *e, const char *fallback);

#endif /* DS_EVENTS_H */
