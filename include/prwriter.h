/* SPDX-License-Identifier: Apache-2.0 */
/*
 * prwriter.h - writing perf.data files that perf and dwarfsample read.
 */
#ifndef PRWRITER_H
#define PRWRITER_H

#include "prcommon.h"
#include "prrecord.h"

#ifdef __cplusplus
extern "C" {
#endif

struct pr_writer;

struct pr_writer_opts {
	size_t sz;
	/* The command line recorded in the file (perf's CMDLINE feature). */
	int argc;
	char *const *argv;
	pr_log_fn log;
	void *log_ctx;
	/* The records written are a live capture's, made on this machine as
	 * they come: the root of each process that maps JIT code (executable
	 * anonymous memory, a jitdump file) is kept open from that record on,
	 * and at close its perf map (/tmp/perf-PID.map) and jitdump file
	 * (jit-PID.dump, where it mapped it, else in /tmp), as the process
	 * sees them, are read and carried in the file (a feature section of
	 * dwarfsample's own, which perf's tools skip), so that a report
	 * elsewhere, or after they are gone, names its JIT frames.  At most 128 processes; each file as the
	 * symbolizer takes it (regular, not a link, owned by root or the
	 * process's user; 64 MiB a perf map, 256 MiB a jitdump). */
	bool jit_files;
};

/* One event of a file: its attr, the kernel ids its records carry
 * (pr_reader_event_attr(), pr_reader_event_ids()), and its name as perf
 * spells it ("page-faults", "sched:sched_switch", "cycles:u":
 * pr_event_desc.name), which the file's EVENT_DESC gives perf's tools;
 * NULL names it from its attr. */
struct pr_writer_event {
	const struct perf_event_attr *attr;
	const uint64_t *ids;
	size_t nr_ids;
	const char *name;
};

/*
 * Create `path` (truncating it) as a perf.data file for records of events
 * opened with `attr`, whose kernel ids are `ids` (pr_reader_ids()).  The
 * header is written at once, so a recorder killed later leaves a file that
 * pr_file_open() still reads up to its last complete record.  NULL with
 * errno set (and a log message) on failure.  `attr`, `ids` and the
 * options' argv are copied.  The caller owns the writer and releases it
 * with pr_writer_close().  Not thread-safe.
 */
PR_API struct pr_writer *pr_writer_open(const char *path,
					const struct perf_event_attr *attr,
					const uint64_t *ids, size_t nr_ids,
					const struct pr_writer_opts *opts);

/*
 * The same for `nr` (>= 1) events, in the order the file lists them (its
 * EVENT_DESC names each by its name, else as perf does from its attr:
 * "cpu-clock", "cycles:u", "context-switches").  Records of several
 * events must carry their id (PERF_SAMPLE_IDENTIFIER), as a reader's do
 * when it opens several.  `events`, their attrs, ids and names are
 * copied.  pr_writer_open() is this with
 * one event.  NULL with errno EINVAL for no event, a NULL attr, or ids
 * missing; otherwise as pr_writer_open().
 */
PR_API struct pr_writer *pr_writer_open_events(const char *path,
					       const struct pr_writer_event *events,
					       size_t nr,
					       const struct pr_writer_opts *opts);

/*
 * The capture ran until `time` (on the events' clock: CLOCK_MONOTONIC for
 * the library's events), which may be past the last record: a thread
 * still off the CPU then waited until it.  Written at close;
 * pr_file_end_time() reads it back.  Returns 0 or -EINVAL.
 */
PR_API int pr_writer_set_end_time(struct pr_writer *w, uint64_t time);

/*
 * Append a record (its raw bytes).  The writer also follows mappings and
 * samples (of every event; a switch-out sample by its user registers), to
 * list in the file the build-id of every mapped file a sample landed in.  Returns 0 or the negative errno of a failed write (logged
 * once; later calls return it too).
 */
PR_API int pr_writer_write(struct pr_writer *w, const struct pr_record *rec);

/*
 * Mark the end of a drain of every ring: perf sorts records only within
 * the rounds these delimit.  Also pushes buffered records to the file.
 */
PR_API int pr_writer_finish_round(struct pr_writer *w);

/*
 * Finish the file: the feature sections (build-ids, host name, OS release,
 * architecture, CPUs, command line, event description, sample times,
 * clock) and
 * the final header.  Frees the writer whatever happens; returns 0 or the
 * first error the writer met.  Accepts NULL (returns 0).
 */
PR_API int pr_writer_close(struct pr_writer *w);

#ifdef __cplusplus
}
#endif

#endif /* PRWRITER_H */
