/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Counts printed as perf stat prints them (prstat.h), `dwarfsample stat`'s
 * printing, against perf stat's.
 * The expected lines are perf 6.1's own output, copied from runs of
 * `perf stat -- ls`, `perf stat -x, ...`, `perf stat -j ...`, `-I 200`
 * and `--per-thread -p PID` on Debian 12; the counts given to the printer
 * are the ones those runs printed (task-clock 5.93 msec, 1 context
 * switch, 100 page faults in 9.429643 ms...).  Multiplexed counts, which
 * this VM without a PMU cannot produce live, are printed as perf's code
 * prints them: the table's percentage of time counted, CSV and JSON's
 * whole percent.
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

static char *buf;
static size_t len;
static FILE *out;
/* The printers a test made, freed after it. */
static struct pr_stat_printer *made[4];
static size_t nr_made;

static void setup(void)
{
	out = open_memstream(&buf, &len);
	ck_assert_ptr_nonnull(out);
}

static void teardown(void)
{
	while (nr_made)
		pr_stat_printer_free(made[--nr_made]);
	fclose(out);
	free(buf);
	buf = NULL;
}

/* What was printed so far, from the start. */
static const char *printed(void)
{
	fflush(out);
	return buf;
}

static struct pr_count count(uint64_t value, uint64_t enabled, uint64_t running)
{
	return (struct pr_count){
		.value = value, .enabled = enabled, .running = running, .supported = true,
		.scaled = pr_count_scale(value, enabled, running),
	};
}

static const struct pr_count unsupported;

/* A printer to `out`, with CSV's separator `sep`. */
static struct pr_stat_printer *printer_sep(enum pr_stat_format format, const char *sep,
					   bool interval, bool per_thread)
{
	PR_OPTS(pr_stat_printer_opts, o, .format = format, .sep = sep, .interval = interval,
		.per_thread = per_thread);
	struct pr_stat_printer *p = pr_stat_printer_new(out, &o);

	ck_assert_ptr_nonnull(p);
	ck_assert_uint_lt(nr_made, sizeof(made) / sizeof(made[0]));
	made[nr_made++] = p;
	return p;
}

static struct pr_stat_printer *printer(enum pr_stat_format format, bool interval,
				       bool per_thread)
{
	return printer_sep(format, ",", interval, per_thread);
}

static void print_one_row(struct pr_stat_printer *p, const struct pr_stat_event *evs,
			  const struct pr_count *counts, size_t nr, double wall_ns)
{
	struct pr_stat_reading r = { .counts = counts, .nr_rows = 1, .wall_ns = wall_ns };

	ck_assert_int_eq(pr_stat_printer_reading(p, evs, nr, &r), 0);
}

/* perf stat's default set, as it printed for ls (cycles and the other
 * hardware events hidden: this machine has no PMU). */
static const struct pr_stat_event defaults[] = {
	{ "task-clock", PR_STAT_CLOCK, true },
	{ "context-switches", PR_STAT_COUNT, true },
	{ "cpu-migrations", PR_STAT_COUNT, true },
	{ "page-faults", PR_STAT_COUNT, true },
	{ "cycles", PR_STAT_CYCLES, true },
	{ "instructions", PR_STAT_INSTRUCTIONS, true },
};

START_TEST(table_prints_perf_stat_default_lines)
{
	struct pr_stat_printer *p = printer(PR_STAT_TABLE, false, false);
	struct pr_count c[] = {
		count(5930000, 5930000, 5930000), count(1, 5930000, 5930000),
		count(0, 5930000, 5930000), count(100, 5930000, 5930000),
		unsupported, unsupported,
	};
	struct rusage ru = { .ru_stime = { 0, 12006 } };

	ck_assert_int_eq(pr_stat_printer_header(p, "'ls'"), 0);
	print_one_row(p, defaults, c, 6, 9429643);
	ck_assert_int_eq(pr_stat_printer_footer(p, 0.009429643, &ru), 0);
	ck_assert_str_eq(printed(),
		"\n"
		" Performance counter stats for 'ls':\n"
		"\n"
		"              5.93 msec task-clock                       #    0.629 CPUs utilized          \n"
		"                 1      context-switches                 #  168.634 /sec                   \n"
		"                 0      cpu-migrations                   #    0.000 /sec                   \n"
		"               100      page-faults                      #   16.863 K/sec                  \n"
		"\n"
		"       0.009429643 seconds time elapsed\n"
		"\n"
		"       0.000000000 seconds user\n"
		"       0.012006000 seconds sys\n"
		"\n"
		"\n");
}
END_TEST

START_TEST(table_says_not_supported_and_not_counted)
{
	struct pr_stat_printer *p = printer(PR_STAT_TABLE, false, false);
	const struct pr_stat_event evs[] = {
		{ "page-faults", PR_STAT_COUNT, false },
		{ "cycles", PR_STAT_CYCLES, false },
		{ "task-clock", PR_STAT_CLOCK, false },
	};
	struct pr_count c[] = { count(48, 2404753, 2404753), unsupported, count(0, 0, 0) };

	print_one_row(p, evs, c, 3, 8098307);
	ck_assert_str_eq(printed(),
		"                48      page-faults                                                        \n"
		"   <not supported>      cycles                                                      \n"
		"     <not counted> msec task-clock                                                  \n");
}
END_TEST

START_TEST(table_shows_multiplexed_counts_scaled_with_the_time_counted)
{
	struct pr_stat_printer *p = printer(PR_STAT_TABLE, false, false);
	const struct pr_stat_event evs[] = {
		{ "task-clock", PR_STAT_CLOCK, false },
		{ "cycles", PR_STAT_CYCLES, false },
		{ "instructions", PR_STAT_INSTRUCTIONS, false },
	};
	/* Cycles counted 2/3 of the time: 2e6 seen, 3e6 estimated. */
	struct pr_count c[] = {
		count(1000000, 1000000, 1000000), count(2000000, 3000000, 2000000),
		count(6000000, 3000000, 3000000),
	};

	print_one_row(p, evs, c, 3, 1000000);
	ck_assert_str_eq(printed(),
		"              1.00 msec task-clock                       #    1.000 CPUs utilized          \n"
		"           3000000      cycles                           #    3.000 GHz                      (66.67%)\n"
		"           6000000      instructions                     #    2.00  insn per cycle         \n");
}
END_TEST

START_TEST(csv_prints_perf_stat_x_fields)
{
	struct pr_stat_printer *p = printer(PR_STAT_CSV, false, false);
	const struct pr_stat_event evs[] = {
		{ "page-faults", PR_STAT_COUNT, false },
		{ "cycles", PR_STAT_CYCLES, false },
	};
	struct pr_count c[] = { count(48, 2643797, 2643797), unsupported };

	print_one_row(p, evs, c, 2, 3 * MS);
	ck_assert_str_eq(printed(),
		"48,,page-faults,2643797,100.00,,\n"
		"<not supported>,,cycles,0,100.00,,\n");
}
END_TEST

START_TEST(csv_gives_the_metric_and_whole_percent_running)
{
	struct pr_stat_printer *p = printer(PR_STAT_CSV, false, false);
	const struct pr_stat_event evs[] = {
		{ "task-clock", PR_STAT_CLOCK, false },
		{ "cs", PR_STAT_COUNT, false },
		{ "faults", PR_STAT_COUNT, false },
	};
	struct pr_count c[] = {
		count(3468691, 3468691, 3468691), count(3, 3468691, 3468691),
		count(50, 3000, 2000),
	};

	p = printer_sep(PR_STAT_CSV, ";", false, false);
	print_one_row(p, evs, c, 3, 200 * MS);
	ck_assert_str_eq(printed(),
		"3.47;msec;task-clock;3468691;100.00;0.017;CPUs utilized\n"
		"3;;cs;3468691;100.00;864.880;/sec\n"
		"75;;faults;2000;66.00;21.622;K/sec\n");
}
END_TEST

START_TEST(json_prints_perf_stat_j_objects)
{
	struct pr_stat_printer *p = printer(PR_STAT_JSON, false, false);
	const struct pr_stat_event evs[] = {
		{ "task-clock", PR_STAT_CLOCK, false },
		{ "context-switches", PR_STAT_COUNT, false },
		{ "cycles", PR_STAT_CYCLES, false },
		{ "page-faults", PR_STAT_COUNT, false },
	};
	struct pr_count c[] = {
		count(5519644, 5519644, 5519644), count(2, 5519644, 5519644), unsupported,
		count(0, 0, 0),
	};

	print_one_row(p, evs, c, 4, 7559839);
	ck_assert_str_eq(printed(),
		"{\"counter-value\" : \"5.519644\", \"unit\" : \"msec\", \"event\" : \"task-clock\", "
		"\"event-runtime\" : 5519644, \"pcnt-running\" : 100.00, \"metric-value\" : 0.730127, "
		"\"metric-unit\" : \"CPUs utilized\"}\n"
		"{\"counter-value\" : \"2.000000\", \"unit\" : \"\", \"event\" : \"context-switches\", "
		"\"event-runtime\" : 5519644, \"pcnt-running\" : 100.00, \"metric-value\" : 362.342209, "
		"\"metric-unit\" : \"/sec\"}\n"
		"{\"counter-value\" : \"<not supported>\", \"unit\" : \"\", \"event\" : \"cycles\", "
		"\"event-runtime\" : 0, \"pcnt-running\" : 100.00, \"metric-value\" : 0.000000, "
		"\"metric-unit\" : \"\"}\n"
		"{\"counter-value\" : \"<not counted>\", \"unit\" : \"\", \"event\" : \"page-faults\", "
		"\"event-runtime\" : 0, \"pcnt-running\" : 100.00, \"metric-value\" : 0.000000, "
		"\"metric-unit\" : \"\"}\n");
}
END_TEST

static const struct pr_stat_event thread_evs[] = {
	{ "task-clock", PR_STAT_CLOCK, false },
	{ "cs", PR_STAT_COUNT, false },
};
static const struct pr_stat_thread threads[] = { { "thr", 12575 }, { "thr", 12576 },
						 { "thr", 12577 } };

/* Three threads' rows: the main thread never ran. */
static void print_threads(struct pr_stat_printer *p, uint64_t time_ns, double wall_ns)
{
	struct pr_count c[] = {
		count(0, 0, 0), count(0, 0, 0),
		count(61520000, 61520000, 61520000), count(205, 61520000, 61520000),
		count(58910000, 58910000, 58910000), count(197, 58910000, 58910000),
	};
	struct pr_stat_reading r = { .counts = c, .threads = threads, .nr_rows = 3,
				     .wall_ns = wall_ns, .time_ns = time_ns };

	ck_assert_int_eq(pr_stat_printer_reading(p, thread_evs, 2, &r), 0);
}

START_TEST(per_thread_rows_are_comm_tid_by_decreasing_count)
{
	print_threads(printer(PR_STAT_TABLE, false, true), 0, 301273883);
	ck_assert_str_eq(printed(),
		"             thr-12576                 61.52 msec task-clock                       #    0.204 CPUs utilized          \n"
		"             thr-12577                 58.91 msec task-clock                       #    0.196 CPUs utilized          \n"
		"             thr-12575         <not counted> msec task-clock                                                  \n"
		"             thr-12576                   205      cs                               #    3.332 K/sec                  \n"
		"             thr-12577                   197      cs                               #    3.344 K/sec                  \n"
		"             thr-12575         <not counted>      cs                                                          \n");
}
END_TEST

/* perf stat -a --per-thread leaves out the threads that counted nothing
 * (thr-12575 here), in every format. */
START_TEST(machine_wide_threads_that_counted_nothing_are_left_out)
{
	PR_OPTS(pr_stat_printer_opts, o, .per_thread = true, .hide_zero_rows = true);
	struct pr_stat_printer *p = pr_stat_printer_new(out, &o);

	ck_assert_ptr_nonnull(p);
	made[nr_made++] = p;
	print_threads(p, 0, 301273883);
	o.format = PR_STAT_CSV;
	ck_assert_ptr_nonnull(p = pr_stat_printer_new(out, &o));
	made[nr_made++] = p;
	print_threads(p, 0, 301273883);
	ck_assert_str_eq(printed(),
		"             thr-12576                 61.52 msec task-clock                       #    0.204 CPUs utilized          \n"
		"             thr-12577                 58.91 msec task-clock                       #    0.196 CPUs utilized          \n"
		"             thr-12576                   205      cs                               #    3.332 K/sec                  \n"
		"             thr-12577                   197      cs                               #    3.344 K/sec                  \n"
		"thr-12576,61.52,msec,task-clock,61520000,100.00,0.204,CPUs utilized\n"
		"thr-12577,58.91,msec,task-clock,58910000,100.00,0.196,CPUs utilized\n"
		"thr-12576,205,,cs,61520000,100.00,3.332,K/sec\n"
		"thr-12577,197,,cs,58910000,100.00,3.344,K/sec\n");
}
END_TEST

START_TEST(per_thread_csv_and_json_name_the_thread)
{
	print_threads(printer(PR_STAT_CSV, false, true), 0, 301273883);
	print_threads(printer(PR_STAT_JSON, false, true), 0, 301273883);
	ck_assert_ptr_nonnull(strstr(printed(),
		"thr-12576,61.52,msec,task-clock,61520000,100.00,0.204,CPUs utilized\n"));
	ck_assert_ptr_nonnull(strstr(printed(), "thr-12575,<not counted>,,cs,0,100.00,,\n"));
	ck_assert_ptr_nonnull(strstr(printed(),
		"{\"thread\" : \"thr-12577\", \"counter-value\" : \"197.000000\", "));
}
END_TEST

START_TEST(intervals_start_with_the_time_and_a_header_every_25)
{
	struct pr_stat_printer *p = printer(PR_STAT_TABLE, true, false);
	struct pr_count c = count(4250000, 4250000, 4250000);
	struct pr_stat_reading r = { .counts = &c, .nr_rows = 1, .wall_ns = 200 * MS,
				     .time_ns = 202069861 };
	const char *header = "#           time             counts unit events\n";
	const char *line = "     0.202069861               4.25 msec task-clock"
			   "                       #    0.021 CPUs utilized          \n";
	char *expected = NULL;
	size_t n = 0;
	FILE *e = open_memstream(&expected, &n);

	for (int i = 0; i < 26; i++) {
		ck_assert_int_eq(pr_stat_printer_reading(p, thread_evs, 1, &r), 0);
		fprintf(e, "%s%s", i % 25 ? "" : header, line);
	}
	fclose(e);
	ck_assert_str_eq(printed(), expected);
	free(expected);
}
END_TEST

START_TEST(per_thread_intervals_have_perf_s_header)
{
	print_threads(printer(PR_STAT_TABLE, true, true), 100196245, 100 * MS);
	ck_assert_ptr_eq(strstr(printed(),
		"#           time             comm-pid                  counts unit events\n"
		"     0.100196245              thr-12576                 61.52 msec task-clock"),
		printed());
}
END_TEST

START_TEST(interval_csv_and_json_carry_the_time)
{
	struct pr_count c = count(3468691, 3468691, 3468691);
	struct pr_stat_reading r = { .counts = &c, .nr_rows = 1, .wall_ns = 200 * MS,
				     .time_ns = 200514820 };

	ck_assert_int_eq(pr_stat_printer_reading(printer(PR_STAT_CSV, true, false), thread_evs,
						 1, &r), 0);
	c = count(3438665, 3438665, 3438665);
	r.time_ns = 200391086;
	ck_assert_int_eq(pr_stat_printer_reading(printer(PR_STAT_JSON, true, false), thread_evs,
						 1, &r), 0);
	ck_assert_str_eq(printed(),
		"     0.200514820,3.47,msec,task-clock,3468691,100.00,0.017,CPUs utilized\n"
		"{\"interval\" : 0.200391086, \"counter-value\" : \"3.438665\", \"unit\" : \"msec\", "
		"\"event\" : \"task-clock\", \"event-runtime\" : 3438665, \"pcnt-running\" : 100.00, "
		"\"metric-value\" : 0.017193, \"metric-unit\" : \"CPUs utilized\"}\n");
}
END_TEST

START_TEST(csv_and_json_print_no_header_or_footer)
{
	struct pr_stat_printer *csv = printer(PR_STAT_CSV, false, false);
	struct pr_stat_printer *json = printer(PR_STAT_JSON, false, false);
	struct rusage ru = { 0 };

	ck_assert_int_eq(pr_stat_printer_header(csv, "'ls'"), 0);
	ck_assert_int_eq(pr_stat_printer_footer(csv, 1.0, &ru), 0);
	ck_assert_int_eq(pr_stat_printer_header(json, "'ls'"), 0);
	ck_assert_int_eq(pr_stat_printer_footer(json, 1.0, &ru), 0);
	ck_assert_str_eq(printed(), "");
}
END_TEST

START_TEST(a_process_footer_has_no_user_and_sys_times)
{
	struct pr_stat_printer *p = printer(PR_STAT_TABLE, false, false);

	ck_assert_int_eq(pr_stat_printer_header(p, "process id '10618'"), 0);
	ck_assert_int_eq(pr_stat_printer_footer(p, 0.300661922, NULL), 0);
	ck_assert_str_eq(printed(),
		"\n Performance counter stats for process id '10618':\n\n"
		"\n       0.300661922 seconds time elapsed\n\n");
}
END_TEST

START_TEST(rates_take_k_m_and_g_prefixes_above_a_thousand)
{
	struct pr_stat_printer *p = printer(PR_STAT_CSV, false, false);
	const struct pr_stat_event evs[] = {
		{ "task-clock", PR_STAT_CLOCK, false },
		{ "a", PR_STAT_COUNT, false }, { "b", PR_STAT_COUNT, false },
		{ "c", PR_STAT_COUNT, false }, { "d", PR_STAT_COUNT, false },
	};
	/* One second of task clock. */
	struct pr_count c[] = {
		count(1000000000, 1, 1), count(1000, 1, 1), count(1001, 1, 1),
		count(2500000, 1, 1), count(3000000000u, 1, 1),
	};

	print_one_row(p, evs, c, 5, 1e9);
	ck_assert_ptr_nonnull(strstr(printed(), "1000,,a,1,100.00,1000.000,/sec\n"));
	ck_assert_ptr_nonnull(strstr(printed(), "1001,,b,1,100.00,1.001,K/sec\n"));
	ck_assert_ptr_nonnull(strstr(printed(), "2500000,,c,1,100.00,2.500,M/sec\n"));
	ck_assert_ptr_nonnull(strstr(printed(), "3000000000,,d,1,100.00,3.000,G/sec\n"));
}
END_TEST

START_TEST(branch_and_cache_misses_are_percent_of_their_base)
{
	struct pr_stat_printer *p = printer(PR_STAT_TABLE, false, false);
	const struct pr_stat_event evs[] = {
		{ "branches", PR_STAT_BRANCHES, false },
		{ "branch-misses", PR_STAT_BRANCH_MISSES, false },
		{ "cache-misses", PR_STAT_CACHE_MISSES, false },
	};
	struct pr_count c[] = { count(1000, 1, 1), count(25, 1, 1), count(5, 1, 1) };

	print_one_row(p, evs, c, 3, 1e9);
	ck_assert_str_eq(printed(),
		/* No clock: no rate for branches. */
		"              1000      branches                                                           \n"
		"                25      branch-misses                    #    2.50% of all branches        \n"
		/* No cache references counted: nothing to relate to. */
		"                 5      cache-misses                                                       \n");
}
END_TEST

START_TEST(names_are_escaped_in_json)
{
	struct pr_stat_printer *p = printer(PR_STAT_JSON, false, false);
	const struct pr_stat_event evs[] = { { "a\"b\\c", PR_STAT_COUNT, false } };
	struct pr_count c = count(1, 1, 1);

	print_one_row(p, evs, &c, 1, 1e9);
	ck_assert_ptr_nonnull(strstr(printed(), "\"event\" : \"a\\\"b\\\\c\""));
}
END_TEST

START_TEST(events_take_the_kind_perf_gives_them)
{
	static const struct {
		const char *name;
		enum pr_stat_kind kind;
	} cases[] = {
		{ "task-clock", PR_STAT_CLOCK }, { "cpu-clock", PR_STAT_CLOCK },
		{ "cycles", PR_STAT_CYCLES }, { "instructions", PR_STAT_INSTRUCTIONS },
		{ "branches", PR_STAT_BRANCHES }, { "branch-misses", PR_STAT_BRANCH_MISSES },
		{ "cache-misses", PR_STAT_CACHE_MISSES }, { "page-faults", PR_STAT_COUNT },
		{ "context-switches", PR_STAT_COUNT },
	};

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct pr_event_desc ev;

		ck_assert_int_eq(pr_event_parse(cases[i].name, &ev, NULL), 0);
		ck_assert_msg(pr_event_stat_kind(&ev) == cases[i].kind, "%s", cases[i].name);
	}
	ck_assert_int_eq(pr_event_stat_kind(NULL), PR_STAT_COUNT);
}
END_TEST

START_TEST(the_printer_refuses_what_it_cannot_print)
{
	PR_OPTS(pr_stat_printer_opts, bad, .format = (enum pr_stat_format)7);
	const struct pr_stat_event unknown[] = { { "x", PR_STAT_KINDS, false } };
	struct pr_count c = count(1, 1, 1);
	struct pr_stat_reading r = { .counts = &c, .nr_rows = 1, .wall_ns = 1e9 };

	errno = 0;
	ck_assert_ptr_null(pr_stat_printer_new(NULL, NULL));
	ck_assert_int_eq(errno, EINVAL);
	ck_assert_ptr_null(pr_stat_printer_new(out, &bad));
	ck_assert_int_eq(pr_stat_printer_reading(printer(PR_STAT_TABLE, false, false), unknown, 1,
						 &r), -EINVAL);
	ck_assert_int_eq(pr_stat_printer_header(NULL, "'ls'"), -EINVAL);
	pr_stat_printer_free(NULL);
	ck_assert_str_eq(printed(), "");
}
END_TEST

static Suite *suite(void)
{
	Suite *s = suite_create("stat-print");
	TCase *tc = tcase_create("layouts");

	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, table_prints_perf_stat_default_lines);
	tcase_add_test(tc, table_says_not_supported_and_not_counted);
	tcase_add_test(tc, table_shows_multiplexed_counts_scaled_with_the_time_counted);
	tcase_add_test(tc, csv_prints_perf_stat_x_fields);
	tcase_add_test(tc, csv_gives_the_metric_and_whole_percent_running);
	tcase_add_test(tc, json_prints_perf_stat_j_objects);
	tcase_add_test(tc, per_thread_rows_are_comm_tid_by_decreasing_count);
	tcase_add_test(tc, machine_wide_threads_that_counted_nothing_are_left_out);
	tcase_add_test(tc, per_thread_csv_and_json_name_the_thread);
	tcase_add_test(tc, intervals_start_with_the_time_and_a_header_every_25);
	tcase_add_test(tc, per_thread_intervals_have_perf_s_header);
	tcase_add_test(tc, interval_csv_and_json_carry_the_time);
	tcase_add_test(tc, csv_and_json_print_no_header_or_footer);
	tcase_add_test(tc, a_process_footer_has_no_user_and_sys_times);
	tcase_add_test(tc, rates_take_k_m_and_g_prefixes_above_a_thousand);
	tcase_add_test(tc, branch_and_cache_misses_are_percent_of_their_base);
	tcase_add_test(tc, names_are_escaped_in_json);
	tcase_add_test(tc, events_take_the_kind_perf_gives_them);
	tcase_add_test(tc, the_printer_refuses_what_it_cannot_print);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	return run_suite(suite());
}
