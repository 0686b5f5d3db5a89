/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Naming a capture's frames: `dwarfsample report` with inline resolution
 * (its default, as perf script's), without it (--no-inline: ELF symbols
 * only), and unwinding alone (no names asked for), against the peer,
 * `perf script` with its defaults, on the same perf.data files.  Each run
 * in a child, so its CPU time and peak memory are its own.
 *
 * The symbolizer keeps what is slow to read in a cache directory (the
 * kernel's symbols, debug files inflated): ours is measured cold, with
 * an empty cache (once), and warm (fastest of N, after the cold run).
 * perf runs once: it takes minutes.
 *
 * usage: bench-symbols [-n RUNS] [FILE...]
 *        Without FILEs, records gcc -O2 compiling a generated file of 900
 *        functions with perf record --call-graph dwarf (8 KiB stacks,
 *        1999 Hz): about 20 000 samples, nearly all in cc1.
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
#ifndef DS_GEN_BIG_C
#define DS_GEN_BIG_C "gen-big-c.sh"
#endif

#define MAX_FILES 16

enum { UNWIND, NO_INLINE, INLINE, NR_MODES };

static const char *const mode_name[NR_MODES] = {
	"ours: report -F comm,tid,time,ip,dso (unwinding)",
	"ours: report --no-inline (ELF symbols)",
	"ours: report (inlined functions too)",
};

static int run_ours(int mode, const char *path, struct run *r)
{
	char *argv[12] = { DS_TOOL, "report", "-i", (char *)path, "-o", "/dev/null" };
	int n = 6;

	if (mode == UNWIND) {
		argv[n++] = "-F";
		argv[n++] = "comm,tid,time,ip,dso";
	}
	if (mode == NO_INLINE)
		argv[n++] = "--no-inline";
	argv[n] = NULL;
	return bench_run_cmd(argv, r);
}

/* An empty cache directory for our runs to fill. */
static int fresh_cache(const char *cache)
{
	char cmd[8500];

	snprintf(cmd, sizeof(cmd), "rm -rf %s && mkdir -p %s", cache, cache);
	return system(cmd) ? -1 : 0;
}

static void row(const char *name, const struct run *r, long n)
{
	printf("  %-52s %8.3f %8.3f %10.2f %12.1f\n", name, r->wall, r->cpu,
	       r->cpu * 1e6 / (double)n, (double)r->maxrss_kb / 1024);
}

static int bench_file(const char *path, const char *cache, int runs)
{
	char *peer_argv[] = { "perf", "script", "-i", (char *)path, NULL };
	struct run cold[NR_MODES] = { { 0 } }, warm[NR_MODES] = { { 0 } }, peer = { 0 }, r;
	struct stat st;
	long n = bench_samples_in(DS_TOOL, path);

	if (stat(path, &st) || n <= 0) {
		fprintf(stderr, "bench-symbols: cannot read %s\n", path);
		return -1;
	}
	/* Cold: each mode with an empty cache, the binaries in page cache. */
	for (int m = 0; m < NR_MODES; m++) {
		if (fresh_cache(cache))
			return -1;
		bench_warm(path);
		if (run_ours(m, path, &cold[m]))
			goto failed;
	}
	for (int i = 0; i < runs; i++)
		for (int m = 0; m < NR_MODES; m++) {
			bench_warm(path);
			if (run_ours(m, path, &r))
				goto failed;
			bench_keep_best(&warm[m], &r);
		}
	fprintf(stderr, "bench-symbols: perf script -i %s (minutes)...\n", path);
	bench_warm(path);
	if (bench_run_cmd(peer_argv, &peer))
		goto failed;

	printf("%s: %.1f MB, %ld samples; ours fastest of %d warm runs, and the "
	       "first run with an empty cache; perf once\n", path, (double)st.st_size / 1e6, n,
	       runs);
	printf("  %-52s %8s %8s %10s %12s\n", "", "wall s", "cpu s", "us/sample",
	       "peak RSS MB");
	for (int m = 0; m < NR_MODES; m++)
		row(mode_name[m], &warm[m], n);
	for (int m = NO_INLINE; m < NR_MODES; m++) {
		char name[128];

		snprintf(name, sizeof(name), "  first run, empty cache: %s",
			 m == INLINE ? "report" : "report --no-inline");
		row(name, &cold[m], n);
	}
	row("peer: perf script (its default: inlined functions)", &peer, n);
	printf("  inline resolution costs %.2fx ours without it (goal <= 2x), "
	       "%.2fx unwinding alone (goal <= 2x)\n",
	       warm[INLINE].cpu / warm[NO_INLINE].cpu, warm[INLINE].cpu / warm[UNWIND].cpu);
	printf("  first run: %.2fx unwinding alone\n", cold[INLINE].cpu / warm[UNWIND].cpu);
	printf("  speed: ours is %.0fx faster than perf script (cpu; %.0fx on a first "
	       "run), peak memory %.2fx perf's\n", peer.cpu / warm[INLINE].cpu,
	       peer.cpu / cold[INLINE].cpu,
	       (double)warm[INLINE].maxrss_kb / (double)peer.maxrss_kb);
	return 0;
failed:
	fprintf(stderr, "bench-symbols: a run failed on %s\n", path);
	return -1;
}

int main(int argc, char **argv)
{
	char dir[] = "/tmp/dwarfsample-bench-XXXXXX", made[4096], cache[4200];
	const char *files[MAX_FILES];
	int runs = 5, nr = 0, opt, ret = 0;
	char cmd[4200];

	while ((opt = getopt(argc, argv, "n:")) != -1) {
		if (opt != 'n') {
			fputs("usage: bench-symbols [-n RUNS] [FILE...]\n", stderr);
			return 2;
		}
		runs = atoi(optarg) > 0 ? atoi(optarg) : 1;
	}
	for (; optind < argc && nr < MAX_FILES; optind++)
		files[nr++] = argv[optind];
	if (!mkdtemp(dir))
		return perror("mkdtemp"), 1;
	/* Our runs keep their cache here, not in the user's. */
	snprintf(cache, sizeof(cache), "%s/cache", dir);
	setenv("XDG_CACHE_HOME", cache, 1);
	if (!nr) {
		if (bench_record_cc1(dir, DS_GEN_BIG_C, 900, made, sizeof(made))) {
			fprintf(stderr, "bench-symbols: recording failed (perf record, gcc "
				"and root or perf_event_paranoid <= 1 are needed)\n");
			ret = 1;
		}
		files[nr++] = made;
	}
	for (int i = 0; !ret && i < nr; i++)
		ret = bench_file(files[i], cache, runs) ? 1 : 0;
	snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
	if (system(cmd))
		fprintf(stderr, "bench-symbols: could not remove %s\n", dir);
	return ret;
}
