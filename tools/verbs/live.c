/* SPDX-License-Identifier: Apache-2.0 */
/*
 * `dwarfsample -p PID` (and -a, and -- CMD): sample, unwind and name
 * stacks as they arrive, count them, and write a profile when the run
 * ends — by -d, Ctrl-C, SIGTERM, or the target's exit.  No raw stack is
 * kept: the capture thread copies records out of the rings into the
 * session (prsession.h), whose workers unwind and name them in time
 * order, and only distinct stacks stay in memory.
 */
#include <errno.h>
#include <inttypes.h>
#ifdef __GLIBC__
#include <malloc.h>
#endif
#include <stdalign.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "cli.h"
#include "output.h"
#include "live.h"
#include "names.h"
#include "prunwind.h"

/* What may wait for the workers before samples are dropped: at 1 kHz on
 * 64 CPUs with 32 KiB stacks, 8 s of samples. */
#define MAX_QUEUED ((size_t)2 << 30)
struct profile_args {
	struct ds_output_opts out;
	struct ds_names names;
};

struct live {
	const struct ds_capture *c;
	struct pr_reader *r;
	struct pr_session *ses;
	struct pr_output *out;
	struct pr_quality *quality;  /* the summary's short form of it */
	struct pr_tp_formats *tp;    /* perf script's tracepoint fields */
	uint64_t id;
	bool waits;                  /* off-CPU or wall time */
	double start, end, last_status;
	bool started;                /* sampling began */
	bool status;                 /* a terminal: show the status line */
};

/* The capture thread: every record, to the session. */
static int copy(const struct pr_record *rec, void *arg)
{
	return pr_session_add(rec, ((struct live *)arg)->ses);
}

static int started(void *arg)
{
	struct live *l = arg;

	l->start = l->end = ds_now();
	l->last_status = l->start;
	l->started = true;
	return ds_synthesize(l->c, l->r, l->id, pr_session_add, l->ses);
}

static uint64_t lost_samples(const struct live *l, const struct pr_session_stats *ss)
{
	return pr_reader_lost(l->r) + ss->dropped;
}

static void status_line(struct live *l, bool final)
{
	struct pr_session_stats ss = { .sz = sizeof(ss) };
	uint64_t n, lost;

	pr_session_stats(l->ses, &ss);
	n = ss.samples;
	lost = lost_samples(l, &ss);
	fprintf(stderr, "\r\033[K[%6.1f s] %" PRIu64 " samples, %" PRIu64 " lost, %.1f%% "
		"complete stacks", (final ? l->end : ds_now()) - l->start, n, lost,
		n ? 100.0 * (double)ss.complete / (double)n : 0.0);
	if (l->waits) {
		struct pr_profile_times t = { .sz = sizeof(t) };
		uint64_t off, pre;
		char a[32], b[32];

		pr_output_published(l->out, &t);
		pre = t.off_cpu_ns[PR_WAIT_PREEMPTED];
		off = t.off_cpu_ns[PR_WAIT_BLOCKED] + pre;
		if (l->c->wall)
			fprintf(stderr, "; on-CPU %s", ds_duration(t.cpu_ns, a, sizeof(a)));
		fprintf(stderr, "; off-CPU %s (%.0f%% preempted)", ds_duration(off, b, sizeof(b)),
			off ? 100.0 * (double)pre / (double)off : 0.0);
	}
	fputs(final ? "\n" : "", stderr);
}

/* After every drain: hand the batch over; on a terminal, the status
 * line about once a second. */
static int round_done(void *arg)
{
	struct live *l = arg;
	double now;

	pr_session_round(l->ses);
	/* The last drain ends the profile's time (not reaping a command, nor
	 * the worker catching up). */
	l->end = now = ds_now();
	if (!l->status || now - l->last_status < 1.0)
		return 0;
	l->last_status = now;
	status_line(l, false);
	return 0;
}

static void summary(struct live *l, const struct ds_capture_hooks *h, int fmt, size_t stacks)
{
	struct pr_unwind_stats st = { .sz = sizeof(st) };
	struct pr_session_stats ss = { .sz = sizeof(ss) };
	uint64_t lost, total;

	pr_session_unwind_stats(l->ses, &st);
	pr_session_stats(l->ses, &ss);
	lost = lost_samples(l, &ss);
	total = st.samples + lost;
	fprintf(stderr, "dwarfsample: %" PRIu64 " samples in %.1f s, %" PRIu64 " lost "
		"(%.2f%%)", st.samples, l->end - l->start, lost,
		total ? 100.0 * (double)lost / (double)total : 0.0);
	if (fmt != PR_OUTPUT_PERF_SCRIPT)
		fprintf(stderr, ", %zu distinct stacks", stacks);
	fputc('\n', stderr);
	ds_session_no_memory(&ss);
	/* An empty profile says why, and what would show the run. */
	if (!st.samples && !lost)
		ds_no_samples(l->c, h, l->end - l->start, "dwarfsample: ");
	if (st.samples) {
		fputs("dwarfsample: ", stderr);
		ds_stack_ends(&st);
		ds_frame_sources(stderr, "dwarfsample: ", &ss, false);
		/* Those the capture thread cut short are not the kernel's copy's
		 * doing: the table below says so (some were joined, or ended
		 * otherwise: not all of them are among the truncated). */
		if (st.ends[PR_END_TRUNCATED] > ss.cut_short &&
		    (st.ends[PR_END_TRUNCATED] - ss.cut_short) * 20 > st.samples)
			fprintf(stderr, "dwarfsample: more than 5%% of stacks were cut short: a "
				"larger %s copies more of each\n",
				l->c->off_cpu ? "--off-cpu-stack-size"
				: l->c->wall ? "--stack-size (CPU samples) or --off-cpu-stack-size "
					       "(waits)" : "--stack-size");
		/* Where, and what would help: what reaches 1 % of the
		 * samples or frames ('report --quality' on a recording has
		 * all of it). */
		ds_quality_report(l->quality, stderr, "dwarfsample: ", 3, 10);
	}
	ds_chain_limit_note(stderr, "dwarfsample: ", l->r);
	ds_events_sampling_note(&l->c->events, l->c->freq, stderr, "dwarfsample: ");
	ds_python_summary(stderr, "dwarfsample: ");
	if (lost)
		fprintf(stderr, "dwarfsample: to lose fewer samples, %s\n",
			ds_lost_hint(l->c));
	if (l->waits)
		ds_output_print_times(l->out);
}

/* The process name for a default output name and the title. */
static void target_name(const struct ds_capture *c, char *buf, size_t len)
{
	char path[64];
	FILE *f;

	snprintf(buf, len, "system");
	if (c->argv) {
		const char *slash = strrchr(c->argv[0], '/');

		snprintf(buf, len, "%s", slash ? slash + 1 : c->argv[0]);
	} else if (c->nr_pids || c->nr_tids) {
		pid_t id = c->nr_pids ? c->pids[0] : c->tids[0];

		snprintf(buf, len, "%s%d", c->nr_pids ? "pid" : "tid", id);
		snprintf(path, sizeof(path), "/proc/%d/comm", id);
		if ((f = fopen(path, "re"))) {
			if (fgets(buf, (int)len, f))
				buf[strcspn(buf, "\n")] = '\0';
			fclose(f);
		}
	}
	/* Only what is safe in a file name. */
	for (char *p = buf; *p; p++)
		if (!((*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') ||
		      (*p >= '0' && *p <= '9') || *p == '.' || *p == '-' || *p == '_'))
			*p = '_';
}

/* NAME-YYYYmmdd-HHMMSS.EXT in the current directory. */
static void default_path(const char *name, int fmt, char *buf, size_t len)
{
	time_t now = time(NULL);
	struct tm tm;
	char stamp[32];

	localtime_r(&now, &tm);
	strftime(stamp, sizeof(stamp), "%Y%m%d-%H%M%S", &tm);
	snprintf(buf, len, "%s-%s%s", name, stamp, pr_output_format_ext(fmt));
}

/* Samples a second one worker is given by default: about a fifth of
 * what one keeps up with at ~10 us a sample, so that a burst of new
 * code to name, or a slower program, still leaves it room. */
#define SAMPLES_PER_WORKER 20000

/*
 * How many workers: --jobs, else what the rate needs -- the frequency
 * times the CPUs whose threads may be sampled (every online one, for a
 * process, whose threads may run anywhere), plus one for switches with
 * --off-cpu or --wall, whose rate nothing bounds -- at most the CPUs
 * less one, which leaves one to the capture thread and the target.
 * perf script's text is written sample by sample in time order: one.
 */
static size_t nr_workers(const struct ds_capture *c, const struct profile_args *a, int fmt)
{
	long online = sysconf(_SC_NPROCESSORS_ONLN);
	size_t most = online > 2 ? (size_t)online - 1 : 1, cpus, n;
	uint64_t rate;

	if (fmt == PR_OUTPUT_PERF_SCRIPT)
		return 1;
	if (a->names.jobs)
		return a->names.jobs;
	cpus = c->system_wide && c->nr_cpus ? c->nr_cpus : online > 0 ? (size_t)online : 1;
	/* -c PERIOD: no rate to go by; as many as may be. */
	if (c->events.period)
		return most;
	rate = (c->freq ? c->freq : 99) * (uint64_t)cpus;
	n = (size_t)((rate + SAMPLES_PER_WORKER - 1) / SAMPLES_PER_WORKER);
	if (c->off_cpu || c->wall)
		n++;
	return n < most ? n : most;
}

static int open_live(struct live *l, struct profile_args *a, int fmt)
{
	size_t n = nr_workers(l->c, a, fmt);
	struct pr_sink sink, quality, first;
	PR_OPTS(pr_quality_opts, qo, .max_depth = a->names.max_depth);
	PR_OPTS(pr_session_opts, so, .log = ds_log, .workers = n, .max_bytes = MAX_QUEUED,
		.hurry = &ds_stop, .stop = &ds_stop, .cut_stacks = true);

#ifdef __GLIBC__
	/* One worker allocates from the main arena, as the capture thread
	 * does.  glibc gives a second thread an arena of its own, grown one
	 * page per mprotect(): 660 system calls in a ten-second run at 99 Hz
	 * on the C++ workload, about 7 % of the run's CPU.  The main arena
	 * grows by 128 KiB.  More workers keep arenas of their own, not to
	 * contend for one lock. */
	if (n == 1)
		mallopt(M_ARENA_MAX, 1);
#endif
	for (size_t i = 0; i < pr_reader_nr_events(l->r); i++)
		ds_quality_copy(&qo, pr_reader_event_attr(l->r, i));
	l->ses = ds_names_session(&a->names, l->r, NULL, &so, true, NULL);
	if (!l->ses || !(l->quality = pr_quality_new(&qo))) {
		ds_err("cannot start: %s", strerror(errno));
		return -1;
	}
	pr_output_sink(l->out, &sink);
	pr_quality_sink(l->quality, &quality);
	if (pr_session_add_sink(l->ses, &sink) || pr_session_add_sink(l->ses, &quality) ||
	    (ds_first_named_sink(&first) && pr_session_add_sink(l->ses, &first))) {
		ds_err("cannot start: out of memory");
		return -1;
	}
	if (l->c->verbose)
		ds_logf(PR_LOG_INFO, "unwinding on %zu worker%s", n, n == 1 ? "" : "s");
	pr_reader_ids(l->r, &l->id, 1);
	l->waits = a->out.po.mode != PR_PROFILE_CPU;
	return 0;
}

/* After the quality counts, which name the models' files. */
static void close_live(struct live *l)
{
	pr_quality_free(l->quality);
	pr_session_free(l->ses);
	pr_reader_close(l->r);
	pr_tp_formats_free(l->tp);
}

/* What was sampled, for the title: "99 Hz", "wall-clock time, 99 Hz",
 * "off-CPU time", "page-faults, context-switches, every 10". */
static void sampled(const struct ds_capture *c, char *buf, size_t size)
{
	size_t len = 0;

	if (c->off_cpu) {
		snprintf(buf, size, "off-CPU time");
		return;
	}
	buf[0] = '\0';
	if (c->wall)
		len = (size_t)snprintf(buf, size, "wall-clock time, ");
	for (size_t i = 0; i < c->events.nr && len < size; i++)
		len += (size_t)snprintf(buf + len, size - len, "%s, ", c->events.names[i]);
	if (len >= size)
		return;
	if (c->events.period)
		snprintf(buf + len, size - len, "every %" PRIu64, c->events.period);
	else
		snprintf(buf + len, size - len, "%" PRIu64 " Hz", c->freq ? c->freq : 99);
}

/*
 * The graph's title, as py-spy's names the run: what ran (the command
 * line, the first -p process's, or the host with -a), its pid, when
 * sampling began and what was sampled -- "./app -n 3 (pid 1234,
 * 2026-11-27 14:50:02 UTC; 99 Hz)".  Once the command runs: its pid.
 */
static void profile_title(const struct ds_capture *c, pid_t child, time_t start, char *buf,
			  size_t size)
{
	char how[256], when[64], path[64], cmd[4096] = "";
	struct tm tm;
	pid_t pid = child > 0 ? child : c->nr_pids ? c->pids[0] : 0;
	FILE *f;

	if (c->argv) {
		size_t len = 0;

		for (char *const *w = c->argv; *w && len < sizeof(cmd); w++)
			len += (size_t)snprintf(cmd + len, sizeof(cmd) - len, "%s%s",
						len ? " " : "", *w);
	} else if (c->nr_pids) {
		size_t len = 0;

		/* Its arguments, NUL-separated, as ps shows them. */
		snprintf(path, sizeof(path), "/proc/%d/cmdline", (int)pid);
		if ((f = fopen(path, "re"))) {
			len = fread(cmd, 1, sizeof(cmd) - 1, f);
			fclose(f);
		}
		while (len && !cmd[len - 1])
			len--;
		for (size_t i = 0; i < len; i++)
			cmd[i] = cmd[i] ? cmd[i] : ' ';
		cmd[len] = '\0';
		if (!len)
			target_name(c, cmd, sizeof(cmd));
	} else {
		char host[64] = "this host";

		gethostname(host, sizeof(host) - 1);
		host[sizeof(host) - 1] = '\0';
		snprintf(cmd, sizeof(cmd), "all CPUs of %s", host);
	}
	ds_cut_title(cmd);
	localtime_r(&start, &tm);
	strftime(when, sizeof(when), "%Y-%m-%d %H:%M:%S %Z", &tm);
	sampled(c, how, sizeof(how));
	if (!pid)
		snprintf(buf, size, "%s (%s; %s)", cmd, when, how);
	else if (c->nr_pids > 1)
		snprintf(buf, size, "%s (pid %d and %zu more, %s; %s)", cmd, (int)pid,
			 c->nr_pids - 1, when, how);
	else
		snprintf(buf, size, "%s (pid %d, %s; %s)", cmd, (int)pid, when, how);
}

static int run(const struct ds_capture *c, struct profile_args *a)
{
	struct live l = { .c = c, .status = isatty(STDERR_FILENO) };
	struct ds_capture_hooks hooks = {
		.record = copy, .started = started, .round = round_done, .ctx = &l,
	};
	struct pr_output_opts *o = &a->out.po;
	char name[256], path[512], title[600];
	const char *event;
	struct timespec wall;
	int fmt, err, werr;
	bool ok;

	/* Everything that can be wrong with the output is said before
	 * sampling starts. */
	fmt = ds_output_format(&a->out, PR_FORMAT_SVG, true);
	if (fmt < 0)
		return 2;
	target_name(c, name, sizeof(name));
	if (!a->out.path) {
		default_path(name, fmt, path, sizeof(path));
		a->out.path = path;
	}
	o->no_inline = a->names.no_inline;
	a->names.no_lines = !pr_output_shows_lines(fmt, o->fields);
	o->mode = c->wall ? PR_PROFILE_WALL : c->off_cpu ? PR_PROFILE_OFF_CPU : PR_PROFILE_CPU;
	/* Wall time needs each CPU sample's own period (cpu-clock's is ns). */
	o->period_is_ns = c->wall && !c->hw_cycles;
	o->off_cpu_min_ns = c->off_cpu_min_ns;
	/* Written at the end: what the title names is settled once the
	 * command runs, below. */
	title[0] = '\0';
	if (!o->title)
		o->title = title;
	event = c->hw_cycles ? "cycles" : "cpu-clock";
	ds_events_output(&c->events, c->system_wide, o);
	o->freq = c->events.nr ? 0 : c->freq ? c->freq : 99;
	o->event_name = c->events.nr ? c->events.names[0] : event;
	o->event_width = ds_events_width(&c->events, event);
	/* The status line shows where time went while sampling. */
	o->publish_times = true;
	if (fmt == PR_OUTPUT_PERF_SCRIPT)
		o->tp_formats = l.tp = ds_events_tp_formats(&c->events);
	l.out = ds_output_open(&a->out, fmt);
	if (!l.out) {
		pr_tp_formats_free(l.tp);
		return 1;
	}
	l.r = ds_capture_open(c);
	if (!l.r || open_live(&l, a, fmt)) {
		pr_output_discard(l.out);
		close_live(&l);
		return 1;
	}
	clock_gettime(CLOCK_REALTIME, &wall);
	if (o->title == title)
		profile_title(c, pr_reader_child(l.r), wall.tv_sec, title, sizeof(title));
	err = ds_capture_run(c, l.r, &hooks);
	if (err) {
		char buf[128];

		ds_err("sampling %s: %s", l.started ? "stopped" : "could not start",
		       pr_strerror(err, buf, sizeof(buf)));
	}
	if (ds_stop > 1)
		ds_err("interrupted again: writing what was unwound so far");
	/* Whatever was sampled is written, however the run ended; threads
	 * still off the CPU wait until sampling stopped. */
	werr = pr_session_finish(l.ses, hooks.end_ns);
	/* Output that failed (a reader that went away, a full disk) is said
	 * once, where the output closes. */
	if (werr && !pr_output_failed(l.out))
		ds_err("processing samples failed: %s", strerror(-werr));
	if (l.status && l.started)
		status_line(&l, true);
	if (l.started)
		summary(&l, &hooks, fmt, pr_output_nr_stacks(l.out));
	if (l.started && c->verbose)
		ds_session_print_cpu(l.ses, "capture", true);
	ds_first_named_print();
	/* Nothing sampled (the run failed before it began): no file. */
	ok = !(l.started ? pr_output_close(l.out, (uint64_t)wall.tv_sec * 1000000000u +
							  (uint64_t)wall.tv_nsec,
					   (uint64_t)((l.end - l.start) * 1e9))
			 : pr_output_discard(l.out));
	if (l.started && ok && strcmp(a->out.path, "-"))
		ds_output_wrote(fmt, a->out.path);
	close_live(&l);
	/* An empty profile is no failure (nor is it for perf): the run did
	 * what was asked, and the summary said why it is empty. */
	return ds_command_exit(&hooks, ok && !err && !werr ? 0 : 1);
}

static void usage(FILE *out)
{
	fprintf(out,
		"usage: dwarfsample [options] (-p PID[,PID...] | -a [-C LIST] | -- CMD [ARGS...])\n"
		"       dwarfsample record [options] (-p PID... | -a | -- CMD...) [-o FILE]\n"
		"                                    sample into a perf.data file\n"
		"       dwarfsample report [-i FILE] [options]\n"
		"                                    a perf.data file's stacks, or a profile\n"
		"       dwarfsample dump [options] (-p PID... | -a | -- CMD... | -i FILE)\n"
		"                                    every record, as text\n"
		"       dwarfsample stat [options] (-p PID... | -a | -- CMD...)\n"
		"                                    count events, as perf stat\n"
		"       dwarfsample agent [options] [-a | -p PID... | --exe NAME]\n"
		"                                    profile continuously, upload windows\n"
		"\n"
		"Sample the target's CPU use, unwind every sample's user stack with\n"
		"DWARF call-frame information (no frame pointers needed), name the\n"
		"frames (functions, inlined functions, source lines) and write a\n"
		"profile: by default an interactive SVG flame graph named after the\n"
		"process and the time, which any web browser opens.  Runs until -d\n"
		"ends it, Ctrl-C or SIGTERM, or the target exits; the profile is\n"
		"written in every case.\n"
		"\n%s%s%s"
		"%s"
		"  -h, --help               this help\n"
		"      --version            the version\n"
		"\n"
		"Run 'dwarfsample help record' (or report, dump, stat, agent; the same as\n"
		"'dwarfsample record --help') for those commands.\n",
		ds_capture_help, ds_offcpu_help, ds_output_help, ds_names_help);
}

static int profile_option(int opt, const char *arg, void *ctx)
{
	struct profile_args *a = ctx;
	int n = ds_output_option(&a->out, opt, arg);

	if (!n)
		n = ds_names_option(&a->names, opt, arg);
	return n > 0 ? 0 : -1;
}

void ds_live_usage(FILE *out)
{
	usage(out);
}

int ds_cmd_live(int argc, char **argv)
{
	struct profile_args *a = calloc(1, sizeof(*a));
	struct ds_capture *c = calloc(1, sizeof(*c));
	const struct ds_verb verb = {
		.name = "", .shortopts = DS_OUTPUT_SHORTOPTS, .longopts = ds_names_longopts,
		.more_longopts = ds_output_longopts, .usage = usage,
		.option = profile_option, .ctx = a,
	};
	int ret = 1;

	if (a && c && (ret = ds_parse_target(c, &verb, argc, argv)) < 0) {
		ds_capture_default_stack(c, DS_PROFILE_STACK_SIZE);
		ret = run(c, a);
	}
	free(c);
	free(a);
	return ret;
}
