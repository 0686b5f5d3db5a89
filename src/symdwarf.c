/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The symbolizer's DWARF: the functions inlined at an address, innermost
 * first, named and with their lines as addr2line and perf give them.
 */
#include <dwarf.h>
#include <elfutils/libdw.h>
#include <gelf.h>
#include <stdint.h>
#include <stdlib.h>

#include "symbolizer.h"

/* The name a scope's function goes by: its linkage name demangled (the
 * whole C++ name), else its DW_AT_name, through abstract origins. */
static const char *scope_name(struct pr_symbolizer *s, Dwarf_Die *die, bool *linkage)
{
	Dwarf_Attribute attr;
	const char *name = NULL;

	if (dwarf_attr_integrate(die, DW_AT_linkage_name, &attr) ||
	    dwarf_attr_integrate(die, DW_AT_MIPS_linkage_name, &attr))
		name = dwarf_formstring(&attr);
	*linkage = name != NULL;
	if (!name)
		name = dwarf_diename(die);
	if (!name && dwarf_attr_integrate(die, DW_AT_name, &attr))
		name = dwarf_formstring(&attr);
	return name ? pr__sym_demangle(s, &s->arena, name) : NULL;
}

/* The call site of an inlined scope: DW_AT_call_file and _line. */
static void call_site(struct pr_symbolizer *s, Dwarf_Die *cu, Dwarf_Die *die,
		      const char **file, uint32_t *line)
{
	Dwarf_Attribute attr;
	Dwarf_Word idx, ln;
	Dwarf_Files *files;
	size_t nfiles;
	const char *name;

	*file = NULL;
	*line = 0;
	if (dwarf_formudata(dwarf_attr(die, DW_AT_call_line, &attr), &ln) == 0)
		*line = (uint32_t)ln;
	if (dwarf_formudata(dwarf_attr(die, DW_AT_call_file, &attr), &idx) == 0 &&
	    dwarf_getsrcfiles(cu, &files, &nfiles) == 0 && idx < nfiles &&
	    (name = dwarf_filesrc(files, idx, NULL, NULL)))
		*file = pr__sym_intern_file(s, name);
}

/*
 * The ELF symbol addr2line (binutils) takes an address to be in: of the
 * function and untyped symbols in the section holding it, starting at or
 * below it, one that contains it, then the nearest, then the later in the
 * table.  It differs from perf's pick among aliases (__memcpy_* and
 * __memmove_* share their code).  Few addresses need it: a walk over the
 * table is fine.
 */
static const char *addr2line_symbol(struct sym_module *m, uint64_t vaddr, uint64_t *start)
{
	int n = dwfl_module_getsymtab(m->mod);
	const char *best = NULL;
	bool best_contains = false;

	*start = 0;
	for (int i = 1; i < n; i++) {
		GElf_Sym sym;
		GElf_Addr addr;
		GElf_Word shndx;
		GElf_Shdr shdr;
		Elf_Scn *scn;
		Elf *elf;
		Dwarf_Addr bias;
		const char *name = dwfl_module_getsym_info(m->mod, i, &sym, &addr, &shndx, &elf,
							   &bias);
		uint8_t type = GELF_ST_TYPE(sym.st_info);
		bool contains;

		if (!name || !name[0] || !elf || addr > vaddr || sym.st_shndx == SHN_UNDEF ||
		    sym.st_shndx >= SHN_LORESERVE ||
		    (type != STT_FUNC && type != STT_GNU_IFUNC && type != STT_NOTYPE) ||
		    !(scn = elf_getscn(elf, sym.st_shndx)) || !gelf_getshdr(scn, &shdr) ||
		    vaddr < shdr.sh_addr + bias || vaddr - shdr.sh_addr - bias >= shdr.sh_size)
			continue;
		contains = vaddr - addr < sym.st_size;
		if (!best || (contains && !best_contains) ||
		    (contains == best_contains && addr >= *start)) {
			best = name;
			*start = addr;
			best_contains = contains;
		}
	}
	return best;
}

/*
 * The scopes around `pc` under `parent` (a CU, or a function found
 * already, then path[0..n) holds it): the functions and inlined calls,
 * outermost first, looking through lexical blocks.  Returns how many in
 * all.
 */
static int scope_path(Dwarf_Die parent, Dwarf_Addr pc, Dwarf_Die *path, int n, int max)
{
	Dwarf_Die child;

	while (n < max && dwarf_child(&parent, &child) == 0) {
		bool found = false;

		do {
			int tag = dwarf_tag(&child);

			if ((tag == DW_TAG_subprogram || tag == DW_TAG_inlined_subroutine ||
			     tag == DW_TAG_lexical_block) && dwarf_haspc(&child, pc) > 0) {
				if (tag != DW_TAG_lexical_block)
					path[n++] = child;
				parent = child;
				found = true;
			}
		} while (!found && dwarf_siblingof(&child, &child) == 0);
		if (!found)
			break;
	}
	return n;
}

/*
 * Compilers put every function with code at the top of its CU (methods
 * too, with DW_AT_specification), so the function an address is in is
 * one of the CU's children.  A C++ CU has thousands of them (types,
 * declarations, templates): walking them for every new address was most
 * of a live profile's CPU.  Each CU's functions' ranges are read once,
 * sorted, and searched.
 */
struct cu_range {
	Dwarf_Addr lo, hi;
	Dwarf_Off die;
};

struct cu_index {
	size_t nr;
	struct cu_range r[];
};

static int by_lo(const void *a, const void *b)
{
	const struct cu_range *x = a, *y = b;

	return (x->lo > y->lo) - (x->lo < y->lo);
}

static struct cu_index *cu_index(struct sym_module *m, Dwarf_Die *cu)
{
	uint64_t key = dwarf_dieoffset(cu) + 1;
	struct cu_index *x = pr__hashmap_get(&m->cus, key);
	size_t nr = 0, cap = 64;
	Dwarf_Die child;

	if (x)
		return x;
	if (!(x = malloc(sizeof(*x) + cap * sizeof(x->r[0]))))
		return NULL;
	if (dwarf_child(cu, &child) == 0) {
		do {
			Dwarf_Addr base, lo, hi;
			ptrdiff_t off = 0;

			if (dwarf_tag(&child) != DW_TAG_subprogram)
				continue;
			while ((off = dwarf_ranges(&child, off, &base, &lo, &hi)) > 0) {
				if (nr == cap) {
					struct cu_index *y = realloc(x, sizeof(*x) +
									2 * cap * sizeof(x->r[0]));

					if (!y) {
						free(x);
						return NULL;
					}
					x = y;
					cap *= 2;
				}
				x->r[nr++] = (struct cu_range){ lo, hi, dwarf_dieoffset(&child) };
			}
		} while (dwarf_siblingof(&child, &child) == 0);
	}
	x->nr = nr;
	qsort(x->r, nr, sizeof(x->r[0]), by_lo);
	if (pr__hashmap_put(&m->cus, key, x)) {
		free(x);
		return NULL;
	}
	return x;
}

/* The CU's function around `pc`, through the index: 1 and *fn, 0 when no
 * function has it, -1 when the index could not be made. */
static int top_function(struct sym_module *m, Dwarf_Die *cu, Dwarf_Addr pc, Dwarf_Die *fn)
{
	struct cu_index *x = cu_index(m, cu);
	size_t i;

	if (!x)
		return -1;
	/* The last range starting at or below pc, then back over the few
	 * that may start earlier and still hold it (nested or aliased). */
	i = pr__upper_bound(x->r, x->nr, sizeof(x->r[0]), pc);
	for (size_t k = 0; i > 0 && k < 16; k++, i--) {
		const struct cu_range *r = &x->r[i - 1];

		if (pc >= r->lo && pc < r->hi)
			return dwarf_offdie(dwarf_cu_getdwarf(cu->cu), r->die, fn) ? 1 : -1;
	}
	return 0;
}

void pr__sym_dwarf_free(struct sym_module *m)
{
	for (size_t i = 0; i < m->cus.cap; i++)
		free(m->cus.slots[i].value);
	pr__hashmap_free(&m->cus);
}

/*
 * The assembler describes a function once per name it has: aliases are
 * DW_TAG_subprograms with the same range.  addr2line takes the last of
 * those that fit the address best; so does this, into *fn.
 */
static void last_alias(Dwarf_Die *cu, uint64_t pc, Dwarf_Die *fn)
{
	Dwarf_Die child;
	Dwarf_Addr lo, hi, best = UINT64_MAX;

	if (dwarf_child(cu, &child))
		return;
	do {
		if (dwarf_tag(&child) != DW_TAG_subprogram || dwarf_lowpc(&child, &lo) ||
		    dwarf_highpc(&child, &hi) || pc < lo || pc >= hi || hi - lo > best)
			continue;
		best = hi - lo;
		*fn = child;
	} while (dwarf_siblingof(&child, &child) == 0);
}

/* Fill `funcs` (room for MAX_INLINE) innermost first from the DWARF at
 * `vaddr`: the functions inlined there and the one it is in, with their
 * lines, for a file with DWARF.  Code no DWARF function covers (assembly)
 * is one entry, named as addr2line names it.  Returns how many. */
size_t pr__sym_inline_chain(struct pr_symbolizer *s, struct sym_module *m, uint64_t vaddr,
			    const char *sym_name, struct pr_sym_func *funcs)
{
	Dwarf_Addr bias = 0;
	Dwarf_Die *cu, path[MAX_INLINE];
	Dwfl_Line *line;
	const char *file;
	int lineno = 0, n;
	size_t nr = 0;

	if (!m->dwarf_checked) {
		m->dwarf_checked = true;
		m->has_dwarf = dwfl_module_getdwarf(m->mod, &bias) != NULL;
		if (m->has_dwarf)
			s->stats.debug_files++;
	}
	if (!m->has_dwarf)
		return 0;
	cu = dwfl_module_addrdie(m->mod, vaddr, &bias);
	line = dwfl_module_getsrc(m->mod, vaddr);
	file = line ? dwfl_lineinfo(line, NULL, &lineno, NULL, NULL, NULL) : NULL;
	if (file)
		file = pr__sym_intern_file(s, file);
	/* The functions around the address, as they nest where they were
	 * inlined; innermost first from here. */
	if (!cu) {
		n = 0;
	} else if (dwarf_srclang(cu) == DW_LANG_Mips_Assembler) {
		n = scope_path(*cu, vaddr - bias, path, 0, MAX_INLINE);
		if (n > 0)
			last_alias(cu, vaddr - bias, &path[0]);
	} else {
		n = top_function(m, cu, vaddr - bias, &path[0]);
		n = n < 0 ? scope_path(*cu, vaddr - bias, path, 0, MAX_INLINE)
			  : n ? scope_path(path[0], vaddr - bias, path, 1, MAX_INLINE) : 0;
	}
	for (int k = n - 1; k >= 0 && nr < MAX_INLINE; k--) {
		int t = dwarf_tag(&path[k]);
		bool linkage;

		funcs[nr] = (struct pr_sym_func){ .name = scope_name(s, &path[k], &linkage),
						  .file = file, .line = (uint32_t)lineno,
						  .inlined = t == DW_TAG_inlined_subroutine };
		nr++;
		/* The caller's line is where it inlined this one. */
		if (t == DW_TAG_inlined_subroutine)
			call_site(s, cu, &path[k], &file, (uint32_t *)&lineno);
	}
	/* Code no DWARF function covers: addr2line names it by its symbol. */
	if (!nr) {
		uint64_t start;
		const char *at = addr2line_symbol(m, vaddr, &start);

		if (at)
			sym_name = pr__sym_demangle(s, &s->arena, at);
		if (sym_name)
			funcs[nr++] = (struct pr_sym_func){ .name = sym_name, .file = file,
							    .line = (uint32_t)lineno };
	}
	return nr;
}
