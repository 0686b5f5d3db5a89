/* SPDX-License-Identifier: Apache-2.0 */
/* Small pieces the verbs share: the cache directory, debuginfod's
 * settings, the stack-end line, a growing array, a file's verdict. */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <limits.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "cli.h"

void ds_debuginfod_env(bool off, const char *timeout, const char *cache)
{
	/* libdw's debuginfod client takes its settings from the
	 * environment, and asks only when DEBUGINFOD_URLS names servers. */
	if (off) {
		unsetenv("DEBUGINFOD_URLS");
		return;
	}
	if (timeout)
		setenv("DEBUGINFOD_TIMEOUT", timeout, 1);
	else if (!getenv("DEBUGINFOD_TIMEOUT"))
		setenv("DEBUGINFOD_TIMEOUT", "30", 1);
	if (cache)
		setenv("DEBUGINFOD_CACHE_PATH", cache, 1);
}

int ds_parse_size(const char *arg, const char *what, uint64_t *out)
{
	char *end;
	unsigned long long v;
	int shift = 0;

	errno = 0;
	v = strtoull(arg, &end, 10);
	if (errno || end == arg || arg[0] == '-')
		goto bad;
	switch (*end) {
	case 'K': case 'k': shift = 10; end++; break;
	case 'M': case 'm': shift = 20; end++; break;
	case 'G': case 'g': shift = 30; end++; break;
	default: break;
	}
	if (v > UINT64_MAX >> shift)
		goto bad;
	v <<= shift;
	if (*end || !v)
		goto bad;
	*out = v;
	return 0;
bad:
	ds_err("invalid %s '%s': expected a size in bytes, with K, M or G", what, arg);
	return -1;
}

const char *ds_cache_dir(void)
{
	static char path[4096];
	const char *xdg = getenv("XDG_CACHE_HOME"), *home = getenv("HOME");
	int n;

	if (path[0])
		return path;
	if (xdg && xdg[0] == '/')
		n = snprintf(path, sizeof(path), "%s/dwarfsample", xdg);
	else if (home && home[0] == '/')
		n = snprintf(path, sizeof(path), "%s/.cache/dwarfsample", home);
	else
		return NULL;
	if (n < 0 || (size_t)n >= sizeof(path)) {
		path[0] = '\0';
		return NULL;
	}
	/* Its parent may not exist yet either (a fresh home). */
	if (ds_mkdirs(path, 0755)) {
		path[0] = '\0';
		return NULL;
	}
	return path;
}

int ds_mkdirs(const char *dir, mode_t mode)
{
	char path[4096];

	if (snprintf(path, sizeof(path), "%s", dir) >= (int)sizeof(path))
		return -ENAMETOOLONG;
	for (char *p = path + 1; *p; p++) {
		if (*p != '/')
			continue;
		*p = '\0';
		if (mkdir(path, mode) && errno != EEXIST)
			return -errno;
		*p = '/';
	}
	if (mkdir(path, mode) && errno != EEXIST)
		return -errno;
	return 0;
}

void ds_stack_ends(const struct pr_unwind_stats *st)
{
	fputs("stacks ended:", stderr);
	for (int e = 0; e < PR_END_MAX; e++)
		if (st->ends[e])
			fprintf(stderr, " %s %.1f%%", pr_stack_end_name((enum pr_stack_end)e),
				100.0 * (double)st->ends[e] / (double)st->samples);
	/* Counted above by how they end after it. */
	if (st->joined)
		fprintf(stderr, "; %.1f%% completed by joining (--no-join)",
			100.0 * (double)st->joined / (double)st->samples);
	fputc('\n', stderr);
}

void ds_frame_sources(FILE *out, const char *prefix, const struct pr_session_stats *ss,
		      bool all)
{
	/* As --annotate marks them: none, _[fp], _[joined]. */
	static const char *const names[] = { "dwarf", "fp", "joined" };
	const uint64_t n[] = { ss->frames_dwarf, ss->frames_chain, ss->frames_joined };
	uint64_t total = n[0] + n[1] + n[2];
	const char *sep = "";

	if (!total || (!all && total == n[0]))
		return;
	fprintf(out, "%suser frames by source:", prefix);
	for (size_t i = 0; i < sizeof(n) / sizeof(n[0]); i++) {
		if (!n[i] && !all)
			continue;
		fprintf(out, "%s %s %" PRIu64 " (%.1f%%)", sep, names[i], n[i],
			100.0 * (double)n[i] / (double)total);
		sep = ",";
	}
	fputc('\n', out);
	if (all)
		fprintf(out, "%s  (dwarf: unwound from the sample's stack copy; fp: the kernel's "
			"frame-pointer chain, marked _[fp] by --annotate; joined: from an earlier "
			"stack of the thread, marked _[joined])\n", prefix);
}

int ds_reserve(void *pv, size_t *cap, size_t need, size_t size, size_t first)
{
	void **v = pv, *grown;
	size_t n = *cap ? *cap : first;

	if (need <= *cap)
		return 0;
	while (n < need)
		n *= 2;
	grown = realloc(*v, n * size);
	if (!grown)
		return -ENOMEM;
	*v = grown;
	*cap = n;
	return 0;
}

int ds_file_verdict(const struct pr_file *f, const char *path, int ret)
{
	struct pr_file_stats st = { .sz = sizeof(st) };

	if (pr_file_stats(f, &st))
		return ret;
	if (st.unsupported_at)
		return 1;
	if (!st.damaged)
		return ret;
	fprintf(stderr, "dwarfsample: %s is damaged: salvaged %" PRIu64 " records",
		path, st.records - st.corrupt_records);
	if (st.corrupt_records)
		fprintf(stderr, ", skipped %" PRIu64 " corrupt ones", st.corrupt_records);
	if (st.damaged_at)
		fprintf(stderr, "; nothing could be read from byte %" PRIu64 " on, the "
			"last %" PRIu64 " of its %" PRIu64 " bytes of records", st.damaged_at,
			st.data_offset + st.data_size - st.damaged_at, st.data_size);
	if (st.truncated && st.data_claimed > st.data_size)
		fprintf(stderr, "; the file ends %" PRIu64 " bytes short of its data "
			"section (a truncated copy)", st.data_claimed - st.data_size);
	fputs(".  The output holds what was read before the damage (exit status 3).\n",
	      stderr);
	return ret ? ret : DS_EXIT_SALVAGED;
}

/* A switch-out sample the ring had no room for costs the target nothing:
 * the kernel copies its stack only into room it found.  With off-CPU
 * samples that copy is what both fills the ring and slows a switch-heavy
 * target, so a smaller one is the first thing to suggest. */
