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
	/* Derived once, not per record. */
	unsigned int nr_regs_user, nr_regs_intr;
	size_t sample_id_size;
};

void pr__parse_cfg_from_attr(struct pr_parse_cfg *cfg,
			     const struct perf_event_attr *attr);

/*
 * Decode one record of `size` bytes at `buf` (8-byte aligned, header
 * included; `size` equals the header's size).  Returns 0, or -EBADMSG with
 * *why set to a static description when the body does not match the
 * header or the event's sample_type.  Pointers in `rec` point into `buf`.
 */
int pr__record_parse(const struct pr_parse_cfg *cfg, const void *buf,
		     size_t size, struct pr_record *rec, const char **why);

#endif /* PR_RECORDS_H */
