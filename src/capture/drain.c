/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Reading an open reader: waiting on its poll set, noticing exited tasks,
 * and handing out records from the rings, pushed or pulled.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>

#include "capture/reader.h"

int pr_reader_fd(const struct pr_reader *r)
{
	return r ? r->epfd : -EINVAL;
}

/* An event reports EPOLLHUP once its task and every task that inherited it
 * have exited; it stays readable-with-HUP forever, so it leaves the set. */
static void drop_hung_up(struct pr_reader *r, const struct epoll_event *ev)
{
	struct pr_evfd *e = &r->evs[ev->data.u64];

	if (!e->polled)
		return;
	epoll_ctl(r->epfd, EPOLL_CTL_DEL, e->fd, NULL);
	e->polled = false;
	r->nr_live--;
}

/*
 * Waiting is also where exits are noticed.  Nothing else polls the event
 * fds: the kernel clears a ring's "data ready" flag whenever any of its
 * fds is polled, so a second poller would swallow wakeups meant for this
 * one (or for whoever polls pr_reader_fd()).
 */
int pr_reader_wait(struct pr_reader *r, int timeout_ms)
{
	struct epoll_event evs[64];
	int n, ready = 0;

	if (!r)
		return -EINVAL;
	if (r->kind != TARGET_CPUS && r->nr_live == 0)
		return 0;
	n = epoll_wait(r->epfd, evs, (int)PR_ARRAY_SIZE(evs), timeout_ms);
	if (n < 0)
		return -errno;
	for (int i = 0; i < n; i++) {
		/* A ring can signal data in the same report as its last
		 * task's exit. */
		if (evs[i].events & EPOLLIN)
			ready++;
		if (evs[i].events & (EPOLLHUP | EPOLLERR))
			drop_hung_up(r, &evs[i]);
	}
	return ready;
}

bool pr_reader_done(const struct pr_reader *r)
{
	return r && r->kind != TARGET_CPUS && r->nr_live == 0;
}

static int cmp_late(const void *a, const void *b)
{
	int x = ((const struct pr_late_thread *)a)->tid;
	int y = ((const struct pr_late_thread *)b)->tid;

	return (x > y) - (x < y);
}

/* Thread `tid`'s entry if it was found late (struct pr_late_thread). */
static const struct pr_late_thread *late_thread(const struct pr_reader *r, uint32_t tid)
{
	struct pr_late_thread key = { .tid = (int)tid };

	return r->nr_late ? bsearch(&key, r->late, r->nr_late, sizeof(key), cmp_late) : NULL;
}

/* A sample of a thread found late that came through an event inherited
 * from its creator rather than its own (see struct pr_late_thread). */
static bool is_duplicate(const struct pr_reader *r, const struct pr_record *rec)
{
	const struct pr_late_thread *t;

	/* The switch records of the off-CPU event come twice too. */
	if (!r->nr_late ||
	    (rec->type != PERF_RECORD_SAMPLE && rec->type != PERF_RECORD_SWITCH))
		return false;
	t = late_thread(r, rec->tid);
	if (!t)
		return false;
	for (size_t i = 0; i < t->n; i++)
		if (r->evs[t->first + i].id == rec->id)
			return false;
	return true;
}

void pr__reader_sort_late(struct pr_reader *r)
{
	if (r->nr_late)
		qsort(r->late, r->nr_late, sizeof(*r->late), cmp_late);
}

static int cmp_id_event(const void *a, const void *b)
{
	uint64_t x = ((const struct pr_id_event *)a)->id;
	uint64_t y = ((const struct pr_id_event *)b)->id;

	return (x > y) - (x < y);
}

/* The event that takes samples bearing an id not ours (reader.h): the
 * only sampling event of a kind whose samples may carry one. */
static void find_stray_event(struct pr_reader *r)
{
	r->stray_event = -1;
	for (size_t k = 0; k < r->nr_attrs; k++) {
		if (!pr__attr_takes_foreign_ids(&r->attrs[k]) || (k > 0 && k < r->nr_group))
			continue;
		if (r->stray_event >= 0) {
			r->stray_event = -1;
			return;
		}
		r->stray_event = (int)k;
	}
	for (size_t i = 0; r->stray_event >= 0 && i < r->nr_evs; i++)
		if (r->evs[i].event == r->stray_event) {
			r->stray_id = r->evs[i].id;
			return;
		}
	r->stray_event = -1;
}

int pr__reader_index_ids(struct pr_reader *r)
{
	if (r->nr_attrs < 2)
		return 0;
	r->id_events = calloc(r->nr_evs, sizeof(*r->id_events));
	if (!r->id_events)
		return -ENOMEM;
	for (size_t i = 0; i < r->nr_evs; i++)
		r->id_events[i] = (struct pr_id_event){ r->evs[i].id, r->evs[i].event };
	qsort(r->id_events, r->nr_evs, sizeof(*r->id_events), cmp_id_event);
	find_stray_event(r);
	return 0;
}

/* Inherited events report their parent's id, so the ids opened are every
 * id a record can carry. */
static int event_of_id(const struct pr_reader *r, uint64_t id)
{
	struct pr_id_event key = { .id = id };
	const struct pr_id_event *e;

	if (!r->id_events)
		return -ENOENT;
	e = bsearch(&key, r->id_events, r->nr_evs, sizeof(key), cmp_id_event);
	return e ? e->event : -ENOENT;
}

int pr_reader_event_of(const struct pr_reader *r, const struct pr_record *rec)
{
	if (!r || !rec)
		return -EINVAL;
	if (r->nr_attrs == 1)
		return 0;
	if (!(rec->fields & PR_ID_ID))
		return -ENOENT;
	return event_of_id(r, rec->id);
}

/* The event that wrote the record at `raw`: 0 with one event (or a record
 * without an id), else by the id several events carry
 * (PERF_SAMPLE_IDENTIFIER, PR_ATTR_SHARED_RING): the first word of a
 * sample, the last of any other record's sample_id.  -ENOENT for an id
 * this reader did not open: a sample's is another program's (reader.h). */
static int event_of_raw(const struct pr_reader *r, const void *raw, size_t size)
{
	const struct perf_event_header *h = raw;
	const unsigned char *p = raw;
	uint64_t id;

	if (r->nr_attrs == 1 || !r->id_events || size < sizeof(*h) + 8)
		return 0;
	if (h->type == PERF_RECORD_SAMPLE)
		memcpy(&id, p + sizeof(*h), 8);
	else if (r->cfgs[0].sample_id_all)
		memcpy(&id, p + size - 8, 8);
	else
		return 0;
	return event_of_id(r, id);
}

static bool is_sample(const void *raw)
{
	return ((const struct perf_event_header *)raw)->type == PERF_RECORD_SAMPLE;
}

const struct pr_parse_cfg *pr__reader_cfg_of(const struct pr_reader *r, const void *raw,
					     size_t size)
{
	int event = event_of_raw(r, raw, size);

	if (event < 0 && is_sample(raw))
		event = r->stray_event;
	return &r->cfgs[event < 0 ? 0 : event];
}

/*
 * An adopted switch sample's time in this reader's clock: the time of the
 * switch out the kernel writes next into the ring, for the same thread,
 * microseconds later.  The sample's own time is in the other program's
 * clock (perf's is not CLOCK_MONOTONIC unless it is run with -k), where
 * the switch records are ours, and the waits are told from the order of
 * the two.  False when the next record is not that switch out.
 */
static bool switch_out_after(const struct pr_reader *r, const struct pr_ring *ring, size_t size,
			     uint32_t tid, uint64_t *time)
{
	uint64_t buf[16];
	struct pr_record next;
	const char *why;
	size_t n = pr__ring_copy_after(ring, size, buf, sizeof(buf));

	if (!n || pr__record_parse(pr__reader_cfg_of(r, buf, n), buf, n, &next, &why) ||
	    next.type != PR_RECORD_SWITCH || !(next.misc & PERF_RECORD_MISC_SWITCH_OUT) ||
	    !(next.fields & PR_ID_TIME) || next.tid != tid)
		return false;
	*time = next.time;
	return true;
}

/* Where a sample of `t` (its sample_type) holds its time, in words after
 * the header. */
static size_t time_word(uint64_t t)
{
	return !!(t & PERF_SAMPLE_IDENTIFIER) + !!(t & PERF_SAMPLE_IP) + !!(t & PERF_SAMPLE_TID);
}

/* adopt_foreign_id()'s copy of the sample at `raw`, made the stray
 * event's, parsed into `rec`: false when it cannot be. */
static bool adopt(struct pr_reader *r, const struct pr_ring *ring, struct pr_record *rec,
		  const void *raw, size_t size)
{
	const struct pr_parse_cfg *cfg = &r->cfgs[r->stray_event];
	const char *why;
	uint64_t time;
	size_t used;

	if (!r->adopted && !(r->adopted = malloc(PR_MAX_RECORD_SIZE + 1)))
		return false;
	memcpy(r->adopted, raw, size);
	/* The reader's events carry PERF_SAMPLE_IDENTIFIER once there are
	 * several: the word after the header. */
	r->adopted[1] = r->stray_id;
	if (pr__sample_parse_used(cfg, r->adopted, size, rec, &why, &used) ||
	    late_thread(r, rec->tid))
		return false;
	((struct perf_event_header *)r->adopted)->size = (uint16_t)used;
	if ((cfg->sample_type & PERF_SAMPLE_TIME) &&
	    pr_event_source_of(&r->attrs[r->stray_event]) == PR_SOURCE_CONTEXT_SWITCH &&
	    switch_out_after(r, ring, size, rec->tid, &time))
		r->adopted[1 + time_word(cfg->sample_type)] = time;
	return !pr__record_parse(cfg, r->adopted, used, rec, &why);
}

/*
 * A sample in this reader's ring bearing an id this reader did not open
 * (reader.h, pr__attr_takes_foreign_ids()): it is the stray event's.  It
 * gets that event's id in a copy of its bytes (a ring's data pages
 * cannot be written), so a capture written from them names the right
 * event, and `rec` is parsed from the copy.  The kernel sized the record
 * for the other program's user registers and wrote this event's: what
 * is past the sample is cut.  A switch sample takes the time of the
 * switch out after it, which is in this reader's clock
 * (switch_out_after()).  False when no one event can be told to be its,
 * when the other program's registers were fewer (the sample is cut
 * short), or for a thread that may carry its creator's events too
 * (struct pr_late_thread: which of its samples is a duplicate cannot be
 * told): the sample is dropped, and counted.  The log says so, once.
 */
static bool adopt_foreign_id(struct pr_reader *r, struct pr_ring *ring, struct pr_record *rec,
			     const void *raw, size_t size)
{
	bool adopted = r->stray_event >= 0 && adopt(r, ring, rec, raw, size);

	if (!r->told_foreign) {
		uint64_t id;

		r->told_foreign = true;
		memcpy(&id, (const unsigned char *)raw + sizeof(struct perf_event_header), 8);
		pr__log(&r->lg, r->stray_event >= 0 ? PR_LOG_INFO : PR_LOG_WARN,
			"samples on CPU %d carry the id %llu of an event this program did not "
			"open: another program samples the same software event on the same "
			"threads, and this kernel gives both programs' samples one id; %s",
			ring->cpu, (unsigned long long)id,
			r->stray_event >= 0
				? "they are counted as this program's own (it samples no other "
				  "event of that kind)"
				: "which of this program's events took them cannot be told, so "
				  "they are dropped; stop the other program, or sample one "
				  "software event at a time");
	}
	pr__ring_count_foreign(ring, adopted);
	return adopted;
}

/* A call chain's entries the kernel counts against its depth limit:
 * the context markers (PERF_CONTEXT_USER...) are not. */
static uint64_t chain_entries(const struct pr_sample *s)
{
	uint64_t n = 0;

	for (uint64_t i = 0; i < s->nr_callchain; i++)
		n += s->callchain[i] < (uint64_t)PERF_CONTEXT_MAX;
	return n;
}

/* Take the next record of `ring`'s snapshot into `rec`: 1, 0 when drained,
 * or -EBADMSG (logged; the bad bytes are skipped). */
static int take_record(struct pr_reader *r, struct pr_ring *ring,
		       struct pr_record *rec, size_t *size)
{
	const void *p;
	const char *why = NULL;
	int n, event;

	for (;;) {
		n = pr__ring_peek(ring, &p, size, &r->lg);
		if (n <= 0)
			return n;
		event = event_of_raw(r, p, *size);
		if (event < 0 && is_sample(p)) {
			if (adopt_foreign_id(r, ring, rec, p, *size))
				break;
			pr__ring_advance(ring, *size);
			continue;
		}
		if (pr__record_parse(&r->cfgs[event < 0 ? 0 : event], p, *size, rec, &why)) {
			pr__log(&r->lg, PR_LOG_ERROR,
				"corrupt %s record on CPU %d at ring offset %llu: %s; record skipped",
				pr_record_type_name(rec->type), ring->cpu,
				(unsigned long long)(ring->tail & (ring->data_size - 1)), why);
			pr__ring_count_corrupt(ring, *size);
			pr__ring_advance(ring, *size);
			return -EBADMSG;
		}
		if (!is_duplicate(r, rec))
			break;
		pr__ring_count_duplicate(ring);
		pr__ring_advance(ring, *size);
	}
	rec->ring_cpu = ring->cpu;
	pr__ring_count(ring, rec);
	/* A chain whose last entry is 0 did not stop for the limit: the
	 * walk went round frame pointers of code that keeps none (rbp
	 * pointing at a word that holds its own address, and a 0 after it:
	 * a process's exit in libc, under load), and a higher limit would
	 * only add zeros. */
	if (rec->type == PR_RECORD_SAMPLE && r->max_stack &&
	    rec->u.sample.nr_callchain >= r->max_stack &&
	    rec->u.sample.callchain[rec->u.sample.nr_callchain - 1] &&
	    chain_entries(&rec->u.sample) >= r->max_stack)
		pr__ring_count_chain_at_limit(ring);
	return 1;
}

static void release_pending(struct pr_reader *r)
{
	if (r->pending) {
		pr__ring_advance(r->pending, r->pending_size);
		r->pending = NULL;
	}
}

int pr_reader_consume(struct pr_reader *r, pr_record_fn cb, void *ctx)
{
	struct pr_record rec;
	int count = 0, bad = 0;

	if (!r || !cb)
		return -EINVAL;
	release_pending(r);
	for (size_t i = 0; i < r->nr_rings; i++) {
		struct pr_ring *ring = &r->rings[i];
		size_t size;
		int n;

		pr__ring_refresh(ring);
		while ((n = take_record(r, ring, &rec, &size)) != 0) {
			if (n == -EBADMSG) {
				bad = n;
				continue;
			}
			if (n < 0)
				return n;
			n = cb(&rec, ctx);
			pr__ring_advance(ring, size);
			count++;
			if (n < 0)
				return n;
		}
	}
	return bad ? bad : count;
}

static int add_to_order(const struct pr_record *rec, void *o)
{
	return pr_order_add(o, rec);
}

int pr_reader_consume_ordered(struct pr_reader *r, struct pr_order *o,
			      pr_record_fn cb, void *ctx)
{
	int drained, n;

	if (!r || !o || !cb)
		return -EINVAL;
	drained = pr_reader_consume(r, add_to_order, o);
	if (drained < 0 && drained != -EBADMSG)
		return drained;
	n = pr_order_round(o);
	if (!n)
		n = pr_order_deliver(o, cb, ctx);
	return n < 0 || drained >= 0 ? n : drained;
}

int pr_reader_parse(const struct pr_reader *r, const void *raw, size_t size,
		    struct pr_record *rec)
{
	const struct perf_event_header *h = raw;
	const char *why;

	if (!r || !raw || !rec || (uintptr_t)raw % 8 || size < sizeof(*h) || h->size != size)
		return -EINVAL;
	if (pr__record_parse(pr__reader_cfg_of(r, raw, size), raw, size, rec, &why))
		return -EBADMSG;
	rec->ring_cpu = -1;
	return 0;
}

int pr_reader_poll(struct pr_reader *r, int timeout_ms, pr_record_fn cb,
		   void *ctx)
{
	int err = pr_reader_wait(r, timeout_ms);

	if (err < 0 && err != -EINTR)
		return err;
	return pr_reader_consume(r, cb, ctx);
}

int pr_reader_read(struct pr_reader *r, struct pr_record *rec)
{
	if (!r || !rec)
		return -EINVAL;
	release_pending(r);
	if (!r->nr_rings)
		return 0;
	/* Drain the current ring's snapshot, then move on and take a fresh
	 * snapshot of the next: every ring gets its turn under load. */
	for (size_t visited = 0; visited <= r->nr_rings; visited++) {
		struct pr_ring *ring = &r->rings[r->cur];
		size_t size;
		int n = take_record(r, ring, rec, &size);

		if (n > 0) {
			r->pending = ring;
			r->pending_size = size;
			return 1;
		}
		if (n < 0)
			return n;
		r->cur = (r->cur + 1) % r->nr_rings;
		pr__ring_refresh(&r->rings[r->cur]);
	}
	return 0;
}

int pr_reader_ring_stats(const struct pr_reader *r, size_t idx,
			 struct pr_ring_stats *st)
{
	if (!r || idx >= r->nr_rings || !st || st->sz < sizeof(size_t))
		return -EINVAL;
	pr__ring_stats_load(&r->rings[idx], st);
	return 0;
}

uint32_t pr_reader_max_stack(const struct pr_reader *r)
{
	return r ? r->max_stack : 0;
}

uint64_t pr_reader_lost(const struct pr_reader *r)
{
	uint64_t lost = 0;

	for (size_t i = 0; r && i < r->nr_rings; i++)
		lost += __atomic_load_n(&r->rings[i].stats.lost, __ATOMIC_RELAXED);
	return lost;
}
