/* SPDX-License-Identifier: Apache-2.0 */
/* The symbolizer on JIT code: perf maps written here. */
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

START_TEST(perf_maps_name_jit_code_and_skip_garbage)
{
	uint32_t pid = (uint32_t)getpid();
	struct pr_model *m = pr_model_new(NULL);
	struct pr_record r = mmap2(pid, 0x7f0000000000ull, 0x100000, 0, "//anon");
	struct pr_symbolizer *s;
	struct pr_symbol sym;
	struct pr_frame f = { .ip = 0x7f0000001010ull, .dso_ip = 0x7f0000001010ull };
	char path[64], map_name[64];
	FILE *mf;

	snprintf(path, sizeof(path), "/tmp/perf-%u.map", pid);
	snprintf(map_name, sizeof(map_name), "/tmp/perf-%u.map", pid);
	write_text(path, "7f0000001000 100 LazyCompile:*hot /app.js:3\n"
			 "this line is garbage\n"
			 "7f0000002000 zz not hex\n"
			 "7f0000003000\n"
			 "\n"
			 "7f0000004000 40 py::run:/app.py\n");
	ck_assert_ptr_nonnull(m);
	ck_assert_int_eq(pr_model_apply(m, &r), 0);
	f.dso = pr__model_find(m, pid, f.ip)->dso;
	logtext[0] = 0;
	s = symbolizer(m, false);
	ck_assert_int_eq(pr_symbolizer_symbolize(s, pid, &f, &sym), 0);
	ck_assert_str_eq(sym.name, "LazyCompile:*hot /app.js:3");
	ck_assert_uint_eq(sym.offset, 0x10);
	ck_assert_str_eq(sym.module, map_name);
	ck_assert_int_eq(sym.source, PR_SYM_PERF_MAP);
	ck_assert_msg(strstr(logtext, "4 lines not of the form"), "%s", logtext);
	f.ip = f.dso_ip = 0x7f0000004020ull;
	ck_assert_int_eq(pr_symbolizer_symbolize(s, pid, &f, &sym), 0);
	ck_assert_str_eq(sym.name, "py::run:/app.py");

	/* Code compiled after the map was read: a miss reads it again, at
	 * most once a second. */
	f.ip = f.dso_ip = 0x7f0000005008ull;
	ck_assert_int_eq(pr_symbolizer_symbolize(s, pid, &f, &sym), 0);
	ck_assert_ptr_null(sym.name);
	ck_assert_str_eq(sym.module, map_name);
	mf = fopen(path, "a");
	ck_assert_ptr_nonnull(mf);
	fputs("7f0000005000 80 LazyCompile:*later /app.js:9\n", mf);
	ck_assert_int_eq(fclose(mf), 0);
	usleep(1100 * 1000);
	ck_assert_int_eq(pr_symbolizer_symbolize(s, pid, &f, &sym), 0);
	ck_assert_str_eq(sym.name, "LazyCompile:*later /app.js:9");
	ck_assert_uint_eq(sym.offset, 8);
	/* What was named stays named. */
	f.ip = f.dso_ip = 0x7f0000001010ull;
	ck_assert_int_eq(pr_symbolizer_symbolize(s, pid, &f, &sym), 0);
	ck_assert_str_eq(sym.name, "LazyCompile:*hot /app.js:3");
	pr_symbolizer_free(s);
	pr_model_free(m);
	unlink(path);
}
END_TEST

TCase *symbolize_jit_tests(void)
{
	TCase *tc = tcase_create("jit");

	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, perf_maps_name_jit_code_and_skip_garbage);
	return tc;
}
