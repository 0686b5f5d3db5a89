/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Which mapped files a recording's samples landed in, and their
 * build-ids: what a perf.data file's BUILD_ID feature lists, so that a
 * replay elsewhere finds each file by build-id.
 *
 * Two passes over the records, each with its own model, because records
 * arrive ring by ring, not in time order.  As they are written,
 * pr__hits_track() follows the mappings to read a sampled file's build-id
 * through /proc/PID/map_files while its process still runs.  Replayed in
 * time order at the end, pr__hits_replay() settles which files were hit:
 * a sample's mapping is the one in force at its time.
 */
#ifndef PR_MODEL_HITS_H
#define PR_MODEL_HITS_H

#include "model/model.h"

struct pr_hits;

/* NULL when out of memory. */
struct pr_hits *pr__hits_new(void);
/* Accepts NULL. */
void pr__hits_free(struct pr_hits *h);

/* Follow `rec` as it is written, in ring order.  0 or -ENOMEM. */
int pr__hits_track(struct pr_hits *h, const struct pr_record *rec);
/* Follow `rec` of the replay in time order.  0 or -ENOMEM. */
int pr__hits_replay(struct pr_hits *h, const struct pr_record *rec);

/* After the replay, the next file a sample landed in from position *it
 * (0 to start): its path (valid as long as `h`), its build-id into `id`
 * (PR_BUILD_ID_MAX bytes) and the id's length through *len (0: none found).
 * NULL after the last. */
const char *pr__hits_next(struct pr_hits *h, size_t *it, uint8_t *id, size_t *len);
/* Whether a replayed sample was taken in the kernel. */
bool pr__hits_kernel(const struct pr_hits *h);

#endif /* PR_MODEL_HITS_H */
