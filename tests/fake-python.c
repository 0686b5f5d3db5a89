/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Made-up files for test-pyruntime.c, built in several forms by
 * tests/meson.build: CPython's two entry points (CPYTHON), its version
 * as the value of Py_Version (PY_HEX) or only as a string (PY_STRING),
 * as a shared library or an executable (AS_EXE) that waits to be looked
 * at.  None of them is CPython; only the symbols and strings say so.
 */
#include <unistd.h>

#ifdef PY_HEX
const unsigned long Py_Version = PY_HEX;
#endif
#ifdef PY_STRING
#ifndef PY_DECOY
#define PY_DECOY "-"
#endif
/* A string of its own, as PY_VERSION is in CPython's .rodata, after
 * another version-like one (PY_DECOY), if given. */
const char fake_version[] = "\0" PY_DECOY "\0" PY_STRING;
#endif

#ifdef CPYTHON
void Py_Initialize(void);
int PyEval_EvalCode(const void *code);

void Py_Initialize(void)
{
}

int PyEval_EvalCode(const void *code)
{
	return code != 0;
}
#endif

#ifdef AS_EXE
int main(void)
{
	pause();
	return 0;
}
#endif
