/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Address indexes shared by the symbolizers of one session's workers
 * (ixshare.h).  Each worker keeps a model and a symbolizer of its own, so
 * without this each would build (the whole DWARF walk, and its heap) or
 * map every file's index itself, and hold a copy of each built one.  An
 * index is read-only once made (symindex.c), so one copy serves them all
 * without a lock; the set's mutex is taken only when a symbolizer first
 * meets a file, publishes the index it made, or lets one go.
 *
 * The first symbolizer to ask for a file makes its index (maps it from
 * the cache, or builds it); one asking meanwhile waits for it rather than
 * building it too: it would spend what the maker is spending, later, for
 * a copy the maker's makes redundant.  A file without an index (no DWARF,
 * not to be built on libdw's path, memory short) leaves the set at once:
 * a symbolizer that was waiting then finds out for itself, as without
 * the set.
 *
 * Each symbolizer's module holds a reference to the file it took; the
 * index goes with the last, and the file leaves the set then (a worker
 * meeting it later makes it again).  A file holds a reference to the set,
 * so the set goes with the last of its symbolizers and files, whatever
 * the order.
 *
 * The files are a list: a symbolizer looks a file up once (its module's
 * first DWARF question), and a session names tens to a few thousand of
 * them.
 */
#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "base/base.h"
#include "symbols/ixshare.h"
#include "symbols/symindex.h"

struct pr__ixshare_file {
	struct pr__ixshare *set;
	struct pr__ixshare_file *prev, *next;   /* in set->files while listed */
	bool listed;
	struct pr__ixshare_id id;
	uint64_t hash;
	/* With the line table: the maker's wish while it makes the index
	 * (its symbolizer shows lines), then what the index has. */
	bool lines;
	bool making;                 /* not published yet */
	unsigned refs;
	struct pr__symindex *ix;
	uint64_t bias;
	size_t bytes;
};

struct pr__ixshare {
	pthread_mutex_t lock;
	pthread_cond_t made;         /* a maker published */
	unsigned refs;               /* the holders' and one per file */
	struct pr__ixshare_file *files;
	struct pr__ixshare_stats stats;
};

struct pr__ixshare *pr__ixshare_new(void)
{
	struct pr__ixshare *set = calloc(1, sizeof(*set));

	if (!set)
		return NULL;
	pthread_mutex_init(&set->lock, NULL);
	pthread_cond_init(&set->made, NULL);
	set->refs = 1;
	return set;
}

struct pr__ixshare *pr__ixshare_get(struct pr__ixshare *set)
{
	pthread_mutex_lock(&set->lock);
	set->refs++;
	pthread_mutex_unlock(&set->lock);
	return set;
}

static void set_free(struct pr__ixshare *set)
{
	pthread_cond_destroy(&set->made);
	pthread_mutex_destroy(&set->lock);
	free(set);
}

void pr__ixshare_put(struct pr__ixshare *set)
{
	bool last;

	if (!set)
		return;
	pthread_mutex_lock(&set->lock);
	last = !--set->refs;
	pthread_mutex_unlock(&set->lock);
	if (last)
		set_free(set);
}

static uint64_t id_hash(const struct pr__ixshare_id *id)
{
	uint64_t h = pr__hash_bytes(pr__hash_mix(0, id->key.settings), id->key.build_id,
				    id->key.build_id_size);

	return pr__hash_mix(pr__hash_mix(pr__hash_mix(h, id->dev), id->ino), id->size);
}

static bool same_id(const struct pr__ixshare_id *a, const struct pr__ixshare_id *b)
{
	return a->key.settings == b->key.settings && a->key.build_id_size == b->key.build_id_size &&
	       !memcmp(a->key.build_id, b->key.build_id, a->key.build_id_size) &&
	       a->dev == b->dev && a->ino == b->ino && a->size == b->size;
}

/* Under the lock: the listed file for `id` that serves a symbolizer
 * showing lines when `lines` (one with them serves one without). */
static void unlist(struct pr__ixshare_file *f);

/* Under the lock.  An index whose file was cut short under its mapping
 * (pr__symindex_cut()) leaves the list: its holders drop it as they find
 * out (symbolizer.c), and the next to ask makes it again. */
static struct pr__ixshare_file *lookup(struct pr__ixshare *set, const struct pr__ixshare_id *id,
				       uint64_t hash, bool lines)
{
	for (struct pr__ixshare_file *f = set->files, *next; f; f = next) {
		next = f->next;
		if (f->ix && pr__symindex_cut(f->ix)) {
			unlist(f);
			continue;
		}
		if (f->hash == hash && same_id(&f->id, id) && (f->lines || !lines))
			return f;
	}
	return NULL;
}

/* Under the lock. */
static void unlist(struct pr__ixshare_file *f)
{
	struct pr__ixshare *set = f->set;

	if (!f->listed)
		return;
	f->listed = false;
	if (f->prev)
		f->prev->next = f->next;
	else
		set->files = f->next;
	if (f->next)
		f->next->prev = f->prev;
}

struct pr__ixshare_file *pr__ixshare_find(struct pr__ixshare *set,
					  const struct pr__ixshare_id *id, bool lines,
					  bool *make)
{
	uint64_t hash = id_hash(id);
	struct pr__ixshare_file *f;
	bool waited = false;

	pthread_mutex_lock(&set->lock);
	while ((f = lookup(set, id, hash, lines))) {
		f->refs++;
		if (f->making) {
			waited = true;
			while (f->making)
				pthread_cond_wait(&set->made, &set->lock);
		}
		if (f->ix && (f->lines || !lines)) {
			set->stats.shared++;
			set->stats.waited += waited;
			pthread_mutex_unlock(&set->lock);
			*make = false;
			return f;
		}
		/* Published without an index (it left the list), or without
		 * the lines asked for: look again. */
		pthread_mutex_unlock(&set->lock);
		pr__ixshare_file_put(f);
		pthread_mutex_lock(&set->lock);
	}
	*make = true;
	f = calloc(1, sizeof(*f));
	if (f) {
		*f = (struct pr__ixshare_file){ .set = set, .id = *id, .hash = hash, .lines = lines,
						.making = true, .refs = 1, .listed = true,
						.next = set->files };
		if (set->files)
			set->files->prev = f;
		set->files = f;
		set->refs++;
	}
	pthread_mutex_unlock(&set->lock);
	return f;
}

void pr__ixshare_publish(struct pr__ixshare_file *f, struct pr__symindex *ix, uint64_t bias,
			 bool mapped)
{
	struct pr__ixshare *set = f->set;

	pthread_mutex_lock(&set->lock);
	f->making = false;
	if (ix) {
		f->ix = ix;
		f->bias = bias;
		/* Of a file without DWARF, there are no lines to have. */
		f->lines = pr__symindex_has_lines(ix) || !pr__symindex_has_dwarf(ix);
		f->bytes = pr__symindex_bytes(ix);
		if (mapped)
			set->stats.mapped++;
		else
			set->stats.built++;
		set->stats.files++;
		set->stats.bytes += f->bytes;
	} else {
		unlist(f);
	}
	pthread_cond_broadcast(&set->made);
	pthread_mutex_unlock(&set->lock);
	if (!ix)
		pr__ixshare_file_put(f);
}

const struct pr__symindex *pr__ixshare_index(const struct pr__ixshare_file *f, uint64_t *bias)
{
	*bias = f->bias;
	return f->ix;
}

void pr__ixshare_file_put(struct pr__ixshare_file *f)
{
	struct pr__ixshare *set;
	bool last, set_last = false;

	if (!f)
		return;
	set = f->set;
	pthread_mutex_lock(&set->lock);
	last = !--f->refs;
	if (last) {
		unlist(f);
		if (f->ix) {
			set->stats.files--;
			set->stats.bytes -= f->bytes;
		}
		set_last = !--set->refs;
	}
	pthread_mutex_unlock(&set->lock);
	if (!last)
		return;
	/* Unmapped or freed outside the lock: no other holder reads it. */
	pr__symindex_free(f->ix);
	free(f);
	if (set_last)
		set_free(set);
}

void pr__ixshare_stats(struct pr__ixshare *set, struct pr__ixshare_stats *st)
{
	if (!set) {
		*st = (struct pr__ixshare_stats){ 0 };
		return;
	}
	pthread_mutex_lock(&set->lock);
	*st = set->stats;
	pthread_mutex_unlock(&set->lock);
}
