/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The reader against the real kernel: a child workload is sampled and what
 * arrives is checked against what the child did.  Skips (77) only when the
 * kernel refuses perf_event_open.
 */
#include <check.h>
#include <errno.h>
#include <limits.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "checkmain.h"
#include "livecheck.h"
#include "perfreader.h"
#include "workload.h"

/* The CPU time `pid` has used: what cpu-clock samples measure, however
 * busy the machine is. */
static double cpu_seconds(pid_t pid)
{
	struct timespec ts;
	clockid_t clk;

	ck_assert_int_eq(clock_getcpuclockid(pid, &clk), 0);
	ck_assert_int_eq(clock_gettime(clk, &ts), 0);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static double elapsed(const struct timespec *since)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)(ts.tv_sec - since->tv_sec) +
	       (double)(ts.tv_nsec - since->tv_nsec) / 1e9;
}

static const char *workload_path(void)
{
	const char *p = getenv("DS_WORKLOAD");

	ck_assert_msg(p && *p, "DS_WORKLOAD must name the test workload");
	return p;
}

/* ---- driving `workload serve` ---- */

struct child {
	pid_t pid;
	FILE *in;   /* its stdin */
	FILE *out;  /* its stdout */
};

static void child_start(struct child *c)
{
	int to[2], from[2];

	ck_assert_int_eq(pipe(to), 0);
	ck_assert_int_eq(pipe(from), 0);
	c->pid = fork();
	ck_assert_int_ge(c->pid, 0);
	if (c->pid == 0) {
		dup2(to[0], 0);
		dup2(from[1], 1);
		close(to[0]);
		close(to[1]);
		close(from[0]);
		close(from[1]);
		execl(workload_path(), "workload", "serve", (char *)NULL);
		_exit(127);
	}
	close(to[0]);
	close(from[1]);
	c->in = fdopen(to[1], "w");
	c->out = fdopen(from[0], "r");
	setvbuf(c->in, NULL, _IONBF, 0);
}

static long child_line(struct child *c)
{
	char line[64];

	ck_assert_msg(fgets(line, sizeof(line), c->out), "workload died");
	if (!strcmp(line, "ok\n"))
		return 0;
	return strtol(line, NULL, 10);
}

/* Has the workload written a line (that nothing has read yet)? */
static bool child_has_line(struct child *c)
{
	struct pollfd pfd = { .fd = fileno(c->out), .events = POLLIN };

	return poll(&pfd, 1, 0) == 1;
}

/* Send a command and wait for its final "ok"; returns the number the
 * command answered first, if any. */
static long child_do(struct child *c, char cmd)
{
	long v, first = 0;

	fputc(cmd, c->in);
	while ((v = child_line(c)) != 0)
		first = v;
	return first;
}

/* Ask the workload to quit (a second 'q' is harmless) and reap it. */
static int child_finish(struct child *c)
{
	int status;

	fputc('q', c->in);
	fclose(c->in);
	fclose(c->out);
	ck_assert_int_eq(waitpid(c->pid, &status, 0), c->pid);
	return status;
}

/* ---- collecting records ---- */

struct seen {
	pid_t pid;
	long samples, samples_of_pid, with_canary, with_regs;
	long bad_ip, bad_sp;
	long tid_samples;         /* samples of `watch_tid` */
	pid_t watch_tid;
	long pid_samples;         /* samples whose pid is `watch_pid` */
	pid_t watch_pid;
	/* Processes `pid` forked (LeakSanitizer's checker is one: it clones
	 * a task at exit that scans memory while the threads are stopped). */
	uint32_t children[8];
	int nr_children;
	/* The pid of every sample of another process than `pid`.  They are
	 * attributed once everything is drained: a child's FORK record is
	 * written to the ring of the CPU its parent ran on, its samples to
	 * the rings of the CPUs it runs on, and a drain hands rings out one
	 * after another, so samples can come before the FORK that explains
	 * them. */
	uint32_t other_pids[8192];
	int nr_other_pids;
	bool fork_of_watch, mmap2_of_exe, comm_renamed, comm_exec, exit_of_pid;
	long lost_records;
	uint64_t lost_sum;
	long cpus_seen[64];
	/* IP and SP of samples, checked against the maps afterwards. */
	uint64_t ips[8192], sps[8192];
	int nr_addrs;
	uint64_t stack_size;      /* what every sample must have reserved */
	/* (tid, cpu, event) -> the first event id seen; a second id is a
	 * duplicate.  `r` tells the events apart when set. */
	const struct pr_reader *r;
	struct { pid_t tid; uint32_t cpu; int event; uint64_t id; } tid_ids[8192];
	int nr_tid_ids;
	long twice_sampled;
	char exe[PATH_MAX];
};

/* Every (thread, CPU) must be sampled by exactly one event of each
 * kind. */
static void note_event_id(struct seen *s, const struct pr_record *rec)
{
	int event = s->r ? pr_reader_event_of(s->r, rec) : 0;

	for (int i = 0; i < s->nr_tid_ids; i++) {
		if (s->tid_ids[i].tid == (pid_t)rec->tid && s->tid_ids[i].cpu == rec->cpu &&
		    s->tid_ids[i].event == event) {
			s->twice_sampled += s->tid_ids[i].id != rec->id;
			return;
		}
	}
	if (s->nr_tid_ids < 8192) {
		s->tid_ids[s->nr_tid_ids].tid = (pid_t)rec->tid;
		s->tid_ids[s->nr_tid_ids].cpu = rec->cpu;
		s->tid_ids[s->nr_tid_ids].event = event;
		s->tid_ids[s->nr_tid_ids++].id = rec->id;
	}
}

static bool has_canary(const struct pr_sample *s)
{
	uint64_t want = WORKLOAD_CANARY;

	for (uint64_t off = 0; off + 8 <= s->stack_dyn_size; off += 8)
		if (!memcmp(s->stack + off, &want, 8))
			return true;
	return false;
}

static int on_record(const struct pr_record *rec, void *arg)
{
	struct seen *s = arg;

	switch (rec->type) {
	case PR_RECORD_SAMPLE: {
		const struct pr_sample *sm = &rec->u.sample;

		s->samples++;
		note_event_id(s, rec);
		if (rec->cpu < 64)
			s->cpus_seen[rec->cpu]++;
		if ((pid_t)rec->pid == s->watch_pid)
			s->pid_samples++;
		if (s->watch_tid && (pid_t)rec->tid == s->watch_tid)
			s->tid_samples++;
		if ((pid_t)rec->pid != s->pid) {
			if (s->nr_other_pids < 8192)
				s->other_pids[s->nr_other_pids++] = rec->pid;
			break;
		}
		s->samples_of_pid++;
		if (sm->regs && sm->regs_abi == PERF_SAMPLE_REGS_ABI_64) {
			uint64_t ip;

			s->with_regs++;
			ck_assert_int_eq(pr_sample_reg(sm, PR_REG_IP, &ip), 0);
			if (s->nr_addrs < 8192) {
				s->ips[s->nr_addrs] = ip;
				s->sps[s->nr_addrs++] = sm->stack_addr;
			}
			ck_assert_uint_eq(sm->stack_size, s->stack_size);
			ck_assert_uint_le(sm->stack_dyn_size, sm->stack_size);
		}
		if ((pid_t)rec->tid == s->pid && sm->stack && has_canary(sm))
			s->with_canary++;
		break;
	}
	case PR_RECORD_MMAP2:
		if ((pid_t)rec->pid == s->pid && (rec->u.mmap.prot & 4) &&
		    !strcmp(rec->u.mmap.filename, s->exe))
			s->mmap2_of_exe = true;
		break;
	case PR_RECORD_COMM:
		if ((pid_t)rec->pid == s->pid && !strcmp(rec->u.comm.comm, "ds-renamed") &&
		    !rec->u.comm.exec)
			s->comm_renamed = true;
		if ((pid_t)rec->pid == s->pid && rec->u.comm.exec &&
		    !strcmp(rec->u.comm.comm, "workload"))
			s->comm_exec = true;
		break;
	case PR_RECORD_FORK:
		if (s->watch_tid && (pid_t)rec->tid == s->watch_tid)
			s->fork_of_watch = true;
		if (s->watch_pid && (pid_t)rec->pid == s->watch_pid)
			s->fork_of_watch = true;
		if ((pid_t)rec->u.task.ppid == s->pid && rec->pid != rec->u.task.ppid &&
		    s->nr_children < 8)
			s->children[s->nr_children++] = rec->pid;
		break;
	case PR_RECORD_EXIT:
		if ((pid_t)rec->pid == s->pid && rec->tid == rec->pid)
			s->exit_of_pid = true;
		break;
	case PR_RECORD_SWITCH:
		note_event_id(s, rec);
		break;
	case PR_RECORD_LOST:
		s->lost_records++;
		s->lost_sum += rec->u.lost.lost;
		break;
	default:
		break;
	}
	return 0;
}

/* Samples of processes `pid` forked, as far as the FORK records drained
 * so far say. */
static long samples_of_children(const struct seen *s)
{
	long n = 0;

	for (int i = 0; i < s->nr_other_pids; i++)
		for (int j = 0; j < s->nr_children; j++)
			n += s->other_pids[i] == s->children[j];
	return n;
}

static struct seen *seen_new(pid_t pid)
{
	struct seen *s = calloc(1, sizeof(*s));

	ck_assert_ptr_nonnull(s);
	s->pid = pid;
	s->stack_size = PR_DEFAULT_STACK_SIZE;
	ck_assert_ptr_nonnull(realpath(workload_path(), s->exe));
	return s;
}

static void drain(struct pr_reader *r, struct seen *s)
{
	int n;

	while ((n = pr_reader_consume(r, on_record, s)) > 0)
		;
	ck_assert_int_eq(n, 0);
}

/* Take records until `n` more samples have come, however long the
 * sampled task takes to run that long (Check's timeout ends a wait for
 * samples that never come). */
static void drain_samples(struct pr_reader *r, struct seen *s, long n)
{
	long want = s->samples + n;

	while (s->samples < want)
		ck_assert_int_ge(pr_reader_poll(r, 100, on_record, s), 0);
}

/* Is `addr` inside a mapping of `pid` whose permissions contain `perm`? */
static bool in_mapping(pid_t pid, uint64_t addr, char perm_pos, char perm)
{
	char path[64], line[512];
	bool found = false;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/maps", (int)pid);
	f = fopen(path, "r");
	ck_assert_ptr_nonnull(f);
	while (!found && fgets(line, sizeof(line), f)) {
		unsigned long long lo, hi;
		char perms[8];

		if (sscanf(line, "%llx-%llx %7s", &lo, &hi, perms) == 3 &&
		    addr >= lo && addr < hi && perms[(int)perm_pos] == perm)
			found = true;
	}
	fclose(f);
	return found;
}

static struct pr_reader *open_pid(pid_t pid, const struct pr_reader_opts *o)
{
	struct pr_reader *r = pr_reader_open_pids(&pid, 1, o);

	ck_assert_msg(r, "open failed: %s", strerror(errno));
	ck_assert_int_eq(pr_reader_enable(r), 0);
	return r;
}

/* A served workload, sampled from before its first command. */
struct session {
	struct child c;
	struct seen *s;
	struct pr_reader *r;
};

static void session_start(struct session *ss, const struct pr_reader_opts *o)
{
	child_start(&ss->c);
	ss->s = seen_new(ss->c.pid);
	ss->r = open_pid(ss->c.pid, o);
}

/* Close the reader, end the workload (it must exit 0), free. */
static void session_end(struct session *ss)
{
	pr_reader_close(ss->r);
	ck_assert_int_eq(child_finish(&ss->c), 0);
	free(ss->s);
}

START_TEST(samples_hold_ip_and_sp_in_the_childs_maps_and_its_stack_canary)
{
	struct session ss;
	struct seen *s;

	session_start(&ss, NULL);
	s = ss.s;
	child_do(&ss.c, 'c');
	drain(ss.r, s);

	/* 1 s of spinning at 99 Hz. */
	ck_assert_int_ge(s->samples_of_pid, 40);
	ck_assert_int_ge(s->with_regs, 40);
	for (int i = 0; i < s->nr_addrs; i++) {
		ck_assert_msg(in_mapping(s->pid, s->ips[i], 2, 'x'),
			      "ip 0x%llx is in no executable mapping",
			      (unsigned long long)s->ips[i]);
		ck_assert_msg(in_mapping(s->pid, s->sps[i], 1, 'w'),
			      "sp 0x%llx is in no writable mapping",
			      (unsigned long long)s->sps[i]);
	}
	/* All but the few samples taken outside the canary frame (reading
	 * the command, answering it) hold it. */
	ck_assert_msg(s->with_canary * 10 >= s->samples_of_pid * 8,
		      "%ld of %ld samples hold the canary", s->with_canary,
		      s->samples_of_pid);
	session_end(&ss);
}
END_TEST

START_TEST(mmap2_comm_and_exit_records_arrive_for_the_child)
{
	struct session ss;
	struct seen *s;

	session_start(&ss, NULL);
	s = ss.s;
	child_do(&ss.c, 'm');
	child_do(&ss.c, 'n');
	child_do(&ss.c, 's');
	fputc('q', ss.c.in);
	/* The exit makes every event hang up (if it never did, Check's
	 * timeout ends the test). */
	while (!pr_reader_done(ss.r))
		ck_assert_int_ge(pr_reader_poll(ss.r, 100, on_record, s), 0);
	drain(ss.r, s);
	ck_assert(s->mmap2_of_exe);
	ck_assert(s->comm_renamed);
	ck_assert(s->exit_of_pid);
	ck_assert_int_gt(s->samples_of_pid, 10);
	session_end(&ss);
}
END_TEST

START_TEST(a_thread_created_after_attach_is_sampled)
{
	struct session ss;
	struct seen *s;
	long tid;

	session_start(&ss, NULL);
	s = ss.s;
	/* The thread does not exist before this command. */
	fputc('t', ss.c.in);
	tid = child_line(&ss.c);
	ck_assert_int_gt(tid, s->pid);
	s->watch_tid = (pid_t)tid;
	ck_assert_int_eq(child_line(&ss.c), 0);
	drain(ss.r, s);
	ck_assert(s->fork_of_watch);
	ck_assert_msg(s->tid_samples >= 40, "%ld samples of thread %ld",
		      s->tid_samples, tid);
	session_end(&ss);
}
END_TEST

START_TEST(a_child_process_forked_after_attach_is_sampled)
{
	struct session ss;
	struct seen *s;
	long pid;

	session_start(&ss, NULL);
	s = ss.s;
	fputc('f', ss.c.in);
	pid = child_line(&ss.c);
	ck_assert_int_gt(pid, 0);
	s->watch_pid = (pid_t)pid;
	ck_assert_int_eq(child_line(&ss.c), 0);
	drain(ss.r, s);
	ck_assert(s->fork_of_watch);
	ck_assert_msg(s->pid_samples >= 20, "%ld samples of process %ld",
		      s->pid_samples, pid);
	session_end(&ss);
}
END_TEST

/* Attaching while the process creates threads: threads found by the
 * rescan may also inherit their creator's events; none may be sampled
 * twice, by either event when the off-CPU one is open too (its switch
 * records included). */
static void check_threads_born_while_attaching(const struct pr_reader_opts *o)
{
	struct child c;
	struct seen *s;
	struct pr_reader *r;
	struct timespec began;
	pid_t pid;

	child_start(&c);
	pid = c.pid;
	s = seen_new(pid);
	clock_gettime(CLOCK_MONOTONIC, &began);
	fputc('T', c.in);
	usleep(5000);
	r = pr_reader_open_pids(&pid, 1, o);
	ck_assert_ptr_nonnull(r);
	s->r = r;
	ck_assert_int_eq(pr_reader_enable(r), 0);
	/* The storm lasts until it is told to stop, however long attaching
	 * took (under valgrind, from 0.2 s to more than a second).  It fills
	 * a ring in tens of milliseconds at 4 kHz: drain while it lasts, until
	 * a hundred (thread, CPU, event) have been sampled, then stop it. */
	while (s->nr_tid_ids < 100) {
		ck_assert_int_ge(pr_reader_poll(r, 20, on_record, s), 0);
		/* Without fork (as under valgrind) Check's timeout does not
		 * run: a storm that stopped must fail here, not hang. */
		ck_assert_msg(elapsed(&began) < 600,
			      "%d (thread, CPU, event) sampled in %.0f s",
			      s->nr_tid_ids, elapsed(&began));
	}
	fputc('x', c.in);
	while (!child_has_line(&c))
		ck_assert_int_ge(pr_reader_poll(r, 20, on_record, s), 0);
	ck_assert_int_eq(child_line(&c), 0);
	drain(r, s);
	ck_assert_msg(s->twice_sampled == 0, "%ld samples came from a second event "
		      "of the same thread and CPU", s->twice_sampled);
	pr_reader_close(r);
	ck_assert_int_eq(child_finish(&c), 0);
	free(s);
}

START_TEST(threads_born_while_attaching_are_sampled_once)
{
	PR_OPTS(pr_event_opts, ev, .freq = 4000);
	PR_OPTS(pr_reader_opts, o, .event = &ev);

	check_threads_born_while_attaching(&o);
}
END_TEST

START_TEST(threads_born_while_attaching_are_sampled_once_by_each_event)
{
	PR_OPTS(pr_event_opts, ev, .freq = 4000);
	/* The same stack copy as the CPU event's: on_record() checks it. */
	PR_OPTS(pr_event_opts, off);
	PR_OPTS(pr_reader_opts, o, .event = &ev, .off_cpu = &off);

	check_threads_born_while_attaching(&o);
}
END_TEST

/* Asking whether the target is done must not eat the wakeup the next wait
 * is owed. */
START_TEST(asking_done_does_not_swallow_a_wakeup)
{
	PR_OPTS(pr_event_opts, ev, .wakeup_bytes = 1);
	PR_OPTS(pr_reader_opts, o, .event = &ev);
	struct session ss;

	session_start(&ss, &o);
	child_do(&ss.c, 's');
	ck_assert(!pr_reader_done(ss.r));
	/* The workload now waits for a command, so nothing new is sampled:
	 * only the wakeup of the spin's samples can end this wait early, and
	 * a swallowed one makes it time out and return 0. */
	ck_assert_int_gt(pr_reader_wait(ss.r, 3000), 0);
	drain(ss.r, ss.s);
	session_end(&ss);
}
END_TEST

START_TEST(a_launched_command_resumes_after_disable_and_enable)
{
	char *argv[] = { (char *)workload_path(), "spin", "1.5", NULL };
	struct pr_reader *r = pr_reader_open_command(argv, NULL);
	struct seen *s;
	long before, paused;
	double until;

	ck_assert_ptr_nonnull(r);
	s = seen_new(pr_reader_child(r));
	ck_assert_int_eq(pr_reader_enable(r), 0);
	drain_samples(r, s, 6);
	ck_assert_int_eq(pr_reader_disable(r), 0);
	drain(r, s);
	before = s->samples;
	/* Ten sampling periods at 99 Hz of the command's own CPU time (of
	 * the 1.5 s it spins) go by while disabled. */
	until = cpu_seconds(s->pid) + 0.1;
	while (cpu_seconds(s->pid) < until)
		usleep(10000);
	drain(r, s);
	paused = s->samples - before;
	ck_assert_int_le(paused, 1);
	/* And sampling resumes. */
	ck_assert_int_eq(pr_reader_enable(r), 0);
	drain_samples(r, s, 6);
	kill(s->pid, SIGKILL);
	waitpid(s->pid, NULL, 0);
	pr_reader_close(r);
	free(s);
}
END_TEST

START_TEST(lost_is_counted_when_a_tiny_ring_is_flooded)
{
	PR_OPTS(pr_event_opts, ev, .freq = 5000, .stack_size = 1024);
	PR_OPTS(pr_reader_opts, o, .event = &ev, .ring_pages = 1);
	struct session ss;
	struct seen *s;

	session_start(&ss, &o);
	s = ss.s;
	s->stack_size = 1024;
	/* One page holds three samples; half a second at 5 kHz is far more,
	 * and nobody drains meanwhile. */
	child_do(&ss.c, 's');
	drain(ss.r, s);
	/* The kernel reports the loss with the first record it can write
	 * after space frees up: make it sample again. */
	child_do(&ss.c, 's');
	drain(ss.r, s);
	ck_assert_int_gt(s->lost_records, 0);
	ck_assert_uint_gt(s->lost_sum, 100);
	ck_assert_uint_eq(pr_reader_lost(ss.r), s->lost_sum);
	session_end(&ss);
}
END_TEST

START_TEST(a_launched_command_is_sampled_from_its_exec)
{
	char *argv[] = { (char *)workload_path(), "spin", "0.5", NULL };
	struct pr_reader *r = pr_reader_open_command(argv, NULL);
	struct seen *s;
	int status;

	ck_assert_ptr_nonnull(r);
	s = seen_new(pr_reader_child(r));
	ck_assert_int_eq(pr_reader_enable(r), 0);
	while (!pr_reader_done(r))
		ck_assert_int_ge(pr_reader_poll(r, 100, on_record, s), 0);
	drain(r, s);
	ck_assert_int_eq(waitpid(s->pid, &status, 0), s->pid);
	ck_assert(WIFEXITED(status) && WEXITSTATUS(status) == 0);
	ck_assert(s->comm_exec);
	ck_assert(s->mmap2_of_exe);
	ck_assert(s->exit_of_pid);
	ck_assert_int_ge(s->samples_of_pid, 20);
	/* Every sample is of the command or of a process it forked (under
	 * LeakSanitizer, its checker), none of the profiler's fork. */
	ck_assert_int_eq(s->samples, s->samples_of_pid + samples_of_children(s));
	pr_reader_close(r);
	free(s);
}
END_TEST

/* The profiler's own work in its child before exec is not the command's:
 * a test process holding 512 MiB makes the child drop that much address
 * space in exec, CPU time wait4() charges to the command and the count
 * of its sampling event, enabled at exec, does not. */
START_TEST(a_launched_commands_count_runs_from_its_exec)
{
	char *argv[] = { (char *)workload_path(), "spin", "0.3", NULL };
	size_t big = 512u << 20;
	char *mem = mmap(NULL, big, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	struct pr_reader *r;
	struct rusage ru;
	struct seen *s;
	uint64_t ns, waited_ns;
	int status;

	ck_assert_ptr_ne(mem, MAP_FAILED);
	/* Small pages: one huge page is dropped in one step. */
	madvise(mem, big, MADV_NOHUGEPAGE);
	memset(mem, 1, big);
	r = pr_reader_open_command(argv, NULL);
	ck_assert_ptr_nonnull(r);
	munmap(mem, big);
	s = seen_new(pr_reader_child(r));
	ck_assert_int_eq(pr_reader_enable(r), 0);
	while (!pr_reader_done(r))
		ck_assert_int_ge(pr_reader_poll(r, 100, on_record, s), 0);
	drain(r, s);
	ck_assert_int_eq(wait4(s->pid, &status, 0, &ru), s->pid);
	ck_assert_int_eq(pr_reader_count(r, 0, &ns), 0);
	waited_ns = (uint64_t)(ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) * 1000000000u +
		    (uint64_t)(ru.ru_utime.tv_usec + ru.ru_stime.tv_usec) * 1000u;
	/* It holds the spin, never more than the process used, and not the
	 * 131072 pages the child dropped before exec (measured: 20-35 ms). */
	ck_assert_msg(ns >= waited_ns / 2 && ns <= waited_ns + 1000000 &&
		      waited_ns - ns >= 2000000, "count %.3f ms, wait4 %.3f ms",
		      (double)ns / 1e6, (double)waited_ns / 1e6);
	ck_assert_int_eq(pr_reader_count(r, 1, &ns), -EINVAL);
	ck_assert_int_eq(pr_reader_count(NULL, 0, &ns), -EINVAL);
	pr_reader_close(r);
	free(s);
}
END_TEST

/* Run `workload spin SECONDS` as an ordinary child, not through the
 * reader, on CPU `cpu` (-1: wherever it is scheduled), while `r` samples;
 * collect what arrives. */
static struct seen *sample_spinning_child(struct pr_reader *r, const char *seconds,
					  int cpu)
{
	char *argv[] = { (char *)workload_path(), "spin", (char *)seconds, NULL };
	struct seen *s;
	pid_t pid;
	int status;

	ck_assert_int_eq(pr_reader_enable(r), 0);
	pid = fork();
	if (pid == 0) {
		cpu_set_t set;

		CPU_ZERO(&set);
		if (cpu >= 0) {
			CPU_SET(cpu, &set);
			if (sched_setaffinity(0, sizeof(set), &set))
				_exit(126);
		}
		execv(argv[0], argv);
		_exit(127);
	}
	s = seen_new(pid);
	s->watch_pid = pid;
	while (waitpid(pid, &status, WNOHANG) == 0)
		pr_reader_poll(r, 50, on_record, s);
	drain(r, s);
	ck_assert(WIFEXITED(status) && WEXITSTATUS(status) == 0);
	return s;
}

START_TEST(system_wide_sampling_sees_a_busy_process)
{
	struct pr_reader *r = pr_reader_open_cpus(NULL, 0, NULL);
	struct seen *s;

	ck_assert_ptr_nonnull(r);
	ck_assert_uint_eq(pr_reader_nr_rings(r), (size_t)sysconf(_SC_NPROCESSORS_ONLN));
	s = sample_spinning_child(r, "0.6", -1);
	ck_assert_int_ge(s->pid_samples, 20);
	ck_assert(!pr_reader_done(r));
	pr_reader_close(r);
	free(s);
}
END_TEST

START_TEST(a_cpu_list_samples_only_those_cpus)
{
	int cpu0 = 0;
	struct pr_reader *r = pr_reader_open_cpus(&cpu0, 1, NULL);
	struct seen *s;

	ck_assert_ptr_nonnull(r);
	ck_assert_uint_eq(pr_reader_nr_rings(r), 1);
	ck_assert_int_eq(pr_reader_ring_cpu(r, 0), 0);
	/* On CPU 0, so that there is user code to sample there even when
	 * the kernel's is excluded (unprivileged users). */
	s = sample_spinning_child(r, "0.4", 0);
	ck_assert_int_gt(s->samples, 10);
	ck_assert_int_eq(s->cpus_seen[0], s->samples);
	pr_reader_close(r);
	free(s);
}
END_TEST

START_TEST(the_poll_fd_wakes_when_a_ring_fills_and_pull_reads_drain_it)
{
	PR_OPTS(pr_event_opts, ev, .wakeup_bytes = 1);
	PR_OPTS(pr_reader_opts, o, .event = &ev);
	char *argv[] = { (char *)workload_path(), "spin", "0.5", NULL };
	struct pr_reader *r = pr_reader_open_command(argv, &o);
	struct pollfd pfd;
	struct pr_record rec;
	long samples = 0;
	int n, status;

	ck_assert_ptr_nonnull(r);
	pfd.fd = pr_reader_fd(r);
	pfd.events = POLLIN;
	ck_assert_int_ge(pfd.fd, 0);
	ck_assert_int_eq(pr_reader_enable(r), 0);
	/* However late the first sample comes (Check's timeout bounds it). */
	ck_assert_int_eq(poll(&pfd, 1, -1), 1);
	ck_assert(pfd.revents & POLLIN);
	while (!pr_reader_done(r)) {
		pr_reader_wait(r, 100);
		while ((n = pr_reader_read(r, &rec)) == 1)
			samples += rec.type == PR_RECORD_SAMPLE;
		ck_assert_int_eq(n, 0);
	}
	while (pr_reader_read(r, &rec) == 1)
		samples += rec.type == PR_RECORD_SAMPLE;
	ck_assert_int_ge(samples, 20);
	waitpid(pr_reader_child(r), &status, 0);
	pr_reader_close(r);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("live");
	TCase *tc = tcase_create("kernel");

	live_require_perf();
	/* A workload that already quit must not kill the test that asks it
	 * to quit again. */
	signal(SIGPIPE, SIG_IGN);
	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, samples_hold_ip_and_sp_in_the_childs_maps_and_its_stack_canary);
	tcase_add_test(tc, mmap2_comm_and_exit_records_arrive_for_the_child);
	tcase_add_test(tc, a_thread_created_after_attach_is_sampled);
	tcase_add_test(tc, a_child_process_forked_after_attach_is_sampled);
	tcase_add_test(tc, threads_born_while_attaching_are_sampled_once);
	tcase_add_test(tc, threads_born_while_attaching_are_sampled_once_by_each_event);
	tcase_add_test(tc, asking_done_does_not_swallow_a_wakeup);
	tcase_add_test(tc, a_launched_command_resumes_after_disable_and_enable);
	tcase_add_test(tc, lost_is_counted_when_a_tiny_ring_is_flooded);
	tcase_add_test(tc, a_launched_command_is_sampled_from_its_exec);
	tcase_add_test(tc, a_launched_commands_count_runs_from_its_exec);
	tcase_add_test(tc, system_wide_sampling_sees_a_busy_process);
	tcase_add_test(tc, a_cpu_list_samples_only_those_cpus);
	tcase_add_test(tc, the_poll_fd_wakes_when_a_ring_fills_and_pull_reads_drain_it);
	suite_add_tcase(s, tc);
	return run_suite(s);
}
