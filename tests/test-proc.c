/* SPDX-License-Identifier: Apache-2.0 */
/* Walking /proc (capture/proc.c), over this test's own process. */
#include <check.h>
#include <errno.h>
#include <pthread.h>
#include <unistd.h>

#include "capture/capture.h"
#include "checkmain.h"

struct seen {
	pid_t want[2];
	int found[2];
	int calls;
	int stop_at;      /* return 7 from this call on (0: never) */
};

static int note(pid_t id, void *arg)
{
	struct seen *s = arg;

	for (int i = 0; i < 2; i++)
		s->found[i] += id == s->want[i];
	s->calls++;
	return s->stop_at && s->calls >= s->stop_at ? 7 : 0;
}

/* A thread that says its id down a pipe and waits. */
static void *park(void *arg)
{
	pid_t tid = gettid();

	ck_assert_int_eq(write(*(int *)arg, &tid, sizeof(tid)), sizeof(tid));
	pause();
	return NULL;
}

START_TEST(the_threads_of_a_process_are_each_walked_once)
{
	struct seen s = { .want = { getpid(), 0 } };
	pthread_t t;
	int fds[2];

	ck_assert_int_eq(pipe(fds), 0);
	ck_assert_int_eq(pthread_create(&t, NULL, park, &fds[1]), 0);
	ck_assert_int_eq(read(fds[0], &s.want[1], sizeof(s.want[1])), sizeof(s.want[1]));
	ck_assert_int_eq(pr__proc_for_each(getpid(), note, &s), 0);
	ck_assert_int_eq(s.found[0], 1);
	ck_assert_int_eq(s.found[1], 1);
}
END_TEST

START_TEST(pid_0_walks_the_processes_and_finds_this_one)
{
	struct seen s = { .want = { getpid(), -1 } };

	ck_assert_int_eq(pr__proc_for_each(0, note, &s), 0);
	ck_assert_int_eq(s.found[0], 1);
	ck_assert_int_gt(s.calls, 1);
}
END_TEST

START_TEST(a_callbacks_non_zero_return_stops_the_walk_and_is_returned)
{
	struct seen s = { .stop_at = 1 };

	ck_assert_int_eq(pr__proc_for_each(0, note, &s), 7);
	ck_assert_int_eq(s.calls, 1);
}
END_TEST

START_TEST(a_process_that_does_not_exist_is_esrch)
{
	struct seen s = { 0 };

	/* Above the kernel's pid_max limit (2^22): never a process. */
	ck_assert_int_eq(pr__proc_for_each(1 << 23, note, &s), -ESRCH);
	ck_assert_int_eq(s.calls, 0);
}
END_TEST

static Suite *proc_suite(void)
{
	Suite *s = suite_create("proc");
	TCase *tc = tcase_create("walk");

	tcase_add_test(tc, the_threads_of_a_process_are_each_walked_once);
	tcase_add_test(tc, pid_0_walks_the_processes_and_finds_this_one);
	tcase_add_test(tc, a_callbacks_non_zero_return_stops_the_walk_and_is_returned);
	tcase_add_test(tc, a_process_that_does_not_exist_is_esrch);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	return run_suite(proc_suite());
}
