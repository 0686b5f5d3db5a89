/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The archive beside a capture (archive.h): a gzipped ustar of the kept
 * files' .build-id tree, each file with the code and data nothing reads
 * zeroed, a path -> build-id index and the kernel's symbols; and report's
 * side, which extracts it once and uses it.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <gelf.h>
#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <time.h>
#include <unistd.h>
#include <zlib.h>

#include "cli.h"
#include "keep.h"

#define TAR_BLOCK 512
/* ---- the archive: ustar ---- */

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
	unsigned char h[TAR_BLOCK] = { 0 };
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
	for (size_t i = 0; i < TAR_BLOCK; i++)
		sum += h[i];
	snprintf((char *)h + 148, 8, "%06o", sum);
	put(t, h, TAR_BLOCK);
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
	if (size % TAR_BLOCK) {
		static const char zeros[TAR_BLOCK];

		put(t, zeros, TAR_BLOCK - size % TAR_BLOCK);
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
 * naming reads: .text, .rodata, .data, .plt and the like.  What is kept:
 * every section that is not loaded (symbols, DWARF, notes), and of the
 * loaded ones the unwind tables and what names symbols (.dynsym and its
 * strings, versions, relocations for @plt names) -- none of them
 * SHT_PROGBITS but the unwind tables and Go's tables. */
static bool droppable(const char *name, const GElf_Shdr *sh)
{
	static const char *const keep[] = {
		".eh_frame", ".eh_frame_hdr", ".gcc_except_table", ".interp",
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
static void tar_slim(struct tar *t, const char *name, struct kept *f, uint64_t size)
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

static void tar_path(struct tar *t, const char *name, const char *path)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	struct stat st;

	if (fd < 0 || fstat(fd, &st)) {
		t->err = -errno;
	} else {
		tar_file(t, name, fd, NULL, (uint64_t)st.st_size);
	}
	if (fd >= 0)
		close(fd);
}

/* The kernel's symbols, read whole (/proc/kallsyms has no size). */
static char *read_all(const char *path, size_t *len)
{
	FILE *f = fopen(path, "re");
	char *buf = NULL;
	size_t cap = 0, n;

	*len = 0;
	if (!f)
		return NULL;
	do {
		if (*len + 65536 > cap) {
			char *v = realloc(buf, cap = cap ? 2 * cap : 1 << 20);

			if (!v) {
				free(buf);
				fclose(f);
				return NULL;
			}
			buf = v;
		}
		n = fread(buf + *len, 1, cap - *len, f);
		*len += n;
	} while (n > 0);
	fclose(f);
	return buf;
}

void ds_archive_name(const char *data, char *buf, size_t len)
{
	snprintf(buf, len, "%s.archive.tar.gz", data);
}

int ds_archive_write(struct ds_keep *k, const char *archive, bool kernel)
{
	char tmp[PATH_MAX], name[128], h[2 * PR_BUILD_ID_MAX + 1], dbg[PATH_MAX];
	struct tar t = { 0 };
	char *index = NULL;
	size_t index_len = 0;
	FILE *ix = open_memstream(&index, &index_len);

	snprintf(tmp, sizeof(tmp), "%s.tmp", archive);
	t.f = gzopen(tmp, "wbe6");
	if (!t.f || !ix) {
		ds_err("cannot write %s: %s", tmp, strerror(errno));
		if (t.f)
			gzclose(t.f);
		if (ix)
			fclose(ix);
		free(index);
		return -1;
	}
	for (size_t i = 0; i < k->nr; i++) {
		const struct kept *f = &k->files[i];
		struct stat st;

		if (!f->sampled || !f->id_len || fstat(f->fd, &st))
			continue;
		ds_hex(h, f->id, f->id_len);
		snprintf(name, sizeof(name), ".build-id/%.2s/%s/elf", h, h + 2);
		tar_slim(&t, name, &k->files[i], (uint64_t)st.st_size);
		if (ds_debug_file(h, dbg, sizeof(dbg))) {
			snprintf(name, sizeof(name), ".build-id/%.2s/%s/debug", h, h + 2);
			tar_path(&t, name, dbg);
		}
		fprintf(ix, "%s %s\n", h, f->path);
	}
	if (kernel) {
		size_t len;
		char *syms = read_all("/proc/kallsyms", &len);

		if (syms)
			tar_file(&t, "kallsyms", -1, syms, len);
		free(syms);
	}
	fclose(ix);
	tar_file(&t, "index", -1, index ? index : "", index_len);
	free(index);
	/* The end: two zero blocks. */
	put(&t, (char[2 * TAR_BLOCK]){ 0 }, 2 * TAR_BLOCK);
	if (gzclose(t.f) != Z_OK && !t.err)
		t.err = -EIO;
	if (t.err || rename(tmp, archive)) {
		ds_err("cannot write %s: %s", archive, strerror(t.err ? -t.err : errno));
		unlink(tmp);
		return -1;
	}
	return 0;
}

/* perf's build-id cache: DIR/PATH/BUILDID/{elf,debug}, and
 * DIR/.build-id/xx/rest -> ../../PATH/BUILDID. */
/* ---- report's side ---- */

/* A member name an archive may have: relative, no "..", plain bytes. */
static bool safe_name(const char *name)
{
	if (!*name || name[0] == '/' || strstr(name, ".."))
		return false;
	for (const char *p = name; *p; p++)
		if (!(*p == '/' || *p == '.' || *p == '-' || *p == '_' ||
		      (*p >= '0' && *p <= '9') || (*p >= 'a' && *p <= 'z') ||
		      (*p >= 'A' && *p <= 'Z')))
			return false;
	return true;
}

/* Extract the archive at `path` into the new directory `to`. */
static int extract(const char *path, const char *to)
{
	unsigned char h[TAR_BLOCK];
	char buf[65536], name[101], file[2 * PATH_MAX];
	gzFile f = gzopen(path, "rbe");
	int err = 0;

	if (!f)
		return -errno;
	while (!err && gzread(f, h, TAR_BLOCK) == TAR_BLOCK && h[0]) {
		unsigned long long size;
		char *slash;
		int out;

		memcpy(name, h, 100);
		name[100] = 0;
		if (sscanf((char *)h + 124, "%12llo", &size) != 1 || (h[156] != '0' && h[156]) ||
		    !safe_name(name)) {
			err = -EBADMSG;
			break;
		}
		snprintf(file, sizeof(file), "%s/%s", to, name);
		slash = strrchr(file, '/');
		*slash = 0;
		err = ds_mkdirs(file, 0755);
		*slash = '/';
		out = err ? -1 : open(file, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC,
				      0644);
		if (out < 0 && !err)
			err = -errno;
		for (unsigned long long left = (size + TAR_BLOCK - 1) / TAR_BLOCK * TAR_BLOCK;
		     !err && left;) {
			size_t want = left < sizeof(buf) ? (size_t)left : sizeof(buf);
			size_t data = size < want ? (size_t)size : want;

			if (gzread(f, buf, (unsigned)want) != (int)want ||
			    write(out, buf, data) != (ssize_t)data)
				err = -EBADMSG;
			left -= want;
			size -= data;
		}
		if (out >= 0)
			close(out);
	}
	gzclose(f);
	return err;
}

static int remove_one(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
	(void)st;
	(void)flag;
	(void)ftw;
	return remove(path);
}

bool ds_archive_use(const char *input, char *dir, size_t len, char *kallsyms, size_t klen)
{
	const char *cache = ds_cache_dir();
	char archive[PATH_MAX], tmp[PATH_MAX + 32], done[PATH_MAX + 16];
	struct stat st;
	int err;

	ds_archive_name(input, archive, sizeof(archive));
	kallsyms[0] = 0;
	if (stat(archive, &st))
		return false;
	if (!cache) {
		ds_err("%s: no cache directory to extract it into ($XDG_CACHE_HOME or $HOME)",
		       archive);
		return false;
	}
	/* One directory per archive, as it is now. */
	snprintf(dir, len, "%s/archives/%" PRIx64 "-%" PRIx64 "-%" PRIx64 "-%" PRIx64, cache,
		 (uint64_t)st.st_dev, (uint64_t)st.st_ino, (uint64_t)st.st_size,
		 (uint64_t)st.st_mtime);
	snprintf(done, sizeof(done), "%s/.complete", dir);
	if (access(done, F_OK)) {
		snprintf(tmp, sizeof(tmp), "%s.%d", dir, (int)getpid());
		err = ds_mkdirs(tmp, 0755);
		if (!err)
			err = extract(archive, tmp);
		if (!err) {
			char index[PATH_MAX + 64];

			/* Every archive record writes has its index. */
			snprintf(index, sizeof(index), "%s/index", tmp);
			if (access(index, R_OK))
				err = -EBADMSG;
		}
		if (!err) {
			char mark[PATH_MAX + 64];
			int fd;

			/* Marked whole before it is moved into place. */
			snprintf(mark, sizeof(mark), "%s/.complete", tmp);
			fd = open(mark, O_WRONLY | O_CREAT | O_CLOEXEC, 0644);
			if (fd >= 0)
				close(fd);
			if (rename(tmp, dir) && access(done, F_OK))
				err = -errno;
		}
		if (err) {
			/* Nothing half-extracted stays. */
			nftw(tmp, remove_one, 16, FTW_DEPTH | FTW_PHYS);
			ds_err("%s cannot be used: %s; report goes on without it", archive,
			       err == -EBADMSG ? "it is damaged, or not dwarfsample's"
					       : strerror(-err));
			dir[0] = 0;
			return false;
		}
	}
	snprintf(tmp, sizeof(tmp), "%s/kallsyms", dir);
	if (!access(tmp, R_OK))
		snprintf(kallsyms, klen, "%s", tmp);
	return true;
}

int ds_archive_index(const char *dir, struct pr_model *m)
{
	char path[PATH_MAX + 8], line[4200];
	FILE *f;

	snprintf(path, sizeof(path), "%s/index", dir);
	f = fopen(path, "re");
	if (!f) {
		ds_err("%s: %s", path, strerror(errno));
		return -1;
	}
	while (fgets(line, sizeof(line), f)) {
		uint8_t id[PR_BUILD_ID_MAX];
		size_t n = 0;
		char *sp = strchr(line, ' ');

		if (!sp)
			continue;
		line[strcspn(line, "\n")] = 0;
		for (char *p = line; p + 1 < sp && n < PR_BUILD_ID_MAX; p += 2)
			if (sscanf(p, "%2hhx", &id[n]) == 1)
				n++;
		if (n >= 2)
			pr_model_set_build_id(m, sp + 1, id, n);
	}
	fclose(f);
	return 0;
}

