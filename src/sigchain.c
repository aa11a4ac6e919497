// SPDX-License-Identifier: MIT
/*
 * sigchain.c - deliver a signal the way the previous action would have:
 * the handler with the kernel's mask rules, SIG_IGN, SIG_DFL and
 * SA_RESETHAND (the rules are in sigchain.h).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "sigchain.h"

/* A signal no delivery blocks (0: none); ntm_sigchain_keep_open(). */
static int open_sig;

void ntm_sigchain_keep_open(int sig)
{
	__atomic_store_n(&open_sig, sig, __ATOMIC_RELAXED);
}

/*
 * This thread's mask, changed by the kernel directly: an interposer on
 * pthread_sigmask() (the checker's shim, which keeps the program's view
 * of its mask) must not take ntmem's own changes for the program's.
 */
static void set_mask(int how, const sigset_t *set, sigset_t *old)
{
	syscall(SYS_rt_sigprocmask, how, set, old, _NSIG / 8);
}

/*
 * What an SA_RESETHAND action becomes once delivered. Shared by every
 * chain and never written: the records it replaces stay on their chain's
 * kept list.
 */
static struct ntm_sigchain_record reset_record = {
	.sa = { .sa_handler = SIG_DFL },
};

struct ntm_sigchain_record *ntm_sigchain_new_record(struct ntm_sigchain *c)
{
	struct ntm_sigchain_record *r;

	if (!__atomic_exchange_n(&c->first_taken, true, __ATOMIC_ACQ_REL))
		r = &c->first;
	else
		r = malloc(sizeof(*r));
	if (r)
		memset(r, 0, sizeof(*r));
	return r;
}

void ntm_sigchain_publish(struct ntm_sigchain *c, struct ntm_sigchain_record *r)
{
	/* Linked first, so the record is reachable for as long as it lives. */
	r->kept_next = __atomic_load_n(&c->kept, __ATOMIC_RELAXED);
	while (!__atomic_compare_exchange_n(&c->kept, &r->kept_next, r, true,
					    __ATOMIC_RELEASE, __ATOMIC_RELAXED))
		;
	__atomic_store_n(&c->current, r, __ATOMIC_RELEASE);
}

void ntm_sigchain_drop(struct ntm_sigchain *c, struct ntm_sigchain_record *r)
{
	if (r == &c->first)
		__atomic_store_n(&c->first_taken, false, __ATOMIC_RELEASE);
	else
		free(r);
}

int ntm_sigchain_keep(struct ntm_sigchain *c, const struct sigaction *act)
{
	struct ntm_sigchain_record *r = ntm_sigchain_new_record(c);

	if (!r)
		return -ENOMEM;
	r->sa = *act;
	ntm_sigchain_publish(c, r);
	return 0;
}

void ntm_sigchain_get(const struct ntm_sigchain *c, struct sigaction *out)
{
	const struct ntm_sigchain_record *r =
		__atomic_load_n(&c->current, __ATOMIC_ACQUIRE);

	if (r) {
		*out = r->sa;
		return;
	}
	memset(out, 0, sizeof(*out));
	out->sa_handler = SIG_DFL;
	sigemptyset(&out->sa_mask);
}

/*
 * The default action, which for the signals ntmem handles ends the
 * process: a signal that was sent is raised again, unblocked, and kills
 * here; a fault happens again when ntmem's handler returns and kills
 * there (the kernel restores the interrupted mask, and a fault it cannot
 * deliver kills anyway).
 */
static void take_default(struct ntm_sigchain *c, int sig, bool sent)
{
	struct sigaction dfl;
	sigset_t set;

	if (c->before_default)
		c->before_default(sig);
	memset(&dfl, 0, sizeof(dfl));
	dfl.sa_handler = SIG_DFL;
	sigemptyset(&dfl.sa_mask);
	c->set_action(sig, &dfl, NULL);
	sigemptyset(&set);
	sigaddset(&set, sig);
	set_mask(SIG_UNBLOCK, &set, NULL);
	if (sent)
		raise(sig);
}

/*
 * The handler of @sa, with the mask the kernel would have given it: the
 * interrupted code's plus sa_mask, and the signal itself unless
 * SA_NODEFER. ntmem's own handlers add nothing to the mask but (without
 * SA_NODEFER) the signal, so this thread's mask now, with the signal
 * taken out or put in, is that mask.
 */
static void call_handler(const struct sigaction *sa, int sig, siginfo_t *si,
			 void *ctx)
{
	sigset_t run, saved;

	int keep_open = __atomic_load_n(&open_sig, __ATOMIC_RELAXED);

	set_mask(SIG_SETMASK, NULL, &saved);
	sigorset(&run, &saved, &sa->sa_mask);
	if (sa->sa_flags & SA_NODEFER)
		sigdelset(&run, sig);
	else
		sigaddset(&run, sig);
	if (keep_open)
		sigdelset(&run, keep_open);
	set_mask(SIG_SETMASK, &run, NULL);
	if (sa->sa_flags & SA_SIGINFO)
		sa->sa_sigaction(sig, si, ctx);
	else
		sa->sa_handler(sig);
	set_mask(SIG_SETMASK, &saved, NULL);
}

void ntm_sigchain_deliver(struct ntm_sigchain *c, int sig, siginfo_t *si,
			  void *ctx)
{
	struct ntm_sigchain_record *r =
		__atomic_load_n(&c->current, __ATOMIC_ACQUIRE);
	bool sent = !si || si->si_code <= 0;	/* kill(), raise(), sigqueue() */

	for (;;) {
		/*
		 * SIG_DFL and SIG_IGN first, whatever the flags say: with
		 * SA_SIGINFO they are the same values of the same union.
		 */
		if (!r || r->sa.sa_handler == SIG_DFL) {
			take_default(c, sig, sent);
			return;
		}
		if (r->sa.sa_handler == SIG_IGN) {
			if (!sent)	/* the kernel would not ignore a fault */
				take_default(c, sig, sent);
			return;
		}
		if (!(r->sa.sa_flags & SA_RESETHAND))
			break;
		/*
		 * Delivered once: SIG_DFL from now on. Of two threads
		 * delivering at once, one wins the exchange and calls the
		 * handler; the other sees what replaced it.
		 */
		if (__atomic_compare_exchange_n(&c->current, &r, &reset_record,
						false, __ATOMIC_ACQ_REL,
						__ATOMIC_ACQUIRE))
			break;
	}
	call_handler(&r->sa, sig, si, ctx);
}
