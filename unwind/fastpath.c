/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The fast path: a sample's user stack unwound from the compiled CFA rules
 * (rules.c), cached per frame address and process generation in a
 * direct-mapped frame cache, without libunwind.  A frame the rules do not
 * model sends the whole sample back to libunwind (unwinder.c).
 */
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "unwind-int.h"

/* How much of a snapshot the fast path prefetches. */
#define PREFETCH_MAX 16384

/* What the fast path knows of a frame at `ip` (a return address, or the
 * sampled address of a leaf) in a process's mappings of code generation
 * `generation` (struct pr_proc): the mapping it is attributed to and the
 * compiled rule that unwinds it.  Half a cache line, the mapping kept
 * apart: the lookup of each frame is one load that depends on the frame
 * before, and at 64 bytes a compiler's return addresses filled 2 MiB,
 * past this machine's 1 MiB L2 (that load was two thirds of the loop's
 * time on cc1's capture; at 32 bytes the loop took 10-15 % less). */
struct uw_frame_info {
	uint64_t generation;       /* 0: empty (model generations start at 1) */
	uint64_t ip;
	/* The compiled rule's steps (struct uw_rule without its range, rbp's
	 * and the return address's offsets narrowed: a rule whose offsets do
	 * not fit is libunwind's); usable false: leave the sample to
	 * libunwind. */
	int32_t cfa_off;
	int16_t rbp_off, ra_off;
	/* The mapping, in u->frame_maps (0: none): a copy, not a pointer to
	 * the process's, whose array moves as data mappings come and go,
	 * which leave the code generation, and so this entry, as they were. */
	uint32_t map;
	uint8_t rbp, ra;
	bool usable : 1, cfa_rbp : 1;
	bool leaf : 1;
	bool top : 1;              /* the stack ends here (uw_elf_is_top()) */
};
_Static_assert(sizeof(struct uw_frame_info) == 32, "two frame cache entries to a cache line");

/* A mapping frames are in, kept once for every entry in it. */
struct uw_frame_map {
	struct pr_dso *dso;        /* the mapping's file */
	uint64_t start, end, pgoff;
	bool jit;                  /* executable memory no file backs */
	bool at_address;           /* uw_dso_delta() is 0 */
};

/* Mapped zero, not allocated and cleared (pr__table_new()): 3 % of a
 * one-second profile's CPU went to clearing it by memset, page fault by
 * page fault.  The first 256 KiB are zeroed at once by the kernel, a grown
 * table of 2 MiB and more (to 4 MiB) faulted in by huge pages. */
struct uw_frame_info *uw_frame_cache_new(unsigned bits)
{
	return pr__table_new(((size_t)1 << bits) * sizeof(struct uw_frame_info));
}

void uw_frame_cache_free(struct uw_frame_info *fc, unsigned bits)
{
	pr__table_free(fc, ((size_t)1 << bits) * sizeof(*fc));
}

/* The steps of compiled rule `r`, into `fi`. */
static void set_rule(struct uw_frame_info *fi, const struct uw_rule *r)
{
	fi->cfa_off = r->cfa_off;
	fi->rbp_off = (int16_t)r->rbp_off;
	fi->ra_off = (int16_t)r->ra_off;
	fi->usable = r->usable && fi->rbp_off == r->rbp_off && fi->ra_off == r->ra_off;
	fi->cfa_rbp = r->cfa_rbp;
	fi->rbp = r->rbp;
	fi->ra = r->ra;
}

void uw_frame_maps_free(struct pr_unwinder *u)
{
	free(u->frame_maps);
	u->frame_maps = NULL;
	u->nr_frame_maps = u->cap_frame_maps = 0;
	pr__hashmap_free(&u->frame_map_ids);
}

/* Mapping `m`'s index in u->frame_maps, added the first time: 0 when out
 * of memory (or for none).  At UW_FRAME_MAPS_MAX, the cache (whose
 * entries name them) and they start again empty. */
static uint32_t map_index(struct pr_unwinder *u, const struct pr_map *m)
{
	uint64_t h = pr__hash_mix(pr__hash_mix(pr__hash_mix((uintptr_t)m->dso, m->start),
					       m->end), m->pgoff);
	struct uw_frame_map *fm;
	size_t it = 0;
	void *v;

	while ((v = pr__hashmap_next(&u->frame_map_ids, h, &it))) {
		fm = &u->frame_maps[(uintptr_t)v];
		if (fm->dso == m->dso && fm->start == m->start && fm->end == m->end &&
		    fm->pgoff == m->pgoff)
			return (uint32_t)(uintptr_t)v;
	}
	if (u->nr_frame_maps >= UW_FRAME_MAPS_MAX) {
		memset(u->frame_cache, 0, ((size_t)1 << u->frame_cache_bits) *
		       sizeof(*u->frame_cache));
		uw_frame_maps_free(u);
		u->stats.frame_cache_resets++;
	}
	/* Index 0 stands for no mapping. */
	if (!u->nr_frame_maps)
		u->nr_frame_maps = 1;
	if (PR_ARRAY_RESERVE(u->frame_maps, u->cap_frame_maps, u->nr_frame_maps + 1) ||
	    pr__hashmap_add(&u->frame_map_ids, h, (void *)(uintptr_t)u->nr_frame_maps))
		return 0;
	fm = &u->frame_maps[u->nr_frame_maps];
	*fm = (struct uw_frame_map){
		.dso = m->dso, .start = m->start, .end = m->end, .pgoff = m->pgoff,
		.jit = (m->prot & PROT_EXEC) && !uw_has_image(m),
		.at_address = !uw_dso_delta(m) };
	return (uint32_t)u->nr_frame_maps++;
}

/* The frame cache moved into `bigger`, of twice as many entries, with
 * what it held: each grown cache started empty, and refilling it was a
 * tenth of a compiler's misses (cc1's capture: 80 000 -> 72 000, each a
 * rule looked up again). */
static void grow(struct pr_unwinder *u, struct uw_frame_info *bigger)
{
	unsigned bits = u->frame_cache_bits + 1;

	for (size_t i = 0; i < (size_t)1 << u->frame_cache_bits; i++) {
		const struct uw_frame_info *fi = &u->frame_cache[i];

		if (fi->generation)
			bigger[pr__hash_mix(fi->generation, fi->ip + fi->leaf) >> (64 - bits)] = *fi;
	}
	uw_frame_cache_free(u->frame_cache, u->frame_cache_bits);
	u->frame_cache = bigger;
	u->frame_cache_bits = bits;
	u->frame_fills = 0;
}

/* What the frame at `ip` needs, from the cache or found once. */
static const struct uw_frame_info *frame_info(struct pr_unwinder *u, struct uw_ctx *c,
					      uint64_t ip, bool leaf)
{
	uint64_t gen = c->proc->code_generation;
	uint64_t h = pr__hash_mix(gen, ip + leaf);
	struct uw_frame_info *fi = &u->frame_cache[h >> (64 - u->frame_cache_bits)], *bigger;
	uint64_t addr = leaf ? ip : ip - 1;
	const struct pr_map *m;
	struct uw_rule rule;
	struct uw_elf *e;
	uint64_t bias;
	uint32_t map;

	if (fi->generation == gen && fi->ip == ip && fi->leaf == leaf)
		return fi;
	u->stats.frame_cache_misses++;
	/* Missing more often than it has entries: twice as many, if
	 * memory allows. */
	if (++u->frame_fills > ((uint64_t)2 << u->frame_cache_bits) &&
	    u->frame_cache_bits < UW_FRAME_CACHE_MAX_BITS &&
	    (bigger = uw_frame_cache_new(u->frame_cache_bits + 1))) {
		grow(u, bigger);
		fi = &u->frame_cache[h >> (64 - u->frame_cache_bits)];
	}
	m = pr__proc_find(c->proc, addr);
	/* (Which may empty the cache, and so `fi`.) */
	map = m ? map_index(u, m) : 0;
	if (m && !map)
		return NULL;
	memset(fi, 0, sizeof(*fi));
	fi->map = map;
	if (!m || !uw_has_image(m) || !(e = uw_resolve(u, c->pid, m)))
		goto done;
	bias = pr__elf_bias(e->img, m);
	if (addr < e->img->text_lo + bias || addr >= e->img->text_hi + bias)
		goto done;
	fi->top = uw_elf_is_top(e, addr - bias);
	/* A signal trampoline is stepped by its CFI, which says 'S' (and
	 * whose CFA is an expression) where glibc's does: such rules are not
	 * usable here, and libunwind takes the sample.  Its code is not read:
	 * libunwind does not know a trampoline by its code either, so one
	 * with other CFI, or none, is stepped the same either way
	 * (test-unwind-signal.c), and reading each new address's code cost a
	 * fifth of an offline report's CPU here (cc1, addresses), in page faults. */
	if (!uw_rule_find(u, e, addr - bias, &rule))
		return NULL;
	set_rule(fi, &rule);
done:
	fi->generation = gen;
	fi->ip = ip;
	fi->leaf = leaf;
	return fi;
}

/* Frame `f` placed in the mapping `fm` holds a copy of (NULL, or one of
 * no file: none). */
static inline void place(struct pr_frame *f, const struct pr_proc *proc,
			 const struct uw_frame_map *fm)
{
	struct pr_map m;

	if (!fm || !fm->dso) {
		uw_place_in(f, proc, NULL, 0);
		return;
	}
	m = (struct pr_map){ .start = fm->start, .end = fm->end, .pgoff = fm->pgoff,
			     .dso = fm->dso };
	uw_place_in(f, proc, &m, fm->at_address ? 0 : fm->pgoff - fm->start);
}

enum { BP_VALUE, BP_SAVED, BP_UNDEF };

/* *out: the frame `fi` (in anonymous executable memory) stepped as a copy
 * of CPython's perf trampoline (uw_py_trampoline()); false when it is
 * not one. */
static bool trampoline_info(struct pr_unwinder *u, struct uw_ctx *c,
			    const struct uw_frame_info *fi, uint64_t ip, uint64_t sp, bool leaf,
			    struct uw_frame_info *out)
{
	const struct pr_map *m = pr__proc_find(c->proc, leaf ? ip : ip - 1);
	struct uw_rule r;

	if (!m || !uw_py_trampoline(u, c, m, ip, sp, leaf, &r))
		return false;
	*out = *fi;
	set_rule(out, &r);
	return true;
}

/* The sampled frame's step worked out from its code, where its CFI has
 * rbp saved below the stack pointer: its CFA, and where rbp is (its value
 * already, unless still to be popped).  False when the code is no
 * epilogue this decodes. */
static bool exit_step(struct pr_unwinder *u, struct uw_ctx *c, uint64_t ip, uint64_t *cfa,
		      int *bp_state, uint64_t *bp_at)
{
	struct uw_row x;

	if (!uw_leaf_exit(c, ip, &x))
		return false;
	u->stats.leaf_exits++;
	*cfa = c->sp + (uint64_t)(int64_t)x.cfa_off;
	*bp_state = BP_VALUE;
	for (unsigned i = 0; i < x.nr; i++)
		if (x.at[i].reg == UW_DWARF_RBP) {
			*bp_state = BP_SAVED;
			*bp_at = *cfa + (uint64_t)(int64_t)x.at[i].off;
		}
	return true;
}

bool uw_fast_frames(struct pr_unwinder *u, struct uw_ctx *c, struct pr_stack *out)
{
	uint64_t ip = c->regs[PR_REG_IP], sp = c->regs[PR_REG_SP], bp = c->regs[PR_REG_BP];
	uint64_t bp_at = 0, cfa, ra;
	int bp_state = BP_VALUE;
	size_t first = out->nr;

	if (!c->proc || !(c->reg_mask >> PR_REG_BP & 1))
		return false;
	/* Each step's load depends on the one before, so a snapshot not in
	 * the cache (a file's, a ring's) costs a miss per frame in series;
	 * asked for at once, its lines arrive in parallel. */
	for (uint64_t off = 0; off < c->stack_size && off < PREFETCH_MAX; off += 64)
		__builtin_prefetch(c->stack + off);
	for (;;) {
		bool leaf = out->nr == first;
		struct pr_frame *f = &u->frames[out->nr];
		const struct uw_frame_info *fi;
		const struct uw_frame_map *fm;
		struct uw_frame_info tramp;

		/* Code is never in the copied stack; a sample that says so
		 * is libunwind's to make sense of. */
		if (ip - c->sp < c->stack_size + 16)
			return false;
		fi = frame_info(u, c, ip, leaf);
		fm = fi && fi->map ? &u->frame_maps[fi->map] : NULL;
		if (fi && !fi->usable && fm && fm->jit) {
			/* JIT code: a CPython trampoline is stepped by its
			 * template's row, checked against this stack (not
			 * cached: the check is the stack's). */
			if (!trampoline_info(u, c, fi, ip, sp, leaf, &tramp))
				return false;
			fi = &tramp;
		}
		if (!fi || !fi->usable)
			return false;
		f->ip = leaf ? ip : ip - 1;
		f->flags = 0;
		place(f, c->proc, fm);
		u->pcs[out->nr] = ip;
		u->sps[out->nr] = sp;
		out->nr++;
		if (out->nr - first >= u->max_depth || fi->top) {
			out->end = fi->top ? PR_END_OUTERMOST : PR_END_DEPTH;
			return true;
		}
		c->stack_exhausted = false;
		if (fi->cfa_rbp) {
			if (bp_state == BP_UNDEF)
				return false;
			if (bp_state == BP_SAVED) {
				if (!uw_read_copy(c, bp_at, &bp) && uw_read_mem(c, bp_at, &bp))
					goto failed;
				bp_state = BP_VALUE;
			}
			cfa = bp + (uint64_t)(int64_t)fi->cfa_off;
		} else {
			cfa = sp + (uint64_t)(int64_t)fi->cfa_off;
		}
		if (fi->rbp == UW_LOC_AT_CFA) {
			bp_state = BP_SAVED;
			bp_at = cfa + (uint64_t)(int64_t)fi->rbp_off;
			/* Popped already, by a leaf in its epilogue: stepped
			 * by its code (leafexit.c). */
			if (leaf && bp_at < sp && (fi->ra != UW_LOC_AT_CFA || fi->ra_off != -8 ||
						   !exit_step(u, c, ip, &cfa, &bp_state, &bp_at)))
				return false;
		} else if (fi->rbp == UW_LOC_UNDEF) {
			bp_state = BP_UNDEF;
		}
		ra = 0;
		if (fi->ra == UW_LOC_AT_CFA) {
			uint64_t at = cfa + (uint64_t)(int64_t)fi->ra_off;

			if (!uw_read_copy(c, at, &ra) && uw_read_mem(c, at, &ra))
				goto failed;
		}
		/* The x86-64 ABI ends a chain with an undefined return
		 * address or rbp. */
		if (!ra || bp_state == BP_UNDEF) {
			out->end = PR_END_OUTERMOST;
			return true;
		}
		/* A frame that does not move up the stack: libunwind's
		 * verdict, and its message. */
		if (cfa <= sp)
			return false;
		ip = ra;
		sp = cfa;
	}
failed:
	if (!c->stack_exhausted)
		return false;
	out->end = PR_END_TRUNCATED;
	return true;
}
