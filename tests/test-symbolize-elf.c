/* SPDX-License-Identifier: Apache-2.0 */
/* The symbolizer on this program's file damaged on purpose, and what the
 * image-base variant must be. */
#include <check.h>
#include <elf.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "model/model.h"
#include "mkrecord.h"
#include "prsym.h"
#include "sym-test.h"
#include "symbolize.h"

/*
 * This program's file, damaged one way at a time, mapped where this
 * program's text is in a made-up process: the frame in ds_sym_outer must
 * come back (0) named from what survives, or unnamed, never a crash.
 */
START_TEST(damaged_files_fall_back_to_what_survives)
{
	static const char *const sections[] = { ".debug_info", ".debug_abbrev", ".debug_line",
						".debug_str", ".symtab", ".strtab" };
	struct pr_model *self = self_model();
	struct pr_frame f;
	const struct pr_map *map;
	size_t len;
	unsigned char *image, *copy;
	char exe[4096];
	ssize_t n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
	const uint32_t pid = 4000001;

	ck_assert_int_gt(n, 0);
	exe[n] = '\0';
	image = slurp(exe, &len);
	copy = malloc(len);
	ck_assert_ptr_nonnull(copy);
	f = outer_frame(self);
	map = pr__model_find(self, (uint32_t)getpid(), f.ip);
	for (int variant = 0; variant < 14; variant++) {
		const char *path = tmp_path("damaged");
		struct pr_model *m = pr_model_new(NULL);
		struct pr_record r = mmap2(pid, map->start, map->end - map->start, map->pgoff, path);
		struct pr_symbolizer *s;
		struct pr_symbol sym;
		struct pr_frame g = f;
		size_t cut = len;
		uint64_t off, size;
		bool symtab_intact = true;

		memcpy(copy, image, len);
		if (variant < (int)PR_ARRAY_SIZE(sections) * 2) {
			/* A section overwritten with garbage, or with zeros. */
			const char *name = sections[variant / 2];

			if (!find_section(copy, len, name, &off, &size)) {
				pr_model_free(m);
				continue;     /* stripped: not in this file */
			}
			for (uint64_t i = 0; i < size; i++)
				copy[off + i] = variant % 2 ? 0 : (unsigned char)(i * 131 + 7);
			symtab_intact = strcmp(name, ".symtab") && strcmp(name, ".strtab");
		} else if (variant == 12) {
			cut = len / 3;           /* cut short */
			symtab_intact = false;
		} else {
			/* Section headers said to be far past the end. */
			Elf64_Ehdr *eh = (Elf64_Ehdr *)copy;

			eh->e_shoff = UINT64_C(1) << 40;
			symtab_intact = false;
		}
		write_file(path, copy, cut);
		ck_assert_ptr_nonnull(m);
		ck_assert_int_eq(pr_model_apply(m, &r), 0);
		g.dso = pr__model_find(m, pid, g.ip)->dso;
		{
			PR_OPTS(pr_symbolizer_opts, o, .log = keep_log);

			s = pr_symbolizer_new(m, &o);
		}
		ck_assert_ptr_nonnull(s);
		ck_assert_int_eq(pr_symbolizer_symbolize(s, pid, &g, &sym), 0);
		ck_assert_str_eq(sym.module, path);
		if (symtab_intact && !debug_dir() && !getenv("DS_STRIPPED"))
			ck_assert_msg(sym.name && !strcmp(sym.name, "ds_sym_outer"),
				      "variant %d: %s", variant, sym.name ? sym.name : "(none)");
		for (size_t i = 0; i < sym.nr; i++)
			ck_assert_int_le(strlen(sym.funcs[i].name ? sym.funcs[i].name : ""), 4096);
		pr_symbolizer_free(s);
		pr_model_free(m);
	}
	free(copy);
	free(image);
	pr_model_free(self);
}
END_TEST

/*
 * The variant built to start at an image base (meson.build) must be what
 * it claims, an ET_DYN whose first segment is there, or it tests nothing
 * the plain build does not.
 */
START_TEST(the_image_base_build_is_a_pie_whose_first_segment_is_there)
{
	size_t len;
	unsigned char *buf = slurp("/proc/self/exe", &len);
	const Elf64_Ehdr *eh = (const void *)buf;
	const Elf64_Phdr *ph = (const void *)(buf + eh->e_phoff);
	int i = 0;

	ck_assert_uint_ge(len, eh->e_phoff + eh->e_phnum * sizeof(*ph));
	ck_assert_int_eq(eh->e_type, ET_DYN);
	while (i < eh->e_phnum && ph[i].p_type != PT_LOAD)
		i++;
	ck_assert_int_lt(i, eh->e_phnum);
	ck_assert_uint_eq(ph[i].p_vaddr, strtoull(getenv("DS_IMAGE_BASE"), NULL, 0));
	free(buf);
}
END_TEST

TCase *symbolize_elf_tests(void)
{
	TCase *tc = tcase_create("elf");

	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, damaged_files_fall_back_to_what_survives);
	if (getenv("DS_IMAGE_BASE"))
		tcase_add_test(tc, the_image_base_build_is_a_pie_whose_first_segment_is_there);
	return tc;
}
