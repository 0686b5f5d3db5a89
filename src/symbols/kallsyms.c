/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The kernel's symbols, from /proc/kallsyms (or a copy of the recording
 * machine's), with their modules.  A capture says where the kernel's text
 * was when recorded; when that is not where it is now (KASLR: another
 * boot), addresses are moved by the difference before the lookup, and a
 * capture of another kernel build (its build-id) keeps kernel addresses
 * unnamed rather than naming them wrong.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "symbols/symbolizer.h"

/*
 * The kernel formats /proc/kallsyms line by line as it is read, which
 * costs as much as unwinding a capture.  Parsed once, the table is kept
 * as an image -- a header, the entries sorted, their names -- which is
 * what lookups use, in memory or mapped from the cache directory, where it
 * stays valid for as long as the kernel's text stays where it is: this
 * boot (KASLR moves it at every boot), these modules.
 */
struct ksym_entry {
	uint64_t start, end;
	uint32_t name;               /* offset in the names: "name\0[module]\0" or "name\0\0" */
	uint32_t pad;
};

struct ksym_header {
	char magic[8];
	uint64_t key, nr, names_size;
	uint64_t text, stext;        /* _text and _stext, for the relocation */
};

#define KSYM_MAGIC "DSKSYM03"

static uint64_t kernel_key(void)
{
	static const char *const files[] = {
		"/proc/sys/kernel/random/boot_id", "/proc/modules", "/proc/sys/kernel/osrelease",
	};
	uint64_t h = PR_HASH_INIT;

	for (size_t i = 0; i < PR_ARRAY_SIZE(files); i++) {
		size_t len = 0;
		char *text = pr__read_all(files[i], &len);

		if (text)
			h = pr__hash_bytes(h, text, len);
		h = pr__hash_bytes(h, "\xff", 1);
		free(text);
	}
	return h;
}

/* Take `img` (len bytes) as the table when it is a whole, sound image
 * made for `key`. */
static bool use_image(struct pr_symbolizer *s, const void *img, size_t len, uint64_t key)
{
	struct ksym_header h;
	const struct ksym_entry *e = (const void *)((const char *)img + sizeof(h));
	const char *names;

	if (len < sizeof(h))
		return false;
	memcpy(&h, img, sizeof(h));
	if (memcmp(h.magic, KSYM_MAGIC, 8) || h.key != key ||
	    h.nr > (len - sizeof(h)) / sizeof(*e) ||
	    h.names_size != len - sizeof(h) - h.nr * sizeof(*e) || h.names_size < 2)
		return false;
	names = (const char *)(e + h.nr);
	/* Every name and module ends inside the names. */
	if (names[h.names_size - 1] || names[h.names_size - 2])
		return false;
	for (uint64_t i = 0; i < h.nr; i++)
		if (e[i].name >= h.names_size - 1 || (i && e[i].start <= e[i - 1].start))
			return false;
	s->ksyms = e;
	s->nr_ksyms = h.nr;
	s->knames = names;
	s->ktext = h.text;
	s->kstext = h.stext;
	return true;
}

static bool kallsyms_cached(struct pr_symbolizer *s, uint64_t key)
{
	char path[4096];
	struct stat st;
	void *map;
	int fd;

	if (!pr__path_fmt(path, sizeof(path), "%s/kallsyms", s->cache_dir) ||
	    (fd = open(path, O_RDONLY | O_CLOEXEC)) < 0)
		return false;
	map = fstat(fd, &st) || st.st_size <= 0 ? MAP_FAILED :
	      mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_PRIVATE, fd, 0);
	close(fd);
	if (map == MAP_FAILED)
		return false;
	if (!use_image(s, map, (size_t)st.st_size, key)) {
		munmap(map, (size_t)st.st_size);
		return false;
	}
	s->kimage_map = map;
	s->kimage_len = (size_t)st.st_size;
	return true;
}

/* The image of a finished table whose names point into kallsyms text
 * ("name\0[module]\0", or "name\0" and anything not starting '['). */
static char *make_image(const struct pr_symbolizer *s, const struct pr_symtab *t,
			uint64_t key, size_t *len)
{
	struct ksym_header h = { .key = key, .nr = t->nr, .text = s->ktext, .stext = s->kstext };
	struct ksym_entry *e;
	char *img, *names;
	size_t at = 1;

	memcpy(h.magic, KSYM_MAGIC, 8);
	h.names_size = 2;
	for (size_t i = 0; i < t->nr; i++) {
		const char *n = t->v[i].name, *mod = n + strlen(n) + 1;

		h.names_size += strlen(n) + 1 + (mod[0] == '[' ? strlen(mod) + 1 : 1);
	}
	if (h.names_size > UINT32_MAX)
		return NULL;
	*len = sizeof(h) + t->nr * sizeof(*e) + h.names_size;
	img = calloc(1, *len);
	if (!img)
		return NULL;
	memcpy(img, &h, sizeof(h));
	e = (struct ksym_entry *)(img + sizeof(h));
	names = (char *)(e + t->nr);
	for (size_t i = 0; i < t->nr; i++) {
		const char *n = t->v[i].name, *mod = n + strlen(n) + 1;
		size_t ln = strlen(n) + 1;

		e[i] = (struct ksym_entry){ t->v[i].start, t->v[i].end, (uint32_t)at, 0 };
		memcpy(names + at, n, ln);
		at += ln;
		if (mod[0] == '[') {
			memcpy(names + at, mod, strlen(mod) + 1);
			at += strlen(mod) + 1;
		} else {
			names[at++] = '\0';
		}
	}
	return img;
}

static void kallsyms_save(struct pr_symbolizer *s, const char *img, size_t len)
{
	char path[4096], tmp[4200];
	FILE *f;

	if (!pr__path_fmt(path, sizeof(path), "%s/kallsyms", s->cache_dir) ||
	    !pr__path_fmt(tmp, sizeof(tmp), "%s.%d", path, (int)getpid()))
		return;
	f = fopen(tmp, "we");
	if (f && fwrite(img, 1, len, f) == len && !fclose(f)) {
		if (rename(tmp, path))
			unlink(tmp);
		return;
	}
	if (f)
		fclose(f);
	unlink(tmp);
	pr__log(&s->lg, PR_LOG_DEBUG, "could not keep the kernel's symbols in %s",
		s->cache_dir);
}

/* Cut the symbols out of kallsyms text in place: the table then points
 * into it.  Returns whether any address was not 0 (kptr_restrict hides
 * them all). */
static bool parse_kallsyms(struct pr_symbolizer *s, char *text, size_t len,
			   struct pr_symtab *t)
{
	char *p, *end;
	bool any = false;

	/* "ffffffff81000000 T name\t[module]\n": each name is cut out in
	 * place, followed by its module ("name\0[module]\0") or by the next
	 * line's address, which never starts with '['. */
	for (p = text, end = p + len; p < end; ) {
		char *nl = memchr(p, '\n', (size_t)(end - p)), *name, *tab;
		uint64_t addr = 0;
		char type;
		int digits = 0;

		if (!nl)
			nl = end;
		for (; p < nl && *p != ' '; p++, digits++) {
			int v = *p >= '0' && *p <= '9' ? *p - '0' :
				*p >= 'a' && *p <= 'f' ? *p - 'a' + 10 : -1;

			if (v < 0 || digits == 16)
				break;
			addr = addr << 4 | (uint64_t)v;
		}
		if (digits == 0 || nl - p < 4 || p[0] != ' ' || p[2] != ' ') {
			p = nl + 1;
			continue;
		}
		type = p[1];
		name = p + 3;
		*nl = '\0';
		tab = memchr(name, '\t', (size_t)(nl - name));
		if (tab)
			*tab = '\0';
		p = nl + 1;
		if (type != 't' && type != 'T' && type != 'w' && type != 'W')
			continue;
		any |= addr != 0;
		if (tab && tab[1] != '[')
			continue;
		if (!tab && !strcmp(name, "_text"))
			s->ktext = addr;
		else if (!tab && !strcmp(name, "_stext"))
			s->kstext = addr;
		if (pr__symtab_add(t, addr, 0, name,
				   type == 'w' || type == 'W' ? PR_SYM_WEAK :
				   type == 'T' ? PR_SYM_GLOBAL : PR_SYM_LOCAL))
			break;
	}
	return any;
}

static void load_kallsyms(struct pr_symbolizer *s)
{
	const char *path = s->kallsyms_path ? s->kallsyms_path : "/proc/kallsyms";
	/* Only the running kernel's symbols are kept: a copy is read as is. */
	bool running = !s->kallsyms_path;
	uint64_t key = running && s->cache_dir ? kernel_key() : 0;
	struct pr_symtab t = { 0 };
	size_t len = 0;
	char *text;

	if (running && s->cache_dir && kallsyms_cached(s, key))
		return;
	text = pr__read_all(path, &len);
	if (!text) {
		pr__log(&s->lg, PR_LOG_WARN, "cannot read %s: %s; kernel frames keep their "
			"addresses", path, strerror(errno));
		return;
	}
	if (!parse_kallsyms(s, text, len, &t)) {
		if (running)
			pr__log(&s->lg, PR_LOG_WARN, "kernel addresses are hidden in /proc/kallsyms "
				"(kernel.kptr_restrict); kernel frames keep their addresses "
				"(run as root, or set kernel.kptr_restrict=0)");
		else
			pr__log(&s->lg, PR_LOG_WARN, "%s has no kernel symbols with addresses; "
				"kernel frames keep their addresses", path);
	} else {
		pr__symtab_finish(&t);
		s->kimage = make_image(s, &t, key, &len);
		if (s->kimage && use_image(s, s->kimage, len, key) && running && s->cache_dir)
			kallsyms_save(s, s->kimage, len);
	}
	pr__symtab_free(&t);
	free(text);
}

/* The symbol holding `ip`: the last starting at or below it, if `ip` is
 * before its end. */
static const struct ksym_entry *kernel_find(const struct pr_symbolizer *s, uint64_t ip)
{
	size_t lo = pr__upper_bound(s->ksyms, s->nr_ksyms, sizeof(*s->ksyms), ip);

	if (!lo || (ip >= s->ksyms[lo - 1].end && ip != s->ksyms[lo - 1].start))
		return NULL;
	return &s->ksyms[lo - 1];
}

/* Whether the kernel the capture sampled is the one the symbols are
 * from, and how far its text has moved since. */
static void relocate(struct pr_symbolizer *s)
{
	uint8_t recorded[PR_BUILD_ID_MAX], running[PR_BUILD_ID_MAX];
	size_t n = pr__model_build_id_hint(s->model, "[kernel.kallsyms]", recorded), len = 0;
	uint64_t then, now;
	const char *ref = pr__model_kernel_ref(s->model, &then);
	char hex[2 * PR_BUILD_ID_MAX + 1];

	if (!s->kallsyms_path && n && !pr__build_id_kernel(running, &len) &&
	    (len != n || memcmp(recorded, running, n))) {
		pr__hex(hex, recorded, n);
		pr__log(&s->lg, PR_LOG_WARN, "the capture was recorded on another kernel "
			"(build-id %s) than the one running; kernel frames keep their addresses; "
			"give a copy of that kernel's /proc/kallsyms as the "
			PR_LOG_SETTING_KALLSYMS, hex);
		s->nr_ksyms = 0;
		return;
	}
	now = !ref ? 0 : !strcmp(ref, "_text") ? s->ktext : !strcmp(ref, "_stext") ? s->kstext : 0;
	if (!now || !then || now == then)
		return;
	s->kernel_delta = now - then;
	pr__log(&s->lg, PR_LOG_INFO, "the kernel's text is at 0x%llx, recorded at 0x%llx "
		"(another boot): kernel addresses are moved by the difference",
		(unsigned long long)now, (unsigned long long)then);
}

int pr__sym_resolve_kernel(struct pr_symbolizer *s, uint64_t ip, struct pr_symbol *sym)
{
	const struct ksym_entry *e;
	const char *name, *module;

	if (!s->kernel_loaded) {
		s->kernel_loaded = true;
		load_kallsyms(s);
		if (s->nr_ksyms)
			relocate(s);
	}
	sym->module = "[kernel.kallsyms]";
	ip += s->kernel_delta;
	e = kernel_find(s, ip);
	if (!e)
		return 0;
	/* A module's frames are attributed to the module, as perf does. */
	name = s->knames + e->name;
	module = name + strlen(name) + 1;
	if (module[0] == '[')
		sym->module = module;
	pr__sym_named(s, sym, name, ip - e->start, PR_SYM_KALLSYMS);
	return 0;
}

void pr__sym_kernel_free(struct pr_symbolizer *s)
{
	if (s->kimage_map)
		munmap(s->kimage_map, s->kimage_len);
	free(s->kimage);
}
