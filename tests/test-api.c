/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The conventions written at the top of perfreader.h, checked through the
 * shared library as an embedder sees it: destructors accept NULL, getters
 * answer NULL with their "none" value instead of crashing, and functions
 * without an object log through their options struct.
 */
#include <errno.h>
#include <linux/perf_event.h>
#include <stdio.h>
#include <string.h>

#include "checkmain.h"
#include "perfreader.h"

START_TEST(every_destructor_accepts_null)
{
	pr_reader_close(NULL);
	pr_model_free(NULL);
	pr_file_close(NULL);
	ck_assert_int_eq(pr_writer_close(NULL), 0);
	pr_unwinder_free(NULL);
	pr_symbolizer_free(NULL);
	pr_profile_free(NULL);
}
END_TEST

START_TEST(reader_getters_answer_null)
{
	struct pr_ring_stats rs = { .sz = sizeof(rs) };

	ck_assert_int_eq(pr_reader_fd(NULL), -EINVAL);
	ck_assert_int_eq(pr_reader_child(NULL), -1);
	ck_assert_ptr_null(pr_reader_attr(NULL));
	ck_assert_uint_eq(pr_reader_nr_rings(NULL), 0);
	ck_assert_int_eq(pr_reader_ring_cpu(NULL, 0), -EINVAL);
	ck_assert_uint_eq(pr_reader_ids(NULL, NULL, 0), 0);
	ck_assert_int_eq(pr_reader_ring_stats(NULL, 0, &rs), -EINVAL);
	ck_assert(!pr_reader_done(NULL));
	ck_assert_int_eq(pr_reader_parse(NULL, NULL, 0, NULL), -EINVAL);
	ck_assert_int_eq(pr_reader_disable(NULL), -EINVAL);
}
END_TEST

START_TEST(model_and_file_getters_answer_null)
{
	struct pr_file_stats fs = { .sz = sizeof(fs) };
	const char *const *argv = NULL;
	const uint8_t *id = NULL;
	uint8_t one = 1;
	uint32_t n = 7;
	struct pr_record rec;

	memset(&rec, 0, sizeof(rec));
	ck_assert_int_eq(pr_model_apply(NULL, &rec), -EINVAL);
	ck_assert_ptr_null(pr_model_comm(NULL, 1));
	ck_assert_int_eq(pr_model_set_build_id(NULL, "/bin/true", &one, 1), -EINVAL);
	ck_assert_int_eq(pr_model_use_file(NULL, NULL), -EINVAL);
	ck_assert_ptr_null(pr_dso_path(NULL));
	ck_assert_uint_eq(pr_dso_build_id(NULL, &id), 0);

	ck_assert_int_eq(pr_file_read(NULL, &rec), -EINVAL);
	ck_assert_int_eq(pr_file_consume(NULL, NULL, NULL), -EINVAL);
	pr_file_rewind(NULL);
	ck_assert_uint_eq(pr_file_nr_attrs(NULL), 0);
	ck_assert_ptr_null(pr_file_attr(NULL, 0));
	ck_assert_int_eq(pr_file_event_of(NULL, &rec), -EINVAL);
	ck_assert_ptr_null(pr_file_event_name(NULL, 0));
	ck_assert_ptr_null(pr_file_string(NULL, PR_FILE_HOSTNAME));
	ck_assert_int_eq(pr_file_nr_cpus(NULL, &n, &n), -EINVAL);
	ck_assert_uint_eq(n, 7);
	ck_assert_uint_eq(pr_file_cmdline(NULL, &argv), 0);
	ck_assert_uint_eq(pr_file_nr_build_ids(NULL), 0);
	ck_assert_ptr_null(pr_file_build_id(NULL, 0));
	ck_assert_int_eq(pr_file_stats(NULL, &fs), -EINVAL);

	ck_assert_int_eq(pr_writer_write(NULL, &rec), -EINVAL);
	ck_assert_int_eq(pr_writer_finish_round(NULL), -EINVAL);
}
END_TEST

START_TEST(stack_getters_answer_null)
{
	struct pr_unwind_stats us = { .sz = sizeof(us) };
	struct pr_symbolizer_stats ss = { .sz = sizeof(ss) };
	struct pr_frame f;
	struct pr_symbol sym;
	struct pr_stack st;
	struct pr_record rec;

	memset(&f, 0, sizeof(f));
	memset(&rec, 0, sizeof(rec));
	rec.type = PR_RECORD_SAMPLE;
	ck_assert_int_eq(pr_unwinder_unwind(NULL, &rec, &st), -EINVAL);
	ck_assert_int_eq(pr_unwinder_stats(NULL, &us), -EINVAL);
	ck_assert_int_eq(pr_symbolizer_symbolize(NULL, 1, &f, &sym), -EINVAL);
	ck_assert_int_eq(pr_symbolizer_stats(NULL, &ss), -EINVAL);

	ck_assert_int_eq(pr_profile_add(NULL, NULL, &rec, &st, NULL, NULL), -EINVAL);
	ck_assert_int_eq(pr_profile_tag(NULL, "k", "v"), -EINVAL);
	ck_assert_int_eq(pr_profile_set_time(NULL, 1, 2), -EINVAL);
	ck_assert_uint_eq(pr_profile_samples(NULL), 0);
	ck_assert_uint_eq(pr_profile_nr_stacks(NULL), 0);
	ck_assert_int_eq(pr_profile_write(NULL, PR_FORMAT_FOLDED, stdout, NULL), -EINVAL);
	ck_assert_int_eq(pr_profile_format_by_name(NULL), -EINVAL);
	ck_assert_int_eq(pr_profile_format_by_path(NULL), -EINVAL);
}
END_TEST

START_TEST(value_helpers_refuse_null_outputs)
{
	uint64_t regs[1] = { 42 };
	struct pr_sample s;
	uint64_t v = 0;

	memset(&s, 0, sizeof(s));
	s.regs = regs;
	s.regs_mask = UINT64_C(1) << PR_REG_IP;
	ck_assert_int_eq(pr_sample_reg(&s, PR_REG_IP, &v), 0);
	ck_assert_uint_eq(v, 42);
	ck_assert_int_eq(pr_sample_reg(&s, PR_REG_IP, NULL), -EINVAL);
	ck_assert_int_eq(pr_sample_reg(&s, PR_REG_SP, &v), -ENOENT);
	ck_assert_int_eq(pr_cpu_list_parse(NULL, NULL, 0), -EINVAL);
	ck_assert_int_eq(pr_cpu_list_parse("0-1", NULL, 2), -EINVAL);
	ck_assert_int_eq(pr_event_attr(NULL, PR_SOURCE_CPU_CLOCK, 0, NULL), -EINVAL);
}
END_TEST

static char logged[1024];
static int nr_logged;

static void keep(enum pr_log_level level, const char *msg, void *ctx)
{
	ck_assert_ptr_eq(ctx, logged);
	ck_assert_int_eq(level, PR_LOG_ERROR);
	snprintf(logged, sizeof(logged), "%s", msg);
	nr_logged++;
}

START_TEST(event_functions_log_through_their_options)
{
	PR_OPTS(pr_event_opts, bad, .stack_size = 12, .log = keep, .log_ctx = logged);
	PR_OPTS(pr_event_opts, silent, .stack_size = 12);
	struct perf_event_attr attr;

	nr_logged = 0;
	ck_assert_int_eq(pr_event_attr(&bad, PR_SOURCE_CPU_CLOCK, 0, &attr), -EINVAL);
	ck_assert_int_eq(nr_logged, 1);
	ck_assert_msg(strstr(logged, "multiple of 8"), "%s", logged);
	ck_assert_int_eq(pr_event_probe(&bad), -EINVAL);
	ck_assert_int_eq(nr_logged, 2);
	/* Without a callback the message is dropped, not printed. */
	ck_assert_int_eq(pr_event_attr(&silent, PR_SOURCE_CPU_CLOCK, 0, &attr), -EINVAL);
	ck_assert_int_eq(pr_event_probe(&silent), -EINVAL);
	ck_assert_int_eq(nr_logged, 2);
}
END_TEST

/* The lookups of prevent.h log through their options too; options they
 * do not know (bytes set past what the library knows) are refused. */
START_TEST(event_lookups_log_through_their_options)
{
	PR_OPTS(pr_event_lookup_opts, o, .log = keep, .log_ctx = logged);
	struct {
		struct pr_event_lookup_opts known;
		uint64_t unknown;
	} newer = { o, 1 };
	struct pr_event_desc ev, evs[2];

	newer.known.sz = sizeof(newer);
	nr_logged = 0;
	ck_assert_int_eq(pr_event_parse("xyzzy", &ev, &o), -ENOENT);
	ck_assert_int_eq(nr_logged, 1);
	ck_assert_int_eq(pr_event_list_parse("cs,,faults", evs, 2, &o), -EINVAL);
	ck_assert_int_eq(nr_logged, 2);
	ck_assert_msg(strstr(logged, "empty event"), "%s", logged);
	ck_assert_int_eq(pr_event_parse("xyzzy", &ev, NULL), -ENOENT);
	ck_assert_int_eq(nr_logged, 2);

	ck_assert_int_eq(pr_event_parse("cs", &ev, &newer.known), -EINVAL);
	ck_assert_int_eq(pr_event_list_parse("cs", evs, 2, &newer.known), -EINVAL);
	ck_assert_int_eq(pr_event_check(&ev, &newer.known), -EINVAL);
	ck_assert_int_eq(pr_tracefs_path(ev.name, sizeof(ev.name), &newer.known), -EINVAL);
	ck_assert_int_eq(nr_logged, 2);
	newer.unknown = 0;
	ck_assert_int_eq(pr_event_parse("cs", &ev, &newer.known), 0);
	ck_assert_str_eq(ev.name, "context-switches");
}
END_TEST

/* pr_model_new() takes options: its debug directories and cache bounds,
 * checked as every options struct is. */
START_TEST(model_new_checks_its_options)
{
	const char *dirs[1] = { "/nonexistent" };
	struct pr_cache_opts bad_cache = { .sz = 1 };
	PR_OPTS(pr_cache_opts, cache, .max_bytes = 1 << 20, .grace_ns = 1000);
	PR_OPTS(pr_model_opts, o, .debug_dirs = dirs, .nr_debug_dirs = 1, .cache = &cache);
	PR_OPTS(pr_model_opts, no_dirs, .nr_debug_dirs = 1);
	PR_OPTS(pr_model_opts, bad, .cache = &bad_cache);
	struct pr_model *m = pr_model_new(NULL);

	ck_assert_ptr_nonnull(m);
	pr_model_free(m);
	m = pr_model_new(&o);
	ck_assert_ptr_nonnull(m);
	ck_assert_int_eq(pr_model_trim(m, 0), 0);
	pr_model_free(m);
	errno = 0;
	ck_assert_ptr_null(pr_model_new(&no_dirs));
	ck_assert_int_eq(errno, EINVAL);
	errno = 0;
	ck_assert_ptr_null(pr_model_new(&bad));
	ck_assert_int_eq(errno, EINVAL);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("api");
	TCase *tc = tcase_create("conventions");

	tcase_add_test(tc, every_destructor_accepts_null);
	tcase_add_test(tc, reader_getters_answer_null);
	tcase_add_test(tc, model_and_file_getters_answer_null);
	tcase_add_test(tc, stack_getters_answer_null);
	tcase_add_test(tc, value_helpers_refuse_null_outputs);
	tcase_add_test(tc, event_functions_log_through_their_options);
	tcase_add_test(tc, event_lookups_log_through_their_options);
	tcase_add_test(tc, model_new_checks_its_options);
	suite_add_tcase(s, tc);
	return run_suite(s);
}
