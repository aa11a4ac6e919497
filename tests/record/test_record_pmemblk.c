// SPDX-License-Identifier: MIT
/*
 * test_record_pmemblk.c - the libpmemblk drop-in's durability
 * (compat/libpmemblk), checked with the recorder (ntmem/check.h).
 *
 * The drop-in's sources are compiled into this program with NTM_RECORD
 * and linked with the recorder build, so the BTT under the pool reports
 * its copies, non-temporal stores, write-backs and fences. The drop-in
 * gives the BTT one persist callback, which PMDK's rule splits in two:
 * flush + drain when the pool is pmem (PMEM_IS_PMEM_FORCE=1, or a
 * CPU-durable mapping), ntm_ns_persist() (a fence, then msync) when it is
 * not. meson runs this test once with PMEM_IS_PMEM_FORCE=1 and once with
 * =0; the test checks that the pool took the branch the variable names.
 *
 * A pool is created in a fresh temporary directory, its whole mapping
 * tracked (the layout as it stands counts as durable), then each
 * pmemblk_write() (first, last and a middle block, a block written again,
 * 512- and 4096-byte blocks) must leave:
 *   - no unit of the mapping DIRTY, WB or NT: everything the write stored
 *     (data block, flog, map entry) was made durable;
 *   - the block's new contents in one place of the mapping, found by its
 *     bytes, every unit of it stored and DURABLE (record_util.h's strict
 *     check);
 *   - without pmem, an MS_SYNC msync() of the data block's pages during
 *     the write (interposed below: the recorder cannot see the page
 *     cache); with pmem, no msync() at all.
 * writes_set makes the same writes to a pool set of two parts, mapped as
 * one range.
 */
#define _GNU_SOURCE
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <ntmem.h>
#include <ntmem/check.h>

#include "blk.h"	/* the drop-in's struct pmemblk: the pool's mapping */
#include "libpmemblk.h"
#include "../lib/record_util.h"
#include "../lib/testutil.h"

#define ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))

static char dir[256];
static int want_pmem;

/* --- msync(): interposed, the drop-in is linked into this program ------- */

#define MAX_MSYNC 64
static unsigned msync_calls;
static struct {
	uintptr_t start, end;
	int flags;
} msyncs[MAX_MSYNC];

int msync(void *addr, size_t len, int flags)
{
	if (msync_calls < MAX_MSYNC) {
		msyncs[msync_calls].start = (uintptr_t)addr;
		msyncs[msync_calls].end = (uintptr_t)addr + len;
		msyncs[msync_calls].flags = flags;
	}
	msync_calls++;
	return (int)syscall(SYS_msync, addr, len, flags);
}

/* An MS_SYNC call of this write covered [p, p + n). */
static bool msync_covered(const void *p, size_t n)
{
	uintptr_t a = (uintptr_t)p;

	for (unsigned i = 0; i < msync_calls && i < MAX_MSYNC; i++)
		if (msyncs[i].flags == MS_SYNC && msyncs[i].start <= a &&
		    msyncs[i].end >= a + n)
			return true;
	return false;
}

static int setup(void **state)
{
	const char *tmp = getenv("TMPDIR");
	const char *force = getenv("PMEM_IS_PMEM_FORCE");

	(void)state;
	if (!force || (strcmp(force, "0") && strcmp(force, "1"))) {
		fprintf(stderr, "run with PMEM_IS_PMEM_FORCE=0 or =1\n");
		return -1;
	}
	want_pmem = force[0] == '1';
	snprintf(dir, sizeof(dir), "%s/ntmem-record-pmemblk-XXXXXX",
		 tmp && *tmp ? tmp : "/tmp");
	if (!mkdtemp(dir)) {
		perror("mkdtemp");
		return -1;
	}
	return 0;
}

static int teardown(void **state)
{
	(void)state;
	return rmdir(dir);
}

/* Where the BTT put the block: its one copy in the mapping. */
static const unsigned char *find_block(const struct pmemblk *pbp,
				       const unsigned char *data, size_t len)
{
	const unsigned char *hit, *next;

	hit = memmem(pbp->base, pbp->size, data, len);
	if (!hit)
		fail_msg("bsize %zu: the written block is nowhere in the pool",
			 len);
	next = memmem(hit + 1, pbp->size - (size_t)(hit + 1 - pbp->base),
		      data, len);
	if (next)
		fail_msg("bsize %zu: the written block is in the pool twice "
			 "(+%zu, +%zu)", len, (size_t)(hit - pbp->base),
			 (size_t)(next - pbp->base));
	return hit;
}

static void write_check(struct pmemblk *pbp, unsigned char *buf,
			long long blockno, uint64_t seed)
{
	size_t bsize = pmemblk_bsize(pbp);
	const unsigned char *blk;
	struct ntm_check_counts c;
	unsigned char *back;

	tu_fill_random(buf, bsize, seed);
	ntm_check_reset();
	msync_calls = 0;
	if (pmemblk_write(pbp, buf, blockno))
		fail_msg("pmemblk_write(%lld): %s", blockno, pmemblk_errormsg());

	rec_query(pbp->base, pbp->size, &c);
	if (!ntm_check_durable(pbp->base, pbp->size))
		rec_fail(__FILE__, __LINE__, pbp->base, pbp->size, &c,
			 "clean or durable", "pmem %d bsize %zu: block %lld",
			 want_pmem, bsize, blockno);
	if (c.units[NTM_CHECK_DURABLE] < bsize / NTM_CHECK_UNIT)
		rec_fail(__FILE__, __LINE__, pbp->base, pbp->size, &c,
			 "durable in at least the block's units",
			 "pmem %d bsize %zu: block %lld", want_pmem, bsize,
			 blockno);

	blk = find_block(pbp, buf, bsize);
	rec_expect_durable(blk, bsize, "pmem %d bsize %zu: block %lld at +%zu",
			   want_pmem, bsize, blockno, (size_t)(blk - pbp->base));

	if (want_pmem && msync_calls)
		fail_msg("pmem bsize %zu: block %lld: %u msync() calls, want "
			 "flush + drain only", bsize, blockno, msync_calls);
	if (!want_pmem && !msync_covered(blk, bsize))
		fail_msg("no pmem, bsize %zu: block %lld at +%zu: no MS_SYNC "
			 "msync() covered it (%u calls)", bsize, blockno,
			 (size_t)(blk - pbp->base), msync_calls);

	back = malloc(bsize);
	assert_non_null(back);
	assert_int_equal(pmemblk_read(pbp, back, blockno), 0);
	assert_memory_equal(back, buf, bsize);
	free(back);
}

/*
 * A pool set of two 10 MiB parts in dir (poolset(5)); @path is its set
 * file, @part0/@part1 its parts, for the caller to remove.
 */
static void write_set(const char *path, char part0[300], char part1[300])
{
	FILE *f = fopen(path, "w");

	assert_non_null(f);
	snprintf(part0, 300, "%s/part0", dir);
	snprintf(part1, 300, "%s/part1", dir);
	fprintf(f, "PMEMPOOLSET\n10M %s\n10M %s\n", part0, part1);
	assert_int_equal(fclose(f), 0);
}

static void writes_to(bool set)
{
	static const size_t bsizes[] = { 512, 4096 };

	/*
	 * The msync() branch needs a page-cache file: on DAX the pool is
	 * mapped MAP_SYNC, whose persist is write-back and fence with no
	 * msync(), and a MAP_SYNC pool set is pmem whatever
	 * PMEM_IS_PMEM_FORCE says, as in PMDK.
	 */
	if (!want_pmem)
		tu_skip_on_dax(dir, "a page-cache file for the msync() branch");
	for (size_t s = 0; s < ARRAY_SIZE(bsizes); s++) {
		char path[300], part0[300], part1[300];
		struct pmemblk *pbp;
		unsigned char *buf;
		long long last;
		uint64_t seed = 0xb10c + s * 100;

		snprintf(path, sizeof(path), "%s/pool-%zu", dir, bsizes[s]);
		if (set)
			write_set(path, part0, part1);
		pbp = pmemblk_create(path, bsizes[s], set ? 0 : PMEMBLK_MIN_POOL,
				     0600);
		if (!pbp)
			fail_msg("pmemblk_create(%s, %zu): %s", path, bsizes[s],
				 pmemblk_errormsg());
		/* The branch the variable asked for. */
		assert_int_equal(pbp->is_pmem, want_pmem);
		assert_int_equal(pmemblk_bsize(pbp), bsizes[s]);
		last = (long long)pmemblk_nblock(pbp) - 1;
		assert_true(last > 16);
		buf = malloc(bsizes[s]);
		assert_non_null(buf);

		assert_int_equal(ntm_check_track(pbp->base, pbp->size), 0);
		ntm_check_start();
		write_check(pbp, buf, 0, seed++);
		write_check(pbp, buf, last, seed++);
		write_check(pbp, buf, last / 2, seed++);
		/* the same block again: another free block of the BTT */
		write_check(pbp, buf, last / 2, seed++);
		write_check(pbp, buf, 0, seed++);
		ntm_check_stop();
		ntm_check_untrack(pbp->base);

		free(buf);
		pmemblk_close(pbp);
		assert_int_equal(unlink(path), 0);
		if (set) {
			assert_int_equal(unlink(part0), 0);
			assert_int_equal(unlink(part1), 0);
		}
	}
}

/*
 * On DAX (NTMEM_TEST_SCRATCH_DAX, a real kernel's DAX file system) a pool
 * is mapped MAP_SYNC, and PMDK then takes it for pmem whatever
 * PMEM_IS_PMEM_FORCE says (util_replica_set_is_pmem()): flush + drain,
 * never msync(); for a single file and for a pool set alike.
 */
static void dax_pools_are_pmem(void **state)
{
	char ddir[256], path[300], part[300];
	int ret = tu_scratch_dax_dir(ddir, sizeof(ddir), "ntmem-record-pmemblk-dax");

	(void)state;
	if (ret == 1)
		skip();	/* no DAX file system named here */
	assert_int_equal(ret, 0);
	for (int set = 0; set <= 1; set++) {
		struct pmemblk *pbp;

		snprintf(path, sizeof(path), "%s/pool", ddir);
		snprintf(part, sizeof(part), "%s/part0", ddir);
		if (set) {
			FILE *f = fopen(path, "w");

			assert_non_null(f);
			fprintf(f, "PMEMPOOLSET\n20M %s\n", part);
			assert_int_equal(fclose(f), 0);
		}
		pbp = pmemblk_create(path, 512, set ? 0 : PMEMBLK_MIN_POOL, 0600);
		if (!pbp)
			fail_msg("pmemblk_create(%s): %s", path, pmemblk_errormsg());
		if (!pbp->is_pmem)
			fail_msg("%s on DAX with PMEM_IS_PMEM_FORCE=%s: not pmem",
				 set ? "a pool set" : "a pool",
				 getenv("PMEM_IS_PMEM_FORCE") ? getenv("PMEM_IS_PMEM_FORCE") : "(unset)");
		pmemblk_close(pbp);
		assert_int_equal(unlink(path), 0);
		if (set)
			assert_int_equal(unlink(part), 0);
	}
	assert_int_equal(rmdir(ddir), 0);
}

static void writes(void **state)
{
	(void)state;
	writes_to(false);
}

/* The same writes to a pool set: its parts are persisted as one range. */
static void writes_set(void **state)
{
	(void)state;
	writes_to(true);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(writes),
		cmocka_unit_test(writes_set),
		cmocka_unit_test(dax_pools_are_pmem),
	};

	return cmocka_run_group_tests(tests, setup, teardown);
}
