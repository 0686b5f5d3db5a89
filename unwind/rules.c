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
 *
 * Also where a stack ends beyond what the CFI says: Go's runtime.
 */
#include <errno.h>
#include <gelf.h>
#include <stdlib.h>
#include <string.h>

#include "unwind-int.h"

/*
 * Go's runtime starts stacks in functions its own traceback stops at
 * (TOPFRAME: goexit under every goroutine, mstart under every thread's
 * system stack, rt0_go under the first), and switches stacks in others:
 * systemstack, mcall, morestack, asmcgocall and gogo to and from the
 * system stack, nanotime1 and walltime to it around a vDSO call; the
 * kernel to the signal stack before sigtramp, and back in sigreturn (the
 * restorer; sigreturn__sigaction since Go 1.20).
 * Their CFI, which the linker writes from stack-pointer deltas alone,
 * does not say so: it finds a caller above the frame, in stale words of
 * the stack switched to, in argc for rt0_go, in the signal frame for
 * sigreturn.  The snapshot holds only the stack the sample was on, so
 * these are the outermost frames it has.  ABI0 assembly is named with
 * ".abi0" since Go 1.17, where a wrapper may have the bare name: the
 * suffixed symbol is preferred.
 */
static const char *const go_tops[] = {
	"runtime.goexit", "runtime.mstart", "runtime.rt0_go",
	"runtime.systemstack", "runtime.mcall", "runtime.morestack", "runtime.asmcgocall",
	"runtime.gogo", "runtime.nanotime1", "runtime.walltime", "runtime.walltime1",
	"runtime.sigtramp", "runtime.cgoSigtramp", "runtime.sigreturn",
	"runtime.sigreturn__sigaction",
};
_Static_assert(PR_ARRAY_SIZE(go_tops) <= UW_MAX_TOPS, "room for every top frame");

static void read_go_tops(struct uw_elf *e, Elf *elf, Elf_Scn *symtab)
{
	struct uw_range found[PR_ARRAY_SIZE(go_tops)] = { 0 };
	bool abi0[PR_ARRAY_SIZE(go_tops)] = { false };
	Elf_Data *d = elf_getdata(symtab, NULL);
	GElf_Shdr sh;
	GElf_Sym sym;

	if (!d || !gelf_getshdr(symtab, &sh) || !sh.sh_entsize)
		return;
	for (size_t i = 0; i < sh.sh_size / sh.sh_entsize && gelf_getsym(d, (int)i, &sym); i++) {
		const char *name = elf_strptr(elf, sh.sh_link, sym.st_name);

		if (!name || GELF_ST_TYPE(sym.st_info) != STT_FUNC || !sym.st_size ||
		    strncmp(name, "runtime.", 8))
			continue;
		for (size_t k = 0; k < PR_ARRAY_SIZE(go_tops); k++) {
			size_t n = strlen(go_tops[k]);
			bool suffixed;

			if (strncmp(name, go_tops[k], n))
				continue;
			suffixed = !strcmp(name + n, ".abi0");
			if ((name[n] && !suffixed) || (abi0[k] && !suffixed))
				continue;
			found[k] = (struct uw_range){ sym.st_value, sym.st_value + sym.st_size };
			abi0[k] = suffixed;
		}
	}
	for (size_t k = 0; k < PR_ARRAY_SIZE(go_tops); k++)
		if (found[k].hi)
			e->tops[e->nr_tops++] = found[k];
}

bool uw_elf_is_top(const struct uw_elf *e, uint64_t vaddr)
{
	for (size_t i = 0; i < e->nr_tops; i++)
		if (vaddr >= e->tops[i].lo && vaddr < e->tops[i].hi)
			return true;
	return false;
}

/* Rows kept per file at most: a sane table has one per row of CFI. */
#define MAX_RULES (1u << 20)

/* What searching one table for an address found: an FDE's row, or the
 * addresses around it that none of the table's FDEs covers (where the
 * next table, or no information, applies). */
struct search {
	int found;                   /* as uw_cfi_row() */
	uint64_t gap_lo, gap_hi;
};

/* The row of the FDE at `fde` of `buf`, for `addr`, knowing the search
 * picked it as the last entry starting at or before `addr` (at
 * `entry`), the next entry starting at `next` (0: none). */
static struct search row_of(const unsigned char *buf, size_t size, uint64_t vaddr,
			    size_t fde, uint64_t entry, uint64_t next, uint64_t addr,
			    struct uw_rule *r)
{
	struct search s = { uw_cfi_row(buf, size, vaddr, fde, addr, r), 0, next ? next : UINT64_MAX };

	if (s.found == 1) {
		/* Where the table says another FDE begins, the search finds
		 * that one: the row ends there, whatever its FDE says. */
		if (r->lo < entry)
			r->lo = entry;
		if (next && r->hi > next)
			r->hi = next;
	} else if (s.found == 0) {
		/* The FDE ends before addr (or, in a malformed table, starts
		 * after it): no information from its entry on, until the FDE
		 * or the next entry. */
		s.gap_lo = entry;
		if (r->hi > s.gap_lo && r->hi <= addr)
			s.gap_lo = r->hi;
		if (r->lo > addr && r->lo < s.gap_hi)
			s.gap_hi = r->lo;
	}
	return s;
}

/* Through one of our built tables (.eh_frame indexed, or .debug_frame
 * converted: its FDEs hold link-time addresses). */
static struct search from_built(const struct uw_elf *e, const struct uw_cfi_table *t,
				uint64_t addr, struct uw_rule *r)
{
	size_t lo = 0, hi = t->nr;
	uint64_t entry, next;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (e->img->text_lo + (uint64_t)(int64_t)t->index[mid].start <= addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	next = lo < t->nr ? e->img->text_lo + (uint64_t)(int64_t)t->index[lo].start : 0;
	if (!lo)
		return (struct search){ 0, 0, next ? next : UINT64_MAX };
	entry = e->img->text_lo + (uint64_t)(int64_t)t->index[lo - 1].start;
	if (t->frames)
		return row_of(t->frames, t->frames_size, 0, (size_t)t->index[lo - 1].fde,
			      entry, next, addr, r);
	return row_of(e->img->data + e->img->eh_frame.offset, (size_t)e->img->eh_frame.size,
		      e->img->eh_frame.vaddr, (size_t)t->index[lo - 1].fde, entry, next, addr,
		      r);
}

/* Through .eh_frame_hdr's table: (start, FDE) pairs of signed 32-bit
 * offsets from the header, sorted by start. */
static struct search from_eh_hdr(const struct uw_elf *e, uint64_t addr, struct uw_rule *r)
{
	const unsigned char *seg, *table;
	size_t seg_size, lo = 0, hi = e->fde_count;
	uint64_t seg_vaddr, fde, entry, next = 0;
	int32_t v[2];

	seg = pr__elf_segment(e->img, e->eh_table_vaddr, &seg_size, &seg_vaddr);
	if (!seg || e->fde_count * 8 > seg_size - (e->eh_table_vaddr - seg_vaddr))
		return (struct search){ -1, 0, 0 };
	table = seg + (e->eh_table_vaddr - seg_vaddr);
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		memcpy(v, table + mid * 8, 4);
		if (e->eh_hdr_vaddr + (uint64_t)(int64_t)v[0] <= addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (lo < e->fde_count) {
		memcpy(v, table + lo * 8, 4);
		next = e->eh_hdr_vaddr + (uint64_t)(int64_t)v[0];
	}
	if (!lo)
		return (struct search){ 0, 0, next ? next : UINT64_MAX };
	memcpy(v, table + (lo - 1) * 8, 8);
	entry = e->eh_hdr_vaddr + (uint64_t)(int64_t)v[0];
	fde = e->eh_hdr_vaddr + (uint64_t)(int64_t)v[1];
	/* The FDE and its CIE are in .eh_frame, in the segment. */
	seg = pr__elf_segment(e->img, fde, &seg_size, &seg_vaddr);
	if (!seg)
		return (struct search){ -1, 0, 0 };
	return row_of(seg, seg_size, seg_vaddr, (size_t)(fde - seg_vaddr), entry, next, addr, r);
}

/* The file's .eh_frame alone, however it is indexed. */
static struct search search_eh(const struct uw_elf *e, uint64_t addr, struct uw_rule *r)
{
	if (e->table == UW_TABLE_EH_HDR)
		return from_eh_hdr(e, addr, r);
	if (e->table == UW_TABLE_EH_FRAME)
		return from_built(e, &e->eh, addr, r);
	return (struct search){ 0, 0, UINT64_MAX };
}

/* Bytes of an entry point taken as its function where no symbol sizes
 * it: every _start calls within its first few instructions (glibc's
 * ld.so at +3, musl's at +17). */
#define ENTRY_BYTES 64

/*
 * The kernel starts a process at its entry point (the interpreter's, or
 * a static program's), which nothing called.  glibc's _start says so in
 * its CFI; ld.so's has none at all, so that a sample taken while it
 * relocates would end "without unwind information" one frame short of
 * where it could only end.  Where .eh_frame does not cover the entry,
 * its function -- by a symbol that sizes it, else the bytes up to the
 * next FDE, at most ENTRY_BYTES -- is a top.
 */
static void read_entry_top(struct uw_elf *e, Elf *elf)
{
	GElf_Ehdr eh;
	struct uw_rule r;
	struct search s;
	Elf_Scn *scn = NULL;
	GElf_Shdr sh;
	GElf_Sym sym;
	uint64_t lo, hi;

	if (!gelf_getehdr(elf, &eh) || !eh.e_entry || e->nr_tops >= UW_MAX_TOPS ||
	    eh.e_entry < e->img->text_lo || eh.e_entry >= e->img->text_hi)
		return;
	lo = eh.e_entry;
	memset(&r, 0, sizeof(r));
	s = search_eh(e, lo, &r);
	if (s.found != 0)
		return;
	hi = s.gap_hi < lo + ENTRY_BYTES ? s.gap_hi : lo + ENTRY_BYTES;
	while ((scn = elf_nextscn(elf, scn))) {
		Elf_Data *d;

		if (!gelf_getshdr(scn, &sh) || (sh.sh_type != SHT_SYMTAB && sh.sh_type != SHT_DYNSYM) ||
		    !sh.sh_entsize || !(d = elf_getdata(scn, NULL)))
			continue;
		for (size_t i = 0; i < sh.sh_size / sh.sh_entsize && gelf_getsym(d, (int)i, &sym); i++)
			if (sym.st_value == lo && sym.st_size && sym.st_shndx != SHN_UNDEF &&
			    (GELF_ST_TYPE(sym.st_info) == STT_FUNC ||
			     GELF_ST_TYPE(sym.st_info) == STT_NOTYPE))
				hi = lo + sym.st_size;
	}
	e->tops[e->nr_tops++] = (struct uw_range){ lo, hi };
}

void uw_read_tops(struct uw_elf *e)
{
	Elf *elf;
	Elf_Scn *scn = NULL;
	GElf_Shdr sh;

	if (!(elf = elf_memory((char *)e->img->data, e->img->size)))
		return;
	if (e->img->go)
		while ((scn = elf_nextscn(elf, scn)))
			if (gelf_getshdr(scn, &sh) && sh.sh_type == SHT_SYMTAB) {
				read_go_tops(e, elf, scn);
				break;
			}
	read_entry_top(e, elf);
	elf_end(elf);
}

static const char *const c_roots[] = {
	"__libc_start_call_main", "__libc_start_main", "start_thread",
};
_Static_assert(PR_ARRAY_SIZE(c_roots) <= UW_MAX_ROOTS, "room for every root");

/* e->roots from the symbols of `img` (e's file or its debug file). */
static void read_roots(struct uw_elf *e, const struct pr_elf *img)
{
	Elf *elf = elf_memory((char *)img->data, img->size);
	Elf_Scn *scn = NULL;
	GElf_Shdr sh;
	GElf_Sym sym;

	while (elf && (scn = elf_nextscn(elf, scn))) {
		Elf_Data *d;

		if (!gelf_getshdr(scn, &sh) || (sh.sh_type != SHT_SYMTAB && sh.sh_type != SHT_DYNSYM) ||
		    !sh.sh_entsize || !(d = elf_getdata(scn, NULL)))
			continue;
		for (size_t i = 0; i < sh.sh_size / sh.sh_entsize && gelf_getsym(d, (int)i, &sym); i++) {
			const char *name = elf_strptr(elf, sh.sh_link, sym.st_name);
			bool known = false;

			if (!name || GELF_ST_TYPE(sym.st_info) != STT_FUNC || !sym.st_size ||
			    sym.st_shndx == SHN_UNDEF)
				continue;
			for (size_t k = 0; k < PR_ARRAY_SIZE(c_roots); k++)
				known |= !strcmp(name, c_roots[k]);
			for (size_t k = 0; known && k < e->nr_roots; k++)
				known = e->roots[k].lo != sym.st_value;
			if (known && e->nr_roots < UW_MAX_ROOTS)
				e->roots[e->nr_roots++] =
					(struct uw_range){ sym.st_value, sym.st_value + sym.st_size };
		}
	}
	if (elf)
		elf_end(elf);
}

bool uw_elf_is_root(struct pr_unwinder *u, struct uw_elf *e, uint64_t vaddr)
{
	struct pr_elf *dbg;

	if (!e->roots_read) {
		e->roots_read = true;
		read_roots(e, e->img);
		/* A stripped file's local symbols are in its debug file. */
		if (e->nr_roots < PR_ARRAY_SIZE(c_roots) &&
		    (dbg = pr__elfcache_debug(u->files, e->img, &u->lg)))
			read_roots(e, dbg);
	}
	for (size_t i = 0; i < e->nr_roots; i++)
		if (vaddr >= e->roots[i].lo && vaddr < e->roots[i].hi)
			return true;
	return false;
}

static uint64_t max64(uint64_t a, uint64_t b)
{
	return a > b ? a : b;
}

static uint64_t min64(uint64_t a, uint64_t b)
{
	return a < b ? a : b;
}

/* Compute the row for `addr` the way find_proc_info looks for it: the
 * file's .eh_frame, then .debug_frame where .eh_frame has nothing. */
static void compute(struct pr_unwinder *u, struct uw_elf *e, uint64_t addr, struct uw_rule *r)
{
	struct search eh = { 0, 0, UINT64_MAX }, dbg_s;
	const struct uw_cfi_table *dbg;

	if (e->table == UW_TABLE_EH_HDR || e->table == UW_TABLE_EH_FRAME)
		eh = search_eh(e, addr, r);
	if (eh.found == 1)
		return;
	if (eh.found == 0 && (dbg = uw_debug_frame(u, e))) {
		dbg_s = from_built(e, dbg, addr, r);
		if (dbg_s.found == 1) {
			/* Only where .eh_frame has nothing. */
			r->lo = max64(r->lo, eh.gap_lo);
			r->hi = min64(r->hi, eh.gap_hi);
			return;
		}
		eh.found = dbg_s.found;
		eh.gap_lo = max64(eh.gap_lo, dbg_s.gap_lo);
		eh.gap_hi = min64(eh.gap_hi, dbg_s.gap_hi);
	}
	/* No information, or none we read: libunwind decides, for the
	 * whole gap between FDEs, or this one address. */
	memset(r, 0, sizeof(*r));
	r->lo = eh.found == 0 ? eh.gap_lo : addr;
	r->hi = eh.found == 0 ? eh.gap_hi : addr + 1;
}

/* How many of e's table's rows start at or before addr: those of the
 * pages before addr's, counted by the page directory, and of its page,
 * searched.  The table is a few hundred kilobytes for a compiler, and
 * a lookup is one frame cache miss: searched whole, the lookups were
 * 6 % of a report of cc1's capture (BENCHMARKS.md, seventeenth pass). */
static size_t rules_upto(const struct uw_elf *e, uint64_t addr)
{
	uint64_t page = (addr - e->img->text_lo) >> e->rule_dir_shift;
	size_t from, to;

	if (!e->rule_dir || addr < e->img->text_lo || page + 1 >= e->nr_rule_dir)
		return pr__upper_bound(e->rules, e->nr_rules, sizeof(*e->rules), addr);
	from = e->rule_dir[page];
	to = e->rule_dir[page + 1];
	return from + pr__upper_bound(e->rules + from, to - from, sizeof(*e->rules), addr);
}

/* Count, for each page of the text, the table's rows starting at or
 * before its first byte (rules_upto()).  Pages of 4 KiB, or larger for a
 * text over 256 MiB, so that the directory stays at 256 KiB at most. */
static void index_rules(struct uw_elf *e)
{
	uint64_t lo = e->img->text_lo, span = e->img->text_hi > lo ? e->img->text_hi - lo : 0;
	unsigned shift = 12;
	size_t n, k = 0;
	uint32_t *dir;

	while ((span >> shift) >= 65536)
		shift++;
	n = (size_t)(span >> shift) + 2;
	if (n != e->nr_rule_dir) {
		dir = realloc(e->rule_dir, n * sizeof(*dir));
		if (!dir) {
			free(e->rule_dir);
			e->rule_dir = NULL;
			e->nr_rule_dir = 0;
			return;
		}
		e->rule_dir = dir;
		e->nr_rule_dir = n;
	}
	e->rule_dir_shift = shift;
	for (size_t i = 0; i < n; i++) {
		uint64_t at = lo + ((uint64_t)i << shift);

		while (k < e->nr_rules && e->rules[k].lo <= at)
			k++;
		e->rule_dir[i] = (uint32_t)k;
	}
}

/* The row in v[0, nr) (sorted) holding addr, into *out, given how many
 * of them start at or before it. */
static bool row_at(const struct uw_rule *v, size_t upto, uint64_t addr, struct uw_rule *out)
{
	/* v[upto - 1] is the last row starting at or before addr. */
	if (upto && addr < v[upto - 1].hi) {
		*out = v[upto - 1];
		return true;
	}
	return false;
}

/* `r`, a row found for addr, cut so that it overlaps none of v[0, nr)'s,
 * `lo` of which start at or before addr. */
static void cut_to(const struct uw_rule *v, size_t nr, size_t lo, struct uw_rule *r)
{
	/* Rows are disjoint by construction; this only guards against a
	 * table that contradicts itself. */
	if (lo && r->lo < v[lo - 1].hi)
		r->lo = v[lo - 1].hi;
	if (lo < nr && r->hi > v[lo].lo)
		r->hi = v[lo].lo;
}

/* Keep row `r`: among the newest, merged into the table when there are
 * UW_NEW_RULES of them.  -ENOMEM. */
static int keep(struct uw_elf *e, const struct uw_rule *r)
{
	size_t lo, i, j, k;

	if (!e->new_rules && !(e->new_rules = malloc(UW_NEW_RULES * sizeof(*r))))
		return -ENOMEM;
	lo = pr__upper_bound(e->new_rules, e->nr_new_rules, sizeof(*r), r->lo);
	memmove(e->new_rules + lo + 1, e->new_rules + lo,
		(e->nr_new_rules - lo) * sizeof(*r));
	e->new_rules[lo] = *r;
	if (++e->nr_new_rules < UW_NEW_RULES)
		return 0;
	if (PR_ARRAY_RESERVE(e->rules, e->cap_rules, e->nr_rules + e->nr_new_rules)) {
		e->nr_new_rules--;
		memmove(e->new_rules + lo, e->new_rules + lo + 1,
			(e->nr_new_rules - lo) * sizeof(*r));
		return -ENOMEM;
	}
	/* Merge from the back, in place. */
	i = e->nr_rules;
	j = e->nr_new_rules;
	for (k = i + j; j; k--) {
		if (i && e->rules[i - 1].lo > e->new_rules[j - 1].lo)
			e->rules[k - 1] = e->rules[--i];
		else
			e->rules[k - 1] = e->new_rules[--j];
	}
	e->nr_rules += e->nr_new_rules;
	e->nr_new_rules = 0;
	index_rules(e);
	return 0;
}

bool uw_rule_find(struct pr_unwinder *u, struct uw_elf *e, uint64_t addr, struct uw_rule *out)
{
	size_t upto = rules_upto(e, addr), new_upto;
	struct uw_rule r;

	if (row_at(e->rules, upto, addr, out))
		return true;
	new_upto = pr__upper_bound(e->new_rules, e->nr_new_rules, sizeof(*e->new_rules), addr);
	if (row_at(e->new_rules, new_upto, addr, out))
		return true;
	compute(u, e, addr, &r);
	cut_to(e->rules, e->nr_rules, upto, &r);
	cut_to(e->new_rules, e->nr_new_rules, new_upto, &r);
	if (r.lo > addr || r.hi <= addr) {
		r.lo = addr;
		r.hi = addr + 1;
	}
	*out = r;
	/* The last address has no one-past-the-end to keep a row by; and a
	 * file whose table leaves a row per address is kept in bounds. */
	if (r.hi <= r.lo || e->nr_rules + e->nr_new_rules >= MAX_RULES)
		return true;
	return !keep(e, &r);
}
