/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Folded stacks, as Brendan Gregg's stackcollapse scripts write them and
 * flamegraph.pl, inferno and speedscope read them: one line per distinct
 * stack, root first, frames joined by ';', then a space and the count (in
 * an off-CPU or wall-clock profile, the nanoseconds: a wait's stack ends
 * in its pseudo-frame, "[off-cpu: blocked]" or "[off-cpu: preempted]").
 *
 * The lines are the paths of the flame tree (flametree.c) in label order,
 * each with the samples that ended there: stacks that print the same
 * (threads of one process, lines of one function) are one line, and
 * nothing but the tree and the current path is held.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "output/output.h"

struct path {
	char *s;
	size_t len, cap;
};

/* Append one frame: ';' separates frames, so a name's own becomes ':'
 * (as the stackcollapse scripts do), and a line break a space. */
static int path_push(struct path *b, const char *label, bool first)
{
	size_t n = strlen(label) + 1;

	if (b->len + n + 1 > b->cap) {
		size_t cap = b->cap ? b->cap * 2 : 4096;
		char *t;

		while (cap < b->len + n + 1)
			cap *= 2;
		if (!(t = realloc(b->s, cap)))
			return -ENOMEM;
		b->s = t;
		b->cap = cap;
	}
	if (!first)
		b->s[b->len++] = ';';
	for (const char *c = label; *c; c++)
		b->s[b->len++] = *c == ';' ? ':' : *c == '\n' || *c == '\r' ? ' ' : *c;
	b->s[b->len] = '\0';
	return 0;
}

int pr__out_folded(const struct pr_profile *p, FILE *out, const struct pr_profile_write_opts *o)
{
	struct prof_tree t = { 0 };
	struct path path = { 0 };
	uint32_t *order = NULL, *first = NULL, *walk = NULL;
	size_t *mark = NULL;
	int ret;

	ret = prof__tree_build(&t, p, o);
	if (!ret)
		ret = prof__tree_layout(&t, &order);
	if (!ret && (!(first = calloc(t.nr + 1, sizeof(*first))) ||
		     !(walk = malloc(t.nr * sizeof(*walk))) ||
		     !(mark = malloc(t.nr * sizeof(*mark)))))
		ret = -ENOMEM;
	if (ret)
		goto out;
	/* Children are contiguous in `order`: node n's are
	 * order[first[n] .. first[n + 1]). */
	for (uint32_t i = 0; i + 1 < t.nr; i++)
		first[t.nodes[order[i]].parent + 1]++;
	for (uint32_t n = 0; n < t.nr; n++)
		first[n + 1] += first[n];
	/* Depth first from the root, without recursion: walk[d] is the next
	 * child to visit at depth d, mark[d] the path's length there. */
	{
		uint32_t depth = 0, node = 0;

		walk[0] = first[0];
		mark[0] = 0;
		while (!ret) {
			uint32_t end = first[node + 1];

			if (walk[depth] < end) {
				uint32_t child = order[walk[depth]++];

				path.len = mark[depth];
				ret = path_push(&path, t.nodes[child].label, depth == 0);
				node = child;
				walk[++depth] = first[node];
				mark[depth] = path.len;
				continue;
			}
			/* Every child done: the samples that ended here. */
			if (depth > 0) {
				uint64_t self = t.nodes[node].count;

				for (uint32_t i = first[node]; i < end; i++)
					self -= t.nodes[order[i]].count;
				path.len = mark[depth];
				if (self && fprintf(out, "%.*s %" PRIu64 "\n", (int)path.len, path.s,
						    self) < 0)
					ret = -EIO;
			}
			if (depth == 0)
				break;
			depth--;
			node = t.nodes[node].parent;
		}
	}
out:
	free(mark);
	free(walk);
	free(first);
	free(order);
	free(path.s);
	prof__tree_free(&t);
	return ret;
}
