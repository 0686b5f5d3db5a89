/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Threads already off the CPU when sampling starts (prreader.h,
 * pr_blocked_snapshot()) on a child of the test's, blocked in read() on a
 * pipe: its registers and stack are taken and it is let go as it was
 * (the read, restarted, still gets its byte); the records describe it as
 * the kernel would; a thread that ran since, and one of a stopped
 * process, are handled as they must be; one in epoll_wait(), which a
 * ptrace stop would end with EINTR, and one in uninterruptible sleep are
 * not stopped.  No perf event is
 * opened.  A
 * kernel or container that refuses ptrace skips (77).
 */
#include <check.h>
#include <errno.h>
#include <linux/perf_event.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/ptrace.h>
#include <sys/wait.h>
#include <unistd.h>

#include "checkmain.h"
#include "perfreader.h"

struct child {
	pid_t pid;
	int fd;          /* the write end of the pipe it reads */
};

/* A child reading one byte, then another: it exits with their sum. */
static struct child start_reader(void)
{
	struct child c;
	int p[2];

	ck_assert_int_eq(pipe(p), 0);
	c.pid = fork();
	ck_assert_int_ge(c.pid, 0);
	if (!c.pid) {
		unsigned char a = 0, b = 0;

		close(p[1]);
		if (read(p[0], &a, 1) != 1 || read(p[0], &b, 1) != 1)
			_exit(255);
		_exit(a + b);
	}
	close(p[0]);
	c.fd = p[1];
	return c;
}

static char state_of(pid_t pid)
{
	char path[64], buf[512], *paren, st = 0;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
	f = fopen(path, "re");
	if (f && fgets(buf, sizeof(buf), f) && (paren = strrchr(buf, ')')))
		st = paren[2];
	if (f)
		fclose(f);
	return st;
}

/* Until it sleeps in its read (system call 0). */
static void wait_blocked(pid_t pid)
{
	char path[64], line[64];

	snprintf(path, sizeof(path), "/proc/%d/syscall", (int)pid);
	for (;;) {
		FILE *f = fopen(path, "re");
		bool in_read = f && fgets(line, sizeof(line), f) && !strncmp(line, "0 ", 2);

		if (f)
			fclose(f);
		if (in_read && state_of(pid) == 'S')
			return;
		usleep(1000);
	}
}

/* Its voluntary context switches so far. */
static long switches(pid_t pid)
{
	char path[64], line[128];
	long n = -1;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/status", (int)pid);
	f = fopen(path, "re");
	while (f && fgets(line, sizeof(line), f))
		if (sscanf(line, "voluntary_ctxt_switches: %ld", &n) == 1)
			break;
	if (f)
		fclose(f);
	return n;
}

static int finish(struct child *c, unsigned char a, unsigned char b)
{
	int status;

	ck_assert_int_eq(write(c->fd, &a, 1), 1);
	ck_assert_int_eq(write(c->fd, &b, 1), 1);
	close(c->fd);
	ck_assert_int_eq(waitpid(c->pid, &status, 0), c->pid);
	ck_assert(WIFEXITED(status));
	return WEXITSTATUS(status);
}

static struct perf_event_attr off_cpu_attr(void)
{
	PR_OPTS(pr_event_opts, off, .stack_size = 8192);
	struct perf_event_attr attr;

	/* As --wall opens it: beside a CPU event, records carry their id. */
	ck_assert_int_eq(pr_event_attr(&off, PR_SOURCE_CONTEXT_SWITCH, PR_ATTR_SHARED_RING, &attr),
			 0);
	return attr;
}

static char logged[512];

static void keep_log(enum pr_log_level level, const char *msg, void *ctx)
{
	(void)ctx;
	if (level <= PR_LOG_WARN)
		snprintf(logged, sizeof(logged), "%s", msg);
}

static struct pr_blocked *snapshot(pid_t pid, const struct perf_event_attr *attr)
{
	PR_OPTS(pr_blocked_opts, opts, .log = keep_log);
	struct pr_blocked *b;

	logged[0] = 0;
	b = pr_blocked_snapshot(&pid, 1, attr, &opts);
	ck_assert_ptr_nonnull(b);
	ck_assert_msg(!logged[0], "%s", logged);
	return b;
}

struct got {
	struct pr_record rec[4];
	unsigned char raw[4][16384];
	int nr;
};

/* A copy of each record, its pointers into our copy of its bytes. */
static int collect(const struct pr_record *rec, void *arg)
{
	struct got *g = arg;
	ptrdiff_t moved;

	ck_assert_int_lt(g->nr, 4);
	ck_assert_uint_le(rec->size, sizeof(g->raw[0]));
	memcpy(g->raw[g->nr], rec->raw, rec->size);
	g->rec[g->nr] = *rec;
	moved = (const unsigned char *)g->raw[g->nr] - (const unsigned char *)rec->raw;
	if (rec->type == PR_RECORD_SAMPLE) {
		g->rec[g->nr].u.sample.regs = (const uint64_t *)((const unsigned char *)
							 rec->u.sample.regs + moved);
		g->rec[g->nr].u.sample.stack = rec->u.sample.stack + moved;
	}
	g->nr++;
	return 0;
}

START_TEST(a_blocked_thread_is_described_and_left_as_it_was)
{
	struct perf_event_attr attr = off_cpu_attr();
	struct child c = start_reader();
	static struct got g;
	struct pr_blocked *b;
	const struct pr_sample *s;
	uint64_t sp = 0, ip = 0;

	wait_blocked(c.pid);
	b = snapshot(c.pid, &attr);
	ck_assert_uint_eq(pr_blocked_nr(b), 1);
	ck_assert_int_eq(pr_blocked_synthesize(b, &attr, 77, 123456789, collect, &g), 1);
	ck_assert_int_eq(g.nr, 2);

	ck_assert_uint_eq(g.rec[0].type, PR_RECORD_SAMPLE);
	ck_assert_uint_eq(g.rec[0].pid, (uint32_t)c.pid);
	ck_assert_uint_eq(g.rec[0].tid, (uint32_t)c.pid);
	ck_assert_uint_eq(g.rec[0].time, 123456789);
	ck_assert_uint_eq(g.rec[0].misc & PERF_RECORD_MISC_CPUMODE_MASK, PERF_RECORD_MISC_USER);
	ck_assert_uint_eq(g.rec[0].id, 77);
	s = &g.rec[0].u.sample;
	ck_assert_uint_eq(s->regs_abi, PERF_SAMPLE_REGS_ABI_64);
	ck_assert_int_eq(pr_sample_reg(s, PR_REG_SP, &sp), 0);
	ck_assert_int_eq(pr_sample_reg(s, PR_REG_IP, &ip), 0);
	/* Stopped in its read: the IP just past a syscall instruction. */
	ck_assert_uint_eq(s->ip, ip);
	ck_assert_uint_eq(s->stack_addr, sp);
	ck_assert_uint_eq(s->stack_size, 8192);
	ck_assert_uint_gt(s->stack_dyn_size, 0);

	ck_assert_uint_eq(g.rec[1].type, PR_RECORD_SWITCH);
	ck_assert_uint_eq(g.rec[1].tid, (uint32_t)c.pid);
	ck_assert_uint_eq(g.rec[1].time, 123456789);
	ck_assert(g.rec[1].u.sw.out && !g.rec[1].u.sw.preempt);
	ck_assert(g.rec[1].misc & PR_RECORD_MISC_SWITCH_BEFORE_START);
	ck_assert_uint_eq(g.rec[1].id, 77);
	pr_blocked_free(b);

	/* Still in its read, which gets its data. */
	wait_blocked(c.pid);
	ck_assert_int_eq(finish(&c, 40, 2), 42);
}
END_TEST

START_TEST(a_thread_that_ran_since_is_left_out)
{
	struct perf_event_attr attr = off_cpu_attr();
	struct child c = start_reader();
	static struct got g;
	struct pr_blocked *b;
	unsigned char one = 1;
	long before;
	int status;

	wait_blocked(c.pid);
	b = snapshot(c.pid, &attr);
	ck_assert_uint_eq(pr_blocked_nr(b), 1);
	/* It reads one byte and waits for the next: it ran (and left the
	 * CPU again: one more voluntary switch). */
	before = switches(c.pid);
	ck_assert_int_eq(write(c.fd, &one, 1), 1);
	while (switches(c.pid) == before)
		usleep(1000);
	wait_blocked(c.pid);
	ck_assert_int_eq(pr_blocked_synthesize(b, &attr, 77, 1000, collect, &g), 0);
	ck_assert_int_eq(g.nr, 0);
	pr_blocked_free(b);
	ck_assert_int_eq(write(c.fd, &one, 1), 1);
	close(c.fd);
	ck_assert_int_eq(waitpid(c.pid, &status, 0), c.pid);
	ck_assert_int_eq(WEXITSTATUS(status), 2);
}
END_TEST

START_TEST(a_stopped_process_stays_stopped)
{
	struct perf_event_attr attr = off_cpu_attr();
	struct child c = start_reader();
	static struct got g;
	struct pr_blocked *b;

	wait_blocked(c.pid);
	ck_assert_int_eq(kill(c.pid, SIGSTOP), 0);
	while (state_of(c.pid) != 'T')
		usleep(1000);
	b = snapshot(c.pid, &attr);
	ck_assert_uint_eq(pr_blocked_nr(b), 1);
	ck_assert_int_eq(pr_blocked_synthesize(b, &attr, 77, 1000, collect, &g), 1);
	pr_blocked_free(b);
	ck_assert_int_eq(state_of(c.pid), 'T');
	ck_assert_int_eq(kill(c.pid, SIGCONT), 0);
	wait_blocked(c.pid);
	ck_assert_int_eq(finish(&c, 3, 4), 7);
}
END_TEST

START_TEST(a_thread_in_epoll_wait_is_not_stopped)
{
	struct perf_event_attr attr = off_cpu_attr();
	static struct got g;
	struct pr_blocked *b;
	struct child c;
	int p[2], status;
	long before;
	uint64_t sp = 0;

	/* epoll_wait(2) ends with EINTR after a ptrace stop: the child
	 * exits with what its one call returned, or 100 + errno. */
	ck_assert_int_eq(pipe(p), 0);
	c.pid = fork();
	ck_assert_int_ge(c.pid, 0);
	if (!c.pid) {
		struct epoll_event ev = { .events = EPOLLIN }, out;
		int ep = epoll_create1(0), n;

		close(p[1]);
		if (ep < 0 || epoll_ctl(ep, EPOLL_CTL_ADD, p[0], &ev))
			_exit(255);
		n = epoll_wait(ep, &out, 1, -1);
		_exit(n < 0 ? 100 + errno : n);
	}
	close(p[0]);
	c.fd = p[1];
	for (;;) {
		char path[64], line[64] = "";
		FILE *f;

		snprintf(path, sizeof(path), "/proc/%d/syscall", (int)c.pid);
		if ((f = fopen(path, "re"))) {
			if (!fgets(line, sizeof(line), f))
				line[0] = 0;
			fclose(f);
		}
		if (!strncmp(line, "232 ", 4) && state_of(c.pid) == 'S')
			break;
		usleep(1000);
	}
	before = switches(c.pid);
	b = snapshot(c.pid, &attr);
	ck_assert_uint_eq(pr_blocked_nr(b), 1);
	/* Not woken, not stopped. */
	ck_assert_int_eq(switches(c.pid), before);
	ck_assert_int_eq(pr_blocked_synthesize(b, &attr, 77, 1000, collect, &g), 1);
	ck_assert_int_eq(pr_sample_reg(&g.rec[0].u.sample, PR_REG_SP, &sp), 0);
	ck_assert_uint_ne(sp, 0);
	ck_assert_uint_eq(g.rec[0].u.sample.stack_addr, sp);
	ck_assert_uint_gt(g.rec[0].u.sample.stack_dyn_size, 0);
	pr_blocked_free(b);
	ck_assert_int_eq(write(c.fd, "x", 1), 1);
	ck_assert_int_eq(waitpid(c.pid, &status, 0), c.pid);
	ck_assert_int_eq(WEXITSTATUS(status), 1);
	close(c.fd);
}
END_TEST

START_TEST(a_thread_in_uninterruptible_sleep_is_not_stopped)
{
	struct perf_event_attr attr = off_cpu_attr();
	static struct got g;
	struct pr_blocked *b;
	int go[2], status;
	long before;
	pid_t pid;
	char c = 0;

	/* The parent of a vfork() waits for its child's exec or exit
	 * killably, in state D: here until the child reads its byte. */
	ck_assert_int_eq(pipe(go), 0);
	pid = fork();
	ck_assert_int_ge(pid, 0);
	if (!pid) {
		close(go[1]);
		if (!vfork()) {
			if (read(go[0], &c, 1) != 1)
				_exit(1);
			_exit(0);
		}
		_exit(3);
	}
	close(go[0]);
	while (state_of(pid) != 'D')
		usleep(1000);
	before = switches(pid);
	b = snapshot(pid, &attr);
	ck_assert_uint_eq(pr_blocked_nr(b), 1);
	ck_assert_int_eq(switches(pid), before);
	ck_assert_int_eq(pr_blocked_synthesize(b, &attr, 77, 1000, collect, &g), 1);
	ck_assert_uint_eq(g.rec[0].tid, (uint32_t)pid);
	ck_assert_uint_gt(g.rec[0].u.sample.stack_dyn_size, 0);
	pr_blocked_free(b);
	ck_assert_int_eq(write(go[1], &c, 1), 1);
	close(go[1]);
	ck_assert_int_eq(waitpid(pid, &status, 0), pid);
	ck_assert_int_eq(WEXITSTATUS(status), 3);
}
END_TEST

START_TEST(bad_arguments_are_refused)
{
	struct perf_event_attr attr = off_cpu_attr(), raw = attr;
	pid_t gone = 0x3fffffff;
	static struct got g;
	struct pr_blocked *b;

	ck_assert_ptr_null(pr_blocked_snapshot(&gone, 1, NULL, NULL));
	ck_assert_int_eq(errno, EINVAL);
	/* A process that is not there has no threads to take. */
	b = pr_blocked_snapshot(&gone, 1, &attr, NULL);
	ck_assert_ptr_nonnull(b);
	ck_assert_uint_eq(pr_blocked_nr(b), 0);
	raw.sample_type |= PERF_SAMPLE_RAW;
	ck_assert_int_eq(pr_blocked_synthesize(b, &raw, 1, 1, collect, &g), -EOPNOTSUPP);
	ck_assert_int_eq(pr_blocked_synthesize(NULL, &attr, 1, 1, collect, &g), -EINVAL);
	pr_blocked_free(b);
	pr_blocked_free(NULL);
	ck_assert_uint_eq(pr_blocked_nr(NULL), 0);
}
END_TEST

/* Whether ptrace may stop a child of ours here. */
static bool may_trace(void)
{
	pid_t pid = fork();
	int status, err;

	if (!pid) {
		pause();
		_exit(0);
	}
	err = ptrace(PTRACE_SEIZE, pid, 0, 0) ? errno : 0;
	if (!err)
		ptrace(PTRACE_DETACH, pid, 0, 0);
	kill(pid, SIGKILL);
	waitpid(pid, &status, 0);
	if (err)
		printf("SKIP: ptrace refused here (%s)\n", strerror(err));
	return !err;
}

int main(void)
{
	Suite *s = suite_create("blocked");
	TCase *tc = tcase_create("snapshot");

	tcase_add_test(tc, a_blocked_thread_is_described_and_left_as_it_was);
	tcase_add_test(tc, a_thread_that_ran_since_is_left_out);
	tcase_add_test(tc, a_stopped_process_stays_stopped);
	tcase_add_test(tc, a_thread_in_epoll_wait_is_not_stopped);
	tcase_add_test(tc, a_thread_in_uninterruptible_sleep_is_not_stopped);
	tcase_add_test(tc, bad_arguments_are_refused);
	suite_add_tcase(s, tc);
	if (!may_trace())
		return 77;
	return run_suite(s);
}
