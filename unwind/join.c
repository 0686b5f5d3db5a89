/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Joining stacks cut by the copy: each thread's last complete stack is
 * kept, frame by frame with the return address and stack address each
 * frame was found at.  A later stack of the thread that the copy cut may
 * be completed from it when its outermost frame is one of the kept ones
 * (the same return address at the same stack address) -- but only on
 * evidence that the kept frames beyond it are still the thread's.
 *
 * The same address is no such evidence: between two samples the thread
 * may have returned above the cut and called the same code again, from
 * the same call site at the same depth, through other callers.  A parser
 * called by three request handlers does that all the time, and its
 * frames can hold the same bytes and registers whoever called it: then
 * nothing a sample carries below the cut (its copy, its registers) can
 * tell the callers apart, and any rule built on them joins wrongly
 * (tests/agree-workload's "callers": 62 % of the joins were wrong when
 * the bytes were the evidence; BENCHMARKS.md, "Joining truncated
 * stacks").
 *
 * The evidence used is the sample's own user call chain, the kernel's
 * frame-pointer walk (PERF_SAMPLE_CALLCHAIN past PERF_CONTEXT_USER),
 * when it has one: it is read at the sample, beyond the copy.  The cut
 * stack's two outermost frames fix where the chain stands against the
 * unwound frames, and every kept frame joined must be the chain's entry
 * at the same depth.  Where the chain ends first (its depth limit) the
 * stack is joined as far as the chain confirms and stays truncated;
 * where it disagrees (code without frame pointers garbles it), or there
 * is none, there is no join.  Every sample also says what has returned:
 * a kept frame at or below its stack pointer is gone, and is forgotten.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "model/model.h"
#include "unwind-int.h"

/* Threads whose last stack is kept; past that the least recently
 * sampled goes. */
#define MAX_THREADS 4096

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
};

struct uw_joiner {
	const struct pr_model *model;
	struct pr_hashmap threads;   /* tid -> struct uw_jthread */
	uint64_t tick;
};

struct uw_joiner *uw_joiner_new(const struct pr_model *model)
{
	struct uw_joiner *j = calloc(1, sizeof(*j));

	if (j)
		j->model = model;
	return j;
}

static void thread_free(struct uw_jthread *t)
{
	free(t->fr);
	free(t);
}

void uw_joiner_free(struct uw_joiner *j)
{
	if (!j)
		return;
	for (size_t i = 0; i < j->threads.cap; i++)
		if (j->threads.slots[i].value)
			thread_free(j->threads.slots[i].value);
	pr__hashmap_free(&j->threads);
	free(j);
}

static void evict_oldest(struct uw_joiner *j)
{
	struct uw_jthread *oldest = NULL;

	for (size_t i = 0; i < j->threads.cap; i++) {
		struct uw_jthread *t = j->threads.slots[i].value;

		if (t && (!oldest || t->last_use < oldest->last_use))
			oldest = t;
	}
	if (oldest) {
		pr__hashmap_del(&j->threads, oldest->tid);
		thread_free(oldest);
	}
}

static struct uw_jthread *thread_new(struct uw_joiner *j, uint32_t tid)
{
	struct uw_jthread *t;

	if (j->threads.n >= MAX_THREADS)
		evict_oldest(j);
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

/* Keep frames [from, to) of the stack just unwound as the thread's. */
static void keep(struct uw_jthread *t, const struct uw_stack_regs *s, size_t from, size_t to)
{
	size_t n = to - from;

	if (n > t->cap) {
		struct uw_jframe *fr = realloc(t->fr, n * sizeof(*fr));

		if (!fr) {
			t->nr = 0;
			return;
		}
		t->fr = fr;
		t->cap = n;
	}
	for (size_t i = 0; i < n; i++)
		t->fr[i] = (struct uw_jframe){ s->frames[from + i], s->pcs[from + i],
					       s->sps[from + i] };
	t->nr = n;
}

/*
 * Where the chain's entries stand against the stack's frames: the index
 * in `chain` of the cut stack's outermost frame (`last`), found by it
 * and, when there is one, the frame it called agreeing with consecutive
 * entries -- the one nearest the same depth, as a frame the chain
 * skipped (a leaf without its frame pointer set up) moves the rest by
 * one.  SIZE_MAX when none agrees.
 */
static size_t chain_place(const struct uw_chain *ch, const uint64_t *pcs, size_t first,
			  size_t last)
{
	size_t depth = last - first, best = SIZE_MAX, best_dist = SIZE_MAX;

	for (size_t k = 0; k < ch->nr; k++) {
		size_t dist = k > depth ? k - depth : depth - k;

		if (ch->ips[k] != pcs[last] || dist >= best_dist)
			continue;
		if (last > first && (!k || ch->ips[k - 1] != pcs[last - 1]))
			continue;
		best = k;
		best_dist = dist;
	}
	return best;
}

/* How many of the kept frames beyond `at` the chain confirms, entry by
 * entry from `k`, the cut stack's outermost frame's; SIZE_MAX when an
 * entry contradicts one. */
static size_t chain_confirms(const struct uw_jthread *t, size_t at, const struct uw_chain *ch,
			     size_t k)
{
	size_t n = 0;

	while (at + 1 + n < t->nr && k + 1 + n < ch->nr) {
		if (ch->ips[k + 1 + n] != t->fr[at + 1 + n].pc)
			return SIZE_MAX;
		n++;
	}
	return n;
}

size_t uw_join(struct uw_joiner *j, uint32_t tid, struct uw_stack_regs *s,
	       const struct uw_chain *chain, size_t first,
	       size_t *nr, size_t max_nr, enum pr_stack_end *end, bool *refused)
{
	struct uw_jthread *t = pr__hashmap_get(&j->threads, tid);
	size_t last = *nr - 1, added = 0, at = 0, gone = 0;

	*refused = false;
	if (*nr <= first)
		return 0;
	if (t) {
		t->last_use = ++j->tick;
		/* Another process under the same tid (an exec, a reused
		 * tid) has other stacks. */
		if (t->nr && t->fr[0].f.proc_serial != s->frames[first].proc_serial)
			t->nr = 0;
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
		size_t k, n = 0;

		while (at < t->nr && t->fr[at].sp < s->sps[last])
			at++;
		if (at + 1 < t->nr && t->fr[at].sp == s->sps[last] &&
		    t->fr[at].pc == s->pcs[last]) {
			k = chain->nr ? chain_place(chain, s->pcs, first, last) : SIZE_MAX;
			n = k == SIZE_MAX ? SIZE_MAX : chain_confirms(t, at, chain, k);
			*refused = n == SIZE_MAX || n == 0;
		}
		if (n && n != SIZE_MAX) {
			/* All of the kept frames, or as many as the chain
			 * reached: then the stack stays cut. */
			if (at + 1 + n == t->nr)
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
			keep(t, s, first, *nr);
	}
	return added;
}

size_t uw_join_root(struct uw_joiner *j, uint32_t tid, struct uw_stack_regs *s, size_t first,
		    size_t *nr, size_t max_nr, enum pr_stack_end *end)
{
	struct uw_jthread *t = pr__hashmap_get(&j->threads, tid);
	size_t last = *nr - 1, p, n;

	if (!t || !t->nr || *nr < first + 2 ||
	    t->fr[0].f.proc_serial != s->frames[first].proc_serial)
		return 0;
	/* The kept stack's frame with the same return address into the
	 * root, called by the same frame. */
	for (p = 1; p < t->nr; p++)
		if (t->fr[p].pc == s->pcs[last] && t->fr[p - 1].pc == s->pcs[last - 1])
			break;
	if (p + 1 >= t->nr)
		return 0;
	n = t->nr - p - 1;
	if (*nr + n > max_nr)
		return 0;
	for (size_t i = 0; i < n; i++) {
		s->frames[*nr + i] = t->fr[p + 1 + i].f;
		s->frames[*nr + i].flags |= PR_FRAME_JOINED;
		s->pcs[*nr + i] = t->fr[p + 1 + i].pc;
		s->sps[*nr + i] = t->fr[p + 1 + i].sp;
	}
	*nr += n;
	*end = PR_END_OUTERMOST;
	t->last_use = ++j->tick;
	return n;
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
	thread_free(t);
	return false;
}

void uw_joiner_trim(struct uw_joiner *j)
{
	pr__hashmap_filter(&j->threads, thread_stays, j);
}
