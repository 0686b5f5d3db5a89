/* SPDX-License-Identifier: Apache-2.0 */
/*
 * `dwarfsample report -i FILE`: replay a perf.data file through the
 * process model and the unwinder, and print every sample's stack.
 *
 * --format perf-script prints what `perf script -F comm,tid,time,ip,dso
 * --no-inline` prints for the same file, line for line, so the two can be
 * compared frame by frame.
 */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "perfreader.h"
#include "prunwind.h"
#include "report.h"

#define MAX_DEBUG_DIRS 32

struct report_args {
	const char *input;
	const char *output;
	const char *format;
	const char *dirs[MAX_DEBUG_DIRS];
	size_t nr_dirs;
	uint32_t max_depth;
	int verbose;
	bool no_fp, no_rule_cache;
};

struct report {
	FILE *out;
	struct pr_model *model;
	struct pr_unwinder *u;
	/* The name of the last frame's mapping, as printed. */
	const struct pr_dso *last_dso;
	uint32_t last_kernel;
	char name[4096], anon[64];
	size_t name_len;
};

/* `v` in decimal, right-aligned in `width` columns (at least), ending at
 * `end`; returns where it starts. */
static char *decimal(char *end, uint64_t v, int width)
{
	char *p = end;

	do {
		*--p = (char)('0' + v % 10);
		v /= 10;
		width--;
	} while (v);
	while (width-- > 0)
		*--p = ' ';
	return p;
}

/* perf script's header for -F comm,tid,time with a call chain:
 * "comm tid secs.usecs: " (its timestamp__scnprintf_usec truncates),
 * as printf("%s %5d %12s: \n") would lay it out. */
static void print_header(FILE *out, const struct pr_record *rec, const char *comm)
{
	uint64_t usecs = rec->time / 1000;
	char buf[64], *end = buf + sizeof(buf), *p;

	if (comm)
		fputs(comm, out);
	else if (rec->tid == 0)
		fputs("swapper", out);   /* perf's name for the idle task */
	else
		fprintf(out, ":%u", rec->tid);
	/* Built backwards: ": \n", the time, a space, the tid, a space. */
	p = end - 3;
	memcpy(p, ": \n", 3);
	p = decimal(p, usecs % 1000000, 6);
	for (char *z = p; *z == ' '; z++)
		*z = '0';
	*--p = '.';
	{
		char *secs = decimal(p, usecs / 1000000, 0);
		int len = (int)(end - 3 - secs);

		/* The time right-aligned in 12 columns. */
		p = secs;
		while (len++ < 12)
			*--p = ' ';
	}
	*--p = ' ';
	p = decimal(p, rec->tid, 5);
	*--p = ' ';
	fwrite_unlocked(p, 1, (size_t)(end - p), out);
}

/* The name perf gives a frame's mapping. */
static const char *frame_dso(const struct pr_frame *f, uint32_t pid, char *buf,
			     size_t len)
{
	const char *path;

	if (f->flags & PR_FRAME_KERNEL)
		return "[kernel.kallsyms]";
	if (!f->dso)
		return "[unknown]";
	path = pr_dso_path(f->dso);
	/* perf names anonymous executable memory after the JIT map file
	 * that would describe it. */
	if (!strncmp(path, "//anon", 6)) {
		snprintf(buf, len, "/tmp/perf-%u.map", pid);
		return buf;
	}
	return path;
}

/* Up to "\t%16" PRIx64 " (" in `buf`, right-aligned as printf would:
 * a report prints one such line per frame, so not with printf. */
static size_t format_address(char *buf, uint64_t v)
{
	char digits[16];
	size_t n = 0, i = 0;

	do {
		digits[n++] = "0123456789abcdef"[v & 15];
		v >>= 4;
	} while (v);
	buf[i++] = '\t';
	for (size_t pad = n; pad < 16; pad++)
		buf[i++] = ' ';
	while (n)
		buf[i++] = digits[--n];
	buf[i++] = ' ';
	buf[i++] = '(';
	return i;
}

static void print_perf_script(struct report *r, const struct pr_record *rec,
			      const struct pr_stack *st, const char *comm)
{
	/* A frame's line: the address, the mapping's name (a path, at
	 * most PATH_MAX), ")\n". */
	char line[24 + 4096 + 2];

	print_header(r->out, rec, comm);
	for (size_t i = 0; i < st->nr; i++) {
		const struct pr_frame *f = &st->frames[i];
		size_t n = format_address(line, f->dso_ip);

		/* Consecutive frames are mostly in the same file. */
		if (f->dso != r->last_dso || (f->flags & PR_FRAME_KERNEL) != r->last_kernel ||
		    !f->dso) {
			const char *name = frame_dso(f, rec->pid, r->anon, sizeof(r->anon));

			r->last_dso = f->dso;
			r->last_kernel = f->flags & PR_FRAME_KERNEL;
			r->name_len = strlen(name);
			if (r->name_len > sizeof(r->name))
				r->name_len = sizeof(r->name);
			memcpy(r->name, name, r->name_len);
			/* An anonymous mapping's name depends on the pid. */
			if (name == r->anon)
				r->last_dso = NULL;
		}
		memcpy(line + n, r->name, r->name_len);
		n += r->name_len;
		line[n++] = ')';
		line[n++] = '\n';
		fwrite_unlocked(line, 1, n, r->out);
	}
	putc_unlocked('\n', r->out);
}

static int on_record(const struct pr_record *rec, void *arg)
{
	struct report *r = arg;
	struct pr_stack st;

	if (rec->type != PR_RECORD_SAMPLE)
		return pr_model_apply(r->model, rec);
	if (pr_unwinder_unwind(r->u, rec, &st))
		return 0;
	print_perf_script(r, rec, &st, pr_model_comm(r->model, rec->tid));
	return 0;
}

static void summary(const struct pr_unwinder *u, int verbose)
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
}

static int run(const struct report_args *a)
{
	PR_OPTS(pr_file_opts, fo, .log = ds_log);
	PR_OPTS(pr_unwinder_opts, uo, .max_depth = a->max_depth,
		.debug_dirs = a->dirs, .nr_debug_dirs = a->nr_dirs,
		.no_frame_pointers = a->no_fp, .no_rule_cache = a->no_rule_cache,
		.log = ds_log);
	struct report r = { .out = stdout };
	struct pr_file *f = pr_file_open(a->input, &fo);
	int n, ret = 1;

	if (!f)
		return 1;
	if (a->output && !(r.out = fopen(a->output, "we"))) {
		ds_err("cannot write %s: %s; choose another output path (-o)",
		       a->output, strerror(errno));
		pr_file_close(f);
		return 1;
	}
	setvbuf(r.out, NULL, _IOFBF, 1 << 20);
	r.model = pr_model_new();
	if (r.model && !pr_model_use_file(r.model, f))
		r.u = pr_unwinder_new(r.model, &uo);
	if (!r.u) {
		ds_err("out of memory");
	} else {
		n = pr_file_consume(f, on_record, &r);
		/* Corrupt records were reported and skipped. */
		ret = n < 0 && n != -EBADMSG;
		summary(r.u, a->verbose);
	}
	if (fflush(r.out) || (r.out != stdout && fclose(r.out))) {
		ds_err("writing %s failed: %s", a->output ? a->output : "the output",
		       strerror(errno));
		ret = 1;
	}
	pr_unwinder_free(r.u);
	pr_model_free(r.model);
	pr_file_close(f);
	return ret;
}

static void usage(FILE *out)
{
	fputs("usage: dwarfsample report -i FILE [options]\n"
	      "\n"
	      "Unwind every sample of a perf.data file (dwarfsample record's or\n"
	      "perf record --call-graph dwarf's) and print the stacks.\n"
	      "\n"
	      "  -i, --input FILE         the perf.data file to read\n"
	      "  -o, --output FILE        write there instead of standard output\n"
	      "  -f, --format FORMAT      perf-script: the layout of perf script -F\n"
	      "                           comm,tid,time,ip,dso --no-inline (default)\n"
	      "      --debug-dir DIR      find mapped files by build-id in DIR too\n"
	      "                           (DIR/.build-id/xx/rest or DIR/xx/rest);\n"
	      "                           repeatable\n"
	      "      --max-depth N        user frames at most (default 127, up to 1024)\n"
	      "      --no-frame-pointers  stop where unwind information ends instead\n"
	      "                           of following frame pointers\n"
	      "      --no-rule-cache      step every frame through libunwind (slower;\n"
	      "                           the result is the same)\n"
	      "  -v, --verbose            more diagnostics\n"
	      "  -h, --help               this help\n", out);
}

enum { OPT_DEBUG_DIR = 2000, OPT_MAX_DEPTH, OPT_NO_FP, OPT_NO_RULE_CACHE };

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
		{ "verbose", no_argument, NULL, 'v' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	struct report_args a = { .format = "perf-script" };
	int opt;

	optind = 1;
	while ((opt = getopt_long(argc, argv, "i:o:f:vh", longopts, NULL)) != -1) {
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
	return run(&a);
}
