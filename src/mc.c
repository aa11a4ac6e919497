// SPDX-License-Identifier: MIT
/*
 * mc.c - the SIGBUS handler behind ntm_copy_mc() and the write fault
 * guard: a fault at one of the copy's two loads (<arch>/copy_mc.S)
 * resumes at its fixup; a fault inside an armed write guard jumps back to
 * its caller; any other SIGBUS gets exactly the action it would have had
 * without ntmem (sigchain.h: the previous action's records and their
 * delivery, and what happens when a program sets its own SIGBUS handler
 * after ntmem's).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <string.h>
#include <ucontext.h>

#include "error.h"
#include "fault.h"
#include "ntmem/mc.h"
#include "sigchain.h"

/*
 * The action the process had before ntmem's, one record per
 * ntm_mc_install() that replaced another handler. The first record is
 * static, so the install that ntm_copy_mc() and the write guards make
 * implicitly allocates nothing and cannot fail: a copy never runs without
 * its recovery for want of a few bytes of memory. The default action is
 * put back with sigaction() itself: where the checker's shim interposes
 * it, the checker stands in for SIG_DFL and judges before the death.
 * Installs are serialised; the handler never takes this lock.
 */
static struct ntm_sigchain bus_chain = { .set_action = sigaction };
static pthread_mutex_t install_lock = PTHREAD_MUTEX_INITIALIZER;
static bool installed_done;	/* set once installed: skips the lock */
/*
 * initial-exec: a guard is armed and disarmed on every block write, and
 * the default model for a shared library costs a __tls_get_addr() call
 * each time; 8 bytes of static TLS are always available.
 */
static __thread struct ntm_fault_guard *armed_guard
	__attribute__((tls_model("initial-exec")));

static void on_sigbus(int sig, siginfo_t *si, void *ctx)
{
	struct ntm_fault_guard *g = armed_guard;

	/*
	 * Only a fault the kernel raised is ours: a SIGBUS sent with kill()
	 * or pthread_kill() (si_code <= 0) while a thread happens to be
	 * copying belongs to the application.
	 */
	if (si->si_code > 0) {
		uintptr_t addr = (uintptr_t)si->si_addr;

		if (g && addr >= g->lo && addr < g->hi) {
			armed_guard = NULL;
			g->addr = addr;
			/* No signal mask to restore: SA_NODEFER kept it. */
			siglongjmp(g->env, 1);
		}
		if (ntm_mc_fixup(ctx))
			return;
	}
	/* Not ntmem's: the application's handler, or the action before. */
	ntm_sigchain_deliver(&bus_chain, sig, si, ctx);
}

/* ntm_mc_install() with install_lock held. */
static int install_locked(void)
{
	struct ntm_sigchain_record *p = ntm_sigchain_new_record(&bus_chain);
	struct sigaction sa;

	if (!p)
		return ntm_error(-ENOMEM, "SIGBUS: no memory");
	memset(&sa, 0, sizeof(sa));
	sa.sa_sigaction = on_sigbus;
	/*
	 * SA_NODEFER: a write guard leaves the handler with siglongjmp()
	 * and no mask to restore, and a fault inside an application's
	 * handler is not held back.
	 */
	sa.sa_flags = SA_SIGINFO | SA_ONSTACK | SA_NODEFER;
	sigemptyset(&sa.sa_mask);
	if (sigaction(SIGBUS, &sa, &p->sa)) {
		int err = -errno;

		ntm_sigchain_drop(&bus_chain, p);
		return ntm_error(err, "SIGBUS: cannot install the handler");
	}
	/* Reinstalling must not chain to ourselves: keep what we had. */
	if (p->sa.sa_sigaction == on_sigbus && (p->sa.sa_flags & SA_SIGINFO)) {
		ntm_sigchain_drop(&bus_chain, p);
		return 0;
	}
	ntm_sigchain_publish(&bus_chain, p);
	return 0;
}

int ntm_mc_install(void)
{
	int ret;

	pthread_mutex_lock(&install_lock);
	ret = install_locked();
	if (!ret)
		__atomic_store_n(&installed_done, true, __ATOMIC_RELEASE);
	pthread_mutex_unlock(&install_lock);
	return ret;
}

/* Once installed, by anyone; a failed install is tried again next time. */
void ntm_mc_install_once(void)
{
	if (__atomic_load_n(&installed_done, __ATOMIC_ACQUIRE))
		return;
	pthread_mutex_lock(&install_lock);
	if (!installed_done && install_locked() == 0)
		__atomic_store_n(&installed_done, true, __ATOMIC_RELEASE);
	pthread_mutex_unlock(&install_lock);
}

void ntm_fault_guard_arm(struct ntm_fault_guard *g, const void *p, size_t n)
{
	ntm_mc_install_once();
	g->lo = (uintptr_t)p;
	g->hi = (uintptr_t)p + n;
	g->addr = 0;
	armed_guard = g;
}

void ntm_fault_guard_disarm(void)
{
	armed_guard = NULL;
}

#if defined(__x86_64__)
size_t ntm_copy_mc_asm(void *dst, const void *src, size_t n);
/* Labels in copy_mc.S: the loads that may fault and their fixups. */
extern const char ntm_copy_mc_bulk[], ntm_copy_mc_tail[];
extern const char ntm_copy_mc_byte[], ntm_copy_mc_fail[];

bool ntm_mc_fixup(void *ctx)
{
	ucontext_t *uc = ctx;
	greg_t *ip = &uc->uc_mcontext.gregs[REG_RIP];

	if (*ip == (greg_t)ntm_copy_mc_bulk) {
		*ip = (greg_t)ntm_copy_mc_tail;
		return true;
	}
	if (*ip == (greg_t)ntm_copy_mc_byte) {
		*ip = (greg_t)ntm_copy_mc_fail;
		return true;
	}
	return false;
}

size_t ntm_copy_mc(void *dst, const void *src, size_t n)
{
	ntm_mc_install_once();
	return ntm_copy_mc_asm(dst, src, n);
}
#elif defined(__aarch64__)
size_t ntm_copy_mc_asm(void *dst, const void *src, size_t n);
/* Labels in aarch64/copy_mc.S: the loads that may fault and their fixups. */
extern const char ntm_copy_mc_bulk[], ntm_copy_mc_tail[];
extern const char ntm_copy_mc_byte[], ntm_copy_mc_fail[];

bool ntm_mc_fixup(void *ctx)
{
	ucontext_t *uc = ctx;
	unsigned long long *pc = &uc->uc_mcontext.pc;

	if (*pc == (uintptr_t)ntm_copy_mc_bulk) {
		*pc = (uintptr_t)ntm_copy_mc_tail;
		return true;
	}
	if (*pc == (uintptr_t)ntm_copy_mc_byte) {
		*pc = (uintptr_t)ntm_copy_mc_fail;
		return true;
	}
	return false;
}

size_t ntm_copy_mc(void *dst, const void *src, size_t n)
{
	ntm_mc_install_once();
	return ntm_copy_mc_asm(dst, src, n);
}
#else
bool ntm_mc_fixup(void *ctx)
{
	(void)ctx;
	return false;
}

/* No fixup on this architecture yet: an ordinary copy, which cannot fail. */
size_t ntm_copy_mc(void *dst, const void *src, size_t n)
{
	memcpy(dst, src, n);
	return 0;
}
#endif
