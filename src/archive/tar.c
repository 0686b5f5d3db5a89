/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The archive beside a capture (prarchive.h): a gzipped ustar of the kept
 * files' .build-id tree, each file with the code and data nothing reads
 * zeroed, a path -> build-id index and the kernel's symbols.
 */
#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>
#include <zlib.h>

#include "archive/archive.h"


/* Written through zlib: most of a binary's bytes compress well. */
struct tar {
	gzFile f;
	int err;
};

static void put(struct tar *t, const void *buf, size_t len)
{
	if (!t->err && len && gzwrite(t->f, buf, (unsigned)len) != (int)len)
		t->err = -EIO;
}

static void octal(char *field, size_t len, uint64_t v)
{
	snprintf(field, len, "%0*" PRIo64, (int)len - 1, v);
}

/* One regular file `name` of `size` bytes, its bytes from `fd` (or
 * `buf`). */
static void tar_file(struct tar *t, const char *name, int fd, const void *buf, uint64_t size)
{
	unsigned char h[PR_TAR_BLOCK] = { 0 };
	char data[65536];
	unsigned sum = 0;
	uint64_t done = 0;

	if (t->err || strlen(name) >= 100) {
		t->err = t->err ? t->err : -ENAMETOOLONG;
		return;
	}
	memcpy(h, name, strlen(name));
	octal((char *)h + 100, 8, 0644);
	octal((char *)h + 108, 8, 0);
	octal((char *)h + 116, 8, 0);
	octal((char *)h + 124, 12, size);
	octal((char *)h + 136, 12, (uint64_t)time(NULL));
	memset(h + 148, ' ', 8);
	h[156] = '0';
	memcpy(h + 257, "ustar", 6);
	memcpy(h + 263, "00", 2);
	for (size_t i = 0; i < PR_TAR_BLOCK; i++)
		sum += h[i];
	snprintf((char *)h + 148, 8, "%06o", sum);
	put(t, h, PR_TAR_BLOCK);
	while (done < size) {
		size_t want = size - done < sizeof(data) ? (size_t)(size - done) : sizeof(data);
		ssize_t got = buf ? (ssize_t)want : pread(fd, data, want, (off_t)done);

		if (got <= 0) {
			t->err = -EIO;
			return;
		}
		put(t, buf ? (const char *)buf + done : data, (size_t)got);
		done += (uint64_t)got;
	}
	if (size % PR_TAR_BLOCK) {
		static const char zeros[PR_TAR_BLOCK];

		put(t, zeros, PR_TAR_BLOCK - size % PR_TAR_BLOCK);
	}
}

/* Code kept around each frame's address: what libunwind reads there (a
 * signal trampoline's instructions) lies within it. */
#define CODE_WINDOW 64

static int by_offset(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return (x > y) - (x < y);
}

/* Whether the bytes of a loaded section are code or data no unwinding or
 * naming reads: .text, .rodata, .data and the like.  What is kept: every
 * section that is not loaded (symbols, DWARF, notes), and of the loaded
 * ones the unwind tables and what names symbols (.dynsym and its
 * strings, versions, relocations for @plt names, and the PLT stubs,
 * whose jumps say which relocation names each: symbols/plt.c) -- none of
 * them SHT_PROGBITS but the unwind tables, the stubs and Go's tables. */
static bool droppable(const char *name, const GElf_Shdr *sh)
{
	static const char *const keep[] = {
		".eh_frame", ".eh_frame_hdr", ".gcc_except_table", ".interp",
		".plt", ".plt.sec", ".plt.got",
		".gopclntab", ".go.buildinfo", ".gosymtab", ".note.go.buildid",
	};

	if (!(sh->sh_flags & SHF_ALLOC) || sh->sh_type != SHT_PROGBITS || !name)
		return false;
	for (size_t i = 0; i < sizeof(keep) / sizeof(keep[0]); i++)
		if (!strcmp(name, keep[i]))
			return false;
	return true;
}

/*
 * File `f` as the archive keeps it: the same bytes at the same offsets,
 * so that its program headers still map addresses to them, but with the
 * code and data no unwinding or naming reads zeroed -- a few bytes around
 * each frame's address aside -- which the archive's compression then
 * takes to almost nothing.  The file whole when it is not ELF.
 */
static void tar_slim(struct tar *t, const char *name, struct pr_kept *f, uint64_t size)
{
	uint8_t *orig = size ? mmap(NULL, size, PROT_READ, MAP_PRIVATE, f->fd, 0) : MAP_FAILED;
	uint8_t *buf = orig == MAP_FAILED ? NULL : malloc(size);
	Elf *elf = NULL;
	size_t shstrndx;

	if (!buf) {
		tar_file(t, name, f->fd, NULL, size);
		goto out;
	}
	memcpy(buf, orig, size);
	elf_version(EV_CURRENT);
	elf = elf_memory((char *)orig, size);
	if (elf && elf_kind(elf) == ELF_K_ELF && !elf_getshdrstrndx(elf, &shstrndx)) {
		for (Elf_Scn *scn = NULL; (scn = elf_nextscn(elf, scn));) {
			GElf_Shdr sh;

			if (gelf_getshdr(scn, &sh) &&
			    droppable(elf_strptr(elf, shstrndx, sh.sh_name), &sh) &&
			    sh.sh_offset <= size && sh.sh_size <= size - sh.sh_offset)
				memset(buf + sh.sh_offset, 0, sh.sh_size);
		}
		qsort(f->offs, f->nr_offs, sizeof(*f->offs), by_offset);
		for (size_t i = 0; i < f->nr_offs; i++) {
			uint64_t lo = f->offs[i] > CODE_WINDOW ? f->offs[i] - CODE_WINDOW : 0;
			uint64_t hi = f->offs[i] + CODE_WINDOW < size ? f->offs[i] + CODE_WINDOW : size;

			if (lo < hi)
				memcpy(buf + lo, orig + lo, hi - lo);
		}
	}
	tar_file(t, name, -1, buf, size);
out:
	if (elf)
		elf_end(elf);
	free(buf);
	if (orig != MAP_FAILED)
		munmap(orig, size);
}

/* The debug file at `path` into the archive as `name`: opened without
 * waiting (a FIFO there would hold the recording), and only when it is a
 * regular file. */
static void tar_path(struct tar *t, const char *name, const char *path)
{
	int fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
	struct stat st;

	if (fd < 0 || fstat(fd, &st)) {
		t->err = -errno;
	} else if (!S_ISREG(st.st_mode)) {
		t->err = -EINVAL;
	} else {
		tar_file(t, name, fd, NULL, (uint64_t)st.st_size);
	}
	if (fd >= 0)
		close(fd);
}

int pr_archive_name(const char *capture, char *buf, size_t size)
{
	if (!capture || !buf || !size)
		return -EINVAL;
	return pr__path_fmt(buf, size, "%s.archive.tar.gz", capture) ? 0 : -ENAMETOOLONG;
}

int pr_keeper_write_archive(struct pr_keeper *k, const char *path, bool kernel)
{
	char tmp[PATH_MAX], name[128], h[2 * PR_BUILD_ID_MAX + 1], dbg[PATH_MAX];
	struct tar t = { 0 };
	char *index = NULL;
	size_t index_len = 0;
	FILE *ix;
	int err;

	if (!k || !path)
		return -EINVAL;
	if (!pr__path_fmt(tmp, sizeof(tmp), "%s.tmp", path)) {
		pr__log(&k->lg, PR_LOG_ERROR, "cannot write %s.tmp: %s", path,
			strerror(ENAMETOOLONG));
		return -ENAMETOOLONG;
	}
	ix = open_memstream(&index, &index_len);
	t.f = ix ? gzopen(tmp, "wbe6") : NULL;
	if (!t.f) {
		err = errno ? -errno : -ENOMEM;
		pr__log(&k->lg, PR_LOG_ERROR, "cannot write %s: %s", tmp, strerror(-err));
		if (ix)
			fclose(ix);
		free(index);
		return err;
	}
	for (size_t i = 0; i < k->nr; i++) {
		struct pr_kept *f = &k->files[i];
		struct stat st;

		if (!f->sampled || !f->id_len || fstat(f->fd, &st))
			continue;
		pr__hex(h, f->id, f->id_len);
		snprintf(name, sizeof(name), ".build-id/%.2s/%s/elf", h, h + 2);
		tar_slim(&t, name, f, (uint64_t)st.st_size);
		if (pr__keep_debug_file(h, dbg, sizeof(dbg))) {
			snprintf(name, sizeof(name), ".build-id/%.2s/%s/debug", h, h + 2);
			tar_path(&t, name, dbg);
		}
		fprintf(ix, "%s %s\n", h, f->path);
	}
	if (kernel) {
		size_t len;
		char *syms = pr__read_all("/proc/kallsyms", &len);

		if (syms)
			tar_file(&t, "kallsyms", -1, syms, len);
		free(syms);
	}
	fclose(ix);
	tar_file(&t, "index", -1, index ? index : "", index_len);
	free(index);
	/* The end: two zero blocks. */
	put(&t, (char[2 * PR_TAR_BLOCK]){ 0 }, 2 * PR_TAR_BLOCK);
	if (gzclose(t.f) != Z_OK && !t.err)
		t.err = -EIO;
	err = t.err;
	if (!err && rename(tmp, path))
		err = -errno;
	if (err) {
		pr__log(&k->lg, PR_LOG_ERROR, "cannot write %s: %s", path, strerror(-err));
		unlink(tmp);
	}
	return err;
}
