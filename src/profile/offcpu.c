/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Off-CPU time in the profile: a switch-out sample's stack waits here,
 * interned as locations, until the switch tracker (model/switches.c) ends
 * its wait; then it is counted with the wait's length under the
 * pseudo-frame that says what kind of wait it was.
 *
 * A thread has at most one wait open, so what is held is one stack per
 * thread off the CPU, in slots reused from a free list.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "profile/profile.h"

/* A switch-out sample's stack: locs[0] is left for the wait's
 * pseudo-frame, locs[1..nr] are the sample's, leaf first. */
struct prof_pending {
	uint32_t thread;
	uint32_t nr;
	uint32_t *locs;
	size_t cap;
	struct prof_end end;         /* how its stack ended */
	uint32_t next_free;          /* index + 1; 0 ends the free list */
	bool open;                   /* holds a wait's stack */
	/* When its wait began, once a cut moved the wait's start (0: the
	 * wait's start): how long it lasted is measured from here. */
	uint64_t began;
};

struct prof_offcpu {
	struct pr_switches *sw;
	struct prof_pending *slots;
	size_t nr, cap;
	uint32_t free;               /* index + 1 of the first free slot */
};

void prof__offcpu_free(struct prof_offcpu *off)
{
	if (!off)
		return;
	for (size_t i = 0; i < off->nr; i++)
		free(off->slots[i].locs);
	free(off->slots);
	pr_switches_free(off->sw);
	free(off);
}

static struct prof_offcpu *offcpu_of(struct pr_profile *p)
{
	if (p->off)
		return p->off;
	p->off = calloc(1, sizeof(*p->off));
	if (p->off && !(p->off->sw = pr_switches_new())) {
		free(p->off);
		p->off = NULL;
	}
	return p->off;
}

static void release(struct prof_offcpu *off, uint32_t slot)
{
	off->slots[slot].open = false;
	off->slots[slot].began = 0;
	off->slots[slot].next_free = off->free;
	off->free = slot + 1;
}

/* Count stack slot `s` with `ns` of wait `w`, and `count` waits. */
static int count_wait(struct pr_profile *p, struct prof_pending *s, const struct pr_wait *w,
		      uint64_t count, uint64_t ns)
{
	uint32_t idx;

	s->locs[0] = prof__wait_location(p, w->before_start ? PROF_WAIT_BEFORE_START : w->kind);
	idx = s->locs[0] == PROF_NONE ? PROF_NONE
		: prof__stack_of(p, s->thread, 0, s->locs, s->nr + 1,
				 w->kind == PR_WAIT_PREEMPTED ? PROF_PREEMPTED : PROF_BLOCKED,
				 s->end, w->start);
	if (idx == PROF_NONE)
		return -ENOMEM;
	return prof__count(p, idx, w->start, count, ns, 0);
}

/* A wait ended: count its stack, if it has one and lasted long enough.
 * A wait cut in two (pr_profile_cut()) counts its part so far, once it
 * has lasted long enough, and the wait itself where it ends. */
static int on_wait(const struct pr_wait *w, void *arg)
{
	struct pr_profile *p = arg;
	struct prof_offcpu *off = p->off;
	struct prof_pending *s;
	uint64_t ns = w->end - w->start, began;
	int err;

	if (w->how == PR_WAIT_CUT) {
		if (!w->has_sample)
			return 1;
		s = &off->slots[w->cookie];
		began = s->began ? s->began : w->start;
		if (w->end - began < p->off_cpu_min_ns)
			return 1;
		s->began = began;
		err = count_wait(p, s, w, 0, ns);
		if (err)
			return err;
		p->total.off_cpu_ns[w->kind] += ns;
		p->total.before_start_ns += w->before_start ? ns : 0;
		return 0;
	}
	if (!w->has_sample) {
		p->total.waits_lost++;
		return 0;
	}
	s = &off->slots[w->cookie];
	began = s->began ? s->began : w->start;
	if (w->end - began < p->off_cpu_min_ns) {
		p->total.waits_short++;
		release(off, (uint32_t)w->cookie);
		return 0;
	}
	err = count_wait(p, s, w, 1, ns);
	release(off, (uint32_t)w->cookie);
	if (err)
		return err;
	p->total.waits[w->kind]++;
	p->total.off_cpu_ns[w->kind] += ns;
	p->total.waits_before_start += w->before_start;
	p->total.before_start_ns += w->before_start ? ns : 0;
	return 0;
}

int prof__offcpu_split(struct pr_profile *p, uint64_t time)
{
	return p->off ? pr_switches_split(p->off->sw, time, on_wait, p) : 0;
}

int prof__offcpu_rehome(struct pr_profile *p, uint32_t (*thread)(void *ctx, uint32_t idx),
			uint32_t (*location)(void *ctx, uint32_t idx), void *ctx)
{
	struct prof_offcpu *off = p->off;

	/* Everything imported first, then the slots changed: a failure
	 * leaves them as they were.  The import remembers what it did, so
	 * the second pass asks again for nothing new. */
	for (int commit = 0; commit < 2; commit++) {
		for (size_t i = 0; off && i < off->nr; i++) {
			struct prof_pending *s = &off->slots[i];
			uint32_t t;

			if (!s->open)
				continue;
			if ((t = thread(ctx, s->thread)) == PROF_NONE)
				return -ENOMEM;
			if (commit)
				s->thread = t;
			for (uint32_t k = 1; k <= s->nr; k++) {
				uint32_t l = location(ctx, s->locs[k]);

				if (l == PROF_NONE)
					return -ENOMEM;
				if (commit)
					s->locs[k] = l;
			}
		}
	}
	return 0;
}

/* A free slot holding `nr` + 1 locations: its index, or -ENOMEM. */
static int64_t take_slot(struct prof_offcpu *off, uint32_t nr)
{
	struct prof_pending *s;
	uint32_t idx;

	if (off->free) {
		idx = off->free - 1;
	} else {
		if (PR_ARRAY_RESERVE(off->slots, off->cap, off->nr + 1))
			return -ENOMEM;
		idx = (uint32_t)off->nr;
		off->slots[idx] = (struct prof_pending){ 0 };
	}
	s = &off->slots[idx];
	if (PR_ARRAY_RESERVE(s->locs, s->cap, (size_t)nr + 1))
		return -ENOMEM;
	if (idx == off->nr)
		off->nr++;
	else
		off->free = s->next_free;
	return idx;
}

int pr_profile_add_switch(struct pr_profile *p, struct pr_symbolizer *sym,
			  const struct pr_record *rec, const struct pr_stack *stack,
			  const char *comm, const char *process)
{
	struct prof_offcpu *off;
	uint32_t thread, *locs;
	int64_t slot;
	int err;

	if (!p || !rec || !stack || p->mode == PR_PROFILE_CPU)
		return -EINVAL;
	if (rec->tid == 0)
		return 0;
	if (!(off = offcpu_of(p)))
		return -ENOMEM;
	locs = prof__locations(p, sym, rec, stack, comm, process, 1, &thread);
	if (!locs)
		return -ENOMEM;
	slot = take_slot(off, (uint32_t)stack->nr);
	if (slot < 0)
		return (int)slot;
	off->slots[slot].thread = thread;
	off->slots[slot].nr = (uint32_t)stack->nr;
	off->slots[slot].end = prof__end_of(stack);
	off->slots[slot].open = true;
	memcpy(off->slots[slot].locs + 1, locs + 1, stack->nr * sizeof(*locs));
	err = pr_switches_sample(off->sw, rec, (uint64_t)slot, on_wait, p);
	/* Not taken: the slot is still ours. */
	if (err)
		release(off, (uint32_t)slot);
	return err;
}

int pr_profile_apply(struct pr_profile *p, const struct pr_record *rec)
{
	struct prof_offcpu *off;

	if (!p || !rec)
		return -EINVAL;
	if (p->mode == PR_PROFILE_CPU)
		return 0;
	if (rec->type != PR_RECORD_SWITCH && rec->type != PR_RECORD_SWITCH_CPU_WIDE &&
	    rec->type != PR_RECORD_EXIT)
		return 0;
	if (!(off = offcpu_of(p)))
		return -ENOMEM;
	return pr_switches_apply(off->sw, rec, on_wait, p);
}

int pr_profile_end(struct pr_profile *p, uint64_t time)
{
	if (!p)
		return -EINVAL;
	return p->off ? pr_switches_end(p->off->sw, time, on_wait, p) : 0;
}

void prof__add_stack_times(const struct pr_profile *p, const struct prof_stack *st,
			   struct prof_times *t)
{
	uint32_t before = p->wait_locs[PROF_WAIT_BEFORE_START];

	if (st->kind == PROF_ON_CPU) {
		t->samples += st->count;
		t->cpu_ns += st->ns;
	} else {
		enum pr_wait_kind k = st->kind == PROF_PREEMPTED ? PR_WAIT_PREEMPTED
								 : PR_WAIT_BLOCKED;

		t->waits[k] += st->count;
		t->off_cpu_ns[k] += st->ns;
		if (before && p->frames[st->frame] == before - 1) {
			t->waits_before_start += st->count;
			t->before_start_ns += st->ns;
		}
	}
}

int pr_profile_times(const struct pr_profile *p, uint32_t pid, struct pr_profile_times *t)
{
	struct prof_times sum = { 0 };
	struct pr_profile_times out = { .sz = sizeof(out) };

	if (!p)
		return -EINVAL;
	if (!pid) {
		sum = p->total;
	} else {
		for (uint32_t i = 0; i < p->nr_stacks; i++)
			if (p->threads[p->stacks[i].thread].pid == pid)
				prof__add_stack_times(p, &p->stacks[i], &sum);
	}
	out.samples = sum.samples;
	out.cpu_ns = sum.cpu_ns;
	out.waits_short = sum.waits_short;
	out.waits_lost = sum.waits_lost;
	out.waits_before_start = sum.waits_before_start;
	out.before_start_ns = sum.before_start_ns;
	memcpy(out.waits, sum.waits, sizeof(out.waits));
	memcpy(out.off_cpu_ns, sum.off_cpu_ns, sizeof(out.off_cpu_ns));
	return pr__stats_copy(t, &out, sizeof(out));
}

struct pid_total {
	uint32_t pid;
	uint64_t value;
};

static int by_value_desc(const void *a, const void *b)
{
	const struct pid_total *x = a, *y = b;

	if (x->value != y->value)
		return x->value < y->value ? 1 : -1;
	return x->pid < y->pid ? -1 : x->pid > y->pid;
}

size_t pr_profile_pids(const struct pr_profile *p, uint32_t *pids, size_t max)
{
	struct pid_total *t;
	struct pr_hashmap seen = { 0 };
	size_t n = 0;

	if (!p || !p->nr_threads)
		return 0;
	t = calloc(p->nr_threads, sizeof(*t));
	if (!t || pr__hashmap_reserve(&seen, p->nr_threads)) {
		free(t);
		pr__hashmap_free(&seen);
		return 0;
	}
	for (uint32_t i = 0; i < p->nr_threads; i++) {
		uint32_t pid = p->threads[i].pid;

		if (!pr__hashmap_get(&seen, pid)) {
			t[n].pid = pid;
			pr__hashmap_put(&seen, pid, (void *)(n + 1));
			n++;
		}
	}
	for (uint32_t i = 0; i < p->nr_stacks; i++) {
		const struct prof_stack *st = &p->stacks[i];
		uintptr_t at = (uintptr_t)pr__hashmap_get(&seen, p->threads[st->thread].pid);

		/* Events in different units do not add up: samples do. */
		t[at - 1].value += p->nr_events ? st->count : prof__stack_value(p, st);
	}
	if (n > 1)
		qsort(t, n, sizeof(*t), by_value_desc);
	for (size_t i = 0; i < n && i < max; i++)
		pids[i] = t[i].pid;
	free(t);
	pr__hashmap_free(&seen);
	return n;
}

const char *pr_profile_process(const struct pr_profile *p, uint32_t pid)
{
	/* Threads are numbered as first seen: the last is the newest name. */
	for (uint32_t i = p ? p->nr_threads : 0; i-- > 0;)
		if (p->threads[i].pid == pid)
			return prof_str(p, p->threads[i].process);
	return NULL;
}
