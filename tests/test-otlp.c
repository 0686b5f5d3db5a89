/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The OTLP writer: a wall-clock run of one thread (CPU samples, a blocked
 * and a preempted wait) written as an ExportProfilesServiceRequest and read
 * back with the specification's messages: the resource's attributes, one
 * profile per value type with pprof's default first, each profile's values
 * adding up to the profile's times, every sample's stack named through the
 * dictionary, its attributes (process.pid, thread.name, the process's and
 * the profile's tags, the kind of wait), gzip when asked; and how many of
 * a stack's frames came from the sample's frame-pointer call chain.
 */
#include <check.h>
#include <errno.h>
#include <zlib.h>

#include "checkmain.h"
#include "profile-fixture.h"
#include "wall-run.h"
#include "otlp_profiles_service.pb-c.h"

typedef Opentelemetry__Proto__Collector__Profiles__V1development__ExportProfilesServiceRequest
	request;
typedef Opentelemetry__Proto__Profiles__V1development__ProfilesDictionary dictionary;
typedef Opentelemetry__Proto__Profiles__V1development__Profile profile;

/* The wall-clock run, tagged and timed. */
static struct pr_profile *tagged_run(void)
{
	struct pr_profile *p = the_run(PR_PROFILE_WALL, false);

	ck_assert_int_eq(pr_profile_tag(p, "env", "test"), 0);
	ck_assert_int_eq(pr_profile_process_tag(p, PID, "container.id", "c0ffee"), 0);
	ck_assert_int_eq(pr_profile_set_time(p, 1700000000000000000ull, 12 * MS), 0);
	return p;
}

static request *read_back(const struct pr_profile *p, const struct pr_otlp_opts *o)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);
	request *r;

	ck_assert_ptr_nonnull(f);
	ck_assert_int_eq(pr_profile_write_otlp(p, f, o), 0);
	ck_assert_int_eq(fclose(f), 0);
	r = opentelemetry__proto__collector__profiles__v1development__export_profiles_service_request__unpack(
		NULL, len, (const uint8_t *)buf);
	ck_assert_ptr_nonnull(r);
	free(buf);
	return r;
}

static const char *str(const dictionary *d, int32_t i)
{
	ck_assert_int_lt(i, (int64_t)d->n_string_table);
	return d->string_table[i];
}

/* The string value of attribute `key` among sample s's, or NULL; its
 * integer through *num. */
static const char *attr(const dictionary *d, const int32_t *idx, size_t n, const char *key,
			int64_t *num)
{
	for (size_t i = 0; i < n; i++) {
		const Opentelemetry__Proto__Profiles__V1development__KeyValueAndUnit *a =
			d->attribute_table[idx[i]];

		if (strcmp(str(d, a->key_strindex), key))
			continue;
		if (num)
			*num = a->value->int_value;
		return a->value->value_case ==
			       OPENTELEMETRY__PROTO__COMMON__V1__ANY_VALUE__VALUE_STRING_VALUE
			       ? a->value->string_value : "";
	}
	return NULL;
}

START_TEST(a_wall_clock_run_reads_back_through_the_specifications_messages)
{
	static const struct pr_attr res[] = {
		{ .key = "service.name", .str = "app-svc" }, { .key = "process.pid", .num = 42 },
	};
	PR_OPTS(pr_otlp_opts, oo, .resource = res, .nr_resource = 2, .scope_version = "1.2.3");
	struct pr_profile *p = tagged_run();
	struct pr_profile_times t = { .sz = sizeof(t) };
	request *r = read_back(p, &oo);
	const dictionary *d = r->dictionary;
	const Opentelemetry__Proto__Profiles__V1development__ScopeProfiles *sp;
	static const char *const types[] = { "wall", "samples", "cpu", "off_cpu" };

	ck_assert_int_eq(pr_profile_times(p, 0, &t), 0);
	ck_assert_uint_eq(r->n_resource_profiles, 1);
	ck_assert_uint_eq(r->resource_profiles[0]->resource->n_attributes, 2);
	ck_assert_str_eq(r->resource_profiles[0]->resource->attributes[0]->value->string_value,
			 "app-svc");
	ck_assert_int_eq(r->resource_profiles[0]->resource->attributes[1]->value->int_value, 42);
	sp = r->resource_profiles[0]->scope_profiles[0];
	ck_assert_str_eq(sp->scope->name, "dwarfsample");
	ck_assert_str_eq(sp->scope->version, "1.2.3");
	ck_assert_str_eq(str(d, 0), "");
	/* Every table's zero entry is the empty one: the link table's too,
	 * though no sample links to a trace, and the empty attribute has no
	 * value at all. */
	ck_assert_uint_eq(d->n_link_table, 1);
	ck_assert_uint_eq(d->link_table[0]->trace_id.len + d->link_table[0]->span_id.len, 0);
	ck_assert_int_eq(d->attribute_table[0]->key_strindex, 0);
	ck_assert_ptr_null(d->attribute_table[0]->value);
	ck_assert_int_eq(d->attribute_table[0]->unit_strindex, 0);
	/* pprof's default, wall, first; then the others in pprof's order. */
	ck_assert_uint_eq(sp->n_profiles, 4);
	for (size_t k = 0; k < 4; k++) {
		const profile *pf = sp->profiles[k];
		int64_t sum = 0;

		ck_assert_str_eq(str(d, pf->sample_type->type_strindex), types[k]);
		ck_assert_str_eq(str(d, pf->period_type->type_strindex), "cpu");
		ck_assert_int_eq(pf->period, 1000000);
		ck_assert_uint_eq(pf->time_unix_nano, 1700000000000000000ull);
		ck_assert_uint_eq(pf->duration_nano, 12 * MS);
		for (size_t i = 0; i < pf->n_samples; i++) {
			const Opentelemetry__Proto__Profiles__V1development__Sample *s = pf->samples[i];
			const Opentelemetry__Proto__Profiles__V1development__Stack *st =
				d->stack_table[s->stack_index];
			const Opentelemetry__Proto__Profiles__V1development__Location *leaf =
				d->location_table[st->location_indices[0]];
			const char *name = str(d, d->function_table[leaf->lines[0]->function_index]
							  ->name_strindex);
			const char *wait_kind = attr(d, s->attribute_indices, s->n_attribute_indices,
						     "dwarfsample.off_cpu.wait", NULL);
			int64_t pid = 0;

			ck_assert_uint_eq(s->n_values, 1);
			ck_assert_int_ne(s->values[0], 0);
			sum += s->values[0];
			/* The leaf: "leaf" on the CPU, the wait's pseudo-frame. */
			ck_assert_msg(!strcmp(name, "leaf") || !strncmp(name, "[off-cpu: ", 10),
				      "%s", name);
			ck_assert_int_eq(!strncmp(name, "[off-cpu: ", 10), wait_kind != NULL);
			ck_assert_str_eq(attr(d, s->attribute_indices, s->n_attribute_indices,
					      "thread.name", NULL), "app");
			ck_assert_ptr_nonnull(attr(d, s->attribute_indices, s->n_attribute_indices,
						   "process.pid", &pid));
			ck_assert_int_eq(pid, PID);
			ck_assert_str_eq(attr(d, s->attribute_indices, s->n_attribute_indices,
					      "container.id", NULL), "c0ffee");
			ck_assert_str_eq(attr(d, s->attribute_indices, s->n_attribute_indices,
					      "env", NULL), "test");
		}
		/* Each type adds up to what the profile counted. */
		if (k == 0)
			ck_assert_int_eq(sum, (int64_t)(t.cpu_ns + t.off_cpu_ns[0] + t.off_cpu_ns[1]));
		else if (k == 1)
			ck_assert_int_eq(sum, (int64_t)(t.samples + t.waits[0] + t.waits[1]));
		else if (k == 2)
			ck_assert_int_eq(sum, (int64_t)t.cpu_ns);
		else
			ck_assert_int_eq(sum, (int64_t)(t.off_cpu_ns[0] + t.off_cpu_ns[1]));
	}
	ck_assert_uint_eq(t.off_cpu_ns[PR_WAIT_BLOCKED], 5 * MS);
	opentelemetry__proto__collector__profiles__v1development__export_profiles_service_request__free_unpacked(
		r, NULL);
	pr_profile_free(p);
}
END_TEST

START_TEST(gzip_is_what_an_http_exporter_sends)
{
	PR_OPTS(pr_otlp_opts, gz, .gzip = true);
	struct pr_profile *p = tagged_run();
	char *a = NULL, *b = NULL;
	size_t na = 0, nb = 0;
	FILE *f = open_memstream(&a, &na);
	uLongf n;
	unsigned char *out;
	z_stream zs = { 0 };

	ck_assert_int_eq(pr_profile_write_otlp(p, f, NULL), 0);
	fclose(f);
	f = open_memstream(&b, &nb);
	ck_assert_int_eq(pr_profile_write_otlp(p, f, &gz), 0);
	fclose(f);
	ck_assert_uint_ge(nb, 2);
	ck_assert_int_eq((unsigned char)b[0], 0x1f);
	ck_assert_int_eq((unsigned char)b[1], 0x8b);
	/* It inflates to the same request. */
	n = na + 16;
	out = malloc(n);
	ck_assert_int_eq(inflateInit2(&zs, 15 + 16), Z_OK);
	zs.next_in = (Bytef *)b;
	zs.avail_in = (uInt)nb;
	zs.next_out = out;
	zs.avail_out = (uInt)n;
	ck_assert_int_eq(inflate(&zs, Z_FINISH), Z_STREAM_END);
	ck_assert_uint_eq(zs.total_out, na);
	ck_assert_int_eq(memcmp(out, a, na), 0);
	inflateEnd(&zs);
	free(out);
	free(a);
	free(b);
	pr_profile_free(p);
}
END_TEST

START_TEST(bad_arguments_are_refused)
{
	struct pr_attr bad = { .key = NULL, .str = "x" };
	PR_OPTS(pr_otlp_opts, oo, .resource = &bad, .nr_resource = 1);
	struct pr_profile *p = tagged_run();
	FILE *f = fopen("/dev/null", "w");

	ck_assert_int_eq(pr_profile_write_otlp(NULL, f, NULL), -EINVAL);
	ck_assert_int_eq(pr_profile_write_otlp(p, NULL, NULL), -EINVAL);
	ck_assert_int_eq(pr_profile_write_otlp(p, f, &oo), -EINVAL);
	fclose(f);
	pr_profile_free(p);
}
END_TEST

/* dwarfsample.stack.fp_frames: on the stacks with frames from the call
 * chain (PR_FRAME_CHAIN), how many; those stacks apart from the same
 * addresses unwound. */
START_TEST(frames_from_the_call_chain_are_counted_in_an_attribute)
{
	static const struct pr_frame unwound[] = { { .ip = 0x1010 }, { .ip = 0x2020 } };
	static const struct pr_frame tail[] = { { .ip = 0x1010 },
						{ .ip = 0x2020, .flags = PR_FRAME_CHAIN } };
	static const struct pr_frame chain[] = { { .ip = 0x1010, .flags = PR_FRAME_CHAIN },
						 { .ip = 0x2020, .flags = PR_FRAME_CHAIN } };
	const struct pr_stack stacks[] = {
		{ .frames = unwound, .nr = 2, .end = PR_END_OUTERMOST },
		{ .frames = tail, .nr = 2, .end = PR_END_CHAIN },
		{ .frames = chain, .nr = 2, .end = PR_END_CHAIN },
		{ .frames = chain, .nr = 2, .end = PR_END_CHAIN },
	};
	struct pr_profile *p = pr_profile_new(NULL);
	int64_t by_fp[3] = { 0 };
	const profile *pf;
	request *r;

	ck_assert_ptr_nonnull(p);
	for (size_t i = 0; i < 4; i++) {
		struct pr_record rec = { .type = PR_RECORD_SAMPLE, .pid = PID, .tid = PID,
					 .time = (i + 1) * MS, .fields = PR_ID_TID | PR_ID_TIME };

		ck_assert_int_eq(pr_profile_add(p, NULL, &rec, &stacks[i], "app", "app"), 0);
	}
	r = read_back(p, NULL);
	pf = r->resource_profiles[0]->scope_profiles[0]->profiles[0];
	ck_assert_str_eq(str(r->dictionary, pf->sample_type->type_strindex), "samples");
	ck_assert_uint_eq(pf->n_samples, 3);
	for (size_t i = 0; i < pf->n_samples; i++) {
		const Opentelemetry__Proto__Profiles__V1development__Sample *s = pf->samples[i];
		int64_t fp = 0;

		attr(r->dictionary, s->attribute_indices, s->n_attribute_indices,
		     "dwarfsample.stack.fp_frames", &fp);
		ck_assert_int_le(fp, 2);
		by_fp[fp] += s->values[0];
	}
	ck_assert_int_eq(by_fp[0], 1);
	ck_assert_int_eq(by_fp[1], 1);
	ck_assert_int_eq(by_fp[2], 2);
	opentelemetry__proto__collector__profiles__v1development__export_profiles_service_request__free_unpacked(
		r, NULL);
	pr_profile_free(p);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("otlp");
	TCase *tc = tcase_create("otlp");

	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, a_wall_clock_run_reads_back_through_the_specifications_messages);
	tcase_add_test(tc, gzip_is_what_an_http_exporter_sends);
	tcase_add_test(tc, bad_arguments_are_refused);
	tcase_add_test(tc, frames_from_the_call_chain_are_counted_in_an_attribute);
	suite_add_tcase(s, tc);
	return run_suite(s);
}
