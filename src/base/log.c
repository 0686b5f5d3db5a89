/* SPDX-License-Identifier: Apache-2.0 */
/* Diagnostics: the caller's log callback, error strings, sysctl reads. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/base.h"

void pr__log(const struct pr_logger *lg, enum pr_log_level level,
	     const char *fmt, ...)
{
	char msg[1024];
	va_list ap;

	if (!lg || !lg->fn)
		return;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	lg->fn(level, msg, lg->ctx);
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

const char *pr_strerror(int err, char *buf, size_t len)
{
	if (!buf || !len)
		return buf;
	if (err < 0)
		err = -err;
	switch (err) {
	case EBADMSG:
		snprintf(buf, len, "corrupt record in the sample stream");
		break;
	case ESRCH:
		snprintf(buf, len, "no such process (the target exited?)");
		break;
	default: {
		char tmp[128];

		/* The GNU strerror_r (we build with _GNU_SOURCE) may return a
		 * static string instead of filling tmp. */
		snprintf(buf, len, "%s", strerror_r(err, tmp, sizeof(tmp)));
		break;
	}
	}
	return buf;
}

bool pr__opts_valid(const void *opts, size_t user_sz, size_t known_sz)
{
	const unsigned char *p = opts;

	if (!opts)
		return true;
	if (user_sz < sizeof(size_t))
		return false;
	for (size_t i = known_sz; i < user_sz; i++)
		if (p[i])
			return false;
	return true;
}

int pr__stats_copy(void *dst, const void *src, size_t known_sz)
{
	size_t sz;

	if (!dst)
		return -EINVAL;
	memcpy(&sz, dst, sizeof(sz));
	if (sz < sizeof(size_t))
		return -EINVAL;
	if (sz > known_sz)
		sz = known_sz;
	memcpy(dst, src, sz);
	memcpy(dst, &sz, sizeof(sz));
	return 0;
}
