/* SPDX-License-Identifier: Apache-2.0 */
/*
 * PERF_SAMPLE_READ: the counts a sample carries, in every read_format the
 * kernel writes (perf_output_read()), read back through pr_sample_read();
 * and records whose counts do not fit them, refused without reading past.
 */
#include <check.h>
#include <errno.h>
#include <string.h>

#include "checkmain.h"
#include "capture/synth.h"
#include "records/records.h"

#define SAMPLE_TYPE (PERF_SAMPLE_IDENTIFIER | PERF_SAMPLE_TID | PERF_SAMPLE_READ | \
		     PERF_SAMPLE_CALLCHAIN)

static struct pr_parse_cfg cfg_for(uint64_t read_format)
{
	struct perf_event_attr attr = {
		.size = sizeof(attr),
		.sample_type = SAMPLE_TYPE,
		.read_format = read_format,
		.sample_id_all = 1,
	};
	struct pr_parse_cfg cfg;

	pr__parse_cfg_from_attr(&cfg, &attr);
	return cfg;
}

/* A sample at the returned offset of `s`.  Value k is 1000 + k, its id 500 + k, its lost count 7; enabled 111,
 * running 99.  A one-entry call chain follows, to show the parser went
 * on at the right place. */
static size_t put_read_sample(struct synth *s, uint64_t rf, uint64_t nr)
{
	synth_begin(s, PERF_RECORD_SAMPLE, PERF_RECORD_MISC_USER);
	synth_u64(s, 42);                     /* identifier */
	synth_u32x2(s, 10, 11);
	if (rf & PERF_FORMAT_GROUP) {
		synth_u64(s, nr);
		if (rf & PERF_FORMAT_TOTAL_TIME_ENABLED)
			synth_u64(s, 111);
		if (rf & PERF_FORMAT_TOTAL_TIME_RUNNING)
			synth_u64(s, 99);
		for (uint64_t k = 0; k < nr; k++) {
			synth_u64(s, 1000 + k);
			if (rf & PERF_FORMAT_ID)
				synth_u64(s, 500 + k);
			if (rf & PERF_FORMAT_LOST)
				synth_u64(s, 7);
		}
	} else {
		synth_u64(s, 1000);
		if (rf & PERF_FORMAT_TOTAL_TIME_ENABLED)
			synth_u64(s, 111);
		if (rf & PERF_FORMAT_TOTAL_TIME_RUNNING)
			synth_u64(s, 99);
		if (rf & PERF_FORMAT_ID)
			synth_u64(s, 500);
		if (rf & PERF_FORMAT_LOST)
			synth_u64(s, 7);
	}
	synth_u64(s, 1);                      /* callchain nr */
	synth_u64(s, 0xabcdef);
	synth_end(s);
	return s->start;
}

static int parse(uint64_t rf, const struct synth *s, size_t at, struct pr_record *rec,
		 const char **why)
{
	struct pr_parse_cfg cfg = cfg_for(rf);
	uint16_t size;

	memcpy(&size, s->buf + at + 6, 2);
	return pr__record_parse(&cfg, s->buf + at, size, rec, why);
}

static const uint64_t formats = PERF_FORMAT_TOTAL_TIME_ENABLED |
	PERF_FORMAT_TOTAL_TIME_RUNNING | PERF_FORMAT_ID | PERF_FORMAT_GROUP |
	PERF_FORMAT_LOST;

START_TEST(every_read_format_reads_back_values_ids_and_times)
{
	static struct synth s;

	/* Every subset of the five format bits. */
	for (uint64_t rf = 0; rf <= formats; rf++) {
		uint64_t nr = rf & PERF_FORMAT_GROUP ? 3 : 1;
		struct pr_record rec;
		const struct pr_sample *smp = &rec.u.sample;
		const char *why = NULL;
		size_t at;

		if (rf & ~formats)
			continue;
		s.len = 0;
		at = put_read_sample(&s, rf, nr);
		ck_assert_msg(!parse(rf, &s, at, &rec, &why), "format 0x%llx: %s",
			      (unsigned long long)rf, why);
		ck_assert_uint_eq(smp->nr_read, nr);
		ck_assert_uint_eq(smp->read_time_enabled,
				  rf & PERF_FORMAT_TOTAL_TIME_ENABLED ? 111 : 0);
		ck_assert_uint_eq(smp->read_time_running,
				  rf & PERF_FORMAT_TOTAL_TIME_RUNNING ? 99 : 0);
		for (uint32_t k = 0; k < nr; k++) {
			uint64_t value = 0, id = 1;

			ck_assert_int_eq(pr_sample_read(smp, k, &value, &id), 0);
			ck_assert_uint_eq(value, 1000 + k);
			ck_assert_uint_eq(id, rf & PERF_FORMAT_ID ? 500 + k : 0);
		}
		ck_assert_int_eq(pr_sample_read(smp, (uint32_t)nr, NULL, NULL), -ERANGE);
		ck_assert_uint_eq(smp->nr_callchain, 1);
		ck_assert_uint_eq(smp->callchain[0], 0xabcdef);
		ck_assert_uint_eq(rec.id, 42);
	}
}
END_TEST

START_TEST(a_sample_without_read_has_no_read_values)
{
	struct perf_event_attr attr = {
		.size = sizeof(attr),
		.sample_type = PERF_SAMPLE_TID,
		.read_format = PERF_FORMAT_GROUP | PERF_FORMAT_ID,
	};
	struct pr_parse_cfg cfg;
	static struct synth s;
	struct pr_record rec;
	const char *why;
	size_t at;

	pr__parse_cfg_from_attr(&cfg, &attr);
	s.len = 0;
	synth_begin(&s, PERF_RECORD_SAMPLE, 0);
	synth_u32x2(&s, 1, 2);
	synth_end(&s);
	at = s.start;
	ck_assert_int_eq(pr__record_parse(&cfg, s.buf + at, s.len - at, &rec, &why), 0);
	ck_assert_ptr_null(rec.u.sample.read);
	ck_assert_uint_eq(rec.u.sample.nr_read, 0);
	ck_assert_int_eq(pr_sample_read(&rec.u.sample, 0, NULL, NULL), -ERANGE);
	ck_assert_int_eq(pr_sample_read(NULL, 0, NULL, NULL), -ERANGE);
}
END_TEST

START_TEST(an_empty_group_has_no_values)
{
	uint64_t rf = PERF_FORMAT_GROUP | PERF_FORMAT_ID;
	static struct synth s;
	struct pr_record rec;
	const char *why;
	size_t at;

	s.len = 0;
	at = put_read_sample(&s, rf, 0);
	ck_assert_int_eq(parse(rf, &s, at, &rec, &why), 0);
	ck_assert_uint_eq(rec.u.sample.nr_read, 0);
	ck_assert_int_eq(pr_sample_read(&rec.u.sample, 0, NULL, NULL), -ERANGE);
	ck_assert_uint_eq(rec.u.sample.nr_callchain, 1);
}
END_TEST

/* A group count that claims more values than the record holds: by one,
 * by a lot, and so many that count * entry size overflows 64 bits. */
START_TEST(a_group_larger_than_its_record_is_refused)
{
	static const uint64_t claims[] = { 4, 5, 1u << 20, UINT64_C(1) << 62,
					   UINT64_MAX / 16 + 1, UINT64_MAX };
	uint64_t rf = PERF_FORMAT_GROUP | PERF_FORMAT_ID | PERF_FORMAT_LOST |
		      PERF_FORMAT_TOTAL_TIME_ENABLED;
	static struct synth s;

	for (size_t i = 0; i < sizeof(claims) / sizeof(claims[0]); i++) {
		struct pr_record rec;
		const char *why = NULL;
		size_t at;

		s.len = 0;
		/* Three values written (and the 2-word call chain after them:
		 * a claim of 4 would still fit in bytes if it were not
		 * checked against the entry size). */
		at = put_read_sample(&s, rf, 3);
		memcpy(s.buf + at + 8 + 8 + 8, &claims[i], 8);
		ck_assert_int_eq(parse(rf, &s, at, &rec, &why), -EBADMSG);
		ck_assert_ptr_nonnull(why);
		ck_assert_msg(strstr(why, "read group") || strstr(why, "callchain"),
			      "claim %llu: %s", (unsigned long long)claims[i], why);
	}
}
END_TEST

/* The record ends inside the counts: every cut is refused. */
START_TEST(a_record_cut_inside_its_counts_is_refused)
{
	for (uint64_t rf = 0; rf <= formats; rf++) {
		static struct synth s;
		size_t at, full;

		if (rf & ~formats)
			continue;
		s.len = 0;
		at = put_read_sample(&s, rf, 2);
		full = s.len - at;
		/* Keep the header, identifier and pid/tid; drop the call chain
		 * and then every further word of the counts. */
		for (size_t size = 24; size + 16 < full; size += 8) {
			struct pr_parse_cfg cfg = cfg_for(rf);
			struct pr_record rec;
			const char *why = NULL;
			uint16_t sz = (uint16_t)size;

			memcpy(s.buf + at + 6, &sz, 2);
			ck_assert_int_eq(pr__record_parse(&cfg, s.buf + at, size, &rec, &why),
					 -EBADMSG);
			ck_assert_ptr_nonnull(why);
		}
	}
}
END_TEST

static Suite *sample_read_suite(void)
{
	Suite *s = suite_create("sample-read");
	TCase *tc = tcase_create("formats");

	tcase_add_test(tc, every_read_format_reads_back_values_ids_and_times);
	tcase_add_test(tc, a_sample_without_read_has_no_read_values);
	tcase_add_test(tc, an_empty_group_has_no_values);
	tcase_add_test(tc, a_group_larger_than_its_record_is_refused);
	tcase_add_test(tc, a_record_cut_inside_its_counts_is_refused);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	return run_suite(sample_read_suite());
}
