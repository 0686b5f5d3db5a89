/* SPDX-License-Identifier: Apache-2.0 */
/* libcurl for the uploads (upload.h), called through a table filled when
 * the first uploader starts. */
#ifndef PR_UPLOAD_CURL_H
#define PR_UPLOAD_CURL_H

/* The functions are called through `pr__curl` (below), not curl's
 * type-checking macros. */
#define CURL_DISABLE_TYPECHECK
#include <curl/curl.h>
#include <time.h>
/*
 * libcurl, loaded when an uploader starts, not linked: linked, its
 * thirty-odd libraries (TLS, Kerberos, LDAP, ...) were loaded and
 * relocated at every start of every command, about 6 ms of CPU -- a sixth
 * of a whole `report` of a 20 000-sample capture.
 */
struct pr__curl {
	CURLcode (*global_init)(long flags);
	void (*global_cleanup)(void);
	CURL *(*easy_init)(void);
	CURLcode (*easy_setopt)(CURL *curl, CURLoption option, ...);
	CURLcode (*easy_perform)(CURL *curl);
	CURLcode (*easy_getinfo)(CURL *curl, CURLINFO info, ...);
	void (*easy_cleanup)(CURL *curl);
	const char *(*easy_strerror)(CURLcode code);
	char *(*easy_escape)(CURL *curl, const char *s, int len);
	void (*free)(void *p);
	time_t (*getdate)(const char *s, const time_t *unused);
	struct curl_slist *(*slist_append)(struct curl_slist *l, const char *s);
	void (*slist_free_all)(struct curl_slist *l);
};
extern struct pr__curl pr__curl;


/* curl.h defines some as macros of its own. */
#undef curl_global_init
#define curl_global_init pr__curl.global_init
#undef curl_global_cleanup
#define curl_global_cleanup pr__curl.global_cleanup
#undef curl_easy_init
#define curl_easy_init pr__curl.easy_init
#undef curl_easy_setopt
#define curl_easy_setopt pr__curl.easy_setopt
#undef curl_easy_perform
#define curl_easy_perform pr__curl.easy_perform
#undef curl_easy_getinfo
#define curl_easy_getinfo pr__curl.easy_getinfo
#undef curl_easy_cleanup
#define curl_easy_cleanup pr__curl.easy_cleanup
#undef curl_easy_strerror
#define curl_easy_strerror pr__curl.easy_strerror
#undef curl_easy_escape
#define curl_easy_escape pr__curl.easy_escape
#undef curl_free
#define curl_free pr__curl.free
#undef curl_getdate
#define curl_getdate pr__curl.getdate
#undef curl_slist_append
#define curl_slist_append pr__curl.slist_append
#undef curl_slist_free_all
#define curl_slist_free_all pr__curl.slist_free_all

struct pr_logger;
/* Fill `pr__curl` (once) and curl_global_init(): 0, or -ELIBACC after
 * logging what is missing.  pr__curl_stop() after each that succeeded.
 * Thread-safe. */
int pr__curl_start(const struct pr_logger *lg);
void pr__curl_stop(void);

#endif
