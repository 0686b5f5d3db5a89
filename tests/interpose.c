/* SPDX-License-Identifier: Apache-2.0 */
/* The kernel interposed: see interpose.h. */
#include <check.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "base/base.h"
#include "interpose.h"
#include "livecheck.h"

/* ---- interposition ---- */

struct call_log calls[4096];
int nr_calls;
int fail_at = -1;
int fail_errno = EMFILE;
int fallible_seen;
int hw_answer;
unsigned int esrch_cpus;
bool refuse_kernel;
bool refuse_inherited_read;
bool hw_user_only;

void reset_hooks(void)
{
	nr_calls = 0;
	fail_at = -1;
	fail_errno = EMFILE;
	fallible_seen = 0;
	hw_answer = 0;
	esrch_cpus = 0;
	refuse_kernel = false;
	refuse_inherited_read = false;
	hw_user_only = false;
}

static bool should_fail(void)
{
	return fallible_seen++ == fail_at;
}

static void note(enum call what, unsigned long req, const struct perf_event_attr *a,
		 int group_fd)
{
	if (nr_calls < (int)PR_ARRAY_SIZE(calls))
		calls[nr_calls++] = (struct call_log){
			what, req, a ? a->disabled : false, a ? a->type : 0,
			a ? a->config : 0, a && a->exclude_kernel, a && a->exclude_user,
			group_fd, 0 };
}

long __real_syscall(long n, ...);
long __wrap_syscall(long n, ...);
long __wrap_syscall(long n, ...)
{
	va_list ap;
	long a[5];

	va_start(ap, n);
	for (int i = 0; i < 5; i++)
		a[i] = va_arg(ap, long);
	va_end(ap);
	if (n == __NR_perf_event_open) {
		struct perf_event_attr *attr = (struct perf_event_attr *)a[0];
		int cpu = (int)a[2];

		note(CALL_OPEN, 0, attr, (int)a[3]);
		if (attr->type == PERF_TYPE_HARDWARE && hw_user_only) {
			if (attr->exclude_kernel)
				return open("/dev/null", O_RDONLY | O_CLOEXEC);
			errno = EACCES;
			return -1;
		}
		if (attr->type == PERF_TYPE_HARDWARE && hw_answer) {
			if (hw_answer > 0)
				return open("/dev/null", O_RDONLY | O_CLOEXEC);
			errno = -hw_answer;
			return -1;
		}
		if ((int)a[1] == -1 && cpu >= 0 && cpu < 32 && (esrch_cpus >> cpu & 1)) {
			errno = ESRCH;
			return -1;
		}
		if (refuse_inherited_read && attr->inherit &&
		    (attr->sample_type & PERF_SAMPLE_READ)) {
			errno = EINVAL;
			return -1;
		}
		if (refuse_kernel && !attr->exclude_kernel) {
			errno = EACCES;
			return -1;
		}
		if (should_fail()) {
			errno = fail_errno;
			return -1;
		}
	}
	return __real_syscall(n, a[0], a[1], a[2], a[3], a[4]);
}

/* meson builds with _FILE_OFFSET_BITS=64, so the library calls mmap64. */
void *__real_mmap64(void *addr, size_t len, int prot, int flags, int fd, off_t off);
void *__wrap_mmap64(void *addr, size_t len, int prot, int flags, int fd, off_t off);
void *__wrap_mmap64(void *addr, size_t len, int prot, int flags, int fd, off_t off)
{
	note(CALL_MMAP, 0, NULL, -1);
	if (nr_calls)
		calls[nr_calls - 1].len = len;
	if (should_fail()) {
		errno = fail_errno;
		return MAP_FAILED;
	}
	return __real_mmap64(addr, len, prot, flags, fd, off);
}

int __real_ioctl(int fd, unsigned long req, ...);
int __wrap_ioctl(int fd, unsigned long req, ...);
int __wrap_ioctl(int fd, unsigned long req, ...)
{
	va_list ap;
	unsigned long arg;

	va_start(ap, req);
	arg = va_arg(ap, unsigned long);
	va_end(ap);
	note(CALL_IOCTL, req, NULL, -1);
	if ((req == PERF_EVENT_IOC_SET_OUTPUT || req == PERF_EVENT_IOC_ID) &&
	    should_fail()) {
		errno = fail_errno;
		return -1;
	}
	return __real_ioctl(fd, req, arg);
}

/* ---- resources ---- */

int count_perf_fds(void)
{
	DIR *d = opendir("/proc/self/fd");
	struct dirent *de;
	int n = 0;

	ck_assert_ptr_nonnull(d);
	while ((de = readdir(d))) {
		char path[300], target[256];
		ssize_t len;

		snprintf(path, sizeof(path), "/proc/self/fd/%s", de->d_name);
		len = readlink(path, target, sizeof(target) - 1);
		if (len > 0) {
			target[len] = 0;
			n += strstr(target, "perf_event") != NULL;
		}
	}
	closedir(d);
	return n;
}

int count_perf_maps(void)
{
	FILE *f = fopen("/proc/self/maps", "re");
	char line[512];
	int n = 0;

	ck_assert_ptr_nonnull(f);
	while (fgets(line, sizeof(line), f))
		n += strstr(line, "perf_event") != NULL;
	fclose(f);
	return n;
}

char logtext[8192];

void keep_log(enum pr_log_level level, const char *msg, void *ctx)
{
	(void)level;
	(void)ctx;
	snprintf(logtext + strlen(logtext), sizeof(logtext) - strlen(logtext),
		 "%s\n", msg);
}

/* A process with three threads that just waits. */
static void *idle_thread(void *arg)
{
	(void)arg;
	for (;;)
		pause();
	return NULL;
}

pid_t spawn_idle_process(void)
{
	int ready[2];
	pid_t pid;
	char c;

	ck_assert_int_eq(pipe(ready), 0);
	pid = fork();
	ck_assert_int_ge(pid, 0);
	if (pid == 0) {
		pthread_t t;

		pthread_create(&t, NULL, idle_thread, NULL);
		pthread_create(&t, NULL, idle_thread, NULL);
		if (write(ready[1], "x", 1) != 1)
			_exit(1);
		for (;;)
			pause();
	}
	ck_assert_int_eq(read(ready[0], &c, 1), 1);
	close(ready[0]);
	close(ready[1]);
	return pid;
}

void stop_process(pid_t pid)
{
	kill(pid, SIGKILL);
	waitpid(pid, NULL, 0);
}

bool is_enable(const struct call_log *c)
{
	return c->what == CALL_IOCTL && c->req == PERF_EVENT_IOC_ENABLE;
}


int fail_each_step(struct opener *op)
{
	int fds = live_count_fds(), perf_fds = count_perf_fds(), maps = count_perf_maps();
	int k;

	for (k = 0;; k++) {
		void *obj;

		reset_hooks();
		fail_at = k;
		fail_errno = k % 2 ? EMFILE : ENOMEM;
		logtext[0] = 0;
		obj = op->open(op);
		if (obj) {
			ck_assert_int_eq(fallible_seen, k);
			ck_assert_int_gt(count_perf_fds(), perf_fds);
			op->close(obj);
		} else {
			ck_assert_int_eq(errno, fail_errno);
			ck_assert_msg(logtext[0], "failure %d was not explained", k);
		}
		ck_assert_int_eq(count_perf_fds(), perf_fds);
		ck_assert_int_eq(count_perf_maps(), maps);
		ck_assert_int_eq(live_count_fds(), fds);
		if (op->command)
			ck_assert_int_eq(waitpid(-1, NULL, WNOHANG), -1);
		if (obj)
			break;
	}
	reset_hooks();
	return k;
}
