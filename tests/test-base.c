/* SPDX-License-Identifier: Apache-2.0 */
/* The base every stage builds on: the hash function, the hash table, the
 * array, and mappings guarded against their file cut short. */
#include <check.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include "base/base.h"
#include "checkmain.h"

/* FNV-1a 64's published test vectors: the basis is the empty string's. */
START_TEST(the_string_hash_is_fnv1a_64)
{
	ck_assert_uint_eq(pr__hash_str(""), UINT64_C(0xcbf29ce484222325));
	ck_assert_uint_eq(pr__hash_str("a"), UINT64_C(0xaf63dc4c8601ec8c));
	ck_assert_uint_eq(pr__hash_str("foobar"), UINT64_C(0x85944171f73967e8));
	/* Bytes hash as the string does, and in pieces as in one. */
	ck_assert_uint_eq(pr__hash_bytes(PR_HASH_INIT, "foobar", 6), pr__hash_str("foobar"));
	ck_assert_uint_eq(pr__hash_bytes(pr__hash_bytes(PR_HASH_INIT, "foo", 3), "bar", 3),
			  pr__hash_str("foobar"));
}
END_TEST

START_TEST(mixing_depends_on_both_values_and_their_order)
{
	ck_assert_uint_ne(pr__hash_mix(1, 2), pr__hash_mix(2, 1));
	ck_assert_uint_ne(pr__hash_mix(0, 1), pr__hash_mix(0, 2));
	ck_assert_uint_ne(pr__hash_mix(1, 0), pr__hash_mix(2, 0));
}
END_TEST

static void *val(uintptr_t i)
{
	return (void *)(i + 1);
}

START_TEST(an_empty_map_finds_nothing_and_deletes_nothing)
{
	struct pr_hashmap m = { 0 };
	size_t it = 0;

	ck_assert_ptr_null(pr__hashmap_get(&m, 1));
	ck_assert_ptr_null(pr__hashmap_next(&m, 1, &it));
	ck_assert_ptr_null(pr__hashmap_del(&m, 1));
	pr__hashmap_free(&m);
	pr__hashmap_free(&m);
}
END_TEST

/* Sequential keys (pids) and key 0 through several doublings: every one
 * found, none lost in a rehash, and a put on a key replaces its value. */
START_TEST(the_map_grows_and_keeps_every_key)
{
	struct pr_hashmap m = { 0 };
	enum { N = 5000 };

	for (uintptr_t k = 0; k < N; k++)
		ck_assert_int_eq(pr__hashmap_put(&m, k, val(k)), 0);
	ck_assert_uint_eq(m.n, N);
	ck_assert_uint_le(m.n * 2, m.cap);
	for (uintptr_t k = 0; k < N; k++)
		ck_assert_ptr_eq(pr__hashmap_get(&m, k), val(k));
	ck_assert_ptr_null(pr__hashmap_get(&m, N));
	ck_assert_int_eq(pr__hashmap_put(&m, 7, val(70)), 0);
	ck_assert_ptr_eq(pr__hashmap_get(&m, 7), val(70));
	ck_assert_uint_eq(m.n, N);
	pr__hashmap_free(&m);
}
END_TEST

/* A reserve makes room ahead, so the puts after it need no allocation. */
START_TEST(a_reserve_makes_room_for_that_many)
{
	struct pr_hashmap m = { 0 };
	size_t cap;

	ck_assert_int_eq(pr__hashmap_reserve(&m, 1000), 0);
	cap = m.cap;
	ck_assert_uint_ge(cap, 2000);
	for (uintptr_t k = 0; k < 1000; k++)
		ck_assert_int_eq(pr__hashmap_add(&m, k * 4096, val(k)), 0);
	ck_assert_uint_eq(m.cap, cap);
	ck_assert_int_eq(pr__hashmap_reserve(&m, 0), 0);
	ck_assert_uint_eq(m.cap, cap);
	pr__hashmap_free(&m);
}
END_TEST

/* Values added under one key (colliding hashes) are all found, each once,
 * beside other keys; deleting takes them one at a time. */
START_TEST(several_values_under_one_key_are_walked_and_deleted_one_by_one)
{
	struct pr_hashmap m = { 0 };
	unsigned seen = 0;
	size_t it = 0;
	void *v;

	for (uintptr_t k = 0; k < 100; k++)
		ck_assert_int_eq(pr__hashmap_put(&m, k, val(1000 + k)), 0);
	for (uintptr_t i = 0; i < 5; i++)
		ck_assert_int_eq(pr__hashmap_add(&m, 42, val(i)), 0);
	while ((v = pr__hashmap_next(&m, 42, &it))) {
		uintptr_t i = (uintptr_t)v - 1;

		ck_assert(i < 5 || i == 1042);
		ck_assert(!(seen & 1u << (i % 32)));
		seen |= 1u << (i % 32);
	}
	ck_assert_uint_eq(__builtin_popcount(seen), 6);
	ck_assert_ptr_null(pr__hashmap_next(&m, 42, &it));
	for (int left = 6; left > 0; left--) {
		ck_assert_ptr_nonnull(pr__hashmap_del(&m, 42));
		it = 0;
		for (int n = 0; n < left - 1; n++)
			ck_assert_ptr_nonnull(pr__hashmap_next(&m, 42, &it));
		ck_assert_ptr_null(pr__hashmap_next(&m, 42, &it));
	}
	ck_assert_ptr_null(pr__hashmap_del(&m, 42));
	for (uintptr_t k = 0; k < 100; k++)
		ck_assert_ptr_eq(pr__hashmap_get(&m, k), k == 42 ? NULL : val(1000 + k));
	pr__hashmap_free(&m);
}
END_TEST

/* Puts and deletes in a small, crowded table (runs that wrap the end and
 * merge), checked after every step against a plain array: the backward
 * shift of a delete must leave every other key findable. */
START_TEST(deleting_from_crowded_probe_runs_keeps_the_rest_findable)
{
	struct pr_hashmap m = { 0 };
	enum { KEYS = 48 };
	void *model[KEYS] = { 0 };
	uint64_t x = 12345;

	for (int step = 0; step < 5000; step++) {
		uintptr_t k;

		x = x * UINT64_C(6364136223846793005) + UINT64_C(1442695040888963407);
		k = (uintptr_t)(x >> 33) % KEYS;
		if (x >> 63) {
			ck_assert_ptr_eq(pr__hashmap_del(&m, k), model[k]);
			model[k] = NULL;
		} else {
			ck_assert_int_eq(pr__hashmap_put(&m, k, val(step)), 0);
			model[k] = val(step);
		}
		for (uintptr_t j = 0; j < KEYS; j++)
			ck_assert_ptr_eq(pr__hashmap_get(&m, j), model[j]);
	}
	/* 48 keys never take the table past 128 slots: runs stay crowded. */
	ck_assert_uint_le(m.cap, 128);
	pr__hashmap_free(&m);
}
END_TEST

/* Where `key` lands in an empty map: its home slot (of 64). */
static size_t home_of(uint64_t key)
{
	struct pr_hashmap m = { 0 };
	size_t i;

	ck_assert_int_eq(pr__hashmap_put(&m, key, val(0)), 0);
	ck_assert_uint_eq(m.cap, 64);
	for (i = 0; m.slots[i].key != key || !m.slots[i].value; i++)
		;
	pr__hashmap_free(&m);
	return i;
}

/*
 * Runs that wrap the end of a 64-slot table, as homes: keys whose home is
 * slot 62, 63 or 0, several of a home told apart by letter.  Deleting any
 * one key of a run must shift the later ones back across the end exactly
 * when their home allows, and leave every other key findable.
 */
START_TEST(deleting_in_a_run_that_wraps_the_end_keeps_the_rest_findable)
{
	static const struct { const char *name; int homes[6]; size_t nr; } runs[] = {
		{ "63 63 63 63", { 63, 63, 63, 63 }, 4 },
		{ "63 63 63 63 0 0", { 63, 63, 63, 63, 0, 0 }, 6 },
		{ "63 0 0", { 63, 0, 0 }, 3 },
		{ "62 63 63", { 62, 63, 63 }, 3 },
	};
	uint64_t by_home[3][4];   /* homes 62, 63, 0 */
	size_t found[3] = { 0 };

	for (uint64_t k = 1; found[0] < 4 || found[1] < 4 || found[2] < 4; k++) {
		size_t home = home_of(k), h = home == 62 ? 0 : home == 63 ? 1 : home == 0 ? 2 : 3;

		if (h < 3 && found[h] < 4)
			by_home[h][found[h]++] = k;
	}
	for (size_t r = 0; r < PR_ARRAY_SIZE(runs); r++) {
		uint64_t keys[6];
		size_t used[3] = { 0 };

		for (size_t i = 0; i < runs[r].nr; i++) {
			int home = runs[r].homes[i];
			size_t h = home == 62 ? 0 : home == 63 ? 1 : 2;

			keys[i] = by_home[h][used[h]++];
		}
		for (size_t gone = 0; gone < runs[r].nr; gone++) {
			struct pr_hashmap m = { 0 };

			for (size_t i = 0; i < runs[r].nr; i++)
				ck_assert_int_eq(pr__hashmap_put(&m, keys[i], val(i)), 0);
			ck_assert_uint_eq(m.cap, 64);
			ck_assert_ptr_eq(pr__hashmap_del(&m, keys[gone]), val(gone));
			for (size_t i = 0; i < runs[r].nr; i++)
				ck_assert_msg(pr__hashmap_get(&m, keys[i]) == (i == gone ? NULL : val(i)),
					      "run %s, key %zu deleted: key %zu", runs[r].name, gone, i);
			pr__hashmap_free(&m);
		}
	}
}
END_TEST

static bool not_in_mask(uint64_t key, void *value, void *arg)
{
	(void)key;
	return !(*(const unsigned *)arg >> ((uintptr_t)value - 1) & 1);
}

/*
 * A filter over crowded runs, and over runs that wrap the end of the table
 * (keys homed at slots 62, 63 and 0, as above): every subset of the keys
 * filtered out leaves exactly the others, all findable.
 */
START_TEST(a_filter_removes_exactly_what_it_is_told_even_across_the_end)
{
	uint64_t keys[8];
	size_t nr = 0;

	for (uint64_t k = 1; nr < 8; k++) {
		size_t home = home_of(k);

		if (home >= 61 || home <= 1)
			keys[nr++] = k;
	}
	for (unsigned mask = 0; mask < 1u << nr; mask++) {
		struct pr_hashmap m = { 0 };

		for (size_t i = 0; i < nr; i++)
			ck_assert_int_eq(pr__hashmap_put(&m, keys[i], val(i)), 0);
		ck_assert_uint_eq(m.cap, 64);
		pr__hashmap_filter(&m, not_in_mask, &mask);
		ck_assert_uint_eq(m.n, nr - (size_t)__builtin_popcount(mask));
		for (size_t i = 0; i < nr; i++)
			ck_assert_msg(pr__hashmap_get(&m, keys[i]) == (mask >> i & 1 ? NULL : val(i)),
				      "mask %#x: key %zu", mask, i);
		pr__hashmap_free(&m);
	}
}
END_TEST

START_TEST(an_array_grows_by_doubling_and_keeps_what_it_held)
{
	uint64_t *v = NULL;
	size_t cap = 0;

	ck_assert_int_eq(PR_ARRAY_RESERVE(v, cap, 0), 0);
	ck_assert_ptr_null(v);
	for (size_t i = 0; i < 1000; i++) {
		ck_assert_int_eq(PR_ARRAY_RESERVE(v, cap, i + 1), 0);
		ck_assert_uint_ge(cap, i + 1);
		v[i] = i * 7;
	}
	/* Doubling from 64: 64, 128, ..., 1024. */
	ck_assert_uint_eq(cap, 1024);
	for (size_t i = 0; i < 1000; i++)
		ck_assert_uint_eq(v[i], i * 7);
	free(v);
}
END_TEST

START_TEST(an_array_that_would_overflow_is_refused_and_left_as_it_was)
{
	uint64_t *v = NULL, *before;
	size_t cap = 0;

	ck_assert_int_eq(PR_ARRAY_RESERVE(v, cap, 10), 0);
	v[9] = 42;
	before = v;
	ck_assert_int_eq(PR_ARRAY_RESERVE(v, cap, SIZE_MAX / 4), -ENOMEM);
	ck_assert_int_eq(PR_ARRAY_RESERVE(v, cap, SIZE_MAX), -ENOMEM);
	ck_assert_ptr_eq(v, before);
	ck_assert_uint_eq(cap, 64);
	ck_assert_uint_eq(v[9], 42);
	free(v);
}
END_TEST

/* A file of `pages` pages, page i filled with i + 1, mapped shared and
 * read-only; its path in `path` (unlinked by the caller). */
static unsigned char *map_pages(size_t pages, char *path, size_t *len)
{
	size_t page = (size_t)sysconf(_SC_PAGESIZE);
	unsigned char *buf = malloc(page), *m;
	int fd;

	strcpy(path, "/tmp/test-base-map-XXXXXX");
	ck_assert_int_ge(fd = mkstemp(path), 0);
	for (size_t i = 0; i < pages; i++) {
		memset(buf, (int)(i + 1), page);
		ck_assert_int_eq(write(fd, buf, page), (ssize_t)page);
	}
	*len = pages * page;
	m = mmap(NULL, *len, PROT_READ, MAP_SHARED, fd, 0);
	ck_assert_ptr_ne(m, MAP_FAILED);
	close(fd);
	free(buf);
	return m;
}

/* A file cut short under a guarded mapping: the page it now ends in
 * keeps its bytes up to there (the kernel zeroes the rest of that page,
 * no fault); a read past it finds zeros where it was a SIGBUS, says so,
 * and mends the rest of the mapping with it. */
START_TEST(a_read_past_a_guarded_files_new_end_finds_zeros_and_says_so)
{
	size_t page = (size_t)sysconf(_SC_PAGESIZE), len;
	char path[64];
	unsigned char *m = map_pages(4, path, &len);
	uint64_t before = pr__busguard_hits();
	int g = pr__busguard_add(m, len);

	ck_assert_int_ge(g, 0);
	ck_assert(!pr__busguard_hit(g));
	ck_assert_int_eq(m[3 * page], 4);
	ck_assert_int_eq(truncate(path, (off_t)page + 100), 0);
	ck_assert_int_eq(m[0], 1);
	ck_assert_int_eq(m[page + 99], 2);
	ck_assert_int_eq(m[page + 100], 0);
	ck_assert(!pr__busguard_hit(g));
	ck_assert_int_eq(m[2 * page + 5], 0);
	ck_assert(pr__busguard_hit(g));
	ck_assert_uint_eq(pr__busguard_hits(), before + 1);
	ck_assert_int_eq(m[3 * page + 7], 0);
	ck_assert_uint_eq(pr__busguard_hits(), before + 1);
	/* The file's own bytes are still read through the mapping. */
	ck_assert_int_eq(m[page], 2);
	pr__busguard_remove(g);
	ck_assert(!pr__busguard_hit(g));
	ck_assert_int_eq(munmap(m, len), 0);
	unlink(path);
}
END_TEST

static void exit_42(int sig, siginfo_t *si, void *uc)
{
	(void)sig, (void)si, (void)uc;
	_exit(42);
}

/* In a child, what `how` does: 0, read past the end of a file cut short
 * under an unguarded mapping; 1, the same with a SIGBUS handler of the
 * program's installed first; 2, send itself SIGBUS; 3, read past the end
 * under a mapping whose guard was removed; 4, send itself SIGBUS, which
 * the program ignored before.  The guard is installed in each first. */
static int sigbus_in_child(int how)
{
	int status;
	pid_t kid = fork();

	ck_assert_int_ge(kid, 0);
	if (!kid) {
		size_t page = (size_t)sysconf(_SC_PAGESIZE), len, other_len;
		struct rlimit none = { 0, 0 };
		struct sigaction sa = { .sa_sigaction = exit_42, .sa_flags = SA_SIGINFO };
		char path[64], other[64];
		unsigned char *m, *o;
		int g;

		setrlimit(RLIMIT_CORE, &none);
		if (how == 1)
			sigaction(SIGBUS, &sa, NULL);
		if (how == 4)
			signal(SIGBUS, SIG_IGN);
		m = map_pages(2, path, &len);
		o = map_pages(2, other, &other_len);
		if ((g = pr__busguard_add(o, other_len)) < 0)
			_exit(3);
		if (how == 3)
			pr__busguard_remove(g);
		if (truncate(path, 0) || truncate(other, 0))
			_exit(4);
		unlink(path);
		unlink(other);
		if (how == 2 || how == 4)
			kill(getpid(), SIGBUS);
		else
			(void)*(volatile unsigned char *)(how == 3 ? o + page : m + page);
		_exit(0);
	}
	ck_assert_int_eq(waitpid(kid, &status, 0), kid);
	return status;
}

#if defined(__SANITIZE_ADDRESS__)
#define ASAN_BEFORE 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define ASAN_BEFORE 1
#endif
#endif

/* Killed by the SIGBUS's default action; or, under AddressSanitizer,
 * whose own handler is the one installed before, by its report (an
 * abort, or exit status 1). */
static bool died_of_sigbus(int st)
{
#ifdef ASAN_BEFORE
	return (WIFSIGNALED(st) && (WTERMSIG(st) == SIGBUS || WTERMSIG(st) == SIGABRT)) ||
	       (WIFEXITED(st) && WEXITSTATUS(st) == 1);
#else
	return WIFSIGNALED(st) && WTERMSIG(st) == SIGBUS;
#endif
}

/* Every other SIGBUS goes where it went without the guard: to the
 * default action (a core dump) or to the handler installed before. */
START_TEST(any_other_sigbus_goes_where_it_went_before)
{
	int st;

	st = sigbus_in_child(0);
	ck_assert_msg(died_of_sigbus(st), "unguarded: status %#x", st);
	st = sigbus_in_child(1);
	ck_assert_msg(WIFEXITED(st) && WEXITSTATUS(st) == 42, "handler before: status %#x", st);
	st = sigbus_in_child(2);
	ck_assert_msg(died_of_sigbus(st), "sent: status %#x", st);
	st = sigbus_in_child(3);
	ck_assert_msg(died_of_sigbus(st), "guard removed: status %#x", st);
	st = sigbus_in_child(4);
	ck_assert_msg(WIFEXITED(st) && !WEXITSTATUS(st), "ignored, sent: status %#x", st);
}
END_TEST

static Suite *base_suite(void)
{
	Suite *s = suite_create("base");
	TCase *tc = tcase_create("hash");

	tcase_add_test(tc, the_string_hash_is_fnv1a_64);
	tcase_add_test(tc, mixing_depends_on_both_values_and_their_order);
	suite_add_tcase(s, tc);
	tc = tcase_create("hashmap");
	tcase_add_test(tc, an_empty_map_finds_nothing_and_deletes_nothing);
	tcase_add_test(tc, the_map_grows_and_keeps_every_key);
	tcase_add_test(tc, a_reserve_makes_room_for_that_many);
	tcase_add_test(tc, several_values_under_one_key_are_walked_and_deleted_one_by_one);
	tcase_add_test(tc, deleting_in_a_run_that_wraps_the_end_keeps_the_rest_findable);
	tcase_add_test(tc, a_filter_removes_exactly_what_it_is_told_even_across_the_end);
	tcase_add_test(tc, deleting_from_crowded_probe_runs_keeps_the_rest_findable);
	suite_add_tcase(s, tc);
	tc = tcase_create("busguard");
	tcase_add_test(tc, a_read_past_a_guarded_files_new_end_finds_zeros_and_says_so);
	tcase_add_test(tc, any_other_sigbus_goes_where_it_went_before);
	suite_add_tcase(s, tc);
	tc = tcase_create("array");
	tcase_add_test(tc, an_array_grows_by_doubling_and_keeps_what_it_held);
	tcase_add_test(tc, an_array_that_would_overflow_is_refused_and_left_as_it_was);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	return run_suite(base_suite());
}
