/* SPDX-License-Identifier: Apache-2.0 */
/* Grafana Pyroscope's /ingest: the target a window is posted to. */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "upload/upload.h"

/* `s` appended to *q, percent-encoded as a query value. */
static int add_escaped(CURL *curl, char **q, const char *prefix, const char *s)
{
	char *e = curl_easy_escape(curl, s, 0), *n = NULL;
	int ret = -ENOMEM;

	if (e && asprintf(&n, "%s%s%s", *q ? *q : "", prefix, e) >= 0) {
		free(*q);
		*q = n;
		ret = 0;
	}
	curl_free(e);
	return ret;
}

/* /ingest?name=SERVICE{k=v,...}&from=..&until=..&format=pprof&... */
char *pr__pyroscope_target(struct pr_uploader *u, const struct pr_window *w)
{
	char *name = NULL, *q = NULL, *t = NULL;
	size_t len = strlen(w->service) + 3;

	for (size_t i = 0; i < w->nr_labels; i++)
		len += strlen(w->labels[i].key) + strlen(w->labels[i].value) + 2;
	name = malloc(len);
	if (!name)
		return NULL;
	/* Label values are the windows' own: host names, ids, tags;
	 * a ',' or '}' in one would end it early, so they go as '_'. */
	len = (size_t)sprintf(name, "%s{", w->service);
	for (size_t i = 0; i < w->nr_labels; i++) {
		len += (size_t)sprintf(name + len, "%s%s=", i ? "," : "", w->labels[i].key);
		for (const char *v = w->labels[i].value; *v; v++)
			name[len++] = *v == ',' || *v == '}' || *v == '{' || *v == '=' ? '_' : *v;
	}
	name[len++] = '}';
	name[len] = '\0';
	if (!add_escaped(u->be[B_PYROSCOPE].curl, &q, "/ingest?name=", name) &&
	    asprintf(&t, "%s&from=%" PRIu64 "&until=%" PRIu64 "&format=pprof&spyName=dwarfsample"
		     "&sampleRate=%" PRIu64, q, w->start_ns / 1000000000u,
		     (w->end_ns + 999999999u) / 1000000000u, w->freq) < 0)
		t = NULL;
	free(q);
	free(name);
	return t;
}
