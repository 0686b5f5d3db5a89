/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The PLT names test's fixture (test-plt.c): a program calling libc and
 * an IFUNC of its own through PLT stubs, built by meson with gcc and
 * clang, GNU ld and lld, IBT stubs (.plt.sec) or not, lazy binding or
 * -z now.  The IFUNC's stub is an IRELATIVE relocation, as libc's calls
 * of its own string functions are; free's address is taken too, which
 * gives GNU ld's .plt.got a stub.  Never run: only its file is read.
 */
#include <stdlib.h>
#include <string.h>

static int twice_plain(int x)
{
	return 2 * x;
}

/* The resolver's address is the IRELATIVE relocation's addend. */
static int (*resolve_twice(void))(int)
{
	return twice_plain;
}

int twice(int x) __attribute__((ifunc("resolve_twice")));

void (*volatile keep_free)(void *) = free;

int main(int argc, char **argv)
{
	char buf[64];
	char *p = strdup(argv[0]);
	size_t n = strlen(p);

	memcpy(buf, p, n < sizeof(buf) ? n : sizeof(buf) - 1);
	keep_free(p);
	free(NULL);
	return twice(argc) + (int)n;
}
