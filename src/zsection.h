/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Compressed ELF sections, for any stage that reads section bytes itself
 * rather than through libdw: the unwinder's .debug_frame (unwind/elf.c).
 * libelf's elf_compress() in elfutils before 0.189 inflates zlib only;
 * this does zstd too.
 */
#ifndef PR_ZSECTION_H
#define PR_ZSECTION_H

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

#endif
