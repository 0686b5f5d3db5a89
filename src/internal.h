/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Declarations shared between the library's source files.  Nothing here is
 * exported: internal functions carry the `pr__` prefix and hidden
 * visibility, and the version script lists only the public API.
 */
#ifndef PR_INTERNAL_H
#define PR_INTERNAL_H

#include <linux/perf_event.h>
#include <stdarg.h>
#include <string.h>

#include "perfreader.h"

#define PR_ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))

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

/* ---- log.c ---- */

struct pr_logger {
	pr_log_fn fn;
	void *ctx;
};

__attribute__((format(printf, 3, 4)))
void pr__log(const struct pr_logger *lg, enum pr_log_level level,
	     const char *fmt, ...);

/* Read a small integer from a /proc/sys file; returns `fallback` when the
 * file is missing or unreadable. */
long pr__read_sysctl(const char *path, long fallback);

/* ---- event.c ---- */

/* Sanity limits shared by the event builder and the tools' option parsers. */
#define PR_MAX_RING_PAGES (1u << 20)

/*
 * perf_event_open(2).  Every open in the library goes through here so that
 * tests can interpose on the syscall (they link with --wrap=syscall).
 */
int pr__perf_event_open(struct perf_event_attr *attr, pid_t pid, int cpu,
			int group_fd, unsigned long flags);

/* Log why perf_event_open failed with `err` (a positive errno) and what to
 * do about it. */
void pr__explain_open_error(const struct pr_logger *lg, int err,
			    const struct perf_event_attr *attr, pid_t pid,
			    int cpu);

/* ---- record.c ---- */

/* What a record parser needs to know about the event that wrote it. */
struct pr_parse_cfg {
	uint64_t sample_type;
	uint64_t read_format;
	uint64_t regs_user;
	uint64_t regs_intr;
	uint64_t branch_sample_type;
	bool sample_id_all;
	/* Derived once, not per record. */
	unsigned int nr_regs_user, nr_regs_intr;
	size_t sample_id_size;
};

void pr__parse_cfg_from_attr(struct pr_parse_cfg *cfg,
			     const struct perf_event_attr *attr);

/*
 * Decode one record of `size` bytes at `buf` (8-byte aligned, header
 * included; `size` equals the header's size).  Returns 0, or -EBADMSG with
 * *why set to a static description when the body does not match the
 * header or the event's sample_type.  Pointers in `rec` point into `buf`.
 */
int pr__record_parse(const struct pr_parse_cfg *cfg, const void *buf,
		     size_t size, struct pr_record *rec, const char **why);

/* ---- ring.c ---- */

/* The largest record: perf_event_header.size is 16 bits. */
#define PR_MAX_RECORD_SIZE 65535u

struct pr_ring {
	int cpu;
	int fd;                         /* fd the ring is mapped from, or -1 */
	void *base;                     /* mapping: control page + data */
	size_t map_len;                 /* 0 when `base` is not ours to unmap */
	struct perf_event_mmap_page *meta;
	unsigned char *data;
	uint64_t data_size;             /* power of two */
	uint64_t tail;                  /* next byte to read */
	uint64_t head;                  /* data_head snapshot */
	unsigned char *bounce;          /* for records that wrap or are unaligned */
	struct pr_ring_stats stats;     /* counters: atomic accesses only */
};

/* Map `pages` data pages (a power of two) of `fd`'s ring.  On failure the
 * log says what to do (perf_event_mlock_kb on EPERM). */
int pr__ring_mmap(struct pr_ring *ring, int fd, int cpu, size_t pages,
		  const struct pr_logger *lg);

/* Use caller memory laid out as a mapping (control page, then `data_size`
 * bytes of data) as a ring: for tests and benchmarks. */
void pr__ring_init_mem(struct pr_ring *ring, void *base, size_t page_size,
		       uint64_t data_size, int cpu);

/* Unmap and free; leaves the ring zeroed with fd = -1.  Does not close fd. */
void pr__ring_release(struct pr_ring *ring);

/* Take a new snapshot of the kernel's data_head (acquire load).  Draining
 * stops at the snapshot, so a busy ring cannot keep a reader forever. */
void pr__ring_refresh(struct pr_ring *ring);

/*
 * The next record before the head snapshot, contiguous and 8-byte aligned,
 * through *rec and its size through *size.  Returns 1 when there is one, 0
 * when the snapshot is drained, and
 * -EBADMSG when the header is corrupt; then the ring has been resynchronised
 * to the kernel's head (pending data discarded and counted) and the log
 * names the CPU and offset.  The record stays valid until pr__ring_advance().
 */
int pr__ring_peek(struct pr_ring *ring, const void **rec, size_t *size,
		  const struct pr_logger *lg);

/* Release `size` bytes to the kernel (release store of data_tail). */
void pr__ring_advance(struct pr_ring *ring, size_t size);

/* Account a parsed record in the ring's counters. */
void pr__ring_count(struct pr_ring *ring, const struct pr_record *rec);

/* Account a corrupt record: `bytes` were skipped. */
void pr__ring_count_corrupt(struct pr_ring *ring, uint64_t bytes);

/* Account a sample dropped as a duplicate (see struct pr_late_thread). */
void pr__ring_count_duplicate(struct pr_ring *ring);

/* Copy counters with atomic loads. */
void pr__ring_stats_load(const struct pr_ring *ring, struct pr_ring_stats *st);

/* ---- reader.c ---- */

/* A reader over rings the caller prepared with pr__ring_init_mem(), with
 * no events behind them: for tests and benchmarks.  The rings are copied;
 * the memory they point to stays the caller's. */
struct pr_reader *pr__reader_from_rings(struct pr_ring *rings, size_t nr,
					 const struct perf_event_attr *attr,
					 const struct pr_logger *lg);

/* ---- hashmap.c ---- */

struct pr_hashmap_slot {
	uint64_t key;
	void *value;      /* NULL: empty slot */
};

/* u64 -> non-NULL pointer.  Zero-initialised is empty. */
struct pr_hashmap {
	struct pr_hashmap_slot *slots;
	size_t cap, n;
};

void *pr__hashmap_get(const struct pr_hashmap *m, uint64_t key);
int pr__hashmap_put(struct pr_hashmap *m, uint64_t key, void *value);
/* Remove `key`; returns its value or NULL. */
void *pr__hashmap_del(struct pr_hashmap *m, uint64_t key);
void pr__hashmap_free(struct pr_hashmap *m);

/* ---- buildid.c ---- */

/* The GNU build-id of an ELF file, of a notes blob, or of the running
 * kernel: 0 and up to PR_BUILD_ID_MAX bytes in `id`, -ENOENT when there is
 * none, -EINVAL when the file is not a little-endian ELF, or -errno. */
int pr__build_id_fd(int fd, uint8_t *id, size_t *id_len);
int pr__build_id_path(const char *path, uint8_t *id, size_t *id_len);
int pr__build_id_from_notes(const void *buf, size_t len, uint8_t *id,
			    size_t *id_len);
int pr__build_id_kernel(uint8_t *id, size_t *id_len);
/* The running kernel's vDSO (every process maps the same image). */
int pr__build_id_vdso(uint8_t *id, size_t *id_len);

/* ---- model.c ---- */

/* A mapped file, shared by every mapping and process that maps it. */
struct pr_dso {
	char *path;
	uint32_t maj, min;
	uint64_t ino;
	uint8_t build_id[PR_BUILD_ID_MAX];
	uint8_t build_id_size;     /* 0: not known (yet) */
	bool build_id_tried;       /* looked for it already */
	bool hit;                  /* a sample landed in it */
	struct pr_dso *next_same_key;
};

/* Hints on a file's build-id, by path (pr_model_set_build_id()). */
struct pr_build_id_hint {
	char *path;
	uint8_t id[PR_BUILD_ID_MAX];
	uint8_t len;
	struct pr_build_id_hint *next_same_key;
};

struct pr_map {
	uint64_t start, end;       /* [start, end) */
	uint64_t pgoff;            /* file offset of start */
	uint32_t prot;
	struct pr_dso *dso;
};

/* One process: its mappings sorted by address, never overlapping. */
struct pr_proc {
	uint32_t pid;
	uint32_t nr_threads;       /* announced and not yet exited */
	/* Changes whenever the mappings do; unique across processes, so a
	 * consumer caching per process notices a reused pid too. */
	uint64_t generation;
	struct pr_map *maps;
	size_t nr, cap;
	/* The image before the last exec, until the new one is seen running
	 * (see pr__proc_running). */
	struct pr_map *old;
	size_t nr_old;
};

struct pr_model;

struct pr_model *pr__model_new(void);
void pr__model_free(struct pr_model *m);
/* Apply MMAP, MMAP2, FORK, EXIT and COMM records, in time order; others
 * are ignored.  Returns 0 or -ENOMEM. */
int pr__model_apply(struct pr_model *m, const struct pr_record *rec);
/* The mapping of `pid` holding `addr`, or NULL.  Valid until the next
 * change to that process. */
const struct pr_map *pr__model_find(struct pr_model *m, uint32_t pid, uint64_t addr);
struct pr_proc *pr__model_proc(struct pr_model *m, uint32_t pid, bool create);
/* A sample of `p` was taken at user address `ip`: once that is in the
 * image exec loaded, the old image's mappings are let go. */
void pr__proc_running(struct pr_model *m, struct pr_proc *p, uint64_t ip);

/* In an array of `nr` elements `size` bytes apart, sorted by the uint64_t
 * each starts with: how many have one at most `key` -- the index after the
 * last element at or below it. */
static inline size_t pr__upper_bound(const void *base, size_t nr, size_t size, uint64_t key)
{
	size_t lo = 0, hi = nr;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		uint64_t k;

		memcpy(&k, (const char *)base + mid * size, sizeof(k));
		if (k <= key)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

/* ---- arena.c: allocations freed together ---- */

struct pr_arena_chunk;

struct pr_arena {
	struct pr_arena_chunk *head;
};

/* 16-byte aligned; NULL when out of memory.  Valid until pr__arena_free(). */
void *pr__arena_alloc(struct pr_arena *a, size_t n);
const char *pr__arena_strdup(struct pr_arena *a, const char *s);
void pr__arena_free(struct pr_arena *a);

/* ---- symtab.c: sorted symbol tables, with perf's rules ---- */

enum { PR_SYM_LOCAL, PR_SYM_GLOBAL, PR_SYM_WEAK };

struct pr_sym {
	uint64_t start, end;
	const char *name;            /* not owned */
	uint8_t binding;             /* PR_SYM_* */
	uint32_t index;              /* order of adding, for ties */
};

struct pr_symtab {
	struct pr_sym *v;
	size_t nr, cap;
	size_t sorted;               /* v[0..sorted) is, since finish or sort */
};

/* 0, or -1 when out of memory. */
int pr__symtab_add(struct pr_symtab *t, uint64_t start, uint64_t size, const char *name,
		   uint8_t binding);
/* Sort; give symbols without a size the room up to the next; keep the
 * best of those sharing an address (see symtab.c). */
void pr__symtab_finish(struct pr_symtab *t);
/* Sort again after adding symbols to a finished table (merging those
 * added since), leaving sizes and aliases as they are (where they
 * overlap, the later start wins). */
void pr__symtab_sort(struct pr_symtab *t);
const struct pr_sym *pr__symtab_find(const struct pr_symtab *t, uint64_t addr);
void pr__symtab_free(struct pr_symtab *t);

/* ---- dsofind.c: where a mapped file may be found ---- */

/* snprintf that says whether it fit. */
__attribute__((format(printf, 3, 4)))
bool pr__path_fmt(char *out, size_t size, const char *fmt, ...);
/* `len` bytes as lowercase hex, NUL-terminated (2 * len + 1 bytes). */
void pr__hex(char *out, const uint8_t *id, size_t len);

struct pr_dirs {
	char **v;
	size_t nr;
};

/* The directories files are looked up in by build-id: the caller's, then
 * /usr/lib/debug and perf's ~/.debug.  0, or -1 when out of memory. */
int pr__debug_dirs(const char *const *extra, size_t nr_extra, struct pr_dirs *out);
void pr__dirs_free(struct pr_dirs *d);

struct pr_dso_query {
	const struct pr_dso *dso;
	const struct pr_map *map;    /* the mapping, for a live process; or NULL */
	uint32_t pid;
	bool live;                   /* the process runs on this machine */
	const struct pr_dirs *dirs;
};

/* Offer `try` each place the file of q->dso may be, most specific first:
 * /proc/PID/map_files and /proc/PID/root (live), DIR/.build-id/xx/rest,
 * DIR/xx/rest and DIR/.build-id/xx/rest/elf (by build-id), the path.  The
 * first nonzero return ends the search and is returned; 0 when none was
 * taken. */
int pr__dso_find(const struct pr_dso_query *q, int (*try)(const char *path, void *arg),
		 void *arg);
/* A thread's name (COMM, inherited at FORK), or NULL when unknown. */
const char *pr__model_comm(const struct pr_model *m, uint32_t tid);
int pr__proc_insert(struct pr_proc *p, const struct pr_map *nm);
const struct pr_map *pr__proc_find(const struct pr_proc *p, uint64_t addr);
/* The DSO for a file, created on first use; NULL when out of memory. */
struct pr_dso *pr__model_dso(struct pr_model *m, const char *path, uint32_t maj,
			    uint32_t min, uint64_t ino);
/* The build-id recorded for `path` (pr_model_set_build_id()) into `id`
 * (PR_BUILD_ID_MAX bytes): its length, 0 when none. */
size_t pr__model_build_id_hint(const struct pr_model *m, const char *path, uint8_t *id);
/* Where the kernel was when recorded: the symbol its text mapping is
 * relative to ("_text"), *addr its address; NULL when no record said. */
const char *pr__model_kernel_ref(const struct pr_model *m, uint64_t *addr);
size_t pr__model_nr_dsos(const struct pr_model *m);
struct pr_dso *pr__model_dso_at(const struct pr_model *m, size_t i);

/* ---- target.c ---- */

/* A growable list of integers (CPUs, thread ids). */
struct pr_intlist {
	int *v;
	size_t n, cap;
};

int pr__intlist_add(struct pr_intlist *l, int x);
bool pr__intlist_has(const struct pr_intlist *l, int x);
void pr__intlist_free(struct pr_intlist *l);

/* Parse a CPU list ("0-3,8,10-11") and append it, sorted and unique, to
 * the empty list `out`.  Returns 0, -EINVAL or -ENOMEM. */
int pr__parse_cpu_list(const char *s, struct pr_intlist *out);

/* The online CPUs, from /sys/devices/system/cpu/online. */
int pr__online_cpus(struct pr_intlist *out);

/* Add the thread ids of process `pid` not yet in `tids`.  Returns the
 * number added, or -ESRCH when the process does not exist. */
int pr__list_threads(pid_t pid, struct pr_intlist *tids);

/* A command forked and held before exec until pr__command_start(). */
struct pr_command {
	pid_t pid;
	int fd;        /* our end: one byte lets the child exec; EOF or its
			  exec errno comes back */
	bool started;
};

int pr__command_fork(struct pr_command *cmd, char *const argv[],
		     const struct pr_logger *lg);
/* Let the command exec; returns 0 or the negative errno of a failed exec. */
int pr__command_start(struct pr_command *cmd, const char *name,
		      const struct pr_logger *lg);
/* Kill and reap a command that was never started; close the pipes. */
void pr__command_release(struct pr_command *cmd);

#endif /* PR_INTERNAL_H */
