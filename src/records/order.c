/* SPDX-License-Identifier: Apache-2.0 */
/*
 * pr_order: copies of a reader's records, handed out in time order by the
 * round rule of timeq.c.  One thread adds and ends rounds, another may
 * deliver: each round's copies go into a buffer of their own, which the
 * adding thread alone writes until the round ends and the delivering
 * thread alone reads after, so the two take a lock once a round, never
 * per record.
 *
 * Each copy carries the time it was added with, so delivering never
 * parses a record to learn its time; it parses each once, to hand it out.
 */
#include <errno.h>
#include <pthread.h>
#include <stdalign.h>
#include <stdatomic.h>
#include <stdlib.h>

#include "records/records.h"

/* What precedes each copy in a round's buffer: 16 bytes, so the copy
 * stays 8-byte aligned as in the ring. */
struct held {
	uint64_t time;
	int32_t ring_cpu;
	uint32_t size;               /* of the copy that follows */
};

/* One round's copies, back to back. */
struct round {
	struct round *next;
	unsigned char *data;
	size_t len, cap;
	size_t left;                 /* copies not yet delivered */
};

/* Buffers kept for reuse: a fresh one each round cost a page fault per
 * 4 KiB, more than the copy itself. */
#define MAX_SPARE 4
#define FIRST_CAP ((size_t)256 << 10)

struct pr_order {
	struct pr_parse_cfg cfg;
	struct pr_logger lg;

	pthread_mutex_t lock;
	struct round *closed, **closed_tail;  /* ended, not yet merged */
	struct round *spare;
	int nr_spare;

	/* The adding thread's.  Its counters and the delivering thread's
	 * sit on cache lines of their own: each thread writes one of them
	 * per record, and a shared line would bounce between the cores on
	 * every write. */
	alignas(64) struct round *cur;
	uint64_t prev_time;
	_Atomic uint64_t added, bytes_in;

	/* The delivering thread's. */
	alignas(64) struct pr_timeq q;
	_Atomic uint64_t delivered, bytes_out, late, corrupt, dropped;
};

struct pr_order *pr_order_new(const struct perf_event_attr *attr,
			      const struct pr_order_opts *opts)
{
	struct pr_order *o;

	if (!attr || !PR_OPTS_VALID(opts)) {
		errno = EINVAL;
		return NULL;
	}
	o = aligned_alloc(64, (sizeof(*o) + 63) & ~(size_t)63);
	if (!o)
		return NULL;
	memset(o, 0, sizeof(*o));
	pr__parse_cfg_from_attr(&o->cfg, attr);
	o->lg.fn = PR_OPTS_GET(opts, log, NULL);
	o->lg.ctx = PR_OPTS_GET(opts, log_ctx, NULL);
	o->closed_tail = &o->closed;
	pthread_mutex_init(&o->lock, NULL);
	return o;
}

static void round_free(struct round *b)
{
	if (b) {
		free(b->data);
		free(b);
	}
}

static struct round *take_round(struct pr_order *o)
{
	struct round *b;

	pthread_mutex_lock(&o->lock);
	b = o->spare;
	if (b) {
		o->spare = b->next;
		o->nr_spare--;
		b->next = NULL;
	}
	pthread_mutex_unlock(&o->lock);
	return b ? b : calloc(1, sizeof(*b));
}

static void give_back(struct pr_order *o, struct round *b)
{
	pthread_mutex_lock(&o->lock);
	if (o->nr_spare < MAX_SPARE) {
		b->len = 0;
		b->next = o->spare;
		o->spare = b;
		o->nr_spare++;
		b = NULL;
	}
	pthread_mutex_unlock(&o->lock);
	round_free(b);
}

/* Room for `size` more bytes in the round being filled.  Growing it may
 * move it: nothing points into it until the round ends. */
static unsigned char *room(struct pr_order *o, size_t size)
{
	struct round *b = o->cur;
	unsigned char *at;

	if (!b && !(b = o->cur = take_round(o)))
		return NULL;
	if (b->len + size > b->cap) {
		size_t cap = b->cap ? b->cap * 2 : FIRST_CAP;
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
 * The bytes a sample's copy keeps of its stack: up to dyn_size rounded up
 * to 8 (the rest of the reserved size is zeros past the top of the stack,
 * and copying it was most of the cost), or to `max` rounded up to 8 when
 * that is less: then 8 bytes more are kept, unread, so that the copy says
 * it was cut (*cut: its stack_size is its dyn_size plus 8; rounding
 * dyn_size up adds less).  0: keep the record whole (a stack of size 0
 * has no dyn_size field).
 */
static size_t stack_kept(const struct pr_record *rec, uint64_t max, bool *cut)
{
	const struct pr_sample *sm = &rec->u.sample;
	uint64_t keep;

	*cut = false;
	if (rec->type != PR_RECORD_SAMPLE || !sm->stack || !sm->stack_dyn_size)
		return 0;
	max = max < 8 ? 8 : max;
	if (max < sm->stack_dyn_size && ((max + 7) & ~(uint64_t)7) + 8 < sm->stack_size) {
		max = (max + 7) & ~(uint64_t)7;
		*cut = true;
		return (size_t)max;
	}
	keep = (sm->stack_dyn_size + 7) & ~(uint64_t)7;
	return keep < sm->stack_size ? (size_t)keep : 0;
}

/* Copy a sample cut to `keep` stack bytes read (`cut`: by the caller, and
 * 8 unread bytes more).  It stays well formed (its stack size field says
 * the new size, its dyn_size what of it was read), so it parses as
 * before: ... u64 size, stack[size], u64 dyn_size, then the fields
 * after. */
static void copy_cut(unsigned char *at, const struct pr_record *rec, size_t keep, bool cut,
		     size_t size)
{
	const struct pr_sample *sm = &rec->u.sample;
	const unsigned char *raw = rec->raw;
	size_t head = (size_t)(sm->stack - raw) - 8;
	size_t tail = (size_t)(sm->stack - raw) + sm->stack_size + 8;
	size_t room = keep + (cut ? 8 : 0);
	uint64_t v = room, dyn = cut ? keep : sm->stack_dyn_size;

	memcpy(at, raw, head);
	((struct perf_event_header *)at)->size = (uint16_t)size;
	memcpy(at + head, &v, 8);
	memcpy(at + head + 8, sm->stack, dyn);
	memset(at + head + 8 + dyn, 0, room - dyn);
	v = dyn;
	memcpy(at + head + 8 + room, &v, 8);
	memcpy(at + head + 16 + room, raw + tail, rec->size - tail);
}

int pr_order_add(struct pr_order *o, const struct pr_record *rec)
{
	return pr_order_add_cut(o, rec, UINT64_MAX);
}

int pr_order_add_cut(struct pr_order *o, const struct pr_record *rec, uint64_t max_stack)
{
	size_t keep, size;
	struct held *h;
	bool cut;

	if (!o || !rec || !rec->raw || rec->size < sizeof(struct perf_event_header))
		return -EINVAL;
	keep = stack_kept(rec, max_stack, &cut);
	size = keep ? rec->size - rec->u.sample.stack_size + keep + (cut ? 8 : 0) : rec->size;
	h = (struct held *)room(o, sizeof(*h) + size);
	if (!h)
		return -ENOMEM;
	if (rec->fields & PR_ID_TIME)
		o->prev_time = rec->time;
	h->time = o->prev_time;
	h->ring_cpu = rec->ring_cpu;
	h->size = (uint32_t)size;
	if (keep)
		copy_cut((unsigned char *)(h + 1), rec, keep, cut, size);
	else
		memcpy(h + 1, rec->raw, size);
	atomic_fetch_add_explicit(&o->added, 1, memory_order_relaxed);
	atomic_fetch_add_explicit(&o->bytes_in, sizeof(*h) + size, memory_order_relaxed);
	return 0;
}

int pr_order_round(struct pr_order *o)
{
	struct round *b;

	if (!o)
		return -EINVAL;
	/* An empty round ends too: it is what lets the last records go
	 * when nothing new arrives. */
	b = o->cur ? o->cur : take_round(o);
	if (!b)
		return -ENOMEM;
	o->cur = NULL;
	pthread_mutex_lock(&o->lock);
	*o->closed_tail = b;
	o->closed_tail = &b->next;
	pthread_mutex_unlock(&o->lock);
	return 0;
}

/* Put the ended rounds' copies in the heap, a round at a time. */
static int merge_closed(struct pr_order *o)
{
	struct round *b, *next;
	int err = 0;

	pthread_mutex_lock(&o->lock);
	b = o->closed;
	o->closed = NULL;
	o->closed_tail = &o->closed;
	pthread_mutex_unlock(&o->lock);
	for (; b; b = next) {
		next = b->next;
		for (size_t off = 0; off < b->len;) {
			struct held *h = (struct held *)(b->data + off);

			if (!err)
				err = pr__timeq_push(&o->q, h->time, (uintptr_t)h, b);
			if (!err) {
				b->left++;
			} else {
				/* Out of memory: the rest is dropped, and
				 * counted. */
				atomic_fetch_add_explicit(&o->dropped, 1, memory_order_relaxed);
				atomic_fetch_add_explicit(&o->bytes_out, sizeof(*h) + h->size,
							  memory_order_relaxed);
			}
			off += sizeof(*h) + h->size;
		}
		if (!err)
			pr__timeq_round(&o->q);
		if (!b->left)
			give_back(o, b);
	}
	return err;
}

/* Hand out what may go (all when `all`); -errno stops. */
/*
 * The records were copied on another thread, so their lines are in
 * another core's cache: the next one's are fetched while this one is
 * handled.  Its first lines (header, registers, the stack's top, which
 * the unwinder reads first) as soon as it is known; once its header has
 * come, its last line (a sample's dyn_size, read to parse it).
 */
static const struct held *next_held(const struct pr_order *o)
{
	return o->q.nr ? (const struct held *)o->q.heap[0].ref : NULL;
}

static void fetch_head(const struct held *h)
{
	if (h) {
		__builtin_prefetch(h);
		__builtin_prefetch((const char *)h + 64);
		__builtin_prefetch((const char *)h + 128);
		__builtin_prefetch((const char *)h + 192);
	}
}

static void fetch_tail(const struct held *h)
{
	if (h && h->size > 256)
		__builtin_prefetch((const char *)(h + 1) + h->size - 8);
}

static int deliver(struct pr_order *o, bool all, pr_record_fn cb, void *ctx)
{
	struct pr_timed e;
	int count = 0, err = merge_closed(o);

	while (!err && pr__timeq_pop(&o->q, all, &e)) {
		const struct held *h = (const struct held *)e.ref;
		const struct held *next = next_held(o);
		struct round *b = e.owner;
		struct pr_record rec;
		const char *why = NULL;

		fetch_head(next);

		if (pr__record_parse(&o->cfg, h + 1, h->size, &rec, &why)) {
			pr__log(&o->lg, PR_LOG_ERROR, "a copied %s record does not parse: "
				"%s; record skipped", pr_record_type_name(rec.type), why);
			atomic_fetch_add_explicit(&o->corrupt, 1, memory_order_relaxed);
		} else {
			rec.ring_cpu = h->ring_cpu;
			err = cb(&rec, ctx);
			count++;
		}
		fetch_tail(next);
		atomic_fetch_add_explicit(&o->delivered, 1, memory_order_relaxed);
		atomic_fetch_add_explicit(&o->bytes_out, sizeof(*h) + h->size,
					  memory_order_relaxed);
		if (!--b->left)
			give_back(o, b);
	}
	atomic_store_explicit(&o->late, o->q.late, memory_order_relaxed);
	return err < 0 ? err : count;
}

int pr_order_deliver(struct pr_order *o, pr_record_fn cb, void *ctx)
{
	if (!o || !cb)
		return -EINVAL;
	return deliver(o, false, cb, ctx);
}

int pr_order_flush(struct pr_order *o, pr_record_fn cb, void *ctx)
{
	int err;

	if (!o || !cb)
		return -EINVAL;
	err = pr_order_round(o);
	return err ? err : deliver(o, true, cb, ctx);
}

int pr_order_stats(const struct pr_order *o, struct pr_order_stats *st)
{
	struct pr_order_stats s = { .sz = sizeof(s) };
	uint64_t out;

	if (!o)
		return -EINVAL;
	/* What left before what came: a reader on a third thread never sees
	 * more gone out than came in. */
	s.delivered = atomic_load_explicit(&o->delivered, memory_order_acquire);
	out = atomic_load_explicit(&o->bytes_out, memory_order_acquire);
	s.late = atomic_load_explicit(&o->late, memory_order_relaxed);
	s.corrupt = atomic_load_explicit(&o->corrupt, memory_order_relaxed);
	s.dropped = atomic_load_explicit(&o->dropped, memory_order_acquire);
	s.added = atomic_load_explicit(&o->added, memory_order_acquire);
	s.held_bytes = atomic_load_explicit(&o->bytes_in, memory_order_acquire) - out;
	s.held = s.added - s.delivered - s.dropped;
	return pr__stats_copy(st, &s, sizeof(s));
}

void pr_order_free(struct pr_order *o)
{
	struct pr_timed e;

	if (!o)
		return;
	while (pr__timeq_pop(&o->q, true, &e)) {
		struct round *b = e.owner;

		if (!--b->left)
			round_free(b);
	}
	pr__timeq_free(&o->q);
	round_free(o->cur);
	while (o->closed) {
		struct round *b = o->closed;

		o->closed = b->next;
		round_free(b);
	}
	while (o->spare) {
		struct round *b = o->spare;

		o->spare = b->next;
		round_free(b);
	}
	pthread_mutex_destroy(&o->lock);
	free(o);
}
