/* SPDX-License-Identifier: Apache-2.0 */
/*
 * A benchmark hook, set from the environment and never an option (as the
 * agent's upload clock is): with DWARFSAMPLE_BENCH_FIRST_NAMED set, the
 * live command notes when the first sample whose every user frame has a
 * name was named -- after the output's sink took it -- and says so on
 * standard error at the end, as CLOCK_MONOTONIC nanoseconds, and the CPU
 * the process had used by then (a figure a loaded machine moves less).
 * bench/vs-perf.sh subtracts the time it launched the command: start-up to
 * the first named sample, measured inside the profiler and not inferred
 * from its exit.
 */
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "cli.h"
#include "prsession.h"
#include "prsym.h"

#define FIRST_NAMED_ENV "DWARFSAMPLE_BENCH_FIRST_NAMED"

static _Atomic uint64_t first_named_ns, first_named_cpu_ns;

static bool all_named(const struct pr_sink_sample *s)
{
	const struct pr_stack *st = s->st;

	if (!s->sym || st->nr <= st->nr_kernel)
		return false;
	for (size_t i = st->nr_kernel; i < st->nr; i++) {
		struct pr_symbol sym;

		if (pr_symbolizer_symbolize(s->sym, s->rec->pid, &st->frames[i], &sym) ||
		    !sym.name)
			return false;
	}
	return true;
}

static int first_named_sample(void *ctx, const struct pr_sink_sample *s)
{
	struct timespec ts, cpu;
	uint64_t none = 0;

	(void)ctx;
	if (atomic_load_explicit(&first_named_ns, memory_order_relaxed) || !all_named(s))
		return 0;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &cpu);
	/* Two workers at once: the earlier stays. */
	if (atomic_compare_exchange_strong(&first_named_ns, &none,
					   (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec))
		atomic_store(&first_named_cpu_ns,
			     (uint64_t)cpu.tv_sec * 1000000000u + (uint64_t)cpu.tv_nsec);
	return 0;
}

/* Every worker shares the one timestamp: a share is the same context. */
static void *first_named_part(void *ctx)
{
	return ctx;
}

static int first_named_merge(void *ctx, void *part)
{
	(void)ctx;
	(void)part;
	return 0;
}

bool ds_first_named_sink(struct pr_sink *out)
{
	static char ctx;

	if (!getenv(FIRST_NAMED_ENV))
		return false;
	*out = (struct pr_sink){
		.sz = sizeof(*out), .ctx = &ctx, .sample = first_named_sample,
		.part_new = first_named_part, .part_merge = first_named_merge,
	};
	return true;
}

void ds_first_named_print(void)
{
	uint64_t ns = atomic_load(&first_named_ns);

	if (!getenv(FIRST_NAMED_ENV))
		return;
	if (ns)
		fprintf(stderr, "dwarfsample: %s: first named sample at %llu ns (CLOCK_MONOTONIC), "
			"after %llu ns of the process's CPU\n", FIRST_NAMED_ENV,
			(unsigned long long)ns, (unsigned long long)atomic_load(&first_named_cpu_ns));
	else
		fprintf(stderr, "dwarfsample: %s: no sample had every user frame named\n",
			FIRST_NAMED_ENV);
}
