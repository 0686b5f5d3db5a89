/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Writes profiles of made-up runs as pprof files in the directory given,
 * for go tool pprof to read in test-pprof-files.sh (frames are bare
 * addresses):
 *  - off-cpu.pb.gz and wall.pb.gz: 1 ms on the CPU, 5 ms blocked, 1 ms
 *    on, 2 ms preempted;
 *  - events.pb.gz: two events and a counter: page faults (periods 1, 2
 *    and 5, each sample reading the minor-faults counter: 10, 14, then 25
 *    so far) and the task clock (1, 2 and 3 ms) on two stacks.
 * usage: pprof-files DIR
 */
#include <linux/perf_event.h>
#include <stdio.h>

#include "perfreader.h"

#define MS 1000000ull

static const struct pr_frame frames[] = { { .ip = 0x1010 }, { .ip = 0x2020 },
					  { .ip = 0x3030 }, { .ip = 0x2020 } };
static const struct pr_stack stack = { .frames = frames, .nr = 2 };
static const struct pr_stack other = { .frames = frames + 2, .nr = 2 };

static const char *const EVENTS[] = { "page-faults:u", "task-clock" };
static const char *const COUNTERS[] = { "minor-faults" };

static struct pr_record rec(uint32_t type, uint16_t misc, uint64_t time)
{
	struct pr_record r = { .type = type, .misc = misc, .pid = 100, .tid = 100,
			       .time = time, .fields = PR_ID_TID | PR_ID_TIME };

	r.u.sample.period = MS;
	return r;
}

/* The off-CPU or wall-clock run: 0, or a negative errno from the first
 * call that failed. */
static int run(struct pr_profile *p, bool cpu)
{
	struct pr_record s1 = rec(PR_RECORD_SAMPLE, PERF_RECORD_MISC_USER, 1 * MS),
			 w1 = rec(PR_RECORD_SAMPLE, PERF_RECORD_MISC_KERNEL, 2 * MS),
			 i1 = rec(PR_RECORD_SWITCH, 0, 7 * MS),
			 s2 = rec(PR_RECORD_SAMPLE, PERF_RECORD_MISC_USER, 7 * MS),
			 w2 = rec(PR_RECORD_SAMPLE, PERF_RECORD_MISC_KERNEL, 8 * MS),
			 o2 = rec(PR_RECORD_SWITCH, PERF_RECORD_MISC_SWITCH_OUT |
				  PERF_RECORD_MISC_SWITCH_OUT_PREEMPT, 8 * MS);
	int err = 0;

	if (cpu)
		err = pr_profile_add(p, NULL, &s1, &stack, "app", "app");
	if (!err)
		err = pr_profile_add_switch(p, NULL, &w1, &stack, "app", "app");
	if (!err)
		err = pr_profile_apply(p, &i1);
	if (!err && cpu)
		err = pr_profile_add(p, NULL, &s2, &stack, "app", "app");
	if (!err)
		err = pr_profile_add_switch(p, NULL, &w2, &stack, "app", "app");
	if (!err)
		err = pr_profile_apply(p, &o2);
	return err ? err : pr_profile_end(p, 10 * MS);
}

/* A sample of event `event` on `st` standing for `period` events, reading
 * the counter's `read` when not NULL. */
static int add(struct pr_profile *p, size_t event, const struct pr_stack *st, uint64_t period,
	       const uint64_t *read)
{
	struct pr_record r = rec(PR_RECORD_SAMPLE, PERF_RECORD_MISC_USER, 0);

	r.id = 7;
	r.fields |= PR_ID_ID;
	r.u.sample.period = period;
	r.u.sample.read = read;
	r.u.sample.nr_read = read ? 1 : 0;
	r.u.sample.read_stride = 1;
	return pr_profile_add_event(p, event, NULL, &r, st, "app", "app");
}

/* The run of two events, their samples interleaved. */
static int events_run(struct pr_profile *p)
{
	static const uint64_t r1[] = { 10 }, r2[] = { 14 }, r3[] = { 25 };
	int err = add(p, 0, &stack, 1, r1);

	if (!err)
		err = add(p, 1, &stack, 1 * MS, NULL);
	if (!err)
		err = add(p, 0, &stack, 2, r2);
	if (!err)
		err = add(p, 1, &other, 2 * MS, NULL);
	if (!err)
		err = add(p, 1, &stack, 3 * MS, NULL);
	return err ? err : add(p, 0, &other, 5, r3);
}

int main(int argc, char **argv)
{
	static const struct {
		const char *name;
		enum pr_profile_mode mode;
		bool events;
	} files[] = {
		{ "off-cpu.pb.gz", PR_PROFILE_OFF_CPU, false },
		{ "wall.pb.gz", PR_PROFILE_WALL, false },
		{ "events.pb.gz", PR_PROFILE_CPU, true },
	};

	if (argc != 2) {
		fprintf(stderr, "usage: %s DIR\n", argv[0]);
		return 2;
	}
	for (size_t i = 0; i < sizeof(files) / sizeof(files[0]); i++) {
		PR_OPTS(pr_profile_opts, po, .freq = 1000, .mode = files[i].mode,
			.period_is_ns = !files[i].events);
		struct pr_profile *p;
		char path[4096];
		FILE *f;
		int err;

		snprintf(path, sizeof(path), "%s/%s", argv[1], files[i].name);
		f = fopen(path, "w");
		if (files[i].events) {
			po.events = EVENTS;
			po.nr_events = 2;
			po.counters = COUNTERS;
			po.nr_counters = 1;
		}
		p = pr_profile_new(&po);
		err = !p || !f ? -1 : files[i].events ? events_run(p)
						       : run(p, files[i].mode == PR_PROFILE_WALL);
		if (!err)
			err = pr_profile_write(p, PR_FORMAT_PPROF, f, NULL);
		if (f && fclose(f))
			err = -1;
		pr_profile_free(p);
		if (err) {
			fprintf(stderr, "%s: writing %s failed (%d)\n", argv[0], path, err);
			return 1;
		}
	}
	return 0;
}
