/* SPDX-License-Identifier: Apache-2.0 */
/*
 * perf.data without a kernel: what the writer writes the reader reads back
 * (records in timestamp order, features, build-ids); every kind of damage
 * to a file is refused or salvaged with a message naming the byte offset,
 * never a crash, a hang or a runaway allocation; the checked-in fixture
 * replays identically on any machine.
 */
#include <check.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/auxv.h>
#include <sys/stat.h>
#include <unistd.h>

#include "checkmain.h"
#include "fixtures/fixture.h"
#include "records/records.h"
#include "model/model.h"
#include "perfdata/perfdata.h"
#include "capture/synth.h"

static char logtext[16384];

static void keep_log(enum pr_log_level level, const char *msg, void *ctx)
{
	(void)level;
	(void)ctx;
	snprintf(logtext + strlen(logtext), sizeof(logtext) - strlen(logtext),
		 "%s\n", msg);
}

static struct perf_event_attr test_attr(void)
{
	struct perf_event_attr a;

	ck_assert_int_eq(pr_event_attr(NULL, PR_SOURCE_CPU_CLOCK, PR_ATTR_SHARED_RING,
				       &a), 0);
	return a;
}

/* A sample of `pid` at `ip`, time `t`, in test_attr()'s layout. */
static void put_sample(struct synth *s, uint32_t pid, uint64_t ip, uint64_t t)
{
	synth_begin(s, PERF_RECORD_SAMPLE, PERF_RECORD_MISC_USER);
	synth_u64(s, 42);                    /* identifier */
	synth_u64(s, ip);
	synth_u32x2(s, pid, pid);
	synth_u64(s, t);
	synth_u32x2(s, 1, 0);                /* cpu */
	synth_u64(s, 10101010);              /* period */
	synth_u64(s, 0);                     /* callchain nr */
	synth_u64(s, PERF_SAMPLE_REGS_ABI_64);
	for (int r = 0; r < 17; r++)
		synth_u64(s, 0x1000u + (unsigned)r);
	synth_u64(s, 16);                    /* stack size */
	synth_u64(s, 0x0706050403020100ull);
	synth_u64(s, 0x0f0e0d0c0b0a0908ull);
	synth_u64(s, 16);                    /* dyn size */
	synth_end(s);
}

static void put_mmap2_prot(struct synth *s, uint32_t pid, uint64_t addr, uint64_t len,
			   const char *path, uint64_t t, uint32_t prot)
{
	synth_begin(s, PERF_RECORD_MMAP2, PERF_RECORD_MISC_USER);
	synth_u32x2(s, pid, pid);
	synth_u64(s, addr);
	synth_u64(s, len);
	synth_u64(s, 0);
	synth_u32x2(s, 0, 0);
	synth_u64(s, 0);
	synth_u64(s, 0);
	synth_u32x2(s, prot, 2);
	synth_string(s, path);
	synth_trailer(s, test_attr().sample_type, pid, pid, t, 1, 42);
	synth_end(s);
}

/* An executable mapping (r-x). */
static void put_mmap2(struct synth *s, uint32_t pid, uint64_t addr, uint64_t len,
		      const char *path, uint64_t t)
{
	put_mmap2_prot(s, pid, addr, len, path, t, 5);
}

/* Write one record built in `s` (from offset `from`). */
static void write_built(struct pr_writer *w, const struct synth *s, size_t from)
{
	struct perf_event_attr a = test_attr();
	struct pr_parse_cfg cfg;
	struct pr_record rec;
	const char *why;
	uint16_t size;

	memcpy(&size, s->buf + from + 6, 2);
	pr__parse_cfg_from_attr(&cfg, &a);
	ck_assert_int_eq(pr__record_parse(&cfg, s->buf + from, size, &rec, &why), 0);
	ck_assert_int_eq(pr_writer_write(w, &rec), 0);
}

/* No such process: the writer cannot read its /proc/PID/map_files and
 * falls back to the mapped file's path. */
#define GHOST_PID 0x7ffffff0u

static char tmpdir[256];

/* After each test (in its own process): the files it wrote, and the
 * directory. */
static void remove_tmpdir(void)
{
	DIR *d;
	struct dirent *de;
	char path[512];

	if (!tmpdir[0] || !(d = opendir(tmpdir)))
		return;
	while ((de = readdir(d)))
		if (de->d_name[0] != '.') {
			snprintf(path, sizeof(path), "%s/%s", tmpdir, de->d_name);
			unlink(path);
		}
	closedir(d);
	rmdir(tmpdir);
	tmpdir[0] = '\0';
}

static const char *tmp_path(const char *name)
{
	static char path[512];

	if (!tmpdir[0]) {
		snprintf(tmpdir, sizeof(tmpdir), "/tmp/ds-test-perfdata-XXXXXX");
		ck_assert_ptr_nonnull(mkdtemp(tmpdir));
	}
	snprintf(path, sizeof(path), "%s/%s", tmpdir, name);
	return path;
}

/* A writer of test_attr()'s event (id 42) to `name` in the test's
 * directory; *path is where. */
static struct pr_writer *test_writer(const char *name, const char **path)
{
	struct perf_event_attr a = test_attr();
	uint64_t ids[] = { 42 };
	struct pr_writer *w;

	*path = tmp_path(name);
	w = pr_writer_open(*path, &a, ids, 1, NULL);
	ck_assert_ptr_nonnull(w);
	return w;
}

/*
 * A small complete file: an MMAP2 of this test binary, then samples in it
 * written out of time order across two rounds, as two CPUs' rings would
 * deliver them.
 */
static const char *write_small_file(void)
{
	static char *argv[] = { "dwarfsample", "record", "-o", "x.data" };
	PR_OPTS(pr_writer_opts, o, .argc = 4, .argv = argv, .log = keep_log);
	struct perf_event_attr a = test_attr();
	static struct synth s;
	uint64_t ids[] = { 42, 43 };
	const char *path = tmp_path("small.data");
	struct pr_writer *w = pr_writer_open(path, &a, ids, 2, &o);
	size_t at[8];

	ck_assert_ptr_nonnull(w);
	s.len = 0;
	at[0] = s.len;
	put_mmap2(&s, GHOST_PID, 0x400000, 0x10000, "/proc/self/exe", 5);
	at[1] = s.len;
	put_sample(&s, GHOST_PID, 0x401020, 30);
	at[2] = s.len;
	put_sample(&s, GHOST_PID, 0x401000, 10);
	at[3] = s.len;
	put_sample(&s, GHOST_PID, 0x401010, 20);
	for (int i = 0; i < 4; i++)
		write_built(w, &s, at[i]);
	ck_assert_int_eq(pr_writer_finish_round(w), 0);
	s.len = 0;
	put_sample(&s, GHOST_PID, 0x401030, 40);
	write_built(w, &s, 0);
	ck_assert_int_eq(pr_writer_close(w), 0);
	return path;
}

static unsigned char *slurp(const char *path, size_t *len)
{
	struct stat st;
	unsigned char *buf;
	int fd = open(path, O_RDONLY);

	ck_assert_int_ge(fd, 0);
	ck_assert_int_eq(fstat(fd, &st), 0);
	buf = malloc((size_t)st.st_size + 1);
	ck_assert_int_eq(read(fd, buf, (size_t)st.st_size), st.st_size);
	close(fd);
	*len = (size_t)st.st_size;
	return buf;
}

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

/* Open a damaged copy; it must either fail with EBADMSG and a message
 * naming `offset`, or (expect_ok) succeed. */
static void check_refused(const unsigned char *buf, size_t len, const char *why,
			  long offset)
{
	PR_OPTS(pr_file_opts, o, .log = keep_log);
	struct pr_file *f;

	logtext[0] = 0;
	errno = 0;
	f = pr_file_open_mem(buf, len, &o);
	ck_assert_msg(!f, "a damaged file was accepted (expected: %s)", why);
	ck_assert_int_eq(errno, EBADMSG);
	ck_assert_msg(strstr(logtext, why), "log lacks '%s': %s", why, logtext);
	if (offset >= 0) {
		char at[64];

		snprintf(at, sizeof(at), "at byte offset %ld", offset);
		ck_assert_msg(strstr(logtext, at), "log lacks '%s': %s", at, logtext);
	}
}

static int count_cb(const struct pr_record *rec, void *arg)
{
	(void)rec;
	(*(int *)arg)++;
	return 0;
}

/* A damaged record header: the file opens, and reading stops there with
 * an error naming `why` at `offset`, after what came before it. */
static void check_read_refused(const unsigned char *buf, size_t len,
			       const char *why, long offset)
{
	PR_OPTS(pr_file_opts, o, .log = keep_log);
	struct pr_file *f;
	char at[64];
	int n = 0;

	logtext[0] = 0;
	f = pr_file_open_mem(buf, len, &o);
	ck_assert_msg(f, "%s", logtext);
	ck_assert_int_eq(pr_file_consume(f, count_cb, &n), -EBADMSG);
	ck_assert_msg(strstr(logtext, why), "log lacks '%s': %s", why, logtext);
	snprintf(at, sizeof(at), "at byte offset %ld", offset);
	ck_assert_msg(strstr(logtext, at), "log lacks '%s': %s", at, logtext);
	ck_assert_int_le(n, 5);
	/* The walk stays stopped: no loop over the bad header. */
	ck_assert_int_eq(pr_file_consume(f, count_cb, &n), 0);
	pr_file_close(f);
}

static unsigned char *small_copy(size_t *len, struct perfdata_header *h)
{
	unsigned char *buf = slurp(write_small_file(), len);

	memcpy(h, buf, sizeof(*h));
	return buf;
}

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

START_TEST(a_wrong_magic_is_refused)
{
	struct perfdata_header h;
	size_t len;
	unsigned char *buf = small_copy(&len, &h);

	memcpy(buf, "NOTPERF!", 8);
	check_refused(buf, len, "not a perf.data file", 0);
	h.magic = PERFDATA_MAGIC_SWAPPED;
	memcpy(buf, &h.magic, 8);
	check_refused(buf, len, "big-endian", 0);
	memcpy(buf, "PERFFILE", 8);
	check_refused(buf, len, "version 1", 0);
	free(buf);
}
END_TEST

START_TEST(a_pipe_mode_file_is_refused_with_how_to_convert_it)
{
	unsigned char buf[64] = "PERFILE2";
	uint64_t size = 16;

	memcpy(buf + 8, &size, 8);
	check_refused(buf, sizeof(buf), "perf inject", 8);
}
END_TEST

START_TEST(attr_size_zero_is_refused)
{
	struct perfdata_header h;
	size_t len;
	unsigned char *buf = small_copy(&len, &h);
	uint64_t zero = 0;

	memcpy(buf + offsetof(struct perfdata_header, attr_size), &zero, 8);
	check_refused(buf, len, "impossible attr_size (0)", 16);
	free(buf);
}
END_TEST

START_TEST(absurd_section_sizes_are_refused_without_allocating_them)
{
	struct perfdata_header h;
	size_t len;
	unsigned char *buf = small_copy(&len, &h);
	unsigned char *copy = malloc(len);
	uint64_t huge = UINT64_C(1) << 62;

	memcpy(copy, buf, len);
	memcpy(copy + offsetof(struct perfdata_header, attrs.size), &huge, 8);
	check_refused(copy, len, "attrs section runs past the end", 24);

	/* The attr's own ids section pointing far away. */
	memcpy(copy, buf, len);
	memcpy(copy + h.attrs.offset + sizeof(struct perf_event_attr) + 8, &huge, 8);
	check_refused(copy, len, "event ids section runs past the end",
		      (long)(h.attrs.offset + sizeof(struct perf_event_attr)));

	memcpy(copy, buf, len);
	memcpy(copy + offsetof(struct perfdata_header, data.offset), &huge, 8);
	check_refused(copy, len, "data section starts past the end", 40);
	free(copy);
	free(buf);
}
END_TEST

START_TEST(a_record_running_past_the_data_section_is_refused)
{
	struct perfdata_header h;
	size_t len;
	unsigned char *buf = small_copy(&len, &h);
	uint16_t size = 0xfff8;

	/* The first record's size. */
	memcpy(buf + h.data.offset + 6, &size, 2);
	check_read_refused(buf, len, "record runs past the end of the data section",
			   (long)h.data.offset);
	size = 0;
	memcpy(buf + h.data.offset + 6, &size, 2);
	check_read_refused(buf, len, "record size below 8", (long)h.data.offset);
	free(buf);
}
END_TEST

START_TEST(compressed_files_are_refused_with_how_to_convert_them)
{
	struct perfdata_header h;
	size_t len;
	unsigned char *buf = small_copy(&len, &h);
	uint32_t type = PERFDATA_RECORD_COMPRESSED;

	memcpy(buf + h.data.offset, &type, 4);
	check_read_refused(buf, len, "perf inject", (long)h.data.offset);
	free(buf);
}
END_TEST

START_TEST(a_file_from_another_architecture_is_refused)
{
	struct perfdata_header h;
	size_t len;
	unsigned char *buf = small_copy(&len, &h);
	unsigned char *p = memmem(buf, len, "x86_64", 7);

	ck_assert_ptr_nonnull(p);
	memcpy(p, "arm64\0", 6);
	check_refused(buf, len, "recorded on arm64", -1);
	free(buf);
}
END_TEST

/* Absurd counts inside features: skipped with a warning, records intact. */
/* The index of feature `feat` in the file's feature table. */
static int feature_slot(const struct perfdata_header *h, int feat)
{
	int k = 0;

	for (int b = 0; b < feat; b++)
		k += (int)(h->features[b / 64] >> (b % 64) & 1);
	ck_assert(h->features[feat / 64] >> (feat % 64) & 1);
	return k;
}

/* Absurd counts inside features: skipped with a warning, records intact. */
START_TEST(malformed_features_are_skipped_and_the_records_still_read)
{
	PR_OPTS(pr_file_opts, o, .log = keep_log);
	struct perfdata_header h;
	size_t len;
	unsigned char *buf = small_copy(&len, &h);
	uint64_t table = h.data.offset + h.data.size, huge = UINT64_C(1) << 60;
	struct perfdata_section sec;
	struct pr_file_stats st = { .sz = sizeof(st) };
	struct pr_file *f;
	uint32_t nr = 0xffffffff;

	/* The command line claims four billion strings. */
	memcpy(&sec, buf + table + feature_slot(&h, FEAT_CMDLINE) * sizeof(sec),
	       sizeof(sec));
	memcpy(buf + sec.offset, &nr, 4);
	/* The host name's section points far past the end. */
	memcpy(buf + table + feature_slot(&h, FEAT_HOSTNAME) * sizeof(sec), &huge, 8);
	logtext[0] = 0;
	f = pr_file_open_mem(buf, len, &o);
	ck_assert_msg(f, "%s", logtext);
	ck_assert_msg(strstr(logtext, "is malformed"), "%s", logtext);
	ck_assert_msg(strstr(logtext, "runs past the end of the file; ignored"), "%s", logtext);
	ck_assert_ptr_null(pr_file_string(f, PR_FILE_HOSTNAME));
	ck_assert_str_eq(pr_file_string(f, PR_FILE_ARCH), "x86_64");
	{
		int n = 0;

		ck_assert_int_eq(pr_file_consume(f, count_cb, &n), 5);
	}
	pr_file_stats(f, &st);
	ck_assert_uint_eq(st.samples, 4);
	pr_file_close(f);
	free(buf);
}
END_TEST

/* Cut the file at every length: each prefix is refused cleanly or read
 * as a salvaged recording, never more records than the whole had. */
START_TEST(every_truncation_is_refused_or_salvaged)
{
	PR_OPTS(pr_file_opts, o, .log = keep_log);
	struct perfdata_header h;
	size_t len;
	unsigned char *buf = small_copy(&len, &h);
	int salvaged_some = 0;

	for (size_t cut = 0; cut < len; cut++) {
		unsigned char *prefix = malloc(cut ? cut : 1);
		struct pr_file *f;

		memcpy(prefix, buf, cut);
		logtext[0] = 0;
		f = pr_file_open_mem(prefix, cut, &o);
		if (f) {
			struct pr_file_stats st = { .sz = sizeof(st) };
			int n = 0;

			pr_file_stats(f, &st);
			ck_assert_int_ge(pr_file_consume(f, count_cb, &n), 0);
			ck_assert_int_le(n, 5);
			if (cut < h.data.offset + h.data.size) {
				ck_assert(st.truncated);
				ck_assert_msg(strstr(logtext, "last complete record"), "%s", logtext);
			}
			salvaged_some += n > 0;
			pr_file_close(f);
		} else {
			ck_assert_msg(logtext[0], "cut at %zu refused without a message", cut);
		}
		free(prefix);
	}
	ck_assert_int_gt(salvaged_some, 0);
	free(buf);
}
END_TEST

/* A recorder killed before it finished leaves data size 0 in the header:
 * the records it flushed are still read. */
START_TEST(an_unfinished_recording_is_read_to_its_last_complete_record)
{
	PR_OPTS(pr_file_opts, o, .log = keep_log);
	struct perfdata_header h;
	size_t len;
	unsigned char *buf = small_copy(&len, &h);
	uint64_t zero = 0;
	struct pr_file *f;
	int n = 0;

	/* What the writer's first header says: no data size, no features. */
	memcpy(buf + offsetof(struct perfdata_header, data.size), &zero, 8);
	memset(buf + offsetof(struct perfdata_header, features), 0, 32);
	/* Cut halfway through the last record, as a kill mid-write would. */
	len = h.data.offset + h.data.size - 100;
	logtext[0] = 0;
	f = pr_file_open_mem(buf, len, &o);
	ck_assert_msg(f, "%s", logtext);
	ck_assert_msg(strstr(logtext, "did not finish"), "%s", logtext);
	ck_assert_int_eq(pr_file_consume(f, count_cb, &n), 4);
	pr_file_close(f);
	free(buf);
}
END_TEST

/* Thousands of attrs all claiming the file's bytes as their id table would
 * ask for a table quadratic in the file's size. */
START_TEST(overlapping_id_tables_are_refused)
{
	enum { N = 64 };
	struct perfdata_header h;
	struct perf_event_attr a = test_attr();
	size_t entry = PERFDATA_ATTR_SIZE + sizeof(struct perfdata_section);
	size_t len = sizeof(h) + N * entry + 4096;
	unsigned char *buf = calloc(1, len);
	struct perfdata_section ids = { 0, len & ~(size_t)7 };

	memset(&h, 0, sizeof(h));
	h.magic = PERFDATA_MAGIC;
	h.size = sizeof(h);
	h.attr_size = entry;
	h.attrs.offset = sizeof(h);
	h.attrs.size = N * entry;
	h.data.offset = sizeof(h) + N * entry;
	memcpy(buf, &h, sizeof(h));
	a.size = PERFDATA_ATTR_SIZE;
	for (size_t i = 0; i < N; i++) {
		memcpy(buf + sizeof(h) + i * entry, &a, PERFDATA_ATTR_SIZE);
		memcpy(buf + sizeof(h) + i * entry + PERFDATA_ATTR_SIZE, &ids, sizeof(ids));
	}
	check_refused(buf, len, "event ids sections add up to more than the file", -1);
	free(buf);
}
END_TEST

START_TEST(compressed2_files_are_refused_too)
{
	struct perfdata_header h;
	size_t len;
	unsigned char *buf = small_copy(&len, &h);
	uint32_t type = PERFDATA_RECORD_COMPRESSED2;

	memcpy(buf + h.data.offset, &type, 4);
	check_read_refused(buf, len, "perf inject", (long)h.data.offset);
	free(buf);
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
	tcase_add_test(tc, a_wrong_magic_is_refused);
	tcase_add_test(tc, a_pipe_mode_file_is_refused_with_how_to_convert_it);
	tcase_add_test(tc, attr_size_zero_is_refused);
	tcase_add_test(tc, absurd_section_sizes_are_refused_without_allocating_them);
	tcase_add_test(tc, a_record_running_past_the_data_section_is_refused);
	tcase_add_test(tc, compressed_files_are_refused_with_how_to_convert_them);
	tcase_add_test(tc, a_file_from_another_architecture_is_refused);
	tcase_add_test(tc, malformed_features_are_skipped_and_the_records_still_read);
	tcase_add_test(tc, every_truncation_is_refused_or_salvaged);
	tcase_add_test(tc, an_unfinished_recording_is_read_to_its_last_complete_record);
	tcase_add_test(tc, overlapping_id_tables_are_refused);
	tcase_add_test(tc, compressed2_files_are_refused_too);
	tcase_add_test(tc, build_ids_follow_time_order_not_file_order);
	tcase_add_test(tc, build_ids_cover_every_file_a_sampled_process_maps_executable);
	tcase_add_test(tc, a_finished_empty_file_reads_as_empty_without_warning);
	tcase_add_test(tc, the_vdso_has_a_build_id);
	tcase_add_test(tc, a_missing_or_unwritable_path_is_reported);
	tcase_add_test(tc, the_fixture_replays_identically_and_finds_its_binary_by_build_id);
	suite_add_tcase(s, tc);
	return run_suite(s);
}
