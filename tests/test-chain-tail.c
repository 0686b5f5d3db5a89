/* SPDX-License-Identifier: Apache-2.0 */
/*
 * auto's tail (unwind/chain.c): a stack the copy cut goes on with the
 * sample's call chain only where the chain vouches for it.  Stacks are
 * built by hand over the functions of tail-cases.S, which keep frame
 * pointers or not as their CFI says, laid out as the calls would have
 * left them; each sample carries a copy cut short and the chain the
 * kernel's frame-pointer walk would have read over the whole stack.
 */
#include <check.h>
#include <linux/perf_event.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "checkmain.h"
#include "perfreader.h"
#include "prunwind.h"
#include "self-model.h"

extern char tail_leaf[], tail_fp_a_ret[], tail_fp_b_ret[], tail_fp_c_ret[];
extern char tail_nofp_ret[], tail_top_ret[];

#define A(sym) ((uint64_t)(uintptr_t)(sym))
#define WORDS 32
#define MAX_CHAIN 16

struct tail {
	struct pr_model *model;
	struct pr_unwinder *u;
	uint64_t stack[WORDS];
	uint64_t regs[PR_REG_MAX];   /* dense, PR_REGS_DWARF order */
	uint64_t chain[MAX_CHAIN + 1];
	struct pr_record rec;
	struct pr_stack st;
	void *jit;                   /* anonymous executable memory */
};

static void setup(struct tail *t, uint32_t chain_max_stack)
{
	PR_OPTS(pr_unwinder_opts, o, .live = true, .chain_max_stack = chain_max_stack);

	memset(t, 0, sizeof(*t));
	/* Mapped before the model reads this process's mappings. */
	t->jit = mmap(NULL, 4096, PROT_READ | PROT_EXEC, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	ck_assert_ptr_ne(t->jit, MAP_FAILED);
	t->model = self_model();
	t->u = pr_unwinder_new(t->model, &o);
	ck_assert_ptr_nonnull(t->u);
}

static void teardown(struct tail *t)
{
	pr_unwinder_free(t->u);
	pr_model_free(t->model);
	munmap(t->jit, 4096);
}

static uint64_t W(struct tail *t, int i)
{
	return (uintptr_t)&t->stack[i];
}

/* A sample in tail_leaf with rbp at word `bp`, `copied` words of the
 * stack copied, and the user chain `ips` (the sampled address first). */
static void unwind(struct tail *t, int bp, int copied, const uint64_t *ips, size_t nr)
{
	uint64_t regs[PR_REG_MAX] = { 0 };
	struct pr_sample *s = &t->rec.u.sample;
	size_t n = 0;

	regs[PR_REG_IP] = A(tail_leaf) + 1;
	regs[PR_REG_SP] = W(t, 0);
	regs[PR_REG_BP] = W(t, bp);
	for (int r = 0; r < PR_REG_MAX; r++)
		if (PR_REGS_DWARF >> r & 1)
			t->regs[n++] = regs[r];
	ck_assert_uint_le(nr, MAX_CHAIN);
	t->chain[0] = (uint64_t)PERF_CONTEXT_USER;
	memcpy(t->chain + 1, ips, nr * sizeof(*ips));
	memset(&t->rec, 0, sizeof(t->rec));
	t->rec.type = PR_RECORD_SAMPLE;
	t->rec.pid = t->rec.tid = (uint32_t)getpid();
	s->ip = regs[PR_REG_IP];
	s->callchain = t->chain;
	s->nr_callchain = nr + 1;
	s->regs_abi = PERF_SAMPLE_REGS_ABI_64;
	s->regs_mask = PR_REGS_DWARF;
	s->regs = t->regs;
	s->stack_addr = W(t, 0);
	s->stack = (const uint8_t *)t->stack;
	s->stack_size = s->stack_dyn_size = (uint64_t)copied * 8;
	ck_assert_int_eq(pr_unwinder_unwind(t->u, &t->rec, &t->st), 0);
}

/* The user frames exactly, `from_chain` of them (the outermost) marked as
 * from the chain, and how the stack ended. */
static void expect(const struct tail *t, const char *what, enum pr_stack_end end,
		   const uint64_t *ips, size_t nr, size_t from_chain)
{
	ck_assert_msg(t->st.nr == nr && t->st.end == end, "%s: %zu frames (%s), expected %zu (%s)",
		      what, t->st.nr, pr_stack_end_name(t->st.end), nr, pr_stack_end_name(end));
	for (size_t i = 0; i < nr; i++) {
		bool chained = t->st.frames[i].flags & PR_FRAME_CHAIN;

		ck_assert_msg(t->st.frames[i].ip == ips[i], "%s: frame %zu at 0x%llx, expected 0x%llx",
			      what, i, (unsigned long long)t->st.frames[i].ip,
			      (unsigned long long)ips[i]);
		ck_assert_msg(chained == (i >= nr - from_chain), "%s: frame %zu %s from the chain",
			      what, i, chained ? "is" : "is not");
	}
}

static struct pr_unwind_stats stats(const struct tail *t)
{
	struct pr_unwind_stats st = { .sz = sizeof(st) };

	ck_assert_int_eq(pr_unwinder_stats(t->u, &st), 0);
	return st;
}

/*
 * tail_top -> tail_fp_c -> tail_fp_b -> tail_fp_a -> tail_leaf, every
 * caller with its frame pointer, the leaf with none (so the kernel's walk,
 * from the leaf's rbp, which is tail_fp_a's, skips tail_fp_a's return
 * address).  Words 0..8, rbp at word 1.
 */
static void all_fp(struct tail *t)
{
	uint64_t *w = t->stack;

	memset(w, 0, sizeof(t->stack));
	w[0] = A(tail_fp_a_ret);
	w[1] = W(t, 3);                    /* tail_fp_a's frame: tail_fp_b's rbp */
	w[2] = A(tail_fp_b_ret);
	w[3] = W(t, 5);
	w[4] = A(tail_fp_c_ret);
	w[5] = W(t, 7);
	w[6] = A(tail_top_ret);
	w[7] = 0;                          /* tail_top's frame: rbp 0, as _start leaves it */
	w[8] = 0;
}

START_TEST(the_chain_continues_a_cut_stack_where_it_agrees_with_dwarf)
{
	struct tail t;
	const uint64_t chain[] = { A(tail_leaf) + 1, A(tail_fp_b_ret), A(tail_fp_c_ret),
				   A(tail_top_ret), 0 };
	const uint64_t whole[] = { A(tail_leaf) + 1, A(tail_fp_a_ret) - 1, A(tail_fp_b_ret) - 1,
				   A(tail_fp_c_ret) - 1, A(tail_top_ret) - 1 };
	struct pr_unwind_stats st;

	setup(&t, 0);
	all_fp(&t);
	/* The whole stack copied: DWARF alone, the chain not needed. */
	unwind(&t, 1, WORDS, chain, 5);
	expect(&t, "all copied", PR_END_OUTERMOST, whole, 5, 0);
	/* Four words: DWARF reaches tail_fp_b, whose return address the
	 * chain has where DWARF found it, after the sampled address; the
	 * rest is the chain's, each entry vouched for by a caller that keeps
	 * its frame pointer, up to the outermost frame. */
	unwind(&t, 1, 4, chain, 5);
	expect(&t, "cut at tail_fp_b", PR_END_OUTERMOST, whole, 5, 2);
	/* Cut in tail_fp_a's frame: one DWARF frame before the cut is not
	 * two entries of evidence. */
	unwind(&t, 1, 1, chain, 5);
	expect(&t, "cut at tail_fp_a", PR_END_TRUNCATED, whole, 2, 0);
	st = stats(&t);
	ck_assert_uint_eq(st.tail_samples, 1);
	ck_assert_uint_eq(st.tail_frames, 2);
	teardown(&t);
}
END_TEST

START_TEST(a_chain_that_contradicts_the_copy_is_not_followed)
{
	struct tail t;
	const uint64_t head[] = { A(tail_leaf) + 1, A(tail_fp_a_ret) - 1, A(tail_fp_b_ret) - 1 };
	/* Another stack's chain: the entry the copy has as tail_fp_b's
	 * return address is tail_fp_c's. */
	const uint64_t other[] = { A(tail_leaf) + 1, A(tail_fp_c_ret), A(tail_fp_c_ret),
				   A(tail_top_ret), 0 };
	const uint64_t right[] = { A(tail_leaf) + 1, A(tail_fp_b_ret), A(tail_fp_c_ret),
				   A(tail_top_ret), 0 };

	setup(&t, 0);
	all_fp(&t);
	unwind(&t, 1, 4, other, 5);
	expect(&t, "a chain of another stack", PR_END_TRUNCATED, head, 3, 0);
	/* The sampled address is not DWARF's leaf. */
	{
		uint64_t moved[5];

		memcpy(moved, right, sizeof(moved));
		moved[0] = A(tail_leaf);
		unwind(&t, 1, 4, moved, 5);
		expect(&t, "another sampled address", PR_END_TRUNCATED, head, 3, 0);
	}
	ck_assert_uint_eq(stats(&t).tail_unmatched, 2);
	ck_assert_uint_eq(stats(&t).tail_samples, 0);
	teardown(&t);
}
END_TEST

/*
 * tail_top -> tail_nofp -> tail_fp_c -> tail_fp_b -> tail_fp_a -> leaf:
 * tail_nofp keeps no frame pointer and used rbp as a scratch register,
 * so the rbp tail_fp_c saved points at noise, which the kernel's walk
 * reads as tail_nofp's caller (tail_fp_a's return address here).
 */
START_TEST(the_tail_stops_at_a_function_without_a_frame_pointer)
{
	struct tail t;
	uint64_t *w = t.stack;
	const uint64_t chain[] = { A(tail_leaf) + 1, A(tail_fp_b_ret), A(tail_fp_c_ret),
				   A(tail_nofp_ret), A(tail_fp_a_ret) };
	const uint64_t frames[] = { A(tail_leaf) + 1, A(tail_fp_a_ret) - 1, A(tail_fp_b_ret) - 1,
				    A(tail_fp_c_ret) - 1, A(tail_nofp_ret) - 1, A(tail_top_ret) - 1 };

	setup(&t, 0);
	memset(w, 0, sizeof(t.stack));
	w[0] = A(tail_fp_a_ret);
	w[1] = W(&t, 3);
	w[2] = A(tail_fp_b_ret);
	w[3] = W(&t, 5);
	w[4] = A(tail_fp_c_ret);
	w[5] = W(&t, 20);                  /* tail_nofp's rbp: scratch */
	w[6] = A(tail_nofp_ret);
	/* tail_nofp's frame: 32 bytes of locals (words 7-10), rbx (11), its
	 * return address into tail_top (12); tail_top's (13, 14). */
	w[12] = A(tail_top_ret);
	w[21] = A(tail_fp_a_ret);          /* the noise the walk reads */
	unwind(&t, 1, 4, chain, 5);
	expect(&t, "through tail_nofp", PR_END_TRUNCATED, frames, 5, 2);
	ck_assert_uint_eq(stats(&t).tail_no_fp, 1);
	/* The same stack copied far enough for DWARF: tail_top beyond
	 * tail_nofp, which the chain never had. */
	unwind(&t, 1, WORDS, chain, 5);
	expect(&t, "through tail_nofp, all copied", PR_END_OUTERMOST, frames, 6, 0);
	teardown(&t);
}
END_TEST

/* JIT code (anonymous executable memory) is taken to keep its frame
 * pointer, as V8's and CPython's trampolines do; the kernel's depth limit
 * ends a tail as it ends a chain. */
START_TEST(jit_frames_and_the_depth_limit)
{
	struct tail t;
	uint64_t jit;
	uint64_t chain[6];
	uint64_t frames[6];

	setup(&t, 0);
	jit = (uintptr_t)t.jit + 64;
	all_fp(&t);
	chain[0] = A(tail_leaf) + 1;
	chain[1] = A(tail_fp_b_ret);
	chain[2] = jit;
	chain[3] = A(tail_fp_c_ret);
	chain[4] = A(tail_top_ret);
	chain[5] = 0;
	frames[0] = A(tail_leaf) + 1;
	frames[1] = A(tail_fp_a_ret) - 1;
	frames[2] = A(tail_fp_b_ret) - 1;
	frames[3] = jit - 1;
	frames[4] = A(tail_fp_c_ret) - 1;
	frames[5] = A(tail_top_ret) - 1;
	unwind(&t, 1, 4, chain, 6);
	expect(&t, "through JIT code", PR_END_OUTERMOST, frames, 6, 3);
	teardown(&t);
	/* A chain that filled the kernel's limit (4 entries here). */
	setup(&t, 4);
	all_fp(&t);
	unwind(&t, 1, 4, (uint64_t[]){ A(tail_leaf) + 1, A(tail_fp_b_ret), A(tail_fp_c_ret),
				       A(tail_top_ret) }, 4);
	ck_assert_int_eq(t.st.end, PR_END_OUTERMOST);
	unwind(&t, 1, 4, (uint64_t[]){ A(tail_leaf) + 1, A(tail_fp_b_ret), A(tail_fp_c_ret),
				       A(tail_fp_c_ret) }, 4);
	ck_assert_int_eq(t.st.end, PR_END_DEPTH);
	ck_assert_int_eq(t.st.error, 4);
	ck_assert_uint_eq(t.st.nr, 5);
	teardown(&t);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("chain-tail");
	TCase *tc = tcase_create("tail");

	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, the_chain_continues_a_cut_stack_where_it_agrees_with_dwarf);
	tcase_add_test(tc, a_chain_that_contradicts_the_copy_is_not_followed);
	tcase_add_test(tc, the_tail_stops_at_a_function_without_a_frame_pointer);
	tcase_add_test(tc, jit_frames_and_the_depth_limit);
	suite_add_tcase(s, tc);
	return run_suite(s);
}
