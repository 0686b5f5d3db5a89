/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The address index (src/symbols/symindex.c) against libdw's path, per
 * file: what building the whole file's index costs (time, bytes), and
 * naming N distinct addresses of its code, drawn at random (fixed seed),
 * through libdw's path (lazy: each unit and function read as an address
 * falls in it) from a fresh module, and through the index.  Whether a
 * whole-file build pays in a one-shot run is the first against the sum of
 * the others.
 *
 * usage: bench-symindex [-n ADDRESSES] FILE...
 */
#include <elf.h>
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "mkrecord.h"
#include "model/model.h"
#include "symbols/symdwarf.h"
#include "symbols/symindex.h"

#define PID 4242
#define MAP_AT 0x10000000ull

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

struct opened {
	struct pr_model *model;
	struct pr_symbolizer *s;
	struct sym_module *m;
};

static int open_file(const char *path, struct opened *o)
{
	/* By its own name: the ELF cache does not follow a symlink's. */
	char *real = realpath(path, NULL);
	struct pr_record r = mmap2(PID, MAP_AT, 1ull << 34, 0, real ? real : path);
	struct pr_symbolizer_opts opts = { .sz = sizeof(opts) };
	const struct pr_map *map;
	struct pr_frame f;

	if (!(o->model = pr_model_new(NULL)) || pr_model_apply(o->model, &r) ||
	    !(o->s = pr_symbolizer_new(o->model, &opts)) ||
	    !(map = pr__model_find(o->model, PID, MAP_AT))) {
		free(real);
		return -1;
	}
	f = (struct pr_frame){ .ip = MAP_AT, .dso = map->dso, .map_start = map->start,
			       .map_end = map->end };
	o->m = pr__sym_module_of(o->s, PID, &f);
	free(real);
	return o->m && o->m->mod && pr__sym_dwarf_open(o->s, o->m) ? 0 : -1;
}

static void close_file(struct opened *o)
{
	pr_symbolizer_free(o->s);
	pr_model_free(o->model);
}

/* `n` addresses of the file's executable segments, drawn with a fixed seed. */
static uint64_t *draw(const struct sym_module *m, size_t n)
{
	uint64_t total = 0, x = 88172645463325252ull;
	uint64_t *a = malloc(n * sizeof(*a));

	for (size_t i = 0; i < m->elf->nr_seg; i++)
		if (m->elf->seg[i].flags & PF_X)
			total += m->elf->seg[i].filesz;
	for (size_t k = 0; a && total && k < n; k++) {
		uint64_t at;

		x ^= x << 13, x ^= x >> 7, x ^= x << 17;
		at = x % total;
		for (size_t i = 0; i < m->elf->nr_seg; i++) {
			const struct pr_elf_segment *seg = &m->elf->seg[i];

			if (!(seg->flags & PF_X))
				continue;
			if (at < seg->filesz) {
				a[k] = seg->vaddr + at;
				break;
			}
			at -= seg->filesz;
		}
	}
	return total ? a : (free(a), NULL);
}

int main(int argc, char **argv)
{
	size_t n = 2000;
	int opt;

	while ((opt = getopt(argc, argv, "n:")) != -1)
		if (opt == 'n')
			n = strtoul(optarg, NULL, 0);
	if (optind >= argc || !n) {
		fprintf(stderr, "usage: %s [-n ADDRESSES] FILE...\n", argv[0]);
		return 2;
	}
	printf("| file | whole build s | index MB | libdw, %zu addresses, s | index, same, s | "
	       "covered |\n| --- | ---: | ---: | ---: | ---: | ---: |\n", n);
	for (int i = optind; i < argc; i++) {
		struct opened a = { 0 }, b = { 0 };
		struct pr_sym_func funcs[MAX_INLINE];
		struct pr__symindex *ix;
		uint64_t *addrs;
		double t0, t_build, t_dw, t_ix;
		size_t covered = 0;

		if (open_file(argv[i], &a) || open_file(argv[i], &b) || !(addrs = draw(a.m, n))) {
			fprintf(stderr, "%s: cannot be read, or has no DWARF or no code\n", argv[i]);
			return 1;
		}
		t0 = now();
		ix = pr__symindex_build(a.s, a.m);
		t_build = now() - t0;
		if (!ix) {
			fprintf(stderr, "%s: no index: %s\n", argv[i], strerror(errno));
			return 1;
		}
		t0 = now();
		for (size_t k = 0; k < n; k++)
			covered += pr__sym_dwarf_chain(b.s, b.m, addrs[k], NULL, 0, funcs) > 0;
		t_dw = now() - t0;
		t0 = now();
		for (size_t k = 0; k < n; k++)
			pr__symindex_chain(ix, addrs[k] - a.m->dwarf_bias, false, NULL, 0, funcs);
		t_ix = now() - t0;
		printf("| %s | %.3f | %.2f | %.4f | %.6f | %zu |\n", argv[i], t_build,
		       pr__symindex_bytes(ix) / 1e6, t_dw, t_ix, covered);
		pr__symindex_free(ix);
		free(addrs);
		close_file(&a);
		close_file(&b);
	}
	return 0;
}
