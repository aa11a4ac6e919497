// SPDX-License-Identifier: MIT
/*
 * test_rec_sink.c - the recorder build's sink list (src/record/rec_sink.h) and
 * the durability rules its sinks judge by (src/record/durability_rules.h).
 *
 *   order      sinks run in position order, each passes on to the next
 *              present one, a sink that does not pass keeps the event
 *              from the later ones, an annotation reaches them
 *   register   -EINVAL, -EBUSY; unregistering another sink changes nothing
 *   mappings   ntm_rec_mapping(), the door of a mapping's events: the first
 *              sink gets each kind with its detail and a caller, the
 *              recorder's model lets them by (the sink after it never
 *              sees one) and leaves a tracked range as it was, while a
 *              store through ntm_rec_event() still reaches both
 *   rules      the predicates' table (thread and domain)
 *   threads    (argument "threads", suite threads, so under TSan too)
 *              threads dispatching without pause while the main thread
 *              registers and unregisters a sink: once unregister returns
 *              the sink is never running, so its argument can be freed
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include <ntmem/check.h>
#include <ntmem/hook.h>

#include "durability_rules.h"
#include "rec_sink.h"

/* What the sinks of one test saw, in order. */
static int seen[16];
static unsigned nseen;

struct logger {
	int id;
	bool pass;
};

static void log_event(struct ntm_rec_ev *ev, enum ntm_rec_sink_pos pos,
		      void *arg)
{
	struct logger *l = arg;

	seen[nseen++] = l->id * 100 + (int)ev->step;
	ev->step++;
	if (l->pass)
		ntm_rec_sink_pass(ev, pos);
}

static void test_order(void **state)
{
	struct logger a = { 1, true }, b = { 2, true }, c = { 3, true };
	const struct ntm_rec_sink sa = { log_event, &a }, sb = { log_event, &b },
				  sc = { log_event, &c };
	struct ntm_rec_ev ev = { .kind = NTM_REC_FENCE };

	(void)state;
	/* Registered out of order: the positions are the order. */
	assert_int_equal(ntm_rec_sink_register(NTM_REC_SINK_CRASH, &sc), 0);
	assert_int_equal(ntm_rec_sink_register(NTM_REC_SINK_WATCH, &sa), 0);
	assert_int_equal(ntm_rec_sink_register(NTM_REC_SINK_MODEL, &sb), 0);
	nseen = 0;
	ntm_rec_sink_dispatch(&ev);
	assert_int_equal(nseen, 3);
	assert_int_equal(seen[0], 100);
	assert_int_equal(seen[1], 201);	/* the first one's annotation */
	assert_int_equal(seen[2], 302);

	/* The middle one keeps the event: the last never sees it. */
	b.pass = false;
	ev.step = 0;
	nseen = 0;
	ntm_rec_sink_dispatch(&ev);
	assert_int_equal(nseen, 2);

	/* An empty position is skipped. */
	b.pass = true;
	ntm_rec_sink_unregister(NTM_REC_SINK_MODEL, &sb);
	ev.step = 0;
	nseen = 0;
	ntm_rec_sink_dispatch(&ev);
	assert_int_equal(nseen, 2);
	assert_int_equal(seen[0], 100);
	assert_int_equal(seen[1], 301);

	ntm_rec_sink_unregister(NTM_REC_SINK_WATCH, &sa);
	ntm_rec_sink_unregister(NTM_REC_SINK_CRASH, &sc);
	nseen = 0;
	ntm_rec_sink_dispatch(&ev);
	assert_int_equal(nseen, 0);
}

static void test_register(void **state)
{
	struct logger a = { 1, true };
	const struct ntm_rec_sink sa = { log_event, &a }, sb = { log_event, &a },
				  none = { NULL, NULL };
	struct ntm_rec_ev ev = { .kind = NTM_REC_FENCE };

	(void)state;
	assert_int_equal(ntm_rec_sink_register(NTM_REC_SINKS, &sa), -EINVAL);
	assert_int_equal(ntm_rec_sink_register(NTM_REC_SINK_WATCH, NULL), -EINVAL);
	assert_int_equal(ntm_rec_sink_register(NTM_REC_SINK_WATCH, &none), -EINVAL);
	assert_int_equal(ntm_rec_sink_register(NTM_REC_SINK_WATCH, &sa), 0);
	assert_int_equal(ntm_rec_sink_register(NTM_REC_SINK_WATCH, &sb), -EBUSY);
	assert_int_equal(ntm_rec_sink_register(NTM_REC_SINK_WATCH, &sa), -EBUSY);
	/* Not the sink there: it stays. */
	ntm_rec_sink_unregister(NTM_REC_SINK_WATCH, &sb);
	ntm_rec_sink_unregister(NTM_REC_SINK_MODEL, &sa);
	nseen = 0;
	ntm_rec_sink_dispatch(&ev);
	assert_int_equal(nseen, 1);
	ntm_rec_sink_unregister(NTM_REC_SINK_WATCH, &sa);
	nseen = 0;
	ntm_rec_sink_dispatch(&ev);
	assert_int_equal(nseen, 0);
}

/* What the sink before the model saw last, and how many events the one
 * after it saw. */
static struct ntm_rec_ev first_saw;
static unsigned after_model;

static void first_sink(struct ntm_rec_ev *ev, enum ntm_rec_sink_pos pos,
		       void *arg)
{
	(void)arg;
	first_saw = *ev;
	ntm_rec_sink_pass(ev, pos);
}

static void last_sink(struct ntm_rec_ev *ev, enum ntm_rec_sink_pos pos,
		      void *arg)
{
	(void)ev, (void)pos, (void)arg;
	after_model++;
}

static void test_mappings(void **state)
{
	static char buf[256] __attribute__((aligned(64)));
	const struct ntm_rec_sink first = { first_sink, NULL },
				  last = { last_sink, NULL };
	struct ntm_rec_map m = { .path = "/x", .off = 4096,
				 .rule = NTM_REC_RULE_SYNC };
	enum ntm_rec_rule cpu = NTM_REC_RULE_CPU;
	const struct {
		enum ntm_rec_kind kind;
		const void *detail;
	} each[] = {
		{ NTM_REC_MAP, &m }, { NTM_REC_RULE, &cpu },
		{ NTM_REC_UNMAP, "pmem_unmap" }, { NTM_REC_SYNC, NULL },
		{ NTM_REC_TOUCH, NULL },
	};
	struct ntm_check_counts c;

	(void)state;
	assert_int_equal(ntm_check_track(buf, sizeof(buf)), 0);
	ntm_check_start();	/* the model is the sink at its position */
	assert_int_equal(ntm_rec_sink_register(NTM_REC_SINK_WATCH, &first), 0);
	assert_int_equal(ntm_rec_sink_register(NTM_REC_SINK_CRASH, &last), 0);
	for (size_t i = 0; i < sizeof(each) / sizeof(each[0]); i++) {
		memset(&first_saw, 0, sizeof(first_saw));
		after_model = 0;
		ntm_rec_mapping(each[i].kind, buf, 128, each[i].detail);
		assert_int_equal(first_saw.kind, each[i].kind);
		assert_ptr_equal(first_saw.p, buf);
		assert_int_equal(first_saw.n, 128);
		assert_ptr_equal(first_saw.detail, each[i].detail);
		assert_non_null(first_saw.where);
		assert_int_equal(after_model, 0);
	}
	assert_int_equal(ntm_check_query(buf, sizeof(buf), &c), 0);
	assert_int_equal(c.units[NTM_CHECK_DIRTY], 0);
	assert_int_equal(c.writebacks, 0);
	assert_int_equal(c.first_bad, 0);
	assert_true(ntm_check_durable(buf, sizeof(buf)));

	/* A store of the tracked range passes the model on, and is dirty. */
	ntm_rec_event(NTM_REC_STORE, buf, 8, NULL);
	assert_int_equal(first_saw.kind, NTM_REC_STORE);
	assert_null(first_saw.detail);
	assert_int_equal(after_model, 1);
	assert_false(ntm_check_durable(buf, sizeof(buf)));

	ntm_rec_sink_unregister(NTM_REC_SINK_WATCH, &first);
	ntm_rec_sink_unregister(NTM_REC_SINK_CRASH, &last);
	ntm_check_stop();
	ntm_check_untrack(buf);
}

static void test_rules(void **state)
{
	(void)state;
	assert_true(ntm_rule_wb_settles(3, 3));
	assert_false(ntm_rule_wb_settles(3, 4));
	assert_true(ntm_rule_cache_persists(NTM_PERSIST_CPU_CACHE));
	assert_false(ntm_rule_cache_persists(NTM_PERSIST_MEMORY_CONTROLLER));
	assert_false(ntm_rule_cache_persists(NTM_PERSIST_NONE));
	assert_true(ntm_rule_store_settles(NTM_PERSIST_CPU_CACHE, 5, 5));
	assert_false(ntm_rule_store_settles(NTM_PERSIST_CPU_CACHE, 5, 6));
	assert_false(ntm_rule_store_settles(NTM_PERSIST_MEMORY_CONTROLLER, 5, 5));
	assert_false(ntm_rule_store_settles(NTM_PERSIST_NONE, 5, 5));
	/* One number per thread, stable, never 0. */
	assert_int_not_equal(ntm_thread_number(), 0);
	assert_int_equal(ntm_thread_number(), ntm_thread_number());
}

static void *other_number(void *arg)
{
	*(uint32_t *)arg = ntm_thread_number();
	return NULL;
}

static void test_thread_numbers(void **state)
{
	uint32_t theirs = 0;
	pthread_t t;

	(void)state;
	assert_int_equal(pthread_create(&t, NULL, other_number, &theirs), 0);
	assert_int_equal(pthread_join(t, NULL), 0);
	assert_int_not_equal(theirs, 0);
	assert_int_not_equal(theirs, ntm_thread_number());
}

/* --- threads ------------------------------------------------------------- */

#define DISPATCHERS 3
#define ROUNDS 500

struct victim {
	int alive;		/* 1 until freed: a call after that is the bug */
	unsigned long calls;
};

static int stop;
static unsigned long dead_calls;

static void victim_event(struct ntm_rec_ev *ev, enum ntm_rec_sink_pos pos,
			 void *arg)
{
	struct victim *v = arg;

	if (!__atomic_load_n(&v->alive, __ATOMIC_SEQ_CST))
		__atomic_fetch_add(&dead_calls, 1, __ATOMIC_RELAXED);
	__atomic_fetch_add(&v->calls, 1, __ATOMIC_RELAXED);
	ntm_rec_sink_pass(ev, pos);
}

static void *dispatcher(void *arg)
{
	(void)arg;
	while (!__atomic_load_n(&stop, __ATOMIC_RELAXED)) {
		struct ntm_rec_ev ev = { .kind = NTM_REC_FENCE };

		ntm_rec_sink_dispatch(&ev);
	}
	return NULL;
}

static void test_unregister_waits(void **state)
{
	pthread_t t[DISPATCHERS];
	unsigned long calls = 0;

	(void)state;
	for (int i = 0; i < DISPATCHERS; i++)
		assert_int_equal(pthread_create(&t[i], NULL, dispatcher, NULL), 0);
	for (int round = 0; round < ROUNDS; round++) {
		struct victim *v = calloc(1, sizeof(*v));
		struct ntm_rec_sink *s = malloc(sizeof(*s));

		assert_non_null(v);
		assert_non_null(s);
		v->alive = 1;
		*s = (struct ntm_rec_sink){ victim_event, v };
		assert_int_equal(ntm_rec_sink_register(round % NTM_REC_SINKS, s), 0);
		/*
		 * Until a dispatcher has called it: unregister then races
		 * dispatches in flight, however the threads are scheduled
		 * (a yield alone let all rounds pass before the dispatchers
		 * ran, on a busy machine).
		 */
		while (!__atomic_load_n(&v->calls, __ATOMIC_RELAXED))
			sched_yield();
		ntm_rec_sink_unregister(round % NTM_REC_SINKS, s);
		/* Not running, never called again: freeing both is safe
		 * (ASan and TSan would see a late call too). */
		__atomic_store_n(&v->alive, 0, __ATOMIC_SEQ_CST);
		calls += __atomic_load_n(&v->calls, __ATOMIC_RELAXED);
		free(s);
		free(v);
	}
	__atomic_store_n(&stop, 1, __ATOMIC_RELAXED);
	for (int i = 0; i < DISPATCHERS; i++)
		assert_int_equal(pthread_join(t[i], NULL), 0);
	assert_int_equal(__atomic_load_n(&dead_calls, __ATOMIC_RELAXED), 0);
	/* Each sink was called at least once (not a test of nothing). */
	assert_true(calls >= ROUNDS);
}

int main(int argc, char **argv)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_order),
		cmocka_unit_test(test_register),
		cmocka_unit_test(test_mappings),
		cmocka_unit_test(test_rules),
		cmocka_unit_test(test_thread_numbers),
	};
	const struct CMUnitTest threads[] = {
		cmocka_unit_test(test_unregister_waits),
	};

	if (argc > 1 && !strcmp(argv[1], "threads"))
		return cmocka_run_group_tests(threads, NULL, NULL);
	return cmocka_run_group_tests(tests, NULL, NULL);
}
