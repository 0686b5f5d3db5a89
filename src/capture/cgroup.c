/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Sampling a cgroup (v2): the directory its events are opened on
 * (perf_event_open with PERF_FLAG_PID_CGROUP, as perf record -G), and the
 * processes in it and below it, for the records synthesized at the start.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <mntent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/vfs.h>
#include <unistd.h>

#include "capture/capture.h"

#ifndef CGROUP2_SUPER_MAGIC
#define CGROUP2_SUPER_MAGIC 0x63677270
#endif

/* Deeper than any hierarchy systemd, Kubernetes or docker build. */
#define MAX_CGROUP_DEPTH 64

/* Where the cgroup v2 hierarchy is mounted: /sys/fs/cgroup, or
 * /sys/fs/cgroup/unified beside v1 hierarchies (systemd's hybrid layout).
 * 0, or -ENOENT. */
static int cgroup2_mount(char *buf, size_t size)
{
	FILE *f = setmntent("/proc/self/mounts", "re");
	struct mntent *m;
	int err = -ENOENT;

	while (f && err && (m = getmntent(f)))
		if (!strcmp(m->mnt_type, "cgroup2") &&
		    (size_t)snprintf(buf, size, "%s", m->mnt_dir) < size)
			err = 0;
	if (f)
		endmntent(f);
	return err;
}

int pr__cgroup_open(const char *path, const struct pr_logger *lg)
{
	char mount[PATH_MAX] = "/sys/fs/cgroup";
	struct statfs fs;
	int root = -1, fd, err;

	/* A relative path is the cgroup's in the hierarchy, as
	 * /proc/PID/cgroup names it after "0::/". */
	if (path[0] != '/') {
		if (cgroup2_mount(mount, sizeof(mount))) {
			pr__log(lg, PR_LOG_ERROR, "cgroup %s: no cgroup v2 hierarchy is mounted "
				"(sampling by cgroup needs one: mount -t cgroup2 none "
				"/sys/fs/cgroup)", path);
			return -ENOENT;
		}
		root = open(mount, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	}
	fd = openat(path[0] == '/' ? AT_FDCWD : root, path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	err = fd < 0 ? -errno : 0;
	if (root >= 0)
		close(root);
	if (fd < 0) {
		pr__log(lg, PR_LOG_ERROR, "cgroup %s: %s; give a cgroup's path in the cgroup v2 "
			"hierarchy (as /proc/PID/cgroup names it after \"0::/\", relative to %s) "
			"or its whole path", path, strerror(-err), mount);
		return err;
	}
	if (fstatfs(fd, &fs) || fs.f_type != CGROUP2_SUPER_MAGIC) {
		pr__log(lg, PR_LOG_ERROR, "%s is not a cgroup of the cgroup v2 hierarchy: "
			"give a path relative to it (%s here) or under it; cgroup v1's "
			"perf_event hierarchy is not supported", path, mount);
		close(fd);
		return -EINVAL;
	}
	return fd;
}

/* The pids of cgroup.procs in directory `dir`, then of every cgroup below
 * it, each handed to `fn` (a nonzero return stops the walk). */
static int walk(int dir, int depth, pr_proc_id_fn fn, void *arg)
{
	int fd = openat(dir, "cgroup.procs", O_RDONLY | O_CLOEXEC), ret = 0;
	FILE *procs = fd >= 0 ? fdopen(fd, "re") : NULL;
	struct dirent *de;
	DIR *d;
	long pid;

	if (fd >= 0 && !procs)
		close(fd);
	while (procs && !ret && fscanf(procs, "%ld", &pid) == 1)
		if (pid > 0 && pid <= INT_MAX)
			ret = fn((pid_t)pid, arg);
	if (procs)
		fclose(procs);
	if (ret || depth >= MAX_CGROUP_DEPTH)
		return ret;
	fd = dup(dir);
	d = fd >= 0 ? fdopendir(fd) : NULL;
	if (!d) {
		if (fd >= 0)
			close(fd);
		return 0;
	}
	while (!ret && (de = readdir(d))) {
		int sub;

		if (de->d_type != DT_DIR || de->d_name[0] == '.')
			continue;
		sub = openat(dir, de->d_name, O_RDONLY | O_DIRECTORY | O_CLOEXEC | O_NOFOLLOW);
		if (sub < 0)
			continue;     /* removed while we looked */
		ret = walk(sub, depth + 1, fn, arg);
		close(sub);
	}
	closedir(d);
	return ret;
}

int pr__cgroup_for_each(const char *path, pr_proc_id_fn fn, void *arg,
			const struct pr_logger *lg)
{
	int dir = pr__cgroup_open(path, lg), ret;

	if (dir < 0)
		return dir;
	ret = walk(dir, 0, fn, arg);
	close(dir);
	return ret;
}
