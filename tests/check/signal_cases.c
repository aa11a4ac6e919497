// SPDX-License-Identifier: MIT
/*
 * signal_cases.c CASE DIR - programs that block SIGSEGV, which the
 * watcher of `ntmem check` needs for its write faults, and must still run
 * unchanged under it (same output, same exit status) and be judged right;
 * run by check_watch.sh, once plainly and once watched. Each case maps
 * DIR/pool with PMDK's pmem_map_file() and stores to it with SIGSEGV
 * blocked, and checks that the masks it reads back are the ones it set
 * (it prints "view ok" when they are, "view WRONG" when not).
 *
 *   threads-blocked  workers created with every signal blocked (the
 *                    signalfd pattern: main blocks all, creates them, puts
 *                    its own mask back) store and persist their lines;
 *                    main reads SIGUSR1, which the last worker sends,
 *                    through a signalfd: no report
 *   threads-blocked-bug  the same, one worker's last store never flushed:
 *                    one report
 *   main-blocked     main blocks all signals with sigprocmask(), stores
 *                    and persists, sigwait()s for a SIGUSR1 it raised: no
 *                    report
 *   attr-mask        a thread whose attribute's mask blocks everything
 *                    (pthread_attr_setsigmask_np()): no report
 *   sa-mask          a SIGUSR1 handler whose sa_mask blocks everything
 *                    stores and persists; sigaction() returns that sa_mask
 *   wait-masks       the same handler runs inside sigsuspend(), pselect(),
 *                    ppoll() and epoll_pwait() with temporary masks that
 *                    block all but SIGUSR1: no report
 *   fault-blocked    a thread that blocks SIGSEGV faults for real (a
 *                    store to an unmapped address) with a SIGSEGV handler
 *                    installed: the process dies of SIGSEGV, the handler
 *                    never runs, as the kernel does it without the checker
 *   raise-blocked    SIGSEGV raised while blocked stays pending ("pending"),
 *                    the handler runs when it is unblocked ("caught")
 *   spawn            posix_spawn() of this program's main-blocked case
 *                    with an attribute's mask that blocks everything; the
 *                    child's exit status is this one's
 */
#define _GNU_SOURCE
#include <errno.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <spawn.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/select.h>
#include <sys/signalfd.h>
#include <sys/wait.h>
#include <unistd.h>

#include <libpmem.h>

#define POOL ((size_t)1 << 20)
#define WORKERS 4
#define ROUNDS 100
/* Every byte differs from the zeroes it replaces. */
#define PATTERN 0x1122334455667788ull

static char *pool;
static size_t pool_len;
static volatile uintptr_t unmapped = 16;
static bool view_wrong;

static void die(const char *what)
{
	perror(what);
	exit(2);
}

static void store_persist(size_t off)
{
	*(volatile uint64_t *)(pool + off) = PATTERN + off;
	pmem_persist(pool + off, 8);
}

/* The calling thread's mask blocks SIGSEGV exactly when @blocked. */
static void expect_segv(bool blocked)
{
	sigset_t cur;

	if (pthread_sigmask(SIG_SETMASK, NULL, &cur) ||
	    (sigismember(&cur, SIGSEGV) == 1) != blocked)
		view_wrong = true;
}

static void view_report(void)
{
	puts(view_wrong ? "view WRONG" : "view ok");
}

/* --- threads and signalfd ------------------------------------------------ */

struct worker {
	int id;
	bool bug;
};

static void *worker(void *arg)
{
	const struct worker *w = arg;

	expect_segv(true);	/* inherited: every signal blocked */
	for (int r = 0; r < ROUNDS; r++) {
		size_t off = 4096 * (size_t)(w->id + 1) + 64 * (size_t)(r % 32);

		if (w->bug && r == ROUNDS - 1)	/* every byte changes */
			*(volatile uint64_t *)(pool + off) = ~(PATTERN + off);
		else
			store_persist(off);
	}
	return NULL;
}

static int threads_blocked_case(bool bug)
{
	pthread_t t[WORKERS];
	struct worker w[WORKERS];
	struct signalfd_siginfo si;
	sigset_t all, usr1;
	int fd;

	sigfillset(&all);
	sigemptyset(&usr1);
	sigaddset(&usr1, SIGUSR1);
	pthread_sigmask(SIG_SETMASK, &all, NULL);
	for (int i = 0; i < WORKERS; i++) {
		w[i] = (struct worker){ .id = i, .bug = bug && i == 2 };
		if (pthread_create(&t[i], NULL, worker, &w[i]))
			die("pthread_create");
	}
	/* SIGUSR1 stays blocked in main: read through the signalfd. */
	pthread_sigmask(SIG_SETMASK, &usr1, NULL);
	expect_segv(false);
	fd = signalfd(-1, &usr1, SFD_CLOEXEC);
	if (fd < 0)
		die("signalfd");
	for (int i = 0; i < WORKERS; i++)
		pthread_join(t[i], NULL);
	kill(getpid(), SIGUSR1);
	if (read(fd, &si, sizeof(si)) != sizeof(si) || si.ssi_signo != SIGUSR1)
		die("read signalfd");
	close(fd);
	store_persist(64);
	view_report();
	return 0;
}

/* --- main with every signal blocked ------------------------------------- */

static int main_blocked_case(void)
{
	sigset_t all, old, usr1;
	int sig;

	sigfillset(&all);
	if (sigprocmask(SIG_BLOCK, &all, &old))
		die("sigprocmask");
	/* spawn's child starts with everything blocked already. */
	expect_segv(true);
	for (int r = 0; r < ROUNDS; r++)
		store_persist(64 * (size_t)(r % 64));
	sigemptyset(&usr1);
	sigaddset(&usr1, SIGUSR1);
	raise(SIGUSR1);
	if (sigwait(&usr1, &sig) || sig != SIGUSR1)
		die("sigwait");
	store_persist(8192);
	if (sigprocmask(SIG_SETMASK, &old, NULL))
		die("sigprocmask");
	view_report();
	return 0;
}

/* --- a thread attribute's mask ------------------------------------------- */

static void *attr_worker(void *arg)
{
	(void)arg;
	expect_segv(true);
	for (int r = 0; r < ROUNDS; r++)
		store_persist(4096 + 64 * (size_t)(r % 64));
	return NULL;
}

static int attr_mask_case(void)
{
	pthread_attr_t attr;
	pthread_t t;
	sigset_t all;

	sigfillset(&all);
	if (pthread_attr_init(&attr) || pthread_attr_setsigmask_np(&attr, &all))
		die("pthread_attr_setsigmask_np");
	if (pthread_create(&t, &attr, attr_worker, NULL))
		die("pthread_create");
	pthread_join(t, NULL);
	pthread_attr_destroy(&attr);
	expect_segv(false);
	view_report();
	return 0;
}

/* --- handlers that block everything ------------------------------------- */

static volatile sig_atomic_t handled;

static void on_usr1(int sig)
{
	(void)sig;
	store_persist(12288 + 64 * (size_t)handled);
	handled++;
}

static void install_usr1(void)
{
	struct sigaction act = { .sa_handler = on_usr1 }, got;

	sigfillset(&act.sa_mask);
	if (sigaction(SIGUSR1, &act, NULL) || sigaction(SIGUSR1, NULL, &got))
		die("sigaction");
	if (sigismember(&got.sa_mask, SIGSEGV) != 1)
		view_wrong = true;
}

static int sa_mask_case(void)
{
	install_usr1();
	raise(SIGUSR1);
	if (handled != 1)
		die("SIGUSR1 not handled");
	view_report();
	return 0;
}

/* SIGUSR1 blocked and pending; @wait_in() waits with all but it blocked. */
static void handled_inside(const char *what, void (*wait_in)(const sigset_t *))
{
	sigset_t usr1, all_but;
	int before = handled;

	sigemptyset(&usr1);
	sigaddset(&usr1, SIGUSR1);
	pthread_sigmask(SIG_BLOCK, &usr1, NULL);
	raise(SIGUSR1);
	sigfillset(&all_but);
	sigdelset(&all_but, SIGUSR1);
	wait_in(&all_but);
	pthread_sigmask(SIG_UNBLOCK, &usr1, NULL);
	printf("%s: %s\n", what, handled == before + 1 ? "handled" : "NOT handled");
}

static void in_sigsuspend(const sigset_t *m)
{
	sigsuspend(m);
}

static void in_pselect(const sigset_t *m)
{
	struct timespec t = { 5, 0 };

	pselect(0, NULL, NULL, NULL, &t, m);
}

static void in_ppoll(const sigset_t *m)
{
	struct timespec t = { 5, 0 };

	ppoll(NULL, 0, &t, m);
}

static void in_epoll_pwait(const sigset_t *m)
{
	struct epoll_event ev;
	int fd = epoll_create1(EPOLL_CLOEXEC);

	if (fd < 0)
		die("epoll_create1");
	epoll_pwait(fd, &ev, 1, 5000, m);
	close(fd);
}

static int wait_masks_case(void)
{
	install_usr1();
	handled_inside("sigsuspend", in_sigsuspend);
	handled_inside("pselect", in_pselect);
	handled_inside("ppoll", in_ppoll);
	handled_inside("epoll_pwait", in_epoll_pwait);
	expect_segv(false);
	view_report();
	return 0;
}

/* --- SIGSEGV itself blocked ---------------------------------------------- */

static void on_segv(int sig)
{
	(void)sig;
	puts("caught");
}

static void *fault_worker(void *arg)
{
	sigset_t segv;

	(void)arg;
	sigemptyset(&segv);
	sigaddset(&segv, SIGSEGV);
	pthread_sigmask(SIG_BLOCK, &segv, NULL);
	store_persist(4096);	/* a watched store first: it must live */
	*(volatile int *)unmapped = 1;
	puts("survived");
	return NULL;
}

static int fault_blocked_case(void)
{
	pthread_t t;

	signal(SIGSEGV, on_segv);
	if (pthread_create(&t, NULL, fault_worker, NULL))
		die("pthread_create");
	pthread_join(t, NULL);
	return 0;
}

static int raise_blocked_case(void)
{
	sigset_t segv;

	signal(SIGSEGV, on_segv);
	sigemptyset(&segv);
	sigaddset(&segv, SIGSEGV);
	sigprocmask(SIG_BLOCK, &segv, NULL);
	store_persist(4096);
	raise(SIGSEGV);
	puts("pending");
	sigprocmask(SIG_UNBLOCK, &segv, NULL);
	store_persist(8192);
	view_report();
	return 0;
}

/* --- posix_spawn() with a mask ------------------------------------------ */

static int spawn_case(const char *self, const char *dir)
{
	char *argv[] = { (char *)self, "main-blocked", (char *)dir, NULL };
	posix_spawnattr_t attr;
	sigset_t all;
	pid_t pid;
	int status, err;

	sigfillset(&all);
	if (posix_spawnattr_init(&attr) ||
	    posix_spawnattr_setflags(&attr, POSIX_SPAWN_SETSIGMASK) ||
	    posix_spawnattr_setsigmask(&attr, &all))
		die("posix_spawnattr");
	err = posix_spawn(&pid, self, NULL, &attr, argv, environ);
	if (err) {
		errno = err;
		die("posix_spawn");
	}
	posix_spawnattr_destroy(&attr);
	if (waitpid(pid, &status, 0) != pid)
		die("waitpid");
	return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

int main(int argc, char **argv)
{
	char path[4096];
	const char *c;
	int is_pmem, ret;

	if (argc != 3) {
		fprintf(stderr, "usage: %s CASE DIR\n", argv[0]);
		return 2;
	}
	c = argv[1];
	setvbuf(stdout, NULL, _IONBF, 0);
	if (!strcmp(c, "spawn"))
		return spawn_case(argv[0], argv[2]);
	snprintf(path, sizeof(path), "%s/pool", argv[2]);
	pool = pmem_map_file(path, POOL, PMEM_FILE_CREATE, 0600, &pool_len,
			     &is_pmem);
	if (!pool)
		die("pmem_map_file");
	pmem_memset_persist(pool, 0, pool_len);
	if (!strcmp(c, "threads-blocked"))
		ret = threads_blocked_case(false);
	else if (!strcmp(c, "threads-blocked-bug"))
		ret = threads_blocked_case(true);
	else if (!strcmp(c, "main-blocked"))
		ret = main_blocked_case();
	else if (!strcmp(c, "attr-mask"))
		ret = attr_mask_case();
	else if (!strcmp(c, "sa-mask"))
		ret = sa_mask_case();
	else if (!strcmp(c, "wait-masks"))
		ret = wait_masks_case();
	else if (!strcmp(c, "fault-blocked"))
		ret = fault_blocked_case();
	else if (!strcmp(c, "raise-blocked"))
		ret = raise_blocked_case();
	else {
		fprintf(stderr, "unknown case %s\n", c);
		return 2;
	}
	pmem_unmap(pool, pool_len);
	return ret;
}
