// SPDX-License-Identifier: MIT
/*
 * test_mc.c - machine-check-safe reads (ntmem/mc.h): ntm_copy_mc() and the
 * SIGBUS handler behind it.
 *
 * ntm_blk reads go through ntm_copy_mc(), so "poison returns -EIO instead
 * of killing the process" rests on three things checked here:
 *
 *   lazy_install_chains  (must run first: the process's first
 *               ntm_copy_mc() call) an application SIGBUS handler set
 *               before ntmem installs its own still receives every SIGBUS
 *               that is not a copy's, with its siginfo (si_addr).
 *   ordinary_*  on readable memory the copy returns 0 and copies exactly:
 *               every size 0..4096 at varying source/destination offsets,
 *               every offset pair of a small set, a few large sizes; the
 *               destination ends at a PROT_NONE fence and starts after a
 *               guard, so a byte written too many is a crash or a
 *               mismatch.
 *   truncated_* a 4-page file mapping truncated underneath to 2, 1 and 0
 *               pages (SIGBUS past EOF, as for poison): a copy starting at
 *               offsets 0, 1, 7, 8, 63, 64 and 4095 of the first and last
 *               valid page, ending 0, 1, 64, 4096 or 8192 bytes past the
 *               truncation point, returns exactly the bytes from the first
 *               missing one to the end (0 when it ends at the truncation
 *               point), and every byte before the fault is the file's.
 *   chain_*     a SIGBUS outside ntm_copy_mc() reaches the previous handler
 *               exactly once, SA_SIGINFO or plain; reinstalling with
 *               ntm_mc_install() (repeatedly) neither loses the chain nor
 *               chains ntmem to itself (a tail call that would spin
 *               forever: checked in a child under alarm()); with no
 *               handler (SIG_DFL) or SIG_IGN before
 *               ntmem, a foreign SIGBUS still kills the process with SIGBUS
 *               (checked in a child). A SIGBUS sent with kill() gets
 *               the previous disposition's action too: death under
 *               SIG_DFL, nothing under SIG_IGN, and ntmem's handler stays.
 *   threads     one thread faulting copy after copy while another copies
 *               good data: both get exact results, no SIGBUS leaks to the
 *               application.
 *
 * cmocka installs its own SIGBUS handler with signal() around every test
 * and restores the previous one afterwards, which removes ntmem's handler
 * between tests. Each test therefore arms explicitly: sigaction() our
 * handler, then ntm_mc_install() (the documented call for "a program that
 * sets its own SIGBUS handler after that"), and restores cmocka's on exit.
 *
 * The files are in a fresh mkdtemp() directory under /tmp, removed by the
 * group teardown even when a test failed halfway.
 *
 * The copy fixup exists on x86_64 and aarch64; elsewhere ntm_copy_mc() is
 * a plain memcpy() and the fault tests are skipped.
 */
#define _GNU_SOURCE
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
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
#include "../lib/testutil.h"

#define PG ((size_t)4096)
#define FILE_PAGES 4

/* --- the application's SIGBUS handler ----------------------------------- */

static sigjmp_buf app_jb;
static volatile sig_atomic_t app_expect;	/* a foreign SIGBUS is due */
static volatile sig_atomic_t app_calls;		/* times the handler ran */
static void *volatile app_addr;			/* si_addr of the last one */
static struct sigaction cmocka_sa;		/* restored by disarm() */

static void app_unexpected(void)
{
	static const char msg[] = "test_mc: unexpected SIGBUS reached the "
				  "application handler\n";

	/* A copy's fault leaked: fail loudly rather than loop on it. */
	if (write(STDERR_FILENO, msg, sizeof(msg) - 1) < 0)
		_exit(98);
	_exit(99);
}

static void app_sigaction(int sig, siginfo_t *si, void *ctx)
{
	(void)sig;
	(void)ctx;
	app_calls++;
	app_addr = si ? si->si_addr : NULL;
	if (!app_expect)
		app_unexpected();
	app_expect = 0;
	siglongjmp(app_jb, 1);
}

static void app_handler(int sig)
{
	(void)sig;
	app_calls++;
	app_addr = NULL;
	if (!app_expect)
		app_unexpected();
	app_expect = 0;
	siglongjmp(app_jb, 1);
}

/* Install the application handler (@siginfo: SA_SIGINFO style). */
static void set_app_handler(bool siginfo)
{
	struct sigaction sa;

	memset(&sa, 0, sizeof(sa));
	if (siginfo) {
		sa.sa_sigaction = app_sigaction;
		sa.sa_flags = SA_SIGINFO;
	} else {
		sa.sa_handler = app_handler;
	}
	sigemptyset(&sa.sa_mask);
	assert_int_equal(sigaction(SIGBUS, &sa, &cmocka_sa), 0);
	app_calls = 0;
	app_expect = 0;
}

/* Application handler first, then ntmem's on top, chaining to it. */
static void arm(bool siginfo)
{
	set_app_handler(siginfo);
	assert_int_equal(ntm_mc_install(), 0);
}

static void disarm(void)
{
	assert_int_equal(sigaction(SIGBUS, &cmocka_sa, NULL), 0);
}

/* --- a file mapping that loses its tail --------------------------------- */

/* The fresh directory the files live in (group setup/teardown). */
static char dir[64];

static int dir_setup(void **state)
{
	(void)state;
	snprintf(dir, sizeof(dir), "/tmp/ntmem-test-mc-XXXXXX");
	return mkdtemp(dir) ? 0 : -1;
}

/* Remove what the tests left (they clean up, unless one failed midway). */
static int dir_teardown(void **state)
{
	struct dirent *e;
	DIR *d = opendir(dir);

	(void)state;
	while (d && (e = readdir(d)))
		if (strncmp(e->d_name, "file-", 5) == 0)
			unlinkat(dirfd(d), e->d_name, 0);
	if (d)
		closedir(d);
	return rmdir(dir) ? -1 : 0;
}

struct tfile {
	char path[128];
	int fd;
	unsigned char *map;		/* FILE_PAGES pages, PROT_READ */
	unsigned char want[FILE_PAGES * PG];	/* what the file held */
};

static void tfile_open(struct tfile *t, uint64_t seed)
{
	snprintf(t->path, sizeof(t->path), "%s/file-%llu", dir,
		 (unsigned long long)seed);
	t->fd = open(t->path, O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
	if (t->fd < 0)
		fail_msg("cannot create %s: %s", t->path, strerror(errno));
	tu_fill_random(t->want, sizeof(t->want), seed);
	assert_int_equal(pwrite(t->fd, t->want, sizeof(t->want), 0),
			 (ssize_t)sizeof(t->want));
	t->map = mmap(NULL, sizeof(t->want), PROT_READ, MAP_SHARED, t->fd, 0);
	assert_true(t->map != MAP_FAILED);
	/* Every page readable while the file is whole. */
	assert_int_equal(memcmp(t->map, t->want, sizeof(t->want)), 0);
}

/* Cut the file to @pages pages under the mapping: the rest SIGBUS. */
static void tfile_truncate(struct tfile *t, size_t pages)
{
	assert_int_equal(ftruncate(t->fd, (off_t)(pages * PG)), 0);
}

static void tfile_close(struct tfile *t)
{
	munmap(t->map, sizeof(t->want));
	close(t->fd);
	unlink(t->path);
}

/* A foreign SIGBUS: a plain load from a page the file no longer has. */
static bool foreign_sigbus(const unsigned char *p)
{
	if (sigsetjmp(app_jb, 1) == 0) {
		app_expect = 1;
		(void)*(const volatile unsigned char *)p;
		app_expect = 0;
		return false;	/* no fault: the load succeeded */
	}
	return true;
}

/*
 * ntm_copy_mc() of @n bytes from @src into a fenced buffer: the return must
 * be @want_left and the first n - want_left bytes must be @expect's.
 */
static void check_copy(const unsigned char *src, size_t n, size_t want_left,
		       const unsigned char *expect, const char *what)
{
	size_t body = tu_round_up(n ? n : 1, PG);
	unsigned char *buf = tu_map_fenced(body);
	unsigned char *dst = buf + body - n;	/* ends at the fence */
	size_t left, good, at;

	assert_non_null(buf);
	memset(buf, 0xa5, body);
	left = ntm_copy_mc(dst, src, n);
	if (left != want_left)
		fail_msg("%s: returned %zu, expected %zu", what, left, want_left);
	good = n - want_left;
	at = tu_first_diff(dst, expect, good);
	if (at != good)
		fail_msg("%s: byte %zu is 0x%02x, expected 0x%02x", what, at,
			 dst[at], expect[at]);
	for (size_t i = 0; i < body - n; i++)
		if (buf[i] != 0xa5)
			fail_msg("%s: byte %zu before the destination written",
				 what, i);
	tu_unmap_fenced(buf, body);
}

/* --- lazy install ------------------------------------------------------- */

#if defined(__x86_64__) || defined(__aarch64__)
#define HAVE_FIXUP 1
#else
#define HAVE_FIXUP 0
#endif

static void test_lazy_install_chains(void **state)
{
	struct tfile t;
	unsigned char small[64];

	(void)state;
	if (!HAVE_FIXUP)
		skip();
	tfile_open(&t, 11);
	tfile_truncate(&t, 2);
	/*
	 * The application's handler goes in first; ntmem installs its own on
	 * this, the process's first ntm_copy_mc() call, and must chain to it.
	 */
	set_app_handler(true);
	assert_int_equal(ntm_copy_mc(small, t.map, sizeof(small)), 0);
	assert_memory_equal(small, t.want, sizeof(small));
	assert_int_equal(app_calls, 0);

	if (!foreign_sigbus(t.map + 3 * PG + 5))
		fail_msg("a load past EOF did not fault");
	assert_int_equal(app_calls, 1);
	assert_ptr_equal(app_addr, t.map + 3 * PG + 5);

	/* The copy's own fault is still handled, not passed on. */
	assert_int_equal(ntm_copy_mc(small, t.map + 2 * PG - 16, sizeof(small)),
			 sizeof(small) - 16);
	assert_memory_equal(small, t.want + 2 * PG - 16, 16);
	assert_int_equal(app_calls, 1);

	/* And the next foreign one reaches the application again, once. */
	if (!foreign_sigbus(t.map + 2 * PG))
		fail_msg("a load past EOF did not fault");
	assert_int_equal(app_calls, 2);
	disarm();
	tfile_close(&t);
}

/* --- ordinary memory ---------------------------------------------------- */

static void test_ordinary_every_size(void **state)
{
	enum { MAXN = 4096, SLACK = 128 };
	unsigned char *src = tu_map_fenced(MAXN + SLACK);
	char what[64];

	(void)state;
	assert_non_null(src);
	tu_fill_random(src, MAXN + SLACK, 21);
	for (size_t n = 0; n <= MAXN; n++) {
		size_t so = (n * 7) % 67;

		snprintf(what, sizeof(what), "size %zu src+%zu", n, so);
		check_copy(src + so, n, 0, src + so, what);
	}
	tu_unmap_fenced(src, MAXN + SLACK);
}

static void test_ordinary_offsets(void **state)
{
	static const size_t offs[] = { 0, 1, 7, 8, 15, 16, 63, 64, 65, 4095 };
	static const size_t sizes[] = { 1, 8, 63, 64, 65, 4096, 4097, 12345 };
	const size_t len = 2 * PG + 12345;
	unsigned char *src = tu_map_fenced(len), *dst = tu_map_fenced(len);
	unsigned char *ref = malloc(len);

	(void)state;
	assert_non_null(src);
	assert_non_null(dst);
	assert_non_null(ref);
	tu_fill_random(src, len, 22);
	for (size_t i = 0; i < sizeof(offs) / sizeof(offs[0]); i++)
		for (size_t j = 0; j < sizeof(offs) / sizeof(offs[0]); j++)
			for (size_t k = 0; k < sizeof(sizes) / sizeof(sizes[0]); k++) {
				size_t so = offs[i], d = offs[j], n = sizes[k];
				size_t at;

				memset(dst, 0x3c, len);
				memset(ref, 0x3c, len);
				memcpy(ref + d, src + so, n);
				assert_int_equal(ntm_copy_mc(dst + d, src + so, n), 0);
				at = tu_first_diff(dst, ref, len);
				if (at != len)
					fail_msg("src+%zu dst+%zu size %zu: byte %zu "
						 "of the buffer differs", so, d, n, at);
			}
	free(ref);
	tu_unmap_fenced(src, len);
	tu_unmap_fenced(dst, len);
}

static void test_ordinary_large(void **state)
{
	static const size_t sizes[] = { (1u << 20) + 13, 3u << 20, (8u << 20) - 1 };
	const size_t len = 8u << 20;
	unsigned char *src = tu_map_fenced(len + 64);

	(void)state;
	assert_non_null(src);
	tu_fill_random(src, len + 64, 23);
	for (size_t i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++) {
		char what[64];

		snprintf(what, sizeof(what), "large size %zu", sizes[i]);
		check_copy(src + 1 + i, sizes[i], 0, src + 1 + i, what);
	}
	tu_unmap_fenced(src, len + 64);
}

/* --- faults ------------------------------------------------------------- */

/*
 * Truncate to @keep pages and copy from every start offset class of the
 * first and last valid page up to 0, 1, 64, 4096 and 8192 bytes past the
 * end of the file.
 */
static void truncated(size_t keep)
{
	static const size_t offs[] = { 0, 1, 7, 8, 63, 64, 4095 };
	static const size_t past[] = { 0, 1, 64, 4096, 8192 };
	const size_t eof = keep * PG;
	/* The first and the last valid page (page 0 alone when 0 or 1). */
	size_t pages[2] = { 0, keep ? keep - 1 : 0 };
	size_t npages = keep >= 2 ? 2 : 1;
	struct tfile t;
	char what[96];

	if (!HAVE_FIXUP)
		skip();
	tfile_open(&t, 30 + keep);
	arm(true);
	tfile_truncate(&t, keep);
	for (size_t p = 0; p < npages; p++) {
		for (size_t i = 0; i < sizeof(offs) / sizeof(offs[0]); i++) {
			size_t start = pages[p] * PG + offs[i];

			for (size_t k = 0; k < sizeof(past) / sizeof(past[0]); k++) {
				size_t end = (eof > start ? eof : start) + past[k];
				size_t n = end - start;

				if (end > FILE_PAGES * PG || n == 0)
					continue;
				snprintf(what, sizeof(what), "%zu pages left: copy "
					 "[%zu, %zu)", keep, start, end);
				check_copy(t.map + start, n,
					   start >= eof ? n : end - eof,
					   t.want + start, what);
			}
		}
	}
	/* Entirely past the end: nothing copied, the whole length left. */
	if (keep < FILE_PAGES) {
		snprintf(what, sizeof(what), "%zu pages left: copy past EOF", keep);
		check_copy(t.map + eof + 100, 300, 300, t.want, what);
	}
	assert_int_equal(app_calls, 0);
	disarm();
	tfile_close(&t);
}

static void test_truncated_2(void **state)
{
	(void)state;
	truncated(2);
}

static void test_truncated_1(void **state)
{
	(void)state;
	truncated(1);
}

static void test_truncated_0(void **state)
{
	(void)state;
	truncated(0);
}

/* --- chaining ----------------------------------------------------------- */

static void chain(bool siginfo)
{
	struct tfile t;
	unsigned char buf[256];

	if (!HAVE_FIXUP)
		skip();
	tfile_open(&t, 40 + siginfo);
	tfile_truncate(&t, 1);
	arm(siginfo);
	if (!foreign_sigbus(t.map + PG))
		fail_msg("a load past EOF did not fault");
	assert_int_equal(app_calls, 1);
	if (siginfo)
		assert_ptr_equal(app_addr, t.map + PG);
	/* A copy's fault in between stays inside ntmem. */
	assert_int_equal(ntm_copy_mc(buf, t.map + PG - 10, sizeof(buf)),
			 sizeof(buf) - 10);
	assert_memory_equal(buf, t.want + PG - 10, 10);
	assert_int_equal(app_calls, 1);
	/* A fault in the application's own code after that still arrives. */
	if (!foreign_sigbus(t.map + 2 * PG + 4095))
		fail_msg("a load past EOF did not fault");
	assert_int_equal(app_calls, 2);
	disarm();
	tfile_close(&t);
}

static void test_chain_siginfo(void **state)
{
	(void)state;
	chain(true);
}

static void test_chain_plain(void **state)
{
	(void)state;
	chain(false);
}

/*
 * Reinstalling must neither lose the application's handler nor make ntmem
 * its own predecessor: a foreign SIGBUS then reaches the application
 * exactly once. Chaining to itself is a tail call that spins forever (or
 * recursion that overflows the stack), so this runs in a child with an
 * alarm; exit codes say which check failed.
 */
static int reinstall_child(const struct tfile *t)
{
	unsigned char buf[128];
	struct sigaction sa;

	alarm(10);
	memset(&sa, 0, sizeof(sa));
	sa.sa_sigaction = app_sigaction;
	sa.sa_flags = SA_SIGINFO;
	sigemptyset(&sa.sa_mask);
	if (sigaction(SIGBUS, &sa, NULL))
		return 10;
	app_calls = 0;
	for (int i = 0; i < 4; i++)
		if (ntm_mc_install())
			return 11;
	if (!foreign_sigbus(t->map + 2 * PG + 1))
		return 12;
	if (app_calls != 1 || app_addr != t->map + 2 * PG + 1)
		return 13;
	if (ntm_copy_mc(buf, t->map + 2 * PG - 1, sizeof(buf)) != sizeof(buf) - 1 ||
	    buf[0] != t->want[2 * PG - 1])
		return 14;
	if (ntm_mc_install())
		return 11;
	if (!foreign_sigbus(t->map + 3 * PG) || app_calls != 2)
		return 15;
	return 0;
}

static void test_chain_reinstall(void **state)
{
	static const char *const why[] = {
		[10] = "sigaction failed",
		[11] = "ntm_mc_install() failed",
		[12] = "the foreign load did not fault",
		[13] = "the foreign SIGBUS did not reach the handler exactly once",
		[14] = "the copy's fault was not handled after reinstalling",
		[15] = "the second foreign SIGBUS did not reach the handler once",
	};
	struct tfile t;
	int status;
	pid_t pid;

	(void)state;
	if (!HAVE_FIXUP)
		skip();
	tfile_open(&t, 50);
	tfile_truncate(&t, 2);
	fflush(NULL);
	pid = fork();
	assert_true(pid >= 0);
	if (pid == 0)
		_exit(reinstall_child(&t));
	assert_int_equal(waitpid(pid, &status, 0), pid);
	tfile_close(&t);
	if (WIFSIGNALED(status))
		fail_msg("child killed by signal %d%s", WTERMSIG(status),
			 WTERMSIG(status) == SIGALRM ? " (alarm: the foreign "
			 "SIGBUS never returned, ntmem chained to itself?)" : "");
	assert_true(WIFEXITED(status));
	if (WEXITSTATUS(status)) {
		int st = WEXITSTATUS(status);

		fail_msg("child exited %d: %s", st,
			 st < (int)(sizeof(why) / sizeof(why[0])) && why[st] ?
			 why[st] : "?");
	}
}

/*
 * A SIGBUS that is not ntmem's, with SIG_DFL or SIG_IGN before ntmem's
 * handler, checked in a child after one handled copy fault shows the
 * handler was live. A fault (@sent false: a load from a missing page)
 * must end the process by SIGBUS either way, as it would without ntmem.
 * A SIGBUS sent with kill() must get the action of the disposition before:
 * under SIG_DFL death by SIGBUS (it used to survive, with ntmem's handler
 * silently replaced by SIG_DFL); under SIG_IGN nothing, and ntmem's
 * handler still in place, so a second copy over a missing page returns.
 */
static void chain_foreign(void (*before)(int), bool sent)
{
	struct rlimit no_core = { 0, 0 };
	bool dies = !sent || before == SIG_DFL;
	struct tfile t;
	int status;
	pid_t pid;

	if (!HAVE_FIXUP)
		skip();
	tfile_open(&t, 60 + 2 * sent + (before == SIG_IGN));
	tfile_truncate(&t, 1);
	fflush(NULL);
	pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		unsigned char buf[64];

		setrlimit(RLIMIT_CORE, &no_core);
		signal(SIGBUS, before);
		if (ntm_mc_install())
			_exit(2);
		if (ntm_copy_mc(buf, t.map + PG - 8, sizeof(buf)) != sizeof(buf) - 8)
			_exit(3);
		if (sent)
			kill(getpid(), SIGBUS);
		else
			(void)*(const volatile unsigned char *)(t.map + PG);
		if (dies)
			_exit(4);	/* survived a SIGBUS */
		if (ntm_copy_mc(buf, t.map + PG - 8, sizeof(buf)) != sizeof(buf) - 8)
			_exit(5);
		_exit(0);
	}
	assert_int_equal(waitpid(pid, &status, 0), pid);
	tfile_close(&t);
	if (!dies) {
		if (!WIFEXITED(status) || WEXITSTATUS(status) != 0)
			fail_msg("child %s %d, expected exit 0 (2: install, 3: "
				 "copy, 5: the copy after the ignored SIGBUS)",
				 WIFEXITED(status) ? "exited" : "killed by signal",
				 WIFEXITED(status) ? WEXITSTATUS(status)
						   : WTERMSIG(status));
		return;
	}
	if (WIFEXITED(status))
		fail_msg("child exited %d (2: install, 3: copy, 4: survived the "
			 "SIGBUS), expected death by SIGBUS", WEXITSTATUS(status));
	if (WTERMSIG(status) != SIGBUS)
		fail_msg("child killed by signal %d, expected SIGBUS (%d)",
			 WTERMSIG(status), SIGBUS);
}

static void test_chain_default(void **state)
{
	(void)state;
	chain_foreign(SIG_DFL, false);
}

static void test_chain_ignored(void **state)
{
	(void)state;
	chain_foreign(SIG_IGN, false);
}

static void test_chain_sent_default(void **state)
{
	(void)state;
	chain_foreign(SIG_DFL, true);
}

static void test_chain_sent_ignored(void **state)
{
	(void)state;
	chain_foreign(SIG_IGN, true);
}

/* --- threads ------------------------------------------------------------ */

#define ITERS 3000

struct thread_arg {
	const struct tfile *t;
	const unsigned char *good;	/* readable source */
	size_t good_len;
	pthread_barrier_t *start;
	char err[160];			/* first failure, "" if none */
};

/* Copy across the end of the 2 remaining pages, over and over. */
static void *faulting(void *p)
{
	struct thread_arg *a = p;
	unsigned char buf[3 * PG];
	uint64_t st = 71;

	pthread_barrier_wait(a->start);
	for (int i = 0; i < ITERS; i++) {
		size_t start = 2 * PG - 1 - tu_rand(&st) % (2 * PG);
		size_t n = 2 * PG - start + 1 + tu_rand(&st) % PG;
		size_t left = ntm_copy_mc(buf, a->t->map + start, n);

		if (left != n - (2 * PG - start)) {
			snprintf(a->err, sizeof(a->err), "faulting copy [%zu, +%zu) "
				 "returned %zu", start, n, left);
			break;
		}
		if (memcmp(buf, a->t->want + start, 2 * PG - start)) {
			snprintf(a->err, sizeof(a->err), "faulting copy [%zu, +%zu) "
				 "copied wrong bytes", start, n);
			break;
		}
	}
	return NULL;
}

/* Copy good memory with random sizes and offsets, over and over. */
static void *good(void *p)
{
	struct thread_arg *a = p;
	unsigned char buf[3 * PG];
	uint64_t st = 72;

	pthread_barrier_wait(a->start);
	for (int i = 0; i < ITERS; i++) {
		size_t n = tu_rand(&st) % sizeof(buf);
		size_t off = tu_rand(&st) % (a->good_len - n);
		size_t left;

		memset(buf, (int)i, sizeof(buf));
		left = ntm_copy_mc(buf, a->good + off, n);
		if (left || memcmp(buf, a->good + off, n)) {
			snprintf(a->err, sizeof(a->err), "good copy [%zu, +%zu) "
				 "returned %zu or copied wrong bytes", off, n, left);
			break;
		}
	}
	return NULL;
}

static void test_threads(void **state)
{
	const size_t good_len = 64 * PG;
	unsigned char *src = malloc(good_len);
	struct thread_arg fa = { 0 }, ga = { 0 };
	pthread_barrier_t start;
	pthread_t ft, gt;
	struct tfile t;

	(void)state;
	if (!HAVE_FIXUP)
		skip();
	assert_non_null(src);
	tu_fill_random(src, good_len, 73);
	tfile_open(&t, 74);
	tfile_truncate(&t, 2);
	arm(true);
	assert_int_equal(pthread_barrier_init(&start, NULL, 2), 0);
	fa = (struct thread_arg){ .t = &t, .start = &start };
	ga = (struct thread_arg){ .good = src, .good_len = good_len,
				  .start = &start };
	assert_int_equal(pthread_create(&ft, NULL, faulting, &fa), 0);
	assert_int_equal(pthread_create(&gt, NULL, good, &ga), 0);
	pthread_join(ft, NULL);
	pthread_join(gt, NULL);
	pthread_barrier_destroy(&start);
	if (fa.err[0])
		fail_msg("%s", fa.err);
	if (ga.err[0])
		fail_msg("%s", ga.err);
	assert_int_equal(app_calls, 0);
	/* The process carries on: a last fault in this thread is handled. */
	check_copy(t.map + PG, 2 * PG, PG, t.want + PG, "after the threads");
	disarm();
	tfile_close(&t);
	free(src);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		/* First: it needs the process's first ntm_copy_mc() call. */
		cmocka_unit_test(test_lazy_install_chains),
		cmocka_unit_test(test_ordinary_every_size),
		cmocka_unit_test(test_ordinary_offsets),
		cmocka_unit_test(test_ordinary_large),
		cmocka_unit_test(test_truncated_2),
		cmocka_unit_test(test_truncated_1),
		cmocka_unit_test(test_truncated_0),
		cmocka_unit_test(test_chain_siginfo),
		cmocka_unit_test(test_chain_plain),
		cmocka_unit_test(test_chain_reinstall),
		cmocka_unit_test(test_chain_default),
		cmocka_unit_test(test_chain_ignored),
		cmocka_unit_test(test_chain_sent_default),
		cmocka_unit_test(test_chain_sent_ignored),
		cmocka_unit_test(test_threads),
	};

	return cmocka_run_group_tests_name("mc", tests, dir_setup, dir_teardown);
}
