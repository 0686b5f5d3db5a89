/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Keeping what a capture's samples need, by build-id (prarchive.h),
 * internal: keeper.c holds the files and finds, through a session, which
 * the frames landed in; cache.c copies them into perf's build-id cache;
 * tar.c writes them as an archive; extract.c reads one back.  A stage on
 * top of the session: it replays a capture as the verbs do.
 */
#ifndef PR_ARCHIVE_H
#define PR_ARCHIVE_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "base/base.h"
#include "prarchive.h"

/* A ustar block: headers and data are padded to it (tar.c, extract.c). */
#define PR_TAR_BLOCK 512

/* A file held open until the capture is written. */
struct pr_kept {
	int fd;
	dev_t dev;
	ino_t ino;
	char *path;                  /* as the process mapped it */
	uint8_t id[PR_BUILD_ID_MAX];
	size_t id_len;               /* 0: none, or not read yet */
	bool sampled;                /* a frame landed in it */
	/* The file offsets of the frames that landed in it: the code the
	 * archive keeps of it (tar.c). */
	uint64_t *offs;
	size_t nr_offs, cap_offs;
};

struct pr_keeper {
	struct pr_logger lg;
	struct pr_kept *files;
	size_t nr, cap;
	pid_t *pids;                 /* processes seen sampled */
	size_t nr_pids, cap_pids;
};

/* ---- cache.c ---- */

/* Copy the file `in` (from its start) to the new file `to`: 0, also when
 * `to` exists already, or a negative errno, with nothing left at `to`. */
int pr__keep_copy(int in, const char *to);
/* Where this machine keeps the debug file of build-id `hex` (a debug
 * package's, perf's build-id cache's), into `out`; false when nowhere. */
bool pr__keep_debug_file(const char *hex, char *out, size_t size);

#endif /* PR_ARCHIVE_H */
