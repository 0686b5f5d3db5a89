/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The two halves of growing structs across versions: options a caller
 * passes in (PR_OPTS_VALID) and stats it reads out (pr__stats_copy).
 */
#include <errno.h>
#include <string.h>

#include "base/base.h"

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
