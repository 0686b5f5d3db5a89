/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The symbolizer's insides, shared by its files:
 *
 *   symbolizer.c  the API, results (each (file, address) resolved once),
 *                 names demangled and file names interned
 *   symfile.c     mapped files (from the model's ELF cache), opened with
 *                 libdwfl, their ELF symbols read with perf's rules
 *   plt.c         their PLT stubs' names ("callee@plt")
 *   debugfile.c   libdwfl's hook for their separate debug files
 *   symdwarf.c    DWARF: the functions inlined at an address, and lines
 *                 (its walks shared with symindex.c in symdwarf.h)
 *   symindex.c    an address index of a file's functions, inlined calls
 *                 and lines (symlines.c), built from those walks (symindex.h): a
 *                 cached one is used on every path; built on the index's
 *                 (pr__symbolizer_use_index()), and on libdw's for small files
 *   kallsyms.c    the kernel's symbols, and their cache
 *   perfmap.c     JIT code: /tmp/perf-PID.map
 *   jitnames.c    JIT code: the process's jitdump (model/jitdump.c reads it)
 *   pool.c        resolved frames shared by the symbolizers of workers
 *   ixshare.c     address indexes shared by them (ixshare.h)
 */
#ifndef PR_SYMBOLIZER_H
#define PR_SYMBOLIZER_H

#include <elfutils/libdwfl.h>

#include "model/elfcache.h"
#include "symbols/symtab.h"
#include "prsym.h"

struct cu_span;

/* A function or untyped symbol in a section, as addr2line picks among
 * them (symfile.c), in the table's order. */
struct a2l_sym {
	uint64_t addr, size;
	uint64_t sec_lo, sec_hi;     /* its section's addresses */
	const char *name;            /* in an ELF file the module holds, or its index */
};
struct pr__ixshare;
struct pr__ixsyms;
struct pr__ixshare_file;

/* Functions inlined into each other at one address, at most. */
#define MAX_INLINE 64

/* The most a compressed DWARF section is believed to inflate to (a large
 * program's .debug_info is hundreds of megabytes): a header saying more
 * is lying, and the section is not read. */
#define MAX_DWARF_SECTION ((size_t)1 << 32)

/*
 * On libdw's path, a file's address index is built whole (and kept in the
 * cache) when its .debug_info, inflated, is at most this: then the build
 * costs about what libdw's first lookups in it would, and the next run
 * names the file without opening its DWARF.  Measured 2026-11-27
 * (bench-symindex, 20 and 200 addresses; whole build against libdw's
 * lazy path): bench-live-churn (290 KB of C++) 21-23 ms against 10-27
 * ms; dwarfsample (150 KB) 2-6 ms against 1-2 ms; libperfreader.so (1
 * MB) 37-45 ms against 2-24 ms; libc's debug file (5.8 MB) 290-320 ms
 * against 12-56 ms, which an uncached one-shot run cannot afford.
 */
#define PR_IX_FILL_MAX ((uint64_t)512 << 10)

/* A mapped file, found and read once. */
struct sym_module {
	struct pr_symbolizer *s;
	const struct pr_dso *dso;
	struct pr_elf *elf;          /* from the model's ELF cache, or NULL */
	const char *origin;          /* the path it was mapped from */
	char *path;                  /* what was opened */
	Dwfl *dwfl;
	Dwfl_Module *mod;
	bool opened;                 /* its symbols read (mod may be closed since) */
	/* The ELF files its symbols' names are in, held (a reference each)
	 * so the names outlive the libdwfl session: pages of their string
	 * tables, mapped, not copied. */
	Elf *elves[4];
	size_t nr_elves;
	bool hold_failed;            /* one could not be: the session stays */
	/* The mappings of its files libelf made (the file's, its debug
	 * file's), guarded against a file cut short under them
	 * (base/busguard.c): their starts and guards' slots. */
	const void *guard_at[4];
	int guards[4];
	size_t nr_guards;
	/* Its function and untyped symbols as addr2line picks among them,
	 * in the table's order, read once (symfile.c). */
	struct a2l_sym *a2l;
	size_t nr_a2l;
	bool a2l_read;
	struct pr_symtab syms;
	/* Or, named from its cached index, the index's own table, searched
	 * where it is mapped (symindex_syms.c), syms left empty. */
	const struct pr__ixsyms *ixsyms;
	const char **names;          /* its symbols' names demangled, as asked for */
	bool dwarf_checked, has_dwarf;
	Dwarf *dwarf;                /* its DWARF (libdwfl's), once checked */
	Dwarf_Addr dwarf_bias;
	/* Its DWARF sections inflated from zstd, which libdw reads in place
	 * of the file's bytes until dwfl_end() (zsection.h). */
	unsigned char **zbufs;
	size_t nr_zbufs, zbytes;
	/* Its compile units' address ranges, sorted, when libdw's lookup
	 * found none (symdwarf.c). */
	struct cu_span *spans;
	size_t nr_spans;
	bool spans_read;
	/* Its address index (symindex.c), when the symbolizer uses them:
	 * its own, or, when `shared`, the set's (a reference held); of a
	 * file without DWARF, the cached one its symbols came from, which
	 * holds their names. */
	struct pr__symindex *index, *names_index;
	struct pr__ixshare_file *shared;
	bool cache_looked;           /* the index cache asked when it was opened */
	bool index_tried;
	bool cut;                    /* its index's file cut short: set aside */
	bool reopen_failed;          /* pr__sym_module_reopen() */
	/* The units libdw's path named addresses in (by DIE offset, to 1),
	 * for the partial index built at the end (symcache.c). */
	struct pr_hashmap units_seen;
	/* Per unit (by DIE offset + 1, shifted left, | 1 for a type unit):
	 * its functions' address ranges, sorted, and its scopes (symdwarf.c). */
	struct pr_hashmap cus;
	/* A function's name, by its (abstract origin's) DIE offset + 1. */
	struct pr_hashmap func_names;
	/* Names, inline chains and interned source file names of its
	 * results: they go with the module (a trim may take it). */
	struct pr_arena arena;
	struct pr_hashmap files;     /* hash of a source file name -> interned (chained) */
	/* What a trim weighs beyond the above: its resolved frames in the
	 * symbolizer's table, and its units' indexes (symdwarf.c). */
	size_t nr_results, index_bytes;
};

/* A perf map's resolved address (re-reading the map makes new ones). */
struct sym_result {
	uint64_t addr;
	uint64_t generation;         /* of a perf map: results of an older read are stale */
	struct sym_result *next;     /* the same hash */
	struct pr_symbol sym;
};

/* A resolved frame, by (file or kernel, address), in the symbolizer's
 * open-addressing table: one cache line. */
struct sym_slot {
	const void *owner;           /* a struct pr_dso *, &s->ksyms; NULL: free */
	uint64_t addr;
	struct pr_symbol sym;
};

/* A live process's perf map is read again on a miss at most this often,
 * and sooner when it has changed: whether it has is looked at, on a miss,
 * at most every PERF_MAP_CHECK_NS. */
#define PERF_MAP_REREAD_NS 1000000000ull
#define PERF_MAP_CHECK_NS 10000000ull

/* A process's perf map. */
struct sym_perf_map {
	uint32_t pid;
	uint32_t proc_serial;        /* the process read for (pr_frame); 0: not known */
	char *module;                /* "/tmp/perf-PID.map", as perf names it */
	struct pr_symtab syms;
	struct pr_arena names;
	uint64_t read_at;            /* CLOCK_MONOTONIC ns; 0: never */
	uint64_t checked_at;         /* its size last looked at (map_changed) */
	uint64_t size;               /* bytes, as last read (live) */
	uint64_t reads;
	bool found;
	bool read_exited;            /* the last read was after the process exited */
	/* Its resolved addresses, of every read, and their names: reset by
	 * a trim, freed with the map. */
	struct pr_hashmap results;   /* hash -> struct sym_result (chained) */
	struct pr_arena result_names;
};

struct pr_symbolizer {
	struct pr_model *model;
	struct pr_logger lg;
	bool live, no_inline, no_demangle, no_lines;
	/* Each file's address index (symindex.c) built when its DWARF is
	 * first needed, rather than libdw's lookups: not yet by default (an
	 * index in the cache is used either way). */
	bool use_index;
	bool libdw_only;             /* DS_SYMINDEX=0: no index, even a cached one */
	struct pr__ixcache *ixcache; /* where indexes are kept (symcache.c), or NULL */
	/* Indexes shared with other workers' symbolizers (ixshare.c; a
	 * reference held), or NULL. */
	struct pr__ixshare *ixshare;
	/* On libdw's path, a file's index is built to be kept when its
	 * .debug_info is at most this (symcache.c's build_now()). */
	uint64_t index_fill_max;
	/* CLOCK_MONOTONIC when it was made: a tenth of its life is what
	 * pr__sym_index_fill_late() may spend. */
	uint64_t born_ns;
	/* Or, when not 0, what it may spend (tests). */
	uint64_t fill_budget_ns;
	/* When not 0, what a whole build's side Dwarf may hold (struct
	 * sym_side; tests), and how often builds began one anew. */
	uint64_t side_max_bytes;
	uint64_t side_begun, side_again;
	struct pr_elfcache *elves;   /* the model's ELF cache */
	Dwfl_Callbacks callbacks;

	struct pr_hashmap modules;   /* struct pr_dso * -> struct sym_module */
	struct pr_hashmap perf_maps; /* pid -> struct sym_perf_map */
	struct pr_hashmap jitdumps;  /* pid -> struct sym_jitdump (jitnames.c) */
	struct pr_model_user user;   /* told what a trim evicts */
	/* PERF_MAP_REREAD_NS; a test sets 0 to re-read at every miss. */
	uint64_t perf_map_reread_ns;
	/* A live session's kept roots (model/roots.c), or NULL; and the time
	 * of the sample being named, which says which process a pid was. */
	struct pr__roots *roots;
	uint64_t now;
	/* A capture's JIT files (perfdata/perfdata_jit.c), or NULL. */
	const unsigned char *carried;
	size_t carried_len;

	bool kernel_loaded;
	char *kallsyms_path;         /* a copy to read instead of /proc/kallsyms */
	/* The kernel's symbols (kallsyms.c): sorted entries and their names,
	 * in an image built here or mapped from the cache. */
	const struct ksym_entry *ksyms;
	size_t nr_ksyms;
	const char *knames;
	char *kimage;
	void *kimage_map;
	size_t kimage_len;
	uint64_t ktext, kstext;      /* _text and _stext */
	uint64_t kernel_delta;       /* added to a recorded kernel address */

	struct sym_slot *slots;
	size_t nr_slots, used_slots;
	const char *cache_dir;       /* for what is slow to read (prsym.h), or NULL */

	struct pr_symbolizer_stats stats;
	struct pr_sym_pool *pool;    /* shared resolved frames (pool.c), or NULL */
	uint64_t epoch;              /* pr__symbolizer_epoch() */
	/* Modules whose cached index was cut short under its mapping, set
	 * aside until the symbolizer goes (what they named may still be
	 * pointed to: a pool's entries, a caller's last answer); and
	 * pr__busguard_hits() when last looked. */
	struct sym_module **cut;
	size_t nr_cut, cap_cut;
	uint64_t bus_hits;
};

/* pool.c: may a file's frames be shared, and sharing them. */
bool pr__sym_pool_eligible(const struct pr_dso *d);
bool pr__sym_pool_get(struct pr_sym_pool *p, const struct pr_dso *d, uint64_t addr,
		      struct pr_symbol *out);
void pr__sym_pool_put(struct pr_sym_pool *p, const struct pr_dso *d, uint64_t addr,
		      const struct pr_symbol *sym, const struct sym_module *from);
/* Every frame of `d`'s file the pool holds, dropped. */
void pr__sym_pool_forget(struct pr_sym_pool *p, const struct pr_dso *d);

/* symbolizer.c */

/* C++ and Rust names as perf shows them (see there); copied into `a`. */
const char *pr__sym_demangle(struct pr_symbolizer *s, struct pr_arena *a, const char *name);
/* One copy of each source file name per module; NULL when out of memory. */
const char *pr__sym_intern_file(struct sym_module *m, const char *name);
/* Name `sym` by a symbol alone (the kernel's, a perf map's); `name` may be NULL. */
void pr__sym_named(struct pr_symbolizer *s, struct pr_symbol *sym, const char *name,
		   uint64_t offset, enum pr_sym_source source);

/* debugfile.c */

/* libdwfl's find_debuginfo callback: the ELF cache's debug file, and
 * the inflated-debug-file cache. */
int pr__sym_find_debuginfo(Dwfl_Module *mod, void **userdata, const char *modname,
			   Dwarf_Addr base, const char *file_name,
			   const char *debuglink_file, GElf_Word debuglink_crc,
			   char **debuginfo_file_name);

/* symfile.c */

/* The module for frame `f`'s file (f->dso, mapped in `pid` where the frame
 * says), opened the first time; one that could not be opened has no `mod`.
 * NULL when out of memory. */
struct sym_module *pr__sym_module_of(struct pr_symbolizer *s, uint32_t pid,
				     const struct pr_frame *f);
void pr__sym_module_free(struct sym_module *m);
/* The DWARF indexes of a module (symdwarf.c). */
void pr__sym_dwarf_free(struct sym_module *m);
/* The symbols addr2line picks among, read from the session once. */
void pr__sym_addr2line_read(struct sym_module *m);
/* How many symbols the module has: its table's, or its index's. */
size_t pr__sym_nr_symbols(const struct sym_module *m);
/* The ELF symbol addr2line takes link-time `vaddr` to be in (its start
 * in *start), or NULL (symfile.c). */
const char *pr__sym_addr2line_symbol(struct sym_module *m, uint64_t vaddr, uint64_t *start);
/* What libdw's path keeps per unit, and the units' ranges. */
void pr__sym_dwarf_free_units(struct sym_module *m);
/* Hold ELF file `elf` (one a symbol name of `m` is in) as long as `m`. */
void pr__sym_module_hold_elf(struct sym_module *m, Elf *elf);
/* End `m`'s libdwfl session (and libdw's state behind it), once what
 * names its frames no longer needs it: its symbols, and its address
 * index with what the symbolizer shows (symdwarf.c). */
void pr__sym_module_close(struct sym_module *m);
/*
 * The pages of `m`'s files that libelf mapped for it (the file, its debug
 * file, those held for its names) and of its mapped address index leave
 * the resident set; they stay in the page cache and are mapped again as
 * they are read.  Only whole pages inside a section of a file's mapping
 * (`fm`: this process's file mappings), never of a relocatable module's
 * files, which libdwfl relocates in place, nor of the section headers,
 * which libelf may change in place (a section inflated): nothing libelf
 * wrote is lost, and what goes is read again from the file.
 */
void pr__sym_module_release_pages(struct sym_module *m, const struct pr_file_maps *fm);
/* Guard libelf's mapping of `elf`, one of m's files (NULL: none); and
 * whether a file of m's was cut short under such a mapping since. */
void pr__sym_module_guard(struct sym_module *m, Elf *elf);
bool pr__sym_module_file_cut(const struct sym_module *m);
/* Whether m's index, or one of its files, was cut short under its
 * mapping (symbolizer.c): what it answers is zeros there. */
bool pr__sym_module_cut(const struct sym_module *m);
/* What pr__sym_module_cut() looks at, copied when an answer is shared
 * (pool.c): asked from another thread, it reads nothing the module's
 * own thread may change meanwhile. */
struct sym_cut_marks {
	const struct pr__symindex *ix[2];
	int guards[4];
	size_t nr_guards;
};
void pr__sym_module_cut_marks(const struct sym_module *m, struct sym_cut_marks *out);
bool pr__sym_cut_marks_hit(const struct sym_cut_marks *k);
/*
 * Module `m`, named from its cached partial index, its file and DWARF
 * opened with libdwfl after all, for an address that index does not
 * cover: whether its DWARF is open.  Tried once.
 */
bool pr__sym_module_reopen(struct pr_symbolizer *s, struct sym_module *m);
/* Resolve file offset `off` of `m` into `sym`: 0 or -ENOMEM. */
int pr__sym_resolve_file(struct pr_symbolizer *s, struct sym_module *m, uint64_t off,
			 struct pr_symbol *sym);

/* plt.c */

/* Add `m`'s PLT stubs to its finished symbol table, named "callee@plt"
 * (PR_SYM_PLT; unnamed: ""), and ".plt" for the lazy binding's code;
 * `ifuncs`: the addresses of its IFUNC symbols (sorted here). */
void pr__sym_plt_symbols(struct sym_module *m, uint64_t *ifuncs, size_t nr_ifuncs);

/* symdwarf.c */

/* Fill `funcs` (room for MAX_INLINE) innermost first at link-time address
 * `vaddr`, in the symbol `sym_name` (NULL: none) starting at `sym_start`:
 * it names code no DWARF function covers.  Returns how many, 0 without
 * DWARF. */
size_t pr__sym_inline_chain(struct pr_symbolizer *s, struct sym_module *m, uint64_t vaddr,
			    const char *sym_name, uint64_t sym_start, struct pr_sym_func *funcs);

/* kallsyms.c */

/* Resolve kernel address `ip` into `sym`: 0 or -ENOMEM. */
int pr__sym_resolve_kernel(struct pr_symbolizer *s, uint64_t ip, struct pr_symbol *sym);
void pr__sym_kernel_free(struct pr_symbolizer *s);

/* perfmap.c */

/* A live session's symbolizer: its processes' JIT files are opened
 * through what `roots` kept of them (the session owns it, and frees it
 * after the symbolizer); the sample about to be named was taken at
 * `time` (its process, of those a pid was, is the one then). */
void pr__symbolizer_use_roots(struct pr_symbolizer *s, struct pr__roots *roots);
void pr__symbolizer_at(struct pr_symbolizer *s, uint64_t time);
/* A file's symbolizer: the JIT files the capture carries (the payload of
 * its FEAT_DS_JIT_FILES, `len` bytes, valid as long as `s`), read in place
 * of the host's. */
void pr__symbolizer_use_carried(struct pr_symbolizer *s, const void *sec, size_t len);
/* Share files' address indexes with the other symbolizers given `set`
 * (ixshare.h; a reference is taken): each file's made once among them.
 * Before the first frame is named. */
void pr__symbolizer_share_indexes(struct pr_symbolizer *s, struct pr__ixshare *set);
/* Name files' functions and inlined calls from their address indexes
 * (symindex.c), built as a file is first asked about, and close the
 * file's libdwfl session then.  Before the first frame is named. */
void pr__symbolizer_use_index(struct pr_symbolizer *s, bool on);
/* Changes when what a frame of a file or the kernel was named may no
 * longer be what it is named now: a trim (a pr_dso may be freed and its
 * address reused), another path; and no two symbolizers of a process
 * have had the same.  A caller keeping names across calls
 * (output/script.c) keeps them while it stands.  JIT code is named anew
 * at every frame and never stands. */
uint64_t pr__symbolizer_epoch(const struct pr_symbolizer *s);
/* Have the place where frame `f`'s name is kept read into the cache:
 * called for each frame of a stack before naming the first, the misses
 * (most of a frame's lookup) overlap. */
void pr__symbolizer_prefetch(const struct pr_symbolizer *s, const struct pr_frame *f);

/* Name JIT frame `f` of `pid` from its perf map into *out. */
int pr__sym_resolve_jit(struct pr_symbolizer *s, uint32_t pid, const struct pr_frame *f,
			struct pr_symbol *out);
void pr__sym_perf_map_free(struct sym_perf_map *pm);
/* Drop its results (a trim: none is in use). */
void pr__sym_perf_map_forget(struct sym_perf_map *pm);
/* The largest perf map read: a JIT writes a line per compiled function;
 * 64 MiB is a million of them. */
#define PR_PERF_MAP_MAX ((off_t)64 << 20)
/*
 * /tmp/perf-PID.map as perf would read it: a regular file of at most
 * PR_PERF_MAP_MAX bytes; for a live process (`live`) inside its root
 * (pr__open_in_root()) and owned by the process's user or root, since
 * anything a container's other users could write would be trusted
 * otherwise.  The fd, or a negative errno (-EPERM: the owner, -EFBIG: the
 * size, -EINVAL: not a regular file), said in the log at debug level.
 */
int pr__perf_map_open(uint32_t pid, bool live, const struct pr_logger *lg);

/* jitnames.c */

struct sym_jitdump;
/* Name JIT frame `f` of `pid` from the process's jitdump, if it has one
 * that names the address; *out is left without a name otherwise. */
int pr__sym_resolve_jitdump(struct pr_symbolizer *s, uint32_t pid, const struct pr_frame *f,
			    struct pr_symbol *out);
void pr__sym_jitdump_free(struct sym_jitdump *j);
/* Drop its results (a trim: none is in use), and what was read of it
 * when its process is `gone`: whether to keep it (false: free it). */
bool pr__sym_jitdump_forget(struct sym_jitdump *j, bool gone);
/*
 * Name JIT address `ip` of `pid` at the end of the run, from the jitdump
 * the process was seen to have, read once more: runtimes buffer what they
 * write (node flushes its jitdump when it exits), so code sampled may be
 * described only then.  Nothing named: *out without a name.
 */
int pr__sym_resolve_jitdump_late(struct pr_symbolizer *s, uint32_t pid, uint64_t ip,
				 struct pr_symbol *out);
/*
 * Process `pid` exited (its EXIT record, before what was kept of its root
 * goes): its jitdump, if it has one, read once more, now that the runtime
 * has written out what it buffered; the end of the run's look
 * (pr__sym_resolve_jitdump_late()) then reads nothing again.
 */
void pr__sym_jitdump_exited(struct pr_symbolizer *s, uint32_t pid);
/*
 * Process `pid`'s jitdump `path` as a capture carried it (`len` bytes at
 * `buf`, copied): its JIT code is named from these bytes, the file never
 * read.  0, -ENOMEM or -EFBIG (pr__jitdump_feed()).
 */
int pr__sym_jitdump_carried(struct pr_symbolizer *s, uint32_t pid, const char *path,
			    const void *buf, size_t len);

#endif /* PR_SYMBOLIZER_H */
