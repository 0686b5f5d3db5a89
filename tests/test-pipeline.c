/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The session's pipeline (src/session/pipeline.c): how much of a
 * sample's stack the capture thread copies once the worker has said where
 * its thread's stacks end (pr__pipeline_stack_used()), and what happens
 * when that proves too short.  Samples come from a fake ring; the worker
 * is told, sample by sample, how each unwind ended and what it read, and
 * records what it was handed.  Each step waits for the worker to have
 * processed its sample, so what the capture thread knew when it copied
 * the next one is fixed.
 */
#include <check.h>
#include <stdio.h>
#include <time.h>

#include "checkmain.h"
#include "fakering.h"
#include "fakesample.h"
#include "session/session.h"

#define SP 0x7ffd0000ull
#define STACK 4096

/* What the worker is to say of the next sample, and what it was handed. */
struct worker_side {
	struct pr__pipeline *pl;
	enum pr_stack_end end;
	uint64_t used;
	uint64_t dyn_size;           /* of the copy handed over */
	bool cut;
	uint32_t tid;
};

static int process(const struct pr_record *rec, bool own, void *ctx)
{
	struct worker_side *w = ctx;
	struct pr_stack st = { .end = w->end };

	(void)own;
	if (rec->type != PR_RECORD_SAMPLE)
		return 0;
	w->dyn_size = rec->u.sample.stack_dyn_size;
	/* A cut copy says so (pr_order_add_cut()). */
	w->cut = rec->u.sample.stack_size == w->dyn_size + 8;
	w->tid = rec->tid;
	pr__pipeline_stack_used(w->pl, rec, &st, w->used);
	return 0;
}

struct bench {
	struct fakering f;
	struct perf_event_attr attr;
	struct pr_reader *r;
	struct worker_side w;
	uint64_t time, processed;
};

static void open_bench(struct bench *b)
{
	struct pr_ring ring;
	void *ctx = &b->w;

	memset(b, 0, sizeof(*b));
	ck_assert_int_eq(pr_event_attr(NULL, PR_SOURCE_CPU_CLOCK, 0, &b->attr), 0);
	fakering_init(&b->f, 65536, 0);
	fakering_ring(&b->f, &ring, 0);
	b->r = pr__reader_from_rings(&ring, 1, &b->attr, NULL);
	ck_assert_ptr_nonnull(b->r);
	b->w.pl = pr__pipeline_new(pr_reader_attr(b->r), 1, process, NULL, &ctx, SIZE_MAX, NULL,
				  NULL);
	ck_assert_ptr_nonnull(b->w.pl);
}

static void close_bench(struct bench *b)
{
	ck_assert_int_eq(pr__pipeline_finish(b->w.pl), 0);
	pr__pipeline_free(b->w.pl);
	pr_reader_close(b->r);
	fakering_free(&b->f);
}

/*
 * One sample of `tid` with its stack at `sp` (STACK bytes, all read by
 * the kernel), whose unwind the worker says ended `end` having read
 * `used` bytes; returns how many stack bytes the worker was handed.
 */
static uint64_t step(struct bench *b, uint32_t tid, uint64_t sp, enum pr_stack_end end,
		     uint64_t used)
{
	static struct synth s;
	struct pr__pipeline_counts c;

	b->w.end = end;
	b->w.used = used;
	s.len = 0;
	put_sample(&s, 0, 0, 100, tid, ++b->time, 0, sp, STACK, STACK, 1);
	fakering_put(&b->f, s.buf, s.len);
	ck_assert_int_eq(pr_reader_consume(b->r, pr__pipeline_copy, b->w.pl), 1);
	/* The sample goes once a round has ended after the one it came in. */
	ck_assert_int_eq(pr__pipeline_flush(b->w.pl), 0);
	ck_assert_int_eq(pr__pipeline_flush(b->w.pl), 0);
	b->processed++;
	for (int i = 0; i < 10000; i++) {
		pr__pipeline_counts(b->w.pl, &c);
		if (c.processed == b->processed)
			break;
		nanosleep(&(struct timespec){ .tv_nsec = 1000000 }, NULL);
	}
	ck_assert_uint_eq(c.processed, b->processed);
	ck_assert_uint_eq(b->w.tid, tid);
	ck_assert(b->w.cut == (b->w.dyn_size < STACK));
	return b->w.dyn_size;
}

static struct pr__pipeline_counts counts(struct bench *b)
{
	struct pr__pipeline_counts c;

	pr__pipeline_counts(b->w.pl, &c);
	return c;
}

START_TEST(a_thread_unwound_to_its_first_frame_is_copied_up_to_there)
{
	struct bench b;

	open_bench(&b);
	/* Nothing known yet: the whole stack.  The unwind read 200 bytes,
	 * to its outermost frame: its thread's stacks end by SP + 256 (a
	 * line's end). */
	ck_assert_uint_eq(step(&b, 5, SP, PR_END_OUTERMOST, 200), STACK);
	/* From now on, up to there and 128 bytes more. */
	ck_assert_uint_eq(step(&b, 5, SP, PR_END_OUTERMOST, 200), 256 + 128);
	ck_assert_uint_eq(step(&b, 5, SP - 1000, PR_END_OUTERMOST, 1200), 1000 + 256 + 128);
	/* Another thread has its own. */
	ck_assert_uint_eq(step(&b, 6, SP, PR_END_OUTERMOST, 64), STACK);
	ck_assert_uint_eq(step(&b, 6, SP, PR_END_OUTERMOST, 64), 64 + 128);
	/* A stack elsewhere (a signal stack, another thread's under a reused
	 * tid): past the top, or further below it than the kernel copied,
	 * is copied whole. */
	ck_assert_uint_eq(step(&b, 6, SP + 4096, PR_END_OUTERMOST, 64), STACK);
	/* ... and a higher top learned from it moves the cut up. */
	ck_assert_uint_eq(step(&b, 6, SP + 4000, PR_END_OUTERMOST, 64), 4096 + 64 + 128 - 4000);
	/* Only a stack unwound to its outermost frame teaches: a stack
	 * that ended otherwise, with less read, leaves the top. */
	ck_assert_uint_eq(step(&b, 5, SP, PR_END_NO_UNWIND_INFO, 100), 256 + 128);
	ck_assert_uint_eq(step(&b, 5, SP, PR_END_OUTERMOST, 200), 256 + 128);
	ck_assert_uint_eq(counts(&b).cut, 6);
	ck_assert_uint_eq(counts(&b).copied, 9);
	ck_assert_uint_eq(counts(&b).cut_short, 0);
	/* What was not copied: a sample's bytes less what it kept. */
	ck_assert_uint_eq(counts(&b).cut_bytes, 6 * STACK - 3 * 384 - 1384 - 192 - 288);
	close_bench(&b);
}
END_TEST

START_TEST(a_cut_that_proves_too_short_stops_the_cutting_for_its_thread)
{
	struct bench b;

	open_bench(&b);
	ck_assert_uint_eq(step(&b, 5, SP, PR_END_OUTERMOST, 200), STACK);
	/* The thread's stacks now reach further up than it learned (the
	 * first was on another stack below, as a coroutine's may be): cut,
	 * the unwind wanted more than the copy had. */
	ck_assert_uint_eq(step(&b, 5, SP - 512, PR_END_TRUNCATED, 512 + 384 + 8), 512 + 256 + 128);
	ck_assert_uint_eq(counts(&b).cut_short, 1);
	/* Whole from now on, whatever its stacks say. */
	ck_assert_uint_eq(step(&b, 5, SP, PR_END_OUTERMOST, 200), STACK);
	ck_assert_uint_eq(step(&b, 5, SP, PR_END_OUTERMOST, 100), STACK);
	/* However it ended: libunwind may go wrong a frame later. */
	ck_assert_uint_eq(step(&b, 7, SP, PR_END_OUTERMOST, 200), STACK);
	ck_assert_uint_eq(step(&b, 7, SP - 512, PR_END_ERROR, 512 + 384 + 8), 512 + 256 + 128);
	ck_assert_uint_eq(step(&b, 7, SP, PR_END_OUTERMOST, 200), STACK);
	/* An unwind that went wrong within the copy, or ended truncated
	 * without wanting more (the kernel's copy, or its join), is not the
	 * cut's doing. */
	ck_assert_uint_eq(step(&b, 9, SP, PR_END_OUTERMOST, 200), STACK);
	ck_assert_uint_eq(step(&b, 9, SP - 512, PR_END_ERROR, 600), 512 + 256 + 128);
	ck_assert_uint_eq(step(&b, 9, SP - 512, PR_END_TRUNCATED, 512 + 384), 512 + 256 + 128);
	ck_assert_uint_eq(step(&b, 9, SP, PR_END_OUTERMOST, 200), 256 + 128);
	/* A truncated stack the kernel copied whole is not the cut's doing:
	 * the thread keeps its top. */
	ck_assert_uint_eq(step(&b, 8, SP, PR_END_OUTERMOST, 200), STACK);
	ck_assert_uint_eq(step(&b, 8, SP - 8192, PR_END_TRUNCATED, STACK), STACK);
	ck_assert_uint_eq(step(&b, 8, SP, PR_END_OUTERMOST, 200), 256 + 128);
	ck_assert_uint_eq(counts(&b).cut_short, 2);
	ck_assert_uint_eq(counts(&b).cut, 6);
	close_bench(&b);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("pipeline");
	TCase *tc = tcase_create("stack-tops");

	tcase_add_test(tc, a_thread_unwound_to_its_first_frame_is_copied_up_to_there);
	tcase_add_test(tc, a_cut_that_proves_too_short_stops_the_cutting_for_its_thread);
	suite_add_tcase(s, tc);
	return run_suite(s);
}
