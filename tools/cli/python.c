/* SPDX-License-Identifier: Apache-2.0 */
/*
 * --python: CPython's perf trampoline on, so that its Python functions
 * are named (py::NAME:FILE, from its perf map).  On -p PID, turned on in
 * each running process (prpython.h) before sampling, and left on; on
 * -- CMD, PYTHONPERFSUPPORT=1 in the command's environment.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "prpython.h"

/* What was done to each -p process, for the summary. */
static struct {
	pid_t pid;
	int err;
	struct pr_python_activation act;
} done[DS_MAX_PIDS];
static size_t nr_done;
static bool env_set;

/* "CPython 3.13.5, /usr/lib/x86_64-linux-gnu/libpython3.13.so.1.0" */
static void describe(const struct pr_python *py, char *buf, size_t len)
{
	snprintf(buf, len, "CPython %u.%u.%u, %s", py->major, py->minor, py->micro, py->path);
}

/* What works instead of CPython <= 3.11, after its version. */
static void say_too_old(pid_t pid, const struct pr_python *py)
{
	char what[600];

	describe(py, what, sizeof(what));
	ds_err("python: pid %d runs %s, which has no perf trampoline (CPython 3.12 added "
	       "it): its Python functions cannot be named, only the interpreter's C "
	       "functions (_PyEval_EvalFrameDefault), and no debug package changes that.  "
	       "Python 3.12 or later names them: start it with -X perf (or "
	       "PYTHONPERFSUPPORT=1 in its environment), or give --python on a running one",
	       (int)pid, what);
}

static void activate(pid_t pid)
{
	PR_OPTS(pr_python_activate_opts, o, .log = ds_log);
	struct pr_python_activation *a = &done[nr_done].act;
	char what[600];
	int err;

	a->sz = sizeof(*a);
	err = pr_python_activate((uint32_t)pid, &o, a);
	done[nr_done].pid = pid;
	done[nr_done++].err = err;
	describe(&a->python, what, sizeof(what));
	switch (err) {
	case 0:
		break;
	case -ENOENT:
		if (*a->python.unconfirmed)
			ds_err("python: pid %d runs no CPython: %s is named as CPython's but has "
			       "none of its symbols (stripped of them, or not CPython); --python "
			       "does nothing to it", (int)pid, a->python.unconfirmed);
		else
			ds_err("python: pid %d runs no CPython (no libpython3.X and no executable "
			       "with CPython's symbols in its mappings); --python does nothing to "
			       "it", (int)pid);
		return;
	case -EPROTONOSUPPORT:
		say_too_old(pid, &a->python);
		return;
	default:
		/* The library said why. */
		ds_err("python: the perf trampoline of pid %d was not turned on; it runs on as "
		       "it was, sampled without its Python functions' names", (int)pid);
		return;
	}
	if (a->state == PR_PYTHON_ALREADY_ACTIVE) {
		fprintf(stderr, "dwarfsample: python: pid %d (%s): its perf trampoline is on "
			"already (%s open): nothing done\n", (int)pid, what, a->map);
		return;
	}
	if (a->state == PR_PYTHON_ACTIVATED)
		fprintf(stderr, "dwarfsample: python: pid %d (%s): perf trampoline turned on "
			"(sys.activate_stack_trampoline('perf') run by its main thread; %s "
			"opened %.2f s after the request).  It stays on after this run: "
			"sys.deactivate_stack_trampoline() in the process turns it off\n",
			(int)pid, what, a->map, a->waited);
	else
		fprintf(stderr, "dwarfsample: python: pid %d (%s): perf trampoline asked for, "
			"not on after %.1f s: its main thread has not run the request yet "
			"(it runs it the next time it runs Python code: it may be blocked in "
			"a system call, or in C code), or turning it on failed in the "
			"process.  Once on, it stays on: sys.deactivate_stack_trampoline() in "
			"the process turns it off\n", (int)pid, what, a->waited);
}

int ds_python_prepare(const struct ds_capture *c)
{
	if (!c->python)
		return 0;
	if (c->argv) {
		if (setenv("PYTHONPERFSUPPORT", "1", 1)) {
			ds_err("--python: setting PYTHONPERFSUPPORT: %s", strerror(errno));
			return -1;
		}
		env_set = true;
		return 0;
	}
	for (size_t i = 0; i < c->nr_pids && nr_done < DS_MAX_PIDS; i++)
		activate(c->pids[i]);
	return 0;
}

void ds_python_summary(FILE *out, const char *prefix)
{
	if (env_set)
		fprintf(out, "%spython: the command ran with PYTHONPERFSUPPORT=1 (--python): "
			"CPython 3.12 and later name their Python functions in /tmp/perf-PID.map\n",
			prefix);
	for (size_t i = 0; i < nr_done; i++) {
		int on;

		if (done[i].err || done[i].act.state != PR_PYTHON_REQUESTED)
			continue;
		on = pr_python_active((uint32_t)done[i].pid);
		fprintf(out, "%spython: pid %d's perf trampoline %s\n", prefix, (int)done[i].pid,
			on > 0 ? "came on during the run (what ran before it did is not named)"
			: on < 0 ? "had not come on when the process exited"
			: "had not come on by the end of the run");
	}
	for (size_t i = 0; i < nr_done; i++)
		if (!done[i].err && done[i].act.state == PR_PYTHON_ACTIVATED)
			fprintf(out, "%spython: pid %d's perf trampoline was turned on by --python "
				"and stays on\n", prefix, (int)done[i].pid);
}
