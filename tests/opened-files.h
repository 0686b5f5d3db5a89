/* SPDX-License-Identifier: Apache-2.0 */
/*
 * What the tests that name the files given on their command line share
 * (test-symindex, test-symindex-file, test-symcache, test-plt): the
 * files, one argument each (FILE, FILE:STEP to try every STEP-th address
 * only, @FILE for a file without DWARF), and a file opened as a
 * symbolizer opens it.  symindex-files.h adds what only the index's
 * tests need.
 */
#ifndef DS_TEST_OPENED_FILES_H
#define DS_TEST_OPENED_FILES_H

#include <check.h>
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mkrecord.h"
#include "model/model.h"
#include "symbols/symbolizer.h"

#define PID 4242
#define MAP_AT 0x10000000ull

static char **files;
static int nr_files;

/* main()'s arguments taken as the files; false, after a usage line
 * naming the form `args` of them, when there are none. */
static inline bool take_files(int argc, char **argv, const char *args)
{
	files = argv + 1;
	nr_files = argc - 1;
	if (!nr_files)
		fprintf(stderr, "usage: %s %s\n", argv[0], args);
	return nr_files > 0;
}

/* File argument `i`: its real path (malloc'd: the ELF cache takes
 * absolute paths and does not follow a symlink's) and *step (1 unless
 * ":STEP" follows); *small (small may be NULL) when no STEP was given. */
static inline char *file_arg(int i, uint64_t *step, bool *small)
{
	char path[4096], *colon, *real;

	snprintf(path, sizeof(path), "%s", files[i] + (files[i][0] == '@'));
	*step = 1;
	colon = strrchr(path, ':');
	if (small)
		*small = !colon;
	if (colon) {
		*colon = 0;
		*step = strtoull(colon + 1, NULL, 0);
		*step += !*step;
	}
	real = realpath(path, NULL);
	ck_assert_msg(real, "%s: %s", path, strerror(errno));
	return real;
}

static inline bool same_str(const char *a, const char *b)
{
	return a == b || (a && b && !strcmp(a, b));
}

/* Whether two frames are named alike, field by field: the symbol, its
 * module, where in it, and each function of its inline chain, lines and
 * all. */
static inline bool same_symbol(const struct pr_symbol *a, const struct pr_symbol *b)
{
	if (!same_str(a->name, b->name) || !same_str(a->module, b->module) ||
	    a->offset != b->offset || a->source != b->source || a->nr != b->nr)
		return false;
	for (size_t i = 0; i < a->nr; i++)
		if (!same_str(a->funcs[i].name, b->funcs[i].name) ||
		    !same_str(a->funcs[i].file, b->funcs[i].file) ||
		    a->funcs[i].line != b->funcs[i].line || a->funcs[i].inlined != b->funcs[i].inlined)
			return false;
	return true;
}

/* A file opened as a symbolizer opens it, mapped whole at MAP_AT; f is
 * a frame at its first byte. */
struct opened {
	struct pr_model *model;
	struct pr_symbolizer *s;
	struct sym_module *m;
	struct pr_frame f;
};

/* Open `path` with `opts` (NULL: defaults but no index cache, which would
 * write to the user's cache).  `index`: named from the file's address
 * index whatever the build's default (meson -Dsymindex); false: by the
 * build's default, as a report names.  `share` (may be NULL) is called
 * with the symbolizer before the file is opened (to share indexes). */
static inline void open_file_with(struct opened *o, const char *path,
				  const struct pr_symbolizer_opts *opts, bool index,
				  void (*share)(struct pr_symbolizer *, void *), void *arg)
{
	struct pr_record r = mmap2(PID, MAP_AT, 1ull << 30, 0, path);
	struct pr_symbolizer_opts none = { .sz = sizeof(none), .no_index_cache = true };
	const struct pr_map *map;

	ck_assert_ptr_nonnull(o->model = pr_model_new(NULL));
	ck_assert_int_eq(pr_model_apply(o->model, &r), 0);
	ck_assert_ptr_nonnull(o->s = pr_symbolizer_new(o->model, opts ? opts : &none));
	if (share)
		share(o->s, arg);
	if (index)
		pr__symbolizer_use_index(o->s, true);
	ck_assert_ptr_nonnull(map = pr__model_find(o->model, PID, MAP_AT));
	o->f = (struct pr_frame){ .ip = MAP_AT, .dso = map->dso, .map_start = map->start,
				  .map_end = map->end };
	ck_assert_ptr_nonnull(o->m = pr__sym_module_of(o->s, PID, &o->f));
	/* From a cached index the file's symbols need no libdwfl session. */
	ck_assert_msg(o->m->opened && o->m->elf, "%s: not opened", path);
}

static inline void open_file(struct opened *o, const char *path,
			     const struct pr_symbolizer_opts *opts, bool index)
{
	open_file_with(o, path, opts, index, NULL, NULL);
}

static inline void close_file(struct opened *o)
{
	pr_symbolizer_free(o->s);
	pr_model_free(o->model);
}

#endif
