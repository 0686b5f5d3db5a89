/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The profile: distinct stacks per thread with their counts, over
 * interned strings, mappings, functions and locations.
 *
 * A sample costs one hash of its (thread, frames) and, for a frame seen
 * before, one probe of the location table; only a new address goes to the
 * symbolizer, and only a new stack is stored.  All tables are arrays
 * indexed by number, so the writers can emit them in order.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "profile/profile.h"
#include "symbols/symbolizer.h"

struct prof_index {
	/* Each a 64-bit hash of an entry -> its index + 1; entries whose
	 * hashes collide are told apart by comparing them. */
	struct pr_hashmap mappings, functions, locations, threads, stacks, addr_table;
	/* Every address seen: what names it (location_of()), the address,
	 * for JIT code the name its perf map gave, and its location.
	 * Addresses with the same function, inlined chain and line share a
	 * location, so stacks are told apart by source line, not by
	 * instruction: their number levels off as a run goes on. */
	struct { uint64_t owner, addr, name; uint32_t loc; } *addrs;
	size_t nr_addrs, cap_addrs;
	uint32_t *scratch;           /* a stack's location indexes */
	size_t cap_scratch;
	/* The thread each tid was last found as, by tid % 64 (its index
	 * + 1, 0: none): samples come in runs of a few threads, whose names
	 * rarely change, and interning both names cost hundreds of
	 * instructions a sample. */
	uint32_t last_thread[64];
};

/* The entry with hash `h` that `eq` accepts: its index, or PROF_NONE. */
static uint32_t table_find(const struct pr_hashmap *t, uint64_t h,
			   bool (*eq)(const struct pr_profile *, uint32_t, const void *),
			   const struct pr_profile *p, const void *key)
{
	size_t it = 0;
	void *v;

	while ((v = pr__hashmap_next(t, h, &it)))
		if (eq(p, (uint32_t)((uintptr_t)v - 1), key))
			return (uint32_t)((uintptr_t)v - 1);
	return PROF_NONE;
}

/* Index entry `idx` under `h`: cannot fail after pr__hashmap_reserve(t, 1). */
static void table_set(struct pr_hashmap *t, uint64_t h, uint32_t idx)
{
	pr__hashmap_add(t, h, (void *)((uintptr_t)idx + 1));
}


/* ---- strings ---- */

uint32_t prof__intern(struct prof_strings *ss, const char *s)
{
	const char *copy;
	uint64_t h;
	size_t it = 0;
	void *v;

	if (!s)
		s = "";
	h = pr__hash_str(s);
	while ((v = pr__hashmap_next(&ss->index, h, &it)))
		if (!strcmp(ss->s[(uintptr_t)v - 1], s))
			return (uint32_t)((uintptr_t)v - 1);
	if (pr__hashmap_reserve(&ss->index, 1) || PR_ARRAY_RESERVE(ss->s, ss->cap, ss->nr + 1) ||
	    !(copy = pr__arena_strdup(&ss->arena, s)))
		return PROF_NONE;
	ss->s[ss->nr] = copy;
	pr__hashmap_add(&ss->index, h, (void *)((uintptr_t)ss->nr + 1));
	return ss->nr++;
}

/* ---- the profile ---- */

struct pr_profile *pr_profile_new(const struct pr_profile_opts *opts)
{
	struct pr_profile *p;
	int err;

	if (!PR_OPTS_VALID(opts)) {
		errno = EINVAL;
		return NULL;
	}
	p = calloc(1, sizeof(*p));
	if (!p || !(p->index = calloc(1, sizeof(*p->index))) ||
	    prof__intern(&p->strings, "") != 0) {
		pr_profile_free(p);
		errno = ENOMEM;
		return NULL;
	}
	p->freq = PR_OPTS_GET(opts, freq, 0);
	p->mode = (enum pr_profile_mode)PR_OPTS_GET(opts, mode, PR_PROFILE_CPU);
	p->period_is_ns = PR_OPTS_GET(opts, period_is_ns, false);
	p->off_cpu_min_ns = PR_OPTS_GET(opts, off_cpu_min_ns, 0);
	p->timeline = PR_OPTS_GET(opts, timeline, false);
	p->pprof_numeric_thread_labels = PR_OPTS_GET(opts, pprof_numeric_thread_labels, false);
	if (p->mode >= PR_PROFILE_MODE_MAX) {
		pr_profile_free(p);
		errno = EINVAL;
		return NULL;
	}
	p->log.fn = PR_OPTS_GET(opts, log, NULL);
	p->log.ctx = PR_OPTS_GET(opts, log_ctx, NULL);
	err = prof__events_init(p, opts);
	if (err) {
		pr_profile_free(p);
		errno = -err;
		return NULL;
	}
	return p;
}

void pr_profile_free(struct pr_profile *p)
{
	if (!p)
		return;
	if (p->index) {
		pr__hashmap_free(&p->index->stacks);
		pr__hashmap_free(&p->index->addr_table);
		pr__hashmap_free(&p->index->threads);
		pr__hashmap_free(&p->index->locations);
		pr__hashmap_free(&p->index->functions);
		pr__hashmap_free(&p->index->mappings);
		free(p->index->addrs);
		free(p->index->scratch);
		free(p->index);
	}
	prof__events_free(p);
	prof__offcpu_free(p->off);
	for (size_t i = 0; i < p->cap_timelines; i++)
		free(p->timelines[i].b);
	free(p->timelines);
	free(p->tags);
	free(p->ptags);
	free(p->frames);
	free(p->stacks);
	free(p->threads);
	free(p->locations);
	free(p->lines);
	free(p->functions);
	free(p->mappings);
	pr__hashmap_free(&p->strings.index);
	free(p->strings.s);
	pr__arena_free(&p->strings.arena);
	free(p);
}

int pr_profile_tag(struct pr_profile *p, const char *key, const char *value)
{
	uint32_t k, v;

	if (!p || !key || !*key || !value)
		return -EINVAL;
	k = prof__intern(&p->strings, key);
	v = prof__intern(&p->strings, value);
	if (k == PROF_NONE || v == PROF_NONE || PR_ARRAY_RESERVE(p->tags, p->cap_tags, p->nr_tags + 1))
		return -ENOMEM;
	p->tags[p->nr_tags].key = k;
	p->tags[p->nr_tags++].value = v;
	return 0;
}

const struct prof_ptag *prof__ptags_of(const struct pr_profile *p, uint32_t pid, uint32_t *nr)
{
	/* The first of pid's: the tags are sorted by pid. */
	uint32_t lo = (uint32_t)pr__lower_bound_u32(p->ptags, p->nr_ptags, sizeof(*p->ptags), pid);
	uint32_t end;

	for (end = lo; end < p->nr_ptags && p->ptags[end].pid == pid; end++)
		;
	*nr = end - lo;
	return *nr ? &p->ptags[lo] : NULL;
}

int pr_profile_process_tag(struct pr_profile *p, uint32_t pid, const char *key,
			   const char *value)
{
	const struct prof_ptag *run;
	uint32_t k, v, n, at;

	if (!p || !key || !*key || !value)
		return -EINVAL;
	k = prof__intern(&p->strings, key);
	v = prof__intern(&p->strings, value);
	if (k == PROF_NONE || v == PROF_NONE)
		return -ENOMEM;
	run = prof__ptags_of(p, pid, &n);
	at = run ? (uint32_t)(run - p->ptags) : 0;
	if (!run) {
		/* Where pid's run goes. */
		while (at < p->nr_ptags && p->ptags[at].pid < pid)
			at++;
	}
	for (uint32_t i = 0; i < n; i++, at++) {
		int c = strcmp(prof_str(p, p->ptags[at].key), key);

		if (!c) {
			p->ptags[at].value = v;
			return 0;
		}
		if (c > 0)
			break;
	}
	if (PR_ARRAY_RESERVE(p->ptags, p->cap_ptags, (size_t)p->nr_ptags + 1))
		return -ENOMEM;
	memmove(&p->ptags[at + 1], &p->ptags[at], (p->nr_ptags - at) * sizeof(*p->ptags));
	p->ptags[at] = (struct prof_ptag){ .pid = pid, .key = k, .value = v };
	p->nr_ptags++;
	return 0;
}

int pr_profile_set_time(struct pr_profile *p, uint64_t start_ns, uint64_t duration_ns)
{
	if (!p)
		return -EINVAL;
	p->start_ns = start_ns;
	p->duration_ns = duration_ns;
	return 0;
}

uint64_t pr_profile_samples(const struct pr_profile *p)
{
	return p ? p->samples : 0;
}

size_t pr_profile_nr_stacks(const struct pr_profile *p)
{
	return p ? p->nr_stacks : 0;
}

/* ---- adding a sample ---- */

static bool mapping_eq(const struct pr_profile *p, uint32_t idx, const void *key)
{
	const struct prof_mapping *a = &p->mappings[idx], *b = key;

	return a->name == b->name && a->kernel == b->kernel && a->sampled == b->sampled &&
	       (a->sampled || (a->start == b->start && a->limit == b->limit &&
			       a->offset == b->offset));
}

/* Mapping `key` (its name and build-id strings p's): the one already
 * there, a sampled one grown to cover it, or it added.  Its build-id is
 * asked of `dso` (may be NULL) only when it is new. */
static uint32_t mapping_put(struct pr_profile *p, struct prof_mapping *key,
			    const struct pr_dso *dso)
{
	struct pr_hashmap *t = &p->index->mappings;
	uint32_t idx;
	uint64_t h;

	if (pr__hashmap_reserve(t, 1))
		return PROF_NONE;
	h = pr__hash_mix(pr__hash_mix(key->name, key->kernel), key->sampled);
	if (!key->sampled)
		h = pr__hash_mix(pr__hash_mix(pr__hash_mix(h, key->start), key->limit), key->offset);
	idx = table_find(t, h, mapping_eq, p, key);
	if (idx != PROF_NONE) {
		struct prof_mapping *m = &p->mappings[idx];

		if (m->sampled && key->start < m->start) {
			m->start = key->start;
			m->offset = key->offset;
		}
		if (m->sampled && key->limit > m->limit)
			m->limit = key->limit;
		m->has_functions |= key->has_functions;
		m->has_lines |= key->has_lines;
		m->has_inline |= key->has_inline;
		return idx;
	}
	if (PR_ARRAY_RESERVE(p->mappings, p->cap_mappings, p->nr_mappings + 1))
		return PROF_NONE;
	if (dso) {
		const uint8_t *id;
		size_t len = pr_dso_build_id(dso, &id);
		char hex[2 * 64 + 1];

		if (len && len <= 64) {
			pr__hex(hex, id, len);
			key->build_id = prof__intern(&p->strings, hex);
			if (key->build_id == PROF_NONE)
				return PROF_NONE;
		}
	}
	idx = p->nr_mappings++;
	p->mappings[idx] = *key;
	table_set(t, h, idx);
	return idx;
}

/* The mapping a frame is in: the one it carries, as its MMAP record gave
 * it; for a frame in none (the kernel's), one per name whose range grows
 * to cover every address seen in it. */
static uint32_t mapping_of(struct pr_profile *p, const struct pr_symbol *sym,
			   const struct pr_frame *f)
{
	struct prof_mapping key = {
		.start = f->map_start, .limit = f->map_end, .offset = f->map_pgoff,
		.kernel = f->flags & PR_FRAME_KERNEL, .sampled = f->map_end <= f->map_start,
	};

	if (!sym->module)
		return PROF_NONE;
	key.name = prof__intern(&p->strings, sym->module);
	if (key.name == PROF_NONE)
		return PROF_NONE;
	if (key.sampled) {
		key.start = f->ip;
		key.limit = f->ip + 1;
		key.offset = f->dso_ip;
	}
	return mapping_put(p, &key, f->dso);
}

uint32_t prof__mapping_import(struct pr_profile *p, const struct pr_profile *src,
			      const struct prof_mapping *m)
{
	struct prof_mapping key = *m;

	key.name = prof__intern(&p->strings, prof_str(src, m->name));
	key.build_id = prof__intern(&p->strings, prof_str(src, m->build_id));
	if (key.name == PROF_NONE || key.build_id == PROF_NONE)
		return PROF_NONE;
	return mapping_put(p, &key, NULL);
}

static bool function_eq(const struct pr_profile *p, uint32_t idx, const void *key)
{
	const struct prof_function *a = &p->functions[idx], *b = key;

	return a->name == b->name && a->file == b->file;
}

uint32_t prof__function_of(struct pr_profile *p, const char *name, const char *file)
{
	struct pr_hashmap *t = &p->index->functions;
	struct prof_function key = {
		.name = prof__intern(&p->strings, name),
		.file = prof__intern(&p->strings, file),
	};
	uint32_t idx;
	uint64_t h;

	if (key.name == PROF_NONE || key.file == PROF_NONE || pr__hashmap_reserve(t, 1))
		return PROF_NONE;
	h = pr__hash_mix(key.name, key.file);
	idx = table_find(t, h, function_eq, p, &key);
	if (idx != PROF_NONE)
		return idx;
	if (PR_ARRAY_RESERVE(p->functions, p->cap_functions, p->nr_functions + 1))
		return PROF_NONE;
	idx = p->nr_functions++;
	p->functions[idx] = key;
	table_set(t, h, idx);
	return idx;
}

static int add_line(struct pr_profile *p, const char *name, const char *file, uint32_t line)
{
	uint32_t fn = prof__function_of(p, name, file);

	if (fn == PROF_NONE || PR_ARRAY_RESERVE(p->lines, p->cap_lines, p->nr_lines + 1))
		return -ENOMEM;
	p->lines[p->nr_lines].function = fn;
	p->lines[p->nr_lines++].line = line;
	return 0;
}

/* Fill a new location's lines from what the symbolizer says. */
static int location_lines(struct pr_profile *p, struct prof_location *loc,
			  const struct pr_symbol *sym)
{
	loc->line = p->nr_lines;
	for (size_t i = 0; i < sym->nr && i < UINT16_MAX; i++) {
		const struct pr_sym_func *fn = &sym->funcs[i];
		/* The function the address is in goes by its symbol's name,
		 * as perf shows it (a clone "f.part.0" stays told apart). */
		const char *name = i + 1 == sym->nr && sym->name ? sym->name : fn->name;

		if (add_line(p, name ? name : "[unknown]", fn->file, fn->line))
			return -ENOMEM;
		loc->nr_lines++;
	}
	if (!loc->nr_lines && sym->name) {
		if (add_line(p, sym->name, NULL, 0))
			return -ENOMEM;
		loc->nr_lines = 1;
	}
	return 0;
}

static bool addr_eq(const struct pr_profile *p, uint32_t idx, const void *key)
{
	const uint64_t *k = key;

	return p->index->addrs[idx].owner == k[0] && p->index->addrs[idx].addr == k[1] &&
	       p->index->addrs[idx].name == k[2];
}

/* A named location by what it says: mapping, kind and chain of lines. */
static uint64_t location_hash(const struct pr_profile *p, const struct prof_location *loc)
{
	uint64_t h = pr__hash_mix(loc->mapping, loc->kind);

	for (uint32_t i = 0; i < loc->nr_lines; i++)
		h = pr__hash_mix(pr__hash_mix(h, p->lines[loc->line + i].function), p->lines[loc->line + i].line);
	return h;
}

static bool location_eq(const struct pr_profile *p, uint32_t idx, const void *key)
{
	const struct prof_location *a = &p->locations[idx], *b = key;

	return a->mapping == b->mapping && a->kind == b->kind && a->nr_lines == b->nr_lines &&
	       !memcmp(&p->lines[a->line], &p->lines[b->line], b->nr_lines * sizeof(*p->lines));
}

/* Frame `f` of `pid` named into *s; all 0 when nothing names it. */
static void symbolize(struct pr_symbolizer *sym, uint32_t pid, const struct pr_frame *f,
		      struct pr_symbol *s)
{
	if (!sym || pr_symbolizer_symbolize(sym, pid, f, s))
		memset(s, 0, sizeof(*s));
}

/* Location `loc`, whose lines were just added at the end of p->lines: an
 * existing one that says the same (the lines are taken back), or it
 * added.  PROF_NONE when out of memory. */
static uint32_t location_put(struct pr_profile *p, const struct prof_location *loc)
{
	struct pr_hashmap *t = &p->index->locations;
	uint32_t idx;
	uint64_t h;

	if (pr__hashmap_reserve(t, 1))
		return PROF_NONE;
	h = location_hash(p, loc);
	/* What nothing names stays apart by address (pprof shows those). */
	idx = loc->nr_lines ? table_find(t, h, location_eq, p, loc) : PROF_NONE;
	if (idx != PROF_NONE) {
		p->nr_lines = loc->line;   /* the same lines are there already */
		return idx;
	}
	if (PR_ARRAY_RESERVE(p->locations, p->cap_locations, p->nr_locations + 1))
		return PROF_NONE;
	if (loc->mapping != PROF_NONE && loc->nr_lines) {
		struct prof_mapping *m = &p->mappings[loc->mapping];

		m->has_functions = true;
		m->has_lines |= p->lines[loc->line].line != 0;
		m->has_inline |= loc->nr_lines > 1;
	}
	idx = p->nr_locations++;
	p->locations[idx] = *loc;
	if (loc->nr_lines)
		table_set(t, h, idx);
	return idx;
}

/* A new address's location, named `s`.  PROF_NONE when out of memory. */
static uint32_t new_location(struct pr_profile *p, const struct pr_frame *f,
			     const struct pr_symbol *s)
{
	struct prof_location loc;

	loc = (struct prof_location){ .address = f->ip, .mapping = mapping_of(p, s, f) };
	if (f->flags & PR_FRAME_KERNEL)
		loc.kind = PROF_KERNEL;
	else if (s->source == PR_SYM_PERF_MAP || s->source == PR_SYM_JITDUMP || !f->dso)
		loc.kind = PROF_JIT;
	if (location_lines(p, &loc, s))
		return PROF_NONE;
	return location_put(p, &loc);
}

uint32_t prof__location_add(struct pr_profile *p, const struct prof_location *tmpl,
			    const struct prof_line *lines)
{
	struct prof_location loc = *tmpl;

	if (PR_ARRAY_RESERVE(p->lines, p->cap_lines, (size_t)p->nr_lines + loc.nr_lines))
		return PROF_NONE;
	loc.line = p->nr_lines;
	/* A location nothing names has no lines, and the profile perhaps
	 * no array yet. */
	if (loc.nr_lines)
		memcpy(&p->lines[p->nr_lines], lines, loc.nr_lines * sizeof(*lines));
	p->nr_lines += loc.nr_lines;
	return location_put(p, &loc);
}

uint32_t prof__wait_location(struct pr_profile *p, int kind)
{
	char name[64];
	uint32_t idx;

	if (p->wait_locs[kind])
		return p->wait_locs[kind] - 1;
	if (PR_ARRAY_RESERVE(p->locations, p->cap_locations, p->nr_locations + 1))
		return PROF_NONE;
	/* Never shown as a wait that began here: it began before. */
	if (kind == PROF_WAIT_BEFORE_START)
		snprintf(name, sizeof(name), PROF_BEFORE_START_LABEL);
	else
		snprintf(name, sizeof(name), "[off-cpu: %s]",
			 pr_wait_kind_name((enum pr_wait_kind)kind));
	idx = p->nr_locations;
	p->locations[idx] = (struct prof_location){ .mapping = PROF_NONE, .line = p->nr_lines,
						    .nr_lines = 1, .kind = PROF_WAIT };
	if (add_line(p, name, NULL, 0))
		return PROF_NONE;
	p->nr_locations++;
	p->wait_locs[kind] = idx + 1;
	return idx;
}

/* Owners of addresses that are not a file's: tagged pids, which the
 * (8-aligned) struct pr_dso pointers never equal. */
#define OWNER_NO_MAPPING(pid) ((uint64_t)(pid) << 2 | 1)
#define OWNER_JIT(pid) ((uint64_t)(pid) << 2 | 3)

static uint32_t location_of(struct pr_profile *p, struct pr_symbolizer *sym, uint32_t pid,
			    const struct pr_frame *f)
{
	struct prof_index *x = p->index;
	struct pr_symbol s = { 0 };
	bool named = false;
	uint64_t key[3] = { 0 }, h;
	uint32_t idx, loc;

	/*
	 * An address is named by its file and offset in it; in the kernel by
	 * itself; in no mapping by its process.  JIT code (anonymous memory)
	 * is its process's, named by that process's perf map, which the
	 * symbolizer reads again as the JIT adds to it: it is asked every
	 * time (from its own cache of each read) and its answer is part of
	 * the key, so a name found by a later read reaches the profile, and
	 * one process's name never stands for another's code.
	 */
	if (f->flags & PR_FRAME_KERNEL) {
		key[1] = f->ip;
	} else if (f->dso && f->dso->anon) {
		symbolize(sym, pid, f, &s);
		named = true;
		key[0] = OWNER_JIT(pid), key[1] = f->ip, key[2] = (uintptr_t)s.name;
	} else if (f->dso) {
		key[0] = (uintptr_t)f->dso, key[1] = f->dso_ip;
	} else {
		key[0] = OWNER_NO_MAPPING(pid), key[1] = f->ip;
	}
	h = pr__hash_mix(pr__hash_mix(key[0], key[1]), key[2]);
	idx = table_find(&x->addr_table, h, addr_eq, p, key);
	if (idx != PROF_NONE)
		return x->addrs[idx].loc;
	/* Room made on a miss only: most frames are addresses seen before. */
	if (pr__hashmap_reserve(&x->addr_table, 1) ||
	    PR_ARRAY_RESERVE(x->addrs, x->cap_addrs, x->nr_addrs + 1))
		return PROF_NONE;
	if (!named)
		symbolize(sym, pid, f, &s);
	loc = new_location(p, f, &s);
	if (loc == PROF_NONE)
		return PROF_NONE;
	x->addrs[x->nr_addrs].owner = key[0];
	x->addrs[x->nr_addrs].addr = key[1];
	x->addrs[x->nr_addrs].name = key[2];
	x->addrs[x->nr_addrs].loc = loc;
	table_set(&x->addr_table, h, (uint32_t)x->nr_addrs++);
	return loc;
}

int prof__name_jit_late(struct pr_profile *p, struct pr_symbolizer *sym)
{
	struct prof_index *x = p->index;

	for (size_t i = 0; sym && x && i < x->nr_addrs; i++) {
		struct prof_location *loc = &p->locations[x->addrs[i].loc];
		uint32_t pid = (uint32_t)(x->addrs[i].owner >> 2);
		struct pr_symbol s;

		/* Unnamed, each such address has a location of its own. */
		if ((x->addrs[i].owner & 3) != 3 || x->addrs[i].name || loc->nr_lines ||
		    pr__sym_resolve_jitdump_late(sym, pid, x->addrs[i].addr, &s) || !s.name)
			continue;
		if (location_lines(p, loc, &s))
			return -ENOMEM;
		if (loc->mapping != PROF_NONE)
			p->mappings[loc->mapping].has_functions = true;
	}
	return 0;
}

static bool thread_eq(const struct pr_profile *p, uint32_t idx, const void *key)
{
	const struct prof_thread *a = &p->threads[idx], *b = key;

	return a->tid == b->tid && a->pid == b->pid && a->comm == b->comm &&
	       a->process == b->process;
}

uint32_t prof__thread_of(struct pr_profile *p, uint32_t pid, uint32_t tid, const char *comm,
			 const char *process)
{
	struct pr_hashmap *t = &p->index->threads;
	struct prof_thread key = { .pid = pid, .tid = tid };
	uint32_t *last = &p->index->last_thread[tid % 64];
	const struct prof_thread *was = *last ? &p->threads[*last - 1] : NULL;
	uint32_t idx;
	uint64_t h;

	comm = comm ? comm : "[unknown]";
	process = process ? process : comm;
	if (was && was->pid == pid && was->tid == tid && !strcmp(prof_str(p, was->comm), comm) &&
	    !strcmp(prof_str(p, was->process), process))
		return *last - 1;
	key.comm = prof__intern(&p->strings, comm);
	key.process = prof__intern(&p->strings, process);
	if (key.comm == PROF_NONE || key.process == PROF_NONE || pr__hashmap_reserve(t, 1))
		return PROF_NONE;
	h = pr__hash_mix(pr__hash_mix(pr__hash_mix(pid, tid), key.comm), key.process);
	idx = table_find(t, h, thread_eq, p, &key);
	if (idx == PROF_NONE) {
		if (PR_ARRAY_RESERVE(p->threads, p->cap_threads, p->nr_threads + 1))
			return PROF_NONE;
		idx = p->nr_threads++;
		p->threads[idx] = key;
		table_set(t, h, idx);
	}
	*last = idx + 1;
	return idx;
}

struct stack_key {
	uint32_t thread, event, nr;
	struct prof_end end;
	const uint32_t *frames;
};

static bool stack_eq(const struct pr_profile *p, uint32_t idx, const void *key)
{
	const struct prof_stack *a = &p->stacks[idx];
	const struct stack_key *b = key;

	return a->thread == b->thread && a->event == b->event && a->nr == b->nr &&
	       a->end == b->end.end && a->joined == b->end.joined && a->chain == b->end.chain &&
	       (!b->nr || !memcmp(&p->frames[a->frame], b->frames, b->nr * sizeof(*b->frames)));
}

struct prof_end prof__end_of(const struct pr_stack *stack)
{
	struct prof_end e = { .end = (uint8_t)stack->end };

	for (size_t i = stack->nr; i-- > stack->nr_kernel &&
	     (stack->frames[i].flags & PR_FRAME_JOINED) && e.joined < UINT16_MAX;)
		e.joined++;
	for (size_t i = stack->nr; i-- > stack->nr_kernel &&
	     (stack->frames[i].flags & PR_FRAME_CHAIN) && e.chain < UINT16_MAX;)
		e.chain++;
	return e;
}

uint32_t *prof__locations(struct pr_profile *p, struct pr_symbolizer *sym,
			  const struct pr_record *rec, const struct pr_stack *stack,
			  const char *comm, const char *process, size_t reserve,
			  uint32_t *thread)
{
	struct prof_index *x = p->index;

	if (PR_ARRAY_RESERVE(x->scratch, x->cap_scratch, stack->nr + reserve + 1))
		return NULL;
	*thread = prof__thread_of(p, rec->pid, rec->tid, comm, process);
	if (*thread == PROF_NONE)
		return NULL;
	for (size_t i = 0; i < stack->nr; i++) {
		x->scratch[reserve + i] = location_of(p, sym, rec->pid, &stack->frames[i]);
		if (x->scratch[reserve + i] == PROF_NONE)
			return NULL;
	}
	return x->scratch;
}

uint32_t prof__stack_of(struct pr_profile *p, uint32_t thread, uint32_t event,
			const uint32_t *locs, uint32_t nr, enum prof_stack_kind kind,
			struct prof_end end, uint64_t time)
{
	struct prof_index *x = p->index;
	struct stack_key key = { .thread = thread, .event = event, .nr = nr, .end = end,
				 .frames = locs };
	uint32_t idx;
	uint64_t h = pr__hash_mix(pr__hash_mix(event, thread), end.end | (uint64_t)end.joined << 8 |
				  (uint64_t)end.chain << 24);

	for (uint32_t i = 0; i < nr; i++)
		h = pr__hash_mix(h, locs[i]);
	if (pr__hashmap_reserve(&x->stacks, 1))
		return PROF_NONE;
	idx = table_find(&x->stacks, h, stack_eq, p, &key);
	if (idx != PROF_NONE)
		return idx;
	if (PR_ARRAY_RESERVE(p->stacks, p->cap_stacks, p->nr_stacks + 1) ||
	    PR_ARRAY_RESERVE(p->frames, p->cap_frames, p->nr_frames + nr))
		return PROF_NONE;
	idx = p->nr_stacks++;
	p->stacks[idx] = (struct prof_stack){ .thread = thread, .frame = (uint32_t)p->nr_frames,
					      .nr = nr, .kind = (uint8_t)kind, .event = event,
					      .end = end.end, .joined = end.joined,
					      .chain = end.chain,
					      .first_time = time };
	/* A stack of no frames (a sample without user registers) may come
	 * before any frame was stored: no array to copy into yet. */
	if (nr)
		memcpy(&p->frames[p->nr_frames], locs, nr * sizeof(*locs));
	p->nr_frames += nr;
	table_set(&x->stacks, h, idx);
	return idx;
}

int prof__count(struct pr_profile *p, uint32_t idx, uint64_t time, uint64_t count,
		uint64_t ns, uint64_t period)
{
	struct prof_stack *st = &p->stacks[idx];

	if (p->timeline) {
		uint32_t t = st->thread;

		if (t >= p->cap_timelines) {
			size_t old = p->cap_timelines;

			if (PR_ARRAY_RESERVE(p->timelines, p->cap_timelines, t + 1))
				return -ENOMEM;
			memset(p->timelines + old, 0,
			       (p->cap_timelines - old) * sizeof(*p->timelines));
		}
		/* An entry weighs what its stack counts. */
		if (prof__timeline_add(&p->timelines[t], time, idx, p->nr_events ? period : ns))
			return -ENOMEM;
	}
	st->count += count;
	st->ns += ns;
	st->period += period;
	st->last_time = time;
	return 0;
}

/* What one CPU sample of `event` stands for, in ns: its period when that
 * is time, else the frequency's interval; 0 when neither says, and for
 * an event that does not count time. */
static uint64_t sample_ns(const struct pr_profile *p, size_t event, const struct pr_record *rec)
{
	uint64_t period = rec->type == PR_RECORD_SAMPLE ? rec->u.sample.period : 0;

	if (p->nr_events)
		return p->events[event].ns ? period : 0;
	if (p->period_is_ns && period)
		return period;
	return p->freq ? UINT64_C(1000000000) / p->freq : 0;
}

int pr_profile_add_event(struct pr_profile *p, size_t event, struct pr_symbolizer *sym,
			 const struct pr_record *rec, const struct pr_stack *stack,
			 const char *comm, const char *process)
{
	uint32_t thread, idx, *locs;
	uint64_t ns;
	int err;

	if (!p || !rec || !stack || event >= (p->nr_events ? p->nr_events : 1))
		return -EINVAL;
	locs = prof__locations(p, sym, rec, stack, comm, process, 0, &thread);
	if (!locs)
		return -ENOMEM;
	idx = prof__stack_of(p, thread, (uint32_t)event, locs, (uint32_t)stack->nr, PROF_ON_CPU,
			     prof__end_of(stack), rec->time);
	if (idx == PROF_NONE)
		return -ENOMEM;
	ns = sample_ns(p, event, rec);
	err = prof__count(p, idx, rec->time, 1, ns,
			  p->nr_events && rec->type == PR_RECORD_SAMPLE ? rec->u.sample.period : 0);
	if (!err && p->nr_counters)
		err = prof__count_reads(p, idx, rec);
	if (err)
		return err;
	p->samples++;
	p->total.samples++;
	p->total.cpu_ns += ns;
	return 0;
}

int pr_profile_add(struct pr_profile *p, struct pr_symbolizer *sym,
		   const struct pr_record *rec, const struct pr_stack *stack,
		   const char *comm, const char *process)
{
	return pr_profile_add_event(p, 0, sym, rec, stack, comm, process);
}
