/* SPDX-License-Identifier: Apache-2.0 */
/*
 * A window as a call of Grafana Pyroscope's push API (upload/pyroscope.c),
 * decoded field by field as push.v1.PushRequest (grafana/pyroscope
 * api/push/v1/push.proto) reads: a series per profile type the window
 * has, each with Pyroscope's labels and the window's as they are, one
 * sample whose ID names the window, and its part of the profile as a
 * gzipped pprof.
 */
#include <check.h>
#include <errno.h>

#include "checkmain.h"
#include "profile-fixture.h"
#include "pprof-decode.h"
#include "wall-run.h"
#include "upload/upload.h"

#define SECOND 1000000000ull

/* A length-delimited field of a message; `at` moves past it.  Only
 * such fields are in these messages. */
struct field {
	unsigned num;
	const uint8_t *data;
	size_t len;
};

static uint64_t varint(const uint8_t *b, size_t len, size_t *at)
{
	uint64_t v = 0;

	for (int shift = 0; *at < len; shift += 7) {
		uint8_t c = b[(*at)++];

		v |= (uint64_t)(c & 0x7f) << shift;
		if (!(c & 0x80))
			return v;
	}
	ck_abort_msg("a varint runs past its message");
	return 0;
}

/* The next field of message b[0, len) at *at; false at its end. */
static bool next_field(const uint8_t *b, size_t len, size_t *at, struct field *f)
{
	uint64_t key;

	if (*at >= len)
		return false;
	key = varint(b, len, at);
	ck_assert_uint_eq(key & 7, 2);
	f->num = (unsigned)(key >> 3);
	f->len = varint(b, len, at);
	ck_assert_uint_le(*at + f->len, len);
	f->data = b + *at;
	*at += f->len;
	return true;
}

/* A series as the test reads it. */
struct series {
	char labels[16][2][64];
	size_t nr_labels;
	char id[64];
	Perftools__Profiles__Profile *prof;
};

static void copy_str(char *out, const struct field *f)
{
	ck_assert_uint_lt(f->len, 64);
	memcpy(out, f->data, f->len);
	out[f->len] = '\0';
}

static void read_series(const struct field *sf, struct series *s)
{
	struct field f, g;
	size_t at = 0, in;
	int samples = 0;

	memset(s, 0, sizeof(*s));
	while (next_field(sf->data, sf->len, &at, &f)) {
		in = 0;
		if (f.num == 1) {
			ck_assert_uint_lt(s->nr_labels, 16);
			while (next_field(f.data, f.len, &in, &g))
				copy_str(s->labels[s->nr_labels][g.num - 1], &g);
			s->nr_labels++;
			continue;
		}
		ck_assert_uint_eq(f.num, 2);
		samples++;
		while (next_field(f.data, f.len, &in, &g)) {
			if (g.num == 2) {
				copy_str(s->id, &g);
				continue;
			}
			ck_assert_uint_eq(g.num, 1);
			ck_assert_msg(g.len > 2 && g.data[0] == 0x1f && g.data[1] == 0x8b,
				      "the raw profile is not gzipped");
			s->prof = decode_pprof_gz(g.data, g.len);
		}
	}
	ck_assert_int_eq(samples, 1);
	ck_assert_ptr_nonnull(s->prof);
}

/* The request's series, at most `max`; how many. */
static size_t read_request(const struct pr__request *r, struct series *s, size_t max)
{
	struct field f;
	size_t at = 0, n = 0;

	while (next_field(r->body, r->len, &at, &f)) {
		ck_assert_uint_eq(f.num, 1);
		ck_assert_uint_lt(n, max);
		read_series(&f, &s[n++]);
	}
	return n;
}

static void free_series(struct series *s, size_t n)
{
	for (size_t i = 0; i < n; i++)
		perftools__profiles__profile__free_unpacked(s[i].prof, NULL);
}

static struct pr_label labels[] = {
	{ "env", "a,b}c=d{e" },
	{ "host_name", "h1" },
};

static struct pr_window window_of(struct pr_profile *p, uint64_t seq)
{
	ck_assert_int_eq(pr_profile_set_time(p, 1700000000 * SECOND, SECOND), 0);
	return (struct pr_window){ .profile = p, .service = (char *)"svc", .seq = seq,
				   .start_ns = 1700000000 * SECOND,
				   .end_ns = 1700000001 * SECOND, .freq = 1000,
				   .labels = labels, .nr_labels = 2 };
}

/* The sample types of `m`, "type/unit" joined by spaces. */
static void types_of(const Perftools__Profiles__Profile *m, char *out, size_t len)
{
	size_t n = 0;

	out[0] = '\0';
	for (size_t i = 0; i < m->n_sample_type; i++)
		n += (size_t)snprintf(out + n, len - n, "%s%s", i ? " " : "", type_of(m, i));
}

START_TEST(a_wall_window_is_a_series_per_profile_type_with_its_labels_as_given)
{
	static const char *const names[] = { "process_cpu", "off_cpu", "wall" };
	static const char *const types[] = { "samples/count cpu/nanoseconds",
					     "samples/count off_cpu/nanoseconds",
					     "wall/nanoseconds" };
	struct pr_profile *p = the_run(PR_PROFILE_WALL, false);
	struct pr_window w = window_of(p, 3);
	struct pr__request r;
	struct series s[4];
	char t[256];
	size_t n;

	ck_assert_int_eq(pr__pyroscope_request(&w, &r), 0);
	ck_assert_str_eq(r.target, "/push.v1.PusherService/Push");
	ck_assert_str_eq(r.content_type, "application/proto");
	ck_assert_str_eq(r.content_encoding, "");
	n = read_request(&r, s, 4);
	ck_assert_uint_eq(n, 3);
	for (size_t i = 0; i < n; i++) {
		static const char *const want[][2] = {
			{ "__name__", NULL }, { "service_name", "svc" }, { "__delta__", "false" },
			{ "pyroscope_spy", "dwarfsample" }, { "env", "a,b}c=d{e" },
			{ "host_name", "h1" },
		};

		ck_assert_uint_eq(s[i].nr_labels, 6);
		for (size_t k = 0; k < 6; k++) {
			ck_assert_str_eq(s[i].labels[k][0], want[k][0]);
			ck_assert_str_eq(s[i].labels[k][1], want[k][1] ? want[k][1] : names[i]);
		}
		types_of(s[i].prof, t, sizeof(t));
		ck_assert_str_eq(t, types[i]);
		ck_assert_int_eq(s[i].prof->time_nanos, 1700000000 * SECOND);
		ck_assert_int_eq(s[i].prof->duration_nanos, SECOND);
		/* One ID for the window: a UUID, version 8. */
		ck_assert_str_eq(s[i].id, s[0].id);
	}
	ck_assert_uint_eq(strlen(s[0].id), 36);
	ck_assert_int_eq(s[0].id[14], '8');
	ck_assert_int_eq(s[0].id[8], '-');
	/* The CPU samples' one stack, the two waits, and the three. */
	ck_assert_uint_eq(s[0].prof->n_sample, 1);
	ck_assert_uint_eq(s[1].prof->n_sample, 2);
	ck_assert_uint_eq(s[2].prof->n_sample, 3);
	free_series(s, n);
	pr__request_clear(&r);
	pr_profile_free(p);
}
END_TEST

START_TEST(an_off_cpu_window_is_one_series_off_cpu)
{
	struct pr_profile *p = the_run(PR_PROFILE_OFF_CPU, false);
	struct pr_window w = window_of(p, 0);
	struct pr__request r;
	struct series s[4];
	char t[256];

	ck_assert_int_eq(pr__pyroscope_request(&w, &r), 0);
	ck_assert_uint_eq(read_request(&r, s, 4), 1);
	ck_assert_str_eq(s[0].labels[0][0], "__name__");
	ck_assert_str_eq(s[0].labels[0][1], "off_cpu");
	types_of(s[0].prof, t, sizeof(t));
	ck_assert_str_eq(t, "samples/count off_cpu/nanoseconds");
	free_series(s, 1);
	pr__request_clear(&r);
	pr_profile_free(p);
}
END_TEST

START_TEST(the_id_is_the_same_on_every_try_and_another_for_another_window)
{
	struct pr_profile *p = the_run(PR_PROFILE_OFF_CPU, false);
	struct pr_window w = window_of(p, 0);
	char ids[4][64];
	struct pr__request r;
	struct series s[4];

	for (int i = 0; i < 4; i++) {
		/* The same window twice, then another number, another service. */
		w.seq = i == 2;
		w.service = (char *)(i == 3 ? "svc2" : "svc");
		ck_assert_int_eq(pr__pyroscope_request(&w, &r), 0);
		ck_assert_uint_eq(read_request(&r, s, 4), 1);
		strcpy(ids[i], s[0].id);
		free_series(s, 1);
		pr__request_clear(&r);
	}
	ck_assert_str_eq(ids[0], ids[1]);
	ck_assert_str_ne(ids[0], ids[2]);
	ck_assert_str_ne(ids[0], ids[3]);
	ck_assert_str_ne(ids[2], ids[3]);
	pr_profile_free(p);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("pyroscope-push");
	TCase *tc = tcase_create("push");

	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, a_wall_window_is_a_series_per_profile_type_with_its_labels_as_given);
	tcase_add_test(tc, an_off_cpu_window_is_one_series_off_cpu);
	tcase_add_test(tc, the_id_is_the_same_on_every_try_and_another_for_another_window);
	suite_add_tcase(s, tc);
	return run_suite(s);
}
