/* SPDX-License-Identifier: Apache-2.0 */
/*
 * JIT code: /tmp/perf-PID.map, "START SIZE name" per line in hex, as
 * Node's --perf-basic-prof, CPython's -X perf and others write it.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "perfdata/perfdata.h"
#include "symbols/symbolizer.h"

static void perf_map_clear(struct sym_perf_map *pm)
{
	pr__symtab_free(&pm->syms);
	pr__arena_free(&pm->names);
	pm->found = false;
}

int pr__perf_map_open(uint32_t pid, bool live, const struct pr_logger *lg)
{
	char path[64], proc[32];
	struct stat owner;
	int fd;

	snprintf(path, sizeof(path), "/tmp/perf-%u.map", pid);
	/* Non-blocking and regular only: a FIFO put there must not hang the
	 * reader. */
	fd = pr__open_target_file(live ? pid : 0, path, NULL);
	if (fd < 0 && fd != -EINVAL)
		return fd;
	snprintf(proc, sizeof(proc), "/proc/%u", pid);
	/* Gone: a file only root owns is taken. */
	if (!live || stat(proc, &owner))
		owner.st_uid = (uid_t)-1;
	return pr__jit_file_checked(fd, path, pid, live, owner.st_uid, PR_PERF_MAP_MAX, lg);
}

/* A live process's map opened: through what the capture thread kept of
 * it while it lived, if anything (it may be gone by now), else by its
 * path.  `*exited`: the process had exited then. */
static int open_live_map(struct pr_symbolizer *s, struct sym_perf_map *pm, bool *exited)
{
	struct pr__root_info ri;
	int fd;

	*exited = false;
	if (pr__roots_get(s->roots, pm->pid, s->now, &ri))
		return pr__perf_map_open(pm->pid, true, &s->lg);
	*exited = ri.exited;
	fd = pr__root_open(&ri, PR_JIT_PERF_MAP, pm->pid, PR_PERF_MAP_MAX, &s->lg);
	if (ri.root >= 0)
		close(ri.root);
	return fd;
}

/* Whether a live process's map has grown (or shrunk) since it was read:
 * a JIT writes it as it compiles, so a miss may be code named since. */
static bool map_changed(struct pr_symbolizer *s, struct sym_perf_map *pm)
{
	struct stat st;
	bool exited, changed;
	int fd = open_live_map(s, pm, &exited);

	if (fd < 0)
		return false;
	changed = !fstat(fd, &st) && (uint64_t)st.st_size != pm->size;
	close(fd);
	return changed;
}

/* Read (again) a process's perf map: "START SIZE name" per line, in hex;
 * lines that do not parse are skipped. */
static void read_perf_map(struct pr_symbolizer *s, struct sym_perf_map *pm)
{
	char path[128], line[4096];
	FILE *f = NULL;
	size_t bad = 0, n;
	const unsigned char *carried;
	struct stat st;
	int fd;

	pm->read_at = pm->checked_at = pr__monotonic_ns();
	pm->reads++;
	snprintf(path, sizeof(path), "/tmp/perf-%u.map", pm->pid);
	if (s->live) {
		fd = open_live_map(s, pm, &pm->read_exited);
		if (fd >= 0 && !fstat(fd, &st))
			pm->size = (uint64_t)st.st_size;
	} else if (!pr__perfdata_jit_find(s->carried, s->carried_len, pm->pid,
						       PR_JIT_PERF_MAP, s->now, &carried, &n)) {
		/* The capture's copy, made as the recording ended (an empty
		 * one names nothing). */
		fd = -1;
		if (!n) {
			perf_map_clear(pm);
			pm->found = true;
			return;
		}
		f = fmemopen((void *)carried, n, "r");
	} else {
		fd = pr__perf_map_open(pm->pid, s->live, &s->lg);
	}
	if (fd >= 0 && !(f = fdopen(fd, "re")))
		close(fd);
	if (!f)
		return;
	perf_map_clear(pm);
	pm->found = true;
	while (fgets(line, sizeof(line), f)) {
		unsigned long long start, size;
		int used = 0;
		char *name;

		line[strcspn(line, "\n")] = '\0';
		if (sscanf(line, "%llx %llx %n", &start, &size, &used) < 2 || !used ||
		    !line[used] || start + size < start) {
			bad++;
			continue;
		}
		name = (char *)pr__arena_strdup(&pm->names, line + used);
		if (!name || pr__symtab_add(&pm->syms, start, size, name, PR_SYM_GLOBAL))
			break;
	}
	fclose(f);
	pr__symtab_finish(&pm->syms);
	if (bad)
		pr__log(&s->lg, PR_LOG_INFO, "%s: %zu lines not of the form 'START SIZE name' "
			"skipped", path, bad);
}

/* The perf map of process `serial` (pr_frame's proc_serial) of `pid`. */
static struct sym_perf_map *perf_map_of(struct pr_symbolizer *s, uint32_t pid,
					uint32_t serial)
{
	struct sym_perf_map *pm = pr__hashmap_get(&s->perf_maps, pid);

	if (pm) {
		/* Another process now has the pid (or it exec'd): its map
		 * is its own, and none at all says nothing of the last one's. */
		if (serial && pm->proc_serial != serial) {
			if (pm->proc_serial) {
				perf_map_clear(pm);
				read_perf_map(s, pm);
			}
			pm->proc_serial = serial;
		}
		return pm;
	}
	pm = calloc(1, sizeof(*pm));
	if (!pm || pr__hashmap_put(&s->perf_maps, pid, pm)) {
		free(pm);
		return NULL;
	}
	pm->pid = pid;
	pm->proc_serial = serial;
	if (asprintf(&pm->module, "/tmp/perf-%u.map", pid) < 0)
		pm->module = NULL;
	read_perf_map(s, pm);
	return pm;
}

void pr__symbolizer_use_roots(struct pr_symbolizer *s, struct pr__roots *roots)
{
	s->roots = roots;
}

void pr__symbolizer_use_carried(struct pr_symbolizer *s, const void *sec, size_t len)
{
	s->carried = sec;
	s->carried_len = len;
}

void pr__symbolizer_at(struct pr_symbolizer *s, uint64_t time)
{
	s->now = time;
}

void pr__sym_perf_map_forget(struct sym_perf_map *pm)
{
	pr__hashmap_free(&pm->results);
	pr__arena_free(&pm->result_names);
}

void pr__sym_perf_map_free(struct sym_perf_map *pm)
{
	if (!pm)
		return;
	pr__sym_perf_map_forget(pm);
	perf_map_clear(pm);
	free(pm->module);
	free(pm);
}

/* An address's result of the map's latest read, made when missing (NULL
 * when out of memory): a name of an older read stays with its results,
 * since profiles tell JIT code apart by it. */
static struct sym_result *result_of(struct pr_symbolizer *s, struct sym_perf_map *pm,
				    const struct pr_sym *sym, uint64_t ip)
{
	uint64_t k = pr__hash_mix(pm->reads, ip);
	struct sym_result *r;

	for (r = pr__hashmap_get(&pm->results, k); r; r = r->next)
		if (r->addr == ip && r->generation == pm->reads)
			return r;
	r = pr__arena_alloc(&pm->result_names, sizeof(*r));
	if (!r)
		return NULL;
	memset(r, 0, sizeof(*r));
	r->addr = ip;
	r->generation = pm->reads;
	r->next = pr__hashmap_get(&pm->results, k);
	if (pr__hashmap_put(&pm->results, k, r))
		return NULL;
	s->stats.resolved++;
	pr__sym_named(s, &r->sym, pr__arena_strdup(&pm->result_names, sym->name),
		      ip - sym->start, PR_SYM_PERF_MAP);
	r->sym.module = pm->module;
	return r;
}

int pr__sym_resolve_jit(struct pr_symbolizer *s, uint32_t pid, const struct pr_frame *f,
			struct pr_symbol *out)
{
	struct sym_perf_map *pm = perf_map_of(s, pid, f->proc_serial);
	uint64_t ip = f->ip;
	const struct pr_sym *sym;
	struct sym_result *r;

	if (!pm)
		return -ENOMEM;
	sym = pr__symtab_find(&pm->syms, ip);
	/* A JIT writes its map as it compiles: a miss may be new code, read
	 * at once when the map has changed (looked at every
	 * PERF_MAP_CHECK_NS), else every perf_map_reread_ns; and once the
	 * process has exited, its map is whole. */
	if (!sym && s->live) {
		uint64_t now = pr__monotonic_ns();
		bool check = now - pm->checked_at >= PERF_MAP_CHECK_NS;

		if (check)
			pm->checked_at = now;
		if (now - pm->read_at >= s->perf_map_reread_ns ||
		    (!pm->read_exited && pr__roots_exited(s->roots, pm->pid, s->now)) ||
		    (check && map_changed(s, pm))) {
			read_perf_map(s, pm);
			sym = pr__symtab_find(&pm->syms, ip);
		}
	}
	memset(out, 0, sizeof(*out));
	out->module = pm->module;
	if (!sym)
		return 0;
	/* Re-reading the map may rename an address: results are per read. */
	r = result_of(s, pm, sym, ip);
	if (!r)
		return -ENOMEM;
	*out = r->sym;
	return 0;
}

