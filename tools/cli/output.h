/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The output options of the live command and `report`: their getopt
 * entries and help text, the format settled from -f or -o's extension,
 * the output (proutput.h) opened with the command's log, and the summary
 * of where time went.
 */
#ifndef DS_OUTPUT_H
#define DS_OUTPUT_H

#include <getopt.h>
#include <stdbool.h>
#include <stdio.h>

#include "perfreader.h"

#define DS_MAX_TAGS 64

struct ds_output_opts {
	const char *path;            /* -o; NULL: the caller's default */
	const char *format;          /* -f; NULL: from the path's extension */
	const char *tags[DS_MAX_TAGS];  /* --tag KEY=VALUE, po.nr_tags of them */
	/* The rest of what the output counts and writes: --thread-roots and
	 * --annotate, and what the verb sets from what was (or is being)
	 * captured: the mode, the events, perf script's fields. */
	struct pr_output_opts po;
};

/* The output options' getopt entries and help text. */
enum { DS_OPT_THREAD_ROOTS = 3000, DS_OPT_TAG, DS_OPT_ANNOTATE };
#define DS_OUTPUT_SHORTOPTS "o:f:"
extern const struct option ds_output_longopts[];
extern const char ds_output_help[];

/* One of those options: 1 when it was one (0 when `opt` is not an output
 * option), -1 after reporting a bad value. */
int ds_output_option(struct ds_output_opts *o, int opt, const char *arg);

/*
 * Settle the format: -f, else -o's extension, else `fallback`.  An
 * extension no format has is an error when `ext_required` (the live
 * command, whose default is a profile), else the fallback (report, whose
 * default is text).  Returns the format (PR_FORMAT_* or
 * PR_OUTPUT_PERF_SCRIPT), or -1 after saying what was wrong.
 */
int ds_output_format(const struct ds_output_opts *o, int fallback, bool ext_required);

/* The output of format `fmt` at o->path ("-" or NULL: standard output),
 * opened now so that an unwritable path is reported before anything else
 * is done; the library's messages through the command's log.  NULL after
 * saying why (pprof to a terminal, say). */
struct pr_output *ds_output_open(struct ds_output_opts *o, int fmt);

/* A command line in a title, `s`, cut with "..." to 80 bytes at most,
 * between UTF-8 characters; its new length. */
size_t ds_cut_title(char *s);

/* "dwarfsample: wrote PATH (FORMAT); open it with ..." to stderr: what
 * opens a file of format `fmt` (pr_output_format_hint()) with `path` in
 * place of FILE, quoted for a shell where it needs it, so that the
 * command can be pasted: "go tool pprof -http=: 'my run.pb.gz'". */
void ds_output_wrote(int fmt, const char *path);

/* `ns` as "1.23 s", "45.6 ms" or "789 us", written into buf. */
const char *ds_duration(uint64_t ns, char *buf, size_t len);

/* The summary of where time went, to stderr: a line for everything, then
 * one per process (the busiest first, up to ten). */
void ds_output_print_times(const struct pr_output *out);

#endif
