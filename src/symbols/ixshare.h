/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Address indexes shared by the symbolizers of one session's workers
 * (ixshare.c): each file's index (symindex.h) made, or mapped from the
 * cache (symcache.h), once among them, and read by all without a lock.
 */
#ifndef PR_IXSHARE_H
#define PR_IXSHARE_H

#include <stdbool.h>
#include <stdint.h>

#include "symbols/symindex_file.h"

struct pr__symindex;
struct pr__ixshare;
struct pr__ixshare_file;

/*
 * What makes two workers' files one: the index's key (build-id and
 * settings, symcache.c's); for a file without a build-id, the settings
 * and the file as this host has it (device, inode and size of what was
 * mapped; key.build_id_size 0).
 */
struct pr__ixshare_id {
	struct pr__ix_key key;
	uint64_t dev, ino, size;
};

struct pr__ixshare_stats {
	uint64_t built;              /* indexes made by a symbolizer, then shared */
	uint64_t mapped;             /* ... mapped from the cache by one */
	uint64_t shared;             /* times one was taken as made already */
	uint64_t waited;             /* ... of them, waiting while it was made */
	uint64_t files, bytes;       /* held now: indexes, and their bytes */
};

/*
 * An empty set, one reference held by the caller.  NULL with errno set
 * (ENOMEM).  Thread-safe: a mutex guards the set, taken only to find,
 * publish or put a file, never while an index is read.
 */
struct pr__ixshare *pr__ixshare_new(void);
/* One more reference to `set` (a symbolizer's): returns it. */
struct pr__ixshare *pr__ixshare_get(struct pr__ixshare *set);
/* Drop a reference; the last frees the set, which must hold no file
 * then (each held file is put first).  Accepts NULL. */
void pr__ixshare_put(struct pr__ixshare *set);

/*
 * The file `id`, a reference to it held by the caller, with the line
 * table when `lines`.  Either made already by another symbolizer: then
 * *make is false and pr__ixshare_index() gives it (a symbolizer asking
 * while another makes it waits until that one publishes); or the caller
 * is the one to make it: *make is true, and it must call
 * pr__ixshare_publish() next, whatever it finds.  NULL when out of
 * memory (*make true: the caller makes its own, unshared).
 */
struct pr__ixshare_file *pr__ixshare_find(struct pr__ixshare *set,
					  const struct pr__ixshare_id *id, bool lines,
					  bool *make);
/*
 * The maker's index for the file: `ix` (the set owns it from here),
 * which names DWARF addresses `bias` below the file's link-time ones,
 * and came from the cache when `mapped`.  NULL: there is none (the file
 * has no DWARF, or was not to be indexed, or memory ran out): the file
 * leaves the set with the caller's reference, and each symbolizer that
 * was waiting for it makes it itself, one after another.
 */
void pr__ixshare_publish(struct pr__ixshare_file *f, struct pr__symindex *ix, uint64_t bias,
			 bool mapped);
/* The file's index (never NULL once found with *make false, or
 * published) and its bias.  Lock-free: read-only, valid while the
 * reference is held. */
const struct pr__symindex *pr__ixshare_index(const struct pr__ixshare_file *f, uint64_t *bias);
/* Drop a reference to the file: the last frees its index.  Accepts NULL. */
void pr__ixshare_file_put(struct pr__ixshare_file *f);

void pr__ixshare_stats(struct pr__ixshare *set, struct pr__ixshare_stats *st);

#endif /* PR_IXSHARE_H */
