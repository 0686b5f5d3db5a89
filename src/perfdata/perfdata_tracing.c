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
 * Only the systems and formats of the file's tracepoints are copied, from
 * wherever pr_tracefs_path() finds tracefs.  Read back (a file of ours or
 * of perf record), the systems' formats decode the samples' payloads
 * (prtrace.h).
 */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base/base.h"
#include "perfdata/perfdata.h"
#include "prtrace.h"

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

/* A tracepoint's system and name. */
struct tracepoint {
	char sys[PR_EVENT_NAME_MAX], name[PR_EVENT_NAME_MAX];
};

/* The system and name of the tracepoint `attr` counts, as tracefs lists
 * it ("sched:sched_switch", perhaps with a modifier after): 0, or -ENOENT
 * when tracefs does not list its id. */
static int name_tracepoint(const struct perf_event_attr *attr, struct tracepoint *tp)
{
	struct pr_event_desc d;
	char *colon, *mod;

	if (pr_event_desc_from_attr(attr, &d))
		return -ENOENT;
	colon = strchr(d.name, ':');
	if (!colon)
		return -ENOENT;       /* "tracepoint ID": tracefs has no such id */
	*colon = '\0';
	mod = strchr(colon + 1, ':');
	if (mod)
		*mod = '\0';
	snprintf(tp->sys, sizeof(tp->sys), "%s", d.name);
	snprintf(tp->name, sizeof(tp->name), "%s", colon + 1);
	return 0;
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
			char path[PATH_MAX];

			if (k > i && !strcmp(tps[k].name, tps[k - 1].name))
				continue;
			err = pr__path_fmt(path, sizeof(path), "%s/events/%s/%s/format", root,
					   tps[k].sys, tps[k].name) ?
				put_file(out, path, 8) : -ENAMETOOLONG;
		}
		i = j;
	}
	return err;
}

static int put_tracing_data(FILE *out, const char *root, const struct tracepoint *tps,
			    size_t nr)
{
	static const char magic[] = { 23, 8, 68, 't', 'r', 'a', 'c', 'i', 'n', 'g' };
	static const char *const headers[] = { "header_page", "header_event" };
	uint32_t page = (uint32_t)sysconf(_SC_PAGESIZE), zero32 = 0;
	uint64_t zero64 = 0;
	char path[PATH_MAX];
	uint8_t big_endian = 0, long_size = sizeof(long);
	int err = 0;

	fwrite(magic, 1, sizeof(magic), out);
	fwrite("0.6", 1, 4, out);
	fwrite(&big_endian, 1, 1, out);
	fwrite(&long_size, 1, 1, out);
	fwrite(&page, 4, 1, out);
	/* The layout of the ring pages and of an event's header. */
	for (size_t i = 0; !err && i < PR_ARRAY_SIZE(headers); i++) {
		fwrite(headers[i], 1, strlen(headers[i]) + 1, out);
		err = pr__path_fmt(path, sizeof(path), "%s/events/%s", root, headers[i]) ?
			put_file(out, path, 8) : -ENAMETOOLONG;
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
	PR_OPTS(pr_event_lookup_opts, lookup, .log = lg->fn, .log_ctx = lg->ctx);
	struct tracepoint *tps = calloc(nr ? nr : 1, sizeof(*tps));
	char root[PATH_MAX];
	size_t n = 0;
	FILE *out;
	int err = 0;

	*buf = NULL;
	*len = 0;
	if (!tps)
		return -ENOMEM;
	for (size_t i = 0; !err && i < nr; i++)
		if (attrs[i]->type == PERF_TYPE_TRACEPOINT)
			err = name_tracepoint(attrs[i], &tps[n++]);
	if (!n) {
		free(tps);
		return 0;
	}
	if (!err)
		err = pr_tracefs_path(root, sizeof(root), &lookup);
	if (err) {
		pr__log(lg, PR_LOG_WARN,
			"the tracepoints' formats could not be read from tracefs (%s), and "
			"perf's tools refuse a file of tracepoints without them; mount tracefs "
			"on /sys/kernel/tracing ('mount -t tracefs nodev /sys/kernel/tracing') "
			"before writing the file", strerror(-err));
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

/* ---- reading ---- */

struct trace_cursor {
	const unsigned char *p, *end;
	bool bad;
};

static const unsigned char *take(struct trace_cursor *c, uint64_t n)
{
	const unsigned char *at = c->p;

	if (c->bad || n > (uint64_t)(c->end - c->p)) {
		c->bad = true;
		return NULL;
	}
	c->p += n;
	return at;
}

static uint64_t take_int(struct trace_cursor *c, size_t size)
{
	const unsigned char *at = take(c, size);
	uint64_t v = 0;

	if (at)
		memcpy(&v, at, size);         /* little-endian, as checked */
	return v;
}

static const char *take_string(struct trace_cursor *c)
{
	const unsigned char *nul;
	const char *s = (const char *)c->p;

	if (c->bad || !(nul = memchr(c->p, '\0', (size_t)(c->end - c->p)))) {
		c->bad = true;
		return NULL;
	}
	c->p = nul + 1;
	return s;
}

/* "NAME\0" then a u64 size and that many bytes: skipped. */
static void skip_named(struct trace_cursor *c, const char *name)
{
	const char *got = take_string(c);

	if (got && strcmp(got, name))
		c->bad = true;
	take(c, take_int(c, 8));
}

int pr__perfdata_read_tracing(const unsigned char *p, size_t len, struct pr_tp_formats **out)
{
	static const unsigned char magic[] = { 23, 8, 68, 't', 'r', 'a', 'c', 'i', 'n', 'g' };
	struct trace_cursor c = { p, p + len, false };
	struct pr_tp_formats *t;
	const unsigned char *m;
	uint32_t n;
	int err = 0;

	*out = NULL;
	m = take(&c, sizeof(magic));
	if (!m || memcmp(m, magic, sizeof(magic)) || !take_string(&c))
		return -EBADMSG;
	/* Big-endian, or a long that is not 8 bytes: not an x86-64 file. */
	if (take_int(&c, 1) != 0 || take_int(&c, 1) != 8)
		return -EBADMSG;
	take(&c, 4);                                  /* page size */
	skip_named(&c, "header_page");
	skip_named(&c, "header_event");
	n = (uint32_t)take_int(&c, 4);                /* ftrace's own formats */
	for (uint32_t i = 0; i < n && !c.bad; i++)
		take(&c, take_int(&c, 8));
	n = (uint32_t)take_int(&c, 4);
	if (c.bad)
		return -EBADMSG;
	t = pr_tp_formats_new();
	if (!t)
		return -ENOMEM;
	for (uint32_t i = 0; i < n && !c.bad && !err; i++) {
		const char *sys = take_string(&c);
		uint32_t k = (uint32_t)take_int(&c, 4);

		for (uint32_t j = 0; j < k && !c.bad && !err; j++) {
			uint64_t size = take_int(&c, 8);
			const unsigned char *text = take(&c, size);

			/* A format that does not parse leaves its tracepoint's
			 * fields unprinted, the others' not. */
			if (text && pr_tp_formats_add(t, sys, (const char *)text, (size_t)size) ==
					    -ENOMEM)
				err = -ENOMEM;
		}
	}
	/* What follows (kallsyms, printk formats, saved command lines) is
	 * not needed to print fields. */
	if (c.bad && !err)
		err = -EBADMSG;
	if (err) {
		pr_tp_formats_free(t);
		return err;
	}
	*out = t;
	return 0;
}
