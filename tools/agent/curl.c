/* SPDX-License-Identifier: Apache-2.0 */
/* libcurl, loaded when the agent's uploader starts (curl.h). */
#include <dlfcn.h>
#include <stddef.h>
#include <string.h>

#include "cli.h"
#include "curl.h"

struct ds_curl ds_curl;

int ds_curl_load(void)
{
	static const char lib[] = "libcurl.so.4";
	static const struct {
		const char *name;
		size_t offset;
	} fns[] = {
#define FN(f, m) { "curl_" #f, offsetof(struct ds_curl, m) }
		FN(global_init, global_init), FN(global_cleanup, global_cleanup),
		FN(easy_init, easy_init), FN(easy_setopt, easy_setopt),
		FN(easy_perform, easy_perform), FN(easy_getinfo, easy_getinfo),
		FN(easy_cleanup, easy_cleanup), FN(easy_strerror, easy_strerror),
		FN(easy_escape, easy_escape), FN(free, free), FN(getdate, getdate),
		FN(slist_append, slist_append), FN(slist_free_all, slist_free_all),
#undef FN
	};
	void *h;

	if (ds_curl.global_init)
		return 0;
	if (!(h = dlopen(lib, RTLD_NOW | RTLD_LOCAL))) {
		ds_err("the agent's uploads need %s (Debian: apt-get install libcurl4): %s", lib,
		       dlerror());
		return -1;
	}
	for (size_t i = 0; i < sizeof(fns) / sizeof(fns[0]); i++) {
		void *f = dlsym(h, fns[i].name);

		if (!f) {
			ds_err("%s has no %s: it is not the libcurl the agent was built for", lib,
			       fns[i].name);
			return -1;
		}
		memcpy((char *)&ds_curl + fns[i].offset, &f, sizeof(f));
	}
	/* Loaded for good: its atexit handlers and threads outlive us. */
	return 0;
}
