/* SPDX-License-Identifier: Apache-2.0 */
/* How frames are found and named: the options the live command and
 * `report` share. */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>

#include "cli.h"
#include "names.h"

const struct option ds_names_longopts[] = {
	{ "debug-dir", required_argument, NULL, DS_OPT_DEBUG_DIR },
	{ "max-depth", required_argument, NULL, DS_OPT_MAX_DEPTH },
	{ "no-frame-pointers", no_argument, NULL, DS_OPT_NO_FP },
	{ "no-rule-cache", no_argument, NULL, DS_OPT_NO_RULE_CACHE },
	{ "no-join", no_argument, NULL, DS_OPT_NO_JOIN },
	{ "no-inline", no_argument, NULL, DS_OPT_NO_INLINE },
	{ "no-demangle", no_argument, NULL, DS_OPT_NO_DEMANGLE },
	{ "debuginfod-timeout", required_argument, NULL, DS_OPT_DEBUGINFOD_TIMEOUT },
	{ "debuginfod-cache", required_argument, NULL, DS_OPT_DEBUGINFOD_CACHE },
	{ "no-debuginfod", no_argument, NULL, DS_OPT_NO_DEBUGINFOD },
	{ "jobs", required_argument, NULL, DS_OPT_JOBS },
	{ NULL, 0, NULL, 0 },
};

const char ds_names_help[] =
	"Unwinding and names:\n"
	"      --no-inline          do not show the functions inlined at each\n"
	"                           frame (faster)\n"
	"      --no-demangle        keep C++ and Rust names mangled\n"
	"      --debug-dir DIR      find mapped files and debug files by\n"
	"                           build-id in DIR too (DIR/.build-id/xx/rest,\n"
	"                           DIR/xx/rest); repeatable\n"
	"      --debuginfod-timeout SECONDS\n"
	"                           how long one fetch from debuginfod may take\n"
	"                           (when DEBUGINFOD_URLS is set; default 30)\n"
	"      --debuginfod-cache DIR\n"
	"                           where debuginfod's fetches are kept\n"
	"      --no-debuginfod      do not ask debuginfod\n"
	"      --max-depth N        user frames at most (default 127, up to 1024)\n"
	"      --no-frame-pointers  stop where unwind information ends instead\n"
	"                           of following frame pointers\n"
	"      --no-rule-cache      step every frame through libunwind (slower;\n"
	"                           the result is the same)\n"
	"      --no-join            leave stacks the copy cut short as they are;\n"
	"                           by default one is completed from the thread's\n"
	"                           last complete stack when that holds the same\n"
	"                           frame, unchanged (the joined frames are marked:\n"
	"                           --annotate, pprof's stack_end label)\n"
	"      --jobs N             unwind and name on N worker threads, each\n"
	"                           given whole threads of the target (default:\n"
	"                           as many as the sample rate needs, at most the\n"
	"                           CPUs less one; report: 1).  perf script's\n"
	"                           text is written by one\n";

int ds_names_option(struct ds_names *n, int opt, const char *arg)
{
	uint64_t v;

	switch (opt) {
	case DS_OPT_DEBUG_DIR:
		if (n->nr_dirs == DS_MAX_DEBUG_DIRS) {
			ds_err("at most %d --debug-dir", DS_MAX_DEBUG_DIRS);
			return -1;
		}
		n->dirs[n->nr_dirs++] = arg;
		return 1;
	case DS_OPT_MAX_DEPTH:
		if (ds_parse_u64(arg, "--max-depth", 1, PR_UNWIND_MAX_DEPTH, &v))
			return -1;
		n->max_depth = (uint32_t)v;
		return 1;
	case DS_OPT_NO_FP:
		n->no_fp = true;
		return 1;
	case DS_OPT_NO_RULE_CACHE:
		n->no_rule_cache = true;
		return 1;
	case DS_OPT_NO_JOIN:
		n->no_join = true;
		return 1;
	case DS_OPT_NO_INLINE:
		n->no_inline = true;
		return 1;
	case DS_OPT_NO_DEMANGLE:
		n->no_demangle = true;
		return 1;
	case DS_OPT_DEBUGINFOD_TIMEOUT:
		if (ds_parse_u64(arg, "--debuginfod-timeout (seconds)", 1, 3600, &v))
			return -1;
		n->debuginfod_timeout = arg;
		return 1;
	case DS_OPT_DEBUGINFOD_CACHE:
		n->debuginfod_cache = arg;
		return 1;
	case DS_OPT_NO_DEBUGINFOD:
		n->no_debuginfod = true;
		return 1;
	case DS_OPT_JOBS:
		if (ds_parse_u64(arg, "--jobs", 1, DS_MAX_JOBS, &v))
			return -1;
		n->jobs = (uint32_t)v;
		return 1;
	default:
		return 0;
	}
}

void ds_names_apply(const struct ds_names *n, struct pr_unwinder_opts *uo,
		    struct pr_symbolizer_opts *so)
{
	ds_debuginfod_env(n->no_debuginfod, n->debuginfod_timeout, n->debuginfod_cache);
	uo->max_depth = n->max_depth;
	uo->debug_dirs = n->dirs;
	uo->nr_debug_dirs = n->nr_dirs;
	uo->no_frame_pointers = n->no_fp;
	uo->no_rule_cache = n->no_rule_cache;
	uo->no_join = n->no_join;
	so->debug_dirs = n->dirs;
	so->nr_debug_dirs = n->nr_dirs;
	so->no_inline = n->no_inline;
	so->no_lines = n->no_lines;
	so->no_demangle = n->no_demangle;
}

int ds_names_open_live(const struct ds_names *n, struct pr_sym_pool *pool,
		       struct pr_model **model, struct pr_unwinder **u,
		       struct pr_symbolizer **sym)
{
	PR_OPTS(pr_unwinder_opts, uo, .live = true, .log = ds_log);
	PR_OPTS(pr_symbolizer_opts, so, .live = true, .cache_dir = ds_cache_dir(), .log = ds_log);
	int err;

	ds_names_apply(n, &uo, &so);
	so.pool = pool;
	*u = NULL;
	*sym = NULL;
	*model = pr_model_new(NULL);
	if (*model)
		*u = pr_unwinder_new(*model, &uo);
	if (*u)
		*sym = pr_symbolizer_new(*model, &so);
	if (*sym)
		return 0;
	err = errno;
	pr_unwinder_free(*u);
	pr_model_free(*model);
	*u = NULL;
	*model = NULL;
	errno = err;
	return -1;
}

void ds_pool_print(struct pr_sym_pool *pool)
{
	uint64_t hits, lookups;

	if (pool && !pr_sym_pool_stats(pool, &hits, &lookups))
		fprintf(stderr, "dwarfsample: of %" PRIu64 " addresses new to a worker, %" PRIu64
			" were named by another\n", lookups, hits);
}
