// SPDX-License-Identifier: MIT
/*
 * fuzz_blk.c - the block device against an in-memory model.
 *
 * A sequence of requests decoded from the input - read, readv, write,
 * writev, FUA write, flush, bad-sector add and clear, list queries - runs
 * on a 64 KiB namespace (anonymous, or an emulated file in a scratch
 * directory under /dev/shm whose bad-sector list is kept in a file), and
 * the same requests run on a model: a byte array and a bitmap of bad
 * 512-byte sectors. After every request the namespace's bytes and the
 * bad-sector list must equal the model's:
 *   - a rejected request (-EINVAL, -ERANGE) changes nothing, a read's
 *     buffer included, and its error is one of those the model allows;
 *   - a read touching a bad sector is -EIO and leaves its buffer alone;
 *   - a write lands and clears the bad sectors it covers;
 *   - add/clear out of range is -ERANGE and changes nothing.
 * With a file, the list must also survive closing and reopening the device.
 *
 * Input: one byte of setup (sector size, anonymous or file), then requests
 * of a few bytes each until the input runs out.
 */
#define _GNU_SOURCE	/* nftw() in fuzz.h */
#include <errno.h>
#include <limits.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/uio.h>

#include <ntmem.h>
#include "fuzz.h"

#define DEV (64u * 1024)
#define BB NTM_BADBLOCK_SECTOR
#define NBB (DEV / BB)		/* 128 bad-sector units */
#define MAX_OPS 64
#define MAX_IOV 4

static unsigned char mem[DEV];	/* the model's media */
static bool bad[NBB];		/* the model's bad-sector list */
static unsigned char buf[DEV + 4096], before[DEV + 4096];

/* Error bits: which errors the model allows for one request. */
#define E_INVAL 1u
#define E_RANGE 2u
#define E_IO 4u

static unsigned err_bit(long r)
{
	return r == -EINVAL ? E_INVAL : r == -ERANGE ? E_RANGE : r == -EIO ? E_IO : 0;
}

/* Compare the device's list with the model's bitmap, as ranges. */
static void check_list(struct ntm_blk *blk, const char *after)
{
	struct ntm_badblock got[NBB + 1];
	size_t n = ntm_blk_badblocks(blk, got, NBB + 1), k = 0;

	for (size_t s = 0; s < NBB;) {
		size_t e = s;

		if (!bad[s]) {
			s++;
			continue;
		}
		while (e < NBB && bad[e])
			e++;
		FZ_CHECK(k < n, "after %s: the list has %zu ranges, the model "
			 "more (next %zu+%zu)", after, n, s, e - s);
		FZ_CHECK(got[k].sector == s && got[k].count == e - s,
			 "after %s: range %zu is %llu+%llu, the model's %zu+%zu",
			 after, k, (unsigned long long)got[k].sector,
			 (unsigned long long)got[k].count, s, e - s);
		k++;
		s = e;
	}
	FZ_CHECK(k == n, "after %s: the list has %zu ranges, the model %zu",
		 after, n, k);
}

static void check_media(struct ntm_ns *ns, const char *after)
{
	const unsigned char *m = ntm_ns_base(ns);

	if (memcmp(m, mem, DEV) == 0)
		return;
	for (size_t i = 0; i < DEV; i++)
		FZ_CHECK(m[i] == mem[i], "after %s: byte %zu of the device is "
			 "0x%02x, the model's 0x%02x", after, i, m[i], mem[i]);
}

/* An offset: mostly sector-aligned and near the device, sometimes not. */
static uint64_t take_off(struct fz *in, unsigned ss)
{
	uint8_t sel = fz_u8(in);

	switch (sel & 3) {
	case 0:
		return fz_uint(in, 2) % (DEV + 2 * ss);	/* any byte */
	case 3:
		return UINT64_MAX - fz_u8(in) * (uint64_t)ss + 1; /* wraps */
	default:
		return (uint64_t)(fz_u8(in) % (DEV / ss + 2)) * ss;
	}
}

static size_t take_len(struct fz *in, unsigned ss)
{
	uint8_t sel = fz_u8(in);

	switch (sel & 3) {
	case 0:
		return fz_uint(in, 2) % (DEV + 2 * ss + 1);
	case 3:
		return SIZE_MAX - fz_u8(in);
	default:
		return (size_t)(fz_u8(in) % 9) * ss;
	}
}

/* What the model says a request of @len at @off gets (0: it runs). */
static unsigned request_errors(uint64_t off, size_t len, unsigned ss)
{
	unsigned e = 0;

	if (len == 0 || off % ss || len % ss)
		e |= E_INVAL;
	if (off > DEV || len > DEV - off)
		e |= E_RANGE;
	/* Like readv(2): a total that ssize_t cannot return is invalid. */
	if (len > SSIZE_MAX)
		e |= E_INVAL;
	return e;
}

static bool model_bad(uint64_t off, size_t len)
{
	for (uint64_t s = off / BB; s < (off + len + BB - 1) / BB; s++)
		if (bad[s])
			return true;
	return false;
}

/*
 * Cut @len bytes at @base into 1..MAX_IOV segments with lengths from the
 * input (empty ones too) and return how many; *@pass is the count to hand
 * the device, sometimes one it must refuse before reading any segment
 * (then *@bad_count is E_INVAL).
 */
static int take_iov(struct fz *in, struct iovec *iov, unsigned char *base,
		    size_t len, int *pass, unsigned *bad_count)
{
	uint8_t sel = fz_u8(in);
	int cnt = 1 + sel % MAX_IOV;
	size_t left = len;

	for (int i = 0; i < cnt; i++) {
		size_t l = i + 1 == cnt ? left : (left ? fz_uint(in, 2) % (left + 1) : 0);

		iov[i] = (struct iovec){ base + (len - left), l };
		left -= l;
	}
	*pass = cnt;
	*bad_count = 0;
	if (sel & 0x80) {
		*bad_count = E_INVAL;
		*pass = sel & 0x40 ? 0 : sel & 0x20 ? -1 : IOV_MAX + 1;
	}
	return cnt;
}

static void do_read(struct fz *in, struct ntm_blk *blk, unsigned ss,
		    bool vectored)
{
	uint64_t off = take_off(in, ss);
	size_t len = take_len(in, ss), room = len <= sizeof(buf) ? len : sizeof(buf);
	unsigned allowed, badcnt = 0;
	struct iovec iov[MAX_IOV];
	long r;

	/* A length past the buffer is refused before anything is copied. */
	memset(buf, 0xe7, sizeof(buf));
	memcpy(before, buf, sizeof(buf));
	if (vectored) {
		int pass, cnt = take_iov(in, iov, buf, room, &pass, &badcnt);

		/* The total must be @len: the last segment takes the rest. */
		iov[cnt - 1].iov_len += len - room;
		r = ntm_blk_readv(blk, iov, pass, off);
	} else {
		r = ntm_blk_read(blk, buf, len, off);
	}
	allowed = badcnt | request_errors(off, len, ss);
	if (!allowed && model_bad(off, len))
		allowed = E_IO;
	if (allowed) {
		FZ_CHECK(r < 0 && (err_bit(r) & allowed), "read %zu at %llu: "
			 "returned %ld, expected error mask 0x%x", len,
			 (unsigned long long)off, r, allowed);
		FZ_CHECK(memcmp(buf, before, sizeof(buf)) == 0, "read %zu at "
			 "%llu: failed (%ld) but wrote the buffer", len,
			 (unsigned long long)off, r);
		return;
	}
	FZ_CHECK(r == (long)len, "read %zu at %llu: returned %ld", len,
		 (unsigned long long)off, r);
	FZ_CHECK(memcmp(buf, mem + off, len) == 0, "read %zu at %llu: wrong data",
		 len, (unsigned long long)off);
	FZ_CHECK(memcmp(buf + len, before + len, sizeof(buf) - len) == 0,
		 "read %zu at %llu: wrote past the length", len,
		 (unsigned long long)off);
}

static void do_write(struct fz *in, struct ntm_blk *blk, unsigned ss,
		     bool vectored, unsigned flags)
{
	uint64_t off = take_off(in, ss);
	size_t len = take_len(in, ss), room = len <= sizeof(buf) ? len : sizeof(buf);
	uint8_t seed = fz_u8(in);
	unsigned allowed, badcnt = 0;
	struct iovec iov[MAX_IOV];
	long r;

	for (size_t i = 0; i < sizeof(buf); i++)
		buf[i] = (unsigned char)(i * 31 + seed * 7 + 1);
	if (vectored) {
		int pass, cnt = take_iov(in, iov, buf, room, &pass, &badcnt);

		iov[cnt - 1].iov_len += len - room;
		r = ntm_blk_writev(blk, iov, pass, off, flags);
	} else {
		r = ntm_blk_write(blk, buf, len, off, flags);
	}
	allowed = badcnt | request_errors(off, len, ss);
	if (flags & ~NTM_BLK_FUA)
		allowed |= E_INVAL;
	if (allowed) {
		FZ_CHECK(r < 0 && (err_bit(r) & allowed), "write %zu at %llu "
			 "flags 0x%x: returned %ld, expected error mask 0x%x",
			 len, (unsigned long long)off, flags, r, allowed);
		return;
	}
	FZ_CHECK(r == (long)len, "write %zu at %llu flags 0x%x: returned %ld",
		 len, (unsigned long long)off, flags, r);
	memcpy(mem + off, buf, len);
	for (uint64_t s = off / BB; s < (off + len) / BB; s++)
		bad[s] = false;
}

static void do_badblocks(struct fz *in, struct ntm_blk *blk, bool add)
{
	uint8_t sel = fz_u8(in);
	uint64_t s = sel & 1 ? fz_uint(in, 8) : fz_u8(in) % (NBB + 2);
	uint64_t n = sel & 2 ? fz_uint(in, 8) : fz_u8(in) % 24;
	bool refused = n == 0 || s >= NBB || n > NBB - s;
	int r = add ? ntm_blk_badblocks_add(blk, s, n)
		    : ntm_blk_badblocks_clear(blk, s, n);

	if (refused) {
		FZ_CHECK(r == -ERANGE, "%s %llu+%llu: returned %d, not -ERANGE",
			 add ? "add" : "clear", (unsigned long long)s,
			 (unsigned long long)n, r);
		return;
	}
	FZ_CHECK(r == 0, "%s %llu+%llu: returned %d", add ? "add" : "clear",
		 (unsigned long long)s, (unsigned long long)n, r);
	for (uint64_t i = s; i < s + n; i++)
		bad[i] = add;
}

/* ntm_blk_badblocks() with little room: the count, and only what fits. */
static void do_query(struct fz *in, struct ntm_blk *blk)
{
	struct ntm_badblock out[8 + 1];
	size_t max = fz_u8(in) % 9, n, want = 0;

	memset(out, 0xcd, sizeof(out));
	n = ntm_blk_badblocks(blk, max ? out : NULL, max);
	for (size_t s = 0; s < NBB; s++)
		want += bad[s] && (s == 0 || !bad[s - 1]);
	FZ_CHECK(n == want, "query with room for %zu: %zu ranges, the model %zu",
		 max, n, want);
	for (size_t i = (n < max ? n : max); i < sizeof(out) / sizeof(out[0]); i++) {
		const unsigned char *b = (const unsigned char *)&out[i];

		for (size_t k = 0; k < sizeof(out[i]); k++)
			FZ_CHECK(b[k] == 0xcd, "query with room for %zu wrote "
				 "entry %zu", max, i);
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const char *const names[] = {
		"read", "readv", "write", "writev", "FUA write", "FUA writev",
		"flush", "add", "clear", "query", "odd flags write",
	};
	struct fz in = { data, size };
	uint8_t setup = fz_u8(&in);
	unsigned ss = setup & 1 ? 4096 : 512;
	bool file = setup & 2;
	struct ntm_blk_config cfg = { .sector_size = ss };
	char path[128] = "";
	struct ntm_ns *ns;
	struct ntm_blk *blk;

	if (file) {
		snprintf(path, sizeof(path), "%s/ns", fz_scratch("blk"));
		FZ_CHECK(ntm_ns_create(&ns, path, DEV, 4096, NTM_NS_EMULATE) == 0,
			 "cannot create %s: %s", path, ntm_errmsg());
	} else {
		FZ_CHECK(ntm_ns_anon(&ns, DEV, 4096) == 0, "no anonymous namespace");
	}
	FZ_CHECK(ntm_blk_open(&blk, ns, &cfg) == 0, "open: %s", ntm_errmsg());
	memset(mem, 0, sizeof(mem));
	memset(bad, 0, sizeof(bad));

	for (int i = 0; i < MAX_OPS && in.n; i++) {
		unsigned kind = fz_u8(&in) % (sizeof(names) / sizeof(names[0]));

		switch (kind) {
		case 0: do_read(&in, blk, ss, false); break;
		case 1: do_read(&in, blk, ss, true); break;
		case 2: do_write(&in, blk, ss, false, 0); break;
		case 3: do_write(&in, blk, ss, true, 0); break;
		case 4: do_write(&in, blk, ss, false, NTM_BLK_FUA); break;
		case 5: do_write(&in, blk, ss, true, NTM_BLK_FUA); break;
		case 6:
			FZ_CHECK(ntm_blk_flush(blk) == 0, "flush: %s", ntm_errmsg());
			break;
		case 7: do_badblocks(&in, blk, true); break;
		case 8: do_badblocks(&in, blk, false); break;
		case 9: do_query(&in, blk); break;
		default:
			do_write(&in, blk, ss, false, 1u << (1 + fz_u8(&in) % 31));
			break;
		}
		check_media(ns, names[kind]);
		check_list(blk, names[kind]);
	}
	ntm_blk_close(blk);
	if (file) {
		/* The list was kept beside the file: a new device reads it back. */
		FZ_CHECK(ntm_blk_open(&blk, ns, &cfg) == 0, "reopen: %s",
			 ntm_errmsg());
		check_list(blk, "reopening");
		ntm_blk_close(blk);
	}
	ntm_ns_close(ns);
	if (file)
		fz_scratch_clear();
	return 0;
}
