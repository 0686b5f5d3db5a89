/* SPDX-License-Identifier: Apache-2.0 */
/*
 * CPython's perf trampoline turned on from outside (prpython.h).
 *
 * Python code may only run on a thread holding the GIL, and a thread
 * stopped anywhere (in malloc, in the middle of bytecode) must not be
 * made to run any.  Py_AddPendingCall() is the one entry CPython gives
 * for this: callable from any thread without the GIL, it queues a
 * function that the main thread calls at its next check of the eval
 * breaker, with the GIL held.  Its function type, int (*)(void *), is
 * PyRun_SimpleString's, so the statement runs there.
 *
 * So one thread is stopped (PTRACE_SEIZE, then PTRACE_INTERRUPT: no
 * signal the process could see), made to run an mmap system call for a
 * page to hold the statement (a `syscall` instruction found in its code,
 * single-stepped), then made to call Py_AddPendingCall() on a stack area
 * below its own red zone, returning to an address in that page, which
 * is not executable: the fault stops it there, and its registers are put
 * back.  A thread stopped inside a system call has it restarted as the
 * kernel would have (the -ERESTART* codes); the injected steps run with
 * orig_rax -1 so that the kernel restarts none of them.  Signals that
 * arrive while the thread runs injected code are held and sent again
 * after it is let go.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/ptrace.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "base/base.h"
#include "capture/capture.h"
#include "model/model.h"
#include "model/pyruntime.h"

/* Turned on unless it is on already; any exception swallowed: a pending
 * call that fails makes the interpreter raise SystemError in whatever
 * code runs next.  No name is bound in __main__. */
static const char statement[] =
	"try:\n"
	"    __import__('sys').is_stack_trampoline_active() or "
	"__import__('sys').activate_stack_trampoline('perf')\n"
	"except BaseException:\n"
	"    pass\n";

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* The perf map's name as the process has it: /tmp/perf-N.map, N its
 * pid in its own pid namespace. */
static void map_name(uint32_t pid, char *buf, size_t len)
{
	char ns[32];

	if (!pr__status_field(pid, "NSpid", ns, sizeof(ns)))
		snprintf(ns, sizeof(ns), "%u", pid);
	snprintf(buf, len, "/tmp/perf-%s.map", ns);
}

/*
 * Whether `pid` has its file `path` open: 1 or 0, or -ESRCH.  By the
 * file's identity, not by the fds' link text: that names the file as
 * our root sees it, which is another path for a process in a chroot or
 * a mount namespace of its own.
 */
static int has_open(uint32_t pid, const char *path)
{
	char dir[64], link[384];
	struct stat want, st;
	struct dirent *e;
	int fd = pr__open_in_root(pid, path, O_PATH), found = 0;
	DIR *d;

	if (fd < 0)
		return kill((pid_t)pid, 0) && errno == ESRCH ? -ESRCH : 0;
	if (fstat(fd, &want) || !S_ISREG(want.st_mode)) {
		close(fd);
		return 0;
	}
	close(fd);
	snprintf(dir, sizeof(dir), "/proc/%u/fd", pid);
	if (!(d = opendir(dir)))
		return errno == ENOENT ? -ESRCH : -errno;
	while (!found && (e = readdir(d))) {
		if (e->d_name[0] == '.')
			continue;
		snprintf(link, sizeof(link), "%s/%s", dir, e->d_name);
		found = !stat(link, &st) && st.st_dev == want.st_dev && st.st_ino == want.st_ino;
	}
	closedir(d);
	return found;
}

PR_API int pr_python_active(uint32_t pid)
{
	char map[64];

	map_name(pid, map, sizeof(map));
	return has_open(pid, map);
}

#if defined(__x86_64__)
#include <sys/user.h>

/* Signals that arrived while the thread ran injected code, sent again
 * once it is let go. */
struct held {
	int sig[16];
	size_t nr;
};

struct victim {
	uint32_t pid, tid;
	int mem;                     /* /proc/PID/mem */
	struct user_regs_struct saved;
	struct held held;
	const struct pr_logger *lg;
};

static void hold(struct held *h, int sig)
{
	for (size_t i = 0; i < h->nr; i++)
		if (h->sig[i] == sig)
			return;     /* standard signals do not queue either */
	if (h->nr < PR_ARRAY_SIZE(h->sig))
		h->sig[h->nr++] = sig;
}

/* Stopped by PTRACE_INTERRUPT: signals that came first are delivered
 * (nothing has been changed yet).  0, or a negative errno. */
static int interrupt(struct victim *v)
{
	return pr__ptrace_interrupt((pid_t)v->tid, 2.0);
}

static int write_mem(struct victim *v, uint64_t addr, const void *buf, size_t len)
{
	return pwrite(v->mem, buf, len, (off_t)addr) == (ssize_t)len ? 0 : -EFAULT;
}

/* Run the thread (`req`: PTRACE_SINGLESTEP or PTRACE_CONT) until it stops
 * where `done` says, holding the signals that stop it elsewhere: its
 * registers then in *regs.  0, or a negative errno. */
static int run_until(struct victim *v, int req, double timeout,
		     bool (*done)(const struct user_regs_struct *r, int sig, uint64_t arg),
		     uint64_t arg, struct user_regs_struct *regs)
{
	double until = now() + timeout;

	for (;;) {
		int st;

		if (ptrace((enum __ptrace_request)req, v->tid, 0, 0))
			return -errno;
		st = pr__ptrace_wait_stop((pid_t)v->tid, until - now());
		if (st < 0)
			return st;
		if (!st) {
			/* Stuck (a lock?): stop it wherever it is. */
			if (ptrace(PTRACE_INTERRUPT, v->tid, 0, 0) ||
			    pr__ptrace_wait_stop((pid_t)v->tid, 1.0) <= 0)
				return -ESRCH;
			return -ETIMEDOUT;
		}
		if (ptrace(PTRACE_GETREGS, v->tid, 0, regs))
			return -errno;
		if (st >> 16 == 0 && done(regs, WSTOPSIG(st), arg))
			return 0;
		if (st >> 16 == 0 && WSTOPSIG(st) == SIGSEGV && req == PTRACE_CONT)
			return -EFAULT;      /* a fault of its own in the call */
		if (st >> 16 == 0 && WSTOPSIG(st) != SIGTRAP)
			hold(&v->held, WSTOPSIG(st));
	}
}

static bool stepped(const struct user_regs_struct *r, int sig, uint64_t after)
{
	return sig == SIGTRAP && r->rip == after;
}

static bool returned(const struct user_regs_struct *r, int sig, uint64_t to)
{
	return sig == SIGSEGV && r->rip == to;
}

/* The address of a `syscall` instruction (0f 05) in the process's
 * executable mappings: 0 when there is none to be read. */
static uint64_t find_syscall(struct victim *v)
{
	char path[64], line[4300];
	unsigned char *buf = malloc(1 << 16);
	uint64_t found = 0;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%u/maps", v->pid);
	if (!buf || !(f = fopen(path, "re"))) {
		free(buf);
		return 0;
	}
	while (!found && fgets(line, sizeof(line), f)) {
		unsigned long long start, end;
		char perms[8];

		if (sscanf(line, "%llx-%llx %7s", &start, &end, perms) != 3 || perms[2] != 'x' ||
		    strstr(line, "[vsyscall]"))
			continue;
		for (uint64_t at = start; !found && at < end && at - start < (8u << 20);
		     at += (1 << 16) - 1) {
			size_t len = end - at < (1 << 16) ? (size_t)(end - at) : (1 << 16);
			ssize_t n = pread(v->mem, buf, len, (off_t)at);

			for (ssize_t i = 0; i + 1 < n; i++)
				if (buf[i] == 0x0f && buf[i + 1] == 0x05) {
					found = at + (uint64_t)i;
					break;
				}
			if (n <= 0)
				break;
		}
	}
	fclose(f);
	free(buf);
	return found;
}

/* mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS)
 * in the thread: the page's address, or 0. */
static uint64_t map_page(struct victim *v, uint64_t syscall_at)
{
	struct user_regs_struct r = v->saved;

	r.rip = syscall_at;
	r.rax = SYS_mmap;
	r.orig_rax = (unsigned long long)-1;
	r.rdi = 0;
	r.rsi = 4096;
	r.rdx = PROT_READ | PROT_WRITE;
	r.r10 = MAP_PRIVATE | MAP_ANONYMOUS;
	r.r8 = (unsigned long long)-1;
	r.r9 = 0;
	if (ptrace(PTRACE_SETREGS, v->tid, 0, &r) ||
	    run_until(v, PTRACE_SINGLESTEP, 1.0, stepped, syscall_at + 2, &r))
		return 0;
	return r.rax > (unsigned long long)-4096 ? 0 : r.rax;
}

/* func(arg0, arg1) in the thread, on the stack below its red zone,
 * returning into the (not executable) page at `ret`: its int result in
 * *result.  0, or a negative errno. */
static int call(struct victim *v, uint64_t func, uint64_t arg0, uint64_t arg1, uint64_t ret,
		int *result)
{
	struct user_regs_struct r = v->saved;
	int err;

	/* 1 KiB below the stack pointer (the red zone is 128 bytes), aligned
	 * as at a function's entry: the return address at 16n - 8. */
	r.rsp = ((v->saved.rsp - 1024) & ~UINT64_C(15)) - 8;
	if ((err = write_mem(v, r.rsp, &ret, sizeof(ret))))
		return err;
	r.rip = func;
	r.rdi = arg0;
	r.rsi = arg1;
	r.rax = 0;
	r.orig_rax = (unsigned long long)-1;
	if (ptrace(PTRACE_SETREGS, v->tid, 0, &r))
		return -errno;
	if ((err = run_until(v, PTRACE_CONT, 1.0, returned, ret, &r)))
		return err;
	*result = (int)r.rax;
	return 0;
}

/* The registers as they were, a system call the thread was stopped in
 * set to run again as the kernel would have restarted it (no signal is
 * delivered at this stop, so every -ERESTART* code restarts), and
 * orig_rax -1 so that the kernel does not restart it a second time. */
static int put_back(struct victim *v)
{
	struct user_regs_struct r = v->saved;

	if ((long long)r.orig_rax >= 0) {
		switch ((long long)r.rax) {
		case -512: /* ERESTARTSYS */
		case -513: /* ERESTARTNOINTR */
		case -514: /* ERESTARTNOHAND */
			r.rax = r.orig_rax;
			r.rip -= 2;
			r.orig_rax = (unsigned long long)-1;
			break;
		case -516: /* ERESTART_RESTARTBLOCK */
			r.rax = SYS_restart_syscall;
			r.rip -= 2;
			r.orig_rax = (unsigned long long)-1;
			break;
		default:
			break;
		}
	}
	return ptrace(PTRACE_SETREGS, v->tid, 0, &r) ? -errno : 0;
}

/* Why ptrace refused, in the log. */
static int refused(const struct victim *v, int err)
{
	return pr__ptrace_refused(v->pid, err, PR_LOG_ERROR, NULL, v->lg);
}

/* Everything done in the stopped thread: 0, or a negative errno. */
static int inject(struct victim *v, uint64_t add_pending, uint64_t run_string,
		  uint64_t sys_at)
{
	uint64_t page;
	int err, result = -1;

	if (!(page = map_page(v, sys_at))) {
		pr__log(v->lg, PR_LOG_ERROR, "pid %u: mapping a page in it failed", v->pid);
		return -ENOMEM;
	}
	if ((err = write_mem(v, page, statement, sizeof(statement))))
		return err;
	err = call(v, add_pending, run_string, page, page + 2048, &result);
	if (err == -ETIMEDOUT)
		pr__log(v->lg, PR_LOG_ERROR, "pid %u: Py_AddPendingCall() did not return within "
			"a second; its thread was put back as it was", v->pid);
	else if (err == -EFAULT)
		pr__log(v->lg, PR_LOG_ERROR, "pid %u: Py_AddPendingCall() faulted; its thread "
			"was put back as it was", v->pid);
	else if (!err && result)
		pr__log(v->lg, PR_LOG_ERROR, "pid %u: Py_AddPendingCall() refused (%d): its queue "
			"of pending calls is full; try again", v->pid, result);
	return err ? err : result ? -EAGAIN : 0;
}

/* Stop thread `tid`, inject, put it back, let it go. */
static int activate_in(struct victim *v, uint64_t add_pending, uint64_t run_string)
{
	char mem[64];
	double stopped;
	uint64_t sys_at;
	int err, put;

	if (ptrace(PTRACE_SEIZE, v->tid, 0, 0))
		return refused(v, errno == ESRCH ? -ESRCH : -errno);
	snprintf(mem, sizeof(mem), "/proc/%u/mem", v->pid);
	v->mem = open(mem, O_RDWR | O_CLOEXEC);
	/* Looked for while the thread still runs: its code does not move. */
	sys_at = v->mem < 0 ? 0 : find_syscall(v);
	if (v->mem >= 0 && !sys_at) {
		pr__log(v->lg, PR_LOG_ERROR, "pid %u: no system call instruction found in its "
			"code", v->pid);
		err = -ENOEXEC;
	} else {
		err = v->mem < 0 ? -errno : interrupt(v);
	}
	if (err == -EAGAIN)
		pr__log(v->lg, PR_LOG_ERROR, "pid %u was stopped by a signal: continue it first "
			"(kill -CONT %u)", v->pid, v->pid);
	else if (err == -ETIMEDOUT)
		pr__log(v->lg, PR_LOG_ERROR, "pid %u did not stop for ptrace within 2 s", v->pid);
	if (err) {
		if (v->mem >= 0)
			close(v->mem);
		ptrace(PTRACE_DETACH, v->tid, 0, 0);
		return err;
	}
	stopped = now();
	if (ptrace(PTRACE_GETREGS, v->tid, 0, &v->saved)) {
		err = -errno;
	} else {
		err = inject(v, add_pending, run_string, sys_at);
		put = err == -ESRCH ? err : put_back(v);
		err = err ? err : put;
	}
	close(v->mem);
	if (err != -ESRCH)
		ptrace(PTRACE_DETACH, v->tid, 0, 0);
	pr__log(v->lg, PR_LOG_DEBUG, "pid %u: thread %u stopped for %.3f ms", v->pid, v->tid,
		(now() - stopped) * 1e3);
	for (size_t i = 0; err != -ESRCH && i < v->held.nr; i++)
		syscall(SYS_tgkill, (pid_t)v->pid, (pid_t)v->tid, v->held.sig[i]);
	return err;
}

/* The thread to stop: the main one, unless it is gone (a zombie leader
 * whose other threads run on). */
static uint32_t pick_thread(uint32_t pid)
{
	char path[64], state[8];
	struct dirent *e;
	uint32_t tid = pid;
	DIR *d;

	snprintf(path, sizeof(path), "/proc/%u/task", pid);
	if (pr__status_field(pid, "State", state, sizeof(state)) && state[0] != 'Z')
		return pid;
	if (!(d = opendir(path)))
		return pid;
	while ((e = readdir(d)))
		if (e->d_name[0] != '.' && (uint32_t)atoi(e->d_name) != pid) {
			tid = (uint32_t)atoi(e->d_name);
			break;
		}
	closedir(d);
	return tid;
}
#endif

/* Why the process cannot be activated, before any ptrace: 0 or an
 * errno, in the log. */
static int check_target(uint32_t pid, const struct pr__python *py, int found,
			const struct pr_logger *lg)
{
	const struct pr_python *p = &py->pub;
	char state[32] = "";

	/* A process that exited and is not reaped yet maps nothing. */
	if (!found && (!pr__status_field(pid, "State", state, sizeof(state)) || state[0] == 'Z' ||
		       state[0] == 'X'))
		found = -ESRCH;
	if (found < 0) {
		pr__log(lg, PR_LOG_ERROR, "pid %u: %s", pid, found == -ESRCH ? "no such process" :
			strerror(-found));
		return found;
	}
	if (!found) {
		pr__log(lg, PR_LOG_DEBUG, "pid %u runs no CPython: %s%s", pid,
			*p->unconfirmed ? p->unconfirmed : "none of its mapped files is "
			"libpython3.X or an executable with CPython's symbols",
			*p->unconfirmed ? " is named as CPython's but has none of its symbols "
			"(stripped of them, or not CPython)" : "");
		return -ENOENT;
	}
	if (p->major == 3 && p->minor < 12) {
		pr__log(lg, PR_LOG_DEBUG, "pid %u runs CPython %u.%u.%u, which has no perf "
			"trampoline (3.12 and later have one)", pid, p->major, p->minor, p->micro);
		return -EPROTONOSUPPORT;
	}
	if (pr__status_field(pid, "State", state, sizeof(state)) &&
	    (state[0] == 'T' || state[0] == 't')) {
		pr__log(lg, PR_LOG_ERROR, "pid %u is stopped: continue it first (kill -CONT %u)",
			pid, pid);
		return -EAGAIN;
	}
	return 0;
}

PR_API int pr_python_activate(uint32_t pid, const struct pr_python_activate_opts *opts,
			      struct pr_python_activation *out)
{
	struct pr_logger lg = { PR_OPTS_GET(opts, log, NULL), PR_OPTS_GET(opts, log_ctx, NULL) };
	double wait = PR_OPTS_GET(opts, wait, 2.0), start;
	struct pr__python py;
	int found, err, on;

	if (!PR_OPTS_VALID(opts) || !out || out->sz < sizeof(*out))
		return -EINVAL;
	memset(out, 0, sizeof(*out));
	out->sz = sizeof(*out);
	found = pr__python_open(pid, &py, &lg);
	out->python = py.pub;
	map_name(pid, out->map, sizeof(out->map));
	if ((err = check_target(pid, &py, found, &lg))) {
		pr__python_close(&py);
		return err;
	}
	on = has_open(pid, out->map);
	if (on) {
		pr__python_close(&py);
		out->state = PR_PYTHON_ALREADY_ACTIVE;
		return on < 0 ? on : 0;
	}
#if defined(__x86_64__)
	{
		uint64_t add = pr__python_symbol(&py, "Py_AddPendingCall");
		uint64_t run = pr__python_symbol(&py, "PyRun_SimpleString");
		struct victim v = { .pid = pid, .tid = pick_thread(pid), .lg = &lg };

		pr__python_close(&py);
		if (!add || !run) {
			pr__log(&lg, PR_LOG_ERROR, "%s has no symbol %s: stripped of its symbols, "
				"it cannot be called into", out->python.path,
				add ? "PyRun_SimpleString" : "Py_AddPendingCall");
			return -ENOEXEC;
		}
		start = now();
		if ((err = activate_in(&v, add, run)))
			return err;
	}
#else
	pr__python_close(&py);
	(void)start;
	pr__log(&lg, PR_LOG_ERROR, "activating CPython's trampoline from outside is done on "
		"x86-64 only");
	return -EOPNOTSUPP;
#endif
	out->state = PR_PYTHON_REQUESTED;
	do {
		on = has_open(pid, out->map);
		if (on < 0)
			return on;
		if (on) {
			out->state = PR_PYTHON_ACTIVATED;
			break;
		}
		usleep(5000);
	} while (now() - start < wait);
	out->waited = now() - start;
	return 0;
}
