/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The symbolizer's files: a mapped file found (src/dsofind.c) and checked
 * against the build-id the capture saw, reported to its own libdwfl
 * session at its link-time addresses, its ELF symbols read with perf's
 * rules (src/symtab.c).  libdwfl finds its DWARF, in the file or in a
 * separate debug file (src/debugfile.c).
 */
#include <elfutils/libdwelf.h>
#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/auxv.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "symbols/symbolizer.h"

struct open_try {
	struct pr_symbolizer *s;
	const struct pr_dso *dso;
	int fd;
	char path[4096];
};

/* Take `path` if it is an ELF file with the build-id the capture saw. */
static int open_candidate(const char *path, void *arg)
{
	struct open_try *t = arg;
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	Elf *elf;
	bool ok;

	if (fd < 0)
		return 0;
	elf_version(EV_CURRENT);
	elf = elf_begin(fd, ELF_C_READ_MMAP, NULL);
	ok = elf && elf_kind(elf) == ELF_K_ELF;
	if (elf)
		elf_end(elf);
	if (ok && t->dso->build_id_size &&
	    !pr__sym_has_build_id(fd, t->dso->build_id, t->dso->build_id_size)) {
		pr__log(&t->s->lg, PR_LOG_DEBUG, "%s is not the %s that was sampled "
			"(build-id differs); not used", path, t->dso->path);
		ok = false;
	}
	if (!ok) {
		close(fd);
		return 0;
	}
	t->fd = fd;
	snprintf(t->path, sizeof(t->path), "%s", path);
	return 1;
}

/* The running kernel's vDSO, as a file libdwfl can read. */
static int vdso_fd(const struct pr_dso *d)
{
	unsigned long base = getauxval(AT_SYSINFO_EHDR);
	char line[256];
	FILE *f;
	int fd = -1;

	if (!base || !(f = fopen("/proc/self/maps", "re")))
		return -1;
	while (fd < 0 && fgets(line, sizeof(line), f)) {
		unsigned long lo, hi;

		if (sscanf(line, "%lx-%lx", &lo, &hi) != 2 || lo != base || !strstr(line, "[vdso]"))
			continue;
		fd = memfd_create("vdso", MFD_CLOEXEC);
		if (fd >= 0 && write(fd, (const void *)lo, hi - lo) != (ssize_t)(hi - lo)) {
			close(fd);
			fd = -1;
		}
	}
	fclose(f);
	if (fd >= 0 && d->build_id_size && !pr__sym_has_build_id(fd, d->build_id, d->build_id_size)) {
		close(fd);
		fd = -1;
	}
	return fd;
}

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

static Elf_Scn *section_named(Elf *elf, const char *want, GElf_Shdr *shdr)
{
	size_t shstrndx;
	Elf_Scn *scn = NULL;

	if (elf_getshdrstrndx(elf, &shstrndx))
		return NULL;
	while ((scn = elf_nextscn(elf, scn))) {
		const char *name;

		if (gelf_getshdr(scn, shdr) && (name = elf_strptr(elf, shstrndx, shdr->sh_name)) &&
		    !strcmp(name, want))
			return scn;
	}
	return NULL;
}

/*
 * Stubs in .plt get names as perf 6.1 gives them: "callee@plt" for each
 * .rela.plt entry in order, an entry's size apart after the first (the
 * resolver's), from the loaded file (debug files have no .plt).  They
 * take precedence over a symbol whose room runs into .plt.
 */
static void plt_symbols(struct pr_symbolizer *s, struct sym_module *m, struct pr_arena *names)
{
	GElf_Addr bias;
	Elf *elf = dwfl_module_getelf(m->mod, &bias);
	GElf_Shdr plt, rela, dynsym;
	Elf_Scn *scn_rela, *scn_dynsym;
	Elf_Data *relas, *syms;
	uint64_t at;
	size_t before = m->syms.nr;

	if (!elf || !section_named(elf, ".plt", &plt) || !plt.sh_entsize ||
	    plt.sh_type == SHT_NOBITS || !(scn_rela = section_named(elf, ".rela.plt", &rela)) ||
	    rela.sh_type != SHT_RELA || !rela.sh_entsize ||
	    !(scn_dynsym = elf_getscn(elf, rela.sh_link)) || !gelf_getshdr(scn_dynsym, &dynsym) ||
	    !(relas = elf_getdata(scn_rela, NULL)) || !(syms = elf_getdata(scn_dynsym, NULL)))
		return;
	at = plt.sh_addr + plt.sh_entsize;
	for (size_t i = 0; i < rela.sh_size / rela.sh_entsize; i++, at += plt.sh_entsize) {
		GElf_Rela r;
		GElf_Sym sym;
		const char *callee = "";
		char name[1024];

		if (!gelf_getrela(relas, (int)i, &r))
			break;
		if (gelf_getsym(syms, (int)GELF_R_SYM(r.r_info), &sym))
			callee = elf_strptr(elf, dynsym.sh_link, sym.st_name);
		if (!callee)
			callee = "";
		callee = pr__sym_demangle(s, names, callee);
		snprintf(name, sizeof(name), "%s@plt", callee ? callee : "");
		if (pr__symtab_add(&m->syms, at, plt.sh_entsize, pr__arena_strdup(names, name),
				   PR_SYM_GLOBAL))
			break;
	}
	if (m->syms.nr > before)
		pr__symtab_sort(&m->syms);
}

/* The file's symbols: its .symtab (or its debug file's), else its
 * .dynsym, the way libdwfl picks them, with perf's choice of which. */
static void read_symbols(struct pr_symbolizer *s, struct sym_module *m, struct pr_arena *names)
{
	int n = dwfl_module_getsymtab(m->mod);

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
		bind = GELF_ST_BIND(sym.st_info);
		/* The name stays in the file's string table, demangled only
		 * when a frame lands in it. */
		if (pr__symtab_add(&m->syms, addr, sym.st_size, name,
					    bind == STB_WEAK ? PR_SYM_WEAK :
					    bind == STB_GLOBAL ? PR_SYM_GLOBAL : PR_SYM_LOCAL))
			break;
	}
	pr__symtab_finish(&m->syms);
	plt_symbols(s, m, names);
}

static void read_segments(struct sym_module *m)
{
	GElf_Addr bias;
	Elf *elf = dwfl_module_getelf(m->mod, &bias);
	size_t n;

	if (!elf || elf_getphdrnum(elf, &n))
		return;
	for (size_t i = 0; i < n && m->nr_seg < MAX_SEGMENTS; i++) {
		GElf_Phdr ph;

		if (gelf_getphdr(elf, (int)i, &ph) && ph.p_type == PT_LOAD) {
			m->seg[m->nr_seg].offset = ph.p_offset;
			m->seg[m->nr_seg].filesz = ph.p_filesz;
			m->seg[m->nr_seg].vaddr = ph.p_vaddr;
			m->nr_seg++;
		}
	}
}

struct sym_module *pr__sym_module_of(struct pr_symbolizer *s, uint32_t pid,
				     const struct pr_frame *f)
{
	const struct pr_dso *d = f->dso;
	struct sym_module *m = pr__hashmap_get(&s->modules, (uintptr_t)d);
	struct open_try t = { .s = s, .dso = d, .fd = -1 };
	/* The mapping the frame was found in, as the unwinder hands it on:
	 * its /proc/PID/map_files entry is the very file mapped. */
	const struct pr_map map = { .start = f->map_start, .end = f->map_end,
				    .pgoff = f->map_pgoff };
	struct pr_dso_query q = { .dso = d, .pid = pid, .live = s->live, .dirs = &s->dirs,
				  .map = f->map_end > f->map_start ? &map : NULL };

	if (m)
		return m;
	m = calloc(1, sizeof(*m));
	if (!m || pr__hashmap_put(&s->modules, (uintptr_t)d, m)) {
		free(m);
		return NULL;
	}
	m->dso = d;
	m->origin = d->path;
	if (!strcmp(d->path, "[vdso]")) {
		if ((s->live || d->build_id_size) && (t.fd = vdso_fd(d)) >= 0)
			snprintf(t.path, sizeof(t.path), "[vdso]");
	} else if (d->path[0] == '/') {
		pr__dso_find(&q, open_candidate, &t);
	}
	if (t.fd < 0) {
		if (d->path[0] == '/' || !strcmp(d->path, "[vdso]")) {
			s->stats.missing++;
			pr__log(&s->lg, PR_LOG_INFO, "%s: not found; its frames keep their "
				"addresses", d->path);
		}
		return m;
	}
	m->path = strdup(t.path);
	m->dwfl = dwfl_begin(&s->callbacks);
	if (m->dwfl) {
		/* At its link-time addresses (bias 0), whatever the process:
		 * with add_p_vaddr, libdwfl adds the first PT_LOAD's p_vaddr
		 * to the base for an ET_DYN file as it does for ET_EXEC;
		 * without, an ET_DYN whose first segment is not at 0 (Go's
		 * -buildmode=pie at 0x400000, lld's --image-base, prelinked
		 * libraries) would be moved down by that much, and none of
		 * its link-time addresses (offset_to_vaddr()) would be in it. */
		m->mod = dwfl_report_elf(m->dwfl, d->path, t.path, t.fd, 0, true);
		dwfl_report_end(m->dwfl, NULL, NULL);
		if (m->mod) {
			void **ud = NULL;

			dwfl_module_info(m->mod, &ud, NULL, NULL, NULL, NULL, NULL, NULL);
			if (ud)
				*ud = s;
		}
	} else {
		close(t.fd);
	}
	if (!m->mod) {
		pr__log(&s->lg, PR_LOG_INFO, "%s: %s; its frames keep their addresses", t.path,
			m->dwfl ? dwfl_errmsg(-1) : "out of memory");
		return m;
	}
	s->stats.files++;
	read_segments(m);
	read_symbols(s, m, &s->arena);
	return m;
}

void pr__sym_module_free(struct sym_module *m)
{
	if (!m)
		return;
	pr__sym_dwarf_free(m);
	if (m->dwfl)
		dwfl_end(m->dwfl);
	for (size_t i = 0; i < m->nr_zbufs; i++)
		free(m->zbufs[i]);
	free(m->zbufs);
	pr__symtab_free(&m->syms);
	free(m->names);
	free(m->path);
	free(m);
}

/* A file offset as a link-time address, through the segment holding it. */
static bool offset_to_vaddr(const struct sym_module *m, uint64_t off, uint64_t *vaddr)
{
	for (size_t i = 0; i < m->nr_seg; i++)
		if (off >= m->seg[i].offset && off - m->seg[i].offset < m->seg[i].filesz) {
			*vaddr = off - m->seg[i].offset + m->seg[i].vaddr;
			return true;
		}
	return false;
}

/* A symbol's name, demangled the first time it is asked for. */
static const char *symbol_name(struct pr_symbolizer *s, struct sym_module *m,
			       const struct pr_sym *sym)
{
	size_t i = (size_t)(sym - m->syms.v);

	if (!m->names) {
		m->names = calloc(m->syms.nr, sizeof(*m->names));
		if (!m->names)
			return NULL;
	}
	if (!m->names[i])
		m->names[i] = pr__sym_demangle(s, &s->arena, sym->name);
	return m->names[i];
}

int pr__sym_resolve_file(struct pr_symbolizer *s, struct sym_module *m, uint64_t off,
			 struct pr_symbol *out)
{
	struct pr_sym_func chain[MAX_INLINE], *funcs;
	const struct pr_sym *sym;
	uint64_t vaddr;
	size_t nr = 0;

	out->module = m->origin;
	if (!m->mod || !offset_to_vaddr(m, off, &vaddr))
		return 0;
	sym = pr__symtab_find(&m->syms, vaddr);
	if (sym && (out->name = symbol_name(s, m, sym)) && out->name[0]) {
		out->offset = vaddr - sym->start;
		out->source = PR_SYM_SYMTAB;
		s->stats.named++;
	} else {
		out->name = NULL;
	}
	if (!s->no_inline)
		nr = pr__sym_inline_chain(s, m, vaddr, out->name, out->name ? sym->start : 0,
					  chain);
	if (!nr)
		return 0;
	funcs = pr__arena_alloc(&s->arena, nr * sizeof(*funcs));
	if (!funcs)
		return -ENOMEM;
	memcpy(funcs, chain, nr * sizeof(*funcs));
	out->funcs = funcs;
	out->nr = nr;
	return 0;
}
