/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The open perf.data file, shared by perfdata_read.c (header, attrs,
 * records) and perfdata_feat.c (feature sections).
 */
#ifndef PR_PERFDATA_READ_H
#define PR_PERFDATA_READ_H

#include "records/records.h"
#include "perfdata/perfdata.h"

struct pr_file_attr {
	struct perf_event_attr attr;
	struct pr_parse_cfg cfg;
	const unsigned char *ids;    /* nr_ids u64s in the file, unaligned */
	size_t nr_ids;
};

/* id -> attr, sorted by id; only built when there are several attrs. */
struct pr_file_id {
	uint64_t id;
	size_t attr;
};

struct pr_file {
	struct pr_logger lg;
	char *name;                  /* the path, for messages */
	const unsigned char *buf;
	size_t len;
	bool mapped;
	/* The mapping guarded against the file cut short under it
	 * (base/busguard.c): its slot; and whether the walk has taken the
	 * cut its reads found into account. */
	bool guarded, cut_noticed;
	int guard;
	int fd;                      /* a file opened by path; else -1 */
	struct perfdata_header h;

	struct pr_file_attr *attrs;
	size_t nr_attrs;
	struct pr_file_id *ids;
	size_t nr_ids;
	int64_t sample_id_word;      /* id's u64 index after a sample's header */
	int64_t other_id_word;       /* ... before the end of other records */
	/* The attr a sample bearing an id the file does not list belongs
	 * to: the only one whose samples may carry another program's id
	 * (pr__attr_takes_foreign_ids()), when every attr lists its ids;
	 * -1 for none (the first attr's, as perf decides). */
	int stray_attr;

	/* The records, [data_start, data_end). */
	uint64_t data_start, data_end;
	bool truncated;

	/* The walk in file order (perfdata_walk.c). */
	uint64_t cursor;
	bool walk_done;
	uint64_t prev_time;          /* for records without a time */
	/* Records walked but not handed out, by their offsets. */
	struct pr_timeq order;
	/* A file opened by path is read into windows, one per chunk of the
	 * file (perfdata_walk.c); they are given back behind the walk. */
	uint32_t *chunk_left;        /* records of the chunk still queued */
	size_t nr_chunks, released;  /* chunks [0, released) given back */
	unsigned char **win;         /* per chunk, NULL while not read in */
	uint64_t *win_to;            /* per chunk, the file read into it up to */
	size_t nr_win, win_len;      /* win_len: each window's bytes */
	unsigned char **spare;       /* windows given back, to be reused */
	size_t nr_spare;
	size_t nr_read_in, max_read_in;  /* windows held; past the most,
					  * chunks are read through the mapping */
	size_t nr_through_mapping;
	bool handed;                 /* the record handed out last is at */
	uint64_t handed_off;         /* ... this offset, in its window */
	unsigned char *bounce;       /* for records that are not 8-aligned */
	/* perf record -z (perfdata_zstd.c): the stream, the head of a record
	 * cut at a compressed record's end, the block last emptied. */
	struct ZSTD_DCtx_s *zds;
	unsigned char *zrest;
	size_t zrest_len, zrest_cap;
	uint64_t zrest_at;           /* the compressed record that cut it */
	struct pr_zblock *zdone;     /* freed at the next read */
	bool zunsupported;           /* the COMPRESSED feature names another method */
	uint32_t ztype, zlevel;
	uint32_t zring;              /* the ring size it compressed by, if known */
	struct pr_file_stats stats;
	uint64_t counted_to;         /* stats cover records before this */

	/* Features. */
	char *strings[PR_FILE_CPUDESC + 1];
	bool has_nr_cpus;
	uint32_t nr_cpus_avail, nr_cpus_online;
	char **cmdline;
	size_t nr_cmdline;
	char **event_names;          /* per attr, from EVENT_DESC; NULL when none */
	char **made_names;           /* per attr, made from the attr, as asked for */
	struct pr_build_id *build_ids;
	size_t nr_build_ids;
	bool has_end_time;
	uint64_t end_time;           /* SAMPLE_TIME's end */
	/* FEAT_DS_JIT_FILES's payload, in place (perfdata_jit.c). */
	const unsigned char *jit_files;
	size_t jit_files_len;
	struct pr_tp_formats *tp_formats;   /* TRACING_DATA's; NULL: none */
};

/* perfdata_feat.c: parse the feature sections after the data; a malformed
 * section is skipped with a warning (the records are still good). */
int pr__file_read_features(struct pr_file *f);
void pr__file_free_features(struct pr_file *f);
/* The JIT files the capture carries (FEAT_DS_JIT_FILES's payload, valid
 * as long as `f`), *sec NULL when none: their size. */
size_t pr__file_jit_files(const struct pr_file *f, const unsigned char **sec);

/* The chunks the records are read by (256 KiB), and the most of the next
 * chunk a window holds too: a record's size is 16 bits, so every record
 * that starts in a chunk is whole in its window. */
#define PR__FILE_CHUNK_SHIFT 18
#define PR__FILE_WINDOW_TAIL ((uint64_t)1 << 16)
/* Windows read in at most (128 MiB of chunks): perf record's rounds need
 * a few. */
#define PR__FILE_MAX_READ_IN 512

/* The bytes of the data section at `off`, whose chunk the walk has read
 * in (or the file's own bytes, for one in memory). */
static inline const unsigned char *pr__file_data(const struct pr_file *f, uint64_t off)
{
	if (!f->win)
		return f->buf + off;
	return f->win[off >> PR__FILE_CHUNK_SHIFT] +
	       (off & (((uint64_t)1 << PR__FILE_CHUNK_SHIFT) - 1));
}
/* Give back every window (pr_file_rewind(), pr_file_close()). */
void pr__file_windows_free(struct pr_file *f, bool keep_spares);

const struct pr_file_attr *pr__file_attr_of(const struct pr_file *f,
					    const unsigned char *p, uint64_t size);

/* Records inflated from one compressed record, 8-aligned, [data,
 * data + len); freed when `left` (records of it still queued) drops to
 * 0. */
struct pr_zblock {
	uint64_t off;                /* the compressed record's offset */
	size_t left;
	size_t len;
	unsigned char data[];
};

/* perfdata_zstd.c: inflate the compressed record at `off` (`size` bytes,
 * `type` 81 or 83) into *out (the caller frees it once its records are
 * out), keeping the zstd stream and a cut record for the next one.  0, or
 * -EBADMSG (logged, naming `off`), or -ENOMEM. */
int pr__file_inflate(struct pr_file *f, uint64_t off, uint64_t size, uint32_t type,
		     struct pr_zblock **out);
/* At the data's end: -EBADMSG (logged) when a record was left cut. */
int pr__file_inflate_end(struct pr_file *f);
/* Drop what is queued (freeing its blocks) and restart the stream. */
void pr__file_inflate_reset(struct pr_file *f);
void pr__file_inflate_free(struct pr_file *f);

/* perfdata_read.c: log why the file is refused, naming the byte offset;
 * returns -EBADMSG. */
__attribute__((format(printf, 3, 4)))
int pr__file_bad(struct pr_file *f, uint64_t off, const char *fmt, ...);
/* Is [off, off + len) inside the file? */
bool pr__file_has(const struct pr_file *f, uint64_t off, uint64_t len);

#endif
