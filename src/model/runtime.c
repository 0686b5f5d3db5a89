/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Which JIT runtime a process runs, from the files it maps: what a
 * message about its unnamed JIT code tells the user to start it with.
 * The name a process gives itself says nothing (a node script renames
 * it; a launcher has the JVM in a process called after the application).
 */
#include <stdio.h>
#include <string.h>

#include "model/model.h"

/* The runtime file `path` is, if any; a CPython's minor version into
 * *minor. */
static enum pr__runtime runtime_of(const char *path, unsigned *minor)
{
	const char *base = strrchr(path, '/');
	unsigned m;
	int used = 0;

	base = base ? base + 1 : path;
	if (!strcmp(base, "node") || !strcmp(base, "nodejs") || !strncmp(base, "libnode.so", 10))
		return PR_RUNTIME_NODE;
	if (!strcmp(base, "libjvm.so"))
		return PR_RUNTIME_JAVA;
	if (!strcmp(base, "libcoreclr.so"))
		return PR_RUNTIME_DOTNET;
	/* libpython3.12.so.1.0, python3.12 (a static interpreter). */
	if ((sscanf(base, "libpython3.%u%n", &m, &used) == 1 ||
	     sscanf(base, "python3.%u%n", &m, &used) == 1) &&
	    (!base[used] || base[used] == '.' || base[used] == 'd')) {
		*minor = m;
		return PR_RUNTIME_PYTHON;
	}
	return PR_RUNTIME_NONE;
}

enum pr__runtime pr__model_runtime(struct pr_model *m, uint32_t pid, unsigned *minor)
{
	const struct pr_proc *p = pr__model_proc(m, pid, false);
	const struct pr_dso *last = NULL;

	*minor = 0;
	for (size_t i = 0; p && i < p->nr; i++) {
		const struct pr_dso *d = p->maps[i].dso;
		enum pr__runtime r;

		/* A file's mappings follow each other. */
		if (d == last || d->anon)
			continue;
		last = d;
		r = runtime_of(d->path, minor);
		if (r != PR_RUNTIME_NONE)
			return r;
	}
	return PR_RUNTIME_NONE;
}
