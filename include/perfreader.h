/* SPDX-License-Identifier: Apache-2.0 */
/*
 * perfreader.h - per-CPU sampling of user registers and user stacks with
 * perf_event_open(2), and the typed records it produces.
 *
 * Conventions, for every function below:
 *  - Functions returning int return 0 (or a count) on success and a negative
 *    errno value on failure.  Functions returning a pointer return NULL and
 *    set errno on failure.
 *  - The library never prints.  Diagnostics, including the advice a user
 *    needs when the kernel refuses (perf_event_paranoid, CAP_PERFMON,
 *    perf_event_mlock_kb), go to the log callback given in the options.
 *  - Options structs start with `size_t sz`, which the caller sets to
 *    sizeof(the struct) (use PR_OPTS()).  Fields the library does not know
 *    must be zero; fields the caller's older header does not have take their
 *    defaults.  A zero field means "default" unless stated otherwise.
 *  - Objects are opaque and not thread-safe unless a function says so.
 *
 * This header is C99 and does not include <linux/perf_event.h>; include it
 * yourself before calling pr_event_attr().
 */
#ifndef PERFREADER_H
#define PERFREADER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#ifdef __cplusplus
extern "C" {
#endif

#if defined(__GNUC__) && __GNUC__ >= 4
#define PR_API __attribute__((visibility("default")))
#else
#define PR_API
#endif

/* Declare and zero an options struct with its size filled in:
 *     PR_OPTS(pr_reader_opts, o, .freq = 999);  */
#define PR_OPTS(TYPE, NAME, ...)                                              \
	struct TYPE NAME = { .sz = sizeof(struct TYPE), __VA_ARGS__ }

/* ------------------------------------------------------------------------
 * Logging
 */

enum pr_log_level {
	PR_LOG_ERROR = 0,
	PR_LOG_WARN = 1,
	PR_LOG_INFO = 2,
	PR_LOG_DEBUG = 3,
};

/*
 * Receives one complete message without a trailing newline.  `msg` is valid
 * only during the call.  Called from whichever thread made the library call
 * that produced the message.
 */
typedef void (*pr_log_fn)(enum pr_log_level level, const char *msg, void *ctx);

/*
 * Describe a return code of this library in `buf` (always NUL-terminated).
 * Returns `buf`.  Thread-safe.
 */
PR_API const char *pr_strerror(int err, char *buf, size_t len);

/* ------------------------------------------------------------------------
 * Registers
 *
 * Indices of the x86-64 user registers in perf's numbering
 * (arch/x86/include/uapi/asm/perf_regs.h).
 */
enum pr_reg {
	PR_REG_AX = 0,
	PR_REG_BX = 1,
	PR_REG_CX = 2,
	PR_REG_DX = 3,
	PR_REG_SI = 4,
	PR_REG_DI = 5,
	PR_REG_BP = 6,
	PR_REG_SP = 7,
	PR_REG_IP = 8,
	PR_REG_FLAGS = 9,
	PR_REG_CS = 10,
	PR_REG_SS = 11,
	PR_REG_DS = 12,
	PR_REG_ES = 13,
	PR_REG_FS = 14,
	PR_REG_GS = 15,
	PR_REG_R8 = 16,
	PR_REG_R9 = 17,
	PR_REG_R10 = 18,
	PR_REG_R11 = 19,
	PR_REG_R12 = 20,
	PR_REG_R13 = 21,
	PR_REG_R14 = 22,
	PR_REG_R15 = 23,
	PR_REG_MAX = 24,
};

/*
 * The registers DWARF unwinding needs on x86-64: the general purpose
 * registers, SP, BP and IP.  Flags and segment registers are never restored
 * by CFI and would only cost ring-buffer bandwidth.
 */
#define PR_REGS_DWARF                                                         \
	((UINT64_C(1) << PR_REG_AX) | (UINT64_C(1) << PR_REG_BX) |            \
	 (UINT64_C(1) << PR_REG_CX) | (UINT64_C(1) << PR_REG_DX) |            \
	 (UINT64_C(1) << PR_REG_SI) | (UINT64_C(1) << PR_REG_DI) |            \
	 (UINT64_C(1) << PR_REG_BP) | (UINT64_C(1) << PR_REG_SP) |            \
	 (UINT64_C(1) << PR_REG_IP) | (UINT64_C(0xff) << PR_REG_R8))

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
};

/*
 * Fill `attr` for sampling with the given options.  This is the only place in
 * the library where a perf_event_attr is built; every event the library
 * opens, and every attr it writes to a file, comes from here.  `opts` may be
 * NULL for all defaults.  `source` selects the event, `flags` is a mask of
 * enum pr_attr_flags.  The event is always built disabled.
 *
 * Returns 0, or -EINVAL when an option is out of range (the message says
 * which, through `log` when it is not NULL).  Thread-safe.
 */
struct perf_event_attr;
PR_API int pr_event_attr(const struct pr_event_opts *opts,
			 enum pr_event_source source, unsigned int flags,
			 struct perf_event_attr *attr, pr_log_fn log,
			 void *log_ctx);

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
PR_API int pr_event_probe(const struct pr_event_opts *opts, pr_log_fn log,
			  void *log_ctx);

/* ------------------------------------------------------------------------
 * Records
 *
 * Records are plain values.  Pointers inside them (stack bytes, call chain,
 * registers, file names) point into the ring buffer or the reader's bounce
 * buffer: they are valid until the callback returns (push) or until the next
 * call on the reader (pull).  Copy what you keep.
 */

/* The longest build-id perf.data can carry (a SHA-1). */
#define PR_BUILD_ID_MAX 20

/* Values of pr_record.type: the kernel's PERF_RECORD_* numbers. */
enum pr_record_type {
	PR_RECORD_MMAP = 1,
	PR_RECORD_LOST = 2,
	PR_RECORD_COMM = 3,
	PR_RECORD_EXIT = 4,
	PR_RECORD_THROTTLE = 5,
	PR_RECORD_UNTHROTTLE = 6,
	PR_RECORD_FORK = 7,
	PR_RECORD_READ = 8,
	PR_RECORD_SAMPLE = 9,
	PR_RECORD_MMAP2 = 10,
	PR_RECORD_AUX = 11,
	PR_RECORD_ITRACE_START = 12,
	PR_RECORD_LOST_SAMPLES = 13,
	PR_RECORD_SWITCH = 14,
	PR_RECORD_SWITCH_CPU_WIDE = 15,
	PR_RECORD_NAMESPACES = 16,
	PR_RECORD_KSYMBOL = 17,
	PR_RECORD_BPF_EVENT = 18,
	PR_RECORD_CGROUP = 19,
	PR_RECORD_TEXT_POKE = 20,
	PR_RECORD_AUX_OUTPUT_HW_ID = 21,
	/* One past the highest kernel record type this library names. */
	PR_RECORD_KERNEL_MAX = 22,
};

/* Which identity fields of a record are present (pr_record.fields). */
enum pr_id_fields {
	PR_ID_TID = 1u << 0,       /* pid and tid */
	PR_ID_TIME = 1u << 1,
	PR_ID_ID = 1u << 2,        /* id: which event produced the record */
	PR_ID_STREAM_ID = 1u << 3,
	PR_ID_CPU = 1u << 4,
};

/* PERF_RECORD_SAMPLE. */
struct pr_sample {
	uint64_t ip;
	uint64_t addr;
	uint64_t period;
	/* Kernel call chain, including PERF_CONTEXT_* markers; NULL when none. */
	const uint64_t *callchain;
	uint64_t nr_callchain;
	/* PERF_SAMPLE_REGS_ABI_{NONE,32,64}.  NONE means the kernel had no
	 * user registers (a kernel thread): regs is NULL. */
	uint64_t regs_abi;
	/* Which registers `regs` holds, densely packed in ascending register
	 * number; read them with pr_sample_reg(). */
	uint64_t regs_mask;
	const uint64_t *regs;
	/* The user stack pointer at the sample: the address of stack[0].
	 * 0 when there were no user registers. */
	uint64_t stack_addr;
	/* The copied user stack: `stack_size` bytes were reserved, the first
	 * `stack_dyn_size` of them are valid. */
	const uint8_t *stack;
	uint64_t stack_size;
	uint64_t stack_dyn_size;
	/* PERF_SAMPLE_RAW payload, when the event asked for it. */
	const void *raw;
	uint32_t raw_size;
};

/* PERF_RECORD_MMAP and PERF_RECORD_MMAP2 (is_mmap2). */
struct pr_mmap {
	uint64_t addr;
	uint64_t len;
	uint64_t pgoff;
	const char *filename;
	bool is_mmap2;
	/* MMAP2 only: the file's identity, or its build-id when the kernel
	 * reported one (PERF_RECORD_MISC_MMAP_BUILD_ID). */
	bool has_build_id;
	uint8_t build_id_size;
	uint8_t build_id[20];
	uint32_t maj, min;
	uint64_t ino, ino_generation;
	uint32_t prot, flags;
};

/* PERF_RECORD_COMM. */
struct pr_comm {
	const char *comm;
	/* The name changed because the task called exec. */
	bool exec;
};

/* PERF_RECORD_FORK and PERF_RECORD_EXIT. */
struct pr_task {
	uint32_t ppid, ptid;
	uint64_t time;
};

/* PERF_RECORD_LOST: `lost` samples of event `id` were dropped because the
 * ring was full.  PERF_RECORD_LOST_SAMPLES uses only `lost`. */
struct pr_lost {
	uint64_t id;
	uint64_t lost;
};

/* PERF_RECORD_THROTTLE and PERF_RECORD_UNTHROTTLE. */
struct pr_throttle {
	uint64_t time;
	uint64_t id;
	uint64_t stream_id;
};

struct pr_record {
	/* enum pr_record_type, or another PERF_RECORD_* value. */
	uint32_t type;
	/* perf_event_header.misc: cpumode and per-type flags. */
	uint16_t misc;
	/* Size of the raw record in bytes. */
	uint16_t size;
	/* The CPU whose ring held the record; -1 for records that did not
	 * come from a ring. */
	int32_t ring_cpu;
	/* Identity (PERF_SAMPLE_TID/TIME/ID/STREAM_ID/CPU).  For samples these
	 * are the sample's own fields; for other records they come from
	 * sample_id_all, or from the record body (pid, tid of MMAP, COMM, FORK
	 * and EXIT).  `fields` (enum pr_id_fields) says which are present. */
	uint32_t fields;
	uint32_t pid, tid;
	uint64_t time;
	uint64_t id;
	uint64_t stream_id;
	uint32_t cpu;
	/* The raw record, header included. */
	const void *raw;
	union {
		struct pr_sample sample;
		struct pr_mmap mmap;
		struct pr_comm comm;
		struct pr_task task;
		struct pr_lost lost;
		struct pr_throttle throttle;
	} u;
};

/*
 * The value of register `reg` in a sample, through `val`.  Returns 0, or
 * -ENOENT when the sample does not hold that register.  Thread-safe.
 */
PR_API int pr_sample_reg(const struct pr_sample *s, enum pr_reg reg,
			 uint64_t *val);

/*
 * Parse a CPU list in the kernel's format ("0-3,8,10-11") into `cpus`,
 * sorted and without duplicates.  Returns the number of CPUs, -EINVAL for a
 * malformed list, or -E2BIG when more than `max` CPUs are listed.
 * Thread-safe.
 */
PR_API int pr_parse_cpu_list(const char *s, int *cpus, size_t max);

/* The record type's name ("SAMPLE", "MMAP2", ...), or "UNKNOWN". */
PR_API const char *pr_record_type_name(uint32_t type);

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
	 * PR_DEFAULT_RING_PAGES, more (up to 4x) for stack copies over
	 * 8 KiB so that a ring holds about 250 samples, or less to fit
	 * perf_event_mlock_kb (see there). */
	uint32_t ring_pages;
	/* Where diagnostics go; may be NULL (they are dropped). */
	pr_log_fn log;
	void *log_ctx;
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
 * exited tasks, without which it would stay readable.
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
typedef int (*pr_record_fn)(const struct pr_record *rec, void *ctx);
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

/* The launched command's pid, or -1 for other targets. */
PR_API pid_t pr_reader_child(const struct pr_reader *r);

/*
 * The perf_event_attr the events were opened with (for writing files).
 * Valid as long as the reader.
 */
PR_API const struct perf_event_attr *pr_reader_attr(const struct pr_reader *r);

/* Number of rings, and the CPU ring `idx` belongs to. */
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
 * The kernel ids of the reader's events (what PERF_SAMPLE_IDENTIFIER
 * carries), for writing files: up to `max` into `ids`.  Returns how many
 * there are.
 */
PR_API size_t pr_reader_ids(const struct pr_reader *r, uint64_t *ids, size_t max);

/* ------------------------------------------------------------------------
 * Synthesized records: what already existed when sampling started,
 * described as the kernel describes what happens later.
 *
 * Each record is handed to `cb` as a typed record (valid until it
 * returns) whose raw bytes follow `attr`'s layout: time 0 and, where
 * `attr` asks for it, a sample_id trailer naming the task and `id`.  A
 * negative return from `cb` stops and is returned.
 */

/*
 * For process `pid`: a COMM for every thread, a FORK for every thread
 * other than the main one, and an MMAP2 for every executable mapping in
 * /proc/PID/maps.  Returns 0, -ESRCH when the process is gone, or an error
 * of `cb`.
 */
PR_API int pr_synthesize_process(pid_t pid, const struct perf_event_attr *attr,
				 uint64_t id, pr_record_fn cb, void *ctx);

/* The same for every process on the system (those that exit meanwhile are
 * skipped). */
PR_API int pr_synthesize_system(const struct perf_event_attr *attr, uint64_t id,
				pr_record_fn cb, void *ctx);

/*
 * An MMAP of the kernel's text ("[kernel.kallsyms]_text", pid -1), as perf
 * record writes, so kernel addresses resolve.  Returns 0 without a record
 * when /proc/kallsyms hides addresses (kernel.kptr_restrict).
 */
PR_API int pr_synthesize_kernel(const struct perf_event_attr *attr, uint64_t id,
				pr_record_fn cb, void *ctx);

/* ------------------------------------------------------------------------
 * The process model: every process's mappings and threads, kept current
 * from MMAP, MMAP2, FORK, EXIT, COMM and SAMPLE records applied in
 * timestamp order (a file's records come in that order; so do synthesized
 * ones, at time 0).  After an exec, the old image's mappings stay behind
 * the new one's, for samples taken inside exec, until a SAMPLE shows the
 * new image running: feed it samples too, each before it is unwound.
 * Mapped files (DSOs) are shared by every process that maps them.
 * Not thread-safe.
 */

struct pr_model;
struct pr_dso;

PR_API struct pr_model *pr_model_new(void);
/* Accepts NULL. */
PR_API void pr_model_free(struct pr_model *m);

/* Apply one record (samples included); other record types are ignored.
 * Returns 0, -EINVAL or -ENOMEM. */
PR_API int pr_model_apply(struct pr_model *m, const struct pr_record *rec);

/* A thread's name (its COMM, or its creator's), or NULL when the model
 * has not seen the thread; "swapper" for thread 0, the idle task, as perf
 * calls it.  Valid until the next pr_model_apply(). */
PR_API const char *pr_model_comm(const struct pr_model *m, uint32_t tid);

/*
 * Tell the model the build-id of the file at `path`, as a perf.data file's
 * BUILD_ID feature records, so it can be found by build-id wherever this
 * machine keeps it.  Applies to mappings of that path seen before and
 * after.  Returns 0, -EINVAL or -ENOMEM.
 */
PR_API int pr_model_set_build_id(struct pr_model *m, const char *path,
				 const uint8_t *id, size_t len);

/* A mapped file's path as the mapping record names it, and its build-id
 * (returns the length, 0 when unknown).  Valid as long as the model. */
PR_API const char *pr_dso_path(const struct pr_dso *d);
PR_API size_t pr_dso_build_id(const struct pr_dso *d, const uint8_t **id);

/* ------------------------------------------------------------------------
 * perf.data files
 */

struct pr_writer;

struct pr_writer_opts {
	size_t sz;
	/* The command line recorded in the file (perf's CMDLINE feature). */
	int argc;
	char *const *argv;
	pr_log_fn log;
	void *log_ctx;
};

/*
 * Create `path` (truncating it) as a perf.data file for records of events
 * opened with `attr`, whose kernel ids are `ids` (pr_reader_ids()).  The
 * header is written at once, so a recorder killed later leaves a file that
 * pr_file_open() still reads up to its last complete record.  NULL with
 * errno set (and a log message) on failure.
 */
PR_API struct pr_writer *pr_writer_open(const char *path,
					const struct perf_event_attr *attr,
					const uint64_t *ids, size_t nr_ids,
					const struct pr_writer_opts *opts);

/*
 * Append a record (its raw bytes).  The writer also follows mappings and
 * samples, to list in the file the build-id of every mapped file a sample
 * landed in.  Returns 0 or the negative errno of a failed write (logged
 * once; later calls return it too).
 */
PR_API int pr_writer_write(struct pr_writer *w, const struct pr_record *rec);

/*
 * Mark the end of a drain of every ring: perf sorts records only within
 * the rounds these delimit.  Also pushes buffered records to the file.
 */
PR_API int pr_writer_finish_round(struct pr_writer *w);

/*
 * Finish the file: the feature sections (build-ids, host name, OS release,
 * architecture, CPUs, command line, event description, sample times) and
 * the final header.  Frees the writer whatever happens; returns 0 or the
 * first error the writer met.
 */
PR_API int pr_writer_close(struct pr_writer *w);

struct pr_file;

struct pr_file_opts {
	size_t sz;
	pr_log_fn log;
	void *log_ctx;
};

/*
 * Open a perf.data file written by dwarfsample or by perf record
 * (little-endian, x86-64; other files are refused with a message saying
 * why).  Records are handed out in timestamp order, in one pass over the
 * file, whatever its size.  A file whose recorder did not finish (data size
 * 0, or truncated) is read up to its last complete record, with a warning.
 * A malformed header, attr or id section is refused at once: NULL, errno
 * EBADMSG (or the I/O error), and a log message naming the byte offset; a
 * malformed record header is reported the same way when reading reaches it
 * (pr_file_read() returns -EBADMSG, then hands out what was read before it).
 * pr_file_open_mem() reads a file already in memory, which must outlive the
 * pr_file.
 */
PR_API struct pr_file *pr_file_open(const char *path, const struct pr_file_opts *opts);
PR_API struct pr_file *pr_file_open_mem(const void *buf, size_t len,
					const struct pr_file_opts *opts);
PR_API void pr_file_close(struct pr_file *f);

/*
 * Pull the next record in timestamp order (ring_cpu is -1).  Returns 1, 0
 * at the end, or -EBADMSG: for a record whose body does not match its
 * event (logged with its byte offset and skipped; the next call goes on),
 * or once for a corrupt record header, past which nothing can be trusted
 * (the next calls hand out the records read before it, then return 0).
 * The record is valid until the next call on `f`.
 */
PR_API int pr_file_read(struct pr_file *f, struct pr_record *rec);

/* Push every remaining record to `cb`, as pr_reader_consume() does for
 * rings.  Returns the number of records, or the first negative return of
 * `cb`; -EBADMSG after skipping corrupt records. */
PR_API int pr_file_consume(struct pr_file *f, pr_record_fn cb, void *ctx);

/* Start again from the first record. */
PR_API void pr_file_rewind(struct pr_file *f);

/* The events the file holds. */
PR_API size_t pr_file_nr_attrs(const struct pr_file *f);
PR_API const struct perf_event_attr *pr_file_attr(const struct pr_file *f,
						   size_t idx);
/* The event record `rec` (read from `f`) belongs to: its index for
 * pr_file_attr(); -ENOENT when it matches none, -EINVAL. */
PR_API int pr_file_event_of(const struct pr_file *f, const struct pr_record *rec);
/* An event's name as the recording gave it ("cpu-clock", "cycles:ppp":
 * perf's EVENT_DESC), else as perf names it from its attr; NULL for an
 * index past the last. */
PR_API const char *pr_file_event_name(struct pr_file *f, size_t idx);

enum pr_file_string {
	PR_FILE_HOSTNAME,
	PR_FILE_OSRELEASE,
	PR_FILE_VERSION,
	PR_FILE_ARCH,
	PR_FILE_CPUDESC,
};

/* A string feature of the file, or NULL when it has none. */
PR_API const char *pr_file_string(const struct pr_file *f, enum pr_file_string which);

/* The CPU counts recorded (NRCPUS); -ENOENT when absent. */
PR_API int pr_file_nr_cpus(const struct pr_file *f, uint32_t *available,
			   uint32_t *online);

/* The command line that made the file; returns argc, argv through *argv. */
PR_API size_t pr_file_cmdline(const struct pr_file *f, const char *const **argv);

/* A build-id the file records for a mapped file (BUILD_ID feature). */
struct pr_build_id {
	int32_t pid;              /* -1: the host */
	uint16_t cpumode;         /* PERF_RECORD_MISC_USER or _KERNEL */
	uint8_t size;
	uint8_t id[PR_BUILD_ID_MAX];
	const char *filename;
};

PR_API size_t pr_file_nr_build_ids(const struct pr_file *f);
PR_API const struct pr_build_id *pr_file_build_id(const struct pr_file *f,
						  size_t idx);

/* Counters of the file's records: complete once every record has been
 * read (pr_file_read() returned 0), of what has been read before that. */
struct pr_file_stats {
	size_t sz;
	uint64_t records;
	uint64_t samples;
	/* Sum of PERF_RECORD_LOST.lost. */
	uint64_t lost;
	uint64_t first_sample_time, last_sample_time;
	/* Records by type, indexed by enum pr_record_type; others in [0]. */
	uint64_t by_type[PR_RECORD_KERNEL_MAX];
	/* The recorder did not finish: read up to the last complete record. */
	bool truncated;
};

PR_API int pr_file_stats(const struct pr_file *f, struct pr_file_stats *st);

/* Tell `m` every build-id `f` records (pr_model_set_build_id()). */
PR_API int pr_model_use_file(struct pr_model *m, const struct pr_file *f);

#ifdef __cplusplus
}
#endif

#endif /* PERFREADER_H */
