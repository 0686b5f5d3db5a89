/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The symbolizer's files: a mapped file from the model's ELF cache (found
 * and checked against the build-id the capture saw), reported to its own
 * libdwfl session at its link-time addresses, its ELF symbols read with
 * perf's rules (symtab.c) and its PLT stubs named (plt.c).  libdwfl finds
 * its DWARF, in the file or in the separate debug file the cache found
 * (debugfile.c).
 */
#include <errno.h>
#include <gelf.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "symbols/symbolizer.h"
#include "symbols/ixshare.h"
#include "symbols/symcache.h"
#include "symbols/symdwarf.h"
#include "symbols/symindex.h"

/* Whether perf keeps an ELF symbol: functions; objects in loaded
 * sections; labels in sections whose names say code or data. */
static bool kept(Elf *elf, const GElf_Sym *sym)
{
	uint8_t type = GELF_ST_TYPE(sym->st_info);
	GElf_Shdr shdr;
	Elf_Scn *scn;
	size_t shstrndx;
	const char *secname;

	if (type == STT_FUNC || type == STT_GNU_IFUNC)
		return true;
	if ((type != STT_OBJECT && type != STT_NOTYPE) || sym->st_shndx == SHN_ABS ||
	    sym->st_shndx >= SHN_LORESERVE || !(scn = elf_getscn(elf, sym->st_shndx)) ||
	    !gelf_getshdr(scn, &shdr) || !(shdr.sh_flags & SHF_ALLOC))
		return false;
	if (type == STT_OBJECT)
		return true;
	if (GELF_ST_VISIBILITY(sym->st_other) == STV_HIDDEN ||
	    GELF_ST_VISIBILITY(sym->st_other) == STV_INTERNAL ||
	    elf_getshdrstrndx(elf, &shstrndx) ||
	    !(secname = elf_strptr(elf, shstrndx, shdr.sh_name)))
		return false;
	return strstr(secname, "text") || strstr(secname, "data");
}

/* The file's symbols: its .symtab (or its debug file's), else its
 * .dynsym, the way libdwfl picks them, with perf's choice of which. */
static void read_symbols(struct sym_module *m)
{
	int n = dwfl_module_getsymtab(m->mod);
	/* The IFUNC symbols' addresses, for the PLT stubs' names. */
	uint64_t *ifuncs = NULL;
	size_t nr_ifuncs = 0, cap = 0;

	for (int i = 1; i < n; i++) {
		GElf_Sym sym;
		GElf_Addr addr;
		GElf_Word shndx;
		Elf *elf;
		Dwarf_Addr bias;
		const char *name = dwfl_module_getsym_info(m->mod, i, &sym, &addr, &shndx, &elf,
							   &bias);
		uint8_t bind;

		/* Unnamed is st_name 0, as perf has it: the name itself is not
		 * read (a large .dynstr is pages of faults) until a frame
		 * lands in the symbol. */
		if (!name || !sym.st_name || sym.st_shndx == SHN_UNDEF || !elf || !kept(elf, &sym))
			continue;
		pr__sym_module_hold_elf(m, elf);
		if (GELF_ST_TYPE(sym.st_info) == STT_GNU_IFUNC &&
		    !PR_ARRAY_RESERVE(ifuncs, cap, nr_ifuncs + 1))
			ifuncs[nr_ifuncs++] = addr;
		bind = GELF_ST_BIND(sym.st_info);
		/* The name stays in the file's string table, demangled only
		 * when a frame lands in it. */
		if (pr__symtab_add(&m->syms, addr, sym.st_size, name,
					    bind == STB_WEAK ? PR_SYM_WEAK :
					    bind == STB_GLOBAL ? PR_SYM_GLOBAL : PR_SYM_LOCAL))
			break;
	}
	pr__symtab_finish(&m->syms);
	pr__sym_plt_symbols(m, ifuncs, nr_ifuncs);
	free(ifuncs);
}

size_t pr__sym_nr_symbols(const struct sym_module *m)
{
	return m->ixsyms ? m->ixsyms->nr_syms : m->syms.nr;
}

void pr__sym_addr2line_read(struct sym_module *m)
{
	int n;
	size_t cap = 0;

	if (m->a2l_read)
		return;
	if (m->ixsyms) {
		pr__ixsyms_load_a2l(m->ixsyms, m);
		return;
	}
	if (!m->mod)
		return;
	m->a2l_read = true;
	n = dwfl_module_getsymtab(m->mod);
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

		if (!name || !name[0] || !elf || sym.st_shndx == SHN_UNDEF ||
		    sym.st_shndx >= SHN_LORESERVE ||
		    (type != STT_FUNC && type != STT_GNU_IFUNC && type != STT_NOTYPE) ||
		    !(scn = elf_getscn(elf, sym.st_shndx)) || !gelf_getshdr(scn, &shdr))
			continue;
		if (PR_ARRAY_RESERVE(m->a2l, cap, m->nr_a2l + 1)) {
			/* Not all of them: the session stays for the walk. */
			m->hold_failed = true;
			return;
		}
		pr__sym_module_hold_elf(m, elf);
		m->a2l[m->nr_a2l++] = (struct a2l_sym){ addr, sym.st_size, shdr.sh_addr + bias,
							shdr.sh_addr + bias + shdr.sh_size, name };
	}
}

/*
 * The ELF symbol addr2line (binutils) takes an address to be in: of the
 * function and untyped symbols in the section holding it, starting at or
 * below it, one that contains it, then the nearest, then the later in the
 * table.  It differs from perf's pick among aliases (__memcpy_* and
 * __memmove_* share their code).  Few addresses need it: a walk over the
 * table is fine.
 */
const char *pr__sym_addr2line_symbol(struct sym_module *m, uint64_t vaddr, uint64_t *start)
{
	const char *best = NULL;
	bool best_contains = false;

	*start = 0;
	pr__sym_addr2line_read(m);
	for (size_t i = 0; i < m->nr_a2l; i++) {
		const struct a2l_sym *a = &m->a2l[i];
		bool contains;

		if (a->addr > vaddr || vaddr < a->sec_lo || vaddr >= a->sec_hi)
			continue;
		contains = vaddr - a->addr < a->size;
		if (!best || (contains && !best_contains) ||
		    (contains == best_contains && a->addr >= *start)) {
			best = a->name;
			*start = a->addr;
			best_contains = contains;
		}
	}
	return best;
}

/* pr__sym_index_make_fn: the cache's index of `m`, unless it has symbols
 * alone while the file has DWARF now (its debug file installed since, or
 * fetched): not what the file gives. */
static struct pr__symindex *cached_index(struct pr_symbolizer *s, struct sym_module *m,
					 bool *mapped)
{
	struct pr__symindex *ix = pr__sym_index_cached(s, m);

	/* On the index's path the whole file is indexed (and stored over
	 * the partial one) when its DWARF is first needed. */
	if (ix && ((s->use_index && pr__symindex_partial(ix)) ||
		   (!pr__symindex_has_dwarf(ix) &&
		    (m->elf->has_debug_info || pr__elfcache_debug(s->elves, m->elf, &s->lg))))) {
		pr__symindex_free(ix);
		ix = NULL;
	}
	m->cache_looked = true;
	*mapped = true;
	return ix;
}

/* Module `m`'s file, open as `fd` (libdwfl's from here), as a libdwfl
 * session's one module: m->mod NULL when that fails. */
/* ---- libelf's mappings of a module's files, guarded ---- */

/* Read past its end once a file is cut short under them (a cp over a
 * library or a debug file while this runs), libelf's mappings give zeros
 * where they gave a SIGBUS; the symbolizer then sets the module aside
 * and opens the file again (symbolizer.c). */
void pr__sym_module_guard(struct sym_module *m, Elf *elf)
{
	size_t size = 0;
	char *base;
	int g;

	if (!elf || m->nr_guards == PR_ARRAY_SIZE(m->guards) ||
	    !(base = elf_rawfile(elf, &size)) || !size)
		return;
	for (size_t i = 0; i < m->nr_guards; i++)
		if (m->guard_at[i] == base)
			return;
	if ((g = pr__busguard_add(base, size)) < 0)
		return;
	m->guard_at[m->nr_guards] = base;
	m->guards[m->nr_guards++] = g;
}

bool pr__sym_module_file_cut(const struct sym_module *m)
{
	for (size_t i = 0; i < m->nr_guards; i++)
		if (pr__busguard_hit(m->guards[i]))
			return true;
	return false;
}

/* The guards of mappings none of `keep` (n of them) still holds. */
static void unguard(struct sym_module *m, Elf *const *keep, size_t n)
{
	size_t k = 0;

	for (size_t i = 0; i < m->nr_guards; i++) {
		bool held = false;

		for (size_t j = 0; j < n && !held; j++) {
			size_t size;

			held = elf_rawfile(keep[j], &size) == m->guard_at[i];
		}
		if (held) {
			m->guard_at[k] = m->guard_at[i];
			m->guards[k++] = m->guards[i];
		} else {
			pr__busguard_remove(m->guards[i]);
		}
	}
	m->nr_guards = k;
}

static void report_file(struct pr_symbolizer *s, struct sym_module *m, int fd)
{
	GElf_Addr bias;

	m->dwfl = dwfl_begin(&s->callbacks);
	if (!m->dwfl) {
		close(fd);
		return;
	}
	/* At its link-time addresses (bias 0), whatever the process: with
	 * add_p_vaddr, libdwfl adds the first PT_LOAD's p_vaddr to the base
	 * for an ET_DYN file as it does for ET_EXEC; without, an ET_DYN
	 * whose first segment is not at 0 (Go's -buildmode=pie at 0x400000,
	 * lld's --image-base, prelinked libraries) would be moved down by
	 * that much, and none of its link-time addresses
	 * (offset_to_vaddr()) would be in it. */
	m->mod = dwfl_report_elf(m->dwfl, m->dso->path, m->elf->path, fd, 0, true);
	dwfl_report_end(m->dwfl, NULL, NULL);
	if (m->mod) {
		void **ud = NULL;

		dwfl_module_info(m->mod, &ud, NULL, NULL, NULL, NULL, NULL, NULL);
		if (ud)
			*ud = m;
		pr__sym_module_guard(m, dwfl_module_getelf(m->mod, &bias));
	}
}

bool pr__sym_module_reopen(struct pr_symbolizer *s, struct sym_module *m)
{
	int fd;

	if (m->dwarf)
		return true;
	if (m->mod || m->reopen_failed || !m->elf || (fd = pr__elf_fd(m->elf)) < 0) {
		m->reopen_failed = true;
		return false;
	}
	report_file(s, m, fd);
	/* Counted once, when its index was mapped. */
	m->dwarf_checked = false;
	if (m->mod && pr__sym_dwarf_open(s, m)) {
		s->stats.debug_files--;
		return true;
	}
	pr__log(&s->lg, PR_LOG_INFO, "%s: its DWARF could not be opened again (%s): frames its "
		"partial index does not cover are named from its symbols", m->origin,
		m->dwfl ? dwfl_errmsg(-1) : "out of memory");
	m->reopen_failed = m->dwarf_checked = m->has_dwarf = true;
	return false;
}

/*
 * The file's symbols from its index in the cache, which has them, when
 * there is one for these settings (with lines when they are shown): then
 * neither the file nor its debug file is opened with libdwfl, and its
 * DWARF is the index's (symdwarf.c's module_index()), or, of a file
 * without, none.  false: read them.
 */
static bool from_index(struct pr_symbolizer *s, struct sym_module *m)
{
	struct pr__ixshare_file *shared;
	struct pr__symindex *ix;
	uint64_t bias = 0;
	bool taken;

	if (s->libdw_only || !s->ixcache)
		return false;
	if (!(ix = pr__sym_index_shared(s, m, cached_index, &shared, &taken, &bias)))
		return false;
	pr__ixsyms_attach(pr__symindex_syms(ix), m);
	m->shared = shared;
	m->dwarf_bias = bias;
	m->index_tried = m->dwarf_checked = true;
	m->index_bytes = pr__symindex_bytes(ix);
	/* Of a file without DWARF, it holds the symbols' names alone. */
	if (!(m->has_dwarf = pr__symindex_has_dwarf(ix))) {
		m->names_index = ix;
		return true;
	}
	m->index = ix;
	s->stats.debug_files++;
	return true;
}

struct sym_module *pr__sym_module_of(struct pr_symbolizer *s, uint32_t pid,
				     const struct pr_frame *f)
{
	const struct pr_dso *d = f->dso;
	struct sym_module *m = pr__hashmap_get(&s->modules, (uintptr_t)d);
	/* The mapping the frame was found in, as the unwinder hands it on:
	 * its /proc/PID/map_files entry is the very file mapped. */
	const struct pr_map map = { .start = f->map_start, .end = f->map_end,
				    .pgoff = f->map_pgoff };
	int fd = -1;

	if (m)
		return m;
	m = calloc(1, sizeof(*m));
	if (!m || pr__hashmap_put(&s->modules, (uintptr_t)d, m)) {
		free(m);
		return NULL;
	}
	m->s = s;
	m->dso = d;
	m->origin = d->path;
	if (d->path[0] != '/' && strcmp(d->path, "[vdso]"))
		return m;
	/* The cache may give a live file the build-id it has: the DSO is the
	 * model's, handed out const to the frames. */
	m->elf = pr__elfcache_file(s->elves, (struct pr_dso *)d,
				   f->map_end > f->map_start ? &map : NULL, pid, s->live, &s->lg);
	if (!m->elf || (fd = pr__elf_fd(m->elf)) < 0) {
		s->stats.missing++;
		pr__log(&s->lg, PR_LOG_INFO, "%s: not found; its frames keep their addresses",
			d->path);
		return m;
	}
	m->path = strdup(m->elf->path);
	if (from_index(s, m)) {
		close(fd);
		s->stats.files++;
		m->opened = true;
		return m;
	}
	report_file(s, m, fd);
	if (!m->mod) {
		pr__log(&s->lg, PR_LOG_INFO, "%s: %s; its frames keep their addresses",
			m->elf->path, m->dwfl ? dwfl_errmsg(-1) : "out of memory");
		return m;
	}
	s->stats.files++;
	read_symbols(m);
	m->opened = true;
	/* Without inlined calls, DWARF is never read: nothing more is. */
	if (s->use_index && s->no_inline)
		pr__sym_module_close(m);
	return m;
}

void pr__sym_module_hold_elf(struct sym_module *m, Elf *elf)
{
	Elf *held;

	for (size_t i = 0; i < m->nr_elves; i++)
		if (m->elves[i] == elf)
			return;
	/* A reference to the same descriptor (libelf counts them). */
	if (m->nr_elves < PR_ARRAY_SIZE(m->elves) && (held = elf_begin(-1, ELF_C_READ_MMAP, elf)))
		m->elves[m->nr_elves++] = held;
	else
		m->hold_failed = true;
}

/*
 * libdwfl's session, libdw's DWARF state behind it (its units, abbrevs,
 * line tables: what grows with the addresses looked up) and the sections
 * inflated for it.  What stays: the symbol table, whose names are in the
 * ELF files held (pr__sym_module_hold_elf()); the address index; and the
 * symbols addr2line would pick, read before.
 */
void pr__sym_module_close(struct sym_module *m)
{
	if (!m->dwfl)
		return;
	if (m->has_dwarf)
		pr__sym_addr2line_read(m);
	/* Names in a file that could not be held would go with it. */
	if (m->hold_failed)
		return;
	/* (Before the session goes: its mappings may go with it.) */
	unguard(m, m->elves, m->nr_elves);
	dwfl_end(m->dwfl);
	m->dwfl = NULL;
	m->mod = NULL;
	m->dwarf = NULL;
	for (size_t i = 0; i < m->nr_zbufs; i++)
		free(m->zbufs[i]);
	free(m->zbufs);
	m->zbufs = NULL;
	m->nr_zbufs = m->zbytes = 0;
	pr__sym_dwarf_free_units(m);
}

/* The whole pages of bytes [from, to) of the file mapped at `base`
 * dropped from this process (read again from the file when touched). */
static void release_range(char *base, uint64_t from, uint64_t to, uintptr_t page)
{
	uintptr_t lo = ((uintptr_t)base + from + page - 1) / page * page;
	uintptr_t hi = ((uintptr_t)base + to) / page * page;

	if (from < to && lo < hi)
		madvise((void *)lo, hi - lo, MADV_DONTNEED);
}

/* pr__sym_module_release_pages() for ELF file `elf`. */
static void release_elf(Elf *elf, const struct pr_file_maps *fm)
{
	uintptr_t page = (uintptr_t)sysconf(_SC_PAGESIZE);
	const struct pr_file_map *map;
	Elf_Scn *scn = NULL;
	Elf64_Ehdr *mapped;
	GElf_Ehdr eh;
	uint64_t shdrs_end;
	size_t size, nr_shdrs;
	char *base;

	/* Mapped: libelf's header is where the file is (elf_rawfile() would
	 * read a file it could not map whole into memory); and the file not
	 * cut short since, or reading its headers below would be a SIGBUS
	 * (a file held while it is rewritten in place, by cp or rsync
	 * --inplace).  And a native file, whose tables libelf reads where
	 * they are mapped. */
	if (!elf || elf_kind(elf) != ELF_K_ELF || gelf_getclass(elf) != ELFCLASS64 ||
	    !(mapped = elf64_getehdr(elf)) || !pr__file_maps_has(fm, mapped, sizeof(*mapped)) ||
	    !(base = elf_rawfile(elf, &size)) || !(map = pr__file_maps_find(fm, base, size)) ||
	    !pr__file_maps_whole(map, base, size) || !gelf_getehdr(elf, &eh) ||
	    eh.e_type == ET_REL || eh.e_ident[EI_DATA] != ELFDATA2LSB)
		return;
	/* The section headers, which libelf changes in the mapping itself
	 * (an inflated section's size), are never given back: a section's
	 * range is cut where it meets their table, wherever that is (a Go
	 * program's is before its sections). */
	if (elf_getshdrnum(elf, &nr_shdrs))
		return;
	shdrs_end = eh.e_shoff + (uint64_t)nr_shdrs * eh.e_shentsize;
	while ((scn = elf_nextscn(elf, scn))) {
		GElf_Shdr sh;
		uint64_t end;

		/* (A size libelf changed since is cut to the file's all the
		 * same.) */
		if (!gelf_getshdr(scn, &sh) || sh.sh_type == SHT_NOBITS || sh.sh_offset >= size)
			continue;
		end = sh.sh_size < size - sh.sh_offset ? sh.sh_offset + sh.sh_size : size;
		release_range(base, sh.sh_offset, end < eh.e_shoff ? end : eh.e_shoff, page);
		release_range(base, sh.sh_offset > shdrs_end ? sh.sh_offset : shdrs_end, end, page);
	}
}

void pr__sym_module_release_pages(struct sym_module *m, const struct pr_file_maps *fm)
{
	Dwarf_Addr bias;

	if (m->index)
		pr__symindex_release_pages(m->index);
	/* libdwfl relocates in place every file of a relocatable module (its
	 * debug file too, whatever that says it is), by the main file's
	 * type (elfutils 0.188, libdwfl/relocate.c). */
	if (!m->elf || m->elf->type == ET_REL)
		return;
	if (m->mod)
		release_elf(dwfl_module_getelf(m->mod, &bias), fm);
	if (m->dwarf)
		release_elf(dwarf_getelf(m->dwarf), fm);
	for (size_t i = 0; i < m->nr_elves; i++)
		release_elf(m->elves[i], fm);
}

void pr__sym_module_free(struct sym_module *m)
{
	if (!m)
		return;
	pr__sym_dwarf_free(m);
	unguard(m, NULL, 0);
	if (m->dwfl)
		dwfl_end(m->dwfl);
	for (size_t i = 0; i < m->nr_elves; i++)
		elf_end(m->elves[i]);
	for (size_t i = 0; i < m->nr_zbufs; i++)
		free(m->zbufs[i]);
	free(m->zbufs);
	pr__symtab_free(&m->syms);
	free(m->names);
	free(m->path);
	pr__hashmap_free(&m->files);
	pr__arena_free(&m->arena);
	free(m);
}

/* A file offset as a link-time address, through the segment holding it. */
static bool offset_to_vaddr(const struct sym_module *m, uint64_t off, uint64_t *vaddr)
{
	const struct pr_elf_segment *seg = m->elf->seg;

	for (size_t i = 0; i < m->elf->nr_seg; i++)
		if (off >= seg[i].offset && off - seg[i].offset < seg[i].filesz) {
			*vaddr = off - seg[i].offset + seg[i].vaddr;
			return true;
		}
	return false;
}

/* A .plt stub's name: "callee@plt", the callee demangled; "" (no name)
 * for a stub nothing names. */
static const char *plt_name(struct pr_symbolizer *s, struct pr_arena *a, const char *callee)
{
	const char *d = callee[0] ? pr__sym_demangle(s, a, callee) : NULL;

	if (!callee[0])
		return "";
	char *out = d ? pr__arena_alloc(a, strlen(d) + sizeof("@plt")) : NULL;

	if (out)
		stpcpy(stpcpy(out, d), "@plt");
	return out;
}

/* The symbol at `vaddr` into *out, and its place among the module's
 * (its index's, when it was named from one): false for none. */
static bool symbol_at(const struct sym_module *m, uint64_t vaddr, struct pr_sym *out, size_t *i)
{
	const struct pr_sym *sym;

	if (m->ixsyms)
		return pr__ixsyms_find(m->ixsyms, vaddr, out, i);
	if (!(sym = pr__symtab_find(&m->syms, vaddr)))
		return false;
	*out = *sym;
	*i = (size_t)(sym - m->syms.v);
	return true;
}

/* The `i`th symbol's name, demangled the first time it is asked for. */
static const char *symbol_name(struct pr_symbolizer *s, struct sym_module *m,
			       const struct pr_sym *sym, size_t i)
{
	if (!m->names) {
		m->names = calloc(pr__sym_nr_symbols(m), sizeof(*m->names));
		if (!m->names)
			return NULL;
	}
	if (!m->names[i])
		m->names[i] = sym->binding == PR_SYM_PLT ? plt_name(s, &m->arena, sym->name) :
			      pr__sym_demangle(s, &m->arena, sym->name);
	return m->names[i];
}

int pr__sym_resolve_file(struct pr_symbolizer *s, struct sym_module *m, uint64_t off,
			 struct pr_symbol *out)
{
	struct pr_sym_func chain[MAX_INLINE], *funcs;
	struct pr_sym sym;
	uint64_t vaddr;
	size_t nr = 0, i;
	bool found;

	out->module = m->origin;
	if (!m->opened || !offset_to_vaddr(m, off, &vaddr))
		return 0;
	found = symbol_at(m, vaddr, &sym, &i);
	if (found && (out->name = symbol_name(s, m, &sym, i)) && out->name[0]) {
		out->offset = vaddr - sym.start;
		out->source = PR_SYM_SYMTAB;
		s->stats.named++;
	} else {
		out->name = NULL;
	}
	if (!s->no_inline)
		nr = pr__sym_inline_chain(s, m, vaddr, out->name, out->name ? sym.start : 0,
					  chain);
	if (!nr)
		return 0;
	funcs = pr__arena_alloc(&m->arena, nr * sizeof(*funcs));
	if (!funcs)
		return -ENOMEM;
	memcpy(funcs, chain, nr * sizeof(*funcs));
	out->funcs = funcs;
	out->nr = nr;
	return 0;
}
