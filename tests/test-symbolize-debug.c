/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The symbolizer and DWARF elsewhere than in the file: compressed with
 * zstd, in a debug file found by build-id, one of another build, one kept
 * inflated in the cache.
 */
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

/* `objcopy ARGS THIS-PROGRAM PATH`; false where this objcopy cannot.  The
 * program by its name: under valgrind, /proc/PID/exe is valgrind's own
 * to another process. */
static bool objcopy_self(const char *args, const char *path)
{
	char cmd[8600], exe[4096];
	ssize_t n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);

	ck_assert_int_gt(n, 0);
	exe[n] = '\0';
	snprintf(cmd, sizeof(cmd), "objcopy %s %s %s 2>/dev/null", args, exe, path);
	if (system(cmd)) {
		fprintf(stderr, "# objcopy %s failed here: not tested\n", args);
		return false;
	}
	return true;
}

/* Where the Elf64_Chdr of `path`'s .debug_info is, checked to be zstd's. */
static uint64_t zstd_debug_info(const char *path)
{
	size_t len;
	unsigned char *buf = slurp(path, &len);
	uint64_t off, size;
	Elf64_Chdr ch;

	ck_assert(find_section(buf, len, ".debug_info", &off, &size));
	ck_assert_uint_ge(size, sizeof(ch));
	memcpy(&ch, buf + off, sizeof(ch));
	ck_assert_uint_eq(ch.ch_type, 2);       /* ELFCOMPRESS_ZSTD */
	free(buf);
	return off;
}

/* A symbolizer over a made-up process, and what it said of one frame. */
struct copy_run {
	struct pr_model *m;
	struct pr_symbolizer *s;
	struct pr_symbol sym;
};

/*
 * The frame in ds_sym_outer, as if `path` were mapped in a made-up
 * process where this program's text is, its debug files looked for under
 * `dir` (or nowhere) and kept inflated in `cache` (or not at all).  The
 * directory is the model's; `sym_dir` is one given to the symbolizer
 * instead (deprecated), or NULL.
 */
static void symbolize_copy(const char *path, const char *dir, const char *sym_dir,
			   const char *cache, struct copy_run *run)
{
	struct pr_model *self = self_model();
	const uint32_t pid = 4000002;
	const char *dirs[1] = { dir }, *sym_dirs[1] = { sym_dir };
	const struct pr_map *map;
	struct pr_record r;
	struct pr_frame f;
	PR_OPTS(pr_model_opts, mo, .debug_dirs = dirs, .nr_debug_dirs = dir ? 1 : 0);
	PR_OPTS(pr_symbolizer_opts, o, .debug_dirs = sym_dirs, .nr_debug_dirs = sym_dir ? 1 : 0,
		.cache_dir = cache, .log = keep_log);

	f = outer_frame(self);
	map = pr__model_find(self, (uint32_t)getpid(), f.ip);
	r = mmap2(pid, map->start, map->end - map->start, map->pgoff, path);
	run->m = pr_model_new(&mo);
	ck_assert_ptr_nonnull(run->m);
	ck_assert_int_eq(pr_model_apply(run->m, &r), 0);
	f.dso = pr__model_find(run->m, pid, f.ip)->dso;
	pr_model_free(self);
	logtext[0] = 0;
	run->s = pr_symbolizer_new(run->m, &o);
	ck_assert_ptr_nonnull(run->s);
	ck_assert_int_eq(pr_symbolizer_symbolize(run->s, pid, &f, &run->sym), 0);
}

static void copy_run_free(struct copy_run *run)
{
	pr_symbolizer_free(run->s);
	pr_model_free(run->m);
}

/* Whether a line of the log but the note that a file's DWARF was opened
 * (whose name may hold the word) mentions zstd. */
static bool says_zstd(const char *log)
{
	for (const char *line = log; *line;) {
		const char *end = strchrnul(line, '\n');
		const char *z = memmem(line, (size_t)(end - line), "zstd", 4);
		static const char opened[] = ": its DWARF opened";

		if (z && !((size_t)(end - line) >= sizeof(opened) - 1 &&
			   !memcmp(end - (sizeof(opened) - 1), opened, sizeof(opened) - 1)))
			return true;
		line = *end ? end + 1 : end;
	}
	return false;
}

/* The frame in ds_sym_outer named with its inlined functions and lines,
 * and nothing said about zstd. */
static void check_outer_chain(const struct pr_symbol *sym)
{
	check_outer_funcs(sym);
	ck_assert_msg(!says_zstd(logtext), "%s", logtext);
}

/*
 * This program with its DWARF compressed by zstd (which libdw reads only
 * from elfutils 0.189 on): named with its inlined functions and lines all
 * the same.
 */
START_TEST(zstd_compressed_dwarf_is_read)
{
	const char *path = tmp_path("zstd");
	struct copy_run run;

	if (!objcopy_self("--compress-debug-sections=zstd", path))
		return;
	zstd_debug_info(path);
	symbolize_copy(path, NULL, NULL, NULL, &run);
	check_outer_chain(&run.sym);
	copy_run_free(&run);
}
END_TEST

/*
 * This program stripped of its DWARF, which is in a debug file compressed
 * with zstd found by build-id: inflated in memory without a cache
 * directory, kept inflated in one with; the same names each time.
 */
START_TEST(a_debug_file_compressed_with_zstd_is_read)
{
	const char *path = tmp_path("zstd-stripped"), *dir = tmp_path("zstd-debug");
	const char *cache = tmp_path("zstd-cache");
	char hex[2 * PR_BUILD_ID_MAX + 1], debug[700], cmd[1600];

	self_build_id_hex(hex);
	snprintf(cmd, sizeof(cmd), "mkdir -p %s/.build-id/%.2s %s", dir, hex, cache);
	ck_assert_int_eq(system(cmd), 0);
	snprintf(debug, sizeof(debug), "%s/.build-id/%.2s/%s.debug", dir, hex, hex + 2);
	if (!objcopy_self("--only-keep-debug --compress-debug-sections=zstd", debug) ||
	    !objcopy_self("--strip-debug", path))
		return;
	zstd_debug_info(debug);
	for (int round = 0; round < 2; round++) {
		struct copy_run run;

		symbolize_copy(path, dir, NULL, round ? cache : NULL, &run);
		check_outer_chain(&run.sym);
		copy_run_free(&run);
	}
	/* Kept inflated. */
	snprintf(debug, sizeof(debug), "%s/debug/%s.debug", cache, hex);
	check_plain_dwarf(debug);
}
END_TEST

/*
 * A zstd-compressed .debug_info whose header lies about its size: far
 * more than any section (refused before any allocation), or a little
 * more than the stream holds (refused after inflating it).  Not read,
 * said so, and the frame still named by its symbol.
 */
START_TEST(a_zstd_section_whose_size_lies_is_not_believed)
{
	static const uint64_t lies[] = { UINT64_C(1) << 40, 1 };
	const char *good = tmp_path("zstd-good"), *bad = tmp_path("zstd-lying");

	if (!objcopy_self("--compress-debug-sections=zstd", good))
		return;
	for (size_t i = 0; i < PR_ARRAY_SIZE(lies); i++) {
		uint64_t at = zstd_debug_info(good);
		size_t len;
		unsigned char *buf = slurp(good, &len);
		Elf64_Chdr ch;
		struct copy_run run;

		memcpy(&ch, buf + at, sizeof(ch));
		ch.ch_size = lies[i] == 1 ? ch.ch_size + 1 : lies[i];
		memcpy(buf + at, &ch, sizeof(ch));
		write_file(bad, buf, len);
		free(buf);
		symbolize_copy(bad, NULL, NULL, NULL, &run);
		ck_assert_str_eq(run.sym.name, "ds_sym_outer");
		ck_assert_msg(strstr(logtext, "compressed with zstd not inflated: ") &&
			      strstr(logtext, lies[i] == 1 ? strerror(EINVAL) : strerror(EFBIG)),
			      "%s", logtext);
		copy_run_free(&run);
	}
}
END_TEST

/*
 * Debug directories are the model's, which finds each file once for all
 * its users.  This program without its DWARF, which is in a debug file
 * by build-id: named with its inlined functions when the model is given
 * the directory; when only the symbolizer is (deprecated), on a model
 * without directories of its own, as before; not on a model with its
 * own, which are the ones used (said at debug level).
 */
START_TEST(debug_directories_are_the_models)
{
	const char *path = tmp_path("model-dirs-stripped"), *dir = tmp_path("model-dirs-debug");
	const char *other = tmp_path("model-dirs-empty");
	char hex[2 * PR_BUILD_ID_MAX + 1], debug[700], cmd[1600];
	const struct {
		const char *model_dir, *sym_dir;
		bool found;
	} cases[] = {
		{ dir, NULL, true },
		{ NULL, dir, true },
		{ other, dir, false },
	};

	self_build_id_hex(hex);
	snprintf(cmd, sizeof(cmd), "mkdir -p %s/.build-id/%.2s %s", dir, hex, other);
	ck_assert_int_eq(system(cmd), 0);
	snprintf(debug, sizeof(debug), "%s/.build-id/%.2s/%s.debug", dir, hex, hex + 2);
	if (!objcopy_self("--only-keep-debug", debug) || !objcopy_self("--strip-debug", path))
		return;
	for (size_t i = 0; i < PR_ARRAY_SIZE(cases); i++) {
		struct copy_run run;

		symbolize_copy(path, cases[i].model_dir, cases[i].sym_dir, NULL, &run);
		if (cases[i].found) {
			check_outer_funcs(&run.sym);
		} else {
			ck_assert_str_eq(run.sym.name, "ds_sym_outer");
			ck_assert_uint_eq(run.sym.nr, 0);
			ck_assert_msg(strstr(logtext, "symbolizer's debug directories are "
					      "ignored"), "%s", logtext);
		}
		copy_run_free(&run);
	}
}
END_TEST

/* ---- stripped ---- */

/* A debug file found by build-id must have the build-id: a file of
 * another build at that path is not read, and names come from .dynsym. */
START_TEST(a_debug_file_of_another_build_is_not_used)
{
	struct pr_model *m = self_model();
	const char *dirs[1];
	struct pr_symbolizer *s;
	struct pr_symbol sym;
	struct pr_frame f;
	char hex[2 * PR_BUILD_ID_MAX + 1], sub[600], file[700];
	size_t len = 0;
	unsigned char *other;

	f = outer_frame(m);
	self_build_id_hex(hex);
	/* Another ELF file with debug information: the libperfreader the
	 * test links, under this program's build-id. */
	snprintf(sub, sizeof(sub), "%s/.build-id/%.2s", tmp_path("wrong"), hex);
	snprintf(file, sizeof(file), "mkdir -p %s", sub);
	ck_assert_int_eq(system(file), 0);
	snprintf(file, sizeof(file), "%s/%s.debug", sub, hex + 2);
	other = slurp(getenv("DS_OTHER_ELF"), &len);
	write_file(file, other, len);
	free(other);
	dirs[0] = tmp_path("wrong");
	{
		PR_OPTS(pr_symbolizer_opts, o, .debug_dirs = dirs, .nr_debug_dirs = 1,
			.live = true, .log = keep_log);

		s = pr_symbolizer_new(m, &o);
	}
	ck_assert_ptr_nonnull(s);
	ck_assert_int_eq(pr_symbolizer_symbolize(s, (uint32_t)getpid(), &f, &sym), 0);
	/* -rdynamic put it in .dynsym; nothing else names it. */
	ck_assert_str_eq(sym.name, "ds_sym_outer");
	ck_assert_uint_eq(sym.nr, 0);
	pr_symbolizer_free(s);
	pr_model_free(m);
}
END_TEST

/* With a cache directory, the compressed debug file is kept inflated by
 * build-id and read from there the next time, with the same answers. */
START_TEST(a_compressed_debug_file_is_kept_inflated)
{
	struct pr_model *m = self_model();
	const char *cache = tmp_path("debug-cache");
	const char *dirs[1] = { debug_dir() };
	struct pr_frame f;
	char hex[2 * PR_BUILD_ID_MAX + 1], path[700];
	struct stat st;

	ck_assert_int_eq(mkdir(cache, 0755), 0);
	self_build_id_hex(hex);
	snprintf(path, sizeof(path), "%s/debug/%s.debug", cache, hex);
	f = outer_frame(m);
	for (int round = 0; round < 2; round++) {
		PR_OPTS(pr_symbolizer_opts, o, .debug_dirs = dirs, .nr_debug_dirs = dirs[0] ? 1 : 0,
			.live = true, .cache_dir = cache, .log = keep_log);
		struct pr_symbolizer *s = pr_symbolizer_new(m, &o);
		struct pr_symbol sym;

		ck_assert_ptr_nonnull(s);
		ck_assert_int_eq(pr_symbolizer_symbolize(s, (uint32_t)getpid(), &f, &sym), 0);
		check_outer_funcs(&sym);
		pr_symbolizer_free(s);
		ck_assert_int_eq(stat(path, &st), 0);
	}
	check_plain_dwarf(path);
	pr_model_free(m);
}
END_TEST

TCase *symbolize_debug_tests(void)
{
	TCase *tc = tcase_create("debug");

	tcase_set_timeout(tc, 60);
	if (!getenv("DS_STRIPPED")) {
		tcase_add_test(tc, zstd_compressed_dwarf_is_read);
		tcase_add_test(tc, a_debug_file_compressed_with_zstd_is_read);
		tcase_add_test(tc, a_zstd_section_whose_size_lies_is_not_believed);
		tcase_add_test(tc, debug_directories_are_the_models);
	}
	if (getenv("DS_STRIPPED") && debug_dir()) {
		tcase_add_test(tc, a_debug_file_of_another_build_is_not_used);
		tcase_add_test(tc, a_compressed_debug_file_is_kept_inflated);
	}
	return tc;
}
