/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Workloads for comparing dwarfsample's unwinding with perf's on the same
 * samples, built -O2 -fomit-frame-pointer like distribution code:
 *
 *   agree-workload recurse SECONDS   deep recursion with large frames (some
 *                                    stacks outgrow an 8 KiB copy) and a
 *                                    qsort comparator at the bottom
 *   agree-workload threads SECONDS   the same in four threads
 *   agree-workload climb SECONDS     45 levels deep, working at each level
 *   agree-workload paths SECONDS     40 levels deep, each a new random path
 *                                    through two functions per level
 *   agree-workload callers SECONDS   one computation 70 levels deep reached
 *                                    from three callers, a third of the
 *                                    time each, its frames the same bytes
 *   agree-workload deep SECONDS      a recursion 400 levels deep with small
 *                                    frames (some 6 KiB), working at the
 *                                    bottom
 *   agree-workload dlopen SECONDS LIB  load LIB, run its work, unload it,
 *                                    over and over: code that comes and goes
 *
 * SECONDS are of the process's CPU time, so that a run is as many samples
 * however busy the machine is.
 */
#include <dlfcn.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define NOINLINE __attribute__((noinline))

static volatile uint64_t sink;
static double deadline;

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

NOINLINE static int by_value(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	/* Enough work per comparison to be sampled here. */
	for (int i = 0; i < 20; i++)
		x = x * 31 + (uint64_t)i, y = y * 31 + (uint64_t)i;
	return (x > y) - (x < y);
}

NOINLINE static void sort_some(uint64_t seed)
{
	uint64_t v[512];

	for (int i = 0; i < 512; i++) {
		seed = seed * 6364136223846793005ull + 1442695040888963407ull;
		v[i] = seed >> 20;
	}
	qsort(v, 512, sizeof(v[0]), by_value);
	sink += v[256];
}

/* Each level keeps a 256-byte buffer live, so 40 levels need more than
 * the 8 KiB of stack perf copies by default. */
NOINLINE static uint64_t descend(int depth, uint64_t x)
{
	volatile uint64_t pad[32];

	for (int i = 0; i < 32; i++)
		pad[i] = x + (uint64_t)i;
	if (depth == 0) {
		sort_some(x);
		return pad[3];
	}
	x = descend(depth - 1, x * 7 + 1);
	return x + pad[depth % 32];
}

NOINLINE static void *recurse_loop(void *arg)
{
	uint64_t seed = (uintptr_t)arg;

	while (now() < deadline)
		for (int depth = 5; depth <= 45; depth += 10)
			sink += descend(depth, seed++);
	return NULL;
}

/* Spin about `us` microseconds of CPU. */
NOINLINE static uint64_t spin(uint64_t x, double us)
{
	double until = now() + us / 1e6;

	while (now() < until)
		for (int i = 0; i < 1000; i++)
			x = x * 6364136223846793005ull + 1442695040888963407ull;
	return x;
}

/* Climb: a recursion that works at every level on the way down and on
 * the way up (about 0.4 ms each), so that its samples fall at every
 * depth of one descent, which lasts some 40 ms. */
NOINLINE static uint64_t climb(int depth, uint64_t x)
{
	volatile uint64_t pad[32];

	for (int i = 0; i < 32; i++)
		pad[i] = x + (uint64_t)i;
	x = spin(x, 400);
	if (depth > 0)
		x = climb(depth - 1, x * 7 + 1);
	else
		sort_some(x);
	x = spin(x, 400);
	return x + pad[depth % 32];
}

/*
 * Paths: each descent takes a new pseudo-random path of 40 levels, each
 * level through one of two functions (two return addresses), with frames
 * of the same size, so that every descent puts a frame of the same
 * function at the same stack address, called through callers that
 * differ -- the case joining by return address and stack address alone
 * gets wrong when a sample falls in a later descent than the stack it
 * joins with.  The frames hold the same bytes whatever the path, but
 * for the path's bits, which each level's function keeps in its frame.
 */
static uint64_t path_state;

NOINLINE static uint64_t path_step(int depth, uint64_t bits);

NOINLINE static uint64_t path_left(int depth, uint64_t bits)
{
	volatile uint64_t pad[32];

	for (int i = 0; i < 32; i++)
		pad[i] = bits + (uint64_t)i;
	return path_step(depth - 1, bits >> 1) + pad[depth % 32];
}

NOINLINE static uint64_t path_right(int depth, uint64_t bits)
{
	volatile uint64_t pad[32];

	for (int i = 0; i < 32; i++)
		pad[i] = bits ^ (uint64_t)i;
	return path_step(depth - 1, bits >> 1) + pad[depth % 32];
}

NOINLINE static uint64_t path_step(int depth, uint64_t bits)
{
	if (depth == 0) {
		uint64_t x = bits;

		/* About 20 us: many descents between two samples. */
		for (int i = 0; i < 20000; i++)
			x = x * 6364136223846793005ull + 1442695040888963407ull;
		return x;
	}
	return (bits & 1) ? path_right(depth, bits) : path_left(depth, bits);
}

NOINLINE static void paths_loop(void)
{
	while (now() < deadline) {
		path_state = path_state * 6364136223846793005ull + 1442695040888963407ull;
		sink += path_step(40, path_state >> 11);
	}
}

/*
 * Callers: three handlers, each a third of the time at random, run the
 * same computation on the same input: a recursion 70 levels deep (some
 * 20 KiB of stack) that works a little at every level from the 10th
 * down, some 0.6 ms a call, so that two samples mostly fall in different
 * calls.  Its frames are the same bytes whoever called it; only the
 * return address into the handler, beyond what a small copy reaches,
 * tells the callers apart.  A parser or an allocator called from
 * several request handlers, at its most adversarial for joining.
 */
NOINLINE static uint64_t burn(uint64_t x, int n)
{
	for (int i = 0; i < n; i++)
		x = x * 6364136223846793005ull + 1442695040888963407ull;
	return x;
}

NOINLINE static uint64_t compute(int depth, uint64_t x)
{
	volatile uint64_t pad[32];

	for (int i = 0; i < 32; i++)
		pad[i] = x + (uint64_t)i;
	/* Deterministic work: the frames below hold the same bytes. */
	if (depth < 60)
		sink += burn(x, 4000);
	if (depth > 0)
		x = compute(depth - 1, x * 7 + 1);
	return x + pad[depth % 32];
}

NOINLINE static uint64_t handler_a(uint64_t x)
{
	return compute(70, x) + 1;
}

NOINLINE static uint64_t handler_b(uint64_t x)
{
	return compute(70, x) + 2;
}

NOINLINE static uint64_t handler_c(uint64_t x)
{
	return compute(70, x) + 3;
}

NOINLINE static void callers_loop(void)
{
	uint64_t pick = 1;

	while (now() < deadline) {
		pick = pick * 6364136223846793005ull + 1442695040888963407ull;
		switch ((pick >> 33) % 3) {
		case 0: sink += handler_a(1); break;
		case 1: sink += handler_b(1); break;
		default: sink += handler_c(1); break;
		}
	}
}

/* Deep: more frames than the old default --max-depth of 127 in far less
 * stack than the copy, as an interpreter's or a parser's recursion has. */
NOINLINE static uint64_t deep(int depth, uint64_t x)
{
	if (depth == 0)
		return burn(x, 200000);
	return deep(depth - 1, x * 3 + 1) ^ (uint64_t)depth;
}

typedef uint64_t (*work_fn)(uint64_t);

NOINLINE static void dlopen_loop(const char *lib)
{
	while (now() < deadline) {
		void *h = dlopen(lib, RTLD_NOW | RTLD_LOCAL);
		work_fn work;

		if (!h) {
			fprintf(stderr, "agree-workload: %s\n", dlerror());
			exit(1);
		}
		work = (work_fn)(uintptr_t)dlsym(h, "agree_lib_work");
		if (!work) {
			fprintf(stderr, "agree-workload: no agree_lib_work in %s\n", lib);
			exit(1);
		}
		sink += work(sink);
		dlclose(h);
		/* Something of our own between the library's lifetimes. */
		sort_some(sink);
	}
}

int main(int argc, char **argv)
{
	if (argc < 3) {
		fprintf(stderr, "usage: agree-workload recurse|threads|climb|paths|callers|deep|dlopen SECONDS [LIB]\n");
		return 2;
	}
	deadline = now() + atof(argv[2]);
	if (!strcmp(argv[1], "recurse")) {
		recurse_loop((void *)1);
	} else if (!strcmp(argv[1], "threads")) {
		pthread_t t[4];

		for (uintptr_t i = 0; i < 4; i++)
			pthread_create(&t[i], NULL, recurse_loop, (void *)(i + 1));
		for (int i = 0; i < 4; i++)
			pthread_join(t[i], NULL);
	} else if (!strcmp(argv[1], "climb")) {
		for (uint64_t seed = 1; now() < deadline; seed++)
			sink += climb(45, seed);
	} else if (!strcmp(argv[1], "paths")) {
		paths_loop();
	} else if (!strcmp(argv[1], "deep")) {
		for (uint64_t seed = 1; now() < deadline; seed++)
			sink += deep(400, seed);
	} else if (!strcmp(argv[1], "callers")) {
		callers_loop();
	} else if (!strcmp(argv[1], "dlopen") && argc == 4) {
		dlopen_loop(argv[3]);
	} else {
		fprintf(stderr, "agree-workload: unknown mode %s\n", argv[1]);
		return 2;
	}
	return sink == 42;
}
