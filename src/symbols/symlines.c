/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The address index's line table (symindex.c): the innermost source line
 * at every address of a file's code, as libdw's path answers it, read
 * from the units' line tables once.
 *
 * libdw's path asks libdwfl for the unit holding an address, then that
 * unit's line table for the last row at or below it (none when that row
 * ends a sequence).  libdwfl's unit is the .debug_aranges entry starting
 * last at or below the address, whose unit it keeps up to the next entry's
 * start (the gaps between entries belong to the one before) and, for the
 * last entry, up to and including its end.  Where that finds none, or
 * its unit cannot be read, symdwarf.c looks at the units' own ranges
 * (cu_by_ranges(): clang writes no .debug_aranges).  So the answer
 * changes only where an entry, a range or a row starts: the table holds
 * one row per change, each until the next.
 */
#include <dwarf.h>
#include <errno.h>
#include <stdlib.h>

#include "symbols/symdwarf.h"

struct lines {
	struct sym_line *v;
	size_t nr, cap;
};

/* From `lo` on, `file` at `line` (file NULL: no line). */
static int add(struct lines *t, uint64_t lo, const char *file, uint32_t line)
{
	struct sym_line *p = t->nr ? &t->v[t->nr - 1] : NULL;

	/* Pieces come in address order: a later one at the same address
	 * replaces the end an earlier one left there. */
	if (p && p->lo == lo) {
		t->nr--;
		p = t->nr ? &t->v[t->nr - 1] : NULL;
	}
	if (p && p->file == file && p->line == line)
		return 0;
	if (PR_ARRAY_RESERVE(t->v, t->cap, t->nr + 1))
		return -ENOMEM;
	t->v[t->nr++] = (struct sym_line){ lo, file, line };
	return 0;
}

/* The answer at row `r` of `lines`: its line, none at the end of a
 * sequence. */
static int add_row(struct sym_module *m, struct lines *t, uint64_t lo, Dwarf_Line *row)
{
	bool end = false;
	int lineno = 0;
	const char *file;

	if (!row || dwarf_lineendsequence(row, &end) || end ||
	    !(file = dwarf_linesrc(row, NULL, NULL)))
		return add(t, lo, NULL, 0);
	dwarf_lineno(row, &lineno);
	if (!(file = pr__sym_intern_file(m, file)))
		return -ENOMEM;
	return add(t, lo, file, (uint32_t)lineno);
}

/* What libdw holds for a line table, per row, estimated (Dwarf_Line
 * and its sorting), and what a side Dwarf may hold before it is begun
 * again. */
#define SIDE_ROW_BYTES 48
#define SIDE_MAX_BYTES ((uint64_t)4 << 20)

/* The side's Dwarf ended (what libdw read with it goes), to be begun
 * again at the next unit. */
static void side_restart(struct sym_side *sd)
{
	dwarf_end(sd->dbg);
	sd->dbg = NULL;
	sd->bytes = 0;
	pr__hashmap_free(&sd->live);
	sd->live = (struct pr_hashmap){ 0 };
}

/*
 * `cu` in the side Dwarf, in *out; `cu` itself when it is of another
 * Dwarf or the side cannot be had.  Begun again only before a unit it has
 * not read (one it holds costs nothing more), once what it holds is over
 * the bound.  Units come in address order, and a file whose units' code
 * is interleaved comes back to a unit after the side let it go: gcc's
 * cold parts (.text.unlikely) bring every unit back once, a linker's
 * symbol ordering once per piece.  Tables read again may cost up to
 * twice what the pass read first (and one bound's worth); past that the
 * side is not begun again in this pass, which then holds what it reads,
 * as a build did before there was a side, at three times the reading.
 */
static Dwarf_Die *side_unit(struct sym_side *sd, Dwarf_Die *cu, Dwarf_Die *out)
{
	Dwarf_Off off = dwarf_dieoffset(cu);
	Dwarf_Die unit;
	Dwarf *alt;
	uint64_t bound;

	if (!sd || !sd->main || dwarf_cu_getdwarf(cu->cu) != sd->main)
		return cu;
	bound = sd->max ? sd->max : SIDE_MAX_BYTES;
	if (sd->dbg && sd->bytes > bound && !pr__hashmap_get(&sd->live, off) &&
	    sd->again_bytes <= 2 * sd->first_bytes + bound)
		side_restart(sd);
	if (!sd->dbg) {
		if (!(sd->dbg = dwarf_begin_elf(dwarf_getelf(sd->main), DWARF_C_READ, NULL)))
			return cu;
		sd->begun++;
		if ((alt = dwarf_getalt(sd->main)))
			dwarf_setalt(sd->dbg, alt);
	}
	/* The same unit, not a DIE of another at that offset (a type
	 * unit's offsets are in a section of their own). */
	if (!dwarf_offdie(sd->dbg, off, out) || !dwarf_diecu(out, &unit, NULL, NULL) ||
	    dwarf_dieoffset(&unit) != off)
		return cu;
	return out;
}

/* Unit `u` of the side read (its table of `rows`): counted once while
 * the side holds it, as read first or again in this pass. */
static void side_read(struct sym_side *sd, Dwarf_Die *u, size_t rows)
{
	Dwarf_Off off = dwarf_dieoffset(u);
	uint64_t bytes = rows * SIDE_ROW_BYTES;

	if (pr__hashmap_get(&sd->live, off) || pr__hashmap_put(&sd->live, off, (void *)1))
		return;
	sd->bytes += bytes;
	if (pr__hashmap_get(&sd->seen, off)) {
		sd->again++;
		sd->again_bytes += bytes;
	} else {
		sd->first_bytes += bytes;
		pr__hashmap_put(&sd->seen, off, (void *)1);
	}
}

int pr__sym_side_lines(struct sym_side *sd, Dwarf_Die *cu, Dwarf_Lines **lines, size_t *nr)
{
	Dwarf_Die in;
	Dwarf_Die *u = side_unit(sd, cu, &in);

	if (dwarf_getsrclines(u, lines, nr))
		return -1;
	if (u == &in)
		side_read(sd, u, *nr);
	return 0;
}

int pr__sym_side_files(struct sym_side *sd, Dwarf_Die *cu, Dwarf_Files **files, size_t *nr)
{
	Dwarf_Die in;
	Dwarf_Die *u = side_unit(sd, cu, &in);
	Dwarf_Lines *lines;
	size_t rows;

	/* libdw reads the whole line table for the file names: its rows
	 * are counted as held. */
	if (u == &in && !dwarf_getsrclines(u, &lines, &rows))
		side_read(sd, u, rows);
	return dwarf_getsrcfiles(u, files, nr);
}

void pr__sym_side_pass(struct sym_side *sd)
{
	pr__hashmap_free(&sd->seen);
	sd->seen = (struct pr_hashmap){ 0 };
	sd->first_bytes = sd->again_bytes = 0;
}

void pr__sym_side_end(struct sym_side *sd)
{
	if (!sd)
		return;
	if (sd->dbg)
		side_restart(sd);
	pr__hashmap_free(&sd->live);
	pr__hashmap_free(&sd->seen);
	sd->live = sd->seen = (struct pr_hashmap){ 0 };
}

/* Addresses [lo, hi) in unit `cu` (NULL: none), then no line from hi. */
static int add_piece(struct sym_module *m, struct sym_side *sd, struct lines *t, uint64_t lo,
		     uint64_t hi, Dwarf_Die *cu)
{
	Dwarf_Lines *lines;
	size_t nr = 0, i;
	Dwarf_Addr at;
	int err;

	if (lo >= hi)
		return 0;
	if (cu && pr__sym_side_lines(sd, cu, &lines, &nr))
		nr = 0;
	/* The last row at or below lo (rows at one address: the last). */
	for (i = 0; i < nr; i++) {
		Dwarf_Line *row = dwarf_onesrcline(lines, i);

		if (!row || dwarf_lineaddr(row, &at) || at > lo)
			break;
	}
	err = add_row(m, t, lo, i ? dwarf_onesrcline(lines, i - 1) : NULL);
	for (; !err && i < nr; i++) {
		Dwarf_Line *row = dwarf_onesrcline(lines, i);

		if (!row || dwarf_lineaddr(row, &at) || at >= hi)
			break;
		/* Only the last row at an address counts. */
		if (i + 1 < nr) {
			Dwarf_Addr next;
			Dwarf_Line *n = dwarf_onesrcline(lines, i + 1);

			if (n && !dwarf_lineaddr(n, &next) && next == at)
				continue;
		}
		err = add_row(m, t, at, row);
	}
	return err ? err : add(t, hi, NULL, 0);
}

/* The units' own ranges (cu_by_ranges()) over [lo, hi): each range
 * holds from its start up to the next one's (they are sorted). */
static int add_by_ranges(struct sym_module *m, struct sym_side *sd, const uint64_t *units,
			 size_t nr_units, struct lines *t, uint64_t lo, uint64_t hi)
{
	size_t nr;
	const struct cu_span *sp = pr__sym_cu_spans(m, &nr);
	int err = 0;

	for (size_t i = 0; !err && i < nr; i++) {
		uint64_t a = sp[i].lo, b = sp[i].hi;
		Dwarf_Die cu;

		if (i + 1 < nr && sp[i + 1].lo < b)
			b = sp[i + 1].lo;
		a = a > lo ? a : lo;
		b = b < hi ? b : hi;
		if (a < b && pr__sym_unit_in(units, nr_units, sp[i].die) &&
		    dwarf_offdie(m->dwarf, sp[i].die, &cu))
			err = add_piece(m, sd, t, a, b, &cu);
	}
	return err;
}

bool pr__sym_arange(Dwarf_Aranges *ar, size_t nr, size_t i, uint64_t *lo, uint64_t *hi,
		    uint64_t *end, Dwarf_Off *unit)
{
	Dwarf_Addr next;
	Dwarf_Word len;

	if (dwarf_getarangeinfo(dwarf_onearange(ar, i), lo, &len, unit))
		return false;
	*end = *lo + len;
	if (i + 1 < nr && !dwarf_getarangeinfo(dwarf_onearange(ar, i + 1), &next, NULL, NULL))
		*hi = next;
	else
		*hi = *lo + len + 1 > *lo ? *lo + len + 1 : UINT64_MAX;
	return true;
}

int pr__sym_lines_read(struct sym_module *m, struct sym_side *sd, const uint64_t *units,
		       size_t nr_units, struct sym_line **out, size_t *nr_out)
{
	struct lines t = { 0 };
	Dwarf_Aranges *ar;
	size_t nr = 0;
	uint64_t from = 0;           /* what the aranges left to the units' ranges */
	int err = 0;

	if (dwarf_getaranges(m->dwarf, &ar, &nr))
		nr = 0;
	for (size_t i = 0; !err && i < nr; i++) {
		uint64_t lo, hi, end;
		Dwarf_Off off;
		Dwarf_Die cu;

		if (!pr__sym_arange(ar, nr, i, &lo, &hi, &end, &off))
			continue;
		if (!dwarf_offdie(m->dwarf, off, &cu))
			continue;
		if (lo > from)
			err = add_by_ranges(m, sd, units, nr_units, &t, from, lo);
		if (!err && pr__sym_unit_in(units, nr_units, off))
			err = add_piece(m, sd, &t, lo, hi, &cu);
		from = hi > from ? hi : from;
	}
	if (!err)
		err = add_by_ranges(m, sd, units, nr_units, &t, from, UINT64_MAX);
	if (err) {
		free(t.v);
		return err;
	}
	*out = t.v;
	*nr_out = t.nr;
	return 0;
}
