/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Through signal handlers: the trampoline marked, the interrupted frame at
 * its exact address and its callers at their return addresses minus one,
 * nested signals, and a handler on an alternate stack.
 */
#include <check.h>
#include <string.h>

#include "unwind-fixture.h"

/* From frame `at`: `handler`, the trampoline (marked), the code the
 * signal interrupted at exactly `ip`, named `interrupted`. */
static void assert_signal_at(const struct pr_stack *st, size_t at, const char *handler,
			     uint64_t ip, const char *interrupted)
{
	ck_assert_uint_ge(st->nr, at + 3);
	ck_assert_str_eq(name_of(&st->frames[at]), handler);
	ck_assert_msg(st->frames[at + 1].flags & PR_FRAME_SIGNAL, "frame %zu at 0x%llx (%s) is "
		      "not the trampoline", at + 1, (unsigned long long)st->frames[at + 1].ip,
		      name_of(&st->frames[at + 1]));
	ck_assert_uint_eq(st->frames[at + 2].ip, ip);
	ck_assert_str_eq(name_of(&st->frames[at + 2]), interrupted);
}

/* Frame `at` is a caller, at its return address `ra` minus one. */
static void assert_caller_at(const struct pr_stack *st, size_t at, uint64_t ra,
			     const char *name)
{
	ck_assert_uint_gt(st->nr, at);
	ck_assert_uint_eq(st->frames[at].ip, ra - 1);
	ck_assert_str_eq(name_of(&st->frames[at]), name);
}

/* No frame guessed by frame pointer; the trampolines (bit i of
 * `trampolines` for frame i) marked, and only they. */
static void assert_trampolines(const struct pr_stack *st, uint64_t trampolines)
{
	for (size_t i = 0; i < st->nr; i++)
		ck_assert_uint_eq(st->frames[i].flags & (PR_FRAME_FP | PR_FRAME_SIGNAL),
				  i < 64 && (trampolines >> i & 1) ? PR_FRAME_SIGNAL : 0);
}

/* `scenario` run (it captures in a signal handler), and its snapshot
 * unwound into *st from the capture. */
static void unwind_scenario(void (*scenario)(void), struct replay *r, struct pr_stack *st)
{
	unwind_taken(scenario, WHOLE_STACK, 0, r, st);
	ck_assert_str_eq(name_of(&st->frames[0]), "ds_unwind_capture");
}

/* Through a signal handler: the trampoline is marked, the code the signal
 * interrupted is at its exact address, and its caller at its return
 * address minus one, as prunwind.h says (and perf shows). */
START_TEST(the_interrupted_frame_is_exact_and_its_callers_are_not)
{
	struct replay r;
	struct pr_stack st;

	unwind_scenario(ds_unwind_signalled, &r, &st);
	assert_signal_at(&st, 1, "ds_unwind_on_signal", interrupted_ip, "ds_unwind_interrupted");
	assert_caller_at(&st, 4, interrupted_ra, "ds_unwind_signalled");
	assert_trampolines(&st, 1u << 2);
	assert_reaches_main(&r, &st, 5);
	replay_free(&r);
}
END_TEST

/*
 * Through a trampoline of the program's own that has no CFI, right after
 * a function with some: neither libunwind nor the compiled rules know a
 * trampoline by its code, so its frame is stepped by the rule of the
 * function before it, the same from compiled rules as from libunwind
 * alone (which reading the code in the compiled rules' path did not
 * change: it handed the sample to libunwind).  The handler's frame is
 * right; the stack beyond the trampoline is not claimed.
 */
START_TEST(a_trampoline_without_cfi_is_stepped_as_libunwind_steps_it)
{
	struct pr_unwinder *slow;
	struct replay r;
	struct pr_stack st;

	unwind_scenario(ds_unwind_signalled_own_restorer, &r, &st);
	ck_assert_uint_ge(st.nr, 3);
	ck_assert_str_eq(name_of(&st.frames[1]), "ds_unwind_on_signal");
	ck_assert_uint_eq(st.frames[2].ip, (uintptr_t)ds_unwind_restorer - 1);
	ck_assert_str_eq(name_of(&st.frames[2]), "ds_unwind_before_restorer");
	slow = new_unwinder(r.model, 0, NO_RULE_CACHE);
	assert_same(&r, slow);
	pr_unwinder_free(slow);
	replay_free(&r);
}
END_TEST

/* A signal in a signal handler: each trampoline is marked, each
 * interrupted frame exact, and the stack goes on to main. */
START_TEST(nested_signal_frames_unwind_to_main)
{
	struct replay r;
	struct pr_stack st;

	unwind_scenario(ds_unwind_signalled_twice, &r, &st);
	assert_signal_at(&st, 1, "ds_unwind_on_nested", nested_ip,
			 "ds_unwind_interrupted_again");
	assert_caller_at(&st, 4, nested_ra, "ds_unwind_on_outer");
	assert_signal_at(&st, 4, "ds_unwind_on_outer", interrupted_ip, "ds_unwind_interrupted");
	assert_caller_at(&st, 7, interrupted_ra, "ds_unwind_signalled_twice");
	assert_trampolines(&st, 1u << 2 | 1u << 5);
	assert_reaches_main(&r, &st, 8);
	replay_free(&r);
}
END_TEST

/* On an alternate stack above the interrupted code: the frame the signal
 * interrupted is still found (its stack pointer goes down, which for any
 * other frame would end the stack as a loop), and the stack ends there,
 * its callers' stack not copied.  (How it ends is not asserted: as an
 * unwinder error, for now, where "truncated" or "outermost" would each
 * say something untrue.) */
START_TEST(a_handler_on_an_alternate_stack_reaches_the_interrupted_frame)
{
	struct replay r;
	struct pr_stack st;

	unwind_scenario(ds_unwind_on_alt_stack, &r, &st);
	assert_signal_at(&st, 1, "ds_unwind_on_signal", interrupted_ip, "ds_unwind_interrupted");
	ck_assert_msg(st.nr == 4 && st.end != PR_END_DEPTH && st.end != PR_END_OUTERMOST,
		      "%zu frames, ended: %s", (size_t)st.nr, pr_stack_end_name(st.end));
	assert_trampolines(&st, 1u << 2);
	replay_free(&r);
}
END_TEST

void add_signal_tests(TCase *tc)
{
	tcase_add_test(tc, the_interrupted_frame_is_exact_and_its_callers_are_not);
	tcase_add_test(tc, nested_signal_frames_unwind_to_main);
	tcase_add_test(tc, a_trampoline_without_cfi_is_stepped_as_libunwind_steps_it);
	tcase_add_test(tc, a_handler_on_an_alternate_stack_reaches_the_interrupted_frame);
}
