/* SPDX-License-Identifier: Apache-2.0 */
/*
 * prquality.h - why a profile is incomplete, and where: the stacks that
 * did not reach their outermost frame, counted by the binary they ended
 * in and the reason (enum pr_stack_end, and three of this header's: a
 * copy cut too short by a live capture, a page the kernel could not
 * copy, frames nothing names), and the binaries whose frames nothing
 * names -- written as a report, each row with what would fix it.
 *
 * The remedies look at the system the report is written on, on the
 * thread that writes it:
 *  - the distribution's debug package of a file, where Debian's package
 *    database says which package installed it: the file lists of
 *    /var/lib/dpkg/info (PKG-dbgsym; libc6-dbg for libc6), those named
 *    like the file read first; nothing is said without dpkg;
 *  - the build-id path such a package installs the debug file at
 *    (/usr/lib/debug/.build-id/xx/rest.debug), and whether it is there
 *    already (then no package is named);
 *  - whether the file itself can be read here (a report on another
 *    machine's recording);
 *  - the distribution's debuginfod server, from the ID of
 *    /etc/os-release (Debian, Ubuntu, Fedora, Arch).
 *
 * The conventions written at the top of perfreader.h hold.
 */
#ifndef PRQUALITY_H
#define PRQUALITY_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "prcommon.h"
#include "prrecord.h"
#include "prsession.h"
#include "prsym.h"
#include "prunwind.h"

#ifdef __cplusplus
extern "C" {
#endif

struct pr_quality;

struct pr_quality_opts {
	size_t sz;
	/* The bytes of stack each sample asked the kernel to copy
	 * (perf_event_attr.sample_stack_user; 0: unknown).  A copy that
	 * ran out having got less is a page missing, not a copy too
	 * small. */
	uint64_t stack_size;
	/* The unwinder's frame limit (pr_unwinder_opts.max_depth); 0:
	 * PR_UNWIND_DEFAULT_DEPTH. */
	uint32_t max_depth;
	/* The bytes of stack each switch-out sample of the off-CPU event
	 * asked to copy (pr_reader_opts.off_cpu's stack_size; 0: unknown):
	 * as `stack_size`, for the stacks of waits (pr_sink_sample.off_cpu),
	 * whose rows of copies that ran out are their own. */
	uint64_t off_cpu_stack_size;
};

/* Empty counts; `opts` may be NULL.  NULL with errno set on failure
 * (EINVAL: unknown options; ENOMEM). */
PR_API struct pr_quality *pr_quality_new(const struct pr_quality_opts *opts);
/* Accepts NULL. */
PR_API void pr_quality_free(struct pr_quality *q);

/*
 * Count sample `rec`, unwound to `st` (pr_unwinder_unwind()), of a
 * process called `process` (may be NULL): its user frames named through
 * `sym` (NULL: frames not counted, none said unnamed); `cut_short`: its
 * copy was cut too short by the capture (pr_sink_sample.cut_short).
 * A sample counted here is a CPU sample (its copy of `stack_size`
 * bytes); the session's sink (pr_quality_sink()) tells switch-out
 * samples apart.
 * The rows keep the frames' files (struct pr_dso), not copies: the model
 * they came from must outlive every later call on `q` but
 * pr_quality_free().  Returns 0, -EINVAL (NULL), or -ENOMEM.
 */
PR_API int pr_quality_add(struct pr_quality *q, const struct pr_record *rec,
			  const struct pr_stack *st, struct pr_symbolizer *sym,
			  const char *process, bool cut_short);

/* Add what `src` counted (another worker's share) to `q`: a row of the
 * same file (the same object, or the same path from another model),
 * reason and process adds to the row already there.  The files of src's
 * rows must outlive q as pr_quality_add() says.  Returns 0, -EINVAL
 * (NULL), or -ENOMEM (q then has part of src). */
PR_API int pr_quality_merge(struct pr_quality *q, const struct pr_quality *src);

/*
 * The counts as a session's sink (prsession.h), into `out`: every sample
 * the session unwinds is added (pr_quality_add()), each worker into a
 * share of its own, merged into `q` when the session finishes.  `q` must
 * outlive the session's run; the session's models must outlive q's last
 * report (its rows name their files), so its models must have no cache
 * (pr_sink says why).  Returns 0 or -EINVAL (NULL).
 */
PR_API int pr_quality_sink(struct pr_quality *q, struct pr_sink *out);

struct pr_quality_report_opts {
	size_t sz;
	/* Written before every line (NULL: none). */
	const char *prefix;
	/* At most this many rows of each table (0: all). */
	size_t max_rows;
	/* Rows under this many thousandths of the samples (or, in the
	 * table of frames, of the frames) are left out (0: none). */
	unsigned permille;
	/* How the caller names the settings the remedies tell it to
	 * change, as its own interface spells them ("--stack-size" makes
	 * "a larger --stack-size"); NULL: the library's words.  The size
	 * of the stack copy, pr_event_opts.stack_size ("stack size", in "a
	 * larger ..."); a directory of debug files, pr_model_opts.debug_dirs
	 * ("debug directory", in "in a ..." and "pass ..."); the
	 * unwinder's frame limit, pr_unwinder_opts.max_depth ("the frame
	 * limit", in "deeper than ... 127"); the messages at PR_LOG_INFO
	 * ("the log", in "(... says why)"); the kernel's call chains,
	 * pr_event_opts.kernel_callchain ("sampling kernel call chains",
	 * in "... shows their kernel stacks"). */
	const char *stack_size_name, *debug_dir_name, *max_depth_name, *log_name,
		*kernel_name;
	/* Turning CPython's perf trampoline on in a running process,
	 * pr_python_activate() ("turning its perf trampoline on from
	 * outside", in "..., or ... in a running one"). */
	const char *python_name;
	/* The size of the switch-out samples' stack copy,
	 * pr_quality_opts.off_cpu_stack_size ("off-CPU stack size", in "a
	 * larger ..."): what the remedies of waits' stacks name. */
	const char *off_cpu_stack_size_name;
};

/*
 * The report, to `out` (the caller's; not flushed): "stacks that ended
 * early, by binary and why:" and "frames nothing names, by binary:",
 * each followed by its rows, most first, each row two lines -- the count,
 * its share, the reason and the file (code in no file: the process it
 * is in), then the remedy.  A table without rows is not written.  The
 * remedies read the system's files (the top of this header says which).
 * `opts` may be NULL.  Returns the number of rows written (0: every
 * stack counted was complete and every frame named), -EINVAL (NULL, or
 * unknown options) or -ENOMEM.  A failed write is left in out's error
 * flag (ferror()).
 */
PR_API int pr_quality_report(const struct pr_quality *q, FILE *out,
			     const struct pr_quality_report_opts *opts);

#ifdef __cplusplus
}
#endif

#endif /* PRQUALITY_H */
