/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Folded stacks, as Brendan Gregg's stackcollapse scripts write them and
 * flamegraph.pl, inferno and speedscope read them: one line per distinct
 * stack, root first, frames joined by ';', then a space and the count.
 * Lines are sorted, and stacks that print the same (threads of one
 * process) are one line.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "profile.h"

struct line {
	char *text;
	uint64_t count;
};

struct buf {
	char *s;
	size_t len, cap;
};

static int buf_add(struct buf *b, const char *s, size_t n)
{
	if (b->len + n + 1 > b->cap) {
		size_t cap = b->cap ? b->cap * 2 : 256;
		char *t;

		while (cap < b->len + n + 1)
			cap *= 2;
		if (!(t = realloc(b->s, cap)))
			return -ENOMEM;
		b->s = t;
		b->cap = cap;
	}
	memcpy(b->s + b->len, s, n);
	b->len += n;
	b->s[b->len] = '\0';
	return 0;
}

/* A frame: ';' separates frames, so a name's own becomes ':' (as the
 * stackcollapse scripts do), and a line break a space. */
static int add_frame(const char *label, const struct prof_location *loc, uint32_t line,
		     void *arg)
{
	struct buf *b = arg;
	size_t start = b->len + 1;

	(void)loc, (void)line;
	if (buf_add(b, ";", 1) || buf_add(b, label, strlen(label)))
		return -ENOMEM;
	for (char *c = b->s + start; *c; c++)
		if (*c == ';')
			*c = ':';
		else if (*c == '\n' || *c == '\r')
			*c = ' ';
	return 0;
}

static int by_text(const void *a, const void *b)
{
	return strcmp(((const struct line *)a)->text, ((const struct line *)b)->text);
}

int pr__out_folded(const struct pr_profile *p, FILE *out, const struct pr_profile_write_opts *o)
{
	struct line *lines = calloc(p->nr_stacks ? p->nr_stacks : 1, sizeof(*lines));
	size_t n = 0;
	int ret = 0;

	if (!lines)
		return -ENOMEM;
	for (uint32_t i = 0; i < p->nr_stacks && !ret; i++) {
		const struct prof_stack *st = &p->stacks[i];
		struct buf b = { 0 };
		char root[512];

		prof__root_label(p, &p->threads[st->thread], o->per_thread, root, sizeof(root));
		ret = buf_add(&b, root, strlen(root));
		if (!ret)
			ret = prof__walk_stack(p, st, o->annotate, add_frame, &b);
		lines[n].text = b.s;
		lines[n++].count = st->count;
	}
	if (!ret) {
		qsort(lines, n, sizeof(*lines), by_text);
		for (size_t i = 0; i < n; i++) {
			uint64_t count = lines[i].count;

			while (i + 1 < n && !strcmp(lines[i].text, lines[i + 1].text))
				count += lines[++i].count;
			if (fprintf(out, "%s %" PRIu64 "\n", lines[i].text, count) < 0) {
				ret = -EIO;
				break;
			}
		}
	}
	for (size_t i = 0; i < n; i++)
		free(lines[i].text);
	free(lines);
	return ret;
}
