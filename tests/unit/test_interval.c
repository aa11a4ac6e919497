// SPDX-License-Identifier: MIT
/*
 * test_interval.c - the interval table (src/interval/interval.h):
 *
 *   insert_lookup   intervals inserted in a scrambled order are found by
 *                   every address inside them and by none in the gaps, as
 *                   a brute-force model says; the view is sorted.
 *   overlap         an overlapping or empty interval is refused (-EEXIST,
 *                   -EINVAL, the message naming it) and changes nothing;
 *                   touching ones are accepted.
 *   remove          removal by any address inside; a miss changes nothing.
 *   cut             trimming, dropping and splitting, and what the
 *                   callback is told of each interval touched.
 *   cut_split       a cut inside one interval gives the tail the new user
 *                   pointer (NULL drops it); a trim keeps the pointers; at
 *                   the capacity a split that keeps its tail is refused
 *                   whole.
 *   capacity        a table of 4 refuses the fifth (-ENOMEM, named), and a
 *                   split past it; reserve()'s own limit.
 *   threads         readers look up and walk the array (one of them in a
 *                   SIGUSR1 handler, raised at it over and over, another in
 *                   the handler of the writer's own thread) while a writer
 *                   inserts, cuts and removes: every answer is an interval
 *                   that was in the table, the one never removed is always
 *                   found, and every array is sorted and disjoint. Run in
 *                   the "threads" suite, so under ThreadSanitizer too.
 *   split_threads   readers of an address in a split's tail, while a writer
 *                   splits and rejoins it, find the interval whole with its
 *                   pointer or the tail with its own, never the tail with
 *                   the head's (also in "threads").
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <ntmem.h>
#include "interval/interval.h"
#include "../lib/testutil.h"

/* The model: cell k is [k * CELL, k * CELL + SPAN), user k + 1. */
#define CELL 1000u
#define SPAN 500u
#define CELLS 1000u

static void *user_of(unsigned k)
{
	return (void *)(uintptr_t)(k + 1);
}

static void assert_sorted(const struct ntm_interval *v, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		assert_true(v[i].lo < v[i].hi);
		if (i)
			assert_true(v[i - 1].hi <= v[i].lo);
	}
}

static void test_insert_lookup(void **state)
{
	struct ntm_interval_table t = NTM_INTERVAL_TABLE_INIT(0);
	bool in[CELLS] = { false };
	uint64_t rnd = 12345;
	struct ntm_interval got;
	const struct ntm_interval *v;
	size_t n;

	(void)state;
	/* Every other cell, in a scrambled order (a step prime to CELLS). */
	for (unsigned i = 0; i < CELLS; i++) {
		unsigned k = (i * 379u) % CELLS;

		if (k % 2)
			continue;
		assert_int_equal(ntm_interval_insert(&t, k * CELL,
						     k * CELL + SPAN,
						     user_of(k)), 0);
		in[k] = true;
	}
	v = ntm_interval_view(&t, &n);
	assert_int_equal(n, CELLS / 2);
	assert_sorted(v, n);
	for (unsigned i = 0; i < 20000; i++) {
		uintptr_t a = tu_rand(&rnd) % (CELLS * CELL + CELL);
		unsigned k = (unsigned)(a / CELL);
		bool want = k < CELLS && in[k] && a % CELL < SPAN;

		assert_int_equal(ntm_interval_lookup(&t, a, &got), want);
		if (want) {
			assert_int_equal(got.lo, k * CELL);
			assert_int_equal(got.hi, k * CELL + SPAN);
			assert_ptr_equal(got.user, user_of(k));
		}
	}
	/* The edges: lo is inside, hi is not. */
	assert_true(ntm_interval_lookup(&t, 0, &got));
	assert_true(ntm_interval_lookup(&t, SPAN - 1, &got));
	assert_false(ntm_interval_lookup(&t, SPAN, &got));
	ntm_interval_destroy(&t);
	assert_false(ntm_interval_lookup(&t, 0, &got));
}

static void test_overlap(void **state)
{
	struct ntm_interval_table t = NTM_INTERVAL_TABLE_INIT(0);
	const struct ntm_interval *v;
	size_t n;

	(void)state;
	assert_int_equal(ntm_interval_insert(&t, 100, 200, user_of(1)), 0);
	assert_int_equal(ntm_interval_insert(&t, 150, 250, user_of(2)), -EEXIST);
	assert_non_null(strstr(ntm_errmsg(), "[0x96, 0xfa) overlaps [0x64, 0xc8)"));
	assert_int_equal(ntm_interval_insert(&t, 50, 101, user_of(2)), -EEXIST);
	assert_int_equal(ntm_interval_insert(&t, 0, 1000, user_of(2)), -EEXIST);
	assert_int_equal(ntm_interval_insert(&t, 120, 130, user_of(2)), -EEXIST);
	assert_int_equal(ntm_interval_insert(&t, 300, 300, user_of(2)), -EINVAL);
	assert_non_null(strstr(ntm_errmsg(), "lo must be below hi"));
	assert_int_equal(ntm_interval_insert(&t, 301, 300, user_of(2)), -EINVAL);
	v = ntm_interval_view(&t, &n);
	assert_int_equal(n, 1);
	assert_int_equal(v[0].lo, 100);
	/* Touching at either end is no overlap. */
	assert_int_equal(ntm_interval_insert(&t, 200, 300, user_of(2)), 0);
	assert_int_equal(ntm_interval_insert(&t, 0, 100, user_of(0)), 0);
	v = ntm_interval_view(&t, &n);
	assert_int_equal(n, 3);
	assert_sorted(v, n);
	assert_ptr_equal(v[0].user, user_of(0));
	assert_ptr_equal(v[2].user, user_of(2));
	ntm_interval_destroy(&t);
}

static void test_remove(void **state)
{
	struct ntm_interval_table t = NTM_INTERVAL_TABLE_INIT(0);
	struct ntm_interval got;
	size_t n;

	(void)state;
	for (unsigned k = 0; k < 10; k++)
		assert_int_equal(ntm_interval_insert(&t, k * CELL, k * CELL + SPAN,
						     user_of(k)), 0);
	assert_null(ntm_interval_remove(&t, 3 * CELL + SPAN));	/* a gap */
	ntm_interval_view(&t, &n);
	assert_int_equal(n, 10);
	assert_ptr_equal(ntm_interval_remove(&t, 3 * CELL + SPAN - 1), user_of(3));
	assert_false(ntm_interval_lookup(&t, 3 * CELL, &got));
	assert_true(ntm_interval_lookup(&t, 4 * CELL, &got));
	assert_ptr_equal(ntm_interval_remove(&t, 0), user_of(0));
	assert_ptr_equal(ntm_interval_remove(&t, 9 * CELL), user_of(9));
	ntm_interval_view(&t, &n);
	assert_int_equal(n, 7);
	for (unsigned k = 1; k < 9; k++)
		if (k != 3)
			assert_ptr_equal(ntm_interval_remove(&t, k * CELL),
					 user_of(k));
	ntm_interval_view(&t, &n);
	assert_int_equal(n, 0);
	/* Empty again, and usable. */
	assert_int_equal(ntm_interval_insert(&t, 5, 6, user_of(5)), 0);
	assert_true(ntm_interval_lookup(&t, 5, &got));
	ntm_interval_destroy(&t);
}

struct cut_log {
	unsigned calls;
	struct ntm_interval was[8];
	unsigned left[8];
};

static void log_cut(void *arg, const struct ntm_interval *was, unsigned left)
{
	struct cut_log *log = arg;

	assert_true(log->calls < 8);
	log->was[log->calls] = *was;
	log->left[log->calls++] = left;
}

static void test_cut(void **state)
{
	struct ntm_interval_table t = NTM_INTERVAL_TABLE_INIT(0);
	struct cut_log log = { 0 };
	const struct ntm_interval *v;
	size_t n;

	(void)state;
	assert_int_equal(ntm_interval_insert(&t, 0, 100, user_of(0)), 0);
	assert_int_equal(ntm_interval_insert(&t, 100, 200, user_of(1)), 0);
	assert_int_equal(ntm_interval_insert(&t, 300, 400, user_of(3)), 0);
	/* Across three: the ends trimmed, the middle one gone. */
	assert_int_equal(ntm_interval_cut(&t, 50, 350, log_cut, &log), 0);
	v = ntm_interval_view(&t, &n);
	assert_int_equal(n, 2);
	assert_int_equal(v[0].lo, 0);
	assert_int_equal(v[0].hi, 50);
	assert_ptr_equal(v[0].user, user_of(0));
	assert_int_equal(v[1].lo, 350);
	assert_int_equal(v[1].hi, 400);
	assert_ptr_equal(v[1].user, user_of(3));
	assert_int_equal(log.calls, 3);
	assert_int_equal(log.was[0].lo, 0);
	assert_int_equal(log.was[0].hi, 100);
	assert_int_equal(log.left[0], 1);
	assert_int_equal(log.was[1].lo, 100);
	assert_int_equal(log.left[1], 0);
	assert_int_equal(log.was[2].lo, 300);
	assert_int_equal(log.was[2].hi, 400);
	assert_int_equal(log.left[2], 1);

	/* Inside one: it splits, both halves its user's. */
	log.calls = 0;
	assert_int_equal(ntm_interval_cut(&t, 10, 20, log_cut, &log), 0);
	v = ntm_interval_view(&t, &n);
	assert_int_equal(n, 3);
	assert_sorted(v, n);
	assert_int_equal(v[0].hi, 10);
	assert_int_equal(v[1].lo, 20);
	assert_int_equal(v[1].hi, 50);
	assert_ptr_equal(v[1].user, user_of(0));
	assert_int_equal(log.calls, 1);
	assert_int_equal(log.left[0], 2);

	/* Nothing there: no change, no call. */
	log.calls = 0;
	assert_int_equal(ntm_interval_cut(&t, 50, 350, log_cut, &log), 0);
	assert_int_equal(log.calls, 0);
	ntm_interval_view(&t, &n);
	assert_int_equal(n, 3);
	assert_int_equal(ntm_interval_cut(&t, 7, 7, NULL, NULL), -EINVAL);

	/* Exactly one, and everything. */
	assert_int_equal(ntm_interval_cut(&t, 20, 50, log_cut, &log), 0);
	assert_int_equal(log.left[0], 0);
	assert_int_equal(ntm_interval_cut(&t, 0, UINTPTR_MAX, NULL, NULL), 0);
	ntm_interval_view(&t, &n);
	assert_int_equal(n, 0);
	ntm_interval_destroy(&t);
}

static void test_cut_split(void **state)
{
	struct ntm_interval_table t = NTM_INTERVAL_TABLE_INIT(0);
	struct cut_log log = { 0 };
	const struct ntm_interval *v;
	size_t n;

	(void)state;
	assert_int_equal(ntm_interval_insert(&t, 0, 100, user_of(0)), 0);
	assert_int_equal(ntm_interval_insert(&t, 200, 300, user_of(2)), 0);
	/* Inside one: the tail takes the new pointer, the head keeps its. */
	assert_int_equal(ntm_interval_cut_split(&t, 210, 250, user_of(7),
						log_cut, &log), 0);
	v = ntm_interval_view(&t, &n);
	assert_int_equal(n, 3);
	assert_sorted(v, n);
	assert_int_equal(v[1].lo, 200);
	assert_int_equal(v[1].hi, 210);
	assert_ptr_equal(v[1].user, user_of(2));
	assert_int_equal(v[2].lo, 250);
	assert_int_equal(v[2].hi, 300);
	assert_ptr_equal(v[2].user, user_of(7));
	assert_int_equal(log.calls, 1);
	assert_int_equal(log.was[0].lo, 200);
	assert_int_equal(log.was[0].hi, 300);
	assert_ptr_equal(log.was[0].user, user_of(2));
	assert_int_equal(log.left[0], 2);

	/* NULL: the tail goes with the hole, one piece is left. */
	log.calls = 0;
	assert_int_equal(ntm_interval_cut_split(&t, 10, 20, NULL, log_cut,
						&log), 0);
	v = ntm_interval_view(&t, &n);
	assert_int_equal(n, 3);
	assert_int_equal(v[0].lo, 0);
	assert_int_equal(v[0].hi, 10);
	assert_ptr_equal(v[0].user, user_of(0));
	assert_int_equal(v[1].lo, 200);
	assert_int_equal(log.calls, 1);
	assert_int_equal(log.left[0], 1);

	/* No split (a trim, across two): as ntm_interval_cut(), pointers kept. */
	assert_int_equal(ntm_interval_cut_split(&t, 5, 205, user_of(8), NULL,
						NULL), 0);
	v = ntm_interval_view(&t, &n);
	assert_int_equal(n, 3);
	assert_int_equal(v[0].hi, 5);
	assert_ptr_equal(v[0].user, user_of(0));
	assert_int_equal(v[1].lo, 205);
	assert_ptr_equal(v[1].user, user_of(2));
	assert_int_equal(ntm_interval_cut_split(&t, 9, 9, user_of(8), NULL,
						NULL), -EINVAL);
	ntm_interval_destroy(&t);

	/* At the capacity a split that keeps its tail is refused whole. */
	t = (struct ntm_interval_table)NTM_INTERVAL_TABLE_INIT(1);
	assert_int_equal(ntm_interval_insert(&t, 0, 100, user_of(0)), 0);
	assert_int_equal(ntm_interval_cut_split(&t, 10, 20, user_of(1), NULL,
						NULL), -ENOMEM);
	v = ntm_interval_view(&t, &n);
	assert_int_equal(n, 1);
	assert_int_equal(v[0].hi, 100);
	assert_int_equal(ntm_interval_cut_split(&t, 10, 20, NULL, NULL, NULL), 0);
	v = ntm_interval_view(&t, &n);
	assert_int_equal(n, 1);
	assert_int_equal(v[0].hi, 10);
	ntm_interval_destroy(&t);
}

static void test_capacity(void **state)
{
	struct ntm_interval_table t = NTM_INTERVAL_TABLE_INIT(4);
	size_t n;

	(void)state;
	for (unsigned k = 0; k < 4; k++)
		assert_int_equal(ntm_interval_insert(&t, k * CELL, k * CELL + SPAN,
						     user_of(k)), 0);
	assert_int_equal(ntm_interval_insert(&t, 9 * CELL, 9 * CELL + 1,
					     user_of(9)), -ENOMEM);
	assert_non_null(strstr(ntm_errmsg(), "capacity of 4 intervals"));
	/* A split would make a fifth: refused, nothing changed. */
	assert_int_equal(ntm_interval_cut(&t, 10, 20, NULL, NULL), -ENOMEM);
	ntm_interval_view(&t, &n);
	assert_int_equal(n, 4);
	/* A trim does not grow the table. */
	assert_int_equal(ntm_interval_cut(&t, 0, 20, NULL, NULL), 0);
	assert_ptr_equal(ntm_interval_remove(&t, CELL), user_of(1));
	assert_int_equal(ntm_interval_insert(&t, 9 * CELL, 9 * CELL + 1,
					     user_of(9)), 0);
	assert_int_equal(ntm_interval_reserve(&t, NTM_INTERVAL_RESERVE_MAX + 1),
			 -EINVAL);
	assert_int_equal(ntm_interval_reserve(&t, NTM_INTERVAL_RESERVE_MAX), 0);
	ntm_interval_destroy(&t);
}

/* --- threads ------------------------------------------------------------- */

/*
 * Cell 0 is the anchor, never removed; the writer inserts cells 1..CHURN,
 * cuts a hole in each (a split) and removes their pieces, over and over.
 */
#define CHURN 40u
#define ROUNDS 150u
#define SIGNALS 2000u

/*
 * The threaded tests' rounds are divided by this (argument 2 of
 * "threads"): the sanitizer builds run a quarter of them (an eighth under
 * TSan), each of their rounds costs 10x a plain build's or more (about
 * 70 s for all of them under ASan on 2 busy cores), and a fraction still
 * reaches every state many times over: each split round waits until a
 * reader has looked.
 */
static unsigned divisor = 1;

static struct ntm_interval_table shared = NTM_INTERVAL_TABLE_INIT(0);
static int writer_done;
static int readers_stop;
static unsigned handled;
static unsigned bad;	/* answers that were never in the table */
static pthread_t writer_thread;

/* An answer for @a is right: inside its cell's span, its cell's user. */
static bool answer_ok(uintptr_t a, const struct ntm_interval *got)
{
	unsigned k = (unsigned)(a / CELL);

	return got->lo <= a && a < got->hi && got->lo >= k * CELL &&
	       got->hi <= k * CELL + SPAN && got->user == user_of(k);
}

/* One reader's pass; async-signal-safe (no cmocka, no allocation). */
static void read_once(uint64_t *rnd)
{
	uintptr_t a = tu_rand(rnd) % ((CHURN + 1) * CELL);
	struct ntm_interval got;
	struct ntm_interval_read r;

	if (ntm_interval_lookup(&shared, a, &got) && !answer_ok(a, &got))
		__atomic_fetch_add(&bad, 1, __ATOMIC_RELAXED);
	/* The anchor is found whatever the writer is doing. */
	if (!ntm_interval_lookup(&shared, SPAN / 2, &got) ||
	    got.user != user_of(0))
		__atomic_fetch_add(&bad, 1, __ATOMIC_RELAXED);
	ntm_interval_read_begin(&shared, &r);
	for (size_t i = 0; i < r.n; i++)
		if (r.v[i].lo >= r.v[i].hi || (i && r.v[i - 1].hi > r.v[i].lo) ||
		    !answer_ok(r.v[i].lo, &r.v[i]))
			__atomic_fetch_add(&bad, 1, __ATOMIC_RELAXED);
	ntm_interval_read_end(&shared, &r);
}

static void on_usr1(int sig)
{
	uint64_t rnd = 99 + __atomic_load_n(&handled, __ATOMIC_RELAXED);

	(void)sig;
	read_once(&rnd);
	__atomic_fetch_add(&handled, 1, __ATOMIC_RELEASE);
}

static void *reader(void *arg)
{
	uint64_t rnd = (uintptr_t)arg;

	while (!__atomic_load_n(&readers_stop, __ATOMIC_ACQUIRE))
		read_once(&rnd);
	return NULL;
}

static void *writer(void *arg)
{
	int *errors = arg;

	for (unsigned round = 0; round < ROUNDS / divisor; round++) {
		for (unsigned k = 1; k <= CHURN; k++)
			*errors += ntm_interval_insert(&shared, k * CELL,
						       k * CELL + SPAN,
						       user_of(k)) != 0;
		for (unsigned k = 1; k <= CHURN; k++)
			*errors += ntm_interval_cut(&shared, k * CELL + 100,
						    k * CELL + 200, NULL,
						    NULL) != 0;
		for (unsigned k = CHURN; k >= 1; k--) {
			*errors += ntm_interval_remove(&shared, k * CELL) !=
				   user_of(k);
			*errors += ntm_interval_remove(&shared, k * CELL + 300) !=
				   user_of(k);
		}
	}
	__atomic_store_n(&writer_done, 1, __ATOMIC_RELEASE);
	return NULL;
}

static void test_threads(void **state)
{
	struct sigaction sa = { .sa_handler = on_usr1 };
	pthread_t readers[2], target;
	int errors = 0;
	size_t n;

	(void)state;
	sigemptyset(&sa.sa_mask);
	assert_int_equal(sigaction(SIGUSR1, &sa, NULL), 0);
	assert_int_equal(ntm_interval_insert(&shared, 0, SPAN, user_of(0)), 0);
	assert_int_equal(pthread_create(&readers[0], NULL, reader, (void *)1), 0);
	/* The signal's target: a reader whose handler reads too. */
	assert_int_equal(pthread_create(&target, NULL, reader, (void *)2), 0);
	assert_int_equal(pthread_create(&readers[1], NULL, reader, (void *)3), 0);
	assert_int_equal(pthread_create(&writer_thread, NULL, writer, &errors), 0);
	/*
	 * A fixed amount of work, not time: SIGNALS handled reads, some at
	 * the writer while it changes the table, and the writer's rounds.
	 */
	for (unsigned sent = 0;
	     __atomic_load_n(&handled, __ATOMIC_ACQUIRE) < SIGNALS / divisor ||
	     !__atomic_load_n(&writer_done, __ATOMIC_ACQUIRE);
	     sent++) {
		bool at_writer = sent % 4 == 3 &&
				 !__atomic_load_n(&writer_done, __ATOMIC_ACQUIRE);

		pthread_kill(at_writer ? writer_thread : target, SIGUSR1);
		sched_yield();
	}
	assert_int_equal(pthread_join(writer_thread, NULL), 0);
	__atomic_store_n(&readers_stop, 1, __ATOMIC_RELEASE);
	assert_int_equal(pthread_join(readers[0], NULL), 0);
	assert_int_equal(pthread_join(readers[1], NULL), 0);
	assert_int_equal(pthread_join(target, NULL), 0);
	assert_int_equal(errors, 0);
	assert_int_equal(__atomic_load_n(&bad, __ATOMIC_RELAXED), 0);
	assert_true(__atomic_load_n(&handled, __ATOMIC_RELAXED) >=
		    SIGNALS / divisor);
	ntm_interval_view(&shared, &n);
	assert_int_equal(n, 1);
	ntm_interval_destroy(&shared);
}

/*
 * A split whose tail takes a pointer of its own: [SPLIT_LO, SPLIT_HI) of
 * SPLIT_HEAD loses [SPLIT_LO + 100, SPLIT_LO + 150), its tail becomes
 * SPLIT_TAIL's, then both go and it comes back whole, round after round.
 * A reader of an address in the tail may find nothing, the whole interval
 * with SPLIT_HEAD, or the tail with SPLIT_TAIL; the tail with SPLIT_HEAD
 * (a cut published before the tail's pointer) is wrong. Each round waits
 * for a lookup while the table is split, so the readers see every state
 * however busy the machine is.
 */
#define SPLIT_ROUNDS 2000u
#define SPLIT_LO 100u
#define SPLIT_HI 400u
#define SPLIT_HEAD user_of(50)
#define SPLIT_TAIL user_of(51)

static struct ntm_interval_table split_table = NTM_INTERVAL_TABLE_INIT(0);
static int split_stop;
static unsigned split_lookups;
static unsigned split_tails;	/* lookups that found the tail */
static unsigned split_bad;

static void *split_reader(void *arg)
{
	(void)arg;
	while (!__atomic_load_n(&split_stop, __ATOMIC_ACQUIRE)) {
		struct ntm_interval got;

		if (ntm_interval_lookup(&split_table, SPLIT_LO + 200, &got)) {
			bool whole = got.lo == SPLIT_LO && got.hi == SPLIT_HI &&
				     got.user == SPLIT_HEAD;
			bool tail = got.lo == SPLIT_LO + 150 &&
				    got.hi == SPLIT_HI && got.user == SPLIT_TAIL;

			if (tail)
				__atomic_fetch_add(&split_tails, 1,
						   __ATOMIC_RELAXED);
			if (!whole && !tail)
				__atomic_fetch_add(&split_bad, 1,
						   __ATOMIC_RELAXED);
		}
		__atomic_fetch_add(&split_lookups, 1, __ATOMIC_RELEASE);
	}
	return NULL;
}

static void test_split_threads(void **state)
{
	pthread_t readers[2];
	int errors = 0;
	size_t n;

	(void)state;
	assert_int_equal(ntm_interval_insert(&split_table, SPLIT_LO, SPLIT_HI,
					     SPLIT_HEAD), 0);
	for (unsigned i = 0; i < 2; i++)
		assert_int_equal(pthread_create(&readers[i], NULL, split_reader,
						NULL), 0);
	for (unsigned round = 0; round < SPLIT_ROUNDS / divisor; round++) {
		unsigned seen;

		errors += ntm_interval_cut_split(&split_table, SPLIT_LO + 100,
						 SPLIT_LO + 150, SPLIT_TAIL,
						 NULL, NULL) != 0;
		seen = __atomic_load_n(&split_lookups, __ATOMIC_ACQUIRE);
		/* Three more: one reader's second began after the split. */
		while (__atomic_load_n(&split_lookups, __ATOMIC_ACQUIRE) -
			       seen < 3)
			sched_yield();
		errors += ntm_interval_remove(&split_table, SPLIT_LO + 200) !=
			  SPLIT_TAIL;
		errors += ntm_interval_remove(&split_table, SPLIT_LO) !=
			  SPLIT_HEAD;
		errors += ntm_interval_insert(&split_table, SPLIT_LO, SPLIT_HI,
					      SPLIT_HEAD) != 0;
	}
	__atomic_store_n(&split_stop, 1, __ATOMIC_RELEASE);
	for (unsigned i = 0; i < 2; i++)
		assert_int_equal(pthread_join(readers[i], NULL), 0);
	assert_int_equal(errors, 0);
	assert_int_equal(__atomic_load_n(&split_bad, __ATOMIC_RELAXED), 0);
	/* The readers looked while it was split: the test saw something. */
	assert_true(__atomic_load_n(&split_tails, __ATOMIC_RELAXED) > 0);
	ntm_interval_view(&split_table, &n);
	assert_int_equal(n, 1);
	ntm_interval_destroy(&split_table);
}

int main(int argc, char **argv)
{
	const struct CMUnitTest unit[] = {
		cmocka_unit_test(test_insert_lookup),
		cmocka_unit_test(test_overlap),
		cmocka_unit_test(test_remove),
		cmocka_unit_test(test_cut),
		cmocka_unit_test(test_cut_split),
		cmocka_unit_test(test_capacity),
	};
	const struct CMUnitTest threads[] = {
		cmocka_unit_test(test_threads),
		cmocka_unit_test(test_split_threads),
	};

	/*
	 * "threads [DIVISOR]": only the threaded tests (the threads suite,
	 * TSan), DIVISOR dividing their rounds.
	 */
	if (argc > 1 && strcmp(argv[1], "threads") == 0) {
		if (argc > 2 && (divisor = (unsigned)strtoul(argv[2], NULL, 10)) == 0) {
			fprintf(stderr, "test_interval: bad divisor '%s'\n", argv[2]);
			return 2;
		}
		return cmocka_run_group_tests(threads, NULL, NULL);
	}
	return cmocka_run_group_tests(unit, NULL, NULL);
}
