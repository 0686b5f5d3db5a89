/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Unwinding without the kernel: this program takes a snapshot of its own
 * registers and stack deep in a known call chain -- through qsort, so libc
 * code and a callback sit in the middle -- and the unwinder must recover
 * exactly that chain.  Built without frame pointers, and in variants that
 * exercise the other ways of finding unwind information (meson.build):
 *
 *   default       PIE (ET_DYN), .eh_frame_hdr
 *   DS_XTEXT      ET_EXEC, with ds_level2 in a second executable segment
 *   debug-frame   -fno-asynchronous-unwind-tables -g: only .debug_frame
 *   debug-frame-zlib, -zstd, zdebug-frame
 *                 that, compressed (SHF_COMPRESSED, or .zdebug_frame)
 *   stripped      that, with .debug_frame in a separate debug file found
 *                 by build-id (DS_DEBUG_DIR: directories separated by
 *                 ':'), or by .gnu_debuglink; the symbolizer must name
 *                 the frames with lines from the same file
 *                 (DS_STRIPPED=1, unless DS_OWN_DEBUG_SECTION=1)
 *   lld           linked by lld: the text segment shares a file page with
 *                 the read-only segment before it
 *
 * Corrupt snapshots must end cleanly within the depth limit.
 */
#include <check.h>
#include <dlfcn.h>
#include <linux/perf_event.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <ucontext.h>
#include <unistd.h>

#include "checkmain.h"
#include "perfreader.h"
#include "prunwind.h"
#include "prsym.h"

#define NOINLINE __attribute__((noinline, noclone))
#define SNAP_STACK 32768
#define N_OURS (sizeof(ours) / sizeof(ours[0]))

/* Registers in perf's numbering, and the stack above the captured SP. */
struct snapshot {
	uint64_t regs[PR_REG_MAX];
	uint64_t sp;
	size_t size;
	uint8_t stack[SNAP_STACK];
};

static struct snapshot snap;
static int compared;

/* Exported (the test links with -rdynamic) so dladdr() can name them. */
void ds_unwind_capture(void);
int ds_unwind_compare(const void *a, const void *b);
void ds_unwind_level3(int *v, size_t n);
void ds_unwind_level2(int *v, size_t n);
void ds_unwind_level1(int *v, size_t n);
void ds_unwind_take_snapshot(void);

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
void ds_unwind_nocfi(void (*fn)(void));
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
void ds_unwind_popra(void);
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

void ds_unwind_popra_caller(void);

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

static const unsigned char jit_code[] = {
	0x55,                   /* push %rbp */
	0x48, 0x89, 0xe5,       /* mov %rsp, %rbp */
	0xff, 0xd7,             /* call *%rdi */
	0x5d,                   /* pop %rbp */
	0xc3,                   /* ret */
};

void ds_unwind_callee(void);
void ds_unwind_via(void (*through)(void (*)(void)));

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
static uint64_t interrupted_ip, interrupted_ra;

void ds_unwind_on_signal(int sig, siginfo_t *si, void *uc);
void ds_unwind_interrupted(void);
void ds_unwind_signalled(void);

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
static uint64_t nested_ip, nested_ra;

void ds_unwind_on_nested(int sig, siginfo_t *si, void *uc);
void ds_unwind_on_outer(int sig, siginfo_t *si, void *uc);
void ds_unwind_interrupted_again(void);
void ds_unwind_signalled_twice(void);

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
 * A handler on an alternate stack that lies above the interrupted code:
 * an array in a caller's frame, as a program may keep it in main's.  The
 * snapshot starts on the alternate stack, as the kernel's copy would, so
 * it holds the interrupted instruction (in the signal frame) but not the
 * interrupted code's own stack, below.
 */
#define ALT_STACK 65536

void ds_unwind_on_alt_stack(void);

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

/* ---- replaying the snapshot ---- */

struct replay {
	struct pr_model *model;
	struct pr_unwinder *u;
	uint64_t regs[PR_REG_MAX];   /* dense, in PR_REGS_DWARF order */
	struct pr_record rec;
};

static int feed(const struct pr_record *rec, void *arg)
{
	return pr_model_apply(arg, rec);
}

enum { NO_RULE_CACHE = 1, NO_FRAME_POINTERS = 2 };

#define MAX_DEBUG_DIRS 8

/* DS_DEBUG_DIR's directories into `dirs` (room for MAX_DEBUG_DIRS): how
 * many.  They stay valid until the next call. */
static size_t debug_dirs(const char **dirs)
{
	static char buf[4096];
	const char *env = getenv("DS_DEBUG_DIR");
	size_t n = 0;

	if (!env)
		return 0;
	snprintf(buf, sizeof(buf), "%s", env);
	for (char *save = NULL, *d = strtok_r(buf, ":", &save); d && n < MAX_DEBUG_DIRS;
	     d = strtok_r(NULL, ":", &save))
		dirs[n++] = d;
	return n;
}

static struct pr_unwinder *new_unwinder(struct pr_model *model, uint32_t max_depth,
					unsigned flags)
{
	const char *dirs[MAX_DEBUG_DIRS];
	size_t nr_dirs = debug_dirs(dirs);
	PR_OPTS(pr_unwinder_opts, o, .live = true, .max_depth = max_depth,
		.debug_dirs = dirs, .nr_debug_dirs = nr_dirs,
		.no_rule_cache = flags & NO_RULE_CACHE,
		.no_frame_pointers = flags & NO_FRAME_POINTERS);
	struct pr_unwinder *u = pr_unwinder_new(model, &o);

	ck_assert_ptr_nonnull(u);
	return u;
}

/* A sample of this process from `s`, its stack `size` bytes long. */
static void replay_init(struct replay *r, const struct snapshot *s, size_t size,
			uint32_t max_depth)
{
	struct perf_event_attr attr;
	size_t n = 0;

	memset(r, 0, sizeof(*r));
	r->model = pr_model_new();
	ck_assert_ptr_nonnull(r->model);
	ck_assert_int_eq(pr_event_attr(NULL, PR_SOURCE_CPU_CLOCK, 0, &attr), 0);
	ck_assert_int_eq(pr_process_synthesize(getpid(), &attr, 0, feed, r->model), 0);
	r->u = new_unwinder(r->model, max_depth, 0);
	for (int reg = 0; reg < PR_REG_MAX; reg++)
		if (PR_REGS_DWARF >> reg & 1)
			r->regs[n++] = s->regs[reg];
	r->rec.type = PR_RECORD_SAMPLE;
	r->rec.pid = r->rec.tid = (uint32_t)getpid();
	r->rec.u.sample.ip = s->regs[PR_REG_IP];
	r->rec.u.sample.regs_abi = PERF_SAMPLE_REGS_ABI_64;
	r->rec.u.sample.regs_mask = PR_REGS_DWARF;
	r->rec.u.sample.regs = r->regs;
	r->rec.u.sample.stack_addr = s->sp;
	r->rec.u.sample.stack = s->stack;
	r->rec.u.sample.stack_size = SNAP_STACK;
	r->rec.u.sample.stack_dyn_size = size;
}

static void replay_free(struct replay *r)
{
	pr_unwinder_free(r->u);
	pr_model_free(r->model);
}

/* The exported name the frame is in (the test is linked -rdynamic). */
static const char *name_of(const struct pr_frame *f)
{
	Dl_info info;

	if (!dladdr((void *)(uintptr_t)f->ip, &info) || !info.dli_sname)
		return "?";
	return info.dli_sname;
}

/* qsort's code: libc's, or AddressSanitizer's interceptor in front. */
static bool in_qsort(const struct pr_frame *f)
{
	Dl_info info;

	return dladdr((void *)(uintptr_t)f->ip, &info) && info.dli_fname &&
	       (strstr(info.dli_fname, "/libc.so") || strstr(info.dli_fname, "/libasan.so"));
}

START_TEST(a_snapshot_through_qsort_unwinds_to_the_exact_chain)
{
	static const char *const ours[] = {
		"ds_unwind_capture", "ds_unwind_compare", "ds_unwind_level3",
		"ds_unwind_level2", "ds_unwind_level1", "ds_unwind_take_snapshot",
	};
	struct replay r;
	struct pr_stack st;
	size_t k = 0, libc_between = 0;
	bool reached_main = false;

	ds_unwind_take_snapshot();
	ck_assert_uint_gt(snap.size, 1024);
	replay_init(&r, &snap, snap.size, 0);
	ck_assert_int_eq(pr_unwinder_unwind(r.u, &r.rec, &st), 0);
	ck_assert_uint_eq(st.nr_kernel, 0);
	/* Our functions in order, with libc's qsort between the callback
	 * and its caller, and nothing else of ours in between. */
	for (size_t i = 0; i < st.nr; i++) {
		const char *name = name_of(&st.frames[i]);

		if (k < N_OURS && !strcmp(name, ours[k])) {
			k++;
			continue;
		}
		if (k == 2 && in_qsort(&st.frames[i])) {
			libc_between++;
			continue;
		}
		if (k == N_OURS) {
			reached_main |= !strcmp(name, "main");
			continue;
		}
		ck_abort_msg("frame %zu (%s at 0x%llx) is not the expected %s", i, name,
			     (unsigned long long)st.frames[i].ip, ours[k]);
	}
	ck_assert_msg(k == N_OURS, "only %zu of our frames found", k);
	ck_assert_uint_ge(libc_between, 1);
	ck_assert(reached_main);
	ck_assert_msg(st.end == PR_END_OUTERMOST, "ended: %s", pr_stack_end_name(st.end));
	/* The leaf's address is exact; callers point into their call. */
	ck_assert_uint_eq(st.frames[0].ip, snap.regs[PR_REG_IP]);
	for (size_t i = 0; i < st.nr; i++)
		ck_assert_uint_eq(st.frames[i].flags & PR_FRAME_FP, 0);
	/* Every frame carries its process and its mapping: all that naming
	 * needs, without looking the process up again. */
	for (size_t i = 0; i < st.nr; i++) {
		ck_assert_uint_ne(st.frames[i].proc_serial, 0);
		ck_assert_uint_eq(st.frames[i].proc_serial, st.frames[0].proc_serial);
		ck_assert_ptr_nonnull(st.frames[i].dso);
		ck_assert_uint_le(st.frames[i].map_start, st.frames[i].ip);
		ck_assert_uint_gt(st.frames[i].map_end, st.frames[i].ip);
	}
	replay_free(&r);
}
END_TEST

/*
 * Stripped, the program's own unwind rules and lines are only in its debug
 * file (DS_STRIPPED): the unwinder must have reached main through it, and
 * the symbolizer, over the same model, must name our frames with lines of
 * this file from it.
 */
START_TEST(the_debug_file_that_unwinds_also_names)
{
	static const char *const ours[] = {
		"ds_unwind_level3", "ds_unwind_level2", "ds_unwind_level1",
	};
	const char *dirs[MAX_DEBUG_DIRS];
	struct replay r;
	struct pr_stack st;
	struct pr_symbolizer *sym;
	size_t k = 0;
	size_t nr_dirs = debug_dirs(dirs);
	bool reached_main = false;
	PR_OPTS(pr_symbolizer_opts, so, .live = true, .debug_dirs = dirs,
		.nr_debug_dirs = nr_dirs);

	ds_unwind_take_snapshot();
	replay_init(&r, &snap, snap.size, 0);
	ck_assert_int_eq(pr_unwinder_unwind(r.u, &r.rec, &st), 0);
	/* By the rules of the debug file's .debug_frame, not by frame
	 * pointer: the binary has no CFI of its own for our code. */
	for (size_t i = 0; i < st.nr; i++) {
		reached_main |= !strcmp(name_of(&st.frames[i]), "main");
		ck_assert_uint_eq(st.frames[i].flags & PR_FRAME_FP, 0);
	}
	ck_assert_msg(reached_main && st.end == PR_END_OUTERMOST, "ended: %s after %zu frames",
		      pr_stack_end_name(st.end), (size_t)st.nr);
	sym = pr_symbolizer_new(r.model, &so);
	ck_assert_ptr_nonnull(sym);
	for (size_t i = 0; i < st.nr && k < sizeof(ours) / sizeof(ours[0]); i++) {
		struct pr_symbol s;
		const struct pr_sym_func *fn;

		if (strcmp(name_of(&st.frames[i]), ours[k]))
			continue;
		ck_assert_int_eq(pr_symbolizer_symbolize(sym, (uint32_t)getpid(), &st.frames[i],
							 &s), 0);
		ck_assert_msg(s.name && !strcmp(s.name, ours[k]), "frame %zu named %s, not %s", i,
			      s.name ? s.name : "(none)", ours[k]);
		ck_assert_msg(s.nr > 0, "%s: no DWARF from the debug file", ours[k]);
		fn = &s.funcs[s.nr - 1];
		ck_assert_str_eq(fn->name, ours[k]);
		ck_assert_msg(fn->file && strstr(fn->file, "test-unwind.c") && fn->line > 0,
			      "%s at %s:%u", ours[k], fn->file ? fn->file : "?", fn->line);
		k++;
	}
	ck_assert_uint_eq(k, sizeof(ours) / sizeof(ours[0]));
	pr_symbolizer_free(sym);
	replay_free(&r);
}
END_TEST

START_TEST(a_short_snapshot_ends_truncated)
{
	struct replay r;
	struct pr_stack st;

	ds_unwind_take_snapshot();
	replay_init(&r, &snap, 256, 0);
	ck_assert_int_eq(pr_unwinder_unwind(r.u, &r.rec, &st), 0);
	ck_assert_uint_ge(st.nr, 1);
	ck_assert_msg(st.end == PR_END_TRUNCATED, "ended: %s", pr_stack_end_name(st.end));
	replay_free(&r);
}
END_TEST

START_TEST(the_depth_limit_holds)
{
	struct replay r;
	struct pr_stack st;

	ds_unwind_take_snapshot();
	replay_init(&r, &snap, snap.size, 3);
	ck_assert_int_eq(pr_unwinder_unwind(r.u, &r.rec, &st), 0);
	ck_assert_uint_eq(st.nr, 3);
	ck_assert_int_eq(st.end, PR_END_DEPTH);
	replay_free(&r);
}
END_TEST

/* Whatever the stack holds, unwinding stops within the depth limit. */
START_TEST(corrupt_snapshots_end_cleanly)
{
	static struct snapshot bad;
	struct replay r;
	struct pr_stack st;
	unsigned seed = 12345;

	ds_unwind_take_snapshot();
	/* Random bytes above a real leaf. */
	bad = snap;
	for (size_t i = 0; i < SNAP_STACK; i++) {
		seed = seed * 1103515245 + 12345;
		bad.stack[i] = (uint8_t)(seed >> 16);
	}
	for (int round = 0; round < 50; round++) {
		bad.regs[PR_REG_BP] = bad.sp + (seed % 4096);
		replay_init(&r, &bad, SNAP_STACK, 0);
		ck_assert_int_eq(pr_unwinder_unwind(r.u, &r.rec, &st), 0);
		ck_assert_uint_le(st.nr, PR_UNWIND_DEFAULT_DEPTH);
		ck_assert_int_lt(st.end, PR_END_MAX);
		replay_free(&r);
		for (size_t i = 0; i < 64; i++) {
			seed = seed * 1103515245 + 12345;
			bad.stack[seed % SNAP_STACK] = (uint8_t)(seed >> 8);
		}
	}
	/* A stack whose every word points at itself. */
	for (size_t i = 0; i + 8 <= SNAP_STACK; i += 8) {
		uint64_t self = bad.sp + i;

		memcpy(bad.stack + i, &self, 8);
	}
	bad.regs[PR_REG_BP] = bad.sp;
	replay_init(&r, &bad, SNAP_STACK, 0);
	ck_assert_int_eq(pr_unwinder_unwind(r.u, &r.rec, &st), 0);
	ck_assert_uint_le(st.nr, PR_UNWIND_DEFAULT_DEPTH);
	ck_assert_int_ne(st.end, PR_END_OUTERMOST);
	replay_free(&r);
	/* No stack at all: the leaf, and a truncated stack. */
	replay_init(&r, &snap, 0, 0);
	ck_assert_int_eq(pr_unwinder_unwind(r.u, &r.rec, &st), 0);
	ck_assert_uint_eq(st.nr, 1);
	ck_assert_int_eq(st.end, PR_END_TRUNCATED);
	/* No user registers. */
	r.rec.u.sample.regs = NULL;
	r.rec.u.sample.regs_abi = PERF_SAMPLE_REGS_ABI_NONE;
	ck_assert_int_eq(pr_unwinder_unwind(r.u, &r.rec, &st), 0);
	ck_assert_uint_eq(st.nr, 0);
	ck_assert_int_eq(st.end, PR_END_NO_USER);
	/* An IP in no mapping. */
	r.rec.u.sample.regs = r.regs;
	r.rec.u.sample.regs_abi = PERF_SAMPLE_REGS_ABI_64;
	r.regs[8] = 0x10;   /* IP, the ninth register of PR_REGS_DWARF */
	ck_assert_int_eq(pr_unwinder_unwind(r.u, &r.rec, &st), 0);
	ck_assert_uint_ge(st.nr, 1);
	ck_assert_ptr_null(st.frames[0].dso);
	ck_assert(st.end == PR_END_NO_MAPPING || st.end == PR_END_TRUNCATED ||
		  st.end == PR_END_ERROR);
	replay_free(&r);
}
END_TEST

START_TEST(kernel_frames_sit_above_the_user_stack)
{
	struct replay r;
	struct pr_stack st;
	uint64_t chain[] = { PERF_CONTEXT_KERNEL, 0xffffffff81000100ull,
			     0xffffffff81000200ull, PERF_CONTEXT_USER };

	ds_unwind_take_snapshot();
	replay_init(&r, &snap, snap.size, 0);
	r.rec.u.sample.callchain = chain;
	r.rec.u.sample.nr_callchain = 4;
	ck_assert_int_eq(pr_unwinder_unwind(r.u, &r.rec, &st), 0);
	ck_assert_uint_eq(st.nr_kernel, 2);
	ck_assert_uint_eq(st.frames[0].ip, 0xffffffff81000100ull);
	ck_assert(st.frames[0].flags & PR_FRAME_KERNEL);
	ck_assert_uint_eq(st.frames[1].ip, 0xffffffff81000200ull);
	ck_assert_uint_eq(st.frames[2].ip, snap.regs[PR_REG_IP]);
	ck_assert(!(st.frames[2].flags & PR_FRAME_KERNEL));
	replay_free(&r);
}
END_TEST

START_TEST(statistics_count_stacks_by_how_they_ended)
{
	struct pr_unwind_stats st = { .sz = sizeof(st) };
	struct replay r;
	struct pr_stack s;

	ds_unwind_take_snapshot();
	replay_init(&r, &snap, snap.size, 0);
	ck_assert_int_eq(pr_unwinder_unwind(r.u, &r.rec, &s), 0);
	r.rec.u.sample.stack_dyn_size = 128;
	ck_assert_int_eq(pr_unwinder_unwind(r.u, &r.rec, &s), 0);
	ck_assert_int_eq(pr_unwinder_stats(r.u, &st), 0);
	ck_assert_uint_eq(st.samples, 2);
	ck_assert_uint_eq(st.ends[PR_END_OUTERMOST], 1);
	ck_assert_uint_eq(st.ends[PR_END_TRUNCATED], 1);
	ck_assert_uint_gt(st.frames, 8);
	ck_assert_uint_ge(st.files_opened, 2);
	ck_assert_str_eq(pr_stack_end_name(PR_END_TRUNCATED), "truncated");
	replay_free(&r);
}
END_TEST

/* The same sample through compiled rules and through libunwind alone:
 * the same frames, the same end. */
static void assert_same(struct replay *r, struct pr_unwinder *slow)
{
	struct pr_stack a, b;

	ck_assert_int_eq(pr_unwinder_unwind(r->u, &r->rec, &a), 0);
	ck_assert_int_eq(pr_unwinder_unwind(slow, &r->rec, &b), 0);
	ck_assert_msg(a.nr == b.nr && a.end == b.end,
		      "%llu bytes of stack: %zu frames (%s) from compiled rules, "
		      "%zu (%s) from libunwind",
		      (unsigned long long)r->rec.u.sample.stack_dyn_size, a.nr,
		      pr_stack_end_name(a.end), b.nr, pr_stack_end_name(b.end));
	for (size_t i = 0; i < a.nr; i++) {
		ck_assert_uint_eq(a.frames[i].ip, b.frames[i].ip);
		ck_assert_uint_eq(a.frames[i].dso_ip, b.frames[i].dso_ip);
		ck_assert_ptr_eq(a.frames[i].dso, b.frames[i].dso);
		ck_assert_uint_eq(a.frames[i].flags, b.frames[i].flags);
		ck_assert_uint_eq(a.frames[i].map_start, b.frames[i].map_start);
		ck_assert_uint_eq(a.frames[i].map_end, b.frames[i].map_end);
		ck_assert_uint_eq(a.frames[i].map_pgoff, b.frames[i].map_pgoff);
		ck_assert_uint_eq(a.frames[i].proc_serial, b.frames[i].proc_serial);
	}
}

START_TEST(compiled_rules_agree_with_libunwind)
{
	struct pr_unwind_stats st = { .sz = sizeof(st) };
	static struct snapshot bad;
	struct pr_unwinder *slow;
	struct replay r;
	unsigned seed = 777;
	uint64_t n = 0;

	ds_unwind_take_snapshot();
	replay_init(&r, &snap, snap.size, 0);
	slow = new_unwinder(r.model, 0, NO_RULE_CACHE);
	/* The whole stack, then cut at every word: every frame's CFA
	 * and saved registers fall just inside or just outside. */
	for (size_t size = snap.size & ~(size_t)7;; size -= 8) {
		r.rec.u.sample.stack_dyn_size = size;
		assert_same(&r, slow);
		n++;
		if (!size)
			break;
	}
	ck_assert_int_eq(pr_unwinder_stats(r.u, &st), 0);
	ck_assert_uint_eq(st.samples, n);
	/* Not a comparison of libunwind with itself: most of these went
	 * through the compiled rules. */
	ck_assert_msg(st.fast_samples * 10 >= st.samples * 9, "%llu of %llu from compiled rules",
		      (unsigned long long)st.fast_samples, (unsigned long long)st.samples);
	/* Damaged stacks, one word at a time: both give up the same way. */
	bad = snap;
	for (int round = 0; round < 400; round++) {
		size_t at;

		seed = seed * 1103515245 + 12345;
		at = (seed >> 4) % (snap.size / 8) * 8;
		memcpy(bad.stack + at, (round & 1) ? &seed : (const void *)&snap.regs[PR_REG_SP],
		       (round & 1) ? sizeof(seed) : 8);
		r.rec.u.sample.stack = bad.stack;
		r.rec.u.sample.stack_dyn_size = snap.size;
		assert_same(&r, slow);
	}
	pr_unwinder_free(slow);
	replay_free(&r);
}
END_TEST

/* Where frame `i` is: in `lo`..`lo + len`. */
static bool frame_in(const struct pr_stack *st, size_t i, const void *lo, size_t len)
{
	uint64_t a = (uintptr_t)lo;

	return i < st->nr && st->frames[i].ip >= a && st->frames[i].ip < a + len;
}

/* The stack from ds_unwind_callee through `through`: the frames found by
 * frame pointer are marked, and the rest unwinds to main. */
static void check_through(const struct pr_stack *st, const void *code, size_t len)
{
	size_t i;
	bool main_reached = false;

	ck_assert_uint_ge(st->nr, 5);
	ck_assert_str_eq(name_of(&st->frames[0]), "ds_unwind_capture");
	ck_assert_str_eq(name_of(&st->frames[1]), "ds_unwind_callee");
	ck_assert_msg(frame_in(st, 2, code, len), "frame 2 at 0x%llx is not in the code "
		      "without CFI", (unsigned long long)st->frames[2].ip);
	ck_assert_uint_eq(st->frames[2].flags & PR_FRAME_FP, 0);
	/* Its caller was found through the frame pointer, and says so. */
	ck_assert_str_eq(name_of(&st->frames[3]), "ds_unwind_via");
	ck_assert(st->frames[3].flags & PR_FRAME_FP);
	for (i = 4; i < st->nr; i++) {
		ck_assert_uint_eq(st->frames[i].flags & PR_FRAME_FP, 0);
		main_reached |= !strcmp(name_of(&st->frames[i]), "main");
	}
	ck_assert(main_reached);
	ck_assert_msg(st->end == PR_END_OUTERMOST, "ended: %s", pr_stack_end_name(st->end));
}

/* Unwind the snapshot taken through `code`, then again without following
 * frame pointers, which must end at it as `strict_end` says.  The path of
 * the mapping `code` is in. */
static char *unwind_through(const void *code, size_t len, enum pr_stack_end strict_end)
{
	struct replay r;
	struct pr_stack st;
	struct pr_unwinder *strict;
	char *path;

	replay_init(&r, &snap, snap.size, 0);
	ck_assert_int_eq(pr_unwinder_unwind(r.u, &r.rec, &st), 0);
	check_through(&st, code, len);
	ck_assert_ptr_nonnull(st.frames[2].dso);
	path = strdup(pr_dso_path(st.frames[2].dso));
	strict = new_unwinder(r.model, 0, NO_FRAME_POINTERS);
	ck_assert_int_eq(pr_unwinder_unwind(strict, &r.rec, &st), 0);
	ck_assert_uint_eq(st.nr, 3);
	ck_assert_int_eq(st.end, strict_end);
	pr_unwinder_free(strict);
	replay_free(&r);
	return path;
}

START_TEST(code_without_cfi_is_crossed_by_frame_pointer)
{
	char *path;

	ds_unwind_via(ds_unwind_nocfi);
	path = unwind_through((const void *)(uintptr_t)ds_unwind_nocfi, 16,
			      PR_END_NO_UNWIND_INFO);
	ck_assert_int_eq(path[0], '/');
	free(path);
}
END_TEST

START_TEST(jit_code_is_crossed_by_frame_pointer)
{
	void *jit = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	char *path;

	ck_assert_ptr_ne(jit, MAP_FAILED);
	memcpy(jit, jit_code, sizeof(jit_code));
	ck_assert_int_eq(mprotect(jit, 4096, PROT_READ | PROT_EXEC), 0);
	ds_unwind_via((void (*)(void (*)(void)))(uintptr_t)jit);
	/* The model learns of the mapping as a capture would: from /proc. */
	path = unwind_through(jit, sizeof(jit_code), PR_END_NO_MAPPING);
	ck_assert_str_eq(path, "//anon");
	free(path);
	munmap(jit, 4096);
}
END_TEST

/* Copy `from` to `to`; false on failure. */
static bool copy_file(const char *from, const char *to)
{
	FILE *in = fopen(from, "rb"), *out = in ? fopen(to, "wb") : NULL;
	char buf[65536];
	size_t n;
	bool ok = in && out;

	while (ok && (n = fread(buf, 1, sizeof(buf), in)) > 0)
		ok = fwrite(buf, 1, n, out) == n;
	if (in)
		fclose(in);
	if (out && fclose(out))
		ok = false;
	return ok;
}

/* A library deleted after it was loaded, another file put at its path:
 * the unwinder reads the file mapped, through /proc/PID/map_files. */
START_TEST(a_deleted_and_replaced_library_still_resolves)
{
	const char *lib = getenv("DS_UNWIND_LIB");
	char path[] = "/tmp/ds-unwind-lib-XXXXXX";
	void (*call)(void (*)(void));
	struct replay r;
	struct pr_stack st;
	bool main_reached = false;
	void *h;
	int fd;

	ck_assert_msg(lib != NULL, "DS_UNWIND_LIB is not set (meson test sets it)");
	fd = mkstemp(path);
	ck_assert_int_ge(fd, 0);
	close(fd);
	ck_assert(copy_file(lib, path));
	h = dlopen(path, RTLD_NOW | RTLD_LOCAL);
	ck_assert_msg(h != NULL, "%s", dlerror());
	call = (void (*)(void (*)(void)))(uintptr_t)dlsym(h, "ds_unwind_lib_call");
	ck_assert(call != NULL);
	ck_assert_int_eq(unlink(path), 0);
	ck_assert(copy_file("/proc/self/exe", path));
	call(ds_unwind_callee);
	replay_init(&r, &snap, snap.size, 0);
	ck_assert_int_eq(pr_unwinder_unwind(r.u, &r.rec, &st), 0);
	ck_assert_uint_ge(st.nr, 4);
	ck_assert_str_eq(name_of(&st.frames[1]), "ds_unwind_callee");
	ck_assert_str_eq(name_of(&st.frames[2]), "ds_unwind_lib_call");
	ck_assert_ptr_nonnull(strstr(pr_dso_path(st.frames[2].dso), "ds-unwind-lib-"));
	for (size_t i = 0; i < st.nr; i++) {
		ck_assert_uint_eq(st.frames[i].flags & PR_FRAME_FP, 0);
		main_reached |= !strcmp(name_of(&st.frames[i]), "main");
	}
	ck_assert(main_reached);
	ck_assert_msg(st.end == PR_END_OUTERMOST, "ended: %s", pr_stack_end_name(st.end));
	replay_free(&r);
	unlink(path);
	dlclose(h);
}
END_TEST

/* The caller of a leaf that popped its return address has the leaf's
 * stack pointer: not a frame that fails to move up the stack. */
/* Frames from `from` on reach main, the stack ends there, and libunwind
 * alone unwinds the sample the same. */
static void assert_reaches_main(struct replay *r, const struct pr_stack *st, size_t from)
{
	struct pr_unwinder *slow = new_unwinder(r->model, 0, NO_RULE_CACHE);
	bool main_reached = false;

	for (size_t i = from; i < st->nr; i++)
		main_reached |= !strcmp(name_of(&st->frames[i]), "main");
	ck_assert(main_reached);
	ck_assert_msg(st->end == PR_END_OUTERMOST, "ended: %s", pr_stack_end_name(st->end));
	assert_same(r, slow);
	pr_unwinder_free(slow);
}

START_TEST(a_return_address_in_a_register_unwinds)
{
	struct replay r;
	struct pr_stack st;

	ds_unwind_popra_caller();
	replay_init(&r, &snap, snap.size, 0);
	ck_assert_int_eq(pr_unwinder_unwind(r.u, &r.rec, &st), 0);
	ck_assert_uint_ge(st.nr, 3);
	ck_assert_str_eq(name_of(&st.frames[0]), "ds_unwind_popra");
	ck_assert_str_eq(name_of(&st.frames[1]), "ds_unwind_popra_caller");
	assert_reaches_main(&r, &st, 2);
	replay_free(&r);
}
END_TEST

/* From frame `at`: `handler`, the trampoline (marked), the code the
 * signal interrupted at exactly `ip`, named `interrupted`. */
static void assert_signal_at(const struct pr_stack *st, size_t at, const char *handler,
			     uint64_t ip, const char *interrupted)
{
	ck_assert_uint_ge(st->nr, at + 3);
	ck_assert_str_eq(name_of(&st->frames[at]), handler);
	ck_assert_msg(st->frames[at + 1].flags & PR_FRAME_SIGNAL, "frame %zu at 0x%llx (%s) is "
		      "not the trampoline", at + 1, (unsigned long long)st->frames[at + 1].ip,
		      name_of(&st->frames[at + 1]));
	ck_assert_uint_eq(st->frames[at + 2].ip, ip);
	ck_assert_str_eq(name_of(&st->frames[at + 2]), interrupted);
}

/* Frame `at` is a caller, at its return address `ra` minus one. */
static void assert_caller_at(const struct pr_stack *st, size_t at, uint64_t ra,
			     const char *name)
{
	ck_assert_uint_gt(st->nr, at);
	ck_assert_uint_eq(st->frames[at].ip, ra - 1);
	ck_assert_str_eq(name_of(&st->frames[at]), name);
}

/* No frame guessed by frame pointer; the trampolines (bit i of
 * `trampolines` for frame i) marked, and only they. */
static void assert_trampolines(const struct pr_stack *st, uint64_t trampolines)
{
	for (size_t i = 0; i < st->nr; i++)
		ck_assert_uint_eq(st->frames[i].flags & (PR_FRAME_FP | PR_FRAME_SIGNAL),
				  i < 64 && (trampolines >> i & 1) ? PR_FRAME_SIGNAL : 0);
}

/* `scenario` run (it captures in a signal handler), and its snapshot
 * unwound into *st from the capture. */
static void unwind_scenario(void (*scenario)(void), struct replay *r, struct pr_stack *st)
{
	scenario();
	replay_init(r, &snap, snap.size, 0);
	ck_assert_int_eq(pr_unwinder_unwind(r->u, &r->rec, st), 0);
	ck_assert_str_eq(name_of(&st->frames[0]), "ds_unwind_capture");
}

/* Through a signal handler: the trampoline is marked, the code the signal
 * interrupted is at its exact address, and its caller at its return
 * address minus one, as prunwind.h says (and perf shows). */
START_TEST(the_interrupted_frame_is_exact_and_its_callers_are_not)
{
	struct replay r;
	struct pr_stack st;

	unwind_scenario(ds_unwind_signalled, &r, &st);
	assert_signal_at(&st, 1, "ds_unwind_on_signal", interrupted_ip, "ds_unwind_interrupted");
	assert_caller_at(&st, 4, interrupted_ra, "ds_unwind_signalled");
	assert_trampolines(&st, 1u << 2);
	assert_reaches_main(&r, &st, 5);
	replay_free(&r);
}
END_TEST

/* A signal in a signal handler: each trampoline is marked, each
 * interrupted frame exact, and the stack goes on to main. */
START_TEST(nested_signal_frames_unwind_to_main)
{
	struct replay r;
	struct pr_stack st;

	unwind_scenario(ds_unwind_signalled_twice, &r, &st);
	assert_signal_at(&st, 1, "ds_unwind_on_nested", nested_ip,
			 "ds_unwind_interrupted_again");
	assert_caller_at(&st, 4, nested_ra, "ds_unwind_on_outer");
	assert_signal_at(&st, 4, "ds_unwind_on_outer", interrupted_ip, "ds_unwind_interrupted");
	assert_caller_at(&st, 7, interrupted_ra, "ds_unwind_signalled_twice");
	assert_trampolines(&st, 1u << 2 | 1u << 5);
	assert_reaches_main(&r, &st, 8);
	replay_free(&r);
}
END_TEST

/* On an alternate stack above the interrupted code: the frame the signal
 * interrupted is still found (its stack pointer goes down, which for any
 * other frame would end the stack as a loop), and the stack ends there,
 * its callers' stack not copied.  (How it ends is not asserted: as an
 * unwinder error, for now, where "truncated" or "outermost" would each
 * say something untrue.) */
START_TEST(a_handler_on_an_alternate_stack_reaches_the_interrupted_frame)
{
	struct replay r;
	struct pr_stack st;

	unwind_scenario(ds_unwind_on_alt_stack, &r, &st);
	assert_signal_at(&st, 1, "ds_unwind_on_signal", interrupted_ip, "ds_unwind_interrupted");
	ck_assert_msg(st.nr == 4 && st.end != PR_END_DEPTH && st.end != PR_END_OUTERMOST,
		      "%zu frames, ended: %s", (size_t)st.nr, pr_stack_end_name(st.end));
	assert_trampolines(&st, 1u << 2);
	replay_free(&r);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("unwind");
	TCase *tc = tcase_create("self");

	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, a_snapshot_through_qsort_unwinds_to_the_exact_chain);
	tcase_add_test(tc, a_short_snapshot_ends_truncated);
	tcase_add_test(tc, the_depth_limit_holds);
	tcase_add_test(tc, corrupt_snapshots_end_cleanly);
	tcase_add_test(tc, kernel_frames_sit_above_the_user_stack);
	tcase_add_test(tc, statistics_count_stacks_by_how_they_ended);
	tcase_add_test(tc, compiled_rules_agree_with_libunwind);
	tcase_add_test(tc, code_without_cfi_is_crossed_by_frame_pointer);
	tcase_add_test(tc, jit_code_is_crossed_by_frame_pointer);
	tcase_add_test(tc, a_return_address_in_a_register_unwinds);
	tcase_add_test(tc, a_deleted_and_replaced_library_still_resolves);
	tcase_add_test(tc, the_interrupted_frame_is_exact_and_its_callers_are_not);
	tcase_add_test(tc, nested_signal_frames_unwind_to_main);
	tcase_add_test(tc, a_handler_on_an_alternate_stack_reaches_the_interrupted_frame);
	/* A binary with a debug section of its own (DS_OWN_DEBUG_SECTION) is
	 * one libdw reads no debug file for. */
	if (getenv("DS_STRIPPED") && !getenv("DS_OWN_DEBUG_SECTION"))
		tcase_add_test(tc, the_debug_file_that_unwinds_also_names);
	suite_add_tcase(s, tc);
	return run_suite(s);
}
