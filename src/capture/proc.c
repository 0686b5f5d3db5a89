/* SPDX-License-Identifier: Apache-2.0 */
/* Walking /proc: the processes there, and the threads of one of them. */
#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>

#include "capture/capture.h"

int pr__proc_for_each(pid_t pid, pr_proc_id_fn fn, void *arg)
{
	char path[64];
	struct dirent *de;
	DIR *d;
	int ret = 0;

	if (pid)
		snprintf(path, sizeof(path), "/proc/%d/task", (int)pid);
	else
		snprintf(path, sizeof(path), "/proc");
	d = opendir(path);
	if (!d)
		return errno == ENOENT ? -ESRCH : -errno;
	while (!ret && (de = readdir(d))) {
		char *end;
		long id = strtol(de->d_name, &end, 10);

		/* ".", "..", and /proc's files that are not processes. */
		if (*end || end == de->d_name || id <= 0 || id > INT_MAX)
			continue;
		ret = fn((pid_t)id, arg);
	}
	closedir(d);
	return ret;
}
