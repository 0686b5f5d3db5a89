/* SPDX-License-Identifier: Apache-2.0 */
/*
 * prrecord.h - the typed records the live reader and perf.data files hand
 * out: samples, mappings, tasks, and the registers a sample carries.
 */
#ifndef PRRECORD_H
#define PRRECORD_H

#include "prcommon.h"

#ifdef __cplusplus
extern "C" {
#endif

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
	/* The events the sample stands for: from the sample, or, when the
	 * event does not record it, its attr's fixed period (0 when the
	 * attr sampled by frequency). */
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
	/* PERF_SAMPLE_READ: the counts when the sample was taken, of the
	 * sampled event's group (PERF_FORMAT_GROUP) or of the event alone:
	 * nr_read values of read_stride u64s from `read` (pr_sample_read()).
	 * The times are 0 when the format lacks them; `read` is NULL and
	 * nr_read 0 without PERF_SAMPLE_READ.  `read_id_offset`: where a
	 * value's id sits, in u64s past the value (0: the format has no
	 * PERF_FORMAT_ID); without PERF_FORMAT_GROUP the times come between
	 * the two, so only the parser knows. */
	uint64_t read_time_enabled, read_time_running;
	const uint64_t *read;
	uint32_t nr_read, read_stride;
	uint32_t read_id_offset;
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

/*
 * PERF_RECORD_SWITCH and PERF_RECORD_SWITCH_CPU_WIDE (attr.context_switch):
 * the task named by the record's pid/tid (sample_id_all) left the CPU
 * (`out`) or came back to it.  `preempt`: it left while still runnable
 * (PERF_RECORD_MISC_SWITCH_OUT_PREEMPT), rather than to wait.  CPU-wide
 * records also name the other task: the next one for a switch out, the
 * previous one for a switch in (0 for SWITCH records).
 */
/*
 * A switch out that no kernel wrote: pr_blocked_synthesize() found its
 * thread already off the CPU when sampling started.  Its wait began
 * before the record's time, which is when sampling started.  Bit 12 of
 * misc is one the kernel leaves unused on switch records (perf's own
 * tools use it only on the MMAP records they synthesize).
 */
#define PR_RECORD_MISC_SWITCH_BEFORE_START (1u << 12)

struct pr_switch {
	bool out;
	bool preempt;
	uint32_t next_prev_pid, next_prev_tid;
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
		struct pr_switch sw;
	} u;
};

/*
 * The value of register `reg` in a sample, through `val`.  Returns 0,
 * -ENOENT when the sample (or a NULL one) does not hold that register, or
 * -EINVAL for a NULL `val`.  Thread-safe.
 */
PR_API int pr_sample_reg(const struct pr_sample *s, enum pr_reg reg,
			 uint64_t *val);

/*
 * Value `i` of a sample's read values (PERF_SAMPLE_READ) through `value`,
 * and its event id through `id` (0 when the read_format lacks
 * PERF_FORMAT_ID); either may be NULL.  Returns 0, or -ERANGE for `i` at
 * or past nr_read (and for a NULL sample).  Thread-safe.
 */
PR_API int pr_sample_read(const struct pr_sample *s, uint32_t i, uint64_t *value,
			  uint64_t *id);

/* The record type's name ("SAMPLE", "MMAP2", ...), or "UNKNOWN".  A static
 * string.  Thread-safe. */
PR_API const char *pr_record_type_name(uint32_t type);

/* Receives one record, valid until it returns (push-style delivery: live
 * rings, synthesis, perf.data files).  A negative return stops the
 * delivery and is returned by the call that made it. */
typedef int (*pr_record_fn)(const struct pr_record *rec, void *ctx);

#ifdef __cplusplus
}
#endif

#endif /* PRRECORD_H */
