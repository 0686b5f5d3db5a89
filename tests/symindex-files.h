/* SPDX-License-Identifier: Apache-2.0 */
/*
 * What test-symindex-file.c and test-symcache.c share: files opened as a
 * symbolizer opens them, an index's file in memory, scratch directories,
 * and a small file's index as a checked fixture.  The tests' arguments
 * are test-symindex's files (FILE[:STEP]; those without STEP are small).
 */
#ifndef DS_TEST_SYMINDEX_FILES_H
#define DS_TEST_SYMINDEX_FILES_H

#include <check.h>
#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>
#include <zlib.h>

#include "checkmain.h"
#include "mkrecord.h"
#include "model/model.h"
#include "symbols/symbolizer.h"
#include "symbols/symcache.h"
#include "symbols/symindex.h"
#include "symbols/symindex_file.h"
#include "symbols/ixshare.h"

#define PID 4242
#define MAP_AT 0x10000000ull
#define NOBODY 65534

static char **files;
static int nr_files;

/* A file opened as a symbolizer opens it. */
struct opened {
	struct pr_model *model;
	struct pr_symbolizer *s;
	struct sym_module *m;
	struct pr_frame f;
};

/* ... sharing indexes in `set` (ixshare.h) when not NULL. */
static inline void open_file_shared(struct opened *o, const char *path,
				    const struct pr_symbolizer_opts *opts, struct pr__ixshare *set)
{
	struct pr_record r = mmap2(PID, MAP_AT, 1ull << 30, 0, path);
	struct pr_symbolizer_opts none = { .sz = sizeof(none), .no_index_cache = true };
	const struct pr_map *map;

	ck_assert_ptr_nonnull(o->model = pr_model_new(NULL));
	ck_assert_int_eq(pr_model_apply(o->model, &r), 0);
	ck_assert_ptr_nonnull(o->s = pr_symbolizer_new(o->model, opts ? opts : &none));
	if (set)
		pr__symbolizer_share_indexes(o->s, set);
	pr__symbolizer_use_index(o->s, true);
	ck_assert_ptr_nonnull(map = pr__model_find(o->model, PID, MAP_AT));
	o->f = (struct pr_frame){ .ip = MAP_AT, .dso = map->dso, .map_start = map->start,
				  .map_end = map->end };
	ck_assert_ptr_nonnull(o->m = pr__sym_module_of(o->s, PID, &o->f));
	ck_assert_msg(o->m->mod && o->m->elf, "%s: not opened", path);
}

static inline void open_file(struct opened *o, const char *path,
			     const struct pr_symbolizer_opts *opts)
{
	open_file_shared(o, path, opts, NULL);
}

static inline void close_file(struct opened *o)
{
	pr_symbolizer_free(o->s);
	pr_model_free(o->model);
}

static inline struct pr__ix_key key_of(const struct sym_module *m)
{
	struct pr__ix_key k = { .build_id_size = (uint32_t)m->elf->build_id_size,
				.settings = PR_IX_DEMANGLED };

	ck_assert_uint_gt(k.build_id_size, 0);
	memcpy(k.build_id, m->elf->build_id, k.build_id_size);
	return k;
}

/* `ix`'s file, in memory (8-byte aligned, as malloc gives). */
static inline unsigned char *file_bytes(const struct pr__symindex *ix,
					const struct pr__ix_key *k, size_t *len)
{
	int fd = memfd_create("ix", MFD_CLOEXEC);
	unsigned char *b;
	off_t end;

	ck_assert_int_ge(fd, 0);
	ck_assert_int_eq(pr__symindex_write(ix, k, fd), 0);
	end = lseek(fd, 0, SEEK_END);
	ck_assert_int_gt(end, 0);
	*len = (size_t)end;
	ck_assert_ptr_nonnull(b = malloc(*len));
	ck_assert_int_eq(pread(fd, b, *len, 0), (ssize_t)*len);
	close(fd);
	return b;
}

static inline bool same_str(const char *a, const char *b)
{
	return a == b || (a && b && !strcmp(a, b));
}

/* File argument `i`: its real path (malloc'd) and *step; *small when no
 * STEP was given.  A leading '@' (a file without DWARF, to test-symindex
 * and test-ixshare) is not part of the path. */
static inline char *file_arg(int i, uint64_t *step, bool *small)
{
	char path[4096], *colon, *real;

	snprintf(path, sizeof(path), "%s", files[i] + (files[i][0] == '@'));
	*step = 1;
	*small = !(colon = strrchr(path, ':'));
	if (colon) {
		*colon = 0;
		*step = strtoull(colon + 1, NULL, 0);
		*step += !*step;
	}
	ck_assert_ptr_nonnull(real = realpath(path, NULL));
	return real;
}

static inline char *make_dir(void)
{
	char tmpl[] = "/tmp/test-symindex-file-XXXXXX";

	ck_assert_ptr_nonnull(mkdtemp(tmpl));
	return strdup(tmpl);
}

static inline void remove_dir(const char *dir)
{
	char cmd[8800];

	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
	ck_assert_int_eq(system(cmd), 0);
}

/* Of the files in `dir`, how many, and their bytes. */
static inline size_t dir_files(const char *dir, uint64_t *bytes)
{
	char cmd[8800];
	FILE *p;
	size_t nr = 0;
	unsigned long long size;

	*bytes = 0;
	snprintf(cmd, sizeof(cmd), "find '%s' -mindepth 1 -printf '%%s\\n'", dir);
	ck_assert_ptr_nonnull(p = popen(cmd, "r"));
	while (fscanf(p, "%llu", &size) == 1) {
		nr++;
		*bytes += size;
	}
	pclose(p);
	return nr;
}

static inline struct pr__ixcache_stats stats_of(const struct pr_symbolizer *s)
{
	struct pr__ixcache_stats st;

	pr__ixcache_stats(s->ixcache, &st);
	return st;
}

/*
 * Written, then mapped from the cache, each file's index answers as the
 * index built at every address (every STEP-th), and written again from
 * the mapping gives the same bytes.
 */
/* The first small file's index, its key and its file's bytes, and a
 * directory: each test's own (a checked fixture, in the test's process). */
static struct {
	struct opened o;
	struct pr__symindex *ix;
	struct pr__ix_key k;
	unsigned char *b;
	size_t len;
	char *path, *dir;
} sm;

static inline void small_setup(void)
{
	for (int i = 0; i < nr_files && !sm.path; i++) {
		uint64_t step;
		bool small;

		sm.path = file_arg(i, &step, &small);
		if (!small) {
			free(sm.path);
			sm.path = NULL;
		}
	}
	ck_assert_ptr_nonnull(sm.path);
	open_file(&sm.o, sm.path, NULL);
	sm.k = key_of(sm.o.m);
	ck_assert_ptr_nonnull(sm.ix = pr__symindex_build(sm.o.s, sm.o.m));
	sm.b = file_bytes(sm.ix, &sm.k, &sm.len);
	sm.dir = make_dir();
}

static inline void small_teardown(void)
{
	remove_dir(sm.dir);
	free(sm.dir);
	free(sm.b);
	pr__symindex_free(sm.ix);
	close_file(&sm.o);
	free(sm.path);
}

/* Index file `b` at its name in `dir`. */
static inline void plant(const char *dir, const struct pr__ix_key *k,
			 const unsigned char *b, size_t len, char *name, size_t size)
{
	char hex[2 * PR_BUILD_ID_MAX + 1];
	FILE *f;

	pr__hex(hex, k->build_id, k->build_id_size);
	snprintf(name, size, "%s/%s-s%x.dsix", dir, hex, k->settings);
	ck_assert_ptr_nonnull(f = fopen(name, "wb"));
	ck_assert_uint_eq(fwrite(b, 1, len, f), len);
	ck_assert_int_eq(fclose(f), 0);
}

/* A symbolizer with its index cache in `dir` names every address of `o`'s
 * module as `o`'s (no cache) does; its cache's counters. */
static inline struct pr__ixcache_stats name_with_cache(struct opened *o, const char *path,
						       const struct pr_symbolizer_opts *opts)
{
	struct opened c;
	struct pr__ixcache_stats st;
	size_t differ = 0, nr = 0;

	open_file(&c, path, opts);
	for (size_t i = 0; i < o->m->elf->nr_seg; i++) {
		const struct pr_elf_segment *seg = &o->m->elf->seg[i];

		if (!(seg->flags & PF_X))
			continue;
		for (uint64_t off = seg->offset; off < seg->offset + seg->filesz; off += 7) {
			struct pr_symbol want, got;

			o->f.dso_ip = c.f.dso_ip = off;
			o->f.ip = c.f.ip = MAP_AT + off;
			ck_assert_int_eq(pr_symbolizer_symbolize(o->s, PID, &o->f, &want), 0);
			ck_assert_int_eq(pr_symbolizer_symbolize(c.s, PID, &c.f, &got), 0);
			nr += want.nr > 0;
			differ += want.nr != got.nr ||
				  (want.nr && (!same_str(want.funcs[want.nr - 1].name,
							 got.funcs[got.nr - 1].name) ||
					       !same_str(want.funcs[0].name, got.funcs[0].name)));
		}
	}
	ck_assert_msg(nr > 10 && !differ, "%s: %zu of %zu frames named differently", path, differ,
		      nr);
	ck_assert_ptr_nonnull(c.m = pr__sym_module_of(c.s, PID, &c.f));
	ck_assert_msg(c.m->index, "%s: named without an index", path);
	st = stats_of(c.s);
	close_file(&c);
	return st;
}

#endif
