/* SPDX-License-Identifier: Apache-2.0 */
/*
 * `--call-graph fp` and `--call-graph auto` against the ground truth.  A
 * perf.data recorded with `dwarfsample record --call-graph auto,65528`
 * carries, in every sample, the kernel's frame-pointer chain and a copy
 * of the stack as large as the kernel copies.  Each sample is unwound
 * three ways over one model:
 *   truth  DWARF over the full copy, without the call chain's user part
 *          and without joining;
 *   fp     the sample without its copy, as `--call-graph fp` records it:
 *          the unwinder takes the user call chain;
 *   auto   the copy cut to CUT bytes (auto's default, 4096), the chain
 *          kept, unwound as the unwinder does by default (joining on).
 * Each mode's user stack is compared with the truth's frame by frame,
 * address and process:
 *   equal          every frame the truth's, and as many; the truth reached
 *                  the outermost frame
 *   consistent     the truth did not reach the outermost frame (the full
 *                  copy ran out): the frames it has are the same
 *   early          every frame the truth's, but fewer: the frames missing
 *                  are counted, and whether the stack ended at a frame in
 *                  an object built without frame pointers (--no-fp), past
 *                  which no frame-pointer walk finds a caller
 * An fp stack is compared only up to its first frame in an object built
 * without frame pointers ("cut-at-no-fp" counts those cut): past it, the
 * walk followed a frame pointer that object did not keep, which can skip
 * a caller (a vDSO function called from libc's clock_gettime, the libc
 * frame right, main skipped after it) or be anything (ld.so).
 *   contradicted   a frame differs from the truth's at the same depth, or
 *                  a frame beyond the truth's outermost one; such frames
 *                  are counted ("contradicted frames").  Of these,
 *                  "caller-skipped" are right but for the truth's frame 1
 *                  (a frame-pointer walk from a function that has no frame
 *                  set up skips its caller), complete so or early at an
 *                  object built without frame pointers
 * "reach-outside-leaf": equal, consistent or early at an object without
 * frame pointers (every frame right, as far as frame pointers reach), of
 * the samples outside the leaf below.
 * With --leaf FUNC CALLER, the samples whose truth stack starts in FUNC
 * with CALLER under it (a leaf without a frame of its own) are counted,
 * with those whose auto stack has CALLER's frame at depth 1 and those
 * whose fp stack has a frame named CALLER anywhere.
 *
 * usage: callgraph-truth FILE NAME [--cut BYTES] [--process NAME]
 *                        [--no-fp OBJECT]... [--leaf FUNC CALLER]
 * --process takes only the samples of processes so named; --no-fp
 * OBJECT is part of an object's path.  Prints one line per mode (and one
 * for the leaf), each figure after its name, for the tests to read.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <linux/perf_event.h>

#include "perfreader.h"

#define MAX_NO_FP 8

enum { MODE_FP, MODE_AUTO, NR_MODES };

static const char *const mode_names[NR_MODES] = { "fp", "auto" };

struct figures {
	/* Stacks, by how they compare. */
	uint64_t equal, consistent, early, early_no_fp, contradicted;
	/* Of the contradicted, those right but for the truth's frame 1
	 * missing: complete so, ended early at an object without frame
	 * pointers. */
	uint64_t skipped, skipped_whole, skipped_no_fp;
	/* Outside the leaf (--leaf): equal, consistent or early at an
	 * object without frame pointers, and those samples. */
	uint64_t reach_outside, outside;
	/* fp stacks compared only up to a frame in an object without frame
	 * pointers, which had frames after it. */
	uint64_t cut_no_fp;
	/* Frames. */
	uint64_t frames, contradicted_frames, missing_frames;
	unsigned shown;
};

struct run {
	struct pr_unwinder *truth, *modes[NR_MODES];
	uint64_t cut;
	const char *process;
	const char *no_fp[MAX_NO_FP];
	size_t nr_no_fp;
	const char *leaf, *caller;
	uint64_t samples, truth_complete, truth_frames;
	uint64_t truth_ends[PR_END_MAX];
	struct figures fig[NR_MODES];
	uint64_t leaf_samples, leaf_auto_caller, leaf_fp_caller;
};

static bool same_frame(const struct pr_frame *a, const struct pr_frame *b)
{
	return a->ip == b->ip && a->proc_serial == b->proc_serial;
}

static const char *name_of(const struct pr_sink_sample *smp, const struct pr_frame *f)
{
	struct pr_symbol sym;

	if (!smp->sym || pr_symbolizer_symbolize(smp->sym, smp->rec->pid, f, &sym))
		return NULL;
	return sym.name;
}

/* For messages: frame `i` of `nr` named, "?" unnamed, "-" past the end. */
static const char *shown_name(const struct pr_sink_sample *smp, const struct pr_frame *frames,
			      size_t i, size_t nr)
{
	const char *name = i < nr ? name_of(smp, &frames[i]) : "-";

	return name ? name : "?";
}

static bool in_no_fp_object(const struct run *r, const struct pr_frame *f)
{
	const char *path = f->dso ? pr_dso_path(f->dso) : NULL;

	for (size_t i = 0; path && i < r->nr_no_fp; i++)
		if (strstr(path, r->no_fp[i]))
			return true;
	return false;
}

/* Frames of `m` that differ from the truth's at the same depth, the
 * truth read without its frame 1 when `skip`; *first, the first. */
static size_t differing(const struct pr_frame *t, size_t nt, const struct pr_frame *m,
			size_t nm, bool skip, size_t *first)
{
	size_t n = 0;

	*first = SIZE_MAX;
	for (size_t i = 0; i < nm && i + skip < nt; i++) {
		if (same_frame(&m[i], &t[i && skip ? i + 1 : i]))
			continue;
		n++;
		if (*first == SIZE_MAX)
			*first = i;
	}
	return n;
}

static void compare(struct run *r, int mode, const struct pr_sink_sample *smp,
		    const struct pr_stack *truth, const struct pr_stack *st, bool in_leaf)
{
	struct figures *fg = &r->fig[mode];
	const struct pr_frame *t = truth->frames + truth->nr_kernel;
	const struct pr_frame *m = st->frames + st->nr_kernel;
	size_t nt = truth->nr - truth->nr_kernel, nm = st->nr - st->nr_kernel, first, skip_first;
	size_t differ;
	bool complete = truth->end == PR_END_OUTERMOST;

	for (size_t i = 0; mode == MODE_FP && i + 1 < nm; i++) {
		if (in_no_fp_object(r, &m[i])) {
			fg->cut_no_fp++;
			nm = i + 1;
			break;
		}
	}
	differ = differing(t, nt, m, nm, false, &first);

	/* Frames past the outermost one cannot be anyone's. */
	if (complete && nm > nt)
		differ += nm - nt;
	fg->frames += nm;
	fg->missing_frames += nt > nm ? nt - nm : 0;
	fg->outside += !in_leaf;
	if (!differ) {
		bool no_fp = nm < nt && nm && in_no_fp_object(r, &m[nm - 1]);

		fg->reach_outside += !in_leaf && (nm >= nt || no_fp);
		if (nm < nt) {
			fg->early++;
			fg->early_no_fp += no_fp;
		} else if (complete) {
			fg->equal++;
		} else {
			fg->consistent++;
		}
		return;
	}
	fg->contradicted++;
	fg->contradicted_frames += differ;
	/* A frame-pointer walk from a function that has not set up its frame
	 * (a leaf gcc built without one, a prologue) skips its caller; the
	 * frames after are shifted, not wrong. */
	if (nt >= 2 && nm >= 1 && !(complete && nm > nt - 1) &&
	    !differing(t, nt, m, nm, true, &skip_first)) {
		fg->skipped++;
		fg->skipped_whole += nm == nt - 1 && complete;
		fg->skipped_no_fp += nm < nt - 1 && in_no_fp_object(r, &m[nm - 1]);
		return;
	}
	if (first == SIZE_MAX)
		first = nt;
	if (fg->shown++ < 5)
		printf("#   %s contradicted: tid %u time %" PRIu64 ": frame %zu of %zu "
		       "0x%" PRIx64 " (%s), truth 0x%" PRIx64 " (%s) of %zu (%s)\n",
		       mode_names[mode], smp->rec->tid, smp->rec->time, first, nm,
		       first < nm ? m[first].ip : 0, shown_name(smp, m, first, nm),
		       first < nt ? t[first].ip : 0, shown_name(smp, t, first, nt), nt,
		       pr_stack_end_name(truth->end));
}

/* Whether the truth starts in the leaf with its caller under it; then,
 * is the caller there in each mode? */
static bool check_leaf(struct run *r, const struct pr_sink_sample *smp,
		       const struct pr_stack *truth, const struct pr_stack *st[NR_MODES])
{
	const struct pr_frame *t = truth->frames + truth->nr_kernel;
	const char *name;
	bool in_fp = false;

	if (!r->leaf || truth->nr - truth->nr_kernel < 2 || !(name = name_of(smp, &t[0])) ||
	    strcmp(name, r->leaf) || !(name = name_of(smp, &t[1])) || strcmp(name, r->caller))
		return false;
	r->leaf_samples++;
	if (st[MODE_AUTO]->nr - st[MODE_AUTO]->nr_kernel >= 2 &&
	    same_frame(&st[MODE_AUTO]->frames[st[MODE_AUTO]->nr_kernel + 1], &t[1]))
		r->leaf_auto_caller++;
	for (size_t i = st[MODE_FP]->nr_kernel; i < st[MODE_FP]->nr && !in_fp; i++)
		in_fp = (name = name_of(smp, &st[MODE_FP]->frames[i])) && !strcmp(name, r->caller);
	r->leaf_fp_caller += in_fp;
	return true;
}

static int on_sample(void *ctx, const struct pr_sink_sample *smp)
{
	struct run *r = ctx;
	const struct pr_sample *s = &smp->rec->u.sample;
	struct pr_record rec = *smp->rec;
	struct pr_stack truth, st[NR_MODES];
	const struct pr_stack *stp[NR_MODES] = { &st[MODE_FP], &st[MODE_AUTO] };
	uint64_t kernel_part = 0;
	bool in_leaf;

	if (r->process && (!smp->process || strcmp(smp->process, r->process)))
		return 0;
	/* The truth: the copy alone, the chain's user part left out. */
	while (kernel_part < s->nr_callchain &&
	       s->callchain[kernel_part] != (uint64_t)PERF_CONTEXT_USER)
		kernel_part++;
	rec.u.sample.nr_callchain = kernel_part;
	pr_unwinder_unwind(r->truth, &rec, &truth);
	if (truth.end == PR_END_NO_USER)
		return 0;
	r->samples++;
	r->truth_ends[truth.end]++;
	r->truth_complete += truth.end == PR_END_OUTERMOST;
	r->truth_frames += truth.nr - truth.nr_kernel;

	/* fp: no copy at all, as --call-graph fp records a sample. */
	rec = *smp->rec;
	rec.u.sample.stack = NULL;
	rec.u.sample.stack_size = rec.u.sample.stack_dyn_size = 0;
	pr_unwinder_unwind(r->modes[MODE_FP], &rec, &st[MODE_FP]);
	/* auto: the copy cut to its default size, the chain kept. */
	rec = *smp->rec;
	if (rec.u.sample.stack_dyn_size > r->cut)
		rec.u.sample.stack_dyn_size = r->cut;
	if (rec.u.sample.stack_size > r->cut)
		rec.u.sample.stack_size = r->cut;
	pr_unwinder_unwind(r->modes[MODE_AUTO], &rec, &st[MODE_AUTO]);

	in_leaf = check_leaf(r, smp, &truth, stp);
	for (int m = 0; m < NR_MODES; m++)
		compare(r, m, smp, &truth, &st[m], in_leaf);
	return 0;
}

static double pct(uint64_t a, uint64_t b)
{
	return b ? 100.0 * (double)a / (double)b : 0.0;
}

static void print_figures(const struct run *r, const char *name)
{
	printf("%s truth: samples %" PRIu64 " complete %" PRIu64 " (%.2f%%) frames %" PRIu64,
	       name, r->samples, r->truth_complete, pct(r->truth_complete, r->samples),
	       r->truth_frames);
	for (int e = 0; e < PR_END_MAX; e++)
		if (e != PR_END_OUTERMOST && r->truth_ends[e])
			printf(" ended-%s %" PRIu64, pr_stack_end_name(e), r->truth_ends[e]);
	putchar('\n');
	for (int m = 0; m < NR_MODES; m++) {
		const struct figures *f = &r->fig[m];

		printf("%s %s: equal %" PRIu64 " (%.2f%%) consistent %" PRIu64 " early %" PRIu64
		       " (%.2f%%) early-at-no-fp %" PRIu64 " contradicted %" PRIu64
		       " (%.2f%%) contradicted-frames %" PRIu64 " caller-skipped %" PRIu64
		       " skipped-else-equal %" PRIu64 " skipped-early-at-no-fp %" PRIu64
		       " missing-frames %" PRIu64 " (%.2f%% of the truth's) outside-leaf %" PRIu64
		       " reach-outside-leaf %" PRIu64 " (%.2f%%) cut-at-no-fp %" PRIu64 "\n",
		       name, mode_names[m], f->equal, pct(f->equal, r->samples), f->consistent,
		       f->early, pct(f->early, r->samples), f->early_no_fp, f->contradicted,
		       pct(f->contradicted, r->samples), f->contradicted_frames, f->skipped,
		       f->skipped_whole, f->skipped_no_fp, f->missing_frames,
		       pct(f->missing_frames, r->truth_frames), f->outside, f->reach_outside,
		       pct(f->reach_outside, f->outside), f->cut_no_fp);
	}
	if (r->leaf)
		printf("%s leaf: %s-samples %" PRIu64 " auto-has-%s %" PRIu64 " fp-has-%s %" PRIu64
		       "\n", name, r->leaf, r->leaf_samples, r->caller, r->leaf_auto_caller,
		       r->caller, r->leaf_fp_caller);
}

static int usage(void)
{
	fputs("usage: callgraph-truth FILE NAME [--cut BYTES] [--process NAME] "
	      "[--no-fp OBJECT]... [--leaf FUNC CALLER]\n", stderr);
	return 2;
}

int main(int argc, char **argv)
{
	PR_OPTS(pr_unwinder_opts, to, .max_depth = PR_UNWIND_MAX_DEPTH, .no_join = true);
	PR_OPTS(pr_unwinder_opts, mo, .max_depth = PR_UNWIND_MAX_DEPTH);
	PR_OPTS(pr_symbolizer_opts, names, .no_inline = true);
	PR_OPTS(pr_session_opts, so, .unwind = &to, .names = &names);
	struct run r = { .cut = 4096 };
	struct pr_sink sink = { .sz = sizeof(sink), .ctx = &r, .sample = on_sample };
	struct pr_session *ses = NULL;
	struct pr_model *model;
	struct pr_file *f;
	int n = 0, i;

	if (argc < 3)
		return usage();
	for (i = 3; i < argc; i++) {
		if (!strcmp(argv[i], "--cut") && i + 1 < argc)
			r.cut = strtoull(argv[++i], NULL, 0);
		else if (!strcmp(argv[i], "--process") && i + 1 < argc)
			r.process = argv[++i];
		else if (!strcmp(argv[i], "--no-fp") && i + 1 < argc && r.nr_no_fp < MAX_NO_FP)
			r.no_fp[r.nr_no_fp++] = argv[++i];
		else if (!strcmp(argv[i], "--leaf") && i + 2 < argc)
			r.leaf = argv[++i], r.caller = argv[++i];
		else
			return usage();
	}
	f = pr_file_open(argv[1], NULL);
	/* The file's build-ids find what it sampled ([vdso] too) in ~/.debug. */
	ses = f ? pr_session_new_file(f, &so) : NULL;
	model = ses ? pr_session_model(ses, 0) : NULL;
	if (model) {
		r.truth = pr_unwinder_new(model, &to);
		for (int m = 0; m < NR_MODES; m++)
			r.modes[m] = pr_unwinder_new(model, &mo);
	}
	if (!r.truth || !r.modes[MODE_FP] || !r.modes[MODE_AUTO] ||
	    (n = pr_session_add_sink(ses, &sink))) {
		fprintf(stderr, "callgraph-truth: %s: %s\n", argv[1], strerror(n ? -n : errno));
		return 2;
	}
	n = pr_session_consume_file(ses);
	if (n >= 0)
		n = pr_session_finish(ses, 0);
	if (n < 0) {
		fprintf(stderr, "callgraph-truth: %s: %s\n", argv[1], strerror(-n));
		return 2;
	}
	print_figures(&r, argv[2]);
	/* Before the session: they are over the session's model. */
	for (int m = 0; m < NR_MODES; m++)
		pr_unwinder_free(r.modes[m]);
	pr_unwinder_free(r.truth);
	pr_session_free(ses);
	pr_file_close(f);
	return 0;
}
