/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Counters enabled, disabled and read (counter.c opens them): a group's
 * counts come from one read(2) of its leader, summed over the slots.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include "capture/counter.h"

/* ---- enabling ---- */

/* The leaders are the groups' switches: members were built enabled. */
static int ioctl_leaders(struct pr_counter *c, unsigned long req)
{
	int err = 0;

	for (size_t s = 0; s < c->nr_slots; s++)
		for (size_t ev = 0; ev < c->nr_evs; ev++)
			if (is_leader(c, ev) && *fd_at(c, s, ev) >= 0 &&
			    ioctl(*fd_at(c, s, ev), req, 0) && !err)
				err = -errno;
	return err;
}

int pr_counter_enable(struct pr_counter *c)
{
	int err;

	if (!c)
		return -EINVAL;
	/* enable_on_exec starts the command's counters at its first
	 * instruction, not ours before the exec. */
	if (c->kind == TARGET_COMMAND && !c->cmd.started)
		return pr__command_start(&c->cmd, c->cmd_name, &c->lg);
	err = ioctl_leaders(c, PERF_EVENT_IOC_ENABLE);
	if (err)
		pr__log(&c->lg, PR_LOG_ERROR, "enabling the counters failed: %s",
			strerror(-err));
	else if (c->cmd_beside && !c->cmd.started)
		err = pr__command_start(&c->cmd, c->cmd_name, &c->lg);
	return err;
}

int pr_counter_disable(struct pr_counter *c)
{
	return c ? ioctl_leaders(c, PERF_EVENT_IOC_DISABLE) : -EINVAL;
}

pid_t pr_counter_child(const struct pr_counter *c)
{
	return c && (c->kind == TARGET_COMMAND || c->cmd_beside) ? c->cmd.pid : -1;
}

size_t pr_counter_nr_events(const struct pr_counter *c)
{
	return c ? c->nr_evs : 0;
}

const struct pr_event_desc *pr_counter_event(const struct pr_counter *c, size_t idx)
{
	return c && idx < c->nr_evs ? &c->evs[idx] : NULL;
}

/* ---- reading ---- */

static void add_count(struct pr_count *cnt, uint64_t value, uint64_t enabled,
		      uint64_t running)
{
	cnt->value += value;
	cnt->enabled += enabled;
	cnt->running += running;
}

/* The event of leader's group on slot `s` that has kernel id `id`. */
static size_t event_of_id(const struct pr_counter *c, size_t s, size_t leader, uint64_t id)
{
	for (size_t ev = leader; ev < c->nr_evs; ev++)
		if (c->evs[ev].leader == leader && *fd_at(c, s, ev) >= 0 &&
		    c->ids[s * c->nr_evs + ev] == id)
			return ev;
	return c->nr_evs;
}

/* One read of the group (or the event alone) `leader` leads on slot `s`,
 * added to `counts`. */
static int read_group(struct pr_counter *c, size_t s, size_t leader, struct pr_count *counts)
{
	bool group = c->attrs[leader].read_format & PERF_FORMAT_GROUP;
	size_t bytes = c->buf_words * sizeof(*c->buf);
	const uint64_t *v = c->buf;
	ssize_t n = read(*fd_at(c, s, leader), c->buf, bytes);

	if (n < 0)
		return -errno;
	if (!group) {
		/* value, enabled, running, id */
		if (n < (ssize_t)(4 * sizeof(*v)))
			return -EIO;
		add_count(&counts[leader], v[0], v[1], v[2]);
		return 0;
	}
	/* nr, enabled, running, then a value and an id per event */
	if (n < (ssize_t)(3 * sizeof(*v)) ||
	    (size_t)n < (3 + 2 * v[0]) * sizeof(*v))
		return -EIO;
	for (uint64_t k = 0; k < v[0]; k++) {
		size_t ev = event_of_id(c, s, leader, v[4 + 2 * k]);

		if (ev == c->nr_evs)
			return -EIO;
		add_count(&counts[ev], v[3 + 2 * k], v[1], v[2]);
	}
	return 0;
}

static int read_slot(struct pr_counter *c, size_t s, struct pr_count *counts)
{
	for (size_t ev = 0; ev < c->nr_evs; ev++) {
		int err = 0;

		if (is_leader(c, ev) && *fd_at(c, s, ev) >= 0)
			err = read_group(c, s, ev, counts);
		if (err) {
			pr__log(&c->lg, PR_LOG_ERROR, "reading the counts of %s failed: %s",
				c->evs[ev].name, strerror(-err));
			return err;
		}
	}
	return 0;
}

/* Read slots [first, end) summed into `counts`, then scale. */
static int read_slots(struct pr_counter *c, size_t first, size_t end,
		      struct pr_count *counts, size_t nr)
{
	if (!c || !counts || nr < c->nr_evs)
		return -EINVAL;
	memset(counts, 0, c->nr_evs * sizeof(*counts));
	for (size_t s = first; s < end; s++) {
		int err = read_slot(c, s, counts);

		if (err)
			return err;
	}
	for (size_t ev = 0; ev < c->nr_evs; ev++) {
		counts[ev].supported = !c->unsupported[ev];
		counts[ev].scaled = pr_count_scale(counts[ev].value, counts[ev].enabled,
						   counts[ev].running);
	}
	return 0;
}

int pr_counter_read(struct pr_counter *c, struct pr_count *counts, size_t nr)
{
	return read_slots(c, 0, c ? c->nr_slots : 0, counts, nr);
}

size_t pr_counter_nr_units(const struct pr_counter *c)
{
	return c && c->has_units ? c->nr_slots : 0;
}

int pr_counter_unit(const struct pr_counter *c, size_t i, struct pr_counter_unit *u)
{
	if (!c || !u)
		return -EINVAL;
	if (i >= pr_counter_nr_units(c))
		return -ERANGE;
	*u = (struct pr_counter_unit){
		.pid = c->slots[i].pid, .tid = c->slots[i].tid, .cpu = c->slots[i].cpu };
	return 0;
}

int pr_counter_read_unit(struct pr_counter *c, size_t i, struct pr_count *counts, size_t nr)
{
	if (c && i >= pr_counter_nr_units(c))
		return -ERANGE;
	return read_slots(c, i, i + 1, counts, nr);
}
