/* SPDX-License-Identifier: Apache-2.0 */
/* Small helpers every stage uses: paths, directories, whole files, hex,
 * sysctl values. */
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/base.h"

bool pr__path_fmt(char *out, size_t size, const char *fmt, ...)
{
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(out, size, fmt, ap);
	va_end(ap);
	return n >= 0 && (size_t)n < size;
}

int pr__write_all(int fd, const void *buf, size_t len)
{
	const unsigned char *p = buf;

	while (len) {
		ssize_t n = write(fd, p, len);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return n < 0 ? -errno : -EIO;
		p += n;
		len -= (size_t)n;
	}
	return 0;
}

int pr__mkdirs(const char *dir, mode_t mode)
{
	char parent[4096];
	const char *slash = strrchr(dir, '/');
	int err;

	if (!mkdir(dir, mode) || errno == EEXIST)
		return 0;
	if (errno != ENOENT || !slash || slash == dir)
		return -errno;
	if (!pr__path_fmt(parent, sizeof(parent), "%.*s", (int)(slash - dir), dir))
		return -ENAMETOOLONG;
	/* The parent first, then this one again. */
	err = pr__mkdirs(parent, mode);
	if (err)
		return err;
	return mkdir(dir, mode) && errno != EEXIST ? -errno : 0;
}

/* Linux's limit of links followed in one lookup (MAXSYMLINKS): past it,
 * open() says ELOOP too. */
#define LINK_HOPS 40

int pr__link_target(const char *path, char *out, size_t size)
{
	char link[4096], next[4096];
	const char *slash;
	struct stat st;
	ssize_t n;
	bool fits;

	if (!pr__path_fmt(out, size, "%s", path))
		return -ENAMETOOLONG;
	for (int hops = 0;; hops++) {
		/* Not there (yet): the file to make. */
		if (lstat(out, &st))
			return errno == ENOENT ? 0 : -errno;
		if (!S_ISLNK(st.st_mode))
			return 0;
		if (hops == LINK_HOPS)
			return -ELOOP;
		n = readlink(out, link, sizeof(link) - 1);
		if (n < 0)
			return -errno;
		link[n] = '\0';
		/* A relative target is the link's directory's. */
		slash = strrchr(out, '/');
		if (link[0] == '/' || !slash)
			fits = pr__path_fmt(next, sizeof(next), "%s", link);
		else
			fits = pr__path_fmt(next, sizeof(next), "%.*s/%s", (int)(slash - out), out,
					    link);
		if (!fits || !pr__path_fmt(out, size, "%s", next))
			return -ENAMETOOLONG;
	}
}

/* /proc/kallsyms, the largest read, is 100 000 lines and more, formatted
 * by the kernel as they are read: read in large pieces. */
char *pr__read_all(const char *path, size_t *len)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	size_t cap = 1 << 20, n = 0;
	char *buf = NULL;
	ssize_t got;

	if (fd < 0)
		return NULL;
	for (;;) {
		if (!buf || cap - n < 65536 + 2) {
			char *b = realloc(buf, cap *= 2);

			if (!b)
				break;
			buf = b;
		}
		got = read(fd, buf + n, cap - n - 2);
		if (got <= 0)
			break;
		n += (size_t)got;
	}
	close(fd);
	if (buf) {
		buf[n] = buf[n + 1] = '\0';
		*len = n;
	}
	return buf;
}

size_t pr__utf8_decode(const unsigned char *s, uint32_t *cp)
{
	size_t n;
	uint32_t c, min;

	if (s[0] >= 0xc2 && s[0] <= 0xdf)
		n = 2, c = s[0] & 0x1f, min = 0x80;
	else if (s[0] >= 0xe0 && s[0] <= 0xef)
		n = 3, c = s[0] & 0x0f, min = 0x800;
	else if (s[0] >= 0xf0 && s[0] <= 0xf4)
		n = 4, c = s[0] & 0x07, min = 0x10000;
	else
		return 0;
	for (size_t i = 1; i < n; i++) {
		if ((s[i] & 0xc0) != 0x80)
			return 0;
		c = c << 6 | (s[i] & 0x3f);
	}
	if (c < min || c > 0x10ffff || (c >= 0xd800 && c <= 0xdfff))
		return 0;
	*cp = c;
	return n;
}

char *pr__utf8_clean(char *out, size_t size, const char *s)
{
	static const char replacement[] = "\xef\xbf\xbd";
	const unsigned char *u = (const unsigned char *)s;
	size_t k = 0;

	while (*u) {
		uint32_t cp;
		size_t n = *u < 0x80 ? 1 : pr__utf8_decode(u, &cp);
		const char *from = n ? (const char *)u : replacement;
		size_t len = n ? n : sizeof(replacement) - 1;

		if (k + len >= size)
			break;
		memcpy(out + k, from, len);
		k += len;
		u += n ? n : 1;
	}
	out[k] = '\0';
	return out;
}

void pr__hex(char *out, const uint8_t *id, size_t len)
{
	static const char digits[] = "0123456789abcdef";

	for (size_t i = 0; i < len; i++) {
		out[2 * i] = digits[id[i] >> 4];
		out[2 * i + 1] = digits[id[i] & 15];
	}
	out[2 * len] = '\0';
}

int pr__file_maps_read(struct pr_file_maps *fm)
{
	FILE *f = fopen("/proc/self/maps", "re");
	char line[4608];
	int err = 0;

	fm->nr = 0;
	if (!f)
		return -errno;
	/* lo-hi perms offset dev inode [path]; listed in address order. */
	while (!err && fgets(line, sizeof(line), f)) {
		unsigned long long lo, hi, off, inode;

		if (sscanf(line, "%llx-%llx %*s %llx %*s %llu", &lo, &hi, &off, &inode) != 4 ||
		    !inode)
			continue;
		if (PR_ARRAY_RESERVE(fm->v, fm->cap, fm->nr + 1))
			err = -ENOMEM;
		else
			fm->v[fm->nr++] = (struct pr_file_map){ lo, hi, off };
	}
	fclose(f);
	if (err)
		fm->nr = 0;
	return err;
}

bool pr__file_maps_has(const struct pr_file_maps *fm, const void *p, size_t len)
{
	return pr__file_maps_find(fm, p, len) != NULL;
}

bool pr__file_maps_whole(const struct pr_file_map *map, const void *p, size_t len)
{
	char path[64];
	struct stat st;

	snprintf(path, sizeof(path), "/proc/self/map_files/%llx-%llx",
		 (unsigned long long)map->lo, (unsigned long long)map->hi);
	return !stat(path, &st) && st.st_size >= 0 &&
	       (uint64_t)st.st_size >= map->off + ((uintptr_t)p - map->lo) + len;
}

const struct pr_file_map *pr__file_maps_find(const struct pr_file_maps *fm, const void *p,
					     size_t len)
{
	uint64_t lo = (uintptr_t)p, hi = lo + len;
	size_t a = 0, b = fm->nr;

	/* The last mapping starting at or below lo. */
	while (a < b) {
		size_t mid = a + (b - a) / 2;

		if (fm->v[mid].lo <= lo)
			a = mid + 1;
		else
			b = mid;
	}
	return a && hi >= lo && hi <= fm->v[a - 1].hi ? &fm->v[a - 1] : NULL;
}

void pr__file_maps_free(struct pr_file_maps *fm)
{
	free(fm->v);
	*fm = (struct pr_file_maps){ 0 };
}

long pr__read_sysctl(const char *path, long fallback)
{
	char buf[64];
	FILE *f = fopen(path, "re");
	long v = fallback;

	if (!f)
		return fallback;
	if (fgets(buf, sizeof(buf), f)) {
		char *end;

		errno = 0;
		v = strtol(buf, &end, 10);
		if (errno || end == buf)
			v = fallback;
	}
	fclose(f);
	return v;
}

int pr__array_reserve(void **arr, size_t size, size_t *cap, size_t need)
{
	size_t n = *cap ? *cap : 64;
	void *a;

	if (need <= *cap)
		return 0;
	while (n < need) {
		if (n > SIZE_MAX / 2)
			return -ENOMEM;
		n *= 2;
	}
	if (n > SIZE_MAX / size)
		return -ENOMEM;
	a = realloc(*arr, n * size);
	if (!a)
		return -ENOMEM;
	*arr = a;
	*cap = n;
	return 0;
}

#define HUGE_PAGE ((uintptr_t)2 << 20)

void *pr__table_new(size_t size)
{
	size_t len = size >= HUGE_PAGE ? size + HUGE_PAGE : size;
	/* A small one is filled in at once: one call zeroes its pages for
	 * less than one page fault costs. */
	unsigned char *m = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS |
				(len == size ? MAP_POPULATE : 0), -1, 0);
	uintptr_t at, end;

	if (m == MAP_FAILED)
		return NULL;
	if (len == size)
		return m;
	/* Cut the mapping to the aligned part. */
	at = ((uintptr_t)m + HUGE_PAGE - 1) & ~(HUGE_PAGE - 1);
	end = (at + size + (uintptr_t)getpagesize() - 1) & ~((uintptr_t)getpagesize() - 1);
	if (at > (uintptr_t)m)
		munmap(m, at - (uintptr_t)m);
	if ((uintptr_t)m + len > end)
		munmap((void *)end, (uintptr_t)m + len - end);
	madvise((void *)at, size, MADV_HUGEPAGE);
	return (void *)at;
}

void pr__table_free(void *table, size_t size)
{
	if (table)
		munmap(table, size);
}
