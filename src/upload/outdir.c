/* SPDX-License-Identifier: Apache-2.0 */
/* The directory sink: a gzipped pprof per window and group, the
 * directory kept within its size and age. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/xattr.h>
#include <time.h>
#include <unistd.h>

#include "upload/upload.h"

/* What is safe in a file name: the service's letters, digits, '.', '-'
 * and '_'; the rest '_'. */
static void file_safe(const char *s, char *buf, size_t len)
{
	size_t n = 0;

	for (; *s && n + 1 < len; s++)
		buf[n++] = (*s >= 'a' && *s <= 'z') || (*s >= 'A' && *s <= 'Z') ||
			   (*s >= '0' && *s <= '9') || *s == '.' || *s == '-' || *s == '_' ? *s : '_';
	buf[n] = '\0';
	if (!n || buf[0] == '.')
		buf[0] = '_', buf[1] = '\0';
}

struct dir_file {
	char name[256];
	time_t mtime;
	uint64_t size;
};

static int by_mtime(const void *a, const void *b)
{
	const struct dir_file *x = a, *y = b;

	if (x->mtime != y->mtime)
		return x->mtime < y->mtime ? -1 : 1;
	return strcmp(x->name, y->name);
}

/*
 * Seconds since `mtime`; a time ahead of ours is no age at all.  It
 * happens: filesystems with fine-grained timestamps (Linux 6.13) stamp a
 * file written at 11.9999 s with 12 s while the coarse clock of time()
 * still says 11, and network filesystems take the server's clock.
 */
static uint64_t age_s(time_t now, time_t mtime)
{
	return now > mtime ? (uint64_t)(now - mtime) : 0;
}

/*
 * Keep the directory within `bytes` and its age bound: the oldest of our
 * files go.  What stays is noted (its bytes, its oldest file's time), for
 * after_write() to know when to look again.
 */
static void trim_dir(struct pr_uploader *u, uint64_t bytes)
{
	DIR *d = opendir(u->out_dir);
	struct dir_file *v = NULL;
	size_t nr = 0, cap = 0, i = 0;
	uint64_t total = 0;
	struct timespec ts;
	time_t now;
	struct dirent *de;

	clock_gettime(CLOCK_REALTIME, &ts);
	now = ts.tv_sec;

	while (d && (de = readdir(d))) {
		size_t len = strlen(de->d_name);
		struct stat st;

		if (len < 7 || len >= sizeof(v->name) || strcmp(de->d_name + len - 6, ".pb.gz") ||
		    fstatat(dirfd(d), de->d_name, &st, AT_SYMLINK_NOFOLLOW) || !S_ISREG(st.st_mode))
			continue;
		if (nr == cap) {
			struct dir_file *nv = realloc(v, (cap = cap ? 2 * cap : 64) * sizeof(*v));

			if (!nv)
				break;
			v = nv;
		}
		snprintf(v[nr].name, sizeof(v[nr].name), "%s", de->d_name);
		v[nr].mtime = st.st_mtime;
		v[nr].size = (uint64_t)st.st_size;
		total += v[nr++].size;
	}
	if (v)
		qsort(v, nr, sizeof(*v), by_mtime);
	for (; d && i < nr; i++) {
		if (total <= bytes && age_s(now, v[i].mtime) <= u->out_dir_max_age_s)
			break;
		if (!unlinkat(dirfd(d), v[i].name, 0) || errno == ENOENT)
			total -= v[i].size;
	}
	if (d)
		closedir(d);
	u->dir_bytes = total;
	u->dir_oldest = i < nr ? v[i].mtime : 0;
	u->dir_read = true;
	free(v);
}

/*
 * After a window of `len` bytes was written: the directory looked at
 * again only when what it is known to hold is over a bound.  Reading it
 * at every write cost a stat() per file kept, at every window: with the
 * week of windows the bounds allow (hundreds of thousands of files), the
 * writer fell behind the windows and they piled up in memory (a soak's
 * agent grew 80 MiB in 30 minutes at 14 000 files).  Trimmed under the
 * size bound by a hundredth of it and looked at when the oldest file is a
 * hundredth of the age bound past it, the directory is read about once
 * per hundredth of either; files others add or remove are seen then.
 */
static void after_write(struct pr_uploader *u, uint64_t len)
{
	struct timespec ts;
	uint64_t slack_s = u->out_dir_max_age_s / 100;

	clock_gettime(CLOCK_REALTIME, &ts);
	if (u->dir_read) {
		u->dir_bytes += len;
		if (!u->dir_oldest)
			u->dir_oldest = ts.tv_sec;
	}
	if (!u->dir_read || u->dir_bytes > u->out_dir_max_bytes ||
	    (u->dir_oldest && age_s(ts.tv_sec, u->dir_oldest) > u->out_dir_max_age_s + slack_s))
		trim_dir(u, u->out_dir_max_bytes - u->out_dir_max_bytes / 100);
}

/*
 * A window's file mode: 0600, whatever the umask.  A window names what
 * every process of the host ran, its threads, paths and containers, as
 * the agent (root) saw them: 0644, as a umask of 022 made it outside
 * systemd, let every user of the host read that.  A directory with a
 * default ACL says who else may read (setfacl -d -m g:shipper:r DIR):
 * there the ACL decides, as it does for any file made with 0666.
 */
static mode_t file_mode(const char *dir)
{
	return getxattr(dir, "system.posix_acl_default", NULL, 0) > 0 ? 0666 : 0600;
}

/* SERVICE-YYYYmmddTHHMMSSZ-SEQ.pb.gz, written whole or not at all. */
void pr__outdir_write(struct pr_uploader *u, const struct pr_window *w, const void *pprof,
		      size_t len)
{
	char service[128], stamp[32], path[4400], tmp[4500];
	time_t t = (time_t)(w->start_ns / 1000000000u);
	struct tm tm;
	FILE *f;
	bool ok;
	int fd;

	file_safe(w->service, service, sizeof(service));
	gmtime_r(&t, &tm);
	strftime(stamp, sizeof(stamp), "%Y%m%dT%H%M%SZ", &tm);
	snprintf(path, sizeof(path), "%s/%s-%s-%" PRIu64 ".pb.gz", u->out_dir, service, stamp,
		 w->seq);
	snprintf(tmp, sizeof(tmp), "%s.tmp", path);
	fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, file_mode(u->out_dir));
	f = fd < 0 ? NULL : fdopen(fd, "w");
	if (fd >= 0 && !f)
		close(fd);
	ok = f && fwrite(pprof, 1, len, f) == len;
	if (f && fclose(f))
		ok = false;
	if (ok && rename(tmp, path))
		ok = false;
	if (!ok) {
		pr__log(&u->lg, PR_LOG_ERROR, "cannot write %s: %s", path, strerror(errno));
		unlink(tmp);
		atomic_fetch_add(&u->lost, 1);
		return;
	}
	atomic_fetch_add(&u->written, 1);
	after_write(u, len);
}
