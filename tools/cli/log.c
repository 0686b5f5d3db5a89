/* SPDX-License-Identifier: Apache-2.0 */
/* The command's messages: the library's log callback, the verbosity, and
 * the agent's stamped or journal-prefixed lines. */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <limits.h>
#include <linux/perf_event.h>
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

static int log_verbosity = PR_LOG_WARN;

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
	{ PR_LOG_SETTING_OUT_DIR, "--out-dir" },
	{ PR_LOG_SETTING_SPOOL_DIR, "--spool-dir" },
	{ PR_LOG_SETTING_SPOOL_SIZE, "--spool-size" },
	{ PR_LOG_SETTING_PYROSCOPE_CREDENTIALS, "DWARFSAMPLE_PYROSCOPE_USER and "
	  "DWARFSAMPLE_PYROSCOPE_PASSWORD, in the environment or --credentials-file" },
	{ PR_LOG_SETTING_OTLP_HEADERS, "DWARFSAMPLE_OTLP_HEADERS=Authorization=..., in the "
	  "environment or --credentials-file" },
};

/* `msg` into `out` (always terminated), each setting it names followed by
 * its flag: "... to the debug directories (--debug-dir)"; one named alone
 * in parentheses is its flag there: "the spool is full (--spool-size)". */
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
		if (n && out[n - 1] == '(' && msg[w] == ')')
			n += (size_t)snprintf(out + n, len - n, "%s", setting_flags[i].flag);
		else
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

/* The library's message of `level`, when the verbosity reaches it,
 * printed as one of level `shown`. */
static void library_line(enum pr_log_level level, enum pr_log_level shown, const char *msg)
{
	char text[2048];

	if ((int)level > log_verbosity)
		return;
	with_flags(text, sizeof(text), msg);
	emit(shown, text);
}

void ds_log(enum pr_log_level level, const char *msg, void *ctx)
{
	(void)ctx;
	library_line(level, level, msg);
}

void ds_log_own(enum pr_log_level level, const char *msg, void *ctx)
{
	(void)ctx;
	/* As ds_err() says it. */
	library_line(level, level == PR_LOG_ERROR && log_style == LOG_PLAIN ? PR_LOG_INFO : level,
		     msg);
}

int ds_quality_report(const struct pr_quality *q, FILE *out, const char *prefix,
		      size_t max_rows, unsigned permille)
{
	PR_OPTS(pr_quality_report_opts, o, .prefix = prefix, .max_rows = max_rows,
		.permille = permille, .stack_size_name = "--stack-size",
		.debug_dir_name = "--debug-dir", .max_depth_name = "--max-depth",
		.log_name = "-v", .kernel_name = "-k", .python_name = "--python -p PID",
		.off_cpu_stack_size_name = "--off-cpu-stack-size");

	return pr_quality_report(q, out, &o);
}

void ds_quality_copy(struct pr_quality_opts *qo, const struct perf_event_attr *attr)
{
	if (pr_event_source_of(attr) == PR_SOURCE_CONTEXT_SWITCH)
		qo->off_cpu_stack_size = attr->sample_stack_user;
	else if (!qo->stack_size)
		qo->stack_size = attr->sample_stack_user;
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
