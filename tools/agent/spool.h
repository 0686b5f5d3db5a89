/* SPDX-License-Identifier: Apache-2.0 */
/*
 * A backend's spool: requests waiting to be delivered, one file each in a
 * directory, delivered oldest first.  The files outlive the agent: a
 * restart delivers what the last run could not.  Bounded in bytes: when a
 * new request does not fit, the oldest are dropped (and counted).  Used by
 * the uploader's thread only.
 */
#ifndef DS_SPOOL_H
#define DS_SPOOL_H

#include <stddef.h>
#include <stdint.h>

/* A request as it is kept: where it goes (path and query, appended to
 * the backend's URL), its content type and encoding, and its body. */
struct ds_request {
	char *target;
	char *content_type;
	char *content_encoding;       /* "" for none */
	void *body;
	size_t len;
};
void ds_request_clear(struct ds_request *r);

struct ds_spool;

/* The spool in `dir` (made, mode 0700, if need be), holding at most
 * `max_bytes`; what a previous run left there is kept, in order.  NULL
 * after saying why. */
struct ds_spool *ds_spool_open(const char *dir, uint64_t max_bytes);
void ds_spool_close(struct ds_spool *s);

/* Keep request `r` after the others; the oldest go while the total is
 * over the bound, each counted in *dropped.  0, or a negative errno (the
 * disk: the request is not kept). */
int ds_spool_push(struct ds_spool *s, const struct ds_request *r, uint64_t *dropped);
/* The oldest request into *r (the caller clears it).  1, 0 when the spool
 * is empty, or a negative errno; an unreadable or damaged file is removed,
 * said, and counted in *dropped. */
int ds_spool_peek(struct ds_spool *s, struct ds_request *r, uint64_t *dropped);
/* Remove the oldest. */
void ds_spool_pop(struct ds_spool *s);

size_t ds_spool_count(const struct ds_spool *s);
uint64_t ds_spool_bytes(const struct ds_spool *s);

#endif
