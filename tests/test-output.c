/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The output file (proutput.h): its format from a name or an extension, a
 * profile written whole at the end or not at all (a temporary file renamed
 * over the path), perf script's text with an event's samples alone, a
 * session's shares merged, off-CPU waits and where time went, what the
 * log is told when a path cannot be written, and a path that is a
 * symbolic link written through (pr_output_target()): relative and
 * absolute links into another directory, the temporary file beside the
 * file they name, dangling links (the file they name is made, as cp
 * makes it) and links that loop (refused, nothing written).  Frames are unnamed addresses
 * (no symbolizer).  Through the shared library only.
 */
#include <check.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <linux/perf_event.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include "checkmain.h"
#include "perfreader.h"

#define MS 1000000ull

static const struct pr_frame frames[] = { { .ip = 0x1010, .dso_ip = 0x1010 },
					  { .ip = 0x2020, .dso_ip = 0x2020 } };
static const struct pr_stack one = { .frames = frames, .nr = 1 };
static const struct pr_stack two = { .frames = frames, .nr = 2 };

/* A directory of the test's own, and the last message the log was told. */
static char dir[64];
static char logged[1024];

static void setup(void)
{
	snprintf(dir, sizeof(dir), "/tmp/test-output-XXXXXX");
	ck_assert_ptr_nonnull(mkdtemp(dir));
	logged[0] = '\0';
}

static int remove_one(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
	(void)st;
	(void)flag;
	(void)ftw;
	return remove(path);
}

static void teardown(void)
{
	nftw(dir, remove_one, 16, FTW_DEPTH | FTW_PHYS);
}

static void log_fn(enum pr_log_level level, const char *msg, void *ctx)
{
	(void)level;
	(void)ctx;
	snprintf(logged, sizeof(logged), "%s", msg);
}

/* How many entries directory `path` has: no temporary file left
 * (hidden ones too). */
static int entries(const char *path)
{
	DIR *d = opendir(path);
	struct dirent *e;
	int n = 0;

	ck_assert_ptr_nonnull(d);
	while ((e = readdir(d)))
		n += strcmp(e->d_name, ".") && strcmp(e->d_name, "..");
	closedir(d);
	return n;
}

/* The file at `path`, whole (static buffer). */
static const char *contents(const char *path)
{
	static char buf[8192];
	FILE *f = fopen(path, "re");
	size_t n;

	ck_assert_ptr_nonnull(f);
	n = fread(buf, 1, sizeof(buf) - 1, f);
	buf[n] = '\0';
	fclose(f);
	return buf;
}

static struct pr_record rec(uint32_t type, uint16_t misc, uint32_t tid, uint64_t time)
{
	return (struct pr_record){ .type = type, .misc = misc, .pid = 100, .tid = tid,
				   .time = time, .cpu = 1,
				   .fields = PR_ID_TID | PR_ID_TIME | PR_ID_CPU };
}

/* A CPU sample of thread `tid` of event `event`, its stack `st`. */
static int cpu(struct pr_output *o, size_t event, uint32_t tid, uint64_t time,
	       const struct pr_stack *st)
{
	struct pr_record r = rec(PR_RECORD_SAMPLE, PERF_RECORD_MISC_USER, tid, time);
	struct pr_sink_sample s = { .rec = &r, .st = st, .comm = "app", .process = "app",
				    .event = event };

	r.u.sample.period = MS;
	return pr_output_sample(o, &s);
}

static void path_in_dir(char *buf, size_t len, const char *name)
{
	snprintf(buf, len, "%s/%s", dir, name);
}

START_TEST(a_format_is_found_by_name_and_by_extension)
{
	ck_assert_int_eq(pr_output_format_by_name("perf-script"), PR_OUTPUT_PERF_SCRIPT);
	ck_assert_int_eq(pr_output_format_by_name("svg"), PR_FORMAT_SVG);
	ck_assert_int_eq(pr_output_format_by_name("flame"), -EINVAL);
	ck_assert_int_eq(pr_output_format_by_name(NULL), -EINVAL);
	ck_assert_int_eq(pr_output_format_by_path("run.perf.txt"), PR_OUTPUT_PERF_SCRIPT);
	ck_assert_int_eq(pr_output_format_by_path("run.script"), PR_OUTPUT_PERF_SCRIPT);
	ck_assert_int_eq(pr_output_format_by_path("run.perf"), PR_OUTPUT_PERF_SCRIPT);
	ck_assert_int_eq(pr_output_format_by_path("run.pb.gz"), PR_FORMAT_PPROF);
	ck_assert_int_eq(pr_output_format_by_path("run.json"), PR_FORMAT_SPEEDSCOPE);
	ck_assert_int_eq(pr_output_format_by_path("perf.data"), -EINVAL);
	ck_assert_str_eq(pr_output_format_name(PR_OUTPUT_PERF_SCRIPT), "perf-script");
	ck_assert_str_eq(pr_output_format_name(PR_FORMAT_FOLDED), "folded");
	ck_assert_str_eq(pr_output_format_ext(PR_OUTPUT_PERF_SCRIPT), ".perf.txt");
	ck_assert_str_eq(pr_output_format_ext(PR_FORMAT_SVG), ".svg");
	ck_assert_str_eq(pr_output_format_hint(PR_FORMAT_SVG), "a web browser (xdg-open FILE)");
	ck_assert_ptr_null(pr_output_format_name(PR_OUTPUT_FORMAT_MAX));
	ck_assert_ptr_null(pr_output_format_hint(-1));
	/* Every format the name gives, the extension gives back. */
	for (int f = 0; f < PR_OUTPUT_FORMAT_MAX; f++)
		ck_assert_int_eq(pr_output_format_by_path(pr_output_format_ext(f)), f);
}
END_TEST

START_TEST(only_what_shows_source_lines_needs_them)
{
	ck_assert(!pr_output_shows_lines(PR_FORMAT_FOLDED, 0));
	ck_assert(!pr_output_shows_lines(PR_FORMAT_SVG, 0));
	ck_assert(pr_output_shows_lines(PR_FORMAT_PPROF, 0));
	ck_assert(pr_output_shows_lines(PR_FORMAT_SPEEDSCOPE, 0));
	ck_assert(!pr_output_shows_lines(PR_OUTPUT_PERF_SCRIPT, 0));
	ck_assert(pr_output_shows_lines(PR_OUTPUT_PERF_SCRIPT,
					PR_SCRIPT_DEFAULT | PR_SCRIPT_SRCLINE));
}
END_TEST

START_TEST(a_profile_is_written_whole_when_closed_under_its_name)
{
	PR_OPTS(pr_output_opts, oo, .freq = 1000, .log = log_fn);
	char path[256];
	struct pr_output *o;

	path_in_dir(path, sizeof(path), "p.folded");
	o = pr_output_open(path, PR_FORMAT_FOLDED, &oo);
	ck_assert_ptr_nonnull(o);
	/* Opened, under a temporary name: the path is not there yet. */
	ck_assert_int_eq(access(path, F_OK), -1);
	ck_assert_int_eq(entries(dir), 1);
	ck_assert_int_eq(cpu(o, 0, 7, 1 * MS, &two), 0);
	ck_assert_int_eq(cpu(o, 0, 7, 2 * MS, &two), 0);
	ck_assert_int_eq(cpu(o, 0, 8, 3 * MS, &one), 0);
	ck_assert_uint_eq(pr_output_nr_stacks(o), 2);
	ck_assert(!pr_output_failed(o));
	ck_assert_int_eq(pr_output_close(o, 0, 3 * MS), 0);
	ck_assert_int_eq(entries(dir), 1);
	ck_assert_str_eq(contents(path), "app;[unknown];[unknown] 2\napp;[unknown] 1\n");
	ck_assert_str_eq(logged, "");
}
END_TEST

/* A staging file named `name` in the test's directory: its descriptor,
 * locked as a live writer's is when `locked`. */
static int staging_file(const char *name, bool locked)
{
	char path[512];
	int fd;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
	ck_assert_int_ge(fd, 0);
	if (locked)
		ck_assert_int_eq(flock(fd, LOCK_EX), 0);
	return fd;
}

static bool in_dir(const char *name)
{
	char path[512];

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	return access(path, F_OK) == 0;
}

START_TEST(a_killed_writers_staging_file_is_removed_and_a_live_ones_kept)
{
	PR_OPTS(pr_output_opts, oo, .log = log_fn);
	char path[256];
	struct pr_output *o;
	/* A writer killed outright: its descriptor (and lock) gone. */
	int dead = staging_file(".p.folded.dwarfsample-4242.aB3dE9", false);
	/* A writer that runs (in this or another pid namespace). */
	int live = staging_file(".p.folded.dwarfsample-4243.xY7zQ1", true);
	/* Not a staging file of p.folded: another output's, a user's. */
	int other = staging_file(".q.folded.dwarfsample-4244.aB3dE9", false);
	int mine = staging_file(".p.folded.dwarfsample-x.aB3dE9", false);

	close(dead);
	close(other);
	close(mine);
	path_in_dir(path, sizeof(path), "p.folded");
	o = pr_output_open(path, PR_FORMAT_FOLDED, &oo);
	ck_assert_ptr_nonnull(o);
	ck_assert(!in_dir(".p.folded.dwarfsample-4242.aB3dE9"));
	ck_assert(in_dir(".p.folded.dwarfsample-4243.xY7zQ1"));
	ck_assert(in_dir(".q.folded.dwarfsample-4244.aB3dE9"));
	ck_assert(in_dir(".p.folded.dwarfsample-x.aB3dE9"));
	/* Its own, and those three. */
	ck_assert_int_eq(entries(dir), 4);
	ck_assert_int_eq(pr_output_close(o, 0, 0), 0);
	ck_assert_int_eq(entries(dir), 4);
	ck_assert(in_dir("p.folded"));
	/* Once the live writer is gone too, the next open removes its file. */
	close(live);
	o = pr_output_open(path, PR_FORMAT_FOLDED, &oo);
	ck_assert_ptr_nonnull(o);
	ck_assert(!in_dir(".p.folded.dwarfsample-4243.xY7zQ1"));
	ck_assert_int_eq(pr_output_discard(o), 0);
	ck_assert_int_eq(entries(dir), 3);
}
END_TEST

START_TEST(a_discarded_output_leaves_what_the_path_held)
{
	PR_OPTS(pr_output_opts, oo, .log = log_fn);
	char path[256];
	struct pr_output *o;
	FILE *f;

	path_in_dir(path, sizeof(path), "keep.svg");
	f = fopen(path, "we");
	ck_assert_ptr_nonnull(f);
	fputs("an earlier profile\n", f);
	fclose(f);
	o = pr_output_open(path, PR_FORMAT_SVG, &oo);
	ck_assert_ptr_nonnull(o);
	ck_assert_int_eq(entries(dir), 2);
	ck_assert_int_eq(cpu(o, 0, 7, 1 * MS, &one), 0);
	ck_assert_int_eq(pr_output_discard(o), 0);
	ck_assert_int_eq(entries(dir), 1);
	ck_assert_str_eq(contents(path), "an earlier profile\n");
	ck_assert_int_eq(pr_output_discard(NULL), 0);
	ck_assert_int_eq(pr_output_close(NULL, 0, 0), 0);
}
END_TEST

START_TEST(a_path_that_cannot_be_written_is_said_at_open)
{
	PR_OPTS(pr_output_opts, oo, .log = log_fn);
	char path[256], want[512];

	path_in_dir(path, sizeof(path), "no/such/p.svg");
	errno = 0;
	ck_assert_ptr_null(pr_output_open(path, PR_FORMAT_SVG, &oo));
	ck_assert_int_eq(errno, ENOENT);
	snprintf(want, sizeof(want), "cannot write %s: %s; choose another "
		 PR_LOG_SETTING_OUTPUT_PATH, path, strerror(ENOENT));
	ck_assert_str_eq(logged, want);
	ck_assert_int_eq(entries(dir), 0);
}
END_TEST

START_TEST(a_device_is_written_in_place_and_a_full_one_said_at_close)
{
	PR_OPTS(pr_output_opts, oo, .log = log_fn);
	struct pr_output *o;

	if (access("/dev/full", W_OK))
		return;
	o = pr_output_open("/dev/full", PR_FORMAT_FOLDED, &oo);
	ck_assert_ptr_nonnull(o);
	ck_assert_int_eq(cpu(o, 0, 7, 1 * MS, &one), 0);
	ck_assert_int_eq(pr_output_close(o, 0, 0), -ENOSPC);
	ck_assert_str_eq(logged, "writing /dev/full failed: No space left on device");
}
END_TEST

START_TEST(bad_options_are_refused)
{
	static const char *const events[] = { "cpu-clock", "page-faults" };
	static const char *const tags[] = { "=value" };
	PR_OPTS(pr_output_opts, shown, .events = events, .nr_events = 2, .show_event = 2);
	PR_OPTS(pr_output_opts, one_event, .show_event = 1);
	PR_OPTS(pr_output_opts, tag, .tags = tags, .nr_tags = 1, .log = log_fn);
	char path[256];

	path_in_dir(path, sizeof(path), "p.folded");
	errno = 0;
	ck_assert_ptr_null(pr_output_open(path, PR_FORMAT_FOLDED, &shown));
	ck_assert_int_eq(errno, EINVAL);
	ck_assert_ptr_null(pr_output_open(path, PR_FORMAT_FOLDED, &one_event));
	ck_assert_ptr_null(pr_output_open(path, PR_OUTPUT_FORMAT_MAX, NULL));
	ck_assert_ptr_null(pr_output_open(path, PR_FORMAT_PPROF, &tag));
	ck_assert_int_eq(errno, EINVAL);
	ck_assert_str_eq(logged, "invalid tag '=value': expected KEY=VALUE");
	ck_assert_int_eq(entries(dir), 0);
}
END_TEST

START_TEST(perf_script_text_names_each_event_and_filters_one)
{
	static const char *const events[] = { "cpu-clock", "page-faults" };
	static const char *const names[] = { NULL, "faults" };
	PR_OPTS(pr_output_opts, oo, .events = events, .nr_events = 2, .event_names = names,
		.nr_event_names = 2, .fields = PR_SCRIPT_COMM | PR_SCRIPT_EVENT | PR_SCRIPT_IP,
		.log = log_fn);
	char path[256];
	struct pr_output *o;

	path_in_dir(path, sizeof(path), "p.txt");
	o = pr_output_open(path, PR_OUTPUT_PERF_SCRIPT, &oo);
	ck_assert_ptr_nonnull(o);
	/* Right-aligned to the longest of the events. */
	ck_assert_int_eq(cpu(o, 0, 7, 1 * MS, &one), 0);
	ck_assert_int_eq(cpu(o, 1, 7, 2 * MS, &one), 0);
	ck_assert_uint_eq(pr_output_nr_stacks(o), 0);
	ck_assert_int_eq(pr_output_close(o, 0, 0), 0);
	ck_assert_str_eq(contents(path), "app   cpu-clock: \n\t            1010\n\n"
					 "app      faults: \n\t            1010\n\n");

	oo.filter_event = true;
	oo.only_event = 1;
	o = pr_output_open(path, PR_OUTPUT_PERF_SCRIPT, &oo);
	ck_assert_ptr_nonnull(o);
	ck_assert_int_eq(cpu(o, 0, 7, 1 * MS, &one), 0);
	ck_assert_int_eq(cpu(o, 1, 7, 2 * MS, &one), 0);
	ck_assert_int_eq(pr_output_close(o, 0, 0), 0);
	ck_assert_str_eq(contents(path), "app      faults: \n\t            1010\n\n");
}
END_TEST

START_TEST(a_session_sink_merges_each_workers_share)
{
	PR_OPTS(pr_output_opts, oo, .freq = 1000, .log = log_fn);
	struct pr_profile_times t = { .sz = sizeof(t) };
	struct pr_sink sink;
	struct pr_output *o, *text;
	char path[256];
	void *part;

	path_in_dir(path, sizeof(path), "p.folded");
	o = pr_output_open(path, PR_FORMAT_FOLDED, &oo);
	ck_assert_ptr_nonnull(o);
	ck_assert_int_eq(pr_output_sink(o, &sink), 0);
	ck_assert_ptr_eq(sink.ctx, o);
	ck_assert(sink.part_new != NULL);
	part = sink.part_new(sink.ctx);
	ck_assert_ptr_nonnull(part);
	ck_assert_int_eq(cpu(o, 0, 7, 1 * MS, &two), 0);
	ck_assert_int_eq(cpu(part, 0, 8, 2 * MS, &two), 0);
	ck_assert_int_eq(cpu(part, 0, 8, 3 * MS, &one), 0);
	ck_assert_int_eq(sink.finish(sink.ctx, 4 * MS), 0);
	ck_assert_int_eq(sink.finish(part, 4 * MS), 0);
	ck_assert_int_eq(sink.part_merge(sink.ctx, part), 0);
	ck_assert_int_eq(pr_output_times(o, 0, &t), 0);
	ck_assert_uint_eq(t.samples, 3);
	ck_assert_uint_eq(t.cpu_ns, 3 * MS);
	ck_assert_int_eq(pr_output_close(o, 0, 0), 0);
	ck_assert_str_eq(contents(path), "app;[unknown];[unknown] 2\napp;[unknown] 1\n");

	/* perf script's text takes one worker. */
	path_in_dir(path, sizeof(path), "p.txt");
	text = pr_output_open(path, PR_OUTPUT_PERF_SCRIPT, &oo);
	ck_assert_ptr_nonnull(text);
	ck_assert_int_eq(pr_output_sink(text, &sink), 0);
	ck_assert(sink.part_new == NULL);
	ck_assert(sink.part_merge == NULL);
	ck_assert_int_eq(pr_output_discard(text), 0);
	ck_assert_int_eq(pr_output_sink(NULL, &sink), -EINVAL);
}
END_TEST

/* Thread `tid` leaves the CPU at `time`, blocked or preempted. */
static void switch_out(struct pr_output *o, uint32_t tid, uint64_t time, bool preempted)
{
	struct pr_record smp = rec(PR_RECORD_SAMPLE, PERF_RECORD_MISC_KERNEL, tid, time);
	struct pr_record sw = rec(PR_RECORD_SWITCH, PERF_RECORD_MISC_SWITCH_OUT |
				(preempted ? PERF_RECORD_MISC_SWITCH_OUT_PREEMPT : 0), tid, time);
	struct pr_sink_sample s = { .rec = &smp, .st = &two, .comm = "app", .process = "app",
				    .off_cpu = true };

	ck_assert_int_eq(pr_output_sample(o, &s), 0);
	ck_assert_int_eq(pr_output_apply(o, &sw), 0);
}

static void switch_in(struct pr_output *o, uint32_t tid, uint64_t time)
{
	struct pr_record r = rec(PR_RECORD_SWITCH, 0, tid, time);

	ck_assert_int_eq(pr_output_apply(o, &r), 0);
}

START_TEST(waits_are_counted_when_they_end_and_published)
{
	PR_OPTS(pr_output_opts, oo, .mode = PR_PROFILE_WALL, .period_is_ns = true,
		.publish_times = true, .log = log_fn);
	struct pr_profile_times t = { .sz = sizeof(t) };
	uint32_t pids[2] = { 0 };
	int fmts[] = { PR_FORMAT_FOLDED, PR_OUTPUT_PERF_SCRIPT };

	for (size_t i = 0; i < 2; i++) {
		struct pr_output *o = pr_output_open("/dev/null", fmts[i], &oo);

		ck_assert_ptr_nonnull(o);
		ck_assert_int_eq(cpu(o, 0, 7, 1 * MS, &one), 0);
		switch_out(o, 7, 2 * MS, false);
		switch_in(o, 7, 5 * MS);
		switch_out(o, 7, 6 * MS, true);
		ck_assert_int_eq(pr_output_published(o, &t), 0);
		ck_assert_uint_eq(t.cpu_ns, 1 * MS);
		ck_assert_uint_eq(t.off_cpu_ns[PR_WAIT_BLOCKED], 3 * MS);
		ck_assert_uint_eq(t.off_cpu_ns[PR_WAIT_PREEMPTED], 0);
		/* The end ends the wait still open. */
		ck_assert_int_eq(pr_output_end(o, 8 * MS), 0);
		ck_assert_int_eq(pr_output_published(o, &t), 0);
		ck_assert_uint_eq(t.off_cpu_ns[PR_WAIT_PREEMPTED], 2 * MS);
		ck_assert_int_eq(pr_output_times(o, 100, &t), 0);
		ck_assert_uint_eq(t.samples, 1);
		ck_assert_uint_eq(t.waits[PR_WAIT_BLOCKED], 1);
		ck_assert_uint_eq(t.waits[PR_WAIT_PREEMPTED], 1);
		ck_assert_uint_eq(pr_output_pids(o, pids, 2), 1);
		ck_assert_uint_eq(pids[0], 100);
		ck_assert_str_eq(pr_output_process(o, 100), "app");
		ck_assert_int_eq(pr_output_close(o, 0, 0), 0);
	}
}
END_TEST

START_TEST(in_cpu_time_only_samples_count)
{
	PR_OPTS(pr_output_opts, oo, .freq = 1000, .publish_times = true);
	struct pr_profile_times t = { .sz = sizeof(t) };
	struct pr_output *o = pr_output_open("/dev/null", PR_OUTPUT_PERF_SCRIPT, &oo);
	struct pr_record sw = rec(PR_RECORD_SWITCH, PERF_RECORD_MISC_SWITCH_OUT, 7, 1 * MS);

	ck_assert_ptr_nonnull(o);
	/* A switch with no sample of its own would be a lost wait. */
	ck_assert_int_eq(pr_output_apply(o, &sw), 0);
	switch_in(o, 7, 2 * MS);
	ck_assert_int_eq(pr_output_end(o, 3 * MS), 0);
	ck_assert_int_eq(pr_output_times(o, 0, &t), 0);
	ck_assert_uint_eq(t.waits_lost, 0);
	ck_assert_int_eq(pr_output_close(o, 0, 0), 0);
}
END_TEST

static void put(const char *path, const char *text)
{
	FILE *f = fopen(path, "we");

	ck_assert_ptr_nonnull(f);
	fputs(text, f);
	ck_assert_int_eq(fclose(f), 0);
}

/* `path` is still a symbolic link to `target`. */
static void is_link_to(const char *path, const char *target)
{
	char got[512];
	struct stat st;
	ssize_t n;

	ck_assert_int_eq(lstat(path, &st), 0);
	ck_assert(S_ISLNK(st.st_mode));
	n = readlink(path, got, sizeof(got) - 1);
	ck_assert_int_ge(n, 0);
	got[n] = '\0';
	ck_assert_str_eq(got, target);
}

/* An output of one sample of "app" to `path`, folded. */
static struct pr_output *open_folded(const char *path)
{
	PR_OPTS(pr_output_opts, oo, .freq = 1000, .log = log_fn);
	struct pr_output *o = pr_output_open(path, PR_FORMAT_FOLDED, &oo);

	if (o)
		ck_assert_int_eq(cpu(o, 0, 7, 1 * MS, &one), 0);
	return o;
}

/* links/ (where the links are) and data/ (where they point) in the
 * test's directory, into `links` and `data`. */
static char links[128], data[128];

static void link_dirs(void)
{
	snprintf(links, sizeof(links), "%s/links", dir);
	snprintf(data, sizeof(data), "%s/data", dir);
	ck_assert_int_eq(mkdir(links, 0755), 0);
	ck_assert_int_eq(mkdir(data, 0755), 0);
}

START_TEST(the_target_is_where_the_links_end)
{
	char link[256], link2[256], file[256], got[512];

	link_dirs();
	snprintf(link, sizeof(link), "%s/rel", links);
	snprintf(link2, sizeof(link2), "%s/abs", links);
	ck_assert_int_eq(symlink("../data/p.folded", link), 0);
	ck_assert_int_eq(symlink(link, link2), 0);
	/* A relative target is its link's directory's, whether or not the
	 * file is there yet. */
	ck_assert_int_eq(pr_output_target(link, got, sizeof(got)), 0);
	snprintf(file, sizeof(file), "%s/../data/p.folded", links);
	ck_assert_str_eq(got, file);
	/* A chain: absolute, then relative. */
	ck_assert_int_eq(pr_output_target(link2, got, sizeof(got)), 0);
	ck_assert_str_eq(got, file);
	/* Not a link, there or not: itself. */
	ck_assert_int_eq(pr_output_target(data, got, sizeof(got)), 0);
	ck_assert_str_eq(got, data);
	ck_assert_int_eq(pr_output_target("no-such-file", got, sizeof(got)), 0);
	ck_assert_str_eq(got, "no-such-file");
	ck_assert_int_eq(pr_output_target(link, got, 8), -ENAMETOOLONG);
	ck_assert_int_eq(pr_output_target(NULL, got, sizeof(got)), -EINVAL);
	ck_assert_int_eq(pr_output_target(link, NULL, sizeof(got)), -EINVAL);
}
END_TEST

START_TEST(a_relative_link_in_another_directory_stays_a_link)
{
	char link[256], file[256];
	struct pr_output *o;

	link_dirs();
	snprintf(link, sizeof(link), "%s/p.folded", links);
	snprintf(file, sizeof(file), "%s/p.folded", data);
	put(file, "an earlier profile\n");
	ck_assert_int_eq(symlink("../data/p.folded", link), 0);
	o = open_folded(link);
	ck_assert_ptr_nonnull(o);
	/* Written beside the target, where the rename is atomic: the
	 * link's directory holds the link alone. */
	ck_assert_int_eq(entries(data), 2);
	ck_assert_int_eq(entries(links), 1);
	ck_assert_str_eq(contents(file), "an earlier profile\n");
	ck_assert_int_eq(pr_output_close(o, 0, 1000000), 0);
	is_link_to(link, "../data/p.folded");
	ck_assert_str_eq(contents(file), "app;[unknown] 1\n");
	ck_assert_int_eq(entries(data), 1);
	ck_assert_int_eq(entries(links), 1);
	ck_assert_str_eq(logged, "");
}
END_TEST

START_TEST(an_absolute_link_stays_a_link_and_a_discard_keeps_its_file)
{
	char link[256], file[256];
	struct pr_output *o;

	link_dirs();
	snprintf(link, sizeof(link), "%s/p.folded", links);
	snprintf(file, sizeof(file), "%s/p.folded", data);
	put(file, "an earlier profile\n");
	ck_assert_int_eq(symlink(file, link), 0);
	o = open_folded(link);
	ck_assert_ptr_nonnull(o);
	ck_assert_int_eq(pr_output_discard(o), 0);
	is_link_to(link, file);
	ck_assert_str_eq(contents(file), "an earlier profile\n");
	ck_assert_int_eq(entries(data), 1);
	o = open_folded(link);
	ck_assert_ptr_nonnull(o);
	ck_assert_int_eq(pr_output_close(o, 0, 1000000), 0);
	is_link_to(link, file);
	ck_assert_str_eq(contents(file), "app;[unknown] 1\n");
	ck_assert_int_eq(entries(data), 1);
	ck_assert_int_eq(entries(links), 1);
}
END_TEST

START_TEST(a_dangling_link_makes_the_file_it_names)
{
	char link[256], file[256];
	struct pr_output *o;

	link_dirs();
	snprintf(link, sizeof(link), "%s/p.folded", links);
	snprintf(file, sizeof(file), "%s/new.folded", data);
	ck_assert_int_eq(symlink("../data/new.folded", link), 0);
	o = open_folded(link);
	ck_assert_ptr_nonnull(o);
	ck_assert_int_eq(pr_output_close(o, 0, 1000000), 0);
	is_link_to(link, "../data/new.folded");
	ck_assert_str_eq(contents(file), "app;[unknown] 1\n");
	ck_assert_int_eq(entries(data), 1);
}
END_TEST

START_TEST(a_dangling_link_into_no_directory_is_said_by_both_names)
{
	char link[256], want[1024];

	link_dirs();
	snprintf(link, sizeof(link), "%s/p.folded", links);
	ck_assert_int_eq(symlink("../gone/p.folded", link), 0);
	errno = 0;
	ck_assert_ptr_null(open_folded(link));
	ck_assert_int_eq(errno, ENOENT);
	snprintf(want, sizeof(want), "cannot write %s/../gone/p.folded, the file the symbolic "
		 "link %s names: %s; choose another " PR_LOG_SETTING_OUTPUT_PATH, links, link,
		 strerror(ENOENT));
	ck_assert_str_eq(logged, want);
	is_link_to(link, "../gone/p.folded");
}
END_TEST

START_TEST(links_that_loop_are_refused_and_left_alone)
{
	char a[256], b[256], want[1024];

	link_dirs();
	snprintf(a, sizeof(a), "%s/a.folded", links);
	snprintf(b, sizeof(b), "%s/b.folded", links);
	ck_assert_int_eq(symlink("b.folded", a), 0);
	ck_assert_int_eq(symlink("a.folded", b), 0);
	ck_assert_int_eq(pr_output_target(a, want, sizeof(want)), -ELOOP);
	errno = 0;
	ck_assert_ptr_null(open_folded(a));
	ck_assert_int_eq(errno, ELOOP);
	snprintf(want, sizeof(want), "cannot write %s: its symbolic links loop (or are more "
		 "than 40); point it at a file, or choose another " PR_LOG_SETTING_OUTPUT_PATH, a);
	ck_assert_str_eq(logged, want);
	is_link_to(a, "b.folded");
	is_link_to(b, "a.folded");
	ck_assert_int_eq(entries(links), 2);
	ck_assert_int_eq(entries(data), 0);
}
END_TEST

static Suite *suite(void)
{
	Suite *s = suite_create("output");
	TCase *tc = tcase_create("output");

	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, a_format_is_found_by_name_and_by_extension);
	tcase_add_test(tc, only_what_shows_source_lines_needs_them);
	tcase_add_test(tc, a_profile_is_written_whole_when_closed_under_its_name);
	tcase_add_test(tc, a_discarded_output_leaves_what_the_path_held);
	tcase_add_test(tc, a_killed_writers_staging_file_is_removed_and_a_live_ones_kept);
	tcase_add_test(tc, a_path_that_cannot_be_written_is_said_at_open);
	tcase_add_test(tc, a_device_is_written_in_place_and_a_full_one_said_at_close);
	tcase_add_test(tc, bad_options_are_refused);
	tcase_add_test(tc, perf_script_text_names_each_event_and_filters_one);
	tcase_add_test(tc, a_session_sink_merges_each_workers_share);
	tcase_add_test(tc, waits_are_counted_when_they_end_and_published);
	tcase_add_test(tc, in_cpu_time_only_samples_count);
	tcase_add_test(tc, the_target_is_where_the_links_end);
	tcase_add_test(tc, a_relative_link_in_another_directory_stays_a_link);
	tcase_add_test(tc, an_absolute_link_stays_a_link_and_a_discard_keeps_its_file);
	tcase_add_test(tc, a_dangling_link_makes_the_file_it_names);
	tcase_add_test(tc, a_dangling_link_into_no_directory_is_said_by_both_names);
	tcase_add_test(tc, links_that_loop_are_refused_and_left_alone);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	return run_suite(suite());
}
