/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Damaged perf.data files: every kind of damage is refused, or salvaged,
 * with a message naming what is wrong and the byte offset, never a crash,
 * a hang or a runaway allocation.
 */
#include <check.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "perfdata-fixture.h"

/* Open a damaged copy (from memory, and by path): it must fail with
 * EBADMSG and a message naming `offset`. */
static void check_refused(const unsigned char *buf, size_t len, const char *why,
			  long offset)
{
	PR_OPTS(pr_file_opts, o, .log = keep_log);

	for (int by_path = 0; by_path < 2; by_path++) {
		struct pr_file *f;

		logtext[0] = 0;
		errno = 0;
		f = open_bytes(buf, len, by_path, &o);
		ck_assert_msg(!f, "a damaged file was accepted (expected: %s)", why);
		ck_assert_int_eq(errno, EBADMSG);
		ck_assert_msg(strstr(logtext, why), "log lacks '%s': %s", why, logtext);
		if (offset >= 0) {
			char at[64];

			snprintf(at, sizeof(at), "at byte offset %ld", offset);
			ck_assert_msg(strstr(logtext, at), "log lacks '%s': %s", at, logtext);
		}
	}
}

/* One of check_read_refused()'s two reads. */
static void read_refused(const unsigned char *buf, size_t len, bool by_path,
			 const char *why, long offset)
{
	PR_OPTS(pr_file_opts, o, .log = keep_log);
	struct pr_file_stats st = { .sz = sizeof(st) };
	struct pr_file *f;
	char at[64];
	int n = 0;

	logtext[0] = 0;
	f = open_bytes(buf, len, by_path, &o);
	ck_assert_msg(f, "%s", logtext);
	ck_assert_int_eq(pr_file_consume(f, count_cb, &n), -EBADMSG);
	ck_assert_msg(strstr(logtext, why), "log lacks '%s': %s", why, logtext);
	snprintf(at, sizeof(at), "at byte offset %ld", offset);
	ck_assert_msg(strstr(logtext, at), "log lacks '%s': %s", at, logtext);
	ck_assert_int_le(n, 5);
	/* The walk stays stopped: no loop over the bad header. */
	ck_assert_int_eq(pr_file_consume(f, count_cb, &n), 0);
	/* The stats say where: damage, or a record this reader cannot read. */
	ck_assert_int_eq(pr_file_stats(f, &st), 0);
	if (strstr(why, "perf inject")) {
		ck_assert(!st.damaged);
		ck_assert_uint_eq(st.unsupported_at, (uint64_t)offset);
	} else {
		ck_assert(st.damaged);
		ck_assert_uint_eq(st.damaged_at, (uint64_t)offset);
		ck_assert_uint_eq(st.unsupported_at, 0);
	}
	ck_assert_uint_eq(st.corrupt_records, 0);
	pr_file_close(f);
}

/* A damaged record header: the file opens (from memory, and by path),
 * and reading stops there with an error naming `why` at `offset`, after
 * what came before it. */
static void check_read_refused(const unsigned char *buf, size_t len,
			       const char *why, long offset)
{
	for (int by_path = 0; by_path < 2; by_path++)
		read_refused(buf, len, by_path, why, offset);
}

START_TEST(a_wrong_magic_is_refused)
{
	struct perfdata_header h;
	size_t len;
	unsigned char *buf = small_copy(&len, &h);

	memcpy(buf, "NOTPERF!", 8);
	check_refused(buf, len, "not a perf.data file", 0);
	h.magic = PERFDATA_MAGIC_SWAPPED;
	memcpy(buf, &h.magic, 8);
	check_refused(buf, len, "big-endian", 0);
	memcpy(buf, "PERFFILE", 8);
	check_refused(buf, len, "version 1", 0);
	free(buf);
}
END_TEST

START_TEST(a_pipe_mode_file_is_refused_with_how_to_convert_it)
{
	unsigned char buf[64] = "PERFILE2";
	uint64_t size = 16;

	memcpy(buf + 8, &size, 8);
	check_refused(buf, sizeof(buf), "perf inject", 8);
}
END_TEST

START_TEST(attr_size_zero_is_refused)
{
	struct perfdata_header h;
	size_t len;
	unsigned char *buf = small_copy(&len, &h);
	uint64_t zero = 0;

	memcpy(buf + offsetof(struct perfdata_header, attr_size), &zero, 8);
	check_refused(buf, len, "impossible attr_size (0)", 16);
	free(buf);
}
END_TEST

START_TEST(absurd_section_sizes_are_refused_without_allocating_them)
{
	struct perfdata_header h;
	size_t len;
	unsigned char *buf = small_copy(&len, &h);
	unsigned char *copy = malloc(len);
	uint64_t huge = UINT64_C(1) << 62;

	memcpy(copy, buf, len);
	memcpy(copy + offsetof(struct perfdata_header, attrs.size), &huge, 8);
	check_refused(copy, len, "attrs section runs past the end", 24);

	/* The attr's own ids section pointing far away. */
	memcpy(copy, buf, len);
	memcpy(copy + h.attrs.offset + sizeof(struct perf_event_attr) + 8, &huge, 8);
	check_refused(copy, len, "event ids section runs past the end",
		      (long)(h.attrs.offset + sizeof(struct perf_event_attr)));

	memcpy(copy, buf, len);
	memcpy(copy + offsetof(struct perfdata_header, data.offset), &huge, 8);
	check_refused(copy, len, "data section starts past the end", 40);
	free(copy);
	free(buf);
}
END_TEST

START_TEST(a_record_running_past_the_data_section_is_refused)
{
	struct perfdata_header h;
	size_t len;
	unsigned char *buf = small_copy(&len, &h);
	uint16_t size = 0xfff8;

	/* The first record's size. */
	memcpy(buf + h.data.offset + 6, &size, 2);
	check_read_refused(buf, len, "record runs past the end of the data section",
			   (long)h.data.offset);
	size = 0;
	memcpy(buf + h.data.offset + 6, &size, 2);
	check_read_refused(buf, len, "record size below 8", (long)h.data.offset);
	free(buf);
}
END_TEST

START_TEST(a_file_from_another_architecture_is_refused)
{
	struct perfdata_header h;
	size_t len;
	unsigned char *buf = small_copy(&len, &h);
	unsigned char *p = memmem(buf, len, "x86_64", 7);

	ck_assert_ptr_nonnull(p);
	memcpy(p, "arm64\0", 6);
	check_refused(buf, len, "recorded on arm64", -1);
	free(buf);
}
END_TEST

/* The index of feature `feat` in the file's feature table. */
static int feature_slot(const struct perfdata_header *h, int feat)
{
	int k = 0;

	for (int b = 0; b < feat; b++)
		k += (int)(h->features[b / 64] >> (b % 64) & 1);
	ck_assert(h->features[feat / 64] >> (feat % 64) & 1);
	return k;
}

/* Absurd counts inside features: skipped with a warning, records intact. */
START_TEST(malformed_features_are_skipped_and_the_records_still_read)
{
	PR_OPTS(pr_file_opts, o, .log = keep_log);
	struct perfdata_header h;
	size_t len;
	unsigned char *buf = small_copy(&len, &h);
	uint64_t table = h.data.offset + h.data.size, huge = UINT64_C(1) << 60;
	struct perfdata_section sec;
	struct pr_file_stats st = { .sz = sizeof(st) };
	struct pr_file *f;
	uint32_t nr = 0xffffffff;

	/* The command line claims four billion strings. */
	memcpy(&sec, buf + table + feature_slot(&h, FEAT_CMDLINE) * sizeof(sec),
	       sizeof(sec));
	memcpy(buf + sec.offset, &nr, 4);
	/* The host name's section points far past the end. */
	memcpy(buf + table + feature_slot(&h, FEAT_HOSTNAME) * sizeof(sec), &huge, 8);
	logtext[0] = 0;
	f = pr_file_open_mem(buf, len, &o);
	ck_assert_msg(f, "%s", logtext);
	ck_assert_msg(strstr(logtext, "is malformed"), "%s", logtext);
	ck_assert_msg(strstr(logtext, "runs past the end of the file; ignored"), "%s", logtext);
	ck_assert_ptr_null(pr_file_string(f, PR_FILE_HOSTNAME));
	ck_assert_str_eq(pr_file_string(f, PR_FILE_ARCH), "x86_64");
	{
		int n = 0;

		ck_assert_int_eq(pr_file_consume(f, count_cb, &n), 5);
	}
	pr_file_stats(f, &st);
	ck_assert_uint_eq(st.samples, 4);
	pr_file_close(f);
	free(buf);
}
END_TEST

/* Cut the file at every length: each prefix is refused cleanly or read
 * as a salvaged recording, never more records than the whole had. */
START_TEST(every_truncation_is_refused_or_salvaged)
{
	PR_OPTS(pr_file_opts, o, .log = keep_log);
	struct perfdata_header h;
	size_t len;
	unsigned char *buf = small_copy(&len, &h);
	int salvaged_some = 0;

	/* From memory, and by path (cut + len: the second time round). */
	for (size_t i = 0; i < 2 * len; i++) {
		size_t cut = i % len;
		unsigned char *prefix = malloc(cut ? cut : 1);
		struct pr_file *f;

		memcpy(prefix, buf, cut);
		logtext[0] = 0;
		f = open_bytes(prefix, cut, i >= len, &o);
		if (f) {
			struct pr_file_stats st = { .sz = sizeof(st) };
			int n = 0;

			pr_file_stats(f, &st);
			ck_assert_int_ge(pr_file_consume(f, count_cb, &n), 0);
			ck_assert_int_le(n, 5);
			if (cut < h.data.offset + h.data.size) {
				ck_assert(st.truncated);
				/* Its header claims more: a damaged copy. */
				ck_assert(st.damaged);
				ck_assert_uint_eq(st.data_claimed, h.data.size);
				ck_assert_uint_lt(st.data_size, st.data_claimed);
				ck_assert_msg(strstr(logtext, "last complete record"), "%s", logtext);
			}
			salvaged_some += n > 0;
			pr_file_close(f);
		} else {
			ck_assert_msg(logtext[0], "cut at %zu refused without a message", cut);
		}
		free(prefix);
	}
	ck_assert_int_gt(salvaged_some, 0);
	free(buf);
}
END_TEST

/* A recorder killed before it finished leaves data size 0 in the header:
 * the records it flushed are still read. */
START_TEST(an_unfinished_recording_is_read_to_its_last_complete_record)
{
	PR_OPTS(pr_file_opts, o, .log = keep_log);
	struct perfdata_header h;
	size_t len;
	unsigned char *buf = small_copy(&len, &h);
	struct pr_file_stats st = { .sz = sizeof(st) };
	uint64_t zero = 0;
	struct pr_file *f;
	int n = 0;

	/* What the writer's first header says: no data size, no features. */
	memcpy(buf + offsetof(struct perfdata_header, data.size), &zero, 8);
	memset(buf + offsetof(struct perfdata_header, features), 0, 32);
	/* Cut halfway through the last record, as a kill mid-write would. */
	len = h.data.offset + h.data.size - 100;
	for (int by_path = 0; by_path < 2; by_path++) {
		logtext[0] = 0;
		n = 0;
		f = open_bytes(buf, len, by_path, &o);
		ck_assert_msg(f, "%s", logtext);
		ck_assert_msg(strstr(logtext, "did not finish"), "%s", logtext);
		ck_assert_int_eq(pr_file_consume(f, count_cb, &n), 4);
		/* Unfinished, not damaged. */
		ck_assert_int_eq(pr_file_stats(f, &st), 0);
		ck_assert(st.truncated);
		ck_assert(!st.damaged);
		pr_file_close(f);
	}
	free(buf);
}
END_TEST

/* Thousands of attrs all claiming the file's bytes as their id table would
 * ask for a table quadratic in the file's size. */
START_TEST(overlapping_id_tables_are_refused)
{
	enum { N = 64 };
	struct perfdata_header h;
	struct perf_event_attr a = test_attr();
	size_t entry = PERFDATA_ATTR_SIZE + sizeof(struct perfdata_section);
	size_t len = sizeof(h) + N * entry + 4096;
	unsigned char *buf = calloc(1, len);
	struct perfdata_section ids = { 0, len & ~(size_t)7 };

	memset(&h, 0, sizeof(h));
	h.magic = PERFDATA_MAGIC;
	h.size = sizeof(h);
	h.attr_size = entry;
	h.attrs.offset = sizeof(h);
	h.attrs.size = N * entry;
	h.data.offset = sizeof(h) + N * entry;
	memcpy(buf, &h, sizeof(h));
	a.size = PERFDATA_ATTR_SIZE;
	for (size_t i = 0; i < N; i++) {
		memcpy(buf + sizeof(h) + i * entry, &a, PERFDATA_ATTR_SIZE);
		memcpy(buf + sizeof(h) + i * entry + PERFDATA_ATTR_SIZE, &ids, sizeof(ids));
	}
	check_refused(buf, len, "event ids sections add up to more than the file", -1);
	free(buf);
}
END_TEST

void add_damage_tests(TCase *tc)
{
	tcase_add_test(tc, a_wrong_magic_is_refused);
	tcase_add_test(tc, a_pipe_mode_file_is_refused_with_how_to_convert_it);
	tcase_add_test(tc, attr_size_zero_is_refused);
	tcase_add_test(tc, absurd_section_sizes_are_refused_without_allocating_them);
	tcase_add_test(tc, a_record_running_past_the_data_section_is_refused);
	tcase_add_test(tc, a_file_from_another_architecture_is_refused);
	tcase_add_test(tc, malformed_features_are_skipped_and_the_records_still_read);
	tcase_add_test(tc, every_truncation_is_refused_or_salvaged);
	tcase_add_test(tc, an_unfinished_recording_is_read_to_its_last_complete_record);
	tcase_add_test(tc, overlapping_id_tables_are_refused);
}
