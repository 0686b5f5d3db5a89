/* SPDX-License-Identifier: Apache-2.0 */
/*
 * PLT stubs named as objdump names them (src/symbols/plt.c), at every
 * address of the PLT sections of the files given: plt-calls.c built by
 * gcc and clang, GNU ld and lld, with IBT's .plt.sec or without, lazy or
 * -z now, -fno-plt; this system's libc; and, when the Debian 13 root is
 * there, its libc (whose .rela.plt is out of the stubs' order, with
 * IRELATIVE entries among them) and python3.13.
 *
 * The oracle is objdump -d's labels: "callee@plt" (less the "+0x..."
 * objdump appends for an addend), and for an IRELATIVE stub
 * "*ABS*+0xADDR@plt": the name of a symbol at ADDR, where an IFUNC symbol
 * is, read here from the file's .dynsym and .symtab and its debug file's.
 * Where objdump has no label, no stub name is made up: the lazy binding's
 * code is ".plt" (perf 7.3's name for it), anything else has none.
 */
#include <check.h>
#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "checkmain.h"
#include "opened-files.h"

/* A file opened as a symbolizer opens it, its names as the file has them,
 * as objdump -d prints them. */
static void open_plain(struct opened *o, const char *path)
{
	PR_OPTS(pr_symbolizer_opts, opts, .no_inline = true, .no_demangle = true,
		.no_index_cache = true);

	open_file(o, path, &opts, false);
}

/* Our name at link-time address `vaddr` (NULL: none), and the offset. */
static const char *name_at(struct opened *o, uint64_t vaddr, uint64_t *offset)
{
	struct pr_symbol sym = { 0 };

	for (size_t i = 0; i < o->m->elf->nr_seg; i++) {
		const struct pr_elf_segment *seg = &o->m->elf->seg[i];

		if (vaddr >= seg->vaddr && vaddr - seg->vaddr < seg->filesz) {
			ck_assert_int_eq(pr__sym_resolve_file(o->s, o->m,
							      vaddr - seg->vaddr + seg->offset, &sym),
					 0);
			*offset = sym.offset;
			return sym.name;
		}
	}
	ck_abort_msg("0x%llx is in no segment", (unsigned long long)vaddr);
	return NULL;
}

struct section {
	uint64_t addr, size, ent;
	const char *name;
};

/* A file's PLT sections (.plt first), through libelf; entries are 8 or
 * 16 bytes (sh_entsize; lld leaves it 0: 16 unless aligned to 8). */
static size_t plt_sections(const char *path, struct section out[3])
{
	static const char *const names[] = { ".plt", ".plt.sec", ".plt.got" };
	int fd = open(path, O_RDONLY);
	Elf *elf;
	size_t shstrndx, n = 0;

	ck_assert_int_ge(fd, 0);
	elf_version(EV_CURRENT);
	ck_assert_ptr_nonnull(elf = elf_begin(fd, ELF_C_READ, NULL));
	ck_assert_int_eq(elf_getshdrstrndx(elf, &shstrndx), 0);
	for (size_t k = 0; k < 3; k++)
		for (Elf_Scn *scn = NULL; (scn = elf_nextscn(elf, scn));) {
			GElf_Shdr sh;

			if (!gelf_getshdr(scn, &sh) || sh.sh_type != SHT_PROGBITS ||
			    strcmp(elf_strptr(elf, shstrndx, sh.sh_name), names[k]))
				continue;
			out[n++] = (struct section){
				sh.sh_addr, sh.sh_size,
				sh.sh_entsize == 8 || sh.sh_entsize == 16 ? sh.sh_entsize :
				sh.sh_addralign == 8 ? 8 : 16,
				names[k] };
			break;
		}
	elf_end(elf);
	close(fd);
	return n;
}

/* `path`'s build-id in hex, or "". */
static void build_id_hex(Elf *elf, char *hex, size_t size)
{
	hex[0] = '\0';
	for (Elf_Scn *scn = NULL; (scn = elf_nextscn(elf, scn));) {
		GElf_Shdr sh;
		GElf_Nhdr nh;
		Elf_Data *d;
		size_t off = 0, name_at, desc_at;

		if (!gelf_getshdr(scn, &sh) || sh.sh_type != SHT_NOTE || !(d = elf_getdata(scn, NULL)))
			continue;
		while ((off = gelf_getnote(d, off, &nh, &name_at, &desc_at)) > 0)
			if (nh.n_type == NT_GNU_BUILD_ID && 2 * nh.n_descsz < size) {
				for (size_t i = 0; i < nh.n_descsz; i++)
					sprintf(hex + 2 * i, "%02x",
						((const unsigned char *)d->d_buf)[desc_at + i]);
				return;
			}
	}
}

/* The symbols of ELF file `path` at `addr` (FUNC or IFUNC): whether one
 * is named `name`, and whether one is an IFUNC. */
static void symbols_at(const char *path, uint64_t addr, const char *name, bool *named,
		       bool *ifunc, char *id, size_t id_size)
{
	int fd = open(path, O_RDONLY);
	Elf *elf;

	if (fd < 0)
		return;
	ck_assert_ptr_nonnull(elf = elf_begin(fd, ELF_C_READ, NULL));
	if (id)
		build_id_hex(elf, id, id_size);
	for (Elf_Scn *scn = NULL; (scn = elf_nextscn(elf, scn));) {
		GElf_Shdr sh;
		Elf_Data *d;

		if (!gelf_getshdr(scn, &sh) || (sh.sh_type != SHT_SYMTAB && sh.sh_type != SHT_DYNSYM) ||
		    !sh.sh_entsize || !(d = elf_getdata(scn, NULL)))
			continue;
		for (size_t i = 0; i < sh.sh_size / sh.sh_entsize; i++) {
			GElf_Sym sym;
			const char *n;
			uint8_t type;

			if (!gelf_getsym(d, (int)i, &sym) || sym.st_value != addr ||
			    sym.st_shndx == SHN_UNDEF)
				continue;
			type = GELF_ST_TYPE(sym.st_info);
			*ifunc |= type == STT_GNU_IFUNC;
			if ((type == STT_GNU_IFUNC || type == STT_FUNC) &&
			    (n = elf_strptr(elf, sh.sh_link, sym.st_name)) && !strcmp(n, name))
				*named = true;
		}
	}
	elf_end(elf);
	close(fd);
}

/* Whether `name` names a symbol at `addr` of `path` (or of its debug
 * file, by build-id under /usr/lib/debug, where the symbolizer finds
 * it), an IFUNC symbol being there: what perf 7.3 names an IRELATIVE
 * stub by (the symbol it keeps at the resolver's address). */
static bool ifunc_named(const char *path, uint64_t addr, const char *name)
{
	char id[2 * PR_BUILD_ID_MAX + 1], debug[4200];
	bool named = false, ifunc = false;

	symbols_at(path, addr, name, &named, &ifunc, id, sizeof(id));
	if (strlen(id) > 2) {
		snprintf(debug, sizeof(debug), "/usr/lib/debug/.build-id/%.2s/%s.debug", id, id + 2);
		symbols_at(debug, addr, name, &named, &ifunc, NULL, 0);
	}
	return named && ifunc;
}

/* objdump -d's label of a PLT stub. */
struct label {
	uint64_t addr;
	char name[256];
};

/* The labels "...@plt" objdump -d gives in the PLT sections of `path`. */
static size_t objdump_labels(const char *path, struct label **out)
{
	char cmd[4200], line[1024];
	struct label *v = NULL;
	size_t n = 0, cap = 0;
	FILE *p;

	ck_assert_msg(!strchr(path, '\''), "%s: a quote in the path", path);
	snprintf(cmd, sizeof(cmd),
		 "objdump -d -j .plt -j .plt.sec -j .plt.got '%s' 2>/dev/null", path);
	ck_assert_ptr_nonnull(p = popen(cmd, "r"));
	while (fgets(line, sizeof(line), p)) {
		unsigned long long addr;
		char name[256];
		size_t len;

		if (sscanf(line, "%llx <%255[^>]>:", &addr, name) != 2)
			continue;
		len = strlen(name);
		/* ("callee@plt-0x10" is the header, no stub.) */
		if (len < 4 || strcmp(name + len - 4, "@plt"))
			continue;
		ck_assert(!PR_ARRAY_RESERVE(v, cap, n + 1));
		v[n].addr = addr;
		strcpy(v[n].name, name);
		n++;
	}
	ck_assert_int_eq(pclose(p), 0);
	*out = v;
	return n;
}

/* The name objdump's label says, without objdump's "+0xADDEND"; for
 * "*ABS*+0xADDR@plt", *ifunc is ADDR and the name is "". */
static void label_callee(const char *label, char *callee, size_t size, uint64_t *ifunc)
{
	const char *plus;
	size_t len = strlen(label) - 4;     /* less "@plt" */

	*ifunc = 0;
	if (!strncmp(label, "*ABS*+0x", 8)) {
		*ifunc = strtoull(label + 8, NULL, 16);
		callee[0] = '\0';
		return;
	}
	plus = strstr(label, "+0x");
	if (plus && (size_t)(plus - label) < len)
		len = (size_t)(plus - label);
	ck_assert_uint_lt(len, size);
	memcpy(callee, label, len);
	callee[len] = '\0';
}

struct tally {
	size_t stubs, irelative, other;
};

/* Every address of `path`'s PLT sections, 2 bytes apart. */
static struct tally check_file(const char *path)
{
	struct opened o;
	struct section sec[3];
	struct label *labels;
	size_t nr_sec = plt_sections(path, sec), nr = objdump_labels(path, &labels);
	bool has_sec = false;
	struct tally t = { 0 };

	for (size_t k = 0; k < nr_sec; k++)
		has_sec |= !strcmp(sec[k].name, ".plt.sec");
	open_plain(&o, path);
	for (size_t k = 0; k < nr_sec; k++) {
		for (uint64_t a = sec[k].addr; a < sec[k].addr + sec[k].size; a += 2) {
			uint64_t entry = a - (a - sec[k].addr) % sec[k].ent, off;
			const char *ours = name_at(&o, a, &off);
			const struct label *l = NULL;

			for (size_t i = 0; i < nr && !l; i++)
				if (labels[i].addr == entry)
					l = &labels[i];
			if (l) {
				char callee[256], want[300];
				uint64_t ifunc;

				label_callee(l->name, callee, sizeof(callee), &ifunc);
				ck_assert_msg(ours && strlen(ours) > 4 &&
					      !strcmp(ours + strlen(ours) - 4, "@plt") &&
					      off == a - entry,
					      "%s: 0x%llx: objdump's %s, ours %s+0x%llx", path,
					      (unsigned long long)a, l->name, ours ? ours : "none",
					      (unsigned long long)off);
				if (ifunc) {
					snprintf(callee, sizeof(callee), "%.*s",
						 (int)(strlen(ours) - 4), ours);
					ck_assert_msg(ifunc_named(path, ifunc, callee),
						      "%s: 0x%llx: %s is no IFUNC at 0x%llx (%s)", path,
						      (unsigned long long)a, ours,
						      (unsigned long long)ifunc, l->name);
				} else {
					snprintf(want, sizeof(want), "%s@plt", callee);
					ck_assert_msg(!strcmp(ours, want), "%s: 0x%llx: %s, objdump's %s",
						      path, (unsigned long long)a, ours, l->name);
				}
				if (a == entry) {
					t.stubs++;
					t.irelative += ifunc != 0;
				}
				continue;
			}
			/* No label: the lazy binding's code in .plt, or nothing. */
			if (a == entry)
				t.other++;
			if (ours && !strcmp(sec[k].name, ".plt") && (has_sec || a < sec[k].addr + sec[k].ent))
				ck_assert_msg(!strcmp(ours, ".plt") && off == a - sec[k].addr,
					      "%s: 0x%llx: %s+0x%llx, not .plt+0x%llx", path,
					      (unsigned long long)a, ours, (unsigned long long)off,
					      (unsigned long long)(a - sec[k].addr));
			else
				ck_assert_msg(!ours, "%s: 0x%llx: named %s where objdump names nothing",
					      path, (unsigned long long)a, ours);
		}
	}
	/* .plt's header is named whenever it has one (no stub at its start). */
	for (size_t k = 0; k < nr_sec; k++) {
		uint64_t off;
		const char *ours = name_at(&o, sec[k].addr, &off);

		if (!strcmp(sec[k].name, ".plt") && !(ours && strstr(ours, "@plt")))
			ck_assert_msg(ours && !strcmp(ours, ".plt"), "%s: .plt's header: %s", path,
				      ours ? ours : "none");
	}
	fprintf(stderr, "%s: %zu stubs as objdump names them (%zu IRELATIVE), %zu entries it "
		"does not name\n", path, t.stubs, t.irelative, t.other);
	free(labels);
	close_file(&o);
	return t;
}

START_TEST(every_stub_is_named_as_objdump_names_it)
{
	const char *path = files[_i];
	struct tally t = check_file(path);

	/* Every fixture calls four functions through stubs (free and
	 * __cxa_finalize, strlen, memcpy, strdup: all but -fno-plt's). */
	ck_assert_msg(t.stubs >= (strstr(path, "noplt") ? 1u : 4u), "%s: %zu stubs", path,
		      t.stubs);
}
END_TEST

/* The section header of ELF64 image `img` named `want`. */
static Elf64_Shdr *shdr_named(unsigned char *img, const char *want)
{
	Elf64_Ehdr *eh = (Elf64_Ehdr *)img;
	Elf64_Shdr *sh = (Elf64_Shdr *)(img + eh->e_shoff);
	const char *strs = (const char *)img + sh[eh->e_shstrndx].sh_offset;

	for (size_t i = 0; i < eh->e_shnum; i++)
		if (!strcmp(strs + sh[i].sh_name, want))
			return &sh[i];
	ck_abort_msg("no %s", want);
	return NULL;
}

enum { BAD_ADDEND, BAD_SYMBOL, BAD_LINK, BAD_SIZE, BAD_ENTSIZE, BAD_CODE, BAD_JUMPS,
       NR_DAMAGE };

/*
 * The first file (gcc, GNU ld: an IRELATIVE stub in .plt) damaged one way
 * at a time: every address of its PLT sections is named from what
 * survives, or not named, never a crash or a made-up name.
 */
START_TEST(a_damaged_plt_or_rela_plt_names_what_survives)
{
	FILE *f = fopen(files[0], "rb");
	unsigned char *img;
	long len;
	char path[] = "/tmp/ds-plt-XXXXXX";
	struct section sec[3];
	size_t nr_sec, named = 0, unnamed = 0;
	struct opened o;
	Elf64_Shdr *rela, *plt;
	Elf64_Rela *r;
	int fd;

	ck_assert_ptr_nonnull(f);
	ck_assert_int_eq(fseek(f, 0, SEEK_END), 0);
	ck_assert_int_gt(len = ftell(f), 0);
	rewind(f);
	ck_assert_ptr_nonnull(img = malloc((size_t)len));
	ck_assert_uint_eq(fread(img, 1, (size_t)len, f), (size_t)len);
	fclose(f);
	rela = shdr_named(img, ".rela.plt");
	plt = shdr_named(img, ".plt");
	r = (Elf64_Rela *)(img + rela->sh_offset);
	switch (_i) {
	case BAD_ADDEND:        /* addends far outside the file */
	case BAD_SYMBOL:        /* symbols past the table */
		for (size_t i = 0; i < rela->sh_size / sizeof(*r); i++) {
			if (_i == BAD_ADDEND)
				r[i].r_addend = INT64_C(0x7fffffffffff0000);
			else
				r[i].r_info = ELF64_R_INFO(0xffffffu, ELF64_R_TYPE(r[i].r_info));
		}
		break;
	case BAD_LINK:
		rela->sh_link = 0xffff;
		break;
	case BAD_SIZE:
		rela->sh_size = (uint64_t)1 << 40;
		break;
	case BAD_ENTSIZE:
		rela->sh_entsize = 1;
		plt->sh_entsize = 1 << 20;
		break;
	case BAD_CODE:          /* no stub's code left */
		memset(img + plt->sh_offset, 0xff, plt->sh_size);
		break;
	case BAD_JUMPS:         /* stubs jumping anywhere */
		for (uint64_t i = 0; i + 6 <= plt->sh_size; i += 16) {
			img[plt->sh_offset + i] = 0xff;
			img[plt->sh_offset + i + 1] = 0x25;
			memcpy(img + plt->sh_offset + i + 2, &(uint32_t){ 0x80000000u + (uint32_t)i * 977 }, 4);
		}
		break;
	}
	ck_assert_int_ge(fd = mkstemp(path), 0);
	ck_assert_int_eq(write(fd, img, (size_t)len), len);
	close(fd);
	free(img);
	nr_sec = plt_sections(path, sec);
	open_plain(&o, path);
	for (size_t k = 0; k < nr_sec; k++)
		for (uint64_t a = sec[k].addr; a < sec[k].addr + sec[k].size; a++) {
			uint64_t off;
			const char *ours = name_at(&o, a, &off);
			bool stub = ours && strstr(ours, "@plt");

			named += stub;
			unnamed += !ours;
			/* What names a .plt stub is gone: no stub name there
			 * but the IFUNC's (an IRELATIVE relocation needs no
			 * symbol); no code, no stubs. */
			if (!strcmp(sec[k].name, ".plt") &&
			    (_i == BAD_SYMBOL || _i == BAD_LINK || _i == BAD_CODE))
				ck_assert_msg(!stub || (_i != BAD_CODE && !strcmp(ours, "twice@plt")),
					      "damage %d: 0x%llx named %s", _i, (unsigned long long)a,
					      ours);
			/* No IFUNC's name from an addend outside the file. */
			if (_i == BAD_ADDEND && stub)
				ck_assert_msg(strcmp(ours, "twice@plt"), "0x%llx: %s", (unsigned long long)a,
					      ours);
		}
	fprintf(stderr, "damage %d: %zu addresses named as stubs, %zu unnamed\n", _i, named,
		unnamed);
	/* Only the IFUNC's stub lost its name: libc's are still named. */
	if (_i == BAD_ADDEND)
		ck_assert_uint_gt(named, 0);
	close_file(&o);
	unlink(path);
}
END_TEST

/* The shipped files of the Debian 13 root, when it is there. */
START_TEST(debian13s_libc_and_python_are_named_as_objdump_names_them)
{
	const char *root = getenv("DS_DEBIAN13_ROOT");
	char ready[4096], path[4096];
	static const char *const shipped[] = { "/usr/lib/x86_64-linux-gnu/libc.so.6",
					       "/usr/bin/python3.13" };
	size_t irelative = 0;

	if (!root)
		root = "/var/cache/dwarfsample/debian13";
	snprintf(ready, sizeof(ready), "%s/.ready", root);
	if (access(ready, F_OK)) {
		fprintf(stderr, "# no Debian 13 root at %s: its libc and python3.13 not tried\n",
			root);
		return;
	}
	for (size_t i = 0; i < PR_ARRAY_SIZE(shipped); i++) {
		struct tally t;

		snprintf(path, sizeof(path), "%s%s", root, shipped[i]);
		t = check_file(path);
		ck_assert_msg(t.stubs >= 50, "%s: %zu stubs", path, t.stubs);
		irelative += t.irelative;
	}
	/* libc calls its string functions through IRELATIVE stubs. */
	ck_assert_uint_ge(irelative, 20);
}
END_TEST

int main(int argc, char **argv)
{
	Suite *s = suite_create("plt");
	TCase *tc = tcase_create("names");

	if (!take_files(argc, argv, "FILE..."))
		return EXIT_FAILURE;
	tcase_set_timeout(tc, 300);
	tcase_add_loop_test(tc, every_stub_is_named_as_objdump_names_it, 0, nr_files);
	tcase_add_test(tc, debian13s_libc_and_python_are_named_as_objdump_names_them);
	tcase_add_loop_test(tc, a_damaged_plt_or_rela_plt_names_what_survives, 0, NR_DAMAGE);
	suite_add_tcase(s, tc);
	return run_suite(s);
}
