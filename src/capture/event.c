/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The event specification: the one place a perf_event_attr is built, the
 * hardware-cycles probe, and the advice given when the kernel refuses.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "capture/capture.h"

int pr__perf_event_open(struct perf_event_attr *attr, pid_t pid, int cpu,
			int group_fd, unsigned long flags)
{
	long fd = syscall(__NR_perf_event_open, attr, pid, cpu, group_fd, flags);

	return fd < 0 ? -errno : (int)fd;
}

/* The registers and stack copied per sample. */
static int check_copy(const struct pr_event_opts *opts, const struct pr_logger *lg)
{
	uint32_t stack = PR_OPTS_GET(opts, stack_size, PR_DEFAULT_STACK_SIZE);
	uint64_t regs = PR_OPTS_GET(opts, regs_user, PR_REGS_DWARF);
	uint64_t need = (UINT64_C(1) << PR_REG_SP) | (UINT64_C(1) << PR_REG_IP);

	if (stack < 8 || stack > PR_MAX_STACK_SIZE || stack % 8) {
		pr__log(lg, PR_LOG_ERROR,
			PR_LOG_SETTING_STACK_SIZE " %u is invalid: use a multiple of 8 between 8 and %u",
			stack, PR_MAX_STACK_SIZE);
		return -EINVAL;
	}
	if ((regs & need) != need || regs >> PR_REG_MAX) {
		pr__log(lg, PR_LOG_ERROR,
			"register mask 0x%llx is invalid: it must include SP and IP and name only registers 0-%d",
			(unsigned long long)regs, PR_REG_MAX - 1);
		return -EINVAL;
	}
	return 0;
}

static int check_opts(const struct pr_event_opts *opts,
		      enum pr_event_source source, unsigned int flags,
		      const struct pr_logger *lg)
{
	unsigned int mode = PR_OPTS_GET(opts, call_graph, PR_CALL_GRAPH_DWARF);
	uint64_t freq = PR_OPTS_GET(opts, freq, PR_DEFAULT_FREQ);

	if (!PR_OPTS_VALID(opts)) {
		pr__log(lg, PR_LOG_ERROR,
			"pr_event_opts: sz is wrong or unknown fields are set");
		return -EINVAL;
	}
	if (source == PR_SOURCE_EVENT && !PR_OPTS_GET(opts, desc, NULL)) {
		pr__log(lg, PR_LOG_ERROR,
			"pr_event_opts: PR_SOURCE_EVENT needs the event's description (desc)");
		return -EINVAL;
	}
	if (mode > PR_CALL_GRAPH_AUTO) {
		pr__log(lg, PR_LOG_ERROR,
			"pr_event_opts: call_graph %u is unknown: use PR_CALL_GRAPH_DWARF, "
			"PR_CALL_GRAPH_FP or PR_CALL_GRAPH_AUTO", mode);
		return -EINVAL;
	}
	/* A counter has no stack, registers or rate to check; the kernel's
	 * chain alone copies neither. */
	if (flags & PR_ATTR_COUNT)
		return 0;
	if (mode != PR_CALL_GRAPH_FP && check_copy(opts, lg))
		return -EINVAL;
	/* The kernel's sample_freq is a u64 but it rejects anything above
	 * perf_event_max_sample_rate; the reader checks that limit with the
	 * live value.  Zero frequency without a period samples nothing. */
	if (source != PR_SOURCE_CONTEXT_SWITCH && source != PR_SOURCE_EVENT &&
	    !PR_OPTS_GET(opts, period, 0) && freq == 0) {
		pr__log(lg, PR_LOG_ERROR, PR_LOG_SETTING_FREQUENCY " must be above 0 Hz");
		return -EINVAL;
	}
	return 0;
}

/* The logger of an event's own options, for the public calls (a reader
 * passes its own). */
static struct pr_logger opts_logger(const struct pr_event_opts *opts)
{
	struct pr_logger lg = {
		PR_OPTS_GET(opts, log, NULL), PR_OPTS_GET(opts, log_ctx, NULL)
	};

	return lg;
}

/* The event proper: what is counted and how often a sample is taken. */
static void set_event(struct perf_event_attr *attr, const struct pr_event_opts *opts,
		      enum pr_event_source source, unsigned int flags)
{
	uint64_t period = PR_OPTS_GET(opts, period, 0);
	const struct pr_event_desc *desc;

	switch (source) {
	case PR_SOURCE_EVENT:
		desc = opts->desc;
		attr->type = desc->type;
		attr->config = desc->config;
		if (!period && !PR_OPTS_GET(opts, freq, 0))
			period = pr_event_default_period(desc);
		break;
	case PR_SOURCE_HW_CYCLES:
		attr->type = PERF_TYPE_HARDWARE;
		attr->config = PERF_COUNT_HW_CPU_CYCLES;
		break;
	case PR_SOURCE_CONTEXT_SWITCH:
		/* Every switch out, and the switch records that time the
		 * switch back in: an off-CPU interval needs both ends. */
		attr->type = PERF_TYPE_SOFTWARE;
		attr->config = PERF_COUNT_SW_CONTEXT_SWITCHES;
		attr->sample_period = 1;
		attr->context_switch = 1;
		return;
	default:
		attr->type = PERF_TYPE_SOFTWARE;
		attr->config = PERF_COUNT_SW_CPU_CLOCK;
		break;
	}
	if (flags & PR_ATTR_COUNT)
		return;
	if (period) {
		attr->sample_period = period;
	} else {
		attr->freq = 1;
		attr->sample_freq = PR_OPTS_GET(opts, freq, PR_DEFAULT_FREQ);
	}
}

/* The counts read() returns, and a sample with PR_ATTR_READ_GROUP
 * carries: enough to scale a multiplexed count and to tell the group's
 * events apart. */
static uint64_t read_format(unsigned int flags)
{
	uint64_t rf = PERF_FORMAT_TOTAL_TIME_ENABLED | PERF_FORMAT_TOTAL_TIME_RUNNING |
		      PERF_FORMAT_ID;

	return flags & PR_ATTR_READ_GROUP ? rf | PERF_FORMAT_GROUP : rf;
}

/* What is left out of the count: the user's modifiers (":u", ":k"), and
 * the kernel when only user mode may be sampled. */
static void set_exclusions(struct perf_event_attr *attr, const struct pr_event_opts *opts,
			   enum pr_event_source source, unsigned int flags)
{
	const struct pr_event_desc *desc =
		source == PR_SOURCE_EVENT ? opts->desc : NULL;

	/* A switch-out sample is taken in the scheduler: excluding the
	 * kernel would leave an event that never fires. */
	attr->exclude_kernel = source != PR_SOURCE_CONTEXT_SWITCH &&
			       ((flags & PR_ATTR_USER_ONLY) ||
				(desc && desc->exclude_kernel));
	attr->exclude_user = desc && desc->exclude_user;
	attr->exclude_hv = 1;
}

/*
 * A software event or tracepoint asked for its period samples every hit,
 * whatever the period: the kernel (perf_swevent_event()) then reports
 * each one.  With a fixed period above 1 the period is left to the attr,
 * where the record parser finds it.  The clocks are timers, not counted
 * hits, and sample at their period either way.
 */
static bool counts_each_hit(const struct perf_event_attr *attr)
{
	if (attr->freq || attr->sample_period <= 1)
		return false;
	if (attr->type == PERF_TYPE_TRACEPOINT)
		return true;
	return attr->type == PERF_TYPE_SOFTWARE && attr->config != PERF_COUNT_SW_CPU_CLOCK &&
	       attr->config != PERF_COUNT_SW_TASK_CLOCK;
}

/* A counter: read, never sampled, so nothing of the sampling set. */
static void set_counting(struct perf_event_attr *attr, unsigned int flags)
{
	attr->read_format = read_format(flags);
	attr->inherit = !!(flags & PR_ATTR_INHERIT);
	attr->disabled = !(flags & PR_ATTR_GROUP_MEMBER);
	attr->enable_on_exec = (flags & PR_ATTR_ENABLE_ON_EXEC) &&
			       !(flags & PR_ATTR_GROUP_MEMBER);
	attr->use_clockid = 1;
	attr->clockid = CLOCK_MONOTONIC;
	/* Beside sampling events (a read group's members), the id must sit
	 * where theirs does: perf's tools refuse a file whose events
	 * disagree ("non matching sample_type", "non matching
	 * sample_id_all").  A counter writes no record, so this costs
	 * nothing. */
	if (flags & PR_ATTR_SHARED_RING) {
		attr->sample_type = PERF_SAMPLE_IDENTIFIER;
		attr->sample_id_all = 1;
	}
}

/*
 * The user call stack as the mode asks: registers and a stack copy to
 * unwind with DWARF, the kernel's frame-pointer walk, or both.  The
 * chain's depth is left to the kernel (sample_max_stack 0: its
 * kernel.perf_event_max_stack), as perf record leaves it.
 */
static void set_call_graph(struct perf_event_attr *attr, const struct pr_event_opts *opts)
{
	enum pr_call_graph mode = PR_OPTS_GET(opts, call_graph, PR_CALL_GRAPH_DWARF);

	if (mode != PR_CALL_GRAPH_FP) {
		attr->sample_type |= PERF_SAMPLE_REGS_USER | PERF_SAMPLE_STACK_USER;
		attr->sample_regs_user = PR_OPTS_GET(opts, regs_user, PR_REGS_DWARF);
		attr->sample_stack_user = PR_OPTS_GET(opts, stack_size,
						      PR_DEFAULT_STACK_SIZE);
	}
	/* Alone, the copy is unwound with DWARF: the kernel's frame-pointer
	 * walk would be wrong for -O2 code and costs ring bytes. */
	attr->exclude_callchain_user = mode == PR_CALL_GRAPH_DWARF;
	attr->exclude_callchain_kernel =
		!(PR_OPTS_HAS(opts, kernel_callchain) && opts->kernel_callchain);
}

int pr__event_attr(const struct pr_event_opts *opts, enum pr_event_source source,
		   unsigned int flags, struct perf_event_attr *attr,
		   const struct pr_logger *lg)
{
	bool sideband = !(flags & (PR_ATTR_NO_SIDEBAND | PR_ATTR_COUNT));
	int err;

	if (!attr || (unsigned int)source > PR_SOURCE_EVENT)
		return -EINVAL;
	err = check_opts(opts, source, flags, lg);
	if (err)
		return err;

	memset(attr, 0, sizeof(*attr));
	attr->size = sizeof(*attr);
	set_event(attr, opts, source, flags);
	set_exclusions(attr, opts, source, flags);
	if (flags & PR_ATTR_COUNT) {
		set_counting(attr, flags);
		return 0;
	}

	attr->sample_type = PERF_SAMPLE_IP | PERF_SAMPLE_TID | PERF_SAMPLE_TIME |
			    PERF_SAMPLE_CPU | PERF_SAMPLE_CALLCHAIN;
	if (!counts_each_hit(attr))
		attr->sample_type |= PERF_SAMPLE_PERIOD;
	/* A tracepoint's fields (fd, count, the task switched to...) are
	 * the point of sampling it: perf record asks for them too.  Past
	 * the identifier's place, so events that share a ring still agree
	 * on where it is. */
	if (attr->type == PERF_TYPE_TRACEPOINT)
		attr->sample_type |= PERF_SAMPLE_RAW;
	/* With one event per ring the ring says which event wrote a record;
	 * once several share it, only the identifier (at a fixed place in
	 * every record type) does. */
	if (flags & PR_ATTR_SHARED_RING)
		attr->sample_type |= PERF_SAMPLE_IDENTIFIER;
	if (flags & PR_ATTR_READ_GROUP) {
		attr->sample_type |= PERF_SAMPLE_READ;
		attr->read_format = read_format(flags);
	}
	set_call_graph(attr, opts);

	/* Side-band records: enough to rebuild every task's address space.
	 * mmap_data too: the read-only segment holding .eh_frame_hdr is not
	 * executable, and unwinders that read unwind tables through the
	 * process's mappings (perf's does) need it mapped. */
	attr->mmap = sideband;
	attr->mmap2 = sideband;
	attr->mmap_data = sideband;
	attr->comm = sideband;
	attr->comm_exec = sideband;
	attr->task = sideband;
	attr->sample_id_all = 1;
	/* One clock for every event, and one the caller can read: the end
	 * of a capture (clock_gettime) closes the waits still open then. */
	attr->use_clockid = 1;
	attr->clockid = CLOCK_MONOTONIC;

	attr->disabled = !(flags & PR_ATTR_GROUP_MEMBER);
	attr->inherit = !!(flags & PR_ATTR_INHERIT);
	attr->enable_on_exec = (flags & PR_ATTR_ENABLE_ON_EXEC) &&
			       !(flags & PR_ATTR_GROUP_MEMBER);
	attr->watermark = 1;
	attr->wakeup_watermark = PR_OPTS_GET(opts, wakeup_bytes, 0);
	return 0;
}

int pr_event_attr(const struct pr_event_opts *opts, enum pr_event_source source,
		  unsigned int flags, struct perf_event_attr *attr)
{
	struct pr_logger lg = opts_logger(opts);

	return pr__event_attr(opts, source, flags, attr, &lg);
}

int pr_event_source_of(const struct perf_event_attr *attr)
{
	if (!attr)
		return -EINVAL;
	if (attr->type == PERF_TYPE_HARDWARE && attr->config == PERF_COUNT_HW_CPU_CYCLES)
		return PR_SOURCE_HW_CYCLES;
	if (attr->type == PERF_TYPE_SOFTWARE && attr->config == PERF_COUNT_SW_CPU_CLOCK)
		return PR_SOURCE_CPU_CLOCK;
	/* Sampling context switches is an event like any other; the off-CPU
	 * source is the one that also asked for the switch records. */
	if (attr->type == PERF_TYPE_SOFTWARE &&
	    attr->config == PERF_COUNT_SW_CONTEXT_SWITCHES && attr->context_switch)
		return PR_SOURCE_CONTEXT_SWITCH;
	return PR_SOURCE_EVENT;
}

/* The errors with which a kernel says "no usable PMU here" or "not for you":
 * falling back to cpu-clock is right for these and only these. */
static bool is_pmu_unavailable(int err)
{
	switch (err) {
	case EOPNOTSUPP:
	case ENOENT:
	case ENODEV:
	case EINVAL:
	case EACCES:
		return true;
	default:
		return false;
	}
}

/* Open (and close) a hardware cycles event on ourselves with `flags`. */
static int try_hw_cycles(const struct pr_event_opts *opts, unsigned int flags,
			 const struct pr_logger *lg)
{
	struct perf_event_attr attr;
	int fd;

	pr__event_attr(opts, PR_SOURCE_HW_CYCLES, flags, &attr, lg);
	fd = pr__perf_event_open(&attr, 0, -1, -1, PERF_FLAG_FD_CLOEXEC);
	if (fd >= 0)
		close(fd);
	return fd < 0 ? fd : 0;
}

int pr__event_probe(const struct pr_event_opts *opts, const struct pr_logger *lg)
{
	struct perf_event_attr attr;
	int err;

	/* Bad options are the caller's error, not a missing PMU. */
	err = pr__event_attr(opts, PR_SOURCE_CPU_CLOCK, 0, &attr, lg);
	if (err)
		return err;
	if (!(PR_OPTS_HAS(opts, prefer_hw_cycles) && opts->prefer_hw_cycles))
		return PR_SOURCE_CPU_CLOCK;

	err = try_hw_cycles(opts, 0, lg);
	/* Under perf_event_paranoid >= 2 only user-mode counting is allowed;
	 * the reader falls back to that too, so probe what it will open. */
	if (err == -EACCES || err == -EPERM)
		err = try_hw_cycles(opts, PR_ATTR_USER_ONLY, lg);
	if (!err) {
		pr__log(lg, PR_LOG_INFO, "sampling hardware cpu-cycles");
		return PR_SOURCE_HW_CYCLES;
	}
	if (is_pmu_unavailable(-err)) {
		pr__log(lg, PR_LOG_INFO,
			"hardware cpu-cycles unavailable (%s); sampling cpu-clock",
			strerror(-err));
		return PR_SOURCE_CPU_CLOCK;
	}
	pr__log(lg, PR_LOG_ERROR, "probing hardware cpu-cycles failed: %s",
		strerror(-err));
	return err;
}

int pr_event_probe(const struct pr_event_opts *opts)
{
	struct pr_logger lg = opts_logger(opts);

	return pr__event_probe(opts, &lg);
}

void pr__explain_open_error(const struct pr_logger *lg, int err,
			    const struct perf_event_attr *attr, pid_t pid,
			    int cpu)
{
	long paranoid = pr__read_sysctl("/proc/sys/kernel/perf_event_paranoid", -99);
	long max_rate = pr__read_sysctl("/proc/sys/kernel/perf_event_max_sample_rate", -1);
	char where[64];

	if (pid == -1)
		snprintf(where, sizeof(where), "CPU %d", cpu);
	else if (pid == 0)
		snprintf(where, sizeof(where), "the calling thread");
	else if (cpu < 0)
		snprintf(where, sizeof(where), "thread %d", (int)pid);
	else
		snprintf(where, sizeof(where), "thread %d on CPU %d", (int)pid, cpu);

	switch (err) {
	case EACCES:
	case EPERM:
		pr__log(lg, PR_LOG_ERROR,
			"perf_event_open for %s: %s. kernel.perf_event_paranoid is %ld "
			"(%s); run as root, or give the program CAP_PERFMON "
			"(Linux 5.8+, CAP_SYS_ADMIN before), or lower the setting with "
			"'sysctl -w kernel.perf_event_paranoid=%d'",
			where, strerror(err), paranoid,
			paranoid >= 2 ? "only your own processes, user mode" :
			paranoid == 1 ? "your own processes, no system-wide sampling" :
			paranoid == -99 ? "unreadable" : "permissive",
			pid == -1 ? 0 : 1);
		break;
	case EMFILE:
	case ENFILE:
		pr__log(lg, PR_LOG_ERROR,
			"perf_event_open for %s: too many open files (one event per thread and CPU); "
			"raise the limit with 'ulimit -n' and retry", where);
		break;
	case EINVAL:
		pr__log(lg, PR_LOG_ERROR,
			"perf_event_open for %s: the kernel rejected the event "
			"(%s%llu %s, %llu-byte stacks); kernel.perf_event_max_sample_rate is %ld",
			where, attr->freq ? "" : "period ",
			(unsigned long long)(attr->freq ? attr->sample_freq : attr->sample_period),
			attr->freq ? "Hz" : "", (unsigned long long)attr->sample_stack_user,
			max_rate);
		break;
	case ESRCH:
		pr__log(lg, PR_LOG_ERROR, "perf_event_open for %s: no such process", where);
		break;
	case ENOSYS:
		pr__log(lg, PR_LOG_ERROR,
			"perf_event_open is not available: the kernel was built without "
			"CONFIG_PERF_EVENTS or a seccomp filter blocks it");
		break;
	default:
		pr__log(lg, PR_LOG_ERROR, "perf_event_open for %s: %s", where,
			strerror(err));
		break;
	}
}
