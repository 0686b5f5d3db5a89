/* SPDX-License-Identifier: Apache-2.0 */
/* libcurl, loaded when the first uploader starts (curl.h). */
#include <dlfcn.h>
#include <errno.h>
#include <pthread.h>
#include <stddef.h>
#include <string.h>

#include "upload/upload.h"

struct pr__curl pr__curl;

/* Uploaders may start and stop on several threads: the table is filled
 * once, and curl_global_init()/_cleanup(), which count their calls, are
 * not thread-safe in the libcurl of older distributions. */
static pthread_mutex_t curl_lock = PTHREAD_MUTEX_INITIALIZER;

static int load(const struct pr_logger *lg)
{
	static const char lib[] = "libcurl.so.4";
	static const struct {
		const char *name;
		size_t offset;
	} fns[] = {
#define FN(f, m) { "curl_" #f, offsetof(struct pr__curl, m) }
		FN(global_init, global_init), FN(global_cleanup, global_cleanup),
		FN(easy_init, easy_init), FN(easy_setopt, easy_setopt),
		FN(easy_perform, easy_perform), FN(easy_getinfo, easy_getinfo),
		FN(easy_cleanup, easy_cleanup), FN(easy_strerror, easy_strerror),
		FN(easy_escape, easy_escape), FN(free, free), FN(getdate, getdate),
		FN(slist_append, slist_append), FN(slist_free_all, slist_free_all),
#undef FN
	};
	struct pr__curl got;
	void *h;

	if (pr__curl.global_init)
		return 0;
	if (!(h = dlopen(lib, RTLD_NOW | RTLD_LOCAL))) {
		pr__log(lg, PR_LOG_ERROR, "the agent's uploads need %s (Debian: apt-get install "
			"libcurl4): %s", lib, dlerror());
		return -ELIBACC;
	}
	for (size_t i = 0; i < PR_ARRAY_SIZE(fns); i++) {
		void *f = dlsym(h, fns[i].name);

		if (!f) {
			pr__log(lg, PR_LOG_ERROR, "%s has no %s: it is not the libcurl the agent "
				"was built for", lib, fns[i].name);
			return -ELIBACC;
		}
		memcpy((char *)&got + fns[i].offset, &f, sizeof(f));
	}
	/* Loaded for good: its atexit handlers and threads outlive us. */
	pr__curl = got;
	return 0;
}

int pr__curl_start(const struct pr_logger *lg)
{
	int err;

	pthread_mutex_lock(&curl_lock);
	err = load(lg);
	if (!err && curl_global_init(CURL_GLOBAL_DEFAULT)) {
		pr__log(lg, PR_LOG_ERROR, "cannot start libcurl");
		err = -ELIBACC;
	}
	pthread_mutex_unlock(&curl_lock);
	return err;
}

void pr__curl_stop(void)
{
	pthread_mutex_lock(&curl_lock);
	curl_global_cleanup();
	pthread_mutex_unlock(&curl_lock);
}
