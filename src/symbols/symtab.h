/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Sorted symbol tables, with perf's rules for sizes and aliases.
 */
#ifndef PR_SYMTAB_H
#define PR_SYMTAB_H

#include "base/base.h"


/* How a symbol is bound; PR_SYM_PLT: a .plt stub, named by its callee
 * (its name), shown as "callee@plt". */
enum { PR_SYM_LOCAL, PR_SYM_GLOBAL, PR_SYM_WEAK, PR_SYM_PLT };

struct pr_sym {
	uint64_t start, end;
	const char *name;            /* not owned */
	uint8_t binding;             /* PR_SYM_* */
	uint32_t index;              /* order of adding, for ties */
};

struct pr_symtab {
	struct pr_sym *v;
	size_t nr, cap;
	size_t sorted;               /* v[0..sorted) is, since finish or sort */
};

/* 0, or -1 when out of memory. */
int pr__symtab_add(struct pr_symtab *t, uint64_t start, uint64_t size, const char *name,
		   uint8_t binding);
/* Sort; give symbols without a size the room up to the next; keep the
 * best of those sharing an address (see symtab.c). */
void pr__symtab_finish(struct pr_symtab *t);
/* Sort again after adding symbols to a finished table (merging those
 * added since), leaving sizes and aliases as they are (where they
 * overlap, the later start wins). */
void pr__symtab_sort(struct pr_symtab *t);
const struct pr_sym *pr__symtab_find(const struct pr_symtab *t, uint64_t addr);
/* The same search over `nr` entries of `size` bytes at `base`, finished
 * as a table is, each starting with its start and end (uint64_t, as
 * struct pr_sym does): the index of the one that has `addr`, or `nr`. */
size_t pr__symtab_find_in(const void *base, size_t nr, size_t size, uint64_t addr);
void pr__symtab_free(struct pr_symtab *t);

#endif /* PR_SYMTAB_H */
