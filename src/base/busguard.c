/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Files this library reads through a mapping (an address index from the
 * cache, a capture) may be cut short while mapped: by `truncate`, by a
 * `cp` or `rsync --inplace` over them.  The kernel then takes away the
 * pages past the file's new end, and the next read of one is a SIGBUS,
 * which kills the process: an agent that has run for weeks, or a profile
 * a Ctrl-C would have kept.  (A file replaced by a rename, as the cache
 * and perf record replace theirs, leaves the mapping as it was.)
 *
 * So a mapping is registered here, and the first time one is, a SIGBUS
 * handler is installed for the process.  A fault in a registered mapping
 * is mended there: the rest of the mapping, from the faulting page on,
 * is mapped again as zero-filled memory of its own, the read goes on and
 * finds zeros, and the registration says it was hit.  The mapping's
 * owner asks that after using it, and drops what it read (an index is
 * built again, a capture is read up to where the file now ends).  Any
 * other SIGBUS goes to the handler installed before, or takes its
 * default action (a core dump), as it would have without this one.
 *
 * The handler reads the table with atomic loads only, and calls nothing
 * but mmap(2) (a system call, async-signal-safe in practice on Linux,
 * not by POSIX's list) and the handler before it.
 */
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <sys/mman.h>
#include <unistd.h>

#include "base/base.h"

/* Mappings guarded at once: an agent holds a few thousand indexes at
 * most (its cache's bound); past this, a mapping is not guarded, and its
 * owner reads the file another way. */
#define GUARD_SLOTS 8192

/* start 0: free; 1: being filled in; otherwise the mapping's start. */
static struct guard_slot {
	_Atomic uintptr_t start;
	_Atomic size_t len;
	atomic_bool hit;
	_Atomic size_t zeroed;        /* zeros from this offset on (len: none) */
} slots[GUARD_SLOTS];
static _Atomic size_t nr_slots;          /* slots ever used: the handler's scan */
uint64_t pr__busguard_nr_hits;  /* base.h; __atomic_* only */
static struct sigaction before;
static uintptr_t page_size;
static pthread_once_t installed = PTHREAD_ONCE_INIT;
static int install_err;

/* The fault, if in a registered mapping, mended: true. */
static bool mend(uintptr_t addr)
{
	size_t n = atomic_load(&nr_slots);

	for (size_t i = 0; i < n; i++) {
		struct guard_slot *g = &slots[i];
		uintptr_t start = atomic_load(&g->start);
		size_t len = atomic_load(&g->len);
		uintptr_t from, to;

		if (start <= 1 || addr < start || addr - start >= len)
			continue;
		from = addr & ~(page_size - 1);
		to = (start + len + page_size - 1) & ~(page_size - 1);
		/* Writable as well: a private mapping may be written (libdwfl
		 * relocates in place), and zeros of its own cost nothing. */
		if (mmap((void *)from, to - from, PROT_READ | PROT_WRITE,
			 MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED, -1, 0) == MAP_FAILED)
			return false;
		/* (The lowest: a later fault is past an earlier one's zeros.) */
		for (size_t z = atomic_load(&g->zeroed);
		     from - start < z && !atomic_compare_exchange_weak(&g->zeroed, &z, from - start);)
			;
		atomic_store(&g->hit, true);
		__atomic_fetch_add(&pr__busguard_nr_hits, 1, __ATOMIC_RELAXED);
		return true;
	}
	return false;
}

static void on_sigbus(int sig, siginfo_t *si, void *uc)
{
	bool sent = !si || si->si_code <= 0;
	sigset_t mask;

	/* A fault (si_code > 0), not a SIGBUS sent by kill(). */
	if (!sent && mend((uintptr_t)si->si_addr))
		return;
	if (before.sa_handler == SIG_IGN && !(before.sa_flags & SA_SIGINFO) && sent)
		return;
	if ((before.sa_flags & SA_SIGINFO) ||
	    (before.sa_handler != SIG_DFL && before.sa_handler != SIG_IGN)) {
		/* As the kernel would have run it: its mask added, and
		 * SIGBUS left unblocked if it asked for that (a handler that
		 * jumps out of a fault with SA_NODEFER). */
		pthread_sigmask(SIG_BLOCK, &before.sa_mask, NULL);
		if (before.sa_flags & SA_NODEFER) {
			sigemptyset(&mask);
			sigaddset(&mask, sig);
			pthread_sigmask(SIG_UNBLOCK, &mask, NULL);
		}
		if (before.sa_flags & SA_SIGINFO)
			before.sa_sigaction(sig, si, uc);
		else
			before.sa_handler(sig);
		return;
	}
	/* The default action, as without this handler: a fault is taken
	 * again on return (a fault cannot be ignored), a signal sent is
	 * raised again. */
	signal(sig, SIG_DFL);
	if (sent)
		raise(sig);
}

static void install(void)
{
	struct sigaction sa = { 0 };

	page_size = (uintptr_t)sysconf(_SC_PAGESIZE);
	sa.sa_sigaction = on_sigbus;
	sa.sa_flags = SA_SIGINFO | SA_ONSTACK;
	sigemptyset(&sa.sa_mask);
	if (sigaction(SIGBUS, NULL, &before)) {
		install_err = -errno;
		return;
	}
	/* The one before's restart of calls a SIGBUS sent interrupts. */
	sa.sa_flags |= before.sa_flags & SA_RESTART;
	if (sigaction(SIGBUS, &sa, NULL))
		install_err = -errno;
}

int pr__busguard_add(const void *start, size_t len)
{
	pthread_once(&installed, install);
	if (install_err)
		return install_err;
	if (!start || !len)
		return -EINVAL;
	for (size_t i = 0; i < GUARD_SLOTS; i++) {
		struct guard_slot *g = &slots[i];
		uintptr_t free_slot = 0;

		if (!atomic_compare_exchange_strong(&g->start, &free_slot, 1))
			continue;
		atomic_store(&g->hit, false);
		atomic_store(&g->zeroed, len);
		atomic_store(&g->len, len);
		atomic_store(&g->start, (uintptr_t)start);
		/* (Grown, never shrunk: a free slot below it is skipped.) */
		for (size_t n = atomic_load(&nr_slots); n < i + 1 &&
		     !atomic_compare_exchange_weak(&nr_slots, &n, i + 1);)
			;
		return (int)i;
	}
	return -ENOSPC;
}

void pr__busguard_remove(int slot)
{
	if (slot < 0 || slot >= GUARD_SLOTS)
		return;
	atomic_store(&slots[slot].len, 0);
	atomic_store(&slots[slot].hit, false);
	atomic_store(&slots[slot].start, 0);
}

bool pr__busguard_hit(int slot)
{
	return slot >= 0 && slot < GUARD_SLOTS && atomic_load(&slots[slot].hit);
}

size_t pr__busguard_zeroed(int slot)
{
	return slot >= 0 && slot < GUARD_SLOTS && atomic_load(&slots[slot].hit) ?
		       atomic_load(&slots[slot].zeroed) : SIZE_MAX;
}
