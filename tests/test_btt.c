// SPDX-License-Identifier: MIT
/*
 * test_btt.c - the BTT (ntmem/btt.h): round trips at every LBA for 512,
 * 520 and 4096-byte blocks, reopen, the zero and error flags, lazy
 * layout, two arenas (arena limit lowered through the test hook), the
 * on-media facts (signature, checksum, geometry), argument errors,
 * corrupted pools (bit flips in info blocks, backup, map and flog: each
 * opens read-only or fails with a message, never crashes, never returns
 * another LBA's data), threads racing writers and readers on overlapping
 * LBAs (no mixed sector), and a writer killed with SIGKILL over and over
 * on a /dev/shm namespace (every sector one of the values written).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
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
#include "ntmem.h"
#include "ntmem/btt.h"

#define MiB (1ull << 20)

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
	assert_int_equal(le16toh(i.major), 2);
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
	assert_int_equal(ntm_btt_write(b, 1, 5, w), 0);
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

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_layout_facts),
		cmocka_unit_test(test_roundtrip_512),
		cmocka_unit_test(test_roundtrip_520),
		cmocka_unit_test(test_roundtrip_4096),
		cmocka_unit_test(test_zero_error_flags),
		cmocka_unit_test(test_args),
		cmocka_unit_test(test_lazy),
		cmocka_unit_test(test_two_arenas),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
