/* SPDX-License-Identifier: Apache-2.0 */
/* Running a Check suite the same way in every test executable. */
#ifndef DS_TEST_CHECKMAIN_H
#define DS_TEST_CHECKMAIN_H

#include <check.h>
#include <stdlib.h>

/* Run `s` (output level from CK_VERBOSITY, default "normal": the
 * "Checks: N, Failures: N, Errors: N" summary and every failure) and turn
 * the result into an exit status. */
static inline int run_suite(Suite *s)
{
	SRunner *sr = srunner_create(s);
	int failed;

	srunner_run_all(sr, CK_ENV);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}

#endif
