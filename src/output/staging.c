/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The file an output is written under until it is complete: beside the
 * output, named after it, and locked for as long as its writer lives.
 *
 * A writer killed outright (SIGKILL, the OOM killer) cannot remove it.
 * The next one to write the same output does: a staging file whose lock
 * can be taken has no writer left.  The lock, not the pid in the name,
 * says so: the kernel drops it when the last descriptor of the file
 * closes, however its owner ended, and it means the same to writers in
 * other pid namespaces sharing the directory, where a pid would name
 * another process or none.  The pid is there for whoever lists the
 * directory.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/base.h"
#include "output/output.h"

/* ".NAME.dwarfsample-PID.XXXXXX": hidden, and not matched by a glob for
 * the output's extension, so a half-written profile is never opened as
 * one. */
#define STAGING_MARK ".dwarfsample-"
#define STAGING_RANDOM 6
/* The most of the output's name kept in it: the rest fits NAME_MAX. */
#define STAGING_STEM 200

/* `path`'s directory ("." for none) and its last component. */
static int split_path(const char *path, char **dir, const char **base)
{
	const char *slash = strrchr(path, '/');

	*base = slash ? slash + 1 : path;
	if (!slash)
		*dir = strdup(".");
	else if (slash == path)
		*dir = strdup("/");
	else
		*dir = strndup(path, (size_t)(slash - path));
	return *dir ? 0 : -ENOMEM;
}

/* Whether `name` is a staging file of output `base`: ".BASE" (its first
 * STAGING_STEM bytes), STAGING_MARK, a pid, '.', and mkostemp()'s six
 * characters. */
static bool staging_name(const char *name, const char *base)
{
	size_t blen = strnlen(base, STAGING_STEM), mlen = strlen(STAGING_MARK);
	const char *p;

	if (name[0] != '.' || strncmp(name + 1, base, blen) ||
	    strncmp(name + 1 + blen, STAGING_MARK, mlen))
		return false;
	p = name + 1 + blen + mlen;
	if (*p < '1' || *p > '9')
		return false;
	while (*p >= '0' && *p <= '9')
		p++;
	if (*p++ != '.' || strlen(p) != STAGING_RANDOM)
		return false;
	for (; *p; p++)
		if (!((*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') ||
		      (*p >= '0' && *p <= '9')))
			return false;
	return true;
}

/* Remove staging file `name` in `dfd` if no writer holds it: whether it
 * was removed. */
static bool remove_if_abandoned(int dfd, const char *name)
{
	struct stat held, now;
	bool removed = false;
	int fd = openat(dfd, name, O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK);

	if (fd < 0)
		return false;
	/* A lock that cannot be had (EWOULDBLOCK: a writer lives; ENOLCK,
	 * EOPNOTSUPP: a file system without locks, where nothing tells)
	 * leaves the file alone.  Holding it, the name is checked to be
	 * still this file: a writer that renamed it over its output, or a
	 * new one created under the same name, is not touched. */
	if (!fstat(fd, &held) && S_ISREG(held.st_mode) && !flock(fd, LOCK_EX | LOCK_NB) &&
	    !fstatat(dfd, name, &now, AT_SYMLINK_NOFOLLOW) && now.st_dev == held.st_dev &&
	    now.st_ino == held.st_ino)
		removed = !unlinkat(dfd, name, 0);
	close(fd);
	return removed;
}

/* Remove the staging files of `base` in `dir` that no writer holds. */
static void sweep(const char *dir, const char *base, const struct pr_logger *lg)
{
	DIR *d = opendir(dir);
	struct dirent *e;

	if (!d)
		return;
	while ((e = readdir(d)))
		if (staging_name(e->d_name, base) && remove_if_abandoned(dirfd(d), e->d_name))
			pr__log(lg, PR_LOG_INFO, "removed %s/%s, left by a run that was "
				"killed while writing %s", dir, e->d_name, base);
	closedir(d);
}

int pr__staging_create(const char *path, char **tmp, const struct pr_logger *lg)
{
	const char *base;
	char *dir;
	mode_t mask;
	int err, fd = -1;

	*tmp = NULL;
	if ((err = split_path(path, &dir, &base)))
		return err;
	sweep(dir, base, lg);
	/* A sweep that took the new file's lock before we did has removed
	 * it (its link count is 0 once the lock is ours): make another. */
	for (int tries = 0; fd < 0 && tries < 8; tries++) {
		struct stat st;

		free(*tmp);
		if (asprintf(tmp, "%s/.%.*s" STAGING_MARK "%d.XXXXXX", dir, STAGING_STEM,
			     base, (int)getpid()) < 0) {
			*tmp = NULL;
			err = -ENOMEM;
			break;
		}
		if ((fd = mkostemp(*tmp, O_CLOEXEC)) < 0) {
			err = -errno;
			break;
		}
		/* Unlocked (no locks here) it is never swept: see above. */
		if (flock(fd, LOCK_EX) && errno != ENOLCK && errno != EOPNOTSUPP &&
		    errno != EINVAL) {
			err = -errno;
			unlink(*tmp);
			close(fd);
			fd = -1;
			break;
		}
		if (fstat(fd, &st) || st.st_nlink == 0) {
			close(fd);
			fd = -1;
			err = -EAGAIN;
		}
	}
	free(dir);
	if (fd < 0) {
		free(*tmp);
		*tmp = NULL;
		return err;
	}
	/* As fopen would have made the output: 0666 less the umask. */
	mask = umask(0);
	umask(mask);
	fchmod(fd, 0666 & ~mask);
	return fd;
}
