/* SPDX-License-Identifier: Apache-2.0 */
/*
 * `dwarfsample report -i FILE`: replay a perf.data file through the
 * process model, the unwinder and the symbolizer, and print every
 * sample's stack.
 *
 * --format perf-script (the default) prints what `perf script` prints for
 * the same file, line for line (tools/perfscript.c): its default fields,
 * or those -F lists, with the inlined functions unless --no-inline.
 */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "perfreader.h"
#include "perfscript.h"
#include "prsym.h"
#include "prunwind.h"
#include "report.h"

#define MAX_DEBUG_DIRS 32

struct report_args {
	const char *input;
	const char *output;
	const char *format;
	unsigned fields;
	const char *dirs[MAX_DEBUG_DIRS];
	size_t nr_dirs;
	const char *kallsyms;
	uint32_t max_depth;
	int verbose;
	bool no_fp, no_rule_cache, no_inline, no_demangle;
};

struct report {
	struct pr_file *file;
	struct pr_model *model;
	struct pr_unwinder *u;
	struct pr_symbolizer *sym;   /* when the fields name frames */
	struct ps_writer w;
};

static const char *event_name(struct report *r, const struct pr_record *rec)
{
	int idx = pr_file_event_of(r->file, rec);

	return idx < 0 ? NULL : pr_file_event_name(r->file, (size_t)idx);
}

static int on_record(const struct pr_record *rec, void *arg)
{
	struct report *r = arg;
	struct pr_stack st;

	if (rec->type != PR_RECORD_SAMPLE)
		return pr_model_apply(r->model, rec);
	if (pr_unwinder_unwind(r->u, rec, &st))
		return 0;
	ps_sample(&r->w, rec, pr_model_comm(r->model, rec->tid),
		  (r->w.fields & PS_EVENT) ? event_name(r, rec) : NULL, &st, r->sym);
	return 0;
}

static void summary(const struct pr_unwinder *u, const struct pr_symbolizer *sym,
		    int verbose)
{
	struct pr_unwind_stats st = { .sz = sizeof(st) };

	pr_unwinder_stats(u, &st);
	fprintf(stderr, "dwarfsample: %" PRIu64 " samples, %.1f user frames on average",
		st.samples, st.samples ? (double)st.frames / (double)st.samples : 0.0);
	if (st.fp_frames)
		fprintf(stderr, " (%" PRIu64 " by frame pointer)", st.fp_frames);
	fputs("; stacks ended:", stderr);
	for (int e = 0; e < PR_END_MAX; e++)
		if (st.ends[e])
			fprintf(stderr, " %s %.1f%%", pr_stack_end_name((enum pr_stack_end)e),
				100.0 * (double)st.ends[e] / (double)st.samples);
	fputc('\n', stderr);
	if (st.files_missing)
		fprintf(stderr, "dwarfsample: %" PRIu64 " mapped file%s not found "
			"(-v names them)\n", st.files_missing,
			st.files_missing == 1 ? " was" : "s were");
	if (verbose && st.samples)
		fprintf(stderr, "dwarfsample: %.1f%% of samples unwound from compiled "
			"rules, the rest through libunwind; %" PRIu64 " files opened\n",
			100.0 * (double)st.fast_samples / (double)st.samples,
			st.files_opened);
	if (verbose && sym) {
		struct pr_symbolizer_stats ss = { .sz = sizeof(ss) };

		pr_symbolizer_stats(sym, &ss);
		fprintf(stderr, "dwarfsample: %" PRIu64 " addresses named of %" PRIu64
			" resolved (once each); %" PRIu64 " files read for symbols, %" PRIu64
			" with debug information\n", ss.named, ss.resolved, ss.files,
			ss.debug_files);
	}
}

static int run(const struct report_args *a)
{
	PR_OPTS(pr_file_opts, fo, .log = ds_log);
	PR_OPTS(pr_unwinder_opts, uo, .max_depth = a->max_depth,
		.debug_dirs = a->dirs, .nr_debug_dirs = a->nr_dirs,
		.no_frame_pointers = a->no_fp, .no_rule_cache = a->no_rule_cache,
		.log = ds_log);
	PR_OPTS(pr_symbolizer_opts, so, .debug_dirs = a->dirs, .nr_debug_dirs = a->nr_dirs,
		.no_inline = a->no_inline || !(a->fields & (PS_SRCLINE | PS_SYM)),
		.no_demangle = a->no_demangle, .cache_dir = ds_cache_dir(),
		.kallsyms = a->kallsyms, .log = ds_log);
	struct report r = { .w = { .out = stdout, .fields = a->fields,
				   .inline_frames = !a->no_inline } };
	int n, ret = 1;

	r.file = pr_file_open(a->input, &fo);
	if (!r.file)
		return 1;
	if (a->output && !(r.w.out = fopen(a->output, "we"))) {
		ds_err("cannot write %s: %s; choose another output path (-o)",
		       a->output, strerror(errno));
		pr_file_close(r.file);
		return 1;
	}
	setvbuf(r.w.out, NULL, _IOFBF, 1 << 20);
	/* Event names are right-aligned to the longest. */
	for (size_t i = 0; i < pr_file_nr_attrs(r.file); i++) {
		const char *name = pr_file_event_name(r.file, i);
		int len = name ? (int)strlen(name) : 0;

		if (len > r.w.event_width)
			r.w.event_width = len;
	}
	r.model = pr_model_new();
	if (r.model && !pr_model_use_file(r.model, r.file))
		r.u = pr_unwinder_new(r.model, &uo);
	if (r.u && (a->fields & (PS_SYM | PS_SRCLINE)))
		r.sym = pr_symbolizer_new(r.model, &so);
	if (!r.u || ((a->fields & (PS_SYM | PS_SRCLINE)) && !r.sym)) {
		ds_err("out of memory");
	} else {
		n = pr_file_consume(r.file, on_record, &r);
		/* Corrupt records were reported and skipped. */
		ret = n < 0 && n != -EBADMSG;
		summary(r.u, r.sym, a->verbose);
	}
	if (fflush(r.w.out) || (r.w.out != stdout && fclose(r.w.out))) {
		ds_err("writing %s failed: %s", a->output ? a->output : "the output",
		       strerror(errno));
		ret = 1;
	}
	pr_symbolizer_free(r.sym);
	pr_unwinder_free(r.u);
	pr_model_free(r.model);
	pr_file_close(r.file);
	return ret;
}

static void usage(FILE *out)
{
	fputs("usage: dwarfsample report -i FILE [options]\n"
	      "\n"
	      "Unwind every sample of a perf.data file (dwarfsample record's or\n"
	      "perf record --call-graph dwarf's), name its frames and print the\n"
	      "stacks.\n"
	      "\n"
	      "  -i, --input FILE         the perf.data file to read\n"
	      "  -o, --output FILE        write there instead of standard output\n"
	      "  -f, --format FORMAT      perf-script: perf script's layout (default)\n"
	      "  -F, --fields LIST        which of perf script's fields, as its -F:\n"
	      "                           comm,pid,tid,cpu,time,period,event,ip,sym,\n"
	      "                           symoff,dso,srcline (default: perf's,\n"
	      "                           comm,tid,cpu,time,period,event,ip,sym,\n"
	      "                           symoff,dso)\n"
	      "      --no-inline          do not show the functions inlined at each\n"
	      "                           frame (faster)\n"
	      "      --no-demangle        keep C++ names mangled\n"
	      "      --debug-dir DIR      find mapped files and debug files by\n"
	      "                           build-id in DIR too (DIR/.build-id/xx/rest,\n"
	      "                           DIR/xx/rest); repeatable\n"
	      "      --debuginfod-timeout SECONDS\n"
	      "                           how long one fetch from debuginfod may take\n"
	      "                           (when DEBUGINFOD_URLS is set; default 30)\n"
	      "      --debuginfod-cache DIR\n"
	      "                           where debuginfod's fetches are kept\n"
	      "      --no-debuginfod      do not ask debuginfod\n"
	      "      --kallsyms FILE      name kernel frames from FILE, a copy of the\n"
	      "                           recording machine's /proc/kallsyms\n"
	      "      --max-depth N        user frames at most (default 127, up to 1024)\n"
	      "      --no-frame-pointers  stop where unwind information ends instead\n"
	      "                           of following frame pointers\n"
	      "      --no-rule-cache      step every frame through libunwind (slower;\n"
	      "                           the result is the same)\n"
	      "  -v, --verbose            more diagnostics\n"
	      "  -h, --help               this help\n", out);
}

enum {
	OPT_DEBUG_DIR = 2000, OPT_MAX_DEPTH, OPT_NO_FP, OPT_NO_RULE_CACHE, OPT_NO_INLINE,
	OPT_NO_DEMANGLE, OPT_DEBUGINFOD_TIMEOUT, OPT_DEBUGINFOD_CACHE, OPT_NO_DEBUGINFOD,
	OPT_KALLSYMS,
};

int ds_cmd_report(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "input", required_argument, NULL, 'i' },
		{ "output", required_argument, NULL, 'o' },
		{ "format", required_argument, NULL, 'f' },
		{ "debug-dir", required_argument, NULL, OPT_DEBUG_DIR },
		{ "max-depth", required_argument, NULL, OPT_MAX_DEPTH },
		{ "no-frame-pointers", no_argument, NULL, OPT_NO_FP },
		{ "no-rule-cache", no_argument, NULL, OPT_NO_RULE_CACHE },
		{ "fields", required_argument, NULL, 'F' },
		{ "no-inline", no_argument, NULL, OPT_NO_INLINE },
		{ "no-demangle", no_argument, NULL, OPT_NO_DEMANGLE },
		{ "debuginfod-timeout", required_argument, NULL, OPT_DEBUGINFOD_TIMEOUT },
		{ "debuginfod-cache", required_argument, NULL, OPT_DEBUGINFOD_CACHE },
		{ "no-debuginfod", no_argument, NULL, OPT_NO_DEBUGINFOD },
		{ "kallsyms", required_argument, NULL, OPT_KALLSYMS },
		{ "verbose", no_argument, NULL, 'v' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	struct report_args a = { .format = "perf-script", .fields = PS_DEFAULT };
	const char *timeout = NULL, *cache = NULL;
	bool no_debuginfod = false;
	int opt;

	optind = 1;
	while ((opt = getopt_long(argc, argv, "i:o:f:F:vh", longopts, NULL)) != -1) {
		switch (opt) {
		case 'i':
			a.input = optarg;
			break;
		case 'o':
			a.output = optarg;
			break;
		case 'f':
			a.format = optarg;
			break;
		case OPT_DEBUG_DIR:
			if (a.nr_dirs == MAX_DEBUG_DIRS) {
				ds_err("at most %d --debug-dir", MAX_DEBUG_DIRS);
				return 2;
			}
			a.dirs[a.nr_dirs++] = optarg;
			break;
		case OPT_MAX_DEPTH: {
			char *end;
			unsigned long v = strtoul(optarg, &end, 10);

			if (*end || !*optarg || v < 1 || v > PR_UNWIND_MAX_DEPTH) {
				ds_err("invalid --max-depth '%s': expected 1 to %d", optarg,
				       PR_UNWIND_MAX_DEPTH);
				return 2;
			}
			a.max_depth = (uint32_t)v;
			break;
		}
		case OPT_NO_FP:
			a.no_fp = true;
			break;
		case OPT_NO_RULE_CACHE:
			a.no_rule_cache = true;
			break;
		case 'F': {
			const char *bad;
			size_t len;

			if (ps_parse_fields(optarg, &a.fields, &bad, &len)) {
				ds_err("unknown field '%.*s' in -F: the fields are comm, pid, "
				       "tid, cpu, time, period, event, ip, sym, symoff, dso, "
				       "srcline", (int)len, bad);
				return 2;
			}
			break;
		}
		case OPT_NO_INLINE:
			a.no_inline = true;
			break;
		case OPT_NO_DEMANGLE:
			a.no_demangle = true;
			break;
		case OPT_DEBUGINFOD_TIMEOUT: {
			char *end;
			unsigned long v = strtoul(optarg, &end, 10);

			if (*end || !*optarg || v < 1 || v > 3600) {
				ds_err("invalid --debuginfod-timeout '%s': expected 1 to 3600 "
				       "seconds", optarg);
				return 2;
			}
			timeout = optarg;
			break;
		}
		case OPT_DEBUGINFOD_CACHE:
			cache = optarg;
			break;
		case OPT_NO_DEBUGINFOD:
			no_debuginfod = true;
			break;
		case OPT_KALLSYMS:
			a.kallsyms = optarg;
			break;
		case 'v':
			ds_verbose(++a.verbose);
			break;
		case 'h':
			usage(stdout);
			return 0;
		default:
			fputs("Try 'dwarfsample report --help'.\n", stderr);
			return 2;
		}
	}
	if (!a.input) {
		ds_err("give the file to read: -i FILE");
		return 2;
	}
	if (optind < argc) {
		ds_err("unexpected argument '%s'", argv[optind]);
		return 2;
	}
	if (strcmp(a.format, "perf-script")) {
		ds_err("unknown format '%s': the formats are perf-script", a.format);
		return 2;
	}
	if (!(a.fields & PS_IP)) {
		ds_err("-F must include ip: report prints call stacks");
		return 2;
	}
	ds_debuginfod_env(no_debuginfod, timeout, cache);
	return run(&a);
}
