/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The threads already off the CPU when sampling starts (prreader.h): a
 * snapshot of each before the events are enabled, and, once they are,
 * the switch out the kernel would have written for it.
 *
 * The snapshot is taken before enabling so that stopping the thread
 * (its wake-up, the stop, the restarted system call) is not itself
 * recorded as switches.  Whether the thread then stayed off the CPU
 * until sampling started is told by its context-switch counts
 * (/proc/PID/task/TID/status): a thread that ran in between switched
 * out at least once more, and its snapshot is dropped; its later waits
 * are measured ones.
 */
#include <errno.h>
#include <inttypes.h>
#include <linux/perf_event.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ptrace.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <unistd.h>

#include "capture/capture.h"
#include "capture/synth.h"

#if defined(__x86_64__)
#include <asm/perf_regs.h>
#include <sys/user.h>
#endif

/* User registers as perf_regs numbers them (asm/perf_regs.h): enough for
 * every register a DWARF unwinder of x86-64 reads. */
#define NR_REGS 24
#define REG_BP 6
#define REG_SP 7
#define REG_IP 8

struct snapshot {
	uint32_t pid, tid, cpu;
	uint64_t regs[NR_REGS];
	unsigned char *stack;        /* `stack_len` bytes from regs[SP] */
	size_t stack_len;
	uint64_t switches;           /* context switches once it blocked again */
};

struct pr_blocked {
	struct snapshot *t;
	size_t nr, cap;
};

/* Its voluntary and involuntary context switches: -1 when it is gone. */
static int64_t switches_of(uint32_t tid)
{
	char v[32], n[32];

	if (!pr__status_field(tid, "voluntary_ctxt_switches", v, sizeof(v)) ||
	    !pr__status_field(tid, "nonvoluntary_ctxt_switches", n, sizeof(n)))
		return -1;
	return (int64_t)(strtoull(v, NULL, 10) + strtoull(n, NULL, 10));
}

/* Field 39 of its stat: the CPU it last ran on (the records name one). */
static uint32_t last_cpu(uint32_t pid, uint32_t tid)
{
	char path[64], buf[1024], *p;
	unsigned int cpu = 0;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%u/task/%u/stat", pid, tid);
	if (!(f = fopen(path, "re")))
		return 0;
	if (fgets(buf, sizeof(buf), f) && (p = strrchr(buf, ')'))) {
		/* Field 3 (the state) follows ")": 36 more to 39. */
		for (int field = 2; p && field < 39; field++)
			p = strchr(p + 1, ' ');
		if (p)
			sscanf(p + 1, "%u", &cpu);
	}
	fclose(f);
	return cpu;
}

/* Up to `len` bytes of its stack from `sp`, page by page so that the
 * top of the stack mapping ends the copy rather than failing it, as the
 * kernel's copy does. */
static size_t read_stack(uint32_t pid, uint64_t sp, unsigned char *buf, size_t len)
{
	size_t done = 0;

	while (done < len) {
		size_t page = 4096 - ((sp + done) & 4095), n = len - done < page ? len - done : page;
		struct iovec local = { buf + done, n };
		struct iovec remote = { (void *)(uintptr_t)(sp + done), n };
		ssize_t got = process_vm_readv((pid_t)pid, &local, 1, &remote, 1, 0);

		if (got <= 0)
			break;
		done += (size_t)got;
	}
	return done;
}

#if defined(__x86_64__)
static void take_regs(struct snapshot *t, const struct user_regs_struct *r)
{
	const unsigned long long v[NR_REGS] = {
		[PERF_REG_X86_AX] = r->rax, [PERF_REG_X86_BX] = r->rbx, [PERF_REG_X86_CX] = r->rcx,
		[PERF_REG_X86_DX] = r->rdx, [PERF_REG_X86_SI] = r->rsi, [PERF_REG_X86_DI] = r->rdi,
		[PERF_REG_X86_BP] = r->rbp, [PERF_REG_X86_SP] = r->rsp, [PERF_REG_X86_IP] = r->rip,
		[PERF_REG_X86_FLAGS] = r->eflags, [PERF_REG_X86_CS] = r->cs,
		[PERF_REG_X86_SS] = r->ss, [PERF_REG_X86_DS] = r->ds, [PERF_REG_X86_ES] = r->es,
		[PERF_REG_X86_FS] = r->fs, [PERF_REG_X86_GS] = r->gs, [PERF_REG_X86_R8] = r->r8,
		[PERF_REG_X86_R9] = r->r9, [PERF_REG_X86_R10] = r->r10,
		[PERF_REG_X86_R11] = r->r11, [PERF_REG_X86_R12] = r->r12,
		[PERF_REG_X86_R13] = r->r13, [PERF_REG_X86_R14] = r->r14,
		[PERF_REG_X86_R15] = r->r15,
	};

	for (int i = 0; i < NR_REGS; i++)
		t->regs[i] = v[i];
}

/* Stop a thread, take its registers, let it go: 0, -ESRCH (gone), -EPERM
 * and kin (refused: the caller says why), or -EAGAIN (left out). */
static int regs_by_ptrace(struct snapshot *t, const struct pr_logger *lg)
{
	struct user_regs_struct r;
	int err;

	if (ptrace(PTRACE_SEIZE, (pid_t)t->tid, 0, 0))
		return -errno;
	err = pr__ptrace_interrupt((pid_t)t->tid, 0.5);
	/* A group stop (a stopped process) is a stop too: registers can be
	 * read, and letting it go leaves it stopped. */
	if (err == -EAGAIN)
		err = 0;
	if (err == -ESRCH)
		return err;
	if (!err && ptrace(PTRACE_GETREGS, (pid_t)t->tid, 0, &r))
		err = -errno;
	if (!err)
		take_regs(t, &r);
	if (ptrace(PTRACE_DETACH, (pid_t)t->tid, 0, 0) && errno != ESRCH) {
		pr__log(lg, PR_LOG_WARN, "thread %u of pid %u was not let go by ptrace (%s): "
			"it stays stopped until dwarfsample exits", t->tid, t->pid,
			strerror(errno));
	} else if (err == -ETIMEDOUT) {
		/* Not stopped yet: the interrupt is still pending, and a
		 * detach needs a stop.  It comes once its wait ends. */
		if (pr__ptrace_wait_stop((pid_t)t->tid, 2.0) > 0)
			ptrace(PTRACE_DETACH, (pid_t)t->tid, 0, 0);
		else
			pr__log(lg, PR_LOG_WARN, "thread %u of pid %u did not stop for ptrace "
				"within 2.5 s: it stops once its wait ends, until dwarfsample "
				"exits", t->tid, t->pid);
	}
	return err ? -EAGAIN : 0;
}
#endif

/* Whether the kernel has it off the CPU: /proc/PID/task/TID/syscall
 * says "running" unless the task has switched out for good
 * (wait_task_inactive()), when its context-switch counts are final. */
static bool inactive(uint32_t pid, uint32_t tid)
{
	char path[64], line[16] = "";
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%u/task/%u/syscall", pid, tid);
	if (!(f = fopen(path, "re")))
		return false;
	if (!fgets(line, sizeof(line), f))
		line[0] = 0;
	fclose(f);
	return line[0] && strncmp(line, "running", 7);
}

/*
 * Its context-switch count once it is off the CPU, waiting `tries` times
 * 50 us at most for it to get there (a system call it was in, restarted
 * as it was let go, blocks again within microseconds): -1 when it does
 * not, or is gone.
 */
static int64_t settled(uint32_t pid, uint32_t tid, int tries)
{
	struct pr_task_state ts;

	for (int i = 0; i < tries; i++) {
		if (pr__task_read((pid_t)pid, (pid_t)tid, &ts))
			return -1;
		if (ts.state != 'R' && inactive(pid, tid))
			return switches_of(tid);
		usleep(50);
	}
	return -1;
}

#if defined(__x86_64__)
/*
 * /proc/PID/task/TID/syscall, "NR ARGS... SP PC" (or "-1 SP PC" outside a
 * system call), read without stopping the thread: its system call's
 * number through *nr, SP and IP into its registers (the others are left
 * 0).  0, -EAGAIN when it runs, or a negative errno (-EACCES: refused).
 */
static int regs_from_syscall(struct snapshot *t, long *nr)
{
	char path[64], line[256], *last, *prev;
	FILE *f;
	int err = -EAGAIN;

	snprintf(path, sizeof(path), "/proc/%u/task/%u/syscall", t->pid, t->tid);
	if (!(f = fopen(path, "re")))
		return errno == ENOENT ? -ESRCH : -errno;
	if (fgets(line, sizeof(line), f) && strncmp(line, "running", 7)) {
		line[strcspn(line, "\n")] = 0;
		*nr = strtol(line, NULL, 10);
		last = strrchr(line, ' ');
		if (last) {
			*last = 0;
			prev = strrchr(line, ' ');
			if (prev) {
				t->regs[REG_SP] = strtoull(prev + 1, NULL, 16);
				t->regs[REG_IP] = strtoull(last + 1, NULL, 16);
				err = 0;
			}
		}
	}
	fclose(f);
	return err;
}

/*
 * The system calls a ptrace stop does not restart: they return EINTR to
 * the program once it is let go (signal(7), "Interruption of system calls
 * and library functions by stop signals"), which a debugger's attach
 * shows too.  A thread waiting in one is not stopped: its SP and PC
 * (/proc) unwind the frames whose CFA is kept relative to the SP, as
 * -O2 code without frame pointers keeps it.
 */
static bool not_restarted(long nr)
{
	switch (nr) {
	case SYS_epoll_wait:
	case SYS_epoll_pwait:
	case 441:                /* epoll_pwait2 */
	case SYS_semop:
	case SYS_semtimedop:
	case SYS_rt_sigtimedwait:
	case SYS_io_getevents:
	case 333:                /* io_pgetevents */
	case 426:                /* io_uring_enter */
		return true;
	default:
		return false;
	}
}

/*
 * The registers of a thread off the CPU: from /proc where stopping it
 * would change what it sees (in uninterruptible sleep, D, it would stop
 * only once its wait ended; a call from not_restarted()), else by
 * ptrace, which has them all.
 */
static int take_thread_regs(struct snapshot *t, char state, const struct pr_logger *lg)
{
	long nr = -1;
	int err = regs_from_syscall(t, &nr);

	if (state == 'D' || (!err && not_restarted(nr)))
		return err;
	return regs_by_ptrace(t, lg);
}
#endif

struct walk {
	struct pr_blocked *b;
	const struct perf_event_attr *attr;
	const struct pr_logger *lg;
	uint32_t pid;
	uint64_t deadline;
	bool late;
	unsigned int taken, dropped;
};

static int snapshot_thread(pid_t tid, void *arg)
{
	struct walk *w = arg;
	struct pr_task_state ts;
	struct snapshot *t;
	int64_t sw;
	int err;

	if (pr__task_read((pid_t)w->pid, tid, &ts) || ts.kthread)
		return 0;
	if (ts.state != 'S' && ts.state != 'D' && ts.state != 'T' && ts.state != 't')
		return 0;
	if (pr__monotonic_ns() > w->deadline) {
		w->late = true;
		return 1;
	}
	if (PR_ARRAY_RESERVE(w->b->t, w->b->cap, w->b->nr + 1))
		return -ENOMEM;
	t = &w->b->t[w->b->nr];
	memset(t, 0, sizeof(*t));
	t->pid = w->pid;
	t->tid = (uint32_t)tid;
#if defined(__x86_64__)
	err = take_thread_regs(t, ts.state, w->lg);
#else
	err = -EOPNOTSUPP;
#endif
	if (err == -EPERM || err == -EBUSY || err == -EACCES) {
		pr__ptrace_refused(w->pid, err, PR_LOG_WARN,
				   "the threads already off the CPU are left out", w->lg);
		return 1;
	}
	if (err || (sw = settled(w->pid, t->tid, 200)) < 0) {
		w->dropped += err != -ESRCH;
		return 0;
	}
	t->switches = (uint64_t)sw;
	t->cpu = last_cpu(w->pid, t->tid);
	t->stack_len = w->attr->sample_stack_user;
	if (t->stack_len && !(t->stack = malloc(t->stack_len)))
		return -ENOMEM;
	if (t->stack_len)
		t->stack_len = read_stack(w->pid, t->regs[REG_SP], t->stack,
					  t->stack_len);
	w->b->nr++;
	w->taken++;
	return 0;
}

struct pr_blocked *pr_blocked_snapshot(const pid_t *pids, size_t nr,
				       const struct perf_event_attr *attr,
				       const struct pr_blocked_opts *opts)
{
	struct pr_logger lg = { PR_OPTS_GET(opts, log, NULL), PR_OPTS_GET(opts, log_ctx, NULL) };
	double secs = PR_OPTS_GET(opts, max_seconds, 0.0);
	uint64_t start = pr__monotonic_ns();
	struct pr_blocked *b;

	if (!PR_OPTS_VALID(opts) || !attr || (nr && !pids) || secs < 0) {
		errno = EINVAL;
		return NULL;
	}
#if !defined(__x86_64__)
	errno = EOPNOTSUPP;
	return NULL;
#endif
	if (!(b = calloc(1, sizeof(*b))))
		return NULL;
	for (size_t i = 0; i < nr; i++) {
		struct walk w = { .b = b, .attr = attr, .lg = &lg, .pid = (uint32_t)pids[i],
				  .deadline = start + (uint64_t)((secs ? secs : 2.0) * 1e9) };
		int err = pr__proc_for_each(pids[i], snapshot_thread, &w);

		if (err == -ENOMEM) {
			pr_blocked_free(b);
			errno = ENOMEM;
			return NULL;
		}
		if (w.late)
			pr__log(&lg, PR_LOG_WARN, "pid %u: the threads already off the CPU took "
				"longer than %.1f s to look at: %u were, the others are left out",
				w.pid, secs ? secs : 2.0, w.taken);
		pr__log(&lg, PR_LOG_DEBUG, "pid %u: %u threads off the CPU taken, %u left out "
			"(they ran, or did not stop), in %.1f ms", w.pid, w.taken, w.dropped,
			(double)(pr__monotonic_ns() - start) / 1e6);
	}
	return b;
}

size_t pr_blocked_nr(const struct pr_blocked *b)
{
	return b ? b->nr : 0;
}

void pr_blocked_free(struct pr_blocked *b)
{
	if (!b)
		return;
	for (size_t i = 0; i < b->nr; i++)
		free(b->t[i].stack);
	free(b->t);
	free(b);
}

/* The sample fields these records can carry: the off-CPU event's. */
#define SAMPLE_FIELDS                                                                     \
	(PERF_SAMPLE_IDENTIFIER | PERF_SAMPLE_IP | PERF_SAMPLE_TID | PERF_SAMPLE_TIME |   \
	 PERF_SAMPLE_ID | PERF_SAMPLE_STREAM_ID | PERF_SAMPLE_CPU | PERF_SAMPLE_PERIOD |  \
	 PERF_SAMPLE_CALLCHAIN | PERF_SAMPLE_REGS_USER | PERF_SAMPLE_STACK_USER)

/* The most call chain entries a frame-pointer walk of the copy gives. */
#define MAX_CHAIN 127

/*
 * The user call chain the kernel's frame-pointer walk would give, from
 * the copied stack: the IP, then the return address above each saved
 * frame pointer, while they stay in the copy and climb.
 */
static size_t fp_chain(const struct snapshot *t, uint64_t *ips)
{
	uint64_t sp = t->regs[REG_SP], bp = t->regs[REG_BP];
	size_t n = 0;

	ips[n++] = PERF_CONTEXT_USER;
	ips[n++] = t->regs[REG_IP];
	while (n < MAX_CHAIN + 1 && bp >= sp && bp % 8 == 0 && bp - sp + 16 <= t->stack_len) {
		uint64_t next, ret;

		memcpy(&next, t->stack + (bp - sp), 8);
		memcpy(&ret, t->stack + (bp - sp) + 8, 8);
		if (!ret)
			break;
		ips[n++] = ret;
		if (next <= bp)
			break;
		bp = next;
	}
	return n;
}

static int emit_sample(struct pr__emitter *e, const struct snapshot *t, uint64_t time)
{
	const struct perf_event_attr *a = e->attr;
	uint64_t type = a->sample_type, ips[MAX_CHAIN + 2];
	size_t nr_ips = 0, size;
	struct synth *s = e->s;

	if (type & PERF_SAMPLE_CALLCHAIN && !a->exclude_callchain_user)
		nr_ips = fp_chain(t, ips);
	s->len = 0;
	synth_begin(s, PERF_RECORD_SAMPLE, PERF_RECORD_MISC_USER);
	if (type & PERF_SAMPLE_IDENTIFIER)
		synth_u64(s, e->id);
	if (type & PERF_SAMPLE_IP)
		synth_u64(s, t->regs[REG_IP]);
	if (type & PERF_SAMPLE_TID)
		synth_u32x2(s, t->pid, t->tid);
	if (type & PERF_SAMPLE_TIME)
		synth_u64(s, time);
	if (type & PERF_SAMPLE_ID)
		synth_u64(s, e->id);
	if (type & PERF_SAMPLE_STREAM_ID)
		synth_u64(s, e->id);
	if (type & PERF_SAMPLE_CPU)
		synth_u32x2(s, t->cpu, 0);
	if (type & PERF_SAMPLE_PERIOD)
		synth_u64(s, 1);
	if (type & PERF_SAMPLE_CALLCHAIN) {
		synth_u64(s, nr_ips);
		synth_bytes(s, ips, nr_ips * 8);
	}
	if (type & PERF_SAMPLE_REGS_USER) {
		synth_u64(s, PERF_SAMPLE_REGS_ABI_64);
		for (int i = 0; i < 64; i++)
			if (a->sample_regs_user & (UINT64_C(1) << i))
				synth_u64(s, i < NR_REGS ? t->regs[i] : 0);
	}
	if (type & PERF_SAMPLE_STACK_USER) {
		/* As the kernel does, less of the stack than asked when the
		 * record would pass its 16-bit size. */
		size = a->sample_stack_user;
		if (s->len + size + 16 > UINT16_MAX)
			size = (UINT16_MAX - s->len - 16) & ~(size_t)7;
		synth_u64(s, size);
		if (size) {
			size_t have = t->stack_len < size ? t->stack_len : size;

			memset(s->buf + s->len, 0, size);
			memcpy(s->buf + s->len, t->stack, have);
			s->len += size;
			synth_u64(s, have);
		}
	}
	return pr__emit_ended(e);
}

static int emit_switch_out(struct pr__emitter *e, const struct snapshot *t, uint64_t time)
{
	e->s->len = 0;
	synth_begin(e->s, PERF_RECORD_SWITCH,
		    PERF_RECORD_MISC_SWITCH_OUT | PR_RECORD_MISC_SWITCH_BEFORE_START);
	return pr__emit_at(e, t->pid, t->tid, time, t->cpu);
}

int pr_blocked_synthesize(const struct pr_blocked *b, const struct perf_event_attr *attr,
			  uint64_t id, uint64_t time, pr_record_fn cb, void *ctx)
{
	struct pr__emitter e;
	int err, n = 0;

	if (!b || !attr || !cb)
		return -EINVAL;
	if ((attr->sample_type & ~(uint64_t)SAMPLE_FIELDS) || !attr->sample_id_all)
		return -EOPNOTSUPP;
	err = pr__emitter_init(&e, attr, id, cb, ctx);
	for (size_t i = 0; !err && i < b->nr; i++) {
		const struct snapshot *t = &b->t[i];

		/* It ran since (or runs): its waits from now on are the
		 * kernel's. */
		if (settled(t->pid, t->tid, 1) != (int64_t)t->switches)
			continue;
		err = emit_sample(&e, t, time);
		if (!err)
			err = emit_switch_out(&e, t, time);
		n += !err;
	}
	free(e.s);
	return err ? err : n;
}
