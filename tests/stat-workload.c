/* SPDX-License-Identifier: Apache-2.0 */
/*
 * A workload whose event counts are known in advance: the oracle of the
 * counting and event-sampling tests (test-counter.c, the stat command's,
 * the -e sampling tests).  Each mode does its work in a named function
 * that is never inlined, so a sample's stack can be checked by name, and
 * does nothing else that the counted event would see more than a few
 * dozen times (the startup's own faults and switches, which a test
 * measures with N = 0).
 *
 * usage: stat-workload [-g] MODE N
 *   -g        once set up (threads created, nothing counted yet done),
 *             print "ready" on standard output and wait for a byte on
 *             standard input: a test opens its counters on the PID then
 *   pages N   touch N fresh pages, one write each, in touch_pages()
 *             (main -> run_pages -> touch_pages): N page faults
 *   pipe K    K round trips of a byte over two pipes between the main
 *             thread (ping()) and a second one (pong()), both on one CPU:
 *             every round trip switches each thread out at least once, so
 *             at least 2K context switches, K in each thread
 *   migrate M move itself between CPU 0 and CPU 1 M times with
 *             sched_setaffinity(): at least M CPU migrations (exits 77
 *             when CPUs 0 and 1 are not both usable)
 *   write K   K write(2) calls of a byte to /dev/null from do_writes()
 *   pages-thread N
 *             pages N in a second thread (pages_thread -> run_pages ->
 *             touch_pages), the main thread waiting for it: the N faults
 *             are the second thread's, the main one's only its start's
 *   fault-rate RATE SECONDS
 *             RATE page faults a second for SECONDS, in batches every
 *             millisecond (fault_steadily -> touch_pages), then
 *             "cpu SECONDS", its own CPU time: the benchmark's
 *             high-rate event
 */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

/* Never inlined, and never cloned for a constant argument (a clone is
 * named "fn.constprop.0"). */
#define NOINLINE __attribute__((noinline, noclone))

static void die(const char *what)
{
	fprintf(stderr, "stat-workload: %s: %s\n", what, strerror(errno));
	exit(1);
}

/* One write per page: a read of an untouched anonymous page maps the
 * shared zero page, and a write after it would fault a second time. */
NOINLINE static void touch_pages(volatile char *p, long n, long page)
{
	for (long i = 0; i < n; i++)
		p[i * page] = 1;
}

/* N fresh pages, each to fault at its first write. */
static char *map_fresh(long n, long page)
{
	char *p = mmap(NULL, (size_t)(n * page), PROT_READ | PROT_WRITE,
		       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	if (p == MAP_FAILED)
		die("mmap");
	/* A transparent huge page would take 512 pages in one fault. */
	if (madvise(p, (size_t)(n * page), MADV_NOHUGEPAGE) && errno != EINVAL)
		die("madvise");
	return p;
}

NOINLINE static void run_pages(long n)
{
	long page = sysconf(_SC_PAGESIZE);
	char *p;

	if (n == 0)
		return;
	p = map_fresh(n, page);
	touch_pages(p, n, page);
	munmap(p, (size_t)(n * page));
}

NOINLINE static void *pages_thread(void *arg)
{
	run_pages(*(long *)arg);
	return NULL;
}

/* RATE faults a second: a fresh mapping every millisecond, touched and
 * unmapped, the next batch due at the next millisecond. */
NOINLINE static void fault_steadily(long rate, long seconds)
{
	long page = sysconf(_SC_PAGESIZE), batch = rate / 1000 ? rate / 1000 : 1;
	struct timespec next;

	clock_gettime(CLOCK_MONOTONIC, &next);
	for (long ms = 0; ms < seconds * 1000; ms++) {
		char *p = map_fresh(batch, page);

		touch_pages(p, batch, page);
		munmap(p, (size_t)(batch * page));
		next.tv_nsec += 1000000;
		if (next.tv_nsec >= 1000000000) {
			next.tv_sec++;
			next.tv_nsec -= 1000000000;
		}
		clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &next, NULL);
	}
}

struct pingpong {
	int to_pong[2], to_ping[2];
	long rounds;
};

static void transfer(int from, int to)
{
	char c;

	if (read(from, &c, 1) != 1)
		die("read from the pipe");
	if (to >= 0 && write(to, &c, 1) != 1)
		die("write to the pipe");
}

/* Waits for a byte before each of its answers and once after the last:
 * each answer is followed by a wait that only ping's next byte ends. */
NOINLINE static void *pong(void *arg)
{
	struct pingpong *pp = arg;

	for (long i = 0; i < pp->rounds; i++)
		transfer(pp->to_pong[0], pp->to_ping[1]);
	transfer(pp->to_pong[0], -1);
	return NULL;
}

NOINLINE static void ping(struct pingpong *pp)
{
	for (long i = 0; i <= pp->rounds; i++) {
		if (write(pp->to_pong[1], "x", 1) != 1)
			die("write to the pipe");
		if (i < pp->rounds)
			transfer(pp->to_ping[0], -1);
	}
}

/* Both threads on the CPU this one may use first.  On one CPU a thread
 * waiting for the other's byte cannot get it without leaving the CPU:
 * ping leaves it after each of its K bytes, pong after each of its K
 * answers (pong's one wait before the first byte may end without a
 * switch).  On two CPUs a reader could find the byte already there and
 * not switch at all. */
static void one_cpu(void)
{
	cpu_set_t set;

	if (sched_getaffinity(0, sizeof(set), &set))
		die("sched_getaffinity");
	for (int cpu = 0; cpu < CPU_SETSIZE; cpu++) {
		if (CPU_ISSET(cpu, &set)) {
			CPU_ZERO(&set);
			CPU_SET(cpu, &set);
			if (sched_setaffinity(0, sizeof(set), &set))
				die("sched_setaffinity");
			return;
		}
	}
}

static void move_to(int cpu)
{
	cpu_set_t set;

	CPU_ZERO(&set);
	CPU_SET(cpu, &set);
	if (sched_setaffinity(0, sizeof(set), &set))
		die("sched_setaffinity");
	/* Moving the caller itself is done before the call returns. */
	if (sched_getcpu() != cpu) {
		fprintf(stderr, "stat-workload: still on CPU %d, not %d\n", sched_getcpu(), cpu);
		exit(1);
	}
}

NOINLINE static void migrate(long n)
{
	for (long i = 0; i < n; i++)
		move_to(i % 2 ? 0 : 1);
}

static void need_two_cpus(void)
{
	cpu_set_t set;

	if (sched_getaffinity(0, sizeof(set), &set))
		die("sched_getaffinity");
	if (!CPU_ISSET(0, &set) || !CPU_ISSET(1, &set)) {
		fprintf(stderr, "stat-workload: migrate needs CPUs 0 and 1 (online and allowed)\n");
		exit(77);
	}
}

NOINLINE static void do_writes(int fd, long n)
{
	for (long i = 0; i < n; i++)
		if (write(fd, "x", 1) != 1)
			die("write to /dev/null");
}

/* -g: the test attaches now. */
static void wait_go(int go)
{
	char c;

	if (!go)
		return;
	printf("ready\n");
	fflush(stdout);
	if (read(0, &c, 1) != 1)
		exit(1);
}

static int usage(void)
{
	fprintf(stderr, "usage: stat-workload [-g] pages|pipe|migrate|write|pages-thread N\n"
			"       stat-workload fault-rate RATE SECONDS\n");
	return 2;
}

int main(int argc, char **argv)
{
	int go = argc > 1 && !strcmp(argv[1], "-g");
	const char *mode;
	char *end;
	long n;

	if (argc == 4 && !strcmp(argv[1], "fault-rate")) {
		long rate = strtol(argv[2], &end, 10), seconds;

		if (*end || rate <= 0)
			return usage();
		seconds = strtol(argv[3], &end, 10);
		if (*end || seconds <= 0)
			return usage();
		fault_steadily(rate, seconds);
		/* Its own CPU, for the benchmark to tell a profiler's apart:
		 * whatever the kernel spends sampling it is in here too. */
		struct rusage ru;

		getrusage(RUSAGE_SELF, &ru);
		printf("cpu %.6f\n", (double)(ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) +
					  (double)(ru.ru_utime.tv_usec + ru.ru_stime.tv_usec) / 1e6);
		return 0;
	}
	if (argc != 3 + go)
		return usage();
	mode = argv[1 + go];
	n = strtol(argv[2 + go], &end, 10);
	if (*end || end == argv[2 + go] || n < 0)
		return usage();

	if (!strcmp(mode, "pages")) {
		wait_go(go);
		run_pages(n);
	} else if (!strcmp(mode, "pages-thread")) {
		pthread_t t;

		wait_go(go);
		errno = pthread_create(&t, NULL, pages_thread, &n);
		if (errno)
			die("pthread_create");
		pthread_join(t, NULL);
	} else if (!strcmp(mode, "pipe")) {
		struct pingpong pp = { .rounds = n };
		pthread_t t;

		one_cpu();
		if (pipe(pp.to_pong) || pipe(pp.to_ping))
			die("pipe");
		errno = pthread_create(&t, NULL, pong, &pp);
		if (errno)
			die("pthread_create");
		wait_go(go);
		ping(&pp);
		pthread_join(t, NULL);
	} else if (!strcmp(mode, "migrate")) {
		need_two_cpus();
		move_to(0);
		wait_go(go);
		migrate(n);
	} else if (!strcmp(mode, "write")) {
		int fd = open("/dev/null", O_WRONLY | O_CLOEXEC);

		if (fd < 0)
			die("/dev/null");
		wait_go(go);
		do_writes(fd, n);
		close(fd);
	} else {
		return usage();
	}
	return 0;
}
