/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Damaged stacks: unwinding ends cleanly within the depth limit whatever
 * the stack holds, and the compiled rules unwind every cut and every
 * damaged copy of a stack exactly as libunwind alone does.
 */
#include <check.h>
#include <linux/perf_event.h>
#include <string.h>

#include "unwind-fixture.h"

/* Whatever the stack holds, unwinding stops within the depth limit. */
START_TEST(corrupt_snapshots_end_cleanly)
{
	static struct snapshot bad;
	struct replay r;
	struct pr_stack st;
	unsigned seed = 12345;

	ds_unwind_take_snapshot();
	/* Random bytes above a real leaf. */
	bad = snap;
	for (size_t i = 0; i < SNAP_STACK; i++) {
		seed = seed * 1103515245 + 12345;
		bad.stack[i] = (uint8_t)(seed >> 16);
	}
	for (int round = 0; round < 50; round++) {
		bad.regs[PR_REG_BP] = bad.sp + (seed % 4096);
		replay_init(&r, &bad, SNAP_STACK, 0);
		ck_assert_int_eq(pr_unwinder_unwind(r.u, &r.rec, &st), 0);
		ck_assert_uint_le(st.nr, PR_UNWIND_DEFAULT_DEPTH);
		ck_assert_int_lt(st.end, PR_END_MAX);
		replay_free(&r);
		for (size_t i = 0; i < 64; i++) {
			seed = seed * 1103515245 + 12345;
			bad.stack[seed % SNAP_STACK] = (uint8_t)(seed >> 8);
		}
	}
	/* A stack whose every word points at itself. */
	for (size_t i = 0; i + 8 <= SNAP_STACK; i += 8) {
		uint64_t self = bad.sp + i;

		memcpy(bad.stack + i, &self, 8);
	}
	bad.regs[PR_REG_BP] = bad.sp;
	replay_init(&r, &bad, SNAP_STACK, 0);
	ck_assert_int_eq(pr_unwinder_unwind(r.u, &r.rec, &st), 0);
	ck_assert_uint_le(st.nr, PR_UNWIND_DEFAULT_DEPTH);
	ck_assert_int_ne(st.end, PR_END_OUTERMOST);
	replay_free(&r);
	/* No stack at all: the leaf, and a truncated stack. */
	replay_init(&r, &snap, 0, 0);
	ck_assert_int_eq(pr_unwinder_unwind(r.u, &r.rec, &st), 0);
	ck_assert_uint_eq(st.nr, 1);
	ck_assert_int_eq(st.end, PR_END_TRUNCATED);
	/* No user registers. */
	r.rec.u.sample.regs = NULL;
	r.rec.u.sample.regs_abi = PERF_SAMPLE_REGS_ABI_NONE;
	ck_assert_int_eq(pr_unwinder_unwind(r.u, &r.rec, &st), 0);
	ck_assert_uint_eq(st.nr, 0);
	ck_assert_int_eq(st.end, PR_END_NO_USER);
	/* An IP in no mapping. */
	r.rec.u.sample.regs = r.regs;
	r.rec.u.sample.regs_abi = PERF_SAMPLE_REGS_ABI_64;
	r.regs[8] = 0x10;   /* IP, the ninth register of PR_REGS_DWARF */
	ck_assert_int_eq(pr_unwinder_unwind(r.u, &r.rec, &st), 0);
	ck_assert_uint_ge(st.nr, 1);
	ck_assert_ptr_null(st.frames[0].dso);
	ck_assert(st.end == PR_END_NO_MAPPING || st.end == PR_END_TRUNCATED ||
		  st.end == PR_END_ERROR);
	replay_free(&r);
}
END_TEST

START_TEST(compiled_rules_agree_with_libunwind)
{
	struct pr_unwind_stats st = { .sz = sizeof(st) };
	static struct snapshot bad;
	struct pr_unwinder *slow;
	struct replay r;
	unsigned seed = 777;
	uint64_t n = 0;

	ds_unwind_take_snapshot();
	replay_init(&r, &snap, snap.size, 0);
	slow = new_unwinder(r.model, 0, NO_RULE_CACHE);
	/* The whole stack, then cut at every word: every frame's CFA
	 * and saved registers fall just inside or just outside. */
	for (size_t size = snap.size & ~(size_t)7;; size -= 8) {
		r.rec.u.sample.stack_dyn_size = size;
		assert_same(&r, slow);
		n++;
		if (!size)
			break;
	}
	ck_assert_int_eq(pr_unwinder_stats(r.u, &st), 0);
	ck_assert_uint_eq(st.samples, n);
	/* Not a comparison of libunwind with itself: most of these went
	 * through the compiled rules. */
	ck_assert_msg(st.fast_samples * 10 >= st.samples * 9, "%llu of %llu from compiled rules",
		      (unsigned long long)st.fast_samples, (unsigned long long)st.samples);
	/* Damaged stacks, one word at a time: both give up the same way. */
	bad = snap;
	for (int round = 0; round < 400; round++) {
		size_t at;

		seed = seed * 1103515245 + 12345;
		at = (seed >> 4) % (snap.size / 8) * 8;
		memcpy(bad.stack + at, (round & 1) ? &seed : (const void *)&snap.regs[PR_REG_SP],
		       (round & 1) ? sizeof(seed) : 8);
		r.rec.u.sample.stack = bad.stack;
		r.rec.u.sample.stack_dyn_size = snap.size;
		assert_same(&r, slow);
	}
	pr_unwinder_free(slow);
	replay_free(&r);
}
END_TEST

/* A sample without a copy whose call chain has a user part: the chain
 * is its stack, each frame where the unwound one of the same addresses
 * is, marked as the chain's. */
START_TEST(a_sample_without_a_copy_takes_its_user_call_chain)
{
	static uint64_t chain[3 + PR_UNWIND_MAX_DEPTH];
	struct pr_frame dwarf[64];
	struct pr_unwind_stats old = { .sz = 136 }, now = { .sz = sizeof(now) };
	struct replay r;
	struct pr_stack st;
	size_t n, k = 0;

	ds_unwind_take_snapshot();
	replay_init(&r, &snap, snap.size, 0);
	ck_assert_int_eq(pr_unwinder_unwind(r.u, &r.rec, &st), 0);
	ck_assert_int_eq(st.end, PR_END_OUTERMOST);
	n = st.nr < 64 ? st.nr : 64;
	memcpy(dwarf, st.frames, n * sizeof(*dwarf));
	/* A kernel frame, then the user part: the sampled address, then
	 * return addresses. */
	chain[k++] = (uint64_t)PERF_CONTEXT_KERNEL;
	chain[k++] = UINT64_C(0xffffffff81000000);
	chain[k++] = (uint64_t)PERF_CONTEXT_USER;
	for (size_t i = 0; i < n; i++)
		chain[k++] = i ? dwarf[i].ip + 1 : dwarf[i].ip;
	r.rec.u.sample.callchain = chain;
	r.rec.u.sample.nr_callchain = k;
	r.rec.u.sample.regs = NULL;
	r.rec.u.sample.regs_abi = PERF_SAMPLE_REGS_ABI_NONE;
	r.rec.u.sample.stack = NULL;
	r.rec.u.sample.stack_dyn_size = 0;
	ck_assert_int_eq(pr_unwinder_unwind(r.u, &r.rec, &st), 0);
	ck_assert_uint_eq(st.nr_kernel, 1);
	ck_assert_uint_eq(st.nr, 1 + n);
	for (size_t i = 0; i < n; i++) {
		ck_assert_uint_eq(st.frames[1 + i].ip, dwarf[i].ip);
		ck_assert_ptr_eq(st.frames[1 + i].dso, dwarf[i].dso);
		ck_assert_uint_eq(st.frames[1 + i].dso_ip, dwarf[i].dso_ip);
		ck_assert_uint_eq(st.frames[1 + i].flags, PR_FRAME_CHAIN);
	}
	/* The outermost frame the DWARF unwind found is _start or a
	 * thread's start: a chain that ends there is complete. */
	ck_assert_int_eq(st.end, PR_END_OUTERMOST);
	/* Without it, where the chain ended is all that is known. */
	r.rec.u.sample.nr_callchain = k - 1;
	ck_assert_int_eq(pr_unwinder_unwind(r.u, &r.rec, &st), 0);
	ck_assert_int_eq(st.end, PR_END_CHAIN);
	/* 127 entries, the kernel's one among them: its default limit. */
	for (size_t i = k; i < 3 + 126; i++)
		chain[i] = dwarf[1].ip + 1;
	r.rec.u.sample.nr_callchain = 3 + 126;
	ck_assert_int_eq(pr_unwinder_unwind(r.u, &r.rec, &st), 0);
	ck_assert_uint_eq(st.nr, 127);
	ck_assert_int_eq(st.end, PR_END_DEPTH);
	ck_assert_int_eq(st.error, 127);
	/* One fewer: not the limit. */
	r.rec.u.sample.nr_callchain = 3 + 125;
	ck_assert_int_eq(pr_unwinder_unwind(r.u, &r.rec, &st), 0);
	ck_assert_int_eq(st.end, PR_END_CHAIN);
	ck_assert_int_eq(st.error, 0);
	/* The counters; and in 2.0's layout, for a caller built against it
	 * (136 bytes: ends[] without PR_END_CHAIN). */
	ck_assert_int_eq(pr_unwinder_stats(r.u, &now), 0);
	ck_assert_uint_eq(now.chain_samples, 4);
	ck_assert_uint_eq(now.chain_frames, 2 * n - 1 + 126 + 125);
	ck_assert_uint_eq(now.chain_depth, 1);
	ck_assert_uint_eq(now.ends[PR_END_CHAIN], 2);
	ck_assert_int_eq(pr_unwinder_stats(r.u, &old), 0);
	ck_assert_uint_eq(old.sz, 136);
	ck_assert_uint_eq(old.samples, now.samples);
	ck_assert_uint_eq(old.ends[PR_END_NO_USER], now.ends[PR_END_NO_USER]);
	/* 2.0's counters after ends[] sit a place earlier, read through
	 * today's struct: files_opened in ends[PR_END_CHAIN], ...,
	 * joined_frames in joined; nothing past its 136 bytes. */
	ck_assert_uint_ge(now.files_opened, 1);
	ck_assert_uint_ge(now.fast_samples, 1);
	ck_assert_uint_eq(old.ends[PR_END_CHAIN], now.files_opened);
	ck_assert_uint_eq(old.files_opened, now.files_missing);
	ck_assert_uint_eq(old.files_missing, now.fast_samples);
	ck_assert_uint_eq(old.fast_samples, now.joined);
	ck_assert_uint_eq(old.joined, now.joined_frames);
	ck_assert_uint_eq(old.joined_frames, 0);
	ck_assert_uint_eq(old.chain_samples, 0);
	replay_free(&r);
}
END_TEST

void add_damage_tests(TCase *tc)
{
	tcase_add_test(tc, a_sample_without_a_copy_takes_its_user_call_chain);
	tcase_add_test(tc, corrupt_snapshots_end_cleanly);
	tcase_add_test(tc, compiled_rules_agree_with_libunwind);
}
