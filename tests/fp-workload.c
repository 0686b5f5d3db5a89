/* SPDX-License-Identifier: Apache-2.0 */
/*
 * A workload for frame-pointer call chains, built by the tests the way
 * distributions build now (-O2 -fno-omit-frame-pointer
 * -mno-omit-leaf-frame-pointer), with gcc and with clang:
 *
 *   fp-workload recurse DEPTH SECONDS  recursion DEPTH deep, at whose
 *                                      bottom a loop with an inlined helper
 *   fp-workload lib SECONDS            the same 20 deep, then through
 *                                      fp_lib_walk() (fp-workload-lib.c,
 *                                      built without frame pointers) and
 *                                      back into this program's callback
 *   fp-workload leaf SECONDS           the work in fp_leaf() (fp-leaf.c,
 *                                      built -momit-leaf-frame-pointer):
 *                                      a leaf without a frame of its own
 *
 * SECONDS are of the process's CPU time.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define NOINLINE __attribute__((noinline))

/* fp-workload-lib.c: calls cb(arg) through frames without frame pointers. */
uint64_t fp_lib_walk(uint64_t (*cb)(uint64_t), uint64_t arg);
/* fp-leaf.c */
uint64_t fp_leaf(uint64_t x);

static volatile uint64_t sink;
static double deadline;

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* Inlined into work(): its frames name it as the inline chain. */
static inline __attribute__((always_inline)) uint64_t mix(uint64_t x, int i)
{
	return x * 6364136223846793005u + (uint64_t)i;
}

NOINLINE static uint64_t work(uint64_t x)
{
	for (int i = 0; i < 200000; i++)
		x = mix(x, i) ^ (x >> 17);
	return x;
}

NOINLINE static uint64_t recurse(int depth, uint64_t x)
{
	volatile char pad[64];

	pad[0] = (char)x;
	if (depth <= 1)
		return work(x + (uint64_t)pad[0]);
	return recurse(depth - 1, x + 1) + (uint64_t)pad[0];
}

NOINLINE static uint64_t callback(uint64_t x)
{
	return recurse(5, x);
}

NOINLINE static uint64_t through_lib(int depth, uint64_t x)
{
	if (depth > 1)
		return through_lib(depth - 1, x + 1) + 1;
	return fp_lib_walk(callback, x);
}

NOINLINE static uint64_t leaf_caller(uint64_t x)
{
	return fp_leaf(x) + 1;
}

int main(int argc, char **argv)
{
	int depth = 0;

	if (argc < 3 || (!strcmp(argv[1], "recurse") && argc < 4)) {
		fprintf(stderr, "usage: fp-workload recurse DEPTH SECONDS | lib SECONDS | "
			"leaf SECONDS\n");
		return 2;
	}
	if (!strcmp(argv[1], "recurse"))
		depth = atoi(argv[2]);
	deadline = now() + atof(argv[argc - 1]);
	while (now() < deadline) {
		if (!strcmp(argv[1], "recurse"))
			sink += recurse(depth, sink);
		else if (!strcmp(argv[1], "lib"))
			sink += through_lib(20, sink);
		else
			sink += leaf_caller(sink);
	}
	return 0;
}
