/* SPDX-License-Identifier: MIT */
/*
 * sigchain.h - deliver a signal the way the previous action would have
 * (src/sigchain.c). Never installed.
 *
 * ntmem installs a handler of its own for a signal a program may handle
 * too: SIGBUS (mc.c: ntm_copy_mc()'s fixups and the write fault guards)
 * and, in the checking library, SIGSEGV (watch/watch.c: the checker's
 * write-protection faults). A signal that is not ntmem's is passed to
 * ntm_sigchain_deliver(), which does what the kernel would have done with
 * the action ntmem's handler replaced:
 *
 *   a handler    with SA_SIGINFO called as (sig, si, ctx), without as
 *                (sig); while it runs this thread's mask has the action's
 *                sa_mask added, and the signal itself blocked unless the
 *                action has SA_NODEFER (unblocked if it has, whatever
 *                ntmem's own handler blocked); the mask is put back when
 *                it returns. SA_RESETHAND: this delivery is the last, the
 *                next ones see SIG_DFL, as the kernel would have reset it.
 *   SIG_IGN      a signal sent with kill(), raise() or sigqueue()
 *                (si_code <= 0) is ignored; a fault the kernel raised
 *                cannot be (the kernel would kill the process): the
 *                default action, below.
 *   SIG_DFL      the caller's before_default() hook runs (the checker
 *                judges the program's pending lines), the default action
 *                is restored, the signal unblocked for this thread, and
 *                raised again when it was sent; a fault is left to happen
 *                again when the handler returns. The process dies of the
 *                signal (a core dump included) exactly as without ntmem.
 *
 * SA_ONSTACK and SA_RESTART of the previous action cannot be honoured
 * here (ntmem's handler already runs on its own terms); they are kept in
 * the record, so a program asking for its old action gets them back.
 *
 * The previous action is kept as immutable records: a handler on another
 * thread may be reading one while a new one is published, so a record is
 * never rewritten and never freed (every record stays linked from its
 * chain). The first record of a chain is static: keeping it allocates
 * nothing and cannot fail, which ntm_copy_mc()'s implicit install relies
 * on.
 *
 * A program that installs its own handler after ntmem's:
 *
 *   SIGSEGV (the checker): the preload shim (watch/preload.c) hands the
 *     program's sigaction() and signal() to the checker, which keeps the
 *     action as this chain's newest record instead of installing it; the
 *     checker's handler stays and delivers to it.
 *   SIGBUS (ntm_copy_mc()): nothing intercepts sigaction(), so the
 *     program's handler replaces ntmem's in the kernel. From then on every
 *     SIGBUS goes to the program's handler, a poisoned ntm_copy_mc() and a
 *     write guard's fault included: the copy no longer recovers (ntmem's
 *     install is done once, ntm_copy_mc() does not look again) until the
 *     program calls ntm_mc_install() again, which puts ntmem's handler
 *     back with the program's as the previous action (ntmem/mc.h says so;
 *     tests/unit/test_sigchain.c checks it).
 */
#ifndef NTMEM_SIGCHAIN_H
#define NTMEM_SIGCHAIN_H

#include <signal.h>
#include <stdbool.h>

/* One previous action: immutable once published. */
struct ntm_sigchain_record {
	struct sigaction sa;
	struct ntm_sigchain_record *kept_next;	/* every record of the chain */
};

/*
 * One signal's chain, static in its user:
 *
 *	static struct ntm_sigchain bus_chain = { .set_action = sigaction };
 */
struct ntm_sigchain {
	/*
	 * Installs the default action: sigaction(), or the real one past an
	 * interposer that would keep it instead (the checker's shim).
	 */
	int (*set_action)(int sig, const struct sigaction *act,
			  struct sigaction *old);
	/* NULL, or what must happen before the default action is taken. */
	void (*before_default)(int sig);

	/* The chain's state: zero to start with (SIG_DFL), private. */
	struct ntm_sigchain_record *current;	/* NULL: SIG_DFL */
	struct ntm_sigchain_record *kept;	/* every record, newest first */
	struct ntm_sigchain_record first;
	bool first_taken;
};

/*
 * A record to fill in (its sa) and publish, or to drop: the static first
 * one while unused, else allocated. NULL when there is no memory.
 */
struct ntm_sigchain_record *ntm_sigchain_new_record(struct ntm_sigchain *c);
/* @r becomes the previous action; it is never changed or freed after. */
void ntm_sigchain_publish(struct ntm_sigchain *c, struct ntm_sigchain_record *r);
/* Give back a record that was never published. */
void ntm_sigchain_drop(struct ntm_sigchain *c, struct ntm_sigchain_record *r);

/* A copy of @act published as the previous action: 0 or -ENOMEM. */
int ntm_sigchain_keep(struct ntm_sigchain *c, const struct sigaction *act);
/* The previous action into @out (SIG_DFL when none was kept). */
void ntm_sigchain_get(const struct ntm_sigchain *c, struct sigaction *out);

/*
 * Signal @sig (@si, @ctx as ntmem's SA_SIGINFO handler got them) given
 * the action of the previous record, as above. Async-signal-safe. It
 * returns unless the process dies; a handler may also leave it with
 * siglongjmp().
 */
void ntm_sigchain_deliver(struct ntm_sigchain *c, int sig, siginfo_t *si,
			  void *ctx);

/*
 * @sig is never blocked while a handler of any chain runs, whatever its
 * sa_mask says: the checker's SIGSEGV, whose write faults a handler's
 * stores to a watched page need (watch/watch_signals.c).
 */
void ntm_sigchain_keep_open(int sig);

#endif /* NTMEM_SIGCHAIN_H */
