/* SPDX-License-Identifier: Apache-2.0 */
/*
 * One CPU's ring buffer: mapping, draining, header validation.
 *
 * The kernel publishes data_head after writing records (we load it with
 * acquire semantics so the record bytes are visible), and never overwrites
 * bytes before data_tail (we store it with release semantics after we are
 * done with them).  A record that wraps the end of the buffer, or that does
 * not start 8-byte aligned, is copied into a bounce buffer so callers always
 * see it contiguous and aligned.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "capture/capture.h"

/* Counters have a single writer (the draining thread) and readers on any
 * thread: relaxed atomic stores and loads keep each value whole. */
#define STAT_ADD(ring, field, n)                                              \
	__atomic_store_n(&(ring)->stats.field,                                \
			 __atomic_load_n(&(ring)->stats.field, __ATOMIC_RELAXED) + (n), \
			 __ATOMIC_RELAXED)

void pr__ring_init_mem(struct pr_ring *ring, void *base, size_t page_size,
		       uint64_t data_size, int cpu)
{
	memset(ring, 0, sizeof(*ring));
	ring->fd = -1;
	ring->cpu = cpu;
	ring->base = base;
	ring->meta = base;
	ring->data = (unsigned char *)base + page_size;
	ring->data_size = data_size;
	ring->stats.sz = sizeof(ring->stats);
	ring->stats.cpu = cpu;
	ring->tail = ring->head = __atomic_load_n(&ring->meta->data_tail,
						  __ATOMIC_RELAXED);
}

int pr__ring_mmap(struct pr_ring *ring, int fd, int cpu, size_t pages,
		  const struct pr_logger *lg)
{
	size_t page = (size_t)sysconf(_SC_PAGESIZE);
	size_t len = (pages + 1) * page;
	void *base;
	int err;

	base = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	if (base == MAP_FAILED) {
		err = errno;
		if (err == EPERM)
			pr__log(lg, PR_LOG_ERROR,
				"mapping the %zu KiB ring buffer of CPU %d was refused: it exceeds "
				"kernel.perf_event_mlock_kb (%ld KiB per user) and RLIMIT_MEMLOCK; "
				"use fewer " PR_LOG_SETTING_RING_PAGES ", raise the limit with "
				"'sysctl -w kernel.perf_event_mlock_kb=N', or run with CAP_IPC_LOCK",
				len / 1024, cpu,
				pr__read_sysctl("/proc/sys/kernel/perf_event_mlock_kb", -1));
		else
			pr__log(lg, PR_LOG_ERROR,
				"mapping the %zu KiB ring buffer of CPU %d failed: %s",
				len / 1024, cpu, strerror(err));
		return -err;
	}
	pr__ring_init_mem(ring, base, page, (uint64_t)pages * page, cpu);
	/* Kernels since 4.1 say where the data is; trust them over our
	 * arithmetic. */
	if (ring->meta->data_size) {
		ring->data = (unsigned char *)base + ring->meta->data_offset;
		ring->data_size = ring->meta->data_size;
	}
	ring->fd = fd;
	ring->map_len = len;
	return 0;
}

void pr__ring_release(struct pr_ring *ring)
{
	if (ring->map_len)
		munmap(ring->base, ring->map_len);
	free(ring->bounce);
	memset(ring, 0, sizeof(*ring));
	ring->fd = -1;
}

static void copy_out(const struct pr_ring *ring, uint64_t pos, void *dst,
		     size_t n)
{
	uint64_t off = pos & (ring->data_size - 1);
	size_t first = n;

	if (off + n > ring->data_size)
		first = (size_t)(ring->data_size - off);
	memcpy(dst, ring->data + off, first);
	memcpy((unsigned char *)dst + first, ring->data, n - first);
}

void pr__ring_refresh(struct pr_ring *ring)
{
	ring->head = __atomic_load_n(&ring->meta->data_head, __ATOMIC_ACQUIRE);
}

void pr__ring_advance(struct pr_ring *ring, size_t size)
{
	ring->tail += size;
	__atomic_store_n(&ring->meta->data_tail, ring->tail, __ATOMIC_RELEASE);
}

/* Drop everything up to the kernel's head: after a corrupt header there is
 * no trustworthy record boundary until then. */
static int resync(struct pr_ring *ring, const struct pr_logger *lg,
		  const char *why, uint64_t value)
{
	uint64_t skipped = ring->head - ring->tail;

	pr__log(lg, PR_LOG_ERROR,
		"corrupt record on CPU %d at ring offset %llu (stream position %llu): "
		"%s (%llu); discarding %llu pending bytes",
		ring->cpu, (unsigned long long)(ring->tail & (ring->data_size - 1)),
		(unsigned long long)ring->tail, why, (unsigned long long)value,
		(unsigned long long)skipped);
	pr__ring_count_corrupt(ring, skipped);
	pr__ring_advance(ring, (size_t)skipped);
	return -EBADMSG;
}

int pr__ring_peek(struct pr_ring *ring, const void **rec, size_t *size,
		  const struct pr_logger *lg)
{
	struct perf_event_header h;
	uint64_t avail, off;

	if (ring->tail == ring->head)
		return 0;
	avail = ring->head - ring->tail;
	if (avail > ring->data_size)
		return resync(ring, lg, "data_head runs more than a ring ahead", avail);
	if (avail < sizeof(h))
		return resync(ring, lg, "truncated header: bytes published", avail);

	copy_out(ring, ring->tail, &h, sizeof(h));
	if (h.size < sizeof(h))
		return resync(ring, lg, "record size below 8", h.size);
	if (h.size % 8)
		return resync(ring, lg, "record size not a multiple of 8", h.size);
	if (h.size > avail)
		return resync(ring, lg, "record larger than the published data", h.size);

	off = ring->tail & (ring->data_size - 1);
	if (off + h.size <= ring->data_size && !(off % 8)) {
		*rec = ring->data + off;
	} else {
		if (!ring->bounce) {
			/* u64-aligned, as malloc guarantees. */
			ring->bounce = malloc(PR_MAX_RECORD_SIZE + 1);
			if (!ring->bounce)
				return -ENOMEM;
		}
		copy_out(ring, ring->tail, ring->bounce, h.size);
		*rec = ring->bounce;
	}
	*size = h.size;
	return 1;
}

size_t pr__ring_copy_after(const struct pr_ring *ring, size_t skip, void *buf, size_t max)
{
	struct perf_event_header h;
	uint64_t pos = ring->tail + skip;

	if (ring->head - ring->tail > ring->data_size || ring->head < pos ||
	    ring->head - pos < sizeof(h))
		return 0;
	copy_out(ring, pos, &h, sizeof(h));
	if (h.size < sizeof(h) || h.size % 8 || h.size > max || h.size > ring->head - pos)
		return 0;
	copy_out(ring, pos, buf, h.size);
	return h.size;
}

void pr__ring_count(struct pr_ring *ring, const struct pr_record *rec)
{
	STAT_ADD(ring, records, 1);
	STAT_ADD(ring, bytes, rec->size);
	STAT_ADD(ring, by_type[rec->type < PR_RECORD_KERNEL_MAX ? rec->type : 0], 1);
	switch (rec->type) {
	case PERF_RECORD_SAMPLE:
		STAT_ADD(ring, samples, 1);
		STAT_ADD(ring, sample_bytes, rec->size);
		break;
	case PERF_RECORD_LOST:
		STAT_ADD(ring, lost, rec->u.lost.lost);
		break;
	case PERF_RECORD_LOST_SAMPLES:
		STAT_ADD(ring, lost_samples, rec->u.lost.lost);
		break;
	case PERF_RECORD_THROTTLE:
		STAT_ADD(ring, throttled, 1);
		break;
	default:
		break;
	}
}

void pr__ring_count_corrupt(struct pr_ring *ring, uint64_t bytes)
{
	STAT_ADD(ring, corrupt, 1);
	STAT_ADD(ring, discarded_bytes, bytes);
}

void pr__ring_count_duplicate(struct pr_ring *ring)
{
	STAT_ADD(ring, duplicates, 1);
}

void pr__ring_count_foreign(struct pr_ring *ring, bool adopted)
{
	if (adopted)
		STAT_ADD(ring, foreign_adopted, 1);
	else
		STAT_ADD(ring, foreign_dropped, 1);
}

void pr__ring_count_chain_at_limit(struct pr_ring *ring)
{
	STAT_ADD(ring, chains_at_limit, 1);
}

void pr__ring_stats_load(const struct pr_ring *ring, struct pr_ring_stats *st)
{
	size_t sz = st->sz;
	struct pr_ring_stats tmp;

	tmp.sz = sz;
	tmp.cpu = ring->cpu;
#define LOAD(f) tmp.f = __atomic_load_n(&ring->stats.f, __ATOMIC_RELAXED)
	LOAD(records);
	LOAD(samples);
	LOAD(lost);
	LOAD(lost_samples);
	LOAD(throttled);
	LOAD(corrupt);
	LOAD(discarded_bytes);
	LOAD(duplicates);
	LOAD(bytes);
	for (size_t i = 0; i < PR_RECORD_KERNEL_MAX; i++)
		LOAD(by_type[i]);
	LOAD(sample_bytes);
	LOAD(chains_at_limit);
	LOAD(foreign_adopted);
	LOAD(foreign_dropped);
#undef LOAD
	/* A caller built against an older header gets the prefix it knows. */
	memcpy(st, &tmp, sz < sizeof(tmp) ? sz : sizeof(tmp));
}
