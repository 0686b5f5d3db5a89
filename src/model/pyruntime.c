/* SPDX-License-Identifier: Apache-2.0 */
/*
 * CPython in a process.  The candidates are the files its mappings name
 * libpython* (the interpreter as a shared library, as Debian's python3.13
 * and every embedding program has it) and its executable, whatever its
 * name (a static python3.X, as Debian 12's python3.11, or a program with
 * CPython linked in).  A candidate counts only when its symbols are
 * CPython's: a file named python3.12 is not taken on its name.  The
 * version is read from the file: Py_Version's value (3.11 and later),
 * else the "3.N.M" string it carries for sys.version.
 */
#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <inttypes.h>
#include <libelf.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include "model/pyruntime.h"

/* Whether string table `link` of `elf` holds `name` (as a name, or the
 * tail of a longer one it shares): a table whose strings do not cannot
 * define it, and the search is one memmem() against a strcmp() per
 * symbol (libstdc++'s 6000, for each file the quality report asks
 * about). */
static bool strtab_has(Elf *elf, size_t link, const char *name)
{
	Elf_Scn *scn = elf_getscn(elf, link);
	Elf_Data *d = scn ? elf_getdata(scn, NULL) : NULL;

	return d && d->d_buf && memmem(d->d_buf, d->d_size, name, strlen(name) + 1);
}

/* The value of symbol `name` in `e` (.dynsym first), 0 when undefined. */
static uint64_t symbol_value(const struct pr_elf *e, const char *name)
{
	Elf *elf = elf_memory((char *)e->data, e->size);
	uint64_t found = 0;

	if (!elf)
		return 0;
	for (int pass = 0; pass < 2 && !found; pass++) {
		Elf_Scn *scn = NULL;

		while (!found && (scn = elf_nextscn(elf, scn))) {
			GElf_Shdr sh;
			Elf_Data *d;

			if (!gelf_getshdr(scn, &sh) ||
			    sh.sh_type != (pass ? SHT_SYMTAB : SHT_DYNSYM) ||
			    !sh.sh_entsize || !strtab_has(elf, sh.sh_link, name) ||
			    !(d = elf_getdata(scn, NULL)))
				continue;
			for (size_t i = 0; i < sh.sh_size / sh.sh_entsize; i++) {
				GElf_Sym sym;
				const char *n;

				if (!gelf_getsym(d, (int)i, &sym) || sym.st_shndx == SHN_UNDEF ||
				    !sym.st_value ||
				    !(n = elf_strptr(elf, sh.sh_link, sym.st_name)) || strcmp(n, name))
					continue;
				found = sym.st_value;
				break;
			}
		}
	}
	elf_end(elf);
	return found;
}

/* The minor version a file name says ("libpython3.11.so.1.0",
 * "python3.12"), or -1. */
static int name_minor(const char *name)
{
	const char *p = strstr(name, "python3.");

	if (!p || !isdigit((unsigned char)p[8]))
		return -1;
	return atoi(p + 8);
}

/* "3.N.M", optionally followed by a release tag ("a1", "rc2", "+"), and
 * a NUL, at `p` (at most `left` bytes): true, N and M out. */
static bool version_string(const unsigned char *p, size_t left, unsigned *minor,
			   unsigned *micro)
{
	size_t i = 2;
	unsigned v[2] = { 0, 0 };

	if (left < 6 || p[0] != '3' || p[1] != '.')
		return false;
	for (int k = 0; k < 2; k++) {
		size_t start = i;

		while (i < left && i - start < 3 && isdigit(p[i]))
			v[k] = v[k] * 10 + (unsigned)(p[i++] - '0');
		if (i == start || i >= left || (!k && p[i++] != '.'))
			return false;
	}
	while (i < left && i < 16 && (isalnum(p[i]) || p[i] == '+'))
		i++;
	if (i >= left || p[i])
		return false;
	*minor = v[0];
	*micro = v[1];
	return true;
}

bool pr__python_file(const struct pr_elf *e, const char *name, unsigned *major,
		     unsigned *minor, unsigned *micro)
{
	uint64_t at, v;
	int want = name ? name_minor(name) : -1;

	if (!symbol_value(e, "Py_Initialize") || !symbol_value(e, "PyEval_EvalCode"))
		return false;
	/* PY_VERSION_HEX: 0x030d05f0 is 3.13.5 final. */
	at = symbol_value(e, "Py_Version");
	if (at && !pr__elf_read(e, at, false, &v) && (v >> 24 & 0xff) == 3) {
		*major = 3;
		*minor = (unsigned)(v >> 16 & 0xff);
		*micro = (unsigned)(v >> 8 & 0xff);
		return true;
	}
	/* Before 3.11: PY_VERSION, a string of its own in .rodata. */
	for (size_t i = 1; i + 6 < e->size; i++) {
		const unsigned char *p = memchr(e->data + i, '3', e->size - i - 6);

		if (!p)
			break;
		i = (size_t)(p - e->data);
		if (p[-1] || !version_string(p, e->size - i, minor, micro) ||
		    (want >= 0 && *minor != (unsigned)want))
			continue;
		*major = 3;
		return true;
	}
	return false;
}

/* One line of /proc/PID/maps. */
struct maps_line {
	struct pr_map map;
	struct pr_dso dso;
	char path[4096];
};

static bool parse_line(const char *line, struct maps_line *l)
{
	unsigned long long start, end, off, ino;
	unsigned maj, min;
	char perms[8];
	int n = 0;

	if (sscanf(line, "%llx-%llx %7s %llx %x:%x %llu %n", &start, &end, perms, &off, &maj,
		   &min, &ino, &n) < 7 || !n || line[n] != '/')
		return false;
	snprintf(l->path, sizeof(l->path), "%s", line + n);
	l->path[strcspn(l->path, "\n")] = 0;
	l->map = (struct pr_map){ .start = start, .end = end, .pgoff = off,
				  .prot = (perms[0] == 'r' ? PROT_READ : 0) |
					  (perms[1] == 'w' ? PROT_WRITE : 0) |
					  (perms[2] == 'x' ? PROT_EXEC : 0) };
	l->dso = (struct pr_dso){ .path = l->path, .maj = maj, .min = min, .ino = ino };
	l->map.dso = &l->dso;
	return true;
}

struct opened {
	struct pr_elf *elf;
	const struct pr_logger *lg;
};

static int take(int fd, const char *path, void *arg)
{
	struct opened *o = arg;

	o->elf = pr__elf_open(fd, path, false, o->lg);
	return o->elf ? 1 : 0;
}

/* Whether the mapping in `l` is CPython's: then its file, version and
 * bias into *py. */
static bool try_candidate(uint32_t pid, const struct maps_line *l, struct pr__python *py,
			  const struct pr_logger *lg)
{
	const char *base = strrchr(l->path, '/') ? strrchr(l->path, '/') + 1 : l->path;
	struct pr_dirs none = { 0 };
	int differs = pr__mntns_differs(pid);
	struct pr_dso_query q = {
		.dso = &l->dso, .map = &l->map, .pid = pid, .live = true, .dirs = &none,
		.root = differs > 0 ? pid : 0, .unsure = differs < 0,
	};
	struct opened o = { .lg = lg };
	struct pr_python *pub = &py->pub;

	if (pr__dso_find(&q, take, &o) <= 0 || !o.elf)
		return false;
	if (!pr__python_file(o.elf, base, &pub->major, &pub->minor, &pub->micro)) {
		if (name_minor(base) >= 0 && !pub->unconfirmed[0])
			snprintf(pub->unconfirmed, sizeof(pub->unconfirmed), "%.511s", l->path);
		pr__elf_free(o.elf);
		return false;
	}
	py->elf = o.elf;
	py->bias = pr__elf_bias(o.elf, &l->map);
	pub->shared = !strncmp(base, "libpython", 9);
	snprintf(pub->path, sizeof(pub->path), "%.511s", l->path);
	pub->unconfirmed[0] = 0;
	return true;
}

int pr__python_open(uint32_t pid, struct pr__python *py, const struct pr_logger *lg)
{
	char path[64], line[4300], exe[4096];
	struct maps_line *l = malloc(sizeof(*l));
	ssize_t n;
	FILE *f;
	int found = 0;

	memset(&py->pub, 0, sizeof(py->pub));
	py->pub.sz = sizeof(py->pub);
	py->elf = NULL;
	py->bias = 0;
	if (!l)
		return -ENOMEM;
	snprintf(path, sizeof(path), "/proc/%u/exe", pid);
	n = readlink(path, exe, sizeof(exe) - 1);
	exe[n > 0 ? n : 0] = 0;
	snprintf(path, sizeof(path), "/proc/%u/maps", pid);
	f = fopen(path, "re");
	if (!f) {
		free(l);
		return errno == ENOENT ? -ESRCH : -errno;
	}
	/* The shared libraries first: an executable linked with one has
	 * none of CPython's code itself.  The executable's mapping that
	 * holds its code (the one whose bias pr__elf_bias() tells best). */
	for (int pass = 0; pass < 2 && !found; pass++) {
		char tried[4096] = "";

		rewind(f);
		while (!found && fgets(line, sizeof(line), f)) {
			const char *base;

			if (!parse_line(line, l) || !(l->map.prot & PROT_EXEC) ||
			    !strcmp(l->path, tried))
				continue;
			base = strrchr(l->path, '/') + 1;
			if (pass ? strcmp(l->path, exe) : strncmp(base, "libpython", 9))
				continue;
			snprintf(tried, sizeof(tried), "%s", l->path);
			found = try_candidate(pid, l, py, lg);
		}
	}
	fclose(f);
	free(l);
	if (found)
		pr__log(lg, PR_LOG_DEBUG, "pid %u: CPython %u.%u.%u in %s", pid, py->pub.major,
			py->pub.minor, py->pub.micro, py->pub.path);
	return found;
}

void pr__python_close(struct pr__python *py)
{
	pr__elf_free(py->elf);
	py->elf = NULL;
}

uint64_t pr__python_symbol(const struct pr__python *py, const char *name)
{
	uint64_t v = py->elf ? symbol_value(py->elf, name) : 0;

	return v ? v + py->bias : 0;
}

PR_API int pr_python_find(uint32_t pid, struct pr_python *out)
{
	struct pr__python py;
	size_t sz;
	int ret;

	if (!out || out->sz < offsetof(struct pr_python, unconfirmed))
		return -EINVAL;
	sz = out->sz < sizeof(py.pub) ? out->sz : sizeof(py.pub);
	ret = pr__python_open(pid, &py, NULL);
	pr__python_close(&py);
	if (ret >= 0) {
		py.pub.sz = out->sz;
		memcpy(out, &py.pub, sz);
	}
	return ret;
}
