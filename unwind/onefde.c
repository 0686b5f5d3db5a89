/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Unwind information for one address, made for libunwind where the files
 * have none it can use: a step the unwinder worked out itself (a CPython
 * trampoline's row, pytramp.c; the frame-pointer step out of code without
 * CFI, accessors.c), written as a CIE whose initial instructions are the
 * step and an FDE of [addr, addr + 1), at UW_ONE_FDE_ADDR, where no
 * process has anything.  libunwind then steps the frame as any other
 * described one.  One image at a time: it is built for the step being
 * taken, and libunwind keeps nothing of it from one step to the next
 * (the address spaces cache nothing, unwinder.c).
 */
#include <string.h>

#include "unwind-int.h"

/* x86-64 DWARF registers, and the CFA instructions written here. */
#define DW_RBX 3
#define DW_RBP UW_DWARF_RBP
#define DW_RSP 7
#define DW_R12 12
#define DW_R15 15
#define DW_RA 16
#define DW_CFA_undefined 0x07
#define DW_CFA_def_cfa 0x0c
#define DW_CFA_offset 0x80

static size_t put_uleb(unsigned char *p, uint64_t v)
{
	size_t n = 0;

	do {
		p[n] = (unsigned char)(v & 0x7f);
		v >>= 7;
		p[n] |= v ? 0x80 : 0;
		n++;
	} while (v);
	return n;
}

static void put32(unsigned char *p, uint32_t v)
{
	memcpy(p, &v, 4);
}

/*
 * The image: one index entry (as .eh_frame_hdr's table lays them out), a
 * CIE whose initial instructions are the row, and an FDE of
 * [addr, addr + 1) with absolute addresses (no augmentation), then the
 * terminator.  `guessed`: rbx and r12-r15, which the row does not say
 * where its frame left, are undefined (libunwind's own guesses forget
 * them too), not taken as unchanged.
 */
static size_t build_cfi(unsigned char *img, const struct uw_row *row, bool guessed,
			uint64_t addr)
{
	unsigned char *cie = img + 8, *fde;
	size_t n;                         /* the CIE's instructions from here */
	uint32_t cie_len, fde_len = 4 + 8 + 8;
	uint64_t one = 1;

	memset(img, 0, UW_ONE_FDE_SIZE);
	/* length (later), id 0, version 1, augmentation "", code align 1,
	 * data align -8, return address column */
	cie[8] = 1;
	cie[9] = 0;
	cie[10] = 1;
	cie[11] = 0x78;
	cie[12] = DW_RA;
	n = 13;
	cie[n++] = DW_CFA_def_cfa;
	cie[n++] = row->cfa_reg;
	n += put_uleb(cie + n, (uint64_t)row->cfa_off);
	cie[n++] = DW_CFA_offset | DW_RA;
	n += put_uleb(cie + n, (uint64_t)(-row->ra_off / 8));
	/* Room for the widest row: 16 registers, every offset within a
	 * stack copy (uw_leaf_exit() and the rules give no other). */
	if (row->nr > 16 || row->cfa_off < 0 || row->cfa_off > PR_MAX_STACK_SIZE + 8)
		return 0;
	for (unsigned i = 0; i < row->nr; i++) {
		if (row->at[i].off >= 0 || -row->at[i].off > PR_MAX_STACK_SIZE + 8)
			return 0;
		cie[n++] = (unsigned char)(DW_CFA_offset | row->at[i].reg);
		n += put_uleb(cie + n, (uint64_t)(-row->at[i].off / 8));
	}
	if (guessed) {
		cie[n++] = DW_CFA_undefined;
		cie[n++] = DW_RBX;
		for (unsigned reg = DW_R12; reg <= DW_R15; reg++) {
			cie[n++] = DW_CFA_undefined;
			cie[n++] = (unsigned char)reg;
		}
	}
	n = (n + 3) & ~(size_t)3;         /* DW_CFA_nop to a word */
	cie_len = (uint32_t)(n - 4);
	put32(cie, cie_len);
	put32(cie + 4, 0);
	fde = cie + n;
	put32(fde, fde_len);
	put32(fde + 4, (uint32_t)(fde + 4 - cie));
	memcpy(fde + 8, &addr, 8);
	memcpy(fde + 16, &one, 8);
	/* The index entry: the FDE's offset from the section (segbase). */
	put32(img, 0);
	put32(img + 4, (uint32_t)(fde - cie));
	/* and the terminator, and zeros for a word read at its end */
	return (size_t)(fde + 4 + fde_len - img) + 4 + 8;
}

static int proc_info(unw_addr_space_t as, struct uw_ctx *c, const struct uw_row *row,
		     bool guessed, uint64_t ip, unw_proc_info_t *pi, int need_unwind_info)
{
	unw_dyn_info_t di;

	c->u->one_fde_size = build_cfi(c->u->one_fde, row, guessed, ip);
	if (!c->u->one_fde_size)
		return -UNW_ENOINFO;
	memset(&di, 0, sizeof(di));
	di.start_ip = ip;
	di.end_ip = ip + 1;
	di.format = UNW_INFO_FORMAT_IP_OFFSET;
	di.u.rti.table_data = UW_ONE_FDE_ADDR;
	di.u.rti.table_len = sizeof(struct uw_fde) / sizeof(unw_word_t);
	di.u.rti.segbase = UW_ONE_FDE_ADDR + 8;
	return dwarf_search_unwind_table(as, ip, &di, pi, need_unwind_info, c);
}

int uw_one_fde_proc_info(unw_addr_space_t as, struct uw_ctx *c, const struct uw_rule *r,
			 bool guessed, uint64_t ip, unw_proc_info_t *pi, int need_unwind_info)
{
	struct uw_row row = { .cfa_reg = r->cfa_rbp ? DW_RBP : DW_RSP, .cfa_off = r->cfa_off,
			      .ra_off = r->ra_off };

	if (r->rbp == UW_LOC_AT_CFA)
		row.at[row.nr++] = (typeof(row.at[0])){ .reg = DW_RBP, .off = r->rbp_off };
	return proc_info(as, c, &row, guessed, ip, pi, need_unwind_info);
}

int uw_one_fde_row_proc_info(unw_addr_space_t as, struct uw_ctx *c, const struct uw_row *row,
			     uint64_t ip, unw_proc_info_t *pi, int need_unwind_info)
{
	return proc_info(as, c, row, false, ip, pi, need_unwind_info);
}

int uw_one_fde_read(struct pr_unwinder *u, uint64_t addr, uint64_t *val)
{
	uint64_t off = addr - UW_ONE_FDE_ADDR;

	if (addr < UW_ONE_FDE_ADDR || off > u->one_fde_size || u->one_fde_size - off < 8)
		return -1;
	memcpy(val, u->one_fde + off, 8);
	return 0;
}
