/* SPDX-License-Identifier: Apache-2.0 */
/*
 * ELF images: a file mapped once, its loadable segments (to turn runtime
 * addresses into file bytes whatever the load bias), its build-id and
 * .gnu_debuglink, and where the sections the unwinder and the symbolizer
 * look for are.  libelf parses the headers, either class; every offset it
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

#include "model/elfcache.h"

static bool in_image(const struct pr_elf *e, uint64_t off, uint64_t len)
{
	return off <= e->size && len <= e->size - off;
}

/* The segment of `e` whose file bytes hold [vaddr, vaddr + len), or NULL. */
static const struct pr_elf_segment *segment_of(const struct pr_elf *e, uint64_t vaddr,
					       uint64_t len, bool writable)
{
	for (size_t i = 0; i < e->nr_seg; i++) {
		const struct pr_elf_segment *s = &e->seg[i];

		if ((s->flags & PF_W && !writable) || vaddr < s->vaddr ||
		    vaddr - s->vaddr >= s->filesz || s->filesz - (vaddr - s->vaddr) < len)
			continue;
		return in_image(e, s->offset, s->filesz) ? s : NULL;
	}
	return NULL;
}

int pr__elf_read(const struct pr_elf *e, uint64_t vaddr, bool writable, uint64_t *val)
{
	const struct pr_elf_segment *s = segment_of(e, vaddr, 8, writable);

	if (!s)
		return -1;
	memcpy(val, e->data + s->offset + (vaddr - s->vaddr), 8);
	return 0;
}

const unsigned char *pr__elf_segment(const struct pr_elf *e, uint64_t vaddr, size_t *size,
				     uint64_t *seg_vaddr)
{
	const struct pr_elf_segment *s = segment_of(e, vaddr, 1, true);

	if (!s)
		return NULL;
	*size = (size_t)s->filesz;
	*seg_vaddr = s->vaddr;
	return e->data + s->offset;
}

/* Far more than any .debug_frame (a browser's is tens of megabytes); a
 * compressed section's header claiming more is not believed. */
#define MAX_INFLATED (UINT64_C(1) << 30)

int pr__elf_section(const struct pr_elf *e, const struct pr_elf_section *s,
		    unsigned char **out, size_t *size, const struct pr_logger *lg)
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
		pr__log(lg, PR_LOG_DEBUG, "%s: a compressed section not inflated: %s",
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
uint64_t pr__elf_bias(const struct pr_elf *e, const struct pr_map *m)
{
	bool exec = m->prot & PROT_EXEC, write = m->prot & PROT_WRITE;
	const struct pr_elf_segment *same_x = NULL, *any = NULL;

	for (size_t i = 0; i < e->nr_seg; i++) {
		const struct pr_elf_segment *s = &e->seg[i];
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

static int read_segments(struct pr_elf *e, Elf *elf, const struct pr_logger *lg)
{
	size_t n;
	bool have_text = false;

	if (elf_getphdrnum(elf, &n))
		return -EINVAL;
	for (size_t i = 0; i < n; i++) {
		GElf_Phdr ph;
		struct pr_elf_segment *s;

		if (!gelf_getphdr(elf, (int)i, &ph))
			return -EINVAL;
		if (ph.p_type == PT_GNU_EH_FRAME && in_image(e, ph.p_offset, ph.p_filesz))
			e->eh_frame_hdr = (struct pr_elf_section){ ph.p_offset, ph.p_filesz,
								   ph.p_vaddr, PR_ZSECTION_NONE };
		if (ph.p_type != PT_LOAD)
			continue;
		if (e->nr_seg == PR_ELF_MAX_SEGMENTS) {
			pr__log(lg, PR_LOG_DEBUG, "%s: more than %d loadable segments; the "
				"rest are ignored", e->path, PR_ELF_MAX_SEGMENTS);
			continue;
		}
		s = &e->seg[e->nr_seg++];
		*s = (struct pr_elf_segment){ ph.p_vaddr, ph.p_offset, ph.p_filesz, ph.p_memsz,
					      ph.p_flags };
		if (ph.p_flags & PF_X) {
			if (!have_text || ph.p_vaddr < e->text_lo)
				e->text_lo = ph.p_vaddr;
			if (!have_text || ph.p_vaddr + ph.p_memsz > e->text_hi)
				e->text_hi = ph.p_vaddr + ph.p_memsz;
			have_text = true;
		}
	}
	return 0;
}

/* .gnu_debuglink: the name, NUL-padded to 4 bytes, then its file's CRC. */
static void read_debuglink(struct pr_elf *e, const GElf_Shdr *sh)
{
	const char *s = (const char *)e->data + sh->sh_offset;
	const char *nul = memchr(s, '\0', sh->sh_size);
	size_t crc_at;

	if (!nul || nul == s)
		return;
	crc_at = ((size_t)(nul - s) + 4) & ~(size_t)3;
	if (crc_at + 4 <= sh->sh_size)
		memcpy(&e->debuglink_crc, s + crc_at, 4);
	e->debuglink = strdup(s);
}

static void read_sections(struct pr_elf *e, Elf *elf)
{
	size_t shstrndx;
	Elf_Scn *scn = NULL;

	if (elf_getshdrstrndx(elf, &shstrndx))
		return;
	while ((scn = elf_nextscn(elf, scn))) {
		GElf_Shdr sh;
		const char *name;
		struct pr_elf_section sec;

		if (!gelf_getshdr(scn, &sh) || !(name = elf_strptr(elf, shstrndx, sh.sh_name)))
			continue;
		/* NOBITS sections (in debug files) have no bytes here. */
		if (sh.sh_type == SHT_NOBITS || !in_image(e, sh.sh_offset, sh.sh_size))
			continue;
		sec = (struct pr_elf_section){
			sh.sh_offset, sh.sh_size, sh.sh_addr,
			sh.sh_flags & SHF_COMPRESSED ? PR_ZSECTION_CHDR :
			!strncmp(name, ".zdebug", 7) ? PR_ZSECTION_ZDEBUG : PR_ZSECTION_NONE };
		e->go |= !strcmp(name, ".note.go.buildid") || !strcmp(name, ".go.buildinfo");
		e->has_debug_info |= sh.sh_size && (!strcmp(name, ".debug_info") ||
						    !strcmp(name, ".zdebug_info"));
		/* .eh_frame is loaded, so never compressed (the gABI forbids
		 * SHF_COMPRESSED with SHF_ALLOC): it is read in place. */
		if (!strcmp(name, ".eh_frame") && sec.z == PR_ZSECTION_NONE)
			e->eh_frame = sec;
		else if (!strcmp(name, ".debug_frame") || !strcmp(name, ".zdebug_frame"))
			e->debug_frame = sec;
		else if (!strcmp(name, ".eh_frame_hdr") && !e->eh_frame_hdr.size)
			e->eh_frame_hdr = sec;
		else if (!strcmp(name, ".gnu_debuglink") && !e->debuglink)
			read_debuglink(e, &sh);
	}
}

static struct pr_elf *parse(struct pr_elf *e, const struct pr_logger *lg)
{
	GElf_Ehdr eh;
	Elf *elf;

	elf_version(EV_CURRENT);
	elf = elf_memory((char *)e->data, e->size);
	if (!elf || elf_kind(elf) != ELF_K_ELF || !gelf_getehdr(elf, &eh) ||
	    read_segments(e, elf, lg)) {
		pr__log(lg, PR_LOG_DEBUG, "%s: not an ELF file, or unreadable headers", e->path);
		if (elf)
			elf_end(elf);
		pr__elf_free(e);
		return NULL;
	}
	e->is64 = eh.e_ident[EI_CLASS] == ELFCLASS64;
	e->machine = eh.e_machine;
	e->type = eh.e_type;
	read_sections(e, elf);
	if (pr__build_id_elf(elf, e->build_id, &e->build_id_size))
		e->build_id_size = 0;
	elf_end(elf);
	return e;
}

static struct pr_elf *new_elf(const char *path)
{
	struct pr_elf *e = calloc(1, sizeof(*e));

	if (e && !(e->path = strdup(path))) {
		free(e);
		return NULL;
	}
	if (e)
		e->fd = -1;
	return e;
}

struct pr_elf *pr__elf_open(int fd, const char *path, bool keep_fd, const struct pr_logger *lg)
{
	struct pr_elf *e;
	struct stat st;
	void *data;

	if (fstat(fd, &st) || !S_ISREG(st.st_mode) || st.st_size < EI_NIDENT) {
		close(fd);
		return NULL;
	}
	data = mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_PRIVATE, fd, 0);
	if (data == MAP_FAILED || !(e = new_elf(path))) {
		if (data != MAP_FAILED)
			munmap(data, (size_t)st.st_size);
		close(fd);
		return NULL;
	}
	if (keep_fd)
		e->fd = fd;
	else
		close(fd);
	e->data = data;
	e->size = (size_t)st.st_size;
	e->owns_mapping = true;
	if ((e->guard = pr__busguard_add(data, e->size)) >= 0)
		e->guarded = true;
	e->dev = st.st_dev;
	e->ino = st.st_ino;
	return parse(e, lg);
}

struct pr_elf *pr__elf_from_memory(const void *image, size_t size, const char *name,
				   const struct pr_logger *lg)
{
	struct pr_elf *e = new_elf(name);
	void *copy = malloc(size ? size : 1);

	if (!e || !copy) {
		pr__elf_free(e);
		free(copy);
		return NULL;
	}
	memcpy(copy, image, size);
	e->data = copy;
	e->size = size;
	return parse(e, lg);
}

void pr__elf_free(struct pr_elf *e)
{
	if (!e)
		return;
	if (e->guarded)
		pr__busguard_remove(e->guard);
	if (e->owns_mapping)
		munmap((void *)e->data, e->size);
	else
		free((void *)e->data);
	if (e->fd >= 0)
		close(e->fd);
	free(e->debuglink);
	free(e->origin);
	free(e->path);
	free(e);
}

bool pr__elf_is(const struct pr_elf *e, const uint8_t *id, size_t len)
{
	return !len || (e->build_id_size == len && !memcmp(e->build_id, id, len));
}

int pr__elf_fd(struct pr_elf *e)
{
	int fd = e->fd;
	struct stat st;

	if (fd >= 0) {
		e->fd = -1;
		return fd;
	}
	/* A file found in a process's root is not looked for again by a path
	 * on the host, which is another file or a FIFO put there. */
	if (e->owns_mapping && !e->root && (fd = pr__open_target_file(0, e->path, NULL)) >= 0) {
		if (!fstat(fd, &st) && st.st_dev == e->dev && st.st_ino == e->ino)
			return fd;
		close(fd);
	}
	fd = memfd_create("elf", MFD_CLOEXEC);
	if (fd >= 0 && write(fd, e->data, e->size) != (ssize_t)e->size) {
		close(fd);
		fd = -1;
	}
	return fd;
}
