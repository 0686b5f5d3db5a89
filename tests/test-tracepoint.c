/* SPDX-License-Identifier: Apache-2.0 */
/*
 * A tracepoint sample's fields (prtrace.h), from format files as Linux
 * 6.1's tracefs writes them (copied below) and payloads built here: the
 * text perf 6.1's perf script prints for the same payloads (checked by
 * hand against `perf script` on a recording of each tracepoint), a
 * payload shorter than its fields, formats that do not parse, and print
 * fmts this decoder cannot evaluate (each field then as name=value).
 */
#include <check.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "checkmain.h"
#include "prtrace.h"

static const char write_format[] =
	"name: sys_enter_write\n"
	"ID: 840\n"
	"format:\n"
	"\tfield:unsigned short common_type;\toffset:0;\tsize:2;\tsigned:0;\n"
	"\tfield:unsigned char common_flags;\toffset:2;\tsize:1;\tsigned:0;\n"
	"\tfield:unsigned char common_preempt_count;\toffset:3;\tsize:1;\tsigned:0;\n"
	"\tfield:int common_pid;\toffset:4;\tsize:4;\tsigned:1;\n"
	"\n"
	"\tfield:int __syscall_nr;\toffset:8;\tsize:4;\tsigned:1;\n"
	"\tfield:unsigned int fd;\toffset:16;\tsize:8;\tsigned:0;\n"
	"\tfield:const char * buf;\toffset:24;\tsize:8;\tsigned:0;\n"
	"\tfield:size_t count;\toffset:32;\tsize:8;\tsigned:0;\n"
	"\n"
	"print fmt: \"fd: 0x%08lx, buf: 0x%08lx, count: 0x%08lx\", ((unsigned long)(REC->fd)), "
	"((unsigned long)(REC->buf)), ((unsigned long)(REC->count))\n";

static const char switch_format[] =
	"name: sched_switch\n"
	"ID: 316\n"
	"format:\n"
	"\tfield:unsigned short common_type;\toffset:0;\tsize:2;\tsigned:0;\n"
	"\tfield:unsigned char common_flags;\toffset:2;\tsize:1;\tsigned:0;\n"
	"\tfield:unsigned char common_preempt_count;\toffset:3;\tsize:1;\tsigned:0;\n"
	"\tfield:int common_pid;\toffset:4;\tsize:4;\tsigned:1;\n"
	"\n"
	"\tfield:char prev_comm[16];\toffset:8;\tsize:16;\tsigned:1;\n"
	"\tfield:pid_t prev_pid;\toffset:24;\tsize:4;\tsigned:1;\n"
	"\tfield:int prev_prio;\toffset:28;\tsize:4;\tsigned:1;\n"
	"\tfield:long prev_state;\toffset:32;\tsize:8;\tsigned:1;\n"
	"\tfield:char next_comm[16];\toffset:40;\tsize:16;\tsigned:1;\n"
	"\tfield:pid_t next_pid;\toffset:56;\tsize:4;\tsigned:1;\n"
	"\tfield:int next_prio;\toffset:60;\tsize:4;\tsigned:1;\n"
	"\n"
	"print fmt: \"prev_comm=%s prev_pid=%d prev_prio=%d prev_state=%s%s ==> "
	"next_comm=%s next_pid=%d next_prio=%d\", REC->prev_comm, REC->prev_pid, "
	"REC->prev_prio, (REC->prev_state & ((((0x00000000 | 0x00000001 | 0x00000002 | "
	"0x00000004 | 0x00000008 | 0x00000010 | 0x00000020 | 0x00000040) + 1) << 1) - 1)) ? "
	"__print_flags(REC->prev_state & ((((0x00000000 | 0x00000001 | 0x00000002 | "
	"0x00000004 | 0x00000008 | 0x00000010 | 0x00000020 | 0x00000040) + 1) << 1) - 1), "
	"\"|\", { 0x00000001, \"S\" }, { 0x00000002, \"D\" }, { 0x00000004, \"T\" }, "
	"{ 0x00000008, \"t\" }, { 0x00000010, \"X\" }, { 0x00000020, \"Z\" }, "
	"{ 0x00000040, \"P\" }, { 0x00000080, \"I\" }) : \"R\", REC->prev_state & "
	"(((0x00000000 | 0x00000001 | 0x00000002 | 0x00000004 | 0x00000008 | 0x00000010 | "
	"0x00000020 | 0x00000040) + 1) << 1) ? \"+\" : \"\", REC->next_comm, REC->next_pid, "
	"REC->next_prio\n";

static const char exec_format[] =
	"name: sched_process_exec\n"
	"ID: 310\n"
	"format:\n"
	"\tfield:unsigned short common_type;\toffset:0;\tsize:2;\tsigned:0;\n"
	"\tfield:int common_pid;\toffset:4;\tsize:4;\tsigned:1;\n"
	"\n"
	"\tfield:__data_loc char[] filename;\toffset:8;\tsize:4;\tsigned:0;\n"
	"\tfield:pid_t pid;\toffset:12;\tsize:4;\tsigned:1;\n"
	"\tfield:pid_t old_pid;\toffset:16;\tsize:4;\tsigned:1;\n"
	"\n"
	"print fmt: \"filename=%s pid=%d old_pid=%d\", __get_str(filename), REC->pid, "
	"REC->old_pid\n";

/* An enum's name as a key: not evaluated here. */
static const char hrtimer_format[] =
	"name: hrtimer_init\n"
	"format:\n"
	"\tfield:unsigned short common_type;\toffset:0;\tsize:2;\tsigned:0;\n"
	"\tfield:void * hrtimer;\toffset:8;\tsize:8;\tsigned:0;\n"
	"\tfield:clockid_t clockid;\toffset:16;\tsize:4;\tsigned:1;\n"
	"\tfield:enum hrtimer_mode mode;\toffset:20;\tsize:4;\tsigned:0;\n"
	"\n"
	"print fmt: \"hrtimer=%p clockid=%s mode=%s\", REC->hrtimer, "
	"__print_symbolic(REC->clockid, { 0, \"CLOCK_REALTIME\" }), "
	"__print_symbolic(REC->mode, { HRTIMER_MODE_ABS, \"ABS\" })\n";

static struct pr_tp_formats *formats(void)
{
	struct pr_tp_formats *t = pr_tp_formats_new();

	ck_assert_ptr_nonnull(t);
	ck_assert_int_eq(pr_tp_formats_add(t, "syscalls", write_format, strlen(write_format)), 0);
	ck_assert_int_eq(pr_tp_formats_add(t, "sched", switch_format, strlen(switch_format)), 0);
	ck_assert_int_eq(pr_tp_formats_add(t, "sched", exec_format, strlen(exec_format)), 0);
	ck_assert_int_eq(pr_tp_formats_add(t, "timer", hrtimer_format, strlen(hrtimer_format)),
			 0);
	return t;
}

/* What pr_tp_formats_print() writes, in a static buffer. */
static const char *printed(const struct pr_tp_formats *t, const char *event, const void *raw,
			   size_t size, int *ret)
{
	static char buf[1024];
	FILE *f = fmemopen(buf, sizeof(buf), "w");

	ck_assert_ptr_nonnull(f);
	*ret = pr_tp_formats_print(t, event, raw, size, f);
	fclose(f);
	return buf;
}

static void put(unsigned char *raw, size_t off, uint64_t v, size_t size)
{
	memcpy(raw + off, &v, size);
}

START_TEST(write_fields_as_perf_script)
{
	struct pr_tp_formats *t = formats();
	unsigned char raw[40] = { 0 };
	int ret;

	put(raw, 0, 840, 2);
	put(raw, 8, 1, 4);
	put(raw, 16, 1, 8);
	put(raw, 24, 0x55d0c1a2b040, 8);
	put(raw, 32, 4096, 8);
	ck_assert_str_eq(printed(t, "syscalls:sys_enter_write", raw, sizeof(raw), &ret),
			 "fd: 0x00000001, buf: 0x55d0c1a2b040, count: 0x00001000");
	ck_assert_int_eq(ret, 0);
	/* A modifier after the name is not part of it. */
	ck_assert(pr_tp_formats_has(t, "syscalls:sys_enter_write:u"));
	ck_assert(!pr_tp_formats_has(t, "syscalls:sys_enter_read"));
	printed(t, "syscalls:sys_enter_read", raw, sizeof(raw), &ret);
	ck_assert_int_eq(ret, -ENOENT);
	pr_tp_formats_free(t);
}
END_TEST

START_TEST(switch_flags_and_strings)
{
	struct pr_tp_formats *t = formats();
	unsigned char raw[64] = { 0 };
	int ret;

	memcpy(raw + 8, "bash", 5);
	put(raw, 24, 4242, 4);
	put(raw, 28, 120, 4);
	put(raw, 32, 1, 8);                       /* TASK_INTERRUPTIBLE */
	memcpy(raw + 40, "swapper/1", 10);
	put(raw, 56, 0, 4);
	put(raw, 60, (uint64_t)-20, 4);
	ck_assert_str_eq(printed(t, "sched:sched_switch", raw, sizeof(raw), &ret),
			 "prev_comm=bash prev_pid=4242 prev_prio=120 prev_state=S ==> "
			 "next_comm=swapper/1 next_pid=0 next_prio=-20");
	put(raw, 32, 0, 8);                       /* running: preempted */
	ck_assert(strstr(printed(t, "sched:sched_switch", raw, sizeof(raw), &ret),
			 " prev_state=R ==> "));
	put(raw, 32, 0x100, 8);                   /* TASK_REPORT_MAX: preempted too */
	ck_assert(strstr(printed(t, "sched:sched_switch", raw, sizeof(raw), &ret),
			 " prev_state=R+ ==> "));
	put(raw, 32, 0x3, 8);
	ck_assert(strstr(printed(t, "sched:sched_switch", raw, sizeof(raw), &ret),
			 " prev_state=S|D ==> "));
	/* A comm filling its array has no NUL: it ends with the array. */
	memset(raw + 8, 'x', 16);
	ck_assert(strstr(printed(t, "sched:sched_switch", raw, sizeof(raw), &ret),
			 "prev_comm=xxxxxxxxxxxxxxxx prev_pid=4242"));
	pr_tp_formats_free(t);
}
END_TEST

START_TEST(dynamic_string)
{
	struct pr_tp_formats *t = formats();
	unsigned char raw[40] = { 0 };
	int ret;

	put(raw, 8, (uint64_t)(10u << 16 | 20u), 4);
	put(raw, 12, 77, 4);
	put(raw, 16, 77, 4);
	memcpy(raw + 20, "/bin/true", 10);
	ck_assert_str_eq(printed(t, "sched:sched_process_exec", raw, 30, &ret),
			 "filename=/bin/true pid=77 old_pid=77");
	/* A location past the payload: an empty name, and said. */
	put(raw, 8, (uint64_t)(10u << 16 | 200u), 4);
	ck_assert_str_eq(printed(t, "sched:sched_process_exec", raw, 30, &ret),
			 "filename= pid=77 old_pid=77 [truncated: a field's data lies past the 30 bytes]");
	pr_tp_formats_free(t);
}
END_TEST

START_TEST(truncated_payload_is_said)
{
	struct pr_tp_formats *t = formats();
	unsigned char raw[40] = { 0 };
	const char *s;
	int ret;

	put(raw, 16, 1, 8);
	/* Every length short of the fields, and none at all. */
	for (size_t n = 0; n < sizeof(raw); n++) {
		char want[64];

		s = printed(t, "syscalls:sys_enter_write", n ? raw : NULL, n, &ret);
		ck_assert_int_eq(ret, 0);
		snprintf(want, sizeof(want), "[truncated: %zu of 40 bytes]", n);
		ck_assert_msg(strstr(s, want), "%zu bytes: %s", n, s);
	}
	s = printed(t, "syscalls:sys_enter_write", raw, 24, &ret);
	ck_assert_str_eq(s, "fd: 0x00000001, buf: 0x00000000, count: 0x00000000 "
			    "[truncated: 24 of 40 bytes]");
	pr_tp_formats_free(t);
}
END_TEST

START_TEST(unevaluated_print_fmt_lists_fields)
{
	struct pr_tp_formats *t = formats();
	unsigned char raw[24] = { 0 };
	int ret;

	put(raw, 8, 0xffff888100000000, 8);
	put(raw, 16, 1, 4);
	put(raw, 20, 0, 4);
	ck_assert_str_eq(printed(t, "timer:hrtimer_init", raw, sizeof(raw), &ret),
			 "hrtimer=18446612686364999680 clockid=1 mode=0");
	pr_tp_formats_free(t);
}
END_TEST

START_TEST(bad_formats_are_refused)
{
	static const char *const bad[] = {
		"",
		"name: x\n",                                          /* no field */
		"format:\n\tfield:int a;\toffset:0;\tsize:4;\tsigned:1;\n",  /* no name */
		"name: x\n\tfield:int a;\toffset:x;\tsize:4;\n",
		"name: x\n\tfield:;\toffset:0;\tsize:4;\n",
		"name: x\n\tfield:int a;\toffset:4294967295;\tsize:4;\n",
	};
	/* A second print fmt is ignored (the fuzzer's: it leaked). */
	static const char twice[] = "name: x\n\tfield:int a;\toffset:0;\tsize:4;\tsigned:1;\n"
				    "print fmt: \"a=%d\", REC->a\nprint fmt: \"b=%d\", REC->a\n";
	struct pr_tp_formats *t = pr_tp_formats_new();

	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		ck_assert_msg(pr_tp_formats_add(t, "s", bad[i], strlen(bad[i])) == -EBADMSG,
			      "format %zu", i);
	ck_assert_int_eq(pr_tp_formats_add(NULL, "s", "", 0), -EINVAL);
	ck_assert_int_eq(pr_tp_formats_add(t, "s", twice, strlen(twice)), 0);
	pr_tp_formats_free(t);
}
END_TEST

/* A print fmt that is wrong (unbalanced, too few arguments, a number
 * for %s, a huge width): the fields, never a crash or a partial line. */
START_TEST(broken_print_fmt_lists_fields)
{
	static const char *const fmts[] = {
		"\"a=%d b=%d\", REC->a",
		"\"a=%s\", REC->a",
		"\"a=%d\", (REC->a",
		"\"a=%99999d\", REC->a",
		"\"a=%d\", REC->a / 0",
		"\"a=%d\", REC->nosuch",
		"\"a=%d\", ((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((REC->a))))))))))))))))))))))))))))))))))))))))))))))))))))))))))))))))))))",
	};
	unsigned char raw[8] = { 0 };

	put(raw, 4, 5, 4);
	for (size_t i = 0; i < sizeof(fmts) / sizeof(fmts[0]); i++) {
		struct pr_tp_formats *t = pr_tp_formats_new();
		char text[1024];
		int ret;

		snprintf(text, sizeof(text),
			 "name: e\n\tfield:int a;\toffset:4;\tsize:4;\tsigned:1;\n\nprint fmt: %s\n",
			 fmts[i]);
		ck_assert_int_eq(pr_tp_formats_add(t, "s", text, strlen(text)), 0);
		ck_assert_str_eq(printed(t, "s:e", raw, sizeof(raw), &ret), "a=5");
		pr_tp_formats_free(t);
	}
}
END_TEST

/* A divisor that is a field: zero in no real payload, so the print fmt
 * is kept; a payload where it is zero prints the fields. */
START_TEST(a_field_as_divisor)
{
	static const char text[] =
		"name: e\n\tfield:int a;\toffset:0;\tsize:4;\tsigned:1;\n"
		"\tfield:int b;\toffset:4;\tsize:4;\tsigned:1;\n\n"
		"print fmt: \"q=%d r=%d\", REC->a / REC->b, REC->a % REC->b\n";
	struct pr_tp_formats *t = pr_tp_formats_new();
	unsigned char raw[8] = { 0 };
	int ret;

	ck_assert_int_eq(pr_tp_formats_add(t, "s", text, strlen(text)), 0);
	put(raw, 0, (uint64_t)-7, 4);
	put(raw, 4, 2, 4);
	ck_assert_str_eq(printed(t, "s:e", raw, sizeof(raw), &ret), "q=-3 r=-1");
	put(raw, 4, 0, 4);
	ck_assert_str_eq(printed(t, "s:e", raw, sizeof(raw), &ret), "a=-7 b=0");
	pr_tp_formats_free(t);
}
END_TEST

static Suite *tracepoint_suite(void)
{
	Suite *s = suite_create("tracepoint");
	TCase *tc = tcase_create("fields");

	tcase_add_test(tc, write_fields_as_perf_script);
	tcase_add_test(tc, switch_flags_and_strings);
	tcase_add_test(tc, dynamic_string);
	tcase_add_test(tc, truncated_payload_is_said);
	tcase_add_test(tc, unevaluated_print_fmt_lists_fields);
	tcase_add_test(tc, bad_formats_are_refused);
	tcase_add_test(tc, broken_print_fmt_lists_fields);
	tcase_add_test(tc, a_field_as_divisor);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	return run_suite(tracepoint_suite());
}
