/* SPDX-License-Identifier: Apache-2.0 */
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

enum {
	OPT_STACK_SIZE = 1000,
	OPT_RING_PAGES,
	OPT_HW_CYCLES,
	OPT_OFF_CPU,
	OPT_WALL,
	OPT_OFF_CPU_MIN,
	OPT_OFF_CPU_STACK_SIZE,
	OPT_READ_GROUP,
};

#define CAPTURE_SHORTOPTS "p:aC:F:d:kve:c:"
/* The capture options a counting verb takes: its target and how long. */
#define TARGET_SHORTOPTS "p:aC:d:v"

static const struct option capture_longopts[] = {
	{ "pid", required_argument, NULL, 'p' },
	{ "all-cpus", no_argument, NULL, 'a' },
	{ "cpu", required_argument, NULL, 'C' },
	{ "freq", required_argument, NULL, 'F' },
	{ "duration", required_argument, NULL, 'd' },
	{ "kernel", no_argument, NULL, 'k' },
	{ "verbose", no_argument, NULL, 'v' },
	{ "stack-size", required_argument, NULL, OPT_STACK_SIZE },
	{ "ring-pages", required_argument, NULL, OPT_RING_PAGES },
	{ "hw-cycles", no_argument, NULL, OPT_HW_CYCLES },
	{ "off-cpu", no_argument, NULL, OPT_OFF_CPU },
	{ "wall", no_argument, NULL, OPT_WALL },
	{ "off-cpu-min", required_argument, NULL, OPT_OFF_CPU_MIN },
	{ "off-cpu-stack-size", required_argument, NULL, OPT_OFF_CPU_STACK_SIZE },
	{ "event", required_argument, NULL, 'e' },
	{ "count", required_argument, NULL, 'c' },
	{ "read-group", no_argument, NULL, OPT_READ_GROUP },
};

const char ds_capture_help[] =
	"Target (exactly one):\n"
	"  -p, --pid PID[,PID...]   sample these processes, all their threads and\n"
	"                           the threads and children they create\n"
	"  -a, --all-cpus           sample every task on every online CPU\n"
	"  -C, --cpu LIST           with -a: only these CPUs (e.g. 0-3,8)\n"
	"  -- CMD [ARGS...]         run CMD and sample it from its first instruction\n"
	"Sampling:\n"
	"  -F, --freq HZ            samples per second per CPU (default 99)\n"
	"  -d, --duration SECONDS   stop after this long (default: until Ctrl-C or\n"
	"                           the target exits)\n"
	"      --stack-size BYTES   user stack bytes copied per sample, a multiple\n"
	"                           of 8 up to 65528 (default 32768 when\n"
	"                           profiling; 8192, perf's, for record and dump)\n"
	"      --ring-pages N       ring buffer pages per CPU, a power of two\n"
	"                           (default 512, up to 2048 for larger\n"
	"                           --stack-size: about 250 samples)\n"
	"      --hw-cycles          sample hardware cycles when the CPU has a PMU\n"
	"                           (falls back to cpu-clock otherwise)\n"
	"  -e, --event LIST         sample these events instead, in perf's spelling:\n"
	"                           page-faults, context-switches, cycles,\n"
	"                           cache-misses, sched:sched_switch, with :u or :k\n"
	"                           (several in one run; each sample keeps its event)\n"
	"  -c, --count PERIOD       sample every PERIOD events instead of by frequency\n"
	"                           (tracepoints default to every one)\n"
	"      --read-group         read the other events of -e with every sample of\n"
	"                           the first: counts per stack (e.g. -e\n"
	"                           cpu-clock,page-faults,context-switches)\n"
	"  -k, --kernel             record kernel call chains too\n"
	"  -v, --verbose            more diagnostics\n"
	"Off-CPU time (needs kernel.perf_event_paranoid <= 1, CAP_PERFMON or root):\n"
	"      --off-cpu            profile time spent off the CPU instead of on it:\n"
	"                           the stack at every switch out of a sampled\n"
	"                           thread, weighted by the nanoseconds until it\n"
	"                           runs again (blocked and preempted kept apart)\n"
	"      --wall               on-CPU samples and off-CPU time in one profile\n"
	"                           in nanoseconds: each thread's wall time\n"
	"      --off-cpu-min DURATION\n"
	"                           drop waits shorter than this, with a unit:\n"
	"                           ns, us, ms or s, or m, h, d (e.g. 50us, 1ms)\n"
	"      --off-cpu-stack-size BYTES\n"
	"                           user stack bytes copied per switch out, a\n"
	"                           multiple of 8 up to 65528 (default 8192)\n";

static int log_verbosity = PR_LOG_WARN;

void ds_debuginfod_env(bool off, const char *timeout, const char *cache)
{
	/* libdw's debuginfod client takes its settings from the
	 * environment, and asks only when DEBUGINFOD_URLS names servers. */
	if (off) {
		unsetenv("DEBUGINFOD_URLS");
		return;
	}
	if (timeout)
		setenv("DEBUGINFOD_TIMEOUT", timeout, 1);
	else if (!getenv("DEBUGINFOD_TIMEOUT"))
		setenv("DEBUGINFOD_TIMEOUT", "30", 1);
	if (cache)
		setenv("DEBUGINFOD_CACHE_PATH", cache, 1);
}

const char *ds_cache_dir(void)
{
	static char path[4096];
	const char *xdg = getenv("XDG_CACHE_HOME"), *home = getenv("HOME");
	int n;

	if (path[0])
		return path;
	if (xdg && xdg[0] == '/')
		n = snprintf(path, sizeof(path), "%s/dwarfsample", xdg);
	else if (home && home[0] == '/')
		n = snprintf(path, sizeof(path), "%s/.cache/dwarfsample", home);
	else
		return NULL;
	if (n < 0 || (size_t)n >= sizeof(path)) {
		path[0] = '\0';
		return NULL;
	}
	/* Its parent may not exist yet either (a fresh home). */
	if (ds_mkdirs(path, 0755)) {
		path[0] = '\0';
		return NULL;
	}
	return path;
}

int ds_mkdirs(const char *dir, mode_t mode)
{
	char path[4096];

	if (snprintf(path, sizeof(path), "%s", dir) >= (int)sizeof(path))
		return -ENAMETOOLONG;
	for (char *p = path + 1; *p; p++) {
		if (*p != '/')
			continue;
		*p = '\0';
		if (mkdir(path, mode) && errno != EEXIST)
			return -errno;
		*p = '/';
	}
	if (mkdir(path, mode) && errno != EEXIST)
		return -errno;
	return 0;
}

void ds_verbose(int more)
{
	log_verbosity = PR_LOG_WARN + more;
}

/* The library's advice names settings, never our flags (prcommon.h): the
 * flag that sets each follows its name where a message gives it.  The
 * library writes these words only when it means the setting (a record's
 * own fields it names as the kernel does: stack_size). */
static const struct {
	const char *setting, *flag;
} setting_flags[] = {
	{ PR_LOG_SETTING_DEBUG_DIRS, "--debug-dir" },
	{ PR_LOG_SETTING_KALLSYMS, "--kallsyms" },
	{ PR_LOG_SETTING_FREQUENCY, "-F" },
	{ PR_LOG_SETTING_STACK_SIZE, "--stack-size" },
	{ PR_LOG_SETTING_RING_PAGES, "--ring-pages" },
	{ PR_LOG_SETTING_OUTPUT_PATH, "-o" },
	{ PR_LOG_SETTING_KERNEL_CHAINS, "-k" },
	{ PR_LOG_SETTING_SYSTEM_WIDE, "-a" },
};

/* `msg` into `out` (always terminated), each setting it names followed by
 * its flag: "... to the debug directories (--debug-dir)". */
static void with_flags(char *out, size_t len, const char *msg)
{
	const size_t nr = sizeof(setting_flags) / sizeof(setting_flags[0]);
	size_t n = 0;

	while (*msg && n + 1 < len) {
		size_t i, w = 0;

		for (i = 0; i < nr; i++) {
			w = strlen(setting_flags[i].setting);
			if (!strncmp(msg, setting_flags[i].setting, w))
				break;
		}
		if (i == nr) {
			out[n++] = *msg++;
			continue;
		}
		n += (size_t)snprintf(out + n, len - n, "%.*s (%s)", (int)w, msg,
				      setting_flags[i].flag);
		msg += w;
	}
	out[n < len ? n : len - 1] = '\0';
}

/* Where a line goes: "dwarfsample: " and the text on stderr; for the
 * agent, the time or the journal's priority first (ds_log_setup()). */
static enum { LOG_PLAIN, LOG_STAMPED, LOG_JOURNAL } log_style;

static void emit(enum pr_log_level level, const char *text)
{
	/* sd-daemon(3)'s priorities: err, warning, info, debug. */
	static const char prio[] = { '3', '4', '6', '7' };
	const char *tag = level == PR_LOG_ERROR ? "error: " :
			  level == PR_LOG_WARN ? "warning: " : "";
	char stamp[40] = "";

	if (log_style == LOG_STAMPED) {
		struct timespec ts;
		struct tm tm;

		clock_gettime(CLOCK_REALTIME, &ts);
		gmtime_r(&ts.tv_sec, &tm);
		strftime(stamp, sizeof(stamp), "%Y-%m-%dT%H:%M:%S", &tm);
		snprintf(stamp + strlen(stamp), sizeof(stamp) - strlen(stamp), ".%03ldZ ",
			 ts.tv_nsec / 1000000);
		tag = level == PR_LOG_ERROR ? "error: " : level == PR_LOG_WARN ? "warning: " :
		      level == PR_LOG_INFO ? "info: " : "debug: ";
	}
	if (log_style == LOG_JOURNAL)
		fprintf(stderr, "<%c>dwarfsample: %s%s\n", prio[level <= PR_LOG_DEBUG ? level : 3],
			tag, text);
	else
		fprintf(stderr, "%sdwarfsample: %s%s\n", stamp, tag, text);
}

void ds_log_setup(int level, bool stamped)
{
	const char *journal = getenv("JOURNAL_STREAM");
	struct stat st;
	unsigned long long dev, ino;

	log_verbosity = level;
	log_style = stamped ? LOG_STAMPED : LOG_PLAIN;
	/* systemd sets JOURNAL_STREAM to the device and inode of the stream it
	 * gave us: while stderr is still that stream, the journal stamps
	 * lines itself and reads their priority from the prefix. */
	if (stamped && journal && sscanf(journal, "%llu:%llu", &dev, &ino) == 2 &&
	    !fstat(STDERR_FILENO, &st) && st.st_dev == dev && st.st_ino == ino)
		log_style = LOG_JOURNAL;
}

void ds_log(enum pr_log_level level, const char *msg, void *ctx)
{
	char text[2048];

	(void)ctx;
	if ((int)level > log_verbosity)
		return;
	with_flags(text, sizeof(text), msg);
	emit(level, text);
}

void ds_logf(enum pr_log_level level, const char *fmt, ...)
{
	char text[2048];
	va_list ap;

	if ((int)level > log_verbosity)
		return;
	va_start(ap, fmt);
	vsnprintf(text, sizeof(text), fmt, ap);
	va_end(ap);
	emit(level, text);
}

void ds_err(const char *fmt, ...)
{
	char text[2048];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(text, sizeof(text), fmt, ap);
	va_end(ap);
	/* The commands' messages carry their own words ("cannot ..."): only
	 * the agent's stamped lines name the level. */
	emit(log_style == LOG_PLAIN ? PR_LOG_INFO : PR_LOG_ERROR, text);
}

int ds_parse_u64(const char *arg, const char *what, uint64_t lo, uint64_t hi, uint64_t *out)
{
	char *end;
	unsigned long long v;

	errno = 0;
	v = strtoull(arg, &end, 10);
	if (!*arg || *end || errno || arg[0] == '-' || v < lo || v > hi) {
		ds_err("invalid %s '%s': expected %llu to %llu", what, arg,
		       (unsigned long long)lo, (unsigned long long)hi);
		return -1;
	}
	*out = v;
	return 0;
}

static int parse_pids(struct ds_capture *c, const char *arg)
{
	char *copy = strdup(arg), *save = NULL;
	int ret = 0;

	if (!copy)
		return -1;
	for (char *tok = strtok_r(copy, ",", &save); tok;
	     tok = strtok_r(NULL, ",", &save)) {
		uint64_t pid;

		if (c->nr_pids == DS_MAX_PIDS) {
			ds_err("too many PIDs (at most %d)", DS_MAX_PIDS);
			ret = -1;
			break;
		}
		if (ds_parse_u64(tok, "PID", 1, INT_MAX, &pid)) {
			ret = -1;
			break;
		}
		c->pids[c->nr_pids++] = (pid_t)pid;
	}
	if (!ret && !c->nr_pids) {
		ds_err("invalid PID list '%s'", arg);
		ret = -1;
	}
	free(copy);
	return ret;
}

int ds_parse_duration(const char *arg, const char *what, uint64_t *ns)
{
	static const struct {
		const char *unit;
		double ns;
	} units[] = { { "ns", 1 },    { "us", 1e3 },	{ "ms", 1e6 },	  { "s", 1e9 },
		      { "m", 60e9 },  { "min", 60e9 },	{ "h", 3600e9 }, { "d", 86400e9 } };
	char *end;
	double d;

	errno = 0;
	d = strtod(arg, &end);
	if (end == arg || errno || !isfinite(d) || d < 0 || arg[0] == '-')
		goto bad;
	for (size_t i = 0; i < sizeof(units) / sizeof(units[0]); i++) {
		if (strcmp(end, units[i].unit))
			continue;
		if (d * units[i].ns >= 1e18)
			goto bad;
		*ns = (uint64_t)(d * units[i].ns + 0.5);
		return 0;
	}
bad:
	ds_err("invalid %s '%s': expected a duration with a unit, ns, us, ms, s, m, h or d "
	       "(e.g. 50us, 0.5s, 15m, 7d)", what, arg);
	return -1;
}

/* A stack copy size: a multiple of 8 in [8, PR_MAX_STACK_SIZE]. */
static int parse_stack_size(const char *arg, uint32_t *out)
{
	uint64_t v;

	if (ds_parse_u64(arg, "stack size", 8, PR_MAX_STACK_SIZE, &v))
		return -1;
	if (v % 8) {
		ds_err("invalid stack size %llu: it must be a multiple of 8",
		       (unsigned long long)v);
		return -1;
	}
	*out = (uint32_t)v;
	return 0;
}

/* One capture option: 1 when handled, 0 when it is not one, -1 on a bad
 * value (reported). */
static int capture_option(struct ds_capture *c, int opt, const char *arg)
{
	uint64_t v;
	int n;

	switch (opt) {
	case 'p':
		return parse_pids(c, arg) ? -1 : 1;
	case 'a':
		c->system_wide = true;
		return 1;
	case 'C':
		n = pr_cpu_list_parse(arg, c->cpus, DS_MAX_CPUS);
		if (n <= 0) {
			ds_err("invalid CPU list '%s': use numbers and ranges like 0-3,8", arg);
			return -1;
		}
		c->nr_cpus = (size_t)n;
		return 1;
	case 'F':
		if (ds_parse_u64(arg, "frequency", 1, 1000000, &v))
			return -1;
		c->freq = v;
		return 1;
	case 'd': {
		char *end;
		double d;

		errno = 0;
		d = strtod(arg, &end);
		if (!*arg || *end || errno || !isfinite(d) || d <= 0 || d > 1e7) {
			ds_err("invalid duration '%s': expected seconds above 0", arg);
			return -1;
		}
		c->duration = d;
		return 1;
	}
	case 'k':
		c->kernel = true;
		return 1;
	case 'v':
		ds_verbose(++c->verbose);
		return 1;
	case OPT_STACK_SIZE:
		return parse_stack_size(arg, &c->stack_size) ? -1 : 1;
	case OPT_OFF_CPU_STACK_SIZE:
		return parse_stack_size(arg, &c->off_cpu_stack_size) ? -1 : 1;
	case OPT_OFF_CPU:
		c->off_cpu = true;
		return 1;
	case OPT_WALL:
		c->wall = true;
		return 1;
	case OPT_OFF_CPU_MIN:
		return ds_parse_duration(arg, "off-CPU minimum", &c->off_cpu_min_ns) ? -1 : 1;
	case OPT_RING_PAGES:
		if (ds_parse_u64(arg, "ring size", 1, 1u << 20, &v))
			return -1;
		if (v & (v - 1)) {
			ds_err("invalid ring size %llu pages: use a power of two",
			       (unsigned long long)v);
			return -1;
		}
		c->ring_pages = (uint32_t)v;
		return 1;
	case OPT_HW_CYCLES:
		c->hw_cycles = true;
		return 1;
	case 'e':
		return ds_events_add(&c->events, arg) ? -1 : 1;
	case 'c':
		if (ds_parse_u64(arg, "period", 1, UINT64_MAX >> 1, &v))
			return -1;
		c->events.period = v;
		return 1;
	case OPT_READ_GROUP:
		c->events.read_group = true;
		return 1;
	default:
		return 0;
	}
}

static bool is_target_option(int opt)
{
	return opt > 0 && opt < 128 && opt != ':' && strchr(TARGET_SHORTOPTS, opt);
}

int ds_parse(struct ds_capture *c, const struct ds_verb *v, int argc, char **argv)
{
	struct option all[64];
	char shortopts[64];
	size_t n = 0;
	int opt;

	for (size_t i = 0; i < sizeof(capture_longopts) / sizeof(capture_longopts[0]); i++)
		if (!v->counting || is_target_option(capture_longopts[i].val))
			all[n++] = capture_longopts[i];
	for (const struct option *o = v->longopts; o && o->name && n < 62; o++)
		all[n++] = *o;
	for (const struct option *o = v->more_longopts; o && o->name && n < 62; o++)
		all[n++] = *o;
	all[n++] = (struct option){ "help", no_argument, NULL, 'h' };
	all[n] = (struct option){ NULL, 0, NULL, 0 };
	/* "+": options end at the first non-option, so a command's own
	 * flags after "--" or its name are left alone. */
	snprintf(shortopts, sizeof(shortopts), "+%s%sh",
		 v->counting ? TARGET_SHORTOPTS : CAPTURE_SHORTOPTS,
		 v->shortopts ? v->shortopts : "");
	c->counting = v->counting;
	optind = 1;
	while ((opt = getopt_long(argc, argv, shortopts, all, NULL)) != -1) {
		/* A counting verb's own options may share a letter with the
		 * sampling ones (-e): only the target is the capture's. */
		int handled = !v->counting || is_target_option(opt) ?
			      capture_option(c, opt, optarg) : 0;

		if (handled < 0)
			return -1;
		if (handled)
			continue;
		if (opt == 'h') {
			v->usage(stdout);
			return -2;
		}
		if (opt == '?' || !v->option || v->option(opt, optarg, v->ctx)) {
			if (opt == '?')
				fprintf(stderr, "Try 'dwarfsample %s%s--help'.\n", v->name,
					*v->name ? " " : "");
			return -1;
		}
	}
	return optind;
}

int ds_parse_target(struct ds_capture *c, const struct ds_verb *v, int argc, char **argv)
{
	int first = ds_parse(c, v, argc, argv);

	if (first < 0)
		return first == -2 ? 0 : 2;
	if (ds_capture_finish(c, argc - first, argv + first))
		return 2;
	ds_capture_signals();
	return -1;
}

bool ds_capture_given(const struct ds_capture *c)
{
	return c->nr_pids || c->system_wide || c->nr_cpus || c->freq ||
	       c->duration > 0 || c->stack_size || c->ring_pages || c->hw_cycles ||
	       c->kernel || c->off_cpu || c->wall || c->off_cpu_min_ns ||
	       c->off_cpu_stack_size || c->events.nr || c->events.period ||
	       c->events.read_group;
}

/* The off-CPU options together: 0, or -1 after saying what is wrong.
 * --off-cpu-min 0s is indistinguishable from its absence, and harmless. */
static int check_off_cpu(const struct ds_capture *c)
{
	if (c->off_cpu && c->wall) {
		ds_err("give --off-cpu (off-CPU time only) or --wall (on- and off-CPU "
		       "time), not both");
		return -1;
	}
	if (c->off_cpu && c->freq) {
		ds_err("-F has no effect with --off-cpu, which takes no CPU samples; "
		       "use --wall to sample the CPU as well");
		return -1;
	}
	if (c->off_cpu && c->stack_size) {
		ds_err("--stack-size sets the CPU samples' stack copy and --off-cpu takes "
		       "none; use --off-cpu-stack-size");
		return -1;
	}
	if (c->off_cpu && c->hw_cycles) {
		ds_err("--hw-cycles has no effect with --off-cpu, which takes no CPU "
		       "samples; use --wall to sample the CPU as well");
		return -1;
	}
	if (!c->off_cpu && !c->wall && (c->off_cpu_min_ns || c->off_cpu_stack_size)) {
		ds_err("%s applies to off-CPU time: use it with --off-cpu or --wall",
		       c->off_cpu_stack_size ? "--off-cpu-stack-size" : "--off-cpu-min");
		return -1;
	}
	return 0;
}

/* -e and -c against the other sampling options: 0, or -1 after saying
 * what to use instead.  The events themselves are checked last, since
 * that asks the kernel. */
static int check_events(struct ds_capture *c)
{
	struct ds_events *e = &c->events;

	if (!e->nr && (e->period || e->read_group)) {
		ds_err("%s applies to the events of -e: give them too (e.g. -e page-faults)",
		       e->period ? "-c" : "--read-group");
		return -1;
	}
	if (!e->nr)
		return 0;
	if (e->period && c->freq) {
		ds_err("give -c PERIOD (every PERIOD events) or -F HZ (samples per second), "
		       "not both");
		return -1;
	}
	if (c->hw_cycles) {
		ds_err("--hw-cycles chooses the CPU event; with -e, name it: -e cycles");
		return -1;
	}
	if (c->off_cpu || c->wall) {
		ds_err("%s weighs stacks by time and -e samples other events: profile "
		       "them in separate runs", c->off_cpu ? "--off-cpu" : "--wall");
		return -1;
	}
	return ds_events_settle(e);
}

int ds_capture_finish(struct ds_capture *c, int argc, char **argv)
{
	int targets = !!c->nr_pids + !!c->system_wide + (argc > 0);

	if (targets != 1) {
		if (targets)
			ds_err("give only one target: -p PID, -a, or -- CMD");
		else
			ds_err("nothing to %s: give -p PID, -a, or -- CMD ARGS",
			       c->counting ? "count" : "sample");
		return -1;
	}
	if (c->nr_cpus && !c->system_wide) {
		ds_err("-C selects CPUs for system-wide sampling; use it with -a");
		return -1;
	}
	if (check_off_cpu(c) || check_events(c))
		return -1;
	if (argc > 0)
		c->argv = argv;
	return 0;
}

int ds_switch_event(const struct pr_reader *r)
{
	for (size_t i = 0; i < pr_reader_nr_events(r); i++)
		if (pr_event_source_of(pr_reader_event_attr(r, i)) == PR_SOURCE_CONTEXT_SWITCH)
			return (int)i;
	return -1;
}

struct pr_reader *ds_capture_open(const struct ds_capture *c)
{
	PR_OPTS(pr_event_opts, ev,
		.freq = c->freq,
		.stack_size = c->stack_size,
		.kernel_callchain = c->kernel,
		.prefer_hw_cycles = c->hw_cycles);
	/* The switch-out sample: the same registers and kernel stacks, its
	 * own stack copy. */
	PR_OPTS(pr_event_opts, off,
		.stack_size = c->off_cpu_stack_size ? c->off_cpu_stack_size
						    : DS_OFF_CPU_STACK_SIZE,
		.kernel_callchain = c->kernel);
	struct pr_event_opts events[DS_MAX_EVENTS];
	PR_OPTS(pr_reader_opts, opts,
		.event = &ev,
		.ring_pages = c->ring_pages,
		.log = ds_log,
		.off_cpu = c->off_cpu || c->wall ? &off : NULL,
		.no_cpu_samples = c->off_cpu,
		.cgroup = c->cgroup);

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

void ds_unwind_stats_add(struct pr_unwind_stats *sum, const struct pr_unwinder *u)
{
	struct pr_unwind_stats st = { .sz = sizeof(st) };

	if (pr_unwinder_stats(u, &st))
		return;
	sum->samples += st.samples;
	sum->frames += st.frames;
	sum->kernel_frames += st.kernel_frames;
	sum->fp_frames += st.fp_frames;
	for (int i = 0; i < PR_END_MAX; i++)
		sum->ends[i] += st.ends[i];
	/* Each worker opens the files its samples need. */
	if (st.files_opened > sum->files_opened)
		sum->files_opened = st.files_opened;
	if (st.files_missing > sum->files_missing)
		sum->files_missing = st.files_missing;
	sum->fast_samples += st.fast_samples;
	sum->joined += st.joined;
	sum->joined_frames += st.joined_frames;
}

void ds_stack_ends(const struct pr_unwind_stats *st)
{
	fputs("stacks ended:", stderr);
	for (int e = 0; e < PR_END_MAX; e++)
		if (st->ends[e])
			fprintf(stderr, " %s %.1f%%", pr_stack_end_name((enum pr_stack_end)e),
				100.0 * (double)st->ends[e] / (double)st->samples);
	/* Counted above by how they end after it. */
	if (st->joined)
		fprintf(stderr, "; %.1f%% completed by joining (--no-join)",
			100.0 * (double)st->joined / (double)st->samples);
	fputc('\n', stderr);
}

int ds_reserve(void *pv, size_t *cap, size_t need, size_t size, size_t first)
{
	void **v = pv, *grown;
	size_t n = *cap ? *cap : first;

	if (need <= *cap)
		return 0;
	while (n < need)
		n *= 2;
	grown = realloc(*v, n * size);
	if (!grown)
		return -ENOMEM;
	*v = grown;
	*cap = n;
	return 0;
}

int ds_file_verdict(const struct pr_file *f, const char *path, int ret)
{
	struct pr_file_stats st = { .sz = sizeof(st) };

	if (pr_file_stats(f, &st))
		return ret;
	if (st.unsupported_at)
		return 1;
	if (!st.damaged)
		return ret;
	fprintf(stderr, "dwarfsample: %s is damaged: salvaged %" PRIu64 " records",
		path, st.records - st.corrupt_records);
	if (st.corrupt_records)
		fprintf(stderr, ", skipped %" PRIu64 " corrupt ones", st.corrupt_records);
	if (st.damaged_at)
		fprintf(stderr, "; nothing could be read from byte %" PRIu64 " on, the "
			"last %" PRIu64 " of its %" PRIu64 " bytes of records", st.damaged_at,
			st.data_offset + st.data_size - st.damaged_at, st.data_size);
	if (st.truncated && st.data_claimed > st.data_size)
		fprintf(stderr, "; the file ends %" PRIu64 " bytes short of its data "
			"section (a truncated copy)", st.data_claimed - st.data_size);
	fputs(".  The output holds what was read before the damage (exit status 3).\n",
	      stderr);
	return ret ? ret : DS_EXIT_SALVAGED;
}

/* A switch-out sample the ring had no room for costs the target nothing:
 * the kernel copies its stack only into room it found.  With off-CPU
 * samples that copy is what both fills the ring and slows a switch-heavy
 * target, so a smaller one is the first thing to suggest. */
const char *ds_lost_hint(const struct ds_capture *c)
{
	if (c->off_cpu)
		return "raise --ring-pages or copy less of each stack (a smaller "
		       "--off-cpu-stack-size)";
	if (c->wall)
		return "lower -F or raise --ring-pages, or copy less of each stack "
		       "(a smaller --off-cpu-stack-size or --stack-size)";
	if (c->stack_size > 16384)
		return "lower -F or raise --ring-pages, or copy less of each stack "
		       "(--stack-size 16384)";
	return "lower -F or raise --ring-pages";
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
