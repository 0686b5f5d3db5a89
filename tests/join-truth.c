/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Joining truncated stacks against the ground truth.  Each sample of a
 * perf.data recorded with large stack copies is unwound twice over one
 * model: as recorded, without joining (the truth: by the session, the
 * per-record path every verb takes), and, in its sink, with its copy cut
 * to CUT bytes (the sample's dyn_size shortened, as a smaller
 * --stack-size would have copied), with joining.  The stacks the cut
 * copy ended early are "truncated"; of those, the ones joining completed
 * are compared with the truth frame by frame (address and process):
 *   identical     every frame the same, and as many
 *   contradicted  a frame differs, or the truth ended (outermost) with
 *                 another number of frames
 *   consistent    the truth was itself cut by the full copy: the frames
 *                 it has are the same, the rest cannot be checked
 *   partial       joined only as far as the call chain confirmed and
 *                 left truncated: every frame it has is the truth's
 * The recovered share is (identical + consistent) / truncated.  A join
 * needs the sample's user call chain to confirm it (unwind/join.c):
 * "unconfirmed" counts the truncated stacks an earlier stack had the
 * outermost frame of, left cut for want of that.
 *
 * usage: join-truth FILE CUT NAME [MIN_IDENTICAL_PERMILLE MAX_CONTRADICTED
 *                                  MIN_RECOVERED_PERCENT]
 * Prints one line of figures; with the thresholds, exits 1 when one is
 * not met (MIN_IDENTICAL_PERMILLE of the joined stacks that can be
 * checked identical, at most MAX_CONTRADICTED contradicted, at least
 * MIN_RECOVERED_PERCENT of the truncated stacks recovered) or when the
 * cut truncated nothing.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "perfreader.h"

struct run {
	struct pr_unwinder *cut;     /* over the session's model */
	uint64_t cut_size;
	uint64_t samples, truth_complete, truncated, joined;
	uint64_t cut_complete;       /* outermost with the cut copy, joined or not */
	uint64_t joined_complete;    /* of those, joined */
	uint64_t identical, contradicted, consistent, partial;
	unsigned shown;
};

/* The session unwound the sample as recorded, without joining (the
 * truth); here it is unwound again, its copy cut, with joining. */
static int on_sample(void *ctx, const struct pr_sink_sample *smp)
{
	struct run *r = ctx;
	const struct pr_record *rec = smp->rec;
	const struct pr_stack *truth = smp->st;
	const struct pr_frame *truth_frames = truth->frames + truth->nr_kernel;
	struct pr_record cut;
	struct pr_stack st;
	size_t nr = truth->nr - truth->nr_kernel, i;
	bool joined = false;

	if (truth->end == PR_END_NO_USER)
		return 0;
	r->samples++;
	r->truth_complete += truth->end == PR_END_OUTERMOST;

	cut = *rec;
	if (cut.u.sample.stack_dyn_size > r->cut_size)
		cut.u.sample.stack_dyn_size = r->cut_size;
	/* Another unwinder's frames: the truth's stay as they are. */
	pr_unwinder_unwind(r->cut, &cut, &st);
	r->cut_complete += st.end == PR_END_OUTERMOST;
	for (i = st.nr_kernel; i < st.nr; i++)
		joined |= !!(st.frames[i].flags & PR_FRAME_JOINED);
	if (!joined) {
		r->truncated += st.end == PR_END_TRUNCATED;
		return 0;
	}
	r->truncated++;
	r->joined++;
	r->joined_complete += st.end == PR_END_OUTERMOST;
	{
		size_t mine = st.nr - st.nr_kernel, same = 0;

		while (same < mine && same < nr &&
		       st.frames[st.nr_kernel + same].ip == truth_frames[same].ip &&
		       st.frames[st.nr_kernel + same].proc_serial == truth_frames[same].proc_serial)
			same++;
		if (same == mine && same == nr) {
			r->identical++;
		} else if (same == nr && truth->end == PR_END_TRUNCATED) {
			r->consistent++;
		} else if (same == mine && st.end == PR_END_TRUNCATED) {
			r->partial++;
		} else {
			r->contradicted++;
			if (r->shown++ < 5)
				printf("#   contradicted: tid %u time %" PRIu64 ": frame %zu of "
				       "%zu joined 0x%" PRIx64 ", truth 0x%" PRIx64
				       " of %zu (%s)\n",
				       rec->tid, rec->time, same, mine,
				       same < mine ? st.frames[st.nr_kernel + same].ip : 0,
				       same < nr ? truth_frames[same].ip : 0, nr,
				       pr_stack_end_name(truth->end));
		}
	}
	return 0;
}

static double pct(uint64_t a, uint64_t b)
{
	return b ? 100.0 * (double)a / (double)b : 0.0;
}

int main(int argc, char **argv)
{
	PR_OPTS(pr_unwinder_opts, to, .max_depth = PR_UNWIND_MAX_DEPTH, .no_join = true);
	PR_OPTS(pr_unwinder_opts, co, .max_depth = PR_UNWIND_MAX_DEPTH);
	PR_OPTS(pr_session_opts, so, .unwind = &to);
	struct run r = { 0 };
	struct pr_sink sink = { .sz = sizeof(sink), .ctx = &r, .sample = on_sample };
	struct pr_session *ses;
	struct pr_file *f;
	struct pr_unwind_stats us = { .sz = sizeof(us) };
	uint64_t checked, recovered;
	int n, ok = 1;

	if (argc != 4 && argc != 7) {
		fputs("usage: join-truth FILE CUT NAME [MIN_IDENTICAL_PERMILLE "
		      "MAX_CONTRADICTED MIN_RECOVERED_PERCENT]\n", stderr);
		return 2;
	}
	r.cut_size = strtoull(argv[2], NULL, 10);
	f = pr_file_open(argv[1], NULL);
	/* The file's build-ids find what it sampled ([vdso] too) in ~/.debug. */
	ses = f ? pr_session_new_file(f, &so) : NULL;
	r.cut = ses ? pr_unwinder_new(pr_session_model(ses, 0), &co) : NULL;
	if (!r.cut || (n = pr_session_add_sink(ses, &sink))) {
		fprintf(stderr, "join-truth: %s: %s\n", argv[1], strerror(r.cut ? -n : errno));
		return 2;
	}
	n = pr_session_consume_file(ses);
	if (n >= 0)
		n = pr_session_finish(ses, 0);
	if (n < 0) {
		fprintf(stderr, "join-truth: %s: %s\n", argv[1], strerror(-n));
		return 2;
	}
	pr_unwinder_stats(r.cut, &us);
	checked = r.identical + r.contradicted;
	recovered = r.identical + r.consistent;
	printf("# %s: cut to %s bytes: %" PRIu64 " samples (%.1f%% complete with the full "
	       "copy); truncated %" PRIu64 " (%.1f%%); joined %" PRIu64 " (%.1f%% of "
	       "truncated): identical to the truth %" PRIu64 " (%.2f%%), consistent %" PRIu64
	       ", partial %" PRIu64 ", contradicted %" PRIu64 ", unconfirmed %" PRIu64
	       "; recovered %.1f%% of truncated; complete %.1f%% without joining, %.1f%% with\n",
	       argv[3], argv[2], r.samples, pct(r.truth_complete, r.samples), r.truncated,
	       pct(r.truncated, r.samples), r.joined, pct(r.joined, r.truncated), r.identical,
	       pct(r.identical, checked), r.consistent, r.partial, r.contradicted, us.joins_unconfirmed,
	       pct(recovered, r.truncated), pct(r.cut_complete - r.joined_complete, r.samples),
	       pct(r.cut_complete, r.samples));
	if (argc == 7) {
		unsigned long min_identical = strtoul(argv[4], NULL, 10);
		unsigned long max_contradicted = strtoul(argv[5], NULL, 10);
		double min_recovered = strtod(argv[6], NULL);

		ok = r.truncated > 0 && r.identical * 1000 >= checked * min_identical &&
		     r.contradicted <= max_contradicted &&
		     pct(recovered, r.truncated) >= min_recovered;
	}
	/* Before the session: it is over the session's model. */
	pr_unwinder_free(r.cut);
	pr_session_free(ses);
	pr_file_close(f);
	return ok ? 0 : 1;
}
