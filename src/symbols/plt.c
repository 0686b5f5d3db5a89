/* SPDX-License-Identifier: Apache-2.0 */
/*
 * A file's PLT stubs named as objdump and perf 7.3 name them:
 * "callee@plt".
 *
 * On x86-64 a stub jumps through a GOT slot (jmp *slot(%rip), after an
 * endbr64 and a bnd prefix where IBT or MPX put them), and the dynamic
 * relocation of that slot names the callee: JUMP_SLOT for the stubs in
 * .plt and .plt.sec, GLOB_DAT for those in .plt.got (a function whose
 * address is also taken is called through the slot holding it).  An
 * IRELATIVE relocation has no symbol: its addend is the address of an
 * IFUNC's resolver, and the IFUNC symbol there names the stub, as perf
 * 7.3 names it (objdump writes "*ABS*+0x...@plt").  libc's own stubs,
 * calling its string functions, are those.
 *
 * The stubs are decoded, as objdump does, rather than named in the order
 * of .rela.plt, as perf 6.1 did: .rela.plt is not in the stubs' order
 * (GNU ld sorts IRELATIVE entries apart: all of libc's names were off by
 * some), with IBT the stubs called are in .plt.sec and .plt holds the
 * lazy binding's entries, .plt.got has no relocations of its own, and
 * lld writes .plt with sh_entsize 0.
 *
 * What is not a stub: the start of .plt up to its first stub (the lazy
 * binding's header), and with .plt.sec all of .plt, are ".plt", as perf
 * 7.3 names them.  A stub whose slot no relocation names is unnamed
 * ([unknown]) rather than in the room of the symbol before (objdump has
 * no name for it either; perf 7.3 prints "offset_0x...@plt").
 */
#include <errno.h>
#include <gelf.h>
#include <stdlib.h>
#include <string.h>

#include "symbols/symbolizer.h"

#ifndef R_X86_64_IRELATIVE
#define R_X86_64_IRELATIVE 37
#endif

/* A GOT slot a stub may jump through, and who it is for. */
struct slot {
	uint64_t got;                /* the relocation's r_offset */
	const char *callee;          /* in a string table of the file, or NULL */
	uint64_t resolver;           /* IRELATIVE: its addend */
	bool irelative;
};

struct slots {
	struct slot *v;
	size_t nr, cap;
};

static int by_got(const void *a, const void *b)
{
	const struct slot *x = a, *y = b;

	return (x->got > y->got) - (x->got < y->got);
}

/* The relocations of one SHT_RELA section that stubs jump through. */
static int add_slots(Elf *elf, Elf_Scn *scn, const GElf_Shdr *sh, struct slots *sl)
{
	Elf_Data *relas = elf_getdata(scn, NULL);
	Elf_Scn *symscn = sh->sh_link ? elf_getscn(elf, sh->sh_link) : NULL;
	Elf_Data *syms = symscn ? elf_getdata(symscn, NULL) : NULL;
	GElf_Shdr symsh;
	size_t n;

	if (!relas || !sh->sh_entsize)
		return 0;
	if (symscn && !gelf_getshdr(symscn, &symsh))
		syms = NULL;
	n = relas->d_size / sh->sh_entsize;
	for (size_t i = 0; i < n; i++) {
		GElf_Rela r;
		GElf_Sym sym;
		uint32_t type;
		struct slot s = { 0 };

		if (!gelf_getrela(relas, (int)i, &r))
			break;
		type = (uint32_t)GELF_R_TYPE(r.r_info);
		if (type != R_X86_64_JUMP_SLOT && type != R_X86_64_GLOB_DAT &&
		    type != R_X86_64_IRELATIVE)
			continue;
		s.got = r.r_offset;
		s.irelative = type == R_X86_64_IRELATIVE;
		s.resolver = (uint64_t)r.r_addend;
		/* (A symbol index past the table, or a name past its strings,
		 * is no name: libelf checks both.) */
		if (GELF_R_SYM(r.r_info) && syms &&
		    gelf_getsym(syms, (int)GELF_R_SYM(r.r_info), &sym) && sym.st_name)
			s.callee = elf_strptr(elf, symsh.sh_link, sym.st_name);
		if (PR_ARRAY_RESERVE(sl->v, sl->cap, sl->nr + 1))
			return -ENOMEM;
		sl->v[sl->nr++] = s;
	}
	return 0;
}

static int by_addr(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return (x > y) - (x < y);
}

/*
 * IRELATIVE slots named by the symbol at their resolver's address: the
 * one the table keeps there (perf's pick among aliases), when an IFUNC
 * symbol is there.  An addend pointing anywhere else names nothing.
 */
static void name_irelative(struct sym_module *m, struct slots *sl, uint64_t *ifuncs,
			   size_t nr_ifuncs)
{
	if (nr_ifuncs)
		qsort(ifuncs, nr_ifuncs, sizeof(*ifuncs), by_addr);
	for (size_t i = 0; i < sl->nr; i++) {
		struct slot *s = &sl->v[i];
		const struct pr_sym *sym;

		if (!s->irelative || (s->callee && s->callee[0]))
			continue;
		sym = pr__symtab_find(&m->syms, s->resolver);
		if (sym && sym->start == s->resolver && sym->binding != PR_SYM_PLT && nr_ifuncs &&
		    bsearch(&s->resolver, ifuncs, nr_ifuncs, sizeof(*ifuncs), by_addr))
			s->callee = sym->name;
	}
}

/* The GOT slot the stub of `len` bytes at `p`, at address `addr`, jumps
 * through; 0 when they are not a stub's (.plt's header: push, jmp; a
 * lazy binding entry of .plt beside .plt.sec: endbr64, push, jmp). */
static uint64_t stub_slot(const unsigned char *p, size_t len, uint64_t addr)
{
	static const unsigned char endbr64[] = { 0xf3, 0x0f, 0x1e, 0xfa };
	size_t n = 0;
	uint32_t disp;

	if (len >= sizeof(endbr64) && !memcmp(p, endbr64, sizeof(endbr64)))
		n = sizeof(endbr64);
	if (n < len && p[n] == 0xf2)
		n++;
	if (len < n + 6 || p[n] != 0xff || p[n + 1] != 0x25)
		return 0;
	disp = (uint32_t)p[n + 2] | (uint32_t)p[n + 3] << 8 | (uint32_t)p[n + 4] << 16 |
	       (uint32_t)p[n + 5] << 24;
	return addr + n + 6 + (uint64_t)(int64_t)(int32_t)disp;
}

/* The stubs of one of .plt, .plt.sec and .plt.got; `lazy_only`: .plt
 * beside .plt.sec, no stub of its own.  0, or -ENOMEM. */
static int add_stubs(struct sym_module *m, Elf_Scn *scn, const GElf_Shdr *sh, bool is_plt,
		     bool lazy_only, const struct slots *sl)
{
	Elf_Data *d = elf_getdata(scn, NULL);
	/* Entries are 8 or 16 bytes; lld leaves sh_entsize 0. */
	uint64_t ent = sh->sh_entsize == 8 || sh->sh_entsize == 16 ? sh->sh_entsize :
		       sh->sh_addralign == 8 ? 8 : 16;
	uint64_t size, lead = 0;
	bool stubs = false;

	if (!d || !d->d_buf)
		return 0;
	size = d->d_size < sh->sh_size ? d->d_size : sh->sh_size;
	for (uint64_t off = 0; off + ent <= size; off += ent) {
		uint64_t at = sh->sh_addr + off;
		uint64_t got = lazy_only ? 0 : stub_slot((const unsigned char *)d->d_buf + off, ent, at);
		struct slot key = { .got = got };
		const struct slot *s = NULL;
		const char *callee;

		if (got && sl->nr)
			s = bsearch(&key, sl->v, sl->nr, sizeof(*sl->v), by_got);
		callee = s && s->callee ? s->callee : "";

		if (!got && !stubs && is_plt) {
			lead = off + ent;
			continue;
		}
		stubs = true;
		if (pr__symtab_add(&m->syms, at, ent, callee, PR_SYM_PLT))
			return -ENOMEM;
	}
	if (lead && pr__symtab_add(&m->syms, sh->sh_addr, lead, ".plt", PR_SYM_GLOBAL))
		return -ENOMEM;
	return 0;
}

/*
 * Other machines: perf 6.1's rule, "callee@plt" for each .rela.plt entry
 * in order, an entry's size apart after the first (the resolver's).
 */
static void stubs_in_order(struct sym_module *m, Elf *elf, const GElf_Shdr *plt,
			   Elf_Scn *rela_scn, const GElf_Shdr *rela)
{
	Elf_Scn *scn_dynsym = elf_getscn(elf, rela->sh_link);
	GElf_Shdr dynsym;
	Elf_Data *relas, *syms;
	uint64_t at = plt->sh_addr + plt->sh_entsize;

	if (!plt->sh_entsize || rela->sh_type != SHT_RELA || !rela->sh_entsize || !scn_dynsym ||
	    !gelf_getshdr(scn_dynsym, &dynsym) || !(relas = elf_getdata(rela_scn, NULL)) ||
	    !(syms = elf_getdata(scn_dynsym, NULL)))
		return;
	for (size_t i = 0; i < rela->sh_size / rela->sh_entsize; i++, at += plt->sh_entsize) {
		GElf_Rela r;
		GElf_Sym sym;
		const char *callee = "";

		if (!gelf_getrela(relas, (int)i, &r))
			break;
		if (gelf_getsym(syms, (int)GELF_R_SYM(r.r_info), &sym))
			callee = elf_strptr(elf, dynsym.sh_link, sym.st_name);
		if (pr__symtab_add(&m->syms, at, plt->sh_entsize, callee ? callee : "", PR_SYM_PLT))
			break;
	}
}

enum { PLT, PLT_SEC, PLT_GOT, NR_PLT };

void pr__sym_plt_symbols(struct sym_module *m, uint64_t *ifuncs, size_t nr_ifuncs)
{
	static const char *const names[NR_PLT] = { ".plt", ".plt.sec", ".plt.got" };
	GElf_Addr bias;
	Elf *elf = dwfl_module_getelf(m->mod, &bias);
	Elf_Scn *plt[NR_PLT] = { NULL }, *scn = NULL, *rela_plt = NULL;
	GElf_Shdr plt_sh[NR_PLT], rela_plt_sh = { 0 };
	GElf_Ehdr eh;
	struct slots sl = { 0 };
	size_t shstrndx, before = m->syms.nr;
	int err = 0;

	/* Debug files have no .plt (SHT_NOBITS): the loaded file's. */
	if (!elf || !gelf_getehdr(elf, &eh) || elf_getshdrstrndx(elf, &shstrndx))
		return;
	while ((scn = elf_nextscn(elf, scn))) {
		GElf_Shdr sh;
		const char *name;

		if (!gelf_getshdr(scn, &sh) || !(name = elf_strptr(elf, shstrndx, sh.sh_name)))
			continue;
		if (sh.sh_type == SHT_RELA && (sh.sh_flags & SHF_ALLOC) && !strcmp(name, ".rela.plt")) {
			rela_plt = scn;
			rela_plt_sh = sh;
		}
		for (int k = 0; k < NR_PLT; k++)
			if (sh.sh_type == SHT_PROGBITS && !plt[k] && !strcmp(name, names[k])) {
				plt[k] = scn;
				plt_sh[k] = sh;
			}
	}
	/* .rela.plt names the stubs of .plt and .plt.sec; the other dynamic
	 * relocations (libLLVM's .rela.dyn is 9 MB) are read only for
	 * .plt.got's. */
	scn = NULL;
	while (eh.e_machine == EM_X86_64 && !err && (scn = elf_nextscn(elf, scn))) {
		GElf_Shdr sh;

		if (gelf_getshdr(scn, &sh) && sh.sh_type == SHT_RELA && (sh.sh_flags & SHF_ALLOC) &&
		    (scn == rela_plt || plt[PLT_GOT]))
			err = add_slots(elf, scn, &sh, &sl);
	}
	if (err) {
		free(sl.v);
		return;
	}
	if (eh.e_machine != EM_X86_64) {
		if (plt[PLT] && rela_plt)
			stubs_in_order(m, elf, &plt_sh[PLT], rela_plt, &rela_plt_sh);
	} else if (sl.nr || plt[PLT]) {
		if (sl.nr)
			qsort(sl.v, sl.nr, sizeof(*sl.v), by_got);
		name_irelative(m, &sl, ifuncs, nr_ifuncs);
		for (int k = 0; k < NR_PLT && !err; k++)
			if (plt[k])
				err = add_stubs(m, plt[k], &plt_sh[k], k == PLT,
						k == PLT && plt[PLT_SEC], &sl);
	}
	free(sl.v);
	if (m->syms.nr > before) {
		pr__sym_module_hold_elf(m, elf);
		pr__symtab_sort(&m->syms);
	}
}
