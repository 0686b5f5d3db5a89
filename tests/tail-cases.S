/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Functions for test-chain-tail.c, never run, only described: callers that
 * keep rbp as their frame pointer (as -fno-omit-frame-pointer builds
 * them), one that keeps none (as -fomit-frame-pointer does), and the
 * outermost caller.  tail_*_ret label each call's return address.
 */
	.text

/* A leaf without a frame of its own: CFA = rsp + 8 all along. */
	.globl tail_leaf
	.type tail_leaf, @function
tail_leaf:
	.cfi_startproc
	nop
	nop
	ret
	.cfi_endproc
	.size tail_leaf, .-tail_leaf

/* Callers with frame pointers: CFA = rbp + 16, rbp saved at CFA - 16. */
	.macro fp_caller name
	.globl \name, \name\()_ret
	.type \name, @function
\name:
	.cfi_startproc
	push %rbp
	.cfi_def_cfa_offset 16
	.cfi_offset rbp, -16
	mov %rsp, %rbp
	.cfi_def_cfa_register rbp
	call tail_leaf
\name\()_ret:
	nop
	pop %rbp
	.cfi_def_cfa rsp, 8
	ret
	.cfi_endproc
	.size \name, .-\name
	.endm

	fp_caller tail_fp_a
	fp_caller tail_fp_b
	fp_caller tail_fp_c

/* A caller without a frame pointer: rbx saved, 32 bytes of locals, CFA =
 * rsp + 48; rbp untouched (so a frame-pointer walk through it skips its
 * caller). */
	.globl tail_nofp, tail_nofp_ret
	.type tail_nofp, @function
tail_nofp:
	.cfi_startproc
	push %rbx
	.cfi_def_cfa_offset 16
	.cfi_offset rbx, -16
	sub $32, %rsp
	.cfi_def_cfa_offset 48
	call tail_leaf
tail_nofp_ret:
	add $32, %rsp
	.cfi_def_cfa_offset 16
	pop %rbx
	.cfi_def_cfa_offset 8
	ret
	.cfi_endproc
	.size tail_nofp, .-tail_nofp

/* The outermost caller: its own return address is undefined. */
	.globl tail_top, tail_top_ret
	.type tail_top, @function
tail_top:
	.cfi_startproc
	.cfi_undefined rip
	push %rbp
	.cfi_def_cfa_offset 16
	.cfi_offset rbp, -16
	mov %rsp, %rbp
	.cfi_def_cfa_register rbp
	call tail_leaf
tail_top_ret:
	nop
	pop %rbp
	.cfi_def_cfa rsp, 8
	ret
	.cfi_endproc
	.size tail_top, .-tail_top

	.section .note.GNU-stack, "", @progbits
