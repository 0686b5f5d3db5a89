/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Walking a perf.data file's records and handing them out in timestamp
 * order, in one pass.
 *
 * perf record drains every ring, then writes FINISHED_ROUND: the rounds
 * of records/timeq.c, whose round rule puts the records in time order
 * holding just those of the last two rounds.  Files without round marks
 * are sorted whole, which is the same rule with one round.
 *
 * A file opened by path has its records read with pread() into windows,
 * one per 256 KiB chunk of the file (and as much of the next as the
 * record starting last in it runs into).  A window is given back once
 * the walk has passed its chunk and every record starting in it has been
 * handed out, and reused for the next, so a multi-gigabyte capture stays
 * at a few windows of resident memory.  Small, so that what a window was
 * read into is still in the CPU's cache when its records are handed out
 * two rounds later (perf record's rounds are about 256 KiB): with 4 MiB
 * chunks, each read pushed the last one's records out of the cache before
 * the walk got to them, and the unwinder waited on its stack copies
 * (cc1's capture, BENCHMARKS.md's seventeenth pass: 8-10 % of the CPU of
 * a report of addresses, 3-6 % with names).
 *
 * Through the file's mapping instead, its chunk's pages mapped in one
 * call, reading cc1's capture cost half the CPU here once the page cache
 * held large folios (and more than the copy with 4 KiB pages:
 * BENCHMARKS.md, sixteenth and seventh passes).  But a file cut short
 * under a mapping is a SIGBUS where the reader touches it, and prfile.h
 * promises that a capture cut short while read is read to its last
 * complete record: only a walk past the windows' budget reads through
 * the mapping.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "perfdata/perfdata_read.h"

#define CHUNK_SHIFT PR__FILE_CHUNK_SHIFT
#define CHUNK ((uint64_t)1 << CHUNK_SHIFT)
#define WINDOW_LEN ((size_t)(CHUNK + PR__FILE_WINDOW_TAIL))
/* Windows kept for reuse: a walk holds two rounds, a few windows. */
#define MAX_SPARE 16

#if defined(__SANITIZE_ADDRESS__)
#define WINDOWS_CHECKED 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define WINDOWS_CHECKED 1
#endif
#endif
#ifdef WINDOWS_CHECKED
#include <sanitizer/asan_interface.h>
#endif

static unsigned char *window_new(const struct pr_file *f)
{
	return pr__table_new(f->win_len);
}

/* Is `w` a chunk of the file's mapping, read through it (past the
 * windows' budget)? */
static bool in_mapping(const struct pr_file *f, const unsigned char *w)
{
	return f->mapped && w >= f->buf && w < f->buf + f->len;
}

/* Hand the pages of chunk `w` of the mapping back to the page cache:
 * still mapped, read again if touched.  Under AddressSanitizer the
 * chunk is poisoned until it is read again (window_need()), as a
 * window given back is. */
static void mapping_release(const struct pr_file *f, const unsigned char *w)
{
	uintptr_t page = (uintptr_t)sysconf(_SC_PAGESIZE);
	uintptr_t lo = ((uintptr_t)w + page - 1) & ~(page - 1);
	uintptr_t hi = (uintptr_t)w + CHUNK, end = (uintptr_t)f->buf + f->len;

	hi = (hi < end ? hi : end) & ~(page - 1);
	if (hi > lo)
		madvise((void *)lo, hi - lo, MADV_DONTNEED);
#ifdef WINDOWS_CHECKED
	/* (Its records only: the header and features stay readable.) */
	lo = (uintptr_t)w > (uintptr_t)f->buf + f->data_start ? (uintptr_t)w :
	     (uintptr_t)f->buf + f->data_start;
	hi = (uintptr_t)w + CHUNK < (uintptr_t)f->buf + f->data_end ? (uintptr_t)w + CHUNK :
	     (uintptr_t)f->buf + f->data_end;
	if (hi > lo)
		ASAN_POISON_MEMORY_REGION((void *)lo, hi - lo);
#endif
}

/* Map in the pages of [from, to) of the file in one call: false when
 * the file no longer has them all (cut short after still_has() looked),
 * for a window to find where it ends.  A kernel without the call
 * (before Linux 5.14) maps them as they are touched. */
static bool mapping_populate(const struct pr_file *f, uint64_t from, uint64_t to)
{
	uintptr_t page = (uintptr_t)sysconf(_SC_PAGESIZE);
	uintptr_t lo = (uintptr_t)(f->buf + from) & ~(page - 1);

	if (to > f->len)
		to = f->len;
#ifdef WINDOWS_CHECKED
	ASAN_UNPOISON_MEMORY_REGION(f->buf + from, to - from);
#endif
	return !madvise((void *)lo, (uintptr_t)(f->buf + to) - lo, MADV_POPULATE_READ) ||
	       errno == EINVAL;
}

/* Keep `w` for the next chunk.  Under AddressSanitizer a window given
 * back is never reused, and poisoned until the file is closed, so that
 * a record read after its window went is reported, not read from
 * another chunk's bytes. */
static void window_put(struct pr_file *f, unsigned char *w)
{
	if (in_mapping(f, w)) {
		mapping_release(f, w);
		return;
	}
	f->nr_read_in--;
#ifdef WINDOWS_CHECKED
	madvise(w, f->win_len, MADV_DONTNEED);
	ASAN_POISON_MEMORY_REGION(w, f->win_len);
	unsigned char **v = realloc(f->spare, (f->nr_spare + 1) * sizeof(*v));

	if (!v) {
		ASAN_UNPOISON_MEMORY_REGION(w, f->win_len);
		pr__table_free(w, f->win_len);
		return;
	}
	f->spare = v;
	f->spare[f->nr_spare++] = w;
#else
	if (f->nr_spare == MAX_SPARE || (!f->spare && !(f->spare = malloc(MAX_SPARE * sizeof(w))))) {
		pr__table_free(w, f->win_len);
		return;
	}
	f->spare[f->nr_spare++] = w;
#endif
}

static unsigned char *window_get(struct pr_file *f)
{
#ifdef WINDOWS_CHECKED
	return window_new(f);
#else
	return f->nr_spare ? f->spare[--f->nr_spare] : window_new(f);
#endif
}

void pr__file_windows_free(struct pr_file *f, bool keep_spares)
{
	for (size_t i = 0; i < f->nr_win; i++) {
		if (f->win[i])
			window_put(f, f->win[i]);
		f->win[i] = NULL;
	}
	if (keep_spares)
		return;
#ifdef WINDOWS_CHECKED
	if (f->mapped)
		ASAN_UNPOISON_MEMORY_REGION(f->buf, f->len);
#endif
	for (size_t i = 0; i < f->nr_spare; i++) {
#ifdef WINDOWS_CHECKED
		ASAN_UNPOISON_MEMORY_REGION(f->spare[i], f->win_len);
#endif
		pr__table_free(f->spare[i], f->win_len);
	}
	free(f->spare);
	free(f->win);
	free(f->win_to);
	f->win_to = NULL;
	f->spare = f->win = NULL;
	f->nr_spare = f->nr_win = 0;
}

/* The file ends at `at`, before the records it had when opened: read
 * up to the last complete record, as a truncated copy is. */
static void cut_short(struct pr_file *f, uint64_t at)
{
	if (at < f->data_start)
		at = f->data_start;
	pr__log(&f->lg, PR_LOG_WARN, "%s: the file was cut short while being read "
		"(%llu bytes of records of %llu); reading up to the last complete "
		"record", f->name, (unsigned long long)(at - f->data_start),
		(unsigned long long)(f->data_end - f->data_start));
	f->data_end = at;
	f->truncated = true;
	f->stats.truncated = true;
	f->stats.damaged = true;
	f->stats.data_size = at - f->data_start;
}

/* Does the file still have [from, to) (to cut at the records' end)?  A
 * mapping read past a file's end finds zeros (base/busguard.c); a chunk
 * the file no longer has is read into a window, which finds its end. */
static bool still_has(const struct pr_file *f, uint64_t from, uint64_t to)
{
	struct stat st;

	if (to > f->data_end)
		to = f->data_end;
	return f->guarded && !pr__busguard_hit(f->guard) && from < f->len && to <= f->len &&
	       !fstat(f->fd, &st) && (uint64_t)st.st_size >= to;
}

/* Has a read through the mapping found the file cut short (zeros where
 * it was a SIGBUS)?  Then the records are read up to where it now ends,
 * as a window's short read would have them.  Whether the file is known
 * to be cut short. */
static bool cut_by_now(struct pr_file *f)
{
	struct stat st;

	if (f->guarded && !f->cut_noticed && pr__busguard_hit(f->guard)) {
		/* Where it ends now, or where the zeros begin, if it grew
		 * back since (written again, by a cp over it). */
		uint64_t end = pr__busguard_zeroed(f->guard);

		f->cut_noticed = true;
		if (!fstat(f->fd, &st) && (uint64_t)st.st_size < end)
			end = (uint64_t)st.st_size;
		if (end < f->data_end)
			cut_short(f, end);
	}
	return f->truncated;
}

/* A record read through the mapping that now runs past the file's end
 * (found cut short since it was queued): its bytes are zeros there. */
static bool past_cut(struct pr_file *f, uint64_t off, const unsigned char *p)
{
	const unsigned char *w;
	uint16_t size;

	if (!f->guarded || !f->win || (size_t)(off >> CHUNK_SHIFT) >= f->nr_win ||
	    !(w = f->win[off >> CHUNK_SHIFT]) || !in_mapping(f, w))
		return false;
	/* Its size and last byte read first: a cut since it was queued
	 * faults there (the cut takes the file's tail), and is known
	 * below, before the record is. */
	size = *(const volatile uint16_t *)(p + 6);
	if (size >= 8)
		(void)*(const volatile unsigned char *)(p + size - 1);
	if (!cut_by_now(f))
		return false;
	return off + 8 > f->data_end || off + size > f->data_end;
}

/* The file's [at, to) into window `w`, which holds the file from `base`:
 * 0, or -errno.  A file that ends first was cut short while read. */
static int window_fill(struct pr_file *f, unsigned char *w, uint64_t base, uint64_t at,
		       uint64_t to)
{
	while (at < to) {
		ssize_t n = pread(f->fd, w + (at - base), (size_t)(to - at), (off_t)at);

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			int err = errno;

			pr__log(&f->lg, PR_LOG_ERROR, "%s: cannot read the records at byte "
				"offset %llu: %s", f->name, (unsigned long long)at, strerror(err));
			return -err;
		}
		if (!n) {
			cut_short(f, at);
			break;
		}
		at += (uint64_t)n;
	}
	return 0;
}

/* Have the first `len` bytes of the record at `off` in the window of the
 * chunk it starts in: the chunk read in whole, and of the next chunk as
 * much as a record starting in it runs into (not the most a record
 * could: read twice, that tail cost a quarter more copying in chunks of
 * 256 KiB). */
static int window_need(struct pr_file *f, uint64_t off, uint64_t len)
{
	size_t chunk = (size_t)(off >> CHUNK_SHIFT);
	uint64_t from = (uint64_t)chunk << CHUNK_SHIFT, to = from + WINDOW_LEN;
	uint64_t want = from + CHUNK;
	unsigned char *w;
	int err;

	if (f->fd < 0)
		return 0;
	if (off + len > want)
		want = off + len;
	if (want > f->data_end)
		want = f->data_end;
	if (!f->win) {
		uint64_t page = (uint64_t)sysconf(_SC_PAGESIZE);

		/* A file of one window has one of its size (no huge page to
		 * clear for a small file). */
		f->win_len = f->data_end < WINDOW_LEN ?
			(size_t)((f->data_end + page - 1) & ~(page - 1)) : WINDOW_LEN;
		f->nr_win = (size_t)(f->data_end >> CHUNK_SHIFT) + 1;
		f->win = calloc(f->nr_win, sizeof(*f->win));
		f->win_to = calloc(f->nr_win, sizeof(*f->win_to));
		if (!f->win || !f->win_to) {
			free(f->win);
			free(f->win_to);
			f->win = NULL;
			f->win_to = NULL;
			f->nr_win = 0;
			return -ENOMEM;
		}
	}
	if ((w = f->win[chunk])) {
		if (f->win_to[chunk] >= want || in_mapping(f, w))
			return 0;
		err = window_fill(f, w, from, f->win_to[chunk], want);
		if (!err)
			f->win_to[chunk] = want;
		return err;
	}
	/* A walk holding more (a file without rounds, sorted whole) reads
	 * the rest through the mapping, whose pages the kernel can take
	 * back, not from memory of its own. */
	if (f->nr_read_in >= f->max_read_in && f->mapped &&
	    still_has(f, from, to) && mapping_populate(f, from, to < f->data_end ? to : f->data_end)) {
		f->win[chunk] = (unsigned char *)f->buf + from;
		f->nr_through_mapping++;
		return 0;
	}
	w = window_get(f);
	if (!w)
		return -ENOMEM;
	f->nr_read_in++;
	err = window_fill(f, w, from, from, want);
	if (err) {
		window_put(f, w);
		return err;
	}
	f->win[chunk] = w;
	f->win_to[chunk] = want;
	return 0;
}

/* Give back every chunk the walk has left behind with nothing queued. */
static void release_behind(struct pr_file *f)
{
	size_t behind = (size_t)(f->cursor >> CHUNK_SHIFT);

	if (!f->win)
		return;
	while (f->released < behind &&
	       (f->released >= f->nr_chunks || !f->chunk_left[f->released])) {
		if (f->released < f->nr_win && f->win[f->released]) {
			window_put(f, f->win[f->released]);
			f->win[f->released] = NULL;
		}
		f->released++;
	}
}

static int chunk_hold(struct pr_file *f, uint64_t off)
{
	size_t chunk = (size_t)(off >> CHUNK_SHIFT);

	if (!f->win)
		return 0;
	if (chunk >= f->nr_chunks) {
		size_t n = chunk + 1;
		uint32_t *v = realloc(f->chunk_left, n * sizeof(*v));

		if (!v)
			return -ENOMEM;
		memset(v + f->nr_chunks, 0, (n - f->nr_chunks) * sizeof(*v));
		f->chunk_left = v;
		f->nr_chunks = n;
	}
	f->chunk_left[chunk]++;
	return 0;
}

static void chunk_done(struct pr_file *f, uint64_t off)
{
	size_t chunk = (size_t)(off >> CHUNK_SHIFT);

	if (f->win && chunk < f->nr_chunks && !--f->chunk_left[chunk])
		release_behind(f);
}

/* ---- the walk ---- */

/* The record's timestamp, read at its fixed place, or `prev` when it has
 * none (it then keeps its place after its predecessor). */
static uint64_t record_time(const struct pr_file_attr *a, const unsigned char *p,
			    uint64_t size, uint32_t type, uint64_t prev)
{
	uint64_t t = a->attr.sample_type, v, off;

	if (!(t & PERF_SAMPLE_TIME))
		return prev;
	if (type == PERF_RECORD_SAMPLE) {
		off = 8 + 8 * (uint64_t)(!!(t & PERF_SAMPLE_IDENTIFIER) +
					 !!(t & PERF_SAMPLE_IP) + !!(t & PERF_SAMPLE_TID));
	} else if (a->attr.sample_id_all) {
		uint64_t after = !!(t & PERF_SAMPLE_ID) + !!(t & PERF_SAMPLE_STREAM_ID) +
				 !!(t & PERF_SAMPLE_CPU) + !!(t & PERF_SAMPLE_IDENTIFIER);

		if (size < 16 + 8 * after)
			return prev;
		off = size - 8 - 8 * after;
	} else {
		return prev;
	}
	if (off + 8 > size)
		return prev;
	memcpy(&v, p + off, 8);
	return v;
}

static void count_record(struct pr_file *f, const struct perf_event_header *hd,
			 const unsigned char *p, uint64_t time)
{
	struct pr_file_stats *st = &f->stats;

	st->records++;
	st->by_type[hd->type < PR_RECORD_KERNEL_MAX ? hd->type : 0]++;
	if (hd->type == PERF_RECORD_SAMPLE) {
		if (!st->samples++ || time < st->first_sample_time)
			st->first_sample_time = time;
		if (time > st->last_sample_time)
			st->last_sample_time = time;
	} else if (hd->type == PERF_RECORD_LOST && hd->size >= 24) {
		uint64_t lost;

		memcpy(&lost, p + 16, 8);
		st->lost += lost;
	}
}

/* The size the record at `off` takes, header checked: > 0, or 0 at a
 * clean end (a salvaged file's torn last record), or -EBADMSG. */
static int64_t record_extent(struct pr_file *f, uint64_t off,
			     struct perf_event_header *hd)
{
	uint64_t end = f->data_end, size;

	if (end - off < sizeof(*hd)) {
		if (cut_by_now(f))
			return 0;
		return pr__file_bad(f, off, "truncated record header (%llu bytes left)",
				    (unsigned long long)(end - off));
	}
	memcpy(hd, pr__file_data(f, off), sizeof(*hd));
	size = hd->size;
	/* (Zeros read where the file was cut short under its mapping end
	 * the walk as its end does.) */
	if (cut_by_now(f) && off + sizeof(*hd) > f->data_end)
		return 0;
	end = f->data_end;
	if (size < sizeof(*hd)) {
		if (f->truncated)
			return 0;
		return pr__file_bad(f, off, "record size below 8 (%llu)",
				    (unsigned long long)size);
	}
	if (size > end - off) {
		if (f->truncated)
			return 0;
		return pr__file_bad(f, off, "record runs past the end of the data "
				    "section (%llu bytes)", (unsigned long long)size);
	}
	if (hd->type == PERFDATA_RECORD_AUXTRACE && size >= 16) {
		uint64_t aux;

		/* AUX trace data follows the record, outside its size. */
		memcpy(&aux, pr__file_data(f, off) + 8, 8);
		if (aux > end - off - size) {
			if (f->truncated)
				return 0;
			return pr__file_bad(f, off, "AUX trace data runs past the data "
					    "section (%llu bytes)", (unsigned long long)aux);
		}
		size += aux;
	}
	return (int64_t)size;
}

/* Queue a kernel record at `p` (`size` bytes, at `off` in the file or
 * in `b`), or note a round's end. */
static int queue_record(struct pr_file *f, const struct perf_event_header *hd,
			const unsigned char *p, uint64_t size, uint64_t off,
			struct pr_zblock *b)
{
	const struct pr_file_attr *a;
	int err;

	if (hd->type == PERFDATA_RECORD_FINISHED_ROUND) {
		pr__timeq_round(&f->order);
		return 0;
	}
	if (hd->type >= PERFDATA_RECORD_USER_START)
		return 0;
	a = pr__file_attr_of(f, p, size);
	f->prev_time = record_time(a, p, size, hd->type, f->prev_time);
	if (off >= f->counted_to)
		count_record(f, hd, p, f->prev_time);
	if (b) {
		err = pr__timeq_push(&f->order, f->prev_time, (uintptr_t)p, b);
		if (!err)
			b->left++;
		return err;
	}
	/* Held first: a record queued must keep its window. */
	err = chunk_hold(f, off);
	if (!err && (err = pr__timeq_push(&f->order, f->prev_time, (uintptr_t)off, NULL)) &&
	    f->win)
		f->chunk_left[off >> CHUNK_SHIFT]--;
	return err;
}

/* Queue the records inflated from the compressed record at `off`. */
static int queue_inflated(struct pr_file *f, uint64_t off, uint64_t size, uint32_t type)
{
	struct pr_zblock *b;
	int err = pr__file_inflate(f, off, size, type, &b);

	for (size_t pos = 0; !err && pos < b->len; ) {
		struct perf_event_header hd;

		memcpy(&hd, b->data + pos, sizeof(hd));
		err = queue_record(f, &hd, b->data + pos, hd.size, off, b);
		pos += hd.size;
	}
	if (b && !b->left)
		free(b);
	return err;
}

/* One step of the walk: queue a kernel record (or those a compressed
 * one holds), or note a round's end.  1 when it stepped, 0 at the end,
 * -errno when the walk must stop. */
static int walk_one(struct pr_file *f)
{
	struct perf_event_header hd = { 0 };
	uint64_t off = f->cursor;
	int64_t size;
	int err;

	if (off >= f->data_end) {
		size = pr__file_inflate_end(f);
		off = f->zrest_at;
	} else {
		/* The header, and an AUX record's size after it. */
		size = window_need(f, off, 16);
		/* (The file may have been found cut short before `off`.) */
		if (!size && off < f->data_end)
			size = record_extent(f, off, &hd);
		if (size > 0 && (err = window_need(f, off, hd.size)))
			size = err;
		/* Cut short within the record, the file's end is before it. */
		if (size > 0 && off + hd.size > f->data_end)
			size = 0;
	}
	if (size < 0 && size != -ENOMEM) {
		f->stats.damaged = true;
		f->stats.damaged_at = off;
	}
	if (size <= 0)
		return (int)size;
	f->cursor += (uint64_t)size;
	if (hd.type == PERFDATA_RECORD_COMPRESSED || hd.type == PERFDATA_RECORD_COMPRESSED2)
		err = queue_inflated(f, off, (uint64_t)size, hd.type);
	else
		err = queue_record(f, &hd, pr__file_data(f, off), (uint64_t)size, off, NULL);
	/* Zeros inflated where the file was cut short under its mapping:
	 * its end, not damage. */
	if (err && err != -ENOMEM && cut_by_now(f) && off + (uint64_t)size > f->data_end)
		return 0;
	if (err) {
		/* A method other than zstd is not damage: this reader cannot
		 * read it (the stats say so). */
		if (f->zunsupported) {
			f->stats.unsupported_at = off;
		} else if (err != -ENOMEM) {
			f->stats.damaged = true;
			f->stats.damaged_at = off;
		}
		return err;
	}
	if (f->cursor > f->counted_to)
		f->counted_to = f->cursor;
	release_behind(f);
	return 1;
}

/* The next record in time order: 1 with *p its bytes and *off its
 * offset (a compressed record's, for what it held), 0 at the end; -errno
 * when the walk stopped on a corrupt header (reported once). */
static int next_record(struct pr_file *f, const unsigned char **p, uint64_t *off,
		       bool *inflated)
{
	for (;;) {
		struct pr_timed e;
		int n;

		if (pr__timeq_pop(&f->order, f->walk_done, &e)) {
			struct pr_zblock *b = e.owner;

			*inflated = b;
			if (!b) {
				/* Its chunk's count drops at the next read:
				 * until then its window holds it. */
				f->handed = true;
				*p = pr__file_data(f, e.ref);
				*off = e.ref;
			} else {
				*p = (const unsigned char *)e.ref;
				*off = b->off;
				if (!--b->left)
					f->zdone = b;
			}
			return 1;
		}
		if (f->walk_done)
			return 0;
		n = walk_one(f);
		if (n <= 0) {
			f->walk_done = true;
			if (n < 0)
				return n;
		}
	}
}

int pr_file_read(struct pr_file *f, struct pr_record *rec)
{
	const struct pr_file_attr *a;
	const unsigned char *p;
	const char *why = NULL;
	uint64_t off;
	uint16_t size;
	bool inflated = false;
	int n;

	if (!f || !rec)
		return -EINVAL;
	/* The record handed out last is no longer in use. */
	free(f->zdone);
	f->zdone = NULL;
	if (f->handed) {
		f->handed = false;
		chunk_done(f, f->handed_off);
	}
	for (;;) {
		n = next_record(f, &p, &off, &inflated);
		if (n > 0 && !inflated)
			f->handed_off = off;
		if (n <= 0)
			return n;
		if (inflated || !past_cut(f, off, p))
			break;
		/* Queued before the file was found cut short: gone. */
		f->handed = false;
		chunk_done(f, off);
	}
	memcpy(&size, p + 6, 2);
	/* Records are 8-aligned in every file perf writes; a foreign one
	 * gets copied so the typed views stay aligned. */
	if ((uintptr_t)p % 8) {
		if (!f->bounce) {
			f->bounce = malloc(PR_MAX_RECORD_SIZE + 1);
			if (!f->bounce)
				return -ENOMEM;
		}
		memcpy(f->bounce, p, size);
		p = f->bounce;
	}
	a = pr__file_attr_of(f, p, size);
	if (pr__record_parse(&a->cfg, p, size, rec, &why)) {
		pr__log(&f->lg, PR_LOG_ERROR, "%s: corrupt %s record at byte offset "
			"%llu%s: %s; record skipped", f->name, pr_record_type_name(rec->type),
			(unsigned long long)off,
			inflated ? " (inflated from it)" : "", why);
		f->stats.damaged = true;
		f->stats.corrupt_records++;
		return -EBADMSG;
	}
	return 1;
}

int pr_file_consume(struct pr_file *f, pr_record_fn cb, void *ctx)
{
	struct pr_record rec;
	int n, count = 0, bad_seen = 0;

	if (!f || !cb)
		return -EINVAL;
	while ((n = pr_file_read(f, &rec)) != 0) {
		if (n == -EBADMSG) {
			bad_seen = n;
			continue;
		}
		if (n < 0)
			return n;
		n = cb(&rec, ctx);
		if (n < 0)
			return n;
		count++;
	}
	return bad_seen ? bad_seen : count;
}

void pr_file_rewind(struct pr_file *f)
{
	if (!f)
		return;
	pr__file_inflate_reset(f);
	f->cursor = f->data_start;
	f->walk_done = false;
	f->prev_time = 0;
	pr__timeq_reset(&f->order);
	if (f->chunk_left)
		memset(f->chunk_left, 0, f->nr_chunks * sizeof(*f->chunk_left));
	f->released = 0;
	f->handed = false;
	pr__file_windows_free(f, true);
}

int pr_file_stats(const struct pr_file *f, struct pr_file_stats *st)
{
	return f ? pr__stats_copy(st, &f->stats, sizeof(*st)) : -EINVAL;
}
