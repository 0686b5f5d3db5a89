/* SPDX-License-Identifier: Apache-2.0 */
/*
 * What to sample: CPU lists, the threads of a process, and a command held
 * before exec so sampling starts at its first instruction.
 */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include "capture/capture.h"

/* Highest CPU number a list may name (the kernel's NR_CPUS maximum). */
#define MAX_CPU_NUMBER 8191

int pr__parse_cpu_list(const char *s, struct pr_intlist *out)
{
	unsigned char seen[(MAX_CPU_NUMBER + 8) / 8] = { 0 };
	const char *p = s;

	if (!s || !*s)
		return -EINVAL;
	while (*p) {
		char *end;
		long lo, hi;

		errno = 0;
		lo = strtol(p, &end, 10);
		if (end == p || errno || lo < 0 || lo > MAX_CPU_NUMBER)
			return -EINVAL;
		hi = lo;
		p = end;
		if (*p == '-') {
			p++;
			hi = strtol(p, &end, 10);
			if (end == p || errno || hi < lo || hi > MAX_CPU_NUMBER)
				return -EINVAL;
			p = end;
		}
		for (long c = lo; c <= hi; c++)
			seen[c / 8] |= (unsigned char)(1u << (c % 8));
		if (*p == ',' && p[1])
			p++;
		else if (*p == '\n' && !p[1])
			break;
		else if (*p)
			return -EINVAL;
	}
	for (int c = 0; c <= MAX_CPU_NUMBER; c++)
		if ((seen[c / 8] >> (c % 8)) & 1 && pr__intlist_add(out, c))
			return -ENOMEM;
	return 0;
}

int pr_cpu_list_parse(const char *s, int *cpus, size_t max)
{
	struct pr_intlist l = { 0 };
	int err = !cpus && max ? -EINVAL : pr__parse_cpu_list(s, &l);

	if (!err && l.n > max)
		err = -E2BIG;
	if (!err) {
		memcpy(cpus, l.v, l.n * sizeof(int));
		err = (int)l.n;
	}
	pr__intlist_free(&l);
	return err;
}

int pr__online_cpus(struct pr_intlist *out)
{
	char buf[4096];
	FILE *f = fopen("/sys/devices/system/cpu/online", "re");
	int err = -ENOENT;

	if (f) {
		if (fgets(buf, sizeof(buf), f))
			err = pr__parse_cpu_list(buf, out);
		fclose(f);
	}
	if (err) {
		/* No sysfs (some containers): every configured CPU. */
		long n = sysconf(_SC_NPROCESSORS_ONLN);

		for (long c = 0; c < n; c++)
			if (pr__intlist_add(out, (int)c))
				return -ENOMEM;
		err = n > 0 ? 0 : -ENODEV;
	}
	return err;
}

struct new_threads {
	struct pr_intlist *tids;
	int added;
};

static int add_thread(pid_t tid, void *arg)
{
	struct new_threads *t = arg;

	if (pr__intlist_has(t->tids, (int)tid))
		return 0;
	if (pr__intlist_add(t->tids, (int)tid))
		return -ENOMEM;
	t->added++;
	return 0;
}

int pr__list_threads(pid_t pid, struct pr_intlist *tids)
{
	struct new_threads t = { tids, 0 };
	int err = pr__proc_for_each(pid, add_thread, &t);

	return err ? err : t.added;
}

/* Between fork and exec the child would still run the caller's signal
 * handlers: put the default action back for every handled signal (the
 * fork happens with every signal blocked, so none can slip in first), so a
 * Ctrl-C to the terminal ends a child that has not started instead of
 * running profiler code in it.  Ignored signals stay ignored, as nohup
 * expects.  Then unblock everything: the caller's mask is not the
 * command's. */
static void child_reset_signals(void)
{
	sigset_t none;

	for (int sig = 1; sig < NSIG; sig++) {
		struct sigaction sa;

		if (sigaction(sig, NULL, &sa) == 0 && sa.sa_handler != SIG_IGN &&
		    sa.sa_handler != SIG_DFL) {
			sa.sa_handler = SIG_DFL;
			sa.sa_flags = 0;
			sigaction(sig, &sa, NULL);
		}
	}
	/* A blocked mask survives exec too. */
	sigemptyset(&none);
	sigprocmask(SIG_SETMASK, &none, NULL);
}

static ssize_t read_full(int fd, void *buf, size_t n)
{
	ssize_t got;

	do
		got = read(fd, buf, n);
	while (got < 0 && errno == EINTR);
	return got;
}

int pr__task_read(pid_t pid, pid_t tid, struct pr_task_state *t)
{
	/* The kernel's PF_KTHREAD, in the flags field. */
	const unsigned long kthread = 0x00200000;
	char path[64], buf[1024], *open_paren, *close_paren;
	unsigned long flags = 0;
	int ppid = 0, fd;
	ssize_t n;

	snprintf(path, sizeof(path), "/proc/%d/task/%d/stat", (int)pid, (int)tid);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return errno == ENOENT ? -ESRCH : -errno;
	n = read_full(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n <= 0)
		return n ? -errno : -ESRCH;
	buf[n] = 0;
	/* "pid (comm) S ppid pgrp session tty tpgid flags ...": the name may
	 * hold spaces and parentheses, the last ')' ends it. */
	open_paren = strchr(buf, '(');
	close_paren = strrchr(buf, ')');
	if (!open_paren || !close_paren || close_paren < open_paren ||
	    sscanf(close_paren + 1, " %c %d %*d %*d %*d %*d %lu", &t->state, &ppid,
		   &flags) != 3)
		return -EINVAL;
	*close_paren = 0;
	snprintf(t->comm, sizeof(t->comm), "%s", open_paren + 1);
	t->ppid = ppid;
	t->kthread = flags & kthread;
	return 0;
}

/*
 * The child waits for one byte on a socket before exec, so every event can
 * be opened on its pid (with enable_on_exec) and every ring mapped first.
 * The same socket carries the answer: close-on-exec makes EOF mean the
 * exec succeeded; an int is the errno of an exec that failed.  A socket
 * rather than a pipe so the start can use MSG_NOSIGNAL: a child that died
 * meanwhile must not kill the caller with SIGPIPE.
 */
int pr__command_fork(struct pr_command *cmd, char *const argv[],
		     const struct pr_logger *lg)
{
	pid_t pid, parent = getpid();
	sigset_t all, old;
	int sv[2];

	memset(cmd, 0, sizeof(*cmd));
	cmd->pid = -1;
	cmd->fd = -1;
	if (!argv || !argv[0]) {
		pr__log(lg, PR_LOG_ERROR, "no command given to run");
		return -EINVAL;
	}
	if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv))
		return -errno;
	sigfillset(&all);
	pthread_sigmask(SIG_BLOCK, &all, &old);
	pid = fork();
	if (pid != 0)
		pthread_sigmask(SIG_SETMASK, &old, NULL);
	if (pid < 0) {
		int e = -errno;

		close(sv[0]);
		close(sv[1]);
		pr__log(lg, PR_LOG_ERROR, "cannot fork to run %s: %s", argv[0],
			strerror(-e));
		return e;
	}
	if (pid == 0) {
		char c;
		int e;

		close(sv[0]);
		child_reset_signals();
		/* A profiler killed outright (SIGKILL, the OOM killer) takes
		 * its command along rather than leave it running unobserved.
		 * The signal comes when the forking thread ends, and it
		 * survives exec.  A parent that died before the prctl() has
		 * already made us another's child. */
		if (prctl(PR_SET_PDEATHSIG, SIGKILL) || getppid() != parent)
			_exit(127);
		/* Parent gone or closed without starting us: do not run. */
		if (read_full(sv[1], &c, 1) != 1)
			_exit(127);
		execvp(argv[0], argv);
		e = errno;
		if (write(sv[1], &e, sizeof(e)) < 0)
			_exit(127);
		_exit(127);
	}
	close(sv[1]);
	cmd->pid = pid;
	cmd->fd = sv[0];
	return 0;
}

static void reap(pid_t pid)
{
	while (waitpid(pid, NULL, 0) < 0 && errno == EINTR)
		;
}

int pr__command_start(struct pr_command *cmd, const char *name,
		      const struct pr_logger *lg)
{
	char c = 1;
	int e = 0;
	ssize_t n;

	if (cmd->started || cmd->pid <= 0)
		return 0;
	cmd->started = true;
	if (send(cmd->fd, &c, 1, MSG_NOSIGNAL) != 1) {
		pr__log(lg, PR_LOG_ERROR,
			"'%s' exited before it could start (killed by a signal?)", name);
		reap(cmd->pid);
		cmd->pid = -1;
		return -ESRCH;
	}
	n = read_full(cmd->fd, &e, sizeof(e));
	close(cmd->fd);
	cmd->fd = -1;
	if (n == (ssize_t)sizeof(e)) {
		pr__log(lg, PR_LOG_ERROR, "cannot run '%s': %s", name, strerror(e));
		/* The child has exited with 127; reap it here, since the caller
		 * never learns it ran. */
		reap(cmd->pid);
		cmd->pid = -1;
		return -e;
	}
	return 0;
}

void pr__command_release(struct pr_command *cmd)
{
	if (cmd->fd >= 0)
		close(cmd->fd);
	if (cmd->pid > 0 && !cmd->started) {
		/* Closing the socket already makes it exit; the kill covers a
		 * child stopped by a debugger. */
		kill(cmd->pid, SIGKILL);
		reap(cmd->pid);
	}
	cmd->fd = -1;
	cmd->pid = -1;
}
