/* SPDX-License-Identifier: Apache-2.0 */
/*
 * User stacks from the kernel's call chain.  A sample recorded without a
 * copy of its stack (perf record -g, --call-graph fp or lbr) still has
 * the kernel's walk of the frame pointers: after PERF_CONTEXT_USER, the
 * user registers' ip, then the return address of each frame found by
 * following rbp.  Those are the stack, placed and named as unwound frames
 * are (a caller at its call instruction, ip - 1); what the chain cannot
 * say is whether the walk stopped at the outermost frame or at code that
 * keeps no frame pointer (PR_END_CHAIN).
 */
#include <stdio.h>

#include "unwind-int.h"

/* The kernel's default perf_event_max_stack (PERF_MAX_STACK_DEPTH). */
#define KERNEL_DEFAULT_MAX_STACK 127

uint32_t uw_chain_max_stack(uint32_t opt, bool live)
{
	FILE *f;
	unsigned v = 0;

	if (opt)
		return opt;
	if (live && (f = fopen("/proc/sys/kernel/perf_event_max_stack", "re"))) {
		if (fscanf(f, "%u", &v) != 1)
			v = 0;
		fclose(f);
	}
	return v ? v : KERNEL_DEFAULT_MAX_STACK;
}

struct uw_chain uw_user_chain(const struct pr_sample *s)
{
	struct uw_chain ch = { NULL, 0, 0 };
	uint64_t i = 0;

	/* The limit counts the kernel's entries too, not the markers. */
	for (; i < s->nr_callchain && s->callchain[i] != (uint64_t)PERF_CONTEXT_USER; i++)
		ch.nr_entries += s->callchain[i] < (uint64_t)PERF_CONTEXT_MAX;
	if (i++ >= s->nr_callchain)
		return ch;
	ch.ips = s->callchain + i;
	while (i + ch.nr < s->nr_callchain && s->callchain[i + ch.nr] < (uint64_t)PERF_CONTEXT_MAX)
		ch.nr++;
	ch.nr_entries += ch.nr;
	return ch;
}

/* Whether the frame at `addr` (a return address less one) of `proc` has
 * no caller: a function no stack goes beyond (_start without CFI, Go's
 * runtime), or one whose CFI says so (the x86-64 ABI's undefined return
 * address or rbp: _start, a thread's start). */
static bool outermost(struct pr_unwinder *u, const struct pr_proc *proc, uint32_t pid,
		      uint64_t addr)
{
	const struct pr_map *m = pr__proc_find(proc, addr);
	struct uw_rule r;
	struct uw_elf *e;
	uint64_t at;

	if (!m || !uw_has_image(m) || !(e = uw_resolve(u, pid, m)))
		return false;
	at = addr - pr__elf_bias(e->img, m);
	if (uw_elf_is_top(e, at))
		return true;
	return uw_rule_find(u, e, at, &r) && r.usable &&
	       (r.ra == UW_LOC_UNDEF || r.rbp == UW_LOC_UNDEF);
}

void uw_chain_frames(struct pr_unwinder *u, const struct pr_record *rec,
		     const struct uw_chain *ch, struct pr_stack *out)
{
	const struct pr_proc *proc = pr__model_proc(u->model, rec->pid, false);
	size_t first = out->nr, n = ch->nr;

	out->end = PR_END_CHAIN;
	if (n > u->max_depth) {
		n = u->max_depth;
		out->end = PR_END_DEPTH;
	} else if (ch->nr_entries >= u->chain_max_stack) {
		out->end = PR_END_DEPTH;
		out->error = (int)u->chain_max_stack;
		u->stats.chain_depth++;
	}
	for (size_t i = 0; i < n; i++) {
		struct pr_frame *f = &u->frames[first + i];

		f->ip = i && ch->ips[i] ? ch->ips[i] - 1 : ch->ips[i];
		f->flags = PR_FRAME_CHAIN;
		uw_place(f, proc);
		u->pcs[first + i] = ch->ips[i];
		u->sps[first + i] = 0;
		if (i + 1 == n && out->end == PR_END_CHAIN && proc &&
		    outermost(u, proc, rec->pid, f->ip))
			out->end = PR_END_OUTERMOST;
	}
	out->nr = first + n;
	u->stats.chain_samples++;
	u->stats.chain_frames += n;
}
