/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The address index (src/symbols/symindex.c) against libdw's path
 * (pr__sym_dwarf_chain()), address by address: for every address of the
 * executable code of each file named (every byte, or every STEP-th), both
 * give the same functions, innermost first, inlined or not, the same
 * lines of the calls inlined, and the same innermost line (the index's
 * line table against libdw's, found as its path finds it).
 *
 * usage: test-symindex FILE[:STEP]... @FILE...  (meson passes gcc and
 * clang -O2 -g builds of C and C++ with inlining, and libperfreader.so
 * itself every third byte); a FILE without STEP is also compared in
 * damaged copies.  @FILE: a file without DWARF, named from its symbols.
 */
#include <check.h>
#include <dwarf.h>
#include <elf.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "checkmain.h"
#include "opened-files.h"
#include "symbols/symcache.h"
#include "symbols/symdwarf.h"
#include "symbols/symindex.h"

struct tally {
	size_t addrs, covered, inlined, differ, renamed;
	size_t only_index;           /* named by the index alone (damaged files) */
	size_t lines, lines_differ;  /* addresses with a line; with another one */
	size_t named;                /* frames with a symbol's name */
	size_t uncovered;            /* addresses a partial index does not answer */
};

static void say_chain(const char *what, const struct pr_sym_func *f, size_t nr)
{
	fprintf(stderr, "  %s:", what);
	for (size_t i = 0; i < nr; i++)
		fprintf(stderr, " %s%s (%s:%u)", f[i].name ? f[i].name : "(null)",
			f[i].inlined ? " [inl]" : "", f[i].file ? f[i].file : "-", f[i].line);
	fprintf(stderr, "\n");
}

/* Whether the two chains agree: all but the innermost entry's line,
 * which is the line table's. */
static bool same_chain(const struct pr_sym_func *a, size_t na, const struct pr_sym_func *b,
		       size_t nb)
{
	if (na != nb)
		return false;
	for (size_t i = 0; i < na; i++)
		if (!same_str(a[i].name, b[i].name) || a[i].inlined != b[i].inlined ||
		    (i && (!same_str(a[i].file, b[i].file) || a[i].line != b[i].line)))
			return false;
	return true;
}

/* The units of module `m`'s DWARF (compile units' DIE offsets, in order),
 * into *out: how many. */
static size_t units_of(struct sym_module *m, uint64_t **out)
{
	Dwarf_CU *cu = NULL, *next;
	Dwarf_Die cudie;
	Dwarf_Half version;
	uint8_t type;
	size_t nr = 0;

	*out = NULL;
	while (dwarf_get_units(m->dwarf, cu, &next, &version, &type, &cudie, NULL) == 0) {
		cu = next;
		if (type != DW_UT_compile && type != DW_UT_skeleton)
			continue;
		ck_assert_ptr_nonnull(*out = realloc(*out, (nr + 1) * sizeof(**out)));
		(*out)[nr++] = dwarf_dieoffset(&cudie);
	}
	return nr;
}

/* The tables of the index partial_index() made, which it does not own. */
static void *adopted[PR_IX_MAX_TABLES];
static size_t nr_adopted;

static void free_adopted(void)
{
	while (nr_adopted)
		free(adopted[--nr_adopted]);
}

/* Module `m`'s partial index of every other unit (the first, third ...),
 * read back from its tables as a file's are (pr__symindex_adopt()). */
static struct pr__symindex *partial_index(struct pr_symbolizer *s, struct sym_module *m)
{
	struct pr__ix_table t[PR_IX_MAX_TABLES];
	struct pr__symindex *built, *read;
	uint64_t *units, *some;
	size_t nr, k = 0, n;
	const uint64_t *got;
	const char *why = NULL;
	void *copy;

	if (!pr__sym_dwarf_open(s, m)) {
		errno = ENOENT;
		return NULL;
	}
	nr = units_of(m, &units);
	ck_assert_ptr_nonnull(some = malloc((nr + 1) * sizeof(*some)));
	for (size_t i = 0; i < nr; i += 2)
		some[k++] = units[i];
	ck_assert_ptr_nonnull(built = pr__symindex_build_units(s, m, some, k));
	ck_assert(pr__symindex_partial(built));
	/* The tables copied into one block, as a mapped file's are. */
	n = pr__symindex_tables(built, t);
	for (size_t i = 0; i < n; i++) {
		ck_assert_ptr_nonnull(copy = malloc(t[i].count * t[i].entry_size + 1));
		memcpy(copy, t[i].base, t[i].count * t[i].entry_size);
		t[i].base = copy;
	}
	for (size_t i = 0; i < n; i++)
		adopted[nr_adopted++] = (void *)t[i].base;
	read = pr__symindex_adopt(t, n, NULL, 0, false, &why);
	ck_assert_msg(read, "a partial index's tables refused: %s", why);
	ck_assert(pr__symindex_partial(read));
	ck_assert_uint_eq(pr__symindex_units(read, &got), k);
	ck_assert(!k || !memcmp(got, some, k * sizeof(*got)));
	pr__symindex_free(built);
	free(units);
	free(some);
	return read;
}

/* Every STEP-th address of `path`'s executable segments, both ways; in
 * symbols named `fake` (NULL: their own names).  `damaged`: an address
 * libdw's path names nothing at may have the index's name (counted in
 * only_index, not in differ). */
/* What compare_file()'s builds may hold of libdw's line tables (0: the
 * default), and how often they began reading them anew. */
static uint64_t side_max;
static uint64_t side_begun, side_again;

static struct tally compare_file(const char *path, uint64_t step, bool no_lines,
				 const char *fake, bool damaged, bool partial)
{
	struct pr_model *model = pr_model_new(NULL);
	struct pr_record r = mmap2(PID, MAP_AT, 1ull << 30, 0, path);
	struct pr_symbolizer_opts opts = { .sz = sizeof(opts), .no_lines = no_lines };
	struct pr_symbolizer *s;
	const struct pr_map *map;
	struct pr_frame f;
	struct sym_module *m;
	struct pr__symindex *ix;
	struct tally t = { 0 };

	ck_assert_ptr_nonnull(model);
	ck_assert_int_eq(pr_model_apply(model, &r), 0);
	ck_assert_ptr_nonnull(s = pr_symbolizer_new(model, &opts));
	ck_assert_ptr_nonnull(map = pr__model_find(model, PID, MAP_AT));
	f = (struct pr_frame){ .ip = MAP_AT, .dso = map->dso, .map_start = map->start,
			       .map_end = map->end };
	ck_assert_ptr_nonnull(m = pr__sym_module_of(s, PID, &f));
	ck_assert_msg(m->mod && m->elf, "%s: not opened", path);
	s->side_max_bytes = side_max;
	ix = partial ? partial_index(s, m) : pr__symindex_build(s, m);
	side_begun += s->side_begun;
	side_again += s->side_again;
	/* None only for a file libdw finds no DWARF in. */
	ck_assert_msg(ix || (errno == ENOENT && !m->has_dwarf), "%s: no index: %s", path,
		      strerror(errno));
	for (size_t i = 0; ix && i < m->elf->nr_seg; i++) {
		const struct pr_elf_segment *seg = &m->elf->seg[i];

		if (!(seg->flags & PF_X))
			continue;
		for (uint64_t a = seg->vaddr; a < seg->vaddr + seg->filesz; a += step) {
			struct pr_sym_func want[MAX_INLINE], got[MAX_INLINE];
			const struct pr_sym *sym = pr__symtab_find(&m->syms, a);
			const char *sym_name = !sym ? NULL : fake ? fake :
					       pr__sym_demangle(s, &m->arena, sym->name);
			/* In the fake symbols, every other address is in one
			 * starting elsewhere. */
			uint64_t start = !sym ? 0 : sym->start + (fake && (a & 1));
			size_t nw, ng;
			const char *file;
			uint32_t line;
			bool has;

			if (!pr__symindex_covers(ix, a - m->dwarf_bias)) {
				t.uncovered++;
				continue;
			}
			nw = pr__sym_dwarf_chain(s, m, a, sym_name, start, want);
			ng = pr__symindex_chain(ix, a - m->dwarf_bias, no_lines, sym_name,
						start - m->dwarf_bias, got);
			has = pr__symindex_line(ix, a - m->dwarf_bias, &file, &line);

			/* Built without lines, the index has no line table. */
			ck_assert(has == !no_lines);
			t.lines += want[0].line != 0;
			if (has && (!same_str(file, want[0].file) || line != want[0].line) &&
			    t.lines_differ++ < 10)
				fprintf(stderr, "%s: 0x%llx: line %s:%u, libdw's %s:%u\n", path,
					(unsigned long long)a, file ? file : "-", line,
					want[0].file ? want[0].file : "-", want[0].line);

			t.addrs++;
			t.covered += nw > 0;
			t.inlined += nw > 1;
			t.renamed += nw && fake && want[nw - 1].name == fake;
			if (same_chain(want, nw, got, ng))
				continue;
			if (damaged && !nw) {
				t.only_index++;
				continue;
			}
			if (t.differ++ < 10) {
				fprintf(stderr, "%s: 0x%llx differs\n", path, (unsigned long long)a);
				say_chain("libdw", want, nw);
				say_chain("index", got, ng);
			}
		}
	}
	fprintf(stderr, "%s: %zu addresses, %zu in functions, %zu in inlined calls, %zu differ; "
		"%zu with a line, %zu differ; %zu not covered; index %zu bytes\n", path, t.addrs,
		t.covered, t.inlined, t.differ, t.lines, t.lines_differ, t.uncovered,
		ix ? pr__symindex_bytes(ix) : 0);
	pr__symindex_free(ix);
	free_adopted();
	pr_symbolizer_free(s);
	pr_model_free(model);
	return t;
}

/* Whether file argument `i` is one without DWARF (@FILE). */
static bool symbols_only(int i)
{
	return files[i][0] == '@';
}

/* Every STEP-th address of `path`'s code named by a symbolizer on libdw's
 * lookups and one on the index (pr__symbolizer_use_index()), through the
 * API, as a report names frames. */
static struct tally compare_symbolizers(const char *path, uint64_t step, bool no_lines,
					bool dwarf)
{
	struct pr_model *model = pr_model_new(NULL);
	struct pr_record r = mmap2(PID, MAP_AT, 1ull << 30, 0, path);
	struct pr_symbolizer_opts opts = { .sz = sizeof(opts), .no_lines = no_lines };
	struct pr_symbolizer *dw, *ix;
	const struct pr_map *map;
	struct sym_module *m;
	struct pr_frame f;
	struct tally t = { 0 };

	ck_assert_ptr_nonnull(model);
	ck_assert_int_eq(pr_model_apply(model, &r), 0);
	ck_assert_ptr_nonnull(dw = pr_symbolizer_new(model, &opts));
	ck_assert_ptr_nonnull(ix = pr_symbolizer_new(model, &opts));
	/* Whatever the build's default (meson -Dsymindex). */
	pr__symbolizer_use_index(dw, false);
	pr__symbolizer_use_index(ix, true);
	ck_assert_ptr_nonnull(map = pr__model_find(model, PID, MAP_AT));
	f = (struct pr_frame){ .dso = map->dso, .map_start = map->start, .map_end = map->end };
	ck_assert_ptr_nonnull(m = pr__sym_module_of(dw, PID, &f));
	ck_assert_msg(m->mod && m->elf, "%s: not opened", path);
	for (size_t i = 0; i < m->elf->nr_seg; i++) {
		const struct pr_elf_segment *seg = &m->elf->seg[i];

		if (!(seg->flags & PF_X))
			continue;
		for (uint64_t off = seg->offset; off < seg->offset + seg->filesz; off += step) {
			struct pr_symbol want, got;

			f.dso_ip = off;
			f.ip = MAP_AT + off;
			ck_assert_int_eq(pr_symbolizer_symbolize(dw, PID, &f, &want), 0);
			ck_assert_int_eq(pr_symbolizer_symbolize(ix, PID, &f, &got), 0);
			t.addrs++;
			t.named += want.name != NULL;
			t.covered += want.nr > 0 && want.funcs[0].line;
			t.inlined += want.nr > 1;
			if (same_symbol(&want, &got))
				continue;
			if (t.differ++ < 10) {
				fprintf(stderr, "%s: offset 0x%llx named differently\n", path,
					(unsigned long long)off);
				say_chain("libdw", want.funcs, want.nr);
				say_chain("index", got.funcs, got.nr);
			}
		}
	}
	/* Named from the index, not from libdw behind its back. */
	ck_assert_ptr_nonnull(m = pr__sym_module_of(ix, PID, &f));
	ck_assert_msg(!dwarf || m->index, "%s: the symbolizer built no index", path);
	/* libdw only to build: the file's session is closed. */
	ck_assert_msg(!m->dwfl && !m->mod && !m->dwarf, "%s: libdwfl's session still open", path);
	fprintf(stderr, "%s, symbolizers: %zu addresses, %zu with a line, %zu in inlined calls, "
		"%zu differ\n", path, t.addrs, t.covered, t.inlined, t.differ);
	pr_symbolizer_free(ix);
	pr_symbolizer_free(dw);
	pr_model_free(model);
	return t;
}

/* Every file given, both ways; with `partial`, its index of every other
 * unit, where that covers. */
static void compare_all(bool no_lines, const char *fake, bool partial)
{
	size_t renamed = 0, inlined = 0, uncovered = 0;

	for (int i = 0; i < nr_files; i++) {
		uint64_t step;
		char *path;
		struct tally t;

		if (symbols_only(i))
			continue;
		path = file_arg(i, &step, NULL);
		t = compare_file(path, step, no_lines, fake, false, partial);

		renamed += t.renamed;
		inlined += t.inlined;
		uncovered += t.uncovered;
		/* The files hold functions (and but for the assembly,
		 * inlined calls): empty chains compared would prove nothing. */
		ck_assert_msg(t.covered > t.addrs / 4, "%s: %zu of %zu addresses in functions",
			      path, t.covered, t.addrs);
		ck_assert_msg(!t.differ, "%s: %zu of %zu addresses named differently", path,
			      t.differ, t.addrs);
		ck_assert_msg(!t.lines_differ, "%s: %zu of %zu addresses with another line", path,
			      t.lines_differ, t.addrs);
		/* Lines compared, not absences of them. */
		ck_assert_msg(no_lines || t.lines > t.addrs / 4, "%s: %zu of %zu addresses with a "
			      "line", path, t.lines, t.addrs);
		free(path);
	}
	ck_assert_msg(inlined, "no address in an inlined call");
	ck_assert_msg(!fake || renamed, "no function took the symbol's name");
	ck_assert_msg(!partial || uncovered, "every address covered: no unit left out");
}

/* Where section `want` of ELF image `buf` is; false when absent. */
static bool section_at(const unsigned char *buf, size_t len, const char *want, size_t *off,
		       size_t *size)
{
	const Elf64_Ehdr *eh = (const void *)buf;
	const Elf64_Shdr *sh;
	const char *names;

	if (len < sizeof(*eh) || eh->e_shoff + (uint64_t)eh->e_shnum * sizeof(*sh) > len ||
	    eh->e_shstrndx >= eh->e_shnum)
		return false;
	sh = (const void *)(buf + eh->e_shoff);
	names = (const char *)buf + sh[eh->e_shstrndx].sh_offset;
	for (size_t i = 0; i < eh->e_shnum; i++)
		if (!strcmp(names + sh[i].sh_name, want) && sh[i].sh_offset + sh[i].sh_size <= len) {
			*off = sh[i].sh_offset;
			*size = sh[i].sh_size;
			return true;
		}
	return false;
}

/*
 * The DWARF sections damaged, each its own way, in copies of the small
 * files (those named without a STEP): the index is built (or refused,
 * when libdw finds no DWARF left) without a fault -- the sanitizer build
 * runs this -- and names every address libdw's path names as it does.
 * Where libdw's path finds no unit (clang writes no .debug_aranges, and
 * the unit's own ranges are what is damaged), the index may still name
 * the address from its function's ranges: it reads every unit's
 * functions without asking which unit holds the address.
 */
START_TEST(a_damaged_files_index_is_built_or_refused_and_agrees_with_libdw)
{
	static const char *const sections[] = {
		".debug_info", ".debug_abbrev", ".debug_rnglists", ".debug_aranges",
		".debug_str", ".debug_line", ".debug_addr", ".debug_str_offsets",
	};
	char dir[] = "/tmp/test-symindex-XXXXXX", copy[64];
	size_t damaged = 0, differ = 0;

	ck_assert_ptr_nonnull(mkdtemp(dir));
	snprintf(copy, sizeof(copy), "%s/damaged.so", dir);
	for (int i = 0; i < nr_files; i++) {
		FILE *in = strchr(files[i], ':') || symbols_only(i) ? NULL : fopen(files[i], "rb");
		unsigned char *buf, *work;
		size_t len;

		if (!in)
			continue;
		ck_assert_int_eq(fseek(in, 0, SEEK_END), 0);
		len = (size_t)ftell(in);
		rewind(in);
		ck_assert_ptr_nonnull(buf = malloc(len));
		ck_assert_ptr_nonnull(work = malloc(len));
		ck_assert_uint_eq(fread(buf, 1, len, in), len);
		fclose(in);
		for (size_t k = 0; k < PR_ARRAY_SIZE(sections) * 3; k++) {
			uint64_t x = 0x9e3779b97f4a7c15ull * (k + 1);
			size_t off, size;
			FILE *out;
			struct tally t;

			if (!section_at(buf, len, sections[k / 3], &off, &size) || size < 8)
				continue;
			memcpy(work, buf, len);
			/* Garbage over its middle half; zeros over its second
			 * half; a byte in every 61 flipped. */
			for (size_t j = 0; j < size; j++) {
				x ^= x << 13, x ^= x >> 7, x ^= x << 17;
				if (k % 3 == 0 && j >= size / 4 && j < size * 3 / 4)
					work[off + j] = (unsigned char)x;
				else if (k % 3 == 1 && j >= size / 2)
					work[off + j] = 0;
				else if (k % 3 == 2 && j % 61 == 0)
					work[off + j] ^= (unsigned char)(x | 1);
			}
			ck_assert_ptr_nonnull(out = fopen(copy, "wb"));
			ck_assert_uint_eq(fwrite(work, 1, len, out), len);
			ck_assert_int_eq(fclose(out), 0);
			t = compare_file(copy, 1, false, NULL, true, false);
			damaged++;
			differ += t.differ + t.lines_differ;
			if (t.differ || t.only_index)
				fprintf(stderr, "%s: %s damaged (way %zu): %zu addresses named "
					"by the index alone\n", files[i], sections[k / 3], k % 3,
					t.only_index);
		}
		free(buf);
		free(work);
	}
	unlink(copy);
	rmdir(dir);
	ck_assert_msg(damaged >= 20, "only %zu damaged copies made", damaged);
	ck_assert_msg(!differ, "%zu addresses of damaged copies named differently", differ);
}
END_TEST

/* The symbolizer switched to the index names every frame as before:
 * functions, inlined calls, their lines and the innermost line (still
 * libdw's), symbols' names and offsets. */
START_TEST(a_symbolizer_on_the_index_names_every_frame_as_on_libdw)
{
	size_t lines = 0, inlined = 0;

	for (int i = 0; i < nr_files; i++) {
		uint64_t step;
		char *path = file_arg(i, &step, NULL);
		struct tally t;

		if (symbols_only(i)) {
			free(path);
			continue;
		}
		t = compare_symbolizers(path, step, _i == 1, true);

		lines += t.covered;
		inlined += t.inlined;
		ck_assert_msg(!t.differ, "%s: %zu of %zu frames named differently", path, t.differ,
			      t.addrs);
		free(path);
	}
	ck_assert_msg(inlined, "no frame in an inlined call");
	/* Without lines (the loop's second pass), none has any. */
	ck_assert_msg(_i == 1 ? !lines : lines > 0, "%zu frames with a line", lines);
}
END_TEST

/* A file without DWARF is named from its symbol table (symtab.c's,
 * sorted, its names in the ELF file held), and its libdwfl session is
 * closed once that is known, on either path's answers. */
START_TEST(a_file_without_dwarf_is_named_from_its_symbols_with_libdwfl_closed)
{
	size_t seen = 0;

	for (int i = 0; i < nr_files; i++) {
		uint64_t step;
		char *path;
		struct tally t;

		if (!symbols_only(i))
			continue;
		path = file_arg(i, &step, NULL);
		t = compare_symbolizers(path, step, false, false);
		ck_assert_msg(!t.differ, "%s: %zu of %zu frames named differently", path, t.differ,
			      t.addrs);
		ck_assert_msg(t.named > t.addrs / 2, "%s: %zu of %zu frames named", path, t.named,
			      t.addrs);
		ck_assert_msg(!t.covered && !t.inlined, "%s: lines or inlined calls without DWARF",
			      path);
		seen++;
		free(path);
	}
	ck_assert_msg(seen, "no file without DWARF given");
}
END_TEST

/* DS_SYMINDEX=0 or 1 picks libdw's path or the index's, whatever the
 * build's default; anything else leaves the default. */
START_TEST(ds_symindex_in_the_environment_picks_the_path)
{
	static const struct { const char *env; int want; } cases[] = {
		{ "0", 0 }, { "1", 1 }, { "yes", -1 }, { "", -1 },
	};
	struct pr_model *model = pr_model_new(NULL);
	struct pr_symbolizer_opts opts = { .sz = sizeof(opts) };
	struct pr_symbolizer *s;
	bool fallback;

	ck_assert_ptr_nonnull(model);
	unsetenv("DS_SYMINDEX");
	ck_assert_ptr_nonnull(s = pr_symbolizer_new(model, &opts));
	fallback = s->use_index;
	pr_symbolizer_free(s);
	for (size_t i = 0; i < PR_ARRAY_SIZE(cases); i++) {
		ck_assert_int_eq(setenv("DS_SYMINDEX", cases[i].env, 1), 0);
		ck_assert_ptr_nonnull(s = pr_symbolizer_new(model, &opts));
		ck_assert_int_eq(s->use_index, cases[i].want < 0 ? fallback : cases[i].want);
		pr_symbolizer_free(s);
	}
	/* index_always (the agent's) takes the index's path; DS_SYMINDEX=0
	 * still picks libdw's. */
	opts.index_always = true;
	unsetenv("DS_SYMINDEX");
	ck_assert_ptr_nonnull(s = pr_symbolizer_new(model, &opts));
	ck_assert(s->use_index);
	pr_symbolizer_free(s);
	ck_assert_int_eq(setenv("DS_SYMINDEX", "0", 1), 0);
	ck_assert_ptr_nonnull(s = pr_symbolizer_new(model, &opts));
	ck_assert(!s->use_index);
	pr_symbolizer_free(s);
	unsetenv("DS_SYMINDEX");
	pr_model_free(model);
}
END_TEST

START_TEST(the_index_names_every_address_as_libdw_does)
{
	compare_all(false, NULL, false);
}
END_TEST

/* A build reads the units' line tables and file names through a Dwarf of
 * its own, begun anew once it holds more than a bound (libdw keeps what
 * it read until then): with the bound at a byte, anew at every next
 * unit, the index still names every address as libdw does, lines and
 * call sites and all. */
START_TEST(a_build_reading_each_units_lines_anew_names_as_libdw_does)
{
	side_max = 1;
	side_begun = side_again = 0;
	compare_all(false, NULL, false);
	fprintf(stderr, "side Dwarf begun %llu times, %llu units read again\n",
		(unsigned long long)side_begun, (unsigned long long)side_again);
	ck_assert_msg(side_begun > 20, "the line tables were read anew only %llu times",
		      (unsigned long long)side_begun);
	side_max = 0;
}
END_TEST

/* A symbol that starts where a qualified function does names it (gcc
 * writes no linkage name for what involves an anonymous namespace); one
 * that starts elsewhere does not. */
START_TEST(a_symbol_starting_where_a_qualified_function_does_names_it_in_both)
{
	compare_all(false, "ds::from_the_symbol_table", false);
}
END_TEST

/* File offset `off` of module `m`'s code as a DWARF address. */
static uint64_t vaddr_of(const struct sym_module *m, uint64_t off)
{
	for (size_t i = 0; i < m->elf->nr_seg; i++) {
		const struct pr_elf_segment *seg = &m->elf->seg[i];

		if (off >= seg->offset && off - seg->offset < seg->filesz)
			return seg->vaddr + (off - seg->offset) - m->dwarf_bias;
	}
	ck_abort_msg("offset 0x%llx in no segment", (unsigned long long)off);
	return 0;
}

/* A partial index answers, where it says it does, as libdw does, lines
 * and all; and it does not answer everywhere. */
START_TEST(a_partial_index_names_what_it_covers_as_libdw_does)
{
	compare_all(false, NULL, true);
}
END_TEST

/* A symbolizer that named addresses in a few units of a file through
 * libdw, and could not afford the whole file's index at its end, stores a
 * partial one; the next symbolizer maps it and names every frame as one
 * on libdw alone does: from the index where it covers them, through libdw
 * (the file's DWARF opened then) where it does not.  And the one after
 * that maps an index grown by the units of what one more named through
 * libdw.  (Their index costs less than the whole file's, which the
 * budget set leaves out.) */
START_TEST(a_cached_partial_index_and_libdw_name_every_frame_as_libdw_alone)
{
	char dir[] = "/tmp/test-symindex-partial-XXXXXX", cmd[64];
	size_t partial = 0;

	ck_assert_ptr_nonnull(mkdtemp(dir));
	for (int i = 0; i < nr_files; i++) {
		PR_OPTS(pr_symbolizer_opts, cached, .index_cache_dir = dir);
		PR_OPTS(pr_symbolizer_opts, bare, .no_index_cache = true);
		struct pr_model *model;
		struct pr_record r;
		struct pr_symbolizer *first, *dw, *ix;
		const struct pr_map *map;
		struct sym_module *m;
		struct pr_frame f;
		uint64_t step, lo = 1, hi = 0, budget, grow[8];
		size_t nr_grow = 0;
		size_t addrs = 0, differ = 0, from_index = 0;
		char *path;

		if (symbols_only(i))
			continue;
		path = file_arg(i, &step, NULL);
		ck_assert_ptr_nonnull(model = pr_model_new(NULL));
		r = mmap2(PID, MAP_AT, 1ull << 30, 0, path);
		ck_assert_int_eq(pr_model_apply(model, &r), 0);
		ck_assert_ptr_nonnull(map = pr__model_find(model, PID, MAP_AT));
		f = (struct pr_frame){ .dso = map->dso, .map_start = map->start,
				       .map_end = map->end };
		ck_assert_ptr_nonnull(first = pr_symbolizer_new(model, &cached));
		pr__symbolizer_use_index(first, false);
		/* Past what the fill rule builds at once, and just under what
		 * the whole file's index is estimated to cost. */
		first->index_fill_max = 0;
		ck_assert_ptr_nonnull(m = pr__sym_module_of(first, PID, &f));
		budget = pr__sym_dwarf_open(first, m) ? pr__sym_index_whole_ns(m) - 1 : 1;
		first->fill_budget_ns = budget;
		for (size_t k = 0; k < m->elf->nr_seg; k++) {
			const struct pr_elf_segment *seg = &m->elf->seg[k];

			/* Its largest code segment. */
			if ((seg->flags & PF_X) && (hi < lo || seg->filesz > hi - lo)) {
				lo = seg->offset;
				hi = seg->offset + seg->filesz;
			}
		}
		/* A few addresses, in its first tenth. */
		for (uint64_t off = lo; off < lo + (hi - lo) / 10; off += (hi - lo) / 200 + 1) {
			struct pr_symbol sym;

			f.dso_ip = off;
			f.ip = MAP_AT + off;
			ck_assert_int_eq(pr_symbolizer_symbolize(first, PID, &f, &sym), 0);
		}
		pr_symbolizer_free(first);

		ck_assert_ptr_nonnull(dw = pr_symbolizer_new(model, &bare));
		ck_assert_ptr_nonnull(ix = pr_symbolizer_new(model, &cached));
		pr__symbolizer_use_index(dw, false);
		pr__symbolizer_use_index(ix, false);
		ix->index_fill_max = 0;
		ix->fill_budget_ns = budget;
		ck_assert_ptr_nonnull(m = pr__sym_module_of(ix, PID, &f));
		if (!m->index || !pr__symindex_partial(m->index)) {
			fprintf(stderr, "%s: no partial index (%s)\n", path,
				m->index ? "a whole one" : "none");
			pr_symbolizer_free(ix);
			pr_symbolizer_free(dw);
			pr_model_free(model);
			free(path);
			continue;
		}
		partial++;
		ck_assert_msg(!m->dwarf, "%s: its DWARF opened with a partial index mapped", path);
		for (uint64_t off = lo; off < hi; off += step) {
			struct pr_symbol want, got;

			f.dso_ip = off;
			f.ip = MAP_AT + off;
			ck_assert_int_eq(pr_symbolizer_symbolize(dw, PID, &f, &want), 0);
			ck_assert_int_eq(pr_symbolizer_symbolize(ix, PID, &f, &got), 0);
			addrs++;
			from_index += pr__symindex_covers(m->index, vaddr_of(m, off));
			if (same_symbol(&want, &got))
				continue;
			if (differ++ < 10) {
				fprintf(stderr, "%s: offset 0x%llx named differently\n", path,
					(unsigned long long)off);
				say_chain("libdw", want.funcs, want.nr);
				say_chain("partial index", got.funcs, got.nr);
			}
		}
		fprintf(stderr, "%s, a partial index: %zu addresses, %zu covered by it, %zu differ\n",
			path, addrs, from_index, differ);
		ck_assert_msg(!differ, "%s: %zu of %zu addresses named differently", path, differ,
			      addrs);
		ck_assert_msg(from_index && from_index < addrs, "%s: %zu of %zu addresses covered",
			      path, from_index, addrs);
		/* What it did not cover was named through libdw. */
		ck_assert_msg(m->dwarf, "%s: its DWARF not opened", path);
		pr_symbolizer_free(ix);

		/* It named most units through libdw: their index would cost
		 * more than the whole file's, and none was stored.  One that
		 * names a few addresses the index does not cover grows it by
		 * their units, within the budget. */
		ck_assert_ptr_nonnull(ix = pr_symbolizer_new(model, &cached));
		ix->index_fill_max = 0;
		ix->fill_budget_ns = budget;
		ck_assert_ptr_nonnull(m = pr__sym_module_of(ix, PID, &f));
		ck_assert(m->index && pr__symindex_partial(m->index));
		for (uint64_t off = hi - 1; off >= lo && nr_grow < PR_ARRAY_SIZE(grow);
		     off -= (hi - lo) / 64 + 1) {
			struct pr_symbol sym;

			if (pr__symindex_covers(m->index, vaddr_of(m, off)))
				continue;
			grow[nr_grow++] = off;
			f.dso_ip = off;
			f.ip = MAP_AT + off;
			ck_assert_int_eq(pr_symbolizer_symbolize(ix, PID, &f, &sym), 0);
		}
		ck_assert(nr_grow);
		pr_symbolizer_free(ix);
		ck_assert_ptr_nonnull(ix = pr_symbolizer_new(model, &cached));
		ck_assert_ptr_nonnull(m = pr__sym_module_of(ix, PID, &f));
		ck_assert_msg(m->index && pr__symindex_partial(m->index), "%s: not grown", path);
		for (size_t k = 0; k < nr_grow; k++)
			ck_assert_msg(pr__symindex_covers(m->index, vaddr_of(m, grow[k])),
				      "%s: offset 0x%llx still not covered", path,
				      (unsigned long long)grow[k]);
		pr_symbolizer_free(ix);
		pr_symbolizer_free(dw);
		pr_model_free(model);
		free(path);
	}
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
	ck_assert_int_eq(system(cmd), 0);
	ck_assert_msg(partial, "no file's index was partial");
}
END_TEST

START_TEST(without_lines_the_index_gives_no_call_sites_as_libdw_gives_none)
{
	compare_all(true, NULL, false);
}
END_TEST

int main(int argc, char **argv)
{
	Suite *s = suite_create("symindex");
	TCase *tc = tcase_create("differential");

	if (!take_files(argc, argv, "FILE[:STEP]... @FILE..."))
		return EXIT_FAILURE;
	tcase_set_timeout(tc, 300);
	tcase_add_test(tc, the_index_names_every_address_as_libdw_does);
	tcase_add_test(tc, a_build_reading_each_units_lines_anew_names_as_libdw_does);
	tcase_add_test(tc, a_symbol_starting_where_a_qualified_function_does_names_it_in_both);
	tcase_add_test(tc, a_damaged_files_index_is_built_or_refused_and_agrees_with_libdw);
	tcase_add_loop_test(tc, a_symbolizer_on_the_index_names_every_frame_as_on_libdw, 0, 2);
	tcase_add_test(tc, without_lines_the_index_gives_no_call_sites_as_libdw_gives_none);
	tcase_add_test(tc, a_partial_index_names_what_it_covers_as_libdw_does);
	tcase_add_test(tc, a_cached_partial_index_and_libdw_name_every_frame_as_libdw_alone);
	tcase_add_test(tc, a_file_without_dwarf_is_named_from_its_symbols_with_libdwfl_closed);
	tcase_add_test(tc, ds_symindex_in_the_environment_picks_the_path);
	suite_add_tcase(s, tc);
	return run_suite(s);
}
