/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Capture: events opened with perf_event_open, their rings mapped and
 * drained, the targets (threads, CPUs, a command) they watch.
 */
#ifndef PR_CAPTURE_H
#define PR_CAPTURE_H

#include "base/base.h"
#include "records/records.h"


/* Sanity limits shared by the event builder and the tools' option parsers. */
#define PR_MAX_RING_PAGES (1u << 20)

/*
 * perf_event_open(2).  Every open in the library goes through here so that
 * tests can interpose on the syscall (they link with --wrap=syscall).
 */
int pr__perf_event_open(struct perf_event_attr *attr, pid_t pid, int cpu,
			int group_fd, unsigned long flags);

/* pr_event_attr() and pr_event_probe() logging through `lg` (a reader's
 * logger) rather than the event options' own. */
int pr__event_attr(const struct pr_event_opts *opts, enum pr_event_source source,
		   unsigned int flags, struct perf_event_attr *attr,
		   const struct pr_logger *lg);
int pr__event_probe(const struct pr_event_opts *opts, const struct pr_logger *lg);

/* Log why perf_event_open failed with `err` (a positive errno) and what to
 * do about it. */
void pr__explain_open_error(const struct pr_logger *lg, int err,
			    const struct perf_event_attr *attr, pid_t pid,
			    int cpu);

struct pr_ring {
	int cpu;
	int fd;                         /* fd the ring is mapped from, or -1 */
	void *base;                     /* mapping: control page + data */
	size_t map_len;                 /* 0 when `base` is not ours to unmap */
	struct perf_event_mmap_page *meta;
	unsigned char *data;
	uint64_t data_size;             /* power of two */
	uint64_t tail;                  /* next byte to read */
	uint64_t head;                  /* data_head snapshot */
	unsigned char *bounce;          /* for records that wrap or are unaligned */
	struct pr_ring_stats stats;     /* counters: atomic accesses only */
};

/* Map `pages` data pages (a power of two) of `fd`'s ring.  On failure the
 * log says what to do (perf_event_mlock_kb on EPERM). */
int pr__ring_mmap(struct pr_ring *ring, int fd, int cpu, size_t pages,
		  const struct pr_logger *lg);

/* Use caller memory laid out as a mapping (control page, then `data_size`
 * bytes of data) as a ring: for tests and benchmarks. */
void pr__ring_init_mem(struct pr_ring *ring, void *base, size_t page_size,
		       uint64_t data_size, int cpu);

/* Unmap and free; leaves the ring zeroed with fd = -1.  Does not close fd. */
void pr__ring_release(struct pr_ring *ring);

/* Take a new snapshot of the kernel's data_head (acquire load).  Draining
 * stops at the snapshot, so a busy ring cannot keep a reader forever. */
void pr__ring_refresh(struct pr_ring *ring);

/*
 * The next record before the head snapshot, contiguous and 8-byte aligned,
 * through *rec and its size through *size.  Returns 1 when there is one, 0
 * when the snapshot is drained, and
 * -EBADMSG when the header is corrupt; then the ring has been resynchronised
 * to the kernel's head (pending data discarded and counted) and the log
 * names the CPU and offset.  The record stays valid until pr__ring_advance().
 */
int pr__ring_peek(struct pr_ring *ring, const void **rec, size_t *size,
		  const struct pr_logger *lg);
/* A copy of the record `skip` bytes past the one pr__ring_peek() gives,
 * into `buf` (8-aligned, `max` bytes): its size, or 0 when it is not in
 * the head snapshot whole, or is larger than `max`, or its header is
 * bad. */
size_t pr__ring_copy_after(const struct pr_ring *ring, size_t skip, void *buf, size_t max);

/* Release `size` bytes to the kernel (release store of data_tail). */
void pr__ring_advance(struct pr_ring *ring, size_t size);

/* Account a parsed record in the ring's counters. */
void pr__ring_count(struct pr_ring *ring, const struct pr_record *rec);

/* Account a corrupt record: `bytes` were skipped. */
void pr__ring_count_corrupt(struct pr_ring *ring, uint64_t bytes);

/* Account a sample dropped as a duplicate (see struct pr_late_thread). */
void pr__ring_count_duplicate(struct pr_ring *ring);
/* Account a sample bearing an event id not the reader's, adopted by its
 * stray event or dropped (struct pr_reader.stray_event). */
void pr__ring_count_foreign(struct pr_ring *ring, bool adopted);

/* Account a sample whose call chain reached the kernel's depth limit. */
void pr__ring_count_chain_at_limit(struct pr_ring *ring);

/* Copy counters with atomic loads. */
void pr__ring_stats_load(const struct pr_ring *ring, struct pr_ring_stats *st);

/* ---- reader.c ---- */

/* A reader over rings the caller prepared with pr__ring_init_mem(), with
 * no events behind them: for tests and benchmarks.  The rings are copied;
 * the memory they point to stays the caller's. */
struct pr_reader *pr__reader_from_rings(struct pr_ring *rings, size_t nr,
					 const struct perf_event_attr *attr,
					 const struct pr_logger *lg);

/* Parse a CPU list ("0-3,8,10-11") and append it, sorted and unique, to
 * the empty list `out`.  Returns 0, -EINVAL or -ENOMEM. */
int pr__parse_cpu_list(const char *s, struct pr_intlist *out);

/* The online CPUs, from /sys/devices/system/cpu/online. */
int pr__online_cpus(struct pr_intlist *out);

/* Add the thread ids of process `pid` not yet in `tids`.  Returns the
 * number added, or -ESRCH when the process does not exist. */
int pr__list_threads(pid_t pid, struct pr_intlist *tids);

/* What /proc/PID/task/TID/stat says of a task: its state letter ('Z' a
 * zombie), whether it is a kernel thread, its parent and its name. */
struct pr_task_state {
	char state;
	bool kthread;
	pid_t ppid;
	char comm[16];
};

/* 0, or -errno (-ESRCH: no such task). */
int pr__task_read(pid_t pid, pid_t tid, struct pr_task_state *t);

/* ---- proc.c ---- */

/* Called with a process or thread id; non-zero stops the walk. */
typedef int (*pr_proc_id_fn)(pid_t id, void *arg);

/* fn() for each process in /proc (pid 0) or each thread of process `pid`,
 * in directory order.  Returns 0, what fn() returned to stop, -ESRCH when
 * the process does not exist, or another negative errno. */
int pr__proc_for_each(pid_t pid, pr_proc_id_fn fn, void *arg);

/* ---- cgroup.c ---- */

/* The directory of cgroup v2 `path`, opened for perf_event_open's
 * PERF_FLAG_PID_CGROUP; a negative errno after saying why (not there, not
 * cgroup v2). */
int pr__cgroup_open(const char *path, const struct pr_logger *lg);
/* `fn` for every process in cgroup `path` and in the cgroups below it
 * (cgroup.procs); stops at its first nonzero return, which is returned. */
int pr__cgroup_for_each(const char *path, pr_proc_id_fn fn, void *arg,
			const struct pr_logger *lg);

/* A command forked and held before exec until pr__command_start(). */
struct pr_command {
	pid_t pid;
	int fd;        /* our end: one byte lets the child exec; EOF or its
			  exec errno comes back */
	bool started;
};

int pr__command_fork(struct pr_command *cmd, char *const argv[],
		     const struct pr_logger *lg);
/* Let the command exec; returns 0 or the negative errno of a failed exec. */
int pr__command_start(struct pr_command *cmd, const char *name,
		      const struct pr_logger *lg);
/* Kill and reap a command that was never started; close the pipes. */
void pr__command_release(struct pr_command *cmd);

/* ---- evparse.c ---- */

/* The logger pr_event_lookup_opts gives: 0, or -EINVAL for bad options. */
int pr__lookup_logger(const struct pr_event_lookup_opts *opts, struct pr_logger *lg);

/* prevent.h's lookups, as each version node (libperfreader.map) has them:
 * 2.0 took the log callback bare. */
PR_VERSIONED int pr__event_parse_2_1(const char *s, struct pr_event_desc *ev,
				     const struct pr_event_lookup_opts *opts);
PR_VERSIONED int pr__event_parse_2_0(const char *s, struct pr_event_desc *ev, pr_log_fn log,
				     void *log_ctx);
PR_VERSIONED int pr__event_list_parse_2_1(const char *s, struct pr_event_desc *evs, size_t max,
					  const struct pr_event_lookup_opts *opts);
PR_VERSIONED int pr__event_list_parse_2_0(const char *s, struct pr_event_desc *evs, size_t max,
					  pr_log_fn log, void *log_ctx);
PR_VERSIONED int pr__event_check_2_1(const struct pr_event_desc *ev,
				     const struct pr_event_lookup_opts *opts);
PR_VERSIONED int pr__event_check_2_0(const struct pr_event_desc *ev, pr_log_fn log,
				     void *log_ctx);
PR_VERSIONED int pr__tracefs_path_2_1(char *buf, size_t size,
				      const struct pr_event_lookup_opts *opts);
PR_VERSIONED int pr__tracefs_path_2_0(char *buf, size_t size, pr_log_fn log, void *log_ctx);

/* ---- tracefs.c ---- */

/* Where to look for tracefs, in order: `dirs` (each used if tracefs is
 * mounted there), then the mounts table `mounts` (/proc/mounts' format),
 * then a mount on `mount_on` (NULL: never mount).  Tests give their own. */
struct pr_tracefs_places {
	const char *mounts;
	const char *const *dirs;
	size_t nr_dirs;
	const char *mount_on;
};

/* pr_tracefs_path() with the places given. */
int pr__tracefs_find(const struct pr_tracefs_places *pl, char *buf, size_t size,
		     const struct pr_logger *lg);
/* pr_tracefs_path() logging through `lg`. */
int pr__tracefs_path(char *buf, size_t size, const struct pr_logger *lg);
/* The id of tracepoint sys:name.  0, -EINVAL (not a name), -ENOENT (no
 * such tracepoint: the message suggests close ones), -ENODEV, -EACCES. */
int pr__tracepoint_id(const char *sys, const char *name, uint64_t *id,
		      const struct pr_logger *lg);
/* "sys:name" of the tracepoint with `id`: 0, or -ENOENT (none, or no
 * tracefs).  Silent. */
int pr__tracepoint_name(uint64_t id, char *buf, size_t size);

/* ---- synth.c ---- */

/* Records built in the kernel's layout for `attr`'s events (synth.h),
 * decoded and handed to `cb`. */
struct synth;
struct pr__emitter {
	const struct perf_event_attr *attr;
	struct pr_parse_cfg cfg;
	uint64_t id;                 /* in the sample_id trailer */
	pr_record_fn cb;
	void *ctx;
	struct synth *s;             /* malloc'ed: the caller frees it */
};

/* 0, -EINVAL or -ENOMEM (e->s is to be freed whatever happens). */
int pr__emitter_init(struct pr__emitter *e, const struct perf_event_attr *attr, uint64_t id,
		     pr_record_fn cb, void *ctx);
/* Close the record begun on e->s (its size), decode it, hand it to the
 * callback: what that returned. */
int pr__emit_ended(struct pr__emitter *e);
/* The same, after the sample_id trailer the attr asks for. */
int pr__emit_at(struct pr__emitter *e, uint32_t pid, uint32_t tid, uint64_t time,
		uint32_t cpu);

/* ---- ptrace.c ---- */

/* The field "Name:\t..." of /proc/PID/status into buf: its last word
 * (NSpid's last is the pid in the process's own namespace). */
bool pr__status_field(uint32_t pid, const char *name, char *buf, size_t len);
/* The next stop of a seized thread, `timeout` seconds at most: its
 * waitpid status, 0 on timeout, or -ESRCH when it ended. */
int pr__ptrace_wait_stop(pid_t tid, double timeout);
/* A stop status that is a group stop (SIGSTOP and its kin). */
bool pr__ptrace_is_group_stop(int st);
/* Stop seized thread `tid` (PTRACE_INTERRUPT), delivering the signals
 * that come first: 0 once stopped by it, -EAGAIN when it is in a group
 * stop (stopped by a signal, as it stays once let go), -ETIMEDOUT after
 * `timeout` seconds, -ESRCH when it ended, or another negative errno. */
int pr__ptrace_interrupt(pid_t tid, double timeout);
/* Say at `level` why PTRACE_SEIZE of a thread of `pid` failed with `err`
 * (a tracer already there, kernel.yama.ptrace_scope, privileges),
 * followed by `then` (what happens now; NULL: "detach it first" for a
 * tracer).  Returns -EBUSY (traced), -ESRCH, or -EPERM. */
int pr__ptrace_refused(uint32_t pid, int err, enum pr_log_level level, const char *then,
		       const struct pr_logger *lg);

#endif /* PR_CAPTURE_H */
