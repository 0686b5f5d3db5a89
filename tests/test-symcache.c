/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The address index cache's directory (src/symbols/symcache.c): a second
 * symbolizer maps what the first stored, and without the cache nothing is
 * written; writers racing on one name leave a whole file; the directory
 * stays under its bound, the least recently used going first; what a
 * link, a FIFO or another user left under an index's name is not read;
 * a directory that cannot be made, is another user's or cannot be
 * written leaves naming as it is, with one note; a file without DWARF has
 * its symbols kept, until its debug file appears.
 *
 * usage: test-symcache FILE[:STEP]...   (test-symindex's files: the first
 * without STEP is the one indexed)
 */
#include <dirent.h>

#include "symindex-files.h"

/* Named twice, by two symbolizers with the cache: the first builds and
 * stores, the second maps; the names the same.  Without the cache,
 * nothing is written. */
START_TEST(a_second_symbolizer_maps_the_index_the_first_stored)
{
	uint64_t bytes;
	char sub[4200];
	PR_OPTS(pr_symbolizer_opts, opts, .cache_dir = sm.dir);
	struct pr__ixcache_stats st;

	st = name_with_cache(&sm.o, sm.path, &opts);
	ck_assert_msg(st.stored == 1 && st.mapped == 0, "first: stored %llu, mapped %llu",
		      (unsigned long long)st.stored, (unsigned long long)st.mapped);
	st = name_with_cache(&sm.o, sm.path, &opts);
	ck_assert_msg(st.stored == 0 && st.mapped == 1, "second: stored %llu, mapped %llu",
		      (unsigned long long)st.stored, (unsigned long long)st.mapped);
	/* In cache_dir's index/. */
	snprintf(sub, sizeof(sub), "%s/index", sm.dir);
	ck_assert_uint_eq(dir_files(sub, &bytes), 1);
	ck_assert_uint_eq(bytes, sm.len);
	remove_dir(sm.dir);
	ck_assert_int_eq(mkdir(sm.dir, 0700), 0);
	opts.no_index_cache = true;
	st = name_with_cache(&sm.o, sm.path, &opts);
	ck_assert_uint_eq(st.stored + st.mapped, 0);
	ck_assert_uint_eq(dir_files(sm.dir, &bytes), 0);
}
END_TEST

/* Processes storing the same index at once, while another maps it: each
 * map finds none or a whole one, and one whole file is left, with no
 * writer's leftovers. */
START_TEST(writers_racing_on_one_index_leave_a_whole_file)
{
	struct pr__symindex *got;
	size_t reads = 0, found = 0;
	uint64_t bytes;
	struct pr__ixcache *reader = pr__ixcache_new(sm.dir, 0, true, NULL);
	struct pr__ixcache_stats st;
	pid_t kids[6];
	int status[6], running;

	ck_assert_ptr_nonnull(reader);
	for (size_t i = 0; i < PR_ARRAY_SIZE(kids); i++) {
		ck_assert_int_ge(kids[i] = fork(), 0);
		if (!kids[i]) {
			struct pr__ixcache *c = pr__ixcache_new(sm.dir, 0, true, NULL);
			struct pr__ixcache_stats cs;

			for (int n = 0; n < 200; n++)
				pr__ixcache_put(c, &sm.k, sm.ix, sm.path, NULL);
			pr__ixcache_stats(c, &cs);
			_exit(cs.stored == 200 ? 0 : 1);
		}
	}
	do {
		running = 0;
		for (size_t i = 0; i < PR_ARRAY_SIZE(kids); i++) {
			pid_t w;

			if (!kids[i])
				continue;
			ck_assert_int_ge(w = waitpid(kids[i], &status[i], WNOHANG), 0);
			if (w == kids[i])
				kids[i] = 0;
			running += kids[i] != 0;
		}
		got = pr__ixcache_get(reader, &sm.k, sm.path);
		reads++;
		found += got != NULL;
		pr__symindex_free(got);
	} while (running);
	for (size_t i = 0; i < PR_ARRAY_SIZE(kids); i++)
		ck_assert_msg(WIFEXITED(status[i]) && !WEXITSTATUS(status[i]), "a writer failed");
	pr__ixcache_stats(reader, &st);
	fprintf(stderr, "%zu maps while 6 writers stored 200 times each: %zu found it\n", reads,
		found);
	ck_assert_uint_eq(st.refused, 0);
	ck_assert_ptr_nonnull(got = pr__ixcache_get(reader, &sm.k, sm.path));
	pr__symindex_free(got);
	ck_assert_uint_eq(dir_files(sm.dir, &bytes), 1);
	ck_assert_uint_eq(bytes, sm.len);
	pr__ixcache_free(reader);
}
END_TEST

static void set_age(const char *dir, const struct pr__ix_key *k, time_t ago)
{
	char hex[2 * PR_BUILD_ID_MAX + 1], name[4300];
	struct timespec t[2] = { { .tv_sec = time(NULL) - ago }, { .tv_sec = time(NULL) - ago } };

	pr__hex(hex, k->build_id, k->build_id_size);
	snprintf(name, sizeof(name), "%s/%s-s%x.dsix", dir, hex, k->settings);
	ck_assert_int_eq(utimensat(AT_FDCWD, name, t, 0), 0);
}

static bool kept(const char *dir, const struct pr__ix_key *k)
{
	char hex[2 * PR_BUILD_ID_MAX + 1], name[4300];

	pr__hex(hex, k->build_id, k->build_id_size);
	snprintf(name, sizeof(name), "%s/%s-s%x.dsix", dir, hex, k->settings);
	return !access(name, F_OK);
}

/* A directory bounded to three indexes and a half: storing more removes
 * the least recently used (mapping one makes it the most recent), never
 * goes over the bound, and leaves what is not an index alone; writers'
 * leftovers go when an hour old.  An index larger than the bound is not
 * stored. */
START_TEST(the_cache_stays_under_its_bound_least_recently_used_going_first)
{
	struct pr__symindex *got;
	struct pr__ix_key keys[10];
	struct pr__symindex *written = NULL;
	unsigned char *a, *b;
	size_t la, lb;
	uint64_t bytes;
	char other[4300];
	struct pr__ixcache *c = pr__ixcache_new(sm.dir, 3 * sm.len + sm.len / 2, true, NULL);
	struct pr__ixcache_stats st;
	FILE *f;

	ck_assert_ptr_nonnull(c);
	for (int i = 0; i < 10; i++) {
		keys[i] = sm.k;
		keys[i].build_id[0] = (uint8_t)i;
	}
	snprintf(other, sizeof(other), "%s/notes.txt", sm.dir);
	ck_assert_ptr_nonnull(f = fopen(other, "w"));
	fputs("not an index\n", f);
	fclose(f);
	for (int i = 0; i < 3; i++) {
		pr__ixcache_put(c, &keys[i], sm.ix, sm.path, i == 1 ? &written : NULL);
		set_age(sm.dir, &keys[i], 100 - 10 * i);
	}
	ck_assert_ptr_nonnull(written);
	/* 0 is used: 1 is then the least recent. */
	ck_assert_ptr_nonnull(got = pr__ixcache_get(c, &keys[0], sm.path));
	pr__symindex_free(got);
	pr__ixcache_put(c, &keys[3], sm.ix, sm.path, NULL);
	ck_assert(kept(sm.dir, &keys[0]) && !kept(sm.dir, &keys[1]) && kept(sm.dir, &keys[2]) &&
		  kept(sm.dir, &keys[3]));
	/* Where 1 was written, it is still mapped after it went: its bytes
	 * are still the index's. */
	a = file_bytes(sm.ix, &keys[1], &la);
	b = file_bytes(written, &keys[1], &lb);
	ck_assert_msg(la == lb && !memcmp(a, b, la), "its file gone, the mapping changed");
	free(a);
	free(b);
	pr__symindex_free(written);
	set_age(sm.dir, &keys[3], 50);
	pr__ixcache_put(c, &keys[4], sm.ix, sm.path, NULL);
	ck_assert(kept(sm.dir, &keys[0]) && !kept(sm.dir, &keys[2]) && kept(sm.dir, &keys[3]) &&
		  kept(sm.dir, &keys[4]));
	for (int i = 5; i < 10; i++) {
		pr__ixcache_put(c, &keys[i], sm.ix, sm.path, NULL);
		ck_assert_uint_le(dir_files(sm.dir, &bytes), 4);
		ck_assert_uint_le(bytes - 13, 3 * sm.len + sm.len / 2);
	}
	ck_assert(kept(sm.dir, &keys[9]));
	ck_assert(!access(other, F_OK));
	pr__ixcache_stats(c, &st);
	ck_assert_uint_eq(st.stored, 10);
	ck_assert_uint_eq(st.evicted, 7);
	pr__ixcache_free(c);

	/* A leftover an hour old goes, a fresh one stays. */
	snprintf(other, sizeof(other), "%s/x.dsix.tmp.1.1", sm.dir);
	ck_assert_ptr_nonnull(f = fopen(other, "w"));
	fclose(f);
	ck_assert_int_eq(utimensat(AT_FDCWD, other, (struct timespec[2]){ { .tv_sec = 1 },
						     { .tv_sec = 1 } }, 0), 0);
	snprintf(other, sizeof(other), "%s/y.dsix.tmp.1.2", sm.dir);
	ck_assert_ptr_nonnull(f = fopen(other, "w"));
	fclose(f);
	c = pr__ixcache_new(sm.dir, 3 * sm.len + sm.len / 2, true, NULL);
	pr__ixcache_evict(c);
	ck_assert(!access(other, F_OK));
	snprintf(other, sizeof(other), "%s/x.dsix.tmp.1.1", sm.dir);
	ck_assert(access(other, F_OK));
	pr__ixcache_free(c);

	/* Larger than the bound: not stored. */
	remove_dir(sm.dir);
	ck_assert_int_eq(mkdir(sm.dir, 0700), 0);
	c = pr__ixcache_new(sm.dir, sm.len / 2, true, NULL);
	pr__ixcache_put(c, &sm.k, sm.ix, sm.path, NULL);
	ck_assert_uint_eq(dir_files(sm.dir, &bytes), 0);
	pr__ixcache_free(c);

}
END_TEST

/* The cache's messages a symbolizer logged, for the tests to count. */
static char logged[8192];
static int nr_logged;

static void keep_log(enum pr_log_level level, const char *msg, void *ctx)
{
	(void)ctx;
	(void)level;
	if (!strstr(msg, "address index cache"))
		return;
	nr_logged++;
	strncat(logged, msg, sizeof(logged) - strlen(logged) - 2);
	strcat(logged, "\n");
}

/* What another user or a link left under the index's name: not read,
 * naming as before, and replaced by the index. */
START_TEST(a_link_fifo_or_other_users_file_in_the_cache_is_not_read)
{
	char *elsewhere = make_dir(), name[4300], target[4300];
	PR_OPTS(pr_symbolizer_opts, opts, .index_cache_dir = sm.dir);
	struct pr__ixcache_stats st;
	struct stat sb;

	for (int way = 0; way < 3; way++) {
		if (way == 2 && geteuid()) {
			fprintf(stderr, "not root: another user's file not tried\n");
			break;
		}
		plant(elsewhere, &sm.k, sm.b, sm.len, target, sizeof(target));
		plant(sm.dir, &sm.k, sm.b, sm.len, name, sizeof(name));
		ck_assert_int_eq(unlink(name), 0);
		if (way == 0)
			ck_assert_int_eq(symlink(target, name), 0);
		else if (way == 1)
			ck_assert_int_eq(mkfifo(name, 0600), 0);
		else
			ck_assert_int_eq(rename(target, name) || chown(name, NOBODY, NOBODY), 0);
		st = name_with_cache(&sm.o, sm.path, &opts);
		ck_assert_msg(st.refused == 1 && st.stored == 1 && !st.mapped,
			      "way %d: refused %llu stored %llu", way,
			      (unsigned long long)st.refused, (unsigned long long)st.stored);
		ck_assert_int_eq(lstat(name, &sb), 0);
		ck_assert(S_ISREG(sb.st_mode) && sb.st_uid == geteuid());
	}
	remove_dir(sm.dir);
	remove_dir(elsewhere);
	free(elsewhere);
}
END_TEST

/* A directory that cannot be made, one of another user, and one that
 * cannot be written: naming as without a cache, nothing written, one
 * note at most. */
START_TEST(an_unusable_cache_directory_leaves_naming_as_it_is)
{
	uint64_t bytes;
	char sub[4300];
	PR_OPTS(pr_symbolizer_opts, opts, .index_cache_dir = sub, .log = keep_log);
	struct pr__ixcache_stats st;
	FILE *f;
	pid_t kid;
	int status;

	/* Under a regular file. */
	snprintf(sub, sizeof(sub), "%s/file", sm.dir);
	ck_assert_ptr_nonnull(f = fopen(sub, "w"));
	fclose(f);
	snprintf(sub, sizeof(sub), "%s/file/index", sm.dir);
	nr_logged = 0;
	logged[0] = 0;
	st = name_with_cache(&sm.o, sm.path, &opts);
	ck_assert_uint_eq(st.stored + st.mapped + st.refused, 0);
	ck_assert_msg(nr_logged == 1 && strstr(logged, "cannot be made"), "logged: %s", logged);
	if (geteuid()) {
		fprintf(stderr, "not root: other users' directories not tried\n");
		return;
	}
	/* Another user's. */
	snprintf(sub, sizeof(sub), "%s/theirs", sm.dir);
	ck_assert_int_eq(mkdir(sub, 0777), 0);
	ck_assert_int_eq(chown(sub, NOBODY, NOBODY), 0);
	nr_logged = 0;
	logged[0] = 0;
	st = name_with_cache(&sm.o, sm.path, &opts);
	ck_assert_uint_eq(st.stored + st.mapped + st.refused, 0);
	ck_assert_msg(nr_logged == 1 && strstr(logged, "another user"), "logged: %s", logged);
	ck_assert_uint_eq(dir_files(sub, &bytes), 0);
	/* Ours, not writable: as that user, whom root's permissions do not
	 * cover. */
	snprintf(sub, sizeof(sub), "%s/readonly", sm.dir);
	ck_assert_int_eq(mkdir(sub, 0500), 0);
	ck_assert_int_eq(chown(sub, NOBODY, NOBODY), 0);
	ck_assert_int_eq(chmod(sm.dir, 0755), 0);
	ck_assert_int_ge(kid = fork(), 0);
	if (!kid) {
		if (setresgid(NOBODY, NOBODY, NOBODY) || setresuid(NOBODY, NOBODY, NOBODY))
			_exit(3);
		nr_logged = 0;
		logged[0] = 0;
		st = name_with_cache(&sm.o, sm.path, &opts);
		_exit(st.stored || nr_logged != 1 || !strstr(logged, "cannot be written") ? 1 : 0);
	}
	ck_assert_int_eq(waitpid(kid, &status, 0), kid);
	ck_assert_msg(WIFEXITED(status) && !WEXITSTATUS(status), "as nobody: status %d", status);
	ck_assert_uint_eq(dir_files(sub, &bytes), 0);
}
END_TEST

static int nr_cut_logged;

static void count_cut(enum pr_log_level level, const char *msg, void *ctx)
{
	(void)ctx;
	if (level == PR_LOG_WARN && strstr(msg, "cut short while this process had it mapped"))
		nr_cut_logged++;
}

/*
 * An index file cut short while a symbolizer has it mapped (by truncate
 * or a cp over it, not by the cache, which replaces files whole): the
 * reads past its new end, a SIGBUS without the guard (base/busguard.c),
 * find zeros and are noticed; every address is then named as before,
 * the index made again from the file and stored whole, with one warning.
 * Cut at a page, so that every byte lost is a fault: the page the file
 * now ends in keeps its bytes up to the end and zeros after, which no
 * fault tells (symbolizer.c).
 */
START_TEST(an_index_cut_short_under_its_mapping_is_made_again)
{
	char *path = NULL, name[4300] = "";
	PR_OPTS(pr_symbolizer_opts, opts, .index_cache_dir = sm.dir, .log = count_cut);
	struct pr__ixcache_stats st;
	struct opened ref, c;
	struct dirent *de;
	size_t chains;
	struct stat sb;
	off_t whole;
	long page = sysconf(_SC_PAGESIZE);
	DIR *d;

	/* The large file: an index of many pages. */
	for (int i = 0; i < nr_files && !path; i++) {
		uint64_t step;
		bool small;

		path = file_arg(i, &step, &small);
		if (small) {
			free(path);
			path = NULL;
		}
	}
	ck_assert_ptr_nonnull(path);
	open_file(&ref, path, NULL, true);
	/* Stored by one symbolizer, mapped by the next. */
	open_file(&c, path, &opts, true);
	name_alike_every(&ref, &c, 101, &chains);
	close_file(&c);
	ck_assert_ptr_nonnull(d = opendir(sm.dir));
	while ((de = readdir(d)))
		if (strstr(de->d_name, ".dsix"))
			snprintf(name, sizeof(name), "%s/%s", sm.dir, de->d_name);
	closedir(d);
	ck_assert_int_eq(stat(name, &sb), 0);
	whole = sb.st_size;
	ck_assert_int_gt(whole, 8 * page);
	nr_cut_logged = 0;
	open_file(&c, path, &opts, true);
	name_alike_every(&ref, &c, 101, &chains);
	st = stats_of(c.s);
	ck_assert_msg(st.mapped == 1 && !st.stored, "mapped %llu stored %llu",
		      (unsigned long long)st.mapped, (unsigned long long)st.stored);
	ck_assert_int_eq(truncate(name, page), 0);
	/* Every answer kept points into the index: each is named again. */
	ck_assert_uint_gt(name_alike_every(&ref, &c, 101, &chains), 100);
	ck_assert_msg(chains > 10, "%zu frames with DWARF chains", chains);
	ck_assert_int_eq(nr_cut_logged, 1);
	ck_assert_int_eq(stat(name, &sb), 0);
	ck_assert_int_eq(sb.st_size, whole);
	/* The index made again is the file stored, mapped: cut again, it
	 * is noticed again. */
	ck_assert_int_eq(truncate(name, 2 * page), 0);
	ck_assert_uint_gt(name_alike_every(&ref, &c, 101, &chains), 100);
	ck_assert_int_eq(nr_cut_logged, 2);
	ck_assert_int_eq(stat(name, &sb), 0);
	ck_assert_int_eq(sb.st_size, whole);
	close_file(&c);
	close_file(&ref);
	free(path);
}
END_TEST

/*
 * A file without DWARF: its symbols kept in the cache once that is known,
 * and taken from there by the next symbolizer, which opens nothing of the
 * file with libdwfl; on both paths.  Its debug file found since (a debug
 * directory given), the index of its symbols alone is not what the file
 * gives: it is named with DWARF again.
 */
START_TEST(a_file_without_dwarf_has_its_symbols_kept_until_its_debug_file_appears)
{
	char stripped[4300], debug[4300], ix[4300], cmd[13000];
	const char *fixtures = getenv("DS_FIXTURES");
	const char *dirs[1] = { debug };
	PR_OPTS(pr_symbolizer_opts, opts, .index_cache_dir = ix);
	struct opened o, c;
	size_t chains;

	ck_assert_ptr_nonnull(fixtures);
	snprintf(stripped, sizeof(stripped), "%s/stripped.so", sm.dir);
	snprintf(debug, sizeof(debug), "%s/debug", sm.dir);
	snprintf(ix, sizeof(ix), "%s/ix", sm.dir);
	snprintf(cmd, sizeof(cmd), "sh '%s/../make-stripped.sh' '%s' '%s' '%s'", fixtures, sm.path,
		 stripped, debug);
	ck_assert_int_eq(system(cmd), 0);
	open_file(&o, stripped, NULL, true);
	for (int use_index = 0; use_index < 2; use_index++) {
		uint64_t bytes;

		remove_dir(ix);
		pr__symbolizer_use_index(o.s, use_index);
		/* First: read from the file, found to have no DWARF, kept. */
		open_file(&c, stripped, &opts, true);
		pr__symbolizer_use_index(c.s, use_index);
		ck_assert_uint_gt(name_alike(&o, &c, &chains), 10);
		ck_assert_uint_eq(chains, 0);
		ck_assert_uint_eq(stats_of(c.s).stored, 1);
		close_file(&c);
		ck_assert_uint_eq(dir_files(ix, &bytes), 1);
		/* Second: from the cache, nothing of the file opened. */
		open_file(&c, stripped, &opts, true);
		pr__symbolizer_use_index(c.s, use_index);
		ck_assert_msg(c.m->names_index && !c.m->index && !c.m->has_dwarf && !c.m->dwfl &&
			      !c.m->mod && !c.m->nr_elves, "path %d: not taken from the cache",
			      use_index);
		ck_assert_uint_gt(name_alike(&o, &c, &chains), 10);
		ck_assert_uint_eq(stats_of(c.s).mapped, 1);
		ck_assert_uint_eq(stats_of(c.s).stored, 0);
		close_file(&c);
	}
	close_file(&o);
	/* Its debug file found: named with its DWARF, as a symbolizer without
	 * a cache names it. */
	opts.debug_dirs = dirs;
	opts.nr_debug_dirs = 1;
	open_file(&o, stripped, &(struct pr_symbolizer_opts){ .sz = sizeof(opts),
				     .no_index_cache = true, .debug_dirs = dirs,
				     .nr_debug_dirs = 1 }, true);
	open_file(&c, stripped, &opts, true);
	ck_assert_ptr_null(c.m->names_index);
	ck_assert_uint_gt(name_alike(&o, &c, &chains), 10);
	ck_assert_uint_gt(chains, 10);
	close_file(&c);
	close_file(&o);
}
END_TEST

int main(int argc, char **argv)
{
	Suite *s = suite_create("symcache");
	TCase *tc = tcase_create("cache");

	if (!take_files(argc, argv, "FILE[:STEP]..."))
		return EXIT_FAILURE;
	tcase_set_timeout(tc, 300);
	tcase_add_checked_fixture(tc, small_setup, small_teardown);
	tcase_add_test(tc, a_second_symbolizer_maps_the_index_the_first_stored);
	tcase_add_test(tc, writers_racing_on_one_index_leave_a_whole_file);
	tcase_add_test(tc, the_cache_stays_under_its_bound_least_recently_used_going_first);
	tcase_add_test(tc, a_link_fifo_or_other_users_file_in_the_cache_is_not_read);
	tcase_add_test(tc, an_unusable_cache_directory_leaves_naming_as_it_is);
	tcase_add_test(tc, a_file_without_dwarf_has_its_symbols_kept_until_its_debug_file_appears);
	tcase_add_test(tc, an_index_cut_short_under_its_mapping_is_made_again);
	suite_add_tcase(s, tc);
	return run_suite(s);
}
