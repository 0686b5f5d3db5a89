/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The archive beside a capture read back (prarchive.h): extracted once
 * into the caller's cache directory, its member names checked so that
 * nothing lands outside it, and used as a debug directory, kernel symbols
 * and an index of build-ids by path.
 */
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>

#include "archive/archive.h"

struct pr_archive {
	struct pr_logger lg;
	char *dir;                   /* DIR/archives/ID */
	char *kallsyms;              /* DIR/archives/ID/kallsyms, or NULL */
};

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
	unsigned char h[PR_TAR_BLOCK];
	char buf[65536], name[101], file[2 * PATH_MAX];
	gzFile f = gzopen(path, "rbe");
	int err = 0;

	if (!f)
		return -errno;
	while (!err && gzread(f, h, PR_TAR_BLOCK) == PR_TAR_BLOCK && h[0]) {
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
		err = pr__mkdirs(file, 0755);
		*slash = '/';
		out = err ? -1 : open(file, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC,
				      0644);
		if (out < 0 && !err)
			err = -errno;
		for (unsigned long long left = (size + PR_TAR_BLOCK - 1) / PR_TAR_BLOCK * PR_TAR_BLOCK;
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

/* The archive at `path` extracted at `dir` unless it is already: 0 or a
 * negative errno, and nothing half-extracted left. */
static int extract_once(const char *path, const char *dir)
{
	char tmp[PATH_MAX + 32], file[PATH_MAX + 64];
	int err, fd;

	if (!pr__path_fmt(file, sizeof(file), "%s/.complete", dir) ||
	    !pr__path_fmt(tmp, sizeof(tmp), "%s.%d", dir, (int)getpid()))
		return -ENAMETOOLONG;
	if (!access(file, F_OK))
		return 0;
	err = pr__mkdirs(tmp, 0755);
	if (!err)
		err = extract(path, tmp);
	/* Every archive pr_keeper_write_archive() writes has its index. */
	if (!err && (!pr__path_fmt(file, sizeof(file), "%s/index", tmp) || access(file, R_OK)))
		err = -EBADMSG;
	if (!err) {
		/* Marked whole before it is moved into place. */
		snprintf(file, sizeof(file), "%s/.complete", tmp);
		fd = open(file, O_WRONLY | O_CREAT | O_CLOEXEC, 0644);
		if (fd >= 0)
			close(fd);
		snprintf(file, sizeof(file), "%s/.complete", dir);
		if (rename(tmp, dir) && access(file, F_OK))
			err = -errno;
	}
	if (err)
		nftw(tmp, remove_one, 16, FTW_DEPTH | FTW_PHYS);
	return err;
}

struct pr_archive *pr_archive_open(const char *path, const char *dir,
				   const struct pr_archive_opts *opts)
{
	struct pr_archive *a;
	char where[PATH_MAX], kallsyms[PATH_MAX + 16];
	struct stat st;
	int err;

	if (!path || !PR_OPTS_VALID(opts)) {
		errno = EINVAL;
		return NULL;
	}
	if (stat(path, &st)) {
		errno = ENOENT;
		return NULL;
	}
	if (!dir) {
		errno = EINVAL;
		return NULL;
	}
	/* One directory per archive, as it is now. */
	if (!pr__path_fmt(where, sizeof(where),
			  "%s/archives/%" PRIx64 "-%" PRIx64 "-%" PRIx64 "-%" PRIx64, dir,
			  (uint64_t)st.st_dev, (uint64_t)st.st_ino, (uint64_t)st.st_size,
			  (uint64_t)st.st_mtime)) {
		errno = ENAMETOOLONG;
		return NULL;
	}
	err = extract_once(path, where);
	if (err) {
		errno = -err;
		return NULL;
	}
	a = calloc(1, sizeof(*a));
	if (!a || !(a->dir = strdup(where)) ||
	    (pr__path_fmt(kallsyms, sizeof(kallsyms), "%s/kallsyms", where) &&
	     !access(kallsyms, R_OK) && !(a->kallsyms = strdup(kallsyms)))) {
		pr_archive_close(a);
		errno = ENOMEM;
		return NULL;
	}
	a->lg = (struct pr_logger){ PR_OPTS_GET(opts, log, NULL), PR_OPTS_GET(opts, log_ctx, NULL) };
	return a;
}

void pr_archive_close(struct pr_archive *a)
{
	if (a) {
		free(a->dir);
		free(a->kallsyms);
	}
	free(a);
}

const char *pr_archive_dir(const struct pr_archive *a)
{
	return a ? a->dir : NULL;
}

const char *pr_archive_kallsyms(const struct pr_archive *a)
{
	return a ? a->kallsyms : NULL;
}

int pr_archive_index(const struct pr_archive *a, struct pr_model *m)
{
	char path[PATH_MAX + 8], line[4200];
	FILE *f;
	int err;

	if (!a || !m)
		return -EINVAL;
	snprintf(path, sizeof(path), "%s/index", a->dir);
	f = fopen(path, "re");
	if (!f) {
		err = -errno;
		pr__log(&a->lg, PR_LOG_ERROR, "%s: %s", path, strerror(-err));
		return err;
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
