/* SPDX-License-Identifier: Apache-2.0 */
/*
 * prfile.h - reading perf.data files (dwarfsample's and perf record's):
 * their records in timestamp order, their events and feature sections.
 */
#ifndef PRFILE_H
#define PRFILE_H

#include "prcommon.h"
#include "prrecord.h"

#ifdef __cplusplus
extern "C" {
#endif

struct pr_file;

struct pr_file_opts {
	size_t sz;
	pr_log_fn log;
	void *log_ctx;
};

/*
 * Open a perf.data file written by dwarfsample or by perf record
 * (little-endian, x86-64; other files are refused with a message saying
 * why).  Records are handed out in timestamp order, in one pass over the
 * file, whatever its size.  A file whose recorder did not finish (data size
 * 0, or truncated), or one cut short while it is read, is read up to its
 * last complete record, with a warning.
 * A malformed header, attr or id section is refused at once: NULL, errno
 * EBADMSG (or the I/O error), and a log message naming the byte offset; a
 * malformed record header is reported the same way when reading reaches it
 * (pr_file_read() returns -EBADMSG, then hands out what was read before it).
 * pr_file_open_mem() reads a file already in memory, which must outlive the
 * pr_file.  The caller owns the pr_file and releases it with
 * pr_file_close().
 *
 * Every pointer a pr_file hands out (records aside: see pr_file_read())
 * points into memory it owns and stays valid until pr_file_close().  A
 * pr_file is used by one thread at a time, its getters included.
 */
PR_API struct pr_file *pr_file_open(const char *path, const struct pr_file_opts *opts);
PR_API struct pr_file *pr_file_open_mem(const void *buf, size_t len,
					const struct pr_file_opts *opts);
/* Unmap and free everything.  Accepts NULL. */
PR_API void pr_file_close(struct pr_file *f);

/*
 * Pull the next record in timestamp order (ring_cpu is -1).  Returns 1, 0
 * at the end, or -EBADMSG: for a record whose body does not match its
 * event (logged with its byte offset and skipped; the next call goes on),
 * or once for a corrupt record header, past which nothing can be trusted
 * (the next calls hand out the records read before it, then return 0).
 * The record is valid until the next call on `f`.
 */
PR_API int pr_file_read(struct pr_file *f, struct pr_record *rec);

/* Push every remaining record to `cb`, as pr_reader_consume() does for
 * rings.  Returns the number of records, or the first negative return of
 * `cb`; -EBADMSG after skipping corrupt records. */
PR_API int pr_file_consume(struct pr_file *f, pr_record_fn cb, void *ctx);

/* Start again from the first record.  Accepts NULL. */
PR_API void pr_file_rewind(struct pr_file *f);

/* The number of events the file holds (0 for NULL), and event `idx`'s
 * attr as the file stores it, or NULL for an index past the last.  Valid
 * until pr_file_close(). */
PR_API size_t pr_file_nr_attrs(const struct pr_file *f);
PR_API const struct perf_event_attr *pr_file_attr(const struct pr_file *f,
						   size_t idx);
/* The event record `rec` (read from `f`) belongs to: its index for
 * pr_file_attr(); -ENOENT when it matches none, -EINVAL. */
PR_API int pr_file_event_of(const struct pr_file *f, const struct pr_record *rec);
/* An event's name as the recording gave it ("cpu-clock", "cycles:ppp":
 * perf's EVENT_DESC), else as perf names it from its attr (made on the
 * first call, hence `f` is not const); NULL for an index past the last or
 * when memory runs out.  Valid until pr_file_close(). */
PR_API const char *pr_file_event_name(struct pr_file *f, size_t idx);

enum pr_file_string {
	PR_FILE_HOSTNAME,
	PR_FILE_OSRELEASE,
	PR_FILE_VERSION,
	PR_FILE_ARCH,
	PR_FILE_CPUDESC,
};

/* A string feature of the file, or NULL when it has none.  Valid until
 * pr_file_close(). */
PR_API const char *pr_file_string(const struct pr_file *f, enum pr_file_string which);

/* The CPU counts recorded (NRCPUS), through whichever pointer is not NULL.
 * Returns 0, -ENOENT when the file has none, or -EINVAL. */
PR_API int pr_file_nr_cpus(const struct pr_file *f, uint32_t *available,
			   uint32_t *online);

/* The command line that made the file: returns argc (0 when the file has
 * none), and argv through *argv (when `argv` is not NULL).  The array and
 * its strings are valid until pr_file_close(). */
PR_API size_t pr_file_cmdline(const struct pr_file *f, const char *const **argv);

/*
 * When the capture ended, on the events' clock, through *time: the end
 * dwarfsample's writer was given (pr_writer_set_end_time()), else, as
 * for files of perf record, the last sample's time (both from the
 * SAMPLE_TIME feature).  Waits still open at the end run up to it.
 * Returns 0, -ENOENT when the file does not say, or -EINVAL.
 */
PR_API int pr_file_end_time(const struct pr_file *f, uint64_t *time);

/* A build-id the file records for a mapped file (BUILD_ID feature). */
struct pr_build_id {
	int32_t pid;              /* -1: the host */
	uint16_t cpumode;         /* PERF_RECORD_MISC_USER or _KERNEL */
	uint8_t size;
	uint8_t id[PR_BUILD_ID_MAX];
	const char *filename;
};

/* The number of build-ids the file records, and build-id `idx` (NULL for
 * an index past the last).  The struct and its filename are valid until
 * pr_file_close(). */
PR_API size_t pr_file_nr_build_ids(const struct pr_file *f);
PR_API const struct pr_build_id *pr_file_build_id(const struct pr_file *f,
						  size_t idx);

/* Counters of the file's records: complete once every record has been
 * read (pr_file_read() returned 0), of what has been read before that. */
struct pr_file_stats {
	size_t sz;
	uint64_t records;
	uint64_t samples;
	/* Sum of PERF_RECORD_LOST.lost. */
	uint64_t lost;
	uint64_t first_sample_time, last_sample_time;
	/* Records by type, indexed by enum pr_record_type; others in [0]. */
	uint64_t by_type[PR_RECORD_KERNEL_MAX];
	/* The recorder did not finish: read up to the last complete record. */
	bool truncated;
	/* The file is damaged, not merely unfinished (a recorder that
	 * stopped before writing its data size): what was read is salvaged
	 * from it, and a reader should say so.  Why: the byte offset of the
	 * corrupt record header the walk stopped at, nothing read past it
	 * (0: none); records skipped whole because their bodies did not
	 * parse; or the data section's size as its header claims larger than
	 * the bytes of it the file holds (a truncated copy).  The data
	 * section starts at byte data_offset. */
	bool damaged;
	uint64_t damaged_at;
	uint64_t corrupt_records;
	uint64_t data_offset, data_claimed, data_size;
	/* Not damage: the byte offset of a record this reader cannot read
	 * (compressed by a method other than zstd, which the file's header
	 * names; logged), where the walk stopped; 0: none.  perf record
	 * -z's zstd records are read. */
	uint64_t unsupported_at;
};

/* Copy the counters; set st->sz first.  Returns 0 or -EINVAL. */
PR_API int pr_file_stats(const struct pr_file *f, struct pr_file_stats *st);

#ifdef __cplusplus
}
#endif

#endif /* PRFILE_H */
