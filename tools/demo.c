/* SPDX-License-Identifier: Apache-2.0 */
/*
 * dwarfsample-demo: a small CPU-bound program to profile.  Built with -O2
 * and without frame pointers, like most distribution code, so only DWARF
 * unwinding recovers its stacks.  Its call paths are known in advance:
 *
 *   main -> worker -> sort_batch -> qsort -> compare_items
 *   main -> worker -> walk_tree -> walk_tree ... -> leaf_work
 *   main -> worker -> sieve_primes
 *
 * usage: dwarfsample-demo [SECONDS [THREADS]]   (default 3 s, 2 threads)
 *
 * Each thread works for SECONDS of its own CPU time (on an idle machine, as
 * many seconds), so that a run is as many samples however busy the machine
 * is.
 */
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define NOINLINE __attribute__((noinline))

static volatile uint64_t sink;
static double seconds;

/* The calling thread's CPU time. */
static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

struct item {
	uint64_t key;
	char name[24];
};

NOINLINE static int compare_items(const void *a, const void *b)
{
	const struct item *x = a, *y = b;

	if (x->key != y->key)
		return x->key < y->key ? -1 : 1;
	return strcmp(x->name, y->name);
}

NOINLINE static void sort_batch(uint64_t *seed)
{
	enum { N = 4096 };
	static __thread struct item items[N];

	for (int i = 0; i < N; i++) {
		*seed = *seed * 6364136223846793005ull + 1442695040888963407ull;
		items[i].key = *seed >> 52;
		snprintf(items[i].name, sizeof(items[i].name), "item%llu",
			 (unsigned long long)(*seed >> 40));
	}
	qsort(items, N, sizeof(items[0]), compare_items);
	sink += items[N / 2].key;
}

NOINLINE static uint64_t leaf_work(uint64_t x)
{
	for (int i = 0; i < 2000; i++)
		x = (x ^ (x >> 13)) * 0x9e3779b97f4a7c15ull + (uint64_t)i;
	return x;
}

NOINLINE static uint64_t walk_tree(int depth, uint64_t x)
{
	if (depth == 0)
		return leaf_work(x);
	/* Two calls so the recursion is not a tail call the compiler could
	 * turn into a loop. */
	x = walk_tree(depth - 1, x + 1);
	return walk_tree(depth - 1, x ^ (uint64_t)depth) + 1;
}

NOINLINE static void sieve_primes(int limit)
{
	char *composite = calloc((size_t)limit + 1, 1);
	uint64_t count = 0;

	if (!composite)
		return;
	for (int i = 2; i <= limit; i++) {
		if (composite[i])
			continue;
		count++;
		for (long j = (long)i * i; j <= limit; j += i)
			composite[j] = 1;
	}
	free(composite);
	sink += count;
}

NOINLINE static void *worker(void *arg)
{
	uint64_t seed = (uintptr_t)arg + 1;
	double end = now() + seconds;

	while (now() < end) {
		sort_batch(&seed);
		sink += walk_tree(10, seed);
		sieve_primes(2000000);
	}
	return NULL;
}

int main(int argc, char **argv)
{
	int threads = argc > 2 ? atoi(argv[2]) : 2;
	pthread_t tids[64];

	seconds = argc > 1 ? atof(argv[1]) : 3.0;
	if (seconds <= 0 || threads < 1 || threads > 64) {
		fprintf(stderr, "usage: %s [SECONDS [THREADS (1-64)]]\n", argv[0]);
		return 2;
	}
	for (int i = 1; i < threads; i++)
		pthread_create(&tids[i], NULL, worker, (void *)(uintptr_t)i);
	worker(NULL);
	for (int i = 1; i < threads; i++)
		pthread_join(tids[i], NULL);
	printf("dwarfsample-demo: done (%llu)\n", (unsigned long long)(sink & 0xffff));
	return 0;
}
