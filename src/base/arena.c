/* SPDX-License-Identifier: Apache-2.0 */
/*
 * An arena: many small allocations that live as long as their owner and
 * are freed together (the symbolizer's results, names and lines).
 */
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "base/base.h"

struct pr_arena_chunk {
	struct pr_arena_chunk *next;
	size_t used, cap;
	max_align_t data[];
};

void *pr__arena_alloc(struct pr_arena *a, size_t n)
{
	struct pr_arena_chunk *c = a->head;

	n = (n + 15) & ~(size_t)15;
	if (!c || c->cap - c->used < n) {
		/* Chunks grow with the arena, so that the many small ones (a
		 * symbolizer's per file) cost little and a large one few
		 * mallocs: 4 KiB doubling to 64 KiB. */
		size_t cap = a->bytes < 4096 ? 4096 : a->bytes < 65536 ? a->bytes : 65536;

		if (cap < n)
			cap = n;

		c = malloc(sizeof(*c) + cap);
		if (!c)
			return NULL;
		c->next = a->head;
		c->used = 0;
		c->cap = cap;
		a->head = c;
		a->bytes += sizeof(*c) + cap;
	}
	c->used += n;
	return (char *)c->data + c->used - n;
}

const char *pr__arena_strdup(struct pr_arena *a, const char *s)
{
	size_t n = strlen(s) + 1;
	char *p = pr__arena_alloc(a, n);

	if (p)
		memcpy(p, s, n);
	return p;
}

void pr__arena_free(struct pr_arena *a)
{
	while (a->head) {
		struct pr_arena_chunk *c = a->head;

		a->head = c->next;
		free(c);
	}
	a->bytes = 0;
}

