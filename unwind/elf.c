/* SPDX-License-Identifier: Apache-2.0 */
/*
 * ELF images for unwinding: the file mapped once, its loadable segments
 * (to turn runtime addresses into file bytes whatever the load bias), and
 * where its unwind table is.  libelf parses the headers; every offset it
 * hands back is checked against the file's size before use, since a
 * mapped file may be truncated, corrupt or hostile.
 */
#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <libelf.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "unwind-int.h"

/* .eh_frame_hdr encodings (DW_EH_PE_*) the fast path understands: the
 * table of (initial location, FDE address) pairs as signed 32-bit values
 * relative to the header, which is what every GNU linker writes. */
#define EH_PE_udata4 0x03
#define EH_PE_sdata4 0x0b
#define EH_PE_pcrel 0x10
#define EH_PE_datarel 0x30

static bool in_image(const struct uw_elf *e, uint64_t off, uint64_t len)
{
	return off <= e->size && len <= e->size - off;
}

/* The file offset of link-time address `vaddr`, or -1. */
static int64_t vaddr_to_offset(const struct uw_elf *e, uint64_t vaddr, uint64_t len)
{
	for (size_t i = 0; i < e->nr_seg; i++) {
		const struct uw_segment *s = &e->seg[i];

		if (vaddr >= s->vaddr && vaddr - s->vaddr < s->filesz &&
		    len <= s->filesz - (vaddr - s->vaddr))
			return (int64_t)(s->offset + (vaddr - s->vaddr));
	}
	return -1;
}

int uw_elf_read(const struct uw_elf *e, uint64_t vaddr, bool writable, uint64_t *val)
{
	for (size_t i = 0; i < e->nr_seg; i++) {
		const struct uw_segment *s = &e->seg[i];
		uint64_t off;

		if ((s->flags & PF_W && !writable) || vaddr < s->vaddr ||
		    vaddr - s->vaddr >= s->filesz || s->filesz - (vaddr - s->vaddr) < 8)
			continue;
		off = s->offset + (vaddr - s->vaddr);
		if (!in_image(e, off, 8))
			return -1;
		memcpy(val, e->data + off, 8);
		return 0;
	}
	return -1;
}

const unsigned char *uw_elf_segment(const struct uw_elf *e, uint64_t vaddr, size_t *size,
				    uint64_t *seg_vaddr)
{
	for (size_t i = 0; i < e->nr_seg; i++) {
		const struct uw_segment *s = &e->seg[i];

		if (vaddr >= s->vaddr && vaddr - s->vaddr < s->filesz &&
		    in_image(e, s->offset, s->filesz)) {
			*size = (size_t)s->filesz;
			*seg_vaddr = s->vaddr;
			return e->data + s->offset;
		}
	}
	return NULL;
}

/* Far more than any .debug_frame (a browser's is tens of megabytes); a
 * compressed section's header claiming more is not believed. */
#define MAX_INFLATED (UINT64_C(1) << 30)

int uw_elf_section(const struct uw_elf *e, const struct uw_section *s, unsigned char **out,
		   size_t *size, const struct pr_logger *lg)
{
	const unsigned char *raw = e->data + s->offset;
	int err;

	if (s->z == PR_ZSECTION_NONE) {
		*out = malloc(s->size ? (size_t)s->size : 1);
		if (!*out)
			return -ENOMEM;
		memcpy(*out, raw, (size_t)s->size);
		*size = (size_t)s->size;
		return 0;
	}
	err = pr__zsection_inflate(raw, (size_t)s->size, s->z, MAX_INFLATED, out, size);
	if (err)
		pr__log(lg, PR_LOG_DEBUG, "%s: a compressed unwind section not inflated: %s",
			e->path, strerror(-err));
	return err;
}

/*
 * The bias as the dynamic loader sets it: ld.so maps each PT_LOAD from
 * its file offset rounded down to a page, with the segment's own
 * permissions.  A mapping's file offset alone does not say which segment
 * it is: where segments are not page-aligned in the file (lld's layout,
 * and GNU ld's without -z separate-code), the page the executable segment
 * starts in also holds the tail of the read-only one before it, and both
 * mappings have the same offset.  Executable or not tells them apart.
 */
uint64_t uw_elf_bias(const struct uw_elf *e, const struct pr_map *m)
{
	bool exec = m->prot & PROT_EXEC, write = m->prot & PROT_WRITE;
	const struct uw_segment *same_x = NULL, *any = NULL;

	for (size_t i = 0; i < e->nr_seg; i++) {
		const struct uw_segment *s = &e->seg[i];
		uint64_t page_start = s->offset & ~UINT64_C(0xfff);

		if (m->pgoff < page_start || m->pgoff >= s->offset + (s->filesz ? s->filesz : 1))
			continue;
		if (!!(s->flags & PF_X) == exec) {
			if (exec || !!(s->flags & PF_W) == write)
				return m->start - m->pgoff + s->offset - s->vaddr;
			if (!same_x)
				same_x = s;
		}
		if (!any)
			any = s;
	}
	/* Permissions that match no segment exactly (changed by mprotect:
	 * the RELRO part of the data, read-only once relocated, shares its
	 * first page's offset with the read-only data before it, and cannot
	 * be told from it here; only code mappings are unwound through, and
	 * those are told apart exactly): the closest segment by offset, or
	 * the file mapped as a whole.  Its bytes at p_offset are at
	 * p_vaddr + bias. */
	if (same_x)
		any = same_x;
	if (any)
		return m->start - m->pgoff + any->offset - any->vaddr;
	return m->start - m->pgoff;
}

static void read_build_id(struct uw_elf *e, uint64_t off, uint64_t size)
{
	size_t len = 0;

	if (!e->build_id_size && in_image(e, off, size) &&
	    !pr__build_id_from_notes(e->data + off, (size_t)size, e->build_id, &len))
		e->build_id_size = len;
}

/* .eh_frame_hdr at file offset `off`: use its table when it is the
 * usual layout, else fall back to indexing .eh_frame ourselves. */
static void read_eh_frame_hdr(struct uw_elf *e, uint64_t off, uint64_t vaddr, uint64_t size)
{
	const unsigned char *h;
	uint32_t count;

	if (size < 12 || !in_image(e, off, size))
		return;
	h = e->data + off;
	if (h[0] != 1 || h[1] != (EH_PE_pcrel | EH_PE_sdata4) || h[2] != EH_PE_udata4 ||
	    h[3] != (EH_PE_datarel | EH_PE_sdata4))
		return;
	memcpy(&count, h + 8, 4);
	if ((uint64_t)count * 8 > size - 12)
		return;
	e->table = UW_TABLE_EH_HDR;
	e->eh_hdr_vaddr = vaddr;
	e->eh_table_vaddr = vaddr + 12;
	e->fde_count = count;
}

static int read_segments(struct uw_elf *e, Elf *elf, const struct pr_logger *lg)
{
	size_t n;
	bool have_text = false;

	if (elf_getphdrnum(elf, &n))
		return -EINVAL;
	for (size_t i = 0; i < n; i++) {
		GElf_Phdr ph;

		if (!gelf_getphdr(elf, (int)i, &ph))
			return -EINVAL;
		if (ph.p_type == PT_NOTE) {
			read_build_id(e, ph.p_offset, ph.p_filesz);
		} else if (ph.p_type == PT_GNU_EH_FRAME) {
			read_eh_frame_hdr(e, ph.p_offset, ph.p_vaddr, ph.p_filesz);
		} else if (ph.p_type == PT_LOAD) {
			struct uw_segment *s;

			if (e->nr_seg == UW_MAX_SEGMENTS) {
				pr__log(lg, PR_LOG_DEBUG, "%s: more than %d loadable "
					"segments; the rest are ignored", e->path,
					UW_MAX_SEGMENTS);
				continue;
			}
			s = &e->seg[e->nr_seg++];
			s->vaddr = ph.p_vaddr;
			s->offset = ph.p_offset;
			s->filesz = ph.p_filesz;
			s->memsz = ph.p_memsz;
			s->flags = ph.p_flags;
			if (ph.p_flags & PF_X) {
				if (!have_text || ph.p_vaddr < e->text_lo)
					e->text_lo = ph.p_vaddr;
				if (!have_text || ph.p_vaddr + ph.p_memsz > e->text_hi)
					e->text_hi = ph.p_vaddr + ph.p_memsz;
				have_text = true;
			}
		}
	}
	return 0;
}

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

static void read_sections(struct uw_elf *e, Elf *elf)
{
	size_t shstrndx;
	Elf_Scn *scn = NULL, *symtab = NULL;
	bool go = false;

	if (elf_getshdrstrndx(elf, &shstrndx))
		return;
	while ((scn = elf_nextscn(elf, scn))) {
		GElf_Shdr sh;
		const char *name;

		if (!gelf_getshdr(scn, &sh) || !(name = elf_strptr(elf, shstrndx, sh.sh_name)))
			continue;
		/* NOBITS sections (in debug files) have no bytes here. */
		if (sh.sh_type == SHT_NOBITS || !in_image(e, sh.sh_offset, sh.sh_size))
			continue;
		if (sh.sh_type == SHT_SYMTAB)
			symtab = scn;
		go |= !strcmp(name, ".note.go.buildid") || !strcmp(name, ".go.buildinfo");
		/* .eh_frame is loaded, so never compressed (the gABI forbids
		 * SHF_COMPRESSED with SHF_ALLOC); libunwind reads it in place. */
		if (!strcmp(name, ".eh_frame") && !(sh.sh_flags & SHF_COMPRESSED)) {
			e->eh_frame = (struct uw_section){ sh.sh_offset, sh.sh_size, sh.sh_addr,
							   PR_ZSECTION_NONE };
		} else if (!strcmp(name, ".debug_frame") || !strcmp(name, ".zdebug_frame")) {
			e->debug_frame = (struct uw_section){
				sh.sh_offset, sh.sh_size, sh.sh_addr,
				sh.sh_flags & SHF_COMPRESSED ? PR_ZSECTION_CHDR :
				name[1] == 'z' ? PR_ZSECTION_ZDEBUG : PR_ZSECTION_NONE };
		} else if (!strcmp(name, ".eh_frame_hdr") && e->table == UW_TABLE_NONE) {
			read_eh_frame_hdr(e, sh.sh_offset, sh.sh_addr, sh.sh_size);
		} else if (sh.sh_type == SHT_NOTE) {
			read_build_id(e, sh.sh_offset, sh.sh_size);
		} else if (!strcmp(name, ".gnu_debuglink") && !e->debuglink && sh.sh_size) {
			const char *s = (const char *)e->data + sh.sh_offset;

			if (memchr(s, '\0', sh.sh_size))
				e->debuglink = strdup(s);
		}
	}
	if (go && symtab)
		read_go_tops(e, elf, symtab);
}

static struct uw_elf *parse(struct uw_elf *e, const struct pr_logger *lg)
{
	GElf_Ehdr eh;
	Elf *elf;

	elf_version(EV_CURRENT);
	elf = elf_memory((char *)e->data, e->size);
	if (!elf || elf_kind(elf) != ELF_K_ELF || !gelf_getehdr(elf, &eh) ||
	    eh.e_ident[EI_CLASS] != ELFCLASS64 || eh.e_machine != EM_X86_64 ||
	    (eh.e_type != ET_EXEC && eh.e_type != ET_DYN)) {
		pr__log(lg, PR_LOG_DEBUG, "%s: not an x86-64 executable or library",
			e->path);
		if (elf)
			elf_end(elf);
		uw_elf_free(e);
		return NULL;
	}
	e->type = eh.e_type;
	if (read_segments(e, elf, lg)) {
		pr__log(lg, PR_LOG_DEBUG, "%s: unreadable program headers", e->path);
		elf_end(elf);
		uw_elf_free(e);
		return NULL;
	}
	read_sections(e, elf);
	elf_end(elf);
	/* The .eh_frame_hdr points into memory that must be in the file. */
	if (e->table == UW_TABLE_EH_HDR &&
	    vaddr_to_offset(e, e->eh_table_vaddr, e->fde_count * 8) < 0)
		e->table = UW_TABLE_NONE;
	if (e->table == UW_TABLE_NONE && e->eh_frame.size)
		uw_cfi_index_eh_frame(e, lg);
	return e;
}

struct uw_elf *uw_elf_open(int fd, const char *path, const struct pr_logger *lg)
{
	struct uw_elf *e;
	struct stat st;
	void *data;

	if (fstat(fd, &st) || !S_ISREG(st.st_mode) || st.st_size < (off_t)sizeof(Elf64_Ehdr)) {
		close(fd);
		return NULL;
	}
	data = mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_PRIVATE, fd, 0);
	close(fd);
	if (data == MAP_FAILED)
		return NULL;
	e = calloc(1, sizeof(*e));
	if (!e || !(e->path = strdup(path))) {
		free(e);
		munmap(data, (size_t)st.st_size);
		return NULL;
	}
	e->data = data;
	e->size = (size_t)st.st_size;
	e->owns_mapping = true;
	return parse(e, lg);
}

struct uw_elf *uw_elf_from_memory(const void *image, size_t size, const char *name,
				  const struct pr_logger *lg)
{
	struct uw_elf *e = calloc(1, sizeof(*e));
	void *copy = malloc(size ? size : 1);

	if (!e || !copy || !(e->path = strdup(name))) {
		free(e);
		free(copy);
		return NULL;
	}
	memcpy(copy, image, size);
	e->data = copy;
	e->size = size;
	return parse(e, lg);
}

void uw_elf_free(struct uw_elf *e)
{
	if (!e)
		return;
	if (e->owns_mapping)
		munmap((void *)e->data, e->size);
	else
		free((void *)e->data);
	uw_cfi_table_free(&e->eh);
	uw_cfi_table_free(&e->dbg);
	free(e->rules);
	free(e->debuglink);
	free(e->origin);
	free(e->path);
	free(e);
}
