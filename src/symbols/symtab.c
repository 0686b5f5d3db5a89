/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Sorted symbol tables, for ELF files, the kernel and perf maps alike, with
 * perf's rules so that the same address gets the same name in both tools:
 * a symbol without a size runs to the next one (the last, to the page
 * after its own), and then of several symbols at one address the best is
 * kept: one with a size over one without, strong over weak, global over
 * local, fewer leading underscores, the longer name, the earlier in the
 * table.
 */
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "symbols/symtab.h"

int pr__symtab_add(struct pr_symtab *t, uint64_t start, uint64_t size, const char *name,
		   uint8_t binding)
{
	if (PR_ARRAY_RESERVE(t->v, t->cap, t->nr + 1))
		return -1;
	t->v[t->nr] = (struct pr_sym){ start, start + size, name, binding, (uint32_t)t->nr };
	t->nr++;
	return 0;
}

static int by_start(const void *a, const void *b)
{
	const struct pr_sym *x = a, *y = b;

	if (x->start != y->start)
		return x->start < y->start ? -1 : 1;
	/* Equal starts keep the table's order. */
	return (x->index > y->index) - (x->index < y->index);
}

struct sort_key {
	uint64_t start;
	size_t pos;
};

/*
 * Sort v[0..nr) by start, equal starts in table order.  A shared
 * library's .dynsym comes in hash order, tens of thousands of symbols
 * (cc1's 29 000): a radix sort of the starts, byte by byte from the
 * lowest, skipping the bytes every start shares, then one pass moving the
 * symbols, takes a fifth of qsort's time.  Radix sorting is stable, so
 * the table's order holds among equal starts.
 */
static void sort_by_start(struct pr_sym *v, size_t nr)
{
	struct sort_key *k, *tmp;
	struct pr_sym *moved;
	size_t count[256];
	size_t i;

	for (i = 1; i < nr && by_start(&v[i - 1], &v[i]) <= 0; i++)
		;
	if (i >= nr)
		return;
	k = malloc(nr * sizeof(*k));
	tmp = malloc(nr * sizeof(*tmp));
	moved = malloc(nr * sizeof(*moved));
	if (!k || !tmp || !moved) {
		free(k);
		free(tmp);
		free(moved);
		qsort(v, nr, sizeof(*v), by_start);
		return;
	}
	for (i = 0; i < nr; i++)
		k[i] = (struct sort_key){ v[i].start, i };
	for (unsigned shift = 0; shift < 64; shift += 8) {
		struct sort_key *swap;
		size_t at = 0;

		memset(count, 0, sizeof(count));
		for (i = 0; i < nr; i++)
			count[k[i].start >> shift & 0xff]++;
		if (count[k[0].start >> shift & 0xff] == nr)
			continue;
		for (unsigned b = 0; b < 256; b++) {
			size_t c = count[b];

			count[b] = at;
			at += c;
		}
		for (i = 0; i < nr; i++)
			tmp[count[k[i].start >> shift & 0xff]++] = k[i];
		swap = k;
		k = tmp;
		tmp = swap;
	}
	for (i = 0; i < nr; i++)
		moved[i] = v[k[i].pos];
	memcpy(v, moved, nr * sizeof(*v));
	free(k);
	free(tmp);
	free(moved);
}

static size_t underscores(const char *s)
{
	size_t n = 0;

	while (s[n] == '_')
		n++;
	return n;
}

/* true when `a` is the better name for their shared address. */
static bool better(const struct pr_sym *a, const struct pr_sym *b)
{
	bool a_sized = a->end > a->start, b_sized = b->end > b->start;
	size_t ua, ub, la, lb;

	if (a_sized != b_sized)
		return a_sized;
	if ((a->binding == PR_SYM_WEAK) != (b->binding == PR_SYM_WEAK))
		return b->binding == PR_SYM_WEAK;
	if ((a->binding == PR_SYM_GLOBAL) != (b->binding == PR_SYM_GLOBAL))
		return a->binding == PR_SYM_GLOBAL;
	ua = underscores(a->name);
	ub = underscores(b->name);
	if (ua != ub)
		return ua < ub;
	la = strlen(a->name);
	lb = strlen(b->name);
	if (la != lb)
		return la > lb;
	return a->index < b->index;
}

void pr__symtab_finish(struct pr_symtab *t)
{
	size_t out = 0;

	if (!t->nr)
		return;
	sort_by_start(t->v, t->nr);
	/* Sizes first: a symbol without one runs to the next symbol (an
	 * alias at the same address leaves it without), the last one to the
	 * end of the page after its own. */
	for (size_t i = 0; i < t->nr; i++) {
		struct pr_sym *s = &t->v[i];

		if (s->end != s->start)
			continue;
		if (i + 1 < t->nr)
			s->end = t->v[i + 1].start;
		else if (s->start < UINT64_MAX - 8192)
			s->end = ((s->start + 4095) & ~UINT64_C(4095)) + 4096;
	}
	/* Then one symbol per address. */
	for (size_t i = 0; i < t->nr; i++) {
		if (out && t->v[out - 1].start == t->v[i].start) {
			if (better(&t->v[i], &t->v[out - 1]))
				t->v[out - 1] = t->v[i];
			continue;
		}
		t->v[out++] = t->v[i];
	}
	t->nr = out;
	t->sorted = out;
}

void pr__symtab_sort(struct pr_symtab *t)
{
	size_t a = 0, b = t->sorted, out = 0;
	struct pr_sym *merged;

	if (t->sorted > t->nr)
		t->sorted = 0;
	/* What was added since: sorted, then merged with the sorted rest. */
	sort_by_start(t->v + t->sorted, t->nr - t->sorted);
	merged = t->sorted && t->sorted < t->nr ? malloc(t->nr * sizeof(*merged)) : NULL;
	if (!merged) {
		sort_by_start(t->v, t->nr);
	} else {
		while (a < t->sorted || b < t->nr)
			merged[out++] = b == t->nr || (a < t->sorted && by_start(&t->v[a], &t->v[b]) <= 0) ?
					t->v[a++] : t->v[b++];
		free(t->v);
		t->v = merged;
		t->cap = t->nr;
	}
	t->sorted = t->nr;
}

size_t pr__symtab_find_in(const void *base, size_t nr, size_t size, uint64_t addr)
{
	size_t lo = pr__upper_bound(base, nr, size, addr);

	/* A sized symbol may end before the next starts: gaps are no one's.
	 * One that ends early may sit inside a longer one before it.  A
	 * symbol without room matches its own address. */
	for (size_t i = lo, back = 0; i > 0 && back < 4; i--, back++) {
		uint64_t se[2];

		memcpy(se, (const char *)base + (i - 1) * size, sizeof(se));
		if (addr < se[1] || addr == se[0])
			return i - 1;
	}
	return nr;
}

const struct pr_sym *pr__symtab_find(const struct pr_symtab *t, uint64_t addr)
{
	size_t i = pr__symtab_find_in(t->v, t->nr, sizeof(*t->v), addr);

	_Static_assert(offsetof(struct pr_sym, start) == 0 &&
		       offsetof(struct pr_sym, end) == sizeof(uint64_t), "start, end first");
	return i < t->nr ? &t->v[i] : NULL;
}

void pr__symtab_free(struct pr_symtab *t)
{
	free(t->v);
	memset(t, 0, sizeof(*t));
}
