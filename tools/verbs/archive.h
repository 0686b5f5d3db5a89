/* SPDX-License-Identifier: Apache-2.0 */
#ifndef DS_ARCHIVE_H
#define DS_ARCHIVE_H

#include <stdbool.h>
#include <stddef.h>

#include "perfreader.h"

/*
 * Captures that outlive their machine.  While `record` runs, the files
 * every sampled process has mapped executable are held open (through
 * /proc/PID/map_files: the very file, even in a container or a private
 * mount namespace that is gone by the end).  When it ends, the capture is
 * replayed to find the files the samples' frames landed in, and those --
 * with their debug files, and the vDSO -- are kept by build-id:
 *   in a build-id cache laid out like perf's (DIR/PATH/BUILDID/elf and
 *   debug, DIR/.build-id/xx/rest linking to it), which perf reads too;
 *   with --archive, in one file beside the capture, FILE.archive.tar.gz
 *   (a gzipped ustar): the same .build-id tree, each file with the code
 *   and data nothing reads zeroed, a path -> build-id index, and the
 *   kernel's symbols, which `report -i FILE` extracts and uses by
 *   itself.
 */
struct ds_keep;

struct ds_keep *ds_keep_new(void);
void ds_keep_free(struct ds_keep *k);
/* Every record as recorded (the capture thread's order is fine). */
void ds_keep_record(struct ds_keep *k, const struct pr_record *rec);
/* After the capture `data` is written: keep what its samples need in
 * `cache_dir` (NULL: no cache) and in `archive` (NULL: none), with the
 * kernel's symbols when `kernel`.  0 or -1 after saying why. */
int ds_keep_finish(struct ds_keep *k, const char *data, const char *cache_dir,
		   const char *archive, bool kernel);

/* The archive beside capture `input` (INPUT.archive.tar.gz), extracted once
 * into dwarfsample's cache: its directory into `dir` (a debug directory
 * for the unwinder and symbolizer), and into `kallsyms` the kernel
 * symbols it holds ("" when none).  False when there is no archive, after
 * saying why when there is one that cannot be used. */
bool ds_archive_use(const char *input, char *dir, size_t len, char *kallsyms, size_t klen);
/* Tell `m` the build-ids of the archive extracted at `dir`, by path.
 * 0, or -1 after saying why. */
int ds_archive_index(const char *dir, struct pr_model *m);

/* The archive's name for capture `data`. */
void ds_archive_name(const char *data, char *buf, size_t len);

#endif
