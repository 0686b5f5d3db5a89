/* SPDX-License-Identifier: Apache-2.0 */
/*
 * perf.data without a kernel: what the writer writes the reader reads back
 * (records in timestamp order, features, build-ids); every kind of damage
 * to a file is refused or salvaged with a message naming the byte offset,
 * never a crash, a hang or a runaway allocation; the checked-in fixture
 * replays identically on any machine.  The damaged files are in
 * test-perfdata-damage.c, what both share in perfdata-fixture.c.
 */
#include <check.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/auxv.h>
#include <sys/stat.h>
#include <unistd.h>

#include "checkmain.h"
#include "fixtures/fixture.h"
#include "model/model.h"
#include "perfdata-fixture.h"
#include "perfdata/perfdata_read.h"

START_TEST(what_the_writer_writes_the_reader_reads_in_time_order)
{
	PR_OPTS(pr_file_opts, o, .log = keep_log);
	const char *path = write_small_file();
	struct pr_file *f;
	struct pr_record rec;
	uint64_t times[8];
	int n = 0;

	logtext[0] = 0;
	f = pr_file_open(path, &o);
	ck_assert_msg(f, "%s", logtext);
	ck_assert_uint_eq(pr_file_nr_attrs(f), 1);
	ck_assert_uint_eq(pr_file_attr(f, 0)->sample_type, test_attr().sample_type);
	while (pr_file_read(f, &rec) == 1) {
		ck_assert_int_lt(n, 8);
		ck_assert_int_eq(rec.ring_cpu, -1);
		times[n++] = rec.time;
		if (rec.type == PR_RECORD_SAMPLE) {
			ck_assert_uint_eq(rec.u.sample.stack_dyn_size, 16);
			ck_assert_uint_eq(rec.u.sample.stack[15], 0x0f);
			ck_assert_uint_eq(rec.u.sample.ip, 0x401000 + (rec.time / 10 - 1) * 0x10);
		}
	}
	ck_assert_int_eq(n, 5);
	ck_assert_uint_eq(times[0], 5);
	ck_assert_uint_eq(times[1], 10);
	ck_assert_uint_eq(times[2], 20);
	ck_assert_uint_eq(times[3], 30);
	ck_assert_uint_eq(times[4], 40);
	{
		struct pr_file_stats st = { .sz = sizeof(st) };

		ck_assert_int_eq(pr_file_stats(f, &st), 0);
		ck_assert_uint_eq(st.samples, 4);
		ck_assert_uint_eq(st.records, 5);
		ck_assert_uint_eq(st.by_type[PR_RECORD_MMAP2], 1);
		ck_assert_uint_eq(st.first_sample_time, 10);
		ck_assert_uint_eq(st.last_sample_time, 40);
		ck_assert(!st.truncated);
	}
	pr_file_rewind(f);
	ck_assert_int_eq(pr_file_read(f, &rec), 1);
	ck_assert_uint_eq(rec.type, PR_RECORD_MMAP2);
	pr_file_close(f);
}
END_TEST

START_TEST(features_describe_the_recording)
{
	const char *path = write_small_file();
	struct pr_file *f = pr_file_open(path, NULL);
	const char *const *argv;
	uint32_t avail, online;
	uint8_t id[PR_BUILD_ID_MAX];
	size_t id_len = 0;

	ck_assert_ptr_nonnull(f);
	ck_assert_str_eq(pr_file_string(f, PR_FILE_ARCH), "x86_64");
	ck_assert_ptr_nonnull(pr_file_string(f, PR_FILE_HOSTNAME));
	ck_assert_ptr_nonnull(pr_file_string(f, PR_FILE_OSRELEASE));
	ck_assert_ptr_nonnull(strstr(pr_file_string(f, PR_FILE_VERSION), "dwarfsample"));
	ck_assert_int_eq(pr_file_nr_cpus(f, &avail, &online), 0);
	ck_assert_uint_eq(online, (uint32_t)sysconf(_SC_NPROCESSORS_ONLN));
	/* The recorder's own path first, then its arguments, as perf's. */
	ck_assert_uint_eq(pr_file_cmdline(f, &argv), 5);
	ck_assert_str_eq(argv[1], "dwarfsample");
	ck_assert_str_eq(argv[4], "x.data");
	/* The mapped file the samples landed in, by build-id. */
	ck_assert_int_eq(pr__build_id_path("/proc/self/exe", id, &id_len), 0);
	ck_assert_uint_eq(pr_file_nr_build_ids(f), 1);
	ck_assert_str_eq(pr_file_build_id(f, 0)->filename, "/proc/self/exe");
	ck_assert_uint_eq(pr_file_build_id(f, 0)->size, id_len);
	ck_assert_mem_eq(pr_file_build_id(f, 0)->id, id, id_len);
	ck_assert_uint_eq(pr_file_build_id(f, 0)->cpumode, PERF_RECORD_MISC_USER);
	pr_file_close(f);
}
END_TEST

static int first_sample_event(const struct pr_record *rec, void *arg)
{
	void **args = arg;

	if (rec->type == PERF_RECORD_SAMPLE && *(int *)args[1] == -1)
		*(int *)args[1] = pr_file_event_of(args[0], rec);
	return 0;
}

/* A sample's event, and the event's name: the recording's own (perf's
 * EVENT_DESC), else the one perf makes from the attr. */
START_TEST(samples_name_their_event)
{
	size_t len;
	struct perfdata_header h;
	unsigned char *buf = small_copy(&len, &h);
	struct pr_file *f = pr_file_open_mem(buf, len, NULL);
	int idx = -1;
	void *args[] = { f, &idx };

	ck_assert_ptr_nonnull(f);
	ck_assert_int_eq(pr_file_consume(f, first_sample_event, args), 5);
	ck_assert_int_eq(idx, 0);
	ck_assert_str_eq(pr_file_event_name(f, 0), "cpu-clock");
	ck_assert_ptr_null(pr_file_event_name(f, 1));
	ck_assert_int_eq(pr_file_event_of(f, NULL), -EINVAL);
	pr_file_close(f);

	/* Without the feature: kernel and user sampled, the hypervisor not,
	 * which perf writes as ":ku". */
	h.features[FEAT_EVENT_DESC / 64] &= ~(UINT64_C(1) << (FEAT_EVENT_DESC % 64));
	memcpy(buf, &h, sizeof(h));
	f = pr_file_open_mem(buf, len, NULL);
	ck_assert_ptr_nonnull(f);
	ck_assert_str_eq(pr_file_event_name(f, 0), "cpu-clock:ku");
	pr_file_close(f);
	free(buf);
}
END_TEST

static int note_events(const struct pr_record *rec, void *arg)
{
	void **args = arg;
	int *seen = args[1];
	int ev = pr_file_event_of(args[0], rec);

	ck_assert_int_ge(ev, 0);
	if (rec->type == PR_RECORD_SAMPLE)
		seen[ev]++;
	if (rec->type == PR_RECORD_SWITCH) {
		ck_assert_int_eq(ev, 1);
		/* out preempt at 25, in at 30 */
		ck_assert(rec->u.sw.out == (rec->time == 25));
		ck_assert(rec->u.sw.preempt == (rec->time == 25));
		seen[2]++;
	}
	return 0;
}

/* A CPU event and an off-CPU event in one file: both listed and named as
 * perf names them, each record tied to its event, the end of the capture
 * kept, and the off-CPU sample (taken in the kernel) counted for build-ids
 * by its user registers. */
START_TEST(two_events_and_the_end_time_read_back)
{
	struct perf_event_attr cpu = test_attr(), off;
	uint64_t cpu_ids[] = { 42 }, off_ids[] = { 43, 44 };
	struct pr_writer_event evs[] = {
		{ &cpu, cpu_ids, 1, NULL }, { &off, off_ids, 2, NULL },
	};
	static struct synth s;
	const char *path = tmp_path("two.data");
	struct pr_writer *w;
	struct pr_file *f;
	uint64_t end = 0;
	int seen[3] = { 0 };
	void *args[] = { NULL, seen };
	size_t at[5];

	ck_assert_int_eq(pr_event_attr(NULL, PR_SOURCE_CONTEXT_SWITCH,
				       PR_ATTR_SHARED_RING | PR_ATTR_NO_SIDEBAND, &off), 0);
	w = pr_writer_open_events(path, evs, 2, NULL);
	ck_assert_ptr_nonnull(w);
	s.len = 0;
	at[0] = s.len;
	put_mmap2(&s, GHOST_PID, 0x1000, 0x1000, "/proc/self/exe", 5);
	/* The CPU sample is another process's, outside any mapping. */
	at[1] = s.len;
	put_sample_of(&s, 42, PERF_RECORD_MISC_USER, GHOST_PID + 1, 0x401000, 10);
	at[2] = s.len;
	put_sample_of(&s, 44, PERF_RECORD_MISC_KERNEL, GHOST_PID,
		      0xffffffff81000000ull, 20);
	at[3] = s.len;
	put_switch(&s, 44, PERF_RECORD_MISC_SWITCH_OUT | PERF_RECORD_MISC_SWITCH_OUT_PREEMPT,
		   GHOST_PID, 25);
	at[4] = s.len;
	put_switch(&s, 43, 0, GHOST_PID, 30);
	for (int i = 0; i < 5; i++)
		write_built(w, &s, at[i]);
	ck_assert_int_eq(pr_writer_set_end_time(w, 1000), 0);
	ck_assert_int_eq(pr_writer_set_end_time(NULL, 1000), -EINVAL);
	ck_assert_int_eq(pr_writer_close(w), 0);

	f = pr_file_open(path, NULL);
	ck_assert_ptr_nonnull(f);
	ck_assert_uint_eq(pr_file_nr_attrs(f), 2);
	ck_assert_int_eq(pr_event_source_of(pr_file_attr(f, 0)), PR_SOURCE_CPU_CLOCK);
	ck_assert_int_eq(pr_event_source_of(pr_file_attr(f, 1)), PR_SOURCE_CONTEXT_SWITCH);
	ck_assert_str_eq(pr_file_event_name(f, 0), "cpu-clock");
	ck_assert_str_eq(pr_file_event_name(f, 1), "context-switches");
	args[0] = f;
	ck_assert_int_eq(pr_file_consume(f, note_events, args), 5);
	ck_assert_int_eq(seen[0], 1);
	ck_assert_int_eq(seen[1], 1);
	ck_assert_int_eq(seen[2], 2);
	ck_assert_int_eq(pr_file_end_time(f, &end), 0);
	ck_assert_uint_eq(end, 1000);
	ck_assert_int_eq(pr_file_end_time(f, NULL), -EINVAL);
	/* The executable, and the kernel when its build-id is readable. */
	ck_assert_uint_ge(pr_file_nr_build_ids(f), 1);
	ck_assert_str_eq(pr_file_build_id(f, 0)->filename, "/proc/self/exe");
	ck_assert_uint_eq(pr_file_build_id(f, 0)->cpumode, PERF_RECORD_MISC_USER);
	pr_file_close(f);
}
END_TEST

/* The event of each sample of a file whose samples bear ids 42 (cpu-clock),
 * 43 (the second event) and 99 (listed by no event: another program's,
 * which Linux 6.3+ gives the samples of a software event both sample). */
static void events_of_foreign_samples(const struct perf_event_attr *second, int *events)
{
	struct perf_event_attr cpu = test_attr();
	uint64_t ids[] = { 42, 43 };
	struct pr_writer_event evs[] = { { &cpu, ids, 1, NULL }, { second, ids + 1, 1, NULL } };
	static struct synth s;
	const char *path = tmp_path("foreign.data");
	struct pr_writer *w = pr_writer_open_events(path, evs, 2, NULL);
	struct pr_record rec;
	struct pr_file *f;

	ck_assert_ptr_nonnull(w);
	for (int i = 0; i < 3; i++) {
		s.len = 0;
		put_sample_of(&s, (uint64_t[]){ 42, 43, 99 }[i], PERF_RECORD_MISC_USER, GHOST_PID,
			      0x401000, 10 * (uint64_t)i);
		write_built(w, &s, 0);
	}
	ck_assert_int_eq(pr_writer_close(w), 0);
	f = pr_file_open(path, NULL);
	ck_assert_ptr_nonnull(f);
	for (int i = 0; i < 3; i++) {
		ck_assert_int_eq(pr_file_read(f, &rec), 1);
		ck_assert_uint_eq(rec.type, PR_RECORD_SAMPLE);
		events[i] = pr_file_event_of(f, &rec);
	}
	ck_assert_int_eq(pr_file_read(f, &rec), 0);
	pr_file_close(f);
}

/* A sample bearing another program's id is the file's one software
 * event's whose hits the kernel shares among programs
 * (pr__attr_takes_foreign_ids()): context switches, or page faults
 * sampled beside the clock.  With none (task-clock, an hrtimer, beside
 * it), it is the first event's, as perf decides. */
START_TEST(a_sample_bearing_an_unlisted_id_is_the_one_software_events)
{
	struct perf_event_attr off, faults = test_attr(), clock2 = test_attr();
	int ev[3];

	ck_assert_int_eq(pr_event_attr(NULL, PR_SOURCE_CONTEXT_SWITCH,
				       PR_ATTR_SHARED_RING | PR_ATTR_NO_SIDEBAND, &off), 0);
	events_of_foreign_samples(&off, ev);
	ck_assert_int_eq(ev[0], 0);
	ck_assert_int_eq(ev[1], 1);
	ck_assert_int_eq(ev[2], 1);

	faults.config = PERF_COUNT_SW_PAGE_FAULTS;
	faults.freq = 0;
	faults.sample_period = 1;
	events_of_foreign_samples(&faults, ev);
	ck_assert_int_eq(ev[1], 1);
	ck_assert_int_eq(ev[2], 1);

	/* task-clock takes a sample of its own (an hrtimer): no foreign id. */
	clock2.config = PERF_COUNT_SW_TASK_CLOCK;
	events_of_foreign_samples(&clock2, ev);
	ck_assert_int_eq(ev[1], 1);
	ck_assert_int_eq(ev[2], 0);
}
END_TEST

/* Names given are what EVENT_DESC says; an unnamed event is named as
 * perf's parser spells its attr, modifier included. */
START_TEST(event_names_given_or_made_read_back)
{
	struct perf_event_attr faults = test_attr(), user = test_attr();
	uint64_t ids[] = { 42, 43 };
	struct pr_writer_event evs[] = {
		{ &faults, ids, 1, "faults-by-another-name" }, { &user, ids + 1, 1, NULL },
	};
	const char *path = tmp_path("names.data");
	struct pr_writer *w;
	struct pr_file *f;

	faults.config = PERF_COUNT_SW_PAGE_FAULTS;
	user.exclude_kernel = 1;
	w = pr_writer_open_events(path, evs, 2, NULL);
	ck_assert_ptr_nonnull(w);
	ck_assert_int_eq(pr_writer_close(w), 0);
	f = pr_file_open(path, NULL);
	ck_assert_ptr_nonnull(f);
	ck_assert_str_eq(pr_file_event_name(f, 0), "faults-by-another-name");
	ck_assert_str_eq(pr_file_event_name(f, 1), "cpu-clock:u");
	pr_file_close(f);
}
END_TEST

/* A file without an end: perf record's without samples, or ours. */
START_TEST(a_file_without_samples_or_end_says_so)
{
	const char *path;
	struct pr_writer *w = test_writer("empty-end.data", &path);
	struct pr_file *f;
	uint64_t end = 7;

	ck_assert_int_eq(pr_writer_close(w), 0);
	f = pr_file_open(path, NULL);
	ck_assert_ptr_nonnull(f);
	ck_assert_int_eq(pr_file_end_time(f, &end), -ENOENT);
	ck_assert_uint_eq(end, 7);
	pr_file_close(f);

	/* Without an end set, the last sample is the end. */
	f = pr_file_open(write_small_file(), NULL);
	ck_assert_ptr_nonnull(f);
	ck_assert_int_eq(pr_file_end_time(f, &end), 0);
	ck_assert_uint_eq(end, 40);
	pr_file_close(f);
}
END_TEST

/* Rings are drained one after another, so a file can hold a sample before
 * the MMAP2 that precedes it in time; the build-id list must still name
 * the file the sample landed in. */
START_TEST(build_ids_follow_time_order_not_file_order)
{
	static struct synth s;
	const char *path;
	struct pr_writer *w = test_writer("order.data", &path);
	struct pr_file *f;
	size_t sample_at;

	ck_assert_ptr_nonnull(w);
	s.len = 0;
	sample_at = s.len;
	put_sample(&s, GHOST_PID, 0x401000, 20);
	write_built(w, &s, sample_at);
	s.len = 0;
	put_mmap2(&s, GHOST_PID, 0x400000, 0x10000, "/proc/self/exe", 10);
	write_built(w, &s, 0);
	ck_assert_int_eq(pr_writer_close(w), 0);
	f = pr_file_open(path, NULL);
	ck_assert_ptr_nonnull(f);
	ck_assert_uint_eq(pr_file_nr_build_ids(f), 1);
	ck_assert_str_eq(pr_file_build_id(f, 0)->filename, "/proc/self/exe");
	pr_file_close(f);
}
END_TEST

/* A sample's callers are in files its process maps executable, which the
 * writer cannot tell apart without unwinding: every one is listed by
 * build-id, for the replay to find it; its data mappings are not. */
START_TEST(build_ids_cover_every_file_a_sampled_process_maps_executable)
{
	static struct synth s;
	const char *path;
	struct pr_writer *w = test_writer("callers.data", &path);
	char exe[4096], data[64];
	ssize_t n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
	bool seen_exe = false, seen_self = false;
	struct pr_file *f;

	ck_assert_ptr_nonnull(w);
	ck_assert_int_gt(n, 0);
	exe[n] = 0;
	s.len = 0;
	put_mmap2(&s, GHOST_PID, 0x400000, 0x10000, "/proc/self/exe", 5);
	write_built(w, &s, 0);
	/* The same file by another name: a caller's file, never sampled. */
	s.len = 0;
	put_mmap2(&s, GHOST_PID, 0x500000, 0x10000, exe, 6);
	write_built(w, &s, 0);
	/* And by a third, mapped as data only (rw-). */
	snprintf(data, sizeof(data), "/proc/%d/exe", (int)getpid());
	s.len = 0;
	put_mmap2_prot(&s, GHOST_PID, 0x600000, 0x10000, data, 7, 3);
	write_built(w, &s, 0);
	s.len = 0;
	put_sample(&s, GHOST_PID, 0x401000, 10);
	write_built(w, &s, 0);
	ck_assert_int_eq(pr_writer_close(w), 0);
	f = pr_file_open(path, NULL);
	ck_assert_ptr_nonnull(f);
	for (size_t i = 0; i < pr_file_nr_build_ids(f); i++) {
		seen_self |= !strcmp(pr_file_build_id(f, i)->filename, "/proc/self/exe");
		seen_exe |= !strcmp(pr_file_build_id(f, i)->filename, exe);
	}
	ck_assert(seen_self && seen_exe);
	ck_assert_uint_eq(pr_file_nr_build_ids(f), 2);
	pr_file_close(f);
}
END_TEST

/* A recording that ended before any record (the command could not run)
 * is a finished, empty file, not an unfinished one. */
START_TEST(a_finished_empty_file_reads_as_empty_without_warning)
{
	PR_OPTS(pr_file_opts, o, .log = keep_log);
	const char *path;
	struct pr_writer *w = test_writer("empty.data", &path);
	struct pr_file_stats st = { .sz = sizeof(st) };
	struct pr_file *f;

	ck_assert_ptr_nonnull(w);
	ck_assert_int_eq(pr_writer_close(w), 0);
	logtext[0] = 0;
	f = pr_file_open(path, &o);
	ck_assert_ptr_nonnull(f);
	ck_assert_str_eq(logtext, "");
	pr_file_stats(f, &st);
	ck_assert_uint_eq(st.records, 0);
	ck_assert(!st.truncated);
	ck_assert_str_eq(pr_file_string(f, PR_FILE_ARCH), "x86_64");
	pr_file_close(f);
}
END_TEST

START_TEST(the_vdso_has_a_build_id)
{
	uint8_t id[PR_BUILD_ID_MAX];
	size_t len = 0;

	/* valgrind hides the vDSO from the programs it runs. */
	if (!getauxval(AT_SYSINFO_EHDR)) {
		ck_assert_int_eq(pr__build_id_vdso(id, &len), -ENOENT);
		return;
	}
	ck_assert_int_eq(pr__build_id_vdso(id, &len), 0);
	ck_assert_uint_ge(len, 8);
}
END_TEST

START_TEST(a_missing_or_unwritable_path_is_reported)
{
	PR_OPTS(pr_file_opts, o, .log = keep_log);
	PR_OPTS(pr_writer_opts, wo, .log = keep_log);
	struct perf_event_attr a = test_attr();
	uint64_t id = 1;

	logtext[0] = 0;
	ck_assert_ptr_null(pr_file_open("/nonexistent/perf.data", &o));
	ck_assert_int_eq(errno, ENOENT);
	ck_assert_msg(strstr(logtext, "cannot open /nonexistent/perf.data"), "%s", logtext);
	logtext[0] = 0;
	ck_assert_ptr_null(pr_writer_open("/nonexistent/dir/out.data", &a, &id, 1, &wo));
	ck_assert_msg(strstr(logtext, "choose another " PR_LOG_SETTING_OUTPUT_PATH), "%s", logtext);
	/* The command that uses the library names its own flag (-o). */
	ck_assert_msg(!strstr(logtext, "(-o)"), "%s", logtext);
}
END_TEST

/* A FIFO is refused at once, not waited on for a writer (the test's
 * timeout would end it); so are a directory and a device. */
START_TEST(a_path_that_is_not_a_regular_file_is_refused_without_waiting)
{
	PR_OPTS(pr_file_opts, o, .log = keep_log);
	const char *fifo = tmp_path("fifo.data");

	ck_assert_int_eq(mkfifo(fifo, 0600), 0);
	logtext[0] = 0;
	ck_assert_ptr_null(pr_file_open(fifo, &o));
	ck_assert_int_eq(errno, EINVAL);
	ck_assert_msg(strstr(logtext, "is not a regular file (a FIFO)"), "%s", logtext);
	logtext[0] = 0;
	ck_assert_ptr_null(pr_file_open("/", &o));
	ck_assert_msg(strstr(logtext, "(a directory)"), "%s", logtext);
	logtext[0] = 0;
	ck_assert_ptr_null(pr_file_open("/dev/null", &o));
	ck_assert_msg(strstr(logtext, "(a device)"), "%s", logtext);
}
END_TEST

/* ---- the checked-in fixture ---- */

static const char *fixture_dir(void)
{
	const char *d = getenv("DS_FIXTURES");

	ck_assert_msg(d && *d, "DS_FIXTURES must name tests/fixtures");
	return d;
}

struct fixture_walk {
	uint64_t lo, hi;          /* the binary's executable mapping */
	int samples, in_binary;
	bool first_seen;
	uint64_t first_time, first_ip;
	uint32_t first_tid;
};

static int walk_fixture(const struct pr_record *rec, void *arg)
{
	struct fixture_walk *w = arg;

	if (rec->type == PR_RECORD_MMAP2 && (rec->u.mmap.prot & 4) &&
	    strstr(rec->u.mmap.filename, "dwarfsample-demo-static")) {
		w->lo = rec->u.mmap.addr;
		w->hi = rec->u.mmap.addr + rec->u.mmap.len;
	}
	if (rec->type != PR_RECORD_SAMPLE)
		return 0;
	w->samples++;
	w->in_binary += rec->u.sample.ip >= w->lo && rec->u.sample.ip < w->hi;
	if (!w->first_seen) {
		w->first_seen = true;
		w->first_time = rec->time;
		w->first_ip = rec->u.sample.ip;
		w->first_tid = rec->tid;
	}
	return 0;
}

/*
 * A capture of over 8 MiB, many of the chunks a file opened by path is
 * read by (perfdata_walk.c's windows, 256 KiB): mappings with paths of
 * 100 to 3 900 bytes among samples, so that records run across every
 * chunk's end; rounds of 50 records in reverse time order, and one of
 * 2 500 (about 4 MiB, over many chunks) held whole before its first
 * record is handed out.
 */
static const char *write_windows_file(void)
{
	static struct synth s;
	const char *path;
	struct pr_writer *w = test_writer("windows.data", &path);
	char name[4096];

	for (int i = 0; i < 6000; i++) {
		bool long_round = i >= 2000 && i < 4500;
		int round = long_round ? 2500 : 50;
		int base = long_round ? 2000 : i - i % 50;
		uint64_t t = 1000 + (uint64_t)base * 10 + (uint64_t)(round - 1 - (i - base)) * 10;

		s.len = 0;
		if (i % 4) {
			int len = 100 + (i * 37) % 3800;

			memset(name, 'a' + i % 26, (size_t)len);
			name[0] = '/';
			name[len] = 0;
			put_mmap2(&s, GHOST_PID, 0x400000 + (uint64_t)i * 0x1000, 0x1000, name, t);
		} else {
			put_sample(&s, GHOST_PID, 0x401000 + (uint64_t)i, t);
		}
		write_built(w, &s, 0);
		if (!long_round && i % 50 == 49)
			ck_assert_int_eq(pr_writer_finish_round(w), 0);
	}
	ck_assert_int_eq(pr_writer_close(w), 0);
	return path;
}

/* Read `n` records from both, requiring the same; how many there were. */
static int read_alike(struct pr_file *a, struct pr_file *b, int n)
{
	struct pr_record ra, rb;
	int i;

	for (i = 0; i < n; i++) {
		int na = pr_file_read(a, &ra), nb = pr_file_read(b, &rb);

		ck_assert_int_eq(na, nb);
		if (na <= 0)
			break;
		ck_assert_uint_eq(ra.type, rb.type);
		ck_assert_uint_eq(ra.time, rb.time);
		ck_assert_uint_eq(ra.size, rb.size);
		ck_assert_mem_eq(ra.raw, rb.raw, ra.size);
	}
	return i;
}

START_TEST(a_capture_of_many_windows_reads_as_its_bytes_in_memory_do)
{
	PR_OPTS(pr_file_opts, o, .log = keep_log);
	const char *path = write_windows_file();
	size_t len;
	unsigned char *bytes = file_bytes(path, &len);
	struct pr_file *f, *m;
	struct pr_file_stats st = { .sz = sizeof(st) };

	ck_assert_uint_gt(len, (size_t)8 << 20);
	logtext[0] = 0;
	f = pr_file_open(path, &o);
	m = pr_file_open_mem(bytes, len, &o);
	ck_assert_ptr_nonnull(f);
	ck_assert_ptr_nonnull(m);
	/* Halfway, then again from the start to the end. */
	ck_assert_int_eq(read_alike(f, m, 3000), 3000);
	pr_file_rewind(f);
	pr_file_rewind(m);
	ck_assert_int_eq(read_alike(f, m, 20000), 6000);
	ck_assert_int_eq(pr_file_stats(f, &st), 0);
	ck_assert_uint_eq(st.records, 6000);
	ck_assert(!st.truncated && !st.damaged);
	ck_assert_uint_eq(f->nr_through_mapping, 0);
	ck_assert_uint_le(f->nr_read_in, 3);
	/* With one window to read into, the long round's second chunk is
	 * read through the file's mapping. */
	pr_file_rewind(f);
	pr_file_rewind(m);
	f->max_read_in = 1;
	ck_assert_int_eq(read_alike(f, m, 20000), 6000);
	ck_assert_uint_gt(f->nr_through_mapping, 0);
	ck_assert_uint_le(f->nr_read_in, 1);
	ck_assert_str_eq(logtext, "");
	pr_file_close(f);
	pr_file_close(m);
	free(bytes);
}
END_TEST

/* A file cut short after it was opened is read up to its last complete
 * record, with a warning, as a truncated copy is. */
START_TEST(a_capture_cut_short_while_read_gives_what_it_still_has)
{
	PR_OPTS(pr_file_opts, o, .log = keep_log);
	const char *path = write_windows_file();
	struct pr_file *f;
	struct pr_file_stats st = { .sz = sizeof(st) };
	struct pr_record rec;
	int n = 0, r;
	/* Cut before the first read, and after 1 500 records were read (the
	 * windows after theirs read after the cut): the 3 855 records in
	 * the 6 MiB left.  Then behind the record being read: the records
	 * read in before the cut (those of the windows held), and no more.
	 * The same read through the file's mapping (a walk past the
	 * windows' budget), where a read past the new end finds zeros
	 * rather than a SIGBUS (base/busguard.c): the records the file still
	 * has, none of those queued past its end. */
	static const struct { int after; off_t to; int least, most; bool mapped; } cuts[] = {
		{ 0, (off_t)6 << 20, 3000, 4000, false },
		{ 1500, (off_t)6 << 20, 3000, 4000, false },
		{ 1500, (off_t)1 << 20, 1500, 6000, false },
		{ 1500, (off_t)6 << 20, 3000, 4000, true },
		{ 1500, (off_t)1 << 20, 1499, 1501, true },
	};

	for (size_t i = 0; i < sizeof(cuts) / sizeof(cuts[0]); i++) {
		int after = cuts[i].after;

		logtext[0] = 0;
		n = 0;
		f = pr_file_open(path, &o);
		ck_assert_ptr_nonnull(f);
		if (cuts[i].mapped)
			f->max_read_in = 0;
		while (n < after && pr_file_read(f, &rec) == 1)
			n++;
		ck_assert_int_eq(truncate(path, cuts[i].to), 0);
		while ((r = pr_file_read(f, &rec)) == 1)
			n++;
		ck_assert_int_eq(r, 0);
		ck_assert_int_gt(n, cuts[i].least);
		ck_assert_int_lt(n, cuts[i].most);
		ck_assert_msg(strstr(logtext, "cut short while being read"), "cut %zu: %s", i, logtext);
		ck_assert_int_eq(pr_file_stats(f, &st), 0);
		ck_assert(st.truncated);
		ck_assert_msg(!st.corrupt_records, "cut %zu: %s", i, logtext);
		if (cuts[i].mapped)
			ck_assert_uint_gt(f->nr_through_mapping, 0);
		pr_file_close(f);
		path = write_windows_file();
	}
}
END_TEST

/* The fixture's sampled binary is found by build-id in the fixture's own
 * .build-id directory, never by the path it had when it was recorded; and
 * reading the file gives the numbers pinned in tests/fixtures/fixture.h. */
START_TEST(the_fixture_replays_identically_and_finds_its_binary_by_build_id)
{
	char path[1024], hex[2 * PR_BUILD_ID_MAX + 1];
	struct pr_file *f;
	const struct pr_build_id *b = NULL;
	uint8_t id[PR_BUILD_ID_MAX];
	size_t id_len = 0;
	struct pr_file_stats st = { .sz = sizeof(st) };
	struct fixture_walk w = { 0 };

	snprintf(path, sizeof(path), "%s/demo-static/perf.data", fixture_dir());
	f = pr_file_open(path, NULL);
	ck_assert_ptr_nonnull(f);
	for (size_t i = 0; i < pr_file_nr_build_ids(f); i++)
		if (strstr(pr_file_build_id(f, i)->filename, "dwarfsample-demo-static"))
			b = pr_file_build_id(f, i);
	ck_assert_ptr_nonnull(b);
	for (unsigned i = 0; i < b->size; i++)
		snprintf(hex + 2 * i, 3, "%02x", b->id[i]);
	snprintf(path, sizeof(path), "%s/demo-static/.build-id/%.2s/%s", fixture_dir(),
		 hex, hex + 2);
	ck_assert_int_eq(pr__build_id_path(path, id, &id_len), 0);
	ck_assert_uint_eq(id_len, b->size);
	ck_assert_mem_eq(id, b->id, id_len);

	ck_assert_int_gt(pr_file_consume(f, walk_fixture, &w), 0);
	ck_assert_int_eq(pr_file_stats(f, &st), 0);
	ck_assert_uint_eq(st.samples, FIXTURE_DEMO_SAMPLES);
	ck_assert_uint_eq(st.lost, 0);
	ck_assert_int_eq(w.samples, FIXTURE_DEMO_SAMPLES);
	ck_assert_int_eq(w.in_binary, FIXTURE_DEMO_IN_BINARY);
	ck_assert_uint_eq(w.first_time, FIXTURE_DEMO_FIRST_TIME);
	ck_assert_uint_eq(w.first_tid, FIXTURE_DEMO_FIRST_TID);
	ck_assert_uint_eq(w.first_ip, FIXTURE_DEMO_FIRST_IP);
	pr_file_close(f);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("perfdata");
	TCase *tc = tcase_create("files");

	tcase_set_timeout(tc, 120);
	tcase_add_checked_fixture(tc, NULL, remove_tmpdir);
	tcase_add_test(tc, what_the_writer_writes_the_reader_reads_in_time_order);
	tcase_add_test(tc, features_describe_the_recording);
	tcase_add_test(tc, samples_name_their_event);
	tcase_add_test(tc, two_events_and_the_end_time_read_back);
	tcase_add_test(tc, a_sample_bearing_an_unlisted_id_is_the_one_software_events);
	tcase_add_test(tc, event_names_given_or_made_read_back);
	tcase_add_test(tc, a_file_without_samples_or_end_says_so);
	add_damage_tests(tc);
	add_zstd_tests(tc);
	tcase_add_test(tc, build_ids_follow_time_order_not_file_order);
	tcase_add_test(tc, build_ids_cover_every_file_a_sampled_process_maps_executable);
	tcase_add_test(tc, a_finished_empty_file_reads_as_empty_without_warning);
	tcase_add_test(tc, the_vdso_has_a_build_id);
	tcase_add_test(tc, a_missing_or_unwritable_path_is_reported);
	tcase_add_test(tc, a_path_that_is_not_a_regular_file_is_refused_without_waiting);
	tcase_add_test(tc, the_fixture_replays_identically_and_finds_its_binary_by_build_id);
	tcase_add_test(tc, a_capture_of_many_windows_reads_as_its_bytes_in_memory_do);
	tcase_add_test(tc, a_capture_cut_short_while_read_gives_what_it_still_has);
	suite_add_tcase(s, tc);
	return run_suite(s);
}
