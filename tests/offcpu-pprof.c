/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Writes an off-CPU and a wall-clock profile of a made-up run as pprof
 * files, off-cpu.pb.gz and wall.pb.gz in the directory given, for
 * test-offcpu-pprof.sh to read with go tool pprof.  The run: 1 ms on the
 * CPU, 5 ms blocked, 1 ms on, 2 ms preempted (frames are bare addresses).
 * usage: offcpu-pprof DIR
 */
#include <linux/perf_event.h>
#include <stdio.h>

#include "perfreader.h"

#define MS 1000000ull

static const struct pr_frame frames[] = { { .ip = 0x1010 }, { .ip = 0x2020 } };
static const struct pr_stack stack = { .frames = frames, .nr = 2 };

static struct pr_record rec(uint32_t type, uint16_t misc, uint64_t time)
{
	struct pr_record r = { .type = type, .misc = misc, .pid = 100, .tid = 100,
			       .time = time, .fields = PR_ID_TID | PR_ID_TIME };

	r.u.sample.period = MS;
	return r;
}

/* 0, or a negative errno from the first call that failed. */
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

int main(int argc, char **argv)
{
	static const struct { const char *name; enum pr_profile_mode mode; } files[] = {
		{ "off-cpu.pb.gz", PR_PROFILE_OFF_CPU }, { "wall.pb.gz", PR_PROFILE_WALL },
	};

	if (argc != 2) {
		fprintf(stderr, "usage: %s DIR\n", argv[0]);
		return 2;
	}
	for (size_t i = 0; i < sizeof(files) / sizeof(files[0]); i++) {
		PR_OPTS(pr_profile_opts, po, .freq = 1000, .mode = files[i].mode,
			.period_is_ns = true);
		struct pr_profile *p = pr_profile_new(&po);
		char path[4096];
		FILE *f;
		int err;

		snprintf(path, sizeof(path), "%s/%s", argv[1], files[i].name);
		f = fopen(path, "w");
		err = !p || !f ? -1 : run(p, files[i].mode == PR_PROFILE_WALL);
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
