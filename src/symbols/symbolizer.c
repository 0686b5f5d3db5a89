/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The symbolizer: frame addresses to function names, inlined calls and
 * source lines.
 *
 * A mapped file is found once (src/dsofind.c), reported to its own libdwfl
 * session at its link-time addresses, and its ELF symbols read into a
 * table with perf's rules (src/symtab.c); libdwfl reads its DWARF, from
 * the file or from a separate debug file (src/debugfile.c).
 * A frame's file offset becomes a link-time address; the symbol table
 * names the function and the offset in it; DWARF's scopes at the address
 * give the functions inlined there, the line table the innermost line and
 * each inlined call's DW_AT_call_file/line the lines of the callers.  The
 * kernel is named from /proc/kallsyms, JIT code from its process's jitdump or
 * /tmp/perf-PID.map.
 *
 * Every (file, address) is resolved once, into a table probed first for
 * every frame; names, inline chains and file names live in an arena for
 * as long as the symbolizer.
 */
#include <errno.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include "symbols/symbolizer.h"
#include "symbols/symindex.h"
#include "symbols/symcache.h"
#include "symbols/ixshare.h"

#include <libiberty/demangle.h>

/* ---- names ---- */

/*
 * Names demangled as perf shows them: C++ without parameters or clone
 * suffixes ("ns::Widget::run", not "ns::Widget::run(int) [clone
 * .isra.0]"); Rust's legacy names ("_ZN...17h<hash>E") without the hash
 * and its v0 names ("_R...") without crate disambiguators, as perf and
 * llvm-symbolizer give them ("mycrate::module::func").  libiberty's
 * cplus_demangle() with no style given tries each scheme (auto): the
 * Itanium one, and on a legacy Rust name its Rust demangler.
 */
const char *pr__sym_demangle(struct pr_symbolizer *s, struct pr_arena *a, const char *name)
{
	char *d;
	const char *out;

	if (s->no_demangle || (strncmp(name, "_Z", 2) && strncmp(name, "_R", 2)))
		return pr__arena_strdup(a, name);
	d = cplus_demangle(name, DMGL_ANSI);
	if (!d)
		return pr__arena_strdup(a, name);
	out = pr__arena_strdup(a, d);
	free(d);
	return out;
}

/* Source file names repeat across lines: one copy each. */
struct file_name {
	struct file_name *next;
	const char *name;
};

const char *pr__sym_intern_file(struct sym_module *m, const char *name)
{
	uint64_t h = pr__hash_str(name);
	struct file_name *f = pr__hashmap_get(&m->files, h), *n;

	for (struct file_name *i = f; i; i = i->next)
		if (!strcmp(i->name, name))
			return i->name;
	n = pr__arena_alloc(&m->arena, sizeof(*n));
	if (!n || !(n->name = pr__arena_strdup(&m->arena, name)))
		return NULL;
	n->next = f;
	if (pr__hashmap_put(&m->files, h, n))
		return NULL;
	return n->name;
}

/* A frame named by a symbol alone (the kernel's, a perf map's). */
void pr__sym_named(struct pr_symbolizer *s, struct pr_symbol *sym, const char *name,
		   uint64_t offset, enum pr_sym_source source)
{
	if (!name)
		return;
	sym->name = name;
	sym->offset = offset;
	sym->source = source;
	s->stats.named++;
}

/* ---- resolved frames ---- */

/*
 * The resolved frames, by (file or kernel, address): open addressing with
 * linear probing over slots of one cache line each, the answer in the
 * slot, so that a frame seen before costs one probe -- most frames are.
 * This is the one table that is not base/hashmap.c: a map to a pointer
 * would cost a second cache miss on every frame, and entries are only
 * deleted all at once, by a trim (which builds the table anew).
 */
static size_t slot_home(const struct pr_symbolizer *s, const void *owner, uint64_t addr)
{
	return (size_t)(pr__hash_mix((uintptr_t)owner, addr) >> 32) & (s->nr_slots - 1);
}

static struct sym_slot *slot_probe(const struct pr_symbolizer *s, const void *owner,
				   uint64_t addr)
{
	size_t mask = s->nr_slots - 1, i = slot_home(s, owner, addr);

	while (s->slots[i].owner && (s->slots[i].owner != owner || s->slots[i].addr != addr))
		i = (i + 1) & mask;
	return &s->slots[i];
}

/* Room for one more, at most half full. */
static int slots_reserve(struct pr_symbolizer *s)
{
	struct sym_slot *old = s->slots;
	size_t nr = s->nr_slots;

	if (s->used_slots + 1 <= nr / 2)
		return 0;
	s->nr_slots = nr ? nr * 2 : 4096;
	s->slots = pr__table_new(s->nr_slots * sizeof(*s->slots));
	if (!s->slots) {
		s->slots = old;
		s->nr_slots = nr;
		return -ENOMEM;
	}
	for (size_t i = 0; i < nr; i++)
		if (old[i].owner)
			*slot_probe(s, old[i].owner, old[i].addr) = old[i];
	pr__table_free(old, nr * sizeof(*old));
	return 0;
}

/* A number no symbolizer of this process has had (pr__symbolizer_epoch()):
 * one freed and another made at its address are told apart too. */
static void new_epoch(struct pr_symbolizer *s)
{
	static _Atomic uint64_t epochs;

	s->epoch = atomic_fetch_add(&epochs, 1) + 1;
}

/* ---- what a trim takes (model/trim.c) ---- */

static size_t module_bytes(const struct sym_module *m)
{
	/* Its resolved frames: a slot each, in a table at most half full. */
	return sizeof(*m) + m->syms.cap * sizeof(*m->syms.v) +
	       (m->names ? pr__sym_nr_symbols(m) * sizeof(*m->names) : 0) + m->arena.bytes +
	       (m->cus.cap + m->func_names.cap + m->files.cap) * sizeof(*m->cus.slots) +
	       m->nr_spans * 16 + m->zbytes + m->index_bytes +
	       2 * m->nr_results * sizeof(struct sym_slot);
}

static size_t weigh_file(void *arg, const struct pr_elf *e)
{
	const struct pr_symbolizer *s = arg;
	size_t bytes = 0;

	for (size_t i = 0; i < s->modules.cap; i++) {
		const struct sym_module *m = s->modules.slots[i].value;

		if (m && m->elf == e)
			bytes += module_bytes(m);
	}
	return bytes;
}

static bool module_goes(const struct sym_module *m)
{
	return m->dso->going || (m->elf && m->elf->going) || m->cut;
}

static bool module_stays(uint64_t key, void *value, void *arg)
{
	(void)key, (void)arg;
	if (!module_goes(value))
		return true;
	pr__sym_module_free(value);
	return false;
}

static bool perf_map_stays(uint64_t key, void *value, void *arg)
{
	struct pr_symbolizer *s = arg;

	if (pr__model_proc(s->model, (uint32_t)key, false)) {
		pr__sym_perf_map_forget(value);
		return true;
	}
	pr__sym_perf_map_free(value);
	return false;
}

static bool jitdump_stays(uint64_t key, void *value, void *arg)
{
	struct pr_symbolizer *s = arg;

	if (pr__sym_jitdump_forget(value, !pr__model_proc(s->model, (uint32_t)key, false)))
		return true;
	pr__sym_jitdump_free(value);
	return false;
}

/* The resolved frames of what stays, in a table sized for them (or none
 * when that cannot be had: they are found again). */
static void trim_slots(struct pr_symbolizer *s)
{
	struct sym_slot *old = s->slots;
	size_t nr_old = s->nr_slots, used = 0;

	for (size_t i = 0; i < nr_old; i++) {
		const struct sym_slot *o = &old[i];
		const struct sym_module *m;

		if (!o->owner)
			continue;
		if (o->owner != &s->ksyms &&
		    (((const struct pr_dso *)o->owner)->going ||
		     ((m = pr__hashmap_get(&s->modules, (uintptr_t)o->owner)) && module_goes(m))))
			((struct sym_slot *)o)->owner = NULL;
		else
			used++;
	}
	s->slots = NULL;
	s->nr_slots = 4096;
	while (s->nr_slots < 2 * used)
		s->nr_slots *= 2;
	if (used)
		s->slots = pr__table_new(s->nr_slots * sizeof(*s->slots));
	if (s->slots) {
		for (size_t i = 0; i < nr_old; i++)
			if (old[i].owner)
				*slot_probe(s, old[i].owner, old[i].addr) = old[i];
	} else {
		s->nr_slots = 0;
		used = 0;
	}
	s->used_slots = used;
	pr__table_free(old, nr_old * sizeof(*old));
}

static void free_cut(struct pr_symbolizer *s);

static void trim_files(void *arg)
{
	struct pr_symbolizer *s = arg;

	new_epoch(s);
	trim_slots(s);
	free_cut(s);
	pr__hashmap_filter(&s->modules, module_stays, s);
	pr__hashmap_filter(&s->perf_maps, perf_map_stays, s);
	pr__hashmap_filter(&s->jitdumps, jitdump_stays, s);
}

/* Between trims and at their end: the pages of every module's files. */
static void release_files(void *arg)
{
	struct pr_symbolizer *s = arg;
	struct pr_file_maps fm = { 0 };

	if (pr__file_maps_read(&fm))
		return;
	for (size_t i = 0; i < s->modules.cap; i++)
		if (s->modules.slots[i].value)
			pr__sym_module_release_pages(s->modules.slots[i].value, &fm);
	pr__file_maps_free(&fm);
}

/* ---- the API ---- */

/* The address index cache the options ask for, if any: -ENOMEM. */
static int index_cache(struct pr_symbolizer *s, const struct pr_symbolizer_opts *opts)
{
	const char *dir = PR_OPTS_HAS(opts, index_cache_dir) ? opts->index_cache_dir : NULL;
	uint64_t max = PR_OPTS_HAS(opts, index_cache_max) ? opts->index_cache_max : 0;
	char path[4096];

	if (PR_OPTS_HAS(opts, no_index_cache) && opts->no_index_cache)
		return 0;
	if (!dir && s->cache_dir && pr__path_fmt(path, sizeof(path), "%s/index", s->cache_dir))
		dir = path;
	if (dir && !(s->ixcache = pr__ixcache_new(dir, max, dir != path, &s->lg)))
		return -ENOMEM;
	return 0;
}

/* The address index's path or libdw's: meson -Dsymindex sets the
 * default, opts->index_always asks for the index; DS_SYMINDEX=0 (or 1)
 * in the environment overrides either, to tell one path's answer from
 * the other's when a name looks wrong, and with 0 libdw's alone: no
 * index is used, even one in the cache (*libdw_only). */
static bool index_wanted(const struct pr_symbolizer_opts *opts, bool *libdw_only)
{
	const char *env = getenv("DS_SYMINDEX");

	*libdw_only = env && !strcmp(env, "0");
	if (env && (!strcmp(env, "0") || !strcmp(env, "1")))
		return env[0] == '1';
	return PR_SYMINDEX_DEFAULT || (PR_OPTS_HAS(opts, index_always) && opts->index_always);
}

struct pr_symbolizer *pr_symbolizer_new(struct pr_model *model,
					const struct pr_symbolizer_opts *opts)
{
	size_t extra = PR_OPTS_HAS(opts, nr_debug_dirs) ? opts->nr_debug_dirs : 0;
	struct pr_symbolizer *s;

	if (!model || !PR_OPTS_VALID(opts) || (extra && !opts->debug_dirs)) {
		errno = EINVAL;
		return NULL;
	}
	s = calloc(1, sizeof(*s));
	if (!s)
		return NULL;
	s->model = model;
	if (PR_OPTS_HAS(opts, log_ctx)) {
		s->lg.fn = opts->log;
		s->lg.ctx = opts->log_ctx;
	}
	s->live = PR_OPTS_HAS(opts, live) && opts->live;
	s->no_inline = PR_OPTS_HAS(opts, no_inline) && opts->no_inline;
	s->no_lines = PR_OPTS_HAS(opts, no_lines) && opts->no_lines;
	s->no_demangle = PR_OPTS_HAS(opts, no_demangle) && opts->no_demangle;
	s->use_index = index_wanted(opts, &s->libdw_only);
	s->index_fill_max = PR_IX_FILL_MAX;
	s->born_ns = pr__monotonic_ns();
	new_epoch(s);
	s->stats.sz = sizeof(s->stats);
	s->perf_map_reread_ns = PERF_MAP_REREAD_NS;
	s->pool = PR_OPTS_HAS(opts, pool) ? opts->pool : NULL;
	if (PR_OPTS_HAS(opts, cache_dir) && opts->cache_dir &&
	    !(s->cache_dir = strdup(opts->cache_dir)))
		goto fail;
	if (index_cache(s, opts))
		goto fail;
	if (PR_OPTS_HAS(opts, kallsyms) && opts->kallsyms &&
	    !(s->kallsyms_path = strdup(opts->kallsyms)))
		goto fail;
	s->elves = pr__model_files(model, extra ? opts->debug_dirs : NULL, extra, "symbolizer",
				   &s->lg);
	if (!s->elves)
		goto fail;
	s->callbacks.find_elf = dwfl_build_id_find_elf;
	s->callbacks.find_debuginfo = pr__sym_find_debuginfo;
	s->user = (struct pr_model_user){ .weigh = weigh_file, .trim = trim_files,
					  .release = release_files, .arg = s,
					  .pins = s->pool != NULL };
	pr__model_listen(model, &s->user);
	return s;
fail:
	pr_symbolizer_free(s);
	errno = ENOMEM;
	return NULL;
}

/* ---- an index's file cut short under its mapping (base/busguard.c) ---- */

void pr__sym_module_cut_marks(const struct sym_module *m, struct sym_cut_marks *out)
{
	*out = (struct sym_cut_marks){ .ix = { m->index, m->names_index },
				       .nr_guards = m->nr_guards };
	memcpy(out->guards, m->guards, m->nr_guards * sizeof(*m->guards));
}

bool pr__sym_cut_marks_hit(const struct sym_cut_marks *k)
{
	for (size_t i = 0; i < 2; i++)
		if (k->ix[i] && pr__symindex_cut(k->ix[i]))
			return true;
	for (size_t i = 0; i < k->nr_guards; i++)
		if (pr__busguard_hit(k->guards[i]))
			return true;
	return false;
}

bool pr__sym_module_cut(const struct sym_module *m)
{
	struct sym_cut_marks k;

	pr__sym_module_cut_marks(m, &k);
	return pr__sym_cut_marks_hit(&k);
}

static bool module_uncut(uint64_t key, void *value, void *arg)
{
	struct pr_symbolizer *s = arg;
	struct sym_module *m = value;

	(void)key;
	if (!m->cut)
		return true;
	if (m->dso && s->pool && pr__sym_pool_eligible(m->dso))
		pr__sym_pool_forget(s->pool, m->dso);
	s->cut[s->nr_cut++] = m;
	return false;
}

/* Set aside every module whose index or file read zeros where the file
 * was cut short under its mapping, and forget what they named: the next
 * frame in the file opens it anew, the cache refuses a cut index, and the
 * index is made again.  Nothing is freed here: what they named may still
 * be pointed to (the next trim frees them, without a pool).  A symbolizer
 * sharing a pool forgets every answer it kept: some may be another
 * worker's, from a module of its that was cut.  Whether anything was
 * forgotten. */
static bool drop_cut(struct pr_symbolizer *s)
{
	size_t nr = 0;

	s->bus_hits = pr__busguard_hits();
	/* Marked once: another worker's fault may cut more meanwhile. */
	for (size_t i = 0; i < s->modules.cap; i++) {
		struct sym_module *m = s->modules.slots[i].value;

		if (m && !m->cut && pr__sym_module_cut(m)) {
			m->cut = true;
			nr++;
		}
	}
	if (nr && PR_ARRAY_RESERVE(s->cut, s->cap_cut, s->nr_cut + nr)) {
		for (size_t i = 0; i < s->modules.cap; i++)
			if (s->modules.slots[i].value)
				((struct sym_module *)s->modules.slots[i].value)->cut = false;
		nr = 0;
	}
	if (!nr && !s->pool)
		return false;
	for (size_t i = 0; i < s->modules.cap; i++) {
		const struct sym_module *m = s->modules.slots[i].value;

		if (!m || !m->cut)
			continue;
		if (pr__sym_module_file_cut(m))
			pr__log(&s->lg, PR_LOG_WARN, "%s: the file (or its debug file) was cut "
				"short while this process had it mapped (rewritten in place: a cp "
				"over it?); named from what it holds now", m->origin);
		else
			pr__log(&s->lg, PR_LOG_WARN, "%s: its address index in the cache was "
				"cut short while this process had it mapped (by a program other "
				"than dwarfsample: the cache replaces its files whole); named from "
				"the file again", m->origin);
	}
	new_epoch(s);
	if (s->pool) {
		pr__table_free(s->slots, s->nr_slots * sizeof(*s->slots));
		s->slots = NULL;
		s->nr_slots = s->used_slots = 0;
	} else {
		trim_slots(s);
	}
	pr__hashmap_filter(&s->modules, module_uncut, s);
	return true;
}

/* At a trim, without a pool, the modules set aside go: nothing points
 * into them past it. */
static void free_cut(struct pr_symbolizer *s)
{
	if (s->pool)
		return;
	for (size_t i = 0; i < s->nr_cut; i++)
		pr__sym_module_free(s->cut[i]);
	s->nr_cut = 0;
}

void pr_symbolizer_free(struct pr_symbolizer *s)
{
	if (!s)
		return;
	if (s->user.arg)
		pr__model_unlisten(s->model, &s->user);
	pr__sym_index_fill_late(s);
	for (size_t i = 0; i < s->modules.cap; i++)
		pr__sym_module_free(s->modules.slots[i].value);
	pr__hashmap_free(&s->modules);
	for (size_t i = 0; i < s->nr_cut; i++)
		pr__sym_module_free(s->cut[i]);
	free(s->cut);
	for (size_t i = 0; i < s->perf_maps.cap; i++)
		pr__sym_perf_map_free(s->perf_maps.slots[i].value);
	pr__hashmap_free(&s->perf_maps);
	for (size_t i = 0; i < s->jitdumps.cap; i++)
		pr__sym_jitdump_free(s->jitdumps.slots[i].value);
	pr__hashmap_free(&s->jitdumps);
	pr__table_free(s->slots, s->nr_slots * sizeof(*s->slots));
	pr__sym_kernel_free(s);
	free((char *)s->cache_dir);
	pr__ixcache_free(s->ixcache);
	/* After the modules: each put its file. */
	pr__ixshare_put(s->ixshare);
	free(s->kallsyms_path);
	free(s);
}

/* Keep `sym` as the answer for (owner, addr), and give it. */
static int keep(struct pr_symbolizer *s, const void *owner, uint64_t addr,
		const struct pr_symbol *sym, struct pr_symbol *out)
{
	struct sym_slot *slot;
	int err = slots_reserve(s);

	if (err)
		return err;
	slot = slot_probe(s, owner, addr);
	slot->owner = owner;
	slot->addr = addr;
	slot->sym = *sym;
	s->used_slots++;
	*out = *sym;
	return 0;
}

/* What the frame's resolved slot is keyed by. */
static const void *frame_owner(const struct pr_symbolizer *s, const struct pr_frame *f,
			       uint64_t *addr)
{
	bool kernel = f->flags & PR_FRAME_KERNEL;

	*addr = kernel ? f->ip : f->dso_ip;
	return kernel ? (const void *)&s->ksyms : (const void *)f->dso;
}

void pr__symbolizer_prefetch(const struct pr_symbolizer *s, const struct pr_frame *f)
{
	uint64_t addr;
	const void *owner = frame_owner(s, f, &addr);

	if (s->slots && owner)
		__builtin_prefetch(&s->slots[slot_home(s, owner, addr)]);
}

static int symbolize(struct pr_symbolizer *s, uint32_t pid, const struct pr_frame *f,
		     struct pr_symbol *out);

/* The first byte of every name the answer points to, read here: one in
 * a page of an index whose file was cut short since is found now (the
 * read mended, pr__busguard_hits() moved), and the frame named again,
 * rather than printed with the zeros its caller would read.  (The
 * caller reads these bytes next: no load is wasted.) */
static void touch_names(const struct pr_symbolizer *s, const struct pr_symbol *sy)
{
	if (sy->name)
		(void)*(const volatile char *)sy->name;
	for (size_t k = 0; k < sy->nr; k++) {
		if (sy->funcs[k].name)
			(void)*(const volatile char *)sy->funcs[k].name;
		/* (Call sites' files are read when lines are shown.) */
		if (!s->no_lines && sy->funcs[k].file)
			(void)*(const volatile char *)sy->funcs[k].file;
	}
}

int pr_symbolizer_symbolize(struct pr_symbolizer *s, uint32_t pid, const struct pr_frame *f,
			struct pr_symbol *out)
{
	int err;

	if (!s || !f || !out)
		return -EINVAL;
	if (pr__busguard_hits() != s->bus_hits)
		drop_cut(s);
	/* (One call of symbolize(), which is then inlined here.) */
	for (bool again = false;; again = true) {
		err = symbolize(s, pid, f, out);
		if (!err)
			touch_names(s, out);
		/* Cut short while this frame was named: named again, from
		 * the file. */
		if (again || pr__busguard_hits() == s->bus_hits || !drop_cut(s))
			return err;
	}
}

static int symbolize(struct pr_symbolizer *s, uint32_t pid, const struct pr_frame *f,
		     struct pr_symbol *out)
{
	const struct pr_dso *d;
	const void *owner;
	uint64_t addr;
	struct sym_slot *slot;
	struct pr_symbol sym = { 0 };
	int err = 0;

	s->stats.lookups++;
	d = f->dso;
	owner = frame_owner(s, f, &addr);
	if (!owner) {
		memset(out, 0, sizeof(*out));
		return 0;
	}
	if (s->slots) {
		slot = slot_probe(s, owner, addr);
		if (slot->owner) {
			*out = slot->sym;
			return 0;
		}
	}
	if (owner == &s->ksyms) {
		err = pr__sym_resolve_kernel(s, addr, &sym);
	} else if (d->anon) {
		/* JIT maps are read again as they grow: resolved there,
		 * the process's jitdump first (it names moved and reused
		 * code, and has lines). */
		err = pr__sym_resolve_jitdump(s, pid, f, out);
		if (err || out->name)
			return err;
		return pr__sym_resolve_jit(s, pid, f, out);
	} else if (d->path[0] == '/' || !strcmp(d->path, "[vdso]")) {
		bool shared = s->pool && pr__sym_pool_eligible(d);
		struct sym_module *m;

		/* Resolved by another worker's symbolizer: its answer (none
		 * from a module of its whose file was cut since). */
		if (shared && pr__sym_pool_get(s->pool, d, addr, &sym))
			return keep(s, owner, addr, &sym, out);
		m = pr__sym_module_of(s, pid, f);
		err = m ? pr__sym_resolve_file(s, m, addr, &sym) : -ENOMEM;
		if (m)
			m->nr_results++;
		if (!err && shared)
			pr__sym_pool_put(s->pool, d, addr, &sym, m);
		if (!err)
			s->stats.resolved++;
		return err ? err : keep(s, owner, addr, &sym, out);
	} else {
		/* [heap], [stack] and the like: named, never symbolized. */
		sym.module = d->path;
	}
	if (err)
		return err;
	s->stats.resolved++;
	return keep(s, owner, addr, &sym, out);
}

void pr__symbolizer_share_indexes(struct pr_symbolizer *s, struct pr__ixshare *set)
{
	pr__ixshare_put(s->ixshare);
	s->ixshare = set ? pr__ixshare_get(set) : NULL;
}

void pr__symbolizer_use_index(struct pr_symbolizer *s, bool on)
{
	s->use_index = on;
	new_epoch(s);
}

uint64_t pr__symbolizer_epoch(const struct pr_symbolizer *s)
{
	return s->epoch;
}

int pr_symbolizer_stats(const struct pr_symbolizer *s, struct pr_symbolizer_stats *st)
{
	return s ? pr__stats_copy(st, &s->stats, sizeof(*st)) : -EINVAL;
}

