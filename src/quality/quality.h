/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The quality stage (prquality.h), internal: quality.c counts unwound
 * samples by where and why their stacks ended and prints the report;
 * remedy.c says, per row, what would fix it, from what the system says
 * (dpkg's database, /etc/os-release, the files at hand).  Downstream of
 * the unwinder and the symbolizer, whose results it counts, and of the
 * session, whose sink it is; nothing includes this header but these two.
 */
#ifndef PR_QUALITY_INT_H
#define PR_QUALITY_INT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "base/base.h"
#include "prquality.h"

/* Rows' reasons: how stacks end (enum pr_stack_end), frames unnamed,
 * stacks the capture thread's copy cut too short (pr_sink_sample),
 * stacks whose copy the kernel ended before the size asked for, and
 * call chains the kernel's depth limit ended. */
#define PR_QUALITY_UNNAMED PR_END_MAX
#define PR_QUALITY_CUT_SHORT (PR_END_MAX + 1)
#define PR_QUALITY_KERNEL_SHORT (PR_END_MAX + 2)
/* A user call chain the kernel stopped at its depth limit. */
#define PR_QUALITY_CHAIN_DEPTH (PR_END_MAX + 3)
/* auto: the copy ran out, and the call chain that went on from it
 * stopped at code that keeps no frame pointer. */
#define PR_QUALITY_NO_FP (PR_END_MAX + 4)
/* A stack that reached an address no mapping holds: not JIT code (that
 * is anonymous memory, PR_END_NO_MAPPING), a return address that was
 * none (a thread begun by a raw clone(), a damaged stack). */
#define PR_QUALITY_UNMAPPED (PR_END_MAX + 5)

struct pr__quality_row {
	const struct pr_dso *dso;    /* NULL: no file mapping */
	char process[16];            /* for code in no file: whose */
	/* For code in no file nothing names: the first process's pid, the
	 * runtime it maps (enum pr__runtime) and a CPython's minor version. */
	uint32_t pid;
	uint8_t runtime, minor;
	uint8_t why;
	/* Stacks the copy ended (pr__quality_copy_ended()): of switch-out
	 * samples, whose copy is the off-CPU event's own. */
	bool off_cpu;
	uint64_t n;
};

/* JIT code unnamed when sampled, by (pid, address), for a second look
 * at the end of the run (its jitdump may be written only then). */
struct pr__quality_jit {
	uint32_t pid;
	uint64_t ip, n;
	const struct pr_dso *dso;
	char process[16];
	struct pr__quality_jit *next;  /* the same hash */
};

struct pr_quality {
	struct pr__quality_row *rows;
	size_t nr, cap;
	struct pr_hashmap jit;       /* hash -> struct pr__quality_jit (chained) */
	struct pr_symbolizer *sym;   /* the share's worker's, as samples say */
	uint64_t samples, ended_early, joined;
	uint64_t frames, unnamed;
	uint64_t stack_size, off_cpu_stack_size;
	uint32_t max_depth;
};

/* The caller's names of the settings a remedy mentions, each resolved
 * to the library's words where the caller gave none. */
struct pr__quality_words {
	const char *stack_size, *debug_dir, *max_depth, *log, *kernel, *python;
	const char *off_cpu_stack_size;
};

/* Whether rows of reason `why` say what the stack copy did: those of
 * switch-out samples, whose copy is another size, are rows of their own. */
static inline bool pr__quality_copy_ended(unsigned why)
{
	return why == PR_END_TRUNCATED || why == PR_QUALITY_KERNEL_SHORT || why == PR_QUALITY_NO_FP;
}

/* The bytes of stack a sample asked the kernel to copy: a switch-out
 * sample's (`off_cpu`) are the off-CPU event's (0: unknown). */
static inline uint64_t pr__quality_asked(const struct pr_quality *q, bool off_cpu)
{
	return off_cpu ? q->off_cpu_stack_size : q->stack_size;
}

/* ---- remedy.c ---- */

/* Whether a frame's file is one (a mapped file, not anonymous memory). */
bool pr__quality_is_file(const struct pr_dso *dso);

/* What would fix row `r` of `q`, into `buf` (empty when nothing is said). */
void pr__quality_remedy(const struct pr_quality *q, const struct pr__quality_row *r,
			const struct pr__quality_words *w, char *buf, size_t len);

#endif
