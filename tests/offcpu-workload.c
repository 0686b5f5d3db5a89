/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The off-CPU tests' workload (test-offcpu-live.sh) and bench-offcpu's
 * ping-pong.  Each thread that matters makes its blocking call from a
 * named, never-inlined function, so its stacks can be checked by name,
 * and measures itself: at its start and end it reads CLOCK_MONOTONIC (the
 * clock the profiler's events use), its CPU time (CLOCK_THREAD_CPUTIME_ID,
 * exact even while it runs) and its run-queue wait (the second field of
 * /proc/self/task/TID/schedstat), and around every blocking call the
 * run-queue wait and the time spent inside it.  The truth goes to the file
 * given with -o, one line per thread (see write_truth()).
 *
 * usage: offcpu-workload [-g] [-o TRUTH] MODE [SECONDS [RATE]]
 *   -g     wait for a byte on standard input before starting (a test
 *          attaches its profilers first)
 * Modes (SECONDS defaults to 2):
 *   sleep     "sleeper": 3 ms computing, about 7 ms in nanosleep, in
 *             turn: 70 % of its time asleep
 *   mutex     "mutex-waiter" blocked on a mutex "mutex-holder" holds
 *             200 ms at a time
 *   pipe      "pipe-reader" blocked in read() on a pipe "pipe-writer"
 *             writes a byte to every 200 ms
 *   poll      "poller" blocked in poll() on such a pipe
 *   preempt   "preempt-a" and "preempt-b" computing on one CPU, each
 *             preempted about half the time
 *   mix       all of the above at once
 *   fork      "fork-blocker" blocked in read() while the main thread
 *             forks four children ("fork-child"), each asleep 150 ms
 *   exec      "exec-blocker" blocked in read() when the main thread
 *             ("exec-before", asleep 300 ms first) execs this program,
 *             which sleeps 300 ms again ("exec-after") and exits
 *   exit      a child whose two threads ("exit-victim") are blocked in
 *             read() for a second when it is killed with SIGKILL; this
 *             process then lives on for 500 ms
 *   pingpong  "ping" and "pong" bouncing a byte over two pipes, RATE
 *             round trips a second (0: as fast as they can), each round
 *             trip two switches; the truth counts their context switches
 *   deep      "deep-waiter": the main thread 40 calls down (dive, 256
 *             bytes of stack each), asleep 5 ms at a time in nap: waits
 *             whose stacks outgrow a small copy
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <poll.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

/* Never inlined, and never cloned for a constant argument (a clone is
 * named "fn.constprop.0"). */
#define NOINLINE __attribute__((noinline, noclone))
#define MS 1000000ull

/* What a thread knows about itself; the deltas are over [t0, t1]. */
struct truth {
	const char *role;
	pid_t pid, tid;
	int schedstat_fd;
	uint64_t t0, t1;         /* CLOCK_MONOTONIC, ns */
	uint64_t run0, run1;     /* CPU time, ns */
	uint64_t rq0, rq1;       /* run-queue wait (schedstat), ns */
	uint64_t rq_block;       /* run-queue wait accrued inside blocking calls */
	uint64_t in_block;       /* time spent inside blocking calls */
	uint64_t n_block;        /* blocking calls made */
	uint64_t csw0, csw1;     /* voluntary + involuntary context switches */
	uint64_t dead_by;        /* a thread killed while blocked: a time by
				  * which it had died, its wait ended (0: none) */
};

static int truth_fd = -1;
static double seconds = 2;
static unsigned long rate;
static volatile uint64_t sink;
static char self_path[4096];
static const char *truth_path;

static void die(const char *what)
{
	perror(what);
	exit(3);
}

static uint64_t mono(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static uint64_t thread_cpu(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/* schedstat: "run-ns run-queue-wait-ns timeslices"; pread at 0 makes
 * the kernel print it afresh. */
static void schedstat(int fd, uint64_t *run, uint64_t *rq)
{
	char buf[128];
	ssize_t n = pread(fd, buf, sizeof(buf) - 1, 0);
	unsigned long long r, w;

	if (n <= 0)
		die("schedstat");
	buf[n] = '\0';
	if (sscanf(buf, "%llu %llu", &r, &w) != 2)
		die("schedstat");
	if (run)
		*run = r;
	*rq = w;
}

static int open_schedstat(pid_t pid, pid_t tid)
{
	char path[64];
	int fd;

	snprintf(path, sizeof(path), "/proc/%d/task/%d/schedstat", (int)pid, (int)tid);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		die(path);
	return fd;
}

/* voluntary_ctxt_switches + nonvoluntary_ctxt_switches of a thread. */
static uint64_t switches(pid_t tid)
{
	char path[64], line[256];
	uint64_t sum = 0;
	unsigned long long v;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/self/task/%d/status", (int)tid);
	f = fopen(path, "re");
	if (!f)
		die(path);
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "voluntary_ctxt_switches: %llu", &v) == 1 ||
		    sscanf(line, "nonvoluntary_ctxt_switches: %llu", &v) == 1)
			sum += v;
	fclose(f);
	return sum;
}

/* The time, the run-queue wait and (when `run` is not NULL) the CPU time,
 * as of one instant: read again until no run-queue wait came between the
 * readings, as it does when the thread is preempted among them (a wait
 * then in one delta and not in the other). */
static void snapshot(int fd, uint64_t *ns, uint64_t *rq, uint64_t *run)
{
	uint64_t again;

	schedstat(fd, NULL, rq);
	for (;;) {
		if (run)
			*run = thread_cpu();
		*ns = mono();
		schedstat(fd, NULL, &again);
		if (again == *rq)
			return;
		*rq = again;
	}
}

/* The first thing a measured thread does. */
static void truth_begin(struct truth *t, const char *role)
{
	memset(t, 0, sizeof(*t));
	t->role = role;
	t->pid = getpid();
	t->tid = (pid_t)syscall(SYS_gettid);
	t->schedstat_fd = open_schedstat(t->pid, t->tid);
	t->csw0 = switches(t->tid);
	snapshot(t->schedstat_fd, &t->t0, &t->rq0, &t->run0);
}

/* The last thing it does. */
static void truth_end(struct truth *t)
{
	snapshot(t->schedstat_fd, &t->t1, &t->rq1, &t->run1);
	t->csw1 = switches(t->tid);
	close(t->schedstat_fd);
}

/* Around each blocking call: the thread is on a CPU at both points, so
 * the run-queue wait accrued between them is the wait between being woken
 * and running again -- which the profiler counts in the blocked interval
 * and schedstat in the run-queue wait. */
struct blocking {
	uint64_t t, rq;
};

static void block_begin(struct truth *t, struct blocking *b)
{
	snapshot(t->schedstat_fd, &b->t, &b->rq, NULL);
}

static void block_end(struct truth *t, const struct blocking *b)
{
	uint64_t now, rq;

	snapshot(t->schedstat_fd, &now, &rq, NULL);
	t->in_block += now - b->t;
	t->rq_block += rq - b->rq;
	t->n_block++;
}

/* One line per thread, in one write (O_APPEND: children and an exec'd
 * image append to the same file):
 *   role=R pid=P tid=T t0=NS t1=NS run=NS rq=NS rq_block=NS in_block=NS
 *   n_block=N csw=N dead_by=NS
 * run, rq and csw are deltas over [t0, t1].  A thread killed while blocked
 * was last seen blocked at t1 and had died by dead_by: its wait ended
 * between the two (its wake-up to die is not measured). */
static void write_truth(const struct truth *t)
{
	char line[512];
	int n = snprintf(line, sizeof(line),
			 "role=%s pid=%d tid=%d t0=%" PRIu64 " t1=%" PRIu64 " run=%" PRIu64
			 " rq=%" PRIu64 " rq_block=%" PRIu64 " in_block=%" PRIu64
			 " n_block=%" PRIu64 " csw=%" PRIu64 " dead_by=%" PRIu64 "\n",
			 t->role, (int)t->pid, (int)t->tid, t->t0, t->t1, t->run1 - t->run0,
			 t->rq1 - t->rq0, t->rq_block, t->in_block, t->n_block,
			 t->csw1 - t->csw0, t->dead_by);

	if (truth_fd >= 0 && write(truth_fd, line, (size_t)n) != n)
		die("write truth");
}

NOINLINE static void compute_until(uint64_t end)
{
	while (mono() < end)
		for (int i = 0; i < 1000; i++)
			sink = sink * 31 + (uint64_t)i;
	__asm__ volatile("" ::: "memory");
}

static void sleep_ns(uint64_t ns)
{
	struct timespec ts = { (time_t)(ns / 1000000000ull), (long)(ns % 1000000000ull) };

	while (nanosleep(&ts, &ts) && errno == EINTR)
		;
}

/* --- sleep: 30 % computing, 70 % asleep --- */

NOINLINE static void nap(struct truth *t, uint64_t ns)
{
	struct blocking b;
	struct timespec ts = { (time_t)(ns / 1000000000ull), (long)(ns % 1000000000ull) };

	block_begin(t, &b);
	nanosleep(&ts, NULL);
	block_end(t, &b);
}

/* 3 ms computing, then a nap long enough that the time spent napping so
 * far is 70 % of the time since the start (7 ms on an idle machine).  On
 * a busy one the thread is also preempted while computing, and a
 * fixed 7 ms nap would leave it asleep for less than 70 % of the time:
 * steering each nap keeps the share the test expects whatever the load. */
static void *sleeper_thread(void *arg)
{
	struct truth *t = arg;
	uint64_t end;

	truth_begin(t, "sleeper");
	end = t->t0 + (uint64_t)(seconds * 1e9);
	while (mono() < end) {
		double owed;

		compute_until(mono() + 3 * MS);
		owed = (0.7 * (double)(mono() - t->t0) - (double)t->in_block) / 0.3;
		nap(t, owed > 0 ? (uint64_t)owed : 0);
	}
	truth_end(t);
	return NULL;
}

/* --- mutex: blocked on a lock another thread holds 200 ms at a time --- */

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
/* The round the holder has locked for, and the last one the waiter got. */
static atomic_int held_round, done_round;
static atomic_int stop;

NOINLINE static void wait_on_mutex(struct truth *t)
{
	struct blocking b;

	block_begin(t, &b);
	pthread_mutex_lock(&lock);
	block_end(t, &b);
}

static void *mutex_waiter_thread(void *arg)
{
	struct truth *t = arg;

	truth_begin(t, "mutex-waiter");
	for (int r = 1;; r++) {
		/* Ask for the lock only once the holder has it: every call
		 * blocks.  The holder takes it within a millisecond. */
		while (atomic_load(&held_round) < r && !atomic_load(&stop))
			sink++;
		if (atomic_load(&held_round) < r)
			break;
		wait_on_mutex(t);
		pthread_mutex_unlock(&lock);
		atomic_store(&done_round, r);
	}
	truth_end(t);
	return NULL;
}

static void *mutex_holder_thread(void *arg)
{
	struct truth *t = arg;
	uint64_t end;

	truth_begin(t, "mutex-holder");
	end = t->t0 + (uint64_t)(seconds * 1e9);
	for (int r = 1; mono() + 200 * MS < end; r++) {
		pthread_mutex_lock(&lock);
		atomic_store(&held_round, r);
		sleep_ns(200 * MS);
		pthread_mutex_unlock(&lock);
		while (atomic_load(&done_round) < r)
			sleep_ns(MS / 2);
	}
	atomic_store(&stop, 1);
	truth_end(t);
	return NULL;
}

/* --- pipe and poll: a byte every 200 ms --- */

struct pipe_pair {
	int fds[2];
	struct truth *reader;
	const char *role;
};

NOINLINE static ssize_t read_pipe(struct truth *t, int fd, char *c)
{
	struct blocking b;
	ssize_t n;

	block_begin(t, &b);
	n = read(fd, c, 1);
	block_end(t, &b);
	return n;
}

static void *pipe_reader_thread(void *arg)
{
	struct pipe_pair *p = arg;
	char c = 0;

	truth_begin(p->reader, "pipe-reader");
	while (read_pipe(p->reader, p->fds[0], &c) == 1 && c != 'q')
		;
	truth_end(p->reader);
	return NULL;
}

NOINLINE static int wait_in_poll(struct truth *t, int fd)
{
	struct pollfd pfd = { .fd = fd, .events = POLLIN };
	struct blocking b;
	int n;

	block_begin(t, &b);
	n = poll(&pfd, 1, -1);
	block_end(t, &b);
	return n;
}

static void *poller_thread(void *arg)
{
	struct pipe_pair *p = arg;
	char c = 0;

	truth_begin(p->reader, "poller");
	/* The byte is there when poll returns: the read does not block. */
	while (wait_in_poll(p->reader, p->fds[0]) == 1 && read(p->fds[0], &c, 1) == 1 &&
	       c != 'q')
		;
	truth_end(p->reader);
	return NULL;
}

static void *pipe_writer_thread(void *arg)
{
	struct pipe_pair *p = arg;
	struct truth t;
	uint64_t end;

	truth_begin(&t, p->role);
	end = t.t0 + (uint64_t)(seconds * 1e9);
	while (mono() + 200 * MS < end) {
		sleep_ns(200 * MS);
		if (write(p->fds[1], "x", 1) != 1)
			die("write");
	}
	sleep_ns(200 * MS);
	if (write(p->fds[1], "q", 1) != 1)
		die("write");
	truth_end(&t);
	write_truth(&t);
	return NULL;
}

/* --- preempt: two threads computing on one CPU --- */

NOINLINE static void burn(uint64_t end)
{
	compute_until(end);
}

static void *preempt_thread(void *arg)
{
	struct truth *t = arg;

	truth_begin(t, t->role);
	burn(t->t0 + (uint64_t)(seconds * 1e9));
	truth_end(t);
	return NULL;
}

/* The last CPU this process may run on. */
static int last_cpu(void)
{
	cpu_set_t set;
	int last = 0;

	if (sched_getaffinity(0, sizeof(set), &set))
		die("sched_getaffinity");
	for (int i = 0; i < CPU_SETSIZE; i++)
		if (CPU_ISSET(i, &set))
			last = i;
	return last;
}

/* --- the modes that run threads side by side --- */

enum { SLEEP = 1, MUTEX = 2, PIPE = 4, POLL = 8, PREEMPT = 16 };

static void start(pthread_t *t, void *(*fn)(void *), void *arg)
{
	int err = pthread_create(t, NULL, fn, arg);

	if (err) {
		errno = err;
		die("pthread_create");
	}
}

static void run_threads(int which)
{
	static struct truth sleeper, waiter, holder, reader, poller, pa, pb;
	static struct pipe_pair pipe_p = { .reader = &reader, .role = "pipe-writer" };
	static struct pipe_pair poll_p = { .reader = &poller, .role = "poll-writer" };
	pthread_t t[16];
	int n = 0;

	if (which & SLEEP)
		start(&t[n++], sleeper_thread, &sleeper);
	if (which & MUTEX) {
		start(&t[n++], mutex_holder_thread, &holder);
		start(&t[n++], mutex_waiter_thread, &waiter);
	}
	if (which & PIPE) {
		if (pipe(pipe_p.fds))
			die("pipe");
		start(&t[n++], pipe_reader_thread, &pipe_p);
		start(&t[n++], pipe_writer_thread, &pipe_p);
	}
	if (which & POLL) {
		if (pipe(poll_p.fds))
			die("pipe");
		start(&t[n++], poller_thread, &poll_p);
		start(&t[n++], pipe_writer_thread, &poll_p);
	}
	if (which & PREEMPT) {
		/* Both inherit this thread's CPU; it then lets itself go. */
		cpu_set_t one, all;

		if (sched_getaffinity(0, sizeof(all), &all))
			die("sched_getaffinity");
		CPU_ZERO(&one);
		CPU_SET(last_cpu(), &one);
		if (sched_setaffinity(0, sizeof(one), &one))
			die("sched_setaffinity");
		pa.role = "preempt-a";
		pb.role = "preempt-b";
		start(&t[n++], preempt_thread, &pa);
		start(&t[n++], preempt_thread, &pb);
		if (sched_setaffinity(0, sizeof(all), &all))
			die("sched_setaffinity");
	}
	for (int i = 0; i < n; i++)
		pthread_join(t[i], NULL);
	if (which & SLEEP)
		write_truth(&sleeper);
	if (which & MUTEX) {
		write_truth(&holder);
		write_truth(&waiter);
	}
	if (which & PIPE)
		write_truth(&reader);
	if (which & POLL)
		write_truth(&poller);
	if (which & PREEMPT) {
		write_truth(&pa);
		write_truth(&pb);
	}
}

/* --- fork: children made while another thread is blocked --- */

static int blocker_pipe[2];
static struct truth blocker;
static atomic_int blocker_started;

NOINLINE static void blocked_in_read(struct truth *t, int fd)
{
	char c;
	struct blocking b;

	block_begin(t, &b);
	if (read(fd, &c, 1) < 0)
		die("read");
	block_end(t, &b);
}

static void *blocker_thread(void *arg)
{
	truth_begin(&blocker, arg);
	atomic_store(&blocker_started, 1);
	blocked_in_read(&blocker, blocker_pipe[0]);
	truth_end(&blocker);
	return NULL;
}

static pthread_t start_blocker(const char *role)
{
	pthread_t t;

	if (pipe(blocker_pipe))
		die("pipe");
	start(&t, blocker_thread, (void *)role);
	while (!atomic_load(&blocker_started))
		sleep_ns(MS);
	return t;
}

NOINLINE static void child_wait(struct truth *t, uint64_t ns)
{
	struct blocking b;

	block_begin(t, &b);
	sleep_ns(ns);
	block_end(t, &b);
}

/* --- deep: waits 40 calls down --- */

/* Each level's frame holds 256 bytes, used after the call returns, so
 * neither the frame nor the call can be optimized away. */
NOINLINE static void dive(struct truth *t, int levels, uint64_t end)
{
	volatile char pad[256];

	pad[levels % 256] = (char)levels;
	if (levels > 0)
		dive(t, levels - 1, end);
	else
		while (mono() < end)
			nap(t, 5 * MS);
	pad[0] = pad[levels % 256];
}

static void run_deep(void)
{
	static struct truth t;

	truth_begin(&t, "deep-waiter");
	dive(&t, 40, t.t0 + (uint64_t)(seconds * 1e9));
	truth_end(&t);
	write_truth(&t);
}

static void run_forks(void)
{
	pthread_t t = start_blocker("fork-blocker");

	for (int i = 0; i < 4; i++) {
		pid_t pid;

		sleep_ns(50 * MS);
		pid = fork();
		if (pid < 0)
			die("fork");
		if (pid == 0) {
			struct truth c;

			truth_begin(&c, "fork-child");
			child_wait(&c, 150 * MS);
			truth_end(&c);
			write_truth(&c);
			_exit(0);
		}
		waitpid(pid, NULL, 0);
	}
	sleep_ns(50 * MS);
	if (write(blocker_pipe[1], "q", 1) != 1)
		die("write");
	pthread_join(t, NULL);
	write_truth(&blocker);
}

/* --- exec: a process execs while one of its threads is blocked --- */

/* Another thread's truth up to now, read from outside it: it is blocked,
 * so its schedstat run time is exact.  Its switches are counted only when
 * it is a thread of this process. */
static void truth_of_blocked(struct truth *t)
{
	t->t1 = mono();
	schedstat(t->schedstat_fd, &t->run1, &t->rq1);
	t->csw1 = t->pid == getpid() ? switches(t->tid) : t->csw0;
}

NOINLINE static void wait_before_exec(struct truth *t)
{
	child_wait(t, 300 * MS);
}

NOINLINE static void wait_after_exec(struct truth *t)
{
	child_wait(t, 300 * MS);
}

static void run_exec(void)
{
	struct truth me;

	start_blocker("exec-blocker");
	truth_begin(&me, "exec-before");
	wait_before_exec(&me);
	truth_end(&me);
	write_truth(&me);
	truth_of_blocked(&blocker);
	write_truth(&blocker);
	/* The blocker dies in the exec, still off the CPU. */
	execl(self_path, self_path, "-o", truth_path, "exec-after", (char *)NULL);
	die("exec");
}

static void run_after_exec(void)
{
	struct truth me;

	truth_begin(&me, "exec-after");
	wait_after_exec(&me);
	truth_end(&me);
	write_truth(&me);
}

/* --- exit: threads killed while off the CPU --- */

/* What a victim tells the parent as it starts: from then on it is
 * blocked until killed. */
struct victim {
	pid_t tid;
	uint64_t t0;
};

NOINLINE static void wait_until_killed(int fd)
{
	char c;

	/* Nothing is ever written: SIGKILL ends it. */
	if (read(fd, &c, 1) >= 0)
		die("read");
}

static void *victim_thread(void *arg)
{
	int *fds = arg;
	struct victim me = { (pid_t)syscall(SYS_gettid), mono() };

	if (write(fds[1], &me, sizeof(me)) != sizeof(me))
		die("write");
	wait_until_killed(fds[2]);
	return NULL;
}

static void run_exit(void)
{
	/* [0] the parent reads the child's tids, [1] the child writes them,
	 * [2] the read end the victims wait on, [3] its write end. */
	int fds[4];
	struct truth v[2];
	struct victim who;
	pid_t pid;

	if (pipe(fds) || pipe(fds + 2))
		die("pipe");
	pid = fork();
	if (pid < 0)
		die("fork");
	if (pid == 0) {
		pthread_t t;

		start(&t, victim_thread, fds);
		victim_thread(fds);
		_exit(0);
	}
	for (int i = 0; i < 2; i++) {
		if (read(fds[0], &who, sizeof(who)) != sizeof(who))
			die("read");
		v[i] = (struct truth){ .role = "exit-victim", .pid = pid, .tid = who.tid,
				       .t0 = who.t0 };
	}
	/* Until both are blocked: their state in /proc says so. */
	for (int i = 0; i < 2; i++) {
		char path[64], stat[512], *s;
		int fd;

		snprintf(path, sizeof(path), "/proc/%d/task/%d/stat", (int)pid, (int)v[i].tid);
		for (;;) {
			ssize_t n;

			fd = open(path, O_RDONLY | O_CLOEXEC);
			n = fd < 0 ? -1 : read(fd, stat, sizeof(stat) - 1);
			if (n <= 0)
				die(path);
			close(fd);
			stat[n] = '\0';
			s = strrchr(stat, ')');
			if (s && s[2] == 'S')
				break;
			sleep_ns(MS);
		}
		/* Its CPU and run-queue time from here on (next to none). */
		v[i].schedstat_fd = open_schedstat(pid, v[i].tid);
		schedstat(v[i].schedstat_fd, &v[i].run0, &v[i].rq0);
	}
	sleep_ns(1000 * MS);
	for (int i = 0; i < 2; i++)
		truth_of_blocked(&v[i]);
	kill(pid, SIGKILL);
	waitpid(pid, NULL, 0);
	for (int i = 0; i < 2; i++) {
		v[i].dead_by = mono();
		close(v[i].schedstat_fd);
		write_truth(&v[i]);
	}
	sleep_ns(500 * MS);
}

/* --- pingpong: a byte bounced over two pipes --- */

static int ping_pipe[2], pong_pipe[2];

NOINLINE static int pong_read(int fd, char *c)
{
	return (int)read(fd, c, 1);
}

static void *pong_thread(void *arg)
{
	struct truth *t = arg;
	char c = 0;

	truth_begin(t, "pong");
	while (pong_read(ping_pipe[0], &c) == 1 && c != 'q')
		if (write(pong_pipe[1], &c, 1) != 1)
			die("write");
	truth_end(t);
	return NULL;
}

/* Round trips are made in batches of up to 10, each batch started on a
 * 1 ms grid at RATE; a late batch is not made up for. */
static void run_pingpong(void)
{
	static struct truth ping, pong;
	uint64_t end, next, rounds = 0;
	unsigned long batch = rate ? (rate + 999) / 1000 : 1000;
	pthread_t t;
	char c;

	if (pipe(ping_pipe) || pipe(pong_pipe))
		die("pipe");
	start(&t, pong_thread, &pong);
	truth_begin(&ping, "ping");
	end = ping.t0 + (uint64_t)(seconds * 1e9);
	next = ping.t0;
	while (mono() < end) {
		for (unsigned long i = 0; i < batch; i++) {
			if (write(ping_pipe[1], "x", 1) != 1 || pong_read(pong_pipe[0], &c) != 1)
				die("pingpong");
			rounds++;
		}
		if (rate) {
			uint64_t now;

			next += 1000000000ull * batch / rate;
			now = mono();
			if (next > now)
				sleep_ns(next - now);
			else
				next = now;
		}
	}
	if (write(ping_pipe[1], "q", 1) != 1)
		die("write");
	pthread_join(t, NULL);
	truth_end(&ping);
	ping.n_block = rounds;
	write_truth(&ping);
	write_truth(&pong);
}

int main(int argc, char **argv)
{
	static const struct { const char *name; int threads; } modes[] = {
		{ "sleep", SLEEP }, { "mutex", MUTEX }, { "pipe", PIPE }, { "poll", POLL },
		{ "preempt", PREEMPT }, { "mix", SLEEP | MUTEX | PIPE | POLL | PREEMPT },
	};
	const char *mode;
	int opt, go = 0;
	ssize_t n;

	while ((opt = getopt(argc, argv, "+go:")) != -1) {
		if (opt == 'g')
			go = 1;
		else if (opt == 'o')
			truth_path = optarg;
		else
			goto usage;
	}
	if (optind >= argc)
		goto usage;
	mode = argv[optind];
	if (optind + 1 < argc)
		seconds = atof(argv[optind + 1]);
	if (optind + 2 < argc)
		rate = strtoul(argv[optind + 2], NULL, 10);
	if (truth_path) {
		truth_fd = open(truth_path, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
		if (truth_fd < 0)
			die(truth_path);
	}
	n = readlink("/proc/self/exe", self_path, sizeof(self_path) - 1);
	if (n <= 0)
		die("readlink");
	self_path[n] = '\0';
	if (go) {
		char c;

		if (read(0, &c, 1) != 1)
			return 0;
	}
	for (size_t i = 0; i < sizeof(modes) / sizeof(modes[0]); i++) {
		if (!strcmp(mode, modes[i].name)) {
			run_threads(modes[i].threads);
			return 0;
		}
	}
	if (!strcmp(mode, "fork"))
		run_forks();
	else if (!strcmp(mode, "exec"))
		run_exec();
	else if (!strcmp(mode, "exec-after"))
		run_after_exec();
	else if (!strcmp(mode, "exit"))
		run_exit();
	else if (!strcmp(mode, "pingpong"))
		run_pingpong();
	else if (!strcmp(mode, "deep"))
		run_deep();
	else
		goto usage;
	return 0;
usage:
	fprintf(stderr, "usage: offcpu-workload [-g] [-o TRUTH] "
		"sleep|mutex|pipe|poll|preempt|mix|fork|exec|exit|pingpong|deep [SECONDS [RATE]]\n");
	return 2;
}
