/* SPDX-License-Identifier: Apache-2.0 */
#include <fcntl.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/utsname.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "child.h"

double bench_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

void bench_take_usage(struct run *out, double t0, const struct rusage *ru)
{
	out->wall = bench_now() - t0;
	out->cpu = (double)ru->ru_utime.tv_sec + (double)ru->ru_utime.tv_usec / 1e6 +
		   (double)ru->ru_stime.tv_sec + (double)ru->ru_stime.tv_usec / 1e6;
	out->maxrss_kb = ru->ru_maxrss;
}

pid_t bench_spawn(char *const argv[], int in_fd, const char *err_path)
{
	pid_t pid = fork();

	if (pid == 0) {
		int null = open("/dev/null", O_WRONLY);

		dup2(null, 1);
		if (in_fd >= 0)
			dup2(in_fd, 0);
		if (err_path) {
			int err = open(err_path, O_WRONLY | O_CREAT | O_TRUNC, 0644);

			dup2(err < 0 ? null : err, 2);
		}
		execvp(argv[0], argv);
		_exit(127);
	}
	return pid;
}

int bench_wait(pid_t pid, double t0, struct run *out)
{
	struct rusage ru;
	int status;

	if (wait4(pid, &status, 0, &ru) < 0)
		return -1;
	bench_take_usage(out, t0, &ru);
	return WIFEXITED(status) && !WEXITSTATUS(status) ? 0 : -1;
}

void bench_stop(pid_t pid)
{
	kill(pid, SIGKILL);
	waitpid(pid, NULL, 0);
}

int bench_run_cmd(char *const argv[], struct run *out)
{
	double t0 = bench_now();
	pid_t pid = bench_spawn(argv, -1, "/dev/null");

	return pid < 0 ? -1 : bench_wait(pid, t0, out);
}

void bench_warm(const char *path)
{
	static char buf[1 << 20];
	int fd = open(path, O_RDONLY | O_CLOEXEC);

	if (fd < 0)
		return;
	while (read(fd, buf, sizeof(buf)) > 0)
		;
	close(fd);
}

bool bench_wanted(int argc, char **argv, const char *mode)
{
	if (optind == argc)
		return true;
	for (int i = optind; i < argc; i++)
		if (!strcmp(argv[i], mode))
			return true;
	return false;
}

void bench_keep_best(struct run *best, const struct run *r)
{
	long rss = best->maxrss_kb > r->maxrss_kb ? best->maxrss_kb : r->maxrss_kb;

	if (!best->cpu || r->cpu < best->cpu) {
		unsigned long long records = best->records;

		*best = *r;
		if (!r->records)
			best->records = records;
	}
	best->maxrss_kb = rss;
}

static int record(const char *out, const char *cmd)
{
	fprintf(stderr, "bench: recording %s...\n", out);
	return system(cmd) ? -1 : 0;
}

int bench_record_deep(const char *dir, const char *workload, char *out, size_t len)
{
	char cmd[8192];

	snprintf(out, len, "%s/deep.data", dir);
	snprintf(cmd, sizeof(cmd), "perf record -q -e cpu-clock -F 1999 --call-graph dwarf "
		 "-o %s -- %s recurse 10 >/dev/null 2>&1", out, workload);
	return record(out, cmd);
}

int bench_record_cc1(const char *dir, const char *gen, int functions, char *out, size_t len)
{
	char cmd[8192];
	struct utsname un;

	uname(&un);
	snprintf(out, len, "%s/cc1.data", dir);
	/* Randomization off: see tests/test-agree.sh on perf and exec. */
	snprintf(cmd, sizeof(cmd), "sh %s %d >%s/big.c && setarch %s -R "
		 "perf record -q -e cpu-clock -F 1999 --call-graph dwarf -o %s -- "
		 "gcc -O2 -c %s/big.c -o %s/big.o >/dev/null 2>&1",
		 gen, functions, dir, un.machine, out, dir, dir);
	return record(out, cmd);
}

long bench_samples_in(const char *tool, const char *path)
{
	char cmd[4096], line[512];
	long n = -1;
	FILE *p;

	snprintf(cmd, sizeof(cmd), "%s report -F ip -i %s -o /dev/null 2>&1", tool, path);
	p = popen(cmd, "r");
	while (p && fgets(line, sizeof(line), p))
		if (sscanf(line, "dwarfsample: %ld samples", &n) == 1)
			break;
	if (p)
		pclose(p);
	return n;
}

int bench_perf_record_pid(pid_t pid, unsigned long rate, double seconds,
			  const char *out, const char *err_path, struct run *r)
{
	char freq[32], pidarg[32], secs[32];
	char *argv[] = { "perf", "record", "-q", "-e", "cpu-clock", "-F", freq,
			 "--call-graph", "dwarf,8192", "-p", pidarg, "-o", (char *)out,
			 "--", "sleep", secs, NULL };

	snprintf(freq, sizeof(freq), "%lu", rate);
	snprintf(pidarg, sizeof(pidarg), "%d", (int)pid);
	snprintf(secs, sizeof(secs), "%.1f", seconds);
	if (seconds <= 0)
		argv[13] = NULL;
	return bench_wait(bench_spawn(argv, -1, err_path), bench_now(), r);
}

int bench_perf_stats(const char *path, unsigned long long *samples,
		     unsigned long long *lost)
{
	char cmd[4096], line[256];
	bool per_event = false;
	FILE *f;

	*samples = *lost = 0;
	snprintf(cmd, sizeof(cmd), "perf report -i %s --stats 2>/dev/null", path);
	f = popen(cmd, "r");
	if (!f)
		return -1;
	/* The per-event section (after "stats:") holds the totals. */
	while (fgets(line, sizeof(line), f)) {
		unsigned long long v;

		if (strstr(line, " stats:"))
			per_event = true;
		if (!per_event)
			continue;
		if (sscanf(line, " SAMPLE events: %llu", &v) == 1)
			*samples = v;
		else if (sscanf(line, " LOST_SAMPLES events: %llu", &v) == 1)
			*lost = v;
	}
	pclose(f);
	return 0;
}
