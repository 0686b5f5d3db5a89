/* SPDX-License-Identifier: Apache-2.0 */
/*
 * prcounter.h - counting events (perf stat's mode): events described as
 * prevent.h does, counting on processes, CPUs or a command, in groups read
 * together, with the counts scaled when the kernel multiplexed them.
 *
 * A counter opens one event per (event, thread) for processes and one per
 * (event, CPU) system-wide.  Events sharing a leader (struct
 * pr_event_desc.leader) form a group: opened together (the kernel counts
 * them at the same times, or not at all) and read in one read(2).  Every
 * event opens disabled; pr_counter_enable() starts them all at once.
 *
 * A counter is used from one thread at a time; pr_count_scale() is
 * thread-safe.  Each open event holds a file descriptor: a process with
 * many threads needs RLIMIT_NOFILE above threads x events.
 */
#ifndef PRCOUNTER_H
#define PRCOUNTER_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "prcommon.h"
#include "prevent.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Events counting on a target, read together.  Opaque. */
struct pr_counter;

struct pr_counter_opts {
	size_t sz;
	/* Where messages go (prcommon.h); may be NULL. */
	pr_log_fn log;
	void *log_ctx;
	/* One counter per thread of the target processes (perf stat
	 * --per-thread): reads can then be taken per thread (units).  The
	 * threads are those listed at the open (later ones count in their
	 * creator's unit, unless no_inherit).  System-wide (with every CPU:
	 * `cpus` NULL), every thread of every process, as perf stat -a
	 * --per-thread; with a CPU list, -EINVAL.  A command has no threads
	 * yet when it is opened: it refuses it (-EINVAL). */
	bool per_thread;
	/* Do not count threads and children created after the open. */
	bool no_inherit;
	/* Events the machine lacks (a hardware event without a PMU) are
	 * left unopened and read as not supported, rather than failing the
	 * open (perf stat's default set).  An unsupported group leader
	 * leaves its whole group unopened. */
	bool skip_unsupported;
	/* A command (argv, NULL-terminated, argv[0] looked up in PATH) to run
	 * while processes or CPUs count, as perf stat -a -- CMD: forked at
	 * the open and held before its exec until pr_counter_enable() has the
	 * counters counting.  It is counted only as the target has it (a CPU
	 * counts it, a process does not).  pr_counter_child() gives it; as
	 * pr_counter_open_command()'s otherwise.  Not with that function
	 * (-EINVAL).  NULL: none.  Read during the open only. */
	char *const *command;
};

/* One event's count: a plain value. */
struct pr_count {
	/* As counted. */
	uint64_t value;
	/* Nanoseconds the event was enabled, and actually counting (less
	 * when the kernel multiplexed it with others on too few counters). */
	uint64_t enabled, running;
	/* value * enabled / running: the multiplexing estimate (see
	 * pr_count_scale()). */
	double scaled;
	/* false: not opened (skip_unsupported); every other field is 0. */
	bool supported;
};

/* Where a unit counts: a thread of a process (cpu -1), or a CPU (pid and
 * tid -1). */
struct pr_counter_unit {
	pid_t pid, tid;
	int cpu;
};

/*
 * Count `evs` (`nr` of them, as pr_event_list_parse() gives them: an
 * event's leader is its own index or that of an earlier event leading
 * itself) on every thread of the processes `pids` (`nr_pids`), following
 * the threads and children they create (unless opts->no_inherit).  The
 * events are copied.  A thread that exits while its events are opened is
 * skipped; a PID that names no process fails the open (-ESRCH).
 *
 * Returns the counter, disabled, or NULL with errno set: EINVAL for bad
 * arguments (the log says which), ESRCH, or the kernel's refusal of an
 * event or a group, which the log explains: which event or group, why
 * (no PMU for a hardware event, more events in a group than the PMU has
 * counters, privileges) and what to do.  On failure nothing stays open.
 * `opts` may be NULL.
 */
PR_API struct pr_counter *pr_counter_open_pids(const struct pr_event_desc *evs, size_t nr,
					       const pid_t *pids, size_t nr_pids,
					       const struct pr_counter_opts *opts);

/*
 * Count `evs` on exactly the threads `tids` (`nr_tids`, of any
 * processes), as perf stat -t does: not on what they create, whatever
 * opts->no_inherit says; with opts->per_thread, a unit per thread.  A
 * thread that does not exist fails the open (-ESRCH, the log naming it).
 * As pr_counter_open_pids() otherwise.
 */
PR_API struct pr_counter *pr_counter_open_tids(const struct pr_event_desc *evs, size_t nr,
					       const pid_t *tids, size_t nr_tids,
					       const struct pr_counter_opts *opts);

/*
 * Count `evs` system-wide on each CPU of `cpus` (`nr_cpus` of them; NULL
 * for every online CPU), one unit per CPU.  A CPU that is offline is
 * skipped (the log says so at PR_LOG_DEBUG); none left fails with ENODEV.
 * With opts->per_thread and `cpus` NULL, one unit per thread of the
 * machine instead (cpu -1), a thread that exits meanwhile skipped.
 * Needs kernel.perf_event_paranoid <= 0 or CAP_PERFMON.  As
 * pr_counter_open_pids() otherwise.
 */
PR_API struct pr_counter *pr_counter_open_cpus(const struct pr_event_desc *evs, size_t nr,
					       const int *cpus, size_t nr_cpus,
					       const struct pr_counter_opts *opts);

/*
 * Fork `argv` (argv[0] looked up in PATH) and hold it before exec; its
 * events count from the exec on (enable_on_exec) once pr_counter_enable()
 * lets it run, together with the threads and children it creates (unless
 * opts->no_inherit).  The caller reaps the child (pr_counter_child());
 * pr_counter_close() kills and reaps one that never started; it is killed
 * (SIGKILL) when the calling thread ends, as when the caller is killed.  A
 * command that cannot be run fails pr_counter_enable() (the log says why).  As
 * pr_counter_open_pids() otherwise.
 */
PR_API struct pr_counter *pr_counter_open_command(const struct pr_event_desc *evs, size_t nr,
						  char *const argv[],
						  const struct pr_counter_opts *opts);

/* Close every event.  Accepts NULL. */
PR_API void pr_counter_close(struct pr_counter *c);

/*
 * Start counting: every group leader at once (a group counts as one).  For
 * a command, let it exec (its events start there); opts->command execs
 * once the events count.  0 or a negative errno.
 */
PR_API int pr_counter_enable(struct pr_counter *c);

/* Stop counting; the counts stay readable.  0 or a negative errno. */
PR_API int pr_counter_disable(struct pr_counter *c);

/* The command's process id (counted, or opts->command); -1 when there is
 * none. */
PR_API pid_t pr_counter_child(const struct pr_counter *c);

/* How many events, and event `idx` (NULL past the last), as given to the
 * open.  The event is valid until pr_counter_close(). */
PR_API size_t pr_counter_nr_events(const struct pr_counter *c);
PR_API const struct pr_event_desc *pr_counter_event(const struct pr_counter *c, size_t idx);

/*
 * The counts of every event, summed over every thread or CPU, into
 * `counts` (`nr` of them, at least pr_counter_nr_events()), in event
 * order.  Scaled as perf scales them: value, enabled and running are
 * summed over the units, then scaled once.  A group's events share one
 * read and so the same enabled and running times.  Readable while
 * counting and after pr_counter_disable().  0, -EINVAL (nr too small), or
 * the negative errno of a failed read.
 */
PR_API int pr_counter_read(struct pr_counter *c, struct pr_count *counts, size_t nr);

/*
 * Units, each read on its own: the CPUs of a system-wide counter, or the
 * threads of one opened with per_thread; none otherwise.
 * pr_counter_unit() fills `u` for unit `i` (0, -ERANGE past the last);
 * pr_counter_read_unit() reads its counts as pr_counter_read() does the
 * totals (-ERANGE past the last unit).
 */
PR_API size_t pr_counter_nr_units(const struct pr_counter *c);
PR_API int pr_counter_unit(const struct pr_counter *c, size_t i, struct pr_counter_unit *u);
PR_API int pr_counter_read_unit(struct pr_counter *c, size_t i, struct pr_count *counts,
				size_t nr);

/*
 * The scaling alone, for callers reading event fds themselves: value *
 * enabled / running; value when running >= enabled (it was never
 * multiplexed); 0 when running is 0 (it never counted).  Thread-safe.
 */
PR_API double pr_count_scale(uint64_t value, uint64_t enabled, uint64_t running);

#ifdef __cplusplus
}
#endif

#endif /* PRCOUNTER_H */
