/* SPDX-License-Identifier: Apache-2.0 */
/*
 * A file's address index: the functions and inlined calls at every
 * address of its code, built once from its DWARF with libdw and then
 * searched without it (issue 32).
 *
 * Why.  libdw's per-address path costs a walk of unit headers
 * (dwarf_getaranges), DIE reads per scope, and allocations behind every
 * unit looked up, which grow with the addresses a long-running agent
 * names.  Read-only flat tables are a binary search per address, shared
 * by workers without a lock, and can be mapped from a file.
 *
 * Layout (in memory; on disk the same tables, little-endian, in
 * symindex_file.c's file, which the cache maps: symcache.c):
 *
 *   header    magic "DSIX", version, the file's build-id, the tables'
 *             counts (the file has its own header and checksum)
 *   strings   NUL-terminated names and source file names; an entry
 *             refers to one by its offset (IX_NONE: none)
 *   nodes     the flattened inline tree: a function, or an inlined call
 *             (or nested function) with the index of the node it is in
 *             (IX_NONE at the top), its name, and for an inlined call the
 *             file and line it was called from.  A top node keeps its
 *             entry pc and whether its DWARF name is qualified ("::", or
 *             Go), for the symbol's name to take its place as
 *             pr__sym_dwarf_chain() does.
 *   segments  disjoint address ranges sorted by start, each with the
 *             innermost node covering it: the chain is that node and its
 *             parents.  What libdw's path decides per address (which of
 *             overlapping functions wins, the first scope at each level in
 *             DIE order, lexical blocks looked through) is decided once
 *             per range, by cutting the code at every scope boundary and
 *             walking down once per piece with the walks symdwarf.c uses.
 *   lines     the innermost line: sorted addresses, each with a file (a
 *             string) and line that hold up to the next (file IX_NONE:
 *             none), as libdw's path answers (symlines.c says how).
 *             Built only when the symbolizer shows lines (a run that
 *             names alone does not read the units' line tables for it);
 *             the header's IX_HAS_LINES says whether it was.
 *   symbols   the file's ELF symbols, as symfile.c reads them, and
 *             addr2line's candidates: symindex_syms.c, which says why
 *   cover     of a partial index alone (below): the address ranges it
 *             answers for, sorted and disjoint
 *   units     ... and the units it was built from, by DIE offset, sorted
 *
 * Whole-file or lazy: whole.  Measured 2026-11-27 (bench/bench-symindex,
 * BENCHMARKS.md, issue 32): a build per compilation unit would walk most
 * units for even a short profile's addresses (74 of libperfreader.so's
 * 112, 38 of libasan's 84, at 200 addresses), costing about what libdw's
 * lazy path does and half the whole build; it would tie libdw's path in
 * an uncached one-shot run at best, keep libdw open until every unit is
 * built (what an agent cannot afford), and could not be cached whole.
 * The whole-file build is paid once per build-id when the cache
 * (symcache.c) keeps it; for any but a small file it costs a one-shot run
 * more than libdw's lazy path (libasan: 0.25 s against 0.09 s), so
 * libdw's path stays the default (-Dsymindex=false) and builds only the
 * indexes of files whose .debug_info is small (PR_IX_FILL_MAX).
 *
 * Partial, once named.  What an uncached one-shot run cannot afford, its
 * end can in part: the units libdw's path named addresses in, a few of a
 * large file's (a one-second run of the demo names 4-12 of libc's 2 063;
 * bench-symindex: 50 addresses walk 44).  symcache.c's fill at the end
 * builds the whole index when its estimated cost fits a tenth of the run,
 * else an index of those units (pr__symindex_build_units()).  It answers
 * only where no unit left out could hold the address (`cover`: the
 * complement of the left-out units' .debug_aranges entries, as libdwfl
 * extends them, and their own ranges; assuming, as DWARF requires, that a
 * unit's functions lie in its ranges), and there exactly as the whole
 * index does.  Elsewhere the symbolizer opens the file's DWARF after all
 * (symfile.c's pr__sym_module_reopen()) and names through libdw, and the
 * next fill grows the partial index by every unit holding those
 * addresses.  The index's path never serves a partial index: it builds
 * the whole one over it.
 *
 * Memory.  Closing the session (below) frees libdw's per-unit state: 1-2
 * MB of anonymous memory per file in bench-symindex -r 7 (every 7th byte
 * of the code named).  Most of what naming many addresses keeps is the
 * symbolizer's own (each resolved frame, its chain and names); the peak
 * of a one-shot run is the build's.
 *
 * How the symbolizer switches to it.  On every path, a file's index in
 * the cache (for its build-id and settings, with lines when they are
 * shown) is mapped when the file is first seen (symfile.c): its symbols
 * are taken from it, and neither the file, its DWARF nor its debug file is
 * opened with libdwfl.  Otherwise symdwarf.c builds the index when the
 * DWARF is first needed, with the line table when lines are shown, and
 * stores it: always on the index's path (pr__symbolizer_use_index();
 * meson -Dsymindex=true, DS_SYMINDEX=0/1), on libdw's for small files.
 * On the index's path the libdwfl session is then closed (libdw only to
 * build); a file without DWARF has its symbols stored alone.
 * tests/test-symindex.c holds the index to libdw's answers at every
 * address of the files it builds, lines included.
 *
 * On disk.  Mapped from the cache (symcache.c; the format,
 * symindex_file.c): the tables as they are, every entry checked when read
 * back (pr__symindex_adopt()).  An index without lines does not serve a
 * run that shows them: it is built again, with them, and replaces it.
 */
#include <dwarf.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "symbols/symdwarf.h"
#include "symbols/symindex.h"

#define IX_MAGIC "DSIX"
#define IX_VERSION 4
#define IX_NONE UINT32_MAX

enum {
	IX_INLINED = 1,              /* an inlined call */
	IX_RENAMABLE = 2,            /* a top whose name the symbol's may replace */
};

/* ix_header.flags */
enum {
	IX_HAS_LINES = 1,            /* the line table was built (it may be empty) */
};

struct ix_header {
	char magic[4];
	uint32_t version;
	uint8_t build_id[PR_BUILD_ID_MAX];
	uint32_t build_id_size;
	uint32_t nr_nodes;
	uint64_t nr_segs, strs_len;
	uint64_t nr_lines;
	uint32_t flags, pad;
};

struct ix_node {
	uint32_t name, parent;
	uint32_t call_file, call_line;
	uint64_t entry;
	uint32_t flags, pad;
};

/* An address range and its innermost node; `lo` first (pr__upper_bound). */
struct ix_seg {
	uint64_t lo;
	uint32_t len, node;
};

/* From `lo` up to the next entry's, the innermost line (file IX_NONE:
 * none). */
struct ix_line {
	uint64_t lo;
	uint32_t file, line;
};

/* A partial index's: addresses [lo, hi) it answers for, sorted and
 * disjoint; `lo` first (pr__upper_bound). */
struct ix_cover {
	uint64_t lo, hi;
};

struct pr__symindex {
	struct ix_header h;
	char *strs;
	struct ix_node *nodes;
	struct ix_seg *segs;
	/* Read from a file (symindex_file.c): the tables point into its
	 * bytes, `map` (NULL: the caller's) unmapped with the index. */
	bool read;
	void *map;
	size_t map_len;
	/* The mapping guarded against its file cut short (pr__busguard_add()):
	 * its slot, when `guarded`. */
	bool guarded;
	int guard;
	struct ix_line *lines;
	struct pr__ixsyms syms;
	/* Of a partial index (else NULL): where it answers, and the units
	 * it was built from. */
	struct ix_cover *cover;
	uint64_t *units;
	size_t nr_cover, nr_units;
};

/* ---- building ---- */

/* A range of a function a unit's walk found (symdwarf.c's cu_index). */
struct top {
	Dwarf_Addr lo, hi;
	Dwarf_Off die;
	uint32_t unit;
	bool assembler;
	Dwarf_Die cu;                /* the unit with the functions */
	struct cu_index *x;
};

/* A piece of code and the top range that has it. */
struct owned {
	Dwarf_Addr lo, hi;
	size_t top;
};

struct build {
	struct pr_symbolizer *s;
	struct sym_module *m;
	struct top *tops;
	size_t nr_tops, cap_tops;
	struct ix_node *nodes;
	size_t nr_nodes, cap_nodes;
	/* A node's DIE, while building: (unit, offset) is unique. */
	struct { Dwarf_Off die; uint32_t unit; } *ids;
	size_t cap_ids;
	struct pr_hashmap by_die;    /* DIE offset -> node + 1 (several units share offsets) */
	struct ix_seg *segs;
	size_t nr_segs, cap_segs;
	char *strs;
	size_t strs_len, cap_strs;
	struct pr_hashmap by_str;    /* an arena string's address -> offset + 1 */
	struct ix_line *lines;
	size_t nr_lines;
	/* A partial build's units (sorted DIE offsets; NULL: every one),
	 * and where the index answers. */
	const uint64_t *units;
	size_t nr_units;
	struct ix_cover *cover;
	size_t nr_cover, cap_cover;
	/* Where line tables and file names are read. */
	struct sym_side side;
};

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return (x > y) - (x < y);
}

/* Names and file names come interned from the module (one pointer each). */
static uint32_t str_of(struct build *b, const char *str)
{
	uintptr_t at = (uintptr_t)pr__hashmap_get(&b->by_str, (uintptr_t)str);
	size_t len;

	if (!str)
		return IX_NONE;
	if (at)
		return (uint32_t)(at - 1);
	len = strlen(str) + 1;
	if (b->strs_len + len >= IX_NONE || PR_ARRAY_RESERVE(b->strs, b->cap_strs, b->strs_len + len))
		return IX_NONE - 1;
	memcpy(b->strs + b->strs_len, str, len);
	at = b->strs_len;
	b->strs_len += len;
	if (pr__hashmap_put(&b->by_str, (uintptr_t)str, (void *)(at + 1)))
		return IX_NONE - 1;
	return (uint32_t)at;
}

/* The node of DIE `off` of top `t`'s unit, under `parent`, made the first
 * time: IX_NONE - 1 when out of memory. */
static uint32_t node_of(struct build *b, const struct top *t, Dwarf_Off off, uint32_t parent)
{
	size_t it = 0;
	void *v;
	Dwarf_Die die, cu = t->cu;
	struct ix_node n = { .parent = parent, .call_file = IX_NONE };
	const char *name, *file = NULL;
	uint32_t at;

	while ((v = pr__hashmap_next(&b->by_die, off, &it)))
		if (b->ids[(uintptr_t)v - 1].unit == t->unit)
			return (uint32_t)((uintptr_t)v - 1);
	if (b->nr_nodes >= IX_NONE - 1 || PR_ARRAY_RESERVE(b->nodes, b->cap_nodes, b->nr_nodes + 1) ||
	    PR_ARRAY_RESERVE(b->ids, b->cap_ids, b->nr_nodes + 1))
		return IX_NONE - 1;
	if (!dwarf_offdie(dwarf_cu_getdwarf(t->cu.cu), off, &die)) {
		n.name = IX_NONE;
	} else {
		name = pr__sym_func_name(b->s, b->m, &die);
		n.name = str_of(b, name);
		if (dwarf_tag(&die) == DW_TAG_inlined_subroutine) {
			n.flags |= IX_INLINED;
			pr__sym_call_site(b->m, &b->side, &cu, &die, &file, &n.call_line);
			n.call_file = str_of(b, file);
		}
		if (parent == IX_NONE && name &&
		    (strstr(name, "::") || dwarf_srclang(&cu) == DW_LANG_Go) &&
		    dwarf_entrypc(&die, &n.entry) == 0)
			n.flags |= IX_RENAMABLE;
	}
	if (n.name == IX_NONE - 1 || n.call_file == IX_NONE - 1)
		return IX_NONE - 1;
	at = (uint32_t)b->nr_nodes++;
	b->nodes[at] = n;
	b->ids[at].die = off;
	b->ids[at].unit = t->unit;
	if (pr__hashmap_add(&b->by_die, off, (void *)((uintptr_t)at + 1)))
		return IX_NONE - 1;
	return at;
}

static int add_seg(struct build *b, uint64_t lo, uint64_t hi, uint32_t node)
{
	while (lo < hi) {
		uint64_t len = hi - lo < UINT32_MAX ? hi - lo : UINT32_MAX;

		if (PR_ARRAY_RESERVE(b->segs, b->cap_segs, b->nr_segs + 1))
			return -ENOMEM;
		b->segs[b->nr_segs++] = (struct ix_seg){ lo, (uint32_t)len, node };
		lo += len;
	}
	return 0;
}

/* Every unit's functions' ranges, as pr__sym_cu_index() reads them. */
static int read_units(struct build *b)
{
	Dwarf_CU *cu = NULL, *next;
	Dwarf_Die cudie, split;
	Dwarf_Half version;
	uint8_t type;
	uint32_t unit = 0;

	while (dwarf_get_units(b->m->dwarf, cu, &next, &version, &type, &cudie, NULL) == 0) {
		Dwarf_Die *u;
		struct cu_index *x;

		cu = next;
		if (type != DW_UT_compile && type != DW_UT_skeleton && type != DW_UT_partial)
			continue;
		/* Numbered as in a whole build: it breaks ties by the order. */
		unit++;
		/* A partial build's: of its compile units, no imported one
		 * (libdw's path finds an address's unit by its ranges, which
		 * an imported unit has none of). */
		if (b->units && (type == DW_UT_partial ||
				 !pr__sym_unit_in(b->units, b->nr_units, dwarf_dieoffset(&cudie))))
			continue;
		u = pr__sym_unit_with_functions(&cudie, &split);
		if (!(x = pr__sym_cu_index(b->m, u)))
			return -ENOMEM;
		for (size_t i = 0; i < x->nr; i++) {
			if (x->r[i].lo >= x->r[i].hi)
				continue;
			if (PR_ARRAY_RESERVE(b->tops, b->cap_tops, b->nr_tops + 1))
				return -ENOMEM;
			b->tops[b->nr_tops++] = (struct top){
				.lo = x->r[i].lo, .hi = x->r[i].hi, .die = x->r[i].die,
				.unit = unit, .cu = *u, .x = x,
				.assembler = dwarf_srclang(u) == DW_LANG_Mips_Assembler };
		}
	}
	return 0;
}

/* Of the top ranges in `active`, the one libdw's path picks: the last
 * to start (then the last in DIE order); in an assembler unit the
 * smallest of its unit's (then the last), as last_alias() picks. */
static size_t pick_top(const struct build *b, const size_t *active, size_t nr)
{
	size_t best = active[0];

	for (size_t i = 1; i < nr; i++) {
		const struct top *t = &b->tops[active[i]], *o = &b->tops[best];

		if (t->lo > o->lo || (t->lo == o->lo && (t->unit > o->unit ||
		    (t->unit == o->unit && t->die > o->die))))
			best = active[i];
	}
	if (!b->tops[best].assembler)
		return best;
	for (size_t i = 0; i < nr; i++) {
		const struct top *t = &b->tops[active[i]], *o = &b->tops[best];

		if (t->unit == o->unit && (t->hi - t->lo < o->hi - o->lo ||
		    (t->hi - t->lo == o->hi - o->lo && t->die > o->die)))
			best = active[i];
	}
	return best;
}

static int by_top_lo(const void *a, const void *b, void *arg)
{
	const struct top *t = arg;
	size_t x = *(const size_t *)a, y = *(const size_t *)b;

	return (t[x].lo > t[y].lo) - (t[x].lo < t[y].lo);
}

/* The code cut where any top range starts or ends, each piece given to
 * the range picked for it, into *out (pieces of one range merged). */
static int own_code(struct build *b, struct owned **out, size_t *nr_out)
{
	size_t nr_bounds = 2 * b->nr_tops, nr_active = 0, next = 0, cap = 0, nr = 0;
	uint64_t *bounds = malloc((nr_bounds + 1) * sizeof(*bounds));
	size_t *order = malloc((b->nr_tops + 1) * sizeof(*order));
	size_t *active = malloc((b->nr_tops + 1) * sizeof(*active));
	struct owned *own = NULL;
	int err = -ENOMEM;

	if (!bounds || !order || !active)
		goto out;
	for (size_t i = 0; i < b->nr_tops; i++) {
		bounds[2 * i] = b->tops[i].lo;
		bounds[2 * i + 1] = b->tops[i].hi;
		order[i] = i;
	}
	qsort(bounds, nr_bounds, sizeof(*bounds), cmp_u64);
	qsort_r(order, b->nr_tops, sizeof(*order), by_top_lo, b->tops);
	for (size_t i = 0; i + 1 < nr_bounds; i++) {
		uint64_t lo = bounds[i], hi = bounds[i + 1];
		size_t k = 0, pick;

		if (lo == hi)
			continue;
		while (next < b->nr_tops && b->tops[order[next]].lo <= lo)
			active[nr_active++] = order[next++];
		for (size_t j = 0; j < nr_active; j++)
			if (b->tops[active[j]].hi > lo)
				active[k++] = active[j];
		nr_active = k;
		if (!nr_active)
			continue;
		pick = pick_top(b, active, nr_active);
		if (nr && own[nr - 1].top == pick && own[nr - 1].hi == lo) {
			own[nr - 1].hi = hi;
			continue;
		}
		if (PR_ARRAY_RESERVE(own, cap, nr + 1))
			goto out;
		own[nr++] = (struct owned){ lo, hi, pick };
	}
	*out = own;
	*nr_out = nr;
	own = NULL;
	err = 0;
out:
	free(own);
	free(bounds);
	free(order);
	free(active);
	return err;
}

/* The innermost node at `pc` in function `f` of top `t` (node `top`): at
 * each level the first scope holding it in DIE order, lexical blocks
 * looked through, as symdwarf.c's fn_scope_path() walks. */
static uint32_t innermost(struct build *b, const struct top *t, const struct fn_scopes *f,
			  uint32_t top, uint64_t pc)
{
	size_t j = 0, end = f->nr;
	uint32_t node = top;

	for (int depth = 1; depth < MAX_INLINE && j < end;) {
		const struct fn_scope *sc = &f->s[j];

		if (!pr__sym_fn_scope_has(f, sc, pc)) {
			j = sc->end;
			continue;
		}
		if (!sc->lexical) {
			node = node_of(b, t, sc->die, node);
			if (node == IX_NONE - 1)
				return node;
			depth++;
		}
		end = sc->end;
		j++;
	}
	return node;
}

/* Piece `o` of the code cut where its function's scopes start and end,
 * each piece into a segment with its innermost node. */
static int index_piece(struct build *b, const struct owned *o)
{
	const struct top *t = &b->tops[o->top];
	const struct fn_scopes *f;
	Dwarf_Die fn;
	uint64_t *cuts;
	size_t nr = 0;
	uint32_t top = node_of(b, t, t->die, IX_NONE);
	int err = 0;

	if (top == IX_NONE - 1)
		return -ENOMEM;
	if (!dwarf_offdie(dwarf_cu_getdwarf(t->cu.cu), t->die, &fn) ||
	    !(f = pr__sym_fn_scopes(b->m, t->x, &fn)))
		return add_seg(b, o->lo, o->hi, top);
	if (!(cuts = malloc((2 * f->nr_r + 2) * sizeof(*cuts))))
		return -ENOMEM;
	cuts[nr++] = o->lo;
	cuts[nr++] = o->hi;
	for (size_t i = 0; i < f->nr_r; i++) {
		if (f->r[i].lo > o->lo && f->r[i].lo < o->hi)
			cuts[nr++] = f->r[i].lo;
		if (f->r[i].hi > o->lo && f->r[i].hi < o->hi)
			cuts[nr++] = f->r[i].hi;
	}
	qsort(cuts, nr, sizeof(*cuts), cmp_u64);
	for (size_t i = 0; !err && i + 1 < nr; i++) {
		uint32_t node;

		if (cuts[i] == cuts[i + 1])
			continue;
		node = innermost(b, t, f, top, cuts[i]);
		err = node == IX_NONE - 1 ? -ENOMEM : add_seg(b, cuts[i], cuts[i + 1], node);
	}
	free(cuts);
	return err;
}

/* Every piece, each function's scopes freed once its last piece is
 * indexed: held for every function at once, they were a fifth of a
 * large file's build (13 of libpython3.11's 80 MB; libdw's line tables
 * are most of the rest, and stay until the file's DWARF is closed).
 * Pieces are counted by their function's DIE offset alone: of two
 * functions of different units at the same offset (split units), the
 * scopes of the one whose piece comes last are freed after the last
 * piece of either, the other's stay until the file's DWARF closes; a
 * function's scopes asked for again are made again. */
static int index_pieces(struct build *b, const struct owned *own, size_t nr)
{
	struct pr_hashmap left = { 0 };
	int err = 0;

	for (size_t i = 0; !err && i < nr; i++) {
		Dwarf_Off die = b->tops[own[i].top].die;
		uintptr_t n = (uintptr_t)pr__hashmap_get(&left, die);

		err = pr__hashmap_put(&left, die, (void *)(n + 1)) ? -ENOMEM : 0;
	}
	for (size_t i = 0; !err && i < nr; i++) {
		const struct top *t = &b->tops[own[i].top];
		uintptr_t n = (uintptr_t)pr__hashmap_get(&left, t->die);

		err = index_piece(b, &own[i]);
		if (n <= 1)
			pr__sym_fn_scopes_drop(b->m, t->x, t->die);
		else if (!err && pr__hashmap_put(&left, t->die, (void *)(n - 1)))
			err = -ENOMEM;
	}
	pr__hashmap_free(&left);
	return err;
}

/* The line table, its file names among the strings: sym_line, the
 * larger, is converted in place (entry i read before it is written,
 * which touches no later one), then the array shrunk. */
static int read_lines(struct build *b)
{
	struct sym_line *v;
	size_t nr;
	int err;

	pr__sym_side_pass(&b->side);
	err = pr__sym_lines_read(b->m, &b->side, b->units, b->nr_units, &v, &nr);

	_Static_assert(sizeof(struct sym_line) >= sizeof(struct ix_line), "converted in place");
	if (err)
		return err;
	b->lines = (struct ix_line *)v;
	b->nr_lines = nr;
	for (size_t i = 0; i < nr; i++) {
		struct sym_line l = v[i];
		uint32_t file = str_of(b, l.file);

		if (file == IX_NONE - 1)
			return -ENOMEM;
		b->lines[i] = (struct ix_line){ l.lo, file, l.line };
	}
	if (nr && (v = realloc(b->lines, nr * sizeof(*b->lines))))
		b->lines = (struct ix_line *)v;
	return 0;
}

int pr__symindex_unit_ranges(struct sym_module *m, pr__symindex_range_fn fn, void *arg)
{
	Dwarf_Aranges *ar;
	size_t nr = 0, nr_spans;
	const struct cu_span *sp = pr__sym_cu_spans(m, &nr_spans);
	int err = 0;

	if (dwarf_getaranges(m->dwarf, &ar, &nr))
		nr = 0;
	for (size_t i = 0; !err && i < nr; i++) {
		uint64_t lo, hi, end;
		Dwarf_Off off;

		if (!pr__sym_arange(ar, nr, i, &lo, &hi, &end, &off))
			return -EINVAL;
		err = fn(lo, hi > end ? hi : end, off, arg);
	}
	for (size_t i = 0; !err && i < nr_spans; i++)
		err = fn(sp[i].lo, sp[i].hi, sp[i].die, arg);
	return err;
}

/* pr__symindex_range_fn: [lo, hi) into b->cover when unit `off` is
 * left out (made where the index answers by read_cover()). */
static int left_out(uint64_t lo, uint64_t hi, uint64_t off, void *arg)
{
	struct build *b = arg;

	if (lo >= hi || pr__sym_unit_in(b->units, b->nr_units, off))
		return 0;
	if (PR_ARRAY_RESERVE(b->cover, b->cap_cover, b->nr_cover + 1))
		return -ENOMEM;
	b->cover[b->nr_cover++] = (struct ix_cover){ lo, hi };
	return 0;
}

static int by_cover_lo(const void *a, const void *b)
{
	const struct ix_cover *x = a, *y = b;

	return (x->lo > y->lo) - (x->lo < y->lo);
}

/* Where a partial index answers: every address no unit left out holds
 * (pr__symindex_unit_ranges()).  b->cover holds what those units hold
 * first, then what is between. */
static int read_cover(struct build *b)
{
	uint64_t from = 0;
	size_t k = 0;
	int err = pr__symindex_unit_ranges(b->m, left_out, b);

	if (err)
		return err;
	if (b->nr_cover)
		qsort(b->cover, b->nr_cover, sizeof(*b->cover), by_cover_lo);
	/* The gaps between, in place: entry i is read before gap k <= i is
	 * written.  One more for the gap after the last. */
	if (PR_ARRAY_RESERVE(b->cover, b->cap_cover, b->nr_cover + 1))
		return -ENOMEM;
	for (size_t i = 0; i < b->nr_cover; i++) {
		struct ix_cover c = b->cover[i];

		if (c.lo > from)
			b->cover[k++] = (struct ix_cover){ from, c.lo };
		from = c.hi > from ? c.hi : from;
	}
	if (from < UINT64_MAX)
		b->cover[k++] = (struct ix_cover){ from, UINT64_MAX };
	b->nr_cover = k;
	return 0;
}

static int by_seg_lo(const void *a, const void *b)
{
	const struct ix_seg *x = a, *y = b;

	return (x->lo > y->lo) - (x->lo < y->lo);
}

static void build_free(struct build *b)
{
	free(b->tops);
	free(b->nodes);
	free(b->ids);
	free(b->segs);
	free(b->strs);
	free(b->lines);
	free(b->cover);
	pr__hashmap_free(&b->by_die);
	pr__hashmap_free(&b->by_str);
	pr__sym_side_end(&b->side);
}

/* The header of module `m`'s index. */
static void stamp(struct pr__symindex *ix, const struct sym_module *m)
{
	memcpy(ix->h.magic, IX_MAGIC, 4);
	ix->h.version = IX_VERSION;
	if (m->elf && m->elf->build_id_size <= PR_BUILD_ID_MAX) {
		memcpy(ix->h.build_id, m->elf->build_id, m->elf->build_id_size);
		ix->h.build_id_size = (uint32_t)m->elf->build_id_size;
	}
}

struct pr__symindex *pr__symindex_build_symbols(struct sym_module *m)
{
	struct pr__symindex *ix = calloc(1, sizeof(*ix));

	if (!ix || pr__ixsyms_build(m, false, &ix->syms)) {
		free(ix);
		errno = ENOMEM;
		return NULL;
	}
	stamp(ix, m);
	return ix;
}

bool pr__symindex_has_dwarf(const struct pr__symindex *ix)
{
	return ix->syms.dwarf;
}

struct pr__symindex *pr__symindex_build(struct pr_symbolizer *s, struct sym_module *m)
{
	return pr__symindex_build_units(s, m, NULL, 0);
}

struct pr__symindex *pr__symindex_build_units(struct pr_symbolizer *s, struct sym_module *m,
					      const uint64_t *units, size_t nr)
{
	struct build b = { .s = s, .m = m, .units = units, .nr_units = nr };
	struct pr__symindex *ix = NULL;
	struct owned *own = NULL;
	size_t nr_own = 0, k = 0;
	int err;

	if (!m->mod || !pr__sym_dwarf_open(s, m)) {
		errno = ENOENT;
		return NULL;
	}
	b.side.main = m->dwarf;
	b.side.max = s->side_max_bytes;
	err = units ? read_cover(&b) : 0;
	if (!err)
		err = read_units(&b);
	if (!err)
		err = own_code(&b, &own, &nr_own);
	if (!err)
		err = index_pieces(&b, own, nr_own);
	free(own);
	if (!err && !s->no_lines)
		err = read_lines(&b);
	if (err || !(ix = calloc(1, sizeof(*ix))) || pr__ixsyms_build(m, true, &ix->syms))
		goto fail;
	if (units) {
		if (!(ix->units = malloc((nr ? nr : 1) * sizeof(*units))))
			goto fail;
		if (nr)
			memcpy(ix->units, units, nr * sizeof(*units));
		ix->nr_units = nr;
		ix->cover = b.cover;
		ix->nr_cover = b.nr_cover;
		b.cover = NULL;
	}
	/* Sorted, and neighbours with the same node made one. */
	if (b.nr_segs)
		qsort(b.segs, b.nr_segs, sizeof(*b.segs), by_seg_lo);
	for (size_t i = 0; i < b.nr_segs; i++) {
		struct ix_seg *p = k ? &b.segs[k - 1] : NULL;

		if (p && p->node == b.segs[i].node && p->lo + p->len == b.segs[i].lo &&
		    (uint64_t)p->len + b.segs[i].len < UINT32_MAX)
			p->len += b.segs[i].len;
		else
			b.segs[k++] = b.segs[i];
	}
	stamp(ix, m);
	ix->h.nr_nodes = (uint32_t)b.nr_nodes;
	ix->h.nr_segs = k;
	ix->h.strs_len = b.strs_len;
	ix->h.nr_lines = b.nr_lines;
	ix->h.flags = s->no_lines ? 0 : IX_HAS_LINES;
	ix->strs = b.strs;
	ix->nodes = b.nodes;
	ix->segs = b.segs;
	ix->lines = b.lines;
	b.strs = NULL;
	b.nodes = NULL;
	b.segs = NULL;
	b.lines = NULL;
	s->side_begun += b.side.begun;
	s->side_again += b.side.again;
	build_free(&b);
	return ix;
fail:
	build_free(&b);
	if (ix)
		pr__ixsyms_free(&ix->syms);
	free(ix ? ix->units : NULL);
	free(ix);
	errno = err == -EINVAL ? EINVAL : ENOMEM;
	return NULL;
}

void pr__symindex_free(struct pr__symindex *ix)
{
	if (!ix)
		return;
	pr__ixsyms_free(&ix->syms);
	if (ix->read) {
		if (ix->guarded)
			pr__busguard_remove(ix->guard);
		if (ix->map)
			munmap(ix->map, ix->map_len);
		free(ix);
		return;
	}
	free(ix->strs);
	free(ix->nodes);
	free(ix->segs);
	free(ix->lines);
	free(ix->cover);
	free(ix->units);
	free(ix);
}

void pr__symindex_guarded(struct pr__symindex *ix, int slot)
{
	ix->guarded = true;
	ix->guard = slot;
}

bool pr__symindex_cut(const struct pr__symindex *ix)
{
	return ix->guarded && pr__busguard_hit(ix->guard);
}

void pr__symindex_release_pages(const struct pr__symindex *ix)
{
	if (ix->read && ix->map)
		madvise(ix->map, ix->map_len, MADV_DONTNEED);
}

size_t pr__symindex_bytes(const struct pr__symindex *ix)
{
	return sizeof(*ix) + ix->h.strs_len + ix->h.nr_nodes * sizeof(*ix->nodes) +
	       ix->h.nr_segs * sizeof(*ix->segs) + ix->h.nr_lines * sizeof(*ix->lines) +
	       ix->nr_cover * sizeof(*ix->cover) + ix->nr_units * sizeof(*ix->units) +
	       pr__ixsyms_bytes(&ix->syms);
}

const struct pr__ixsyms *pr__symindex_syms(const struct pr__symindex *ix)
{
	return &ix->syms;
}

/* ---- as a file's tables (symindex_file.c) ---- */

uint32_t pr__symindex_layout(void)
{
	return IX_VERSION;
}

size_t pr__symindex_tables(const struct pr__symindex *ix, struct pr__ix_table *t)
{
	size_t nr = 0;

	t[nr++] = (struct pr__ix_table){ PR_IX_STRINGS, 1, ix->h.strs_len, ix->strs };
	t[nr++] = (struct pr__ix_table){ PR_IX_NODES, sizeof(*ix->nodes), ix->h.nr_nodes,
					 ix->nodes };
	t[nr++] = (struct pr__ix_table){ PR_IX_SEGMENTS, sizeof(*ix->segs), ix->h.nr_segs,
					 ix->segs };
	if (pr__symindex_has_lines(ix))
		t[nr++] = (struct pr__ix_table){ PR_IX_LINES, sizeof(*ix->lines), ix->h.nr_lines,
						 ix->lines };
	if (ix->cover) {
		t[nr++] = (struct pr__ix_table){ PR_IX_COVER, sizeof(*ix->cover), ix->nr_cover,
						 ix->cover };
		t[nr++] = (struct pr__ix_table){ PR_IX_UNITS, sizeof(*ix->units), ix->nr_units,
						 ix->units };
	}
	return nr + pr__ixsyms_tables(&ix->syms, t + nr);
}

/* A string offset of an entry: none, or inside the table (whose last
 * byte is a NUL, so that the string ends there at the latest). */
static bool str_ok(const struct pr__symindex *ix, uint32_t off)
{
	return off == IX_NONE || off < ix->h.strs_len;
}

/* Whether the tables are what a build makes: every reference inside its
 * table, parents before their children (no cycle), segments sorted and
 * disjoint; *why says what is not. */
static bool tables_sound(const struct pr__symindex *ix, const char **why)
{
	const uint32_t known = IX_INLINED | IX_RENAMABLE;

	if (ix->h.strs_len && ix->strs[ix->h.strs_len - 1]) {
		*why = "its last string is not terminated";
		return false;
	}
	for (uint32_t i = 0; i < ix->h.nr_nodes; i++) {
		const struct ix_node *n = &ix->nodes[i];

		if (!str_ok(ix, n->name) || !str_ok(ix, n->call_file) || (n->flags & ~known) ||
		    (n->parent != IX_NONE && n->parent >= i)) {
			*why = "a node refers outside its tables";
			return false;
		}
	}
	for (uint64_t i = 0; i < ix->h.nr_segs; i++) {
		const struct ix_seg *g = &ix->segs[i];

		if (!g->len || g->node >= ix->h.nr_nodes || g->lo + g->len < g->lo ||
		    (i && g->lo < ix->segs[i - 1].lo + ix->segs[i - 1].len)) {
			*why = "its segments are not sorted, disjoint ranges of its nodes";
			return false;
		}
	}
	for (uint64_t i = 0; i < ix->h.nr_lines; i++) {
		const struct ix_line *l = &ix->lines[i];

		if (!str_ok(ix, l->file) || (i && l->lo < ix->lines[i - 1].lo)) {
			*why = "its lines are not in address order, or name no file of its strings";
			return false;
		}
	}
	for (size_t i = 0; i < ix->nr_cover; i++)
		if (ix->cover[i].lo >= ix->cover[i].hi ||
		    (i && ix->cover[i].lo < ix->cover[i - 1].hi)) {
			*why = "where it answers is not sorted, disjoint ranges";
			return false;
		}
	for (size_t i = 1; i < ix->nr_units; i++)
		if (ix->units[i] <= ix->units[i - 1]) {
			*why = "its units are not in order";
			return false;
		}
	return true;
}

struct pr__symindex *pr__symindex_adopt(const struct pr__ix_table *t, size_t nr, void *map,
					size_t map_len, bool written, const char **why)
{
	struct pr__symindex *ix = calloc(1, sizeof(*ix));
	bool seen[PR_IX_MAX_TABLES] = { false };

	if (!ix)
		return NULL;
	ix->read = true;
	for (size_t i = 0; i < nr; i++) {
		size_t want = t[i].kind == PR_IX_STRINGS ? 1 : t[i].kind == PR_IX_NODES ?
			      sizeof(*ix->nodes) : t[i].kind == PR_IX_SEGMENTS ? sizeof(*ix->segs) :
			      t[i].kind == PR_IX_LINES ? sizeof(*ix->lines) :
			      t[i].kind == PR_IX_COVER ? sizeof(*ix->cover) :
			      t[i].kind == PR_IX_UNITS ? sizeof(*ix->units) : 0;

		if (t[i].kind >= PR_IX_MAX_TABLES || seen[t[i].kind] ||
		    (want ? t[i].entry_size != want : pr__ixsyms_adopt(&ix->syms, &t[i]))) {
			*why = "a table of a kind or size this version does not read";
			goto bad;
		}
		seen[t[i].kind] = true;
		if (!want) {
			continue;
		} else if (t[i].kind == PR_IX_STRINGS) {
			ix->strs = (char *)t[i].base;
			ix->h.strs_len = t[i].count;
		} else if (t[i].kind == PR_IX_NODES) {
			if (t[i].count >= IX_NONE - 1) {
				*why = "too many nodes";
				goto bad;
			}
			ix->nodes = (struct ix_node *)t[i].base;
			ix->h.nr_nodes = (uint32_t)t[i].count;
		} else if (t[i].kind == PR_IX_SEGMENTS) {
			ix->segs = (struct ix_seg *)t[i].base;
			ix->h.nr_segs = t[i].count;
		} else if (t[i].kind == PR_IX_COVER) {
			ix->cover = (struct ix_cover *)t[i].base;
			ix->nr_cover = t[i].count;
		} else if (t[i].kind == PR_IX_UNITS) {
			ix->units = (uint64_t *)t[i].base;
			ix->nr_units = t[i].count;
		} else {
			ix->lines = (struct ix_line *)t[i].base;
			ix->h.nr_lines = t[i].count;
			ix->h.flags |= IX_HAS_LINES;
		}
	}
	/* Without addr2line's table, of a file without DWARF: no functions. */
	if (!seen[PR_IX_STRINGS] || !seen[PR_IX_NODES] || !seen[PR_IX_SEGMENTS] ||
	    !seen[PR_IX_SYMBOLS] || !seen[PR_IX_SYMBOL_NAMES] ||
	    (!seen[PR_IX_A2L] && (ix->h.nr_nodes || ix->h.nr_segs || ix->h.nr_lines)) ||
	    seen[PR_IX_COVER] != seen[PR_IX_UNITS]) {
		*why = "a table is missing";
		goto bad;
	}
	/* A partial index's tables are there, maybe empty: never NULL. */
	if (seen[PR_IX_COVER] && (!ix->cover || !ix->units)) {
		static const uint64_t none[2];

		ix->cover = ix->cover ? ix->cover : (struct ix_cover *)none;
		ix->units = ix->units ? ix->units : (uint64_t *)none;
	}
	if (!written && (!tables_sound(ix, why) || !pr__ixsyms_sound(&ix->syms, why)))
		goto bad;
	memcpy(ix->h.magic, IX_MAGIC, 4);
	ix->h.version = IX_VERSION;
	ix->map = map;
	ix->map_len = map_len;
	return ix;
bad:
	free(ix);
	errno = EINVAL;
	return NULL;
}

/* ---- looking up ---- */

static const char *str_at(const struct pr__symindex *ix, uint32_t off)
{
	return off < ix->h.strs_len ? ix->strs + off : NULL;
}

size_t pr__symindex_chain(const struct pr__symindex *ix, uint64_t pc, bool no_lines,
			  const char *sym_name, uint64_t sym_start, struct pr_sym_func *funcs)
{
	size_t i = pr__upper_bound(ix->segs, ix->h.nr_segs, sizeof(*ix->segs), pc), nr = 0;
	const char *file = NULL;
	uint32_t line = 0, node;

	if (!i || pc - ix->segs[i - 1].lo >= ix->segs[i - 1].len)
		return 0;
	for (node = ix->segs[i - 1].node; node < ix->h.nr_nodes && nr < MAX_INLINE;
	     node = ix->nodes[node].parent) {
		const struct ix_node *n = &ix->nodes[node];
		const char *name = str_at(ix, n->name);

		if (n->parent == IX_NONE && (n->flags & IX_RENAMABLE) && name && sym_name &&
		    strcmp(name, sym_name) && n->entry == sym_start)
			name = sym_name;
		funcs[nr++] = (struct pr_sym_func){ .name = name, .file = file, .line = line,
						    .inlined = n->flags & IX_INLINED };
		if ((n->flags & IX_INLINED) && !no_lines) {
			file = str_at(ix, n->call_file);
			line = n->call_line;
		}
	}
	return nr;
}

bool pr__symindex_line(const struct pr__symindex *ix, uint64_t pc, const char **file,
		       uint32_t *line)
{
	size_t i = pr__upper_bound(ix->lines, ix->h.nr_lines, sizeof(*ix->lines), pc);

	*file = NULL;
	*line = 0;
	if (!pr__symindex_has_lines(ix))
		return false;
	if (i && (*file = str_at(ix, ix->lines[i - 1].file)))
		*line = ix->lines[i - 1].line;
	return true;
}

bool pr__symindex_partial(const struct pr__symindex *ix)
{
	return ix->cover != NULL;
}

bool pr__symindex_covers(const struct pr__symindex *ix, uint64_t pc)
{
	size_t i;

	if (!ix->cover)
		return true;
	i = pr__upper_bound(ix->cover, ix->nr_cover, sizeof(*ix->cover), pc);
	return i && pc < ix->cover[i - 1].hi;
}

size_t pr__symindex_units(const struct pr__symindex *ix, const uint64_t **units)
{
	*units = ix->units;
	return ix->nr_units;
}

bool pr__symindex_has_lines(const struct pr__symindex *ix)
{
	return ix->h.flags & IX_HAS_LINES;
}
