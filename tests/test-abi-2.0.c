/* SPDX-License-Identifier: Apache-2.0 */
/*
 * A binary linked against version 2.0 of the shared library runs against
 * this one: each function whose signature changed since answers its 2.0
 * calls under the 2.0 symbol version (src/libperfreader.map).  The 2.0
 * signatures are declared here as they were, and bound to that version
 * the way the linker bound a 2.0 binary's references.
 */
#include "checkmain.h"
#include "perfreader.h"

#define AT_2_0(local, name) __asm__(".symver " #local ", " #name "@LIBPERFREADER_2")

struct pr_model *model_new_2_0(void);
AT_2_0(model_new_2_0, pr_model_new);

START_TEST(a_2_0_binary_makes_models_without_options)
{
	struct pr_model *m = model_new_2_0();

	ck_assert_ptr_nonnull(m);
	ck_assert_str_eq(pr_model_comm(m, 0), "swapper");
	pr_model_free(m);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("abi-2.0");
	TCase *tc = tcase_create("2.0 binaries");

	tcase_add_test(tc, a_2_0_binary_makes_models_without_options);
	suite_add_tcase(s, tc);
	return run_suite(s);
}
