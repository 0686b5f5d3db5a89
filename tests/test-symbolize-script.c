/* SPDX-License-Identifier: Apache-2.0 */
/*
 * perf script's text of stacks a symbolizer names.  The writer copies the
 * lines of the outer frames a stack shares with the stack before it
 * (output/script.c) instead of naming them again: a stack is printed as
 * it would be alone, a frame marked otherwise (joined) is not copied, JIT
 * code is named anew from its perf map as it grows, and after a trim the
 * frames are named again.
 */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "mkrecord.h"
#include "prscript.h"
#include "sym-test.h"
#include "symbols/symbolizer.h"
#include "symbolize.h"

/* The frame of a call from the function at `fn` in this program. */
static struct pr_frame in(struct pr_model *m, uintptr_t fn)
{
	return caller_frame(m, (uint32_t)getpid(), (uint64_t)fn + 1);
}

static void leaf_fn(void)
{
	ds_sym_leaf();
}

static uint64_t lookups(const struct pr_symbolizer *s)
{
	PR_OPTS(pr_symbolizer_stats, st);

	ck_assert_int_eq(pr_symbolizer_stats(s, &st), 0);
	return st.lookups;
}

/* The text of `nr` stacks given one after another to one writer (perf
 * script's default fields and srcline), malloc'd. */
static char *render(struct pr_symbolizer *sym, const struct pr_stack *st, size_t nr)
{
	PR_OPTS(pr_script_opts, o, .fields = PR_SCRIPT_DEFAULT | PR_SCRIPT_SRCLINE);
	struct pr_record r = { .type = PR_RECORD_SAMPLE, .pid = (uint32_t)getpid(),
			       .tid = (uint32_t)getpid(), .time = 1000000, .cpu = 1,
			       .fields = PR_ID_TID | PR_ID_TIME | PR_ID_CPU };
	char *text = NULL;
	size_t len = 0;
	FILE *out = open_memstream(&text, &len);
	struct pr_script *s;

	ck_assert_ptr_nonnull(out);
	s = pr_script_new(out, &o);
	ck_assert_ptr_nonnull(s);
	for (size_t i = 0; i < nr; i++) {
		r.u.sample.period = i + 1;
		ck_assert_int_eq(pr_script_sample(s, sym, &r, &st[i], "app", "app", "cpu-clock"),
				 0);
	}
	pr_script_free(s);
	ck_assert_int_eq(fclose(out), 0);
	return text;
}

/* The stacks rendered each by a writer of its own, one after another. */
static char *render_alone(struct pr_symbolizer *sym, const struct pr_stack *st, size_t nr)
{
	char *all = calloc(1, 1);

	for (size_t i = 0; i < nr; i++) {
		char *one = render(sym, &st[i], 1);
		/* Each writer numbers its first sample's period 1. */
		char *period = strstr(one, "         1 cpu-clock");
		size_t len = strlen(all);

		ck_assert_ptr_nonnull(period);
		period[9] = (char)('1' + i);
		all = realloc(all, len + strlen(one) + 1);
		ck_assert_ptr_nonnull(all);
		strcpy(all + len, one);
		free(one);
	}
	return all;
}

START_TEST(a_stack_sharing_outer_frames_with_the_one_before_prints_as_it_does_alone)
{
	struct self_sym me = self_sym_new();
	struct pr_frame outer = outer_frame(me.m), leaf = in(me.m, (uintptr_t)leaf_fn),
			cxx = in(me.m, (uintptr_t)ds_sym_cxx),
			anon_ns = in(me.m, (uintptr_t)ds_sym_cxx_anon);
	/* Leaf first; the outer three alike in the first two, the last two
	 * alike in all; then the first again, and a stack of the shared
	 * frames alone. */
	struct pr_frame a[] = { leaf, outer, cxx, anon_ns }, b[] = { cxx, outer, cxx, anon_ns },
			c[] = { outer, cxx, anon_ns }, d[] = { cxx, anon_ns };
	struct pr_stack st[] = { { .frames = a, .nr = 4 }, { .frames = b, .nr = 4 },
				 { .frames = a, .nr = 4 }, { .frames = c, .nr = 3 },
				 { .frames = d, .nr = 2 } };
	char *together, *alone;

	together = render(me.s, st, 5);
	/* Named once each: the first stack's four frames, then only the
	 * frames not shared with the stack before. */
	ck_assert_uint_eq(lookups(me.s), 4 + 1 + 1 + 0 + 0);
	alone = render_alone(me.s, st, 5);
	ck_assert_str_eq(together, alone);
	ck_assert_msg(strstr(together, " ds_sym_outer+0x") && strstr(together, " (inlined)") &&
			      strstr(together, "/tests/test-symbolize.c:"),
		      "%s", together);
	free(together);
	free(alone);
	self_sym_free(&me);
}
END_TEST

START_TEST(a_frame_marked_otherwise_is_not_copied_from_the_stack_before)
{
	struct self_sym me = self_sym_new();
	struct pr_frame outer = outer_frame(me.m), leaf = in(me.m, (uintptr_t)leaf_fn),
			joined = outer;
	struct pr_frame a[] = { leaf, outer }, b[] = { leaf, joined };
	struct pr_stack st[] = { { .frames = a, .nr = 2 }, { .frames = b, .nr = 2 } };
	char *together, *alone;

	joined.flags |= PR_FRAME_JOINED;
	b[1] = joined;
	together = render(me.s, st, 2);
	alone = render_alone(me.s, st, 2);
	ck_assert_str_eq(together, alone);
	ck_assert_msg(strstr(together, "ds_sym_outer_[joined]+0x"), "%s", together);
	free(together);
	free(alone);
	self_sym_free(&me);
}
END_TEST

START_TEST(jit_code_in_a_repeated_stack_is_named_from_its_perf_map_as_it_grows)
{
	uint32_t pid = (uint32_t)getpid();
	struct pr_model *m = pr_model_new(NULL);
	struct pr_record r = mmap2(pid, 0x7f0000000000ull, 0x100000, 0, "//anon");
	struct pr_symbolizer *s;
	struct pr_frame f = { .ip = 0x7f0000005008ull, .dso_ip = 0x7f0000005008ull };
	struct pr_stack st = { .frames = &f, .nr = 1 };
	PR_OPTS(pr_script_opts, o, .fields = PR_SCRIPT_DEFAULT);
	struct pr_record smp = { .type = PR_RECORD_SAMPLE, .pid = pid, .tid = pid,
				 .fields = PR_ID_TID };
	char path[64], *text = NULL;
	size_t len = 0;
	FILE *out = open_memstream(&text, &len), *mf;
	struct pr_script *w;

	snprintf(path, sizeof(path), "/tmp/perf-%u.map", pid);
	write_text(path, "7f0000001000 100 LazyCompile:*early /app.js:3\n");
	ck_assert_ptr_nonnull(m);
	ck_assert_ptr_nonnull(out);
	ck_assert_int_eq(pr_model_apply(m, &r), 0);
	f.dso = pr__model_find(m, pid, f.ip)->dso;
	s = symbolizer(m, false);
	/* A miss reads the map again at once. */
	s->perf_map_reread_ns = 0;
	w = pr_script_new(out, &o);
	ck_assert_ptr_nonnull(w);
	ck_assert_int_eq(pr_script_sample(w, s, &smp, &st, "node", "node", "cpu-clock"), 0);
	mf = fopen(path, "a");
	ck_assert_ptr_nonnull(mf);
	fputs("7f0000005000 80 LazyCompile:*later /app.js:9\n", mf);
	ck_assert_int_eq(fclose(mf), 0);
	ck_assert_int_eq(pr_script_sample(w, s, &smp, &st, "node", "node", "cpu-clock"), 0);
	pr_script_free(w);
	ck_assert_int_eq(fclose(out), 0);
	{
		char *first = strstr(text, "[unknown] (/tmp/perf-"),
		     *second = strstr(text, "LazyCompile:*later /app.js:9+0x8 (/tmp/perf-");

		ck_assert_msg(first && second && first < second, "%s", text);
	}
	free(text);
	pr_symbolizer_free(s);
	pr_model_free(m);
	unlink(path);
}
END_TEST

START_TEST(after_a_trim_the_frames_of_a_repeated_stack_are_named_again)
{
	struct self_sym me = self_sym_new();
	struct pr_frame a[] = { in(me.m, (uintptr_t)leaf_fn), outer_frame(me.m) };
	struct pr_stack st = { .frames = a, .nr = 2 };
	PR_OPTS(pr_script_opts, o, .fields = PR_SCRIPT_IP | PR_SCRIPT_SYM | PR_SCRIPT_DSO);
	struct pr_record smp = { .type = PR_RECORD_SAMPLE, .pid = (uint32_t)getpid(),
				 .tid = (uint32_t)getpid(), .fields = PR_ID_TID };
	char *text = NULL;
	size_t len = 0, half;
	FILE *out = open_memstream(&text, &len);
	struct pr_script *w = pr_script_new(out, &o);

	ck_assert_ptr_nonnull(w);
	ck_assert_int_eq(pr_script_sample(w, me.s, &smp, &st, "app", "app", NULL), 0);
	ck_assert_int_eq(pr_script_sample(w, me.s, &smp, &st, "app", "app", NULL), 0);
	ck_assert_uint_eq(lookups(me.s), 2);
	ck_assert_int_eq(pr_model_trim(me.m, 1), 0);
	ck_assert_int_eq(pr_script_sample(w, me.s, &smp, &st, "app", "app", NULL), 0);
	ck_assert_uint_eq(lookups(me.s), 4);
	pr_script_free(w);
	ck_assert_int_eq(fclose(out), 0);
	/* Three samples alike. */
	half = len / 3;
	ck_assert_uint_eq(len, 3 * half);
	ck_assert(!memcmp(text, text + half, half) && !memcmp(text, text + 2 * half, half));
	ck_assert_msg(strstr(text, " ds_sym_outer ("), "%s", text);
	free(text);
	self_sym_free(&me);
}
END_TEST

/* Without a symbolizer (perf script's fields without sym: addresses and
 * files) the lines are copied as well, and a stack still prints as it
 * does alone. */
START_TEST(without_a_symbolizer_a_stack_sharing_outer_frames_prints_as_it_does_alone)
{
	struct self_sym me = self_sym_new();
	struct pr_frame outer = outer_frame(me.m), leaf = in(me.m, (uintptr_t)leaf_fn),
			cxx = in(me.m, (uintptr_t)ds_sym_cxx), joined = outer;
	struct pr_frame a[] = { leaf, outer, cxx }, b[] = { cxx, outer, cxx }, c[] = { leaf, joined, cxx };
	struct pr_stack st[] = { { .frames = a, .nr = 3 }, { .frames = b, .nr = 3 },
				 { .frames = c, .nr = 3 }, { .frames = a, .nr = 3 } };
	char *together, *alone;

	joined.flags |= PR_FRAME_JOINED;
	c[1] = joined;
	together = render(NULL, st, 4);
	alone = render_alone(NULL, st, 4);
	ck_assert_str_eq(together, alone);
	ck_assert_msg(strstr(together, "[unknown]_[joined]+0x0 ("), "%s", together);
	free(together);
	free(alone);
	self_sym_free(&me);
}
END_TEST

/* Without a symbolizer a frame's line is its file's path: a DSO freed by
 * a trim and another made at its address (here: the same struct given a
 * new path and serial, as the allocator may) is printed by its own. */
START_TEST(without_a_symbolizer_a_dso_made_again_at_the_address_of_one_freed_prints_its_path)
{
	struct pr_dso d = { .path = "/usr/lib/first.so", .serial = 1 };
	struct pr_frame f[] = { { .ip = 0x1000, .dso_ip = 0x1000, .dso = &d },
				{ .ip = 0x2000, .dso_ip = 0x2000, .dso = &d } };
	struct pr_stack st = { .frames = f, .nr = 2 };
	PR_OPTS(pr_script_opts, o, .fields = PR_SCRIPT_IP | PR_SCRIPT_DSO);
	struct pr_record smp = { .type = PR_RECORD_SAMPLE, .pid = 7, .tid = 7,
				 .fields = PR_ID_TID };
	char *text = NULL, *second;
	size_t len = 0;
	FILE *out = open_memstream(&text, &len);
	struct pr_script *w = pr_script_new(out, &o);

	ck_assert_ptr_nonnull(w);
	ck_assert_int_eq(pr_script_sample(w, NULL, &smp, &st, "app", "app", NULL), 0);
	ck_assert_int_eq(pr_script_sample(w, NULL, &smp, &st, "app", "app", NULL), 0);
	d.path = "/usr/lib/second.so";
	d.serial = 2;
	ck_assert_int_eq(pr_script_sample(w, NULL, &smp, &st, "app", "app", NULL), 0);
	pr_script_free(w);
	ck_assert_int_eq(fclose(out), 0);
	second = strstr(text, "second.so");
	ck_assert_msg(second && !strstr(second, "first.so") &&
			      strstr(second + 1, "\t            2000 (/usr/lib/second.so)\n"),
		      "%s", text);
	free(text);
}
END_TEST

TCase *symbolize_script_tests(void)
{
	TCase *tc = tcase_create("script");

	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, a_stack_sharing_outer_frames_with_the_one_before_prints_as_it_does_alone);
	tcase_add_test(tc, a_frame_marked_otherwise_is_not_copied_from_the_stack_before);
	tcase_add_test(tc, jit_code_in_a_repeated_stack_is_named_from_its_perf_map_as_it_grows);
	tcase_add_test(tc, after_a_trim_the_frames_of_a_repeated_stack_are_named_again);
	tcase_add_test(tc, without_a_symbolizer_a_stack_sharing_outer_frames_prints_as_it_does_alone);
	tcase_add_test(tc, without_a_symbolizer_a_dso_made_again_at_the_address_of_one_freed_prints_its_path);
	return tc;
}
