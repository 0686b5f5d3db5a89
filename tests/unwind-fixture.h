/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The self-unwinding test's fixtures, shared by its files: the snapshot of
 * this process's registers and stack that unwind-snapshot.c takes deep in
 * known call chains, and the replay of one snapshot as a sample through a
 * model of this process (unwind-replay.c).
 */
#ifndef DS_TEST_UNWIND_FIXTURE_H
#define DS_TEST_UNWIND_FIXTURE_H

#include <check.h>
#include <signal.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "perfreader.h"
#include "prunwind.h"

#define NOINLINE __attribute__((noinline, noclone))
#define SNAP_STACK 32768

/* Registers in perf's numbering, and the stack above the captured SP. */
struct snapshot {
	uint64_t regs[PR_REG_MAX];
	uint64_t sp;
	size_t size;
	uint8_t stack[SNAP_STACK];
};

/* The last snapshot taken. */
extern struct snapshot snap;

/*
 * The call chains (unwind-snapshot.c).  Exported (the test links with
 * -rdynamic) so dladdr() can name their frames.
 */
void ds_unwind_capture(void);
int ds_unwind_compare(const void *a, const void *b);
void ds_unwind_level3(int *v, size_t n);
void ds_unwind_level2(int *v, size_t n);
void ds_unwind_level1(int *v, size_t n);
/* Through qsort: capture, compare, qsort, level3, level2, level1. */
void ds_unwind_take_snapshot(void);

/* Code without CFI that keeps a frame pointer and calls `fn`. */
void ds_unwind_nocfi(void (*fn)(void));
/* The same bytes, for copying into anonymous executable memory. */
extern const unsigned char jit_code[8];
void ds_unwind_callee(void);
/* Capture from ds_unwind_callee, called through `through`. */
void ds_unwind_via(void (*through)(void (*)(void)));

/* A leaf that keeps its return address in %rdi, and its caller that
 * captures what the leaf recorded. */
void ds_unwind_popra(void);
void ds_unwind_popra_caller(void);

/*
 * Signals: each of these captures in a handler.  interrupted_ip and
 * nested_ip are where the signals interrupted, interrupted_ra and
 * nested_ra the return addresses of the functions that sent them.
 */
extern uint64_t interrupted_ip, interrupted_ra, nested_ip, nested_ra;
void ds_unwind_on_signal(int sig, siginfo_t *si, void *uc);
void ds_unwind_interrupted(void);
void ds_unwind_signalled(void);
void ds_unwind_on_nested(int sig, siginfo_t *si, void *uc);
void ds_unwind_on_outer(int sig, siginfo_t *si, void *uc);
void ds_unwind_interrupted_again(void);
void ds_unwind_signalled_twice(void);
void ds_unwind_on_alt_stack(void);
/* The same through a trampoline of the program's own, without CFI, right
 * after a function with CFI. */
void ds_unwind_signalled_own_restorer(void);
void ds_unwind_restorer(void);

/* ---- replaying a snapshot (unwind-replay.c) ---- */

struct replay {
	struct pr_model *model;
	struct pr_unwinder *u;
	uint64_t regs[PR_REG_MAX];   /* dense, in PR_REGS_DWARF order */
	struct pr_record rec;
};

enum { NO_RULE_CACHE = 1, NO_FRAME_POINTERS = 2, NO_JOIN = 4 };

#define MAX_DEBUG_DIRS 8

size_t debug_dirs(const char **dirs);
struct pr_unwinder *new_unwinder(struct pr_model *model, uint32_t max_depth, unsigned flags);
void replay_init(struct replay *r, const struct snapshot *s, size_t size, uint32_t max_depth);
void replay_free(struct replay *r);
/* All the stack the snapshot holds, for unwind_taken(). */
#define WHOLE_STACK SIZE_MAX
void unwind_taken(void (*take)(void), size_t size, uint32_t max_depth, struct replay *r,
		  struct pr_stack *st);
const char *name_of(const struct pr_frame *f);
bool in_qsort(const struct pr_frame *f);
void assert_same(struct replay *r, struct pr_unwinder *slow);
void assert_reaches_main(struct replay *r, const struct pr_stack *st, size_t from);

/* Each file's tests, added to the one test case. */
void add_damage_tests(TCase *tc);
void add_nocfi_tests(TCase *tc);
void add_signal_tests(TCase *tc);

#endif
