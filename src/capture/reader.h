/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The reader object, shared by reader_opts.c (what to open), reader.c
 * (opening events on a target) and drain.c (waiting for and reading
 * records).
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
	bool member;     /* a read group's member: counts, writes no record */
	uint64_t id;     /* the kernel's event id (PERF_EVENT_IOC_ID) */
};

/* The most events pr_reader_opts.events may list, and with the off-CPU
 * one, the most a reader opens per thread and CPU. */
#define PR_READER_MAX_SAMPLED 32
#define PR_READER_MAX_EVENTS (PR_READER_MAX_SAMPLED + 1)

/* An event id and the event it belongs to, sorted by id for
 * pr_reader_event_of(). */
struct pr_id_event {
	uint64_t id;
	int event;
};

/*
 * A thread found after the first scan of the first process: it may also
 * carry events inherited from the thread that created it, which would
 * sample it a second time.  Its samples are kept only from its own events,
 * evs[first, first + n).
 */
struct pr_late_thread {
	int tid;
	size_t first, n;
};

struct pr_reader {
	struct pr_logger lg;
	enum target_kind kind;
	/* The events opened on every (thread or CPU, CPU): the sampled
	 * events first (pr_reader_opts.events, or the one CPU event), then
	 * the off-CPU one.  Their layouts may differ (a read group's leader
	 * carries counts), so each has its parse configuration; records say
	 * which is theirs by PERF_SAMPLE_IDENTIFIER once there are several. */
	struct perf_event_attr attrs[PR_READER_MAX_EVENTS];
	struct pr_parse_cfg cfgs[PR_READER_MAX_EVENTS];
	size_t nr_attrs;
	unsigned int attr_flags;
	/* pr_reader_opts.read_group: events [0, nr_group) are one group per
	 * thread and CPU, led by event 0. */
	size_t nr_group;
	bool kernel_requested;
	uint32_t ring_pages;
	/* kernel.perf_event_max_stack when an event records call chains,
	 * else 0 (pr_reader_max_stack()). */
	uint32_t max_stack;

	struct pr_ring *rings;
	size_t nr_rings;
	struct pr_evfd *evs;
	size_t nr_evs, cap_evs;
	int epfd;
	size_t nr_live;          /* events not hung up */
	struct pr_late_thread *late;     /* sorted by tid */
	size_t nr_late, cap_late;
	struct pr_id_event *id_events;   /* nr_evs of them, by id */
	/* The one event whose samples may carry another program's event id
	 * (pr__attr_takes_foreign_ids()), and an id of its own to give them
	 * back; -1 when none or several may, which leaves such a sample no
	 * event to be counted under.  Whether the log has said so. */
	int stray_event;
	uint64_t stray_id;
	bool told_foreign;
	/* The last such sample, its id made the stray event's: a ring's
	 * data pages cannot be written (PR_MAX_RECORD_SIZE bytes, 8-aligned,
	 * allocated on the first). */
	uint64_t *adopted;
	struct pr_command cmd;
	char *cmd_name;
	bool enabled;
	/* pr_reader_opts.cgroup's directory: CPU events count only its
	 * tasks; -1 for none. */
	int cgroup_fd;

	/* Pull cursor: the ring being drained, and the record handed out by
	 * the last pr_reader_read() (released on the next call). */
	size_t cur;
	struct pr_ring *pending;
	size_t pending_size;
};

/* reader_opts.c: check pr_reader_opts and take from them the ring size
 * (r->ring_pages) and whether kernel call chains were asked for; open
 * the cgroup to sample.  0, or a negative errno with the reason logged. */
int pr__reader_check_opts(struct pr_reader *r, const struct pr_reader_opts *opts);
/* reader_opts.c: the attrs (and parse configurations) of the events to
 * open, in the order pr_reader_event_attr() lists them.  0, or a negative
 * errno with the reason logged. */
int pr__reader_build_attrs(struct pr_reader *r, const struct pr_reader_opts *opts);

/* reader_opts.c: r->max_stack from the events' attrs (their
 * sample_max_stack, else kernel.perf_event_max_stack). */
void pr__reader_set_max_stack(struct pr_reader *r);

/* drain.c: order the late threads for lookup once opening is done. */
void pr__reader_sort_late(struct pr_reader *r);
/* drain.c: the id -> event table behind pr_reader_event_of(). */
int pr__reader_index_ids(struct pr_reader *r);
/* drain.c: the parse configuration of the event that wrote the record of
 * `size` bytes at `raw`: for a sample bearing an id not the reader's, the
 * stray event's; the first event's when it names none. */
const struct pr_parse_cfg *pr__reader_cfg_of(const struct pr_reader *r, const void *raw,
					     size_t size);

#endif
