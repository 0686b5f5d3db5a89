/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Records: a perf record's bytes become a typed struct pr_record.
 */
#ifndef PR_RECORDS_H
#define PR_RECORDS_H

#include "base/base.h"


/* The largest record: perf_event_header.size is 16 bits. */
#define PR_MAX_RECORD_SIZE 65535u


/* What a record parser needs to know about the event that wrote it. */
struct pr_parse_cfg {
	uint64_t sample_type;
	uint64_t read_format;
	uint64_t regs_user;
	uint64_t regs_intr;
	uint64_t branch_sample_type;
	bool sample_id_all;
	/* A sample's period when the samples do not carry it: the attr's
	 * fixed period (0 when it sampled by frequency). */
	uint64_t fixed_period;
	/* Derived once, not per record. */
	unsigned int nr_regs_user, nr_regs_intr;
	size_t sample_id_size;
};

void pr__parse_cfg_from_attr(struct pr_parse_cfg *cfg,
			     const struct perf_event_attr *attr);

/*
 * Whether samples of `attr` may carry another event's id.  The kernel
 * hands one software event's hit (a context switch, a page fault) to
 * every event of that kind on the CPU with one perf_sample_data, and
 * since Linux 6.3 (perf_prepare_sample() marking PERF_SAMPLE_ID_ALL as
 * done) the second event's sample keeps the first's id, stream_id
 * included.  So a reader's context-switch samples may carry the id of
 * another program's context-switch event on the same thread: a sampling
 * software event hit through that path (not the hrtimer clocks, which
 * take a sample of their own) may receive such an id.
 */
bool pr__attr_takes_foreign_ids(const struct perf_event_attr *attr);

/*
 * Decode one record of `size` bytes at `buf` (8-byte aligned, header
 * included; `size` equals the header's size).  Returns 0, or -EBADMSG with
 * *why set to a static description when the body does not match the
 * header or the event's sample_type.  Pointers in `rec` point into `buf`.
 */
int pr__record_parse(const struct pr_parse_cfg *cfg, const void *buf,
		     size_t size, struct pr_record *rec, const char **why);

/*
 * The same for a sample that may end before its record does, and the
 * bytes it fills through `used`.  The kernel writes such a sample when
 * it gave the sample another program's id (pr__attr_takes_foreign_ids()):
 * the record's size counts that program's user registers, the body
 * holds this event's.
 */
int pr__sample_parse_used(const struct pr_parse_cfg *cfg, const void *buf, size_t size,
			  struct pr_record *rec, const char **why, size_t *used);

/* ---- timeq.c: records in time order, by perf's round rule ---- */

/* A record waiting for its turn: `ref` and `owner` are the caller's (a
 * file offset; a copy and the buffer holding it). */
struct pr_timed {
	uint64_t time;
	uint64_t seq;                /* the order records came in: ties keep it */
	uintptr_t ref;
	void *owner;
};

/*
 * Records from several sources (rings, or a file's rounds), each read in
 * rounds: a round is one pass over every source.  A min-heap on (time,
 * arrival) merges what is held, and at each round's end every record no
 * later than the latest time of the round before may go out: nothing
 * read later can be older than that (see timeq.c for why, and for the
 * bound on records that arrive later still).  Zero-initialised is empty.
 */
struct pr_timeq {
	struct pr_timed *heap;
	size_t nr, cap;
	uint64_t seq;
	uint64_t max_time;           /* the latest time pushed */
	uint64_t round_mark;         /* max_time when the last round ended */
	uint64_t limit;              /* records up to this time may go out */
	uint64_t last_out;           /* the time of the last record out */
	uint64_t late;               /* records out after a later one */
};

int pr__timeq_push(struct pr_timeq *q, uint64_t time, uintptr_t ref, void *owner);
/* The end of a round: what the round before brought may go out. */
void pr__timeq_round(struct pr_timeq *q);
/* Take the oldest record held into *out if it may go out (or whatever
 * the time, when `all`: the input has ended).  false when none may. */
bool pr__timeq_pop(struct pr_timeq *q, bool all, struct pr_timed *out);
/* Forget what is held, keep the memory. */
void pr__timeq_reset(struct pr_timeq *q);
void pr__timeq_free(struct pr_timeq *q);

#endif /* PR_RECORDS_H */
