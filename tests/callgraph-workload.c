/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The call-graph tests' workload, built as distributions build code now
 * (-O2 -fno-omit-frame-pointer -mno-omit-leaf-frame-pointer): a known
 * call path main -> cg_outer -> cg_middle -> cg_leaf spinning, whose
 * frame-pointer chain the kernel walks, or, with "deep", cg_recurse
 * DEPTH levels deep spinning at the bottom, past the kernel's chain
 * limit (kernel.perf_event_max_stack, 127 by default).
 *
 * usage: callgraph-workload (flat|deep [DEPTH]) SECONDS
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static volatile unsigned long sink;

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

__attribute__((noinline)) static void cg_leaf(double until)
{
	while (now() < until)
		for (int i = 0; i < 10000; i++)
			sink += (unsigned long)i * 7;
}

__attribute__((noinline)) static void cg_middle(double until)
{
	cg_leaf(until);
	sink++;
}

__attribute__((noinline)) static void cg_outer(double until)
{
	cg_middle(until);
	sink++;
}

__attribute__((noinline)) static void cg_recurse(int depth, double until)
{
	if (depth > 0)
		cg_recurse(depth - 1, until);
	else
		cg_leaf(until);
	sink++;
}

int main(int argc, char **argv)
{
	double secs;

	if (argc < 3 || (strcmp(argv[1], "flat") && strcmp(argv[1], "deep"))) {
		fprintf(stderr, "usage: callgraph-workload (flat|deep [DEPTH]) SECONDS\n");
		return 2;
	}
	secs = atof(argv[argc - 1]);
	if (!strcmp(argv[1], "deep"))
		cg_recurse(argc > 3 ? atoi(argv[2]) : 300, now() + secs);
	else
		cg_outer(now() + secs);
	return 0;
}
