/* SPDX-License-Identifier: Apache-2.0 */
/*
 * prpython.h - CPython in a running process: which one, found from its
 * mappings and read from its files (never from its name), and its perf
 * trampoline turned on from outside, as sys.activate_stack_trampoline()
 * does from inside, so that its Python functions are named in the perf
 * map /tmp/perf-PID.map without restarting it.
 */
#ifndef PRPYTHON_H
#define PRPYTHON_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "prcommon.h"

#ifdef __cplusplus
extern "C" {
#endif

/* A CPython found in a process (a value: it points at nothing). */
struct pr_python {
	size_t sz;                  /* set by the caller: sizeof(struct pr_python) */
	/* Its version, as its file says: the value of its Py_Version
	 * (3.11 and later), else the version string it carries. */
	unsigned major, minor, micro;
	/* In a shared library (libpython3.X.so), not the executable. */
	bool shared;
	/* The file, as the process's mappings name it (cut to fit). */
	char path[512];
	/* When none was found: a file named as CPython's (libpython3.X.so,
	 * python3.X) without CPython's symbols -- stripped of them, or not
	 * CPython; else empty. */
	char unconfirmed[512];
};

/*
 * The CPython process `pid` runs, into *py: 1 when found, 0 when the
 * process maps none (py->unconfirmed may name a file that looked like
 * one), or a negative errno (-ESRCH: no such process; -EACCES: its
 * mappings may not be read).  The files are read through the process's
 * /proc entries (/proc/PID/map_files, /proc/PID/root), as it sees them.
 * Thread-safe.
 */
PR_API int pr_python_find(uint32_t pid, struct pr_python *py);

/* What pr_python_activate() found or did. */
enum pr_python_state {
	/* The trampoline was on already (its perf map open): nothing done. */
	PR_PYTHON_ALREADY_ACTIVE,
	/* Turned on: the process was seen opening its perf map. */
	PR_PYTHON_ACTIVATED,
	/* Asked for, but not seen within the wait: the process's main
	 * thread has not run Python code since (blocked in a system call, or
	 * in C code).  It turns on when that thread next runs Python code. */
	PR_PYTHON_REQUESTED,
};

struct pr_python_activate_opts {
	size_t sz;
	/* How long to wait for the trampoline to turn on, in seconds
	 * (default 2). */
	double wait;
	pr_log_fn log;
	void *log_ctx;
};

struct pr_python_activation {
	size_t sz;                  /* set by the caller */
	struct pr_python python;    /* the CPython found (its sz is set) */
	enum pr_python_state state;
	/* The perf map, as the process names it: /tmp/perf-N.map, N its pid
	 * in its own pid namespace. */
	char map[64];
	/* Seconds from the request until the map was seen open. */
	double waited;
};

/*
 * Turn on CPython's perf trampoline in process `pid` (CPython 3.12 or
 * later), as sys.activate_stack_trampoline("perf") does: one of its
 * threads is stopped with ptrace (PTRACE_SEIZE, PTRACE_INTERRUPT) for
 * about a millisecond at most (0.07 to 1.2 ms measured on 2 CPUs;
 * the log says, at debug level), made to map one page of
 * memory holding the Python statement and to call
 * Py_AddPendingCall(PyRun_SimpleString, statement), and put back exactly
 * as it was (a system call it was blocked in is restarted, signals that
 * arrived meanwhile are delivered after).  The interpreter's main thread
 * then runs the statement at its next check for pending calls, holding
 * the GIL: it turns the trampoline on unless it is on already, and
 * swallows any exception.  The page stays mapped (4 KiB).  The trampoline
 * stays on after the call: sys.deactivate_stack_trampoline() in the
 * process turns it off.
 *
 * Waits up to opts->wait for the process to open its perf map.  Returns
 * 0 with *out filled, or a negative errno, why in the log: -ESRCH (no
 * such process, or it exited), -ENOENT (no CPython in it; out->python
 * says what was found), -EPROTONOSUPPORT (CPython before 3.12: no
 * trampoline; out->python has its version), -ENOEXEC (its symbols
 * Py_AddPendingCall and PyRun_SimpleString not found: a stripped file),
 * -EPERM (ptrace refused: Yama's kernel.yama.ptrace_scope, no
 * CAP_SYS_PTRACE, a process of another user), -EBUSY (another tracer
 * is attached), -EAGAIN (the process is stopped), -ETIMEDOUT (the call
 * did not return within a second; the thread was put back),
 * -EOPNOTSUPP (not x86-64).  Not thread-safe against other tracing of
 * the same process.
 */
PR_API int pr_python_activate(uint32_t pid, const struct pr_python_activate_opts *opts,
			      struct pr_python_activation *out);

/* Whether the perf trampoline of CPython process `pid` is on now (its perf
 * map open): 1 or 0, or a negative errno (-ESRCH: gone). */
PR_API int pr_python_active(uint32_t pid);

#ifdef __cplusplus
}
#endif

#endif /* PRPYTHON_H */
