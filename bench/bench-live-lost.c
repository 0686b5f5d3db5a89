/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Lost samples on a live, busy process: the demo workload runs two threads
 * on both CPUs; it is sampled at each rate with 8 KiB stacks and the
 * default ring, first by libperfreader (draining with pr_reader_poll), then
 * by the peer, `perf record --call-graph dwarf,8192` with perf's default
 * buffer, writing to tmpfs so the disk is not what limits it.
 *
 * usage: bench-live-lost [-d SECONDS] [-w WORKLOAD] [-r RING_PAGES] [RATE...]
 *        (default 20 s, the bundled demo, the library's default ring, rates
 *        1000 4000 10000 Hz)
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>

#include "child.h"
#include "perfreader.h"

#ifndef DS_DEMO
#define DS_DEMO "dwarfsample-demo"
#endif

struct result {
	unsigned long long samples, lost;
	double cpu_seconds;
};

static double cpu_self(void)
{
	struct rusage ru;

	getrusage(RUSAGE_SELF, &ru);
	return (double)ru.ru_utime.tv_sec + (double)ru.ru_utime.tv_usec / 1e6 +
	       (double)ru.ru_stime.tv_sec + (double)ru.ru_stime.tv_usec / 1e6;
}

static pid_t start_workload(const char *path, double seconds)
{
	char secs[32];
	char *argv[] = { (char *)path, secs, "2", NULL };
	pid_t pid;

	snprintf(secs, sizeof(secs), "%.1f", seconds + 3);
	pid = bench_spawn(argv, -1, NULL);
	usleep(300000);
	return pid;
}

static int count(const struct pr_record *rec, void *arg)
{
	struct result *r = arg;

	if (rec->type == PR_RECORD_SAMPLE)
		r->samples++;
	else if (rec->type == PR_RECORD_LOST)
		r->lost += rec->u.lost.lost;
	return 0;
}

static unsigned int ring_pages = PR_DEFAULT_RING_PAGES;

static int run_ours(const char *workload, unsigned long rate, double seconds,
		    struct result *res)
{
	PR_OPTS(pr_event_opts, ev, .freq = rate, .stack_size = 8192);
	PR_OPTS(pr_reader_opts, o, .event = &ev, .ring_pages = ring_pages);
	pid_t pid = start_workload(workload, seconds);
	struct pr_reader *r = pr_reader_open_pids(&pid, 1, &o);
	double end, cpu0;

	if (!r) {
		fprintf(stderr, "bench-live-lost: open failed: %s\n", strerror(errno));
		bench_stop(pid);
		return -1;
	}
	memset(res, 0, sizeof(*res));
	cpu0 = cpu_self();
	pr_reader_enable(r);
	end = bench_now() + seconds;
	while (bench_now() < end)
		pr_reader_poll(r, 100, count, res);
	pr_reader_disable(r);
	while (pr_reader_consume(r, count, res) > 0)
		;
	res->cpu_seconds = cpu_self() - cpu0;
	pr_reader_close(r);
	bench_stop(pid);
	return 0;
}

/* perf's own accounting of what it lost: the per-event LOST_SAMPLES total
 * of `perf report --stats`, and its SAMPLE count. */
static int run_perf(const char *workload, unsigned long rate, double seconds,
		    struct result *res)
{
	const char *out = "/dev/shm/dwarfsample-bench-perf.data";
	pid_t pid = start_workload(workload, seconds);
	struct run rec;
	int ret;

	memset(res, 0, sizeof(*res));
	ret = bench_perf_record_pid(pid, rate, seconds, out, NULL, &rec);
	bench_stop(pid);
	if (ret) {
		fprintf(stderr, "bench-live-lost: perf record failed\n");
		return -1;
	}
	res->cpu_seconds = rec.cpu;
	ret = bench_perf_stats(out, &res->samples, &res->lost);
	unlink(out);
	return ret;
}

static double pct(const struct result *r)
{
	unsigned long long all = r->samples + r->lost;

	return all ? 100.0 * (double)r->lost / (double)all : 0.0;
}

int main(int argc, char **argv)
{
	const char *workload = DS_DEMO;
	double seconds = 20;
	unsigned long rates[16] = { 1000, 4000, 10000 };
	int nr_rates = 3, opt;

	while ((opt = getopt(argc, argv, "d:w:r:")) != -1) {
		if (opt == 'd')
			seconds = atof(optarg);
		else if (opt == 'r')
			ring_pages = (unsigned int)strtoul(optarg, NULL, 10);
		else if (opt == 'w')
			workload = optarg;
		else
			return 2;
	}
	if (optind < argc) {
		nr_rates = 0;
		for (int i = optind; i < argc && nr_rates < 16; i++)
			rates[nr_rates++] = strtoul(argv[i], NULL, 10);
	}

	printf("live-lost: %s with 2 busy threads, %.0f s per run, 8 KiB stacks; "
	       "ours: ring of %u pages/CPU; peer: perf record --call-graph dwarf,8192\n",
	       workload, seconds, ring_pages);
	printf("%8s  %10s %9s %8s %7s   %10s %9s %8s %7s\n", "rate/CPU",
	       "ours:samp", "lost", "lost%", "cpu s", "perf:samp", "lost", "lost%", "cpu s");
	for (int i = 0; i < nr_rates; i++) {
		struct result ours, peer;

		if (run_ours(workload, rates[i], seconds, &ours) ||
		    run_perf(workload, rates[i], seconds, &peer))
			return 1;
		printf("%7lu   %10llu %9llu %7.3f%% %7.2f   %10llu %9llu %7.3f%% %7.2f\n",
		       rates[i], ours.samples, ours.lost, pct(&ours), ours.cpu_seconds,
		       peer.samples, peer.lost, pct(&peer), peer.cpu_seconds);
		fflush(stdout);
	}
	return 0;
}
