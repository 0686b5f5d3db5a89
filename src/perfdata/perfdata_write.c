/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Writing perf.data.  The header, ids and attr go out first with a data
 * size of 0; records stream after them through a buffer pushed out at every
 * round; closing writes the feature sections after the data and rewrites
 * the header.  A recorder killed midway thus leaves a file whose header
 * says "unfinished" and whose data holds every round that was flushed.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/utsname.h>
#include <time.h>
#include <unistd.h>

#include "model/hits.h"
#include "model/model.h"
#include "perfdata/perfdata.h"

#define WRITE_BUFFER (1u << 20)

_Static_assert(sizeof(struct perf_event_attr) >= PERFDATA_ATTR_SIZE,
	       "the kernel headers' perf_event_attr is older than VER7");

struct pr_writer {
	struct pr_logger lg;
	int fd;
	char *path;
	int err;                     /* first error, sticky */
	struct w_event *events;
	size_t nr_events;
	size_t nr_ids;               /* of every event */
	char **argv;
	int argc;

	uint64_t data_offset, data_size;
	unsigned char *buf;
	size_t fill;
	bool round_open;             /* records since the last round mark */

	/* Which files samples landed in, for BUILD_ID: followed as records
	 * are written, settled at close by replaying the file in time order. */
	struct pr_hits *hits;
	uint64_t first_time, last_time;
	uint64_t end_time;           /* pr_writer_set_end_time(); 0: unset */
	/* pr_writer_opts.jit_files: the roots of processes with JIT code,
	 * whose files the file carries (perfdata_jit.c). */
	struct pr__roots *roots;
};

/* One event of the file, copied from the caller's. */
struct w_event {
	struct perf_event_attr attr;
	uint64_t *ids;
	size_t nr_ids;
	char *name;
};

static int fail(struct pr_writer *w, int err, const char *what)
{
	if (!w->err) {
		w->err = err;
		pr__log(&w->lg, PR_LOG_ERROR, "writing %s failed (%s): %s", w->path,
			what, strerror(-err));
	}
	return w->err;
}

static int flush(struct pr_writer *w)
{
	int err;

	if (w->err || !w->fill)
		return w->err;
	err = pr__write_all(w->fd, w->buf, w->fill);
	if (err)
		return fail(w, err, "data");
	w->data_size += w->fill;
	w->fill = 0;
	return 0;
}

static int append(struct pr_writer *w, const void *p, size_t len)
{
	if (w->err)
		return w->err;
	if (w->fill + len > WRITE_BUFFER && flush(w))
		return w->err;
	if (len > WRITE_BUFFER) {
		int err = pr__write_all(w->fd, p, len);

		if (err)
			return fail(w, err, "data");
		w->data_size += len;
		return 0;
	}
	memcpy(w->buf + w->fill, p, len);
	w->fill += len;
	return 0;
}

static void header_fill(const struct pr_writer *w, struct perfdata_header *h,
			const uint64_t features[4])
{
	memset(h, 0, sizeof(*h));
	h->magic = PERFDATA_MAGIC;
	h->size = sizeof(*h);
	h->attr_size = PERFDATA_ATTR_SIZE + sizeof(struct perfdata_section);
	h->attrs.offset = sizeof(*h) + w->nr_ids * sizeof(uint64_t);
	h->attrs.size = h->attr_size * w->nr_events;
	h->data.offset = w->data_offset;
	h->data.size = w->data_size;
	if (features)
		memcpy(h->features, features, sizeof(h->features));
}

/* header | every event's ids | the attr entries pointing at them.  Data
 * starts after. */
static int write_preamble(struct pr_writer *w)
{
	struct perfdata_header h;
	uint64_t at = sizeof(h);
	int err;

	w->data_offset = sizeof(h) + w->nr_ids * sizeof(uint64_t) +
			 w->nr_events * (PERFDATA_ATTR_SIZE + sizeof(struct perfdata_section));
	header_fill(w, &h, NULL);
	err = pr__write_all(w->fd, &h, sizeof(h));
	for (size_t i = 0; !err && i < w->nr_events; i++)
		err = pr__write_all(w->fd, w->events[i].ids,
				w->events[i].nr_ids * sizeof(uint64_t));
	for (size_t i = 0; !err && i < w->nr_events; i++) {
		struct perfdata_section ids = {
			at, w->events[i].nr_ids * sizeof(uint64_t) };

		err = pr__write_all(w->fd, &w->events[i].attr, PERFDATA_ATTR_SIZE);
		if (!err)
			err = pr__write_all(w->fd, &ids, sizeof(ids));
		at += ids.size;
	}
	return err;
}

static int copy_cmdline(struct pr_writer *w, const struct pr_writer_opts *opts)
{
	int argc = PR_OPTS_HAS(opts, argv) && opts->argv ? opts->argc : 0;

	if (argc <= 0)
		return 0;
	w->argv = calloc((size_t)argc, sizeof(char *));
	if (!w->argv)
		return -ENOMEM;
	for (int i = 0; i < argc; i++) {
		w->argv[i] = strdup(opts->argv[i] ? opts->argv[i] : "");
		if (!w->argv[i])
			return -ENOMEM;
		w->argc = i + 1;
	}
	return 0;
}

static void writer_free(struct pr_writer *w)
{
	if (w->fd >= 0)
		close(w->fd);
	for (int i = 0; i < w->argc; i++)
		free(w->argv[i]);
	free(w->argv);
	pr__hits_free(w->hits);
	pr__roots_free(w->roots);
	free(w->buf);
	for (size_t i = 0; i < w->nr_events; i++) {
		free(w->events[i].ids);
		free(w->events[i].name);
	}
	free(w->events);
	free(w->path);
	free(w);
}

static bool events_valid(const struct pr_writer_event *events, size_t nr)
{
	if (!events || !nr)
		return false;
	for (size_t i = 0; i < nr; i++)
		if (!events[i].attr || (events[i].nr_ids && !events[i].ids))
			return false;
	return true;
}

/* An event's name for EVENT_DESC, allocated: the caller's, else as
 * perf's event parser spells the attr's event. */
static char *event_name(const struct pr_writer_event *ev)
{
	struct pr_event_desc d;

	if (ev->name)
		return strdup(ev->name);
	if (pr_event_desc_from_attr(ev->attr, &d))
		return NULL;
	return strdup(d.name);
}

/* Copy the caller's events; false when out of memory. */
static bool copy_events(struct pr_writer *w, const struct pr_writer_event *events,
			size_t nr)
{
	w->events = calloc(nr, sizeof(*w->events));
	if (!w->events)
		return false;
	w->nr_events = nr;
	for (size_t i = 0; i < nr; i++) {
		struct w_event *e = &w->events[i];

		e->attr = *events[i].attr;
		e->attr.size = PERFDATA_ATTR_SIZE;
		e->nr_ids = events[i].nr_ids;
		e->ids = malloc(e->nr_ids ? e->nr_ids * sizeof(uint64_t) : 1);
		if (!e->ids)
			return false;
		if (e->nr_ids)
			memcpy(e->ids, events[i].ids, e->nr_ids * sizeof(uint64_t));
		w->nr_ids += e->nr_ids;
		e->name = event_name(&events[i]);
		if (!e->name)
			return false;
	}
	return true;
}

struct pr_writer *pr_writer_open(const char *path, const struct perf_event_attr *attr,
				 const uint64_t *ids, size_t nr_ids,
				 const struct pr_writer_opts *opts)
{
	struct pr_writer_event ev = { attr, ids, nr_ids, NULL };

	return pr_writer_open_events(path, &ev, 1, opts);
}

struct pr_writer *pr_writer_open_events(const char *path,
					const struct pr_writer_event *events,
					size_t nr, const struct pr_writer_opts *opts)
{
	struct pr_writer *w;
	int err = 0;

	if (!path || !events_valid(events, nr) || !PR_OPTS_VALID(opts)) {
		errno = EINVAL;
		return NULL;
	}
	w = calloc(1, sizeof(*w));
	if (!w)
		return NULL;
	w->fd = -1;
	if (PR_OPTS_HAS(opts, log_ctx)) {
		w->lg.fn = opts->log;
		w->lg.ctx = opts->log_ctx;
	}
	w->first_time = UINT64_MAX;
	w->path = strdup(path);
	w->buf = malloc(WRITE_BUFFER);
	w->hits = pr__hits_new();
	if (PR_OPTS_GET(opts, jit_files, false))
		w->roots = pr__roots_new(1, &w->lg);
	if (!w->path || !copy_events(w, events, nr) || !w->buf || !w->hits ||
	    (PR_OPTS_GET(opts, jit_files, false) && !w->roots) ||
	    copy_cmdline(w, opts)) {
		writer_free(w);
		errno = ENOMEM;
		return NULL;
	}
	w->fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	if (w->fd < 0) {
		err = -errno;
		pr__log(&w->lg, PR_LOG_ERROR, "cannot create %s: %s; choose another "
			PR_LOG_SETTING_OUTPUT_PATH " or check the directory's permissions",
			path, strerror(-err));
	} else if ((err = write_preamble(w))) {
		pr__log(&w->lg, PR_LOG_ERROR, "writing %s failed: %s", path,
			strerror(-err));
	}
	if (err) {
		writer_free(w);
		errno = -err;
		return NULL;
	}
	return w;
}

int pr_writer_set_end_time(struct pr_writer *w, uint64_t time)
{
	if (!w)
		return -EINVAL;
	w->end_time = time;
	return 0;
}

int pr_writer_write(struct pr_writer *w, const struct pr_record *rec)
{
	int err;

	if (!w || !rec || !rec->raw || rec->size < 8)
		return -EINVAL;
	err = append(w, rec->raw, rec->size);
	pr__roots_record(w->roots, rec);
	if (!err) {
		w->round_open = true;
		if (pr__hits_track(w->hits, rec))
			err = fail(w, -ENOMEM, "memory");
	}
	return err;
}

int pr_writer_finish_round(struct pr_writer *w)
{
	struct perf_event_header h = { PERFDATA_RECORD_FINISHED_ROUND, 0, sizeof(h) };

	if (!w)
		return -EINVAL;
	if (w->round_open && !append(w, &h, sizeof(h)))
		w->round_open = false;
	return flush(w);
}

/* ---- features ---- */

struct feat_buf {
	unsigned char *p;
	size_t len, cap;
	int err;
};

static void fb_put(struct feat_buf *b, const void *p, size_t len)
{
	if (b->err)
		return;
	if (b->len + len > b->cap) {
		size_t cap = b->cap ? b->cap * 2 : 4096;
		unsigned char *n;

		while (cap < b->len + len)
			cap *= 2;
		n = realloc(b->p, cap);
		if (!n) {
			b->err = -ENOMEM;
			return;
		}
		b->p = n;
		b->cap = cap;
	}
	memcpy(b->p + b->len, p, len);
	b->len += len;
}

static void fb_u32(struct feat_buf *b, uint32_t v)
{
	fb_put(b, &v, 4);
}

/* perf_header_string: u32 length (NUL included, padded to NAME_ALIGN). */
static void fb_string(struct feat_buf *b, const char *s)
{
	static const unsigned char zeros[PERFDATA_NAME_ALIGN];
	size_t n = strlen(s) + 1;
	size_t padded = (n + PERFDATA_NAME_ALIGN - 1) & ~(size_t)(PERFDATA_NAME_ALIGN - 1);

	fb_u32(b, (uint32_t)padded);
	fb_put(b, s, n);
	fb_put(b, zeros, padded - n);
}

static void fb_build_id(struct feat_buf *b, int32_t pid, uint16_t cpumode,
			const uint8_t *id, size_t id_len, const char *name)
{
	static const unsigned char zeros[PERFDATA_NAME_ALIGN];
	struct perfdata_build_id e;
	size_t n = strlen(name) + 1;
	size_t padded = (n + PERFDATA_NAME_ALIGN - 1) & ~(size_t)(PERFDATA_NAME_ALIGN - 1);

	memset(&e, 0, sizeof(e));
	e.type = PERFDATA_RECORD_HEADER_BUILD_ID;
	e.misc = cpumode | PERFDATA_MISC_BUILD_ID_SIZE;
	e.size = (uint16_t)(PERFDATA_BUILD_ID_FIXED + padded);
	e.pid = pid;
	memcpy(e.data, id, id_len);
	e.id_size = (uint8_t)id_len;
	fb_put(b, &e, sizeof(e));
	fb_put(b, name, n);
	fb_put(b, zeros, padded - n);
}

/*
 * Which mapped files samples landed in, settled by replaying the data in
 * time order (as perf's build-id pass does): a sample's mapping is the one
 * in force at its time, whatever ring order the records were written in.
 * The replay also finds the first and last sample times.
 */
static int replay_hits(struct pr_writer *w)
{
	struct pr_file *f = pr_file_open(w->path, NULL);
	struct pr_record rec;
	int n, err = 0;

	if (!f)
		return -errno;
	while ((n = pr_file_read(f, &rec)) != 0) {
		if (n < 0)
			continue;
		err = pr__hits_replay(w->hits, &rec);
		if (err)
			break;
		if (rec.type == PERF_RECORD_SAMPLE && rec.fields & PR_ID_TIME) {
			if (rec.time < w->first_time)
				w->first_time = rec.time;
			if (rec.time > w->last_time)
				w->last_time = rec.time;
		}
	}
	pr_file_close(f);
	return err;
}

static void feat_build_ids(struct pr_writer *w, struct feat_buf *b)
{
	uint8_t id[PR_BUILD_ID_MAX];
	const char *path;
	size_t it = 0, len;

	while ((path = pr__hits_next(w->hits, &it, id, &len)))
		if (len)
			fb_build_id(b, -1, PERF_RECORD_MISC_USER, id, len, path);
	if (pr__hits_kernel(w->hits)) {
		len = 0;
		if (!pr__build_id_kernel(id, &len))
			fb_build_id(b, -1, PERF_RECORD_MISC_KERNEL, id, len,
				    "[kernel.kallsyms]");
	}
}

static void feat_cmdline(struct pr_writer *w, struct feat_buf *b)
{
	char exe[4096];
	ssize_t n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);

	exe[n > 0 ? n : 0] = 0;
	/* perf's layout: the tool's own path, then its arguments. */
	fb_u32(b, (uint32_t)w->argc + 1);
	fb_string(b, exe);
	for (int i = 0; i < w->argc; i++)
		fb_string(b, w->argv[i]);
}

static void feat_event_desc(struct pr_writer *w, struct feat_buf *b)
{
	fb_u32(b, (uint32_t)w->nr_events);
	fb_u32(b, PERFDATA_ATTR_SIZE);
	for (size_t i = 0; i < w->nr_events; i++) {
		const struct w_event *e = &w->events[i];

		fb_put(b, &e->attr, PERFDATA_ATTR_SIZE);
		fb_u32(b, (uint32_t)e->nr_ids);
		fb_string(b, e->name);
		fb_put(b, e->ids, e->nr_ids * sizeof(uint64_t));
	}
}

/*
 * The first and last sample times, the last moved to the end of the
 * capture when it is later (pr_writer_set_end_time()): a thread still
 * off the CPU then is charged up to it, and this is where the file keeps
 * it.  perf's tools use the section only as the span of the recording
 * (perf report --time with percentages, the header listing), which the
 * end of the capture bounds as well as the last sample does.
 */
static bool feat_sample_time(struct pr_writer *w, struct feat_buf *b)
{
	uint64_t first = w->first_time, last = w->last_time;

	if (first == UINT64_MAX) {
		if (!w->end_time)
			return false;
		first = w->end_time;
	}
	if (w->end_time > last)
		last = w->end_time;
	fb_put(b, &first, 8);
	fb_put(b, &last, 8);
	return true;
}

/* perf's CLOCKID: the resolution of the clock the events use (the clock
 * itself is in the attrs), in ns; perf tools show it in the header. */
static bool feat_clockid(struct pr_writer *w, struct feat_buf *b)
{
	struct timespec res;
	uint64_t ns;

	if (!w->events[0].attr.use_clockid ||
	    clock_getres(w->events[0].attr.clockid, &res))
		return false;
	ns = (uint64_t)res.tv_sec * 1000000000u + (uint64_t)res.tv_nsec;
	fb_put(b, &ns, 8);
	return true;
}

/* The tracepoints' formats, without which perf's tools refuse the file;
 * none when it has no tracepoint, or when tracefs cannot give them (a
 * warning says so: our own reader does without). */
static bool feat_tracing_data(struct pr_writer *w, struct feat_buf *b)
{
	const struct perf_event_attr **attrs = calloc(w->nr_events, sizeof(*attrs));
	char *data = NULL;
	size_t len = 0;

	if (!attrs) {
		b->err = -ENOMEM;
		return true;
	}
	for (size_t i = 0; i < w->nr_events; i++)
		attrs[i] = &w->events[i].attr;
	if (pr__perfdata_tracing_data(attrs, w->nr_events, &data, &len, &w->lg) == -ENOMEM)
		b->err = -ENOMEM;
	else if (len)
		fb_put(b, data, len);
	free(attrs);
	free(data);
	return b->err || len;
}

/* Build one feature's payload into `b`; false when it has none. */
static bool feature_payload(struct pr_writer *w, int feat, struct feat_buf *b)
{
	struct utsname u;
	long conf, onln;

	switch (feat) {
	case FEAT_TRACING_DATA:
		return feat_tracing_data(w, b);
	case FEAT_BUILD_ID:
		feat_build_ids(w, b);
		return true;
	case FEAT_HOSTNAME:
	case FEAT_OSRELEASE:
	case FEAT_ARCH:
		if (uname(&u))
			return false;
		fb_string(b, feat == FEAT_HOSTNAME ? u.nodename :
			     feat == FEAT_OSRELEASE ? u.release : u.machine);
		return true;
	case FEAT_VERSION:
		fb_string(b, "dwarfsample " PR_VERSION);
		return true;
	case FEAT_NRCPUS:
		conf = sysconf(_SC_NPROCESSORS_CONF);
		onln = sysconf(_SC_NPROCESSORS_ONLN);
		fb_u32(b, (uint32_t)(conf > 0 ? conf : 1));
		fb_u32(b, (uint32_t)(onln > 0 ? onln : 1));
		return true;
	case FEAT_CMDLINE:
		feat_cmdline(w, b);
		return true;
	case FEAT_EVENT_DESC:
		feat_event_desc(w, b);
		return true;
	case FEAT_SAMPLE_TIME:
		return feat_sample_time(w, b);
	case FEAT_CLOCKID:
		return feat_clockid(w, b);
	case FEAT_DS_JIT_FILES: {
		unsigned char *p;
		size_t len;

		if (pr__perfdata_jit_payload(w->roots, &p, &len, &w->lg))
			b->err = -ENOMEM;
		if (len)
			fb_put(b, p, len);
		free(p);
		return b->err || len;
	}
	default:
		return false;
	}
}

/* After the data: the table of sections for the set feature bits, then
 * their payloads, in bit order. */
static int write_features(struct pr_writer *w, uint64_t bits[4])
{
	static const int feats[] = {
		FEAT_TRACING_DATA, FEAT_BUILD_ID, FEAT_HOSTNAME, FEAT_OSRELEASE, FEAT_VERSION,
		FEAT_ARCH, FEAT_NRCPUS, FEAT_CMDLINE, FEAT_EVENT_DESC,
		FEAT_SAMPLE_TIME, FEAT_CLOCKID, FEAT_DS_JIT_FILES,
	};
	struct feat_buf payload[PR_ARRAY_SIZE(feats)];
	struct perfdata_section table[PR_ARRAY_SIZE(feats)];
	size_t n = 0;
	uint64_t at;
	int err = 0;

	memset(payload, 0, sizeof(payload));
	for (size_t i = 0; i < PR_ARRAY_SIZE(feats); i++) {
		if (!feature_payload(w, feats[i], &payload[n]))
			continue;
		if (payload[n].err) {
			err = payload[n].err;
			n++;
			break;
		}
		bits[feats[i] / 64] |= UINT64_C(1) << (feats[i] % 64);
		n++;
	}
	at = w->data_offset + w->data_size + n * sizeof(table[0]);
	for (size_t i = 0; !err && i < n; i++) {
		table[i].offset = at;
		table[i].size = payload[i].len;
		at += payload[i].len;
	}
	if (!err)
		err = pr__write_all(w->fd, table, n * sizeof(table[0]));
	for (size_t i = 0; i < n; i++) {
		if (!err)
			err = pr__write_all(w->fd, payload[i].p, payload[i].len);
		free(payload[i].p);
	}
	return err;
}

int pr_writer_close(struct pr_writer *w)
{
	uint64_t bits[4] = { 0 };
	struct perfdata_header h;
	int err;

	if (!w)
		return 0;
	pr_writer_finish_round(w);
	err = w->err;
	if (!err) {
		err = replay_hits(w);
		if (err)
			fail(w, err, "reading it back for build-ids");
	}
	if (!err) {
		err = write_features(w, bits);
		if (err)
			fail(w, err, "features");
	}
	if (!err) {
		header_fill(w, &h, bits);
		ssize_t n = pwrite(w->fd, &h, sizeof(h), 0);

		if (n != (ssize_t)sizeof(h))
			err = fail(w, n < 0 ? -errno : -EIO, "header");
	}
	if (!err && close(w->fd))
		err = fail(w, -errno, "close");
	w->fd = -1;
	writer_free(w);
	return err;
}
