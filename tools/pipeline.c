/* SPDX-License-Identifier: Apache-2.0 */
/* Records from the capture thread to a worker, a drain at a time. */
#include <errno.h>
#include <linux/perf_event.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "pipeline.h"

/* One drain's records, copied back to back (8-byte aligned as in the
 * ring, since every record's size is a multiple of 8). */
struct batch {
	struct batch *next;
	size_t len, cap;
	unsigned char *data;
};

#define MAX_SPARE 4

struct ds_pipeline {
	const struct pr_reader *r;
	pr_record_fn process;
	void *ctx;
	size_t max_bytes;
	const volatile sig_atomic_t *hurry;

	struct batch *filling;       /* capture thread's */

	pthread_mutex_t lock;
	pthread_cond_t ready;
	struct batch *head, **tail;  /* handed over, oldest first */
	/* Processed batches kept for reuse: a fresh buffer each drain cost
	 * a page fault per 4 KiB, more than the copy itself. */
	struct batch *spare;
	int nr_spare;
	bool closed, joined;
	int error;

	pthread_t worker;
	_Atomic size_t queued_bytes;
	_Atomic uint64_t copied, dropped, processed;
};

static void batch_free(struct batch *b)
{
	if (b) {
		free(b->data);
		free(b);
	}
}

/* A record waiting in the worker: its time, and where it is. */
struct entry {
	uint64_t time;
	uint64_t seq;                /* the order it was copied in */
	const struct perf_event_header *h;
};

static int by_time(const void *a, const void *b)
{
	const struct entry *x = a, *y = b;

	if (x->time != y->time)
		return x->time < y->time ? -1 : 1;
	/* Equal times keep their copy order (synthesized records are all
	 * time 0, and come in the order they must be applied). */
	return (x->seq > y->seq) - (x->seq < y->seq);
}

/* The worker's state between batches. */
struct held {
	struct entry *e;             /* waiting, sorted */
	size_t nr, cap;
	struct batch *prev;          /* holds the waiting records' bytes */
	uint64_t prev_max;           /* the latest time in `prev` */
	uint64_t seq;
};

static void release(struct ds_pipeline *pl, struct batch *b)
{
	if (!b)
		return;
	atomic_fetch_sub(&pl->queued_bytes, b->cap);
	pthread_mutex_lock(&pl->lock);
	if (pl->nr_spare < MAX_SPARE) {
		b->len = 0;
		b->next = pl->spare;
		pl->spare = b;
		pl->nr_spare++;
		b = NULL;
	}
	pthread_mutex_unlock(&pl->lock);
	batch_free(b);
}

/* Process the waiting records up to time `limit` (all with UINT64_MAX),
 * in order; keep the rest.  A second Ctrl-C drops what waits. */
static int process_upto(struct ds_pipeline *pl, struct held *w, uint64_t limit)
{
	size_t i = 0;
	int err = 0;

	for (; i < w->nr && w->e[i].time <= limit && !err; i++) {
		struct pr_record rec;

		if (pl->hurry && *pl->hurry > 1) {
			for (size_t k = i; k < w->nr; k++)
				if (w->e[k].h->type == PERF_RECORD_SAMPLE)
					atomic_fetch_add(&pl->dropped, 1);
			i = w->nr;
			break;
		}
		if (pr_reader_parse(pl->r, w->e[i].h, w->e[i].h->size, &rec)) {
			/* Not expected of a copy: counted, not lost silently. */
			atomic_fetch_add(&pl->dropped, w->e[i].h->type == PERF_RECORD_SAMPLE);
			continue;
		}
		err = pl->process(&rec, pl->ctx);
		if (rec.type == PR_RECORD_SAMPLE)
			atomic_fetch_add(&pl->processed, 1);
	}
	memmove(w->e, w->e + i, (w->nr - i) * sizeof(*w->e));
	w->nr -= i;
	return err < 0 ? err : 0;
}

/*
 * Take batch `b` (NULL: the end).  Rings are drained one after another,
 * so a drain can hold a record that comes after one the next drain will
 * bring; but not after anything the drain before it held, which was read
 * before this drain began (perf's ordered events reason the same way at
 * each finished round).  So records wait until a later batch arrives,
 * and those up to the latest time of the batch before are processed.
 */
static int take(struct ds_pipeline *pl, struct held *w, struct batch *b)
{
	uint64_t max = 0;
	size_t n = 0;
	int err;

	for (size_t off = 0; b && off < b->len;
	     off += ((struct perf_event_header *)(b->data + off))->size)
		n++;
	if (w->nr + n > w->cap) {
		size_t cap = w->cap ? w->cap : 1024;
		struct entry *e;

		while (cap < w->nr + n)
			cap *= 2;
		if (!(e = realloc(w->e, cap * sizeof(*e))))
			return -ENOMEM;
		w->e = e;
		w->cap = cap;
	}
	for (size_t off = 0; b && off < b->len;) {
		const struct perf_event_header *h = (const void *)(b->data + off);
		struct entry *e = &w->e[w->nr++];
		struct pr_record rec;

		e->h = h;
		e->seq = w->seq++;
		e->time = pr_reader_parse(pl->r, h, h->size, &rec) ? 0 : rec.time;
		if (e->time > max)
			max = e->time;
		off += h->size;
	}
	qsort(w->e, w->nr, sizeof(*w->e), by_time);
	err = process_upto(pl, w, b ? w->prev_max : UINT64_MAX);
	/* What waits now is all of `b`'s: the batch before is done. */
	release(pl, w->prev);
	w->prev = b;
	w->prev_max = max > w->prev_max ? max : w->prev_max;
	return err;
}

static void *worker(void *arg)
{
	struct ds_pipeline *pl = arg;
	struct held w = { 0 };
	int err;

	pthread_mutex_lock(&pl->lock);
	for (;;) {
		struct batch *b;

		while (!pl->head && !pl->closed)
			pthread_cond_wait(&pl->ready, &pl->lock);
		if (!pl->head)
			break;
		b = pl->head;
		pl->head = b->next;
		if (!pl->head)
			pl->tail = &pl->head;
		pthread_mutex_unlock(&pl->lock);
		/* After an error the rest is only released: the capture
		 * thread learns of it at the end. */
		if (pl->error) {
			release(pl, b);
			err = 0;
		} else {
			err = take(pl, &w, b);
		}
		pthread_mutex_lock(&pl->lock);
		if (err && !pl->error)
			pl->error = err;
	}
	pthread_mutex_unlock(&pl->lock);
	err = pl->error ? 0 : take(pl, &w, NULL);
	pthread_mutex_lock(&pl->lock);
	if (err && !pl->error)
		pl->error = err;
	pthread_mutex_unlock(&pl->lock);
	release(pl, w.prev);
	free(w.e);
	return NULL;
}

struct ds_pipeline *ds_pipeline_new(const struct pr_reader *r, pr_record_fn process,
				    void *ctx, size_t max_bytes,
				    const volatile sig_atomic_t *hurry)
{
	struct ds_pipeline *pl = calloc(1, sizeof(*pl));
	sigset_t block, old;

	if (!pl)
		return NULL;
	pl->r = r;
	pl->process = process;
	pl->ctx = ctx;
	pl->max_bytes = max_bytes;
	pl->hurry = hurry;
	pl->tail = &pl->head;
	pthread_mutex_init(&pl->lock, NULL);
	pthread_cond_init(&pl->ready, NULL);
	sigemptyset(&block);
	sigaddset(&block, SIGINT);
	sigaddset(&block, SIGTERM);
	pthread_sigmask(SIG_BLOCK, &block, &old);
	errno = pthread_create(&pl->worker, NULL, worker, pl);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	if (errno) {
		pthread_cond_destroy(&pl->ready);
		pthread_mutex_destroy(&pl->lock);
		free(pl);
		return NULL;
	}
	return pl;
}

/* A batch to fill: a spare one, or a new one. */
static struct batch *take_batch(struct ds_pipeline *pl)
{
	struct batch *b;

	pthread_mutex_lock(&pl->lock);
	b = pl->spare;
	if (b) {
		pl->spare = b->next;
		pl->nr_spare--;
		b->next = NULL;
	}
	pthread_mutex_unlock(&pl->lock);
	return b ? b : calloc(1, sizeof(*b));
}

/* Room for `size` more bytes in the batch being filled; NULL out of
 * memory. */
static unsigned char *room(struct ds_pipeline *pl, size_t size)
{
	struct batch *b = pl->filling;
	unsigned char *at;

	if (!b) {
		if (!(b = take_batch(pl)))
			return NULL;
		pl->filling = b;
	}
	if (b->len + size > b->cap) {
		size_t cap = b->cap ? b->cap * 2 : 1 << 20;
		unsigned char *d;

		while (cap < b->len + size)
			cap *= 2;
		if (!(d = realloc(b->data, cap)))
			return NULL;
		b->data = d;
		b->cap = cap;
	}
	at = b->data + b->len;
	b->len += size;
	return at;
}

/*
 * Copy a record.  A sample's stack copy is cut to the bytes the kernel
 * could read (dyn_size, rounded up to 8): the rest of the reserved size is
 * zeros past the top of the stack, and copying it was most of the cost.
 * The record stays well formed (its stack size field says the new size),
 * so it parses as before.
 */
static int copy_record(struct ds_pipeline *pl, const struct pr_record *rec)
{
	const struct perf_event_header *h = rec->raw;
	const struct pr_sample *sm = &rec->u.sample;
	const unsigned char *raw = rec->raw;
	size_t head, tail, keep, size;
	unsigned char *at;
	uint64_t v;

	/* A stack of size 0 has no dyn_size field: keep those as they are. */
	if (rec->type != PR_RECORD_SAMPLE || !sm->stack || !sm->stack_dyn_size ||
	    sm->stack_dyn_size >= sm->stack_size) {
		if (!(at = room(pl, h->size)))
			return -ENOMEM;
		memcpy(at, raw, h->size);
		return 0;
	}
	/* ... u64 size, stack[size], u64 dyn_size, then the fields after. */
	head = (size_t)(sm->stack - raw) - 8;
	tail = (size_t)(sm->stack - raw) + sm->stack_size + 8;
	keep = (sm->stack_dyn_size + 7) & ~(size_t)7;
	size = head + 8 + keep + 8 + (h->size - tail);
	if (!(at = room(pl, size)))
		return -ENOMEM;
	memcpy(at, raw, head);
	((struct perf_event_header *)at)->size = (uint16_t)size;
	v = keep;
	memcpy(at + head, &v, 8);
	memcpy(at + head + 8, sm->stack, sm->stack_dyn_size);
	memset(at + head + 8 + sm->stack_dyn_size, 0, keep - sm->stack_dyn_size);
	v = sm->stack_dyn_size;
	memcpy(at + head + 8 + keep, &v, 8);
	memcpy(at + head + 16 + keep, raw + tail, h->size - tail);
	return 0;
}

int ds_pipeline_copy(const struct pr_record *rec, void *arg)
{
	struct ds_pipeline *pl = arg;
	const struct perf_event_header *h = rec->raw;
	size_t before = pl->filling ? pl->filling->cap : 0;
	int err;

	if (rec->type == PR_RECORD_SAMPLE) {
		/* queued_bytes counts the batch being filled too. */
		if (atomic_load(&pl->queued_bytes) + h->size > pl->max_bytes) {
			atomic_fetch_add(&pl->dropped, 1);
			return 0;
		}
	}
	err = copy_record(pl, rec);
	if (err)
		return err;
	atomic_fetch_add(&pl->copied, rec->type == PR_RECORD_SAMPLE);
	atomic_fetch_add(&pl->queued_bytes, pl->filling->cap - before);
	return 0;
}

int ds_pipeline_flush(void *arg)
{
	struct ds_pipeline *pl = arg;
	struct batch *b = pl->filling;

	if (!b || !b->len)
		return 0;
	pl->filling = NULL;
	pthread_mutex_lock(&pl->lock);
	*pl->tail = b;
	pl->tail = &b->next;
	pthread_cond_signal(&pl->ready);
	pthread_mutex_unlock(&pl->lock);
	return 0;
}

void ds_pipeline_counts(struct ds_pipeline *pl, struct ds_pipeline_counts *c)
{
	c->copied = atomic_load(&pl->copied);
	c->dropped = atomic_load(&pl->dropped);
	c->processed = atomic_load(&pl->processed);
	c->queued_bytes = atomic_load(&pl->queued_bytes);
}

int ds_pipeline_finish(struct ds_pipeline *pl)
{
	int err;

	if (pl->joined)
		return pl->error;
	ds_pipeline_flush(pl);
	pthread_mutex_lock(&pl->lock);
	pl->closed = true;
	pthread_cond_signal(&pl->ready);
	pthread_mutex_unlock(&pl->lock);
	pthread_join(pl->worker, NULL);
	pl->joined = true;
	err = pl->error;
	return err;
}

void ds_pipeline_free(struct ds_pipeline *pl)
{
	if (!pl)
		return;
	ds_pipeline_finish(pl);
	batch_free(pl->filling);
	while (pl->spare) {
		struct batch *b = pl->spare;

		pl->spare = b->next;
		batch_free(b);
	}
	pthread_cond_destroy(&pl->ready);
	pthread_mutex_destroy(&pl->lock);
	free(pl);
}
