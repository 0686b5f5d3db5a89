/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The profile's stacks merged into a tree by frame label: "all", then a
 * process (or thread), then its frames root first.  The SVG flame graph
 * draws it; the folded writer prints its paths.
 *
 * The tree is built without recursion: a node's children are found by a
 * hash of (parent, label), and since a parent is always made before its
 * children, laying the tree out is one pass over the children sorted by
 * (parent, label).  Memory is the tree's, not the samples'.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "profile/profile.h"

uint64_t prof__tree_hash(uint32_t parent, const char *s)
{
	return pr__hash_mix(pr__hash_str(s), parent);
}

/* The child of `parent` called `label` (interned in t->labels: equal
 * labels are equal pointers), made if new: its index, or PROF_NONE out
 * of memory.  Children are merged by label alone, so a frame's kind is
 * the one it was first seen with. */
static uint32_t tree_child(struct prof_tree *t, uint32_t parent, const char *label,
			   enum prof_tree_kind kind)
{
	uint64_t h = pr__hash_mix((uint64_t)(uintptr_t)label, parent);
	struct prof_tree_node *n;
	size_t it = 0;
	void *v;

	while ((v = pr__hashmap_next(&t->index, h, &it))) {
		n = &t->nodes[(uintptr_t)v - 1];
		if (n->parent == parent && n->label == label)
			return (uint32_t)((uintptr_t)v - 1);
	}
	if (pr__hashmap_reserve(&t->index, 1))
		return PROF_NONE;
	if (t->nr == t->cap) {
		uint32_t cap = t->cap ? t->cap * 2 : 1024;

		if (cap < t->cap || !(n = realloc(t->nodes, (size_t)cap * sizeof(*n))))
			return PROF_NONE;
		t->nodes = n;
		t->cap = cap;
	}
	n = &t->nodes[t->nr];
	*n = (struct prof_tree_node){ .parent = parent, .kind = (uint8_t)kind, .label = label };
	pr__hashmap_add(&t->index, h, (void *)((uintptr_t)t->nr + 1));
	return t->nr++;
}

void prof__tree_free(struct prof_tree *t)
{
	free(t->nodes);
	pr__hashmap_free(&t->index);
	prof__labels_free(&t->labels);
}

/* Told apart as prof__frame_label()'s annotations are, in the same order;
 * a wait's pseudo-frame by the kind of the stack it ends. */
static enum prof_tree_kind kind_of(const struct prof_location *loc, uint32_t line,
				   enum prof_stack_kind stack)
{
	if (loc->kind == PROF_WAIT)
		return stack == PROF_PREEMPTED ? PROF_TREE_PREEMPTED : PROF_TREE_BLOCKED;
	if (loc->kind == PROF_KERNEL)
		return PROF_TREE_KERNEL;
	if (line + 1 < loc->nr_lines)
		return PROF_TREE_INLINE;
	if (loc->kind == PROF_JIT)
		return PROF_TREE_JIT;
	return PROF_TREE_USER;
}

/* Step from the walk's node to its child `label`, and count the stack's
 * value there. */
static int tree_step(struct prof_tree *t, const char *label, enum prof_tree_kind kind)
{
	t->cur = tree_child(t, t->cur, label, kind);
	if (t->cur == PROF_NONE)
		return -ENOMEM;
	t->nodes[t->cur].count += t->count;
	t->nodes[t->cur].off_cpu += t->off_cpu;
	return 0;
}

static int add_frame(const char *label, const struct prof_location *loc, uint32_t line,
		     void *arg)
{
	struct prof_tree *t = arg;

	return tree_step(t, label, kind_of(loc, line, t->stack_kind));
}

int prof__tree_build(struct prof_tree *t, const struct pr_profile *p,
		      const struct pr_profile_write_opts *o)
{
	char root[512];
	int ret;

	const char *all = prof__labels_intern(&t->labels, "all");
	const char *cut = prof__labels_intern(&t->labels, PROF_TRUNCATED_LABEL);

	if (!all || !cut || tree_child(t, PROF_NONE, all, PROF_TREE_USER) != 0)
		return -ENOMEM;
	for (uint32_t i = 0; i < p->nr_stacks; i++) {
		const struct prof_stack *st = &p->stacks[i];
		const char *label;

		if (!prof__shows(p, st, o->event))
			continue;
		label = prof__labels_intern(&t->labels,
					    prof__root_label(p, &p->threads[st->thread],
							     o->per_thread, root, sizeof(root)));
		if (!label)
			return -ENOMEM;
		t->count = prof__stack_value(p, st);
		t->off_cpu = st->kind == PROF_ON_CPU ? 0 : t->count;
		t->stack_kind = st->kind;
		t->nodes[0].count += t->count;
		t->nodes[0].off_cpu += t->off_cpu;
		t->cur = 0;
		if ((ret = tree_step(t, label, PROF_TREE_USER)) ||
		    (prof__end_cut(st->end) && (ret = tree_step(t, cut, PROF_TREE_USER))) ||
		    (ret = prof__walk_stack_interned(p, st, o->annotate, &t->labels, add_frame,
						     t)))
			return ret;
	}
	return 0;
}

struct kid {
	const char *label;
	uint32_t parent, node;
};

static int by_parent_label(const void *a, const void *b)
{
	const struct kid *x = a, *y = b;

	if (x->parent != y->parent)
		return x->parent < y->parent ? -1 : 1;
	return strcmp(x->label, y->label);
}

/*
 * Give every node its offset (samples left of it) and depth.  Children go
 * in label order, as flamegraph.pl puts them, so that equal profiles draw
 * the same.  Sorted by parent, a node's own entry comes before its
 * children's (its parent's index is smaller than its own), so its offset
 * is known by the time they are placed.  With `children`, also hand back
 * every node but the root in that order (so each node's children are
 * contiguous, in label order); the caller frees it.
 */
int prof__tree_layout(struct prof_tree *t, uint32_t **children)
{
	struct kid *kids = malloc((t->nr ? t->nr : 1) * sizeof(*kids));

	if (!kids)
		return -ENOMEM;
	for (uint32_t i = 1; i < t->nr; i++)
		kids[i - 1] = (struct kid){ t->nodes[i].label, t->nodes[i].parent, i };
	qsort(kids, t->nr ? t->nr - 1 : 0, sizeof(*kids), by_parent_label);
	t->nodes[0].offset = t->nodes[0].next = 0;
	t->nodes[0].depth = 0;
	for (uint32_t i = 0; i + 1 < t->nr; i++) {
		struct prof_tree_node *n = &t->nodes[kids[i].node], *up = &t->nodes[kids[i].parent];

		n->offset = n->next = up->next;
		n->depth = up->depth + 1;
		up->next += n->count;
	}
	if (children) {
		/* The kids array becomes the list of node indexes. */
		uint32_t *order = (uint32_t *)kids;

		for (uint32_t i = 0; i + 1 < t->nr; i++)
			order[i] = kids[i].node;
		*children = order;
		return 0;
	}
	free(kids);
	return 0;
}
