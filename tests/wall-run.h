/* SPDX-License-Identifier: Apache-2.0 */
/*
 * One thread's run made of records, as the kernel would give them, for
 * the tests of the formats (test-offcpu-formats.c, test-otlp.c): CPU
 * samples of one stack and two waits of another, blocked 5 ms then
 * preempted 2 ms.  Include after profile-fixture.h.
 */
#ifndef DS_TEST_WALL_RUN_H
#define DS_TEST_WALL_RUN_H

#include <linux/perf_event.h>

#define MS 1000000ull

static const char *const RUN[] = { "main", "run", "leaf" };
static const char *const WAIT[] = { "main", "run", "emit" };

static struct pr_record rec(uint32_t type, uint16_t misc, uint64_t time)
{
	return (struct pr_record){ .type = type, .misc = misc, .pid = PID, .tid = PID,
				   .time = time, .cpu = 1,
				   .fields = PR_ID_TID | PR_ID_TIME | PR_ID_CPU };
}

/* A CPU sample of `names` (3 frames) at `time`, standing for 1 ms. */
static void cpu_sample_of(struct pr_profile *p, const char *const *names, uint64_t time)
{
	struct pr_frame frames[16];
	struct pr_stack st = make_stack(frames, names, 3, 0x10);
	struct pr_record r = rec(PR_RECORD_SAMPLE, PERF_RECORD_MISC_USER, time);

	r.u.sample.period = MS;
	ck_assert_int_eq(pr_profile_add(p, sym, &r, &st, "app", "app"), 0);
}

static void cpu_sample(struct pr_profile *p, uint64_t time)
{
	cpu_sample_of(p, RUN, time);
}

/* The thread leaves the CPU in WAIT at `out` and comes back at `in`. */
static void wait(struct pr_profile *p, uint64_t out, uint64_t in, bool preempted)
{
	struct pr_frame frames[16];
	struct pr_stack st = make_stack(frames, WAIT, 3, 0x10);
	struct pr_record s = rec(PR_RECORD_SAMPLE, PERF_RECORD_MISC_KERNEL, out);
	struct pr_record o = rec(PR_RECORD_SWITCH, PERF_RECORD_MISC_SWITCH_OUT |
			       (preempted ? PERF_RECORD_MISC_SWITCH_OUT_PREEMPT : 0), out);
	struct pr_record i = rec(PR_RECORD_SWITCH, 0, in);

	ck_assert_int_eq(pr_profile_add_switch(p, sym, &s, &st, "app", "app"), 0);
	ck_assert_int_eq(pr_profile_apply(p, &o), 0);
	ck_assert_int_eq(pr_profile_apply(p, &i), 0);
}

/*
 * The run, in time order: on the CPU 2 ms, blocked 5 ms, on the CPU 1 ms,
 * preempted 2 ms, on the CPU 1 ms.  An off-CPU profile has only the
 * waits.  `timeline` as the live command sets it for speedscope.
 */
static struct pr_profile *the_run(enum pr_profile_mode mode, bool timeline)
{
	PR_OPTS(pr_profile_opts, po, .freq = 1000, .mode = mode, .period_is_ns = true,
		.timeline = timeline);
	struct pr_profile *p = pr_profile_new(&po);
	bool cpu = mode == PR_PROFILE_WALL;

	ck_assert_ptr_nonnull(p);
	if (cpu) {
		cpu_sample(p, 1 * MS);
		cpu_sample(p, 2 * MS);
	}
	wait(p, 3 * MS, 8 * MS, false);
	if (cpu)
		cpu_sample(p, 8 * MS);
	wait(p, 9 * MS, 11 * MS, true);
	if (cpu)
		cpu_sample(p, 11 * MS);
	ck_assert_int_eq(pr_profile_end(p, 12 * MS), 0);
	return p;
}

#endif
