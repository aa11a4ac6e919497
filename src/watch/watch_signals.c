// SPDX-License-Identifier: MIT
/*
 * watch_signals.c - the checker's signals: the SIGSEGV handler that sees a
 * program's first store to a watched page, the handler that stands in for
 * SIG_DFL of the signals that end the program (so that what is known is
 * judged before it dies), and the preload shim's requests: the program's
 * sigaction() of those signals, and the stores and unmappings the shim
 * sees coming that the kernel would make without a fault.
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
	watch_unlock();
	return err == 0;
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
	pthread_sigmask(SIG_BLOCK, &all, &mask);
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
	pthread_sigmask(SIG_SETMASK, &mask, NULL);
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

bool watch_keeps_signal(int sig)
{
	return sig == SIGSEGV || fatal_signal(sig);
}

int watch_signal_action(int sig, const struct sigaction *act,
			 struct sigaction *old)
{
	if (sig == SIGSEGV)
		return watch_segv_action(act, old);
	if (fatal_signal(sig))
		return fatal_action(sig, act, old);
	return watch_real_sigaction(sig, act, old);
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
	ntm_watch_unmap_slow(p, n, "munmap");
}

