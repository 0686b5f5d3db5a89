/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The address index as a file (src/symbols/symindex_file.c): an index
 * read back from its file answers as the index built, at every address; a
 * file with any byte changed, cut or made longer is refused; one damaged
 * behind a right checksum (each reference, each table's place, each
 * header field: another file's build-id, other settings, a version from
 * the future) is refused by the checks behind it, and through a
 * symbolizer's cache built again and replaced.  test-symcache.c has the
 * cache directory's own behaviour.
 *
 * usage: test-symindex-file FILE[:STEP]...   (meson passes test-symindex's
 * files; those without STEP are also damaged byte by byte)
 *        test-symindex-file --seeds DIR FILE...   (tests/fuzz/make-seeds.sh:
 * each FILE's index file into DIR, for the fuzzer)
 */
#include <dwarf.h>

#include "symbols/symdwarf.h"
#include "symindex-files.h"

/* The file's layout, as symindex_file.c's comment gives it. */
enum {
	H_FORMAT = 4, H_LAYOUT = 8, H_HEADER_SIZE = 12, H_FILE_SIZE = 16, H_BUILD_ID = 24,
	H_BUILD_ID_SIZE = 44, H_SETTINGS = 48, H_NR_TABLES = 52, H_CHECKSUM = 56,
	H_PRODUCER = 60, H_ZERO = 92, H_SIZE = 96,
	D_KIND = 0, D_ENTRY_SIZE = 4, D_OFFSET = 8, D_COUNT = 16, D_SIZE = 24,
	N_NAME = 0, N_PARENT = 4, N_CALL_FILE = 8, N_FLAGS = 24, N_SIZE = 32,
	S_LO = 0, S_LEN = 8, S_NODE = 12, S_SIZE = 16,
	/* symindex_syms.c's symbols and addr2line's candidates */
	Y_START = 0, Y_END = 8, Y_NAME = 16, Y_BINDING = 20, Y_SIZE = 24,
	A_SEC_LO = 16, A_SEC_HI = 24, A_NAME = 32, A_SIZE = 40,
};

/* Both indexes' chains at every STEP-th address of `m`'s code, with and
 * without lines and a symbol to take a qualified top's place: how many
 * addresses differ (and how many were in a function, in *covered). */
static size_t compare_indexes(const struct sym_module *m, uint64_t step,
			      const struct pr__symindex *a, const struct pr__symindex *b,
			      size_t *covered)
{
	size_t differ = 0;

	*covered = 0;
	for (size_t i = 0; i < m->elf->nr_seg; i++) {
		const struct pr_elf_segment *seg = &m->elf->seg[i];

		if (!(seg->flags & PF_X))
			continue;
		for (uint64_t pc = seg->vaddr; pc < seg->vaddr + seg->filesz; pc += step) {
			struct pr_sym_func fa[MAX_INLINE], fb[MAX_INLINE];
			bool no_lines = pc & 1;
			const char *sym = (pc & 2) ? "ns::from_the_symbol" : NULL;
			uint64_t start = pc - (pc & 4) - m->dwarf_bias;
			size_t na = pr__symindex_chain(a, pc - m->dwarf_bias, no_lines, sym, start, fa);
			size_t nb = pr__symindex_chain(b, pc - m->dwarf_bias, no_lines, sym, start, fb);
			const char *la, *lb;
			uint32_t na_line, nb_line;
			bool same = na == nb &&
				    pr__symindex_line(a, pc - m->dwarf_bias, &la, &na_line) ==
				    pr__symindex_line(b, pc - m->dwarf_bias, &lb, &nb_line) &&
				    same_str(la, lb) && na_line == nb_line;

			*covered += na > 0;
			for (size_t k = 0; same && k < na; k++)
				same = same_str(fa[k].name, fb[k].name) &&
				       same_str(fa[k].file, fb[k].file) && fa[k].line == fb[k].line &&
				       fa[k].inlined == fb[k].inlined;
			if (!same && differ++ < 5)
				fprintf(stderr, "0x%llx: %zu and %zu functions, or other names\n",
					(unsigned long long)pc, na, nb);
		}
	}
	return differ;
}

START_TEST(an_index_read_from_its_file_answers_as_the_index_built)
{
	char *dir = make_dir();
	struct pr__ixcache *c = pr__ixcache_new(dir, 0, true, NULL);
	size_t total = 0;

	ck_assert_ptr_nonnull(c);
	for (int i = 0; i < nr_files; i++) {
		uint64_t step;
		bool small;
		char *path = file_arg(i, &step, &small);
		struct opened o;
		struct pr__symindex *built, *mapped, *written;
		struct pr__ix_key k;
		unsigned char *a, *b, *w;
		size_t la, lb, lw, covered, differ, written_differ, written_covered;

		open_file(&o, path, NULL, true);
		k = key_of(o.m);
		ck_assert_ptr_nonnull(built = pr__symindex_build(o.s, o.m));
		ck_assert_ptr_null(pr__ixcache_get(c, &k, path));
		pr__ixcache_put(c, &k, built, path, &written);
		/* The file as kept, mapped in the built index's place. */
		ck_assert_msg(written, "%s: not mapped where it was written", path);
		ck_assert_ptr_nonnull(mapped = pr__ixcache_get(c, &k, path));
		/* Its line table too, read back and compared below. */
		ck_assert(pr__symindex_has_lines(built) && pr__symindex_has_lines(mapped));
		differ = compare_indexes(o.m, step, built, mapped, &covered);
		written_differ = compare_indexes(o.m, step, built, written, &written_covered);
		ck_assert_msg(!written_differ && written_covered == covered,
			      "%s: %zu addresses differ where it was written", path, written_differ);
		fprintf(stderr, "%s: %zu addresses in functions, %zu answered differently; "
			"%zu bytes\n", path, covered, differ, pr__symindex_bytes(built));
		ck_assert_msg(covered > 10, "%s: only %zu addresses compared", path, covered);
		total += covered;
		ck_assert_msg(!differ, "%s: %zu addresses differ", path, differ);
		a = file_bytes(built, &k, &la);
		b = file_bytes(mapped, &k, &lb);
		w = file_bytes(written, &k, &lw);
		ck_assert_msg(la == lb && !memcmp(a, b, la), "%s: written again, other bytes", path);
		ck_assert_msg(la == lw && !memcmp(a, w, la), "%s: as written, other bytes", path);
		free(a);
		free(b);
		free(w);
		pr__symindex_free(written);
		pr__symindex_free(mapped);
		pr__symindex_free(built);
		close_file(&o);
		free(path);
	}
	ck_assert_msg(total > 10000, "only %zu addresses compared", total);
	pr__ixcache_free(c);
	remove_dir(dir);
	free(dir);
}
END_TEST

static bool refused(const unsigned char *b, size_t len, const struct pr__ix_key *k)
{
	const char *why = NULL;
	unsigned char *copy = malloc(len ? len : 1);
	struct pr__symindex *ix;

	ck_assert_ptr_nonnull(copy);
	memcpy(copy, b, len);
	ix = pr__symindex_read(copy, len, NULL, k, &why);
	pr__symindex_free(ix);
	free(copy);
	ck_assert_msg(ix || why, "refused without a reason");
	return !ix;
}

/* Every byte of the file changed, alone, and the file cut at every
 * length or made longer: refused, every time. */
START_TEST(an_index_file_with_any_byte_changed_or_cut_is_refused)
{
	unsigned char *longer = calloc(1, sm.len + 8);

	ck_assert_msg(!refused(sm.b, sm.len, &sm.k), "the file as written is refused");
	for (size_t i = 0; i < sm.len; i++)
		for (unsigned bit = 0; bit < 8; bit += 3) {
			sm.b[i] ^= (unsigned char)(1u << bit);
			ck_assert_msg(refused(sm.b, sm.len, &sm.k), "byte %zu of %zu changed: read", i, sm.len);
			sm.b[i] ^= (unsigned char)(1u << bit);
		}
	for (size_t cut = 0; cut < sm.len; cut++)
		ck_assert_msg(refused(sm.b, cut, &sm.k), "cut to %zu of %zu: read", cut, sm.len);
	ck_assert_ptr_nonnull(longer);
	memcpy(longer, sm.b, sm.len);
	ck_assert(refused(longer, sm.len + 8, &sm.k));
	fprintf(stderr, "%s: its %zu-byte index file refused with each byte changed and "
		"at each length\n", sm.path, sm.len);
	free(longer);
}
END_TEST

static uint32_t get32(const unsigned char *b, size_t at)
{
	uint32_t v;

	memcpy(&v, b + at, 4);
	return v;
}

static uint64_t get64(const unsigned char *b, size_t at)
{
	uint64_t v;

	memcpy(&v, b + at, 8);
	return v;
}

static void put32(unsigned char *b, size_t at, uint32_t v)
{
	memcpy(b + at, &v, 4);
}

static void put64(unsigned char *b, size_t at, uint64_t v)
{
	memcpy(b + at, &v, 8);
}

/* Table `kind`'s directory entry in file `b`. */
static size_t dirent_of(const unsigned char *b, uint32_t kind)
{
	for (uint32_t i = 0; i < get32(b, H_NR_TABLES); i++)
		if (get32(b, H_SIZE + i * D_SIZE + D_KIND) == kind)
			return H_SIZE + i * D_SIZE;
	ck_abort_msg("no table of kind %u", kind);
	return 0;
}

static uint64_t count_of(const unsigned char *b, uint32_t kind)
{
	return get64(b, dirent_of(b, kind) + D_COUNT);
}

/* Where entry `i` of table `kind` is (`i` < 0: from its end). */
static size_t entry(const unsigned char *b, uint32_t kind, int64_t i, size_t size)
{
	uint64_t at = i < 0 ? count_of(b, kind) + (uint64_t)i : (uint64_t)i;

	return (size_t)get64(b, dirent_of(b, kind) + D_OFFSET) + (size_t)at * size;
}

#define NODE(b, i) entry(b, PR_IX_NODES, i, N_SIZE)
#define SEG(b, i) entry(b, PR_IX_SEGMENTS, i, S_SIZE)
#define DIRENT(b, kind) dirent_of(b, kind)
#define SYM(b, i) entry(b, PR_IX_SYMBOLS, i, Y_SIZE)
#define A2L(b, i) entry(b, PR_IX_A2L, i, A_SIZE)

/* A damage that keeps the checksum right: what the checks behind it see.
 * `len` is the file's. */
struct forgery {
	const char *what;
	void (*forge)(unsigned char *b, size_t len);
};

static void node_name_past_strings(unsigned char *b, size_t len)
{
	put32(b, NODE(b, -1) + N_NAME, (uint32_t)count_of(b, PR_IX_STRINGS));
}

static void node_file_past_strings(unsigned char *b, size_t len)
{
	put32(b, NODE(b, 0) + N_CALL_FILE, 0x7fffffff);
}

static void node_its_own_parent(unsigned char *b, size_t len)
{
	put32(b, NODE(b, -1) + N_PARENT, (uint32_t)count_of(b, PR_IX_NODES) - 1);
}

static void node_parent_after_it(unsigned char *b, size_t len)
{
	put32(b, NODE(b, 0) + N_PARENT, (uint32_t)count_of(b, PR_IX_NODES) - 1);
}

static void node_unknown_flag(unsigned char *b, size_t len)
{
	put32(b, NODE(b, 0) + N_FLAGS, 0x100);
}

static void strings_unterminated(unsigned char *b, size_t len)
{
	b[entry(b, PR_IX_STRINGS, -1, 1)] = 'x';
}

static void segments_unsorted(unsigned char *b, size_t len)
{
	unsigned char first[S_SIZE];

	memcpy(first, b + SEG(b, 0), S_SIZE);
	memcpy(b + SEG(b, 0), b + SEG(b, 1), S_SIZE);
	memcpy(b + SEG(b, 1), first, S_SIZE);
}

static void segments_overlap(unsigned char *b, size_t len)
{
	put32(b, SEG(b, 0) + S_LEN, (uint32_t)(get64(b, SEG(b, 1)) - get64(b, SEG(b, 0)) + 1));
}

static void segment_empty(unsigned char *b, size_t len)
{
	put32(b, SEG(b, -1) + S_LEN, 0);
}

static void segment_past_the_nodes(unsigned char *b, size_t len)
{
	put32(b, SEG(b, 0) + S_NODE, (uint32_t)count_of(b, PR_IX_NODES));
}

static void segment_wrapping(unsigned char *b, size_t len)
{
	put64(b, SEG(b, -1) + S_LO, UINT64_MAX - 1);
	put32(b, SEG(b, -1) + S_LEN, 16);
}

static void symbol_name_past_names(unsigned char *b, size_t len)
{
	put32(b, SYM(b, -1) + Y_NAME, (uint32_t)count_of(b, PR_IX_SYMBOL_NAMES));
}

static void symbols_unsorted(unsigned char *b, size_t len)
{
	put64(b, SYM(b, 0) + Y_START, get64(b, SYM(b, 1) + Y_START) + 1);
}

static void symbol_ending_before_its_start(unsigned char *b, size_t len)
{
	put64(b, SYM(b, 0) + Y_END, get64(b, SYM(b, 0) + Y_START) - 1);
}

static void symbol_binding_unknown(unsigned char *b, size_t len)
{
	b[SYM(b, 0) + Y_BINDING] = 9;
}

static void symbol_names_unterminated(unsigned char *b, size_t len)
{
	b[entry(b, PR_IX_SYMBOL_NAMES, -1, 1)] = 'x';
}

static void a2l_name_past_names(unsigned char *b, size_t len)
{
	put32(b, A2L(b, 0) + A_NAME, 0x7fffffff);
}

static void a2l_section_inside_out(unsigned char *b, size_t len)
{
	put64(b, A2L(b, 0) + A_SEC_LO, get64(b, A2L(b, 0) + A_SEC_HI) + 1);
}

static void table_misaligned(unsigned char *b, size_t len)
{
	put64(b, DIRENT(b, PR_IX_SEGMENTS) + D_OFFSET, SEG(b, 0) + 4);
	put64(b, DIRENT(b, PR_IX_SEGMENTS) + D_COUNT, count_of(b, PR_IX_SEGMENTS) - 1);
}

static void table_past_the_end(unsigned char *b, size_t len)
{
	put64(b, DIRENT(b, PR_IX_NODES) + D_OFFSET, (len + 8) & ~(size_t)7);
}

static void table_count_overflowing(unsigned char *b, size_t len)
{
	put64(b, DIRENT(b, PR_IX_SEGMENTS) + D_COUNT, UINT64_MAX / S_SIZE + 2);
}

static void tables_overlapping(unsigned char *b, size_t len)
{
	put64(b, DIRENT(b, PR_IX_NODES) + D_OFFSET, get64(b, DIRENT(b, PR_IX_STRINGS) + D_OFFSET));
}

static void table_kind_twice(unsigned char *b, size_t len)
{
	put32(b, DIRENT(b, PR_IX_SEGMENTS) + D_KIND, PR_IX_NODES);
}

static void table_kind_unknown(unsigned char *b, size_t len)
{
	put32(b, DIRENT(b, PR_IX_SEGMENTS) + D_KIND, 77);
}

static void table_entries_resized(unsigned char *b, size_t len)
{
	put32(b, DIRENT(b, PR_IX_NODES) + D_ENTRY_SIZE, N_SIZE - 8);
}

static void table_missing(unsigned char *b, size_t len)
{
	put32(b, H_NR_TABLES, 2);
}

static void tables_too_many(unsigned char *b, size_t len)
{
	put32(b, H_NR_TABLES, 9);
}

static void format_from_the_future(unsigned char *b, size_t len)
{
	put32(b, H_FORMAT, get32(b, H_FORMAT) + 1);
}

static void layout_from_the_future(unsigned char *b, size_t len)
{
	put32(b, H_LAYOUT, get32(b, H_LAYOUT) + 1);
}

static void another_producer(unsigned char *b, size_t len)
{
	memcpy(b + H_PRODUCER, "0.0.1", 6);
}

static void header_resized(unsigned char *b, size_t len)
{
	put32(b, H_HEADER_SIZE, H_SIZE + 8);
}

static void header_tail_not_zero(unsigned char *b, size_t len)
{
	put32(b, H_ZERO, 1);
}

static void size_not_the_files(unsigned char *b, size_t len)
{
	put64(b, H_FILE_SIZE, len + 8);
}

static void build_id_longer(unsigned char *b, size_t len)
{
	put32(b, H_BUILD_ID_SIZE, PR_BUILD_ID_MAX + 1);
}

static void foreign_build_id(unsigned char *b, size_t len)
{
	b[H_BUILD_ID] ^= 0x55;
}

static void other_settings(unsigned char *b, size_t len)
{
	put32(b, H_SETTINGS, 0);
}

static const struct forgery forgeries[] = {
	{ "a node's name past the strings", node_name_past_strings },
	{ "a node's call file past the strings", node_file_past_strings },
	{ "a node its own parent", node_its_own_parent },
	{ "a node's parent after it", node_parent_after_it },
	{ "a node's flag unknown", node_unknown_flag },
	{ "the last string unterminated", strings_unterminated },
	{ "segments unsorted", segments_unsorted },
	{ "segments overlapping", segments_overlap },
	{ "a segment empty", segment_empty },
	{ "a segment's node past the nodes", segment_past_the_nodes },
	{ "a segment wrapping past the top", segment_wrapping },
	{ "a symbol's name past the names", symbol_name_past_names },
	{ "symbols unsorted", symbols_unsorted },
	{ "a symbol ending before its start", symbol_ending_before_its_start },
	{ "a symbol's binding unknown", symbol_binding_unknown },
	{ "the symbols' last name unterminated", symbol_names_unterminated },
	{ "an addr2line symbol's name past the names", a2l_name_past_names },
	{ "an addr2line symbol's section inside out", a2l_section_inside_out },
	{ "a table misaligned", table_misaligned },
	{ "a table past the end", table_past_the_end },
	{ "a table's count overflowing", table_count_overflowing },
	{ "tables overlapping", tables_overlapping },
	{ "a table kind twice", table_kind_twice },
	{ "a table kind unknown", table_kind_unknown },
	{ "a table's entries of another size", table_entries_resized },
	{ "a table missing", table_missing },
	{ "more tables than a file has", tables_too_many },
	{ "a format from the future", format_from_the_future },
	{ "a layout from the future", layout_from_the_future },
	{ "another library version", another_producer },
	{ "a header of another size", header_resized },
	{ "the header's last bytes not zero", header_tail_not_zero },
	{ "a file size not the file's", size_not_the_files },
	{ "a build-id longer than any", build_id_longer },
	{ "another file's build-id", foreign_build_id },
	{ "other settings", other_settings },
};

static void fix_checksum(unsigned char *b, size_t len)
{
	put32(b, H_CHECKSUM, (uint32_t)crc32_z(crc32_z(0, NULL, 0), b + H_SIZE, len - H_SIZE));
}

/* Each damage behind a right checksum: refused by the checks, and through
 * a symbolizer, the index built again, names as before, and the file
 * replaced by one that is read. */
START_TEST(an_index_file_damaged_behind_its_checksum_is_refused_and_rebuilt)
{
	char name[4300];
	PR_OPTS(pr_symbolizer_opts, opts, .index_cache_dir = sm.dir);
	unsigned char *work = malloc(sm.len);

	ck_assert_ptr_nonnull(work);
	for (size_t i = 0; i < PR_ARRAY_SIZE(forgeries); i++) {
		struct pr__ixcache_stats st;
		unsigned char *back;
		size_t back_len;
		FILE *f;

		memcpy(work, sm.b, sm.len);
		forgeries[i].forge(work, sm.len);
		fix_checksum(work, sm.len);
		ck_assert_msg(refused(work, sm.len, &sm.k), "%s: read", forgeries[i].what);
		plant(sm.dir, &sm.k, work, sm.len, name, sizeof(name));
		st = name_with_cache(&sm.o, sm.path, &opts);
		ck_assert_msg(st.refused == 1 && st.stored == 1 && st.mapped == 0,
			      "%s: refused %llu, stored %llu, mapped %llu", forgeries[i].what,
			      (unsigned long long)st.refused, (unsigned long long)st.stored,
			      (unsigned long long)st.mapped);
		/* What replaced it is the index, and is read. */
		ck_assert_ptr_nonnull(f = fopen(name, "rb"));
		ck_assert_ptr_nonnull(back = malloc(sm.len + 1));
		back_len = fread(back, 1, sm.len + 1, f);
		fclose(f);
		ck_assert_msg(back_len == sm.len && !memcmp(back, sm.b, sm.len), "%s: not replaced",
			      forgeries[i].what);
		free(back);
		st = name_with_cache(&sm.o, sm.path, &opts);
		ck_assert_msg(st.mapped == 1 && st.refused == 0 && st.stored == 0,
			      "%s: the new file not read", forgeries[i].what);
	}
	/* Asked for with another file's build-id or other settings, the
	 * right file is not taken either. */
	for (int way = 0; way < 2; way++) {
		struct pr__ix_key other = sm.k;

		if (way)
			other.settings = 0;
		else
			other.build_id[0] ^= 1;
		ck_assert(refused(sm.b, sm.len, &other));
	}
	ck_assert(!refused(sm.b, sm.len, &sm.k));
	free(work);
}
END_TEST

static const char *seeds_dir;

/* --seeds DIR FILE...: each file's index file into DIR, for the fuzzer. */
START_TEST(write_seeds)
{
	for (int i = 0; i < nr_files; i++) {
		uint64_t step;
		bool small;
		char *path = file_arg(i, &step, &small), name[4300];
		const char *base = strrchr(path, '/');
		struct opened o;
		struct pr__symindex *ix;
		struct pr__ix_key k;
		unsigned char *b;
		size_t len;
		FILE *f;

		open_file(&o, path, NULL, true);
		k = key_of(o.m);
		/* Whole, and partial: of its first unit alone. */
		for (int partial = 0; partial < 2; partial++) {
			Dwarf_CU *cu;
			Dwarf_Die cudie;
			Dwarf_Half version;
			uint8_t type;
			uint64_t first;

			if (!partial) {
				ck_assert_ptr_nonnull(ix = pr__symindex_build(o.s, o.m));
			} else {
				ck_assert(pr__sym_dwarf_open(o.s, o.m));
				ck_assert_int_eq(dwarf_get_units(o.m->dwarf, NULL, &cu, &version,
								 &type, &cudie, NULL), 0);
				first = dwarf_dieoffset(&cudie);
				ck_assert_ptr_nonnull(ix = pr__symindex_build_units(o.s, o.m, &first,
										    1));
			}
			b = file_bytes(ix, &k, &len);
			snprintf(name, sizeof(name), "%s/%s%s.dsix", seeds_dir, base + 1,
				 partial ? ".partial" : "");
			ck_assert_ptr_nonnull(f = fopen(name, "wb"));
			ck_assert_uint_eq(fwrite(b, 1, len, f), len);
			ck_assert_int_eq(fclose(f), 0);
			free(b);
			pr__symindex_free(ix);
		}
		close_file(&o);
		free(path);
	}
}
END_TEST

int main(int argc, char **argv)
{
	Suite *s = suite_create("symindex-file");
	TCase *tc = tcase_create("file");

	if (argc > 2 && !strcmp(argv[1], "--seeds")) {
		seeds_dir = argv[2];
		argv += 2;
		argc -= 2;
	}
	if (!take_files(argc, argv, "FILE[:STEP]..."))
		return EXIT_FAILURE;
	tcase_set_timeout(tc, 300);
	if (seeds_dir) {
		tcase_add_test(tc, write_seeds);
		suite_add_tcase(s, tc);
		return run_suite(s);
	}
	tcase_add_test(tc, an_index_read_from_its_file_answers_as_the_index_built);
	suite_add_tcase(s, tc);
	tc = tcase_create("cache");
	tcase_set_timeout(tc, 300);
	tcase_add_checked_fixture(tc, small_setup, small_teardown);
	tcase_add_test(tc, an_index_file_with_any_byte_changed_or_cut_is_refused);
	tcase_add_test(tc, an_index_file_damaged_behind_its_checksum_is_refused_and_rebuilt);
	suite_add_tcase(s, tc);
	return run_suite(s);
}
