/* SPDX-License-Identifier: Apache-2.0 */
/*
 * perf script's text of off-CPU time: each switch-out sample is printed
 * when its wait ends, as perf prints its own off-CPU samples (event
 * "offcpu-time", the wait's ns as the period, the time it began), and
 * where the time went is counted per process as the profile counts it.
 */
#ifndef DS_SCRIPTWAITS_H
#define DS_SCRIPTWAITS_H

#include "perfscript.h"
#include "prprofile.h"

/* The event name perf gives its off-CPU samples. */
#define DS_OFFCPU_EVENT "offcpu-time"

struct ds_waits;

/* Printing through `w` (which must outlive it), dropping waits shorter
 * than `min_ns`.  NULL out of memory. */
struct ds_waits *ds_waits_new(struct ps_writer *w, uint64_t min_ns);
/* Frees the samples still held, unprinted.  Accepts NULL. */
void ds_waits_free(struct ds_waits *x);

/* A switch-out sample of thread `comm` of process `process` (either may
 * be NULL): its frames are rendered now, held until its wait ends.  0,
 * -EINVAL (no tid or time) or -ENOMEM. */
int ds_waits_switch(struct ds_waits *x, const struct pr_record *rec, const struct pr_stack *st,
		    struct pr_symbolizer *sym, const char *comm, const char *process);
/* Any other record, in time order: switches and exits end waits, whose
 * samples are printed then.  0, -ENOMEM or -EIO (the output failed). */
int ds_waits_record(struct ds_waits *x, const struct pr_record *rec);
/* The end of the run at `time`: the waits still open end there. */
int ds_waits_end(struct ds_waits *x, uint64_t time);
/* A CPU sample of process `pid` (called `process`, or NULL) standing for
 * `ns`, counted in the times.  0 or -ENOMEM. */
int ds_waits_cpu(struct ds_waits *x, uint32_t pid, const char *process, uint64_t ns);
/* As pr_profile_times(): process `pid`, or everything for 0. */
int ds_waits_times(const struct ds_waits *x, uint32_t pid, struct pr_profile_times *t);
/* As pr_profile_pids() and pr_profile_process(): the processes seen,
 * most time (on and off the CPU) first, and the name a process's first
 * sample gave it (NULL when none did; valid until ds_waits_free()). */
size_t ds_waits_pids(const struct ds_waits *x, uint32_t *pids, size_t max);
const char *ds_waits_process(const struct ds_waits *x, uint32_t pid);

#endif
