/* SPDX-License-Identifier: Apache-2.0 */
/*
 * perf.data with the kernel: a live capture written to a file reads back
 * as exactly the records that were written, in time order; synthesized
 * records describe a running process as the kernel would.  Skips (77) only
 * when the kernel refuses perf_event_open.
 */
#include <check.h>
#include <errno.h>
#include <limits.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "checkmain.h"
#include "livecheck.h"
#include "perfreader.h"

static const char *workload_path(void)
{
	const char *p = getenv("DS_WORKLOAD");

	ck_assert_msg(p && *p, "DS_WORKLOAD must name the test workload");
	return p;
}

/* A record as written: its bytes, to compare with what is read back. */
struct kept {
	uint64_t time;
	uint32_t type;
	size_t size;
	unsigned char *bytes;
};

struct tape {
	struct kept *v;
	size_t n, cap;
	struct pr_writer *w;
};

static void keep(struct tape *t, const struct pr_record *rec)
{
	if (t->n == t->cap) {
		t->cap = t->cap ? t->cap * 2 : 1024;
		t->v = realloc(t->v, t->cap * sizeof(*t->v));
		ck_assert_ptr_nonnull(t->v);
	}
	t->v[t->n].time = rec->time;
	t->v[t->n].type = rec->type;
	t->v[t->n].size = rec->size;
	t->v[t->n].bytes = malloc(rec->size);
	memcpy(t->v[t->n].bytes, rec->raw, rec->size);
	t->n++;
}

static int write_and_keep(const struct pr_record *rec, void *arg)
{
	struct tape *t = arg;

	keep(t, rec);
	return pr_writer_write(t->w, rec);
}

static int cmp_kept(const void *a, const void *b)
{
	const struct kept *x = a, *y = b;

	if (x->time != y->time)
		return x->time < y->time ? -1 : 1;
	if (x->size != y->size)
		return x->size < y->size ? -1 : 1;
	return memcmp(x->bytes, y->bytes, x->size);
}

START_TEST(a_live_capture_reads_back_as_exactly_what_was_written)
{
	char *argv[] = { (char *)workload_path(), "spin", "0.5", NULL };
	char path[] = "/tmp/ds-live-roundtrip-XXXXXX";
	struct tape written = { 0 }, read = { 0 };
	struct pr_reader *r = pr_reader_open_command(argv, NULL);
	uint64_t ids[64];
	size_t nr;
	struct pr_file *f;
	struct pr_record rec;
	uint64_t last = 0;
	long samples = 0;
	int fd, status;

	ck_assert_ptr_nonnull(r);
	fd = mkstemp(path);
	ck_assert_int_ge(fd, 0);
	close(fd);
	nr = pr_reader_ids(r, ids, 64);
	ck_assert_uint_gt(nr, 0);
	written.w = pr_writer_open(path, pr_reader_attr(r), ids, nr, NULL);
	ck_assert_ptr_nonnull(written.w);
	ck_assert_int_eq(pr_kernel_synthesize(pr_reader_attr(r), ids[0],
					      write_and_keep, &written), 0);
	ck_assert_int_eq(pr_reader_enable(r), 0);
	while (!pr_reader_done(r)) {
		ck_assert_int_ge(pr_reader_poll(r, 100, write_and_keep, &written), 0);
		ck_assert_int_eq(pr_writer_finish_round(written.w), 0);
	}
	while (pr_reader_consume(r, write_and_keep, &written) > 0)
		;
	ck_assert_int_eq(pr_writer_close(written.w), 0);
	waitpid(pr_reader_child(r), &status, 0);
	pr_reader_close(r);

	f = pr_file_open(path, NULL);
	ck_assert_ptr_nonnull(f);
	while (pr_file_read(f, &rec) == 1) {
		ck_assert_uint_ge(rec.time, last);
		last = rec.time;
		samples += rec.type == PR_RECORD_SAMPLE;
		keep(&read, &rec);
	}
	pr_file_close(f);
	unlink(path);

	ck_assert_int_gt(samples, 20);
	ck_assert_uint_eq(read.n, written.n);
	qsort(written.v, written.n, sizeof(*written.v), cmp_kept);
	qsort(read.v, read.n, sizeof(*read.v), cmp_kept);
	for (size_t i = 0; i < read.n; i++) {
		ck_assert_uint_eq(read.v[i].size, written.v[i].size);
		ck_assert_msg(!memcmp(read.v[i].bytes, written.v[i].bytes, read.v[i].size),
			      "record %zu (type %u) differs", i, read.v[i].type);
		free(read.v[i].bytes);
		free(written.v[i].bytes);
	}
	free(read.v);
	free(written.v);
}
END_TEST

struct synth_seen {
	pid_t pid, thread;
	char exe[PATH_MAX];
	bool comm_main, comm_thread, fork_thread, mmap2_exe_text, mmap2_exe_data;
	bool kernel_mmap;
	long records;
};

static int on_synth(const struct pr_record *rec, void *arg)
{
	struct synth_seen *s = arg;

	s->records++;
	ck_assert_uint_eq(rec->time, 0);
	switch (rec->type) {
	case PR_RECORD_COMM:
		ck_assert_uint_eq(rec->pid, (uint32_t)s->pid);
		s->comm_main |= rec->tid == (uint32_t)s->pid;
		s->comm_thread |= rec->tid == (uint32_t)s->thread;
		break;
	case PR_RECORD_FORK:
		s->fork_thread |= rec->tid == (uint32_t)s->thread &&
				  rec->u.task.ppid == (uint32_t)s->pid;
		break;
	case PR_RECORD_MMAP2:
		if (!strcmp(rec->u.mmap.filename, s->exe)) {
			s->mmap2_exe_text |= (rec->u.mmap.prot & 4) != 0;
			s->mmap2_exe_data |= (rec->u.mmap.prot & 4) == 0;
		}
		break;
	case PR_RECORD_MMAP:
		s->kernel_mmap |= rec->pid == UINT32_MAX &&
				  !strcmp(rec->u.mmap.filename, "[kernel.kallsyms]_text");
		break;
	default:
		break;
	}
	return 0;
}

static pthread_mutex_t hold = PTHREAD_MUTEX_INITIALIZER;
static volatile pid_t thread_tid;

static void *held_thread(void *arg)
{
	(void)arg;
	thread_tid = (pid_t)gettid();
	pthread_mutex_lock(&hold);
	pthread_mutex_unlock(&hold);
	return NULL;
}

/* Counts the records synthesized, and those not of process *arg. */
struct of_process {
	pid_t pid;
	int n, other;
};

static int count_of_process(const struct pr_record *rec, void *arg)
{
	struct of_process *o = arg;

	o->n++;
	o->other += rec->pid != (uint32_t)o->pid;
	return 0;
}

START_TEST(synthesized_records_describe_a_running_process)
{
	struct perf_event_attr attr;
	struct synth_seen s = { .pid = getpid() };
	pthread_t t;

	ck_assert_int_eq(pr_event_attr(NULL, PR_SOURCE_CPU_CLOCK, PR_ATTR_SHARED_RING,
				       &attr), 0);
	ck_assert_ptr_nonnull(realpath("/proc/self/exe", s.exe));
	pthread_mutex_lock(&hold);
	pthread_create(&t, NULL, held_thread, NULL);
	while (!thread_tid)
		usleep(1000);
	s.thread = thread_tid;
	ck_assert_int_eq(pr_process_synthesize(getpid(), &attr, 7, on_synth, &s), 0);
	/* A thread's id: its process's records, named by the process, as
	 * its samples are. */
	{
		struct of_process o = { .pid = getpid() };

		ck_assert_int_eq(pr_thread_process(thread_tid), getpid());
		ck_assert_int_eq(pr_thread_process(getpid()), getpid());
		ck_assert_int_eq(pr_thread_process(0x7ffffff0), -ESRCH);
		ck_assert_int_eq(pr_thread_process(0), -EINVAL);
		ck_assert_int_eq(pr_process_synthesize(thread_tid, &attr, 7, count_of_process, &o),
				 0);
		ck_assert_int_gt(o.n, 4);
		ck_assert_int_eq(o.other, 0);
	}
	pthread_mutex_unlock(&hold);
	pthread_join(t, NULL);
	ck_assert(s.comm_main);
	ck_assert(s.comm_thread);
	ck_assert(s.fork_thread);
	ck_assert(s.mmap2_exe_text);
	ck_assert(s.mmap2_exe_data);
	/* A process that does not exist. */
	ck_assert_int_eq(pr_process_synthesize(0x7ffffff0, &attr, 7, on_synth, &s), -ESRCH);
	/* The kernel's text, where kallsyms shows addresses (as root here). */
	ck_assert_int_eq(pr_kernel_synthesize(&attr, 7, on_synth, &s), 0);
	if (access("/proc/kallsyms", R_OK) == 0 && getuid() == 0)
		ck_assert(s.kernel_mmap);
}
END_TEST

static int stop_at_three(const struct pr_record *rec, void *arg)
{
	(void)rec;
	return ++*(int *)arg == 3 ? -99 : 0;
}

START_TEST(a_callback_error_stops_synthesis)
{
	struct perf_event_attr attr;
	int n = 0;

	ck_assert_int_eq(pr_event_attr(NULL, PR_SOURCE_CPU_CLOCK, 0, &attr), 0);
	ck_assert_int_eq(pr_system_synthesize(&attr, 1, stop_at_three, &n), -99);
	ck_assert_int_eq(n, 3);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("perfdata-live");
	TCase *tc = tcase_create("kernel");

	live_require_perf();
	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, a_live_capture_reads_back_as_exactly_what_was_written);
	tcase_add_test(tc, synthesized_records_describe_a_running_process);
	tcase_add_test(tc, a_callback_error_stops_synthesis);
	suite_add_tcase(s, tc);
	return run_suite(s);
}
