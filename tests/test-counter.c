/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Counters (prcounter.h).  "unit": the scaling and the argument checks,
 * no kernel needed.  "live": the counts of stat-workload (DS_STAT_WORKLOAD)
 * against what it does -- N pages touched are N page faults over the
 * startup's own, K pipe round trips on one CPU at least 2K context
 * switches, M moves between CPUs at least M migrations -- and against
 * perf 6.1's perf stat; groups read in one read(2) (read() is wrapped to
 * count them); the failures, which must leave no fd open behind them.
 * Events are described by hand: the name parser is tested on its own.
 *
 * usage: test-counter unit|live
 */
#include <check.h>
#include <errno.h>
#include <fcntl.h>
#include <linux/perf_event.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "checkmain.h"
#include "livecheck.h"
#include "perfreader.h"

/* ---- read(2), counted ---- */

ssize_t __real_read(int fd, void *buf, size_t n);
ssize_t __wrap_read(int fd, void *buf, size_t n);

static int reads;

ssize_t __wrap_read(int fd, void *buf, size_t n)
{
	reads++;
	return __real_read(fd, buf, n);
}

/* ---- events and logs ---- */

static struct pr_event_desc sw(uint64_t config, const char *name, uint32_t leader)
{
	return live_event(PERF_TYPE_SOFTWARE, config, name, leader);
}

static struct pr_event_desc cycles(uint32_t leader)
{
	return live_event(PERF_TYPE_HARDWARE, PERF_COUNT_HW_CPU_CYCLES, "cycles", leader);
}

#define PAGE_FAULTS(l) sw(PERF_COUNT_SW_PAGE_FAULTS, "page-faults", l)
#define CONTEXT_SWITCHES(l) sw(PERF_COUNT_SW_CONTEXT_SWITCHES, "context-switches", l)
#define TASK_CLOCK(l) sw(PERF_COUNT_SW_TASK_CLOCK, "task-clock", l)
#define MIGRATIONS(l) sw(PERF_COUNT_SW_CPU_MIGRATIONS, "cpu-migrations", l)

static char logbuf[8192];

static void keep_log(enum pr_log_level level, const char *msg, void *ctx)
{
	size_t len = strlen(logbuf);

	(void)ctx;
	if (level <= PR_LOG_WARN)
		snprintf(logbuf + len, sizeof(logbuf) - len, "%s\n", msg);
}

#define OPTS(name, ...) PR_OPTS(pr_counter_opts, name, .log = keep_log, __VA_ARGS__)

/* ---- the workload ---- */

static const char *stat_workload(void)
{
	const char *p = getenv("DS_STAT_WORKLOAD");

	ck_assert_msg(p && *p, "DS_STAT_WORKLOAD must name stat-workload");
	return p;
}

static int wait_exit(pid_t pid)
{
	int status;

	ck_assert_int_eq(waitpid(pid, &status, 0), pid);
	ck_assert_msg(WIFEXITED(status), "the workload was killed by signal %d",
		      WTERMSIG(status));
	return WEXITSTATUS(status);
}

/* Count `evs` over `stat-workload MODE N`, run as the counter's command;
 * the workload's exit status. */
static int count_command(const struct pr_event_desc *evs, size_t nr, const char *mode,
			 const char *n, struct pr_count *counts)
{
	char *argv[] = { (char *)stat_workload(), (char *)mode, (char *)n, NULL };
	OPTS(o);
	struct pr_counter *c = pr_counter_open_command(evs, nr, argv, &o);
	int status;

	ck_assert_msg(c, "open: %s%s", strerror(errno), logbuf);
	ck_assert_int_gt(pr_counter_child(c), 0);
	ck_assert_int_eq(pr_counter_enable(c), 0);
	status = wait_exit(pr_counter_child(c));
	ck_assert_int_eq(pr_counter_read(c, counts, nr), 0);
	pr_counter_close(c);
	return status;
}

static uint64_t count_one(struct pr_event_desc ev, const char *mode, const char *n)
{
	struct pr_count cnt;

	ck_assert_int_eq(count_command(&ev, 1, mode, n, &cnt), 0);
	ck_assert(cnt.supported);
	ck_assert_uint_eq(cnt.running, cnt.enabled);
	ck_assert(cnt.scaled == (double)cnt.value);
	return cnt.value;
}

/* `stat-workload -g MODE N`, set up and waiting for the go. */
struct held {
	pid_t pid;
	int go;
};

static struct held hold_workload(const char *mode, const char *n)
{
	int to[2], from[2];
	struct held h;
	char line[16];
	FILE *out;

	ck_assert_int_eq(pipe2(to, O_CLOEXEC), 0);
	ck_assert_int_eq(pipe2(from, O_CLOEXEC), 0);
	h.pid = fork();
	ck_assert_int_ge(h.pid, 0);
	if (h.pid == 0) {
		dup2(to[0], 0);
		dup2(from[1], 1);
		execl(stat_workload(), "stat-workload", "-g", mode, n, (char *)NULL);
		_exit(127);
	}
	close(to[0]);
	close(from[1]);
	out = fdopen(from[0], "r");
	ck_assert_ptr_nonnull(fgets(line, sizeof(line), out));
	ck_assert_str_eq(line, "ready\n");
	fclose(out);
	h.go = to[1];
	return h;
}

static void release_workload(struct held *h)
{
	ck_assert_int_eq(write(h->go, "g", 1), 1);
	close(h->go);
	ck_assert_int_eq(wait_exit(h->pid), 0);
}

/* ---- unit ---- */

START_TEST(scale_is_the_value_when_the_event_always_ran)
{
	ck_assert(pr_count_scale(12345, 1000, 1000) == 12345.0);
	/* Running a hair past enabled is rounding, not multiplexing. */
	ck_assert(pr_count_scale(12345, 1000, 1001) == 12345.0);
	ck_assert(pr_count_scale(0, 1000, 1000) == 0.0);
}
END_TEST

START_TEST(scale_extrapolates_a_multiplexed_count)
{
	ck_assert(pr_count_scale(1000, 200, 100) == 2000.0);
	ck_assert(pr_count_scale(300, 1000, 250) == 1200.0);
	/* Past 2^53 the estimate is a double's, not an exact count. */
	ck_assert(pr_count_scale(UINT64_C(1) << 40, 3, 2) == 1.5 * (double)(UINT64_C(1) << 40));
}
END_TEST

START_TEST(scale_is_zero_when_the_event_never_ran)
{
	ck_assert(pr_count_scale(0, 1000, 0) == 0.0);
	ck_assert(pr_count_scale(5, 1000, 0) == 0.0);
	ck_assert(pr_count_scale(0, 0, 0) == 0.0);
}
END_TEST

START_TEST(groups_must_be_led_by_an_earlier_event_leading_itself)
{
	struct pr_event_desc later[] = { PAGE_FAULTS(1), TASK_CLOCK(1) };
	struct pr_event_desc chained[] = { PAGE_FAULTS(0), TASK_CLOCK(0), MIGRATIONS(1) };
	pid_t self = getpid();
	int fds = live_count_fds();
	OPTS(o);

	logbuf[0] = 0;
	ck_assert_ptr_null(pr_counter_open_pids(later, 2, &self, 1, &o));
	ck_assert_int_eq(errno, EINVAL);
	ck_assert_ptr_nonnull(strstr(logbuf, "event 0 (page-faults) names event 1"));
	logbuf[0] = 0;
	ck_assert_ptr_null(pr_counter_open_pids(chained, 3, &self, 1, &o));
	ck_assert_int_eq(errno, EINVAL);
	ck_assert_ptr_nonnull(strstr(logbuf, "event 2 (cpu-migrations)"));
	ck_assert_ptr_null(pr_counter_open_pids(later, 0, &self, 1, &o));
	ck_assert_int_eq(errno, EINVAL);
	ck_assert_int_eq(live_count_fds(), fds);
}
END_TEST

START_TEST(bad_options_and_null_counters_are_refused)
{
	struct pr_event_desc ev = PAGE_FAULTS(0);
	struct pr_counter_opts big[2];
	struct pr_counter_unit u;
	struct pr_count cnt;
	pid_t self = getpid();

	memset(big, 0, sizeof(big));
	big[0].sz = sizeof(big);
	((char *)big)[sizeof(big) - 1] = 1;
	ck_assert_ptr_null(pr_counter_open_pids(&ev, 1, &self, 1, big));
	ck_assert_int_eq(errno, EINVAL);
	ck_assert_ptr_null(pr_counter_open_pids(&ev, 1, NULL, 0, NULL));
	ck_assert_int_eq(errno, EINVAL);

	pr_counter_close(NULL);
	ck_assert_int_eq(pr_counter_enable(NULL), -EINVAL);
	ck_assert_int_eq(pr_counter_disable(NULL), -EINVAL);
	ck_assert_int_eq(pr_counter_child(NULL), -1);
	ck_assert_uint_eq(pr_counter_nr_events(NULL), 0);
	ck_assert_ptr_null(pr_counter_event(NULL, 0));
	ck_assert_int_eq(pr_counter_read(NULL, &cnt, 1), -EINVAL);
	ck_assert_uint_eq(pr_counter_nr_units(NULL), 0);
	ck_assert_int_eq(pr_counter_unit(NULL, 0, &u), -EINVAL);
	ck_assert_int_eq(pr_counter_read_unit(NULL, 0, &cnt, 1), -EINVAL);
}
END_TEST

/* ---- live: counts against what the workload did ---- */

START_TEST(page_faults_are_the_pages_touched_over_the_startup)
{
	uint64_t base = count_one(PAGE_FAULTS(0), "pages", "0");
	uint64_t n = count_one(PAGE_FAULTS(0), "pages", "20000");

	printf("page-faults: %llu for 20000 pages, %llu for none\n",
	       (unsigned long long)n, (unsigned long long)base);
	ck_assert_uint_gt(base, 0);
	ck_assert_msg(llabs((long long)(n - base) - 20000) <= 200,
		      "%llu faults for 20000 pages over a startup of %llu",
		      (unsigned long long)n, (unsigned long long)base);
}
END_TEST

START_TEST(context_switches_are_two_per_pipe_round_trip_at_least)
{
	uint64_t n = count_one(CONTEXT_SWITCHES(0), "pipe", "2000");

	printf("context-switches: %llu for 2000 round trips\n", (unsigned long long)n);

	ck_assert_msg(n >= 4000, "%llu context switches for 2000 round trips",
		      (unsigned long long)n);
}
END_TEST

START_TEST(cpu_migrations_are_the_moves_at_least)
{
	struct pr_event_desc ev = MIGRATIONS(0);
	struct pr_count cnt;
	int status = count_command(&ev, 1, "migrate", "200", &cnt);

	if (status == 77) {
		printf("fewer than two usable CPUs: migrations not tested\n");
		return;
	}
	ck_assert_int_eq(status, 0);
	ck_assert_msg(cnt.value >= 200, "%llu migrations for 200 moves",
		      (unsigned long long)cnt.value);
}
END_TEST

START_TEST(a_group_is_read_in_one_read_with_one_time)
{
	struct pr_event_desc evs[] = { TASK_CLOCK(0), PAGE_FAULTS(0), CONTEXT_SWITCHES(0),
				       MIGRATIONS(3) };
	char *argv[] = { (char *)stat_workload(), "pipe", "1000", NULL };
	struct pr_count cnt[4];
	struct pr_counter *c;
	OPTS(o);

	c = pr_counter_open_command(evs, 4, argv, &o);
	ck_assert_msg(c, "open: %s%s", strerror(errno), logbuf);
	ck_assert_uint_eq(pr_counter_nr_events(c), 4);
	ck_assert_str_eq(pr_counter_event(c, 2)->name, "context-switches");
	ck_assert_ptr_null(pr_counter_event(c, 4));
	ck_assert_int_eq(pr_counter_enable(c), 0);
	ck_assert_int_eq(wait_exit(pr_counter_child(c)), 0);
	reads = 0;
	ck_assert_int_eq(pr_counter_read(c, cnt, 4), 0);
	/* One read for the group, one for the event alone. */
	ck_assert_int_eq(reads, 2);
	for (int i = 1; i < 3; i++) {
		ck_assert_uint_eq(cnt[i].enabled, cnt[0].enabled);
		ck_assert_uint_eq(cnt[i].running, cnt[0].running);
	}
	ck_assert_uint_gt(cnt[0].enabled, 0);
	/* task-clock is the nanoseconds the task ran, within its enabled
	 * time (two threads on one CPU). */
	ck_assert_uint_gt(cnt[0].value, 0);
	ck_assert_uint_le(cnt[0].value, cnt[0].enabled);
	ck_assert_uint_gt(cnt[1].value, 0);
	ck_assert_uint_ge(cnt[2].value, 2000);
	ck_assert(cnt[3].supported);
	pr_counter_close(c);
}
END_TEST

START_TEST(per_thread_units_are_the_threads_of_the_process)
{
	struct pr_event_desc ev = CONTEXT_SWITCHES(0);
	struct held h = hold_workload("pipe", "1000");
	struct pr_count total, unit;
	uint64_t sum = 0;
	struct pr_counter *c;
	OPTS(o, .per_thread = true);

	c = pr_counter_open_pids(&ev, 1, &h.pid, 1, &o);
	ck_assert_msg(c, "open: %s%s", strerror(errno), logbuf);
	ck_assert_uint_eq(pr_counter_nr_units(c), 2);
	for (size_t i = 0; i < 2; i++) {
		struct pr_counter_unit u;
		char path[64];

		ck_assert_int_eq(pr_counter_unit(c, i, &u), 0);
		ck_assert_int_eq(u.pid, h.pid);
		ck_assert_int_eq(u.cpu, -1);
		snprintf(path, sizeof(path), "/proc/%d/task/%d", (int)h.pid, (int)u.tid);
		ck_assert_msg(access(path, F_OK) == 0, "%s: no such thread", path);
	}
	ck_assert_int_eq(pr_counter_unit(c, 2, &(struct pr_counter_unit){ 0 }), -ERANGE);
	ck_assert_int_eq(pr_counter_read_unit(c, 2, &unit, 1), -ERANGE);
	ck_assert_int_eq(pr_counter_enable(c), 0);
	release_workload(&h);
	ck_assert_int_eq(pr_counter_read(c, &total, 1), 0);
	for (size_t i = 0; i < 2; i++) {
		ck_assert_int_eq(pr_counter_read_unit(c, i, &unit, 1), 0);
		/* Each thread leaves its CPU at least once a round trip. */
		ck_assert_msg(unit.value >= 1000, "unit %zu: %llu switches", i,
			      (unsigned long long)unit.value);
		sum += unit.value;
	}
	ck_assert_uint_eq(sum, total.value);
	pr_counter_close(c);
}
END_TEST

START_TEST(a_running_process_is_counted_by_pid)
{
	struct pr_event_desc ev = PAGE_FAULTS(0);
	struct held h = hold_workload("pages", "20000");
	struct pr_counter *c;
	struct pr_count cnt;
	OPTS(o);

	c = pr_counter_open_pids(&ev, 1, &h.pid, 1, &o);
	ck_assert_msg(c, "open: %s%s", strerror(errno), logbuf);
	ck_assert_uint_eq(pr_counter_nr_units(c), 0);
	ck_assert_int_eq(pr_counter_child(c), -1);
	ck_assert_int_eq(pr_counter_enable(c), 0);
	release_workload(&h);
	ck_assert_int_eq(pr_counter_disable(c), 0);
	ck_assert_int_eq(pr_counter_read(c, &cnt, 1), 0);
	/* The 20000 pages, and what reading the go and exiting fault. */
	ck_assert_msg(cnt.value >= 20000 && cnt.value <= 20200, "%llu faults for 20000 pages",
		      (unsigned long long)cnt.value);
	pr_counter_close(c);
}
END_TEST

START_TEST(a_pid_that_is_no_process_is_refused)
{
	struct pr_event_desc ev = PAGE_FAULTS(0);
	pid_t pid = fork();
	int fds;
	OPTS(o);

	ck_assert_int_ge(pid, 0);
	if (pid == 0)
		_exit(0);
	ck_assert_int_eq(wait_exit(pid), 0);
	fds = live_count_fds();
	logbuf[0] = 0;
	ck_assert_ptr_null(pr_counter_open_pids(&ev, 1, &pid, 1, &o));
	ck_assert_int_eq(errno, ESRCH);
	ck_assert_msg(strstr(logbuf, "is not a running process"), "log: %s", logbuf);
	ck_assert_int_eq(live_count_fds(), fds);
}
END_TEST

START_TEST(cpus_count_system_wide_one_unit_per_cpu)
{
	struct pr_event_desc ev = CONTEXT_SWITCHES(0);
	char *argv[] = { (char *)stat_workload(), "pipe", "1000", NULL };
	int online[64], cpu0 = 0, nr;
	struct pr_count total, unit;
	struct pr_counter *c;
	uint64_t sum = 0;
	FILE *f;
	char buf[256];
	pid_t pid;
	OPTS(o);

	f = fopen("/sys/devices/system/cpu/online", "r");
	ck_assert_ptr_nonnull(f);
	ck_assert_ptr_nonnull(fgets(buf, sizeof(buf), f));
	fclose(f);
	nr = pr_cpu_list_parse(buf, online, 64);
	ck_assert_int_gt(nr, 0);

	c = pr_counter_open_cpus(&ev, 1, NULL, 0, &o);
	ck_assert_msg(c, "open: %s%s", strerror(errno), logbuf);
	ck_assert_uint_eq(pr_counter_nr_units(c), (size_t)nr);
	for (int i = 0; i < nr; i++) {
		struct pr_counter_unit u;

		ck_assert_int_eq(pr_counter_unit(c, (size_t)i, &u), 0);
		ck_assert_int_eq(u.cpu, online[i]);
		ck_assert_int_eq(u.pid, -1);
		ck_assert_int_eq(u.tid, -1);
	}
	ck_assert_int_eq(pr_counter_enable(c), 0);
	pid = fork();
	ck_assert_int_ge(pid, 0);
	if (pid == 0) {
		execv(argv[0], argv);
		_exit(127);
	}
	ck_assert_int_eq(wait_exit(pid), 0);
	ck_assert_int_eq(pr_counter_disable(c), 0);
	ck_assert_int_eq(pr_counter_read(c, &total, 1), 0);
	ck_assert_msg(total.value >= 2000, "%llu switches system-wide",
		      (unsigned long long)total.value);
	for (int i = 0; i < nr; i++) {
		ck_assert_int_eq(pr_counter_read_unit(c, (size_t)i, &unit, 1), 0);
		sum += unit.value;
	}
	ck_assert_uint_eq(sum, total.value);
	pr_counter_close(c);

	/* A list of CPUs: those only. */
	c = pr_counter_open_cpus(&ev, 1, &cpu0, 1, &o);
	ck_assert_msg(c, "open: %s%s", strerror(errno), logbuf);
	ck_assert_uint_eq(pr_counter_nr_units(c), 1);
	pr_counter_close(c);
}
END_TEST

/* perf stat -a --per-thread: a unit per thread of the machine, the held
 * workload's two among them, each counting its own switches. */
START_TEST(per_thread_system_wide_units_are_every_thread_of_the_machine)
{
	struct pr_event_desc ev = CONTEXT_SWITCHES(0);
	struct held h = hold_workload("pipe", "1000");
	size_t mine = 0, workload = 0, n;
	struct pr_counter *c;
	OPTS(o, .per_thread = true);

	c = pr_counter_open_cpus(&ev, 1, NULL, 0, &o);
	ck_assert_msg(c, "open: %s%s", strerror(errno), logbuf);
	n = pr_counter_nr_units(c);
	ck_assert_int_eq(pr_counter_enable(c), 0);
	release_workload(&h);
	for (size_t i = 0; i < n; i++) {
		struct pr_counter_unit u;
		struct pr_count cnt;

		ck_assert_int_eq(pr_counter_unit(c, i, &u), 0);
		ck_assert_int_eq(u.cpu, -1);
		mine += u.pid == getpid() && u.tid == (pid_t)syscall(SYS_gettid);
		if (u.pid != h.pid)
			continue;
		workload++;
		ck_assert_int_eq(pr_counter_read_unit(c, i, &cnt, 1), 0);
		ck_assert_msg(cnt.value >= 1000, "thread %d: %llu switches", (int)u.tid,
			      (unsigned long long)cnt.value);
	}
	ck_assert_uint_eq(mine, 1);
	ck_assert_uint_eq(workload, 2);
	pr_counter_close(c);
}
END_TEST

/* perf stat -a -- CMD: the command runs once the CPUs count, so they
 * count all it does. */
START_TEST(a_command_runs_beside_the_cpus_once_they_count)
{
	struct pr_event_desc ev = PAGE_FAULTS(0);
	char *argv[] = { (char *)stat_workload(), "pages", "2000", NULL };
	struct pr_counter *c;
	struct pr_count cnt;
	OPTS(o, .command = argv);

	c = pr_counter_open_cpus(&ev, 1, NULL, 0, &o);
	ck_assert_msg(c, "open: %s%s", strerror(errno), logbuf);
	ck_assert_int_gt(pr_counter_child(c), 0);
	ck_assert_int_eq(pr_counter_enable(c), 0);
	ck_assert_int_eq(wait_exit(pr_counter_child(c)), 0);
	ck_assert_int_eq(pr_counter_disable(c), 0);
	ck_assert_int_eq(pr_counter_read(c, &cnt, 1), 0);
	ck_assert_msg(cnt.value >= 2000, "%llu faults system-wide",
		      (unsigned long long)cnt.value);
	pr_counter_close(c);
}
END_TEST

START_TEST(a_cpu_the_machine_lacks_is_refused)
{
	struct pr_event_desc ev = CONTEXT_SWITCHES(0);
	int cpus[] = { 0, 8191 };
	int fds = live_count_fds();
	OPTS(o);

	ck_assert_ptr_null(pr_counter_open_cpus(&ev, 1, cpus, 2, &o));
	ck_assert_int_eq(errno, EINVAL);
	ck_assert_msg(strstr(logbuf, "there is no CPU 8191 on this machine"), "log: %s", logbuf);
	ck_assert_int_eq(live_count_fds(), fds);
}
END_TEST

/* The command's second thread is created after the open and makes all
 * N faults: without inherit, only the main thread's start is counted (a
 * few hundred faults), with it all N. */
START_TEST(no_inherit_leaves_out_threads_created_after_the_open)
{
	struct pr_event_desc ev = PAGE_FAULTS(0);
	char *argv[] = { (char *)stat_workload(), "pages-thread", "20000", NULL };
	struct pr_counter *c;
	struct pr_count cnt;
	OPTS(o, .no_inherit = true);
	OPTS(inherit);

	c = pr_counter_open_command(&ev, 1, argv, &o);
	ck_assert_msg(c, "open: %s%s", strerror(errno), logbuf);
	ck_assert_int_eq(pr_counter_enable(c), 0);
	ck_assert_int_eq(wait_exit(pr_counter_child(c)), 0);
	ck_assert_int_eq(pr_counter_read(c, &cnt, 1), 0);
	ck_assert_msg(cnt.value > 0 && cnt.value < 2000,
		      "%llu faults of the main thread, whose second made 20000",
		      (unsigned long long)cnt.value);
	pr_counter_close(c);

	c = pr_counter_open_command(&ev, 1, argv, &inherit);
	ck_assert_msg(c, "open: %s%s", strerror(errno), logbuf);
	ck_assert_int_eq(pr_counter_enable(c), 0);
	ck_assert_int_eq(wait_exit(pr_counter_child(c)), 0);
	ck_assert_int_eq(pr_counter_read(c, &cnt, 1), 0);
	ck_assert_msg(cnt.value >= 20000, "%llu faults with inherit, at least 20000",
		      (unsigned long long)cnt.value);
	pr_counter_close(c);
}
END_TEST

/* ---- live: what the machine lacks, and failures ---- */

/* What the counters would open, asked the one way the library has. */
static bool machine_has_cycles(void)
{
	PR_OPTS(pr_event_opts, eo, .prefer_hw_cycles = true);

	return pr_event_probe(&eo) == PR_SOURCE_HW_CYCLES;
}

START_TEST(skip_unsupported_reads_a_missing_hardware_event_as_unsupported)
{
	struct pr_event_desc evs[] = { TASK_CLOCK(0), cycles(1), PAGE_FAULTS(1) };
	struct pr_count cnt[3];
	OPTS(o, .skip_unsupported = true);
	char *argv[] = { (char *)stat_workload(), "pages", "100", NULL };
	struct pr_counter *c;

	if (machine_has_cycles()) {
		printf("this machine counts cycles: nothing is unsupported to skip\n");
		return;
	}
	c = pr_counter_open_command(evs, 3, argv, &o);
	ck_assert_msg(c, "open: %s%s", strerror(errno), logbuf);
	ck_assert_int_eq(pr_counter_enable(c), 0);
	ck_assert_int_eq(wait_exit(pr_counter_child(c)), 0);
	ck_assert_int_eq(pr_counter_read(c, cnt, 3), 0);
	ck_assert(cnt[0].supported);
	ck_assert_uint_gt(cnt[0].value, 0);
	ck_assert(!cnt[1].supported);
	ck_assert_uint_eq(cnt[1].value, 0);
	ck_assert_uint_eq(cnt[1].enabled, 0);
	/* Its group is not counted without its leader. */
	ck_assert(!cnt[2].supported);
	pr_counter_close(c);
}
END_TEST

/* The child of a command that failed to open was killed and reaped. */
static void assert_no_child(void)
{
	ck_assert_int_eq(waitpid(-1, NULL, WNOHANG), -1);
	ck_assert_int_eq(errno, ECHILD);
}

START_TEST(a_missing_hardware_event_fails_the_open_and_says_what_to_do)
{
	struct pr_event_desc alone[] = { TASK_CLOCK(0), cycles(1) };
	struct pr_event_desc group[] = { TASK_CLOCK(0), PAGE_FAULTS(0), cycles(0) };
	char *argv[] = { (char *)stat_workload(), "pages", "0", NULL };
	pid_t self = getpid();
	int fds = live_count_fds();
	OPTS(o);

	if (machine_has_cycles()) {
		printf("this machine counts cycles: no missing event to refuse\n");
		return;
	}
	logbuf[0] = 0;
	ck_assert_ptr_null(pr_counter_open_command(alone, 2, argv, &o));
	ck_assert_msg(errno == ENOENT || errno == EOPNOTSUPP || errno == ENODEV,
		      "errno %d", errno);
	ck_assert_msg(strstr(logbuf, "the hardware event cycles is not available on this "
				     "machine (no PMU: a VM?); use a software event such as "
				     "cpu-clock"), "log: %s", logbuf);
	ck_assert_int_eq(live_count_fds(), fds);
	assert_no_child();

	logbuf[0] = 0;
	ck_assert_ptr_null(pr_counter_open_pids(group, 3, &self, 1, &o));
	ck_assert_msg(strstr(logbuf, "cycles of the group {task-clock,page-faults,cycles}"),
		      "log: %s", logbuf);
	ck_assert_int_eq(live_count_fds(), fds);

	logbuf[0] = 0;
	ck_assert_ptr_null(pr_counter_open_cpus(group, 3, NULL, 0, &o));
	ck_assert_msg(strstr(logbuf, "{task-clock,page-faults,cycles}"), "log: %s", logbuf);
	ck_assert_int_eq(live_count_fds(), fds);
}
END_TEST

/* The kernel reads a group in at most 16 KiB: with times and ids, 1022
 * events.  A group of 1100 is refused at its 1023rd. */
START_TEST(a_group_too_large_for_the_kernel_fails_the_open_and_says_so)
{
	enum { N = 1100 };
	struct pr_event_desc *evs = calloc(N, sizeof(*evs));
	struct rlimit lim;
	pid_t self = getpid();
	int fds;
	OPTS(o);

	ck_assert_int_eq(getrlimit(RLIMIT_NOFILE, &lim), 0);
	if (lim.rlim_max < N + 64) {
		printf("RLIMIT_NOFILE's hard limit is %llu: no room for a group of %d\n",
		       (unsigned long long)lim.rlim_max, N);
		free(evs);
		return;
	}
	lim.rlim_cur = N + 64;
	ck_assert_int_eq(setrlimit(RLIMIT_NOFILE, &lim), 0);
	for (size_t i = 0; i < N; i++)
		evs[i] = TASK_CLOCK(0);
	fds = live_count_fds();
	ck_assert_ptr_null(pr_counter_open_pids(evs, N, &self, 1, &o));
	ck_assert_int_eq(errno, E2BIG);
	ck_assert_msg(strstr(logbuf, "the group {task-clock,task-clock,"), "log: %s", logbuf);
	ck_assert_msg(strstr(logbuf, "... has too many events for the kernel to read at once "
				     "(1100"), "log: %s", logbuf);
	ck_assert_msg(strstr(logbuf, "split it into smaller groups"), "log: %s", logbuf);
	ck_assert_int_eq(live_count_fds(), fds);
	free(evs);
}
END_TEST

START_TEST(per_thread_is_refused_for_commands_and_cpu_lists)
{
	struct pr_event_desc ev = PAGE_FAULTS(0);
	char *argv[] = { (char *)stat_workload(), "pages", "0", NULL };
	int fds = live_count_fds(), cpu0 = 0;
	OPTS(o, .per_thread = true);
	OPTS(twice, .command = argv);

	ck_assert_ptr_null(pr_counter_open_command(&ev, 1, argv, &o));
	ck_assert_int_eq(errno, EINVAL);
	ck_assert_ptr_null(pr_counter_open_cpus(&ev, 1, &cpu0, 1, &o));
	ck_assert_int_eq(errno, EINVAL);
	/* A counted command takes no command beside it. */
	ck_assert_ptr_null(pr_counter_open_command(&ev, 1, argv, &twice));
	ck_assert_int_eq(errno, EINVAL);
	ck_assert_int_eq(live_count_fds(), fds);
	assert_no_child();
}
END_TEST

START_TEST(a_command_that_cannot_run_fails_the_enable)
{
	struct pr_event_desc ev = PAGE_FAULTS(0);
	char *argv[] = { "/nonexistent/stat-workload", NULL };
	struct pr_counter *c;
	OPTS(o);

	logbuf[0] = 0;
	c = pr_counter_open_command(&ev, 1, argv, &o);
	ck_assert_ptr_nonnull(c);
	ck_assert_int_eq(pr_counter_enable(c), -ENOENT);
	ck_assert_msg(strstr(logbuf, "cannot run '/nonexistent/stat-workload'"), "log: %s",
		      logbuf);
	pr_counter_close(c);
	assert_no_child();
}
END_TEST

/* ---- live: against perf stat ---- */

/* perf stat -x, of `stat-workload pages N`: the page-faults count. */
static long long perf_stat_page_faults(const char *n)
{
	char cmd[1024], line[512], out[] = "/tmp/test-counter-XXXXXX";
	long long v = -1;
	int fd = mkstemp(out);
	FILE *f;

	ck_assert_int_ge(fd, 0);
	close(fd);
	snprintf(cmd, sizeof(cmd), "perf stat -x, -o %s -e page-faults -- %s pages %s",
		 out, stat_workload(), n);
	ck_assert_msg(system(cmd) == 0, "%s failed: is perf installed?", cmd);
	f = fopen(out, "r");
	ck_assert_ptr_nonnull(f);
	while (fgets(line, sizeof(line), f))
		if (strstr(line, ",page-faults,"))
			v = atoll(line);
	fclose(f);
	unlink(out);
	ck_assert_msg(v > 0, "no page-faults count in perf stat's output");
	return v;
}

START_TEST(page_faults_agree_with_perf_stat)
{
	long long perf = perf_stat_page_faults("20000");
	uint64_t ours = count_one(PAGE_FAULTS(0), "pages", "20000");

	printf("page-faults of 20000 pages: %llu, perf stat %lld\n",
	       (unsigned long long)ours, perf);
	ck_assert_msg(llabs((long long)ours - perf) <= perf / 50,
		      "ours %llu, perf stat %lld", (unsigned long long)ours, perf);
}
END_TEST

static void setup(void)
{
	logbuf[0] = 0;
}

static Suite *unit_suite(void)
{
	Suite *s = suite_create("counter-unit");
	TCase *tc = tcase_create("scale");

	tcase_add_test(tc, scale_is_the_value_when_the_event_always_ran);
	tcase_add_test(tc, scale_extrapolates_a_multiplexed_count);
	tcase_add_test(tc, scale_is_zero_when_the_event_never_ran);
	suite_add_tcase(s, tc);
	tc = tcase_create("arguments");
	tcase_add_checked_fixture(tc, setup, NULL);
	tcase_add_test(tc, groups_must_be_led_by_an_earlier_event_leading_itself);
	tcase_add_test(tc, bad_options_and_null_counters_are_refused);
	suite_add_tcase(s, tc);
	return s;
}

static Suite *live_suite(void)
{
	Suite *s = suite_create("counter-live");
	TCase *tc = tcase_create("counts");

	tcase_add_checked_fixture(tc, setup, NULL);
	tcase_set_timeout(tc, 120);
	tcase_add_test(tc, page_faults_are_the_pages_touched_over_the_startup);
	tcase_add_test(tc, context_switches_are_two_per_pipe_round_trip_at_least);
	tcase_add_test(tc, cpu_migrations_are_the_moves_at_least);
	tcase_add_test(tc, a_group_is_read_in_one_read_with_one_time);
	tcase_add_test(tc, per_thread_units_are_the_threads_of_the_process);
	tcase_add_test(tc, a_running_process_is_counted_by_pid);
	tcase_add_test(tc, cpus_count_system_wide_one_unit_per_cpu);
	tcase_add_test(tc, per_thread_system_wide_units_are_every_thread_of_the_machine);
	tcase_add_test(tc, a_command_runs_beside_the_cpus_once_they_count);
	tcase_add_test(tc, no_inherit_leaves_out_threads_created_after_the_open);
	tcase_add_test(tc, page_faults_agree_with_perf_stat);
	suite_add_tcase(s, tc);
	tc = tcase_create("failures");
	tcase_add_checked_fixture(tc, setup, NULL);
	tcase_set_timeout(tc, 120);
	tcase_add_test(tc, a_pid_that_is_no_process_is_refused);
	tcase_add_test(tc, a_cpu_the_machine_lacks_is_refused);
	tcase_add_test(tc, skip_unsupported_reads_a_missing_hardware_event_as_unsupported);
	tcase_add_test(tc, a_missing_hardware_event_fails_the_open_and_says_what_to_do);
	tcase_add_test(tc, a_group_too_large_for_the_kernel_fails_the_open_and_says_so);
	tcase_add_test(tc, per_thread_is_refused_for_commands_and_cpu_lists);
	tcase_add_test(tc, a_command_that_cannot_run_fails_the_enable);
	suite_add_tcase(s, tc);
	return s;
}

int main(int argc, char **argv)
{
	if (argc == 2 && !strcmp(argv[1], "unit"))
		return run_suite(unit_suite());
	if (argc == 2 && !strcmp(argv[1], "live")) {
		live_require_perf();
		return run_suite(live_suite());
	}
	fprintf(stderr, "usage: test-counter unit|live\n");
	return 2;
}
