// SPDX-License-Identifier: MIT
/*
 * test_crash_applog.c - crash images over the example log
 * (examples/applog.c, compiled into this test with -DNTM_RECORD=1 and
 * linked with the recorder build).
 *
 * Each workload formats a log and appends a few records from a plan of
 * every length 1..112 in a scattered order plus 64, 100, 250 and 300
 * bytes (records are packed, so most start unaligned; sources sit at every
 * offset 0..7), one at a time or in groups. At every fence and write-back
 * (and, in one test, after every store), ntm_crash_run() hands every media
 * state a power cut may leave to check() - all 2^k states while k is at
 * most 13 units (in `appends`: every state of a record up to ~90 bytes),
 * else a seeded sample plus all-old and all-new - which recovers the log
 * from the image and requires:
 *
 *   - a log once format has returned (before: none, or the old one);
 *   - no damaged record below the commit word;
 *   - a prefix of the appended records, byte for byte, holding at least
 *     every append that returned and at most every one that started;
 *   - a log that takes one more append and recovers with it.
 *
 *   appends        applog_append(), 6 per log
 *   group_commit   applog_add() x 4 + applog_commit(), 8 records per log
 *   every_store    applog_append(), 4 per log, a crash after every store
 *   reformat       format over a log of 8 records: until format returns,
 *                  the old log whole, the new one empty, or none
 *   missing_fence  the same append without the fence between the record
 *                  and the commit word must fail, at a named point: the
 *                  test can see the bug it is there to catch.
 *
 * Each log is short so that recovering it costs little per state.
 * Each run prints its crash points, states and time; the last test prints
 * the total (make check's crash-state figure for this log).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <ntmem.h>
#include <ntmem/crash.h>

#include "applog.h"

#define REGION 2048	/* the log: header, commit word, records */

/*
 * The appends' plan: every length 1..NSMALL in a scattered order (so each
 * starts at a different alignment), then a few larger records whose
 * states are sampled. Record i is plan_len[i] bytes of pattern i.
 */
#define NSMALL 112
static const size_t plan_big[] = { 64, 100, 250, 300 };
#define NPLAN (NSMALL + sizeof(plan_big) / sizeof(plan_big[0]))
#define MAX_LEN 300

static size_t plan_len[NPLAN];
static unsigned char plan_data[NPLAN][MAX_LEN + 8];	/* +8: offsets */

struct run {
	/* What to do: */
	int (*append)(struct applog *, const void *, size_t);
	size_t group;		/* records per commit; 0: r->append() each */
	size_t first, nrecs;	/* plan records [first, first + nrecs) */
	size_t old;		/* an old log of plan records [0, old) first */
	/* What happened, as the check must know it: */
	unsigned char *region;
	struct applog log;	/* the writer's view */
	bool formatted;		/* applog_format() returned */
	size_t started;		/* appends begun */
	size_t returned;	/* appends whose commit returned */
	const char *why;	/* the first refusal, for the message */
};

static uint64_t total_states;
static double total_seconds;

static const unsigned char *rec_src(size_t i)
{
	return plan_data[i] + i % 8;	/* sources at every alignment */
}

static void make_plan(void)
{
	for (size_t i = 0; i < NPLAN; i++)
		plan_len[i] = i < NSMALL ? i * 29 % NSMALL + 1
					 : plan_big[i - NSMALL];
	for (size_t i = 0; i < NPLAN; i++)
		for (size_t j = 0; j < sizeof(plan_data[i]); j++)
			plan_data[i][j] = (unsigned char)(i * 37 + j * 11 + 1);
}

static int refuse(struct run *r, const char *why)
{
	if (!r->why)
		r->why = why;
	return 1;
}

/* The records of @img are plan records [first, first + img->count). */
static bool same_records(const struct applog *img, size_t first)
{
	uint64_t pos = 0;
	uint32_t len;

	for (size_t i = first; i < first + img->count; i++) {
		const void *rec = applog_next(img, &pos, &len);

		if (!rec || len != plan_len[i] || memcmp(rec, rec_src(i), len))
			return false;
	}
	return true;
}

/* Recovery and the invariant on one crash image. */
static int check(void *image, size_t size, void *arg)
{
	static const char marker[] = "appended after recovery";
	struct run *r = arg;
	struct applog img;
	uint64_t count;
	int ret;

	ret = applog_recover(&img, image, size);
	if (!r->formatted) {
		/* A crash before format returned: no log, or the old one
		 * whole, or the new one empty. */
		if (ret == -ENODATA || (ret == 0 && (img.count == 0 ||
		    (img.count == r->old && same_records(&img, 0)))))
			return 0;
		return refuse(r, "format left neither old log, nor new, nor none");
	}
	if (ret)
		return refuse(r, ret == -ENODATA ? "log gone" : "damaged log");
	if (img.count < r->returned)
		return refuse(r, "an append that returned is missing");
	if (img.count > r->started)
		return refuse(r, "more records than appends");
	if (!same_records(&img, r->first))
		return refuse(r, "a record differs from its append");
	/* Recovery leaves a log that works: past the commit is free space. */
	count = img.count;
	if (applog_append(&img, marker, sizeof(marker)) ||
	    applog_recover(&img, image, size) || img.count != count + 1)
		return refuse(r, "no append after recovery");
	return 0;
}

static void workload(void *arg)
{
	struct run *r = arg;
	size_t i = r->first, end = r->first + r->nrecs;

	if (applog_format(&r->log, r->region, REGION))
		return;
	r->formatted = true;
	while (i < end) {
		size_t n = r->group ? r->group : 1, k;

		for (k = 0; k < n && i + k < end; k++) {
			r->started++;
			if (r->group)
				assert_int_equal(applog_add(&r->log,
					rec_src(i + k), plan_len[i + k]), 0);
			else
				assert_int_equal(r->append(&r->log,
					rec_src(i + k), plan_len[i + k]), 0);
		}
		if (r->group)
			applog_commit(&r->log);
		i += k;
		r->returned = i - r->first;
	}
}

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

/* One crash run of @r over a fresh zeroed region. */
static int crash_one(struct run *r, unsigned points, unsigned exhaustive_max,
		     unsigned samples, struct ntm_crash_result *res)
{
	struct ntm_crash_config cfg = {
		.size = REGION,
		.points = points,
		.exhaustive_max = exhaustive_max,
		.samples = samples,
		.seed = 0x6170706c6f67,		/* "applog" */
		.check = check,
		.arg = r,
	};
	int ret;

	r->region = aligned_alloc(64, REGION);
	assert_non_null(r->region);
	memset(r->region, 0, REGION);
	if (r->old) {
		/* Taken as durable: the run starts from a log on media. */
		struct applog prev;

		assert_int_equal(applog_format(&prev, r->region, REGION), 0);
		for (size_t i = 0; i < r->old; i++)
			assert_int_equal(applog_append(&prev, rec_src(i),
						       plan_len[i]), 0);
	}
	cfg.region = r->region;
	ret = ntm_crash_run(&cfg, workload, r, res);
	free(r->region);
	r->region = NULL;
	return ret;
}

/*
 * Crash runs over the plan, @chunk records per log: each run recovers a
 * short log, so a state costs little, and the records still start at
 * every alignment. Prints the sums; returns the failures.
 */
static uint64_t sweep(const char *name, const struct run *how, size_t chunk,
		      unsigned points, unsigned exhaustive_max,
		      unsigned samples)
{
	struct ntm_crash_result sum = { 0 }, res;
	size_t logs = 0;
	double t = now();

	for (size_t first = 0; first < NPLAN; first += chunk, logs++) {
		struct run r = *how;
		int ret;

		r.first = first;
		r.nrecs = NPLAN - first < chunk ? NPLAN - first : chunk;
		ret = crash_one(&r, points, exhaustive_max, samples, &res);
		if (ret) {
			printf("%s: records %zu..%zu: %s\n", name, first,
			       first + r.nrecs - 1, r.why ? r.why : "error");
			ntm_crash_report(&res, stdout);
		}
		assert_int_equal(ret, 0);
		assert_int_equal(r.returned, r.nrecs);
		sum.points += res.points;
		sum.states += res.states;
		sum.failures += res.failures;
		if (res.max_pending > sum.max_pending)
			sum.max_pending = res.max_pending;
	}
	t = now() - t;
	printf("%s: %zu appends in %zu logs, %llu crash points, %llu states, "
	       "%llu failures, at most %llu units pending, %.2f s\n",
	       name, NPLAN, logs, (unsigned long long)sum.points,
	       (unsigned long long)sum.states,
	       (unsigned long long)sum.failures,
	       (unsigned long long)sum.max_pending, t);
	fflush(stdout);
	total_states += sum.states;
	total_seconds += t;
	return sum.failures;
}

static void test_appends(void **state)
{
	const struct run how = { .append = applog_append };

	(void)state;
	assert_int_equal(sweep("appends", &how, 6,
			       NTM_CRASH_AT_FENCE | NTM_CRASH_AT_WRITEBACK,
			       13, 4096), 0);
}

static void test_group_commit(void **state)
{
	const struct run how = { .group = 4 };

	(void)state;
	assert_int_equal(sweep("group_commit", &how, 8,
			       NTM_CRASH_AT_FENCE | NTM_CRASH_AT_WRITEBACK,
			       12, 512), 0);
}

static void test_every_store(void **state)
{
	const struct run how = { .append = applog_append };

	(void)state;
	assert_int_equal(sweep("every_store", &how, 4,
			       NTM_CRASH_AT_FENCE | NTM_CRASH_AT_WRITEBACK |
			       NTM_CRASH_AT_STORE, 10, 128), 0);
}

/* Format over a log of 8 records, then append: one run per plan chunk. */
static void test_reformat(void **state)
{
	const struct run how = { .append = applog_append, .old = 8 };

	(void)state;
	assert_int_equal(sweep("reformat", &how, 6,
			       NTM_CRASH_AT_FENCE | NTM_CRASH_AT_WRITEBACK,
			       12, 256), 0);
}

/*
 * applog_append() without the ntm_drain() that orders the record before
 * the commit word (applog_commit() otherwise, step for step).
 */
static int append_without_fence(struct applog *log, const void *rec,
				size_t len)
{
	int ret = applog_add(log, rec, len);

	if (ret)
		return ret;
	/* missing: ntm_drain(); */
	ntm_memcpy_flush(log->base + APPLOG_COMMIT, &log->tail,
			 sizeof(log->tail));
	ntm_drain();
	log->end = log->tail;
	log->count += log->pending;
	log->pending = 0;
	return 0;
}

static void test_missing_fence(void **state)
{
	struct run r = { .append = append_without_fence, .nrecs = 4 };
	struct ntm_crash_result res;
	double t = now();

	(void)state;
	assert_int_equal(crash_one(&r, NTM_CRASH_AT_FENCE |
				   NTM_CRASH_AT_WRITEBACK, 12, 256, &res), 1);
	t = now() - t;
	printf("missing_fence: %zu appends, %llu crash points, %llu states, "
	       "%llu failures (expected), first refusal: %s\n", r.nrecs,
	       (unsigned long long)res.points, (unsigned long long)res.states,
	       (unsigned long long)res.failures, r.why);
	ntm_crash_report(&res, stdout);
	assert_true(res.failures > 0);
	assert_true(res.first_point >= 1 && res.first_point <= res.points);
	assert_true(res.first_where[0] != '\0');
	assert_true(res.first_units > 0);
	total_states += res.states;
	total_seconds += t;
	printf("crash_applog: %llu crash states in %.2f s (%.2f M states/s)\n",
	       (unsigned long long)total_states, total_seconds,
	       total_states / total_seconds / 1e6);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_appends),
		cmocka_unit_test(test_group_commit),
		cmocka_unit_test(test_every_store),
		cmocka_unit_test(test_reformat),
		cmocka_unit_test(test_missing_fence),
	};

	make_plan();
	return cmocka_run_group_tests_name("crash_applog", tests, NULL, NULL);
}
