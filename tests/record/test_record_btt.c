// SPDX-License-Identifier: MIT
/*
 * test_record_btt.c - the block device in BTT mode (ntm_blk_config.btt),
 * its durability checked with the recorder (ntmem/check.h), not bytes.
 *
 * Built against the recorder build of the library (ntmem_check). In BTT
 * mode every write is durable on return (FUA implied): the BTT copies the
 * sector into a free block with ntm_memcpy_flush(), stores the flog and the
 * map entry with non-temporal stores, and makes each durable through its
 * persist callback. On a namespace behind a page cache (emulated on a disk
 * file system, /tmp) that callback is the device's, ending in msync; on
 * tmpfs (/dev/shm) and anonymous memory it is the BTT's default, flush +
 * drain. Either way, after ntm_blk_write() returns:
 *
 *   - no unit of the namespace is DIRTY, WB or NT: whatever the write
 *     stored (data block, flog, map entry, a lazily laid out arena) was
 *     made durable;
 *   - the sector's new contents sit in one block of the namespace, found
 *     by its bytes, and every unit of that block is stored and DURABLE
 *     (record_util.h's strict check: a store the recorder did not hear
 *     about would leave it CLEAN and fail too).
 *
 * Single sectors (first, last, middle, the same one again: the overwrite
 * goes to another free block), a request of several sectors, with and
 * without NTM_BLK_FUA, 512- and 4096-byte sectors.
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
#include <unistd.h>

#include <ntmem.h>
#include <ntmem/check.h>

#include "../lib/record_util.h"
#include "../lib/testutil.h"

#define MiB ((size_t)1 << 20)
#define NS_SIZE (4 * MiB)
#define ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))

static const unsigned sector_sizes[] = { 512, 4096 };

struct dev {
	struct ntm_ns *ns;
	struct ntm_blk *blk;
	unsigned char *base;	/* the namespace: the BTT's media */
	size_t media;		/* its size */
	size_t size;		/* the device's: blocks x sector size */
	const char *name;
	unsigned ss;
};

/* A BTT device laid out and tracked, or false when there is no such place. */
static bool dev_open(struct dev *d, enum rec_ns_kind k, unsigned ss)
{
	struct ntm_blk_config cfg = {
		.sector_size = ss,
		.btt = true,
		.btt_create = true,
	};
	int ret;

	memset(d, 0, sizeof(*d));
	d->ns = rec_ns_create(k, NS_SIZE);
	if (!d->ns)
		return false;
	ret = ntm_blk_open(&d->blk, d->ns, &cfg);
	if (ret)
		fail_msg("ntm_blk_open(%s, btt, %u): %d %s", rec_ns_names[k],
			 ss, ret, ntm_errmsg());
	assert_int_equal(ntm_blk_sector_size(d->blk), ss);
	d->base = ntm_ns_base(d->ns);
	d->media = ntm_ns_size(d->ns);
	d->size = ntm_blk_size(d->blk);
	d->name = rec_ns_names[k];
	d->ss = ss;
	assert_true(d->size >= 16 * (size_t)ss);
	/* The layout as it stands counts as durable. */
	assert_int_equal(ntm_check_track(d->base, d->media), 0);
	ntm_check_start();
	return true;
}

static void dev_close(struct dev *d)
{
	ntm_check_stop();
	ntm_check_untrack(d->base);
	ntm_blk_close(d->blk);
	ntm_ns_close(d->ns);
}

/* Where the BTT put @len bytes of @data in its media: the one copy. */
static const unsigned char *find_block(const struct dev *d,
				       const unsigned char *data, size_t len)
{
	const unsigned char *hit, *next;

	hit = memmem(d->base, d->media, data, len);
	if (!hit)
		fail_msg("%s ss %u: the written sector is nowhere in the "
			 "namespace", d->name, d->ss);
	next = memmem(hit + 1, d->media - (size_t)(hit + 1 - d->base), data,
		      len);
	if (next)
		fail_msg("%s ss %u: the written sector is in the namespace "
			 "twice (+%zu, +%zu)", d->name, d->ss,
			 (size_t)(hit - d->base), (size_t)(next - d->base));
	return hit;
}

/*
 * Write sectors [sector, sector + count) from @buf and check what the
 * write left in the recorder's model of the whole namespace.
 */
static void write_check(struct dev *d, unsigned char *buf, size_t sector,
			size_t count, unsigned flags, uint64_t seed)
{
	size_t off = sector * d->ss, len = count * d->ss;
	struct ntm_check_counts c;

	tu_fill_random(buf, len, seed);
	ntm_check_reset();
	assert_int_equal(ntm_blk_write(d->blk, buf, len, off, flags),
			 (ssize_t)len);

	/* Nothing the write stored is left short of durable. */
	rec_query(d->base, d->media, &c);
	if (!ntm_check_durable(d->base, d->media))
		rec_fail(__FILE__, __LINE__, d->base, d->media, &c,
			 "clean or durable", "%s ss %u: write %zu+%zu flags %#x",
			 d->name, d->ss, off, len, flags);
	/* ...and it stored at least the data, as the recorder saw. */
	if (c.units[NTM_CHECK_DURABLE] < len / NTM_CHECK_UNIT)
		rec_fail(__FILE__, __LINE__, d->base, d->media, &c,
			 "durable in at least the sectors' units",
			 "%s ss %u: write %zu+%zu flags %#x", d->name, d->ss,
			 off, len, flags);

	/* Each sector's block: every unit stored and durable. */
	for (size_t i = 0; i < count; i++) {
		const unsigned char *blk = find_block(d, buf + i * d->ss, d->ss);

		rec_expect_durable(blk, d->ss, "%s ss %u: sector %zu's block "
				   "(+%zu), write %zu+%zu flags %#x", d->name,
				   d->ss, sector + i, (size_t)(blk - d->base),
				   off, len, flags);
	}

	/* It reads back. */
	{
		unsigned char *back = malloc(len);

		assert_non_null(back);
		assert_int_equal(ntm_blk_read(d->blk, back, len, off),
				 (ssize_t)len);
		assert_memory_equal(back, buf, len);
		free(back);
	}
}

static void writes_on(enum rec_ns_kind k)
{
	for (size_t s = 0; s < ARRAY_SIZE(sector_sizes); s++) {
		static const unsigned flag_sets[] = { 0, NTM_BLK_FUA };
		struct dev d;
		unsigned char *buf;
		size_t last;
		uint64_t seed = 0x5eed + s * 1000;

		if (!dev_open(&d, k, sector_sizes[s])) {
			print_message("no %s namespace here: skipped\n",
				      rec_ns_names[k]);
			return;
		}
		last = d.size / d.ss - 1;
		buf = malloc(4 * (size_t)d.ss);
		assert_non_null(buf);
		for (size_t f = 0; f < ARRAY_SIZE(flag_sets); f++) {
			unsigned fl = flag_sets[f];

			write_check(&d, buf, 0, 1, fl, seed++);
			write_check(&d, buf, last, 1, fl, seed++);
			write_check(&d, buf, last / 2 + 1, 1, fl, seed++);
			/* the same sector again: another free block */
			write_check(&d, buf, last / 2 + 1, 1, fl, seed++);
			write_check(&d, buf, 5, 4, fl, seed++);
		}
		/* ntm_blk_flush() only drains here; nothing to undo. */
		assert_int_equal(ntm_blk_flush(d.blk), 0);
		assert_true(ntm_check_durable(d.base, d.media));
		free(buf);
		dev_close(&d);
	}
}

/* Emulated on a disk file system: the device's persist, ending in msync. */
static void btt_disk(void **state)
{
	(void)state;
	writes_on(REC_NS_DISK);
}

/* On tmpfs and anonymous memory: the BTT's default persist. */
static void btt_shm(void **state)
{
	(void)state;
	writes_on(REC_NS_SHM);
}

static void btt_anon(void **state)
{
	(void)state;
	writes_on(REC_NS_ANON);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(btt_disk),
		cmocka_unit_test(btt_shm),
		cmocka_unit_test(btt_anon),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
