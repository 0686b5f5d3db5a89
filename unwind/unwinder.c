/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The unwinder: its state of each file (from the model's ELF cache); in
 * front, the fast path (fastpath.c), which steps through compiled CFA
 * rules cached per frame address and process generation; and behind it
 * one libunwind address space per process and the step loop that turns a
 * sample into frames and says why the stack ended.
 */
#include <elf.h>
#include <errno.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "unwind-int.h"

/* Processes with a live address space at once; each holds libunwind's
 * register-state cache, so a system-wide run must not keep every pid's. */
#define MAX_ADDRESS_SPACES 256
/* Tables built for libunwind kept at once (see uw_synthetic()). */
#define MAX_SYNTHETIC 64

struct uw_proc {
	uint32_t pid;
	unw_addr_space_t as;
	uint64_t last_use;
};

struct uw_synth {
	const struct uw_cfi_table *table;
	uint64_t bias;
	unsigned char *image;
	size_t size, frames_at;
	uint64_t last_use;
};

/* The mark for "looked, not found" in by_dso. */
static struct uw_elf missing;

static const char *const end_names[PR_END_MAX] = {
	[PR_END_OUTERMOST] = "outermost",
	[PR_END_TRUNCATED] = "truncated",
	[PR_END_NO_UNWIND_INFO] = "no unwind info",
	[PR_END_NO_MAPPING] = "no mapping (JIT or anonymous code)",
	[PR_END_DEPTH] = "depth limit",
	[PR_END_ERROR] = "unwinder error",
	[PR_END_NO_USER] = "no user registers",
	[PR_END_CHAIN] = "end of fp chain",
};

const char *pr_stack_end_name(enum pr_stack_end end)
{
	return (unsigned)end < PR_END_MAX ? end_names[end] : "unknown";
}

/* ---- the files, from the model's cache ---- */

struct uw_elf *uw_elf_new(struct pr_elf *img, const struct pr_logger *lg)
{
	struct uw_elf *e = calloc(1, sizeof(*e));

	if (!e)
		return NULL;
	e->img = img;
	uw_cfi_find_table(e, lg);
	uw_read_tops(e);
	return e;
}

void uw_elf_free(struct uw_elf *e)
{
	if (!e)
		return;
	uw_cfi_table_free(&e->eh);
	uw_cfi_table_free(&e->dbg);
	free(e->rules);
	free(e->rule_dir);
	free(e->new_rules);
	free(e);
}

/* The unwinder's state of file `img`, made the first time; NULL for a
 * file libunwind's x86-64 remote unwinder cannot read. */
static struct uw_elf *state_of(struct pr_unwinder *u, struct pr_elf *img)
{
	struct uw_elf *e = pr__hashmap_get(&u->by_img, (uintptr_t)img);

	if (e)
		return e;
	if (!img->is64 || img->machine != EM_X86_64 ||
	    (img->type != ET_EXEC && img->type != ET_DYN)) {
		pr__log(&u->lg, PR_LOG_DEBUG, "%s: not an x86-64 executable or library",
			img->path);
		return NULL;
	}
	e = uw_elf_new(img, &u->lg);
	if (!e || pr__hashmap_put(&u->by_img, (uintptr_t)img, e)) {
		uw_elf_free(e);
		return NULL;
	}
	u->stats.files_opened++;
	return e;
}

const struct uw_cfi_table *uw_debug_frame(struct pr_unwinder *u, struct uw_elf *e)
{
	struct pr_elf *dbg;

	if (!e->dbg_tried) {
		e->dbg_tried = true;
		/* A file's own .debug_frame that cannot be read (corrupt,
		 * or compressed past what we inflate) leaves its separate
		 * debug file to try. */
		if ((!e->img->debug_frame.size || uw_cfi_load_debug_frame(e, e->img, &u->lg)) &&
		    (dbg = pr__elfcache_debug(u->files, e->img, &u->lg)))
			uw_cfi_load_debug_frame(e, dbg, &u->lg);
	}
	return e->dbg.nr ? &e->dbg : NULL;
}

struct uw_elf *uw_resolve(struct pr_unwinder *u, uint32_t pid, const struct pr_map *m)
{
	struct uw_elf *e = pr__hashmap_get(&u->by_dso, (uintptr_t)m->dso);
	struct pr_elf *img;

	if (e)
		return e == &missing ? NULL : e;
	img = pr__elfcache_file(u->files, m->dso, m, pid, u->live, &u->lg);
	e = img ? state_of(u, img) : NULL;
	if (!e) {
		u->stats.files_missing++;
		if (m->dso->build_id_size) {
			char hexid[2 * PR_BUILD_ID_MAX + 1];

			pr__hex(hexid, m->dso->build_id, m->dso->build_id_size);
			pr__log(&u->lg, PR_LOG_INFO, "%s (build-id %s): not found by build-id "
				"or at its path; stacks through it end there; add a "
				"directory holding it by build-id to the "
				PR_LOG_SETTING_DEBUG_DIRS,
				m->dso->path, hexid);
		} else if (m->dso->path[0] == '/') {
			pr__log(&u->lg, PR_LOG_INFO, "%s: not found at its path, and the "
				"capture has no build-id to look for it by; stacks through "
				"it end there", m->dso->path);
		}
	}
	pr__hashmap_put(&u->by_dso, (uintptr_t)m->dso, e ? e : &missing);
	return e;
}

struct uw_elf *uw_resolved(struct pr_unwinder *u, const struct pr_map *m)
{
	struct uw_elf *e = pr__hashmap_get(&u->by_dso, (uintptr_t)m->dso);

	return e == &missing ? NULL : e;
}

/* ---- what a trim takes (model/trim.c) ---- */

static size_t table_bytes(const struct uw_cfi_table *t)
{
	return t->nr * sizeof(*t->index) + t->frames_size;
}

static size_t weigh_file(void *arg, const struct pr_elf *img)
{
	struct pr_unwinder *u = arg;
	const struct uw_elf *e = pr__hashmap_get(&u->by_img, (uintptr_t)img);
	size_t bytes;

	if (!e)
		return 0;
	bytes = sizeof(*e) + table_bytes(&e->eh) + table_bytes(&e->dbg) +
		e->cap_rules * sizeof(*e->rules) + e->nr_rule_dir * sizeof(*e->rule_dir) +
		(e->new_rules ? UW_NEW_RULES * sizeof(*e->new_rules) : 0);
	for (size_t i = 0; i < u->nr_synth; i++)
		if (u->synth[i].table == &e->eh || u->synth[i].table == &e->dbg)
			bytes += u->synth[i].size;
	return bytes;
}

static bool dso_stays(uint64_t key, void *value, void *arg)
{
	const struct uw_elf *e = value;

	(void)arg;
	return !((struct pr_dso *)(uintptr_t)key)->going && (e == &missing || !e->img->going);
}

static bool file_stays(uint64_t key, void *value, void *arg)
{
	struct pr_unwinder *u = arg;
	struct uw_elf *e = value;

	(void)key;
	if (!e->img->going)
		return true;
	/* Its tables go: so do the images built from them. */
	for (size_t i = 0; i < u->nr_synth; i++)
		if (u->synth[i].table == &e->eh || u->synth[i].table == &e->dbg) {
			free(u->synth[i].image);
			u->synth[i] = (struct uw_synth){ 0 };
		}
	uw_elf_free(e);
	return false;
}

static bool proc_stays(uint64_t key, void *value, void *arg)
{
	struct pr_unwinder *u = arg;
	struct uw_proc *p = value;

	if (pr__model_proc(u->model, (uint32_t)key, false))
		return true;
	unw_destroy_addr_space(p->as);
	free(p);
	return false;
}

/* Rules already compiled into the frame cache are copies, and its entries
 * of a process's old generations are never matched again: it keeps. */
static void trim_files(void *arg)
{
	struct pr_unwinder *u = arg;

	pr__hashmap_filter(&u->by_dso, dso_stays, u);
	pr__hashmap_filter(&u->by_img, file_stays, u);
	pr__hashmap_filter(&u->procs, proc_stays, u);
	uw_jits_trim(u);
	if (u->joiner)
		uw_joiner_trim(u->joiner);
}

/* ---- the tables we build, at addresses no process has ---- */

const unsigned char *uw_synthetic(struct pr_unwinder *u, const struct uw_cfi_table *t,
				  uint64_t bias, uint64_t *addr, size_t *frames_at)
{
	struct uw_synth *s;
	size_t i, oldest = 0;

	/* An .eh_frame index does not depend on the bias; converted
	 * .debug_frame does, so a library at a different address in every
	 * process has one image per process: the least recently used goes
	 * when there are too many.  (libunwind keeps no addresses of them
	 * from one step to the next: it caches nothing.) */
	if (!t->frames)
		bias = 0;
	for (i = 0; i < u->nr_synth; i++) {
		if (u->synth[i].table == t && u->synth[i].bias == bias)
			break;
		if (u->synth[i].last_use < u->synth[oldest].last_use)
			oldest = i;
	}
	if (i == u->nr_synth) {
		if (u->nr_synth == MAX_SYNTHETIC) {
			i = oldest;
			free(u->synth[i].image);
		} else {
			struct uw_synth *v = realloc(u->synth, (i + 1) * sizeof(*v));

			if (!v)
				return NULL;
			u->synth = v;
			u->nr_synth++;
		}
		s = &u->synth[i];
		s->table = t;
		s->bias = bias;
		s->image = uw_cfi_image(t, bias, &s->size, &s->frames_at);
		if (!s->image) {
			/* An empty slot no lookup matches. */
			s->table = NULL;
			s->size = 0;
			return NULL;
		}
	}
	s = &u->synth[i];
	s->last_use = ++u->tick;
	*addr = UW_SYNTHETIC_BASE + ((uint64_t)i << UW_SYNTHETIC_SHIFT);
	*frames_at = s->frames_at;
	return s->image;
}

int uw_synthetic_read(struct pr_unwinder *u, uint64_t addr, uint64_t *val)
{
	uint64_t rel = addr - UW_SYNTHETIC_BASE;
	size_t i = (size_t)(rel >> UW_SYNTHETIC_SHIFT);
	uint64_t off = rel & ((UINT64_C(1) << UW_SYNTHETIC_SHIFT) - 1);

	if (i >= u->nr_synth || off > u->synth[i].size || u->synth[i].size - off < 8)
		return -1;
	memcpy(val, u->synth[i].image + off, 8);
	return 0;
}

/* ---- address spaces ---- */

static void evict_oldest(struct pr_unwinder *u)
{
	struct uw_proc *oldest = NULL;

	for (size_t i = 0; i < u->procs.cap; i++) {
		struct uw_proc *p = u->procs.slots[i].value;

		if (p && (!oldest || p->last_use < oldest->last_use))
			oldest = p;
	}
	if (oldest) {
		pr__hashmap_del(&u->procs, oldest->pid);
		unw_destroy_addr_space(oldest->as);
		free(oldest);
	}
}

static struct uw_proc *address_space(struct pr_unwinder *u, uint32_t pid)
{
	struct uw_proc *p = pr__hashmap_get(&u->procs, pid);

	if (!p) {
		if (u->procs.n >= MAX_ADDRESS_SPACES)
			evict_oldest(u);
		p = calloc(1, sizeof(*p));
		if (!p)
			return NULL;
		p->pid = pid;
		p->as = unw_create_addr_space(&uw_accessors, 0);
		if (!p->as || pr__hashmap_put(&u->procs, pid, p)) {
			if (p->as)
				unw_destroy_addr_space(p->as);
			free(p);
			return NULL;
		}
		/*
		 * No caching in libunwind: it keys the register state it
		 * caches by a frame's address alone, not by the address it
		 * looked the rules up at (a caller's return address minus
		 * one, a leaf's own), so a return address that is also the
		 * first instruction of the next function (after a call that
		 * does not return) gets the other's rules, depending on what
		 * was unwound before.  The compiled rules in front of
		 * libunwind are the cache, keyed right.
		 */
		unw_set_caching_policy(p->as, UNW_CACHE_NONE);
	}
	p->last_use = ++u->tick;
	return p;
}

/* ---- the unwinder ---- */

struct pr_unwinder *pr_unwinder_new(struct pr_model *model,
				    const struct pr_unwinder_opts *opts)
{
	struct pr_unwinder *u;
	size_t extra = PR_OPTS_HAS(opts, nr_debug_dirs) ? opts->nr_debug_dirs : 0;

	if (!model || !PR_OPTS_VALID(opts) || (extra && !opts->debug_dirs)) {
		errno = EINVAL;
		return NULL;
	}
	u = calloc(1, sizeof(*u));
	if (!u)
		return NULL;
	u->model = model;
	if (PR_OPTS_HAS(opts, log_ctx)) {
		u->lg.fn = opts->log;
		u->lg.ctx = opts->log_ctx;
	}
	u->max_depth = PR_OPTS_GET(opts, max_depth, PR_UNWIND_DEFAULT_DEPTH);
	if (u->max_depth > PR_UNWIND_MAX_DEPTH)
		u->max_depth = PR_UNWIND_MAX_DEPTH;
	u->live = PR_OPTS_HAS(opts, live) && opts->live;
	u->chain_max_stack = uw_chain_max_stack(PR_OPTS_GET(opts, chain_max_stack, 0), u->live);
	u->frame_pointers = !(PR_OPTS_HAS(opts, no_frame_pointers) && opts->no_frame_pointers);
	u->rule_cache = !(PR_OPTS_HAS(opts, no_rule_cache) && opts->no_rule_cache);
	if (u->rule_cache) {
		u->frame_cache = uw_frame_cache_new(UW_FRAME_CACHE_MIN_BITS);
		u->frame_cache_bits = UW_FRAME_CACHE_MIN_BITS;
		if (!u->frame_cache) {
			free(u);
			return NULL;
		}
	}
	u->stats.sz = sizeof(u->stats);
	u->files = pr__model_files(model, extra ? opts->debug_dirs : NULL, extra, "unwinder",
				   &u->lg);
	if (!u->files) {
		uw_frame_cache_free(u->frame_cache, u->frame_cache_bits);
		free(u);
		errno = ENOMEM;
		return NULL;
	}
	if (!(PR_OPTS_HAS(opts, no_join) && opts->no_join) && !(u->joiner = uw_joiner_new(model))) {
		uw_frame_cache_free(u->frame_cache, u->frame_cache_bits);
		free(u);
		errno = ENOMEM;
		return NULL;
	}
	u->user = (struct pr_model_user){ .weigh = weigh_file, .trim = trim_files, .arg = u };
	pr__model_listen(model, &u->user);
	return u;
}

void pr_unwinder_free(struct pr_unwinder *u)
{
	if (!u)
		return;
	pr__model_unlisten(u->model, &u->user);
	uw_joiner_free(u->joiner);
	for (size_t i = 0; i < u->procs.cap; i++) {
		struct uw_proc *p = u->procs.slots[i].value;

		if (p) {
			unw_destroy_addr_space(p->as);
			free(p);
		}
	}
	pr__hashmap_free(&u->procs);
	uw_jits_free(u);
	pr__hashmap_free(&u->by_dso);
	for (size_t i = 0; i < u->by_img.cap; i++)
		if (u->by_img.slots[i].value)
			uw_elf_free(u->by_img.slots[i].value);
	pr__hashmap_free(&u->by_img);
	for (size_t i = 0; i < u->nr_synth; i++)
		free(u->synth[i].image);
	free(u->synth);
	uw_frame_cache_free(u->frame_cache, u->frame_cache_bits);
	uw_frame_maps_free(u);
	free(u);
}

bool uw_shown_as_address(const char *path)
{
	static const char *const prefixes[] = {
		"//anon", "/dev/zero", "/anon_hugepage", "[stack", "[heap]", "[vsyscall]",
	};

	/* Once per frame: a file's path ("/usr/...", "/home/...") is told
	 * apart by its first two characters. */
	if (path[0] != '[' && (path[0] != '/' || !strchr("/da", path[1]) || !path[1]))
		return false;
	for (size_t i = 0; i < PR_ARRAY_SIZE(prefixes); i++)
		if (!strncmp(path, prefixes[i], strlen(prefixes[i])))
			return true;
	return false;
}

uint64_t uw_dso_delta(const struct pr_map *m)
{
	return m && !uw_shown_as_address(m->dso->path) ? m->pgoff - m->start : 0;
}

void uw_place(struct pr_frame *f, const struct pr_proc *proc)
{
	const struct pr_map *m = pr__proc_find(proc, f->ip);

	uw_place_in(f, proc, m, uw_dso_delta(m));
}

/* The kernel part of the call chain, up to the first user context. */
static size_t kernel_frames(struct pr_unwinder *u, const struct pr_sample *s)
{
	bool in_kernel = false;
	size_t n = 0;

	for (uint64_t i = 0; i < s->nr_callchain && n < UW_MAX_KERNEL_FRAMES; i++) {
		uint64_t ip = s->callchain[i];

		if (ip >= (uint64_t)PERF_CONTEXT_MAX) {
			in_kernel = ip == (uint64_t)PERF_CONTEXT_KERNEL;
			if (ip == (uint64_t)PERF_CONTEXT_USER)
				break;
			continue;
		}
		if (!in_kernel)
			continue;
		u->frames[n++] = (struct pr_frame){ .ip = ip, .dso_ip = ip,
						    .flags = PR_FRAME_KERNEL };
	}
	return n;
}

/* Whether the frame at `addr` is one no stack goes beyond (its file's
 * e->tops), as frame_info() finds for the fast path (fastpath.c). */
static bool top_frame(struct pr_unwinder *u, const struct uw_ctx *c, uint64_t addr)
{
	const struct pr_map *m = pr__proc_find(c->proc, addr);
	struct uw_elf *e;

	if (!m || !uw_has_image(m) || !(e = uw_resolve(u, c->pid, m)) || !e->nr_tops)
		return false;
	return uw_elf_is_top(e, addr - pr__elf_bias(e->img, m));
}

/* Whether `addr` of `proc` is in executable memory. */
static bool in_code(const struct pr_proc *proc, uint64_t addr)
{
	const struct pr_map *m = pr__proc_find(proc, addr);

	return m && (m->prot & PROT_EXEC);
}

/* Why the step that just failed (ret <= 0) ended the stack. */
static enum pr_stack_end classify(const struct uw_ctx *c, int ret, int *error)
{
	if (c->stack_exhausted)
		return PR_END_TRUNCATED;
	if (c->no_info)
		return c->no_info_unmapped ? PR_END_NO_MAPPING : PR_END_NO_UNWIND_INFO;
	if (ret == 0)
		return PR_END_OUTERMOST;
	*error = -ret;
	return PR_END_ERROR;
}

/* The user frames through libunwind, from c's registers and copy. */
static void libunwind_frames(struct pr_unwinder *u, const struct pr_record *rec,
			     struct uw_ctx *c, struct pr_stack *out)
{
	const struct pr_proc *proc = c->proc;
	uint64_t sp_prev = 0, ip_prev = 0;
	struct uw_proc *p;
	unw_cursor_t cur;
	size_t first = out->nr;
	enum pr_stack_end guess_end = PR_END_NO_UNWIND_INFO;
	bool guessed = false;
	int ret;

	p = address_space(u, rec->pid);
	if (!p || (ret = unw_init_remote(&cur, p->as, c)) < 0) {
		out->end = PR_END_ERROR;
		out->error = p ? -ret : ENOMEM;
		return;
	}
	for (;;) {
		struct pr_frame *f = &u->frames[out->nr];
		unw_word_t ip = 0, sp = 0, bp = 0;
		bool interrupted = false;

		unw_get_reg(&cur, UNW_REG_IP, &ip);
		unw_get_reg(&cur, UNW_REG_SP, &sp);
		f->flags = guessed ? PR_FRAME_FP : 0;
		if (out->nr > first) {
			/* libunwind calls a frame a signal frame once it has
			 * stepped into it out of a signal trampoline (by rules
			 * whose CIE says 'S'): this frame is the code the
			 * signal interrupted, the one before it the
			 * trampoline. */
			interrupted = unw_is_signal_frame(&cur) > 0;
			/* A frame below the last, or the same frame again,
			 * would loop.  The same stack pointer alone is fine:
			 * a function that popped its return address into a
			 * register (vfork) has its caller's.  Interrupted
			 * code may be anywhere: the handler may have run on
			 * another stack. */
			if (!ip || ((sp < sp_prev || (sp == sp_prev && ip == ip_prev)) &&
				    !interrupted)) {
				out->end = ip ? PR_END_ERROR : PR_END_OUTERMOST;
				if (ip)
					pr__log(&u->lg, PR_LOG_DEBUG, "pid %u: the frame at 0x%llx "
						"does not move up the stack (sp 0x%llx after 0x%llx)",
						rec->pid, (unsigned long long)ip,
						(unsigned long long)sp, (unsigned long long)sp_prev);
				break;
			}
			/* A frame-pointer guess that led out of code went
			 * wrong: the stack ends where the unwind information
			 * did, as it would have without the guess. */
			if (guessed && !interrupted && !in_code(proc, ip - 1)) {
				out->end = guess_end;
				break;
			}
			/* Callers are attributed to their call instruction;
			 * code a signal interrupted, to the instruction. */
			f->ip = interrupted ? ip : ip - 1;
			if (interrupted)
				u->frames[out->nr - 1].flags |= PR_FRAME_SIGNAL;
		} else {
			f->ip = ip;
		}
		uw_place(f, proc);
		u->pcs[out->nr] = ip;
		u->sps[out->nr] = sp;
		out->nr++;
		/* A stack whose outermost frame is the limit's last is
		 * complete, as the fast path finds it. */
		if (top_frame(u, c, f->ip)) {
			out->end = PR_END_OUTERMOST;
			break;
		}
		if (out->nr - first >= u->max_depth) {
			out->end = PR_END_DEPTH;
			break;
		}
		sp_prev = sp;
		ip_prev = ip;
		c->stack_exhausted = false;
		c->no_info = c->no_info_unmapped = c->not_code = c->file_missing = false;
		c->cfi_elf = NULL;
		c->jit_code = NULL;
		c->frame_ip = ip;
		c->frame_sp = sp;
		c->frame_bp_known = !unw_get_reg(&cur, UNW_X86_64_RBP, &bp);
		c->frame_bp = bp;
		ret = unw_step(&cur);
		c->exit_step = false;
		if (ret <= 0) {
			out->end = classify(c, ret, &out->error);
			if (out->end == PR_END_ERROR)
				pr__log(&u->lg, PR_LOG_DEBUG, "pid %u: unwinding stopped at "
					"0x%llx: %s", rec->pid, (unsigned long long)ip,
					unw_strerror(ret));
			break;
		}
		/* Without unwind information for this frame, libunwind took
		 * the next one from the frame-pointer chain: fine through JIT
		 * code or a file without CFI, if asked for; never from an
		 * address that is not code (the stack went wrong before), nor
		 * from a file we could not find (whose CFI would have said;
		 * its code is as likely as not built without frame pointers). */
		guessed = c->no_info;
		guess_end = c->no_info_unmapped ? PR_END_NO_MAPPING : PR_END_NO_UNWIND_INFO;
		if (guessed && (!u->frame_pointers || c->not_code || c->file_missing)) {
			out->end = guess_end;
			break;
		}
	}
}

/* The user frames, into `out`; what of the stack copy they took, into
 * u->stack_used. */
static void user_frames(struct pr_unwinder *u, const struct pr_record *rec,
			struct pr_stack *out)
{
	const struct pr_sample *s = &rec->u.sample;
	struct pr_proc *proc = pr__model_proc(u->model, rec->pid, false);
	uint64_t regs[PR_REG_MAX] = { 0 };
	struct uw_ctx c;
	size_t first = out->nr;

	/* The registers, packed in ascending bit order, spread out. */
	for (uint64_t m = s->regs_mask & ((UINT64_C(1) << PR_REG_MAX) - 1), i = 0; m;
	     m &= m - 1)
		regs[__builtin_ctzll(m)] = s->regs[i++];
	memset(&c, 0, sizeof(c));
	c.u = u;
	c.proc = proc;
	c.pid = rec->pid;
	c.regs = regs;
	c.reg_mask = s->regs_mask;
	c.sp = s->stack_addr;
	c.stack = s->stack;
	c.stack_size = s->stack ? s->stack_dyn_size : 0;

	if (u->rule_cache) {
		uint64_t exits = u->stats.leaf_exits;

		if (uw_fast_frames(u, &c, out)) {
			u->stats.fast_samples++;
			u->stack_used = c.stack_read;
			return;
		}
		/* Start again, all through libunwind. */
		u->stats.leaf_exits = exits;
		out->nr = first;
		out->end = PR_END_OUTERMOST;
		c.stack_exhausted = false;
	}
	libunwind_frames(u, rec, &c, out);
	/* A sampled frame in its epilogue, whose CFI has the registers it
	 * popped still below the stack pointer, out of the copy: stepped
	 * again by its code (leafexit.c).  Only after an error, which
	 * that is: reading the code of every sampled address costs. */
	if (out->end == PR_END_ERROR && uw_leaf_exit(&c, regs[PR_REG_IP], &c.exit)) {
		out->nr = first;
		out->end = PR_END_OUTERMOST;
		out->error = 0;
		c.exit_step = true;
		libunwind_frames(u, rec, &c, out);
		u->stats.leaf_exits++;
	}
	u->stack_used = c.stack_read;
}
int pr_unwinder_unwind(struct pr_unwinder *u, const struct pr_record *rec,
		       struct pr_stack *out)
{
	const struct pr_sample *s;
	struct uw_chain chain;
	bool from_chain, tailed;

	if (!u || !rec || !out || rec->type != PR_RECORD_SAMPLE)
		return -EINVAL;
	s = &rec->u.sample;
	memset(out, 0, sizeof(*out));
	u->stack_used = 0;
	out->frames = u->frames;
	out->nr = out->nr_kernel = kernel_frames(u, s);
	chain = uw_user_chain(s);
	/* Only without a copy: a copy that came back empty still has the
	 * registers, whose stack pointer tells the joiner what returned. */
	from_chain = chain.nr && !s->stack;
	if (from_chain)
		uw_chain_frames(u, rec, &chain, out);
	else if (!s->regs || s->regs_abi != PERF_SAMPLE_REGS_ABI_64 ||
		 !(s->regs_mask >> PR_REG_IP & 1) || !(s->regs_mask >> PR_REG_SP & 1))
		out->end = PR_END_NO_USER;
	else
		user_frames(u, rec, out);
	/* auto: a stack the copy cut goes on with the chain, where the
	 * chain vouches for it; else joining may complete it. */
	tailed = !from_chain && out->end == PR_END_TRUNCATED && chain.nr &&
		 uw_chain_tail(u, rec, &chain, out);
	/* A tail that stopped in a thread's entry in the C runtime (built
	 * without frame pointers, as Debian's libc) has the same outermost
	 * frames as every stack of the thread. */
	if (tailed && u->joiner && out->end == PR_END_TRUNCATED &&
	    uw_chain_at_root(u, rec, u->frames[out->nr - 1].ip)) {
		struct uw_stack_regs regs = { u->frames, u->pcs, u->sps };
		size_t added = uw_join_root(u->joiner, rec->tid, &regs, out->nr_kernel, &out->nr,
					    out->nr_kernel + u->max_depth, &out->end);

		u->stats.joined += added > 0;
		u->stats.joined_frames += added;
	}
	/* A chain tells no stack addresses: nothing to join by. */
	if (u->joiner && out->end != PR_END_NO_USER && !from_chain && !tailed) {
		struct uw_stack_regs regs = { u->frames, u->pcs, u->sps };
		bool refused;
		size_t added = uw_join(u->joiner, rec->tid, &regs, &chain, out->nr_kernel,
				       &out->nr, out->nr_kernel + u->max_depth, &out->end,
				       &refused);

		/* Completed; one joined only in part is still truncated. */
		u->stats.joined += added && out->end != PR_END_TRUNCATED;
		u->stats.joined_frames += added;
		u->stats.joins_unconfirmed += refused;
	}
	u->stats.samples++;
	u->stats.kernel_frames += out->nr_kernel;
	u->stats.frames += out->nr - out->nr_kernel;
	for (size_t i = out->nr_kernel; i < out->nr; i++)
		u->stats.fp_frames += !!(u->frames[i].flags & PR_FRAME_FP);
	u->stats.ends[out->end]++;
	return 0;
}

uint64_t pr_unwinder_stack_used(const struct pr_unwinder *u)
{
	return u ? u->stack_used : 0;
}

/* Version 2.0's struct pr_unwind_stats ended at joined_frames, with an
 * ends[] of the ends before PR_END_CHAIN. */
#define STATS_2_0_ENDS ((size_t)PR_END_CHAIN)
#define STATS_2_0_SIZE \
	(offsetof(struct pr_unwind_stats, ends) + (STATS_2_0_ENDS + 5) * sizeof(uint64_t))

int pr_unwinder_stats(const struct pr_unwinder *u, struct pr_unwind_stats *st)
{
	uint64_t tail[STATS_2_0_ENDS + 5];
	size_t head = offsetof(struct pr_unwind_stats, ends);

	if (!u || !st)
		return -EINVAL;
	if (st->sz <= head || st->sz > STATS_2_0_SIZE) {
		struct pr_unwind_stats now = u->stats;

		now.jitdump_bytes = uw_jits_bytes(u);
		return pr__stats_copy(st, &now, sizeof(*st));
	}
	/* A caller built against 2.0 gets its layout: the counters after
	 * ends[] where they were. */
	memcpy(tail, u->stats.ends, STATS_2_0_ENDS * sizeof(uint64_t));
	memcpy(tail + STATS_2_0_ENDS, &u->stats.files_opened, 5 * sizeof(uint64_t));
	memcpy((char *)st + sizeof(st->sz), (const char *)&u->stats + sizeof(st->sz),
	       head - sizeof(st->sz));
	memcpy((char *)st + head, tail, st->sz - head);
	return 0;
}
