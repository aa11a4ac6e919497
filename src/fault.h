/* SPDX-License-Identifier: MIT */
/*
 * fault.h - turn a SIGBUS on a write into an error return. Never installed.
 *
 * A store into a file mapping faults when the page is gone (the file was
 * truncated underneath) or cannot be allocated (a sparse file on a full
 * file system). The block device's writes run inside a guard: the SIGBUS
 * handler of mc.c sees a kernel-raised fault at an address inside the
 * armed range and jumps back to the guard's sigsetjmp(), which then
 * returns 1 instead of the process dying.
 *
 * sigsetjmp(env, 0) saves no signal mask, so arming costs no system call:
 * a few stores per request, never per copy. The guard is per thread.
 *
 *	struct ntm_fault_guard g;
 *
 *	if (sigsetjmp(g.env, 0))
 *		return -EIO;		// g.addr is the faulting address
 *	ntm_fault_guard_arm(&g, base, len);
 *	... stores into [base, base + len) ...
 *	ntm_fault_guard_disarm();
 *
 * Between arm and disarm the code must not leave the function that called
 * sigsetjmp(), and locals it changes must be volatile to be read after a
 * fault (C11 7.13.2.1).
 */
#ifndef NTMEM_FAULT_H
#define NTMEM_FAULT_H

#include <setjmp.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct ntm_fault_guard {
	sigjmp_buf env;
	uintptr_t lo, hi;	/* the guarded range */
	uintptr_t addr;		/* after a fault: where it happened */
};

/* Install the handler (once per process) and arm @g over [p, p + n). */
void ntm_fault_guard_arm(struct ntm_fault_guard *g, const void *p, size_t n);
void ntm_fault_guard_disarm(void);

/* Install ntmem's SIGBUS handler if this process has not yet. */
void ntm_mc_install_once(void);
/*
 * Move an interrupted ntm_copy_mc() to its fixup: true when @ctx (a
 * ucontext_t) stopped at one of its faulting loads.
 */
bool ntm_mc_fixup(void *ctx);

#endif /* NTMEM_FAULT_H */
