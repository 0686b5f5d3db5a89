/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The one hash table: u64 keys to non-NULL pointers, open addressing with
 * linear probing, kept at most half full.  A key may hold several values
 * (pr__hashmap_add), so a table keyed by a hash of something larger keeps
 * colliding entries side by side and the caller tells them apart.
 * Deletion shifts later members of a probe run back, so there are no
 * tombstones to accumulate.
 */
#include <errno.h>
#include <stdlib.h>

#include "base/base.h"

static size_t slot_of(uint64_t key, size_t mask)
{
	/* Spread sequential pids and addresses over the table. */
	return (size_t)(pr__hash_mix(0, key) >> 32) & mask;
}

/* Where `key` goes: the first empty slot of its probe run. */
static void insert(struct pr_hashmap *m, uint64_t key, void *value)
{
	size_t i;

	for (i = slot_of(key, m->cap - 1); m->slots[i].value; i = (i + 1) & (m->cap - 1))
		;
	m->slots[i].key = key;
	m->slots[i].value = value;
	m->n++;
}

int pr__hashmap_reserve(struct pr_hashmap *m, size_t more)
{
	struct pr_hashmap_slot *old = m->slots;
	size_t old_cap = m->cap, cap = m->cap ? m->cap : 64;

	while ((m->n + more) * 2 > cap)
		cap *= 2;
	if (cap == m->cap)
		return 0;
	m->slots = calloc(cap, sizeof(*m->slots));
	if (!m->slots) {
		m->slots = old;
		return -ENOMEM;
	}
	m->cap = cap;
	m->n = 0;
	for (size_t i = 0; i < old_cap; i++)
		if (old[i].value)
			insert(m, old[i].key, old[i].value);
	free(old);
	return 0;
}

void *pr__hashmap_next(const struct pr_hashmap *m, uint64_t key, size_t *it)
{
	size_t mask = m->cap - 1, i;

	if (!m->cap)
		return NULL;
	/* *it is 0 before the first call, then the slot to look at next + 1. */
	for (i = *it ? *it - 1 : slot_of(key, mask); m->slots[i].value; i = (i + 1) & mask) {
		if (m->slots[i].key == key) {
			*it = ((i + 1) & mask) + 1;
			return m->slots[i].value;
		}
	}
	*it = i + 1;
	return NULL;
}

void *pr__hashmap_get(const struct pr_hashmap *m, uint64_t key)
{
	size_t it = 0;

	return pr__hashmap_next(m, key, &it);
}

int pr__hashmap_put(struct pr_hashmap *m, uint64_t key, void *value)
{
	if (pr__hashmap_reserve(m, 1))
		return -ENOMEM;
	for (size_t i = slot_of(key, m->cap - 1); m->slots[i].value;
	     i = (i + 1) & (m->cap - 1)) {
		if (m->slots[i].key == key) {
			m->slots[i].value = value;
			return 0;
		}
	}
	insert(m, key, value);
	return 0;
}

int pr__hashmap_add(struct pr_hashmap *m, uint64_t key, void *value)
{
	if (pr__hashmap_reserve(m, 1))
		return -ENOMEM;
	insert(m, key, value);
	return 0;
}

/* Empty slot i, shifting later members of its probe run back into the
 * hole: one whose home is cyclically outside (i, j] would no longer be
 * found past it.  Entries only ever move to a slot before them in their
 * run, so a walk that re-reads slot i after this misses none. */
static void delete_at(struct pr_hashmap *m, size_t i)
{
	size_t mask = m->cap - 1, j;

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
}

void *pr__hashmap_del(struct pr_hashmap *m, uint64_t key)
{
	size_t mask = m->cap - 1, i;
	void *value;

	if (!m->cap)
		return NULL;
	for (i = slot_of(key, mask); m->slots[i].key != key || !m->slots[i].value;
	     i = (i + 1) & mask)
		if (!m->slots[i].value)
			return NULL;
	value = m->slots[i].value;
	delete_at(m, i);
	return value;
}

void pr__hashmap_filter(struct pr_hashmap *m, bool (*keep)(uint64_t key, void *value, void *arg),
			void *arg)
{
	for (size_t i = 0; i < m->cap;) {
		if (m->slots[i].value && !keep(m->slots[i].key, m->slots[i].value, arg))
			delete_at(m, i);
		else
			i++;
	}
}

void pr__hashmap_free(struct pr_hashmap *m)
{
	free(m->slots);
	m->slots = NULL;
	m->cap = m->n = 0;
}
