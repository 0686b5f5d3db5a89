/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The symbolizer on this program's own code, whose names and lines are
 * known here: functions inlined into each other (always_inline, -O2 -g),
 * C++ in a namespace and a class template (sym-cxx.cc); then the kernel
 * from kallsyms files written here, JIT code from perf maps written here,
 * and files damaged on purpose.
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

#define NOINLINE __attribute__((noinline, noclone))
#define INLINE static inline __attribute__((always_inline))

void *volatile ds_sym_ret;
static volatile int sink;

NOINLINE void ds_sym_leaf(void)
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

NOINLINE void ds_sym_outer(int x);
NOINLINE void ds_sym_outer(int x)
{
	ds_sym_middle(x);
	sink = x;
}
enum { OUTER_LINE = __LINE__ - 3 };

static char logtext[16384];

static void keep_log(enum pr_log_level level, const char *msg, void *ctx)
{
	(void)level;
	(void)ctx;
	snprintf(logtext + strlen(logtext), sizeof(logtext) - strlen(logtext), "%s\n", msg);
}

/* Made by main(), before the tests fork, and removed after them. */
static char tmpdir[] = "/tmp/ds-symbolize-XXXXXX";

static const char *tmp_path(const char *name)
{
	static char path[8][512];
	static int next;
	char *p = path[next++ % 8];

	snprintf(p, sizeof(path[0]), "%s/%s", tmpdir, name);
	return p;
}

static void write_file(const char *path, const void *buf, size_t len)
{
	FILE *f = fopen(path, "w");

	ck_assert_ptr_nonnull(f);
	ck_assert_uint_eq(fwrite(buf, 1, len, f), len);
	ck_assert_int_eq(fclose(f), 0);
}

static void write_text(const char *path, const char *text)
{
	write_file(path, text, strlen(text));
}

static int apply_cb(const struct pr_record *rec, void *arg)
{
	return pr_model_apply(arg, rec);
}

/* A model of this process, from /proc/self/maps. */
static struct pr_model *self_model(void)
{
	struct perf_event_attr attr;
	struct pr_model *m = pr_model_new();

	ck_assert_ptr_nonnull(m);
	ck_assert_int_eq(pr_event_attr(NULL, PR_SOURCE_CPU_CLOCK, PR_ATTR_SHARED_RING, &attr), 0);
	ck_assert_int_eq(pr_process_synthesize(getpid(), &attr, 0, apply_cb, m), 0);
	return m;
}

static const char *debug_dir(void)
{
	const char *d = getenv("DS_DEBUG_DIR");

	return d && *d ? d : NULL;
}

static struct pr_symbolizer *symbolizer(struct pr_model *m, bool no_demangle)
{
	const char *dirs[1] = { debug_dir() };
	PR_OPTS(pr_symbolizer_opts, o, .live = true, .debug_dirs = dirs,
		.nr_debug_dirs = dirs[0] ? 1 : 0, .no_demangle = no_demangle, .log = keep_log);
	struct pr_symbolizer *s = pr_symbolizer_new(m, &o);

	ck_assert_ptr_nonnull(s);
	return s;
}

/* The frame of a caller whose call returns to `ret`, as the unwinder
 * makes it: the return address minus one, placed in its mapping. */
static struct pr_frame caller_frame(struct pr_model *m, uint32_t pid, uint64_t ret)
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

static void check_func(const struct pr_sym_func *f, const char *name, int line, bool inlined)
{
	ck_assert_ptr_nonnull(f->name);
	ck_assert_str_eq(f->name, name);
	ck_assert_msg(ends_with(f->file, "/tests/test-symbolize.c"), "%s: file %s", name,
		      f->file ? f->file : "(none)");
	ck_assert_int_eq(f->line, line);
	ck_assert_int_eq(f->inlined, inlined);
}

START_TEST(inlined_functions_come_innermost_first_with_their_lines)
{
	struct pr_model *m = self_model();
	struct pr_symbolizer *s = symbolizer(m, false);
	struct pr_frame f;
	struct pr_symbol sym, again;
	struct pr_symbolizer_stats st = { .sz = sizeof(st) };

	ds_sym_outer(1);
	f = caller_frame(m, (uint32_t)getpid(), (uint64_t)(uintptr_t)ds_sym_ret);
	ck_assert_int_eq(pr_symbolizer_symbolize(s, (uint32_t)getpid(), &f, &sym), 0);
	/* The ELF symbol, and the offset in it, as perf shows them. */
	ck_assert_str_eq(sym.name, "ds_sym_outer");
	ck_assert_uint_eq(sym.offset, f.ip - (uint64_t)(uintptr_t)ds_sym_outer);
	ck_assert_int_eq(sym.source, PR_SYM_SYMTAB);
	/* test-symbolize, or one of its variants (meson.build). */
	ck_assert_msg(strstr(sym.module, "/test-symbolize"), "%s", sym.module);
	/* The call in ds_sym_inner, inlined into ds_sym_middle, inlined
	 * into ds_sym_outer: each with the line that led inward. */
	ck_assert_uint_eq(sym.nr, 3);
	check_func(&sym.funcs[0], "ds_sym_inner", INNER_LINE, true);
	check_func(&sym.funcs[1], "ds_sym_middle", MIDDLE_LINE, true);
	check_func(&sym.funcs[2], "ds_sym_outer", OUTER_LINE, false);

	/* Once resolved, the same answer from the cache. */
	ck_assert_int_eq(pr_symbolizer_symbolize(s, (uint32_t)getpid(), &f, &again), 0);
	ck_assert_ptr_eq(again.name, sym.name);
	ck_assert_ptr_eq(again.funcs, sym.funcs);
	ck_assert_int_eq(pr_symbolizer_stats(s, &st), 0);
	ck_assert_uint_eq(st.lookups, 2);
	ck_assert_uint_eq(st.resolved, 1);
	ck_assert_uint_eq(st.named, 1);
	ck_assert_uint_eq(st.debug_files, 1);
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
	struct pr_model *self = self_model(), *other = pr_model_new();
	struct pr_symbolizer *s;
	const struct pr_map *map;
	struct pr_record r;
	struct pr_frame f;
	struct pr_symbol sym;

	ds_sym_outer(1);
	f = caller_frame(self, (uint32_t)getpid(), (uint64_t)(uintptr_t)ds_sym_ret);
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

START_TEST(cxx_names_are_demangled_without_parameters)
{
	struct pr_model *m = self_model();
	struct pr_symbolizer *s = symbolizer(m, false), *raw = symbolizer(m, true);
	struct pr_frame f;
	struct pr_symbol sym;

	ds_sym_cxx(2);
	f = caller_frame(m, (uint32_t)getpid(), (uint64_t)(uintptr_t)ds_sym_ret);
	ck_assert_int_eq(pr_symbolizer_symbolize(s, (uint32_t)getpid(), &f, &sym), 0);
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
	pr_symbolizer_free(s);
	pr_model_free(m);
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
	struct pr_model *m = self_model();
	struct pr_symbolizer *s = symbolizer(m, false);
	struct pr_frame f;
	struct pr_symbol sym;

	ds_sym_cxx_anon(2);
	f = caller_frame(m, (uint32_t)getpid(), (uint64_t)(uintptr_t)ds_sym_ret);
	ck_assert_int_eq(pr_symbolizer_symbolize(s, (uint32_t)getpid(), &f, &sym), 0);
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
	pr_symbolizer_free(s);
	pr_model_free(m);
}
END_TEST

/* ---- the kernel, from kallsyms files written here ---- */

#define KTEXT 0xffffffff81000000ull

/* A model that saw the kernel's text at `text`, as perf record writes it. */
static struct pr_model *kernel_model(uint64_t text)
{
	struct pr_model *m = pr_model_new();
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

/* ---- JIT code: perf maps written here ---- */

START_TEST(perf_maps_name_jit_code_and_skip_garbage)
{
	uint32_t pid = (uint32_t)getpid();
	struct pr_model *m = pr_model_new();
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

/* ---- damaged files ---- */

static unsigned char *slurp(const char *path, size_t *len)
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
static bool find_section(const unsigned char *buf, size_t len, const char *want,
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
	ds_sym_outer(1);
	f = caller_frame(self, (uint32_t)getpid(), (uint64_t)(uintptr_t)ds_sym_ret);
	map = pr__model_find(self, (uint32_t)getpid(), f.ip);
	for (int variant = 0; variant < 14; variant++) {
		const char *path = tmp_path("damaged");
		struct pr_model *m = pr_model_new();
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

/* ---- DWARF compressed with zstd ---- */

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
 * `dir` (or nowhere) and kept inflated in `cache` (or not at all).
 */
static void symbolize_copy(const char *path, const char *dir, const char *cache,
			   struct copy_run *run)
{
	struct pr_model *self = self_model();
	const uint32_t pid = 4000002;
	const char *dirs[1] = { dir };
	const struct pr_map *map;
	struct pr_record r;
	struct pr_frame f;
	PR_OPTS(pr_symbolizer_opts, o, .debug_dirs = dirs, .nr_debug_dirs = dir ? 1 : 0,
		.cache_dir = cache, .log = keep_log);

	ds_sym_outer(1);
	f = caller_frame(self, (uint32_t)getpid(), (uint64_t)(uintptr_t)ds_sym_ret);
	map = pr__model_find(self, (uint32_t)getpid(), f.ip);
	r = mmap2(pid, map->start, map->end - map->start, map->pgoff, path);
	run->m = pr_model_new();
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

/* The frame in ds_sym_outer named with its inlined functions and lines,
 * and nothing said about zstd. */
static void check_outer_chain(const struct pr_symbol *sym)
{
	ck_assert_str_eq(sym->name, "ds_sym_outer");
	ck_assert_msg(sym->nr == 3, "%zu functions; log:\n%s", sym->nr, logtext);
	check_func(&sym->funcs[0], "ds_sym_inner", INNER_LINE, true);
	check_func(&sym->funcs[1], "ds_sym_middle", MIDDLE_LINE, true);
	check_func(&sym->funcs[2], "ds_sym_outer", OUTER_LINE, false);
	ck_assert_msg(!strstr(logtext, "zstd"), "%s", logtext);
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
	symbolize_copy(path, NULL, NULL, &run);
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
	char hex[41], debug[700], cmd[1600];
	uint8_t id[PR_BUILD_ID_MAX];
	size_t len = 0;

	ck_assert_int_eq(pr__build_id_path("/proc/self/exe", id, &len), 0);
	pr__hex(hex, id, len);
	snprintf(cmd, sizeof(cmd), "mkdir -p %s/.build-id/%.2s %s", dir, hex, cache);
	ck_assert_int_eq(system(cmd), 0);
	snprintf(debug, sizeof(debug), "%s/.build-id/%.2s/%s.debug", dir, hex, hex + 2);
	if (!objcopy_self("--only-keep-debug --compress-debug-sections=zstd", debug) ||
	    !objcopy_self("--strip-debug", path))
		return;
	zstd_debug_info(debug);
	for (int round = 0; round < 2; round++) {
		struct copy_run run;

		symbolize_copy(path, dir, round ? cache : NULL, &run);
		check_outer_chain(&run.sym);
		copy_run_free(&run);
	}
	/* Kept inflated: .debug_info there is plain DWARF (version 2 to 5). */
	{
		unsigned char *buf;
		uint64_t off, size;

		snprintf(debug, sizeof(debug), "%s/debug/%s.debug", cache, hex);
		buf = slurp(debug, &len);
		ck_assert(find_section(buf, len, ".debug_info", &off, &size));
		ck_assert_int_ge(buf[off + 4], 2);
		ck_assert_int_le(buf[off + 4], 5);
		free(buf);
	}
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
		symbolize_copy(bad, NULL, NULL, &run);
		ck_assert_str_eq(run.sym.name, "ds_sym_outer");
		ck_assert_msg(strstr(logtext, "compressed with zstd not inflated: ") &&
			      strstr(logtext, lies[i] == 1 ? strerror(EINVAL) : strerror(EFBIG)),
			      "%s", logtext);
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
	char hex[41], sub[600], file[700];
	size_t len = 0;
	uint8_t id[PR_BUILD_ID_MAX];
	unsigned char *other;

	ds_sym_outer(1);
	f = caller_frame(m, (uint32_t)getpid(), (uint64_t)(uintptr_t)ds_sym_ret);
	ck_assert_int_eq(pr__build_id_path("/proc/self/exe", id, &len), 0);
	pr__hex(hex, id, len);
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
	char hex[41], path[700];
	uint8_t id[PR_BUILD_ID_MAX];
	size_t len = 0;
	struct stat st;
	unsigned char *buf;
	uint64_t off, size;

	ck_assert_int_eq(mkdir(cache, 0755), 0);
	ck_assert_int_eq(pr__build_id_path("/proc/self/exe", id, &len), 0);
	pr__hex(hex, id, len);
	snprintf(path, sizeof(path), "%s/debug/%s.debug", cache, hex);
	ds_sym_outer(1);
	f = caller_frame(m, (uint32_t)getpid(), (uint64_t)(uintptr_t)ds_sym_ret);
	for (int round = 0; round < 2; round++) {
		PR_OPTS(pr_symbolizer_opts, o, .debug_dirs = dirs, .nr_debug_dirs = dirs[0] ? 1 : 0,
			.live = true, .cache_dir = cache, .log = keep_log);
		struct pr_symbolizer *s = pr_symbolizer_new(m, &o);
		struct pr_symbol sym;

		ck_assert_ptr_nonnull(s);
		ck_assert_int_eq(pr_symbolizer_symbolize(s, (uint32_t)getpid(), &f, &sym), 0);
		ck_assert_str_eq(sym.name, "ds_sym_outer");
		ck_assert_uint_eq(sym.nr, 3);
		check_func(&sym.funcs[0], "ds_sym_inner", INNER_LINE, true);
		pr_symbolizer_free(s);
		ck_assert_int_eq(stat(path, &st), 0);
	}
	/* Inflated: .debug_info there is plain DWARF (version 2 to 5). */
	buf = slurp(path, &len);
	ck_assert(find_section(buf, len, ".debug_info", &off, &size));
	ck_assert_int_ge(buf[off + 4], 2);
	ck_assert_int_le(buf[off + 4], 5);
	free(buf);
	pr_model_free(m);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("symbolize");
	TCase *tc = tcase_create("symbolize");
	char cmd[600];
	int ret;

	if (!mkdtemp(tmpdir)) {
		perror("mkdtemp");
		return EXIT_FAILURE;
	}
	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, inlined_functions_come_innermost_first_with_their_lines);
	tcase_add_test(tc, a_live_file_is_opened_through_the_mapping_its_frame_carries);
	tcase_add_test(tc, cxx_names_are_demangled_without_parameters);
	tcase_add_test(tc, cxx_functions_without_linkage_names_are_named_by_their_scopes);
	tcase_add_test(tc, kernel_frames_are_named_with_their_modules_where_the_kernel_was);
	tcase_add_test(tc, hidden_kernel_addresses_are_said_once_and_left_unnamed);
	tcase_add_test(tc, another_kernels_capture_keeps_kernel_addresses);
	tcase_add_test(tc, the_running_kernels_symbols_are_cached);
	tcase_add_test(tc, perf_maps_name_jit_code_and_skip_garbage);
	tcase_add_test(tc, damaged_files_fall_back_to_what_survives);
	if (getenv("DS_IMAGE_BASE"))
		tcase_add_test(tc, the_image_base_build_is_a_pie_whose_first_segment_is_there);
	if (!getenv("DS_STRIPPED")) {
		tcase_add_test(tc, zstd_compressed_dwarf_is_read);
		tcase_add_test(tc, a_debug_file_compressed_with_zstd_is_read);
		tcase_add_test(tc, a_zstd_section_whose_size_lies_is_not_believed);
	}
	if (getenv("DS_STRIPPED") && debug_dir()) {
		tcase_add_test(tc, a_debug_file_of_another_build_is_not_used);
		tcase_add_test(tc, a_compressed_debug_file_is_kept_inflated);
	}
	suite_add_tcase(s, tc);
	ret = run_suite(s);
	snprintf(cmd, sizeof(cmd), "rm -rf %s", tmpdir);
	if (system(cmd))
		fprintf(stderr, "could not remove %s\n", tmpdir);
	return ret;
}
