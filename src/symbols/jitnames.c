/* SPDX-License-Identifier: Apache-2.0 */
/*
 * JIT code named from its process's jitdump (model/jitdump.h), where the
 * process has one (model/jitfind.c finds it among its mappings).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "model/jitdump.h"
#include "model/model.h"
#include "perfdata/perfdata.h"
#include "symbols/symbolizer.h"

/* A process's jitdump, and its resolved addresses. */
struct sym_jitdump {
	uint32_t pid;
	uint32_t proc_serial;
	uint64_t maps_generation;    /* of the mappings last searched for it */
	/* The file it mapped, once found: its path, device and inode (the
	 * model may forget the mapping before the end of the run). */
	char *path;
	uint32_t maj, min;
	uint64_t ino;
	bool final_read;             /* read once more at the end of the run */
	bool carried;                /* a copy from the capture: no file read */
	struct pr_jitdump jd;
	uint64_t read_at;            /* CLOCK_MONOTONIC ns; 0: never */
	/* Resolved addresses, each for the codes known then (jd.nr_codes:
	 * a later load may cover it), with their names. */
	struct pr_hashmap results;   /* hash -> struct sym_result (chained) */
	struct pr_arena result_names;
};

/* The jitdump among process `pid`'s mappings, looked for again only
 * when they changed; NULL when none. */
static const struct pr_dso *find_marker(struct pr_symbolizer *s, struct sym_jitdump *j)
{
	const struct pr_proc *p = pr__model_proc(s->model, j->pid, false);

	if (!p || p->generation == j->maps_generation)
		return NULL;
	j->maps_generation = p->generation;
	return pr__jitdump_marker(p, j->pid);
}

static void read_jitdump(struct pr_symbolizer *s, struct sym_jitdump *j)
{
	struct pr__root_info ri;
	const unsigned char *carried;
	size_t n;
	int fd;

	j->read_at = pr__monotonic_ns();
	if (j->carried)
		return;
	if (s->live && !pr__roots_get(s->roots, j->pid, s->now, &ri)) {
		/* Through the root the capture thread kept while the process
		 * lived: it may be gone by now, a container's /tmp with it. */
		ri.dump = j->path;
		fd = pr__root_open(&ri, PR_JIT_DUMP, j->pid, (off_t)PR_JITDUMP_MAX, &s->lg);
		if (ri.root >= 0)
			close(ri.root);
	} else if (!s->live && !pr__perfdata_jit_find(s->carried, s->carried_len, j->pid,
						       PR_JIT_DUMP, s->now, &carried, &n)) {
		/* The capture's copy, made as the recording ended. */
		j->carried = true;
		pr__jitdump_feed(&j->jd, carried, n, j->path, &s->lg);
		return;
	} else {
		fd = pr__jitdump_open(j->pid, s->live, j->path, j->maj, j->min, j->ino, &s->lg);
	}
	if (fd < 0)
		return;
	pr__jitdump_read_fd(&j->jd, fd, j->path, &s->lg);
	close(fd);
}

static void jitdump_forget(struct sym_jitdump *j)
{
	pr__hashmap_free(&j->results);
	pr__arena_free(&j->result_names);
}

/* Forget process `pid`'s jitdump of an earlier process with the pid. */
static void jitdump_reset(struct sym_jitdump *j, uint32_t serial)
{
	jitdump_forget(j);
	pr__jitdump_clear(&j->jd);
	free(j->path);
	j->path = NULL;
	j->maps_generation = 0;
	j->final_read = false;
	j->carried = false;
	j->read_at = 0;
	j->proc_serial = serial;
}

static struct sym_jitdump *jitdump_of(struct pr_symbolizer *s, uint32_t pid, uint32_t serial)
{
	struct sym_jitdump *j = pr__hashmap_get(&s->jitdumps, pid);

	if (!j) {
		j = calloc(1, sizeof(*j));
		if (!j || pr__hashmap_put(&s->jitdumps, pid, j)) {
			free(j);
			return NULL;
		}
		j->pid = pid;
		j->proc_serial = serial;
	} else if (serial && j->proc_serial != serial) {
		/* Another process now has the pid (or it exec'd); one not
		 * known yet (a carried copy's) is this one. */
		if (j->proc_serial)
			jitdump_reset(j, serial);
		j->proc_serial = serial;
	}
	if (!j->path) {
		const struct pr_dso *d = find_marker(s, j);

		if (!d)
			return j;
		j->path = strdup(d->path);
		if (!j->path)
			return NULL;
		j->maj = d->maj;
		j->min = d->min;
		j->ino = d->ino;
		read_jitdump(s, j);
	}
	return j;
}

void pr__sym_jitdump_free(struct sym_jitdump *j)
{
	if (!j)
		return;
	jitdump_reset(j, 0);
	free(j);
}

bool pr__sym_jitdump_forget(struct sym_jitdump *j, bool gone)
{
	jitdump_forget(j);
	/* Its process gone, what was read goes; where it is stays, for the
	 * end of the run.  A copy carried with the capture is all there is. */
	if (gone && !j->carried)
		pr__jitdump_clear(&j->jd);
	return !gone || j->path;
}

/* The name of `addr` in code `c`, made once per (address, codes known). */
static struct sym_result *result_of(struct pr_symbolizer *s, struct sym_jitdump *j,
				    const struct jd_code *c, uint64_t addr)
{
	uint64_t k = pr__hash_mix(j->jd.nr_codes, addr);
	struct pr_sym_func *fn;
	struct sym_result *r;
	const char *file;
	uint32_t line;

	for (r = pr__hashmap_get(&j->results, k); r; r = r->next)
		if (r->addr == addr && r->generation == j->jd.nr_codes)
			return r;
	r = pr__arena_alloc(&j->result_names, sizeof(*r));
	fn = pr__arena_alloc(&j->result_names, sizeof(*fn));
	if (!r || !fn)
		return NULL;
	memset(r, 0, sizeof(*r));
	memset(fn, 0, sizeof(*fn));
	r->addr = addr;
	r->generation = j->jd.nr_codes;
	r->next = pr__hashmap_get(&j->results, k);
	if (pr__hashmap_put(&j->results, k, r))
		return NULL;
	s->stats.resolved++;
	pr__sym_named(s, &r->sym, pr__arena_strdup(&j->result_names,
						   pr__jitdump_str(&j->jd, c->name)),
		      addr - c->addr, PR_SYM_JITDUMP);
	r->sym.module = j->path;
	/* Its source line, where the runtime wrote them and they are asked
	 * for: one function, the code's own. */
	file = s->no_lines ? NULL : pr__jitdump_line(&j->jd, c, addr, &line);
	if (file && r->sym.name) {
		fn->name = r->sym.name;
		fn->file = pr__arena_strdup(&j->result_names, file);
		fn->line = line;
		r->sym.funcs = fn;
		r->sym.nr = fn->file ? 1 : 0;
	}
	return r;
}

/* Name `ip` from what was read of j's jitdump into *out (no name when
 * nothing there covers it). */
static int name_from(struct pr_symbolizer *s, struct sym_jitdump *j, uint64_t ip,
		     struct pr_symbol *out)
{
	const struct jd_code *c = pr__jitdump_find(&j->jd, ip);
	struct sym_result *r;

	if (!c)
		return 0;
	r = result_of(s, j, c, ip);
	if (!r)
		return -ENOMEM;
	*out = r->sym;
	return 0;
}

int pr__sym_resolve_jitdump(struct pr_symbolizer *s, uint32_t pid, const struct pr_frame *f,
			    struct pr_symbol *out)
{
	struct sym_jitdump *j = jitdump_of(s, pid, f->proc_serial);

	memset(out, 0, sizeof(*out));
	if (!j)
		return -ENOMEM;
	if (!j->path)
		return 0;
	/* The runtime appends as it compiles: a miss may be new code. */
	if (!pr__jitdump_find(&j->jd, f->ip) && s->live &&
	    pr__monotonic_ns() - j->read_at >= s->perf_map_reread_ns)
		read_jitdump(s, j);
	return name_from(s, j, f->ip, out);
}

int pr__sym_resolve_jitdump_late(struct pr_symbolizer *s, uint32_t pid, uint64_t ip,
				 struct pr_symbol *out)
{
	struct sym_jitdump *j = pr__hashmap_get(&s->jitdumps, pid);

	memset(out, 0, sizeof(*out));
	if (!j || !j->path)
		return 0;
	if (!j->final_read) {
		j->final_read = true;
		read_jitdump(s, j);
	}
	return name_from(s, j, ip, out);
}

void pr__sym_jitdump_exited(struct pr_symbolizer *s, uint32_t pid)
{
	struct sym_jitdump *j = s ? pr__hashmap_get(&s->jitdumps, pid) : NULL;

	if (j && j->path && !j->final_read) {
		j->final_read = true;
		read_jitdump(s, j);
	}
}

int pr__sym_jitdump_carried(struct pr_symbolizer *s, uint32_t pid, const char *path,
			    const void *buf, size_t len)
{
	struct sym_jitdump *j = pr__hashmap_get(&s->jitdumps, pid);

	if (!j) {
		j = calloc(1, sizeof(*j));
		if (!j || pr__hashmap_put(&s->jitdumps, pid, j)) {
			free(j);
			return -ENOMEM;
		}
		j->pid = pid;
	}
	jitdump_reset(j, j->proc_serial);
	j->path = strdup(path);
	if (!j->path)
		return -ENOMEM;
	j->carried = true;
	return pr__jitdump_feed(&j->jd, buf, len, path, &s->lg);
}
