/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Call-frame information at its edges (cfi-cases.S): rows that begin at a
 * return address, remembered states, opcodes and augmentations libunwind
 * 1.6 reads its own way, an FDE that runs past its function, a call that
 * does not return, and mappings a capture may describe oddly.  Stacks are
 * built by hand over the described functions and unwound twice, through
 * the compiled rules and through libunwind alone: the two must agree, and
 * where DWARF says what the frames are, they must be those.
 */
#include <check.h>
#include <linux/perf_event.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "checkmain.h"
#include "perfreader.h"
#include "prunwind.h"
#include "self-model.h"

#define STACK_WORDS 64

extern char cfi_leaf[], cfi_top[], cfi_top_ret[], cfi_rowat[], cfi_rowat_ret[];
extern char cfi_restore_at[], cfi_valoff_at[], cfi_expr_at[], cfi_noreturn[];
extern char cfi_entry[], cfi_rbpundef_at[], cfi_past_at[], cfi_after[];
extern char cfi_augb_at[], cfi_auglong_at[];
extern char cfi_plt[], cfi_plt_early[], cfi_plt_late[], cfi_pltoff_at[];
extern char cfi_nocfi[], cfi_fp_ret[], cfi_framed_ret[];
extern char cfi_epi_mov[], cfi_epi_ret[], cfi_epi_tail_at[], cfi_epi_ind_at[];
extern char cfi_epi_clobber_at[], cfi_epi_clobber_ebx_at[], cfi_epi_stack_at[];
extern char cfi_thunk_at[], cfi_tops[];

#define A(sym) ((uint64_t)(uintptr_t)(sym))

struct both {
	struct pr_model *model;
	struct pr_unwinder *fast, *slow;
	uint64_t stack[STACK_WORDS];
	uint64_t regs[PR_REG_MAX];   /* dense, PR_REGS_DWARF order */
	uint64_t bp;                 /* the sample's rbp; 0: 0x1234 */
	struct pr_record rec;
	struct pr_stack a, b;        /* compiled rules, libunwind */
	uint32_t pid;
};

static void unwinders(struct both *t)
{
	PR_OPTS(pr_unwinder_opts, fo, .live = true);
	PR_OPTS(pr_unwinder_opts, so, .live = true, .no_rule_cache = true);

	pr_unwinder_free(t->fast);
	pr_unwinder_free(t->slow);
	t->fast = pr_unwinder_new(t->model, &fo);
	t->slow = pr_unwinder_new(t->model, &so);
	ck_assert_ptr_nonnull(t->fast);
	ck_assert_ptr_nonnull(t->slow);
}

/* This process's mappings, as a capture would have them. */
static void setup(struct both *t)
{
	memset(t, 0, sizeof(*t));
	t->pid = (uint32_t)getpid();
	t->model = self_model();
	unwinders(t);
}

static void teardown(struct both *t)
{
	pr_unwinder_free(t->fast);
	pr_unwinder_free(t->slow);
	pr_model_free(t->model);
}

/* t->rec: a sample at `ip` over t->stack (rsp at its first word). */
static void sample(struct both *t, uint64_t ip)
{
	uint64_t regs[PR_REG_MAX] = { 0 };
	size_t n = 0;

	regs[PR_REG_IP] = ip;
	regs[PR_REG_SP] = (uintptr_t)t->stack;
	regs[PR_REG_BP] = t->bp ? t->bp : 0x1234;
	for (int r = 0; r < PR_REG_MAX; r++)
		if (PR_REGS_DWARF >> r & 1)
			t->regs[n++] = regs[r];
	memset(&t->rec, 0, sizeof(t->rec));
	t->rec.type = PR_RECORD_SAMPLE;
	t->rec.pid = t->rec.tid = t->pid;
	t->rec.u.sample.ip = ip;
	t->rec.u.sample.regs_abi = PERF_SAMPLE_REGS_ABI_64;
	t->rec.u.sample.regs_mask = PR_REGS_DWARF;
	t->rec.u.sample.regs = t->regs;
	t->rec.u.sample.stack_addr = (uintptr_t)t->stack;
	t->rec.u.sample.stack = (const uint8_t *)t->stack;
	t->rec.u.sample.stack_size = t->rec.u.sample.stack_dyn_size = sizeof(t->stack);
}

/* Unwind a sample at `ip` over t->stack both ways, and require the same
 * frames and end. */
static void unwind(struct both *t, const char *what, uint64_t ip)
{
	sample(t, ip);
	ck_assert_int_eq(pr_unwinder_unwind(t->fast, &t->rec, &t->a), 0);
	ck_assert_int_eq(pr_unwinder_unwind(t->slow, &t->rec, &t->b), 0);
	ck_assert_msg(t->a.nr == t->b.nr && t->a.end == t->b.end,
		      "%s: %zu frames (%s) from compiled rules, %zu (%s) from libunwind", what,
		      t->a.nr, pr_stack_end_name(t->a.end), t->b.nr, pr_stack_end_name(t->b.end));
	for (size_t i = 0; i < t->a.nr; i++)
		ck_assert_msg(t->a.frames[i].ip == t->b.frames[i].ip,
			      "%s: frame %zu at 0x%llx from compiled rules, 0x%llx from libunwind",
			      what, i, (unsigned long long)t->a.frames[i].ip,
			      (unsigned long long)t->b.frames[i].ip);
}

/* The frames the unwind gave, exactly. */
static void expect(const struct both *t, const char *what, enum pr_stack_end end,
		   size_t nr, const uint64_t *ips)
{
	ck_assert_msg(t->a.nr == nr && t->a.end == end, "%s: %zu frames (%s), expected %zu (%s)",
		      what, t->a.nr, pr_stack_end_name(t->a.end), nr, pr_stack_end_name(end));
	for (size_t i = 0; i < nr; i++)
		ck_assert_msg(t->a.frames[i].ip == ips[i], "%s: frame %zu at 0x%llx, expected 0x%llx",
			      what, i, (unsigned long long)t->a.frames[i].ip,
			      (unsigned long long)ips[i]);
}

/* A leaf at `at` under the outermost caller (cfi_top), whose return
 * address is word `ra_word` of the stack: two frames, both ways. */
static void leaf_under_top(struct both *t, const char *what, const char *at, int ra_word)
{
	memset(t->stack, 0, sizeof(t->stack));
	t->stack[ra_word] = A(cfi_top_ret);
	unwind(t, what, A(at));
	expect(t, what, PR_END_OUTERMOST, 2, (uint64_t[]){ A(at), A(cfi_top_ret) - 1 });
}

static uint64_t fast_samples(const struct both *t)
{
	struct pr_unwind_stats st = { .sz = sizeof(st) };

	ck_assert_int_eq(pr_unwinder_stats(t->fast, &st), 0);
	return st.fast_samples;
}

START_TEST(rows_are_looked_up_where_dwarf_says)
{
	struct both t;

	setup(&t);
	/* The outermost caller: its return address is undefined. */
	t.stack[0] = A(cfi_top_ret);
	unwind(&t, "through cfi_top", A(cfi_leaf));
	expect(&t, "through cfi_top", PR_END_OUTERMOST, 2,
	       (uint64_t[]){ A(cfi_leaf), A(cfi_top_ret) - 1 });
	/* A row beginning at the return address is not the caller's: the
	 * CFA is rsp + 16 there, not + 32. */
	memset(t.stack, 0, sizeof(t.stack));
	t.stack[0] = A(cfi_rowat_ret);
	t.stack[2] = A(cfi_top_ret);
	unwind(&t, "row at the return address", A(cfi_leaf));
	expect(&t, "row at the return address", PR_END_OUTERMOST, 3,
	       (uint64_t[]){ A(cfi_leaf), A(cfi_rowat_ret) - 1, A(cfi_top_ret) - 1 });
	/* A leaf right at DW_CFA_restore_state: the remembered row. */
	leaf_under_top(&t, "remembered state", cfi_restore_at, 1);
	/* rbp undefined ends the chain, as the x86-64 ABI has it. */
	memset(t.stack, 0, sizeof(t.stack));
	t.stack[0] = A(cfi_top_ret);
	unwind(&t, "rbp undefined", A(cfi_rbpundef_at));
	expect(&t, "rbp undefined", PR_END_OUTERMOST, 1, (uint64_t[]){ A(cfi_rbpundef_at) });
	ck_assert_uint_eq(fast_samples(&t), 4);
	teardown(&t);
}
END_TEST

/* A return address that is also the next function's first instruction:
 * the caller's rules (at the address minus one) or the function's own (a
 * leaf there), whatever was unwound before. */
START_TEST(a_call_that_does_not_return_is_not_confused_with_the_next_function)
{
	struct both t;
	const uint64_t entry[] = { A(cfi_entry), A(cfi_top_ret) - 1 };
	const uint64_t caller[] = { A(cfi_leaf), A(cfi_entry) - 1, A(cfi_top_ret) - 1 };

	setup(&t);
	for (int round = 0; round < 2; round++) {
		memset(t.stack, 0, sizeof(t.stack));
		t.stack[0] = A(cfi_top_ret);
		unwind(&t, "a leaf at the entry", A(cfi_entry));
		expect(&t, "a leaf at the entry", PR_END_OUTERMOST, 2, entry);
		memset(t.stack, 0, sizeof(t.stack));
		t.stack[0] = A(cfi_entry);
		t.stack[2] = A(cfi_top_ret);
		unwind(&t, "a caller whose call does not return", A(cfi_leaf));
		expect(&t, "a caller whose call does not return", PR_END_OUTERMOST, 3, caller);
		/* And in the other order, on fresh unwinders. */
		unwinders(&t);
		unwind(&t, "a caller whose call does not return, first", A(cfi_leaf));
		expect(&t, "a caller whose call does not return, first", PR_END_OUTERMOST, 3,
		       caller);
	}
	teardown(&t);
}
END_TEST

/* Opcodes and augmentations libunwind 1.6 reads its own way: the compiled
 * rules leave those rows to it, and the two agree. */
START_TEST(what_libunwind_reads_its_own_way_is_left_to_it)
{
	static const struct {
		const char *what;
		const char *at;
		int ra_word;
	} cases[] = {
		{ "DW_CFA_val_offset", cfi_valoff_at, 1 },
		{ "DW_CFA_expression, unreadable", cfi_expr_at, 1 },
		{ "a CIE with 'B' before 'R'", cfi_augb_at, 1 },
		{ "augmentation data longer than read", cfi_auglong_at, 1 },
		{ "an offset after the PLT's expression", cfi_pltoff_at, 0 },
	};
	struct both t;

	setup(&t);
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		memset(t.stack, 0, sizeof(t.stack));
		t.stack[cases[i].ra_word] = A(cfi_top_ret);
		t.stack[0] = A(cfi_top_ret);
		unwind(&t, cases[i].what, A(cases[i].at));
	}
	ck_assert_uint_eq(fast_samples(&t), 0);
	teardown(&t);
}
END_TEST

/* A PLT entry's CFA, an expression of the address, is followed by the
 * compiled rules (where samples land all the time: memcpy@plt), and
 * depends on the byte of the entry: before its push and after it. */
START_TEST(a_plt_entry_is_unwound_from_the_compiled_rules)
{
	struct both t;

	ck_assert_uint_eq((A(cfi_plt_early) - A(cfi_plt)) % 16, 4);
	ck_assert_uint_eq((A(cfi_plt_late) - A(cfi_plt)) % 16, 12);
	setup(&t);
	for (int round = 0; round < 2; round++) {
		leaf_under_top(&t, "a PLT entry before its push", cfi_plt_early, 0);
		/* The return address above the pushed index. */
		leaf_under_top(&t, "a PLT entry after its push", cfi_plt_late, 1);
	}
	ck_assert_uint_eq(fast_samples(&t), 4);
	teardown(&t);
}
END_TEST

/* An FDE whose last advance runs past its function: its row ends with
 * the function, and the next function keeps its own. */
START_TEST(a_row_ends_with_its_fde)
{
	struct both t;

	setup(&t);
	t.stack[1] = A(cfi_top_ret);
	unwind(&t, "in the FDE that runs past", A(cfi_past_at));
	expect(&t, "in the FDE that runs past", PR_END_OUTERMOST, 2,
	       (uint64_t[]){ A(cfi_past_at), A(cfi_top_ret) - 1 });
	memset(t.stack, 0, sizeof(t.stack));
	t.stack[0] = A(cfi_top_ret);
	unwind(&t, "in the next function", A(cfi_after));
	expect(&t, "in the next function", PR_END_OUTERMOST, 2,
	       (uint64_t[]){ A(cfi_after), A(cfi_top_ret) - 1 });
	teardown(&t);
}
END_TEST

/*
 * Code without CFI, sampled where rbp is not its stack pointer (at its
 * first instruction, its frame pointer its caller's), is stepped by the
 * frame pointer: the frame whose frame pointer rbp is (cfi_fp) is
 * skipped, as every frame-pointer walk skips it, and its caller (which
 * counts its CFA from rsp) is unwound from rbp + 16, its stack pointer,
 * to the outermost frame.  From the sample's rsp + 16 (libunwind 1.6's
 * guess), that caller read its return address from cfi_fp's saved rbp.
 * In a file, and copied to anonymous executable memory (JIT code).
 */
static void nocfi_under_fp(struct both *t, const char *what, uint64_t code)
{
	memset(t->stack, 0, sizeof(t->stack));
	t->stack[0] = A(cfi_fp_ret);
	/* cfi_fp's 32 bytes, its caller's rbp saved (a stack address, as
	 * a frame pointer is), its return address */
	for (int w = 1; w <= 4; w++)
		t->stack[w] = A(&t->stack[w + 20]);
	t->stack[5] = A(&t->stack[40]);
	t->stack[6] = A(cfi_framed_ret);
	t->stack[10] = A(cfi_top_ret);
	t->bp = A(&t->stack[5]);
	unwind(t, what, code);
	expect(t, what, PR_END_OUTERMOST, 3,
	       (uint64_t[]){ code, A(cfi_framed_ret) - 1, A(cfi_top_ret) - 1 });
	ck_assert(t->a.frames[1].flags & PR_FRAME_FP);
	ck_assert_uint_eq(t->a.frames[2].flags & PR_FRAME_FP, 0);
	/* And after its sub $8,%rsp: one word down. */
	memmove(t->stack + 1, t->stack, sizeof(t->stack) - sizeof(t->stack[0]));
	t->stack[0] = 0;
	t->bp = A(&t->stack[6]);
	unwind(t, what, code + 4);
	expect(t, what, PR_END_OUTERMOST, 3,
	       (uint64_t[]){ code + 4, A(cfi_framed_ret) - 1, A(cfi_top_ret) - 1 });
}

START_TEST(code_without_cfi_steps_to_the_stack_pointer_its_frame_pointer_gives)
{
	unsigned char *jit = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS,
				  -1, 0);
	struct both t;

	ck_assert_ptr_ne(jit, MAP_FAILED);
	memcpy(jit, cfi_nocfi, 16);
	ck_assert_int_eq(mprotect(jit, 4096, PROT_READ | PROT_EXEC), 0);
	setup(&t);
	for (int round = 0; round < 2; round++) {
		nocfi_under_fp(&t, "code without CFI", A(cfi_nocfi));
		nocfi_under_fp(&t, "JIT code", A(jit));
	}
	ck_assert_uint_eq(fast_samples(&t), 0);
	teardown(&t);
	munmap(jit, 4096);
}
END_TEST

/* The same address with bit 63 set is another address: no mapping. */
/*
 * A leaf at `at` in an epilogue, `pending` words still to pop above its
 * stack pointer, called from cfi_fp (rbp its frame pointer, restored
 * already), called from cfi_framed, called from the outermost caller.
 */
static void epilogue_under_fp(struct both *t, const char *what, const char *at, int pending)
{
	uint64_t *s = t->stack + pending;

	memset(t->stack, 0, sizeof(t->stack));
	for (int w = 0; w < pending; w++)
		t->stack[w] = 0x5a5a0000 + (uint64_t)w;
	s[0] = A(cfi_fp_ret);
	for (int w = 1; w <= 4; w++)
		s[w] = A(&s[w + 20]);
	s[5] = A(&s[40]);                /* cfi_framed's rbp: anything */
	s[6] = A(cfi_framed_ret);
	s[10] = A(cfi_top_ret);
	t->bp = A(&s[5]);
	unwind(t, what, A(at));
}

START_TEST(a_leaf_in_its_epilogue_is_stepped_by_its_code)
{
	const uint64_t callers[] = { A(cfi_fp_ret) - 1, A(cfi_framed_ret) - 1,
				     A(cfi_top_ret) - 1 };
	struct both t;
	struct pr_unwind_stats st = { .sz = sizeof(st) };
	struct {
		const char *what, *at;
		int pending;
	} cases[] = {
		{ "past pop %rbp, r12 to pop, through lea, a store, test, movzbl, vzeroupper",
		  cfi_epi_mov, 1 },
		{ "at its ret", cfi_epi_ret, 0 },
		{ "past its pops, a jump, then a tail call", cfi_epi_tail_at, 0 },
		{ "past its pop, an indirect tail call", cfi_epi_ind_at, 0 },
	};

	setup(&t);
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		uint64_t ips[4] = { A(cases[i].at), callers[0], callers[1], callers[2] };

		epilogue_under_fp(&t, cases[i].what, cases[i].at, cases[i].pending);
		expect(&t, cases[i].what, PR_END_OUTERMOST, 4, ips);
	}
	/* Each stepped by its code once in each unwinder: by the compiled
	 * rules themselves, and by libunwind after its CFI ended the stack
	 * in an error. */
	ck_assert_uint_eq(fast_samples(&t), 4);
	ck_assert_int_eq(pr_unwinder_stats(t.fast, &st), 0);
	ck_assert_uint_eq(st.leaf_exits, 4);
	ck_assert_int_eq(pr_unwinder_stats(t.slow, &st), 0);
	ck_assert_uint_eq(st.leaf_exits, 4);
	/* Code that writes rbx after its pop, or the stack words the step
	 * reads, is no epilogue this knows: the stack ends where the CFI
	 * could not go on, as it did, guessing nothing. */
	epilogue_under_fp(&t, "bh written past the pops", cfi_epi_clobber_at, 1);
	expect(&t, "bh written past the pops", PR_END_ERROR, 2,
	       (uint64_t[]){ A(cfi_epi_clobber_at), callers[0] });
	epilogue_under_fp(&t, "ebx written past the pops", cfi_epi_clobber_ebx_at, 1);
	expect(&t, "ebx written past the pops", PR_END_ERROR, 2,
	       (uint64_t[]){ A(cfi_epi_clobber_ebx_at), callers[0] });
	epilogue_under_fp(&t, "a store over the return address", cfi_epi_stack_at, 0);
	expect(&t, "a store over the return address", PR_END_ERROR, 2,
	       (uint64_t[]){ A(cfi_epi_stack_at), callers[0] });
	/* A ret whose CFI has the return address a word up, under a frame
	 * whose rbp is lost (the stack ends in an error there): the ret is
	 * not taken for the way out, which would make the word at the stack
	 * pointer a caller. */
	memset(t.stack, 0, sizeof(t.stack));
	t.stack[0] = A(cfi_top_ret);
	t.stack[1] = A(cfi_fp_ret);
	t.bp = 0;
	unwind(&t, "a retpoline's ret", A(cfi_thunk_at));
	expect(&t, "a retpoline's ret", PR_END_ERROR, 2,
	       (uint64_t[]){ A(cfi_thunk_at), callers[0] });
	teardown(&t);
}
END_TEST

START_TEST(frames_are_cached_by_their_whole_address)
{
	struct both t;

	setup(&t);
	t.stack[0] = A(cfi_top_ret);
	unwind(&t, "once", A(cfi_leaf));
	expect(&t, "once", PR_END_OUTERMOST, 2, (uint64_t[]){ A(cfi_leaf), A(cfi_top_ret) - 1 });
	t.stack[0] = A(cfi_top_ret) | UINT64_C(1) << 63;
	unwind(&t, "bit 63 set", A(cfi_leaf));
	ck_assert_uint_eq(t.a.nr, 2);
	ck_assert_ptr_null(t.a.frames[1].dso);
	teardown(&t);
}
END_TEST

static uint64_t cache_misses(const struct both *t)
{
	struct pr_unwind_stats st = { .sz = sizeof(st) };

	ck_assert_int_eq(pr_unwinder_stats(t->fast, &st), 0);
	return st.frame_cache_misses;
}

/* An anonymous mapping of `prot` at `addr` in t's process, applied. */
static void map_anon(struct both *t, uint64_t addr, uint64_t len, uint32_t prot)
{
	struct pr_record r;

	memset(&r, 0, sizeof(r));
	r.type = PR_RECORD_MMAP2;
	r.pid = r.tid = t->pid;
	r.u.mmap = (struct pr_mmap){ .addr = addr, .len = len, .filename = "//anon",
				     .is_mmap2 = true, .prot = prot };
	ck_assert_int_eq(pr_model_apply(t->model, &r), 0);
}

/* A process that maps data all the time (a compiler's arenas, a JIT's
 * heap: perf records those mappings too) keeps its frames cached, and
 * they stay placed where they are; code mapped over a frame's mapping
 * is seen at once. */
START_TEST(mappings_of_data_leave_the_frame_cache_as_it_was)
{
	uint64_t ips[] = { A(cfi_leaf), A(cfi_top_ret) - 1 }, misses, low = 0x10000;
	struct pr_frame before[2];
	struct both t;

	setup(&t);
	t.stack[0] = A(cfi_top_ret);
	unwind(&t, "first", A(cfi_leaf));
	expect(&t, "first", PR_END_OUTERMOST, 2, ips);
	memcpy(before, t.a.frames, sizeof(before));
	misses = cache_misses(&t);
	ck_assert_uint_eq(misses, 2);
	/* Below every mapping, so that the process's array of mappings
	 * moves: the cache holds copies of the frames' mappings. */
	for (int i = 0; i < 64; i++) {
		map_anon(&t, low + (uint64_t)i * 0x2000, 0x1000, PROT_READ | PROT_WRITE);
		unwind(&t, "after a data mapping", A(cfi_leaf));
		expect(&t, "after a data mapping", PR_END_OUTERMOST, 2, ips);
		for (int f = 0; f < 2; f++) {
			ck_assert_ptr_eq(t.a.frames[f].dso, before[f].dso);
			ck_assert_uint_eq(t.a.frames[f].dso_ip, before[f].dso_ip);
			ck_assert_uint_eq(t.a.frames[f].map_start, before[f].map_start);
			ck_assert_uint_eq(t.a.frames[f].map_pgoff, before[f].map_pgoff);
		}
	}
	ck_assert_uint_eq(cache_misses(&t), misses);
	/* Code mapped anywhere is looked up anew.  (Below every mapping
	 * too: valgrind loads this program at 0x108000.) */
	map_anon(&t, low + 0x90000, 0x1000, PROT_READ | PROT_EXEC);
	unwind(&t, "after a code mapping", A(cfi_leaf));
	expect(&t, "after a code mapping", PR_END_OUTERMOST, 2, ips);
	ck_assert_uint_eq(cache_misses(&t), misses + 2);
	/* Data mapped over the leaf's code: the leaf is in no file now. */
	misses = cache_misses(&t);
	map_anon(&t, A(cfi_leaf) & ~UINT64_C(0xfff), 0x1000, PROT_READ | PROT_WRITE);
	unwind(&t, "data over the code", A(cfi_leaf));
	ck_assert_uint_gt(cache_misses(&t), misses);
	ck_assert_ptr_ne(t.a.frames[0].dso, before[0].dso);
	teardown(&t);
}
END_TEST

/* Processes whose mappings of this program's code differ, one after
 * another, as an agent sees programs come and go: more of them than the
 * frame cache keeps the mappings of (UW_FRAME_MAPS_MAX, 16384, in
 * unwind-int.h).  Each process's frames are placed in its own mapping,
 * and those of one that stays (this one) in its, before the cache is
 * emptied for them and after. */
/* This program's mapping of its code, as /proc/self/maps has it. */
struct code_map {
	unsigned long long lo, hi, off, ino;
	unsigned maj, min;
	char path[4096];
};

static void code_map(struct code_map *c)
{
	char line[4096];
	FILE *f = fopen("/proc/self/maps", "r");

	ck_assert_ptr_nonnull(f);
	c->path[0] = '\0';
	while (fgets(line, sizeof(line), f)) {
		int at = 0;

		if (sscanf(line, "%llx-%llx %*s %llx %x:%x %llu %n", &c->lo, &c->hi, &c->off,
			   &c->maj, &c->min, &c->ino, &at) >= 6 && c->lo <= A(cfi_leaf) &&
		    A(cfi_leaf) < c->hi && at) {
			line[strcspn(line, "\n")] = '\0';
			snprintf(c->path, sizeof(c->path), "%s", line + at);
			break;
		}
	}
	fclose(f);
	ck_assert_msg(c->path[0] == '/', "this program's code is in no file of /proc/self/maps");
}

/* Process `pid` of t's model given the code mapping `c`, `extra` bytes
 * longer (so that each process's mappings differ). */
static void map_code_as(struct both *t, const struct code_map *c, uint32_t pid, uint64_t extra)
{
	struct pr_record r;

	memset(&r, 0, sizeof(r));
	r.type = PR_RECORD_MMAP2;
	r.pid = r.tid = pid;
	r.u.mmap = (struct pr_mmap){ .addr = c->lo, .len = c->hi + extra - c->lo,
				     .pgoff = c->off, .filename = c->path, .is_mmap2 = true,
				     .maj = c->maj, .min = c->min, .ino = c->ino,
				     .prot = PROT_READ | PROT_EXEC };
	ck_assert_int_eq(pr_model_apply(t->model, &r), 0);
}

#define CHURNED_PROCESSES 20000
START_TEST(processes_coming_and_going_keep_the_frame_cache_bounded)
{
	struct pr_unwind_stats st = { .sz = sizeof(st) };
	struct code_map c;
	uint32_t self;
	struct both t;

	code_map(&c);
	setup(&t);
	self = t.pid;
	t.stack[0] = A(cfi_top_ret);
	for (uint32_t i = 0; i < CHURNED_PROCESSES; i++) {
		unsigned long long lo = c.lo, hi = c.hi, end = hi + (uint64_t)i * 4096;

		map_code_as(&t, &c, 0x400000 + i, (uint64_t)i * 4096);
		/* The compiled rules alone (libunwind's way is the other
		 * tests'): 40 000 samples, under valgrind too. */
		t.pid = 0x400000 + i;
		sample(&t, A(cfi_leaf));
		ck_assert_int_eq(pr_unwinder_unwind(t.fast, &t.rec, &t.a), 0);
		expect(&t, "a process of its own", PR_END_OUTERMOST, 2,
		       (uint64_t[]){ A(cfi_leaf), A(cfi_top_ret) - 1 });
		for (int fr = 0; fr < 2; fr++)
			ck_assert_msg(t.a.frames[fr].map_end == end && t.a.frames[fr].map_start == lo,
				      "process %u: frame %d placed in 0x%llx-0x%llx, not in its "
				      "mapping 0x%llx-0x%llx", i, fr,
				      (unsigned long long)t.a.frames[fr].map_start,
				      (unsigned long long)t.a.frames[fr].map_end, lo,
				      (unsigned long long)end);
		t.pid = self;
		sample(&t, A(cfi_leaf));
		ck_assert_int_eq(pr_unwinder_unwind(t.fast, &t.rec, &t.a), 0);
		ck_assert_msg(t.a.nr == 2 && t.a.frames[0].map_end == hi &&
			      t.a.frames[1].map_end == hi, "after process %u, this one's frames "
			      "are placed in a mapping ending at 0x%llx, not 0x%llx", i,
			      (unsigned long long)t.a.frames[0].map_end, hi);
	}
	ck_assert_int_eq(pr_unwinder_stats(t.fast, &st), 0);
	ck_assert_uint_ge(st.frame_cache_resets, 1);
	ck_assert_uint_eq(st.ends[PR_END_OUTERMOST], 2 * CHURNED_PROCESSES);
	teardown(&t);
}
END_TEST

/* The frame cache grows (from 2^12 entries, unwind-int.h) after missing
 * twice as often as it has entries, and keeps what it held: the frames
 * of the processes unwound last before it grew are found in it after. */
#define BEFORE_GROWING 4096
#define LOOKED_AGAIN 100
START_TEST(the_frame_cache_keeps_its_frames_when_it_grows)
{
	uint64_t misses;
	struct code_map c;
	struct both t;

	code_map(&c);
	setup(&t);
	t.stack[0] = A(cfi_top_ret);
	/* Two frames each, each a miss: 8 192 misses, then one more. */
	for (uint32_t i = 0; i <= BEFORE_GROWING; i++) {
		map_code_as(&t, &c, 0x400000 + i, (uint64_t)i * 4096);
		t.pid = 0x400000 + i;
		sample(&t, A(cfi_leaf));
		ck_assert_int_eq(pr_unwinder_unwind(t.fast, &t.rec, &t.a), 0);
	}
	misses = cache_misses(&t);
	ck_assert_uint_eq(misses, 2 * (BEFORE_GROWING + 1));
	for (uint32_t i = BEFORE_GROWING - LOOKED_AGAIN; i < BEFORE_GROWING; i++) {
		t.pid = 0x400000 + i;
		sample(&t, A(cfi_leaf));
		ck_assert_int_eq(pr_unwinder_unwind(t.fast, &t.rec, &t.a), 0);
		expect(&t, "again", PR_END_OUTERMOST, 2,
		       (uint64_t[]){ A(cfi_leaf), A(cfi_top_ret) - 1 });
	}
	/* Frames that shared a slot of the smaller cache with a later one
	 * were gone before it grew: 11 and 16 of the 200 in two runs (where
	 * this program is loaded moves the slots), all 200 when the grown
	 * cache started empty. */
	ck_assert_msg(cache_misses(&t) - misses <= LOOKED_AGAIN / 2,
		      "%llu of the %d frames looked up again missed",
		      (unsigned long long)(cache_misses(&t) - misses), 2 * LOOKED_AGAIN);
	teardown(&t);
}
END_TEST

/* A model of executable mappings only (as from PERF_RECORD_MMAP, or a
 * capture without data mappings): .eh_frame_hdr is in none of them, and
 * both ways still read the file's unwind information. */
START_TEST(unwind_information_need_not_be_mapped)
{
	FILE *f = fopen("/proc/self/maps", "r");
	char line[4096];
	struct both t;

	memset(&t, 0, sizeof(t));
	t.pid = (uint32_t)getpid();
	t.model = pr_model_new(NULL);
	ck_assert_ptr_nonnull(f);
	while (fgets(line, sizeof(line), f)) {
		unsigned long long lo, hi, off, ino;
		unsigned maj, min;
		char perms[8];
		int at = 0;
		struct pr_record r;

		if (sscanf(line, "%llx-%llx %7s %llx %x:%x %llu %n", &lo, &hi, perms, &off, &maj,
			   &min, &ino, &at) < 7 || perms[2] != 'x' || line[at] != '/')
			continue;
		line[strcspn(line, "\n")] = '\0';
		memset(&r, 0, sizeof(r));
		r.type = PR_RECORD_MMAP2;
		r.pid = r.tid = t.pid;
		r.u.mmap = (struct pr_mmap){ .addr = lo, .len = hi - lo, .pgoff = off,
					     .filename = line + at, .is_mmap2 = true,
					     .maj = maj, .min = min, .ino = ino,
					     .prot = PROT_READ | PROT_EXEC };
		ck_assert_int_eq(pr_model_apply(t.model, &r), 0);
	}
	fclose(f);
	unwinders(&t);
	t.stack[0] = A(cfi_rowat_ret);
	t.stack[2] = A(cfi_top_ret);
	unwind(&t, "executable mappings only", A(cfi_leaf));
	expect(&t, "executable mappings only", PR_END_OUTERMOST, 3,
	       (uint64_t[]){ A(cfi_leaf), A(cfi_rowat_ret) - 1, A(cfi_top_ret) - 1 });
	teardown(&t);
}
END_TEST

/* A mapping whose file offset is absurd: reads stay inside the file. */
START_TEST(absurd_mapping_offsets_are_harmless)
{
	static const uint64_t offsets[] = { UINT64_C(0) - 0x1000, UINT64_C(0) - 8,
					    UINT64_C(1) << 63, 0x7ffffffff000 };
	struct both t;

	setup(&t);
	for (size_t i = 0; i < sizeof(offsets) / sizeof(offsets[0]); i++) {
		struct pr_record r;

		memset(&r, 0, sizeof(r));
		r.type = PR_RECORD_MMAP2;
		r.pid = r.tid = t.pid;
		r.u.mmap = (struct pr_mmap){ .addr = 0x10000000, .len = 0x10000,
					     .pgoff = offsets[i], .filename = "/proc/self/exe",
					     .is_mmap2 = true, .prot = PROT_READ | PROT_EXEC };
		ck_assert_int_eq(pr_model_apply(t.model, &r), 0);
		unwinders(&t);
		for (int w = 0; w < STACK_WORDS; w++)
			t.stack[w] = 0x10000000 + (uint64_t)w * 0x400 + 0x10;
		unwind(&t, "an absurd offset", 0x10000000 + 0x1000 + (uint64_t)i * 0x40);
		ck_assert_uint_le(t.a.nr, PR_UNWIND_DEFAULT_DEPTH);
	}
	teardown(&t);
}
END_TEST

/* [*lo, *hi): the C library's code as this process maps it. */
static void libc_code(uint64_t *lo, uint64_t *hi)
{
	FILE *maps = fopen("/proc/self/maps", "r");
	char line[4096];

	ck_assert_ptr_nonnull(maps);
	*lo = *hi = 0;
	while (fgets(line, sizeof(line), maps)) {
		unsigned long long a, b;
		char perms[8];

		if (sscanf(line, "%llx-%llx %7s", &a, &b, perms) == 3 && perms[2] == 'x' &&
		    strstr(line, "/libc.so")) {
			*lo = a;
			*hi = b;
		}
	}
	fclose(maps);
	ck_assert_uint_gt(*hi, *lo);
}

/* A file whose rows are compiled by the thousand (a compiler, a C
 * library) has them looked up through a directory of its pages, made
 * again as new rows are merged into its table (rules.c): at 1 200
 * addresses across the C library's code, in two passes (the second's
 * between the first's, their rows mostly in the table by then), the row
 * found is the row libunwind steps by.  Each address is sampled as a
 * leaf over a stack whose every word is a return address of its own into
 * the outermost caller (cfi_tops): the second frame says which word the
 * row's CFA took the return address from. */
START_TEST(rows_looked_up_among_thousands_are_those_libunwind_finds)
{
	enum { ADDRS = 600 };
	uint64_t lo, hi, stride, two = 0;
	struct both t;

	libc_code(&lo, &hi);
	stride = (hi - lo) / ADDRS;
	setup(&t);
	for (int w = 0; w < STACK_WORDS; w++)
		t.stack[w] = A(cfi_tops) + 1 + (uint64_t)w;
	for (int pass = 0; pass < 2; pass++) {
		for (uint64_t i = 0; i < ADDRS; i++) {
			uint64_t ip = lo + i * stride + (uint64_t)pass * (stride / 2);

			unwind(&t, "a leaf in the C library", ip);
			two += t.a.nr == 2 && t.a.end == PR_END_OUTERMOST;
		}
	}
	/* Most found their caller, by the compiled rules, each address a
	 * lookup of its own. */
	ck_assert_uint_gt(two, ADDRS);
	ck_assert_uint_gt(fast_samples(&t), ADDRS);
	ck_assert_uint_gt(cache_misses(&t), 2 * ADDRS - 10);
	teardown(&t);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("cfi");
	TCase *tc = tcase_create("edges");

	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, rows_are_looked_up_where_dwarf_says);
	tcase_add_test(tc, a_call_that_does_not_return_is_not_confused_with_the_next_function);
	tcase_add_test(tc, what_libunwind_reads_its_own_way_is_left_to_it);
	tcase_add_test(tc, a_plt_entry_is_unwound_from_the_compiled_rules);
	tcase_add_test(tc, a_row_ends_with_its_fde);
	tcase_add_test(tc, code_without_cfi_steps_to_the_stack_pointer_its_frame_pointer_gives);
	tcase_add_test(tc, a_leaf_in_its_epilogue_is_stepped_by_its_code);
	tcase_add_test(tc, frames_are_cached_by_their_whole_address);
	tcase_add_test(tc, mappings_of_data_leave_the_frame_cache_as_it_was);
	tcase_add_test(tc, processes_coming_and_going_keep_the_frame_cache_bounded);
	tcase_add_test(tc, the_frame_cache_keeps_its_frames_when_it_grows);
	tcase_add_test(tc, unwind_information_need_not_be_mapped);
	tcase_add_test(tc, absurd_mapping_offsets_are_harmless);
	tcase_add_test(tc, rows_looked_up_among_thousands_are_those_libunwind_finds);
	suite_add_tcase(s, tc);
	return run_suite(s);
}
