/* SPDX-License-Identifier: Apache-2.0 */
/* The symbolizer under a cache limit: many files through a small budget,
 * and the state of processes that exited let go. */
#include <check.h>
#include <elf.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "model/model.h"
#include "mkrecord.h"
#include "opened-files.h"
#include "prsym.h"
#include "sym-test.h"
#include "symbols/symbolizer.h"
#include "symbolize.h"

#define NR_FILES 12
#define ROUNDS 3
#define SECOND UINT64_C(1000000000)

static struct pr_record exit_of(uint32_t pid)
{
	struct pr_record r;

	memset(&r, 0, sizeof(r));
	r.type = PR_RECORD_EXIT;
	r.pid = r.tid = pid;
	r.u.task.ppid = r.u.task.ptid = pid;
	return r;
}

static struct pr_symbolizer *offline_symbolizer(struct pr_model *m)
{
	PR_OPTS(pr_symbolizer_opts, o, .log = keep_log);
	struct pr_symbolizer *s = pr_symbolizer_new(m, &o);

	ck_assert_ptr_nonnull(s);
	return s;
}

static void check_cache(struct pr_model *m, uint64_t max_bytes, uint64_t max_files)
{
	PR_OPTS(pr_cache_stats, cs);

	ck_assert_int_eq(pr_model_cache_stats(m, &cs), 0);
	ck_assert_msg(cs.bytes <= max_bytes, "%llu bytes kept, over the limit of %llu",
		      (unsigned long long)cs.bytes, (unsigned long long)max_bytes);
	ck_assert_uint_le(cs.files, max_files);
}

/*
 * Copies of this program, each with a build-id of its own (so each is a
 * file of its own to the cache), mapped by one process each, named one
 * after another, round after round, with a trim after each and room for
 * two: every file is evicted and read again, every name (and, where this
 * build has DWARF, inline chain and line) is right after re-loading, and
 * the cache never holds more than the limit.  Then the processes exit:
 * after the grace period their files are forgotten.
 */
START_TEST(many_files_cycle_through_a_small_budget_and_stay_named)
{
	struct pr_model *self = self_model(), *m = pr_model_new(NULL);
	struct pr_frame f = outer_frame(self);
	const struct pr_map *map = pr__model_find(self, (uint32_t)getpid(), f.ip);
	uint8_t id[PR_BUILD_ID_MAX];
	size_t id_len = 0, len;
	unsigned char *image = slurp("/proc/self/exe", &len), *at;
	char paths[NR_FILES][512], name[16];
	struct pr_symbolizer *s;
	PR_OPTS(pr_symbolizer_stats, ss);
	PR_OPTS(pr_cache_stats, cs);
	uint64_t limit, t = SECOND;
	bool dwarf = !debug_dir() && !getenv("DS_STRIPPED");

	ck_assert_ptr_nonnull(m);
	ck_assert_int_eq(pr__build_id_path("/proc/self/exe", id, &id_len), 0);
	ck_assert_uint_ge(id_len, 4);
	at = memmem(image, len, id, id_len);
	ck_assert_ptr_nonnull(at);
	for (uint32_t i = 0; i < NR_FILES; i++) {
		snprintf(name, sizeof(name), "trim%u", i);
		snprintf(paths[i], sizeof(paths[i]), "%s", tmp_path(name));
		memcpy(at, &i, sizeof(i));
		write_file(paths[i], image, len);
	}
	/* Two files and what is built from them fit; three do not. */
	limit = 5 * (uint64_t)len / 2;
	{
		PR_OPTS(pr_cache_opts, co, .max_bytes = limit, .grace_ns = 10 * SECOND);

		ck_assert_int_eq(pr_model_set_cache(m, &co), 0);
	}
	s = offline_symbolizer(m);
	for (int round = 0; round < ROUNDS; round++) {
		for (uint32_t i = 0; i < NR_FILES; i++) {
			uint32_t pid = 4100000 + i;
			struct pr_frame g = f;
			struct pr_symbol sym;

			if (round == 0) {
				struct pr_record r = mmap2(pid, map->start, map->end - map->start,
							   map->pgoff, paths[i]);

				ck_assert_int_eq(pr_model_apply(m, &r), 0);
			}
			g.dso = pr__model_find(m, pid, g.ip)->dso;
			/* Sampled: what the unwinder marks on every frame. */
			((struct pr_dso *)g.dso)->sampled = true;
			ck_assert_int_eq(pr_symbolizer_symbolize(s, pid, &g, &sym), 0);
			ck_assert_str_eq(sym.module, paths[i]);
			ck_assert_msg(sym.name && !strcmp(sym.name, "ds_sym_outer"),
				      "round %d, file %u: %s; log:\n%s", round, i,
				      sym.name ? sym.name : "(none)", logtext);
			if (dwarf)
				check_outer_funcs(&sym);
			ck_assert_int_eq(pr_model_trim(m, t += SECOND), 0);
			check_cache(m, limit, 2);
		}
	}
	ck_assert_int_eq(pr_model_cache_stats(m, &cs), 0);
	ck_assert_uint_eq(cs.trims, ROUNDS * NR_FILES);
	/* The least recently sampled went first: always one of the two
	 * named before the last, never the last. */
	ck_assert_uint_ge(cs.files_evicted, ROUNDS * NR_FILES - 2);
	ck_assert_uint_eq(cs.files_evicted_hot, 0);
	ck_assert_uint_eq(cs.dsos_forgotten, 0);
	ck_assert_int_eq(pr_symbolizer_stats(s, &ss), 0);
	ck_assert_uint_eq(ss.files, ROUNDS * NR_FILES);

	/* The processes exit: their files stay for the grace period, then
	 * go, and everything built from them with them. */
	for (uint32_t i = 0; i < NR_FILES; i++) {
		struct pr_record r = exit_of(4100000 + i);

		ck_assert_int_eq(pr_model_apply(m, &r), 0);
	}
	ck_assert_int_eq(pr_model_trim(m, t += SECOND), 0);
	ck_assert_int_eq(pr_model_cache_stats(m, &cs), 0);
	ck_assert_uint_eq(cs.dsos_forgotten, 0);
	ck_assert_uint_eq(cs.dsos, NR_FILES);
	ck_assert_int_eq(pr_model_trim(m, t += 10 * SECOND), 0);
	ck_assert_int_eq(pr_model_cache_stats(m, &cs), 0);
	ck_assert_uint_eq(cs.dsos_forgotten, NR_FILES);
	ck_assert_uint_eq(cs.dsos, 0);
	ck_assert_uint_eq(cs.files, 0);
	ck_assert_uint_eq(cs.bytes, 0);
	ck_assert_uint_eq(s->modules.n, 0);
	ck_assert_uint_eq(s->used_slots, 0);

	pr_symbolizer_free(s);
	pr_model_free(m);
	pr_model_free(self);
	for (uint32_t i = 0; i < NR_FILES; i++)
		unlink(paths[i]);
	free(image);
}
END_TEST

/*
 * A file sampled all the time is still let go once it has been held for
 * max_age_ns, with what was built from it (libdw's state with it), and is
 * read anew at its next sample, named as before; the processes the model
 * holds are counted.
 */
START_TEST(a_file_held_past_its_age_is_read_anew_and_named_the_same)
{
	struct pr_model *self = self_model(), *m = pr_model_new(NULL);
	struct pr_frame f = outer_frame(self);
	const struct pr_map *map = pr__model_find(self, (uint32_t)getpid(), f.ip);
	struct pr_record r = mmap2(4200000, map->start, map->end - map->start, map->pgoff,
				   "/proc/self/exe");
	PR_OPTS(pr_cache_opts, co, .max_age_ns = 5 * SECOND, .grace_ns = 60 * SECOND);
	PR_OPTS(pr_symbolizer_stats, ss);
	PR_OPTS(pr_cache_stats, cs);
	struct pr_symbolizer *s;
	/* A trim after each: the file is first counted at 1 s, and again
	 * at 9 s, the trim after it was read anew. */
	static const uint64_t at[] = { 1, 3, 5, 7, 9, 14 };
	static const uint64_t renewed[] = { 0, 0, 0, 1, 1, 2 };

	ck_assert_ptr_nonnull(m);
	ck_assert_int_eq(pr_model_set_cache(m, &co), 0);
	ck_assert_int_eq(pr_model_apply(m, &r), 0);
	s = offline_symbolizer(m);
	for (size_t i = 0; i < sizeof(at) / sizeof(at[0]); i++) {
		struct pr_frame g = f;
		struct pr_symbol sym;

		g.dso = pr__model_find(m, 4200000, g.ip)->dso;
		((struct pr_dso *)g.dso)->sampled = true;
		ck_assert_int_eq(pr_symbolizer_symbolize(s, 4200000, &g, &sym), 0);
		ck_assert_msg(sym.name && !strcmp(sym.name, "ds_sym_outer"), "trim %zu: %s", i,
			      sym.name ? sym.name : "(none)");
		ck_assert_int_eq(pr_model_trim(m, at[i] * SECOND), 0);
		ck_assert_int_eq(pr_model_cache_stats(m, &cs), 0);
		ck_assert_msg(cs.files_renewed == renewed[i], "trim %zu at %llu s: %llu renewed", i,
			      (unsigned long long)at[i], (unsigned long long)cs.files_renewed);
		ck_assert_uint_eq(cs.files, renewed[i] == (i ? renewed[i - 1] : 0));
		ck_assert_uint_eq(cs.files_evicted, 0);
		ck_assert_uint_eq(cs.procs, 1);
	}
	/* Read twice: at first and after the trim of 7 s (the one of 14 s
	 * let it go again). */
	ck_assert_int_eq(pr_symbolizer_stats(s, &ss), 0);
	ck_assert_uint_eq(ss.files, 2);
	pr_symbolizer_free(s);
	pr_model_free(m);
	pr_model_free(self);
}
END_TEST

/* Resident kB of this process's mappings of whole files (from their
 * start, all of their bytes: the model's and libelf's; the loader's map
 * segments). */
static long resident_whole(void)
{
	FILE *f = fopen("/proc/self/smaps", "r");
	char line[4500], file[4097];
	unsigned long long lo, hi, off;
	long kb = 0, rss;
	bool in = false;

	ck_assert_ptr_nonnull(f);
	while (fgets(line, sizeof(line), f)) {
		struct stat st;

		file[0] = 0;
		if (sscanf(line, "%llx-%llx %*s %llx %*s %*s %4096s", &lo, &hi, &off, file) >= 3 &&
		    strchr(line, '-') < strchr(line, ' ')) {
			in = !off && file[0] == '/' && !stat(file, &st) &&
			     hi - lo == ((unsigned long long)st.st_size + 4095) / 4096 * 4096;
		} else if (in && sscanf(line, "Rss: %ld kB", &rss) == 1) {
			kb += rss;
		}
	}
	fclose(f);
	return kb;
}

/* Between trims, the pages of a file the model and the symbolizer hold
 * leave the resident set (pr__model_release_pages(), which an agent's
 * session runs every two seconds of a window), but for its headers and
 * the pages sections share; nothing is freed, and its frames are named
 * as before, its pages read again. */
START_TEST(a_file_held_gives_its_pages_back_between_trims_and_stays_named)
{
	struct pr_model *m = self_model();
	uint32_t pid = (uint32_t)getpid();
	struct pr_frame f = outer_frame(m), h;
	PR_OPTS(pr_symbolizer_stats, ss);
	struct pr_symbolizer *s = symbolizer(m, false), *fresh;
	struct pr_symbol sym, want;
	long base = resident_whole(), read, released, again;

	ck_assert_int_eq(pr_symbolizer_symbolize(s, pid, &f, &sym), 0);
	check_outer_funcs(&sym);
	/* The file's symbol table and DWARF (or its debug file's) were read
	 * through the mappings. */
	read = resident_whole() - base;
	pr__model_release_pages(m);
	released = resident_whole() - base;
	/* What stays is the pages no section has whole: the headers, and
	 * where one section ends and the next begins (84 kB of 1 344 of
	 * this test's own file when written; libelf's mapping alone had
	 * 1 232). */
	ck_assert_msg(read >= 256, "%ld kB read naming", read);
	ck_assert_msg(released < read / 4, "%ld kB of %ld still resident", released, read);
	/* Another function of the file, its pages read again (those not
	 * inflated onto the heap, as a compressed debug file's are): named
	 * as a symbolizer that never released any names it. */
	ds_sym_cxx(1);
	h = caller_frame(m, pid, (uint64_t)(uintptr_t)ds_sym_ret);
	ck_assert_int_eq(pr_symbolizer_symbolize(s, pid, &h, &sym), 0);
	again = resident_whole() - base;
	fresh = symbolizer(m, false);
	ck_assert_int_eq(pr_symbolizer_symbolize(fresh, pid, &h, &want), 0);
	ck_assert_msg(want.name && want.nr, "a fresh symbolizer named no function");
	ck_assert_msg(same_symbol(&sym, &want), "named %s, a fresh symbolizer %s",
		      sym.name ? sym.name : "(none)", want.name);
	fprintf(stderr, "%ld kB resident after naming, %ld after the release, %ld after "
		"naming another function\n", read, released, again);
	pr_symbolizer_free(fresh);
	/* Read once: the file stayed held. */
	ck_assert_int_eq(pr_symbolizer_stats(s, &ss), 0);
	ck_assert_uint_eq(ss.files, 1);
	pr_symbolizer_free(s);
	pr_model_free(m);
}
END_TEST

/* Resident kB of this process's mappings of `path`. */
static long resident_of(const char *path)
{
	FILE *f = fopen("/proc/self/smaps", "r");
	char line[4500], file[4097];
	unsigned long long lo, hi;
	long kb = 0, rss;
	bool in = false;

	ck_assert_ptr_nonnull(f);
	while (fgets(line, sizeof(line), f)) {
		file[0] = 0;
		if (sscanf(line, "%llx-%llx %*s %*x %*s %*s %4096s", &lo, &hi, file) >= 2 &&
		    strchr(line, '-') < strchr(line, ' '))
			in = !strcmp(file, path);
		else if (in && sscanf(line, "Rss: %ld kB", &rss) == 1)
			kb += rss;
	}
	fclose(f);
	return kb;
}

/* A copy of ELF file `from` at `to` laid out as Go's linker lays its
 * programs out: the section headers first, after the ELF header, and
 * everything else one page further on (offsets moved with it, so that
 * each segment keeps its place in its pages).  Returns how far the rest
 * moved. */
static uint64_t copy_with_headers_first(const char *from, const char *to)
{
	const uint64_t shift = 4096;
	FILE *in = fopen(from, "rb"), *out = fopen(to, "wb");
	Elf64_Ehdr eh;
	Elf64_Shdr *sh;
	Elf64_Phdr *ph;
	char *image;
	long size;

	ck_assert_ptr_nonnull(in);
	ck_assert_ptr_nonnull(out);
	ck_assert_int_eq(fseek(in, 0, SEEK_END), 0);
	size = ftell(in);
	image = malloc((size_t)size);
	ck_assert_ptr_nonnull(image);
	rewind(in);
	ck_assert_uint_eq(fread(image, 1, (size_t)size, in), (size_t)size);
	memcpy(&eh, image, sizeof(eh));
	ck_assert_uint_eq(eh.e_shentsize, sizeof(*sh));
	ck_assert_uint_le(sizeof(eh) + eh.e_shnum * sizeof(*sh), shift);
	sh = (Elf64_Shdr *)(image + eh.e_shoff);
	ph = (Elf64_Phdr *)(image + eh.e_phoff);
	for (unsigned i = 0; i < eh.e_shnum; i++)
		if (sh[i].sh_type != SHT_NULL)
			sh[i].sh_offset += shift;
	for (unsigned i = 0; i < eh.e_phnum; i++)
		ph[i].p_offset += shift;
	eh.e_phoff += shift;
	eh.e_shoff = sizeof(eh);
	ck_assert_uint_eq(fwrite(&eh, 1, sizeof(eh), out), sizeof(eh));
	ck_assert_uint_eq(fwrite(sh, sizeof(*sh), eh.e_shnum, out), eh.e_shnum);
	ck_assert_int_eq(fseek(out, (long)shift, SEEK_SET), 0);
	ck_assert_uint_eq(fwrite(image, 1, (size_t)size, out), (size_t)size);
	ck_assert_int_eq(fclose(out), 0);
	fclose(in);
	free(image);
	return shift;
}

/* Where `path` (an ELF file of this machine's class) has its symbol
 * `name`: its value, or 0. */
static uint64_t symbol_value(const char *path, const char *name)
{
	size_t len;
	unsigned char *buf = slurp(path, &len);
	const Elf64_Ehdr *eh = (const Elf64_Ehdr *)buf;
	const Elf64_Shdr *sh = (const Elf64_Shdr *)(buf + eh->e_shoff);
	uint64_t value = 0;

	for (unsigned i = 0; i < eh->e_shnum && !value; i++) {
		const Elf64_Sym *sym = (const Elf64_Sym *)(buf + sh[i].sh_offset);
		const char *str = (const char *)buf + sh[sh[i].sh_link].sh_offset;

		if (sh[i].sh_type != SHT_SYMTAB)
			continue;
		for (size_t k = 0; k < sh[i].sh_size / sizeof(*sym) && !value; k++)
			if (!strcmp(str + sym[k].st_name, name))
				value = sym[k].st_value;
	}
	free(buf);
	return value;
}

/* Process `pid` of model `m` given ELF file `copy` loaded at `base`, its
 * segments `shift` bytes further into the file than their headers in
 * `path` say. */
static void map_loaded(struct pr_model *m, uint32_t pid, const char *path, const char *copy,
		       uint64_t base, uint64_t shift)
{
	size_t len;
	unsigned char *buf = slurp(path, &len);
	const Elf64_Ehdr *eh = (const Elf64_Ehdr *)buf;
	const Elf64_Phdr *ph = (const Elf64_Phdr *)(buf + eh->e_phoff);

	for (unsigned i = 0; i < eh->e_phnum; i++) {
		uint64_t lo = ph[i].p_vaddr & ~UINT64_C(0xfff);
		struct pr_record r;

		if (ph[i].p_type != PT_LOAD)
			continue;
		r = mmap2(pid, base + lo, ph[i].p_vaddr + ph[i].p_memsz - lo,
			  (ph[i].p_offset & ~UINT64_C(0xfff)) + shift, copy);
		ck_assert_int_eq(pr_model_apply(m, &r), 0);
	}
	free(buf);
}

/* A file whose section headers come first (Go's programs, whose table is
 * in their first page) gives back the pages of its sections, all but
 * those of its headers and the pages two sections share.  The file is
 * the library (DS_OTHER_ELF: built with its symbols and DWARF whichever
 * way this program is), loaded by a process of a model of its own and a
 * function of it named. */
START_TEST(a_file_with_its_section_headers_first_gives_its_pages_back)
{
	const char *lib = getenv("DS_OTHER_ELF"), *fn = "pr__model_find";
	const uint64_t base = UINT64_C(0x7e0000000000);
	struct pr_model *m = pr_model_new(NULL);
	char copy[] = "/tmp/ds-shdrs-XXXXXX";
	struct pr_symbolizer *s;
	struct pr_symbol sym;
	struct pr_frame g;
	uint64_t shift, at;
	long read, released;
	int fd = mkstemp(copy);

	ck_assert_ptr_nonnull(lib);
	ck_assert_int_ge(fd, 0);
	close(fd);
	at = symbol_value(lib, fn);
	ck_assert_msg(at, "%s has no %s", lib, fn);
	shift = copy_with_headers_first(lib, copy);
	ck_assert_ptr_nonnull(m);
	map_loaded(m, 4200003, lib, copy, base, shift);
	s = offline_symbolizer(m);
	g = caller_frame(m, 4200003, base + at + 1);
	ck_assert_int_eq(pr_symbolizer_symbolize(s, 4200003, &g, &sym), 0);
	ck_assert_msg(sym.name && !strcmp(sym.name, fn), "%s: %s",
		      sym.name ? sym.name : "(none)", logtext);
	read = resident_of(copy);
	pr__model_release_pages(m);
	released = resident_of(copy);
	fprintf(stderr, "headers first: %ld kB resident after naming, %ld after the release\n",
		read, released);
	/* 104 of 2 560 kB when written; 2 464 before this was kept. */
	ck_assert_msg(read >= 512, "%ld kB read naming", read);
	ck_assert_msg(released < read / 8, "%ld kB of %ld still resident", released, read);
	pr_symbolizer_free(s);
	pr_model_free(m);
	unlink(copy);
}
END_TEST

/* A file held, cut short on disk (rewritten in place: cp, rsync
 * --inplace): giving its pages back, between trims and at one, reads
 * nothing past its new end (which would be a SIGBUS), and leaves it be;
 * a frame named from it then reads zeros there, not a SIGBUS, and the
 * module is set aside and the file opened again. */
START_TEST(a_file_cut_short_while_held_is_left_alone_by_the_release)
{
	struct pr_model *self = self_model(), *m = pr_model_new(NULL);
	struct pr_frame f = outer_frame(self), g;
	const struct pr_map *map = pr__model_find(self, (uint32_t)getpid(), f.ip);
	char copy[] = "/tmp/ds-cut-XXXXXX", cmd[4200];
	struct pr_record r;
	struct pr_symbolizer *s;
	struct pr_symbol sym;
	int fd = mkstemp(copy);

	ck_assert_int_ge(fd, 0);
	close(fd);
	/* The program's file as the model has it (/proc/PID/exe is
	 * valgrind's own under valgrind). */
	snprintf(cmd, sizeof(cmd), "cp '%s' %s", map->dso->path, copy);
	ck_assert_int_eq(system(cmd), 0);
	r = mmap2(4200002, map->start, map->end - map->start, map->pgoff, copy);
	ck_assert_ptr_nonnull(m);
	ck_assert_int_eq(pr_model_apply(m, &r), 0);
	s = offline_symbolizer(m);
	g = f;
	g.dso = pr__model_find(m, 4200002, g.ip)->dso;
	ck_assert_int_eq(pr_symbolizer_symbolize(s, 4200002, &g, &sym), 0);
	ck_assert_msg(sym.name && !strcmp(sym.name, "ds_sym_outer"), "%s",
		      sym.name ? sym.name : "(none)");
	ck_assert_int_eq(truncate(copy, 4096), 0);
	pr__model_release_pages(m);
	ck_assert_int_eq(pr_model_trim(m, 1), 0);
	/* Named past its new end: zeros read (base/busguard.c), where it
	 * was a SIGBUS; then named from what the file holds now: nothing. */
	ds_sym_cxx(1);
	g = caller_frame(m, 4200002, (uint64_t)(uintptr_t)ds_sym_ret);
	ck_assert_int_eq(pr_symbolizer_symbolize(s, 4200002, &g, &sym), 0);
	/* Unnamed, its module set aside after reading zeros; or, of a
	 * stripped build, named from the debug file found apart, whole. */
	if (!sym.name) {
		ck_assert_uint_eq(s->nr_cut, 1);
	} else {
		struct pr_symbolizer *whole = offline_symbolizer(self);
		struct pr_frame h = caller_frame(self, (uint32_t)getpid(),
						  (uint64_t)(uintptr_t)ds_sym_ret);
		struct pr_symbol want;

		ck_assert_int_eq(pr_symbolizer_symbolize(whole, (uint32_t)getpid(), &h, &want), 0);
		ck_assert_msg(want.name && !strcmp(sym.name, want.name),
			      "named %s from a file cut to 4 KiB, %s from the file", sym.name,
			      want.name ? want.name : "(none)");
		pr_symbolizer_free(whole);
	}
	pr_symbolizer_free(s);
	pr_model_free(m);
	pr_model_free(self);
	unlink(copy);
}
END_TEST

/* A process's perf map is read while it runs, and dropped with its
 * results at the first trim after it exits. */
START_TEST(the_perf_map_of_a_process_that_exited_is_dropped)
{
	const uint32_t pid = 4200001;
	struct pr_model *m = pr_model_new(NULL);
	struct pr_record r = mmap2(pid, 0x7f0000000000ull, 0x100000, 0, "//anon");
	struct pr_frame f = { .ip = 0x7f0000001010ull, .dso_ip = 0x7f0000001010ull };
	struct pr_symbolizer *s;
	struct pr_symbol sym;
	char path[64];

	snprintf(path, sizeof(path), "/tmp/perf-%u.map", pid);
	write_text(path, "7f0000001000 100 LazyCompile:*hot /app.js:3\n");
	ck_assert_ptr_nonnull(m);
	ck_assert_int_eq(pr_model_apply(m, &r), 0);
	f.dso = pr__model_find(m, pid, f.ip)->dso;
	s = offline_symbolizer(m);
	ck_assert_int_eq(pr_symbolizer_symbolize(s, pid, &f, &sym), 0);
	ck_assert_str_eq(sym.name, "LazyCompile:*hot /app.js:3");
	ck_assert_int_eq(pr_model_trim(m, SECOND), 0);
	ck_assert_ptr_nonnull(pr__hashmap_get(&s->perf_maps, pid));
	/* Its results go at a trim, and are made again. */
	ck_assert_uint_eq(((struct sym_perf_map *)pr__hashmap_get(&s->perf_maps, pid))->results.n,
			  0);
	ck_assert_int_eq(pr_symbolizer_symbolize(s, pid, &f, &sym), 0);
	ck_assert_str_eq(sym.name, "LazyCompile:*hot /app.js:3");

	r = exit_of(pid);
	ck_assert_int_eq(pr_model_apply(m, &r), 0);
	ck_assert_int_eq(pr_model_trim(m, 2 * SECOND), 0);
	ck_assert_ptr_null(pr__hashmap_get(&s->perf_maps, pid));
	pr_symbolizer_free(s);
	pr_model_free(m);
	unlink(path);
}
END_TEST

/* With check_processes, a trim forgets a process that no longer exists
 * though its EXIT never came (a pid above any pid_max), and keeps one
 * that runs (this one).  Not while the records are behind the moment it
 * was found gone: a reader lagging on a loaded host has that process's
 * samples still to apply, and they keep its name and mappings. */
START_TEST(a_process_whose_exit_was_lost_is_forgotten)
{
	const uint32_t gone = 4200002, self = (uint32_t)getpid();
	struct pr_model *m = pr_model_new(NULL);
	struct pr_record a = mmap2(gone, 0x7f0000000000ull, 0x1000, 0, "/bin/true");
	struct pr_record b = mmap2(self, 0x7f0000000000ull, 0x1000, 0, "/bin/true");
	struct pr_record c = comm(gone, gone, "churn-038", true);
	PR_OPTS(pr_cache_opts, co, .check_processes = true);
	PR_OPTS(pr_cache_stats, cs);
	uint64_t now = pr__monotonic_ns();

	ck_assert_ptr_nonnull(m);
	ck_assert_int_eq(pr_model_apply(m, &a), 0);
	ck_assert_int_eq(pr_model_apply(m, &b), 0);
	ck_assert_int_eq(pr_model_apply(m, &c), 0);
	ck_assert_int_eq(pr_model_trim(m, SECOND), 0);
	ck_assert_ptr_nonnull(pr__model_proc(m, gone, false));     /* not asked to check */
	ck_assert_int_eq(pr_model_set_cache(m, &co), 0);
	/* The records stand a second before now, and half a second after
	 * the first trim that found it gone: it stays, named. */
	ck_assert_int_eq(pr_model_trim(m, now - SECOND), 0);
	ck_assert_int_eq(pr_model_trim(m, now + SECOND / 2), 0);
	ck_assert_ptr_nonnull(pr__model_find(m, gone, 0x7f0000000010ull));
	ck_assert_str_eq(pr_model_comm(m, gone), "churn-038");
	ck_assert_int_eq(pr_model_cache_stats(m, &cs), 0);
	ck_assert_uint_eq(cs.procs_gone, 0);
	/* Past a second after that, its EXIT would have come: lost. */
	ck_assert_int_eq(pr_model_trim(m, pr__monotonic_ns() + 2 * SECOND), 0);
	ck_assert_ptr_null(pr__model_proc(m, gone, false));
	ck_assert_ptr_null(pr_model_comm(m, gone));
	ck_assert_ptr_nonnull(pr__model_proc(m, self, false));
	ck_assert_int_eq(pr_model_cache_stats(m, &cs), 0);
	ck_assert_uint_eq(cs.procs_gone, 1);
	pr_model_free(m);
}
END_TEST

TCase *symbolize_trim_tests(void)
{
	TCase *tc = tcase_create("trim");

	tcase_set_timeout(tc, 120);
	tcase_add_test(tc, many_files_cycle_through_a_small_budget_and_stay_named);
	tcase_add_test(tc, a_file_held_past_its_age_is_read_anew_and_named_the_same);
	tcase_add_test(tc, a_file_held_gives_its_pages_back_between_trims_and_stays_named);
	tcase_add_test(tc, a_file_with_its_section_headers_first_gives_its_pages_back);
	tcase_add_test(tc, a_file_cut_short_while_held_is_left_alone_by_the_release);
	tcase_add_test(tc, the_perf_map_of_a_process_that_exited_is_dropped);
	tcase_add_test(tc, a_process_whose_exit_was_lost_is_forgotten);
	return tc;
}
