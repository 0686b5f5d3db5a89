/* SPDX-License-Identifier: Apache-2.0 */
/*
 * CPython in a process (pyruntime.c): the file it runs from, found in
 * the process's mappings and confirmed by its symbols, its version read
 * from that file, and the addresses its symbols have in the process.
 */
#ifndef PR_PYRUNTIME_H
#define PR_PYRUNTIME_H

#include "model/elfcache.h"
#include "prpython.h"

struct pr__python {
	struct pr_python pub;
	struct pr_elf *elf;          /* the file, or NULL */
	uint64_t bias;               /* runtime address = link-time + bias */
};

/*
 * The CPython of process `pid` into *py (its file kept open in py->elf
 * until pr__python_close()): 1, 0 when there is none (pub.unconfirmed
 * may name a look-alike), or a negative errno.  Candidates are the
 * mapped files named libpython* and the executable, whatever its name;
 * one is CPython when it defines Py_Initialize and PyEval_EvalCode.
 */
int pr__python_open(uint32_t pid, struct pr__python *py, const struct pr_logger *lg);
void pr__python_close(struct pr__python *py);

/* The runtime address of symbol `name` of py's file (.dynsym, then
 * .symtab), or 0 when it has none. */
uint64_t pr__python_symbol(const struct pr__python *py, const char *name);

/*
 * Whether the ELF file `e` is CPython (defines Py_Initialize and
 * PyEval_EvalCode), and its version into *major, *minor, *micro: the
 * value of Py_Version, else a NUL-terminated "3.N.M" string it carries
 * (the one whose 3.N its `name`, a file name, has when it has one).
 * False when it is not CPython, or no version was found.
 */
bool pr__python_file(const struct pr_elf *e, const char *name, unsigned *major,
		     unsigned *minor, unsigned *micro);

#endif
