/* SPDX-License-Identifier: Apache-2.0 */
/* libcurl for the agent's uploads, called through a table filled when
 * the uploader starts. */
#ifndef DS_CURL_H
#define DS_CURL_H

/* The functions are called through `ds_curl` (below), not curl's
 * type-checking macros. */
#define CURL_DISABLE_TYPECHECK
#include <curl/curl.h>
#include <time.h>
/*
 * libcurl, loaded when the agent starts its uploader, not linked: linked,
 * its thirty-odd libraries (TLS, Kerberos, LDAP, ...) were loaded and
 * relocated at every start of every command, about 6 ms of CPU -- a sixth
 * of a whole `report` of a 20 000-sample capture.
 */
struct ds_curl {
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
extern struct ds_curl ds_curl;


/* curl.h defines some as macros of its own. */
#undef curl_global_init
#define curl_global_init ds_curl.global_init
#undef curl_global_cleanup
#define curl_global_cleanup ds_curl.global_cleanup
#undef curl_easy_init
#define curl_easy_init ds_curl.easy_init
#undef curl_easy_setopt
#define curl_easy_setopt ds_curl.easy_setopt
#undef curl_easy_perform
#define curl_easy_perform ds_curl.easy_perform
#undef curl_easy_getinfo
#define curl_easy_getinfo ds_curl.easy_getinfo
#undef curl_easy_cleanup
#define curl_easy_cleanup ds_curl.easy_cleanup
#undef curl_easy_strerror
#define curl_easy_strerror ds_curl.easy_strerror
#undef curl_easy_escape
#define curl_easy_escape ds_curl.easy_escape
#undef curl_free
#define curl_free ds_curl.free
#undef curl_getdate
#define curl_getdate ds_curl.getdate
#undef curl_slist_append
#define curl_slist_append ds_curl.slist_append
#undef curl_slist_free_all
#define curl_slist_free_all ds_curl.slist_free_all

/* Fill `ds_curl` once: 0, or -1 after saying what is missing. */
int ds_curl_load(void);

#endif
