/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The formats: which there are, what their files are called and what
 * opens them, and pr_profile_write() handing a profile to the one asked
 * for; and which file a write to a path lands in (pr_output_target()).  perf script's text is an output's format too (proutput.h), written
 * sample by sample rather than from a profile (script.c).
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "output/output.h"

static const struct {
	const char *name, *ext;
	int (*write)(const struct pr_profile *, FILE *, const struct pr_profile_write_opts *);
	const char *hint;            /* what opens a file of it */
} formats[PR_OUTPUT_FORMAT_MAX] = {
	[PR_FORMAT_FOLDED] = { "folded", ".folded", pr__out_folded,
			       "flamegraph.pl FILE > out.svg, inferno-flamegraph, or "
			       "https://www.speedscope.app" },
	[PR_FORMAT_PPROF] = { "pprof", ".pb.gz", pr__out_pprof,
			      "go tool pprof -http=: FILE (or -top, -traces)" },
	[PR_FORMAT_SPEEDSCOPE] = { "speedscope", ".speedscope.json", pr__out_speedscope,
				   "https://www.speedscope.app, or npx speedscope FILE" },
	[PR_FORMAT_SVG] = { "svg", ".svg", pr__out_svg, "a web browser (xdg-open FILE)" },
	/* Not a profile's: no writer of the aggregate. */
	[PR_OUTPUT_PERF_SCRIPT] = { "perf-script", ".perf.txt", NULL,
				    "a pager, stackcollapse-perf.pl, or the Firefox Profiler" },
};

const char *pr_profile_format_name(enum pr_profile_format f)
{
	return (unsigned)f < PR_FORMAT_MAX ? formats[f].name : NULL;
}

const char *pr_profile_format_ext(enum pr_profile_format f)
{
	return (unsigned)f < PR_FORMAT_MAX ? formats[f].ext : NULL;
}

int pr_profile_format_by_name(const char *name)
{
	for (int f = 0; name && f < PR_FORMAT_MAX; f++)
		if (!strcmp(name, formats[f].name))
			return f;
	return -EINVAL;
}

static bool ends_with(const char *s, const char *end)
{
	size_t n = strlen(s), m = strlen(end);

	return n >= m && !strcmp(s + n - m, end);
}

int pr_profile_format_by_path(const char *path)
{
	/* Also the extensions the tools that read them use. */
	static const struct { const char *ext; int f; } more[] = {
		{ ".pb", PR_FORMAT_PPROF }, { ".pprof", PR_FORMAT_PPROF },
		{ ".collapsed", PR_FORMAT_FOLDED },
		{ ".json", PR_FORMAT_SPEEDSCOPE },
	};

	for (int f = 0; path && f < PR_FORMAT_MAX; f++)
		if (ends_with(path, formats[f].ext))
			return f;
	for (size_t i = 0; path && i < PR_ARRAY_SIZE(more); i++)
		if (ends_with(path, more[i].ext))
			return more[i].f;
	return -EINVAL;
}

const char *pr_output_format_name(int fmt)
{
	return (unsigned)fmt < PR_OUTPUT_FORMAT_MAX ? formats[fmt].name : NULL;
}

const char *pr_output_format_ext(int fmt)
{
	return (unsigned)fmt < PR_OUTPUT_FORMAT_MAX ? formats[fmt].ext : NULL;
}

const char *pr_output_format_hint(int fmt)
{
	return (unsigned)fmt < PR_OUTPUT_FORMAT_MAX ? formats[fmt].hint : NULL;
}

int pr_output_format_by_name(const char *name)
{
	if (name && !strcmp(name, formats[PR_OUTPUT_PERF_SCRIPT].name))
		return PR_OUTPUT_PERF_SCRIPT;
	return pr_profile_format_by_name(name);
}

int pr_output_format_by_path(const char *path)
{
	/* What perf script's text is saved as; ".perf.txt" among them. */
	if (path && (ends_with(path, ".txt") || ends_with(path, ".perf") ||
		     ends_with(path, ".script")))
		return PR_OUTPUT_PERF_SCRIPT;
	return pr_profile_format_by_path(path);
}

bool pr_output_shows_lines(int fmt, uint32_t fields)
{
	if (fmt == PR_OUTPUT_PERF_SCRIPT)
		return ((fields ? fields : PR_SCRIPT_DEFAULT) & PR_SCRIPT_SRCLINE) != 0;
	return fmt != PR_FORMAT_FOLDED && fmt != PR_FORMAT_SVG;
}

int pr_profile_write(const struct pr_profile *p, enum pr_profile_format fmt, FILE *out,
		     const struct pr_profile_write_opts *opts)
{
	struct pr_profile_write_opts o = { .sz = sizeof(o) };
	int ret;

	if (!p || !out || (unsigned)fmt >= PR_FORMAT_MAX || !PR_OPTS_VALID(opts))
		return -EINVAL;
	o.per_thread = PR_OPTS_GET(opts, per_thread, false);
	o.annotate = PR_OPTS_GET(opts, annotate, false);
	o.title = PR_OPTS_GET(opts, title, "dwarfsample");
	o.event = PR_OPTS_GET(opts, event, 0);
	o.part = PR_OPTS_GET(opts, part, PR_PART_ALL);
	if (o.event >= (p->nr_events ? p->nr_events : 1) ||
	    (o.part && (fmt != PR_FORMAT_PPROF || !pr_profile_has_part(p, o.part))))
		return -EINVAL;
	/* The writers see only that stdio failed (-EIO); why is in errno,
	 * which stdio sets at the failed write and nothing after it clears. */
	errno = 0;
	ret = formats[fmt].write(p, out, &o);
	if (!ret && (fflush(out) || ferror(out)))
		ret = -EIO;
	if (ret == -EIO && errno)
		ret = -errno;
	return ret;
}

bool pr_profile_has_part(const struct pr_profile *p, enum pr_profile_part part)
{
	return p && (unsigned)part < PR_PART_MAX && prof__part_values(p, part, NULL, NULL) > 0;
}

int pr_output_target(const char *path, char *buf, size_t len)
{
	if (!path || !buf || !len)
		return -EINVAL;
	return pr__link_target(path, buf, len);
}
