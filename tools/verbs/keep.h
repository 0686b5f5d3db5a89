/* SPDX-License-Identifier: Apache-2.0 */
/*
 * What `record` keeps (archive.h's ds_keep), shared by its two halves:
 * keep.c holds the files and finds which the samples landed in;
 * archive.c writes them as a ustar archive and reads one back for
 * report.
 */
#ifndef DS_KEEP_H
#define DS_KEEP_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "archive.h"

/* Files held open at most: the reader needs descriptors for the events
 * of threads still to come. */
#define MAX_HELD 256

/* A file held open for the end. */
struct kept {
	int fd;
	dev_t dev;
	ino_t ino;
	char *path;                  /* as the process mapped it */
	uint8_t id[PR_BUILD_ID_MAX];
	size_t id_len;               /* 0: none, or not read yet */
	bool sampled;                /* a frame landed in it */
	/* The file offsets of the frames that landed in it: the code the
	 * archive keeps of it (slim()). */
	uint64_t *offs;
	size_t nr_offs, cap_offs;
};

struct ds_keep {
	struct kept *files;
	size_t nr, cap;
	pid_t *pids;                 /* processes seen sampled */
	size_t nr_pids, cap_pids;
};


/* `len` bytes of `id` as lowercase hex into `out` (2 * len + 1 bytes). */
void ds_hex(char *out, const uint8_t *id, size_t len);
/* Where a debug file for build-id `h` (hex) is on this machine, into
 * `out`; false when nowhere. */
bool ds_debug_file(const char *h, char *out, size_t len);
/* Copy the file at `from` to `to`: 0 or -1. */
int ds_copy_path(const char *from, const char *to);
/* The archive of what `k` holds (the files its samples landed in, with
 * their debug files, and with `kernel` the kernel's symbols), written
 * to `archive`: 0, or -1 after saying why. */
int ds_archive_write(struct ds_keep *k, const char *archive, bool kernel);

#endif
