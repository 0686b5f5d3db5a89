/* SPDX-License-Identifier: Apache-2.0 */
/*
 * A switch-heavy workload for off-CPU profiling: two threads pass one byte
 * back and forth over two pipes, so each round trip blocks each thread once
 * (two switches out, two back in).  It reports its own cost, which is
 * where the kernel's work for a profiler's switch-out samples shows (the
 * sample is written in the context of the task switching out):
 *
 *   pingpong ROUNDS [WORK_US]
 *   rounds 20000 elapsed 0.278 s rate 71893/s switches 20831+19184 user 0.083 s sys 0.070 s
 *
 * "switches" counts the voluntary and involuntary context switches of the
 * process (getrusage ru_nvcsw + ru_nivcsw): the switch-out samples an
 * off-CPU profiler takes.  WORK_US (default 0) is busy time the first thread
 * spends before each round trip: it sets the switch rate (about 50 us for
 * 20 000 switches out per second) without adding switches of its own.
 * Built -O2 -fomit-frame-pointer with unwind tables, as distributions
 * build code, so its stacks need DWARF to unwind.
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

struct side {
	int in, out;
	long rounds;
};

static double now(void);

/* Compute, without blocking, for `us` microseconds. */
__attribute__((noinline)) static void work(double us)
{
	double end = now() + us / 1e6;

	while (now() < end)
		;
}

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static double seconds(struct timeval tv)
{
	return (double)tv.tv_sec + (double)tv.tv_usec / 1e6;
}

/* Kept out of line so that stacks show a frame of the workload's own
 * between the thread's start and the blocking read. */
__attribute__((noinline)) static int pass_byte(int in, int out, int first)
{
	char c = 'x';

	if (first && write(out, &c, 1) != 1)
		return -1;
	if (read(in, &c, 1) != 1)
		return -1;
	return first ? 0 : (write(out, &c, 1) == 1 ? 0 : -1);
}

static void *echo(void *arg)
{
	struct side *s = arg;

	for (long i = 0; i < s->rounds; i++)
		if (pass_byte(s->in, s->out, 0))
			break;
	return NULL;
}

int main(int argc, char **argv)
{
	int ab[2], ba[2];
	struct side echoer;
	struct rusage ru;
	pthread_t t;
	long rounds = argc > 1 ? atol(argv[1]) : 100000;
	double work_us = argc > 2 ? atof(argv[2]) : 0;
	double start, elapsed;

	if (rounds <= 0 || pipe(ab) || pipe(ba)) {
		fprintf(stderr, "usage: pingpong ROUNDS [WORK_US]\n");
		return 2;
	}
	echoer = (struct side){ ab[0], ba[1], rounds };
	start = now();
	if (pthread_create(&t, NULL, echo, &echoer))
		return 1;
	for (long i = 0; i < rounds; i++) {
		if (work_us > 0)
			work(work_us);
		if (pass_byte(ba[0], ab[1], 1))
			return 1;
	}
	pthread_join(t, NULL);
	elapsed = now() - start;
	getrusage(RUSAGE_SELF, &ru);
	printf("rounds %ld elapsed %.3f s rate %.0f/s switches %ld+%ld user %.3f s sys %.3f s\n",
	       rounds, elapsed, (double)rounds / elapsed, ru.ru_nvcsw, ru.ru_nivcsw,
	       seconds(ru.ru_utime), seconds(ru.ru_stime));
	return 0;
}
