// SPDX-License-Identifier: MIT
/*
 * test_record_blk.c - the block device's durability claims, checked with
 * the recorder (ntmem/check.h) instead of by comparing bytes: a byte
 * comparison cannot see a missing write-back or fence.
 *
 * Built against the recorder build of the library (ntmem_check). Every
 * case runs on an anonymous namespace, one emulated on tmpfs (/dev/shm:
 * FUA is a fence after the flush-cache copy) and one emulated on a disk
 * file system (/tmp: FUA goes through ntm_ns_persist(), write-back, fence
 * and msync), with 512- and 4096-byte sectors:
 *
 *   fua       ntm_blk_write() and ntm_blk_writev() with NTM_BLK_FUA: every
 *             8-byte unit of the request DURABLE on return, and nothing
 *             stored outside it. Single sectors, sectors off a page
 *             boundary, multi-page requests, the whole device; the vectored
 *             writes have odd-sized segments, so their pieces land at odd
 *             addresses and the copy writes back cached head and tail
 *             bytes: those are durable only if that write-back happened.
 *   deferred  writes without FUA, plain and vectored: no unit left DIRTY
 *             (ntm_memcpy_flush's contract) and none durable yet, until
 *             ntm_blk_flush() makes every range written durable.
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
#include <sys/uio.h>
#include <unistd.h>

#include <ntmem.h>
#include <ntmem/check.h>

#include "../lib/record_util.h"
#include "../lib/testutil.h"

#define KiB ((size_t)1 << 10)
#define DEV_SIZE (256 * KiB)
#define ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))

static const unsigned sector_sizes[] = { 512, 4096 };
static const enum rec_ns_kind blk_kinds[] = { REC_NS_ANON, REC_NS_SHM,
					      REC_NS_DISK };

struct dev {
	struct ntm_ns *ns;
	struct ntm_blk *blk;
	unsigned char *base;
	size_t size;
	const char *name;
	unsigned ss;
};

/* A tracked device, or false when the machine has no such namespace. */
static bool dev_open(struct dev *d, enum rec_ns_kind k, unsigned ss)
{
	struct ntm_blk_config cfg = { .sector_size = ss };
	int ret;

	memset(d, 0, sizeof(*d));
	d->ns = rec_ns_create(k, DEV_SIZE);
	if (!d->ns)
		return false;
	ret = ntm_blk_open(&d->blk, d->ns, &cfg);
	if (ret)
		fail_msg("ntm_blk_open(%s, %u): %d %s", rec_ns_names[k], ss, ret,
			 ntm_errmsg());
	d->base = ntm_ns_base(d->ns);
	d->size = ntm_ns_size(d->ns);
	d->name = rec_ns_names[k];
	d->ss = ss;
	assert_int_equal(ntm_check_track(d->base, d->size), 0);
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

/* Nothing stored outside [off, off + len): the request landed where asked. */
static void expect_untouched_around(const struct dev *d, size_t off, size_t len)
{
	if (off)
		rec_expect_all(d->base, off, NTM_CHECK_CLEAN,
			       "%s ss %u: before %zu+%zu", d->name, d->ss, off, len);
	if (off + len < d->size)
		rec_expect_all(d->base + off + len, d->size - off - len,
			       NTM_CHECK_CLEAN, "%s ss %u: after %zu+%zu",
			       d->name, d->ss, off, len);
}

/*
 * Split @len bytes of @buf into segments of odd sizes (1, 511, 4097, ...),
 * so each piece after the first starts at an odd device address.
 */
static int odd_segments(struct iovec *iov, int max, unsigned char *buf,
			size_t len)
{
	static const size_t sizes[] = { 1, 511, 4097, 63, 2, 1000, 8191 };
	int n = 0;

	for (size_t pos = 0; pos < len && n < max; n++) {
		size_t s = sizes[n % ARRAY_SIZE(sizes)];

		if (s > len - pos || n == max - 1)
			s = len - pos;
		iov[n].iov_base = buf + pos;
		iov[n].iov_len = s;
		pos += s;
	}
	return n;
}

/* The requests of one device, in sectors: [first, count). */
struct req {
	size_t sector, count;
};

static void requests(const struct dev *d, struct req *r, size_t *n)
{
	size_t per_page = 4096 / d->ss;
	size_t sectors = d->size / d->ss;

	*n = 0;
	r[(*n)++] = (struct req){ 0, 1 };		/* first sector */
	r[(*n)++] = (struct req){ sectors - 1, 1 };	/* last sector */
	/* off a page boundary (512: mid page), then crossing pages */
	r[(*n)++] = (struct req){ 3, 2 };
	r[(*n)++] = (struct req){ per_page * 5 + per_page / 2, 3 * per_page + 1 };
	r[(*n)++] = (struct req){ per_page * 16, 8 * per_page };	/* aligned */
	r[(*n)++] = (struct req){ 0, sectors };	/* the whole device */
}

/* Write @len bytes of @buf at @off, as one buffer or odd-sized segments. */
static void write_req(struct dev *d, unsigned char *buf, size_t len,
		      size_t off, bool vectored, unsigned flags)
{
	struct iovec iov[16];
	ssize_t got;

	if (vectored)
		got = ntm_blk_writev(d->blk, iov, odd_segments(iov, 16, buf, len),
				     off, flags);
	else
		got = ntm_blk_write(d->blk, buf, len, off, flags);
	assert_int_equal(got, (ssize_t)len);
}

static void fua_dev(struct dev *d, unsigned char *buf, const struct req *r,
		    size_t n)
{
	for (size_t i = 0; i < n; i++) {
		size_t off = r[i].sector * d->ss, len = r[i].count * d->ss;

		for (int vectored = 0; vectored < 2; vectored++) {
			tu_fill_random(buf, len, 0x1234 + i * 2 + vectored);
			ntm_check_reset();
			write_req(d, buf, len, off, vectored, NTM_BLK_FUA);
			rec_expect_durable(d->base + off, len,
					   "%s ss %u: FUA %s %zu+%zu", d->name,
					   d->ss, vectored ? "writev" : "write",
					   off, len);
			expect_untouched_around(d, off, len);
		}
	}
}

static void deferred_dev(struct dev *d, unsigned char *buf,
			 const struct req *r, size_t n)
{
	n--;	/* all but the whole-device request: the rest don't overlap */
	ntm_check_reset();
	for (size_t i = 0; i < n; i++) {
		size_t off = r[i].sector * d->ss, len = r[i].count * d->ss;

		tu_fill_random(buf, len, 0x777 + i);
		write_req(d, buf, len, off, i % 2, 0);
		rec_expect_pending(d->base + off, len, "%s ss %u: write %zu+%zu",
				   d->name, d->ss, off, len);
	}
	assert_int_equal(ntm_blk_flush(d->blk), 0);
	for (size_t i = 0; i < n; i++)
		rec_expect_durable(d->base + r[i].sector * d->ss,
				   r[i].count * d->ss, "%s ss %u: after "
				   "ntm_blk_flush(), request %zu", d->name,
				   d->ss, i);
	/* Whatever else is in the device was never stored. */
	assert_true(ntm_check_durable(d->base, d->size));
}

/* Run @body on a fresh device of every kind and sector size. */
static void each_dev(void (*body)(struct dev *d, unsigned char *buf,
				  const struct req *r, size_t n))
{
	for (size_t k = 0; k < ARRAY_SIZE(blk_kinds); k++) {
		for (size_t s = 0; s < ARRAY_SIZE(sector_sizes); s++) {
			struct req r[8];
			struct dev d;
			unsigned char *buf;
			size_t n;

			if (!dev_open(&d, blk_kinds[k], sector_sizes[s])) {
				print_message("no %s namespace here: skipped\n",
					      rec_ns_names[blk_kinds[k]]);
				continue;
			}
			buf = malloc(d.size);
			assert_non_null(buf);
			requests(&d, r, &n);
			body(&d, buf, r, n);
			free(buf);
			dev_close(&d);
		}
	}
}

static void fua(void **state)
{
	(void)state;
	each_dev(fua_dev);
}

static void deferred(void **state)
{
	(void)state;
	each_dev(deferred_dev);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(fua),
		cmocka_unit_test(deferred),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
