// SPDX-License-Identifier: MIT
/*
 * watch_cases.c CASE DIR - programs that `ntmem check`'s watcher must run
 * unchanged (same output, same exit status) and judge right; run by
 * check_watch.sh, once plainly and once under the watcher. Each case maps
 * DIR/pool with PMDK's pmem_map_file() unless it says otherwise.
 *
 *   segv-handler   the program's own SIGSEGV handler (sigaction, siglongjmp
 *                  out of it) still gets its faults; "caught" is printed
 *   signal-handler the same, installed with signal()
 *   segv-default   a real fault with no handler still kills with SIGSEGV
 *   read           read() into pmem works (the kernel's store meets no
 *                  write-protected page), then persisted: no report
 *   threads        4 threads store and persist their own lines, 200 times
 *                  each, while the others fence: no report
 *   threads-bug    the same, and thread 2 forgets one flush: one report
 *   shared-page    4 threads store and persist their own line of ONE page,
 *                  200 times each: each thread's fence settles its own
 *                  write-backs, whoever made the page writable: no report
 *   discover       a plain MAP_SHARED mapping the program made: the first
 *                  pmem_persist() on it starts watching; a later store
 *                  never persisted is reported at munmap()
 *   copy-mc        ntm_copy_mc() from a file truncated underneath still
 *                  returns the bytes it could not copy (its SIGBUS handler
 *                  and the watcher's SIGSEGV handler side by side)
 *   fork           parent and child each store and persist: no report
 *   eager          a missing flush, for NTMEM_CHECK_EAGER=1: reported at
 *                  the pmem_drain() that passed it
 *   perf           3 write-backs of a line that did not change, 1 of a line
 *                  written back already: two performance notes, no bug
 *   msync          pmem_msync() makes a store durable; a store after it,
 *                  never synced, is reported at unmap
 *   mremap-grow    the file grown to 2 MiB, the mapping grown with
 *                  mremap(MREMAP_MAYMOVE): stores to the new address (old
 *                  and new pages) persisted; one store to a new page never
 *                  persisted is reported at munmap
 *   mremap-move    a line stored and one left pending before a move to a
 *                  fixed new address; the first persisted there, the other
 *                  never: reported at the new address's munmap
 *   mremap-shrink  a store in the tail a shrinking mremap() drops: reported
 *                  at that mremap
 *   mremap-dup     mremap() with an old size of 0: a second mapping of the
 *                  same pages, which the program stores to; it is not
 *                  watched (a note says so), and the program is not killed
 *   mprotect       a watched range made read-only, then writable again:
 *                  8 KiB stored there after it, never flushed, is reported
 *   mprotect-keep  PROT_READ and PROT_NONE stay as the program asked (its
 *                  handler catches the store and the load); a line written
 *                  back before PROT_NONE is settled by a fence while the page
 *                  cannot be read; mprotect()'s errors are the kernel's
 *   remap-threads  4 threads, each with its own mapping, 100 rounds of
 *                  mprotect() read-only and back, mremap() to twice the
 *                  size (moving) and back, a store persisted each round;
 *                  a fifth thread persists into the pool meanwhile; one
 *                  thread leaves its last store unflushed: one report
 *   vfork          a line left pending, then a vfork() child that _exit()s at
 *                  once (sharing the parent's memory); the parent persists
 *                  the line after: no report, and the parent is still judged
 *   end-exit       64 bytes stored, never flushed, then return from main
 *   end-_exit      the same, then _exit(7)
 *   end-abort      the same, then abort()
 *   end-sigterm    the same, then raise(SIGTERM) (its disposition printed
 *                  first: the program sees SIG_DFL)
 *   end-segv       the same, then the program's own bug: a store to an
 *                  unmapped address
 *   end-sigkill    the same, then raise(SIGKILL): nothing can be judged
 *   end-handler    the program's own SIGTERM handler runs and exits 3
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <libpmem.h>
#include <ntmem.h>
#include <pthread.h>
#include <setjmp.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#define POOL (1u << 20)
/* Every byte differs from the zeroes it replaces: the reported length is
 * the store's. */
#define PATTERN 0x1122334455667788ull

static char *pool;
/* Read at run time, so the compiler sees no constant bad pointer. */
static volatile uintptr_t unmapped = 16;
static size_t pool_len;
static sigjmp_buf back;

static void die(const char *what)
{
	perror(what);
	exit(2);
}

static void map_pool(const char *dir)
{
	char path[4096];
	int is_pmem;

	snprintf(path, sizeof(path), "%s/pool", dir);
	pool = pmem_map_file(path, POOL, PMEM_FILE_CREATE, 0600, &pool_len,
			     &is_pmem);
	if (!pool)
		die("pmem_map_file");
	pmem_memset_persist(pool, 0, pool_len);
}

static void store_persist(size_t off)
{
	*(volatile uint64_t *)(pool + off) = PATTERN;
	pmem_persist(pool + off, 8);
}

static void on_fault(int sig)
{
	(void)sig;
	siglongjmp(back, 1);
}

static int handler_case(bool use_signal)
{
	struct sigaction act = { .sa_handler = on_fault };

	if (use_signal) {
		if (signal(SIGSEGV, on_fault) == SIG_ERR)
			die("signal");
	} else if (sigaction(SIGSEGV, &act, NULL)) {
		die("sigaction");
	}
	store_persist(4096 + 8);
	if (!sigsetjmp(back, 1))
		*(volatile int *)unmapped = 1;	/* a real fault */
	else
		puts("caught");
	store_persist(8192 + 8);	/* the watcher still works after it */
	return 0;
}

static int read_case(void)
{
	char buf[300];
	int fds[2];

	memset(buf, 0x5a, sizeof(buf));
	if (pipe(fds) || write(fds[1], buf, sizeof(buf)) != (ssize_t)sizeof(buf))
		die("pipe");
	/* Into a page that was never stored to: still write-protected. */
	if (read(fds[0], pool + 3 * 4096 + 100, sizeof(buf)) != (ssize_t)sizeof(buf))
		die("read into pmem");
	pmem_persist(pool + 3 * 4096 + 100, sizeof(buf));
	if (memcmp(pool + 3 * 4096 + 100, buf, sizeof(buf)))
		die("read data");
	return 0;
}

struct worker {
	pthread_t t;
	unsigned id;
	bool forget;
	bool shared;	/* all threads in page 1, line 8 * id */
};

static void *work(void *arg)
{
	struct worker *w = arg;

	for (unsigned i = 0; i < 200; i++) {
		/* Each thread its own page: a line per round. */
		size_t off = (size_t)(w->id + 1) * 4096 + (i % 64) * 64;

		if (w->shared)
			off = 4096 + (size_t)w->id * 8 * 64 + (i % 8) * 64;

		if (w->forget && i == 199) {
			/* Every byte differs from the line's last value. */
			*(volatile uint64_t *)(pool + off) = ~(PATTERN + i);
			pmem_drain();	/* the flush forgotten */
			continue;
		}
		*(volatile uint64_t *)(pool + off) = PATTERN + i;
		pmem_persist(pool + off, 8);
	}
	return NULL;
}

static int threads_case(bool bug, bool shared)
{
	struct worker w[4];

	for (unsigned i = 0; i < 4; i++) {
		w[i] = (struct worker){ .id = i, .forget = bug && i == 2,
					.shared = shared };
		if (pthread_create(&w[i].t, NULL, work, &w[i]))
			die("pthread_create");
	}
	for (unsigned i = 0; i < 4; i++)
		pthread_join(w[i].t, NULL);
	/* Thread 2's last line (199 % 64 = 7, offset 3 * 4096 + 7 * 64) is
	 * never written back: one report. */
	return 0;
}

static int discover_case(const char *dir)
{
	char path[4096];
	char *p;
	int fd;

	snprintf(path, sizeof(path), "%s/plain", dir);
	fd = open(path, O_RDWR | O_CREAT | O_TRUNC, 0600);
	if (fd < 0 || ftruncate(fd, 4 * 4096))
		die("plain file");
	p = mmap(NULL, 4 * 4096, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	if (p == MAP_FAILED)
		die("mmap");
	*(volatile uint64_t *)p = PATTERN;
	pmem_persist(p, 8);			/* watched from here on */
	*(volatile uint64_t *)(p + 2 * 4096 + 40) = PATTERN;	/* never persisted */
	if (munmap(p, 4 * 4096))
		die("munmap");
	close(fd);
	return 0;
}

static int copy_mc_case(const char *dir)
{
	char path[4096], buf[4 * 4096];
	const char *src;
	size_t left;
	int fd;

	snprintf(path, sizeof(path), "%s/mc", dir);
	fd = open(path, O_RDWR | O_CREAT | O_TRUNC, 0600);
	if (fd < 0 || ftruncate(fd, sizeof(buf)))
		die("mc file");
	src = mmap(NULL, sizeof(buf), PROT_READ, MAP_SHARED, fd, 0);
	if (src == MAP_FAILED)
		die("mmap");
	if (ftruncate(fd, 2 * 4096))
		die("truncate");
	left = ntm_copy_mc(buf, src, sizeof(buf));
	printf("copy_mc left %zu\n", left);
	store_persist(4096);	/* the watcher still works after the SIGBUS */
	return left == 2 * 4096 ? 0 : 1;
}

static int fork_case(void)
{
	pid_t pid = fork();
	int status;

	if (pid < 0)
		die("fork");
	if (pid == 0) {
		store_persist(5 * 4096 + 16);
		_exit(0);
	}
	store_persist(6 * 4096 + 16);
	if (waitpid(pid, &status, 0) != pid || !WIFEXITED(status) ||
	    WEXITSTATUS(status))
		return 1;
	return 0;
}

static int vfork_case(void)
{
	pid_t pid;
	int status;

	*(volatile uint64_t *)(pool + 4096 + 64) = PATTERN;
	pmem_drain();	/* passes it: pending */
	pid = vfork();
	if (pid < 0)
		die("vfork");
	if (pid == 0)
		_exit(0);
	if (waitpid(pid, &status, 0) != pid || !WIFEXITED(status))
		return 1;
	pmem_persist(pool + 4096 + 64, 8);
	*(volatile uint64_t *)(pool + 2 * 4096) = PATTERN;	/* still watched */
	return 0;
}

static int eager_case(void)
{
	*(volatile uint64_t *)(pool + 4096 + 24) = PATTERN;
	pmem_drain();				/* no flush before it */
	store_persist(4096 + 24);		/* durable by the end */
	return 0;
}

static int perf_case(void)
{
	store_persist(4096);
	for (int i = 0; i < 3; i++)
		pmem_flush(pool + 4096, 8);	/* unchanged since its persist */
	pmem_drain();
	*(volatile uint64_t *)(pool + 8192) = PATTERN;
	pmem_flush(pool + 8192, 8);
	pmem_flush(pool + 8192, 8);		/* again, no store between */
	pmem_drain();
	return 0;
}

static int msync_case(void)
{
	*(volatile uint64_t *)(pool + 4096 + 48) = PATTERN;
	if (pmem_msync(pool + 4096 + 48, 8))
		die("pmem_msync");
	*(volatile uint64_t *)(pool + 3 * 4096 + 56) = PATTERN;	/* not synced */
	return 0;
}

/* The pool's file, grown to @len: mremap() beyond its end would SIGBUS. */
static void grow_pool(const char *dir, size_t len)
{
	char path[4096];
	int fd;

	snprintf(path, sizeof(path), "%s/pool", dir);
	fd = open(path, O_RDWR);
	if (fd < 0 || ftruncate(fd, (off_t)len))
		die("grow the pool");
	close(fd);
}

static int mremap_grow_case(const char *dir)
{
	char *p;

	store_persist(4096);
	grow_pool(dir, 2 * POOL);
	p = mremap(pool, POOL, 2 * POOL, MREMAP_MAYMOVE);
	if (p == MAP_FAILED)
		die("mremap");
	*(volatile uint64_t *)(p + 8192) = PATTERN;		/* an old page */
	pmem_persist(p + 8192, 8);
	*(volatile uint64_t *)(p + POOL + 4096) = PATTERN;	/* a new page */
	pmem_persist(p + POOL + 4096, 8);
	*(volatile uint64_t *)(p + POOL + 3 * 4096 + 16) = PATTERN;	/* never */
	if (munmap(p, 2 * POOL))
		die("munmap");
	pool = NULL;
	return 0;
}

static int mremap_move_case(void)
{
	char *to, *p;

	/* A free place, reserved and let go: the move's fixed target. */
	to = mmap(NULL, POOL, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (to == MAP_FAILED || munmap(to, POOL))
		die("reserve");
	*(volatile uint64_t *)(pool + 4096 + 64) = PATTERN;	/* persisted after */
	*(volatile uint64_t *)(pool + 5 * 4096 + 128) = PATTERN; /* never */
	pmem_drain();		/* passes both: pending */
	p = mremap(pool, POOL, POOL, MREMAP_MAYMOVE | MREMAP_FIXED, to);
	if (p != to)
		die("mremap");
	pmem_persist(p + 4096 + 64, 8);
	if (munmap(p, POOL))
		die("munmap");
	pool = NULL;
	return 0;
}

static int mremap_shrink_case(void)
{
	char *p;

	store_persist(4096);
	*(volatile uint64_t *)(pool + POOL / 2 + 4096 + 32) = PATTERN;	/* dropped */
	p = mremap(pool, POOL, POOL / 2, 0);
	if (p != pool)
		die("mremap");
	pool_len = POOL / 2;
	return 0;
}

static int mremap_dup_case(void)
{
	char *p = mremap(pool + 4096, 0, 4096, MREMAP_MAYMOVE);

	if (p == MAP_FAILED)
		die("mremap");
	*(volatile uint64_t *)(p + 8) = PATTERN;
	pmem_persist(p + 8, 8);
	if (*(volatile uint64_t *)(pool + 4096 + 8) != PATTERN || munmap(p, 4096))
		die("the second mapping");
	return 0;
}

static int mprotect_case(void)
{
	if (mprotect(pool + 4096, 8192, PROT_READ) ||
	    mprotect(pool + 4096, 8192, PROT_READ | PROT_WRITE))
		die("mprotect");
	memset(pool + 4096, 0x5a, 8192);	/* never flushed */
	return 0;
}

/* @p faults when stored to (load: read from): printed, then the next. */
static void try_access(char *p, bool load, const char *what)
{
	if (!sigsetjmp(back, 1)) {
		if (load)
			(void)*(volatile char *)p;
		else
			*(volatile char *)p = 1;
		printf("%s: no fault\n", what);
	} else {
		printf("%s: fault\n", what);
	}
}

static int mprotect_keep_case(void)
{
	struct sigaction act = { .sa_handler = on_fault };
	char *page = pool + 4 * 4096;

	if (sigaction(SIGSEGV, &act, NULL))
		die("sigaction");
	if (mprotect(page, 4096, PROT_READ))
		die("mprotect read");
	try_access(page, false, "store to PROT_READ");
	try_access(page, true, "load from PROT_READ");
	if (mprotect(page, 4096, PROT_NONE))
		die("mprotect none");
	try_access(page, true, "load from PROT_NONE");
	if (mprotect(page, 4096, PROT_READ | PROT_WRITE))
		die("mprotect write");
	try_access(page, false, "store after PROT_READ|PROT_WRITE");
	pmem_persist(page, 1);
	/* Written back, then unreadable: the fence must still settle it. */
	*(volatile uint64_t *)(page + 256) = PATTERN;
	pmem_flush(page + 256, 8);
	if (mprotect(page, 4096, PROT_NONE))
		die("mprotect none");
	pmem_drain();
	if (mprotect(page, 4096, PROT_READ | PROT_WRITE))
		die("mprotect write");
	/* The kernel's answers are the program's. */
	errno = 0;
	printf("unaligned: %d %s\n", mprotect(page + 1, 4096, PROT_READ),
	       strerror(errno));
	errno = 0;
	printf("bad prot: %d %s\n", mprotect(page, 4096, 0x7000000),
	       strerror(errno));
	return 0;
}

struct remapper {
	pthread_t t;
	char path[4096];
	bool forget;
};

static void *remap_work(void *arg)
{
	struct remapper *w = arg;
	size_t len;
	int is_pmem;
	char *p = pmem_map_file(w->path, 2 * 4096 * 4, PMEM_FILE_CREATE, 0600,
				&len, &is_pmem);

	if (!p)
		die("pmem_map_file");
	len /= 2;	/* the file is twice the mapping: room to grow */
	if (munmap(p + len, len))
		die("munmap");
	for (unsigned i = 0; i < 100; i++) {
		char *q;

		if (mprotect(p, len, PROT_READ) ||
		    mprotect(p, len, PROT_READ | PROT_WRITE))
			die("mprotect");
		q = mremap(p, len, 2 * len, MREMAP_MAYMOVE);
		if (q == MAP_FAILED)
			die("mremap grow");
		*(volatile uint64_t *)(q + len + (i % 4) * 1024) = PATTERN + i;
		pmem_persist(q + len + (i % 4) * 1024, 8);
		p = mremap(q, 2 * len, len, 0);
		if (p != q)
			die("mremap shrink");
		if (w->forget && i == 99) {
			/* Every byte differs from the line's last value. */
			*(volatile uint64_t *)(p + (i % 8) * 1024) = ~(PATTERN + i);
			continue;
		}
		*(volatile uint64_t *)(p + (i % 8) * 1024) = PATTERN + i;
		pmem_persist(p + (i % 8) * 1024, 8);
	}
	if (munmap(p, len))
		die("munmap");
	return NULL;
}

/*
 * From its 65th store on, each stores what its line holds already: 336
 * write-backs of unchanged lines, all at one site. The remappers store a
 * new value each time, so their write-backs never find a line unchanged
 * unless the watcher missed the store before (check_watch.sh counts).
 */
static void *pool_work(void *arg)
{
	(void)arg;
	for (unsigned i = 0; i < 400; i++)
		store_persist(4096 + (i % 64) * 64);
	return NULL;
}

static int remap_threads_case(const char *dir)
{
	struct remapper w[4];
	pthread_t other;

	if (pthread_create(&other, NULL, pool_work, NULL))
		die("pthread_create");
	for (unsigned i = 0; i < 4; i++) {
		snprintf(w[i].path, sizeof(w[i].path), "%s/remap%u", dir, i);
		w[i].forget = i == 1;
		if (pthread_create(&w[i].t, NULL, remap_work, &w[i]))
			die("pthread_create");
	}
	for (unsigned i = 0; i < 4; i++)
		pthread_join(w[i].t, NULL);
	pthread_join(other, NULL);
	/* Thread 1's last store (99 % 8 = 3: offset 3072 of remap1) is never
	 * persisted: one report. */
	return 0;
}

/* 64 bytes stored, never flushed: what each ending is judged on. */
static void store_unflushed(void)
{
	memset(pool + 2 * 4096 + 128, 0x5a, 64);
}

static void on_term(int sig)
{
	(void)sig;
	puts("handler");
	exit(3);
}

static int end_case(const char *how)
{
	struct sigaction old;

	store_unflushed();
	if (!strcmp(how, "exit"))
		return 0;
	if (!strcmp(how, "_exit"))
		_exit(7);
	if (!strcmp(how, "abort"))
		abort();
	if (!strcmp(how, "sigterm")) {
		if (sigaction(SIGTERM, NULL, &old))
			die("sigaction");
		puts(old.sa_handler == SIG_DFL ? "SIGTERM: default" : "SIGTERM: set");
		raise(SIGTERM);
	}
	if (!strcmp(how, "segv"))
		*(volatile int *)unmapped = 1;
	if (!strcmp(how, "sigkill"))
		raise(SIGKILL);
	if (!strcmp(how, "handler")) {
		if (signal(SIGTERM, on_term) == SIG_ERR)
			die("signal");
		raise(SIGTERM);
	}
	return 1;
}

int main(int argc, char **argv)
{
	const char *c;
	int ret;

	if (argc != 3) {
		fprintf(stderr, "usage: %s CASE DIR\n", argv[0]);
		return 2;
	}
	c = argv[1];
	setvbuf(stdout, NULL, _IONBF, 0);
	if (!strcmp(c, "discover"))
		return discover_case(argv[2]);
	map_pool(argv[2]);
	if (!strcmp(c, "segv-handler"))
		ret = handler_case(false);
	else if (!strcmp(c, "signal-handler"))
		ret = handler_case(true);
	else if (!strcmp(c, "segv-default"))
		ret = (*(volatile int *)unmapped = 1);
	else if (!strcmp(c, "read"))
		ret = read_case();
	else if (!strcmp(c, "threads"))
		ret = threads_case(false, false);
	else if (!strcmp(c, "threads-bug"))
		ret = threads_case(true, false);
	else if (!strcmp(c, "shared-page"))
		ret = threads_case(false, true);
	else if (!strcmp(c, "copy-mc"))
		ret = copy_mc_case(argv[2]);
	else if (!strcmp(c, "fork"))
		ret = fork_case();
	else if (!strcmp(c, "vfork"))
		ret = vfork_case();
	else if (!strcmp(c, "eager"))
		ret = eager_case();
	else if (!strcmp(c, "perf"))
		ret = perf_case();
	else if (!strcmp(c, "msync"))
		ret = msync_case();
	else if (!strcmp(c, "mremap-grow"))
		ret = mremap_grow_case(argv[2]);
	else if (!strcmp(c, "mremap-move"))
		ret = mremap_move_case();
	else if (!strcmp(c, "mremap-shrink"))
		ret = mremap_shrink_case();
	else if (!strcmp(c, "mremap-dup"))
		ret = mremap_dup_case();
	else if (!strcmp(c, "mprotect"))
		ret = mprotect_case();
	else if (!strcmp(c, "mprotect-keep"))
		ret = mprotect_keep_case();
	else if (!strcmp(c, "remap-threads"))
		ret = remap_threads_case(argv[2]);
	else if (!strncmp(c, "end-", 4))
		ret = end_case(c + 4);
	else {
		fprintf(stderr, "unknown case %s\n", c);
		return 2;
	}
	if (pool && strncmp(c, "end-", 4))
		pmem_unmap(pool, pool_len);
	return ret;
}
