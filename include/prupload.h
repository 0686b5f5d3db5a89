/* SPDX-License-Identifier: Apache-2.0 */
/*
 * prupload.h - a continuous profile shipped window by window.
 *
 * The windows (struct pr_windows) are a session's sink (prsession.h): one
 * profile counts every sample as it comes; every interval it is cut
 * (pr_profile_cut()), the window's processes are grouped by service,
 * process or host, and each group's profile, labelled, is handed on as a
 * struct pr_window.  The uploader (struct pr_uploader) takes such windows
 * on its own thread, encodes them and delivers them to a directory
 * (a gzipped pprof each), Grafana Pyroscope's push API and an
 * OpenTelemetry profiles endpoint, so that neither sampling nor unwinding
 * ever waits on a disk or the network.  What a backend cannot take now
 * waits in a spool on disk, bounded, and is delivered in order, with
 * backoff, when the backend is back, or after a restart.
 *
 * libcurl is loaded (dlopen("libcurl.so.4")) when the first uploader
 * starts, not linked: linked, its thirty-odd libraries (TLS, Kerberos,
 * LDAP, ...) would be loaded and relocated at every start of every
 * program using this library.  Once loaded it stays.
 *
 * The conventions written at the top of perfreader.h hold, but for the
 * uploader's log callback, which its thread calls too.
 */
#ifndef PRUPLOAD_H
#define PRUPLOAD_H

#include "prcommon.h"
#include "prprofile.h"
#include "prsession.h"

#ifdef __cplusplus
extern "C" {
#endif

/* A name and its value: a label, a tag, a header. */
struct pr_label {
	const char *key;
	const char *value;
};

/*
 * One group's profile of one window: what the uploader ships.  Every
 * pointer is owned by the window and freed with it (pr_window_free()).
 */
struct pr_window {
	struct pr_profile *profile;
	char *service;                /* Pyroscope's name, OTLP's service.name */
	uint64_t seq;                 /* the window's number, from 0 */
	uint64_t start_ns, end_ns;    /* wall clock, ns since the epoch */
	uint64_t freq;                /* the sampling frequency, Hz; 0 unknown */
	struct pr_label *labels;      /* Pyroscope's series labels */
	size_t nr_labels;
	struct pr_attr *resource;     /* OTLP's resource attributes */
	size_t nr_resource;
};
/* Accepts NULL. */
PR_API void pr_window_free(struct pr_window *w);

/* ------------------------------------------------------------------------
 * The uploader
 */

struct pr_uploader;

struct pr_uploader_opts {
	size_t sz;
	/* Called on the caller's thread and on the uploader's (every
	 * delivery's messages): it must be thread-safe. */
	pr_log_fn log;
	void *log_ctx;
	/* The directory sink (NULL: none): a gzipped pprof per window,
	 * SERVICE-YYYYmmddTHHMMSSZ-SEQ.pb.gz, mode 0600 unless the directory
	 * has a default ACL (which then decides), made if need be (mode 0755);
	 * the oldest go while the directory holds more than out_dir_max_bytes
	 * (0: 1 GiB) of them or they are older than out_dir_max_age_s (0: 7
	 * days). */
	const char *out_dir;
	uint64_t out_dir_max_bytes;
	uint64_t out_dir_max_age_s;
	/* Base URLs, http:// or https:// (NULL: none): Pyroscope's (1.0 or
	 * later), to which /push.v1.PusherService/Push is appended (a
	 * PushRequest with a series per profile type the window has:
	 * process_cpu, off_cpu, wall); an OTLP receiver's, to which
	 * /v1development/profiles is appended.  A URL with credentials in it
	 * (user:password@host) is refused: they go in the fields below. */
	const char *pyroscope_url;
	const char *otlp_url;
	/* Where windows a backend did not take wait for it (a folder each,
	 * made if need be, mode 0700); must not be NULL with a URL.  At most
	 * spool_max_bytes (0: 256 MiB) wait per backend: the oldest go
	 * first.  While a spool cannot be written, windows wait in memory:
	 * at most 16 MiB and spool_max_bytes, the oldest dropped. */
	const char *spool_dir;
	uint64_t spool_max_bytes;
	/* Per request, in seconds (0: 30): to connect and send it whole.
	 * Its answer is then awaited 4 times as long, and a request sent
	 * whole that gets none is not sent again (the backend may have
	 * counted it): it is counted as unconfirmed. */
	double timeout_s;
	/* Pyroscope's basic authentication (used when either is not NULL
	 * and not empty) and tenant (X-Scope-OrgID; NULL or empty: none).
	 * Copied; the uploader's copy of the password is wiped when it is
	 * freed. */
	const char *pyroscope_user;
	const char *pyroscope_password;
	const char *pyroscope_tenant;
	/* Headers sent to the OTLP receiver (Authorization, ...): NAME and
	 * VALUE each; copied. */
	const struct pr_label *otlp_headers;
	size_t nr_otlp_headers;
	/* A test hook, not for production: the uploader's clock -- backoff,
	 * Retry-After and the close's grace are measured in it; a request's
	 * timeout is in real time -- runs this many times as fast as real
	 * time, from 1 to 1000 (0: 1), so that a test lives through a
	 * backend's long outage in a few seconds. */
	double clock_rate;
};

/*
 * Check the sinks (the directory written to, the URLs, the spools opened:
 * what an earlier run left there is delivered first) and start the
 * uploader's thread, with every signal blocked.  NULL with errno set,
 * after logging what is wrong: EINVAL (a URL that is not http(s), no
 * spool_dir, clock_rate out of range), ELIBACC (libcurl could not be
 * loaded), ENOMEM, or the errno of a directory that cannot be used.
 */
PR_API struct pr_uploader *pr_uploader_new(const struct pr_uploader_opts *opts);

/*
 * Hand over window `w`, taken whatever the return; never waits on a disk
 * or the network.  0, or -ENOMEM: the window is lost, and counted (lost).
 * When 512 windows already wait in memory for the uploader's thread, the
 * oldest of them is dropped (counted lost, and said once per burst).
 * Thread-safe.
 */
PR_API int pr_uploader_submit(struct pr_uploader *u, struct pr_window *w);

struct pr_uploader_stats {
	size_t sz;
	uint64_t sent;                /* requests a backend took */
	/* Windows that had to wait for a backend, each counted once: those
	 * waiting when it failed, and those that came while it was failing. */
	uint64_t spooled;
	uint64_t dropped;             /* windows dropped from a full spool */
	/* Refused by a backend: an answer 4xx, but 408 and 429 (tried again). */
	uint64_t refused;
	/* Neither delivered nor kept: not encoded, not spooled, not written
	 * to the directory, dropped from a full queue in memory
	 * (pr_uploader_submit()), or out of memory. */
	uint64_t lost;
	uint64_t retries;
	uint64_t bytes_sent;
	uint64_t written;             /* files written to the directory */
	double last_latency_s;        /* of the last request */
	size_t queued;                /* windows waiting: in memory and spooled */
	/* Answered with a fault (a 500, 501, 505...) ten times, each time
	 * put behind the others: given up. */
	uint64_t given_up;
	/* Sent whole, and no answer came (a timeout, a 504 from a gateway):
	 * not sent again, since the backend may have counted it. */
	uint64_t unconfirmed;
};
/* Set st->sz.  0 or -EINVAL.  Thread-safe. */
PR_API int pr_uploader_stats(struct pr_uploader *u, struct pr_uploader_stats *st);

/*
 * Write and deliver what is queued, trying the backends for at most
 * `grace_s` seconds (of the uploader's clock), leave the rest in the
 * spools (logged: the next uploader on them delivers it), stop the
 * thread, set the final figures into `st` (NULL: none; set st->sz) and
 * free.  0, or -EIO when a window was neither delivered nor kept
 * (lost).  Accepts NULL.
 */
PR_API int pr_uploader_close(struct pr_uploader *u, double grace_s,
			     struct pr_uploader_stats *st);

/* ------------------------------------------------------------------------
 * The windows
 */

struct pr_windows;

/* What a window's groups are. */
enum pr_group_by {
	PR_GROUP_SERVICE = 0,        /* one profile per service */
	PR_GROUP_PROCESS,            /* per process */
	PR_GROUP_HOST,               /* one for everything */
};

/*
 * Where each group's window goes: `w` is the callee's (pr_window_free()),
 * whatever it returns; 0 or a negative errno (the window is then counted
 * lost).  pr_uploader_submit() behind a function of this shape is the
 * usual one.
 */
typedef int (*pr_window_fn)(void *ctx, struct pr_window *w);

struct pr_windows_opts {
	size_t sz;
	pr_log_fn log;
	void *log_ctx;
	/* How long a window lasts: whole seconds, 1 or more (Pyroscope's
	 * times are seconds). */
	uint64_t interval_ns;
	enum pr_group_by group_by;
	/* Every process's service; NULL: its executable's name. */
	const char *service;
	/* Labels on every window (Pyroscope's series labels, OTLP resource
	 * attributes, profile tags); keys are Prometheus label names.
	 * Not copied: they must outlive the windows. */
	const struct pr_label *tags;
	size_t nr_tags;
	/* host.name; must not be NULL.  Not copied. */
	const char *host;
	/* The sampling rate in Hz, 0 for events sampled by count. */
	uint64_t freq;
	/* Must not be NULL. */
	pr_window_fn ship;
	void *ship_ctx;
};

/*
 * Windows starting at `start` (event clock, ns) = `start_wall` (ns since
 * the epoch): the first ends at the next wall-clock multiple of the
 * interval, the others last the interval, so that windows of several hosts
 * line up.  `po` makes the profile (copied).  Each process's service is
 * its executable's name (/proc/PID/exe while it lives, else its name as
 * the kernel kept it); each group is labelled with the tags, host_name,
 * the pid (grouped by process) and the container and pod it runs in when
 * its processes share one.  NULL with errno set (EINVAL, ENOMEM).
 */
PR_API struct pr_windows *pr_windows_new(const struct pr_windows_opts *opts,
					 const struct pr_profile_opts *po, uint64_t start,
					 uint64_t start_wall);

/*
 * The windows as a session's sink, into `out`: for one worker (the
 * windows are cut on its clock, at each record's time and at the
 * session's tick); a cut releases what the model handed out
 * (PR_SINK_RELEASED), so the session trims its caches then.  The
 * windows must outlive the session.
 */
PR_API void pr_windows_sink(struct pr_windows *w, struct pr_sink *out);

/* The last window, ending at `end` (event clock): waits still open end
 * there.  Call once the session finished.  0 or a negative errno. */
PR_API int pr_windows_finish(struct pr_windows *w, uint64_t end);

struct pr_windows_stats {
	size_t sz;
	uint64_t windows;            /* windows cut */
	uint64_t profiles;           /* group profiles handed on */
	uint64_t lost;               /* group profiles lost */
	uint64_t late;               /* records older than the window they went to */
};
/* Set st->sz.  0 or -EINVAL. */
PR_API int pr_windows_stats(const struct pr_windows *w, struct pr_windows_stats *st);

/* Accepts NULL. */
PR_API void pr_windows_free(struct pr_windows *w);

#ifdef __cplusplus
}
#endif

#endif /* PRUPLOAD_H */
