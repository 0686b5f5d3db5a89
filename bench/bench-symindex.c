/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The address index (src/symbols/symindex.c) against libdw's path, per
 * file: what building the whole file's index costs (time, bytes), and
 * naming N distinct addresses of its code, drawn at random (fixed seed),
 * through libdw's path (lazy: each unit and function read as an address
 * falls in it) from a fresh module, and through the index.  Whether a
 * whole-file build pays in a one-shot run is the first against the sum of
 * the others.  And the lazy grain's work, estimated, not built: the walks
 * a per-unit build would make for the units the N addresses fall in (each
 * function's scopes, names and call sites, the unit's line table), and
 * how many units that is of the file's.
 *
 * With -r STEP, instead: what naming every STEP-th address of each file's
 * code through a symbolizer leaves resident (VmRSS before and after, and
 * the peak), on the path DS_SYMINDEX picks (run once with 0 and once
 * with 1: a process's freed memory is not all given back).
 *
 * usage: bench-symindex [-n ADDRESSES] FILE...
 *        DS_SYMINDEX=0|1 bench-symindex -r STEP FILE...
 */
#include <dwarf.h>
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

/* The walks a per-unit index would make for the units `addrs` fall in,
 * through a fresh module `o`: its time, and the units in *touched of *total. */
static double unit_walks(struct opened *o, const uint64_t *addrs, size_t n, size_t *touched,
			 size_t *total)
{
	struct sym_module *m = o->m;
	struct pr_hashmap seen = { 0 };
	Dwarf_CU *cu = NULL, *next;
	Dwarf_Die cudie;
	Dwarf_Half version;
	uint8_t type;
	double t0 = now();

	*touched = *total = 0;
	for (size_t k = 0; k < n; k++) {
		Dwarf_Addr bias;
		Dwarf_Die *c = dwfl_module_addrdie(m->mod, addrs[k], &bias), split, *u;
		struct cu_index *x;
		Dwarf_Lines *lines;
		size_t nr_lines;

		if (!c || pr__hashmap_get(&seen, (uintptr_t)c->cu))
			continue;
		pr__hashmap_put(&seen, (uintptr_t)c->cu, c->cu);
		(*touched)++;
		dwarf_getsrclines(c, &lines, &nr_lines);
		u = pr__sym_unit_with_functions(c, &split);
		if (!(x = pr__sym_cu_index(m, u)))
			continue;
		for (size_t i = 0; i < x->nr; i++) {
			Dwarf_Die fn, sc;
			const struct fn_scopes *f;

			if (!dwarf_offdie(dwarf_cu_getdwarf(u->cu), x->r[i].die, &fn))
				continue;
			pr__sym_func_name(o->s, m, &fn);
			if (!(f = pr__sym_fn_scopes(m, x, &fn)))
				continue;
			for (size_t j = 0; j < f->nr; j++) {
				const char *file;
				uint32_t line;

				if (f->s[j].lexical || !dwarf_offdie(dwarf_cu_getdwarf(u->cu),
								     f->s[j].die, &sc))
					continue;
				pr__sym_func_name(o->s, m, &sc);
				pr__sym_call_site(m, NULL, u, &sc, &file, &line);
			}
		}
	}
	t0 = now() - t0;
	while (dwarf_get_units(m->dwarf, cu, &next, &version, &type, &cudie, NULL) == 0) {
		cu = next;
		*total += type == DW_UT_compile || type == DW_UT_skeleton;
	}
	pr__hashmap_free(&seen);
	return t0;
}

/* A line of /proc/self/status ("VmRSS:", "VmHWM:", "RssAnon:"), in MB. */
static double resident(const char *what)
{
	FILE *f = fopen("/proc/self/status", "r");
	char line[256];
	double kb = 0;

	while (f && fgets(line, sizeof(line), f))
		if (!strncmp(line, what, strlen(what)))
			kb = strtod(line + strlen(what), NULL);
	if (f)
		fclose(f);
	return kb / 1024;
}

/* Every `step`-th address of each file's code named through the API. */
static int resident_after_naming(char **paths, int nr, uint64_t step)
{
	printf("| file | path | addresses | VmRSS before MB | after MB | of which anonymous MB | "
	       "peak MB | libdwfl open |\n| --- | --- | ---: | ---: | ---: | ---: | ---: | --- |\n");
	for (int i = 0; i < nr; i++) {
		struct opened o = { 0 };
		double before;
		size_t addrs = 0;
		struct pr_frame f;

		if (open_file(paths[i], &o))
			return 1;
		before = resident("VmRSS:");
		f = (struct pr_frame){ .dso = o.m->dso, .map_start = MAP_AT,
				       .map_end = MAP_AT + (1ull << 34) };
		for (size_t k = 0; k < o.m->elf->nr_seg; k++) {
			const struct pr_elf_segment *seg = &o.m->elf->seg[k];

			if (!(seg->flags & PF_X))
				continue;
			for (uint64_t off = seg->offset; off < seg->offset + seg->filesz; off += step) {
				struct pr_symbol sym;

				f.dso_ip = off;
				f.ip = MAP_AT + off;
				pr_symbolizer_symbolize(o.s, PID, &f, &sym);
				addrs++;
			}
		}
		printf("| %s | %s | %zu | %.1f | %.1f | %.1f | %.1f | %s |\n", paths[i],
		       o.s->use_index ? "index" : "libdw", addrs, before, resident("VmRSS:"),
		       resident("RssAnon:"), resident("VmHWM:"), o.m->dwfl ? "yes" : "no");
		close_file(&o);
	}
	return 0;
}

int main(int argc, char **argv)
{
	size_t n = 2000;
	uint64_t step = 0;
	int opt;

	while ((opt = getopt(argc, argv, "n:r:")) != -1)
		if (opt == 'n')
			n = strtoul(optarg, NULL, 0);
		else if (opt == 'r')
			step = strtoull(optarg, NULL, 0);
	if (optind >= argc || !n) {
		fprintf(stderr, "usage: %s [-n ADDRESSES] FILE...\n"
			"       DS_SYMINDEX=0|1 %s -r STEP FILE...\n", argv[0], argv[0]);
		return 2;
	}
	if (step)
		return resident_after_naming(argv + optind, argc - optind, step);
	printf("| file | whole build s | index MB | libdw, %zu addresses, s | index, same, s | "
	       "covered | per-unit walks s (estimate) | units walked |\n"
	       "| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: |\n", n);
	for (int i = optind; i < argc; i++) {
		struct opened a = { 0 }, b = { 0 }, c = { 0 };
		struct pr_sym_func funcs[MAX_INLINE];
		struct pr__symindex *ix;
		uint64_t *addrs;
		double t0, t_build, t_dw, t_ix, t_units;
		size_t covered = 0, touched, units;

		if (open_file(argv[i], &a) || open_file(argv[i], &b) || open_file(argv[i], &c) ||
		    !(addrs = draw(a.m, n))) {
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
		t_units = unit_walks(&c, addrs, n, &touched, &units);
		printf("| %s | %.3f | %.2f | %.4f | %.6f | %zu | %.3f | %zu of %zu |\n", argv[i],
		       t_build, pr__symindex_bytes(ix) / 1e6, t_dw, t_ix, covered, t_units, touched,
		       units);
		pr__symindex_free(ix);
		free(addrs);
		close_file(&a);
		close_file(&b);
		close_file(&c);
	}
	return 0;
}
