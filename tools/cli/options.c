/* SPDX-License-Identifier: Apache-2.0 */
/* The capture options every capturing verb takes, and the parsing of a
 * verb's command line around them. */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <limits.h>
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

enum {
	OPT_STACK_SIZE = 1000,
	OPT_RING_PAGES,
	OPT_HW_CYCLES,
	OPT_OFF_CPU,
	OPT_WALL,
	OPT_OFF_CPU_MIN,
	OPT_OFF_CPU_STACK_SIZE,
	OPT_READ_GROUP,
	OPT_CALL_GRAPH,
	OPT_PYTHON,
};

#define CAPTURE_SHORTOPTS "p:t:aC:F:d:kve:c:g"
/* The capture options a counting verb takes: its target and how long. */
#define TARGET_SHORTOPTS "p:t:aC:d:v"

static const struct option capture_longopts[] = {
	{ "pid", required_argument, NULL, 'p' },
	{ "tid", required_argument, NULL, 't' },
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
	{ "call-graph", required_argument, NULL, OPT_CALL_GRAPH },
	{ "python", no_argument, NULL, OPT_PYTHON },
};

const char ds_capture_help[] =
	"Target (exactly one):\n"
	"  -p, --pid PID[,PID...]   sample these processes, all their threads and\n"
	"                           the threads and children they create (a\n"
	"                           thread's id stands for its process)\n"
	"  -t, --tid TID[,TID...]   sample only these threads, as perf's -t: not\n"
	"                           the threads or processes they create\n"
	"  -a, --all-cpus           sample every task on every online CPU\n"
	"  -C, --cpu LIST           with -a: only these CPUs (e.g. 0-3,8)\n"
	"  -- CMD [ARGS...]         run CMD and sample it from its first instruction\n"
	"Sampling:\n"
	"  -F, --freq HZ            samples per second per CPU (default 99), or max:\n"
	"                           the kernel's limit, to which higher rates are\n"
	"                           lowered (kernel.perf_event_max_sample_rate)\n"
	"  -d, --duration DURATION  stop after this long: seconds (10) or with a\n"
	"                           unit, ns, us, ms, s, m, h, d (500ms, 2m);\n"
	"                           default: until Ctrl-C or the target exits\n"
	"      --stack-size BYTES   user stack bytes copied per sample, a multiple\n"
	"                           of 8 up to 65528 (default 32768 when\n"
	"                           profiling; 8192, perf's, for record and dump)\n"
	"      --ring-pages N       ring buffer pages per CPU, a power of two\n"
	"                           (default 512, up to 2048 for larger\n"
	"                           --stack-size: about 250 samples; under\n"
	"                           250 Hz a second of samples, at least 128)\n"
	"      --hw-cycles          sample hardware cycles when the CPU has a PMU\n"
	"                           (falls back to cpu-clock otherwise)\n"
	"  -e, --event LIST         sample these events instead, in perf's spelling:\n"
	"                           page-faults, context-switches, cycles,\n"
	"                           cache-misses, sched:sched_switch, with :u or :k\n"
	"                           (several in one run; each sample keeps its event)\n"
	"  -c, --count PERIOD       sample every PERIOD events instead of by frequency\n"
	"                           (tracepoints and sparse software events, such\n"
	"                           as page-faults, default to every one)\n"
	"      --read-group         read the other events of -e with every sample of\n"
	"                           the first: counts per stack (e.g. -e\n"
	"                           cpu-clock,page-faults,context-switches)\n"
	"      --call-graph MODE[,SIZE]\n"
	"                           how each sample records its user stack, in\n"
	"                           perf's spelling: dwarf (the default: registers\n"
	"                           and a stack copy of SIZE bytes, --stack-size's,\n"
	"                           unwound with DWARF), fp (the kernel's\n"
	"                           frame-pointer chain only, for code built with\n"
	"                           frame pointers) or auto (both, SIZE default\n"
	"                           4096); SIZE rounded up to a multiple of 8, up\n"
	"                           to 65528\n"
	"  -g                       record call graphs in the default mode, dwarf\n"
	"                           (perf's -g is fp: give --call-graph fp for that)\n"
	"  -k, --kernel             record kernel call chains too\n"
	"  -v, --verbose            more diagnostics\n"
	"      --python             name CPython 3.12+'s Python functions: with -p,\n"
	"                           turn its perf trampoline on in the running\n"
	"                           process (ptrace), left on after; with -- CMD,\n"
	"                           run CMD with PYTHONPERFSUPPORT=1\n";

/* Apart from ds_capture_help: one string literal of both passes the
 * length every C compiler must take. */
const char ds_offcpu_help[] =
	"Off-CPU time (needs kernel.perf_event_paranoid <= 1, CAP_PERFMON or root):\n"
	"      --off-cpu            profile time spent off the CPU instead of on it:\n"
	"                           the stack at every switch out of a sampled\n"
	"                           thread, weighted by the nanoseconds until it\n"
	"                           runs again (blocked and preempted kept apart)\n"
	"      --wall               on-CPU samples and off-CPU time in one profile\n"
	"                           in nanoseconds: each thread's wall time\n"
	"      --off-cpu-min DURATION\n"
	"                           drop waits shorter than this (50us, 1ms;\n"
	"                           a bare number is seconds, as for -d)\n"
	"      --off-cpu-stack-size BYTES\n"
	"                           user stack bytes copied per switch out, a\n"
	"                           multiple of 8 up to 65528 (default 8192)\n";

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

/* A list of process (-p) or thread (-t) ids into ids[], *nr of them. */
static int parse_ids(const char *arg, const char *what, pid_t *ids, size_t *nr)
{
	char *copy = strdup(arg), *save = NULL;
	int ret = 0;

	if (!copy)
		return -1;
	/* --tid was a flag, a root per thread: say where that went. */
	if (!strcmp(what, "TID") && arg[0] == '-') {
		ds_err("-t/--tid takes thread ids, as perf's does (e.g. -t 1235,1236), not "
		       "'%s'; a root per thread in folded and SVG output is --thread-roots",
		       arg);
		free(copy);
		return -1;
	}
	for (char *tok = strtok_r(copy, ",", &save); tok;
	     tok = strtok_r(NULL, ",", &save)) {
		uint64_t id;

		if (*nr == DS_MAX_PIDS) {
			ds_err("too many %ss (at most %d)", what, DS_MAX_PIDS);
			ret = -1;
			break;
		}
		if (ds_parse_u64(tok, what, 1, INT_MAX, &id)) {
			ret = -1;
			break;
		}
		ids[(*nr)++] = (pid_t)id;
	}
	if (!ret && !*nr) {
		ds_err("invalid %s list '%s'", what, arg);
		ret = -1;
	}
	free(copy);
	return ret;
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

/* --call-graph's SIZE as perf takes it: bytes (decimal, or 0x hex),
 * rounded up to a multiple of 8, at most PR_MAX_STACK_SIZE. */
static int parse_call_graph_size(const char *mode, const char *arg, uint32_t *out)
{
	char *end;
	unsigned long long v;

	errno = 0;
	v = strtoull(arg, &end, 0);
	if (!*arg || *end || errno || arg[0] == '-' || !v || v > PR_MAX_STACK_SIZE) {
		ds_err("invalid --call-graph '%s,%s': SIZE is the stack bytes copied per sample, "
		       "1 to %d (e.g. %s,8192)", mode, arg, PR_MAX_STACK_SIZE, mode);
		return -1;
	}
	*out = (uint32_t)((v + 7) & ~7ull);
	return 0;
}

/* --call-graph MODE[,SIZE], in perf record's spelling. */
static int parse_call_graph(struct ds_capture *c, const char *arg)
{
	static const struct {
		const char *name;
		enum pr_call_graph mode;
	} modes[] = {
		{ "dwarf", PR_CALL_GRAPH_DWARF },
		{ "fp", PR_CALL_GRAPH_FP },
		{ "auto", PR_CALL_GRAPH_AUTO },
	};
	const char *comma = strchr(arg, ',');
	size_t len = comma ? (size_t)(comma - arg) : strlen(arg);

	if (c->call_graph_given) {
		ds_err("--call-graph given twice: give it once");
		return -1;
	}
	if (len == 3 && !strncmp(arg, "lbr", 3)) {
		ds_err("--call-graph lbr reads Intel's last branch records, which dwarfsample "
		       "does not record: use --call-graph fp (code with frame pointers) or "
		       "dwarf (any code)");
		return -1;
	}
	for (size_t i = 0; i < sizeof(modes) / sizeof(modes[0]); i++) {
		if (strlen(modes[i].name) != len || strncmp(arg, modes[i].name, len))
			continue;
		c->call_graph = modes[i].mode;
		c->call_graph_given = true;
		if (!comma)
			return 0;
		if (modes[i].mode == PR_CALL_GRAPH_FP) {
			ds_err("invalid --call-graph '%s': fp copies no stack, so it takes no "
			       "SIZE; give --call-graph fp", arg);
			return -1;
		}
		return parse_call_graph_size(modes[i].name, comma + 1, &c->call_graph_size);
	}
	ds_err("invalid --call-graph '%s': use fp, dwarf[,SIZE] or auto[,SIZE] "
	       "(e.g. --call-graph dwarf,16384)", arg);
	return -1;
}

/* The kernel's ceiling on sampling rates, which it lowers by itself when
 * samples take too long to take (kernel.perf_event_max_sample_rate); 0
 * when it cannot be read. */
static uint64_t max_sample_rate(void)
{
	FILE *f = fopen("/proc/sys/kernel/perf_event_max_sample_rate", "re");
	unsigned long long v = 0;

	if (f && fscanf(f, "%llu", &v) != 1)
		v = 0;
	if (f)
		fclose(f);
	return v;
}

/* -F HZ, or -F max, as perf record takes them: a rate above the kernel's
 * ceiling, which perf_event_open() would refuse, is lowered to it. */
static int parse_freq(struct ds_capture *c, const char *arg)
{
	uint64_t max = max_sample_rate(), v;

	if (!strcmp(arg, "max")) {
		if (!max) {
			ds_err("-F max: cannot read the kernel's limit "
			       "(/proc/sys/kernel/perf_event_max_sample_rate): give -F HZ");
			return -1;
		}
		c->freq = max;
		return 0;
	}
	if (ds_parse_u64(arg, "frequency", 1, 1000000, &v))
		return -1;
	if (max && v > max) {
		ds_logf(PR_LOG_WARN, "-F %" PRIu64 " is above the kernel's limit of %" PRIu64
			": using %" PRIu64 " (kernel.perf_event_max_sample_rate)", v, max, max);
		v = max;
	}
	c->freq = v;
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
		return parse_ids(arg, "PID", c->pids, &c->nr_pids) ? -1 : 1;
	case 't':
		return parse_ids(arg, "TID", c->tids, &c->nr_tids) ? -1 : 1;
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
		return parse_freq(c, arg) ? -1 : 1;
	case 'd':
		if (ds_parse_duration(arg, "-d", &v))
			return -1;
		if (!v || v > UINT64_C(10000000) * 1000000000u) {
			ds_err("-d: '%s' is out of range: give a duration above 0 and below "
			       "115 days", arg);
			return -1;
		}
		c->duration = (double)v / 1e9;
		return 1;
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
		return ds_parse_duration(arg, "--off-cpu-min", &c->off_cpu_min_ns) ? -1 : 1;
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
	case OPT_CALL_GRAPH:
		return parse_call_graph(c, arg) ? -1 : 1;
	case 'g':
		c->g = true;
		return 1;
	case OPT_PYTHON:
		c->python = true;
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
	return c->nr_pids || c->nr_tids || c->system_wide || c->nr_cpus || c->freq ||
	       c->duration > 0 || c->stack_size || c->ring_pages || c->hw_cycles ||
	       c->kernel || c->off_cpu || c->wall || c->off_cpu_min_ns ||
	       c->off_cpu_stack_size || c->events.nr || c->events.period ||
	       c->events.read_group || c->call_graph_given || c->g || c->python;
}

/* The mode against the stack sizes, and --call-graph's SIZE into
 * stack_size: 0, or -1 after saying what to give instead. */
static int settle_call_graph(struct ds_capture *c)
{
	if (c->call_graph_size && c->off_cpu) {
		ds_err("--call-graph's SIZE sets the CPU samples' stack copy and --off-cpu "
		       "takes none; use --off-cpu-stack-size");
		return -1;
	}
	if (c->call_graph_size && c->stack_size) {
		ds_err("--stack-size and --call-graph's SIZE both set the stack copy: give "
		       "one of them");
		return -1;
	}
	if (c->call_graph == PR_CALL_GRAPH_FP && (c->stack_size || c->off_cpu_stack_size)) {
		ds_err("--call-graph fp copies no stack: leave out %s, or use --call-graph "
		       "dwarf or auto", c->stack_size ? "--stack-size" : "--off-cpu-stack-size");
		return -1;
	}
	if (c->call_graph_size)
		c->stack_size = c->call_graph_size;
	if (c->call_graph == PR_CALL_GRAPH_AUTO && !c->stack_size && !c->off_cpu)
		c->stack_size = DS_AUTO_STACK_SIZE;
	return 0;
}

void ds_capture_default_stack(struct ds_capture *c, uint32_t bytes)
{
	if (!c->stack_size && c->call_graph == PR_CALL_GRAPH_DWARF)
		c->stack_size = bytes;
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

/* -p given a thread's id: its process, said, each once (the MMAP records
 * of a process name it, so its thread's id would name none).  -t: every
 * thread there.  0, or -1 after saying which thread is not. */
static int settle_ids(struct ds_capture *c)
{
	size_t n = 0;

	for (size_t i = 0; i < c->nr_pids; i++) {
		pid_t pid = c->pids[i], tgid = pr_thread_process(pid);
		bool dup = false;

		/* No such process: the open says so. */
		if (tgid > 0 && tgid != pid) {
			fprintf(stderr, "dwarfsample: PID %d is a thread of process %d: %s the "
				"process; -t %d %s that thread only\n", (int)pid, (int)tgid,
				c->counting ? "counting" : "profiling", (int)pid,
				c->counting ? "counts" : "profiles");
			pid = tgid;
		}
		for (size_t k = 0; k < n && !dup; k++)
			dup = c->pids[k] == pid;
		if (!dup)
			c->pids[n++] = pid;
	}
	c->nr_pids = n;
	for (size_t i = 0; i < c->nr_tids; i++) {
		if (pr_thread_process(c->tids[i]) <= 0) {
			ds_err("no thread with id %d: list a process's threads with 'ps -L -p PID' "
			       "(the LWP column)", (int)c->tids[i]);
			return -1;
		}
	}
	return 0;
}

int ds_capture_finish(struct ds_capture *c, int argc, char **argv)
{
	/* A counting verb runs a command beside -p, -t or -a, and counts for
	 * as long as it runs (perf stat -a -- sleep 1). */
	bool beside = c->counting && (c->nr_pids || c->nr_tids || c->system_wide);
	int targets = !!c->nr_pids + !!c->nr_tids + !!c->system_wide + (argc > 0 && !beside);

	if (targets != 1) {
		if (targets)
			ds_err("give only one target: -p PID, -t TID, -a, or -- CMD");
		else
			ds_err("nothing to %s: give -p PID, -t TID, -a, or -- CMD ARGS",
			       c->counting ? "count" : "sample");
		return -1;
	}
	if (settle_ids(c))
		return -1;
	if (c->nr_cpus && !c->system_wide) {
		ds_err("-C selects CPUs for system-wide sampling; use it with -a");
		return -1;
	}
	if (c->python && c->nr_tids) {
		ds_err("--python turns CPython's perf trampoline on in a whole process: give "
		       "-p PID");
		return -1;
	}
	if (c->python && c->system_wide) {
		ds_err("--python turns CPython's perf trampoline on in the processes of -p PID, "
		       "or in the command of -- CMD: not with -a");
		return -1;
	}
	if (check_off_cpu(c) || settle_call_graph(c) || check_events(c))
		return -1;
	if (argc > 0)
		c->argv = argv;
	return 0;
}
