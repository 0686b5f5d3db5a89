/* SPDX-License-Identifier: Apache-2.0 */
/*
 * perf script's text (prscript.h) with off-CPU time: a switch-out sample
 * is printed when its wait ends (event "offcpu-time", as perf names its
 * own, the wait's ns as the period, the time it ended, so the text stays
 * in time order), CPU samples as they come, and the times are counted as a profile
 * counts them.  And with several events, each sample named by its own.
 * Frames are unnamed addresses (no symbolizer).  Through the shared
 * library only, as the command uses it.
 */
#include <check.h>
#include <errno.h>
#include <linux/perf_event.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "checkmain.h"
#include "perfreader.h"

#define MS 1000000ull

static const struct pr_frame frames[] = { { .ip = 0x1010, .dso_ip = 0x1010 },
					  { .ip = 0x2020, .dso_ip = 0x2020 } };
static const struct pr_stack one = { .frames = frames, .nr = 1 };
static const struct pr_stack two = { .frames = frames, .nr = 2 };

/* What the writer under test wrote, in memory. */
static FILE *out;
static char *text;
static size_t text_len;

static void setup(void)
{
	text = NULL;
	out = open_memstream(&text, &text_len);
	ck_assert_ptr_nonnull(out);
}

static void teardown(void)
{
	if (out)
		fclose(out);
	free(text);
}

/* Free `s` and have its text. */
static const char *written(struct pr_script *s)
{
	pr_script_free(s);
	ck_assert_int_eq(fclose(out), 0);
	out = NULL;
	return text ? text : "";
}

static struct pr_record rec(uint32_t type, uint16_t misc, uint32_t tid, uint64_t time)
{
	return (struct pr_record){ .type = type, .misc = misc, .pid = 100, .tid = tid,
				   .time = time, .cpu = 1,
				   .fields = PR_ID_TID | PR_ID_TIME | PR_ID_CPU };
}

/* perf script's defaults, with CPU samples' periods in ns and waits
 * under 1 us left out; "offcpu-time" is the longest event name. */
static struct pr_script *open_script(void)
{
	PR_OPTS(pr_script_opts, o, .period_is_ns = true, .freq = 1000, .off_cpu_min_ns = 1000,
		.event_width = (int)strlen(PR_SCRIPT_OFFCPU_EVENT));
	struct pr_script *s = pr_script_new(out, &o);

	ck_assert_ptr_nonnull(s);
	return s;
}

static void cpu(struct pr_script *s, uint32_t tid, uint64_t time)
{
	struct pr_record r = rec(PR_RECORD_SAMPLE, PERF_RECORD_MISC_USER, tid, time);

	r.u.sample.period = MS;
	ck_assert_int_eq(pr_script_sample(s, NULL, &r, &one, "app", "app", "cpu-clock"), 0);
}

/* Thread `tid` leaves the CPU at `time`, blocked or preempted. */
static void switch_out(struct pr_script *s, uint32_t tid, uint64_t time, bool preempted)
{
	struct pr_record smp = rec(PR_RECORD_SAMPLE, PERF_RECORD_MISC_KERNEL, tid, time);
	struct pr_record sw = rec(PR_RECORD_SWITCH, PERF_RECORD_MISC_SWITCH_OUT |
				(preempted ? PERF_RECORD_MISC_SWITCH_OUT_PREEMPT : 0), tid, time);

	ck_assert_int_eq(pr_script_switch(s, NULL, &smp, &two, "app", "app"), 0);
	ck_assert_int_eq(pr_script_apply(s, &sw), 0);
}

static void switch_in(struct pr_script *s, uint32_t tid, uint64_t time)
{
	struct pr_record r = rec(PR_RECORD_SWITCH, 0, tid, time);

	ck_assert_int_eq(pr_script_apply(s, &r), 0);
}

#define CPU_SAMPLE(tid, time)                                                    \
	"app " tid " [001] " time ":    1000000   cpu-clock: \n"                 \
	"\t            1010 [unknown] ([unknown])\n\n"
#define OFF_SAMPLE(time, ns)                                                     \
	"app     7 [001] " time ": " ns " offcpu-time: \n"                          \
	"\t            1010 [unknown] ([unknown])\n"                              \
	"\t            2020 [unknown] ([unknown])\n\n"

START_TEST(an_off_cpu_sample_is_printed_at_its_wait_end_with_its_length_as_period)
{
	struct pr_script *s = open_script();
	struct pr_profile_times t = { .sz = sizeof(t) };

	cpu(s, 7, 1 * MS);
	switch_out(s, 7, 3 * MS, false);
	/* Another thread runs meanwhile: printed as it comes. */
	cpu(s, 8, 4 * MS);
	switch_in(s, 7, 8 * MS);
	/* 500 ns off the CPU: under the minimum, not printed. */
	switch_out(s, 7, 9 * MS, false);
	switch_in(s, 7, 9 * MS + 500);
	switch_out(s, 7, 10 * MS, true);
	ck_assert_int_eq(pr_script_end(s, 12 * MS), 0);

	ck_assert_int_eq(pr_script_times(s, 100, &t), 0);
	ck_assert_uint_eq(t.samples, 2);
	ck_assert_uint_eq(t.cpu_ns, 2 * MS);
	ck_assert_uint_eq(t.waits[PR_WAIT_BLOCKED], 1);
	ck_assert_uint_eq(t.off_cpu_ns[PR_WAIT_BLOCKED], 5 * MS);
	ck_assert_uint_eq(t.waits[PR_WAIT_PREEMPTED], 1);
	ck_assert_uint_eq(t.off_cpu_ns[PR_WAIT_PREEMPTED], 2 * MS);
	ck_assert_uint_eq(t.waits_short, 1);
	ck_assert_uint_eq(t.waits_lost, 0);
	memset(&t, 0, sizeof(t));
	t.sz = sizeof(t);
	ck_assert_int_eq(pr_script_times(s, 0, &t), 0);
	ck_assert_uint_eq(t.samples, 2);
	ck_assert_uint_eq(t.off_cpu_ns[PR_WAIT_PREEMPTED], 2 * MS);
	memset(&t, 0, sizeof(t));
	t.sz = sizeof(t);
	ck_assert_int_eq(pr_script_times(s, 101, &t), 0);
	ck_assert_uint_eq(t.samples, 0);
	ck_assert_int_eq(pr_script_error(s), 0);

	/* The event names aligned, as perf script aligns them. */
	ck_assert_str_eq(written(s), CPU_SAMPLE("    7", "    0.001000")
				     CPU_SAMPLE("    8", "    0.004000")
				     OFF_SAMPLE("    0.008000", "   5000000")
				     OFF_SAMPLE("    0.012000", "   2000000"));
}
END_TEST

START_TEST(a_wait_without_its_sample_is_counted_lost)
{
	struct pr_script *s = open_script();
	struct pr_record o = rec(PR_RECORD_SWITCH, PERF_RECORD_MISC_SWITCH_OUT, 7, 1 * MS);
	struct pr_profile_times t = { .sz = sizeof(t) };

	ck_assert_int_eq(pr_script_apply(s, &o), 0);
	switch_in(s, 7, 2 * MS);
	ck_assert_int_eq(pr_script_times(s, 100, &t), 0);
	ck_assert_uint_eq(t.waits_lost, 1);
	ck_assert_str_eq(written(s), "");
}
END_TEST

/* Under ASan the held samples would leak if freeing did not free them. */
START_TEST(freeing_with_waits_open_frees_them_unprinted)
{
	struct pr_script *s = open_script();
	struct pr_record idle = rec(PR_RECORD_SAMPLE, PERF_RECORD_MISC_KERNEL, 0, 1 * MS);

	switch_out(s, 7, 1 * MS, false);
	switch_out(s, 8, 2 * MS, true);
	/* The idle task's switches are no waits, and hold nothing. */
	ck_assert_int_eq(pr_script_switch(s, NULL, &idle, &two, "swapper", "swapper"), 0);
	ck_assert_str_eq(written(s), "");
}
END_TEST

START_TEST(the_processes_are_listed_busiest_first_by_name)
{
	struct pr_script *s = open_script();
	struct pr_record other = rec(PR_RECORD_SAMPLE, PERF_RECORD_MISC_USER, 9, 1 * MS);
	struct pr_profile_times t = { .sz = sizeof(t) };
	uint32_t pids[4] = { 0 };

	other.pid = 200;
	other.u.sample.period = 3 * MS;
	ck_assert_int_eq(pr_script_sample(s, NULL, &other, &one, "db", "db", NULL), 0);
	cpu(s, 7, 2 * MS);
	ck_assert_int_eq(pr_script_times(s, 0, &t), 0);
	ck_assert_uint_eq(t.cpu_ns, 4 * MS);
	ck_assert_uint_eq(t.waits[PR_WAIT_BLOCKED] + t.waits[PR_WAIT_PREEMPTED], 0);
	ck_assert_uint_eq(pr_script_pids(s, NULL, 0), 2);
	ck_assert_uint_eq(pr_script_pids(s, pids, 4), 2);
	ck_assert_uint_eq(pids[0], 200);
	ck_assert_uint_eq(pids[1], 100);
	ck_assert_str_eq(pr_script_process(s, 200), "db");
	ck_assert_str_eq(pr_script_process(s, 100), "app");
	ck_assert_ptr_null(pr_script_process(s, 300));
	ck_assert_int_eq(pr_script_times(s, 200, &t), 0);
	ck_assert_uint_eq(t.cpu_ns, 3 * MS);
	ck_assert_int_eq(pr_script_times(s, 100, &t), 0);
	ck_assert_uint_eq(t.cpu_ns, 1 * MS);
	written(s);
}
END_TEST

static const char *const EVENTS[] = { "page-faults:u", "minor-faults", "task-clock" };

/* A sample of event `idx` at `time` (ms) standing for `period` events. */
static void event_sample(struct pr_script *s, size_t idx, uint64_t time, uint64_t period)
{
	struct pr_record r = rec(PR_RECORD_SAMPLE, PERF_RECORD_MISC_USER, 7, time * MS);

	r.u.sample.period = period;
	ck_assert_int_eq(pr_script_sample(s, NULL, &r, idx ? &two : &one, "app", "app",
					  EVENTS[idx]), 0);
}

START_TEST(each_sample_is_named_by_its_event_aligned_as_perf_script_does)
{
	PR_OPTS(pr_script_opts, o, .event_width = (int)strlen(EVENTS[0]));
	struct pr_script *s = pr_script_new(out, &o);

	ck_assert_ptr_nonnull(s);
	event_sample(s, 0, 1, 1);
	event_sample(s, 1, 2, 1);
	event_sample(s, 2, 3, 250000);
	/* As perf 6.1 prints `perf record -e page-faults:u,minor-faults,
	 * task-clock`'s samples: right-aligned to the longest name. */
	ck_assert_str_eq(written(s), "app     7 [001]     0.001000:          1 page-faults:u: \n"
				     "\t            1010 [unknown] ([unknown])\n\n"
				     "app     7 [001]     0.002000:          1  minor-faults: \n"
				     "\t            1010 [unknown] ([unknown])\n"
				     "\t            2020 [unknown] ([unknown])\n\n"
				     "app     7 [001]     0.003000:     250000    task-clock: \n"
				     "\t            1010 [unknown] ([unknown])\n"
				     "\t            2020 [unknown] ([unknown])\n\n");
}
END_TEST

START_TEST(the_fields_are_parsed_by_perf_script_names)
{
	uint32_t fields = 0;
	const char *bad = NULL;
	size_t len = 0;
	const char *list = "comm,nosuch,ip";

	ck_assert_int_eq(pr_script_fields_parse("comm,tid,time,ip,sym,symoff,dso", &fields, NULL,
						NULL), 0);
	ck_assert_uint_eq(fields, PR_SCRIPT_COMM | PR_SCRIPT_TID | PR_SCRIPT_TIME | PR_SCRIPT_IP |
				  PR_SCRIPT_SYM | PR_SCRIPT_SYMOFF | PR_SCRIPT_DSO);
	/* perf prints symoff only with sym. */
	ck_assert_int_eq(pr_script_fields_parse("ip,symoff,srcline", &fields, NULL, NULL), 0);
	ck_assert_uint_eq(fields, PR_SCRIPT_IP | PR_SCRIPT_SRCLINE);
	ck_assert_int_eq(pr_script_fields_parse(list, &fields, &bad, &len), -EINVAL);
	ck_assert_ptr_eq(bad, list + 5);
	ck_assert_uint_eq(len, 6);
	/* Unchanged by the failure. */
	ck_assert_uint_eq(fields, PR_SCRIPT_IP | PR_SCRIPT_SRCLINE);
}
END_TEST

START_TEST(the_fields_asked_for_are_the_ones_written)
{
	PR_OPTS(pr_script_opts, o, .fields = PR_SCRIPT_COMM | PR_SCRIPT_PID | PR_SCRIPT_TID |
					     PR_SCRIPT_IP | PR_SCRIPT_DSO);
	struct pr_script *s = pr_script_new(out, &o);
	struct pr_record r = rec(PR_RECORD_SAMPLE, PERF_RECORD_MISC_USER, 7, 1 * MS);

	ck_assert_ptr_nonnull(s);
	ck_assert_int_eq(pr_script_sample(s, NULL, &r, &one, NULL, NULL, "cycles"), 0);
	/* A thread without a name is ":TID", as perf prints it. */
	ck_assert_str_eq(written(s), ":7   100/7     \n"
				     "\t            1010 ([unknown])\n\n");
}
END_TEST

START_TEST(a_failed_write_is_returned_and_kept_as_its_errno)
{
	FILE *full = fopen("/dev/full", "w");
	struct pr_script *s;
	struct pr_record r = rec(PR_RECORD_SAMPLE, PERF_RECORD_MISC_USER, 7, 1 * MS);

	ck_assert_ptr_nonnull(full);
	setvbuf(full, NULL, _IONBF, 0);
	s = pr_script_new(full, NULL);
	ck_assert_ptr_nonnull(s);
	ck_assert_int_eq(pr_script_sample(s, NULL, &r, &one, "app", "app", NULL), -ENOSPC);
	ck_assert_int_eq(pr_script_error(s), -ENOSPC);
	pr_script_free(s);
	fclose(full);
}
END_TEST

START_TEST(bad_arguments_are_refused)
{
	PR_OPTS(pr_script_opts, o, .fields = 1u << 30);
	struct pr_profile_times t = { .sz = sizeof(t) };

	errno = 0;
	ck_assert_ptr_null(pr_script_new(NULL, NULL));
	ck_assert_int_eq(errno, EINVAL);
	errno = 0;
	ck_assert_ptr_null(pr_script_new(out, &o));
	ck_assert_int_eq(errno, EINVAL);
	/* NULL is "none" to the getters and the destructor. */
	ck_assert_int_eq(pr_script_error(NULL), -EINVAL);
	ck_assert_int_eq(pr_script_times(NULL, 0, &t), -EINVAL);
	ck_assert_uint_eq(pr_script_pids(NULL, NULL, 0), 0);
	ck_assert_ptr_null(pr_script_process(NULL, 1));
	pr_script_free(NULL);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("sink-offcpu");
	TCase *tc = tcase_create("perf-script");

	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, an_off_cpu_sample_is_printed_at_its_wait_end_with_its_length_as_period);
	tcase_add_test(tc, a_wait_without_its_sample_is_counted_lost);
	tcase_add_test(tc, freeing_with_waits_open_frees_them_unprinted);
	tcase_add_test(tc, the_processes_are_listed_busiest_first_by_name);
	tcase_add_test(tc, each_sample_is_named_by_its_event_aligned_as_perf_script_does);
	tcase_add_test(tc, the_fields_are_parsed_by_perf_script_names);
	tcase_add_test(tc, the_fields_asked_for_are_the_ones_written);
	tcase_add_test(tc, a_failed_write_is_returned_and_kept_as_its_errno);
	tcase_add_test(tc, bad_arguments_are_refused);
	suite_add_tcase(s, tc);
	return run_suite(s);
}
