/* SPDX-License-Identifier: Apache-2.0 */
/*
 * prmodel.h - the process model: every process's mappings and threads,
 * kept current from the records applied to it.
 */
#ifndef PRMODEL_H
#define PRMODEL_H

#include "prcommon.h"
#include "prrecord.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ------------------------------------------------------------------------
 * The process model: every process's mappings and threads, kept current
 * from MMAP, MMAP2, FORK, EXIT, COMM and SAMPLE records applied in
 * timestamp order (a file's records come in that order; so do synthesized
 * ones, at time 0).  After an exec, the old image's mappings stay behind
 * the new one's, for samples taken inside exec, until a SAMPLE shows the
 * new image running: feed it samples too, each before it is unwound.
 * Mapped files (DSOs) are shared by every process that maps them.
 * Not thread-safe: an unwinder and a symbolizer over the model read it
 * while they work, so they run on the thread that applies records, or
 * between applications.
 */

struct pr_model;
struct pr_dso;

/* An empty model, owned by the caller; NULL with errno set on failure. */
PR_API struct pr_model *pr_model_new(void);
/* Free the model and every process and DSO in it.  Accepts NULL. */
PR_API void pr_model_free(struct pr_model *m);

/* Apply one record (samples included); other record types are ignored.
 * Returns 0, -EINVAL or -ENOMEM. */
PR_API int pr_model_apply(struct pr_model *m, const struct pr_record *rec);

/* A thread's name (its COMM, or its creator's), or NULL when the model
 * has not seen the thread; "swapper" for thread 0, the idle task, as perf
 * calls it.  Valid until the next pr_model_apply(). */
PR_API const char *pr_model_comm(const struct pr_model *m, uint32_t tid);

/*
 * Tell the model the build-id of the file at `path`, as a perf.data file's
 * BUILD_ID feature records, so it can be found by build-id wherever this
 * machine keeps it.  Applies to mappings of that path seen before and
 * after.  Returns 0, -EINVAL or -ENOMEM.
 */
PR_API int pr_model_set_build_id(struct pr_model *m, const char *path,
				 const uint8_t *id, size_t len);

/* A mapped file's path as the mapping record names it (NULL for a NULL
 * dso), and its build-id through `id` when not NULL (returns the length,
 * 0 when unknown).  A pr_dso (from a pr_frame) and what these return are
 * valid as long as the model. */
PR_API const char *pr_dso_path(const struct pr_dso *d);
PR_API size_t pr_dso_build_id(const struct pr_dso *d, const uint8_t **id);

struct pr_file;

/* Tell `m` every build-id `f` records (pr_model_set_build_id()).  Returns
 * 0, -EINVAL or -ENOMEM. */
PR_API int pr_model_use_file(struct pr_model *m, const struct pr_file *f);

#ifdef __cplusplus
}
#endif

#endif /* PRMODEL_H */
