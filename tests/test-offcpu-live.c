/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The off-CPU event, live, through the public API only: a thread that
 * blocks gives a switch-out sample (user registers and stack) from the
 * off-CPU event and SWITCH records out and in; a thread that is preempted
 * is marked so; side-band records come once although two events watch
 * each thread.  The kernel must allow kernel-mode sampling
 * (kernel.perf_event_paranoid <= 1 or CAP_PERFMON), else the test skips.
 */
#include <check.h>
#include <errno.h>
#include <linux/perf_event.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "checkmain.h"
#include "livecheck.h"
#include "perfreader.h"

/* What a capture saw of one process. */
struct seen {
	const struct pr_reader *r;
	pid_t pid;
	int off_event;                   /* the off-CPU event's index */
	int samples[2];                  /* of the process, by event */
	int off_with_stack;              /* off-CPU samples with regs + stack */
	int outs, ins, preempted_outs;   /* its SWITCH records */
	int exits, unknown_event;
};

static int note(const struct pr_record *rec, void *arg)
{
	struct seen *s = arg;
	int ev = pr_reader_event_of(s->r, rec);

	if (rec->pid != (uint32_t)s->pid)
		return 0;
	if (ev < 0) {
		s->unknown_event++;
		return 0;
	}
	switch (rec->type) {
	case PR_RECORD_SAMPLE:
		s->samples[ev]++;
		if (ev == s->off_event && rec->u.sample.regs &&
		    rec->u.sample.regs_abi == PERF_SAMPLE_REGS_ABI_64 &&
		    rec->u.sample.stack_dyn_size > 0)
			s->off_with_stack++;
		break;
	case PR_RECORD_SWITCH:
		ck_assert_int_eq(ev, s->off_event);
		if (rec->u.sw.out)
			s->outs++;
		else
			s->ins++;
		s->preempted_outs += rec->u.sw.out && rec->u.sw.preempt;
		break;
	case PR_RECORD_EXIT:
		s->exits++;
		break;
	default:
		break;
	}
	return 0;
}

static void skip_unless_allowed(struct pr_reader *r, const char *log)
{
	if (!r && (errno == EACCES || errno == EPERM)) {
		printf("SKIP: %s\n", log);
		exit(77);
	}
	ck_assert_msg(r, "open failed: %s: %s", strerror(errno), log);
}

static char last_log[1024];

static void keep_log(enum pr_log_level level, const char *msg, void *ctx)
{
	(void)ctx;
	if (level == PR_LOG_ERROR)
		snprintf(last_log, sizeof(last_log), "%s", msg);
}

/* A child that waits for a byte on `go`, then sleeps `n` times 1 ms. */
static pid_t sleeper(int n, int *go)
{
	int fds[2];
	pid_t pid;

	ck_assert_int_eq(pipe(fds), 0);
	pid = fork();
	ck_assert_int_ge(pid, 0);
	if (pid == 0) {
		struct timespec ms = { 0, 1000000 };
		char c;

		close(fds[1]);
		if (read(fds[0], &c, 1) != 1)
			_exit(1);
		for (int i = 0; i < n; i++)
			nanosleep(&ms, NULL);
		_exit(0);
	}
	close(fds[0]);
	*go = fds[1];
	return pid;
}

static void drain_until_done(struct pr_reader *r, struct seen *s)
{
	while (!pr_reader_done(r))
		ck_assert_int_ge(pr_reader_poll(r, 100, note, s), 0);
	ck_assert_int_ge(pr_reader_consume(r, note, s), 0);
}

START_TEST(a_blocking_thread_gives_switch_out_samples_and_switch_records)
{
	PR_OPTS(pr_event_opts, off, .stack_size = 4096);
	PR_OPTS(pr_reader_opts, o, .off_cpu = &off, .log = keep_log);
	struct seen s = { 0 };
	struct pr_reader *r;
	long cpus = sysconf(_SC_NPROCESSORS_ONLN);
	int go, status;
	pid_t pid = sleeper(20, &go);

	r = pr_reader_open_pids(&pid, 1, &o);
	skip_unless_allowed(r, last_log);
	ck_assert_uint_eq(pr_reader_nr_events(r), 2);
	ck_assert_int_eq(pr_event_source_of(pr_reader_event_attr(r, 0)), PR_SOURCE_CPU_CLOCK);
	ck_assert_int_eq(pr_event_source_of(pr_reader_event_attr(r, 1)),
			 PR_SOURCE_CONTEXT_SWITCH);
	ck_assert_ptr_null(pr_reader_event_attr(r, 2));
	ck_assert_ptr_eq(pr_reader_attr(r), pr_reader_event_attr(r, 0));
	/* The side-band comes from the CPU event alone. */
	ck_assert_uint_eq(pr_reader_event_attr(r, 0)->task, 1);
	ck_assert_uint_eq(pr_reader_event_attr(r, 1)->task, 0);
	/* One event of each kind per CPU for the one thread. */
	ck_assert_uint_eq(pr_reader_event_ids(r, 0, NULL, 0), (size_t)cpus);
	ck_assert_uint_eq(pr_reader_event_ids(r, 1, NULL, 0), (size_t)cpus);
	ck_assert_uint_eq(pr_reader_ids(r, NULL, 0), 2 * (size_t)cpus);

	s.r = r;
	s.pid = pid;
	s.off_event = 1;
	ck_assert_int_eq(pr_reader_enable(r), 0);
	ck_assert_int_eq(write(go, "g", 1), 1);
	close(go);
	drain_until_done(r, &s);
	ck_assert_int_eq(waitpid(pid, &status, 0), pid);
	ck_assert_int_eq(status, 0);
	pr_reader_close(r);

	/* Twenty sleeps: at least twenty switches out, each sampled with
	 * the user registers and stack, and as many back in. */
	ck_assert_int_eq(s.unknown_event, 0);
	ck_assert_int_ge(s.samples[1], 20);
	ck_assert_int_ge(s.off_with_stack, 20);
	ck_assert_int_ge(s.outs, 20);
	ck_assert_int_ge(s.ins, 20);
	ck_assert_int_eq(s.exits, 1);
}
END_TEST

static void *spin(void *arg)
{
	(void)arg;
	for (;;)
		__asm__ volatile("" ::: "memory");
	return NULL;
}

/* A child whose two threads spin on one CPU: each is preempted by the
 * other at every scheduler tick that ends its slice. */
static pid_t two_spinners(void)
{
	pid_t pid = fork();

	ck_assert_int_ge(pid, 0);
	if (pid == 0) {
		cpu_set_t one;
		pthread_t t;
		int cpu = sched_getcpu();

		CPU_ZERO(&one);
		CPU_SET(cpu < 0 ? 0 : cpu, &one);
		if (sched_setaffinity(0, sizeof(one), &one) ||
		    pthread_create(&t, NULL, spin, NULL))
			_exit(1);
		spin(NULL);
	}
	return pid;
}

START_TEST(a_thread_preempted_while_runnable_is_marked_so)
{
	PR_OPTS(pr_event_opts, off, .stack_size = 1024);
	PR_OPTS(pr_reader_opts, o, .off_cpu = &off, .no_cpu_samples = true,
		.log = keep_log);
	struct seen s = { 0 };
	struct pr_reader *r;
	pid_t pid = two_spinners();
	int status;

	r = pr_reader_open_pids(&pid, 1, &o);
	if (!r)
		kill(pid, SIGKILL);
	skip_unless_allowed(r, last_log);
	/* Off-CPU only: its one event carries the side-band. */
	ck_assert_uint_eq(pr_reader_nr_events(r), 1);
	ck_assert_int_eq(pr_event_source_of(pr_reader_attr(r)), PR_SOURCE_CONTEXT_SWITCH);
	ck_assert_uint_eq(pr_reader_attr(r)->mmap2, 1);
	s.r = r;
	s.pid = pid;
	s.off_event = 0;
	ck_assert_int_eq(pr_reader_enable(r), 0);
	/* Time slices are milliseconds; 2000 polls of up to 10 ms is ample,
	 * and the loop stops at the first preemption seen. */
	for (int i = 0; i < 2000 && !s.preempted_outs; i++)
		ck_assert_int_ge(pr_reader_poll(r, 10, note, &s), 0);
	kill(pid, SIGKILL);
	ck_assert_int_eq(waitpid(pid, &status, 0), pid);
	pr_reader_close(r);
	ck_assert_msg(s.preempted_outs > 0, "no preempted switch out among %d", s.outs);
	ck_assert_int_gt(s.off_with_stack, 0);
	ck_assert_int_eq(s.unknown_event, 0);
}
END_TEST

START_TEST(a_launched_command_gets_both_events_in_one_ring)
{
	PR_OPTS(pr_event_opts, off, .stack_size = 2048);
	PR_OPTS(pr_reader_opts, o, .off_cpu = &off, .log = keep_log);
	char *argv[] = { "sleep", "0.01", NULL };
	struct seen s = { 0 };
	struct pr_reader *r = pr_reader_open_command(argv, &o);
	int status;

	skip_unless_allowed(r, last_log);
	/* Two events per CPU share a ring: records say which wrote them. */
	ck_assert(pr_reader_event_attr(r, 0)->sample_type & PERF_SAMPLE_IDENTIFIER);
	ck_assert(pr_reader_event_attr(r, 1)->sample_type & PERF_SAMPLE_IDENTIFIER);
	s.r = r;
	s.pid = pr_reader_child(r);
	s.off_event = 1;
	ck_assert_int_eq(pr_reader_enable(r), 0);
	drain_until_done(r, &s);
	ck_assert_int_eq(waitpid(s.pid, &status, 0), s.pid);
	pr_reader_close(r);
	ck_assert_int_eq(s.unknown_event, 0);
	ck_assert_int_ge(s.off_with_stack, 1);
	ck_assert_int_ge(s.outs, 1);
	ck_assert_int_ge(s.ins, 1);
	ck_assert_int_eq(s.exits, 1);
}
END_TEST

/* The samples a reader's rings took with another program's event id:
 * adopted by its one event that can have taken them, or dropped. */
static void foreign_ids(const struct pr_reader *r, uint64_t *adopted, uint64_t *dropped)
{
	*adopted = *dropped = 0;
	for (size_t i = 0; i < pr_reader_nr_rings(r); i++) {
		struct pr_ring_stats st = { .sz = sizeof(st) };

		ck_assert_int_eq(pr_reader_ring_stats(r, i, &st), 0);
		*adopted += st.foreign_adopted;
		*dropped += st.foreign_dropped;
	}
}

/* The least period of event 0's samples, and the first and last times
 * of the switch records and of event 1's samples, what `note` counts
 * besides. */
struct seen_periods {
	struct seen s;
	uint64_t least_period0;
	uint64_t switches[2], samples1[2];
};

static void widen(uint64_t *range, uint64_t t)
{
	if (!range[0] || t < range[0])
		range[0] = t;
	if (t > range[1])
		range[1] = t;
}

static int note_period(const struct pr_record *rec, void *arg)
{
	struct seen_periods *sp = arg;
	int ev = pr_reader_event_of(sp->s.r, rec);

	if (rec->pid != (uint32_t)sp->s.pid)
		return 0;
	if (rec->type == PR_RECORD_SAMPLE && ev == 0 && rec->u.sample.period < sp->least_period0)
		sp->least_period0 = rec->u.sample.period;
	if (rec->type == PR_RECORD_SAMPLE && ev == 1)
		widen(sp->samples1, rec->time);
	if (rec->type == PR_RECORD_SWITCH)
		widen(sp->switches, rec->time);
	return note(rec, &sp->s);
}

/* The other program of beside_another(), when it is not a reader of
 * ours: as perf record samples context switches by default, in its clock
 * (here CLOCK_REALTIME, decades from CLOCK_MONOTONIC) with its user
 * registers (20, more than ours) and 1 KiB stacks. */
static int open_perf_like(pid_t pid)
{
	struct perf_event_attr a = {
		.size = sizeof(a), .type = PERF_TYPE_SOFTWARE,
		.config = PERF_COUNT_SW_CONTEXT_SWITCHES, .sample_period = 1,
		.sample_type = PERF_SAMPLE_IDENTIFIER | PERF_SAMPLE_IP | PERF_SAMPLE_TID |
			       PERF_SAMPLE_TIME | PERF_SAMPLE_REGS_USER | PERF_SAMPLE_STACK_USER,
		.sample_regs_user = 0xff0fff, .sample_stack_user = 1024,
		.use_clockid = 1, .clockid = CLOCK_REALTIME, .inherit = 1, .sample_id_all = 1,
	};
	int fd = (int)syscall(__NR_perf_event_open, &a, pid, -1, -1, PERF_FLAG_FD_CLOEXEC);

	ck_assert_msg(fd >= 0, "perf_event_open: %s", strerror(errno));
	return fd;
}

/*
 * Two programs sample context switches on one thread: `first` (the
 * reader under test, opened first) and another opened after it, whose
 * event the kernel then hands each switch first: an off-CPU reader of
 * ours, or with `perf_like`, open_perf_like()'s event.  Linux 6.3+
 * gives `first`'s switch samples that one's id.  Drain `first`; the
 * times of its switch records go to `switches` (their first and last).
 */
static struct seen_periods beside_another(const struct pr_reader_opts *first, int sleeps,
					  bool perf_like, struct pr_reader **rp)
{
	PR_OPTS(pr_event_opts, off, .stack_size = 512);
	PR_OPTS(pr_reader_opts, o2, .off_cpu = &off, .no_cpu_samples = true, .log = keep_log);
	struct seen_periods sp = { .least_period0 = UINT64_MAX };
	struct pr_reader *r, *other = NULL;
	int go, status, fd = -1;
	pid_t pid = sleeper(sleeps, &go);

	r = pr_reader_open_pids(&pid, 1, first);
	skip_unless_allowed(r, last_log);
	if (perf_like) {
		fd = open_perf_like(pid);
	} else {
		other = pr_reader_open_pids(&pid, 1, &o2);
		skip_unless_allowed(other, last_log);
		ck_assert_int_eq(pr_reader_enable(other), 0);
	}
	sp.s.r = r;
	sp.s.pid = pid;
	sp.s.off_event = 1;
	ck_assert_int_eq(pr_reader_enable(r), 0);
	ck_assert_int_eq(write(go, "g", 1), 1);
	close(go);
	while (!pr_reader_done(r))
		ck_assert_int_ge(pr_reader_poll(r, 100, note_period, &sp), 0);
	ck_assert_int_ge(pr_reader_consume(r, note_period, &sp), 0);
	ck_assert_int_eq(waitpid(pid, &status, 0), pid);
	ck_assert_int_eq(status, 0);
	pr_reader_close(other);
	if (fd >= 0)
		close(fd);
	*rp = r;
	return sp;
}

/*
 * A --wall reader beside another program's switch event (beside_another()):
 * every switch sample is under the off-CPU event, with its stack, as many
 * as the kernel counted switches out, between the first and last switch
 * records in time; none under cpu-clock, whose every sample stands for its
 * period of 10 ms (at 99 Hz), a switch sample for 1 switch.
 */
static void every_switch_is_ours(bool perf_like)
{
	PR_OPTS(pr_event_opts, off, .stack_size = 512);
	PR_OPTS(pr_reader_opts, o, .off_cpu = &off, .ring_pages = 256, .log = keep_log);
	struct pr_reader *r;
	struct seen_periods sp = beside_another(&o, 200, perf_like, &r);
	uint64_t adopted, dropped, switches;

	foreign_ids(r, &adopted, &dropped);
	ck_assert_int_eq(pr_reader_count(r, 1, &switches), 0);
	ck_assert_uint_eq(pr_reader_lost(r), 0);
	ck_assert_int_eq(sp.s.unknown_event, 0);
	ck_assert_uint_eq(dropped, 0);
	ck_assert_int_ge(sp.s.samples[1], 200);
	ck_assert_uint_eq((uint64_t)sp.s.samples[1], switches);
	ck_assert_int_eq(sp.s.off_with_stack, sp.s.samples[1]);
	ck_assert_msg(!sp.s.samples[0] || sp.least_period0 >= 1000000,
		      "a sample of period %llu among cpu-clock's %d",
		      (unsigned long long)sp.least_period0, sp.s.samples[0]);
	ck_assert_msg(sp.samples1[0] >= sp.switches[0] && sp.samples1[1] <= sp.switches[1],
		      "switch samples at [%llu, %llu], switch records at [%llu, %llu]",
		      (unsigned long long)sp.samples1[0], (unsigned long long)sp.samples1[1],
		      (unsigned long long)sp.switches[0], (unsigned long long)sp.switches[1]);
	printf("# %llu of %d switch samples bore the other %s's id\n",
	       (unsigned long long)adopted, sp.s.samples[1], perf_like ? "program" : "reader");
	pr_reader_close(r);
}

START_TEST(a_switch_sample_bearing_another_programs_id_is_still_this_readers_off_cpu_one)
{
	every_switch_is_ours(false);
}
END_TEST

/* The same beside an event as perf's, in another clock, with more user
 * registers: the kernel sizes the record for its registers and writes
 * ours, and stamps it in its clock. */
START_TEST(a_switch_sample_stamped_in_another_programs_clock_gets_its_switch_outs_time)
{
	every_switch_is_ours(true);
}
END_TEST

static const struct pr_event_desc page_faults = {
	.type = PERF_TYPE_SOFTWARE, .config = PERF_COUNT_SW_PAGE_FAULTS, .name = "page-faults"
};

START_TEST(a_sample_bearing_another_programs_id_is_dropped_when_two_events_could_own_it)
{
	PR_OPTS(pr_event_opts, faults, .period = 1, .stack_size = 64, .desc = &page_faults);
	PR_OPTS(pr_event_opts, off, .stack_size = 512);
	PR_OPTS(pr_reader_opts, o, .events = &faults, .nr_events = 1, .off_cpu = &off,
		.ring_pages = 256, .log = keep_log);
	struct pr_reader *r;
	struct seen_periods sp = beside_another(&o, 200, false, &r);
	uint64_t adopted, dropped, faulted, switches;

	foreign_ids(r, &adopted, &dropped);
	ck_assert_int_eq(pr_reader_count(r, 0, &faulted), 0);
	ck_assert_int_eq(pr_reader_count(r, 1, &switches), 0);
	ck_assert_uint_eq(pr_reader_lost(r), 0);
	/* Page faults and switches both may take such a sample: none is
	 * counted under either event beyond what the kernel counted, and
	 * every switch is a sample or a dropped one. */
	ck_assert_int_eq(sp.s.unknown_event, 0);
	ck_assert_uint_eq(adopted, 0);
	ck_assert_uint_le((uint64_t)sp.s.samples[0], faulted);
	ck_assert_uint_eq((uint64_t)sp.s.samples[1] + dropped, switches);
	ck_assert_uint_ge(switches, 200);
	printf("# %llu of %llu switch samples bore the other reader's id, dropped\n",
	       (unsigned long long)dropped, (unsigned long long)switches);
	pr_reader_close(r);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("offcpu-live");
	TCase *tc = tcase_create("offcpu");

	live_require_perf();
	tcase_set_timeout(tc, 120);
	tcase_add_test(tc, a_blocking_thread_gives_switch_out_samples_and_switch_records);
	tcase_add_test(tc, a_thread_preempted_while_runnable_is_marked_so);
	tcase_add_test(tc, a_launched_command_gets_both_events_in_one_ring);
	tcase_add_test(tc, a_switch_sample_bearing_another_programs_id_is_still_this_readers_off_cpu_one);
	tcase_add_test(tc, a_sample_bearing_another_programs_id_is_dropped_when_two_events_could_own_it);
	tcase_add_test(tc, a_switch_sample_stamped_in_another_programs_clock_gets_its_switch_outs_time);
	suite_add_tcase(s, tc);
	return run_suite(s);
}
