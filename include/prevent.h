/* SPDX-License-Identifier: Apache-2.0 */
/*
 * prevent.h - events by name, as perf spells them: software and hardware
 * events and tracepoints ("subsystem:name"), with the ":u" and ":k"
 * modifiers, in lists with "{a,b}" groups.  A parsed event is a plain
 * value: hand it to pr_event_attr() (prreader.h) through
 * pr_event_opts.desc to sample it, or to the counters (prcounter.h).
 */
#ifndef PREVENT_H
#define PREVENT_H

#include <stdbool.h>
#include <stdint.h>

#include "prcommon.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Room for a name, its terminating NUL included. */
#define PR_EVENT_NAME_MAX 128

/* An event, as perf names it. */
struct pr_event_desc {
	/* PERF_TYPE_HARDWARE, PERF_TYPE_SOFTWARE or PERF_TYPE_TRACEPOINT. */
	uint32_t type;
	/* PERF_COUNT_HW_* or PERF_COUNT_SW_*; a tracepoint's id. */
	uint64_t config;
	/* perf's canonical spelling, the modifier as given: "page-faults"
	 * (for "faults"), "context-switches" (for "cs"),
	 * "sched:sched_switch", "cycles:u". */
	char name[PR_EVENT_NAME_MAX];
	/* ":k": count only in the kernel. */
	bool exclude_user;
	/* ":u": count only in user mode.  The hypervisor is always
	 * excluded. */
	bool exclude_kernel;
	/* In a list: the index of the first event of its group, which
	 * leads it; an event alone leads itself. */
	uint32_t leader;
};

#ifdef __cplusplus
}
#endif

#endif /* PREVENT_H */
