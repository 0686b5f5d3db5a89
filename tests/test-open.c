/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Opening the reader's events, with the kernel interposed (interpose.h):
 * a test can make any perf_event_open, ring mmap or SET_OUTPUT fail,
 * answer for a hardware PMU this machine does not have, or watch the
 * order of calls.  Everything not interposed goes to the real kernel, so
 * these tests need perf_event_open and skip (77) only where the kernel
 * refuses it.  The counters' opens are tested the same way in
 * test-open-counter.c.
 */
#include <check.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "checkmain.h"
#include "base/base.h"
#include "interpose.h"
#include "livecheck.h"

/* Has `pid` exited?  It is left for the reader to reap. */
static bool has_exited(pid_t pid)
{
	siginfo_t si;

	memset(&si, 0, sizeof(si));
	ck_assert_int_eq(waitid(P_PID, (id_t)pid, &si, WEXITED | WNOHANG | WNOWAIT), 0);
	return si.si_pid == pid;
}

static struct pr_reader *open_target(enum target t, pid_t pid,
				     const struct pr_reader_opts *o)
{
	static char *sleep_argv[] = { "sleep", "30", NULL };

	switch (t) {
	case T_PIDS:
		return pr_reader_open_pids(&pid, 1, o);
	case T_CPUS:
		return pr_reader_open_cpus(NULL, 0, o);
	default:
		return pr_reader_open_command(sleep_argv, o);
	}
}

struct reader_opener {
	struct opener op;
	enum target t;
	pid_t pid;
	const struct pr_reader_opts *o;
};

static void *open_reader(struct opener *op)
{
	struct reader_opener *ro = (struct reader_opener *)op;

	return open_target(ro->t, ro->pid, ro->o);
}

static void close_reader(void *r)
{
	pr_reader_close(r);
}

/* Fail each step of opening a reader with `o` in turn (fail_each_step());
 * at least `min_steps`.  Also for test-open-events.c. */
void check_reader_no_leak(enum target t, int min_steps, const struct pr_reader_opts *o);
void check_reader_no_leak(enum target t, int min_steps, const struct pr_reader_opts *o)
{
	struct reader_opener ro = {
		{ open_reader, close_reader, t == T_COMMAND },
		t, t == T_PIDS ? spawn_idle_process() : 0, o
	};

	ck_assert_int_ge(fail_each_step(&ro.op), min_steps);
	if (ro.pid)
		stop_process(ro.pid);
}

static void check_no_leak_at_any_failure(enum target t, int min_steps, bool off_cpu)
{
	PR_OPTS(pr_event_opts, off, .stack_size = 1024);
	PR_OPTS(pr_reader_opts, o, .ring_pages = 4, .log = keep_log,
		.off_cpu = off_cpu ? &off : NULL);

	check_reader_no_leak(t, min_steps, &o);
}

START_TEST(failure_at_any_step_of_opening_a_process_leaks_nothing)
{
	long cpus = sysconf(_SC_NPROCESSORS_ONLN);

	/* Three threads on every CPU: 3 * cpus opens, cpus mmaps and
	 * 2 * cpus redirections. */
	check_no_leak_at_any_failure(T_PIDS, (int)(6 * cpus), false);
}
END_TEST

START_TEST(failure_at_any_step_of_opening_two_events_per_thread_leaks_nothing)
{
	long cpus = sysconf(_SC_NPROCESSORS_ONLN);

	/* With the off-CPU event: 6 * cpus opens, cpus mmaps and 5 * cpus
	 * redirections. */
	check_no_leak_at_any_failure(T_PIDS, (int)(12 * cpus), true);
}
END_TEST

START_TEST(failure_at_any_step_of_opening_all_cpus_leaks_nothing)
{
	check_no_leak_at_any_failure(T_CPUS, (int)(2 * sysconf(_SC_NPROCESSORS_ONLN)), false);
}
END_TEST

START_TEST(failure_at_any_step_of_launching_a_command_leaks_nothing_not_even_the_child)
{
	check_no_leak_at_any_failure(T_COMMAND, (int)(2 * sysconf(_SC_NPROCESSORS_ONLN)), false);
}
END_TEST

START_TEST(events_open_disabled_and_are_enabled_after_every_ring_is_mapped)
{
	pid_t pid = spawn_idle_process();
	struct pr_reader *r;
	int last_setup = -1, first_enable = -1, opens = 0, mmaps = 0;

	reset_hooks();
	r = pr_reader_open_pids(&pid, 1, NULL);
	ck_assert_ptr_nonnull(r);
	ck_assert_int_eq(pr_reader_enable(r), 0);
	for (int i = 0; i < nr_calls; i++) {
		if (calls[i].what == CALL_OPEN) {
			ck_assert_msg(calls[i].disabled, "event %d opened enabled", i);
			opens++;
		}
		mmaps += calls[i].what == CALL_MMAP;
		if (calls[i].what == CALL_OPEN || calls[i].what == CALL_MMAP)
			last_setup = i;
		if (is_enable(&calls[i]) && first_enable < 0)
			first_enable = i;
	}
	ck_assert_int_eq(opens, 3 * (int)sysconf(_SC_NPROCESSORS_ONLN));
	ck_assert_int_eq(mmaps, (int)pr_reader_nr_rings(r));
	ck_assert_int_gt(first_enable, last_setup);
	pr_reader_close(r);
	stop_process(pid);
}
END_TEST

START_TEST(a_launched_command_is_enabled_by_its_exec_not_by_ioctl)
{
	static char *argv[] = { "true", NULL };
	struct pr_reader *r;
	int status;

	reset_hooks();
	r = pr_reader_open_command(argv, NULL);
	ck_assert_ptr_nonnull(r);
	ck_assert_uint_eq(pr_reader_attr(r)->enable_on_exec, 1);
	ck_assert_uint_eq(pr_reader_attr(r)->disabled, 1);
	ck_assert_int_eq(pr_reader_enable(r), 0);
	for (int i = 0; i < nr_calls; i++)
		ck_assert(!is_enable(&calls[i]));
	ck_assert_int_eq(waitpid(pr_reader_child(r), &status, 0), pr_reader_child(r));
	ck_assert(WIFEXITED(status) && WEXITSTATUS(status) == 0);
	pr_reader_close(r);
}
END_TEST

START_TEST(a_command_that_cannot_run_is_an_error_naming_it)
{
	static char *argv[] = { "/nonexistent/dwarfsample-test", NULL };
	PR_OPTS(pr_reader_opts, o, .log = keep_log);
	struct pr_reader *r;

	reset_hooks();
	logtext[0] = 0;
	r = pr_reader_open_command(argv, &o);
	ck_assert_ptr_nonnull(r);
	ck_assert_int_eq(pr_reader_enable(r), -ENOENT);
	ck_assert_msg(strstr(logtext, "cannot run '/nonexistent/dwarfsample-test'"),
		      "%s", logtext);
	ck_assert_int_eq(pr_reader_child(r), -1);
	pr_reader_close(r);
	ck_assert_int_eq(waitpid(-1, NULL, WNOHANG), -1);
}
END_TEST

START_TEST(enabling_a_command_that_died_first_is_an_error_not_a_sigpipe)
{
	static char *argv[] = { "sleep", "30", NULL };
	PR_OPTS(pr_reader_opts, o, .ring_pages = 4, .log = keep_log);
	struct pr_reader *r;

	reset_hooks();
	logtext[0] = 0;
	r = pr_reader_open_command(argv, &o);
	ck_assert_ptr_nonnull(r);
	kill(pr_reader_child(r), SIGKILL);
	while (!has_exited(pr_reader_child(r)))
		usleep(1000);
	/* With a pipe this write would raise SIGPIPE and end the test. */
	ck_assert_int_eq(pr_reader_enable(r), -ESRCH);
	ck_assert_msg(strstr(logtext, "exited before it could start"), "%s", logtext);
	ck_assert_int_eq(pr_reader_child(r), -1);
	pr_reader_close(r);
	ck_assert_int_eq(waitpid(-1, NULL, WNOHANG), -1);
}
END_TEST

static int handler_pipe[2];

static void caller_handler(int sig)
{
	(void)sig;
	if (write(handler_pipe[1], "H", 1) < 0)
		_exit(3);
}

/* Between fork and exec the command must not run the caller's handlers:
 * a signal meant for the profiler ends the waiting child instead. */
START_TEST(the_callers_signal_handlers_do_not_run_in_the_waiting_command)
{
	static char *argv[] = { "sleep", "30", NULL };
	PR_OPTS(pr_reader_opts, o, .ring_pages = 4);
	struct sigaction sa;
	struct pr_reader *r;
	struct pollfd pfd;
	char c;

	reset_hooks();
	ck_assert_int_eq(pipe2(handler_pipe, O_NONBLOCK | O_CLOEXEC), 0);
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = caller_handler;
	sigaction(SIGUSR1, &sa, NULL);
	r = pr_reader_open_command(argv, &o);
	ck_assert_ptr_nonnull(r);
	kill(pr_reader_child(r), SIGUSR1);
	/* The signal's default action ends it; the handler would write and
	 * leave it waiting. */
	pfd.fd = handler_pipe[0];
	pfd.events = POLLIN;
	while (!has_exited(pr_reader_child(r)) && poll(&pfd, 1, 1) == 0)
		;
	ck_assert_int_eq(read(handler_pipe[0], &c, 1), -1);
	ck_assert_int_eq(errno, EAGAIN);
	ck_assert_int_eq(pr_reader_enable(r), -ESRCH);
	pr_reader_close(r);
}
END_TEST

START_TEST(a_ring_too_small_for_one_sample_is_refused)
{
	PR_OPTS(pr_reader_opts, o, .ring_pages = 1, .log = keep_log);

	reset_hooks();
	logtext[0] = 0;
	ck_assert_ptr_null(pr_reader_open_cpus(NULL, 0, &o));
	ck_assert_int_eq(errno, EINVAL);
	ck_assert_msg(strstr(logtext, "cannot hold one sample"), "%s", logtext);
	ck_assert_int_eq(nr_calls, 0);
}
END_TEST

/* The pages of the rings one reader of every CPU mapped, each the same
 * size (0: none, or not all alike). */
static size_t ring_pages_of(const struct pr_event_opts *ev)
{
	PR_OPTS(pr_reader_opts, o, .event = ev, .log = keep_log);
	struct pr_reader *r;
	size_t len = 0, page = (size_t)sysconf(_SC_PAGESIZE);

	reset_hooks();
	r = pr_reader_open_cpus(NULL, 0, &o);
	ck_assert_msg(r, "%s", logtext);
	for (int i = 0; i < nr_calls; i++) {
		if (calls[i].what != CALL_MMAP)
			continue;
		if (len && calls[i].len != len)
			len = SIZE_MAX;
		else if (!len)
			len = calls[i].len;
	}
	pr_reader_close(r);
	reset_hooks();
	/* One page of each mapping is the ring's control page. */
	return len && len != SIZE_MAX ? len / page - 1 : 0;
}

/* A ring holds about 250 samples of the stack copy, at least 2 MiB; a
 * rate too slow to fill that in a second gets a ring of a second of
 * samples, at least 128 pages, where the mapping's cost (the kernel
 * zeroes every page) would be most of its use.  A period or an event of
 * its own has no rate known in advance. */
START_TEST(a_ring_holds_a_second_of_samples_at_a_low_rate)
{
	PR_OPTS(pr_event_opts, slow, .freq = 99);
	PR_OPTS(pr_event_opts, fast, .freq = 999);
	PR_OPTS(pr_event_opts, big, .freq = 99, .stack_size = 32768);
	PR_OPTS(pr_event_opts, tiny, .freq = 99, .stack_size = 512);
	PR_OPTS(pr_event_opts, period, .period = 10000000);
	size_t s = ring_pages_of(&slow), f = ring_pages_of(&fast), b = ring_pages_of(&big),
	       t = ring_pages_of(&tiny), p = ring_pages_of(&period);

	ck_assert_msg(s && f && b && t && p, "rings of %zu %zu %zu %zu %zu pages", s, f, b, t,
		      p);
	if (geteuid() != 0) {
		/* Under perf_event_mlock_kb, all may be cut to what fits. */
		ck_assert_uint_le(s, f);
		return;
	}
	ck_assert_uint_eq(f, PR_DEFAULT_RING_PAGES);
	ck_assert_uint_eq(p, PR_DEFAULT_RING_PAGES);
	/* 99 samples of 8 KiB and their headers: past 128 pages. */
	ck_assert_uint_eq(s, 256);
	ck_assert_uint_eq(t, 128);
	/* 99 of 32 KiB: 3.2 MB, still under the 250 samples' 8 MiB. */
	ck_assert_uint_eq(b, 1024);
}
END_TEST

START_TEST(offline_cpus_are_skipped_silently)
{
	long n = sysconf(_SC_NPROCESSORS_ONLN);
	PR_OPTS(pr_reader_opts, o, .ring_pages = 4, .log = keep_log);
	struct pr_reader *r;

	if (n < 2) {
		/* A one-CPU machine cannot lose one CPU and keep another. */
		ck_assert_int_ge(n, 1);
		return;
	}
	reset_hooks();
	esrch_cpus = 1u << 1;
	logtext[0] = 0;
	r = pr_reader_open_cpus(NULL, 0, &o);
	ck_assert_ptr_nonnull(r);
	ck_assert_uint_eq(pr_reader_nr_rings(r), (size_t)n - 1);
	for (size_t i = 0; i < pr_reader_nr_rings(r); i++)
		ck_assert_int_ne(pr_reader_ring_cpu(r, i), 1);
	ck_assert_ptr_null(strstr(logtext, "error"));
	pr_reader_close(r);
	reset_hooks();
}
END_TEST

START_TEST(no_cpu_at_all_is_an_error)
{
	PR_OPTS(pr_reader_opts, o, .ring_pages = 4, .log = keep_log);

	reset_hooks();
	esrch_cpus = ~0u;
	logtext[0] = 0;
	ck_assert_ptr_null(pr_reader_open_cpus(NULL, 0, &o));
	ck_assert_int_eq(errno, ENODEV);
	ck_assert_msg(strstr(logtext, "no event could be opened"), "%s", logtext);
	ck_assert_int_eq(count_perf_fds(), 0);
	reset_hooks();
}
END_TEST

START_TEST(hardware_cycles_are_used_when_the_pmu_answers)
{
	PR_OPTS(pr_event_opts, ev, .prefer_hw_cycles = true);

	reset_hooks();
	hw_answer = 1;
	ck_assert_int_eq(pr_event_probe(&ev), PR_SOURCE_HW_CYCLES);
	/* Without the preference nothing is probed. */
	nr_calls = 0;
	ck_assert_int_eq(pr_event_probe(NULL), PR_SOURCE_CPU_CLOCK);
	ck_assert_int_eq(nr_calls, 0);
	reset_hooks();
}
END_TEST

START_TEST(a_pmu_open_to_user_mode_only_is_still_used)
{
	PR_OPTS(pr_event_opts, ev, .prefer_hw_cycles = true);

	reset_hooks();
	hw_user_only = true;
	ck_assert_int_eq(pr_event_probe(&ev), PR_SOURCE_HW_CYCLES);
	reset_hooks();
}
END_TEST

START_TEST(bad_options_are_not_mistaken_for_a_missing_pmu)
{
	PR_OPTS(pr_event_opts, ev, .prefer_hw_cycles = true, .stack_size = 12);

	reset_hooks();
	hw_answer = 1;
	ck_assert_int_eq(pr_event_probe(&ev), -EINVAL);
	reset_hooks();
}
END_TEST

START_TEST(missing_pmu_falls_back_to_cpu_clock)
{
	static const int fallbacks[] = { EOPNOTSUPP, ENOENT, ENODEV, EINVAL, EACCES };
	PR_OPTS(pr_event_opts, ev, .prefer_hw_cycles = true);
	PR_OPTS(pr_reader_opts, o, .event = &ev, .ring_pages = 4);

	for (size_t i = 0; i < PR_ARRAY_SIZE(fallbacks); i++) {
		struct pr_reader *r;

		reset_hooks();
		hw_answer = -fallbacks[i];
		ck_assert_int_eq(pr_event_probe(&ev), PR_SOURCE_CPU_CLOCK);
		r = pr_reader_open_cpus(NULL, 0, &o);
		ck_assert_ptr_nonnull(r);
		ck_assert_uint_eq(pr_reader_attr(r)->type, PERF_TYPE_SOFTWARE);
		ck_assert_uint_eq(pr_reader_attr(r)->config, PERF_COUNT_SW_CPU_CLOCK);
		pr_reader_close(r);
	}
	reset_hooks();
}
END_TEST

START_TEST(other_pmu_errors_propagate)
{
	PR_OPTS(pr_event_opts, ev, .prefer_hw_cycles = true);
	PR_OPTS(pr_reader_opts, o, .event = &ev, .log = keep_log);

	reset_hooks();
	hw_answer = -EBUSY;
	ck_assert_int_eq(pr_event_probe(&ev), -EBUSY);
	logtext[0] = 0;
	ck_assert_ptr_null(pr_reader_open_cpus(NULL, 0, &o));
	ck_assert_int_eq(errno, EBUSY);
	ck_assert_msg(strstr(logtext, "hardware cpu-cycles"), "%s", logtext);
	reset_hooks();
}
END_TEST

START_TEST(refused_kernel_sampling_falls_back_to_user_mode_for_processes)
{
	PR_OPTS(pr_reader_opts, o, .ring_pages = 4, .log = keep_log);
	pid_t pid = spawn_idle_process();
	struct pr_reader *r;

	reset_hooks();
	refuse_kernel = true;
	logtext[0] = 0;
	r = pr_reader_open_pids(&pid, 1, &o);
	ck_assert_ptr_nonnull(r);
	ck_assert_uint_eq(pr_reader_attr(r)->exclude_kernel, 1);
	ck_assert_msg(strstr(logtext, "user mode only"), "%s", logtext);
	pr_reader_close(r);
	stop_process(pid);
	reset_hooks();
}
END_TEST

/* Under perf_event_paranoid=2 the CPU event falls back to user mode, but
 * the off-CPU event cannot (its sample is taken in the kernel): the open
 * fails, saying what off-CPU profiling needs, rather than leave an event
 * that never fires.  Alone or beside the CPU event. */
START_TEST(refused_off_cpu_event_says_it_needs_kernel_sampling)
{
	PR_OPTS(pr_event_opts, off, .stack_size = 1024);
	PR_OPTS(pr_reader_opts, wall, .ring_pages = 4, .off_cpu = &off, .log = keep_log);
	PR_OPTS(pr_reader_opts, only, .ring_pages = 4, .off_cpu = &off,
		.no_cpu_samples = true, .log = keep_log);
	const struct pr_reader_opts *both[] = { &wall, &only };
	pid_t pid = spawn_idle_process();
	int fds = live_count_fds();

	for (size_t i = 0; i < PR_ARRAY_SIZE(both); i++) {
		reset_hooks();
		refuse_kernel = true;
		logtext[0] = 0;
		ck_assert_ptr_null(pr_reader_open_pids(&pid, 1, both[i]));
		ck_assert_int_eq(errno, EACCES);
		ck_assert_msg(strstr(logtext, "off-CPU profiling needs kernel.perf_event_paranoid <= 1 "
				     "or CAP_PERFMON"), "%s", logtext);
		ck_assert_msg(strstr(logtext, "sysctl -w kernel.perf_event_paranoid=1"),
			      "%s", logtext);
		ck_assert_int_eq(live_count_fds(), fds);
	}
	stop_process(pid);
	reset_hooks();
}
END_TEST

START_TEST(refused_system_wide_sampling_says_what_to_do)
{
	PR_OPTS(pr_reader_opts, o, .log = keep_log);

	reset_hooks();
	refuse_kernel = true;
	logtext[0] = 0;
	ck_assert_ptr_null(pr_reader_open_cpus(NULL, 0, &o));
	ck_assert_int_eq(errno, EACCES);
	ck_assert_msg(strstr(logtext, "kernel.perf_event_paranoid is"), "%s", logtext);
	ck_assert_msg(strstr(logtext, "CAP_PERFMON"), "%s", logtext);
	ck_assert_msg(strstr(logtext, "sysctl -w kernel.perf_event_paranoid=0"), "%s", logtext);
	reset_hooks();
}
END_TEST

START_TEST(refused_ring_mapping_points_at_perf_event_mlock_kb)
{
	PR_OPTS(pr_reader_opts, o, .log = keep_log);

	reset_hooks();
	/* The fallible steps go: the first open, its id, then the mmap. */
	fail_at = 2;
	fail_errno = EPERM;
	logtext[0] = 0;
	ck_assert_ptr_null(pr_reader_open_cpus(NULL, 0, &o));
	ck_assert_int_eq(errno, EPERM);
	ck_assert_msg(strstr(logtext, "perf_event_mlock_kb"), "%s", logtext);
	ck_assert_int_eq(count_perf_fds(), 0);
	reset_hooks();
}
END_TEST

START_TEST(too_many_open_files_says_to_raise_the_limit)
{
	PR_OPTS(pr_reader_opts, o, .log = keep_log);

	reset_hooks();
	fail_at = 0;
	fail_errno = EMFILE;
	logtext[0] = 0;
	ck_assert_ptr_null(pr_reader_open_cpus(NULL, 0, &o));
	ck_assert_msg(strstr(logtext, "ulimit -n"), "%s", logtext);
	reset_hooks();
}
END_TEST

TCase *counter_open_tcase(void);
TCase *reader_events_open_tcase(void);

int main(void)
{
	Suite *s = suite_create("open");
	TCase *tc = tcase_create("interposed");

	live_require_perf();
	tcase_set_timeout(tc, 120);
	tcase_add_test(tc, failure_at_any_step_of_opening_a_process_leaks_nothing);
	tcase_add_test(tc, failure_at_any_step_of_opening_two_events_per_thread_leaks_nothing);
	tcase_add_test(tc, failure_at_any_step_of_opening_all_cpus_leaks_nothing);
	tcase_add_test(tc, failure_at_any_step_of_launching_a_command_leaks_nothing_not_even_the_child);
	tcase_add_test(tc, events_open_disabled_and_are_enabled_after_every_ring_is_mapped);
	tcase_add_test(tc, a_launched_command_is_enabled_by_its_exec_not_by_ioctl);
	tcase_add_test(tc, a_command_that_cannot_run_is_an_error_naming_it);
	tcase_add_test(tc, enabling_a_command_that_died_first_is_an_error_not_a_sigpipe);
	tcase_add_test(tc, the_callers_signal_handlers_do_not_run_in_the_waiting_command);
	tcase_add_test(tc, a_ring_too_small_for_one_sample_is_refused);
	tcase_add_test(tc, a_ring_holds_a_second_of_samples_at_a_low_rate);
	tcase_add_test(tc, offline_cpus_are_skipped_silently);
	tcase_add_test(tc, no_cpu_at_all_is_an_error);
	tcase_add_test(tc, hardware_cycles_are_used_when_the_pmu_answers);
	tcase_add_test(tc, a_pmu_open_to_user_mode_only_is_still_used);
	tcase_add_test(tc, bad_options_are_not_mistaken_for_a_missing_pmu);
	tcase_add_test(tc, missing_pmu_falls_back_to_cpu_clock);
	tcase_add_test(tc, other_pmu_errors_propagate);
	tcase_add_test(tc, refused_kernel_sampling_falls_back_to_user_mode_for_processes);
	tcase_add_test(tc, refused_off_cpu_event_says_it_needs_kernel_sampling);
	tcase_add_test(tc, refused_system_wide_sampling_says_what_to_do);
	tcase_add_test(tc, refused_ring_mapping_points_at_perf_event_mlock_kb);
	tcase_add_test(tc, too_many_open_files_says_to_raise_the_limit);
	suite_add_tcase(s, tc);
	suite_add_tcase(s, counter_open_tcase());
	suite_add_tcase(s, reader_events_open_tcase());
	return run_suite(s);
}
