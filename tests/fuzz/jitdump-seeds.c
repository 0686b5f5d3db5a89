/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Writes the jitdump fuzzer's seeds (tests/fuzz/make-seeds.sh runs it):
 * every record kind, in this machine's byte order and in the other.
 * usage: jitdump-seeds DIR
 */
#include <stdio.h>

#include "../jitdump-writer.h"

static int write_seed(const char *dir, const char *name, bool swap)
{
	static const struct jdw_line lines[] = {
		{ 0x7f0000001000, 1, "/app/a.js" },
		{ 0x7f0000001010, 2, NULL },
	};
	static const unsigned char unwind[16] = { 0x14, 0, 0, 0, 0, 0, 0, 0, 1, 0x7a, 0x52 };
	char path[4096];
	struct jdw w;
	FILE *f;

	jdw_header(&w, 1234, swap);
	jdw_debug(&w, 10, 0x7f0000001000, lines, 2);
	jdw_unwind(&w, 11, unwind, sizeof(unwind), 4);
	jdw_load(&w, 12, 0x7f0000001000, 0x20, 1, "JS:*f /app/a.js:1:1", 0xc3);
	jdw_load(&w, 13, 0x7f0000001010, 0x20, 2, "JS:*g /app/a.js:2:1", 0x90);
	jdw_move(&w, 14, 0x7f0000001010, 0x7f0000002000, 0x20, 2);
	jdw_unknown(&w, 15, 7, 3);
	jdw_close(&w, 16);
	snprintf(path, sizeof(path), "%s/%s", dir, name);
	f = fopen(path, "wb");
	if (!f || fwrite(w.buf, 1, w.len, f) != w.len || fclose(f)) {
		perror(path);
		return 1;
	}
	free(w.buf);
	return 0;
}

int main(int argc, char **argv)
{
	if (argc != 2) {
		fprintf(stderr, "usage: jitdump-seeds DIR\n");
		return 2;
	}
	return write_seed(argv[1], "native.dump", false) | write_seed(argv[1], "swapped.dump", true);
}
