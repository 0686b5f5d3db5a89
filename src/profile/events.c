/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The events a profile's samples come from, and the counters read with
 * them.
 *
 * A counter read with a sample (PERF_SAMPLE_READ) says how far it had
 * counted since it was enabled; what a stack is charged is how far it
 * moved since the previous sample of the same counter, so that the
 * growths of all stacks add up to the counter's total.  "The same
 * counter" is one instance of it: per thread for a task's counters (the
 * sample's id and tid), per CPU for system-wide ones (the id alone, which
 * the kernel gives each CPU's event).  The first read of an instance is
 * all growth: the counter started at 0 when it was enabled.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "profile/profile.h"

struct prof_instances {
	struct pr_hashmap index;     /* hash of the key -> instance + 1 */
	struct { uint64_t id; uint32_t tid; } *keys;
	size_t nr, cap_keys;
	uint64_t *last;              /* nr_counters values per instance */
	size_t cap_last;
};

/* The length of `name` without a ":u", ":k", ":uk" or ":ku" modifier
 * (a tracepoint's "subsys:name" keeps its colon). */
static size_t base_len(const char *name)
{
	const char *colon = strrchr(name, ':');

	if (!colon || !colon[1] || colon[strspn(colon + 1, "uk") + 1])
		return strlen(name);
	return (size_t)(colon - name);
}

/* Whether event `name` counts nanoseconds, as cpu-clock and task-clock
 * do (their period is time). */
static bool counts_ns(const char *name)
{
	size_t n = base_len(name);

	return (n == 9 && !strncmp(name, "cpu-clock", n)) ||
	       (n == 10 && !strncmp(name, "task-clock", n));
}

/* `nr` names, none NULL or empty, interned into `ids`.  0, -EINVAL or
 * -ENOMEM. */
static int intern_names(struct pr_profile *p, const char *const *names, size_t nr,
			uint32_t *ids)
{
	for (size_t i = 0; i < nr; i++) {
		if (!names[i] || !*names[i])
			return -EINVAL;
		ids[i] = prof__intern(&p->strings, names[i]);
		if (ids[i] == PROF_NONE)
			return -ENOMEM;
	}
	return 0;
}

int prof__events_init(struct pr_profile *p, const struct pr_profile_opts *opts)
{
	const char *const *events = PR_OPTS_GET(opts, events, NULL);
	const char *const *counters = PR_OPTS_GET(opts, counters, NULL);
	size_t nr_events = PR_OPTS_GET(opts, nr_events, 0);
	size_t nr_counters = PR_OPTS_GET(opts, nr_counters, 0);
	uint32_t *names;
	int err;

	p->counters_per_cpu = PR_OPTS_GET(opts, counters_per_cpu, false);
	if (!nr_events && !nr_counters)
		return 0;
	if (!nr_events || !events || (nr_counters && !counters) || p->mode != PR_PROFILE_CPU ||
	    nr_events > UINT32_MAX || nr_counters > UINT32_MAX)
		return -EINVAL;
	p->events = calloc(nr_events, sizeof(*p->events));
	names = calloc(nr_events, sizeof(*names));
	p->counters = calloc(nr_counters ? nr_counters : 1, sizeof(*p->counters));
	if (!p->events || !names || !p->counters) {
		free(names);
		return -ENOMEM;
	}
	err = intern_names(p, events, nr_events, names);
	if (!err)
		err = intern_names(p, counters, nr_counters, p->counters);
	for (size_t i = 0; !err && i < nr_events; i++)
		p->events[i] = (struct prof_event){ .name = names[i], .ns = counts_ns(events[i]) };
	free(names);
	if (err)
		return err;
	p->nr_events = (uint32_t)nr_events;
	p->nr_counters = (uint32_t)nr_counters;
	return 0;
}

void prof__events_free(struct pr_profile *p)
{
	if (p->instances) {
		pr__hashmap_free(&p->instances->index);
		free(p->instances->keys);
		free(p->instances->last);
		free(p->instances);
	}
	free(p->growths);
	free(p->counters);
	free(p->events);
}

int pr_profile_event_by_name(const struct pr_profile *p, const char *name)
{
	size_t len;
	int found = -ENOENT;

	if (!p || !name)
		return -ENOENT;
	for (uint32_t i = 0; i < p->nr_events; i++)
		if (!strcmp(prof_str(p, p->events[i].name), name))
			return (int)i;
	len = strlen(name);
	if (base_len(name) != len)
		return -ENOENT;
	for (uint32_t i = 0; i < p->nr_events; i++) {
		const char *ev = prof_str(p, p->events[i].name);

		if (base_len(ev) != len || strncmp(ev, name, len))
			continue;
		if (found >= 0)
			return -ENOENT;   /* "cycles" of "cycles:u" and "cycles:k" */
		found = (int)i;
	}
	return found;
}

/* The counter instance read through event `id` on thread `tid`: its
 * index, made with its values at 0 if new; PROF_NONE out of memory. */
static uint32_t instance_of(struct pr_profile *p, uint64_t id, uint32_t tid)
{
	struct prof_instances *x = p->instances;
	uint64_t h = pr__hash_mix(id, tid);
	size_t it = 0, n = p->nr_counters;
	void *v;

	if (!x && !(x = p->instances = calloc(1, sizeof(*x))))
		return PROF_NONE;
	while ((v = pr__hashmap_next(&x->index, h, &it))) {
		uint32_t i = (uint32_t)((uintptr_t)v - 1);

		if (x->keys[i].id == id && x->keys[i].tid == tid)
			return i;
	}
	if (x->nr >= PROF_NONE || pr__hashmap_reserve(&x->index, 1) ||
	    PR_ARRAY_RESERVE(x->keys, x->cap_keys, x->nr + 1) ||
	    PR_ARRAY_RESERVE(x->last, x->cap_last, (x->nr + 1) * n))
		return PROF_NONE;
	x->keys[x->nr].id = id;
	x->keys[x->nr].tid = tid;
	memset(&x->last[x->nr * n], 0, n * sizeof(*x->last));
	pr__hashmap_add(&x->index, h, (void *)((uintptr_t)x->nr + 1));
	return (uint32_t)x->nr++;
}

int prof__count_reads(struct pr_profile *p, uint32_t idx, const struct pr_record *rec)
{
	const struct pr_sample *s = &rec->u.sample;
	size_t n = p->nr_counters, need = ((size_t)idx + 1) * n;
	uint64_t *last, *growth;
	uint32_t inst, first;

	if (rec->type != PR_RECORD_SAMPLE || !s->nr_read)
		return 0;
	if (need > p->nr_growths) {
		if (PR_ARRAY_RESERVE(p->growths, p->cap_growths, need))
			return -ENOMEM;
		memset(p->growths + p->nr_growths, 0, (need - p->nr_growths) * sizeof(*p->growths));
		p->nr_growths = need;
	}
	inst = instance_of(p, rec->id, p->counters_per_cpu ? 0 : rec->tid);
	if (inst == PROF_NONE)
		return -ENOMEM;
	last = &p->instances->last[(size_t)inst * n];
	growth = &p->growths[(size_t)idx * n];
	/* The group's last n values: its leader may be left out. */
	first = s->nr_read > n ? s->nr_read - (uint32_t)n : 0;
	for (uint32_t c = 0; c < n && first + c < s->nr_read; c++) {
		uint64_t v;

		if (pr_sample_read(s, first + c, &v, NULL))
			break;
		/* Below the last read: not the same counter any more (its
		 * thread's id reused), so counted from 0. */
		growth[c] += v >= last[c] ? v - last[c] : v;
		last[c] = v;
	}
	return 0;
}
