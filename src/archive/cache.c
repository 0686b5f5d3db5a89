/* SPDX-License-Identifier: Apache-2.0 */
/*
 * perf's build-id cache (prarchive.h): DIR/PATH/BUILDID/{elf,debug}, and
 * DIR/.build-id/xx/rest -> ../../PATH/BUILDID, the layout perf's tools
 * read; and the copies and debug files the cache and the archive share.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "archive/archive.h"
#include "model/model.h"

int pr__keep_copy(int in, const char *to)
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

bool pr__keep_debug_file(const char *hex, char *out, size_t size)
{
	struct pr_dirs dirs;
	bool found = false;

	/* /usr/lib/debug and ~/.debug. */
	if (pr__debug_dirs(NULL, 0, &dirs))
		return false;
	for (size_t it = 0; !found && pr__debug_file_next(&dirs, hex, &it, out, size);)
		found = !access(out, R_OK);
	pr__dirs_free(&dirs);
	return found;
}

/* A copy of the file at `from` at `to`, as pr__keep_copy(): opened
 * without waiting, and only a regular file. */
static int copy_path(const char *from, const char *to)
{
	int fd = open(from, O_RDONLY | O_NONBLOCK | O_CLOEXEC), err;
	struct stat st;

	if (fd < 0)
		return -errno;
	err = fstat(fd, &st) ? -errno : !S_ISREG(st.st_mode) ? -EINVAL : pr__keep_copy(fd, to);
	close(fd);
	return err;
}

/* perf's build-id cache: $PERF_BUILDID_DIR, else ~/.debug; NULL when
 * neither is set. */
static const char *default_dir(char *buf, size_t size)
{
	const char *env = getenv("PERF_BUILDID_DIR"), *home = getenv("HOME");

	if (env && *env)
		return env;
	if (!home || !*home || !pr__path_fmt(buf, size, "%s/.debug", home))
		return NULL;
	return buf;
}

int pr_keeper_write_cache(struct pr_keeper *k, const char *dir)
{
	char d[PATH_MAX], file[PATH_MAX + 16], link[PATH_MAX], target[PATH_MAX];
	char h[2 * PR_BUILD_ID_MAX + 1], dbg[PATH_MAX], home[PATH_MAX];
	int added = 0;

	if (!k)
		return -EINVAL;
	if (!dir && !(dir = default_dir(home, sizeof(home))))
		return -ENOENT;
	for (size_t i = 0; i < k->nr; i++) {
		const struct pr_kept *f = &k->files[i];
		const char *path = f->path[0] == '/' ? f->path + 1 : f->path;

		if (!f->sampled || !f->id_len)
			continue;
		pr__hex(h, f->id, f->id_len);
		if (!pr__path_fmt(d, sizeof(d), "%s/%s/%s", dir, path, h) ||
		    !pr__path_fmt(link, sizeof(link), "%s/.build-id/%.2s", dir, h) ||
		    pr__mkdirs(d, 0755) || pr__mkdirs(link, 0755))
			continue;
		snprintf(file, sizeof(file), "%s/elf", d);
		if (pr__keep_copy(f->fd, file))
			continue;
		snprintf(file, sizeof(file), "%s/debug", d);
		if (pr__keep_debug_file(h, dbg, sizeof(dbg)) && strcmp(dbg, file))
			copy_path(dbg, file);
		if (!pr__path_fmt(link, sizeof(link), "%s/.build-id/%.2s/%s", dir, h, h + 2) ||
		    !pr__path_fmt(target, sizeof(target), "../../%s/%s", path, h) ||
		    (symlink(target, link) && errno != EEXIST))
			continue;
		added++;
	}
	return added;
}
