/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Unwinding a capture: `dwarfsample report -F ip,dso` against the peer,
 * `perf script --no-inline -F ip,dso` (the same fields printed), and
 * `dwarfsample report` with its names for scale, on the same perf.data
 * files, each run in a child so its CPU time and peak resident memory are
 * its own.  Fastest of N runs by CPU time, after a warm-up that puts the
 * binaries the files sampled in the page cache, and with the file read
 * through before every run (this machine reclaims idle page cache);
 * output goes to /dev/null.
 *
 * usage: bench-unwind [-n RUNS] [FILE...]
 *        Without FILEs, records two with perf record --call-graph dwarf
 *        (8 KiB stacks, 1999 Hz):
 *          deep  the agreement workload's deep recursion through qsort,
 *                -O2 -fomit-frame-pointer, 10 s (about 20 000 samples)
 *          cc1   gcc -O2 compiling a generated file of 1500 functions
 *                (about 25 000 samples, nearly all in cc1)
 */
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "child.h"

#ifndef DS_TOOL
#define DS_TOOL "dwarfsample"
#endif
#ifndef DS_AGREE_WORKLOAD
#define DS_AGREE_WORKLOAD "agree-workload"
#endif
#ifndef DS_GEN_BIG_C
#define DS_GEN_BIG_C "gen-big-c.sh"
#endif

#define MAX_FILES 16

static int bench_file(const char *path, int runs)
{
	/* The same fields printed as the peer's; and, for scale, perf
	 * script's default fields (names, offsets), which ours prints by
	 * default. */
	char *ours_argv[] = { DS_TOOL, "report", "-F", "ip,dso", "-i", (char *)path,
			      "-o", "/dev/null", NULL };
	char *named_argv[] = { DS_TOOL, "report", "-i", (char *)path, "-o", "/dev/null", NULL };
	char *peer_argv[] = { "perf", "script", "--no-inline", "-F", "ip,dso", "-i",
			      (char *)path, NULL };
	struct run ours = { 0 }, named = { 0 }, peer = { 0 }, r;
	struct stat st;
	long n = bench_samples_in(DS_TOOL, path);

	if (stat(path, &st) || n <= 0) {
		fprintf(stderr, "bench-unwind: cannot read %s\n", path);
		return -1;
	}
	if (bench_run_cmd(ours_argv, &r) || bench_run_cmd(peer_argv, &r)) {
		fprintf(stderr, "bench-unwind: a run failed on %s\n", path);
		return -1;
	}
	for (int i = 0; i < runs; i++) {
		bench_warm(path);
		if (bench_run_cmd(ours_argv, &r))
			return -1;
		bench_keep_best(&ours, &r);
		bench_warm(path);
		if (bench_run_cmd(named_argv, &r))
			return -1;
		bench_keep_best(&named, &r);
		bench_warm(path);
		if (bench_run_cmd(peer_argv, &r))
			return -1;
		bench_keep_best(&peer, &r);
	}
	printf("%s: %.1f MB, %ld samples; fastest of %d runs each\n", path,
	       (double)st.st_size / 1e6, n, runs);
	printf("  %-44s %8s %8s %10s %12s\n", "", "wall s", "cpu s", "us/sample",
	       "peak RSS MB");
	printf("  %-44s %8.3f %8.3f %10.2f %12.1f\n", "ours: dwarfsample report -F ip,dso",
	       ours.wall, ours.cpu, ours.cpu * 1e6 / (double)n,
	       (double)ours.maxrss_kb / 1024);
	printf("  %-44s %8.3f %8.3f %10.2f %12.1f\n", "ours, names: dwarfsample report",
	       named.wall, named.cpu, named.cpu * 1e6 / (double)n,
	       (double)named.maxrss_kb / 1024);
	printf("  %-44s %8.3f %8.3f %10.2f %12.1f\n", "peer: perf script --no-inline -F ip,dso",
	       peer.wall, peer.cpu, peer.cpu * 1e6 / (double)n,
	       (double)peer.maxrss_kb / 1024);
	printf("  speed, the same fields: ours is %.1fx faster (cpu), %.1fx (wall); goal >= 30x\n",
	       peer.cpu / (ours.cpu > 0 ? ours.cpu : 1e-3), peer.wall / ours.wall);
	printf("  memory: ours peaks at %.2fx perf script's; goal <= 0.33x\n",
	       (double)ours.maxrss_kb / (double)peer.maxrss_kb);
	return 0;
}

int main(int argc, char **argv)
{
	char dir[] = "/tmp/dwarfsample-bench-XXXXXX", made[2][4096];
	const char *files[MAX_FILES];
	int runs = 5, nr = 0, opt, ret = 0;
	bool recorded = false;

	while ((opt = getopt(argc, argv, "n:")) != -1) {
		if (opt != 'n') {
			fputs("usage: bench-unwind [-n RUNS] [FILE...]\n", stderr);
			return 2;
		}
		runs = atoi(optarg) > 0 ? atoi(optarg) : 1;
	}
	for (; optind < argc && nr < MAX_FILES; optind++)
		files[nr++] = argv[optind];
	if (!nr) {
		if (!mkdtemp(dir))
			return perror("mkdtemp"), 1;
		recorded = true;
		if (bench_record_deep(dir, DS_AGREE_WORKLOAD, made[0], sizeof(made[0])) ||
		    bench_record_cc1(dir, DS_GEN_BIG_C, 1500, made[1], sizeof(made[1]))) {
			fprintf(stderr, "bench-unwind: recording failed (perf record, gcc "
				"and root or perf_event_paranoid <= 1 are needed)\n");
			ret = 1;
		}
		files[nr++] = made[0];
		files[nr++] = made[1];
	}
	for (int i = 0; !ret && i < nr; i++)
		ret = bench_file(files[i], runs) ? 1 : 0;
	if (recorded) {
		char cmd[4200];

		snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
		if (system(cmd))
			fprintf(stderr, "bench-unwind: could not remove %s\n", dir);
	}
	return ret;
}
