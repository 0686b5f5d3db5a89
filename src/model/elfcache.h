/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The one ELF and debug-file cache, for the unwinder and the symbolizer
 * alike: each mapped file found (dsofind.c's rules), mapped, build-id
 * checked and its headers read once (elf.c); its separate debug file found
 * once, by one set of rules (elfcache.c).  One cache per model; it keeps
 * no state of its users, who key their own by the struct pr_elf.
 * Not thread-safe: it is used from the thread that applies records.
 */
#ifndef PR_ELFCACHE_H
#define PR_ELFCACHE_H

#include "model/model.h"
#include "model/zsection.h"

#define PR_ELF_MAX_SEGMENTS 16

struct pr_elf_segment {
	uint64_t vaddr, offset, filesz, memsz;
	uint32_t flags;              /* PF_X, PF_W, PF_R */
};

/* Where a section's bytes are in the file; size 0: absent (or NOBITS). */
struct pr_elf_section {
	uint64_t offset, size, vaddr;
	enum pr_zsection z;          /* compressed: as stored */
};

/* An ELF file mapped read-only whole: a mapped file, a debug file or the
 * vDSO.  Every offset here has been checked against `size`. */
struct pr_elf {
	char *path;                  /* what was opened, for messages */
	char *origin;                /* the path a process mapped it from */
	const unsigned char *data;
	size_t size;
	bool owns_mapping;           /* munmap on free (else a malloc'd copy) */
	/* The mapping guarded against its file cut short (base/busguard.c:
	 * a cp or rsync --inplace over a library or debug file): zeros read
	 * past its new end, not a SIGBUS; its slot, when `guarded`. */
	bool guarded;
	int guard;
	uint64_t dev, ino;           /* 0, 0 for an image from memory */
	/* Kept open when the file was found through a path of a process
	 * (/proc/PID/...), which goes with it: see pr__elf_fd(). */
	int fd;
	/* Found inside the root of this process, in another mount namespace
	 * (pr_dso_query's root); 0: on the host.  Its path is then never
	 * opened again on the host, and its debug files are looked for
	 * inside the same root. */
	uint32_t root;
	bool is64;
	uint16_t machine, type;      /* EM_*, ET_* */
	struct pr_elf_segment seg[PR_ELF_MAX_SEGMENTS];
	size_t nr_seg;
	uint64_t text_lo, text_hi;   /* link-time range of executable code */
	uint8_t build_id[PR_BUILD_ID_MAX];
	size_t build_id_size;
	char *debuglink;             /* .gnu_debuglink's name, or NULL */
	uint32_t debuglink_crc;
	/* .eh_frame_hdr is where PT_GNU_EH_FRAME says, else the section. */
	struct pr_elf_section eh_frame, eh_frame_hdr, debug_frame;
	bool has_debug_info;         /* DWARF: a .debug_info with bytes */
	bool go;                     /* built by Go's linker */

	bool is_debug;               /* a debug file, kept with the file it serves */
	bool going;                  /* evicted by the trim under way (trim.c) */
	uint64_t held_since;         /* the time of the trim that first counted it */
	bool debug_tried;            /* pr__elfcache_debug() looked already */
	struct pr_elf *debug;        /* ... and found this */
};

/* ---- elf.c ---- */

/* Map and read the ELF file open at `fd` (closed, unless `keep_fd`: then
 * e->fd); an image in memory (copied).  NULL when it is not an ELF file
 * (why: in the log at debug level). */
struct pr_elf *pr__elf_open(int fd, const char *path, bool keep_fd, const struct pr_logger *lg);
struct pr_elf *pr__elf_from_memory(const void *image, size_t size, const char *name,
				   const struct pr_logger *lg);
void pr__elf_free(struct pr_elf *e);
/* Whether `e` has build-id `id` (any file does when `len` is 0). */
bool pr__elf_is(const struct pr_elf *e, const uint8_t *id, size_t len);

/* The load bias of `e` in a process where mapping `m` maps part of it:
 * runtime address = link-time address + bias. */
uint64_t pr__elf_bias(const struct pr_elf *e, const struct pr_map *m);
/* Read 8 bytes at link-time address `vaddr` from the loaded contents:
 * read-only segments, or also writable ones (as in the file, before any
 * relocation).  0, or -1 when not file-backed. */
int pr__elf_read(const struct pr_elf *e, uint64_t vaddr, bool writable, uint64_t *val);
/* The file bytes of the loaded segment holding link-time address
 * `vaddr`: their start (at link-time *seg_vaddr) and *size; or NULL. */
const unsigned char *pr__elf_segment(const struct pr_elf *e, uint64_t vaddr, size_t *size,
				     uint64_t *seg_vaddr);
/* Section `s` of `e`, inflated when compressed, in *out (malloc'd: the
 * caller frees it) and *size.  0 or -errno (why: in the log). */
int pr__elf_section(const struct pr_elf *e, const struct pr_elf_section *s,
		    unsigned char **out, size_t *size, const struct pr_logger *lg);
/* A new descriptor of the file, the caller's to close: the one kept
 * (handed over once), else the path opened again if it is still the same
 * file, else the bytes copied into a memfd (the vDSO, a file whose
 * process is gone).  -1 when none can be had. */
int pr__elf_fd(struct pr_elf *e);

/* ---- elfcache.c ---- */

struct pr_elfcache;

struct pr_elfcache *pr__elfcache_new(void);
void pr__elfcache_free(struct pr_elfcache *c);
/* Add directories to look in by build-id and for debug files (before
 * /usr/lib/debug and ~/.debug, which are always there).  0 or -ENOMEM. */
int pr__elfcache_add_dirs(struct pr_elfcache *c, const char *const *dirs, size_t nr);
/* The directories, in search order. */
const struct pr_dirs *pr__elfcache_dirs(const struct pr_elfcache *c);

/*
 * The file of `d`, as mapped by `m` (may be NULL) in process `pid`, found
 * the first time it is asked for (through the process's /proc entries
 * when `live`), by build-id when `d` has one: pr__dso_find()'s places,
 * and the running kernel's vDSO.  The same file mapped under two names is
 * opened once.  NULL when not found.  Valid as long as the cache.  A live file found without a
 * build-id in `d` gives it its own (outputs that name files by build-id
 * need it).
 */
struct pr_elf *pr__elfcache_file(struct pr_elfcache *c, struct pr_dso *d,
				 const struct pr_map *m, uint32_t pid, bool live,
				 const struct pr_logger *lg);
/*
 * The separate debug file of `e`, looked for once: by build-id in every
 * directory (DIR/.build-id/xx/rest.debug); by .gnu_debuglink beside the
 * file it was mapped from, in a .debug/ there, and under every directory
 * at that path (/usr/lib/debug/usr/bin/prog.debug), as gdb does: the link
 * is a file name, and one with a '/' (or "." or "..") is refused, not
 * followed; then by build-id from debuginfod (debuginfod.c).  For a file
 * found inside a process's root (e->root), every place but debuginfod is
 * inside that root.  Each candidate is opened by pr__open_target_file().  A candidate must have `e`'s build-id
 * (or the link's CRC without one) and debug information (.debug_info or
 * .debug_frame).  NULL when none.
 */
struct pr_elf *pr__elfcache_debug(struct pr_elfcache *c, struct pr_elf *e,
				  const struct pr_logger *lg);

/* How many files of processes in other mount namespaces were not found
 * inside their roots (each once): their frames stay unnamed, as the host's
 * file at the same path is never taken for theirs. */
size_t pr__elfcache_foreign_missing(const struct pr_elfcache *c);

/* Each file the cache holds that a DSO found (not the vDSO, not debug
 * files), with those DSOs: `fn` gets (file, dso) for every pair. */
void pr__elfcache_each(struct pr_elfcache *c,
		       void (*fn)(struct pr_elf *e, struct pr_dso *d, void *arg), void *arg);
/* Forget what was found for the DSOs marked `going`, and free the files
 * marked `going` with their debug files: a DSO that had one of them looks
 * again when next asked. */
void pr__elfcache_drop(struct pr_elfcache *c);
/* Unmap the pages of the files mapped (read-only, never written) from
 * this process: they stay in the page cache, and a later read faults them
 * back in without I/O.  So the files count in the resident size for what
 * was read since, not for all that was ever read. */
void pr__elfcache_release_pages(struct pr_elfcache *c);

/* ---- debuginfod.c ---- */

struct pr_debuginfod;

/* A descriptor (the caller's) of the debug file with build-id `id`
 * fetched from the servers DEBUGINFOD_URLS names, its path in *path
 * (malloc'd); -1 when there are no servers, no libdebuginfod, or no such
 * file.  *d is the client, made on first use. */
int pr__debuginfod_find(struct pr_debuginfod **d, const uint8_t *id, size_t len,
			char **path, const struct pr_logger *lg);
void pr__debuginfod_free(struct pr_debuginfod *d);

/* The model's cache, made on first use; NULL when out of memory. */
struct pr_elfcache *pr__model_elfcache(struct pr_model *m);
/*
 * The model's cache for an unwinder or a symbolizer (`who`) whose options
 * name debug directories (`dirs`, deprecated there): added to the cache's
 * when the model has none of its own (pr_model_opts), ignored otherwise
 * (said at debug level).  NULL when out of memory.
 */
struct pr_elfcache *pr__model_files(struct pr_model *m, const char *const *dirs, size_t nr,
				    const char *who, const struct pr_logger *lg);

#endif /* PR_ELFCACHE_H */
