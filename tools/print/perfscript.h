/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Samples in the layout of `perf script` (6.1): its default fields, or the
 * subset -F names, line for line as perf prints them.
 */
#ifndef DS_PERFSCRIPT_H
#define DS_PERFSCRIPT_H

#include <stdbool.h>
#include <stdio.h>

#include "perfreader.h"
#include "prsym.h"
#include "prunwind.h"

enum ps_field {
	PS_COMM = 1u << 0,
	PS_PID = 1u << 1,
	PS_TID = 1u << 2,
	PS_CPU = 1u << 3,
	PS_TIME = 1u << 4,
	PS_PERIOD = 1u << 5,
	PS_EVENT = 1u << 6,
	PS_IP = 1u << 7,
	PS_SYM = 1u << 8,
	PS_SYMOFF = 1u << 9,
	PS_DSO = 1u << 10,
	PS_SRCLINE = 1u << 11,
};

/* perf script's default for samples with a call chain. */
#define PS_DEFAULT (PS_COMM | PS_TID | PS_CPU | PS_TIME | PS_PERIOD | PS_EVENT | PS_IP | \
		    PS_SYM | PS_SYMOFF | PS_DSO)

/* A -F list ("comm,tid,time,ip,sym,dso") as PS_* bits: 0, or -1 naming
 * the field not known through *bad. */
int ps_parse_fields(const char *list, unsigned *fields, const char **bad, size_t *bad_len);

struct ps_writer {
	FILE *out;
	unsigned fields;
	bool inline_frames;          /* inlined functions as extra lines */
	int event_width;             /* the longest event name's length */
	char anon[64];
	/* The errno of the first write that failed (EPIPE: the reader went
	 * away), 0 while none has. */
	int err;
	/* A sample's frames, built here and written at once. */
	size_t len;
	char buf[1 << 15];
};

/* One sample: its header, then its frames (names from `sym` when the
 * fields ask for them, NULL otherwise), then a blank line. */
void ps_sample(struct ps_writer *w, const struct pr_record *rec, const char *comm,
	       const char *event, const struct pr_stack *st, struct pr_symbolizer *sym);

/* ps_sample() in two parts, for a sample whose header is known only
 * later (an off-CPU sample's period is its wait's length): the header
 * line, from rec's pid, tid, cpu, time and period; and the frames with
 * the blank line after them, to w->out. */
void ps_header(struct ps_writer *w, const struct pr_record *rec, const char *comm,
	       const char *event);
void ps_frames(struct ps_writer *w, const struct pr_record *rec, const struct pr_stack *st,
	       struct pr_symbolizer *sym);

/* 0, or the negative errno of the first write to w->out that failed (EIO
 * when none was kept: stdio's error flag keeps no errno).  ps_header() and
 * ps_frames() note it as it happens; anyone else writing to w->out asks
 * right after. */
int ps_error(struct ps_writer *w);

#endif
