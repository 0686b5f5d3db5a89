/* SPDX-License-Identifier: Apache-2.0 */
/*
 * A file's address index (symindex.c): the functions and inlined calls at
 * every address of its code, built once from its DWARF, then searched
 * without libdw.
 */
#ifndef PR_SYMINDEX_H
#define PR_SYMINDEX_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "prsym.h"

struct pr_symbolizer;
struct sym_module;
struct pr__symindex;
struct ixs_sym;
struct ixs_a2l;
struct pr_sym;

/*
 * The index of module `m`'s DWARF, built with libdw as the symbolizer
 * reads it (names as `s` is set to give them: demangled or not).  NULL
 * with errno set: ENOENT when `m` has no DWARF, ENOMEM.  The index owns
 * its memory and does not point into `m`: it outlives it.
 */
struct pr__symindex *pr__symindex_build(struct pr_symbolizer *s, struct sym_module *m);
/*
 * A partial index: built from the units whose DIE offsets are in `units`
 * (sorted, `nr` of them) alone, answering only where no other unit could
 * (pr__symindex_covers()), for the units a run named addresses in when the
 * whole file costs more than it can afford.  As pr__symindex_build()
 * otherwise.
 */
struct pr__symindex *pr__symindex_build_units(struct pr_symbolizer *s, struct sym_module *m,
					      const uint64_t *units, size_t nr);
/* Whether it was built from some of its file's units alone. */
bool pr__symindex_partial(const struct pr__symindex *ix);
/*
 * Whether its answers at DWARF address `pc` are the whole file's: always
 * for a whole index; for a partial one, where every unit that holds `pc`
 * (by .debug_aranges, as libdwfl reads them, or by its own ranges) was
 * among those it was built from.  Elsewhere libdw's path answers.
 */
bool pr__symindex_covers(const struct pr__symindex *ix, uint64_t pc);
/*
 * Each address range a unit of module `m` (its DWARF open) holds, by
 * either way libdw's path finds an address's unit (symlines.c says how):
 * a .debug_aranges entry, whose unit keeps the addresses up to the next
 * entry's start (or its own end, if later); or the unit's own ranges.
 * fn(lo, hi, the unit's DIE offset, arg) for each, until one returns
 * non-zero: that, or 0, or -EINVAL for an entry that cannot be read.
 */
typedef int (*pr__symindex_range_fn)(uint64_t lo, uint64_t hi, uint64_t unit, void *arg);
int pr__symindex_unit_ranges(struct sym_module *m, pr__symindex_range_fn fn, void *arg);
/* The units a partial index was built from (DIE offsets, sorted): how
 * many, into *units. */
size_t pr__symindex_units(const struct pr__symindex *ix, const uint64_t **units);
/*
 * The index of module `m`, a file without DWARF, its symbols read: those
 * alone, so that the next run names it without reading them again.  NULL
 * with errno ENOMEM.
 */
struct pr__symindex *pr__symindex_build_symbols(struct sym_module *m);
/* Whether the file it is of has DWARF (else it holds only symbols). */
bool pr__symindex_has_dwarf(const struct pr__symindex *ix);
void pr__symindex_free(struct pr__symindex *ix);
/* Of an index read from a file (mapped shared, read-only): its pages leave
 * the resident set, mapped again as lookups read them. */
void pr__symindex_release_pages(const struct pr__symindex *ix);
/* A mapped index's guard (pr__busguard_add()'s slot), removed when the
 * index is freed; and whether its file was cut short under it since,
 * which makes what it answered since untrustworthy (zeros read). */
void pr__symindex_guarded(struct pr__symindex *ix, int slot);
bool pr__symindex_cut(const struct pr__symindex *ix);
/* Its size in bytes, all tables together. */
size_t pr__symindex_bytes(const struct pr__symindex *ix);

/*
 * Fill `funcs` (room for MAX_INLINE) innermost first at DWARF address
 * `pc` (a link-time address less the module's DWARF bias), as
 * pr__sym_dwarf_chain() does, without the innermost entry's line (its
 * .file NULL, .line 0: that is the line table's).  The callers' lines are
 * those the inlined calls were made from, unless `no_lines`.  The
 * function at the top takes `sym_name` when its DWARF name is qualified
 * and it starts at `sym_start` (a DWARF address too), as there.  Returns
 * how many; 0 where no function covers `pc`.  Names and files point into
 * the index.  Lock-free: the index is not written after it is built.
 */
size_t pr__symindex_chain(const struct pr__symindex *ix, uint64_t pc, bool no_lines,
			  const char *sym_name, uint64_t sym_start, struct pr_sym_func *funcs);

/* Whether it holds the line table (pr__symindex_line() answers). */
bool pr__symindex_has_lines(const struct pr__symindex *ix);
/*
 * The innermost line at DWARF address `pc`, as libdw's path finds it, in
 * *file (pointing into the index; NULL: none) and *line (0: none).  false
 * when the index was built without its line table (the symbolizer that
 * built it was told no lines were shown).  Lock-free.
 */
bool pr__symindex_line(const struct pr__symindex *ix, uint64_t pc, const char **file,
		       uint32_t *line);

/*
 * The index as tables, for its file (symindex_file.c): each kind at most
 * once, `count` entries of `entry_size` bytes at `base` (the strings: one
 * byte each).  A kind added later is one more here and in
 * pr__symindex_tables() and pr__symindex_adopt().
 */
enum {
	PR_IX_STRINGS = 1,
	PR_IX_NODES = 2,
	PR_IX_SEGMENTS = 3,
	PR_IX_LINES = 4,            /* only when the line table was built */
	PR_IX_SYMBOLS = 5,          /* the ELF symbols (symindex_syms.c) */
	PR_IX_A2L = 6,
	PR_IX_SYMBOL_NAMES = 7,
	PR_IX_COVER = 8,            /* a partial index's: where it answers */
	PR_IX_UNITS = 9,            /* ... and the units it was built from */
	PR_IX_MAX_TABLES = 10,
};

struct pr__ix_table {
	uint32_t kind, entry_size;
	uint64_t count;
	const void *base;
};

/* The version of the tables' entries: it goes up whenever they, or what
 * a build puts in them, change; a file of another is not read. */
uint32_t pr__symindex_layout(void);
/* `ix`'s tables into `t` (room for PR_IX_MAX_TABLES): how many.  They
 * point into `ix`. */
size_t pr__symindex_tables(const struct pr__symindex *ix, struct pr__ix_table *t);
/*
 * An index over tables read from a file, pointing into them, once every
 * entry is checked: each reference inside its table, each string ending
 * inside the strings, each node's parent before it, the segments sorted
 * and disjoint; with `written` not: tables this process wrote from an
 * index it built (pr__symindex_map_written()).  pr__symindex_free()
 * unmaps `map` (`map_len` bytes; NULL: the tables are the caller's, and
 * must outlive the index).  NULL with errno set: EINVAL (*why says what
 * is wrong), ENOMEM.
 */
struct pr__symindex *pr__symindex_adopt(const struct pr__ix_table *t, size_t nr, void *map,
					size_t map_len, bool written, const char **why);

/*
 * The file's ELF symbols an index holds (symindex_syms.c): the module's
 * table as symfile.c read it (struct pr_symtab, finished, its PLT stubs
 * in), addr2line's candidates (struct a2l_sym), and their names.  Built
 * with the index; mapped with it when read from a file (`owned` false).
 */
struct pr__ixsyms {
	const struct ixs_sym *syms;
	size_t nr_syms;
	const struct ixs_a2l *a2l;
	size_t nr_a2l;
	const char *names;
	size_t names_len;
	bool dwarf;                  /* the file has DWARF (and a2l its table) */
	bool owned;
};

/* Module `m`'s symbols into `out`, its session open; with `dwarf` (the
 * file has DWARF) addr2line's, read first: 0 or -ENOMEM. */
int pr__ixsyms_build(struct sym_module *m, bool dwarf, struct pr__ixsyms *out);
void pr__ixsyms_free(struct pr__ixsyms *x);
size_t pr__ixsyms_bytes(const struct pr__ixsyms *x);
/* Its three tables into `t`: how many. */
size_t pr__ixsyms_tables(const struct pr__ixsyms *x, struct pr__ix_table *t);
/* A table of a file of one of its kinds taken in: 0, or -EINVAL for
 * another kind or entry size. */
int pr__ixsyms_adopt(struct pr__ixsyms *x, const struct pr__ix_table *t);
/* Whether tables read from a file are what a build makes (*why: what is
 * not). */
bool pr__ixsyms_sound(const struct pr__ixsyms *x, const char **why);
/* The index's symbols, every index has them. */
const struct pr__ixsyms *pr__symindex_syms(const struct pr__symindex *ix);
/*
 * Module `m` named from `x`, in place of reading its ELF files: its own
 * tables emptied, its symbols looked up in `x` where it is mapped
 * (pr__ixsyms_find()), addr2line's candidates taken from it when first
 * asked for (pr__ixsyms_load_a2l()).  `x` must outlive the module's use
 * of it.
 */
void pr__ixsyms_attach(const struct pr__ixsyms *x, struct sym_module *m);
/* The symbol at `addr`, as pr__symtab_find() picks it from the table
 * the index was made of, into *out (its name in `x`), and its place in
 * the table into *i: false for none. */
bool pr__ixsyms_find(const struct pr__ixsyms *x, uint64_t addr, struct pr_sym *out, size_t *i);
/* The `i`th symbol of its table (i below nr_syms), as pr__ixsyms_find()
 * gives it. */
void pr__ixsyms_get(const struct pr__ixsyms *x, size_t i, struct pr_sym *out);
/* addr2line's candidates copied into the module's table (their names
 * point into `x`): 0 or -ENOMEM (`m` as it was). */
int pr__ixsyms_load_a2l(const struct pr__ixsyms *x, struct sym_module *m);

#endif /* PR_SYMINDEX_H */
