/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The DWARF walks of symdwarf.c that the address index (symindex.c)
 * builds from: one per unit (its functions' ranges and the scopes that
 * qualify their names), one per function (its inlined calls and blocks),
 * and the names and call sites read as the symbolizer reads them, so
 * that the index answers as libdw's path does.
 */
#ifndef PR_SYMDWARF_H
#define PR_SYMDWARF_H

#include <elfutils/libdw.h>

#include "symbols/symbolizer.h"

/*
 * The function an address is in, and the names of the scopes around a
 * function's declaration, from one walk of each CU (the first time an
 * address falls in it).  Functions with code sit at the top of a C CU,
 * but clang puts a C++ function template's instances in their namespace,
 * and rustc every function in its module's (DW_TAG_namespace); methods
 * may sit in their class.  So the walk descends into namespaces and types,
 * not into functions (what nests there is found from the function, by
 * scope_path()).  A C++ CU has thousands of DIEs (types, declarations,
 * templates): walking them for every new address was most of a live
 * profile's CPU; read once, sorted and searched, they are not.
 */
struct cu_range {
	Dwarf_Addr lo, hi;
	Dwarf_Off die;
};

/* A namespace, class, structure or union: the DIEs from `start` to `end`
 * (its children, theirs, ...) are in it.  In the order of the CU. */
struct cu_scope {
	Dwarf_Off start, end;
	const char *name;            /* NULL: anonymous */
	int32_t parent;              /* index, -1: the CU */
	int tag;
};

struct cu_index {
	struct cu_range *r;
	struct cu_scope *scopes;
	size_t nr, cap, nr_scopes, cap_scopes;
	/* Its functions' scopes, by the function's DIE offset + 1, made as
	 * addresses fall in them (pr__sym_fn_scopes()). */
	struct pr_hashmap fns;
};

/*
 * The scopes inside one function (inlined calls, nested functions,
 * lexical blocks), from one walk of its DIEs the first time an address
 * falls in it.  scope_path() walks them with libdw for every address,
 * skipping over every DIE between the ones it wants: a C++ function built
 * with -O2 holds hundreds of inlined calls, and a profile finds a dozen
 * addresses or more in each of its hot functions.  In DIE order, each
 * with the end of its subtree, so that the scopes around an address are
 * found visiting only the scopes at each level on the way down.
 */
struct fn_scope {
	Dwarf_Off die;
	uint32_t end;                /* index past its subtree */
	uint32_t range, nr_ranges;   /* into fn_scopes.r */
	bool lexical;
};

struct fn_range {
	Dwarf_Addr lo, hi;
};

struct fn_scopes {
	struct fn_scope *s;
	struct fn_range *r;
	size_t nr, cap, nr_r, cap_r;
};

static inline bool pr__sym_fn_scope_has(const struct fn_scopes *f, const struct fn_scope *sc,
					Dwarf_Addr pc)
{
	for (uint32_t i = 0; i < sc->nr_ranges; i++)
		if (pc >= f->r[sc->range + i].lo && pc < f->r[sc->range + i].hi)
			return true;
	return false;
}

/* The units' own address ranges, sorted by start (read once): where
 * symdwarf.c looks for the unit of an address libdwfl finds none for. */
struct cu_span {
	Dwarf_Addr lo, hi;
	Dwarf_Off die;
};

const struct cu_span *pr__sym_cu_spans(struct sym_module *m, size_t *nr);

/* The innermost line from `lo` up to the next row's start (symlines.c). */
struct sym_line {
	uint64_t lo;
	const char *file;            /* interned in the module; NULL: no line */
	uint32_t line;
};

/* Entry `i` of the `nr` of .debug_aranges `ar`: its start *lo and end
 * *end, its unit's DIE offset, and where libdwfl keeps that unit up to
 * (the next entry's start; past the last one's end) in *hi.  false when
 * it cannot be read. */
bool pr__sym_arange(Dwarf_Aranges *ar, size_t nr, size_t i, uint64_t *lo, uint64_t *hi,
		    uint64_t *end, Dwarf_Off *unit);

/* Whether unit `off` (its DIE's offset) is among `units` (sorted, `nr`;
 * NULL: all of them). */
static inline bool pr__sym_unit_in(const uint64_t *units, size_t nr, uint64_t off)
{
	size_t i;

	if (!units)
		return true;
	i = pr__upper_bound(units, nr, sizeof(*units), off);
	return i && units[i - 1] == off;
}

/*
 * Where a build of a file's index reads the units' line tables and file
 * names: a Dwarf of its own over the module's ELF file, ended and begun
 * again before a unit it has not read once what it holds passes a few
 * MiB, as long as reading units again costs at most twice the first
 * reading (symlines.c's side_unit()).  libdw keeps every line table
 * read until its Dwarf ends, and reading a unit's file names reads its
 * whole line table: through the module's own Dwarf, a whole build held
 * all of them at once (31 of the 80 MB libpython3.11's build peaked at).
 * A unit of another Dwarf (a split unit, a dwz file's) is read through
 * that one, as before.  What it gives is used before the next call.
 */
struct sym_side {
	Dwarf *main, *dbg;
	uint64_t bytes;              /* libdw's, estimated, since dbg began */
	uint64_t max;                /* 0: SIDE_MAX_BYTES */
	struct pr_hashmap live;      /* units dbg holds (DIE offset) */
	struct pr_hashmap seen;      /* units read in this pass */
	uint64_t first_bytes, again_bytes; /* this pass's: read first, again */
	uint64_t begun, again;       /* times dbg was begun; units read again */
};
/* Unit `cu`'s line table through `sd` (NULL: `cu`'s own Dwarf): 0 or -1,
 * as dwarf_getsrclines(). */
int pr__sym_side_lines(struct sym_side *sd, Dwarf_Die *cu, Dwarf_Lines **lines, size_t *nr);
/* Its file names, likewise, as dwarf_getsrcfiles(). */
int pr__sym_side_files(struct sym_side *sd, Dwarf_Die *cu, Dwarf_Files **files, size_t *nr);
/* A new pass over the units begins (each unit read once more is not a
 * unit read again): the bound is the first one again. */
void pr__sym_side_pass(struct sym_side *sd);
void pr__sym_side_end(struct sym_side *sd);

/* The innermost line at every DWARF address of `m`, as libdw's path
 * finds it (unit_and_line()), sorted by address, in *out (malloc'd): 0
 * or -ENOMEM.  With `units` (sorted DIE offsets; NULL: all), only at
 * the addresses those units hold.  Line tables are read through `sd`. */
int pr__sym_lines_read(struct sym_module *m, struct sym_side *sd, const uint64_t *units,
		       size_t nr_units, struct sym_line **out, size_t *nr);

/* Whether the module has DWARF, read (and inflated) the first time. */
bool pr__sym_dwarf_open(struct pr_symbolizer *s, struct sym_module *m);
/* Unit `cu`'s index, made the first time; NULL when out of memory. */
struct cu_index *pr__sym_cu_index(struct sym_module *m, Dwarf_Die *cu);
/* The scopes inside function `fn` of the unit indexed in `x`, made the
 * first time; NULL when out of memory. */
const struct fn_scopes *pr__sym_fn_scopes(struct sym_module *m, struct cu_index *x,
					  Dwarf_Die *fn);
/* Those scopes freed (a whole build is done with the function): made
 * again if asked for. */
void pr__sym_fn_scopes_drop(struct sym_module *m, struct cu_index *x, Dwarf_Off fn);
/* The name function (or inlined call) `die` goes by, whole; in m's arena. */
const char *pr__sym_func_name(struct pr_symbolizer *s, struct sym_module *m, Dwarf_Die *die);
/* The call site of inlined call `die` in unit `cu`: its file (interned
 * in `m`, or NULL; the unit's file names read through `sd`, NULL: its
 * own Dwarf) and line (or 0). */
void pr__sym_call_site(struct sym_module *m, struct sym_side *sd, Dwarf_Die *cu, Dwarf_Die *die,
		       const char **file, uint32_t *line);
/* `cu`, or the split unit its skeleton stands for, in *split. */
Dwarf_Die *pr__sym_unit_with_functions(Dwarf_Die *cu, Dwarf_Die *split);
/*
 * pr__sym_inline_chain() from DWARF alone: code no DWARF function covers
 * gets no entry (0) rather than its symbol's.  Link-time `vaddr`, the
 * symbol around it as there.
 */
size_t pr__sym_dwarf_chain(struct pr_symbolizer *s, struct sym_module *m, uint64_t vaddr,
			   const char *sym_name, uint64_t sym_start, struct pr_sym_func *funcs);

#endif /* PR_SYMDWARF_H */
