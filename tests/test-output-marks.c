/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Stacks cut short and frames joined from an earlier stack are marked in
 * every format: a "[truncated]" frame where a cut stack's callers would
 * be (at its root side, so flame graphs group cut stacks under it), and
 * "_[joined]" after the joined frames' names -- folded and SVG (joined
 * with --annotate, as the other marks), perf script's text (a pseudo-frame
 * line, and the names), speedscope (frames of their own); pprof says it
 * in labels.  A stack joined only in part (as far as its call chain went)
 * is cut all the same.  Frames are unnamed addresses (no symbolizer).
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

static const char *write_marked(int format, bool annotate)
{
	PR_OPTS(pr_output_opts, oo, .annotate = annotate, .fields = PR_SCRIPT_IP | PR_SCRIPT_SYM);
	const struct pr_stack stacks[] = {
		{ .frames = plain, .nr = 3, .end = PR_END_OUTERMOST },
		{ .frames = plain, .nr = 2, .end = PR_END_TRUNCATED },
		{ .frames = plain, .nr = 1, .end = PR_END_DEPTH },
		{ .frames = joined, .nr = 3, .end = PR_END_OUTERMOST },
	};
	/* With `partial`, a fifth: joined, and still cut. */
	const struct pr_stack part = { .frames = joined, .nr = 3, .end = PR_END_TRUNCATED };
	struct pr_output *o;
	int fd;

	snprintf(path, sizeof(path), "/tmp/test-output-marks-XXXXXX");
	fd = mkstemp(path);
	ck_assert_int_ge(fd, 0);
	close(fd);
	o = pr_output_open(path, format, &oo);
	ck_assert_ptr_nonnull(o);
	for (size_t i = 0; i < sizeof(stacks) / sizeof(stacks[0]) + partial; i++) {
		struct pr_record r = { .type = PR_RECORD_SAMPLE, .misc = PERF_RECORD_MISC_USER,
				       .pid = 100, .tid = 100, .time = (i + 1) * MS, .cpu = 1,
				       .fields = PR_ID_TID | PR_ID_TIME | PR_ID_CPU };
		struct pr_sink_sample s = { .rec = &r, .comm = "app", .process = "app" };

		s.st = i < sizeof(stacks) / sizeof(stacks[0]) ? &stacks[i] : &part;

		r.u.sample.period = MS;
		ck_assert_int_eq(pr_output_sample(o, &s), 0);
	}
	ck_assert_int_eq(pr_output_close(o, 0, 0), 0);
	return contents();
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
	suite_add_tcase(s, tc);
	return run_suite(s);
}
