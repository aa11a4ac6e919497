// SPDX-License-Identifier: MIT
/*
 * test_btt.c - the BTT (ntmem/btt.h): round trips at every LBA for 512,
 * 520 and 4096-byte blocks, reopen, the zero and error flags, lazy
 * layout, two arenas (arena limit lowered through the test hook), a
 * backup info block alone trusted only where it describes the range (a
 * BTT opened at the wrong offset is refused and left as it was), BTT
 * 1.1 and 2.0 (NTM_BTT_V2: written, reopened, required, one per BTT), an
 * open that never reads the map (the scan waits for the first access), the
 * on-media facts (signature, checksum, geometry), argument errors,
 * corrupted pools (bit flips in info blocks, backup, map and flog: each
 * opens read-only or fails with a message, never crashes, never returns
 * another LBA's data), threads racing writers and readers on overlapping
 * LBAs (no mixed sector), readers of one LBA whose freed blocks writers
 * keep reusing (every read whole and no older than the last), the first
 * writes to a lazy BTT from eight threads (none sees it without blocks
 * while one lays it out), and a writer killed with SIGKILL over and over
 * on a /dev/shm namespace (every sector one of the values written).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <sched.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>

#include "btt_layout.h"
#include "../lib/testutil.h"
#include "ntmem.h"
#include "ntmem/btt.h"

#define MiB (1ull << 20)

static uint64_t tu_next(uint64_t *s)
{
	return tu_rand(s);
}

static void *region(size_t size)
{
	void *p = mmap(NULL, size, PROT_READ | PROT_WRITE,
		       MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);

	assert_true(p != MAP_FAILED);
	return p;
}

/* Sector content determined by (lba, version): every 8 bytes differ. */
static void pattern(unsigned char *p, uint32_t n, uint64_t lba, uint64_t ver)
{
	uint64_t x = (lba + 1) * 0x9e3779b97f4a7c15ull ^ (ver + 1) *
		     0xc2b2ae3d27d4eb4full;

	for (uint32_t i = 0; i < n; i++) {
		x ^= x >> 29;
		x *= 0xbf58476d1ce4e5b9ull;
		p[i] = (unsigned char)(x >> 56);
	}
	/* Stamp lba and version so a wrong sector is named. */
	if (n >= 16) {
		memcpy(p, &lba, 8);
		memcpy(p + 8, &ver, 8);
	}
}

static struct ntm_btt *open_btt(void *base, size_t size, uint32_t lbasize,
				unsigned flags)
{
	struct ntm_btt_config cfg = { .lbasize = lbasize, .flags = flags };
	struct ntm_btt *b = NULL;
	int ret = ntm_btt_open(&b, base, size, &cfg);

	if (ret)
		fprintf(stderr, "btt open: %s\n", ntm_errmsg());
	assert_int_equal(ret, 0);
	return b;
}

/* Write every LBA, read every LBA back, reopen, read again. */
static void roundtrip(uint32_t lbasize, size_t size)
{
	unsigned char *base = region(size);
	struct ntm_btt *b = open_btt(base, size, lbasize, NTM_BTT_CREATE);
	unsigned char *w = malloc(lbasize), *r = malloc(lbasize);
	uint64_t nlba = ntm_btt_nlba(b);

	assert_true(nlba > 0);
	assert_int_equal(ntm_btt_lbasize(b), lbasize);
	assert_false(ntm_btt_readonly(b));
	assert_int_equal(ntm_btt_check(b), 0);
	/* A fresh BTT reads zeros. */
	assert_int_equal(ntm_btt_read(b, 0, nlba - 1, r), 0);
	for (uint32_t i = 0; i < lbasize; i++)
		assert_int_equal(r[i], 0);
	for (uint64_t l = 0; l < nlba; l++) {
		pattern(w, lbasize, l, 1);
		assert_int_equal(ntm_btt_write(b, (unsigned)(l %
				 ntm_btt_nlanes(b)), l, w), 0);
	}
	/* Overwrite every third, so free blocks circulate. */
	for (uint64_t l = 0; l < nlba; l += 3) {
		pattern(w, lbasize, l, 2);
		assert_int_equal(ntm_btt_write(b, 0, l, w), 0);
	}
	for (int pass = 0; pass < 2; pass++) {
		for (uint64_t l = 0; l < nlba; l++) {
			pattern(w, lbasize, l, l % 3 ? 1 : 2);
			assert_int_equal(ntm_btt_read(b, 0, l, r), 0);
			assert_memory_equal(r, w, lbasize);
		}
		assert_int_equal(ntm_btt_check(b), 0);
		ntm_btt_close(b);
		b = open_btt(base, size, pass ? lbasize : 0, 0);
		assert_int_equal(ntm_btt_nlba(b), nlba);
		assert_int_equal(ntm_btt_lbasize(b), lbasize);
	}
	ntm_btt_close(b);
	free(w);
	free(r);
	munmap(base, size);
}

static void test_roundtrip_512(void **state)
{
	(void)state;
	roundtrip(512, 2 * MiB);
}

static void test_roundtrip_520(void **state)
{
	(void)state;
	roundtrip(520, 2 * MiB);
}

static void test_roundtrip_4096(void **state)
{
	(void)state;
	roundtrip(4096, 8 * MiB);
}

/* The on-media facts libpmemblk and the kernel rely on. */
static void test_layout_facts(void **state)
{
	size_t size = 32 * MiB;
	unsigned char *base = region(size);
	struct ntm_btt *b = open_btt(base, size, 512, NTM_BTT_CREATE);
	struct btt_info i, bak;

	(void)state;
	memcpy(&i, base, sizeof(i));
	assert_memory_equal(i.sig, "BTT_ARENA_INFO\0\0", 16);
	assert_int_equal(le64toh(i.checksum), btt_info_checksum(&i));
	assert_int_equal(le16toh(i.major), 1);	/* as Debian's libpmemblk writes */
	assert_int_equal(le16toh(i.minor), 1);
	assert_int_equal(le32toh(i.external_lbasize), 512);
	assert_int_equal(le32toh(i.internal_lbasize), 512);
	assert_int_equal(le32toh(i.nfree), 256);
	assert_int_equal(le32toh(i.infosize), 4096);
	assert_int_equal(le64toh(i.dataoff), 4096);
	assert_int_equal(le64toh(i.nextoff), 0);
	assert_int_equal(le64toh(i.infooff), size - 4096);
	assert_int_equal(le64toh(i.flogoff), size - 4096 - 256 * 64);
	assert_int_equal(le64toh(i.mapoff) % 4096, 0);
	assert_int_equal(le32toh(i.external_nlba),
			 le32toh(i.internal_nlba) - 256);
	/* PMDK's count: (arena - 2 info - flog - 4 KiB) / (lbasize + 4). */
	assert_int_equal(le32toh(i.internal_nlba),
			 (size - 8192 - 16384 - 4096) / 516);
	memcpy(&bak, base + size - 4096, sizeof(bak));
	assert_memory_equal(&i, &bak, sizeof(i));
	/* Flog entry 3: lba 3, old = new = (external_nlba + 3) | zero. */
	{
		uint32_t f[8];

		memcpy(f, base + le64toh(i.flogoff) + 3 * 64, sizeof(f));
		assert_int_equal(le32toh(f[0]), 3);
		assert_int_equal(le32toh(f[1]),
				 (le32toh(i.external_nlba) + 3) | BTT_MAP_ZERO);
		assert_int_equal(f[1], f[2]);
		assert_int_equal(le32toh(f[3]), 1);
		for (int k = 4; k < 8; k++)
			assert_int_equal(f[k], 0);
	}
	/* Internal block size rounding: 520 -> 768, 100 -> 512. */
	assert_int_equal(btt_internal_lbasize(520), 768);
	assert_int_equal(btt_internal_lbasize(100), 512);
	assert_int_equal(btt_internal_lbasize(4096), 4096);
	ntm_btt_close(b);
	munmap(base, size);
}

static void test_zero_error_flags(void **state)
{
	size_t size = 2 * MiB;
	unsigned char *base = region(size);
	struct ntm_btt *b = open_btt(base, size, 512, NTM_BTT_CREATE);
	unsigned char w[512], r[512], z[512] = { 0 };

	(void)state;
	pattern(w, 512, 5, 1);
	assert_int_equal(ntm_btt_write(b, 0, 5, w), 0);
	assert_int_equal(ntm_btt_set_zero(b, 0, 5), 0);
	assert_int_equal(ntm_btt_read(b, 0, 5, r), 0);
	assert_memory_equal(r, z, 512);
	assert_int_equal(ntm_btt_set_error(b, 0, 6), 0);
	assert_int_equal(ntm_btt_read(b, 0, 6, r), -EIO);
	assert_int_equal(ntm_btt_check(b), 0);
	/* A write clears either flag. */
	assert_int_equal(ntm_btt_write(b, 0, 6, w), 0);
	assert_int_equal(ntm_btt_read(b, 0, 6, r), 0);
	assert_memory_equal(r, w, 512);
	/* Through another lane where there is one (one a CPU). */
	assert_int_equal(ntm_btt_write(b, ntm_btt_nlanes(b) - 1, 5, w), 0);
	assert_int_equal(ntm_btt_read(b, 0, 5, r), 0);
	assert_memory_equal(r, w, 512);
	/* Flags survive a reopen. */
	assert_int_equal(ntm_btt_set_error(b, 0, 7), 0);
	ntm_btt_close(b);
	b = open_btt(base, size, 512, 0);
	assert_int_equal(ntm_btt_read(b, 0, 7, r), -EIO);
	assert_int_equal(ntm_btt_check(b), 0);
	ntm_btt_close(b);
	munmap(base, size);
}

/*
 * A persist that fails from its @fail_at-th call on (msync behind a page
 * cache meeting EIO): each writing call returns -EIO and leaves the BTT
 * read-only, since the media then holds a store nobody knows to be
 * durable; reads go on.
 */
struct failing_persist {
	unsigned calls, fail_at;
	bool says_why;	/* fail through a library call that names the cause */
};

static int failing_persist(void *arg, const void *p, size_t n)
{
	struct failing_persist *fp = arg;

	if (++fp->calls >= fp->fail_at) {
		/* Stands for ntm_ns_persist() failing, with its message. */
		if (fp->says_why)
			return ntm_memmap_strategy_parse("no-such-strategy");
		return -EIO;
	}
	ntm_persist(p, n);
	return 0;
}

/*
 * The BTT's message for a failed persist keeps the cause the callback's
 * own library call recorded ("btt: lba 0: persist of the map: <cause>"),
 * and never takes an older, unrelated message for it.
 */
static void test_persist_failure_message(void **state)
{
	size_t size = 2 * MiB;
	unsigned char *base = region(size);
	unsigned char w[512];

	(void)state;
	pattern(w, 512, 5, 1);
	for (int says_why = 0; says_why <= 1; says_why++) {
		struct failing_persist fp = { 0, ~0u, says_why };
		struct ntm_btt_config cfg = {
			.lbasize = 512, .flags = NTM_BTT_CREATE,
			.persist = failing_persist, .persist_arg = &fp,
		};
		struct ntm_btt *b = NULL;

		assert_int_equal(ntm_btt_open(&b, base, size, &cfg), 0);
		assert_int_equal(ntm_btt_write(b, 0, 0, w), 0);
		/* An unrelated failure first: its message must not be reused. */
		assert_int_equal(ntm_btt_open(NULL, base, size, &cfg), -EINVAL);
		fp.fail_at = fp.calls + 1;
		assert_int_equal(ntm_btt_set_zero(b, 0, 1), -EIO);
		if (!strstr(ntm_errmsg(), "btt: lba 1: persist of the map") ||
		    strstr(ntm_errmsg(), "NULL argument") ||
		    !!strstr(ntm_errmsg(), "no-such-strategy") != says_why)
			fail_msg("failing persist (%s): message '%s'",
				 says_why ? "with a cause" : "silent", ntm_errmsg());
		ntm_btt_close(b);
		memset(base, 0, size);
	}
	munmap(base, size);
}

static void test_persist_failure(void **state)
{
	/* Every call that persists the map, each on a fresh BTT. */
	static const char *const calls[] = { "write", "set_zero", "set_error" };
	size_t size = 2 * MiB;
	unsigned char *base = region(size);
	unsigned char w[512], r[512];

	(void)state;
	pattern(w, 512, 3, 1);
	for (size_t i = 0; i < sizeof(calls) / sizeof(calls[0]); i++) {
		struct failing_persist fp = { 0, ~0u, false };
		struct ntm_btt_config cfg = {
			.lbasize = 512, .flags = NTM_BTT_CREATE,
			.persist = failing_persist, .persist_arg = &fp,
		};
		struct ntm_btt *b = NULL;
		int ret;

		assert_int_equal(ntm_btt_open(&b, base, size, &cfg), 0);
		unsigned per_write;

		/* The first write lays the BTT out; the second is counted. */
		assert_int_equal(ntm_btt_write(b, 0, 2, w), 0);
		per_write = fp.calls;
		assert_int_equal(ntm_btt_write(b, 0, 3, w), 0);
		per_write = fp.calls - per_write;
		assert_false(ntm_btt_readonly(b));
		if (i == 0) {
			/*
			 * The data's persist failing changes nothing the map
			 * points at: -EIO, the old contents, still writable.
			 */
			fp.fail_at = fp.calls + 1;
			assert_int_equal(ntm_btt_write(b, 0, 3, r), -EIO);
			assert_false(ntm_btt_readonly(b));
			fp.fail_at = ~0u;
			assert_int_equal(ntm_btt_read(b, 0, 3, r), 0);
			assert_memory_equal(r, w, 512);
		}
		/* The map's persist: the last of a write, the only one else. */
		fp.fail_at = fp.calls + (i == 0 ? per_write : 1);
		ret = i == 0 ? ntm_btt_write(b, 0, 4, w)
		    : i == 1 ? ntm_btt_set_zero(b, 0, 4)
			     : ntm_btt_set_error(b, 0, 4);
		if (ret != -EIO || !ntm_btt_readonly(b))
			fail_msg("%s with a failing persist: %d, %s", calls[i],
				 ret, ntm_btt_readonly(b) ? "read-only"
							  : "still writable");
		assert_int_equal(ntm_btt_write(b, 0, 5, w), -EROFS);
		assert_int_equal(ntm_btt_read(b, 0, 3, r), 0);
		assert_memory_equal(r, w, 512);
		ntm_btt_close(b);
		memset(base, 0, size);
	}
	munmap(base, size);
}

static void test_args(void **state)
{
	size_t size = 2 * MiB;
	unsigned char *base = region(size);
	struct ntm_btt_config cfg = { .flags = NTM_BTT_CREATE };
	struct ntm_btt *b = NULL;
	unsigned char buf[512];

	(void)state;
	assert_int_equal(ntm_btt_open(NULL, base, size, &cfg), -EINVAL);
	assert_int_equal(ntm_btt_open(&b, NULL, size, &cfg), -EINVAL);
	assert_int_equal(ntm_btt_open(&b, base + 8, size - 64, &cfg), -EINVAL);
	assert_int_equal(ntm_btt_open(&b, base, 4096, &cfg), -ENOSPC);
	assert_true(strlen(ntm_errmsg()) > 0);
	/* No BTT there and no CREATE: refused with a message. */
	cfg.flags = 0;
	assert_int_equal(ntm_btt_open(&b, base, size, &cfg), -EINVAL);
	assert_non_null(strstr(ntm_errmsg(), "info block"));
	cfg.flags = NTM_BTT_CREATE | NTM_BTT_READONLY;
	assert_int_equal(ntm_btt_open(&b, base, size, &cfg), -EINVAL);
	b = open_btt(base, size, 512, NTM_BTT_CREATE);
	assert_int_equal(ntm_btt_read(b, 0, ntm_btt_nlba(b), buf), -EINVAL);
	assert_int_equal(ntm_btt_write(b, 0, ntm_btt_nlba(b), buf), -EINVAL);
	assert_int_equal(ntm_btt_read(b, 0, 0, NULL), -EINVAL);
	assert_int_equal(ntm_btt_write(b, 0, 0, NULL), -EINVAL);
	assert_int_equal(ntm_btt_read(NULL, 0, 0, buf), -EINVAL);
	assert_int_equal(ntm_btt_write(b, ntm_btt_nlanes(b), 0, buf), -EINVAL);
	assert_int_equal(ntm_btt_set_zero(b, 0, ntm_btt_nlba(b)), -EINVAL);
	assert_int_equal(ntm_btt_check(NULL), -EINVAL);
	ntm_btt_close(b);
	/* Wrong block size on open. */
	cfg.flags = 0;
	cfg.lbasize = 4096;
	assert_int_equal(ntm_btt_open(&b, base, size, &cfg), -EINVAL);
	/* Read-only: reads work, writes refused. */
	b = open_btt(base, size, 512, NTM_BTT_READONLY);
	assert_true(ntm_btt_readonly(b));
	assert_int_equal(ntm_btt_read(b, 0, 0, buf), 0);
	assert_int_equal(ntm_btt_write(b, 0, 0, buf), -EROFS);
	ntm_btt_close(b);
	ntm_btt_close(NULL);
	munmap(base, size);
}

/*
 * The growth rule (src/config_check.h): a flag bit no NTM_BTT_* names, or
 * a reserved word that is not 0, is refused before anything is written -
 * here a CREATE that would have laid a BTT out over the zeroed region.
 */
static void test_config_reserved(void **state)
{
	size_t size = 2 * MiB;
	unsigned char *base = region(size);
	struct ntm_btt *b;

	(void)state;
	for (int i = 0; i < TU_CONFIG_CASES; i++) {
		struct ntm_btt_config cfg = { .flags = NTM_BTT_CREATE };
		char want[64];

		/* Bits 0-4 are NTM_BTT_*: the first unknown one is bit 5. */
		TU_SPOIL_CONFIG(&cfg, i, 1u << 5, want);
		b = (struct ntm_btt *)base;
		assert_int_equal(ntm_btt_open(&b, base, size, &cfg), -EINVAL);
		assert_null(b);
		if (!strstr(ntm_errmsg(), want))
			fail_msg("ntm_errmsg() '%s' lacks '%s'", ntm_errmsg(),
				 want);
		for (size_t at = 0; at < size; at++)
			if (base[at])
				fail_msg("%s: byte %zu written", want, at);
	}
	/* The same config with those fields 0 creates. */
	b = open_btt(base, size, 512, NTM_BTT_CREATE);
	ntm_btt_close(b);
	munmap(base, size);
}

/* PMDK's fresh pools: no BTT until the first write. */
static void test_lazy(void **state)
{
	size_t size = 2 * MiB;
	unsigned char *base = region(size);
	struct ntm_btt *b = open_btt(base, size, 512, NTM_BTT_LAZY);
	unsigned char w[512], r[512];
	uint64_t nlba = ntm_btt_nlba(b);

	(void)state;
	assert_true(nlba > 0);
	assert_int_equal(ntm_btt_read(b, 0, 3, r), 0);
	assert_int_equal(ntm_btt_set_zero(b, 0, 3), 0);
	assert_int_equal(ntm_btt_check(b), 0);
	for (size_t i = 0; i < size; i++)
		assert_int_equal(base[i], 0);	/* nothing written yet */
	pattern(w, 512, 3, 1);
	assert_int_equal(ntm_btt_write(b, 0, 3, w), 0);
	assert_int_equal(ntm_btt_read(b, 0, 3, r), 0);
	assert_memory_equal(r, w, 512);
	ntm_btt_close(b);
	b = open_btt(base, size, 512, 0);
	assert_int_equal(ntm_btt_nlba(b), nlba);
	assert_int_equal(ntm_btt_read(b, 0, 3, r), 0);
	assert_memory_equal(r, w, 512);
	ntm_btt_close(b);
	munmap(base, size);
}

/*
 * CREATE | LAZY, as pmemblk_create(): over a zero range nothing is
 * written; over an old BTT only its arena 0 info blocks are zeroed (no
 * other byte changes), so the range opens as no BTT, lazily as zeros, and
 * the first write lays out a new one in which the old BTT's sectors read
 * as zeros (its flog is not zero, so NTM_BTT_ZEROED does not skip the
 * map's zeros).
 */
static void test_lazy_create(void **state)
{
	size_t size = 2 * MiB;
	unsigned char *base = region(size), *snap = malloc(size);
	unsigned flags = NTM_BTT_CREATE | NTM_BTT_LAZY;
	unsigned char w[512], r[512];
	struct ntm_btt_config cfg = { .lbasize = 512 };
	struct ntm_btt *b = open_btt(base, size, 512, flags);
	size_t asize = size;

	(void)state;
	assert_non_null(snap);
	assert_true(ntm_btt_nlba(b) > 0);
	assert_int_equal(ntm_btt_read(b, 0, 5, r), 0);
	for (size_t i = 0; i < size; i++)
		assert_int_equal(base[i], 0);	/* nothing written */
	ntm_btt_close(b);

	/* An old BTT with sectors 3 and 5 written. */
	b = open_btt(base, size, 512, NTM_BTT_CREATE);
	pattern(w, 512, 5, 1);
	assert_int_equal(ntm_btt_write(b, 0, 5, w), 0);
	assert_int_equal(ntm_btt_write(b, 0, 3, w), 0);
	ntm_btt_close(b);
	memcpy(snap, base, size);
	b = open_btt(base, size, 512, flags | NTM_BTT_ZEROED);
	for (size_t i = 0; i < size; i++) {
		bool info = i < BTT_INFO_SIZE || i >= asize - BTT_INFO_SIZE;

		if (info && base[i])
			fail_msg("old info block byte %zu not zeroed", i);
		if (!info && base[i] != snap[i])
			fail_msg("byte %zu changed by the create", i);
	}
	assert_int_equal(ntm_btt_read(b, 0, 5, r), 0);
	assert_true(r[0] == 0 && !memcmp(r, r + 1, 511));
	ntm_btt_close(b);
	assert_int_equal(ntm_btt_open(&b, base, size, &cfg), -EINVAL);

	/* The first write lays the new BTT out: the old sectors are gone. */
	b = open_btt(base, size, 512, NTM_BTT_LAZY | NTM_BTT_ZEROED);
	pattern(w, 512, 3, 2);
	assert_int_equal(ntm_btt_write(b, 0, 3, w), 0);
	ntm_btt_close(b);
	b = open_btt(base, size, 512, 0);
	assert_int_equal(ntm_btt_check(b), 0);
	assert_int_equal(ntm_btt_read(b, 0, 3, r), 0);
	assert_memory_equal(r, w, 512);
	assert_int_equal(ntm_btt_read(b, 0, 5, r), 0);
	assert_true(r[0] == 0 && !memcmp(r, r + 1, 511));
	ntm_btt_close(b);
	free(snap);
	munmap(base, size);
}

/*
 * NTM_BTT_ZEROED spares the layout the map's zeros on a range that never
 * held a BTT (zero flog area): a byte planted in the map area survives
 * the first write; without the flag the layout zeroes it.
 */
static void test_zeroed_skips_map(void **state)
{
	size_t size = 2 * MiB;
	unsigned char *base = region(size);
	unsigned char w[512];
	uint64_t mapoff;
	struct ntm_btt *b = open_btt(base, size, 512, NTM_BTT_CREATE);

	(void)state;
	memcpy(&mapoff, base + offsetof(struct btt_info, mapoff), 8);
	mapoff = le64toh(mapoff);
	ntm_btt_close(b);
	pattern(w, 512, 1, 1);
	for (int zeroed = 0; zeroed < 2; zeroed++) {
		/* A map byte no LBA written here uses: LBA 100's entry. */
		unsigned char *canary = base + mapoff + 4 * 100 + 1;

		memset(base, 0, size);
		*canary = 0x5a;
		b = open_btt(base, size, 512, NTM_BTT_CREATE | NTM_BTT_LAZY |
				      (zeroed ? NTM_BTT_ZEROED : 0));
		assert_int_equal(ntm_btt_write(b, 0, 1, w), 0);
		ntm_btt_close(b);
		assert_int_equal(*canary, zeroed ? 0x5a : 0);
	}
	munmap(base, size);
}

/*
 * Open reads the info blocks and the flog, never the map: with every map
 * page but the first made inaccessible (the flog's entries name LBAs
 * 0..3, whose entries the replay looks at), open succeeds and sees the
 * same BTT; the scan comes with the first access, after the pages are
 * back. A pass over the map at open would fault here.
 */
static void test_open_skips_map(void **state)
{
	size_t size = 8 * MiB, pg = (size_t)sysconf(_SC_PAGESIZE);
	unsigned char *base = region(size);
	struct ntm_btt *b = open_btt(base, size, 512, NTM_BTT_CREATE);
	unsigned char w[512], r[512];
	uint64_t nlba = ntm_btt_nlba(b), mapoff, lo, hi;
	struct btt_info i;

	(void)state;
	for (uint64_t l = 0; l < 4; l++) {
		pattern(w, 512, l, 1);
		assert_int_equal(ntm_btt_write(b, 0, l, w), 0);
	}
	ntm_btt_close(b);
	memcpy(&i, base, sizeof(i));
	mapoff = le64toh(i.mapoff);
	lo = (mapoff + 16 + pg - 1) / pg * pg;
	hi = (mapoff + 4 * nlba) / pg * pg;
	assert_true(hi > lo + 4 * pg);	/* most of the map is fenced off */
	assert_int_equal(mprotect(base + lo, hi - lo, PROT_NONE), 0);
	b = open_btt(base, size, 512, 0);
	assert_int_equal(ntm_btt_nlba(b), nlba);
	assert_false(ntm_btt_readonly(b));
	assert_int_equal(mprotect(base + lo, hi - lo, PROT_READ | PROT_WRITE),
			 0);
	for (uint64_t l = 0; l < nlba; l += nlba / 5) {
		assert_int_equal(ntm_btt_read(b, 0, l, r), 0);
		if (l < 4) {
			pattern(w, 512, l, 1);
			assert_memory_equal(r, w, 512);
		}
	}
	assert_false(ntm_btt_readonly(b));
	assert_int_equal(ntm_btt_check(b), 0);
	ntm_btt_close(b);
	munmap(base, size);
}

/* Two arenas: the arena limit lowered to 1 MiB (min 256 KiB). */
static void test_two_arenas(void **state)
{
	size_t size = 2 * MiB + 512 * 1024;
	unsigned char *base = region(size);
	struct ntm_btt *b;
	unsigned char w[512], r[512];
	uint64_t nlba;
	struct btt_info i;

	(void)state;
	ntm_btt_max_arena = 1 * MiB;
	ntm_btt_min_arena = 256 * 1024;
	b = open_btt(base, size, 512, NTM_BTT_CREATE);
	nlba = ntm_btt_nlba(b);
	memcpy(&i, base, sizeof(i));
	assert_int_equal(le64toh(i.nextoff), MiB);
	memcpy(&i, base + 2 * MiB, sizeof(i));
	assert_memory_equal(i.sig, BTT_SIG, 16);
	assert_int_equal(le64toh(i.nextoff), 0);
	for (uint64_t l = 0; l < nlba; l++) {
		pattern(w, 512, l, 7);
		assert_int_equal(ntm_btt_write(b, 0, l, w), 0);
	}
	ntm_btt_close(b);
	/* The arena chain comes from the media, not from the limits. */
	ntm_btt_max_arena = BTT_MAX_ARENA;
	ntm_btt_min_arena = BTT_MIN_ARENA;
	b = open_btt(base, size, 512, 0);
	assert_int_equal(ntm_btt_nlba(b), nlba);
	for (uint64_t l = 0; l < nlba; l++) {
		pattern(w, 512, l, 7);
		assert_int_equal(ntm_btt_read(b, 0, l, r), 0);
		assert_memory_equal(r, w, 512);
	}
	assert_int_equal(ntm_btt_check(b), 0);
	ntm_btt_close(b);
	munmap(base, size);
}


/* --- the backup info block alone: trusted only where it describes the range --- */

/* Write LBAs 0..n-1 of @b with version @ver. */
static void fill(struct ntm_btt *b, uint64_t n, uint64_t ver)
{
	unsigned char w[512];

	for (uint64_t l = 0; l < n; l++) {
		pattern(w, 512, l, ver);
		assert_int_equal(ntm_btt_write(b, 0, l, w), 0);
	}
}

/* Read LBAs 0..n-1 of @b back: version @ver. */
static void expect_filled(struct ntm_btt *b, uint64_t n, uint64_t ver)
{
	unsigned char w[512], r[512];

	for (uint64_t l = 0; l < n; l++) {
		pattern(w, 512, l, ver);
		assert_int_equal(ntm_btt_read(b, 0, l, r), 0);
		assert_memory_equal(r, w, 512);
	}
}

/*
 * Opening [base, base + size) with each of @flags' sets must fail with
 * -EINVAL, a message naming arena @arena and its backup, and leave every
 * byte as it was.
 */
static void expect_refused(unsigned char *base, size_t size, unsigned arena,
			   const char *why)
{
	static const unsigned flags[] = { 0, NTM_BTT_READONLY, NTM_BTT_LAZY };
	unsigned char *copy = malloc(size);
	char want[32];

	assert_non_null(copy);
	memcpy(copy, base, size);
	snprintf(want, sizeof(want), "arena %u", arena);
	for (size_t f = 0; f < sizeof(flags) / sizeof(flags[0]); f++) {
		struct ntm_btt_config cfg = { .flags = flags[f] };
		struct ntm_btt *b = NULL;
		int ret = ntm_btt_open(&b, base, size, &cfg);

		if (ret != -EINVAL)
			fail_msg("%s (flags %#x): open returned %d, want "
				 "-EINVAL", why, flags[f], ret);
		assert_null(b);
		if (!strstr(ntm_errmsg(), want) ||
		    !strstr(ntm_errmsg(), "backup"))
			fail_msg("%s: message \"%s\" names neither %s nor the "
				 "backup", why, ntm_errmsg(), want);
		assert_memory_equal(base, copy, size);
	}
	free(copy);
}

/* Arena @k's backup info block at @p edited by @edit, checksum redone. */
static void edit_backup(unsigned char *p, void (*edit)(struct btt_info *))
{
	struct btt_info i;

	memcpy(&i, p, sizeof(i));
	edit(&i);
	i.checksum = htole64(btt_info_checksum(&i));
	memcpy(p, &i, sizeof(i));
}

static void backup_elsewhere(struct btt_info *i)
{
	i->infooff = htole64(le64toh(i->infooff) - 4096);
	i->flogoff = htole64(le64toh(i->flogoff) - 4096);
	i->mapoff = htole64(le64toh(i->mapoff) - 4096);
}

static void backup_past_end(struct btt_info *i)
{
	i->infooff = htole64(le64toh(i->infooff) + 4096);
}

static void backup_last(struct btt_info *i)
{
	i->nextoff = 0;
}

static void test_backup_position(void **state)
{
	size_t size = 2 * MiB + 4096;
	unsigned char *base = region(size);
	struct ntm_btt *b;
	struct btt_info i;
	uint64_t nlba, infooff;

	(void)state;
	/*
	 * The kernel's place: a BTT at 4096 of the namespace. At offset 0
	 * there is no info block, and the geometry of [0, size) puts arena
	 * 0's backup exactly on the BTT's backup (both end the range): it
	 * says it lies 4096 bytes earlier in its arena, so it describes
	 * another range.
	 */
	b = open_btt(base + 4096, size - 4096, 512, NTM_BTT_CREATE);
	nlba = ntm_btt_nlba(b);
	fill(b, 64, 1);
	ntm_btt_close(b);
	expect_refused(base, size, 0, "BTT at 4096 opened at 0");
	/* At its own offset it is whole. */
	b = open_btt(base + 4096, size - 4096, 0, 0);
	assert_int_equal(ntm_btt_nlba(b), nlba);
	expect_filled(b, 64, 1);
	assert_int_equal(ntm_btt_check(b), 0);
	ntm_btt_close(b);

	/* The other way: laid out at 0, opened at 4096 (to the same end). */
	memset(base, 0, size);
	b = open_btt(base, size, 512, NTM_BTT_CREATE);
	fill(b, 64, 2);
	ntm_btt_close(b);
	memcpy(&i, base, sizeof(i));
	infooff = le64toh(i.infooff);
	expect_refused(base + 4096, size - 4096, 0, "BTT at 0 opened at 4096");

	/* The primary lost, the backup sound and in place: repaired. */
	memset(base, 0, 4096);
	b = open_btt(base, size, 0, NTM_BTT_READONLY);
	expect_filled(b, 64, 2);
	assert_int_equal(ntm_btt_check(b), -EINVAL);	/* the primary */
	ntm_btt_close(b);
	b = open_btt(base, size, 0, 0);
	assert_false(ntm_btt_readonly(b));
	expect_filled(b, 64, 2);
	assert_int_equal(ntm_btt_check(b), 0);
	ntm_btt_close(b);
	assert_memory_equal(base, base + infooff, 4096);

	/*
	 * The primary lost and a sound backup that says it lies elsewhere
	 * in its arena: one 4096 bytes earlier, or past the range's end.
	 */
	memset(base, 0, 4096);
	edit_backup(base + infooff, backup_elsewhere);
	expect_refused(base, size, 0, "backup says it lies 4096 earlier");

	/* A fresh layout for the past-the-end claim. */
	memset(base, 0, size);
	ntm_btt_close(open_btt(base, size, 512, NTM_BTT_CREATE));
	memset(base, 0, 4096);
	edit_backup(base + infooff, backup_past_end);
	expect_refused(base, size, 0, "backup says it lies past the end");

	/*
	 * The last 4 KiB cut off (a libpmemblk pool): the primary alone is
	 * enough, the backup past the end is only reported by the check.
	 * Without the primary nothing describes the range: refused.
	 */
	memset(base, 0, size);
	b = open_btt(base, size, 512, NTM_BTT_CREATE);
	fill(b, 64, 3);
	ntm_btt_close(b);
	b = open_btt(base, size - 4096, 0, 0);
	assert_false(ntm_btt_readonly(b));
	expect_filled(b, 64, 3);
	assert_int_equal(ntm_btt_check(b), -EINVAL);
	assert_non_null(strstr(ntm_errmsg(), "past the end"));
	ntm_btt_close(b);
	memset(base, 0, 4096);
	assert_int_equal(ntm_btt_open(&b, base, size - 4096, NULL), -EINVAL);
	munmap(base, size);
}

/*
 * Two arenas (limits lowered): a backup alone must carry the nextoff the
 * range's geometry gives, so a crafted "last arena" backup in front of
 * another arena does not hide it.
 */
static void test_backup_nextoff(void **state)
{
	size_t size = 2 * MiB + 512 * 1024;
	unsigned char *base = region(size);
	unsigned char *copy = region(size);
	struct ntm_btt *b;
	struct btt_info i;
	uint64_t nlba, infooff;

	(void)state;
	ntm_btt_max_arena = 1 * MiB;
	ntm_btt_min_arena = 256 * 1024;
	b = open_btt(base, size, 512, NTM_BTT_CREATE);
	nlba = ntm_btt_nlba(b);
	fill(b, nlba, 4);
	ntm_btt_close(b);
	memcpy(copy, base, size);
	memcpy(&i, base, sizeof(i));
	infooff = le64toh(i.infooff);
	assert_int_equal(infooff + 4096, MiB);

	/* Arena 0's and arena 1's primaries lost: the backups restore them. */
	memset(base, 0, 4096);
	memset(base + MiB, 0, 4096);
	b = open_btt(base, size, 0, 0);
	assert_int_equal(ntm_btt_nlba(b), nlba);
	expect_filled(b, nlba, 4);
	assert_int_equal(ntm_btt_check(b), 0);
	ntm_btt_close(b);

	/* Arena 0's backup alone, saying it is the last arena. */
	memcpy(base, copy, size);
	memset(base, 0, 4096);
	edit_backup(base + infooff, backup_last);
	expect_refused(base, size, 0, "backup says last arena, another follows");

	/* The last arena's (2) backup alone, saying it lies earlier. */
	memcpy(base, copy, size);
	memcpy(&i, base + 2 * MiB, sizeof(i));
	memset(base + 2 * MiB, 0, 4096);
	edit_backup(base + 2 * MiB + le64toh(i.infooff), backup_elsewhere);
	expect_refused(base, size, 2, "arena 2's backup says it lies earlier");

	ntm_btt_max_arena = BTT_MAX_ARENA;
	ntm_btt_min_arena = BTT_MIN_ARENA;
	munmap(base, size);
	munmap(copy, size);
}

/* --- BTT 1.1 and 2.0 ------------------------------------------------------------ */

/* The version bytes (offset 52: major, minor, little-endian) at @p. */
static void expect_version_bytes(const unsigned char *p, unsigned major,
				 unsigned minor)
{
	const unsigned char want[4] = { (unsigned char)major, 0,
					(unsigned char)minor, 0 };

	assert_memory_equal(p + 52, want, 4);
}

/* Recompute the checksum of the info block at @p after an edit. */
static void set_major(unsigned char *p, uint16_t major, uint16_t minor)
{
	struct btt_info i;

	memcpy(&i, p, sizeof(i));
	i.major = htole16(major);
	i.minor = htole16(minor);
	i.checksum = htole64(btt_info_checksum(&i));
	memcpy(p, &i, sizeof(i));
}

static void test_version(void **state)
{
	size_t size = 2 * MiB + 512 * 1024;
	unsigned char *base = region(size);
	unsigned char *copy = region(size);
	struct ntm_btt_config cfg = { .lbasize = 512 };
	struct ntm_btt *b;
	struct btt_info i;
	uint64_t nlba, off;

	(void)state;
	/* Without the flag: 1.1, as PMDK writes. */
	b = open_btt(base, size, 512, NTM_BTT_CREATE);
	assert_int_equal(ntm_btt_version(b), NTM_BTT_VERSION(1, 1));
	ntm_btt_close(b);
	expect_version_bytes(base, 1, 1);
	/* NTM_BTT_V2 on a 1.1 BTT: refused, nothing written. */
	memcpy(copy, base, size);
	cfg.flags = NTM_BTT_V2;
	assert_int_equal(ntm_btt_open(&b, base, size, &cfg), -EINVAL);
	assert_non_null(strstr(ntm_errmsg(), "1.1"));
	assert_memory_equal(base, copy, size);

	/* 2.0 over three arenas: every info block and backup says 2.0. */
	ntm_btt_max_arena = 1 * MiB;
	ntm_btt_min_arena = 256 * 1024;
	memset(base, 0, size);
	b = open_btt(base, size, 512, NTM_BTT_CREATE | NTM_BTT_V2);
	assert_int_equal(ntm_btt_version(b), NTM_BTT_VERSION(2, 0));
	nlba = ntm_btt_nlba(b);
	fill(b, nlba, 5);
	assert_int_equal(ntm_btt_check(b), 0);
	ntm_btt_close(b);
	ntm_btt_max_arena = BTT_MAX_ARENA;
	ntm_btt_min_arena = BTT_MIN_ARENA;
	for (off = 0;;) {
		memcpy(&i, base + off, sizeof(i));
		expect_version_bytes(base + off, 2, 0);
		expect_version_bytes(base + off + le64toh(i.infooff), 2, 0);
		if (!i.nextoff)
			break;
		off += le64toh(i.nextoff);
	}
	assert_int_equal(off, 2 * MiB);
	/* Reopened with and without the flag: 2.0, every block as written. */
	for (int with = 0; with < 2; with++) {
		b = open_btt(base, size, 0, with ? NTM_BTT_V2 : 0);
		assert_int_equal(ntm_btt_version(b), NTM_BTT_VERSION(2, 0));
		assert_int_equal(ntm_btt_nlba(b), nlba);
		assert_false(ntm_btt_readonly(b));
		expect_filled(b, nlba, 5);
		assert_int_equal(ntm_btt_check(b), 0);
		ntm_btt_close(b);
	}
	/* The same geometry as 1.1: only the version bytes differ. */
	memcpy(copy, base, size);
	ntm_btt_max_arena = 1 * MiB;
	ntm_btt_min_arena = 256 * 1024;
	b = open_btt(copy, size, 512, NTM_BTT_CREATE);
	ntm_btt_close(b);
	ntm_btt_max_arena = BTT_MAX_ARENA;
	ntm_btt_min_arena = BTT_MIN_ARENA;
	memcpy(&i, copy, sizeof(i));
	{
		struct btt_info v2;

		memcpy(&v2, base, sizeof(v2));
		assert_int_equal(le32toh(v2.external_nlba),
				 le32toh(i.external_nlba));
		assert_int_equal(le64toh(v2.mapoff), le64toh(i.mapoff));
		assert_int_equal(le64toh(v2.flogoff), le64toh(i.flogoff));
		assert_int_equal(le64toh(v2.infooff), le64toh(i.infooff));
		assert_int_equal(le64toh(v2.nextoff), le64toh(i.nextoff));
	}

	/* An arena of another version than arena 0's: refused. */
	memcpy(copy, base, size);
	memcpy(&i, copy + MiB, sizeof(i));
	set_major(copy + MiB, 1, 1);
	set_major(copy + MiB + le64toh(i.infooff), 1, 1);
	assert_int_equal(ntm_btt_open(&b, copy, size, NULL), -EINVAL);
	assert_non_null(strstr(ntm_errmsg(), "arena 1"));
	assert_non_null(strstr(ntm_errmsg(), "version"));

	/* Lazy: 2.0 before the layout, and on media after the first write. */
	memset(base, 0, size);
	b = open_btt(base, size, 512, NTM_BTT_LAZY | NTM_BTT_V2);
	assert_int_equal(ntm_btt_version(b), NTM_BTT_VERSION(2, 0));
	for (size_t k = 0; k < size; k++)
		assert_int_equal(base[k], 0);
	fill(b, 4, 6);
	ntm_btt_close(b);
	expect_version_bytes(base, 2, 0);
	b = open_btt(base, size, 0, 0);
	assert_int_equal(ntm_btt_version(b), NTM_BTT_VERSION(2, 0));
	expect_filled(b, 4, 6);
	ntm_btt_close(b);
	assert_int_equal(ntm_btt_version(NULL), 0);
	munmap(base, size);
	munmap(copy, size);
}

/* --- corrupted pools ----------------------------------------------------------- */

#define CNLBA_MAX 8192
#define C_NFREE 8u

struct corrupt_ctx {
	unsigned char *image;	/* the sound pool */
	unsigned char *work;
	size_t size;
	uint64_t nlba;
	uint32_t ver[CNLBA_MAX];	/* the version each LBA holds */
};

/*
 * A sector read from a corrupted pool is acceptable if it is the LBA's
 * own data (any version of it: a stale flog slot may bring back the one
 * before) or zeros (a flipped zero flag); never another LBA's.
 */
static int sector_ok(const unsigned char *r, uint64_t lba)
{
	uint64_t stamp;

	for (unsigned i = 0; i < 512; i++)
		if (r[i])
			goto data;
	return 1;
data:
	memcpy(&stamp, r, 8);
	return stamp == lba;
}

/*
 * Open the corrupted copy; it must fail with a message or open, and
 * then read every LBA without another LBA's data. Return 0 failed open,
 * 1 read-only, 2 writable. @exact: every LBA must read its own current
 * version (flips that the checksums or the backup must absorb).
 */
static int open_corrupt(struct corrupt_ctx *c, bool exact, const char *what)
{
	struct ntm_btt_config cfg = { .lbasize = 512 };
	struct ntm_btt *b = NULL;
	unsigned char r[512], w[512];
	int ret = ntm_btt_open(&b, c->work, c->size, &cfg), kind;

	if (ret) {
		if (exact)
			fail_msg("%s: open failed: %s", what, ntm_errmsg());
		assert_int_equal(ret, -EINVAL);
		assert_true(strlen(ntm_errmsg()) > 10);
		return 0;
	}
	for (uint64_t l = 0; l < ntm_btt_nlba(b) && l < c->nlba; l++) {
		ret = ntm_btt_read(b, 0, l, r);
		if (exact) {
			pattern(w, 512, l, c->ver[l]);
			if (ret || memcmp(r, w, 512))
				fail_msg("%s: lba %llu wrong", what,
					 (unsigned long long)l);
			continue;
		}
		if (ret == -EIO)
			continue;
		assert_int_equal(ret, 0);
		if (!sector_ok(r, l))
			fail_msg("%s: lba %llu returned another LBA's data",
				 what, (unsigned long long)l);
	}
	/*
	 * Open reads only the info blocks and the flog; a flipped map entry
	 * is found by the scan before the arena's first access, so whether
	 * the BTT turned read-only is known after the first read.
	 */
	kind = ntm_btt_readonly(b) ? 1 : 2;
	if (exact && kind != 2)
		fail_msg("%s: read-only: %s", what, ntm_errmsg());
	/* What stays writable must be consistent: writes will trust it. */
	ret = ntm_btt_check(b);
	if ((exact || kind == 2) && ret)
		fail_msg("%s: writable but check fails: %s", what,
			 ntm_errmsg());
	if (kind == 1)
		assert_int_equal(ntm_btt_write(b, 0, 0, w), -EROFS);
	ntm_btt_close(b);
	return kind;
}

static void flip(struct corrupt_ctx *c, uint64_t off, unsigned bit)
{
	memcpy(c->work, c->image, c->size);
	c->work[off] ^= (unsigned char)(1u << bit);
}

/*
 * The scan checks a group of never-written map entries (zeros: each LBA
 * its own block) as one word of its bitmap. In a mostly unwritten pool,
 * an entry that points into such a group, from before it or after it,
 * must still be found: the arena turns read-only, the edited LBA fails
 * with -EIO (the unwritten one reads zeros, as it never held data) and
 * ntm_btt_check() refuses the pool. A pool
 * without the edit reads every LBA's own data and checks clean.
 */
static void test_scan_unwritten_groups(void **state)
{
	/* {lba whose entry is edited, block it is made to point at} */
	static const uint32_t edits[][2] = {
		{ 3, 640 },	/* into a later unwritten group */
		{ 1000, 64 },	/* into an earlier one (1000 is written) */
		{ 130, 129 },	/* within one group, both unwritten */
	};
	size_t size = 8 * MiB;
	unsigned char *image = region(size), *work = region(size);
	unsigned char w[512], r[512];
	struct ntm_btt *b = open_btt(image, size, 512, NTM_BTT_CREATE);
	uint64_t nlba = ntm_btt_nlba(b), mapoff;
	struct btt_info i;

	(void)state;
	assert_true(nlba > 4096);
	for (uint64_t l = 0; l < 8; l++) {
		pattern(w, 512, l, 1);
		assert_int_equal(ntm_btt_write(b, 0, l, w), 0);
	}
	pattern(w, 512, 1000, 1);
	assert_int_equal(ntm_btt_write(b, 0, 1000, w), 0);
	ntm_btt_close(b);
	memcpy(&i, image, sizeof(i));
	mapoff = le64toh(i.mapoff);

	memcpy(work, image, size);
	b = open_btt(work, size, 512, 0);
	for (uint64_t l = 0; l < nlba; l++) {
		assert_int_equal(ntm_btt_read(b, 0, l, r), 0);
		assert_true(sector_ok(r, l));
	}
	assert_false(ntm_btt_readonly(b));
	assert_int_equal(ntm_btt_check(b), 0);
	ntm_btt_close(b);

	for (size_t e = 0; e < sizeof(edits) / sizeof(edits[0]); e++) {
		uint32_t lba = edits[e][0], blk = edits[e][1];
		uint32_t v = htole32(blk | BTT_MAP_NORMAL);

		memcpy(work, image, size);
		memcpy(work + mapoff + 4ull * lba, &v, 4);
		b = open_btt(work, size, 512, 0);
		assert_int_equal(ntm_btt_read(b, 0, lba, r), -EIO);
		assert_true(ntm_btt_readonly(b));
		for (uint64_t l = 0; l < nlba; l++) {
			int ret = ntm_btt_read(b, 0, l, r);

			if (ret == -EIO)
				continue;
			assert_int_equal(ret, 0);
			if (!sector_ok(r, l))
				fail_msg("edit %zu: lba %llu returned another "
					 "LBA's data", e, (unsigned long long)l);
		}
		assert_int_equal(ntm_btt_check(b), -EINVAL);
		ntm_btt_close(b);

		/* The check alone, before any access, finds it too. */
		b = open_btt(work, size, 512, 0);
		assert_int_equal(ntm_btt_check(b), -EINVAL);
		assert_non_null(strstr(ntm_errmsg(), "referenced twice"));
		ntm_btt_close(b);
	}
	munmap(image, size);
	munmap(work, size);
}

static void test_corrupt(void **state)
{
	struct corrupt_ctx c = { .size = 2 * MiB };
	struct ntm_btt_config cfg = {
		.lbasize = 512, .nfree = C_NFREE, .nlanes = 2,
		.flags = NTM_BTT_CREATE,
	};
	struct ntm_btt *b;
	unsigned char w[512];
	struct btt_info i;
	uint64_t mapoff, flogoff, infooff, stats[3] = { 0 };
	/* Info block fields: offset, and whether a flip must be absorbed. */
	static const unsigned fields[] = {
		0, 13, 15, 16, 31, 32, 47, 48, 52, 54, 56, 60, 64, 68, 72,
		76, 80, 88, 96, 104, 112, 119, 120, 2000, 4087, 4088, 4095,
	};
	char what[96];
	uint64_t seed = 42;

	(void)state;
	c.image = region(c.size);
	c.work = region(c.size);
	assert_int_equal(ntm_btt_open(&b, c.image, c.size, &cfg), 0);
	c.nlba = ntm_btt_nlba(b);
	assert_true(c.nlba <= CNLBA_MAX);
	/* Every LBA written, some twice, some zeroed, one with an error:
	 * every flog entry used, map entries of every kind. */
	for (uint64_t l = 0; l < c.nlba; l++) {
		c.ver[l] = 1 + (l % 5 == 0);
		for (uint32_t v = 1; v <= c.ver[l]; v++) {
			pattern(w, 512, l, v);
			assert_int_equal(ntm_btt_write(b, (unsigned)(l % 2), l,
						       w), 0);
		}
	}
	ntm_btt_close(b);
	memcpy(&i, c.image, sizeof(i));
	mapoff = le64toh(i.mapoff);
	flogoff = le64toh(i.flogoff);
	infooff = le64toh(i.infooff);

	/* Primary or backup alone: the other one repairs it, data intact. */
	for (size_t f = 0; f < sizeof(fields) / sizeof(fields[0]); f++)
		for (unsigned bit = 0; bit < 8; bit += 7) {
			snprintf(what, sizeof(what), "info byte %u bit %u",
				 fields[f], bit);
			flip(&c, fields[f], bit);
			open_corrupt(&c, true, what);
			/* Repaired on media: the primary equals the backup. */
			assert_memory_equal(c.work, c.work + infooff, 4096);
			snprintf(what, sizeof(what), "backup byte %u bit %u",
				 fields[f], bit);
			flip(&c, infooff + fields[f], bit);
			open_corrupt(&c, true, what);
			assert_memory_equal(c.work, c.work + infooff, 4096);
			/* Both: refused, with a message naming the info block. */
			flip(&c, fields[f], bit);
			c.work[infooff + fields[f]] ^= (unsigned char)(1u << bit);
			assert_int_equal(ntm_btt_open(&b, c.work, c.size, NULL),
					 -EINVAL);
			assert_non_null(strstr(ntm_errmsg(), "info block"));
		}

	/* Map entries: every bit of a few entries, then random ones. */
	for (uint64_t l = 0; l < c.nlba; l += c.nlba / 7) {
		for (unsigned bit = 0; bit < 32; bit++) {
			snprintf(what, sizeof(what), "map %llu bit %u",
				 (unsigned long long)l, bit);
			flip(&c, mapoff + 4 * l + bit / 8, bit % 8);
			stats[open_corrupt(&c, false, what)]++;
		}
	}
	/* Flog: every bit of every field of both slots of a few entries. */
	for (unsigned e = 0; e < C_NFREE; e += 3)
		for (unsigned byte = 0; byte < 32; byte++)
			for (unsigned bit = 0; bit < 8; bit++) {
				snprintf(what, sizeof(what), "flog %u byte %u "
					 "bit %u", e, byte, bit);
				flip(&c, flogoff + 64 * e + byte, bit);
				stats[open_corrupt(&c, false, what)]++;
			}
	/* Random flips anywhere in the metadata. */
	for (int n = 0; n < 1500; n++) {
		uint64_t x = tu_next(&seed);
		uint64_t off;

		switch (n % 3) {
		case 0:
			off = mapoff + x % (c.nlba * 4);
			break;
		case 1:
			off = flogoff + x % (C_NFREE * 64);
			break;
		default:
			off = x % 2 ? x % 4096 : infooff + x % 4096;
			break;
		}
		snprintf(what, sizeof(what), "random flip at %llu",
			 (unsigned long long)off);
		flip(&c, off, (unsigned)(x >> 40) % 8);
		stats[open_corrupt(&c, false, what)]++;
	}
	printf("corrupt: %llu refused, %llu read-only, %llu writable "
	       "(flag flips and stale flog slots the format cannot see)\n",
	       (unsigned long long)stats[0], (unsigned long long)stats[1],
	       (unsigned long long)stats[2]);
	munmap(c.image, c.size);
	munmap(c.work, c.size);
}

/* --- threads: no mixed sector ----------------------------------------------- */

#define T_THREADS 4
#define T_LBAS 16
#define T_OPS 20000

/*
 * Operations per thread of the threaded tests: T_OPS, or
 * NTMEM_BTT_THREAD_OPS (the sanitizer builds run fewer: under TSan the
 * three tests took 23 s of a busy machine, and a race shows in the first
 * thousand operations as in the last).
 */
static unsigned thread_ops(void)
{
	const char *env = getenv("NTMEM_BTT_THREAD_OPS");
	unsigned n = env && *env ? (unsigned)atoi(env) : T_OPS;

	return n ? n : T_OPS;
}

struct tctx {
	struct ntm_btt *b;
	int id;
	uint64_t reads, writes, mixed, errors;
};

/* A sector is whole when it equals the pattern its own stamp names. */
static int sector_whole(const unsigned char *r, uint64_t lba)
{
	unsigned char want[512];
	uint64_t stamp, ver;

	memcpy(&stamp, r, 8);
	memcpy(&ver, r + 8, 8);
	if (stamp != lba)
		return 0;
	pattern(want, 512, lba, ver);
	return !memcmp(want, r, 512);
}

static void *tworker(void *arg)
{
	struct tctx *t = arg;
	uint64_t seed = 0x1234 + (uint64_t)t->id, ver = (uint64_t)t->id << 40;
	unsigned char buf[512];

	for (unsigned i = 0, ops = thread_ops(); i < ops; i++) {
		uint64_t x = tu_next(&seed);
		uint64_t lba = x % T_LBAS;
		unsigned lane = ntm_btt_lane_get(t->b);

		if (x & (1ull << 40)) {
			pattern(buf, 512, lba, ++ver);
			if (ntm_btt_write(t->b, lane, lba, buf))
				t->errors++;
			t->writes++;
		} else {
			if (ntm_btt_read(t->b, lane, lba, buf))
				t->errors++;
			else if (!sector_whole(buf, lba))
				t->mixed++;
			t->reads++;
		}
		ntm_btt_lane_put(t->b, lane);
	}
	return NULL;
}

static void test_threads(void **state)
{
	size_t size = 2 * MiB;
	unsigned char *base = region(size);
	struct ntm_btt_config cfg = {
		.lbasize = 512, .nlanes = T_THREADS, .flags = NTM_BTT_CREATE,
	};
	struct ntm_btt *b;
	struct tctx t[T_THREADS];
	pthread_t th[T_THREADS];
	uint64_t reads = 0, writes = 0, mixed = 0, errors = 0;
	unsigned char buf[512];

	(void)state;
	assert_int_equal(ntm_btt_open(&b, base, size, &cfg), 0);
	assert_int_equal(ntm_btt_nlanes(b), T_THREADS);
	for (uint64_t l = 0; l < T_LBAS; l++) {
		pattern(buf, 512, l, 0);
		assert_int_equal(ntm_btt_write(b, 0, l, buf), 0);
	}
	for (int i = 0; i < T_THREADS; i++) {
		t[i] = (struct tctx){ .b = b, .id = i + 1 };
		assert_int_equal(pthread_create(&th[i], NULL, tworker, &t[i]),
				 0);
	}
	for (int i = 0; i < T_THREADS; i++) {
		pthread_join(th[i], NULL);
		reads += t[i].reads;
		writes += t[i].writes;
		mixed += t[i].mixed;
		errors += t[i].errors;
	}
	printf("threads: %d threads, %llu writes and %llu reads of %d "
	       "LBAs, %llu mixed sectors, %llu errors\n", T_THREADS,
	       (unsigned long long)writes, (unsigned long long)reads, T_LBAS,
	       (unsigned long long)mixed, (unsigned long long)errors);
	assert_int_equal(mixed, 0);
	assert_int_equal(errors, 0);
	assert_int_equal(ntm_btt_check(b), 0);
	ntm_btt_close(b);
	/* Reopen: every block accounted for, every sector whole. */
	b = open_btt(base, size, 512, 0);
	assert_int_equal(ntm_btt_check(b), 0);
	for (uint64_t l = 0; l < T_LBAS; l++) {
		assert_int_equal(ntm_btt_read(b, 0, l, buf), 0);
		assert_true(sector_whole(buf, l));
	}
	ntm_btt_close(b);
	munmap(base, size);
}

/*
 * The first writes to a lazy BTT (PMDK's fresh pool) made by several
 * threads at once: one of them lays the BTT out while the others check
 * their block numbers, read zeros or wait for the layout. None may see
 * the BTT without blocks meanwhile (the layout's read-back rebuilt the
 * block count from 0, and tens of such writes failed "out of range" in
 * one round of three), and every thread's sector reads back.
 */
#define LZ_THREADS 8
#define LZ_ROUNDS 150

struct lzctx {
	struct ntm_btt *b;
	pthread_barrier_t *start;
	atomic_bool *laid_out;	/* thread 0's write has returned */
	uint64_t lba, nlba;
	unsigned failed, zero_nlba, wrong;
};

/*
 * Thread 0 writes first, and lays the BTT out; the others check and
 * read their blocks all the while (until its write returns), then write
 * and read them back.
 */
static void *lzworker(void *arg)
{
	struct lzctx *t = arg;
	unsigned char w[512], r[512];
	unsigned lane;

	pattern(w, 512, t->lba, 1);
	pthread_barrier_wait(t->start);
	if (t->lba != 0) {
		while (!atomic_load(t->laid_out)) {
			lane = ntm_btt_lane_get(t->b);
			if (ntm_btt_nlba(t->b) != t->nlba)
				t->zero_nlba++;
			if (ntm_btt_read(t->b, lane, t->lba, r))
				t->failed++;
			ntm_btt_lane_put(t->b, lane);
			/* Seven spinning threads on two CPUs: let it run. */
			sched_yield();
		}
	}
	lane = ntm_btt_lane_get(t->b);
	if (ntm_btt_write(t->b, lane, t->lba, w))
		t->failed++;
	else if (ntm_btt_read(t->b, lane, t->lba, r))
		t->failed++;
	else if (memcmp(r, w, 512))
		t->wrong++;
	ntm_btt_lane_put(t->b, lane);
	if (t->lba == 0)
		atomic_store(t->laid_out, true);
	return NULL;
}

static void test_threads_lazy_first_write(void **state)
{
	size_t size = 8 * MiB;
	unsigned failed = 0, zero_nlba = 0, wrong = 0;

	(void)state;
	/*
	 * Eight arenas of 1 MiB: the layout's read-back loads them one by
	 * one, a window the other threads' checks can fall into.
	 */
	ntm_btt_max_arena = 1 * MiB;
	for (int round = 0; round < LZ_ROUNDS; round++) {
		unsigned char *base = region(size);
		struct ntm_btt_config cfg = {
			.lbasize = 512, .nlanes = LZ_THREADS,
			.flags = NTM_BTT_CREATE | NTM_BTT_LAZY,
		};
		struct ntm_btt *b;
		struct lzctx t[LZ_THREADS];
		pthread_t th[LZ_THREADS];
		pthread_barrier_t start;
		atomic_bool laid_out = false;

		assert_int_equal(ntm_btt_open(&b, base, size, &cfg), 0);

		assert_int_equal(pthread_barrier_init(&start, NULL,
						      LZ_THREADS), 0);
		for (int i = 0; i < LZ_THREADS; i++) {
			t[i] = (struct lzctx){ .b = b, .start = &start,
					       .laid_out = &laid_out,
					       .lba = (uint64_t)i * 97,
					       .nlba = ntm_btt_nlba(b) };
			assert_int_equal(pthread_create(&th[i], NULL,
							lzworker, &t[i]), 0);
		}
		for (int i = 0; i < LZ_THREADS; i++) {
			pthread_join(th[i], NULL);
			failed += t[i].failed;
			zero_nlba += t[i].zero_nlba;
			wrong += t[i].wrong;
		}
		pthread_barrier_destroy(&start);
		ntm_btt_close(b);
		munmap(base, size);
	}
	ntm_btt_max_arena = BTT_MAX_ARENA;
	printf("lazy first writes: %d rounds of %d threads, %u calls "
	       "failed, %u saw another block count, %u sectors wrong\n",
	       LZ_ROUNDS, LZ_THREADS, failed, zero_nlba, wrong);
	assert_int_equal(failed, 0);
	assert_int_equal(zero_nlba, 0);
	assert_int_equal(wrong, 0);
}

/*
 * A persist that fails once, from its @fail_at-th call on, while every
 * lane writes: one writer's failure turns the BTT read-only for all of
 * them. Each write returns 0, -EIO or -EROFS, none after the failure
 * succeeds, and what was written before it reads back whole. Under
 * ThreadSanitizer (the threads suite) this is where the read-only flag,
 * set by the failing lane and read by the others, must not race.
 */
struct racing_persist {
	atomic_uint calls;
	unsigned fail_at;
};

static int racing_persist(void *arg, const void *p, size_t n)
{
	struct racing_persist *rp = arg;

	if (atomic_fetch_add(&rp->calls, 1) + 1 >= rp->fail_at)
		return -EIO;
	ntm_persist(p, n);
	return 0;
}

struct rfctx {
	struct ntm_btt *b;
	unsigned lane;
	int first_error, after_error_ok, bad_status;
};

static void *rfworker(void *arg)
{
	struct rfctx *t = arg;
	unsigned char buf[512];

	for (int i = 0; i < 200; i++) {
		uint64_t lba = t->lane * 4 + (unsigned)i % 4;
		int ret;

		pattern(buf, 512, lba, (uint64_t)i + 1);
		ret = ntm_btt_write(t->b, t->lane, lba, buf);
		if (ret != 0 && ret != -EIO && ret != -EROFS)
			t->bad_status = ret;
		if (ret && !t->first_error)
			t->first_error = ret;
		else if (!ret && t->first_error)
			t->after_error_ok++;
	}
	return NULL;
}

static void test_threads_persist_failure(void **state)
{
	size_t size = 2 * MiB;
	unsigned char *base = region(size);
	struct racing_persist rp = { 0, ~0u };
	struct ntm_btt_config cfg = {
		.lbasize = 512, .nlanes = T_THREADS, .flags = NTM_BTT_CREATE,
		.persist = racing_persist, .persist_arg = &rp,
	};
	struct ntm_btt *b;
	struct rfctx t[T_THREADS];
	pthread_t th[T_THREADS];
	unsigned char buf[512];

	(void)state;
	assert_int_equal(ntm_btt_open(&b, base, size, &cfg), 0);
	for (uint64_t l = 0; l < 4 * T_THREADS; l++) {
		pattern(buf, 512, l, 0);
		assert_int_equal(ntm_btt_write(b, 0, l, buf), 0);
	}
	/* Fail somewhere in the middle of the threads' writes. */
	rp.fail_at = atomic_load(&rp.calls) + 300;
	for (int i = 0; i < T_THREADS; i++) {
		t[i] = (struct rfctx){ .b = b, .lane = (unsigned)i };
		assert_int_equal(pthread_create(&th[i], NULL, rfworker, &t[i]), 0);
	}
	for (int i = 0; i < T_THREADS; i++) {
		assert_int_equal(pthread_join(th[i], NULL), 0);
		assert_int_equal(t[i].bad_status, 0);
		assert_int_equal(t[i].after_error_ok, 0);
		assert_int_not_equal(t[i].first_error, 0);
	}
	assert_true(ntm_btt_readonly(b));
	assert_int_equal(ntm_btt_write(b, 0, 0, buf), -EROFS);
	for (uint64_t l = 0; l < 4 * T_THREADS; l++) {
		int ret = ntm_btt_read(b, 0, l, buf);

		/* Whole sectors only: the old one or a completed write. */
		if (ret != 0 || !sector_whole(buf, l))
			fail_msg("lba %llu: read %d, %s", (unsigned long long)l,
				 ret, ret ? ntm_errmsg() : "a torn sector");
	}
	ntm_btt_close(b);
	munmap(base, size);
}

/*
 * Readers of one LBA while writers keep moving it: a writer rewrites LBA
 * B (versions in order, under a test lock, so the map's order is the
 * versions' order) and then one of its own LBAs, which takes the block
 * B's write just freed. A reader that copied a block after it was handed
 * out again would see another LBA's stamp, a torn pattern or an older
 * version; the read-tracking table must make every read of B whole and
 * no older than the one before it on the same reader.
 */
#define RO_WRITERS 2
#define RO_READERS 2
#define RO_LBA 0
/* 4 KiB: a longer copy leaves a reader more time to see a reuse. */
#define RO_LBASIZE 4096

struct ro_shared {
	struct ntm_btt *b;
	pthread_mutex_t order;	/* B's versions go to the map in order */
	uint64_t bver;		/* B's last version, under order */
	atomic_bool done;
};

struct ro_ctx {
	struct ro_shared *s;
	unsigned lane;
	uint64_t reads, errors, bad_stamp, torn, backwards;
	uint64_t last, bad_ver;	/* the first backwards step */
};

static void *ro_writer(void *arg)
{
	struct ro_ctx *t = arg;
	struct ro_shared *s = t->s;
	static __thread unsigned char buf[RO_LBASIZE];

	for (uint64_t i = 0, ops = thread_ops(); i < ops; i++) {
		/* LBAs of its own, never B: B's freed block is reused here. */
		uint64_t own = 1 + t->lane * 4 + i % 4;

		pthread_mutex_lock(&s->order);
		pattern(buf, RO_LBASIZE, RO_LBA, ++s->bver);
		if (ntm_btt_write(s->b, t->lane, RO_LBA, buf))
			t->errors++;
		pthread_mutex_unlock(&s->order);
		pattern(buf, RO_LBASIZE, own, i + 1);
		if (ntm_btt_write(s->b, t->lane, own, buf))
			t->errors++;
	}
	return NULL;
}

static void *ro_reader(void *arg)
{
	struct ro_ctx *t = arg;
	static __thread unsigned char buf[RO_LBASIZE], want[RO_LBASIZE];

	/* At least one read after the writers are done, however scheduled. */
	for (bool last_round = false; !last_round;) {
		uint64_t stamp, ver;

		last_round = atomic_load(&t->s->done);
		if (ntm_btt_read(t->s->b, t->lane, RO_LBA, buf)) {
			t->errors++;
			continue;
		}
		t->reads++;
		memcpy(&stamp, buf, 8);
		memcpy(&ver, buf + 8, 8);
		pattern(want, RO_LBASIZE, RO_LBA, ver);
		if (stamp != RO_LBA)
			t->bad_stamp++;
		else if (memcmp(buf, want, RO_LBASIZE))
			t->torn++;
		else if (ver < t->last) {
			if (!t->backwards++)
				t->bad_ver = ver;
		} else
			t->last = ver;
	}
	return NULL;
}

static void test_threads_reader_order(void **state)
{
	size_t size = 8 * MiB;
	unsigned char *base = region(size);
	struct ntm_btt_config cfg = {
		.lbasize = RO_LBASIZE, .nlanes = RO_WRITERS + RO_READERS,
		.flags = NTM_BTT_CREATE,
	};
	struct ro_shared s = { .order = PTHREAD_MUTEX_INITIALIZER };
	struct ro_ctx t[RO_WRITERS + RO_READERS];
	pthread_t th[RO_WRITERS + RO_READERS];
	static unsigned char buf[RO_LBASIZE];
	uint64_t reads = 0;

	(void)state;
	assert_int_equal(ntm_btt_open(&s.b, base, size, &cfg), 0);
	assert_int_equal(ntm_btt_nlanes(s.b), RO_WRITERS + RO_READERS);
	pattern(buf, RO_LBASIZE, RO_LBA, 0);
	assert_int_equal(ntm_btt_write(s.b, 0, RO_LBA, buf), 0);
	atomic_init(&s.done, false);
	/* Lanes 0..RO_WRITERS-1 write, the others read. */
	for (unsigned i = 0; i < RO_WRITERS + RO_READERS; i++) {
		t[i] = (struct ro_ctx){ .s = &s, .lane = i };
		assert_int_equal(pthread_create(&th[i], NULL, i < RO_WRITERS ?
						ro_writer : ro_reader, &t[i]), 0);
	}
	for (unsigned i = 0; i < RO_WRITERS; i++) {
		assert_int_equal(pthread_join(th[i], NULL), 0);
		assert_int_equal(t[i].errors, 0);
	}
	atomic_store(&s.done, true);
	for (unsigned i = RO_WRITERS; i < RO_WRITERS + RO_READERS; i++) {
		struct ro_ctx *r = &t[i];

		assert_int_equal(pthread_join(th[i], NULL), 0);
		reads += r->reads;
		if (r->errors || r->bad_stamp || r->torn || r->backwards)
			fail_msg("reader %u: %llu reads, %llu errors, %llu of "
				 "another LBA, %llu torn, %llu older than the "
				 "one before (first: %llu after %llu)", i,
				 (unsigned long long)r->reads,
				 (unsigned long long)r->errors,
				 (unsigned long long)r->bad_stamp,
				 (unsigned long long)r->torn,
				 (unsigned long long)r->backwards,
				 (unsigned long long)r->bad_ver,
				 (unsigned long long)r->last);
		/* The last read came after the last write. */
		assert_int_equal(r->last, s.bver);
	}
	printf("reader order: %d writers, %llu writes of lba %d, %llu reads "
	       "of it, all whole and in order\n", RO_WRITERS,
	       (unsigned long long)s.bver, RO_LBA, (unsigned long long)reads);
	assert_int_equal(ntm_btt_check(s.b), 0);
	ntm_btt_close(s.b);
	munmap(base, size);
}

/* --- a writer killed with SIGKILL ------------------------------------------- */

#define K_LBAS 64

static void kill_child(unsigned char *base, size_t size, uint64_t seed)
{
	struct ntm_btt_config cfg = { .lbasize = 512, .nlanes = 1 };
	struct ntm_btt *b;
	unsigned char buf[512];

	if (ntm_btt_open(&b, base, size, &cfg))
		_exit(3);
	for (;;) {
		uint64_t x = tu_next(&seed);
		uint64_t lba = x % K_LBAS;

		pattern(buf, 512, lba, x);
		if (ntm_btt_write(b, 0, lba, buf))
			_exit(4);
	}
}

static void test_kill(void **state)
{
	const char *env = getenv("NTMEM_BTT_KILLS");
	unsigned kills = env ? (unsigned)atoi(env) : 2000, clean = 0;
	size_t size = 2 * MiB;
	char path[] = "/dev/shm/ntmem-btt-kill-XXXXXX";
	int fd = mkstemp(path);
	unsigned char *base, buf[512];
	struct ntm_btt *b;
	uint64_t seed = 77;
	struct timespec t0, t1;

	(void)state;
	if (fd < 0) {
		skip();
		return;
	}
	unlink(path);
	assert_int_equal(ftruncate(fd, (off_t)size), 0);
	base = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	assert_true(base != MAP_FAILED);
	close(fd);
	b = open_btt(base, size, 512, NTM_BTT_CREATE);
	ntm_btt_close(b);
	clock_gettime(CLOCK_MONOTONIC, &t0);
	for (unsigned k = 0; k < kills; k++) {
		uint64_t x = tu_next(&seed);
		pid_t pid = fork();
		int st;

		assert_true(pid >= 0);
		if (pid == 0)
			kill_child(base, size, x | 1);
		/* 0-1000 us: inside open (its flog replay) now and then,
		 * mostly inside writes. */
		struct timespec d = { 0, (long)(x % 1000) * 1000 };

		nanosleep(&d, NULL);
		kill(pid, SIGKILL);
		assert_int_equal(waitpid(pid, &st, 0), pid);
		if (WIFEXITED(st))
			fail_msg("kill %u: the writer exited %d", k,
				 WEXITSTATUS(st));
		b = open_btt(base, size, 512, 0);
		assert_false(ntm_btt_readonly(b));
		if (ntm_btt_check(b))
			fail_msg("kill %u: %s", k, ntm_errmsg());
		for (uint64_t l = 0; l < K_LBAS; l++) {
			uint64_t stamp, ver;

			assert_int_equal(ntm_btt_read(b, 0, l, buf), 0);
			memcpy(&ver, buf + 8, 8);
			memcpy(&stamp, buf, 8);
			/* Zeros (never written) or a whole sector the
			 * writer wrote to this LBA (version x, x % 64 == l). */
			if (stamp == 0 && ver == 0 && sector_ok(buf, 1))
				continue;
			if (!sector_whole(buf, l) || ver % K_LBAS != l)
				fail_msg("kill %u: lba %llu is not a value "
					 "written to it", k,
					 (unsigned long long)l);
		}
		clean++;
		ntm_btt_close(b);
	}
	clock_gettime(CLOCK_MONOTONIC, &t1);
	printf("kill: %u writers killed with SIGKILL, %u reopened clean, "
	       "%.1f s\n", kills, clean,
	       (double)(t1.tv_sec - t0.tv_sec) +
		       (double)(t1.tv_nsec - t0.tv_nsec) / 1e9);
	munmap(base, size);
}

/* An argument names the tests to run (the threads suite runs
 * test_threads* under ThreadSanitizer). */
int main(int argc, char **argv)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_layout_facts),
		cmocka_unit_test(test_roundtrip_512),
		cmocka_unit_test(test_roundtrip_520),
		cmocka_unit_test(test_roundtrip_4096),
		cmocka_unit_test(test_zero_error_flags),
		cmocka_unit_test(test_persist_failure),
		cmocka_unit_test(test_persist_failure_message),
		cmocka_unit_test(test_args),
		cmocka_unit_test(test_config_reserved),
		cmocka_unit_test(test_lazy),
		cmocka_unit_test(test_lazy_create),
		cmocka_unit_test(test_zeroed_skips_map),
		cmocka_unit_test(test_open_skips_map),
		cmocka_unit_test(test_two_arenas),
		cmocka_unit_test(test_backup_position),
		cmocka_unit_test(test_backup_nextoff),
		cmocka_unit_test(test_version),
		cmocka_unit_test(test_corrupt),
		cmocka_unit_test(test_scan_unwritten_groups),
		cmocka_unit_test(test_threads),
		cmocka_unit_test(test_threads_persist_failure),
		cmocka_unit_test(test_threads_reader_order),
		cmocka_unit_test(test_threads_lazy_first_write),
		cmocka_unit_test(test_kill),
	};

	if (argc > 1)
		cmocka_set_test_filter(argv[1]);
	return cmocka_run_group_tests(tests, NULL, NULL);
}
