/* SPDX-License-Identifier: Apache-2.0 */
/*
 * GNU build-ids: the NT_GNU_BUILD_ID note of an ELF file (looked for in
 * PT_NOTE segments, then in SHT_NOTE sections, which is all a separate
 * debug file may have), or of the kernel (/sys/kernel/notes).  Every offset
 * and size read from the file is checked before use: these files come from
 * anywhere.
 */
#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/auxv.h>
#include <unistd.h>

#include "model/model.h"

/* No note section worth reading is larger. */
#define MAX_NOTES_SIZE (1u << 20)
#define MAX_HEADERS 4096

static size_t align4(size_t x)
{
	return (x + 3) & ~(size_t)3;
}

int pr__build_id_from_notes(const void *buf, size_t len, uint8_t *id,
			    size_t *id_len)
{
	const unsigned char *p = buf;
	size_t off = 0;

	while (off <= len && len - off >= 12) {
		uint32_t namesz, descsz, type;
		size_t name_off, desc_off;

		memcpy(&namesz, p + off, 4);
		memcpy(&descsz, p + off + 4, 4);
		memcpy(&type, p + off + 8, 4);
		name_off = off + 12;
		if (namesz > len - name_off)
			break;
		desc_off = name_off + align4(namesz);
		if (desc_off > len || descsz > len - desc_off)
			break;
		if (type == NT_GNU_BUILD_ID && namesz == 4 &&
		    !memcmp(p + name_off, "GNU", 4) && descsz > 0) {
			*id_len = descsz > PR_BUILD_ID_MAX ? PR_BUILD_ID_MAX : descsz;
			memcpy(id, p + desc_off, *id_len);
			return 0;
		}
		off = desc_off + align4(descsz);
	}
	return -ENOENT;
}

/* Where the ELF image is: a file, or memory (the vDSO). */
struct elf_src {
	int fd;
	const unsigned char *mem;
	size_t len;
};

static int read_at(const struct elf_src *src, void *buf, size_t len, uint64_t off)
{
	ssize_t n;

	if (src->mem) {
		if (off > src->len || len > src->len - off)
			return -EINVAL;
		memcpy(buf, src->mem + off, len);
		return 0;
	}
	n = pread(src->fd, buf, len, (off_t)off);
	return n == (ssize_t)len ? 0 : -EINVAL;
}

/* Read [off, off + size) and look for the note there. */
static int note_region(const struct elf_src *fd, uint64_t off, uint64_t size, uint8_t *id,
		       size_t *id_len)
{
	void *buf;
	int err;

	if (size == 0 || size > MAX_NOTES_SIZE)
		return -ENOENT;
	buf = malloc(size);
	if (!buf)
		return -ENOMEM;
	err = read_at(fd, buf, size, off);
	if (!err)
		err = pr__build_id_from_notes(buf, size, id, id_len);
	free(buf);
	return err;
}

/* The ELF class decides the header layout; both are little-endian here.
 * Converts what we need into the 64-bit forms. */
struct elf_view {
	bool is64;
	uint64_t phoff, shoff;
	uint16_t phnum, shnum, phentsize, shentsize;
};

static int read_elf_header(const struct elf_src *fd, struct elf_view *v)
{
	unsigned char ident[EI_NIDENT];

	if (read_at(fd, ident, sizeof(ident), 0) || memcmp(ident, ELFMAG, SELFMAG))
		return -EINVAL;
	if (ident[EI_DATA] != ELFDATA2LSB)
		return -EINVAL;
	v->is64 = ident[EI_CLASS] == ELFCLASS64;
	if (v->is64) {
		Elf64_Ehdr e;

		if (read_at(fd, &e, sizeof(e), 0))
			return -EINVAL;
		v->phoff = e.e_phoff;
		v->shoff = e.e_shoff;
		v->phnum = e.e_phnum;
		v->shnum = e.e_shnum;
		v->phentsize = e.e_phentsize;
		v->shentsize = e.e_shentsize;
		if ((v->phnum && v->phentsize < sizeof(Elf64_Phdr)) ||
		    (v->shnum && v->shentsize < sizeof(Elf64_Shdr)))
			return -EINVAL;
	} else if (ident[EI_CLASS] == ELFCLASS32) {
		Elf32_Ehdr e;

		if (read_at(fd, &e, sizeof(e), 0))
			return -EINVAL;
		v->phoff = e.e_phoff;
		v->shoff = e.e_shoff;
		v->phnum = e.e_phnum;
		v->shnum = e.e_shnum;
		v->phentsize = e.e_phentsize;
		v->shentsize = e.e_shentsize;
		if ((v->phnum && v->phentsize < sizeof(Elf32_Phdr)) ||
		    (v->shnum && v->shentsize < sizeof(Elf32_Shdr)))
			return -EINVAL;
	} else {
		return -EINVAL;
	}
	if (v->phnum > MAX_HEADERS || v->shnum > MAX_HEADERS)
		return -EINVAL;
	return 0;
}

/* Header `i` of a table as (type, offset, size). */
static int table_entry(const struct elf_src *fd, const struct elf_view *v, bool segments,
		       unsigned int i, uint32_t *type, uint64_t *off,
		       uint64_t *size)
{
	uint64_t at = segments ? v->phoff + (uint64_t)i * v->phentsize
			       : v->shoff + (uint64_t)i * v->shentsize;

	if (segments && v->is64) {
		Elf64_Phdr h;

		if (read_at(fd, &h, sizeof(h), at))
			return -EINVAL;
		*type = h.p_type, *off = h.p_offset, *size = h.p_filesz;
	} else if (segments) {
		Elf32_Phdr h;

		if (read_at(fd, &h, sizeof(h), at))
			return -EINVAL;
		*type = h.p_type, *off = h.p_offset, *size = h.p_filesz;
	} else if (v->is64) {
		Elf64_Shdr h;

		if (read_at(fd, &h, sizeof(h), at))
			return -EINVAL;
		*type = h.sh_type, *off = h.sh_offset, *size = h.sh_size;
	} else {
		Elf32_Shdr h;

		if (read_at(fd, &h, sizeof(h), at))
			return -EINVAL;
		*type = h.sh_type, *off = h.sh_offset, *size = h.sh_size;
	}
	return 0;
}

static int build_id_src(const struct elf_src *fd, uint8_t *id, size_t *id_len)
{
	struct elf_view v;
	int err = read_elf_header(fd, &v);

	if (err)
		return err;
	/* Segments first: they are what the loader maps, so what the
	 * running process has.  Sections for files without them. */
	for (int pass = 0; pass < 2; pass++) {
		bool segments = pass == 0;
		unsigned int n = segments ? v.phnum : v.shnum;

		for (unsigned int i = 0; i < n; i++) {
			uint32_t type;
			uint64_t off, size;

			if (table_entry(fd, &v, segments, i, &type, &off, &size))
				break;
			if (type != (segments ? PT_NOTE : SHT_NOTE))
				continue;
			if (!note_region(fd, off, size, id, id_len))
				return 0;
		}
	}
	return -ENOENT;
}

int pr__build_id_fd(int fd, uint8_t *id, size_t *id_len)
{
	struct elf_src src = { fd, NULL, 0 };

	return build_id_src(&src, id, id_len);
}

/* The vDSO is the same image in every process of this kernel: ours. */
int pr__build_id_vdso(uint8_t *id, size_t *id_len)
{
	unsigned long base = getauxval(AT_SYSINFO_EHDR);
	FILE *f = fopen("/proc/self/maps", "re");
	char line[256];
	struct elf_src src = { -1, NULL, 0 };

	if (!f)
		return -ENOENT;
	while (base && fgets(line, sizeof(line), f)) {
		unsigned long lo, hi;

		if (sscanf(line, "%lx-%lx", &lo, &hi) == 2 && lo == base &&
		    strstr(line, "[vdso]")) {
			src.mem = (const unsigned char *)lo;
			src.len = hi - lo;
		}
	}
	fclose(f);
	return src.mem ? build_id_src(&src, id, id_len) : -ENOENT;
}

int pr__build_id_path(const char *path, uint8_t *id, size_t *id_len)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	int err;

	if (fd < 0)
		return -errno;
	err = pr__build_id_fd(fd, id, id_len);
	close(fd);
	return err;
}

int pr__build_id_kernel(uint8_t *id, size_t *id_len)
{
	unsigned char buf[4096];
	int fd = open("/sys/kernel/notes", O_RDONLY | O_CLOEXEC);
	ssize_t n;

	if (fd < 0)
		return -errno;
	n = read(fd, buf, sizeof(buf));
	close(fd);
	if (n <= 0)
		return -ENOENT;
	return pr__build_id_from_notes(buf, (size_t)n, id, id_len);
}
