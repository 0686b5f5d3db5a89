/* SPDX-License-Identifier: Apache-2.0 */
/* A growable list of integers: CPU numbers, thread ids. */
#include <errno.h>
#include <stdlib.h>

#include "base/base.h"

int pr__intlist_add(struct pr_intlist *l, int x)
{
	if (PR_ARRAY_RESERVE(l->v, l->cap, l->n + 1))
		return -ENOMEM;
	l->v[l->n++] = x;
	return 0;
}

bool pr__intlist_has(const struct pr_intlist *l, int x)
{
	for (size_t i = 0; i < l->n; i++)
		if (l->v[i] == x)
			return true;
	return false;
}

void pr__intlist_free(struct pr_intlist *l)
{
	free(l->v);
	memset(l, 0, sizeof(*l));
}
