/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Compiled CFA rules: the fast path's view of a file's unwind tables.
 *
 * libunwind interprets an FDE's CFA program for every address it has not
 * cached, and its cache is small and takes a lock per step.  Almost every
 * row of compiler-generated CFI says the same few things: the CFA is rsp
 * or rbp plus a constant, the return address is just below the CFA, rbp
 * is unchanged or saved near it.  Such a row is compiled once into a
 * struct uw_rule and kept, sorted, with the file; the unwinder steps
 * through it with two loads.  The FDE is found through the very tables
 * libunwind searches (accessors.c), in the same order, so both agree on
 * which rules apply; rows the fast path does not model are kept as not
 * usable, and samples that meet one are left to libunwind.
 */
#include <stdlib.h>
#include <string.h>

#include "unwind-int.h"

/* The last index entry starting at or before `rel`, or -1. */
static ssize_t search_index(const struct uw_cfi_table *t, int64_t rel)
{
	size_t lo = 0, hi = t->nr;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (t->index[mid].start <= rel)
			lo = mid + 1;
		else
			hi = mid;
	}
	return (ssize_t)lo - 1;
}

/* Through one of our built tables (.eh_frame indexed, or .debug_frame
 * converted: its FDEs hold link-time addresses). */
static int from_built(const struct uw_elf *e, const struct uw_cfi_table *t, uint64_t addr,
		      struct uw_rule *r)
{
	ssize_t i = search_index(t, (int64_t)(addr - e->text_lo));

	if (i < 0)
		return 0;
	if (t->frames)
		return uw_cfi_row(t->frames, t->frames_size, 0, (size_t)t->index[i].fde, addr, r);
	return uw_cfi_row(e->data + e->eh_frame.offset, (size_t)e->eh_frame.size,
			  e->eh_frame.vaddr, (size_t)t->index[i].fde, addr, r);
}

/* Through .eh_frame_hdr's table: (start, FDE) pairs of signed 32-bit
 * offsets from the header, sorted by start. */
static int from_eh_hdr(const struct uw_elf *e, uint64_t addr, struct uw_rule *r)
{
	const unsigned char *seg, *table;
	size_t seg_size, lo = 0, hi = e->fde_count;
	uint64_t seg_vaddr, fde;
	int32_t v[2];

	seg = uw_elf_segment(e, e->eh_table_vaddr, &seg_size, &seg_vaddr);
	if (!seg || e->fde_count * 8 > seg_size - (e->eh_table_vaddr - seg_vaddr))
		return -1;
	table = seg + (e->eh_table_vaddr - seg_vaddr);
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		memcpy(v, table + mid * 8, 4);
		if (e->eh_hdr_vaddr + (uint64_t)(int64_t)v[0] <= addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (!lo)
		return 0;
	memcpy(v, table + (lo - 1) * 8, 8);
	fde = e->eh_hdr_vaddr + (uint64_t)(int64_t)v[1];
	/* The FDE and its CIE are in .eh_frame, in the segment. */
	seg = uw_elf_segment(e, fde, &seg_size, &seg_vaddr);
	if (!seg)
		return -1;
	return uw_cfi_row(seg, seg_size, seg_vaddr, (size_t)(fde - seg_vaddr), addr, r);
}

/* Compute the row for `addr` the way find_proc_info looks for it: the
 * file's .eh_frame, then .debug_frame. */
static void compute(struct pr_unwinder *u, struct uw_elf *e, uint64_t addr, struct uw_rule *r)
{
	const struct uw_cfi_table *dbg;
	int found = 0;

	if (e->table == UW_TABLE_EH_HDR)
		found = from_eh_hdr(e, addr, r);
	else if (e->table == UW_TABLE_EH_FRAME)
		found = from_built(e, &e->eh, addr, r);
	if (!found && (dbg = uw_debug_frame(u, e)))
		found = from_built(e, dbg, addr, r);
	if (found <= 0) {
		/* No information (or none we read): libunwind decides. */
		memset(r, 0, sizeof(*r));
		r->lo = addr;
		r->hi = addr + 1;
	}
}

bool uw_rule_find(struct pr_unwinder *u, struct uw_elf *e, uint64_t addr, struct uw_rule *out)
{
	size_t lo = 0, hi = e->nr_rules;
	struct uw_rule r;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (e->rules[mid].lo <= addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	/* rules[lo - 1] is the last row starting at or before addr. */
	if (lo && addr < e->rules[lo - 1].hi) {
		*out = e->rules[lo - 1];
		return true;
	}
	compute(u, e, addr, &r);
	/* Keep rows disjoint: a malformed table may have overlapping FDEs,
	 * and the row found for addr is the one that holds for it. */
	if (lo && r.lo < e->rules[lo - 1].hi)
		r.lo = e->rules[lo - 1].hi;
	if (lo < e->nr_rules && r.hi > e->rules[lo].lo)
		r.hi = e->rules[lo].lo;
	if (r.lo > addr || r.hi <= addr) {
		r.lo = addr;
		r.hi = addr + 1;
	}
	*out = r;
	if (e->nr_rules == e->cap_rules) {
		size_t cap = e->cap_rules ? e->cap_rules * 2 : 64;
		struct uw_rule *v = realloc(e->rules, cap * sizeof(*v));

		if (!v)
			return false;
		e->rules = v;
		e->cap_rules = cap;
	}
	memmove(e->rules + lo + 1, e->rules + lo, (e->nr_rules - lo) * sizeof(r));
	e->rules[lo] = r;
	e->nr_rules++;
	return true;
}
