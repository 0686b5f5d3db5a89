/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Stopping one thread of another process with ptrace, for the two places
 * that look inside a live thread: CPython's trampoline turned on from
 * outside (pyactivate.c) and the threads found off the CPU when sampling
 * starts (blocked.c).  PTRACE_SEIZE, then PTRACE_INTERRUPT: no signal the
 * process could see; a system call the stop interrupts is restarted by
 * the kernel when the thread is let go (the -ERESTART* codes).
 */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/ptrace.h>
#include <sys/wait.h>
#include <unistd.h>

#include "capture/capture.h"

bool pr__status_field(uint32_t pid, const char *name, char *buf, size_t len)
{
	char path[64], line[256];
	size_t n = strlen(name);
	bool found = false;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%u/status", pid);
	if (!(f = fopen(path, "re")))
		return false;
	while (!found && fgets(line, sizeof(line), f)) {
		char *last;

		if (strncmp(line, name, n) || line[n] != ':')
			continue;
		line[strcspn(line, "\n")] = 0;
		last = strrchr(line, '\t') ? strrchr(line, '\t') + 1 : line + n + 1;
		if (strrchr(last, ' '))
			last = strrchr(last, ' ') + 1;
		snprintf(buf, len, "%s", last);
		found = true;
	}
	fclose(f);
	return found;
}

int pr__ptrace_wait_stop(pid_t tid, double timeout)
{
	uint64_t until = pr__monotonic_ns() + (uint64_t)(timeout * 1e9);
	useconds_t nap = 10;
	int st;

	for (;;) {
		pid_t r = waitpid(tid, &st, __WALL | WNOHANG);

		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0)
			return -ESRCH;
		if (r == tid && (WIFEXITED(st) || WIFSIGNALED(st)))
			return -ESRCH;
		if (r == tid)
			return st;
		if (pr__monotonic_ns() > until)
			return 0;
		/* Stops come within microseconds; a wait for a stuck call
		 * need not spin. */
		usleep(nap);
		nap = nap < 1000 ? nap * 2 : nap;
	}
}

bool pr__ptrace_is_group_stop(int st)
{
	int sig = WSTOPSIG(st);

	return st >> 16 == PTRACE_EVENT_STOP &&
	       (sig == SIGSTOP || sig == SIGTSTP || sig == SIGTTIN || sig == SIGTTOU);
}

int pr__ptrace_interrupt(pid_t tid, double timeout)
{
	if (ptrace(PTRACE_INTERRUPT, tid, 0, 0))
		return -errno;
	for (;;) {
		int st = pr__ptrace_wait_stop(tid, timeout);

		if (st <= 0)
			return st ? st : -ETIMEDOUT;
		if (st >> 16 == PTRACE_EVENT_STOP && !pr__ptrace_is_group_stop(st))
			return 0;
		if (pr__ptrace_is_group_stop(st))
			return -EAGAIN;
		/* A signal that came first: delivered, as it would have been. */
		if (ptrace(PTRACE_CONT, tid, 0, (void *)(long)WSTOPSIG(st)))
			return -errno;
	}
}

int pr__ptrace_refused(uint32_t pid, int err, enum pr_log_level level, const char *then,
		       const struct pr_logger *lg)
{
	char tracer[32] = "0", scope[8] = "";
	int fd = open("/proc/sys/kernel/yama/ptrace_scope", O_RDONLY | O_CLOEXEC);
	ssize_t n = fd >= 0 ? read(fd, scope, sizeof(scope) - 1) : -1;

	if (fd >= 0)
		close(fd);
	scope[n > 0 ? n : 0] = 0;
	scope[strcspn(scope, "\n")] = 0;
	pr__status_field(pid, "TracerPid", tracer, sizeof(tracer));
	if (strcmp(tracer, "0")) {
		pr__log(lg, level, "pid %u is traced already, by pid %s (a debugger?): %s", pid,
			tracer, then ? then : "detach it first");
		return -EBUSY;
	}
	if (err == -ESRCH)
		return err;
	pr__log(lg, level, "ptrace of pid %u refused: %s%s%s%s%s", pid, strerror(-err),
		*scope && strcmp(scope, "0") ? "; kernel.yama.ptrace_scope is " : "",
		*scope && strcmp(scope, "0") ?
			(!strcmp(scope, "1") ? "1 (only a parent may trace: run as root, or with "
					       "CAP_SYS_PTRACE)"
					     : "2 or 3 (root with CAP_SYS_PTRACE only, or none)") :
			"; run as the process's user or as root (CAP_SYS_PTRACE)",
		then ? ": " : "", then ? then : "");
	return -EPERM;
}
