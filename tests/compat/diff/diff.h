/* SPDX-License-Identifier: MIT */
/*
 * diff.h - the differential many-thread harness of the drop-ins
 * (dropin_diff): what its files share.
 *
 * One program, built against PMDK's headers and linked with Debian's
 * libpmem, libpmem2 and libpmemblk by soname, is run twice from one seed:
 * once on PMDK's libraries, once with ntmem's drop-ins first on the
 * library path. Its threads make random sequences of the libraries'
 * calls, each thread on objects of its own (files, maps, pools, a
 * reservation) and on its own part of objects they all use at once (a
 * libpmemblk pool, a libpmem mapping, a libpmem2 reservation). So what
 * each call returns does not depend on how the threads interleave: each
 * thread's trace of calls and results is the same on every run of a
 * seed, and the two libraries' traces must be equal line for line.
 *
 * Within each run the harness checks what no trace can show (an
 * "invariant"): every byte a thread reads back is what its own model of
 * the object says (so no data crosses files, maps or blocks, and every
 * successful write reads back), and the process has the descriptors and
 * mappings it started with once everything is closed.
 *
 * diff_main.c runs the rounds and threads and writes the trace; each
 * library's calls are in a file of their own (diff_pmem.c, diff_pmem2.c,
 * diff_blk.c), behind struct diff_lib.
 */
#ifndef NTMEM_TEST_DIFF_H
#define NTMEM_TEST_DIFF_H

#include <limits.h>
#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct diff_run;

/* One thread of the harness; the main thread has one too (id: threads). */
struct diff_thread {
	struct diff_run *run;
	unsigned id;
	unsigned round;
	uint64_t rng;
	char dir[PATH_MAX - 256];	/* this thread's own files */
	/* The trace: one line per call, in the thread's order. */
	char *trace;
	size_t trace_len, trace_cap;
	unsigned long calls;	/* library calls made */
	unsigned long bad;	/* invariant failures */
	/* Each library's objects of this thread (its diff_*.c). */
	struct diff_pmem *pmem;
	struct diff_pmem2 *pmem2;
	struct diff_blk *blk;
};

/* What the threads share, and the run's settings. */
struct diff_run {
	uint64_t seed;
	unsigned threads, rounds, ops;
	unsigned libs;		/* DIFF_LIB_* of the libraries exercised */
	/* The run's scratch directory (room left for the names in it). */
	char dir[PATH_MAX - 512];
	pthread_barrier_t start;	/* the threads of a round start at once */
	struct diff_thread *t;	/* threads + 1: the main thread's last */
	/* Each library's shared objects (its diff_*.c). */
	struct diff_pmem_shared *pmem;
	struct diff_pmem2_shared *pmem2;
	struct diff_blk_shared *blk;
};

#define DIFF_LIB_PMEM 1u
#define DIFF_LIB_PMEM2 2u
#define DIFF_LIB_BLK 4u

/*
 * One library's part of the harness. The run calls, in order: run_init
 * (main thread, before any thread: the shared objects), then per round
 * round_begin (main thread), and in every thread thread_init (its first
 * round only), burst (right after the threads are let go together: calls
 * on the shared objects, so that threads make them at once) and op (one
 * random call, @ops times per round over all libraries); then round_end
 * (main thread: the shared objects checked against every thread's
 * model). At the end thread_fini of every thread (main thread: close and
 * check everything the thread had) and run_fini. 0 or -1 (the run
 * cannot go on: said on stderr). A library with nothing to do between
 * rounds leaves round_begin and round_end NULL.
 */
struct diff_lib {
	const char *name;
	unsigned bit;
	int (*run_init)(struct diff_run *run);
	int (*round_begin)(struct diff_thread *main, unsigned round);
	int (*thread_init)(struct diff_thread *t);
	void (*burst)(struct diff_thread *t);
	void (*op)(struct diff_thread *t);
	void (*round_end)(struct diff_thread *main, unsigned round);
	void (*thread_fini)(struct diff_thread *t);
	void (*run_fini)(struct diff_thread *main);
};

extern const struct diff_lib diff_pmem_lib, diff_pmem2_lib, diff_blk_lib;

/* The next pseudo-random number of @t's stream; one below @n (n > 0). */
uint64_t diff_rand(struct diff_thread *t);
unsigned diff_below(struct diff_thread *t, unsigned n);

/* Append one line to @t's trace (printf-style; "\n" added). */
void diff_trace(struct diff_thread *t, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

/*
 * An invariant failed in @t (printf-style): said on stderr (the first
 * few per thread) and counted; the run fails whatever the traces say.
 */
void diff_bad(struct diff_thread *t, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

/* errno's symbolic name ("EINVAL"; "0" for none). */
const char *diff_errno_name(int err);

/* @n bytes that depend on every bit of @tag and on the offset. */
void diff_fill(unsigned char *p, size_t n, uint64_t tag);

/*
 * Whether [@p, +@n) equals @want; if not, a diff_bad() naming @what
 * and the first differing offset. True when equal.
 */
bool diff_same(struct diff_thread *t, const void *p, const void *want,
	       size_t n, const char *what);

/* A path in @t's own directory ("DIR/NAME"), into @buf of PATH_MAX. */
void diff_path(const struct diff_thread *t, char *buf, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

#endif /* NTMEM_TEST_DIFF_H */
