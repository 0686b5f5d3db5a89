/* SPDX-License-Identifier: Apache-2.0 */
/*
 * A profile shipped window by window (prupload.h), without a kernel or a
 * network: the windows sink tiles time on the wall clock's multiples and
 * labels each group; the uploader writes each window to its directory,
 * keeps what a backend that is down cannot take in its spool for the
 * next run, drops the oldest from a full spool, and refuses what it
 * cannot use -- saying so in terms of its options, never a command's
 * flags.  (The agent's end-to-end test, tests/test-agent.py, delivers to
 * a loopback Pyroscope and OTLP receiver.)
 */
#include <check.h>
#include <dirent.h>
#include <errno.h>
#include <linux/perf_event.h>
#include <pthread.h>
#include <sys/stat.h>

#include "checkmain.h"
#include "profile-fixture.h"
#include "prupload.h"

#define S 1000000000ull
#define PID2 (PID + 1)

static const char *const RUN[] = { "main", "run", "leaf" };
static char map2_path[64], tmp[64];

static void setup2(void)
{
	setup();
	fake_process(PID2, map2_path, sizeof(map2_path));
	snprintf(tmp, sizeof(tmp), "/tmp/test-upload-XXXXXX");
	ck_assert_ptr_nonnull(mkdtemp(tmp));
}

static void teardown2(void)
{
	char cmd[128];

	snprintf(cmd, sizeof(cmd), "rm -rf %s", tmp);
	ck_assert_int_eq(system(cmd), 0);
	unlink(map2_path);
	teardown();
}

/* The log, from the caller's thread and the uploader's. */
static pthread_mutex_t log_lock = PTHREAD_MUTEX_INITIALIZER;
static char logtext[8192];

static void keep_log(enum pr_log_level level, const char *msg, void *ctx)
{
	(void)level;
	(void)ctx;
	pthread_mutex_lock(&log_lock);
	snprintf(logtext + strlen(logtext), sizeof(logtext) - strlen(logtext), "%s\n", msg);
	pthread_mutex_unlock(&log_lock);
}

/* What the windows shipped. */
static struct pr_window *shipped[16];
static size_t nr_shipped;

static int keep_window(void *ctx, struct pr_window *w)
{
	ck_assert_ptr_eq(ctx, &nr_shipped);
	ck_assert_uint_lt(nr_shipped, 16);
	shipped[nr_shipped++] = w;
	return 0;
}

/* One CPU sample of `pid` at `time` (event clock) into the sink. */
static int sample(const struct pr_sink *sink, uint32_t pid, uint64_t time)
{
	struct pr_frame frames[16];
	struct pr_stack st = make_stack(frames, RUN, 3, 0x10);
	struct pr_record r = sample_at(pid, BASE);
	struct pr_sink_sample smp = { .rec = &r, .st = &st, .sym = sym, .comm = "app",
				      .process = "app" };
	int ret;

	r.time = time;
	r.fields = PR_ID_TID | PR_ID_TIME;
	r.u.sample.period = 1;
	ret = sink->time(sink->ctx, time);
	ck_assert_int_ge(ret, 0);
	ck_assert_int_eq(sink->sample(sink->ctx, &smp), 0);
	return ret;
}

static const char *label(const struct pr_window *w, const char *key)
{
	for (size_t i = 0; i < w->nr_labels; i++)
		if (!strcmp(w->labels[i].key, key))
			return w->labels[i].value;
	return NULL;
}

static const struct pr_attr *attr(const struct pr_window *w, const char *key)
{
	for (size_t i = 0; i < w->nr_resource; i++)
		if (!strcmp(w->resource[i].key, key))
			return &w->resource[i];
	return NULL;
}

START_TEST(windows_tile_the_wall_clock_one_profile_per_process)
{
	static const struct pr_label tags[] = { { "env", "test" } };
	PR_OPTS(pr_windows_opts, wo, .log = keep_log, .interval_ns = S,
		.group_by = PR_GROUP_PROCESS, .tags = tags, .nr_tags = 1, .host = "h1", .freq = 49,
		.ship = keep_window, .ship_ctx = &nr_shipped);
	PR_OPTS(pr_profile_opts, po, .freq = 49);
	struct pr_windows_stats st = { .sz = sizeof(st) };
	/* Event time 5 s is 100.5 s on the wall: the first window ends at
	 * 101 s, the next at 102 s. */
	struct pr_windows *w = pr_windows_new(&wo, &po, 5 * S, 100 * S + S / 2);
	struct pr_sink sink;
	char pid[16];

	ck_assert_ptr_nonnull(w);
	pr_windows_sink(w, &sink);
	ck_assert_msg(!sink.part_new, "the windows take one worker");
	ck_assert_int_eq(sample(&sink, PID, 5 * S + S / 10), 0);
	ck_assert_int_eq(sample(&sink, PID2, 5 * S + S / 5), 0);
	/* A record past the first window's end cuts it, and the model may
	 * trim what that window held. */
	ck_assert_int_eq(sample(&sink, PID, 6 * S + S / 5), PR_SINK_RELEASED);
	ck_assert_uint_eq(nr_shipped, 2);
	/* Windows end even when no record comes. */
	ck_assert_int_eq(sink.tick(sink.ctx, 6 * S + S / 2 + S / 5), PR_SINK_RELEASED);
	ck_assert_uint_eq(nr_shipped, 3);
	ck_assert_int_eq(pr_windows_finish(w, 7 * S), 0);
	ck_assert_int_eq(pr_windows_stats(w, &st), 0);
	ck_assert_uint_eq(st.windows, 3);
	ck_assert_uint_eq(st.profiles, 3);
	ck_assert_uint_eq(st.lost, 0);
	ck_assert_uint_eq(st.late, 0);
	pr_windows_free(w);

	ck_assert_uint_eq(shipped[0]->seq, 0);
	ck_assert_uint_eq(shipped[0]->start_ns, 100 * S + S / 2);
	ck_assert_uint_eq(shipped[0]->end_ns, 101 * S);
	ck_assert_uint_eq(shipped[1]->seq, 0);
	ck_assert_uint_eq(shipped[2]->seq, 1);
	ck_assert_uint_eq(shipped[2]->start_ns, 101 * S);
	ck_assert_uint_eq(shipped[2]->end_ns, 102 * S);
	for (size_t i = 0; i < nr_shipped; i++) {
		struct pr_window *win = shipped[i];
		uint32_t want = i == 1 ? PID2 : PID;

		snprintf(pid, sizeof(pid), "%u", want);
		/* Gone, the processes are named as the kernel kept their
		 * names. */
		ck_assert_str_eq(win->service, "app");
		ck_assert_uint_eq(win->freq, 49);
		ck_assert_uint_eq(pr_profile_samples(win->profile), 1);
		ck_assert_str_eq(label(win, "env"), "test");
		ck_assert_str_eq(label(win, "host_name"), "h1");
		ck_assert_str_eq(label(win, "pid"), pid);
		ck_assert_str_eq(attr(win, "service.name")->str, "app");
		ck_assert_str_eq(attr(win, "host.name")->str, "h1");
		ck_assert_int_eq(attr(win, "process.pid")->num, want);
		ck_assert_str_eq(attr(win, "env")->str, "test");
		pr_window_free(win);
	}
	ck_assert_str_eq(logtext, "");
}
END_TEST

/* What Pyroscope and OTLP refuse never reaches them: a service name
 * outside [A-Za-z0-9_./-], label values and thread names that are not
 * UTF-8, an event name with a '-' as a sample type. */
START_TEST(windows_name_and_label_what_the_backends_take)
{
	static const struct pr_label tags[] = { { "env", "t\xffst" } };
	static const char *const events[] = { "page-faults" };
	PR_OPTS(pr_windows_opts, wo, .log = keep_log, .interval_ns = S, .service = "g++ [x]",
		.tags = tags, .nr_tags = 1, .host = "h\xc3", .freq = 49, .ship = keep_window,
		.ship_ctx = &nr_shipped);
	PR_OPTS(pr_profile_opts, po, .freq = 49, .events = events, .nr_events = 1);
	struct pr_windows *w = pr_windows_new(&wo, &po, 5 * S, 100 * S);
	struct pr_frame frames[16];
	struct pr_stack st = make_stack(frames, RUN, 3, 0x10);
	struct pr_record r = sample_at(PID, BASE);
	struct pr_sink_sample smp = { .rec = &r, .st = &st, .sym = sym, .comm = "a\xff\xfe",
				      .process = "p\xed\xa0\x80" };
	struct pr_sink sink;
	struct pr_window *win;

	ck_assert_ptr_nonnull(w);
	pr_windows_sink(w, &sink);
	r.time = 5 * S + S / 10;
	r.fields = PR_ID_TID | PR_ID_TIME;
	r.u.sample.period = 1;
	ck_assert_int_eq(sink.time(sink.ctx, r.time), 0);
	ck_assert_int_eq(sink.sample(sink.ctx, &smp), 0);
	ck_assert_int_eq(pr_windows_finish(w, 6 * S), 0);
	pr_windows_free(w);
	ck_assert_uint_eq(nr_shipped, 1);
	win = shipped[0];
	ck_assert_str_eq(win->service, "g____x_");
	ck_assert_str_eq(attr(win, "service.name")->str, "g____x_");
	ck_assert_str_eq(label(win, "env"), "t\xef\xbf\xbdst");
	ck_assert_str_eq(label(win, "host_name"), "h\xef\xbf\xbd");
	ck_assert_str_eq(attr(win, "host.name")->str, "h\xef\xbf\xbd");
	/* Each bad byte is a U+FFFD; a surrogate's three are three. */
	ck_assert_str_eq(pr_profile_process(win->profile, PID),
			 "p\xef\xbf\xbd\xef\xbf\xbd\xef\xbf\xbd");
	ck_assert_int_eq(pr_profile_event_by_name(win->profile, "page_faults"), 0);
	ck_assert_int_lt(pr_profile_event_by_name(win->profile, "page-faults"), 0);
	pr_window_free(win);
	nr_shipped = 0;
}
END_TEST

/* A window of one sample of PID, numbered `seq`, at 0 s on the wall. */
static struct pr_window *one_window(const char *service, uint64_t seq)
{
	PR_OPTS(pr_profile_opts, po, .freq = 49);
	struct pr_window *w = calloc(1, sizeof(*w));
	struct pr_frame frames[16];
	struct pr_stack st = make_stack(frames, RUN, 3, 0x10);
	struct pr_record r = sample_at(PID, BASE);

	ck_assert_ptr_nonnull(w);
	w->profile = pr_profile_new(&po);
	ck_assert_ptr_nonnull(w->profile);
	ck_assert_int_eq(pr_profile_add(w->profile, sym, &r, &st, "app", "app"), 0);
	w->service = strdup(service);
	w->seq = seq;
	w->end_ns = S;
	w->freq = 49;
	return w;
}

/* The names in `dir` ending in `ext`, counted; the first into `first`. */
static size_t files(const char *dir, const char *ext, char *first, size_t len)
{
	DIR *d = opendir(dir);
	struct dirent *de;
	size_t n = 0;

	ck_assert_ptr_nonnull(d);
	while ((de = readdir(d))) {
		size_t l = strlen(de->d_name);

		if (l < strlen(ext) || strcmp(de->d_name + l - strlen(ext), ext))
			continue;
		if (!n++ && first)
			snprintf(first, len, "%s", de->d_name);
	}
	closedir(d);
	return n;
}

START_TEST(the_uploader_writes_each_window_to_its_directory_gzipped)
{
	char dir[128], name[256], path[512];
	unsigned char magic[2] = { 0 };
	PR_OPTS(pr_uploader_opts, uo, .log = keep_log, .out_dir = dir);
	struct pr_uploader *up;
	struct stat st;
	FILE *f;

	/* Made, with the folders above it. */
	umask(022);
	snprintf(dir, sizeof(dir), "%s/a/profiles", tmp);
	up = pr_uploader_new(&uo);
	ck_assert_msg(up, "%s", logtext);
	ck_assert_int_eq(pr_uploader_submit(up, one_window("svc/1", 7)), 0);
	ck_assert_int_eq(pr_uploader_close(up, 0, NULL), 0);
	ck_assert_uint_eq(files(dir, ".pb.gz", name, sizeof(name)), 1);
	/* What a file name cannot hold goes as '_'. */
	ck_assert_str_eq(name, "svc_1-19700101T000000Z-7.pb.gz");
	snprintf(path, sizeof(path), "%s/%s", dir, name);
	/* It names what every process of the host ran: its owner's alone,
	 * whatever the umask (022 here: 0644 before). */
	ck_assert_int_eq(stat(path, &st), 0);
	ck_assert_uint_eq(st.st_mode & 0777, 0600);
	f = fopen(path, "rb");
	ck_assert_ptr_nonnull(f);
	ck_assert_uint_eq(fread(magic, 1, 2, f), 2);
	fclose(f);
	ck_assert_msg(magic[0] == 0x1f && magic[1] == 0x8b, "not gzip");
	ck_assert_str_eq(logtext, "");
}
END_TEST

START_TEST(a_backend_that_is_down_leaves_its_windows_in_the_spool_for_the_next_run)
{
	char spool[128], leaf[160];
	/* Nothing listens on port 9 (discard) of the loopback; no try is
	 * made anyway: the close gives no grace. */
	PR_OPTS(pr_uploader_opts, uo, .log = keep_log, .pyroscope_url = "http://127.0.0.1:9/",
		.spool_dir = spool, .timeout_s = 1);
	struct pr_uploader *up;

	snprintf(spool, sizeof(spool), "%s/spool", tmp);
	snprintf(leaf, sizeof(leaf), "%s/pyroscope", spool);
	up = pr_uploader_new(&uo);
	ck_assert_msg(up, "%s", logtext);
	ck_assert_int_eq(pr_uploader_submit(up, one_window("svc", 0)), 0);
	ck_assert_int_eq(pr_uploader_close(up, 0, NULL), 0);
	ck_assert_uint_eq(files(leaf, ".req", NULL, 0), 1);
	ck_assert_msg(strstr(logtext, "1 windows wait in ") &&
		      strstr(logtext, " for Pyroscope; the next start delivers them"), "%s", logtext);
}
END_TEST

START_TEST(a_full_spool_drops_its_oldest_windows_and_names_the_setting)
{
	char spool[128], leaf[160];
	PR_OPTS(pr_uploader_opts, uo, .log = keep_log, .otlp_url = "http://127.0.0.1:9",
		.spool_dir = spool, .spool_max_bytes = 1, .timeout_s = 1);
	struct pr_uploader *up;

	snprintf(spool, sizeof(spool), "%s/spool", tmp);
	snprintf(leaf, sizeof(leaf), "%s/otlp", spool);
	up = pr_uploader_new(&uo);
	ck_assert_msg(up, "%s", logtext);
	/* The newest stays, even alone over the bound. */
	ck_assert_int_eq(pr_uploader_submit(up, one_window("svc", 0)), 0);
	ck_assert_int_eq(pr_uploader_submit(up, one_window("svc", 1)), 0);
	ck_assert_int_eq(pr_uploader_close(up, 0, NULL), 0);
	ck_assert_uint_eq(files(leaf, ".req", NULL, 0), 1);
	ck_assert_msg(strstr(logtext, "the spool of the OTLP receiver is full ("
			      PR_LOG_SETTING_SPOOL_SIZE "): 1 of the oldest windows dropped"),
		      "%s", logtext);
	ck_assert_msg(!strstr(logtext, "--"), "%s", logtext);
}
END_TEST

START_TEST(the_uploader_refuses_what_it_cannot_use)
{
	char spool[128];
	PR_OPTS(pr_uploader_opts, ftp, .log = keep_log, .pyroscope_url = "ftp://h",
		.spool_dir = spool);
	PR_OPTS(pr_uploader_opts, nospool, .log = keep_log, .otlp_url = "http://h");
	PR_OPTS(pr_uploader_opts, inurl, .log = keep_log, .pyroscope_url = "http://u:s3cret@h:4040",
		.spool_dir = spool);
	PR_OPTS(pr_uploader_opts, otlp_inurl, .log = keep_log, .otlp_url = "https://tok3n@h/a@b",
		.spool_dir = spool);
	PR_OPTS(pr_uploader_opts, fast, .log = keep_log, .clock_rate = 5000);
	PR_OPTS(pr_windows_opts, noship, .interval_ns = S, .host = "h");
	PR_OPTS(pr_windows_opts, part, .interval_ns = S / 2, .host = "h", .ship = keep_window);

	snprintf(spool, sizeof(spool), "%s/spool", tmp);
	errno = 0;
	ck_assert_ptr_null(pr_uploader_new(&ftp));
	ck_assert_int_eq(errno, EINVAL);
	ck_assert_msg(strstr(logtext, "invalid Pyroscope URL 'ftp://h': it must start with "
			      "http:// or https://"), "%s", logtext);
	/* Credentials in a URL: refused, naming the settings, never echoed. */
	errno = 0;
	ck_assert_ptr_null(pr_uploader_new(&inurl));
	ck_assert_int_eq(errno, EINVAL);
	ck_assert_msg(strstr(logtext, "the URL of Pyroscope carries credentials") &&
		      strstr(logtext, "give them as " PR_LOG_SETTING_PYROSCOPE_CREDENTIALS) &&
		      !strstr(logtext, "s3cret"), "%s", logtext);
	errno = 0;
	ck_assert_ptr_null(pr_uploader_new(&otlp_inurl));
	ck_assert_int_eq(errno, EINVAL);
	ck_assert_msg(strstr(logtext, "give them as " PR_LOG_SETTING_OTLP_HEADERS) &&
		      !strstr(logtext, "tok3n"), "%s", logtext);
	errno = 0;
	ck_assert_ptr_null(pr_uploader_new(&nospool));
	ck_assert_int_eq(errno, EINVAL);
	errno = 0;
	ck_assert_ptr_null(pr_uploader_new(&fast));
	ck_assert_int_eq(errno, EINVAL);
	ck_assert_msg(!strstr(logtext, "--"), "%s", logtext);
	ck_assert_int_eq(pr_uploader_close(NULL, 0, NULL), 0);

	errno = 0;
	ck_assert_ptr_null(pr_windows_new(&noship, NULL, 0, 0));
	ck_assert_int_eq(errno, EINVAL);
	/* Pyroscope's times are whole seconds. */
	errno = 0;
	ck_assert_ptr_null(pr_windows_new(&part, NULL, 0, 0));
	ck_assert_int_eq(errno, EINVAL);
	pr_windows_free(NULL);
	pr_window_free(NULL);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("upload");
	TCase *tc = tcase_create("upload");

	tcase_add_checked_fixture(tc, setup2, teardown2);
	tcase_add_test(tc, windows_tile_the_wall_clock_one_profile_per_process);
	tcase_add_test(tc, windows_name_and_label_what_the_backends_take);
	tcase_add_test(tc, the_uploader_writes_each_window_to_its_directory_gzipped);
	tcase_add_test(tc, a_backend_that_is_down_leaves_its_windows_in_the_spool_for_the_next_run);
	tcase_add_test(tc, a_full_spool_drops_its_oldest_windows_and_names_the_setting);
	tcase_add_test(tc, the_uploader_refuses_what_it_cannot_use);
	suite_add_tcase(s, tc);
	return run_suite(s);
}
