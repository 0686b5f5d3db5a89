/* SPDX-License-Identifier: Apache-2.0 */
/*
 * prorder.h - records in timestamp order: the live reader's (or any
 * source's) records, copied and handed out oldest first.
 */
#ifndef PRORDER_H
#define PRORDER_H

#include "prcommon.h"
#include "prrecord.h"

#ifdef __cplusplus
extern "C" {
#endif

/*
 * Time order: the reader's records, or copies of them, handed out in
 * timestamp order.
 *
 * A drain hands out each ring in the order the kernel wrote it, one ring
 * after another, so a sample on one CPU can come before the FORK or MMAP
 * on another CPU that it depends on.  A pr_order holds copies of records
 * and lets them go by perf's round rule: a round is one drain of every
 * ring, and when round k ends every record held that is no later than the
 * latest time of rounds 1..k-1 goes out, oldest first (ties in the order
 * they were added).  Nothing a later drain brings can be older than that,
 * since it was not yet written when round k began.
 *
 * The bound on lateness: a record comes out in order when it is added no
 * later than the round after the first round that added a record stamped
 * later than it, one drain interval.  A record added later still is not
 * dropped: it goes out with the next records that may, and counts in
 * pr_order_stats.late.  pr_order_flush() hands out everything held.
 *
 * Thread-safety: one thread may add (pr_order_add(), pr_order_round())
 * while one other thread delivers (pr_order_deliver()); the two meet only
 * in pr_order_round() and in pr_order_deliver() taking the closed rounds,
 * under a lock.  pr_order_stats() may be called from any thread.
 * pr_order_flush() may run on the delivering thread once nothing more
 * will be added; pr_order_free() once neither side runs.
 */

struct perf_event_attr;
struct pr_order;

struct pr_order_opts {
	size_t sz;
	/* Where diagnostics go; may be NULL (they are dropped). */
	pr_log_fn log;
	void *log_ctx;
};

/*
 * An empty order for records of events opened with `attr` (what
 * pr_reader_attr() returns; it is copied).  `opts` may be NULL.  The
 * caller owns the order; release it with pr_order_free().  NULL with
 * errno set on failure.
 */
PR_API struct pr_order *pr_order_new(const struct perf_event_attr *attr,
				     const struct pr_order_opts *opts);
/* Free the order and every record it still holds.  Accepts NULL. */
PR_API void pr_order_free(struct pr_order *o);

/*
 * Copy `rec` (a record of the order's events, as a drain or a synthesize
 * callback hands it out) into the order, with its time: records without
 * one take the time of the record added before them.  A sample's stack is
 * copied only up to stack_dyn_size, rounded up to 8 (the rest is what the
 * kernel could not read); the delivered record's stack_size says so.
 * Returns 0, -EINVAL or -ENOMEM.
 */
PR_API int pr_order_add(struct pr_order *o, const struct pr_record *rec);

/*
 * As pr_order_add(), keeping at most `max_stack` bytes of a sample's
 * stack (rounded up to 8, at least 8): for a caller that knows how much
 * of the stack its unwinding reads (pr_unwinder_stack_used()).  The
 * delivered copy's stack_dyn_size says what was kept; an unwind that
 * needs more ends PR_END_TRUNCATED.  A copy cut this way says so: its
 * stack_size is its stack_dyn_size plus 8 (a copy pr_order_add() ended
 * where the kernel's read did is rounded up by less).  Other records,
 * and samples whose stack the kernel read less of than `max_stack`, are
 * copied as pr_order_add() copies them.
 */
PR_API int pr_order_add_cut(struct pr_order *o, const struct pr_record *rec,
			    uint64_t max_stack);

/* The end of a round: every ring was drained once since the last call.
 * Returns 0 or -ENOMEM. */
PR_API int pr_order_round(struct pr_order *o);

/*
 * Hand `cb` every record the rounds ended so far let go, in time order.
 * The record (a parse of the copy: pointers into it, ring_cpu the ring it
 * was drained from, -1 for synthesized ones) is valid until `cb` returns.
 * A negative return from `cb` stops the delivery and is returned (the
 * record counts as delivered; the rest waits for the next call).  Returns
 * the number of records delivered, or a negative errno.
 */
PR_API int pr_order_deliver(struct pr_order *o, pr_record_fn cb, void *ctx);

/* End the current round and hand `cb` every record still held, in time
 * order, as pr_order_deliver() does.  For the end of the input: call it
 * once nothing more will be added. */
PR_API int pr_order_flush(struct pr_order *o, pr_record_fn cb, void *ctx);

/* Counters of an order.  Set `sz` before the call. */
struct pr_order_stats {
	size_t sz;
	uint64_t added;
	uint64_t delivered;
	/* Added, not yet delivered, and the bytes their copies take. */
	uint64_t held;
	uint64_t held_bytes;
	/* Delivered after a record stamped later than them: they came past
	 * the bound above. */
	uint64_t late;
	/* Copies that did not parse as the order's events: skipped (they
	 * count as delivered). */
	uint64_t corrupt;
	/* Copies dropped because the order ran out of memory merging them
	 * (pr_order_deliver() returned -ENOMEM). */
	uint64_t dropped;
};

/* Copy the counters.  Thread-safe; each counter is read atomically.
 * Returns 0 or -EINVAL. */
PR_API int pr_order_stats(const struct pr_order *o, struct pr_order_stats *st);

#ifdef __cplusplus
}
#endif

#endif /* PRORDER_H */
