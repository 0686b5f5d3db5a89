/* SPDX-License-Identifier: Apache-2.0 */
#include <fcntl.h>
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

int bench_run_cmd(char *const argv[], struct run *out)
{
	struct rusage ru;
	double t0 = bench_now();
	pid_t pid = fork();
	int status;

	if (pid < 0)
		return -1;
	if (pid == 0) {
		int null = open("/dev/null", O_WRONLY);

		dup2(null, 1);
		dup2(null, 2);
		execvp(argv[0], argv);
		_exit(127);
	}
	if (wait4(pid, &status, 0, &ru) < 0 || !WIFEXITED(status) || WEXITSTATUS(status))
		return -1;
	bench_take_usage(out, t0, &ru);
	return 0;
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
