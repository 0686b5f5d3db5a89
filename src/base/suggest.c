/* SPDX-License-Identifier: Apache-2.0 */
/* "Did you mean": the names closest to a misspelt one. */
#include <stdio.h>

#include "base/base.h"

/* Optimal string alignment distance: insertions, deletions, substitutions
 * and swaps of neighbours each cost one, the typos people make.  Words
 * longer than the suggestions are ever for count as far apart. */
static unsigned int distance(const char *a, const char *b)
{
	size_t la = strlen(a), lb = strlen(b);
	unsigned int rows[3][PR_SUGGEST_LEN + 1];
	unsigned int *prev2 = rows[0], *prev = rows[1], *cur = rows[2];

	if (la > PR_SUGGEST_LEN || lb > PR_SUGGEST_LEN)
		return ~0u;
	for (size_t j = 0; j <= lb; j++)
		prev[j] = (unsigned int)j;
	for (size_t i = 1; i <= la; i++) {
		cur[0] = (unsigned int)i;
		for (size_t j = 1; j <= lb; j++) {
			unsigned int cost = a[i - 1] != b[j - 1];
			unsigned int d = prev[j - 1] + cost;

			if (prev[j] + 1 < d)
				d = prev[j] + 1;
			if (cur[j - 1] + 1 < d)
				d = cur[j - 1] + 1;
			if (i > 1 && j > 1 && a[i - 1] == b[j - 2] &&
			    a[i - 2] == b[j - 1] && prev2[j - 2] + 1 < d)
				d = prev2[j - 2] + 1;
			cur[j] = d;
		}
		unsigned int *t = prev2;

		prev2 = prev;
		prev = cur;
		cur = t;
	}
	return prev[lb];
}

void pr__suggest_init(struct pr_suggest *s, const char *word)
{
	size_t len = strlen(word);

	memset(s, 0, sizeof(*s));
	s->word = word;
	/* Close enough to be the same word mistyped, not another word. */
	s->best = len <= 3 ? 1 : len <= 6 ? 2 : 3;
}

void pr__suggest_offer(struct pr_suggest *s, const char *candidate)
{
	unsigned int d = distance(s->word, candidate);

	if (d > s->best || d == 0)
		return;
	if (d < s->best) {
		s->best = d;
		s->n = 0;
	}
	for (size_t i = 0; i < s->n; i++)
		if (!strcmp(s->match[i], candidate))
			return;
	if (s->n < PR_SUGGEST_MAX)
		snprintf(s->match[s->n++], sizeof(s->match[0]), "%s", candidate);
}

void pr__suggest_text(const struct pr_suggest *s, const char *prefix, char *buf,
		      size_t size)
{
	size_t off = 0;

	buf[0] = '\0';
	for (size_t i = 0; i < s->n && off < size; i++) {
		int n = snprintf(buf + off, size - off, "%s'%s%s'",
				 i == 0 ? "did you mean " : i + 1 == s->n ? " or " : ", ",
				 prefix, s->match[i]);

		if (n < 0)
			break;
		off += (size_t)n;
	}
	if (s->n && off < size)
		snprintf(buf + off, size - off, "? ");
}
