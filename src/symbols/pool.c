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

/* A resolved frame of a file, in the table under hash(file, address):
 * entries whose hashes collide sit side by side (base/hashmap.c). */
struct pool_entry {
	const struct pr_dso *dso;    /* the file, as the resolving model has it */
	uint64_t file;               /* hash of the file's identity */
	uint64_t addr;
	struct pr_symbol sym;
	/* Where the module that resolved it read it (a sharing symbolizer's,
	 * which lives as long as the pool): the answer is zeros once that
	 * index or file was cut short under its mapping (base/busguard.c). */
	struct sym_cut_marks from;
};

struct pr_sym_pool {
	pthread_mutex_t lock;
	struct pr_hashmap entries;   /* hash(file, addr) -> struct pool_entry */
	struct pr_arena arena;       /* the entries */
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
	pr__hashmap_free(&p->entries);
	pr__arena_free(&p->arena);
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

/* The entry for (`d`, `addr`), or NULL; `file` is file_hash(d). */
static const struct pool_entry *find(const struct pr_sym_pool *p, const struct pr_dso *d,
				     uint64_t file, uint64_t addr)
{
	const struct pool_entry *e;
	size_t it = 0;

	while ((e = pr__hashmap_next(&p->entries, pr__hash_mix(file, addr), &it)))
		if (e->file == file && e->addr == addr && same_file(e->dso, d))
			return e;
	return NULL;
}

bool pr__sym_pool_get(struct pr_sym_pool *p, const struct pr_dso *d, uint64_t addr,
		      struct pr_symbol *out)
{
	uint64_t file = file_hash(d);
	const struct pool_entry *e;

	pthread_mutex_lock(&p->lock);
	p->lookups++;
	e = find(p, d, file, addr);
	if (e && pr__sym_cut_marks_hit(&e->from))
		e = NULL;
	if (e) {
		*out = e->sym;
		p->hits++;
	}
	pthread_mutex_unlock(&p->lock);
	return e != NULL;
}

void pr__sym_pool_put(struct pr_sym_pool *p, const struct pr_dso *d, uint64_t addr,
		      const struct pr_symbol *sym, const struct sym_module *from)
{
	uint64_t file = file_hash(d);
	struct pool_entry *e;
	struct sym_cut_marks marks = { 0 };

	if (from)
		pr__sym_module_cut_marks(from, &marks);
	pthread_mutex_lock(&p->lock);
	e = (struct pool_entry *)find(p, d, file, addr);
	/* One from a module cut since: this answer in its place. */
	if (e && pr__sym_cut_marks_hit(&e->from)) {
		*e = (struct pool_entry){ .dso = d, .file = file, .addr = addr, .sym = *sym,
					  .from = marks };
	/* Out of memory: the others resolve it themselves. */
	} else if (!e && !pr__hashmap_reserve(&p->entries, 1) &&
		   (e = pr__arena_alloc(&p->arena, sizeof(*e)))) {
		*e = (struct pool_entry){ .dso = d, .file = file, .addr = addr, .sym = *sym,
					  .from = marks };
		pr__hashmap_add(&p->entries, pr__hash_mix(file, addr), e);
	}
	pthread_mutex_unlock(&p->lock);
}

struct forget {
	const struct pr_dso *dso;
	uint64_t file;
};

static bool not_of(uint64_t key, void *value, void *arg)
{
	const struct pool_entry *e = value;
	const struct forget *fg = arg;

	(void)key;
	return e->file != fg->file || !same_file(e->dso, fg->dso);
}

void pr__sym_pool_forget(struct pr_sym_pool *p, const struct pr_dso *d)
{
	struct forget fg = { d, file_hash(d) };

	pthread_mutex_lock(&p->lock);
	pr__hashmap_filter(&p->entries, not_of, &fg);
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
