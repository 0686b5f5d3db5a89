/* SPDX-License-Identifier: Apache-2.0 */
/* Diagnostics: the caller's log callback and error strings. */
#include <errno.h>
#include <stdio.h>
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
