/* SPDX-License-Identifier: Apache-2.0 */
/*
 * A model of this process as a capture would build it: its threads and
 * mappings read from /proc (pr_process_synthesize()) and applied to a
 * model.  Shared by the tests that drive the unwinder or the symbolizer
 * by hand over this program's own code (test-cfi.c, unwind-replay.c,
 * test-symbolize*.c), which need the objects themselves, not a session.
 */
#ifndef DS_TEST_SELF_MODEL_H
#define DS_TEST_SELF_MODEL_H

#include <check.h>
#include <linux/perf_event.h>
#include <unistd.h>

#include "perfreader.h"

static inline int self_model_apply(const struct pr_record *rec, void *model)
{
	return pr_model_apply(model, rec);
}

/* A model of this process, from /proc/self; the caller frees it. */
static inline struct pr_model *self_model(void)
{
	struct perf_event_attr attr;
	struct pr_model *m = pr_model_new(NULL);

	ck_assert_ptr_nonnull(m);
	ck_assert_int_eq(pr_event_attr(NULL, PR_SOURCE_CPU_CLOCK, 0, &attr), 0);
	ck_assert_int_eq(pr_process_synthesize(getpid(), &attr, 0, self_model_apply, m), 0);
	return m;
}

#endif
