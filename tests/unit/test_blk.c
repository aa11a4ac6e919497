// SPDX-License-Identifier: MIT
/*
 * test_blk.c - the block device on a namespace (ntmem/blk.h).
 *
 * ntm_blk checks a request once and then copies page by page unchecked,
 * so the one check has to be right: everything it lets through must land
 * exactly where asked, and everything it rejects must leave the device
 * alone. Over 1 MiB ntm_ns_anon() namespaces unless said otherwise:
 *
 *   open_*        sector size 0 (512), 512 and 4096 work; 1024 and other
 *                 sizes are -EINVAL naming "sector_size"; *blk untouched.
 *   roundtrip_*   512- and 4096-byte sectors: distinct data written to
 *                 every sector lands at base + offset (checked through the
 *                 mapping) and reads back, sector by sector and as one
 *                 whole-device read; multi-sector requests crossing page
 *                 boundaries of the device.
 *   vectored      writev/readv with odd-sized segments (1, 511, 4097, ...,
 *                 zero-length ones too) starting at odd addresses so they
 *                 cross page boundaries in memory, a sector-multiple total,
 *                 read back with a different segmentation; IOV_MAX 4-byte
 *                 segments (the largest count allowed) make one request.
 *   rejected      -ERANGE (off == size, off + len > size, off + len wrapping
 *                 past 2^64), -EINVAL (unaligned offset or length, zero
 *                 length, iovcnt 0, negative or > IOV_MAX, NULL iov,
 *                 segment lengths that overflow, unknown write flags): the
 *                 whole namespace is compared before and after each, a
 *                 read's buffer is left as it was, and ntm_errmsg() holds a
 *                 new, non-empty message.
 *   badblocks_io  sectors 8..9 bad: every read touching them is -EIO and
 *                 copies nothing (the bad page is PROT_NONE during those
 *                 reads, so touching the media would crash), sectors 7 and
 *                 10 read fine; writing sector 8 clears exactly sector 8;
 *                 with 4096-byte sectors a 512-byte bad sector spoils its
 *                 whole 4 KiB sector and a write of it clears all eight.
 *   badblocks_list adjacent and overlapping ranges merge, clearing the
 *                 middle splits, clearing nothing changes nothing, out of
 *                 range add/clear is -ERANGE and changes nothing; a random
 *                 sequence of adds and clears against a bitmap model;
 *                 ntm_blk_badblocks() returns the total count even when
 *                 given less room and writes only what fits.
 *   badblocks_empty  the list of a new device, with room and with none
 *                 (out NULL, max 0: the count query `ntmem blk badblocks`
 *                 starts with), then the no-room query with entries.
 *   badblocks_persist  on an NTM_NS_EMULATE file in a fresh directory under
 *                 /tmp: the list is kept in "<path>.badblocks", survives
 *                 close and reopen, still fails reads; an explicit
 *                 badblocks_path is honoured; a NTM_NS_TEMPORARY namespace
 *                 leaves no list file behind.
 *   fua_flush     FUA writes and ntm_blk_flush() succeed and the data is
 *                 there, on anon, emulated and plain-file namespaces (the
 *                 last through msync). Whether the data was durable before
 *                 the call returned, or ordered, cannot be observed from
 *                 user space without power-failure injection: only the
 *                 return values and the data are checked.
 *   threads       two threads writing disjoint halves, round after round
 *                 with distinct data, some FUA, some vectored, each reading
 *                 back its own writes: at the end every sector holds its
 *                 last round's data.
 *   hardened_*    hardened mode without a memmap, with a map=mem memmap
 *                 (owner: the namespace) and with a map=dev one: good I/O
 *                 works; with a memmap whose owner is another pointer every
 *                 read and write is -EFAULT and changes nothing, while the
 *                 same memmap in non-hardened mode is not consulted.
 */
#define _GNU_SOURCE
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/uio.h>
#include <unistd.h>

#include <ntmem.h>
#include "../lib/testutil.h"

#define MiB ((size_t)1 << 20)
#define PG ((size_t)4096)
#define DEV_SIZE MiB
#define BB NTM_BADBLOCK_SECTOR
#define ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))

#define BLK_SENTINEL ((struct ntm_blk *)(uintptr_t)0xb10c)

static const unsigned sector_sizes[] = { 512, 4096 };

/* --- helpers ------------------------------------------------------------ */

struct dev {
	struct ntm_ns *ns;
	struct ntm_blk *blk;
	unsigned char *base;
	size_t size;
	unsigned ss;
};

static void dev_open_cfg(struct dev *d, const struct ntm_blk_config *cfg)
{
	int ret = ntm_blk_open(&d->blk, d->ns, cfg);

	if (ret)
		fail_msg("ntm_blk_open: %d %s", ret, ntm_errmsg());
	d->base = ntm_ns_base(d->ns);
	d->size = ntm_ns_size(d->ns);
	d->ss = ntm_blk_sector_size(d->blk);
	assert_int_equal(ntm_blk_size(d->blk), d->size);
}

/* A fresh anonymous namespace of @size bytes and a device with @ss sectors. */
static void dev_anon(struct dev *d, size_t size, unsigned ss)
{
	struct ntm_blk_config cfg = { .sector_size = ss };

	memset(d, 0, sizeof(*d));
	assert_int_equal(ntm_ns_anon(&d->ns, size, PG), 0);
	dev_open_cfg(d, &cfg);
	assert_int_equal(d->ss, ss);
}

static void dev_close(struct dev *d)
{
	ntm_blk_close(d->blk);
	ntm_ns_close(d->ns);
	d->blk = NULL;
	d->ns = NULL;
}

/* Data unique to (@tag, @sector): what a sector holds after a write. */
static void pattern(unsigned char *p, size_t n, uint64_t tag, uint64_t sector)
{
	tu_fill_random(p, n, (tag << 40) ^ (sector * 0x9e3779b97f4a7c15ull) ^ 1);
}

/* Fill the whole namespace (through the mapping) with data from @seed. */
static void dev_fill(struct dev *d, uint64_t seed)
{
	tu_fill_random(d->base, d->size, seed);
}

static unsigned char *snapshot(const struct dev *d)
{
	unsigned char *s = malloc(d->size);

	assert_non_null(s);
	memcpy(s, d->base, d->size);
	return s;
}

/* The namespace still equals @snap, byte for byte. */
static void check_unchanged(const struct dev *d, const unsigned char *snap,
			    const char *what)
{
	size_t at = tu_first_diff(d->base, snap, d->size);

	if (at != d->size)
		fail_msg("%s: namespace byte %zu changed (0x%02x, was 0x%02x)",
			 what, at, d->base[at], snap[at]);
}

/* The namespace at @off holds @want. */
static void check_media(const struct dev *d, uint64_t off,
			const unsigned char *want, size_t n, const char *what)
{
	size_t at = tu_first_diff(d->base + off, want, n);

	if (at != n)
		fail_msg("%s: namespace byte %llu is 0x%02x, expected 0x%02x",
			 what, (unsigned long long)(off + at), d->base[off + at],
			 want[at]);
}

static void check_buf(const unsigned char *got, const unsigned char *want,
		      size_t n, const char *what)
{
	size_t at = tu_first_diff(got, want, n);

	if (at != n)
		fail_msg("%s: byte %zu is 0x%02x, expected 0x%02x", what, at,
			 got[at], want[at]);
}

#define check_ret(got, want, what)                                             \
	do {                                                                   \
		ssize_t got_ = (got), want_ = (want);                          \
		if (got_ != want_)                                             \
			fail_msg("%s: returned %zd (%s), expected %zd", (what),\
				 got_, got_ < 0 ? strerror((int)-got_) : "",   \
				 want_);                                       \
	} while (0)

/*
 * ntm_errmsg() is per thread and sticky; to see that a call set it, first
 * provoke a different failure with a known message.
 */
static char reset_msg[256];

static void errmsg_reset(void)
{
	struct ntm_blk *b = BLK_SENTINEL;

	assert_int_equal(ntm_blk_open(&b, NULL, NULL), -EINVAL);
	snprintf(reset_msg, sizeof(reset_msg), "%s", ntm_errmsg());
	assert_true(reset_msg[0] != '\0');
}

static void check_errmsg_new(const char *what)
{
	const char *msg = ntm_errmsg();

	if (!msg || !*msg || !strcmp(msg, reset_msg))
		fail_msg("%s: ntm_errmsg() not set by the failure ('%s')", what,
			 msg ? msg : "(null)");
}

static void check_errmsg_has(const char *text, const char *what)
{
	const char *msg = ntm_errmsg();

	if (!msg || !strstr(msg, text))
		fail_msg("%s: ntm_errmsg() '%s' lacks '%s'", what,
			 msg ? msg : "(null)", text);
}

/* --- open --------------------------------------------------------------- */

/*
 * The growth rule (src/config_check.h): a flag bit or a reserved word that
 * is not 0 is refused before anything happens - here a btt_create that
 * would have laid a BTT out over the namespace.
 */
static void test_open_config_reserved(void **state)
{
	struct dev d;
	unsigned char *snap;

	(void)state;
	memset(&d, 0, sizeof(d));
	assert_int_equal(ntm_ns_anon(&d.ns, DEV_SIZE, PG), 0);
	d.base = ntm_ns_base(d.ns);
	d.size = ntm_ns_size(d.ns);
	dev_fill(&d, 17);
	snap = snapshot(&d);
	for (int i = 0; i < TU_CONFIG_CASES; i++) {
		struct ntm_blk_config cfg = { .btt = true, .btt_create = true };
		struct ntm_blk *blk = BLK_SENTINEL;
		char want[64];

		/* Bit 0 is NTM_BLK_BTT_V2: the first unknown one is bit 1. */
		TU_SPOIL_CONFIG(&cfg, i, 1u << 1, want);
		check_ret(ntm_blk_open(&blk, d.ns, &cfg), -EINVAL, want);
		assert_ptr_equal(blk, BLK_SENTINEL);
		check_errmsg_has(want, want);
		check_unchanged(&d, snap, want);
	}
	/* Those fields 0: the same config lays the BTT out. */
	check_ret(ntm_blk_open(&d.blk, d.ns, &(struct ntm_blk_config){
			.btt = true, .btt_create = true }), 0, "btt_create");
	dev_close(&d);
	free(snap);
}

static void test_open_sector_size(void **state)
{
	static const unsigned bad[] = { 1024, 1, 256, 513, 2048, 8192, 65536 };
	struct ntm_blk_config cfg = { 0 };
	struct ntm_blk *blk;
	struct ntm_ns *ns;

	(void)state;
	assert_int_equal(ntm_ns_anon(&ns, DEV_SIZE, PG), 0);
	/* 0 means 512. */
	assert_int_equal(ntm_blk_open(&blk, ns, &cfg), 0);
	assert_int_equal(ntm_blk_sector_size(blk), 512);
	assert_int_equal(ntm_blk_size(blk), DEV_SIZE);
	ntm_blk_close(blk);
	assert_int_equal(ntm_blk_open(&blk, ns, NULL), 0);
	assert_int_equal(ntm_blk_sector_size(blk), 512);
	ntm_blk_close(blk);
	for (size_t i = 0; i < ARRAY_SIZE(sector_sizes); i++) {
		cfg.sector_size = sector_sizes[i];
		assert_int_equal(ntm_blk_open(&blk, ns, &cfg), 0);
		assert_int_equal(ntm_blk_sector_size(blk), sector_sizes[i]);
		ntm_blk_close(blk);
	}
	for (size_t i = 0; i < ARRAY_SIZE(bad); i++) {
		char what[48];

		snprintf(what, sizeof(what), "sector_size %u", bad[i]);
		cfg.sector_size = bad[i];
		blk = BLK_SENTINEL;
		check_ret(ntm_blk_open(&blk, ns, &cfg), -EINVAL, what);
		assert_ptr_equal(blk, BLK_SENTINEL);
		check_errmsg_has("sector_size", what);
	}
	blk = BLK_SENTINEL;
	assert_int_equal(ntm_blk_open(&blk, NULL, NULL), -EINVAL);
	assert_ptr_equal(blk, BLK_SENTINEL);
	check_errmsg_has("ns: NULL", "NULL ns");
	assert_int_equal(ntm_blk_open(NULL, ns, NULL), -EINVAL);
	check_errmsg_has("blk: NULL", "NULL blk");
	ntm_blk_close(NULL);
	ntm_ns_close(ns);
}

/* --- round trips -------------------------------------------------------- */

static void roundtrip(unsigned ss)
{
	const size_t nsec = DEV_SIZE / ss;
	unsigned char *img = malloc(DEV_SIZE), *buf = malloc(DEV_SIZE);
	struct dev d;
	char what[96];

	assert_non_null(img);
	assert_non_null(buf);
	dev_anon(&d, DEV_SIZE, ss);
	/* Every sector its own data, FUA on every third. */
	for (size_t s = 0; s < nsec; s++) {
		pattern(img + s * ss, ss, ss, s);
		snprintf(what, sizeof(what), "%u-byte sector %zu: write", ss, s);
		check_ret(ntm_blk_write(d.blk, img + s * ss, ss, s * ss,
					s % 3 ? 0 : NTM_BLK_FUA), ss, what);
		check_media(&d, s * ss, img + s * ss, ss, what);
	}
	check_media(&d, 0, img, DEV_SIZE, "after writing every sector");
	for (size_t s = 0; s < nsec; s++) {
		snprintf(what, sizeof(what), "%u-byte sector %zu: read", ss, s);
		memset(buf, 0xee, ss);
		check_ret(ntm_blk_read(d.blk, buf, ss, s * ss), ss, what);
		check_buf(buf, img + s * ss, ss, what);
	}
	memset(buf, 0xee, DEV_SIZE);
	check_ret(ntm_blk_read(d.blk, buf, DEV_SIZE, 0), DEV_SIZE,
		  "whole-device read");
	check_buf(buf, img, DEV_SIZE, "whole-device read");

	/* Requests of several sectors across the device's page boundaries. */
	{
		const uint64_t offs[] = { PG - ss, 3 * PG - ss, 5 * PG,
					  DEV_SIZE - 3 * PG - ss };
		const size_t lens[] = { 2 * (size_t)ss, PG + 2 * ss, 3 * PG,
					2 * PG + ss };

		for (size_t i = 0; i < ARRAY_SIZE(offs); i++) {
			snprintf(what, sizeof(what), "%u-byte sectors: %zu bytes "
				 "at %llu", ss, lens[i],
				 (unsigned long long)offs[i]);
			pattern(img + offs[i], lens[i], 1000 + i, offs[i]);
			check_ret(ntm_blk_write(d.blk, img + offs[i], lens[i],
						offs[i], 0), lens[i], what);
			memset(buf, 0xee, lens[i]);
			check_ret(ntm_blk_read(d.blk, buf, lens[i], offs[i]),
				  lens[i], what);
			check_buf(buf, img + offs[i], lens[i], what);
		}
		check_media(&d, 0, img, DEV_SIZE, "after multi-sector writes");
	}
	/* The last sector and the whole device as one write. */
	pattern(img, DEV_SIZE, 77, ss);
	check_ret(ntm_blk_write(d.blk, img, DEV_SIZE, 0, NTM_BLK_FUA), DEV_SIZE,
		  "whole-device write");
	check_media(&d, 0, img, DEV_SIZE, "whole-device write");
	check_ret(ntm_blk_read(d.blk, buf, ss, DEV_SIZE - ss), ss, "last sector");
	check_buf(buf, img + DEV_SIZE - ss, ss, "last sector");
	dev_close(&d);
	free(img);
	free(buf);
}

static void test_roundtrip_512(void **state)
{
	(void)state;
	roundtrip(512);
}

static void test_roundtrip_4096(void **state)
{
	(void)state;
	roundtrip(4096);
}

/* --- vectored ----------------------------------------------------------- */

/*
 * Cut @total bytes at @mem into segments of the lengths in @lens (cycling;
 * the last one takes what is left). Returns the number of segments.
 */
static int make_iov(struct iovec *iov, int max, unsigned char *mem,
		    size_t total, const size_t *lens, size_t nlens)
{
	size_t at = 0;
	int n = 0;

	for (size_t i = 0; at < total && n < max; i++, n++) {
		size_t len = lens[i % nlens];

		if (len > total - at || n == max - 1)
			len = total - at;
		iov[n].iov_base = mem + at;
		iov[n].iov_len = len;
		at += len;
	}
	assert_int_equal(at, total);
	return n;
}

static void test_vectored(void **state)
{
	static const size_t wlens[] = { 1, 511, 1000, 0, 2583, 4097, 3, 4093,
					513, 0, 7 };
	static const size_t rlens[] = { 4095, 2, 0, 6000, 1, 511, 8191, 64 };
	enum { MAXV = 64 };
	struct iovec wiov[MAXV], riov[MAXV];

	(void)state;
	for (size_t k = 0; k < ARRAY_SIZE(sector_sizes); k++) {
		const unsigned ss = sector_sizes[k];
		const size_t total = 6 * PG;	/* a multiple of both sizes */
		/* Odd addresses: segments straddle pages of the buffers. */
		unsigned char *wmem = tu_map_fenced(total + PG);
		unsigned char *rmem = tu_map_fenced(total + PG);
		unsigned char *src = wmem + PG - 1, *dst = rmem + 3;
		const uint64_t offs[] = { 0, PG - ss, 7 * (uint64_t)ss,
					  DEV_SIZE - total };
		struct dev d;

		assert_non_null(wmem);
		assert_non_null(rmem);
		dev_anon(&d, DEV_SIZE, ss);
		dev_fill(&d, 90 + ss);
		for (size_t i = 0; i < ARRAY_SIZE(offs); i++) {
			uint64_t off = offs[i];
			int wn, rn;
			char what[96];
			unsigned char *snap;

			snprintf(what, sizeof(what), "%u-byte sectors: writev "
				 "at %llu", ss, (unsigned long long)off);
			pattern(src, total, 200 + i, ss);
			wn = make_iov(wiov, MAXV, src, total, wlens,
				      ARRAY_SIZE(wlens));
			snap = snapshot(&d);
			memcpy(snap + off, src, total);
			check_ret(ntm_blk_writev(d.blk, wiov, wn, off, 0), total,
				  what);
			/* Exactly [off, off + total) changed. */
			check_unchanged(&d, snap, what);
			free(snap);

			snprintf(what, sizeof(what), "%u-byte sectors: readv "
				 "at %llu", ss, (unsigned long long)off);
			memset(rmem, 0xc3, total + PG);
			rn = make_iov(riov, MAXV, dst, total, rlens,
				      ARRAY_SIZE(rlens));
			check_ret(ntm_blk_readv(d.blk, riov, rn, off), total, what);
			check_buf(dst, src, total, what);
			for (size_t j = 0; j < 3; j++)
				assert_int_equal(rmem[j], 0xc3);
			for (size_t j = 3 + total; j < total + PG; j++)
				assert_int_equal(rmem[j], 0xc3);
		}

		/* IOV_MAX segments of 4 bytes: one 4 KiB request. */
		{
			struct iovec *iov = calloc(IOV_MAX, sizeof(*iov));
			static const size_t four[] = { 4 };

			assert_non_null(iov);
			assert_int_equal(make_iov(iov, IOV_MAX, src, 4 * IOV_MAX,
						  four, 1), IOV_MAX);
			assert_int_equal(4 * IOV_MAX % ss, 0);
			pattern(src, 4 * IOV_MAX, 300, ss);
			check_ret(ntm_blk_writev(d.blk, iov, IOV_MAX, 2 * PG,
						 NTM_BLK_FUA), 4 * IOV_MAX,
				  "writev of IOV_MAX segments");
			check_media(&d, 2 * PG, src, 4 * IOV_MAX,
				    "writev of IOV_MAX segments");
			make_iov(iov, IOV_MAX, dst, 4 * IOV_MAX, four, 1);
			memset(dst, 0, 4 * IOV_MAX);
			check_ret(ntm_blk_readv(d.blk, iov, IOV_MAX, 2 * PG),
				  4 * IOV_MAX, "readv of IOV_MAX segments");
			check_buf(dst, src, 4 * IOV_MAX, "readv of IOV_MAX segments");
			free(iov);
		}
		dev_close(&d);
		tu_unmap_fenced(wmem, total + PG);
		tu_unmap_fenced(rmem, total + PG);
	}
}

/* --- rejected requests -------------------------------------------------- */

enum op { RD, WR, RDV, WRV };

struct bad_req {
	const char *what;
	enum op op;
	uint64_t off;
	size_t len;		/* RD/WR; RDV/WRV use iov[] below */
	int iovcnt;		/* RDV/WRV: NULL_IOV means a NULL iov, count 1 */
	size_t seg[2];		/* RDV/WRV: segment lengths, alternating */
	unsigned flags;
	int err;
};

#define NULL_IOV (-1000)
/* read/write; a write with unknown flags; readv/writev */
#define REQ(w, op, off, len, err) { w, op, off, len, 0, { 0, 0 }, 0, err }
#define REQF(w, off, len, flags) { w, WR, off, len, 0, { 0, 0 }, flags, -EINVAL }
#define REQV(w, op, off, cnt, a, b, flags, err)                                \
	{ w, op, off, 0, cnt, { a, b }, flags, err }

static void test_rejected(void **state)
{
	(void)state;
	for (size_t k = 0; k < ARRAY_SIZE(sector_sizes); k++) {
		const uint64_t ss = sector_sizes[k], size = DEV_SIZE;
		const uint64_t top = UINT64_MAX - ss + 1;	/* aligned */
		const struct bad_req reqs[] = {
			REQ("off == size", RD, size, ss, -ERANGE),
			REQ("off == size", WR, size, ss, -ERANGE),
			REQ("off + len > size", RD, size - ss, 2 * ss, -ERANGE),
			REQ("off + len > size", WR, size - ss, 2 * ss, -ERANGE),
			REQ("len > size", WR, 0, size + ss, -ERANGE),
			REQ("off past the end", WR, 2 * size, ss, -ERANGE),
			REQ("off + len == 2^64", RD, top, ss, -ERANGE),
			REQ("off + len == 2^64", WR, top, ss, -ERANGE),
			REQ("off + len wraps", RD, top, 2 * ss, -ERANGE),
			REQ("off + len wraps", WR, top, 2 * ss, -ERANGE),
			REQV("off + len wraps", WRV, top - ss, 2, ss, 3 * ss, 0,
			     -ERANGE),
			REQV("off + len wraps", RDV, top - ss, 2, ss, 3 * ss, 0,
			     -ERANGE),
			REQV("off + len > size", WRV, size - ss, 2, ss, ss, 0,
			     -ERANGE),
			REQ("off 1", RD, 1, ss, -EINVAL),
			REQ("off 1", WR, 1, ss, -EINVAL),
			REQ("off half a sector", WR, ss + ss / 2, ss, -EINVAL),
			REQ("off ss - 1", WR, ss - 1, ss, -EINVAL),
			REQ("off 256", RD, 256, ss, -EINVAL),
			REQ("len ss - 1", RD, 0, ss - 1, -EINVAL),
			REQ("len ss - 1", WR, 0, ss - 1, -EINVAL),
			REQ("len ss + 1", WR, ss, ss + 1, -EINVAL),
			REQ("len 256", WR, 0, 256, -EINVAL),
			REQ("len 0", RD, 0, 0, -EINVAL),
			REQ("len 0", WR, 0, 0, -EINVAL),
			REQ("len 0 at the end", WR, size - ss, 0, -EINVAL),
			REQV("iovcnt 0", RDV, 0, 0, ss, 0, 0, -EINVAL),
			REQV("iovcnt 0", WRV, 0, 0, ss, 0, 0, -EINVAL),
			REQV("iovcnt -1", WRV, 0, -1, ss, 0, 0, -EINVAL),
			REQV("iovcnt IOV_MAX + 1", RDV, 0, IOV_MAX + 1, ss, 0, 0,
			     -EINVAL),
			REQV("iovcnt IOV_MAX + 1", WRV, 0, IOV_MAX + 1, ss, 0, 0,
			     -EINVAL),
			REQV("iovcnt INT_MAX", WRV, 0, INT_MAX, ss, 0, 0, -EINVAL),
			REQV("NULL iov", WRV, 0, NULL_IOV, 0, 0, 0, -EINVAL),
			REQV("NULL iov", RDV, 0, NULL_IOV, 0, 0, 0, -EINVAL),
			REQV("segments total unaligned", WRV, 0, 2, ss / 2, ss / 4,
			     0, -EINVAL),
			REQV("segments total 0", WRV, 0, 2, 0, 0, 0, -EINVAL),
			REQV("segments overflow", WRV, 0, 2, SIZE_MAX / 2 + 1,
			     SIZE_MAX / 2 + 1, 0, -EINVAL),
			REQV("segments overflow", RDV, 0, 2, SIZE_MAX, ss, 0,
			     -EINVAL),
			REQF("flags 0x2", 0, ss, 0x2),
			REQF("flags FUA | 0x4", 0, ss, NTM_BLK_FUA | 0x4),
			REQF("flags 0x80000000", ss, ss, 0x80000000u),
			REQV("flags 0x2", WRV, 0, 2, ss, ss, 0x2, -EINVAL),
		};
		/* Room for the largest length any request asks to copy. */
		const size_t blen = 2 * DEV_SIZE;
		unsigned char *buf = tu_map_fenced(blen), *snap;
		struct iovec *iov = calloc(IOV_MAX + 1, sizeof(*iov));
		struct dev d;

		assert_non_null(buf);
		assert_non_null(iov);
		dev_anon(&d, DEV_SIZE, (unsigned)ss);
		dev_fill(&d, 400 + ss);
		snap = snapshot(&d);
		for (size_t i = 0; i < ARRAY_SIZE(reqs); i++) {
			const struct bad_req *r = &reqs[i];
			char what[96];
			ssize_t ret = 0;
			int cnt = r->iovcnt == NULL_IOV ? 1 : r->iovcnt;

			snprintf(what, sizeof(what), "%llu-byte sectors, %s %s",
				 (unsigned long long)ss, r->op == RD ? "read" :
				 r->op == WR ? "write" : r->op == RDV ? "readv" :
				 "writev", r->what);
			memset(buf, 0x6b, blen);
			for (int j = 0; j <= IOV_MAX; j++) {
				iov[j].iov_base = buf + (j % 2) * DEV_SIZE;
				iov[j].iov_len = r->seg[j % 2];
			}
			errmsg_reset();
			switch (r->op) {
			case RD:
				ret = ntm_blk_read(d.blk, buf, r->len, r->off);
				break;
			case WR:
				ret = ntm_blk_write(d.blk, buf, r->len, r->off,
						    r->flags);
				break;
			case RDV:
				ret = ntm_blk_readv(d.blk, r->iovcnt == NULL_IOV ?
						    NULL : iov, cnt, r->off);
				break;
			case WRV:
				ret = ntm_blk_writev(d.blk, r->iovcnt == NULL_IOV ?
						     NULL : iov, cnt, r->off,
						     r->flags);
				break;
			}
			check_ret(ret, r->err, what);
			check_errmsg_new(what);
			check_unchanged(&d, snap, what);
			for (size_t j = 0; (r->op == RD || r->op == RDV) &&
					   j < blen; j++)
				if (buf[j] != 0x6b)
					fail_msg("%s: buffer byte %zu written", what, j);
		}
		/* The boundaries themselves are fine. */
		check_ret(ntm_blk_read(d.blk, buf, ss, size - ss), ss, "last sector");
		check_ret(ntm_blk_read(d.blk, buf, size, 0), size, "whole device");
		check_buf(buf, snap, size, "whole device");
		free(snap);
		free(iov);
		dev_close(&d);
		tu_unmap_fenced(buf, blen);
	}
}

/* --- bad sectors: I/O --------------------------------------------------- */

static void read_must_fail(struct dev *d, uint64_t off, size_t len,
			   const char *what)
{
	unsigned char *buf = malloc(len);

	assert_non_null(buf);
	memset(buf, 0x77, len);
	errmsg_reset();
	check_ret(ntm_blk_read(d->blk, buf, len, off), -EIO, what);
	check_errmsg_new(what);
	for (size_t i = 0; i < len; i++)
		if (buf[i] != 0x77)
			fail_msg("%s: the failed read copied byte %zu", what, i);
	free(buf);
}

static void read_must_work(struct dev *d, uint64_t off, size_t len,
			   const unsigned char *img, const char *what)
{
	unsigned char *buf = malloc(len);

	assert_non_null(buf);
	memset(buf, 0x77, len);
	check_ret(ntm_blk_read(d->blk, buf, len, off), len, what);
	check_buf(buf, img + off, len, what);
	free(buf);
}

static void expect_list(struct ntm_blk *blk, const struct ntm_badblock *want,
			size_t n, const char *what)
{
	struct ntm_badblock got[64];
	size_t have = ntm_blk_badblocks(blk, got, ARRAY_SIZE(got));
	bool same = have == n;

	for (size_t i = 0; same && i < n; i++)
		same = got[i].sector == want[i].sector &&
		       got[i].count == want[i].count;
	if (!same) {
		char g[256] = "", w[256] = "";
		size_t lg = 0, lw = 0;

		for (size_t i = 0; i < have && i < ARRAY_SIZE(got) &&
				   lg < sizeof(g) - 48; i++)
			lg += (size_t)snprintf(g + lg, sizeof(g) - lg, " %llu+%llu",
					       (unsigned long long)got[i].sector,
					       (unsigned long long)got[i].count);
		for (size_t i = 0; i < n && lw < sizeof(w) - 48; i++)
			lw += (size_t)snprintf(w + lw, sizeof(w) - lw, " %llu+%llu",
					       (unsigned long long)want[i].sector,
					       (unsigned long long)want[i].count);
		fail_msg("%s: bad-sector list is {%s } (%zu), expected {%s }",
			 what, g, have, w);
	}
}

#define LIST(blk, what, ...)                                                   \
	do {                                                                   \
		const struct ntm_badblock want_[] = { __VA_ARGS__ };           \
		expect_list((blk), want_, ARRAY_SIZE(want_), (what));          \
	} while (0)
#define LIST_EMPTY(blk, what) expect_list((blk), NULL, 0, (what))

static void test_badblocks_io_512(void **state)
{
	unsigned char *img = malloc(DEV_SIZE), sec[512];
	struct dev d;
	char what[64];

	(void)state;
	assert_non_null(img);
	dev_anon(&d, DEV_SIZE, 512);
	dev_fill(&d, 500);
	memcpy(img, d.base, DEV_SIZE);
	assert_int_equal(ntm_blk_badblocks_add(d.blk, 8, 2), 0);
	LIST(d.blk, "add 8+2", { 8, 2 });

	for (uint64_t s = 0; s < 20; s++) {
		snprintf(what, sizeof(what), "read sector %llu",
			 (unsigned long long)s);
		if (s == 8 || s == 9)
			read_must_fail(&d, s * 512, 512, what);
		else
			read_must_work(&d, s * 512, 512, img, what);
	}
	/* Any request touching them fails as a whole, before copying. */
	read_must_fail(&d, 6 * 512, 4 * 512, "read 6..9");
	read_must_fail(&d, 7 * 512, 4 * 512, "read 7..10");
	read_must_fail(&d, 9 * 512, 512 * 10, "read 9..18");
	read_must_fail(&d, 0, DEV_SIZE, "read the whole device");
	read_must_work(&d, 0, 8 * 512, img, "read 0..7");
	read_must_work(&d, 10 * 512, 6 * 512, img, "read 10..15");
	{
		unsigned char a[1000], b[24];
		struct iovec iov[2] = { { a, sizeof(a) }, { b, sizeof(b) } };

		memset(a, 0x77, sizeof(a));
		check_ret(ntm_blk_readv(d.blk, iov, 2, 7 * 512), -EIO, "readv 7..8");
		for (size_t i = 0; i < sizeof(a); i++)
			assert_int_equal(a[i], 0x77);
	}

	/*
	 * Without touching the media: make the bad page inaccessible. A read
	 * that copied (or even loaded) before checking would crash here.
	 */
	assert_int_equal(ntm_blk_badblocks_add(d.blk, 8, 8), 0);	/* page 1 */
	LIST(d.blk, "add 8+8 over 8+2", { 8, 8 });
	assert_int_equal(mprotect(d.base + PG, PG, PROT_NONE), 0);
	read_must_fail(&d, 8 * 512, 512, "read 8 (page inaccessible)");
	read_must_fail(&d, 8 * 512, 8 * 512, "read 8..15 (page inaccessible)");
	read_must_fail(&d, 6 * 512, 4 * 512, "read 6..9 (page inaccessible)");
	read_must_fail(&d, 15 * 512, 2 * 512, "read 15..16 (page inaccessible)");
	assert_int_equal(mprotect(d.base + PG, PG, PROT_READ | PROT_WRITE), 0);
	assert_int_equal(ntm_blk_badblocks_clear(d.blk, 10, 6), 0);
	LIST(d.blk, "back to 8+2", { 8, 2 });
	check_unchanged(&d, img, "after failed reads");

	/* Writing a bad sector clears exactly the sectors written. */
	pattern(sec, sizeof(sec), 501, 8);
	memcpy(img + 8 * 512, sec, 512);
	check_ret(ntm_blk_write(d.blk, sec, 512, 8 * 512, 0), 512, "write 8");
	LIST(d.blk, "after writing sector 8", { 9, 1 });
	check_media(&d, 8 * 512, sec, 512, "write 8");
	read_must_work(&d, 8 * 512, 512, img, "read 8 after its write");
	read_must_fail(&d, 9 * 512, 512, "read 9 after writing 8");
	read_must_fail(&d, 8 * 512, 1024, "read 8..9 after writing 8");
	pattern(sec, sizeof(sec), 502, 9);
	memcpy(img + 9 * 512, sec, 512);
	check_ret(ntm_blk_write(d.blk, sec, 512, 9 * 512, NTM_BLK_FUA), 512,
		  "write 9");
	LIST_EMPTY(d.blk, "after writing sector 9");
	read_must_work(&d, 0, 20 * 512, img, "read 0..19, all clear");

	/* A write spanning a bad range clears all of it, and only it. */
	assert_int_equal(ntm_blk_badblocks_add(d.blk, 30, 4), 0);
	assert_int_equal(ntm_blk_badblocks_add(d.blk, 40, 1), 0);
	{
		unsigned char big[3 * 512];

		pattern(big, sizeof(big), 503, 29);
		memcpy(img + 29 * 512, big, sizeof(big));
		check_ret(ntm_blk_write(d.blk, big, sizeof(big), 29 * 512, 0),
			  sizeof(big), "write 29..31");
	}
	LIST(d.blk, "after writing 29..31", { 32, 2 }, { 40, 1 });
	read_must_work(&d, 29 * 512, 3 * 512, img, "read 29..31");
	read_must_fail(&d, 32 * 512, 512, "read 32");
	read_must_fail(&d, 40 * 512, 512, "read 40");
	read_must_work(&d, 34 * 512, 6 * 512, img, "read 34..39");
	check_media(&d, 0, img, DEV_SIZE, "the whole device at the end");
	dev_close(&d);
	free(img);
}

/* 512-byte bad sectors under 4096-byte device sectors. */
static void test_badblocks_io_4096(void **state)
{
	unsigned char *img = malloc(DEV_SIZE), sec[4096];
	struct dev d;

	(void)state;
	assert_non_null(img);
	dev_anon(&d, DEV_SIZE, 4096);
	dev_fill(&d, 510);
	memcpy(img, d.base, DEV_SIZE);
	assert_int_equal(ntm_blk_badblocks_add(d.blk, 8, 2), 0);
	read_must_work(&d, 0, 4096, img, "read 4k sector 0");
	read_must_fail(&d, 4096, 4096, "read 4k sector 1 (512-sectors 8..9 bad)");
	read_must_work(&d, 2 * 4096, 4096, img, "read 4k sector 2");
	read_must_fail(&d, 0, 3 * 4096, "read 4k sectors 0..2");

	pattern(sec, sizeof(sec), 511, 1);
	memcpy(img + 4096, sec, 4096);
	check_ret(ntm_blk_write(d.blk, sec, 4096, 4096, 0), 4096, "write 4k 1");
	LIST_EMPTY(d.blk, "after writing 4k sector 1");
	read_must_work(&d, 0, 3 * 4096, img, "read 4k sectors 0..2");

	/* Bad sectors 15..16 spoil 4k sectors 1 and 2; writing 1 clears 15. */
	assert_int_equal(ntm_blk_badblocks_add(d.blk, 15, 2), 0);
	read_must_fail(&d, 4096, 4096, "read 4k 1 (15 bad)");
	read_must_fail(&d, 2 * 4096, 4096, "read 4k 2 (16 bad)");
	pattern(sec, sizeof(sec), 512, 1);
	memcpy(img + 4096, sec, 4096);
	check_ret(ntm_blk_write(d.blk, sec, 4096, 4096, 0), 4096, "write 4k 1");
	LIST(d.blk, "after writing 4k sector 1", { 16, 1 });
	read_must_work(&d, 4096, 4096, img, "read 4k 1 after its write");
	read_must_fail(&d, 2 * 4096, 4096, "read 4k 2 still bad");
	check_media(&d, 0, img, DEV_SIZE, "the whole device at the end");
	dev_close(&d);
	free(img);
}

/* --- bad sectors: the list ---------------------------------------------- */

static void test_badblocks_list(void **state)
{
	const uint64_t limit = DEV_SIZE / BB;
	struct ntm_badblock out[4];
	struct dev d;

	(void)state;
	dev_anon(&d, DEV_SIZE, 4096);	/* the list is in 512-byte units anyway */

	assert_int_equal(ntm_blk_badblocks_add(d.blk, 8, 2), 0);
	LIST(d.blk, "8+2", { 8, 2 });
	assert_int_equal(ntm_blk_badblocks_add(d.blk, 10, 1), 0);
	LIST(d.blk, "adjacent after merges", { 8, 3 });
	assert_int_equal(ntm_blk_badblocks_add(d.blk, 7, 1), 0);
	LIST(d.blk, "adjacent before merges", { 7, 4 });
	assert_int_equal(ntm_blk_badblocks_add(d.blk, 8, 2), 0);
	LIST(d.blk, "inside changes nothing", { 7, 4 });
	assert_int_equal(ntm_blk_badblocks_add(d.blk, 30, 2), 0);
	assert_int_equal(ntm_blk_badblocks_add(d.blk, 20, 5), 0);
	LIST(d.blk, "three ranges, sorted", { 7, 4 }, { 20, 5 }, { 30, 2 });
	assert_int_equal(ntm_blk_badblocks_add(d.blk, 12, 1), 0);
	LIST(d.blk, "one apart stays apart", { 7, 4 }, { 12, 1 }, { 20, 5 },
	     { 30, 2 });
	assert_int_equal(ntm_blk_badblocks_add(d.blk, 9, 13), 0);
	LIST(d.blk, "overlap merges three", { 7, 18 }, { 30, 2 });
	assert_int_equal(ntm_blk_badblocks_add(d.blk, 25, 5), 0);
	LIST(d.blk, "bridging merges all", { 7, 25 });

	/* The count is the total, whatever the room; only what fits is written. */
	assert_int_equal(ntm_blk_badblocks_add(d.blk, 100, 1), 0);
	assert_int_equal(ntm_blk_badblocks_add(d.blk, 200, 1), 0);
	memset(out, 0xab, sizeof(out));
	assert_int_equal(ntm_blk_badblocks(d.blk, out, 1), 3);
	assert_int_equal(out[0].sector, 7);
	assert_int_equal(out[0].count, 25);
	assert_int_equal(out[1].sector, 0xababababababababull);
	assert_int_equal(ntm_blk_badblocks_clear(d.blk, 100, 101), 0);
	LIST(d.blk, "clear 100..200", { 7, 25 });

	assert_int_equal(ntm_blk_badblocks_clear(d.blk, 15, 2), 0);
	LIST(d.blk, "clearing the middle splits", { 7, 8 }, { 17, 15 });
	assert_int_equal(ntm_blk_badblocks_clear(d.blk, 0, 8), 0);
	LIST(d.blk, "clearing the front", { 8, 7 }, { 17, 15 });
	assert_int_equal(ntm_blk_badblocks_clear(d.blk, 16, 1), 0);
	LIST(d.blk, "clearing a good sector", { 8, 7 }, { 17, 15 });
	assert_int_equal(ntm_blk_badblocks_clear(d.blk, 30, 10), 0);
	LIST(d.blk, "clearing the tail", { 8, 7 }, { 17, 13 });
	assert_int_equal(ntm_blk_badblocks_clear(d.blk, 10, 25), 0);
	LIST(d.blk, "clearing across ranges", { 8, 2 });

	/* Both ends of the device. */
	assert_int_equal(ntm_blk_badblocks_add(d.blk, 0, 1), 0);
	assert_int_equal(ntm_blk_badblocks_add(d.blk, limit - 1, 1), 0);
	LIST(d.blk, "first and last sector", { 0, 1 }, { 8, 2 }, { limit - 1, 1 });
	read_must_fail(&d, DEV_SIZE - 4096, 4096, "read the last 4k sector");
	read_must_fail(&d, 0, 4096, "read the first 4k sector");

	/* Out of range: -ERANGE, nothing changes. */
	{
		static const struct {
			uint64_t sector, count;
		} bad[] = {
			{ DEV_SIZE / BB, 1 }, { DEV_SIZE / BB - 1, 2 },
			{ 0, DEV_SIZE / BB + 1 }, { UINT64_MAX, 1 },
			{ UINT64_MAX - 1, 3 }, { 8, UINT64_MAX },
			{ DEV_SIZE / BB + 1000, 5 },
		};

		for (size_t i = 0; i < ARRAY_SIZE(bad); i++)
			for (int clear = 0; clear < 2; clear++) {
				char what[96];
				int ret;

				snprintf(what, sizeof(what), "%s sector %llu count %llu",
					 clear ? "clear" : "add",
					 (unsigned long long)bad[i].sector,
					 (unsigned long long)bad[i].count);
				errmsg_reset();
				ret = clear ? ntm_blk_badblocks_clear(d.blk,
						bad[i].sector, bad[i].count) :
					      ntm_blk_badblocks_add(d.blk,
						bad[i].sector, bad[i].count);
				check_ret(ret, -ERANGE, what);
				check_errmsg_new(what);
				LIST(d.blk, what, { 0, 1 }, { 8, 2 }, { limit - 1, 1 });
			}
	}
	/* A zero count is refused too. */
	assert_true(ntm_blk_badblocks_add(d.blk, 50, 0) < 0);
	assert_true(ntm_blk_badblocks_clear(d.blk, 8, 0) < 0);
	LIST(d.blk, "after zero counts", { 0, 1 }, { 8, 2 }, { limit - 1, 1 });
	assert_int_equal(ntm_blk_badblocks_clear(d.blk, 0, limit), 0);
	LIST_EMPTY(d.blk, "clear everything");
	read_must_work(&d, 0, DEV_SIZE, d.base, "read all after clearing");
	dev_close(&d);
}

/*
 * An empty list, as a device starts: a count query with no room (what
 * `ntmem blk badblocks` does first) and a copy into room. Then the same
 * no-room query once there are entries.
 */
static void test_badblocks_empty(void **state)
{
	struct ntm_badblock out[2];
	struct dev d;

	(void)state;
	dev_anon(&d, DEV_SIZE, 512);
	assert_int_equal(ntm_blk_badblocks(d.blk, NULL, 0), 0);
	memset(out, 0xab, sizeof(out));
	assert_int_equal(ntm_blk_badblocks(d.blk, out, 2), 0);
	assert_int_equal(out[0].sector, 0xababababababababull);
	LIST_EMPTY(d.blk, "a new device");
	assert_int_equal(ntm_blk_badblocks_add(d.blk, 8, 2), 0);
	assert_int_equal(ntm_blk_badblocks_add(d.blk, 20, 1), 0);
	assert_int_equal(ntm_blk_badblocks(d.blk, NULL, 0), 2);
	LIST(d.blk, "two ranges", { 8, 2 }, { 20, 1 });
	assert_int_equal(ntm_blk_badblocks_clear(d.blk, 0, 32), 0);
	LIST_EMPTY(d.blk, "cleared");
	assert_int_equal(ntm_blk_badblocks(d.blk, NULL, 0), 0);
	dev_close(&d);
}

/* Random adds and clears over 96 sectors against a bitmap. */
static void test_badblocks_model(void **state)
{
	enum { SPAN = 96, OPS = 3000 };
	bool model[SPAN] = { false };
	uint64_t st = 600;
	struct dev d;

	(void)state;
	dev_anon(&d, 64 * 1024, 512);	/* 128 sectors: the end is in range */
	for (int op = 0; op < OPS; op++) {
		uint64_t s = tu_rand(&st) % SPAN;
		uint64_t n = 1 + tu_rand(&st) % (tu_rand(&st) % 4 ? 4 : 24);
		bool add = tu_rand(&st) % 5 < 3;
		struct ntm_badblock want[SPAN], got[SPAN];
		size_t nw = 0, ng;
		char what[64];

		if (s + n > SPAN)
			n = SPAN - s;
		snprintf(what, sizeof(what), "op %d: %s %llu+%llu", op,
			 add ? "add" : "clear", (unsigned long long)s,
			 (unsigned long long)n);
		assert_int_equal(add ? ntm_blk_badblocks_add(d.blk, s, n) :
			ntm_blk_badblocks_clear(d.blk, s, n), 0);
		for (uint64_t i = s; i < s + n; i++)
			model[i] = add;
		for (size_t i = 0; i < SPAN; i++) {
			if (!model[i])
				continue;
			if (nw && want[nw - 1].sector + want[nw - 1].count == i)
				want[nw - 1].count++;
			else
				want[nw++] = (struct ntm_badblock){ i, 1 };
		}
		ng = ntm_blk_badblocks(d.blk, got, SPAN);
		if (ng != nw || memcmp(got, want, nw * sizeof(*want)))
			expect_list(d.blk, want, nw, what);	/* reports */
		/* The I/O path agrees with the list on one random sector. */
		if (op % 50 == 0) {
			uint64_t q = tu_rand(&st) % SPAN;
			unsigned char buf[512];
			ssize_t r = ntm_blk_read(d.blk, buf, 512, q * 512);

			if (r != (model[q] ? -EIO : 512))
				fail_msg("%s: read of sector %llu returned %zd", what,
					 (unsigned long long)q, r);
		}
	}
	dev_close(&d);
}

/* --- bad sectors: persistence ------------------------------------------- */

static char dir[64];

static int dir_setup(void **state)
{
	(void)state;
	return tu_scratch_dir(dir, sizeof(dir), "ntmem-test-blk");
}

static int dir_teardown(void **state)
{
	(void)state;
	return tu_remove_tree(dir);
}

static bool exists(const char *path)
{
	struct stat st;

	return stat(path, &st) == 0;
}

static void test_badblocks_persist(void **state)
{
	char path[128], list[160], custom[160];
	struct ntm_blk_config cfg = { 0 };
	unsigned char buf[512];
	struct dev d = { 0 };
	FILE *f;
	unsigned long long s, n;

	(void)state;
	tu_skip_on_dax(dir, "an emulated namespace (its bad sectors are in "
		       "PATH.badblocks; an fsdax one's are the kernel's)");
	snprintf(path, sizeof(path), "%s/emu", dir);
	snprintf(list, sizeof(list), "%s.badblocks", path);
	assert_int_equal(ntm_ns_create(&d.ns, path, DEV_SIZE, PG, NTM_NS_EMULATE), 0);
	assert_int_equal(ntm_ns_kind(d.ns), NTM_NS_EMULATED);
	assert_string_equal(ntm_ns_kind_name(ntm_ns_kind(d.ns)), "emulated");
	dev_open_cfg(&d, NULL);
	assert_false(exists(list));	/* nothing to keep yet */
	assert_int_equal(ntm_blk_badblocks_add(d.blk, 8, 2), 0);
	assert_int_equal(ntm_blk_badblocks_add(d.blk, 100, 3), 0);
	assert_true(exists(list));
	dev_close(&d);

	/* "sector count" per line, as sysfs has it. */
	f = fopen(list, "r");
	assert_non_null(f);
	assert_int_equal(fscanf(f, "%llu %llu", &s, &n), 2);
	assert_true(s == 8 && n == 2);
	assert_int_equal(fscanf(f, "%llu %llu", &s, &n), 2);
	assert_true(s == 100 && n == 3);
	assert_int_equal(fscanf(f, "%llu %llu", &s, &n), EOF);
	fclose(f);

	/* Reopened: the same list, and reads still fail. */
	assert_int_equal(ntm_ns_open(&d.ns, path, NTM_NS_EMULATE), 0);
	assert_int_equal(ntm_ns_kind(d.ns), NTM_NS_EMULATED);
	dev_open_cfg(&d, NULL);
	LIST(d.blk, "after reopening", { 8, 2 }, { 100, 3 });
	check_ret(ntm_blk_read(d.blk, buf, 512, 9 * 512), -EIO, "read 9 reopened");
	check_ret(ntm_blk_read(d.blk, buf, 512, 7 * 512), 512, "read 7 reopened");
	/* A clear by write persists too. */
	memset(buf, 0x42, sizeof(buf));
	check_ret(ntm_blk_write(d.blk, buf, 512, 8 * 512, NTM_BLK_FUA), 512,
		  "write 8");
	dev_close(&d);
	assert_int_equal(ntm_ns_open(&d.ns, path, NTM_NS_EMULATE), 0);
	dev_open_cfg(&d, NULL);
	LIST(d.blk, "after the write and reopening", { 9, 1 }, { 100, 3 });
	check_ret(ntm_blk_read(d.blk, buf, 512, 8 * 512), 512, "read 8");
	for (size_t i = 0; i < sizeof(buf); i++)
		assert_int_equal(buf[i], 0x42);
	assert_int_equal(ntm_blk_badblocks_clear(d.blk, 0, DEV_SIZE / BB), 0);
	dev_close(&d);
	/*
	 * Cleared: an empty list file, and reads that work after reopening
	 * (the list itself is read back empty in badblocks_empty).
	 */
	f = fopen(list, "r");
	assert_non_null(f);
	assert_int_equal(fgetc(f), EOF);
	fclose(f);
	assert_int_equal(ntm_ns_open(&d.ns, path, NTM_NS_EMULATE), 0);
	dev_open_cfg(&d, NULL);
	check_ret(ntm_blk_read(d.blk, buf, 512, 9 * 512), 512, "read 9 cleared");
	check_ret(ntm_blk_read(d.blk, buf, 512, 100 * 512), 512,
		  "read 100 cleared");
	dev_close(&d);

	/* An explicit badblocks_path instead of the one beside the file. */
	snprintf(custom, sizeof(custom), "%s/custom.list", dir);
	cfg.badblocks_path = custom;
	assert_int_equal(ntm_ns_open(&d.ns, path, NTM_NS_EMULATE), 0);
	dev_open_cfg(&d, &cfg);
	assert_int_equal(ntm_blk_badblocks_add(d.blk, 40, 4), 0);
	dev_close(&d);
	assert_true(exists(custom));
	assert_int_equal(ntm_ns_open(&d.ns, path, NTM_NS_EMULATE), 0);
	dev_open_cfg(&d, &cfg);
	LIST(d.blk, "custom list reopened", { 40, 4 });
	dev_close(&d);
	/* The default list did not get the custom one's entry. */
	f = fopen(list, "r");
	assert_non_null(f);
	assert_int_equal(fgetc(f), EOF);
	fclose(f);
	assert_int_equal(ntm_ns_open(&d.ns, path, NTM_NS_EMULATE), 0);
	dev_open_cfg(&d, NULL);
	check_ret(ntm_blk_read(d.blk, buf, 512, 40 * 512), 512,
		  "read 40 with the default list");
	dev_close(&d);
	unlink(custom);
	unlink(list);
	unlink(path);

	/* A temporary namespace keeps its list in memory only. */
	snprintf(path, sizeof(path), "%s/temp", dir);
	snprintf(list, sizeof(list), "%s.badblocks", path);
	assert_int_equal(ntm_ns_create(&d.ns, path, DEV_SIZE, PG,
				       NTM_NS_EMULATE | NTM_NS_TEMPORARY), 0);
	dev_open_cfg(&d, NULL);
	assert_int_equal(ntm_blk_badblocks_add(d.blk, 8, 2), 0);
	LIST(d.blk, "temporary", { 8, 2 });
	check_ret(ntm_blk_read(d.blk, buf, 512, 8 * 512), -EIO, "read 8 (temp)");
	assert_false(exists(list));
	dev_close(&d);
	assert_false(exists(list));
	assert_false(exists(path));
}

/* --- FUA and flush ------------------------------------------------------ */

/*
 * FUA and flush promise durability and ordering, which a process cannot
 * observe without cutting the power; what can be checked is that they
 * succeed on every kind of namespace and leave the data in place.
 */
static void fua_flush_on(struct dev *d, const char *file, const char *kind)
{
	unsigned char w[3 * 512], r[3 * 512];
	char what[96];

	for (int i = 0; i < 16; i++) {
		uint64_t off = (uint64_t)(i * 37 % 64) * 4096 + (i % 8) * 512;
		int fd;

		snprintf(what, sizeof(what), "%s: FUA write %d at %llu", kind, i,
			 (unsigned long long)off);
		pattern(w, sizeof(w), 700 + (uint64_t)i, off);
		check_ret(ntm_blk_write(d->blk, w, sizeof(w), off,
					i % 2 ? NTM_BLK_FUA : 0), sizeof(w), what);
		if (i % 4 == 0)
			assert_int_equal(ntm_blk_flush(d->blk), 0);
		check_ret(ntm_blk_read(d->blk, r, sizeof(r), off), sizeof(r), what);
		check_buf(r, w, sizeof(r), what);
		check_media(d, off, w, sizeof(w), what);
		if (!file)
			continue;
		/* The file itself holds it (the page cache is the file here). */
		fd = open(file, O_RDONLY | O_CLOEXEC);
		assert_true(fd >= 0);
		assert_int_equal(pread(fd, r, sizeof(r), (off_t)off), (ssize_t)sizeof(r));
		close(fd);
		check_buf(r, w, sizeof(r), what);
	}
	assert_int_equal(ntm_blk_flush(d->blk), 0);
}

static void test_fua_flush(void **state)
{
	char path[128];
	struct dev d;

	(void)state;
	dev_anon(&d, DEV_SIZE, 512);
	fua_flush_on(&d, NULL, "anon");
	dev_close(&d);

	memset(&d, 0, sizeof(d));
	snprintf(path, sizeof(path), "%s/fua-emu", dir);
	assert_int_equal(ntm_ns_create(&d.ns, path, DEV_SIZE, PG, NTM_NS_EMULATE), 0);
	dev_open_cfg(&d, NULL);
	fua_flush_on(&d, path, "emulated");
	dev_close(&d);
	unlink(path);

	/* A plain file: FUA and flush go through msync(). */
	memset(&d, 0, sizeof(d));
	snprintf(path, sizeof(path), "%s/file", dir);
	assert_int_equal(ntm_ns_create(&d.ns, path, DEV_SIZE, PG, 0), 0);
	dev_open_cfg(&d, NULL);
	fua_flush_on(&d, path, ntm_ns_kind_name(ntm_ns_kind(d.ns)));
	dev_close(&d);
	unlink(path);
}

/* --- threads ------------------------------------------------------------ */

#define ROUNDS 24

struct writer {
	struct ntm_blk *blk;
	unsigned ss;
	size_t first, count;	/* sectors of this thread's half */
	uint64_t tag;
	pthread_barrier_t *start;
	char err[160];
};

static void *writer(void *p)
{
	struct writer *w = p;
	unsigned char *data = malloc(2 * w->ss), *back = malloc(2 * w->ss);
	uint64_t st = w->tag;

	pthread_barrier_wait(w->start);
	if (!data || !back) {
		snprintf(w->err, sizeof(w->err), "no memory");
		goto out;
	}
	for (int round = 0; round < ROUNDS; round++) {
		/* Every sector once per round, from a random starting point. */
		size_t rot = tu_rand(&st) % w->count;

		for (size_t k = 0; k < w->count; k++) {
			size_t s = w->first + (k + rot) % w->count;
			uint64_t off = (uint64_t)s * w->ss;
			unsigned flags = k % 5 == 0 ? NTM_BLK_FUA : 0;
			ssize_t r;

			pattern(data, w->ss, w->tag * 1000 + (uint64_t)round, s);
			if (k % 3 == 0) {
				struct iovec iov[2] = { { data, 100 },
							{ data + 100, w->ss - 100 } };

				r = ntm_blk_writev(w->blk, iov, 2, off, flags);
			} else {
				r = ntm_blk_write(w->blk, data, w->ss, off, flags);
			}
			if (r != (ssize_t)w->ss) {
				snprintf(w->err, sizeof(w->err), "round %d sector %zu: "
					 "write returned %zd", round, s, r);
				goto out;
			}
			r = ntm_blk_read(w->blk, back, w->ss, off);
			if (r != (ssize_t)w->ss || memcmp(back, data, w->ss)) {
				snprintf(w->err, sizeof(w->err), "round %d sector %zu: "
					 "read back %zd, %s", round, s, r,
					 r == (ssize_t)w->ss ? "wrong data" : "failed");
				goto out;
			}
		}
		if (round % 8 == 7 && ntm_blk_flush(w->blk)) {
			snprintf(w->err, sizeof(w->err), "flush failed");
			goto out;
		}
	}
out:
	free(data);
	free(back);
	return NULL;
}

static void test_threads(void **state)
{
	(void)state;
	for (size_t k = 0; k < ARRAY_SIZE(sector_sizes); k++) {
		const unsigned ss = sector_sizes[k];
		const size_t nsec = DEV_SIZE / ss;
		unsigned char *want = malloc(ss), *got = malloc(ss);
		struct writer w[2];
		pthread_barrier_t start;
		pthread_t t[2];
		struct dev d;

		assert_non_null(want);
		assert_non_null(got);
		dev_anon(&d, DEV_SIZE, ss);
		assert_int_equal(pthread_barrier_init(&start, NULL, 2), 0);
		for (int i = 0; i < 2; i++) {
			w[i] = (struct writer){ .blk = d.blk, .ss = ss,
						.first = i * nsec / 2,
						.count = nsec / 2,
						.tag = 800 + (uint64_t)i * 7 + ss,
						.start = &start };
			assert_int_equal(pthread_create(&t[i], NULL, writer, &w[i]), 0);
		}
		for (int i = 0; i < 2; i++)
			pthread_join(t[i], NULL);
		pthread_barrier_destroy(&start);
		for (int i = 0; i < 2; i++)
			if (w[i].err[0])
				fail_msg("%u-byte sectors, thread %d: %s", ss, i,
					 w[i].err);
		for (size_t s = 0; s < nsec; s++) {
			const struct writer *o = &w[s < nsec / 2 ? 0 : 1];
			char what[64];

			snprintf(what, sizeof(what), "%u-byte sector %zu at the end",
				 ss, s);
			pattern(want, ss, o->tag * 1000 + ROUNDS - 1, s);
			check_ret(ntm_blk_read(d.blk, got, ss, s * ss), ss, what);
			check_buf(got, want, ss, what);
		}
		dev_close(&d);
		free(want);
		free(got);
	}
}

/* --- hardened ----------------------------------------------------------- */

/* Good I/O over [@from, size): every page, single and multi-page requests. */
static void hardened_io_works(struct dev *d, uint64_t from, const char *what)
{
	const size_t len = d->size - from;
	unsigned char *w = malloc(len), *r = malloc(len);
	char msg[96];

	assert_non_null(w);
	assert_non_null(r);
	pattern(w, len, 900, from);
	for (uint64_t off = from; off < d->size; off += PG) {
		snprintf(msg, sizeof(msg), "%s: page at %llu", what,
			 (unsigned long long)off);
		check_ret(ntm_blk_write(d->blk, w + (off - from), PG, off,
					NTM_BLK_FUA), PG, msg);
	}
	check_media(d, from, w, len, what);
	memset(r, 0, len);
	check_ret(ntm_blk_read(d->blk, r, len, from), len, what);
	check_buf(r, w, len, what);
	/* Sector-sized, straddling a page boundary. */
	pattern(w, 2 * d->ss, 901, from);
	check_ret(ntm_blk_write(d->blk, w, 2 * d->ss, from + PG - d->ss, 0),
		  2 * d->ss, what);
	check_ret(ntm_blk_read(d->blk, r, 2 * d->ss, from + PG - d->ss),
		  2 * d->ss, what);
	check_buf(r, w, 2 * d->ss, what);
	free(w);
	free(r);
}

static void hardened_open(struct dev *d, struct ntm_memmap *mm, unsigned ss)
{
	struct ntm_blk_config cfg = { .sector_size = ss, .hardened = true,
				      .memmap = mm };

	dev_open_cfg(d, &cfg);
}

static void test_hardened_good(void **state)
{
	struct ntm_memmap_config mem = { .desc_size = 64, .threads = 1 };
	struct ntm_memmap_config dev = { .desc_size = 64, .threads = 1,
					 .place = NTM_MEMMAP_DEV };
	struct ntm_memmap *mm;
	struct dev d;

	(void)state;
	for (size_t k = 0; k < ARRAY_SIZE(sector_sizes); k++) {
		const unsigned ss = sector_sizes[k];
		uint64_t first;

		memset(&d, 0, sizeof(d));
		assert_int_equal(ntm_ns_anon(&d.ns, DEV_SIZE, PG), 0);
		hardened_open(&d, NULL, ss);
		hardened_io_works(&d, 0, "hardened, no memmap");
		ntm_blk_close(d.blk);

		/* map=mem, owner: the namespace */
		assert_int_equal(ntm_memmap_create(&mm, d.base, d.size, d.ns, &mem), 0);
		assert_int_equal(ntm_memmap_init(mm), 0);
		hardened_open(&d, mm, ss);
		hardened_io_works(&d, 0, "hardened, map=mem");
		ntm_blk_close(d.blk);
		ntm_memmap_destroy(mm);

		/* map=dev: the memmap takes the first pages; I/O after them. */
		assert_int_equal(ntm_memmap_create(&mm, d.base, d.size, d.ns, &dev), 0);
		assert_int_equal(ntm_memmap_init(mm), 0);
		first = ntm_memmap_first_pfn(mm) * (uint64_t)PG;
		assert_true(first > 0 && first < d.size);
		hardened_open(&d, mm, ss);
		hardened_io_works(&d, first, "hardened, map=dev");
		ntm_blk_close(d.blk);
		ntm_memmap_destroy(mm);
		ntm_ns_close(d.ns);
	}
}

static void test_hardened_foreign_owner(void **state)
{
	struct ntm_memmap_config mem = { .desc_size = 64, .threads = 1 };
	static const int other = 1;	/* not the namespace */
	struct ntm_memmap *mm;
	unsigned char *buf = malloc(3 * PG), *snap;
	struct dev d = { 0 };

	(void)state;
	assert_non_null(buf);
	assert_int_equal(ntm_ns_anon(&d.ns, DEV_SIZE, PG), 0);
	assert_int_equal(ntm_memmap_create(&mm, ntm_ns_base(d.ns), DEV_SIZE,
					   &other, &mem), 0);
	assert_int_equal(ntm_memmap_init(mm), 0);
	hardened_open(&d, mm, 512);
	dev_fill(&d, 950);
	snap = snapshot(&d);
	{
		const struct {
			uint64_t off;
			size_t len;
		} reqs[] = {
			{ 0, 512 }, { PG, PG }, { PG - 512, 1024 },
			{ DEV_SIZE - 3 * PG, 3 * PG }, { DEV_SIZE - 512, 512 },
		};

		for (size_t i = 0; i < ARRAY_SIZE(reqs); i++) {
			char what[96];

			snprintf(what, sizeof(what), "foreign owner: write %zu at %llu",
				 reqs[i].len, (unsigned long long)reqs[i].off);
			memset(buf, 0x11, 3 * PG);
			errmsg_reset();
			check_ret(ntm_blk_write(d.blk, buf, reqs[i].len, reqs[i].off,
						i % 2 ? NTM_BLK_FUA : 0), -EFAULT, what);
			check_errmsg_new(what);
			check_unchanged(&d, snap, what);

			snprintf(what, sizeof(what), "foreign owner: read %zu at %llu",
				 reqs[i].len, (unsigned long long)reqs[i].off);
			errmsg_reset();
			check_ret(ntm_blk_read(d.blk, buf, reqs[i].len, reqs[i].off),
				  -EFAULT, what);
			check_errmsg_new(what);
			for (size_t j = 0; j < 3 * PG; j++)
				if (buf[j] != 0x11)
					fail_msg("%s: buffer byte %zu written", what, j);
		}
	}
	ntm_blk_close(d.blk);

	/* Not hardened: the memmap is not consulted, the same I/O works. */
	{
		struct ntm_blk_config cfg = { .sector_size = 512, .memmap = mm };

		dev_open_cfg(&d, &cfg);
		memset(buf, 0x22, PG);
		check_ret(ntm_blk_write(d.blk, buf, PG, PG, 0), PG,
			  "not hardened, foreign memmap: write");
		check_media(&d, PG, buf, PG, "not hardened, foreign memmap");
		check_ret(ntm_blk_read(d.blk, buf + PG, PG, 0), PG,
			  "not hardened, foreign memmap: read");
		check_buf(buf + PG, snap, PG, "not hardened, foreign memmap: read");
		ntm_blk_close(d.blk);
	}
	ntm_memmap_destroy(mm);
	ntm_ns_close(d.ns);
	free(snap);
	free(buf);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_open_sector_size),
		cmocka_unit_test(test_open_config_reserved),
		cmocka_unit_test(test_roundtrip_512),
		cmocka_unit_test(test_roundtrip_4096),
		cmocka_unit_test(test_vectored),
		cmocka_unit_test(test_rejected),
		cmocka_unit_test(test_badblocks_io_512),
		cmocka_unit_test(test_badblocks_io_4096),
		cmocka_unit_test(test_badblocks_list),
		cmocka_unit_test(test_badblocks_model),
		cmocka_unit_test(test_badblocks_persist),
		cmocka_unit_test(test_fua_flush),
		cmocka_unit_test(test_threads),
		cmocka_unit_test(test_hardened_good),
		cmocka_unit_test(test_hardened_foreign_owner),
		/* Last: an abort here (UBSan) leaves the others' results. */
		cmocka_unit_test(test_badblocks_empty),
	};

	return cmocka_run_group_tests_name("blk", tests, dir_setup, dir_teardown);
}
