/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Compressed records (perf record -z): PERF_RECORD_COMPRESSED (type 81,
 * the zstd bytes fill the record after its header) and
 * PERF_RECORD_COMPRESSED2 (type 83: a u64 of the bytes' length, then
 * the bytes, padded to 8).  perf writes one zstd stream per file: a
 * frame may end in the next compressed record, and a record inside may
 * start in one and end in the next, so the stream state and the cut
 * record's head are kept from one compressed record to the next.
 *
 * The records inflated from one compressed record are held in one block,
 * freed when the walk has handed out the last of them; so memory holds
 * the blocks of the rounds the walk holds, as for a plain file's pages.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <zstd.h>

#include "perfdata/perfdata_read.h"

/* What one compressed record may inflate to.  perf compresses at most a
 * ring's worth of records into one (its ring size, 512 KiB by default,
 * is in the COMPRESSED feature) and inflates into a buffer that size; a
 * record past it is damage.  Without the feature, 16 MiB, well past any
 * ring perf maps by default and short of a runaway; never past 256 MiB. */
#define INFLATE_DEFAULT ((size_t)16 << 20)
#define INFLATE_MAX ((size_t)256 << 20)
#define INFLATE_FIRST ((size_t)256 << 10)

static size_t inflate_limit(const struct pr_file *f)
{
	size_t n = f->zring ? (size_t)f->zring + PR_MAX_RECORD_SIZE : INFLATE_DEFAULT;

	return n < INFLATE_MAX ? n : INFLATE_MAX;
}

/* The zstd bytes of the compressed record at `off` (`size` bytes). */
static int zdata(struct pr_file *f, uint64_t off, uint64_t size, uint32_t type,
		 const unsigned char **data, size_t *len)
{
	uint64_t n;

	if (type == PERFDATA_RECORD_COMPRESSED) {
		*data = pr__file_data(f, off) + 8;
		*len = (size_t)(size - 8);
		return 0;
	}
	if (size < 16)
		return pr__file_bad(f, off, "compressed record (perf record -z) too short "
				    "for its data size (%llu bytes)", (unsigned long long)size);
	memcpy(&n, pr__file_data(f, off) + 8, 8);
	if (n > size - 16)
		return pr__file_bad(f, off, "compressed record (perf record -z) claims "
				    "%llu bytes of data in %llu", (unsigned long long)n,
				    (unsigned long long)(size - 16));
	*data = pr__file_data(f, off) + 16;
	*len = (size_t)n;
	return 0;
}

static int grow(struct pr_zblock **b, size_t *cap, size_t limit)
{
	struct pr_zblock *nb;
	size_t n = *cap ? *cap * 2 : INFLATE_FIRST;

	if (*cap >= limit)
		return -EFBIG;
	if (n > limit)
		n = limit;
	nb = realloc(*b, sizeof(**b) + n);
	if (!nb)
		return -ENOMEM;
	*b = nb;
	*cap = n;
	return 0;
}

int pr__file_inflate(struct pr_file *f, uint64_t off, uint64_t size, uint32_t type,
		     struct pr_zblock **out)
{
	const unsigned char *data = NULL;
	struct pr_zblock *b = NULL;
	size_t len = 0, cap = 0, have, pos = 0, limit = inflate_limit(f);
	ZSTD_inBuffer in;
	int err;

	*out = NULL;
	if (f->zunsupported)
		return pr__file_bad(f, off, "compressed with method %u, not zstd: "
				    "this reader cannot inflate it", f->ztype);
	err = zdata(f, off, size, type, &data, &len);
	if (err)
		return err;
	if (!f->zds && !(f->zds = ZSTD_createDStream()))
		return -ENOMEM;
	/* One block at least: an empty compressed record inflates to none
	 * of its own, but may still hand out a record the last one cut. */
	do
		if ((err = grow(&b, &cap, limit)))
			goto fail;
	while (cap < f->zrest_len + 2 * len);
	if (f->zrest_len)
		memcpy(b->data, f->zrest, f->zrest_len);
	have = f->zrest_len;
	in = (ZSTD_inBuffer){ data, len, 0 };
	for (;;) {
		ZSTD_outBuffer o = { b->data, cap, have };
		size_t r = ZSTD_decompressStream(f->zds, &o, &in);

		have = o.pos;
		if (ZSTD_isError(r)) {
			free(b);
			return pr__file_bad(f, off, "compressed record (perf record -z) "
					    "holds damaged zstd data: %s",
					    ZSTD_getErrorName(r));
		}
		if (in.pos == in.size && o.pos < o.size)
			break;
		if (o.pos == o.size && (err = grow(&b, &cap, limit)))
			goto fail;
	}
	/* Whole records go out; a cut one waits for the next compressed
	 * record's bytes. */
	while (have - pos >= sizeof(struct perf_event_header)) {
		uint16_t rsize;

		memcpy(&rsize, b->data + pos + 6, 2);
		if (rsize < sizeof(struct perf_event_header)) {
			free(b);
			return pr__file_bad(f, off, "a record inflated from this compressed "
					    "record has size %u, below 8", rsize);
		}
		if (rsize > have - pos)
			break;
		pos += rsize;
	}
	if (have - pos > f->zrest_cap) {
		unsigned char *r = realloc(f->zrest, have - pos);

		if (!r) {
			err = -ENOMEM;
			goto fail;
		}
		f->zrest = r;
		f->zrest_cap = have - pos;
	}
	if (have > pos)
		memcpy(f->zrest, b->data + pos, have - pos);
	f->zrest_len = have - pos;
	f->zrest_at = off;
	b->off = off;
	b->len = pos;
	b->left = 0;
	*out = b;
	return 0;
fail:
	free(b);
	if (err == -EFBIG)
		return pr__file_bad(f, off, "compressed record (perf record -z) inflates "
				    "past %zu KiB, more than its ring held", limit >> 10);
	return err;
}

int pr__file_inflate_end(struct pr_file *f)
{
	if (!f->zrest_len || f->truncated)
		return 0;
	return pr__file_bad(f, f->zrest_at, "the records inflated from the compressed "
			    "data end inside a record (%zu bytes of it)", f->zrest_len);
}

void pr__file_inflate_reset(struct pr_file *f)
{
	struct pr_timed e;

	while (pr__timeq_pop(&f->order, true, &e))
		if (e.owner && !--((struct pr_zblock *)e.owner)->left)
			free(e.owner);
	free(f->zdone);
	f->zdone = NULL;
	f->zrest_len = 0;
	if (f->zds)
		ZSTD_DCtx_reset(f->zds, ZSTD_reset_session_only);
}

void pr__file_inflate_free(struct pr_file *f)
{
	pr__file_inflate_reset(f);
	ZSTD_freeDStream(f->zds);
	free(f->zrest);
}
