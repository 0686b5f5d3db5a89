/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Keeping what a capture's samples need, by build-id: the files held
 * open while record runs, the replay that finds which of them the
 * frames landed in (a session's sink), and perf's build-id cache
 * layout; the archive itself is archive.c's.
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
#include "prunwind.h"

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

void ds_hex(char *out, const uint8_t *id, size_t len)
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

int ds_copy_path(const char *from, const char *to)
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
bool ds_debug_file(const char *h, char *out, size_t len)
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
		ds_hex(h, f->id, f->id_len);
		snprintf(d, sizeof(d), "%s/%s/%s", dir, path, h);
		snprintf(link, sizeof(link), "%s/.build-id/%.2s", dir, h);
		if (ds_mkdirs(d, 0755) || ds_mkdirs(link, 0755))
			continue;
		snprintf(file, sizeof(file), "%s/elf", d);
		if (copy_fd(f->fd, file))
			continue;
		snprintf(file, sizeof(file), "%s/debug", d);
		if (ds_debug_file(h, dbg, sizeof(dbg)) && strcmp(dbg, file))
			ds_copy_path(dbg, file);
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
		ds_hex(h, f->id, f->id_len);
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
		ret = ds_archive_write(k, archive, kernel);
	/* The stage, emptied. */
	for (size_t i = 0; i < k->nr; i++)
		if (k->files[i].id_len) {
			ds_hex(h, k->files[i].id, k->files[i].id_len);
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

