/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Tests that need the kernel skip (exit 77) only when it refuses
 * perf_event_open itself, and say why; everything else must run.
 */
#ifndef DS_TEST_LIVECHECK_H
#define DS_TEST_LIVECHECK_H

#include <dirent.h>
#include <errno.h>
#include <linux/perf_event.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "prevent.h"

static inline void live_require_perf(void)
{
	struct perf_event_attr a;
	long fd;

	memset(&a, 0, sizeof(a));
	a.size = sizeof(a);
	a.type = PERF_TYPE_SOFTWARE;
	a.config = PERF_COUNT_SW_CPU_CLOCK;
	a.sample_freq = 99;
	a.freq = 1;
	a.sample_type = PERF_SAMPLE_REGS_USER | PERF_SAMPLE_STACK_USER;
	a.sample_regs_user = 1ull << 7;
	a.sample_stack_user = 64;
	a.disabled = 1;
	a.exclude_kernel = 1;
	fd = syscall(__NR_perf_event_open, &a, 0, -1, -1, 0);
	if (fd < 0) {
		int e = errno;
		FILE *f = fopen("/proc/sys/kernel/perf_event_paranoid", "r");
		int paranoid = -99;

		if (f) {
			if (fscanf(f, "%d", &paranoid) != 1)
				paranoid = -99;
			fclose(f);
		}
		printf("SKIP: the kernel refuses perf_event_open (%s; "
		       "kernel.perf_event_paranoid=%d): run as root or with "
		       "CAP_PERFMON\n", strerror(e), paranoid);
		exit(77);
	}
	close((int)fd);
}

/* The open file descriptors, "." and ".." included: an open that fails
 * must leave as many as it found. */
static inline int live_count_fds(void)
{
	DIR *d = opendir("/proc/self/fd");
	int n = 0;

	if (!d) {
		perror("/proc/self/fd");
		abort();
	}
	while (readdir(d))
		n++;
	closedir(d);
	return n;
}

/* An event described by hand, as pr_event_list_parse() would: the
 * counter tests do not depend on the parser. */
static inline struct pr_event_desc live_event(uint32_t type, uint64_t config, const char *name,
					      uint32_t leader)
{
	struct pr_event_desc d;

	memset(&d, 0, sizeof(d));
	d.type = type;
	d.config = config;
	snprintf(d.name, sizeof(d.name), "%s", name);
	d.leader = leader;
	return d;
}

#endif
