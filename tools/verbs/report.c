/* SPDX-License-Identifier: Apache-2.0 */
/*
 * `dwarfsample report [-i FILE]`: replay a perf.data file (./perf.data
 * by default, as perf report) through the process model, the unwinder
 * and the symbolizer, and print every sample's stack.
 *
 * --format perf-script (the default) prints what `perf script` prints for
 * the same file, line for line (prscript.h): its default fields,
 * or those -F lists, with the inlined functions unless --no-inline.
 */
#include <errno.h>
#include <linux/perf_event.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"
#include "perfreader.h"
#include "names.h"
#include "output.h"
#include "prsym.h"
#include "prunwind.h"
#include "report.h"

struct report_args {
	const char *input;
	struct ds_output_opts out;
	struct ds_names names;
	const char *kallsyms;
	const char *event;           /* --event */
	int verbose;
	bool quality;                /* --quality: the unwind-quality report */
	/* INPUT.archive.tar.gz, extracted: a debug directory, its kernel
	 * symbols and its index; NULL without one. */
	struct pr_archive *archive;
};

struct report {
	struct pr_file *file;
	struct pr_session *ses;
	struct pr_quality *quality;  /* --quality */
	struct pr_output *out;       /* NULL: --quality alone */
	int switch_event;            /* the off-CPU event's index, or -1 */
	const char *input;
	int only_event;              /* --event: its index */
	const char *names[DS_MAX_EVENTS];  /* the file's events */
	const char **all_names;      /* every event's name, for perf-script */
};

static void summary(const struct report *r, int verbose, bool names)
{
	struct pr_unwind_stats st = { .sz = sizeof(st) };
	struct pr_session_stats ss = { .sz = sizeof(ss) };

	pr_session_unwind_stats(r->ses, &st);
	pr_session_stats(r->ses, &ss);
	fprintf(stderr, "dwarfsample: %" PRIu64 " samples, %.1f user frames on average",
		st.samples, st.samples ? (double)st.frames / (double)st.samples : 0.0);
	if (st.fp_frames)
		fprintf(stderr, " (%" PRIu64 " by frame pointer)", st.fp_frames);
	fputs("; ", stderr);
	if (st.samples)
		ds_stack_ends(&st);
	else
		fputs("no stacks\n", stderr);
	ds_frame_sources(stderr, "dwarfsample: ", &ss, false);
	ds_session_no_memory(&ss);
	if (st.files_missing)
		fprintf(stderr, "dwarfsample: %" PRIu64 " mapped file%s not found "
			"(-v names them)\n", st.files_missing,
			st.files_missing == 1 ? " was" : "s were");
	if (verbose && st.samples)
		fprintf(stderr, "dwarfsample: %.1f%% of samples unwound from compiled "
			"rules, the rest through libunwind; %" PRIu64 " files opened\n",
			100.0 * (double)st.fast_samples / (double)st.samples,
			st.files_opened);
	if (verbose && st.leaf_exits)
		fprintf(stderr, "dwarfsample: %" PRIu64 " sampled frame%s in an epilogue stepped "
			"by %s code: %s CFI has the registers popped below the stack pointer\n",
			st.leaf_exits, st.leaf_exits == 1 ? "" : "s",
			st.leaf_exits == 1 ? "its" : "their", st.leaf_exits == 1 ? "its" : "their");
	if (verbose) {
		struct pr_symbolizer_stats sy = { .sz = sizeof(sy) };

		if (names && !pr_session_symbolizer_stats(r->ses, &sy))
			fprintf(stderr, "dwarfsample: %" PRIu64 " addresses named of %" PRIu64
				" resolved (once each); %" PRIu64 " files read for symbols, %"
				PRIu64 " with debug information\n", sy.named, sy.resolved,
				sy.files, sy.debug_files);
	}
}

/* The sampling frequency of the file's first CPU event, for the
 * profile's CPU time (0 when it sampled by period). */
static uint64_t file_freq(const struct pr_file *f)
{
	for (size_t i = 0; i < pr_file_nr_attrs(f); i++) {
		const struct perf_event_attr *attr = pr_file_attr(f, i);

		if (pr_event_source_of(attr) != PR_SOURCE_CONTEXT_SWITCH)
			return attr->freq ? attr->sample_freq : 0;
	}
	return 0;
}

/* What the file measured: off-CPU time when it has switch-out samples
 * (with CPU samples beside them, wall time), else CPU.  Sets
 * r->switch_event. */
static enum pr_profile_mode file_mode(struct report *r)
{
	bool cpu = false;

	r->switch_event = -1;
	for (size_t i = 0; i < pr_file_nr_attrs(r->file); i++) {
		if (pr_event_source_of(pr_file_attr(r->file, i)) == PR_SOURCE_CONTEXT_SWITCH)
			r->switch_event = (int)i;
		else
			cpu = true;
	}
	if (r->switch_event < 0)
		return PR_PROFILE_CPU;
	return cpu ? PR_PROFILE_WALL : PR_PROFILE_OFF_CPU;
}

/*
 * The file's sampled events, for the outputs: none to name when it has
 * only the CPU event (and perhaps the off-CPU one), else every event by
 * the name the file gives it.  A file whose first event read a group
 * (PERF_SAMPLE_READ) samples that one and counts them all.  -1 after
 * saying why it cannot be reported.
 */
static int file_events(struct report *r, struct pr_output_opts *o)
{
	size_t nr = pr_file_nr_attrs(r->file);
	const struct perf_event_attr *first = nr ? pr_file_attr(r->file, 0) : NULL;

	r->only_event = -1;
	if (r->switch_event >= 0 || nr <= 1) {
		if (nr == 1 && pr_event_source_of(first) == PR_SOURCE_EVENT) {
			r->names[0] = pr_file_event_name(r->file, 0);
			o->events = r->names;
			o->nr_events = 1;
		}
		return 0;
	}
	if (nr > DS_MAX_EVENTS) {
		ds_err("%s has %zu events; report reads up to %d", r->input, nr, DS_MAX_EVENTS);
		return -1;
	}
	for (size_t i = 0; i < nr; i++)
		r->names[i] = pr_file_event_name(r->file, i);
	o->events = r->names;
	o->nr_events = nr;
	if (first->sample_type & PERF_SAMPLE_READ) {
		o->nr_events = 1;
		o->counters = r->names + 1;
		o->nr_counters = nr - 1;
		o->counters_per_cpu = !first->inherit;
	}
	return 0;
}

/* --event NAME: the index of the file's event of that name, or -1 after
 * saying which events there are. */
static int only_event(struct report *r, const char *name)
{
	char list[1024];
	size_t len = 0;

	for (size_t i = 0; i < pr_file_nr_attrs(r->file); i++) {
		const char *n = pr_file_event_name(r->file, i);

		if (n && !strcmp(n, name))
			return (int)i;
		if (n && len < sizeof(list))
			len += (size_t)snprintf(list + len, sizeof(list) - len, "%s%s",
						len ? ", " : "", n);
	}
	ds_err("%s has no event '%s': it has %s", r->input, name, len ? list : "no named events");
	return -1;
}

/* --event NAME with a profile: the one of its events that folded, SVG
 * and speedscope show (the file's r->only_event), into o->show_event;
 * -1 after saying which there are. */
static int show_event(const struct report *r, const char *name, struct pr_output_opts *o)
{
	char list[1024] = "";
	size_t len = 0;

	if (r->only_event >= 0 && (size_t)r->only_event < o->nr_events) {
		o->show_event = (size_t)r->only_event;
		return 0;
	}
	for (size_t i = 0; i < o->nr_events && len < sizeof(list); i++)
		len += (size_t)snprintf(list + len, sizeof(list) - len, "%s%s", i ? ", " : "",
					o->events[i]);
	if (!o->nr_events)
		ds_err("--event %s: the profile has one event only", name);
	else
		ds_err("--event %s: no such event (or several, told apart by :u or :k); "
		       "the events are %s", name, list);
	return -1;
}

/* perf script's text names each sample's event as the file does: 0, or
 * -1 after saying why not. */
static int event_names(struct report *r, struct pr_output_opts *o)
{
	size_t nr = pr_file_nr_attrs(r->file);

	if (!(o->fields & PR_SCRIPT_EVENT) || !nr)
		return 0;
	if (!(r->all_names = calloc(nr, sizeof(*r->all_names)))) {
		ds_err("out of memory");
		return -1;
	}
	for (size_t i = 0; i < nr; i++)
		r->all_names[i] = pr_file_event_name(r->file, i);
	o->event_names = r->all_names;
	o->nr_event_names = nr;
	return 0;
}

/* The head of the quality report: the samples, and how complete. */
static void quality_head(FILE *out, const char *input, const struct pr_unwind_stats *st,
			 const struct pr_symbolizer_stats *ss, const struct pr_session_stats *ses)
{
	double n = st->samples ? (double)st->samples : 1.0;

	fprintf(out, "unwind quality of %s: %" PRIu64 " samples, %.1f%% of stacks complete "
		"(%.1f%% by joining), %.1f user frames on average\n", input, st->samples,
		100.0 * (double)st->ends[PR_END_OUTERMOST] / n, 100.0 * (double)st->joined / n,
		(double)st->frames / n);
	fprintf(out, "stacks ended:");
	for (int e = 0; e < PR_END_MAX; e++)
		if (st->ends[e])
			fprintf(out, " %s %.1f%%", pr_stack_end_name((enum pr_stack_end)e),
				100.0 * (double)st->ends[e] / n);
	if (st->chain_samples)
		fprintf(out, "\n%.1f%% of stacks are the kernel's frame-pointer chains (no stack "
			"copy), %.1f%% stopped at its depth limit", 100.0 * (double)st->chain_samples / n,
			100.0 * (double)st->chain_depth / n);
	fputc('\n', out);
	ds_frame_sources(out, "", ses, true);
	fprintf(out, "addresses named: %" PRIu64 " of %" PRIu64 "\n", ss->named, ss->resolved);
}

/* The quality report: where the stacks ended early and what nothing
 * names, and what to do. */
static int print_quality(const struct report *r, FILE *out)
{
	struct pr_unwind_stats st = { .sz = sizeof(st) };
	struct pr_symbolizer_stats ss = { .sz = sizeof(ss) };
	struct pr_session_stats ses = { .sz = sizeof(ses) };
	int rows;

	pr_session_unwind_stats(r->ses, &st);
	pr_session_symbolizer_stats(r->ses, &ss);
	pr_session_stats(r->ses, &ses);
	quality_head(out, r->input, &st, &ss, &ses);
	rows = ds_quality_report(r->quality, out, "", 0, 1);
	if (rows < 0)
		ds_err("cannot write the quality report: %s", strerror(-rows));
	else if (!rows)
		fprintf(out, "every stack reached its outermost frame, and every frame "
			"was named\n");
	return rows < 0 || fflush(out) || ferror(out) ? -1 : 0;
}

/* Whether every event of the file lays its samples out as the first
 * does: one parse serves the pipeline's copies. */
static bool one_layout(const struct pr_file *f)
{
	const struct perf_event_attr *a = pr_file_attr(f, 0), *b;

	for (size_t i = 1; a && i < pr_file_nr_attrs(f); i++) {
		b = pr_file_attr(f, i);
		if (b->sample_type != a->sample_type || b->read_format != a->read_format ||
		    b->sample_regs_user != a->sample_regs_user ||
		    b->sample_id_all != a->sample_id_all)
			return false;
	}
	return a != NULL;
}

/* How many workers: --jobs; 0 for the replay without the pipeline, as
 * without --jobs, for perf script's text (written in time order) and for
 * a file whose events differ in layout (the pipeline's copies are parsed
 * again as the first event's: perf's dummy tracking event, added when it
 * starts disabled, has a trailer of its own). */
static size_t nr_jobs(const struct report_args *a, const struct report *r, int fmt)
{
	/* The quality report counts each address named once. */
	if (!a->names.jobs || a->quality)
		return 0;
	if (fmt == PR_OUTPUT_PERF_SCRIPT && r->out) {
		ds_logf(PR_LOG_INFO, "perf script's text is written in time order: one worker");
		return 0;
	}
	if (!one_layout(r->file)) {
		ds_logf(PR_LOG_INFO, "%s's events lay their samples out differently: one "
			"worker", r->input);
		return 0;
	}
	return a->names.jobs;
}

/* The archive's index, in every worker's model. */
static int index_archive(struct pr_model *m, void *archive)
{
	return pr_archive_index(archive, m) ? -EINVAL : 0;
}

/* The archive record --archive wrote beside `input`, extracted once into
 * our cache; NULL without one, after saying why when there is one that
 * cannot be used. */
static struct pr_archive *open_archive(const char *input)
{
	PR_OPTS(pr_archive_opts, ao, .log = ds_log_own);
	const char *cache = ds_cache_dir();
	struct pr_archive *ar;
	char path[4096];

	if (pr_archive_name(input, path, sizeof(path)))
		return NULL;
	ar = pr_archive_open(path, cache, &ao);
	if (!ar && errno == EINVAL && !cache)
		ds_err("%s: no cache directory to extract it into ($XDG_CACHE_HOME or $HOME)",
		       path);
	else if (!ar && errno != ENOENT)
		ds_err("%s cannot be used: %s; report goes on without it", path,
		       errno == EBADMSG ? "it is damaged, or not dwarfsample's" : strerror(errno));
	return ar;
}

/* The file through the session: its sinks attached, every record read,
 * the waits still open ended where the recording did.  0 or 1. */
static int replay(struct report_args *a, struct report *r, size_t jobs, bool names,
		  const struct pr_symbolizer_opts *sym)
{
	PR_OPTS(pr_session_opts, so, .log = ds_log, .workers = jobs);
	struct pr_sink sink, quality;
	struct pr_session_stats ss = { .sz = sizeof(ss) };
	uint64_t end;
	int n, ret, err;

	if (a->archive) {
		so.model_setup = index_archive;
		so.model_setup_ctx = a->archive;
	}
	/* Frames are unwound, not named, for perf script's addresses. */
	r->ses = ds_names_session(&a->names, NULL, r->file, &so, names, sym);
	if (!r->ses) {
		ds_err("cannot read %s: %s", r->input, strerror(errno));
		return 1;
	}
	if (r->out)
		pr_output_sink(r->out, &sink);
	if (r->quality)
		pr_quality_sink(r->quality, &quality);
	if ((r->out && pr_session_add_sink(r->ses, &sink)) ||
	    (r->quality && pr_session_add_sink(r->ses, &quality))) {
		ds_err("out of memory");
		return 1;
	}
	n = pr_session_consume_file(r->ses);
	/* Corrupt records were reported and skipped. */
	ret = n < 0 && n != -EBADMSG;
	/* Threads still off the CPU when the recording stopped wait until
	 * then (the file says when, else its last record). */
	pr_session_stats(r->ses, &ss);
	if (pr_file_end_time(r->file, &end) || end < ss.end_time)
		end = ss.end_time;
	err = pr_session_finish(r->ses, end);
	if (err && !ret && !pr_output_failed(r->out))
		ds_err("processing samples failed: %s", strerror(-err));
	return ret || err ? 1 : 0;
}

/*
 * A profile's title: the program the file profiled -- the command after
 * "--" in the command line that recorded it (dwarfsample record's, or
 * perf record's when it has one), else the name of the process with the
 * most samples -- and that process's pid: "./app -n 3 (pid 1234)".
 */
static void report_title(const struct report *r, char *buf, size_t size)
{
	const char *const *argv;
	size_t argc = pr_file_cmdline(r->file, &argv), i = 0, len = 0;
	uint32_t pid = 0;
	const char *comm;

	while (i < argc && strcmp(argv[i], "--"))
		i++;
	for (i++; i < argc && len < size; i++)
		len += (size_t)snprintf(buf + len, size - len, "%s%s", len ? " " : "", argv[i]);
	if (pr_output_pids(r->out, &pid, 1) && !len && (comm = pr_output_process(r->out, pid)))
		len = (size_t)snprintf(buf, size, "%s", comm);
	if (!len)
		len = (size_t)snprintf(buf, size, "%s", r->input);
	len = ds_cut_title(buf);
	if (pid && len < size)
		snprintf(buf + len, size - len, " (pid %" PRIu32 ")", pid);
}

static int run(struct report_args *a, int fmt)
{
	PR_OPTS(pr_file_opts, fo, .log = ds_log);
	/* --quality alone (no -f): its report is the output. */
	bool quality_only = a->quality && !a->out.format;
	bool names = a->quality || fmt != PR_OUTPUT_PERF_SCRIPT ||
		     (a->out.po.fields & (PR_SCRIPT_SRCLINE | PR_SCRIPT_SYM));
	PR_OPTS(pr_symbolizer_opts, sym, .cache_dir = ds_cache_dir(), .kallsyms = a->kallsyms,
		.log = ds_log);
	struct pr_output_opts *o = &a->out.po;
	struct report r = { 0 };
	struct pr_session_stats ss = { .sz = sizeof(ss) };
	FILE *qout = stderr;
	size_t jobs;
	int ret = 1;
	/* Named once the samples say which process was profiled. */
	char title[256] = "dwarfsample";

	/* The archive record --archive wrote beside the file: searched
	 * first, by build-id, and its kernel symbols unless --kallsyms. */
	if ((a->archive = open_archive(a->input))) {
		if (a->names.nr_dirs < DS_MAX_DEBUG_DIRS)
			a->names.dirs[a->names.nr_dirs++] = pr_archive_dir(a->archive);
		if (!a->kallsyms && pr_archive_kallsyms(a->archive))
			sym.kallsyms = pr_archive_kallsyms(a->archive);
	}
	a->names.no_lines = !pr_output_shows_lines(fmt, o->fields);
	r.file = pr_file_open(a->input, &fo);
	if (!r.file)
		return 1;
	/* Event names are right-aligned to the longest. */
	for (size_t i = 0; i < pr_file_nr_attrs(r.file); i++) {
		const char *name = pr_file_event_name(r.file, i);
		int len = name ? (int)strlen(name) : 0;

		if (len > o->event_width)
			o->event_width = len;
	}
	o->event_name = pr_file_nr_attrs(r.file) ? pr_file_event_name(r.file, 0) : NULL;
	o->freq = file_freq(r.file);
	o->tp_formats = pr_file_tp_formats(r.file);
	r.input = a->input;
	o->mode = file_mode(&r);
	if (file_events(&r, o) || (a->event && (r.only_event = only_event(&r, a->event)) < 0)) {
		pr_file_close(r.file);
		return 2;
	}
	/* perf script's text shows that event alone; a profile holds every
	 * event and shows the one chosen (show_event()). */
	o->filter_event = fmt == PR_OUTPUT_PERF_SCRIPT && r.only_event >= 0;
	o->only_event = o->filter_event ? (size_t)r.only_event : 0;
	/* Wall time needs each CPU sample's own period (cpu-clock's is ns). */
	o->period_is_ns = o->mode == PR_PROFILE_WALL;
	if (o->off_cpu_min_ns && o->mode == PR_PROFILE_CPU) {
		ds_err("%s has no off-CPU samples: --off-cpu-min applies to captures "
		       "made with --off-cpu or --wall", a->input);
		pr_file_close(r.file);
		return 2;
	}
	/* The quality counts cost a twentieth of a replay: only for the
	 * report that shows them. */
	if (a->quality) {
		PR_OPTS(pr_quality_opts, qo, .max_depth = a->names.max_depth);

		for (size_t i = 0; i < pr_file_nr_attrs(r.file); i++)
			ds_quality_copy(&qo, pr_file_attr(r.file, i));
		if (!(r.quality = pr_quality_new(&qo))) {
			ds_err("out of memory");
			pr_file_close(r.file);
			return 1;
		}
	}
	if (!o->title)
		o->title = title;
	if (quality_only) {
		qout = stdout;
		if (a->out.path && strcmp(a->out.path, "-") && !(qout = fopen(a->out.path, "we"))) {
			ds_err("cannot write %s: %s; choose another output path (-o)", a->out.path,
			       strerror(errno));
			goto out;
		}
	} else if ((a->event && fmt != PR_OUTPUT_PERF_SCRIPT && show_event(&r, a->event, o)) ||
		   event_names(&r, o) || !(r.out = ds_output_open(&a->out, fmt))) {
		goto out;
	}
	jobs = nr_jobs(a, &r, fmt);
	ret = replay(a, &r, jobs, names, &sym);
	if (r.out && o->title == title)
		report_title(&r, title, sizeof(title));
	/* The quality report alone says how the stacks ended; beside the
	 * stacks, the summary does. */
	if (r.ses && !quality_only) {
		summary(&r, a->verbose, names);
		if (a->verbose && jobs)
			ds_session_print_cpu(r.ses, "reading", false);
		if (r.switch_event >= 0)
			ds_output_print_times(r.out);
	}
	if (r.ses && a->quality && print_quality(&r, qout))
		ret = 1;
	if (r.ses)
		pr_session_stats(r.ses, &ss);
	/* The file has no wall-clock time (perf writes one only with
	 * --clockid), but the samples say how long the recording ran, as
	 * the live command's profile does. */
	if (r.out && pr_output_close(r.out, 0, ss.last_time - ss.first_time))
		ret = 1;
	else if (r.out && a->out.path && strcmp(a->out.path, "-") &&
		 fmt != PR_OUTPUT_PERF_SCRIPT)
		ds_output_wrote(fmt, a->out.path);
	if (r.ses)
		ret = ds_file_verdict(r.file, a->input, ret);
out:
	if (qout && qout != stdout && qout != stderr)
		fclose(qout);
	/* The quality counts name the session's files: freed first. */
	pr_quality_free(r.quality);
	pr_session_free(r.ses);
	pr_file_close(r.file);
	free(r.all_names);
	return ret;
}

static void usage(FILE *out)
{
	fprintf(out, "usage: dwarfsample report [-i FILE] [options]\n"
	      "\n"
	      "Unwind every sample of a perf.data file (dwarfsample record's or\n"
	      "perf record --call-graph dwarf's), name its frames and print the\n"
	      "stacks.\n"
	      "\n"
	      "  -i, --input FILE         the perf.data file to read (default\n"
	      "                           ./perf.data, as record writes it)\n"
	      "  -o, --output FILE        write there instead of standard output\n"
	      "  -f, --format FORMAT      perf-script: perf script's layout (default);\n"
	      "                           svg, pprof, folded, speedscope: a profile, as\n"
	      "                           'dwarfsample --help' describes them\n"
	      "      --thread-roots, --annotate, --tag KEY=VALUE\n"
	      "                           as for profiles ('dwarfsample --help')\n"
	      "  -F, --fields LIST        perf-script: which of perf script's fields, as its -F:\n"
	      "                           comm,pid,tid,cpu,time,period,event,ip,sym,\n"
	      "                           symoff,dso,srcline (default: perf's,\n"
	      "                           comm,tid,cpu,time,period,event,ip,sym,\n"
	      "                           symoff,dso)\n"
	      "      --kallsyms FILE      name kernel frames from FILE, a copy of the\n"
	      "                           recording machine's /proc/kallsyms\n"
	      "      --event NAME         a capture of several events (-e): the one\n"
	      "                           the flame graph, folded and speedscope show\n"
	      "                           (default the first; pprof has them all), or\n"
	      "                           perf-script prints\n"
	      "      --quality            instead of the stacks, where they ended early\n"
	      "                           and why, and what nothing names, by binary,\n"
	      "                           with what would fix each (a larger copy, the\n"
	      "                           debug package, a perf map, a rebuild)\n"
	      "      --off-cpu-min DURATION\n"
	      "                           a file recorded with --off-cpu or --wall:\n"
	      "                           leave out waits shorter than DURATION\n"
	      "                           (50us, 2ms, 0.5s; bare numbers are seconds)\n"
	      "%s"
	      "  -v, --verbose            more diagnostics\n"
	      "  -h, --help               this help\n", ds_names_help);
}

enum { OPT_KALLSYMS = 2100, OPT_OFF_CPU_MIN, OPT_EVENT, OPT_QUALITY, OPT_TID };

int ds_cmd_report(int argc, char **argv)
{
	static const struct option own[] = {
		{ "input", required_argument, NULL, 'i' },
		{ "fields", required_argument, NULL, 'F' },
		{ "kallsyms", required_argument, NULL, OPT_KALLSYMS },
		{ "off-cpu-min", required_argument, NULL, OPT_OFF_CPU_MIN },
		{ "event", required_argument, NULL, OPT_EVENT },
		{ "quality", no_argument, NULL, OPT_QUALITY },
		{ "tid", optional_argument, NULL, OPT_TID },
		{ "verbose", no_argument, NULL, 'v' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	const struct option *lists[] = { own, ds_names_longopts, ds_output_longopts };
	struct option longopts[64];
	size_t nr = 0;
	struct report_args a = { .out.po.fields = PR_SCRIPT_DEFAULT };
	int opt, fmt, ret;

	for (size_t l = 0; l < sizeof(lists) / sizeof(lists[0]); l++)
		for (const struct option *o = lists[l]; o->name && nr < 63; o++)
			longopts[nr++] = *o;
	longopts[nr] = (struct option){ NULL, 0, NULL, 0 };
	optind = 1;
	while ((opt = getopt_long(argc, argv, "i:o:f:F:vh", longopts, NULL)) != -1) {
		switch (opt) {
		case 'i':
			a.input = optarg;
			break;
		case 'F': {
			const char *bad;
			size_t len;

			if (pr_script_fields_parse(optarg, &a.out.po.fields, &bad, &len)) {
				ds_err("unknown field '%.*s' in -F: the fields are comm, pid, "
				       "tid, cpu, time, period, event, ip, sym, symoff, dso, "
				       "srcline", (int)len, bad);
				return 2;
			}
			break;
		}
		case OPT_KALLSYMS:
			a.kallsyms = optarg;
			break;
		case OPT_OFF_CPU_MIN:
			if (ds_parse_duration(optarg, "--off-cpu-min", &a.out.po.off_cpu_min_ns))
				return 2;
			break;
		case OPT_EVENT:
			a.event = optarg;
			break;
		case OPT_QUALITY:
			a.quality = true;
			break;
		case OPT_TID:
			/* It was the flag for a root per thread. */
			ds_err("a root per thread is --thread-roots; --tid is perf's, which "
			       "picks the threads to sample: give it (-t) when recording");
			return 2;
		case 'v':
			ds_verbose(++a.verbose);
			break;
		case 'h':
			usage(stdout);
			return 0;
		default: {
			int n = opt == '?' ? 0 : ds_output_option(&a.out, opt, optarg);

			if (!n)
				n = ds_names_option(&a.names, opt, optarg);
			if (n > 0)
				break;
			if (!n)
				fputs("Try 'dwarfsample report --help'.\n", stderr);
			return 2;
		}
		}
	}
	/* As perf report: what record writes by default. */
	if (!a.input && access("perf.data", F_OK)) {
		ds_err("no ./perf.data here: record one with `dwarfsample record -- CMD`, "
		       "or give -i FILE");
		return 2;
	}
	if (!a.input)
		a.input = "perf.data";
	if (optind < argc) {
		ds_err("unexpected argument '%s'", argv[optind]);
		return 2;
	}
	fmt = ds_output_format(&a.out, PR_OUTPUT_PERF_SCRIPT, false);
	if (fmt < 0)
		return 2;
	if (!(a.out.po.fields & PR_SCRIPT_IP)) {
		ds_err("-F must include ip: report prints call stacks");
		return 2;
	}
	a.out.po.no_inline = a.names.no_inline;
	ret = run(&a, fmt);
	pr_archive_close(a.archive);
	return ret;
}
