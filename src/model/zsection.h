/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Compressed ELF sections, for any stage that reads section bytes itself
 * rather than through libdw: the unwinder's .debug_frame (unwind/elf.c);
 * and for the symbolizer, DWARF compressed with zstd made readable to a
 * libdw that cannot inflate it.  libelf's elf_compress() in elfutils
 * before 0.189 inflates zlib only; this does zstd too.
 */
#ifndef PR_ZSECTION_H
#define PR_ZSECTION_H

#include <gelf.h>
#include <stdbool.h>
#include <stddef.h>

/* How a section's bytes are stored. */
enum pr_zsection {
	PR_ZSECTION_NONE,
	PR_ZSECTION_CHDR,          /* SHF_COMPRESSED: an Elf64_Chdr, then the stream */
	PR_ZSECTION_ZDEBUG,        /* a .zdebug_* section: "ZLIB", a big-endian size, zlib */
};

/*
 * The uncompressed contents of a section whose bytes in the file are
 * `raw`, `size` long, stored as `how` says (not PR_ZSECTION_NONE): zlib
 * (ELFCOMPRESS_ZLIB, and every .zdebug_ section) or zstd
 * (ELFCOMPRESS_ZSTD).  The header's size is believed only up to `max`
 * bytes, and the stream must inflate to exactly that size.  On success
 * *out is malloc'd (the caller frees it) and *out_size set; returns 0,
 * -EINVAL (malformed or not inflating to its stated size), -EFBIG (more
 * than `max`), -EOPNOTSUPP (another compression) or -ENOMEM.
 */
int pr__zsection_inflate(const void *raw, size_t size, enum pr_zsection how, size_t max,
			 unsigned char **out, size_t *out_size);

/* Whether `elf` (may be NULL) has a .debug_ section compressed with zstd
 * (SHF_COMPRESSED, ELFCOMPRESS_ZSTD). */
bool pr__zsection_zstd_dwarf(Elf *elf);

/*
 * Every .debug_ section of `elf` compressed with zstd made to read as
 * its inflated bytes, for libdw (dwarf_begin_elf() takes a section as
 * elf_getdata() gives it, and inflates only what SHF_COMPRESSED marks):
 * the section's Elf_Data points at the inflated bytes, and SHF_COMPRESSED
 * is cleared in libelf's copy of its header (an ELF_C_READ_MMAP
 * descriptor keeps one in memory; nothing is written to the file unless
 * the descriptor is ELF_C_RDWR and elf_update() is called).  Each section
 * is believed up to `max` bytes, as pr__zsection_inflate() says; one that
 * does not inflate is left as it was.  The inflated buffers are appended
 * to *bufs (*nr of them; the array is realloc'd): the caller frees each
 * and the array, after elf_end().  Returns 0, or the last section's error
 * (negative errno, as pr__zsection_inflate()).
 */
int pr__zsection_inflate_zstd_dwarf(Elf *elf, size_t max, unsigned char ***bufs, size_t *nr);

#endif
