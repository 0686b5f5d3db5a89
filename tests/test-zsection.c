/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Compressed ELF sections (src/zsection.c): zlib and zstd behind an
 * Elf64_Chdr, zlib behind .zdebug_'s header, each compressed here with
 * the libraries' own encoders; and headers that lie about the size, as
 * a hostile file's would.
 */
#include <check.h>
#include <elf.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>
#include <zstd.h>

#include "checkmain.h"
#include "model/zsection.h"

#ifndef ELFCOMPRESS_ZSTD
#define ELFCOMPRESS_ZSTD 2
#endif

#define PLAIN 10000
#define MAX (1u << 20)

static unsigned char plain[PLAIN];

/* A section of `plain` compressed with `type`, behind a header saying
 * `claimed` bytes; its size in *size.  Freed by the caller. */
static unsigned char *section(enum pr_zsection how, uint32_t type, uint64_t claimed,
			      size_t *size)
{
	size_t hdr = how == PR_ZSECTION_CHDR ? sizeof(Elf64_Chdr) : 12;
	size_t cap = hdr + compressBound(PLAIN) + ZSTD_compressBound(PLAIN);
	unsigned char *buf = malloc(cap);
	uLongf n = cap - hdr;

	ck_assert_ptr_nonnull(buf);
	for (size_t i = 0; i < PLAIN; i++)
		plain[i] = (unsigned char)(i * 7 / 13);
	if (type == ELFCOMPRESS_ZSTD)
		n = ZSTD_compress(buf + hdr, cap - hdr, plain, PLAIN, 3);
	else
		ck_assert_int_eq(compress(buf + hdr, &n, plain, PLAIN), Z_OK);
	if (how == PR_ZSECTION_CHDR) {
		Elf64_Chdr ch = { .ch_type = type, .ch_size = claimed, .ch_addralign = 8 };

		memcpy(buf, &ch, sizeof(ch));
	} else {
		memcpy(buf, "ZLIB", 4);
		for (int i = 0; i < 8; i++)
			buf[4 + i] = (unsigned char)(claimed >> (56 - 8 * i));
	}
	*size = hdr + n;
	return buf;
}

static int inflate_made(enum pr_zsection how, uint32_t type, uint64_t claimed, size_t cut)
{
	size_t size, out_size = 0;
	unsigned char *raw = section(how, type, claimed, &size), *out = NULL;
	int err = pr__zsection_inflate(raw, size - cut, how, MAX, &out, &out_size);

	if (!err) {
		ck_assert_uint_eq(out_size, PLAIN);
		ck_assert_mem_eq(out, plain, PLAIN);
	}
	free(out);
	free(raw);
	return err;
}

START_TEST(zlib_and_zstd_sections_inflate_to_their_stated_size)
{
	ck_assert_int_eq(inflate_made(PR_ZSECTION_CHDR, ELFCOMPRESS_ZLIB, PLAIN, 0), 0);
	ck_assert_int_eq(inflate_made(PR_ZSECTION_CHDR, ELFCOMPRESS_ZSTD, PLAIN, 0), 0);
	ck_assert_int_eq(inflate_made(PR_ZSECTION_ZDEBUG, ELFCOMPRESS_ZLIB, PLAIN, 0), 0);
}
END_TEST

START_TEST(a_size_the_stream_does_not_have_is_refused)
{
	for (uint32_t type = ELFCOMPRESS_ZLIB; type <= ELFCOMPRESS_ZSTD; type++) {
		ck_assert_int_eq(inflate_made(PR_ZSECTION_CHDR, type, PLAIN + 1, 0), -EINVAL);
		ck_assert_int_eq(inflate_made(PR_ZSECTION_CHDR, type, PLAIN - 1, 0), -EINVAL);
		ck_assert_int_eq(inflate_made(PR_ZSECTION_CHDR, type, PLAIN, 1), -EINVAL);
	}
	ck_assert_int_eq(inflate_made(PR_ZSECTION_ZDEBUG, ELFCOMPRESS_ZLIB, PLAIN * 2, 0), -EINVAL);
}
END_TEST

START_TEST(absurd_sizes_are_refused)
{
	/* Over the caller's limit, and over what the stream's length could
	 * hold (a hostile header asking for a large allocation). */
	ck_assert_int_eq(inflate_made(PR_ZSECTION_CHDR, ELFCOMPRESS_ZLIB, UINT64_MAX, 0), -EFBIG);
	ck_assert_int_eq(inflate_made(PR_ZSECTION_ZDEBUG, ELFCOMPRESS_ZLIB, MAX + 1, 0), -EFBIG);
	ck_assert_int_eq(inflate_made(PR_ZSECTION_CHDR, ELFCOMPRESS_ZLIB, MAX, 0), -EINVAL);
}
END_TEST

START_TEST(unknown_compressions_and_short_headers_are_refused)
{
	unsigned char out_byte[1], *out = out_byte;
	size_t n;

	ck_assert_int_eq(inflate_made(PR_ZSECTION_CHDR, 3, PLAIN, 0), -EOPNOTSUPP);
	ck_assert_int_eq(pr__zsection_inflate("ZLIB", 4, PR_ZSECTION_ZDEBUG, MAX, &out, &n),
			 -EINVAL);
	ck_assert_int_eq(pr__zsection_inflate("ZLIB\0\0\0\0\0\0\0\1", 12, PR_ZSECTION_CHDR,
					      MAX, &out, &n), -EINVAL);
	ck_assert_ptr_eq(out, out_byte);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("zsection");
	TCase *tc = tcase_create("inflate");

	tcase_add_test(tc, zlib_and_zstd_sections_inflate_to_their_stated_size);
	tcase_add_test(tc, a_size_the_stream_does_not_have_is_refused);
	tcase_add_test(tc, absurd_sizes_are_refused);
	tcase_add_test(tc, unknown_compressions_and_short_headers_are_refused);
	suite_add_tcase(s, tc);
	return run_suite(s);
}
