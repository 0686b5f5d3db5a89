/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The base every stage builds on: options and stats structs, the logger,
 * the arena, the hash table and small helpers.  Nothing here knows about
 * perf records.  Internal: `pr__` names, hidden visibility.
 */
#ifndef PR_BASE_H
#define PR_BASE_H

#include <linux/perf_event.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <sys/types.h>
#include <time.h>

#include "perfreader.h"

#define PR_ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))

/* ---- opts.c ---- */

/*
 * Options structs grow at the end; `sz` says how much of the struct the
 * caller knows.  A field beyond it takes its default, and bytes the caller
 * set beyond what this library knows must be zero (libbpf's rule).
 */
#define PR_OPTS_HAS(opts, field)                                              \
	((opts) && (opts)->sz >= offsetof(__typeof__(*(opts)), field) +       \
				     sizeof((opts)->field))
#define PR_OPTS_GET(opts, field, fallback)                                    \
	(PR_OPTS_HAS(opts, field) && (opts)->field ? (opts)->field : (fallback))
#define PR_OPTS_VALID(opts)                                                   \
	pr__opts_valid((opts), (opts) ? (opts)->sz : 0, sizeof(*(opts)))

bool pr__opts_valid(const void *opts, size_t user_sz, size_t known_sz);

/* Give a caller's stats struct `dst` (its sz set, at least a size_t) the
 * prefix of `src` (known_sz bytes) it has room for, and say in its sz how
 * much that was: a caller built against an older header gets what it
 * knows.  Returns 0, or -EINVAL for a NULL or a too-small sz. */
int pr__stats_copy(void *dst, const void *src, size_t known_sz);

/* ---- symbol versions (libperfreader.map) ---- */

/*
 * An exported function whose signature changed keeps its old one for the
 * binaries linked against the version node that had it: the soname stays.
 * Each signature is defined under an internal name marked PR_VERSIONED and
 * bound to the public name with PR_SYMVER: "name@@NODE" for the current
 * one (what a new link gets), "name@OLD" for each older one (what old
 * binaries keep calling).  The map lists the public name in both nodes;
 * its `local: *` hides the internal names.  A symbol version needs
 * default visibility, hence PR_VERSIONED.  GCC's symver attribute
 * survives LTO, where a top-level .symver does not; clang has only the
 * latter.
 */
#define PR_VERSIONED __attribute__((visibility("default")))
#if defined(__has_attribute)
#if __has_attribute(__symver__)
#define PR_SYMVER(impl, versioned)                                            \
	extern __typeof__(impl) impl __attribute__((__symver__(versioned)))
#endif
#endif
#ifndef PR_SYMVER
#define PR_SYMVER(impl, versioned) __asm__(".symver " #impl ", " versioned)
#endif

/* ---- log.c ---- */

struct pr_logger {
	pr_log_fn fn;
	void *ctx;
};

__attribute__((format(printf, 3, 4)))
void pr__log(const struct pr_logger *lg, enum pr_log_level level,
	     const char *fmt, ...);

/* ---- hashing: the one hash function ---- */

/*
 * FNV-1a, 64 bits, for bytes and strings: `h` is PR_HASH_INIT (the
 * offset basis) or what an earlier call returned, so several pieces hash
 * as one.  pr__hash_mix() folds a number into a hash (the boost
 * hash_combine step with a 64-bit multiply after it), for keys made of
 * several numbers.  Nothing persists a hash but the kernel-symbol cache's
 * key, which only has to change when the kernel does, and the address
 * index's checksum (symbols/symindex.c: its version goes up); the flame graph's
 * colours come from these too, so changing either changes them.
 */
#define PR_HASH_INIT UINT64_C(0xcbf29ce484222325)

static inline uint64_t pr__hash_bytes(uint64_t h, const void *p, size_t len)
{
	const unsigned char *b = p;

	for (size_t i = 0; i < len; i++)
		h = (h ^ b[i]) * UINT64_C(0x100000001b3);
	return h;
}

static inline uint64_t pr__hash_str(const char *s)
{
	uint64_t h = PR_HASH_INIT;

	while (*s)
		h = (h ^ (unsigned char)*s++) * UINT64_C(0x100000001b3);
	return h;
}

static inline uint64_t pr__hash_mix(uint64_t h, uint64_t v)
{
	h ^= v + UINT64_C(0x9e3779b97f4a7c15) + (h << 6) + (h >> 2);
	return h * UINT64_C(0xff51afd7ed558ccd);
}

/* ---- hashmap.c ---- */

struct pr_hashmap_slot {
	uint64_t key;
	void *value;      /* NULL: empty slot */
};

/*
 * u64 -> non-NULL pointer; a key may hold several values (added with
 * pr__hashmap_add), as a table keyed by a hash holds colliding entries.
 * Zero-initialised is empty.  A table of array indexes stores index + 1.
 * Not thread-safe; a put, add or del ends any walk with _next.
 */
struct pr_hashmap {
	struct pr_hashmap_slot *slots;   /* cap of them, a power of two */
	size_t cap, n;
};

/* The first value under `key`, or NULL. */
void *pr__hashmap_get(const struct pr_hashmap *m, uint64_t key);
/* The values under `key` one by one: *it is 0 for the first; NULL when
 * there are no more. */
void *pr__hashmap_next(const struct pr_hashmap *m, uint64_t key, size_t *it);
/* Set the (first) value under `key`.  0 or -ENOMEM. */
int pr__hashmap_put(struct pr_hashmap *m, uint64_t key, void *value);
/* One more value under `key`, beside any there.  0 or -ENOMEM. */
int pr__hashmap_add(struct pr_hashmap *m, uint64_t key, void *value);
/* Room for `more` entries, so that that many puts or adds cannot fail.
 * 0 or -ENOMEM. */
int pr__hashmap_reserve(struct pr_hashmap *m, size_t more);
/* Remove the (first) value under `key`; returns it or NULL. */
void *pr__hashmap_del(struct pr_hashmap *m, uint64_t key);
/* Remove every entry `keep` says no to (it may be asked twice of one, and
 * may free a value it says no to); no allocation, cannot fail. */
void pr__hashmap_filter(struct pr_hashmap *m, bool (*keep)(uint64_t key, void *value, void *arg),
			void *arg);
void pr__hashmap_free(struct pr_hashmap *m);

/* ---- arena.c: allocations freed together ---- */

struct pr_arena_chunk;

struct pr_arena {
	struct pr_arena_chunk *head;
	size_t bytes;                /* malloc'd so far, for bounding caches */
};

/* 16-byte aligned; NULL when out of memory.  Valid until pr__arena_free(). */
void *pr__arena_alloc(struct pr_arena *a, size_t n);
const char *pr__arena_strdup(struct pr_arena *a, const char *s);
void pr__arena_free(struct pr_arena *a);

/* ---- util.c ---- */

/* snprintf that says whether it fit. */
__attribute__((format(printf, 3, 4)))
bool pr__path_fmt(char *out, size_t size, const char *fmt, ...);
/*
 * The length of the UTF-8 sequence at `s` (whose first byte is >= 0x80)
 * with its code point in *cp, or 0 when it is not a valid one: overlong
 * forms, surrogates and code points past U+10FFFF are refused, as RFC 3629
 * says.  `s` is terminated, and the terminator is not a continuation byte,
 * so the reads stop at it.
 */
size_t pr__utf8_decode(const unsigned char *s, uint32_t *cp);
/* `s` into `out` (`size` bytes, at least 1) as valid UTF-8: each byte not
 * part of a valid sequence as U+FFFD; cut between characters when it does
 * not fit.  Returns `out`. */
char *pr__utf8_clean(char *out, size_t size, const char *s);
/* `len` bytes as lowercase hex, NUL-terminated (2 * len + 1 bytes). */
void pr__hex(char *out, const uint8_t *id, size_t len);
/* All `len` bytes written to `fd` (again after a signal): 0 or a
 * negative errno. */
int pr__write_all(int fd, const void *buf, size_t len);
/* mkdir -p: `dir` and its missing parents, made with `mode`.  0 (also
 * when it exists) or a negative errno. */
int pr__mkdirs(const char *dir, mode_t mode);
/* The file a write to `path` lands in, into `out`: `path`, or the end
 * of the symbolic links it is (proutput.h's pr_output_target()).  0 or
 * a negative errno (ELOOP, ENAMETOOLONG, lstat's but ENOENT). */
int pr__link_target(const char *path, char *out, size_t size);
/* A whole file (one with no size to stat, as /proc's), in one buffer the
 * caller frees, followed by two NUL bytes so that text can be parsed in
 * place; its length in *len.  NULL when it cannot be opened, or when
 * there is no memory at all; what was read by then when memory runs out
 * midway. */
char *pr__read_all(const char *path, size_t *len);

/* A table of `size` bytes, all zero, mapped rather than allocated and
 * cleared, for tables filled at random places: one under 2 MiB has its
 * pages zeroed by the kernel at once, and a bigger one is aligned to huge
 * pages and asks for them, so that filling it costs a page fault per
 * 2 MiB.  A fault per 4 KiB page cost 14 us on the virtual machine
 * measured (BENCHMARKS.md), zeroing a page at once 0.3 us.  NULL without
 * memory; pr__table_free() takes it back, given the same size. */
void *pr__table_new(size_t size);
void pr__table_free(void *table, size_t size);

/* Make room in the array *arr, of *cap elements of `size` bytes, for
 * `need`: its capacity doubles (from 64), so appending one at a time costs
 * amortised O(1).  0, or -ENOMEM with the array as it was. */
int pr__array_reserve(void **arr, size_t size, size_t *cap, size_t need);
#define PR_ARRAY_RESERVE(arr, cap, need)                                      \
	pr__array_reserve((void **)&(arr), sizeof(*(arr)), &(cap), (need))
/* This process's mappings of files (an inode behind them, from
 * /proc/self/maps), sorted, to ask whether memory is a file's mapping
 * (pr__file_maps_has()) before giving its pages back with
 * MADV_DONTNEED, which zeroes anonymous memory. */
struct pr_file_maps {
	struct pr_file_map { uint64_t lo, hi, off; } *v;
	size_t nr, cap;
};
/* 0, or a negative errno (the maps left empty). */
int pr__file_maps_read(struct pr_file_maps *fm);
/* The mapping of a file [p, p + len) lies in, or NULL. */
const struct pr_file_map *pr__file_maps_find(const struct pr_file_maps *fm, const void *p,
					     size_t len);
/* Whether [p, p + len) lies in one mapping of a file. */
bool pr__file_maps_has(const struct pr_file_maps *fm, const void *p, size_t len);
/* Whether the file mapped by `map` still has every byte that [p, p +
 * len) maps (its size now, through /proc/self/map_files): a file cut
 * short since has pages past its end, and reading them is a SIGBUS. */
bool pr__file_maps_whole(const struct pr_file_map *map, const void *p, size_t len);
void pr__file_maps_free(struct pr_file_maps *fm);

/* Read a small integer from a /proc/sys file; returns `fallback` when the
 * file is missing or unreadable. */
long pr__read_sysctl(const char *path, long fallback);
/* CLOCK_MONOTONIC in ns: for re-reading what a live process writes. */
static inline uint64_t pr__monotonic_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/* In an array of `nr` elements `size` bytes apart, sorted by the unsigned
 * key of `key_size` bytes (a uint64_t or a uint32_t) each starts with: how
 * many have one at most `key` -- the index after the last element at or
 * below it.  (key_size is a constant where it is inlined.) */
static inline size_t pr__upper_bound_key(const void *base, size_t nr, size_t size,
					 size_t key_size, uint64_t key)
{
	size_t lo = 0, hi = nr;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		const char *at = (const char *)base + mid * size;
		uint64_t k;

		if (key_size == sizeof(uint32_t)) {
			uint32_t k32;

			memcpy(&k32, at, sizeof(k32));
			k = k32;
		} else {
			memcpy(&k, at, sizeof(k));
		}
		if (k <= key)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

/* Sorted by the uint64_t each element starts with (an address). */
static inline size_t pr__upper_bound(const void *base, size_t nr, size_t size, uint64_t key)
{
	return pr__upper_bound_key(base, nr, size, sizeof(uint64_t), key);
}

/* Sorted by the uint32_t each element starts with (a pid): the index of
 * the first with one at least `key`, where an element with `key` is or
 * would go. */
static inline size_t pr__lower_bound_u32(const void *base, size_t nr, size_t size, uint32_t key)
{
	return key ? pr__upper_bound_key(base, nr, size, sizeof(uint32_t), key - 1) : 0;
}

/* ---- busguard.c: file mappings that survive their file cut short ---- */

/* Guard the mapping [start, start + len) of a file: a read past the
 * file's end once it is cut short finds zeros instead of a SIGBUS, and
 * pr__busguard_hit() says so from then on.  The first call installs a
 * SIGBUS handler for the process (other SIGBUS signals go on to the one
 * before).  Returns the guard's slot, or -ENOSPC (too many guarded) or
 * another -errno: the mapping is then not guarded.  Remove the guard
 * before unmapping. */
int pr__busguard_add(const void *start, size_t len);
void pr__busguard_remove(int slot);
bool pr__busguard_hit(int slot);
/* Where the zeros a hit put in begin, from the mapping's start (they run
 * to its end): the file may have grown back since (a cp over it writes
 * it again).  SIZE_MAX when not hit. */
size_t pr__busguard_zeroed(int slot);
/* Faults mended so far, in every guarded mapping: a cheap "did any?",
 * asked at every frame named (symbolizer.c), so inline. */
extern uint64_t pr__busguard_nr_hits;  /* __atomic_* only */

static inline uint64_t pr__busguard_hits(void)
{
	return __atomic_load_n(&pr__busguard_nr_hits, __ATOMIC_RELAXED);
}

/* ---- suggest.c: "did you mean" ---- */

#define PR_SUGGEST_MAX 3
#define PR_SUGGEST_LEN 127

/* Offer the known names one by one; the closest few (within a couple of
 * typos) are kept, copied. */
struct pr_suggest {
	const char *word;
	unsigned int best;
	size_t n;
	char match[PR_SUGGEST_MAX][PR_SUGGEST_LEN + 1];
};

void pr__suggest_init(struct pr_suggest *s, const char *word);
void pr__suggest_offer(struct pr_suggest *s, const char *candidate);
/* "did you mean 'PREFIXa' or 'PREFIXb'? " in buf, or "" without a match. */
void pr__suggest_text(const struct pr_suggest *s, const char *prefix, char *buf,
		      size_t size);

/* ---- intlist.c: a growable list of integers (CPUs, thread ids) ---- */
struct pr_intlist {
	int *v;
	size_t n, cap;
};

int pr__intlist_add(struct pr_intlist *l, int x);
bool pr__intlist_has(const struct pr_intlist *l, int x);
void pr__intlist_free(struct pr_intlist *l);

#endif /* PR_BASE_H */
