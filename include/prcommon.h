/* SPDX-License-Identifier: Apache-2.0 */
/*
 * prcommon.h - what every perfreader header shares: the export marker,
 * options structs, logging and error strings.  The conventions are in
 * perfreader.h.
 */
#ifndef PRCOMMON_H
#define PRCOMMON_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#ifdef __cplusplus
extern "C" {
#endif

#if defined(__GNUC__) && __GNUC__ >= 4
#define PR_API __attribute__((visibility("default")))
#else
#define PR_API
#endif

/* The kernel's event description, from <linux/perf_event.h>, which these
 * headers leave to the caller to include. */
struct perf_event_attr;

/* Declare and zero an options struct with its size filled in:
 *     PR_OPTS(pr_event_opts, o, .freq = 999);  */
#define PR_OPTS(TYPE, NAME, ...)                                              \
	struct TYPE NAME = { .sz = sizeof(struct TYPE), __VA_ARGS__ }

/* ------------------------------------------------------------------------
 * Logging
 */

enum pr_log_level {
	PR_LOG_ERROR = 0,
	PR_LOG_WARN = 1,
	PR_LOG_INFO = 2,
	PR_LOG_DEBUG = 3,
};

/*
 * Messages that advise changing a setting name it with these words, and
 * with no program's flag: "debug directories" (pr_model_opts.debug_dirs),
 * "kallsyms file" (pr_symbolizer_opts.kallsyms),
 * "sampling frequency" (pr_event_opts.freq), "stack size"
 * (pr_event_opts.stack_size), "ring pages"
 * (pr_reader_opts.ring_pages), "output path" (pr_writer_open()'s path),
 * "kernel call chains" (pr_event_opts.kernel_callchain), "system-wide
 * sampling" (pr_reader_open_cpus()), "output directory"
 * (pr_uploader_opts.out_dir), "spool directory" (pr_uploader_opts.spool_dir),
 * "spool size" (pr_uploader_opts.spool_max_bytes), "Pyroscope user and
 * password" (pr_uploader_opts.pyroscope_user, _password), "OTLP headers"
 * (pr_uploader_opts.otlp_headers).  A program may key its
 * own names for them (a command's flags) on these.
 */
#define PR_LOG_SETTING_DEBUG_DIRS "debug directories"
#define PR_LOG_SETTING_KALLSYMS "kallsyms file"
#define PR_LOG_SETTING_FREQUENCY "sampling frequency"
#define PR_LOG_SETTING_STACK_SIZE "stack size"
#define PR_LOG_SETTING_RING_PAGES "ring pages"
#define PR_LOG_SETTING_OUTPUT_PATH "output path"
#define PR_LOG_SETTING_KERNEL_CHAINS "kernel call chains"
#define PR_LOG_SETTING_SYSTEM_WIDE "system-wide sampling"
#define PR_LOG_SETTING_OUT_DIR "output directory"
#define PR_LOG_SETTING_SPOOL_DIR "spool directory"
#define PR_LOG_SETTING_SPOOL_SIZE "spool size"
#define PR_LOG_SETTING_PYROSCOPE_CREDENTIALS "Pyroscope user and password"
#define PR_LOG_SETTING_OTLP_HEADERS "OTLP headers"

/*
 * Receives one complete message without a trailing newline.  `msg` is valid
 * only during the call.  Called from whichever thread made the library call
 * that produced the message.
 */
typedef void (*pr_log_fn)(enum pr_log_level level, const char *msg, void *ctx);

/*
 * Describe a return code of this library in `buf` (always NUL-terminated).
 * Returns `buf`.  Thread-safe.
 */
PR_API const char *pr_strerror(int err, char *buf, size_t len);

#ifdef __cplusplus
}
#endif

#endif /* PRCOMMON_H */
