/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Replaying a captured file offline: the fixture (tests/fixtures) is a
 * dwarfsample recording of a static -O2 -fomit-frame-pointer build of the
 * demo, with the binary stored by build-id.  Every sample must unwind,
 * on any machine, through the binary's own unwind tables to where its
 * thread began: main and _start for the main thread, start_thread and
 * clone3 for the other.  The file is replayed through a session, as
 * `dwarfsample report` replays it.
 */
#include <check.h>
#include <stdio.h>
#include <string.h>

#include "checkmain.h"
#include "demo-replay.h"
#include "fixtures/fixture.h"
#include "perfreader.h"
#include "prunwind.h"

#define MAX_SAVED 256

struct saved {
	uint64_t ip[PR_UNWIND_DEFAULT_DEPTH];
	size_t nr;
	enum pr_stack_end end;
};

struct replay {
	struct demo_replay d;
	struct pr_unwinder *slow;    /* libunwind alone, when set */
	size_t samples, main_thread, other_thread, same_as_slow;
	struct saved first;
	char why[512];               /* the first failure, if any */
};

static bool in(uint64_t ip, uint64_t lo, uint64_t hi)
{
	return ip >= lo && ip < hi;
}

/* The stack's shape for the thread it is on, or why not. */
static void check_stack(struct replay *r, const struct pr_stack *st)
{
	const struct pr_frame *last;
	bool via_main = false, via_start_thread = false;

	if (r->why[0])
		return;
	if (st->end != PR_END_OUTERMOST || !st->nr) {
		snprintf(r->why, sizeof(r->why), "sample %zu: %zu frames, ended %s",
			 r->samples, st->nr, pr_stack_end_name(st->end));
		return;
	}
	for (size_t i = 0; i < st->nr; i++) {
		const struct pr_frame *f = &st->frames[i];

		if (!f->dso || f->flags) {
			snprintf(r->why, sizeof(r->why), "sample %zu frame %zu at 0x%llx: %s",
				 r->samples, i, (unsigned long long)f->ip,
				 f->dso ? "found by frame pointer" : "in no file");
			return;
		}
		via_main |= in(f->ip, FIXTURE_DEMO_MAIN_LO, FIXTURE_DEMO_MAIN_HI);
		via_start_thread |= in(f->ip, FIXTURE_DEMO_START_THREAD_LO,
				       FIXTURE_DEMO_START_THREAD_HI);
	}
	last = &st->frames[st->nr - 1];
	if (via_main && in(last->ip, FIXTURE_DEMO_START_LO, FIXTURE_DEMO_START_HI)) {
		r->main_thread++;
	} else if (via_start_thread &&
		   in(last->ip, FIXTURE_DEMO_CLONE3_LO, FIXTURE_DEMO_CLONE3_HI)) {
		r->other_thread++;
	} else {
		snprintf(r->why, sizeof(r->why), "sample %zu: %zu frames, outermost 0x%llx "
			 "is neither _start (through main) nor clone3 (through "
			 "start_thread)", r->samples, st->nr, (unsigned long long)last->ip);
	}
}

static bool same_stacks(const struct pr_stack *a, const struct pr_stack *b)
{
	if (a->nr != b->nr || a->end != b->end)
		return false;
	for (size_t i = 0; i < a->nr; i++)
		if (a->frames[i].ip != b->frames[i].ip || a->frames[i].dso != b->frames[i].dso ||
		    a->frames[i].flags != b->frames[i].flags)
			return false;
	return true;
}

/* Each sample as the session unwound it, after its model took every
 * record before it, samples too (the model retires a pre-exec image on
 * one).  A sample that did not unwind would be missing from the count. */
static int on_sample(void *ctx, const struct pr_sink_sample *smp)
{
	struct replay *r = ctx;
	const struct pr_stack *st = smp->st;
	struct pr_stack slow;

	if (!r->samples) {
		r->first.nr = st->nr < MAX_SAVED ? st->nr : MAX_SAVED;
		for (size_t i = 0; i < r->first.nr && i < PR_UNWIND_DEFAULT_DEPTH; i++)
			r->first.ip[i] = st->frames[i].ip;
		r->first.end = st->end;
	}
	check_stack(r, st);
	if (r->slow) {
		ck_assert_int_eq(pr_unwinder_unwind(r->slow, smp->rec, &slow), 0);
		r->same_as_slow += same_stacks(st, &slow);
	}
	r->samples++;
	return 0;
}

/* Replay the fixture, with its binary (by build-id) or without; with
 * `compare_slow`, each sample unwound again by libunwind alone (another
 * unwinder over the session's model). */
static void replay(struct replay *r, bool with_binary, bool compare_slow)
{
	PR_OPTS(pr_unwinder_opts, so, .no_rule_cache = true);
	struct pr_sink sink = { .sz = sizeof(sink), .ctx = r, .sample = on_sample };

	memset(r, 0, sizeof(*r));
	demo_replay_open(&r->d, 0, with_binary, NULL);
	if (compare_slow) {
		r->slow = pr_unwinder_new(pr_session_model(r->d.ses, 0), &so);
		ck_assert_ptr_nonnull(r->slow);
	}
	ck_assert_int_eq(pr_session_add_sink(r->d.ses, &sink), 0);
	demo_replay_run(&r->d);
}

static void replay_free(struct replay *r)
{
	pr_unwinder_free(r->slow);
	demo_replay_close(&r->d);
}

START_TEST(every_sample_unwinds_to_where_its_thread_began)
{
	struct pr_unwind_stats st;
	struct replay r;

	replay(&r, true, false);
	ck_assert_msg(!r.why[0], "%s", r.why);
	ck_assert_uint_eq(r.samples, FIXTURE_DEMO_SAMPLES);
	ck_assert_uint_eq(r.main_thread + r.other_thread, FIXTURE_DEMO_SAMPLES);
	/* Two threads, both busy. */
	ck_assert_uint_gt(r.main_thread, FIXTURE_DEMO_SAMPLES / 4);
	ck_assert_uint_gt(r.other_thread, FIXTURE_DEMO_SAMPLES / 4);
	ck_assert_uint_eq(r.first.ip[0], FIXTURE_DEMO_FIRST_IP);
	st = r.d.us;
	ck_assert_uint_eq(st.samples, FIXTURE_DEMO_SAMPLES);
	ck_assert_uint_eq(st.ends[PR_END_OUTERMOST], FIXTURE_DEMO_SAMPLES);
	ck_assert_uint_eq(st.files_opened, 1);
	ck_assert_uint_eq(st.files_missing, 0);
	ck_assert_uint_eq(st.fast_samples, FIXTURE_DEMO_SAMPLES);
	replay_free(&r);
}
END_TEST

START_TEST(libunwind_alone_gives_the_same_stacks)
{
	struct replay r;

	replay(&r, true, true);
	ck_assert_uint_eq(r.samples, FIXTURE_DEMO_SAMPLES);
	ck_assert_uint_eq(r.same_as_slow, FIXTURE_DEMO_SAMPLES);
	replay_free(&r);
}
END_TEST

/* The path the binary had when recorded does not exist here: without
 * the fixture's directory, only the sampled addresses remain. */
START_TEST(without_the_binary_stacks_end_at_the_leaf_and_say_why)
{
	struct pr_unwind_stats st;
	struct replay r;

	replay(&r, false, false);
	ck_assert_uint_eq(r.samples, FIXTURE_DEMO_SAMPLES);
	ck_assert_uint_eq(r.first.ip[0], FIXTURE_DEMO_FIRST_IP);
	st = r.d.us;
	ck_assert_uint_eq(st.files_missing, 1);
	ck_assert_uint_eq(st.ends[PR_END_OUTERMOST], 0);
	/* Nothing but the leaf: the frame-pointer chain of code built
	 * without frame pointers leads nowhere, and is not followed out of
	 * a file that is merely missing. */
	ck_assert_uint_eq(st.frames, FIXTURE_DEMO_SAMPLES);
	ck_assert_uint_eq(st.ends[PR_END_NO_UNWIND_INFO], FIXTURE_DEMO_SAMPLES);
	replay_free(&r);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("replay");
	TCase *tc = tcase_create("fixture");

	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, every_sample_unwinds_to_where_its_thread_began);
	tcase_add_test(tc, libunwind_alone_gives_the_same_stacks);
	tcase_add_test(tc, without_the_binary_stacks_end_at_the_leaf_and_say_why);
	suite_add_tcase(s, tc);
	return run_suite(s);
}
