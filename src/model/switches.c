/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Each thread's switches out of the CPU and back in, paired into waits
 * (prmodel.h says what a wait is and how it ends).
 *
 * A switch out shows up twice: as the switch-out sample, which carries
 * the stack, and as a SWITCH record, which says whether the thread was
 * preempted.  The record is written after the stack is copied, a few
 * microseconds to tens of them later, when the thread really leaves:
 * the wait starts at the record's time (the copy is CPU time, which a
 * CPU sample may count), at the sample's only when the record was lost.
 * Either may be delivered first (their times may tie), so the wait opens
 * on whichever comes first and the other completes it.
 */
#include <errno.h>
#include <linux/perf_event.h>
#include <stdlib.h>

#include "model/model.h"
#include "prmodel.h"

struct sw_wait {
	struct pr_wait w;
	bool record_seen;        /* the switch-out record came */
	uint32_t next_free;      /* in the free list: index + 1, 0 ends it */
};

struct pr_switches {
	struct pr_hashmap by_tid;    /* tid -> index + 1 in waits[] */
	struct sw_wait *waits;
	size_t nr, cap;
	uint32_t free;               /* index + 1 of the first free, 0: none */
	size_t open;
};

struct pr_switches *pr_switches_new(void)
{
	return calloc(1, sizeof(struct pr_switches));
}

void pr_switches_free(struct pr_switches *sw)
{
	if (!sw)
		return;
	pr__hashmap_free(&sw->by_tid);
	free(sw->waits);
	free(sw);
}

size_t pr_switches_open(const struct pr_switches *sw)
{
	return sw ? sw->open : 0;
}

const char *pr_wait_kind_name(enum pr_wait_kind kind)
{
	switch (kind) {
	case PR_WAIT_BLOCKED:
		return "blocked";
	case PR_WAIT_PREEMPTED:
		return "preempted";
	default:
		return NULL;
	}
}

static struct sw_wait *find(struct pr_switches *sw, uint32_t tid)
{
	void *v = pr__hashmap_get(&sw->by_tid, tid);

	return v ? &sw->waits[(uintptr_t)v - 1] : NULL;
}

/* A wait opened for `rec`'s thread at its time; NULL out of memory. */
static struct sw_wait *open_wait(struct pr_switches *sw, const struct pr_record *rec)
{
	uint32_t idx;

	if (pr__hashmap_reserve(&sw->by_tid, 1))
		return NULL;
	if (sw->free) {
		idx = sw->free - 1;
		sw->free = sw->waits[idx].next_free;
	} else {
		if (PR_ARRAY_RESERVE(sw->waits, sw->cap, sw->nr + 1))
			return NULL;
		idx = (uint32_t)sw->nr++;
	}
	sw->waits[idx] = (struct sw_wait){
		.w = { .pid = rec->pid, .tid = rec->tid, .start = rec->time },
	};
	pr__hashmap_put(&sw->by_tid, rec->tid, (void *)((uintptr_t)idx + 1));
	sw->open++;
	return &sw->waits[idx];
}

/* Hand wait `sw_w` out, ended at `time` by `how`, and forget it. */
static int end_wait(struct pr_switches *sw, struct sw_wait *sw_w, uint64_t time,
		    enum pr_wait_end how, pr_wait_fn cb, void *ctx)
{
	struct pr_wait w = sw_w->w;
	uint32_t idx = (uint32_t)(sw_w - sw->waits);

	w.end = time > w.start ? time : w.start;
	w.how = (uint8_t)how;
	pr__hashmap_del(&sw->by_tid, w.tid);
	sw_w->next_free = sw->free;
	sw->free = idx + 1;
	sw->open--;
	return cb(&w, ctx);
}

static bool has_identity(const struct pr_record *rec)
{
	return (rec->fields & (PR_ID_TID | PR_ID_TIME)) == (PR_ID_TID | PR_ID_TIME);
}

/*
 * The wait the switch out `rec` belongs to, through *out: the thread's
 * open one, unless that already has this half of a switch out (the
 * sample, or the record: `sample` says which this is), when the switch in
 * after it was lost; then that one ends here and a new one opens.
 */
static int wait_of_switch_out(struct pr_switches *sw, const struct pr_record *rec,
			      bool sample, pr_wait_fn cb, void *ctx, struct sw_wait **out)
{
	struct sw_wait *w = find(sw, rec->tid);

	if (w && (sample ? w->w.has_sample : w->record_seen)) {
		int err = end_wait(sw, w, rec->time, PR_WAIT_SUPERSEDED, cb, ctx);

		if (err)
			return err;
		w = NULL;
	}
	if (!w && !(w = open_wait(sw, rec)))
		return -ENOMEM;
	*out = w;
	return 0;
}

int pr_switches_sample(struct pr_switches *sw, const struct pr_record *rec,
		       uint64_t cookie, pr_wait_fn cb, void *ctx)
{
	struct sw_wait *w;
	int err;

	if (!sw || !rec || !cb || !has_identity(rec))
		return -EINVAL;
	if (rec->tid == 0)
		return 0;
	err = wait_of_switch_out(sw, rec, true, cb, ctx, &w);
	if (err)
		return err;
	if (!w->record_seen)
		w->w.start = rec->time;
	w->w.has_sample = true;
	w->w.cookie = cookie;
	return 0;
}

/* Without the sample, the wait has no stack (it was lost, or it comes
 * next with the same time). */
static int switch_out(struct pr_switches *sw, const struct pr_record *rec,
		      pr_wait_fn cb, void *ctx)
{
	struct sw_wait *w;
	int err = wait_of_switch_out(sw, rec, false, cb, ctx, &w);

	if (err)
		return err;
	w->record_seen = true;
	w->w.start = rec->time;
	w->w.kind = rec->misc & PERF_RECORD_MISC_SWITCH_OUT_PREEMPT ? PR_WAIT_PREEMPTED
								    : PR_WAIT_BLOCKED;
	w->w.before_start = !!(rec->misc & PR_RECORD_MISC_SWITCH_BEFORE_START);
	return 0;
}

int pr_switches_apply(struct pr_switches *sw, const struct pr_record *rec,
		      pr_wait_fn cb, void *ctx)
{
	struct sw_wait *w;

	if (!sw || !rec || !cb)
		return -EINVAL;
	switch (rec->type) {
	case PR_RECORD_SWITCH:
	case PR_RECORD_SWITCH_CPU_WIDE:
		/* The idle task is off the CPU whenever something runs. */
		if (!has_identity(rec) || rec->tid == 0)
			return 0;
		if (rec->misc & PERF_RECORD_MISC_SWITCH_OUT)
			return switch_out(sw, rec, cb, ctx);
		w = find(sw, rec->tid);
		return w ? end_wait(sw, w, rec->time, PR_WAIT_SWITCHED_IN, cb, ctx) : 0;
	case PR_RECORD_EXIT:
		w = find(sw, rec->tid);
		if (!w)
			return 0;
		return end_wait(sw, w, rec->u.task.time ? rec->u.task.time : rec->time,
				PR_WAIT_EXITED, cb, ctx);
	default:
		return 0;
	}
}

int pr_switches_end(struct pr_switches *sw, uint64_t time, pr_wait_fn cb, void *ctx)
{
	if (!sw || !cb)
		return -EINVAL;
	for (size_t i = 0; i < sw->nr && sw->open; i++) {
		struct sw_wait *w = &sw->waits[i];
		int err;

		/* In the free list, or open: only open ones are indexed. */
		if (find(sw, w->w.tid) != w)
			continue;
		err = end_wait(sw, w, time, PR_WAIT_RUN_ENDED, cb, ctx);
		if (err)
			return err;
	}
	return 0;
}

int pr_switches_split(struct pr_switches *sw, uint64_t time, pr_wait_fn cb, void *ctx)
{
	if (!sw || !cb)
		return -EINVAL;
	for (size_t i = 0; i < sw->nr && sw->open; i++) {
		struct sw_wait *w = &sw->waits[i];
		struct pr_wait part;
		int ret;

		if (find(sw, w->w.tid) != w || w->w.start >= time)
			continue;
		part = w->w;
		part.end = time;
		part.how = PR_WAIT_CUT;
		ret = cb(&part, ctx);
		if (ret < 0)
			return ret;
		if (!ret)
			w->w.start = time;
	}
	return 0;
}
