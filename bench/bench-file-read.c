/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Reading a large capture: libperfreader (open, index, hand out every
 * record parsed, in timestamp order) against the peer, `perf script -F
 * comm,tid,time` on the same file, each run in a child process so its
 * CPU time and peak resident memory are its own.  Best of N runs, after a
 * warm-up that puts the file in the page cache for both.
 *
 * usage: bench-file-read [-n RUNS] [FILE]
 *        Without FILE, records one first: the demo workload, two threads,
 *        10 s at 999 Hz with 8 KiB stacks (about 20 000 samples, 165 MB).
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "child.h"
#include "perfreader.h"

#ifndef DS_TOOL
#define DS_TOOL "dwarfsample"
#endif
#ifndef DS_DEMO
#define DS_DEMO "dwarfsample-demo"
#endif

static int count(const struct pr_record *rec, void *arg)
{
	/* Touch what a consumer would: the identity of every record. */
	*(unsigned long long *)arg += 1 + (rec->tid & 0);
	return 0;
}

/* The library, in a child: exit status carries success, the record count
 * comes back through a pipe. */
static int run_ours(const char *path, struct run *out)
{
	int fds[2];
	struct rusage ru;
	double t0;
	pid_t pid;
	int status;

	if (pipe(fds))
		return -1;
	t0 = bench_now();
	pid = fork();
	if (pid == 0) {
		unsigned long long n = 0;
		struct pr_file *f = pr_file_open(path, NULL);

		if (!f || pr_file_consume(f, count, &n) < 0)
			_exit(1);
		pr_file_close(f);
		if (write(fds[1], &n, sizeof(n)) != sizeof(n))
			_exit(1);
		_exit(0);
	}
	close(fds[1]);
	if (read(fds[0], &out->records, sizeof(out->records)) != sizeof(out->records))
		out->records = 0;
	close(fds[0]);
	if (wait4(pid, &status, 0, &ru) < 0 || !WIFEXITED(status) || WEXITSTATUS(status))
		return -1;
	bench_take_usage(out, t0, &ru);
	return 0;
}

int main(int argc, char **argv)
{
	char made[] = "/tmp/dwarfsample-bench-XXXXXX";
	const char *path = NULL;
	struct run ours = { 0 }, peer = { 0 }, r;
	struct stat st;
	int runs = 3, opt;

	while ((opt = getopt(argc, argv, "n:")) != -1) {
		if (opt != 'n')
			return 2;
		runs = atoi(optarg) > 0 ? atoi(optarg) : 1;
	}
	if (optind < argc) {
		path = argv[optind];
	} else {
		char *rec[] = { DS_TOOL, "record", "-F", "999", "-o", made, "--",
				DS_DEMO, "10", "2", NULL };
		int fd = mkstemp(made);

		if (fd < 0)
			return 1;
		close(fd);
		fprintf(stderr, "bench-file-read: recording %s (10 s)...\n", made);
		if (bench_run_cmd(rec, &r))
			return fprintf(stderr, "bench-file-read: recording failed\n"), 1;
		path = made;
	}
	if (stat(path, &st))
		return perror(path), 1;

	{
		char *script[] = { "perf", "script", "-F", "comm,tid,time", "-i",
				   (char *)path, NULL };

		/* Warm-up: the file in the page cache for both. */
		if (run_ours(path, &r) || bench_run_cmd(script, &r))
			return fprintf(stderr, "bench-file-read: a reader failed\n"), 1;
		for (int i = 0; i < runs; i++) {
			if (run_ours(path, &r))
				return 1;
			bench_keep_best(&ours, &r);
			if (bench_run_cmd(script, &r))
				return 1;
			bench_keep_best(&peer, &r);
		}
	}
	printf("file-read: %s, %.1f MB, %llu records; best of %d runs each\n", path,
	       (double)st.st_size / 1e6, ours.records, runs);
	printf("  %-40s %8s %8s %10s %12s\n", "", "wall s", "cpu s", "MB/s", "peak RSS MB");
	printf("  %-40s %8.3f %8.3f %10.0f %12.1f\n", "ours: pr_file_open + read every record",
	       ours.wall, ours.cpu, (double)st.st_size / 1e6 / ours.wall,
	       (double)ours.maxrss_kb / 1024);
	printf("  %-40s %8.3f %8.3f %10.0f %12.1f\n", "peer: perf script -F comm,tid,time",
	       peer.wall, peer.cpu, (double)st.st_size / 1e6 / peer.wall,
	       (double)peer.maxrss_kb / 1024);
	printf("  speed: ours is %.1fx faster (wall), %.1fx (cpu); goal >= 5x\n",
	       peer.wall / ours.wall, peer.cpu / (ours.cpu > 0 ? ours.cpu : 1e-6));
	printf("  memory: ours peaks at %.2fx perf script's\n",
	       (double)ours.maxrss_kb / (double)peer.maxrss_kb);
	if (path == made)
		unlink(made);
	return 0;
}
