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
#include <linux/perf_event.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "archive.h"
#include "perfreader.h"
#include "names.h"
#include "output.h"
#include "perfscript.h"
#include "pipeline.h"
#include "prsym.h"
#include "prunwind.h"
#include "quality.h"
#include "report.h"

struct report_args {
	const char *input;
	struct ds_output_opts out;
	struct ds_names names;
	const char *kallsyms;
	int verbose;
	bool quality;                /* --quality: the unwind-quality report */
	/* INPUT.archive.tar.gz, extracted: a debug directory, its kernel
	 * symbols; "" without one. */
	char archive[4096], archive_kallsyms[4096];
};

struct report {
	struct pr_file *file;
	struct pr_model *model;
	struct pr_unwinder *u;
	struct pr_symbolizer *sym;   /* when the output names frames */
	struct ds_quality *quality;  /* --quality, instead of the sink */
	struct ds_sink *sink;
	bool event_names;            /* perf script's text, with its event field */
	uint64_t first_time, last_time;  /* of the samples, perf clock */
	uint64_t end_time;           /* of any record */
	int switch_event;            /* the off-CPU event's index, or -1 */
	const char *input;
	int only_event;              /* perf-script with --event: its index */
	const char *names[DS_MAX_EVENTS];  /* the file's events */
};

/* The index of the sample's event in the file (0 when it has one). */
static size_t sample_event(struct report *r, const struct pr_record *rec)
{
	int idx = pr_file_nr_attrs(r->file) > 1 ? pr_file_event_of(r->file, rec) : 0;

	return idx < 0 ? 0 : (size_t)idx;
}

/* A record, in time order; `own`: this worker's to count, not only to
 * keep its model up to date (pipeline.h). */
static int handle(struct report *r, const struct pr_record *rec, bool own)
{
	struct pr_stack st;
	size_t event;
	int err;

	/* Samples too: one in the image exec loaded retires the old one. */
	err = pr_model_apply(r->model, rec);
	if (err || !own)
		return err;
	if ((rec->fields & PR_ID_TIME) && rec->time > r->end_time)
		r->end_time = rec->time;
	if (rec->type != PR_RECORD_SAMPLE)
		return r->switch_event >= 0 ? ds_sink_record(r->sink, rec) : 0;
	if (pr_unwinder_unwind(r->u, rec, &st))
		return 0;
	if (r->quality)
		return ds_quality_add(r->quality, &st, r->sym, rec->pid,
				      pr_model_comm(r->model, rec->pid), false);
	if (rec->fields & PR_ID_TIME) {
		if (!r->first_time || rec->time < r->first_time)
			r->first_time = rec->time;
		if (rec->time > r->last_time)
			r->last_time = rec->time;
	}
	if (r->switch_event >= 0 && pr_file_event_of(r->file, rec) == r->switch_event)
		return ds_sink_switch(r->sink, rec, &st, r->sym,
				      pr_model_comm(r->model, rec->tid),
				      pr_model_comm(r->model, rec->pid));
	event = sample_event(r, rec);
	/* perf script's text has no one event to show: --event filters. */
	if (r->only_event >= 0 && event != (size_t)r->only_event)
		return 0;
	return ds_sink_sample_event(r->sink, event, rec, &st, r->sym,
				    pr_model_comm(r->model, rec->tid),
				    pr_model_comm(r->model, rec->pid),
				    r->event_names ? pr_file_event_name(r->file, event) : NULL);
}

static int on_record(const struct pr_record *rec, void *arg)
{
	return handle(arg, rec, true);
}

static int process(const struct pr_record *rec, bool own, void *arg)
{
	return handle(arg, rec, own);
}

static void summary(const struct report *w, size_t nr, int verbose)
{
	struct pr_unwind_stats st = { .sz = sizeof(st) };
	const struct pr_symbolizer *sym = w[0].sym;

	for (size_t i = 0; i < nr; i++)
		ds_unwind_stats_add(&st, w[i].u);
	fprintf(stderr, "dwarfsample: %" PRIu64 " samples, %.1f user frames on average",
		st.samples, st.samples ? (double)st.frames / (double)st.samples : 0.0);
	if (st.fp_frames)
		fprintf(stderr, " (%" PRIu64 " by frame pointer)", st.fp_frames);
	fputs("; ", stderr);
	if (st.samples)
		ds_stack_ends(&st);
	else
		fputs("no stacks\n", stderr);
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

		for (size_t i = 0; i < nr; i++) {
			struct pr_symbolizer_stats one = { .sz = sizeof(one) };

			pr_symbolizer_stats(w[i].sym, &one);
			ss.named += one.named;
			ss.resolved += one.resolved;
			ss.files += one.files;
			ss.debug_files += one.debug_files;
		}
		fprintf(stderr, "dwarfsample: %" PRIu64 " addresses named of %" PRIu64
			" resolved (once each); %" PRIu64 " files read for symbols, %" PRIu64
			" with debug information\n", ss.named, ss.resolved, ss.files,
			ss.debug_files);
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
static int file_events(struct report *r, struct ds_output_opts *o)
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

/* The head of the quality report: the samples, and how complete. */
static void quality_head(FILE *out, const char *input, const struct pr_unwind_stats *st,
			 const struct pr_symbolizer_stats *ss)
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
	fprintf(out, "\naddresses named: %" PRIu64 " of %" PRIu64 "\n", ss->named, ss->resolved);
}

/* report --quality: unwind and name every sample, then say where the
 * stacks ended early and what nothing names, and what to do. */
static int run_quality(struct report_args *a, struct report *r,
		       const struct pr_unwinder_opts *uo, const struct pr_symbolizer_opts *so)
{
	const struct perf_event_attr *attr = pr_file_attr(r->file, 0);
	struct pr_unwind_stats st = { .sz = sizeof(st) };
	struct pr_symbolizer_stats ss = { .sz = sizeof(ss) };
	FILE *out = stdout;
	int n, ret = 1;

	r->model = pr_model_new(NULL);
	if (r->model && !pr_model_use_file(r->model, r->file) &&
	    (!a->archive[0] || !ds_archive_index(a->archive, r->model)))
		r->u = pr_unwinder_new(r->model, uo);
	if (r->u)
		r->sym = pr_symbolizer_new(r->model, so);
	if (r->sym)
		r->quality = ds_quality_new(attr ? attr->sample_stack_user : 0, uo->max_depth);
	if (a->out.path && strcmp(a->out.path, "-") && !(out = fopen(a->out.path, "we"))) {
		ds_err("cannot write %s: %s; choose another output path (-o)", a->out.path,
		       strerror(errno));
		out = NULL;
	}
	if (!r->quality || !out) {
		if (out)
			ds_err("out of memory");
	} else {
		n = pr_file_consume(r->file, on_record, r);
		ret = n < 0 && n != -EBADMSG;
		pr_unwinder_stats(r->u, &st);
		pr_symbolizer_stats(r->sym, &ss);
		quality_head(out, a->input, &st, &ss);
		if (!ds_quality_print(r->quality, out, "", 0, 1))
			fprintf(out, "every stack reached its outermost frame, and every frame "
				"was named\n");
		if (fflush(out) || ferror(out))
			ret = 1;
		ret = ds_file_verdict(r->file, a->input, ret);
	}
	if (out && out != stdout)
		fclose(out);
	ds_quality_free(r->quality);
	pr_symbolizer_free(r->sym);
	pr_unwinder_free(r->u);
	pr_model_free(r->model);
	pr_file_close(r->file);
	return ret;
}

/* A worker's model, unwinder and symbolizer, for r->file. */
static int open_worker(const struct report_args *a, struct report *r,
		       const struct pr_unwinder_opts *uo, const struct pr_symbolizer_opts *so,
		       bool names)
{
	r->model = pr_model_new(NULL);
	if (r->model && !pr_model_use_file(r->model, r->file) &&
	    (!a->archive[0] || !ds_archive_index(a->archive, r->model)))
		r->u = pr_unwinder_new(r->model, uo);
	if (r->u && names)
		r->sym = pr_symbolizer_new(r->model, so);
	return r->u && (!names || r->sym) ? 0 : -1;
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
	if (!a->names.jobs)
		return 0;
	if (fmt == DS_FORMAT_PERF_SCRIPT) {
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

/* Records between the rounds of a replay, and what may wait for the
 * workers before the file waits: a few rounds, which the orders keep
 * and reuse (bigger ones are freed and page-faulted in anew, which cost
 * the replay half again as much CPU as the unwinding). */
#define REPLAY_ROUND 64
#define REPLAY_HELD ((size_t)2 << 20)

struct feeder {
	struct ds_pipeline *pl;
	size_t n;
};

static int feed(const struct pr_record *rec, void *arg)
{
	struct feeder *f = arg;
	int err = ds_pipeline_copy(rec, f->pl);

	if (err || ++f->n % REPLAY_ROUND)
		return err;
	err = ds_pipeline_flush(f->pl);
	ds_pipeline_throttle(f->pl, REPLAY_HELD);
	return err;
}

/* --jobs: the file through the live command's pipeline (pipeline.h),
 * records in the file's time order, as fast as the workers take them.
 * Every stack is copied whole: live, the capture thread copies a
 * thread's stacks only up to where they ended before
 * (ds_pipeline_stack_used()), which can cut one short, and a replay
 * must give one worker's profile exactly. */
static int replay(struct report *w, size_t nr, struct ds_pipeline_cpu *cpu)
{
	void *ctxs[DS_MAX_JOBS];
	struct feeder f = { 0 };
	int n, err;

	for (size_t i = 0; i < nr; i++)
		ctxs[i] = &w[i];
	f.pl = ds_pipeline_new(pr_file_attr(w[0].file, 0), nr, process, NULL, ctxs, SIZE_MAX,
			       NULL);
	if (!f.pl)
		return -errno;
	n = pr_file_consume(w[0].file, feed, &f);
	err = ds_pipeline_finish(f.pl);
	ds_pipeline_cpu(f.pl, cpu);
	ds_pipeline_free(f.pl);
	return n < 0 ? n : err;
}

static int run(struct report_args *a, int fmt)
{
	PR_OPTS(pr_file_opts, fo, .log = ds_log);
	PR_OPTS(pr_unwinder_opts, uo, .log = ds_log);
	bool names = a->quality || fmt != DS_FORMAT_PERF_SCRIPT ||
		     (a->out.fields & (PS_SRCLINE | PS_SYM));
	PR_OPTS(pr_symbolizer_opts, so, .cache_dir = ds_cache_dir(), .kallsyms = a->kallsyms,
		.log = ds_log);
	struct report r = { .event_names = fmt == DS_FORMAT_PERF_SCRIPT &&
					   (a->out.fields & PS_EVENT) };
	struct report *w = NULL;
	size_t jobs, nr, opened = 0;
	int n, ret = 1, width = 0;
	const char *first_event;

	/* The archive record --archive wrote beside the file: searched
	 * first, by build-id, and its kernel symbols unless --kallsyms. */
	if (ds_archive_use(a->input, a->archive, sizeof(a->archive), a->archive_kallsyms,
			   sizeof(a->archive_kallsyms))) {
		if (a->names.nr_dirs < DS_MAX_DEBUG_DIRS)
			a->names.dirs[a->names.nr_dirs++] = a->archive;
		if (!a->kallsyms && a->archive_kallsyms[0])
			so.kallsyms = a->archive_kallsyms;
	}
	ds_names_apply(&a->names, &uo, &so);
	so.no_inline |= !names;
	so.no_lines = !ds_output_shows_lines(&a->out, fmt);
	r.file = pr_file_open(a->input, &fo);
	if (!r.file)
		return 1;
	/* Event names are right-aligned to the longest. */
	for (size_t i = 0; i < pr_file_nr_attrs(r.file); i++) {
		const char *name = pr_file_event_name(r.file, i);
		int len = name ? (int)strlen(name) : 0;

		if (len > width)
			width = len;
	}
	first_event = pr_file_nr_attrs(r.file) ? pr_file_event_name(r.file, 0) : NULL;
	r.input = a->input;
	a->out.mode = file_mode(&r);
	if (file_events(&r, &a->out) ||
	    (a->out.show_event && (r.only_event = only_event(&r, a->out.show_event)) < 0)) {
		pr_file_close(r.file);
		return 2;
	}
	/* A profile holds every event and shows the one chosen. */
	if (fmt != DS_FORMAT_PERF_SCRIPT)
		r.only_event = -1;
	/* Wall time needs each CPU sample's own period (cpu-clock's is ns). */
	a->out.period_is_ns = a->out.mode == PR_PROFILE_WALL;
	if (a->out.off_cpu_min_ns && a->out.mode == PR_PROFILE_CPU) {
		ds_err("%s has no off-CPU samples: --off-cpu-min applies to captures "
		       "made with --off-cpu or --wall", a->input);
		pr_file_close(r.file);
		return 2;
	}
	if (a->quality)
		return run_quality(a, &r, &uo, &so);
	r.sink = ds_sink_open(&a->out, fmt, a->out.path, file_freq(r.file), first_event, width);
	if (!r.sink) {
		pr_file_close(r.file);
		return 1;
	}
	jobs = nr_jobs(a, &r, fmt);
	nr = jobs ? jobs : 1;
	/* The workers name the same files: each address once among them
	 * (without the memory for it, each names them all). */
	if (nr > 1 && names)
		so.pool = pr_sym_pool_new();
	w = calloc(nr, sizeof(*w));
	for (size_t i = 0; w && i < nr; i++) {
		w[i] = r;
		w[i].sink = i ? ds_sink_part(&a->out, fmt, file_freq(r.file)) : r.sink;
		if (!w[i].sink || open_worker(a, &w[i], &uo, &so, names)) {
			nr = i + 1;
			break;
		}
		opened++;
	}
	if (!w || opened < nr) {
		ds_err("out of memory");
	} else {
		struct ds_pipeline_cpu cpu = { 0 };
		uint64_t end;

		n = jobs ? replay(w, nr, &cpu) : pr_file_consume(r.file, on_record, w);
		/* Corrupt records were reported and skipped. */
		ret = n < 0 && n != -EBADMSG;
		for (size_t i = 1; i < nr; i++) {
			if (w[i].first_time && (!w[0].first_time || w[i].first_time < w[0].first_time))
				w[0].first_time = w[i].first_time;
			if (w[i].last_time > w[0].last_time)
				w[0].last_time = w[i].last_time;
			if (w[i].end_time > w[0].end_time)
				w[0].end_time = w[i].end_time;
		}
		/* Threads still off the CPU when the recording stopped wait
		 * until then (the file says when, else its last record). */
		if (pr_file_end_time(r.file, &end) || end < w[0].end_time)
			end = w[0].end_time;
		for (size_t i = 0; !ret && r.switch_event >= 0 && i < nr; i++)
			if (ds_sink_end(w[i].sink, end) < 0)
				ret = 1;
		for (size_t i = 1; i < nr; i++) {
			if (ds_sink_merge(ret ? NULL : w[0].sink, w[i].sink) < 0)
				ret = 1;
			w[i].sink = NULL;
		}
		summary(w, nr, a->verbose);
		if (a->verbose && jobs)
			ds_pipeline_cpu_print(&cpu, "reading", nr);
		if (a->verbose && jobs)
			ds_pool_print(so.pool);
		if (r.switch_event >= 0)
			ds_sink_print_times(w[0].sink);
	}
	/* The file has no wall-clock time (perf writes one only with
	 * --clockid), but the samples say how long the recording ran, as
	 * the live command's profile does. */
	if (ds_sink_close(r.sink, 0, w ? w[0].last_time - w[0].first_time : 0, false))
		ret = 1;
	else if (a->out.path && strcmp(a->out.path, "-") && fmt != DS_FORMAT_PERF_SCRIPT)
		fprintf(stderr, "dwarfsample: wrote %s (%s); open it with %s\n", a->out.path,
			ds_format_name(fmt), ds_format_hint(fmt));
	if (w && opened == nr)
		ret = ds_file_verdict(r.file, a->input, ret);
	for (size_t i = 0; w && i < nr; i++) {
		if (i)
			ds_sink_merge(NULL, w[i].sink);
		pr_symbolizer_free(w[i].sym);
		pr_unwinder_free(w[i].u);
		pr_model_free(w[i].model);
	}
	/* After every symbolizer that took from it. */
	pr_sym_pool_free(so.pool);
	free(w);
	pr_file_close(r.file);
	return ret;
}

static void usage(FILE *out)
{
	fprintf(out, "usage: dwarfsample report -i FILE [options]\n"
	      "\n"
	      "Unwind every sample of a perf.data file (dwarfsample record's or\n"
	      "perf record --call-graph dwarf's), name its frames and print the\n"
	      "stacks.\n"
	      "\n"
	      "  -i, --input FILE         the perf.data file to read\n"
	      "  -o, --output FILE        write there instead of standard output\n"
	      "  -f, --format FORMAT      perf-script: perf script's layout (default);\n"
	      "                           svg, pprof, folded, speedscope: a profile, as\n"
	      "                           'dwarfsample --help' describes them\n"
	      "      --tid, --annotate, --tag KEY=VALUE\n"
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
	      "                           (50us, 2ms, 0.5s)\n"
	      "%s"
	      "  -v, --verbose            more diagnostics\n"
	      "  -h, --help               this help\n", ds_names_help);
}

enum { OPT_KALLSYMS = 2100, OPT_OFF_CPU_MIN, OPT_EVENT, OPT_QUALITY };

int ds_cmd_report(int argc, char **argv)
{
	static const struct option own[] = {
		{ "input", required_argument, NULL, 'i' },
		{ "fields", required_argument, NULL, 'F' },
		{ "kallsyms", required_argument, NULL, OPT_KALLSYMS },
		{ "off-cpu-min", required_argument, NULL, OPT_OFF_CPU_MIN },
		{ "event", required_argument, NULL, OPT_EVENT },
		{ "quality", no_argument, NULL, OPT_QUALITY },
		{ "verbose", no_argument, NULL, 'v' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	const struct option *lists[] = { own, ds_names_longopts, ds_output_longopts };
	struct option longopts[64];
	size_t nr = 0;
	struct report_args a = { .out.fields = PS_DEFAULT };
	int opt, fmt;

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

			if (ps_parse_fields(optarg, &a.out.fields, &bad, &len)) {
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
			if (ds_parse_duration(optarg, "off-CPU minimum", &a.out.off_cpu_min_ns))
				return 2;
			break;
		case OPT_EVENT:
			a.out.show_event = optarg;
			break;
		case OPT_QUALITY:
			a.quality = true;
			break;
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
	if (!a.input) {
		ds_err("give the file to read: -i FILE");
		return 2;
	}
	if (optind < argc) {
		ds_err("unexpected argument '%s'", argv[optind]);
		return 2;
	}
	fmt = ds_output_format(&a.out, DS_FORMAT_PERF_SCRIPT, false);
	if (fmt < 0)
		return 2;
	if (!(a.out.fields & PS_IP)) {
		ds_err("-F must include ip: report prints call stacks");
		return 2;
	}
	a.out.no_inline = a.names.no_inline;
	return run(&a, fmt);
}
