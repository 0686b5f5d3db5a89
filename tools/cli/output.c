/* SPDX-License-Identifier: Apache-2.0 */
/* The output options, and what the command prints of an output. */
#include <inttypes.h>
#include <limits.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"
#include "output.h"

const struct option ds_output_longopts[] = {
	{ "output", required_argument, NULL, 'o' },
	{ "format", required_argument, NULL, 'f' },
	{ "thread-roots", no_argument, NULL, DS_OPT_THREAD_ROOTS },
	{ "tag", required_argument, NULL, DS_OPT_TAG },
	{ "annotate", no_argument, NULL, DS_OPT_ANNOTATE },
	{ NULL, 0, NULL, 0 },
};

const char ds_output_help[] =
	"Output:\n"
	"  -o, --output FILE        where to write the profile; its extension picks\n"
	"                           the format when -f is not given: .svg; .pb.gz,\n"
	"                           .pb, .pprof (pprof); .folded, .collapsed;\n"
	"                           .speedscope.json, .json (speedscope); .txt,\n"
	"                           .perf, .script (perf-script)\n"
	"  -f, --format FORMAT      svg: an interactive flame graph (open it in a\n"
	"                             web browser);\n"
	"                           pprof: gzipped profile.proto (go tool pprof);\n"
	"                           folded: one line per stack, for flamegraph.pl,\n"
	"                             inferno and speedscope;\n"
	"                           speedscope: speedscope's JSON, a profile per\n"
	"                             thread;\n"
	"                           perf-script: perf script's text, sample by\n"
	"                             sample\n"
	"      --thread-roots       folded, svg: a root per thread (comm-PID/TID)\n"
	"                           instead of per process name (--tid was this\n"
	"                           once; it is now perf's -t)\n"
	"      --annotate           folded, svg: mark kernel frames _[k], inlined\n"
	"                           functions _[i], JIT code _[j] and frames\n"
	"                           joined from an earlier stack _[joined]; and\n"
	"                           speedscope, perf-script too: frames from the\n"
	"                           kernel's frame-pointer chain _[fp]\n"
	"      --tag KEY=VALUE      a label for the whole profile (pprof writes it on\n"
	"                           every sample); repeatable\n";

int ds_output_option(struct ds_output_opts *o, int opt, const char *arg)
{
	switch (opt) {
	case 'o':
		o->path = arg;
		return 1;
	case 'f':
		o->format = arg;
		return 1;
	case DS_OPT_THREAD_ROOTS:
		o->po.per_thread = true;
		return 1;
	case DS_OPT_ANNOTATE:
		o->po.annotate = true;
		return 1;
	case DS_OPT_TAG: {
		const char *eq = strchr(arg, '=');

		if (!eq || eq == arg) {
			ds_err("invalid --tag '%s': expected KEY=VALUE", arg);
			return -1;
		}
		if (eq - arg > 255) {
			ds_err("invalid --tag: the key is longer than 255 bytes");
			return -1;
		}
		/* pprof labels every sample with these already. */
		for (const char *const *r = (const char *const[]){ "pid", "tid", "thread",
								   "process", NULL }; *r; r++)
			if ((size_t)(eq - arg) == strlen(*r) && !strncmp(arg, *r, strlen(*r))) {
				ds_err("--tag %s=...: '%s' is a label every sample has already; "
				       "choose another key", *r, *r);
				return -1;
			}
		if (o->po.nr_tags == DS_MAX_TAGS) {
			ds_err("at most %d --tag", DS_MAX_TAGS);
			return -1;
		}
		o->tags[o->po.nr_tags++] = arg;
		return 1;
	}
	default:
		return 0;
	}
}

int ds_output_format(const struct ds_output_opts *o, int fallback, bool ext_required)
{
	int fmt;

	if (o->format) {
		fmt = pr_output_format_by_name(o->format);
		if (fmt < 0)
			ds_err("unknown format '%s': the formats are svg, pprof, folded, "
			       "speedscope and perf-script", o->format);
		return fmt < 0 ? -1 : fmt;
	}
	if (!o->path || !strcmp(o->path, "-"))
		return fallback;
	fmt = pr_output_format_by_path(o->path);
	if (fmt < 0 && !ext_required)
		return fallback;
	if (fmt < 0) {
		ds_err("cannot tell the format from '%s': give -f svg, pprof, folded, "
		       "speedscope or perf-script, or an extension: .svg; .pb.gz, .pb, "
		       ".pprof (pprof); .folded, .collapsed; .speedscope.json, .json "
		       "(speedscope); .txt, .perf, .script (perf-script)", o->path);
		return -1;
	}
	return fmt;
}

struct pr_output *ds_output_open(struct ds_output_opts *o, int fmt)
{
	const char *path = o->path && strcmp(o->path, "-") ? o->path : NULL;

	if (fmt == PR_FORMAT_PPROF && !path && isatty(STDOUT_FILENO)) {
		ds_err("pprof is binary: give -o FILE.pb.gz, or redirect standard output");
		return NULL;
	}
	o->po.sz = sizeof(o->po);
	o->po.log = ds_log_own;
	o->po.tags = o->tags;
	return pr_output_open(path, fmt, &o->po);
}

/* `path` as a shell word: as it is when nothing in it is special to a
 * shell, else in single quotes ('\'' for a quote); "./" before a leading
 * '-', which a command would take for an option. */
static size_t shell_word(char *buf, size_t len, const char *path)
{
	static const char plain[] = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"
				    "0123456789_./:=+,-@%";
	const char *lead = path[0] == '-' ? "./" : "";
	size_t n;

	if (path[0] && path[strspn(path, plain)] == '\0')
		return (size_t)snprintf(buf, len, "%s%s", lead, path);
	n = (size_t)snprintf(buf, len, "%s'", lead);
	for (const char *p = path; *p && n < len; p++)
		n += (size_t)snprintf(buf + n, len - n, *p == '\'' ? "'\\''" : "%c", *p);
	if (n < len)
		n += (size_t)snprintf(buf + n, len - n, "'");
	return n;
}

static const char *output_hint(int fmt, const char *path, char *buf, size_t len)
{
	const char *hint = pr_output_format_hint(fmt), *file;
	size_t n = 0;

	if (!hint || !len)
		return hint ? hint : "";
	buf[0] = '\0';
	while ((file = strstr(hint, "FILE")) && n < len) {
		n += (size_t)snprintf(buf + n, len - n, "%.*s", (int)(file - hint), hint);
		if (n < len)
			n += shell_word(buf + n, len - n, path);
		hint = file + 4;
	}
	if (n < len)
		snprintf(buf + n, len - n, "%s", hint);
	return buf;
}

size_t ds_cut_title(char *s)
{
	size_t n = 77;

	if (strlen(s) <= 80)
		return strlen(s);
	while (n && (s[n] & 0xc0) == 0x80)
		n--;
	memcpy(s + n, "...", 4);
	return n + 3;
}

void ds_output_wrote(int fmt, const char *path)
{
	char hint[PATH_MAX * 4 + 256];

	fprintf(stderr, "dwarfsample: wrote %s (%s); open it with %s\n", path,
		pr_output_format_name(fmt), output_hint(fmt, path, hint, sizeof(hint)));
}

const char *ds_duration(uint64_t ns, char *buf, size_t len)
{
	if (ns >= UINT64_C(1000000000))
		snprintf(buf, len, "%.2f s", (double)ns / 1e9);
	else if (ns >= 1000000)
		snprintf(buf, len, "%.1f ms", (double)ns / 1e6);
	else
		snprintf(buf, len, "%.0f us", (double)ns / 1e3);
	return buf;
}

/* "on-CPU 1.20 s, off-CPU 3.40 s (blocked 88%, preempted 12%)" */
static void print_times(const struct pr_profile_times *t)
{
	uint64_t off = t->off_cpu_ns[PR_WAIT_BLOCKED] + t->off_cpu_ns[PR_WAIT_PREEMPTED];
	char a[32], b[32];

	if (t->samples)
		fprintf(stderr, "on-CPU %s, ", ds_duration(t->cpu_ns, a, sizeof(a)));
	fprintf(stderr, "off-CPU %s", ds_duration(off, b, sizeof(b)));
	if (off)
		fprintf(stderr, " (blocked %.0f%%, preempted %.0f%%)",
			100.0 * (double)t->off_cpu_ns[PR_WAIT_BLOCKED] / (double)off,
			100.0 * (double)t->off_cpu_ns[PR_WAIT_PREEMPTED] / (double)off);
}

void ds_output_print_times(const struct pr_output *out)
{
	struct pr_profile_times t = { .sz = sizeof(t) };
	uint32_t pids[10];
	size_t n;

	if (pr_output_times(out, 0, &t))
		return;
	fputs("dwarfsample: ", stderr);
	print_times(&t);
	fprintf(stderr, "; %" PRIu64 " waits", t.waits[0] + t.waits[1]);
	if (t.waits_short)
		fprintf(stderr, ", %" PRIu64 " shorter than --off-cpu-min left out",
			t.waits_short);
	if (t.waits_lost)
		fprintf(stderr, ", %" PRIu64 " without a stack (their sample was lost)",
			t.waits_lost);
	fputc('\n', stderr);
	if (t.waits_before_start) {
		char a[32];

		fprintf(stderr, "dwarfsample: of which %" PRIu64 " under way already when sampling "
			"started (%s of it since then; '[off-cpu: blocked since before the "
			"start]')\n", t.waits_before_start,
			ds_duration(t.before_start_ns, a, sizeof(a)));
	}
	n = pr_output_pids(out, pids, 10);
	for (size_t i = 0; i < n && i < 10; i++) {
		const char *name = pr_output_process(out, pids[i]);

		t = (struct pr_profile_times){ .sz = sizeof(t) };
		if (pr_output_times(out, pids[i], &t))
			continue;
		fprintf(stderr, "dwarfsample:   %s[%u]: ", name ? name : "?", pids[i]);
		print_times(&t);
		fputc('\n', stderr);
	}
	if (n > 10)
		fprintf(stderr, "dwarfsample:   and %zu more processes\n", n - 10);
}
