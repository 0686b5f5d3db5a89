/* SPDX-License-Identifier: Apache-2.0 */
/* The toolchain matrix's shared library (tclib.c). */
#ifndef TCLIB_H
#define TCLIB_H

#ifdef __cplusplus
extern "C" {
#endif

/* A few hundred cycles of arithmetic on x; the workloads call it in their
 * bottom loop, so that part of every run is spent in a shared library. */
unsigned long tc_lib_step(unsigned long x);

#ifdef __cplusplus
}
#endif

#endif
