/* SPDX-License-Identifier: Apache-2.0 */
/*
 * libFuzzer target for the address index cache's reader
 * (src/symbols/symindex_file.c): any bytes are an index file, read as
 * the cache reads one it maps, made for the build-id and settings its
 * header names (a foreign one is refused before anything else is read).
 * Its checksum is set right first (unless the settings' top bit, which no
 * setting uses, is set), so that mutations reach the table directory and
 * the entries' checks behind it rather than stop at the CRC.  An index
 * accepted is then looked up at every segment's ends and between, every
 * name and file it gives is read, and so is every name of its ELF symbols
 * as a module takes them, so AddressSanitizer sees a read outside what
 * was checked.
 * See tests/fuzz/README.md.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

#include "symbols/symbolizer.h"
#include "symbols/symindex.h"
#include "symbols/symindex_file.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static volatile size_t sink;

/* The header's fields the harness reads (symindex_file.c's layout). */
#define HDR_SIZE 96
#define HDR_BUILD_ID 24
#define HDR_BUILD_ID_SIZE 44
#define HDR_SETTINGS 48
#define HDR_CHECKSUM 56

static void look_up(const struct pr__symindex *ix, uint64_t pc)
{
	struct pr_sym_func f[MAX_INLINE];
	size_t nr = pr__symindex_chain(ix, pc, pc & 1, (pc & 2) ? "ns::renamed" : NULL, pc, f);
	const uint64_t *units;

	sink += pr__symindex_covers(ix, pc) + pr__symindex_units(ix, &units);
	if (pr__symindex_units(ix, &units))
		sink += units[0];

	for (size_t i = 0; i < nr; i++)
		sink += (f[i].name ? strlen(f[i].name) : 0) + (f[i].file ? strlen(f[i].file) : 0) +
			f[i].line + f[i].inlined;
}

/* Every name of the file's symbols, as a module takes them. */
static void names(const struct pr__symindex *ix)
{
	const struct pr__ixsyms *x = pr__symindex_syms(ix);
	struct sym_module *m = calloc(1, sizeof(*m));
	struct pr_sym sym;
	size_t at;

	if (!m)
		return;
	pr__ixsyms_attach(x, m);
	for (size_t i = 0; i < x->nr_syms; i++) {
		pr__ixsyms_get(x, i, &sym);
		sink += strlen(sym.name) + sym.binding;
		/* Its own start finds it, or one of the symbols that share
		 * or cover it. */
		if (pr__ixsyms_find(x, sym.start, &sym, &at))
			sink += at;
	}
	if (!pr__ixsyms_load_a2l(x, m))
		for (size_t i = 0; i < m->nr_a2l; i++)
			sink += strlen(m->a2l[i].name);
	sink += pr__ixsyms_find(x, sink, &sym, &at);
	free(m->a2l);
	free(m);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct pr__ix_key key = { 0 };
	struct pr__symindex *ix;
	const char *why = NULL;
	uint64_t *buf;
	uint32_t v;

	/* An exact allocation (8-byte aligned, as a mapping is), so that a
	 * read past the end is seen. */
	if (!(buf = malloc(size ? size : 1)))
		return 0;
	memcpy(buf, data, size);
	if (size >= HDR_SIZE) {
		unsigned char *b = (unsigned char *)buf;

		memcpy(&v, b + HDR_BUILD_ID_SIZE, 4);
		key.build_id_size = v > PR_BUILD_ID_MAX ? PR_BUILD_ID_MAX : v;
		memcpy(key.build_id, b + HDR_BUILD_ID, PR_BUILD_ID_MAX);
		memcpy(&key.settings, b + HDR_SETTINGS, 4);
		if (b[HDR_SETTINGS + 3] & 0x80) {
			/* The top settings bit, which no setting uses, says
			 * to leave the checksum as it is. */
		} else {
			v = (uint32_t)crc32_z(crc32_z(0, NULL, 0), b + HDR_SIZE, size - HDR_SIZE);
			memcpy(b + HDR_CHECKSUM, &v, 4);
		}
	}
	ix = pr__symindex_read(buf, size, NULL, &key, &why);
	if (!ix && !why)
		abort();             /* refused without saying why */
	if (ix) {
		struct pr__ix_table t[PR_IX_MAX_TABLES];
		size_t nr = pr__symindex_tables(ix, t);

		for (size_t i = 0; i < nr; i++) {
			if (t[i].kind != PR_IX_SEGMENTS)
				continue;
			for (uint64_t k = 0; k < t[i].count && k < 4096; k++) {
				const unsigned char *seg = (const unsigned char *)t[i].base + 16 * k;
				uint64_t lo;
				uint32_t len;

				memcpy(&lo, seg, 8);
				memcpy(&len, seg + 8, 4);
				look_up(ix, lo);
				look_up(ix, lo + len - 1);
				look_up(ix, lo + len);
				look_up(ix, lo - 1);
			}
		}
		look_up(ix, 0);
		look_up(ix, UINT64_MAX);
		names(ix);
		sink += pr__symindex_bytes(ix);
		pr__symindex_free(ix);
	}
	free(buf);
	return 0;
}
