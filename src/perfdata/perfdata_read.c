/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Opening perf.data: the file is mapped, and its header, attrs and features
 * checked against the file's size before anything is believed; nothing is
 * allocated that the file's own length does not bound.  The records are
 * walked in perfdata_walk.c.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "perfdata/perfdata.h"
#include "perfdata/perfdata_read.h"

/* More events than any sane recording; bounds the attr allocation. */
#define MAX_ATTRS 4096

int pr__file_bad(struct pr_file *f, uint64_t off, const char *fmt, ...)
{
	char msg[512];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	pr__log(&f->lg, PR_LOG_ERROR, "%s: %s, at byte offset %llu", f->name, msg,
		(unsigned long long)off);
	return -EBADMSG;
}

/* Is [off, off + len) inside the file? */
bool pr__file_has(const struct pr_file *f, uint64_t off, uint64_t len)
{
	return off <= f->len && len <= f->len - off;
}

static int check_header(struct pr_file *f)
{
	struct perfdata_header *h = &f->h;

	if (f->len < 16)
		return pr__file_bad(f, 0, "file too short for a perf.data header (%llu bytes)",
			   (unsigned long long)f->len);
	memcpy(&h->magic, f->buf, 8);
	memcpy(&h->size, f->buf + 8, 8);
	if (h->magic == PERFDATA_MAGIC_SWAPPED)
		return pr__file_bad(f, 0, "big-endian perf.data (recorded on a "
			   "big-endian machine) is not supported");
	if (!memcmp(f->buf, "PERFFILE", 8))
		return pr__file_bad(f, 0, "version 1 perf.data (PERFFILE) is not "
			   "supported; re-record with a current perf");
	if (h->magic != PERFDATA_MAGIC)
		return pr__file_bad(f, 0, "not a perf.data file (magic 0x%016llx)",
			   (unsigned long long)h->magic);
	if (h->size == PERFDATA_PIPE_HEADER_SIZE)
		return pr__file_bad(f, 8, "pipe-mode perf.data (perf record -o -) "
			   "is not supported; convert it with 'perf inject -i IN -o OUT'");
	if (h->size < sizeof(*h) || h->size > f->len)
		return pr__file_bad(f, 8, "impossible header size (%llu)",
			   (unsigned long long)h->size);
	memcpy(h, f->buf, sizeof(*h));
	if (h->attr_size < PERF_ATTR_SIZE_VER0 + sizeof(struct perfdata_section) ||
	    h->attr_size > 4096)
		return pr__file_bad(f, 16, "impossible attr_size (%llu)",
			   (unsigned long long)h->attr_size);
	if (!pr__file_has(f, h->attrs.offset, h->attrs.size))
		return pr__file_bad(f, 24, "attrs section runs past the end of the file "
			   "(%llu bytes)", (unsigned long long)h->attrs.size);
	if (h->attrs.size == 0 || h->attrs.size % h->attr_size ||
	    h->attrs.size / h->attr_size > MAX_ATTRS)
		return pr__file_bad(f, 32, "attrs section size is not a whole number of attrs "
			   "(%llu bytes)", (unsigned long long)h->attrs.size);
	return 0;
}

static int read_attrs(struct pr_file *f)
{
	const struct perfdata_header *h = &f->h;
	size_t n = (size_t)(h->attrs.size / h->attr_size);

	uint64_t ids_total = 0;

	f->attrs = calloc(n, sizeof(*f->attrs));
	if (!f->attrs)
		return -ENOMEM;
	f->nr_attrs = n;
	for (size_t i = 0; i < n; i++) {
		struct pr_file_attr *a = &f->attrs[i];
		uint64_t at = h->attrs.offset + i * h->attr_size;
		uint32_t size;
		struct perfdata_section ids;

		memcpy(&size, f->buf + at + offsetof(struct perf_event_attr, size), 4);
		if (size == 0)
			size = PERF_ATTR_SIZE_VER0;
		/* The ids section follows the attr as long as it says it is. */
		if (size < PERF_ATTR_SIZE_VER0 ||
		    size > h->attr_size - sizeof(struct perfdata_section))
			return pr__file_bad(f, at + 4, "impossible attr size (%llu)",
				   (unsigned long long)size);
		memcpy(&a->attr, f->buf + at,
		       size < sizeof(a->attr) ? size : sizeof(a->attr));
		a->attr.size = sizeof(a->attr);
		memcpy(&ids, f->buf + at + size, sizeof(ids));
		if (!pr__file_has(f, ids.offset, ids.size) || ids.size % 8)
			return pr__file_bad(f, at + size, "event ids section runs past the end "
				   "of the file (%llu bytes)", (unsigned long long)ids.size);
		/* Every attr's ids are distinct bytes of the file: sections that
		 * overlap would let a small file claim a huge id table. */
		ids_total += ids.size;
		if (ids_total > f->len)
			return pr__file_bad(f, at + size, "event ids sections add up to more than "
				   "the file (%llu bytes)", (unsigned long long)ids_total);
		a->ids = f->buf + ids.offset;   /* read unaligned, with memcpy */
		a->nr_ids = (size_t)(ids.size / 8);
		pr__parse_cfg_from_attr(&a->cfg, &a->attr);
	}
	return 0;
}

static int cmp_id(const void *a, const void *b)
{
	uint64_t x = ((const struct pr_file_id *)a)->id;
	uint64_t y = ((const struct pr_file_id *)b)->id;

	return (x > y) - (x < y);
}

/* Where records carry their event id (perf's id_pos / is_pos), from the
 * first attr: perf writes files whose attrs agree on it. */
static void locate_ids(struct pr_file *f)
{
	uint64_t t = f->attrs[0].attr.sample_type;

	f->sample_id_word = -1;
	f->other_id_word = -1;
	if (t & PERF_SAMPLE_IDENTIFIER) {
		f->sample_id_word = 0;
		f->other_id_word = 0;   /* the last word */
	} else if (t & PERF_SAMPLE_ID) {
		f->sample_id_word = !!(t & PERF_SAMPLE_IP) + !!(t & PERF_SAMPLE_TID) +
				    !!(t & PERF_SAMPLE_TIME) + !!(t & PERF_SAMPLE_ADDR);
		/* From the end: ID, then STREAM_ID and CPU after it. */
		f->other_id_word = !!(t & PERF_SAMPLE_STREAM_ID) + !!(t & PERF_SAMPLE_CPU);
	}
}

/* pr_file.stray_attr. */
static int stray_attr(const struct pr_file *f)
{
	int found = -1;

	for (size_t i = 0; i < f->nr_attrs; i++) {
		if (!f->attrs[i].nr_ids)
			return -1;
		if (!pr__attr_takes_foreign_ids(&f->attrs[i].attr))
			continue;
		if (found >= 0)
			return -1;
		found = (int)i;
	}
	return found;
}

static int index_ids(struct pr_file *f)
{
	size_t total = 0, k = 0;

	f->stray_attr = -1;
	if (f->nr_attrs == 1)
		return 0;
	for (size_t i = 0; i < f->nr_attrs; i++)
		total += f->attrs[i].nr_ids;
	f->ids = calloc(total ? total : 1, sizeof(*f->ids));
	if (!f->ids)
		return -ENOMEM;
	for (size_t i = 0; i < f->nr_attrs; i++) {
		for (size_t j = 0; j < f->attrs[i].nr_ids; j++) {
			memcpy(&f->ids[k].id, f->attrs[i].ids + j * 8, 8);
			f->ids[k++].attr = i;
		}
	}
	f->nr_ids = k;
	qsort(f->ids, k, sizeof(*f->ids), cmp_id);
	f->stray_attr = stray_attr(f);
	return 0;
}

/* The attr of the record at `p` (size `size`, header checked). */
const struct pr_file_attr *pr__file_attr_of(const struct pr_file *f,
					    const unsigned char *p, uint64_t size)
{
	const struct pr_file_attr *a0 = &f->attrs[0];
	struct pr_file_id key, *hit;
	uint32_t type;
	int64_t word;
	uint64_t off;

	if (f->nr_attrs == 1)
		return a0;
	memcpy(&type, p, 4);
	if (type == PERF_RECORD_SAMPLE) {
		word = f->sample_id_word;
		off = 8 + (uint64_t)word * 8;
	} else {
		word = f->other_id_word;
		if (!a0->attr.sample_id_all || size < 16 + (uint64_t)word * 8)
			return a0;
		off = size - 8 - (uint64_t)word * 8;
	}
	if (word < 0 || off + 8 > size)
		return a0;
	memcpy(&key.id, p + off, 8);
	hit = bsearch(&key, f->ids, f->nr_ids, sizeof(key), cmp_id);
	if (hit)
		return &f->attrs[hit->attr];
	/* A sample bearing another program's id is the stray attr's; other
	 * records of no listed event (synthesized ones carry 0) belong to
	 * the first, as perf decides. */
	return type == PERF_RECORD_SAMPLE && key.id && f->stray_attr >= 0
		? &f->attrs[f->stray_attr] : a0;
}

/* Where the records are, salvaging files whose recorder did not finish. */
static int data_bounds(struct pr_file *f)
{
	const struct perfdata_section *d = &f->h.data;
	bool has_features = f->h.features[0] | f->h.features[1] |
			    f->h.features[2] | f->h.features[3];

	if (d->offset > f->len)
		return pr__file_bad(f, 40, "data section starts past the end of the "
				    "file (%llu)", (unsigned long long)d->offset);
	f->data_start = d->offset;
	f->data_end = d->offset + d->size;
	f->stats.data_offset = d->offset;
	f->stats.data_claimed = f->stats.data_size = d->size;
	if (d->size && pr__file_has(f, d->offset, d->size))
		return 0;
	/* Features are written last: with them, size 0 means no records. */
	f->data_end = d->offset;
	if (!d->size && has_features)
		return 0;
	f->truncated = true;
	f->stats.truncated = true;
	f->data_end = f->len;
	f->stats.data_size = f->len - d->offset;
	f->stats.damaged = d->size > f->stats.data_size;
	if (d->size)
		pr__log(&f->lg, PR_LOG_WARN, "%s: the data section claims %llu bytes "
			"but the file ends first (truncated copy?); reading up to the "
			"last complete record", f->name, (unsigned long long)d->size);
	else
		pr__log(&f->lg, PR_LOG_WARN, "%s: the recording did not finish (data "
			"size 0); reading up to the last complete record", f->name);
	return 0;
}

static struct pr_file *file_new(const struct pr_file_opts *opts, const char *name)
{
	struct pr_file *f;

	if (!PR_OPTS_VALID(opts)) {
		errno = EINVAL;
		return NULL;
	}
	f = calloc(1, sizeof(*f));
	if (!f)
		return NULL;
	if (PR_OPTS_HAS(opts, log_ctx)) {
		f->lg.fn = opts->log;
		f->lg.ctx = opts->log_ctx;
	}
	f->stats.sz = sizeof(f->stats);
	f->fd = -1;
	f->name = strdup(name);
	if (!f->name) {
		free(f);
		return NULL;
	}
	return f;
}

static struct pr_file *file_load(struct pr_file *f)
{
	int err = check_header(f);

	if (!err)
		err = read_attrs(f);
	if (!err) {
		locate_ids(f);
		err = index_ids(f);
	}
	if (!err)
		err = data_bounds(f);
	if (!err && !f->truncated)
		err = pr__file_read_features(f);
	if (!err)
		pr_file_rewind(f);
	if (err) {
		pr_file_close(f);
		errno = -err;
		return NULL;
	}
	return f;
}

struct pr_file *pr_file_open_mem(const void *buf, size_t len,
				 const struct pr_file_opts *opts)
{
	struct pr_file *f = file_new(opts, "perf.data in memory");

	if (!f)
		return NULL;
	f->buf = buf;
	f->len = len;
	return file_load(f);
}

struct pr_file *pr_file_open(const char *path, const struct pr_file_opts *opts)
{
	struct pr_file *f;
	struct stat st;
	int fd, err;

	if (!path) {
		errno = EINVAL;
		return NULL;
	}
	f = file_new(opts, path);
	if (!f)
		return NULL;
	/* Not blocking: a FIFO (a pipe's name, a hostile container's
	 * file) would wait for a writer forever. */
	fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
	if (fd < 0 || fstat(fd, &st)) {
		err = errno;
		pr__log(&f->lg, PR_LOG_ERROR, "cannot open %s: %s", path, strerror(err));
		if (fd >= 0)
			close(fd);
		pr_file_close(f);
		errno = err;
		return NULL;
	}
	if (!S_ISREG(st.st_mode)) {
		pr__log(&f->lg, PR_LOG_ERROR, "%s is not a regular file (%s): perf.data is read "
			"from a file; save a pipe's output to one first", path,
			S_ISDIR(st.st_mode) ? "a directory" : S_ISFIFO(st.st_mode) ? "a FIFO" :
			S_ISCHR(st.st_mode) || S_ISBLK(st.st_mode) ? "a device" : "a socket");
		close(fd);
		pr_file_close(f);
		errno = EINVAL;
		return NULL;
	}
	f->len = (size_t)st.st_size;
	if (f->len) {
		void *p = mmap(NULL, f->len, PROT_READ, MAP_PRIVATE, fd, 0);

		if (p == MAP_FAILED) {
			err = errno;
			pr__log(&f->lg, PR_LOG_ERROR, "cannot map %s: %s", path, strerror(err));
			close(fd);
			pr_file_close(f);
			errno = err;
			return NULL;
		}
		f->buf = p;
		f->mapped = true;
		/* Read past where the file now ends, once cut short (a
		 * truncate, a cp over it), the mapping gives zeros and the
		 * walk reads up to that end (perfdata_walk.c), where it was
		 * a SIGBUS.  Unguarded (thousands of files mapped at once),
		 * records are read into windows as ever; the header's
		 * sections are read at once, below. */
		if ((f->guard = pr__busguard_add(p, f->len)) >= 0)
			f->guarded = true;
	}
	/* The header, attrs and features are read through the mapping; the
	 * records with pread() into windows (perfdata_walk.c), which costs a
	 * copy but neither a page fault nor a TLB entry per 4 KiB page. */
	f->fd = fd;
	f->max_read_in = PR__FILE_MAX_READ_IN;
	return file_load(f);
}

void pr_file_close(struct pr_file *f)
{
	if (!f)
		return;
	pr__file_windows_free(f, false);
	if (f->guarded)
		pr__busguard_remove(f->guard);
	if (f->mapped)
		munmap((void *)f->buf, f->len);
	if (f->fd >= 0)
		close(f->fd);
	pr__file_free_features(f);
	for (size_t i = 0; f->made_names && i < f->nr_attrs; i++)
		free(f->made_names[i]);
	free(f->made_names);
	free(f->attrs);
	free(f->ids);
	pr__file_inflate_free(f);
	pr__timeq_free(&f->order);
	free(f->chunk_left);
	free(f->bounce);
	free(f->name);
	free(f);
}

size_t pr_file_nr_attrs(const struct pr_file *f)
{
	return f ? f->nr_attrs : 0;
}

int pr_file_event_of(const struct pr_file *f, const struct pr_record *rec)
{
	const struct pr_file_attr *a;

	if (!f || !rec || !rec->raw || rec->size < 8 || !f->nr_attrs)
		return -EINVAL;
	a = pr__file_attr_of(f, rec->raw, rec->size);
	return a ? (int)(a - f->attrs) : -ENOENT;
}

/* perf's name for an event it has no description of: the event's, then
 * the modifiers perf adds (":u" for user-only, ":ppp" for precision...). */
static char *made_name(const struct perf_event_attr *a)
{
	static const char *const hw[] = {
		"cycles", "instructions", "cache-references", "cache-misses", "branches",
		"branch-misses", "bus-cycles", "stalled-cycles-frontend",
		"stalled-cycles-backend", "ref-cycles",
	};
	static const char *const sw[] = {
		"cpu-clock", "task-clock", "page-faults", "context-switches",
		"cpu-migrations", "minor-faults", "major-faults", "alignment-faults",
		"emulation-faults", "dummy", "bpf-output", "cgroup-switches",
	};
	char base[64], mods[16] = "", *out;
	size_t n = 0;

	if (a->type == PERF_TYPE_HARDWARE && a->config < PR_ARRAY_SIZE(hw))
		snprintf(base, sizeof(base), "%s", hw[a->config]);
	else if (a->type == PERF_TYPE_SOFTWARE && a->config < PR_ARRAY_SIZE(sw))
		snprintf(base, sizeof(base), "%s", sw[a->config]);
	else
		snprintf(base, sizeof(base), "raw 0x%llx", (unsigned long long)a->config);
	if (a->exclude_kernel || a->exclude_user || a->exclude_hv) {
		if (!a->exclude_kernel)
			mods[n++] = 'k';
		if (!a->exclude_user)
			mods[n++] = 'u';
		if (!a->exclude_hv)
			mods[n++] = 'h';
	}
	for (unsigned i = 0; i < a->precise_ip && i < 3; i++)
		mods[n++] = 'p';
	mods[n] = '\0';
	if (asprintf(&out, "%s%s%s", base, n ? ":" : "", mods) < 0)
		return NULL;
	return out;
}

const char *pr_file_event_name(struct pr_file *f, size_t idx)
{
	if (!f || idx >= f->nr_attrs)
		return NULL;
	if (f->event_names && f->event_names[idx])
		return f->event_names[idx];
	if (!f->made_names && !(f->made_names = calloc(f->nr_attrs, sizeof(char *))))
		return NULL;
	if (!f->made_names[idx])
		f->made_names[idx] = made_name(&f->attrs[idx].attr);
	return f->made_names[idx];
}

const struct perf_event_attr *pr_file_attr(const struct pr_file *f, size_t idx)
{
	return f && idx < f->nr_attrs ? &f->attrs[idx].attr : NULL;
}
