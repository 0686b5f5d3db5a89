/* SPDX-License-Identifier: Apache-2.0 */
/*
 * libunwind's remote accessors over a sample: registers from the sample,
 * memory from its stack snapshot or from the mapped files' read-only bytes
 * (nothing else: the rest of the process is gone), and unwind information
 * from each file's .eh_frame_hdr table, or from the table cfi.c builds.
 * Accessors answer only -UNW_E* codes; what went wrong is noted in the
 * context for the unwinder to classify the stack's end.
 */
#include <string.h>
#include <sys/mman.h>

#include "unwind-int.h"

/* How far past the copied stack a read still counts as "the stack went
 * on": frames are rarely larger. */
#define STACK_SLACK (256 * 1024)

/* Mappings whose bytes we can have: files, and the vDSO (the running
 * kernel's image, or one found by build-id). */
bool uw_has_image(const struct pr_map *m)
{
	const char *path = m->dso ? m->dso->path : "";

	if (path[0] == '/')
		return !uw_shown_as_address(path) && strncmp(path, "/SYSV", 5);
	return !strcmp(path, "[vdso]");
}

/* Search one of our built tables (IP_OFFSET: entries relative to the
 * code's start; FDEs at `segbase` + offset). */
static int search_built(unw_addr_space_t as, struct uw_ctx *c, const struct uw_elf *e,
			const struct uw_cfi_table *t, uint64_t bias, unw_word_t ip,
			unw_proc_info_t *pi, int need_unwind_info)
{
	unw_dyn_info_t di;
	uint64_t addr;
	size_t frames_at;
	int ret;

	if (!uw_synthetic(c->u, t, bias, &addr, &frames_at))
		return -UNW_ENOMEM;
	memset(&di, 0, sizeof(di));
	di.start_ip = e->img->text_lo + bias;
	di.end_ip = e->img->text_hi + bias;
	di.format = UNW_INFO_FORMAT_IP_OFFSET;
	di.u.rti.table_data = addr;
	di.u.rti.table_len = t->nr * sizeof(struct uw_fde) / sizeof(unw_word_t);
	/* .eh_frame is read where it is mapped; converted .debug_frame from
	 * the image. */
	di.u.rti.segbase = t->frames ? addr + frames_at : e->img->eh_frame.vaddr + bias;
	c->reading_cfi = true;
	ret = dwarf_search_unwind_table(as, ip, &di, pi, need_unwind_info, c);
	c->reading_cfi = false;
	return ret;
}

/* How far above a frame's stack pointer its frame pointer may be, as
 * libunwind 1.6 takes one (farther, it ends the stack). */
#define FP_REACH 0x4000

/*
 * Code without unwind information (a file's, JIT code's) is stepped by
 * its frame pointer, as the x86-64 frame keeps it: the return address at
 * rbp + 8, the caller's rbp at rbp, and the caller's stack pointer at
 * rbp + 16.  libunwind 1.6 makes that guess itself, but takes the
 * caller's stack pointer as the frame's own + 16, which is right only
 * where rbp is the stack pointer (right after push %rbp; mov %rsp,%rbp):
 * elsewhere, a caller whose CFI counts from rsp then reads its return
 * address from the wrong word.  (In a process's exit: a library's .fini,
 * which has no CFI, sampled at its first instruction, called from
 * _dl_fini, which keeps rbp as its frame pointer, called from libc's
 * __run_exit_handlers, which does not: its CFA came out 168 bytes too
 * low, and the stack ended in a "return address" on the stack.)  So the
 * guess is given to libunwind as an FDE; what else libunwind does
 * without unwind information is left to it: a PLT stub it recognizes by
 * its code, a frame pointer it does not follow (0, below the stack
 * pointer or more than FP_REACH above it), code it cannot read.
 */
static int fp_proc_info(unw_addr_space_t as, struct uw_ctx *c, uint64_t ip,
			unw_proc_info_t *pi, int need_unwind_info)
{
	struct uw_rule r = { .usable = 1, .cfa_rbp = 1, .cfa_off = 16, .rbp = UW_LOC_AT_CFA,
			     .rbp_off = -16, .ra = UW_LOC_AT_CFA, .ra_off = -8 };
	uint64_t w0, w1;

	if ((ip != c->frame_ip && ip + 1 != c->frame_ip) || !c->frame_bp_known ||
	    c->frame_bp < c->frame_sp || c->frame_bp - c->frame_sp > FP_REACH)
		return -UNW_ENOINFO;
	/* jmp *x(%rip); push $n; jmp: a lazy-binding PLT entry. */
	if (uw_read_mem(c, c->frame_ip, &w0) || uw_read_mem(c, c->frame_ip + 8, &w1) ||
	    ((w0 & 0xffff) == 0x25ff && (w0 >> 48 & 0xff) == 0x68 && (w1 >> 24 & 0xff) == 0xe9))
		return -UNW_ENOINFO;
	return uw_one_fde_proc_info(as, c, &r, true, ip, pi, need_unwind_info);
}

static int find_proc_info(unw_addr_space_t as, unw_word_t ip, unw_proc_info_t *pi,
			  int need_unwind_info, void *arg)
{
	struct uw_ctx *c = arg;
	const struct pr_map *m = pr__proc_find(c->proc, ip);
	const struct uw_cfi_table *dbg;
	struct uw_elf *e;
	uint64_t bias;
	int ret = -UNW_ENOINFO;

	if (c->exit_step && ip == c->regs[PR_REG_IP])
		return uw_one_fde_row_proc_info(as, c, &c->exit, ip, pi, need_unwind_info);
	if (!m || !uw_has_image(m)) {
		/* JIT code whose runtime wrote its unwind information. */
		if (m && (m->prot & PROT_EXEC) &&
		    (ret = uw_jit_proc_info(c, as, ip, pi, need_unwind_info)) != -UNW_ENOINFO)
			return ret;
		/* Anonymous executable memory is JIT code: a CPython
		 * trampoline, or code with frame pointers if anything;
		 * anything else is not code at all. */
		if (m && (m->prot & PROT_EXEC) &&
		    (ret = uw_py_proc_info(as, c, m, ip, pi, need_unwind_info)) != -UNW_ENOINFO)
			return ret;
		c->no_info = true;
		c->no_info_unmapped = true;
		c->not_code = !m || !(m->prot & PROT_EXEC);
		return c->not_code ? -UNW_ENOINFO : fp_proc_info(as, c, ip, pi, need_unwind_info);
	}
	e = uw_resolve(c->u, c->pid, m);
	bias = e ? pr__elf_bias(e->img, m) : 0;
	if (!e || ip < e->img->text_lo + bias || ip >= e->img->text_hi + bias) {
		c->no_info = true;
		c->file_missing = !e;
		c->not_code = !(m->prot & PROT_EXEC);
		return !e || c->not_code ? -UNW_ENOINFO :
					   fp_proc_info(as, c, ip, pi, need_unwind_info);
	}
	c->cfi_elf = e;
	c->cfi_bias = bias;
	if (e->table == UW_TABLE_EH_HDR) {
		unw_dyn_info_t di;

		memset(&di, 0, sizeof(di));
		di.start_ip = e->img->text_lo + bias;
		di.end_ip = e->img->text_hi + bias;
		di.format = UNW_INFO_FORMAT_REMOTE_TABLE;
		di.u.rti.segbase = e->eh_hdr_vaddr + bias;
		di.u.rti.table_data = e->eh_table_vaddr + bias;
		di.u.rti.table_len = e->fde_count * 8 / sizeof(unw_word_t);
		c->reading_cfi = true;
		ret = dwarf_search_unwind_table(as, ip, &di, pi, need_unwind_info, arg);
		c->reading_cfi = false;
	} else if (e->table == UW_TABLE_EH_FRAME) {
		ret = search_built(as, c, e, &e->eh, bias, ip, pi, need_unwind_info);
	}
	/* Code .eh_frame does not describe (hand-written assembly, files
	 * built without unwind tables) may be in .debug_frame. */
	if (ret == -UNW_ENOINFO && (dbg = uw_debug_frame(c->u, e)))
		ret = search_built(as, c, e, dbg, bias, ip, pi, need_unwind_info);
	if (ret == -UNW_ENOINFO) {
		c->no_info = true;
		ret = fp_proc_info(as, c, ip, pi, need_unwind_info);
	}
	return ret;
}

static void put_unwind_info(unw_addr_space_t as, unw_proc_info_t *pi, void *arg)
{
	(void)as;
	(void)pi;
	(void)arg;
}

static int get_dyn_info_list_addr(unw_addr_space_t as, unw_word_t *addr, void *arg)
{
	(void)as;
	(void)addr;
	(void)arg;
	/* No dynamically registered unwind info in a snapshot. */
	return -UNW_ENOINFO;
}

/* The 8 file bytes behind `addr` in mapping `m` of `e`, or NULL: a
 * mapping's offset comes from a record, and may be anything. */
static const unsigned char *file_bytes(const struct pr_elf *e, const struct pr_map *m,
				       uint64_t addr)
{
	uint64_t rel = addr - m->start;

	if (m->pgoff > e->size || rel > e->size - m->pgoff || e->size - m->pgoff - rel < 8)
		return NULL;
	return e->data + m->pgoff + rel;
}

int uw_read_file(struct uw_ctx *c, uint64_t addr, uint64_t *val)
{
	const struct pr_map *m;
	const struct uw_elf *e;
	const unsigned char *p;
	uint64_t covered;

	if (addr >= c->hit_lo && addr + 8 <= c->hit_hi && addr + 8 > addr) {
		memcpy(val, c->hit_data + (addr - c->hit_lo), 8);
		return 0;
	}
	m = pr__proc_find(c->proc, addr);
	if (!m || (m->prot & PROT_WRITE) || !uw_has_image(m))
		return -1;
	e = uw_resolve(c->u, c->pid, m);
	if (!e || !(p = file_bytes(e->img, m, addr)))
		return -1;
	/* Remember the part of this mapping the file covers. */
	covered = e->img->size - m->pgoff;
	c->hit_lo = m->start;
	c->hit_hi = m->start + (covered < m->end - m->start ? covered : m->end - m->start);
	c->hit_data = e->img->data + m->pgoff;
	memcpy(val, p, 8);
	return 0;
}

/*
 * The unwind information of the file this step is in, read from the file
 * whether or not the capture recorded the mapping it lies in (a capture of
 * executable mappings only has no .eh_frame_hdr mapped): the same bytes
 * the compiled rules come from.
 *
 * While libunwind reads a CIE, it also loads the personality routine's
 * address, which GCC's CIEs give indirectly: through a DW.ref.* variable
 * in .data or a GOT entry, writable and relocated at run time, so not in
 * the snapshot.  Remote unwinding never calls the routine; the file's
 * bytes there stand in for it, so that a CIE with a personality (every
 * function with cleanups, much of libc) still unwinds.
 */
static int read_cfi(struct uw_ctx *c, uint64_t addr, uint64_t *val)
{
	if (!c->cfi_elf)
		return -1;
	return pr__elf_read(c->cfi_elf->img, addr - c->cfi_bias, c->reading_cfi, val);
}

/*
 * Code in anonymous executable memory (a JIT's) is not in the capture.
 * libunwind reads code only to recognize a signal trampoline or a PLT
 * stub, which JIT code is neither, and, before following the frame
 * pointer out of code without unwind information, to check that the
 * address it came from is readable -- refused, it would take the frame
 * for a call through a bad pointer and read a return address at the
 * stack pointer instead.  Such reads answer zero.
 */
static int read_jit_code(struct uw_ctx *c, uint64_t addr, uint64_t *val)
{
	const struct pr_map *m = pr__proc_find(c->proc, addr);

	if (!m || !(m->prot & PROT_EXEC) || uw_has_image(m) || m->end - addr < 8)
		return -1;
	*val = 0;
	return 0;
}

int uw_read_mem(struct uw_ctx *c, uint64_t addr, uint64_t *val)
{
	uint64_t top = c->sp + c->stack_size;

	if (uw_read_copy(c, addr, val))
		return 0;
	if (addr >= UW_ONE_FDE_ADDR)
		return uw_one_fde_read(c->u, addr, val);
	if (addr >= UW_SYNTHETIC_BASE)
		return uw_synthetic_read(c->u, addr, val);
	if (!uw_read_file(c, addr, val))
		return 0;
	if (!read_cfi(c, addr, val))
		return 0;
	if (!uw_jit_read(c, addr, val))
		return 0;
	if (!read_jit_code(c, addr, val))
		return 0;
	/* Past the end of the copied stack (or across it), where the stack
	 * would go on. */
	if (addr + 8 > top && addr >= c->sp && (addr < top || addr - top < STACK_SLACK)) {
		c->stack_exhausted = true;
		if (addr - c->sp + 8 > c->stack_read)
			c->stack_read = addr - c->sp + 8;
	}
	return -1;
}

static int access_mem(unw_addr_space_t as, unw_word_t addr, unw_word_t *val,
		      int write, void *arg)
{
	(void)as;
	if (write)
		return -UNW_EINVAL;
	return uw_read_mem(arg, addr, val) ? -UNW_EINVAL : 0;
}

/* libunwind's x86-64 register numbers, as perf numbers them. */
static const int perf_reg_of[] = {
	[UNW_X86_64_RAX] = PR_REG_AX, [UNW_X86_64_RDX] = PR_REG_DX,
	[UNW_X86_64_RCX] = PR_REG_CX, [UNW_X86_64_RBX] = PR_REG_BX,
	[UNW_X86_64_RSI] = PR_REG_SI, [UNW_X86_64_RDI] = PR_REG_DI,
	[UNW_X86_64_RBP] = PR_REG_BP, [UNW_X86_64_RSP] = PR_REG_SP,
	[UNW_X86_64_R8] = PR_REG_R8, [UNW_X86_64_R9] = PR_REG_R9,
	[UNW_X86_64_R10] = PR_REG_R10, [UNW_X86_64_R11] = PR_REG_R11,
	[UNW_X86_64_R12] = PR_REG_R12, [UNW_X86_64_R13] = PR_REG_R13,
	[UNW_X86_64_R14] = PR_REG_R14, [UNW_X86_64_R15] = PR_REG_R15,
	[UNW_X86_64_RIP] = PR_REG_IP,
};

static int access_reg(unw_addr_space_t as, unw_regnum_t reg, unw_word_t *val,
		      int write, void *arg)
{
	struct uw_ctx *c = arg;
	int perf;

	(void)as;
	if (write)
		return -UNW_EREADONLYREG;
	if (reg < 0 || (size_t)reg >= PR_ARRAY_SIZE(perf_reg_of))
		return -UNW_EBADREG;
	perf = perf_reg_of[reg];
	if (!(c->reg_mask >> perf & 1))
		return -UNW_EBADREG;
	*val = c->regs[perf];
	return 0;
}

static int access_fpreg(unw_addr_space_t as, unw_regnum_t reg, unw_fpreg_t *val,
			int write, void *arg)
{
	(void)as;
	(void)reg;
	(void)val;
	(void)write;
	(void)arg;
	return -UNW_EINVAL;
}

static int resume(unw_addr_space_t as, unw_cursor_t *cursor, void *arg)
{
	(void)as;
	(void)cursor;
	(void)arg;
	return -UNW_EINVAL;
}

static int get_proc_name(unw_addr_space_t as, unw_word_t addr, char *buf,
			 size_t len, unw_word_t *offp, void *arg)
{
	(void)as;
	(void)addr;
	(void)buf;
	(void)len;
	(void)offp;
	(void)arg;
	/* Names come from the symbolizer, not from here. */
	return -UNW_ENOINFO;
}

unw_accessors_t uw_accessors = {
	.find_proc_info = find_proc_info,
	.put_unwind_info = put_unwind_info,
	.get_dyn_info_list_addr = get_dyn_info_list_addr,
	.access_mem = access_mem,
	.access_reg = access_reg,
	.access_fpreg = access_fpreg,
	.resume = resume,
	.get_proc_name = get_proc_name,
};
