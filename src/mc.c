// SPDX-License-Identifier: MIT
/*
 * mc.c - the SIGBUS handler behind ntm_copy_mc(): a fault at one of the
 * copy's two loads (x86_64/copy_mc.S) resumes at its fixup; any other
 * SIGBUS goes to the handler the process had before.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <string.h>
#include <ucontext.h>

#include "internal.h"
#include "ntmem/mc.h"

#if defined(__x86_64__)
size_t ntm_copy_mc_asm(void *dst, const void *src, size_t n);
/* Labels in copy_mc.S: the loads that may fault and their fixups. */
extern const char ntm_copy_mc_bulk[], ntm_copy_mc_tail[];
extern const char ntm_copy_mc_byte[], ntm_copy_mc_fail[];

static struct sigaction previous;
static pthread_once_t installed = PTHREAD_ONCE_INIT;

static void on_sigbus(int sig, siginfo_t *si, void *ctx)
{
	ucontext_t *uc = ctx;
	greg_t *ip = &uc->uc_mcontext.gregs[REG_RIP];

	/*
	 * Only a fault the kernel raised at one of the copy's loads is ours:
	 * a SIGBUS sent with kill() or pthread_kill() (si_code <= 0) while a
	 * thread happens to be copying belongs to the application.
	 */
	if (si->si_code <= 0)
		goto not_ours;
	if (*ip == (greg_t)ntm_copy_mc_bulk) {
		*ip = (greg_t)ntm_copy_mc_tail;
		return;
	}
	if (*ip == (greg_t)ntm_copy_mc_byte) {
		*ip = (greg_t)ntm_copy_mc_fail;
		return;
	}
not_ours:
	/* The application's handler, or the default action. */
	if (previous.sa_flags & SA_SIGINFO) {
		previous.sa_sigaction(sig, si, ctx);
	} else if (previous.sa_handler != SIG_DFL &&
		   previous.sa_handler != SIG_IGN) {
		previous.sa_handler(sig);
	} else {
		/*
		 * Returning re-executes the faulting instruction, which now
		 * meets the default action: the process dies of SIGBUS as it
		 * would have without ntmem.
		 */
		signal(sig, SIG_DFL);
	}
}

int ntm_mc_install(void)
{
	struct sigaction sa, old;

	memset(&sa, 0, sizeof(sa));
	sa.sa_sigaction = on_sigbus;
	sa.sa_flags = SA_SIGINFO | SA_ONSTACK | SA_NODEFER;
	sigemptyset(&sa.sa_mask);
	if (sigaction(SIGBUS, &sa, &old))
		return ntm_error(-errno, "SIGBUS: cannot install the handler");
	/* Reinstalling must not chain to ourselves. */
	if (old.sa_sigaction != on_sigbus)
		previous = old;
	return 0;
}

static void install_once(void)
{
	ntm_mc_install();
}

size_t ntm_copy_mc(void *dst, const void *src, size_t n)
{
	pthread_once(&installed, install_once);
	return ntm_copy_mc_asm(dst, src, n);
}
#else
int ntm_mc_install(void)
{
	return 0;
}

/* No fixup on this architecture yet: an ordinary copy, which cannot fail. */
size_t ntm_copy_mc(void *dst, const void *src, size_t n)
{
	memcpy(dst, src, n);
	return 0;
}
#endif
