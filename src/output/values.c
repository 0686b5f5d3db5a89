/* SPDX-License-Identifier: Apache-2.0 */
/*
 * What a sample of each stack is worth, for the formats that keep several
 * values per sample (pprof and OTLP alike): the value types a profile has,
 * each stack's values in that order, and which one is sampled (the
 * period) and shown first.
 */
#include <string.h>

#include "output/output.h"

#define NS_PER_S UINT64_C(1000000000)

/* A CPU profile has the count and the CPU time; an off-CPU one the count
 * and the off-CPU time; a wall-clock one all four.  A profile with events
 * has one per event, then one per counter, instead. */
enum { V_COUNT, V_CPU, V_OFF_CPU, V_WALL, NR_MODE_VALUES };

size_t prof__nr_values(const struct pr_profile *p)
{
	if (p->nr_events)
		return (size_t)p->nr_events + p->nr_counters;
	return p->mode == PR_PROFILE_WALL ? NR_MODE_VALUES : 2;
}

struct prof_value_type prof__value_type(const struct pr_profile *p, size_t i)
{
	struct prof_value_type t = { .name = PROF_NONE };

	if (p->nr_events) {
		/* Each event counts what it samples (a clock event, its
		 * nanoseconds), and each counter what it counted. */
		if (i < p->nr_events) {
			t.name = p->events[i].name;
			t.unit = p->events[i].ns ? "nanoseconds" : "count";
		} else {
			t.name = p->counters[i - p->nr_events];
			t.unit = "count";
		}
		t.type = prof_str(p, t.name);
		return t;
	}
	/* As Go's runtime/pprof writes a CPU profile: the count first (the
	 * convention for the number of events), then the time. */
	if (i == V_COUNT) {
		t.type = "samples";
		t.unit = "count";
	} else {
		t.type = p->mode == PR_PROFILE_OFF_CPU || i == V_OFF_CPU ? "off_cpu" :
			 i == V_CPU ? "cpu" : "wall";
		t.unit = "nanoseconds";
	}
	return t;
}

/* `count` samples' worth of CPU time, each 1e9/freq ns, without the
 * rounding error of multiplying the rounded period. */
static int64_t cpu_ns(uint64_t count, uint64_t freq)
{
	if (!freq)
		return 0;
	return (int64_t)(count * (NS_PER_S / freq) + count * (NS_PER_S % freq) / freq);
}

void prof__stack_values(const struct pr_profile *p, uint32_t idx, int64_t *v)
{
	const struct prof_stack *st = &p->stacks[idx];
	bool wait = st->kind != PROF_ON_CPU;

	if (p->nr_events) {
		/* Its own event's column; the others' are 0. */
		memset(v, 0, p->nr_events * sizeof(*v));
		v[st->event] = (int64_t)st->period;
		for (uint32_t c = 0; c < p->nr_counters; c++)
			v[p->nr_events + c] = (int64_t)prof__growth(p, idx, c);
		return;
	}
	v[V_COUNT] = (int64_t)st->count;
	if (p->mode == PR_PROFILE_OFF_CPU) {
		v[1] = (int64_t)st->ns;
		return;
	}
	/* A CPU sample's own period, when it is time, is exact; else each
	 * stands for the frequency's interval.  In a wall-clock profile the
	 * time counted is the one wall adds up. */
	if (wait)
		v[V_CPU] = 0;
	else if (prof__in_ns(p, 0) || (p->period_is_ns && st->ns))
		v[V_CPU] = (int64_t)st->ns;
	else
		v[V_CPU] = cpu_ns(st->count, p->freq);
	if (p->mode == PR_PROFILE_WALL) {
		v[V_OFF_CPU] = wait ? (int64_t)st->ns : 0;
		v[V_WALL] = (int64_t)st->ns;
	}
}

struct prof_period prof__period(const struct pr_profile *p)
{
	if (p->nr_events) {
		/* The first event is what was sampled first; its period is
		 * known when it is time sampled at the frequency. */
		return (struct prof_period){
			.type = 0, .shown = 0,
			.period = p->freq && p->events[0].ns ? (int64_t)(NS_PER_S / p->freq) : 0,
		};
	}
	if (p->mode == PR_PROFILE_OFF_CPU) {
		/* Nothing is sampled away: every nanosecond off the CPU is
		 * counted (short waits aside, which are dropped, not
		 * scaled). */
		return (struct prof_period){ .type = 1, .period = 1, .shown = 1 };
	}
	/* CPU time is what is sampled, at the frequency; a wall-clock
	 * profile shows the wall time, continuous-profiling backends read it
	 * from a "wall" type.  Without a frequency the CPU time is all
	 * zeros: the counts are what to show. */
	return (struct prof_period){
		.type = V_CPU, .period = p->freq ? (int64_t)(NS_PER_S / p->freq) : 0,
		.shown = p->mode == PR_PROFILE_WALL ? V_WALL : p->freq ? V_CPU : V_COUNT,
	};
}

/*
 * The parts Grafana Pyroscope files under profile types of their own
 * (process_cpu, off_cpu, wall), each with a period of its own time: an
 * on-CPU part reads as a CPU profile's, and an off-CPU part alike whether
 * it came from the off-CPU or the wall-clock mode.  Each sample count
 * goes with the stacks it counts: a CPU part's are samples, an off-CPU
 * part's are waits.
 */
size_t prof__part_values(const struct pr_profile *p, int part, size_t *cols,
			 struct prof_period *per)
{
	int64_t every = p->freq ? (int64_t)(NS_PER_S / p->freq) : 0;
	struct prof_period pe = prof__period(p);
	size_t nr = 0, c[2];

	if (part == PR_PART_ALL || (part == PR_PART_ON_CPU && p->nr_events)) {
		/* Every column, as the whole profile has them. */
		nr = prof__nr_values(p);
		for (size_t i = 0; cols && i < nr; i++)
			cols[i] = i;
	} else {
		if (part == PR_PART_ON_CPU && p->mode != PR_PROFILE_OFF_CPU) {
			c[nr++] = V_COUNT;
			c[nr++] = V_CPU;
			pe = (struct prof_period){ .type = 1, .period = every,
						   .shown = p->freq ? 1 : 0 };
		} else if (part == PR_PART_OFF_CPU && p->mode != PR_PROFILE_CPU) {
			c[nr++] = V_COUNT;
			c[nr++] = p->mode == PR_PROFILE_OFF_CPU ? 1 : V_OFF_CPU;
			pe = (struct prof_period){ .type = 1, .period = 1, .shown = 1 };
		} else if (part == PR_PART_WALL && p->mode == PR_PROFILE_WALL) {
			c[nr++] = V_WALL;
			pe = (struct prof_period){ .type = 0, .period = every, .shown = 0 };
		}
		for (size_t i = 0; cols && i < nr; i++)
			cols[i] = c[i];
	}
	if (per)
		*per = pe;
	return nr;
}

bool prof__part_has_stack(const struct pr_profile *p, int part, uint32_t idx)
{
	bool wait = p->stacks[idx].kind != PROF_ON_CPU;

	return part == PR_PART_ON_CPU ? !wait : part == PR_PART_OFF_CPU ? wait : true;
}
