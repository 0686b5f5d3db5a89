/* SPDX-License-Identifier: Apache-2.0 */
/*
 * A binary linked against version 2.0 of the shared library runs against
 * this one: each function whose signature changed since answers its 2.0
 * calls under the 2.0 symbol version (src/libperfreader.map).  The 2.0
 * signatures are declared here as they were, and bound to that version
 * the way the linker bound a 2.0 binary's references.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "checkmain.h"
#include "perfreader.h"

#define AT_2_0(local, name) __asm__(".symver " #local ", " #name "@LIBPERFREADER_2")

struct pr_model *model_new_2_0(void);
int event_parse_2_0(const char *s, struct pr_event_desc *ev, pr_log_fn log, void *log_ctx);
int event_list_parse_2_0(const char *s, struct pr_event_desc *evs, size_t max, pr_log_fn log,
			 void *log_ctx);
int event_check_2_0(const struct pr_event_desc *ev, pr_log_fn log, void *log_ctx);
int tracefs_path_2_0(char *buf, size_t size, pr_log_fn log, void *log_ctx);
AT_2_0(model_new_2_0, pr_model_new);
AT_2_0(event_parse_2_0, pr_event_parse);
AT_2_0(event_list_parse_2_0, pr_event_list_parse);
AT_2_0(event_check_2_0, pr_event_check);
AT_2_0(tracefs_path_2_0, pr_tracefs_path);

static char logged[1024];
static int nr_logged;

static void keep(enum pr_log_level level, const char *msg, void *ctx)
{
	ck_assert_ptr_eq(ctx, logged);
	snprintf(logged, sizeof(logged), "%s", msg);
	nr_logged++;
}

START_TEST(a_2_0_binary_makes_models_without_options)
{
	struct pr_model *m = model_new_2_0();

	ck_assert_ptr_nonnull(m);
	ck_assert_str_eq(pr_model_comm(m, 0), "swapper");
	pr_model_free(m);
}
END_TEST

/* The log callback and its context, passed bare, get the messages: had
 * the call reached the 2.1 function, the callback would have been read
 * as an options struct. */
START_TEST(a_2_0_binary_passes_the_log_callback_bare)
{
	struct pr_event_desc ev, evs[4];

	nr_logged = 0;
	ck_assert_int_eq(event_parse_2_0("xyzzy", &ev, keep, logged), -ENOENT);
	ck_assert_int_eq(nr_logged, 1);
	ck_assert_int_eq(event_parse_2_0("cs:u", &ev, keep, logged), 0);
	ck_assert_str_eq(ev.name, "context-switches:u");
	ck_assert_int_eq(event_list_parse_2_0("cs,,faults", evs, 4, keep, logged), -EINVAL);
	ck_assert_int_eq(nr_logged, 2);
	ck_assert_msg(strstr(logged, "empty event"), "%s", logged);
	ck_assert_int_eq(event_list_parse_2_0("{cs,faults}:u", evs, 4, keep, logged), 2);
	ck_assert_int_eq(event_check_2_0(NULL, keep, logged), -EINVAL);
	ck_assert_int_eq(tracefs_path_2_0(NULL, 8, keep, logged), -EINVAL);
	ck_assert_int_eq(nr_logged, 2);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("abi-2.0");
	TCase *tc = tcase_create("2.0 binaries");

	tcase_add_test(tc, a_2_0_binary_makes_models_without_options);
	tcase_add_test(tc, a_2_0_binary_passes_the_log_callback_bare);
	suite_add_tcase(s, tc);
	return run_suite(s);
}
