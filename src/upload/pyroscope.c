/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Grafana Pyroscope's push API (Pyroscope 1.0 and later; what Alloy's
 * pyroscope.write and Pyroscope's own eBPF agent use): a window is one
 * unary call of the connect protocol, POST /push.v1.PusherService/Push,
 * Content-Type application/proto, whose body is a push.v1.PushRequest
 * (grafana/pyroscope api/push/v1/push.proto): a series per kind of time
 * the window has, each its part of the profile as a gzipped pprof, under
 * the profile type its __name__ label names.  The older /ingest took the
 * profile type from the sample types' names instead, and filed off-CPU
 * time as process_cpu ("off_cpu" contains "cpu").
 *
 * The messages are few and flat, so they are written here, field by
 * field, rather than generated.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "upload/upload.h"

/* The series of a window: each part of its profile it has, and the
 * profile type Pyroscope files it under. */
static const struct {
	enum pr_profile_part part;
	const char *name;
} series_of[] = {
	{ PR_PART_ON_CPU, "process_cpu" },
	{ PR_PART_OFF_CPU, "off_cpu" },
	{ PR_PART_WALL, "wall" },
};

/* A protobuf message being written; `oom` once a write failed. */
struct pb {
	uint8_t *buf;
	size_t len, cap;
	bool oom;
};

static void pb_raw(struct pb *b, const void *data, size_t n)
{
	if (b->oom)
		return;
	if (b->len + n > b->cap) {
		size_t cap = b->cap ? b->cap : 256;
		uint8_t *nb;

		while (cap < b->len + n)
			cap *= 2;
		if (!(nb = realloc(b->buf, cap))) {
			b->oom = true;
			return;
		}
		b->buf = nb;
		b->cap = cap;
	}
	memcpy(b->buf + b->len, data, n);
	b->len += n;
}

static void pb_varint(struct pb *b, uint64_t v)
{
	uint8_t out[10];
	size_t n = 0;

	do {
		out[n++] = (uint8_t)((v & 0x7f) | (v > 0x7f ? 0x80 : 0));
		v >>= 7;
	} while (v);
	pb_raw(b, out, n);
}

/* Field `field`, length-delimited (bytes, a string, a message). */
static void pb_bytes(struct pb *b, unsigned field, const void *data, size_t n)
{
	pb_varint(b, (uint64_t)field << 3 | 2);
	pb_varint(b, n);
	pb_raw(b, data, n);
}

/* A types.v1.LabelPair {name = 1, value = 2} as field `field` of `b`. */
static void pb_label(struct pb *b, unsigned field, const char *name, const char *value)
{
	struct pb l = { 0 };

	pb_bytes(&l, 1, name, strlen(name));
	pb_bytes(&l, 2, value, strlen(value));
	b->oom |= l.oom;
	pb_bytes(b, field, l.buf, l.len);
	free(l.buf);
}

static uint64_t fnv1a(uint64_t h, const void *data, size_t n)
{
	const uint8_t *p = data;

	for (size_t i = 0; i < n; i++)
		h = (h ^ p[i]) * UINT64_C(0x100000001b3);
	return h;
}

/*
 * The window's ID, a RawSample's: a UUID (version 8, its bits a hash of
 * the window's service, labels, start and number), the same for each
 * series of the window and for each try of it.  Pyroscope logs it as the
 * profile_id of what it accepts or refuses.
 */
static void window_id(const struct pr_window *w, char out[37])
{
	uint64_t h[2] = { UINT64_C(0xcbf29ce484222325), UINT64_C(0x84222325cbf29ce4) };
	uint8_t u[16];

	for (int k = 0; k < 2; k++) {
		h[k] = fnv1a(h[k], w->service, strlen(w->service) + 1);
		for (size_t i = 0; i < w->nr_labels; i++) {
			h[k] = fnv1a(h[k], w->labels[i].key, strlen(w->labels[i].key) + 1);
			h[k] = fnv1a(h[k], w->labels[i].value, strlen(w->labels[i].value) + 1);
		}
		h[k] = fnv1a(h[k], &w->start_ns, sizeof(w->start_ns));
		h[k] = fnv1a(h[k], &w->seq, sizeof(w->seq));
	}
	for (int i = 0; i < 8; i++) {
		u[i] = (uint8_t)(h[0] >> (8 * i));
		u[8 + i] = (uint8_t)(h[1] >> (8 * i));
	}
	u[6] = (uint8_t)((u[6] & 0x0f) | 0x80);
	u[8] = (uint8_t)((u[8] & 0x3f) | 0x80);
	snprintf(out, 37, "%02x%02x%02x%02x-%02x%02x-%02x%02x-%02x%02x-%02x%02x%02x%02x%02x%02x",
		 u[0], u[1], u[2], u[3], u[4], u[5], u[6], u[7], u[8], u[9], u[10], u[11], u[12],
		 u[13], u[14], u[15]);
}

/* Part `part` of `w`'s profile, a gzipped pprof, into *buf.  0 or a
 * negative errno. */
static int encode_part(const struct pr_window *w, enum pr_profile_part part, char **buf,
		       size_t *len)
{
	PR_OPTS(pr_profile_write_opts, o, .part = part);
	FILE *f = open_memstream(buf, len);
	int err = f ? pr_profile_write(w->profile, PR_FORMAT_PPROF, f, &o) : -ENOMEM;

	if (f && fclose(f) && !err)
		err = -EIO;
	return err;
}

/* The RawProfileSeries of part `part` of `w`, named `name`, as field 1 of
 * `req`.  0 or a negative errno. */
static int add_series(struct pb *req, const struct pr_window *w, enum pr_profile_part part,
		      const char *name, const char *id)
{
	struct pb s = { 0 }, smp = { 0 };
	char *prof = NULL;
	size_t len = 0;
	int err = encode_part(w, part, &prof, &len);

	if (!err) {
		/* Pyroscope's own series labels, then the window's. */
		pb_label(&s, 1, "__name__", name);
		pb_label(&s, 1, "service_name", w->service);
		pb_label(&s, 1, "__delta__", "false");
		pb_label(&s, 1, "pyroscope_spy", "dwarfsample");
		for (size_t i = 0; i < w->nr_labels; i++)
			pb_label(&s, 1, w->labels[i].key, w->labels[i].value);
		/* RawSample: the ID before the profile, so that the start
		 * of a request cut short still names its window. */
		pb_bytes(&smp, 2, id, strlen(id));
		pb_bytes(&smp, 1, prof, len);
		s.oom |= smp.oom;
		pb_bytes(&s, 2, smp.buf, smp.len);
		req->oom |= s.oom;
		pb_bytes(req, 1, s.buf, s.len);
		if (req->oom)
			err = -ENOMEM;
	}
	free(prof);
	free(smp.buf);
	free(s.buf);
	return err;
}

int pr__pyroscope_request(const struct pr_window *w, struct pr__request *r)
{
	struct pb req = { 0 };
	char id[37];
	int err = 0;

	memset(r, 0, sizeof(*r));
	window_id(w, id);
	for (size_t i = 0; !err && i < PR_ARRAY_SIZE(series_of); i++)
		if (pr_profile_has_part(w->profile, series_of[i].part))
			err = add_series(&req, w, series_of[i].part, series_of[i].name, id);
	if (!err && (!(r->target = strdup("/push.v1.PusherService/Push")) ||
		     !(r->content_type = strdup("application/proto")) ||
		     !(r->content_encoding = strdup(""))))
		err = -ENOMEM;
	if (err) {
		free(req.buf);
		pr__request_clear(r);
		return err;
	}
	r->body = req.buf;
	r->len = req.len;
	return 0;
}
