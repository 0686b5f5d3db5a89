/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The thread-target tests' workload (test-tid-target.sh): a plain C
 * program whose main thread waits in pthread_join while two workers,
 * "worker-a" and "worker-b", compute, each in its own never-inlined
 * functions (a_outer -> a_spin, b_outer -> b_spin), so a stack tells
 * which thread it is.  It prints "a TID" and "b TID" once both run, then
 * the workers stop after SECONDS of wall time.
 *
 * usage: tid-workload SECONDS
 */
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#define NOINLINE __attribute__((noinline))

static volatile uint64_t sink;
static double seconds;
static pthread_barrier_t ready;

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

NOINLINE static void a_spin(void)
{
	for (int i = 0; i < 100000; i++)
		sink = sink * 31 + (uint64_t)i;
}

NOINLINE static void a_outer(double end)
{
	while (now() < end)
		a_spin();
}

NOINLINE static void b_spin(void)
{
	for (int i = 0; i < 100000; i++)
		sink = sink * 37 + (uint64_t)i;
}

NOINLINE static void b_outer(double end)
{
	while (now() < end)
		b_spin();
}

static void *worker(void *arg)
{
	int which = *(const int *)arg;
	double end;

	printf("%c %ld\n", which, (long)syscall(SYS_gettid));
	pthread_barrier_wait(&ready);
	end = now() + seconds;
	if (which == 'a')
		a_outer(end);
	else
		b_outer(end);
	return NULL;
}

int main(int argc, char **argv)
{
	static const int names[2] = { 'a', 'b' };
	pthread_t t[2];

	if (argc != 2 || (seconds = atof(argv[1])) <= 0) {
		fprintf(stderr, "usage: tid-workload SECONDS\n");
		return 2;
	}
	setvbuf(stdout, NULL, _IOLBF, 0);
	pthread_barrier_init(&ready, NULL, 3);
	for (int i = 0; i < 2; i++) {
		if (pthread_create(&t[i], NULL, worker, (void *)&names[i]))
			return 1;
		pthread_setname_np(t[i], i ? "worker-b" : "worker-a");
	}
	pthread_barrier_wait(&ready);
	for (int i = 0; i < 2; i++)
		pthread_join(t[i], NULL);
	return 0;
}
