/* SPDX-License-Identifier: Apache-2.0 */
#include "tclib.h"

unsigned long tc_lib_step(unsigned long x)
{
	for (int i = 0; i < 64; i++)
		x = (x << 7 | x >> 57) * 0x100000001b3ul + (unsigned long)i;
	return x;
}
