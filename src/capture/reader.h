/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The reader object, shared by reader.c (opening events on a target) and
 * drain.c (waiting for and reading records).
 */
#ifndef PR_READER_H
#define PR_READER_H

#include "capture/capture.h"

enum target_kind { TARGET_PIDS, TARGET_CPUS, TARGET_COMMAND };

struct pr_evfd {
	int fd;
	int tid;         /* -1 for CPU-wide events */
	int event;       /* index in pr_reader.attrs */
	bool polled;     /* still in the epoll set (not hung up) */
	uint64_t id;     /* the kernel's event id (PERF_EVENT_IOC_ID) */
};

/*
 * A thread found after the first scan of the first process: it may also
 * carry events inherited from the thread that created it, which would
 * sample it a second time.  Its samples are kept only from its own events,
 * evs[first, first + n).
 */
#define PR_READER_MAX_EVENTS 2

/* An event id and the event it belongs to, sorted by id for
 * pr_reader_event_of(). */
struct pr_id_event {
	uint64_t id;
	int event;
};

struct pr_late_thread {
	int tid;
	size_t first, n;
};

struct pr_reader {
	struct pr_logger lg;
	enum target_kind kind;
	/* The events opened on every (thread or CPU, CPU): the CPU-sampling
	 * event first when there is one, then the off-CPU one.  They share
	 * one sample layout, hence one parse configuration. */
	struct perf_event_attr attrs[PR_READER_MAX_EVENTS];
	size_t nr_attrs;
	struct pr_parse_cfg cfg;
	unsigned int attr_flags;
	bool kernel_requested;
	uint32_t ring_pages;

	struct pr_ring *rings;
	size_t nr_rings;
	struct pr_evfd *evs;
	size_t nr_evs, cap_evs;
	int epfd;
	size_t nr_live;          /* events not hung up */
	struct pr_late_thread *late;     /* sorted by tid */
	size_t nr_late, cap_late;
	struct pr_id_event *id_events;   /* nr_evs of them, by id */
	struct pr_command cmd;
	char *cmd_name;
	bool enabled;

	/* Pull cursor: the ring being drained, and the record handed out by
	 * the last pr_reader_read() (released on the next call). */
	size_t cur;
	struct pr_ring *pending;
	size_t pending_size;
};

/* drain.c: order the late threads for lookup once opening is done. */
void pr__reader_sort_late(struct pr_reader *r);
/* drain.c: the id -> event table behind pr_reader_event_of(). */
int pr__reader_index_ids(struct pr_reader *r);

#endif
