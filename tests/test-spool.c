/* SPDX-License-Identifier: Apache-2.0 */
/*
 * A backend's spool (src/upload/spool.c), alone: how many times a backend
 * answered a request with a fault is kept with it, across a restart, and
 * a request put behind the others keeps its count; a file an older
 * version wrote (no count) is read as one never tried; a damaged count
 * is a damaged file, removed and counted.
 */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "checkmain.h"
#include "upload/upload.h"

static char dir[64];
static struct pr_logger lg;

static void setup(void)
{
	snprintf(dir, sizeof(dir), "/tmp/test-spool-XXXXXX");
	ck_assert_ptr_nonnull(mkdtemp(dir));
}

static void teardown(void)
{
	char cmd[128];

	snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
	ck_assert_int_eq(system(cmd), 0);
}

static void push(struct pr__spool *s, const char *body, unsigned tries)
{
	struct pr__request r = {
		.target = (char *)"/t", .content_type = (char *)"a/b",
		.content_encoding = (char *)"", .body = (char *)body, .len = strlen(body),
		.tries = tries,
	};
	uint64_t dropped = 0;

	ck_assert_int_eq(pr__spool_push(s, &r, &dropped), 0);
	ck_assert_uint_eq(dropped, 0);
}

/* The oldest is `body`, tried `tries` times. */
static void expect(struct pr__spool *s, const char *body, unsigned tries)
{
	struct pr__request r;
	uint64_t dropped = 0;

	ck_assert_int_eq(pr__spool_peek(s, &r, &dropped), 1);
	ck_assert_uint_eq(dropped, 0);
	ck_assert_uint_eq(r.len, strlen(body));
	ck_assert(!memcmp(r.body, body, r.len));
	ck_assert_uint_eq(r.tries, tries);
	ck_assert_str_eq(r.target, "/t");
	pr__request_clear(&r);
}

START_TEST(a_request_keeps_its_tries_across_a_restart_and_behind_the_others)
{
	struct pr__spool *s = pr__spool_open(dir, 1 << 20, &lg);
	struct pr__request r;
	uint64_t dropped = 0, head;

	ck_assert_ptr_nonnull(s);
	push(s, "first", 0);
	push(s, "second", 2);
	pr__spool_close(s);
	s = pr__spool_open(dir, 1 << 20, &lg);
	ck_assert_uint_eq(pr__spool_count(s), 2);
	expect(s, "first", 0);
	/* Answered with a fault: behind the other, tried once. */
	head = pr__spool_head(s);
	ck_assert_int_eq(pr__spool_peek(s, &r, &dropped), 1);
	r.tries = 1;
	ck_assert_int_eq(pr__spool_requeue(s, &r), 0);
	pr__request_clear(&r);
	ck_assert_uint_ne(pr__spool_head(s), head);
	ck_assert_uint_eq(pr__spool_count(s), 2);
	pr__spool_close(s);
	s = pr__spool_open(dir, 1 << 20, &lg);
	expect(s, "second", 2);
	pr__spool_pop(s);
	expect(s, "first", 1);
	pr__spool_pop(s);
	ck_assert_uint_eq(pr__spool_count(s), 0);
	ck_assert_uint_eq(pr__spool_head(s), UINT64_MAX);
	pr__spool_close(s);
}
END_TEST

/* A file as the spool writes it, by hand. */
static void write_file(const char *name, const char *text)
{
	char path[128];
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	f = fopen(path, "w");
	ck_assert_ptr_nonnull(f);
	fputs(text, f);
	fclose(f);
}

START_TEST(an_older_file_has_no_tries_and_a_damaged_count_is_removed)
{
	struct pr__spool *s;
	struct pr__request r;
	uint64_t dropped = 0;

	write_file("00000000000000000001.req", "dwarfsample-spool 1\n/t\na/b\n\n\nold");
	write_file("00000000000000000002.req", "dwarfsample-spool 1\n/t\na/b\n\ntries x\n\nbad");
	write_file("00000000000000000003.req", "dwarfsample-spool 1\n/t\na/b\n\ntries 4\n\nnew");
	s = pr__spool_open(dir, 1 << 20, &lg);
	ck_assert_uint_eq(pr__spool_count(s), 3);
	expect(s, "old", 0);
	pr__spool_pop(s);
	ck_assert_int_eq(pr__spool_peek(s, &r, &dropped), 1);
	ck_assert_uint_eq(dropped, 1);
	ck_assert_uint_eq(r.tries, 4);
	ck_assert(r.len == 3 && !memcmp(r.body, "new", 3));
	pr__request_clear(&r);
	pr__spool_close(s);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("spool");
	TCase *tc = tcase_create("spool");

	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, a_request_keeps_its_tries_across_a_restart_and_behind_the_others);
	tcase_add_test(tc, an_older_file_has_no_tries_and_a_damaged_count_is_removed);
	suite_add_tcase(s, tc);
	return run_suite(s);
}
