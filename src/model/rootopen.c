/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Opening a file of a process through its own root, for a profiler that
 * runs as root next to containers it does not trust.  /proc/PID/root
 * reaches the container's files, but a path walked from there follows the
 * container's absolute symlinks to the profiler's own root and lets ".."
 * climb out: a container could make the profiler read any host file and
 * show its bytes in a profile.  openat2(RESOLVE_IN_ROOT) resolves every
 * component as if the container's root were "/"; where the kernel has no
 * openat2 (before 5.6), the same is done here a component at a time.
 *
 * And every file of a target goes through pr__open_target_file(): a
 * container can put a FIFO or a device node where a library, a debug file
 * or a perf map is looked for, and a blocking open() of a FIFO waits for a
 * writer that never comes, with the profiler's worker and its shutdown
 * behind it.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <linux/openat2.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "model/model.h"

/* As the kernel's: a path may go through at most 40 links. */
#define MAX_LINKS 40

/* The component walk: `path` resolved under the directory `root` (an
 * O_PATH fd) as if it were "/". */
int pr__open_beneath(int root, const char *path, int flags)
{
	char *buf = malloc(PATH_MAX * 2), *rest, *link;
	int links = 0, cur = -1, fd = -1, err = 0;

	if (!buf)
		return -ENOMEM;
	link = buf + PATH_MAX;
	if (snprintf(buf, PATH_MAX, "%s", path) >= PATH_MAX) {
		free(buf);
		return -ENAMETOOLONG;
	}
	rest = buf;
	/* A stack of the directories walked, for "..": at most one per
	 * component of the path and its links. */
	int stack[PATH_MAX / 2];
	size_t depth = 0;

	cur = dup(root);
	if (cur < 0)
		err = -errno;
	while (!err) {
		char *slash, *name;
		struct stat st;
		int next;

		while (*rest == '/')
			rest++;
		if (!*rest) {
			/* The path named a directory: open it as asked. */
			fd = openat(cur, ".", flags | O_CLOEXEC);
			err = fd < 0 ? -errno : 0;
			break;
		}
		name = rest;
		slash = strchr(rest, '/');
		rest = slash ? slash + 1 : rest + strlen(rest);
		if (slash)
			*slash = '\0';
		if (!strcmp(name, "."))
			continue;
		if (!strcmp(name, "..")) {
			/* Never above the root. */
			if (depth) {
				close(cur);
				cur = stack[--depth];
			}
			continue;
		}
		if (fstatat(cur, name, &st, AT_SYMLINK_NOFOLLOW)) {
			err = -errno;
			break;
		}
		if (S_ISLNK(st.st_mode)) {
			ssize_t n = readlinkat(cur, name, link, PATH_MAX - 1);
			size_t left = strlen(rest);

			if (n < 0 || ++links > MAX_LINKS) {
				err = n < 0 ? -errno : -ELOOP;
				break;
			}
			link[n] = '\0';
			/* The link, then what was left, in the buffer. */
			if ((size_t)n + 1 + left + 1 > PATH_MAX) {
				err = -ENAMETOOLONG;
				break;
			}
			memmove(buf + n + 1, rest, left + 1);
			memcpy(buf, link, (size_t)n);
			buf[n] = left ? '/' : '\0';
			rest = buf;
			/* An absolute link starts again at the root. */
			if (link[0] == '/') {
				while (depth)
					close(stack[--depth]);
				close(cur);
				cur = dup(root);
				if (cur < 0)
					err = -errno;
			}
			continue;
		}
		if (!*rest && !S_ISDIR(st.st_mode)) {
			fd = openat(cur, name, flags | O_NOFOLLOW | O_CLOEXEC);
			err = fd < 0 ? -errno : 0;
			break;
		}
		next = openat(cur, name, O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
		if (next < 0) {
			err = -errno;
			break;
		}
		if (depth == sizeof(stack) / sizeof(stack[0])) {
			close(next);
			err = -ENAMETOOLONG;
			break;
		}
		stack[depth++] = cur;
		cur = next;
	}
	while (depth)
		close(stack[--depth]);
	if (cur >= 0)
		close(cur);
	free(buf);
	return err ? err : fd;
}

int pr__open_under(int root, const char *path, int flags)
{
	struct open_how how = {
		.flags = (uint64_t)(flags | O_CLOEXEC),
		.resolve = RESOLVE_IN_ROOT | RESOLVE_NO_MAGICLINKS,
	};
	int fd = (int)syscall(SYS_openat2, root, path, &how, sizeof(how));

	if (fd < 0)
		fd = errno == ENOSYS ? pr__open_beneath(root, path, flags) : -errno;
	return fd;
}

int pr__open_in_root(uint32_t pid, const char *path, int flags)
{
	char proc[64];
	int root, fd;

	snprintf(proc, sizeof(proc), "/proc/%u/root", pid);
	root = open(proc, O_PATH | O_DIRECTORY | O_CLOEXEC);
	if (root < 0)
		return -errno;
	fd = pr__open_under(root, path, flags);
	close(root);
	return fd;
}

int pr__mntns_differs(uint32_t pid)
{
	char path[64];
	struct stat theirs, ours;

	snprintf(path, sizeof(path), "/proc/%u/ns/mnt", pid);
	if (stat(path, &theirs) || stat("/proc/self/ns/mnt", &ours))
		return -errno;
	return theirs.st_ino != ours.st_ino || theirs.st_dev != ours.st_dev;
}

/* Kept only when a regular file. */
static int regular_only(int fd, const char *path, bool rooted, const struct pr_logger *lg)
{
	struct stat st;

	if (!fstat(fd, &st) && S_ISREG(st.st_mode))
		return fd;
	close(fd);
	pr__log(lg, PR_LOG_DEBUG, "%s%s: not a regular file; not read", path,
		rooted ? " (in the process's root)" : "");
	return -EINVAL;
}

int pr__open_target_file(uint32_t pid, const char *path, const struct pr_logger *lg)
{
	int fd = pid ? pr__open_in_root(pid, path, O_RDONLY | O_NONBLOCK)
		     : open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC);

	if (fd < 0)
		return pid ? fd : -errno;
	return regular_only(fd, path, pid != 0, lg);
}
