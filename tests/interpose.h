/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The kernel interposed (interpose.c): an executable linked with it and
 * --wrap=syscall,--wrap=mmap64,--wrap=ioctl can make any perf_event_open,
 * ring mmap, SET_OUTPUT or ID ioctl fail, answer for a hardware PMU the
 * machine does not have, or watch the order of calls.  Everything not
 * interposed goes to the real kernel.  Used by test-open.c (the reader)
 * and test-open-counter.c (the counters).
 */
#ifndef DS_TEST_INTERPOSE_H
#define DS_TEST_INTERPOSE_H

#include <stdbool.h>
#include <sys/types.h>

#include "perfreader.h"

enum call { CALL_OPEN, CALL_MMAP, CALL_IOCTL };

struct call_log {
	enum call what;
	unsigned long req;        /* ioctl request */
	bool disabled;            /* open: attr->disabled */
	uint32_t type;            /* open: attr->type */
	uint64_t config;          /* open: attr->config */
	bool exclude_kernel;      /* open: attr->exclude_kernel */
	bool exclude_user;        /* open: attr->exclude_user */
	int group_fd;             /* open: its group_fd argument */
	size_t len;               /* mmap: the length mapped */
};

extern struct call_log calls[4096];
extern int nr_calls;
/* Fail the fallible call with this index (0-based), -1 for none. */
extern int fail_at;
extern int fail_errno;
extern int fallible_seen;
/* Answer for hardware events: 0 = pass through, > 0 = return a dummy fd,
 * < 0 = that errno. */
extern int hw_answer;
/* ESRCH for CPU-wide events on these CPUs (bit mask). */
extern unsigned int esrch_cpus;
/* EACCES for events that do not exclude the kernel. */
extern bool refuse_kernel;
/* EINVAL for inherited events with PERF_SAMPLE_READ (Linux before 6.12). */
extern bool refuse_inherited_read;
/* Hardware events open only when they exclude the kernel (a PMU under
 * perf_event_paranoid=2). */
extern bool hw_user_only;

/* Every hook back to passing through, the call log emptied. */
void reset_hooks(void);
bool is_enable(const struct call_log *c);

/* Event fds and ring mappings this process holds. */
int count_perf_fds(void);
int count_perf_maps(void);

/* Messages of every level, appended; the test empties it. */
extern char logtext[8192];
void keep_log(enum pr_log_level level, const char *msg, void *ctx);

/* A process with three threads that just waits, and its end. */
pid_t spawn_idle_process(void);
void stop_process(pid_t pid);

/* What a test opens events on. */
enum target { T_PIDS, T_CPUS, T_COMMAND };

/* An object under test (a reader, a counter), embedded first in the
 * test's own struct holding what opening it takes. */
struct opener {
	/* The object, or NULL with errno set. */
	void *(*open)(struct opener *op);
	void (*close)(void *obj);
	/* It forks a command, which no failure may leave behind. */
	bool command;
};

/*
 * Fail each fallible step of op->open() in turn: the k-th perf_event_open,
 * ring mmap, SET_OUTPUT or ID ioctl, with EMFILE or ENOMEM.  After every
 * failure nothing may be left: no event fd, no ring mapping, no other fd,
 * no child, and the log must explain it.  Then the unfailed open succeeds
 * and close releases everything.  Returns how many steps failed.
 */
int fail_each_step(struct opener *op);

#endif
