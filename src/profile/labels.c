/* SPDX-License-Identifier: Apache-2.0 */
/*
 * What the writers show of a profile's frames: each location's label as
 * flame graphs and folded stacks name it, labels interned so that each is
 * formatted once, and a stack's walk root first with them.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "profile/profile.h"

static const char *base_name(const char *path)
{
	const char *slash = strrchr(path, '/');

	return slash && slash[1] ? slash + 1 : path;
}

const char *prof__frame_label(const struct pr_profile *p, const struct prof_location *loc,
			      uint32_t i, bool annotate, char *buf, size_t len)
{
	const char *name, *mark = "";

	if (i < loc->nr_lines) {
		name = prof_str(p, p->functions[p->lines[loc->line + i].function].name);
		snprintf(buf, len, "%s", name);
	} else if (loc->mapping != PROF_NONE) {
		/* As stackcollapse-perf.pl names an unnamed frame: by its
		 * file, "[libc.so.6]"; "[kernel.kallsyms]" is already so. */
		name = base_name(prof_str(p, p->mappings[loc->mapping].name));
		snprintf(buf, len, name[0] == '[' ? "%s" : "[%s]", name);
	} else {
		snprintf(buf, len, "[unknown]");
	}
	if (!annotate)
		return buf;
	if (loc->kind == PROF_KERNEL)
		mark = "_[k]";
	else if (i + 1 < loc->nr_lines)
		mark = "_[i]";
	else if (loc->kind == PROF_JIT)
		mark = "_[j]";
	if (*mark) {
		size_t n = strlen(buf);

		if (n + strlen(mark) < len)
			memcpy(buf + n, mark, strlen(mark) + 1);
	}
	return buf;
}

const char *prof__labels_intern(struct prof_labels *c, const char *s)
{
	uint64_t h = pr__hash_str(s);
	size_t it = 0;
	const char *v;

	while ((v = pr__hashmap_next(&c->by_text, h, &it)))
		if (!strcmp(v, s))
			return v;
	if (pr__hashmap_reserve(&c->by_text, 1) || !(v = pr__arena_strdup(&c->arena, s)))
		return NULL;
	pr__hashmap_add(&c->by_text, h, (void *)v);
	return v;
}

void prof__labels_free(struct prof_labels *c)
{
	pr__hashmap_free(&c->by_frame);
	pr__hashmap_free(&c->by_text);
	pr__arena_free(&c->arena);
}

/* Where a frame came from, as annotate marks it: unwound from the copy
 * (no mark), joined from an earlier stack, or from the call chain. */
enum source { SRC_UNWOUND, SRC_JOINED, SRC_CHAIN };

static const char *const source_marks[] = {
	[SRC_UNWOUND] = "", [SRC_JOINED] = PROF_JOINED_MARK, [SRC_CHAIN] = PROF_CHAIN_MARK,
};

/* Line `i` of location `l`'s label into buf, marked as from `src`. */
static const char *frame_label(const struct pr_profile *p, uint32_t l, uint32_t i,
			       bool annotate, enum source src, char *buf, size_t len)
{
	const char *label = prof__frame_label(p, &p->locations[l], i, annotate, buf, len);
	const char *mark = source_marks[src];
	size_t n = strlen(buf);

	if (n + strlen(mark) < len)
		memcpy(buf + n, mark, strlen(mark) + 1);
	return label;
}

/* The label of line `i` of location `l`, from `c` (formatted and
 * interned the first time), or formatted into buf without `c`. */
static const char *label_of(const struct pr_profile *p, struct prof_labels *c, uint32_t l,
			    uint32_t i, bool annotate, enum source src, char *buf, size_t len)
{
	/* Lines are 16 bits: location, line and the source in one. */
	uint64_t key = ((uint64_t)l << 18 | (uint64_t)i << 2 | src) + 1;
	const char *v;

	if (!c)
		return frame_label(p, l, i, annotate, src, buf, len);
	if ((v = pr__hashmap_get(&c->by_frame, key)))
		return v;
	v = prof__labels_intern(c, frame_label(p, l, i, annotate, src, buf, len));
	if (!v || pr__hashmap_put(&c->by_frame, key, (void *)v)) {
		c->failed = true;
		return NULL;
	}
	return v;
}

static int walk(const struct pr_profile *p, const struct prof_stack *st, bool annotate,
		struct prof_labels *c, prof_frame_fn fn, void *arg)
{
	char buf[1024];

	for (uint32_t f = st->nr; f-- > 0;) {
		uint32_t l = p->frames[st->frame + f];
		const struct prof_location *loc = &p->locations[l];
		uint32_t n = loc->nr_lines ? loc->nr_lines : 1;
		/* Joined frames and those from the chain are the outermost
		 * ones. */
		enum source src = !annotate                ? SRC_UNWOUND
				  : f >= st->nr - st->joined ? SRC_JOINED
				  : f >= st->nr - st->chain  ? SRC_CHAIN
							     : SRC_UNWOUND;

		/* Lines are innermost first: the root-first walk takes
		 * them from the last. */
		for (uint32_t i = n; i-- > 0;) {
			const char *label = label_of(p, c, l, i, annotate, src, buf, sizeof(buf));
			int ret;

			if (!label)
				return -ENOMEM;
			if ((ret = fn(label, loc, i, arg)))
				return ret;
		}
	}
	return 0;
}

int prof__walk_stack(const struct pr_profile *p, const struct prof_stack *st, bool annotate,
		     prof_frame_fn fn, void *arg)
{
	return walk(p, st, annotate, NULL, fn, arg);
}

int prof__walk_stack_interned(const struct pr_profile *p, const struct prof_stack *st,
			      bool annotate, struct prof_labels *c, prof_frame_fn fn, void *arg)
{
	return walk(p, st, annotate, c, fn, arg);
}

const char *prof__root_label(const struct pr_profile *p, const struct prof_thread *t,
			     bool per_thread, char *buf, size_t len)
{
	if (per_thread)
		snprintf(buf, len, "%s-%u/%u", prof_str(p, t->comm), t->pid, t->tid);
	else
		snprintf(buf, len, "%s", prof_str(p, t->process));
	return buf;
}
