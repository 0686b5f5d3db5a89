/* SPDX-License-Identifier: Apache-2.0 */
/* Samples written the way the kernel writes them into a ring, for the
 * fake-ring tests. */
#ifndef DS_TEST_FAKESAMPLE_H
#define DS_TEST_FAKESAMPLE_H

#include "capture/synth.h"

/* A sample in the default layout (see pr_event_attr()), with IDENTIFIER
 * first when `identifier`.  Registers hold 100 + register number, except SP
 * which is `sp`; the stack bytes count up from `stack_seed`. */
static inline size_t put_sample(struct synth *s, int identifier, uint64_t id,
				uint32_t pid, uint32_t tid, uint64_t time, uint32_t cpu,
				uint64_t sp, uint32_t stack_size, uint32_t dyn,
				unsigned char stack_seed)
{
	uint64_t mask = PR_REGS_DWARF;

	synth_begin(s, PERF_RECORD_SAMPLE, PERF_RECORD_MISC_USER);
	if (identifier)
		synth_u64(s, id);
	synth_u64(s, 0x401000 + time);             /* ip */
	synth_u32x2(s, pid, tid);
	synth_u64(s, time);
	synth_u32x2(s, cpu, 0);
	synth_u64(s, 10101010);                     /* period */
	synth_u64(s, 2);                            /* callchain nr */
	synth_u64(s, PERF_CONTEXT_KERNEL);
	synth_u64(s, 0xffffffff81000000ull);
	synth_u64(s, PERF_SAMPLE_REGS_ABI_64);
	for (int r = 0; r < 64; r++)
		if (mask >> r & 1)
			synth_u64(s, r == PR_REG_SP ? sp : 100u + (unsigned)r);
	synth_u64(s, stack_size);
	for (uint32_t i = 0; i < stack_size; i++)
		s->buf[s->len + i] = (unsigned char)(stack_seed + i);
	s->len += stack_size;
	synth_u64(s, dyn);
	return synth_end(s);
}

#endif
