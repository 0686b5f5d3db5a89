/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Fixtures of the perf.data tests: a small complete file written as a
 * recording would write it, the records to build others from, and a log
 * callback that keeps what the reader said.
 */
#include <check.h>
#include <dirent.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "perfdata-fixture.h"

char logtext[16384];

void keep_log(enum pr_log_level level, const char *msg, void *ctx)
{
	(void)level;
	(void)ctx;
	snprintf(logtext + strlen(logtext), sizeof(logtext) - strlen(logtext),
		 "%s\n", msg);
}

struct perf_event_attr test_attr(void)
{
	struct perf_event_attr a;

	ck_assert_int_eq(pr_event_attr(NULL, PR_SOURCE_CPU_CLOCK, PR_ATTR_SHARED_RING,
				       &a), 0);
	return a;
}

/* A sample of `pid` at `ip`, time `t`, in test_attr()'s layout. */
void put_sample(struct synth *s, uint32_t pid, uint64_t ip, uint64_t t)
{
	put_sample_of(s, 42, PERF_RECORD_MISC_USER, pid, ip, t);
}

/* The same for event `id`, with header misc `misc`; its user registers
 * hold 0x1000 + their index (the IP 0x1008). */
void put_sample_of(struct synth *s, uint64_t id, uint16_t misc, uint32_t pid,
		   uint64_t ip, uint64_t t)
{
	synth_begin(s, PERF_RECORD_SAMPLE, misc);
	synth_u64(s, id);                    /* identifier */
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

void put_mmap2_prot(struct synth *s, uint32_t pid, uint64_t addr, uint64_t len,
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

/* A PERF_RECORD_SWITCH of event `id` with header misc `misc`. */
void put_switch(struct synth *s, uint64_t id, uint16_t misc, uint32_t pid, uint64_t t)
{
	synth_begin(s, PERF_RECORD_SWITCH, misc);
	synth_trailer(s, test_attr().sample_type, pid, pid, t, 1, id);
	synth_end(s);
}

/* An executable mapping (r-x). */
void put_mmap2(struct synth *s, uint32_t pid, uint64_t addr, uint64_t len,
	       const char *path, uint64_t t)
{
	put_mmap2_prot(s, pid, addr, len, path, t, 5);
}

/* Write one record built in `s` (from offset `from`). */
void write_built(struct pr_writer *w, const struct synth *s, size_t from)
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

static char tmpdir[256];

/* After each test (in its own process): the files it wrote, and the
 * directory. */
void remove_tmpdir(void)
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

const char *tmp_path(const char *name)
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
struct pr_writer *test_writer(const char *name, const char **path)
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
const char *write_small_file(void)
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

unsigned char *file_bytes(const char *path, size_t *len)
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

int count_cb(const struct pr_record *rec, void *arg)
{
	(void)rec;
	(*(int *)arg)++;
	return 0;
}

unsigned char *small_copy(size_t *len, struct perfdata_header *h)
{
	unsigned char *buf = file_bytes(write_small_file(), len);

	memcpy(h, buf, sizeof(*h));
	return buf;
}

struct pr_file *open_bytes(const unsigned char *buf, size_t len, bool by_path,
			   const struct pr_file_opts *opts)
{
	const char *path = tmp_path("bytes.data");
	FILE *out;

	if (!by_path)
		return pr_file_open_mem(buf, len, opts);
	out = fopen(path, "w");
	ck_assert_ptr_nonnull(out);
	ck_assert_uint_eq(fwrite(buf, 1, len, out), len);
	ck_assert_int_eq(fclose(out), 0);
	return pr_file_open(path, opts);
}
