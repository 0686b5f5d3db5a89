/* SPDX-License-Identifier: Apache-2.0 */
/*
 * libFuzzer target for the symbolizer: any bytes are a file mapped into a
 * process, and frames across it are named -- ELF symbols with perf's
 * rules, PLT stubs from relocations, DWARF's inlined scopes, lines and
 * call sites, C++ names demangled -- so AddressSanitizer sees every read
 * the symbolizer and the libraries it drives (libelf, libdw, libiberty)
 * make from a damaged file.  See tests/fuzz/README.md.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "base/base.h"
#include "records/records.h"
#include "capture/capture.h"
#include "model/model.h"
#include "symbols/symtab.h"
#include "prsym.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerInitialize(int *argc, char ***argv);

#define FRAMES 48

static volatile size_t sink;

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	(void)argc;
	(void)argv;
	/* Nothing from the network, nothing from other files on disk. */
	unsetenv("DEBUGINFOD_URLS");
	setenv("HOME", "/nonexistent", 1);
	return 0;
}

static void use(const struct pr_symbol *sym)
{
	sink += sym->name ? strlen(sym->name) : 0;
	for (size_t i = 0; i < sym->nr; i++)
		sink += (sym->funcs[i].name ? strlen(sym->funcs[i].name) : 0) +
			(sym->funcs[i].file ? strlen(sym->funcs[i].file) : 0) + sym->funcs[i].line;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	int fd = memfd_create("fuzz-elf", MFD_CLOEXEC);
	char path[64];
	struct pr_model *m = NULL;
	struct pr_symbolizer *s = NULL;
	struct pr_record r;
	struct pr_frame f;
	struct pr_symbol sym;

	if (fd < 0)
		abort();
	if (size && write(fd, data, size) != (ssize_t)size)
		abort();
	/* The file by a path that names no other: no debug file beside it. */
	snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
	memset(&r, 0, sizeof(r));
	r.type = PR_RECORD_MMAP2;
	r.pid = r.tid = 1;
	r.u.mmap.addr = 0x400000;
	r.u.mmap.len = 0x10000000;
	r.u.mmap.filename = path;
	r.u.mmap.is_mmap2 = true;
	r.u.mmap.prot = 5;
	m = pr_model_new(NULL);
	if (!m || pr_model_apply(m, &r))
		abort();
	s = pr_symbolizer_new(m, NULL);
	if (!s)
		abort();
	for (int i = 0; i < FRAMES; i++) {
		/* Offsets across the file, and each one past them. */
		uint64_t off = size ? (uint64_t)size * (uint64_t)(i / 2) / (FRAMES / 2) +
				      (uint64_t)(i & 1) : 0;
		const struct pr_map *map = pr__model_find(m, 1, 0x400000 + off);

		/* Placed as the unwinder places frames: in the mapped file. */
		f = (struct pr_frame){ .ip = 0x400000 + off, .dso = map ? map->dso : NULL,
				       .dso_ip = off };
		if (pr_symbolizer_symbolize(s, 1, &f, &sym) == 0)
			use(&sym);
	}
	pr_symbolizer_free(s);
	pr_model_free(m);
	close(fd);
	return 0;
}
