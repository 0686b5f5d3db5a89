/* SPDX-License-Identifier: Apache-2.0 */
/*
 * A process's jitdump, found and opened: a runtime writing one maps it
 * once, executable, as a marker, so the process's mappings say where it
 * is (node writes ./jit-PID.dump, CPython /tmp/jit-PID.dump, the JVM's
 * agent a directory of its own).  perf finds it the same way, by the file
 * name jit-PID.dump of the sample's pid; in a container the PID is the one
 * the process has in its own pid namespace, so any jit-N.dump it mapped is
 * taken.  The symbolizer names JIT code from it, the unwinder unwinds
 * through it by its unwind information.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include "model/jitdump.h"
#include "model/model.h"

/* Whether `path` names a jitdump, "jit-N.dump" in any directory: N is
 * `pid` (2), or another number (1): the process's pid in its own pid
 * namespace (a container's), which is what it knows itself by; else 0. */
static int jitdump_name(const char *path, uint32_t pid)
{
	const char *base = strrchr(path, '/');
	unsigned long n;
	char *end;

	base = base ? base + 1 : path;
	if (strncmp(base, "jit-", 4) || base[4] < '0' || base[4] > '9')
		return 0;
	n = strtoul(base + 4, &end, 10);
	if (strcmp(end, ".dump"))
		return 0;
	return n == pid ? 2 : 1;
}

const struct pr_dso *pr__jitdump_marker(const struct pr_proc *p, uint32_t pid)
{
	const struct pr_dso *found = NULL;
	int best = 0;

	for (size_t i = 0; i < p->nr; i++) {
		int how = p->maps[i].dso && !p->maps[i].dso->anon ?
			  jitdump_name(p->maps[i].dso->path, pid) : 0;

		if (how > best) {
			best = how;
			found = p->maps[i].dso;
		}
	}
	return found;
}

int pr__jitdump_open(uint32_t pid, bool live, const char *path, uint32_t maj, uint32_t min,
		     uint64_t ino, const struct pr_logger *lg)
{
	char proc[32];
	struct stat st, owner;
	int fd, err = 0;

	snprintf(proc, sizeof(proc), "/proc/%u", pid);
	fd = pr__open_target_file(live ? pid : 0, path, lg);
	if (fd < 0 && live && fd != -EINVAL && stat(proc, &owner)) {
		fd = pr__open_target_file(0, path, lg);
		if (fd >= 0 && (fstat(fd, &st) || major(st.st_dev) != maj ||
				minor(st.st_dev) != min || st.st_ino != ino)) {
			close(fd);
			fd = -ENOENT;
		}
		return fd;
	}
	if (fd < 0)
		err = fd;
	else if (live && (fstat(fd, &st) ||
			  (st.st_uid && (stat(proc, &owner) || owner.st_uid != st.st_uid))))
		err = -EPERM;
	if (!err)
		return fd;
	if (fd >= 0)
		close(fd);
	pr__log(lg, PR_LOG_DEBUG, "jitdump %s of process %u not read: %s", path, pid,
		err == -EPERM ? "owned by neither the process's user nor root" : strerror(-err));
	return err;
}
