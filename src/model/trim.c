/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Bounding what the model and its users keep (prmodel.h, "Bounding the
 * model's caches").  A trim runs where the caller holds nothing handed
 * out, in three steps that each make the next smaller:
 *
 *   1. DSOs that no process has mapped for the grace period are forgotten
 *      (a process that exited leaves its files unmapped);
 *   2. files that no remaining DSO reaches go with them;
 *   3. files held longer than the maximum age go, to be read anew (libdw
 *      gives back what it allocated behind a file only when the file is
 *      closed, and that grows with every new address looked up);
 *   4. while the rest weigh more than the limit, the files sampled least
 *      recently go: recency is counted in trims, from the flag the
 *      unwinder sets on a DSO when a frame lands in it (one store per
 *      frame, no clock).
 *
 * The users (unwinders, symbolizers) are told once, with everything that
 * goes marked, and then it is freed: a file evicted but still mapped is
 * found again at its next sample.  The pages of the files kept are then
 * unmapped (they stay in the page cache): a file read once in full (its
 * symbol table, a DWARF index built) would otherwise stay in the resident
 * size for as long as it is held.  That is this cache's mappings and the
 * users' own (a symbolizer's: libelf's of each file and debug file, the
 * address indexes), and it is done between trims too
 * (pr__model_release_pages()), where a session is asked to give memory
 * back: what a window read stayed resident until its end.
 */
#include <errno.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>

#include "model/elfcache.h"

void pr__model_listen(struct pr_model *m, struct pr_model_user *u)
{
	u->next = m->users;
	m->users = u;
}

void pr__model_unlisten(struct pr_model *m, struct pr_model_user *u)
{
	for (struct pr_model_user **p = &m->users; *p; p = &(*p)->next)
		if (*p == u) {
			*p = u->next;
			return;
		}
}

void pr__model_release_pages(struct pr_model *m)
{
	if (m->elves)
		pr__elfcache_release_pages(m->elves);
	for (const struct pr_model_user *u = m->users; u; u = u->next)
		if (u->release)
			u->release(u->arg);
}

int pr_model_set_cache(struct pr_model *m, const struct pr_cache_opts *opts)
{
	if (!m || !PR_OPTS_VALID(opts))
		return -EINVAL;
	m->max_bytes = PR_OPTS_GET(opts, max_bytes, 0);
	m->grace_ns = PR_OPTS_GET(opts, grace_ns, 0);
	m->check_processes = PR_OPTS_GET(opts, check_processes, false);
	m->max_age_ns = PR_OPTS_GET(opts, max_age_ns, 0);
	return 0;
}

int pr_model_cache_stats(const struct pr_model *m, struct pr_cache_stats *st)
{
	struct pr_cache_stats now;

	if (!m)
		return -EINVAL;
	now = m->cache;
	now.files_foreign_missing = pr__elfcache_foreign_missing(m->elves);
	now.procs = m->procs.n;
	return pr__stats_copy(st, &now, sizeof(*st));
}

/* A file the cache holds, as the trim weighs it. */
struct held {
	struct pr_elf *e;
	uint64_t last_epoch;         /* of the DSOs that found it, the latest */
	uint64_t bytes;
	bool reached;                /* by a DSO that stays */
};

struct census {
	struct pr_model *m;
	struct pr_hashmap index;     /* struct pr_elf * -> struct held * */
	struct held *v;
	size_t nr, cap;
	bool failed;
};

static void count_file(struct pr_elf *e, struct pr_dso *d, void *arg)
{
	struct census *c = arg;
	struct held *h = pr__hashmap_get(&c->index, (uintptr_t)e);

	if (!h) {
		/* Entries are found again by position: the array moves. */
		uintptr_t pos = c->nr + 1;

		if (c->failed || PR_ARRAY_RESERVE(c->v, c->cap, c->nr + 1) ||
		    pr__hashmap_put(&c->index, (uintptr_t)e, (void *)pos)) {
			c->failed = true;
			return;
		}
		h = &c->v[c->nr++];
		*h = (struct held){ .e = e };
	} else {
		h = &c->v[(uintptr_t)h - 1];
	}
	if (d->last_epoch > h->last_epoch)
		h->last_epoch = d->last_epoch;
	h->reached |= !d->going;
}

static uint64_t weigh(const struct pr_model *m, const struct pr_elf *e)
{
	uint64_t bytes = e->size + (e->debug ? e->debug->size : 0);

	for (const struct pr_model_user *u = m->users; u; u = u->next)
		bytes += u->weigh(u->arg, e);
	return bytes;
}

/* Least recently sampled first; of those, the heaviest. */
static int by_age(const void *a, const void *b)
{
	const struct held *x = a, *y = b;

	if (x->last_epoch != y->last_epoch)
		return x->last_epoch < y->last_epoch ? -1 : 1;
	return x->bytes > y->bytes ? -1 : x->bytes < y->bytes;
}

static void mark_mapped(struct pr_model *m, const struct pr_map *v, size_t nr)
{
	for (size_t i = 0; i < nr; i++)
		if (v[i].dso)
			v[i].dso->mapped_epoch = m->epoch;
}

static bool is_gone(uint64_t pid)
{
	/* The idle task and the kernel's pseudo-process (pid -1) stay. */
	return pid && pid < (uint64_t)INT32_MAX && kill((pid_t)pid, 0) && errno == ESRCH;
}

/* How much later than the moment a process was found gone its EXIT
 * record may still be applied: records are handed over in time order,
 * a round late, and one a ring gave up late still lands. */
#define GONE_SLACK_NS UINT64_C(1000000000)

struct gone_check {
	uint64_t time, now, gone;
};

/*
 * A process that no longer exists stays until the records have been
 * applied up to a second past the moment a trim first found it gone:
 * its EXIT, written before that moment, would have come by then, so it
 * was lost.  Forgotten at once, a process the reader is behind on (a
 * loaded host) would lose its threads' names and its mappings while
 * its samples are still to come.  Without a time, at the first trim.
 */
static bool proc_stays(uint64_t pid, void *value, void *arg)
{
	struct pr_proc *p = value;
	struct gone_check *g = arg;

	if (!is_gone(pid)) {
		p->gone_at = 0;
		return true;
	}
	if (!p->gone_at)
		p->gone_at = g->now;
	if (g->time && g->time < p->gone_at + GONE_SLACK_NS)
		return true;
	pr__proc_free(value);
	g->gone++;
	return false;
}

static bool thread_stays(uint64_t tid, void *value, void *arg)
{
	const struct pr_thread *t = value;

	(void)tid;
	if (pr__hashmap_get(&((struct pr_model *)arg)->procs, t->pid) || !is_gone(t->pid))
		return true;
	free(value);
	return false;
}

/* Step 0 (check_processes): processes whose EXIT was lost, as the
 * records stand at `time`. */
static void forget_gone(struct pr_model *m, uint64_t time)
{
	struct gone_check g = { .time = time, .now = pr__monotonic_ns() };

	pr__hashmap_filter(&m->procs, proc_stays, &g);
	if (g.gone)
		pr__hashmap_filter(&m->threads, thread_stays, m);
	m->cache.procs_gone += g.gone;
}

/* Step 1: mark the DSOs unmapped for the grace period `going`. */
static size_t age_dsos(struct pr_model *m, uint64_t time)
{
	size_t nr = 0;

	for (size_t i = 0; i < m->procs.cap; i++) {
		const struct pr_proc *p = m->procs.slots[i].value;

		if (p) {
			mark_mapped(m, p->maps, p->nr);
			mark_mapped(m, p->old, p->nr_old);
		}
	}
	for (size_t i = 0; i < m->nr_dsos; i++) {
		struct pr_dso *d = m->dsos[i];

		if (d->sampled) {
			d->sampled = false;
			d->last_epoch = m->epoch;
		}
		if (d->mapped_epoch == m->epoch) {
			d->unmapped_at = 0;
			continue;
		}
		if (!d->unmapped_at)
			d->unmapped_at = time ? time : 1;
		if (time >= d->unmapped_at && time - d->unmapped_at >= m->grace_ns) {
			d->going = true;
			nr++;
		}
	}
	return nr;
}

/* Unlink the DSOs marked `going` from the index and free them. */
static void free_dsos(struct pr_model *m)
{
	size_t kept = 0;

	for (size_t i = 0; i < m->nr_dsos; i++) {
		struct pr_dso *d = m->dsos[i];
		uint64_t key;
		struct pr_dso **link, *head;

		if (!d->going) {
			m->dsos[kept++] = d;
			continue;
		}
		key = pr__dso_key(d->path, d->maj, d->min, d->ino);
		head = pr__hashmap_get(&m->dso_index, key);
		for (link = &head; *link != d; link = &(*link)->next_same_key)
			;
		*link = d->next_same_key;
		if (!head)
			pr__hashmap_del(&m->dso_index, key);
		else if (head != pr__hashmap_get(&m->dso_index, key))
			pr__hashmap_put(&m->dso_index, key, head);
		free(d->path);
		free(d);
	}
	m->nr_dsos = kept;
}

void pr_model_mark_sampled(struct pr_model *m, const struct pr_dso *d)
{
	/* The model's own DSO: its frames hand it out const. */
	if (m && d)
		((struct pr_dso *)d)->sampled = true;
}

int pr_model_trim(struct pr_model *m, uint64_t time)
{
	struct census c = { .m = m };
	uint64_t total = 0;
	size_t forgotten, evicted = 0, i;

	if (!m)
		return -EINVAL;
	for (const struct pr_model_user *u = m->users; u; u = u->next)
		if (u->pins)
			return -EBUSY;
	m->epoch++;
	if (m->check_processes)
		forget_gone(m, time);
	forgotten = age_dsos(m, time);
	if (m->elves)
		pr__elfcache_each(m->elves, count_file, &c);
	if (c.failed) {
		for (i = 0; i < m->nr_dsos; i++)
			m->dsos[i]->going = false;
		free(c.v);
		pr__hashmap_free(&c.index);
		return -ENOMEM;
	}
	/* Steps 2 to 4. */
	for (i = 0; i < c.nr; i++) {
		struct pr_elf *e = c.v[i].e;

		if (!e->held_since)
			e->held_since = time ? time : 1;
		if (c.v[i].reached && m->max_age_ns && time > e->held_since &&
		    time - e->held_since >= m->max_age_ns) {
			c.v[i].reached = false;
			m->cache.files_renewed++;
		}
		c.v[i].bytes = weigh(m, e);
		if (c.v[i].reached)
			total += c.v[i].bytes;
		else
			e->going = true;
	}
	if (m->max_bytes && total > m->max_bytes) {
		qsort(c.v, c.nr, sizeof(*c.v), by_age);
		for (i = 0; i < c.nr && total > m->max_bytes; i++) {
			struct held *h = &c.v[i];

			if (!h->reached)
				continue;
			h->e->going = true;
			total -= h->bytes;
			evicted++;
			m->cache.bytes_evicted += h->bytes;
			m->cache.files_evicted_hot += h->last_epoch == m->epoch;
		}
	}
	m->cache.files = 0;
	for (i = 0; i < c.nr; i++)
		m->cache.files += c.v[i].reached && !c.v[i].e->going;
	for (struct pr_model_user *u = m->users; u; u = u->next)
		u->trim(u->arg);
	if (m->elves)
		pr__elfcache_drop(m->elves);
	pr__model_release_pages(m);
	free_dsos(m);

	m->cache.trims++;
	m->cache.files_evicted += evicted;
	m->cache.dsos_forgotten += forgotten;
	m->cache.bytes = total;
	m->cache.dsos = m->nr_dsos;
	free(c.v);
	pr__hashmap_free(&c.index);
	return 0;
}
