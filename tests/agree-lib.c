/* SPDX-License-Identifier: Apache-2.0 */
/* The library agree-workload dlopens and dlcloses over and over. */
#include <stdint.h>

#define NOINLINE __attribute__((noinline))

uint64_t agree_lib_work(uint64_t x);

NOINLINE static uint64_t lib_leaf(uint64_t x)
{
	for (int i = 0; i < 100000; i++)
		x = (x ^ (x >> 11)) * 0x9e3779b97f4a7c15ull + (uint64_t)i;
	return x;
}

NOINLINE static uint64_t lib_middle(uint64_t x, int n)
{
	for (int i = 0; i < n; i++)
		x += lib_leaf(x + (uint64_t)i);
	return x;
}

NOINLINE uint64_t agree_lib_work(uint64_t x)
{
	return lib_middle(x, 40) + 1;
}
