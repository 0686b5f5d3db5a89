/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The unwind-quality report (report --quality, and the live summary's
 * short form): stacks that ended early by binary and reason, and binaries
 * whose frames nothing names, each with its remedy.  The remedies name
 * the distribution's debug package where its package database says which
 * package installed the file (Debian's and Ubuntu's dpkg: PKG-dbgsym,
 * libc6-dbg for libc6), the build-id path the debug file goes to, and
 * debuginfod.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"
#include "quality.h"

/* Rows' reasons: how stacks end (enum pr_stack_end), frames unnamed,
 * stacks the capture thread's copy cut too short (pipeline.h), and stacks
 * whose copy the kernel ended before the size asked for. */
#define WHY_UNNAMED PR_END_MAX
#define WHY_CUT_SHORT (PR_END_MAX + 1)
#define WHY_KERNEL_SHORT (PR_END_MAX + 2)

struct row {
	const struct pr_dso *dso;    /* NULL: no file mapping */
	char process[16];            /* for code in no file: whose */
	uint8_t why;
	uint64_t n;
};

struct ds_quality {
	struct row *rows;
	size_t nr, cap;
	uint64_t samples, ended_early, joined;
	uint64_t frames, unnamed;
	uint64_t stack_size;
	uint32_t max_depth;
};

struct ds_quality *ds_quality_new(uint64_t stack_size, uint32_t max_depth)
{
	struct ds_quality *q = calloc(1, sizeof(*q));

	if (q) {
		q->stack_size = stack_size;
		q->max_depth = max_depth ? max_depth : PR_UNWIND_DEFAULT_DEPTH;
	}
	return q;
}

void ds_quality_free(struct ds_quality *q)
{
	if (!q)
		return;
	free(q->rows);
	free(q);
}

/* Whether a frame's file is one (a mapped file, not anonymous memory). */
static bool is_file(const struct pr_dso *dso)
{
	const char *path = dso ? pr_dso_path(dso) : NULL;

	return path && path[0] == '/';
}

/* Whether two rows' files are the same: the same object of one model,
 * or, from two workers' models, the same path. */
static bool same_file(const struct pr_dso *a, const struct pr_dso *b)
{
	const char *pa, *pb;

	if (a == b)
		return true;
	pa = a ? pr_dso_path(a) : NULL;
	pb = b ? pr_dso_path(b) : NULL;
	return pa && pb && !strcmp(pa, pb);
}

/* Add `n` to the row of (dso, process name, why). */
static int count_n(struct ds_quality *q, const struct pr_dso *dso, const char *name,
		   unsigned why, uint64_t n)
{
	struct row *r;

	for (size_t i = 0; i < q->nr; i++) {
		r = &q->rows[i];
		if (r->why == why && same_file(r->dso, dso) && !strcmp(r->process, name)) {
			r->n += n;
			return 0;
		}
	}
	if (ds_reserve(&q->rows, &q->cap, q->nr + 1, sizeof(*q->rows), 16))
		return -ENOMEM;
	r = &q->rows[q->nr++];
	*r = (struct row){ .dso = dso, .why = (uint8_t)why, .n = n };
	snprintf(r->process, sizeof(r->process), "%s", name);
	return 0;
}

static int count(struct ds_quality *q, const struct pr_dso *dso, const char *process,
		 unsigned why)
{
	char name[16] = "";

	/* Code in no file is told apart by the process it is in. */
	if (!is_file(dso))
		snprintf(name, sizeof(name), "%s", process ? process : "?");
	return count_n(q, dso, name, why, 1);
}

int ds_quality_merge(struct ds_quality *q, const struct ds_quality *src)
{
	q->samples += src->samples;
	q->ended_early += src->ended_early;
	q->joined += src->joined;
	q->frames += src->frames;
	q->unnamed += src->unnamed;
	for (size_t i = 0; i < src->nr; i++)
		if (count_n(q, src->rows[i].dso, src->rows[i].process, src->rows[i].why,
			    src->rows[i].n))
			return -ENOMEM;
	return 0;
}

/* Why `st`, which did not reach its outermost frame, ended. */
static unsigned why_ended(const struct ds_quality *q, const struct pr_record *rec,
			  const struct pr_stack *st, bool cut_short)
{
	if (cut_short)
		return WHY_CUT_SHORT;
	/* The copy ran out, but the kernel read less than it was asked
	 * for: it stopped at a page it could not read without faulting. */
	if (st->end == PR_END_TRUNCATED && q->stack_size && rec->u.sample.stack_dyn_size < q->stack_size)
		return WHY_KERNEL_SHORT;
	return st->end;
}

int ds_quality_add(struct ds_quality *q, const struct pr_record *rec, const struct pr_stack *st,
		   struct pr_symbolizer *sym, const char *process, bool cut_short)
{
	uint32_t pid = rec->pid;
	int err = 0;

	q->samples++;
	for (size_t i = st->nr_kernel; i < st->nr; i++)
		if (st->frames[i].flags & PR_FRAME_JOINED) {
			q->joined++;
			break;
		}
	if (st->end != PR_END_OUTERMOST) {
		const struct pr_dso *dso = st->nr > st->nr_kernel ? st->frames[st->nr - 1].dso
								   : NULL;

		q->ended_early++;
		err = count(q, dso, process, why_ended(q, rec, st, cut_short));
	}
	for (size_t i = st->nr_kernel; sym && !err && i < st->nr; i++) {
		struct pr_symbol s;

		q->frames++;
		if (pr_symbolizer_symbolize(sym, pid, &st->frames[i], &s) || s.name || s.nr)
			continue;
		q->unnamed++;
		err = count(q, st->frames[i].dso, process, WHY_UNNAMED);
	}
	return err;
}

/* ---- remedies ---- */

/* Whether dpkg's file list `name` (in `dir`) has a line "path" or "alt". */
static bool list_has(int dir, const char *name, const char *path, const char *alt)
{
	size_t cap = 0, len = 1, plen = strlen(path), alen = strlen(alt);
	char *buf = NULL, *nb, probe[4200];
	bool found = false;
	ssize_t n = 1;
	int fd = openat(dir, name, O_RDONLY | O_CLOEXEC);

	if (fd < 0)
		return false;
	/* The whole list, a newline before it and one after. */
	while (n > 0) {
		if (len + 65536 + 2 > cap) {
			nb = realloc(buf, cap = 2 * cap + 65536 + 2);
			if (!nb)
				break;
			buf = nb;
		}
		buf[0] = '\n';
		n = read(fd, buf + len, cap - len - 2);
		if (n > 0)
			len += (size_t)n;
	}
	close(fd);
	if (buf && !n) {
		buf[len++] = '\n';
		snprintf(probe, sizeof(probe), "\n%s\n", path);
		found = plen < sizeof(probe) - 2 && memmem(buf, len, probe, plen + 2);
		snprintf(probe, sizeof(probe), "\n%s\n", alt);
		found = found || (alen < sizeof(probe) - 2 && memmem(buf, len, probe, alen + 2));
	}
	free(buf);
	return found;
}

/*
 * The package whose dpkg file list has `path` (or its /usr-merged twin),
 * into pkg; false when none does or there is no dpkg.  The lists named
 * like the file go first ("libstdc++6:amd64.list" for libstdc++.so.6),
 * the rest after: a whole scan reads every list on the system, a few
 * milliseconds that every run's summary would otherwise pay.
 */
static bool dpkg_owner(const char *path, char *pkg, size_t len)
{
	const char *base = strrchr(path, '/') ? strrchr(path, '/') + 1 : path;
	size_t stem = strcspn(base, ".-_");
	DIR *d = opendir("/var/lib/dpkg/info");
	char alt[4096];
	bool found = false;

	if (!d)
		return false;
	if (!strncmp(path, "/usr/", 5))
		snprintf(alt, sizeof(alt), "%s", path + 4);
	else
		snprintf(alt, sizeof(alt), "/usr%s", path);
	for (int pass = 0; pass < 2 && !found; pass++) {
		struct dirent *e;

		rewinddir(d);
		while (!found && (e = readdir(d))) {
			size_t n = strlen(e->d_name);
			bool named = stem && !strncmp(e->d_name, base, stem);

			if (n < 6 || strcmp(e->d_name + n - 5, ".list") || named != !pass ||
			    !list_has(dirfd(d), e->d_name, path, alt))
				continue;
			found = true;
			/* "zlib1g:amd64.list" -> "zlib1g" */
			snprintf(pkg, len, "%.*s", (int)(n - 5), e->d_name);
			pkg[strcspn(pkg, ":")] = 0;
		}
	}
	closedir(d);
	return found;
}

/* The build-id path a debug package installs the file's debug file at. */
static void debug_path(const struct pr_dso *dso, char *buf, size_t len)
{
	const uint8_t *id;
	size_t n = dso ? pr_dso_build_id(dso, &id) : 0, at;

	buf[0] = 0;
	if (n < 2)
		return;
	at = (size_t)snprintf(buf, len, "/usr/lib/debug/.build-id/%02x/", id[0]);
	for (size_t i = 1; i < n && at + 3 < len; i++)
		at += (size_t)snprintf(buf + at, len - at, "%02x", id[i]);
	snprintf(buf + at, len - at, ".debug");
}

/* The distribution's debuginfod server, from /etc/os-release's ID. */
static const char *debuginfod_server(void)
{
	static const struct {
		const char *id, *url;
	} known[] = {
		{ "debian", "https://debuginfod.debian.net" },
		{ "ubuntu", "https://debuginfod.ubuntu.com" },
		{ "fedora", "https://debuginfod.fedoraproject.org" },
		{ "arch", "https://debuginfod.archlinux.org" },
	};
	char line[256];
	FILE *f = fopen("/etc/os-release", "re");
	const char *url = NULL;

	while (f && !url && fgets(line, sizeof(line), f)) {
		line[strcspn(line, "\n")] = 0;
		for (size_t i = 0; i < sizeof(known) / sizeof(known[0]) && !url; i++)
			if (!strncmp(line, "ID=", 3) && !strcmp(line + 3, known[i].id))
				url = known[i].url;
	}
	if (f)
		fclose(f);
	return url;
}

/* What installs the debug file of `dso`, when its package is known. */
static void debug_package(const struct pr_dso *dso, char *buf, size_t len)
{
	char pkg[256], where[128];

	buf[0] = 0;
	debug_path(dso, where, sizeof(where));
	/* Installed already: nothing to install. */
	if (*where && !access(where, R_OK))
		return;
	if (!is_file(dso) || !dpkg_owner(pr_dso_path(dso), pkg, sizeof(pkg)))
		return;
	/* Debian's libc ships its debug files as libc6-dbg. */
	snprintf(buf, len, "apt-get install %s%s (the distribution's debug archive%s%s)", pkg,
		 strcmp(pkg, "libc6") ? "-dbgsym" : "-dbg", *where ? "; it installs " : "",
		 where);
}

static void remedy(const struct ds_quality *q, const struct row *r, char *buf, size_t len)
{
	char pkg[512];

	switch (r->why) {
	case PR_END_TRUNCATED:
		if (q->stack_size && q->stack_size < 65528)
			snprintf(buf, len, "the %" PRIu64 "-byte stack copy ran out here: a larger "
				 "--stack-size (up to 65528)", q->stack_size);
		else
			snprintf(buf, len, "the stack copy ran out here, at the kernel's largest "
				 "(65528 bytes): deeper than any copy");
		return;
	case PR_END_NO_UNWIND_INFO:
		debug_package(r->dso, pkg, sizeof(pkg));
		if (is_file(r->dso) && access(pr_dso_path(r->dso), R_OK))
			snprintf(buf, len, "the file was not found here: a copy of it (or of its "
				 "debug file) by build-id in a --debug-dir");
		else
			snprintf(buf, len, "no unwind information for this code: %s%srebuild "
				 "it with -fasynchronous-unwind-tables (assembly: CFI "
				 "directives); frame pointers are followed where there is none",
				 pkg, *pkg ? ", whose .debug_frame may have it, or " : "");
		return;
	case PR_END_NO_MAPPING:
		snprintf(buf, len, "code in no file (JIT) that frame pointers do not lead out of: "
			 "node --perf-basic-prof, python3.12 -X perf or the JVM's perf-map-agent "
			 "write /tmp/perf-PID.map, and keep frame pointers");
		return;
	case PR_END_DEPTH:
		snprintf(buf, len, "deeper than --max-depth %u: raise it (up to 1024)", q->max_depth);
		return;
	case PR_END_ERROR:
		snprintf(buf, len, "the unwinder could not go on (-v says why): please report "
			 "it with the capture");
		return;
	case PR_END_NO_USER:
		snprintf(buf, len, "no user registers (kernel threads): -k shows their kernel "
			 "stacks");
		return;
	case WHY_KERNEL_SHORT:
		snprintf(buf, len, "the kernel copied less of the stack than the %" PRIu64 " bytes "
			 "asked: the next page was not in memory when the sample was taken (a "
			 "frame just pushed onto a new page, or one swapped out); a larger "
			 "--stack-size does not help", q->stack_size);
		return;
	case WHY_CUT_SHORT:
		snprintf(buf, len, "copied only up to where this thread's stacks had ended "
			 "before; it also runs on stacks carved from its own (coroutines), and is "
			 "copied whole since");
		return;
	case WHY_UNNAMED: {
		const char *server = debuginfod_server();

		debug_package(r->dso, pkg, sizeof(pkg));
		if (!is_file(r->dso))
			snprintf(buf, len, "JIT code without a perf map: node --perf-basic-prof, "
				 "python3.12 -X perf, the JVM's perf-map-agent");
		else if (*pkg)
			snprintf(buf, len, "stripped; its debug symbols: %s, or DEBUGINFOD_URLS="
				 "%s to fetch them", pkg, server ? server : "(a debuginfod server)");
		else
			snprintf(buf, len, "no symbols: build it with -g, or keep its debug "
				 "file and pass --debug-dir; DEBUGINFOD_URLS=%s fetches a "
				 "distribution's", server ? server : "(a debuginfod server)");
		return;
	}
	default:
		buf[0] = 0;
	}
}

static const char *why_name(unsigned why)
{
	switch (why) {
	case PR_END_NO_UNWIND_INFO:
		return "no unwind info";
	case PR_END_NO_MAPPING:
		return "JIT, no way out";
	case WHY_UNNAMED:
		return "no symbols";
	case WHY_CUT_SHORT:
		return "cut short";
	case WHY_KERNEL_SHORT:
		return "page missing";
	default:
		return pr_stack_end_name((enum pr_stack_end)why);
	}
}

static const char *where(const struct row *r, char *buf, size_t len)
{
	if (is_file(r->dso))
		return pr_dso_path(r->dso);
	snprintf(buf, len, "[code in no file] of %s", r->process);
	return buf;
}

static int by_count(const void *a, const void *b)
{
	const struct row *x = *(const struct row *const *)a, *y = *(const struct row *const *)b;

	return (x->n < y->n) - (x->n > y->n);
}

/* The rows of one table of at least `permille` of its total, most
 * first, into `out`: their number. */
static size_t table(const struct ds_quality *q, bool unnamed, unsigned permille,
		    const struct row **out)
{
	uint64_t total = unnamed ? q->frames : q->samples;
	size_t n = 0;

	for (size_t i = 0; i < q->nr; i++)
		if ((q->rows[i].why == WHY_UNNAMED) == unnamed &&
		    q->rows[i].n * 1000 >= total * permille)
			out[n++] = &q->rows[i];
	qsort(out, n, sizeof(*out), by_count);
	return n;
}

size_t ds_quality_print(const struct ds_quality *q, FILE *out, const char *prefix,
			size_t max_rows, unsigned permille)
{
	const struct row **rows = calloc(q->nr + 1, sizeof(*rows));
	char buf[1024], at[64];
	size_t written = 0;

	if (!rows)
		return 0;
	for (int unnamed = 0; unnamed < 2; unnamed++) {
		uint64_t total = unnamed ? q->frames : q->samples;
		size_t n = table(q, unnamed, permille, rows);

		if (max_rows && n > max_rows)
			n = max_rows;
		if (!n)
			continue;
		fprintf(out, "%s%s\n", prefix, unnamed ? "frames nothing names, by binary:"
						       : "stacks that ended early, by binary and why:");
		for (size_t i = 0; i < n; i++) {
			remedy(q, rows[i], buf, sizeof(buf));
			fprintf(out, "%s  %8" PRIu64 " %5.1f%%  %-15s %s\n%s      %s\n", prefix,
				rows[i]->n, 100.0 * (double)rows[i]->n / (double)total,
				why_name(rows[i]->why), where(rows[i], at, sizeof(at)), prefix,
				buf);
			written++;
		}
	}
	free(rows);
	return written;
}

static int session_sample(void *ctx, const struct pr_sink_sample *smp)
{
	return ds_quality_add(ctx, smp->rec, smp->st, smp->sym, smp->process, smp->cut_short);
}

static void *session_part(void *ctx)
{
	const struct ds_quality *q = ctx;

	return ds_quality_new(q->stack_size, q->max_depth);
}

static int session_merge(void *ctx, void *part)
{
	int err = ctx && ds_quality_merge(ctx, part) ? -ENOMEM : 0;

	ds_quality_free(part);
	return err;
}

void ds_quality_session(struct ds_quality *q, struct pr_sink *out)
{
	*out = (struct pr_sink){
		.sz = sizeof(*out), .ctx = q, .sample = session_sample,
		.part_new = session_part, .part_merge = session_merge,
	};
}
