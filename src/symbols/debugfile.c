/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Separate debug files, for libdwfl's find_debuginfo callback: the one the
 * model's ELF cache found, here or from debuginfod (the same file the
 * unwinder takes .debug_frame from), kept inflated in the cache directory
 * when its sections are compressed (without one, inflated in memory when
 * compressed with zstd, which libdw 0.188 cannot read).
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

#include "model/elfcache.h"
#include "symbols/symbolizer.h"

/* Whether the file open at `fd` has build-id `want`. */
static bool has_build_id(int fd, const void *want, size_t len)
{
	uint8_t id[PR_BUILD_ID_MAX];
	size_t n = 0;

	return !pr__build_id_fd(fd, id, &n) && n == len && !memcmp(id, want, len);
}

/* Whether the ELF file open as `fd` holds every section its headers say
 * it has: a copy cut short (a full disk, a damaged one) does not, and
 * libdw would read what is left of it as DWARF without a word. */
static bool sections_within(int fd)
{
	struct stat st;
	Elf *elf;
	Elf_Scn *scn = NULL;
	GElf_Ehdr eh;
	GElf_Shdr sh;
	uint64_t size;
	bool ok;

	if (fstat(fd, &st) || !(elf = elf_begin(fd, ELF_C_READ_MMAP, NULL)))
		return false;
	size = (uint64_t)st.st_size;
	ok = gelf_getehdr(elf, &eh) && eh.e_shoff <= size &&
	     (uint64_t)eh.e_shnum * eh.e_shentsize <= size - eh.e_shoff;
	while (ok && (scn = elf_nextscn(elf, scn)))
		ok = gelf_getshdr(scn, &sh) && (sh.sh_type == SHT_NOBITS ||
						 (sh.sh_offset <= size && sh.sh_size <= size - sh.sh_offset));
	elf_end(elf);
	return ok;
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
	/* The module's user data is its struct sym_module (pr__sym_module_of()
	 * sets it), which has the file from the model's cache. */
	struct sym_module *m = userdata ? *userdata : NULL;
	struct pr_symbolizer *s = m ? m->s : NULL;
	struct pr_elf *dbg;
	char hexid[2 * PR_BUILD_ID_MAX + 1], cached[4096] = "";
	int fd;

	(void)mod;
	(void)modname;
	(void)base;
	(void)file_name;
	(void)debuglink_file;
	(void)debuglink_crc;
	if (!s || !m->elf)
		return -1;
	if (m->elf->build_id_size && s->cache_dir) {
		pr__hex(hexid, m->elf->build_id, m->elf->build_id_size);
		if (pr__path_fmt(cached, sizeof(cached), "%s/debug/%s.debug", s->cache_dir, hexid) &&
		    (fd = open(cached, O_RDONLY | O_CLOEXEC)) >= 0) {
			/* What another program left under the name is checked,
			 * and that it is whole. */
			if (has_build_id(fd, m->elf->build_id, m->elf->build_id_size) &&
			    sections_within(fd)) {
				*debuginfo_file_name = strdup(cached);
				return fd;
			}
			pr__log(&s->lg, PR_LOG_DEBUG, "%s: not of this file, or cut short: made "
				"again", cached);
			close(fd);
			unlink(cached);
		}
	}
	dbg = pr__elfcache_debug(s->elves, m->elf, &s->lg);
	/* A debug file with only .debug_frame names nothing. */
	if (!dbg || !dbg->has_debug_info || (fd = pr__elf_fd(dbg)) < 0)
		return -1;
	*debuginfo_file_name = strdup(dbg->path);
	if (cached[0])
		return keep_inflated(s, fd, cached, debuginfo_file_name);
	return zstd_inflated(s, fd, *debuginfo_file_name);
}
