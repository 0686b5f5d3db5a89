/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The unwind-quality counts and their report (prquality.h), through the
 * shared library only: rows by reason and place, most first, each with
 * its remedy in the caller's words (a wait's stack copy, made at its
 * switch out, by the off-CPU setting's); shares merged as a session merges
 * them; the demo fixture replayed without its binary (every stack ends
 * for want of unwind information, every frame unnamed) and with it
 * (nothing to report).  The remedies that read the system (dpkg,
 * /etc/os-release) are checked end to end by test-quality.sh.
 */
#include <check.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "checkmain.h"
#include "demo-replay.h"
#include "fixtures/fixture.h"
#include "perfreader.h"

/* The binary the fixture sampled, where it was when recorded. */
#define DEMO_BINARY "/tmp/tmp.cODh8nR1Cw/dwarfsample-demo-static"

/* The report of `q` with `o`, as a string (the caller frees it); its
 * return value into *rows. */
static char *report_of(const struct pr_quality *q, const struct pr_quality_report_opts *o,
		       int *rows)
{
	char *text = NULL;
	size_t len = 0;
	FILE *out = open_memstream(&text, &len);

	ck_assert_ptr_nonnull(out);
	*rows = pr_quality_report(q, out, o);
	ck_assert_int_eq(fclose(out), 0);
	return text;
}

/* The report of `q` with `o` is `want`, of `rows` rows; then `q` goes. */
static void assert_report(struct pr_quality *q, const struct pr_quality_report_opts *o,
			  int rows, const char *want)
{
	int got;
	char *text = report_of(q, o, &got);

	ck_assert_int_eq(got, rows);
	ck_assert_str_eq(text, want);
	free(text);
	pr_quality_free(q);
}

/* `n` samples of process "worker" whose one user frame is in no file,
 * their stacks ended by `end`, copied `dyn` bytes of stack. */
static void add_n(struct pr_quality *q, int n, enum pr_stack_end end, uint64_t dyn,
		  bool cut_short)
{
	static const struct pr_frame frame = { .ip = 0x7f0000001000 };
	struct pr_record rec = { .type = PR_RECORD_SAMPLE, .pid = 42, .tid = 42 };
	struct pr_stack st = { .frames = &frame, .nr = 1, .end = end };

	rec.u.sample.stack_dyn_size = dyn;
	for (int i = 0; i < n; i++)
		ck_assert_int_eq(pr_quality_add(q, &rec, &st, NULL, "worker", cut_short), 0);
}

/* With a depth limit under the most there is (the default until 2.1). */
static struct pr_quality *new_quality(void)
{
	PR_OPTS(pr_quality_opts, o, .stack_size = 8192, .max_depth = 127);
	struct pr_quality *q = pr_quality_new(&o);

	ck_assert_ptr_nonnull(q);
	return q;
}

static const char early_rows[] =
	"> stacks that ended early, by binary and why:\n"
	">          4  26.7%  page missing    [code in no file] of worker\n"
	">       the kernel copied less of the stack than the 8192 bytes asked: the next "
	"page was not in memory when the sample was taken (a frame just pushed onto a new "
	"page, or one swapped out); a larger stack size does not help\n"
	">          3  20.0%  truncated       [code in no file] of worker\n"
	">       the 8192-byte stack copy ran out here: a larger stack size (up to 65528)\n"
	">          2  13.3%  cut short       [code in no file] of worker\n"
	">       copied only up to where this thread's stacks had ended before; it also "
	"runs on stacks carved from its own (coroutines), and is copied whole since\n"
	">          1   6.7%  depth limit     [code in no file] of worker\n"
	">       deeper than the frame limit 127: raise it (up to 1024)\n";

START_TEST(stacks_that_ended_early_are_listed_most_first_with_their_remedies)
{
	PR_OPTS(pr_quality_report_opts, o, .prefix = "> ");
	struct pr_quality *q = new_quality();

	add_n(q, 4, PR_END_TRUNCATED, 4096, false);   /* the kernel stopped short */
	add_n(q, 3, PR_END_TRUNCATED, 8192, false);   /* the copy was too small */
	add_n(q, 2, PR_END_TRUNCATED, 8192, true);
	add_n(q, 1, PR_END_DEPTH, 8192, false);
	add_n(q, 5, PR_END_OUTERMOST, 8192, false);
	assert_report(q, &o, 4, early_rows);
}
END_TEST

/* auto: a stack the copy cut whose chain tail stopped at code without a
 * frame pointer is told apart from one the copy alone cut. */
START_TEST(a_chain_tail_stopped_by_code_without_frame_pointers_says_so)
{
	static const struct pr_frame frames[] = {
		{ .ip = 0x7f0000001000 },
		{ .ip = 0x7f0000002000, .flags = PR_FRAME_CHAIN },
	};
	PR_OPTS(pr_quality_report_opts, o, .prefix = "> ");
	struct pr_quality *q = new_quality();
	struct pr_record rec = { .type = PR_RECORD_SAMPLE, .pid = 42, .tid = 42 };
	struct pr_stack st = { .frames = frames, .nr = 2, .end = PR_END_TRUNCATED };

	rec.u.sample.stack_dyn_size = 8192;
	ck_assert_int_eq(pr_quality_add(q, &rec, &st, NULL, "worker", false), 0);
	ck_assert_int_eq(pr_quality_add(q, &rec, &st, NULL, "worker", false), 0);
	add_n(q, 1, PR_END_TRUNCATED, 8192, false);
	assert_report(q, &o, 2,
		      "> stacks that ended early, by binary and why:\n"
		      ">          2  66.7%  no frame ptr    [code in no file] of worker\n"
		      ">       the stack copy ran out, and the frame-pointer chain that went on "
		      "from it stops at this code, built without frame pointers (its CFI says so): "
		      "a larger stack size (up to 65528) lets DWARF unwind through it\n"
		      ">          1  33.3%  truncated       [code in no file] of worker\n"
		      ">       the 8192-byte stack copy ran out here: a larger stack size (up to "
		      "65528)\n");
}
END_TEST

/* A stack that ended at an address no mapping holds is not JIT code (in
 * anonymous memory) and is not told to start a runtime with a perf map:
 * LSan's tracer thread, begun by a raw clone(), returns to 0x3d. */
START_TEST(a_stack_ended_in_no_mapping_is_not_called_jit)
{
	static const struct pr_frame frames[] = {
		{ .ip = 0x7f0000001000 },
		{ .ip = 0x3c },
	};
	PR_OPTS(pr_quality_report_opts, o, .prefix = "> ");
	struct pr_quality *q = new_quality();
	struct pr_record rec = { .type = PR_RECORD_SAMPLE, .pid = 42, .tid = 42 };
	struct pr_stack st = { .frames = frames, .nr = 2, .end = PR_END_NO_MAPPING };

	ck_assert_int_eq(pr_quality_add(q, &rec, &st, NULL, "worker", false), 0);
	assert_report(q, &o, 1,
		      "> stacks that ended early, by binary and why:\n"
		      ">          1 100.0%  no mapping      [no mapping] of worker\n"
		      ">       the last return address found is in no mapping: not JIT code but "
		      "a frame whose caller's address was none (a thread begun by a raw clone(), "
		      "as the sanitizers' tracer threads are) or a stack overwritten\n");
}
END_TEST

/* The default depth limit is the most there is: nothing to raise. */
START_TEST(stacks_at_the_default_depth_limit_say_the_copy_did_not_end_them)
{
	PR_OPTS(pr_quality_opts, qo, .stack_size = 8192);
	PR_OPTS(pr_quality_report_opts, o, .max_depth_name = "--max-depth");
	struct pr_quality *q = pr_quality_new(&qo);
	char *text;
	int rows;

	ck_assert_ptr_nonnull(q);
	add_n(q, 3, PR_END_DEPTH, 8192, false);
	text = report_of(q, &o, &rows);
	ck_assert_int_eq(rows, 1);
	ck_assert_ptr_nonnull(strstr(text, "depth limit"));
	ck_assert_ptr_nonnull(strstr(text, "\n      deeper than --max-depth 1024, the most there "
					   "is: the stack copy was not what ended these\n"));
	free(text);
	pr_quality_free(q);
}
END_TEST

START_TEST(the_remedies_name_the_settings_as_the_caller_does)
{
	PR_OPTS(pr_quality_report_opts, o, .stack_size_name = "--stack-size",
		.max_depth_name = "--max-depth", .log_name = "-v", .kernel_name = "-k");
	struct pr_quality *q = new_quality();
	char *text;
	int rows;

	add_n(q, 4, PR_END_TRUNCATED, 8192, false);
	add_n(q, 3, PR_END_DEPTH, 8192, false);
	add_n(q, 2, PR_END_ERROR, 8192, false);
	add_n(q, 1, PR_END_NO_USER, 0, false);
	text = report_of(q, &o, &rows);
	ck_assert_int_eq(rows, 4);
	ck_assert_ptr_nonnull(strstr(text, "\n      the 8192-byte stack copy ran out here: a "
					   "larger --stack-size (up to 65528)\n"));
	ck_assert_ptr_nonnull(strstr(text, "\n      deeper than --max-depth 127: raise it "
					   "(up to 1024)\n"));
	ck_assert_ptr_nonnull(strstr(text, "\n      the unwinder could not go on (-v says why): "
					   "please report it with the capture\n"));
	ck_assert_ptr_nonnull(strstr(text, "\n      no user registers (kernel threads): -k "
					   "shows their kernel stacks\n"));
	free(text);
	pr_quality_free(q);
}
END_TEST

/* `n` samples as the session hands them to the sink: of the off-CPU
 * event's switches out when `off_cpu`, their stacks copied `dyn` bytes
 * and ended by the copy. */
static void sink_n(const struct pr_sink *sink, int n, uint64_t dyn, bool off_cpu)
{
	static const struct pr_frame frame = { .ip = 0x7f0000001000 };
	struct pr_record rec = { .type = PR_RECORD_SAMPLE, .pid = 42, .tid = 42 };
	struct pr_stack st = { .frames = &frame, .nr = 1, .end = PR_END_TRUNCATED };
	struct pr_sink_sample smp = { .rec = &rec, .st = &st, .process = "worker",
				      .off_cpu = off_cpu };

	rec.u.sample.stack_dyn_size = dyn;
	for (int i = 0; i < n; i++)
		ck_assert_int_eq(sink->sample(sink->ctx, &smp), 0);
}

START_TEST(a_waits_stack_cut_short_names_the_off_cpu_copy)
{
	PR_OPTS(pr_quality_opts, qo, .stack_size = 16384, .off_cpu_stack_size = 512,
		.max_depth = 127);
	PR_OPTS(pr_quality_report_opts, o, .prefix = "> ", .stack_size_name = "--stack-size",
		.off_cpu_stack_size_name = "--off-cpu-stack-size");
	struct pr_quality *q = pr_quality_new(&qo);
	struct pr_sink sink;
	char *text;
	int rows;

	ck_assert_ptr_nonnull(q);
	ck_assert_int_eq(pr_quality_sink(q, &sink), 0);
	/* --wall: waits' stacks copied 512 bytes at each switch out, CPU
	 * samples' 16384; a copy the kernel ended early is told by the
	 * size its own event asked for. */
	sink_n(&sink, 4, 512, true);
	sink_n(&sink, 3, 16384, false);
	sink_n(&sink, 2, 256, true);
	sink_n(&sink, 1, 512, false);
	text = report_of(q, NULL, &rows);
	ck_assert_int_eq(rows, 4);
	/* The library's words, where the caller gives none. */
	ck_assert_ptr_nonnull(strstr(text, "\n      the 512-byte stack copy at the switch out ran "
					   "out here: a larger off-CPU stack size (up to 65528)\n"));
	free(text);
	assert_report(q, &o, 4,
		      "> stacks that ended early, by binary and why:\n"
		      ">          4  40.0%  truncated       [code in no file] of worker\n"
		      ">       the 512-byte stack copy at the switch out ran out here: a larger "
		      "--off-cpu-stack-size (up to 65528)\n"
		      ">          3  30.0%  truncated       [code in no file] of worker\n"
		      ">       the 16384-byte stack copy ran out here: a larger --stack-size (up "
		      "to 65528)\n"
		      ">          2  20.0%  page missing    [code in no file] of worker\n"
		      ">       the kernel copied less of the stack than the 512 bytes asked: the "
		      "next page was not in memory when the sample was taken (a frame just "
		      "pushed onto a new page, or one swapped out); a larger "
		      "--off-cpu-stack-size does not help\n"
		      ">          1  10.0%  page missing    [code in no file] of worker\n"
		      ">       the kernel copied less of the stack than the 16384 bytes asked: "
		      "the next page was not in memory when the sample was taken (a frame "
		      "just pushed onto a new page, or one swapped out); a larger "
		      "--stack-size does not help\n");
}
END_TEST

START_TEST(rows_under_the_share_asked_and_past_the_limit_are_left_out)
{
	PR_OPTS(pr_quality_report_opts, o, .max_rows = 1);
	struct pr_quality *q = new_quality();
	char *text;
	int rows;

	add_n(q, 99, PR_END_TRUNCATED, 8192, false);
	add_n(q, 1, PR_END_DEPTH, 8192, false);
	text = report_of(q, &o, &rows);
	ck_assert_int_eq(rows, 1);
	ck_assert_ptr_nonnull(strstr(text, "truncated"));
	ck_assert_ptr_null(strstr(text, "depth limit"));
	free(text);
	/* 1 % and more: the depth limit's one sample in a hundred stays. */
	o.max_rows = 0;
	o.permille = 10;
	text = report_of(q, &o, &rows);
	ck_assert_int_eq(rows, 2);
	free(text);
	o.permille = 11;
	text = report_of(q, &o, &rows);
	ck_assert_int_eq(rows, 1);
	ck_assert_ptr_null(strstr(text, "depth limit"));
	free(text);
	pr_quality_free(q);
}
END_TEST

START_TEST(shares_merge_into_the_rows_one_would_have_counted)
{
	PR_OPTS(pr_quality_report_opts, o, .prefix = "> ");
	struct pr_quality *q = new_quality(), *share = new_quality();

	add_n(q, 3, PR_END_TRUNCATED, 4096, false);
	add_n(q, 3, PR_END_TRUNCATED, 8192, false);
	add_n(q, 5, PR_END_OUTERMOST, 8192, false);
	add_n(share, 1, PR_END_TRUNCATED, 4096, false);
	add_n(share, 2, PR_END_TRUNCATED, 8192, true);
	add_n(share, 1, PR_END_DEPTH, 8192, false);
	ck_assert_int_eq(pr_quality_merge(q, share), 0);
	pr_quality_free(share);
	assert_report(q, &o, 4, early_rows);
}
END_TEST

START_TEST(nothing_to_report_writes_nothing)
{
	struct pr_quality *q = new_quality();

	add_n(q, 5, PR_END_OUTERMOST, 8192, false);
	assert_report(q, NULL, 0, "");
}
END_TEST

START_TEST(bad_arguments_are_refused)
{
	struct pr_quality_opts bad = { .sz = 1 };
	struct pr_quality_report_opts bad_report = { .sz = 1 };
	struct pr_record rec = { .type = PR_RECORD_SAMPLE };
	struct pr_stack st = { .end = PR_END_OUTERMOST };
	struct pr_quality *q = new_quality();
	struct pr_sink sink;

	errno = 0;
	ck_assert_ptr_null(pr_quality_new(&bad));
	ck_assert_int_eq(errno, EINVAL);
	ck_assert_int_eq(pr_quality_add(NULL, &rec, &st, NULL, NULL, false), -EINVAL);
	ck_assert_int_eq(pr_quality_add(q, NULL, &st, NULL, NULL, false), -EINVAL);
	ck_assert_int_eq(pr_quality_merge(q, NULL), -EINVAL);
	ck_assert_int_eq(pr_quality_sink(NULL, &sink), -EINVAL);
	ck_assert_int_eq(pr_quality_report(NULL, stdout, NULL), -EINVAL);
	ck_assert_int_eq(pr_quality_report(q, NULL, NULL), -EINVAL);
	ck_assert_int_eq(pr_quality_report(q, stdout, &bad_report), -EINVAL);
	pr_quality_free(q);
	pr_quality_free(NULL);
}
END_TEST

/* The demo fixture's report through a session of `workers`, with its
 * binary or without, frames named; `o` for the report. */
static char *fixture_report(size_t workers, bool with_binary,
			    const struct pr_quality_report_opts *o, int *rows)
{
	PR_OPTS(pr_symbolizer_opts, sy);
	struct pr_quality *q = pr_quality_new(NULL);
	struct demo_replay d;
	struct pr_sink sink;
	char *text;

	ck_assert_ptr_nonnull(q);
	demo_replay_open(&d, workers, with_binary, &sy);
	ck_assert_int_eq(pr_quality_sink(q, &sink), 0);
	ck_assert_int_eq(pr_session_add_sink(d.ses, &sink), 0);
	demo_replay_run(&d);
	/* Its rows name the models' files: reported before they go. */
	text = report_of(q, o, rows);
	pr_quality_free(q);
	demo_replay_close(&d);
	return text;
}

START_TEST(a_recording_replayed_without_its_binary_says_where_to_put_it)
{
	PR_OPTS(pr_quality_report_opts, o, .debug_dir_name = "--debug-dir");
	char *one, *three;
	int rows;

	one = fixture_report(0, false, &o, &rows);
	ck_assert_int_eq(rows, 2);
	ck_assert_ptr_eq(strstr(one, "stacks that ended early, by binary and why:\n"
				     "       197 100.0%  no unwind info  " DEMO_BINARY "\n"
				     "      the file was not found here: a copy of it (or of its "
				     "debug file) by build-id in a --debug-dir\n"
				     "frames nothing names, by binary:\n"
				     "       197 100.0%  no symbols      " DEMO_BINARY "\n"
				     "      no symbols: build it with -g, or keep its debug file and "
				     "pass --debug-dir; DEBUGINFOD_URLS="),
			 one);
	/* Three workers' shares, merged: the same report. */
	three = fixture_report(3, false, &o, &rows);
	ck_assert_int_eq(rows, 2);
	ck_assert_str_eq(three, one);
	free(three);
	free(one);
}
END_TEST

START_TEST(a_recording_replayed_with_its_binary_has_nothing_to_report)
{
	char *text;
	int rows;

	text = fixture_report(0, true, NULL, &rows);
	ck_assert_int_eq(rows, 0);
	ck_assert_str_eq(text, "");
	free(text);
}
END_TEST

static Suite *quality_suite(void)
{
	Suite *s = suite_create("quality");
	TCase *tc = tcase_create("quality");

	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, stacks_that_ended_early_are_listed_most_first_with_their_remedies);
	tcase_add_test(tc, the_remedies_name_the_settings_as_the_caller_does);
	tcase_add_test(tc, a_waits_stack_cut_short_names_the_off_cpu_copy);
	tcase_add_test(tc, stacks_at_the_default_depth_limit_say_the_copy_did_not_end_them);
	tcase_add_test(tc, a_chain_tail_stopped_by_code_without_frame_pointers_says_so);
	tcase_add_test(tc, a_stack_ended_in_no_mapping_is_not_called_jit);
	tcase_add_test(tc, rows_under_the_share_asked_and_past_the_limit_are_left_out);
	tcase_add_test(tc, shares_merge_into_the_rows_one_would_have_counted);
	tcase_add_test(tc, nothing_to_report_writes_nothing);
	tcase_add_test(tc, bad_arguments_are_refused);
	tcase_add_test(tc, a_recording_replayed_without_its_binary_says_where_to_put_it);
	tcase_add_test(tc, a_recording_replayed_with_its_binary_has_nothing_to_report);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	return run_suite(quality_suite());
}
