/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Running a peer or our tool in a child process, so its CPU time and
 * peak resident memory are its own (wait4's rusage).  Shared by the
 * benchmarks.
 */
#ifndef DS_BENCH_CHILD_H
#define DS_BENCH_CHILD_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/resource.h>
#include <sys/types.h>

struct run {
	double wall, cpu;            /* seconds */
	long maxrss_kb;
	unsigned long long records;  /* what the run counted, if it does */
};

double bench_now(void);
/* Fill `out` from a finished child's usage, started at `t0`. */
void bench_take_usage(struct run *out, double t0, const struct rusage *ru);
/* Run argv with standard output and error to /dev/null: 0, or -1 when it
 * cannot be run or fails. */
int bench_run_cmd(char *const argv[], struct run *out);
/* Start argv in the background with standard output to /dev/null,
 * standard input from `in_fd` (inherited when negative) and standard error
 * to the file `err_path` (inherited when NULL).  The child's pid, or -1. */
pid_t bench_spawn(char *const argv[], int in_fd, const char *err_path);
/* Reap a child started at `t0` into `out`: 0 when it exited with status 0,
 * -1 otherwise (`out` is filled either way once it has been reaped). */
int bench_wait(pid_t pid, double t0, struct run *out);
/* Kill a background child (a workload) and reap it. */
void bench_stop(pid_t pid);
/* Read a file through, so that it is in the page cache for the run that
 * follows (this machine reclaims idle cache pages on its own). */
void bench_warm(const char *path);
/* Is `mode` asked for on the command line: among the operands after
 * getopt's (optind on), or are there none, which asks for every mode? */
bool bench_wanted(int argc, char **argv, const char *mode);
/* Keep the fastest run (by CPU time) and the largest peak memory. */
void bench_keep_best(struct run *best, const struct run *r);

/* Record with perf record -e cpu-clock -F 1999 --call-graph dwarf (8 KiB
 * stacks) into DIR/deep.data or DIR/cc1.data, the path in `out`:
 *   deep  the agreement workload's recursion through qsort for 10 s
 *   cc1   gcc -O2 -c of a file of `functions` generated functions (GEN is
 *         tests/gen-big-c.sh), address-space randomization off
 * 0, or -1 when the recording failed. */
int bench_record_deep(const char *dir, const char *workload, char *out, size_t len);
int bench_record_cc1(const char *dir, const char *gen, int functions, char *out, size_t len);
/* Samples in a capture, by our report's summary; -1 when unreadable. */
long bench_samples_in(const char *tool, const char *path);
/* perf record -e cpu-clock -F RATE --call-graph dwarf,8192 -p PID -o OUT,
 * for `seconds` or, when that is 0, until the process exits; its usage in
 * `r`.  Standard error to `err_path` (inherited when NULL).  0, or -1. */
int bench_perf_record_pid(pid_t pid, unsigned long rate, double seconds,
			  const char *out, const char *err_path, struct run *r);
/* perf's own accounting of a capture: the per-event SAMPLE and
 * LOST_SAMPLES totals of `perf report --stats`.  0, or -1. */
int bench_perf_stats(const char *path, unsigned long long *samples,
		     unsigned long long *lost);

#endif
