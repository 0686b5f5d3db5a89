/* SPDX-License-Identifier: Apache-2.0 */
/*
 * For bench/epilogue-stacks.sh: small functions called in a loop, so that
 * a good share of samples land in an epilogue, past its pops.
 * usage: epilogue-workload [SECONDS of CPU]
 */
#include <stdlib.h>
#include <time.h>

__attribute__((noinline)) long tiny(long a, long b)
{
	long r = a * 3 + b;

	__asm__ volatile("" : "+r"(r));
	return r ^ (a >> 3);
}

__attribute__((noinline)) long mid(long a)
{
	long s = 0;

	for (int i = 0; i < 8; i++)
		s += tiny(a + i, s);
	return s;
}

int main(int argc, char **argv)
{
	double secs = argc > 1 ? atof(argv[1]) : 2;
	clock_t end = clock() + (clock_t)(secs * CLOCKS_PER_SEC);
	long s = 0;

	while (clock() < end)
		for (int i = 0; i < 100000; i++)
			s += mid(i);
	return (int)(s & 1);
}
