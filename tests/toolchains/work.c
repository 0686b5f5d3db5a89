/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The toolchain matrix's C workload (test-toolchains.sh builds it with
 * each compiler and linker): main() -> recurse() DEPTH frames deep -> spin(),
 * which loops for the CPU seconds given, calling an inlined helper (mix) and
 * a function of a shared library (tc_lib_step).  work.cc, work.rs and
 * work.go are the same program in C++, Rust and Go.
 */
#include <stdlib.h>
#include <time.h>

#include "tclib.h"

#define DEPTH 41

/* Without cloning, the symbol table and DWARF name each function alike
 * (no recurse.constprop.0); clang has no noclone and needs none. */
#ifdef __clang__
#define NOT_INLINED __attribute__((noinline))
#else
#define NOT_INLINED __attribute__((noinline, noclone))
#endif

static volatile unsigned long sink;

static inline __attribute__((always_inline)) unsigned long mix(unsigned long x)
{
	x ^= x >> 31;
	x *= 0x9e3779b97f4a7c15ul;
	return x ^ (x >> 29);
}

/* CPU time, not wall time: however loaded the machine, a run is about as
 * many samples.  It is read once per 20000 steps (about a millisecond) so
 * that samples in the C library's clock() are rare. */
NOT_INLINED unsigned long spin(double seconds)
{
	clock_t end = clock() + (clock_t)(seconds * CLOCKS_PER_SEC);
	unsigned long x = 1;

	do {
		for (int i = 0; i < 20000; i++)
			x = tc_lib_step(mix(x));
	} while (clock() < end);
	return x;
}

/* The store after the call keeps it from being a tail call, and the
 * recursion from becoming a loop. */
NOT_INLINED unsigned long recurse(int depth, double seconds)
{
	unsigned long r = depth > 1 ? recurse(depth - 1, seconds) : spin(seconds);

	sink = r;
	return r ^ (unsigned long)depth;
}

int main(int argc, char **argv)
{
	recurse(DEPTH, argc > 1 ? atof(argv[1]) : 1.0);
	return 0;
}
