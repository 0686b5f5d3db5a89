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
	if (c->nr_tids)
		return pr_reader_open_tids(c->tids, c->nr_tids, &opts);
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

/* The -p targets' threads already off the CPU (--off-cpu, --wall),
 * taken by ds_capture_run() before it enables the events, and when it
 * did: ds_synthesize() describes them, on the capture thread. */
static struct pr_blocked *blocked;
static uint64_t blocked_at;

/* The off-CPU event of `r`: its index, or -1. */
static int off_cpu_event(const struct pr_reader *r)
{
	for (size_t i = 0; i < pr_reader_nr_events(r); i++)
		if (pr_event_source_of(pr_reader_event_attr(r, i)) == PR_SOURCE_CONTEXT_SWITCH)
			return (int)i;
	return -1;
}

static void take_blocked(const struct ds_capture *c, const struct pr_reader *r)
{
	PR_OPTS(pr_blocked_opts, opts, .log = ds_log);
	int ev = off_cpu_event(r);

	/* A launched command has none yet; the whole system's or a
	 * cgroup's would stop every sleeping thread there. */
	if (ev < 0 || c->argv || c->system_wide || c->cgroup || !c->nr_pids)
		return;
	blocked = pr_blocked_snapshot(c->pids, c->nr_pids, pr_reader_event_attr(r, (size_t)ev),
				      &opts);
	if (!blocked)
		ds_logf(PR_LOG_WARN, "the threads already off the CPU are left out: %s",
			strerror(errno));
}

/* Their waits, from when sampling started. */
static int synthesize_blocked(const struct pr_reader *r, struct synth *sy)
{
	int ev = off_cpu_event(r), n;
	uint64_t id = 0;

	if (!blocked || ev < 0)
		return 0;
	pr_reader_event_ids(r, (size_t)ev, &id, 1);
	n = pr_blocked_synthesize(blocked, pr_reader_event_attr(r, (size_t)ev), id, blocked_at,
				  sy->cb, sy->ctx);
	ds_logf(PR_LOG_DEBUG, "%d threads were off the CPU when sampling started", n);
	pr_blocked_free(blocked);
	blocked = NULL;
	return n < 0 ? n : 0;
}

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
	/* -t: the processes of the threads, each once; the kernel reports
	 * only what those threads map themselves. */
	for (size_t i = 0; !err && i < c->nr_tids; i++) {
		pid_t pid = pr_thread_process(c->tids[i]);
		bool done = pid <= 0;

		for (size_t k = 0; k < i && !done; k++)
			done = pr_thread_process(c->tids[k]) == pid;
		err = done ? 0 : pr_process_synthesize(pid, attr, id, synthesized, &sy);
		if (err == -ESRCH)
			err = 0;
	}
	/* After the maps their stacks' addresses are in. */
	if (!err)
		err = synthesize_blocked(r, &sy);
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

/* The CPU time a command that ended used, in seconds: from its exec on
 * as its sampling event counted it when that event counts CPU time, so
 * the profiler's own work in the child before exec (copying its pages,
 * dropping its address space) is not blamed on the command; else what
 * wait4() said. */
static double command_cpu(const struct pr_reader *r, const struct rusage *ru)
{
	uint64_t ns;

	if (pr_event_source_of(pr_reader_event_attr(r, 0)) == PR_SOURCE_CPU_CLOCK &&
	    !pr_reader_count(r, 0, &ns))
		return (double)ns / 1e9;
	return (double)(ru->ru_utime.tv_sec + ru->ru_stime.tv_sec) +
	       (double)(ru->ru_utime.tv_usec + ru->ru_stime.tv_usec) / 1e6;
}

/* The launched command's life on the events' clock, from the records
 * that pass to the verb's: its exec (the first COMM record with the exec
 * flag of its pid) and its exit. */
struct command_life {
	pr_record_fn record;
	void *ctx;
	uint32_t pid;                /* 0: no command was launched */
	uint64_t exec_ns, exit_ns;
};

static int note_life(const struct pr_record *rec, void *arg)
{
	struct command_life *l = arg;

	if (rec->pid == l->pid && rec->tid == l->pid && (rec->fields & PR_ID_TIME)) {
		if (rec->type == PR_RECORD_COMM && rec->u.comm.exec && !l->exec_ns)
			l->exec_ns = rec->time;
		else if (rec->type == PR_RECORD_EXIT)
			l->exit_ns = rec->time;
	}
	return l->record(rec, l->ctx);
}

/* How long process `pid` (ended, not yet reaped) waited for a CPU while
 * runnable, in seconds (/proc/PID/schedstat's run_delay), or -1. */
static double run_delay(pid_t pid)
{
	char path[64];
	unsigned long long on_cpu, delay;
	FILE *f;
	int n;

	snprintf(path, sizeof(path), "/proc/%d/schedstat", (int)pid);
	if (!(f = fopen(path, "re")))
		return -1;
	n = fscanf(f, "%llu %llu", &on_cpu, &delay);
	fclose(f);
	return n == 2 ? (double)delay / 1e9 : -1;
}

/* Wait for a launched command, terminating it first if it is still
 * running when the capture ends; one that ended on its own `secs` into
 * the run, killed or failing, is named.  Its wait status (-1: none, or
 * ended by us) and CPU time go to `h`. */
static void reap_command(const struct pr_reader *r, const struct command_life *life,
			 const char *name, bool terminate, double secs,
			 struct ds_capture_hooks *h)
{
	pid_t pid = pr_reader_child(r);
	double delay = -1;
	struct rusage ru;
	pid_t got = 0;
	int status = 0;

	if (pid <= 0)
		return;
	if (terminate && (got = wait4(pid, &status, WNOHANG, &ru)) == 0) {
		kill(pid, SIGTERM);
		waitpid(pid, &status, 0);
		return;
	}
	/* Read while it is a zombie: reaping it takes its /proc entry. */
	if (life->exit_ns > life->exec_ns && life->exec_ns)
		delay = run_delay(pid);
	while (got != pid && (got = wait4(pid, &status, 0, &ru)) < 0 && errno == EINTR)
		;
	if (got != pid)
		return;
	h->cmd_cpu = command_cpu(r, &ru);
	if (delay >= 0) {
		double slept = (double)(life->exit_ns - life->exec_ns) / 1e9 - h->cmd_cpu - delay;

		h->cmd_slept = slept > 0 ? slept : 0;
	}
	/* A Ctrl-C on the terminal reached it too: not news. */
	if (ds_stop)
		return;
	h->cmd_status = status;
	if (WIFSIGNALED(status))
		fprintf(stderr, "dwarfsample: the command (%s, PID %d) was killed by signal %d "
			"(%s) %.1f s into the run; the profile holds what was sampled until "
			"then\n", name, (int)pid, WTERMSIG(status), strsignal(WTERMSIG(status)),
			secs);
	else if (WIFEXITED(status) && WEXITSTATUS(status))
		fprintf(stderr, "dwarfsample: the command (%s, PID %d) exited with status %d "
			"%.1f s into the run\n", name, (int)pid, WEXITSTATUS(status), secs);
}

int ds_command_exit(const struct ds_capture_hooks *h, int own)
{
	/* As a shell says it: 127 not found, 126 not runnable. */
	if (h->cmd_start_err)
		return h->cmd_start_err == -ENOENT ? 127 : 126;
	if (own)
		return own;
	if (h->cmd_status < 0)
		return 0;
	if (WIFSIGNALED(h->cmd_status))
		return 128 + WTERMSIG(h->cmd_status);
	return WIFEXITED(h->cmd_status) ? WEXITSTATUS(h->cmd_status) : 0;
}

void ds_no_samples(const struct ds_capture *c, const struct ds_capture_hooks *h, double secs,
		   const char *prefix)
{
	const char *who = c->argv ? c->argv[0] : c->system_wide ? "the system" : "the target";
	double period = 1.0 / (double)(c->freq ? c->freq : 99), cpu = h->cmd_cpu;

	fprintf(stderr, "%sno samples: ", prefix);
	if (c->events.nr)
		fprintf(stderr, "no %s event came from %s during the run%s\n", c->events.names[0],
			who, c->events.period ? " (or fewer than -c's period)" : "");
	else if (c->off_cpu)
		fprintf(stderr, "%s did not wait during the run (nor longer than --off-cpu-min)\n",
			who);
	else if (cpu >= 0 && cpu < period &&
		 (h->cmd_slept >= 0 ? h->cmd_slept < period || h->cmd_slept < cpu
				    : cpu * 2 >= secs))
		fprintf(stderr, "%s exited %.3f s into the run, before the first sample (one "
			"every %.1f ms of its CPU time at %" PRIu64 " Hz); a higher -F samples a "
			"short run more often\n", who, secs, period * 1e3,
			c->freq ? c->freq : 99);
	else if (cpu >= 0 && cpu < period)
		fprintf(stderr, "%s used %.1f ms of CPU in %.1f s, less than one sample period "
			"(%.1f ms at %" PRIu64 " Hz): it spent the run off the CPU, waiting (sleep, "
			"I/O, a lock), which CPU sampling does not see; --off-cpu shows where it "
			"waited, --wall both its CPU and its waits\n", who, cpu * 1e3, secs,
			period * 1e3, c->freq ? c->freq : 99);
	else
		fprintf(stderr, "%s used less than one sample period of CPU (%.1f ms at %" PRIu64
			" Hz) or exited before the first sample; if it waits (sleep, I/O, a "
			"lock), --off-cpu shows where, --wall both its CPU and its waits\n", who,
			period * 1e3, c->freq ? c->freq : 99);
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

/* The -p or -t targets: their ids, what they are, and their names read
 * when sampling starts. */
struct target_names {
	const pid_t *ids;
	size_t n;
	const char *what;
	char comm[DS_MAX_PIDS][16];
};

static void read_names(const struct ds_capture *c, struct target_names *t)
{
	t->ids = c->nr_tids ? c->tids : c->pids;
	t->n = c->nr_tids ? c->nr_tids : c->nr_pids;
	t->what = c->nr_tids ? "thread" : "PID";
	for (size_t i = 0; i < t->n; i++) {
		char path[64];
		FILE *f;

		snprintf(path, sizeof(path), "/proc/%d/comm", (int)t->ids[i]);
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
static void say_ended(const struct target_names *t, double secs, bool all_done)
{
	for (size_t i = 0; i < t->n; i++) {
		/* When every target has ended the reader knows it first: a
		 * task's events hang up in its exit, before /proc says so. */
		if (!all_done && !ended(t->ids[i]))
			continue;
		fprintf(stderr, "dwarfsample: %s %d (%s) ended during the run: it exited or "
			"was killed", t->what, (int)t->ids[i], t->comm[i][0] ? t->comm[i] : "?");
		if (all_done)
			fprintf(stderr, "; sampling stopped with the last target, %.1f s in\n",
				secs);
		else
			fputs("; the other targets were sampled on\n", stderr);
	}
}

/* One drain of every ring; a corrupt record was logged and skipped, which
 * is no reason to stop. */
static int drain_once(struct pr_reader *r, int timeout, struct command_life *life,
		      const struct ds_capture_hooks *h)
{
	/* Without a launched command, the records go straight to the verb. */
	pr_record_fn fn = life->pid ? note_life : life->record;
	void *ctx = life->pid ? (void *)life : life->ctx;
	int err = timeout >= 0 ? pr_reader_poll(r, timeout, fn, ctx)
			       : pr_reader_consume(r, fn, ctx);

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
	double start, deadline;
	struct target_names names;
	pid_t child = pr_reader_child(r);
	struct command_life life = { .record = h->record, .ctx = h->ctx,
				     .pid = child > 0 ? (uint32_t)child : 0 };
	bool done = false;
	int err, wait_ms = 1;

	h->cmd_status = -1;
	h->cmd_cpu = -1;
	h->cmd_slept = -1;
	h->cmd_start_err = 0;
	/* Stopping the threads one by one takes a while (0.8 ms each): not
	 * out of the run's duration. */
	if (h->started)
		take_blocked(c, r);
	start = ds_now();
	deadline = c->duration > 0 ? start + c->duration : 0;
	read_names(c, &names);
	blocked_at = ds_now_ns();
	err = pr_reader_enable(r);
	if (c->argv && err && err != -ESRCH)
		h->cmd_start_err = err;

	/* A test that starts its workload once both profilers sample waits
	 * for this line (-vv), not for the events to exist: they are opened
	 * disabled. */
	if (!err)
		ds_logf(PR_LOG_DEBUG, "the events are enabled");
	if (!err && h->started)
		err = h->started(h->ctx);
	while (!err && !ds_stop) {
		/* The rings wake the reader only half full, and a drain's
		 * records reach the workers once the next drain has come (time
		 * order), so with 200 ms waits from the start the first sample
		 * was named ~450 ms in (BENCHMARKS.md, "Start-up to the first
		 * named sample").  The first waits are short and double, from
		 * 1 ms (a sample period at 999 Hz): a sample taken 1 ms in
		 * reaches a worker with the drain at 7 ms, not 15 (from 5 ms).
		 * They stop at a second: a ring sized for the rate (a second of
		 * samples under 250 a second) wakes the reader half full before
		 * that, and faster rates' rings sooner; the limit is for rings
		 * that never fill (a slow tracepoint).  Each drain costs
		 * wakeups and caches the workload has since taken: a 10-second
		 * run at 99 Hz cost 51 ms of CPU with 200 ms waits, 43 with 500
		 * and 38 with 1000 (BENCHMARKS.md, sixteenth pass). */
		int timeout = wait_ms;

		wait_ms = wait_ms < 512 ? wait_ms * 2 : 1000;

		if (deadline) {
			double left = deadline - ds_now();

			if (left <= 0)
				break;
			if (left * 1000 < timeout)
				timeout = (int)(left * 1000) + 1;
		}
		err = drain_once(r, timeout, &life, h);
		if (err > 0)
			err = 0;
		if ((done = pr_reader_done(r)))
			break;
	}
	/* Not described when sampling failed to start. */
	pr_blocked_free(blocked);
	blocked = NULL;
	/* Before disabling: a switch-in after this instant may still be
	 * recorded, one after disabling cannot. */
	h->end_ns = ds_now_ns();
	pr_reader_disable(r);
	/* What the rings still hold is part of the capture. */
	if (!err) {
		while ((err = drain_once(r, -1, &life, h)) > 0)
			;
	}
	reap_command(r, &life, c->argv ? c->argv[0] : "?", ds_stop || deadline,
		     ds_now() - start, h);
	say_ended(&names, ds_now() - start, done);
	return err < 0 ? err : 0;
}
