/* SPDX-License-Identifier: Apache-2.0 */
/*
 * `dwarfsample -p PID` (and -a, and -- CMD): sample, unwind and name
 * stacks as they arrive, count them, and write a profile when the run
 * ends — by -d, Ctrl-C, SIGTERM, or the target's exit.  No raw stack is
 * kept: the capture thread copies records out of the rings (pipeline.c),
 * a worker unwinds and names them in time order, and only distinct stacks
 * stay in memory.
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
#include "quality.h"
#include "pipeline.h"
#include "live.h"
#include "names.h"
#include "prunwind.h"

/* What may wait for the worker before samples are dropped: at 1 kHz on
 * 64 CPUs with 32 KiB stacks, 8 s of samples. */
#define MAX_QUEUED ((size_t)2 << 30)
struct profile_args {
	struct ds_output_opts out;
	struct ds_names names;
};

struct session;

/* One worker's share: its own replica of the process model, unwinder,
 * symbolizer, profile and quality counts (pipeline.h says which records
 * it is handed).  Counters the status line reads are on cache lines of
 * their own. */
struct shard {
	struct session *s;
	struct pr_model *model;
	struct pr_unwinder *u;
	struct pr_symbolizer *sym;
	struct ds_sink *sink;        /* worker 0's is the session's */
	struct ds_quality *quality;  /* the summary's short form of it */
	alignas(64) _Atomic uint64_t samples, complete;
	_Atomic uint64_t cpu_ns, off_cpu_ns, preempted_ns;
};

struct session {
	const struct ds_capture *c;
	struct pr_reader *r;
	struct shard *shards;
	size_t nr_shards;
	struct ds_pipeline *pl;
	struct pr_sym_pool *pool;    /* the workers' names, with 2 or more */
	uint64_t id;
	int switch_event;            /* the off-CPU event's index, or -1 */
	double start, end, last_status;
	bool started;                /* sampling began */
	bool status;                 /* a terminal: show the status line */
};

/* For the status line: where time went, as the worker last saw it. */
static void publish_times(struct shard *sh)
{
	struct pr_profile_times t = { .sz = sizeof(t) };

	if (ds_sink_times(sh->sink, 0, &t))
		return;
	atomic_store_explicit(&sh->cpu_ns, t.cpu_ns, memory_order_relaxed);
	atomic_store_explicit(&sh->off_cpu_ns, t.off_cpu_ns[PR_WAIT_BLOCKED] +
			      t.off_cpu_ns[PR_WAIT_PREEMPTED], memory_order_relaxed);
	atomic_store_explicit(&sh->preempted_ns, t.off_cpu_ns[PR_WAIT_PREEMPTED],
			      memory_order_relaxed);
}

/* The index of the sample's event among those -e named (0 without). */
static size_t sample_event(const struct session *s, const struct pr_record *rec)
{
	int idx = s->c->events.nr > 1 ? pr_reader_event_of(s->r, rec) : 0;

	return idx < 0 ? 0 : (size_t)idx;
}

/* A worker: every record of its share, in time order. */
static int process(const struct pr_record *rec, bool own, void *arg)
{
	struct shard *sh = arg;
	struct session *s = sh->s;
	struct pr_stack st;
	bool cut_short;
	int err;

	/* Samples too: one in the image exec loaded retires the old one. */
	err = pr_model_apply(sh->model, rec);
	if (err)
		return err;
	if (rec->type != PR_RECORD_SAMPLE) {
		/* Switches and exits end a thread's waits: its worker's. */
		if (s->switch_event < 0 || !own)
			return 0;
		err = ds_sink_record(sh->sink, rec);
		if (rec->type == PR_RECORD_SWITCH || rec->type == PR_RECORD_SWITCH_CPU_WIDE)
			publish_times(sh);
		return err;
	}
	if (pr_unwinder_unwind(sh->u, rec, &st))
		return 0;
	cut_short = ds_pipeline_stack_used(s->pl, rec, &st, pr_unwinder_stack_used(sh->u));
	if (s->switch_event >= 0 && pr_reader_event_of(s->r, rec) == s->switch_event)
		err = ds_sink_switch(sh->sink, rec, &st, sh->sym, pr_model_comm(sh->model, rec->tid),
				     pr_model_comm(sh->model, rec->pid));
	else
		err = ds_sink_sample_event(sh->sink, sample_event(s, rec), rec, &st, sh->sym,
					   pr_model_comm(sh->model, rec->tid),
					   pr_model_comm(sh->model, rec->pid), NULL);
	if (!err && sh->quality && (s->switch_event < 0 ||
				    pr_reader_event_of(s->r, rec) != s->switch_event))
		err = ds_quality_add(sh->quality, &st, sh->sym, rec->pid,
				     pr_model_comm(sh->model, rec->pid), cut_short);
	if (s->switch_event >= 0)
		publish_times(sh);
	atomic_store_explicit(&sh->samples, atomic_load_explicit(&sh->samples,
								 memory_order_relaxed) + 1,
			      memory_order_relaxed);
	if (st.end == PR_END_OUTERMOST)
		atomic_store_explicit(&sh->complete,
				      atomic_load_explicit(&sh->complete, memory_order_relaxed) + 1,
				      memory_order_relaxed);
	/* Nothing more can be written: stop sampling too. */
	if (err)
		ds_stop = 1;
	return err;
}

/* The sum over the workers of one of their status counters. */
static uint64_t sum_of(const struct session *s, size_t offset)
{
	uint64_t n = 0;

	for (size_t i = 0; i < s->nr_shards; i++)
		n += atomic_load_explicit((const _Atomic uint64_t *)((const char *)&s->shards[i] +
								      offset),
					  memory_order_relaxed);
	return n;
}

#define SUM(s, field) sum_of(s, offsetof(struct shard, field))

/* The capture thread: every record, copied for the worker. */
static int copy(const struct pr_record *rec, void *arg)
{
	return ds_pipeline_copy(rec, ((struct session *)arg)->pl);
}

static int started(void *arg)
{
	struct session *s = arg;

	s->start = s->end = ds_now();
	s->last_status = s->start;
	s->started = true;
	return ds_synthesize(s->c, s->r, s->id, ds_pipeline_copy, s->pl);
}

static uint64_t lost_samples(struct session *s)
{
	struct ds_pipeline_counts pc;

	ds_pipeline_counts(s->pl, &pc);
	return pr_reader_lost(s->r) + pc.dropped;
}

static void status_line(struct session *s, bool final)
{
	uint64_t n = SUM(s, samples), done = SUM(s, complete);
	uint64_t lost = lost_samples(s);

	fprintf(stderr, "\r\033[K[%6.1f s] %" PRIu64 " samples, %" PRIu64 " lost, %.1f%% "
		"complete stacks", (final ? s->end : ds_now()) - s->start, n, lost,
		n ? 100.0 * (double)done / (double)n : 0.0);
	if (s->switch_event >= 0) {
		uint64_t off = SUM(s, off_cpu_ns), pre = SUM(s, preempted_ns);
		char a[32], b[32];

		if (s->c->wall)
			fprintf(stderr, "; on-CPU %s", ds_duration(SUM(s, cpu_ns), a, sizeof(a)));
		fprintf(stderr, "; off-CPU %s (%.0f%% preempted)", ds_duration(off, b, sizeof(b)),
			off ? 100.0 * (double)pre / (double)off : 0.0);
	}
	fputs(final ? "\n" : "", stderr);
}

/* After every drain: hand the batch over; on a terminal, the status
 * line about once a second. */
static int round_done(void *arg)
{
	struct session *s = arg;
	double now;

	ds_pipeline_flush(s->pl);
	/* The last drain ends the profile's time (not reaping a command, nor
	 * the worker catching up). */
	s->end = now = ds_now();
	if (!s->status || now - s->last_status < 1.0)
		return 0;
	s->last_status = now;
	status_line(s, false);
	return 0;
}

static void summary(struct session *s, int fmt, size_t stacks)
{
	struct pr_unwind_stats st = { .sz = sizeof(st) };
	struct ds_pipeline_counts pc;
	uint64_t lost = lost_samples(s), total;

	for (size_t i = 0; i < s->nr_shards; i++)
		ds_unwind_stats_add(&st, s->shards[i].u);
	total = st.samples + lost;
	fprintf(stderr, "dwarfsample: %" PRIu64 " samples in %.1f s, %" PRIu64 " lost "
		"(%.2f%%)", st.samples, s->end - s->start, lost,
		total ? 100.0 * (double)lost / (double)total : 0.0);
	if (fmt != DS_FORMAT_PERF_SCRIPT)
		fprintf(stderr, ", %zu distinct stacks", stacks);
	fputc('\n', stderr);
	if (st.samples) {
		fputs("dwarfsample: ", stderr);
		ds_stack_ends(&st);
		ds_pipeline_counts(s->pl, &pc);
		/* Those the capture thread cut short are not the kernel's copy's
		 * doing: the table below says so (some were joined, or ended
		 * otherwise: not all of them are among the truncated). */
		if (st.ends[PR_END_TRUNCATED] > pc.cut_short &&
		    (st.ends[PR_END_TRUNCATED] - pc.cut_short) * 20 > st.samples)
			fputs("dwarfsample: more than 5% of stacks were cut short: a larger "
			      "--stack-size copies more of each\n", stderr);
		/* Where, and what would help: what reaches 1 % of the
		 * samples or frames ('report --quality' on a recording has
		 * all of it). */
		ds_quality_print(s->shards[0].quality, stderr, "dwarfsample: ", 3, 10);
	}
	if (lost)
		fprintf(stderr, "dwarfsample: to lose fewer samples, %s\n",
			ds_lost_hint(s->c));
	if (s->switch_event >= 0)
		ds_sink_print_times(s->shards[0].sink);
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
	} else if (c->nr_pids) {
		snprintf(buf, len, "pid%d", c->pids[0]);
		snprintf(path, sizeof(path), "/proc/%d/comm", c->pids[0]);
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
	snprintf(buf, len, "%s-%s%s", name, stamp,
		 fmt == DS_FORMAT_PERF_SCRIPT ? ".perf.txt"
					      : pr_profile_format_ext((enum pr_profile_format)fmt));
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

	if (fmt == DS_FORMAT_PERF_SCRIPT)
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

static int open_shard(struct session *s, struct shard *sh, const struct profile_args *a,
		      int fmt, uint64_t freq)
{
	sh->s = s;
	if (ds_names_open_live(&a->names, s->pool, &sh->model, &sh->u, &sh->sym) ||
	    !(sh->quality = ds_quality_new(s->c->stack_size, a->names.max_depth)))
		return -1;
	if (sh != s->shards && !(sh->sink = ds_sink_part(&a->out, fmt, freq)))
		return -1;
	return 0;
}

static int open_session(struct session *s, const struct profile_args *a, int fmt,
			uint64_t freq, struct ds_sink *sink)
{
	size_t n = nr_workers(s->c, a, fmt);
	void *ctxs[DS_MAX_JOBS];

	s->shards = aligned_alloc(64, n * sizeof(*s->shards));
	if (!s->shards) {
		ds_err("cannot start: %s", strerror(errno));
		return -1;
	}
	memset(s->shards, 0, n * sizeof(*s->shards));
	s->shards[0].sink = sink;
	s->nr_shards = n;
	/* The workers name the same files: each address once among them
	 * (without the memory for it, each names them all). */
	if (n > 1)
		s->pool = pr_sym_pool_new();
	for (size_t i = 0; i < n; i++) {
		if (open_shard(s, &s->shards[i], a, fmt, freq)) {
			ds_err("cannot start: %s", strerror(errno));
			return -1;
		}
		ctxs[i] = &s->shards[i];
	}
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
	s->pl = ds_pipeline_new(pr_reader_attr(s->r), n, process, NULL, ctxs, MAX_QUEUED,
				&ds_stop);
	if (!s->pl) {
		ds_err("cannot start: %s", strerror(errno));
		return -1;
	}
	if (s->c->verbose)
		ds_logf(PR_LOG_INFO, "unwinding on %zu worker%s", n, n == 1 ? "" : "s");
	pr_reader_ids(s->r, &s->id, 1);
	s->switch_event = ds_switch_event(s->r);
	return 0;
}

/* Once the workers are done: their shares into worker 0's sink and
 * quality counts (their models stay until close_session(): the counts
 * point into them). */
static int merge_shards(struct session *s)
{
	int err = 0;

	for (size_t i = 1; i < s->nr_shards; i++) {
		struct shard *sh = &s->shards[i];

		err = ds_sink_merge(err ? NULL : s->shards[0].sink, sh->sink);
		sh->sink = NULL;
		if (!err && ds_quality_merge(s->shards[0].quality, sh->quality))
			err = -ENOMEM;
	}
	return err;
}

static void close_session(struct session *s)
{
	ds_pipeline_free(s->pl);
	for (size_t i = 0; s->shards && i < s->nr_shards; i++) {
		struct shard *sh = &s->shards[i];

		ds_quality_free(sh->quality);
		pr_symbolizer_free(sh->sym);
		pr_unwinder_free(sh->u);
		pr_model_free(sh->model);
		if (i)
			ds_sink_merge(NULL, sh->sink);
	}
	free(s->shards);
	/* After every symbolizer that took from it. */
	pr_sym_pool_free(s->pool);
	pr_reader_close(s->r);
}

/* "NAME (dwarfsample, page-faults, context-switches, every 10)". */
static void events_title(const struct ds_capture *c, const char *name, char *buf, size_t size)
{
	size_t len = (size_t)snprintf(buf, size, "%s (dwarfsample", name);

	for (size_t i = 0; i < c->events.nr && len < size; i++)
		len += (size_t)snprintf(buf + len, size - len, ", %s", c->events.names[i]);
	if (len >= size)
		return;
	if (c->events.period)
		snprintf(buf + len, size - len, ", every %" PRIu64 ")", c->events.period);
	else if (c->freq)
		snprintf(buf + len, size - len, ", %" PRIu64 " Hz)", c->freq);
	else
		snprintf(buf + len, size - len, ")");
}

static int run(const struct ds_capture *c, struct profile_args *a)
{
	struct session s = { .c = c, .status = isatty(STDERR_FILENO), .switch_event = -1 };
	struct ds_capture_hooks hooks = {
		.record = copy, .started = started, .round = round_done, .ctx = &s,
	};
	char name[256], path[512], title[600];
	struct ds_sink *sink;
	const char *event;
	struct timespec wall;
	uint64_t freq;
	int fmt, err, werr;

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
	a->out.no_inline = a->names.no_inline;
	a->names.no_lines = !ds_output_shows_lines(&a->out, fmt);
	a->out.mode = c->wall ? PR_PROFILE_WALL : c->off_cpu ? PR_PROFILE_OFF_CPU
							     : PR_PROFILE_CPU;
	/* Wall time needs each CPU sample's own period (cpu-clock's is ns). */
	a->out.period_is_ns = c->wall && !c->hw_cycles;
	a->out.off_cpu_min_ns = c->off_cpu_min_ns;
	if (!a->out.title && a->out.mode == PR_PROFILE_OFF_CPU)
		snprintf(title, sizeof(title), "%s (dwarfsample, off-CPU time)", name);
	else if (!a->out.title && c->events.nr)
		events_title(c, name, title, sizeof(title));
	else if (!a->out.title)
		snprintf(title, sizeof(title), "%s (dwarfsample, %s%" PRIu64 " Hz)", name,
			 c->wall ? "wall-clock time, " : "", c->freq ? c->freq : 99);
	if (!a->out.title)
		a->out.title = title;
	event = c->hw_cycles ? "cycles" : "cpu-clock";
	ds_events_output(&c->events, c->system_wide, &a->out);
	freq = c->events.nr ? 0 : c->freq ? c->freq : 99;
	sink = ds_sink_open(&a->out, fmt, a->out.path, freq,
			    c->events.nr ? c->events.names[0] : event,
			    ds_events_width(&c->events, event));
	if (!sink)
		return 1;
	s.r = ds_capture_open(c);
	if (!s.r || open_session(&s, a, fmt, freq, sink)) {
		ds_sink_close(sink, 0, 0, true);
		close_session(&s);
		return 1;
	}
	clock_gettime(CLOCK_REALTIME, &wall);
	err = ds_capture_run(c, s.r, &hooks);
	if (err) {
		char buf[128];

		ds_err("sampling %s: %s", s.started ? "stopped" : "could not start",
		       pr_strerror(err, buf, sizeof(buf)));
	}
	if (ds_stop > 1)
		ds_err("interrupted again: writing what was unwound so far");
	/* Whatever was sampled is written, however the run ended. */
	werr = ds_pipeline_finish(s.pl);
	/* Output that failed (a reader that went away, a full disk) is said
	 * once, where the output closes. */
	if (werr && !ds_sink_failed(sink))
		ds_err("processing samples failed: %s", strerror(-werr));
	/* Threads still off the CPU wait until sampling stopped. */
	for (size_t i = 0; s.started && s.switch_event >= 0 && !werr && i < s.nr_shards; i++) {
		werr = ds_sink_end(s.shards[i].sink, hooks.end_ns);
		if (werr)
			ds_err("ending the waits still open failed: %s", strerror(-werr));
		publish_times(&s.shards[i]);
	}
	if (!werr && (werr = merge_shards(&s)))
		ds_err("merging the workers' profiles failed: %s", strerror(-werr));
	if (s.status && s.started)
		status_line(&s, true);
	if (s.started)
		summary(&s, fmt, ds_sink_stacks(sink));
	if (s.started && c->verbose) {
		struct ds_pipeline_cpu cpu;
		struct ds_pipeline_counts pc;

		ds_pipeline_cpu(s.pl, &cpu);
		ds_pipeline_cpu_print(&cpu, "capture", s.nr_shards);
		ds_pipeline_counts(s.pl, &pc);
		ds_pipeline_cut_print(&pc);
		ds_pool_print(s.pool);
	}
	{
		bool ok = !ds_sink_close(sink, (uint64_t)wall.tv_sec * 1000000000u +
					       (uint64_t)wall.tv_nsec,
					 (uint64_t)((s.end - s.start) * 1e9), !s.started);

		if (s.started && ok && strcmp(a->out.path, "-"))
			fprintf(stderr, "dwarfsample: wrote %s (%s); open it with %s\n",
				a->out.path, ds_format_name(fmt), ds_format_hint(fmt));
		close_session(&s);
		return ok && !err && !werr ? 0 : 1;
	}
}

static void usage(FILE *out)
{
	fprintf(out,
		"usage: dwarfsample [options] (-p PID[,PID...] | -a [-C LIST] | -- CMD [ARGS...])\n"
		"       dwarfsample record [options] (-p PID... | -a | -- CMD...) [-o FILE]\n"
		"                                    sample into a perf.data file\n"
		"       dwarfsample report -i FILE [options]\n"
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
		"\n%s%s"
		"%s"
		"  -h, --help               this help\n"
		"      --version            the version\n"
		"\n"
		"Run 'dwarfsample record --help' (or report, dump, stat, agent) for those\n"
		"commands.\n",
		ds_capture_help, ds_output_help, ds_names_help);
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
		if (!c->stack_size)
			c->stack_size = DS_PROFILE_STACK_SIZE;
		ret = run(c, a);
	}
	free(c);
	free(a);
	return ret;
}
