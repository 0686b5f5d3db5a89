/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The reader: events opened on a target, one ring per CPU, one poll fd.
 *
 * Process targets get one event per (thread, CPU), opened with inherit so
 * threads and children created later are followed; every event of a CPU is
 * redirected into that CPU's ring with PERF_EVENT_IOC_SET_OUTPUT, so there
 * is exactly one ring to drain per CPU whatever the thread count.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/ioctl.h>
#include <sys/utsname.h>
#include <unistd.h>

#include "capture/reader.h"

/* The most consecutive /proc/PID/task scans while threads keep appearing;
 * a process spawning threads faster than we open events for them is still
 * covered by inherit from the threads already opened. */
#define MAX_THREAD_SCANS 64

static bool is_off_cpu(const struct perf_event_attr *attr)
{
	return pr_event_source_of(attr) == PR_SOURCE_CONTEXT_SWITCH;
}

static int add_evfd(struct pr_reader *r, int fd, int tid, int event, bool member)
{
	if (PR_ARRAY_RESERVE(r->evs, r->cap_evs, r->nr_evs + 1))
		return -ENOMEM;
	r->evs[r->nr_evs++] = (struct pr_evfd){
		.fd = fd, .tid = tid, .event = event, .member = member };
	return 0;
}

/* Events the user-only fallback may restrict to user mode: not the
 * off-CPU event, whose sample is taken in the scheduler, nor one asked to
 * count the kernel alone (":k"), which user mode would leave empty. */
static bool may_exclude_kernel(const struct perf_event_attr *attr)
{
	return !is_off_cpu(attr) && !attr->exclude_user;
}

/* Under perf_event_paranoid >= 2 an unprivileged user may sample only user
 * mode.  Unless kernel call chains were asked for, accept that rather than
 * fail: the user stacks are what this library is for.  Decided on the
 * first thread and CPU, so every thread's events share one attr per event:
 * the events opened before the refused one there excluded the kernel
 * already, or they would have been refused too. */
static bool may_retry_user_only(const struct pr_reader *r, int err, int event)
{
	return (err == EACCES || err == EPERM) && r->nr_evs < r->nr_attrs &&
	       may_exclude_kernel(&r->attrs[event]) &&
	       !(r->attr_flags & PR_ATTR_USER_ONLY) && !r->kernel_requested &&
	       r->kind != TARGET_CPUS;
}

/* perf_event_open of event `event` for `tid` (-1: every task, or the
 * cgroup's, on `cpu`). */
static int open_on(struct pr_reader *r, int event, pid_t tid, int cpu, int group_fd)
{
	if (tid == -1 && r->cgroup_fd >= 0)
		return pr__perf_event_open(&r->attrs[event], r->cgroup_fd, cpu, group_fd,
					   PERF_FLAG_FD_CLOEXEC | PERF_FLAG_PID_CGROUP);
	return pr__perf_event_open(&r->attrs[event], tid, cpu, group_fd, PERF_FLAG_FD_CLOEXEC);
}

static int open_user_only(struct pr_reader *r, int event, pid_t tid, int cpu,
			  int group_fd, int refused)
{
	uint64_t changed = 0;
	int fd;

	_Static_assert(PR_READER_MAX_EVENTS <= 64, "one bit per event");
	for (size_t k = 0; k < r->nr_attrs; k++) {
		if (may_exclude_kernel(&r->attrs[k]) && !r->attrs[k].exclude_kernel) {
			r->attrs[k].exclude_kernel = 1;
			changed |= UINT64_C(1) << k;
		}
	}
	fd = open_on(r, event, tid, cpu, group_fd);
	if (fd < 0) {
		/* Refused for another reason (another user's process, say):
		 * the first refusal is the one to explain. */
		for (size_t k = 0; k < r->nr_attrs; k++)
			if (changed >> k & 1)
				r->attrs[k].exclude_kernel = 0;
		return refused;
	}
	r->attr_flags |= PR_ATTR_USER_ONLY;
	pr__log(&r->lg, PR_LOG_INFO,
		"kernel.perf_event_paranoid is %ld: sampling user mode only",
		pr__read_sysctl("/proc/sys/kernel/perf_event_paranoid", -1));
	return fd;
}

/* The user-only fallback cannot help the off-CPU event: its sample is
 * taken in the scheduler.  Say so rather than explain a generic refusal. */
static void explain_off_cpu_refused(struct pr_reader *r)
{
	pr__log(&r->lg, PR_LOG_ERROR,
		"off-CPU profiling needs kernel.perf_event_paranoid <= 1 or CAP_PERFMON "
		"(the context-switch sample is taken in the kernel), and "
		"kernel.perf_event_paranoid is %ld: run as root, give the program "
		"CAP_PERFMON (Linux 5.8+, CAP_SYS_ADMIN before), or lower the setting "
		"with 'sysctl -w kernel.perf_event_paranoid=1'",
		pr__read_sysctl("/proc/sys/kernel/perf_event_paranoid", -99));
}

/* Linux 6.12 (commit 7e8b255650fc) lets inherited events carry counts on
 * their samples (PERF_SAMPLE_READ with PERF_SAMPLE_TID); before, such a
 * leader is refused with EINVAL.  CPU-wide events inherit nothing. */
static bool is_inherited_read_refused(const struct pr_reader *r, int event, int err)
{
	return r->nr_group && event == 0 && err == EINVAL && r->attrs[0].inherit;
}

static void explain_inherited_read_refused(struct pr_reader *r)
{
	struct utsname u;

	pr__log(&r->lg, PR_LOG_ERROR,
		"this kernel (%s) refuses counts on the samples of inherited events, "
		"which read groups on processes and commands need: that takes Linux "
		"6.12 or later; sample system-wide instead, where nothing is inherited",
		uname(&u) ? "release unknown" : u.release);
}

/* Why event `event` failed to open, unless it simply vanished (a thread
 * that exited, a CPU gone offline: for the caller to skip). */
static void explain_refusal(struct pr_reader *r, int event, pid_t tid, int cpu, int err)
{
	const struct perf_event_attr *attr = &r->attrs[event];

	if (err == ESRCH || (tid == -1 && err == ENODEV))
		return;
	if (is_off_cpu(attr) && (err == EACCES || err == EPERM))
		explain_off_cpu_refused(r);
	else if (is_inherited_read_refused(r, event, err))
		explain_inherited_read_refused(r);
	else if (event > 0 && (size_t)event < r->nr_group)
		pr__log(&r->lg, PR_LOG_ERROR,
			"perf_event_open for thread %d on CPU %d: the kernel refused event %d "
			"in the read group led by event 0 (%s); sample the events without "
			"a read group, or leave this one out",
			(int)tid, cpu, event, strerror(err));
	else
		pr__explain_open_error(&r->lg, err, attr, tid, cpu);
}

/* Connect a sampling event's fd to ring `ring`: the first event of a CPU
 * owns the mapping, later ones are redirected into it. */
static int connect_ring(struct pr_reader *r, struct pr_ring *ring, int fd, pid_t tid)
{
	int err;

	if (ring->fd < 0)
		return pr__ring_mmap(ring, fd, ring->cpu, r->ring_pages, &r->lg);
	if (ioctl(fd, PERF_EVENT_IOC_SET_OUTPUT, ring->fd)) {
		err = -errno;
		pr__log(&r->lg, PR_LOG_ERROR,
			"redirecting thread %d's event into the ring of CPU %d failed: %s",
			(int)tid, ring->cpu, strerror(-err));
		return err;
	}
	return 0;
}

/*
 * Open event `event` on ring `ri`'s CPU, in the group of `group_fd` (-1:
 * none), and connect it to the ring unless it is a read group's member,
 * which writes no record.  Returns the fd or a negative errno; the fd,
 * once opened, is tracked and will be closed by the caller's cleanup
 * whatever happens next.
 */
static int open_event(struct pr_reader *r, pid_t tid, size_t ri, int event, int group_fd)
{
	struct pr_ring *ring = &r->rings[ri];
	bool member = group_fd >= 0;
	struct pr_evfd *e;
	int fd, err;

	fd = open_on(r, event, tid, ring->cpu, group_fd);
	if (fd < 0 && may_retry_user_only(r, -fd, event))
		fd = open_user_only(r, event, tid, ring->cpu, group_fd, fd);
	if (fd < 0) {
		explain_refusal(r, event, tid, ring->cpu, -fd);
		return fd;
	}
	err = add_evfd(r, fd, tid, event, member);
	if (err) {
		close(fd);
		return err;
	}
	/* The id samples carry (PERF_SAMPLE_IDENTIFIER): files list them, and
	 * the late-thread filter compares them. */
	e = &r->evs[r->nr_evs - 1];
	if (ioctl(fd, PERF_EVENT_IOC_ID, &e->id)) {
		err = -errno;
		pr__log(&r->lg, PR_LOG_ERROR, "reading an event's id failed: %s",
			strerror(-err));
		return err;
	}
	err = member ? 0 : connect_ring(r, ring, fd, tid);
	return err ? err : fd;
}

static int setup_rings(struct pr_reader *r, const struct pr_intlist *cpus)
{
	r->rings = calloc(cpus->n, sizeof(*r->rings));
	if (!r->rings)
		return -ENOMEM;
	r->nr_rings = cpus->n;
	for (size_t i = 0; i < cpus->n; i++) {
		r->rings[i].fd = -1;
		r->rings[i].cpu = cpus->v[i];
	}
	return 0;
}

/* Remember a late thread's own events and their ids (struct
 * pr_late_thread says why). */
static int add_late_thread(struct pr_reader *r, pid_t tid, size_t first)
{
	if (first == r->nr_evs)
		return 0;
	if (PR_ARRAY_RESERVE(r->late, r->cap_late, r->nr_late + 1))
		return -ENOMEM;
	r->late[r->nr_late++] = (struct pr_late_thread){
		.tid = tid, .first = first, .n = r->nr_evs - first };
	return 0;
}

/* Every event of `tid` (-1: the CPU's) on ring `ri`'s CPU; a read group's
 * members join the group of the first event. */
static int open_events(struct pr_reader *r, pid_t tid, size_t ri)
{
	int leader = -1;

	for (size_t k = 0; k < r->nr_attrs; k++) {
		int group_fd = k > 0 && k < r->nr_group ? leader : -1;
		int fd = open_event(r, tid, ri, (int)k, group_fd);

		if (fd < 0)
			return fd;
		if (k == 0)
			leader = fd;
	}
	return 0;
}

/* Open the events of one thread on every CPU.  A thread that exits on us
 * (ESRCH) is simply not sampled.  `late`: events were already open when the
 * thread was found, so it may have inherited some. */
static int open_thread(struct pr_reader *r, pid_t tid, bool late)
{
	size_t first = r->nr_evs;

	for (size_t i = 0; i < r->nr_rings; i++) {
		int err = open_events(r, tid, i);

		if (err == -ESRCH)
			break;
		if (err)
			return err;
	}
	return late ? add_late_thread(r, tid, first) : 0;
}

/*
 * Targets with nothing to sample, said before anything is opened: a
 * zombie (every thread of it exited; its parent has not reaped it), and
 * a kernel thread, which has no user stack -- unless kernel call chains
 * were asked for, which sample it in the kernel.  0, or -ESRCH / -EINVAL
 * with the reason logged.
 */
static int check_target(struct pr_reader *r, pid_t pid, const struct pr_intlist *tids,
			size_t from)
{
	struct pr_task_state t, leader;
	bool zombie = true;

	if (pr__task_read(pid, pid, &leader))
		return 0;
	for (size_t i = from; i < tids->n && zombie; i++)
		zombie = !pr__task_read(pid, tids->v[i], &t) && (t.state == 'Z' || t.state == 'X');
	if (zombie) {
		pr__log(&r->lg, PR_LOG_ERROR, "PID %d (%s) is a zombie: it has exited, and its "
			"parent (PID %d) has not reaped it yet; there is nothing left to sample",
			(int)pid, leader.comm, (int)leader.ppid);
		return -ESRCH;
	}
	if (leader.kthread && !r->kernel_requested) {
		pr__log(&r->lg, PR_LOG_ERROR, "PID %d (%s) is a kernel thread: it has no user "
			"stack to sample; ask for kernel call chains to sample its stacks in the "
			"kernel, or for system-wide sampling to see it among everything else",
			(int)pid, leader.comm);
		return -EINVAL;
	}
	return 0;
}

static int open_pid(struct pr_reader *r, pid_t pid, struct pr_intlist *tids)
{
	size_t done = tids->n;
	int n;

	for (int scan = 0; scan < MAX_THREAD_SCANS; scan++) {
		bool late = r->nr_evs > 0;

		n = pr__list_threads(pid, tids);
		if (n == -ESRCH && scan == 0) {
			pr__log(&r->lg, PR_LOG_ERROR,
				"no process with PID %d: check the PID (ps -p %d) and that "
				"it is still running", (int)pid, (int)pid);
			return -ESRCH;
		}
		if (n <= 0)
			return n == -ESRCH ? 0 : n;
		if (scan == 0 && (n = check_target(r, pid, tids, done)) < 0)
			return n;
		/* Threads born between the scan and the opens inherit their
		 * creator's events if those were already open; a rescan
		 * catches those created by threads not yet opened, and the
		 * late-thread filter drops what is then sampled twice. */
		for (; done < tids->n; done++) {
			int err = open_thread(r, tids->v[done], late);

			if (err)
				return err;
		}
	}
	return 0;
}

static int open_cpus(struct pr_reader *r)
{
	for (size_t i = 0; i < r->nr_rings; i++) {
		int err = open_events(r, -1, i);

		/* CPU went offline between listing and opening. */
		if (err == -ESRCH || err == -ENODEV) {
			pr__log(&r->lg, PR_LOG_DEBUG, "CPU %d is offline, skipped",
				r->rings[i].cpu);
			continue;
		}
		if (err)
			return err;
	}
	return 0;
}

/* Drop rings no event was opened on (offline CPUs, vanished threads). */
static void compact_rings(struct pr_reader *r)
{
	size_t n = 0;

	for (size_t i = 0; i < r->nr_rings; i++)
		if (r->rings[i].fd >= 0)
			r->rings[n++] = r->rings[i];
	r->nr_rings = n;
}

static int setup_poll(struct pr_reader *r)
{
	r->epfd = epoll_create1(EPOLL_CLOEXEC);
	if (r->epfd < 0)
		return -errno;
	for (size_t i = 0; i < r->nr_evs; i++) {
		struct epoll_event ev = { .events = EPOLLIN, .data.u64 = i };

		/* A member has no ring to signal, and its leader hangs up
		 * when it does. */
		if (r->evs[i].member)
			continue;

		if (epoll_ctl(r->epfd, EPOLL_CTL_ADD, r->evs[i].fd, &ev))
			return -errno;
		r->evs[i].polled = true;
		r->nr_live++;
	}
	return 0;
}

static struct pr_reader *reader_alloc(enum target_kind kind,
				      const struct pr_reader_opts *opts)
{
	struct pr_reader *r = calloc(1, sizeof(*r));

	if (!r)
		return NULL;
	r->kind = kind;
	r->epfd = -1;
	r->cmd.pid = -1;
	r->cmd.fd = -1;
	r->cgroup_fd = -1;
	r->stray_event = -1;
	if (PR_OPTS_HAS(opts, log_ctx)) {
		r->lg.fn = opts->log;
		r->lg.ctx = opts->log_ctx;
	}
	return r;
}

/* The first steps of every constructor: the reader, its options checked and
 * its attr built.  Returns NULL only when out of memory; otherwise *err says
 * whether to go on. */
static struct pr_reader *reader_new(enum target_kind kind, unsigned int attr_flags,
				    const struct pr_reader_opts *opts, int *err)
{
	struct pr_reader *r = reader_alloc(kind, opts);

	if (!r)
		return NULL;
	r->attr_flags = attr_flags;
	*err = pr__reader_check_opts(r, opts);
	if (!*err)
		*err = pr__reader_build_attrs(r, opts);
	return r;
}

/* One ring, not yet mapped, for every online CPU. */
static int setup_online_rings(struct pr_reader *r)
{
	struct pr_intlist cpus = { 0 };
	int err = pr__online_cpus(&cpus);

	if (!err)
		err = setup_rings(r, &cpus);
	pr__intlist_free(&cpus);
	return err;
}

/* Common tail of every constructor: poll set, then either a reader or
 * nothing at all. */
static struct pr_reader *reader_finish(struct pr_reader *r, int err)
{
	if (!err) {
		compact_rings(r);
		if (!r->nr_evs) {
			pr__log(&r->lg, PR_LOG_ERROR,
				"no event could be opened: every CPU is offline or every thread exited");
			err = -ENODEV;
		}
	}
	if (!err)
		err = setup_poll(r);
	if (!err)
		err = pr__reader_index_ids(r);
	if (!err)
		pr__reader_sort_late(r);
	if (err) {
		pr_reader_close(r);
		errno = -err;
		return NULL;
	}
	return r;
}

struct pr_reader *pr__reader_from_rings(struct pr_ring *rings, size_t nr,
					 const struct perf_event_attr *attr,
					 const struct pr_logger *lg)
{
	struct pr_reader *r = reader_alloc(TARGET_CPUS, NULL);

	if (!r)
		return NULL;
	if (lg)
		r->lg = *lg;
	r->attrs[0] = *attr;
	r->nr_attrs = 1;
	pr__parse_cfg_from_attr(&r->cfgs[0], attr);
	pr__reader_set_max_stack(r);
	r->rings = calloc(nr ? nr : 1, sizeof(*r->rings));
	if (!r->rings) {
		free(r);
		return NULL;
	}
	memcpy(r->rings, rings, nr * sizeof(*rings));
	r->nr_rings = nr;
	return r;
}

struct pr_reader *pr_reader_open_pids(const pid_t *pids, size_t nr_pids,
				      const struct pr_reader_opts *opts)
{
	struct pr_intlist tids = { 0 };
	struct pr_reader *r;
	int err;

	r = reader_new(TARGET_PIDS, PR_ATTR_INHERIT | PR_ATTR_SHARED_RING, opts, &err);
	if (!r)
		return NULL;
	if (!err && !(nr_pids && pids)) {
		pr__log(&r->lg, PR_LOG_ERROR, "no process to sample");
		err = -EINVAL;
	}
	if (!err)
		err = setup_online_rings(r);
	for (size_t i = 0; !err && i < nr_pids; i++) {
		if (pids[i] <= 0) {
			pr__log(&r->lg, PR_LOG_ERROR, "invalid PID %d", (int)pids[i]);
			err = -EINVAL;
		} else {
			err = open_pid(r, pids[i], &tids);
		}
	}
	pr__intlist_free(&tids);
	return reader_finish(r, err);
}

/* The events of thread `tid` alone, once however often it is named. */
static int open_tid(struct pr_reader *r, pid_t tid)
{
	size_t first = r->nr_evs;
	int err;

	if (tid <= 0) {
		pr__log(&r->lg, PR_LOG_ERROR, "invalid thread id %d", (int)tid);
		return -EINVAL;
	}
	for (size_t i = 0; i < first; i++)
		if (r->evs[i].tid == tid)
			return 0;
	err = open_thread(r, tid, false);
	if (!err && r->nr_evs == first) {
		pr__log(&r->lg, PR_LOG_ERROR,
			"no thread with id %d: check it (ls /proc/*/task/%d) and that it is "
			"still running", (int)tid, (int)tid);
		err = -ESRCH;
	}
	return err;
}

struct pr_reader *pr_reader_open_tids(const pid_t *tids, size_t nr_tids,
				      const struct pr_reader_opts *opts)
{
	struct pr_reader *r;
	int err;

	/* Not inherited: what those threads create is not theirs. */
	r = reader_new(TARGET_PIDS, PR_ATTR_SHARED_RING, opts, &err);
	if (!r)
		return NULL;
	if (!err && !(nr_tids && tids)) {
		pr__log(&r->lg, PR_LOG_ERROR, "no thread to sample");
		err = -EINVAL;
	}
	if (!err)
		err = setup_online_rings(r);
	for (size_t i = 0; !err && i < nr_tids; i++)
		err = open_tid(r, tids[i]);
	return reader_finish(r, err);
}

/* Requested CPUs that exist but are offline are skipped; CPUs that do not
 * exist are an error. */
static int select_cpus(struct pr_reader *r, const int *want, size_t n,
		       struct pr_intlist *out)
{
	struct pr_intlist online = { 0 };
	long configured = sysconf(_SC_NPROCESSORS_CONF);
	int err = pr__online_cpus(&online);

	for (size_t i = 0; !err && i < n; i++) {
		if (want[i] < 0 || (configured > 0 && want[i] >= configured)) {
			pr__log(&r->lg, PR_LOG_ERROR,
				"CPU %d does not exist: this machine has CPUs 0-%ld",
				want[i], configured - 1);
			err = -EINVAL;
		} else if (!pr__intlist_has(&online, want[i])) {
			pr__log(&r->lg, PR_LOG_INFO, "CPU %d is offline, skipped", want[i]);
		} else if (!pr__intlist_has(out, want[i])) {
			err = pr__intlist_add(out, want[i]);
		}
	}
	if (!err && !want) {
		*out = online;
		return 0;
	}
	pr__intlist_free(&online);
	return err;
}

struct pr_reader *pr_reader_open_cpus(const int *cpus, size_t nr_cpus,
				      const struct pr_reader_opts *opts)
{
	struct pr_intlist list = { 0 };
	struct pr_reader *r;
	int err;

	r = reader_new(TARGET_CPUS, 0, opts, &err);
	if (!r)
		return NULL;
	if (!err)
		err = select_cpus(r, cpus, cpus ? nr_cpus : 0, &list);
	if (!err)
		err = setup_rings(r, &list);
	if (!err)
		err = open_cpus(r);
	pr__intlist_free(&list);
	return reader_finish(r, err);
}

struct pr_reader *pr_reader_open_command(char *const argv[],
					 const struct pr_reader_opts *opts)
{
	struct pr_reader *r;
	int err;

	/* One top-level event per CPU: rings are not shared, and the child's
	 * own threads inherit into their parent event's ring. */
	r = reader_new(TARGET_COMMAND, PR_ATTR_INHERIT | PR_ATTR_ENABLE_ON_EXEC,
		       opts, &err);
	if (!r)
		return NULL;
	if (!err)
		err = setup_online_rings(r);
	if (!err)
		err = pr__command_fork(&r->cmd, argv, &r->lg);
	if (!err) {
		r->cmd_name = strdup(argv[0]);
		if (!r->cmd_name)
			err = -ENOMEM;
	}
	if (!err) {
		err = open_thread(r, r->cmd.pid, false);
	}
	return reader_finish(r, err);
}

void pr_reader_close(struct pr_reader *r)
{
	if (!r)
		return;
	if (r->enabled)
		pr_reader_disable(r);
	for (size_t i = 0; i < r->nr_rings; i++)
		pr__ring_release(&r->rings[i]);
	for (size_t i = 0; i < r->nr_evs; i++)
		close(r->evs[i].fd);
	if (r->epfd >= 0)
		close(r->epfd);
	if (r->cgroup_fd >= 0)
		close(r->cgroup_fd);
	pr__command_release(&r->cmd);
	free(r->rings);
	free(r->evs);
	free(r->late);
	free(r->id_events);
	free(r->adopted);
	free(r->cmd_name);
	free(r);
}

static int ioctl_all(struct pr_reader *r, unsigned long req)
{
	int err = 0;

	for (size_t i = 0; i < r->nr_evs; i++)
		if (ioctl(r->evs[i].fd, req, 0) && !err)
			err = -errno;
	return err;
}

int pr_reader_enable(struct pr_reader *r)
{
	int err;

	if (!r)
		return -EINVAL;
	if (r->kind == TARGET_COMMAND && !r->cmd.started) {
		/* enable_on_exec does it, so the profiler's own code between
		 * fork and exec is never sampled. */
		err = pr__command_start(&r->cmd, r->cmd_name, &r->lg);
	} else {
		err = ioctl_all(r, PERF_EVENT_IOC_ENABLE);
		if (err)
			pr__log(&r->lg, PR_LOG_ERROR, "enabling the events failed: %s",
				strerror(-err));
	}
	if (!err)
		r->enabled = true;
	return err;
}

int pr_reader_disable(struct pr_reader *r)
{
	if (!r)
		return -EINVAL;
	r->enabled = false;
	return ioctl_all(r, PERF_EVENT_IOC_DISABLE);
}

pid_t pr_reader_child(const struct pr_reader *r)
{
	return r && r->kind == TARGET_COMMAND ? r->cmd.pid : -1;
}

const struct perf_event_attr *pr_reader_attr(const struct pr_reader *r)
{
	return r ? &r->attrs[0] : NULL;
}

size_t pr_reader_nr_events(const struct pr_reader *r)
{
	return r ? r->nr_attrs : 0;
}

const struct perf_event_attr *pr_reader_event_attr(const struct pr_reader *r,
						   size_t idx)
{
	return r && idx < r->nr_attrs ? &r->attrs[idx] : NULL;
}

size_t pr_reader_event_ids(const struct pr_reader *r, size_t idx, uint64_t *ids,
			   size_t max)
{
	size_t n = 0;

	for (size_t i = 0; r && i < r->nr_evs; i++) {
		if ((size_t)r->evs[i].event != idx)
			continue;
		if (ids && n < max)
			ids[n] = r->evs[i].id;
		n++;
	}
	return n;
}

/* The count of one opened event from what read() gave (`n` words, laid out
 * by `rf`): in a group's read its own value, found by its id. */
static int count_of(const uint64_t *w, size_t n, uint64_t rf, uint64_t id, uint64_t *count)
{
	size_t times = !!(rf & PERF_FORMAT_TOTAL_TIME_ENABLED) +
		       !!(rf & PERF_FORMAT_TOTAL_TIME_RUNNING);
	size_t each = 1 + !!(rf & PERF_FORMAT_ID) + !!(rf & PERF_FORMAT_LOST);

	if (!(rf & PERF_FORMAT_GROUP)) {
		if (n < 1)
			return -EIO;
		*count = w[0];
		return 0;
	}
	for (size_t i = 0; n >= 1 + times && i < w[0] && 1 + times + (i + 1) * each <= n; i++) {
		const uint64_t *v = w + 1 + times + i * each;

		if (!(rf & PERF_FORMAT_ID) || v[1] == id) {
			*count = v[0];
			return 0;
		}
	}
	return -EIO;
}

int pr_reader_count(const struct pr_reader *r, size_t idx, uint64_t *count)
{
	uint64_t w[3 + 3 * PR_READER_MAX_EVENTS], sum = 0, one;

	if (!r || !count || idx >= r->nr_attrs)
		return -EINVAL;
	for (size_t i = 0; i < r->nr_evs; i++) {
		ssize_t got;
		int err;

		if ((size_t)r->evs[i].event != idx)
			continue;
		got = read(r->evs[i].fd, w, sizeof(w));
		if (got < 0)
			return -errno;
		err = count_of(w, (size_t)got / sizeof(w[0]), r->attrs[idx].read_format,
			       r->evs[i].id, &one);
		if (err)
			return err;
		sum += one;
	}
	*count = sum;
	return 0;
}

size_t pr_reader_ids(const struct pr_reader *r, uint64_t *ids, size_t max)
{
	if (!r)
		return 0;
	for (size_t i = 0; ids && i < r->nr_evs && i < max; i++)
		ids[i] = r->evs[i].id;
	return r->nr_evs;
}

size_t pr_reader_nr_rings(const struct pr_reader *r)
{
	return r ? r->nr_rings : 0;
}

int pr_reader_ring_cpu(const struct pr_reader *r, size_t idx)
{
	return r && idx < r->nr_rings ? r->rings[idx].cpu : -EINVAL;
}

