/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The agent's time windows: one profile counts every sample as it comes;
 * every interval it is cut (pr_profile_cut), the window's processes are
 * grouped by service, process or host, and each group's profile, labelled,
 * goes to the uploader as a struct ds_window.  Used by the worker thread
 * only.
 */
#ifndef DS_WINDOWS_H
#define DS_WINDOWS_H

#include <stdint.h>

#include "prprofile.h"
#include "upload.h"

enum ds_group_by {
	DS_GROUP_SERVICE = 0,        /* one profile per service (the default) */
	DS_GROUP_PROCESS,            /* per process */
	DS_GROUP_HOST,               /* one for everything */
};

struct ds_windows_opts {
	uint64_t interval_ns;        /* a whole number of seconds */
	enum ds_group_by group_by;
	const char *service;         /* every process's service; NULL: its executable's name */
	const struct ds_kv *tags;    /* --tag KEY=VALUE: on every window */
	size_t nr_tags;
	const char *host;            /* host.name */
	uint64_t freq;               /* Hz, 0 for events sampled by count */
	struct ds_uploader *up;      /* where windows go */
};

struct ds_windows;

/*
 * Windows starting at `start` (event clock, ns) = `start_wall` (ns since
 * the epoch): the first ends at the next wall-clock multiple of the
 * interval, the others last the interval, so that windows of several hosts
 * line up.  `po` makes the profile (copied).  NULL after saying why.
 */
struct ds_windows *ds_windows_new(const struct ds_windows_opts *o,
				  const struct pr_profile_opts *po, uint64_t start,
				  uint64_t start_wall);
/* The profile samples are counted in until the next cut. */
struct pr_profile *ds_windows_profile(struct ds_windows *w);
/* Cut every window that ends at or before `time` (event clock): call with
 * the pipeline's horizon.  ds_windows_record() for a record's time before
 * it is counted; a record older than the current window (it came after
 * its window was cut) is counted there, as late.  0 or a negative errno. */
int ds_windows_advance(struct ds_windows *w, uint64_t time);
int ds_windows_record(struct ds_windows *w, uint64_t time);
/* The last window, ending at `end` (event clock); waits still open end
 * there. */
int ds_windows_finish(struct ds_windows *w, uint64_t end);

/* The windows as a session's sink (prsession.h), into `out`: one worker
 * (the windows are cut on its clock); a cut releases what the model
 * handed out (PR_SINK_RELEASED), so the session trims its caches then. */
struct pr_sink;
void ds_windows_session(struct ds_windows *w, struct pr_sink *out);

struct ds_windows_stats {
	uint64_t windows;            /* windows cut */
	uint64_t profiles;           /* group profiles handed to the uploader */
	uint64_t lost;               /* group profiles lost (no memory) */
	uint64_t late;               /* records older than the window they went to */
};
void ds_windows_stats(const struct ds_windows *w, struct ds_windows_stats *st);
/* Accepts NULL. */
void ds_windows_free(struct ds_windows *w);

#endif
