/* SPDX-License-Identifier: Apache-2.0 */
/*
 * A made-up process for the profile's tests (test-profile.c,
 * test-offcpu-formats.c): JIT code named by a perf map the fixture
 * writes, so that every frame's name is the test's own, and the formats
 * written into memory.
 */
#ifndef DS_TEST_PROFILE_FIXTURE_H
#define DS_TEST_PROFILE_FIXTURE_H

#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "mkrecord.h"
#include "prprofile.h"
#include "profile/profile.h"
#include "symbols/symbolizer.h"

/*
 * The fake process's pid: above any real one on this machine's default
 * pid_max and different in every test process (Check forks one per test),
 * so that test runs side by side (the plain and the sanitizer build) never
 * share a /tmp/perf-PID.map.  Sixteen apart per real pid: a test's other
 * fake processes (PID + 1 ... PID + 15) must not be another test
 * process's, as PID + 1 was when two ran side by side with adjacent pids
 * (one unlinked the other's perf map, whose frames then had no names).
 */
static uint32_t fake_pid(void)
{
	return 5000000u + 16u * ((uint32_t)getpid() % 1000000u);
}
#define PID fake_pid()
#define BASE 0x7f0000000000ull

static char map_path[64];
static struct pr_model *model;
static struct pr_symbolizer *sym;

/* Functions at BASE + 0x1000 * (i + 1), 0x100 bytes each. */
static const char *const funcs[] = { "main", "run", "parse;token", "emit", "leaf" };

/* Process `pid`'s perf map at `path` naming funcs[], and its JIT mapping
 * in the model. */
static void fake_process(uint32_t pid, char *path, size_t len)
{
	struct pr_record r = mmap2(pid, BASE, 0x100000, 0, "//anon");
	FILE *f;

	snprintf(path, len, "/tmp/perf-%u.map", pid);
	f = fopen(path, "w");
	ck_assert_ptr_nonnull(f);
	for (size_t i = 0; i < sizeof(funcs) / sizeof(funcs[0]); i++)
		fprintf(f, "%llx 100 %s\n", BASE + 0x1000 * (i + 1), funcs[i]);
	ck_assert_int_eq(fclose(f), 0);
	ck_assert_int_eq(pr_model_apply(model, &r), 0);
}

static void setup(void)
{
	PR_OPTS(pr_symbolizer_opts, so);

	model = pr_model_new(NULL);
	ck_assert_ptr_nonnull(model);
	fake_process(PID, map_path, sizeof(map_path));
	sym = pr_symbolizer_new(model, &so);
	ck_assert_ptr_nonnull(sym);
}

static void teardown(void)
{
	pr_symbolizer_free(sym);
	pr_model_free(model);
	unlink(map_path);
}

/* Frame `f` in the mapping that holds it, as the unwinder hands it on. */
static void place(struct pr_frame *f)
{
	const struct pr_map *m = pr__model_find(model, PID, f->ip);

	f->dso = m->dso;
	f->map_start = m->start;
	f->map_end = m->end;
	f->map_pgoff = m->pgoff;
}

/* The stack `names` ("main" ... leaf last, or "k:ADDR" for a kernel
 * frame) into `frames` (16 at most), the leaf at `leaf_off` in its
 * function. */
static struct pr_stack make_stack(struct pr_frame *frames, const char *const *names, size_t n,
				  uint64_t leaf_off)
{
	struct pr_stack st = { .frames = frames, .nr = n, .end = PR_END_OUTERMOST };

	ck_assert_uint_le(n, 16);
	for (size_t i = 0; i < n; i++) {
		struct pr_frame *f = &frames[n - 1 - i];   /* leaf first */

		memset(f, 0, sizeof(*f));
		if (!strncmp(names[i], "k:", 2)) {
			f->ip = f->dso_ip = strtoull(names[i] + 2, NULL, 16);
			f->flags = PR_FRAME_KERNEL;
			st.nr_kernel++;
			continue;
		}
		for (size_t j = 0; j < sizeof(funcs) / sizeof(funcs[0]); j++)
			if (!strcmp(names[i], funcs[j]))
				f->ip = f->dso_ip = BASE + 0x1000 * (j + 1) +
						    (i + 1 == n ? leaf_off : 0x10);
		ck_assert_msg(f->ip, "no function %s", names[i]);
		place(f);
	}
	return st;
}

/* The profile written in `fmt`, in memory (not every test needs it). */
__attribute__((unused)) static char *write_out(const struct pr_profile *p,
					      enum pr_profile_format fmt,
					      const struct pr_profile_write_opts *o, size_t *len)
{
	char *buf = NULL;
	size_t n = 0;
	FILE *f = open_memstream(&buf, &n);

	ck_assert_ptr_nonnull(f);
	ck_assert_int_eq(pr_profile_write(p, fmt, f, o), 0);
	ck_assert_int_eq(fclose(f), 0);
	if (len)
		*len = n;
	return buf;
}

#endif
