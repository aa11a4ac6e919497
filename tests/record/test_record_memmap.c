// SPDX-License-Identifier: MIT
/*
 * test_record_memmap.c - ntm_memmap_init() leaves every descriptor byte
 * DURABLE, checked with the recorder (ntmem/check.h).
 *
 * Every layout (64, 80, 96 bytes) x placement (map=mem: the descriptor
 * array in DRAM is tracked; map=dev: the namespace holding it is) x
 * compound size (4 KiB, 2 MiB) x 1 to 4 threads x strategy. Before each
 * init the whole array is marked DIRTY (ntm_check_store()): it stands for
 * stores the recorder might not hear, so a descriptor that no recorded
 * non-temporal store and fence reached stays DIRTY, never passes as an
 * untouched CLEAN unit. On map=dev, nothing past the array is stored.
 *
 * Threads: the recorder's fence is per thread (ntmem/check.h): units a
 * worker NT-stored stay NT until that worker fences, whatever the caller
 * does after pthread_join(). A 16 MiB namespace (4096 pages; 4000 after
 * map=dev's reserve) splits into exactly 1, 2, 3 and 4 shares of whole
 * 512-page pageblocks, so each thread count really runs that many
 * threads, each owning a part of the array.
 *
 * The strategies that store through the cache - field (per-field stores)
 * and memcpy (template + memcpy()) - are durable because each thread
 * writes its descriptors back before its fence: deleting that write-back
 * leaves them DIRTY, which init_field and init_memcpy report.
 */
#define _GNU_SOURCE
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include <ntmem.h>
#include <ntmem/check.h>

#include "../lib/record_util.h"

#define MiB ((size_t)1 << 20)
#define NS_SIZE (16 * MiB)
#define ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))

static const unsigned layouts[] = { 64, 80, 96 };
static const size_t aligns[] = { 4096, 2 * MiB };
static const enum ntm_memmap_place places[] = { NTM_MEMMAP_MEM,
						NTM_MEMMAP_DEV };

/* NTM_INIT_CALL's copy: the library's own out-of-line NT copy. */
static void *nt_copy(void *dst, const void *src, size_t n, void *arg)
{
	(void)arg;
	return (ntm_memcpy_nt)(dst, src, n);
}

/*
 * Init one memmap of @ns with every thread count in turn; false (with
 * the first failure printed) when a descriptor was not durable.
 */
static bool init_all_threads(struct ntm_ns *ns, enum ntm_memmap_place place,
			     unsigned size, size_t align,
			     enum ntm_memmap_strategy strat, bool must)
{
	struct ntm_memmap_config cfg = {
		.desc_size = size, .align = align, .place = place,
		.strategy = strat, .threads = 1,
		.copy = strat == NTM_INIT_CALL ? nt_copy : NULL,
		.ns = ns,	/* map=dev allocates its descriptors through it */
	};
	struct ntm_memmap *mm;
	unsigned char *descs, *track;
	size_t bytes, track_len;
	bool durable = true;
	int ret;

	ret = ntm_memmap_create(&mm, ntm_ns_base(ns), ntm_ns_size(ns), ns, &cfg);
	if (ret)
		fail_msg("ntm_memmap_create(%u, %zu, %s): %d %s", size, align,
			 place == NTM_MEMMAP_DEV ? "dev" : "mem", ret,
			 ntm_errmsg());
	descs = ntm_memmap_descs(mm);
	bytes = ntm_memmap_bytes(mm);
	track = place == NTM_MEMMAP_DEV ? ntm_ns_base(ns) : descs;
	track_len = place == NTM_MEMMAP_DEV ? ntm_ns_size(ns) : bytes;
	assert_int_equal(ntm_check_track(track, track_len), 0);
	ntm_check_start();
	for (unsigned t = 1; t <= 4; t++) {
		const char *sname = ntm_memmap_strategy_name(strat);
		const char *pname = place == NTM_MEMMAP_DEV ? "dev" : "mem";

		assert_int_equal(ntm_memmap_set_init(mm, strat, t, cfg.copy,
						     NULL), 0);
		ntm_check_reset();
		ntm_check_store(descs, bytes);
		assert_int_equal(ntm_memmap_init(mm), 0);
		if (must) {
			rec_expect_durable(descs, bytes,
					   "%s map=%s %u bytes align %zu, %u "
					   "threads", sname, pname, size, align, t);
		} else {
			struct ntm_check_counts c;

			rec_query(descs, bytes, &c);
			if (c.units[NTM_CHECK_DURABLE] != rec_total(&c)) {
				ntm_check_durable(descs, bytes);
				print_message("%s map=%s %u bytes, %u threads: "
					      "%zu of %zu units not durable: %s\n",
					      sname, pname, size, t,
					      rec_total(&c) -
					      c.units[NTM_CHECK_DURABLE],
					      rec_total(&c), ntm_check_message());
				durable = false;
				break;
			}
		}
		if (place == NTM_MEMMAP_DEV && descs + bytes < track + track_len)
			rec_expect_all(descs + bytes, track + track_len -
				       (descs + bytes), NTM_CHECK_CLEAN,
				       "%s map=dev %u bytes align %zu, %u "
				       "threads: past the descriptors", sname,
				       size, align, t);
	}
	ntm_check_stop();
	ntm_check_untrack(track);
	ntm_memmap_destroy(mm);
	return durable;
}

/* Every placement, layout and alignment for @strat. */
static bool init_strategy(enum ntm_memmap_strategy strat, bool must)
{
	bool durable = true;

	for (size_t a = 0; a < ARRAY_SIZE(aligns) && durable; a++) {
		struct ntm_ns *ns;

		assert_int_equal(ntm_ns_anon(&ns, NS_SIZE, aligns[a]), 0);
		/* An expected failure is reported once, at its first case. */
		for (size_t p = 0; p < ARRAY_SIZE(places) && durable; p++)
			for (size_t l = 0; l < ARRAY_SIZE(layouts) && durable; l++)
				durable = init_all_threads(ns, places[p],
							   layouts[l], aligns[a],
							   strat, must);
		ntm_ns_close(ns);
	}
	return durable;
}

static void init_fixed(void **state)
{
	(void)state;
	init_strategy(NTM_INIT_FIXED, true);
}

static void init_nt(void **state)
{
	(void)state;
	init_strategy(NTM_INIT_NT, true);
}

static void init_call(void **state)
{
	(void)state;
	init_strategy(NTM_INIT_CALL, true);
}

/*
 * field and memcpy store through the cache; init_share_run() writes each
 * thread's descriptors back before its fence, so they are durable too.
 */
static void init_field(void **state)
{
	(void)state;
	init_strategy(NTM_INIT_FIELD, true);
}

static void init_memcpy(void **state)
{
	(void)state;
	init_strategy(NTM_INIT_MEMCPY, true);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(init_fixed),
		cmocka_unit_test(init_nt),
		cmocka_unit_test(init_call),
		cmocka_unit_test(init_field),
		cmocka_unit_test(init_memcpy),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
