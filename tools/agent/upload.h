/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The agent's uploader: its own thread takes each window's profiles,
 * encodes them and delivers them to the sinks — a directory, Grafana
 * Pyroscope's /ingest, an OpenTelemetry profiles endpoint — so that neither
 * sampling nor unwinding ever waits on a disk or a network.  What a
 * backend cannot take now waits in a spool on disk (spool.c), bounded,
 * and is delivered in order, with backoff, when the backend is back, or
 * after a restart.
 */
#ifndef DS_UPLOAD_H
#define DS_UPLOAD_H

#include <stddef.h>
#include <stdint.h>

#include "prprofile.h"

struct ds_kv {
	const char *key, *value;
};

/* One group's profile of one window: what the uploader ships.  Every
 * pointer is owned by the window (ds_window_free()). */
struct ds_window {
	struct pr_profile *profile;
	char *service;                /* Pyroscope's name, OTLP's service.name */
	uint64_t seq;                 /* the window's number, from 0 */
	uint64_t start_ns, end_ns;    /* wall clock, ns since the epoch */
	uint64_t freq;                /* Hz (Pyroscope's sampleRate); 0 unknown */
	struct ds_kv *labels;         /* Pyroscope's series labels */
	size_t nr_labels;
	struct pr_attr *resource;     /* OTLP's resource attributes */
	size_t nr_resource;
};
/* Accepts NULL. */
void ds_window_free(struct ds_window *w);

struct ds_upload_opts {
	const char *out_dir;          /* a gzipped pprof per window and group */
	uint64_t out_dir_max_bytes;   /* 0: 1 GiB */
	uint64_t out_dir_max_age_s;   /* 0: 7 days */
	const char *pyroscope_url;    /* base URL; /ingest is appended */
	const char *otlp_url;         /* base URL; /v1development/profiles appended */
	const char *spool_dir;        /* where undelivered windows wait */
	uint64_t spool_max_bytes;     /* 0: 256 MiB */
	double timeout_s;             /* per request; 0: 30 */
	const char *credentials_file; /* KEY=VALUE lines; else the environment */
};

struct ds_uploader;

/* Check the sinks and start the thread; NULL after saying what is wrong
 * (an unwritable directory, a URL that is not http(s), credentials
 * readable by others). */
struct ds_uploader *ds_uploader_new(const struct ds_upload_opts *o);

/* Hand over window `w` (taken, whatever the return); never waits on a
 * disk or the network.  0, or -ENOMEM / -EPIPE (the uploader stopped):
 * the window is lost, and counted. */
int ds_uploader_submit(struct ds_uploader *u, struct ds_window *w);

struct ds_upload_stats {
	uint64_t sent;                /* requests a backend took */
	uint64_t spooled;             /* windows that had to wait for a backend */
	uint64_t dropped;             /* windows dropped from a full spool */
	uint64_t failed;              /* refused by a backend (4xx), or lost */
	uint64_t retries;
	uint64_t bytes_sent;
	uint64_t written;             /* files written to the directory */
	double last_latency_s;        /* of the last request */
	size_t queued;                /* windows waiting: in memory and spooled */
};
/* Any thread. */
void ds_uploader_stats(struct ds_uploader *u, struct ds_upload_stats *s);

/* Write and deliver what is queued, trying the backends for at most
 * `grace_s` seconds, leave the rest in the spool, stop the thread and
 * free.  0, or -1 when a window was neither delivered nor kept. */
int ds_uploader_close(struct ds_uploader *u, double grace_s);

#endif
