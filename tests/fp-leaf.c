/* SPDX-License-Identifier: Apache-2.0 */
/*
 * fp-workload's leaf, built -O2 -fno-omit-frame-pointer
 * -momit-leaf-frame-pointer: a function that calls nothing keeps no frame
 * of its own, so while it runs rbp is its caller's frame pointer and the
 * kernel's frame-pointer walk skips its caller (see fp-workload.c).
 */
#include <stdint.h>

uint64_t fp_leaf(uint64_t x)
{
	for (int i = 0; i < 2000000; i++)
		x = x * 6364136223846793005u + (uint64_t)i;
	return x;
}
