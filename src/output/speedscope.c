/* SPDX-License-Identifier: Apache-2.0 */
/*
 * speedscope's JSON file format (its file-format-spec): frames shared by
 * every profile, one "sampled" profile per thread.  A frame is a function
 * (name and file), so the flame graph does not split a function by line;
 * a frame nothing names is its mapping's "[file]", or "[unknown]".  A
 * stack cut short starts at a "[truncated]" frame, where its callers would
 * be; frames joined from an earlier stack are frames of their own, named
 * with "_[joined]" after the function, as annotated folded output names
 * them; with `annotate`, so are frames from the sample's frame-pointer
 * call chain, "_[fp]".
 *
 * Values are nanoseconds: CPU time (or sample counts, in a CPU profile
 * without a frequency), and in off-CPU and wall-clock profiles the time
 * each wait lasted.  When the profile kept each thread's timeline
 * (pr_profile_opts.timeline), a thread's samples are listed as they came,
 * runs of one stack merged, so speedscope's time order view shows on-CPU
 * and off-CPU stretches as they happened.  Otherwise each profile lists
 * its stacks once, in the order first seen: the "left heavy" and
 * "sandwich" views are exact either way; the time order view then shows
 * when each stack first appeared, not every recurrence.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "output/output.h"

/* A line's frame: its function, else (nothing named the location) an
 * index after the functions: per mapping, then one for no mapping. */
static uint32_t frame_of(const struct pr_profile *p, const struct prof_location *loc, uint32_t i)
{
	if (i < loc->nr_lines)
		return p->lines[loc->line + i].function;
	return p->nr_functions + (loc->mapping == PROF_NONE ? p->nr_mappings : loc->mapping);
}

/* A stack as speedscope's frame indexes, root first. */
struct ids {
	uint32_t *v;
	size_t nr, cap;
};

/* The frames after the functions' and the unnamed ones: "[truncated]",
 * then (when any stack has joined frames) all of them again, joined, and
 * (when any has frames from the chain, and they are marked) again, from
 * the chain. */
static uint32_t truncated_frame(const struct pr_profile *p)
{
	return p->nr_functions + p->nr_mappings + 1;
}

/* Where the marked copies start in the frame list: 0 for none. */
struct layout {
	uint32_t joined_at, chain_at;
};

struct walk {
	const struct pr_profile *p;
	struct ids *ids;
	const struct layout *lay;
	uint32_t joined, chain;      /* outermost locations joined, or from the chain */
	uint32_t done;               /* locations walked */
};

static int push_frame(const char *label, const struct prof_location *loc, uint32_t line,
		      void *arg)
{
	struct walk *w = arg;

	(void)label;
	if (PR_ARRAY_RESERVE(w->ids->v, w->ids->cap, w->ids->nr + 1))
		return -ENOMEM;
	/* Root first: the joined or chain locations come first. */
	w->ids->v[w->ids->nr++] = frame_of(w->p, loc, line) +
				  (w->done < w->joined ? w->lay->joined_at
				   : w->done < w->chain ? w->lay->chain_at : 0);
	/* A location's lines come outermost first, its own (line 0) last. */
	if (!line)
		w->done++;
	return 0;
}

/* Stack st's frames into `ids`.  0 or -ENOMEM. */
static int stack_ids(const struct pr_profile *p, const struct layout *lay,
		     const struct prof_stack *st, struct ids *ids)
{
	struct walk w = { .p = p, .ids = ids, .lay = lay, .joined = st->joined,
			  .chain = lay->chain_at ? st->chain : 0 };

	ids->nr = 0;
	if (prof__end_cut(st->end)) {
		if (PR_ARRAY_RESERVE(ids->v, ids->cap, 1))
			return -ENOMEM;
		ids->v[ids->nr++] = truncated_frame(p);
	}
	return prof__walk_stack(p, st, false, push_frame, &w);
}

static void write_ids(FILE *out, const struct ids *ids, bool first)
{
	fputs(first ? "[" : ",\n[", out);
	for (size_t i = 0; i < ids->nr; i++)
		fprintf(out, "%s%" PRIu32, i ? "," : "", ids->v[i]);
	fputc(']', out);
}

static bool same_ids(const struct ids *a, const struct ids *b)
{
	return a->nr == b->nr && !memcmp(a->v, b->v, a->nr * sizeof(*a->v));
}

/* One frame of the shared list: its name, with `mark` after it. */
static void write_frame(FILE *out, bool first, const char *name, const char *mark,
			const char *file)
{
	size_t n = strlen(name), m = strlen(mark);
	char *both = malloc(n + m + 1);

	fputs(first ? "{\"name\":" : ",\n{\"name\":", out);
	if (both) {
		memcpy(both, name, n);
		memcpy(both + n, mark, m + 1);
	}
	pr__json_string(out, both ? both : name);
	free(both);
	if (file) {
		fputs(",\"file\":", out);
		pr__json_string(out, file);
	}
	fputc('}', out);
}

/* The functions' frames, then the unnamed ones (one per mapping and one
 * for no mapping: the label a flame graph gives them), each with `mark`. */
static void write_named_frames(const struct pr_profile *p, FILE *out, bool first,
			       const char *mark)
{
	char buf[512];

	for (uint32_t f = 0; f < p->nr_functions; f++) {
		const struct prof_function *fn = &p->functions[f];

		write_frame(out, first && !f, prof_str(p, fn->name), mark,
			    fn->file ? prof_str(p, fn->file) : NULL);
	}
	for (uint32_t m = 0; m <= p->nr_mappings; m++) {
		struct prof_location loc = { .mapping = m < p->nr_mappings ? m : PROF_NONE };

		write_frame(out, first && !p->nr_functions && !m,
			    prof__frame_label(p, &loc, 0, false, buf, sizeof(buf)), mark, NULL);
	}
}

/* The shared frames, laid out into *lay; with `annotate`, a copy for
 * the chain's frames. */
static void write_frames(const struct pr_profile *p, FILE *out, bool annotate,
			 struct layout *lay)
{
	bool joined = false, chain = false, cut = false;
	uint32_t at = truncated_frame(p) + 1;

	for (uint32_t s = 0; s < p->nr_stacks; s++) {
		joined |= p->stacks[s].joined > 0;
		chain |= annotate && p->stacks[s].chain > 0;
		cut |= prof__end_cut(p->stacks[s].end);
	}
	write_named_frames(p, out, true, "");
	/* Listed when some stack is cut or has marked frames (then they
	 * come after). */
	if (cut || joined || chain)
		write_frame(out, false, PROF_TRUNCATED_LABEL, "", NULL);
	*lay = (struct layout){ 0 };
	if (joined) {
		write_named_frames(p, out, false, PROF_JOINED_MARK);
		lay->joined_at = at;
		at += truncated_frame(p);
	}
	if (chain) {
		write_named_frames(p, out, false, PROF_CHAIN_MARK);
		lay->chain_at = at;
	}
}

/* Whether weights are nanoseconds: off-CPU and wall-clock time always
 * are, CPU samples when a frequency says what one stands for; with
 * events, a clock event's periods. */
static bool in_ns(const struct pr_profile *p, size_t event)
{
	if (p->nr_events)
		return p->events[event].ns;
	return prof__in_ns(p, 0) || p->freq;
}

/* What a stack weighs: its time (a CPU profile's is its count at the
 * frequency, whole: speedscope adds the weights up to endValue), or its
 * count without a frequency; with events, its periods. */
static uint64_t weight(const struct pr_profile *p, const struct prof_stack *st)
{
	if (p->nr_events || prof__in_ns(p, 0))
		return prof__stack_value(p, st);
	return p->freq ? st->count * UINT64_C(1000000000) / p->freq : st->count;
}

/* What a timeline entry of `ns` weighs: with events, ns is its period. */
static uint64_t entry_weight(const struct pr_profile *p, uint64_t ns)
{
	return p->nr_events || in_ns(p, 0) ? ns : 1;
}

/*
 * Thread t's timeline of `event` as runs: entries in a row whose stacks
 * print the same (the profile tells lines apart, speedscope only
 * functions) are one.  Writes the runs' stacks, or with `weights` what
 * each weighs (entry_weight()): two passes over the packed entries rather
 * than a copy of them.  `ids` is scratch.  0 or -ENOMEM.
 */
static int write_runs(const struct pr_profile *p, const struct layout *lay, uint32_t t,
		      size_t event, FILE *out, bool weights, struct ids ids[2])
{
	struct ids *cur = &ids[0], *next = &ids[1], *swap;
	struct prof_timeline_iter it;
	uint32_t stack, run = PROF_NONE;
	uint64_t time, ns, sum = 0;
	bool first = true;
	int ret;

	prof__timeline_iter(&p->timelines[t], &it);
	while (prof__timeline_next(&it, &time, &stack, &ns)) {
		if (!prof__shows(p, &p->stacks[stack], event))
			continue;
		if (run == PROF_NONE) {
			if ((ret = stack_ids(p, lay, &p->stacks[stack], cur)))
				return ret;
		} else if (stack != run) {
			if ((ret = stack_ids(p, lay, &p->stacks[stack], next)))
				return ret;
			if (!same_ids(cur, next)) {
				if (weights)
					fprintf(out, "%s%" PRIu64, first ? "" : ",", sum);
				else
					write_ids(out, cur, first);
				first = false;
				sum = 0;
				swap = cur;
				cur = next;
				next = swap;
			}
		}
		run = stack;
		sum += entry_weight(p, ns);
	}
	if (run != PROF_NONE && weights)
		fprintf(out, "%s%" PRIu64, first ? "" : ",", sum);
	else if (run != PROF_NONE)
		write_ids(out, cur, first);
	return 0;
}

/* Thread t's n stacks of `event`, order[0..n): as they came when the
 * thread has a timeline, else once each in the order first seen.  0 or
 * -ENOMEM. */
static int write_thread(const struct pr_profile *p, const struct layout *lay, uint32_t t,
			size_t event, const uint32_t *order, uint32_t n, FILE *out,
			struct ids ids[2])
{
	const struct prof_thread *th = &p->threads[t];
	bool timeline = p->timeline && t < p->cap_timelines;
	uint64_t total = 0;
	char name[600];
	int ret = 0;

	snprintf(name, sizeof(name), "%s (pid %u, tid %u)", prof_str(p, th->comm), th->pid,
		 th->tid);
	/* A timeline's runs add up to its stacks' time (a CPU sample's time
	 * is its own there, not the frequency's mean). */
	for (uint32_t i = 0; i < n; i++) {
		const struct prof_stack *st = &p->stacks[order[i]];

		total += !timeline || p->nr_events ? weight(p, st) : in_ns(p, 0) ? st->ns : st->count;
	}
	fputs("{\"type\":\"sampled\",\"name\":", out);
	pr__json_string(out, name);
	fprintf(out, ",\"unit\":\"%s\",\"startValue\":0,\"endValue\":%" PRIu64 ",\n\"samples\":[",
		in_ns(p, event) ? "nanoseconds" : "none", total);
	if (timeline)
		ret = write_runs(p, lay, t, event, out, false, ids);
	for (uint32_t i = 0; !timeline && !ret && i < n; i++) {
		ret = stack_ids(p, lay, &p->stacks[order[i]], &ids[0]);
		if (!ret)
			write_ids(out, &ids[0], i == 0);
	}
	fputs("],\n\"weights\":[", out);
	if (timeline && !ret)
		ret = write_runs(p, lay, t, event, out, true, ids);
	for (uint32_t i = 0; !timeline && i < n; i++)
		fprintf(out, "%s%" PRIu64, i ? "," : "", weight(p, &p->stacks[order[i]]));
	fputs("]}", out);
	return ret;
}

int pr__out_speedscope(const struct pr_profile *p, FILE *out,
		       const struct pr_profile_write_opts *o)
{
	uint32_t *start = calloc(p->nr_threads + 1, sizeof(*start));
	uint32_t *order = malloc((p->nr_stacks + 1) * sizeof(*order));
	struct ids ids[2] = { { 0 } };
	struct layout lay;
	int ret = 0;

	if (!start || !order) {
		free(start);
		free(order);
		return -ENOMEM;
	}
	/* The event's stacks grouped by thread (a counting sort keeps each
	 * thread's in the order first seen). */
	for (uint32_t s = 0; s < p->nr_stacks; s++)
		if (prof__shows(p, &p->stacks[s], o->event))
			start[p->stacks[s].thread + 1]++;
	for (uint32_t t = 0; t < p->nr_threads; t++)
		start[t + 1] += start[t];
	for (uint32_t s = 0; s < p->nr_stacks; s++)
		if (prof__shows(p, &p->stacks[s], o->event))
			order[start[p->stacks[s].thread]++] = s;
	fputs("{\"$schema\":\"https://www.speedscope.app/file-format-schema.json\",\n"
	      "\"exporter\":\"dwarfsample\",\"name\":", out);
	pr__json_string(out, o->title);
	fputs(",\"activeProfileIndex\":0,\n\"shared\":{\"frames\":[\n", out);
	write_frames(p, out, o->annotate, &lay);
	fputs("]},\n\"profiles\":[\n", out);
	/* start[t] is now the end of thread t's stacks, the start of t+1's.
	 * A thread without any (its only waits were too short) has no
	 * profile. */
	for (uint32_t t = 0, written = 0; t < p->nr_threads && !ret; t++) {
		uint32_t begin = t ? start[t - 1] : 0;

		if (start[t] == begin)
			continue;
		if (written++)
			fputs(",\n", out);
		ret = write_thread(p, &lay, t, o->event, order + begin, start[t] - begin, out,
				   ids);
	}
	fputs("]}\n", out);
	free(ids[0].v);
	free(ids[1].v);
	free(start);
	free(order);
	return ret ? ret : ferror(out) ? -EIO : 0;
}
