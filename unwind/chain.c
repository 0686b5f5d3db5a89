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
#include <sys/mman.h>

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

/* ---- auto: a DWARF head, then the chain ---- */

/* What a frame's function does with rbp at a return address into it
 * (`addr`, the call instruction's), so whether the chain's next entry,
 * read through the rbp that function had, is its caller's. */
enum fp_site {
	SITE_FP,        /* keeps rbp as its frame pointer: CFA rbp+16, rbp saved below the return address */
	SITE_NO_FP,     /* its CFI says it does not: the next entry skips its caller, or is noise */
	SITE_UNKNOWN,   /* no file, or no CFI we can read for it */
	SITE_JIT,       /* anonymous executable memory: JIT code, which keeps frame pointers if any */
};

/* The code chain entries return into, looked up once an entry; the last
 * mapping and row kept, as a recursion's entries return into the same. */
struct site_cache {
	const struct pr_map *m;
	struct uw_elf *e;            /* NULL: no file for m */
	uint64_t bias;
	struct uw_rule r;
	bool has_rule;
};

/* What the function at `addr` (a return address less one) does with rbp
 * there; *top set when no stack goes beyond it (as outermost() finds). */
static enum fp_site fp_site(struct pr_unwinder *u, const struct pr_proc *proc, uint32_t pid,
			    uint64_t addr, struct site_cache *c, bool *top)
{
	uint64_t at;

	*top = false;
	if (!c->m || addr < c->m->start || addr >= c->m->end) {
		c->m = pr__proc_find(proc, addr);
		c->e = c->m && uw_has_image(c->m) ? uw_resolve(u, pid, c->m) : NULL;
		c->bias = c->e ? pr__elf_bias(c->e->img, c->m) : 0;
		c->has_rule = false;
	}
	if (!c->m)
		return SITE_UNKNOWN;
	if (!uw_has_image(c->m)) {
		if (!(c->m->prot & PROT_EXEC))
			return SITE_UNKNOWN;
		/* A CPython trampoline keeps a frame pointer as its
		 * template does (3.12's and 3.13's do not); other JIT code,
		 * if it keeps any. */
		switch (uw_py_keeps_fp(u, proc, c->m, addr + 1)) {
		case 0:
			return SITE_NO_FP;
		case 1:
			return SITE_FP;
		default:
			return SITE_JIT;
		}
	}
	if (!c->e)
		return SITE_UNKNOWN;
	at = addr - c->bias;
	if (!c->has_rule || at < c->r.lo || at >= c->r.hi) {
		c->has_rule = uw_rule_find(u, c->e, at, &c->r);
		if (!c->has_rule)
			return SITE_UNKNOWN;
	}
	*top = uw_elf_is_top(c->e, at) ||
	       (c->r.usable && (c->r.ra == UW_LOC_UNDEF || c->r.rbp == UW_LOC_UNDEF));
	if (!c->r.usable)
		return SITE_UNKNOWN;
	return c->r.cfa_rbp && c->r.cfa_off == 16 && c->r.rbp == UW_LOC_AT_CFA &&
			       c->r.rbp_off == -16 && c->r.ra == UW_LOC_AT_CFA && c->r.ra_off == -8
		       ? SITE_FP
		       : SITE_NO_FP;
}

/*
 * Where the kernel read each chain entry, as far as its walk stayed in
 * the copy: it starts at the sampled rbp and reads each return address
 * at fp + 8 and the next fp at fp.  at[k] is the address entry k was read
 * at (at[0] 0: entry 0 is the sampled ip).  How many entries are placed.
 * (A chain not of this copy shows where it is compared: chain_match().)
 */
static size_t chain_addresses(const struct pr_sample *s, const struct uw_chain *ch,
			      uint64_t *at, size_t max)
{
	uint64_t fp = 0, top = s->stack_addr + s->stack_dyn_size;
	size_t k = 1, i = 0;

	for (uint64_t m = s->regs_mask & ((UINT64_C(1) << PR_REG_MAX) - 1); m; m &= m - 1, i++)
		if (__builtin_ctzll(m) == PR_REG_BP)
			fp = s->regs[i];
	at[0] = 0;
	for (; k < ch->nr && k < max; k++) {
		uint64_t next;

		if (fp < s->stack_addr || fp % 8 || fp > top || top - fp < 16)
			break;
		memcpy(&next, s->stack + (fp - s->stack_addr), 8);
		at[k] = fp + 8;
		fp = next;
	}
	return k;
}

/*
 * The chain index of frame `last` of the stack, found by its return
 * address and where it was read (just below the frame's stack pointer),
 * with the entry before it agreeing the same way with an earlier frame:
 * two consecutive entries of the chain, each where DWARF found it.  (The
 * earlier frame need not be last - 1: the walk skips a frame whose callee
 * keeps no frame pointer, a leaf's most often.)  0 when none agrees.
 */
static size_t chain_match(const struct uw_chain *ch, const uint64_t *at, size_t placed,
			  const uint64_t *pcs, const uint64_t *sps, size_t first, size_t last)
{
	for (size_t k = 1; k < placed; k++) {
		if (at[k] != sps[last] - 8 || ch->ips[k] != pcs[last])
			continue;
		if (k == 1)
			return ch->ips[0] == pcs[first] ? k : 0;
		for (size_t j = first + 1; j < last; j++)
			if (at[k - 1] == sps[j] - 8 && ch->ips[k - 1] == pcs[j])
				return k;
		return 0;
	}
	return 0;
}

size_t uw_chain_tail(struct pr_unwinder *u, const struct pr_record *rec,
		     const struct uw_chain *ch, struct pr_stack *out)
{
	const struct pr_sample *s = &rec->u.sample;
	const struct pr_proc *proc = pr__model_proc(u->model, rec->pid, false);
	size_t first = out->nr_kernel, last = out->nr - 1, k, n, max;
	uint64_t at[PR_UNWIND_MAX_DEPTH];
	struct site_cache cache = { 0 };
	enum pr_stack_end end;
	enum fp_site site;
	bool top;

	if (out->nr < first + 2 || !proc)
		return 0;
	k = chain_match(ch, at, chain_addresses(s, ch, at, PR_ARRAY_SIZE(at)), u->pcs, u->sps,
			first, last);
	if (!k) {
		u->stats.tail_unmatched++;
		return 0;
	}
	/* Entry k + 1 is the caller of `last` when last's function keeps
	 * its frame pointer there; and so on, each entry vouched for by the
	 * function of the one before. */
	max = first + u->max_depth;
	for (n = 0;; n++) {
		struct pr_frame *f = &u->frames[out->nr + n];
		uint64_t at_ip = ch->ips[k + n] - 1;   /* the frame entry k + n + 1 would call */

		site = fp_site(u, proc, rec->pid, at_ip, &cache, &top);
		if (n && top) {
			end = PR_END_OUTERMOST;
			break;
		}
		if (k + 1 + n == ch->nr || !ch->ips[k + 1 + n]) {
			/* The walk found no further frame: at the kernel's
			 * limit; beyond a function with CFI, a caller that
			 * keeps no frame pointer (libc's start, on most
			 * distributions), so the stack goes on; else the
			 * chain does not tell. */
			if (ch->nr_entries >= u->chain_max_stack) {
				end = PR_END_DEPTH;
				out->error = (int)u->chain_max_stack;
				u->stats.chain_depth++;
			} else {
				end = site == SITE_FP || site == SITE_NO_FP ? PR_END_TRUNCATED
									 : PR_END_CHAIN;
			}
			break;
		}
		if (out->nr + n >= max) {
			end = PR_END_DEPTH;
			break;
		}
		if (site == SITE_NO_FP || site == SITE_UNKNOWN) {
			/* Past a function that keeps no frame pointer the
			 * chain's entries are not its callers. */
			end = PR_END_TRUNCATED;
			u->stats.tail_no_fp++;
			break;
		}
		f->ip = ch->ips[k + 1 + n] - 1;
		f->flags = PR_FRAME_CHAIN;
		uw_place(f, proc);
		u->pcs[out->nr + n] = ch->ips[k + 1 + n];
		u->sps[out->nr + n] = 0;
	}
	if (!n)
		return 0;
	out->nr += n;
	out->end = end;
	u->stats.tail_samples++;
	u->stats.tail_frames += n;
	return n;
}

bool uw_chain_at_root(struct pr_unwinder *u, const struct pr_record *rec, uint64_t addr)
{
	const struct pr_proc *proc = pr__model_proc(u->model, rec->pid, false);
	const struct pr_map *m = proc ? pr__proc_find(proc, addr) : NULL;
	struct uw_elf *e;

	if (!m || !uw_has_image(m) || !(e = uw_resolve(u, rec->pid, m)))
		return false;
	return uw_elf_is_root(u, e, addr - pr__elf_bias(e->img, m));
}
