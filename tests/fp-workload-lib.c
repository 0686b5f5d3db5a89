/* SPDX-License-Identifier: Apache-2.0 */
/*
 * fp-workload's library, built -O2 -fomit-frame-pointer as most
 * distributions' libraries were: frames the kernel's frame-pointer walk
 * cannot see through (see fp-workload.c).
 */
#include <stdint.h>

#define NOINLINE __attribute__((noinline))

static volatile uint64_t lib_sink;

NOINLINE static uint64_t lib_inner(uint64_t (*cb)(uint64_t), uint64_t arg)
{
	/* Uses every callee-saved register, rbp among them: the caller's
	 * frame pointer is gone while cb runs. */
	uint64_t a = arg, b = arg * 3, c = arg * 5, d = arg * 7, e = arg * 11, f = arg * 13;

	__asm__ volatile("" : "+r"(a), "+r"(b), "+r"(c), "+r"(d), "+r"(e), "+r"(f));
	lib_sink = cb(a);
	__asm__ volatile("" : "+r"(a), "+r"(b), "+r"(c), "+r"(d), "+r"(e), "+r"(f));
	return lib_sink + a + b + c + d + e + f;
}

uint64_t fp_lib_walk(uint64_t (*cb)(uint64_t), uint64_t arg)
{
	return lib_inner(cb, arg + 1) + 1;
}
