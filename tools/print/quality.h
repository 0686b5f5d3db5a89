/* SPDX-License-Identifier: Apache-2.0 */
#ifndef DS_QUALITY_H
#define DS_QUALITY_H

#include <stdio.h>

#include "perfreader.h"

/*
 * Why a profile is incomplete, and where: the stacks that did not reach
 * their outermost frame by the binary they ended in and the reason, and
 * the binaries whose frames nothing names -- each with what would fix it
 * (a larger copy, a rebuild, the distribution's debug package found from
 * the file's owner, a perf map).  Fed every unwound sample.
 */
struct ds_quality;

/* `stack_size`: the bytes of stack each sample copied (0: unknown);
 * `max_depth`: the unwinder's frame limit. */
struct ds_quality *ds_quality_new(uint64_t stack_size, uint32_t max_depth);
void ds_quality_free(struct ds_quality *q);

/* Count sample `rec`, unwound to `st`, of a process called `process`, its
 * user frames named through `sym` (NULL: names not counted); `cut_short`:
 * its copy was cut too short (pr_sink_sample.cut_short).  0 or -ENOMEM. */
int ds_quality_add(struct ds_quality *q, const struct pr_record *rec, const struct pr_stack *st,
		   struct pr_symbolizer *sym, const char *process, bool cut_short);

/* Add what `src` counted (another worker's share) to `q`, a row of the
 * same file, reason and process to the row already there.  The files of
 * src's rows must outlive q.  0 or -ENOMEM. */
int ds_quality_merge(struct ds_quality *q, const struct ds_quality *src);

/* The counts as a session's sink (prsession.h), into `out`: every
 * sample a session unwinds, each worker a share of its own.  The
 * session's models must outlive `q` (its rows name their files). */
void ds_quality_session(struct ds_quality *q, struct pr_sink *out);

/* The report, each line after `prefix`: at most `max_rows` rows of each
 * table (0: all), leaving out rows under `permille` of the samples or
 * frames.  Returns the number of rows written. */
size_t ds_quality_print(const struct ds_quality *q, FILE *out, const char *prefix,
			size_t max_rows, unsigned permille);

#endif
