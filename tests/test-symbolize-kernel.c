/* SPDX-License-Identifier: Apache-2.0 */
/* The symbolizer on the kernel: kallsyms files written here, and the
 * running kernel's, cached. */
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

#define KTEXT 0xffffffff81000000ull

/* A model that saw the kernel's text at `text`, as perf record writes it. */
static struct pr_model *kernel_model(uint64_t text)
{
	struct pr_model *m = pr_model_new(NULL);
	struct pr_record r = mmap2(UINT32_MAX, text, UINT64_MAX - text, text,
				   "[kernel.kallsyms]_text");

	ck_assert_ptr_nonnull(m);
	ck_assert_int_eq(pr_model_apply(m, &r), 0);
	return m;
}

static struct pr_symbol kernel_frame(struct pr_symbolizer *s, uint64_t ip)
{
	struct pr_frame f = { .ip = ip, .dso_ip = ip, .flags = PR_FRAME_KERNEL };
	struct pr_symbol sym;

	ck_assert_int_eq(pr_symbolizer_symbolize(s, 1, &f, &sym), 0);
	return sym;
}

static struct pr_symbolizer *kallsyms_symbolizer(struct pr_model *m, const char *path)
{
	PR_OPTS(pr_symbolizer_opts, o, .kallsyms = path, .log = keep_log);
	struct pr_symbolizer *s = pr_symbolizer_new(m, &o);

	ck_assert_ptr_nonnull(s);
	return s;
}

/* The recording machine's kallsyms, its text 2 MiB above where the
 * capture saw it (another boot), with a module. */
static const char moved_kallsyms[] =
	"ffffffff81200000 T _text\n"
	"ffffffff81200000 T startup_64\n"
	"ffffffff81200100 T ds_kernel_fn\n"
	"ffffffff81200180 t ds_static_fn\n"
	"ffffffff81200200 D some_data\n"
	"ffffffff81200300 W ds_weak_fn\n"
	"not a line at all\n"
	"ffffffffc0001000 t ds_mod_fn\t[dsmod]\n"
	"ffffffffc0001100 T ds_mod_exit\t[dsmod]\n"
	"ffffffffc0001200 t __bpf_tramp\t[bpf]\n";

START_TEST(kernel_frames_are_named_with_their_modules_where_the_kernel_was)
{
	struct pr_model *m = kernel_model(KTEXT);
	const char *path = tmp_path("kallsyms");
	struct pr_symbolizer *s;
	struct pr_symbol sym;

	write_text(path, moved_kallsyms);
	logtext[0] = 0;
	s = kallsyms_symbolizer(m, path);
	/* Recorded at KTEXT + 0x105: now KTEXT + 0x200105. */
	sym = kernel_frame(s, KTEXT + 0x105);
	ck_assert_str_eq(sym.name, "ds_kernel_fn");
	ck_assert_uint_eq(sym.offset, 5);
	ck_assert_str_eq(sym.module, "[kernel.kallsyms]");
	ck_assert_int_eq(sym.source, PR_SYM_KALLSYMS);
	ck_assert_msg(strstr(logtext, "another boot"), "%s", logtext);
	ck_assert_str_eq(kernel_frame(s, KTEXT + 0x190).name, "ds_static_fn");
	/* Data is no function's; the function before it runs on. */
	ck_assert_str_eq(kernel_frame(s, KTEXT + 0x208).name, "ds_static_fn");
	ck_assert_str_eq(kernel_frame(s, KTEXT + 0x301).name, "ds_weak_fn");
	/* A module's frames are attributed to the module, as perf does. */
	sym = kernel_frame(s, 0xffffffffc0001004ull - 0x200000);
	ck_assert_str_eq(sym.name, "ds_mod_fn");
	ck_assert_str_eq(sym.module, "[dsmod]");
	ck_assert_str_eq(kernel_frame(s, 0xffffffffc0001204ull - 0x200000).module, "[bpf]");
	/* Below the first symbol: nothing names it. */
	sym = kernel_frame(s, KTEXT - 0x1000);
	ck_assert_ptr_null(sym.name);
	ck_assert_str_eq(sym.module, "[kernel.kallsyms]");
	pr_symbolizer_free(s);
	pr_model_free(m);
}
END_TEST

START_TEST(hidden_kernel_addresses_are_said_once_and_left_unnamed)
{
	struct pr_model *m = kernel_model(KTEXT);
	const char *path = tmp_path("kallsyms-hidden");
	struct pr_symbolizer *s;

	write_text(path, "0000000000000000 T _text\n0000000000000000 T ds_kernel_fn\n"
			 "0000000000000000 t ds_mod_fn\t[dsmod]\n");
	logtext[0] = 0;
	s = kallsyms_symbolizer(m, path);
	ck_assert_ptr_null(kernel_frame(s, KTEXT + 0x105).name);
	ck_assert_ptr_null(kernel_frame(s, KTEXT + 0x205).name);
	ck_assert_str_eq(kernel_frame(s, KTEXT + 0x305).module, "[kernel.kallsyms]");
	ck_assert_msg(strstr(logtext, "no kernel symbols with addresses"), "%s", logtext);
	ck_assert_ptr_eq(strstr(logtext, "no kernel symbols"),
			 strstr(logtext + 1, "no kernel symbols"));
	pr_symbolizer_free(s);

	logtext[0] = 0;
	s = kallsyms_symbolizer(m, tmp_path("no-such-kallsyms"));
	ck_assert_ptr_null(kernel_frame(s, KTEXT + 0x105).name);
	ck_assert_msg(strstr(logtext, "cannot read"), "%s", logtext);
	pr_symbolizer_free(s);
	pr_model_free(m);
}
END_TEST

/* The running kernel's symbols name nothing of a capture made on another
 * kernel build: its build-id says so. */
START_TEST(another_kernels_capture_keeps_kernel_addresses)
{
	static const uint8_t other[20] = { 0xde, 0xad, 0xbe, 0xef };
	struct pr_model *m = kernel_model(KTEXT);
	struct pr_symbolizer *s;

	ck_assert_int_eq(pr_model_set_build_id(m, "[kernel.kallsyms]", other, sizeof(other)), 0);
	logtext[0] = 0;
	s = kallsyms_symbolizer(m, NULL);
	ck_assert_ptr_null(kernel_frame(s, KTEXT + 0x105).name);
	ck_assert_msg(strstr(logtext, "recorded on another kernel (build-id "
			      "deadbeef00000000000000000000000000000000)") ||
		      strstr(logtext, "hidden in /proc/kallsyms"), "%s", logtext);
	/* What to do, in the library's words, not a command's flag. */
	ck_assert_msg(!strstr(logtext, "--"), "%s", logtext);
	pr_symbolizer_free(s);
	pr_model_free(m);
}
END_TEST

/* The running kernel's symbols, parsed once and kept in the cache
 * directory; a damaged cache is read again from /proc/kallsyms. */
START_TEST(the_running_kernels_symbols_are_cached)
{
	uint64_t text = 0, addr;
	char line[512], name[256], type, sched[256] = "";
	FILE *f = fopen("/proc/kallsyms", "r");
	const char *cache = tmp_path("cache");
	struct pr_symbolizer *s;
	struct pr_model *m;
	struct stat st;
	ino_t ino = 0;

	ck_assert_ptr_nonnull(f);
	/* Some function well past _text to look up. */
	while (fgets(line, sizeof(line), f)) {
		unsigned long long a;

		if (sscanf(line, "%llx %c %255s", &a, &type, name) != 3 || strchr(line, '['))
			continue;
		if (!strcmp(name, "_text"))
			text = a;
		if (text && a > text + 0x10000 && type == 'T' && !sched[0]) {
			strcpy(sched, name);
			addr = a;
		}
	}
	fclose(f);
	if (!text) {
		/* kptr_restrict: only the warning can be checked. */
		m = kernel_model(KTEXT);
		logtext[0] = 0;
		s = kallsyms_symbolizer(m, NULL);
		ck_assert_ptr_null(kernel_frame(s, KTEXT + 0x105).name);
		ck_assert_msg(strstr(logtext, "kernel.kptr_restrict"), "%s", logtext);
		pr_symbolizer_free(s);
		pr_model_free(m);
		return;
	}
	ck_assert(sched[0]);
	ck_assert_int_eq(mkdir(cache, 0755), 0);
	m = kernel_model(text);
	for (int round = 0; round < 3; round++) {
		PR_OPTS(pr_symbolizer_opts, o, .cache_dir = cache, .log = keep_log);
		struct pr_symbol sym;
		char kpath[600];

		snprintf(kpath, sizeof(kpath), "%s/kallsyms", cache);
		if (round == 2) {
			/* Damaged: cut in the middle of its entries. */
			ck_assert_int_eq(stat(kpath, &st), 0);
			ck_assert_int_eq(truncate(kpath, st.st_size / 2), 0);
		}
		s = pr_symbolizer_new(m, &o);
		ck_assert_ptr_nonnull(s);
		sym = kernel_frame(s, addr + 1);
		ck_assert_str_eq(sym.name, sched);
		ck_assert_uint_eq(sym.offset, 1);
		pr_symbolizer_free(s);
		ck_assert_int_eq(stat(kpath, &st), 0);
		ck_assert_int_gt(st.st_size, 1000);
		/* Written (to a new file, renamed into place) when parsed:
		 * the first time and after the damage, not in between. */
		if (round == 1)
			ck_assert_uint_eq(st.st_ino, ino);
		if (round == 2)
			ck_assert_uint_ne(st.st_ino, ino);
		ino = st.st_ino;
	}
	pr_model_free(m);
}
END_TEST

TCase *symbolize_kernel_tests(void)
{
	TCase *tc = tcase_create("kernel");

	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, kernel_frames_are_named_with_their_modules_where_the_kernel_was);
	tcase_add_test(tc, hidden_kernel_addresses_are_said_once_and_left_unnamed);
	tcase_add_test(tc, another_kernels_capture_keeps_kernel_addresses);
	tcase_add_test(tc, the_running_kernels_symbols_are_cached);
	return tc;
}
