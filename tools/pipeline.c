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

struct entry {
	uint64_t time;
	size_t off;
};

static int by_time(const void *a, const void *b)
{
	const struct entry *x = a, *y = b;

	if (x->time != y->time)
		return x->time < y->time ? -1 : 1;
	/* Equal times keep their drain order (synthesized records are all
	 * time 0, and come in the order they must be applied). */
	return (x->off > y->off) - (x->off < y->off);
}

/* Put a batch in time order and process it. */
static int run_batch(struct ds_pipeline *pl, struct batch *b)
{
	struct entry *order;
	size_t n = 0;
	int err = 0;

	for (size_t off = 0; off < b->len; off += ((struct perf_event_header *)(b->data + off))->size)
		n++;
	order = malloc((n ? n : 1) * sizeof(*order));
	if (!order)
		return -ENOMEM;
	n = 0;
	for (size_t off = 0; off < b->len;) {
		struct pr_record rec;
		size_t size = ((struct perf_event_header *)(b->data + off))->size;

		/* The copy parses as the original did. */
		order[n].time = pr_reader_parse(pl->r, b->data + off, size, &rec) ? 0 : rec.time;
		order[n++].off = off;
		off += size;
	}
	qsort(order, n, sizeof(*order), by_time);
	for (size_t i = 0; i < n && !err; i++) {
		const struct perf_event_header *h = (const void *)(b->data + order[i].off);
		struct pr_record rec;

		if (pr_reader_parse(pl->r, h, h->size, &rec))
			continue;
		err = pl->process(&rec, pl->ctx);
		if (rec.type == PR_RECORD_SAMPLE)
			atomic_fetch_add(&pl->processed, 1);
	}
	free(order);
	return err < 0 ? err : 0;
}

static void *worker(void *arg)
{
	struct ds_pipeline *pl = arg;

	pthread_mutex_lock(&pl->lock);
	for (;;) {
		struct batch *b;
		int err;

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
		err = pl->error ? 0 : run_batch(pl, b);
		atomic_fetch_sub(&pl->queued_bytes, b->cap);
		pthread_mutex_lock(&pl->lock);
		if (err && !pl->error)
			pl->error = err;
		if (pl->nr_spare < MAX_SPARE) {
			b->len = 0;
			b->next = pl->spare;
			pl->spare = b;
			pl->nr_spare++;
		} else {
			batch_free(b);
		}
	}
	pthread_mutex_unlock(&pl->lock);
	return NULL;
}

struct ds_pipeline *ds_pipeline_new(const struct pr_reader *r, pr_record_fn process,
				    void *ctx, size_t max_bytes)
{
	struct ds_pipeline *pl = calloc(1, sizeof(*pl));
	sigset_t block, old;

	if (!pl)
		return NULL;
	pl->r = r;
	pl->process = process;
	pl->ctx = ctx;
	pl->max_bytes = max_bytes;
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

	if (rec->type != PR_RECORD_SAMPLE || !sm->stack || sm->stack_dyn_size >= sm->stack_size) {
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
		size_t waiting = atomic_load(&pl->queued_bytes) + before;

		if (waiting + h->size > pl->max_bytes) {
			atomic_fetch_add(&pl->dropped, 1);
			return 0;
		}
		atomic_fetch_add(&pl->copied, 1);
	}
	err = copy_record(pl, rec);
	if (!err)
		atomic_fetch_add(&pl->queued_bytes, pl->filling->cap - before);
	return err;
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
