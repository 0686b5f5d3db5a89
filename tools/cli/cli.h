/* SPDX-License-Identifier: Apache-2.0 */
/* Command-line pieces shared by the dwarfsample verbs. */
#ifndef DS_CLI_H
#define DS_CLI_H

#include <getopt.h>
#include <signal.h>
#include <stdio.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "events.h"
#include "perfreader.h"
#include "prunwind.h"

#define DS_MAX_PIDS 1024
#define DS_MAX_CPUS 4096
/* User stack bytes copied per switch-out sample: at 20 000 switches/s,
 * 8192 completed 90-100 % of blocked and preempted stacks (gcc, deep
 * recursion, locks and pipes) and lost 0-0.14 % of switches, where 16384
 * completed 93-100 % but lost up to 0.4 % and cost 1.5x the CPU
 * (BENCHMARKS.md, "Off-CPU cost"). */
#define DS_OFF_CPU_STACK_SIZE 8192

/* The stack copied per sample by the profiling verbs (the live command,
 * the agent) unless --stack-size says: the smallest that completed
 * 95-100% of stacks on every workload measured (gcc, deep recursion,
 * Python, Node, C++; BENCHMARKS.md), as samply and ddprof (32000).  perf's
 * 8192 cut 10% of gcc's stacks and 80% of the deep recursion's short. */
#define DS_PROFILE_STACK_SIZE 32768

/* The stack copied per sample with --call-graph auto unless SIZE says:
 * the head that DWARF unwinds before the kernel's chain takes over
 * (BENCHMARKS.md, "Call-graph modes: ring bytes and capture cost"). */
#define DS_AUTO_STACK_SIZE 4096

/* What to sample and how: the options every capturing verb takes. */
struct ds_capture {
	pid_t pids[DS_MAX_PIDS];
	size_t nr_pids;
	/* -t: these threads alone (a target of their own, as -p is). */
	pid_t tids[DS_MAX_PIDS];
	size_t nr_tids;
	bool system_wide;
	int cpus[DS_MAX_CPUS];
	size_t nr_cpus;         /* 0 with system_wide: all online CPUs */
	char **argv;            /* command to launch, or NULL (a counting
				   verb's may run beside -p or -a) */
	uint64_t freq;
	double duration;        /* seconds; 0 = until stopped */
	uint32_t stack_size;
	/* --call-graph MODE[,SIZE]: the mode, and SIZE (0: none given;
	 * ds_capture_finish() moves it to stack_size); -g: the default
	 * mode, dwarf. */
	enum pr_call_graph call_graph;
	uint32_t call_graph_size;
	bool call_graph_given, g;
	uint32_t ring_pages;
	bool hw_cycles;
	bool kernel;
	int verbose;
	/* --off-cpu: off-CPU time only (no CPU-sampling event); --wall: CPU
	 * samples and off-CPU time in one profile. */
	bool off_cpu, wall;
	uint64_t off_cpu_min_ns;        /* drop shorter waits; 0 keeps all */
	uint32_t off_cpu_stack_size;    /* 0: DS_OFF_CPU_STACK_SIZE */
	bool counting;          /* set by ds_parse() for a counting verb */
	/* With system_wide: only this cgroup's tasks (the agent's --cgroup),
	 * a path under /sys/fs/cgroup. */
	const char *cgroup;
	struct ds_events events;        /* -e, -c, --read-group */
	/* --python: CPython's perf trampoline turned on in the -p processes,
	 * or PYTHONPERFSUPPORT=1 for the command (python.c). */
	bool python;
};

/* Set by SIGINT/SIGTERM handlers (1, then 2 on a second signal); the
 * capture loops poll it. */
extern volatile sig_atomic_t ds_stop;

/* Show the library's messages down to `level` more than warnings. */
void ds_verbose(int more);
/* dwarfsample's cache directory ($XDG_CACHE_HOME/dwarfsample or
 * ~/.cache/dwarfsample), made if need be; NULL when there is none. */
const char *ds_cache_dir(void);
/* mkdir -p: `dir` and its missing parents, made with `mode`.  0 or a
 * negative errno. */
int ds_mkdirs(const char *dir, mode_t mode);
/* Settle debuginfod's settings (its environment) from the options: off,
 * or a fetch timeout in seconds (default 30) and a cache directory. */
void ds_debuginfod_env(bool off, const char *timeout, const char *cache);

/* A whole number in [lo, hi] from `arg` into *out: 0, or -1 after
 * saying "invalid WHAT 'ARG': expected LO to HI". */
int ds_parse_u64(const char *arg, const char *what, uint64_t lo, uint64_t hi, uint64_t *out);

/* A size in bytes, "4096", "256M", "1G" (K, M, G: binary), into *out: 0,
 * or -1 after saying "invalid WHAT 'ARG'" and what one looks like. */
int ds_parse_size(const char *arg, const char *what, uint64_t *out);

/* A duration, in the one syntax of every option that takes one
 * (duration.c): "10" (seconds), "10s", "500ms", "50us", "2m", "1.5h",
 * "7d" into *ns; 0, or -1 after saying "WHAT: 'ARG' is not a duration"
 * and what one looks like.  WHAT is the option as typed ("-d"). */
int ds_parse_duration(const char *arg, const char *what, uint64_t *ns);
/* The same, a bare number counted in `bare_ns` units (stat's -I: ms). */
int ds_parse_duration_in(const char *arg, const char *what, uint64_t bare_ns, uint64_t *ns);

/* "stacks ended: outermost 97.1% truncated 2.9%" and a newline, to
 * stderr (st->samples must not be 0). */
void ds_stack_ends(const struct pr_unwind_stats *st);

/* "user frames by source: dwarf 812 (61.0%), fp 519 (39.0%)" and a
 * newline, to `out` after `prefix`: the session's user frames by where
 * they came from (pr_session_stats.frames_*).  Without `all`, nothing
 * when every frame was unwound from the copy, and only the sources that
 * gave frames; with it, every source, and what each is. */
void ds_frame_sources(FILE *out, const char *prefix, const struct pr_session_stats *ss,
		      bool all);

/* Room for `need` elements of `size` bytes in the array at *(void **)pv
 * holding *cap: grown (doubled, from `first`) when short.  0, or -ENOMEM
 * with the array as it was. */
int ds_reserve(void *pv, size_t *cap, size_t need, size_t size, size_t first);

/* The exit status of a command that read `f` (at `path`) to its end,
 * with `ret` its own (0 or 1): DS_EXIT_SALVAGED when the file was
 * damaged (said plainly: how much was read, where the damage is), 1 when
 * it stopped at a record it cannot read, else `ret`. */
#define DS_EXIT_SALVAGED 3
int ds_file_verdict(const struct pr_file *f, const char *path, int ret);

/* The stack copy the verb copies by default (`bytes`), unless a size
 * was given or the mode copies none (fp). */
void ds_capture_default_stack(struct ds_capture *c, uint32_t bytes);

/* The summary's line on call chains the kernel cut at its depth limit
 * (kernel.perf_event_max_stack): how many, and how to raise it; nothing
 * when none was.  `prefix` starts the line. */
void ds_chain_limit_note(FILE *out, const char *prefix, const struct pr_reader *r);

/* What to change to lose fewer samples: "lower -F or raise --ring-pages"
 * and, where it applies, a smaller stack copy; a static string. */
const char *ds_lost_hint(const struct ds_capture *c);

/* Print "dwarfsample: <msg>" to stderr; the library's log callback. */
void ds_log(enum pr_log_level level, const char *msg, void *ctx);
/* The log callback for library calls that do the verb's own work (the
 * output's messages, record's build-id cache and archive, report's
 * archive): their errors read as the verb's (ds_err()), the rest as
 * ds_log() has them, the level named only in the agent's stamped lines. */
void ds_log_own(enum pr_log_level level, const char *msg, void *ctx);
__attribute__((format(printf, 1, 2))) void ds_err(const char *fmt, ...);
/* A message of `level`, shown when the verbosity reaches it. */
__attribute__((format(printf, 2, 3))) void ds_logf(enum pr_log_level level, const char *fmt, ...);
/* The agent's log: messages down to `level` (PR_LOG_*), each line stamped
 * with the UTC time and its level, or, when stderr is systemd's journal
 * stream, prefixed with its sd-daemon priority instead. */
void ds_log_setup(int level, bool stamped);
/* The unwind-quality report of `q` (prquality.h) to `out`, each line
 * after `prefix`, at most `max_rows` rows a table (0: all) of at least
 * `permille` of the samples or frames, its remedies naming our flags:
 * pr_quality_report()'s result. */
int ds_quality_report(const struct pr_quality *q, FILE *out, const char *prefix,
		      size_t max_rows, unsigned permille);
/* The stack copy event `attr` asked for, into the quality counts'
 * options: the off-CPU event's (switch-out samples), else the first
 * sampling event's. */
void ds_quality_copy(struct pr_quality_opts *qo, const struct perf_event_attr *attr);


/* Whether any capture option was given (for verbs that read files). */
bool ds_capture_given(const struct ds_capture *c);

/* Defaults, and the check that exactly one target was given; called after
 * getopt with the remaining arguments (the command, if any).  A -p that
 * is a thread becomes its process, said on stderr; a -t thread that does
 * not exist is an error. */
int ds_capture_finish(struct ds_capture *c, int argc, char **argv);

/* The help text for the capture options. */
extern const char ds_capture_help[];
extern const char ds_offcpu_help[]; /* their off-CPU part */

/* A verb's own options, beside the capture options every verb takes. */
struct ds_verb {
	const char *name;               /* for "Try 'dwarfsample NAME --help'" */
	const char *shortopts;          /* the verb's own getopt letters */
	const struct option *longopts;  /* the verb's own, NULL-terminated */
	const struct option *more_longopts;  /* more of them (may be NULL) */
	void (*usage)(FILE *out);
	/* Counts rather than samples (stat): takes only the target options
	 * (-p, -t, -a, -C, -d, -v), and its messages say "count". */
	bool counting;
	/* One of the verb's options: 0, or -1 after reporting the problem. */
	int (*option)(int opt, const char *arg, void *ctx);
	void *ctx;
};

/*
 * Parse `argv` (argv[0] is the verb): capture options into `c`, the verb's
 * through its callback, --help through its usage.  Returns the index of the
 * first argument after the options, -1 on a bad option (reported), or -2
 * when help was printed.
 */
int ds_parse(struct ds_capture *c, const struct ds_verb *v, int argc, char **argv);

/*
 * ds_parse(), then ds_capture_finish() on what follows the options, then
 * ds_capture_signals(): for verbs that need a target.  Returns -1 when the
 * verb should go on and run, else the exit status to end with (0 after
 * --help, 2 after a usage error, reported).
 */
int ds_parse_target(struct ds_capture *c, const struct ds_verb *v, int argc, char **argv);

/* --python, before sampling: the perf trampoline turned on in each -p
 * process (what was done, said on stderr), or PYTHONPERFSUPPORT=1 set
 * for the command.  0, or -1 after saying why (the environment could not
 * be set); a process that cannot be activated is said and sampled as it
 * is. */
int ds_python_prepare(const struct ds_capture *c);
/* The summary's lines on --python, each after `prefix`: the command's
 * environment, processes whose trampoline came on during the run or
 * stays on; nothing without --python. */
void ds_python_summary(FILE *out, const char *prefix);

/* Open the reader for the capture's target (after ds_python_prepare());
 * NULL after reporting why. */
struct pr_reader *ds_capture_open(const struct ds_capture *c);

/* Install SIGINT/SIGTERM handlers that set ds_stop (no SA_RESTART, so
 * blocking waits return), and raise the open-file limit for per-thread
 * events. */
void ds_capture_signals(void);

/*
 * Hand `cb` what the target already has (the kernel's text; the threads
 * and mappings of the processes, or of the whole system), as records of
 * the reader's event `id`, from /proc.  Ctrl-C cuts it short (returns 0;
 * the capture loop sees ds_stop).  A process gone already is no error:
 * its exit ends the run.  Returns 0 or a negative errno.
 */
int ds_synthesize(const struct ds_capture *c, struct pr_reader *r, uint64_t id,
		  pr_record_fn cb, void *ctx);

/* Seconds on the monotonic clock. */
double ds_now(void);
/* The monotonic clock in nanoseconds: the clock record times use. */
uint64_t ds_now_ns(void);

/* What a capture does with what it reads.  `started` (may be NULL) runs
 * once the events are enabled, before the first drain; `round` (may be
 * NULL) after every drain of all the rings.  `end_ns` is an output: the
 * CLOCK_MONOTONIC time (the events' clock) just before the events were
 * disabled, up to which waits still open count. */
struct ds_capture_hooks {
	pr_record_fn record;
	int (*started)(void *ctx);
	int (*round)(void *ctx);
	void *ctx;
	uint64_t end_ns;
	/* Outputs too: how a launched command ended (its wait status), or
	 * -1 (none; or it still ran when -d or a signal ended the run, and
	 * was terminated); the CPU time it used from its exec, in seconds, or
	 * -1. */
	int cmd_status;
	double cmd_cpu;
	/* And how long it slept between its exec and its exit, in seconds
	 * (neither on a CPU nor waiting for one), or -1. */
	double cmd_slept;
	/* The negative errno of a command that could not be run. */
	int cmd_start_err;
};

/*
 * Drive a capture: enable, then hand every record to the hooks until the
 * duration ends, a signal arrives, or every target has exited; disable and
 * drain what is left.  A launched command that outlives the capture gets
 * SIGTERM; it is always reaped.  Returns 0 or a negative errno.
 */
int ds_capture_run(const struct ds_capture *c, struct pr_reader *r,
		   struct ds_capture_hooks *h);

/* The exit status of a verb that ran a capture: `own` (nonzero: the verb's
 * own failure, which takes precedence, as perf's does), else the launched
 * command's, as a shell gives it: its exit status, or 128 + the signal
 * that killed it; 0 without one. */
int ds_command_exit(const struct ds_capture_hooks *h, int own);

/* Why a capture of `h`'s run that lasted `secs` holds no sample, and what
 * to use instead, on stderr after `prefix`. */
void ds_no_samples(const struct ds_capture *c, const struct ds_capture_hooks *h, double secs,
		   const char *prefix);

/* A benchmark hook (firstnamed.c): with DWARFSAMPLE_BENCH_FIRST_NAMED in
 * the environment, a sink noting when the first sample whose every user
 * frame is named was named (true: *out filled, attach it), and the line
 * saying when, printed at the end. */
struct pr_sink;
bool ds_first_named_sink(struct pr_sink *out);
void ds_first_named_print(void);

#endif
