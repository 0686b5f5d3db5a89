/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Output: a profile written in one of the formats people open.  One file
 * per format; each reads the aggregate (profile/profile.h) and nothing
 * upstream of it.  And perf script's text (script.c, script_waits.c),
 * written sample by sample rather than from the aggregate; and the output
 * file that holds either (sink.c, proutput.h).
 */
#ifndef PR_OUTPUT_H
#define PR_OUTPUT_H

#include <stdio.h>

#include "proutput.h"
#include "prscript.h"
#include "profile/profile.h"

/* The writers: 0 or a negative errno. */
int pr__out_folded(const struct pr_profile *p, FILE *out, const struct pr_profile_write_opts *o);
int pr__out_pprof(const struct pr_profile *p, FILE *out, const struct pr_profile_write_opts *o);
int pr__out_speedscope(const struct pr_profile *p, FILE *out,
		       const struct pr_profile_write_opts *o);
int pr__out_svg(const struct pr_profile *p, FILE *out, const struct pr_profile_write_opts *o);
/* gzip `len` bytes of `buf` to `out` (pprof's files are): 0 or a negative
 * errno. */
int pr__write_gzip(const uint8_t *buf, size_t len, FILE *out);

/* ---- values.c: the values of a sample, for pprof and OTLP ---- */

/* A value type: its name ("samples", "cpu", an event's), the string index
 * of that name when it is one of the profile's own (an event's or a
 * counter's; PROF_NONE otherwise), and its unit ("count", "nanoseconds"). */
struct prof_value_type {
	const char *type, *unit;
	uint32_t name;
};
/* What is sampled: value `type` every `period` of it (0: not periodic);
 * value `shown` is the one to show first. */
struct prof_period {
	size_t type, shown;
	int64_t period;
};
size_t prof__nr_values(const struct pr_profile *p);
struct prof_value_type prof__value_type(const struct pr_profile *p, size_t i);
/* Stack idx's values, prof__nr_values() of them, into v. */
void prof__stack_values(const struct pr_profile *p, uint32_t idx, int64_t *v);
struct prof_period prof__period(const struct pr_profile *p);
/* Part `part` of `p` (enum pr_profile_part): its value types, as indexes
 * of prof__value_type(), into cols (room for prof__nr_values()), and its
 * period, whose type and shown are indexes into cols (either may be
 * NULL); how many (0: `p` has no such part). */
size_t prof__part_values(const struct pr_profile *p, int part, size_t *cols,
			 struct prof_period *per);
/* Whether stack idx is in part `part` of `p`. */
bool prof__part_has_stack(const struct pr_profile *p, int part, uint32_t idx);

/* JSON and XML text: `s` with what the format needs escaped. */
void pr__json_string(FILE *out, const char *s);
void pr__xml_text(FILE *out, const char *s);

/* ---- staging.c: the file an output is written under ---- */

/* Create and lock the file `path` is written under until it is renamed
 * over it, beside it (".NAME.dwarfsample-PID.XXXXXX", mode 0666 less the
 * umask), after removing those of `path` that killed writers left (said
 * to `lg`).  Returns its descriptor (close-on-exec), its name in `*tmp`
 * (the caller frees it), or a negative errno. */
int pr__staging_create(const char *path, char **tmp, const struct pr_logger *lg);

/* ---- script.c, script_waits.c: perf script's text (prscript.h) ---- */

/* Where one process's time went, and its name (script_waits.c). */
struct script_pid {
	uint32_t pid;
	char *name;
	struct pr_profile_times t;
};

/* A frame printed, for the next stack to copy when it has it too: what
 * its text depends on, and where that text starts in its buffer. */
struct script_memo_frame {
	uint64_t ip, dso_ip;
	const struct pr_dso *dso;
	uint64_t dso_serial;         /* the DSO's then (struct pr_dso) */
	uint32_t flags;
	uint32_t at;
	bool kept;                   /* its lines may be copied */
};

struct script_memo {
	struct script_memo_frame *v;
	size_t nr, cap;
};

#define SCRIPT_BUF (1 << 15)

struct pr_script {
	FILE *out;
	uint32_t fields;
	bool inline_frames;          /* inlined functions as extra lines */
	bool annotate;               /* frames from the call chain marked */
	int event_width;             /* the longest event name's length */
	uint64_t freq;               /* what a CPU sample stands for */
	bool period_is_ns;
	const struct pr_tp_formats *tp;
	bool default_fields;         /* not asked for: perf's defaults */
	char anon[64];
	const char *last_module;     /* a module of this stack, and its length */
	size_t last_module_len;
	char marked[1024];           /* a joined or chain frame's marked name */
	/* The errno of the first write that failed (EPIPE: the reader went
	 * away), 0 while none has. */
	int err;

	/* script_waits.c: off-CPU samples held until their waits end, and
	 * where time went. */
	uint64_t min_ns;
	struct pr_switches *sw;
	FILE *scratch;               /* held frames are rendered here */
	char *scratch_buf;
	size_t scratch_len;
	struct script_pid *pids;     /* sorted by pid */
	size_t nr_pids, cap_pids;
	struct pr_profile_times total;
	bool closing;                /* pr_script_free(): release, print nothing */

	/* A sample's text, built in one buffer and written at once; the
	 * next is built in the other, so that the frames of the one before
	 * stay there for it to copy (script.c: the memo). */
	char *buf;                   /* bufs[cur] */
	size_t len;
	unsigned cur;
	uint64_t flushes;            /* writes of buf so far */
	struct script_memo memo[2];  /* memo[cur ^ 1]: the frames before */
	const struct pr_symbolizer *memo_sym;
	uint64_t memo_epoch;         /* pr__symbolizer_epoch(memo_sym) then */
	size_t memo_len;             /* where the frames before end in their buffer */
	bool memo_valid;
	char bufs[2][SCRIPT_BUF];
};

/* A sample's header line, from rec's pid, tid, cpu, time and period,
 * built in s->buf (a tracepoint's fields written through); and its frames
 * with the blank line after them, to s->out with the header.  The write's
 * failure is noted in s->err. */
void pr__script_header(struct pr_script *s, const struct pr_record *rec, const char *comm,
		       const char *event);
void pr__script_frames(struct pr_script *s, const struct pr_record *rec,
		       const struct pr_stack *st, struct pr_symbolizer *sym);
/* A frame line of a pseudo-frame `name` (no address, no module), to s->out. */
void pr__script_pseudo_frame(struct pr_script *s, const char *name);
/* What the calls above built, to s->out. */
void pr__script_flush(struct pr_script *s);

/* script_waits.c: the off-CPU half set up and torn down (0 or -ENOMEM);
 * a CPU sample of process `pid` (called `process`, or NULL) standing for
 * `ns` counted in the times (0 or -ENOMEM). */
int pr__script_waits_init(struct pr_script *s);
void pr__script_waits_fini(struct pr_script *s);
int pr__script_count_cpu(struct pr_script *s, uint32_t pid, const char *process, uint64_t ns);

#endif /* PR_OUTPUT_H */
