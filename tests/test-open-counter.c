/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Opening counters (prcounter.h) with the kernel interposed (interpose.h):
 * a failure at any step leaves nothing open, events open disabled and
 * only group leaders are enabled, after every open; threads that exit and
 * CPUs that go offline during the open are skipped; a missing PMU is
 * skipped or explained whatever this machine has.
 */
#include <check.h>
#include <errno.h>
#include <linux/perf_event.h>
#include <stdio.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "interpose.h"
#include "livecheck.h"
#include "perfreader.h"

/* {task-clock,page-faults},context-switches: a group and an event alone. */
static void group_and_alone(struct pr_event_desc evs[3])
{
	evs[0] = live_event(PERF_TYPE_SOFTWARE, PERF_COUNT_SW_TASK_CLOCK, "task-clock", 0);
	evs[1] = live_event(PERF_TYPE_SOFTWARE, PERF_COUNT_SW_PAGE_FAULTS, "page-faults", 0);
	evs[2] = live_event(PERF_TYPE_SOFTWARE, PERF_COUNT_SW_CONTEXT_SWITCHES, "context-switches", 2);
}

static struct pr_counter *open_target(enum target t, pid_t pid, const struct pr_counter_opts *o)
{
	static char *sleep_argv[] = { "sleep", "30", NULL };
	struct pr_event_desc evs[3];

	group_and_alone(evs);
	switch (t) {
	case T_PIDS:
		return pr_counter_open_pids(evs, 3, &pid, 1, o);
	case T_CPUS:
		return pr_counter_open_cpus(evs, 3, NULL, 0, o);
	default:
		return pr_counter_open_command(evs, 3, sleep_argv, o);
	}
}

struct counter_opener {
	struct opener op;
	enum target t;
	pid_t pid;
	const struct pr_counter_opts *o;
};

static void *open_counter(struct opener *op)
{
	struct counter_opener *co = (struct counter_opener *)op;

	return open_target(co->t, co->pid, co->o);
}

static void close_counter(void *c)
{
	pr_counter_close(c);
}

/* Fail each perf_event_open and id ioctl in turn (fail_each_step()). */
static void check_no_leak_at_any_failure(enum target t, int min_steps)
{
	PR_OPTS(pr_counter_opts, o, .log = keep_log);
	struct counter_opener co = {
		{ open_counter, close_counter, t == T_COMMAND },
		t, t == T_PIDS ? spawn_idle_process() : 0, &o
	};

	ck_assert_int_ge(fail_each_step(&co.op), min_steps);
	if (co.pid)
		stop_process(co.pid);
}

START_TEST(failure_at_any_step_of_opening_counters_on_a_process_leaks_nothing)
{
	/* Three threads, three events each: 9 opens and 9 ids. */
	check_no_leak_at_any_failure(T_PIDS, 18);
}
END_TEST

START_TEST(failure_at_any_step_of_opening_counters_on_cpus_leaks_nothing)
{
	check_no_leak_at_any_failure(T_CPUS, 6 * (int)sysconf(_SC_NPROCESSORS_ONLN));
}
END_TEST

START_TEST(failure_at_any_step_of_opening_counters_on_a_command_leaks_nothing)
{
	check_no_leak_at_any_failure(T_COMMAND, 6);
}
END_TEST

START_TEST(counters_open_disabled_and_only_leaders_are_enabled_after_every_open)
{
	pid_t pid = spawn_idle_process();
	int last_open = -1, first_enable = -1, opens = 0, enables = 0;
	struct pr_counter *c;

	reset_hooks();
	c = open_target(T_PIDS, pid, NULL);
	ck_assert_ptr_nonnull(c);
	ck_assert_int_eq(pr_counter_enable(c), 0);
	for (int i = 0; i < nr_calls; i++) {
		if (calls[i].what == CALL_OPEN) {
			/* Per thread: the leader, its member, the event alone. */
			ck_assert_msg(calls[i].disabled == (opens % 3 != 1),
				      "open %d: disabled %d", opens, calls[i].disabled);
			opens++;
			last_open = i;
		}
		if (is_enable(&calls[i]) && first_enable < 0)
			first_enable = i;
		enables += is_enable(&calls[i]);
	}
	ck_assert_int_eq(opens, 9);
	ck_assert_int_eq(enables, 6);
	ck_assert_int_gt(first_enable, last_open);
	pr_counter_close(c);
	stop_process(pid);
	reset_hooks();
}
END_TEST

START_TEST(a_command_counts_from_its_exec_not_from_an_ioctl)
{
	static char *argv[] = { "true", NULL };
	struct pr_event_desc evs[3];
	struct pr_counter *c;
	int status;

	group_and_alone(evs);
	reset_hooks();
	c = pr_counter_open_command(evs, 3, argv, NULL);
	ck_assert_ptr_nonnull(c);
	ck_assert_int_eq(pr_counter_enable(c), 0);
	for (int i = 0; i < nr_calls; i++)
		ck_assert(!is_enable(&calls[i]));
	ck_assert_int_eq(waitpid(pr_counter_child(c), &status, 0), pr_counter_child(c));
	ck_assert(WIFEXITED(status) && WEXITSTATUS(status) == 0);
	pr_counter_close(c);
}
END_TEST

/* ESRCH at the k-th open: that thread exited meanwhile.  Its events, the
 * ones already open included, are closed and it is no unit. */
START_TEST(a_thread_that_exits_during_the_open_is_skipped)
{
	PR_OPTS(pr_counter_opts, o, .log = keep_log, .per_thread = true);
	pid_t pid = spawn_idle_process();
	int perf_fds = count_perf_fds();

	for (int k = 3; k < 6; k++) {
		struct pr_counter *c;

		reset_hooks();
		fail_at = 2 * k;     /* each open is followed by its id ioctl */
		fail_errno = ESRCH;
		logtext[0] = 0;
		c = open_target(T_PIDS, pid, &o);
		ck_assert_msg(c, "open %d: %s", k, logtext);
		ck_assert_uint_eq(pr_counter_nr_units(c), 2);
		ck_assert_int_eq(count_perf_fds(), perf_fds + 6);
		ck_assert_str_eq(logtext, "");
		pr_counter_close(c);
	}
	stop_process(pid);
	reset_hooks();
}
END_TEST

START_TEST(offline_cpus_are_skipped_and_none_left_is_an_error)
{
	long n = sysconf(_SC_NPROCESSORS_ONLN);
	PR_OPTS(pr_counter_opts, o, .log = keep_log);
	struct pr_counter *c;

	reset_hooks();
	if (n >= 2) {
		esrch_cpus = 1u << 1;
		logtext[0] = 0;
		c = open_target(T_CPUS, 0, &o);
		ck_assert_ptr_nonnull(c);
		ck_assert_uint_eq(pr_counter_nr_units(c), (size_t)n - 1);
		for (size_t i = 0; i < pr_counter_nr_units(c); i++) {
			struct pr_counter_unit u;

			ck_assert_int_eq(pr_counter_unit(c, i, &u), 0);
			ck_assert_int_ne(u.cpu, 1);
		}
		ck_assert_msg(strstr(logtext, "CPU 1 is offline, skipped"), "%s", logtext);
		pr_counter_close(c);
	}
	esrch_cpus = ~0u;
	logtext[0] = 0;
	ck_assert_ptr_null(open_target(T_CPUS, 0, &o));
	ck_assert_int_eq(errno, ENODEV);
	ck_assert_msg(strstr(logtext, "every CPU asked for is offline"), "%s", logtext);
	ck_assert_int_eq(count_perf_fds(), 0);
	reset_hooks();
}
END_TEST

START_TEST(a_missing_pmu_is_skipped_or_explained)
{
	struct pr_event_desc evs[2] = {
		live_event(PERF_TYPE_HARDWARE, PERF_COUNT_HW_INSTRUCTIONS, "instructions", 0),
		live_event(PERF_TYPE_SOFTWARE, PERF_COUNT_SW_PAGE_FAULTS, "page-faults", 1),
	};
	PR_OPTS(pr_counter_opts, skip, .log = keep_log, .skip_unsupported = true);
	PR_OPTS(pr_counter_opts, strict, .log = keep_log);
	pid_t self = getpid();
	struct pr_count cnt[2];
	struct pr_counter *c;

	reset_hooks();
	hw_answer = -EOPNOTSUPP;
	c = pr_counter_open_pids(evs, 2, &self, 1, &skip);
	ck_assert_ptr_nonnull(c);
	ck_assert_int_eq(pr_counter_read(c, cnt, 2), 0);
	ck_assert(!cnt[0].supported);
	ck_assert(cnt[1].supported);
	pr_counter_close(c);

	logtext[0] = 0;
	ck_assert_ptr_null(pr_counter_open_pids(evs, 2, &self, 1, &strict));
	ck_assert_int_eq(errno, EOPNOTSUPP);
	ck_assert_msg(strstr(logtext, "the hardware event instructions is not available"),
		      "%s", logtext);
	ck_assert_int_eq(count_perf_fds(), 0);
	reset_hooks();
}
END_TEST

TCase *counter_open_tcase(void);
TCase *counter_open_tcase(void)
{
	TCase *tc = tcase_create("counters");

	tcase_set_timeout(tc, 120);
	tcase_add_test(tc, failure_at_any_step_of_opening_counters_on_a_process_leaks_nothing);
	tcase_add_test(tc, failure_at_any_step_of_opening_counters_on_cpus_leaks_nothing);
	tcase_add_test(tc, failure_at_any_step_of_opening_counters_on_a_command_leaks_nothing);
	tcase_add_test(tc, counters_open_disabled_and_only_leaders_are_enabled_after_every_open);
	tcase_add_test(tc, a_command_counts_from_its_exec_not_from_an_ioctl);
	tcase_add_test(tc, a_thread_that_exits_during_the_open_is_skipped);
	tcase_add_test(tc, offline_cpus_are_skipped_and_none_left_is_an_error);
	tcase_add_test(tc, a_missing_pmu_is_skipped_or_explained);
	return tc;
}
