/* SPDX-License-Identifier: Apache-2.0 */
/*
 * GNU build-ids: the NT_GNU_BUILD_ID note of an ELF file (looked for in
 * PT_NOTE segments, then in SHT_NOTE sections, which is all a separate
 * debug file may have), or of the kernel (/sys/kernel/notes).  The one
 * reader of them: libelf reads the headers of either class and byte
 * order, and checks their offsets against the file; the notes themselves
 * are checked here.
 */
#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <libelf.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/auxv.h>
#include <unistd.h>

#include "model/model.h"

/* No note section worth reading is larger. */
#define MAX_NOTES_SIZE (1u << 20)

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

/* The notes at [off, off + size) of the file, in the host's byte order. */
static int note_region(Elf *elf, uint64_t off, uint64_t size, uint8_t *id, size_t *id_len)
{
	Elf_Data *d;

	if (size == 0 || size > MAX_NOTES_SIZE)
		return -ENOENT;
	d = elf_getdata_rawchunk(elf, (int64_t)off, (size_t)size, ELF_T_NHDR);
	return d && d->d_buf ? pr__build_id_from_notes(d->d_buf, d->d_size, id, id_len) : -ENOENT;
}

int pr__build_id_elf(Elf *elf, uint8_t *id, size_t *id_len)
{
	Elf_Scn *scn = NULL;
	size_t n;

	if (!elf || elf_kind(elf) != ELF_K_ELF)
		return -EINVAL;
	/* Segments first: they are what the loader maps, so what the
	 * running process has.  Sections for files without them. */
	if (!elf_getphdrnum(elf, &n))
		for (size_t i = 0; i < n; i++) {
			GElf_Phdr ph;

			if (gelf_getphdr(elf, (int)i, &ph) && ph.p_type == PT_NOTE &&
			    !note_region(elf, ph.p_offset, ph.p_filesz, id, id_len))
				return 0;
		}
	while ((scn = elf_nextscn(elf, scn))) {
		GElf_Shdr sh;

		if (gelf_getshdr(scn, &sh) && sh.sh_type == SHT_NOTE &&
		    !note_region(elf, sh.sh_offset, sh.sh_size, id, id_len))
			return 0;
	}
	return -ENOENT;
}

int pr__build_id_fd(int fd, uint8_t *id, size_t *id_len)
{
	Elf *elf;
	int err;

	elf_version(EV_CURRENT);
	elf = elf_begin(fd, ELF_C_READ_MMAP, NULL);
	err = pr__build_id_elf(elf, id, id_len);
	if (elf)
		elf_end(elf);
	return err;
}

int pr_build_id_read(int fd, uint8_t *id, size_t size)
{
	uint8_t buf[PR_BUILD_ID_MAX];
	size_t len = 0;
	int err;

	if (fd < 0 || !id)
		return -EINVAL;
	err = pr__build_id_fd(fd, buf, &len);
	if (err)
		return err;
	if (len > size)
		return -ENOSPC;
	memcpy(id, buf, len);
	return (int)len;
}

int pr__vdso_image(const void **image, size_t *size)
{
	unsigned long base = getauxval(AT_SYSINFO_EHDR);
	FILE *f = base ? fopen("/proc/self/maps", "re") : NULL;
	char line[256];

	*image = NULL;
	if (!f)
		return -ENOENT;
	while (!*image && fgets(line, sizeof(line), f)) {
		unsigned long lo, hi;

		if (sscanf(line, "%lx-%lx", &lo, &hi) == 2 && lo == base &&
		    strstr(line, "[vdso]")) {
			*image = (const void *)lo;
			*size = hi - lo;
		}
	}
	fclose(f);
	return *image ? 0 : -ENOENT;
}

/* The vDSO is the same image in every process of this kernel: ours. */
int pr__build_id_vdso(uint8_t *id, size_t *id_len)
{
	const void *image;
	size_t size;
	Elf *elf;
	int err = pr__vdso_image(&image, &size);

	if (err)
		return err;
	elf_version(EV_CURRENT);
	elf = elf_memory((char *)image, size);
	err = pr__build_id_elf(elf, id, id_len);
	if (elf)
		elf_end(elf);
	return err;
}

int pr__build_id_path(const char *path, uint8_t *id, size_t *id_len)
{
	int fd = pr__open_target_file(0, path, NULL);
	int err;

	if (fd < 0)
		return fd;
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
