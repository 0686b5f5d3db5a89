/* SPDX-License-Identifier: Apache-2.0 */
/* The event specification and option validation, without a kernel. */
#include <check.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "checkmain.h"
#include "base/base.h"

static struct perf_event_attr build(const struct pr_event_opts *o,
				    enum pr_event_source src, unsigned int flags)
{
	struct perf_event_attr a;

	ck_assert_int_eq(pr_event_attr(o, src, flags, &a), 0);
	return a;
}

/* Every side-band record asked for (1) or none (0). */
static void assert_sideband(const struct perf_event_attr *a, unsigned int on)
{
	ck_assert_uint_eq(a->mmap, on);
	ck_assert_uint_eq(a->mmap2, on);
	ck_assert_uint_eq(a->mmap_data, on);
	ck_assert_uint_eq(a->comm, on);
	ck_assert_uint_eq(a->comm_exec, on);
	ck_assert_uint_eq(a->task, on);
}

START_TEST(default_attr_samples_cpu_clock_at_99_hz_with_dwarf_registers)
{
	struct perf_event_attr a = build(NULL, PR_SOURCE_CPU_CLOCK, 0);

	ck_assert_uint_eq(a.size, sizeof(a));
	ck_assert_uint_eq(a.type, PERF_TYPE_SOFTWARE);
	ck_assert_uint_eq(a.config, PERF_COUNT_SW_CPU_CLOCK);
	ck_assert_uint_eq(a.freq, 1);
	ck_assert_uint_eq(a.sample_freq, 99);
	ck_assert_uint_eq(a.sample_type,
			  PERF_SAMPLE_IP | PERF_SAMPLE_TID | PERF_SAMPLE_TIME |
			  PERF_SAMPLE_CPU | PERF_SAMPLE_PERIOD | PERF_SAMPLE_CALLCHAIN |
			  PERF_SAMPLE_REGS_USER | PERF_SAMPLE_STACK_USER);
	/* AX..IP and R8..R15; no flags, no segment registers. */
	ck_assert_uint_eq(a.sample_regs_user, 0xff01ffull);
	ck_assert_uint_eq(a.sample_regs_user, PR_REGS_DWARF);
	ck_assert_uint_eq(a.sample_stack_user, 8192);
	ck_assert_uint_eq(a.exclude_callchain_user, 1);
	ck_assert_uint_eq(a.exclude_callchain_kernel, 1);
	ck_assert_uint_eq(a.exclude_kernel, 0);
	assert_sideband(&a, 1);
	ck_assert_uint_eq(a.sample_id_all, 1);
	ck_assert_uint_eq(a.disabled, 1);
	ck_assert_uint_eq(a.inherit, 0);
	ck_assert_uint_eq(a.enable_on_exec, 0);
}
END_TEST

START_TEST(target_flags_shape_the_attr)
{
	struct perf_event_attr a = build(NULL, PR_SOURCE_CPU_CLOCK,
					 PR_ATTR_INHERIT | PR_ATTR_SHARED_RING |
					 PR_ATTR_ENABLE_ON_EXEC | PR_ATTR_USER_ONLY);

	ck_assert(a.sample_type & PERF_SAMPLE_IDENTIFIER);
	ck_assert_uint_eq(a.inherit, 1);
	ck_assert_uint_eq(a.enable_on_exec, 1);
	ck_assert_uint_eq(a.exclude_kernel, 1);
	ck_assert_uint_eq(a.disabled, 1);
}
END_TEST

START_TEST(options_set_rate_period_stack_and_kernel_chains)
{
	PR_OPTS(pr_event_opts, o, .freq = 997, .stack_size = 16384,
		.kernel_callchain = true, .wakeup_bytes = 4096);
	PR_OPTS(pr_event_opts, p, .period = 250000);
	struct perf_event_attr a = build(&o, PR_SOURCE_HW_CYCLES, 0);
	struct perf_event_attr b = build(&p, PR_SOURCE_CPU_CLOCK, 0);

	ck_assert_uint_eq(a.type, PERF_TYPE_HARDWARE);
	ck_assert_uint_eq(a.config, PERF_COUNT_HW_CPU_CYCLES);
	ck_assert_uint_eq(a.sample_freq, 997);
	ck_assert_uint_eq(a.sample_stack_user, 16384);
	ck_assert_uint_eq(a.exclude_callchain_kernel, 0);
	ck_assert_uint_eq(a.exclude_callchain_user, 1);
	ck_assert_uint_eq(a.watermark, 1);
	ck_assert_uint_eq(a.wakeup_watermark, 4096);
	ck_assert_uint_eq(b.freq, 0);
	ck_assert_uint_eq(b.sample_period, 250000);
}
END_TEST

static char last_log[1024];

static void keep_log(enum pr_log_level level, const char *msg, void *ctx)
{
	(void)level;
	(void)ctx;
	snprintf(last_log, sizeof(last_log), "%s", msg);
}

/* Build with `o`, whose log is keep_log. */
static int attr_err(struct pr_event_opts *o)
{
	struct perf_event_attr a;

	o->log = keep_log;
	last_log[0] = 0;
	return pr_event_attr(o, PR_SOURCE_CPU_CLOCK, 0, &a);
}

START_TEST(stack_size_must_be_a_multiple_of_8_up_to_65528)
{
	static const uint32_t bad[] = { 4, 12, 8191, 65529, 65536, 1u << 20 };
	static const uint32_t good[] = { 8, 512, 8192, 32000, 65528 };

	for (size_t i = 0; i < PR_ARRAY_SIZE(bad); i++) {
		PR_OPTS(pr_event_opts, o, .stack_size = bad[i]);

		ck_assert_int_eq(attr_err(&o), -EINVAL);
		ck_assert_msg(strstr(last_log, "multiple of 8"), "%s", last_log);
	}
	for (size_t i = 0; i < PR_ARRAY_SIZE(good); i++) {
		PR_OPTS(pr_event_opts, o, .stack_size = good[i]);

		ck_assert_int_eq(attr_err(&o), 0);
	}
}
END_TEST

START_TEST(call_graph_modes_record_the_chain_the_copy_or_both)
{
	PR_OPTS(pr_event_opts, fp, .call_graph = PR_CALL_GRAPH_FP, .kernel_callchain = true);
	PR_OPTS(pr_event_opts, aut, .call_graph = PR_CALL_GRAPH_AUTO, .stack_size = 2048);
	PR_OPTS(pr_event_opts, dw, .call_graph = PR_CALL_GRAPH_DWARF);
	struct perf_event_attr f = build(&fp, PR_SOURCE_CPU_CLOCK, 0);
	struct perf_event_attr a = build(&aut, PR_SOURCE_CPU_CLOCK, 0);
	struct perf_event_attr d = build(&dw, PR_SOURCE_CPU_CLOCK, 0);
	struct perf_event_attr def = build(NULL, PR_SOURCE_CPU_CLOCK, 0);
	uint64_t copy = PERF_SAMPLE_REGS_USER | PERF_SAMPLE_STACK_USER;

	/* fp: perf record --call-graph fp's bits: the chain, nothing copied. */
	ck_assert(f.sample_type & PERF_SAMPLE_CALLCHAIN);
	ck_assert_uint_eq(f.sample_type & copy, 0);
	ck_assert_uint_eq(f.sample_regs_user, 0);
	ck_assert_uint_eq(f.sample_stack_user, 0);
	ck_assert_uint_eq(f.exclude_callchain_user, 0);
	ck_assert_uint_eq(f.exclude_callchain_kernel, 0);
	/* The depth is the kernel's setting, as perf record leaves it. */
	ck_assert_uint_eq(f.sample_max_stack, 0);
	/* auto: the chain and the copy. */
	ck_assert_uint_eq(a.sample_type & (copy | PERF_SAMPLE_CALLCHAIN),
			  copy | PERF_SAMPLE_CALLCHAIN);
	ck_assert_uint_eq(a.sample_stack_user, 2048);
	ck_assert_uint_eq(a.sample_regs_user, PR_REGS_DWARF);
	ck_assert_uint_eq(a.exclude_callchain_user, 0);
	ck_assert_uint_eq(a.exclude_callchain_kernel, 1);
	/* dwarf, the default: the copy, and no user chain. */
	ck_assert_uint_eq(d.sample_type & copy, copy);
	ck_assert_uint_eq(d.exclude_callchain_user, 1);
	ck_assert_int_eq(memcmp(&d, &def, sizeof(d)), 0);
}
END_TEST

START_TEST(fp_mode_copies_nothing_so_its_copy_options_are_unused)
{
	/* Out of range for a copy, and no copy is made. */
	PR_OPTS(pr_event_opts, o, .call_graph = PR_CALL_GRAPH_FP, .stack_size = 12,
		.regs_user = 1);
	PR_OPTS(pr_event_opts, bad, .call_graph = (enum pr_call_graph)3);

	ck_assert_int_eq(attr_err(&o), 0);
	ck_assert_int_eq(attr_err(&bad), -EINVAL);
	ck_assert_msg(strstr(last_log, "call_graph 3 is unknown"), "%s", last_log);
}
END_TEST

START_TEST(register_mask_must_hold_sp_and_ip)
{
	PR_OPTS(pr_event_opts, no_sp, .regs_user = PR_REGS_DWARF & ~(1ull << PR_REG_SP));
	PR_OPTS(pr_event_opts, high, .regs_user = PR_REGS_DWARF | (1ull << 40));
	PR_OPTS(pr_event_opts, minimal,
		.regs_user = (1ull << PR_REG_SP) | (1ull << PR_REG_IP));

	ck_assert_int_eq(attr_err(&no_sp), -EINVAL);
	ck_assert_int_eq(attr_err(&high), -EINVAL);
	ck_assert_int_eq(attr_err(&minimal), 0);
}
END_TEST

/* libbpf's rule: a caller's larger struct is fine as long as the fields this
 * library does not know are zero. */
START_TEST(options_struct_grows_without_breaking_callers)
{
	struct {
		struct pr_event_opts o;
		uint64_t future_field;
	} bigger;
	struct pr_event_opts older;

	memset(&bigger, 0, sizeof(bigger));
	bigger.o.sz = sizeof(bigger);
	bigger.o.freq = 123;
	ck_assert_int_eq(attr_err(&bigger.o), 0);
	bigger.future_field = 1;
	ck_assert_int_eq(attr_err(&bigger.o), -EINVAL);
	ck_assert_msg(strstr(last_log, "unknown fields"), "%s", last_log);

	/* An older caller knows only the first fields: the rest default. */
	memset(&older, 0xff, sizeof(older));
	older.sz = offsetof(struct pr_event_opts, period);
	older.freq = 500;
	{
		struct perf_event_attr a;

		ck_assert_int_eq(pr_event_attr(&older, PR_SOURCE_CPU_CLOCK, 0, &a), 0);
		ck_assert_uint_eq(a.sample_freq, 500);
		ck_assert_uint_eq(a.sample_stack_user, 8192);
		ck_assert_uint_eq(a.sample_regs_user, PR_REGS_DWARF);
	}
}
END_TEST

START_TEST(cpu_lists_parse_like_the_kernels)
{
	int cpus[16];

	ck_assert_int_eq(pr_cpu_list_parse("0-3,8,10-11", cpus, 16), 7);
	ck_assert_int_eq(cpus[0], 0);
	ck_assert_int_eq(cpus[3], 3);
	ck_assert_int_eq(cpus[4], 8);
	ck_assert_int_eq(cpus[6], 11);
	ck_assert_int_eq(pr_cpu_list_parse("3,1,3,2\n", cpus, 16), 3);
	ck_assert_int_eq(cpus[0], 1);
	ck_assert_int_eq(cpus[2], 3);
	ck_assert_int_eq(pr_cpu_list_parse("0-20", cpus, 16), -E2BIG);
	ck_assert_int_eq(pr_cpu_list_parse("", cpus, 16), -EINVAL);
	ck_assert_int_eq(pr_cpu_list_parse("1,", cpus, 16), -EINVAL);
	ck_assert_int_eq(pr_cpu_list_parse("3-1", cpus, 16), -EINVAL);
	ck_assert_int_eq(pr_cpu_list_parse("a", cpus, 16), -EINVAL);
	ck_assert_int_eq(pr_cpu_list_parse("-1", cpus, 16), -EINVAL);
	ck_assert_int_eq(pr_cpu_list_parse("99999", cpus, 16), -EINVAL);
}
END_TEST

START_TEST(reader_rejects_bad_options_before_opening_anything)
{
	PR_OPTS(pr_event_opts, fast, .freq = 100000000);
	PR_OPTS(pr_reader_opts, too_fast, .event = &fast, .log = keep_log);
	PR_OPTS(pr_reader_opts, odd_ring, .ring_pages = 3, .log = keep_log);
	PR_OPTS(pr_reader_opts, no_event, .no_cpu_samples = true, .log = keep_log);
	pid_t self = getpid();

	last_log[0] = 0;
	errno = 0;
	ck_assert_ptr_null(pr_reader_open_pids(&self, 1, &too_fast));
	ck_assert_int_eq(errno, EINVAL);
	ck_assert_msg(strstr(last_log, "perf_event_max_sample_rate"), "%s", last_log);

	ck_assert_ptr_null(pr_reader_open_pids(&self, 1, &odd_ring));
	ck_assert_int_eq(errno, EINVAL);
	ck_assert_msg(strstr(last_log, "power of two"), "%s", last_log);

	/* Off-CPU only, without the off-CPU event's options. */
	ck_assert_ptr_null(pr_reader_open_pids(&self, 1, &no_event));
	ck_assert_int_eq(errno, EINVAL);
	ck_assert_msg(strstr(last_log, "no_cpu_samples without off_cpu"), "%s", last_log);

	ck_assert_ptr_null(pr_reader_open_pids(NULL, 0, NULL));
	ck_assert_int_eq(errno, EINVAL);
}
END_TEST

START_TEST(context_switch_source_samples_every_switch_out_with_switch_records)
{
	/* Frequency, period and the user-only flag are the CPU event's: the
	 * off-CPU event ignores them. */
	PR_OPTS(pr_event_opts, o, .freq = 4000, .period = 12345, .stack_size = 4096,
		.kernel_callchain = true);
	struct perf_event_attr cpu = build(&o, PR_SOURCE_CPU_CLOCK, PR_ATTR_SHARED_RING);
	struct perf_event_attr a = build(&o, PR_SOURCE_CONTEXT_SWITCH,
					 PR_ATTR_SHARED_RING | PR_ATTR_USER_ONLY);

	ck_assert_uint_eq(a.type, PERF_TYPE_SOFTWARE);
	ck_assert_uint_eq(a.config, PERF_COUNT_SW_CONTEXT_SWITCHES);
	ck_assert_uint_eq(a.freq, 0);
	ck_assert_uint_eq(a.sample_period, 1);
	ck_assert_uint_eq(a.context_switch, 1);
	ck_assert_uint_eq(a.exclude_kernel, 0);
	ck_assert_uint_eq(a.sample_type, cpu.sample_type);
	ck_assert_uint_eq(a.sample_regs_user, cpu.sample_regs_user);
	ck_assert_uint_eq(a.sample_stack_user, 4096);
	ck_assert_uint_eq(a.exclude_callchain_kernel, 0);
	ck_assert_uint_eq(a.exclude_callchain_user, 1);
	assert_sideband(&a, 1);
	ck_assert_uint_eq(cpu.context_switch, 0);

	/* Its stack copy is checked as the CPU event's. */
	PR_OPTS(pr_event_opts, odd, .stack_size = 4100);
	ck_assert_int_eq(pr_event_attr(&odd, PR_SOURCE_CONTEXT_SWITCH, 0, &a), -EINVAL);
	ck_assert_int_eq(pr_event_attr(NULL, (enum pr_event_source)3, 0, &a), -EINVAL);
}
END_TEST

START_TEST(no_sideband_flag_clears_every_sideband_record)
{
	struct perf_event_attr a = build(NULL, PR_SOURCE_CONTEXT_SWITCH,
					 PR_ATTR_NO_SIDEBAND | PR_ATTR_INHERIT);

	assert_sideband(&a, 0);
	/* Still needed: the task and time of its own records. */
	ck_assert_uint_eq(a.sample_id_all, 1);
	ck_assert_uint_eq(a.context_switch, 1);
	ck_assert_uint_eq(a.inherit, 1);
}
END_TEST

START_TEST(every_event_uses_the_monotonic_clock_and_says_its_source)
{
	static const enum pr_event_source all[] = {
		PR_SOURCE_CPU_CLOCK, PR_SOURCE_HW_CYCLES, PR_SOURCE_CONTEXT_SWITCH,
	};
	struct perf_event_attr a;

	for (size_t i = 0; i < sizeof(all) / sizeof(all[0]); i++) {
		a = build(NULL, all[i], 0);
		ck_assert_uint_eq(a.use_clockid, 1);
		ck_assert_int_eq(a.clockid, CLOCK_MONOTONIC);
		ck_assert_int_eq(pr_event_source_of(&a), (int)all[i]);
	}
	a.config = PERF_COUNT_SW_PAGE_FAULTS;
	ck_assert_int_eq(pr_event_source_of(&a), PR_SOURCE_EVENT);
	a.type = PERF_TYPE_TRACEPOINT;
	ck_assert_int_eq(pr_event_source_of(&a), PR_SOURCE_EVENT);
	ck_assert_int_eq(pr_event_source_of(NULL), -EINVAL);
}
END_TEST

/* Context switches sampled at a period, without the switch records, are
 * an event like page faults: not the off-CPU source. */
START_TEST(any_described_event_is_sampled_with_the_same_fields)
{
	struct pr_event_desc cs = { .type = PERF_TYPE_SOFTWARE,
				    .config = PERF_COUNT_SW_CONTEXT_SWITCHES,
				    .name = "context-switches" };
	PR_OPTS(pr_event_opts, o, .desc = &cs, .period = 7);
	struct perf_event_attr a = build(&o, PR_SOURCE_EVENT, PR_ATTR_SHARED_RING), ref;

	ck_assert_uint_eq(a.type, PERF_TYPE_SOFTWARE);
	ck_assert_uint_eq(a.config, PERF_COUNT_SW_CONTEXT_SWITCHES);
	ck_assert_uint_eq(a.sample_period, 7);
	ck_assert_uint_eq(a.freq, 0);
	ck_assert_uint_eq(a.context_switch, 0);
	ck_assert_int_eq(pr_event_source_of(&a), PR_SOURCE_EVENT);
	/* The same sample fields, stack and side-band as the CPU event; the
	 * period is the attr's (a_fixed_period_of_a_software_event_...). */
	ref = build(NULL, PR_SOURCE_CPU_CLOCK, PR_ATTR_SHARED_RING);
	ck_assert_uint_eq(a.sample_type | PERF_SAMPLE_PERIOD, ref.sample_type);
	ck_assert_uint_eq(a.sample_regs_user, ref.sample_regs_user);
	ck_assert_uint_eq(a.sample_stack_user, ref.sample_stack_user);
	assert_sideband(&a, 1);
	ck_assert_uint_eq(a.disabled, 1);

	/* Without a period or a frequency: every switch (a sparse event,
	 * issue 31); with a frequency, that. */
	PR_OPTS(pr_event_opts, f, .desc = &cs);
	a = build(&f, PR_SOURCE_EVENT, 0);
	ck_assert_uint_eq(a.freq, 0);
	ck_assert_uint_eq(a.sample_period, 1);
	f.freq = PR_DEFAULT_FREQ;
	a = build(&f, PR_SOURCE_EVENT, 0);
	ck_assert_uint_eq(a.freq, 1);
	ck_assert_uint_eq(a.sample_freq, PR_DEFAULT_FREQ);
}
END_TEST

/* Faults, switches, migrations and tracepoints at every hit unless told
 * otherwise; the clocks and hardware counters by frequency. */
START_TEST(sparse_events_default_to_every_hit)
{
	static const struct {
		uint32_t type;
		uint64_t config;
		uint64_t period;
	} cases[] = {
		{ PERF_TYPE_SOFTWARE, PERF_COUNT_SW_PAGE_FAULTS, 1 },
		{ PERF_TYPE_SOFTWARE, PERF_COUNT_SW_PAGE_FAULTS_MIN, 1 },
		{ PERF_TYPE_SOFTWARE, PERF_COUNT_SW_PAGE_FAULTS_MAJ, 1 },
		{ PERF_TYPE_SOFTWARE, PERF_COUNT_SW_CONTEXT_SWITCHES, 1 },
		{ PERF_TYPE_SOFTWARE, PERF_COUNT_SW_CPU_MIGRATIONS, 1 },
		{ PERF_TYPE_TRACEPOINT, 321, 1 },
		{ PERF_TYPE_SOFTWARE, PERF_COUNT_SW_CPU_CLOCK, 0 },
		{ PERF_TYPE_SOFTWARE, PERF_COUNT_SW_TASK_CLOCK, 0 },
		{ PERF_TYPE_HARDWARE, PERF_COUNT_HW_CPU_CYCLES, 0 },
	};

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct pr_event_desc d = { .type = cases[i].type, .config = cases[i].config };
		PR_OPTS(pr_event_opts, o, .desc = &d);
		struct perf_event_attr a = build(&o, PR_SOURCE_EVENT, 0);

		ck_assert_uint_eq(pr_event_default_period(&d), cases[i].period);
		ck_assert_uint_eq(a.freq, !cases[i].period);
		if (cases[i].period)
			ck_assert_uint_eq(a.sample_period, 1);
		else
			ck_assert_uint_eq(a.sample_freq, PR_DEFAULT_FREQ);
	}
	ck_assert_uint_eq(pr_event_default_period(NULL), 0);
}
END_TEST

/* The kernel samples every hit of a software event or tracepoint that
 * records its period; a fixed period then means nothing.  The period is
 * left to the attr, so that -c 100 takes a sample per 100 faults. */
START_TEST(a_fixed_period_of_a_software_event_is_kept_by_the_attr_not_the_sample)
{
	struct pr_event_desc pf = { .type = PERF_TYPE_SOFTWARE,
				    .config = PERF_COUNT_SW_PAGE_FAULTS, .name = "page-faults" };
	struct pr_event_desc tp = { .type = PERF_TYPE_TRACEPOINT, .config = 5,
				    .name = "syscalls:sys_enter_write" };
	PR_OPTS(pr_event_opts, o, .desc = &pf, .period = 100);
	struct perf_event_attr a = build(&o, PR_SOURCE_EVENT, 0);

	ck_assert(!(a.sample_type & PERF_SAMPLE_PERIOD));
	ck_assert_uint_eq(a.sample_period, 100);
	o.desc = &tp;
	a = build(&o, PR_SOURCE_EVENT, 0);
	ck_assert(!(a.sample_type & PERF_SAMPLE_PERIOD));
	/* By frequency the period changes from sample to sample; every hit
	 * (period 1) is the same either way; a hardware counter's overflow
	 * is its own. */
	o.desc = &pf;
	o.period = 0;
	a = build(&o, PR_SOURCE_EVENT, 0);
	ck_assert(a.sample_type & PERF_SAMPLE_PERIOD);
	o.desc = &tp;
	a = build(&o, PR_SOURCE_EVENT, 0);
	ck_assert_uint_eq(a.sample_period, 1);
	ck_assert(a.sample_type & PERF_SAMPLE_PERIOD);
	PR_OPTS(pr_event_opts, hw, .period = 100000);
	a = build(&hw, PR_SOURCE_HW_CYCLES, 0);
	ck_assert(a.sample_type & PERF_SAMPLE_PERIOD);
}
END_TEST

START_TEST(tracepoints_sample_every_hit_unless_told_otherwise)
{
	struct pr_event_desc tp = { .type = PERF_TYPE_TRACEPOINT, .config = 321,
				    .name = "sched:sched_switch" };
	PR_OPTS(pr_event_opts, o, .desc = &tp);
	struct perf_event_attr a = build(&o, PR_SOURCE_EVENT, 0);

	ck_assert_uint_eq(a.type, PERF_TYPE_TRACEPOINT);
	ck_assert_uint_eq(a.config, 321);
	ck_assert_uint_eq(a.freq, 0);
	ck_assert_uint_eq(a.sample_period, 1);
	/* Its fields, as perf record asks for them. */
	ck_assert(a.sample_type & PERF_SAMPLE_RAW);
	o.freq = 50;
	a = build(&o, PR_SOURCE_EVENT, 0);
	ck_assert_uint_eq(a.freq, 1);
	ck_assert_uint_eq(a.sample_freq, 50);
}
END_TEST

START_TEST(modifiers_exclude_user_or_kernel_mode)
{
	struct pr_event_desc pf = { .type = PERF_TYPE_SOFTWARE,
				    .config = PERF_COUNT_SW_PAGE_FAULTS, .name = "page-faults:u",
				    .exclude_kernel = true };
	PR_OPTS(pr_event_opts, o, .desc = &pf);
	struct perf_event_attr a = build(&o, PR_SOURCE_EVENT, 0);

	ck_assert_uint_eq(a.exclude_kernel, 1);
	ck_assert_uint_eq(a.exclude_user, 0);
	ck_assert_uint_eq(a.exclude_hv, 1);
	pf.exclude_kernel = false;
	pf.exclude_user = true;
	a = build(&o, PR_SOURCE_EVENT, 0);
	ck_assert_uint_eq(a.exclude_kernel, 0);
	ck_assert_uint_eq(a.exclude_user, 1);
	/* User mode only, whatever the event says, when only that may be
	 * sampled. */
	pf.exclude_user = false;
	a = build(&o, PR_SOURCE_EVENT, PR_ATTR_USER_ONLY);
	ck_assert_uint_eq(a.exclude_kernel, 1);
}
END_TEST

START_TEST(a_counter_reads_its_count_with_times_and_samples_nothing)
{
	struct pr_event_desc pf = { .type = PERF_TYPE_SOFTWARE,
				    .config = PERF_COUNT_SW_PAGE_FAULTS, .name = "page-faults" };
	PR_OPTS(pr_event_opts, o, .desc = &pf, .stack_size = 3 /* ignored */);
	const uint64_t times = PERF_FORMAT_TOTAL_TIME_ENABLED | PERF_FORMAT_TOTAL_TIME_RUNNING |
			       PERF_FORMAT_ID;
	struct perf_event_attr a = build(&o, PR_SOURCE_EVENT,
					 PR_ATTR_COUNT | PR_ATTR_INHERIT | PR_ATTR_ENABLE_ON_EXEC);

	ck_assert_uint_eq(a.sample_type, 0);
	ck_assert_uint_eq(a.sample_period, 0);
	ck_assert_uint_eq(a.freq, 0);
	ck_assert_uint_eq(a.sample_stack_user, 0);
	ck_assert_uint_eq(a.sample_regs_user, 0);
	assert_sideband(&a, 0);
	ck_assert_uint_eq(a.read_format, times);
	ck_assert_uint_eq(a.inherit, 1);
	ck_assert_uint_eq(a.disabled, 1);
	ck_assert_uint_eq(a.enable_on_exec, 1);

	/* A group member follows its leader. */
	a = build(&o, PR_SOURCE_EVENT, PR_ATTR_COUNT | PR_ATTR_READ_GROUP |
				       PR_ATTR_GROUP_MEMBER | PR_ATTR_ENABLE_ON_EXEC);
	ck_assert_uint_eq(a.read_format, times | PERF_FORMAT_GROUP);
	ck_assert_uint_eq(a.disabled, 0);
	ck_assert_uint_eq(a.enable_on_exec, 0);
}
END_TEST

START_TEST(a_read_group_puts_the_groups_counts_on_every_sample)
{
	struct perf_event_attr a = build(NULL, PR_SOURCE_CPU_CLOCK, PR_ATTR_READ_GROUP);

	ck_assert(a.sample_type & PERF_SAMPLE_READ);
	ck_assert_uint_eq(a.read_format, PERF_FORMAT_TOTAL_TIME_ENABLED |
					 PERF_FORMAT_TOTAL_TIME_RUNNING | PERF_FORMAT_ID |
					 PERF_FORMAT_GROUP);
	ck_assert(a.sample_type & PERF_SAMPLE_STACK_USER);
	a = build(NULL, PR_SOURCE_CPU_CLOCK, 0);
	ck_assert(!(a.sample_type & PERF_SAMPLE_READ));
	ck_assert_uint_eq(a.read_format, 0);
}
END_TEST

START_TEST(described_source_without_a_description_is_refused)
{
	struct perf_event_attr a;
	PR_OPTS(pr_event_opts, o, .period = 1);

	ck_assert_int_eq(pr_event_attr(&o, PR_SOURCE_EVENT, 0, &a), -EINVAL);
	ck_assert_int_eq(pr_event_attr(NULL, PR_SOURCE_EVENT, 0, &a), -EINVAL);
	ck_assert_int_eq(pr_event_attr(NULL, (enum pr_event_source)(PR_SOURCE_EVENT + 1), 0, &a),
			 -EINVAL);
}
END_TEST

START_TEST(missing_pid_is_reported_with_what_to_check)
{
	PR_OPTS(pr_reader_opts, o, .log = keep_log);
	/* Above the default pid_max of 4194304: never a live process. */
	pid_t ghost = 0x7ffffff0;

	last_log[0] = 0;
	ck_assert_ptr_null(pr_reader_open_pids(&ghost, 1, &o));
	ck_assert_int_eq(errno, ESRCH);
	ck_assert_msg(strstr(last_log, "no process with PID"), "%s", last_log);
}
END_TEST

START_TEST(null_arguments_are_refused_not_crashed_on)
{
	struct pr_record rec;
	char buf[64];

	pr_reader_close(NULL);
	ck_assert_int_eq(pr_reader_enable(NULL), -EINVAL);
	ck_assert_int_eq(pr_reader_read(NULL, &rec), -EINVAL);
	ck_assert_int_eq(pr_reader_consume(NULL, NULL, NULL), -EINVAL);
	ck_assert_int_eq(pr_reader_wait(NULL, 0), -EINVAL);
	ck_assert(!pr_reader_done(NULL));
	ck_assert_uint_eq(pr_reader_lost(NULL), 0);
	ck_assert_int_eq(pr_sample_reg(NULL, PR_REG_IP, NULL), -ENOENT);
	ck_assert_str_eq(pr_record_type_name(9999), "UNKNOWN");
	ck_assert_str_eq(pr_record_type_name(PR_RECORD_MMAP2), "MMAP2");
	ck_assert_ptr_nonnull(strstr(pr_strerror(-EBADMSG, buf, sizeof(buf)), "corrupt"));
	ck_assert_ptr_nonnull(strstr(pr_strerror(-ENOENT, buf, sizeof(buf)), "No such"));
}
END_TEST

int main(void)
{
	Suite *s = suite_create("event");
	TCase *tc = tcase_create("spec");

	tcase_add_test(tc, default_attr_samples_cpu_clock_at_99_hz_with_dwarf_registers);
	tcase_add_test(tc, target_flags_shape_the_attr);
	tcase_add_test(tc, options_set_rate_period_stack_and_kernel_chains);
	tcase_add_test(tc, stack_size_must_be_a_multiple_of_8_up_to_65528);
	tcase_add_test(tc, call_graph_modes_record_the_chain_the_copy_or_both);
	tcase_add_test(tc, fp_mode_copies_nothing_so_its_copy_options_are_unused);
	tcase_add_test(tc, register_mask_must_hold_sp_and_ip);
	tcase_add_test(tc, options_struct_grows_without_breaking_callers);
	tcase_add_test(tc, cpu_lists_parse_like_the_kernels);
	tcase_add_test(tc, reader_rejects_bad_options_before_opening_anything);
	tcase_add_test(tc, context_switch_source_samples_every_switch_out_with_switch_records);
	tcase_add_test(tc, no_sideband_flag_clears_every_sideband_record);
	tcase_add_test(tc, every_event_uses_the_monotonic_clock_and_says_its_source);
	tcase_add_test(tc, any_described_event_is_sampled_with_the_same_fields);
	tcase_add_test(tc, tracepoints_sample_every_hit_unless_told_otherwise);
	tcase_add_test(tc, sparse_events_default_to_every_hit);
	tcase_add_test(tc, a_fixed_period_of_a_software_event_is_kept_by_the_attr_not_the_sample);
	tcase_add_test(tc, modifiers_exclude_user_or_kernel_mode);
	tcase_add_test(tc, a_counter_reads_its_count_with_times_and_samples_nothing);
	tcase_add_test(tc, a_read_group_puts_the_groups_counts_on_every_sample);
	tcase_add_test(tc, described_source_without_a_description_is_refused);
	tcase_add_test(tc, missing_pid_is_reported_with_what_to_check);
	tcase_add_test(tc, null_arguments_are_refused_not_crashed_on);
	suite_add_tcase(s, tc);
	return run_suite(s);
}
