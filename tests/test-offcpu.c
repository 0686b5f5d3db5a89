/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Off-CPU accounting without a kernel: the switch tracker (prmodel.h)
 * pairing switch-out samples and switch records into waits, whatever order
 * records of the same moment come in and whatever is lost, and the
 * profile (prprofile.h) counting them in nanoseconds beside CPU samples.
 */
#include <check.h>
#include <errno.h>
#include <linux/perf_event.h>
#include <stdlib.h>
#include <string.h>

#include "checkmain.h"
#include "prmodel.h"
#include "prprofile.h"
#include "profile/profile.h"

static struct pr_record rec(uint32_t type, uint16_t misc, uint32_t tid, uint64_t time)
{
	return (struct pr_record){ .type = type, .misc = misc, .pid = 100, .tid = tid,
				   .time = time, .fields = PR_ID_TID | PR_ID_TIME };
}

#define SAMPLE(tid, t) rec(PR_RECORD_SAMPLE, PERF_RECORD_MISC_KERNEL, tid, t)
#define OUT(tid, t) rec(PR_RECORD_SWITCH, PERF_RECORD_MISC_SWITCH_OUT, tid, t)
#define PREEMPT(tid, t)                                                         \
	rec(PR_RECORD_SWITCH, PERF_RECORD_MISC_SWITCH_OUT | PERF_RECORD_MISC_SWITCH_OUT_PREEMPT, \
	    tid, t)
#define IN(tid, t) rec(PR_RECORD_SWITCH, 0, tid, t)

static struct pr_wait got[16];
static int nr_got;

static int collect(const struct pr_wait *w, void *ctx)
{
	(void)ctx;
	ck_assert_int_lt(nr_got, 16);
	got[nr_got++] = *w;
	return 0;
}

static struct pr_switches *sw;

static void setup(void)
{
	nr_got = 0;
	sw = pr_switches_new();
	ck_assert_ptr_nonnull(sw);
}

static void teardown(void)
{
	pr_switches_free(sw);
}

static void feed(const struct pr_record *r, uint64_t cookie)
{
	if (r->type == PR_RECORD_SAMPLE)
		ck_assert_int_eq(pr_switches_sample(sw, r, cookie, collect, NULL), 0);
	else
		ck_assert_int_eq(pr_switches_apply(sw, r, collect, NULL), 0);
}

START_TEST(a_wait_runs_from_the_switch_out_to_the_switch_in)
{
	struct pr_record s = SAMPLE(7, 1000), o = PREEMPT(7, 1010), i = IN(7, 5000);

	feed(&s, 42);
	feed(&o, 0);
	ck_assert_int_eq(nr_got, 0);
	ck_assert_uint_eq(pr_switches_open(sw), 1);
	feed(&i, 0);
	ck_assert_int_eq(nr_got, 1);
	ck_assert_uint_eq(got[0].tid, 7);
	/* The thread left when the record says, after its stack was
	 * copied. */
	ck_assert_uint_eq(got[0].start, 1010);
	ck_assert_uint_eq(got[0].end, 5000);
	ck_assert_int_eq(got[0].kind, PR_WAIT_PREEMPTED);
	ck_assert_int_eq(got[0].how, PR_WAIT_SWITCHED_IN);
	ck_assert(got[0].has_sample);
	ck_assert_uint_eq(got[0].cookie, 42);
	ck_assert_uint_eq(pr_switches_open(sw), 0);
}
END_TEST

START_TEST(the_record_may_come_before_the_sample)
{
	struct pr_record o = OUT(7, 1000), s = SAMPLE(7, 1000), i = IN(7, 3000);

	feed(&o, 0);
	feed(&s, 9);
	feed(&i, 0);
	ck_assert_int_eq(nr_got, 1);
	ck_assert_int_eq(got[0].kind, PR_WAIT_BLOCKED);
	ck_assert(got[0].has_sample);
	ck_assert_uint_eq(got[0].cookie, 9);
	ck_assert_uint_eq(got[0].end - got[0].start, 2000);
}
END_TEST

START_TEST(a_lost_switch_in_ends_the_wait_at_the_next_switch_out)
{
	struct pr_record s1 = SAMPLE(7, 1000), o1 = OUT(7, 1001), s2 = SAMPLE(7, 4000),
			 o2 = OUT(7, 4001), i = IN(7, 6000);

	feed(&s1, 1);
	feed(&o1, 0);
	feed(&s2, 2);
	ck_assert_int_eq(nr_got, 1);
	ck_assert_int_eq(got[0].how, PR_WAIT_SUPERSEDED);
	ck_assert_uint_eq(got[0].cookie, 1);
	ck_assert_uint_eq(got[0].end, 4000);
	feed(&o2, 0);
	feed(&i, 0);
	ck_assert_int_eq(nr_got, 2);
	ck_assert_uint_eq(got[1].cookie, 2);
	ck_assert_uint_eq(got[1].start, 4001);
	ck_assert_int_eq(got[1].how, PR_WAIT_SWITCHED_IN);
}
END_TEST

START_TEST(a_lost_sample_leaves_a_wait_without_a_stack)
{
	struct pr_record o1 = OUT(7, 1000), o2 = OUT(7, 2000), i = IN(7, 2500);

	feed(&o1, 0);
	/* Two records of switches out in a row: the switch in between was
	 * lost, and neither had a sample. */
	feed(&o2, 0);
	feed(&i, 0);
	ck_assert_int_eq(nr_got, 2);
	ck_assert(!got[0].has_sample);
	ck_assert_int_eq(got[0].how, PR_WAIT_SUPERSEDED);
	ck_assert(!got[1].has_sample);
	ck_assert_uint_eq(got[1].end - got[1].start, 500);
}
END_TEST

START_TEST(exit_and_the_end_of_the_run_end_waits_once)
{
	struct pr_record s7 = SAMPLE(7, 1000), s8 = SAMPLE(8, 1100), s9 = SAMPLE(9, 1200);
	struct pr_record e = rec(PR_RECORD_EXIT, 0, 7, 3000), i = IN(9, 1300);
	struct pr_record idle_out = OUT(0, 1400), idle_in = IN(0, 1500), stray = IN(11, 1600);

	e.u.task.time = 3000;
	feed(&s7, 7);
	feed(&s8, 8);
	feed(&s9, 9);
	feed(&i, 0);
	/* The idle task, and a thread never seen leaving, have no waits. */
	feed(&idle_out, 0);
	feed(&idle_in, 0);
	feed(&stray, 0);
	ck_assert_int_eq(nr_got, 1);
	feed(&e, 0);
	ck_assert_int_eq(nr_got, 2);
	ck_assert_int_eq(got[1].how, PR_WAIT_EXITED);
	ck_assert_uint_eq(got[1].end, 3000);
	ck_assert_int_eq(pr_switches_end(sw, 9000, collect, NULL), 0);
	ck_assert_int_eq(nr_got, 3);
	ck_assert_uint_eq(got[2].cookie, 8);
	ck_assert_int_eq(got[2].how, PR_WAIT_RUN_ENDED);
	ck_assert_uint_eq(got[2].end, 9000);
	ck_assert_uint_eq(pr_switches_open(sw), 0);
	ck_assert_int_eq(pr_switches_end(sw, 9500, collect, NULL), 0);
	ck_assert_int_eq(nr_got, 3);
}
END_TEST

START_TEST(a_switch_out_before_the_start_says_so)
{
	struct pr_record s = SAMPLE(7, 1000), o = OUT(7, 1000), i = IN(7, 3000),
			 s2 = SAMPLE(7, 4000), o2 = OUT(7, 4000), i2 = IN(7, 5000);

	o.misc |= PR_RECORD_MISC_SWITCH_BEFORE_START;
	feed(&s, 1);
	feed(&o, 0);
	feed(&i, 0);
	feed(&s2, 2);
	feed(&o2, 0);
	feed(&i2, 0);
	ck_assert_int_eq(nr_got, 2);
	ck_assert(got[0].before_start && got[0].kind == PR_WAIT_BLOCKED);
	ck_assert_uint_eq(got[0].start, 1000);
	ck_assert_uint_eq(got[0].end, 3000);
	/* The thread's next wait is one the kernel saw begin. */
	ck_assert(!got[1].before_start);
}
END_TEST

START_TEST(records_without_identity_are_refused_or_ignored)
{
	struct pr_record s = SAMPLE(7, 1000), o = OUT(7, 1000);

	s.fields = PR_ID_TID;
	o.fields = 0;
	ck_assert_int_eq(pr_switches_sample(sw, &s, 1, collect, NULL), -EINVAL);
	ck_assert_int_eq(pr_switches_apply(sw, &o, collect, NULL), 0);
	ck_assert_uint_eq(pr_switches_open(sw), 0);
	ck_assert_str_eq(pr_wait_kind_name(PR_WAIT_PREEMPTED), "preempted");
	ck_assert_ptr_null(pr_wait_kind_name(PR_WAIT_KIND_MAX));
}
END_TEST

/* ---- the profile ---- */

static const struct pr_frame frames[] = {
	{ .ip = 0x1010 }, { .ip = 0x2020 }, { .ip = 0x3030 },
};
static const struct pr_stack three = { .frames = frames, .nr = 3 };
static const struct pr_stack two = { .frames = frames + 1, .nr = 2 };

static struct pr_profile *new_profile(enum pr_profile_mode mode, uint64_t min_ns)
{
	PR_OPTS(pr_profile_opts, po, .freq = 1000, .mode = mode, .period_is_ns = true,
		.off_cpu_min_ns = min_ns, .timeline = true);
	struct pr_profile *p = pr_profile_new(&po);

	ck_assert_ptr_nonnull(p);
	return p;
}

static const char *leaf_name(const struct pr_profile *p, const struct prof_stack *st)
{
	const struct prof_location *loc = &p->locations[p->frames[st->frame]];

	ck_assert_uint_eq(loc->nr_lines, 1);
	return prof_str(p, p->functions[p->lines[loc->line].function].name);
}

START_TEST(wall_time_adds_cpu_samples_and_waits_in_nanoseconds)
{
	struct pr_profile *p = new_profile(PR_PROFILE_WALL, 0);
	struct pr_record cpu = SAMPLE(7, 1000000), s = SAMPLE(7, 2000000),
			 o = PREEMPT(7, 2000000), i = IN(7, 7000000), s2 = SAMPLE(7, 8000000),
			 o2 = OUT(7, 8000000);
	struct pr_profile_times t = { .sz = sizeof(t) };
	struct prof_timeline_iter it;
	uint64_t time, ns;
	uint32_t stack, pid;

	cpu.u.sample.period = 1500000;
	ck_assert_int_eq(pr_profile_add(p, NULL, &cpu, &three, "worker", "app"), 0);
	ck_assert_int_eq(pr_profile_add_switch(p, NULL, &s, &two, "worker", "app"), 0);
	ck_assert_int_eq(pr_profile_apply(p, &o), 0);
	ck_assert_int_eq(pr_profile_apply(p, &i), 0);
	ck_assert_int_eq(pr_profile_apply(p, &o2), 0);
	ck_assert_int_eq(pr_profile_add_switch(p, NULL, &s2, &two, "worker", "app"), 0);
	ck_assert_int_eq(pr_profile_end(p, 10000000), 0);

	ck_assert_uint_eq(p->nr_stacks, 3);
	ck_assert_int_eq(p->stacks[0].kind, PROF_ON_CPU);
	ck_assert_uint_eq(p->stacks[0].ns, 1500000);
	ck_assert_int_eq(p->stacks[1].kind, PROF_PREEMPTED);
	ck_assert_uint_eq(p->stacks[1].ns, 5000000);
	ck_assert_uint_eq(p->stacks[1].nr, 3);
	ck_assert_str_eq(leaf_name(p, &p->stacks[1]), "[off-cpu: preempted]");
	ck_assert_int_eq(p->stacks[2].kind, PROF_BLOCKED);
	ck_assert_str_eq(leaf_name(p, &p->stacks[2]), "[off-cpu: blocked]");
	ck_assert_uint_eq(p->stacks[2].ns, 2000000);
	/* The waits' frames under the pseudo-frame are the sample's. */
	ck_assert_uint_eq(p->frames[p->stacks[1].frame + 1], p->frames[p->stacks[0].frame + 1]);

	ck_assert_int_eq(pr_profile_times(p, 0, &t), 0);
	ck_assert_uint_eq(t.samples, 1);
	ck_assert_uint_eq(t.cpu_ns, 1500000);
	ck_assert_uint_eq(t.waits[PR_WAIT_PREEMPTED], 1);
	ck_assert_uint_eq(t.off_cpu_ns[PR_WAIT_PREEMPTED], 5000000);
	ck_assert_uint_eq(t.off_cpu_ns[PR_WAIT_BLOCKED], 2000000);
	memset(&t, 0, sizeof(t));
	t.sz = sizeof(t);
	ck_assert_int_eq(pr_profile_times(p, 100, &t), 0);
	ck_assert_uint_eq(t.cpu_ns + t.off_cpu_ns[0] + t.off_cpu_ns[1], 8500000);
	ck_assert_uint_eq(pr_profile_pids(p, &pid, 1), 1);
	ck_assert_uint_eq(pid, 100);

	/* The thread's run in time order: CPU, preempted, blocked. */
	prof__timeline_iter(&p->timelines[0], &it);
	ck_assert_int_eq(prof__timeline_next(&it, &time, &stack, &ns), 1);
	ck_assert(time == 1000000 && stack == 0 && ns == 1500000);
	ck_assert_int_eq(prof__timeline_next(&it, &time, &stack, &ns), 1);
	ck_assert(time == 2000000 && stack == 1 && ns == 5000000);
	ck_assert_int_eq(prof__timeline_next(&it, &time, &stack, &ns), 1);
	ck_assert(time == 8000000 && stack == 2 && ns == 2000000);
	ck_assert_int_eq(prof__timeline_next(&it, &time, &stack, &ns), 0);
	pr_profile_free(p);
}
END_TEST

START_TEST(short_and_stackless_waits_are_counted_apart)
{
	struct pr_profile *p = new_profile(PR_PROFILE_OFF_CPU, 1000);
	struct pr_record s = SAMPLE(7, 1000), i = IN(7, 1500), o = OUT(8, 2000),
			 i8 = IN(8, 9000), s9 = SAMPLE(9, 3000), i9 = IN(9, 5000);
	struct pr_profile_times t = { .sz = sizeof(t) };

	ck_assert_int_eq(pr_profile_add_switch(p, NULL, &s, &two, "a", "app"), 0);
	ck_assert_int_eq(pr_profile_apply(p, &i), 0);
	ck_assert_int_eq(pr_profile_apply(p, &o), 0);
	ck_assert_int_eq(pr_profile_apply(p, &i8), 0);
	ck_assert_int_eq(pr_profile_add_switch(p, NULL, &s9, &two, "c", "app"), 0);
	ck_assert_int_eq(pr_profile_apply(p, &i9), 0);
	ck_assert_int_eq(pr_profile_times(p, 0, &t), 0);
	ck_assert_uint_eq(t.waits_short, 1);
	ck_assert_uint_eq(t.waits_lost, 1);
	ck_assert_uint_eq(t.waits[PR_WAIT_BLOCKED], 1);
	ck_assert_uint_eq(t.off_cpu_ns[PR_WAIT_BLOCKED], 2000);
	/* Only the counted wait made a stack. */
	ck_assert_uint_eq(pr_profile_nr_stacks(p), 1);
	pr_profile_free(p);
}
END_TEST

START_TEST(a_wait_under_way_at_the_start_is_labelled_and_counted_apart)
{
	struct pr_profile *p = new_profile(PR_PROFILE_OFF_CPU, 0);
	/* Thread 7 was found blocked at 1000 (pr_blocked_synthesize()) and
	 * ran at 4000; thread 8 is still blocked at the end, 9000; thread 9
	 * blocked while sampling. */
	struct pr_record s7 = SAMPLE(7, 1000), o7 = OUT(7, 1000), i7 = IN(7, 4000),
			 s8 = SAMPLE(8, 1000), o8 = OUT(8, 1000), s9 = SAMPLE(9, 2000),
			 o9 = OUT(9, 2000), i9 = IN(9, 2500);
	struct pr_profile_times t = { .sz = sizeof(t) };

	o7.misc |= PR_RECORD_MISC_SWITCH_BEFORE_START;
	o8.misc |= PR_RECORD_MISC_SWITCH_BEFORE_START;
	ck_assert_int_eq(pr_profile_add_switch(p, NULL, &s7, &two, "a", "app"), 0);
	ck_assert_int_eq(pr_profile_apply(p, &o7), 0);
	ck_assert_int_eq(pr_profile_add_switch(p, NULL, &s8, &two, "b", "app"), 0);
	ck_assert_int_eq(pr_profile_apply(p, &o8), 0);
	ck_assert_int_eq(pr_profile_add_switch(p, NULL, &s9, &two, "c", "app"), 0);
	ck_assert_int_eq(pr_profile_apply(p, &o9), 0);
	ck_assert_int_eq(pr_profile_apply(p, &i9), 0);
	ck_assert_int_eq(pr_profile_apply(p, &i7), 0);
	ck_assert_int_eq(pr_profile_end(p, 9000), 0);

	ck_assert_uint_eq(p->nr_stacks, 3);
	/* Never shown as a wait that began at the start. */
	ck_assert_str_eq(leaf_name(p, &p->stacks[0]), "[off-cpu: blocked]");
	ck_assert_uint_eq(p->stacks[0].ns, 500);
	ck_assert_str_eq(leaf_name(p, &p->stacks[1]),
			 "[off-cpu: blocked since before the start]");
	ck_assert_uint_eq(p->stacks[1].ns, 3000);
	ck_assert_str_eq(leaf_name(p, &p->stacks[2]),
			 "[off-cpu: blocked since before the start]");
	ck_assert_uint_eq(p->stacks[2].ns, 8000);
	ck_assert_int_eq(pr_profile_times(p, 0, &t), 0);
	ck_assert_uint_eq(t.waits[PR_WAIT_BLOCKED], 3);
	ck_assert_uint_eq(t.off_cpu_ns[PR_WAIT_BLOCKED], 11500);
	ck_assert_uint_eq(t.waits_before_start, 2);
	ck_assert_uint_eq(t.before_start_ns, 11000);
	/* Per process, from the stacks, the same. */
	memset(&t, 0, sizeof(t));
	t.sz = sizeof(t);
	ck_assert_int_eq(pr_profile_times(p, 100, &t), 0);
	ck_assert_uint_eq(t.waits_before_start, 2);
	ck_assert_uint_eq(t.before_start_ns, 11000);
	pr_profile_free(p);
}
END_TEST

START_TEST(a_cpu_profile_takes_no_switches)
{
	struct pr_profile *p = new_profile(PR_PROFILE_CPU, 0);
	struct pr_record s = SAMPLE(7, 1000), o = OUT(7, 1000);
	PR_OPTS(pr_profile_opts, bad, .mode = PR_PROFILE_MODE_MAX);

	ck_assert_int_eq(pr_profile_add_switch(p, NULL, &s, &two, "a", "app"), -EINVAL);
	ck_assert_int_eq(pr_profile_apply(p, &o), 0);
	ck_assert_int_eq(pr_profile_end(p, 5000), 0);
	ck_assert_uint_eq(pr_profile_nr_stacks(p), 0);
	ck_assert_ptr_null(pr_profile_new(&bad));
	pr_profile_free(p);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("offcpu");
	TCase *tc = tcase_create("switches");

	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, a_wait_runs_from_the_switch_out_to_the_switch_in);
	tcase_add_test(tc, the_record_may_come_before_the_sample);
	tcase_add_test(tc, a_lost_switch_in_ends_the_wait_at_the_next_switch_out);
	tcase_add_test(tc, a_lost_sample_leaves_a_wait_without_a_stack);
	tcase_add_test(tc, exit_and_the_end_of_the_run_end_waits_once);
	tcase_add_test(tc, a_switch_out_before_the_start_says_so);
	tcase_add_test(tc, records_without_identity_are_refused_or_ignored);
	suite_add_tcase(s, tc);
	tc = tcase_create("profile");
	tcase_add_test(tc, wall_time_adds_cpu_samples_and_waits_in_nanoseconds);
	tcase_add_test(tc, short_and_stackless_waits_are_counted_apart);
	tcase_add_test(tc, a_wait_under_way_at_the_start_is_labelled_and_counted_apart);
	tcase_add_test(tc, a_cpu_profile_takes_no_switches);
	suite_add_tcase(s, tc);
	return run_suite(s);
}
