/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Off-CPU profiling's cost on a switch-heavy target: the off-CPU tests'
 * workload in its ping-pong mode (two threads bouncing a byte over two
 * pipes, each round trip two context switches), with dwarfsample
 * --off-cpu attached with -p, against the peer, perf record -e
 * sched:sched_switch --call-graph dwarf,8192 -p (its default 516 KiB
 * buffer, writing to tmpfs) plus perf script on its file.  The workload
 * counts its own switches (voluntary + involuntary, /proc/self/task/TID/
 * status) and the profilers are attached before it starts (it waits for a
 * byte on standard input).  Modes:
 *
 *   cpu       at -r round trips a second (default 10 000: 20 000
 *             switches a second): each profiler's CPU per 1000 switches
 *             (goal: ours <= 1/3 of perf record + perf script), the
 *             switches each saw against those made ("unseen": made minus
 *             switch-out samples received, in the run kept, and "worst
 *             unseen" over all runs; "LOST": the kernel's count of records
 *             it dropped; goal: none lost), and the target's own CPU
 *             against running alone
 *   slowdown  the ping-pong as fast as it goes: round trips a second
 *             alone, with ours attached and with perf record attached
 *   sweep     ours at --off-cpu-stack-size 4096, 8192, 16384, 32768:
 *             the share of complete stacks (the live command's "stacks
 *             ended" summary) on three workloads (see mode_sweep()), and
 *             CPU and loss at -r
 *
 * usage: bench-offcpu [-n RUNS] [-d SECONDS] [-r ROUND_TRIPS] [-s STACK_BYTES]
 *                     [cpu|slowdown|sweep...]
 *        (defaults: best of 3, 10 s per run, 10 000 round trips a second,
 *        ours with its default stack copy; all modes)
 */
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "child.h"

#ifndef DS_TOOL
#define DS_TOOL "dwarfsample"
#endif
#ifndef DS_OFFCPU_WORKLOAD
#define DS_OFFCPU_WORKLOAD "offcpu-workload"
#endif
#ifndef DS_AGREE_WORKLOAD
#define DS_AGREE_WORKLOAD "agree-workload"
#endif
#ifndef DS_GEN_BIG_C
#define DS_GEN_BIG_C "gen-big-c.sh"
#endif

enum side { ALONE, OURS, PERF, NR_SIDES };

static const char *const side_name[NR_SIDES] = {
	"alone", "ours: dwarfsample --off-cpu -p", "peer: perf record -e sched:sched_switch",
};

/* One run of the ping-pong under one side. */
struct result {
	struct run prof, script;        /* the profiler's usage; perf script's */
	double target_cpu;              /* ping + pong run time, s */
	double round_trips_per_s;
	unsigned long long made;        /* switches the workload counted */
	unsigned long long seen, lost;  /* switch-out samples with a stack; the
					 * kernel's LOST records */
	long long worst_unseen;         /* kept over runs: the most switches
					 * made and not seen in one run */
};

static char dir[] = "/dev/shm/dwarfsample-bench-offcpu-XXXXXX";
static char truth[128], ours_out[128], ours_err[128], perf_data[128], perf_err[128];
static char stack_size[32] = "0";
static double seconds = 10;

/* KEY of the truth file's line for ROLE ("ping" or "pong"), 0 if absent. */
static double truth_of(const char *role, const char *key)
{
	char line[1024], who[64], pat[64];
	double v = 0;
	FILE *f = fopen(truth, "r");

	snprintf(who, sizeof(who), "role=%s ", role);
	snprintf(pat, sizeof(pat), " %s=", key);
	while (f && fgets(line, sizeof(line), f)) {
		char *p = strstr(line, pat);

		if (p && !strncmp(line, who, strlen(who)))
			v = atof(p + strlen(pat));
	}
	if (f)
		fclose(f);
	return v;
}

static double truth_sum(const char *key)
{
	return truth_of("ping", key) + truth_of("pong", key);
}

/* Has process `pid` opened a perf event? */
static bool has_perf_events(pid_t pid)
{
	char cmd[128];

	snprintf(cmd, sizeof(cmd), "ls -l /proc/%d/fd 2>/dev/null | grep -q perf_event",
		 (int)pid);
	return system(cmd) == 0;
}

/* The live command's summary: "dwarfsample: N samples in T s, L lost
 * (P%), ...", "stacks ended: outermost X% ..." and "off-CPU ...; W waits,
 * S without a stack (their sample was lost)".  A switch seen is a wait
 * with its switch-out sample: W - S (every wait, when no S is given). */
static void ours_summary(struct result *r, double *outermost)
{
	unsigned long long waits = 0, stackless = 0;
	char line[1024];
	FILE *f = fopen(ours_err, "r");

	while (f && fgets(line, sizeof(line), f)) {
		char *p = strstr(line, "outermost ");
		unsigned long long n;
		double t;

		sscanf(line, "dwarfsample: %llu samples in %lf s, %llu lost", &n, &t, &r->lost);
		if (outermost && p)
			*outermost = atof(p + 10);
		if ((p = strstr(line, "); ")) && strstr(line, " waits")) {
			waits = strtoull(p + 3, &p, 10);
			if (!strncmp(p, " waits, ", 8))
				stackless = strtoull(p + 8, NULL, 10);
		}
	}
	if (f)
		fclose(f);
	r->seen = waits - stackless;
}

/* The ping-pong at `rate` round trips a second (0: flat out) for
 * `seconds`, under `side`; ours copies `stack` bytes ("0": its default). */
static int pingpong(enum side side, unsigned long rate, const char *stack, struct result *r)
{
	char secs[32], rt[32], pidarg[32];
	char *wl[] = { DS_OFFCPU_WORKLOAD, "-g", "-o", truth, "pingpong", secs, rt, NULL };
	char *ours[] = { DS_TOOL, "--off-cpu", "-p", pidarg, "-f", "pprof", "-o", ours_out,
			 "--off-cpu-stack-size", (char *)stack, NULL };
	char *perf[] = { "perf", "record", "-q", "-e", "sched:sched_switch", "--call-graph",
			 "dwarf,8192", "-p", pidarg, "-o", perf_data, NULL };
	char *script[] = { "perf", "script", "-i", perf_data, NULL };
	pid_t pid, prof = -1;
	struct run target;
	int fds[2], ret = 0;
	double t0;

	memset(r, 0, sizeof(*r));
	unlink(truth);
	snprintf(secs, sizeof(secs), "%.1f", seconds);
	snprintf(rt, sizeof(rt), "%lu", rate);
	if (!strcmp(stack, "0"))
		ours[8] = NULL;
	if (pipe(fds))
		return -1;
	pid = bench_spawn(wl, fds[0], "/dev/null");
	close(fds[0]);
	snprintf(pidarg, sizeof(pidarg), "%d", (int)pid);
	t0 = bench_now();
	if (side != ALONE) {
		prof = bench_spawn(side == OURS ? ours : perf, -1, side == OURS ? ours_err : perf_err);
		while (!has_perf_events(prof) && bench_now() < t0 + 30)
			usleep(50000);
		/* Its rings mapped and its reader running. */
		usleep(300000);
	}
	if (write(fds[1], "g", 1) != 1)
		ret = -1;
	close(fds[1]);
	if (bench_wait(pid, t0, &target))
		ret = -1;
	if (prof > 0 && bench_wait(prof, t0, &r->prof))
		ret = -1;
	r->made = (unsigned long long)truth_sum("csw");
	r->target_cpu = truth_sum("run") / 1e9;
	{
		/* ping counts the round trips, over its own time */
		double t = (truth_of("ping", "t1") - truth_of("ping", "t0")) / 1e9;

		r->round_trips_per_s = t > 0 ? truth_of("ping", "n_block") / t : 0;
	}
	if (side == OURS)
		ours_summary(r, NULL);
	if (side == PERF && !ret) {
		ret = bench_perf_stats(perf_data, &r->seen, &r->lost) ||
		      bench_run_cmd(script, &r->script);
		unlink(perf_data);
	}
	if (ret)
		fprintf(stderr, "bench-offcpu: a %s run failed (see %s)\n", side_name[side],
			side == OURS ? ours_err : perf_err);
	return ret;
}

static double per_k(double cpu_s, unsigned long long switches)
{
	return switches ? cpu_s * 1e6 / (double)switches : 0;
}

/* The cheapest run per switch, and the worst loss of all runs. */
static void keep_best(struct result *best, const struct result *r)
{
	double cpu = r->prof.cpu + r->script.cpu, was = best->prof.cpu + best->script.cpu;
	long long unseen = (long long)r->made - (long long)r->seen;
	long long worst = best->made && best->worst_unseen > unseen ? best->worst_unseen : unseen;

	if (!best->made || per_k(cpu, r->made) < per_k(was, best->made))
		*best = *r;
	best->worst_unseen = worst;
}

static int mode_cpu(unsigned long rate, int runs)
{
	struct result best[NR_SIDES], r;

	memset(best, 0, sizeof(best));
	for (int i = 0; i < runs; i++)
		for (int side = 0; side < NR_SIDES; side++) {
			if (pingpong(side, rate, stack_size, &r))
				return -1;
			keep_best(&best[side], &r);
		}
	printf("cpu: offcpu-workload pingpong, %lu round trips/s, %.0f s, -p; stacks: ours %s, "
	       "perf 8192 bytes; best of %d\n", rate, seconds,
	       strcmp(stack_size, "0") ? stack_size : "its default", runs);
	printf("  %-40s %9s %9s %8s %7s %9s %9s %11s %11s %13s\n", "", "switches", "seen",
	       "unseen", "LOST", "prof cpu", "script", "ms/1000 sw", "target cpu",
	       "worst unseen");
	for (int side = 0; side < NR_SIDES; side++) {
		struct result *b = &best[side];

		printf("  %-40s %9llu %9llu %8lld %7llu %9.3f %9.3f %11.3f %11.3f %13lld\n",
		       side_name[side], b->made, b->seen,
		       side == ALONE ? 0 : (long long)b->made - (long long)b->seen, b->lost,
		       b->prof.cpu, b->script.cpu,
		       per_k(b->prof.cpu + b->script.cpu, b->made), b->target_cpu,
		       side == ALONE ? 0 : b->worst_unseen);
	}
	printf("  ours / perf (record + script) per 1000 switches: %.3fx (goal <= 0.33x); "
	       "ours / perf record alone: %.3fx\n",
	       per_k(best[OURS].prof.cpu, best[OURS].made) /
	       per_k(best[PERF].prof.cpu + best[PERF].script.cpu, best[PERF].made),
	       per_k(best[OURS].prof.cpu, best[OURS].made) /
	       per_k(best[PERF].prof.cpu, best[PERF].made));
	printf("  target cpu per 1000 switches: alone %.3f ms, ours %.3f ms, perf %.3f ms\n",
	       per_k(best[ALONE].target_cpu, best[ALONE].made),
	       per_k(best[OURS].target_cpu, best[OURS].made),
	       per_k(best[PERF].target_cpu, best[PERF].made));
	return 0;
}

static int mode_slowdown(int runs)
{
	struct result best[NR_SIDES], r;

	memset(best, 0, sizeof(best));
	for (int i = 0; i < runs; i++)
		for (int side = 0; side < NR_SIDES; side++) {
			if (pingpong(side, 0, stack_size, &r))
				return -1;
			if (r.round_trips_per_s > best[side].round_trips_per_s)
				best[side] = r;
		}
	printf("slowdown: offcpu-workload pingpong flat out, %.0f s, -p; fastest of %d\n",
	       seconds, runs);
	printf("  %-40s %12s %9s %9s %9s\n", "", "round trips/s", "slowdown", "switches",
	       "prof cpu");
	for (int side = 0; side < NR_SIDES; side++)
		printf("  %-40s %12.0f %8.1f%% %9llu %9.3f\n", side_name[side],
		       best[side].round_trips_per_s,
		       100.0 * (1 - best[side].round_trips_per_s / best[ALONE].round_trips_per_s),
		       best[side].made, best[side].prof.cpu);
	return 0;
}

/* The live command profiling `cmd` (a shell command) off the CPU with
 * `stack` bytes per switch-out sample: the share of stacks it unwound to
 * their outermost frame. */
static int complete_stacks(const char *cmd, const char *stack, double *outermost)
{
	char *argv[] = { DS_TOOL, "--off-cpu", "--off-cpu-stack-size", (char *)stack, "-f",
			 "folded", "-o", ours_out, "--", "sh", "-c", (char *)cmd, NULL };
	struct result r;
	struct run run;
	pid_t pid = bench_spawn(argv, -1, ours_err);

	memset(&r, 0, sizeof(r));
	*outermost = -1;
	if (bench_wait(pid, bench_now(), &run))
		return -1;
	ours_summary(&r, outermost);
	return 0;
}

/* Workloads whose stacks are shallow and deep: the tests' mix of blocked
 * and preempted threads; four threads of deep recursion with ~300-byte
 * frames on two CPUs, preempted in turn; gcc compiling a generated file,
 * its driver waiting on cc1 and as. */
static int mode_sweep(unsigned long rate, int runs)
{
	static const char *const sizes[] = { "4096", "8192", "16384", "32768" };
	char mix[512], recurse[512], gcc[1024];
	const char *const cmds[] = { mix, recurse, gcc };

	snprintf(mix, sizeof(mix), "exec %s mix 3", DS_OFFCPU_WORKLOAD);
	snprintf(recurse, sizeof(recurse), "exec %s threads 3", DS_AGREE_WORKLOAD);
	snprintf(gcc, sizeof(gcc), "sh %s 300 >%s/big.c", DS_GEN_BIG_C, dir);
	if (system(gcc))
		return -1;
	snprintf(gcc, sizeof(gcc), "exec gcc -O2 -pipe -c %s/big.c -o %s/big.o", dir, dir);
	printf("sweep: --off-cpu-stack-size; complete stacks (live, -- CMD) on: offcpu-workload "
	       "mix 3 | agree-workload threads 3 | gcc -O2 -pipe -c (gen-big-c.sh 300); cost "
	       "at %lu round trips/s, %.0f s, best of %d\n", rate, seconds, runs);
	printf("  %8s %24s %9s %9s %8s %7s %11s %13s\n", "bytes", "outermost % mix|rec|gcc",
	       "switches", "seen", "unseen", "LOST", "ms/1000 sw", "worst unseen");
	for (size_t i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++) {
		struct result best, r;
		double outermost[3];

		for (int w = 0; w < 3; w++)
			if (complete_stacks(cmds[w], sizes[i], &outermost[w]))
				return -1;
		memset(&best, 0, sizeof(best));
		for (int n = 0; n < runs; n++) {
			if (pingpong(OURS, rate, sizes[i], &r))
				return -1;
			keep_best(&best, &r);
		}
		printf("  %8s %8.1f %7.1f %7.1f %9llu %9llu %8lld %7llu %11.3f %13lld\n",
		       sizes[i], outermost[0], outermost[1], outermost[2], best.made, best.seen,
		       (long long)best.made - (long long)best.seen, best.lost,
		       per_k(best.prof.cpu, best.made), best.worst_unseen);
	}
	return 0;
}

static int usage(void)
{
	fputs("usage: bench-offcpu [-n RUNS] [-d SECONDS] [-r ROUND_TRIPS] [-s STACK_BYTES] "
	      "[cpu|slowdown|sweep...]\n", stderr);
	return 2;
}

int main(int argc, char **argv)
{
	unsigned long rate = 10000;
	int runs = 3, opt, ret = 0;
	char cmd[256];

	while ((opt = getopt(argc, argv, "n:d:r:s:")) != -1) {
		if (opt == 'n')
			runs = atoi(optarg) > 0 ? atoi(optarg) : 1;
		else if (opt == 'd')
			seconds = atof(optarg);
		else if (opt == 'r')
			rate = strtoul(optarg, NULL, 10);
		else if (opt == 's')
			snprintf(stack_size, sizeof(stack_size), "%s", optarg);
		else
			return usage();
	}
	for (int i = optind; i < argc; i++)
		if (strcmp(argv[i], "cpu") && strcmp(argv[i], "slowdown") &&
		    strcmp(argv[i], "sweep"))
			return usage();
	if (seconds <= 0)
		return usage();
	if (!mkdtemp(dir))
		return perror("mkdtemp"), 1;
	snprintf(truth, sizeof(truth), "%s/truth", dir);
	snprintf(ours_out, sizeof(ours_out), "%s/ours.out", dir);
	snprintf(ours_err, sizeof(ours_err), "%s/ours.err", dir);
	snprintf(perf_data, sizeof(perf_data), "%s/perf.data", dir);
	snprintf(perf_err, sizeof(perf_err), "%s/perf.err", dir);
	setvbuf(stdout, NULL, _IOLBF, 0);

	if (bench_wanted(argc, argv, "cpu"))
		ret = mode_cpu(rate, runs);
	if (!ret && bench_wanted(argc, argv, "slowdown"))
		ret = mode_slowdown(runs);
	if (!ret && bench_wanted(argc, argv, "sweep"))
		ret = mode_sweep(rate, runs);
	if (ret)
		fprintf(stderr, "bench-offcpu: a run failed (perf record, perf script and root or "
			"perf_event_paranoid <= 1 are needed)\n");
	snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
	if (system(cmd))
		fprintf(stderr, "bench-offcpu: could not remove %s\n", dir);
	return ret ? 1 : 0;
}
