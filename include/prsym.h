/* SPDX-License-Identifier: Apache-2.0 */
/*
 * prsym.h - names for the frames the unwinder finds: the function and the
 * offset in it, the functions inlined at the address (innermost first),
 * source files and lines.  From a mapped file's symbol tables and DWARF
 * (through elfutils' libdwfl/libdw; separate debug files by build-id or
 * .gnu_debuglink, or from debuginfod), from /proc/kallsyms for the kernel,
 * and from /tmp/perf-PID.map or the process's jitdump (jit-PID.dump, as
 * node --perf-prof and the JVM's agents write it) for JIT code.
 *
 * debuginfod is asked for debug files not found locally when the
 * environment says where it is (DEBUGINFOD_URLS), through libdw, with its
 * own settings: DEBUGINFOD_CACHE_PATH for the cache, DEBUGINFOD_TIMEOUT
 * (seconds) for each fetch.
 *
 * The conventions written at the top of perfreader.h hold.
 */
#ifndef PRSYM_H
#define PRSYM_H

#include "prcommon.h"
#include "prmodel.h"
#include "prunwind.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Where a frame's name came from. */
enum pr_sym_source {
	PR_SYM_NONE = 0,           /* nothing: only the address is known */
	PR_SYM_SYMTAB,             /* an ELF symbol table (.symtab of the file or
				    * of its debug file, else .dynsym) */
	PR_SYM_KALLSYMS,           /* /proc/kallsyms */
	PR_SYM_PERF_MAP,           /* /tmp/perf-PID.map */
	/* A jitdump (jit-PID.dump, which the process mapped): since 2.1. */
	PR_SYM_JITDUMP,
};

/* One function at a frame's address, as DWARF describes it: the function
 * the address is in, or one inlined there. */
struct pr_sym_func {
	/* As the debug information names it: the linkage name demangled
	 * without parameters (C++), else DW_AT_name.  NULL when unnamed. */
	const char *name;
	/* Where in the source: the address's own line for the innermost
	 * function, the call site for each function that inlined the one
	 * before it.  NULL and 0 without line information. */
	const char *file;
	uint32_t line;
	/* Called inline from the next entry. */
	bool inlined;
};

struct pr_symbol {
	/* The symbol the address is in (an ELF symbol table's, the kernel's,
	 * a perf map's), demangled without parameters as perf shows it; NULL
	 * when nothing names the address. */
	const char *name;
	/* The address minus the symbol's start: perf's "sym+0xoff". */
	uint64_t offset;
	/* From DWARF, when the file (or its debug file) has line information
	 * for the address: innermost first, the last the function the
	 * address is in (whose DWARF name may differ from `name`: a clone's
	 * symbol is "f.part.0", its DWARF name "f").  nr is 0 without. */
	const struct pr_sym_func *funcs;
	size_t nr;
	/* What the frame is attributed to, as perf names it: the mapped
	 * file's path, "[kernel.kallsyms]" or a kernel module's "[name]",
	 * "[vdso]", "/tmp/perf-PID.map", a jitdump's path (JIT code it
	 * names); NULL when in no mapping. */
	const char *module;
	enum pr_sym_source source;
};

struct pr_symbolizer;

struct pr_symbolizer_opts {
	size_t sz;
	/* The processes run on this machine: files are opened through
	 * /proc/PID/map_files and /proc/PID/root, perf maps read through
	 * /proc/PID/root and re-read when an address misses. */
	bool live;
	/* Deprecated, as pr_unwinder_opts.debug_dirs: give them to the
	 * model (pr_model_opts.debug_dirs).  Used only when the model has
	 * none of its own. */
	const char *const *debug_dirs;
	size_t nr_debug_dirs;
	/* Symbols only: no DWARF, so no inlined functions and no source
	 * lines (faster; all perf script --no-inline shows). */
	bool no_inline;
	/* Keep C++ names as the linker sees them. */
	bool no_demangle;
	/* A directory (existing, writable) to keep what is slow to read in:
	 * the kernel's symbols, parsed, for as long as they stay where they
	 * are (this boot, these modules); debug files whose DWARF is
	 * compressed, inflated, by build-id.  NULL: read them every time. */
	const char *cache_dir;
	/* The kernel's symbols from this file, a copy of the recording
	 * machine's /proc/kallsyms, instead of this machine's (perf report
	 * --kallsyms).  NULL: /proc/kallsyms, used only when the capture's
	 * kernel build-id (if it recorded one) is the running kernel's. */
	const char *kallsyms;
	pr_log_fn log;
	void *log_ctx;
	/* Resolved frames shared with the other symbolizers given the same
	 * pool (pr_sym_pool_new()), over models of the same processes (the
	 * parallel workers of one run): a file's address named by one is not
	 * named again by the others.  What a symbolizer takes from the pool
	 * points into the symbolizer and model that resolved it, so all of
	 * them must live while any is used, and their models cannot be
	 * trimmed (pr_model_trim() says -EBUSY).  NULL: its own only. */
	struct pr_sym_pool *pool;
	/* Functions and the functions inlined at each address, but no
	 * source files or lines (every pr_sym_func's file NULL, line 0):
	 * the units' line tables are not read, which is most of naming a
	 * C++ address seen for the first time.  For output that shows no
	 * lines (folded, SVG). */
	bool no_lines;
	/* Since 2.1.  Where files' address indexes are kept: the index a
	 * file's DWARF is walked for once is written here by build-id and
	 * mapped, read-only and checked, by the next symbolizer of this
	 * program or another that names the same file, which then does not
	 * open the file's DWARF.  Written for every file when the
	 * symbolizer names from indexes rather than through libdw's lookups
	 * (index_always, or a build's default), else for files whose
	 * .debug_info is at most 512 KiB, and, when the symbolizer is freed,
	 * for larger files whose DWARF named frames as long as their build's
	 * estimated cost (80 ns per byte of .debug_info) stays within a tenth
	 * of the symbolizer's life: pr_symbolizer_free() of one that lived
	 * ten seconds may take half a second to index libc's debug file.
	 * Made when first written (mode 0700); it must
	 * belong to the user running.  NULL: cache_dir's "index" directory,
	 * none without cache_dir. */
	const char *index_cache_dir;
	/* Since 2.1.  The most the index cache holds, in bytes: past it the
	 * least recently used indexes go.  0: 256 MiB. */
	uint64_t index_cache_max;
	/* Since 2.1.  No index cache: indexes are built for this symbolizer
	 * alone, and nothing is read or written. */
	bool no_index_cache;
	/* Since 2.1.  Name every file with DWARF from its address index
	 * (built whole from the DWARF once, or read from the index cache)
	 * and then close the file's libdw state, instead of libdw's lookups
	 * file by file: for a consumer that runs for days (an agent), whose
	 * memory then holds indexes, not the state libdw builds behind each
	 * address named.  DS_SYMINDEX=0 in the environment overrides it. */
	bool index_always;
};

/*
 * A symbolizer over `model`, which must outlive it: it says where the
 * recorded kernel was and what build-ids a file recorded.  A frame's
 * process mappings are not looked up there: each frame carries its own
 * (pr_frame).  NULL with errno set on failure.  The options' strings are
 * copied.  The caller owns the symbolizer and releases it with
 * pr_symbolizer_free().  It opens files through the model's file
 * cache, shared with the unwinders over the model: use them all from one
 * thread.
 */
PR_API struct pr_symbolizer *pr_symbolizer_new(struct pr_model *model,
					       const struct pr_symbolizer_opts *opts);
/* Accepts NULL. */
PR_API void pr_symbolizer_free(struct pr_symbolizer *s);

/*
 * A pool of resolved frames for symbolizers on several threads
 * (pr_symbolizer_opts.pool).  A mutex guards it, taken only when a
 * symbolizer meets a (file, address) it has not resolved before.  Free it
 * after every symbolizer that uses it.  NULL with errno set on failure.
 */
struct pr_sym_pool;
PR_API struct pr_sym_pool *pr_sym_pool_new(void);
/* Accepts NULL. */
PR_API void pr_sym_pool_free(struct pr_sym_pool *p);
/* Of the lookups the symbolizers made in the pool (each a frame new to
 * one of them), how many it answered.  Returns 0 or -EINVAL. */
PR_API int pr_sym_pool_stats(struct pr_sym_pool *p, uint64_t *hits, uint64_t *lookups);

/*
 * Name frame `f` (from pr_unwinder_unwind()) of process `pid`.  Each
 * (file, address) is resolved once; *sym and what it points to stay valid
 * until the symbolizer is freed.  Returns 0 (a frame nothing names is not
 * an error: sym->nr is 0), or -EINVAL.  Not thread-safe.
 */
PR_API int pr_symbolizer_symbolize(struct pr_symbolizer *s, uint32_t pid,
			       const struct pr_frame *f, struct pr_symbol *sym);

struct pr_symbolizer_stats {
	size_t sz;
	uint64_t lookups;          /* frames asked for */
	uint64_t resolved;         /* (file, address) pairs resolved, once each */
	uint64_t named;            /* ... of which something named */
	uint64_t files;            /* files opened */
	uint64_t debug_files;      /* ... with DWARF found for them */
	uint64_t missing;          /* mapped files not found */
};

/* Copy the counters; set st->sz first.  Returns 0 or -EINVAL. */
PR_API int pr_symbolizer_stats(const struct pr_symbolizer *s,
			       struct pr_symbolizer_stats *st);

#ifdef __cplusplus
}
#endif

#endif /* PRSYM_H */
