/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The snapshots the unwinder is tested on: this process's registers and
 * stack, captured as the kernel would copy them, deep in call chains whose
 * every frame is known -- through qsort, through code without CFI, through
 * a leaf that keeps its return address in a register, and in signal
 * handlers.  Built with the flags of each variant (meson.build), so the
 * unwind information for these frames is found the way the variant tests.
 */
#include <check.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <ucontext.h>
#include <unistd.h>

#include "unwind-fixture.h"

struct snapshot snap;
static int compared;

/* The end of the main thread's stack, so the copy stays inside it. */
static uint64_t stack_top(uint64_t sp)
{
	FILE *f = fopen("/proc/self/maps", "r");
	char line[512];
	uint64_t top = 0;

	while (f && fgets(line, sizeof(line), f)) {
		unsigned long long lo, hi;

		if (sscanf(line, "%llx-%llx", &lo, &hi) == 2 && sp >= lo && sp < hi)
			top = hi;
	}
	if (f)
		fclose(f);
	return top;
}

/* Copy the live stack as the kernel does: every byte, whatever
 * AddressSanitizer thinks of other frames' locals, or valgrind of the red
 * zone a signal frame skips -- by the kernel itself where it lets us. */
__attribute__((no_sanitize_address))
static void copy_stack(uint8_t *dst, const uint8_t *src, size_t n)
{
	struct iovec to = { dst, n }, from = { (void *)(uintptr_t)src, n };

	if (process_vm_readv(getpid(), &to, 1, &from, 1, 0) == (ssize_t)n)
		return;
	for (size_t i = 0; i < n; i++)
		((volatile uint8_t *)dst)[i] = src[i];
}

/* The leaf: registers and stack as the kernel would copy them. */
NOINLINE void ds_unwind_capture(void)
{
	uint64_t r[8];

	__asm__ volatile("leaq 0(%%rip), %%rax\n\t"
			 "movq %%rax, 0(%0)\n\t"
			 "movq %%rsp, 8(%0)\n\t"
			 "movq %%rbp, 16(%0)\n\t"
			 "movq %%rbx, 24(%0)\n\t"
			 "movq %%r12, 32(%0)\n\t"
			 "movq %%r13, 40(%0)\n\t"
			 "movq %%r14, 48(%0)\n\t"
			 "movq %%r15, 56(%0)\n\t"
			 : : "r"(r) : "rax", "memory");
	memset(&snap.regs, 0, sizeof(snap.regs));
	snap.regs[PR_REG_IP] = r[0];
	snap.regs[PR_REG_SP] = r[1];
	snap.regs[PR_REG_BP] = r[2];
	snap.regs[PR_REG_BX] = r[3];
	snap.regs[PR_REG_R12] = r[4];
	snap.regs[PR_REG_R13] = r[5];
	snap.regs[PR_REG_R14] = r[6];
	snap.regs[PR_REG_R15] = r[7];
	snap.sp = r[1];
	snap.size = stack_top(r[1]) - r[1];
	if (snap.size > SNAP_STACK)
		snap.size = SNAP_STACK;
	copy_stack(snap.stack, (const uint8_t *)(uintptr_t)r[1], snap.size);
}

NOINLINE int ds_unwind_compare(const void *a, const void *b)
{
	int x = *(const int *)a, y = *(const int *)b;

	if (!compared++)
		ds_unwind_capture();
	__asm__ volatile("" ::: "memory");
	return (x > y) - (x < y);
}

NOINLINE void ds_unwind_level3(int *v, size_t n)
{
	qsort(v, n, sizeof(int), ds_unwind_compare);
	__asm__ volatile("" ::: "memory");
}

#ifdef DS_XTEXT
__attribute__((section(".xtext")))
#endif
NOINLINE void ds_unwind_level2(int *v, size_t n)
{
	ds_unwind_level3(v, n);
	__asm__ volatile("" ::: "memory");
}

NOINLINE void ds_unwind_level1(int *v, size_t n)
{
	ds_unwind_level2(v, n);
	__asm__ volatile("" ::: "memory");
}

/*
 * Code without unwind information, which keeps a frame pointer: called
 * with a function in %rdi, it sets up rbp and calls it.  Once as
 * hand-written assembly in this binary (no .cfi directives, so no FDE),
 * and once copied into anonymous executable memory, as a JIT would.
 */
__asm__(".text\n"
	".globl ds_unwind_nocfi\n"
	".type ds_unwind_nocfi, @function\n"
	"ds_unwind_nocfi:\n"
	"	push %rbp\n"
	"	mov %rsp, %rbp\n"
	"	call *%rdi\n"
	"	pop %rbp\n"
	"	ret\n"
	".Lds_unwind_nocfi_end:\n"
	".size ds_unwind_nocfi, .Lds_unwind_nocfi_end - ds_unwind_nocfi\n");

/*
 * A leaf that keeps its return address in a register, as vfork does (it
 * pops it into %rdi around the system call): CFA = rsp, return address in
 * rdi.  It records its registers and returns; its caller copies the stack,
 * which the call left as it was at the capture.
 */
struct popra_regs {
	uint64_t rip, rsp, rbp, rbx, r12, r13, r14, r15, rdi;
};
__attribute__((visibility("hidden"))) struct popra_regs ds_popra_regs;
__asm__(".text\n"
	".globl ds_unwind_popra\n"
	".type ds_unwind_popra, @function\n"
	"ds_unwind_popra:\n"
	"	.cfi_startproc\n"
	"	pop %rdi\n"
	"	.cfi_adjust_cfa_offset -8\n"
	"	.cfi_register rip, rdi\n"
	"	lea 0(%rip), %rax\n"
	"	mov %rax, ds_popra_regs(%rip)\n"
	"	mov %rsp, ds_popra_regs+8(%rip)\n"
	"	mov %rbp, ds_popra_regs+16(%rip)\n"
	"	mov %rbx, ds_popra_regs+24(%rip)\n"
	"	mov %r12, ds_popra_regs+32(%rip)\n"
	"	mov %r13, ds_popra_regs+40(%rip)\n"
	"	mov %r14, ds_popra_regs+48(%rip)\n"
	"	mov %r15, ds_popra_regs+56(%rip)\n"
	"	mov %rdi, ds_popra_regs+64(%rip)\n"
	"	push %rdi\n"
	"	.cfi_adjust_cfa_offset 8\n"
	"	.cfi_offset rip, -8\n"
	"	ret\n"
	"	.cfi_endproc\n"
	".size ds_unwind_popra, .-ds_unwind_popra\n");

NOINLINE void ds_unwind_popra_caller(void)
{
	const struct popra_regs *p = &ds_popra_regs;

	ds_unwind_popra();
	memset(&snap.regs, 0, sizeof(snap.regs));
	snap.regs[PR_REG_IP] = p->rip;
	snap.regs[PR_REG_SP] = p->rsp;
	snap.regs[PR_REG_BP] = p->rbp;
	snap.regs[PR_REG_BX] = p->rbx;
	snap.regs[PR_REG_R12] = p->r12;
	snap.regs[PR_REG_R13] = p->r13;
	snap.regs[PR_REG_R14] = p->r14;
	snap.regs[PR_REG_R15] = p->r15;
	snap.regs[PR_REG_DI] = p->rdi;
	snap.sp = p->rsp;
	snap.size = stack_top(p->rsp) - p->rsp;
	if (snap.size > SNAP_STACK)
		snap.size = SNAP_STACK;
	copy_stack(snap.stack, (const uint8_t *)(uintptr_t)p->rsp, snap.size);
	__asm__ volatile("" ::: "memory");
}

const unsigned char jit_code[8] = {
	0x55,                   /* push %rbp */
	0x48, 0x89, 0xe5,       /* mov %rsp, %rbp */
	0xff, 0xd7,             /* call *%rdi */
	0x5d,                   /* pop %rbp */
	0xc3,                   /* ret */
};

NOINLINE void ds_unwind_callee(void)
{
	ds_unwind_capture();
	__asm__ volatile("" ::: "memory");
}

/* Call through code without CFI, from a function with it. */
NOINLINE void ds_unwind_via(void (*through)(void (*)(void)))
{
	through(ds_unwind_callee);
	__asm__ volatile("" ::: "memory");
}

NOINLINE void ds_unwind_take_snapshot(void)
{
	int v[64];

	for (int i = 0; i < 64; i++)
		v[i] = (i * 37) % 64;
	compared = 0;
	ds_unwind_level1(v, 64);
	__asm__ volatile("" ::: "memory");
}

/*
 * A signal that interrupts known code: ds_unwind_interrupted sends it to
 * its own thread with the system call inline, so the handler finds the
 * interrupted instruction in its ucontext, and the caller's return
 * address is known.
 */
uint64_t interrupted_ip, interrupted_ra;

NOINLINE void ds_unwind_on_signal(int sig, siginfo_t *si, void *uc)
{
	(void)sig;
	(void)si;
	interrupted_ip = (uint64_t)((ucontext_t *)uc)->uc_mcontext.gregs[REG_RIP];
	ds_unwind_capture();
	__asm__ volatile("" ::: "memory");
}

/* Signal `sig` to this thread from the calling function's own code. */
static inline __attribute__((always_inline)) void signal_here(long sig)
{
	long pid = getpid(), tid = gettid(), ret;

	__asm__ volatile("syscall" : "=a"(ret)
			 : "0"((long)SYS_tgkill), "D"(pid), "S"(tid), "d"(sig)
			 : "rcx", "r11", "memory");
}

NOINLINE void ds_unwind_interrupted(void)
{
	interrupted_ra = (uintptr_t)__builtin_return_address(0);
	signal_here(SIGUSR1);
}

NOINLINE void ds_unwind_signalled(void)
{
	struct sigaction sa = { .sa_sigaction = ds_unwind_on_signal, .sa_flags = SA_SIGINFO };

	ck_assert_int_eq(sigaction(SIGUSR1, &sa, NULL), 0);
	ds_unwind_interrupted();
	__asm__ volatile("" ::: "memory");
	signal(SIGUSR1, SIG_DFL);
}

/*
 * A signal taken in a handler of another (SIGUSR2 sent the same way from
 * the SIGUSR1 handler): two trampolines, each followed by the code it
 * interrupted.
 */
uint64_t nested_ip, nested_ra;

NOINLINE void ds_unwind_on_nested(int sig, siginfo_t *si, void *uc)
{
	nested_ip = (uint64_t)((ucontext_t *)uc)->uc_mcontext.gregs[REG_RIP];
	ds_unwind_capture();
	__asm__ volatile("" ::: "memory");
}

NOINLINE void ds_unwind_interrupted_again(void)
{
	nested_ra = (uintptr_t)__builtin_return_address(0);
	signal_here(SIGUSR2);
}

NOINLINE void ds_unwind_on_outer(int sig, siginfo_t *si, void *uc)
{
	interrupted_ip = (uint64_t)((ucontext_t *)uc)->uc_mcontext.gregs[REG_RIP];
	ds_unwind_interrupted_again();
	__asm__ volatile("" ::: "memory");
}

NOINLINE void ds_unwind_signalled_twice(void)
{
	struct sigaction outer = { .sa_sigaction = ds_unwind_on_outer, .sa_flags = SA_SIGINFO };
	struct sigaction nested = { .sa_sigaction = ds_unwind_on_nested,
				    .sa_flags = SA_SIGINFO };

	ck_assert_int_eq(sigaction(SIGUSR1, &outer, NULL), 0);
	ck_assert_int_eq(sigaction(SIGUSR2, &nested, NULL), 0);
	ds_unwind_interrupted();
	__asm__ volatile("" ::: "memory");
	signal(SIGUSR1, SIG_DFL);
	signal(SIGUSR2, SIG_DFL);
}

/*
 * A signal trampoline of the program's own (SA_RESTORER, as a runtime
 * without glibc's sigaction installs one), with no CFI of its own, right
 * after a function that has some: a frame returning into the trampoline
 * looks its rule up at the address before (the call it seems to return
 * from), which is that function's last instruction.  (glibc's own
 * trampoline has an FDE that says 'S', and a nop before it in the FDE.)
 */
__asm__(".text\n"
	".globl ds_unwind_before_restorer\n"
	".type ds_unwind_before_restorer, @function\n"
	"ds_unwind_before_restorer:\n"
	".cfi_startproc\n"
	"ret\n"
	".cfi_endproc\n"
	".size ds_unwind_before_restorer, .-ds_unwind_before_restorer\n"
	".globl ds_unwind_restorer\n"
	".type ds_unwind_restorer, @function\n"
	"ds_unwind_restorer:\n"
	"movq $15, %rax\n" /* rt_sigreturn */
	"syscall\n"
	"hlt\n"
	".size ds_unwind_restorer, .-ds_unwind_restorer\n");
void ds_unwind_before_restorer(void);

NOINLINE void ds_unwind_signalled_own_restorer(void)
{
	/* The kernel's struct sigaction: glibc's sigaction() sets its own
	 * restorer. */
	struct {
		void (*handler)(int, siginfo_t *, void *);
		unsigned long flags;
		void (*restorer)(void);
		uint64_t mask;
	} sa = { ds_unwind_on_signal, SA_SIGINFO | 0x04000000 /* SA_RESTORER */,
		 ds_unwind_restorer, 0 };

	ck_assert_int_eq(syscall(SYS_rt_sigaction, SIGUSR1, &sa, NULL, sizeof(sa.mask)), 0);
	ds_unwind_interrupted();
	__asm__ volatile("" ::: "memory");
	signal(SIGUSR1, SIG_DFL);
}

/*
 * A handler on an alternate stack that lies above the interrupted code:
 * an array in a caller's frame, as a program may keep it in main's.  The
 * snapshot starts on the alternate stack, as the kernel's copy would, so
 * it holds the interrupted instruction (in the signal frame) but not the
 * interrupted code's own stack, below.
 */
#define ALT_STACK 65536

NOINLINE void ds_unwind_on_alt_stack(void)
{
	unsigned char alt[ALT_STACK] __attribute__((aligned(64)));
	stack_t ss = { .ss_sp = alt, .ss_size = sizeof(alt) }, old;
	struct sigaction sa = { .sa_sigaction = ds_unwind_on_signal,
				.sa_flags = SA_SIGINFO | SA_ONSTACK };

	ck_assert_int_eq(sigaltstack(&ss, &old), 0);
	ck_assert_int_eq(sigaction(SIGUSR1, &sa, NULL), 0);
	ds_unwind_interrupted();
	__asm__ volatile("" ::: "memory");
	signal(SIGUSR1, SIG_DFL);
	ck_assert_int_eq(sigaltstack(&old, NULL), 0);
}
