/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The PLT names test's fixture (test-plt.c): a program calling libc and
 * an IFUNC of its own through PLT stubs, built by meson with gcc and
 * clang, GNU ld and lld, IBT stubs (.plt.sec) or not, lazy binding or
 * -z now.  The IFUNC's stub is an IRELATIVE relocation, as libc's calls
 * of its own string functions are; free's address is taken too, which
 * gives GNU ld's .plt.got a stub.  test-plt reads the file only.
 *
 * Run with SECONDS, it calls through its stubs until that much time has
 * passed, for test-plt-perf.sh's captures: callees that do next to
 * nothing (abs, free(NULL), the IFUNC), so that a good share of the time
 * is the stubs' own jumps.  Time is looked at every BATCH rounds (the
 * second argument, 100000 by default): at least one batch is run.
 */
#include <stdlib.h>
#include <string.h>
#include <time.h>

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

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static volatile int sink;

static void spin(double seconds, int batch)
{
	double end = now() + seconds;

	do {
		for (int i = 0; i < batch; i++) {
			sink += abs(i) + twice(i);
			free(NULL);
		}
	} while (now() < end);
}

int main(int argc, char **argv)
{
	char buf[64];
	char *p = strdup(argv[0]);
	size_t n = strlen(p);

	memcpy(buf, p, n < sizeof(buf) ? n : sizeof(buf) - 1);
	keep_free(p);
	free(NULL);
	if (argc > 1)
		spin(atof(argv[1]), argc > 2 ? atoi(argv[2]) : 100000);
	return twice(argc) + (int)n;
}
