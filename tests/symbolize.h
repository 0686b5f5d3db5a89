/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Shared by the parts of test-symbolize (test-symbolize*.c, one
 * executable): helpers over this program's own code, which
 * test-symbolize.c holds and names.
 */
#ifndef DS_TEST_SYMBOLIZE_H
#define DS_TEST_SYMBOLIZE_H

#include <check.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "model/model.h"
#include "prsym.h"
#include "self-model.h"

/* Called with 1, ds_sym_outer() calls ds_sym_leaf() through two inlined
 * functions: the frame the tests name most. */
void ds_sym_outer(int x);

/* What the library logged through keep_log(); tests clear it first. */
extern char logtext[16384];
void keep_log(enum pr_log_level level, const char *msg, void *ctx);

/* A temporary directory made by main() before the tests fork, removed
 * after them; tmp_path() names a file in it (8 names live at a time). */
extern char tmpdir[];
const char *tmp_path(const char *name);
void write_file(const char *path, const void *buf, size_t len);
void write_text(const char *path, const char *text);
/* The whole of a file, malloc'd. */
unsigned char *slurp(const char *path, size_t *len);
/* A section's place in an ELF image, by name. */
bool find_section(const unsigned char *buf, size_t len, const char *want,
		  uint64_t *off, uint64_t *size);

/* DS_DEBUG_DIR, or NULL. */
const char *debug_dir(void);
/* self_model(): a model of this process (self-model.h). */
/* A live symbolizer over `m` that looks in debug_dir() and logs to logtext. */
struct pr_symbolizer *symbolizer(struct pr_model *m, bool no_demangle);
/* What most tests here name with: a model of this process and a live
 * symbolizer over it that demangles (self_model(), symbolizer()); both
 * freed by self_sym_free(). */
struct self_sym {
	struct pr_model *m;
	struct pr_symbolizer *s;
};
struct self_sym self_sym_new(void);
void self_sym_free(struct self_sym *me);
/* The frame of a caller whose call returns to `ret`, as the unwinder
 * makes it. */
struct pr_frame caller_frame(struct pr_model *m, uint32_t pid, uint64_t ret);
/* The frame in ds_sym_outer, in this process's model `m`. */
struct pr_frame outer_frame(struct pr_model *m);
/* That frame named with its two inlined functions and their lines. */
void check_outer_funcs(const struct pr_symbol *sym);
void check_func(const struct pr_sym_func *f, const char *name, int line, bool inlined);
/* This program's build-id in hex. */
void self_build_id_hex(char hex[2 * PR_BUILD_ID_MAX + 1]);
/* `path`'s .debug_info is plain DWARF (version 2 to 5), not compressed. */
void check_plain_dwarf(const char *path);

/* The parts' test cases. */
TCase *symbolize_kernel_tests(void);
TCase *symbolize_jit_tests(void);
TCase *symbolize_jitdump_tests(void);
TCase *symbolize_elf_tests(void);
TCase *symbolize_trim_tests(void);
TCase *symbolize_debug_tests(void);
TCase *symbolize_script_tests(void);

#endif
