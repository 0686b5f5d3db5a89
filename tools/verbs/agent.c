/* SPDX-License-Identifier: Apache-2.0 */
/*
 * `dwarfsample agent`: continuous profiling.  The live command's path —
 * the capture thread copies records into the session, whose worker
 * unwinds and names them in time order — counted into one profile that
 * is cut into windows (prupload.h's pr_windows, the session's sink);
 * each window's groups go to the uploader (pr_uploader), whose own
 * thread encodes and delivers them, so that neither sampling nor
 * unwinding ever waits on the network.  Runs until SIGTERM or SIGINT
 * (which flush the current window), -d, or the -p targets' exit.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "agent.h"
#include "cli.h"
#include "credentials.h"
#include "names.h"
#include "output.h"
#include "prunwind.h"
#include "prupload.h"

/* The sampling rate unless -F says; BENCHMARKS.md ("Agent cost") has what
 * it costs at 19, 49 and 99 Hz. */
#define AGENT_FREQ 49
#define AGENT_INTERVAL_S 15
/* What may wait for the worker before samples are dropped: the agent's
 * memory stays bounded even when unwinding falls behind. */
#define AGENT_MAX_QUEUED ((size_t)256 << 20)
#define AGENT_HEALTH_S 60
#define AGENT_FLUSH_S 10.0
#define AGENT_MAX_EXES 64
/* Files and what naming and unwinding built from them, kept across
 * windows (pr_model_set_cache()).  libdw's state behind the files is not
 * weighed, and the files' pages count in the resident size as read: at
 * 256M a 2-core host churning programs went past 280 MiB, and a tester's
 * run at 64M stayed at 96-101 MiB; this is meant to keep the peak under
 * the agent's budget of 150 MiB with a margin, a soak to show it is still
 * to be run (BENCHMARKS.md, "Agent soak"). */
#define AGENT_CACHE_BYTES ((uint64_t)32 << 20)
/* How long the files of a process that exited are kept, for the next
 * process of the same program. */
#define AGENT_GRACE_NS (UINT64_C(60) * 1000000000u)
/* How long a file is kept before it is read anew, giving back libdw's
 * state behind it, which grows with each new address named in it: the
 * files sampled all the time (libc, the interpreters) would otherwise
 * grow for as long as the agent runs. */
#define AGENT_RENEW_NS (UINT64_C(600) * 1000000000u)

enum {
	OPT_INTERVAL = 4000, OPT_SERVICE, OPT_GROUP_BY, OPT_TAG, OPT_OUT_DIR,
	OPT_OUT_DIR_SIZE, OPT_OUT_DIR_AGE, OPT_PYROSCOPE, OPT_OTLP, OPT_SPOOL_DIR,
	OPT_SPOOL_SIZE, OPT_CREDENTIALS, OPT_TIMEOUT, OPT_LOG_LEVEL, OPT_LOG_FILE,
	OPT_HEALTH, OPT_EXE, OPT_HOST, OPT_FLUSH_TIMEOUT, OPT_CACHE_SIZE, OPT_CGROUP,
};

static const struct option agent_longopts[] = {
	{ "interval", required_argument, NULL, OPT_INTERVAL },
	{ "service", required_argument, NULL, OPT_SERVICE },
	{ "group-by", required_argument, NULL, OPT_GROUP_BY },
	{ "tag", required_argument, NULL, OPT_TAG },
	{ "exe", required_argument, NULL, OPT_EXE },
	{ "cgroup", required_argument, NULL, OPT_CGROUP },
	{ "host-name", required_argument, NULL, OPT_HOST },
	{ "out-dir", required_argument, NULL, OPT_OUT_DIR },
	{ "out-dir-size", required_argument, NULL, OPT_OUT_DIR_SIZE },
	{ "out-dir-age", required_argument, NULL, OPT_OUT_DIR_AGE },
	{ "pyroscope", required_argument, NULL, OPT_PYROSCOPE },
	{ "otlp", required_argument, NULL, OPT_OTLP },
	{ "spool-dir", required_argument, NULL, OPT_SPOOL_DIR },
	{ "spool-size", required_argument, NULL, OPT_SPOOL_SIZE },
	{ "credentials-file", required_argument, NULL, OPT_CREDENTIALS },
	{ "timeout", required_argument, NULL, OPT_TIMEOUT },
	{ "flush-timeout", required_argument, NULL, OPT_FLUSH_TIMEOUT },
	{ "log-level", required_argument, NULL, OPT_LOG_LEVEL },
	{ "log-file", required_argument, NULL, OPT_LOG_FILE },
	{ "health-interval", required_argument, NULL, OPT_HEALTH },
	{ "cache-size", required_argument, NULL, OPT_CACHE_SIZE },
	{ NULL, 0, NULL, 0 },
};

struct agent_args {
	struct ds_names names;
	struct pr_uploader_opts up;
	const char *credentials_file;
	struct pr_windows_opts win;
	struct pr_label tags[DS_MAX_TAGS];
	const char *exes[AGENT_MAX_EXES];
	size_t nr_exes;
	char host[256];
	char out_dir[4096], spool_dir[4096], cgroup[4096], index_dir[4096];
	uint64_t health_ns, flush_ns, cache_bytes;
	int log_level;
	const char *log_file;
};

struct agent {
	const struct ds_capture *c;
	struct agent_args *a;
	struct pr_reader *r;
	struct pr_session *ses;
	struct pr_uploader *up;
	struct pr_windows *w;
	struct pr_profile_opts po;
	uint64_t id;
	uint32_t self;               /* the agent's pid */
	double start, last_health;
	bool started;
};

static volatile sig_atomic_t reopen_log;

static void on_hup(int sig)
{
	(void)sig;
	reopen_log = 1;
}

/* --log-file: stderr is the file, appended to; SIGHUP opens it again
 * (after logrotate moved it). */
static int open_log(const char *path)
{
	int fd = open(path, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0640);

	if (fd < 0) {
		ds_err("cannot open the log file %s: %s", path, strerror(errno));
		return -1;
	}
	dup2(fd, STDERR_FILENO);
	close(fd);
	return 0;
}

/* Which samples are profiled: not the agent's own (its cost is
 * measured, not profiled), and with --exe only those processes'. */
static bool wanted(const struct pr_record *rec, const char *comm, void *arg)
{
	const struct agent *ag = arg;

	if (rec->pid == ag->self)
		return false;
	if (!ag->a->nr_exes)
		return true;
	/* The kernel keeps 15 characters of the name a process was
	 * exec'd with. */
	for (size_t i = 0; comm && i < ag->a->nr_exes; i++)
		if (!strncmp(comm, ag->a->exes[i], 15))
			return true;
	return false;
}

static int copy(const struct pr_record *rec, void *arg)
{
	return pr_session_add(rec, ((struct agent *)arg)->ses);
}

static int started(void *arg)
{
	struct agent *ag = arg;
	const struct ds_capture *c = ag->c;

	ag->start = ag->last_health = ds_now();
	ag->started = true;
	/* Said once the events are on: a script may start its workload then. */
	ds_logf(PR_LOG_INFO, "sampling %s%s at %" PRIu64 " Hz, a window every %" PRIu64 " s",
		c->cgroup	 ? "the processes of cgroup "
		: c->system_wide ? "every CPU"
		: c->nr_tids	 ? "the threads given"
				 : "the processes given",
		c->cgroup ? c->cgroup : "", c->freq, ag->a->win.interval_ns / 1000000000u);
	return ds_synthesize(ag->c, ag->r, ag->id, pr_session_add, ag->ses);
}

static uint64_t rss_kib(void)
{
	char line[256];
	uint64_t kib = 0;
	FILE *f = fopen("/proc/self/status", "re");

	while (f && fgets(line, sizeof(line), f))
		if (sscanf(line, "VmRSS: %" SCNu64, &kib) == 1)
			break;
	if (f)
		fclose(f);
	return kib;
}

/* One line of how the agent is doing. */
static void health(struct agent *ag, enum pr_log_level level)
{
	struct pr_session_stats ss = { .sz = sizeof(ss) };
	struct pr_uploader_stats us = { .sz = sizeof(us) };
	uint64_t n, done;

	pr_session_stats(ag->ses, &ss);
	n = ss.samples;
	done = ss.complete;
	pr_uploader_stats(ag->up, &us);
	ds_logf(level, "health: %" PRIu64 " samples, %" PRIu64 " lost, %" PRIu64 " skipped, "
		"%.1f%% complete stacks, %" PRIu64 " MiB waiting to be unwound (at most %" PRIu64
		"); windows: %" PRIu64 " written, %" PRIu64 " sent, %" PRIu64
		" spooled, %" PRIu64 " dropped, %" PRIu64 " refused, %" PRIu64 " given up, %" PRIu64
		" unconfirmed, %" PRIu64 " lost, %zu queued; backend %.0f ms; %"
		PRIu64 " KiB uploaded; cache %" PRIu64 " files, %" PRIu64 " MiB, %" PRIu64
		" evicted, %" PRIu64 " renewed, %" PRIu64 " of containers not in their roots; "
		"holding %" PRIu64 " processes, %" PRIu64 " DSOs; RSS %" PRIu64 " MiB", n,
		pr_reader_lost(ag->r) + ss.dropped,
		ss.skipped, n ? 100.0 * (double)done / (double)n : 0.0, ss.queued_bytes >> 20,
		ss.queued_peak_bytes >> 20, us.written, us.sent,
		us.spooled, us.dropped, us.refused, us.given_up, us.unconfirmed, us.lost, us.queued,
		us.last_latency_s * 1e3,
		us.bytes_sent / 1024, ss.cache_files, ss.cache_bytes >> 20, ss.cache_evicted,
		ss.cache_renewed, ss.cache_foreign_missing, ss.cache_procs, ss.cache_dsos,
		rss_kib() / 1024);
}

/* The capture thread, after every drain. */
static int round_done(void *arg)
{
	struct agent *ag = arg;
	double now;

	pr_session_round(ag->ses);
	if (reopen_log) {
		reopen_log = 0;
		if (ag->a->log_file && !open_log(ag->a->log_file))
			ds_logf(PR_LOG_INFO, "log file reopened");
	}
	now = ds_now();
	if (ag->a->health_ns && now - ag->last_health >= (double)ag->a->health_ns / 1e9) {
		ag->last_health = now;
		health(ag, PR_LOG_INFO);
	}
	return 0;
}

/* The session, with the windows as its sink (made before sampling
 * starts: windows are in the events' clock from then). */
static int open_agent(struct agent *ag, uint64_t start, uint64_t start_wall)
{
	struct pr_cache_opts co = { .sz = sizeof(co), .max_bytes = ag->a->cache_bytes,
				    .grace_ns = AGENT_GRACE_NS, .check_processes = true,
				    .max_age_ns = AGENT_RENEW_NS };
	PR_OPTS(pr_model_opts, mo, .cache = &co);
	PR_OPTS(pr_session_opts, so, .log = ds_log, .workers = 1, .model = &mo,
		.release_memory = true, .max_bytes = AGENT_MAX_QUEUED, .hurry = &ds_stop,
		.stop = &ds_stop, .cut_stacks = true, .filter = wanted, .filter_ctx = ag);
	struct pr_sink sink;

	ag->ses = ds_names_session(&ag->a->names, ag->r, NULL, &so, true, NULL);
	if (!ag->ses) {
		ds_err("cannot start: %s", strerror(errno));
		return -1;
	}
	ag->w = pr_windows_new(&ag->a->win, &ag->po, start, start_wall);
	if (!ag->w) {
		ds_err("cannot start the windows: %s", strerror(errno));
		return -1;
	}
	pr_windows_sink(ag->w, &sink);
	if (pr_session_add_sink(ag->ses, &sink)) {
		ds_err("cannot start: out of memory");
		return -1;
	}
	pr_reader_ids(ag->r, &ag->id, 1);
	return 0;
}

static void close_agent(struct agent *ag)
{
	pr_session_free(ag->ses);
	pr_windows_free(ag->w);
	pr_reader_close(ag->r);
}

/* The profile every window is cut from. */
static void profile_opts(const struct ds_capture *c, struct pr_profile_opts *po)
{
	struct pr_output_opts out = { 0 };

	ds_events_output(&c->events, c->system_wide, &out);
	*po = (struct pr_profile_opts){
		.sz = sizeof(*po), .log = ds_log,
		.freq = c->events.nr ? 0 : c->freq,
		.mode = c->wall ? PR_PROFILE_WALL : c->off_cpu ? PR_PROFILE_OFF_CPU
							       : PR_PROFILE_CPU,
		.period_is_ns = c->wall && !c->hw_cycles,
		.off_cpu_min_ns = c->off_cpu_min_ns,
		.events = out.events, .nr_events = out.nr_events,
		.counters = out.counters, .nr_counters = out.nr_counters,
		.counters_per_cpu = out.counters_per_cpu,
	};
}

/*
 * The uploader's clock, run faster only for the agent's test
 * (tests/test-agent.py), which so lives through a backend's long outage
 * in a few seconds: a test hook (pr_uploader_opts.clock_rate), set from
 * the environment and said in the log, never by an option.  0, or -1
 * after saying what is wrong.
 */
#define TEST_CLOCK_ENV "DWARFSAMPLE_TEST_UPLOAD_CLOCK_RATE"

static int test_clock(struct pr_uploader_opts *o)
{
	const char *s = getenv(TEST_CLOCK_ENV);
	char *end;

	if (!s)
		return 0;
	o->clock_rate = strtod(s, &end);
	if (end == s || *end || !(o->clock_rate >= 1 && o->clock_rate <= 1000)) {
		ds_err("%s=%s: a test hook, the rate of the uploader's clock, from 1 to 1000; "
		       "unset it", TEST_CLOCK_ENV, s);
		return -1;
	}
	ds_logf(PR_LOG_WARN, "%s=%s: a test hook: the uploader's backoff runs %g times as fast "
		"as real time; unset it outside tests", TEST_CLOCK_ENV, s, o->clock_rate);
	return 0;
}

/* The uploader, with the credentials (wiped once it has its copies) and
 * the test hook; NULL after saying why, *usage set when the options are
 * what is wrong (a URL's scheme or credentials in it, the test hook). */
static struct pr_uploader *open_uploader(struct agent_args *a, bool *usage)
{
	struct ds_credentials *cr = calloc(1, sizeof(*cr));
	struct pr_uploader *up = NULL;

	if (!cr) {
		ds_err("out of memory");
		return NULL;
	}
	*usage = test_clock(&a->up) != 0;
	if (!*usage && !ds_credentials_read(cr, a->credentials_file, &a->up)) {
		up = pr_uploader_new(&a->up);
		*usage = !up && errno == EINVAL;
	}
	ds_credentials_clear(cr);
	free(cr);
	a->up.pyroscope_user = a->up.pyroscope_password = a->up.pyroscope_tenant = NULL;
	a->up.otlp_headers = NULL;
	a->up.nr_otlp_headers = 0;
	return up;
}

/* Each group's window, to the uploader, which counts a window it could
 * not take as lost: the windows must not count it again. */
static int ship(void *ctx, struct pr_window *w)
{
	pr_uploader_submit(ctx, w);
	return 0;
}

static int run(const struct ds_capture *c, struct agent_args *a)
{
	struct agent ag = { .c = c, .a = a, .self = (uint32_t)getpid() };
	struct ds_capture_hooks hooks = {
		.record = copy, .started = started, .round = round_done, .ctx = &ag,
	};
	struct pr_windows_stats ws = { .sz = sizeof(ws) };
	struct pr_uploader_stats us = { .sz = sizeof(us) };
	struct timespec wall;
	uint64_t start;
	int err, werr = 0, uerr;
	bool usage = false;

	profile_opts(c, &ag.po);
	a->win.freq = ag.po.freq;
	ag.up = open_uploader(a, &usage);
	if (!ag.up)
		return usage ? 2 : 1;
	a->win.ship = ship;
	a->win.ship_ctx = ag.up;
	ag.r = ds_capture_open(c);
	/* Windows are in the events' clock from now; the first synthesized
	 * records (time 0) open none. */
	start = ds_now_ns();
	clock_gettime(CLOCK_REALTIME, &wall);
	if (!ag.r || open_agent(&ag, start, (uint64_t)wall.tv_sec * 1000000000u +
					   (uint64_t)wall.tv_nsec)) {
		close_agent(&ag);
		pr_uploader_close(ag.up, 0, NULL);
		return 1;
	}
	err = ds_capture_run(c, ag.r, &hooks);
	if (err) {
		char buf[128];

		ds_err("sampling %s: %s", ag.started ? "stopped" : "could not start",
		       pr_strerror(err, buf, sizeof(buf)));
	}
	werr = pr_session_finish(ag.ses, hooks.end_ns);
	if (werr)
		ds_err("processing samples failed: %s", strerror(-werr));
	/* The window being filled goes too, however the run ended. */
	if (ag.started && (werr = pr_windows_finish(ag.w, hooks.end_ns)))
		ds_err("the last window was lost: %s", strerror(-werr));
	if (ag.started)
		health(&ag, PR_LOG_INFO);
	pr_windows_stats(ag.w, &ws);
	uerr = pr_uploader_close(ag.up, (double)a->flush_ns / 1e9, &us);
	ag.up = NULL;
	if (uerr)
		ds_err("some windows were neither delivered nor spooled");
	if (us.refused)
		ds_err("a backend refused %" PRIu64 " windows", us.refused);
	if (us.given_up)
		ds_err("%" PRIu64 " windows a backend kept failing on were given up", us.given_up);
	/* Lost: before the uploader (the windows') and in it. */
	ds_logf(PR_LOG_INFO, "stopped: %" PRIu64 " windows, %" PRIu64 " profiles, %" PRIu64
		" refused, %" PRIu64 " dropped from the spool, %" PRIu64 " lost, %" PRIu64
		" given up, %" PRIu64 " unconfirmed", ws.windows, ws.profiles, us.refused,
		us.dropped, ws.lost + us.lost, us.given_up, us.unconfirmed);
	close_agent(&ag);
	return err || werr || uerr || us.refused || us.given_up || ws.lost ? 1 : 0;
}

/* The capture options as every verb has them, but the target's: no
 * command (the agent samples what runs), -a by default; and -F's
 * default, the agent's. */
static void capture_help(FILE *out)
{
	static const char heading[] = "Target (exactly one):\n", freq[] = "(default 99)";
	const char *h = ds_capture_help, *cmd = strstr(h, "  -- CMD");
	const char *sampling = strstr(h, "Sampling:\n");
	const char *d = sampling ? strstr(sampling, freq) : NULL;

	if (strncmp(h, heading, strlen(heading)) || !cmd || !d) {
		fputs(ds_capture_help, out);
	} else {
		h += strlen(heading);
		fprintf(out, "Target (at most one; default -a):\n%.*s%.*s(default %d)%s",
			(int)(cmd - h), h, (int)(d - sampling), sampling, AGENT_FREQ,
			d + strlen(freq));
	}
	fputs(ds_offcpu_help, out);
}

static void usage(FILE *out)
{
	fprintf(out,
		"usage: dwarfsample agent [options] [-a | -p PID[,PID...] | -t TID[,TID...] |\n"
		"                         --exe NAME... | --cgroup PATH]\n"
		"\n"
		"Profile continuously: sample at a low rate, unwind and name every stack\n"
		"on this host, cut the profile into windows and ship each window, one\n"
		"profile per service, to a directory, Grafana Pyroscope and/or an\n"
		"OpenTelemetry profiles endpoint.  Runs until SIGTERM or SIGINT, which\n"
		"flush the current window; windows a backend cannot take are spooled to\n"
		"disk and delivered in order when it returns.\n"
		"\n");
	capture_help(out);
	fprintf(out,
		"The agent's targets:\n"
		"      --exe NAME           only processes whose command name (the first\n"
		"                           15 characters of the executable's) is NAME;\n"
		"                           may be repeated\n"
		"      --cgroup PATH        only the processes of this cgroup (v2) and the\n"
		"                           cgroups below it, as perf -G: its path in the\n"
		"                           hierarchy (system.slice/nginx.service, as\n"
		"                           /proc/PID/cgroup says) or a whole path\n"
		"Windows and groups:\n"
		"      --interval DURATION  a window every DURATION, whole seconds (default\n"
		"                           15s), aligned to the wall clock\n"
		"      --group-by KIND      one profile per service (default), process or\n"
		"                           host in each window\n"
		"      --service NAME       the service every process belongs to (default:\n"
		"                           its executable's name)\n"
		"      --tag KEY=VALUE      a label on every profile; may be repeated\n"
		"      --host-name NAME     host.name (default: the host's name)\n"
		"Sinks (any combination; without one, --out-dir):\n"
		"      --out-dir DIR        a gzipped pprof per window and group (default\n"
		"                           $STATE_DIRECTORY/profiles or\n"
		"                           /var/lib/dwarfsample/profiles)\n"
		"      --out-dir-size BYTES keep at most this much there (default 1G)\n"
		"      --out-dir-age DURATION\n"
		"                           and nothing older (default 7d)\n"
		"      --pyroscope URL      POST each window to URL/push.v1.PusherService/Push\n"
		"                           (Grafana Pyroscope 1.0 or later, its push API)\n"
		"      --otlp URL           POST each window to URL/v1development/profiles\n"
		"                           (OTLP profiles over HTTP, opentelemetry-proto\n"
		"                           v1.11.0; an OpenTelemetry Collector's receiver)\n"
		"      --spool-dir DIR      where windows wait for a backend (default\n"
		"                           $STATE_DIRECTORY/spool or /var/lib/dwarfsample/spool)\n"
		"      --spool-size BYTES   at most this much waits; the oldest go first\n"
		"                           (default 256M)\n"
		"      --credentials-file FILE\n"
		"                           KEY=VALUE lines, readable by its owner only:\n"
		"                           DWARFSAMPLE_PYROSCOPE_USER, _PASSWORD, _TENANT,\n"
		"                           DWARFSAMPLE_OTLP_HEADERS (else from the\n"
		"                           environment; never from the command line)\n"
		"      --timeout DURATION   to connect and send a request (default 30s); its\n"
		"                           answer is awaited 4 times as long, and one sent\n"
		"                           whole is never sent again (unconfirmed)\n"
		"      --flush-timeout DURATION\n"
		"                           at exit, how long to try delivering before\n"
		"                           spooling what is left (default 10s)\n"
		"Logging:\n"
		"      --log-level LEVEL    error, warn, info (default) or debug\n"
		"      --log-file FILE      append to FILE instead of stderr; SIGHUP reopens it\n"
		"      --health-interval DURATION\n"
		"                           a health line this often (default 60s; 0: never)\n"
		"Memory:\n"
		"      --cache-size BYTES   files read for unwinding and naming, and what is\n"
		"                           built from them, kept across windows; the least\n"
		"                           recently sampled go first, and any held for\n"
		"                           10 minutes is read anew (default 32M)\n"
		"\n%s"
		"  -h, --help               this help\n"
		"\n"
		"Exit status: 0 when stopped by a signal, -d or the targets' exit with every\n"
		"window delivered or spooled; 1 when sampling failed or a window was refused,\n"
		"given up or lost; 2 for a usage error.\n",
		ds_names_help);
}


/* The series labels the agent sets on a window itself (pyroscope.c,
 * windows.c). */
static const char *const reserved_labels[] = {
	"service_name", "pyroscope_spy", "host_name", "pid", "container_id", "pod_uid",
};

/* "KEY=VALUE", KEY a Prometheus label name: Pyroscope's labels are. */
static int parse_tag(struct agent_args *a, char *arg)
{
	char *eq = strchr(arg, '=');
	size_t n = a->win.nr_tags;
	bool ours;

	if (n >= DS_MAX_TAGS) {
		ds_err("too many --tag (at most %d)", DS_MAX_TAGS);
		return -1;
	}
	if (!eq || eq == arg || !eq[1] || strspn(arg, "abcdefghijklmnopqrstuvwxyz"
						 "ABCDEFGHIJKLMNOPQRSTUVWXYZ_0123456789") !=
						 (size_t)(eq - arg) || (arg[0] >= '0' && arg[0] <= '9')) {
		ds_err("invalid --tag '%s': expected KEY=VALUE, KEY letters, digits and _ "
		       "(not first a digit)", arg);
		return -1;
	}
	*eq = '\0';
	/* Pyroscope refuses a series with a label twice: these are the
	 * agent's own (and "__" starts Pyroscope's). */
	ours = false;
	for (size_t i = 0; i < sizeof(reserved_labels) / sizeof(*reserved_labels); i++)
		ours |= !strcmp(arg, reserved_labels[i]);
	if (ours || !strncmp(arg, "__", 2)) {
		ds_err("invalid --tag '%s=%s': %s; give the tag another name", arg, eq + 1,
		       ours ? "the agent sets that label itself"
			    : "labels starting with __ are Pyroscope's own");
		return -1;
	}
	for (size_t i = 0; i < n; i++)
		if (!strcmp(arg, a->tags[i].key)) {
			ds_err("--tag %s given twice: give each key once", arg);
			return -1;
		}
	a->tags[n] = (struct pr_label){ .key = arg, .value = eq + 1 };
	a->win.nr_tags++;
	return 0;
}

/* A duration, where "d" means days too. */
static int agent_option(int opt, const char *arg, void *ctx)
{
	struct agent_args *a = ctx;
	uint64_t v;

	if (ds_names_option(&a->names, opt, arg))
		return 0;
	switch (opt) {
	case OPT_INTERVAL:
		if (ds_parse_duration(arg, "--interval", &v))
			return -1;
		if (v < 1000000000u || v % 1000000000u) {
			ds_err("invalid --interval '%s': windows last whole seconds, 1s or more "
			       "(Pyroscope's times are seconds)", arg);
			return -1;
		}
		a->win.interval_ns = v;
		return 0;
	case OPT_SERVICE:
		a->win.service = arg;
		return 0;
	case OPT_GROUP_BY:
		if (!strcmp(arg, "service"))
			a->win.group_by = PR_GROUP_SERVICE;
		else if (!strcmp(arg, "process"))
			a->win.group_by = PR_GROUP_PROCESS;
		else if (!strcmp(arg, "host"))
			a->win.group_by = PR_GROUP_HOST;
		else {
			ds_err("invalid --group-by '%s': use service, process or host", arg);
			return -1;
		}
		return 0;
	case OPT_TAG:
		return parse_tag(a, (char *)arg);
	case OPT_EXE:
		if (a->nr_exes == AGENT_MAX_EXES) {
			ds_err("too many --exe (at most %d)", AGENT_MAX_EXES);
			return -1;
		}
		a->exes[a->nr_exes++] = arg;
		return 0;
	case OPT_HOST:
		snprintf(a->host, sizeof(a->host), "%s", arg);
		return 0;
	case OPT_OUT_DIR:
		a->up.out_dir = arg;
		return 0;
	case OPT_OUT_DIR_SIZE:
		return ds_parse_size(arg, "--out-dir-size", &a->up.out_dir_max_bytes);
	case OPT_OUT_DIR_AGE:
		if (ds_parse_duration(arg, "--out-dir-age", &v))
			return -1;
		a->up.out_dir_max_age_s = v / 1000000000u ? v / 1000000000u : 1;
		return 0;
	case OPT_PYROSCOPE:
		a->up.pyroscope_url = arg;
		return 0;
	case OPT_OTLP:
		a->up.otlp_url = arg;
		return 0;
	case OPT_SPOOL_DIR:
		a->up.spool_dir = arg;
		return 0;
	case OPT_SPOOL_SIZE:
		return ds_parse_size(arg, "--spool-size", &a->up.spool_max_bytes);
	case OPT_CREDENTIALS:
		a->credentials_file = arg;
		return 0;
	case OPT_TIMEOUT: {
		uint64_t ns;

		if (ds_parse_duration(arg, "--timeout", &ns))
			return -1;
		a->up.timeout_s = (double)ns / 1e9;
		return 0;
	}
	case OPT_CGROUP:
		/* As perf -G takes it: in the cgroup v2 hierarchy, or a path. */
		if (snprintf(a->cgroup, sizeof(a->cgroup), "%s", arg) >= (int)sizeof(a->cgroup)) {
			ds_err("--cgroup: the path is too long");
			return -1;
		}
		return 0;
	case OPT_CACHE_SIZE:
		return ds_parse_size(arg, "--cache-size", &a->cache_bytes);
	case OPT_FLUSH_TIMEOUT:
		return ds_parse_duration(arg, "--flush-timeout", &a->flush_ns);
	case OPT_LOG_LEVEL: {
		static const char *const levels[] = { "error", "warn", "info", "debug" };

		for (int i = 0; i < 4; i++)
			if (!strcmp(arg, levels[i])) {
				a->log_level = i;
				return 0;
			}
		ds_err("invalid --log-level '%s': use error, warn, info or debug", arg);
		return -1;
	}
	case OPT_LOG_FILE:
		a->log_file = arg;
		return 0;
	case OPT_HEALTH:
		if (!strcmp(arg, "0")) {
			a->health_ns = 0;
			return 0;
		}
		return ds_parse_duration(arg, "--health-interval", &a->health_ns);
	default:
		return -1;
	}
}

/* Under systemd, StateDirectory= says where state lives. */
static void state_path(char *buf, size_t len, const char *leaf)
{
	const char *state = getenv("STATE_DIRECTORY");
	char first[3072];

	/* It may list several, separated by colons: the first is ours. */
	snprintf(first, sizeof(first), "%s", state && state[0] ? state : "/var/lib/dwarfsample");
	first[strcspn(first, ":")] = '\0';
	snprintf(buf, len, "%s/%s", first, leaf);
}

/* Defaults, and what the options say together. */
static int settle(struct ds_capture *c, struct agent_args *a, int argc)
{
	if (argc > 0) {
		ds_err("the agent samples running processes: give -a (the default), -p PID or "
		       "--exe NAME, not a command");
		return -1;
	}
	if (a->nr_exes && (c->nr_pids || c->nr_tids)) {
		ds_err("--exe picks processes among all of them: give it without -p or -t");
		return -1;
	}
	/* It runs for days over processes that come and go: one activation
	 * at its start would name some of them, for a while. */
	if (c->python) {
		ds_err("--python is for one run: start the services the agent profiles "
		       "with PYTHONPERFSUPPORT=1 (CPython 3.12 and later), or run "
		       "'dwarfsample --python -p PID' once on each");
		return -1;
	}
	/* Its windows are cut on the one worker's clock (the pipeline's
	 * tick); at its rates one worker keeps up with a large host. */
	if (a->names.jobs > 1) {
		ds_err("the agent unwinds on one worker: leave out --jobs");
		return -1;
	}
	if (a->cgroup[0] && (c->nr_pids || c->nr_tids)) {
		ds_err("--cgroup samples every process of a cgroup: give it without -p or -t");
		return -1;
	}
	if (a->cgroup[0])
		c->cgroup = a->cgroup;
	if (!c->nr_pids && !c->nr_tids)
		c->system_wide = true;
	if (!c->freq && !c->events.nr && !c->off_cpu)
		c->freq = AGENT_FREQ;
	if (!a->host[0] && gethostname(a->host, sizeof(a->host) - 1))
		snprintf(a->host, sizeof(a->host), "unknown");
	a->win.host = a->host;
	a->win.tags = a->tags;
	if (!a->up.out_dir && !a->up.pyroscope_url && !a->up.otlp_url) {
		state_path(a->out_dir, sizeof(a->out_dir), "profiles");
		a->up.out_dir = a->out_dir;
	}
	if (!a->up.spool_dir) {
		state_path(a->spool_dir, sizeof(a->spool_dir), "spool");
		a->up.spool_dir = a->spool_dir;
	}
	if (!a->names.index_cache) {
		state_path(a->index_dir, sizeof(a->index_dir), "index");
		a->names.index_cache = a->index_dir;
	}
	/* Beside libdw's lookups, under the churn of bench/agent-soak.sh
	 * on a busy host for 85 minutes: anonymous memory 68 MiB (median)
	 * against 115, RSS 121 against 176, a third of the CPU (BENCHMARKS.md,
	 * "Agent soak"). */
	a->names.index_always = true;
	return ds_capture_finish(c, 0, NULL);
}

int ds_cmd_agent(int argc, char **argv)
{
	struct agent_args *a = calloc(1, sizeof(*a));
	struct ds_capture *c = calloc(1, sizeof(*c));
	const struct ds_verb verb = {
		.name = "agent", .longopts = agent_longopts, .more_longopts = ds_names_longopts,
		.usage = usage, .option = agent_option, .ctx = a,
	};
	struct sigaction sa = { .sa_handler = on_hup };
	int first, ret = 2;

	if (!a || !c) {
		ds_err("out of memory");
		goto out;
	}
	a->up = (struct pr_uploader_opts){ .sz = sizeof(a->up), .log = ds_log };
	a->win = (struct pr_windows_opts){ .sz = sizeof(a->win), .log = ds_log };
	a->win.interval_ns = AGENT_INTERVAL_S * UINT64_C(1000000000);
	a->health_ns = AGENT_HEALTH_S * UINT64_C(1000000000);
	a->cache_bytes = AGENT_CACHE_BYTES;
	a->flush_ns = (uint64_t)(AGENT_FLUSH_S * 1e9);
	a->log_level = PR_LOG_INFO;
	first = ds_parse(c, &verb, argc, argv);
	if (first < 0) {
		ret = first == -2 ? 0 : 2;
		goto out;
	}
	if (settle(c, a, argc - first))
		goto out;
	if (a->log_file && open_log(a->log_file))
		goto out;
	/* -v raises the level as it does for the other verbs. */
	ds_log_setup(a->log_level > PR_LOG_WARN + c->verbose ? a->log_level
							     : PR_LOG_WARN + c->verbose, true);
	ds_capture_signals();
	sigaction(SIGHUP, &sa, NULL);
	ds_capture_default_stack(c, DS_PROFILE_STACK_SIZE);
	ret = run(c, a);
out:
	free(c);
	free(a);
	return ret;
}
