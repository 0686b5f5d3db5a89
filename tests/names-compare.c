/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Compare dwarfsample report's names for the frames in one file with an
 * independent symbolizer's, llvm-symbolizer --inlining, frame by frame:
 * the function, the functions inlined there (innermost first), and each
 * one's source file and line.
 *
 * usage: names-compare addrs FRAMES DSO ELF
 *        names-compare compare FRAMES NAMES DSO ELF LLVM LLVM-SHORT MIN_PERMILLE NAME
 *
 * FRAMES is report's listing with `-F comm,tid,time,ip,dso --no-inline`
 * (one line a frame), NAMES the same capture's with
 * `-F comm,tid,time,ip,sym,dso,srcline` (a line and its source line for
 * each function of a frame); both list addresses as offsets in the file.
 * Only frames in DSO (the path report prints) count; ELF is that file,
 * read for its program headers: llvm-symbolizer wants link-time
 * addresses.  `addrs` prints those of DSO's frames, sorted, one a line, for
 *
 *   llvm-symbolizer --obj=ELF --inlining --print-address \
 *       --functions=linkage --no-demangle | c++filt -p -i  >LLVM
 *   llvm-symbolizer --obj=ELF --inlining --print-address \
 *       --functions=short  >LLVM-SHORT
 *
 * which `compare` reads.  llvm-symbolizer picks the functions from its own
 * reading of the DWARF and gives their linkage names (else DW_AT_name);
 * c++filt renders linkage names the way perf does, and dwarfsample too:
 * libiberty's demangler without parameter lists ("-p"), Rust hashes and
 * crate disambiguators ("-i").  So a lambda is named as its symbol is,
 * "f(int)::{lambda(int, int)#1}::operator()" (gcc) or
 * "f(int)::$_0::operator()" (clang), rather than in llvm's own spelling
 * ("f(int)::'lambda'(int, int)::operator()(int, int) const").
 *
 * Normalisations, each counted and printed:
 *  - a function without a linkage name (gcc writes none in an anonymous
 *    namespace, nor for a constructor) is named by llvm-symbolizer 14 by
 *    its bare DW_AT_name, by dwarfsample with the scopes it is declared
 *    in ("ns::(anonymous namespace)::Class::Class"): equal when ours ends
 *    in "::" and llvm's, which has no scope of its own;
 *  - llvm-symbolizer names the outermost function by its ELF symbol,
 *    which may be another alias of the code (identical code folded: gcc's
 *    Level<0, 0>::run and Level<0, 1>::run): there DWARF's function, its
 *    DW_AT_name (LLVM-SHORT), must be ours;
 *  - a PLT stub has no symbol: llvm-symbolizer names it after the one
 *    before (_init), dwarfsample as perf does ("memcpy@plt").
 * Source files are compared by their last component (the two spell the
 * directories differently: "include/c++/12/../x.h"), and not at all on
 * line 0 (no line: llvm-symbolizer names the CU's file).
 *
 * A frame's names agree when both list the same number of functions with
 * the same names; its lines when every file and line agree too.  Exit 0
 * when both hold for at least MIN_PERMILLE of DSO's frames.
 */
#include <elf.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAX_LINE 16384
#define MAX_CHAIN 64
#define MAX_SEG 16
#define EXAMPLES 5

struct func {
	char *name, *file;
	unsigned long line;
};

struct chain {
	uint64_t vaddr;
	size_t nr;
	struct func f[MAX_CHAIN];
};

static struct {
	uint64_t off, filesz, vaddr;
} seg[MAX_SEG];
static size_t nr_seg;

static void die(const char *what)
{
	fprintf(stderr, "names-compare: %s\n", what);
	exit(2);
}

static char *dup(const char *s, size_t n)
{
	char *d = malloc(n + 1);

	if (!d)
		die("out of memory");
	memcpy(d, s, n);
	d[n] = '\0';
	return d;
}

static void read_segments(const char *path)
{
	FILE *f = fopen(path, "rb");
	Elf64_Ehdr eh;

	if (!f || fread(&eh, sizeof(eh), 1, f) != 1 || memcmp(eh.e_ident, ELFMAG, SELFMAG) ||
	    eh.e_ident[EI_CLASS] != ELFCLASS64)
		die("not a 64-bit ELF file");
	for (unsigned i = 0; i < eh.e_phnum && nr_seg < MAX_SEG; i++) {
		Elf64_Phdr ph;

		if (fseek(f, (long)(eh.e_phoff + (uint64_t)i * eh.e_phentsize), SEEK_SET) ||
		    fread(&ph, sizeof(ph), 1, f) != 1)
			die("program headers cut short");
		if (ph.p_type == PT_LOAD) {
			seg[nr_seg].off = ph.p_offset;
			seg[nr_seg].filesz = ph.p_filesz;
			seg[nr_seg].vaddr = ph.p_vaddr;
			nr_seg++;
		}
	}
	fclose(f);
}

static bool to_vaddr(uint64_t off, uint64_t *vaddr)
{
	for (size_t i = 0; i < nr_seg; i++)
		if (off >= seg[i].off && off - seg[i].off < seg[i].filesz) {
			*vaddr = off - seg[i].off + seg[i].vaddr;
			return true;
		}
	return false;
}

/* A frame line "\t   addr[ name] (module)": its address, and where the
 * name and the module are (the module is the last parenthesised part). */
static bool frame_line(char *line, uint64_t *addr, char **name, char **module)
{
	char *p = line + 1 + strspn(line + 1, " "), *end, *paren;

	*addr = strtoull(p, &end, 16);
	paren = strrchr(end, '(');
	if (end == p || !paren || paren == end || line[strlen(line) - 1] != ')')
		return false;
	paren[-1] = '\0';
	paren[strlen(paren) - 1] = '\0';
	*name = end[0] == ' ' ? end + 1 : end;
	*module = paren + 1;
	return true;
}

static bool get_line(FILE *f, char *buf)
{
	size_t n;

	if (!fgets(buf, MAX_LINE, f))
		return false;
	n = strlen(buf);
	if (n && buf[n - 1] == '\n')
		buf[--n] = '\0';
	return true;
}

/* "file:line" (ours: "  file:line"; llvm's: "file:line:column"), the file
 * by its last component. */
static void source(const char *text, struct func *fn, bool column)
{
	const char *colon = strrchr(text, ':'), *slash;

	if (column && colon) {
		const char *c2 = colon;

		while (c2 > text && c2[-1] != ':')
			c2--;
		colon = c2 > text ? c2 - 1 : NULL;
	}
	if (!colon) {
		fn->file = dup("??", 2);
		fn->line = 0;
		return;
	}
	fn->line = strtoul(colon + 1, NULL, 10);
	for (slash = colon; slash > text && slash[-1] != '/'; slash--)
		;
	fn->file = dup(slash, (size_t)(colon - slash));
}

/* The next sample of a listing: each line's address, whether it is in
 * DSO, the name and the source line (NAMES) under it.  false at the end. */
#define MAX_LINES 8192

struct sample {
	char header[MAX_LINE];
	uint64_t addr[MAX_LINES];
	bool mine[MAX_LINES];
	struct func f[MAX_LINES];
	size_t nr;
};

static bool next_sample(FILE *f, const char *dso, struct sample *s)
{
	char line[MAX_LINE];

	for (size_t i = 0; i < s->nr; i++) {
		free(s->f[i].name);
		free(s->f[i].file);
	}
	s->nr = 0;
	s->header[0] = '\0';
	while (get_line(f, line)) {
		char *name, *module;

		if (!line[0]) {
			if (s->header[0])
				return true;
		} else if (line[0] == ' ' && s->nr) {
			source(line + strspn(line, " "), &s->f[s->nr - 1], false);
		} else if (line[0] != '\t') {
			strcpy(s->header, line);
		} else if (s->nr < MAX_LINES && frame_line(line, &s->addr[s->nr], &name, &module)) {
			s->mine[s->nr] = !strcmp(module, dso);
			s->f[s->nr] = (struct func){ .name = dup(name, strlen(name)) };
			s->nr++;
		}
	}
	return s->header[0] != '\0';
}

/* llvm-symbolizer's answers, by address, in the order asked (sorted). */
struct answers {
	struct chain *v;
	size_t nr;
};

static void read_llvm(const char *path, struct answers *a)
{
	FILE *f = fopen(path, "r");
	char name[MAX_LINE], src[MAX_LINE];
	size_t cap = 0;
	struct chain *c = NULL;

	if (!f)
		die("cannot read llvm-symbolizer's answers");
	while (get_line(f, name)) {
		if (!strncmp(name, "0x", 2)) {
			if (a->nr == cap) {
				cap = cap ? cap * 2 : 256;
				a->v = realloc(a->v, cap * sizeof(*a->v));
				if (!a->v)
					die("out of memory");
			}
			c = &a->v[a->nr++];
			c->vaddr = strtoull(name, NULL, 16);
			c->nr = 0;
			continue;
		}
		if (!name[0] || !c)
			continue;
		if (!get_line(f, src))
			break;
		if (c->nr < MAX_CHAIN) {
			c->f[c->nr].name = dup(name, strlen(name));
			source(src, &c->f[c->nr], true);
			c->nr++;
		}
	}
	fclose(f);
}

static int by_vaddr(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return (x > y) - (x < y);
}

static const struct chain *answer(const struct answers *a, uint64_t vaddr)
{
	return bsearch(&vaddr, a->v, a->nr, sizeof(*a->v), by_vaddr);
}

/* What the normalisations let through, counted. */
static unsigned long qualified, aliases, plt;

static bool ends_scoped(const char *name, const char *bare)
{
	size_t a = strlen(name), b = strlen(bare);

	return a > b + 2 && !strcmp(name + a - b, bare) && !strncmp(name + a - b - 2, "::", 2);
}

/* No "::" outside template arguments and parameter lists. */
static bool unscoped(const char *name)
{
	int depth = 0;

	for (const char *p = name; *p; p++) {
		depth += (*p == '<' || *p == '(') - (*p == '>' || *p == ')');
		if (!depth && p[0] == ':' && p[1] == ':')
			return false;
	}
	return true;
}

/* Entry `e` of ours (`per` in all) against llvm's, `l` by linkage name and
 * `sh` by DW_AT_name. */
static bool same_name(const struct func *ours, size_t e, size_t per, const struct chain *l,
		      const struct chain *sh)
{
	const char *name = ours[e].name, *theirs = l->f[e].name;

	if (!strcmp(name, theirs))
		return true;
	if (ends_scoped(name, theirs) && unscoped(theirs)) {
		qualified++;
		return true;
	}
	/* The outermost function, named by llvm after an alias symbol:
	 * DWARF's function must be ours. */
	if (e == per - 1 && sh && sh->nr == per &&
	    (!strcmp(name, sh->f[e].name) || ends_scoped(name, sh->f[e].name))) {
		aliases++;
		return true;
	}
	/* A PLT stub: no symbol, llvm names it after the one before. */
	if (per == 1 && strstr(name, "@plt") && !l->f[e].line) {
		plt++;
		return true;
	}
	return false;
}

static void show(const char *name, uint64_t vaddr, const struct func *ours, size_t n,
		 const struct chain *c)
{
	size_t max = n > c->nr ? n : c->nr;

	printf("# %s: at 0x%" PRIx64 "\n", name, vaddr);
	for (size_t i = 0; i < max; i++)
		printf("#   %-70.70s %s:%lu | %s %s:%lu\n", i < n ? ours[i].name : "",
		       i < n ? ours[i].file : "", i < n ? ours[i].line : 0,
		       i < c->nr ? c->f[i].name : "", i < c->nr ? c->f[i].file : "",
		       i < c->nr ? c->f[i].line : 0);
}

int main(int argc, char **argv)
{
	static struct sample fr, nm;
	static struct answers by_linkage, by_name;
	unsigned long frames = 0, names = 0, lines = 0, shown = 0, permille;
	FILE *ff, *fn = NULL;
	bool addrs = argc == 5 && !strcmp(argv[1], "addrs");

	if (!addrs && (argc != 10 || strcmp(argv[1], "compare"))) {
		fputs("usage: names-compare addrs FRAMES DSO ELF\n"
		      "       names-compare compare FRAMES NAMES DSO ELF LLVM LLVM-SHORT "
		      "MIN_PERMILLE NAME\n", stderr);
		return 2;
	}
	read_segments(argv[addrs ? 4 : 5]);
	ff = fopen(argv[2], "r");
	if (!ff || (!addrs && !(fn = fopen(argv[3], "r"))))
		die("cannot read the listings");
	if (addrs) {
		uint64_t *v = NULL;
		size_t nr = 0, cap = 0;

		while (next_sample(ff, argv[3], &fr))
			for (size_t i = 0; i < fr.nr; i++) {
				if (nr == cap && !(v = realloc(v, (cap = cap ? 2 * cap : 1024) *
								  sizeof(*v))))
					die("out of memory");
				if (fr.mine[i] && to_vaddr(fr.addr[i], &v[nr]))
					nr++;
			}
		qsort(v, nr, sizeof(*v), by_vaddr);
		for (size_t i = 0; i < nr; i++)
			if (!i || v[i] != v[i - 1])
				printf("0x%" PRIx64 "\n", v[i]);
		free(v);
		fclose(ff);
		return 0;
	}
	read_llvm(argv[6], &by_linkage);
	read_llvm(argv[7], &by_name);
	permille = strtoul(argv[8], NULL, 10);
	while (next_sample(ff, argv[4], &fr)) {
		size_t at = 0;

		if (!next_sample(fn, argv[4], &nm) || strcmp(fr.header, nm.header))
			die("the listings are not of the same samples");
		for (size_t i = 0; i < fr.nr;) {
			size_t k = 1, run = 0, per;

			/* Recursion puts frames of one address side by side: their
			 * functions come as one run of lines, split evenly. */
			while (i + k < fr.nr && fr.addr[i + k] == fr.addr[i])
				k++;
			while (at + run < nm.nr && nm.addr[at + run] == fr.addr[i])
				run++;
			per = run / k;
			for (size_t j = 0; j < k; j++, i++) {
				const struct func *ours = &nm.f[at + j * per];
				const struct chain *c = NULL;
				uint64_t v = 0;
				bool name_ok, line_ok;

				if (!fr.mine[i])
					continue;
				frames++;
				if (!to_vaddr(fr.addr[i], &v) || !(c = answer(&by_linkage, v)) ||
				    run % k || per != c->nr) {
					if (c && shown++ < EXAMPLES)
						show(argv[9], v, ours, per, c);
					continue;
				}
				name_ok = line_ok = true;
				for (size_t e = 0; e < per; e++) {
					name_ok &= same_name(ours, e, per, c, answer(&by_name, v));
					line_ok &= ours[e].line == c->f[e].line &&
						   (!ours[e].line || !strcmp(ours[e].file, c->f[e].file));
				}
				names += name_ok;
				lines += name_ok && line_ok;
				if (!(name_ok && line_ok) && shown++ < EXAMPLES)
					show(argv[9], v, ours, per, c);
			}
			at += run;
		}
	}
	printf("# %s: %lu frames in %s: names as llvm-symbolizer's %lu (%.3f%%), "
	       "names and lines %lu (%.3f%%); passed by normalisation: %lu names qualified "
	       "where llvm's are bare, %lu outermost named by an alias symbol, %lu PLT stubs\n",
	       argv[9], frames, argv[4], names, frames ? 100.0 * (double)names / (double)frames : 0,
	       lines, frames ? 100.0 * (double)lines / (double)frames : 0, qualified, aliases,
	       plt);
	fclose(ff);
	fclose(fn);
	return frames && names * 1000 >= frames * permille && lines * 1000 >= frames * permille ?
	       0 : 1;
}
