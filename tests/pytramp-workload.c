/* SPDX-License-Identifier: Apache-2.0 */
/*
 * A stand-in for CPython's perf trampolines, for test-pytramp.sh: a
 * template between the symbols _Py_trampoline_func_start and
 * _Py_trampoline_func_end, copied into an anonymous mapping made
 * executable, one copy per "function" (here: per recursion level), each
 * named in /tmp/perf-PID.map; every level of eval() is called through its
 * copy, as CPython calls each Python function's evaluation.
 *
 * Built four ways (TEMPLATE):
 *   1  endbr64; sub $8,%rsp; call *%rcx; add $8,%rsp; ret -- CPython
 *      3.12 and 3.13 built with CET; copies every 16 bytes (3.13)
 *   2  the same without endbr64, copies end to end (11 bytes, as 3.12
 *      lays them out)
 *   3  endbr64; push %rbp; mov %rsp,%rbp; call *%rcx; pop %rbp; ret --
 *      a template keeping a frame pointer; copies every 16 bytes
 *   4  endbr64; sub $24,%rsp; ... -- no template the unwinder knows, to
 *      be refused (the stack ends at the innermost copy)
 *
 * usage: pytramp-workload ROUNDS
 * Prints its pid; leaves the map for the test to remove.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#define DEPTH 8
#define ARENA (64 * 1024)

#if TEMPLATE == 1
#define BODY "endbr64\n sub $8, %rsp\n call *%rcx\n add $8, %rsp\n ret\n"
#define STRIDE(n) (((n) + 15) & ~(size_t)15)
#elif TEMPLATE == 2
#define BODY "sub $8, %rsp\n call *%rcx\n add $8, %rsp\n ret\n"
#define STRIDE(n) (n)
#elif TEMPLATE == 3
#define BODY "endbr64\n push %rbp\n mov %rsp, %rbp\n call *%rcx\n pop %rbp\n ret\n"
#define STRIDE(n) (((n) + 15) & ~(size_t)15)
#else
#define BODY "endbr64\n sub $24, %rsp\n call *%rcx\n add $24, %rsp\n ret\n"
#define STRIDE(n) (((n) + 15) & ~(size_t)15)
#endif

__asm__(".text\n"
	".globl _Py_trampoline_func_start\n"
	"_Py_trampoline_func_start:\n " BODY
	".globl _Py_trampoline_func_end\n"
	"_Py_trampoline_func_end:\n");

extern const unsigned char _Py_trampoline_func_start[], _Py_trampoline_func_end[];

typedef long (*evaluator)(long level, long work, int flag);
typedef long (*trampoline)(long level, long work, int flag, evaluator eval);

static unsigned char *arena;
static size_t stride;
static volatile long sink;

static long eval(long level, long work, int flag);

static long __attribute__((noinline)) spin(long work)
{
	for (long i = 0; i < work; i++)
		sink += i;
	return sink;
}

/* Each level through its copy of the template; the +1 and -1 keep the
 * calls from becoming jumps. */
static long __attribute__((noinline)) eval(long level, long work, int flag)
{
	unsigned char *code = arena + (size_t)(level + 1) * stride;
	trampoline next;

	/* POSIX's way from code bytes to a function pointer (as dlsym). */
	memcpy(&next, &code, sizeof(next));

	if (level == DEPTH)
		return spin(work) - 1;
	return next(level + 1, work, flag, eval) + 1;
}

int main(int argc, char **argv)
{
	size_t size = (size_t)(_Py_trampoline_func_end - _Py_trampoline_func_start);
	long rounds = argc > 1 ? atol(argv[1]) : 100;
	char path[64];
	FILE *map;

	stride = STRIDE(size);
	arena = mmap(NULL, ARENA, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (arena == MAP_FAILED)
		return 1;
	for (size_t i = 0; i + size <= ARENA; i += stride)
		memcpy(arena + i, _Py_trampoline_func_start, size);
	if (mprotect(arena, ARENA, PROT_READ | PROT_EXEC))
		return 1;
	snprintf(path, sizeof(path), "/tmp/perf-%d.map", (int)getpid());
	map = fopen(path, "w");
	if (!map)
		return 1;
	for (int level = 1; level <= DEPTH; level++)
		fprintf(map, "%lx %zx py::level%d:workload.py\n",
			(unsigned long)(arena + (size_t)level * stride), size, level);
	fclose(map);
	printf("%d\n", (int)getpid());
	fflush(stdout);
	for (long r = 0; r < rounds; r++)
		eval(0, 1000000, 0);
	return 0;
}
