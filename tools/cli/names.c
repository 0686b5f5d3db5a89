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
	{ "index-cache", required_argument, NULL, DS_OPT_INDEX_CACHE },
	{ "index-cache-size", required_argument, NULL, DS_OPT_INDEX_CACHE_SIZE },
	{ "no-index-cache", no_argument, NULL, DS_OPT_NO_INDEX_CACHE },
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
	"      --debuginfod-timeout DURATION\n"
	"                           how long one fetch from debuginfod may take\n"
	"                           (when DEBUGINFOD_URLS is set; default 30s)\n"
	"      --debuginfod-cache DIR\n"
	"                           where debuginfod's fetches are kept\n"
	"      --no-debuginfod      do not ask debuginfod\n"
	"      --index-cache DIR    keep files' address indexes, when names come\n"
	"                           from them, in DIR (default\n"
	"                           $XDG_CACHE_HOME/dwarfsample/index; the agent:\n"
	"                           $STATE_DIRECTORY/index or\n"
	"                           /var/lib/dwarfsample/index)\n"
	"      --index-cache-size BYTES\n"
	"                           keep at most this much there; the least\n"
	"                           recently used go first (default 256M)\n"
	"      --no-index-cache     neither read nor write the index cache\n"
	"      --max-depth N        user frames at most (default and most 1024)\n"
	"      --no-frame-pointers  stop where unwind information ends instead\n"
	"                           of following frame pointers\n"
	"      --no-rule-cache      step every frame through libunwind (slower;\n"
	"                           the result is the same)\n"
	"      --no-join            leave stacks the copy cut short as they are;\n"
	"                           by default one is completed from the thread's\n"
	"                           last complete stack when that holds the same\n"
	"                           frame and the sample's call chain confirms the\n"
	"                           callers (the joined frames are marked:\n"
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
		if (ds_parse_duration(arg, "--debuginfod-timeout", &v))
			return -1;
		/* debuginfod's own setting is whole seconds. */
		if (v < 1000000000u || v > UINT64_C(3600000000000) || v % 1000000000u) {
			ds_err("--debuginfod-timeout: '%s': give whole seconds, 1s to 1h", arg);
			return -1;
		}
		snprintf(n->timeout_s, sizeof(n->timeout_s), "%" PRIu64, v / 1000000000u);
		n->debuginfod_timeout = n->timeout_s;
		return 1;
	case DS_OPT_DEBUGINFOD_CACHE:
		n->debuginfod_cache = arg;
		return 1;
	case DS_OPT_NO_DEBUGINFOD:
		n->no_debuginfod = true;
		return 1;
	case DS_OPT_INDEX_CACHE:
		n->index_cache = arg;
		return 1;
	case DS_OPT_INDEX_CACHE_SIZE:
		return ds_parse_size(arg, "--index-cache-size", &n->index_cache_bytes) ? -1 : 1;
	case DS_OPT_NO_INDEX_CACHE:
		n->no_index_cache = true;
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

struct pr_session *ds_names_session(const struct ds_names *n, struct pr_reader *r,
				    struct pr_file *f, struct pr_session_opts *so, bool names,
				    const struct pr_symbolizer_opts *sym)
{
	PR_OPTS(pr_model_opts, mo, .debug_dirs = n->dirs, .nr_debug_dirs = n->nr_dirs);
	PR_OPTS(pr_unwinder_opts, uo, .live = r != NULL, .log = ds_log, .max_depth = n->max_depth,
		.no_frame_pointers = n->no_fp, .no_rule_cache = n->no_rule_cache,
		.no_join = n->no_join);
	PR_OPTS(pr_symbolizer_opts, own, .live = r != NULL, .cache_dir = ds_cache_dir(),
		.log = ds_log);

	ds_debuginfod_env(n->no_debuginfod, n->debuginfod_timeout, n->debuginfod_cache);
	/* The model finds the files, for the unwinder and the symbolizer
	 * alike: the debug directories are its. */
	if (so->model)
		mo.cache = so->model->cache;
	so->model = &mo;
	if (sym)
		own = *sym;
	own.no_inline = n->no_inline;
	own.no_lines = n->no_lines;
	own.no_demangle = n->no_demangle;
	own.index_cache_dir = n->index_cache;
	own.index_cache_max = n->index_cache_bytes;
	own.no_index_cache = n->no_index_cache;
	own.index_always = n->index_always;
	so->unwind = &uo;
	so->names = names ? &own : NULL;
	return r ? pr_session_new_reader(r, so) : pr_session_new_file(f, so);
}

void ds_session_print_cpu(const struct pr_session *ses, const char *feeder, bool cuts)
{
	struct pr_session_stats ss = { .sz = sizeof(ss) };
	size_t nr = pr_session_nr_workers(ses);

	if (pr_session_stats(ses, &ss))
		return;
	fprintf(stderr, "dwarfsample: CPU: %s thread %.3f s, %zu worker%s %.3f s", feeder,
		(double)ss.feeder_ns / 1e9, nr, nr == 1 ? "" : "s", (double)ss.workers_ns / 1e9);
	if (nr > 1)
		fprintf(stderr, " (busiest %.3f s)", (double)ss.busiest_ns / 1e9);
	fputc('\n', stderr);
	if (cuts)
		fprintf(stderr, "dwarfsample: stacks copied up to where their thread's stacks "
			"end: %" PRIu64 " of %" PRIu64 " samples, %.1f MB not copied; %" PRIu64
			" cut too short (their threads are copied whole since)\n", ss.cut,
			ss.copied, (double)ss.cut_bytes / 1e6, ss.cut_short);
	if (nr > 1)
		fprintf(stderr, "dwarfsample: of %" PRIu64 " addresses new to a worker, %" PRIu64
			" were named by another\n", ss.pool_lookups, ss.pool_hits);
	if (nr > 1)
		fprintf(stderr, "dwarfsample: address indexes made once for all workers: %" PRIu64
			" built, %" PRIu64 " mapped from the cache; taken as made %" PRIu64
			" time%s\n", ss.index_built, ss.index_mapped, ss.index_shared,
			ss.index_shared == 1 ? "" : "s");
}

void ds_session_no_memory(const struct pr_session_stats *ss)
{
	if (ss->no_memory)
		fprintf(stderr, "dwarfsample: %" PRIu64 " sample%s left out of the output: no "
			"memory to count %s\n", ss->no_memory, ss->no_memory == 1 ? " was" : "s were",
			ss->no_memory == 1 ? "it" : "them");
}
