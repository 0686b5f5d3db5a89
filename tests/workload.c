/* SPDX-License-Identifier: Apache-2.0 */
/*
 * A workload the live tests drive.  `workload spin SECONDS` burns CPU and
 * exits.  `workload serve` reads one-letter commands on stdin, so a test can
 * attach first and then make things happen, and answers each with a line on
 * stdout ("ok", or a number for commands that create a task):
 *
 *   c  spin 1 s in a frame holding WORKLOAD_CANARY on the stack
 *   s  spin 0.5 s
 *   t  start a thread that spins 1 s; answer its tid, then "ok" once joined
 *   T  start threads 250 us apart, each living 0.3 s and running 1 ms
 *      in 5, until the next byte arrives on stdin (at most 8000); "ok"
 *      once all are joined: a storm to attach in
 *   f  fork a child that spins 0.5 s; answer its pid, then "ok" once reaped
 *   m  map this executable with PROT_EXEC (an MMAP2 for the test to see)
 *   n  rename the main thread to "ds-renamed" (a COMM without exec)
 *   q  exit 0
 *
 * `workload forks SECONDS` forks short-lived children for that long: the
 * parent on CPU 0, each child moving to CPU 1 and spinning 4 ms, while
 * another child keeps CPU 0's ring busy with deep stacks.  Its children
 * are sampled on one CPU while their FORK is written on the other: a
 * profiler that does not order records across CPUs meets samples of
 * processes it has not heard of yet.
 */
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <sched.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "workload.h"

#define NOINLINE __attribute__((noinline))

static volatile uint64_t sink;

/* The thread's CPU time: a spin of N seconds is N seconds of CPU, and
 * as many samples, however busy the machine is. */
static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static double wall(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

NOINLINE static void spin_inner(double until)
{
	while (now() < until)
		for (int i = 0; i < 10000; i++)
			sink = sink * 31 + (uint64_t)i;
}

NOINLINE static void spin(double seconds)
{
	spin_inner(now() + seconds);
	__asm__ volatile("" ::: "memory");
}

/* The canary lives in this frame while everything below it runs, so every
 * stack snapshot taken meanwhile holds it a few hundred bytes above SP. */
NOINLINE static void canary_frame(double seconds)
{
	volatile uint64_t canary[4];

	for (int i = 0; i < 4; i++)
		canary[i] = WORKLOAD_CANARY;
	spin(seconds);
	sink += canary[0] ^ canary[3];
}

static void *thread_main(void *arg)
{
	(void)arg;
	printf("%ld\n", (long)syscall(SYS_gettid));
	fflush(stdout);
	spin(1.0);
	return NULL;
}

/* Mostly asleep, so hundreds can live at once, but on a CPU often enough
 * to be sampled. */
static void *storm_thread(void *arg)
{
	double until = wall() + 0.3;

	(void)arg;
	while (wall() < until) {
		spin(0.001);
		usleep(4000);
	}
	return NULL;
}

/* Is a byte waiting on stdin, or has it closed?  (Only read() by getchar()
 * later: the test writes the next command after the storm's, never with
 * it.) */
static bool input_waiting(void)
{
	struct pollfd pfd = { .fd = 0, .events = POLLIN };

	return poll(&pfd, 1, 0) == 1;
}

/* Threads born one after another until the next command arrives, or
 * stdin closes, so that attaching -- however slowly -- happens in the
 * middle of it.  (A cap on their number once ended it before a test under
 * valgrind on a fast machine had attached: 8000 threads take 2 s there.)
 * At most RING are unjoined at once: the oldest is joined (it is nearly
 * done by then) before its slot is reused. */
static void thread_storm(void)
{
	enum { RING = 1024 };
	static pthread_t t[RING];
	static bool live[RING];
	unsigned n = 0;

	while (!input_waiting()) {
		int i = n++ % RING;

		if (live[i])
			pthread_join(t[i], NULL);
		live[i] = pthread_create(&t[i], NULL, storm_thread, NULL) == 0;
		usleep(250);
	}
	for (int i = 0; i < RING; i++) {
		if (live[i])
			pthread_join(t[i], NULL);
		live[i] = false;
	}
}

static void map_self(void)
{
	int fd = open("/proc/self/exe", O_RDONLY | O_CLOEXEC);
	void *p;

	if (fd < 0)
		exit(3);
	p = mmap(NULL, 4096, PROT_READ | PROT_EXEC, MAP_PRIVATE, fd, 0);
	if (p == MAP_FAILED)
		exit(3);
	close(fd);
	/* Left mapped: the test reads /proc/PID/maps afterwards. */
}

static int serve(void)
{
	int c;

	setvbuf(stdout, NULL, _IOLBF, 0);
	while ((c = getchar()) != EOF) {
		switch (c) {
		case 'c':
			canary_frame(1.0);
			break;
		case 's':
			spin(0.5);
			break;
		case 't': {
			pthread_t t;

			pthread_create(&t, NULL, thread_main, NULL);
			pthread_join(t, NULL);
			break;
		}
		case 'T':
			thread_storm();
			break;
		case 'f': {
			pid_t pid = fork();

			if (pid == 0) {
				spin(0.5);
				_exit(0);
			}
			printf("%d\n", (int)pid);
			waitpid(pid, NULL, 0);
			break;
		}
		case 'm':
			map_self();
			break;
		case 'n':
			prctl(PR_SET_NAME, "ds-renamed");
			break;
		case 'q':
			return 0;
		default:
			continue;
		}
		printf("ok\n");
	}
	return 0;
}

static void pin(int cpu)
{
	cpu_set_t set;

	CPU_ZERO(&set);
	CPU_SET(cpu, &set);
	sched_setaffinity(0, sizeof(set), &set);
}

NOINLINE static uint64_t deep(int depth)
{
	volatile char pad[600];

	pad[0] = (char)depth;
	if (!depth) {
		spin(0.002);
		return sink;
	}
	return deep(depth - 1) + (uint64_t)pad[0];
}

NOINLINE static void forks(double seconds)
{
	double end = wall() + seconds;
	pid_t busy = fork();

	if (busy == 0) {
		pin(0);
		while (wall() < end)
			sink += deep(40);
		_exit(0);
	}
	pin(0);
	while (wall() < end) {
		pid_t pid = fork();

		if (pid == 0) {
			pin(1);
			spin(0.004);
			_exit(0);
		}
		waitpid(pid, NULL, 0);
	}
	waitpid(busy, NULL, 0);
}

int main(int argc, char **argv)
{
	if (argc == 3 && !strcmp(argv[1], "spin")) {
		spin(atof(argv[2]));
		return 0;
	}
	if (argc == 3 && !strcmp(argv[1], "forks")) {
		forks(atof(argv[2]));
		return 0;
	}
	if (argc == 2 && !strcmp(argv[1], "serve"))
		return serve();
	fprintf(stderr, "usage: workload spin SECONDS | workload forks SECONDS | workload serve\n");
	return 2;
}
