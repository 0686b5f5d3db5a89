/* SPDX-License-Identifier: Apache-2.0 */
/*
 * What a reader opens, decided before anything is: its options checked,
 * the size of its rings chosen, and the attr of each of its events built
 * (the sampled ones, then the off-CPU one).  reader.c opens them.
 */
#include <errno.h>
#include <linux/capability.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "capture/reader.h"

/* Bytes of a sample besides its stack: header, identity, registers and a
 * kernel call chain of up to perf_event_max_stack (127) entries. */
#define MAX_SAMPLE_OVERHEAD 2048

static bool has_cap_ipc_lock(void)
{
	struct __user_cap_header_struct h = { _LINUX_CAPABILITY_VERSION_3, 0 };
	struct __user_cap_data_struct d[2];

	if (syscall(SYS_capget, &h, d))
		return false;
	return d[CAP_IPC_LOCK / 32].effective & (1u << (CAP_IPC_LOCK % 32));
}

/* The kernel lets a user lock perf_event_mlock_kb per CPU of ring memory
 * (beyond it, RLIMIT_MEMLOCK) unless the caller has CAP_IPC_LOCK or
 * perf_event_paranoid is -1.  Default to what fits, like perf record.
 * Larger stack copies get a larger ring, up to 4x, so that it holds about
 * 250 samples whatever their size: at 10 kHz, 32 KiB stacks filled 512
 * pages in 6 ms and lost 4.6% (BENCHMARKS.md).  `stack` is the largest
 * copy of any event: switch-out samples come at up to 20 000/s per CPU
 * on a switch-heavy program, faster than CPU samples.
 *
 * Sampled at a known `rate` (per CPU, 0: unknown) too slow to fill that
 * in a second, the ring holds a second of samples, and no less than
 * perf record's default (128 pages): at 99 Hz with 8 KiB stacks, 1 MiB
 * instead of 2 MiB per CPU (each tolerating a reader late by 0.6 s, where
 * the 10 kHz ring above tolerates 12 ms).  The kernel zeroes every page
 * of a ring when it is mapped: 6-10 % of a five-second live run's CPU at
 * 99 Hz on two CPUs went to that; and an agent on a host of many CPUs
 * holds them all. */
#define MIN_RING_PAGES 128

static uint32_t default_ring_pages(uint32_t stack, uint32_t samples, uint64_t rate)
{
	long page = sysconf(_SC_PAGESIZE);
	long kb;
	uint32_t pages = PR_DEFAULT_RING_PAGES;

	if (rate && rate < samples) {
		samples = (uint32_t)rate;
		pages = MIN_RING_PAGES;
	}
	while (pages < 4 * PR_DEFAULT_RING_PAGES &&
	       (uint64_t)pages * (uint64_t)page < (uint64_t)stack * samples)
		pages *= 2;

	if (has_cap_ipc_lock() ||
	    pr__read_sysctl("/proc/sys/kernel/perf_event_paranoid", 2) == -1)
		return pages;
	kb = pr__read_sysctl("/proc/sys/kernel/perf_event_mlock_kb", 516);
	/* One page of each mapping is the control page. */
	while (pages > 1 && (long)(pages + 1) * page > kb * 1024)
		pages /= 2;
	return pages;
}

static const struct pr_event_opts *cpu_opts(const struct pr_reader_opts *opts)
{
	return PR_OPTS_HAS(opts, event) ? opts->event : NULL;
}

static const struct pr_event_opts *off_cpu_opts(const struct pr_reader_opts *opts)
{
	return PR_OPTS_HAS(opts, off_cpu) ? opts->off_cpu : NULL;
}

static bool wants_cpu_samples(const struct pr_reader_opts *opts)
{
	return !PR_OPTS_GET(opts, no_cpu_samples, false);
}

static const struct pr_event_opts *event_list(const struct pr_reader_opts *opts)
{
	return PR_OPTS_GET(opts, events, NULL);
}

/* The sampled events: the list, or the one CPU event; none with
 * no_cpu_samples. */
static size_t nr_sampled(const struct pr_reader_opts *opts)
{
	if (!wants_cpu_samples(opts))
		return 0;
	return event_list(opts) ? PR_OPTS_GET(opts, nr_events, 0) : 1;
}

static const struct pr_event_opts *sampled_opts(const struct pr_reader_opts *opts,
						size_t i)
{
	return event_list(opts) ? &opts->events[i] : cpu_opts(opts);
}

/* The events whose options matter for sampling: a read group's leader
 * samples, its members only count. */
static size_t nr_sampling(const struct pr_reader_opts *opts)
{
	size_t n = nr_sampled(opts);

	return PR_OPTS_GET(opts, read_group, false) && n ? 1 : n;
}

/* The samples per second per CPU the sampled events ask for together: 0
 * (unknown) when one samples by period, or is an event of its own
 * (a tracepoint's rate is the program's). */
static uint64_t asked_rate(const struct pr_reader_opts *opts)
{
	uint64_t rate = 0;

	for (size_t i = 0; i < nr_sampling(opts); i++) {
		const struct pr_event_opts *ev = sampled_opts(opts, i);

		if (PR_OPTS_GET(ev, period, 0) || PR_OPTS_GET(ev, desc, NULL))
			return 0;
		rate += PR_OPTS_GET(ev, freq, PR_DEFAULT_FREQ);
	}
	return rate;
}

/* The stack an event copies: none with the kernel's chain alone. */
static uint32_t stack_copied(const struct pr_event_opts *ev)
{
	if (PR_OPTS_GET(ev, call_graph, PR_CALL_GRAPH_DWARF) == PR_CALL_GRAPH_FP)
		return 0;
	return PR_OPTS_GET(ev, stack_size, PR_DEFAULT_STACK_SIZE);
}

/* The largest stack copy any of the events takes. */
static uint32_t max_stack_size(const struct pr_reader_opts *opts)
{
	const struct pr_event_opts *off = off_cpu_opts(opts);
	uint32_t stack = off ? stack_copied(off) : 0;

	for (size_t i = 0; i < nr_sampling(opts); i++) {
		uint32_t s = stack_copied(sampled_opts(opts, i));

		if (s > stack)
			stack = s;
	}
	return stack;
}

/* The event list and the options that go with it. */
static int check_event_list(struct pr_reader *r, const struct pr_reader_opts *opts)
{
	size_t nr = PR_OPTS_GET(opts, nr_events, 0);

	if (!event_list(opts) != !nr) {
		pr__log(&r->lg, PR_LOG_ERROR,
			"pr_reader_opts: events and nr_events must be set together");
		return -EINVAL;
	}
	if (nr > PR_READER_MAX_SAMPLED) {
		pr__log(&r->lg, PR_LOG_ERROR,
			"%zu events asked for: a reader samples at most %d at once; "
			"split them over several runs", nr, PR_READER_MAX_SAMPLED);
		return -E2BIG;
	}
	if (nr && !wants_cpu_samples(opts)) {
		pr__log(&r->lg, PR_LOG_ERROR,
			"pr_reader_opts: no_cpu_samples contradicts an event list");
		return -EINVAL;
	}
	if (PR_OPTS_GET(opts, read_group, false) && !nr) {
		pr__log(&r->lg, PR_LOG_ERROR,
			"pr_reader_opts: read_group needs an event list (events)");
		return -EINVAL;
	}
	return 0;
}

/* The kernel's sample_freq is a u64 but it rejects anything above
 * perf_event_max_sample_rate. */
static int check_rate(struct pr_reader *r, const struct pr_event_opts *ev)
{
	uint64_t freq = PR_OPTS_GET(ev, freq, PR_DEFAULT_FREQ);
	long max_rate = pr__read_sysctl("/proc/sys/kernel/perf_event_max_sample_rate", -1);

	if (PR_OPTS_GET(ev, period, 0) || max_rate <= 0 || freq <= (uint64_t)max_rate)
		return 0;
	pr__log(&r->lg, PR_LOG_ERROR,
		"sampling at %llu Hz exceeds kernel.perf_event_max_sample_rate (%ld); "
		"lower the " PR_LOG_SETTING_FREQUENCY " or raise the limit with "
		"'sysctl -w kernel.perf_event_max_sample_rate=%llu'",
		(unsigned long long)freq, max_rate, (unsigned long long)freq);
	return -EINVAL;
}

int pr__reader_check_opts(struct pr_reader *r, const struct pr_reader_opts *opts)
{
	uint32_t pages = PR_OPTS_GET(opts, ring_pages, 0);
	uint32_t stack;
	int err;

	if (!PR_OPTS_VALID(opts)) {
		pr__log(&r->lg, PR_LOG_ERROR,
			"pr_reader_opts: sz is wrong or unknown fields are set");
		return -EINVAL;
	}
	if (!wants_cpu_samples(opts) && !off_cpu_opts(opts)) {
		pr__log(&r->lg, PR_LOG_ERROR,
			"pr_reader_opts: no_cpu_samples without off_cpu leaves no event to open");
		return -EINVAL;
	}
	err = check_event_list(r, opts);
	if (err)
		return err;
	if (PR_OPTS_GET(opts, cgroup, NULL)) {
		if (r->kind != TARGET_CPUS) {
			pr__log(&r->lg, PR_LOG_ERROR, "pr_reader_opts: a cgroup is sampled on "
				"CPUs: open it with pr_reader_open_cpus()");
			return -EINVAL;
		}
		r->cgroup_fd = pr__cgroup_open(opts->cgroup, &r->lg);
		if (r->cgroup_fd < 0)
			return r->cgroup_fd;
	}
	stack = max_stack_size(opts);
	/* Switches come in bursts far above any sampling rate: at 25 000
	 * switches/s, rings of 250 8 KiB samples lost 0-2 %, of 1000 none
	 * (BENCHMARKS.md). */
	if (!pages)
		pages = off_cpu_opts(opts) ? default_ring_pages(stack, 1024, 0) :
					     default_ring_pages(stack, 256, asked_rate(opts));
	if (pages & (pages - 1) || pages > PR_MAX_RING_PAGES) {
		pr__log(&r->lg, PR_LOG_ERROR,
			"ring size of %u pages is invalid: use a power of two up to %u",
			pages, PR_MAX_RING_PAGES);
		return -EINVAL;
	}
	/* A sample that cannot fit is dropped without even a LOST record
	 * (the kernel writes one only once something fits again). */
	if ((uint64_t)pages * (uint64_t)sysconf(_SC_PAGESIZE) <
	    (uint64_t)stack + MAX_SAMPLE_OVERHEAD) {
		pr__log(&r->lg, PR_LOG_ERROR,
			"a ring of %u pages cannot hold one sample with %u-byte stacks; "
			"use more " PR_LOG_SETTING_RING_PAGES " or a smaller "
			PR_LOG_SETTING_STACK_SIZE, pages, stack);
		return -EINVAL;
	}
	r->ring_pages = pages;
	for (size_t i = 0; i < nr_sampling(opts); i++) {
		const struct pr_event_opts *ev = sampled_opts(opts, i);

		err = check_rate(r, ev);
		if (err)
			return err;
		if (PR_OPTS_HAS(ev, kernel_callchain) && ev->kernel_callchain)
			r->kernel_requested = true;
	}
	return 0;
}

void pr__reader_set_max_stack(struct pr_reader *r)
{
	r->max_stack = 0;
	for (size_t i = 0; i < r->nr_attrs; i++) {
		const struct perf_event_attr *a = &r->attrs[i];

		/* The kernel takes its setting for a sample_max_stack of 0. */
		if ((a->sample_type & PERF_SAMPLE_CALLCHAIN) &&
		    !(a->exclude_callchain_user && a->exclude_callchain_kernel))
			r->max_stack = a->sample_max_stack ? a->sample_max_stack :
				       (uint32_t)pr__read_sysctl(
					       "/proc/sys/kernel/perf_event_max_stack", 127);
	}
}

/* Event `i` of the list, a read group's member when i > 0 of a group. */
static int build_listed(struct pr_reader *r, const struct pr_reader_opts *opts, size_t i)
{
	unsigned int flags = r->attr_flags;

	if (i)
		flags |= PR_ATTR_NO_SIDEBAND;
	if (r->nr_group) {
		flags |= PR_ATTR_READ_GROUP;
		if (i)
			flags |= PR_ATTR_COUNT | PR_ATTR_GROUP_MEMBER;
	}
	return pr__event_attr(&opts->events[i], PR_SOURCE_EVENT, flags,
			      &r->attrs[r->nr_attrs++], &r->lg);
}

/* The events, in the order pr_reader_event_attr() lists them: the sampled
 * ones, then the off-CPU one.  The first carries the side-band records of
 * the target; the kernel would report every mapping once per event. */
int pr__reader_build_attrs(struct pr_reader *r, const struct pr_reader_opts *opts)
{
	const struct pr_event_opts *off = off_cpu_opts(opts);
	size_t nr = nr_sampled(opts);
	int source, err = 0;

	if (nr + !!off > 1)
		r->attr_flags |= PR_ATTR_SHARED_RING;
	if (PR_OPTS_GET(opts, read_group, false))
		r->nr_group = nr;
	if (event_list(opts)) {
		for (size_t i = 0; !err && i < nr; i++)
			err = build_listed(r, opts, i);
	} else if (nr) {
		source = pr__event_probe(cpu_opts(opts), &r->lg);
		if (source < 0)
			return source;
		err = pr__event_attr(cpu_opts(opts), (enum pr_event_source)source,
				     r->attr_flags, &r->attrs[r->nr_attrs++], &r->lg);
	}
	if (!err && off) {
		unsigned int flags = r->attr_flags;

		if (r->nr_attrs)
			flags |= PR_ATTR_NO_SIDEBAND;
		err = pr__event_attr(off, PR_SOURCE_CONTEXT_SWITCH, flags,
				     &r->attrs[r->nr_attrs++], &r->lg);
	}
	for (size_t i = 0; !err && i < r->nr_attrs; i++)
		pr__parse_cfg_from_attr(&r->cfgs[i], &r->attrs[i]);
	if (!err)
		pr__reader_set_max_stack(r);
	return err;
}
