/* SPDX-License-Identifier: Apache-2.0 */
/* Command-line pieces shared by the dwarfsample verbs. */
#ifndef DS_CLI_H
#define DS_CLI_H

#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "perfreader.h"

#define DS_MAX_PIDS 1024
#define DS_MAX_CPUS 4096

/* What to sample and how: the options every capturing verb takes. */
struct ds_capture {
	pid_t pids[DS_MAX_PIDS];
	size_t nr_pids;
	bool system_wide;
	int cpus[DS_MAX_CPUS];
	size_t nr_cpus;         /* 0 with system_wide: all online CPUs */
	char **argv;            /* command to launch, or NULL */
	uint64_t freq;
	double duration;        /* seconds; 0 = until stopped */
	uint32_t stack_size;
	uint32_t ring_pages;
	bool hw_cycles;
	bool kernel;
	int verbose;
};

/* Set by SIGINT/SIGTERM handlers; the capture loops poll it. */
extern volatile sig_atomic_t ds_stop;

/* Print "dwarfsample: <msg>" to stderr; the library's log callback. */
void ds_log(enum pr_log_level level, const char *msg, void *ctx);
__attribute__((format(printf, 1, 2))) void ds_err(const char *fmt, ...);

/* Parse one capture option `opt` (its getopt value) with argument `arg`.
 * Returns 1 when handled, 0 when `opt` is not a capture option, -1 on a
 * bad value (already reported). */
int ds_capture_option(struct ds_capture *c, int opt, const char *arg);

/* Defaults, and the check that exactly one target was given; called after
 * getopt with the remaining arguments (the command, if any). */
int ds_capture_finish(struct ds_capture *c, int argc, char **argv);

/* The getopt_long table entries and the help text for capture options. */
#define DS_CAPTURE_SHORTOPTS "p:aC:F:d:kv"
enum {
	DS_OPT_STACK_SIZE = 1000,
	DS_OPT_RING_PAGES,
	DS_OPT_HW_CYCLES,
};
#define DS_CAPTURE_LONGOPTS                                                   \
	{ "pid", required_argument, NULL, 'p' },                              \
	{ "all-cpus", no_argument, NULL, 'a' },                               \
	{ "cpu", required_argument, NULL, 'C' },                              \
	{ "freq", required_argument, NULL, 'F' },                             \
	{ "duration", required_argument, NULL, 'd' },                         \
	{ "kernel", no_argument, NULL, 'k' },                                 \
	{ "verbose", no_argument, NULL, 'v' },                                \
	{ "stack-size", required_argument, NULL, DS_OPT_STACK_SIZE },         \
	{ "ring-pages", required_argument, NULL, DS_OPT_RING_PAGES },         \
	{ "hw-cycles", no_argument, NULL, DS_OPT_HW_CYCLES }
extern const char ds_capture_help[];

/* Open the reader for the capture's target; NULL after reporting why. */
struct pr_reader *ds_capture_open(const struct ds_capture *c);

/* Install SIGINT/SIGTERM handlers that set ds_stop (no SA_RESTART, so
 * blocking waits return), and raise the open-file limit for per-thread
 * events. */
void ds_capture_signals(void);

/* Seconds on the monotonic clock. */
double ds_now(void);

/*
 * Drive a capture: enable, then hand every record to `cb` until the
 * duration ends, a signal arrives, or every target has exited; disable and
 * drain what is left.  A launched command that outlives the capture gets
 * SIGTERM; it is always reaped.  Returns 0 or a negative errno.
 */
int ds_capture_run(const struct ds_capture *c, struct pr_reader *r,
		   pr_record_fn cb, void *ctx);

#endif
