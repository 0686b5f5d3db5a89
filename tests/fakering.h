/* SPDX-License-Identifier: Apache-2.0 */
/*
 * A ring buffer in ordinary memory, laid out like the kernel's mapping
 * (control page, then data), that tests and benchmarks fill the way the
 * kernel would: write the record bytes, then publish data_head.
 */
#ifndef DS_TEST_FAKERING_H
#define DS_TEST_FAKERING_H

#include <stdlib.h>
#include <string.h>

#include "capture/capture.h"

#define FAKE_PAGE 4096

struct fakering {
	void *base;
	struct perf_event_mmap_page *meta;
	unsigned char *data;
	uint64_t data_size;
};

/* `start` is the stream position both head and tail begin at: tests use
 * large values to exercise 64-bit position arithmetic. */
static inline void fakering_init(struct fakering *f, uint64_t data_size,
				 uint64_t start)
{
	f->base = aligned_alloc(FAKE_PAGE, FAKE_PAGE + data_size);
	memset(f->base, 0, FAKE_PAGE + data_size);
	f->meta = f->base;
	f->data = (unsigned char *)f->base + FAKE_PAGE;
	f->data_size = data_size;
	f->meta->data_head = f->meta->data_tail = start;
}

static inline void fakering_free(struct fakering *f)
{
	free(f->base);
	memset(f, 0, sizeof(*f));
}

/* Write `n` bytes at the head, wrapping at the end, and publish them. */
static inline void fakering_put(struct fakering *f, const void *p, size_t n)
{
	uint64_t off = f->meta->data_head & (f->data_size - 1);
	size_t first = n;

	if (off + n > f->data_size)
		first = (size_t)(f->data_size - off);
	memcpy(f->data + off, p, first);
	memcpy(f->data, (const unsigned char *)p + first, n - first);
	__atomic_store_n(&f->meta->data_head, f->meta->data_head + n,
			 __ATOMIC_RELEASE);
}

/* A pr_ring view of the fake, as the library would see a mapped ring. */
static inline void fakering_ring(struct fakering *f, struct pr_ring *ring,
				 int cpu)
{
	pr__ring_init_mem(ring, f->base, FAKE_PAGE, f->data_size, cpu);
}

#endif
