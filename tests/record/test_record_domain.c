// SPDX-License-Identifier: MIT
/*
 * test_record_domain.c - the persistence domain under the recorder
 * (ntmem/check.h): in a cpu_cache domain the write-back is gone from every
 * persisting path and the fence alone makes the stores durable; in a
 * memory_controller domain the old rules hold.
 *
 * meson runs it twice. With NTMEM_PERSIST_DOMAIN=cpu_cache
 * (NTMEM_TEST_EXPECT_DOMAIN=cpu_cache) the model takes the process's
 * domain, and:
 *   store     a stored unit is DIRTY until its own thread's fence, then
 *             DURABLE; another thread's fence does not settle it
 *   persist   ntm_persist() after stores: durable, no line written back
 *   flush     ntm_memcpy_flush() (out of line, at odd offsets and sizes;
 *             and the inline path) then ntm_drain(): durable, no line
 *             written back
 *   fua       FUA block writes, plain and vectored in odd pieces, on
 *             anonymous, tmpfs- and disk-emulated namespaces: durable on
 *             return, no line written back; writes without FUA durable
 *             after ntm_blk_flush()
 *   ns        ntm_ns_persist() of stores on an emulated namespace
 * Without it (memory_controller), the same cases prove the old properties:
 * a store and a fence leave the unit DIRTY, ntm_persist() and unaligned
 * flush copies write lines back, FUA writes are durable; and a namespace
 * and the model set to cpu_cache (ntm_ns_set_persist_domain(),
 * ntm_check_set_domain()) behave as the override does.
 */
#define _GNU_SOURCE
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <errno.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/uio.h>

#include <ntmem.h>
#include <ntmem/check.h>

#include "../lib/record_util.h"

#define BUF 16384
#define DEV_SIZE (256u << 10)

static unsigned char *buf, *src;
static bool cpu_cache;	/* the process was started in a cpu_cache domain */

static int setup(void **state)
{
	const char *e = getenv("NTMEM_TEST_EXPECT_DOMAIN");

	(void)state;
	cpu_cache = e && strcmp(e, "cpu_cache") == 0;
	buf = aligned_alloc(4096, BUF);
	src = malloc(BUF);
	if (!buf || !src)
		return -1;
	for (int i = 0; i < BUF; i++)
		src[i] = (unsigned char)(i * 13 + 5);
	memset(buf, 0, BUF);
	return ntm_check_track(buf, BUF);
}

static int teardown(void **state)
{
	(void)state;
	ntm_check_untrack(buf);
	free(buf);
	free(src);
	return 0;
}

/* Every case starts from a clean model in the process's domain. */
static int fresh(void **state)
{
	(void)state;
	ntm_check_stop();
	ntm_check_reset();
	assert_int_equal(ntm_check_set_domain(ntm_persist_domain_active()), 0);
	ntm_check_start();
	return 0;
}

/* No line of the range was written back since the last reset. */
static void expect_no_writeback(const void *p, size_t n, const char *what)
{
	struct ntm_check_counts c;

	rec_query(p, n, &c);
	if (c.lines_written_back)
		fail_msg("%s: %zu of %zu lines written back in a cpu_cache domain",
			 what, c.lines_written_back, c.lines);
}

static void test_model_domain(void **state)
{
	(void)state;
	assert_int_equal(ntm_persist_domain_active(),
			 cpu_cache ? NTM_PERSIST_CPU_CACHE
				   : NTM_PERSIST_MEMORY_CONTROLLER);
	assert_int_equal(ntm_check_domain(), ntm_persist_domain_active());
	assert_int_equal(ntm_check_set_domain((enum ntm_persist_domain)9), -EINVAL);
	assert_int_equal(ntm_check_domain(), ntm_persist_domain_active());
	assert_int_equal(ntm_flush_active() == NTM_FLUSH_NONE, cpu_cache);
}

static void *fence_elsewhere(void *arg)
{
	(void)arg;
	ntm_drain();
	return NULL;
}

static void test_store(void **state)
{
	pthread_t t;

	(void)state;
	memset(buf + 8, 0x11, 1000);
	ntm_check_store(buf + 8, 1000);
	rec_expect_all(buf + 8, 1000, NTM_CHECK_DIRTY, "stored, no fence");
	/* Another thread's fence orders its own stores only. */
	assert_int_equal(pthread_create(&t, NULL, fence_elsewhere, NULL), 0);
	pthread_join(t, NULL);
	rec_expect_all(buf + 8, 1000, NTM_CHECK_DIRTY, "another thread's fence");
	ntm_drain();
	if (cpu_cache)
		rec_expect_durable(buf + 8, 1000, "store + own fence, cpu_cache");
	else
		rec_expect_all(buf + 8, 1000, NTM_CHECK_DIRTY,
			       "store + fence, memory_controller: still cached");
	expect_no_writeback(buf, BUF, "store + fence");
}

static void test_persist(void **state)
{
	struct ntm_check_counts c;

	(void)state;
	memset(buf + 3, 0x22, 5000);
	ntm_check_store(buf + 3, 5000);
	(ntm_persist)(buf + 3, 5000);
	rec_expect_durable(buf + 3, 5000, "ntm_persist");
	rec_query(buf + 3, 5000, &c);
	if (cpu_cache)
		expect_no_writeback(buf + 3, 5000, "ntm_persist");
	else
		assert_int_equal(c.lines_written_back, c.lines);
}

static void test_flush(void **state)
{
	static const size_t sizes[] = { 4, 8, 24, 64, 72, 100, 128, 300, 4096,
					5000 };
	static const size_t offs[] = { 0, 1, 8, 16, 24, 61 };

	(void)state;
	for (size_t i = 0; i < sizeof(sizes) / sizeof(*sizes); i++) {
		for (size_t k = 0; k < sizeof(offs) / sizeof(*offs); k++) {
			unsigned char *d = buf + 4096 + offs[k];
			struct ntm_check_counts c;

			fresh(state);
			(ntm_memcpy_flush)(d, src, sizes[i]);
			ntm_drain();
			rec_expect_durable(d, sizes[i], "ntm_memcpy_flush %zu at +%zu",
					   sizes[i], offs[k]);
			rec_query(d, sizes[i], &c);
			if (cpu_cache)
				expect_no_writeback(buf, BUF, "ntm_memcpy_flush");
			else if (offs[k] == 1)
				/* Cached head bytes, written back: the old way. */
				assert_true(c.lines_written_back > 0);
			if (memcmp(d, src, sizes[i]))
				fail_msg("ntm_memcpy_flush %zu at +%zu: wrong bytes",
					 sizes[i], offs[k]);
		}
	}
	/* The inline path of a constant size, aligned and not. */
	fresh(state);
	ntm_memcpy_flush(buf + 64, src, 64);
	ntm_memcpy_flush(buf + 201, src, 64);
	ntm_drain();
	rec_expect_durable(buf + 64, 64, "inline, aligned");
	rec_expect_durable(buf + 201, 64, "inline, unaligned");
	if (cpu_cache)
		expect_no_writeback(buf, BUF, "inline ntm_memcpy_flush");
}

/*
 * FUA writes on each kind of namespace, with the namespace in @domain
 * (the model too); NTM_PERSIST_NONE: leave both as they are.
 */
static void fua_on(enum rec_ns_kind k, enum ntm_persist_domain domain)
{
	struct ntm_blk_config cfg = { .sector_size = 512 };
	struct ntm_ns *ns = rec_ns_create(k, DEV_SIZE);
	bool no_writeback = cpu_cache || domain == NTM_PERSIST_CPU_CACHE;
	struct iovec iov[4] = {
		{ src, 1 }, { src + 1, 511 }, { src + 512, 2047 }, { src + 2559, 513 },
	};
	struct ntm_blk *blk;
	unsigned char *base;

	if (!ns)
		return;		/* no such place on this machine */
	base = ntm_ns_base(ns);
	if (domain != NTM_PERSIST_NONE) {
		assert_int_equal(ntm_ns_set_persist_domain(ns, domain), 0);
		assert_int_equal(ntm_check_set_domain(domain), 0);
	}
	assert_int_equal(ntm_blk_open(&blk, ns, &cfg), 0);
	assert_int_equal(ntm_check_track(base, DEV_SIZE), 0);
	ntm_check_reset();
	ntm_check_start();

	assert_int_equal(ntm_blk_write(blk, src, 4096, 8192, NTM_BLK_FUA), 4096);
	rec_expect_durable(base + 8192, 4096, "%s: FUA write", rec_ns_names[k]);
	/* Odd pieces: the flush copy stores their edges through the cache. */
	assert_int_equal(ntm_blk_writev(blk, iov, 4, 16384, NTM_BLK_FUA), 3072);
	rec_expect_durable(base + 16384, 3072, "%s: FUA writev", rec_ns_names[k]);
	assert_int_equal(ntm_blk_writev(blk, iov, 4, 32768, 0), 3072);
	assert_int_equal(ntm_blk_flush(blk), 0);
	rec_expect_durable(base + 32768, 3072, "%s: write + flush", rec_ns_names[k]);
	if (no_writeback)
		expect_no_writeback(base, DEV_SIZE, rec_ns_names[k]);

	ntm_check_stop();
	ntm_check_untrack(base);
	ntm_blk_close(blk);
	ntm_ns_close(ns);
	fresh(NULL);
}

static void test_fua(void **state)
{
	(void)state;
	for (int k = REC_NS_ANON; k <= REC_NS_DISK; k++)
		fua_on((enum rec_ns_kind)k, NTM_PERSIST_NONE);
}

/* A namespace declared cpu_cache in a memory_controller process. */
static void test_fua_set_domain(void **state)
{
	(void)state;
	for (int k = REC_NS_ANON; k <= REC_NS_DISK; k++)
		fua_on((enum rec_ns_kind)k, NTM_PERSIST_CPU_CACHE);
}

static void test_ns_persist(void **state)
{
	struct ntm_ns *ns = rec_ns_create(REC_NS_SHM, DEV_SIZE);
	struct ntm_check_counts c;
	unsigned char *base;

	(void)state;
	if (!ns)
		skip();
	base = ntm_ns_base(ns);
	assert_int_equal(ntm_check_track(base, DEV_SIZE), 0);
	for (int round = 0; round < 2; round++) {
		/* Round 1: the namespace and the model told cpu_cache. */
		bool cc = cpu_cache || round == 1;

		if (round == 1) {
			assert_int_equal(ntm_ns_set_persist_domain(ns,
					 NTM_PERSIST_CPU_CACHE), 0);
			assert_int_equal(ntm_check_set_domain(NTM_PERSIST_CPU_CACHE), 0);
		}
		ntm_check_reset();
		ntm_check_start();
		memset(base + 100, 0x33, 3000);
		ntm_check_store(base + 100, 3000);
		assert_int_equal(ntm_ns_persist(ns, base + 100, 3000), 0);
		rec_expect_durable(base + 100, 3000, "ntm_ns_persist, round %d", round);
		rec_query(base + 100, 3000, &c);
		if (cc)
			expect_no_writeback(base, DEV_SIZE, "ntm_ns_persist");
		else
			assert_int_equal(c.lines_written_back, c.lines);
		ntm_check_stop();
	}
	ntm_check_untrack(base);
	ntm_ns_close(ns);
	fresh(NULL);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup(test_model_domain, fresh),
		cmocka_unit_test_setup(test_store, fresh),
		cmocka_unit_test_setup(test_persist, fresh),
		cmocka_unit_test_setup(test_flush, fresh),
		cmocka_unit_test_setup(test_fua, fresh),
		cmocka_unit_test_setup(test_fua_set_domain, fresh),
		cmocka_unit_test_setup(test_ns_persist, fresh),
	};

	return cmocka_run_group_tests(tests, setup, teardown);
}
