/* SPDX-License-Identifier: Apache-2.0 */
/*
 * prunwind.h - user stacks from register and stack snapshots, unwound with
 * DWARF call-frame information through libunwind's remote interface.
 *
 * An unwinder works on a process model (prmodel.h): feed the model
 * every record in timestamp order, samples included, and unwind each
 * sample after the model has seen it.  The unwinder only reads the model.
 * The conventions written at the top of perfreader.h hold.
 */
#ifndef PRUNWIND_H
#define PRUNWIND_H

#include "prcommon.h"
#include "prmodel.h"
#include "prrecord.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Default and largest number of user frames in one stack.  The default
 * was 127 until 2.1: it ended deep recursions and interpreters' stacks
 * before the copy did (BENCHMARKS.md, "The depth limit"). */
#define PR_UNWIND_DEFAULT_DEPTH 1024
#define PR_UNWIND_MAX_DEPTH 1024

/* Why a user stack ended. */
enum pr_stack_end {
	/* The outermost frame (_start, a thread's start) was reached. */
	PR_END_OUTERMOST = 0,
	/* The copied stack ran out before the outermost frame: a larger
	 * stack copy (pr_event_opts.stack_size) would have gone further. */
	PR_END_TRUNCATED,
	/* A mapped file without unwind information (or not found). */
	PR_END_NO_UNWIND_INFO,
	/* An address in no file mapping: JIT or other anonymous code. */
	PR_END_NO_MAPPING,
	/* The depth limit. */
	PR_END_DEPTH,
	/* libunwind failed (pr_stack.error holds its code), or the stack
	 * went nowhere (a frame that does not move up the stack). */
	PR_END_ERROR,
	/* The sample has no user registers: a kernel thread, or a sample the
	 * kernel could not attribute to user code. */
	PR_END_NO_USER,
	/* The stack is the sample's user call chain (PR_FRAME_CHAIN) and
	 * ended where the kernel's frame-pointer walk found no further
	 * frame: the outermost frame, or code built without frame pointers
	 * (most distributions' libc); which, the chain does not tell. */
	PR_END_CHAIN,
	PR_END_MAX,
};

enum pr_frame_flags {
	/* A kernel address, from the sample's call chain. */
	PR_FRAME_KERNEL = 1u << 0,
	/* Found by following the frame-pointer chain, where the module had
	 * no unwind information. */
	PR_FRAME_FP = 1u << 1,
	/* A signal trampoline: the frame after it is the interrupted code,
	 * whose address is exact rather than a return address. */
	PR_FRAME_SIGNAL = 1u << 2,
	/* Not unwound from this sample: the copied stack ran out, and this
	 * frame comes from an earlier stack of the same thread that passed
	 * through the last frame unwound (the same return address at the
	 * same stack address), confirmed by the sample's own user call
	 * chain (see pr_unwinder_opts.no_join). */
	PR_FRAME_JOINED = 1u << 3,
	/* From the sample's user call chain (PERF_SAMPLE_CALLCHAIN past
	 * PERF_CONTEXT_USER): the kernel walked the frame pointers, and no
	 * copy of the stack was unwound for this frame. */
	PR_FRAME_CHAIN = 1u << 4,
};

struct pr_frame {
	/* The address to attribute: exact for the sampled instruction and
	 * for code a signal interrupted; for callers, the return address
	 * minus one, so it lies in the call instruction (and its line). */
	uint64_t ip;
	/* The mapping's file ("//anon" for anonymous memory, whose code a
	 * JIT's perf map names), or NULL (kernel, no mapping).  Valid as
	 * long as the model.  With the mapping below it is all naming
	 * needs: the symbolizer does not look the process's maps up. */
	const struct pr_dso *dso;
	/* ip as perf shows it: for a mapped file, the offset into the file
	 * (ip - mapping start + mapping offset); otherwise ip itself. */
	uint64_t dso_ip;
	/* The mapping ip is in, as its MMAP record gave it, when dso is
	 * set: [map_start, map_end) maps the file from offset map_pgoff.
	 * All 0 for the kernel and for an address in no mapping. */
	uint64_t map_start, map_end, map_pgoff;
	uint32_t flags;            /* enum pr_frame_flags */
	/* For a user frame, which process it is of: the model's number for
	 * the process, new when a pid is reused or a process execs, so that
	 * what is named per process (JIT code, by its perf map) is not taken
	 * from an earlier one.  0 for kernel frames, or when not known.
	 * (Added in what was padding: the struct's size and layout stand.) */
	uint32_t proc_serial;
};

struct pr_stack {
	/* Leaf first: the kernel's frames (when the sample carries them),
	 * then the user stack.  Valid until the next unwind. */
	const struct pr_frame *frames;
	size_t nr;
	size_t nr_kernel;
	enum pr_stack_end end;
	/* For PR_END_ERROR: libunwind's (positive) error code, or 0.  For
	 * PR_END_DEPTH: the kernel's depth limit when that, not max_depth,
	 * ended a stack from the call chain; else 0. */
	int error;
};

struct pr_unwinder;

struct pr_unwinder_opts {
	size_t sz;
	/* User frames at most; default PR_UNWIND_DEFAULT_DEPTH. */
	uint32_t max_depth;
	/* The sampled processes are running on this machine (a live
	 * capture): open their files through /proc/PID/map_files (the very
	 * file mapped, even if deleted or replaced since) and
	 * /proc/PID/root (files inside containers). */
	bool live;
	/* Deprecated: give them to the model (pr_model_opts.debug_dirs),
	 * which finds the files for its unwinders and symbolizers alike.
	 * Used only when the model has none of its own: then, as in version
	 * 2.0, files are looked for in the directories any unwinder or
	 * symbolizer over the model was given. */
	const char *const *debug_dirs;
	size_t nr_debug_dirs;
	/* Do not follow frame pointers through code without unwind
	 * information. */
	bool no_frame_pointers;
	/* Step every frame through libunwind.  By default the unwinder
	 * compiles the common CFA rules once per address range and steps
	 * through those itself, leaving libunwind the frames they do not
	 * describe, with the same result; this is for checking that. */
	bool no_rule_cache;
	pr_log_fn log;
	void *log_ctx;
	/*
	 * Leave stacks cut by the copy (PR_END_TRUNCATED) as they are.  By
	 * default one is completed from the last complete stack of the same
	 * thread when that stack has a frame with the same return address
	 * at the same stack address as the cut one's outermost frame, and
	 * the sample's own user call chain (PERF_SAMPLE_CALLCHAIN past
	 * PERF_CONTEXT_USER: the kernel's frame-pointer walk, recorded
	 * with the copy) confirms every frame added: placed by the cut
	 * stack's two outermost frames, each added frame's return address
	 * is the chain's at its depth.  Where the chain ends first, the
	 * stack is completed as far as it confirms and stays
	 * PR_END_TRUNCATED.  Without a chain, or where it disagrees, there
	 * is no join: the same address alone does not tell the same
	 * activation from a new call of the same code through other
	 * callers, nor does anything else a sample's copy and registers
	 * hold (pr_unwind_stats.joins_unconfirmed counts those).  The
	 * frames added are marked PR_FRAME_JOINED.  Samples must come in
	 * time order per thread, as they do anyway.
	 */
	bool no_join;
	/*
	 * The kernel's depth limit for call chains, kernel and user entries
	 * together (perf_event_attr.sample_max_stack, or the sysctl
	 * kernel.perf_event_max_stack it defaults to): a user chain that
	 * fills it ends PR_END_DEPTH (pr_unwind_stats.chain_depth).  0: read
	 * the sysctl when `live`, else the kernel's default, 127.
	 */
	uint32_t chain_max_stack;
};

/*
 * An unwinder over `model`, which must outlive it and which the caller
 * keeps current (pr_model_apply()).  NULL with errno set on failure.  The
 * options' strings are copied.  The caller owns the unwinder and
 * releases it with pr_unwinder_free().  It opens files through the
 * model's file cache, shared with the symbolizers over the model: use
 * them all from one thread.
 */
PR_API struct pr_unwinder *pr_unwinder_new(struct pr_model *model,
					   const struct pr_unwinder_opts *opts);
/* Accepts NULL. */
PR_API void pr_unwinder_free(struct pr_unwinder *u);

/*
 * Unwind a PR_RECORD_SAMPLE.  Fills `stack` (valid until the next call on
 * `u`) and returns 0, or -EINVAL for a record that is not a sample.  A
 * sample that cannot be unwound is not an error: its stack says why it
 * ended.  A sample without a copy of its stack (perf record -g,
 * --call-graph fp or lbr) whose call chain has a user part gets that part
 * as its user stack, frames marked PR_FRAME_CHAIN: the sampled address
 * first, then return addresses attributed to their call instruction, as
 * unwound callers are.  A sample with both (--call-graph auto) is unwound
 * from its copy; where the copy cut the stack, it goes on with the chain
 * where the chain vouches for it (those frames PR_FRAME_CHAIN too; see
 * pr_unwind_stats.tail_samples), else joining may complete it (no_join).
 * Not thread-safe.
 */
PR_API int pr_unwinder_unwind(struct pr_unwinder *u, const struct pr_record *rec,
			      struct pr_stack *stack);

/*
 * How many bytes of the last unwound sample's stack the unwind read, from
 * its start (the sampled stack pointer) to the end of the highest word
 * read -- or tried to read, just past the end of the copy, when the copy
 * ran out (then more than its stack_dyn_size); 0 when it read none.  A
 * copy cut to that many bytes unwinds the same.  A thread's outermost
 * frames stay where they are while it lives, so its later stacks mostly
 * end at the same address: a live reader may copy no more of them
 * (pr_order_add_cut()), as long as it watches for one that needed more.
 * Not thread-safe.
 */
PR_API uint64_t pr_unwinder_stack_used(const struct pr_unwinder *u);

struct pr_unwind_stats {
	size_t sz;
	uint64_t samples;
	uint64_t frames;           /* user frames */
	uint64_t kernel_frames;
	uint64_t fp_frames;        /* of the user frames, found by frame pointer */
	uint64_t ends[PR_END_MAX]; /* stacks by why they ended */
	uint64_t files_opened;     /* distinct files loaded */
	uint64_t files_missing;    /* mapped files that could not be found */
	/* Samples unwound entirely from compiled rules; the others went
	 * through libunwind. */
	uint64_t fast_samples;
	/* Truncated stacks completed by joining (counted in ends[] by how
	 * they end after it), and the frames joining added, to those and to
	 * the stacks it completed only in part (still PR_END_TRUNCATED). */
	uint64_t joined;
	uint64_t joined_frames;
	/* Samples whose user stack is their call chain, the user frames
	 * that took (PR_FRAME_CHAIN), and the chains that stopped at the kernel's depth limit
	 * (pr_unwinder_opts.chain_max_stack). */
	uint64_t chain_samples;
	uint64_t chain_frames;
	uint64_t chain_depth;
	/* Truncated stacks whose outermost frame an earlier stack of the
	 * thread had, left truncated because no call chain confirmed the
	 * frames beyond it (pr_unwinder_opts.no_join). */
	uint64_t joins_unconfirmed;
	/* auto (a copy and a call chain in each sample): stacks the copy
	 * cut that the chain continued (PR_FRAME_CHAIN), and the frames it
	 * added; cut stacks whose outermost frames no chain entry matched,
	 * in return address and where it was read (left to joining); and
	 * tails stopped at a function whose CFI says it keeps no frame
	 * pointer (there, or before the chain's end: the rest of the chain
	 * is not its callers). */
	uint64_t tail_samples;
	uint64_t tail_frames;
	uint64_t tail_unmatched;
	uint64_t tail_no_fp;
	/* Frames the compiled rules stepped through that the frame cache
	 * (per return address and the process's code mappings) did not
	 * hold: mappings of data do not empty it. */
	uint64_t frame_cache_misses;
	/* Times the frame cache was emptied because the mappings its frames
	 * are in reached its bound (processes coming and going). */
	uint64_t frame_cache_resets;
	/* Not a count: the bytes of processes' jitdumps held now (read for
	 * the unwind information of their JIT code; dropped when the model
	 * forgets the process, at a trim). */
	uint64_t jitdump_bytes;
	/* Stacks whose sampled frame, in its epilogue, was stepped by its
	 * code: its CFI has registers saved below the stack pointer, out of
	 * the copy, where the step out of its caller needs them. */
	uint64_t leaf_exits;
};

/* Copy the counters; set st->sz first.  Returns 0 or -EINVAL.  A caller
 * built against version 2.0 (st->sz its size) gets 2.0's layout: ends[]
 * without PR_END_CHAIN, the counters after it where they were. */
PR_API int pr_unwinder_stats(const struct pr_unwinder *u,
			     struct pr_unwind_stats *st);

/* "outermost", "truncated", ... for messages and summaries; "unknown" past
 * the last.  Static strings.  Thread-safe. */
PR_API const char *pr_stack_end_name(enum pr_stack_end end);

#ifdef __cplusplus
}
#endif

#endif /* PRUNWIND_H */
