/* SPDX-License-Identifier: Apache-2.0 */
/*
 * `dwarfsample stat`: count events on a target and print the counts as
 * perf stat does (prstat.h): totals when the target ends or Ctrl-C,
 * or deltas every -I milliseconds.  A command is waited for whatever
 * happens (a Ctrl-C reaches it from the terminal), and its exit status
 * is ours; given with -p, -t or -a, it is run while they count, and its end
 * ends the count (perf stat -a -- sleep 1).
 */
#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <linux/perf_event.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "cli.h"
#include "prcounter.h"
#include "prevent.h"
#include "prstat.h"
#include "stat.h"

#define STAT_MAX_EVENTS 256
/* perf stat's default set; the clock is cpu-clock system-wide. */
#define DEFAULT_EVENTS "%s,context-switches,cpu-migrations,page-faults," \
	"cycles,instructions,branches,branch-misses"
/* Without a pidfd (before Linux 5.3), how often to look for the end. */
#define EXIT_CHECK_MS 100

enum { OPT_PER_THREAD = 4000 };

struct stat_args {
	char *events;            /* the -e lists joined by ','; NULL: default */
	bool per_thread;
	uint64_t interval_ms;    /* -I; 0: totals at the end */
	const char *sep;         /* -x */
	bool json;
	const char *output;      /* -o; NULL: standard error, as perf */
};

/* The rows of one reading, and for -I the previous one. */
struct readings {
	struct pr_count *now, *prev, *delta;
	struct pr_stat_thread *threads;
	char (*comms)[32];
	size_t nr_rows, room;
};

struct stat_run {
	const struct ds_capture *c;
	const struct stat_args *a;
	struct pr_counter *counter;
	struct pr_event_desc evs[STAT_MAX_EVENTS];
	/* Each event as -e spelt it, as perf prints it ("cs", "faults"). */
	char spelled[STAT_MAX_EVENTS][PR_EVENT_NAME_MAX];
	struct pr_stat_event shown[STAT_MAX_EVENTS];
	size_t nr;
	FILE *f;                 /* stderr, or -o's file */
	struct pr_stat_printer *out;
	struct readings rd;
	pid_t child;             /* the command, until reaped; else -1 */
	/* The targets' ends: the command's or each -p process's pidfd. */
	struct pollfd ends[DS_MAX_PIDS];
	size_t nr_ends, nr_ended;
	bool poll_ends;          /* no pidfds: look every EXIT_CHECK_MS */
	bool terminated;         /* -d ended the command with SIGTERM */
	uint64_t start_ns;
};

static void usage(FILE *out)
{
	fprintf(out,
		"usage: dwarfsample stat [options] (-p PID[,PID...] | -t TID[,TID...] |\n"
		"                        -a [-C LIST]) [-- CMD [ARGS...]]\n"
		"       dwarfsample stat [options] -- CMD [ARGS...]\n"
		"\n"
		"Count events on the target and print the counts as perf stat does:\n"
		"when a command exits (its exit status is dwarfsample's), when -d\n"
		"ends, or at Ctrl-C; or every -I milliseconds.\n"
		"\n"
		"Target (one of -p, -t, -a and a command; a command with -p, -t or -a is\n"
		"run while they count, and counting ends with it):\n"
		"  -p, --pid PID[,PID...]   count these processes, all their threads and\n"
		"                           the threads and children they create (a\n"
		"                           thread's id stands for its process)\n"
		"  -t, --tid TID[,TID...]   count only these threads, as perf's -t\n"
		"  -a, --all-cpus           count every task on every online CPU\n"
		"  -C, --cpu LIST           with -a: only these CPUs (e.g. 0-3,8)\n"
		"  -- CMD [ARGS...]         run CMD and count it from its exec\n"
		"Counting:\n"
		"  -e, --event LIST         events in perf's spelling, {a,b} for a group\n"
		"                           read together (default: task-clock,\n"
		"                           context-switches, cpu-migrations, page-faults\n"
		"                           and, where the CPU has a PMU, cycles,\n"
		"                           instructions, branches, branch-misses)\n"
		"      --per-thread         with -p, -t or -a: a line per thread\n"
		"                           (comm-tid); with -a, each thread living at\n"
		"                           the start that counted anything\n"
		"  -I, --interval-print MS  print the counts of every MS milliseconds (a\n"
		"                           bare number, as perf's), or 1s, 500ms\n"
		"  -d, --duration DURATION  stop after this long: seconds (10) or 10s,\n"
		"                           500ms, 2m (a command gets SIGTERM)\n"
		"  -v, --verbose            more diagnostics\n"
		"Output (to standard error, as perf's):\n"
		"  -x, --field-separator SEP\n"
		"                           CSV lines, as perf stat -x\n"
		"  -j, --json               JSON lines, as perf stat -j\n"
		"  -o, --output FILE        write there instead\n"
		"  -h, --help               this help\n");
}

static int stat_option(int opt, const char *arg, void *ctx)
{
	struct stat_args *a = ctx;
	size_t have = a->events ? strlen(a->events) + 1 : 0;
	char *more;

	switch (opt) {
	case 'e':
		/* Each -e adds to the list, as perf's. */
		more = realloc(a->events, have + strlen(arg) + 1);
		if (!more)
			return -1;
		if (have)
			more[have - 1] = ',';
		strcpy(more + have, arg);
		a->events = more;
		return 0;
	case OPT_PER_THREAD:
		a->per_thread = true;
		return 0;
	case 'I': {
		uint64_t ns;

		/* perf stat -I counts milliseconds: a bare number still does. */
		if (ds_parse_duration_in(arg, "-I", 1000000, &ns))
			return -1;
		if (ns < 10000000 || ns > UINT64_C(86400000000000)) {
			ds_err("-I: '%s' is out of range: give 10ms to 1d", arg);
			return -1;
		}
		a->interval_ms = ns / 1000000;
		return 0;
	}
	case 'x':
		if (!*arg) {
			ds_err("the field separator of -x cannot be empty");
			return -1;
		}
		a->sep = arg;
		return 0;
	case 'j':
		a->json = true;
		return 0;
	case 'o':
		a->output = arg;
		return 0;
	default:
		return -1;
	}
}

/* Whether the command is the target (not run beside -p or -a). */
static bool counts_command(const struct ds_capture *c)
{
	return c->argv && !c->nr_pids && !c->system_wide;
}

/* The options together, once parsed: 0 or -1 after saying why. */
static int check_args(const struct ds_capture *c, const struct stat_args *a)
{
	if (a->sep && a->json) {
		ds_err("give -x SEP (CSV) or -j (JSON), not both");
		return -1;
	}
	if (a->per_thread && !c->nr_pids && !c->nr_tids && !c->system_wide) {
		ds_err("--per-thread counts the threads of running processes: use it "
		       "with -p, -t or -a (a command's threads do not exist yet when it starts)");
		return -1;
	}
	if (a->per_thread && c->nr_cpus) {
		ds_err("--per-thread with -a counts every thread wherever it runs: leave "
		       "out -C");
		return -1;
	}
	return 0;
}

/* ---- events ---- */

/* The events to count, parsed: 0, or 2 after a bad list (said).  One the
 * machine cannot count (a hardware event without a PMU) prints "<not
 * supported>", as perf's; the default set's hardware events then print
 * nothing. */
static int setup_events(struct stat_run *s)
{
	char defaults[256];
	const char *list = s->a->events;
	int n;

	if (!list) {
		snprintf(defaults, sizeof(defaults), DEFAULT_EVENTS,
			 s->c->system_wide ? "cpu-clock" : "task-clock");
		list = defaults;
	}
	n = ds_event_list_parse(list, s->evs, s->spelled, STAT_MAX_EVENTS);
	if (n == -E2BIG)
		ds_err("too many events (at most %d)", STAT_MAX_EVENTS);
	if (n <= 0)
		return 2;
	s->nr = (size_t)n;
	for (size_t i = 0; i < s->nr; i++)
		s->shown[i] = (struct pr_stat_event){
			.name = s->spelled[i],
			.kind = pr_event_stat_kind(&s->evs[i]),
			.hide_unsupported = !s->a->events,
		};
	return 0;
}

/* ---- the targets' ends ---- */

static int pidfd_open(pid_t pid)
{
#ifdef SYS_pidfd_open
	return (int)syscall(SYS_pidfd_open, pid, 0);
#else
	(void)pid;
	errno = ENOSYS;
	return -1;
#endif
}

/* The -p processes or the -t threads (one or the other is given). */
static const pid_t *targets(const struct ds_capture *c)
{
	return c->nr_tids ? c->tids : c->pids;
}

/* A pidfd per process whose end ends the count: the command (counted, or
 * run beside -p, -t or -a), or each of -p's or -t's (a thread other than
 * a main one has none: it is looked at in turn).  A process already gone
 * has ended. */
static void watch_ends(struct stat_run *s)
{
	const pid_t *pids = s->child > 0 ? &s->child : targets(s->c);
	size_t nr = s->child > 0 ? 1 : s->c->nr_pids + s->c->nr_tids;

	/* The machine does not end; a command run beside it does. */
	if (s->c->system_wide && s->child <= 0)
		return;
	for (size_t i = 0; i < nr; i++) {
		int fd = pidfd_open(pids[i]);
		bool gone = fd < 0 && errno == ESRCH;

		if (fd < 0 && !gone)
			s->poll_ends = true;
		/* (events 0: ended already, not to be counted again.) */
		s->ends[s->nr_ends++] = (struct pollfd){ .fd = fd, .events = gone ? 0 : POLLIN };
		s->nr_ended += gone;
	}
	/* Without pidfds, each is looked at in turn (poll skips fd -1). */
	if (s->poll_ends)
		for (size_t i = 0; i < s->nr_ends; i++) {
			if (s->ends[i].fd >= 0)
				close(s->ends[i].fd);
			s->ends[i].fd = -1;
		}
}

static bool has_ended(const struct stat_run *s, size_t i)
{
	pid_t pid = s->child > 0 ? s->child : targets(s->c)[i];
	siginfo_t info;

	if (s->child > 0) {
		/* Not reaped here: wait4() takes its status and times. */
		memset(&info, 0, sizeof(info));
		return !waitid(P_PID, (id_t)pid, &info, WEXITED | WNOHANG | WNOWAIT) &&
		       info.si_pid == pid;
	}
	return kill(pid, 0) && errno == ESRCH;
}

/* After a wait: count the ends that came.  True when all have. */
static bool ended(struct stat_run *s)
{
	for (size_t i = 0; i < s->nr_ends; i++) {
		struct pollfd *e = &s->ends[i];

		if (e->events == 0)
			continue;
		if (s->poll_ends ? !has_ended(s, i) : !e->revents)
			continue;
		e->events = 0;
		if (e->fd >= 0)
			close(e->fd);
		e->fd = -1;
		s->nr_ended++;
	}
	return s->nr_ends && s->nr_ended == s->nr_ends;
}

static void close_ends(struct stat_run *s)
{
	for (size_t i = 0; i < s->nr_ends; i++)
		if (s->ends[i].fd >= 0)
			close(s->ends[i].fd);
	s->nr_ends = 0;
}

/* ---- readings ---- */

/* Each of the readings' arrays (the address of its pointer, copied in and
 * out with memcpy), with the bytes of one row of it: `nr` counts for the
 * counts, one element for the others. */
struct readings_array {
	void *at;
	size_t row;
};
#define READINGS_ARRAYS(rd, nr)                                                    \
	{ &(rd)->now, (nr) * sizeof(*(rd)->now) },                                  \
	{ &(rd)->prev, (nr) * sizeof(*(rd)->prev) },                                \
	{ &(rd)->delta, (nr) * sizeof(*(rd)->delta) },                              \
	{ &(rd)->threads, sizeof(*(rd)->threads) },                                 \
	{ &(rd)->comms, sizeof(*(rd)->comms) }

static int reserve_rows(struct readings *rd, size_t rows, size_t nr)
{
	const struct readings_array arrays[] = { READINGS_ARRAYS(rd, nr) };

	if (rows <= rd->room)
		return 0;
	/* Each array keeps what it had when another cannot grow. */
	for (size_t i = 0; i < sizeof(arrays) / sizeof(arrays[0]); i++) {
		char *old, *grown;

		memcpy(&old, arrays[i].at, sizeof(old));
		grown = realloc(old, rows * arrays[i].row);
		if (!grown)
			return -ENOMEM;
		/* New rows start from nothing. */
		memset(grown + rd->room * arrays[i].row, 0, (rows - rd->room) * arrays[i].row);
		memcpy(arrays[i].at, &grown, sizeof(grown));
	}
	rd->room = rows;
	return 0;
}

static void free_readings(struct readings *rd)
{
	const struct readings_array arrays[] = { READINGS_ARRAYS(rd, 0) };

	for (size_t i = 0; i < sizeof(arrays) / sizeof(arrays[0]); i++) {
		void *p;

		memcpy(&p, arrays[i].at, sizeof(p));
		free(p);
	}
}

/* The thread's name now, or the last one read while it lived. */
static void thread_comm(char comm[32], pid_t pid, pid_t tid)
{
	char path[64];
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/task/%d/comm", (int)pid, (int)tid);
	f = fopen(path, "r");
	if (f) {
		if (fgets(comm, 32, f))
			comm[strcspn(comm, "\n")] = '\0';
		fclose(f);
	}
	if (!comm[0])
		snprintf(comm, 32, "%d", (int)tid);
}

/* The rows, and with --per-thread each thread and its name while it
 * still has one (a thread that has exited keeps the last). */
static int name_threads(struct stat_run *s)
{
	struct readings *rd = &s->rd;
	size_t rows = s->a->per_thread ? pr_counter_nr_units(s->counter) : 1;
	int err = reserve_rows(rd, rows ? rows : 1, s->nr);

	rd->nr_rows = rows;
	for (size_t i = 0; !err && s->a->per_thread && i < rows; i++) {
		struct pr_counter_unit u;

		err = pr_counter_unit(s->counter, i, &u);
		if (err)
			break;
		thread_comm(rd->comms[i], u.pid, u.tid);
		rd->threads[i] = (struct pr_stat_thread){ rd->comms[i], u.tid };
	}
	return err;
}

/* Read every row into rd->now: the total, or each thread. */
static int read_counts(struct stat_run *s)
{
	struct readings *rd = &s->rd;
	int err = name_threads(s);

	if (err || !s->a->per_thread)
		return err ? err : pr_counter_read(s->counter, rd->now, s->nr);
	for (size_t i = 0; i < rd->nr_rows && !err; i++)
		err = pr_counter_read_unit(s->counter, i, &rd->now[i * s->nr], s->nr);
	return err;
}

/* What the counts grew by since the previous reading, scaled as a
 * reading of its own, as perf's intervals. */
static void take_deltas(struct readings *rd, size_t nr)
{
	for (size_t i = 0; i < rd->nr_rows * nr; i++) {
		const struct pr_count *now = &rd->now[i], *prev = &rd->prev[i];
		struct pr_count *d = &rd->delta[i];

		*d = *now;
		d->value = now->value - prev->value;
		d->enabled = now->enabled - prev->enabled;
		d->running = now->running - prev->running;
		d->scaled = pr_count_scale(d->value, d->enabled, d->running);
		rd->prev[i] = *now;
	}
}

/* Read and print: the totals, or with -I what the last interval added. */
static int print_reading(struct stat_run *s, uint64_t at_ns, double wall_ns)
{
	int err = read_counts(s);
	struct pr_stat_reading r = {
		.threads = s->a->per_thread ? s->rd.threads : NULL,
		.nr_rows = s->rd.nr_rows,
		.wall_ns = wall_ns,
		.time_ns = at_ns - s->start_ns,
	};

	if (err) {
		char buf[128];

		ds_err("cannot read the counters: %s", pr_strerror(err, buf, sizeof(buf)));
		return err;
	}
	if (s->a->interval_ms) {
		take_deltas(&s->rd, s->nr);
		r.counts = s->rd.delta;
	} else {
		r.counts = s->rd.now;
	}
	pr_stat_printer_reading(s->out, s->shown, s->nr, &r);
	return 0;
}

/* ---- the run ---- */

static struct pr_counter *open_counter(struct stat_run *s)
{
	PR_OPTS(pr_counter_opts, opts,
		.log = ds_log,
		.per_thread = s->a->per_thread,
		.skip_unsupported = true);
	const struct ds_capture *c = s->c;

	if (counts_command(c))
		return pr_counter_open_command(s->evs, s->nr, c->argv, &opts);
	opts.command = c->argv;
	if (c->system_wide)
		return pr_counter_open_cpus(s->evs, s->nr, c->nr_cpus ? c->cpus : NULL,
					    c->nr_cpus, &opts);
	if (c->nr_tids)
		return pr_counter_open_tids(s->evs, s->nr, c->tids, c->nr_tids, &opts);
	return pr_counter_open_pids(s->evs, s->nr, c->pids, c->nr_pids, &opts);
}

/* How long to wait for the next thing to do, in ms (-1: only an end or a
 * signal); *tick is set when it is an interval's end. */
static int next_wait(const struct stat_run *s, uint64_t next_tick, uint64_t deadline)
{
	uint64_t now = ds_now_ns(), until = next_tick;
	int ms;

	if (deadline && (!until || deadline < until))
		until = deadline;
	if (!until)
		return s->poll_ends ? EXIT_CHECK_MS : -1;
	ms = until <= now ? 0 : (int)((until - now + 999999) / 1000000);
	return s->poll_ends && ms > EXIT_CHECK_MS ? EXIT_CHECK_MS : ms;
}

/* Count until the targets end, -d ends, or (not for a command) Ctrl-C;
 * with -I print every interval.  Returns 0 or a negative errno. */
static int count(struct stat_run *s)
{
	uint64_t interval_ns = s->a->interval_ms * 1000000u;
	uint64_t next_tick = interval_ns ? s->start_ns + interval_ns : 0;
	uint64_t deadline = s->c->duration > 0 ?
		s->start_ns + (uint64_t)(s->c->duration * 1e9) : 0;

	for (;;) {
		int ms = next_wait(s, next_tick, deadline), n;
		uint64_t now;

		n = poll(s->ends, s->nr_ends, ms);
		if (n < 0 && errno != EINTR)
			return -errno;
		if (ended(s))
			return 0;
		/* A command ends when it exits: the terminal's Ctrl-C reaches
		 * it too. */
		if (ds_stop && s->child <= 0)
			return 0;
		now = ds_now_ns();
		if (deadline && now >= deadline) {
			if (s->child > 0 && !kill(s->child, SIGTERM))
				s->terminated = true;
			return 0;
		}
		if (next_tick && now >= next_tick) {
			int err = print_reading(s, now, (double)interval_ns);

			if (err)
				return err;
			while (next_tick <= now)
				next_tick += interval_ns;
		}
	}
}

/* The header's target: "'CMD ARGS'", "process id 'PID,...'", "'system
 * wide'". */
static void describe_target(const struct ds_capture *c, char *buf, size_t len)
{
	bool ids = c->nr_pids || c->nr_tids;
	size_t n = 0;

	if (c->system_wide) {
		snprintf(buf, len, "'system wide'");
		return;
	}
	n += (size_t)snprintf(buf, len, "%s'", !ids ? "" : c->nr_tids ? "thread id " : "process id ");
	for (size_t i = 0; !ids && c->argv[i] && n < len; i++)
		n += (size_t)snprintf(buf + n, len - n, "%s%s", i ? " " : "", c->argv[i]);
	for (size_t i = 0; ids && i < c->nr_pids + c->nr_tids && n < len; i++)
		n += (size_t)snprintf(buf + n, len - n, "%s%d", i ? "," : "", (int)targets(c)[i]);
	if (n < len)
		snprintf(buf + n, len - n, "'");
}

/* Reap the command; its exit status is ours (a signal's end is said and
 * counts as success, as perf stat has it). */
static int reap_command(struct stat_run *s, struct rusage *ru)
{
	int status = 0;

	while (wait4(s->child, &status, 0, ru) < 0 && errno == EINTR)
		;
	s->child = -1;
	if (WIFEXITED(status))
		return WEXITSTATUS(status);
	if (WIFSIGNALED(status) && !s->terminated)
		fprintf(stderr, "%s: %s\n", s->c->argv[0], strsignal(WTERMSIG(status)));
	return 0;
}

static int run(struct ds_capture *c, const struct stat_args *a)
{
	PR_OPTS(pr_stat_printer_opts, po,
		.format = a->json ? PR_STAT_JSON : a->sep ? PR_STAT_CSV : PR_STAT_TABLE,
		.sep = a->sep,
		.interval = a->interval_ms != 0,
		.per_thread = a->per_thread,
		.hide_zero_rows = a->per_thread && c->system_wide);
	struct stat_run *s = calloc(1, sizeof(*s));
	struct rusage ru;
	char target[1024];
	int ret, err;

	if (!s)
		return 1;
	s->c = c;
	s->a = a;
	s->child = -1;
	ret = setup_events(s);
	if (ret)
		goto out;
	ret = 1;
	s->f = stderr;
	if (a->output && !(s->f = fopen(a->output, "w"))) {
		ds_err("cannot write %s: %s", a->output, strerror(errno));
		goto out;
	}
	s->out = pr_stat_printer_new(s->f, &po);
	if (!s->out) {
		ds_err("out of memory");
		goto out;
	}
	s->counter = open_counter(s);
	if (!s->counter)
		goto out;
	if (a->output)
		pr_stat_printer_started(s->out);
	s->child = pr_counter_child(s->counter);
	s->start_ns = ds_now_ns();
	err = pr_counter_enable(s->counter);
	if (err) {
		/* A command that could not run was said and reaped, as a
		 * shell says it: 127 not found, 126 not runnable. */
		if (s->child > 0)
			ret = err == -ENOENT ? 127 : 126;
		s->child = -1;
		goto out;
	}
	watch_ends(s);
	/* The threads' names now, while they all live. */
	name_threads(s);
	describe_target(c, target, sizeof(target));
	if (c->verbose) {
		char msg[1100];

		/* Once this is said, everything the target does counts. */
		snprintf(msg, sizeof(msg), "counting %zu events on %s", s->nr, target);
		ds_log(PR_LOG_INFO, msg, NULL);
	}
	err = count(s);
	{
		uint64_t end_ns = ds_now_ns();
		double elapsed = (double)(end_ns - s->start_ns) / 1e9;

		ret = 0;
		if (s->child > 0)
			ret = reap_command(s, &ru);
		else
			pr_counter_disable(s->counter);
		pr_stat_printer_header(s->out, target);
		if (!err)
			err = print_reading(s, end_ns, a->interval_ms ?
					    (double)a->interval_ms * 1e6 : elapsed * 1e9);
		/* perf gives a command's times only when it is the target. */
		pr_stat_printer_footer(s->out, elapsed, counts_command(c) ? &ru : NULL);
		if (err)
			ret = 1;
	}
out:
	close_ends(s);
	if (s->child > 0) {
		kill(s->child, SIGKILL);
		waitpid(s->child, NULL, 0);
	}
	pr_counter_close(s->counter);
	pr_stat_printer_free(s->out);
	if (s->f && s->f != stderr && fclose(s->f) && !ret) {
		ds_err("cannot write %s: %s", a->output, strerror(errno));
		ret = 1;
	}
	free_readings(&s->rd);
	free(s);
	return ret;
}

int ds_cmd_stat(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "event", required_argument, NULL, 'e' },
		{ "per-thread", no_argument, NULL, OPT_PER_THREAD },
		{ "interval-print", required_argument, NULL, 'I' },
		{ "field-separator", required_argument, NULL, 'x' },
		{ "json", no_argument, NULL, 'j' },
		{ "output", required_argument, NULL, 'o' },
		{ NULL, 0, NULL, 0 },
	};
	struct stat_args a = { 0 };
	const struct ds_verb verb = {
		.name = "stat", .shortopts = "e:I:x:jo:", .longopts = longopts,
		.usage = usage, .option = stat_option, .ctx = &a, .counting = true,
	};
	struct ds_capture *c = calloc(1, sizeof(*c));
	int ret = 1;

	if (c && (ret = ds_parse_target(c, &verb, argc, argv)) < 0)
		ret = check_args(c, &a) ? 2 : run(c, &a);
	free(a.events);
	free(c);
	return ret;
}
