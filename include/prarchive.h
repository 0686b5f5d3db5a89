/* SPDX-License-Identifier: Apache-2.0 */
/*
 * prarchive.h - captures that outlive their machine: the files a capture's
 * samples landed in, kept by build-id, and read back elsewhere.
 *
 * While a recording runs, a keeper (struct pr_keeper) follows its records
 * and holds open the files every sampled process maps executable, through
 * /proc/PID/map_files: the very file, even in a container or a private
 * mount namespace that is gone by the end.  Once the perf.data file is
 * written, pr_keeper_replay() replays it, each sample unwound, to find the
 * files the frames landed in.  Those -- with their debug files, and the
 * vDSO -- are then kept by build-id:
 *
 *  - in perf's build-id cache (pr_keeper_write_cache()): DIR/PATH/BUILDID/
 *    elf and debug, and DIR/.build-id/xx/rest linking to DIR/PATH/BUILDID,
 *    which perf reads too;
 *  - in one file beside the capture (pr_keeper_write_archive(), named by
 *    pr_archive_name()): a gzipped ustar of the same .build-id tree
 *    (.build-id/xx/rest/elf and debug), each file with the code and data
 *    nothing reads zeroed, an index ("BUILDID PATH" lines) and the
 *    kernel's symbols.
 *
 * A reader of the capture on any machine extracts the archive once into a
 * cache directory (pr_archive_open()) and uses it: its directory as a debug
 * directory (pr_model_opts.debug_dirs), its kernel symbols
 * (pr_symbolizer_opts.kallsyms) and its index (pr_archive_index()).
 *
 * The conventions written at the top of perfreader.h hold.
 */
#ifndef PRARCHIVE_H
#define PRARCHIVE_H

#include <stdbool.h>
#include <stddef.h>

#include "prcommon.h"
#include "prmodel.h"
#include "prrecord.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ---- record's side: keeping the files ---- */

struct pr_keeper;

struct pr_keeper_opts {
	size_t sz;
	/* Where messages go (prcommon.h); may be NULL. */
	pr_log_fn log;
	void *log_ctx;
};

/* A keeper holding nothing yet, owned by the caller (pr_keeper_free()).
 * NULL with errno set: EINVAL for unknown options, ENOMEM. */
PR_API struct pr_keeper *pr_keeper_new(const struct pr_keeper_opts *opts);
/* Closes every file held.  Accepts NULL. */
PR_API void pr_keeper_free(struct pr_keeper *k);

/*
 * Follow `rec`, a record of the capture as it is written (the capture
 * thread's ring order will do): the first sample of a process holds every
 * file it maps executable then (/proc/PID/maps), and a later executable
 * mapping of such a process holds its file.  Each file is held once, by
 * one file descriptor, at most 256 of them: the reader needs descriptors
 * for the threads still to come.  A file that cannot be opened (its
 * process gone) is not held.  Returns 0, -EINVAL, or -ENOMEM: that file
 * is not held, the keeper goes on.  Not thread-safe.
 */
PR_API int pr_keeper_record(struct pr_keeper *k, const struct pr_record *rec);

/*
 * Once the capture is written at `path`: hold this kernel's vDSO too, read
 * every held file's build-id, and replay the capture, unwinding each
 * sample, to find the files its frames landed in (the held files are
 * found by build-id, through copies staged in a new directory under /tmp,
 * removed before this returns).  A damaged capture is replayed as far as
 * it can be read.  The log warns of each file a frame landed in that has
 * no build-id: it cannot be kept by one.  Call it once, before writing.
 * Returns 0, or a negative errno: -EINVAL, the stage's (logged), that of
 * opening or reading the capture.  Not thread-safe.
 */
PR_API int pr_keeper_replay(struct pr_keeper *k, const char *path);

/*
 * Copy the files the frames landed in, and the debug file this machine
 * has of each, into perf's build-id cache at `dir`; NULL for perf's:
 * $PERF_BUILDID_DIR, else $HOME/.debug.  A file there already stays.
 * Returns how many files the cache has now of those asked (a file that
 * cannot be copied is left out), or -EINVAL, or -ENOENT when `dir` is
 * NULL and neither variable is set.  Not thread-safe.
 */
PR_API int pr_keeper_write_cache(struct pr_keeper *k, const char *dir);

/*
 * Write the archive of the files the frames landed in (and their debug
 * files), with `kernel` the kernel's symbols (/proc/kallsyms) too, to
 * `path`: written as PATH.tmp, renamed when complete.  Returns 0, or a
 * negative errno (-EINVAL; that of the write, logged with the path).
 * Not thread-safe.
 */
PR_API int pr_keeper_write_archive(struct pr_keeper *k, const char *path, bool kernel);

/* The archive's name for capture `capture`, "CAPTURE.archive.tar.gz",
 * into `buf` (`size` bytes).  0, -EINVAL, or -ENAMETOOLONG (`buf` holds
 * what fit).  Thread-safe. */
PR_API int pr_archive_name(const char *capture, char *buf, size_t size);

/* ---- report's side: an archive extracted and used ---- */

struct pr_archive;

struct pr_archive_opts {
	size_t sz;
	/* Where messages go (prcommon.h); may be NULL. */
	pr_log_fn log;
	void *log_ctx;
};

/*
 * The archive at `path`, extracted into the caller's cache directory
 * `dir`, as DIR/archives/ID (ID: the archive file's device, inode, size
 * and modification time, so that a new archive at the same path is
 * extracted anew): once, into a temporary directory renamed into place when
 * complete, and found there by later opens.  Member names must be
 * relative, without "..", of letters, digits and "/._-"; the archive must
 * have its index.  What a failed extraction wrote is removed.  The caller
 * owns the result (pr_archive_close()).
 *
 * NULL with errno set: ENOENT when there is no archive at `path` (looked
 * at first); EINVAL for a NULL `path` or `dir`, or unknown options;
 * EBADMSG for an archive that is damaged, or not one
 * pr_keeper_write_archive() wrote; else what failed (ENOMEM, a directory
 * that cannot be made).
 */
PR_API struct pr_archive *pr_archive_open(const char *path, const char *dir,
					  const struct pr_archive_opts *opts);
/* The extraction stays in the cache directory.  Accepts NULL. */
PR_API void pr_archive_close(struct pr_archive *a);

/* The directory the archive was extracted into: a debug directory (a
 * .build-id tree) to look files up in by build-id.  Valid as long as `a`;
 * NULL for NULL. */
PR_API const char *pr_archive_dir(const struct pr_archive *a);
/* The kernel's symbols it holds, as a file in that directory (kallsyms's
 * format), or NULL when it has none.  Valid as long as `a`. */
PR_API const char *pr_archive_kallsyms(const struct pr_archive *a);

/*
 * Tell model `m` the build-id of every file the archive's index lists, by
 * path (pr_model_set_build_id()), so that files gone from this machine are
 * looked up by build-id in the archive.  For a session's model_setup, once
 * per worker's model: it only reads `a`, so it may run on several threads
 * at once.  Returns 0, -EINVAL, or the negative errno of reading the
 * index (logged with its path).
 */
PR_API int pr_archive_index(const struct pr_archive *a, struct pr_model *m);

#ifdef __cplusplus
}
#endif

#endif /* PRARCHIVE_H */
