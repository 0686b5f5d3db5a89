/* SPDX-License-Identifier: Apache-2.0 */
/*
 * A thread whose stacks do not all end in one place: for SECONDS it
 * spins in a coroutine whose small stack is carved from main's own frame
 * (makecontext), so its stacks end there, inside main's frame; then for SECONDS
 * more it spins on its own stack, below that buffer, where every stack
 * ends at _start, above it.  A profiler that learned from the first half
 * where this thread's stacks end has learned too little for the second
 * (test-jobs.sh).
 *
 * usage: coro-workload [SECONDS]   (default 1 each half)
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <ucontext.h>

static ucontext_t main_ctx, coro_ctx;
static volatile uint64_t sink;
static double half = 1.0;

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

__attribute__((noinline)) static void coro_spin(void)
{
	uint64_t x = sink;

	for (int i = 0; i < 200000; i++)
		x = x * 6364136223846793005u + (uint64_t)i;
	sink = x;
}

/* The coroutine: spin, then hand back to main, for ever.  Its return
 * address is undefined, as coroutine libraries mark the first frame of
 * their stacks (boost.context's trampoline does): its stacks end here. */
static void coro(void)
{
	__asm__ volatile(".cfi_undefined rip");
	for (;;) {
		coro_spin();
		swapcontext(&coro_ctx, &main_ctx);
	}
}

__attribute__((noinline)) static void main_spin(void)
{
	uint64_t x = sink;

	for (int i = 0; i < 200000; i++)
		x = x * 2862933555777941757u + (uint64_t)i;
	sink = x;
}

__attribute__((noinline)) static void on_own_stack(double until)
{
	while (now() < until)
		main_spin();
}

int main(int argc, char **argv)
{
	/* The coroutine's stack, in main's frame: 4 KiB, so that the second
	 * half's stacks start within 8 KiB below its top. */
	_Alignas(16) char stack[4096];
	double until;

	if (argc > 1)
		half = atof(argv[1]);
	if (getcontext(&coro_ctx))
		return 1;
	coro_ctx.uc_stack.ss_sp = stack;
	coro_ctx.uc_stack.ss_size = sizeof(stack);
	coro_ctx.uc_link = &main_ctx;
	makecontext(&coro_ctx, coro, 0);
	until = now() + half;
	while (now() < until)
		swapcontext(&main_ctx, &coro_ctx);
	on_own_stack(now() + half);
	printf("%llu\n", (unsigned long long)(sink & 1));
	return 0;
}
