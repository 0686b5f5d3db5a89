/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Records in time order: perf's round rule over one heap.  Used by the
 * perf.data walk (a round ends at each FINISHED_ROUND) and by pr_order
 * (records/order.c: a round ends after each drain of every ring).
 *
 * Why the rule holds.  Within one ring the kernel writes records in the
 * order it stamps them, but rings are drained one after another, so a
 * round can bring a record later than one another ring still holds and
 * the next round will bring.  A record that round k+1 (or a later one)
 * brings was not yet written when round k began, since round k reads
 * every ring up to the head it finds; every record of rounds 1..k-1 was
 * stamped before then.  So when round k ends, everything up to M(k-1),
 * the latest time of rounds 1..k-1, can go out: only about two rounds of
 * records are held.
 *
 * The bound.  A record is delivered in order when it is read no later
 * than the round after the first round that read a record stamped later
 * than it; on a live reader, one drain interval (perf record's guarantee
 * for its own files).  A record read later still — a ring the reader did
 * not get to, a file written by a tool that broke the rule — is not
 * dropped: it goes out with the next records that may, first since it is
 * the oldest, and counts in `late`.
 *
 * Ties keep the order records came in: synthesized records all have time
 * 0 and must be applied in the order they were made.
 */
#include <errno.h>
#include <stdlib.h>

#include "records/records.h"

static bool before(const struct pr_timed *a, const struct pr_timed *b)
{
	return a->time < b->time || (a->time == b->time && a->seq < b->seq);
}

static void swap(struct pr_timed *a, struct pr_timed *b)
{
	struct pr_timed t = *a;

	*a = *b;
	*b = t;
}

int pr__timeq_push(struct pr_timeq *q, uint64_t time, uintptr_t ref, void *owner)
{
	struct pr_timed *h;
	size_t i;

	if (PR_ARRAY_RESERVE(q->heap, q->cap, q->nr + 1))
		return -ENOMEM;
	h = q->heap;
	i = q->nr++;
	h[i] = (struct pr_timed){ time, q->seq++, ref, owner };
	for (; i && before(&h[i], &h[(i - 1) / 2]); i = (i - 1) / 2)
		swap(&h[i], &h[(i - 1) / 2]);
	if (time > q->max_time)
		q->max_time = time;
	return 0;
}

void pr__timeq_round(struct pr_timeq *q)
{
	q->limit = q->round_mark;
	q->round_mark = q->max_time;
}

bool pr__timeq_pop(struct pr_timeq *q, bool all, struct pr_timed *out)
{
	struct pr_timed *h = q->heap;
	size_t i = 0, n;

	if (!q->nr || (!all && h[0].time > q->limit))
		return false;
	*out = h[0];
	n = --q->nr;
	h[0] = h[n];
	for (;;) {
		size_t l = 2 * i + 1, r = l + 1, m = i;

		if (l < n && before(&h[l], &h[m]))
			m = l;
		if (r < n && before(&h[r], &h[m]))
			m = r;
		if (m == i)
			break;
		swap(&h[i], &h[m]);
		i = m;
	}
	if (out->time < q->last_out)
		q->late++;
	else
		q->last_out = out->time;
	return true;
}

void pr__timeq_reset(struct pr_timeq *q)
{
	struct pr_timed *heap = q->heap;
	size_t cap = q->cap;

	*q = (struct pr_timeq){ .heap = heap, .cap = cap };
}

void pr__timeq_free(struct pr_timeq *q)
{
	free(q->heap);
	*q = (struct pr_timeq){ 0 };
}
