/* SPDX-License-Identifier: Apache-2.0 */
/*
 * A map from u64 keys to pointers: open addressing with linear probing,
 * kept at most half full.  Enough for pids and DSO keys; deletion uses
 * backward shifting, so there are no tombstones to accumulate.
 */
#include <errno.h>
#include <stdlib.h>

#include "base/base.h"

static size_t slot_of(uint64_t key, size_t mask)
{
	/* Fibonacci hashing spreads sequential pids. */
	return (size_t)((key * UINT64_C(0x9e3779b97f4a7c15)) >> 17) & mask;
}

static int grow(struct pr_hashmap *m)
{
	size_t cap = m->cap ? m->cap * 2 : 64;
	struct pr_hashmap_slot *old = m->slots;
	size_t old_cap = m->cap;

	m->slots = calloc(cap, sizeof(*m->slots));
	if (!m->slots) {
		m->slots = old;
		return -ENOMEM;
	}
	m->cap = cap;
	m->n = 0;
	for (size_t i = 0; i < old_cap; i++)
		if (old[i].value)
			pr__hashmap_put(m, old[i].key, old[i].value);
	free(old);
	return 0;
}

void *pr__hashmap_get(const struct pr_hashmap *m, uint64_t key)
{
	if (!m->cap)
		return NULL;
	for (size_t i = slot_of(key, m->cap - 1);; i = (i + 1) & (m->cap - 1)) {
		if (!m->slots[i].value)
			return NULL;
		if (m->slots[i].key == key)
			return m->slots[i].value;
	}
}

int pr__hashmap_put(struct pr_hashmap *m, uint64_t key, void *value)
{
	size_t i;

	if ((m->n + 1) * 2 > m->cap && grow(m))
		return -ENOMEM;
	for (i = slot_of(key, m->cap - 1); m->slots[i].value;
	     i = (i + 1) & (m->cap - 1)) {
		if (m->slots[i].key == key) {
			m->slots[i].value = value;
			return 0;
		}
	}
	m->slots[i].key = key;
	m->slots[i].value = value;
	m->n++;
	return 0;
}

void *pr__hashmap_del(struct pr_hashmap *m, uint64_t key)
{
	size_t mask = m->cap - 1, i, j;
	void *value;

	if (!m->cap)
		return NULL;
	for (i = slot_of(key, mask); m->slots[i].key != key || !m->slots[i].value;
	     i = (i + 1) & mask)
		if (!m->slots[i].value)
			return NULL;
	value = m->slots[i].value;
	/* Shift later members of the probe run back into the hole. */
	for (j = (i + 1) & mask; m->slots[j].value; j = (j + 1) & mask) {
		size_t home = slot_of(m->slots[j].key, mask);

		if ((j > i && (home <= i || home > j)) ||
		    (j < i && (home <= i && home > j))) {
			m->slots[i] = m->slots[j];
			i = j;
		}
	}
	m->slots[i].value = NULL;
	m->slots[i].key = 0;
	m->n--;
	return value;
}

void pr__hashmap_free(struct pr_hashmap *m)
{
	free(m->slots);
	m->slots = NULL;
	m->cap = m->n = 0;
}
