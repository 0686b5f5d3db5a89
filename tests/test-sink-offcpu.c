/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The perf-script sink (tools/cli/output.c) with off-CPU time: a switch-out
 * sample is printed when its wait ends, as perf prints its off-CPU
 * samples (event "offcpu-time", the wait's ns as the period, the time it
 * began), CPU samples as they come, and the times are counted as a
 * profile counts them.  And with several events: each sample named by
 * its own, and the one a profile's flame graph shows.  Frames are
 * unnamed addresses (no symbolizer).
 */
#include <check.h>
#include <linux/perf_event.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "checkmain.h"
#include "cli.h"
#include "output.h"

#define MS 1000000ull

/* tools/cli/cli.c's, which the sink reports through. */
void ds_err(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
}

void ds_log(enum pr_log_level level, const char *msg, void *ctx)
{
	(void)level;
	(void)ctx;
	fprintf(stderr, "%s\n", msg);
}

static const struct pr_frame frames[] = { { .ip = 0x1010, .dso_ip = 0x1010 },
					  { .ip = 0x2020, .dso_ip = 0x2020 } };
static const struct pr_stack one = { .frames = frames, .nr = 1 };
static const struct pr_stack two = { .frames = frames, .nr = 2 };

static char dir[32], path[64];

static void setup(void)
{
	snprintf(dir, sizeof(dir), "/tmp/ds-sink-XXXXXX");
	ck_assert_ptr_nonnull(mkdtemp(dir));
	snprintf(path, sizeof(path), "%s/out.txt", dir);
}

static void teardown(void)
{
	unlink(path);
	rmdir(dir);
}

static struct pr_record rec(uint32_t type, uint16_t misc, uint32_t tid, uint64_t time)
{
	return (struct pr_record){ .type = type, .misc = misc, .pid = 100, .tid = tid,
				   .time = time, .cpu = 1,
				   .fields = PR_ID_TID | PR_ID_TIME | PR_ID_CPU };
}

static struct ds_sink *open_sink(enum pr_profile_mode mode)
{
	struct ds_output_opts o = { .mode = mode, .period_is_ns = true,
				    .off_cpu_min_ns = 1000 };
	struct ds_sink *s = ds_sink_open(&o, DS_FORMAT_PERF_SCRIPT, path, 1000, "cpu-clock", 9);

	ck_assert_ptr_nonnull(s);
	return s;
}

static void cpu(struct ds_sink *s, uint32_t tid, uint64_t time)
{
	struct pr_record r = rec(PR_RECORD_SAMPLE, PERF_RECORD_MISC_USER, tid, time);

	r.u.sample.period = MS;
	ck_assert_int_eq(ds_sink_sample(s, &r, &one, NULL, "app", "app", NULL), 0);
}

/* Thread `tid` leaves the CPU at `time`, blocked or preempted. */
static void out(struct ds_sink *s, uint32_t tid, uint64_t time, bool preempted)
{
	struct pr_record smp = rec(PR_RECORD_SAMPLE, PERF_RECORD_MISC_KERNEL, tid, time);
	struct pr_record sw = rec(PR_RECORD_SWITCH, PERF_RECORD_MISC_SWITCH_OUT |
				(preempted ? PERF_RECORD_MISC_SWITCH_OUT_PREEMPT : 0), tid, time);

	ck_assert_int_eq(ds_sink_switch(s, &smp, &two, NULL, "app", "app"), 0);
	ck_assert_int_eq(ds_sink_record(s, &sw), 0);
}

static void in(struct ds_sink *s, uint32_t tid, uint64_t time)
{
	struct pr_record r = rec(PR_RECORD_SWITCH, 0, tid, time);

	ck_assert_int_eq(ds_sink_record(s, &r), 0);
}

static char *slurp(void)
{
	FILE *f = fopen(path, "r");
	char *buf = calloc(1, 1 << 16);
	size_t n;

	ck_assert_ptr_nonnull(f);
	ck_assert_ptr_nonnull(buf);
	n = fread(buf, 1, (1 << 16) - 1, f);
	buf[n] = '\0';
	fclose(f);
	return buf;
}

#define CPU_SAMPLE(tid, time)                                                    \
	"app " tid " [001] " time ":    1000000   cpu-clock: \n"                 \
	"\t            1010 [unknown] ([unknown])\n\n"
#define OFF_SAMPLE(time, ns)                                                     \
	"app     7 [001] " time ": " ns " offcpu-time: \n"                          \
	"\t            1010 [unknown] ([unknown])\n"                              \
	"\t            2020 [unknown] ([unknown])\n\n"

START_TEST(an_off_cpu_sample_is_printed_when_its_wait_ends_with_its_length_as_period)
{
	struct ds_sink *s = open_sink(PR_PROFILE_WALL);
	struct pr_profile_times t = { .sz = sizeof(t) };
	char *text;

	cpu(s, 7, 1 * MS);
	out(s, 7, 3 * MS, false);
	/* Another thread runs meanwhile: printed as it comes. */
	cpu(s, 8, 4 * MS);
	in(s, 7, 8 * MS);
	/* 500 ns off the CPU: under --off-cpu-min, not printed. */
	out(s, 7, 9 * MS, false);
	in(s, 7, 9 * MS + 500);
	out(s, 7, 10 * MS, true);
	ck_assert_int_eq(ds_sink_end(s, 12 * MS), 0);

	ck_assert_int_eq(ds_sink_times(s, 100, &t), 0);
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
	ck_assert_int_eq(ds_sink_times(s, 0, &t), 0);
	ck_assert_uint_eq(t.samples, 2);
	ck_assert_uint_eq(t.off_cpu_ns[PR_WAIT_PREEMPTED], 2 * MS);
	memset(&t, 0, sizeof(t));
	t.sz = sizeof(t);
	ck_assert_int_eq(ds_sink_times(s, 101, &t), 0);
	ck_assert_uint_eq(t.samples, 0);
	ck_assert_uint_eq(ds_sink_samples(s), 5);
	ck_assert_int_eq(ds_sink_close(s, 0, 0, false), 0);

	text = slurp();
	/* The event names aligned, as perf script aligns them. */
	ck_assert_str_eq(text, CPU_SAMPLE("    7", "    0.001000")
			       CPU_SAMPLE("    8", "    0.004000")
			       OFF_SAMPLE("    0.003000", "   5000000")
			       OFF_SAMPLE("    0.010000", "   2000000"));
	free(text);
}
END_TEST

START_TEST(a_wait_without_its_sample_is_counted_lost)
{
	struct ds_sink *s = open_sink(PR_PROFILE_OFF_CPU);
	struct pr_record o = rec(PR_RECORD_SWITCH, PERF_RECORD_MISC_SWITCH_OUT, 7, 1 * MS);
	struct pr_profile_times t = { .sz = sizeof(t) };
	char *text;

	ck_assert_int_eq(ds_sink_record(s, &o), 0);
	in(s, 7, 2 * MS);
	ck_assert_int_eq(ds_sink_times(s, 100, &t), 0);
	ck_assert_uint_eq(t.waits_lost, 1);
	ck_assert_int_eq(ds_sink_close(s, 0, 0, false), 0);
	text = slurp();
	ck_assert_str_eq(text, "");
	free(text);
}
END_TEST

/* Under ASan the held samples would leak if closing did not free them. */
START_TEST(closing_with_waits_open_frees_them_unprinted)
{
	struct ds_sink *s = open_sink(PR_PROFILE_OFF_CPU);
	struct pr_record idle = rec(PR_RECORD_SAMPLE, PERF_RECORD_MISC_KERNEL, 0, 1 * MS);
	char *text;

	out(s, 7, 1 * MS, false);
	out(s, 8, 2 * MS, true);
	/* The idle task's switches are no waits, and hold nothing. */
	ck_assert_int_eq(ds_sink_switch(s, &idle, &two, NULL, "swapper", "swapper"), 0);
	ck_assert_int_eq(ds_sink_close(s, 0, 0, false), 0);
	text = slurp();
	ck_assert_str_eq(text, "");
	free(text);
}
END_TEST

START_TEST(the_summary_lists_processes_busiest_first_by_name)
{
	struct ds_sink *s = open_sink(PR_PROFILE_WALL);
	struct pr_record other = rec(PR_RECORD_SAMPLE, PERF_RECORD_MISC_USER, 9, 1 * MS);
	char err_path[80], *text;
	FILE *f;
	int saved = dup(STDERR_FILENO);

	other.pid = 200;
	other.u.sample.period = 3 * MS;
	ck_assert_int_eq(ds_sink_sample(s, &other, &one, NULL, "db", "db", NULL), 0);
	cpu(s, 7, 2 * MS);
	snprintf(err_path, sizeof(err_path), "%s/err.txt", dir);
	f = fopen(err_path, "w");
	ck_assert_ptr_nonnull(f);
	fflush(stderr);
	ck_assert_int_ge(dup2(fileno(f), STDERR_FILENO), 0);
	ds_sink_print_times(s);
	fflush(stderr);
	dup2(saved, STDERR_FILENO);
	close(saved);
	fclose(f);
	ck_assert_int_eq(ds_sink_close(s, 0, 0, false), 0);
	f = fopen(err_path, "r");
	text = calloc(1, 4096);
	ck_assert_ptr_nonnull(text);
	ck_assert_uint_gt(fread(text, 1, 4095, f), 0);
	fclose(f);
	unlink(err_path);
	ck_assert_msg(strstr(text, "dwarfsample: on-CPU 4.0 ms, off-CPU 0 us; 0 waits\n"
				   "dwarfsample:   db[200]: on-CPU 3.0 ms, off-CPU 0 us\n"
				   "dwarfsample:   app[100]: on-CPU 1.0 ms, off-CPU 0 us\n"), "%s", text);
	free(text);
}
END_TEST

static const char *const EVENTS[] = { "page-faults:u", "minor-faults", "task-clock" };

/* A sample of event `idx` at `time` (ms) standing for `period` events. */
static void event_sample(struct ds_sink *s, size_t idx, uint64_t time, uint64_t period)
{
	struct pr_record r = rec(PR_RECORD_SAMPLE, PERF_RECORD_MISC_USER, 7, time * MS);

	r.u.sample.period = period;
	ck_assert_int_eq(ds_sink_sample_event(s, idx, &r, idx ? &two : &one, NULL, "app", "app",
					      NULL), 0);
}

START_TEST(each_sample_is_named_by_its_event_aligned_as_perf_script_does)
{
	struct ds_output_opts o = { .events = EVENTS, .nr_events = 3 };
	struct ds_sink *s = ds_sink_open(&o, DS_FORMAT_PERF_SCRIPT, path, 0, NULL, 0);
	char *text;

	ck_assert_ptr_nonnull(s);
	event_sample(s, 0, 1, 1);
	event_sample(s, 1, 2, 1);
	event_sample(s, 2, 3, 250000);
	ck_assert_int_eq(ds_sink_close(s, 0, 0, false), 0);
	text = slurp();
	/* As perf 6.1 prints `perf record -e page-faults:u,minor-faults,
	 * task-clock`'s samples: right-aligned to the longest name. */
	ck_assert_str_eq(text, "app     7 [001]     0.001000:          1 page-faults:u: \n"
			       "\t            1010 [unknown] ([unknown])\n\n"
			       "app     7 [001]     0.002000:          1  minor-faults: \n"
			       "\t            1010 [unknown] ([unknown])\n"
			       "\t            2020 [unknown] ([unknown])\n\n"
			       "app     7 [001]     0.003000:     250000    task-clock: \n"
			       "\t            1010 [unknown] ([unknown])\n"
			       "\t            2020 [unknown] ([unknown])\n\n");
	free(text);
}
END_TEST

START_TEST(a_profile_shows_the_event_asked_for_and_refuses_one_it_lacks)
{
	struct ds_output_opts o = { .events = EVENTS, .nr_events = 3, .show_event = "cycles" };
	struct ds_sink *s = ds_sink_open(&o, PR_FORMAT_FOLDED, path, 0, NULL, 0);
	char *text;

	ck_assert_ptr_null(s);
	o.show_event = "page-faults";
	s = ds_sink_open(&o, PR_FORMAT_FOLDED, path, 0, NULL, 0);
	ck_assert_ptr_nonnull(s);
	event_sample(s, 0, 1, 3);
	event_sample(s, 2, 2, 250000);
	ck_assert_int_eq(ds_sink_close(s, 0, 0, false), 0);
	text = slurp();
	ck_assert_str_eq(text, "app;[unknown] 3\n");
	free(text);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("sink-offcpu");
	TCase *tc = tcase_create("perf-script");

	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, an_off_cpu_sample_is_printed_when_its_wait_ends_with_its_length_as_period);
	tcase_add_test(tc, a_wait_without_its_sample_is_counted_lost);
	tcase_add_test(tc, closing_with_waits_open_frees_them_unprinted);
	tcase_add_test(tc, the_summary_lists_processes_busiest_first_by_name);
	tcase_add_test(tc, each_sample_is_named_by_its_event_aligned_as_perf_script_does);
	tcase_add_test(tc, a_profile_shows_the_event_asked_for_and_refuses_one_it_lacks);
	suite_add_tcase(s, tc);
	return run_suite(s);
}
