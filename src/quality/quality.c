/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The unwind-quality counts and their report (prquality.h): stacks that
 * ended early by binary and reason, and binaries whose frames nothing
 * names, each row with its remedy (remedy.c).  Rows are few (a binary
 * and a reason each), so they are a list searched in full.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "quality/quality.h"
#include "symbols/symbolizer.h"

struct pr_quality *pr_quality_new(const struct pr_quality_opts *opts)
{
	struct pr_quality *q;

	if (!PR_OPTS_VALID(opts)) {
		errno = EINVAL;
		return NULL;
	}
	q = calloc(1, sizeof(*q));
	if (!q) {
		errno = ENOMEM;
		return NULL;
	}
	q->stack_size = PR_OPTS_GET(opts, stack_size, 0);
	q->off_cpu_stack_size = PR_OPTS_GET(opts, off_cpu_stack_size, 0);
	q->max_depth = PR_OPTS_GET(opts, max_depth, PR_UNWIND_DEFAULT_DEPTH);
	return q;
}

void pr_quality_free(struct pr_quality *q)
{
	if (!q)
		return;
	for (size_t i = 0; i < q->jit.cap; i++)
		for (struct pr__quality_jit *j = q->jit.slots[i].value, *next; j; j = next) {
			next = j->next;
			free(j);
		}
	pr__hashmap_free(&q->jit);
	free(q->rows);
	free(q);
}

/* Whether two rows' files are the same: the same object of one model,
 * or, from two workers' models, the same path. */
static bool same_file(const struct pr_dso *a, const struct pr_dso *b)
{
	const char *pa, *pb;

	if (a == b)
		return true;
	pa = a ? pr_dso_path(a) : NULL;
	pb = b ? pr_dso_path(b) : NULL;
	return pa && pb && !strcmp(pa, pb);
}

/* The row of (dso, process name, why) of `like`, or NULL. */
static struct pr__quality_row *row_of(struct pr_quality *q, const struct pr__quality_row *like)
{
	for (size_t i = 0; i < q->nr; i++) {
		struct pr__quality_row *r = &q->rows[i];

		if (r->why == like->why && r->off_cpu == like->off_cpu &&
		    same_file(r->dso, like->dso) && !strcmp(r->process, like->process))
			return r;
	}
	return NULL;
}

/* Add `n` to the row of `like`, made from it when there is none. */
static int count_n(struct pr_quality *q, const struct pr__quality_row *like, uint64_t n)
{
	struct pr__quality_row *r = row_of(q, like);

	if (!r) {
		if (PR_ARRAY_RESERVE(q->rows, q->cap, q->nr + 1))
			return -ENOMEM;
		r = &q->rows[q->nr++];
		*r = *like;
		r->n = 0;
	}
	r->n += n;
	return 0;
}

/* A row's process name: code in no file is told apart by the process it
 * is in. */
static void row_name(const struct pr_dso *dso, const char *process, char name[16])
{
	name[0] = '\0';
	if (!pr__quality_is_file(dso))
		snprintf(name, 16, "%s", process ? process : "?");
}

static int count(struct pr_quality *q, const struct pr_dso *dso, const char *process,
		 unsigned why, bool off_cpu)
{
	struct pr__quality_row r = { .dso = dso, .why = (uint8_t)why,
				     .off_cpu = off_cpu && pr__quality_copy_ended(why) };

	row_name(dso, process, r.process);
	return count_n(q, &r, 1);
}

/* JIT code nothing names, of `pid`: which runtime it is says how to
 * have it named (remedy.c); asked once per row. */
static int count_jit(struct pr_quality *q, const struct pr_dso *dso, const char *process,
		     uint32_t pid, struct pr_symbolizer *sym)
{
	struct pr__quality_row r = { .dso = dso, .why = PR_QUALITY_UNNAMED, .pid = pid };
	unsigned minor;

	snprintf(r.process, sizeof(r.process), "%s", process ? process : "?");
	if (row_of(q, &r))
		return count_n(q, &r, 1);
	r.runtime = (uint8_t)pr__model_runtime(sym->model, pid, &minor);
	r.minor = (uint8_t)minor;
	return count_n(q, &r, 1);
}

/* An unnamed frame of JIT code (`dso` anonymous), kept to be looked at
 * again at the end (late_jit()). */
static int keep_jit(struct pr_quality *q, uint32_t pid, const struct pr_frame *f,
		    const char *process)
{
	uint64_t k = pr__hash_mix(pid, f->ip);
	struct pr__quality_jit *j;

	for (j = pr__hashmap_get(&q->jit, k); j; j = j->next)
		if (j->pid == pid && j->ip == f->ip) {
			j->n++;
			return 0;
		}
	j = calloc(1, sizeof(*j));
	if (!j)
		return -ENOMEM;
	*j = (struct pr__quality_jit){ .pid = pid, .ip = f->ip, .n = 1, .dso = f->dso,
				       .next = pr__hashmap_get(&q->jit, k) };
	row_name(f->dso, process, j->process);
	if (pr__hashmap_put(&q->jit, k, j)) {
		free(j);
		return -ENOMEM;
	}
	return 0;
}

/* JIT code named at the end of the run (prof__name_jit_late()) is not
 * counted unnamed: only what is still unnamed then. */
static void late_jit(struct pr_quality *q)
{
	for (size_t i = 0; q->sym && i < q->jit.cap; i++)
		for (struct pr__quality_jit *j = q->jit.slots[i].value; j; j = j->next) {
			struct pr_symbol s;

			if (!j->n || pr__sym_resolve_jitdump_late(q->sym, j->pid, j->ip, &s) ||
			    !s.name)
				continue;
			q->unnamed -= j->n;
			for (size_t r = 0; r < q->nr; r++)
				if (q->rows[r].why == PR_QUALITY_UNNAMED && q->rows[r].dso == j->dso &&
				    !strcmp(q->rows[r].process, j->process))
					q->rows[r].n -= j->n;
			j->n = 0;
		}
}

int pr_quality_merge(struct pr_quality *q, const struct pr_quality *src)
{
	if (!q || !src)
		return -EINVAL;
	q->samples += src->samples;
	q->ended_early += src->ended_early;
	q->joined += src->joined;
	q->frames += src->frames;
	q->unnamed += src->unnamed;
	for (size_t i = 0; i < src->nr; i++)
		if (count_n(q, &src->rows[i], src->rows[i].n))
			return -ENOMEM;
	return 0;
}

/* Why `st`, which did not reach its outermost frame, ended; `off_cpu`: a
 * switch-out sample's. */
static unsigned why_ended(const struct pr_quality *q, const struct pr_record *rec,
			  const struct pr_stack *st, bool cut_short, bool off_cpu)
{
	uint64_t asked = pr__quality_asked(q, off_cpu);

	if (cut_short)
		return PR_QUALITY_CUT_SHORT;
	/* The copy ran out, but the kernel read less than it was asked
	 * for: it stopped at a page it could not read without faulting. */
	if (st->end == PR_END_TRUNCATED && asked && rec->u.sample.stack_dyn_size < asked)
		return PR_QUALITY_KERNEL_SHORT;
	if (st->end == PR_END_DEPTH && st->error)
		return PR_QUALITY_CHAIN_DEPTH;
	if (st->end == PR_END_TRUNCATED && st->nr > st->nr_kernel &&
	    (st->frames[st->nr - 1].flags & PR_FRAME_CHAIN))
		return PR_QUALITY_NO_FP;
	if (st->end == PR_END_NO_MAPPING && st->nr > st->nr_kernel && !st->frames[st->nr - 1].dso)
		return PR_QUALITY_UNMAPPED;
	return st->end;
}

/* pr_quality_add(), of a switch-out sample when `off_cpu`. */
static int add(struct pr_quality *q, const struct pr_record *rec, const struct pr_stack *st,
	       struct pr_symbolizer *sym, const char *process, bool cut_short, bool off_cpu)
{
	uint32_t pid = rec->pid;
	int err = 0;

	q->samples++;
	for (size_t i = st->nr_kernel; i < st->nr; i++)
		if (st->frames[i].flags & PR_FRAME_JOINED) {
			q->joined++;
			break;
		}
	if (st->end != PR_END_OUTERMOST) {
		const struct pr_dso *dso = st->nr > st->nr_kernel ? st->frames[st->nr - 1].dso
								   : NULL;

		q->ended_early++;
		err = count(q, dso, process, why_ended(q, rec, st, cut_short, off_cpu), off_cpu);
	}
	for (size_t i = st->nr_kernel; sym && !err && i < st->nr; i++) {
		struct pr_symbol s;

		q->frames++;
		if (pr_symbolizer_symbolize(sym, pid, &st->frames[i], &s) || s.name || s.nr)
			continue;
		q->unnamed++;
		if (pr__quality_is_file(st->frames[i].dso)) {
			err = count(q, st->frames[i].dso, process, PR_QUALITY_UNNAMED, false);
			continue;
		}
		err = count_jit(q, st->frames[i].dso, process, pid, sym);
		if (!err && st->frames[i].dso && !strncmp(pr_dso_path(st->frames[i].dso), "//anon", 6))
			err = keep_jit(q, pid, &st->frames[i], process);
	}
	return err;
}

int pr_quality_add(struct pr_quality *q, const struct pr_record *rec, const struct pr_stack *st,
		   struct pr_symbolizer *sym, const char *process, bool cut_short)
{
	if (!q || !rec || !st)
		return -EINVAL;
	return add(q, rec, st, sym, process, cut_short, false);
}

/* ---- the report ---- */

static const char *why_name(unsigned why)
{
	switch (why) {
	case PR_END_NO_UNWIND_INFO:
		return "no unwind info";
	case PR_END_NO_MAPPING:
		return "JIT, no way out";
	case PR_QUALITY_UNNAMED:
		return "no symbols";
	case PR_QUALITY_CUT_SHORT:
		return "cut short";
	case PR_QUALITY_KERNEL_SHORT:
		return "page missing";
	case PR_END_CHAIN:
		return "fp chain end";
	case PR_QUALITY_CHAIN_DEPTH:
		return "chain limit";
	case PR_QUALITY_NO_FP:
		return "no frame ptr";
	case PR_QUALITY_UNMAPPED:
		return "no mapping";
	default:
		return pr_stack_end_name((enum pr_stack_end)why);
	}
}

static const char *where(const struct pr__quality_row *r, char *buf, size_t len)
{
	if (pr__quality_is_file(r->dso))
		return pr_dso_path(r->dso);
	snprintf(buf, len, "[%s] of %s",
		 r->why == PR_QUALITY_UNMAPPED ? "no mapping" : "code in no file", r->process);
	return buf;
}

static int by_count(const void *a, const void *b)
{
	const struct pr__quality_row *x = *(const struct pr__quality_row *const *)a;
	const struct pr__quality_row *y = *(const struct pr__quality_row *const *)b;

	return (x->n < y->n) - (x->n > y->n);
}

/* The rows of one table of at least `permille` of its total, most
 * first, into `out`: their number. */
static size_t table(const struct pr_quality *q, bool unnamed, unsigned permille,
		    const struct pr__quality_row **out)
{
	uint64_t total = unnamed ? q->frames : q->samples;
	size_t n = 0;

	for (size_t i = 0; i < q->nr; i++)
		/* A row of JIT code all named at the end has none left. */
		if ((q->rows[i].why == PR_QUALITY_UNNAMED) == unnamed && q->rows[i].n &&
		    q->rows[i].n * 1000 >= total * permille)
			out[n++] = &q->rows[i];
	qsort(out, n, sizeof(*out), by_count);
	return n;
}

int pr_quality_report(const struct pr_quality *q, FILE *out,
		      const struct pr_quality_report_opts *opts)
{
	const struct pr__quality_row **rows;
	struct pr__quality_words w;
	const char *prefix;
	char buf[1024], at[64];
	size_t max_rows;
	unsigned permille;
	int written = 0;

	if (!q || !out || !PR_OPTS_VALID(opts))
		return -EINVAL;
	prefix = PR_OPTS_GET(opts, prefix, "");
	max_rows = PR_OPTS_GET(opts, max_rows, 0);
	permille = PR_OPTS_GET(opts, permille, 0);
	w = (struct pr__quality_words){
		.stack_size = PR_OPTS_GET(opts, stack_size_name, PR_LOG_SETTING_STACK_SIZE),
		.debug_dir = PR_OPTS_GET(opts, debug_dir_name, "debug directory"),
		.max_depth = PR_OPTS_GET(opts, max_depth_name, "the frame limit"),
		.log = PR_OPTS_GET(opts, log_name, "the log"),
		.kernel = PR_OPTS_GET(opts, kernel_name, "sampling kernel call chains"),
		.python = PR_OPTS_GET(opts, python_name,
				      "turning its perf trampoline on from outside"),
		.off_cpu_stack_size = PR_OPTS_GET(opts, off_cpu_stack_size_name,
						  "off-CPU " PR_LOG_SETTING_STACK_SIZE),
	};
	rows = calloc(q->nr + 1, sizeof(*rows));
	if (!rows)
		return -ENOMEM;
	for (int unnamed = 0; unnamed < 2; unnamed++) {
		uint64_t total = unnamed ? q->frames : q->samples;
		size_t n = table(q, unnamed, permille, rows);

		if (max_rows && n > max_rows)
			n = max_rows;
		if (!n)
			continue;
		fprintf(out, "%s%s\n", prefix, unnamed ? "frames nothing names, by binary:"
						       : "stacks that ended early, by binary and why:");
		for (size_t i = 0; i < n; i++) {
			pr__quality_remedy(q, rows[i], &w, buf, sizeof(buf));
			fprintf(out, "%s  %8" PRIu64 " %5.1f%%  %-15s %s\n%s      %s\n", prefix,
				rows[i]->n, 100.0 * (double)rows[i]->n / (double)total,
				why_name(rows[i]->why), where(rows[i], at, sizeof(at)), prefix,
				buf);
			written++;
		}
	}
	free(rows);
	return written;
}

/* ---- the session's sink ---- */

static int sink_sample(void *ctx, const struct pr_sink_sample *smp)
{
	struct pr_quality *q = ctx;

	q->sym = smp->sym;
	return add(q, smp->rec, smp->st, smp->sym, smp->process, smp->cut_short, smp->off_cpu);
}

static int sink_finish(void *ctx, uint64_t end)
{
	(void)end;
	late_jit(ctx);
	return 0;
}

static void *sink_part(void *ctx)
{
	const struct pr_quality *q = ctx;
	PR_OPTS(pr_quality_opts, o, .stack_size = q->stack_size,
		.off_cpu_stack_size = q->off_cpu_stack_size, .max_depth = q->max_depth);

	return pr_quality_new(&o);
}

static int sink_merge(void *ctx, void *part)
{
	int err = ctx ? pr_quality_merge(ctx, part) : 0;

	pr_quality_free(part);
	return err;
}

int pr_quality_sink(struct pr_quality *q, struct pr_sink *out)
{
	if (!q || !out)
		return -EINVAL;
	*out = (struct pr_sink){
		.sz = sizeof(*out), .ctx = q, .sample = sink_sample, .finish = sink_finish,
		.part_new = sink_part, .part_merge = sink_merge,
	};
	return 0;
}
