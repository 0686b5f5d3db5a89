/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The files a capture's samples need (prarchive.h): held open while the
 * capture is recorded, then found by a replay of it -- a session with a
 * sink listing the files the frames landed in.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "archive/archive.h"
#include "model/model.h"

/* Files held open at most: the reader needs descriptors for the events
 * of threads still to come. */
#define MAX_HELD 256

struct pr_keeper *pr_keeper_new(const struct pr_keeper_opts *opts)
{
	struct pr_keeper *k;

	if (!PR_OPTS_VALID(opts)) {
		errno = EINVAL;
		return NULL;
	}
	k = calloc(1, sizeof(*k));
	if (!k) {
		errno = ENOMEM;
		return NULL;
	}
	k->lg = (struct pr_logger){ PR_OPTS_GET(opts, log, NULL), PR_OPTS_GET(opts, log_ctx, NULL) };
	return k;
}

void pr_keeper_free(struct pr_keeper *k)
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

/* Hold `fd`, the file at `path`, as one more: 0, or -ENOMEM with `fd`
 * still the caller's. */
static int add_held(struct pr_keeper *k, int fd, const struct stat *st, const char *path)
{
	char *copy;

	if (PR_ARRAY_RESERVE(k->files, k->cap, k->nr + 1) || !(copy = strdup(path)))
		return -ENOMEM;
	k->files[k->nr++] = (struct pr_kept){ .fd = fd, .dev = st ? st->st_dev : 0,
					      .ino = st ? st->st_ino : 0, .path = copy };
	return 0;
}

/* Hold the file mapped at [start, end) of `pid` open, once per file. */
static int hold(struct pr_keeper *k, pid_t pid, uint64_t start, uint64_t end, const char *path)
{
	char mf[96];
	struct stat st;
	int fd;

	if (k->nr >= MAX_HELD)
		return 0;
	snprintf(mf, sizeof(mf), "/proc/%d/map_files/%" PRIx64 "-%" PRIx64, (int)pid, start, end);
	fd = open(mf, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return 0;
	if (fstat(fd, &st) || !S_ISREG(st.st_mode))
		goto drop;
	for (size_t i = 0; i < k->nr; i++)
		if (k->files[i].dev == st.st_dev && k->files[i].ino == st.st_ino)
			goto drop;
	if (!add_held(k, fd, &st, path))
		return 0;
	close(fd);
	return -ENOMEM;
drop:
	close(fd);
	return 0;
}

static bool seen(const struct pr_keeper *k, pid_t pid)
{
	for (size_t i = 0; i < k->nr_pids; i++)
		if (k->pids[i] == pid)
			return true;
	return false;
}

/* A newly sampled process: hold every file it has mapped executable. */
static int hold_process(struct pr_keeper *k, pid_t pid)
{
	char path[64], line[4352];
	FILE *f;
	int err = 0;

	if (PR_ARRAY_RESERVE(k->pids, k->cap_pids, k->nr_pids + 1))
		return -ENOMEM;
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
		if (hold(k, pid, start, end, line + at))
			err = -ENOMEM;
	}
	if (f)
		fclose(f);
	return err;
}

int pr_keeper_record(struct pr_keeper *k, const struct pr_record *rec)
{
	if (!k || !rec)
		return -EINVAL;
	if (rec->type == PR_RECORD_SAMPLE && rec->pid && !seen(k, (pid_t)rec->pid))
		return hold_process(k, (pid_t)rec->pid);
	if ((rec->type == PR_RECORD_MMAP || rec->type == PR_RECORD_MMAP2) &&
	    seen(k, (pid_t)rec->pid) && rec->u.mmap.filename &&
	    rec->u.mmap.filename[0] == '/' &&
	    (!rec->u.mmap.is_mmap2 || (rec->u.mmap.prot & PROT_EXEC)))
		return hold(k, (pid_t)rec->pid, rec->u.mmap.addr,
			    rec->u.mmap.addr + rec->u.mmap.len, rec->u.mmap.filename);
	return 0;
}

/* The vDSO of this process (every process's, with this kernel), as an
 * extra file. */
static void hold_vdso(struct pr_keeper *k)
{
	char tmpl[] = "/tmp/dwarfsample-vdso.XXXXXX";
	const void *image;
	size_t size;
	int fd;

	if (pr__vdso_image(&image, &size) || (fd = mkstemp(tmpl)) < 0)
		return;
	unlink(tmpl);
	if (write(fd, image, size) != (ssize_t)size || add_held(k, fd, NULL, "[vdso]"))
		close(fd);
}

/* ---- which files the frames landed in ---- */

static void mark(struct pr_keeper *k, const uint8_t *id, size_t len, uint64_t off)
{
	for (size_t i = 0; i < k->nr; i++) {
		struct pr_kept *f = &k->files[i];

		if (f->id_len != len || memcmp(f->id, id, len))
			continue;
		f->sampled = true;
		/* Frames repeat: most are the last one's. */
		if ((!f->nr_offs || f->offs[f->nr_offs - 1] != off) &&
		    !PR_ARRAY_RESERVE(f->offs, f->cap_offs, f->nr_offs + 1))
			f->offs[f->nr_offs++] = off;
	}
}

/* A frame in a file without a build-id: it cannot be kept by one. */
static void mark_path(struct pr_keeper *k, const char *path)
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
	const struct pr_keeper *k = arg;

	for (size_t i = 0; i < k->nr; i++)
		if (k->files[i].id_len)
			pr_model_set_build_id(m, k->files[i].path, k->files[i].id,
					      k->files[i].id_len);
	return 0;
}

/* Replay `data` against the held files (staged by build-id in `stage`)
 * and mark those the frames landed in.  Its messages are the verbs': a
 * replay of the capture says nothing of its own. */
static int find_sampled(struct pr_keeper *k, const char *data, const char *stage)
{
	const char *dirs[] = { stage };
	PR_OPTS(pr_model_opts, mo, .debug_dirs = dirs, .nr_debug_dirs = 1);
	PR_OPTS(pr_unwinder_opts, uo, .no_join = true);
	PR_OPTS(pr_session_opts, so, .model = &mo, .unwind = &uo, .model_setup = tell_build_ids,
		.model_setup_ctx = k);
	const struct pr_sink sink = { .sz = sizeof(sink), .ctx = k, .sample = hit };
	struct pr_file *f = pr_file_open(data, NULL);
	struct pr_session *ses = f ? pr_session_new_file(f, &so) : NULL;
	int n;

	if (!ses) {
		n = errno ? -errno : -ENOMEM;
		pr_file_close(f);
		return n;
	}
	n = pr_session_add_sink(ses, &sink);
	if (!n)
		n = pr_session_consume_file(ses);
	/* A damaged capture is replayed as far as it can be read. */
	if (n >= 0 || n == -EBADMSG) {
		int err = pr_session_finish(ses, 0);

		n = err ? err : 0;
	}
	pr_session_free(ses);
	pr_file_close(f);
	return n < 0 ? n : 0;
}

/* The held files by build-id under `stage`, for the replay to find
 * (`undo`: removed again). */
static void stage_files(struct pr_keeper *k, const char *stage, bool undo)
{
	char dir[PATH_MAX], file[PATH_MAX + 64], h[2 * PR_BUILD_ID_MAX + 1];

	for (size_t i = 0; i < k->nr; i++) {
		struct pr_kept *f = &k->files[i];
		size_t n = 0;

		if (!undo)
			f->id_len = pr__build_id_fd(f->fd, f->id, &n) ? 0 : n;
		if (!f->id_len)
			continue;
		pr__hex(h, f->id, f->id_len);
		snprintf(dir, sizeof(dir), "%s/.build-id/%.2s", stage, h);
		snprintf(file, sizeof(file), "%s/%s", dir, h + 2);
		if (undo) {
			unlink(file);
			rmdir(dir);
		} else if (pr__mkdirs(dir, 0700) || pr__keep_copy(f->fd, file)) {
			f->id_len = 0;
		}
	}
	if (undo) {
		snprintf(dir, sizeof(dir), "%s/.build-id", stage);
		rmdir(dir);
		rmdir(stage);
	}
}

int pr_keeper_replay(struct pr_keeper *k, const char *path)
{
	char stage[] = "/tmp/dwarfsample-stage.XXXXXX";
	int err;

	if (!k || !path)
		return -EINVAL;
	hold_vdso(k);
	if (!mkdtemp(stage)) {
		err = -errno;
		pr__log(&k->lg, PR_LOG_ERROR, "cannot make a directory in /tmp: %s", strerror(-err));
		return err;
	}
	stage_files(k, stage, false);
	err = find_sampled(k, path, stage);
	stage_files(k, stage, true);
	for (size_t i = 0; i < k->nr; i++)
		if (k->files[i].sampled && !k->files[i].id_len)
			pr__log(&k->lg, PR_LOG_WARN, "%s has no build-id (a GNU build-id note): it "
				"cannot be kept by one, and is found by its path (Go: build with "
				"-ldflags=-B=0x and 40 hex digits; GNU ld and lld: --build-id)",
				k->files[i].path);
	return err;
}
