/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Writes a perf.data file of --call-graph fp samples whose call chains are
 * the odd ones a kernel writes, for test-dump-chains.sh to read with perf
 * report -D and dwarfsample dump -i:
 *  - entries of 0 (the kernel stores a frame's return address even when
 *    it is 0): last, right after the user marker, in the middle, repeated;
 *  - a kernel part before the user part;
 *  - a chain at the kernel's depth limit (its marker and 127 entries);
 *  - the other context markers (hypervisor, guest, guest kernel and user)
 *    and an entry above them all;
 *  - the user marker alone;
 * and, as the file's last record, the sample CI once saw cut: the user
 * marker, an address in libc, and 0.
 * usage: chain-file FILE
 */
#include <errno.h>
#include <linux/perf_event.h>
#include <stdio.h>
#include <string.h>

#include "perfreader.h"

#define PID 4242u
#define MAX_ENTRIES 128

/* The layout of --call-graph fp samples (pr_event_attr()); the file is
 * refused rather than written wrong if that ever changes. */
#define FP_SAMPLE_TYPE (PERF_SAMPLE_IP | PERF_SAMPLE_TID | PERF_SAMPLE_TIME | \
			PERF_SAMPLE_CPU | PERF_SAMPLE_PERIOD | PERF_SAMPLE_CALLCHAIN)

static const uint64_t USER = (uint64_t)PERF_CONTEXT_USER;
static const uint64_t KERNEL = (uint64_t)PERF_CONTEXT_KERNEL;

struct rec_buf {
	_Alignas(8) unsigned char b[8 * (8 + MAX_ENTRIES)];
	size_t len;
};

static void put(struct rec_buf *r, uint64_t v)
{
	memcpy(r->b + r->len, &v, 8);
	r->len += 8;
}

static void put_pair(struct rec_buf *r, uint32_t lo, uint32_t hi)
{
	put(r, (uint64_t)hi << 32 | lo);
}

static int write_rec(struct pr_writer *w, struct rec_buf *r, uint32_t type,
		     uint64_t ip, uint64_t t)
{
	struct perf_event_header h = { .type = type, .misc = PERF_RECORD_MISC_USER,
				       .size = (uint16_t)r->len };
	struct pr_record rec = { .type = type, .misc = h.misc, .size = h.size,
				 .pid = PID, .tid = PID, .time = t, .raw = r->b,
				 .fields = PR_ID_TID | PR_ID_TIME, .ring_cpu = -1 };

	memcpy(r->b, &h, sizeof(h));
	rec.u.sample.ip = ip;
	return pr_writer_write(w, &rec);
}

/* A sample at time `t` whose chain is `chain` (`nr` entries); its IP is
 * the first address after the user marker. */
static int sample(struct pr_writer *w, uint64_t t, const uint64_t *chain, size_t nr)
{
	struct rec_buf r = { .len = 8 };
	uint64_t ip = 0;

	for (size_t i = 0; i + 1 < nr; i++)
		if (chain[i] == USER)
			ip = chain[i + 1];
	put(&r, ip);
	put_pair(&r, PID, PID);
	put(&r, t);
	put_pair(&r, 0, 0);            /* cpu, res */
	put(&r, 1001001);              /* period */
	put(&r, nr);
	for (size_t i = 0; i < nr; i++)
		put(&r, chain[i]);
	return write_rec(w, &r, PERF_RECORD_SAMPLE, ip, t);
}

static int comm(struct pr_writer *w, uint64_t t)
{
	struct rec_buf r = { .len = 8 };
	char name[16] = "chainy";

	put_pair(&r, PID, PID);
	memcpy(r.b + r.len, name, sizeof(name));
	r.len += sizeof(name);
	put_pair(&r, PID, PID);        /* sample_id: tid, time, cpu */
	put(&r, t);
	put_pair(&r, 0, 0);
	return write_rec(w, &r, PERF_RECORD_COMM, 0, t);
}

#define SAMPLE(t, ...) \
	sample(w, t, (const uint64_t[]){ __VA_ARGS__ }, \
	       sizeof((const uint64_t[]){ __VA_ARGS__ }) / sizeof(uint64_t))

static int write_samples(struct pr_writer *w)
{
	uint64_t deep[MAX_ENTRIES] = { USER };
	int err = comm(w, 1000);

	err = err ? err : SAMPLE(2000, KERNEL, 0xffffffff81001000ull, 0xffffffff81002000ull,
				 USER, 0x401136, 0x401150, 0);
	err = err ? err : SAMPLE(3000, USER, 0, 0x401136);
	err = err ? err : SAMPLE(4000, USER, 0x401136, 0, 0x401150, 0, 0);
	for (size_t i = 1; i < MAX_ENTRIES; i++)
		deep[i] = i % 16 == 5 ? 0 : 0x401000 + 0x10 * i;
	err = err ? err : sample(w, 5000, deep, MAX_ENTRIES);
	err = err ? err : SAMPLE(6000, (uint64_t)PERF_CONTEXT_HV, 0xffffffff82000000ull,
				 (uint64_t)PERF_CONTEXT_GUEST,
				 (uint64_t)PERF_CONTEXT_GUEST_KERNEL, 0xffffffff81003000ull,
				 (uint64_t)PERF_CONTEXT_GUEST_USER, 0x400000, 0,
				 USER, 0x401136, UINT64_MAX, 0x0000100000000000ull);
	err = err ? err : SAMPLE(7000, USER);
	return err ? err : SAMPLE(8000, USER, 0x7f26c092b62aull, 0);
}

int main(int argc, char **argv)
{
	PR_OPTS(pr_event_opts, o, .call_graph = PR_CALL_GRAPH_FP, .kernel_callchain = true);
	struct perf_event_attr attr;
	uint64_t id = 7;
	struct pr_writer *w;
	int err;

	if (argc != 2) {
		fputs("usage: chain-file FILE\n", stderr);
		return 2;
	}
	err = pr_event_attr(&o, PR_SOURCE_CPU_CLOCK, PR_ATTR_INHERIT, &attr);
	if (err || attr.sample_type != FP_SAMPLE_TYPE) {
		fprintf(stderr, "chain-file: --call-graph fp samples are no longer laid "
			"out as IP, TID, TIME, CPU, PERIOD, CALLCHAIN (sample_type 0x%llx): "
			"update this writer\n", (unsigned long long)attr.sample_type);
		return 1;
	}
	w = pr_writer_open(argv[1], &attr, &id, 1, NULL);
	if (!w) {
		fprintf(stderr, "chain-file: cannot write %s: %s\n", argv[1], strerror(errno));
		return 1;
	}
	err = write_samples(w);
	if (!err)
		err = pr_writer_finish_round(w);
	if (pr_writer_close(w) || err) {
		fprintf(stderr, "chain-file: writing %s failed\n", argv[1]);
		return 1;
	}
	return 0;
}
