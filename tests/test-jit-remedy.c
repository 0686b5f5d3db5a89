/* SPDX-License-Identifier: Apache-2.0 */
/*
 * JIT code nothing names: the runtime is found from the files its process
 * maps (model/runtime.c), never from its name, and the quality report's
 * remedy (quality/remedy.c) names that runtime's option and the pid.
 */
#include <check.h>
#include <string.h>

#include "checkmain.h"
#include "mkrecord.h"
#include "model/model.h"
#include "quality/quality.h"

static const struct {
	const char *file;            /* what process 42 maps besides its JIT code */
	enum pr__runtime runtime;
	unsigned minor;
	const char *said;            /* what the remedy says after the pid */
} cases[] = {
	{ "/usr/bin/node", PR_RUNTIME_NODE, 0,
	  "start the runtime with node --perf-basic-prof (a perf map) or --perf-prof (jitdump)" },
	{ "/usr/lib/x86_64-linux-gnu/libnode.so.108", PR_RUNTIME_NODE, 0, "node --perf-basic-prof" },
	{ "/usr/lib/jvm/java-17-openjdk-amd64/lib/server/libjvm.so", PR_RUNTIME_JAVA, 0,
	  "start the runtime with a perf-map agent (-agentpath:...), or on Java 17+ with "
	  "-XX:+UnlockDiagnosticVMOptions -XX:+DumpPerfMapAtExit" },
	{ "/usr/share/dotnet/shared/Microsoft.NETCore.App/8.0.0/libcoreclr.so", PR_RUNTIME_DOTNET, 0,
	  "DOTNET_PerfMapEnabled=1" },
	{ "/usr/lib/x86_64-linux-gnu/libpython3.12.so.1.0", PR_RUNTIME_PYTHON, 12,
	  "start the runtime with python3.12 -X perf (or PYTHONPERFSUPPORT=1), or profile it "
	  "with dwarfsample --python" },
	{ "/usr/bin/python3.13", PR_RUNTIME_PYTHON, 13, "python3.13 -X perf" },
	{ "/usr/bin/python3.11", PR_RUNTIME_PYTHON, 11, "CPython 3.11 writes none" },
	/* Named like one, not one. */
	{ "/opt/app/nodelike", PR_RUNTIME_NONE, 0,
	  "start the runtime with its perf map option (node --perf-basic-prof" },
	{ "/usr/bin/python3-config", PR_RUNTIME_NONE, 0, "its perf map option" },
};

START_TEST(the_runtime_is_found_in_the_mappings_and_its_option_named)
{
	struct pr_model *m = pr__model_new();
	const struct pr__quality_words w = { "stack size", "debug directory", "the frame limit",
					     "the log", "kernel call chains", "--python",
					     "off-CPU stack size" };
	struct pr__quality_row row = { .why = PR_QUALITY_UNNAMED, .pid = 42, .n = 1 };
	char buf[512], want[512];
	unsigned minor = 99;

	ck_assert_ptr_nonnull(m);
	{
		struct pr_record jit = mmap2(42, 0x7f0000000000, 0x10000, 0, "//anon");

		ck_assert_int_eq(pr__model_apply(m, &jit), 0);
	}
	ck_assert_int_eq(pr__model_runtime(m, 42, &minor), PR_RUNTIME_NONE);
	ck_assert_uint_eq(minor, 0);
	ck_assert_int_eq(pr__model_runtime(m, 43, &minor), PR_RUNTIME_NONE);
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct pr_record r = mmap2(42, 0x400000, 0x1000, 0, cases[i].file);

		/* Each case's file in place of the last. */
		ck_assert_int_eq(pr__model_apply(m, &r), 0);
		ck_assert_int_eq(pr__model_runtime(m, 42, &minor), cases[i].runtime);
		ck_assert_uint_eq(minor, cases[i].minor);
		row.runtime = (uint8_t)cases[i].runtime;
		row.minor = (uint8_t)minor;
		pr__quality_remedy(NULL, &row, &w, buf, sizeof(buf));
		snprintf(want, sizeof(want), "JIT code, no perf map or jitdump for pid 42: ");
		ck_assert_msg(!strncmp(buf, want, strlen(want)), "%s: %s", cases[i].file, buf);
		ck_assert_msg(strstr(buf, cases[i].said), "%s: %s", cases[i].file, buf);
	}
	pr__model_free(m);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("jit-remedy");
	TCase *tc = tcase_create("jit-remedy");

	tcase_add_test(tc, the_runtime_is_found_in_the_mappings_and_its_option_named);
	suite_add_tcase(s, tc);
	return run_suite(s);
}
