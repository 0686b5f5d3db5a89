/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Resolved frames shared by symbolizers of several models (pr_sym_pool in
 * prsym.h): the parallel workers of one run each keep a model of the same
 * processes, so each would name the same addresses of the same files.
 *
 * A symbolizer looks here only when its own table of resolved frames
 * misses, and adds what it resolves itself, so the lock is taken per new
 * (file, address) of a worker, never per frame.  A file is the same file
 * in two models when its path, device and inode are, or, where no inode
 * is known, its path and build-id: only files with one of them take part
 * (a path alone could be two containers' different files).  What an entry points to (names, inline
 * chains, file names, the module's path) belongs to the symbolizer and
 * model that resolved it, and entries name that model's DSOs; so all
 * sharing symbolizers and their models live until none of them is used,
 * and their models refuse a trim.
 */
#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "symbols/symbolizer.h"
#include "model/model.h"

struct pool_slot {
	const struct pr_dso *dso;    /* NULL: free */
	uint64_t file;               /* hash of the file's identity */
	uint64_t addr;
	struct pr_symbol sym;
};

struct pr_sym_pool {
	pthread_mutex_t lock;
	struct pool_slot *slots;
	size_t nr_slots, used;
	/* Lookups answered, of all made (pr_sym_pool_stats()). */
	uint64_t hits, lookups;
};

struct pr_sym_pool *pr_sym_pool_new(void)
{
	struct pr_sym_pool *p = calloc(1, sizeof(*p));

	if (p)
		pthread_mutex_init(&p->lock, NULL);
	return p;
}

void pr_sym_pool_free(struct pr_sym_pool *p)
{
	if (!p)
		return;
	pthread_mutex_destroy(&p->lock);
	free(p->slots);
	free(p);
}

bool pr__sym_pool_eligible(const struct pr_dso *d)
{
	return d && !d->anon && d->path[0] == '/' && (d->ino || d->build_id_size);
}

/* A file's identity: its path and inode where the inode is known,
 * else its path and build-id (which a symbolizer may learn later, on
 * opening the file: not part of the identity then, or one worker's
 * entries would not match another's). */
static uint64_t file_hash(const struct pr_dso *d)
{
	uint64_t h = pr__hash_str(d->path);

	if (d->ino)
		return pr__hash_mix(pr__hash_mix(h, ((uint64_t)d->maj << 32) | d->min), d->ino);
	return pr__hash_bytes(h, d->build_id, d->build_id_size);
}

static bool same_file(const struct pr_dso *a, const struct pr_dso *b)
{
	if (a == b)
		return true;
	if (a->ino || b->ino)
		return a->ino == b->ino && a->maj == b->maj && a->min == b->min &&
		       !strcmp(a->path, b->path);
	return a->build_id_size == b->build_id_size &&
	       !memcmp(a->build_id, b->build_id, a->build_id_size) && !strcmp(a->path, b->path);
}

static struct pool_slot *probe(const struct pr_sym_pool *p, const struct pr_dso *d,
			       uint64_t file, uint64_t addr)
{
	size_t mask = p->nr_slots - 1, i = (size_t)(pr__hash_mix(file, addr) >> 32) & mask;

	while (p->slots[i].dso && (p->slots[i].file != file || p->slots[i].addr != addr ||
				   !same_file(p->slots[i].dso, d)))
		i = (i + 1) & mask;
	return &p->slots[i];
}

static int reserve(struct pr_sym_pool *p)
{
	struct pool_slot *old = p->slots;
	size_t nr = p->nr_slots;

	if (p->used + 1 <= nr / 2)
		return 0;
	p->nr_slots = nr ? nr * 2 : 4096;
	p->slots = calloc(p->nr_slots, sizeof(*p->slots));
	if (!p->slots) {
		p->slots = old;
		p->nr_slots = nr;
		return -ENOMEM;
	}
	for (size_t i = 0; i < nr; i++)
		if (old[i].dso)
			*probe(p, old[i].dso, old[i].file, old[i].addr) = old[i];
	free(old);
	return 0;
}

bool pr__sym_pool_get(struct pr_sym_pool *p, const struct pr_dso *d, uint64_t addr,
		      struct pr_symbol *out)
{
	uint64_t file = file_hash(d);
	bool hit = false;

	pthread_mutex_lock(&p->lock);
	p->lookups++;
	if (p->slots) {
		const struct pool_slot *s = probe(p, d, file, addr);

		if (s->dso) {
			*out = s->sym;
			hit = true;
			p->hits++;
		}
	}
	pthread_mutex_unlock(&p->lock);
	return hit;
}

void pr__sym_pool_put(struct pr_sym_pool *p, const struct pr_dso *d, uint64_t addr,
		      const struct pr_symbol *sym)
{
	uint64_t file = file_hash(d);

	pthread_mutex_lock(&p->lock);
	/* Out of memory: the others resolve it themselves. */
	if (!reserve(p)) {
		struct pool_slot *s = probe(p, d, file, addr);

		if (!s->dso) {
			*s = (struct pool_slot){ .dso = d, .file = file, .addr = addr, .sym = *sym };
			p->used++;
		}
	}
	pthread_mutex_unlock(&p->lock);
}

int pr_sym_pool_stats(struct pr_sym_pool *p, uint64_t *hits, uint64_t *lookups)
{
	if (!p)
		return -EINVAL;
	pthread_mutex_lock(&p->lock);
	if (hits)
		*hits = p->hits;
	if (lookups)
		*lookups = p->lookups;
	pthread_mutex_unlock(&p->lock);
	return 0;
}
