/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Call-frame information at its edges, for test-cfi.c: each function is
 * never run, only described, and the test builds stacks through it by
 * hand.  cfi_* labels mark the addresses samples are placed at.
 */
	.text

/* A leaf: CFA = rsp + 8 all along. */
	.globl cfi_leaf
	.type cfi_leaf, @function
cfi_leaf:
	.cfi_startproc
	nop
	ret
	.cfi_endproc
	.size cfi_leaf, .-cfi_leaf

/* The outermost caller: the return address it leaves is cfi_top_ret,
 * and its own return address is undefined. */
	.globl cfi_top, cfi_top_ret
	.type cfi_top, @function
cfi_top:
	.cfi_startproc
	.cfi_undefined rip
	call cfi_leaf
cfi_top_ret:
	nop
	ret
	.cfi_endproc
	.size cfi_top, .-cfi_top

/* An outermost caller with 72 return addresses, one a byte: a stack
 * holding cfi_tops + 1 + w in word w tells by its second frame which
 * word a row took the return address from. */
	.globl cfi_tops
	.type cfi_tops, @function
cfi_tops:
	.cfi_startproc
	.cfi_undefined rip
	.fill 72, 1, 0x90
	ret
	.cfi_endproc
	.size cfi_tops, .-cfi_tops

/* A row begins exactly at the return address: the caller's row is the
 * one before it (looked up at the return address minus one). */
	.globl cfi_rowat, cfi_rowat_ret
	.type cfi_rowat, @function
cfi_rowat:
	.cfi_startproc
	push %rbx
	.cfi_def_cfa_offset 16
	call cfi_leaf
cfi_rowat_ret:
	.cfi_def_cfa_offset 32
	nop
	pop %rbx
	ret
	.cfi_endproc
	.size cfi_rowat, .-cfi_rowat

/* A leaf at a DW_CFA_restore_state row. */
	.globl cfi_restore, cfi_restore_at
	.type cfi_restore, @function
cfi_restore:
	.cfi_startproc
	push %rbx
	.cfi_def_cfa_offset 16
	.cfi_remember_state
	pop %rbx
	.cfi_def_cfa_offset 8
	ret
cfi_restore_at:
	.cfi_restore_state
	nop
	pop %rbx
	.cfi_def_cfa_offset 8
	ret
	.cfi_endproc
	.size cfi_restore, .-cfi_restore

/* DW_CFA_val_offset rbx (which libunwind 1.6 does not know). */
	.globl cfi_valoff, cfi_valoff_at
	.type cfi_valoff, @function
cfi_valoff:
	.cfi_startproc
	push %rbx
	.cfi_escape 0x14, 0x03, 0x02
	.cfi_def_cfa_offset 16
cfi_valoff_at:
	nop
	pop %rbx
	ret
	.cfi_endproc
	.size cfi_valoff, .-cfi_valoff

/* DW_CFA_expression rbx: DW_OP_lit0; DW_OP_deref, unreadable. */
	.globl cfi_expr, cfi_expr_at
	.type cfi_expr, @function
cfi_expr:
	.cfi_startproc
	push %rbx
	.cfi_def_cfa_offset 16
	.cfi_escape 0x10, 0x03, 0x02, 0x30, 0x06
cfi_expr_at:
	nop
	pop %rbx
	ret
	.cfi_endproc
	.size cfi_expr, .-cfi_expr

/* Two entries of a lazy-binding PLT, as GNU ld describes .plt: CFA =
 * rsp + 8, and rsp + 16 from byte 11 of each 16-byte entry on (after the
 * entry's push):  DW_CFA_def_cfa_expression: DW_OP_breg7 8; DW_OP_breg16
 * 0; DW_OP_lit15; DW_OP_and; DW_OP_lit11; DW_OP_ge; DW_OP_lit3;
 * DW_OP_shl; DW_OP_plus. */
	.globl cfi_plt, cfi_plt_early, cfi_plt_late
	.p2align 4
	.type cfi_plt, @function
cfi_plt:
	.cfi_startproc
	.cfi_escape 0x0f, 0x0b, 0x77, 0x08, 0x80, 0x00, 0x3f, 0x1a, 0x3b, 0x2a, 0x33, 0x24, 0x22
	nop
	nop
	nop
	nop
cfi_plt_early:
	.fill 12, 1, 0x90
	.fill 12, 1, 0x90
cfi_plt_late:
	.fill 4, 1, 0x90
	.cfi_endproc
	.size cfi_plt, .-cfi_plt

/* The PLT's expression, then an offset, which DWARF gives no meaning for
 * a CFA that is an expression (libunwind keeps the expression). */
	.globl cfi_pltoff, cfi_pltoff_at
	.p2align 4
	.type cfi_pltoff, @function
cfi_pltoff:
	.cfi_startproc
	.cfi_escape 0x0f, 0x0b, 0x77, 0x08, 0x80, 0x00, 0x3f, 0x1a, 0x3b, 0x2a, 0x33, 0x24, 0x22
	nop
	.cfi_escape 0x0e, 0x20
	nop
	nop
	nop
cfi_pltoff_at:
	.fill 12, 1, 0x90
	.cfi_endproc
	.size cfi_pltoff, .-cfi_pltoff

/* A call that does not return, at the very end: its return address is
 * the first instruction of the next function. */
	.globl cfi_noreturn, cfi_entry
	.type cfi_noreturn, @function
cfi_noreturn:
	.cfi_startproc
	push %rbx
	.cfi_def_cfa_offset 16
	call cfi_leaf
	.cfi_endproc
	.size cfi_noreturn, .-cfi_noreturn
	.type cfi_entry, @function
cfi_entry:
	.cfi_startproc
	nop
	ret
	.cfi_endproc
	.size cfi_entry, .-cfi_entry

/* rbp undefined, the return address defined: the end of the chain for
 * the x86-64 ABI (and libunwind). */
	.globl cfi_rbpundef, cfi_rbpundef_at
	.type cfi_rbpundef, @function
cfi_rbpundef:
	.cfi_startproc
	.cfi_undefined rbp
cfi_rbpundef_at:
	nop
	ret
	.cfi_endproc
	.size cfi_rbpundef, .-cfi_rbpundef

/* Code without CFI (as a library's .fini: sub $8,%rsp; add $8,%rsp;
 * ret), called by cfi_fp, which keeps rbp as its frame pointer under 32
 * bytes of its own, called by cfi_framed, whose CFA counts from rsp. */
	.globl cfi_nocfi, cfi_fp, cfi_fp_ret, cfi_framed, cfi_framed_ret
	.p2align 4
	.type cfi_nocfi, @function
cfi_nocfi:
	sub $8, %rsp
	add $8, %rsp
	ret
	.size cfi_nocfi, .-cfi_nocfi
	.type cfi_fp, @function
cfi_fp:
	.cfi_startproc
	push %rbp
	.cfi_def_cfa_offset 16
	.cfi_offset rbp, -16
	mov %rsp, %rbp
	.cfi_def_cfa_register rbp
	sub $32, %rsp
	call cfi_nocfi
cfi_fp_ret:
	leave
	.cfi_def_cfa rsp, 8
	ret
	.cfi_endproc
	.size cfi_fp, .-cfi_fp
	.type cfi_framed, @function
cfi_framed:
	.cfi_startproc
	sub $24, %rsp
	.cfi_def_cfa_offset 32
	call cfi_fp
cfi_framed_ret:
	add $24, %rsp
	.cfi_def_cfa_offset 8
	ret
	.cfi_endproc
	.size cfi_framed, .-cfi_framed

/* Epilogues as GCC writes their CFI: each pop moves the CFA, none says
 * the register popped is back, so past `pop %rbp` the row has rbp saved
 * below the stack pointer, where no copy of the stack reaches.  They are
 * sampled there (cfi_epi_*), called from cfi_fp (which keeps rbp as its
 * frame pointer: the step out of it needs rbp), each on its way out by
 * a ret, a jump to a ret and a tail call, an indirect tail call.
 * cfi_epi_clobber and cfi_epi_clobber_ebx write rbx (bh, ebx) past its
 * pop, as no epilogue does; cfi_epi_stack its return address. */
	.globl cfi_epi, cfi_epi_mov, cfi_epi_ret, cfi_epi_tail_at, cfi_epi_ind_at
	.globl cfi_epi_clobber_at, cfi_epi_clobber_ebx_at, cfi_epi_stack_at, cfi_thunk_at
	.p2align 4
	.type cfi_epi, @function
cfi_epi:
	.cfi_startproc
	push %r12
	.cfi_def_cfa_offset 16
	.cfi_offset r12, -16
	push %rbp
	.cfi_def_cfa_offset 24
	.cfi_offset rbp, -24
	push %rbx
	.cfi_def_cfa_offset 32
	.cfi_offset rbx, -32
	sub $16, %rsp
	.cfi_def_cfa_offset 48
	nop
	add $16, %rsp
	.cfi_def_cfa_offset 32
	pop %rbx
	.cfi_def_cfa_offset 24
	pop %rbp
	.cfi_def_cfa_offset 16
cfi_epi_mov:
	lea (%rax,%rdx), %eax
	mov %rax, 8(%rdi)
	test %eax, %eax
	movzbl %al, %eax
	vzeroupper
	pop %r12
	.cfi_def_cfa_offset 8
cfi_epi_ret:
	ret
	.cfi_endproc
	.size cfi_epi, .-cfi_epi

	.type cfi_epi_tail, @function
cfi_epi_tail:
	.cfi_startproc
	push %rbp
	.cfi_def_cfa_offset 16
	.cfi_offset rbp, -16
	push %rbx
	.cfi_def_cfa_offset 24
	.cfi_offset rbx, -24
	pop %rbx
	.cfi_def_cfa_offset 16
	pop %rbp
	.cfi_def_cfa_offset 8
cfi_epi_tail_at:
	xor %eax, %eax
	jmp .Lepi_tail_jmp
	nop
.Lepi_tail_jmp:
	jmp cfi_leaf
	.cfi_endproc
	.size cfi_epi_tail, .-cfi_epi_tail

	.type cfi_epi_ind, @function
cfi_epi_ind:
	.cfi_startproc
	push %rbp
	.cfi_def_cfa_offset 16
	.cfi_offset rbp, -16
	pop %rbp
	.cfi_def_cfa_offset 8
cfi_epi_ind_at:
	jmp *%rcx
	.cfi_endproc
	.size cfi_epi_ind, .-cfi_epi_ind

/* A ret that is no return, as a retpoline thunk's (its CFI says the
 * return address is a word further up): never stepped as one. */
	.type cfi_thunk, @function
cfi_thunk:
	.cfi_startproc
	sub $8, %rsp
	.cfi_def_cfa_offset 16
cfi_thunk_at:
	ret
	.cfi_endproc
	.size cfi_thunk, .-cfi_thunk

/* (pushes r12 and rbp, pops rbp, then \insn before popping r12) */
.macro clobber name, at, insn:vararg
	.type \name, @function
\name:
	.cfi_startproc
	push %r12
	.cfi_def_cfa_offset 16
	.cfi_offset r12, -16
	push %rbp
	.cfi_def_cfa_offset 24
	.cfi_offset rbp, -24
	pop %rbp
	.cfi_def_cfa_offset 16
\at:
	\insn
	pop %r12
	.cfi_def_cfa_offset 8
	ret
	.cfi_endproc
	.size \name, .-\name
.endm
	clobber cfi_epi_clobber, cfi_epi_clobber_at, mov %al, %bh
	clobber cfi_epi_clobber_ebx, cfi_epi_clobber_ebx_at, mov %eax, %ebx

	.type cfi_epi_stack, @function
cfi_epi_stack:
	.cfi_startproc
	push %rbp
	.cfi_def_cfa_offset 16
	.cfi_offset rbp, -16
	pop %rbp
	.cfi_def_cfa_offset 8
cfi_epi_stack_at:
	mov %rax, (%rsp)
	ret
	.cfi_endproc
	.size cfi_epi_stack, .-cfi_epi_stack

/* Functions whose FDEs are written out below, by hand. */
	.p2align 4
	.globl cfi_past, cfi_past_at, cfi_after
	.type cfi_past, @function
cfi_past:
	push %rbx
cfi_past_at:
	nop
	pop %rbx
	ret
	.p2align 4
cfi_past_end:
	.size cfi_past, .-cfi_past
	.type cfi_after, @function
cfi_after:
	.cfi_startproc
	nop
	ret
	.cfi_endproc
	.size cfi_after, .-cfi_after

	.p2align 4
	.globl cfi_augb, cfi_augb_at
	.type cfi_augb, @function
cfi_augb:
	push %rbx
cfi_augb_at:
	nop
	pop %rbx
	ret
	.p2align 4
cfi_augb_end:
	.size cfi_augb, .-cfi_augb

	.globl cfi_auglong, cfi_auglong_at
	.type cfi_auglong, @function
cfi_auglong:
	push %rbx
cfi_auglong_at:
	nop
	pop %rbx
	ret
	.p2align 4
cfi_auglong_end:
	.size cfi_auglong, .-cfi_auglong

	.section .eh_frame,"a",@progbits
/* An FDE whose last advance runs far past the function's end. */
.Lcie_past:
	.long .Lcie_past_end - .Lcie_past_id
.Lcie_past_id:
	.long 0
	.byte 1
	.asciz "zR"
	.uleb128 1
	.sleb128 -8
	.uleb128 16
	.uleb128 1
	.byte 0x1b
	.byte 0x0c, 7, 8, 0x90, 1
	.p2align 3
.Lcie_past_end:
.Lfde_past:
	.long .Lfde_past_end - .Lfde_past_id
.Lfde_past_id:
	.long .Lfde_past_id - .Lcie_past
	.long cfi_past - .
	.long cfi_past_end - cfi_past
	.uleb128 0
	.byte 0x41, 0x0e, 16          /* advance 1; def_cfa_offset 16 */
	.byte 0x03                    /* advance_loc2 0x1000 */
	.short 0x1000
	.byte 0x0e, 8
	.p2align 3
.Lfde_past_end:

/* A CIE "zBR": libunwind stops reading the augmentation at 'B'. */
.Lcie_b:
	.long .Lcie_b_end - .Lcie_b_id
.Lcie_b_id:
	.long 0
	.byte 1
	.asciz "zBR"
	.uleb128 1
	.sleb128 -8
	.uleb128 16
	.uleb128 1
	.byte 0x1b
	.byte 0x0c, 7, 8, 0x90, 1
	.p2align 3
.Lcie_b_end:
.Lfde_b:
	.long .Lfde_b_end - .Lfde_b_id
.Lfde_b_id:
	.long .Lfde_b_id - .Lcie_b
	.long cfi_augb - .
	.long cfi_augb_end - cfi_augb
	.uleb128 0
	.byte 0x41, 0x0e, 16
	.p2align 3
.Lfde_b_end:

/* A CIE whose augmentation data is longer than 'R' reads: libunwind
 * takes the rest for instructions (here DW_CFA_undefined rbp). */
.Lcie_long:
	.long .Lcie_long_end - .Lcie_long_id
.Lcie_long_id:
	.long 0
	.byte 1
	.asciz "zR"
	.uleb128 1
	.sleb128 -8
	.uleb128 16
	.uleb128 3
	.byte 0x1b
	.byte 0x07, 0x06
	.byte 0x0c, 7, 8, 0x90, 1
	.p2align 3
.Lcie_long_end:
.Lfde_long:
	.long .Lfde_long_end - .Lfde_long_id
.Lfde_long_id:
	.long .Lfde_long_id - .Lcie_long
	.long cfi_auglong - .
	.long cfi_auglong_end - cfi_auglong
	.uleb128 0
	.byte 0x41, 0x0e, 16
	.p2align 3
.Lfde_long_end:

	.section .note.GNU-stack,"",@progbits
