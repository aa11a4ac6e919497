// SPDX-License-Identifier: MIT
/*
 * test_sigchain.c - a signal that is not ntmem's gets the action it would
 * have had without ntmem (src/sigchain.h), through each of three sides:
 *
 *   segv  the module directly, as the checker uses it: a SIGSEGV handler
 *         without SA_NODEFER in front of a chain (so the kernel has
 *         blocked SIGSEGV when the chain is asked to deliver);
 *   bus   the module directly, as mc.c uses it: a SIGBUS handler with
 *         SA_NODEFER;
 *   mc    the library's own SIGBUS handler: the previous action set with
 *         sigaction(), then ntm_mc_install().
 *
 * Each scenario runs in a forked child (a signal's disposition is the
 * process's, and most end in death), under alarm() in case a fault
 * repeats forever:
 *
 *   default_sent, default_fault   SIG_DFL: the child dies of the signal,
 *                  whether it was sent with kill() or a real fault (a load
 *                  from a PROT_NONE page for SIGSEGV, from a memfd mapping
 *                  past its end for SIGBUS); the module's before_default
 *                  hook ran once first.
 *   siginfo_dfl    SA_SIGINFO with SIG_DFL (the same union): still the
 *                  default, not a call through a null sa_sigaction.
 *   ignored_sent   SIG_IGN (with and without SA_SIGINFO): kill() and
 *                  sigqueue() are ignored, the hook does not run.
 *   ignored_fault  SIG_IGN and a real fault: death, as the kernel would.
 *   siginfo_handler, plain_handler   the handler is called with (sig, si,
 *                  ctx) or (sig): the fault's si_code and si_addr, the
 *                  sigqueue() value, the context ntmem's handler got.
 *   resethand      SA_RESETHAND: called once, the second signal kills.
 *   mask_defer, mask_nodefer   inside the handler the action's sa_mask is
 *                  blocked, and the signal is blocked unless SA_NODEFER;
 *                  after it returns the mask is ntmem's handler's again.
 *   after_ntmem    (mc) a program installs its SIGBUS handler after ntmem's:
 *                  it replaces ntmem's, so ntm_copy_mc() over a missing
 *                  page no longer recovers (the program's handler gets the
 *                  copy's fault) until ntm_mc_install() is called again,
 *                  which recovers again and chains to the program's.
 *
 * The mc side's faults need the copy fixup, which exists on x86_64 and
 * aarch64; elsewhere its fault scenarios are skipped.
 */
#define _GNU_SOURCE
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <ntmem.h>
#include "sigchain.h"
#include "../lib/testutil.h"

#if defined(__x86_64__) || defined(__aarch64__)
#define HAVE_FIXUP 1
#else
#define HAVE_FIXUP 0
#endif

/* --- the sides ---------------------------------------------------------- */

struct side {
	const char *name;
	int sig;
	bool direct;		/* the module itself (else the library's mc) */
	bool nodefer;		/* the front handler has SA_NODEFER */
};

static const struct side segv_side = { "segv", SIGSEGV, true, false };
static const struct side bus_side = { "bus", SIGBUS, true, true };
static const struct side mc_side = { "mc", SIGBUS, false, true };

static int hook_fd = -1;	/* the write end of the hook's pipe */

static void hook(int sig)
{
	(void)sig;
	if (write(hook_fd, "H", 1) != 1)
		_exit(90);
}

static struct ntm_sigchain chain = {
	.set_action = sigaction,
	.before_default = hook,
};

static void *volatile front_ctx;	/* what the front handler got */
static volatile sig_atomic_t front_after_usr2;	/* SIGUSR2 blocked after */

static void front(int sig, siginfo_t *si, void *ctx)
{
	sigset_t now;

	front_ctx = ctx;
	ntm_sigchain_deliver(&chain, sig, si, ctx);
	pthread_sigmask(SIG_SETMASK, NULL, &now);
	front_after_usr2 = sigismember(&now, SIGUSR2);
}

/* The previous action @prev, then ntmem's in front of it: 0 or an exit code. */
static int install(const struct side *s, const struct sigaction *prev)
{
	struct sigaction sa;

	if (!s->direct) {
		if (sigaction(s->sig, prev, NULL))
			return 80;
		return ntm_mc_install() ? 81 : 0;
	}
	if (ntm_sigchain_keep(&chain, prev))
		return 82;
	memset(&sa, 0, sizeof(sa));
	sa.sa_sigaction = front;
	sa.sa_flags = SA_SIGINFO | (s->nodefer ? SA_NODEFER : 0);
	sigemptyset(&sa.sa_mask);
	return sigaction(s->sig, &sa, NULL) ? 83 : 0;
}

static struct sigaction action(void (*handler)(int), int flags)
{
	struct sigaction sa;

	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = handler;
	sa.sa_flags = flags;
	sigemptyset(&sa.sa_mask);
	return sa;
}

static struct sigaction action_info(void (*h)(int, siginfo_t *, void *),
				    int flags)
{
	struct sigaction sa = action(SIG_DFL, flags | SA_SIGINFO);

	sa.sa_sigaction = h;
	return sa;
}

/* --- real faults -------------------------------------------------------- */

/*
 * A load from fault_addr faults with the side's signal until fix_fault():
 * SIGSEGV from a PROT_NONE page, SIGBUS from a memfd mapping's second page
 * while the memfd is one page long.
 */
static unsigned char *fault_addr;
static int fault_memfd = -1;
static int fault_sig;

static int prepare_fault(int sig)
{
	size_t pg = tu_page_size();
	void *p;

	fault_sig = sig;
	if (sig == SIGSEGV) {
		p = mmap(NULL, pg, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		if (p == MAP_FAILED)
			return 70;
		fault_addr = p;
		return 0;
	}
	fault_memfd = memfd_create("test_sigchain", 0);
	if (fault_memfd < 0 || ftruncate(fault_memfd, (off_t)pg))
		return 71;
	p = mmap(NULL, 2 * pg, PROT_READ, MAP_SHARED, fault_memfd, 0);
	if (p == MAP_FAILED)
		return 72;
	fault_addr = (unsigned char *)p + pg;
	return 0;
}

static void fault(void)
{
	(void)*(const volatile unsigned char *)fault_addr;
}

/* From a handler: the next load from fault_addr succeeds. */
static void fix_fault(void)
{
	size_t pg = tu_page_size();

	if (fault_sig == SIGSEGV)
		mprotect(fault_addr, pg, PROT_READ);
	else if (ftruncate(fault_memfd, (off_t)(2 * pg)))
		_exit(73);
}

/* --- the previous handlers ---------------------------------------------- */

static volatile sig_atomic_t calls;
static volatile int got_sig, got_code, got_value;
static void *volatile got_addr;
static void *volatile got_ctx;
static volatile sig_atomic_t got_self_blocked, got_usr2_blocked;

static void record_mask(int sig)
{
	sigset_t now;

	pthread_sigmask(SIG_SETMASK, NULL, &now);
	got_self_blocked = sigismember(&now, sig);
	got_usr2_blocked = sigismember(&now, SIGUSR2);
}

static void h_info(int sig, siginfo_t *si, void *ctx)
{
	calls++;
	got_sig = sig;
	got_code = si->si_code;
	got_addr = si->si_addr;
	got_value = si->si_code == SI_QUEUE ? si->si_value.sival_int : 0;
	got_ctx = ctx;
	record_mask(sig);
	if (si->si_code > 0)
		fix_fault();
}

static void h_plain(int sig)
{
	calls++;
	got_sig = sig;
	record_mask(sig);
	fix_fault();	/* when it was a fault; harmless when sent */
}

/* --- running a scenario ------------------------------------------------- */

/* Exit codes of a child, for the failure message. */
static const char *const why[] = {
	[1] = "survived a signal that should have killed it",
	[2] = "the handler was not called exactly once",
	[3] = "the handler got the wrong signal number",
	[4] = "the handler got the wrong si_code or si_addr",
	[5] = "the handler got the wrong sigqueue() value",
	[6] = "the handler got a context other than ntmem's handler's",
	[7] = "the signal's blocking inside the handler is wrong",
	[8] = "sa_mask was not blocked inside the handler",
	[9] = "the mask was not restored after the handler",
	[10] = "the chain does not read SIG_DFL after SA_RESETHAND",
	[11] = "ntm_copy_mc() did not recover from the missing page",
	[12] = "ntm_copy_mc() recovered although the program's handler replaced ntmem's",
	[13] = "the program's handler got the wrong address",
	[14] = "a foreign SIGBUS did not reach the program's handler once",
	[20] = "the handler was called twice",
	[70] = "cannot map the faulting page",
	[71] = "cannot create the memfd",
	[72] = "cannot map the memfd",
	[80] = "sigaction() of the previous action failed",
	[81] = "ntm_mc_install() failed",
	[82] = "ntm_sigchain_keep() failed",
	[83] = "sigaction() of the front handler failed",
	[90] = "the hook could not write",
};

/*
 * Run @scenario in a child for side @s: it must exit 0 (@die_sig 0) or
 * die of @die_sig, with the hook run @hooks times (-1: not checked; the
 * mc side has no hook).
 */
static void run(const struct side *s, int (*scenario)(const struct side *),
		int die_sig, int hooks)
{
	struct rlimit no_core = { 0, 0 };
	char buf[8];
	int fds[2], status;
	ssize_t n;
	pid_t pid;

	assert_int_equal(pipe(fds), 0);
	fflush(NULL);
	pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		/*
		 * Not cmocka's handlers, which would take a crash for a
		 * failed test and go on running the others in the child.
		 */
		static const int crashes[] = { SIGSEGV, SIGBUS, SIGILL, SIGFPE,
					       SIGSYS };
		int ret;

		for (size_t i = 0; i < sizeof(crashes) / sizeof(*crashes); i++)
			signal(crashes[i], SIG_DFL);
		close(fds[0]);
		hook_fd = fds[1];
		setrlimit(RLIMIT_CORE, &no_core);
		alarm(30);
		ret = prepare_fault(s->sig);
		if (!ret)
			ret = scenario(s);
		_exit(ret);
	}
	close(fds[1]);
	assert_int_equal(waitpid(pid, &status, 0), pid);
	n = read(fds[0], buf, sizeof(buf));
	close(fds[0]);
	if (WIFEXITED(status) && WEXITSTATUS(status)) {
		int st = WEXITSTATUS(status);

		fail_msg("%s: child exited %d: %s", s->name, st,
			 st < (int)(sizeof(why) / sizeof(*why)) && why[st] ?
			 why[st] : "?");
	}
	if (WIFSIGNALED(status) && WTERMSIG(status) != die_sig)
		fail_msg("%s: child killed by signal %d (%s), expected %s",
			 s->name, WTERMSIG(status), strsignal(WTERMSIG(status)),
			 die_sig ? strsignal(die_sig) : "exit 0");
	if (die_sig && !WIFSIGNALED(status))
		fail_msg("%s: child exited 0, expected death by %s", s->name,
			 strsignal(die_sig));
	if (s->direct && hooks >= 0 && n != hooks)
		fail_msg("%s: before_default ran %zd times, expected %d",
			 s->name, n, hooks);
}

/* --- the scenarios ------------------------------------------------------ */

static int default_sent(const struct side *s)
{
	struct sigaction prev = action(SIG_DFL, 0);
	int ret = install(s, &prev);

	if (ret)
		return ret;
	kill(getpid(), s->sig);
	return 1;
}

static int default_fault(const struct side *s)
{
	struct sigaction prev = action(SIG_DFL, 0);
	int ret = install(s, &prev);

	if (ret)
		return ret;
	fault();
	return 1;
}

static int siginfo_dfl(const struct side *s)
{
	struct sigaction prev = action(SIG_DFL, SA_SIGINFO);
	int ret = install(s, &prev);

	if (ret)
		return ret;
	kill(getpid(), s->sig);
	return 1;
}

static int ignored_sent(const struct side *s)
{
	for (int flags = 0; flags <= SA_SIGINFO; flags += SA_SIGINFO) {
		struct sigaction prev = action(SIG_IGN, flags);
		int ret = install(s, &prev);

		if (ret)
			return ret;
		kill(getpid(), s->sig);
		sigqueue(getpid(), s->sig, (union sigval){ .sival_int = 1 });
	}
	return 0;
}

static int ignored_fault(const struct side *s)
{
	struct sigaction prev = action(SIG_IGN, 0);
	int ret = install(s, &prev);

	if (ret)
		return ret;
	fault();
	return 1;
}

static int siginfo_handler(const struct side *s)
{
	struct sigaction prev = action_info(h_info, 0);
	int ret = install(s, &prev);

	if (ret)
		return ret;
	fault();
	if (calls != 1)
		return 2;
	if (got_sig != s->sig)
		return 3;
	if (got_code <= 0 || got_addr != fault_addr)
		return 4;
	if (!got_ctx || (s->direct && got_ctx != front_ctx))
		return 6;
	sigqueue(getpid(), s->sig, (union sigval){ .sival_int = 42 });
	if (calls != 2)
		return 2;
	if (got_code != SI_QUEUE || got_value != 42)
		return 5;
	return 0;
}

static int plain_handler(const struct side *s)
{
	struct sigaction prev = action(h_plain, 0);
	int ret = install(s, &prev);

	if (ret)
		return ret;
	fault();
	if (calls != 1 || got_sig != s->sig)
		return calls != 1 ? 2 : 3;
	got_sig = 0;
	kill(getpid(), s->sig);
	if (calls != 2 || got_sig != s->sig)
		return calls != 2 ? 2 : 3;
	return 0;
}

static int resethand(const struct side *s)
{
	struct sigaction prev = action_info(h_info, SA_RESETHAND);
	int ret = install(s, &prev);

	if (ret)
		return ret;
	kill(getpid(), s->sig);
	if (calls != 1)
		return 2;
	if (s->direct) {
		struct sigaction now;

		ntm_sigchain_get(&chain, &now);
		if (now.sa_handler != SIG_DFL)
			return 10;
	}
	kill(getpid(), s->sig);
	return calls == 2 ? 20 : 1;
}

static int mask(const struct side *s, int flags)
{
	struct sigaction prev = action_info(h_info, flags);
	bool nodefer = flags & SA_NODEFER;
	int ret;

	sigaddset(&prev.sa_mask, SIGUSR2);
	ret = install(s, &prev);
	if (ret)
		return ret;
	/* Once sent and once a fault: the kernel blocks alike for both. */
	for (int i = 0; i < 2; i++) {
		calls = 0;
		front_after_usr2 = -1;
		if (i)
			fault();
		else
			kill(getpid(), s->sig);
		if (calls != 1)
			return 2;
		if (got_self_blocked != !nodefer)
			return 7;
		if (!got_usr2_blocked)
			return 8;
		if (s->direct && front_after_usr2 != 0)
			return 9;
	}
	return 0;
}

static int mask_defer(const struct side *s)
{
	return mask(s, 0);
}

static int mask_nodefer(const struct side *s)
{
	return mask(s, SA_NODEFER);
}

static sigjmp_buf app_jb;
static void *volatile app_addr;
static volatile sig_atomic_t app_calls;

static void h_jump(int sig, siginfo_t *si, void *ctx)
{
	(void)sig, (void)ctx;
	app_calls++;
	app_addr = si->si_addr;
	siglongjmp(app_jb, 1);
}

/* A copy from the page before the missing one across into it. */
static bool copy_recovers(void)
{
	unsigned char buf[64];

	return ntm_copy_mc(buf, fault_addr - 8, sizeof(buf)) == sizeof(buf) - 8;
}

static int after_ntmem(const struct side *s)
{
	struct sigaction app = action_info(h_jump, 0);
	size_t pg = tu_page_size();

	(void)s;
	if (ntm_mc_install())
		return 81;
	if (!copy_recovers())
		return 11;
	if (sigaction(SIGBUS, &app, NULL))
		return 80;
	/* The program's handler now has every SIGBUS, the copy's too. */
	if (sigsetjmp(app_jb, 1) == 0) {
		copy_recovers();
		return 12;
	}
	if (app_calls != 1)
		return 14;
	if ((unsigned char *)app_addr < fault_addr ||
	    (unsigned char *)app_addr >= fault_addr + pg)
		return 13;
	/* Installed again: recovery back, chaining to the program's. */
	if (ntm_mc_install())
		return 81;
	if (!copy_recovers())
		return 11;
	if (sigsetjmp(app_jb, 1) == 0) {
		fault();
		return 1;
	}
	if (app_calls != 2 || app_addr != fault_addr)
		return app_calls != 2 ? 14 : 13;
	return 0;
}

/* --- the tests ---------------------------------------------------------- */

/* The mc side faults only where the copy fixup exists. */
static void run_faulting(const struct side *s,
			 int (*scenario)(const struct side *), int die_sig,
			 int hooks)
{
	if (!s->direct && !HAVE_FIXUP)
		skip();
	run(s, scenario, die_sig, hooks);
}

#define ON_EACH_SIDE(scenario, die, hooks)                              \
	static void test_##scenario##_segv(void **state)                \
	{                                                               \
		(void)state;                                            \
		run_faulting(&segv_side, scenario, (die) ? SIGSEGV : 0, hooks); \
	}                                                               \
	static void test_##scenario##_bus(void **state)                 \
	{                                                               \
		(void)state;                                            \
		run_faulting(&bus_side, scenario, (die) ? SIGBUS : 0, hooks); \
	}                                                               \
	static void test_##scenario##_mc(void **state)                  \
	{                                                               \
		(void)state;                                            \
		run_faulting(&mc_side, scenario, (die) ? SIGBUS : 0, hooks); \
	}

ON_EACH_SIDE(default_sent, true, 1)
ON_EACH_SIDE(default_fault, true, 1)
ON_EACH_SIDE(siginfo_dfl, true, 1)
ON_EACH_SIDE(ignored_sent, false, 0)
ON_EACH_SIDE(ignored_fault, true, 1)
ON_EACH_SIDE(siginfo_handler, false, 0)
ON_EACH_SIDE(plain_handler, false, 0)
ON_EACH_SIDE(resethand, true, 1)
ON_EACH_SIDE(mask_defer, false, 0)
ON_EACH_SIDE(mask_nodefer, false, 0)

static void test_after_ntmem_mc(void **state)
{
	(void)state;
	run_faulting(&mc_side, after_ntmem, 0, -1);
}

#define SIDES(scenario)                                                 \
	cmocka_unit_test(test_##scenario##_segv),                       \
	cmocka_unit_test(test_##scenario##_bus),                        \
	cmocka_unit_test(test_##scenario##_mc)

int main(void)
{
	const struct CMUnitTest tests[] = {
		SIDES(default_sent),
		SIDES(default_fault),
		SIDES(siginfo_dfl),
		SIDES(ignored_sent),
		SIDES(ignored_fault),
		SIDES(siginfo_handler),
		SIDES(plain_handler),
		SIDES(resethand),
		SIDES(mask_defer),
		SIDES(mask_nodefer),
		cmocka_unit_test(test_after_ntmem_mc),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
