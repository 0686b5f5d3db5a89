/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Profiles of several events, with counters read with the samples: the
 * records made here as the kernel would give them.  pprof has a sample
 * type per event and per counter; folded, SVG and speedscope show one
 * event, weighed by its samples' periods.
 */
#include <check.h>
#include <errno.h>
#include <linux/perf_event.h>

#include "checkmain.h"
#include "profile-fixture.h"
#include "pprof-decode.h"

#define MS 1000000ull

static const char *const RUN[] = { "main", "run", "leaf" };
static const char *const WAIT[] = { "main", "run", "emit" };
static const char *const EVENTS[] = { "page-faults:u", "task-clock" };

/* A sample of `names` on thread `tid` at `time`, standing for `period`
 * events, from the event whose id is `id`, with `nr_read` counters' reads
 * at `read`: (value, id) pairs, as PERF_FORMAT_GROUP | PERF_FORMAT_ID
 * lays them out. */
static void add_read(struct pr_profile *p, size_t event, const char *const *names,
		     uint32_t tid, uint64_t time, uint64_t period, uint64_t id,
		     const uint64_t *read, uint32_t nr_read)
{
	struct pr_frame frames[16];
	struct pr_stack st = make_stack(frames, names, 3, 0x10);
	struct pr_record r = { .type = PR_RECORD_SAMPLE, .misc = PERF_RECORD_MISC_USER,
			       .pid = PID, .tid = tid, .time = time, .id = id, .cpu = 1,
			       .fields = PR_ID_TID | PR_ID_TIME | PR_ID_ID | PR_ID_CPU };

	r.u.sample.period = period;
	r.u.sample.read = read;
	r.u.sample.nr_read = nr_read;
	r.u.sample.read_stride = 2;
	ck_assert_int_eq(pr_profile_add_event(p, event, sym, &r, &st, "app", "app"), 0);
}

/* One without reads, on thread PID. */
static void add(struct pr_profile *p, size_t event, const char *const *names, uint64_t time,
		uint64_t period)
{
	add_read(p, event, names, PID, time, period, 0, NULL, 0);
}

static struct pr_profile *new_profile(const char *const *events, size_t nr_events,
				      const char *const *counters, size_t nr_counters,
				      bool per_cpu)
{
	PR_OPTS(pr_profile_opts, po, .freq = 1000, .events = events, .nr_events = nr_events,
		.counters = counters, .nr_counters = nr_counters, .counters_per_cpu = per_cpu,
		.timeline = true);
	struct pr_profile *p = pr_profile_new(&po);

	ck_assert_ptr_nonnull(p);
	return p;
}

/*
 * Page faults (periods 1, 2 and 5) in RUN; the task clock (1 ms and 3 ms)
 * in the same RUN, and 2 ms in WAIT, its samples interleaved with the
 * faults'.
 */
static struct pr_profile *two_events(void)
{
	struct pr_profile *p = new_profile(EVENTS, 2, NULL, 0, false);

	add(p, 0, RUN, 1 * MS, 1);
	add(p, 1, RUN, 2 * MS, 1 * MS);
	add(p, 0, RUN, 3 * MS, 2);
	add(p, 1, WAIT, 4 * MS, 2 * MS);
	add(p, 1, RUN, 5 * MS, 3 * MS);
	add(p, 0, RUN, 6 * MS, 5);
	return p;
}

/* The value of numeric label `key` on s; -1 without it. */
static int64_t num_label_of(const Perftools__Profiles__Profile *m,
			    const Perftools__Profiles__Sample *s, const char *key)
{
	for (size_t i = 0; i < s->n_label; i++)
		if (!strcmp(str(m, s->label[i]->key), key))
			return s->label[i]->num;
	return -1;
}

/* The sample whose leaf is `leaf`, of thread `tid`, with value `v` at
 * `at` (samples of one stack are one per event). */
static const Perftools__Profiles__Sample *sample_where(const Perftools__Profiles__Profile *m,
							const char *leaf, uint32_t tid, size_t at,
							int64_t v)
{
	for (size_t i = 0; i < m->n_sample; i++) {
		const Perftools__Profiles__Sample *s = m->sample[i];

		if (!strcmp(leaf_of(m, s), leaf) && num_label_of(m, s, "tid") == tid &&
		    s->value[at] == v)
			return s;
	}
	ck_abort_msg("no sample of tid %u ends in %s with %lld at %zu", tid, leaf, (long long)v,
		     at);
	return NULL;
}

/* The sum of sample type `at` over every sample. */
static int64_t type_total(const Perftools__Profiles__Profile *m, size_t at)
{
	int64_t sum = 0;

	for (size_t i = 0; i < m->n_sample; i++)
		sum += m->sample[i]->value[at];
	return sum;
}

START_TEST(two_events_are_two_pprof_sample_types_summing_their_periods)
{
	struct pr_profile *p = two_events();
	Perftools__Profiles__Profile *m = read_pprof(p);
	const Perftools__Profiles__Sample *s;

	ck_assert_uint_eq(m->n_sample_type, 2);
	ck_assert_str_eq(type_of(m, 0), "page-faults:u/count");
	ck_assert_str_eq(type_of(m, 1), "task-clock/nanoseconds");
	ck_assert_str_eq(str(m, m->default_sample_type), "page-faults:u");
	ck_assert_str_eq(str(m, m->period_type->type), "page-faults:u");
	/* RUN once per event: the event is part of a stack's identity. */
	ck_assert_uint_eq(m->n_sample, 3);
	ck_assert_int_eq(type_total(m, 0), 8);
	ck_assert_int_eq(type_total(m, 1), 6 * MS);
	s = sample_where(m, "leaf", PID, 0, 8);
	ck_assert_int_eq(s->value[1], 0);
	s = sample_where(m, "leaf", PID, 1, 4 * MS);
	ck_assert_int_eq(s->value[0], 0);
	ck_assert_str_eq(label_of(m, s, "thread"), "app");
	s = sample_of(m, "emit");
	ck_assert_int_eq(s->value[0], 0);
	ck_assert_int_eq(s->value[1], 2 * MS);
	perftools__profiles__profile__free_unpacked(m, NULL);
	ck_assert_uint_eq(pr_profile_samples(p), 6);
	ck_assert_uint_eq(pr_profile_nr_stacks(p), 3);
	pr_profile_free(p);
}
END_TEST

static char *write_event(const struct pr_profile *p, enum pr_profile_format fmt, size_t event)
{
	PR_OPTS(pr_profile_write_opts, wo, .event = event);

	return write_out(p, fmt, &wo, NULL);
}

START_TEST(folded_shows_one_event_weighed_by_its_periods)
{
	struct pr_profile *p = two_events();
	char *text = write_event(p, PR_FORMAT_FOLDED, 1);

	ck_assert_str_eq(text, "app;main;run;emit 2000000\n"
			       "app;main;run;leaf 4000000\n");
	free(text);
	text = write_event(p, PR_FORMAT_FOLDED, 0);
	ck_assert_str_eq(text, "app;main;run;leaf 8\n");
	free(text);
	/* Without write options, the first event. */
	text = write_out(p, PR_FORMAT_FOLDED, NULL, NULL);
	ck_assert_str_eq(text, "app;main;run;leaf 8\n");
	free(text);
	pr_profile_free(p);
}
END_TEST

START_TEST(an_event_past_the_last_is_refused)
{
	PR_OPTS(pr_profile_write_opts, wo, .event = 2);
	struct pr_profile *p = two_events(), *plain;
	struct pr_frame frames[16];
	struct pr_stack st = make_stack(frames, RUN, 3, 0x10);
	struct pr_record r = { .type = PR_RECORD_SAMPLE, .pid = PID, .tid = PID };
	FILE *f = fopen("/dev/null", "w");

	ck_assert_ptr_nonnull(f);
	ck_assert_int_eq(pr_profile_write(p, PR_FORMAT_FOLDED, f, &wo), -EINVAL);
	ck_assert_int_eq(pr_profile_add_event(p, 2, sym, &r, &st, "app", "app"), -EINVAL);
	plain = pr_profile_new(NULL);
	ck_assert_ptr_nonnull(plain);
	ck_assert_int_eq(pr_profile_add_event(plain, 1, sym, &r, &st, "app", "app"), -EINVAL);
	wo.event = 1;
	ck_assert_int_eq(pr_profile_write(plain, PR_FORMAT_FOLDED, f, &wo), -EINVAL);
	ck_assert_int_eq(pr_profile_add_event(plain, 0, sym, &r, &st, "app", "app"), 0);
	ck_assert_int_eq(fclose(f), 0);
	pr_profile_free(plain);
	pr_profile_free(p);
}
END_TEST

START_TEST(events_need_names_and_the_cpu_mode)
{
	static const char *const empty[] = { "page-faults", "" };
	PR_OPTS(pr_profile_opts, po, .events = EVENTS, .nr_events = 2,
		.mode = PR_PROFILE_WALL);

	errno = 0;
	ck_assert_ptr_null(pr_profile_new(&po));
	ck_assert_int_eq(errno, EINVAL);
	po.mode = PR_PROFILE_CPU;
	po.events = empty;
	ck_assert_ptr_null(pr_profile_new(&po));
	ck_assert_int_eq(errno, EINVAL);
	po.events = NULL;
	ck_assert_ptr_null(pr_profile_new(&po));
	/* Counters count alongside sampled events only. */
	po.nr_events = 0;
	po.counters = EVENTS;
	po.nr_counters = 2;
	ck_assert_ptr_null(pr_profile_new(&po));
	ck_assert_int_eq(errno, EINVAL);
}
END_TEST

START_TEST(svg_names_the_event_and_its_unit)
{
	struct pr_profile *p = two_events();
	char *svg = write_event(p, PR_FORMAT_SVG, 0);

	ck_assert_msg(strstr(svg, "<title>leaf (8 page-faults:u, 100.00%)</title>"), "%s", svg);
	ck_assert_msg(strstr(svg, ">8 page-faults:u in 3 samples at 1000 Hz</text>"), "%s", svg);
	ck_assert_ptr_null(strstr(svg, "<title>emit"));
	free(svg);
	svg = write_event(p, PR_FORMAT_SVG, 1);
	ck_assert_msg(strstr(svg, "<title>leaf (4.00 ms task-clock, 66.67%)</title>"), "%s",
		      svg);
	ck_assert_msg(strstr(svg, ">6.00 ms task-clock in 3 samples at 1000 Hz</text>"), "%s",
		      svg);
	free(svg);
	pr_profile_free(p);
}
END_TEST

START_TEST(speedscope_shows_one_event_in_its_unit_and_order)
{
	struct pr_profile *p = two_events();
	char *text = write_event(p, PR_FORMAT_SPEEDSCOPE, 1);

	/* Frames numbered as first seen, leaf first: leaf 0, run 1, main 2,
	 * emit 3.  The clock's samples as they came, faults left out. */
	ck_assert_msg(strstr(text, "\"unit\":\"nanoseconds\",\"startValue\":0,\"endValue\":6000000,"
				   "\n\"samples\":[[2,1,0],\n[2,1,3],\n[2,1,0]],\n"
				   "\"weights\":[1000000,2000000,3000000]}"), "%s", text);
	free(text);
	text = write_event(p, PR_FORMAT_SPEEDSCOPE, 0);
	ck_assert_msg(strstr(text, "\"unit\":\"none\",\"startValue\":0,\"endValue\":8,"
				   "\n\"samples\":[[2,1,0]],\n\"weights\":[8]}"), "%s", text);
	free(text);
	pr_profile_free(p);
}
END_TEST

START_TEST(events_are_found_by_name_with_or_without_their_modifier)
{
	static const char *const evs[] = {
		"page-faults:u", "cycles:u", "cycles:k", "sched:sched_switch", "cpu-clock:k",
	};
	struct pr_profile *p = new_profile(evs, 5, NULL, 0, false), *plain;
	Perftools__Profiles__Profile *m;

	ck_assert_int_eq(pr_profile_event_by_name(p, "page-faults:u"), 0);
	ck_assert_int_eq(pr_profile_event_by_name(p, "page-faults"), 0);
	ck_assert_int_eq(pr_profile_event_by_name(p, "page-faults:k"), -ENOENT);
	ck_assert_int_eq(pr_profile_event_by_name(p, "cycles:k"), 2);
	/* Which cycles? */
	ck_assert_int_eq(pr_profile_event_by_name(p, "cycles"), -ENOENT);
	ck_assert_int_eq(pr_profile_event_by_name(p, "sched:sched_switch"), 3);
	ck_assert_int_eq(pr_profile_event_by_name(p, "sched"), -ENOENT);
	ck_assert_int_eq(pr_profile_event_by_name(p, "cpu-clock"), 4);
	ck_assert_int_eq(pr_profile_event_by_name(p, "faults"), -ENOENT);
	ck_assert_int_eq(pr_profile_event_by_name(p, ""), -ENOENT);
	ck_assert_int_eq(pr_profile_event_by_name(p, NULL), -ENOENT);
	/* A clock with a modifier still counts nanoseconds. */
	m = read_pprof(p);
	ck_assert_str_eq(type_of(m, 4), "cpu-clock:k/nanoseconds");
	ck_assert_str_eq(type_of(m, 3), "sched:sched_switch/count");
	perftools__profiles__profile__free_unpacked(m, NULL);
	plain = pr_profile_new(NULL);
	ck_assert_int_eq(pr_profile_event_by_name(plain, "cpu-clock"), -ENOENT);
	pr_profile_free(plain);
	pr_profile_free(p);
}
END_TEST

/* ---- counters read with the samples ---- */

static const char *const COUNTERS[] = { "context-switches", "minor-faults" };

/* Counter ids: the kernel's, one per counter and thread (or CPU). */
enum { LEADER_A = 11, LEADER_B = 21 };

START_TEST(counter_growths_are_per_thread_between_its_samples)
{
	struct pr_profile *p = new_profile(EVENTS, 1, COUNTERS, 2, false);
	/* Threads A and B interleaved; each read is the counts so far. */
	static const uint64_t a1[] = { 10, 12, 100, 13 }, b1[] = { 4, 22, 7, 23 },
			      a2[] = { 15, 12, 130, 13 }, b2[] = { 9, 22, 20, 23 };
	uint32_t a = PID, b = PID + 1;
	Perftools__Profiles__Profile *m;
	const Perftools__Profiles__Sample *s;

	add_read(p, 0, RUN, a, 1 * MS, 1, LEADER_A, a1, 2);
	add_read(p, 0, RUN, b, 2 * MS, 1, LEADER_B, b1, 2);
	add_read(p, 0, WAIT, a, 3 * MS, 1, LEADER_A, a2, 2);
	add_read(p, 0, RUN, b, 4 * MS, 1, LEADER_B, b2, 2);
	m = read_pprof(p);
	ck_assert_uint_eq(m->n_sample_type, 3);
	ck_assert_str_eq(type_of(m, 1), "context-switches/count");
	ck_assert_str_eq(type_of(m, 2), "minor-faults/count");
	/* A's first read is all growth; its second, the difference. */
	s = sample_where(m, "leaf", a, 0, 1);
	ck_assert_int_eq(s->value[1], 10);
	ck_assert_int_eq(s->value[2], 100);
	s = sample_where(m, "emit", a, 0, 1);
	ck_assert_int_eq(s->value[1], 5);
	ck_assert_int_eq(s->value[2], 30);
	/* B's, not A's, precede B's second: its stack has all of B's. */
	s = sample_where(m, "leaf", b, 0, 2);
	ck_assert_int_eq(s->value[1], 9);
	ck_assert_int_eq(s->value[2], 20);
	/* And the growths add up to the counters' last reads. */
	ck_assert_int_eq(type_total(m, 1), 15 + 9);
	ck_assert_int_eq(type_total(m, 2), 130 + 20);
	perftools__profiles__profile__free_unpacked(m, NULL);
	pr_profile_free(p);
}
END_TEST

START_TEST(a_cpu_counter_spans_the_tasks_it_samples)
{
	/* One CPU's counter (one id) read in two threads' samples. */
	static const uint64_t r1[] = { 10, 31 }, r2[] = { 15, 31 }, r3[] = { 40, 31 };
	uint32_t a = PID, b = PID + 1;
	Perftools__Profiles__Profile *m;
	struct pr_profile *p;

	for (int per_cpu = 0; per_cpu < 2; per_cpu++) {
		p = new_profile(EVENTS, 1, COUNTERS, 1, per_cpu);
		add_read(p, 0, RUN, a, 1 * MS, 1, LEADER_A, r1, 1);
		add_read(p, 0, WAIT, b, 2 * MS, 1, LEADER_A, r2, 1);
		add_read(p, 0, WAIT, a, 3 * MS, 1, LEADER_A, r3, 1);
		m = read_pprof(p);
		ck_assert_int_eq(sample_where(m, "leaf", a, 0, 1)->value[1], 10);
		/* Per CPU, b's sample has what the CPU counted since a's;
		 * per thread, it is b's first read, all of it. */
		ck_assert_int_eq(sample_where(m, "emit", b, 0, 1)->value[1], per_cpu ? 5 : 15);
		ck_assert_int_eq(sample_where(m, "emit", a, 0, 1)->value[1], per_cpu ? 25 : 30);
		ck_assert_int_eq(type_total(m, 1), per_cpu ? 40 : 55);
		perftools__profiles__profile__free_unpacked(m, NULL);
		pr_profile_free(p);
	}
}
END_TEST

START_TEST(samples_without_reads_grow_no_counter)
{
	static const uint64_t r1[] = { 10, 31, 3, 32 };
	struct pr_profile *p = new_profile(EVENTS, 2, COUNTERS, 2, false);
	Perftools__Profiles__Profile *m;
	const Perftools__Profiles__Sample *s;

	/* The task clock's samples carry no reads (not the group's leader);
	 * a read of fewer values than counters fills those it has. */
	add(p, 1, WAIT, 1 * MS, 1 * MS);
	add_read(p, 0, RUN, PID, 2 * MS, 1, LEADER_A, r1, 1);
	m = read_pprof(p);
	ck_assert_uint_eq(m->n_sample_type, 4);
	s = sample_of(m, "emit");
	ck_assert_int_eq(s->value[2], 0);
	ck_assert_int_eq(s->value[3], 0);
	s = sample_of(m, "leaf");
	ck_assert_int_eq(s->value[2], 10);
	ck_assert_int_eq(s->value[3], 0);
	perftools__profiles__profile__free_unpacked(m, NULL);
	pr_profile_free(p);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("profile-events");
	TCase *tc = tcase_create("events");

	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, two_events_are_two_pprof_sample_types_summing_their_periods);
	tcase_add_test(tc, folded_shows_one_event_weighed_by_its_periods);
	tcase_add_test(tc, an_event_past_the_last_is_refused);
	tcase_add_test(tc, events_need_names_and_the_cpu_mode);
	tcase_add_test(tc, svg_names_the_event_and_its_unit);
	tcase_add_test(tc, speedscope_shows_one_event_in_its_unit_and_order);
	tcase_add_test(tc, events_are_found_by_name_with_or_without_their_modifier);
	tcase_add_test(tc, counter_growths_are_per_thread_between_its_samples);
	tcase_add_test(tc, a_cpu_counter_spans_the_tasks_it_samples);
	tcase_add_test(tc, samples_without_reads_grow_no_counter);
	suite_add_tcase(s, tc);
	return run_suite(s);
}
