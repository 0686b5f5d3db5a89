/* SPDX-License-Identifier: Apache-2.0 */
/*
 * A library for test-unwind to call through after deleting or replacing
 * its file: the unwinder must still find the very file mapped.
 */
void ds_unwind_lib_call(void (*fn)(void));

__attribute__((noinline)) void ds_unwind_lib_call(void (*fn)(void))
{
	fn();
	__asm__ volatile("" ::: "memory");
}
