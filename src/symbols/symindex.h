/* SPDX-License-Identifier: Apache-2.0 */
/*
 * A file's address index (symindex.c): the functions and inlined calls at
 * every address of its code, built once from its DWARF, then searched
 * without libdw.
 */
#ifndef PR_SYMINDEX_H
#define PR_SYMINDEX_H

#include <stddef.h>
#include <stdint.h>

#include "prsym.h"

struct pr_symbolizer;
struct sym_module;
struct pr__symindex;

/*
 * The index of module `m`'s DWARF, built with libdw as the symbolizer
 * reads it (names as `s` is set to give them: demangled or not).  NULL
 * with errno set: ENOENT when `m` has no DWARF, ENOMEM.  The index owns
 * its memory and does not point into `m`: it outlives it.
 */
struct pr__symindex *pr__symindex_build(struct pr_symbolizer *s, struct sym_module *m);
void pr__symindex_free(struct pr__symindex *ix);
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

/*
 * The innermost line at DWARF address `pc`, as libdw's path finds it, in
 * *file (pointing into the index; NULL: none) and *line (0: none).  false
 * when the index was built without its line table (the symbolizer that
 * built it was told no lines were shown).  Lock-free.
 */
/* Whether it holds the line table (pr__symindex_line() answers). */
bool pr__symindex_has_lines(const struct pr__symindex *ix);
bool pr__symindex_line(const struct pr__symindex *ix, uint64_t pc, const char **file,
		       uint32_t *line);

#endif /* PR_SYMINDEX_H */
