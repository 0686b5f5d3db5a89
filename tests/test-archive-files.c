/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Captures that outlive their machine (prarchive.h), without a kernel:
 * the archive's name, an archive written and extracted once, its index
 * told to a model, and the archives refused -- missing, damaged, or with
 * a name that would leave its directory.  tests/test-archive.sh records
 * and reports a real capture with one.
 */
#include <check.h>
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>

#include "checkmain.h"
#include "model/model.h"
#include "perfreader.h"

static char tmp[] = "/tmp/test-archive-files.XXXXXX";
static char cache[PATH_MAX], archive[PATH_MAX];

static void setup(void)
{
	strcpy(tmp, "/tmp/test-archive-files.XXXXXX");
	ck_assert_ptr_nonnull(mkdtemp(tmp));
	snprintf(cache, sizeof(cache), "%s/cache", tmp);
	snprintf(archive, sizeof(archive), "%s/a.data.archive.tar.gz", tmp);
}

static void teardown(void)
{
	char cmd[PATH_MAX + 16];

	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", tmp);
	ck_assert_int_eq(system(cmd), 0);
}

/* A gzipped ustar at `path` of `nr` members, names[i] holding data[i]. */
static void write_tar(const char *path, const char *const *names, const char *const *data,
		      size_t nr)
{
	gzFile f = gzopen(path, "wb");

	ck_assert_ptr_nonnull(f);
	for (size_t i = 0; i < nr; i++) {
		unsigned char h[512] = { 0 }, pad[512] = { 0 };
		size_t len = strlen(data[i]);
		unsigned sum = 0;

		memcpy(h, names[i], strlen(names[i]));
		snprintf((char *)h + 100, 8, "%07o", 0644);
		snprintf((char *)h + 124, 12, "%011o", (unsigned)len);
		memset(h + 148, ' ', 8);
		h[156] = '0';
		memcpy(h + 257, "ustar", 6);
		for (size_t k = 0; k < sizeof(h); k++)
			sum += h[k];
		snprintf((char *)h + 148, 8, "%06o", sum);
		ck_assert_int_eq(gzwrite(f, h, sizeof(h)), (int)sizeof(h));
		if (len)
			ck_assert_int_eq(gzwrite(f, data[i], (unsigned)len), (int)len);
		if (len % 512)
			ck_assert_int_eq(gzwrite(f, pad, 512 - len % 512), (int)(512 - len % 512));
	}
	ck_assert_int_eq(gzwrite(f, (char[1024]){ 0 }, 1024), 1024);
	ck_assert_int_eq(gzclose(f), Z_OK);
}

/* How many entries the directory `dir` has ("." and ".." aside). */
static int entries(const char *dir)
{
	char cmd[PATH_MAX + 64];
	FILE *p;
	int n = -1;

	snprintf(cmd, sizeof(cmd), "ls -A '%s' 2>/dev/null | wc -l", dir);
	p = popen(cmd, "r");
	ck_assert_ptr_nonnull(p);
	ck_assert_int_eq(fscanf(p, "%d", &n), 1);
	pclose(p);
	return n;
}

START_TEST(the_archive_is_named_after_the_capture)
{
	char buf[64];

	ck_assert_int_eq(pr_archive_name("run.data", buf, sizeof(buf)), 0);
	ck_assert_str_eq(buf, "run.data.archive.tar.gz");
	ck_assert_int_eq(pr_archive_name("run.data", buf, 8), -ENAMETOOLONG);
	ck_assert_int_eq(pr_archive_name(NULL, buf, sizeof(buf)), -EINVAL);
}
END_TEST

START_TEST(an_archive_is_extracted_once_and_found_again)
{
	struct pr_keeper *k = pr_keeper_new(NULL);
	struct pr_archive *a, *again;
	char index[PATH_MAX + 16];

	ck_assert_ptr_nonnull(k);
	/* Nothing held, nothing sampled: an index alone. */
	ck_assert_int_eq(pr_keeper_write_archive(k, archive, false), 0);
	pr_keeper_free(k);
	a = pr_archive_open(archive, cache, NULL);
	ck_assert_ptr_nonnull(a);
	ck_assert_ptr_null(pr_archive_kallsyms(a));
	snprintf(index, sizeof(index), "%s/index", pr_archive_dir(a));
	ck_assert_int_eq(access(index, R_OK), 0);
	again = pr_archive_open(archive, cache, NULL);
	ck_assert_ptr_nonnull(again);
	ck_assert_str_eq(pr_archive_dir(again), pr_archive_dir(a));
	snprintf(index, sizeof(index), "%s/archives", cache);
	ck_assert_int_eq(entries(index), 1);
	pr_archive_close(again);
	pr_archive_close(a);
	pr_archive_close(NULL);
}
END_TEST

START_TEST(the_index_tells_a_model_build_ids_by_path)
{
	const char *names[] = { "index", "kallsyms" };
	const char *data[] = { "0102abcd /opt/prog\nnonsense\nff /too/short\n",
			       "ffffffff81000000 T _text\n" };
	struct pr_model *m = pr_model_new(NULL);
	struct pr_archive *a;
	uint8_t id[PR_BUILD_ID_MAX];

	write_tar(archive, names, data, 2);
	a = pr_archive_open(archive, cache, NULL);
	ck_assert_ptr_nonnull(a);
	ck_assert_ptr_nonnull(pr_archive_kallsyms(a));
	ck_assert_ptr_nonnull(m);
	ck_assert_int_eq(pr_archive_index(a, m), 0);
	ck_assert_uint_eq(pr__model_build_id_hint(m, "/opt/prog", id), 4);
	ck_assert_mem_eq(id, "\x01\x02\xab\xcd", 4);
	ck_assert_uint_eq(pr__model_build_id_hint(m, "/too/short", id), 0);
	ck_assert_int_eq(pr_archive_index(NULL, m), -EINVAL);
	pr_model_free(m);
	pr_archive_close(a);
}
END_TEST

START_TEST(no_archive_and_no_directory_are_told_apart)
{
	errno = 0;
	ck_assert_ptr_null(pr_archive_open(archive, cache, NULL));
	ck_assert_int_eq(errno, ENOENT);
	write_tar(archive, (const char *[]){ "index" }, (const char *[]){ "" }, 1);
	ck_assert_ptr_null(pr_archive_open(archive, NULL, NULL));
	ck_assert_int_eq(errno, EINVAL);
}
END_TEST

START_TEST(a_damaged_archive_is_refused_and_leaves_nothing)
{
	char dir[PATH_MAX + 16];

	/* No index: not one the keeper wrote. */
	write_tar(archive, (const char *[]){ "kallsyms" }, (const char *[]){ "x\n" }, 1);
	errno = 0;
	ck_assert_ptr_null(pr_archive_open(archive, cache, NULL));
	ck_assert_int_eq(errno, EBADMSG);
	ck_assert_int_eq(truncate(archive, 20), 0);
	ck_assert_ptr_null(pr_archive_open(archive, cache, NULL));
	ck_assert_int_eq(errno, EBADMSG);
	snprintf(dir, sizeof(dir), "%s/archives", cache);
	ck_assert_int_eq(entries(dir), 0);
}
END_TEST

START_TEST(a_name_leaving_the_directory_is_refused)
{
	const char *names[] = { "index", "../../escape" };
	const char *data[] = { "", "owned\n" };
	char escape[PATH_MAX + 16];

	write_tar(archive, names, data, 2);
	errno = 0;
	ck_assert_ptr_null(pr_archive_open(archive, cache, NULL));
	ck_assert_int_eq(errno, EBADMSG);
	snprintf(escape, sizeof(escape), "%s/escape", cache);
	ck_assert_int_ne(access(escape, F_OK), 0);
	snprintf(escape, sizeof(escape), "%s/escape", tmp);
	ck_assert_int_ne(access(escape, F_OK), 0);
}
END_TEST

START_TEST(the_build_id_cache_needs_a_place)
{
	struct pr_keeper *k = pr_keeper_new(NULL);
	char *home = getenv("HOME") ? strdup(getenv("HOME")) : NULL;
	char *perf = getenv("PERF_BUILDID_DIR") ? strdup(getenv("PERF_BUILDID_DIR")) : NULL;

	ck_assert_ptr_nonnull(k);
	unsetenv("HOME");
	unsetenv("PERF_BUILDID_DIR");
	ck_assert_int_eq(pr_keeper_write_cache(k, NULL), -ENOENT);
	/* Nothing sampled: nothing to add. */
	ck_assert_int_eq(pr_keeper_write_cache(k, tmp), 0);
	ck_assert_int_eq(pr_keeper_write_cache(NULL, tmp), -EINVAL);
	ck_assert_int_eq(pr_keeper_record(k, NULL), -EINVAL);
	if (home)
		setenv("HOME", home, 1);
	if (perf)
		setenv("PERF_BUILDID_DIR", perf, 1);
	free(home);
	free(perf);
	pr_keeper_free(k);
	pr_keeper_free(NULL);
}
END_TEST

static Suite *suite(void)
{
	Suite *s = suite_create("archive-files");
	TCase *tc = tcase_create("archive");

	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, the_archive_is_named_after_the_capture);
	tcase_add_test(tc, an_archive_is_extracted_once_and_found_again);
	tcase_add_test(tc, the_index_tells_a_model_build_ids_by_path);
	tcase_add_test(tc, no_archive_and_no_directory_are_told_apart);
	tcase_add_test(tc, a_damaged_archive_is_refused_and_leaves_nothing);
	tcase_add_test(tc, a_name_leaving_the_directory_is_refused);
	tcase_add_test(tc, the_build_id_cache_needs_a_place);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	return run_suite(suite());
}
