/* SPDX-License-Identifier: Apache-2.0 */
/*
 * prtrace.h - a tracepoint sample's fields: the payload the kernel copies
 * into each sample of a tracepoint (PERF_SAMPLE_RAW, pr_sample.raw),
 * decoded with the tracepoint's format (tracefs's events/SYS/NAME/format,
 * or the copy a perf.data file keeps in its TRACING_DATA feature) into
 * the text perf script prints after the event's name:
 * "fd: 0x00000001, buf: 0x55d0c1a2b040, count: 0x00001000".
 */
#ifndef PRTRACE_H
#define PRTRACE_H

#include <stdio.h>

#include "prcommon.h"
#include "prevent.h"

#ifdef __cplusplus
extern "C" {
#endif

struct pr_file;

/* Formats of tracepoints, by "subsystem:name". */
struct pr_tp_formats;

/* An empty set, owned by the caller (pr_tp_formats_free()); NULL with
 * errno ENOMEM. */
PR_API struct pr_tp_formats *pr_tp_formats_new(void);
/* Accepts NULL. */
PR_API void pr_tp_formats_free(struct pr_tp_formats *t);

/*
 * Add the format of tracepoint `event` ("subsystem:name", a modifier
 * after a second colon ignored), read from tracefs where
 * pr_tracefs_path() finds it (`opts` as there: its log gets what went
 * wrong; may be NULL).  One already in the set is kept.  Returns 0,
 * -EINVAL (not a tracepoint's name), -ENOENT (no such tracepoint),
 * -ENODEV (no tracefs), -EACCES, -EBADMSG (a format that does not
 * parse), -ENOMEM.
 */
PR_API int pr_tp_formats_load(struct pr_tp_formats *t, const char *event,
			      const struct pr_event_lookup_opts *opts);

/*
 * Add a format from its text (a tracefs format file's bytes, `len` of
 * them, need not be terminated) as tracepoint "system:NAME" (NAME from
 * its "name:" line).  Returns 0, -EINVAL, -EBADMSG (no name or no
 * field), -ENOMEM.
 */
PR_API int pr_tp_formats_add(struct pr_tp_formats *t, const char *system, const char *text,
			     size_t len);

/* The formats perf.data file `f` keeps (its TRACING_DATA feature), or
 * NULL when it has none, or they do not parse (said to the file's log).
 * Valid until pr_file_close(). */
PR_API const struct pr_tp_formats *pr_file_tp_formats(const struct pr_file *f);

/* Whether `t` has the format of tracepoint `event` ("subsystem:name",
 * a modifier after ignored); false for NULL.  Thread-safe on a set no
 * one adds to. */
PR_API bool pr_tp_formats_has(const struct pr_tp_formats *t, const char *event);

/*
 * Print the `size` bytes of `raw`, a sample's payload of tracepoint
 * `event` ("subsystem:name[:modifier]"), to `out` as perf script does:
 * through the format's print fmt, or, where that uses what this decoder
 * does not evaluate (__print_flags(), __print_symbolic()...), each field
 * as "name=value".  A payload shorter than its fields is printed as far
 * as it goes, then "[truncated: N of M bytes]".  Returns 0, -ENOENT (no
 * format for `event`: nothing printed), -EINVAL (NULL).  Thread-safe on
 * a set no one adds to.
 */
PR_API int pr_tp_formats_print(const struct pr_tp_formats *t, const char *event,
			       const void *raw, size_t size, FILE *out);

#ifdef __cplusplus
}
#endif

#endif /* PRTRACE_H */
