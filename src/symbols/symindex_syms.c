/* SPDX-License-Identifier: Apache-2.0 */
/*
 * A file's ELF symbols in its address index (symindex.h): the table
 * symfile.c reads with perf's rules, its PLT stubs named (plt.c), and the
 * symbols addr2line picks among, so that a file whose index is cached is
 * named without opening it with libdwfl at all.
 *
 * Why.  A file's symbols are read from its .symtab, which for a
 * distribution's library is in its debug file: libc's is 10 MB inflated,
 * and reading, sorting and choosing among its symbols took 20-25 ms of
 * every warm start-up whose first stacks are in libc, with its DWARF no
 * longer opened.  An agent held each such file mapped for the names in
 * its string table.  Kept here, they are three tables of the index's
 * file, mapped with it: the symbols as symtab.c leaves them (sorted, one
 * per address, sizes given), the addr2line candidates in the table's
 * order, and the names of both.
 *
 * A module named from them searches the symbols where they are mapped
 * (pr__ixsyms_find(), the search symtab.c's table has), and copies
 * addr2line's candidates out only when an address needs them: a copy of
 * every table at each file's first frame was a quarter of a live run's
 * page faults (150 of 560, attached to bench-live-churn at 99 Hz for 5 s,
 * the cache warm).
 *
 * Names are kept as the file has them (mangled; a stub's is its callee's):
 * the symbolizer demangles them when a frame lands in one, as it does for
 * the file's own.
 */
#include <errno.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "symbols/symbolizer.h"
#include "symbols/symindex.h"

#define NO_NAME UINT32_MAX

struct ixs_sym {
	uint64_t start, end;
	uint32_t name;
	uint8_t binding;
	uint8_t pad[3];
};

struct ixs_a2l {
	uint64_t addr, size;
	uint64_t sec_lo, sec_hi;
	uint32_t name, pad;
};

/* ---- building ---- */

struct names {
	char *v;
	size_t len, cap;
	struct pr_hashmap by_ptr;    /* a name's address in its ELF file -> offset + 1 */
};

/* A name's offset among `n`'s, copied the first time: NO_NAME when out
 * of memory (or past what an offset holds). */
static uint32_t name_of(struct names *n, const char *name)
{
	uintptr_t at = (uintptr_t)pr__hashmap_get(&n->by_ptr, (uintptr_t)name);
	size_t len = strlen(name) + 1;

	if (at)
		return (uint32_t)(at - 1);
	if (n->len + len >= NO_NAME || PR_ARRAY_RESERVE(n->v, n->cap, n->len + len))
		return NO_NAME;
	memcpy(n->v + n->len, name, len);
	at = n->len;
	n->len += len;
	if (pr__hashmap_put(&n->by_ptr, (uintptr_t)name, (void *)(at + 1)))
		return NO_NAME;
	return (uint32_t)at;
}

/* A copy of `len` bytes at `p` (never NULL for none). */
static void *bytes_of(const void *p, size_t len)
{
	void *v = malloc(len ? len : 1);

	if (v && len)
		memcpy(v, p, len);
	return v;
}

/* `x`, a mapped index's, copied whole into *out. */
static int copy_of(const struct pr__ixsyms *x, struct pr__ixsyms *out)
{
	*out = (struct pr__ixsyms){ .syms = bytes_of(x->syms, x->nr_syms * sizeof(*x->syms)),
				    .nr_syms = x->nr_syms,
				    .a2l = bytes_of(x->a2l, x->nr_a2l * sizeof(*x->a2l)),
				    .nr_a2l = x->nr_a2l,
				    .names = bytes_of(x->names, x->names_len),
				    .names_len = x->names_len, .dwarf = x->dwarf, .owned = true };
	if (out->syms && out->a2l && out->names)
		return 0;
	pr__ixsyms_free(out);
	return -ENOMEM;
}

int pr__ixsyms_build(struct sym_module *m, bool dwarf, struct pr__ixsyms *out)
{
	struct names n = { 0 };
	struct ixs_sym *syms;
	struct ixs_a2l *a2l;
	int err;

	/* Named from a partial index (its DWARF opened since for what that
	 * did not cover): the file's symbols are that index's. */
	if (m->ixsyms)
		return copy_of(m->ixsyms, out);

	/* A file with DWARF: read while its session is open.  A table
	 * short of what the file has (memory ran out) is not kept. */
	if (dwarf)
		pr__sym_addr2line_read(m);
	if (m->hold_failed)
		return -ENOMEM;
	syms = calloc(m->syms.nr ? m->syms.nr : 1, sizeof(*syms));
	a2l = calloc(m->nr_a2l ? m->nr_a2l : 1, sizeof(*a2l));
	err = syms && a2l ? 0 : -ENOMEM;

	/* The table as read: finished (symtab.c), the stubs merged in. */
	for (size_t i = 0; !err && i < m->syms.nr; i++) {
		const struct pr_sym *s = &m->syms.v[i];

		syms[i] = (struct ixs_sym){ .start = s->start, .end = s->end,
					    .name = name_of(&n, s->name), .binding = s->binding };
		if (syms[i].name == NO_NAME)
			err = -ENOMEM;
	}
	for (size_t i = 0; !err && dwarf && i < m->nr_a2l; i++) {
		const struct a2l_sym *a = &m->a2l[i];

		a2l[i] = (struct ixs_a2l){ .addr = a->addr, .size = a->size, .sec_lo = a->sec_lo,
					   .sec_hi = a->sec_hi, .name = name_of(&n, a->name) };
		if (a2l[i].name == NO_NAME)
			err = -ENOMEM;
	}
	/* Never empty: a table of no bytes would be one the file lacks. */
	if (!err && !n.len && name_of(&n, "") == NO_NAME)
		err = -ENOMEM;
	pr__hashmap_free(&n.by_ptr);
	if (err) {
		free(syms);
		free(a2l);
		free(n.v);
		return err;
	}
	*out = (struct pr__ixsyms){ .syms = syms, .nr_syms = m->syms.nr, .a2l = a2l,
				    .nr_a2l = dwarf ? m->nr_a2l : 0, .names = n.v,
				    .names_len = n.len, .dwarf = dwarf, .owned = true };
	return 0;
}

void pr__ixsyms_free(struct pr__ixsyms *x)
{
	if (x->owned) {
		free((void *)x->syms);
		free((void *)x->a2l);
		free((void *)x->names);
	}
	memset(x, 0, sizeof(*x));
}

size_t pr__ixsyms_bytes(const struct pr__ixsyms *x)
{
	return x->nr_syms * sizeof(struct ixs_sym) + x->nr_a2l * sizeof(struct ixs_a2l) +
	       x->names_len;
}

/* ---- as the file's tables ---- */

/* addr2line's candidates are a file with DWARF's (where no DWARF
 * function covers an address): their table, even empty, says the file has
 * DWARF, and its absence that it has none. */
size_t pr__ixsyms_tables(const struct pr__ixsyms *x, struct pr__ix_table *t)
{
	t[0] = (struct pr__ix_table){ PR_IX_SYMBOLS, sizeof(struct ixs_sym), x->nr_syms, x->syms };
	t[1] = (struct pr__ix_table){ PR_IX_SYMBOL_NAMES, 1, x->names_len, x->names };
	if (!x->dwarf)
		return 2;
	t[2] = (struct pr__ix_table){ PR_IX_A2L, sizeof(struct ixs_a2l), x->nr_a2l, x->a2l };
	return 3;
}

int pr__ixsyms_adopt(struct pr__ixsyms *x, const struct pr__ix_table *t)
{
	size_t want = t->kind == PR_IX_SYMBOLS ? sizeof(struct ixs_sym) :
		      t->kind == PR_IX_A2L ? sizeof(struct ixs_a2l) : 1;

	if (t->entry_size != want)
		return -EINVAL;
	if (t->kind == PR_IX_SYMBOLS) {
		x->syms = t->base;
		x->nr_syms = t->count;
	} else if (t->kind == PR_IX_A2L) {
		x->a2l = t->base;
		x->nr_a2l = t->count;
		x->dwarf = true;
	} else if (t->kind == PR_IX_SYMBOL_NAMES) {
		x->names = t->base;
		x->names_len = t->count;
	} else {
		return -EINVAL;
	}
	return 0;
}

/*
 * Whether the tables are what a build makes: every name inside the names
 * (whose last byte ends the last), the symbols sorted by start, none
 * ending before it starts, with a binding symtab.c knows; *why says what is not.
 */
bool pr__ixsyms_sound(const struct pr__ixsyms *x, const char **why)
{
	const struct ixs_sym *s = x->syms;
	const struct ixs_a2l *a = x->a2l;

	if (!x->names || !x->names_len || x->names[x->names_len - 1]) {
		*why = "its symbols' names are missing or not terminated";
		return false;
	}
	for (size_t i = 0; i < x->nr_syms; i++)
		if (s[i].name >= x->names_len || s[i].binding > PR_SYM_PLT || s[i].end < s[i].start ||
		    (i && s[i].start < s[i - 1].start)) {
			*why = "its symbols are not sorted, one per address, with their names";
			return false;
		}
	for (size_t i = 0; i < x->nr_a2l; i++)
		if (a[i].name >= x->names_len || a[i].sec_lo > a[i].sec_hi) {
			*why = "its addr2line symbols name nothing of its names";
			return false;
		}
	return true;
}

/* ---- naming from them ---- */

void pr__ixsyms_attach(const struct pr__ixsyms *x, struct sym_module *m)
{
	pr__symtab_free(&m->syms);
	m->syms = (struct pr_symtab){ 0 };
	free(m->names);
	m->names = NULL;
	free(m->a2l);
	m->a2l = NULL;
	m->nr_a2l = 0;
	m->a2l_read = false;
	m->ixsyms = x;
}

void pr__ixsyms_get(const struct pr__ixsyms *x, size_t i, struct pr_sym *out)
{
	const struct ixs_sym *s = &x->syms[i];

	*out = (struct pr_sym){ s->start, s->end, x->names + s->name, s->binding, (uint32_t)i };
}

bool pr__ixsyms_find(const struct pr__ixsyms *x, uint64_t addr, struct pr_sym *out, size_t *i)
{
	_Static_assert(offsetof(struct ixs_sym, start) == 0 &&
		       offsetof(struct ixs_sym, end) == sizeof(uint64_t), "start, end first");
	*i = pr__symtab_find_in(x->syms, x->nr_syms, sizeof(*x->syms), addr);
	if (*i == x->nr_syms)
		return false;
	pr__ixsyms_get(x, *i, out);
	return true;
}

int pr__ixsyms_load_a2l(const struct pr__ixsyms *x, struct sym_module *m)
{
	struct a2l_sym *a = calloc(x->nr_a2l ? x->nr_a2l : 1, sizeof(*a));

	if (!a)
		return -ENOMEM;
	for (size_t i = 0; i < x->nr_a2l; i++) {
		const struct ixs_a2l *e = &x->a2l[i];

		a[i] = (struct a2l_sym){ e->addr, e->size, e->sec_lo, e->sec_hi,
					 x->names + e->name };
	}
	free(m->a2l);
	m->a2l = a;
	m->nr_a2l = x->nr_a2l;
	m->a2l_read = true;
	return 0;
}
