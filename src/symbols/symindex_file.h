/* SPDX-License-Identifier: Apache-2.0 */
/*
 * A file's address index (symindex.h) as a file of its own, for the
 * cache (symcache.c): written whole, read by mapping it, trusted only
 * once every byte is checked.
 */
#ifndef PR_SYMINDEX_FILE_H
#define PR_SYMINDEX_FILE_H

#include <stddef.h>
#include <stdint.h>

#include "prrecord.h"

struct pr__symindex;

/* The settings that change what a file's index holds. */
enum {
	PR_IX_DEMANGLED = 1,         /* C++ and Rust names demangled */
};

/* What an index is of: the ELF file (by its build-id) and the settings. */
struct pr__ix_key {
	uint8_t build_id[PR_BUILD_ID_MAX];
	uint32_t build_id_size;      /* 1 to PR_BUILD_ID_MAX */
	uint32_t settings;           /* PR_IX_* */
};

/*
 * `ix` made for `key` written to `fd`, a new empty file, from its start:
 * 0 or a negative errno.  The file is little-endian; the tables are
 * written as they are in memory, so a big-endian host writes none
 * (-ENOTSUP).
 */
int pr__symindex_write(const struct pr__symindex *ix, const struct pr__ix_key *key, int fd);

/*
 * The index in the `len` bytes at `buf`, a file that
 * pr__symindex_write() wrote for `key`: the header's every field (magic,
 * format, the tables' layout version, the producing library's version,
 * the build-id and settings, the size), the table directory (each table
 * inside the file, 8-byte aligned, apart from the others, its size not
 * overflowing), the checksum of all after the header, and then every
 * entry (pr__symindex_adopt()).  The index points into `buf`; it unmaps
 * `map` (`buf`, `len` bytes) when freed, or with `map` NULL leaves `buf`
 * to the caller, who keeps it for as long as the index lives.  NULL with
 * errno set: EINVAL with *why saying what is wrong, ENOMEM.
 */
struct pr__symindex *pr__symindex_read(const void *buf, size_t len, void *map,
				       const struct pr__ix_key *key, const char **why);
/*
 * The index pr__symindex_write() just wrote to `fd` (still open, a file
 * of this process's own, not yet renamed into the cache), mapped in its
 * place: its header and directory checked, its entries and checksum not
 * (they are the built index's, written by this process).  Its pages are
 * the page cache's, mapped into the process as lookups read them, where
 * the index it was written from held all of its bytes on the heap.
 * NULL when it cannot be mapped.
 */
struct pr__symindex *pr__symindex_map_written(int fd, const struct pr__ix_key *key);

#endif /* PR_SYMINDEX_FILE_H */
