/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Shared by the files of unwind/: the unwind tables built for files
 * without .eh_frame_hdr (cfi.c), the compiled rules (rules.c) and the
 * fast path that steps through them (fastpath.c), libunwind's accessors
 * (accessors.c) and the unwinder itself (unwinder.c).  The files
 * themselves come from the model's ELF cache (model/elfcache.h).
 */
#ifndef PR_UNWIND_INT_H
#define PR_UNWIND_INT_H

#include <libunwind.h>
#include <string.h>

#include "model/elfcache.h"
#include "prunwind.h"

/* libunwind's table lookup, exported but not declared by its headers. */
extern int UNW_OBJ(dwarf_search_unwind_table)(unw_addr_space_t as, unw_word_t ip,
					      unw_dyn_info_t *di, unw_proc_info_t *pi,
					      int need_unwind_info, void *arg);
#define dwarf_search_unwind_table UNW_OBJ(dwarf_search_unwind_table)

/* Functions of Go's runtime a stack ends at (see uw_read_tops()). */
#define UW_MAX_TOPS 16
/* The C runtime's thread entries (see uw_elf_is_root()). */
#define UW_MAX_ROOTS 4

/* How a file's .eh_frame is searched. */
enum uw_table_kind {
	UW_TABLE_NONE,
	UW_TABLE_EH_HDR,             /* .eh_frame_hdr's binary-search table */
	UW_TABLE_EH_FRAME,           /* .eh_frame without the table: we index it */
};

/* One FDE of a table we built: where its code starts (link-time address,
 * relative to text_lo) and where the FDE is in its section. */
struct uw_fde {
	int32_t start;
	int32_t fde;
};

/* A table we built, sorted by start; for .debug_frame also the section
 * converted to .eh_frame's conventions (CIE ids 0, CIE pointers
 * relative), its FDEs' link-time addresses moved per load bias later. */
struct uw_cfi_table {
	struct uw_fde *index;
	size_t nr;
	unsigned char *frames;       /* NULL for .eh_frame: read in place */
	size_t frames_size;
};

/* Where the fast path finds rbp or the return address of the caller. */
enum uw_loc {
	UW_LOC_SAME,                 /* unchanged */
	UW_LOC_UNDEF,                /* undefined: the outermost frame */
	UW_LOC_AT_CFA,               /* saved at CFA + offset */
};

/*
 * One row of a CFA program compiled for x86-64, for link-time addresses
 * [lo, hi): the CFA is rsp or rbp plus an offset, rbp and the return
 * address are unchanged, undefined or saved at CFA + offset.  Rows
 * anything else describes (expressions, other registers, signal frames)
 * are not `usable`: libunwind unwinds those.
 */
struct uw_rule {
	uint64_t lo, hi;
	int32_t cfa_off, rbp_off, ra_off;
	uint8_t usable;
	uint8_t cfa_rbp;             /* CFA from rbp, else from rsp */
	uint8_t rbp, ra;             /* enum uw_loc */
};

/* The largest CPython perf trampoline template read (pytramp.c). */
#define UW_PY_TEMPLATE_MAX 32

/* A file's CPython perf trampoline template, as its rows (pytramp.c). */
struct uw_pytemplate {
	bool read;                   /* looked for */
	uint8_t size;                /* 0: none, or not one we know */
	uint8_t ret;                 /* the offset its call returns to */
	/* Per offset where an instruction starts: the CFA's distance above
	 * rsp before it (0: no instruction starts there), and where rbp is
	 * saved below the CFA (0: not saved). */
	uint8_t cfa[UW_PY_TEMPLATE_MAX];
	uint8_t rbp_at[UW_PY_TEMPLATE_MAX];
};

/* The unwinder's view of a mapped file (the model's struct pr_elf, shared
 * by every process mapping it): where its unwind table is, the tables
 * built for it and the rules compiled from them. */
struct uw_elf {
	struct pr_elf *img;
	/* Link-time ranges of the functions stacks end at, beyond what the
	 * CFI says: Go's runtime, and an entry point without CFI. */
	struct uw_range {
		uint64_t lo, hi;
	} tops[UW_MAX_TOPS];
	size_t nr_tops;
	/* Link-time ranges of the C runtime's thread entries (uw_elf_is_root()),
	 * read on the first question. */
	struct uw_range roots[UW_MAX_ROOTS];
	size_t nr_roots;
	bool roots_read;

	enum uw_table_kind table;
	/* UW_TABLE_EH_HDR: link-time addresses of the header and its table */
	uint64_t eh_hdr_vaddr, eh_table_vaddr, fde_count;
	/* UW_TABLE_EH_FRAME: our index of .eh_frame */
	struct uw_cfi_table eh;
	/* Code .eh_frame does not cover may have .debug_frame, here or in
	 * a separate debug file: loaded on the first miss. */
	bool dbg_tried;
	struct uw_cfi_table dbg;
	/* Rows compiled so far, sorted by lo, not overlapping: the table,
	 * and the newest rows (sorted too, disjoint from the table's) until
	 * there are UW_NEW_RULES of them and they are merged into it, so a
	 * file that compiles thousands of rows (cc1) does not move the whole
	 * table for every one. */
	struct uw_rule *rules;
	size_t nr_rules, cap_rules;
	struct uw_rule *new_rules;
	size_t nr_new_rules;
	/* For each page of the text (2^rule_dir_shift bytes from text_lo),
	 * how many of `rules` start at or before its first byte: a lookup
	 * searches only the rows of its page.  Made again at each merge;
	 * NULL when there was no memory for it. */
	uint32_t *rule_dir;
	size_t nr_rule_dir;
	unsigned rule_dir_shift;
	struct uw_pytemplate py;
};

/* Rows compiled and not yet merged into a file's table, at most. */
#define UW_NEW_RULES 256

/* ---- cfi.c ---- */

/* Find how e's .eh_frame is searched: its .eh_frame_hdr when that is the
 * usual layout, else an index we build (e->table, e->eh). */
void uw_cfi_find_table(struct uw_elf *e, const struct pr_logger *lg);
/* Convert the .debug_frame of `src` (e's file itself, or its separate
 * debug file) into e->dbg.  0 or -errno. */
int uw_cfi_load_debug_frame(struct uw_elf *e, const struct pr_elf *src,
			    const struct pr_logger *lg);
void uw_cfi_table_free(struct uw_cfi_table *t);

/* The row for link-time address `addr` of the FDE at offset `fde` of
 * `buf` (frames in .eh_frame's conventions, the first byte at link-time
 * `vaddr`).  1 when the FDE covers `addr` (*r filled in, perhaps not
 * usable); 0 when it does not (r->lo and r->hi are the FDE's range);
 * -1 when it cannot be read. */
int uw_cfi_row(const unsigned char *buf, size_t size, uint64_t vaddr, size_t fde,
	       uint64_t addr, struct uw_rule *r);

/* The bytes libunwind reads for a table we built: the index entries (as
 * .eh_frame_hdr's table lays them out), then any converted frames with
 * their FDE addresses moved by `bias`.  Allocated; the caller frees.
 * *frames_at is where the FDEs start in the image. */
unsigned char *uw_cfi_image(const struct uw_cfi_table *t, uint64_t bias,
			    size_t *size, size_t *frames_at);

/* ---- rules.c ---- */

/* Read e->tops: Go's runtime functions no stack goes beyond, and the
 * file's entry point where its CFI leaves it out. */
void uw_read_tops(struct uw_elf *e);
/* Whether link-time address `vaddr` of `e` is in one of e->tops. */
bool uw_elf_is_top(const struct uw_elf *e, uint64_t vaddr);
/*
 * Whether link-time address `vaddr` of `e` is in one of the C runtime's
 * thread entries: glibc's __libc_start_call_main (__libc_start_main
 * before 2.34), which calls main and then exit, and start_thread, which
 * calls a thread's function and ends the thread.  Each is called from
 * one place and never returns there, so the frames beyond it are the
 * same, to the return address, for every stack of the thread.  By the
 * file's symbols, or its debug file's (Debian's libc has them only in
 * libc6-dbg's).
 */
bool uw_elf_is_root(struct pr_unwinder *u, struct uw_elf *e, uint64_t vaddr);

/* The compiled row for link-time address `addr` of `e`, found through
 * the same tables libunwind searches; not usable where there is no
 * unwind information.  false only when out of memory. */
bool uw_rule_find(struct pr_unwinder *u, struct uw_elf *e, uint64_t addr,
		  struct uw_rule *out);

/* ---- accessors.c ---- */

/* rbp's DWARF register number. */
#define UW_DWARF_RBP 6

/* A step as a CFI row: the CFA is DWARF register `cfa_reg` plus
 * `cfa_off`, the return address at CFA + `ra_off`, registers `at` saved
 * at their CFA offsets, every other one unchanged. */
struct uw_row {
	uint8_t cfa_reg;
	int32_t cfa_off, ra_off;
	uint8_t nr;
	struct {
		uint8_t reg;
		int32_t off;
	} at[16];
};

/* What one unwind needs from the accessors (the `arg` libunwind passes). */
struct uw_ctx {
	struct pr_unwinder *u;
	const struct pr_proc *proc;
	uint32_t pid;
	const uint64_t *regs;        /* by perf register number */
	uint64_t reg_mask;
	uint64_t sp;
	const uint8_t *stack;
	uint64_t stack_size;         /* valid bytes from sp */
	/* Bytes from sp up to the end of the highest stack word read, or
	 * wanted just past the copy, over the whole unwind
	 * (pr_unwinder_stack_used()). */
	uint64_t stack_read;
	/* What went wrong in the current step. */
	bool stack_exhausted;        /* a read just past the copied stack */
	bool no_info;                /* find_proc_info found no unwind info */
	bool no_info_unmapped;       /* ... the address is in no file mapping */
	bool not_code;               /* ... nor in any executable mapping */
	bool file_missing;           /* ... its mapped file was not found */
	bool reading_cfi;            /* libunwind is in a CIE or FDE */
	/* The file whose unwind information this step reads, and its load
	 * bias: set by find_proc_info. */
	const struct uw_elf *cfi_elf;
	uint64_t cfi_bias;
	/* JIT code whose unwind information this step reads, from the
	 * process's jitdump (jitcfi.c): set by find_proc_info. */
	const struct pr_jitdump *jit;
	const struct jd_code *jit_code;
	/* Last file region read: most reads hit the same one. */
	uint64_t hit_lo, hit_hi;
	const unsigned char *hit_data;
	/* The frame unw_step() is stepping from: its address, stack
	 * pointer and rbp, if libunwind knows it (uw_py_proc_info(), the
	 * frame-pointer step of find_proc_info). */
	uint64_t frame_ip, frame_sp, frame_bp;
	bool frame_bp_known;
	/* While the sampled frame is stepped: step it by `exit`, worked out
	 * from its code (uw_leaf_exit()), not by its CFI. */
	bool exit_step;
	struct uw_row exit;
};

extern unw_accessors_t uw_accessors;

/* Memory as libunwind's access_mem sees it: the copied stack, the tables
 * we built, the mapped files' read-only bytes.  0, or -1 (setting
 * c->stack_exhausted for a read just past the copied stack). */
int uw_read_mem(struct uw_ctx *c, uint64_t addr, uint64_t *val);

/* A word of the copied stack, when all of it is there: what most reads
 * of an unwind are, inline for the fast path (then uw_read_mem()). */
static inline bool uw_read_copy(struct uw_ctx *c, uint64_t addr, uint64_t *val)
{
	uint64_t top = c->sp + c->stack_size;

	if (addr < c->sp || addr >= top || top - addr < 8)
		return false;
	memcpy(val, c->stack + (addr - c->sp), 8);
	if (addr - c->sp + 8 > c->stack_read)
		c->stack_read = addr - c->sp + 8;
	return true;
}
/* Only the mapped files' read-only bytes; the region last hit first. */
int uw_read_file(struct uw_ctx *c, uint64_t addr, uint64_t *val);
/* Mappings whose bytes we can have: files, and the vDSO. */
bool uw_has_image(const struct pr_map *m);

/* ---- join.c ---- */

/* A stack being unwound: its frames, and for each the address it was
 * found at (the sampled one or a return address, not pr_frame.ip's
 * call-instruction address) and its stack pointer. */
struct uw_stack_regs {
	struct pr_frame *frames;
	uint64_t *pcs, *sps;
};

/* The user part of a sample's call chain (past PERF_CONTEXT_USER): the
 * sampled address, then return addresses, as the kernel's frame-pointer
 * walk found them; nr 0 when the sample has none.  nr_entries counts
 * the kernel's entries too, as its depth limit does. */
struct uw_chain {
	const uint64_t *ips;
	size_t nr;
	size_t nr_entries;
};

struct uw_joiner;
/* Keeps each thread's last complete stack: NULL when out of memory. */
struct uw_joiner *uw_joiner_new(const struct pr_model *model);
/* Accepts NULL. */
void uw_joiner_free(struct uw_joiner *j);
/* The user frames of a sample of `tid` are s's [first, *nr), ended by
 * *end: forget the kept frames of tid the sample shows have returned;
 * when the stack was cut by the copy and `chain` confirms the kept frames
 * beyond its outermost one, complete it from them (up to max_nr frames
 * in all), updating *nr and *end; keep it when it is complete.  The
 * number of frames added; *refused says a kept frame was the cut one but
 * no chain confirmed the frames beyond it. */
size_t uw_join(struct uw_joiner *j, uint32_t tid, struct uw_stack_regs *s,
	       const struct uw_chain *chain, size_t first, size_t *nr, size_t max_nr,
	       enum pr_stack_end *end, bool *refused);
/* Forget threads the model no longer has, and stacks through files
 * going at this trim (their DSOs are `going`). */
void uw_joiner_trim(struct uw_joiner *j);
/*
 * A stack of `tid` whose outermost frame, s's [*nr - 1], returns into a
 * thread's entry in the C runtime (uw_elf_is_root()): complete it with
 * the frames beyond that frame in the thread's last complete stack, which
 * has the same return address into the root (the frames beyond a root
 * are the same for every stack of the thread).  The
 * frames added (PR_FRAME_JOINED), *end then PR_END_OUTERMOST; 0 when the
 * kept stack has no such frame or they would pass max_nr.
 */
size_t uw_join_root(struct uw_joiner *j, uint32_t tid, struct uw_stack_regs *s, size_t first,
		    size_t *nr, size_t max_nr, enum pr_stack_end *end);

/* ---- chain.c ---- */

/* The user part of sample `s`'s call chain (struct uw_chain, above). */
struct uw_chain uw_user_chain(const struct pr_sample *s);
/* The kernel's depth limit for call chains: `opt` when set; else, `live`,
 * the sysctl; else the kernel's default. */
uint32_t uw_chain_max_stack(uint32_t opt, bool live);
/* The user stack of a sample without a copy: its chain `ch` (nr > 0),
 * after out's frames, out->end set. */
void uw_chain_frames(struct pr_unwinder *u, const struct pr_record *rec,
		     const struct uw_chain *ch, struct pr_stack *out);
/*
 * auto's tail: `out` was unwound from the sample's copy and cut by it
 * (PR_END_TRUNCATED); continue it with the chain `ch`.  The chain entry
 * of out's outermost frame is found by its return address and by where
 * the kernel's walk read it (the walk redone over the copy), the frame
 * before agreeing the same way; from there each entry is taken while the
 * function of the one before keeps its frame pointer there, by its CFI
 * (or is JIT code).  The frames added (PR_FRAME_CHAIN, u->pcs set, u->sps
 * 0), out->end set by how the tail ended; 0 when the chain does not
 * match or vouches for nothing: the stack is left as it was.
 */
size_t uw_chain_tail(struct pr_unwinder *u, const struct pr_record *rec,
		     const struct uw_chain *ch, struct pr_stack *out);
/* Whether `addr` (a frame's, of rec's process) is in a thread's entry in
 * the C runtime (uw_elf_is_root()). */
bool uw_chain_at_root(struct pr_unwinder *u, const struct pr_record *rec, uint64_t addr);

/* ---- pytramp.c ---- */

/*
 * Whether the frame at `ip` (the sampled address when `leaf`, else a
 * return address) with stack pointer `sp`, in anonymous executable
 * mapping `m`, is a copy of CPython's perf trampoline, as the top of
 * pytramp.c says how it is told; then its step in *r (usable, its range
 * [ip, ip + 1)).  Reads the copied stack: c->stack_exhausted set when
 * the word it needed was past the copy.
 */
bool uw_py_trampoline(struct pr_unwinder *u, struct uw_ctx *c, const struct pr_map *m,
		      uint64_t ip, uint64_t sp, bool leaf, struct uw_rule *r);
/* find_proc_info for lookup address `ip` in anonymous executable mapping
 * `m`: a copy of the trampoline (the frame c->frame_ip, c->frame_sp) is
 * given an FDE of its own for the address; else -UNW_ENOINFO. */
int uw_py_proc_info(unw_addr_space_t as, struct uw_ctx *c, const struct pr_map *m,
		    uint64_t ip, unw_proc_info_t *pi, int need_unwind_info);
/*
 * For a chain (chain.c), which has no stack to check against: whether
 * return address `ra`, in anonymous executable mapping `m` of `proc`, is
 * where a copy of the template of a file `proc` maps returns (of a file
 * the unwinder has read already); then 1 when that template keeps rbp as
 * a frame pointer at its call, 0 when it does not (3.12's and 3.13's);
 * -1 when it is no copy.
 */
int uw_py_keeps_fp(struct pr_unwinder *u, const struct pr_proc *proc, const struct pr_map *m,
		   uint64_t ra);

/* ---- leafexit.c ---- */

/*
 * The step out of the sampled frame at `ip` (c->regs, c->sp) worked out
 * from its code, for a frame in its epilogue: decoded to its ret or its
 * tail call, through pops and instructions that leave the callee-saved
 * registers alone.  True with the step in *out; false when the code is
 * not such a way out (or not one this decodes).
 */
bool uw_leaf_exit(struct uw_ctx *c, uint64_t ip, struct uw_row *out);

/* ---- onefde.c ---- */

/*
 * find_proc_info's answer for lookup address `ip` from a step the
 * unwinder worked out (rule `r`: usable, its CFA from rsp or rbp, the
 * return address at the CFA, rbp at the CFA or unchanged): an FDE of its
 * own for the address.  `guessed`: a guess that knows nothing of the
 * other callee-saved registers, left undefined.
 */
int uw_one_fde_proc_info(unw_addr_space_t as, struct uw_ctx *c, const struct uw_rule *r,
			 bool guessed, uint64_t ip, unw_proc_info_t *pi, int need_unwind_info);
/* The same for a step given as a row. */
int uw_one_fde_row_proc_info(unw_addr_space_t as, struct uw_ctx *c, const struct uw_row *row,
			     uint64_t ip, unw_proc_info_t *pi, int need_unwind_info);
/* Read from that FDE's image: 0, or -1 when `addr` is not in it. */
int uw_one_fde_read(struct pr_unwinder *u, uint64_t addr, uint64_t *val);

/* ---- unwinder.c ---- */

/* Where libunwind reads the FDE built for one address (onefde.c): past
 * the built tables' range (UW_SYNTHETIC_BASE), at no address a process
 * has. */
#define UW_ONE_FDE_ADDR UINT64_C(0x5000000000000000)
#define UW_ONE_FDE_SIZE 160

/* The kernel's part of a call chain is capped at perf_event_max_stack. */
#define UW_MAX_KERNEL_FRAMES 512
/* The fast path's cache of frames by address, direct-mapped: it starts
 * small and doubles, up to 2^MAX entries of half a cache line each, while
 * it keeps missing (a large program has tens of thousands of return
 * addresses: a compiler's run, 29 000). */
#define UW_FRAME_CACHE_MIN_BITS 12
#define UW_FRAME_CACHE_MAX_BITS 16
/* The mappings its entries are in, each kept once (struct uw_frame_map):
 * at this many, the cache and they are emptied, so that an agent's
 * processes coming and going do not grow them. */
#define UW_FRAME_MAPS_MAX 16384

struct uw_synth;
struct uw_frame_info;
struct uw_frame_map;

/* The unwinder, shared by unwinder.c (its files, address spaces and the
 * libunwind step loop) and fastpath.c (the compiled rules' frame cache). */
struct pr_unwinder {
	struct pr_model *model;
	struct pr_logger lg;
	uint32_t max_depth;
	uint32_t chain_max_stack;  /* uw_chain_max_stack() */
	bool live, frame_pointers;
	struct pr_elfcache *files; /* the model's */

	struct pr_hashmap by_dso;  /* struct pr_dso * -> uw_elf, or &missing */
	struct pr_hashmap by_img;  /* struct pr_elf * -> uw_elf */

	struct pr_hashmap procs;   /* pid -> struct uw_proc */
	struct pr_hashmap jits;    /* pid -> struct uw_jit (jitcfi.c) */
	uint64_t tick;

	struct uw_synth *synth;    /* tables built for files without a header */
	size_t nr_synth;

	bool rule_cache;
	struct uw_frame_info *frame_cache;
	unsigned frame_cache_bits;
	uint64_t frame_fills;       /* misses since the cache last grew */
	/* The mappings the cache's entries name by index (fastpath.c);
	 * index 0 is none. */
	struct uw_frame_map *frame_maps;
	size_t nr_frame_maps, cap_frame_maps;
	struct pr_hashmap frame_map_ids; /* the mapping's hash -> index */

	struct pr_model_user user; /* told what a trim evicts */

	struct uw_joiner *joiner;  /* NULL: no_join */

	struct pr_frame frames[UW_MAX_KERNEL_FRAMES + PR_UNWIND_MAX_DEPTH];
	/* For each user frame: where it was found (uw_stack_regs). */
	uint64_t pcs[UW_MAX_KERNEL_FRAMES + PR_UNWIND_MAX_DEPTH];
	uint64_t sps[UW_MAX_KERNEL_FRAMES + PR_UNWIND_MAX_DEPTH];
	struct pr_unwind_stats stats;
	uint64_t stack_used;       /* of the last sample's copy */
	/* The FDE built for one address (onefde.c), at UW_ONE_FDE_ADDR. */
	unsigned char one_fde[UW_ONE_FDE_SIZE];
	size_t one_fde_size;
};

/* Mappings perf shows addresses in as they are, not as file offsets:
 * anonymous memory and the like (its is_anon_memory() and
 * is_no_dso_memory() names). */
bool uw_shown_as_address(const char *path);
/* What to add to an address in mapping `m` to show it as perf does. */
uint64_t uw_dso_delta(const struct pr_map *m);
/* Frame `f` of `proc` in mapping `m` (or none), whose addresses perf
 * shows `delta` (uw_dso_delta()) away.  Inline: once per frame. */
static inline void uw_place_in(struct pr_frame *f, const struct pr_proc *proc,
			       const struct pr_map *m, uint64_t delta)
{
	f->proc_serial = proc ? proc->serial : 0;
	f->dso = m ? m->dso : NULL;
	f->dso_ip = f->ip + delta;
	f->map_start = m ? m->start : 0;
	f->map_end = m ? m->end : 0;
	f->map_pgoff = m ? m->pgoff : 0;
}

/* Frame `f` of `proc` at f->ip, placed in its mapping. */
void uw_place(struct pr_frame *f, const struct pr_proc *proc);

/* ---- fastpath.c ---- */

/* A frame cache of 2^bits empty entries; NULL when out of memory.  Freed
 * with uw_frame_cache_free() and the same bits (NULL: nothing). */
struct uw_frame_info *uw_frame_cache_new(unsigned bits);
void uw_frame_cache_free(struct uw_frame_info *fc, unsigned bits);
/* The mappings the frame cache's entries are in (at exit). */
void uw_frame_maps_free(struct pr_unwinder *u);
/*
 * Unwind the user stack from compiled rules, exactly as libunwind would
 * (the same tables, the same reads, the same ends).  true when done;
 * false at the first frame the rules do not model, for libunwind to
 * unwind the sample from the start.
 */
bool uw_fast_frames(struct pr_unwinder *u, struct uw_ctx *c, struct pr_stack *out);

/* libunwind's table lookup, exported but not declared by its headers. */
extern int UNW_OBJ(dwarf_search_unwind_table)(unw_addr_space_t as, unw_word_t ip,
					      unw_dyn_info_t *di, unw_proc_info_t *pi,
					      int need_unwind_info, void *arg);
#define dwarf_search_unwind_table UNW_OBJ(dwarf_search_unwind_table)

/* ---- jitcfi.c: JIT code's unwind information from its jitdump ---- */

struct pr_jitdump;
struct jd_code;
/* find_proc_info for `ip` in JIT code (anonymous executable memory): from
 * the unwind information of the process's jitdump, setting c->jit and
 * c->jit_code; -UNW_ENOINFO without. */
int uw_jit_proc_info(struct uw_ctx *c, unw_addr_space_t as, uint64_t ip,
		     unw_proc_info_t *pi, int need_unwind_info);
/* Read the code or unwind information of c->jit_code as the runtime laid
 * them out: 0, or -1 when `addr` is not in them. */
int uw_jit_read(struct uw_ctx *c, uint64_t addr, uint64_t *val);
void uw_jits_free(struct pr_unwinder *u);
/* The jitdumps of processes the model no longer has (or whose pid a new
 * process took) dropped: at a trim. */
void uw_jits_trim(struct pr_unwinder *u);
/* The bytes of the jitdumps read that are held (pr_unwind_stats). */
uint64_t uw_jits_bytes(const struct pr_unwinder *u);

/* ---- unwinder.c (for the accessors) ---- */

/* The unwinder's state of file `img`, its unwind table found; NULL when
 * out of memory. */
struct uw_elf *uw_elf_new(struct pr_elf *img, const struct pr_logger *lg);
/* Accepts NULL. */
void uw_elf_free(struct uw_elf *e);

/* The ELF file mapping `m` of process `pid`, or NULL when it cannot be
 * found; looked up once per mapped file. */
struct uw_elf *uw_resolve(struct pr_unwinder *u, uint32_t pid, const struct pr_map *m);

/* The ELF file mapping `m` if uw_resolve() has found it already, else
 * NULL (nothing is looked for). */
struct uw_elf *uw_resolved(struct pr_unwinder *u, const struct pr_map *m);

/* e->dbg, loaded the first time it is asked for; NULL when the file has
 * no .debug_frame, here or in a debug file. */
const struct uw_cfi_table *uw_debug_frame(struct pr_unwinder *u, struct uw_elf *e);

/* Where libunwind reads a built table `t` at load bias `bias`: its address
 * in the unwinder's synthetic range; NULL when out of memory. */
const unsigned char *uw_synthetic(struct pr_unwinder *u, const struct uw_cfi_table *t,
				  uint64_t bias, uint64_t *addr, size_t *frames_at);
/* Read from the synthetic range: 0, or -1 when `addr` is not in it. */
int uw_synthetic_read(struct pr_unwinder *u, uint64_t addr, uint64_t *val);

/* Addresses no process can have (non-canonical on x86-64) hold the
 * tables built for files without .eh_frame_hdr. */
#define UW_SYNTHETIC_BASE UINT64_C(0x4000000000000000)
#define UW_SYNTHETIC_SHIFT 32

#endif
