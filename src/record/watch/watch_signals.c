// SPDX-License-Identifier: MIT
/*
 * watch_signals.c - the checker's signals: the SIGSEGV handler that sees a
 * program's first store to a watched page, the handler that stands in for
 * SIG_DFL of the signals that end the program (so that what is known is
 * judged before it dies), and the preload shim's requests: the program's
 * sigaction() of those signals, its signal masks, and the stores and
 * unmappings the shim sees coming that the kernel would make without a
 * fault.
 *
 * SIGSEGV is never blocked in fact while the checker watches: a write
 * fault with SIGSEGV blocked is not delivered, the kernel kills the
 * process. A thread's mask as the program set it (with SIGSEGV blocked or
 * not) is its "view", kept per thread: pthread_sigmask() and
 * sigprocmask() return it and change it, while the real mask keeps
 * SIGSEGV open (the shim's wrappers; sa_mask of every handler and the
 * temporary masks of sigsuspend(), pselect(), ppoll(), epoll_pwait() lose
 * SIGSEGV the same way). A fault that is not the checker's, in a thread
 * whose view blocks SIGSEGV, ends the process as the kernel would have
 * (SIG_DFL, core dump); a SIGSEGV sent by kill() meanwhile waits until
 * the view unblocks it.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <execinfo.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <ucontext.h>

#include "sigchain.h"
#include "watch/watch_internal.h"

/* --- the fault handler ---------------------------------------------------- */

static void *fault_pc(const void *ucv)
{
	const ucontext_t *uc = ucv;

#if defined(__x86_64__)
	return (void *)uc->uc_mcontext.gregs[REG_RIP];
#elif defined(__aarch64__)
	return (void *)uc->uc_mcontext.pc;
#else
	(void)uc;
	return NULL;
#endif
}

/* The frames of a fault: from the faulting instruction on. */
static int fault_frames(const void *ucv, void **frames)
{
	void *all[MAX_FRAMES + 8];
	void *pc = fault_pc(ucv);
	int n = backtrace(all, MAX_FRAMES + 8);

	for (int i = 0; i < n; i++) {
		if (all[i] != pc)
			continue;
		n -= i;
		if (n > MAX_FRAMES)
			n = MAX_FRAMES;
		memcpy(frames, all + i, sizeof(void *) * (size_t)n);
		return n;
	}
	frames[0] = pc;
	return pc ? 1 : 0;
}

/* A write fault at @addr: ours when it hit a protected watched page. */
static bool take_fault(uintptr_t addr, const void *ucv)
{
	void *frames[MAX_FRAMES];
	int n = fault_frames(ucv, frames);
	uintptr_t a = watch_page_down(addr);
	struct wrange *r;
	int err;

	watch_lock();
	r = watch_range_of(a);
	/* A page the program made read-only faults for the program. */
	if (!r || !(watch_prog_prot(r, a) & PROT_WRITE)) {
		watch_unlock();
		return false;
	}
	if (*watch_slot_of(r, a) && (*watch_slot_of(r, a))->writable) {
		/*
		 * Another thread made it writable after this fault and before
		 * this handler got the lock (and it may have been protected and
		 * made writable again since): make sure it is, and retry.
		 */
		err = watch_real_mprotect((void *)a, PAGE, watch_prog_prot(r, a)) ? -errno : 0;
		watch_unlock();
		return err == 0;
	}
	/* Only the chunks' bytes can be a transaction's (tx_judge_page()). */
	if (!watch_page_is_meta(r, a))
		watch_tx_fault(a, frames, n);
	err = watch_page_dirty(r, a, frames, n);
	if (err) {
		/*
		 * The page cannot be made writable alone: a Device DAX of
		 * 2 MiB alignment splits only at its alignment (EINVAL), or
		 * no memory for its record. The program's store must still
		 * go through: the whole mapping stops being watched, with an
		 * unwatched note (the run is then checked in part).
		 */
		watch_forget(r->start, r->end, err == -ENOMEM ?
			     "no memory to watch a page" :
			     "a page of it cannot be unprotected alone (a device "
			     "dax splits only at its alignment)");
	}
	watch_unlock();
	return true;
}

/*
 * A SIGSEGV the program's action is for: judge what is known, as at exit,
 * before the default action ends the process as it would have without
 * the checker.
 */
static void segv_default(int sig)
{
	watch_judge_end("SIGSEGV", HOW_SIGNAL, 0, sig);
}

/* Past the preload shim, which would keep SIG_DFL instead of setting it. */
static int set_real_action(int sig, const struct sigaction *act,
			   struct sigaction *old)
{
	return watch_real_sigaction(sig, act, old);
}

/* The program's SIGSEGV action (sigchain.h). */
static struct ntm_sigchain segv_chain = {
	.set_action = set_real_action,
	.before_default = segv_default,
};

/* --- the program's view of SIGSEGV in its signal mask --------------------- */

/* The calling thread's view blocks SIGSEGV; one was sent meanwhile. */
static __thread bool segv_blocked __attribute__((tls_model("initial-exec")));
static __thread bool segv_pending __attribute__((tls_model("initial-exec")));
/* Signals whose handler's sa_mask, as the program gave it, held SIGSEGV. */
static bool segv_in_sa_mask[NSIG];

int watch_sigmask(int how, const sigset_t *set, sigset_t *old,
		  int (*real)(int, const sigset_t *, sigset_t *))
{
	bool was = segv_blocked, now = was;
	sigset_t open;
	int ret;

	if (set) {
		open = *set;
		if (sigismember(set, SIGSEGV) == 1 && how != SIG_UNBLOCK) {
			sigdelset(&open, SIGSEGV);
			now = true;
		} else if (how == SIG_SETMASK ||
			   (how == SIG_UNBLOCK && sigismember(set, SIGSEGV) == 1)) {
			now = false;
		}
		set = &open;
	}
	ret = real(how, set, old);
	if (ret)
		return ret;	/* an unknown @how: nothing changed */
	if (old && was)
		sigaddset(old, SIGSEGV);
	segv_blocked = now;
	if (was && !now && segv_pending) {
		segv_pending = false;
		raise(SIGSEGV);
	}
	return 0;
}

bool watch_segv_blocked(void)
{
	return segv_blocked;
}

/* The calling thread's SIGSEGV opened if it was blocked in fact (a mask
 * set before the checker started, or a thread attribute's). */
static bool segv_opened(void)
{
	sigset_t cur, segv;

	if (watch_real_sigmask(SIG_SETMASK, NULL, &cur) ||
	    sigismember(&cur, SIGSEGV) != 1)
		return false;
	sigemptyset(&segv);
	sigaddset(&segv, SIGSEGV);
	watch_real_sigmask(SIG_UNBLOCK, &segv, NULL);
	return true;
}

void watch_thread_start(bool inherit)
{
	segv_blocked = segv_opened() || inherit;
}

void watch_segv_open(void)
{
	if (segv_opened())
		segv_blocked = true;
	/* Nor does the program's handler block it (sigchain.h). */
	ntm_sigchain_keep_open(SIGSEGV);
}

void watch_on_segv(int sig, siginfo_t *si, void *uc)
{
	int saved = errno;

	if (si->si_code == SEGV_ACCERR && !watch_inside) {
		watch_inside = 1;
		bool ours = take_fault((uintptr_t)si->si_addr, uc);

		watch_inside = 0;
		if (ours) {
			errno = saved;
			return;
		}
	}
	if (segv_blocked && si->si_code > 0) {
		/*
		 * A fault the program's mask blocks: the kernel resets the
		 * action to SIG_DFL and kills. Judged first, as at any end;
		 * the instruction faults again on return, and the process
		 * dies of it.
		 */
		struct sigaction dfl = { .sa_handler = SIG_DFL };

		watch_judge_end("SIGSEGV", HOW_SIGNAL, 0, sig);
		watch_real_sigaction(SIGSEGV, &dfl, NULL);
		errno = saved;
		return;
	}
	if (segv_blocked) {
		/* Sent (kill(), raise()): pending until the view unblocks it. */
		segv_pending = true;
		errno = saved;
		return;
	}
	errno = saved;
	ntm_sigchain_deliver(&segv_chain, sig, si, uc);
}

/* --- signals that end the program ----------------------------------------- */

/*
 * The signals whose default action ends the process (SIGSEGV aside, which
 * has the handler above). While the program leaves one at SIG_DFL, the
 * checker's handler stands in for it: it judges what is known, puts
 * SIG_DFL back and sends the signal again, so the process still dies of
 * it (core dump and all). The program is told SIG_DFL, as it set.
 * SIGKILL and SIGSTOP cannot be caught.
 */
static const int fatal_list[] = {
	SIGHUP, SIGINT, SIGQUIT, SIGILL, SIGTRAP, SIGABRT, SIGBUS, SIGFPE,
	SIGUSR1, SIGUSR2, SIGPIPE, SIGALRM, SIGTERM, SIGXCPU, SIGXFSZ,
	SIGVTALRM, SIGPROF, SIGIO, SIGPWR, SIGSYS,
#ifdef SIGSTKFLT
	SIGSTKFLT,
#endif
};

static bool fatal_ours[NSIG];		/* the checker's handler stands in */
static struct sigaction fatal_view[NSIG];	/* the program's SIG_DFL action */
static int sig_lock_word;
static struct sigaction fatal_act;	/* the checker's, for all of them */

static bool fatal_signal(int sig)
{
	if (sig >= SIGRTMIN && sig <= SIGRTMAX)
		return true;
	for (size_t i = 0; i < sizeof(fatal_list) / sizeof(*fatal_list); i++)
		if (fatal_list[i] == sig)
			return true;
	return false;
}

/* "SIGTERM", "SIGRTMIN+2": for the report. */
const char *watch_signal_name(int sig, char *buf, size_t len)
{
	const char *abbrev = sig < SIGRTMIN ? sigabbrev_np(sig) : NULL;

	if (abbrev)
		snprintf(buf, len, "SIG%s", abbrev);
	else if (sig >= SIGRTMIN && sig <= SIGRTMAX)
		snprintf(buf, len, "SIGRTMIN+%d", sig - SIGRTMIN);
	else
		snprintf(buf, len, "signal %d", sig);
	return buf;
}

static void on_fatal(int sig, siginfo_t *si, void *uc)
{
	struct sigaction dfl = { .sa_handler = SIG_DFL };
	char name[32];

	(void)si, (void)uc;
	watch_judge_end(watch_signal_name(sig, name, sizeof(name)), HOW_SIGNAL,
			0, sig);
	/*
	 * The program's disposition from here: blocked while this handler
	 * runs, the signal sent again arrives when it returns, and kills.
	 */
	watch_real_sigaction(sig, &dfl, NULL);
	raise(sig);
}

/*
 * sigaction() of the program for a signal of fatal_list: SIG_DFL installs
 * the checker's handler in its place, anything else is installed as it
 * is. All signals are blocked around it, so a handler that calls
 * sigaction() cannot meet the lock held.
 */
static int fatal_action(int sig, const struct sigaction *act,
			struct sigaction *old)
{
	sigset_t all, mask;
	int ret = 0, err = errno;

	sigfillset(&all);
	/* libc's: the program's view of its mask is not the checker's. */
	watch_real_sigmask(SIG_BLOCK, &all, &mask);
	while (__atomic_exchange_n(&sig_lock_word, 1, __ATOMIC_ACQUIRE))
		sched_yield();
	if (old) {
		if (fatal_ours[sig])
			*old = fatal_view[sig];
		else
			ret = watch_real_sigaction(sig, NULL, old);
	}
	if (!ret && act) {
		bool dfl = act->sa_handler == SIG_DFL;

		ret = watch_real_sigaction(sig, dfl ? &fatal_act : act, NULL);
		if (!ret) {
			fatal_ours[sig] = dfl;
			if (dfl)
				fatal_view[sig] = *act;
		}
	}
	if (ret)
		err = errno;
	__atomic_store_n(&sig_lock_word, 0, __ATOMIC_RELEASE);
	watch_real_sigmask(SIG_SETMASK, &mask, NULL);
	errno = err;
	return ret;
}

/* At start: the checker's handler for each fatal signal left at SIG_DFL
 * (one the program was started ignoring stays ignored). */
void watch_fatal_install(void)
{
	fatal_act.sa_sigaction = on_fatal;
	fatal_act.sa_flags = SA_SIGINFO | SA_RESTART;
	sigfillset(&fatal_act.sa_mask);
	for (int sig = 1; sig < NSIG; sig++) {
		struct sigaction cur;

		if (!fatal_signal(sig) || watch_real_sigaction(sig, NULL, &cur) ||
		    cur.sa_handler != SIG_DFL)
			continue;
		if (!watch_real_sigaction(sig, &fatal_act, NULL)) {
			fatal_view[sig] = cur;
			fatal_ours[sig] = true;
		}
	}
}

/* --- the preload shim's requests ------------------------------------------ */

/* The program's SIGSEGV action is kept, not installed (sigchain.h). */
int watch_segv_action(const struct sigaction *act, struct sigaction *old)
{
	if (old)
		ntm_sigchain_get(&segv_chain, old);
	if (act && ntm_sigchain_keep(&segv_chain, act)) {
		errno = ENOMEM;
		return -1;
	}
	return 0;
}

int watch_signal_action(int sig, const struct sigaction *act,
			 struct sigaction *old)
{
	struct sigaction open;
	bool had = false;
	int ret;

	if (sig == SIGSEGV)
		return watch_segv_action(act, old);
	if (sig <= 0 || sig >= NSIG)
		return watch_real_sigaction(sig, act, old);	/* its EINVAL */
	/* A handler that blocks SIGSEGV would make a watched store fatal. */
	if (act && sigismember(&act->sa_mask, SIGSEGV) == 1) {
		open = *act;
		sigdelset(&open.sa_mask, SIGSEGV);
		act = &open;
		had = true;
	}
	ret = fatal_signal(sig) ? fatal_action(sig, act, old)
				: watch_real_sigaction(sig, act, old);
	if (ret)
		return ret;
	if (old && __atomic_load_n(&segv_in_sa_mask[sig], __ATOMIC_RELAXED))
		sigaddset(&old->sa_mask, SIGSEGV);
	if (act)
		__atomic_store_n(&segv_in_sa_mask[sig], had, __ATOMIC_RELAXED);
	return 0;
}

void watch_will_store(void *p, size_t n)
{
	uintptr_t a = watch_page_down((uintptr_t)p), e = watch_page_up((uintptr_t)p + n);
	void *frames[MAX_FRAMES];
	bool hit;
	int nf;

	if (!n || e <= a || watch_inside)
		return;
	watch_inside = 1;
	watch_lock();
	hit = watch_overlaps(a, e);
	watch_unlock();
	if (hit) {
		nf = watch_capture(frames);
		watch_lock();
		for (; a < e; a += PAGE) {
			struct wrange *r = watch_range_of(a);

			/* A page the program cannot write: the kernel says so. */
			if (r && (watch_prog_prot(r, a) & PROT_WRITE) &&
			    (!*watch_slot_of(r, a) || !(*watch_slot_of(r, a))->writable))
				watch_page_dirty(r, a, frames, nf);
		}
		watch_unlock();
	}
	watch_inside = 0;
}

void watch_will_unmap(void *p, size_t n)
{
	watch_unmapping(p, n, "munmap");
}

