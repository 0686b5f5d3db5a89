/* SPDX-License-Identifier: Apache-2.0 */
/*
 * perf record -z files: the data section as compressed records of both
 * kinds perf writes, read as the plain records they hold, and their
 * damage reported as damage (never as "compressed, unsupported"), at the
 * compressed record's offset, after the records read before it.
 *
 * The files are the small fixture's with its records compressed here,
 * cut where perf's writer may cut them: a zstd frame spanning two
 * compressed records, a record inflated half from one and half from the
 * next.
 */
#include <check.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zstd.h>

#include "perfdata-fixture.h"

static const uint32_t ztypes[] = {
	PERFDATA_RECORD_COMPRESSED, PERFDATA_RECORD_COMPRESSED2,
};

/* `src` as one zstd frame into `dst` (room for `cap`): its length. */
static size_t frame(void *dst, size_t cap, const void *src, size_t len)
{
	size_t n = ZSTD_compress(dst, cap, src, len, 3);

	ck_assert(!ZSTD_isError(n));
	return n;
}

/* A compressed record of `type` holding `z` at `dst`: its size. */
static size_t put_z(unsigned char *dst, uint32_t type, const void *z, size_t zlen)
{
	struct perf_event_header hd = { .type = type };
	size_t head = type == PERFDATA_RECORD_COMPRESSED ? 8 : 16;
	size_t size = head + zlen;
	uint64_t n = zlen;

	/* COMPRESSED2 pads to 8, so the next record stays aligned;
	 * COMPRESSED does not (perf 6.1 writes them so). */
	if (type == PERFDATA_RECORD_COMPRESSED2)
		size = (size + 7) & ~(size_t)7;
	hd.size = (uint16_t)size;
	memset(dst, 0, size);
	memcpy(dst, &hd, 8);
	if (head == 16)
		memcpy(dst + 8, &n, 8);
	memcpy(dst + head, z, zlen);
	return size;
}

/* The fixture with its data section replaced by `data` (`dlen` bytes):
 * the feature sections after it move along. */
static unsigned char *with_data(const unsigned char *data, size_t dlen, size_t *outlen)
{
	struct perfdata_header h;
	size_t len, tail;
	unsigned char *orig = small_copy(&len, &h), *out;
	int64_t delta = (int64_t)dlen - (int64_t)h.data.size;
	size_t nfeat = 0;

	tail = len - (size_t)(h.data.offset + h.data.size);
	out = malloc((size_t)h.data.offset + dlen + tail);
	ck_assert_ptr_nonnull(out);
	memcpy(out, orig, (size_t)h.data.offset);
	memcpy(out + h.data.offset, data, dlen);
	memcpy(out + h.data.offset + dlen, orig + h.data.offset + h.data.size, tail);
	for (int i = 0; i < 4; i++)
		nfeat += (size_t)__builtin_popcountll(h.features[i]);
	for (size_t i = 0; i < nfeat; i++) {
		struct perfdata_section sec;
		unsigned char *at = out + h.data.offset + dlen + i * sizeof(sec);

		memcpy(&sec, at, sizeof(sec));
		sec.offset = (uint64_t)((int64_t)sec.offset + delta);
		memcpy(at, &sec, sizeof(sec));
	}
	h.data.size = dlen;
	memcpy(out, &h, sizeof(h));
	*outlen = (size_t)h.data.offset + dlen + tail;
	free(orig);
	return out;
}

/* The fixture's records, their times and addresses, in reading order. */
struct seen {
	int n;
	uint32_t type[16];
	uint64_t time[16];
	uint64_t ip[16];
};

static int keep_cb(const struct pr_record *rec, void *arg)
{
	struct seen *s = arg;

	if (s->n < 16) {
		s->type[s->n] = rec->type;
		s->time[s->n] = rec->time;
		s->ip[s->n] = rec->type == PERF_RECORD_SAMPLE ? rec->u.sample.ip : 0;
	}
	s->n++;
	return 0;
}

static int read_all(const unsigned char *buf, size_t len, struct seen *s)
{
	PR_OPTS(pr_file_opts, o, .log = keep_log);
	const char *path = tmp_path("z.data");
	FILE *out = fopen(path, "w");
	struct seen by_path;
	struct pr_file *f;
	int n;

	memset(s, 0, sizeof(*s));
	logtext[0] = 0;
	f = pr_file_open_mem(buf, len, &o);
	ck_assert_msg(f, "%s", logtext);
	n = pr_file_consume(f, keep_cb, s);
	/* Read again from the start: the stream starts again too. */
	pr_file_rewind(f);
	ck_assert_int_eq(pr_file_consume(f, count_cb, &(int){ 0 }), n);
	pr_file_close(f);
	/* The same bytes in a file, read by path (into windows), give the
	 * same records. */
	ck_assert_ptr_nonnull(out);
	ck_assert_uint_eq(fwrite(buf, 1, len, out), len);
	ck_assert_int_eq(fclose(out), 0);
	memset(&by_path, 0, sizeof(by_path));
	f = pr_file_open(path, &o);
	ck_assert_msg(f, "%s", logtext);
	ck_assert_int_eq(pr_file_consume(f, keep_cb, &by_path), n);
	pr_file_close(f);
	ck_assert_mem_eq(&by_path, s, sizeof(by_path));
	return n;
}

/* The fixture's data, cut at a point inside its second record. */
static const unsigned char *plain_data(size_t *dlen, size_t *cut, struct seen *plain)
{
	static unsigned char data[4096];
	struct perfdata_header h;
	size_t len;
	unsigned char *orig = small_copy(&len, &h);
	uint16_t first;

	ck_assert_uint_le(h.data.size, sizeof(data));
	memcpy(data, orig + h.data.offset, (size_t)h.data.size);
	*dlen = (size_t)h.data.size;
	memcpy(&first, data + 6, 2);
	*cut = first + 12;
	ck_assert_int_eq(read_all(orig, len, plain), 5);
	free(orig);
	return data;
}

START_TEST(compressed_records_read_as_the_records_they_hold)
{
	static unsigned char z[8192], out[8192];
	uint32_t type = ztypes[_i];
	struct seen plain, got;
	size_t dlen, cut, za, zb, o = 0, len;
	const unsigned char *data = plain_data(&dlen, &cut, &plain);
	unsigned char *buf;

	/* Frame 1: up to the middle of the second record; frame 2: the
	 * rest, split over two compressed records.  Empty compressed
	 * records (no zstd bytes at all) first and between hold nothing. */
	za = frame(z, sizeof(z), data, cut);
	zb = frame(z + za, sizeof(z) - za, data + cut, dlen - cut);
	o += put_z(out + o, type, z, 0);
	o += put_z(out + o, type, z, za);
	o += put_z(out + o, type, z, 0);
	o += put_z(out + o, type, z + za, zb / 2);
	o += put_z(out + o, type, z + za + zb / 2, zb - zb / 2);
	buf = with_data(out, o, &len);
	ck_assert_int_eq(read_all(buf, len, &got), 5);
	ck_assert_str_eq(logtext, "");
	ck_assert_mem_eq(got.type, plain.type, sizeof(got.type));
	ck_assert_mem_eq(got.time, plain.time, sizeof(got.time));
	ck_assert_mem_eq(got.ip, plain.ip, sizeof(got.ip));
	/* In time order across the compressed records, as the plain file. */
	ck_assert_uint_eq(got.time[1], 10);
	ck_assert_uint_eq(got.time[4], 40);
	free(buf);
}
END_TEST

/* Damage in a compressed record: reading stops there with `why` naming
 * its offset `at` (from the data's start), after `before` records; the
 * stats say damage, not an unsupported record. */
static void check_damage(const unsigned char *data, size_t dlen, const char *why,
			 size_t at, int before)
{
	PR_OPTS(pr_file_opts, o, .log = keep_log);
	struct pr_file_stats st = { .sz = sizeof(st) };
	struct perfdata_header h;
	size_t len;
	unsigned char *buf = with_data(data, dlen, &len);
	struct pr_file *f;
	char where[64];
	int n = 0;

	memcpy(&h, buf, sizeof(h));
	logtext[0] = 0;
	f = pr_file_open_mem(buf, len, &o);
	ck_assert_msg(f, "%s", logtext);
	ck_assert_int_eq(pr_file_consume(f, count_cb, &n), -EBADMSG);
	ck_assert_int_eq(n, before);
	ck_assert_msg(strstr(logtext, why), "log lacks '%s': %s", why, logtext);
	snprintf(where, sizeof(where), "at byte offset %llu",
		 (unsigned long long)(h.data.offset + at));
	ck_assert_msg(strstr(logtext, where), "log lacks '%s': %s", where, logtext);
	ck_assert_msg(!strstr(logtext, "perf inject"), "%s", logtext);
	ck_assert_int_eq(pr_file_stats(f, &st), 0);
	ck_assert(st.damaged);
	ck_assert_uint_eq(st.damaged_at, h.data.offset + at);
	ck_assert_uint_eq(st.unsupported_at, 0);
	pr_file_close(f);
	free(buf);
}

START_TEST(damaged_zstd_data_is_reported_as_damage_after_what_came_before)
{
	static unsigned char z[8192], out[8192];
	uint32_t type = ztypes[_i];
	struct seen plain;
	size_t dlen, cut, za, zb, o = 0, second;
	const unsigned char *data = plain_data(&dlen, &cut, &plain);

	za = frame(z, sizeof(z), data, cut);
	zb = frame(z + za, sizeof(z) - za, data + cut, dlen - cut);
	o += put_z(out + o, type, z, za);
	second = o;
	o += put_z(out + o, type, z + za, zb);
	/* The second frame's magic number broken: the first record (whole
	 * in the first frame) is read. */
	out[second + (type == PERFDATA_RECORD_COMPRESSED ? 8 : 16)] ^= 0xff;
	check_damage(out, o, "damaged zstd data", second, 1);
}
END_TEST

START_TEST(a_record_cut_at_the_compressed_data_end_is_reported_as_damage)
{
	static unsigned char z[8192], out[8192];
	uint32_t type = ztypes[_i];
	struct seen plain;
	size_t dlen, cut, za;
	const unsigned char *data = plain_data(&dlen, &cut, &plain);

	/* Only the first frame: the second record is cut. */
	za = frame(z, sizeof(z), data, cut);
	check_damage(out, put_z(out, type, z, za), "end inside a record (12 bytes", 0, 1);
}
END_TEST

START_TEST(a_garbage_compressed_record_is_damage_not_unsupported)
{
	struct perfdata_header h;
	size_t len;
	unsigned char *buf = small_copy(&len, &h);
	unsigned char data[4096];
	uint32_t type = ztypes[_i];

	/* The fixture's first record called compressed: its bytes are no
	 * zstd stream (or, for COMPRESSED2, no sane data size). */
	memcpy(data, buf + h.data.offset, (size_t)h.data.size);
	memcpy(data, &type, 4);
	check_damage(data, (size_t)h.data.size,
		     type == PERFDATA_RECORD_COMPRESSED ? "damaged zstd data" :
		     "compressed record (perf record -z)", 0, 0);
	free(buf);
}
END_TEST

START_TEST(a_record_inflating_past_any_ring_is_damage_not_a_runaway)
{
	static unsigned char z[65536], out[65536];
	size_t big = (size_t)32 << 20, za;
	unsigned char *zeros = calloc(1, big);

	/* 32 MiB of zeros, a few KiB compressed: past the 16 MiB a
	 * compressed record may hold when no COMPRESSED feature says the
	 * ring's size. */
	ck_assert_ptr_nonnull(zeros);
	za = frame(z, sizeof(z), zeros, big);
	free(zeros);
	ck_assert_uint_lt(za, 60000);
	check_damage(out, put_z(out, ztypes[_i], z, za), "inflates past 16384 KiB", 0, 0);
}
END_TEST

void add_zstd_tests(TCase *tc)
{
	tcase_add_loop_test(tc, compressed_records_read_as_the_records_they_hold, 0, 2);
	tcase_add_loop_test(tc, damaged_zstd_data_is_reported_as_damage_after_what_came_before,
			    0, 2);
	tcase_add_loop_test(tc, a_record_cut_at_the_compressed_data_end_is_reported_as_damage,
			    0, 2);
	tcase_add_loop_test(tc, a_garbage_compressed_record_is_damage_not_unsupported, 0, 2);
	tcase_add_loop_test(tc, a_record_inflating_past_any_ring_is_damage_not_a_runaway, 0, 2);
}
