/* SPDX-License-Identifier: Apache-2.0 */
/* Small helpers every stage uses: paths, directories, hex, sysctl values. */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>

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

void pr__hex(char *out, const uint8_t *id, size_t len)
{
	static const char digits[] = "0123456789abcdef";

	for (size_t i = 0; i < len; i++) {
		out[2 * i] = digits[id[i] >> 4];
		out[2 * i + 1] = digits[id[i] & 15];
	}
	out[2 * len] = '\0';
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
