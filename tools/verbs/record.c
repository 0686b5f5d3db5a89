/* SPDX-License-Identifier: Apache-2.0 */
/*
 * `dwarfsample record`: sample a target into a perf.data file that Linux
 * perf's tools read and unwind too.  What the target already has when
 * recording starts (threads, executable mappings, the kernel's text) is
 * synthesized from /proc; everything after comes from the kernel.
 */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "cli.h"
#include "record.h"

/* record's own options. */
struct record_args {
	const char *out;
	bool archive;                /* --archive: FILE.archive.tar.gz */
	bool no_cache;               /* --no-buildid-cache */
};

struct recording {
	const struct ds_capture *c;
	struct pr_reader *r;
	struct pr_writer *w;
	struct pr_keeper *keep;      /* files held for the cache and archive */
	uint64_t id;             /* written into synthesized records */
	uint64_t samples;
};

static int write_record(const struct pr_record *rec, void *arg)
{
	struct recording *rc = arg;
	int err = pr_writer_write(rc->w, rec);

	/* A file it has no memory to hold is not kept: the recording goes
	 * on. */
	if (rc->keep)
		pr_keeper_record(rc->keep, rec);
	if (!err)
		rc->samples += rec->type == PR_RECORD_SAMPLE;
	return err;
}

static int finish_round(void *arg)
{
	return pr_writer_finish_round(((struct recording *)arg)->w);
}

/* Runs with the events enabled, so nothing created from now on is missed;
 * the synthesized records are written before any live one, and their time
 * 0 sorts them first for every reader. */
static int synthesize(void *arg)
{
	struct recording *rc = arg;

	return ds_synthesize(rc->c, rc->r, rc->id, write_record, rc);
}

/* Like perf, keep the previous recording as FILE.old. */
static void keep_old(const char *path)
{
	struct stat st;
	char old[4096 + sizeof(".old")];

	if (stat(path, &st) || !S_ISREG(st.st_mode) || st.st_size == 0)
		return;
	snprintf(old, sizeof(old), "%s.old", path);
	if (rename(path, old) == 0)
		fprintf(stderr, "dwarfsample: kept the previous %s as %s\n", path, old);
}

static void usage(FILE *out)
{
	fprintf(out,
		"usage: dwarfsample record [options] (-p PID[,PID...] | -t TID[,TID...] |\n"
		"                                    -a [-C LIST] | -- CMD [ARGS...])\n"
		"\n"
		"Sample the target into a perf.data file: user registers and stacks\n"
		"for DWARF unwinding (or the kernel's call chains: --call-graph), with\n"
		"the mappings and threads needed to replay it offline, and the perf\n"
		"maps and jitdump files of processes that run JIT code.  Linux perf\n"
		"reads it too ('perf script -i FILE').\n"
		"\n%s%s"
		"Output:\n"
		"  -o, --output FILE        where to write (default perf.data; an\n"
		"                           existing file is kept as FILE.old)\n"
		"      --archive            also FILE.archive.tar.gz: every file the samples'\n"
		"                           frames landed in (and its debug file), by\n"
		"                           build-id, and the kernel's symbols -- what\n"
		"                           report needs on another machine, or once\n"
		"                           the files are gone; report uses it by itself\n"
		"      --no-buildid-cache   do not keep those files in perf's build-id\n"
		"                           cache ($PERF_BUILDID_DIR or ~/.debug), which\n"
		"                           perf and report read\n"
		"  -h, --help               this help\n",
		ds_capture_help, ds_offcpu_help);
}

/* The file, with every event of the reader and its ids; the first id of
 * the first event (the one with the side-band) tags synthesized records. */
static struct pr_writer *open_writer(struct recording *rc, const char *out,
				     const struct pr_writer_opts *wo)
{
	struct pr_writer_event events[DS_MAX_EVENTS + 1];
	size_t nr = pr_reader_nr_events(rc->r), all = pr_reader_ids(rc->r, NULL, 0);
	uint64_t *ids = calloc(all ? all : 1, sizeof(*ids)), *at = ids;
	struct pr_writer *w;
	char target[4096];
	int err;

	if (!ids || nr > sizeof(events) / sizeof(events[0])) {
		free(ids);
		return NULL;
	}
	for (size_t i = 0; i < nr; i++) {
		size_t n = pr_reader_event_ids(rc->r, i, at, all - (size_t)(at - ids));

		events[i] = (struct pr_writer_event){ pr_reader_event_attr(rc->r, i), at, n,
						      /* -e's spelling; the off-CPU event
						       * after them is named from its attr */
						      i < rc->c->events.nr ? rc->c->events.names[i]
									   : NULL };
		at += n;
	}
	rc->id = ids[0];
	/* Through a symbolic link: the file it names is kept and written,
	 * the link left in place. */
	err = pr_output_target(out, target, sizeof(target));
	if (err) {
		free(ids);
		if (err == -ELOOP)
			ds_err("cannot write %s: its symbolic links loop (or are more than 40); "
			       "point it at a file, or choose another output path (-o)", out);
		else
			ds_err("cannot write %s: %s; choose another output path (-o)", out,
			       strerror(-err));
		return NULL;
	}
	keep_old(target);
	w = pr_writer_open_events(target, events, nr, wo);
	free(ids);
	return w;
}

/* Keep what the samples need: perf's build-id cache (the files there are
 * a convenience: none kept is no failure), the archive. */
static int keep_files(struct recording *rc, const struct record_args *a)
{
	char archive[4200];

	if (pr_keeper_replay(rc->keep, a->out))
		return -1;
	if (!a->no_cache)
		pr_keeper_write_cache(rc->keep, NULL);
	if (!a->archive)
		return 0;
	pr_archive_name(a->out, archive, sizeof(archive));
	if (pr_keeper_write_archive(rc->keep, archive, rc->c->kernel))
		return -1;
	fprintf(stderr, "dwarfsample: wrote %s: what report needs to name and unwind "
		"%s anywhere\n", archive, a->out);
	return 0;
}

static int run(struct ds_capture *c, const struct record_args *a, int argc, char **argv)
{
	const char *out = a->out;
	PR_OPTS(pr_writer_opts, wo, .argc = argc, .argv = argv, .log = ds_log, .jit_files = true);
	PR_OPTS(pr_keeper_opts, ko, .log = ds_log_own);
	struct recording rc = { .c = c };
	struct ds_capture_hooks hooks = {
		.record = write_record, .started = synthesize,
		.round = finish_round, .ctx = &rc,
	};
	double start;
	struct stat st;
	int err;

	rc.r = ds_capture_open(c);
	if (!rc.r)
		return 1;
	if ((a->archive || !a->no_cache) && !(rc.keep = pr_keeper_new(&ko))) {
		pr_reader_close(rc.r);
		ds_err("out of memory");
		return 1;
	}
	rc.w = open_writer(&rc, out, &wo);
	if (!rc.w) {
		pr_keeper_free(rc.keep);
		pr_reader_close(rc.r);
		return 1;
	}
	start = ds_now();
	err = ds_capture_run(c, rc.r, &hooks);
	pr_writer_set_end_time(rc.w, hooks.end_ns);
	if (err) {
		char buf[128];

		ds_err("recording stopped: %s", pr_strerror(err, buf, sizeof(buf)));
	}
	{
		uint64_t lost = pr_reader_lost(rc.r);
		int werr = pr_writer_close(rc.w);

		if (!err)
			err = werr;
		fprintf(stderr, "dwarfsample: wrote %" PRIu64 " samples in %.1f s to %s "
			"(%.1f MB)", rc.samples, ds_now() - start, out,
			stat(out, &st) ? 0.0 : (double)st.st_size / 1e6);
		if (lost)
			fprintf(stderr, "; %" PRIu64 " samples lost: to lose fewer, %s",
				lost, ds_lost_hint(c));
		fputc('\n', stderr);
		if (!rc.samples && !lost && !err)
			ds_no_samples(c, &hooks, ds_now() - start, "dwarfsample: ");
		ds_chain_limit_note(stderr, "dwarfsample: ", rc.r);
		ds_events_sampling_note(&c->events, c->freq, stderr, "dwarfsample: ");
		ds_python_summary(stderr, "dwarfsample: ");
	}
	if (!err && rc.keep && keep_files(&rc, a))
		err = 1;
	pr_keeper_free(rc.keep);
	pr_reader_close(rc.r);
	return ds_command_exit(&hooks, err ? 1 : 0);
}

enum { OPT_ARCHIVE = 2200, OPT_NO_CACHE };

static int record_option(int opt, const char *arg, void *ctx)
{
	struct record_args *a = ctx;

	if (opt == 'o')
		a->out = arg;
	else if (opt == OPT_ARCHIVE)
		a->archive = true;
	else if (opt == OPT_NO_CACHE)
		a->no_cache = true;
	else
		return -1;
	return 0;
}

int ds_cmd_record(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "output", required_argument, NULL, 'o' },
		{ "archive", no_argument, NULL, OPT_ARCHIVE },
		{ "no-buildid-cache", no_argument, NULL, OPT_NO_CACHE },
		{ NULL, 0, NULL, 0 },
	};
	struct record_args a = { .out = "perf.data" };
	const struct ds_verb verb = {
		.name = "record", .shortopts = "o:", .longopts = longopts, .usage = usage,
		.option = record_option, .ctx = &a,
	};
	struct ds_capture *c = calloc(1, sizeof(*c));
	int ret;

	if (!c)
		return 1;
	if ((ret = ds_parse_target(c, &verb, argc, argv)) < 0)
		ret = run(c, &a, argc, argv);
	free(c);
	return ret;
}
