/* SPDX-License-Identifier: Apache-2.0 */
/*
 * What test-symindex-file.c and test-symcache.c share besides the files
 * and their opening (opened-files.h): an index's file in memory, scratch
 * directories, and a small file's index as a checked fixture.  The
 * tests' arguments are test-symindex's files with DWARF (FILE[:STEP];
 * those without STEP are small).
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
#include "opened-files.h"
#include "symbols/symcache.h"
#include "symbols/symindex.h"
#include "symbols/symindex_file.h"
#include "symbols/ixshare.h"

#define NOBODY 65534

static inline void share_with(struct pr_symbolizer *s, void *set)
{
	pr__symbolizer_share_indexes(s, set);
}

/* open_file() on the index's path, sharing indexes in `set` (ixshare.h)
 * when not NULL. */
static inline void open_file_shared(struct opened *o, const char *path,
				    const struct pr_symbolizer_opts *opts, struct pr__ixshare *set)
{
	open_file_with(o, path, opts, true, set ? share_with : NULL, set);
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
	open_file(&sm.o, sm.path, NULL, true);
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

/* Every `step`-th address of `c`'s file named as `o`'s: how many had a
 * symbol, and in *chains how many a DWARF chain. */
static inline size_t name_alike_every(struct opened *o, struct opened *c, uint64_t step,
				      size_t *chains)
{
	size_t named = 0;

	*chains = 0;
	for (size_t i = 0; i < o->m->elf->nr_seg; i++) {
		const struct pr_elf_segment *seg = &o->m->elf->seg[i];

		if (!(seg->flags & PF_X))
			continue;
		for (uint64_t off = seg->offset; off < seg->offset + seg->filesz; off += step) {
			struct pr_symbol want, got;

			o->f.dso_ip = c->f.dso_ip = off;
			o->f.ip = c->f.ip = MAP_AT + off;
			ck_assert_int_eq(pr_symbolizer_symbolize(o->s, PID, &o->f, &want), 0);
			ck_assert_int_eq(pr_symbolizer_symbolize(c->s, PID, &c->f, &got), 0);
			ck_assert_msg(same_symbol(&want, &got), "at %#llx: %s against %s",
				      (unsigned long long)off, got.name ? got.name : "(none)",
				      want.name ? want.name : "(none)");
			named += want.name != NULL;
			*chains += want.nr > 0;
		}
	}
	return named;
}

static inline size_t name_alike(struct opened *o, struct opened *c, size_t *chains)
{
	return name_alike_every(o, c, 7, chains);
}

/* A symbolizer with its index cache in `dir` names every address of `o`'s
 * module as `o`'s (no cache) does; its cache's counters. */
static inline struct pr__ixcache_stats name_with_cache(struct opened *o, const char *path,
						       const struct pr_symbolizer_opts *opts)
{
	struct opened c;
	struct pr__ixcache_stats st;
	size_t chains;

	open_file(&c, path, opts, true);
	name_alike(o, &c, &chains);
	ck_assert_msg(chains > 10, "%s: %zu frames with DWARF chains", path, chains);
	ck_assert_ptr_nonnull(c.m = pr__sym_module_of(c.s, PID, &c.f));
	ck_assert_msg(c.m->index, "%s: named without an index", path);
	st = stats_of(c.s);
	/* Mapped: its symbols came with it, and nothing of the file was
	 * opened with libdwfl, nor held for its names. */
	ck_assert_msg(!st.mapped || (!c.m->dwfl && !c.m->mod && !c.m->nr_elves),
		      "%s: a mapped index, and the file opened all the same", path);
	/* And its symbols are looked up where the index is mapped, not
	 * copied out of it. */
	ck_assert_msg(!st.mapped || (c.m->ixsyms && !c.m->syms.nr && !c.m->syms.v),
		      "%s: a mapped index, and its %zu symbols copied", path, c.m->syms.nr);
	close_file(&c);
	return st;
}

#endif
