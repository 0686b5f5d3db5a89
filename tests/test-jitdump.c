/* SPDX-License-Identifier: Apache-2.0 */
/* The jitdump reader on made-up files (jitdump-writer.h): every record
 * kind, both byte orders, files cut anywhere and files damaged. */
#include <check.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "checkmain.h"
#include "jitdump-writer.h"
#include "model/jitdump.h"

static char logtext[4096];

static void keep_log(enum pr_log_level level, const char *msg, void *ctx)
{
	(void)level, (void)ctx;
	snprintf(logtext, sizeof(logtext), "%s", msg);
}

static const struct pr_logger lg = { keep_log, NULL };

#define HOT 0x7f0000001000ull
#define COLD 0x7f0000002000ull
#define MOVED 0x7f0000009000ull

/* What a runtime writes: lines and unwind info for `hot`, then `hot`;
 * `cold`, later moved; a record of a kind not known; the end. */
static void write_all_kinds(struct jdw *w, bool swap)
{
	static const struct jdw_line lines[] = {
		{ HOT + 0x20, 12, "/app/b.js" },
		{ HOT, 10, "/app/a.js" },
		{ HOT + 0x40, 14, NULL },
	};
	static const unsigned char unwind[24] = { 1, 2, 3, 4, 5, 6, 7, 8, 9 };

	jdw_header(w, 4242, swap);
	jdw_debug(w, 1100, HOT, lines, 3);
	jdw_unwind(w, 1150, unwind, sizeof(unwind), 8);
	jdw_load(w, 1200, HOT, 0x100, 1, "Lapp/Hot;run", 0xcc);
	jdw_load(w, 1300, COLD, 0x80, 2, "cold", 0x90);
	jdw_unknown(w, 1350, 99, 5);
	jdw_move(w, 1400, COLD, MOVED, 0x80, 2);
	jdw_close(w, 1500);
	/* Nothing past the end is read. */
	jdw_load(w, 1600, 0x7f0000005000ull, 0x10, 3, "after", 0);
}

static void check_all_kinds(struct pr_jitdump *jd)
{
	const struct jd_code *c;
	const char *file;
	uint32_t line;

	ck_assert_int_eq(jd->state, JD_CLOSED);
	ck_assert_uint_eq(jd->pid, 4242);
	ck_assert_uint_eq(jd->elf_mach, 62);
	ck_assert_uint_eq(jd->records, 7);
	ck_assert_uint_eq(jd->unknown, 1);
	c = pr__jitdump_find(jd, HOT + 0x30);
	ck_assert_ptr_nonnull(c);
	ck_assert_str_eq(pr__jitdump_str(jd, c->name), "Lapp/Hot;run");
	ck_assert_uint_eq(c->addr, HOT);
	ck_assert_uint_eq(c->size, 0x100);
	ck_assert_uint_eq(c->time, 1200);
	ck_assert_uint_eq(jd->buf[c->code], 0xcc);
	ck_assert_uint_eq(jd->buf[c->code + 0xff], 0xcc);
	/* Its lines, sorted; the "\xff" entry in the file of the one
	 * written before it. */
	file = pr__jitdump_line(jd, c, HOT + 0x30, &line);
	ck_assert_str_eq(file, "/app/b.js");
	ck_assert_uint_eq(line, 12);
	file = pr__jitdump_line(jd, c, HOT + 0x1f, &line);
	ck_assert_str_eq(file, "/app/a.js");
	ck_assert_uint_eq(line, 10);
	file = pr__jitdump_line(jd, c, HOT + 0x80, &line);
	ck_assert_str_eq(file, "/app/a.js");
	ck_assert_uint_eq(line, 14);
	ck_assert_uint_eq(c->unwind_size, 24);
	ck_assert_uint_eq(c->eh_hdr_size, 8);
	ck_assert_uint_eq(jd->buf[c->unwind + 8], 9);
	/* The move took `cold` away from where it was loaded. */
	ck_assert_ptr_null(pr__jitdump_find(jd, COLD + 4));
	c = pr__jitdump_find(jd, MOVED + 4);
	ck_assert_ptr_nonnull(c);
	ck_assert_str_eq(pr__jitdump_str(jd, c->name), "cold");
	ck_assert_uint_eq(c->load_addr, COLD);
	ck_assert_uint_eq(c->time, 1400);
	ck_assert_uint_eq(c->nr_lines, 0);
	ck_assert_uint_eq(c->unwind_size, 0);
	ck_assert_ptr_null(pr__jitdump_find(jd, MOVED + 0x80));
	ck_assert_ptr_null(pr__jitdump_find(jd, HOT - 1));
	ck_assert_ptr_null(pr__jitdump_find(jd, 0x7f0000005004ull));
}

START_TEST(every_record_kind_is_read_in_either_byte_order)
{
	for (int swap = 0; swap < 2; swap++) {
		struct pr_jitdump jd = { 0 };
		struct jdw w;

		write_all_kinds(&w, swap);
		ck_assert_int_eq(pr__jitdump_feed(&jd, w.buf, w.len, "t", &lg), 0);
		ck_assert_int_eq(jd.swap, swap);
		check_all_kinds(&jd);
		pr__jitdump_clear(&jd);
		free(w.buf);
	}
}
END_TEST

/* The codes read of a file cut after `len` bytes: those whose records end
 * by then. */
START_TEST(a_file_cut_anywhere_reads_its_whole_records_and_the_rest_later)
{
	struct jdw w;
	size_t hot_end, cold_end;

	write_all_kinds(&w, false);
	/* Where the two loads' records end. */
	hot_end = 40;
	for (size_t at = 40, i = 0; i < 4; i++) {
		uint32_t size;

		memcpy(&size, w.buf + at + 4, 4);
		at += size;
		if (i == 2)
			hot_end = at;
		if (i == 3)
			cold_end = at;
	}
	for (size_t len = 0; len <= w.len; len++) {
		struct pr_jitdump jd = { 0 };
		size_t expect = len >= cold_end ? 2 : len >= hot_end ? 1 : 0;

		ck_assert_int_eq(pr__jitdump_feed(&jd, w.buf, len, "t", &lg), 0);
		ck_assert_int_ne(jd.state, JD_CORRUPT);
		ck_assert_uint_ge(jd.nr_codes, expect);
		ck_assert_uint_le(jd.nr_codes, expect + 1); /* the move */
		ck_assert_int_eq(pr__jitdump_find(&jd, HOT) != NULL, len >= hot_end);
		/* The rest, as the runtime writes it. */
		ck_assert_int_eq(pr__jitdump_feed(&jd, w.buf + len, w.len - len, "t", &lg), 0);
		check_all_kinds(&jd);
		pr__jitdump_clear(&jd);
	}
	free(w.buf);
}
END_TEST

/* Patch the u32 at `at` of a copy of w and read it. */
static void read_patched(const struct jdw *w, size_t at, uint32_t v, struct pr_jitdump *jd)
{
	unsigned char *copy = malloc(w->len);

	memcpy(copy, w->buf, w->len);
	memcpy(copy + at, &v, sizeof(v));
	memset(jd, 0, sizeof(*jd));
	logtext[0] = 0;
	ck_assert_int_eq(pr__jitdump_feed(jd, copy, w->len, "damaged.dump", &lg), 0);
	free(copy);
}

START_TEST(a_damaged_record_ends_the_reading_with_what_came_before)
{
	static const struct jdw_line line = { 0x1000, 1, "f.js" };
	struct pr_jitdump jd;
	struct jdw w;
	size_t second, debug;

	jdw_header(&w, 1, false);
	jdw_load(&w, 1, 0x1000, 0x10, 1, "first", 0);
	second = w.len;
	jdw_load(&w, 2, 0x2000, 0x10, 2, "second", 0);
	debug = w.len;
	jdw_debug(&w, 3, 0x3000, &line, 1);
	jdw_load(&w, 4, 0x3000, 0x10, 3, "third", 0);

	/* A record shorter than its header. */
	read_patched(&w, second + 4, 8, &jd);
	ck_assert_int_eq(jd.state, JD_CORRUPT);
	ck_assert_uint_eq(jd.nr_codes, 1);
	ck_assert_msg(strstr(logtext, "damaged.dump: record 1 (kind 0, 8 bytes) at byte 118: "
			     "a record shorter than its header"), "%s", logtext);
	ck_assert_ptr_nonnull(pr__jitdump_find(&jd, 0x1000));
	pr__jitdump_clear(&jd);
	/* Code larger than its record. */
	read_patched(&w, second + 16 + 24, 0x100, &jd);
	ck_assert_int_eq(jd.state, JD_CORRUPT);
	ck_assert_uint_eq(jd.nr_codes, 1);
	ck_assert_msg(strstr(logtext, "less code than its size"), "%s", logtext);
	pr__jitdump_clear(&jd);
	/* A name without its end: the record cut just after the name's
	 * first byte (its size says so). */
	read_patched(&w, second + 4, 16 + 40 + 1, &jd);
	ck_assert_int_eq(jd.state, JD_CORRUPT);
	ck_assert_msg(strstr(logtext, "name without its end"), "%s", logtext);
	pr__jitdump_clear(&jd);
	/* More debug entries than the record holds. */
	read_patched(&w, debug + 16 + 8, 1000, &jd);
	ck_assert_int_eq(jd.state, JD_CORRUPT);
	ck_assert_uint_eq(jd.nr_codes, 2);
	ck_assert_msg(strstr(logtext, "more entries than it holds"), "%s", logtext);
	pr__jitdump_clear(&jd);
	/* A record past the end of the file only waits for the rest. */
	read_patched(&w, second + 4, 0x10000, &jd);
	ck_assert_int_eq(jd.state, JD_READING);
	ck_assert_uint_eq(jd.nr_codes, 1);
	pr__jitdump_clear(&jd);
	/* Not a jitdump; a version not known. */
	read_patched(&w, 0, 0x12345678, &jd);
	ck_assert_int_eq(jd.state, JD_REFUSED);
	ck_assert_msg(strstr(logtext, "not a jitdump"), "%s", logtext);
	pr__jitdump_clear(&jd);
	read_patched(&w, 4, 2, &jd);
	ck_assert_int_eq(jd.state, JD_REFUSED);
	ck_assert_msg(strstr(logtext, "version 2"), "%s", logtext);
	pr__jitdump_clear(&jd);
	free(w.buf);
}
END_TEST

/* Every byte of a file set to each of a few values, every u32 to lengths
 * that are off by a little or a lot: read without a fault (run under
 * AddressSanitizer, this finds any read past a record). */
START_TEST(no_damage_makes_the_reader_read_out_of_bounds)
{
	static const uint32_t values[] = { 0, 1, 0xff, 0x7fffffff, 0xffffffff, 15, 17, 41 };
	struct jdw w;

	write_all_kinds(&w, true);
	for (size_t at = 0; at < w.len; at++) {
		for (size_t v = 0; v < sizeof(values) / sizeof(values[0]); v++) {
			unsigned char *copy = malloc(w.len);
			struct pr_jitdump jd = { 0 };

			memcpy(copy, w.buf, w.len);
			copy[at] = (unsigned char)values[v];
			if (at + 4 <= w.len)
				memcpy(copy + at, &values[v], 4);
			pr__jitdump_feed(&jd, copy, w.len, "t", NULL);
			for (uint64_t a = HOT - 8; a < MOVED + 0x100; a += 0x40) {
				const struct jd_code *c = pr__jitdump_find(&jd, a);
				uint32_t line;

				if (c) {
					ck_assert_uint_lt(c->name, jd.len);
					ck_assert_uint_le(c->code + c->size, jd.len);
					ck_assert_uint_le(c->unwind + c->unwind_size, jd.len);
					pr__jitdump_line(&jd, c, a, &line);
				}
			}
			pr__jitdump_clear(&jd);
			free(copy);
		}
	}
	free(w.buf);
}
END_TEST

START_TEST(later_code_at_the_same_addresses_wins)
{
	struct pr_jitdump jd = { 0 };
	const struct jd_code *c;
	uint32_t line = 1;
	struct jdw w;

	jdw_header(&w, 1, false);
	/* Debug info of no entries (a fuzzer's find): no lines. */
	jdw_debug(&w, 1, 0x1000, NULL, 0);
	jdw_load(&w, 1, 0x1000, 0x100, 1, "old", 0);
	jdw_load(&w, 2, 0x1040, 0x40, 2, "inner", 0);
	jdw_load(&w, 3, 0x10f0, 0x20, 3, "overlapping", 0);
	jdw_load(&w, 4, 0x1000, 0x10, 4, "empty-room", 0);
	jdw_load(&w, 5, 0x2000, 0, 5, "no code", 0);
	ck_assert_int_eq(pr__jitdump_feed(&jd, w.buf, w.len, "t", &lg), 0);
	ck_assert_str_eq(pr__jitdump_str(&jd, pr__jitdump_find(&jd, 0x1008)->name), "empty-room");
	ck_assert_str_eq(pr__jitdump_str(&jd, pr__jitdump_find(&jd, 0x1010)->name), "old");
	ck_assert_str_eq(pr__jitdump_str(&jd, pr__jitdump_find(&jd, 0x1040)->name), "inner");
	ck_assert_str_eq(pr__jitdump_str(&jd, pr__jitdump_find(&jd, 0x107f)->name), "inner");
	ck_assert_str_eq(pr__jitdump_str(&jd, pr__jitdump_find(&jd, 0x1080)->name), "old");
	ck_assert_str_eq(pr__jitdump_str(&jd, pr__jitdump_find(&jd, 0x10f0)->name), "overlapping");
	ck_assert_str_eq(pr__jitdump_str(&jd, pr__jitdump_find(&jd, 0x110f)->name), "overlapping");
	ck_assert_ptr_null(pr__jitdump_find(&jd, 0x1110));
	ck_assert_ptr_null(pr__jitdump_find(&jd, 0x2000));
	c = pr__jitdump_find(&jd, 0x1010);
	ck_assert_uint_eq(c->nr_lines, 0);
	ck_assert_ptr_null(pr__jitdump_line(&jd, c, 0x1010, &line));
	ck_assert_uint_eq(line, 0);
	/* Code loaded later, over "inner": found after the new read. */
	free(w.buf);
	memset(&w, 0, sizeof(w));
	jdw_load(&w, 6, 0x1050, 0x8, 6, "newest", 0);
	ck_assert_int_eq(pr__jitdump_feed(&jd, w.buf, w.len, "t", &lg), 0);
	c = pr__jitdump_find(&jd, 0x1054);
	ck_assert_str_eq(pr__jitdump_str(&jd, c->name), "newest");
	ck_assert_str_eq(pr__jitdump_str(&jd, pr__jitdump_find(&jd, 0x1058)->name), "inner");
	pr__jitdump_clear(&jd);
	free(w.buf);
}
END_TEST

START_TEST(a_file_is_read_as_it_grows_and_a_fifo_or_a_huge_file_is_refused)
{
	char dir[] = "/tmp/ds-jitdump-XXXXXX", path[64];
	struct pr_jitdump jd = { 0 };
	struct jdw w;
	size_t half;
	int fd;

	ck_assert_ptr_nonnull(mkdtemp(dir));
	snprintf(path, sizeof(path), "%s/jit-1.dump", dir);
	write_all_kinds(&w, false);
	/* Up to the move. */
	half = w.len - 100;
	fd = open(path, O_RDWR | O_CREAT | O_TRUNC, 0600);
	ck_assert_int_ge(fd, 0);
	ck_assert_int_eq(write(fd, w.buf, half), (ssize_t)half);
	ck_assert_int_eq(pr__jitdump_read_fd(&jd, fd, path, &lg), 0);
	ck_assert_int_eq(jd.state, JD_READING);
	ck_assert_ptr_nonnull(pr__jitdump_find(&jd, HOT));
	ck_assert_ptr_null(pr__jitdump_find(&jd, MOVED));
	ck_assert_int_eq(write(fd, w.buf + half, w.len - half), (ssize_t)(w.len - half));
	ck_assert_int_eq(pr__jitdump_read_fd(&jd, fd, path, &lg), 0);
	check_all_kinds(&jd);
	/* Larger than any runtime's: not read, what was read stays. */
	ck_assert_int_eq(ftruncate(fd, (off_t)PR_JITDUMP_MAX + 1), 0);
	logtext[0] = 0;
	ck_assert_int_eq(pr__jitdump_read_fd(&jd, fd, path, &lg), -EFBIG);
	ck_assert_msg(strstr(logtext, "larger than 512 MiB; not read"), "%s", logtext);
	check_all_kinds(&jd);
	pr__jitdump_clear(&jd);
	close(fd);
	unlink(path);
	/* A FIFO. */
	ck_assert_int_eq(mkfifo(path, 0600), 0);
	fd = open(path, O_RDONLY | O_NONBLOCK);
	ck_assert_int_ge(fd, 0);
	logtext[0] = 0;
	ck_assert_int_eq(pr__jitdump_read_fd(&jd, fd, path, &lg), -EINVAL);
	ck_assert_msg(strstr(logtext, "not a regular file"), "%s", logtext);
	close(fd);
	unlink(path);
	rmdir(dir);
	pr__jitdump_clear(&jd);
	free(w.buf);
}
END_TEST

/* V8 writes its lines 0x40 past the code (where perf inject put the
 * code); other runtimes at the code. */
START_TEST(v8s_lines_are_found_where_v8_means_them)
{
	static const struct jdw_line lines[] = {
		{ 0x1040, 1, "/app.js" },
		{ 0x1050, 2, "/app.js" },
	};
	struct pr_jitdump jd = { 0 };
	const struct jd_code *c;
	uint32_t line;
	struct jdw w;

	jdw_header(&w, 1, false);
	jdw_debug(&w, 1, 0x1000, lines, 2);
	jdw_load(&w, 2, 0x1000, 0x100, 1, "JS:*f /app.js:1:1", 0);
	jdw_debug(&w, 3, 0x2000, lines, 2);
	jdw_load(&w, 4, 0x2000, 0x100, 2, "LazyCompile:*g /app.js:1:1", 0);
	jdw_debug(&w, 5, 0x1000, lines, 2);
	jdw_load(&w, 6, 0x1000, 0x100, 3, "Lapp/Main;run", 0);
	ck_assert_int_eq(pr__jitdump_feed(&jd, w.buf, w.len, "t", &lg), 0);
	/* The JVM's, loaded last over the same addresses. */
	c = pr__jitdump_find(&jd, 0x1000);
	ck_assert_ptr_null(pr__jitdump_line(&jd, c, 0x1000, &line));
	ck_assert_str_eq(pr__jitdump_line(&jd, c, 0x1040, &line), "/app.js");
	ck_assert_uint_eq(line, 1);
	ck_assert_str_eq(pr__jitdump_line(&jd, c, 0x1050, &line), "/app.js");
	ck_assert_uint_eq(line, 2);
	/* V8's: the first instruction is the first line (the entries' code
	 * address is another's: only the code's own place counts). */
	c = &jd.codes[0];
	ck_assert_str_eq(pr__jitdump_str(&jd, c->name), "JS:*f /app.js:1:1");
	ck_assert_str_eq(pr__jitdump_line(&jd, c, 0x1000, &line), "/app.js");
	ck_assert_uint_eq(line, 1);
	ck_assert_str_eq(pr__jitdump_line(&jd, c, 0x1010, &line), "/app.js");
	ck_assert_uint_eq(line, 2);
	c = pr__jitdump_find(&jd, 0x2000);
	ck_assert_uint_eq(c->line_bias, 0x40);
	pr__jitdump_clear(&jd);
	free(w.buf);
}
END_TEST

/* node 20 writes a freed copy of a script's name (the allocator's words
 * over its start): no file is better than that one. */
START_TEST(a_file_name_that_is_no_text_names_no_file)
{
	static const struct jdw_line lines[] = {
		{ 0x1000, 8, "[\xf6v " },
		{ 0x1010, 9, "/app/\x01.js" },
		{ 0x1020, 10, "/app/caf\xc3\xa9.js" },
	};
	struct pr_jitdump jd = { 0 };
	const struct jd_code *c;
	uint32_t line = 1;
	struct jdw w;

	jdw_header(&w, 1, false);
	jdw_debug(&w, 1, 0x1000, lines, 3);
	jdw_load(&w, 2, 0x1000, 0x100, 1, "Lapp/Main;run", 0);
	ck_assert_int_eq(pr__jitdump_feed(&jd, w.buf, w.len, "t", &lg), 0);
	c = pr__jitdump_find(&jd, 0x1000);
	ck_assert_ptr_null(pr__jitdump_line(&jd, c, 0x1004, &line));
	ck_assert_uint_eq(line, 0);
	ck_assert_ptr_null(pr__jitdump_line(&jd, c, 0x1014, &line));
	ck_assert_str_eq(pr__jitdump_line(&jd, c, 0x1024, &line), "/app/caf\xc3\xa9.js");
	ck_assert_uint_eq(line, 10);
	pr__jitdump_clear(&jd);
	free(w.buf);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("jitdump");
	TCase *tc = tcase_create("reader");

	tcase_set_timeout(tc, 120);
	tcase_add_test(tc, every_record_kind_is_read_in_either_byte_order);
	tcase_add_test(tc, a_file_cut_anywhere_reads_its_whole_records_and_the_rest_later);
	tcase_add_test(tc, a_damaged_record_ends_the_reading_with_what_came_before);
	tcase_add_test(tc, no_damage_makes_the_reader_read_out_of_bounds);
	tcase_add_test(tc, later_code_at_the_same_addresses_wins);
	tcase_add_test(tc, a_file_is_read_as_it_grows_and_a_fifo_or_a_huge_file_is_refused);
	tcase_add_test(tc, v8s_lines_are_found_where_v8_means_them);
	tcase_add_test(tc, a_file_name_that_is_no_text_names_no_file);
	suite_add_tcase(s, tc);
	return run_suite(s);
}
