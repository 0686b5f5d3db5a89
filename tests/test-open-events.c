/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Opening the reader's event lists and read groups, with the kernel
 * interposed (interpose.h): what is opened in which group, what a paranoid
 * kernel's refusal turns into, and that no failure leaks.
 */
#include <check.h>
#include <errno.h>
#include <linux/perf_event.h>
#include <string.h>
#include <unistd.h>

#include "interpose.h"
#include "livecheck.h"

static const struct pr_event_desc page_faults = {
	.type = PERF_TYPE_SOFTWARE, .config = PERF_COUNT_SW_PAGE_FAULTS, .name = "page-faults"
};
static const struct pr_event_desc cs_user = {
	.type = PERF_TYPE_SOFTWARE, .config = PERF_COUNT_SW_CONTEXT_SWITCHES,
	.name = "context-switches:u", .exclude_kernel = true
};
static const struct pr_event_desc clock_kernel = {
	.type = PERF_TYPE_SOFTWARE, .config = PERF_COUNT_SW_CPU_CLOCK, .name = "cpu-clock:k",
	.exclude_user = true
};
static const struct pr_event_desc migrations = {
	.type = PERF_TYPE_SOFTWARE, .config = PERF_COUNT_SW_CPU_MIGRATIONS,
	.name = "cpu-migrations"
};

/* test-open.c: fail each step of opening a reader with `o`. */
void check_reader_no_leak(enum target t, int min_steps, const struct pr_reader_opts *o);

#define EVENT(d) { .sz = sizeof(struct pr_event_opts), .stack_size = 64, .period = 1, \
		   .desc = &(d) }

/* Three events on a process: every one opened per thread and CPU, in
 * order, none in a group, and only the first owning a ring per CPU. */
START_TEST(listed_events_open_in_order_on_every_thread_and_cpu)
{
	struct pr_event_opts evs[] = { EVENT(page_faults), EVENT(cs_user), EVENT(migrations) };
	PR_OPTS(pr_reader_opts, o, .ring_pages = 4, .log = keep_log, .events = evs,
		.nr_events = 3);
	long cpus = sysconf(_SC_NPROCESSORS_ONLN);
	pid_t pid = spawn_idle_process();
	struct pr_reader *r;
	int opens = 0, mmaps = 0;

	reset_hooks();
	r = pr_reader_open_pids(&pid, 1, &o);
	ck_assert_ptr_nonnull(r);
	ck_assert_uint_eq(pr_reader_nr_events(r), 3);
	for (int i = 0; i < nr_calls; i++) {
		if (calls[i].what == CALL_MMAP)
			mmaps++;
		if (calls[i].what != CALL_OPEN)
			continue;
		ck_assert_int_eq(calls[i].group_fd, -1);
		ck_assert_uint_eq(calls[i].config, evs[opens % 3].desc->config);
		opens++;
	}
	ck_assert_int_eq(opens, 3 * 3 * (int)cpus);
	ck_assert_int_eq(mmaps, (int)cpus);
	/* The first event reports the side-band, the others do not. */
	ck_assert_uint_eq(pr_reader_event_attr(r, 0)->mmap, 1);
	ck_assert_uint_eq(pr_reader_event_attr(r, 1)->mmap, 0);
	for (size_t i = 0; i < 3; i++)
		ck_assert(pr_reader_event_attr(r, i)->sample_type & PERF_SAMPLE_IDENTIFIER);
	pr_reader_close(r);
	stop_process(pid);
}
END_TEST

/* A read group: per thread and CPU the leader opens alone, its members
 * with the leader's fd as group_fd; only the leader is mapped. */
START_TEST(a_read_groups_members_open_in_their_leaders_group)
{
	struct pr_event_opts evs[] = { EVENT(page_faults), EVENT(cs_user), EVENT(migrations) };
	PR_OPTS(pr_reader_opts, o, .ring_pages = 4, .log = keep_log, .events = evs,
		.nr_events = 3, .read_group = true);
	long cpus = sysconf(_SC_NPROCESSORS_ONLN);
	struct pr_reader *r;
	int opens = 0, mmaps = 0;

	reset_hooks();
	r = pr_reader_open_cpus(NULL, 0, &o);
	ck_assert_ptr_nonnull(r);
	for (int i = 0; i < nr_calls; i++) {
		if (calls[i].what == CALL_MMAP)
			mmaps++;
		if (calls[i].what != CALL_OPEN)
			continue;
		if (opens % 3 == 0) {
			ck_assert_int_eq(calls[i].group_fd, -1);
			ck_assert(calls[i].disabled);
		} else {
			ck_assert_int_ge(calls[i].group_fd, 0);
			ck_assert(!calls[i].disabled);
		}
		opens++;
	}
	ck_assert_int_eq(opens, 3 * (int)cpus);
	ck_assert_int_eq(mmaps, (int)cpus);
	ck_assert(pr_reader_event_attr(r, 0)->sample_type & PERF_SAMPLE_READ);
	ck_assert(pr_reader_event_attr(r, 0)->read_format & PERF_FORMAT_GROUP);
	ck_assert_uint_eq(pr_reader_event_attr(r, 1)->sample_period, 0);
	pr_reader_close(r);
}
END_TEST

/* Under perf_event_paranoid=2 every event falls back to user mode, the
 * one asked for user mode keeps it, and a read group's members follow. */
START_TEST(refused_kernel_sampling_falls_back_to_user_mode_for_every_event)
{
	struct pr_event_opts evs[] = { EVENT(page_faults), EVENT(cs_user), EVENT(migrations) };
	PR_OPTS(pr_reader_opts, o, .ring_pages = 4, .log = keep_log, .events = evs,
		.nr_events = 3);
	pid_t pid = spawn_idle_process();

	for (int group = 0; group < 2; group++) {
		struct pr_reader *r;

		o.read_group = group;
		reset_hooks();
		refuse_kernel = true;
		logtext[0] = 0;
		r = pr_reader_open_pids(&pid, 1, &o);
		ck_assert_msg(r, "%s", logtext);
		for (size_t i = 0; i < 3; i++) {
			ck_assert_uint_eq(pr_reader_event_attr(r, i)->exclude_kernel, 1);
			ck_assert_uint_eq(pr_reader_event_attr(r, i)->exclude_user, 0);
		}
		ck_assert_msg(strstr(logtext, "user mode only"), "%s", logtext);
		pr_reader_close(r);
	}
	stop_process(pid);
	reset_hooks();
}
END_TEST

/* An event asked for the kernel alone (":k") cannot fall back to user
 * mode, where it would count nothing: the open fails, explained, and
 * leaves nothing behind, whatever comes before it in the list. */
START_TEST(a_kernel_only_event_refused_is_an_error_not_an_empty_event)
{
	struct pr_event_opts first[] = { EVENT(clock_kernel), EVENT(page_faults) };
	struct pr_event_opts second[] = { EVENT(page_faults), EVENT(clock_kernel) };
	struct pr_event_opts *lists[] = { first, second };
	pid_t pid = spawn_idle_process();
	int fds = live_count_fds();

	for (size_t i = 0; i < 2; i++) {
		PR_OPTS(pr_reader_opts, o, .ring_pages = 4, .log = keep_log,
			.events = lists[i], .nr_events = 2);

		reset_hooks();
		refuse_kernel = true;
		logtext[0] = 0;
		ck_assert_ptr_null(pr_reader_open_pids(&pid, 1, &o));
		ck_assert_int_eq(errno, EACCES);
		ck_assert_msg(strstr(logtext, "kernel.perf_event_paranoid is"), "%s", logtext);
		ck_assert_int_eq(live_count_fds(), fds);
	}
	stop_process(pid);
	reset_hooks();
}
END_TEST

/* A kernel before 6.12 refuses counts on the samples of inherited
 * events: a read group on a process says so and what to do instead;
 * system-wide, where nothing is inherited, it opens. */
START_TEST(a_kernel_refusing_inherited_counts_says_to_sample_system_wide)
{
	struct pr_event_opts evs[] = { EVENT(page_faults), EVENT(migrations) };
	PR_OPTS(pr_reader_opts, o, .ring_pages = 4, .log = keep_log, .events = evs,
		.nr_events = 2, .read_group = true);
	pid_t pid = spawn_idle_process();
	int fds = live_count_fds();
	struct pr_reader *r;

	reset_hooks();
	refuse_inherited_read = true;
	logtext[0] = 0;
	ck_assert_ptr_null(pr_reader_open_pids(&pid, 1, &o));
	ck_assert_int_eq(errno, EINVAL);
	ck_assert_msg(strstr(logtext, "Linux 6.12 or later") &&
		      strstr(logtext, "sample system-wide instead"), "%s", logtext);
	ck_assert_int_eq(live_count_fds(), fds);
	r = pr_reader_open_cpus(NULL, 0, &o);
	ck_assert_msg(r, "%s", logtext);
	pr_reader_close(r);
	stop_process(pid);
	reset_hooks();
}
END_TEST

START_TEST(failure_at_any_step_of_opening_a_read_group_leaks_nothing)
{
	struct pr_event_opts evs[] = { EVENT(page_faults), EVENT(cs_user) };
	PR_OPTS(pr_reader_opts, o, .ring_pages = 4, .log = keep_log, .events = evs,
		.nr_events = 2, .read_group = true);
	long cpus = sysconf(_SC_NPROCESSORS_ONLN);

	/* Three threads on every CPU: 6 * cpus opens and ids, cpus mmaps,
	 * 2 * cpus redirections of the leaders. */
	check_reader_no_leak(T_PIDS, (int)(15 * cpus), &o);
	check_reader_no_leak(T_COMMAND, (int)(5 * cpus), &o);
}
END_TEST

/* Options that cannot work are refused before anything opens. */
START_TEST(event_lists_that_cannot_work_are_refused)
{
	struct pr_event_opts many[33];
	PR_OPTS(pr_reader_opts, too_many, .log = keep_log, .events = many, .nr_events = 33);
	PR_OPTS(pr_reader_opts, no_count, .log = keep_log, .events = many);
	PR_OPTS(pr_reader_opts, no_list, .log = keep_log, .read_group = true);
	PR_OPTS(pr_event_opts, off);
	PR_OPTS(pr_reader_opts, no_cpu, .log = keep_log, .events = many, .nr_events = 1,
		.off_cpu = &off, .no_cpu_samples = true);
	struct pr_event_opts no_desc[] = { { .sz = sizeof(struct pr_event_opts) } };
	PR_OPTS(pr_reader_opts, without_desc, .log = keep_log, .events = no_desc,
		.nr_events = 1);
	int perf_fds = count_perf_fds();

	for (size_t i = 0; i < 33; i++)
		many[i] = (struct pr_event_opts)EVENT(page_faults);
	reset_hooks();
	logtext[0] = 0;
	ck_assert_ptr_null(pr_reader_open_cpus(NULL, 0, &too_many));
	ck_assert_int_eq(errno, E2BIG);
	ck_assert_msg(strstr(logtext, "at most 32"), "%s", logtext);
	ck_assert_ptr_null(pr_reader_open_cpus(NULL, 0, &no_count));
	ck_assert_int_eq(errno, EINVAL);
	ck_assert_ptr_null(pr_reader_open_cpus(NULL, 0, &no_list));
	ck_assert_int_eq(errno, EINVAL);
	ck_assert_ptr_null(pr_reader_open_cpus(NULL, 0, &no_cpu));
	ck_assert_int_eq(errno, EINVAL);
	ck_assert_ptr_null(pr_reader_open_cpus(NULL, 0, &without_desc));
	ck_assert_int_eq(errno, EINVAL);
	ck_assert_msg(strstr(logtext, "desc"), "%s", logtext);
	ck_assert_int_eq(nr_calls, 0);
	ck_assert_int_eq(count_perf_fds(), perf_fds);
}
END_TEST

TCase *reader_events_open_tcase(void);
TCase *reader_events_open_tcase(void)
{
	TCase *tc = tcase_create("events");

	tcase_set_timeout(tc, 120);
	tcase_add_test(tc, listed_events_open_in_order_on_every_thread_and_cpu);
	tcase_add_test(tc, a_read_groups_members_open_in_their_leaders_group);
	tcase_add_test(tc, refused_kernel_sampling_falls_back_to_user_mode_for_every_event);
	tcase_add_test(tc, a_kernel_only_event_refused_is_an_error_not_an_empty_event);
	tcase_add_test(tc, a_kernel_refusing_inherited_counts_says_to_sample_system_wide);
	tcase_add_test(tc, failure_at_any_step_of_opening_a_read_group_leaks_nothing);
	tcase_add_test(tc, event_lists_that_cannot_work_are_refused);
	return tc;
}
