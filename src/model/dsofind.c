/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Where the file behind a mapping may be found, for the unwinder and the
 * symbolizer alike: for a process running here, the very file it mapped
 * (/proc/PID/map_files: even deleted or replaced since) and the file inside
 * its root (containers); then the file by build-id in each debug directory,
 * in the layouts debuginfo stores, fixtures and perf's cache use; last the
 * path it was mapped from (for a process in another mount namespace, the
 * build-id directories are those inside its root, and there is no last).  Callers check each candidate (its build-id) and
 * stop at the first they take.  And where a debug file may be, by build-id.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include "model/model.h"

int pr__debug_dirs(const char *const *extra, size_t nr_extra, struct pr_dirs *out)
{
	const char *home = getenv("HOME");

	out->nr = 0;
	out->v = calloc(nr_extra + 2, sizeof(char *));
	if (!out->v)
		return -1;
	/* Absolute, as the caller meant them when it gave them: libdwfl takes
	 * a relative directory as relative to each file. */
	for (size_t i = 0; i < nr_extra; i++)
		if (extra[i] && !(out->v[out->nr++] = realpath(extra[i], NULL)) &&
		    (errno == ENOMEM || !(out->v[out->nr - 1] = strdup(extra[i]))))
			goto fail;
	if (!(out->v[out->nr++] = strdup("/usr/lib/debug")))
		goto fail;
	if (home && home[0]) {
		char path[4096];

		if (pr__path_fmt(path, sizeof(path), "%s/.debug", home) &&
		    !(out->v[out->nr++] = strdup(path)))
			goto fail;
	}
	return 0;
fail:
	pr__dirs_free(out);
	return -1;
}

void pr__dirs_free(struct pr_dirs *d)
{
	for (size_t i = 0; d->v && i < d->nr; i++)
		free(d->v[i]);
	free(d->v);
	d->v = NULL;
	d->nr = 0;
}

/* Offer the file at `path` (inside process `root`'s root when not 0), if
 * it opens as a regular file. */
static int offer(uint32_t root, const char *path,
		 int (*try)(int fd, const char *path, void *arg), void *arg,
		 const char *name)
{
	int fd = pr__open_target_file(root, path, NULL);

	return fd < 0 ? 0 : try(fd, name ? name : path, arg);
}

/* The host's file at d's path, only when it is the very file mapped: its
 * device and inode are the mapping's, or (checked by `try`) its build-id
 * is d's. */
static int offer_same(const struct pr_dso *d,
		      int (*try)(int fd, const char *path, void *arg), void *arg)
{
	int fd = pr__open_target_file(0, d->path, NULL);
	struct stat st;

	if (fd < 0)
		return 0;
	if (!d->build_id_size && (fstat(fd, &st) || !d->ino || st.st_ino != d->ino ||
				  st.st_dev != makedev(d->maj, d->min))) {
		close(fd);
		return 0;
	}
	return try(fd, d->path, arg);
}

int pr__dso_find(const struct pr_dso_query *q,
		 int (*try)(int fd, const char *path, void *arg), void *arg)
{
	const struct pr_dso *d = q->dso;
	char cand[4096], hexid[2 * PR_BUILD_ID_MAX + 1], proc[4200];
	int ret;

	if (q->live && q->map) {
		if (pr__path_fmt(cand, sizeof(cand), "/proc/%u/map_files/%llx-%llx", q->pid,
				 (unsigned long long)q->map->start,
				 (unsigned long long)q->map->end) &&
		    (ret = offer(0, cand, try, arg, NULL)))
			return ret;
	}
	/* The path as the process sees it, never outside its root. */
	if (q->live && d->path[0] == '/' &&
	    pr__path_fmt(cand, sizeof(cand), "/proc/%u/root%s", q->pid, d->path) &&
	    (ret = offer(q->pid, d->path, try, arg, cand)))
		return ret;
	if (d->build_id_size) {
		pr__hex(hexid, d->build_id, d->build_id_size);
		for (size_t i = 0; i < q->dirs->nr; i++) {
			static const char *const layouts[] = {
				"%s/.build-id/%.2s/%s",         /* a debuginfo store's */
				"%s/%.2s/%s",                   /* a flat one */
				"%s/.build-id/%.2s/%s/elf",     /* perf's ~/.debug */
			};

			for (size_t l = 0; l < PR_ARRAY_SIZE(layouts); l++) {
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wformat-nonliteral"
				bool fits = pr__path_fmt(cand, sizeof(cand), layouts[l], q->dirs->v[i],
							 hexid, hexid + 2);
#pragma GCC diagnostic pop
				/* A foreign process's debug directories are its
				 * own, inside its root. */
				if (fits && q->root &&
				    !pr__path_fmt(proc, sizeof(proc), "/proc/%u/root%s", q->root, cand))
					continue;
				if (fits && (ret = offer(q->root, cand, try, arg,
							 q->root ? proc : NULL)))
					return ret;
			}
		}
	}
	/* Never the host's file for a process with a root of its own: the
	 * same path there is another file. */
	if (d->path[0] == '/' && !q->root)
		return q->unsure ? offer_same(d, try, arg) : offer(0, d->path, try, arg, NULL);
	return 0;
}

bool pr__debug_file_next(const struct pr_dirs *dirs, const char *hex, size_t *it, char *out,
			 size_t size)
{
	static const char *const layouts[] = {
		"%s/.build-id/%.2s/%s.debug",   /* a debug package's */
		"%s/.build-id/%.2s/%s/debug",   /* perf's build-id cache's, archives' */
	};
	const size_t nr = PR_ARRAY_SIZE(layouts);

	while (*it < dirs->nr * nr) {
		size_t i = (*it)++;
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wformat-nonliteral"
		bool fits = pr__path_fmt(out, size, layouts[i % nr], dirs->v[i / nr], hex, hex + 2);
#pragma GCC diagnostic pop

		if (fits)
			return true;
	}
	return false;
}
