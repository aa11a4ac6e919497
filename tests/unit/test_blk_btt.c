// SPDX-License-Identifier: MIT
/*
 * test_blk_btt.c - the block device in BTT mode (ntm_blk_config.btt):
 * every sector through ntm_btt_read()/ntm_btt_write().
 *
 *   roundtrip_*   512- and 4096-byte sectors over a 16 MiB anonymous
 *                 namespace: the device is the BTT's external blocks (its
 *                 lbasize, fewer bytes than the namespace); distinct data
 *                 in every sector reads back one by one and as one
 *                 multi-sector request; vectored requests whose sectors
 *                 straddle vectors (the bounce path) read back with
 *                 another segmentation; rejected requests as in raw mode.
 *   reopen        an emulated namespace in /dev/shm: written, closed,
 *                 reopened with sector_size 0 (the BTT's 4096 is taken)
 *                 and the data is there; sector_size 512 against it is
 *                 -EINVAL; a namespace that holds no BTT does not open as
 *                 one; a read-only namespace opens and reads, writes -EROFS.
 *   badblocks     the list applies on top, in 512-byte units of the
 *                 external device: a read touching one is -EIO, a write
 *                 clears exactly the sectors it covers.
 *   options       hardened mode with a BTT is -EINVAL; ntm_blk_flush() is 0.
 *   threads       two writers on disjoint sectors (two lanes), rounds of
 *                 distinct data: every sector holds its last round's.
 *   two_namespaces  two emulated namespaces in /dev/shm, a BTT laid out
 *                 on each by its own thread at once: each file is
 *                 allocated whole (the BTT reserves its namespace, passed
 *                 by handle), and each holds its own thread's data.
 *   race          one writer rewriting one 4 KiB sector (every 8-byte word
 *                 the write's generation), one reader reading it 200,000
 *                 times: on the raw device the reader sees mixed sectors
 *                 (printed, not asserted: it depends on scheduling); with
 *                 a BTT it must see none.
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
#include <sys/stat.h>
#include <unistd.h>

#include <ntmem.h>

#include "../lib/testutil.h"

#define NS_SIZE (16u << 20)
#define RACE_READS 200000

static struct ntm_blk *open_btt(struct ntm_ns *ns, unsigned sector, bool create)
{
	struct ntm_blk_config c = { .sector_size = sector, .btt = true,
				    .btt_create = create };
	struct ntm_blk *b = NULL;
	int ret = ntm_blk_open(&b, ns, &c);

	if (ret)
		fprintf(stderr, "ntm_blk_open: %s\n", ntm_errmsg());
	assert_int_equal(ret, 0);
	return b;
}

static void roundtrip(unsigned sector)
{
	struct ntm_ns *ns;
	struct ntm_blk *b;
	uint64_t size, n;
	unsigned char *all, *back, *one;

	assert_int_equal(ntm_ns_anon(&ns, NS_SIZE, 4096), 0);
	b = open_btt(ns, sector, true);
	assert_int_equal(ntm_blk_sector_size(b), sector);
	size = ntm_blk_size(b);
	n = size / sector;
	assert_true(size > 0 && size < NS_SIZE && size % sector == 0);
	all = malloc(size);
	back = malloc(size);
	one = malloc(sector);
	assert_non_null(all);
	assert_non_null(back);
	assert_non_null(one);
	tu_fill_random(all, size, sector);
	for (uint64_t s = 0; s < n; s++)
		assert_int_equal(ntm_blk_write(b, all + s * sector, sector,
					       s * sector, 0), sector);
	for (uint64_t s = 0; s < n; s += 7) {
		assert_int_equal(ntm_blk_read(b, one, sector, s * sector), sector);
		assert_memory_equal(one, all + s * sector, sector);
	}
	assert_int_equal(ntm_blk_read(b, back, size, 0), (ssize_t)size);
	assert_memory_equal(back, all, size);

	/* Vectors that split sectors: 1 + (sector - 1), then 3 x 1.5 sectors. */
	{
		size_t len = 4 * (size_t)sector + 2 * sector;
		unsigned char *src = malloc(len), *dst = malloc(len);
		struct iovec wv[] = {
			{ src, 1 }, { src + 1, 0 }, { src + 1, sector - 1 },
			{ src + sector, 3 * sector / 2 },
			{ src + 5 * sector / 2, 3 * sector / 2 },
			{ src + 4 * sector, 2 * sector },
		};
		struct iovec rv[] = {
			{ dst, sector / 2 }, { dst + sector / 2, len - sector },
			{ dst + len - sector / 2, sector / 2 },
		};

		assert_non_null(src);
		assert_non_null(dst);
		tu_fill_random(src, len, 99);
		assert_int_equal(ntm_blk_writev(b, wv, 6, 3 * (uint64_t)sector,
						NTM_BLK_FUA), (ssize_t)len);
		assert_int_equal(ntm_blk_readv(b, rv, 3, 3 * (uint64_t)sector),
				 (ssize_t)len);
		assert_memory_equal(dst, src, len);
		free(src);
		free(dst);
	}

	/* Rejected as in raw mode, before anything reaches the BTT. */
	assert_int_equal(ntm_blk_read(b, one, sector, size), -ERANGE);
	assert_int_equal(ntm_blk_write(b, one, sector, size, 0), -ERANGE);
	if (sector > 512)
		assert_int_equal(ntm_blk_write(b, one, sector, 512, 0), -EINVAL);
	assert_int_equal(ntm_blk_read(b, one, sector / 2, 0), -EINVAL);
	assert_int_equal(ntm_blk_write(b, one, sector, 0, 1u << 7), -EINVAL);
	free(all);
	free(back);
	free(one);
	ntm_blk_close(b);
	ntm_ns_close(ns);
}

static void roundtrip_512(void **state)
{
	(void)state;
	roundtrip(512);
}

static void roundtrip_4096(void **state)
{
	(void)state;
	roundtrip(4096);
}

/* A fresh directory in /dev/shm (tmpfs: the page cache is the medium). */
static char *shm_dir(void)
{
	char *dir = strdup("/dev/shm/ntmem-test-blk-btt-XXXXXX");

	assert_non_null(dir);
	if (!mkdtemp(dir)) {
		free(dir);
		return NULL;
	}
	return dir;
}

static void rm_dir(char *dir, const char *path)
{
	char bb[512];

	snprintf(bb, sizeof(bb), "%s.badblocks", path);
	unlink(path);
	unlink(bb);
	rmdir(dir);
	free(dir);
}

static void reopen(void **state)
{
	char *dir = shm_dir(), path[256];
	struct ntm_blk_config c512 = { .sector_size = 512, .btt = true };
	struct ntm_blk_config plain = { .btt = true };
	struct ntm_ns *ns;
	struct ntm_blk *b;
	unsigned char *data, *back;
	uint64_t size;

	(void)state;
	if (!dir)
		skip();
	snprintf(path, sizeof(path), "%s/ns", dir);
	assert_int_equal(ntm_ns_create(&ns, path, NS_SIZE, 4096,
				       NTM_NS_EMULATE), 0);
	/* Nothing laid out yet: not a BTT. */
	b = NULL;
	assert_true(ntm_blk_open(&b, ns, &plain) < 0);
	assert_null(b);
	b = open_btt(ns, 4096, true);
	size = ntm_blk_size(b);
	data = malloc(size);
	back = malloc(size);
	assert_non_null(data);
	assert_non_null(back);
	tu_fill_random(data, size, 5);
	assert_int_equal(ntm_blk_write(b, data, size, 0, 0), (ssize_t)size);
	assert_int_equal(ntm_blk_flush(b), 0);
	ntm_blk_close(b);
	ntm_ns_close(ns);

	assert_int_equal(ntm_ns_open(&ns, path, NTM_NS_EMULATE), 0);
	b = open_btt(ns, 0, false);
	assert_int_equal(ntm_blk_sector_size(b), 4096);
	assert_int_equal(ntm_blk_size(b), size);
	assert_int_equal(ntm_blk_read(b, back, size, 0), (ssize_t)size);
	assert_memory_equal(back, data, size);
	ntm_blk_close(b);
	b = NULL;
	assert_int_equal(ntm_blk_open(&b, ns, &c512), -EINVAL);
	assert_null(b);
	assert_non_null(strstr(ntm_errmsg(), "sector_size"));
	ntm_ns_close(ns);

	assert_int_equal(ntm_ns_open(&ns, path, NTM_NS_EMULATE | NTM_NS_READONLY), 0);
	b = open_btt(ns, 0, false);
	assert_int_equal(ntm_blk_read(b, back, 4096, 4096), 4096);
	assert_memory_equal(back, data + 4096, 4096);
	assert_int_equal(ntm_blk_write(b, back, 4096, 0, 0), -EROFS);
	ntm_blk_close(b);
	ntm_ns_close(ns);
	free(data);
	free(back);
	rm_dir(dir, path);
}

static void badblocks(void **state)
{
	struct ntm_ns *ns;
	struct ntm_blk *b;
	unsigned char buf[4096], got[4096];
	struct ntm_badblock bad[2];

	(void)state;
	assert_int_equal(ntm_ns_anon(&ns, NS_SIZE, 4096), 0);
	b = open_btt(ns, 4096, true);
	tu_fill_random(buf, sizeof(buf), 3);
	assert_int_equal(ntm_blk_write(b, buf, 4096, 4096, 0), 4096);
	/* 512-byte sector 9 lies in 4 KiB sector 1. */
	assert_int_equal(ntm_blk_badblocks_add(b, 9, 1), 0);
	assert_int_equal(ntm_blk_read(b, got, 4096, 4096), -EIO);
	assert_int_equal(ntm_blk_read(b, got, 4096, 0), 4096);
	assert_int_equal(ntm_blk_read(b, got, 4096, 8192), 4096);
	assert_int_equal(ntm_blk_write(b, buf, 4096, 4096, 0), 4096);
	assert_int_equal(ntm_blk_badblocks(b, bad, 2), 0);
	assert_int_equal(ntm_blk_read(b, got, 4096, 4096), 4096);
	assert_memory_equal(got, buf, 4096);
	/* The list is bounded by the external device, not the namespace. */
	assert_int_equal(ntm_blk_badblocks_add(b, ntm_blk_size(b) / 512, 1),
			 -ERANGE);
	ntm_blk_close(b);
	ntm_ns_close(ns);
}

static void options(void **state)
{
	struct ntm_blk_config hard = { .btt = true, .btt_create = true,
				       .hardened = true };
	struct ntm_ns *ns;
	struct ntm_blk *b = NULL;

	(void)state;
	assert_int_equal(ntm_ns_anon(&ns, NS_SIZE, 4096), 0);
	assert_int_equal(ntm_blk_open(&b, ns, &hard), -EINVAL);
	assert_null(b);
	assert_non_null(strstr(ntm_errmsg(), "hardened"));
	b = open_btt(ns, 512, true);
	assert_int_equal(ntm_blk_flush(b), 0);
	ntm_blk_close(b);
	ntm_ns_close(ns);
}

/*
 * NTM_BLK_BTT_V2 reaches the BTT: a 2.0 layout (version bytes 02 00 00 00
 * at 52), reopened with and without the flag; a 1.1 one refused with it,
 * and the flag without a BTT refused.
 */
static void btt_version(void **state)
{
	struct ntm_blk_config v2 = { .sector_size = 4096, .btt = true,
				     .btt_create = true,
				     .flags = NTM_BLK_BTT_V2 };
	struct ntm_blk_config plain_v2 = { .flags = NTM_BLK_BTT_V2 };
	static const unsigned char want2[4] = { 2, 0, 0, 0 };
	static const unsigned char want11[4] = { 1, 0, 1, 0 };
	unsigned char buf[4096], back[4096];
	struct ntm_ns *ns;
	struct ntm_blk *b = NULL;

	(void)state;
	assert_int_equal(ntm_ns_anon(&ns, NS_SIZE, 4096), 0);
	assert_int_equal(ntm_blk_open(&b, ns, &plain_v2), -EINVAL);
	assert_null(b);
	assert_non_null(strstr(ntm_errmsg(), "NTM_BLK_BTT_V2"));
	assert_int_equal(ntm_blk_open(&b, ns, &v2), 0);
	tu_fill_random(buf, sizeof(buf), 2);
	assert_int_equal(ntm_blk_write(b, buf, 4096, 3 * 4096, 0), 4096);
	ntm_blk_close(b);
	assert_memory_equal((unsigned char *)ntm_ns_base(ns) + 52, want2, 4);
	for (int with = 0; with < 2; with++) {
		struct ntm_blk_config c = { .btt = true,
					    .flags = with ? NTM_BLK_BTT_V2 : 0 };

		assert_int_equal(ntm_blk_open(&b, ns, &c), 0);
		assert_int_equal(ntm_blk_sector_size(b), 4096);
		assert_int_equal(ntm_blk_read(b, back, 4096, 3 * 4096), 4096);
		assert_memory_equal(back, buf, 4096);
		ntm_blk_close(b);
	}
	b = open_btt(ns, 4096, true);
	ntm_blk_close(b);
	assert_memory_equal((unsigned char *)ntm_ns_base(ns) + 52, want11, 4);
	v2.btt_create = false;
	assert_int_equal(ntm_blk_open(&b, ns, &v2), -EINVAL);
	assert_non_null(strstr(ntm_errmsg(), "2.0"));
	ntm_ns_close(ns);
}

struct writer {
	struct ntm_blk *b;
	uint64_t first, count;	/* sectors of 4096 bytes */
	int rounds;
	int ret;
};

static void *write_rounds(void *arg)
{
	struct writer *w = arg;
	unsigned char buf[4096];

	for (int r = 0; r < w->rounds; r++)
		for (uint64_t s = w->first; s < w->first + w->count; s++) {
			tu_fill_random(buf, sizeof(buf), (uint64_t)r << 32 | s);
			if (ntm_blk_write(w->b, buf, 4096, s * 4096, 0) != 4096)
				w->ret = -1;
		}
	return NULL;
}

static void threads(void **state)
{
	struct ntm_ns *ns;
	struct ntm_blk *b;
	struct writer w[2];
	pthread_t t[2];
	unsigned char want[4096], got[4096];

	(void)state;
	assert_int_equal(ntm_ns_anon(&ns, NS_SIZE, 4096), 0);
	b = open_btt(ns, 4096, true);
	for (int i = 0; i < 2; i++) {
		w[i] = (struct writer){ b, (uint64_t)i * 64, 64, 20, 0 };
		assert_int_equal(pthread_create(&t[i], NULL, write_rounds, &w[i]), 0);
	}
	for (int i = 0; i < 2; i++) {
		pthread_join(t[i], NULL);
		assert_int_equal(w[i].ret, 0);
	}
	for (uint64_t s = 0; s < 128; s++) {
		tu_fill_random(want, sizeof(want), (uint64_t)19 << 32 | s);
		assert_int_equal(ntm_blk_read(b, got, 4096, s * 4096), 4096);
		assert_memory_equal(got, want, 4096);
	}
	ntm_blk_close(b);
	ntm_ns_close(ns);
}

struct racer {
	struct ntm_blk *b;
	volatile bool stop;
	uint64_t writes;
	int ret;
};

/* Rewrite sector 0, every word the generation, until told to stop. */
static void *rewrite(void *arg)
{
	struct racer *r = arg;
	uint64_t buf[512] __attribute__((aligned(64)));

	for (uint64_t gen = 1; !__atomic_load_n(&r->stop, __ATOMIC_ACQUIRE); gen++) {
		for (int i = 0; i < 512; i++)
			buf[i] = gen;
		if (ntm_blk_write(r->b, buf, 4096, 0, NTM_BLK_FUA) != 4096) {
			r->ret = -1;
			break;
		}
		r->writes = gen;
	}
	return NULL;
}

/* Reads of sector 0 racing rewrite(): how many held two generations. */
static unsigned long race(struct ntm_blk *b, uint64_t *writes)
{
	uint64_t buf[512] __attribute__((aligned(64)));
	struct racer r = { .b = b };
	unsigned long mixed = 0;
	pthread_t t;

	memset(buf, 0, sizeof(buf));
	assert_int_equal(ntm_blk_write(b, buf, 4096, 0, NTM_BLK_FUA), 4096);
	assert_int_equal(pthread_create(&t, NULL, rewrite, &r), 0);
	for (int i = 0; i < RACE_READS; i++) {
		assert_int_equal(ntm_blk_read(b, buf, 4096, 0), 4096);
		for (int w = 1; w < 512; w++)
			if (buf[w] != buf[0]) {
				mixed++;
				break;
			}
	}
	__atomic_store_n(&r.stop, true, __ATOMIC_RELEASE);
	pthread_join(t, NULL);
	assert_int_equal(r.ret, 0);
	*writes = r.writes;
	return mixed;
}

static void race_one_sector(void **state)
{
	struct ntm_blk_config raw = { .sector_size = 4096 };
	char *dir = shm_dir(), path[256];
	struct ntm_ns *ns;
	struct ntm_blk *b;
	unsigned long raw_mixed, btt_mixed;
	uint64_t raw_writes, btt_writes;

	(void)state;
	if (!dir)
		skip();
	snprintf(path, sizeof(path), "%s/ns", dir);
	assert_int_equal(ntm_ns_create(&ns, path, NS_SIZE, 4096,
				       NTM_NS_EMULATE | NTM_NS_TEMPORARY), 0);
	assert_int_equal(ntm_blk_open(&b, ns, &raw), 0);
	raw_mixed = race(b, &raw_writes);
	ntm_blk_close(b);
	b = open_btt(ns, 4096, true);
	btt_mixed = race(b, &btt_writes);
	ntm_blk_close(b);
	ntm_ns_close(ns);
	rm_dir(dir, path);
	printf("# a reader racing a writer of one 4 KiB sector saw mixed old "
	       "and new data in %lu of %d reads on the raw device (%llu "
	       "writes), %lu of %d through the BTT (%llu writes)\n",
	       raw_mixed, RACE_READS, (unsigned long long)raw_writes,
	       btt_mixed, RACE_READS, (unsigned long long)btt_writes);
	assert_int_equal(btt_mixed, 0);
}

/* One thread's BTT: laid out over @ns, every sector written with @seed. */
struct btt_share {
	struct ntm_ns *ns;
	uint64_t seed;
	int ret;
	pthread_t thread;
};

static void *btt_share_run(void *arg)
{
	const struct ntm_blk_config c = { .sector_size = 4096, .btt = true,
					  .btt_create = true };
	struct btt_share *s = arg;
	struct ntm_blk *b = NULL;
	unsigned char *data;
	uint64_t size;

	s->ret = ntm_blk_open(&b, s->ns, &c);
	if (s->ret)
		return NULL;
	size = ntm_blk_size(b);
	data = malloc(size);
	if (!data) {
		s->ret = -ENOMEM;
	} else {
		tu_fill_random(data, size, s->seed);
		if (ntm_blk_write(b, data, size, 0, 0) != (ssize_t)size ||
		    ntm_blk_flush(b))
			s->ret = -EIO;
	}
	free(data);
	ntm_blk_close(b);
	return NULL;
}

static void two_namespaces(void **state)
{
	char *dir = shm_dir(), path[2][256];
	struct btt_share share[2];
	struct ntm_ns *ns[2];
	struct stat st;

	(void)state;
	if (!dir)
		skip();
	for (int i = 0; i < 2; i++) {
		snprintf(path[i], sizeof(path[i]), "%s/ns%d", dir, i);
		assert_int_equal(ntm_ns_create(&ns[i], path[i], NS_SIZE, 4096,
					       NTM_NS_EMULATE), 0);
		share[i] = (struct btt_share){ .ns = ns[i], .seed = 11 + i };
	}
	for (int i = 0; i < 2; i++)
		assert_int_equal(pthread_create(&share[i].thread, NULL,
						btt_share_run, &share[i]), 0);
	for (int i = 0; i < 2; i++) {
		assert_int_equal(pthread_join(share[i].thread, NULL), 0);
		if (share[i].ret)
			fail_msg("ns%d: %d %s", i, share[i].ret, ntm_errmsg());
	}
	for (int i = 0; i < 2; i++) {
		struct ntm_blk *b = open_btt(ns[i], 0, false);
		uint64_t size = ntm_blk_size(b);
		unsigned char *want = malloc(size), *back = malloc(size);

		assert_int_equal(stat(path[i], &st), 0);
		assert_true((uint64_t)st.st_blocks * 512 >= NS_SIZE);
		assert_non_null(want);
		assert_non_null(back);
		tu_fill_random(want, size, share[i].seed);
		assert_int_equal(ntm_blk_read(b, back, size, 0), (ssize_t)size);
		assert_memory_equal(back, want, size);
		free(want);
		free(back);
		ntm_blk_close(b);
		ntm_ns_close(ns[i]);
		unlink(path[i]);
	}
	rmdir(dir);
	free(dir);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(roundtrip_512),
		cmocka_unit_test(roundtrip_4096),
		cmocka_unit_test(reopen),
		cmocka_unit_test(badblocks),
		cmocka_unit_test(options),
		cmocka_unit_test(btt_version),
		cmocka_unit_test(threads),
		cmocka_unit_test(two_namespaces),
		cmocka_unit_test(race_one_sector),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
