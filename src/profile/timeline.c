/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Each thread's samples in time order, packed: a few bytes a sample
 * (profile.h says how), so that keeping the order costs little beside
 * the distinct stacks.
 */
#include <errno.h>
#include <stdlib.h>

#include "profile/profile.h"

static void put_varint(uint8_t *b, size_t *len, uint64_t v)
{
	while (v >= 0x80) {
		b[(*len)++] = (uint8_t)(v | 0x80);
		v >>= 7;
	}
	b[(*len)++] = (uint8_t)v;
}

int prof__timeline_add(struct prof_timeline *t, uint64_t time, uint32_t stack, uint64_t ns)
{
	int64_t dt = (int64_t)(time - t->last);

	/* Three varints of at most 10 bytes each. */
	if (PR_ARRAY_RESERVE(t->b, t->cap, t->len + 30))
		return -ENOMEM;
	put_varint(t->b, &t->len, ((uint64_t)dt << 1) ^ (uint64_t)(dt >> 63));
	put_varint(t->b, &t->len, stack);
	put_varint(t->b, &t->len, ns);
	t->last = time;
	return 0;
}

void prof__timeline_iter(const struct prof_timeline *t, struct prof_timeline_iter *it)
{
	it->p = t ? t->b : NULL;
	it->end = t ? t->b + t->len : NULL;
	it->time = 0;
}

static uint64_t get_varint(struct prof_timeline_iter *it)
{
	uint64_t v = 0;

	for (unsigned int shift = 0; it->p < it->end && shift < 64; shift += 7) {
		uint8_t c = *it->p++;

		v |= (uint64_t)(c & 0x7f) << shift;
		if (!(c & 0x80))
			break;
	}
	return v;
}

int prof__timeline_next(struct prof_timeline_iter *it, uint64_t *time, uint32_t *stack,
			uint64_t *ns)
{
	uint64_t z;

	if (!it->p || it->p >= it->end)
		return 0;
	z = get_varint(it);
	it->time += (uint64_t)((int64_t)(z >> 1) ^ -(int64_t)(z & 1));
	*time = it->time;
	*stack = (uint32_t)get_varint(it);
	*ns = get_varint(it);
	return 1;
}
