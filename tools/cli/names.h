/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The options that say how frames are found and named, shared by the
 * live command and `report`: debug directories, the depth limit, inlined
 * functions, demangling, debuginfod, the unwinder's checks, and how many
 * workers unwind.
 */
#ifndef DS_NAMES_H
#define DS_NAMES_H

#include <getopt.h>
#include <stdbool.h>
#include <stdint.h>

#include "prsym.h"
#include "prunwind.h"

#define DS_MAX_DEBUG_DIRS 32

struct ds_names {
	const char *dirs[DS_MAX_DEBUG_DIRS];
	size_t nr_dirs;
	uint32_t max_depth;          /* 0: the unwinder's default */
	bool no_inline, no_demangle;
	/* Set by the command when its output shows no source lines. */
	bool no_lines;
	bool no_fp, no_rule_cache, no_join;
	const char *debuginfod_timeout, *debuginfod_cache;
	char timeout_s[24];             /* --debuginfod-timeout, in seconds */
	bool no_debuginfod;
	uint32_t jobs;               /* --jobs: workers; 0: chosen */
	/* --index-cache (NULL: the cache directory's index/; the agent sets
	 * its own), --index-cache-size (0: the library's), --no-index-cache. */
	const char *index_cache;
	uint64_t index_cache_bytes;
	bool no_index_cache;
	/* Set by the agent: every file named from its address index. */
	bool index_always;
};

enum {
	DS_OPT_DEBUG_DIR = 2000, DS_OPT_MAX_DEPTH, DS_OPT_NO_FP, DS_OPT_NO_RULE_CACHE,
	DS_OPT_NO_JOIN,
	DS_OPT_NO_INLINE, DS_OPT_NO_DEMANGLE, DS_OPT_DEBUGINFOD_TIMEOUT,
	DS_OPT_DEBUGINFOD_CACHE, DS_OPT_NO_DEBUGINFOD, DS_OPT_JOBS,
	DS_OPT_INDEX_CACHE, DS_OPT_INDEX_CACHE_SIZE, DS_OPT_NO_INDEX_CACHE,
};

/* The most workers --jobs gives. */
#define DS_MAX_JOBS 64

extern const struct option ds_names_longopts[];
extern const char ds_names_help[];

/* One of those options: 1 when it was one, 0 when `opt` is not, -1 after
 * reporting a bad value. */
int ds_names_option(struct ds_names *n, int opt, const char *arg);

/*
 * A session (prsession.h) over reader `r` or, when it is NULL, file `f`,
 * unwinding and, with `names`, naming as the options say (debuginfod's
 * settings too): `so` gives the rest (its model's, unwinder's and
 * symbolizer's options are filled in here; a model's cache it names is
 * kept); `sym`
 * (may be NULL: the defaults, with the cache directory) the symbolizer's
 * options before the names options apply.  NULL with errno set.
 */
struct pr_session *ds_names_session(const struct ds_names *n, struct pr_reader *r,
				    struct pr_file *f, struct pr_session_opts *so, bool names,
				    const struct pr_symbolizer_opts *sym);

/* -v's lines of where a session's CPU went (`feeder` names the thread
 * that handed records in), of the stack copies cut (with `cuts`: a live
 * session's), and of the names several workers shared. */
void ds_session_print_cpu(const struct pr_session *ses, const char *feeder, bool cuts);
/* The summary's line on samples a sink had no memory for (none: none). */
void ds_session_no_memory(const struct pr_session_stats *ss);

#endif
