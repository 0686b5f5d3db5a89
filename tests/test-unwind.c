/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Unwinding without the kernel: this program takes a snapshot of its own
 * registers and stack deep in a known call chain -- through qsort, so libc
 * code and a callback sit in the middle -- and the unwinder must recover
 * exactly that chain.  Built without frame pointers, and in variants that
 * exercise the other ways of finding unwind information (meson.build):
 *
 *   default       PIE (ET_DYN), .eh_frame_hdr
 *   DS_XTEXT      ET_EXEC, with ds_level2 in a second executable segment
 *   debug-frame   -fno-asynchronous-unwind-tables -g: only .debug_frame
 *   debug-frame-zlib, -zstd, zdebug-frame
 *                 that, compressed (SHF_COMPRESSED, or .zdebug_frame)
 *   stripped      that, with .debug_frame in a separate debug file found
 *                 by build-id (DS_DEBUG_DIR: directories separated by
 *                 ':'), or by .gnu_debuglink; the symbolizer must name
 *                 the frames with lines from the same file
 *                 (DS_STRIPPED=1, unless DS_OWN_DEBUG_SECTION=1)
 *   lld           linked by lld: the text segment shares a file page with
 *                 the read-only segment before it
 *
 * Corrupt snapshots must end cleanly within the depth limit.
 *
 * One executable from several files: the snapshots (unwind-snapshot.c)
 * and their replay (unwind-replay.c); here, the chain through qsort and
 * how a stack ends; damaged stacks and the compiled rules checked against
 * libunwind (test-unwind-damage.c); code without CFI, a replaced library,
 * a return address in a register (test-unwind-nocfi.c); signal frames
 * (test-unwind-signal.c).
 */
#include <check.h>
#include <dlfcn.h>
#include <linux/perf_event.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "checkmain.h"
#include "prsym.h"
#include "unwind-fixture.h"

#define N_OURS (sizeof(ours) / sizeof(ours[0]))

START_TEST(a_snapshot_through_qsort_unwinds_to_the_exact_chain)
{
	static const char *const ours[] = {
		"ds_unwind_capture", "ds_unwind_compare", "ds_unwind_level3",
		"ds_unwind_level2", "ds_unwind_level1", "ds_unwind_take_snapshot",
	};
	struct replay r;
	struct pr_stack st;
	size_t k = 0, libc_between = 0;
	bool reached_main = false;

	unwind_taken(ds_unwind_take_snapshot, WHOLE_STACK, 0, &r, &st);
	ck_assert_uint_gt(snap.size, 1024);
	ck_assert_uint_eq(st.nr_kernel, 0);
	/* Our functions in order, with libc's qsort between the callback
	 * and its caller, and nothing else of ours in between. */
	for (size_t i = 0; i < st.nr; i++) {
		const char *name = name_of(&st.frames[i]);

		if (k < N_OURS && !strcmp(name, ours[k])) {
			k++;
			continue;
		}
		if (k == 2 && in_qsort(&st.frames[i])) {
			libc_between++;
			continue;
		}
		if (k == N_OURS) {
			reached_main |= !strcmp(name, "main");
			continue;
		}
		ck_abort_msg("frame %zu (%s at 0x%llx) is not the expected %s", i, name,
			     (unsigned long long)st.frames[i].ip, ours[k]);
	}
	ck_assert_msg(k == N_OURS, "only %zu of our frames found", k);
	ck_assert_uint_ge(libc_between, 1);
	ck_assert(reached_main);
	ck_assert_msg(st.end == PR_END_OUTERMOST, "ended: %s", pr_stack_end_name(st.end));
	/* The leaf's address is exact; callers point into their call. */
	ck_assert_uint_eq(st.frames[0].ip, snap.regs[PR_REG_IP]);
	for (size_t i = 0; i < st.nr; i++)
		ck_assert_uint_eq(st.frames[i].flags & PR_FRAME_FP, 0);
	/* Every frame carries its process and its mapping: all that naming
	 * needs, without looking the process up again. */
	for (size_t i = 0; i < st.nr; i++) {
		ck_assert_uint_ne(st.frames[i].proc_serial, 0);
		ck_assert_uint_eq(st.frames[i].proc_serial, st.frames[0].proc_serial);
		ck_assert_ptr_nonnull(st.frames[i].dso);
		ck_assert_uint_le(st.frames[i].map_start, st.frames[i].ip);
		ck_assert_uint_gt(st.frames[i].map_end, st.frames[i].ip);
	}
	replay_free(&r);
}
END_TEST

/*
 * Stripped, the program's own unwind rules and lines are only in its debug
 * file (DS_STRIPPED): the unwinder must have reached main through it, and
 * the symbolizer, over the same model, must name our frames with lines of
 * this file from it.
 */
START_TEST(the_debug_file_that_unwinds_also_names)
{
	static const char *const ours[] = {
		"ds_unwind_level3", "ds_unwind_level2", "ds_unwind_level1",
	};
	const char *dirs[MAX_DEBUG_DIRS];
	struct replay r;
	struct pr_stack st;
	struct pr_symbolizer *sym;
	size_t k = 0;
	size_t nr_dirs = debug_dirs(dirs);
	bool reached_main = false;
	PR_OPTS(pr_symbolizer_opts, so, .live = true, .debug_dirs = dirs,
		.nr_debug_dirs = nr_dirs);

	unwind_taken(ds_unwind_take_snapshot, WHOLE_STACK, 0, &r, &st);
	/* By the rules of the debug file's .debug_frame, not by frame
	 * pointer: the binary has no CFI of its own for our code. */
	for (size_t i = 0; i < st.nr; i++) {
		reached_main |= !strcmp(name_of(&st.frames[i]), "main");
		ck_assert_uint_eq(st.frames[i].flags & PR_FRAME_FP, 0);
	}
	ck_assert_msg(reached_main && st.end == PR_END_OUTERMOST, "ended: %s after %zu frames",
		      pr_stack_end_name(st.end), (size_t)st.nr);
	sym = pr_symbolizer_new(r.model, &so);
	ck_assert_ptr_nonnull(sym);
	for (size_t i = 0; i < st.nr && k < sizeof(ours) / sizeof(ours[0]); i++) {
		struct pr_symbol s;
		const struct pr_sym_func *fn;

		if (strcmp(name_of(&st.frames[i]), ours[k]))
			continue;
		ck_assert_int_eq(pr_symbolizer_symbolize(sym, (uint32_t)getpid(), &st.frames[i],
							 &s), 0);
		ck_assert_msg(s.name && !strcmp(s.name, ours[k]), "frame %zu named %s, not %s", i,
			      s.name ? s.name : "(none)", ours[k]);
		ck_assert_msg(s.nr > 0, "%s: no DWARF from the debug file", ours[k]);
		fn = &s.funcs[s.nr - 1];
		ck_assert_str_eq(fn->name, ours[k]);
		ck_assert_msg(fn->file && strstr(fn->file, "unwind-snapshot.c") && fn->line > 0,
			      "%s at %s:%u", ours[k], fn->file ? fn->file : "?", fn->line);
		k++;
	}
	ck_assert_uint_eq(k, sizeof(ours) / sizeof(ours[0]));
	pr_symbolizer_free(sym);
	replay_free(&r);
}
END_TEST

/*
 * A trim that evicts every file (a limit of one byte) between two unwinds
 * of the same sample: the files are found and read again, and the stack
 * is the same, frame for frame; a symbolizer over the model names the
 * frames as before.  (In the .debug_frame variants this also drops the
 * tables built from a debug file, and the images made for libunwind.)
 */
START_TEST(a_trim_that_evicts_every_file_leaves_the_same_stack)
{
	struct replay r;
	struct pr_stack st, again;
	struct pr_frame before[PR_UNWIND_MAX_DEPTH];
	const char *names[PR_UNWIND_MAX_DEPTH];
	PR_OPTS(pr_cache_opts, co, .max_bytes = 1, .grace_ns = UINT64_MAX);
	PR_OPTS(pr_cache_stats, cs);
	PR_OPTS(pr_symbolizer_opts, so, .live = true);
	struct pr_symbolizer *sym;
	size_t nr;

	unwind_taken(ds_unwind_take_snapshot, WHOLE_STACK, 0, &r, &st);
	nr = st.nr;
	ck_assert_uint_gt(nr, 6);
	memcpy(before, st.frames, nr * sizeof(*before));
	sym = pr_symbolizer_new(r.model, &so);
	ck_assert_ptr_nonnull(sym);
	for (size_t i = 0; i < nr; i++) {
		struct pr_symbol s;

		ck_assert_int_eq(pr_symbolizer_symbolize(sym, (uint32_t)getpid(), &before[i], &s),
				 0);
		names[i] = s.name ? strdup(s.name) : NULL;
	}
	/* The unwinder only reads the model: what was sampled, its caller
	 * says (a session does, for every frame). */
	for (size_t i = 0; i < nr; i++)
		pr_model_mark_sampled(r.model, before[i].dso);
	ck_assert_int_eq(pr_model_set_cache(r.model, &co), 0);
	ck_assert_int_eq(pr_model_trim(r.model, 1), 0);
	ck_assert_int_eq(pr_model_cache_stats(r.model, &cs), 0);
	ck_assert_uint_ge(cs.files_evicted, 2);     /* this program and libc at least */
	ck_assert_uint_eq(cs.files, 0);
	ck_assert_uint_eq(cs.bytes, 0);
	ck_assert_uint_eq(cs.files_evicted_hot, cs.files_evicted);
	ck_assert_uint_eq(cs.dsos_forgotten, 0);    /* all still mapped */

	ck_assert_int_eq(pr_unwinder_unwind(r.u, &r.rec, &again), 0);
	ck_assert_uint_eq(again.nr, nr);
	ck_assert_int_eq(again.end, st.end);
	for (size_t i = 0; i < nr; i++) {
		struct pr_symbol s;

		ck_assert_msg(again.frames[i].ip == before[i].ip &&
			      again.frames[i].dso == before[i].dso &&
			      again.frames[i].dso_ip == before[i].dso_ip &&
			      again.frames[i].flags == before[i].flags,
			      "frame %zu differs after the trim", i);
		ck_assert_int_eq(pr_symbolizer_symbolize(sym, (uint32_t)getpid(),
							 &again.frames[i], &s), 0);
		ck_assert_msg(names[i] ? s.name && !strcmp(s.name, names[i]) : !s.name,
			      "frame %zu named %s, before the trim %s", i,
			      s.name ? s.name : "(none)", names[i] ? names[i] : "(none)");
		free((char *)names[i]);
	}
	pr_symbolizer_free(sym);
	replay_free(&r);
}
END_TEST

/*
 * What an unwind reads of the stack is all it needs: cut to that many
 * bytes, the same snapshot unwinds to the same frames; a word less and it
 * runs out.  By the compiled rules and by libunwind alike.
 */
START_TEST(a_stack_cut_where_the_unwind_stopped_reading_unwinds_the_same)
{
	static const unsigned flags[] = { NO_JOIN, NO_JOIN | NO_RULE_CACHE };
	/* Not on the stack: the snapshot's copy would not reach main. */
	static struct pr_frame whole[PR_UNWIND_MAX_DEPTH];
	struct replay r;
	struct pr_stack st;

	unwind_taken(ds_unwind_take_snapshot, WHOLE_STACK, 0, &r, &st);
	for (size_t k = 0; k < sizeof(flags) / sizeof(flags[0]); k++) {
		struct pr_unwinder *u = new_unwinder(r.model, 0, flags[k]);
		uint64_t dyn = r.rec.u.sample.stack_dyn_size, used;
		size_t nr;

		ck_assert_ptr_nonnull(u);
		ck_assert_uint_eq(pr_unwinder_stack_used(u), 0);
		ck_assert_int_eq(pr_unwinder_unwind(u, &r.rec, &st), 0);
		ck_assert_msg(st.end == PR_END_OUTERMOST, "unwinder %zu: ended %s after %zu frames",
			      k, pr_stack_end_name(st.end), st.nr);
		nr = st.nr;
		memcpy(whole, st.frames, nr * sizeof(*whole));
		used = pr_unwinder_stack_used(u);
		/* Up to main's caller's frame, well short of the stack's
		 * top (the environment, the auxiliary vector). */
		ck_assert_uint_gt(used, 64);
		ck_assert_uint_lt(used, dyn);
		ck_assert_uint_eq(used % 8, 0);

		r.rec.u.sample.stack_dyn_size = used;
		ck_assert_int_eq(pr_unwinder_unwind(u, &r.rec, &st), 0);
		ck_assert_msg(st.end == PR_END_OUTERMOST, "cut to %llu bytes: ended %s",
			      (unsigned long long)used, pr_stack_end_name(st.end));
		ck_assert_uint_eq(st.nr, nr);
		for (size_t i = 0; i < nr; i++)
			ck_assert_msg(st.frames[i].ip == whole[i].ip, "frame %zu differs", i);
		ck_assert_uint_eq(pr_unwinder_stack_used(u), used);

		r.rec.u.sample.stack_dyn_size = used - 8;
		ck_assert_int_eq(pr_unwinder_unwind(u, &r.rec, &st), 0);
		ck_assert_msg(st.end == PR_END_TRUNCATED, "cut to %llu bytes: ended %s",
			      (unsigned long long)used - 8, pr_stack_end_name(st.end));
		ck_assert_uint_lt(st.nr, nr);
		/* It says it wanted the word the cut took. */
		ck_assert_uint_eq(pr_unwinder_stack_used(u), used);

		r.rec.u.sample.stack_dyn_size = dyn;
		pr_unwinder_free(u);
	}
	ck_assert_uint_eq(pr_unwinder_stack_used(NULL), 0);
	replay_free(&r);
}
END_TEST

START_TEST(a_short_snapshot_ends_truncated)
{
	struct replay r;
	struct pr_stack st;

	unwind_taken(ds_unwind_take_snapshot, 256, 0, &r, &st);
	ck_assert_uint_ge(st.nr, 1);
	ck_assert_msg(st.end == PR_END_TRUNCATED, "ended: %s", pr_stack_end_name(st.end));
	replay_free(&r);
}
END_TEST

START_TEST(the_depth_limit_holds)
{
	struct replay r;
	struct pr_stack st;

	unwind_taken(ds_unwind_take_snapshot, WHOLE_STACK, 3, &r, &st);
	ck_assert_uint_eq(st.nr, 3);
	ck_assert_int_eq(st.end, PR_END_DEPTH);
	replay_free(&r);
}
END_TEST

START_TEST(kernel_frames_sit_above_the_user_stack)
{
	struct replay r;
	struct pr_stack st;
	uint64_t chain[] = { PERF_CONTEXT_KERNEL, 0xffffffff81000100ull,
			     0xffffffff81000200ull, PERF_CONTEXT_USER };

	ds_unwind_take_snapshot();
	replay_init(&r, &snap, snap.size, 0);
	r.rec.u.sample.callchain = chain;
	r.rec.u.sample.nr_callchain = 4;
	ck_assert_int_eq(pr_unwinder_unwind(r.u, &r.rec, &st), 0);
	ck_assert_uint_eq(st.nr_kernel, 2);
	ck_assert_uint_eq(st.frames[0].ip, 0xffffffff81000100ull);
	ck_assert(st.frames[0].flags & PR_FRAME_KERNEL);
	ck_assert_uint_eq(st.frames[1].ip, 0xffffffff81000200ull);
	ck_assert_uint_eq(st.frames[2].ip, snap.regs[PR_REG_IP]);
	ck_assert(!(st.frames[2].flags & PR_FRAME_KERNEL));
	replay_free(&r);
}
END_TEST

START_TEST(statistics_count_stacks_by_how_they_ended)
{
	struct pr_unwind_stats st = { .sz = sizeof(st) };
	struct replay r;
	struct pr_stack s;

	unwind_taken(ds_unwind_take_snapshot, WHOLE_STACK, 0, &r, &s);
	pr_unwinder_free(r.u);
	r.u = new_unwinder(r.model, 0, NO_JOIN);
	ck_assert_int_eq(pr_unwinder_unwind(r.u, &r.rec, &s), 0);
	r.rec.u.sample.stack_dyn_size = 128;
	ck_assert_int_eq(pr_unwinder_unwind(r.u, &r.rec, &s), 0);
	ck_assert_int_eq(pr_unwinder_stats(r.u, &st), 0);
	ck_assert_uint_eq(st.samples, 2);
	ck_assert_uint_eq(st.ends[PR_END_OUTERMOST], 1);
	ck_assert_uint_eq(st.ends[PR_END_TRUNCATED], 1);
	ck_assert_uint_gt(st.frames, 8);
	ck_assert_uint_ge(st.files_opened, 2);
	ck_assert_str_eq(pr_stack_end_name(PR_END_TRUNCATED), "truncated");
	replay_free(&r);
}
END_TEST

/* The frames before the first joined one. */
static size_t own_frames(const struct pr_stack *st)
{
	size_t n = 0;

	while (n < st->nr && !(st->frames[n].flags & PR_FRAME_JOINED))
		n++;
	return n;
}

/* A user call chain as the kernel's frame-pointer walk gives it for the
 * stack `whole` (user frames only): PERF_CONTEXT_USER, the sampled
 * address, then the return addresses -- the callers' frame addresses
 * plus one.  Frame `change`, when below nr, gets another caller; at most
 * `nr` frames are in it (the kernel's depth limit). */
static uint64_t chain_buf[1 + PR_UNWIND_MAX_DEPTH];

static void give_chain(struct replay *r, const struct pr_frame *whole, size_t nr, size_t change)
{
	chain_buf[0] = PERF_CONTEXT_USER;
	for (size_t i = 0; i < nr; i++)
		chain_buf[1 + i] = whole[i].ip + (i ? 1 : 0) + (i == change ? 0x40 : 0);
	r->rec.u.sample.callchain = chain_buf;
	r->rec.u.sample.nr_callchain = 1 + nr;
}

static void take_chain(struct replay *r)
{
	r->rec.u.sample.callchain = NULL;
	r->rec.u.sample.nr_callchain = 0;
}

/*
 * The snapshot whole, then cut at every word after it, each sample with
 * the call chain of the whole stack: a cut stack is completed from the
 * whole one to exactly the whole one, its added frames marked, or left
 * as it is -- never anything else.  The whole stack is what the thread
 * keeps each time (a joined one is kept too).  The same cuts without a
 * chain stay cut: nothing else in a sample shows the callers are still
 * the kept ones.
 */
START_TEST(a_cut_stack_joins_to_exactly_the_whole_one_or_not_at_all)
{
	struct pr_unwind_stats stats = { .sz = sizeof(stats) };
	static struct pr_frame whole[PR_UNWIND_DEFAULT_DEPTH];
	struct replay r;
	struct pr_stack st;
	size_t nr, joined = 0, cut = 0, missed = 0, unchained = 0;

	unwind_taken(ds_unwind_take_snapshot, WHOLE_STACK, 0, &r, &st);
	ck_assert_int_eq(st.end, PR_END_OUTERMOST);
	nr = st.nr;
	memcpy(whole, st.frames, nr * sizeof(*whole));
	for (size_t size = 8; size < snap.size; size += 8) {
		size_t own;

		take_chain(&r);
		r.rec.u.sample.stack_dyn_size = size;
		ck_assert_int_eq(pr_unwinder_unwind(r.u, &r.rec, &st), 0);
		ck_assert_uint_eq(own_frames(&st), st.nr);
		unchained += st.end == PR_END_TRUNCATED;
		give_chain(&r, whole, nr, SIZE_MAX);
		ck_assert_int_eq(pr_unwinder_unwind(r.u, &r.rec, &st), 0);
		own = own_frames(&st);
		if (own == st.nr) {
			cut += st.end == PR_END_TRUNCATED;
			missed += st.end == PR_END_TRUNCATED && st.nr >= 3;
			continue;
		}
		joined++;
		cut++;
		ck_assert_msg(st.nr == nr && st.end == PR_END_OUTERMOST,
			      "cut at %zu: %zu frames (%s), not the %zu of the whole", size, st.nr,
			      pr_stack_end_name(st.end), nr);
		for (size_t i = 0; i < nr; i++) {
			ck_assert_uint_eq(st.frames[i].ip, whole[i].ip);
			ck_assert(!!(st.frames[i].flags & PR_FRAME_JOINED) == (i >= own));
		}
	}
	ck_assert_int_eq(pr_unwinder_stats(r.u, &stats), 0);
	ck_assert_uint_eq(stats.joined, joined);
	/* Each cut that joined with the chain was refused without it. */
	ck_assert_uint_ge(stats.joins_unconfirmed, joined);
	ck_assert_uint_eq(unchained, cut);
	ck_assert_msg(!missed, "%zu of %zu cut stacks joined; %zu of three frames or more not",
		      joined, cut, missed);
	ck_assert_uint_gt(joined, 8);
	take_chain(&r);
	replay_free(&r);
}
END_TEST

/* The whole snapshot, then a cut of it that joins on its own, after
 * `between` (a sample of the same thread, or nothing), as thread `tid`,
 * its chain that of the whole stack but for frame `change` (none when
 * SIZE_MAX) and cut to `chain_nr` frames (none when 0): the stack. */
static struct pr_stack joined_after(struct replay *r, void (*between)(struct replay *r),
				    uint32_t tid, size_t change, size_t chain_nr)
{
	static struct pr_frame whole[PR_UNWIND_DEFAULT_DEPTH];
	struct pr_stack st;
	size_t size = 0, nr;

	take_chain(r);
	r->rec.u.sample.stack_dyn_size = snap.size;
	ck_assert_int_eq(pr_unwinder_unwind(r->u, &r->rec, &st), 0);
	nr = st.nr;
	memcpy(whole, st.frames, nr * sizeof(*whole));
	give_chain(r, whole, nr, SIZE_MAX);
	for (size_t s = 512; s < snap.size && !size; s += 8) {
		r->rec.u.sample.stack_dyn_size = snap.size;
		ck_assert_int_eq(pr_unwinder_unwind(r->u, &r->rec, &st), 0);
		r->rec.u.sample.stack_dyn_size = s;
		ck_assert_int_eq(pr_unwinder_unwind(r->u, &r->rec, &st), 0);
		if (own_frames(&st) < st.nr && own_frames(&st) + 3 < nr)
			size = s;
	}
	ck_assert_uint_gt(size, 0);
	/* A new unwinder: nothing kept but what follows. */
	pr_unwinder_free(r->u);
	r->u = new_unwinder(r->model, 0, 0);
	r->rec.u.sample.stack_dyn_size = snap.size;
	ck_assert_int_eq(pr_unwinder_unwind(r->u, &r->rec, &st), 0);
	if (between)
		between(r);
	r->rec.tid = tid;
	if (chain_nr)
		give_chain(r, whole, chain_nr, change);
	else
		take_chain(r);
	r->rec.u.sample.stack_dyn_size = size;
	ck_assert_int_eq(pr_unwinder_unwind(r->u, &r->rec, &st), 0);
	r->rec.tid = r->rec.pid;
	take_chain(r);
	return st;
}

static bool joins_after(struct replay *r, void (*between)(struct replay *r), uint32_t tid,
			size_t change, size_t chain_nr)
{
	struct pr_stack st = joined_after(r, between, tid, change, chain_nr);

	return own_frames(&st) < st.nr;
}

/* A sample of the thread whose stack pointer is near the top of the
 * stack: every frame below it has returned. */
static void shallow_sample(struct replay *r)
{
	struct pr_stack st;
	uint64_t regs[PR_REG_MAX];
	size_t n = 0;

	memcpy(regs, r->regs, sizeof(regs));
	r->rec.u.sample.regs = regs;
	r->rec.u.sample.stack_addr = snap.sp + snap.size - 16;
	r->rec.u.sample.stack_dyn_size = 0;
	for (int reg = 0; reg < PR_REG_MAX; reg++)
		if (PR_REGS_DWARF >> reg & 1) {
			if (reg == PR_REG_SP)
				regs[n] = r->rec.u.sample.stack_addr;
			n++;
		}
	ck_assert_int_eq(pr_unwinder_unwind(r->u, &r->rec, &st), 0);
	r->rec.u.sample.regs = r->regs;
	r->rec.u.sample.stack_addr = snap.sp;
}

START_TEST(a_join_needs_the_same_thread_a_chain_that_agrees_and_no_return_between)
{
	struct replay r;
	struct pr_stack st;
	size_t own, nr;

	unwind_taken(ds_unwind_take_snapshot, WHOLE_STACK, 0, &r, &st);
	nr = st.nr;
	ck_assert(joins_after(&r, NULL, r.rec.pid, SIZE_MAX, nr));
	/* Another thread's stack says nothing of this one's. */
	ck_assert(!joins_after(&r, NULL, r.rec.pid + 1, SIZE_MAX, nr));
	/* The thread went back up past the frame since. */
	ck_assert(!joins_after(&r, shallow_sample, r.rec.pid, SIZE_MAX, nr));
	/* No chain: the same return address at the same place may be a new
	 * call through other callers. */
	ck_assert(!joins_after(&r, NULL, r.rec.pid, SIZE_MAX, 0));
	/* The chain names another caller for the frame next to the root:
	 * it was called again since, through other callers. */
	ck_assert(!joins_after(&r, NULL, r.rec.pid, nr - 2, nr));
	/* A chain the kernel's depth limit cut two frames short confirms
	 * all but those: joined that far, and still truncated. */
	st = joined_after(&r, NULL, r.rec.pid, SIZE_MAX, nr - 2);
	own = own_frames(&st);
	ck_assert_uint_lt(own, st.nr);
	ck_assert_uint_eq(st.nr, nr - 2);
	ck_assert_int_eq(st.end, PR_END_TRUNCATED);
	replay_free(&r);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("unwind");
	TCase *tc = tcase_create("self");

	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, a_snapshot_through_qsort_unwinds_to_the_exact_chain);
	tcase_add_test(tc, a_stack_cut_where_the_unwind_stopped_reading_unwinds_the_same);
	tcase_add_test(tc, a_short_snapshot_ends_truncated);
	tcase_add_test(tc, a_trim_that_evicts_every_file_leaves_the_same_stack);
	tcase_add_test(tc, the_depth_limit_holds);
	tcase_add_test(tc, kernel_frames_sit_above_the_user_stack);
	tcase_add_test(tc, statistics_count_stacks_by_how_they_ended);
	tcase_add_test(tc, a_cut_stack_joins_to_exactly_the_whole_one_or_not_at_all);
	tcase_add_test(tc, a_join_needs_the_same_thread_a_chain_that_agrees_and_no_return_between);
	add_damage_tests(tc);
	add_nocfi_tests(tc);
	add_signal_tests(tc);
	/* A binary with a debug section of its own (DS_OWN_DEBUG_SECTION) is
	 * one libdw reads no debug file for. */
	if (getenv("DS_STRIPPED") && !getenv("DS_OWN_DEBUG_SECTION"))
		tcase_add_test(tc, the_debug_file_that_unwinds_also_names);
	suite_add_tcase(s, tc);
	return run_suite(s);
}
