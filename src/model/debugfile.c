/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Separate debug files, for libdwfl's find_debuginfo callback: found by
 * build-id or .gnu_debuglink on this machine, else fetched from debuginfod
 * when DEBUGINFOD_URLS names servers, and kept inflated in the cache
 * directory when their sections are compressed (without one, inflated in
 * memory when compressed with zstd, which libdw 0.188 cannot read).
 *
 * The local search is ours, not dwfl_standard_find_debuginfo()'s: that
 * one loads libdebuginfod (and libcurl, GnuTLS, Kerberos...: 6 ms a run)
 * the first time a file has no debug file, servers or not.  It is called
 * only when there are servers to ask.
 */
#include <elfutils/libdwelf.h>
#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>

#include "symbols/symbolizer.h"
#include "model/zsection.h"

bool pr__sym_has_build_id(int fd, const void *want, size_t len)
{
	Elf *elf = elf_begin(fd, ELF_C_READ_MMAP, NULL);
	const void *id = NULL;
	ssize_t n = elf ? dwelf_elf_gnu_build_id(elf, &id) : -1;
	bool same = n == (ssize_t)len && !memcmp(id, want, len);

	if (elf)
		elf_end(elf);
	return same;
}

/* .gnu_debuglink's check of a file with no build-id: the CRC-32 of it all. */
static bool has_crc(int fd, uint32_t want)
{
	unsigned char buf[65536];
	uLong crc = crc32(0, NULL, 0);
	ssize_t n;

	while ((n = read(fd, buf, sizeof(buf))) > 0)
		crc = crc32(crc, buf, (uInt)n);
	lseek(fd, 0, SEEK_SET);
	return n == 0 && (uint32_t)crc == want;
}

/* An ELF file with DWARF sections, not a stub. */
static bool has_dwarf(int fd)
{
	Elf *elf = elf_begin(fd, ELF_C_READ_MMAP, NULL);
	Elf_Scn *scn = NULL;
	GElf_Shdr shdr;
	size_t shstrndx;
	bool found = false;

	if (elf && !elf_getshdrstrndx(elf, &shstrndx))
		while (!found && (scn = elf_nextscn(elf, scn))) {
			const char *name = gelf_getshdr(scn, &shdr) ?
					   elf_strptr(elf, shstrndx, shdr.sh_name) : NULL;

			found = name && shdr.sh_type != SHT_NOBITS &&
				(!strcmp(name, ".debug_info") || !strcmp(name, ".zdebug_info"));
		}
	if (elf)
		elf_end(elf);
	return found;
}

struct wanted {
	const unsigned char *id;     /* the module's build-id, or NULL */
	size_t id_len;
	uint32_t crc;                /* .gnu_debuglink's, without a build-id */
};

/* A debug file of the module at `path`: its build-id (or CRC), and DWARF
 * (which also keeps the module's own stripped file from passing). */
static int try_debug_file(const char *path, const struct wanted *w)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);

	if (fd < 0)
		return -1;
	if ((w->id ? pr__sym_has_build_id(fd, w->id, w->id_len) : has_crc(fd, w->crc)) &&
	    has_dwarf(fd))
		return fd;
	close(fd);
	return -1;
}

/*
 * Where gdb, perf and libdwfl look: DIR/.build-id/xx/rest.debug in each
 * debug directory; then the .gnu_debuglink name beside the file, in its
 * .debug/, and under each debug directory at the file's own path
 * (/usr/lib/debug/usr/bin/prog.debug).
 */
static int local_debug_file(const struct pr_symbolizer *s, const char *modname,
			    const char *debuglink, const struct wanted *w, char **found)
{
	char path[4096], dir[4096], hex[2 * PR_BUILD_ID_MAX + 1];
	const char *slash;
	int fd = -1;

	if (w->id && w->id_len >= 2) {
		pr__hex(hex, w->id, w->id_len);
		for (size_t i = 0; fd < 0 && i < s->dirs.nr; i++)
			if (pr__path_fmt(path, sizeof(path), "%s/.build-id/%.2s/%s.debug",
					 s->dirs.v[i], hex, hex + 2))
				fd = try_debug_file(path, w);
	}
	slash = modname ? strrchr(modname, '/') : NULL;
	if (fd < 0 && debuglink && *debuglink && slash &&
	    pr__path_fmt(dir, sizeof(dir), "%.*s", (int)(slash - modname), modname)) {
		if (pr__path_fmt(path, sizeof(path), "%s/%s", dir, debuglink))
			fd = try_debug_file(path, w);
		if (fd < 0 && pr__path_fmt(path, sizeof(path), "%s/.debug/%s", dir, debuglink))
			fd = try_debug_file(path, w);
		for (size_t i = 0; fd < 0 && i < s->dirs.nr; i++)
			if (pr__path_fmt(path, sizeof(path), "%s%s/%s", s->dirs.v[i], dir, debuglink))
				fd = try_debug_file(path, w);
	}
	if (fd >= 0)
		*found = strdup(path);
	return fd;
}

static bool debuginfod_servers(void)
{
	const char *urls = getenv("DEBUGINFOD_URLS");

	return urls && urls[strspn(urls, " \t")];
}

/*
 * Debug files from distributions keep their DWARF compressed, and libdw
 * inflates every debug section of a file before it answers anything:
 * 40 ms for libc's, every run.  With a cache directory, a debug file is
 * inflated once into DIR/debug/BUILDID.debug, and read from there since.
 */
static bool compressed(Elf *elf)
{
	Elf_Scn *scn = NULL;
	GElf_Shdr shdr;

	while ((scn = elf_nextscn(elf, scn)))
		if (gelf_getshdr(scn, &shdr) && (shdr.sh_flags & SHF_COMPRESSED))
			return true;
	return false;
}

/* Copy `from` into `fd` (empty, open for reading and writing) and inflate
 * its compressed sections there: zlib by libelf, zstd by zsection.c, as
 * libelf before 0.189 cannot. */
static bool inflate_copy(int from, int fd)
{
	char buf[65536];
	ssize_t n = 0;
	Elf *elf;
	Elf_Scn *scn = NULL;
	GElf_Shdr shdr;
	unsigned char **zbufs = NULL;
	size_t nr_zbufs = 0;
	bool ok = lseek(from, 0, SEEK_SET) == 0;

	while (ok && (n = read(from, buf, sizeof(buf))) > 0)
		ok = write(fd, buf, (size_t)n) == n;
	elf = ok && n == 0 ? elf_begin(fd, ELF_C_RDWR, NULL) : NULL;
	ok = elf && !pr__zsection_inflate_zstd_dwarf(elf, MAX_DWARF_SECTION, &zbufs, &nr_zbufs);
	while (ok && (scn = elf_nextscn(elf, scn)))
		if (gelf_getshdr(scn, &shdr) && (shdr.sh_flags & SHF_COMPRESSED))
			ok = elf_compress(scn, 0, 0) >= 0;
	ok = ok && elf_update(elf, ELF_C_WRITE) >= 0;
	if (elf)
		elf_end(elf);
	for (size_t i = 0; i < nr_zbufs; i++)
		free(zbufs[i]);
	free(zbufs);
	lseek(from, 0, SEEK_SET);
	return ok;
}

/* `fd` (found as *name), or its inflated copy kept at `cached`. */
static int keep_inflated(struct pr_symbolizer *s, int fd, const char *cached, char **name)
{
	char tmp[4200];
	Elf *elf = elf_begin(fd, ELF_C_READ_MMAP, NULL);
	bool worth = elf && compressed(elf);
	int copy, kept;

	if (elf)
		elf_end(elf);
	if (!worth || !pr__path_fmt(tmp, sizeof(tmp), "%s/debug", s->cache_dir) ||
	    (mkdir(tmp, 0755) && errno != EEXIST) ||
	    !pr__path_fmt(tmp, sizeof(tmp), "%s.%d", cached, (int)getpid()))
		return fd;
	copy = open(tmp, O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	if (copy < 0 || !inflate_copy(fd, copy) || close(copy) || rename(tmp, cached)) {
		if (copy >= 0)
			close(copy);
		unlink(tmp);
		pr__log(&s->lg, PR_LOG_DEBUG, "could not keep %s inflated in %s",
			*name ? *name : "a debug file", s->cache_dir);
		return fd;
	}
	kept = open(cached, O_RDONLY | O_CLOEXEC);
	if (kept < 0)
		return fd;
	close(fd);
	free(*name);
	*name = strdup(cached);
	return kept;
}

/* Without a cache directory, `fd` itself, or, when its DWARF is compressed
 * with zstd, a copy inflated in memory: libdwfl opens the debug file and
 * hands it to libdw at once, with no moment between to inflate sections
 * in place as symdwarf.c does for the file itself.  *name stays the file
 * found, for messages. */
static int zstd_inflated(struct pr_symbolizer *s, int fd, const char *name)
{
	Elf *elf = elf_begin(fd, ELF_C_READ_MMAP, NULL);
	bool worth = pr__zsection_zstd_dwarf(elf);
	int copy;

	if (elf)
		elf_end(elf);
	if (!worth)
		return fd;
	copy = memfd_create("debug", MFD_CLOEXEC);
	if (copy < 0 || !inflate_copy(fd, copy)) {
		if (copy >= 0)
			close(copy);
		pr__log(&s->lg, PR_LOG_DEBUG, "could not inflate %s: %s", name ? name : "a debug file",
			copy < 0 ? strerror(errno) : "damaged or too large");
		return fd;
	}
	close(fd);
	return copy;
}

int pr__sym_find_debuginfo(Dwfl_Module *mod, void **userdata, const char *modname,
			   Dwarf_Addr base, const char *file_name, const char *debuglink_file,
			   GElf_Word debuglink_crc, char **debuginfo_file_name)
{
	/* The module's user data is the symbolizer (pr__sym_module_of() sets
	 * it); its name, the path it was mapped from: .gnu_debuglink is
	 * relative to that, not to /proc/PID/map_files. */
	struct pr_symbolizer *s = userdata ? *userdata : NULL;
	const unsigned char *id = NULL;
	GElf_Addr id_vaddr;
	int len = dwfl_module_build_id(mod, &id, &id_vaddr), fd;
	struct wanted w = { .crc = debuglink_crc };
	char hexid[2 * PR_BUILD_ID_MAX + 1], cached[4096] = "";

	(void)file_name;
	if (!s)
		return -1;
	if (len > 0 && len <= PR_BUILD_ID_MAX) {
		w.id = id;
		w.id_len = (size_t)len;
	}
	if (w.id && s->cache_dir) {
		pr__hex(hexid, id, w.id_len);
		if (pr__path_fmt(cached, sizeof(cached), "%s/debug/%s.debug", s->cache_dir, hexid) &&
		    (fd = open(cached, O_RDONLY | O_CLOEXEC)) >= 0) {
			/* What another program left under the name is checked. */
			if (pr__sym_has_build_id(fd, id, w.id_len)) {
				*debuginfo_file_name = strdup(cached);
				return fd;
			}
			close(fd);
			unlink(cached);
		}
	}
	fd = local_debug_file(s, modname, debuglink_file, &w, debuginfo_file_name);
	if (fd < 0 && debuginfod_servers())
		fd = dwfl_standard_find_debuginfo(mod, userdata, modname, base, modname,
						  debuglink_file, debuglink_crc,
						  debuginfo_file_name);
	if (fd < 0)
		return fd;
	if (cached[0])
		return keep_inflated(s, fd, cached, debuginfo_file_name);
	return zstd_inflated(s, fd, *debuginfo_file_name);
}
