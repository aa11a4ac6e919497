// SPDX-License-Identifier: MIT
/*
 * test_threads.c - the library's thread-safety promises, made to race.
 *
 * Written to be run under ThreadSanitizer (`make check` builds build-tsan
 * for the "threads" suite), where a data race fails the run even when the
 * bytes come out right; it also runs in the normal and ASan builds, where
 * it checks the results. Every case starts its threads from a barrier so
 * they really overlap.
 *
 *   ns_map         2, 4 and 8 threads open their own files (4 KiB,
 *                  64 KiB, 4 MiB; plain and emulated) as namespaces again
 *                  and again, on a disk file system and on tmpfs: every
 *                  store through a mapping reaches its own file (pread),
 *                  nothing faults.
 *   memmap_init    ntm_memmap_init() with 2, 4 and 7 threads and every
 *                  strategy gives the one-thread memmap byte for byte, for
 *                  4 KiB and 2 MiB pages, descriptors in DRAM and on the
 *                  device; then get/put from several threads on tails of
 *                  one compound page land on its head and balance out.
 *   blk_badblocks  an emulated namespace (a sparse file in a fresh
 *                  directory under /dev/shm): three threads each write and
 *                  read back their own sectors (plain, vectored, FUA) while
 *                  a fourth adds and clears bad sectors all over the device
 *                  and checks that the list it reads back is sorted,
 *                  merged and inside the device. A read returns its data or
 *                  -EIO, never wrong bytes; every write succeeds (writing a
 *                  bad sector clears it). At the end, with the list cleared,
 *                  the device holds each thread's last writes and the list
 *                  file is empty.
 *   mc_fault       several threads at once run ntm_copy_mc() into the hole
 *                  of a file mapping truncated underneath (SIGBUS past EOF
 *                  stands in for poison) while another copies good memory:
 *                  each fault returns the bytes not copied, in its thread.
 *   mc_chain       the application replaces its SIGBUS handler and calls
 *                  ntm_mc_install() again and again while another thread
 *                  sends itself SIGBUS: each sent signal reaches the
 *                  application's handler exactly once, through whichever
 *                  previous handler ntmem has recorded by then.
 *   first_dispatch a fresh process (this program, executed again) whose
 *                  threads all make their first copy at the same moment:
 *                  the dispatch table is chosen once and every thread sees
 *                  the whole of it.
 *   first_mc       a fresh process whose threads make their first
 *                  ntm_copy_mc() at the same moment, each one faulting:
 *                  none may fault before the SIGBUS handler is in place.
 *
 * `test_threads --first-call dispatch|mc [FILE]` is the fresh process.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <pthread.h>
#include <setjmp.h>	/* cmocka.h needs it first */
#include <signal.h>
#include <spawn.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/uio.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>

#include <ntmem.h>
#include "dispatch.h"
#include "../lib/testutil.h"

#define PG ((size_t)4096)
#define MiB ((size_t)1 << 20)
#define ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))

extern char **environ;

/*
 * What a worker thread found wrong: the first message wins, the main
 * thread fails the test with it after the join (cmocka's assertions must
 * not run off the main thread).
 */
struct verdict {
	pthread_mutex_t lock;
	char msg[200];
};

static void verdict_init(struct verdict *v)
{
	pthread_mutex_init(&v->lock, NULL);
	v->msg[0] = '\0';
}

__attribute__((format(printf, 2, 3)))
static void verdict_fail(struct verdict *v, const char *fmt, ...)
{
	va_list ap;

	pthread_mutex_lock(&v->lock);
	if (!v->msg[0]) {
		va_start(ap, fmt);
		vsnprintf(v->msg, sizeof(v->msg), fmt, ap);
		va_end(ap);
	}
	pthread_mutex_unlock(&v->lock);
}

static void verdict_check(struct verdict *v, const char *what)
{
	pthread_mutex_destroy(&v->lock);
	if (v->msg[0])
		fail_msg("%s: %s", what, v->msg);
}

/* Start @n threads running @fn on the elements of @args (@size apart). */
static void run_threads(unsigned n, void *(*fn)(void *), void *args, size_t size)
{
	pthread_t t[16];

	assert_true(n <= ARRAY_SIZE(t));
	for (unsigned i = 0; i < n; i++)
		assert_int_equal(pthread_create(&t[i], NULL, fn,
						(char *)args + i * size), 0);
	for (unsigned i = 0; i < n; i++)
		assert_int_equal(pthread_join(t[i], NULL), 0);
}

/* --- a scratch directory in /dev/shm ------------------------------------- */

static char dir[64];

static int dir_setup(void **state)
{
	(void)state;
	snprintf(dir, sizeof(dir), "/dev/shm/ntmem-test-threads-XXXXXX");
	return mkdtemp(dir) ? 0 : -1;
}

/* Everything the cases left (they clean up, unless one failed midway). */
static int dir_teardown(void **state)
{
	(void)state;
	return tu_remove_tree(dir);
}


/* --- namespaces mapped at once ------------------------------------------ */

/*
 * One thread of ns_map: opens its own file as a namespace again and
 * again (plain or emulated: MAP_SYNC is tried, then refused off DAX), stores
 * its tag at the first, middle and last 8 bytes and reads each back
 * through its own descriptor. A store the kernel sent into another
 * thread's mapping leaves its own file without the tag; one into nothing
 * faults.
 */
struct ns_mapper {
	char path[PATH_MAX];
	size_t len;
	uint32_t id;
	unsigned rounds;
	pthread_barrier_t *start;
	struct verdict *v;
};

static void *ns_mapper_run(void *arg)
{
	struct ns_mapper *m = arg;
	int fd = open(m->path, O_RDONLY | O_CLOEXEC);

	pthread_barrier_wait(m->start);
	if (fd < 0)
		verdict_fail(m->v, "%s: %s", m->path, strerror(errno));
	for (unsigned r = 0; fd >= 0 && r < m->rounds; r++) {
		const size_t off[] = { 0, m->len / 2, m->len - 8 };
		uint64_t tag = (uint64_t)m->id << 32 | r, got;
		struct ntm_ns *ns;
		int ret = ntm_ns_open(&ns, m->path, r % 2 ? NTM_NS_EMULATE : 0);

		if (ret) {
			verdict_fail(m->v, "%s: ntm_ns_open: %s", m->path,
				     strerror(-ret));
			break;
		}
		for (size_t i = 0; i < ARRAY_SIZE(off); i++)
			memcpy((char *)ntm_ns_base(ns) + off[i], &tag, 8);
		for (size_t i = 0; i < ARRAY_SIZE(off); i++)
			if (pread(fd, &got, 8, (off_t)off[i]) != 8 || got != tag)
				verdict_fail(m->v, "%s, round %u: byte %zu holds "
					     "%#" PRIx64 ", not its tag %#" PRIx64,
					     m->path, r, off[i], got, tag);
		ntm_ns_close(ns);
	}
	if (fd >= 0)
		close(fd);
	return NULL;
}

/*
 * 2, 4 and 8 threads map their own 4 KiB, 64 KiB and 4 MiB files at once,
 * in a directory on a disk file system (where the kernel refuses MAP_SYNC
 * only after looking at the file) and on tmpfs: every store reaches its
 * own file and nothing faults.
 */
static void test_ns_map(void **state)
{
	static const size_t lens[] = { 4 * 1024, 64 * 1024, 4 * MiB };
	static const unsigned counts[] = { 2, 4, 8 };
	char disk[64];
	const char *where[] = { disk, dir };

	(void)state;
	snprintf(disk, sizeof(disk), "/tmp/ntmem-test-threads-XXXXXX");
	assert_non_null(mkdtemp(disk));
	for (size_t w = 0; w < ARRAY_SIZE(where); w++)
		for (size_t c = 0; c < ARRAY_SIZE(counts); c++)
			for (size_t l = 0; l < ARRAY_SIZE(lens); l++) {
				struct ns_mapper m[8];
				pthread_barrier_t start;
				struct verdict v;

				verdict_init(&v);
				assert_int_equal(pthread_barrier_init(&start, NULL,
								      counts[c]), 0);
				for (unsigned i = 0; i < counts[c]; i++) {
					m[i] = (struct ns_mapper){
						.len = lens[l], .id = i + 1,
						.rounds = tu_map_thread_rounds(300),
						.start = &start,
						.v = &v };
					snprintf(m[i].path, sizeof(m[i].path),
						 "%s/ns-%u", where[w], i);
					tu_write_file(m[i].path, lens[l], i + 1,
						      0600);
				}
				run_threads(counts[c], ns_mapper_run, m, sizeof(m[0]));
				for (unsigned i = 0; i < counts[c]; i++)
					unlink(m[i].path);
				pthread_barrier_destroy(&start);
				verdict_check(&v, where[w]);
			}
	assert_int_equal(tu_remove_tree(disk), 0);
}
/* --- memmap init -------------------------------------------------------- */

struct geometry {
	const char *name;
	size_t align, size;
	unsigned desc_size;
	enum ntm_memmap_place place;
};

/* Small enough for ThreadSanitizer's pace, several shares per thread. */
static const struct geometry geometries[] = {
	{ "4k mem", PG, 8 * MiB + 12 * PG, 64, NTM_MEMMAP_MEM },
	{ "4k dev", PG, 8 * MiB, 96, NTM_MEMMAP_DEV },
	{ "2m mem", 2 * MiB, 18 * MiB, 80, NTM_MEMMAP_MEM },
	{ "2m dev", 2 * MiB, 16 * MiB, 64, NTM_MEMMAP_DEV },
};

/* NTM_INIT_CALL's copy: an ordinary one, so the race detector sees it. */
static void *plain_copy(void *dst, const void *src, size_t n, void *arg)
{
	(void)arg;
	return memcpy(dst, src, n);
}

struct getter {
	const struct ntm_memmap *mm;
	size_t first_pfn, pages;	/* the compound page's tails */
	unsigned seed;
};

enum { GETS = 2000 };

/* GETS gets on random tails, then as many puts: the head's count moves. */
static void *getter(void *p)
{
	struct getter *g = p;
	uint64_t st = g->seed;

	for (int i = 0; i < 2 * GETS; i++) {
		size_t pfn = g->first_pfn + 1 + tu_rand(&st) % (g->pages - 1);
		struct ntm_page *page = ntm_memmap_page(g->mm, pfn);

		if (i < GETS)
			ntm_page_get(g->mm, page);
		else
			ntm_page_put(g->mm, page);
	}
	return NULL;
}

static void test_memmap_init(void **state)
{
	static const enum ntm_memmap_strategy strategies[] = {
		NTM_INIT_FIXED, NTM_INIT_FIELD, NTM_INIT_MEMCPY, NTM_INIT_NT,
		NTM_INIT_CALL,
	};
	static const unsigned nthreads[] = { 2, 4, 7 };
	int owner;

	(void)state;
	for (size_t g = 0; g < ARRAY_SIZE(geometries); g++) {
		const struct geometry *geo = &geometries[g];
		struct ntm_memmap_config cfg = {
			.desc_size = geo->desc_size, .align = geo->align,
			.place = geo->place, .strategy = NTM_INIT_FIELD,
			.threads = 1,
		};
		struct ntm_memmap *mm;
		struct ntm_ns *ns;
		unsigned char *want, *descs;
		size_t bytes;

		assert_int_equal(ntm_ns_anon(&ns, geo->size, geo->align), 0);
		assert_int_equal(ntm_memmap_create(&mm, ntm_ns_base(ns), geo->size,
						   &owner, &cfg), 0);
		/* The reference: one thread, plain per-field stores. */
		assert_int_equal(ntm_memmap_init(mm), 0);
		bytes = ntm_memmap_bytes(mm);
		descs = ntm_memmap_descs(mm);
		want = malloc(bytes);
		assert_non_null(want);
		memcpy(want, descs, bytes);

		for (size_t s = 0; s < ARRAY_SIZE(strategies); s++) {
			for (size_t t = 0; t < ARRAY_SIZE(nthreads); t++) {
				size_t at;

				memset(descs, 0xa5, bytes);
				assert_int_equal(ntm_memmap_set_init(mm, strategies[s],
						nthreads[t], plain_copy, NULL), 0);
				assert_int_equal(ntm_memmap_init(mm), 0);
				at = tu_first_diff(descs, want, bytes);
				if (at != bytes)
					fail_msg("%s, %s, %u threads: descriptor byte "
						 "%zu differs from the 1-thread memmap",
						 geo->name,
						 ntm_memmap_strategy_name(strategies[s]),
						 nthreads[t], at);
			}
		}

		if (ntm_memmap_order(mm) > 0) {
			/* The first whole compound page that is described. */
			size_t per = geo->align / PG;
			size_t head = tu_round_up(ntm_memmap_first_pfn(mm), per);
			struct getter gs[4];
			struct ntm_page *hp = ntm_memmap_page(mm, head);

			assert_non_null(hp);
			for (unsigned i = 0; i < ARRAY_SIZE(gs); i++)
				gs[i] = (struct getter){ mm, head, per, 17 + i };
			run_threads(ARRAY_SIZE(gs), getter, gs, sizeof(gs[0]));
			assert_int_equal(ntm_page_get(mm, hp), 1);
			assert_int_equal(ntm_page_put(mm, hp), 0);
		}
		free(want);
		ntm_memmap_destroy(mm);
		ntm_ns_close(ns);
	}
}

/* --- block I/O against bad-sector changes ------------------------------- */

#define SS 512u			/* sector size */
#define DEV_SECTORS 2048u	/* 1 MiB */
#define IO_THREADS 3
#define IO_ROUNDS 1000
#define MAX_RUN 8		/* sectors per request */

struct io_worker {
	struct ntm_blk *blk;
	size_t first, count;	/* this thread's sectors */
	uint64_t *version;	/* per own sector: seed of its last write */
	unsigned eio;		/* reads that met a bad sector */
	struct verdict *v;
	pthread_barrier_t *start;
};

/* Sector @s's bytes as written with @version. */
static void sector_data(unsigned char *buf, size_t s, uint64_t version)
{
	tu_fill_random(buf, SS, (uint64_t)s * 0x100000001b3ull + version + 1);
}

static void *io_worker(void *p)
{
	struct io_worker *w = p;
	unsigned char *data = malloc(MAX_RUN * SS), *back = malloc(MAX_RUN * SS),
		      *want = malloc(SS);
	uint64_t st = w->first + 1;

	pthread_barrier_wait(w->start);
	if (!data || !back || !want) {
		verdict_fail(w->v, "no memory");
		goto out;
	}
	for (unsigned round = 1; round <= IO_ROUNDS; round++) {
		size_t s = w->first + tu_rand(&st) % w->count;
		size_t n = 1 + tu_rand(&st) % MAX_RUN;
		size_t len;
		uint64_t off = (uint64_t)s * SS;
		ssize_t r;

		if (n > w->first + w->count - s)
			n = w->first + w->count - s;
		len = n * SS;
		for (size_t k = 0; k < n; k++)
			sector_data(data + k * SS, s + k, round);
		switch (round % 3) {
		case 0:
			r = ntm_blk_write(w->blk, data, len, off, 0);
			break;
		case 1:
			r = ntm_blk_write(w->blk, data, len, off, NTM_BLK_FUA);
			break;
		default: {
			struct iovec iov[2] = { { data, 100 },
						{ data + 100, len - 100 } };

			r = ntm_blk_writev(w->blk, iov, 2, off, 0);
		}
		}
		if (r != (ssize_t)len) {
			verdict_fail(w->v, "write of sectors %zu+%zu returned %zd",
				     s, n, r);
			goto out;
		}
		for (size_t k = 0; k < n; k++)
			w->version[s + k - w->first] = round;

		/* Read back a run that may reach older writes. */
		s = w->first + tu_rand(&st) % w->count;
		n = 1 + tu_rand(&st) % MAX_RUN;
		if (n > w->first + w->count - s)
			n = w->first + w->count - s;
		len = n * SS;
		memset(back, 0x5a, len);
		if (round & 1) {
			r = ntm_blk_read(w->blk, back, len, (uint64_t)s * SS);
		} else {
			struct iovec iov[2] = { { back, len - 7 },
						{ back + len - 7, 7 } };

			r = ntm_blk_readv(w->blk, iov, 2, (uint64_t)s * SS);
		}
		if (r == -EIO) {
			w->eio++;
			continue;
		}
		if (r != (ssize_t)len) {
			verdict_fail(w->v, "read of sectors %zu+%zu returned %zd",
				     s, n, r);
			goto out;
		}
		for (size_t k = 0; k < n; k++) {
			sector_data(want, s + k, w->version[s + k - w->first]);
			if (memcmp(back + k * SS, want, SS)) {
				verdict_fail(w->v, "sector %zu reads back wrong "
					     "data", s + k);
				goto out;
			}
		}
	}
out:
	free(data);
	free(back);
	free(want);
	return NULL;
}

struct bb_worker {
	struct ntm_blk *blk;
	int *done;		/* set by the main thread once the I/O ends */
	unsigned changes;
	struct verdict *v;
	pthread_barrier_t *start;
};

/* The list is sorted, merged (no two ranges touch) and inside the device. */
static bool list_ok(const struct ntm_badblock *bb, size_t n, char *why,
		    size_t whylen)
{
	for (size_t i = 0; i < n; i++) {
		if (bb[i].count == 0 || bb[i].sector >= DEV_SECTORS ||
		    bb[i].count > DEV_SECTORS - bb[i].sector) {
			snprintf(why, whylen, "entry %zu (%llu+%llu) outside the "
				 "device or empty", i,
				 (unsigned long long)bb[i].sector,
				 (unsigned long long)bb[i].count);
			return false;
		}
		if (i && bb[i - 1].sector + bb[i - 1].count >= bb[i].sector) {
			snprintf(why, whylen, "entries %zu and %zu not sorted and "
				 "merged", i - 1, i);
			return false;
		}
	}
	return true;
}

static void *bb_worker(void *p)
{
	struct bb_worker *w = p;
	struct ntm_badblock bb[64];
	uint64_t st = 0x5eed;
	char why[120];

	pthread_barrier_wait(w->start);
	while (!__atomic_load_n(w->done, __ATOMIC_ACQUIRE)) {
		uint64_t s = tu_rand(&st) % DEV_SECTORS;
		uint64_t n = 1 + tu_rand(&st) % 16;
		bool add = tu_rand(&st) % 2;
		size_t have;
		int r;

		if (n > DEV_SECTORS - s)
			n = DEV_SECTORS - s;
		r = add ? ntm_blk_badblocks_add(w->blk, s, n)
			: ntm_blk_badblocks_clear(w->blk, s, n);
		if (r) {
			verdict_fail(w->v, "%s %llu+%llu returned %d",
				     add ? "add" : "clear", (unsigned long long)s,
				     (unsigned long long)n, r);
			return NULL;
		}
		w->changes++;
		have = ntm_blk_badblocks(w->blk, bb, ARRAY_SIZE(bb));
		if (have > ARRAY_SIZE(bb))
			have = ARRAY_SIZE(bb);
		if (!list_ok(bb, have, why, sizeof(why))) {
			verdict_fail(w->v, "bad-sector list: %s", why);
			return NULL;
		}
	}
	return NULL;
}

struct blk_run {
	struct io_worker io[IO_THREADS];
	struct bb_worker bb;
	int done;
};

static void test_blk_badblocks(void **state)
{
	struct ntm_blk_config cfg = { .sector_size = SS };
	pthread_barrier_t start;
	struct blk_run run;
	struct verdict v;
	pthread_t io[IO_THREADS], bbt;
	char path[128], list[160];
	unsigned char *got, *want;
	struct ntm_ns *ns;
	struct ntm_blk *blk;
	struct stat sb;
	unsigned eio = 0;

	(void)state;
	snprintf(path, sizeof(path), "%s/ns", dir);
	snprintf(list, sizeof(list), "%s.badblocks", path);
	assert_int_equal(ntm_ns_create(&ns, path, DEV_SECTORS * SS, PG,
				       NTM_NS_EMULATE), 0);
	assert_int_equal(ntm_blk_open(&blk, ns, &cfg), 0);
	verdict_init(&v);
	assert_int_equal(pthread_barrier_init(&start, NULL, IO_THREADS + 1), 0);

	memset(&run, 0, sizeof(run));
	for (unsigned i = 0; i < IO_THREADS; i++) {
		size_t per = DEV_SECTORS / IO_THREADS;

		run.io[i] = (struct io_worker){
			.blk = blk, .first = i * per,
			.count = i + 1 < IO_THREADS ? per : DEV_SECTORS - i * per,
			.v = &v, .start = &start,
		};
		run.io[i].version = calloc(run.io[i].count, sizeof(uint64_t));
		assert_non_null(run.io[i].version);
		/* Version 0: what every sector holds before the first write. */
		for (size_t k = 0; k < run.io[i].count; k++) {
			unsigned char sec[SS];

			sector_data(sec, run.io[i].first + k, 0);
			assert_int_equal(ntm_blk_write(blk, sec, SS,
				(run.io[i].first + k) * SS, 0), (ssize_t)SS);
		}
	}
	run.bb = (struct bb_worker){ .blk = blk, .done = &run.done, .v = &v,
				     .start = &start };
	for (unsigned i = 0; i < IO_THREADS; i++)
		assert_int_equal(pthread_create(&io[i], NULL, io_worker,
						&run.io[i]), 0);
	assert_int_equal(pthread_create(&bbt, NULL, bb_worker, &run.bb), 0);
	for (unsigned i = 0; i < IO_THREADS; i++) {
		assert_int_equal(pthread_join(io[i], NULL), 0);
		eio += run.io[i].eio;
	}
	__atomic_store_n(&run.done, 1, __ATOMIC_RELEASE);
	assert_int_equal(pthread_join(bbt, NULL), 0);
	pthread_barrier_destroy(&start);
	verdict_check(&v, "blk with bad-sector changes");
	/* Both sides really ran into each other. */
	assert_true(run.bb.changes > 0);
	print_message("blk_badblocks: %u list changes, %u reads met a bad "
		      "sector\n", run.bb.changes, eio);

	/* Quiet again: clear everything, and every sector is its last write. */
	assert_int_equal(ntm_blk_badblocks_clear(blk, 0, DEV_SECTORS), 0);
	assert_int_equal(ntm_blk_badblocks(blk, NULL, 0), 0);
	got = malloc(DEV_SECTORS * SS);
	want = malloc(SS);
	assert_non_null(got);
	assert_non_null(want);
	assert_int_equal(ntm_blk_read(blk, got, DEV_SECTORS * SS, 0),
			 (ssize_t)(DEV_SECTORS * SS));
	for (unsigned i = 0; i < IO_THREADS; i++) {
		const struct io_worker *w = &run.io[i];

		for (size_t k = 0; k < w->count; k++) {
			sector_data(want, w->first + k, w->version[k]);
			if (memcmp(got + (w->first + k) * SS, want, SS))
				fail_msg("sector %zu: not its last write (version "
					 "%llu)", w->first + k,
					 (unsigned long long)w->version[k]);
		}
		free(w->version);
	}
	/* The persisted list agrees: nothing is bad. */
	assert_int_equal(stat(list, &sb), 0);
	assert_int_equal(sb.st_size, 0);
	free(got);
	free(want);
	ntm_blk_close(blk);
	ntm_ns_close(ns);
	assert_int_equal(unlink(list), 0);
	assert_int_equal(unlink(path), 0);
}

/* --- ntm_copy_mc() faulting in several threads -------------------------- */

#define FILE_PAGES 4
#define FAULT_THREADS 4
#define FAULT_ROUNDS 500

/*
 * A file of FILE_PAGES pages mapped whole, then cut to one page: reading
 * pages 1.. of the mapping raises SIGBUS.
 */
struct holed {
	int fd;
	unsigned char *map;
	unsigned char want[PG];		/* page 0, still there */
};

/* Returns 0, or -errno naming what failed (used by the fresh process too). */
static int holed_open(struct holed *h, const char *path, bool create)
{
	unsigned char page[PG];

	h->fd = open(path, create ? O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC
				  : O_RDONLY | O_CLOEXEC, 0600);
	if (h->fd < 0)
		return -errno;
	tu_fill_random(h->want, PG, 0xfa017);
	if (create) {
		for (size_t i = 0; i < FILE_PAGES; i++) {
			tu_fill_random(page, PG, 0xfa017 + i * 0x10000);
			if (pwrite(h->fd, i ? page : h->want, PG,
				   (off_t)(i * PG)) != (ssize_t)PG)
				return -EIO;
		}
	}
	h->map = mmap(NULL, FILE_PAGES * PG, PROT_READ, MAP_SHARED, h->fd, 0);
	if (h->map == MAP_FAILED)
		return -errno;
	if (create && ftruncate(h->fd, (off_t)PG))
		return -errno;
	return 0;
}

static void holed_close(struct holed *h)
{
	munmap(h->map, FILE_PAGES * PG);
	close(h->fd);
}

struct faulter {
	const struct holed *h;
	unsigned seed;
	bool good_only;		/* copies ordinary memory, never faults */
	struct verdict *v;
	pthread_barrier_t *start;
};

/*
 * One copy of [@off, @off + @n) of the mapping: the part before page 1
 * arrives, the rest is reported not copied. Returns false after a verdict.
 */
static bool fault_copy(const struct faulter *f, unsigned char *dst, size_t off,
		       size_t n)
{
	size_t want_left = off + n > PG ? off + n - (off > PG ? off : PG) : 0;
	size_t left = ntm_copy_mc(dst, f->h->map + off, n);

	if (left != want_left) {
		verdict_fail(f->v, "copy of %zu+%zu: %zu bytes not copied, "
			     "expected %zu", off, n, left, want_left);
		return false;
	}
	if (memcmp(dst, f->h->want + off, n - left)) {
		verdict_fail(f->v, "copy of %zu+%zu: wrong bytes", off, n);
		return false;
	}
	return true;
}

static void *faulter(void *p)
{
	struct faulter *f = p;
	unsigned char *dst = malloc(FILE_PAGES * PG), *src = malloc(PG);
	uint64_t st = f->seed;

	pthread_barrier_wait(f->start);
	if (!dst || !src) {
		verdict_fail(f->v, "no memory");
		goto out;
	}
	tu_fill_random(src, PG, f->seed);
	for (int i = 0; i < FAULT_ROUNDS; i++) {
		size_t off = tu_rand(&st) % (2 * PG);
		size_t n = 1 + tu_rand(&st) % (FILE_PAGES * PG - off);

		if (f->good_only) {
			size_t m = 1 + tu_rand(&st) % PG;

			if (ntm_copy_mc(dst, src, m) || memcmp(dst, src, m)) {
				verdict_fail(f->v, "good copy of %zu bytes failed", m);
				goto out;
			}
			continue;
		}
		/* Alternate: the whole file, then a random stretch. */
		if (!(i & 1 ? fault_copy(f, dst, off, n)
			    : fault_copy(f, dst, 0, FILE_PAGES * PG)))
			goto out;
	}
out:
	free(dst);
	free(src);
	return NULL;
}

static void test_mc_fault(void **state)
{
	struct faulter fs[FAULT_THREADS + 1];
	pthread_barrier_t start;
	struct verdict v;
	struct holed h;
	char path[128];
	int r;

	(void)state;
	/*
	 * cmocka puts its own SIGBUS handler in place for every test, over
	 * the one an earlier test's first ntm_copy_mc() installed: put
	 * ntmem's back on top, as mc.h asks of such a program.
	 */
	assert_int_equal(ntm_mc_install(), 0);
	snprintf(path, sizeof(path), "%s/fault", dir);
	r = holed_open(&h, path, true);
	if (r)
		fail_msg("%s: %s", path, strerror(-r));
	verdict_init(&v);
	assert_int_equal(pthread_barrier_init(&start, NULL, ARRAY_SIZE(fs)), 0);
	for (unsigned i = 0; i < ARRAY_SIZE(fs); i++)
		fs[i] = (struct faulter){ &h, 31 + i, i == FAULT_THREADS, &v,
					  &start };
	run_threads(ARRAY_SIZE(fs), faulter, fs, sizeof(fs[0]));
	pthread_barrier_destroy(&start);
	verdict_check(&v, "ntm_copy_mc in threads");
	holed_close(&h);
	assert_int_equal(unlink(path), 0);
}

/* --- the SIGBUS chain while it is being replaced ------------------------ */

#define CHAIN_ROUNDS 300

static unsigned app_hits;	/* SIGBUSes the application's handler saw */

static void app_sigbus(int sig)
{
	(void)sig;
	__atomic_fetch_add(&app_hits, 1, __ATOMIC_RELAXED);
}

struct chainer {
	struct verdict *v;
	pthread_barrier_t *start;
};

/*
 * The application sets its handler again and again, each time followed by
 * ntm_mc_install() as mc.h asks: every install records a new previous
 * handler while the other thread's SIGBUS may be reading the last one.
 */
static void *reinstaller(void *p)
{
	struct chainer *c = p;
	struct sigaction sa;

	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = app_sigbus;
	sigemptyset(&sa.sa_mask);
	pthread_barrier_wait(c->start);
	for (int i = 0; i < CHAIN_ROUNDS; i++) {
		int r;

		if (sigaction(SIGBUS, &sa, NULL)) {
			verdict_fail(c->v, "sigaction: %s", strerror(errno));
			return NULL;
		}
		r = ntm_mc_install();
		if (r) {
			verdict_fail(c->v, "ntm_mc_install: %d", r);
			return NULL;
		}
	}
	return NULL;
}

/* A sent SIGBUS is the application's: ntmem passes each one on, once. */
static void *sender(void *p)
{
	struct chainer *c = p;

	pthread_barrier_wait(c->start);
	for (int i = 0; i < CHAIN_ROUNDS; i++)
		if (pthread_kill(pthread_self(), SIGBUS)) {
			verdict_fail(c->v, "pthread_kill failed");
			return NULL;
		}
	return NULL;
}

static void test_mc_chain(void **state)
{
	struct chainer cs[2];
	struct sigaction sa, saved;
	pthread_barrier_t start;
	pthread_t t[2];
	struct verdict v;

	(void)state;
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = app_sigbus;
	sigemptyset(&sa.sa_mask);
	assert_int_equal(sigaction(SIGBUS, &sa, &saved), 0);
	assert_int_equal(ntm_mc_install(), 0);
	__atomic_store_n(&app_hits, 0, __ATOMIC_RELAXED);
	verdict_init(&v);
	assert_int_equal(pthread_barrier_init(&start, NULL, 2), 0);
	cs[0] = cs[1] = (struct chainer){ &v, &start };
	assert_int_equal(pthread_create(&t[0], NULL, reinstaller, &cs[0]), 0);
	assert_int_equal(pthread_create(&t[1], NULL, sender, &cs[1]), 0);
	assert_int_equal(pthread_join(t[0], NULL), 0);
	assert_int_equal(pthread_join(t[1], NULL), 0);
	pthread_barrier_destroy(&start);
	/* cmocka's handler back; a later test reinstalls ntmem's on top. */
	assert_int_equal(sigaction(SIGBUS, &saved, NULL), 0);
	verdict_check(&v, "SIGBUS chain");
	assert_int_equal(__atomic_load_n(&app_hits, __ATOMIC_RELAXED),
			 CHAIN_ROUNDS);
}

/* --- first calls in a fresh process ------------------------------------- */

#define FIRST_THREADS 8

struct first {
	unsigned id;
	const char *mode;
	const struct holed *h;
	const struct ntm_variant *seen;	/* the variant this thread got */
	struct verdict *v;
	pthread_barrier_t *start;
};

static void *first_call(void *p)
{
	struct first *f = p;
	unsigned char src[300], dst[300];
	size_t n = 200 + f->id;	/* not a constant: the dispatched path */

	tu_fill_random(src, sizeof(src), f->id + 1);
	memset(dst, 0, sizeof(dst));
	pthread_barrier_wait(f->start);
	if (strcmp(f->mode, "mc") == 0) {
		size_t left = ntm_copy_mc(dst, f->h->map + PG - 100, n);

		if (left != n - 100 || memcmp(dst, f->h->want + PG - 100, 100))
			verdict_fail(f->v, "thread %u: first ntm_copy_mc left %zu "
				     "of %zu", f->id, left, n);
		return NULL;
	}
	/* Half start with each entry point that goes through the table. */
	if (f->id & 1) {
		ntm_memset_flush(dst, 0x3c, n);
		for (size_t i = 0; i < n; i++)
			if (dst[i] != 0x3c) {
				verdict_fail(f->v, "thread %u: first ntm_memset_flush "
					     "missed byte %zu", f->id, i);
				return NULL;
			}
	}
	(ntm_memcpy_nt)(dst, src, n);
	ntm_drain();
	if (memcmp(dst, src, n))
		verdict_fail(f->v, "thread %u: first ntm_memcpy_nt is wrong",
			     f->id);
	f->seen = ntm_variant_active();
	return NULL;
}

/* The fresh process: `--first-call dispatch` or `--first-call mc FILE`. */
static int first_call_main(const char *mode, const char *file)
{
	struct first fs[FIRST_THREADS];
	pthread_barrier_t start;
	struct verdict v;
	struct holed h = { .fd = -1 };

	/* Nothing may have touched the library before the threads do. */
	if (__atomic_load_n(&ntm_dispatch_published, __ATOMIC_ACQUIRE)) {
		fprintf(stderr, "first-call: the dispatch table was chosen "
			"before the threads ran\n");
		return 1;
	}
	if (strcmp(mode, "mc") == 0) {
		int r = file ? holed_open(&h, file, false) : -EINVAL;

		if (r) {
			fprintf(stderr, "first-call: %s: %s\n", file ? file : "no file",
				strerror(-r));
			return 1;
		}
	} else if (strcmp(mode, "dispatch") != 0) {
		fprintf(stderr, "first-call: unknown mode '%s'\n", mode);
		return 2;
	}
	verdict_init(&v);
	pthread_barrier_init(&start, NULL, FIRST_THREADS);
	for (unsigned i = 0; i < FIRST_THREADS; i++)
		fs[i] = (struct first){ i, mode, &h, NULL, &v, &start };
	{
		pthread_t t[FIRST_THREADS];

		for (unsigned i = 0; i < FIRST_THREADS; i++)
			if (pthread_create(&t[i], NULL, first_call, &fs[i]))
				return 1;
		for (unsigned i = 0; i < FIRST_THREADS; i++)
			pthread_join(t[i], NULL);
	}
	for (unsigned i = 1; strcmp(mode, "dispatch") == 0 && i < FIRST_THREADS; i++)
		if (fs[i].seen != fs[0].seen || !fs[i].seen)
			verdict_fail(&v, "threads 0 and %u saw different "
				     "variants", i);
	if (h.fd >= 0)
		holed_close(&h);
	if (v.msg[0]) {
		fprintf(stderr, "first-call %s: %s\n", mode, v.msg);
		return 1;
	}
	return 0;
}

/* Run this program again as `--first-call MODE [FILE]`; it must exit 0. */
static void spawn_first_call(const char *mode, const char *file)
{
	char *argv[] = { "test_threads", "--first-call", (char *)mode,
			 (char *)file, NULL };
	pid_t pid;
	int status;

	assert_int_equal(posix_spawn(&pid, "/proc/self/exe", NULL, NULL, argv,
				     environ), 0);
	assert_int_equal(waitpid(pid, &status, 0), pid);
	if (WIFSIGNALED(status))
		fail_msg("first-call %s: killed by signal %d", mode,
			 WTERMSIG(status));
	if (WEXITSTATUS(status) != 0)
		fail_msg("first-call %s: exit status %d", mode,
			 WEXITSTATUS(status));
}

static void test_first_dispatch(void **state)
{
	(void)state;
	spawn_first_call("dispatch", NULL);
}

static void test_first_mc(void **state)
{
	struct holed h;
	char path[128];
	int r;

	(void)state;
	snprintf(path, sizeof(path), "%s/first", dir);
	r = holed_open(&h, path, true);
	if (r)
		fail_msg("%s: %s", path, strerror(-r));
	holed_close(&h);
	spawn_first_call("mc", path);
	assert_int_equal(unlink(path), 0);
}

int main(int argc, char **argv)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_ns_map),
		cmocka_unit_test(test_memmap_init),
		cmocka_unit_test(test_blk_badblocks),
		cmocka_unit_test(test_mc_fault),
		cmocka_unit_test(test_mc_chain),
		cmocka_unit_test(test_first_dispatch),
		cmocka_unit_test(test_first_mc),
	};

	if (argc >= 3 && strcmp(argv[1], "--first-call") == 0)
		return first_call_main(argv[2], argc > 3 ? argv[3] : NULL);
	return cmocka_run_group_tests_name("threads", tests, dir_setup,
					   dir_teardown);
}
