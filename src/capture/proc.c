/* SPDX-License-Identifier: Apache-2.0 */
/* Walking /proc: the processes there, and the threads of one of them;
 * the process of a thread. */
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

pid_t pr_thread_process(pid_t tid)
{
	char path[64], line[128];
	long tgid = -1;
	FILE *f;

	if (tid <= 0)
		return -EINVAL;
	/* /proc has an entry for every thread too, hidden from its listing:
	 * a thread's status names its process. */
	snprintf(path, sizeof(path), "/proc/%d/status", (int)tid);
	f = fopen(path, "re");
	if (!f)
		return errno == ENOENT ? -ESRCH : -errno;
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "Tgid: %ld", &tgid) == 1)
			break;
	fclose(f);
	return tgid > 0 && tgid <= INT_MAX ? (pid_t)tgid : -EIO;
}
