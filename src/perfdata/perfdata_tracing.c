/* SPDX-License-Identifier: Apache-2.0 */
/*
 * perf.data's TRACING_DATA feature: the formats of a file's tracepoints,
 * copied from tracefs.  perf's tools refuse a file with tracepoint events
 * without it (perf 6.1: "broken or missing trace data"), since they decode
 * a tracepoint's raw payload, and even name it, through its format.
 *
 * The layout is the one perf's trace-event-info.c writes, version 0.6:
 *
 *   "\027\010\104tracing" "0.6\0" | u8 big-endian | u8 sizeof(long) |
 *   u32 page size | "header_page\0" u64 size bytes |
 *   "header_event\0" u64 size bytes | u32 ftrace formats (0 here) |
 *   u32 systems, per system: its name NUL-terminated, u32 formats, per
 *   format: u64 size bytes | u32 kallsyms size (0) | u32 printk formats
 *   size (0) | u64 saved cmdlines size (0)
 *
 * Only the systems and formats of the file's tracepoints are copied.
 */
#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base/base.h"
#include "perfdata/perfdata.h"

/* Where tracefs is mounted, as perf's tools look for it. */
static const char *tracefs_root(void)
{
	static const char *const roots[] = { "/sys/kernel/tracing",
					     "/sys/kernel/debug/tracing" };

	for (size_t i = 0; i < PR_ARRAY_SIZE(roots); i++) {
		char path[64];

		snprintf(path, sizeof(path), "%s/events/header_page", roots[i]);
		if (!access(path, R_OK))
			return roots[i];
	}
	return NULL;
}

/* A whole tracefs file (their sizes are not known before reading). */
static int slurp(const char *path, char **buf, size_t *len)
{
	FILE *f = fopen(path, "re");
	FILE *m;
	char chunk[4096];
	size_t n;
	int err = 0;

	*buf = NULL;
	*len = 0;
	if (!f)
		return -errno;
	m = open_memstream(buf, len);
	if (!m) {
		err = -errno;
		fclose(f);
		return err;
	}
	while ((n = fread(chunk, 1, sizeof(chunk), f)) > 0)
		if (fwrite(chunk, 1, n, m) != n)
			err = -ENOMEM;
	if (ferror(f))
		err = -EIO;
	fclose(f);
	if (fclose(m) && !err)
		err = -ENOMEM;
	if (err) {
		free(*buf);
		*buf = NULL;
	}
	return err;
}

/* `size`, then a file's bytes, the size `size_bytes` wide. */
static int put_file(FILE *out, const char *path, size_t size_bytes)
{
	char *buf;
	size_t len;
	uint64_t n64;
	uint32_t n32;
	int err = slurp(path, &buf, &len);

	if (err)
		return err;
	n64 = len;
	n32 = (uint32_t)len;
	fwrite(size_bytes == 8 ? (void *)&n64 : (void *)&n32, size_bytes, 1, out);
	fwrite(buf, 1, len, out);
	free(buf);
	return 0;
}

/* A tracepoint's system and name, found by its id under events/. */
struct tracepoint {
	uint64_t id;
	char sys[256], name[256];
};

static bool id_is(const char *root, const char *sys, const char *name, uint64_t id)
{
	char path[1024];
	unsigned long long got;
	FILE *f;
	bool same;

	snprintf(path, sizeof(path), "%s/events/%s/%s/id", root, sys, name);
	f = fopen(path, "re");
	if (!f)
		return false;
	same = fscanf(f, "%llu", &got) == 1 && got == id;
	fclose(f);
	return same;
}

/* Fill the system and name of every tracepoint in `tps` (by id) with one
 * walk of events/.  0, or -ENOENT naming the first not found. */
static int find_tracepoints(const char *root, struct tracepoint *tps, size_t nr)
{
	char path[1024];
	size_t found = 0;
	DIR *systems, *events;
	struct dirent *s, *e;

	snprintf(path, sizeof(path), "%s/events", root);
	systems = opendir(path);
	if (!systems)
		return -errno;
	while (found < nr && (s = readdir(systems))) {
		if (s->d_name[0] == '.' || s->d_type != DT_DIR)
			continue;
		snprintf(path, sizeof(path), "%s/events/%s", root, s->d_name);
		events = opendir(path);
		if (!events)
			continue;
		while (found < nr && (e = readdir(events))) {
			if (e->d_name[0] == '.' || e->d_type != DT_DIR)
				continue;
			for (size_t i = 0; i < nr; i++) {
				if (tps[i].sys[0] || !id_is(root, s->d_name, e->d_name, tps[i].id))
					continue;
				snprintf(tps[i].sys, sizeof(tps[i].sys), "%s", s->d_name);
				snprintf(tps[i].name, sizeof(tps[i].name), "%s", e->d_name);
				found++;
			}
		}
		closedir(events);
	}
	closedir(systems);
	return found == nr ? 0 : -ENOENT;
}

static int cmp_tracepoint(const void *a, const void *b)
{
	const struct tracepoint *x = a, *y = b;
	int c = strcmp(x->sys, y->sys);

	return c ? c : strcmp(x->name, y->name);
}

/* Per system (tps sorted by it): the name, the count, each format. */
static int put_systems(FILE *out, const char *root, const struct tracepoint *tps, size_t nr)
{
	uint32_t systems = 0;
	int err = 0;

	for (size_t i = 0; i < nr; i++)
		systems += !i || strcmp(tps[i].sys, tps[i - 1].sys);
	fwrite(&systems, 4, 1, out);
	for (size_t i = 0; !err && i < nr;) {
		uint32_t formats = 0;
		size_t j;

		for (j = i; j < nr && !strcmp(tps[j].sys, tps[i].sys); j++)
			formats += j == i || strcmp(tps[j].name, tps[j - 1].name);
		fwrite(tps[i].sys, 1, strlen(tps[i].sys) + 1, out);
		fwrite(&formats, 4, 1, out);
		for (size_t k = i; !err && k < j; k++) {
			char path[1024];

			if (k > i && !strcmp(tps[k].name, tps[k - 1].name))
				continue;
			snprintf(path, sizeof(path), "%s/events/%s/%s/format", root, tps[k].sys,
				 tps[k].name);
			err = put_file(out, path, 8);
		}
		i = j;
	}
	return err;
}

static int put_tracing_data(FILE *out, const char *root, const struct tracepoint *tps,
			    size_t nr)
{
	static const char magic[] = { 23, 8, 68, 't', 'r', 'a', 'c', 'i', 'n', 'g' };
	uint32_t page = (uint32_t)sysconf(_SC_PAGESIZE), zero32 = 0;
	uint64_t zero64 = 0;
	char path[1024];
	uint8_t big_endian = 0, long_size = sizeof(long);
	int err;

	fwrite(magic, 1, sizeof(magic), out);
	fwrite("0.6", 1, 4, out);
	fwrite(&big_endian, 1, 1, out);
	fwrite(&long_size, 1, 1, out);
	fwrite(&page, 4, 1, out);
	fwrite("header_page", 1, 12, out);
	snprintf(path, sizeof(path), "%s/events/header_page", root);
	err = put_file(out, path, 8);
	if (!err) {
		fwrite("header_event", 1, 13, out);
		snprintf(path, sizeof(path), "%s/events/header_event", root);
		err = put_file(out, path, 8);
	}
	if (err)
		return err;
	fwrite(&zero32, 4, 1, out);              /* ftrace's own formats */
	err = put_systems(out, root, tps, nr);
	fwrite(&zero32, 4, 1, out);              /* kallsyms */
	fwrite(&zero32, 4, 1, out);              /* printk formats */
	fwrite(&zero64, 8, 1, out);              /* saved cmdlines */
	return err;
}

int pr__perfdata_tracing_data(const struct perf_event_attr *const *attrs, size_t nr,
			      char **buf, size_t *len, const struct pr_logger *lg)
{
	struct tracepoint *tps = calloc(nr ? nr : 1, sizeof(*tps));
	const char *root = tracefs_root();
	size_t n = 0;
	FILE *out;
	int err;

	*buf = NULL;
	*len = 0;
	if (!tps)
		return -ENOMEM;
	for (size_t i = 0; i < nr; i++)
		if (attrs[i]->type == PERF_TYPE_TRACEPOINT)
			tps[n++].id = attrs[i]->config;
	if (!n) {
		free(tps);
		return 0;
	}
	err = root ? find_tracepoints(root, tps, n) : -ENODEV;
	if (err) {
		pr__log(lg, PR_LOG_WARN,
			"the tracepoints' formats could not be read from tracefs (%s), and "
			"perf's tools refuse a file of tracepoints without them; mount tracefs "
			"on /sys/kernel/tracing ('mount -t tracefs nodev /sys/kernel/tracing') "
			"before writing the file", root ? strerror(-err) : "not mounted");
		free(tps);
		return err;
	}
	qsort(tps, n, sizeof(*tps), cmp_tracepoint);
	out = open_memstream(buf, len);
	if (!out) {
		free(tps);
		return -ENOMEM;
	}
	err = put_tracing_data(out, root, tps, n);
	if (fclose(out) && !err)
		err = -ENOMEM;
	free(tps);
	if (err) {
		free(*buf);
		*buf = NULL;
		*len = 0;
	}
	return err;
}
