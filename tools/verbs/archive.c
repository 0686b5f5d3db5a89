/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Keeping what a capture's samples need, by build-id: the files held
 * open while record runs, the replay that finds which of them the
 * frames landed in, perf's build-id cache layout, and the archive (a
 * ustar file of the same tree) with its extraction for report.
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

#include "archive.h"
#include "cli.h"
#include "prunwind.h"

#define TAR_BLOCK 512
/* Files held open at most: the reader needs descriptors for the events
 * of threads still to come. */
#define MAX_HELD 256

/* A file held open for the end. */
struct kept {
	int fd;
	dev_t dev;
	ino_t ino;
	char *path;                  /* as the process mapped it */
	uint8_t id[PR_BUILD_ID_MAX];
	size_t id_len;               /* 0: none, or not read yet */
	bool sampled;                /* a frame landed in it */
	/* The file offsets of the frames that landed in it: the code the
	 * archive keeps of it (slim()). */
	uint64_t *offs;
	size_t nr_offs, cap_offs;
};

struct ds_keep {
	struct kept *files;
	size_t nr, cap;
	pid_t *pids;                 /* processes seen sampled */
	size_t nr_pids, cap_pids;
};

struct ds_keep *ds_keep_new(void)
{
	return calloc(1, sizeof(struct ds_keep));
}

void ds_keep_free(struct ds_keep *k)
{
	if (!k)
		return;
	for (size_t i = 0; i < k->nr; i++) {
		close(k->files[i].fd);
		free(k->files[i].path);
		free(k->files[i].offs);
	}
	free(k->files);
	free(k->pids);
	free(k);
}

static void hex(char *out, const uint8_t *id, size_t len)
{
	for (size_t i = 0; i < len; i++)
		sprintf(out + 2 * i, "%02x", id[i]);
	out[2 * len] = 0;
}

/* Room for one more held file; NULL when out of memory. */
static struct kept *add_kept(struct ds_keep *k)
{
	if (ds_reserve(&k->files, &k->cap, k->nr + 1, sizeof(*k->files), 32))
		return NULL;
	return &k->files[k->nr];
}

/* Hold the file mapped at [start, end) of `pid` open, once per file. */
static void hold(struct ds_keep *k, pid_t pid, uint64_t start, uint64_t end, const char *path)
{
	char mf[96];
	struct stat st;
	int fd;

	if (k->nr >= MAX_HELD)
		return;
	snprintf(mf, sizeof(mf), "/proc/%d/map_files/%" PRIx64 "-%" PRIx64, (int)pid, start, end);
	fd = open(mf, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return;
	if (fstat(fd, &st) || !S_ISREG(st.st_mode))
		goto drop;
	for (size_t i = 0; i < k->nr; i++)
		if (k->files[i].dev == st.st_dev && k->files[i].ino == st.st_ino)
			goto drop;
	if (!add_kept(k))
		goto drop;
	k->files[k->nr] = (struct kept){ .fd = fd, .dev = st.st_dev, .ino = st.st_ino,
					 .path = strdup(path) };
	if (!k->files[k->nr].path)
		goto drop;
	k->nr++;
	return;
drop:
	close(fd);
}

static bool seen(const struct ds_keep *k, pid_t pid)
{
	for (size_t i = 0; i < k->nr_pids; i++)
		if (k->pids[i] == pid)
			return true;
	return false;
}

/* A newly sampled process: hold every file it has mapped executable. */
static void hold_process(struct ds_keep *k, pid_t pid)
{
	char path[64], line[4352];
	FILE *f;

	if (ds_reserve(&k->pids, &k->cap_pids, k->nr_pids + 1, sizeof(*k->pids), 64))
		return;
	k->pids[k->nr_pids++] = pid;
	snprintf(path, sizeof(path), "/proc/%d/maps", (int)pid);
	f = fopen(path, "re");
	while (f && fgets(line, sizeof(line), f)) {
		unsigned long long start, end;
		char perms[8];
		int at = 0;

		if (sscanf(line, "%llx-%llx %7s %*s %*s %*s %n", &start, &end, perms, &at) < 3 ||
		    !at || perms[2] != 'x' || line[at] != '/')
			continue;
		line[strcspn(line, "\n")] = 0;
		hold(k, pid, start, end, line + at);
	}
	if (f)
		fclose(f);
}

void ds_keep_record(struct ds_keep *k, const struct pr_record *rec)
{
	if (rec->type == PR_RECORD_SAMPLE && rec->pid && !seen(k, (pid_t)rec->pid))
		hold_process(k, (pid_t)rec->pid);
	else if ((rec->type == PR_RECORD_MMAP || rec->type == PR_RECORD_MMAP2) &&
		 seen(k, (pid_t)rec->pid) && rec->u.mmap.filename &&
		 rec->u.mmap.filename[0] == '/' &&
		 (!rec->u.mmap.is_mmap2 || (rec->u.mmap.prot & PROT_EXEC)))
		hold(k, (pid_t)rec->pid, rec->u.mmap.addr, rec->u.mmap.addr + rec->u.mmap.len,
		     rec->u.mmap.filename);
}

/* ---- files ---- */

static int copy_fd(int in, const char *to)
{
	char buf[65536];
	ssize_t n = 0;
	off_t off = 0;
	int out = open(to, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644), err = 0;

	if (out < 0)
		return errno == EEXIST ? 0 : -errno;
	while ((n = pread(in, buf, sizeof(buf), off)) > 0) {
		if (write(out, buf, (size_t)n) != n) {
			err = -EIO;
			break;
		}
		off += n;
	}
	if (n < 0)
		err = -errno;
	if (close(out) && !err)
		err = -EIO;
	if (err)
		unlink(to);
	return err;
}

static int copy_path(const char *from, const char *to)
{
	int fd = open(from, O_RDONLY | O_CLOEXEC), err;

	if (fd < 0)
		return -errno;
	err = copy_fd(fd, to);
	close(fd);
	return err;
}

/* Where this machine keeps the debug file of build-id `h` (hex), if it
 * does: a debug package's, or perf's cache. */
static bool debug_file(const char *h, char *out, size_t len)
{
	const char *home = getenv("HOME");

	snprintf(out, len, "/usr/lib/debug/.build-id/%.2s/%s.debug", h, h + 2);
	if (!access(out, R_OK))
		return true;
	if (home) {
		snprintf(out, len, "%s/.debug/.build-id/%.2s/%s/debug", home, h, h + 2);
		if (!access(out, R_OK))
			return true;
	}
	return false;
}

/* ---- which files the frames landed in ---- */

static void mark(struct ds_keep *k, const uint8_t *id, size_t len, uint64_t off)
{
	for (size_t i = 0; i < k->nr; i++) {
		struct kept *f = &k->files[i];

		if (f->id_len != len || memcmp(f->id, id, len))
			continue;
		f->sampled = true;
		/* Frames repeat: most are the last one's. */
		if ((!f->nr_offs || f->offs[f->nr_offs - 1] != off) &&
		    !ds_reserve(&f->offs, &f->cap_offs, f->nr_offs + 1, sizeof(*f->offs), 64))
			f->offs[f->nr_offs++] = off;
	}
}

/* A frame in a file without a build-id: it cannot be kept by one. */
static void mark_path(struct ds_keep *k, const char *path)
{
	for (size_t i = 0; i < k->nr; i++)
		if (!k->files[i].id_len && !strcmp(k->files[i].path, path))
			k->files[i].sampled = true;
}

/* The files-hit list as a session's sink: every user frame marks the
 * file it landed in. */
static int hit(void *ctx, const struct pr_sink_sample *smp)
{
	const struct pr_stack *st = smp->st;

	for (size_t i = st->nr_kernel; i < st->nr; i++) {
		const uint8_t *id;
		size_t len = st->frames[i].dso ? pr_dso_build_id(st->frames[i].dso, &id) : 0;

		if (len)
			mark(ctx, id, len, st->frames[i].dso_ip);
		else if (st->frames[i].dso)
			mark_path(ctx, pr_dso_path(st->frames[i].dso));
	}
	return 0;
}

/* The held files' build-ids, by path, in the session's model. */
static int tell_build_ids(struct pr_model *m, void *arg)
{
	const struct ds_keep *k = arg;

	for (size_t i = 0; i < k->nr; i++)
		if (k->files[i].id_len)
			pr_model_set_build_id(m, k->files[i].path, k->files[i].id,
					      k->files[i].id_len);
	return 0;
}

/* Replay `data` against the held files (staged by build-id in `stage`)
 * and mark those the frames landed in. */
static int find_sampled(struct ds_keep *k, const char *data, const char *stage)
{
	const char *dirs[] = { stage };
	PR_OPTS(pr_model_opts, mo, .debug_dirs = dirs, .nr_debug_dirs = 1);
	PR_OPTS(pr_unwinder_opts, uo, .no_join = true);
	PR_OPTS(pr_session_opts, so, .model = &mo, .unwind = &uo, .model_setup = tell_build_ids,
		.model_setup_ctx = k);
	const struct pr_sink sink = { .sz = sizeof(sink), .ctx = k, .sample = hit };
	struct pr_file *f = pr_file_open(data, NULL);
	struct pr_session *ses = f ? pr_session_new_file(f, &so) : NULL;
	int n = -1;

	if (ses && !pr_session_add_sink(ses, &sink))
		n = pr_session_consume_file(ses);
	if (n >= 0 || n == -EBADMSG)
		n = pr_session_finish(ses, 0) ? -1 : n;
	pr_session_free(ses);
	pr_file_close(f);
	return n < 0 && n != -EBADMSG ? -1 : 0;
}

/* The vDSO of this process (every process's, with this kernel), as an
 * extra file. */
static void hold_vdso(struct ds_keep *k)
{
	FILE *f = fopen("/proc/self/maps", "re");
	char line[512];

	while (f && fgets(line, sizeof(line), f)) {
		unsigned long long start, end;

		if (strstr(line, "[vdso]") && sscanf(line, "%llx-%llx", &start, &end) == 2) {
			char tmpl[] = "/tmp/dwarfsample-vdso.XXXXXX";
			int fd = mkstemp(tmpl);

			if (fd < 0)
				break;
			unlink(tmpl);
			if (write(fd, (const void *)(uintptr_t)start, end - start) ==
			    (ssize_t)(end - start) && add_kept(k)) {
				k->files[k->nr] = (struct kept){ .fd = fd, .path = strdup("[vdso]") };
				if (k->files[k->nr].path) {
					k->nr++;
					fd = -1;
				}
			}
			if (fd >= 0)
				close(fd);
			break;
		}
	}
	if (f)
		fclose(f);
}

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

static int write_archive(struct ds_keep *k, const char *archive, bool kernel)
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
		hex(h, f->id, f->id_len);
		snprintf(name, sizeof(name), ".build-id/%.2s/%s/elf", h, h + 2);
		tar_slim(&t, name, &k->files[i], (uint64_t)st.st_size);
		if (debug_file(h, dbg, sizeof(dbg))) {
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
static int write_cache(struct ds_keep *k, const char *dir)
{
	char d[PATH_MAX], file[PATH_MAX + 16], link[PATH_MAX], target[PATH_MAX];
	char h[2 * PR_BUILD_ID_MAX + 1], dbg[PATH_MAX];
	size_t added = 0;

	for (size_t i = 0; i < k->nr; i++) {
		const struct kept *f = &k->files[i];
		const char *path = f->path[0] == '/' ? f->path + 1 : f->path;

		if (!f->sampled || !f->id_len)
			continue;
		hex(h, f->id, f->id_len);
		snprintf(d, sizeof(d), "%s/%s/%s", dir, path, h);
		snprintf(link, sizeof(link), "%s/.build-id/%.2s", dir, h);
		if (ds_mkdirs(d, 0755) || ds_mkdirs(link, 0755))
			continue;
		snprintf(file, sizeof(file), "%s/elf", d);
		if (copy_fd(f->fd, file))
			continue;
		snprintf(file, sizeof(file), "%s/debug", d);
		if (debug_file(h, dbg, sizeof(dbg)) && strcmp(dbg, file))
			copy_path(dbg, file);
		snprintf(link, sizeof(link), "%s/.build-id/%.2s/%s", dir, h, h + 2);
		snprintf(target, sizeof(target), "../../%s/%s", path, h);
		if (symlink(target, link) && errno != EEXIST)
			continue;
		added++;
	}
	return (int)added;
}

int ds_keep_finish(struct ds_keep *k, const char *data, const char *cache_dir,
		   const char *archive, bool kernel)
{
	char stage[] = "/tmp/dwarfsample-stage.XXXXXX", dir[PATH_MAX], file[PATH_MAX + 64];
	char h[2 * PR_BUILD_ID_MAX + 1];
	int ret = 0;

	hold_vdso(k);
	if (!mkdtemp(stage)) {
		ds_err("cannot make a directory in /tmp: %s", strerror(errno));
		return -1;
	}
	/* The held files by build-id, for the replay to find. */
	for (size_t i = 0; i < k->nr; i++) {
		struct kept *f = &k->files[i];
		int n = pr_build_id_read(f->fd, f->id, sizeof(f->id));

		f->id_len = n > 0 ? (size_t)n : 0;
		if (!f->id_len)
			continue;
		hex(h, f->id, f->id_len);
		snprintf(dir, sizeof(dir), "%s/.build-id/%.2s", stage, h);
		snprintf(file, sizeof(file), "%s/%s", dir, h + 2);
		if (ds_mkdirs(dir, 0700) || copy_fd(f->fd, file))
			f->id_len = 0;
	}
	if (find_sampled(k, data, stage))
		ret = -1;
	for (size_t i = 0; i < k->nr; i++)
		if (k->files[i].sampled && !k->files[i].id_len)
			ds_logf(PR_LOG_WARN, "%s has no build-id (a GNU build-id note): it cannot "
				"be kept by one, and is found by its path (Go: build with "
				"-ldflags=-B=0x and 40 hex digits; GNU ld and lld: --build-id)",
				k->files[i].path);
	if (!ret && cache_dir)
		write_cache(k, cache_dir);
	if (!ret && archive)
		ret = write_archive(k, archive, kernel);
	/* The stage, emptied. */
	for (size_t i = 0; i < k->nr; i++)
		if (k->files[i].id_len) {
			hex(h, k->files[i].id, k->files[i].id_len);
			snprintf(file, sizeof(file), "%s/.build-id/%.2s/%s", stage, h, h + 2);
			unlink(file);
			snprintf(file, sizeof(file), "%s/.build-id/%.2s", stage, h);
			rmdir(file);
		}
	snprintf(file, sizeof(file), "%s/.build-id", stage);
	rmdir(file);
	rmdir(stage);
	return ret;
}

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
