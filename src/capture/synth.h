/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Building records byte by byte, the way the kernel lays them out: for the
 * records synthesized from /proc (synth.c), and for tests that must not
 * depend on a kernel (fake rings, corrupt headers, every record type).
 */
#ifndef PR_SYNTH_H
#define PR_SYNTH_H

#include <linux/perf_event.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

struct synth {
	_Alignas(8) unsigned char buf[70000];
	size_t len;
	size_t start;  /* where the record being built begins */
};

static inline void synth_u64(struct synth *s, uint64_t v)
{
	memcpy(s->buf + s->len, &v, 8);
	s->len += 8;
}

static inline void synth_u32x2(struct synth *s, uint32_t a, uint32_t b)
{
	memcpy(s->buf + s->len, &a, 4);
	memcpy(s->buf + s->len + 4, &b, 4);
	s->len += 8;
}

static inline void synth_bytes(struct synth *s, const void *p, size_t n)
{
	memcpy(s->buf + s->len, p, n);
	s->len += n;
}

/* A NUL-terminated string padded with zeros to 8 bytes, as the kernel does. */
static inline void synth_string(struct synth *s, const char *str)
{
	size_t n = strlen(str) + 1;
	size_t padded = (n + 7) & ~(size_t)7;

	memset(s->buf + s->len, 0, padded);
	memcpy(s->buf + s->len, str, n);
	s->len += padded;
}

static inline void synth_begin(struct synth *s, uint32_t type, uint16_t misc)
{
	struct perf_event_header h = { .type = type, .misc = misc, .size = 0 };

	s->start = s->len;
	synth_bytes(s, &h, sizeof(h));
}

/* Patch the header's size; returns the record's size. */
static inline size_t synth_end(struct synth *s)
{
	uint16_t size = (uint16_t)(s->len - s->start);

	memcpy(s->buf + s->start + 6, &size, 2);
	return size;
}

/* The sample_id trailer `sample_type` asks for, in the kernel's order
 * (perf_event__output_id_sample). */
static inline void synth_trailer(struct synth *s, uint64_t sample_type,
				 uint32_t pid, uint32_t tid, uint64_t time,
				 uint32_t cpu, uint64_t id)
{
	if (sample_type & PERF_SAMPLE_TID)
		synth_u32x2(s, pid, tid);
	if (sample_type & PERF_SAMPLE_TIME)
		synth_u64(s, time);
	if (sample_type & PERF_SAMPLE_ID)
		synth_u64(s, id);
	if (sample_type & PERF_SAMPLE_STREAM_ID)
		synth_u64(s, id);
	if (sample_type & PERF_SAMPLE_CPU)
		synth_u32x2(s, cpu, 0);
	if (sample_type & PERF_SAMPLE_IDENTIFIER)
		synth_u64(s, id);
}

/* The trailer of the library's default layout (TID, TIME, CPU), with
 * IDENTIFIER when `identifier` is set. */
static inline void synth_sample_id(struct synth *s, uint32_t pid, uint32_t tid,
				   uint64_t time, uint32_t cpu, uint64_t id,
				   int identifier)
{
	synth_trailer(s, PERF_SAMPLE_TID | PERF_SAMPLE_TIME | PERF_SAMPLE_CPU |
			 (identifier ? PERF_SAMPLE_IDENTIFIER : 0),
		      pid, tid, time, cpu, id);
}

#endif
