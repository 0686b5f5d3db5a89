/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The session (prsession.h): the one per-record path every verb feeds.
 * What it settles for all of them -- empty stacks reach the sinks, a
 * sink's -ENOMEM loses one sample and the run goes on, any other error
 * ends it, every sink sees every sample -- on samples written into a
 * fake ring, with and without worker threads; and a perf.data file
 * (the demo fixture) replayed on one worker and on three, which must
 * hand the sinks the same samples; the user frames counted by where they
 * came from, the copy or the call chain.
 */
#include <check.h>
#include <errno.h>
#include <linux/perf_event.h>
#include <stdlib.h>
#include <string.h>

#include "checkmain.h"
#include "demo-replay.h"
#include "fakering.h"
#include "fakesample.h"
#include "fixtures/fixture.h"
#include "perfreader.h"

#define SP 0x7ffd0000ull

/* What a sink saw.  One per share; shares are made by part_new and
 * counted into the root by part_merge. */
struct seen {
	uint64_t samples, empty, records, ticks, finished;
	uint64_t calls;              /* sample calls, whatever the verdict */
	uint64_t fail_at;            /* this call (1-based) returns `fail` */
	int fail;
	uint64_t parts, merged;
	uint64_t release_at;         /* samples after which it releases */
	uint64_t events[4];
};

static int seen_sample(void *ctx, const struct pr_sink_sample *smp)
{
	struct seen *s = ctx;

	/* The failing tests run one share: which call fails is fixed. */
	if (++s->calls == s->fail_at)
		return s->fail;
	s->samples++;
	s->empty += smp->st->nr == 0;
	if (smp->event < 4)
		s->events[smp->event]++;
	return 0;
}

static int seen_record(void *ctx, const struct pr_record *rec)
{
	(void)rec;
	((struct seen *)ctx)->records++;
	return 0;
}

static int seen_finish(void *ctx, uint64_t end)
{
	(void)end;
	((struct seen *)ctx)->finished++;
	return 0;
}

static void *seen_part(void *ctx)
{
	struct seen *root = ctx, *p = calloc(1, sizeof(*p));

	root->parts++;
	return p;
}

static int seen_merge(void *ctx, void *part)
{
	struct seen *root = ctx, *p = part;

	if (root) {
		root->samples += p->samples;
		root->empty += p->empty;
		root->records += p->records;
		root->finished += p->finished;
		for (int i = 0; i < 4; i++)
			root->events[i] += p->events[i];
		root->merged++;
	}
	free(p);
	return 0;
}

static struct pr_sink sink_of(struct seen *s)
{
	return (struct pr_sink){
		.sz = sizeof(struct pr_sink), .ctx = s, .sample = seen_sample,
		.record = seen_record, .finish = seen_finish, .part_new = seen_part,
		.part_merge = seen_merge,
	};
}

/* A sample of a kernel thread: no user registers, no stack, no call
 * chain. */
static void put_kernel_thread_sample(struct synth *s, uint32_t pid, uint64_t time)
{
	synth_begin(s, PERF_RECORD_SAMPLE, PERF_RECORD_MISC_KERNEL);
	synth_u64(s, 0xffffffff81000000ull);        /* ip */
	synth_u32x2(s, pid, pid);
	synth_u64(s, time);
	synth_u32x2(s, 0, 0);
	synth_u64(s, 10101010);                     /* period */
	synth_u64(s, 0);                            /* callchain nr */
	synth_u64(s, PERF_SAMPLE_REGS_ABI_NONE);
	synth_u64(s, 0);                            /* stack size */
	synth_end(s);
}

/* A fake ring holding `nr` user samples of threads 1000.. (by tid
 * `tid_mod` apart) and, with `kthread`, one kernel thread's sample
 * among them; a reader over it. */
struct bench {
	struct fakering f;
	struct perf_event_attr attr;
	struct pr_reader *r;
	struct synth s;
};

static void open_bench(struct bench *b, size_t nr, uint32_t tids, bool kthread)
{
	struct pr_ring ring;

	memset(b, 0, sizeof(*b));
	ck_assert_int_eq(pr_event_attr(NULL, PR_SOURCE_CPU_CLOCK, 0, &b->attr), 0);
	fakering_init(&b->f, 1 << 20, 0);
	fakering_ring(&b->f, &ring, 0);
	b->r = pr__reader_from_rings(&ring, 1, &b->attr, NULL);
	ck_assert_ptr_nonnull(b->r);
	for (size_t i = 0; i < nr; i++) {
		uint32_t tid = 1000 + (uint32_t)(i % tids);

		b->s.len = 0;
		if (kthread && i == nr / 2)
			put_kernel_thread_sample(&b->s, 2, 10 + i);
		else
			put_sample(&b->s, 0, 0, 1000, tid, 10 + i, 0, SP, 256, 256, 1);
		fakering_put(&b->f, b->s.buf, b->s.len);
	}
}

static void close_bench(struct bench *b)
{
	pr_reader_close(b->r);
	fakering_free(&b->f);
}

/* Every sample of the ring through a session of `workers` with the
 * sinks given; returns what pr_session_finish() said. */
static int run_ring(struct bench *b, size_t workers, struct seen *sinks, size_t nr_sinks,
		    volatile sig_atomic_t *stop, struct pr_session_stats *st)
{
	PR_OPTS(pr_session_opts, so, .workers = workers, .stop = stop);
	struct pr_session *ses = pr_session_new_reader(b->r, &so);
	int err;

	ck_assert_ptr_nonnull(ses);
	for (size_t i = 0; i < nr_sinks; i++) {
		struct pr_sink k = sink_of(&sinks[i]);

		ck_assert_int_eq(pr_session_add_sink(ses, &k), 0);
	}
	/* Without workers, a sink's error comes back at once and ends the
	 * drain; the session keeps it for pr_session_finish(). */
	pr_reader_consume(b->r, pr_session_add, ses);
	ck_assert_int_eq(pr_session_round(ses), 0);
	err = pr_session_finish(ses, 0);
	st->sz = sizeof(*st);
	ck_assert_int_eq(pr_session_stats(ses, st), 0);
	pr_session_free(ses);
	return err;
}

START_TEST(empty_stacks_reach_the_sinks)
{
	size_t workers = (size_t)_i;
	struct pr_session_stats st;
	struct seen s = { 0 };
	struct bench b;

	open_bench(&b, 9, 3, true);
	ck_assert_int_eq(run_ring(&b, workers, &s, 1, NULL, &st), 0);
	/* The kernel thread's sample is CPU time like the others: it is
	 * handed on with no frames, not dropped. */
	ck_assert_uint_eq(s.samples, 9);
	ck_assert_uint_eq(s.empty, 1);
	ck_assert_uint_eq(st.samples, 9);
	ck_assert_uint_eq(st.no_memory, 0);
	close_bench(&b);
}
END_TEST

/* A sample without a copy of its stack (perf record -g): its user call
 * chain of three frames, the sampled address and two callers. */
static void put_chain_sample(struct synth *s, uint32_t tid, uint64_t time)
{
	synth_begin(s, PERF_RECORD_SAMPLE, PERF_RECORD_MISC_USER);
	synth_u64(s, 0x401000 + time);              /* ip */
	synth_u32x2(s, 1000, tid);
	synth_u64(s, time);
	synth_u32x2(s, 0, 0);
	synth_u64(s, 10101010);                     /* period */
	synth_u64(s, 4);                            /* callchain nr */
	synth_u64(s, PERF_CONTEXT_USER);
	synth_u64(s, 0x401000 + time);
	synth_u64(s, 0x402001);
	synth_u64(s, 0x403001);
	synth_u64(s, PERF_SAMPLE_REGS_ABI_NONE);
	synth_u64(s, 0);                            /* stack size */
	synth_end(s);
}

/* Samples with copies (each unwound to its one frame: its address is in
 * no mapping) and samples that are their chain, of three threads: the
 * session counts their user frames by source, from the frames, on the
 * caller's thread and on three workers alike. */
START_TEST(user_frames_are_counted_by_where_they_came_from)
{
	size_t workers = (size_t)_i * 3;
	struct pr_session_stats st;
	struct seen s = { 0 };
	struct bench b;

	open_bench(&b, 0, 1, false);
	for (uint32_t i = 0; i < 12; i++) {
		b.s.len = 0;
		if (i % 3)
			put_sample(&b.s, 0, 0, 1000, 1000 + i % 3, 10 + i, 0, SP, 256, 256, 1);
		else
			put_chain_sample(&b.s, 1000 + i % 3, 10 + i);
		fakering_put(&b.f, b.s.buf, b.s.len);
	}
	ck_assert_int_eq(run_ring(&b, workers, &s, 1, NULL, &st), 0);
	ck_assert_uint_eq(s.samples, 12);
	ck_assert_uint_eq(st.frames_chain, 4 * 3);
	ck_assert_uint_eq(st.frames_dwarf, 8);
	ck_assert_uint_eq(st.frames_joined, 0);
	close_bench(&b);
}
END_TEST

START_TEST(a_sinks_enomem_loses_one_sample_and_the_run_goes_on)
{
	size_t workers = (size_t)_i;
	volatile sig_atomic_t stop = 0;
	struct pr_session_stats st;
	struct seen s[2] = { { .fail_at = 3, .fail = -ENOMEM }, { 0 } };
	struct bench b;

	open_bench(&b, 8, 1, false);
	ck_assert_int_eq(run_ring(&b, workers, s, 2, &stop, &st), 0);
	ck_assert_int_eq(stop, 0);
	/* The first sink lost the third sample; the second sink got it,
	 * and every later one reached both. */
	ck_assert_uint_eq(s[0].samples, 7);
	ck_assert_uint_eq(s[1].samples, 8);
	ck_assert_uint_eq(st.no_memory, 1);
	ck_assert_uint_eq(st.samples, 8);
	close_bench(&b);
}
END_TEST

START_TEST(a_sinks_other_error_ends_the_run)
{
	size_t workers = (size_t)_i;
	volatile sig_atomic_t stop = 0;
	struct pr_session_stats st;
	struct seen s = { .fail_at = 3, .fail = -EPIPE };
	struct bench b;

	open_bench(&b, 8, 1, false);
	ck_assert_int_eq(run_ring(&b, workers, &s, 1, &stop, &st), -EPIPE);
	/* The capture feeding the session is told to stop, and the worker
	 * hands nothing on after the error. */
	ck_assert_int_eq(stop, 1);
	ck_assert_uint_eq(s.samples, 2);
	ck_assert_uint_eq(s.calls, 3);
	ck_assert_uint_eq(st.no_memory, 0);
	close_bench(&b);
}
END_TEST

START_TEST(every_sink_sees_every_sample_on_every_worker)
{
	struct pr_session_stats st;
	struct seen s[2] = { { 0 }, { 0 } };
	struct bench b;

	open_bench(&b, 40, 4, false);
	ck_assert_int_eq(run_ring(&b, 3, s, 2, NULL, &st), 0);
	for (int i = 0; i < 2; i++) {
		/* A share for each other worker, merged back, each finished
		 * once. */
		ck_assert_uint_eq(s[i].parts, 2);
		ck_assert_uint_eq(s[i].merged, 2);
		ck_assert_uint_eq(s[i].finished, 3);
		ck_assert_uint_eq(s[i].samples, 40);
	}
	ck_assert_uint_eq(st.samples, 40);
	ck_assert_uint_eq(st.copied, 40);
	ck_assert_uint_eq(st.processed, 40);
	close_bench(&b);
}
END_TEST

/* What waits for the workers stays within max_bytes: a sample that would
 * pass it is dropped and counted, and the most that waited (what the
 * agent's health line says) is at least one sample and at most each
 * worker's share.  How many are dropped depends on how fast the workers
 * take them; that every sample is either copied or dropped does not. */
START_TEST(what_waits_for_the_workers_stays_within_its_bound)
{
	struct pr_session_stats st = { .sz = sizeof(st) };
	struct bench b;
	struct seen s = { 0 };
	size_t one, bound;

	open_bench(&b, 40, 4, false);
	one = b.s.len; /* the last sample's record: all are the same size */
	bound = 2 * (3 * one + one / 2);
	{
		PR_OPTS(pr_session_opts, so, .workers = 2, .max_bytes = bound);
		struct pr_session *ses = pr_session_new_reader(b.r, &so);
		struct pr_sink k = sink_of(&s);

		ck_assert_ptr_nonnull(ses);
		ck_assert_int_eq(pr_session_add_sink(ses, &k), 0);
		pr_reader_consume(b.r, pr_session_add, ses);
		ck_assert_int_eq(pr_session_round(ses), 0);
		ck_assert_int_eq(pr_session_finish(ses, 0), 0);
		ck_assert_int_eq(pr_session_stats(ses, &st), 0);
		pr_session_free(ses);
	}
	ck_assert_uint_eq(st.copied + st.dropped, 40);
	ck_assert_uint_eq(st.samples, st.copied);
	ck_assert_uint_eq(st.queued_bytes, 0);
	ck_assert_uint_ge(st.queued_peak_bytes, one / 2);
	ck_assert_uint_le(st.queued_peak_bytes, bound / 2);
	close_bench(&b);
}
END_TEST

START_TEST(sinks_are_checked_before_records_come)
{
	PR_OPTS(pr_session_opts, so, .workers = 2);
	struct seen s = { 0 };
	struct pr_sink k = sink_of(&s), one = k;
	struct pr_session *ses;
	struct bench b;

	open_bench(&b, 1, 1, false);
	ses = pr_session_new_reader(b.r, &so);
	ck_assert_ptr_nonnull(ses);
	/* Several workers need a sink that can be shared out. */
	one.part_new = NULL;
	ck_assert_int_eq(pr_session_add_sink(ses, &one), -EINVAL);
	/* ... and a clock of one worker's (a tick) only one. */
	one = k;
	one.tick = (int (*)(void *, uint64_t))seen_finish;
	ck_assert_int_eq(pr_session_add_sink(ses, &one), -EINVAL);
	one = k;
	one.sz = 8;
	ck_assert_int_eq(pr_session_add_sink(ses, &one), -EINVAL);
	ck_assert_int_eq(pr_session_add_sink(ses, &k), 0);
	ck_assert_int_eq(pr_reader_consume(b.r, pr_session_add, ses), 1);
	/* Once records came, the sinks are what they are. */
	ck_assert_int_eq(pr_session_add_sink(ses, &k), -EBUSY);
	ck_assert_int_eq(pr_session_finish(ses, 0), 0);
	ck_assert_int_eq(pr_session_finish(ses, 0), -EINVAL);
	pr_session_free(ses);
	pr_session_free(NULL);
	ck_assert_uint_eq(s.samples, 1);
	close_bench(&b);
}
END_TEST

static bool not_1001(const struct pr_record *rec, const char *process, void *ctx)
{
	(void)process;
	(*(int *)ctx)++;
	return rec->tid != 1001;
}

START_TEST(the_filter_leaves_samples_out_before_unwinding)
{
	int asked = 0;
	PR_OPTS(pr_session_opts, so, .filter = not_1001, .filter_ctx = &asked);
	struct pr_session_stats st = { .sz = sizeof(st) };
	struct pr_unwind_stats us = { .sz = sizeof(us) };
	struct seen s = { 0 };
	struct pr_sink k = sink_of(&s);
	struct pr_session *ses;
	struct bench b;

	open_bench(&b, 9, 3, false);
	ses = pr_session_new_reader(b.r, &so);
	ck_assert_ptr_nonnull(ses);
	ck_assert_int_eq(pr_session_add_sink(ses, &k), 0);
	ck_assert_int_eq(pr_reader_consume(b.r, pr_session_add, ses), 9);
	ck_assert_int_eq(pr_session_finish(ses, 0), 0);
	ck_assert_int_eq(pr_session_stats(ses, &st), 0);
	ck_assert_int_eq(pr_session_unwind_stats(ses, &us), 0);
	ck_assert_int_eq(asked, 9);
	ck_assert_uint_eq(st.skipped, 3);
	ck_assert_uint_eq(s.samples, 6);
	/* Left out before the unwinder saw them. */
	ck_assert_uint_eq(us.samples, 6);
	pr_session_free(ses);
	close_bench(&b);
}
END_TEST

/* The demo fixture through a session of `workers`, its binaries found
 * by build-id in the fixture, named. */
static void replay_fixture(size_t workers, struct seen *s, struct pr_session_stats *st,
			   struct pr_unwind_stats *us)
{
	PR_OPTS(pr_symbolizer_opts, sy);
	struct pr_sink k = sink_of(s);
	struct demo_replay d;

	demo_replay_open(&d, workers, true, &sy);
	ck_assert_uint_eq(pr_session_nr_workers(d.ses), workers ? workers : 1);
	ck_assert_ptr_nonnull(pr_session_model(d.ses, 0));
	ck_assert_ptr_null(pr_session_model(d.ses, workers ? workers : 1));
	ck_assert_int_eq(pr_session_add_sink(d.ses, &k), 0);
	demo_replay_run(&d);
	*st = d.st;
	*us = d.us;
	demo_replay_close(&d);
}

START_TEST(a_file_replays_alike_on_one_worker_and_on_three)
{
	struct seen one = { 0 }, three = { 0 };
	struct pr_session_stats st1, st3;
	struct pr_unwind_stats us1, us3;

	replay_fixture(0, &one, &st1, &us1);
	replay_fixture(3, &three, &st3, &us3);
	ck_assert_uint_eq(one.samples, FIXTURE_DEMO_SAMPLES);
	ck_assert_uint_eq(three.samples, FIXTURE_DEMO_SAMPLES);
	ck_assert_uint_eq(one.records, three.records);
	ck_assert_uint_gt(one.records, 0);
	ck_assert_uint_eq(st1.complete, st3.complete);
	ck_assert_uint_gt(st1.complete, FIXTURE_DEMO_SAMPLES / 2);
	ck_assert_uint_eq(st1.first_time, FIXTURE_DEMO_FIRST_TIME);
	ck_assert_uint_eq(st1.first_time, st3.first_time);
	ck_assert_uint_eq(st1.last_time, st3.last_time);
	ck_assert_uint_eq(us1.frames, us3.frames);
	/* Every user frame counted once by its source: the demo's are
	 * unwound from copies, or joined. */
	ck_assert_uint_eq(st1.frames_dwarf + st1.frames_joined, us1.frames);
	ck_assert_uint_eq(st1.frames_chain, 0);
	ck_assert_uint_eq(st1.frames_dwarf, st3.frames_dwarf);
	ck_assert_uint_eq(st1.frames_joined, us1.joined_frames);
	for (int e = 0; e < PR_END_MAX; e++)
		ck_assert_uint_eq(us1.ends[e], us3.ends[e]);
	/* A file's stacks are copied whole: nothing is cut. */
	ck_assert_uint_eq(st3.cut, 0);
	ck_assert_uint_eq(st3.copied, FIXTURE_DEMO_SAMPLES);
}
END_TEST

/* A sink that releases what it holds at every record after its first
 * `release_at` samples: the agent's windows cut, so the session may
 * trim. */
static int release_after(void *ctx, uint64_t time)
{
	struct seen *s = ctx;

	(void)time;
	return s->samples >= s->release_at ? PR_SINK_RELEASED : 0;
}

START_TEST(a_release_trims_the_models_and_the_sampled_files_count_as_hot)
{
	const char *dir = getenv("DS_FIXTURES");
	char path[4096], debug[4096];
	const char *dirs[1] = { debug };
	PR_OPTS(pr_cache_opts, co, .max_bytes = 1, .grace_ns = UINT64_MAX);
	PR_OPTS(pr_model_opts, mo, .debug_dirs = dirs, .nr_debug_dirs = 1, .cache = &co);
	PR_OPTS(pr_session_opts, so, .model = &mo);
	struct pr_session_stats st = { .sz = sizeof(st) };
	struct seen s = { .release_at = 10 };
	struct pr_sink k = sink_of(&s);
	struct pr_session *ses;
	struct pr_file *f;

	ck_assert_ptr_nonnull(dir);
	snprintf(path, sizeof(path), "%s/demo-static/perf.data", dir);
	snprintf(debug, sizeof(debug), "%s/demo-static", dir);
	k.time = release_after;
	f = pr_file_open(path, NULL);
	ck_assert_ptr_nonnull(f);
	ses = pr_session_new_file(f, &so);
	ck_assert_ptr_nonnull(ses);
	ck_assert_int_eq(pr_session_add_sink(ses, &k), 0);
	ck_assert_int_ge(pr_session_consume_file(ses), 0);
	ck_assert_int_eq(pr_session_finish(ses, 0), 0);
	ck_assert_int_eq(pr_session_stats(ses, &st), 0);
	/* Every sample still reached the sink, each trim evicting the one
	 * binary the last samples ran in: a file the session marked
	 * sampled (the unwinder marks nothing). */
	ck_assert_uint_eq(s.samples, FIXTURE_DEMO_SAMPLES);
	ck_assert_uint_gt(st.cache_evicted, 0);
	ck_assert_uint_gt(st.cache_evicted_hot, 0);
	ck_assert_uint_eq(st.complete, FIXTURE_DEMO_SAMPLES);
	pr_session_free(ses);
	pr_file_close(f);
}
END_TEST

static Suite *session_suite(void)
{
	Suite *s = suite_create("session");
	TCase *tc = tcase_create("session");

	tcase_set_timeout(tc, 60);
	/* 0: on the caller's thread; 1: on a worker thread. */
	tcase_add_loop_test(tc, empty_stacks_reach_the_sinks, 0, 2);
	tcase_add_loop_test(tc, a_sinks_enomem_loses_one_sample_and_the_run_goes_on, 0, 2);
	tcase_add_loop_test(tc, a_sinks_other_error_ends_the_run, 0, 2);
	tcase_add_test(tc, every_sink_sees_every_sample_on_every_worker);
	tcase_add_loop_test(tc, user_frames_are_counted_by_where_they_came_from, 0, 2);
	tcase_add_test(tc, what_waits_for_the_workers_stays_within_its_bound);
	tcase_add_test(tc, sinks_are_checked_before_records_come);
	tcase_add_test(tc, the_filter_leaves_samples_out_before_unwinding);
	tcase_add_test(tc, a_file_replays_alike_on_one_worker_and_on_three);
	tcase_add_test(tc, a_release_trims_the_models_and_the_sampled_files_count_as_hot);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	return run_suite(session_suite());
}
