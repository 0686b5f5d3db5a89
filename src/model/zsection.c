/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Compressed ELF sections: SHF_COMPRESSED with zlib or zstd (what
 * `-gz`, `ld --compress-debug-sections` and Go's linker write, and how
 * distributions ship debug files) and the older .zdebug_ sections.
 * The sizes in the headers come from files that may be hostile: one is
 * believed only up to the caller's limit, and the stream must produce
 * exactly that many bytes.
 */
#include <elf.h>
#include <errno.h>
#include <gelf.h>
#include <limits.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>
#include <zstd.h>

#include "model/zsection.h"

/* Elf64_Chdr's type for zstd, newer than some <elf.h>. */
#ifndef ELFCOMPRESS_ZSTD
#define ELFCOMPRESS_ZSTD 2
#endif

/* Deflate cannot shrink anything more than 1032 to 1, nor zstd more than
 * 32768 to 1 (a block of at most 128 KiB takes at least 4 bytes, as a
 * run): a header that says more is lying, and is refused before the
 * allocation it asks for. */
#define ZLIB_MAX_RATIO 1032
#define ZSTD_MAX_RATIO 32768

/* Exactly `n` bytes from the stream at `src`, or -EINVAL. */
static int inflate_zlib(const unsigned char *src, size_t len, unsigned char *dst, size_t n)
{
	uLongf got = n;

	return len <= ULONG_MAX && uncompress(dst, &got, src, (uLong)len) == Z_OK &&
	       got == n ? 0 : -EINVAL;
}

static int inflate_zstd(const unsigned char *src, size_t len, unsigned char *dst, size_t n)
{
	size_t got = ZSTD_decompress(dst, n, src, len);

	return !ZSTD_isError(got) && got == n ? 0 : -EINVAL;
}

int pr__zsection_inflate(const void *raw, size_t size, enum pr_zsection how, size_t max,
			 unsigned char **out, size_t *out_size)
{
	const unsigned char *p = raw;
	uint64_t n = 0;
	size_t hdr;
	uint32_t type = ELFCOMPRESS_ZLIB;
	unsigned char *buf;
	int err;

	if (how == PR_ZSECTION_CHDR) {
		Elf64_Chdr ch;

		if (size < sizeof(ch))
			return -EINVAL;
		memcpy(&ch, p, sizeof(ch));
		type = ch.ch_type;
		n = ch.ch_size;
		hdr = sizeof(ch);
	} else if (how == PR_ZSECTION_ZDEBUG) {
		if (size < 12 || memcmp(p, "ZLIB", 4))
			return -EINVAL;
		for (int i = 4; i < 12; i++)
			n = n << 8 | p[i];
		hdr = 12;
	} else {
		return -EINVAL;
	}
	if (type != ELFCOMPRESS_ZLIB && type != ELFCOMPRESS_ZSTD)
		return -EOPNOTSUPP;
	if (n > max)
		return -EFBIG;
	if (n / (type == ELFCOMPRESS_ZLIB ? ZLIB_MAX_RATIO : ZSTD_MAX_RATIO) > size - hdr)
		return -EINVAL;
	buf = malloc(n ? (size_t)n : 1);
	if (!buf)
		return -ENOMEM;
	if (type == ELFCOMPRESS_ZLIB)
		err = inflate_zlib(p + hdr, size - hdr, buf, (size_t)n);
	else
		err = inflate_zstd(p + hdr, size - hdr, buf, (size_t)n);
	if (err) {
		free(buf);
		return err;
	}
	*out = buf;
	*out_size = (size_t)n;
	return 0;
}

/* A .debug_ section compressed with zstd; its header in *shdr. */
static bool zstd_debug_section(Elf *elf, size_t shstrndx, Elf_Scn *scn, GElf_Shdr *shdr)
{
	GElf_Chdr chdr;
	const char *name;

	return gelf_getshdr(scn, shdr) && (shdr->sh_flags & SHF_COMPRESSED) &&
	       gelf_getchdr(scn, &chdr) && chdr.ch_type == ELFCOMPRESS_ZSTD &&
	       (name = elf_strptr(elf, shstrndx, shdr->sh_name)) && !strncmp(name, ".debug_", 7);
}

bool pr__zsection_zstd_dwarf(Elf *elf)
{
	Elf_Scn *scn = NULL;
	GElf_Shdr shdr;
	size_t shstrndx;

	if (!elf || elf_getshdrstrndx(elf, &shstrndx))
		return false;
	while ((scn = elf_nextscn(elf, scn)))
		if (zstd_debug_section(elf, shstrndx, scn, &shdr))
			return true;
	return false;
}

/* The section's bytes replaced by its inflated ones, which *buf owns. */
static int inflate_in_place(Elf_Scn *scn, GElf_Shdr *shdr, size_t max, unsigned char **buf)
{
	Elf_Data *data = elf_getdata(scn, NULL);
	GElf_Chdr chdr;
	size_t n;
	int err;

	if (!data || !data->d_buf || !gelf_getchdr(scn, &chdr))
		return -EINVAL;
	err = pr__zsection_inflate(data->d_buf, data->d_size, PR_ZSECTION_CHDR, max, buf, &n);
	if (err)
		return err;
	data->d_buf = *buf;
	data->d_size = n;
	data->d_type = ELF_T_BYTE;
	data->d_align = chdr.ch_addralign ? chdr.ch_addralign : 1;
	shdr->sh_flags &= ~(GElf_Xword)SHF_COMPRESSED;
	shdr->sh_size = n;
	shdr->sh_addralign = chdr.ch_addralign;
	if (!gelf_update_shdr(scn, shdr)) {
		free(*buf);
		*buf = NULL;
		return -EINVAL;
	}
	elf_flagdata(data, ELF_C_SET, ELF_F_DIRTY);
	return 0;
}

int pr__zsection_inflate_zstd_dwarf(Elf *elf, size_t max, unsigned char ***bufs, size_t *nr)
{
	Elf_Scn *scn = NULL;
	GElf_Shdr shdr;
	GElf_Ehdr ehdr;
	size_t shstrndx;
	int err = 0;

	/* No section headers to read: no sections to inflate. */
	if (!elf || elf_getshdrstrndx(elf, &shstrndx) || !gelf_getehdr(elf, &ehdr))
		return 0;
	while ((scn = elf_nextscn(elf, scn))) {
		unsigned char **more, *buf = NULL;
		int e;

		if (!zstd_debug_section(elf, shstrndx, scn, &shdr))
			continue;
		/* An Elf64_Chdr as this host lays it out, or nothing. */
		if (ehdr.e_ident[EI_CLASS] != ELFCLASS64 || ehdr.e_ident[EI_DATA] !=
		    (__BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__ ? ELFDATA2LSB : ELFDATA2MSB))
			return -EOPNOTSUPP;
		more = realloc(*bufs, (*nr + 1) * sizeof(**bufs));
		if (!more)
			return -ENOMEM;
		*bufs = more;
		e = inflate_in_place(scn, &shdr, max, &buf);
		if (e)
			err = e;
		else
			(*bufs)[(*nr)++] = buf;
	}
	return err;
}
