/* SPDX-License-Identifier: Apache-2.0 */
/*
 * A counter's table (counter.c: its events and targets, opened;
 * counter_read.c: enabled, read), shared by the two files.
 */
#ifndef PR_CAPTURE_COUNTER_H
#define PR_CAPTURE_COUNTER_H

#include "capture/capture.h"

enum target_kind { TARGET_PIDS, TARGET_CPUS, TARGET_COMMAND };

/* A thread (cpu -1) or a CPU (pid and tid -1) the events count on. */
struct slot {
	pid_t pid, tid;
	int cpu;
	bool gone;      /* exited, or offline, before its events were opened */
};

struct pr_counter {
	struct pr_logger lg;
	enum target_kind kind;
	bool skip_unsupported;
	bool has_units;             /* the slots are public units */

	struct pr_event_desc *evs;
	size_t nr_evs;
	struct perf_event_attr *attrs;
	bool *unsupported;          /* left unopened (skip_unsupported) */
	bool *opened;               /* opened on some slot already */

	struct slot *slots;
	size_t nr_slots, cap_slots;
	int *fds;                   /* [slot * nr_evs + event], -1: none */
	uint64_t *ids;              /* the kernel's event ids, same layout */

	uint64_t *buf;              /* one read of the largest group */
	size_t buf_words;

	struct pr_command cmd;
	char *cmd_name;
	bool cmd_beside;            /* opts->command: run, not counted as such */
};

static inline int *fd_at(const struct pr_counter *c, size_t slot, size_t ev)
{
	return &c->fds[slot * c->nr_evs + ev];
}

static inline bool is_leader(const struct pr_counter *c, size_t ev)
{
	return c->evs[ev].leader == ev;
}

static inline size_t group_size(const struct pr_counter *c, size_t leader)
{
	size_t n = 0;

	for (size_t i = leader; i < c->nr_evs; i++)
		n += c->evs[i].leader == leader;
	return n;
}

#endif
