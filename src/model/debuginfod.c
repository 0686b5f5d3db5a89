/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Debug files fetched by build-id from the debuginfod servers that
 * DEBUGINFOD_URLS names, through libdebuginfod, loaded the first time a
 * debug file is not found here and only when servers are named: loading
 * it (and libcurl, GnuTLS, Kerberos...) costs 6 ms a run.  Its settings
 * (DEBUGINFOD_TIMEOUT, DEBUGINFOD_CACHE_PATH) are its own environment's.
 * Loaded rather than linked, as libdwfl does, so that neither the library
 * nor its header is needed to build or run without servers.
 */
#include <dlfcn.h>
#include <stdlib.h>
#include <string.h>

#include "model/elfcache.h"

/* libdebuginfod's ABI (elfutils/debuginfod.h), the part used here. */
struct debuginfod_client;
typedef struct debuginfod_client *(*begin_fn)(void);
typedef int (*find_fn)(struct debuginfod_client *c, const unsigned char *id, int len,
		       char **path);
typedef void (*end_fn)(struct debuginfod_client *c);

struct pr_debuginfod {
	void *lib;
	struct debuginfod_client *client;
	find_fn find;
	end_fn end;
};

static bool servers(void)
{
	const char *urls = getenv("DEBUGINFOD_URLS");

	return urls && urls[strspn(urls, " \t")];
}

/* A function of `lib` into *fn: POSIX lets dlsym() return one, but ISO C
 * has no cast from an object pointer to a function pointer. */
static void load(void *lib, const char *name, void *fn, size_t size)
{
	void *p = dlsym(lib, name);

	memcpy(fn, &p, size);
}

/* The client, made on first use; NULL when there is none to be had. */
static struct pr_debuginfod *client(struct pr_debuginfod **dp, const struct pr_logger *lg)
{
	struct pr_debuginfod *d = *dp;
	begin_fn begin;

	if (d)
		return d->client ? d : NULL;
	d = *dp = calloc(1, sizeof(*d));
	if (!d)
		return NULL;
	d->lib = dlopen("libdebuginfod.so.1", RTLD_LAZY | RTLD_LOCAL);
	if (!d->lib) {
		pr__log(lg, PR_LOG_INFO, "debuginfod servers are set, but libdebuginfod "
			"cannot be loaded: %s", dlerror());
		return NULL;
	}
	load(d->lib, "debuginfod_begin", &begin, sizeof(begin));
	load(d->lib, "debuginfod_find_debuginfo", &d->find, sizeof(d->find));
	load(d->lib, "debuginfod_end", &d->end, sizeof(d->end));
	if (begin && d->find && d->end)
		d->client = begin();
	return d->client ? d : NULL;
}

int pr__debuginfod_find(struct pr_debuginfod **dp, const uint8_t *id, size_t len,
			char **path, const struct pr_logger *lg)
{
	struct pr_debuginfod *d;

	*path = NULL;
	if (!len || !servers() || !(d = client(dp, lg)))
		return -1;
	return d->find(d->client, id, (int)len, path);
}

void pr__debuginfod_free(struct pr_debuginfod *d)
{
	if (!d)
		return;
	if (d->client)
		d->end(d->client);
	/* The library stays loaded, as libdwfl leaves it: libcurl's global
	 * state, set up once per process, would be lost with it. */
	free(d);
}
