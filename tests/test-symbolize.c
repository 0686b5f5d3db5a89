/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The symbolizer on this program's own code, whose names and lines are
 * known here: functions inlined into each other (always_inline, -O2 -g),
 * C++ in a namespace and a class template (sym-cxx.cc); then the kernel
 * from kallsyms files written here (test-symbolize-kernel.c), JIT code
 * from perf maps written here (test-symbolize-jit.c), files damaged on
 * purpose (test-symbolize-elf.c) and debug files (test-symbolize-debug.c):
 * one executable, whose own code every part names.
 *
 * The same executable also runs stripped (meson.build, run-stripped.sh),
 * with its symbols and DWARF only in a separate, compressed debug file:
 * found by build-id under DS_DEBUG_DIR, by .gnu_debuglink, or fetched from
 * a debuginfod server.  Every expectation is the same there, which is the
 * point; DS_STRIPPED=1 adds what only a stripped binary can show.
 */
#include <check.h>
#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "checkmain.h"
#include "model/model.h"
#include "mkrecord.h"
#include "prsym.h"
#include "sym-test.h"
#include "symbolize.h"

#define INLINE static inline __attribute__((always_inline))

void *volatile ds_sym_ret;
static volatile int sink;

__attribute__((noinline, noclone)) void ds_sym_leaf(void)
{
	ds_sym_ret = __builtin_return_address(0);
	__asm__ volatile("" ::: "memory");
}

/* The lines of the calls below; the enums count from the line they are on. */
INLINE void ds_sym_inner(int x)
{
	if (x)
		ds_sym_leaf();
	sink = x;
}
enum { INNER_LINE = __LINE__ - 3 };

INLINE void ds_sym_middle(int x)
{
	ds_sym_inner(x + 1);
	sink = x;
}
enum { MIDDLE_LINE = __LINE__ - 3 };

__attribute__((noinline, noclone)) void ds_sym_outer(int x)
{
	ds_sym_middle(x);
	sink = x;
}
enum { OUTER_LINE = __LINE__ - 3 };

/* Two calls inlined to different depths in one function: the first
 * returns to ds_sym_ret_deep, the second to ds_sym_ret. */
void *volatile ds_sym_ret_deep;

void ds_sym_two(int x);
__attribute__((noinline, noclone)) void ds_sym_two(int x)
{
	ds_sym_middle(x);
	ds_sym_ret_deep = ds_sym_ret;
	ds_sym_inner(x);
	sink = x;
}
enum { TWO_DEEP_LINE = __LINE__ - 5, TWO_LINE = __LINE__ - 3 };

char logtext[16384];

void keep_log(enum pr_log_level level, const char *msg, void *ctx)
{
	(void)level;
	(void)ctx;
	snprintf(logtext + strlen(logtext), sizeof(logtext) - strlen(logtext), "%s\n", msg);
}

/* Made by main(), before the tests fork, and removed after them. */
char tmpdir[] = "/tmp/ds-symbolize-XXXXXX";

const char *tmp_path(const char *name)
{
	static char path[8][512];
	static int next;
	char *p = path[next++ % 8];

	snprintf(p, sizeof(path[0]), "%s/%s", tmpdir, name);
	return p;
}

void write_file(const char *path, const void *buf, size_t len)
{
	FILE *f = fopen(path, "w");

	ck_assert_ptr_nonnull(f);
	ck_assert_uint_eq(fwrite(buf, 1, len, f), len);
	ck_assert_int_eq(fclose(f), 0);
}

void write_text(const char *path, const char *text)
{
	write_file(path, text, strlen(text));
}

const char *debug_dir(void)
{
	const char *d = getenv("DS_DEBUG_DIR");

	return d && *d ? d : NULL;
}

/* A live symbolizer of `m`, sharing `pool` (may be NULL). */
static struct pr_symbolizer *pooled_symbolizer(struct pr_model *m, bool no_demangle,
					       struct pr_sym_pool *pool)
{
	const char *dirs[1] = { debug_dir() };
	PR_OPTS(pr_symbolizer_opts, o, .live = true, .debug_dirs = dirs,
		.nr_debug_dirs = dirs[0] ? 1 : 0, .no_demangle = no_demangle, .log = keep_log,
		.pool = pool);
	struct pr_symbolizer *s = pr_symbolizer_new(m, &o);

	ck_assert_ptr_nonnull(s);
	return s;
}

struct pr_symbolizer *symbolizer(struct pr_model *m, bool no_demangle)
{
	return pooled_symbolizer(m, no_demangle, NULL);
}

struct self_sym self_sym_new(void)
{
	struct self_sym me = { .m = self_model() };

	me.s = symbolizer(me.m, false);
	ck_assert_ptr_nonnull(me.s);
	return me;
}

void self_sym_free(struct self_sym *me)
{
	pr_symbolizer_free(me->s);
	pr_model_free(me->m);
}

/* The frame of a caller whose call returns to `ret`, as the unwinder
 * makes it: the return address minus one, placed in its mapping. */
struct pr_frame caller_frame(struct pr_model *m, uint32_t pid, uint64_t ret)
{
	const struct pr_map *map = pr__model_find(m, pid, ret - 1);

	ck_assert_ptr_nonnull(map);
	return (struct pr_frame){ .ip = ret - 1, .dso = map->dso,
				  .dso_ip = ret - 1 - map->start + map->pgoff,
				  .map_start = map->start, .map_end = map->end,
				  .map_pgoff = map->pgoff };
}

static bool ends_with(const char *s, const char *tail)
{
	size_t n = s ? strlen(s) : 0, t = strlen(tail);

	return n >= t && !strcmp(s + n - t, tail);
}

void check_func(const struct pr_sym_func *f, const char *name, int line, bool inlined)
{
	ck_assert_ptr_nonnull(f->name);
	ck_assert_str_eq(f->name, name);
	ck_assert_msg(ends_with(f->file, "/tests/test-symbolize.c"), "%s: file %s", name,
		      f->file ? f->file : "(none)");
	ck_assert_int_eq(f->line, line);
	ck_assert_int_eq(f->inlined, inlined);
}


unsigned char *slurp(const char *path, size_t *len)
{
	int fd = open(path, O_RDONLY);
	struct stat st;
	unsigned char *buf;

	ck_assert_int_ge(fd, 0);
	ck_assert_int_eq(fstat(fd, &st), 0);
	buf = malloc((size_t)st.st_size);
	ck_assert_ptr_nonnull(buf);
	ck_assert_int_eq(read(fd, buf, (size_t)st.st_size), st.st_size);
	close(fd);
	*len = (size_t)st.st_size;
	return buf;
}

/* A section's place in an ELF image, by name. */
bool find_section(const unsigned char *buf, size_t len, const char *want,
			 uint64_t *off, uint64_t *size)
{
	const Elf64_Ehdr *eh = (const void *)buf;
	const Elf64_Shdr *sh = (const void *)(buf + eh->e_shoff), *strs;

	if (eh->e_shoff + (uint64_t)eh->e_shnum * sizeof(*sh) > len || eh->e_shstrndx >= eh->e_shnum)
		return false;
	strs = &sh[eh->e_shstrndx];
	for (int i = 0; i < eh->e_shnum; i++)
		if (!strcmp((const char *)buf + strs->sh_offset + sh[i].sh_name, want) &&
		    sh[i].sh_type != SHT_NOBITS) {
			*off = sh[i].sh_offset;
			*size = sh[i].sh_size;
			return true;
		}
	return false;
}


void check_outer_funcs(const struct pr_symbol *sym)
{
	ck_assert_str_eq(sym->name, "ds_sym_outer");
	ck_assert_msg(sym->nr == 3, "%zu functions; log:\n%s", sym->nr, logtext);
	check_func(&sym->funcs[0], "ds_sym_inner", INNER_LINE, true);
	check_func(&sym->funcs[1], "ds_sym_middle", MIDDLE_LINE, true);
	check_func(&sym->funcs[2], "ds_sym_outer", OUTER_LINE, false);
}

struct pr_frame outer_frame(struct pr_model *m)
{
	ds_sym_outer(1);
	return caller_frame(m, (uint32_t)getpid(), (uint64_t)(uintptr_t)ds_sym_ret);
}

void self_build_id_hex(char hex[2 * PR_BUILD_ID_MAX + 1])
{
	uint8_t id[PR_BUILD_ID_MAX];
	size_t len = 0;

	ck_assert_int_eq(pr__build_id_path("/proc/self/exe", id, &len), 0);
	pr__hex(hex, id, len);
}

void check_plain_dwarf(const char *path)
{
	size_t len;
	unsigned char *buf = slurp(path, &len);
	uint64_t off, size;

	ck_assert(find_section(buf, len, ".debug_info", &off, &size));
	ck_assert_int_ge(buf[off + 4], 2);
	ck_assert_int_le(buf[off + 4], 5);
	free(buf);
}

START_TEST(inlined_functions_come_innermost_first_with_their_lines)
{
	struct self_sym me = self_sym_new();
	struct pr_frame f;
	struct pr_symbol sym, again;
	struct pr_symbolizer_stats st = { .sz = sizeof(st) };

	f = outer_frame(me.m);
	ck_assert_int_eq(pr_symbolizer_symbolize(me.s, (uint32_t)getpid(), &f, &sym), 0);
	/* The ELF symbol, and the offset in it, as perf shows them. */
	ck_assert_str_eq(sym.name, "ds_sym_outer");
	ck_assert_uint_eq(sym.offset, f.ip - (uint64_t)(uintptr_t)ds_sym_outer);
	ck_assert_int_eq(sym.source, PR_SYM_SYMTAB);
	/* test-symbolize, or one of its variants (meson.build). */
	ck_assert_msg(strstr(sym.module, "/test-symbolize"), "%s", sym.module);
	/* The call in ds_sym_inner, inlined into ds_sym_middle, inlined
	 * into ds_sym_outer: each with the line that led inward. */
	check_outer_funcs(&sym);

	/* Once resolved, the same answer from the cache. */
	ck_assert_int_eq(pr_symbolizer_symbolize(me.s, (uint32_t)getpid(), &f, &again), 0);
	ck_assert_ptr_eq(again.name, sym.name);
	ck_assert_ptr_eq(again.funcs, sym.funcs);
	ck_assert_int_eq(pr_symbolizer_stats(me.s, &st), 0);
	ck_assert_uint_eq(st.lookups, 2);
	ck_assert_uint_eq(st.resolved, 1);
	ck_assert_uint_eq(st.named, 1);
	ck_assert_uint_eq(st.debug_files, 1);
	self_sym_free(&me);
}
END_TEST

/*
 * One function's inlined calls are indexed once, when an address first
 * falls in it: a second address there, its calls inlined to another
 * depth, is named from the same index, each with its own chain.
 */
START_TEST(two_addresses_in_one_function_have_their_own_inlined_chains)
{
	struct self_sym me = self_sym_new();
	struct pr_frame deep, shallow;
	struct pr_symbol sym;

	ds_sym_two(1);
	deep = caller_frame(me.m, (uint32_t)getpid(), (uint64_t)(uintptr_t)ds_sym_ret_deep);
	shallow = caller_frame(me.m, (uint32_t)getpid(), (uint64_t)(uintptr_t)ds_sym_ret);
	ck_assert_uint_ne(deep.ip, shallow.ip);
	for (int pass = 0; pass < 2; pass++) {
		ck_assert_int_eq(pr_symbolizer_symbolize(me.s, (uint32_t)getpid(), &deep, &sym), 0);
		ck_assert_msg(sym.nr == 3, "%zu functions; log:\n%s", sym.nr, logtext);
		check_func(&sym.funcs[0], "ds_sym_inner", INNER_LINE, true);
		check_func(&sym.funcs[1], "ds_sym_middle", MIDDLE_LINE, true);
		check_func(&sym.funcs[2], "ds_sym_two", TWO_DEEP_LINE, false);
		ck_assert_int_eq(pr_symbolizer_symbolize(me.s, (uint32_t)getpid(), &shallow, &sym), 0);
		ck_assert_msg(sym.nr == 2, "%zu functions; log:\n%s", sym.nr, logtext);
		check_func(&sym.funcs[0], "ds_sym_inner", INNER_LINE, true);
		check_func(&sym.funcs[1], "ds_sym_two", TWO_LINE, false);
	}
	self_sym_free(&me);
}
END_TEST

/*
 * Without lines (pr_symbolizer_opts.no_lines: the folded and SVG
 * writers' symbolizer), the same functions, inlined ones too, and no
 * files or lines.
 */
START_TEST(without_lines_the_same_functions_are_named_with_no_files)
{
	struct pr_model *m = self_model();
	const char *dirs[1] = { debug_dir() };
	PR_OPTS(pr_symbolizer_opts, o, .live = true, .debug_dirs = dirs,
		.nr_debug_dirs = dirs[0] ? 1 : 0, .log = keep_log, .no_lines = true);
	struct pr_symbolizer *s = pr_symbolizer_new(m, &o);
	static const char *const names[] = { "ds_sym_inner", "ds_sym_middle", "ds_sym_outer" };
	struct pr_frame f;
	struct pr_symbol sym;

	ck_assert_ptr_nonnull(s);
	f = outer_frame(m);
	ck_assert_int_eq(pr_symbolizer_symbolize(s, (uint32_t)getpid(), &f, &sym), 0);
	ck_assert_str_eq(sym.name, "ds_sym_outer");
	ck_assert_msg(sym.nr == 3, "%zu functions; log:\n%s", sym.nr, logtext);
	for (size_t i = 0; i < 3; i++) {
		ck_assert_str_eq(sym.funcs[i].name, names[i]);
		ck_assert_int_eq(sym.funcs[i].inlined, i < 2);
		ck_assert_ptr_null(sym.funcs[i].file);
		ck_assert_uint_eq(sym.funcs[i].line, 0);
	}
	pr_symbolizer_free(s);
	pr_model_free(m);
}
END_TEST

/*
 * The symbolizer opens a live process's file through the mapping the
 * frame carries (/proc/PID/map_files), not by looking the process up in
 * the model: here the model knows no such process, and the path the
 * mapping names does not exist.
 */
START_TEST(a_live_file_is_opened_through_the_mapping_its_frame_carries)
{
	struct pr_model *self = self_model(), *other = pr_model_new(NULL);
	struct pr_symbolizer *s;
	const struct pr_map *map;
	struct pr_record r;
	struct pr_frame f;
	struct pr_symbol sym;

	f = outer_frame(self);
	ck_assert_ptr_nonnull(other);
	r = mmap2(7, f.map_start, f.map_end - f.map_start, f.map_pgoff, "/gone/test-symbolize");
	ck_assert_int_eq(pr_model_apply(other, &r), 0);
	map = pr__model_find(other, 7, f.ip);
	ck_assert_ptr_nonnull(map);
	ck_assert_ptr_null(pr__model_find(other, (uint32_t)getpid(), f.ip));
	f.dso = map->dso;
	s = symbolizer(other, false);
	ck_assert_int_eq(pr_symbolizer_symbolize(s, (uint32_t)getpid(), &f, &sym), 0);
	ck_assert_ptr_nonnull(sym.name);
	ck_assert_str_eq(sym.name, "ds_sym_outer");
	ck_assert_str_eq(sym.module, "/gone/test-symbolize");
	pr_symbolizer_free(s);
	pr_model_free(other);
	pr_model_free(self);
}
END_TEST

/*
 * Two workers' symbolizers over their own models of one process, sharing
 * a pool: an address one named is not named again by the other, which
 * gives the same answer without opening the file; a file known by path
 * alone is not shared; and their models refuse a trim, which would free
 * what the other holds.
 */
START_TEST(symbolizers_sharing_a_pool_name_an_address_once)
{
	struct pr_model *m1 = self_model(), *m2 = self_model(), *m3 = pr_model_new(NULL);
	struct pr_sym_pool *pool = pr_sym_pool_new();
	struct pr_symbolizer *s1, *s2, *s3;
	struct pr_symbolizer_stats st1 = { .sz = sizeof(st1) }, st2 = { .sz = sizeof(st2) };
	struct pr_symbol sym1, sym2, again;
	struct pr_frame f1, f2, f3;
	PR_OPTS(pr_cache_opts, co, .max_bytes = 1);
	const struct pr_map *map;
	struct pr_record r;
	uint64_t hits, lookups;

	ck_assert_ptr_nonnull(pool);
	ck_assert_ptr_nonnull(m3);
	s1 = pooled_symbolizer(m1, false, pool);
	s2 = pooled_symbolizer(m2, false, pool);
	f1 = outer_frame(m1);
	f2 = outer_frame(m2);
	ck_assert_ptr_ne(f1.dso, f2.dso);
	ck_assert_int_eq(pr_symbolizer_symbolize(s1, (uint32_t)getpid(), &f1, &sym1), 0);
	check_outer_funcs(&sym1);
	ck_assert_int_eq(pr_symbolizer_symbolize(s2, (uint32_t)getpid(), &f2, &sym2), 0);
	check_outer_funcs(&sym2);
	/* s1's answer, the very same, and s2 opened nothing for it. */
	ck_assert_ptr_eq(sym2.funcs, sym1.funcs);
	ck_assert_int_eq(pr_sym_pool_stats(pool, &hits, &lookups), 0);
	ck_assert_uint_eq(lookups, 2);
	ck_assert_uint_eq(hits, 1);
	ck_assert_int_eq(pr_symbolizer_stats(s1, &st1), 0);
	ck_assert_int_eq(pr_symbolizer_stats(s2, &st2), 0);
	ck_assert_uint_eq(st1.resolved, 1);
	ck_assert_uint_eq(st2.resolved, 0);
	ck_assert_uint_eq(st2.files, 0);
	/* Asked again, s2 answers from its own table: the pool is not asked. */
	ck_assert_int_eq(pr_symbolizer_symbolize(s2, (uint32_t)getpid(), &f2, &again), 0);
	ck_assert_ptr_eq(again.funcs, sym1.funcs);
	ck_assert_int_eq(pr_sym_pool_stats(pool, &hits, &lookups), 0);
	ck_assert_uint_eq(lookups, 2);

	/* The same file under a path only (no inode, no build-id known):
	 * named by its own symbolizer, never looked up in the pool. */
	f3 = f1;
	r = mmap2(7, f3.map_start, f3.map_end - f3.map_start, f3.map_pgoff, "/gone/test-symbolize");
	ck_assert_int_eq(pr_model_apply(m3, &r), 0);
	map = pr__model_find(m3, 7, f3.ip);
	ck_assert_ptr_nonnull(map);
	f3.dso = map->dso;
	s3 = pooled_symbolizer(m3, false, pool);
	ck_assert_int_eq(pr_symbolizer_symbolize(s3, (uint32_t)getpid(), &f3, &again), 0);
	ck_assert_str_eq(again.name, "ds_sym_outer");
	ck_assert_ptr_ne(again.funcs, sym1.funcs);
	ck_assert_int_eq(pr_sym_pool_stats(pool, &hits, &lookups), 0);
	ck_assert_uint_eq(lookups, 2);

	/* s2 holds what s1's model keeps: that model cannot be trimmed; a
	 * model without a pooled symbolizer can. */
	ck_assert_int_eq(pr_model_set_cache(m1, &co), 0);
	ck_assert_int_eq(pr_model_trim(m1, UINT64_C(1000000000)), -EBUSY);
	ck_assert_int_eq(pr_symbolizer_symbolize(s1, (uint32_t)getpid(), &f1, &again), 0);
	ck_assert_ptr_eq(again.funcs, sym1.funcs);
	check_outer_funcs(&sym2);
	{
		struct pr_model *plain = self_model();
		struct pr_symbolizer *own = symbolizer(plain, false);

		ck_assert_int_eq(pr_model_set_cache(plain, &co), 0);
		ck_assert_int_eq(pr_model_trim(plain, UINT64_C(1000000000)), 0);
		pr_symbolizer_free(own);
		pr_model_free(plain);
	}

	pr_symbolizer_free(s3);
	pr_symbolizer_free(s2);
	pr_symbolizer_free(s1);
	pr_sym_pool_free(pool);
	pr_model_free(m3);
	pr_model_free(m2);
	pr_model_free(m1);
}
END_TEST

START_TEST(cxx_names_are_demangled_without_parameters)
{
	struct self_sym me = self_sym_new();
	struct pr_symbolizer *raw = symbolizer(me.m, true);
	struct pr_frame f;
	struct pr_symbol sym;

	ds_sym_cxx(2);
	f = caller_frame(me.m, (uint32_t)getpid(), (uint64_t)(uintptr_t)ds_sym_ret);
	ck_assert_int_eq(pr_symbolizer_symbolize(me.s, (uint32_t)getpid(), &f, &sym), 0);
	ck_assert_str_eq(sym.name, "ds::sym::Box<int>::twice");
	ck_assert_uint_eq(sym.nr, 2);
	ck_assert_str_eq(sym.funcs[0].name, "ds::sym::helper");
	ck_assert(sym.funcs[0].inlined);
	ck_assert_msg(ends_with(sym.funcs[0].file, "/tests/sym-cxx.cc"), "%s", sym.funcs[0].file);
	ck_assert_str_eq(sym.funcs[1].name, "ds::sym::Box<int>::twice");
	ck_assert(!sym.funcs[1].inlined);

	ck_assert_int_eq(pr_symbolizer_symbolize(raw, (uint32_t)getpid(), &f, &sym), 0);
	ck_assert_str_eq(sym.name, "_ZN2ds3sym3BoxIiE5twiceEi");
	ck_assert_str_eq(sym.funcs[0].name, "_ZN2ds3sym6helperEi");
	pr_symbolizer_free(raw);
	self_sym_free(&me);
}
END_TEST

/*
 * gcc writes no linkage names in an anonymous namespace: the functions
 * there, inlined or not, and a constructor (whose declaration has none
 * anywhere) are named by the scopes DWARF declares them in.  The function
 * the address is in has its symbol's name (DWARF spells template arguments
 * its own way), so that perf script's layout does not take it for an
 * inlined one.
 */
START_TEST(cxx_functions_without_linkage_names_are_named_by_their_scopes)
{
	struct self_sym me = self_sym_new();
	struct pr_frame f;
	struct pr_symbol sym;

	ds_sym_cxx_anon(2);
	f = caller_frame(me.m, (uint32_t)getpid(), (uint64_t)(uintptr_t)ds_sym_ret);
	ck_assert_int_eq(pr_symbolizer_symbolize(me.s, (uint32_t)getpid(), &f, &sym), 0);
	ck_assert_str_eq(sym.name, "ds::sym::(anonymous namespace)::level<std::__cxx11::"
		"basic_string<char, std::char_traits<char>, std::allocator<char> > >");
	ck_assert_uint_eq(sym.nr, 3);
	ck_assert_str_eq(sym.funcs[0].name, "ds::sym::(anonymous namespace)::Counter::Counter");
	ck_assert(sym.funcs[0].inlined);
	ck_assert_str_eq(sym.funcs[1].name, "ds::sym::(anonymous namespace)::quiet");
	ck_assert(sym.funcs[1].inlined);
	ck_assert_str_eq(sym.funcs[2].name, sym.name);
	ck_assert(!sym.funcs[2].inlined);
	for (size_t i = 0; i < sym.nr; i++)
		ck_assert_msg(ends_with(sym.funcs[i].file, "/tests/sym-cxx.cc"), "%s",
			      sym.funcs[i].file);
	self_sym_free(&me);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("symbolize");
	TCase *tc = tcase_create("own-code");
	char cmd[600];
	int ret;

	if (!mkdtemp(tmpdir)) {
		perror("mkdtemp");
		return EXIT_FAILURE;
	}
	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, inlined_functions_come_innermost_first_with_their_lines);
	tcase_add_test(tc, two_addresses_in_one_function_have_their_own_inlined_chains);
	tcase_add_test(tc, without_lines_the_same_functions_are_named_with_no_files);
	tcase_add_test(tc, a_live_file_is_opened_through_the_mapping_its_frame_carries);
	tcase_add_test(tc, symbolizers_sharing_a_pool_name_an_address_once);
	tcase_add_test(tc, cxx_names_are_demangled_without_parameters);
	tcase_add_test(tc, cxx_functions_without_linkage_names_are_named_by_their_scopes);
	suite_add_tcase(s, tc);
	suite_add_tcase(s, symbolize_kernel_tests());
	suite_add_tcase(s, symbolize_jit_tests());
	suite_add_tcase(s, symbolize_jitdump_tests());
	suite_add_tcase(s, symbolize_elf_tests());
	suite_add_tcase(s, symbolize_trim_tests());
	suite_add_tcase(s, symbolize_debug_tests());
	suite_add_tcase(s, symbolize_script_tests());
	ret = run_suite(s);
	snprintf(cmd, sizeof(cmd), "rm -rf %s", tmpdir);
	if (system(cmd))
		fprintf(stderr, "could not remove %s\n", tmpdir);
	return ret;
}
