/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Counters: events counting (not sampling) on threads or CPUs, in groups
 * read together, as perf stat counts.
 *
 * A counter is a table of fds, one row per slot (a thread or a CPU) and
 * one column per event.  A group's leader is opened first on each slot and
 * its members with it as group_fd, so the kernel schedules them together
 * and one read(2) of the leader (PERF_FORMAT_GROUP) returns every count
 * with the same enabled and running times.  Everything opens disabled
 * (members follow their leader) and is enabled once every fd exists.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include "capture/counter.h"

double pr_count_scale(uint64_t value, uint64_t enabled, uint64_t running)
{
	if (!running)
		return 0;
	if (running >= enabled)
		return (double)value;
	return (double)value * ((double)enabled / (double)running);
}

/* ---- the events ---- */

/* Leaders come first and lead themselves: what pr_event_list_parse()
 * gives, and what opening a leader before its members needs. */
static int check_events(struct pr_counter *c, const struct pr_event_desc *evs, size_t nr)
{
	if (!evs || !nr) {
		pr__log(&c->lg, PR_LOG_ERROR, "no event to count");
		return -EINVAL;
	}
	for (size_t i = 0; i < nr; i++) {
		uint32_t l = evs[i].leader;

		if (l > i || evs[l].leader != l) {
			pr__log(&c->lg, PR_LOG_ERROR,
				"event %zu (%.*s) names event %u as its group's leader, which is "
				"not an earlier event leading its own group",
				i, PR_EVENT_NAME_MAX, evs[i].name, (unsigned int)l);
			return -EINVAL;
		}
	}
	return 0;
}

static int build_attrs(struct pr_counter *c, unsigned int flags)
{
	for (size_t i = 0; i < c->nr_evs; i++) {
		PR_OPTS(pr_event_opts, eo, .desc = &c->evs[i], .log = c->lg.fn,
			.log_ctx = c->lg.ctx);
		size_t leader = c->evs[i].leader;
		unsigned int f = flags | PR_ATTR_COUNT;
		int err;

		if (group_size(c, leader) > 1)
			f |= PR_ATTR_READ_GROUP;
		if (leader != i)
			f |= PR_ATTR_GROUP_MEMBER;
		err = pr_event_attr(&eo, PR_SOURCE_EVENT, f, &c->attrs[i]);
		if (err)
			return err;
		/* A group's read: its size, two times, a value and id each. */
		if (c->buf_words < 3 + 2 * group_size(c, leader))
			c->buf_words = 3 + 2 * group_size(c, leader);
	}
	c->buf = calloc(c->buf_words, sizeof(*c->buf));
	return c->buf ? 0 : -ENOMEM;
}

/* `threads`: the target's threads alone, whatever opts->no_inherit. */
static struct pr_counter *counter_new(enum target_kind kind, bool threads,
				      const struct pr_event_desc *evs, size_t nr,
				      const struct pr_counter_opts *opts, int *err)
{
	struct pr_counter *c = calloc(1, sizeof(*c));
	bool per_thread = PR_OPTS_GET(opts, per_thread, false);
	unsigned int flags = 0;

	if (!c) {
		*err = -ENOMEM;
		return NULL;
	}
	c->kind = kind;
	c->lg.fn = PR_OPTS_GET(opts, log, NULL);
	c->lg.ctx = PR_OPTS_GET(opts, log_ctx, NULL);
	c->skip_unsupported = PR_OPTS_GET(opts, skip_unsupported, false);
	c->cmd.pid = -1;
	c->cmd.fd = -1;
	if (!PR_OPTS_VALID(opts)) {
		pr__log(&c->lg, PR_LOG_ERROR,
			"pr_counter_opts: sz is wrong or unknown fields are set");
		*err = -EINVAL;
		return c;
	}
	*err = check_events(c, evs, nr);
	if (*err)
		return c;
	/* A CPU counts whatever runs on it; a thread, its children too (not
	 * with -t: those threads alone). */
	if (!PR_OPTS_GET(opts, no_inherit, false) && !threads &&
	    (kind != TARGET_CPUS || per_thread))
		flags |= PR_ATTR_INHERIT;
	/* A command's leaders wait for its exec (members follow them). */
	if (kind == TARGET_COMMAND)
		flags |= PR_ATTR_ENABLE_ON_EXEC;
	c->nr_evs = nr;
	c->evs = malloc(nr * sizeof(*c->evs));
	c->attrs = calloc(nr, sizeof(*c->attrs));
	c->unsupported = calloc(nr, sizeof(*c->unsupported));
	c->opened = calloc(nr, sizeof(*c->opened));
	if (!c->evs || !c->attrs || !c->unsupported || !c->opened) {
		*err = -ENOMEM;
		return c;
	}
	memcpy(c->evs, evs, nr * sizeof(*evs));
	*err = build_attrs(c, flags);
	return c;
}

/* ---- the targets ---- */

static int add_slot(struct pr_counter *c, pid_t pid, pid_t tid, int cpu)
{
	if (PR_ARRAY_RESERVE(c->slots, c->cap_slots, c->nr_slots + 1))
		return -ENOMEM;
	c->slots[c->nr_slots++] = (struct slot){ .pid = pid, .tid = tid, .cpu = cpu };
	return 0;
}

/* A slot per thread of each process, each thread once. */
static int add_threads(struct pr_counter *c, const pid_t *pids, size_t nr_pids)
{
	struct pr_intlist tids = { 0 };
	int err = 0;

	if (!pids || !nr_pids) {
		pr__log(&c->lg, PR_LOG_ERROR, "no process to count");
		err = -EINVAL;
	}
	for (size_t i = 0; !err && i < nr_pids; i++) {
		size_t first = tids.n;
		int n = pids[i] > 0 ? pr__list_threads(pids[i], &tids) : -EINVAL;

		if (n == -EINVAL)
			pr__log(&c->lg, PR_LOG_ERROR, "invalid PID %d", (int)pids[i]);
		else if (n == -ESRCH)
			pr__log(&c->lg, PR_LOG_ERROR,
				"PID %d is not a running process: check it with ps -p %d",
				(int)pids[i], (int)pids[i]);
		err = n < 0 ? n : 0;
		for (size_t t = first; !err && t < tids.n; t++)
			err = add_slot(c, pids[i], tids.v[t], -1);
	}
	pr__intlist_free(&tids);
	return err;
}

/* A slot per thread named, each once, in its process. */
static int add_tids(struct pr_counter *c, const pid_t *tids, size_t nr_tids)
{
	if (!tids || !nr_tids) {
		pr__log(&c->lg, PR_LOG_ERROR, "no thread to count");
		return -EINVAL;
	}
	for (size_t i = 0; i < nr_tids; i++) {
		pid_t pid = pr_thread_process(tids[i]);
		bool dup = false;
		int err;

		if (pid <= 0) {
			pr__log(&c->lg, PR_LOG_ERROR, "no thread with id %d: list a process's "
				"threads with 'ps -L -p PID'", (int)tids[i]);
			return pid == -EINVAL ? -EINVAL : -ESRCH;
		}
		for (size_t k = 0; k < c->nr_slots && !dup; k++)
			dup = c->slots[k].tid == tids[i];
		if (!dup && (err = add_slot(c, pid, tids[i], -1)))
			return err;
	}
	return 0;
}

/* A slot per CPU.  One that exists but is offline stays, to be skipped
 * at the open (it may come online first); one the machine does not have
 * is the caller's mistake. */
static int add_cpus(struct pr_counter *c, const int *cpus, size_t nr_cpus)
{
	struct pr_intlist online = { 0 };
	long nr_conf = sysconf(_SC_NPROCESSORS_CONF);
	int err = 0;

	if (!cpus) {
		err = pr__online_cpus(&online);
		cpus = online.v;
		nr_cpus = online.n;
	}
	for (size_t i = 0; !err && i < nr_cpus; i++) {
		if (cpus[i] < 0 || (nr_conf > 0 && cpus[i] >= nr_conf)) {
			pr__log(&c->lg, PR_LOG_ERROR,
				"there is no CPU %d on this machine: its CPUs are 0-%ld",
				cpus[i], nr_conf - 1);
			err = -EINVAL;
		} else {
			err = add_slot(c, -1, -1, cpus[i]);
		}
	}
	pr__intlist_free(&online);
	return err;
}

/* A slot per thread of process `pid`, for add_every_thread(). */
static int add_process_threads(pid_t pid, void *arg)
{
	struct pr_counter *c = arg;
	struct pr_intlist tids = { 0 };
	int n = pr__list_threads(pid, &tids), err = 0;

	for (size_t t = 0; n > 0 && !err && t < tids.n; t++)
		err = add_slot(c, pid, tids.v[t], -1);
	pr__intlist_free(&tids);
	/* A process that exited since /proc listed it has no threads. */
	return err ? err : n == -ESRCH ? 0 : n < 0 ? n : 0;
}

/* A slot per thread of every process (perf stat -a --per-thread): those
 * living now; one that exits before its events open is skipped there. */
static int add_every_thread(struct pr_counter *c)
{
	return pr__proc_for_each(0, add_process_threads, c);
}

/* ---- opening ---- */

/* What a kernel answers for an event this machine has no PMU for. */
static bool lacks_pmu(int err)
{
	return err == ENOENT || err == EOPNOTSUPP || err == ENODEV || err == ENXIO;
}

/* "{a,b,c}" for a group, "a" for an event alone, shortened to fit. */
static void group_name(const struct pr_counter *c, size_t leader, char *buf, size_t size)
{
	bool group = group_size(c, leader) > 1;
	size_t len = 0;

	buf[0] = 0;
	for (size_t i = leader; i < c->nr_evs && len < size; i++) {
		if (c->evs[i].leader != leader)
			continue;
		len += (size_t)snprintf(buf + len, size - len, "%s%s%.*s",
					group && i == leader ? "{" : "",
					i == leader ? "" : ",", PR_EVENT_NAME_MAX,
					c->evs[i].name);
	}
	if (group && len < size)
		snprintf(buf + len, size - len, "}");
	if (len >= size && size > 4)
		memcpy(buf + size - 4, "...", 4);
}

static void slot_name(const struct slot *s, char *buf, size_t size)
{
	if (s->tid == -1)
		snprintf(buf, size, "CPU %d", s->cpu);
	else
		snprintf(buf, size, "thread %d of process %d", (int)s->tid, (int)s->pid);
}

/* Event `ev` (in a group or alone) refused with `err` on slot `s`: which
 * event and group, why, and what to do. */
static void explain_refusal(const struct pr_counter *c, size_t s, size_t ev, int err)
{
	const struct slot *sl = &c->slots[s];
	const char *name = c->evs[ev].name;
	size_t leader = c->evs[ev].leader;
	char group[512], where[64];

	group_name(c, leader, group, sizeof(group));
	slot_name(sl, where, sizeof(where));
	if (lacks_pmu(err) && c->evs[ev].type == PERF_TYPE_HARDWARE) {
		pr__log(&c->lg, PR_LOG_ERROR,
			"the hardware event %s%s%s is not available on this machine (no PMU: "
			"a VM?); use a software event such as cpu-clock, or skip unsupported "
			"events",
			name, group_size(c, leader) > 1 ? " of the group " : "",
			group_size(c, leader) > 1 ? group : "");
	} else if (err == E2BIG) {
		/* The group's read must fit the kernel's 16 KiB limit. */
		pr__log(&c->lg, PR_LOG_ERROR,
			"the group %s has too many events for the kernel to read at once "
			"(%zu; it refuses the one past about a thousand): split it into "
			"smaller groups", group, group_size(c, leader));
	} else if (group_size(c, leader) > 1 && (err == EINVAL || err == ENOSPC)) {
		pr__log(&c->lg, PR_LOG_ERROR,
			"the group %s cannot be counted together on %s: the kernel refused its "
			"event %s (%s). A group must fit the PMU's counters at once and use one "
			"PMU (software events aside): split it into smaller groups, or count its "
			"events outside a group (multiplexed and scaled)",
			group, where, name, strerror(err));
	} else if (err == EINVAL || lacks_pmu(err)) {
		pr__log(&c->lg, PR_LOG_ERROR,
			"the kernel refused to count %s on %s (%s): this kernel does not "
			"support the event or its modifiers; perf list shows the events it has",
			name, where, strerror(err));
	} else {
		pr__log(&c->lg, PR_LOG_ERROR, "cannot count %s%s%s on %s", name,
			group_size(c, leader) > 1 ? " of the group " : "",
			group_size(c, leader) > 1 ? group : "", where);
		pr__explain_open_error(&c->lg, err, &c->attrs[ev], sl->tid, sl->cpu);
	}
}

/* A thread that exited, or a CPU that went offline, since the slots were
 * listed: skipped, as perf does. */
static bool is_gone(const struct slot *s, int err)
{
	return err == ESRCH || (s->tid == -1 && err == ENODEV);
}

/* Leave `ev` unopened for good: the machine lacks it (skip_unsupported),
 * and a group cannot count without its leader. */
static void mark_unsupported(struct pr_counter *c, size_t ev, int err)
{
	c->unsupported[ev] = true;
	if (is_leader(c, ev) && group_size(c, ev) > 1)
		pr__log(&c->lg, PR_LOG_INFO,
			"%s is not supported here (%s): its group is not counted",
			c->evs[ev].name, strerror(err));
	else
		pr__log(&c->lg, PR_LOG_INFO, "%s is not supported here (%s): not counted",
			c->evs[ev].name, strerror(err));
}

static int open_event(struct pr_counter *c, size_t s, size_t ev)
{
	const struct slot *sl = &c->slots[s];
	size_t leader = c->evs[ev].leader;
	int group_fd = leader == ev ? -1 : *fd_at(c, s, leader);
	int fd;

	if (c->unsupported[ev])
		return 0;
	if (c->unsupported[leader]) {
		c->unsupported[ev] = true;
		return 0;
	}
	fd = pr__perf_event_open(&c->attrs[ev], sl->tid, sl->cpu, group_fd,
				 PERF_FLAG_FD_CLOEXEC);
	if (fd < 0 && is_gone(sl, -fd))
		return fd;
	/* Only the first open tells what the machine lacks: an event that
	 * opened elsewhere is refused for another reason. */
	if (fd < 0 && c->skip_unsupported && !c->opened[ev] && lacks_pmu(-fd)) {
		mark_unsupported(c, ev, -fd);
		return 0;
	}
	if (fd < 0) {
		explain_refusal(c, s, ev, -fd);
		return fd;
	}
	*fd_at(c, s, ev) = fd;
	c->opened[ev] = true;
	if (ioctl(fd, PERF_EVENT_IOC_ID, &c->ids[s * c->nr_evs + ev])) {
		int err = -errno;

		pr__log(&c->lg, PR_LOG_ERROR, "reading the id of %s failed: %s",
			c->evs[ev].name, strerror(-err));
		return err;
	}
	return 0;
}

static void close_slot(struct pr_counter *c, size_t s)
{
	/* Members before their leader: each close then leaves a whole
	 * group or none. */
	for (size_t i = c->nr_evs; i-- > 0;) {
		int *fd = fd_at(c, s, i);

		if (*fd >= 0)
			close(*fd);
		*fd = -1;
	}
}

/* Every event on every slot; slots whose thread or CPU is gone are
 * closed and marked. */
static int open_slots(struct pr_counter *c)
{
	size_t cells = c->nr_slots * c->nr_evs;

	c->fds = malloc(cells * sizeof(*c->fds));
	c->ids = calloc(cells, sizeof(*c->ids));
	if (!c->fds || !c->ids)
		return -ENOMEM;
	for (size_t i = 0; i < cells; i++)
		c->fds[i] = -1;
	for (size_t s = 0; s < c->nr_slots; s++) {
		for (size_t ev = 0; ev < c->nr_evs; ev++) {
			int err = open_event(c, s, ev);

			if (err && is_gone(&c->slots[s], -err)) {
				if (c->slots[s].tid == -1)
					pr__log(&c->lg, PR_LOG_DEBUG, "CPU %d is offline, skipped",
						c->slots[s].cpu);
				close_slot(c, s);
				c->slots[s].gone = true;
				break;
			}
			if (err)
				return err;
		}
	}
	return 0;
}

/* Drop the slots that are gone; none left is an error. */
static int compact_slots(struct pr_counter *c)
{
	size_t n = 0;

	for (size_t s = 0; s < c->nr_slots; s++) {
		if (c->slots[s].gone)
			continue;
		c->slots[n] = c->slots[s];
		memmove(fd_at(c, n, 0), fd_at(c, s, 0), c->nr_evs * sizeof(*c->fds));
		memmove(&c->ids[n * c->nr_evs], &c->ids[s * c->nr_evs],
			c->nr_evs * sizeof(*c->ids));
		n++;
	}
	c->nr_slots = n;
	if (n)
		return 0;
	if (c->kind == TARGET_CPUS) {
		pr__log(&c->lg, PR_LOG_ERROR, "every CPU asked for is offline");
		return -ENODEV;
	}
	pr__log(&c->lg, PR_LOG_ERROR, "every thread exited before it could be counted");
	return -ESRCH;
}

/* What a counter counts on: one of the three targets. */
struct target {
	enum target_kind kind;
	const pid_t *pids;
	size_t nr_pids;
	bool threads;           /* pids are threads, counted alone */
	const int *cpus;
	size_t nr_cpus;
	char *const *argv;
};

/* Fork `argv`, held before its exec until pr_counter_enable(). */
static int fork_command(struct pr_counter *c, char *const argv[])
{
	int err = pr__command_fork(&c->cmd, argv, &c->lg);

	if (err)
		return err;
	c->cmd_name = strdup(argv[0]);
	return c->cmd_name ? 0 : -ENOMEM;
}

/* opts->command: forked once the counters are open (it is no target of
 * theirs), to exec once they count. */
static int add_command_beside(struct pr_counter *c, const struct target *t,
			      char *const argv[])
{
	if (t->kind == TARGET_COMMAND) {
		pr__log(&c->lg, PR_LOG_ERROR,
			"a counted command takes no second command: give opts->command with "
			"processes or CPUs");
		return -EINVAL;
	}
	c->cmd_beside = true;
	return fork_command(c, argv);
}

static int add_target(struct pr_counter *c, const struct target *t, bool per_thread)
{
	switch (t->kind) {
	case TARGET_PIDS:
		c->has_units = per_thread;
		return t->threads ? add_tids(c, t->pids, t->nr_pids)
				  : add_threads(c, t->pids, t->nr_pids);
	case TARGET_CPUS:
		c->has_units = true;
		if (!per_thread)
			return add_cpus(c, t->cpus, t->nr_cpus);
		if (!t->cpus && !t->nr_cpus)
			return add_every_thread(c);
		pr__log(&c->lg, PR_LOG_ERROR,
			"per-thread counts of the whole machine count every thread wherever it "
			"runs: give no CPU list");
		return -EINVAL;
	case TARGET_COMMAND:
		if (!per_thread) {
			int err = fork_command(c, t->argv);

			return err ? err : add_slot(c, c->cmd.pid, c->cmd.pid, -1);
		}
		pr__log(&c->lg, PR_LOG_ERROR,
			"per-thread counts need threads that exist when the counters open, "
			"and a command has none yet: count the running process instead");
		return -EINVAL;
	}
	return -EINVAL;
}

/* Every constructor: the counter, or nothing left open. */
static struct pr_counter *counter_open(const struct pr_event_desc *evs, size_t nr,
				       const struct target *t,
				       const struct pr_counter_opts *opts)
{
	struct pr_counter *c;
	int err;

	c = counter_new(t->kind, t->threads, evs, nr, opts, &err);
	if (!c) {
		errno = -err;
		return NULL;
	}
	if (!err)
		err = add_target(c, t, PR_OPTS_GET(opts, per_thread, false));
	if (!err)
		err = open_slots(c);
	if (!err)
		err = compact_slots(c);
	if (!err && PR_OPTS_GET(opts, command, NULL))
		err = add_command_beside(c, t, PR_OPTS_GET(opts, command, NULL));
	if (!err)
		return c;
	pr_counter_close(c);
	errno = -err;
	return NULL;
}

struct pr_counter *pr_counter_open_pids(const struct pr_event_desc *evs, size_t nr,
					const pid_t *pids, size_t nr_pids,
					const struct pr_counter_opts *opts)
{
	struct target t = { .kind = TARGET_PIDS, .pids = pids, .nr_pids = nr_pids };

	return counter_open(evs, nr, &t, opts);
}

struct pr_counter *pr_counter_open_tids(const struct pr_event_desc *evs, size_t nr,
					const pid_t *tids, size_t nr_tids,
					const struct pr_counter_opts *opts)
{
	struct target t = {
		.kind = TARGET_PIDS, .pids = tids, .nr_pids = nr_tids, .threads = true };

	return counter_open(evs, nr, &t, opts);
}

struct pr_counter *pr_counter_open_cpus(const struct pr_event_desc *evs, size_t nr,
					const int *cpus, size_t nr_cpus,
					const struct pr_counter_opts *opts)
{
	struct target t = { .kind = TARGET_CPUS, .cpus = cpus, .nr_cpus = nr_cpus };

	return counter_open(evs, nr, &t, opts);
}

struct pr_counter *pr_counter_open_command(const struct pr_event_desc *evs, size_t nr,
					   char *const argv[],
					   const struct pr_counter_opts *opts)
{
	struct target t = { .kind = TARGET_COMMAND, .argv = argv };

	return counter_open(evs, nr, &t, opts);
}

void pr_counter_close(struct pr_counter *c)
{
	if (!c)
		return;
	for (size_t s = c->nr_slots; c->fds && s-- > 0;)
		close_slot(c, s);
	pr__command_release(&c->cmd);
	free(c->cmd_name);
	free(c->buf);
	free(c->ids);
	free(c->fds);
	free(c->slots);
	free(c->opened);
	free(c->unsupported);
	free(c->attrs);
	free(c->evs);
	free(c);
}
