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

/*
 * The options of the functions below that look events up (parsing,
 * finding tracefs, checking that an event opens), which log.  (Binaries
 * linked against version 2.0 of the library keep its signatures, with
 * bare log and log_ctx arguments in the place of `opts`.)
 */
struct pr_event_lookup_opts {
	size_t sz;
	/* Where messages go; may be NULL (they are dropped). */
	pr_log_fn log;
	void *log_ctx;
};

/*
 * Parse one event: "page-faults", "faults:u", "sched:sched_switch",
 * "cycles:k".  Names are perf's, with its aliases ("faults", "cs",
 * "migrations", "cpu-cycles", "branch-instructions", "idle-cycles-*");
 * ev->name gets the canonical spelling and the modifier as given.
 * Modifiers: ":u" (user mode only), ":k" (kernel only), ":uk" or ":ku"
 * (both, as without one).  A tracepoint "subsystem:name[:modifier]" gets
 * its id from tracefs (pr_tracefs_path()).  Surrounding blanks are
 * ignored.  ev->leader is 0.
 *
 * Returns 0; -EINVAL for bad syntax or an unknown modifier; -ENOENT for
 * an unknown event or tracepoint (the message suggests close names and
 * says where to look: `perf list`, the tracefs events directory); -ENODEV
 * when tracefs cannot be found or mounted and -EACCES when it cannot be
 * read (the message says what to do); -EINVAL for bad options.  `opts`
 * may be NULL.  `*ev` is written only on success.  Thread-safe.
 */
PR_API int pr_event_parse(const char *s, struct pr_event_desc *ev,
			  const struct pr_event_lookup_opts *opts);

/*
 * Parse a comma-separated list with groups, as perf's -e:
 * "cycles,{page-faults,cs}:u,task-clock".  A group's modifier applies to
 * each of its members (adding to a member's own, as perf does); each
 * member's leader is the index of the group's first event, an event
 * outside a group leads itself.  Groups do not nest; empty items are
 * errors.  Fills evs[0..max).
 *
 * Returns the number of events, or a negative errno as pr_event_parse(),
 * or -E2BIG when there are more than `max`.  `evs` may be NULL when `max`
 * is 0.  Thread-safe.
 */
PR_API int pr_event_list_parse(const char *s, struct pr_event_desc *evs, size_t max,
			       const struct pr_event_lookup_opts *opts);

/*
 * Describe `attr` as perf names it: built-in events by their canonical
 * name, tracepoints by "subsystem:name" found by id in tracefs
 * ("tracepoint ID" when it cannot be), raw events "raw 0xCONFIG" and any
 * other "TYPE:0xCONFIG"; the modifier ":u" or ":k" from exclude_kernel or
 * exclude_user (the hypervisor bit is ignored).  ev->leader is 0.  A
 * tracepoint's name is looked up as pr_tracefs_path() finds tracefs
 * (mounting it if it may), reading every id file until one matches.
 * Returns 0, or -EINVAL for NULL.  Thread-safe.
 */
PR_API int pr_event_desc_from_attr(const struct perf_event_attr *attr,
				   struct pr_event_desc *ev);

/*
 * Where tracefs is mounted: /sys/kernel/tracing, /sys/kernel/debug/tracing
 * or wherever /proc/mounts says.  When it is mounted nowhere and the
 * caller may mount (CAP_SYS_ADMIN), mount it on /sys/kernel/tracing, as
 * perf does; the mount stays.  Returns 0 with the path in `buf`; -ENODEV
 * (not mounted and cannot be, or the kernel has none) or -ENAMETOOLONG
 * (`buf` too small), with a message saying what to do; -EINVAL for a NULL
 * or empty `buf` or bad options.  `opts` may be NULL.  Thread-safe.
 */
PR_API int pr_tracefs_path(char *buf, size_t size, const struct pr_event_lookup_opts *opts);

/* True for the events that count nanoseconds (cpu-clock, task-clock);
 * false for NULL.  Thread-safe. */
PR_API bool pr_event_counts_ns(const struct pr_event_desc *ev);

/*
 * The period `ev` is sampled at when neither a period nor a frequency is
 * asked for (pr_event_opts): 1, every hit, for tracepoints and the
 * sparse software events (page faults of any kind, context switches,
 * CPU migrations, alignment and emulation faults), whose bursts the
 * kernel's frequency mode misjudges; 0 for the others, sampled by
 * frequency.  0 for NULL.  Thread-safe.
 */
PR_API uint64_t pr_event_default_period(const struct pr_event_desc *ev);

/*
 * The canonical names of the hardware and software events
 * pr_event_parse() knows, software first, for help texts: the i-th, or
 * NULL past the last.  Aliases are accepted but not listed.  Static
 * strings.  Thread-safe.
 */
PR_API const char *pr_event_known_name(size_t i);

/*
 * Can `ev` be opened here?  Opens it counting on the calling thread and
 * closes it.  Returns 0, or the negative errno of the open: for a
 * hardware event without a PMU (-ENOENT, -EOPNOTSUPP, -ENODEV) the
 * message says so and suggests a software event; other failures are
 * explained as the reader explains them (permissions, limits), naming
 * the event.  -EINVAL for NULL or bad options.  `opts` may be NULL.
 * Thread-safe.
 */
PR_API int pr_event_check(const struct pr_event_desc *ev,
			  const struct pr_event_lookup_opts *opts);

#ifdef __cplusplus
}
#endif

#endif /* PREVENT_H */
