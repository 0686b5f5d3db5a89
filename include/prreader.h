/* SPDX-License-Identifier: Apache-2.0 */
/*
 * prreader.h - live sampling with perf_event_open(2): the event, the
 * targets (processes, CPUs, a command), one ring buffer per CPU read
 * into records, and records synthesized for what already existed.
 *
 * This header does not include <linux/perf_event.h>; include it yourself
 * before calling pr_event_attr().
 */
#ifndef PRREADER_H
#define PRREADER_H

#include "prcommon.h"
#include "prevent.h"
#include "prrecord.h"
#include "prorder.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ------------------------------------------------------------------------
 * Event specification
 */

/* Default sampling frequency, as perf record's: 99 Hz avoids lockstep with
 * 100 Hz timers in the sampled program. */
#define PR_DEFAULT_FREQ 99
/* Default bytes of user stack copied per sample (perf's default). */
#define PR_DEFAULT_STACK_SIZE 8192
/* The kernel's limit: the sample must fit in a 16-bit record size. */
#define PR_MAX_STACK_SIZE 65528

enum pr_event_source {
	/* Software cpu-clock: works everywhere, including VMs without a PMU. */
	PR_SOURCE_CPU_CLOCK = 0,
	/* Hardware cpu-cycles. */
	PR_SOURCE_HW_CYCLES = 1,
	/* Software context-switches with period 1: a sample (user registers
	 * and stack included) at every switch out of a sampled thread, and,
	 * through attr.context_switch, a PERF_RECORD_SWITCH (per-thread) or
	 * PERF_RECORD_SWITCH_CPU_WIDE (system-wide) record at every switch
	 * out and in.  The sample is taken in the kernel, so the event never
	 * excludes it: it needs kernel.perf_event_paranoid <= 1 or
	 * CAP_PERFMON.  The frequency and period options are ignored. */
	PR_SOURCE_CONTEXT_SWITCH = 2,
	/* The event pr_event_opts.desc describes: any software or hardware
	 * event or tracepoint (prevent.h).  Without a period or a
	 * frequency, a tracepoint or a sparse software event samples at
	 * pr_event_default_period(): every hit. */
	PR_SOURCE_EVENT = 3,
};

/* Flags for pr_event_attr(): what the target needs from the event. */
enum pr_attr_flags {
	/* Follow threads and children created after the event is opened. */
	PR_ATTR_INHERIT = 1u << 0,
	/* Start counting at the target's next exec (launched commands). */
	PR_ATTR_ENABLE_ON_EXEC = 1u << 1,
	/* Several events write into one ring: add PERF_SAMPLE_IDENTIFIER. */
	PR_ATTR_SHARED_RING = 1u << 2,
	/* Do not sample while the target runs in the kernel (unprivileged
	 * users under perf_event_paranoid >= 2 need this). */
	PR_ATTR_USER_ONLY = 1u << 3,
	/* Ask for no side-band records (mmap, comm, task): another event on
	 * the same target reports them, and two would report each twice. */
	PR_ATTR_NO_SIDEBAND = 1u << 4,
	/* Count, do not sample: no period, no sample fields, no stack copy,
	 * no side-band; read() gives the count with the times the event was
	 * enabled and running (PERF_FORMAT_TOTAL_TIME_ENABLED, _RUNNING)
	 * and its id (PERF_FORMAT_ID). */
	PR_ATTR_COUNT = 1u << 5,
	/* Read the event's whole group at once (PERF_FORMAT_GROUP); on a
	 * sampling event, every sample also carries those counts
	 * (PERF_SAMPLE_READ, with the format of PR_ATTR_COUNT). */
	PR_ATTR_READ_GROUP = 1u << 6,
	/* A group member, not its leader: built enabled and without
	 * enable-on-exec, because the leader's state governs the group. */
	PR_ATTR_GROUP_MEMBER = 1u << 7,
};

/* How a sample records its user call stack: perf record's --call-graph
 * modes.  An enum rather than a bool "user chain" because the stack copy
 * must be switchable too (stack_size 0 means the default, not "none"),
 * and of the four combinations of chain and copy the fourth records no
 * user stack at all. */
enum pr_call_graph {
	/* The user registers and a copy of stack_size bytes of the user
	 * stack, unwound afterwards with DWARF call-frame information:
	 * complete stacks without frame pointers.  No user call chain. */
	PR_CALL_GRAPH_DWARF = 0,
	/* The kernel's frame-pointer walk of the user stack (the user part
	 * of PERF_SAMPLE_CALLCHAIN, at most kernel.perf_event_max_stack
	 * entries with the kernel part), without registers or a stack copy:
	 * a few hundred bytes a sample, right only where the code keeps
	 * frame pointers.  stack_size and regs_user are then unused. */
	PR_CALL_GRAPH_FP = 1,
	/* Both: the kernel's user chain, and the registers with a copy of
	 * stack_size bytes. */
	PR_CALL_GRAPH_AUTO = 2,
};

struct pr_event_opts {
	size_t sz;
	/* Samples per second per CPU.  Default PR_DEFAULT_FREQ.  Ignored when
	 * `period` is set. */
	uint64_t freq;
	/* Sample every `period` events (nanoseconds for cpu-clock, cycles for
	 * hardware cycles) instead of sampling by frequency. */
	uint64_t period;
	/* Bytes of user stack copied per sample: a multiple of 8 in
	 * [8, PR_MAX_STACK_SIZE].  Default PR_DEFAULT_STACK_SIZE. */
	uint32_t stack_size;
	/* User registers to copy, a mask of 1 << enum pr_reg.  Must contain
	 * SP and IP.  Default PR_REGS_DWARF. */
	uint64_t regs_user;
	/* Record the kernel part of the call chain. */
	bool kernel_callchain;
	/* Probe hardware cycles and use them when the PMU allows; fall back to
	 * cpu-clock otherwise (see pr_event_probe()). */
	bool prefer_hw_cycles;
	/* Wake readers when a ring holds this many bytes.  Default: half the
	 * ring (the kernel's choice). */
	uint32_t wakeup_bytes;
	/* Where pr_event_attr() and pr_event_probe() send diagnostics; may
	 * be NULL.  A reader logs through its own options instead. */
	pr_log_fn log;
	void *log_ctx;
	/* With PR_SOURCE_EVENT: the event (its type, config and modifiers);
	 * it must not be NULL then.  Only read during the call. */
	const struct pr_event_desc *desc;
	/* What each sample records of the user call stack.  Default
	 * PR_CALL_GRAPH_DWARF; other values are -EINVAL. */
	enum pr_call_graph call_graph;
};

/*
 * Fill `attr` for sampling (or, with PR_ATTR_COUNT, counting) with the
 * given options.  This is the only place in the library where a
 * perf_event_attr is built; every event the library opens, and every attr
 * it writes to a file, comes from here.  `opts` may be NULL for all
 * defaults.  `source` selects the event, `flags` is a mask of enum
 * pr_attr_flags.  The event is built disabled, unless it is a group
 * member (PR_ATTR_GROUP_MEMBER).
 *
 * Returns 0, or -EINVAL when an option is out of range, `attr` is NULL, or
 * PR_SOURCE_EVENT comes without opts->desc (the message says which,
 * through opts->log).  Thread-safe.
 */
PR_API int pr_event_attr(const struct pr_event_opts *opts,
			 enum pr_event_source source, unsigned int flags,
			 struct perf_event_attr *attr);

/*
 * The enum pr_event_source `attr` was built as by pr_event_attr() (told
 * by its type, config and context_switch bit): PR_SOURCE_EVENT for any
 * event not built as another source, -EINVAL for NULL.
 * Every event the library builds times its records with CLOCK_MONOTONIC
 * (attr.use_clockid), so clock_gettime(CLOCK_MONOTONIC) compares with
 * record times.  Thread-safe.
 */
PR_API int pr_event_source_of(const struct perf_event_attr *attr);

/*
 * Decide the event source for `opts`: PR_SOURCE_CPU_CLOCK unless
 * opts->prefer_hw_cycles is set and a hardware cycles event opens on this
 * machine.  The probe falls back to cpu-clock when the kernel answers
 * EOPNOTSUPP, ENOENT, ENODEV, EINVAL or EACCES (no PMU, as in most VMs, or
 * no permission for it); any other error is returned as a negative errno,
 * because it means something is broken that a fallback would hide.
 *
 * Returns the source (>= 0) or a negative errno.  Thread-safe.
 */
PR_API int pr_event_probe(const struct pr_event_opts *opts);

/*
 * Parse a CPU list in the kernel's format ("0-3,8,10-11") into `cpus`,
 * sorted and without duplicates.  Returns the number of CPUs, -EINVAL for a
 * malformed list (or NULL `s`, or NULL `cpus` with a non-zero `max`), or
 * -E2BIG when more than `max` CPUs are listed.
 * Thread-safe.
 */
PR_API int pr_cpu_list_parse(const char *s, int *cpus, size_t max);

/* ------------------------------------------------------------------------
 * The reader: events on a target, one ring buffer per CPU.
 */

struct pr_reader;

/* Default ring size in pages per CPU (power of two): 2 MiB with 4 KiB
 * pages, measured to drop nothing at 10 kHz with 8 KiB stacks on a busy
 * machine (BENCHMARKS.md).  Without CAP_IPC_LOCK, under a paranoid setting
 * the kernel caps locked ring memory at kernel.perf_event_mlock_kb per CPU,
 * so the default shrinks to fit it (128 pages with the usual 516 KiB), as
 * perf record's does. */
#define PR_DEFAULT_RING_PAGES 512

struct pr_reader_opts {
	size_t sz;
	/* The event; NULL for all defaults. */
	const struct pr_event_opts *event;
	/* Data pages per CPU ring, a power of two.  Default
	 * PR_DEFAULT_RING_PAGES, more (up to 4x) so that a ring holds
	 * about 250 samples of the larger stack copy (1000 with off_cpu:
	 * switches come in bursts), or less to fit perf_event_mlock_kb
	 * (see there).  Sampled by frequency (every event, none a `desc`
	 * one) at fewer than 250 samples a second per CPU in all, and
	 * without off_cpu, it holds a second of samples instead, at least
	 * 128 pages: 256 pages at 99 Hz with 8 KiB stacks. */
	uint32_t ring_pages;
	/* Where diagnostics go; may be NULL (they are dropped). */
	pr_log_fn log;
	void *log_ctx;
	/* Non-NULL: also profile off-CPU time.  On every thread or CPU the
	 * reader samples, an event PR_SOURCE_CONTEXT_SWITCH built from these
	 * options is opened beside the CPU event, in the same ring (both
	 * then carry PERF_SAMPLE_IDENTIFIER; pr_reader_event_of() tells
	 * them apart).  The ring's default size follows the larger of the two
	 * stack copies.  Needs kernel.perf_event_paranoid <= 1 or CAP_PERFMON:
	 * opening fails with a message saying so otherwise.  Only read during
	 * the open call. */
	const struct pr_event_opts *off_cpu;
	/* Open no CPU-sampling event: only the off-CPU one (`event` is then
	 * ignored).  -EINVAL when `off_cpu` is NULL or `events` is set. */
	bool no_cpu_samples;
	/* Sample these events instead of `event`, in this order: each is
	 * built PR_SOURCE_EVENT from its options (desc must be set; `event`
	 * is then ignored).  They share each CPU's ring, every record then
	 * carrying PERF_SAMPLE_IDENTIFIER, and the first alone reports the
	 * side-band records (mappings, tasks).  At most 32: more is -E2BIG.
	 * Only read during the open call. */
	const struct pr_event_opts *events;
	size_t nr_events;
	/* Open `events` as one group per thread and CPU, led by the first:
	 * only the leader samples, and every sample of it carries the counts
	 * of the whole group (pr_sample read values, PERF_FORMAT_GROUP, in
	 * event order; the members' options other than desc are unused).
	 * Processes and commands need Linux 6.12 or later (counts on samples
	 * of inherited events): older kernels refuse, and the message says
	 * to sample system-wide instead.  Values of an inherited event count
	 * its own thread only, so they grow monotonically per thread and CPU. */
	bool read_group;
	/* Sample on the CPUs only the tasks of this cgroup and of the cgroups
	 * below it, as perf record -G does: a directory of the cgroup v2
	 * hierarchy, by its whole path (/sys/fs/cgroup/system.slice/x.service)
	 * or relative to where the hierarchy is mounted (system.slice/x.service,
	 * as /proc/PID/cgroup names it after "0::/").  Only with
	 * pr_reader_open_cpus() (-EINVAL otherwise); cgroup v1 is refused
	 * with a message.  The kernel reports the mappings and tasks of those
	 * tasks only; pr_cgroup_synthesize() makes the records of the
	 * processes already there.  A task moved into the cgroup later is
	 * sampled, but its earlier mappings are not known.  Only read during
	 * the open call. */
	const char *cgroup;
};

/*
 * Sample processes: every thread each of `pids` has, and every thread or
 * child process they create after the call.  Events are opened per thread and
 * CPU and share one ring per CPU.  A thread that appears while the events
 * are being opened gets events of its own, and samples it would also
 * deliver through an event inherited from its creator are dropped, so every
 * thread is sampled exactly once (pr_ring_stats.duplicates counts them).
 *
 * Sample system-wide: every task on the CPUs in `cpus` (all online CPUs when
 * `cpus` is NULL).  CPUs that are offline are skipped.
 *
 * Sample a command: fork `argv` (argv[0] looked up in PATH) stopped before
 * exec; it runs, with sampling from its first instruction, when
 * pr_reader_enable() is called.  `argv` is copied as needed; it need not
 * outlive the call.  Signals the caller ignores stay ignored in the command
 * (as with nohup); handlers the caller installed are reset.  The caller
 * reaps the child (pr_reader_child()); if the reader is closed before the
 * command was started, the child is killed and reaped by pr_reader_close().
 * The child is killed (SIGKILL) when the calling thread ends, as when the
 * caller is killed: open it from a thread that outlives the command.
 * The start handshake relies on close-on-exec: a thread of the caller that
 * forks without exec'ing while the command starts delays the start until
 * that child execs or exits.
 *
 * All events are opened disabled, every ring is mapped, then nothing runs
 * until pr_reader_enable().  On failure nothing is left open or mapped and
 * NULL is returned with errno set; the log says why and what to do.
 * `opts` may be NULL.  The caller owns the reader; release it with
 * pr_reader_close().
 */
PR_API struct pr_reader *pr_reader_open_pids(const pid_t *pids, size_t nr_pids,
					     const struct pr_reader_opts *opts);

/*
 * Sample threads: exactly the threads `tids` (`nr_tids` of them, of any
 * processes), as perf record -t does, and not the threads or children
 * they create.  Events are opened per thread and CPU and share one ring
 * per CPU, as for processes.  The kernel reports the mappings a thread
 * makes itself: those another thread of its process makes (a dlopen) are
 * not seen, so synthesize the process's (pr_process_synthesize()) before
 * sampling.  A thread that does not exist fails the open (ESRCH, the log
 * naming it).  Otherwise as pr_reader_open_pids().
 */
PR_API struct pr_reader *pr_reader_open_tids(const pid_t *tids, size_t nr_tids,
					     const struct pr_reader_opts *opts);
PR_API struct pr_reader *pr_reader_open_cpus(const int *cpus, size_t nr_cpus,
					     const struct pr_reader_opts *opts);
PR_API struct pr_reader *pr_reader_open_command(char *const argv[],
						const struct pr_reader_opts *opts);

/*
 * Release everything in reverse order of acquisition: disable the events,
 * unmap the rings, close the event fds and the poll fd.  Accepts NULL.
 */
PR_API void pr_reader_close(struct pr_reader *r);

/*
 * Start sampling (for a command, the first time: let it exec).  For a
 * command whose exec fails, returns the exec's negative errno; for one that
 * died before it could start, -ESRCH.  Enabling again after
 * pr_reader_disable() resumes sampling.
 */
PR_API int pr_reader_enable(struct pr_reader *r);
/* Stop sampling; records already in the rings can still be read. */
PR_API int pr_reader_disable(struct pr_reader *r);

/*
 * One file descriptor, readable when any ring has data past its wakeup
 * mark or a sampled task has exited, for poll/epoll/select.  Owned by the
 * reader.  When it turns readable, call pr_reader_poll(r, 0, ...) (or
 * pr_reader_wait(r, 0), then consume): that also retires the events of
 * exited tasks, without which it would stay readable.  Returns -EINVAL
 * for NULL.
 */
PR_API int pr_reader_fd(const struct pr_reader *r);

/*
 * Wait up to `timeout_ms` (-1: forever) for data.  Returns the number of
 * event fds that signalled data (0 on timeout or when only exits were
 * seen), or a negative errno; -EINTR when a signal arrived.  This is where
 * exits of sampled tasks are noticed (pr_reader_done()); once every task
 * has exited it returns 0 at once.
 */
PR_API int pr_reader_wait(struct pr_reader *r, int timeout_ms);

/*
 * Push: hand every record now in the rings to `cb`, ring by ring, each ring
 * in the order the kernel wrote it.  The record is valid until `cb` returns.
 * A negative return from `cb` stops the drain and is returned (the record
 * counts as consumed).  Returns the number of records handed out, or a
 * negative errno.  A corrupt record is logged with its CPU and ring offset
 * and skipped: one whose header is sound alone, one with a corrupt header
 * together with the rest of that ring's pending data (no later boundary can
 * be trusted).  The drain goes on and returns -EBADMSG at the end, unless
 * `cb` stopped it first; the next call continues with new data.
 */
PR_API int pr_reader_consume(struct pr_reader *r, pr_record_fn cb, void *ctx);

/* pr_reader_wait(), then pr_reader_consume(). */
PR_API int pr_reader_poll(struct pr_reader *r, int timeout_ms,
			  pr_record_fn cb, void *ctx);

/*
 * Pull: store the next record in `rec`.  Returns 1 when a record was
 * stored, 0 when the rings are empty, or a negative errno (-EBADMSG as for
 * pr_reader_consume()).  The record stays valid until the next call on `r`.
 */
PR_API int pr_reader_read(struct pr_reader *r, struct pr_record *rec);

/*
 * Decode again a record copied out of the rings (or out of a synthesize
 * callback): `size` bytes at `raw` (8-byte aligned; rec->raw and its
 * header's size as handed out).  This lets a caller move records to another
 * thread and parse them there: pointers in `rec` point into `raw`, and
 * rec->ring_cpu is -1.  Returns 0, -EINVAL, or -EBADMSG when the bytes are
 * not a record of this reader's events.  Thread-safe: it reads only the
 * reader's fixed configuration, so it may run while another thread drains.
 */
PR_API int pr_reader_parse(const struct pr_reader *r, const void *raw, size_t size,
			   struct pr_record *rec);

/*
 * True once every sampled task has exited (process and command targets;
 * never for system-wide sampling), as last seen by pr_reader_wait() or
 * pr_reader_poll().  Records may still be pending: drain them after this
 * turns true.
 */
PR_API bool pr_reader_done(const struct pr_reader *r);

/* The launched command's pid, or -1 for other targets and NULL. */
PR_API pid_t pr_reader_child(const struct pr_reader *r);

/*
 * The perf_event_attr the first event was opened with (for writing files),
 * or NULL for NULL.  Valid until pr_reader_close(); it never changes, so
 * any thread may read it while another drains.
 */
PR_API const struct perf_event_attr *pr_reader_attr(const struct pr_reader *r);

/*
 * The reader's events (0 for NULL): pr_reader_opts.events in their order
 * (or the one CPU-sampling event, unless no_cpu_samples), then the
 * off-CPU event when asked for (pr_event_source_of() says
 * PR_SOURCE_CONTEXT_SWITCH).  A read group's members are events too,
 * though their counts arrive only in the leader's samples.
 * pr_reader_event_attr(): event `idx`'s attr, NULL past the last; valid
 * until pr_reader_close().  pr_reader_event_ids(): the kernel ids of event
 * `idx`, up to `max` into `ids` (which may be NULL); returns how many it
 * has.  All thread-safe: the events never change once open.
 */
PR_API size_t pr_reader_nr_events(const struct pr_reader *r);
PR_API const struct perf_event_attr *pr_reader_event_attr(const struct pr_reader *r,
							   size_t idx);
PR_API size_t pr_reader_event_ids(const struct pr_reader *r, size_t idx,
				  uint64_t *ids, size_t max);

/*
 * Since 2.1.  Event `idx`'s count, summed over every thread and CPU it was
 * opened on, with what the threads it was inherited into counted before
 * they exited, into `*count`.  For cpu-clock and task-clock it is CPU time
 * in nanoseconds; for a command it runs from the exec (enable_on_exec), so
 * the profiler's work between fork and exec is not in it.  It reads the
 * events, so call it after the command has been reaped for its whole
 * count.  0, -EINVAL for NULL or past the last event, or the negative
 * errno of a failed read.
 */
PR_API int pr_reader_count(const struct pr_reader *r, size_t idx, uint64_t *count);

/*
 * The index of the event that wrote `rec` (a record of this reader, or
 * parsed by pr_reader_parse()): 0 when the reader has one event; otherwise
 * from rec->id, -ENOENT when the record carries no id or an unknown one.
 * -EINVAL for NULL.  A binary search: cheap enough per sample.
 * Thread-safe.
 */
PR_API int pr_reader_event_of(const struct pr_reader *r, const struct pr_record *rec);

/* Number of rings (0 for NULL), and the CPU ring `idx` belongs to
 * (-EINVAL past the last). */
PR_API size_t pr_reader_nr_rings(const struct pr_reader *r);
PR_API int pr_reader_ring_cpu(const struct pr_reader *r, size_t idx);

/* Counters of one ring.  Set `sz` before the call. */
struct pr_ring_stats {
	size_t sz;
	int cpu;
	uint64_t records;
	uint64_t samples;
	/* Samples the kernel dropped: sum of PERF_RECORD_LOST.lost. */
	uint64_t lost;
	/* Sum of PERF_RECORD_LOST_SAMPLES.lost. */
	uint64_t lost_samples;
	uint64_t throttled;
	/* Corrupt records seen, and bytes discarded to resynchronise. */
	uint64_t corrupt;
	uint64_t discarded_bytes;
	/* Samples dropped because a thread found while attaching delivered
	 * them twice (its own event and one inherited from its creator). */
	uint64_t duplicates;
	uint64_t bytes;
	/* Records by type, indexed by enum pr_record_type; others in [0]. */
	uint64_t by_type[PR_RECORD_KERNEL_MAX];
	/* Bytes of the samples alone (bytes / samples is what a sample of
	 * these events costs in the ring). */
	uint64_t sample_bytes;
	/* Samples whose call chain holds as many entries as the kernel
	 * walks (pr_reader_max_stack(), context markers not counted): the
	 * walk stopped there, and their outermost callers are missing.  Not
	 * those whose last entry is 0: that walk was going round memory
	 * that holds no frames, not deeper. */
	uint64_t chains_at_limit;
	/* Samples bearing the id of an event this reader did not open:
	 * another program samples the same software event on the same
	 * threads, and Linux 6.3+ gives the samples of both one id.
	 * Adopted: counted under the one event of the reader's that can
	 * have taken them, their id made its own.  Dropped: the reader has
	 * several such events, and which took them cannot be told. */
	uint64_t foreign_adopted;
	uint64_t foreign_dropped;
};

/*
 * Copy ring `idx`'s counters.  Thread-safe: may be called from another
 * thread while one thread reads the rings; each counter is read atomically.
 * Returns 0 or -EINVAL.
 */
PR_API int pr_reader_ring_stats(const struct pr_reader *r, size_t idx,
				struct pr_ring_stats *st);

/* Sum over every ring of pr_ring_stats.lost.  Thread-safe like
 * pr_reader_ring_stats(). */
PR_API uint64_t pr_reader_lost(const struct pr_reader *r);

/*
 * The most call-chain entries the kernel records per sample for the
 * reader's events (kernel.perf_event_max_stack as it was when they were
 * opened; kernel and user entries together, context markers not
 * counted), or 0 for NULL or when no event records a call chain.  A
 * larger value of the setting takes effect on events opened after it is
 * raised.  Thread-safe.
 */
PR_API uint32_t pr_reader_max_stack(const struct pr_reader *r);

/*
 * The kernel ids of all the reader's events (what PERF_SAMPLE_IDENTIFIER
 * carries): up to `max` into `ids` (which may be NULL to ask how many).
 * Returns how many there are, 0 for NULL.  pr_reader_event_ids() gives
 * them per event, as a file with several events lists them.
 */
PR_API size_t pr_reader_ids(const struct pr_reader *r, uint64_t *ids, size_t max);

/*
 * Drain every ring of `r` into `o` (pr_reader_consume()), end the round
 * and deliver what it lets go (pr_order_deliver()): the reader's records
 * in time order, one drain behind.  Returns the number of records
 * delivered or a negative errno; -EBADMSG, after delivering, when the
 * drain skipped a corrupt record.  Call pr_order_flush() at the end.
 */
PR_API int pr_reader_consume_ordered(struct pr_reader *r, struct pr_order *o,
				     pr_record_fn cb, void *ctx);

/* ------------------------------------------------------------------------
 * Synthesized records: what already existed when sampling started,
 * described as the kernel describes what happens later.
 *
 * Each record is handed to `cb` as a typed record (valid until it
 * returns) whose raw bytes follow `attr`'s layout: time 0 and, where
 * `attr` asks for it, a sample_id trailer naming the task and `id`.  A
 * negative return from `cb` stops and is returned.  `attr` is only read
 * during the call.  Thread-safe: they keep no state, and `cb` runs on the
 * calling thread.
 */

/*
 * For process `pid`: a COMM for every thread, a FORK for every thread
 * other than the main one, and an MMAP2 for every executable mapping in
 * /proc/PID/maps.  A `pid` that is a thread other than its process's
 * main one stands for its process (pr_thread_process()), whose records
 * these are, as the kernel's are.  Returns 0, -ESRCH when the process is
 * gone, or an error of `cb`.
 */
PR_API int pr_process_synthesize(pid_t pid, const struct perf_event_attr *attr,
				 uint64_t id, pr_record_fn cb, void *ctx);

/*
 * The process thread `tid` belongs to (its thread group id, as
 * /proc/TID/status names it): `tid` itself for a process's main thread.
 * -EINVAL for a `tid` below 1, -ESRCH when there is no such thread, or
 * another negative errno.  Thread-safe.
 */
PR_API pid_t pr_thread_process(pid_t tid);

/* The same for every process on the system (those that exit meanwhile are
 * skipped). */
PR_API int pr_system_synthesize(const struct perf_event_attr *attr, uint64_t id,
				pr_record_fn cb, void *ctx);

/* The same for every process in cgroup (v2) `cgroup` and the cgroups below
 * it (their cgroup.procs): what pr_reader_opts.cgroup samples.  -EINVAL
 * when `cgroup` is not a cgroup v2 directory, -ENOENT when it is not there. */
PR_API int pr_cgroup_synthesize(const char *cgroup, const struct perf_event_attr *attr,
				uint64_t id, pr_record_fn cb, void *ctx);

/*
 * An MMAP of the kernel's text ("[kernel.kallsyms]_text", pid -1), as perf
 * record writes, so kernel addresses resolve.  Returns 0 without a record
 * when /proc/kallsyms hides addresses (kernel.kptr_restrict).
 */
PR_API int pr_kernel_synthesize(const struct perf_event_attr *attr, uint64_t id,
				pr_record_fn cb, void *ctx);

/* ------------------------------------------------------------------------
 * Threads already off the CPU when sampling starts.
 *
 * A thread that blocked before its events were enabled writes no switch
 * out: its wait (a deadlock, a sleep, a server waiting for a client)
 * would not be seen at all.  pr_blocked_snapshot(), called before
 * pr_reader_enable(), takes the user registers and stack of every thread
 * of the processes that is not running (state S, T, D in
 * /proc/PID/task/TID/stat), one thread at a time: PTRACE_SEIZE,
 * PTRACE_INTERRUPT, PTRACE_GETREGS, the stack read with
 * process_vm_readv(), PTRACE_DETACH.  A system call the stop interrupts
 * is restarted by the kernel as the thread is let go (what a debugger's
 * attach does too); a stopped process stays stopped.  A thread that such
 * a stop would change is not stopped: one in uninterruptible sleep (D),
 * which would stop only once its wait ends, and one in a call the stop
 * would end with EINTR (epoll_wait, semop, rt_sigtimedwait, io_getevents,
 * io_uring_enter; signal(7)).  Its stack pointer and instruction pointer
 * come from /proc/PID/task/TID/syscall, without the other registers,
 * which the unwinding of some frames needs (a frame whose CFA is kept in
 * rbp).  A socket call with a timeout (SO_RCVTIMEO) still returns EINTR
 * after the stop; programs retry it.
 *
 * pr_blocked_synthesize(), once sampling started, then describes each
 * thread that has not run since, as the kernel would have: the off-CPU
 * event's switch-out sample and a PERF_RECORD_SWITCH out, marked
 * PR_RECORD_MISC_SWITCH_BEFORE_START, both at the start's time.  Its
 * wait ends at its next switch in, or at the end of the run.
 */

struct pr_blocked_opts {
	size_t sz;
	/* The most time all the stops may take together, in seconds
	 * (default 2): the threads past it are left out, and said so. */
	double max_seconds;
	pr_log_fn log;
	void *log_ctx;
};

struct pr_blocked;

/*
 * Snapshots of the threads of processes `pids` off the CPU now, for the
 * off-CPU event `attr` (the registers of its sample_regs_user; as much of
 * the stack as its sample_stack_user).  A process that is gone is
 * skipped; one ptrace refuses (another tracer such as strace or gdb,
 * kernel.yama.ptrace_scope, a container without CAP_SYS_PTRACE) gets
 * one warning naming the reason and no snapshots.  Returns the
 * snapshots (pr_blocked_free()), perhaps none, or NULL with errno set
 * (EINVAL, ENOMEM, EOPNOTSUPP off x86-64).  Not thread-safe (it is the
 * threads' tracer for a while).
 */
PR_API struct pr_blocked *pr_blocked_snapshot(const pid_t *pids, size_t nr,
					      const struct perf_event_attr *attr,
					      const struct pr_blocked_opts *opts);

/* How many threads it holds (0 for NULL). */
PR_API size_t pr_blocked_nr(const struct pr_blocked *b);

/*
 * The records of the snapshots whose threads have not run since they
 * were taken (their context-switch counts unchanged), at `time` (the
 * event clock when sampling started): a sample in `attr`'s layout and a
 * switch out, each with `id` (one of the off-CPU event's ids:
 * pr_reader_event_ids()).  `attr` must be the one given to
 * pr_blocked_snapshot().  Records are handed to `cb` as in
 * pr_process_synthesize().  Returns how many threads were described, or
 * -EOPNOTSUPP (`attr` asks for a field these records cannot have), or
 * an error of `cb`.
 */
PR_API int pr_blocked_synthesize(const struct pr_blocked *b, const struct perf_event_attr *attr,
				 uint64_t id, uint64_t time, pr_record_fn cb, void *ctx);

/* Accepts NULL. */
PR_API void pr_blocked_free(struct pr_blocked *b);

#ifdef __cplusplus
}
#endif

#endif /* PRREADER_H */
