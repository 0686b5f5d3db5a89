/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Spooled requests: NNNNNNNNNNNNNNNNNNNN.req, numbered in the order they
 * came (the numbers go on from the highest found at start), each written
 * to a temporary name and renamed, so that a crash leaves whole files or
 * none.  A file is a header of four lines — the format's name, the
 * target, the content type and encoding — then "tries N" when the
 * backend answered it with a fault N times (so that a file without it is
 * one an older version reads), an empty line, and the body.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "upload/upload.h"

#define MAGIC "dwarfsample-spool 1"
/* A request the agent wrote is a window's profile: far below this. */
#define MAX_FILE ((off_t)1 << 30)

struct entry {
	uint64_t seq;
	uint64_t size;
};

struct pr__spool {
	char *dir;
	const struct pr_logger *lg;
	uint64_t max_bytes, bytes;
	struct entry *v;             /* oldest first, from `head` */
	size_t head, nr, cap;
	uint64_t next_seq;
};

void pr__request_clear(struct pr__request *r)
{
	free(r->target);
	free(r->content_type);
	free(r->content_encoding);
	free(r->body);
	memset(r, 0, sizeof(*r));
}

int pr__request_copy(struct pr__request *to, const struct pr__request *r)
{
	memset(to, 0, sizeof(*to));
	if (!(to->target = strdup(r->target)) || !(to->content_type = strdup(r->content_type)) ||
	    !(to->content_encoding = strdup(r->content_encoding)) ||
	    !(to->body = malloc(r->len ? r->len : 1))) {
		pr__request_clear(to);
		return -ENOMEM;
	}
	memcpy(to->body, r->body, r->len);
	to->len = r->len;
	to->tries = r->tries;
	return 0;
}

static void entry_path(const struct pr__spool *s, uint64_t seq, char *buf, size_t len)
{
	snprintf(buf, len, "%s/%020" PRIu64 ".req", s->dir, seq);
}

static int cmp_entry(const void *a, const void *b)
{
	uint64_t x = ((const struct entry *)a)->seq, y = ((const struct entry *)b)->seq;

	return x < y ? -1 : x > y;
}

static int append(struct pr__spool *s, uint64_t seq, uint64_t size)
{
	if (s->head + s->nr == s->cap) {
		if (s->head) {
			memmove(s->v, s->v + s->head, s->nr * sizeof(*s->v));
			s->head = 0;
		} else {
			size_t cap = s->cap ? 2 * s->cap : 64;
			struct entry *v = realloc(s->v, cap * sizeof(*v));

			if (!v)
				return -ENOMEM;
			s->v = v;
			s->cap = cap;
		}
	}
	s->v[s->head + s->nr++] = (struct entry){ .seq = seq, .size = size };
	s->bytes += size;
	return 0;
}

struct pr__spool *pr__spool_open(const char *dir, uint64_t max_bytes, const struct pr_logger *lg)
{
	struct pr__spool *s = calloc(1, sizeof(*s));
	struct dirent *de;
	DIR *d;
	int err;

	if (!s || !(s->dir = strdup(dir))) {
		free(s);
		pr__log(lg, PR_LOG_ERROR, "out of memory");
		errno = ENOMEM;
		return NULL;
	}
	s->lg = lg;
	s->max_bytes = max_bytes;
	err = pr__mkdirs(dir, 0700);
	d = err ? NULL : opendir(dir);
	if (!d) {
		err = err ? -err : errno;
		pr__log(lg, PR_LOG_ERROR, "cannot use %s as a spool: %s; give another "
			PR_LOG_SETTING_SPOOL_DIR, dir, strerror(err));
		pr__spool_close(s);
		errno = err;
		return NULL;
	}
	while ((de = readdir(d))) {
		char path[4096], *end;
		uint64_t seq = strtoull(de->d_name, &end, 10);
		struct stat st;

		if (end == de->d_name + 20 && !strcmp(end, ".req.tmp")) {
			/* Left by a run that stopped while writing it. */
			unlinkat(dirfd(d), de->d_name, 0);
			continue;
		}
		if (end != de->d_name + 20 || strcmp(end, ".req"))
			continue;
		entry_path(s, seq, path, sizeof(path));
		if (stat(path, &st) || !S_ISREG(st.st_mode) || append(s, seq, (uint64_t)st.st_size))
			continue;
		if (seq >= s->next_seq)
			s->next_seq = seq + 1;
	}
	closedir(d);
	if (s->nr > 1)
		qsort(s->v, s->nr, sizeof(*s->v), cmp_entry);
	return s;
}

void pr__spool_close(struct pr__spool *s)
{
	if (!s)
		return;
	free(s->v);
	free(s->dir);
	free(s);
}

size_t pr__spool_count(const struct pr__spool *s)
{
	return s->nr;
}

void pr__spool_pop(struct pr__spool *s)
{
	char path[4096];

	if (!s->nr)
		return;
	entry_path(s, s->v[s->head].seq, path, sizeof(path));
	unlink(path);
	s->bytes -= s->v[s->head].size;
	s->head++;
	s->nr--;
}

uint64_t pr__spool_head(const struct pr__spool *s)
{
	return s->nr ? s->v[s->head].seq : UINT64_MAX;
}

int pr__spool_push(struct pr__spool *s, const struct pr__request *r, uint64_t *dropped)
{
	char path[4096], tmp[4200], *head = NULL;
	char tries[32] = "";
	int len;

	if (r->tries)
		snprintf(tries, sizeof(tries), "tries %u\n", r->tries);
	len = asprintf(&head, "%s\n%s\n%s\n%s\n%s\n", MAGIC, r->target, r->content_type,
		       r->content_encoding, tries);
	uint64_t size;
	int fd, err;

	if (len < 0)
		return -ENOMEM;
	size = (uint64_t)len + r->len;
	entry_path(s, s->next_seq, path, sizeof(path));
	snprintf(tmp, sizeof(tmp), "%s.tmp", path);
	fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	err = fd < 0 ? -errno : pr__write_all(fd, head, (size_t)len);
	if (!err)
		err = pr__write_all(fd, r->body, r->len);
	if (fd >= 0 && close(fd) && !err)
		err = -errno;
	free(head);
	if (!err && rename(tmp, path))
		err = -errno;
	if (!err && (err = append(s, s->next_seq, size)))
		unlink(path);
	if (err) {
		unlink(tmp);
		return err;
	}
	s->next_seq++;
	/* The oldest give way; the new one stays even alone over the bound,
	 * as the one window there is. */
	while (s->bytes > s->max_bytes && s->nr > 1) {
		pr__spool_pop(s);
		(*dropped)++;
	}
	return 0;
}

/* The next line of [*p, end) as a new string; NULL at the end. */
static char *take_line(const char **p, const char *end)
{
	const char *nl = memchr(*p, '\n', (size_t)(end - *p));
	char *line;

	if (!nl)
		return NULL;
	line = strndup(*p, (size_t)(nl - *p));
	*p = nl + 1;
	return line;
}

static int parse(const char *buf, size_t len, struct pr__request *r)
{
	const char *p = buf, *end = buf + len;
	char *magic = take_line(&p, end);
	bool ok = magic && !strcmp(magic, MAGIC);

	free(magic);
	if (!ok || !(r->target = take_line(&p, end)) || !(r->content_type = take_line(&p, end)) ||
	    !(r->content_encoding = take_line(&p, end)))
		return -EBADMSG;
	if (end - p > 6 && !memcmp(p, "tries ", 6)) {
		char *line = take_line(&p, end), *e = NULL;
		unsigned long n = line ? strtoul(line + 6, &e, 10) : 0;
		bool good = line && e != line + 6 && !*e && n < 1000000;

		free(line);
		if (!good)
			return -EBADMSG;
		r->tries = (unsigned)n;
	}
	if (p >= end || *p != '\n')
		return -EBADMSG;
	p++;
	r->len = (size_t)(end - p);
	r->body = malloc(r->len ? r->len : 1);
	if (!r->body)
		return -ENOMEM;
	memcpy(r->body, p, r->len);
	return 0;
}

int pr__spool_peek(struct pr__spool *s, struct pr__request *r, uint64_t *dropped)
{
	while (s->nr) {
		char path[4096];
		struct stat st;
		char *buf = NULL;
		ssize_t n = -1;
		int fd, err = -EBADMSG;

		entry_path(s, s->v[s->head].seq, path, sizeof(path));
		fd = open(path, O_RDONLY | O_CLOEXEC);
		if (fd >= 0 && !fstat(fd, &st) && S_ISREG(st.st_mode) && st.st_size < MAX_FILE &&
		    (buf = malloc((size_t)st.st_size + 1)))
			n = read(fd, buf, (size_t)st.st_size);
		if (fd >= 0)
			close(fd);
		memset(r, 0, sizeof(*r));
		if (n >= 0 && n == st.st_size)
			err = parse(buf, (size_t)n, r);
		free(buf);
		if (!err)
			return 1;
		if (err == -ENOMEM) {
			pr__request_clear(r);
			return err;
		}
		pr__request_clear(r);
		pr__log(s->lg, PR_LOG_WARN, "%s is not a whole spooled request; removed", path);
		pr__spool_pop(s);
		(*dropped)++;
	}
	return 0;
}

int pr__spool_requeue(struct pr__spool *s, const struct pr__request *r)
{
	uint64_t dropped = 0, old;
	int err;

	if (!s->nr)
		return -ENOENT;
	/* Written behind the others before the oldest goes: a crash between
	 * the two leaves it twice, not nowhere.  Its old copy may not count
	 * against the bound; if it still went (a request alone over the
	 * bound), it is gone already. */
	old = s->v[s->head].size;
	s->max_bytes += old;
	err = pr__spool_push(s, r, &dropped);
	s->max_bytes -= old;
	if (!err && !dropped)
		pr__spool_pop(s);
	return err;
}
