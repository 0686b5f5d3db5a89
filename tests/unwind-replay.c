/* SPDX-License-Identifier: Apache-2.0 */
/*
 * A snapshot replayed as a sample of this process, through a model built
 * from /proc as a capture would build it, and what the tests assert of the
 * stacks it unwinds to.
 */
#include <check.h>
#include <dlfcn.h>
#include <linux/perf_event.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "self-model.h"
#include "unwind-fixture.h"

/* DS_DEBUG_DIR's directories into `dirs` (room for MAX_DEBUG_DIRS): how
 * many.  They stay valid until the next call. */
size_t debug_dirs(const char **dirs)
{
	static char buf[4096];
	const char *env = getenv("DS_DEBUG_DIR");
	size_t n = 0;

	if (!env)
		return 0;
	snprintf(buf, sizeof(buf), "%s", env);
	for (char *save = NULL, *d = strtok_r(buf, ":", &save); d && n < MAX_DEBUG_DIRS;
	     d = strtok_r(NULL, ":", &save))
		dirs[n++] = d;
	return n;
}

struct pr_unwinder *new_unwinder(struct pr_model *model, uint32_t max_depth, unsigned flags)
{
	const char *dirs[MAX_DEBUG_DIRS];
	size_t nr_dirs = debug_dirs(dirs);
	PR_OPTS(pr_unwinder_opts, o, .live = true, .max_depth = max_depth,
		.debug_dirs = dirs, .nr_debug_dirs = nr_dirs,
		.no_rule_cache = flags & NO_RULE_CACHE,
		.no_frame_pointers = flags & NO_FRAME_POINTERS,
		.no_join = flags & NO_JOIN);
	struct pr_unwinder *u = pr_unwinder_new(model, &o);

	ck_assert_ptr_nonnull(u);
	return u;
}

/* A sample of this process from `s`, its stack `size` bytes long. */
void replay_init(struct replay *r, const struct snapshot *s, size_t size, uint32_t max_depth)
{
	size_t n = 0;

	memset(r, 0, sizeof(*r));
	r->model = self_model();
	r->u = new_unwinder(r->model, max_depth, 0);
	for (int reg = 0; reg < PR_REG_MAX; reg++)
		if (PR_REGS_DWARF >> reg & 1)
			r->regs[n++] = s->regs[reg];
	r->rec.type = PR_RECORD_SAMPLE;
	r->rec.pid = r->rec.tid = (uint32_t)getpid();
	r->rec.u.sample.ip = s->regs[PR_REG_IP];
	r->rec.u.sample.regs_abi = PERF_SAMPLE_REGS_ABI_64;
	r->rec.u.sample.regs_mask = PR_REGS_DWARF;
	r->rec.u.sample.regs = r->regs;
	r->rec.u.sample.stack_addr = s->sp;
	r->rec.u.sample.stack = s->stack;
	r->rec.u.sample.stack_size = SNAP_STACK;
	r->rec.u.sample.stack_dyn_size = size;
}

void replay_free(struct replay *r)
{
	pr_unwinder_free(r->u);
	pr_model_free(r->model);
}

/* A snapshot taken by `take`, replayed with the first `size` bytes of
 * its stack (WHOLE_STACK: all), and unwound into *st within `max_depth`
 * frames (0: the default).  *r is the caller's to free. */
void unwind_taken(void (*take)(void), size_t size, uint32_t max_depth, struct replay *r,
		  struct pr_stack *st)
{
	take();
	replay_init(r, &snap, size == WHOLE_STACK ? snap.size : size, max_depth);
	ck_assert_int_eq(pr_unwinder_unwind(r->u, &r->rec, st), 0);
}

/* The exported name the frame is in (the test is linked -rdynamic). */
const char *name_of(const struct pr_frame *f)
{
	Dl_info info;

	if (!dladdr((void *)(uintptr_t)f->ip, &info) || !info.dli_sname)
		return "?";
	return info.dli_sname;
}

/* qsort's code: libc's, or AddressSanitizer's interceptor in front. */
bool in_qsort(const struct pr_frame *f)
{
	Dl_info info;

	return dladdr((void *)(uintptr_t)f->ip, &info) && info.dli_fname &&
	       (strstr(info.dli_fname, "/libc.so") || strstr(info.dli_fname, "/libasan.so"));
}

/* The same sample through compiled rules and through libunwind alone:
 * the same frames, the same end. */
void assert_same(struct replay *r, struct pr_unwinder *slow)
{
	struct pr_stack a, b;

	ck_assert_int_eq(pr_unwinder_unwind(r->u, &r->rec, &a), 0);
	ck_assert_int_eq(pr_unwinder_unwind(slow, &r->rec, &b), 0);
	ck_assert_msg(a.nr == b.nr && a.end == b.end,
		      "%llu bytes of stack: %zu frames (%s) from compiled rules, "
		      "%zu (%s) from libunwind",
		      (unsigned long long)r->rec.u.sample.stack_dyn_size, a.nr,
		      pr_stack_end_name(a.end), b.nr, pr_stack_end_name(b.end));
	for (size_t i = 0; i < a.nr; i++) {
		ck_assert_uint_eq(a.frames[i].ip, b.frames[i].ip);
		ck_assert_uint_eq(a.frames[i].dso_ip, b.frames[i].dso_ip);
		ck_assert_ptr_eq(a.frames[i].dso, b.frames[i].dso);
		ck_assert_uint_eq(a.frames[i].flags, b.frames[i].flags);
		ck_assert_uint_eq(a.frames[i].map_start, b.frames[i].map_start);
		ck_assert_uint_eq(a.frames[i].map_end, b.frames[i].map_end);
		ck_assert_uint_eq(a.frames[i].map_pgoff, b.frames[i].map_pgoff);
		ck_assert_uint_eq(a.frames[i].proc_serial, b.frames[i].proc_serial);
	}
}

/* Frames from `from` on reach main, the stack ends there, and libunwind
 * alone unwinds the sample the same. */
void assert_reaches_main(struct replay *r, const struct pr_stack *st, size_t from)
{
	struct pr_unwinder *slow = new_unwinder(r->model, 0, NO_RULE_CACHE);
	bool main_reached = false;

	for (size_t i = from; i < st->nr; i++)
		main_reached |= !strcmp(name_of(&st->frames[i]), "main");
	ck_assert(main_reached);
	ck_assert_msg(st->end == PR_END_OUTERMOST, "ended: %s", pr_stack_end_name(st->end));
	assert_same(r, slow);
	pr_unwinder_free(slow);
}
