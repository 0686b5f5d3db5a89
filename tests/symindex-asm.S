/* SPDX-License-Identifier: Apache-2.0 */
/*
 * test-symindex's assembly: GNU as describes each function symbol as a
 * DW_TAG_subprogram of its own, so that aliases share a range and a
 * function declared inside another overlaps it, or two overlap in part.  libdw's path takes the
 * last of the smallest that hold an address (symdwarf.c, last_alias());
 * the index must too.
 */
	.text
	.globl	first
	.type	first, @function
	.globl	first_alias
	.type	first_alias, @function
first:
first_alias:
	nop
	nop
	ret
	.size	first, .-first
	.size	first_alias, .-first_alias

	.globl	outer
	.type	outer, @function
outer:
	nop
	nop
	.globl	inner
	.type	inner, @function
inner:
	nop
	nop
	ret
	.size	inner, .-inner
	nop
	ret
	.size	outer, .-outer

	/* Two that overlap in part: the smaller holds their common bytes,
	 * though the larger starts later. */
	.globl	early
	.type	early, @function
early:
	nop
	nop
	.globl	late
	.type	late, @function
late:
	nop
	nop
	nop
	nop
	.size	early, .-early
	nop
	nop
	nop
	nop
	nop
	ret
	.size	late, .-late
	.section .note.GNU-stack,"",@progbits
