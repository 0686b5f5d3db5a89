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
 *   fp-workload deep SECONDS           8 wide frames (512-byte arrays),
 *                                      then the recursion 40 deep: some
 *                                      8 KiB of stack, 55 frames
 *   fp-workload middle SECONDS         6 wide frames, fp_lib_walk(), its
 *                                      callback, 8 wide frames and the
 *                                      recursion 10 deep: the library in
 *                                      the middle, over 4 KiB from the top
 *   fp-workload truth SECONDS          leaf, deep and middle in turn, each
 *                                      about a third of the time
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

/* A frame over 512 bytes wide, as a function with a local buffer has
 * (indexed by value, or clang keeps only the bytes used). */
NOINLINE static uint64_t wide(int depth, uint64_t x, uint64_t (*inner)(uint64_t))
{
	volatile char buf[512];

	buf[x % sizeof(buf)] = (char)x;
	buf[(x >> 9) % sizeof(buf)] = (char)(x >> 8);
	if (depth <= 1)
		return inner(x + (uint64_t)buf[x % sizeof(buf)]);
	return wide(depth - 1, x + 1, inner) + (uint64_t)buf[(x >> 9) % sizeof(buf)];
}

NOINLINE static uint64_t recurse_40(uint64_t x)
{
	return recurse(40, x);
}

NOINLINE static uint64_t recurse_10(uint64_t x)
{
	return recurse(10, x);
}

NOINLINE static uint64_t deep(uint64_t x)
{
	return wide(8, x, recurse_40) + 1;
}

/* Called back by the library: the stack above it runs through the
 * library's frames. */
NOINLINE static uint64_t wide_callback(uint64_t x)
{
	return wide(8, x, recurse_10) + 1;
}

NOINLINE static uint64_t into_lib(uint64_t x)
{
	return fp_lib_walk(wide_callback, x) + 1;
}

NOINLINE static uint64_t middle(uint64_t x)
{
	return wide(6, x, into_lib) + 1;
}

/* Each shape for 10 ms of CPU time, whatever the compiler made of it;
 * the clock read (a system call, in libc) between some 2 ms of work.
 * The shallow leaf first: its stacks, complete from the copy, are what a
 * deep stack's tail joins libc's start from (unwind/join.c,
 * uw_join_root()), so no deep sample comes before one. */
static uint64_t truth_round(uint64_t x)
{
	static const struct {
		uint64_t (*fn)(uint64_t);
		int calls;
	} shapes[] = { { leaf_caller, 1 }, { deep, 8 }, { middle, 8 } };

	for (size_t i = 0; i < sizeof(shapes) / sizeof(shapes[0]); i++)
		for (double end = now() + 0.01; now() < end;)
			for (int k = 0; k < shapes[i].calls; k++)
				x += shapes[i].fn(x);
	return x;
}

int main(int argc, char **argv)
{
	int depth = 0;

	if (argc < 3 || (!strcmp(argv[1], "recurse") && argc < 4)) {
		fprintf(stderr, "usage: fp-workload recurse DEPTH SECONDS | "
			"lib|leaf|deep|middle|truth SECONDS\n");
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
		else if (!strcmp(argv[1], "deep"))
			sink += deep(sink);
		else if (!strcmp(argv[1], "middle"))
			sink += middle(sink);
		else if (!strcmp(argv[1], "truth"))
			sink += truth_round(sink);
		else
			sink += leaf_caller(sink);
	}
	return 0;
}
