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
#include <limits.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>
#include <zstd.h>

#include "zsection.h"

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
