/* SPDX-License-Identifier: Apache-2.0 */
/* A capture driven to its end: the reader opened for the target, what
 * already existed synthesized, the rings drained until -d, a signal or
 * the targets' exit, a launched command reaped. */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <limits.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "cli.h"

volatile sig_atomic_t ds_stop;

struct pr_reader *ds_capture_open(const struct ds_capture *c)
{
	PR_OPTS(pr_event_opts, ev,
		.freq = c->freq,
		.stack_size = c->stack_size,
		.kernel_callchain = c->kernel,
		.prefer_hw_cycles = c->hw_cycles,
		.call_graph = c->call_graph);
	/* The switch-out sample: the same registers, call chains and kernel
	 * stacks, its own stack copy. */
	PR_OPTS(pr_event_opts, off,
		.stack_size = c->off_cpu_stack_size ? c->off_cpu_stack_size
						    : DS_OFF_CPU_STACK_SIZE,
		.kernel_callchain = c->kernel,
		.call_graph = c->call_graph);
	struct pr_event_opts events[DS_MAX_EVENTS];
	PR_OPTS(pr_reader_opts, opts,
		.event = &ev,
		.ring_pages = c->ring_pages,
		.log = ds_log,
		.off_cpu = c->off_cpu || c->wall ? &off : NULL,
		.no_cpu_samples = c->off_cpu,
		.cgroup = c->cgroup);

	if (ds_python_prepare(c))
		return NULL;
	if (c->events.nr) {
		ds_events_opts(&c->events, &ev, events);
		opts.events = events;
		opts.nr_events = c->events.nr;
		opts.read_group = c->events.read_group;
	}

	if (c->argv)
		return pr_reader_open_command(c->argv, &opts);
	if (c->system_wide)
		return pr_reader_open_cpus(c->nr_cpus ? c->cpus : NULL,
					   c->nr_cpus, &opts);
	return pr_reader_open_pids(c->pids, c->nr_pids, &opts);
}

/* The first signal stops sampling; a second one also cuts short what
 * is left to do (the live command drops what waits to be unwound). */
static void on_signal(int sig)
{
	(void)sig;
	if (ds_stop < 2)
		ds_stop++;
}

void ds_capture_signals(void)
{
	struct sigaction sa;
	struct rlimit rl;

	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_signal;
	sigemptyset(&sa.sa_mask);
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	/* A reader of standard output that goes away is a write error, said
	 * at the end, not a silent death that loses the run. */
	signal(SIGPIPE, SIG_IGN);
	/* One event per thread and CPU: a busy server needs thousands. */
	if (!getrlimit(RLIMIT_NOFILE, &rl) && rl.rlim_cur < rl.rlim_max) {
		rl.rlim_cur = rl.rlim_max;
		setrlimit(RLIMIT_NOFILE, &rl);
	}
}

struct synth {
	pr_record_fn cb;
	void *ctx;
};

/* Synthesis of a whole system takes a while: let Ctrl-C cut it short. */
static int synthesized(const struct pr_record *rec, void *arg)
{
	struct synth *sy = arg;

	return ds_stop ? -EINTR : sy->cb(rec, sy->ctx);
}

int ds_synthesize(const struct ds_capture *c, struct pr_reader *r, uint64_t id,
		  pr_record_fn cb, void *ctx)
{
	const struct perf_event_attr *attr = pr_reader_attr(r);
	struct synth sy = { cb, ctx };
	int err = pr_kernel_synthesize(attr, id, synthesized, &sy);

	if (!err && c->cgroup)
		err = pr_cgroup_synthesize(c->cgroup, attr, id, synthesized, &sy);
	else if (!err && c->system_wide)
		err = pr_system_synthesize(attr, id, synthesized, &sy);
	for (size_t i = 0; !err && !c->system_wide && !c->argv && i < c->nr_pids; i++) {
		err = pr_process_synthesize(c->pids[i], attr, id, synthesized, &sy);
		if (err == -ESRCH)
			err = 0;
	}
	return err == -EINTR ? 0 : err;
}

const char *ds_lost_hint(const struct ds_capture *c)
{
	static char hint[256];
	const char *rate, *copy = "";

	if (c->off_cpu)
		return "raise --ring-pages or copy less of each stack (a smaller "
		       "--off-cpu-stack-size)";
	/* A period (-c, or a sparse event's every hit) is raised to take
	 * fewer samples; a frequency lowered. */
	if (ds_events_by_period(&c->events, c->freq))
		rate = ds_events_by_freq(&c->events, c->freq) ? "lower -F or raise -c"
							      : "raise -c (sample every Nth event)";
	else
		rate = "lower -F";
	if (c->wall)
		copy = ", or copy less of each stack (a smaller --off-cpu-stack-size or "
		       "--stack-size)";
	else if (c->stack_size > 16384)
		copy = ", or copy less of each stack (--stack-size 16384)";
	snprintf(hint, sizeof(hint), "%s or raise --ring-pages%s", rate, copy);
	return hint;
}

void ds_chain_limit_note(FILE *out, const char *prefix, const struct pr_reader *r)
{
	uint64_t at = 0, samples = 0;
	uint32_t max = pr_reader_max_stack(r);

	for (size_t i = 0; i < pr_reader_nr_rings(r); i++) {
		struct pr_ring_stats st = { .sz = sizeof(st) };

		if (!pr_reader_ring_stats(r, i, &st)) {
			at += st.chains_at_limit;
			samples += st.samples;
		}
	}
	if (!at)
		return;
	fprintf(out, "%s%" PRIu64 " call chains (%.1f%% of samples) reached the kernel's "
		"limit of %u entries (kernel.perf_event_max_stack): their outermost callers "
		"are missing; raise it with 'sysctl -w kernel.perf_event_max_stack=%u'\n",
		prefix, at, samples ? 100.0 * (double)at / (double)samples : 0.0, max,
		max < 512 ? 1024 : max * 2);
}

uint64_t ds_now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

double ds_now(void)
{
	return (double)ds_now_ns() / 1e9;
}

/* Wait for a launched command, terminating it first if it is still
 * running when the capture ends; one that ended on its own `secs` into
 * the run, killed or failing, is named. */
static void reap_command(pid_t pid, const char *name, bool terminate, double secs)
{
	pid_t got = 0;
	int status = 0;

	if (pid <= 0)
		return;
	if (terminate && (got = waitpid(pid, &status, WNOHANG)) == 0) {
		kill(pid, SIGTERM);
		waitpid(pid, &status, 0);
		return;
	}
	while (got != pid && (got = waitpid(pid, &status, 0)) < 0 && errno == EINTR)
		;
	/* A Ctrl-C on the terminal reached it too: not news. */
	if (got != pid || ds_stop)
		return;
	if (WIFSIGNALED(status))
		fprintf(stderr, "dwarfsample: the command (%s, PID %d) was killed by signal %d "
			"(%s) %.1f s into the run; the profile holds what was sampled until "
			"then\n", name, (int)pid, WTERMSIG(status), strsignal(WTERMSIG(status)),
			secs);
	else if (WIFEXITED(status) && WEXITSTATUS(status))
		fprintf(stderr, "dwarfsample: the command (%s, PID %d) exited with status %d "
			"%.1f s into the run\n", name, (int)pid, WEXITSTATUS(status), secs);
}

/* Whether process `pid` has ended: gone, or a zombie. */
static bool ended(pid_t pid)
{
	char path[64], buf[512], *paren;
	FILE *f;
	bool gone = true;

	snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
	f = fopen(path, "re");
	if (f && fgets(buf, sizeof(buf), f) && (paren = strrchr(buf, ')')))
		gone = paren[1] && (paren[2] == 'Z' || paren[2] == 'X');
	if (f)
		fclose(f);
	return gone;
}

/* The -p targets' names, read when sampling starts. */
struct target_names {
	char comm[DS_MAX_PIDS][16];
};

static void read_names(const struct ds_capture *c, struct target_names *t)
{
	for (size_t i = 0; i < c->nr_pids; i++) {
		char path[64];
		FILE *f;

		snprintf(path, sizeof(path), "/proc/%d/comm", (int)c->pids[i]);
		t->comm[i][0] = 0;
		f = fopen(path, "re");
		if (f) {
			if (fgets(t->comm[i], sizeof(t->comm[i]), f))
				t->comm[i][strcspn(t->comm[i], "\n")] = 0;
			fclose(f);
		}
	}
}

/* Name the -p targets that ended before sampling stopped: all of them
 * when that is what stopped it, `secs` into the run. */
static void say_ended(const struct ds_capture *c, const struct target_names *t, double secs,
		      bool all_done)
{
	for (size_t i = 0; i < c->nr_pids; i++) {
		/* When every target has ended the reader knows it first: a
		 * task's events hang up in its exit, before /proc says so. */
		if (!all_done && !ended(c->pids[i]))
			continue;
		fprintf(stderr, "dwarfsample: PID %d (%s) ended during the run: it exited or "
			"was killed", (int)c->pids[i], t->comm[i][0] ? t->comm[i] : "?");
		if (all_done)
			fprintf(stderr, "; sampling stopped with the last target, %.1f s in\n",
				secs);
		else
			fputs("; the other targets were sampled on\n", stderr);
	}
}

/* One drain of every ring; a corrupt record was logged and skipped, which
 * is no reason to stop. */
static int drain_once(struct pr_reader *r, int timeout,
		      const struct ds_capture_hooks *h)
{
	int err = timeout >= 0 ? pr_reader_poll(r, timeout, h->record, h->ctx)
			       : pr_reader_consume(r, h->record, h->ctx);

	if (err == -EBADMSG || err == -EINTR)
		err = 0;
	if (err >= 0 && h->round) {
		int e = h->round(h->ctx);

		if (e < 0)
			err = e;
	}
	return err;
}

int ds_capture_run(const struct ds_capture *c, struct pr_reader *r,
		   struct ds_capture_hooks *h)
{
	double start = ds_now(), deadline = c->duration > 0 ? start + c->duration : 0;
	struct target_names names;
	bool done = false;
	int err;

	read_names(c, &names);
	err = pr_reader_enable(r);

	/* A test that starts its workload once both profilers sample waits
	 * for this line (-vv), not for the events to exist: they are opened
	 * disabled. */
	if (!err)
		ds_logf(PR_LOG_DEBUG, "the events are enabled");
	if (!err && h->started)
		err = h->started(h->ctx);
	while (!err && !ds_stop) {
		int timeout = 200;

		if (deadline) {
			double left = deadline - ds_now();

			if (left <= 0)
				break;
			if (left * 1000 < timeout)
				timeout = (int)(left * 1000) + 1;
		}
		err = drain_once(r, timeout, h);
		if (err > 0)
			err = 0;
		if ((done = pr_reader_done(r)))
			break;
	}
	/* Before disabling: a switch-in after this instant may still be
	 * recorded, one after disabling cannot. */
	h->end_ns = ds_now_ns();
	pr_reader_disable(r);
	/* What the rings still hold is part of the capture. */
	if (!err) {
		while ((err = drain_once(r, -1, h)) > 0)
			;
	}
	reap_command(pr_reader_child(r), c->argv ? c->argv[0] : "?", ds_stop || deadline,
		     ds_now() - start);
	say_ended(c, &names, ds_now() - start, done);
	return err < 0 ? err : 0;
}
