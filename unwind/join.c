/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Joining stacks cut by the copy: each thread's last complete stack is
 * kept, frame by frame with the return address and stack address each
 * frame was found at.  A later stack of the thread that the copy cut is
 * completed from it when its outermost frame is one of the kept ones:
 * the same return address at the same stack address is the same
 * activation, whose callers are the kept frames beyond it -- as long as
 * it has not returned since.  Every sample says what has: a frame at or
 * below its stack pointer is gone, and is forgotten.
 *
 * What this cannot see is a return and a new call to the same place
 * between two samples: the same function called again from the same
 * call site at the same depth, by callers that differ.  The tests and
 * BENCHMARKS.md ("Joining truncated stacks") measure how often that
 * happens against the full copies of the same samples.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "model/model.h"
#include "unwind-int.h"

/* Threads whose last stack is kept, and the bytes of stack kept for
 * them in all; past either the least recently sampled goes. */
#define MAX_THREADS 4096
#define MAX_BYTES ((size_t)64 << 20)

struct uw_jframe {
	struct pr_frame f;
	uint64_t pc, sp;
};

struct uw_jthread {
	uint32_t tid;
	uint64_t last_use;
	/* The outer part of its last complete stack still live: innermost
	 * first, the outermost frame last. */
	struct uw_jframe *fr;
	size_t nr, cap;
	/* The stack's bytes from its first frame's stack address to its
	 * outermost frame's: the frames' own. */
	uint8_t *bytes;
	uint64_t lo, hi;
};

struct uw_joiner {
	const struct pr_model *model;
	struct pr_hashmap threads;   /* tid -> struct uw_jthread */
	uint64_t tick;
	size_t bytes;                /* of the threads' stacks */
};

struct uw_joiner *uw_joiner_new(const struct pr_model *model)
{
	struct uw_joiner *j = calloc(1, sizeof(*j));

	if (j)
		j->model = model;
	return j;
}

static void thread_free(struct uw_joiner *j, struct uw_jthread *t)
{
	j->bytes -= t->hi - t->lo;
	free(t->bytes);
	free(t->fr);
	free(t);
}

void uw_joiner_free(struct uw_joiner *j)
{
	if (!j)
		return;
	for (size_t i = 0; i < j->threads.cap; i++)
		if (j->threads.slots[i].value)
			thread_free(j, j->threads.slots[i].value);
	pr__hashmap_free(&j->threads);
	free(j);
}

static void evict_oldest(struct uw_joiner *j, const struct uw_jthread *not)
{
	struct uw_jthread *oldest = NULL;

	for (size_t i = 0; i < j->threads.cap; i++) {
		struct uw_jthread *t = j->threads.slots[i].value;

		if (t && t != not && (!oldest || t->last_use < oldest->last_use))
			oldest = t;
	}
	if (oldest) {
		pr__hashmap_del(&j->threads, oldest->tid);
		thread_free(j, oldest);
	}
}

static struct uw_jthread *thread_new(struct uw_joiner *j, uint32_t tid)
{
	struct uw_jthread *t;

	if (j->threads.n >= MAX_THREADS)
		evict_oldest(j, NULL);
	t = calloc(1, sizeof(*t));
	if (!t)
		return NULL;
	t->tid = tid;
	if (pr__hashmap_put(&j->threads, tid, t)) {
		free(t);
		return NULL;
	}
	return t;
}

static void forget(struct uw_joiner *j, struct uw_jthread *t)
{
	j->bytes -= t->hi - t->lo;
	free(t->bytes);
	t->bytes = NULL;
	t->lo = t->hi = 0;
	t->nr = 0;
}

/* Keep frames [from, to) of the stack just unwound as the thread's, and
 * their bytes: from the sample's copy, and beyond it (the frames joined)
 * from what was kept. */
static void keep(struct uw_joiner *j, struct uw_jthread *t, const struct uw_stack_regs *s,
		 const struct uw_copy *copy, size_t from, size_t to)
{
	uint64_t lo = s->sps[from], hi = s->sps[to - 1], end = copy->addr + copy->size;
	size_t n = to - from;
	uint8_t *bytes;

	if (hi < lo || lo < copy->addr || end < lo || (hi > end && (end < t->lo || hi > t->hi)) ||
	    !(bytes = malloc(hi - lo ? hi - lo : 1))) {
		forget(j, t);
		return;
	}
	if (hi > lo && hi <= end) {
		memcpy(bytes, copy->data + (lo - copy->addr), hi - lo);
	} else if (hi > end) {
		if (end > lo)
			memcpy(bytes, copy->data + (lo - copy->addr), end - lo);
		memcpy(bytes + (end - lo), t->bytes + (end - t->lo), hi - end);
	}
	if (n > t->cap) {
		struct uw_jframe *fr = realloc(t->fr, n * sizeof(*fr));

		if (!fr) {
			free(bytes);
			forget(j, t);
			return;
		}
		t->fr = fr;
		t->cap = n;
	}
	forget(j, t);
	t->bytes = bytes;
	t->lo = lo;
	t->hi = hi;
	j->bytes += hi - lo;
	for (size_t i = 0; i < n; i++)
		t->fr[i] = (struct uw_jframe){ s->frames[from + i], s->pcs[from + i],
					       s->sps[from + i] };
	t->nr = n;
	while (j->bytes > MAX_BYTES && j->threads.n > 1)
		evict_oldest(j, t);
}

/*
 * Whether the cut stack's outermost frame (`last`) is the kept frame
 * `at`: the same return address at the same stack address, and the bytes
 * both have of it -- from its stack address to where the copy ends --
 * the same.  A frame suspended in a call keeps its bytes while it waits;
 * another activation of the same function at the same place, reached
 * through other callers, holds other values (arguments, saved registers,
 * locals) nearly always.  The copy often ends right at the frame's stack
 * address, leaving none of its bytes: then its callee's frame, when the
 * thread's kept stack has it too (the same return address, the same
 * stack address), is the evidence -- the same activation of the callee
 * has the same caller.  No bytes to compare, no join.
 */
static bool same_frame(const struct uw_jthread *t, size_t at, const struct uw_stack_regs *s,
		       size_t first, size_t last, const struct uw_copy *copy)
{
	uint64_t lo = s->sps[last], hi = copy->addr + copy->size;

	if (t->fr[at].sp != lo || t->fr[at].pc != s->pcs[last])
		return false;
	if (hi > t->fr[at + 1].sp)
		hi = t->fr[at + 1].sp;
	if (hi <= lo && last > first && at > 0 && t->fr[at - 1].sp == s->sps[last - 1] &&
	    t->fr[at - 1].pc == s->pcs[last - 1])
		lo = s->sps[last - 1];
	if (hi <= lo || lo < copy->addr || lo < t->lo || hi > t->hi)
		return false;
	return !memcmp(copy->data + (lo - copy->addr), t->bytes + (lo - t->lo), hi - lo);
}

size_t uw_join(struct uw_joiner *j, uint32_t tid, struct uw_stack_regs *s,
	       const struct uw_copy *copy, size_t first, size_t *nr, size_t max_nr,
	       enum pr_stack_end *end)
{
	struct uw_jthread *t = pr__hashmap_get(&j->threads, tid);
	size_t last = *nr - 1, added = 0, at = 0, gone = 0;

	if (*nr <= first)
		return 0;
	if (t) {
		t->last_use = ++j->tick;
		/* Another process under the same tid (an exec, a reused
		 * tid) has other stacks. */
		if (t->nr && t->fr[0].f.proc_serial != s->frames[first].proc_serial)
			forget(j, t);
		/* What this sample's stack pointer is above of has
		 * returned. */
		while (gone < t->nr && t->fr[gone].sp <= s->sps[first])
			gone++;
		if (gone) {
			memmove(t->fr, t->fr + gone, (t->nr - gone) * sizeof(*t->fr));
			t->nr -= gone;
		}
	}
	if (*end == PR_END_TRUNCATED && t && t->nr) {
		while (at < t->nr && t->fr[at].sp < s->sps[last])
			at++;
		if (at + 1 < t->nr && same_frame(t, at, s, first, last, copy)) {
			size_t n = t->nr - at - 1;

			*end = PR_END_OUTERMOST;
			if (*nr + n > max_nr) {
				n = max_nr - *nr;
				*end = PR_END_DEPTH;
			}
			for (size_t i = 0; i < n; i++) {
				const struct uw_jframe *from = &t->fr[at + 1 + i];

				s->frames[*nr + i] = from->f;
				s->frames[*nr + i].flags |= PR_FRAME_JOINED;
				s->pcs[*nr + i] = from->pc;
				s->sps[*nr + i] = from->sp;
			}
			*nr += n;
			added = n;
		}
	}
	/* Only a stack that reached its outermost frame tells the callers
	 * of every frame in it. */
	if (*end == PR_END_OUTERMOST) {
		if (!t) {
			t = thread_new(j, tid);
			if (t)
				t->last_use = ++j->tick;
		}
		if (t)
			keep(j, t, s, copy, first, *nr);
	}
	return added;
}

static bool thread_stays(uint64_t key, void *value, void *arg)
{
	struct uw_joiner *j = arg;
	struct uw_jthread *t = value;

	if (pr__hashmap_get(&j->model->threads, key)) {
		size_t i = 0;

		/* Frames point at their files' DSOs, which go at this trim. */
		while (i < t->nr && (!t->fr[i].f.dso || !t->fr[i].f.dso->going))
			i++;
		if (i == t->nr)
			return true;
	}
	thread_free(arg, t);
	return false;
}

void uw_joiner_trim(struct uw_joiner *j)
{
	pr__hashmap_filter(&j->threads, thread_stays, j);
}
