/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Time order without a kernel: records written into fake rings of two
 * CPUs, drained in either order, come out of a pr_order oldest first by
 * perf's round rule; a record past the bound is counted and still
 * delivered; the final flush delivers everything held.
 */
#include <check.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>

#include "checkmain.h"
#include "fakering.h"
#include "fakesample.h"

#define PARENT 100
#define CHILD 200

struct got {
	struct pr_record recs[32];
	int n;
};

static int collect(const struct pr_record *rec, void *arg)
{
	struct got *g = arg;

	ck_assert_int_lt(g->n, 32);
	g->recs[g->n++] = *rec;
	return 0;
}

static void assert_sorted(const struct got *g)
{
	for (int i = 1; i < g->n; i++)
		ck_assert_msg(g->recs[i - 1].time <= g->recs[i].time,
			      "record %d (time %llu) after one at %llu", i,
			      (unsigned long long)g->recs[i].time,
			      (unsigned long long)g->recs[i - 1].time);
}

/* The child's FORK, as the kernel writes it on the parent's CPU. */
static void put_fork(struct synth *s, uint64_t time, uint32_t cpu)
{
	synth_begin(s, PERF_RECORD_FORK, 0);
	synth_u32x2(s, CHILD, PARENT);              /* pid, ppid */
	synth_u32x2(s, CHILD, PARENT);              /* tid, ptid */
	synth_u64(s, time);
	synth_sample_id(s, CHILD, CHILD, time, cpu, 0, 0);
	synth_end(s);
}

static void put_one_sample(struct fakering *f, uint32_t tid, uint64_t time,
			   uint32_t cpu)
{
	static struct synth s;

	s.len = 0;
	put_sample(&s, 0, 0, tid, tid, time, cpu, 0x7ffd0000, 32, 32, 0);
	fakering_put(f, s.buf, s.len);
}

static void put_one_fork(struct fakering *f, uint64_t time, uint32_t cpu)
{
	static struct synth s;

	s.len = 0;
	put_fork(&s, time, cpu);
	fakering_put(f, s.buf, s.len);
}

/* Rings of CPU 0 and CPU 1, drained in the order `first`, then the
 * other: a drain takes the reader's rings in their order. */
struct two_cpus {
	struct fakering f[2];          /* by CPU */
	struct perf_event_attr attr;
	struct pr_reader *r;
	struct pr_order *o;
};

static void two_cpus_open(struct two_cpus *t, int first)
{
	struct pr_ring rings[2];

	ck_assert_int_eq(pr_event_attr(NULL, PR_SOURCE_CPU_CLOCK, 0, &t->attr), 0);
	for (int cpu = 0; cpu < 2; cpu++)
		fakering_init(&t->f[cpu], 4096, 0);
	fakering_ring(&t->f[first], &rings[0], first);
	fakering_ring(&t->f[!first], &rings[1], !first);
	t->r = pr__reader_from_rings(rings, 2, &t->attr, NULL);
	ck_assert_ptr_nonnull(t->r);
	t->o = pr_order_new(pr_reader_attr(t->r), NULL);
	ck_assert_ptr_nonnull(t->o);
}

static void two_cpus_close(struct two_cpus *t)
{
	pr_order_free(t->o);
	pr_reader_close(t->r);
	fakering_free(&t->f[0]);
	fakering_free(&t->f[1]);
}

static struct pr_order_stats stats_of(const struct pr_order *o)
{
	struct pr_order_stats st = { .sz = sizeof(st) };

	ck_assert_int_eq(pr_order_stats(o, &st), 0);
	return st;
}

/*
 * The parent forks on CPU 1 at t1; the child is sampled on CPU 0 at
 * t2 > t1.  Whichever ring is drained first, and whether the FORK reaches
 * its ring in the same drain as the sample or only by the next one, the
 * FORK comes out first.
 */
START_TEST(a_fork_on_one_cpu_comes_before_a_later_sample_of_the_child_on_another)
{
	const uint64_t t1 = 1000, t2 = 2000;

	for (int first = 0; first < 2; first++) {
		for (int fork_late = 0; fork_late < 2; fork_late++) {
			struct two_cpus t;
			struct got g = { 0 };

			two_cpus_open(&t, first);
			put_one_sample(&t.f[0], CHILD, t2, 0);
			if (!fork_late)
				put_one_fork(&t.f[1], t1, 1);
			ck_assert_int_eq(pr_reader_consume_ordered(t.r, t.o, collect, &g), 0);
			/* Nothing goes before a later drain could bring an
			 * older record. */
			ck_assert_int_eq(g.n, 0);
			if (fork_late)
				put_one_fork(&t.f[1], t1, 1);
			ck_assert_int_eq(pr_reader_consume_ordered(t.r, t.o, collect, &g), 2);
			ck_assert_int_eq(pr_order_flush(t.o, collect, &g), 0);
			ck_assert_int_eq(g.n, 2);
			ck_assert_uint_eq(g.recs[0].type, PR_RECORD_FORK);
			ck_assert_uint_eq(g.recs[0].time, t1);
			ck_assert_int_eq(g.recs[0].ring_cpu, 1);
			ck_assert_uint_eq(g.recs[1].type, PR_RECORD_SAMPLE);
			ck_assert_uint_eq(g.recs[1].tid, CHILD);
			ck_assert_int_eq(g.recs[1].ring_cpu, 0);
			ck_assert_uint_eq(stats_of(t.o).late, 0);
			two_cpus_close(&t);
		}
	}
}
END_TEST

/* Both rings busy over several drains, drained in either order: every
 * record comes out once, and all of them in time order. */
START_TEST(records_of_two_rings_over_several_drains_come_out_sorted)
{
	for (int first = 0; first < 2; first++) {
		struct two_cpus t;
		struct got g = { 0 };

		two_cpus_open(&t, first);
		for (uint64_t round = 0; round < 5; round++) {
			uint64_t base = 1000 * (round + 1);

			/* CPU 0 stamped before CPU 1 in even drains, after
			 * in odd ones. */
			put_one_sample(&t.f[0], PARENT, base + (round % 2 ? 700 : 100), 0);
			put_one_sample(&t.f[0], PARENT, base + 800, 0);
			put_one_sample(&t.f[1], CHILD, base + 400, 1);
			put_one_sample(&t.f[1], CHILD, base + 900, 1);
			ck_assert_int_ge(pr_reader_consume_ordered(t.r, t.o, collect, &g), 0);
			assert_sorted(&g);
		}
		ck_assert_int_ge(pr_order_flush(t.o, collect, &g), 1);
		ck_assert_int_eq(g.n, 20);
		assert_sorted(&g);
		two_cpus_close(&t);
	}
}
END_TEST

/*
 * A record read after a later one already went out (past the bound) is
 * neither dropped nor held back: it goes out with the next records that
 * may, counted as late.
 */
START_TEST(a_record_past_the_bound_is_delivered_and_counted_late)
{
	const uint64_t times[] = { 10, 20, 30, 5, 40 };
	const uint64_t want[] = { 10, 20, 5, 30, 40 };
	struct two_cpus t;
	struct got g = { 0 };
	struct pr_order_stats st;

	two_cpus_open(&t, 0);
	/* Drains 1-3 bring 10, 20, 30: each drain lets the one before go. */
	for (int i = 0; i < 3; i++) {
		put_one_sample(&t.f[0], PARENT, times[i], 0);
		ck_assert_int_eq(pr_reader_consume_ordered(t.r, t.o, collect, &g), i > 0);
	}
	ck_assert_int_eq(g.n, 2);
	/* Drain 4 brings 5, older than 20 which went out already, and 40. */
	put_one_sample(&t.f[1], CHILD, times[3], 1);
	put_one_sample(&t.f[0], PARENT, times[4], 0);
	ck_assert_int_eq(pr_reader_consume_ordered(t.r, t.o, collect, &g), 2);
	st = stats_of(t.o);
	ck_assert_uint_eq(st.late, 1);
	ck_assert_uint_eq(st.held, 1);
	ck_assert_int_eq(pr_order_flush(t.o, collect, &g), 1);
	ck_assert_int_eq(g.n, 5);
	for (int i = 0; i < 5; i++)
		ck_assert_uint_eq(g.recs[i].time, want[i]);
	st = stats_of(t.o);
	ck_assert_uint_eq(st.added, 5);
	ck_assert_uint_eq(st.delivered, 5);
	ck_assert_uint_eq(st.held, 0);
	ck_assert_uint_eq(st.held_bytes, 0);
	ck_assert_uint_eq(st.late, 1);
	two_cpus_close(&t);
}
END_TEST

/* The flush at the end hands out every record held, the last drain's
 * included, in order; records of equal time keep the order they were
 * added in (synthesized ones are all time 0). */
START_TEST(the_final_flush_delivers_everything_held)
{
	struct two_cpus t;
	struct got g = { 0 };

	two_cpus_open(&t, 1);
	for (uint32_t tid = 1; tid <= 3; tid++)
		put_one_sample(&t.f[1], tid, 0, 1);
	put_one_sample(&t.f[0], PARENT, 300, 0);
	put_one_sample(&t.f[1], CHILD, 200, 1);
	ck_assert_int_eq(pr_reader_consume_ordered(t.r, t.o, collect, &g), 3);
	ck_assert_int_eq(pr_order_flush(t.o, collect, &g), 2);
	ck_assert_int_eq(g.n, 5);
	for (uint32_t i = 0; i < 3; i++)
		ck_assert_uint_eq(g.recs[i].tid, i + 1);
	ck_assert_uint_eq(g.recs[3].time, 200);
	ck_assert_uint_eq(g.recs[4].time, 300);
	ck_assert_uint_eq(stats_of(t.o).held, 0);
	/* Nothing is left for a second flush. */
	ck_assert_int_eq(pr_order_flush(t.o, collect, &g), 0);
	two_cpus_close(&t);
}
END_TEST

/* A sample's copy keeps its stack only up to what the kernel could read
 * (rounded up to 8), and still parses whole. */
static int check_cut_stack(const struct pr_record *rec, void *arg)
{
	const struct pr_sample *sm = &rec->u.sample;
	size_t *size = arg;

	ck_assert_uint_eq(sm->stack_size, 24);
	ck_assert_uint_eq(sm->stack_dyn_size, 20);
	for (int i = 0; i < 20; i++)
		ck_assert_uint_eq(sm->stack[i], (uint8_t)(5 + i));
	ck_assert_uint_eq(sm->regs_abi, PERF_SAMPLE_REGS_ABI_64);
	ck_assert_uint_eq(rec->time, 7);
	*size = rec->size;
	return 0;
}

START_TEST(a_copied_sample_keeps_the_stack_the_kernel_read)
{
	static struct synth s;
	struct two_cpus t;
	size_t size = 0;

	two_cpus_open(&t, 0);
	s.len = 0;
	put_sample(&s, 0, 0, PARENT, PARENT, 7, 0, 0x7ffd0000, 64, 20, 5);
	fakering_put(&t.f[0], s.buf, s.len);
	ck_assert_int_eq(pr_reader_consume_ordered(t.r, t.o, check_cut_stack, &size), 0);
	ck_assert_int_eq(pr_order_flush(t.o, check_cut_stack, &size), 1);
	ck_assert_uint_eq(size, s.len - (64 - 24));
	two_cpus_close(&t);
}
END_TEST

/* A caller that knows how much of the stack it needs cuts the copy
 * there (rounded up to 8): the copy says it has that much, says it was
 * cut, and still parses whole.  Past what the kernel read, the cut
 * changes nothing. */
struct cut {
	struct pr_order *o;
	uint64_t max;
	uint64_t stack_size, dyn_size;
	size_t size;
};

static int add_cut(const struct pr_record *rec, void *arg)
{
	struct cut *c = arg;

	return pr_order_add_cut(c->o, rec, c->max);
}

static int check_cut_by_caller(const struct pr_record *rec, void *arg)
{
	const struct pr_sample *sm = &rec->u.sample;
	struct cut *c = arg;

	ck_assert_int_eq(rec->type, PR_RECORD_SAMPLE);
	c->stack_size = sm->stack_size;
	c->dyn_size = sm->stack_dyn_size;
	for (uint64_t i = 0; i < sm->stack_dyn_size; i++)
		ck_assert_uint_eq(sm->stack[i], (uint8_t)(5 + i));
	ck_assert_uint_eq(sm->regs_abi, PERF_SAMPLE_REGS_ABI_64);
	ck_assert_uint_eq(rec->time, 7);
	ck_assert_uint_eq(rec->tid, PARENT);
	c->size = rec->size;
	return 0;
}

START_TEST(a_sample_cut_by_its_caller_keeps_that_much_of_its_stack)
{
	static const struct {
		uint64_t max, stack_size, dyn_size;
	} cases[] = {
		/* Cut: stack_size is dyn_size plus 8. */
		{ 10, 24, 16 },             /* rounded up to 8 */
		{ 16, 24, 16 },
		{ 0, 16, 8 },               /* at least a word */
		/* Not cut: as pr_order_add() (the kernel read 20). */
		{ 20, 24, 20 },
		{ 100, 24, 20 },
		{ UINT64_MAX, 24, 20 },
	};
	static struct synth s;

	for (size_t k = 0; k < sizeof(cases) / sizeof(cases[0]); k++) {
		struct two_cpus t;
		struct cut c = { .max = cases[k].max };

		two_cpus_open(&t, 0);
		c.o = t.o;
		s.len = 0;
		put_sample(&s, 0, 0, PARENT, PARENT, 7, 0, 0x7ffd0000, 64, 20, 5);
		fakering_put(&t.f[0], s.buf, s.len);
		ck_assert_int_eq(pr_reader_consume(t.r, add_cut, &c), 1);
		ck_assert_int_eq(pr_order_flush(t.o, check_cut_by_caller, &c), 1);
		ck_assert_msg(c.stack_size == cases[k].stack_size &&
			      c.dyn_size == cases[k].dyn_size,
			      "cut at %llu: stack %llu, dyn_size %llu", (unsigned long long)c.max,
			      (unsigned long long)c.stack_size, (unsigned long long)c.dyn_size);
		ck_assert_uint_eq(c.size, s.len - (64 - cases[k].stack_size));
		two_cpus_close(&t);
	}
	ck_assert_int_eq(pr_order_add_cut(NULL, NULL, 8), -EINVAL);
}
END_TEST

static Suite *order_suite(void)
{
	Suite *s = suite_create("order");
	TCase *tc = tcase_create("fake-rings");

	tcase_add_test(tc, a_fork_on_one_cpu_comes_before_a_later_sample_of_the_child_on_another);
	tcase_add_test(tc, records_of_two_rings_over_several_drains_come_out_sorted);
	tcase_add_test(tc, a_record_past_the_bound_is_delivered_and_counted_late);
	tcase_add_test(tc, the_final_flush_delivers_everything_held);
	tcase_add_test(tc, a_copied_sample_keeps_the_stack_the_kernel_read);
	tcase_add_test(tc, a_sample_cut_by_its_caller_keeps_that_much_of_its_stack);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	return run_suite(order_suite());
}
