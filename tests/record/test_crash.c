// SPDX-License-Identifier: MIT
/*
 * test_crash.c - crash images (ntmem/crash.h) on tiny workloads whose
 * states can be counted by hand, then one real durability claim.
 *
 * Built with -DNTM_RECORD=1 against the recorder build, so the inline
 * primitives used here (ntm_memcpy_nt_8(), ntm_drain()) report their
 * stores and fences. Plain C stores are reported with ntm_check_store().
 *
 *   nt3_*          three NT-stored units, then a fence: exactly the 2^3
 *                  mixes of old and new at the fence, each once, then the
 *                  one all-new state after the workload.
 *   one_mix_*      a check that refuses one mix (or one family of mixes):
 *                  failures equal the number of such states, and the
 *                  first failure names the point, the event, the code
 *                  and the new units.
 *   flush_*        ntm_memcpy_flush() then ntm_drain(); plain stores
 *                  written back with ntm_flush(): points at write-backs.
 *   store_every_*  AT_STORE points after every N-th store.
 *   sampled_*      more pending units than exhaustive_max: samples plus
 *                  all-old and all-new, the same states for the same seed.
 *   exhaustive_1m  2^20 states at one point: the engine's rate.
 *   stop_*         stop_at_first: one failure, the workload runs on.
 *   check_calls_*  check() may use ntmem: nothing it does is recorded.
 *   unaligned_*    a region that does not start on a unit.
 *   commit_*       a commit record done right never fails; without the
 *                  drain between data and commit word it does.
 *   args_*         each bad argument refused and named (-EINVAL, -EFAULT
 *                  for a region that cannot be read), -EBUSY, nothing
 *                  written on a refusal; a read-only region runs.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <limits.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <sys/mman.h>
#include <unistd.h>

#include <cmocka.h>

#include "ntmem.h"
#include "ntmem/check.h"
#include "ntmem/crash.h"
#include "../lib/testutil.h"

/* The regions: 64-byte aligned, so unit and line numbers are obvious. */
static uint64_t region[64] __attribute__((aligned(64)));

/* A non-temporal store of one unit, as the library makes it. */
static void nt8(void *d, uint64_t v)
{
#if NTM_ARCH_HAS_NT_STORES
	ntm_memcpy_nt_8(d, &v);
#else
	/* No NT store on this architecture: report the model's event. */
	memcpy(d, &v, sizeof(v));
	ntm_rec_event(NTM_REC_NT, d, sizeof(v), NULL);
#endif
}

/* An ordinary store the recorder cannot see by itself. */
static void store8(uint64_t *d, uint64_t v)
{
	*(volatile uint64_t *)d = v;
	ntm_check_store(d, sizeof(*d));
}

static struct ntm_crash_config config(size_t size,
				      int (*check)(void *, size_t, void *),
				      void *arg)
{
	struct ntm_crash_config cfg;

	memset(region, 0, sizeof(region));
	memset(&cfg, 0, sizeof(cfg));
	cfg.region = region;
	cfg.size = size;
	cfg.check = check;
	cfg.arg = arg;
	return cfg;
}

/* Run, then check the return value and the points and states counted. */
static void run(const struct ntm_crash_config *cfg, void (*workload)(void *),
		void *warg, struct ntm_crash_result *res, int ret,
		uint64_t points, uint64_t states)
{
	assert_int_equal(ntm_crash_run(cfg, workload, warg, res), ret);
	assert_int_equal(res->points, points);
	assert_int_equal(res->states, states);
}

/* --- three NT units, one fence -------------------------------------------- */

/* Which of units 0..2 are new in an image (value unit + 1), as bits. */
static unsigned mix3(const void *image)
{
	const uint64_t *u = image;
	unsigned m = 0;

	for (unsigned i = 0; i < 3; i++) {
		if (u[i] == i + 1)
			m |= 1u << i;
		else
			assert_int_equal(u[i], 0);	/* old: nothing else */
	}
	return m;
}

/*
 * Noinline and exported: the recorder blames an event on the caller of
 * the function that executed it, so the reports name this function's
 * caller, whose name dladdr() finds (the test links -rdynamic).
 */
__attribute__((noinline)) void crash_test_nt3(void)
{
	for (unsigned i = 0; i < 3; i++)
		nt8(&region[i], i + 1);
	ntm_drain();
}

/* Bumped after the blamed calls, so none of them is a tail call (which
 * would blame the workload's own caller). */
static volatile unsigned calls;

__attribute__((noinline)) void crash_test_nt3_workload(void *arg)
{
	(void)arg;
	crash_test_nt3();
	calls++;
}

struct seen {
	unsigned count[8];	/* images per mix */
	unsigned images;
	unsigned refuse;	/* bit mask of mixes check() refuses */
	unsigned refuse_if;	/* or: refuse every mix with these bits... */
	unsigned refuse_care;	/* ...under this mask (0: unused) */
};

static int check_nt3(void *image, size_t size, void *arg)
{
	struct seen *s = arg;
	unsigned m;

	assert_int_equal(size, 64);
	/* The rest of the region: old (0) or new (unit + 1), too. */
	for (unsigned i = 3; i < 8; i++)
		assert_true(((uint64_t *)image)[i] == 0 ||
			    ((uint64_t *)image)[i] == i + 1);
	m = mix3(image);
	s->count[m]++;
	s->images++;
	if (s->refuse & (1u << m))
		return 1;
	if (s->refuse_care && (m & s->refuse_care) == s->refuse_if)
		return 1;
	return 0;
}

static void nt3_every_mix_once(void **state)
{
	struct seen s = { 0 };
	struct ntm_crash_config cfg = config(64, check_nt3, &s);
	struct ntm_crash_result res;

	(void)state;
	/* The fence, then the end of the workload. */
	run(&cfg, crash_test_nt3_workload, NULL, &res, 0, 2, 8 + 1);
	assert_int_equal(res.failures, 0);
	assert_int_equal(res.max_pending, 3);
	/* Each mix once at the fence; all-new once more at the end. */
	for (unsigned m = 0; m < 7; m++)
		assert_int_equal(s.count[m], 1);
	assert_int_equal(s.count[7], 2);
	assert_int_equal(s.images, 9);
	/* The run leaves nothing tracked: tracking the region again works. */
	assert_int_equal(ntm_check_track(region, 64), 0);
	ntm_check_untrack(region);
}

static void one_mix_fails_once(void **state)
{
	/* Units 0 and 2 new, unit 1 old: a hole in the middle. */
	struct seen s = { .refuse = 1u << 5 };
	struct ntm_crash_config cfg = config(64, check_nt3, &s);
	struct ntm_crash_result res;

	(void)state;
	assert_int_equal(ntm_crash_run(&cfg, crash_test_nt3_workload, NULL,
				       &res), 1);
	assert_int_equal(res.states, 9);
	assert_int_equal(res.failures, 1);
	assert_int_equal(res.first_point, 1);
	assert_int_equal(res.first_kind, NTM_REC_FENCE);
	assert_true(res.first_step > 3);	/* after the three stores */
	assert_int_equal(res.first_pending, 3);
	assert_int_equal(res.first_units, 2);
	assert_int_equal(res.first_unit_offsets[0], 0);
	assert_int_equal(res.first_unit_offsets[1], 16);
	assert_true(strncmp(res.first_where, "crash_test_nt3_workload+0x",
			    strlen("crash_test_nt3_workload+0x")) == 0);
}

static void one_mix_family(void **state)
{
	/* Unit 0 new and unit 1 old, unit 2 either: 2 states at the fence,
	 * none at the end (all new). */
	struct seen s = { .refuse_if = 1, .refuse_care = 3 };
	struct ntm_crash_config cfg = config(64, check_nt3, &s);
	struct ntm_crash_result res;

	(void)state;
	assert_int_equal(ntm_crash_run(&cfg, crash_test_nt3_workload, NULL,
				       &res), 1);
	assert_int_equal(res.failures, 2);
	assert_int_equal(res.first_point, 1);
	assert_int_equal(res.first_unit_offsets[0], 0);

	/* Unit 0 new, whatever the others: 4 at the fence, 1 at the end. */
	memset(region, 0, sizeof(region));
	memset(&s, 0, sizeof(s));
	s.refuse_if = 1;
	s.refuse_care = 1;
	assert_int_equal(ntm_crash_run(&cfg, crash_test_nt3_workload, NULL,
				       &res), 1);
	assert_int_equal(res.failures, 5);
	assert_int_equal(res.states, 9);
}

/* --- ntm_memcpy_flush() + ntm_drain(); ntm_flush() of plain stores -------- */

static uint64_t payload[16];

__attribute__((noinline)) void crash_test_flush_drain(void *arg)
{
	size_t n = *(size_t *)arg;

	/* A constant 64 takes the inline path; any other n out of line. */
	if (n == 64)
		ntm_memcpy_flush(&region[8], payload, 64);
	else
		ntm_memcpy_flush(&region[8], payload, n);
	ntm_drain();
}

/* Every unit of the image is old (0) or new (payload), nothing else. */
static int check_old_or_new(void *image, size_t size, void *arg)
{
	const uint64_t *u = image;
	unsigned *images = arg;

	(*images)++;
	for (size_t i = 0; i < size / 8; i++) {
		uint64_t want = i >= 8 && i < 24 ? payload[i - 8] : 0;

		if (u[i] != 0 && u[i] != want)
			return 1;
	}
	return 0;
}

static void flush_drain(void **state)
{
	unsigned images = 0;
	struct ntm_crash_config cfg = config(256, check_old_or_new, &images);
	struct ntm_crash_result res;
	size_t n;

	(void)state;
	for (unsigned i = 0; i < 16; i++)
		payload[i] = 0x1111111111111111ull * (i + 1);

	/* 8 units, NT-stored or written back: pending at the fence. */
	n = 64;
	run(&cfg, crash_test_flush_drain, &n, &res, 0, 2, 256 + 1);
	assert_int_equal(res.max_pending, 8);
	assert_int_equal(images, 257);

	/* 13 units out of line: 2^13 when exhaustive_max allows it. */
	memset(region, 0, sizeof(region));
	n = 104;
	images = 0;
	cfg.exhaustive_max = 13;
	assert_int_equal(ntm_crash_run(&cfg, crash_test_flush_drain, &n,
				       &res), 0);
	assert_int_equal(res.states, 8192 + 1);
	assert_int_equal(res.max_pending, 13);
}

__attribute__((noinline)) void crash_test_plain_flush(void *arg)
{
	(void)arg;
	store8(&region[0], 1);
	store8(&region[1], 2);
	store8(&region[8], 3);		/* the next line */
	ntm_flush(region, 128);
	ntm_drain();
}

/* Counts its images in a uint64_t. */
static int check_any(void *image, size_t size, void *arg)
{
	(void)image;
	(void)size;
	(*(uint64_t *)arg)++;
	return 0;
}

static void flush_writeback_points(void **state)
{
	uint64_t images = 0;
	struct ntm_crash_config cfg = config(128, check_any, &images);
	struct ntm_crash_result res;

	(void)state;
	/* Only the fence: three units written back, not yet fenced. */
	run(&cfg, crash_test_plain_flush, NULL, &res, 0, 2, 8 + 1);

	/* After each of the two write-backs too: 3 units pending each time
	 * (WB or still DIRTY), 3 at the fence, none at the end. */
	cfg = config(128, check_any, &images);
	cfg.points = NTM_CRASH_AT_WRITEBACK | NTM_CRASH_AT_FENCE;
	run(&cfg, crash_test_plain_flush, NULL, &res, 0, 4, 8 + 8 + 8 + 1);
	assert_int_equal(res.max_pending, 3);
}

/* --- AT_STORE ------------------------------------------------------------- */

__attribute__((noinline)) void crash_test_six_stores(void *arg)
{
	(void)arg;
	for (unsigned i = 0; i < 6; i++)
		store8(&region[i], i + 1);
}

static void store_every(void **state)
{
	uint64_t images = 0;
	struct ntm_crash_config cfg = config(64, check_any, &images);
	struct ntm_crash_result res;

	(void)state;
	/* After stores 2, 4 and 6 (2, 4, 6 dirty units), then the end
	 * with the 6 still dirty: nothing was ever written back. */
	cfg.points = NTM_CRASH_AT_STORE;
	cfg.store_every = 2;
	run(&cfg, crash_test_six_stores, NULL, &res, 0, 4, 4 + 16 + 64 + 64);
	assert_int_equal(res.max_pending, 6);

	/* store_every 0 means every store. */
	cfg = config(64, check_any, &images);
	cfg.points = NTM_CRASH_AT_STORE;
	run(&cfg, crash_test_six_stores, NULL, &res, 0, 7,
	    2 + 4 + 8 + 16 + 32 + 64 + 64);

	/* No fence in the workload: AT_FENCE alone has only the end. */
	cfg = config(64, check_any, &images);
	run(&cfg, crash_test_six_stores, NULL, &res, 0, 1, 64);
}

/* --- sampling ------------------------------------------------------------- */

static unsigned wide_units;

__attribute__((noinline)) void crash_test_nt_wide(void *arg)
{
	(void)arg;
	for (unsigned i = 0; i < wide_units; i++)
		nt8(&region[i], i + 1);
	ntm_drain();
}

struct digest {
	uint64_t hash;		/* FNV-1a over every image's mix */
	uint64_t images;
	uint64_t all_old, all_new;
};

static int check_digest(void *image, size_t size, void *arg)
{
	const uint64_t *u = image;
	struct digest *d = arg;
	uint64_t mix = 0;

	(void)size;
	for (unsigned i = 0; i < wide_units; i++) {
		if (u[i] == i + 1)
			mix |= 1ull << i;
		else if (u[i] != 0)
			return 2;
	}
	d->hash = (d->hash ^ mix) * 0x100000001b3ull;
	d->images++;
	d->all_old += mix == 0;
	d->all_new += mix == (1ull << wide_units) - 1;
	/* Refuse unit 5 new with unit 7 old: about a quarter of samples. */
	return (mix >> 5 & 1) && !(mix >> 7 & 1);
}

static void sampled_run(uint64_t seed, struct digest *d,
			struct ntm_crash_result *res)
{
	struct ntm_crash_config cfg = config(256, check_digest, d);

	memset(d, 0, sizeof(*d));
	d->hash = 0xcbf29ce484222325ull;
	cfg.samples = 100;
	cfg.seed = seed;
	assert_int_equal(ntm_crash_run(&cfg, crash_test_nt_wide, NULL, res),
			 1);
}

static void sampled_reproducible(void **state)
{
	struct ntm_crash_result r1, r2, r3;
	struct digest d1, d2, d3;

	(void)state;
	wide_units = 20;
	sampled_run(42, &d1, &r1);
	/* 20 > 12 pending: all-old, all-new and 100 samples; then the end. */
	assert_int_equal(r1.points, 2);
	assert_int_equal(r1.states, 2 + 100 + 1);
	assert_int_equal(r1.max_pending, 20);
	assert_int_equal(d1.images, 103);
	assert_int_equal(d1.all_old, 1);
	assert_true(d1.all_new >= 2);
	assert_true(r1.failures > 0 && r1.failures < 100);

	sampled_run(42, &d2, &r2);
	assert_int_equal(r2.states, r1.states);
	assert_int_equal(r2.failures, r1.failures);
	assert_int_equal(r2.first_units, r1.first_units);
	assert_memory_equal(r2.first_unit_offsets, r1.first_unit_offsets,
			    sizeof(r1.first_unit_offsets));
	assert_int_equal(d2.hash, d1.hash);

	/* Another seed, other subsets. */
	sampled_run(43, &d3, &r3);
	assert_int_equal(r3.states, r1.states);
	assert_true(d3.hash != d1.hash);

	/* Seed 0 is a fixed seed, not "random". */
	sampled_run(0, &d1, &r1);
	sampled_run(0, &d2, &r2);
	assert_int_equal(d1.hash, d2.hash);
}

/* --- a million states at one point ---------------------------------------- */

static void exhaustive_1m(void **state)
{
	uint64_t images = 0;
	struct ntm_crash_config cfg = config(256, check_any, &images);
	struct ntm_crash_result res;
	struct digest d;
	struct timespec t0, t1;
	double s;

	(void)state;
	wide_units = 20;
	cfg.exhaustive_max = 20;
	clock_gettime(CLOCK_MONOTONIC, &t0);
	assert_int_equal(ntm_crash_run(&cfg, crash_test_nt_wide, NULL, &res),
			 0);
	clock_gettime(CLOCK_MONOTONIC, &t1);
	assert_int_equal(res.states, (1u << 20) + 1);
	assert_int_equal(images, res.states);
	s = (double)(t1.tv_sec - t0.tv_sec) + (t1.tv_nsec - t0.tv_nsec) / 1e9;
	print_message("crash images: %llu states of a 256-byte region in "
		      "%.3f s: %.1f M states/s\n",
		      (unsigned long long)res.states, s, res.states / s / 1e6);

	/* Gray order visits each of the 2^20 mixes exactly once: every
	 * mix's predicate counted once (a quarter refused). */
	memset(region, 0, sizeof(region));
	memset(&d, 0, sizeof(d));
	cfg.check = check_digest;
	cfg.arg = &d;
	assert_int_equal(ntm_crash_run(&cfg, crash_test_nt_wide, NULL, &res),
			 1);
	assert_int_equal(res.failures, 1u << 18);
	assert_int_equal(d.all_old, 1);
	assert_int_equal(d.all_new, 2);
}

/* --- stop_at_first -------------------------------------------------------- */

static int workload_finished;

__attribute__((noinline)) void crash_test_two_rounds(void *arg)
{
	(void)arg;
	crash_test_nt3();
	for (unsigned i = 3; i < 6; i++)
		nt8(&region[i], i + 1);
	ntm_drain();
	workload_finished = 1;
}

static void stop_at_first(void **state)
{
	struct seen s = { .refuse_if = 1, .refuse_care = 3 };
	struct ntm_crash_config cfg = config(64, check_nt3, &s);
	struct ntm_crash_result res;

	(void)state;
	workload_finished = 0;
	assert_int_equal(ntm_crash_run(&cfg, crash_test_two_rounds, NULL,
				       &res), 1);
	assert_int_equal(res.points, 3);
	assert_int_equal(res.failures, 2);
	assert_true(workload_finished);

	memset(region, 0, sizeof(region));
	memset(&s, 0, sizeof(s));
	s.refuse_if = 1;
	s.refuse_care = 3;
	cfg.stop_at_first = 1;
	workload_finished = 0;
	assert_int_equal(ntm_crash_run(&cfg, crash_test_two_rounds, NULL,
				       &res), 1);
	assert_int_equal(res.points, 1);
	assert_int_equal(res.failures, 1);
	/* All-old first, then unit 0 alone (Gray order): the second state. */
	assert_int_equal(res.states, 2);
	assert_int_equal(res.first_point, 1);
	assert_true(workload_finished);
	/* The live region is the workload's: the engine never wrote it. */
	for (unsigned i = 0; i < 6; i++)
		assert_int_equal(region[i], i + 1);
}

/* --- check() calls ntmem -------------------------------------------------- */

static uint64_t side[8] __attribute__((aligned(64)));

/* Recovery that writes durably into a tracked buffer of its own. */
static int check_uses_ntmem(void *image, size_t size, void *arg)
{
	(void)size;
	ntm_memcpy_flush(side, image, 64);
	ntm_drain();
	ntm_persist(image, 64);
	nt8(image, 0xdead);
	(*(unsigned *)arg)++;
	return 0;
}

static void check_calls_ntmem(void **state)
{
	unsigned images = 0;
	struct ntm_crash_config cfg = config(64, check_uses_ntmem, &images);
	struct ntm_crash_result res;
	struct ntm_check_counts c;

	(void)state;
	memset(side, 0, sizeof(side));
	assert_int_equal(ntm_check_track(side, sizeof(side)), 0);
	/* No point of check()'s own fences, no state of its own stores. */
	run(&cfg, crash_test_nt3_workload, NULL, &res, 0, 2, 9);
	assert_int_equal(images, 9);
	assert_int_equal(ntm_check_query(side, sizeof(side), &c), 0);
	assert_int_equal(c.units[NTM_CHECK_CLEAN], 8);
	assert_int_equal(c.writebacks, 0);
	ntm_check_untrack(side);
	/* check() wrote its image, never the region. */
	for (unsigned i = 0; i < 3; i++)
		assert_int_equal(region[i], i + 1);
}

/* --- a region that does not start on a unit ------------------------------- */

struct unaligned_arg {
	const uint8_t *region;
	unsigned images, misaligned;
};

__attribute__((noinline)) void crash_test_unaligned(void *arg)
{
	(void)arg;
	/* Bytes 8..16 of the buffer: unit 1, offset 5 in the region. */
	store8(&region[1], 0x0807060504030201ull);
	ntm_drain();
}

static int check_unaligned(void *image, size_t size, void *arg)
{
	struct unaligned_arg *a = arg;
	const uint8_t *b = image;
	static const uint8_t new[8] = { 1, 2, 3, 4, 5, 6, 7, 8 };

	a->images++;
	if (((uintptr_t)image ^ (uintptr_t)a->region) % 64)
		a->misaligned++;
	assert_int_equal(size, 20);
	/* Bytes before and after unit 1 never change. */
	for (size_t i = 0; i < size; i++)
		if (i < 5 || i >= 13)
			assert_int_equal(b[i], 0xa0 + i);
	return memcmp(b + 5, new, 8) == 0;	/* refuse the new value */
}

static void unaligned_region(void **state)
{
	uint8_t *bytes = (uint8_t *)region;
	struct unaligned_arg a = { .region = bytes + 3 };
	struct ntm_crash_config cfg = config(20, check_unaligned, &a);
	struct ntm_crash_result res;

	(void)state;
	for (size_t i = 0; i < 20; i++)
		bytes[3 + i] = 0xa0 + i;
	cfg.region = bytes + 3;
	/* Dirty, never written back: pending at the fence and at the end. */
	assert_int_equal(ntm_crash_run(&cfg, crash_test_unaligned, NULL,
				       &res), 1);
	assert_int_equal(res.states, 2 + 2);
	assert_int_equal(res.failures, 2);
	assert_int_equal(res.first_units, 1);
	assert_int_equal(res.first_unit_offsets[0], 5);
	assert_int_equal(a.misaligned, 0);
}

/* --- a commit record ------------------------------------------------------ */

/*
 * A record: 64 bytes of data in line 0, the commit word in line 1. The
 * claim: after a crash, a set commit word means the data is all there.
 */
#define COMMIT_MAGIC 0x434f4d4d49545f31ull	/* "COMMIT_1" */

struct record {
	uint64_t data[8];
	uint64_t commit;
	uint64_t pad[7];
};

static uint64_t record_data[8];

static __attribute__((noinline)) void write_record(struct record *r)
{
	ntm_memcpy_flush(r->data, record_data, sizeof(r->data));
	ntm_drain();		/* data durable before the commit word */
	nt8(&r->commit, COMMIT_MAGIC);
	ntm_drain();
}

static __attribute__((noinline)) void write_record_nodrain(struct record *r)
{
	ntm_memcpy_flush(r->data, record_data, sizeof(r->data));
	/* Missing: ntm_drain(). The commit word may reach media first. */
	nt8(&r->commit, COMMIT_MAGIC);
	ntm_drain();
}

__attribute__((noinline)) void crash_test_commit_right(void *arg)
{
	(void)arg;
	write_record((struct record *)region);
	calls++;
}

__attribute__((noinline)) void crash_test_commit_wrong(void *arg)
{
	(void)arg;
	write_record_nodrain((struct record *)region);
	calls++;
}

/* Recovery: a committed record must hold all its data. */
static int check_commit(void *image, size_t size, void *arg)
{
	const struct record *r = image;

	(void)arg;
	assert_int_equal(size, sizeof(*r));
	if (r->commit != COMMIT_MAGIC)
		return 0;	/* not committed: ignored, any data is fine */
	return memcmp(r->data, record_data, sizeof(r->data)) != 0;
}

static void commit_record(void **state)
{
	struct ntm_crash_config cfg = config(sizeof(struct record),
					     check_commit, NULL);
	struct ntm_crash_result res;
	char *text = NULL;
	size_t len = 0;
	FILE *f;

	(void)state;
	for (unsigned i = 0; i < 8; i++)
		record_data[i] = 0xabcdef0000000000ull | i;

	/* Done right: no state at any point breaks the claim. */
	cfg.points = NTM_CRASH_AT_FENCE | NTM_CRASH_AT_WRITEBACK |
		     NTM_CRASH_AT_STORE;
	assert_int_equal(ntm_crash_run(&cfg, crash_test_commit_right, NULL,
				       &res), 0);
	assert_int_equal(res.failures, 0);
	assert_true(res.points >= 3);

	/* At fences only: data pending at the first (2^8), the commit word
	 * at the second (2), nothing at the end. */
	cfg = config(sizeof(struct record), check_commit, NULL);
	run(&cfg, crash_test_commit_right, NULL, &res, 0, 3, 256 + 2 + 1);

	/* Without the drain: 9 units pending at the one fence; every state
	 * with the commit word new and some data unit old is refused. */
	cfg = config(sizeof(struct record), check_commit, NULL);
	run(&cfg, crash_test_commit_wrong, NULL, &res, 1, 2, 512 + 1);
	assert_int_equal(res.failures, 255);
	assert_int_equal(res.first_kind, NTM_REC_FENCE);
	assert_int_equal(res.first_pending, 9);
	/* The commit word (offset 64) is among the new units; not all the
	 * data is. */
	assert_true(res.first_units >= 1 && res.first_units <= 8);
	assert_int_equal(res.first_unit_offsets[res.first_units - 1], 64);

	f = open_memstream(&text, &len);
	assert_non_null(f);
	ntm_crash_report(&res, f);
	fclose(f);
	assert_non_null(strstr(text, "2 points, 513 states, 255 failed"));
	assert_non_null(strstr(text, "first failure: point 1, fence at "
				     "crash_test_commit_wrong+0x"));
	free(text);
}

/* --- arguments ------------------------------------------------------------ */

static void noop(void *arg)
{
	(void)arg;
}

/* What one bad-argument case spoils; the rest of the call is valid. */
enum bad_field {
	BAD_CFG,		/* cfg NULL */
	BAD_WORKLOAD,		/* workload NULL */
	BAD_RES,		/* res NULL */
	BAD_REGION,		/* cfg->region = addr, cfg->size = size */
	BAD_SIZE,		/* cfg->size = size */
	BAD_CHECK,		/* cfg->check NULL */
	BAD_POINTS,		/* cfg->points = size */
	BAD_EXHAUSTIVE_MAX,	/* cfg->exhaustive_max = size */
};

struct bad_arg {
	const char *what;
	enum bad_field field;
	void *addr;
	size_t size;
	int err;
	const char *names;	/* what ntm_errmsg() must hold */
};

/*
 * Memory a region must not be: a mapped page followed by an unmapped one,
 * a PROT_NONE page, and a page of a file mapping past the file's end (a
 * load there is SIGBUS). Then a read-only page, which a run accepts.
 */
struct bad_memory {
	unsigned char *map;	/* 4 pages: rw, unmapped, PROT_NONE, ro */
	unsigned char *file_map;/* 2 pages of a 1-page file */
	size_t pg;
};

static void bad_memory_map(struct bad_memory *m)
{
	FILE *f = tmpfile();

	m->pg = tu_page_size();
	m->map = mmap(NULL, 4 * m->pg, PROT_READ | PROT_WRITE,
		      MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	assert_true(m->map != MAP_FAILED);
	memset(m->map, 0x11, 4 * m->pg);
	assert_int_equal(munmap(m->map + m->pg, m->pg), 0);
	assert_int_equal(mprotect(m->map + 2 * m->pg, m->pg, PROT_NONE), 0);
	assert_int_equal(mprotect(m->map + 3 * m->pg, m->pg, PROT_READ), 0);

	assert_non_null(f);
	assert_int_equal(ftruncate(fileno(f), (off_t)m->pg), 0);
	m->file_map = mmap(NULL, 2 * m->pg, PROT_READ | PROT_WRITE, MAP_SHARED,
			   fileno(f), 0);
	assert_true(m->file_map != MAP_FAILED);
	fclose(f);	/* the mapping keeps the file */
}

static void bad_memory_unmap(struct bad_memory *m)
{
	munmap(m->map, m->pg);
	munmap(m->map + 2 * m->pg, 2 * m->pg);
	munmap(m->file_map, 2 * m->pg);
}

static void args_invalid(void **state)
{
	uint64_t images = 0;
	struct ntm_crash_config cfg = config(64, check_any, &images);
	struct ntm_crash_config bad;
	struct ntm_crash_result res;
	struct bad_memory m;
	char hole_at[48];

	(void)state;
	bad_memory_map(&m);
	snprintf(hole_at, sizeof(hole_at), "cfg->region: %zu bytes into ", m.pg);
	{
		/* Every refusal names the argument, before anything runs. */
		const struct bad_arg cases[] = {
			{ "NULL cfg", BAD_CFG, NULL, 0, -EINVAL, "cfg: NULL" },
			{ "NULL workload", BAD_WORKLOAD, NULL, 0, -EINVAL,
			  "workload: NULL" },
			{ "NULL res", BAD_RES, NULL, 0, -EINVAL, "res: NULL" },
			{ "NULL region", BAD_REGION, NULL, 64, -EINVAL,
			  "cfg->region: NULL" },
			{ "size 0", BAD_SIZE, NULL, 0, -EINVAL, "cfg->size: 0" },
			{ "size SIZE_MAX", BAD_SIZE, NULL, SIZE_MAX, -EINVAL,
			  "cfg->size " },
			{ "size to the end of the address space", BAD_SIZE,
			  NULL, UINTPTR_MAX - (uintptr_t)region, -EINVAL,
			  "cfg->size " },
			{ "NULL check", BAD_CHECK, NULL, 0, -EINVAL,
			  "cfg->check: NULL" },
			{ "unknown points", BAD_POINTS, NULL, 1u << 7, -EINVAL,
			  "cfg->points has unknown bits 0x80" },
			{ "points bit 31", BAD_POINTS, NULL,
			  NTM_CRASH_AT_FENCE | 1u << 31, -EINVAL,
			  "cfg->points has unknown bits 0x80000000" },
			{ "exhaustive_max 64", BAD_EXHAUSTIVE_MAX, NULL, 64,
			  -EINVAL, "cfg->exhaustive_max 64: " },
			{ "exhaustive_max UINT_MAX", BAD_EXHAUSTIVE_MAX, NULL,
			  UINT_MAX, -EINVAL, "cfg->exhaustive_max 4294967295: " },
			{ "an unmapped region", BAD_REGION, m.map + m.pg, 64,
			  -EFAULT, "cfg->region: 0 bytes into " },
			{ "a region partly unmapped", BAD_REGION,
			  m.map + m.pg - 32, 64, -EFAULT,
			  "cfg->region: 32 bytes into " },
			{ "a region mapped, then a hole, then mapped",
			  BAD_REGION, m.map, 4 * m.pg, -EFAULT,
			  hole_at },
			{ "a PROT_NONE region", BAD_REGION, m.map + 2 * m.pg,
			  m.pg, -EFAULT, "cfg->region: 0 bytes into " },
			{ "a region past the end of its file", BAD_REGION,
			  m.file_map + m.pg - 8, 16, -EFAULT,
			  "cfg->region: 8 bytes into " },
			{ "a region at the lowest page", BAD_REGION,
			  (void *)(uintptr_t)4096, 8, -EFAULT,
			  "cfg->region: 0 bytes into " },
		};

		for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
			const struct bad_arg *c = &cases[i];
			const struct ntm_crash_config *pass = &bad;
			void (*workload)(void *) = noop;
			struct ntm_crash_result *out = &res;
			struct ntm_crash_result untouched;
			int ret;

			bad = cfg;
			switch (c->field) {
			case BAD_CFG: pass = NULL; break;
			case BAD_WORKLOAD: workload = NULL; break;
			case BAD_RES: out = NULL; break;
			case BAD_REGION:
				bad.region = c->addr;
				bad.size = c->size;
				break;
			case BAD_SIZE: bad.size = c->size; break;
			case BAD_CHECK: bad.check = NULL; break;
			case BAD_POINTS: bad.points = (unsigned)c->size; break;
			case BAD_EXHAUSTIVE_MAX:
				bad.exhaustive_max = (unsigned)c->size;
				break;
			}
			memset(&res, 0x5a, sizeof(res));
			untouched = res;
			ret = ntm_crash_run(pass, workload, NULL, out);
			if (ret != c->err)
				fail_msg("%s: %d, expected %d", c->what, ret,
					 c->err);
			if (!strstr(ntm_errmsg(), c->names))
				fail_msg("%s: ntm_errmsg() '%s' lacks '%s'",
					 c->what, ntm_errmsg(), c->names);
			assert_memory_equal(&res, &untouched, sizeof(res));
			assert_int_equal(images, 0);
		}
	}

	/*
	 * The growth rule (src/config_check.h): a flag bit or reserved word
	 * that is not 0 is refused, named, before anything runs: no check,
	 * no result written.
	 */
	for (int i = 0; i < TU_CONFIG_CASES; i++) {
		struct ntm_crash_result untouched;
		char want[64];

		bad = cfg;
		TU_SPOIL_CONFIG(&bad, i, 1u, want);
		memset(&res, 0x5a, sizeof(res));
		untouched = res;
		assert_int_equal(ntm_crash_run(&bad, noop, NULL, &res), -EINVAL);
		if (!strstr(ntm_errmsg(), want))
			fail_msg("ntm_errmsg() '%s' lacks '%s'", ntm_errmsg(),
				 want);
		assert_memory_equal(&res, &untouched, sizeof(res));
		assert_int_equal(images, 0);
	}

	/* A region tracked already belongs to someone else: refused, named,
	 * the result untouched, the other range still tracked. */
	assert_int_equal(ntm_check_track(region, 64), 0);
	{
		struct ntm_crash_result untouched;

		memset(&res, 0x5a, sizeof(res));
		untouched = res;
		assert_int_equal(ntm_crash_run(&cfg, noop, NULL, &res), -EINVAL);
		assert_non_null(strstr(ntm_errmsg(), "cfg->region "));
		assert_non_null(strstr(ntm_errmsg(), "tracked already"));
		assert_memory_equal(&res, &untouched, sizeof(res));
		assert_int_equal(images, 0);
	}
	assert_int_equal(ntm_check_track(region, 64), -EINVAL);
	ntm_check_untrack(region);

	/* None of the refused regions was left tracked. */
	assert_int_equal(ntm_check_track(m.map, m.pg), 0);
	ntm_check_untrack(m.map);

	/*
	 * A read-only region is run: the run only reads it (each image is
	 * a scratch copy), so a workload that stores nothing there, like
	 * recovery of an image mapped read-only, is checked as any other.
	 */
	bad = cfg;
	bad.region = m.map + 3 * m.pg;
	bad.size = m.pg;
	assert_int_equal(ntm_crash_run(&bad, noop, NULL, &res), 0);
	assert_int_equal(res.points, 1);
	assert_int_equal(res.states, 1);
	assert_int_equal(images, 1);
	images = 0;
	bad_memory_unmap(&m);

	/* Nothing stored: one point, one state, a clean report. */
	assert_int_equal(ntm_crash_run(&cfg, noop, NULL, &res), 0);
	assert_int_equal(res.points, 1);
	assert_int_equal(res.states, 1);
	assert_int_equal(images, 1);
}

static struct ntm_crash_result nested_res;
static int nested_ret;

static char nested_msg[256];

static void nested_workload(void *arg)
{
	struct ntm_crash_config *cfg = arg;

	nested_ret = ntm_crash_run(cfg, noop, NULL, &nested_res);
	snprintf(nested_msg, sizeof(nested_msg), "%s", ntm_errmsg());
}

static void args_busy(void **state)
{
	uint64_t images = 0;
	struct ntm_crash_config cfg = config(64, check_any, &images);
	struct ntm_crash_config inner = cfg;
	struct ntm_crash_result res, untouched;

	(void)state;
	inner.region = side;
	nested_ret = 0;
	memset(&nested_res, 0x5a, sizeof(nested_res));
	untouched = nested_res;
	assert_int_equal(ntm_crash_run(&cfg, nested_workload, &inner, &res),
			 0);
	assert_int_equal(nested_ret, -EBUSY);
	assert_non_null(strstr(nested_msg, "another ntm_crash_run() is going on"));
	assert_memory_equal(&nested_res, &untouched, sizeof(nested_res));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(nt3_every_mix_once),
		cmocka_unit_test(one_mix_fails_once),
		cmocka_unit_test(one_mix_family),
		cmocka_unit_test(flush_drain),
		cmocka_unit_test(flush_writeback_points),
		cmocka_unit_test(store_every),
		cmocka_unit_test(sampled_reproducible),
		cmocka_unit_test(exhaustive_1m),
		cmocka_unit_test(stop_at_first),
		cmocka_unit_test(check_calls_ntmem),
		cmocka_unit_test(unaligned_region),
		cmocka_unit_test(commit_record),
		cmocka_unit_test(args_invalid),
		cmocka_unit_test(args_busy),
	};

	return cmocka_run_group_tests_name("crash", tests, NULL, NULL);
}
