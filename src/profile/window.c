/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Profiles in windows, groups and shares: pr_profile_cut() hands over
 * what was counted so far and starts the tables anew (an always-on
 * agent's memory must not grow window after window), pr_profile_select()
 * keeps some processes, and pr_profile_merge() adds one profile to
 * another (parallel workers' shares).  All copy stacks from one
 * profile's tables into another's, renumbering each thread, location,
 * mapping and function once.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "profile/profile.h"

/* Renumbering from `src`'s tables to `dst`'s: per table, the new index
 * + 1, 0 while not yet copied. */
struct import {
	struct pr_profile *dst;
	const struct pr_profile *src;
	uint32_t *threads, *locations, *mappings, *functions, *stacks;
	struct prof_line *lines;     /* a location's chain, renumbered */
	size_t cap_lines;
	uint32_t *locs;              /* a stack's, renumbered */
	size_t cap_locs;
};

static int import_init(struct import *im, struct pr_profile *dst, const struct pr_profile *src)
{
	*im = (struct import){ .dst = dst, .src = src };
	im->threads = calloc((size_t)src->nr_threads + 1, sizeof(uint32_t));
	im->locations = calloc((size_t)src->nr_locations + 1, sizeof(uint32_t));
	im->mappings = calloc((size_t)src->nr_mappings + 1, sizeof(uint32_t));
	im->functions = calloc((size_t)src->nr_functions + 1, sizeof(uint32_t));
	im->stacks = calloc((size_t)src->nr_stacks + 1, sizeof(uint32_t));
	return im->threads && im->locations && im->mappings && im->functions && im->stacks
	       ? 0 : -ENOMEM;
}

static void import_free(struct import *im)
{
	free(im->threads);
	free(im->locations);
	free(im->mappings);
	free(im->functions);
	free(im->stacks);
	free(im->lines);
	free(im->locs);
}

static uint32_t import_thread(void *ctx, uint32_t t)
{
	struct import *im = ctx;
	const struct prof_thread *th = &im->src->threads[t];
	uint32_t idx;

	if (im->threads[t])
		return im->threads[t] - 1;
	idx = prof__thread_of(im->dst, th->pid, th->tid, prof_str(im->src, th->comm),
			      prof_str(im->src, th->process));
	if (idx != PROF_NONE)
		im->threads[t] = idx + 1;
	return idx;
}

static uint32_t import_function(struct import *im, uint32_t f)
{
	const struct prof_function *fn = &im->src->functions[f];
	uint32_t idx;

	if (im->functions[f])
		return im->functions[f] - 1;
	idx = prof__function_of(im->dst, prof_str(im->src, fn->name),
				prof_str(im->src, fn->file));
	if (idx != PROF_NONE)
		im->functions[f] = idx + 1;
	return idx;
}

static uint32_t import_mapping(struct import *im, uint32_t m)
{
	uint32_t idx;

	if (im->mappings[m])
		return im->mappings[m] - 1;
	idx = prof__mapping_import(im->dst, im->src, &im->src->mappings[m]);
	if (idx != PROF_NONE)
		im->mappings[m] = idx + 1;
	return idx;
}

static uint32_t import_location(void *ctx, uint32_t l)
{
	struct import *im = ctx;
	const struct prof_location *loc = &im->src->locations[l];
	struct prof_location tmpl = *loc;
	uint32_t idx;

	if (im->locations[l])
		return im->locations[l] - 1;
	if (loc->kind == PROF_WAIT) {
		/* The pseudo-frame of a kind of wait: the other's own. */
		idx = PROF_NONE;
		for (int k = 0; k <= PROF_WAIT_BEFORE_START; k++)
			if (im->src->wait_locs[k] == l + 1)
				idx = prof__wait_location(im->dst, k);
	} else {
		if (loc->mapping != PROF_NONE &&
		    (tmpl.mapping = import_mapping(im, loc->mapping)) == PROF_NONE)
			return PROF_NONE;
		if (PR_ARRAY_RESERVE(im->lines, im->cap_lines, (size_t)loc->nr_lines + 1))
			return PROF_NONE;
		for (uint32_t i = 0; i < loc->nr_lines; i++) {
			const struct prof_line *ln = &im->src->lines[loc->line + i];

			im->lines[i].line = ln->line;
			im->lines[i].function = import_function(im, ln->function);
			if (im->lines[i].function == PROF_NONE)
				return PROF_NONE;
		}
		idx = prof__location_add(im->dst, &tmpl, im->lines);
	}
	if (idx != PROF_NONE)
		im->locations[l] = idx + 1;
	return idx;
}

/* Stack `i` of src, with its counts, added to dst's. */
static int import_stack(struct import *im, uint32_t i)
{
	const struct pr_profile *src = im->src;
	struct pr_profile *dst = im->dst;
	const struct prof_stack *st = &src->stacks[i];
	struct prof_stack *d;
	uint32_t thread = import_thread(im, st->thread), idx;

	if (thread == PROF_NONE || PR_ARRAY_RESERVE(im->locs, im->cap_locs, (size_t)st->nr + 1))
		return -ENOMEM;
	for (uint32_t k = 0; k < st->nr; k++)
		if ((im->locs[k] = import_location(im, src->frames[st->frame + k])) == PROF_NONE)
			return -ENOMEM;
	idx = prof__stack_of(dst, thread, st->event, im->locs, st->nr,
			     (enum prof_stack_kind)st->kind,
			     (struct prof_end){ st->end, st->joined, st->chain }, st->first_time);
	if (idx == PROF_NONE)
		return -ENOMEM;
	if (dst->nr_counters) {
		size_t need = ((size_t)idx + 1) * dst->nr_counters;

		if (need > dst->nr_growths) {
			if (PR_ARRAY_RESERVE(dst->growths, dst->cap_growths, need))
				return -ENOMEM;
			memset(dst->growths + dst->nr_growths, 0,
			       (need - dst->nr_growths) * sizeof(*dst->growths));
			dst->nr_growths = need;
		}
		for (uint32_t c = 0; c < dst->nr_counters; c++)
			dst->growths[(size_t)idx * dst->nr_counters + c] += prof__growth(src, i, c);
	}
	d = &dst->stacks[idx];
	d->count += st->count;
	d->ns += st->ns;
	d->period += st->period;
	if (st->first_time < d->first_time)
		d->first_time = st->first_time;
	if (st->last_time > d->last_time)
		d->last_time = st->last_time;
	im->stacks[i] = idx + 1;
	return 0;
}

/* The timeline of src's thread `t`, whose stacks are all imported. */
static int import_timeline(struct import *im, uint32_t t)
{
	struct pr_profile *dst = im->dst;
	struct prof_timeline_iter it;
	uint32_t dt = import_thread(im, t), stack;
	uint64_t time, ns;

	if (t >= im->src->cap_timelines || !im->src->timelines[t].len)
		return 0;
	if (dt == PROF_NONE)
		return -ENOMEM;
	if (dt >= dst->cap_timelines) {
		size_t old = dst->cap_timelines;

		if (PR_ARRAY_RESERVE(dst->timelines, dst->cap_timelines, (size_t)dt + 1))
			return -ENOMEM;
		memset(dst->timelines + old, 0, (dst->cap_timelines - old) * sizeof(*dst->timelines));
	}
	prof__timeline_iter(&im->src->timelines[t], &it);
	while (prof__timeline_next(&it, &time, &stack, &ns))
		if (im->stacks[stack] &&
		    prof__timeline_add(&dst->timelines[dt], time, im->stacks[stack] - 1, ns))
			return -ENOMEM;
	return 0;
}

/* An empty profile with the options and tags of `p`. */
static struct pr_profile *new_like(const struct pr_profile *p)
{
	const char **events = calloc((size_t)p->nr_events + 1, sizeof(char *));
	const char **counters = calloc((size_t)p->nr_counters + 1, sizeof(char *));
	struct pr_profile *n = NULL;

	if (events && counters) {
		PR_OPTS(pr_profile_opts, o, .freq = p->freq, .log = p->log.fn,
			.log_ctx = p->log.ctx, .mode = p->mode, .period_is_ns = p->period_is_ns,
			.off_cpu_min_ns = p->off_cpu_min_ns, .timeline = p->timeline,
			.events = events, .nr_events = p->nr_events, .counters = counters,
			.nr_counters = p->nr_counters, .counters_per_cpu = p->counters_per_cpu,
			.pprof_numeric_thread_labels = p->pprof_numeric_thread_labels);

		for (uint32_t i = 0; i < p->nr_events; i++)
			events[i] = prof_str(p, p->events[i].name);
		for (uint32_t i = 0; i < p->nr_counters; i++)
			counters[i] = prof_str(p, p->counters[i]);
		n = pr_profile_new(&o);
	}
	for (uint32_t i = 0; n && i < p->nr_tags; i++)
		if (pr_profile_tag(n, prof_str(p, p->tags[i].key), prof_str(p, p->tags[i].value))) {
			pr_profile_free(n);
			n = NULL;
		}
	free(events);
	free(counters);
	if (!n)
		errno = ENOMEM;
	return n;
}

static int copy_ptag(struct pr_profile *dst, const struct pr_profile *src,
		     const struct prof_ptag *t)
{
	return pr_profile_process_tag(dst, t->pid, prof_str(src, t->key), prof_str(src, t->value));
}

/* Every stack (of the threads `keep` accepts) and timeline of im->src
 * into im->dst, and the process tags.  0 or -ENOMEM. */
static int import_all(struct import *im, bool (*keep)(const void *ctx, uint32_t pid),
		      const void *ctx)
{
	const struct pr_profile *src = im->src;
	int err = 0;

	for (uint32_t i = 0; !err && i < src->nr_stacks; i++)
		if (keep(ctx, src->threads[src->stacks[i].thread].pid))
			err = import_stack(im, i);
	for (uint32_t t = 0; !err && t < src->nr_threads; t++)
		if (keep(ctx, src->threads[t].pid))
			err = import_timeline(im, t);
	for (uint32_t i = 0; !err && i < src->nr_ptags; i++)
		if (keep(ctx, src->ptags[i].pid))
			err = copy_ptag(im->dst, src, &src->ptags[i]);
	return err;
}

static bool keep_all(const void *ctx, uint32_t pid)
{
	(void)ctx;
	(void)pid;
	return true;
}

struct pr_profile *pr_profile_cut(struct pr_profile *p, uint64_t time)
{
	struct pr_profile *out, *fresh = NULL, swap;
	struct import im = { 0 }, again = { 0 };
	int err;

	if (!p) {
		errno = EINVAL;
		return NULL;
	}
	if (!(out = new_like(p)))
		return NULL;
	/* The waits open now: their part so far is this window's.  On a
	 * failure past here, what was split stays counted in `p`, which
	 * goes on as a whole profile. */
	err = prof__offcpu_split(p, time);
	if (!err)
		err = import_init(&im, out, p);
	if (!err)
		err = import_all(&im, keep_all, NULL);
	if (!err && !(fresh = new_like(p)))
		err = -ENOMEM;
	/* The open waits' stacks, renumbered into the new tables. */
	if (!err)
		err = import_init(&again, fresh, p);
	if (!err)
		err = prof__offcpu_rehome(p, import_thread, import_location, &again);
	import_free(&im);
	import_free(&again);
	if (err) {
		pr_profile_free(out);
		pr_profile_free(fresh);
		errno = -err;
		return NULL;
	}
	out->total = p->total;
	out->samples = p->samples;
	/* What spans windows moves to the new tables: the open waits and
	 * the counters' last reads. */
	fresh->off = p->off;
	p->off = NULL;
	fresh->instances = p->instances;
	p->instances = NULL;
	swap = *p;
	*p = *fresh;
	*fresh = swap;
	pr_profile_free(fresh);
	return out;
}

struct pid_set {
	uint32_t *pids;
	size_t nr;
};

static int cmp_u32(const void *a, const void *b)
{
	uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;

	return x < y ? -1 : x > y;
}

static bool in_set(const void *ctx, uint32_t pid)
{
	const struct pid_set *s = ctx;

	return bsearch(&pid, s->pids, s->nr, sizeof(pid), cmp_u32) != NULL;
}

struct pr_profile *pr_profile_select(const struct pr_profile *p, const uint32_t *pids,
				     size_t nr)
{
	struct pid_set set = { .nr = nr };
	struct import im = { 0 };
	struct pr_profile *out;
	int err;

	if (!p || (!pids && nr)) {
		errno = EINVAL;
		return NULL;
	}
	set.pids = malloc((nr ? nr : 1) * sizeof(*pids));
	out = set.pids ? new_like(p) : NULL;
	if (!out) {
		free(set.pids);
		errno = ENOMEM;
		return NULL;
	}
	if (nr)
		memcpy(set.pids, pids, nr * sizeof(*pids));
	qsort(set.pids, nr, sizeof(*pids), cmp_u32);
	err = import_init(&im, out, p);
	if (!err)
		err = import_all(&im, in_set, &set);
	import_free(&im);
	free(set.pids);
	if (err) {
		pr_profile_free(out);
		errno = -err;
		return NULL;
	}
	/* Their times, as their stacks count them. */
	for (uint32_t i = 0; i < out->nr_stacks; i++)
		prof__add_stack_times(out, &out->stacks[i], &out->total);
	out->samples = out->total.samples;
	out->start_ns = p->start_ns;
	out->duration_ns = p->duration_ns;
	return out;
}

int pr_profile_merge(struct pr_profile *dst, const struct pr_profile *src)
{
	struct import im;
	int err;

	if (!dst || !src || dst == src || dst->mode != src->mode ||
	    dst->nr_events != src->nr_events || dst->nr_counters != src->nr_counters)
		return -EINVAL;
	err = import_init(&im, dst, src);
	if (!err)
		err = import_all(&im, keep_all, NULL);
	import_free(&im);
	if (err)
		return err;
	dst->samples += src->samples;
	dst->total.samples += src->total.samples;
	dst->total.cpu_ns += src->total.cpu_ns;
	dst->total.waits_short += src->total.waits_short;
	dst->total.waits_lost += src->total.waits_lost;
	dst->total.waits_before_start += src->total.waits_before_start;
	dst->total.before_start_ns += src->total.before_start_ns;
	for (int k = 0; k < PR_WAIT_KIND_MAX; k++) {
		dst->total.waits[k] += src->total.waits[k];
		dst->total.off_cpu_ns[k] += src->total.off_cpu_ns[k];
	}
	return 0;
}
