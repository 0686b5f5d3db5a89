/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Records without a kernel: every record type written into a fake ring and
 * read back typed; a sample wrapping the end of the ring at every byte
 * offset; corrupt, zero-size and truncated headers; the push and pull
 * contracts.
 */
#include <check.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>

#include "checkmain.h"
#include "fakering.h"
#include "fakesample.h"
#include "capture/reader.h"

static struct perf_event_attr attr_for(unsigned int flags)
{
	struct perf_event_attr attr;

	ck_assert_int_eq(pr_event_attr(NULL, PR_SOURCE_CPU_CLOCK, flags, &attr), 0);
	return attr;
}

struct collected {
	struct pr_record recs[16];
	char names[16][64];
	int n;
	int stop_at;      /* return -42 on this record (1-based), 0: never */
};

static int collect(const struct pr_record *rec, void *arg)
{
	struct collected *c = arg;

	ck_assert_int_lt(c->n, 16);
	c->recs[c->n] = *rec;
	/* Strings point into the ring; keep a copy past the callback. */
	if (rec->type == PR_RECORD_COMM)
		snprintf(c->names[c->n], 64, "%s", rec->u.comm.comm);
	if (rec->type == PR_RECORD_MMAP || rec->type == PR_RECORD_MMAP2)
		snprintf(c->names[c->n], 64, "%s", rec->u.mmap.filename);
	c->n++;
	return c->n == c->stop_at ? -42 : 0;
}

static struct pr_reader *reader_on(struct fakering *f, const struct perf_event_attr *attr,
				   int cpu)
{
	struct pr_ring ring;
	struct pr_reader *r;

	fakering_ring(f, &ring, cpu);
	r = pr__reader_from_rings(&ring, 1, attr, NULL);
	ck_assert_ptr_nonnull(r);
	return r;
}

START_TEST(every_record_type_reads_back_typed)
{
	struct perf_event_attr attr = attr_for(PR_ATTR_SHARED_RING);
	static struct synth s;
	struct collected c = { 0 };
	struct fakering f;
	struct pr_reader *r;
	uint8_t bid[20];

	s.len = 0;
	for (int i = 0; i < 20; i++)
		bid[i] = (uint8_t)(0xa0 + i);

	put_sample(&s, 1, 77, 10, 11, 1000, 1, 0x7ffd0000, 64, 48, 0);

	synth_begin(&s, PERF_RECORD_MMAP, PERF_RECORD_MISC_USER);
	synth_u32x2(&s, 10, 10);
	synth_u64(&s, 0x400000);
	synth_u64(&s, 0x1000);
	synth_u64(&s, 0);
	synth_string(&s, "/bin/old-style");
	synth_sample_id(&s, 10, 10, 1001, 1, 77, 1);
	synth_end(&s);

	synth_begin(&s, PERF_RECORD_MMAP2, PERF_RECORD_MISC_USER);
	synth_u32x2(&s, 10, 12);
	synth_u64(&s, 0x7f0000001000);
	synth_u64(&s, 0x20000);
	synth_u64(&s, 0x3000);
	synth_u32x2(&s, 8, 1);                      /* maj, min */
	synth_u64(&s, 123456);                      /* ino */
	synth_u64(&s, 7);                           /* ino_generation */
	synth_u32x2(&s, 5, 2);                      /* prot r-x, MAP_PRIVATE */
	synth_string(&s, "/usr/lib/libfoo.so");
	synth_sample_id(&s, 10, 12, 1002, 1, 77, 1);
	synth_end(&s);

	synth_begin(&s, PERF_RECORD_MMAP2, PERF_RECORD_MISC_USER | PERF_RECORD_MISC_MMAP_BUILD_ID);
	synth_u32x2(&s, 10, 10);
	synth_u64(&s, 0x7f0000100000);
	synth_u64(&s, 0x1000);
	synth_u64(&s, 0);
	s.buf[s.len] = 20;
	memset(s.buf + s.len + 1, 0, 3);
	memcpy(s.buf + s.len + 4, bid, 20);
	s.len += 24;
	synth_u32x2(&s, 5, 2);
	synth_string(&s, "/usr/lib/libbid.so");
	synth_sample_id(&s, 10, 10, 1003, 1, 77, 1);
	synth_end(&s);

	synth_begin(&s, PERF_RECORD_COMM, PERF_RECORD_MISC_COMM_EXEC);
	synth_u32x2(&s, 10, 10);
	synth_string(&s, "newname");
	synth_sample_id(&s, 10, 10, 1004, 1, 77, 1);
	synth_end(&s);

	synth_begin(&s, PERF_RECORD_FORK, 0);
	synth_u32x2(&s, 10, 9);                     /* pid, ppid */
	synth_u32x2(&s, 13, 11);                    /* tid, ptid */
	synth_u64(&s, 1005);
	synth_sample_id(&s, 10, 11, 1005, 1, 77, 1);
	synth_end(&s);

	synth_begin(&s, PERF_RECORD_EXIT, 0);
	synth_u32x2(&s, 10, 9);
	synth_u32x2(&s, 13, 11);
	synth_u64(&s, 1006);
	synth_sample_id(&s, 10, 13, 1006, 1, 77, 1);
	synth_end(&s);

	synth_begin(&s, PERF_RECORD_LOST, 0);
	synth_u64(&s, 77);
	synth_u64(&s, 5);
	synth_sample_id(&s, 10, 10, 1007, 1, 77, 1);
	synth_end(&s);

	synth_begin(&s, PERF_RECORD_LOST_SAMPLES, 0);
	synth_u64(&s, 3);
	synth_sample_id(&s, 10, 10, 1008, 1, 77, 1);
	synth_end(&s);

	synth_begin(&s, PERF_RECORD_THROTTLE, 0);
	synth_u64(&s, 1009);
	synth_u64(&s, 77);
	synth_u64(&s, 78);
	synth_sample_id(&s, 10, 10, 1009, 1, 77, 1);
	synth_end(&s);

	synth_begin(&s, PERF_RECORD_UNTHROTTLE, 0);
	synth_u64(&s, 1010);
	synth_u64(&s, 77);
	synth_u64(&s, 78);
	synth_sample_id(&s, 10, 10, 1010, 1, 77, 1);
	synth_end(&s);

	/* A type this library does not decode: handed out raw with its
	 * identity. */
	synth_begin(&s, PERF_RECORD_KSYMBOL, 0);
	synth_u64(&s, 0xffffffffa0000000ull);
	synth_u32x2(&s, 64, 0);
	synth_string(&s, "bpf_prog_x");
	synth_sample_id(&s, 0, 0, 1011, 1, 77, 1);
	synth_end(&s);

	fakering_init(&f, 8192, 0);
	fakering_put(&f, s.buf, s.len);
	r = reader_on(&f, &attr, 1);
	ck_assert_int_eq(pr_reader_consume(r, collect, &c), 12);
	ck_assert_int_eq(c.n, 12);

	/* SAMPLE */
	{
		const struct pr_record *x = &c.recs[0];
		const struct pr_sample *sm = &x->u.sample;
		uint64_t v;

		ck_assert_uint_eq(x->type, PR_RECORD_SAMPLE);
		ck_assert_uint_eq(x->id, 77);
		ck_assert_uint_eq(x->pid, 10);
		ck_assert_uint_eq(x->tid, 11);
		ck_assert_uint_eq(x->time, 1000);
		ck_assert_uint_eq(x->cpu, 1);
		ck_assert_int_eq(x->ring_cpu, 1);
		ck_assert_uint_eq(sm->ip, 0x401000 + 1000);
		ck_assert_uint_eq(sm->period, 10101010);
		ck_assert_uint_eq(sm->nr_callchain, 2);
		ck_assert_uint_eq(sm->callchain[0], PERF_CONTEXT_KERNEL);
		ck_assert_uint_eq(sm->regs_abi, PERF_SAMPLE_REGS_ABI_64);
		ck_assert_uint_eq(sm->stack_addr, 0x7ffd0000);
		ck_assert_int_eq(pr_sample_reg(sm, PR_REG_R15, &v), 0);
		ck_assert_uint_eq(v, 100 + PR_REG_R15);
		ck_assert_int_eq(pr_sample_reg(sm, PR_REG_IP, &v), 0);
		ck_assert_uint_eq(v, 100 + PR_REG_IP);
		ck_assert_int_eq(pr_sample_reg(sm, PR_REG_FLAGS, &v), -ENOENT);
		ck_assert_uint_eq(sm->stack_size, 64);
		ck_assert_uint_eq(sm->stack_dyn_size, 48);
	}
	ck_assert_uint_eq(c.recs[1].type, PR_RECORD_MMAP);
	ck_assert_uint_eq(c.recs[1].u.mmap.addr, 0x400000);
	ck_assert(!c.recs[1].u.mmap.is_mmap2);
	ck_assert_str_eq(c.names[1], "/bin/old-style");
	ck_assert_uint_eq(c.recs[1].time, 1001);

	ck_assert_uint_eq(c.recs[2].type, PR_RECORD_MMAP2);
	ck_assert_uint_eq(c.recs[2].pid, 10);
	ck_assert_uint_eq(c.recs[2].tid, 12);
	ck_assert_uint_eq(c.recs[2].u.mmap.addr, 0x7f0000001000);
	ck_assert_uint_eq(c.recs[2].u.mmap.len, 0x20000);
	ck_assert_uint_eq(c.recs[2].u.mmap.pgoff, 0x3000);
	ck_assert_uint_eq(c.recs[2].u.mmap.maj, 8);
	ck_assert_uint_eq(c.recs[2].u.mmap.min, 1);
	ck_assert_uint_eq(c.recs[2].u.mmap.ino, 123456);
	ck_assert_uint_eq(c.recs[2].u.mmap.ino_generation, 7);
	ck_assert_uint_eq(c.recs[2].u.mmap.prot, 5);
	ck_assert(!c.recs[2].u.mmap.has_build_id);
	ck_assert_str_eq(c.names[2], "/usr/lib/libfoo.so");

	ck_assert(c.recs[3].u.mmap.has_build_id);
	ck_assert_uint_eq(c.recs[3].u.mmap.build_id_size, 20);
	ck_assert_mem_eq(c.recs[3].u.mmap.build_id, bid, 20);
	ck_assert_str_eq(c.names[3], "/usr/lib/libbid.so");

	ck_assert_uint_eq(c.recs[4].type, PR_RECORD_COMM);
	ck_assert(c.recs[4].u.comm.exec);
	ck_assert_str_eq(c.names[4], "newname");

	ck_assert_uint_eq(c.recs[5].type, PR_RECORD_FORK);
	ck_assert_uint_eq(c.recs[5].pid, 10);
	ck_assert_uint_eq(c.recs[5].tid, 13);
	ck_assert_uint_eq(c.recs[5].u.task.ppid, 9);
	ck_assert_uint_eq(c.recs[5].u.task.ptid, 11);
	ck_assert_uint_eq(c.recs[5].u.task.time, 1005);

	ck_assert_uint_eq(c.recs[6].type, PR_RECORD_EXIT);
	ck_assert_uint_eq(c.recs[6].tid, 13);

	ck_assert_uint_eq(c.recs[7].type, PR_RECORD_LOST);
	ck_assert_uint_eq(c.recs[7].u.lost.id, 77);
	ck_assert_uint_eq(c.recs[7].u.lost.lost, 5);
	ck_assert_uint_eq(c.recs[8].type, PR_RECORD_LOST_SAMPLES);
	ck_assert_uint_eq(c.recs[8].u.lost.lost, 3);

	ck_assert_uint_eq(c.recs[9].type, PR_RECORD_THROTTLE);
	ck_assert_uint_eq(c.recs[9].u.throttle.time, 1009);
	ck_assert_uint_eq(c.recs[9].u.throttle.stream_id, 78);
	ck_assert_uint_eq(c.recs[10].type, PR_RECORD_UNTHROTTLE);

	ck_assert_uint_eq(c.recs[11].type, PR_RECORD_KSYMBOL);
	ck_assert_uint_eq(c.recs[11].time, 1011);
	ck_assert_uint_eq(c.recs[11].id, 77);
	ck_assert_str_eq(pr_record_type_name(c.recs[11].type), "KSYMBOL");

	{
		struct pr_ring_stats st = { .sz = sizeof(st) };

		ck_assert_int_eq(pr_reader_ring_stats(r, 0, &st), 0);
		ck_assert_int_eq(st.cpu, 1);
		ck_assert_uint_eq(st.records, 12);
		ck_assert_uint_eq(st.samples, 1);
		ck_assert_uint_eq(st.lost, 5);
		ck_assert_uint_eq(st.lost_samples, 3);
		ck_assert_uint_eq(st.throttled, 1);
		ck_assert_uint_eq(st.by_type[PR_RECORD_MMAP2], 2);
		ck_assert_uint_eq(pr_reader_lost(r), 5);
	}
	/* Everything consumed was handed back to the kernel. */
	ck_assert_uint_eq(f.meta->data_tail, f.meta->data_head);
	pr_reader_close(r);
	fakering_free(&f);
}
END_TEST

/* The kernel writes records at 8-byte positions; the reader must also cope
 * with any byte position (a corrupted or foreign ring), so the sample is
 * placed at every byte offset of the buffer, wrapping wherever it falls. */
START_TEST(sample_wrapping_at_every_byte_offset_reads_back_whole)
{
	struct perf_event_attr attr = attr_for(0);
	static struct synth s;
	struct pr_parse_cfg cfg;
	const uint64_t data_size = 4096;
	size_t size;

	pr__parse_cfg_from_attr(&cfg, &attr);
	s.len = 0;
	size = put_sample(&s, 0, 0, 42, 43, 5000, 0, 0x7fff1000, 512, 512, 7);
	ck_assert_uint_lt(size, data_size);

	for (uint64_t off = 0; off < data_size; off++) {
		/* Positions past 2^32 check the 64-bit arithmetic. */
		uint64_t pos = (UINT64_C(1) << 33) + off;
		struct fakering f;
		struct pr_ring ring;
		struct pr_record rec;
		const void *p;
		const char *why = NULL;
		size_t got;

		fakering_init(&f, data_size, pos);
		fakering_put(&f, s.buf, size);
		fakering_ring(&f, &ring, 0);
		pr__ring_refresh(&ring);
		ck_assert_int_eq(pr__ring_peek(&ring, &p, &got, NULL), 1);
		ck_assert_uint_eq(got, size);
		ck_assert_uint_eq((uintptr_t)p % 8, 0);
		ck_assert_mem_eq(p, s.buf, size);
		ck_assert_int_eq(pr__record_parse(&cfg, p, got, &rec, &why), 0);
		ck_assert_uint_eq(rec.tid, 43);
		ck_assert_uint_eq(rec.u.sample.stack_addr, 0x7fff1000);
		ck_assert_uint_eq(rec.u.sample.stack[511], (unsigned char)(7 + 511));
		pr__ring_advance(&ring, got);
		ck_assert_uint_eq(f.meta->data_tail, pos + size);
		ck_assert_int_eq(pr__ring_peek(&ring, &p, &got, NULL), 0);
		pr__ring_release(&ring);
		fakering_free(&f);
	}
}
END_TEST

struct logbuf {
	char text[4096];
	int errors;
};

static void capture_log(enum pr_log_level level, const char *msg, void *ctx)
{
	struct logbuf *l = ctx;

	if (level == PR_LOG_ERROR)
		l->errors++;
	snprintf(l->text + strlen(l->text), sizeof(l->text) - strlen(l->text),
		 "%s\n", msg);
}

/* Put `bad` (a corrupt header of `bad_len` bytes published) on CPU 3 after
 * one good record at offset 0, and check: the good one is read, the bad one
 * is an error naming CPU 3 and its offset, the ring is resynchronised, and
 * the next call returns with nothing instead of looping. */
static void check_corrupt_header(const void *bad, size_t bad_len,
				 const char *expect_why)
{
	static struct synth s;
	struct logbuf log = { "", 0 };
	struct pr_logger lg = { capture_log, &log };
	struct pr_ring ring;
	struct fakering f;
	const void *p;
	size_t got, good;

	s.len = 0;
	good = put_sample(&s, 0, 0, 1, 1, 1, 3, 0x1000, 64, 64, 0);
	fakering_init(&f, 4096, 0);
	fakering_put(&f, s.buf, good);
	fakering_put(&f, bad, bad_len);
	fakering_ring(&f, &ring, 3);
	pr__ring_refresh(&ring);
	ck_assert_int_eq(pr__ring_peek(&ring, &p, &got, &lg), 1);
	pr__ring_advance(&ring, got);
	ck_assert_int_eq(pr__ring_peek(&ring, &p, &got, &lg), -EBADMSG);
	ck_assert_int_eq(log.errors, 1);
	ck_assert_ptr_nonnull(strstr(log.text, "CPU 3"));
	{
		char at[64];

		snprintf(at, sizeof(at), "ring offset %zu", good);
		ck_assert_msg(strstr(log.text, at), "log lacks '%s': %s", at, log.text);
	}
	ck_assert_msg(strstr(log.text, expect_why), "log lacks '%s': %s",
		      expect_why, log.text);
	ck_assert_uint_eq(f.meta->data_tail, f.meta->data_head);
	ck_assert_uint_eq(ring.stats.corrupt, 1);
	ck_assert_uint_eq(ring.stats.discarded_bytes, bad_len);
	ck_assert_int_eq(pr__ring_peek(&ring, &p, &got, &lg), 0);
	pr__ring_refresh(&ring);
	ck_assert_int_eq(pr__ring_peek(&ring, &p, &got, &lg), 0);
	fakering_free(&f);
}

START_TEST(zero_size_header_is_an_error_not_a_loop)
{
	struct perf_event_header h = { PERF_RECORD_SAMPLE, 0, 0 };
	uint64_t pad = 0;
	unsigned char buf[16];

	memcpy(buf, &h, 8);
	memcpy(buf + 8, &pad, 8);
	check_corrupt_header(buf, sizeof(buf), "size below 8");
}
END_TEST

START_TEST(header_size_not_multiple_of_8_is_an_error)
{
	struct perf_event_header h = { PERF_RECORD_SAMPLE, 0, 12 };
	unsigned char buf[16] = { 0 };

	memcpy(buf, &h, 8);
	check_corrupt_header(buf, sizeof(buf), "not a multiple of 8");
}
END_TEST

START_TEST(record_larger_than_published_data_is_an_error)
{
	struct perf_event_header h = { PERF_RECORD_MMAP2, 0, 256 };
	unsigned char buf[32] = { 0 };

	memcpy(buf, &h, 8);
	check_corrupt_header(buf, sizeof(buf), "larger than the published data");
}
END_TEST

START_TEST(truncated_header_is_an_error)
{
	unsigned char buf[4] = { 9, 0, 0, 0 };

	check_corrupt_header(buf, sizeof(buf), "truncated header");
}
END_TEST

START_TEST(head_more_than_a_ring_ahead_is_an_error)
{
	struct fakering f;
	struct pr_ring ring;
	const void *p;
	size_t got;

	fakering_init(&f, 4096, 0);
	f.meta->data_head = 3 * 4096;
	fakering_ring(&f, &ring, 0);
	pr__ring_refresh(&ring);
	ck_assert_int_eq(pr__ring_peek(&ring, &p, &got, NULL), -EBADMSG);
	ck_assert_uint_eq(f.meta->data_tail, 3 * 4096);
	ck_assert_int_eq(pr__ring_peek(&ring, &p, &got, NULL), 0);
	fakering_free(&f);
}
END_TEST

/* A header that is fine but a body that does not match the sample_type:
 * that record alone is skipped and the records after it still arrive. */
START_TEST(sample_body_inconsistent_with_sample_type_is_skipped)
{
	struct perf_event_attr attr = attr_for(0);
	static struct synth s;
	struct logbuf log = { "", 0 };
	struct collected c = { 0 };
	struct fakering f;
	struct pr_reader *r;
	struct pr_ring ring;
	size_t first;

	s.len = 0;
	/* A callchain claiming 2^40 entries. */
	first = put_sample(&s, 0, 0, 1, 1, 1, 0, 0x1000, 64, 64, 0);
	{
		uint64_t huge = UINT64_C(1) << 40;

		memcpy(s.buf + 8 + 8 + 8 + 8 + 8 + 8, &huge, 8);
	}
	/* A stack larger than the record. */
	put_sample(&s, 0, 0, 1, 1, 2, 0, 0x1000, 64, 64, 0);
	{
		uint64_t big = 4096;
		size_t at = first + 8 + 5 * 8 + 8 + 2 * 8 + 8 + 17 * 8;

		memcpy(s.buf + at, &big, 8);
	}
	/* A comm without its terminating NUL. */
	synth_begin(&s, PERF_RECORD_COMM, 0);
	synth_u32x2(&s, 1, 1);
	synth_bytes(&s, "abcdefgh", 8);
	synth_sample_id(&s, 1, 1, 3, 0, 0, 0);
	synth_end(&s);
	/* And a good one. */
	put_sample(&s, 0, 0, 1, 1, 4, 0, 0x1000, 64, 64, 0);

	fakering_init(&f, 8192, 0);
	fakering_put(&f, s.buf, s.len);
	fakering_ring(&f, &ring, 0);
	{
		struct pr_logger lg = { capture_log, &log };

		r = pr__reader_from_rings(&ring, 1, &attr, &lg);
	}
	ck_assert_ptr_nonnull(r);
	ck_assert_int_eq(pr_reader_consume(r, collect, &c), -EBADMSG);
	ck_assert_int_eq(log.errors, 3);
	ck_assert_msg(strstr(log.text, "on CPU 0 at ring offset 0: callchain"),
		      "%s", log.text);
	ck_assert_msg(strstr(log.text, "stack longer than the record"), "%s", log.text);
	ck_assert_msg(strstr(log.text, "comm not terminated"), "%s", log.text);
	ck_assert_int_eq(c.n, 1);
	ck_assert_uint_eq(c.recs[0].time, 4);
	{
		struct pr_ring_stats st = { .sz = sizeof(st) };

		pr_reader_ring_stats(r, 0, &st);
		ck_assert_uint_eq(st.corrupt, 3);
		ck_assert_uint_eq(st.records, 1);
	}
	ck_assert_uint_eq(f.meta->data_tail, f.meta->data_head);
	ck_assert_int_eq(pr_reader_consume(r, collect, &c), 0);
	pr_reader_close(r);
	fakering_free(&f);
}
END_TEST

START_TEST(negative_callback_return_stops_the_drain)
{
	struct perf_event_attr attr = attr_for(0);
	static struct synth s;
	struct collected c = { .stop_at = 2 };
	struct fakering f;
	struct pr_reader *r;

	s.len = 0;
	for (int i = 1; i <= 3; i++)
		put_sample(&s, 0, 0, 1, 1, (uint64_t)i, 0, 0x1000, 16, 16, 0);
	fakering_init(&f, 4096, 0);
	fakering_put(&f, s.buf, s.len);
	r = reader_on(&f, &attr, 0);
	ck_assert_int_eq(pr_reader_consume(r, collect, &c), -42);
	ck_assert_int_eq(c.n, 2);
	/* The record the callback stopped on counts as consumed. */
	c.stop_at = 0;
	ck_assert_int_eq(pr_reader_consume(r, collect, &c), 1);
	ck_assert_int_eq(c.n, 3);
	ck_assert_uint_eq(c.recs[2].time, 3);
	pr_reader_close(r);
	fakering_free(&f);
}
END_TEST

START_TEST(pull_read_keeps_the_record_until_the_next_call)
{
	struct perf_event_attr attr = attr_for(0);
	static struct synth s;
	struct fakering f;
	struct pr_reader *r;
	struct pr_record rec;
	size_t one;

	s.len = 0;
	one = put_sample(&s, 0, 0, 1, 1, 1, 0, 0x1000, 32, 32, 0);
	put_sample(&s, 0, 0, 1, 1, 2, 0, 0x1000, 32, 32, 0);
	fakering_init(&f, 4096, 0);
	fakering_put(&f, s.buf, s.len);
	r = reader_on(&f, &attr, 0);

	ck_assert_int_eq(pr_reader_read(r, &rec), 1);
	ck_assert_uint_eq(rec.time, 1);
	/* Still ours: the kernel may not overwrite it yet. */
	ck_assert_uint_eq(f.meta->data_tail, 0);
	ck_assert_int_eq(pr_reader_read(r, &rec), 1);
	ck_assert_uint_eq(rec.time, 2);
	ck_assert_uint_eq(f.meta->data_tail, one);
	ck_assert_int_eq(pr_reader_read(r, &rec), 0);
	ck_assert_uint_eq(f.meta->data_tail, f.meta->data_head);

	/* New data published later is found by the next read. */
	s.len = 0;
	put_sample(&s, 0, 0, 1, 1, 3, 0, 0x1000, 32, 32, 0);
	fakering_put(&f, s.buf, s.len);
	ck_assert_int_eq(pr_reader_read(r, &rec), 1);
	ck_assert_uint_eq(rec.time, 3);
	pr_reader_close(r);
	fakering_free(&f);
}
END_TEST

/* Pull reads visit every ring: one busy ring cannot hide another. */
START_TEST(pull_read_takes_turns_between_rings)
{
	struct perf_event_attr attr = attr_for(0);
	static struct synth s;
	struct fakering f[2];
	struct pr_ring rings[2];
	struct pr_reader *r;
	struct pr_record rec;
	int seen[2] = { 0, 0 };

	for (int i = 0; i < 2; i++) {
		fakering_init(&f[i], 4096, 0);
		s.len = 0;
		for (int k = 0; k < 3; k++)
			put_sample(&s, 0, 0, 1, 1, (uint64_t)(i * 10 + k), (uint32_t)i,
				   0x1000, 16, 16, 0);
		fakering_put(&f[i], s.buf, s.len);
		fakering_ring(&f[i], &rings[i], i);
	}
	r = pr__reader_from_rings(rings, 2, &attr, NULL);
	ck_assert_ptr_nonnull(r);
	while (pr_reader_read(r, &rec) == 1)
		seen[rec.ring_cpu]++;
	ck_assert_int_eq(seen[0], 3);
	ck_assert_int_eq(seen[1], 3);
	pr_reader_close(r);
	fakering_free(&f[0]);
	fakering_free(&f[1]);
}
END_TEST

/* A thread found late (struct pr_late_thread) keeps only the samples of
 * its own events; other threads are untouched. */
START_TEST(a_late_thread_keeps_only_its_own_events_samples)
{
	struct perf_event_attr attr = attr_for(PR_ATTR_SHARED_RING);
	static struct synth s;
	struct collected c = { 0 };
	struct pr_evfd ev = { .fd = -1, .tid = 55, .id = 100 };
	struct fakering f;
	struct pr_reader *r;

	s.len = 0;
	put_sample(&s, 1, 100, 50, 55, 1, 0, 0x1000, 16, 16, 0);  /* own: kept */
	put_sample(&s, 1, 7, 50, 55, 2, 0, 0x1000, 16, 16, 0);    /* inherited: dropped */
	put_sample(&s, 1, 7, 50, 56, 3, 0, 0x1000, 16, 16, 0);    /* another thread: kept */
	fakering_init(&f, 4096, 0);
	fakering_put(&f, s.buf, s.len);
	r = reader_on(&f, &attr, 0);
	r->evs = malloc(sizeof(ev));
	r->evs[0] = ev;
	r->nr_evs = r->cap_evs = 1;
	r->late = malloc(sizeof(*r->late));
	r->late[0] = (struct pr_late_thread){ .tid = 55, .first = 0, .n = 1 };
	r->nr_late = r->cap_late = 1;

	ck_assert_int_eq(pr_reader_consume(r, collect, &c), 2);
	ck_assert_uint_eq(c.recs[0].time, 1);
	ck_assert_uint_eq(c.recs[1].time, 3);
	{
		struct pr_ring_stats st = { .sz = sizeof(st) };

		pr_reader_ring_stats(r, 0, &st);
		ck_assert_uint_eq(st.duplicates, 1);
		ck_assert_uint_eq(st.samples, 2);
	}
	/* The reader closes the fds it owns: -1 is not one. */
	r->nr_evs = 0;
	pr_reader_close(r);
	fakering_free(&f);
}
END_TEST

/* An fp sample (pr_event_attr()'s layout with PR_CALL_GRAPH_FP): the
 * kernel's chain and nothing copied. */
static size_t put_fp_sample(struct synth *s, uint64_t time, const uint64_t *chain,
			    size_t nr)
{
	synth_begin(s, PERF_RECORD_SAMPLE, PERF_RECORD_MISC_USER);
	synth_u64(s, 0x401000);                      /* ip */
	synth_u32x2(s, 50, 55);
	synth_u64(s, time);
	synth_u32x2(s, 0, 0);
	synth_u64(s, 10101010);                      /* period */
	synth_u64(s, nr);
	for (size_t i = 0; i < nr; i++)
		synth_u64(s, chain[i]);
	return synth_end(s);
}

/* The kernel stops walking at sample_max_stack entries (its setting when
 * the attr says 0), context markers not counted: chains that long are
 * counted as cut there, and every sample's bytes.  Not one that long
 * whose last entry is 0: the kernel walked round a frame pointer of code
 * that keeps none (libc at a process's exit gave 126 zeros after its
 * leaf), which a higher limit would not end. */
START_TEST(chains_at_the_kernels_depth_limit_and_sample_bytes_are_counted)
{
	PR_OPTS(pr_event_opts, o, .call_graph = PR_CALL_GRAPH_FP);
	static const uint64_t user4[] = { PERF_CONTEXT_USER, 1, 2, 3, 4 };
	static const uint64_t user3[] = { PERF_CONTEXT_USER, 1, 2, 3 };
	static const uint64_t zeros4[] = { PERF_CONTEXT_USER, 1, 0, 0, 0 };
	static const uint64_t both4[] = { PERF_CONTEXT_KERNEL, 0xffffffff81000000ull,
					  0xffffffff81000010ull, PERF_CONTEXT_USER, 1, 2 };
	struct pr_ring_stats st = { .sz = sizeof(st) };
	struct perf_event_attr attr;
	static struct synth s;
	struct collected c = { 0 };
	struct fakering f;
	struct pr_reader *r;
	size_t bytes;

	ck_assert_int_eq(pr_event_attr(&o, PR_SOURCE_CPU_CLOCK, 0, &attr), 0);
	attr.sample_max_stack = 4;
	s.len = 0;
	bytes = put_fp_sample(&s, 1, user4, PR_ARRAY_SIZE(user4));
	bytes += put_fp_sample(&s, 2, user3, PR_ARRAY_SIZE(user3));
	bytes += put_fp_sample(&s, 3, both4, PR_ARRAY_SIZE(both4));
	bytes += put_fp_sample(&s, 4, zeros4, PR_ARRAY_SIZE(zeros4));
	fakering_init(&f, 4096, 0);
	fakering_put(&f, s.buf, s.len);
	r = reader_on(&f, &attr, 0);
	ck_assert_uint_eq(pr_reader_max_stack(r), 4);

	ck_assert_int_eq(pr_reader_consume(r, collect, &c), 4);
	ck_assert_uint_eq(c.recs[1].u.sample.nr_callchain, 4);
	ck_assert_ptr_null(c.recs[1].u.sample.regs);
	pr_reader_ring_stats(r, 0, &st);
	ck_assert_uint_eq(st.chains_at_limit, 2);
	ck_assert_uint_eq(st.sample_bytes, bytes);
	pr_reader_close(r);
	fakering_free(&f);

	/* Without a user or kernel chain there is no limit to reach. */
	attr = attr_for(0);
	fakering_init(&f, 4096, 0);
	r = reader_on(&f, &attr, 0);
	ck_assert_uint_eq(pr_reader_max_stack(r), 0);
	ck_assert_uint_eq(pr_reader_max_stack(NULL), 0);
	pr_reader_close(r);
	fakering_free(&f);
}
END_TEST

static Suite *records_suite(void)
{
	Suite *s = suite_create("records");
	TCase *tc = tcase_create("fake-ring");

	tcase_add_test(tc, every_record_type_reads_back_typed);
	tcase_add_test(tc, sample_wrapping_at_every_byte_offset_reads_back_whole);
	tcase_add_test(tc, zero_size_header_is_an_error_not_a_loop);
	tcase_add_test(tc, header_size_not_multiple_of_8_is_an_error);
	tcase_add_test(tc, record_larger_than_published_data_is_an_error);
	tcase_add_test(tc, truncated_header_is_an_error);
	tcase_add_test(tc, head_more_than_a_ring_ahead_is_an_error);
	tcase_add_test(tc, sample_body_inconsistent_with_sample_type_is_skipped);
	tcase_add_test(tc, negative_callback_return_stops_the_drain);
	tcase_add_test(tc, pull_read_keeps_the_record_until_the_next_call);
	tcase_add_test(tc, pull_read_takes_turns_between_rings);
	tcase_add_test(tc, a_late_thread_keeps_only_its_own_events_samples);
	tcase_add_test(tc, chains_at_the_kernels_depth_limit_and_sample_bytes_are_counted);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	return run_suite(records_suite());
}
