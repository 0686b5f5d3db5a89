/* SPDX-License-Identifier: Apache-2.0 */
/*
 * speedscope's JSON file format (its file-format-spec): frames shared by
 * every profile, one "sampled" profile per thread.  A frame is a function
 * (name and file), so the flame graph does not split a function by line;
 * a frame nothing names is its mapping's "[file]", or "[unknown]".
 *
 * The profile keeps distinct stacks, not the order samples came in, so
 * each profile lists its stacks once, in the order first seen, weighted by
 * their CPU time (or count, without a frequency): speedscope's "left
 * heavy" and "sandwich" views are exact; its time order view shows when
 * each stack first appeared, not every recurrence.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>

#include "output/output.h"

/* A line's frame: its function, else (nothing named the location) an
 * index after the functions: per mapping, then one for no mapping. */
static uint32_t frame_of(const struct pr_profile *p, const struct prof_location *loc, uint32_t i)
{
	if (i < loc->nr_lines)
		return p->lines[loc->line + i].function;
	return p->nr_functions + (loc->mapping == PROF_NONE ? p->nr_mappings : loc->mapping);
}

struct walk {
	const struct pr_profile *p;
	FILE *out;
	bool first;
};

static int put_frame(const char *label, const struct prof_location *loc, uint32_t line,
		     void *arg)
{
	struct walk *w = arg;

	(void)label;
	fprintf(w->out, "%s%" PRIu32, w->first ? "" : ",", frame_of(w->p, loc, line));
	w->first = false;
	return 0;
}

static void write_frames(const struct pr_profile *p, FILE *out)
{
	char buf[512];

	for (uint32_t f = 0; f < p->nr_functions; f++) {
		const struct prof_function *fn = &p->functions[f];

		fputs(f ? ",\n{\"name\":" : "{\"name\":", out);
		pr__json_string(out, prof_str(p, fn->name));
		if (fn->file) {
			fputs(",\"file\":", out);
			pr__json_string(out, prof_str(p, fn->file));
		}
		fputc('}', out);
	}
	/* The unnamed frames, one per mapping and one for no mapping: the
	 * label a flame graph gives them. */
	for (uint32_t m = 0; m <= p->nr_mappings; m++) {
		struct prof_location loc = { .mapping = m < p->nr_mappings ? m : PROF_NONE };

		fputs(p->nr_functions || m ? ",\n{\"name\":" : "{\"name\":", out);
		pr__json_string(out, prof__frame_label(p, &loc, 0, false, buf, sizeof(buf)));
		fputc('}', out);
	}
}

/* What `count` samples weigh: CPU time in ns (whole: speedscope adds the
 * weights up to endValue), or the count without a frequency. */
static uint64_t weight(const struct pr_profile *p, uint64_t count)
{
	return p->freq ? count * UINT64_C(1000000000) / p->freq : count;
}

/* Thread t's n stacks, order[0..n), in the order first seen. */
static void write_thread(const struct pr_profile *p, uint32_t t, const uint32_t *order,
			 uint32_t n, FILE *out)
{
	const struct prof_thread *th = &p->threads[t];
	struct walk w = { .p = p, .out = out };
	uint64_t total = 0;
	char name[600];

	snprintf(name, sizeof(name), "%s (pid %u, tid %u)", prof_str(p, th->comm), th->pid,
		 th->tid);
	for (uint32_t i = 0; i < n; i++)
		total += weight(p, p->stacks[order[i]].count);
	fputs("{\"type\":\"sampled\",\"name\":", out);
	pr__json_string(out, name);
	fprintf(out, ",\"unit\":\"%s\",\"startValue\":0,\"endValue\":%" PRIu64 ",\n\"samples\":[",
		p->freq ? "nanoseconds" : "none", total);
	for (uint32_t i = 0; i < n; i++) {
		fputs(i ? ",\n[" : "[", out);
		w.first = true;
		prof__walk_stack(p, &p->stacks[order[i]], false, put_frame, &w);
		fputc(']', out);
	}
	fputs("],\n\"weights\":[", out);
	for (uint32_t i = 0; i < n; i++)
		fprintf(out, "%s%" PRIu64, i ? "," : "", weight(p, p->stacks[order[i]].count));
	fputs("]}", out);
}

int pr__out_speedscope(const struct pr_profile *p, FILE *out,
		       const struct pr_profile_write_opts *o)
{
	uint32_t *start = calloc(p->nr_threads + 1, sizeof(*start));
	uint32_t *order = malloc((p->nr_stacks + 1) * sizeof(*order));

	if (!start || !order) {
		free(start);
		free(order);
		return -ENOMEM;
	}
	/* Stacks grouped by thread (a counting sort keeps each thread's in
	 * the order first seen). */
	for (uint32_t s = 0; s < p->nr_stacks; s++)
		start[p->stacks[s].thread + 1]++;
	for (uint32_t t = 0; t < p->nr_threads; t++)
		start[t + 1] += start[t];
	for (uint32_t s = 0; s < p->nr_stacks; s++)
		order[start[p->stacks[s].thread]++] = s;
	fputs("{\"$schema\":\"https://www.speedscope.app/file-format-schema.json\",\n"
	      "\"exporter\":\"dwarfsample\",\"name\":", out);
	pr__json_string(out, o->title);
	fputs(",\"activeProfileIndex\":0,\n\"shared\":{\"frames\":[\n", out);
	write_frames(p, out);
	fputs("]},\n\"profiles\":[\n", out);
	/* start[t] is now the end of thread t's stacks, the start of t+1's. */
	for (uint32_t t = 0; t < p->nr_threads; t++) {
		uint32_t begin = t ? start[t - 1] : 0;

		if (t)
			fputs(",\n", out);
		write_thread(p, t, order + begin, start[t] - begin, out);
	}
	fputs("]}\n", out);
	free(start);
	free(order);
	return ferror(out) ? -EIO : 0;
}
