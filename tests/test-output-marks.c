/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Stacks cut short and frames joined from an earlier stack are marked in
 * every format: a "[truncated]" frame where a cut stack's callers would
 * be (at its root side, so flame graphs group cut stacks under it), and
 * "_[joined]" after the joined frames' names -- folded and SVG (joined
 * with --annotate, as the other marks), perf script's text (a pseudo-frame
 * line, and the names), speedscope (frames of their own); pprof says it
 * in labels.  A stack joined only in part (as far as its call chain went)
 * is cut all the same.  Frames from the sample's frame-pointer call chain
 * (PR_FRAME_CHAIN: all of a stack without a copy, or the outer part of
 * one) are marked "_[fp]" with --annotate, in folded, SVG, speedscope
 * and perf script's text; pprof and OTLP count them in a label.  Stacks
 * that differ only in where their frames came from stay apart, merged
 * or not.  Frames are unnamed addresses (no symbolizer).
 */
#include <check.h>
#include <linux/perf_event.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "checkmain.h"
#include "perfreader.h"
#include "profile-fixture.h"   /* pprof-decode.h needs it */
#include "pprof-decode.h"

#define MS 1000000ull

/* Leaf first; the third frame joined, when a stack says so. */
static const struct pr_frame plain[] = { { .ip = 0x1010, .dso_ip = 0x1010 },
					 { .ip = 0x2020, .dso_ip = 0x2020 },
					 { .ip = 0x3030, .dso_ip = 0x3030 } };
static const struct pr_frame joined[] = { { .ip = 0x1010, .dso_ip = 0x1010 },
					  { .ip = 0x2020, .dso_ip = 0x2020 },
					  { .ip = 0x3030, .dso_ip = 0x3030,
					    .flags = PR_FRAME_JOINED } };

/* A copy's head, its outer two frames from the call chain; and a stack
 * that is its chain alone. */
static const struct pr_frame tail[] = { { .ip = 0x1010, .dso_ip = 0x1010 },
					{ .ip = 0x2020, .dso_ip = 0x2020, .flags = PR_FRAME_CHAIN },
					{ .ip = 0x3030, .dso_ip = 0x3030, .flags = PR_FRAME_CHAIN } };
static const struct pr_frame chained[] = {
	{ .ip = 0x1010, .dso_ip = 0x1010, .flags = PR_FRAME_CHAIN },
	{ .ip = 0x2020, .dso_ip = 0x2020, .flags = PR_FRAME_CHAIN },
	{ .ip = 0x3030, .dso_ip = 0x3030, .flags = PR_FRAME_CHAIN }
};

static char path[64];

static const char *contents(void)
{
	static char buf[1 << 17];
	FILE *f = fopen(path, "re");
	size_t n;

	ck_assert_ptr_nonnull(f);
	n = fread(buf, 1, sizeof(buf) - 1, f);
	buf[n] = '\0';
	fclose(f);
	return buf;
}

/* One sample of each kind: complete, cut by the copy, cut by the depth
 * limit, completed by joining; written in `format`, the file's text. */
static bool partial;

static void add_samples(struct pr_profile *p, struct pr_output *o,
			const struct pr_stack *stacks, size_t nr)
{
	for (size_t i = 0; i < nr; i++) {
		struct pr_record r = { .type = PR_RECORD_SAMPLE, .misc = PERF_RECORD_MISC_USER,
				       .pid = 100, .tid = 100, .time = (i + 1) * MS, .cpu = 1,
				       .fields = PR_ID_TID | PR_ID_TIME | PR_ID_CPU };
		struct pr_sink_sample s = { .rec = &r, .comm = "app", .process = "app",
					    .st = &stacks[i] };

		r.u.sample.period = MS;
		if (o)
			ck_assert_int_eq(pr_output_sample(o, &s), 0);
		if (p)
			ck_assert_int_eq(pr_profile_add(p, NULL, &r, s.st, "app", "app"), 0);
	}
}

/* A sample of each stack, written in `format`: the file's text. */
static const char *write_stacks(int format, bool annotate, const struct pr_stack *stacks,
				size_t nr)
{
	PR_OPTS(pr_output_opts, oo, .annotate = annotate, .fields = PR_SCRIPT_IP | PR_SCRIPT_SYM);
	struct pr_output *o;
	int fd;

	snprintf(path, sizeof(path), "/tmp/test-output-marks-XXXXXX");
	fd = mkstemp(path);
	ck_assert_int_ge(fd, 0);
	close(fd);
	o = pr_output_open(path, format, &oo);
	ck_assert_ptr_nonnull(o);
	add_samples(NULL, o, stacks, nr);
	ck_assert_int_eq(pr_output_close(o, 0, 0), 0);
	return contents();
}

static const char *write_marked(int format, bool annotate)
{
	/* With `partial`, a fifth: joined, and still cut. */
	const struct pr_stack stacks[] = {
		{ .frames = plain, .nr = 3, .end = PR_END_OUTERMOST },
		{ .frames = plain, .nr = 2, .end = PR_END_TRUNCATED },
		{ .frames = plain, .nr = 1, .end = PR_END_DEPTH },
		{ .frames = joined, .nr = 3, .end = PR_END_OUTERMOST },
		{ .frames = joined, .nr = 3, .end = PR_END_TRUNCATED },
	};

	return write_stacks(format, annotate, stacks, 4 + partial);
}

/* The stacks of write_sources(): one unwound whole, one with a chain's
 * tail, two of the chain alone; with `with_joined` a joined one after. */
static const struct pr_stack source_stacks[] = {
	{ .frames = plain, .nr = 3, .end = PR_END_OUTERMOST },
	{ .frames = tail, .nr = 3, .end = PR_END_CHAIN },
	{ .frames = chained, .nr = 3, .end = PR_END_CHAIN },
	{ .frames = chained, .nr = 3, .end = PR_END_CHAIN },
	{ .frames = joined, .nr = 3, .end = PR_END_OUTERMOST },
};

static const char *write_sources(int format, bool annotate, bool with_joined)
{
	return write_stacks(format, annotate, source_stacks, 4 + with_joined);
}

/* The file just written, its size into *len (static buffer). */
static const void *raw_contents(size_t *len)
{
	static char buf[1 << 17];
	FILE *f = fopen(path, "re");

	ck_assert_ptr_nonnull(f);
	*len = fread(buf, 1, sizeof(buf), f);
	fclose(f);
	return buf;
}

static unsigned count(const char *text, const char *what)
{
	unsigned n = 0;

	for (const char *p = text; (p = strstr(p, what)); p += strlen(what))
		n++;
	return n;
}

START_TEST(folded_roots_cut_stacks_at_truncated_and_annotates_joined_frames)
{
	const char *t = write_marked(PR_FORMAT_FOLDED, false);

	/* Cut by the copy and by the depth limit alike; the complete and the
	 * joined stack print the same without --annotate. */
	ck_assert_str_eq(t, "app;[truncated];[unknown];[unknown] 1\n"
			    "app;[truncated];[unknown] 1\n"
			    "app;[unknown];[unknown];[unknown] 2\n");
	unlink(path);
	/* Addresses in no mapping are marked as JIT code's are, "_[j]"; the
	 * joined mark comes after any other. */
	t = write_marked(PR_FORMAT_FOLDED, true);
	ck_assert_str_eq(t, "app;[truncated];[unknown]_[j];[unknown]_[j] 1\n"
			    "app;[truncated];[unknown]_[j] 1\n"
			    "app;[unknown]_[j];[unknown]_[j];[unknown]_[j] 1\n"
			    "app;[unknown]_[j]_[joined];[unknown]_[j];[unknown]_[j] 1\n");
	unlink(path);
}
END_TEST

START_TEST(svg_draws_the_truncated_frame_and_the_joined_ones)
{
	const char *t = write_marked(PR_FORMAT_SVG, true);

	ck_assert_ptr_nonnull(strstr(t, "[truncated]"));
	ck_assert_ptr_nonnull(strstr(t, "<title>[truncated] (2 samples, 50.00%)</title>"));
	ck_assert_ptr_nonnull(strstr(t, "<title>[unknown]_[j]_[joined] (1 sample"));
	unlink(path);
	t = write_marked(PR_FORMAT_SVG, false);
	ck_assert_ptr_nonnull(strstr(t, "[truncated]"));
	ck_assert_ptr_null(strstr(t, "_[joined]"));
	unlink(path);
}
END_TEST

START_TEST(perf_script_ends_cut_stacks_with_a_truncated_line_and_names_joined_frames)
{
	const char *t = write_marked(PR_OUTPUT_PERF_SCRIPT, false);

	/* Each sample's header line is empty: no field of it asked for. */
	ck_assert_str_eq(t, "\n\t            1010 [unknown]\n"
			    "\t            2020 [unknown]\n"
			    "\t            3030 [unknown]\n\n"
			    "\n\t            1010 [unknown]\n"
			    "\t            2020 [unknown]\n"
			    "\t               0 [truncated]\n\n"
			    "\n\t            1010 [unknown]\n"
			    "\t               0 [truncated]\n\n"
			    "\n\t            1010 [unknown]\n"
			    "\t            2020 [unknown]\n"
			    "\t            3030 [unknown]_[joined]\n\n");
	unlink(path);
}
END_TEST

START_TEST(speedscope_starts_cut_stacks_at_truncated_and_lists_joined_frames_apart)
{
	const char *t = write_marked(PR_FORMAT_SPEEDSCOPE, false);
	const char *frames = strstr(t, "\"frames\":[");
	const char *samples = strstr(t, "\"samples\":[");

	ck_assert_ptr_nonnull(frames);
	ck_assert_ptr_nonnull(samples);
	/* No function, one mapping-less frame: [unknown] is 0, [truncated]
	 * 1, the joined [unknown] 2. */
	ck_assert_ptr_nonnull(strstr(frames, "{\"name\":\"[unknown]\"},\n"
					     "{\"name\":\"[truncated]\"},\n"
					     "{\"name\":\"[unknown]_[joined]\"}]"));
	ck_assert_ptr_nonnull(strstr(samples, "[0,0,0]"));
	ck_assert_ptr_nonnull(strstr(samples, "[1,0,0]"));
	ck_assert_ptr_nonnull(strstr(samples, "[1,0]"));
	ck_assert_ptr_nonnull(strstr(samples, "[2,0,0]"));
	ck_assert_uint_eq(count(t, "[truncated]"), 1);
	unlink(path);
}
END_TEST

/* pprof names each sample's end: a cut stack's why, "joined" for one
 * joining completed; one joined in part is "truncated" with its
 * joined_frames. */
START_TEST(pprof_labels_a_stack_joined_in_part_as_truncated)
{
	Perftools__Profiles__Profile *m;
	unsigned truncated = 0, depth = 0, completed = 0, part = 0, none = 0;
	const void *gz;
	size_t len;

	partial = true;
	write_marked(PR_FORMAT_PPROF, false);
	partial = false;
	gz = raw_contents(&len);
	m = decode_pprof_gz(gz, len);
	for (size_t i = 0; i < m->n_sample; i++) {
		const Perftools__Profiles__Sample *s = m->sample[i];
		const char *end = label_of(m, s, "stack_end");
		bool has_joined = false;

		for (size_t k = 0; k < s->n_label; k++)
			has_joined |= !strcmp(str(m, s->label[k]->key), "joined_frames") &&
				      s->label[k]->num == 1;
		if (!end)
			none++;
		else if (!strcmp(end, "joined") && has_joined)
			completed++;
		else if (!strcmp(end, "truncated") && has_joined)
			part++;
		else if (!strcmp(end, "truncated"))
			truncated++;
		else if (!strcmp(end, "depth limit"))
			depth++;
	}
	ck_assert_uint_eq(none, 1);
	ck_assert_uint_eq(truncated, 1);
	ck_assert_uint_eq(depth, 1);
	ck_assert_uint_eq(completed, 1);
	ck_assert_uint_eq(part, 1);
	perftools__profiles__profile__free_unpacked(m, NULL);
	unlink(path);
}
END_TEST

START_TEST(folded_roots_a_stack_joined_in_part_at_truncated)
{
	const char *t;

	partial = true;
	t = write_marked(PR_FORMAT_FOLDED, true);
	partial = false;
	ck_assert_ptr_nonnull(strstr(t, "\napp;[truncated];[unknown]_[j]_[joined];[unknown]_[j];"
					"[unknown]_[j] 1\n"));
	unlink(path);
}
END_TEST

START_TEST(folded_annotates_frames_from_the_call_chain_fp)
{
	const char *t = write_sources(PR_FORMAT_FOLDED, false, false);

	/* Unmarked, the four stacks are one line (and no chain ends one
	 * "[truncated]": the chain ended where the frame pointers did). */
	ck_assert_str_eq(t, "app;[unknown];[unknown];[unknown] 4\n");
	unlink(path);
	/* Marked after any other mark, on the chain's frames only: the
	 * stack with a chain's tail apart from the one unwound whole and
	 * from the chain alone. */
	t = write_sources(PR_FORMAT_FOLDED, true, false);
	ck_assert_str_eq(t, "app;[unknown]_[j];[unknown]_[j];[unknown]_[j] 1\n"
			    "app;[unknown]_[j]_[fp];[unknown]_[j]_[fp];[unknown]_[j] 1\n"
			    "app;[unknown]_[j]_[fp];[unknown]_[j]_[fp];[unknown]_[j]_[fp] 2\n");
	unlink(path);
}
END_TEST

START_TEST(svg_annotates_frames_from_the_call_chain_fp)
{
	const char *t = write_sources(PR_FORMAT_SVG, true, false);

	/* The root-side frame of the tail and the chain stacks: 3 of 4. */
	ck_assert_ptr_nonnull(strstr(t, "<title>[unknown]_[j]_[fp] (3 samples, 75.00%)</title>"));
	ck_assert_ptr_nonnull(strstr(t, "<title>[unknown]_[j] (1 sample"));
	unlink(path);
	t = write_sources(PR_FORMAT_SVG, false, false);
	ck_assert_ptr_null(strstr(t, "_[fp]"));
	unlink(path);
}
END_TEST

START_TEST(perf_script_names_frames_from_the_call_chain_fp_when_annotating)
{
	const char *t = write_sources(PR_OUTPUT_PERF_SCRIPT, true, true);

	ck_assert_str_eq(t, "\n\t            1010 [unknown]\n"
			    "\t            2020 [unknown]\n"
			    "\t            3030 [unknown]\n\n"
			    "\n\t            1010 [unknown]\n"
			    "\t            2020 [unknown]_[fp]\n"
			    "\t            3030 [unknown]_[fp]\n\n"
			    "\n\t            1010 [unknown]_[fp]\n"
			    "\t            2020 [unknown]_[fp]\n"
			    "\t            3030 [unknown]_[fp]\n\n"
			    "\n\t            1010 [unknown]_[fp]\n"
			    "\t            2020 [unknown]_[fp]\n"
			    "\t            3030 [unknown]_[fp]\n\n"
			    "\n\t            1010 [unknown]\n"
			    "\t            2020 [unknown]\n"
			    "\t            3030 [unknown]_[joined]\n\n");
	unlink(path);
	/* Not asked: perf's own names, as perf script prints a chain; the
	 * joined frame, which perf never shows, marked all the same. */
	t = write_sources(PR_OUTPUT_PERF_SCRIPT, false, true);
	ck_assert_uint_eq(count(t, "_[fp]"), 0);
	ck_assert_uint_eq(count(t, "3030 [unknown]_[joined]\n"), 1);
	ck_assert_uint_eq(count(t, " [unknown]\n"), 14);
	unlink(path);
}
END_TEST

START_TEST(speedscope_lists_frames_from_the_call_chain_apart_when_annotating)
{
	const char *t = write_sources(PR_FORMAT_SPEEDSCOPE, true, true);
	const char *frames = strstr(t, "\"frames\":[");
	const char *samples = strstr(t, "\"samples\":[");

	ck_assert_ptr_nonnull(frames);
	ck_assert_ptr_nonnull(samples);
	/* [unknown] 0, [truncated] 1, joined 2, from the chain 3. */
	ck_assert_ptr_nonnull(strstr(frames, "{\"name\":\"[unknown]\"},\n"
					     "{\"name\":\"[truncated]\"},\n"
					     "{\"name\":\"[unknown]_[joined]\"},\n"
					     "{\"name\":\"[unknown]_[fp]\"}]"));
	/* Root first. */
	ck_assert_ptr_nonnull(strstr(samples, "[[0,0,0],\n[3,3,0],\n[3,3,3],\n[2,0,0]]"));
	unlink(path);
	/* Without joined frames, the chain's copy comes after [truncated]. */
	t = write_sources(PR_FORMAT_SPEEDSCOPE, true, false);
	ck_assert_ptr_nonnull(strstr(t, "{\"name\":\"[truncated]\"},\n"
					"{\"name\":\"[unknown]_[fp]\"}]"));
	ck_assert_ptr_nonnull(strstr(t, "[[0,0,0],\n[2,2,0],\n[2,2,2]]"));
	unlink(path);
	/* Not asked: no such frames. */
	t = write_sources(PR_FORMAT_SPEEDSCOPE, false, false);
	ck_assert_ptr_null(strstr(t, "_[fp]"));
	ck_assert_ptr_null(strstr(t, "[truncated]"));
	unlink(path);
}
END_TEST

/* pprof's label fp_frames: how many of a stack's outermost frames came
 * from the chain, on the stacks that have any, whatever their end. */
START_TEST(pprof_counts_the_frames_from_the_call_chain_in_fp_frames)
{
	Perftools__Profiles__Profile *m;
	uint64_t by_fp[4] = { 0 };
	const void *gz;
	size_t len;

	write_sources(PR_FORMAT_PPROF, false, false);
	gz = raw_contents(&len);
	m = decode_pprof_gz(gz, len);
	/* Three stacks: apart by where their frames came from. */
	ck_assert_uint_eq(m->n_sample, 3);
	for (size_t i = 0; i < m->n_sample; i++) {
		const Perftools__Profiles__Sample *s = m->sample[i];
		int64_t fp = 0;

		for (size_t k = 0; k < s->n_label; k++)
			if (!strcmp(str(m, s->label[k]->key), "fp_frames"))
				fp = s->label[k]->num;
		ck_assert_int_le(fp, 3);
		by_fp[fp] += (uint64_t)s->value[0];
	}
	ck_assert_uint_eq(by_fp[0], 1);
	ck_assert_uint_eq(by_fp[1], 0);
	ck_assert_uint_eq(by_fp[2], 1);
	ck_assert_uint_eq(by_fp[3], 2);
	perftools__profiles__profile__free_unpacked(m, NULL);
	unlink(path);
}
END_TEST

/* Two profiles merged (the workers' profiles are): a stack from the
 * chain and the same addresses unwound stay two stacks, and the marks
 * hold. */
START_TEST(merged_profiles_keep_stacks_apart_by_where_their_frames_came_from)
{
	PR_OPTS(pr_profile_write_opts, wo, .annotate = true);
	struct pr_profile *a = pr_profile_new(NULL), *b = pr_profile_new(NULL);
	struct pr_profile *c = pr_profile_new(NULL);
	FILE *f;

	ck_assert_ptr_nonnull(a);
	ck_assert_ptr_nonnull(b);
	ck_assert_ptr_nonnull(c);
	add_samples(a, NULL, source_stacks, 1);
	add_samples(b, NULL, source_stacks, 4);
	/* The same three locations in each. */
	ck_assert_uint_eq(pr_profile_nr_stacks(b), 3);
	ck_assert_int_eq(pr_profile_merge(c, b), 0);
	ck_assert_uint_eq(pr_profile_nr_stacks(c), 3);
	pr_profile_free(c);
	ck_assert_int_eq(pr_profile_merge(a, b), 0);
	snprintf(path, sizeof(path), "/tmp/test-output-marks-XXXXXX");
	f = fdopen(mkstemp(path), "w");
	ck_assert_ptr_nonnull(f);
	ck_assert_int_eq(pr_profile_write(a, PR_FORMAT_FOLDED, f, &wo), 0);
	fclose(f);
	ck_assert_str_eq(contents(),
			 "app;[unknown]_[j];[unknown]_[j];[unknown]_[j] 2\n"
			 "app;[unknown]_[j]_[fp];[unknown]_[j]_[fp];[unknown]_[j] 1\n"
			 "app;[unknown]_[j]_[fp];[unknown]_[j]_[fp];[unknown]_[j]_[fp] 2\n");
	unlink(path);
	pr_profile_free(a);
	pr_profile_free(b);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("output-marks");
	TCase *tc = tcase_create("marks");

	tcase_add_test(tc, folded_roots_cut_stacks_at_truncated_and_annotates_joined_frames);
	tcase_add_test(tc, svg_draws_the_truncated_frame_and_the_joined_ones);
	tcase_add_test(tc, perf_script_ends_cut_stacks_with_a_truncated_line_and_names_joined_frames);
	tcase_add_test(tc, speedscope_starts_cut_stacks_at_truncated_and_lists_joined_frames_apart);
	tcase_add_test(tc, pprof_labels_a_stack_joined_in_part_as_truncated);
	tcase_add_test(tc, folded_roots_a_stack_joined_in_part_at_truncated);
	tcase_add_test(tc, folded_annotates_frames_from_the_call_chain_fp);
	tcase_add_test(tc, svg_annotates_frames_from_the_call_chain_fp);
	tcase_add_test(tc, perf_script_names_frames_from_the_call_chain_fp_when_annotating);
	tcase_add_test(tc, speedscope_lists_frames_from_the_call_chain_apart_when_annotating);
	tcase_add_test(tc, pprof_counts_the_frames_from_the_call_chain_in_fp_frames);
	tcase_add_test(tc, merged_profiles_keep_stacks_apart_by_where_their_frames_came_from);
	suite_add_tcase(s, tc);
	return run_suite(s);
}
