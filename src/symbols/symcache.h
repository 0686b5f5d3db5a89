/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The address index cache (symcache.c): files' indexes (symindex.h) kept
 * by build-id in a directory, mapped by the next symbolizer that names
 * the same file, bounded in total size with the least recently used going
 * first; and where a module's own index comes from (the cache, or a build).
 */
#ifndef PR_SYMCACHE_H
#define PR_SYMCACHE_H

#include <stdbool.h>
#include <stdint.h>

#include "base/base.h"
#include "symbols/symindex_file.h"

struct pr_symbolizer;
struct sym_module;
struct pr__symindex;
struct pr__ixcache;
struct pr__ixshare_id;

/* The bound unless told (pr_symbolizer_opts.index_cache_max). */
#define PR_IXCACHE_MAX ((uint64_t)256 << 20)

struct pr__ixcache_stats {
	uint64_t mapped;             /* indexes read from the directory */
	uint64_t stored;             /* indexes written there */
	uint64_t refused;            /* files there not trusted */
	uint64_t evicted;            /* files removed to stay under the bound */
};

/*
 * A cache in `dir` (made, with its parents, if missing) holding at most
 * `max_bytes` (0: PR_IXCACHE_MAX); nothing is read or made before it is
 * first used.  Its problems are said once through `lg` (which must
 * outlive it), as a warning when `said` (the directory was given) and at
 * debug level otherwise.  NULL when out of memory.
 */
struct pr__ixcache *pr__ixcache_new(const char *dir, uint64_t max_bytes, bool said,
				    const struct pr_logger *lg);
void pr__ixcache_free(struct pr__ixcache *c);

/* The index made for `key`, mapped from the directory; NULL when it is
 * not there, or not trusted (one debug note: `what` names the file). */
struct pr__symindex *pr__ixcache_get(struct pr__ixcache *c, const struct pr__ix_key *key,
				     const char *what);
/* Keep `ix`, made for `key`, in the directory (written whole under
 * another name, then renamed), then keep the directory under its bound.
 * With `written` not NULL, *written is the file kept, mapped
 * (pr__symindex_map_written(); NULL when not kept), to use in `ix`'s
 * place. */
void pr__ixcache_put(struct pr__ixcache *c, const struct pr__ix_key *key,
		     const struct pr__symindex *ix, const char *what,
		     struct pr__symindex **written);
/* The directory kept under its bound: the files least recently used go. */
void pr__ixcache_evict(struct pr__ixcache *c);
void pr__ixcache_stats(const struct pr__ixcache *c, struct pr__ixcache_stats *st);

/* The key of module `m`'s index, as `s` names: false for a file without
 * a build-id (its index is not kept). */
bool pr__sym_index_key(const struct pr_symbolizer *s, const struct sym_module *m,
		       struct pr__ix_key *key);
/*
 * Module `m`'s index from the symbolizer's cache, by the file's build-id,
 * without opening its DWARF (or its debug file): NULL when there is none
 * for these settings, or none with the lines the symbolizer shows.
 */
struct pr__symindex *pr__sym_index_cached(struct pr_symbolizer *s, struct sym_module *m);
/*
 * Module `m`'s index built from its DWARF (symindex.c), and stored in the
 * cache when there is one.  NULL with errno set, as pr__symindex_build().
 */
struct pr__symindex *pr__sym_index_build(struct pr_symbolizer *s, struct sym_module *m);
/* The same of some units alone (pr__symindex_build_units()); `units`
 * NULL: the whole file. */
struct pr__symindex *pr__sym_index_build_units(struct pr_symbolizer *s, struct sym_module *m,
					       const uint64_t *units, size_t nr);
/*
 * Module `m`'s own index (NULL for none): mapped from the cache when it
 * holds one, without opening the file's DWARF or its debug file at all
 * (*mapped), on either path; else built (and stored) the first time its
 * DWARF is needed: always on the index's path, on libdw's when the build
 * costs about what libdw's own first lookups would (a small .debug_info;
 * symindex.c has the figures), so that a run without the index cached is
 * not made slower by it.
 */
struct pr__symindex *pr__sym_index_own(struct pr_symbolizer *s, struct sym_module *m,
				       bool *mapped);
/* Who `m` is among the symbolizers sharing indexes (ixshare.h): its
 * index's key, or for a file without a build-id (whose index the cache
 * does not keep) the file itself.  false: not to be shared (an image from
 * memory without one). */
bool pr__sym_index_share_id(const struct pr_symbolizer *s, const struct sym_module *m,
			    struct pr__ixshare_id *id);

/*
 * Module `m`'s index by `make` (pr__sym_index_own(), or one of the cache
 * alone), or, when workers share their indexes, the one the first of them
 * to ask made: then *taken is true and *bias the bias its DWARF had (the
 * caller, which opened none, learns it here).  What `make` made is
 * published for the others, with m->dwarf_bias.  *shared is the set's
 * entry while the caller holds a reference to it (pr__ixshare_file_put()
 * when done; the index is then the set's, never freed by the caller),
 * else NULL.  NULL: no index.
 */
typedef struct pr__symindex *(*pr__sym_index_make_fn)(struct pr_symbolizer *s,
							struct sym_module *m, bool *mapped);
struct pr__symindex *pr__sym_index_shared(struct pr_symbolizer *s, struct sym_module *m,
					  pr__sym_index_make_fn make,
					  struct pr__ixshare_file **shared, bool *taken,
					  uint64_t *bias);

/*
 * At the end of a symbolizer on libdw's path with a cache: the indexes the
 * fill rule left out (a .debug_info over index_fill_max, libc's debug file
 * among them) of the files whose DWARF named its frames, built and stored
 * now, for the next run to start with them mapped, as far as their
 * estimated cost stays within a tenth of the symbolizer's life (as perf
 * record spends its exit on the build-id cache).  A one-shot run of a
 * second or two builds none of them; a run of ten, libc's.
 */
void pr__sym_index_fill_late(struct pr_symbolizer *s);
/* What building module `m`'s index whole is estimated to cost, in ns (its
 * DWARF open; UINT64_MAX when unknown). */
uint64_t pr__sym_index_whole_ns(struct sym_module *m);

/*
 * Module `m`, found to have no DWARF, its symbols read: an index of them
 * alone stored in the symbolizer's cache (when it has one, and `m` a
 * build-id), so that the next run takes them from there.
 */
void pr__sym_index_keep_symbols(struct pr_symbolizer *s, struct sym_module *m);

#endif /* PR_SYMCACHE_H */
