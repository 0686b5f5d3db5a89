/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Sampling a cgroup (pr_reader_opts.cgroup, the agent's --cgroup): a cgroup
 * v2 made for the test, a busy process in a cgroup below it and another
 * outside; only the first is sampled, reported (its mappings) and
 * synthesized.
 */
#include <check.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <mntent.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "checkmain.h"
#include "livecheck.h"
#include "perfreader.h"

/* The test's cgroup, relative to the hierarchy's mount (as the option
 * takes it), and the one below it where the sampled process runs. */
static char mount_dir[PATH_MAX], top[PATH_MAX + 80], inner[PATH_MAX + 96], rel[64];

static void spin_ms(long ms)
{
	struct timespec t0, t;

	clock_gettime(CLOCK_MONOTONIC, &t0);
	do
		clock_gettime(CLOCK_MONOTONIC, &t);
	while ((t.tv_sec - t0.tv_sec) * 1000 + (t.tv_nsec - t0.tv_nsec) / 1000000 < ms);
}

/* A busy process, in cgroup `dir` (NULL: where the test is), that maps
 * its own executable again every few milliseconds (an MMAP2 record each
 * time, for whoever samples it).  It says when it is in place, and dies
 * with the test. */
static pid_t spawn(const char *dir)
{
	int ready[2];
	pid_t pid;
	char c;

	ck_assert_int_eq(pipe(ready), 0);
	pid = fork();
	ck_assert_int_ge(pid, 0);
	if (!pid) {
		int exe = open("/proc/self/exe", O_RDONLY | O_CLOEXEC);
		char path[PATH_MAX + 16];
		FILE *procs;

		prctl(PR_SET_PDEATHSIG, SIGKILL);
		if (dir) {
			snprintf(path, sizeof(path), "%s/cgroup.procs", dir);
			procs = fopen(path, "w");
			if (!procs || fprintf(procs, "0\n") < 0 || fclose(procs))
				_exit(3);
		}
		if (write(ready[1], "r", 1) != 1)
			_exit(4);
		for (;;) {
			void *p = mmap(NULL, 4096, PROT_READ | PROT_EXEC, MAP_PRIVATE, exe, 0);

			if (p != MAP_FAILED)
				munmap(p, 4096);
			spin_ms(5);
		}
	}
	close(ready[1]);
	ck_assert_msg(read(ready[0], &c, 1) == 1, "the child could not join %s",
		      dir ? dir : "its cgroup");
	close(ready[0]);
	return pid;
}

struct seen {
	pid_t in, out;
	long samples_in, samples_other, mmaps_in, records_out;
	long synth_in, synth_out, synth_self;
	pid_t other_pid;
};

static int on_record(const struct pr_record *rec, void *arg)
{
	struct seen *s = arg;

	if (rec->type == PR_RECORD_SAMPLE) {
		if (rec->pid == (uint32_t)s->in) {
			s->samples_in++;
		} else {
			s->samples_other++;
			s->other_pid = (pid_t)rec->pid;
		}
	} else if (rec->pid == (uint32_t)s->in && rec->type == PR_RECORD_MMAP2) {
		s->mmaps_in++;
	}
	if (rec->pid == (uint32_t)s->out)
		s->records_out++;
	return 0;
}

static int on_synthesized(const struct pr_record *rec, void *arg)
{
	struct seen *s = arg;

	s->synth_in += rec->pid == (uint32_t)s->in;
	s->synth_out += rec->pid == (uint32_t)s->out;
	s->synth_self += rec->pid == (uint32_t)getpid();
	return 0;
}

/*
 * The cgroup's tasks, and those of the cgroups below it, are sampled, and
 * nothing else is: not a busy process outside it, not the test, not the
 * idle task.  The kernel reports the mappings of the tasks inside only,
 * and pr_cgroup_synthesize() finds the process that was there first.
 */
START_TEST(only_the_tasks_of_the_cgroup_and_below_are_sampled)
{
	PR_OPTS(pr_event_opts, ev, .freq = 499, .stack_size = 1024);
	PR_OPTS(pr_reader_opts, o, .event = &ev, .cgroup = rel);
	struct seen s = { 0 };
	struct pr_reader *r;
	uint64_t id = 0;
	int status;

	live_require_perf();
	s.in = spawn(inner);
	s.out = spawn(NULL);
	r = pr_reader_open_cpus(NULL, 0, &o);
	if (!r && (errno == EACCES || errno == EPERM || errno == EOPNOTSUPP)) {
		printf("SKIP: the kernel refuses perf_event_open on a cgroup (%s)\n",
		       strerror(errno));
		kill(s.in, SIGKILL);
		kill(s.out, SIGKILL);
		exit(77);
	}
	ck_assert_msg(r, "opening the cgroup %s failed: %s", rel, strerror(errno));
	ck_assert_int_eq(pr_reader_enable(r), 0);
	pr_reader_ids(r, &id, 1);
	ck_assert_int_eq(pr_cgroup_synthesize(rel, pr_reader_attr(r), id, on_synthesized, &s),
			 0);
	ck_assert_int_gt(s.synth_in, 0);
	ck_assert_int_eq(s.synth_out, 0);
	ck_assert_int_eq(s.synth_self, 0);

	/* Until the process inside has been sampled and reported enough,
	 * however long a loaded machine takes (the test's timeout bounds it). */
	while (s.samples_in < 50 || s.mmaps_in < 3)
		ck_assert_int_ge(pr_reader_poll(r, 100, on_record, &s), 0);
	ck_assert_int_ge(pr_reader_consume(r, on_record, &s), 0);
	pr_reader_close(r);
	kill(s.in, SIGKILL);
	kill(s.out, SIGKILL);
	ck_assert_int_eq(waitpid(s.in, &status, 0), s.in);
	ck_assert_int_eq(waitpid(s.out, &status, 0), s.out);

	ck_assert_msg(s.samples_other == 0, "%ld samples of tasks outside the cgroup (pid %d)",
		      s.samples_other, (int)s.other_pid);
	ck_assert_msg(s.records_out == 0, "%ld records of the process outside the cgroup",
		      s.records_out);
}
END_TEST

/* A path that is not a cgroup v2 directory is refused with a message. */
START_TEST(what_is_not_a_cgroup_v2_directory_is_refused)
{
	PR_OPTS(pr_reader_opts, o, .cgroup = "/proc");
	PR_OPTS(pr_reader_opts, missing, .cgroup = "dwarfsample-no-such-cgroup");
	pid_t self = getpid();

	live_require_perf();
	errno = 0;
	ck_assert_ptr_null(pr_reader_open_cpus(NULL, 0, &o));
	ck_assert_int_eq(errno, EINVAL);
	ck_assert_ptr_null(pr_reader_open_cpus(NULL, 0, &missing));
	ck_assert_int_eq(errno, ENOENT);
	/* Only for CPUs. */
	ck_assert_ptr_null(pr_reader_open_pids(&self, 1, &missing));
	ck_assert_int_eq(errno, EINVAL);
	ck_assert_int_eq(pr_cgroup_synthesize("/proc", NULL, 0, on_synthesized, NULL), -EINVAL);
}
END_TEST

/* Where the cgroup v2 hierarchy is mounted; false when nowhere. */
static bool find_mount(void)
{
	FILE *f = setmntent("/proc/self/mounts", "re");
	struct mntent *m;
	bool found = false;

	while (f && !found && (m = getmntent(f)))
		if (!strcmp(m->mnt_type, "cgroup2"))
			found = (size_t)snprintf(mount_dir, sizeof(mount_dir), "%s", m->mnt_dir) <
				sizeof(mount_dir);
	if (f)
		endmntent(f);
	return found;
}

/* The test's cgroups go once their processes have (they die with the
 * test's process, whatever failed). */
static void remove_cgroups(void)
{
	for (int i = 0; i < 100 && rmdir(inner) && errno == EBUSY; i++)
		usleep(50000);
	rmdir(top);
}

int main(void)
{
	Suite *s = suite_create("cgroup-live");
	TCase *tc = tcase_create("cgroup");
	int ret;

	if (!find_mount()) {
		printf("SKIP: no cgroup v2 hierarchy is mounted (sampling by cgroup needs one)\n");
		return 77;
	}
	snprintf(rel, sizeof(rel), "dwarfsample-test-%d", (int)getpid());
	snprintf(top, sizeof(top), "%s/%s", mount_dir, rel);
	snprintf(inner, sizeof(inner), "%s/inner", top);
	if (mkdir(top, 0755) || mkdir(inner, 0755)) {
		int e = errno;

		rmdir(top);
		if (e == EACCES || e == EPERM || e == EROFS) {
			printf("SKIP: cannot make a cgroup under %s (%s): run as root\n", mount_dir,
			       strerror(e));
			return 77;
		}
		fprintf(stderr, "mkdir %s: %s\n", inner, strerror(e));
		return 1;
	}
	tcase_set_timeout(tc, 120);
	tcase_add_test(tc, only_the_tasks_of_the_cgroup_and_below_are_sampled);
	tcase_add_test(tc, what_is_not_a_cgroup_v2_directory_is_refused);
	suite_add_tcase(s, tc);
	ret = run_suite(s);
	remove_cgroups();
	return ret;
}
