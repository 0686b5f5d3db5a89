/* SPDX-License-Identifier: Apache-2.0 */
/* Typed records made by hand, as the model and the symbolizer take them. */
#ifndef DS_TEST_MKRECORD_H
#define DS_TEST_MKRECORD_H

#include <linux/perf_event.h>
#include <string.h>

#include "perfreader.h"

/* An MMAP2 of `path` at [addr, addr + len) in `pid`, from file offset
 * `pgoff`, readable and executable. */
static inline struct pr_record mmap2(uint32_t pid, uint64_t addr, uint64_t len,
				     uint64_t pgoff, const char *path)
{
	struct pr_record r;

	memset(&r, 0, sizeof(r));
	r.type = PR_RECORD_MMAP2;
	r.pid = r.tid = pid;
	r.u.mmap.addr = addr;
	r.u.mmap.len = len;
	r.u.mmap.pgoff = pgoff;
	r.u.mmap.filename = path;
	r.u.mmap.is_mmap2 = true;
	r.u.mmap.prot = 5;
	return r;
}

/* A user-mode SAMPLE of `pid` at `ip`, without registers or stack. */
static inline struct pr_record sample_at(uint32_t pid, uint64_t ip)
{
	struct pr_record r;

	memset(&r, 0, sizeof(r));
	r.type = PR_RECORD_SAMPLE;
	r.misc = PERF_RECORD_MISC_USER;
	r.pid = r.tid = pid;
	r.u.sample.ip = ip;
	return r;
}

/* A FORK or EXIT record (`type`) of thread `tid` of `pid`, whose parent
 * is thread `ptid` of `ppid`. */
static inline struct pr_record task(uint32_t type, uint32_t pid, uint32_t ppid, uint32_t tid,
				    uint32_t ptid)
{
	return (struct pr_record){ .type = type, .pid = pid, .tid = tid,
				   .u.task = { .ppid = ppid, .ptid = ptid } };
}

/* A COMM record naming thread `tid` of `pid`, at an exec or not. */
static inline struct pr_record comm(uint32_t pid, uint32_t tid, const char *name, bool exec)
{
	return (struct pr_record){ .type = PR_RECORD_COMM, .pid = pid, .tid = tid,
				   .u.comm = { .comm = name, .exec = exec } };
}

#endif
