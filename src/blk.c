// SPDX-License-Identifier: MIT
/*
 * blk.c - a block device on a namespace: validate a request once, then
 * copy page by page without further checks (unless hardened), failing
 * reads of bad sectors (the list: badblocks_shared.c). See ntmem/blk.h.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/statvfs.h>

#include "config_check.h"
#include "badblocks.h"
#include "dispatch.h"
#include "error.h"
#include "fault.h"
#include "ns_internal.h"
#include "persist_domain.h"
#include "ntmem/blk.h"
#include "ntmem/btt.h"
#include "ntmem/mc.h"
#include "ntmem/memmap.h"

#define CHUNK 4096u	/* the kernel copies pmem a page at a time */
/*
 * Space is reserved in 2 MiB steps: one madvise() per 2 MiB written for
 * the first time costs nothing next to the copies, and a huge page's worth
 * is what a DAX file system allocates at once anyway.
 */
#define RESERVE_CHUNK (2u << 20)

struct ntm_blk {
	struct ntm_ns *ns;
	uint8_t *base;
	uint64_t size;
	unsigned sector;
	bool hardened;
	bool readonly;		/* a read-only namespace: no writes, no injects */
	bool managed;		/* the library owns the bad-sector list */
	const struct ntm_memmap *memmap;
	struct ntm_bb_shared bad;	/* the bad-sector list, kept in a file */
	/*
	 * A file-backed namespace may be sparse: the first store into a hole
	 * allocates, and on a full file system that store is a SIGBUS. Each
	 * RESERVE_CHUNK of the device is populated (allocated, contents
	 * unchanged) before its first write, so a write that cannot get space
	 * fails before it changes anything. One bit per chunk, set once.
	 */
	bool reserve;
	uint64_t *reserved;
	/*
	 * BTT mode: every sector goes through it; size and sector are its
	 * external blocks, and base/size above describe them, not the media.
	 */
	struct ntm_btt *btt;
};
/* --- the bad-sector list ------------------------------------------------ */

/*
 * Add or clear [sector, sector + count) where the library owns the list:
 * an emulated namespace's, not the platform's list of a real device.
 */
static int bb_change(struct ntm_blk *b, uint64_t sector, uint64_t count, bool add)
{
	uint64_t limit = b->size / NTM_BADBLOCK_SECTOR;

	if (!b->managed)
		return ntm_error(-EOPNOTSUPP, "badblocks: a real device's list "
				 "belongs to the platform (ndctl)");
	if (b->readonly)
		return ntm_error(-EROFS, "badblocks: the namespace is read-only");
	if (count == 0 || sector >= limit || count > limit - sector)
		return ntm_error(-ERANGE, "sector %llu count %llu: outside the "
				 "%llu sectors of the device",
				 (unsigned long long)sector,
				 (unsigned long long)count,
				 (unsigned long long)limit);
	return ntm_bb_shared_change(&b->bad, sector, count, add);
}

int ntm_blk_badblocks_add(struct ntm_blk *b, uint64_t sector, uint64_t count)
{
	if (!b)
		return ntm_error(-EINVAL, "blk: NULL");
	return bb_change(b, sector, count, true);
}

int ntm_blk_badblocks_clear(struct ntm_blk *b, uint64_t sector, uint64_t count)
{
	if (!b)
		return ntm_error(-EINVAL, "blk: NULL");
	return bb_change(b, sector, count, false);
}

size_t ntm_blk_badblocks(struct ntm_blk *b, struct ntm_badblock *out, size_t max)
{
	if (!b)
		return 0;
	return ntm_bb_shared_get(&b->bad, out, max);
}

/* --- open / close ------------------------------------------------------- */

/* The BTT's persist for a namespace behind a page cache: ends in msync. */
static int btt_persist(void *arg, const void *p, size_t n)
{
	return ntm_ns_persist(arg, p, n);
}

/*
 * Lay out or open the BTT over the whole namespace and make the device
 * its external blocks. 0 or -errno with the message set.
 */
static int open_btt(struct ntm_blk *b, const struct ntm_blk_config *cfg)
{
	struct ntm_btt_config bc = {
		/* On open the media's; checked against @sector_size below. */
		.lbasize = cfg->btt_create ? cfg->sector_size : 0,
		.nfree = cfg->btt_nfree,
		.flags = (cfg->btt_create ? NTM_BTT_CREATE : 0) |
			 (b->readonly ? NTM_BTT_READONLY : 0) |
			 (cfg->flags & NTM_BLK_BTT_V2 ? NTM_BTT_V2 : 0),
	};
	uint32_t lbasize;
	int ret;

	if (cfg->hardened)
		return ntm_error(-EINVAL, "hardened: not with a BTT, whose "
				 "copies are its own");
	if (cfg->btt_create && b->readonly)
		return ntm_error(-EROFS, "btt: cannot lay out a BTT on a "
				 "read-only namespace");
	/*
	 * The BTT writes back and fences itself; where that is not yet
	 * durable (a page cache, a virtio-pmem region) every persist of it
	 * goes through the namespace, which also refuses where no durable
	 * path exists.
	 */
	if (ntm_ns_persist_beyond_cpu(b->ns)) {
		bc.persist = btt_persist;
		bc.persist_arg = b->ns;
	}
	/*
	 * The BTT may put any sector anywhere: allocate the whole file now,
	 * so a full file system fails the open instead of a later store
	 * (SIGBUS). The BTT's writes run no fault guard of ours.
	 */
	if (b->reserve) {
		ret = ntm_ns_reserve(b->ns, 0, b->size, "a BTT");
		if (ret)
			return ret;
		b->reserve = false;
	}
	ret = ntm_btt_open(&b->btt, b->base, b->size, &bc);
	if (ret)
		return ret;
	lbasize = ntm_btt_lbasize(b->btt);
	if (lbasize != 512 && lbasize != 4096)
		return ntm_error(-EINVAL, "btt: lbasize %u: ntm_blk takes 512 "
				 "or 4096", lbasize);
	if (cfg->sector_size && cfg->sector_size != lbasize)
		return ntm_error(-EINVAL, "sector_size %u: the BTT's lbasize is "
				 "%u", cfg->sector_size, lbasize);
	b->sector = lbasize;
	b->size = ntm_btt_nlba(b->btt) * lbasize;
	b->readonly = b->readonly || ntm_btt_readonly(b->btt);
	b->hardened = false;
	return 0;
}

int ntm_blk_open(struct ntm_blk **out, struct ntm_ns *ns,
		 const struct ntm_blk_config *cfg)
{
	const struct ntm_blk_config defaults = { 0 };
	enum ntm_ns_kind kind;
	struct ntm_blk *b;
	int ret;

	if (!out)
		return ntm_error(-EINVAL, "blk: NULL");
	if (!ns)
		return ntm_error(-EINVAL, "ns: NULL");
	if (!cfg)
		cfg = &defaults;
	/* Before anything is allocated: a refused config changes nothing. */
	ret = NTM_CONFIG_CHECK(cfg, NTM_BLK_BTT_V2);
	if (ret)
		return ret;
	if ((cfg->flags & NTM_BLK_BTT_V2) && !cfg->btt)
		return ntm_error(-EINVAL, "cfg->flags: NTM_BLK_BTT_V2 without "
				 "cfg->btt");
	b = calloc(1, sizeof(*b));
	if (!b)
		return ntm_error(-ENOMEM, "blk: no memory");
	b->ns = ns;
	b->base = ntm_ns_base(ns);
	b->size = ntm_ns_size(ns);
	b->sector = cfg->sector_size ? cfg->sector_size : 512;
	b->hardened = cfg->hardened;
	b->readonly = ntm_ns_is_readonly(ns);
	b->memmap = cfg->memmap;
	kind = ntm_ns_kind(ns);
	b->managed = kind != NTM_NS_DEVDAX && kind != NTM_NS_FSDAX;
	/* Only a file's blocks can be missing; devdax and anon have none. */
	b->reserve = !b->readonly && kind != NTM_NS_DEVDAX && kind != NTM_NS_ANON;
	ntm_bb_shared_init(&b->bad);
	if (b->sector != 512 && b->sector != 4096) {
		ret = ntm_error(-EINVAL, "sector_size %u: 512 or 4096",
				cfg->sector_size);
		goto out_free;
	}
	if (cfg->btt) {
		ret = open_btt(b, cfg);
		if (ret)
			goto out_free;
	} else if (b->size % b->sector) {
		ret = ntm_error(-EINVAL, "ns: size %llu is not a multiple of the "
				"sector size %u", (unsigned long long)b->size,
				b->sector);
		goto out_free;
	}
	if (b->reserve) {
		b->reserved = calloc((b->size + 64ull * RESERVE_CHUNK - 1) /
				     (64ull * RESERVE_CHUNK), sizeof(uint64_t));
		if (!b->reserved) {
			ret = ntm_error(-ENOMEM, "blk: no memory");
			goto out_free;
		}
	}
	/* An emulated namespace keeps its list in a file, if it has one. */
	ret = 0;
	if (b->managed && cfg->badblocks_path) {
		ret = ntm_bb_shared_load(&b->bad, cfg->badblocks_path,
					 b->size / NTM_BADBLOCK_SECTOR);
	} else if (b->managed && !ntm_ns_is_temporary(ns) && *ntm_ns_path(ns)) {
		char *path;

		if (asprintf(&path, "%s.badblocks", ntm_ns_path(ns)) < 0) {
			ret = ntm_error(-ENOMEM, "blk: no memory");
			goto out_free;
		}
		ret = ntm_bb_shared_load(&b->bad, path,
					 b->size / NTM_BADBLOCK_SECTOR);
		free(path);
	}
	if (ret)
		goto out_free;
	/* Under a BTT the raw media's list means nothing to the sectors. */
	if (kind == NTM_NS_DEVDAX && !b->btt) {
		struct stat st;

		/* The platform's list is read, never written. */
		if (stat(ntm_ns_path(ns), &st) == 0) {
			ret = ntm_bb_shared_load_devdax(&b->bad, ntm_sysfs_root,
							st.st_rdev, b->size);
			if (ret)
				goto out_free;
		}
	}
	/* An fsdax file's: its block device's, mapped into the file. */
	if (kind == NTM_NS_FSDAX && !b->btt && *ntm_ns_path(ns)) {
		ret = ntm_bb_shared_load_fsdax(&b->bad, ntm_sysfs_root,
					       ntm_ns_path(ns), b->size);
		if (ret)
			goto out_free;
	}
	*out = b;
	return 0;

out_free:
	ntm_blk_close(b);
	return ret;
}

void ntm_blk_close(struct ntm_blk *b)
{
	if (!b)
		return;
	ntm_btt_close(b->btt);
	free(b->reserved);
	ntm_bb_shared_destroy(&b->bad);
	free(b);
}

uint64_t ntm_blk_size(const struct ntm_blk *b)
{
	return b->size;
}

unsigned ntm_blk_sector_size(const struct ntm_blk *b)
{
	return b->sector;
}

/* --- requests ----------------------------------------------------------- */

/* The one bounds and alignment check of a request. */
static int check_request(const struct ntm_blk *b, uint64_t off, size_t len)
{
	if (len == 0 || off % b->sector || len % b->sector)
		return ntm_error(-EINVAL, "offset %llu length %zu: not a non-zero "
				 "multiple of the %u-byte sector",
				 (unsigned long long)off, len, b->sector);
	/* Written so that off + len cannot wrap. */
	if (off > b->size || len > b->size - off)
		return ntm_error(-ERANGE, "offset %llu length %zu: past the end "
				 "of the %llu-byte device",
				 (unsigned long long)off, len,
				 (unsigned long long)b->size);
	return 0;
}

/*
 * Hardened mode: the per-copy check the seed removed - bounds again, and
 * the page's descriptor (for map=dev it lives on the device itself).
 */
static int check_page(const struct ntm_blk *b, const uint8_t *p, size_t n)
{
	const struct ntm_page *page;
	uintptr_t rel = (uintptr_t)(p - b->base);

	if (p < b->base || rel + n > b->size)
		return ntm_error(-EFAULT, "hardened: copy at %p outside the device", p);
	if (!b->memmap)
		return 0;
	page = ntm_memmap_page(b->memmap, rel / NTM_PAGE_SIZE);
	/* Pages holding a map=dev memmap have no descriptor: that is fine. */
	if (page && (page->owner != b->ns || !(page->flags & NTM_PG_RESERVED)))
		return ntm_error(-EFAULT, "hardened: page %zu is not a device page "
				 "of this namespace", (size_t)(rel / NTM_PAGE_SIZE));
	return 0;
}

/* Bytes up to the next page boundary of the device, at most @left. */
static size_t chunk_at(uint64_t pos, size_t left)
{
	size_t room = CHUNK - (size_t)(pos % CHUNK);

	return left < room ? left : room;
}

/*
 * Hardened mode checks every page-sized copy of the request before the
 * first one runs, so a rejected request has written nothing.
 */
static int check_pages(const struct ntm_blk *b, uint64_t off, size_t len)
{
	for (uint64_t pos = off; pos < off + len;) {
		size_t n = chunk_at(pos, (size_t)(off + len - pos));
		int ret = check_page(b, b->base + pos, n);

		if (ret)
			return ret;
		pos += n;
	}
	return 0;
}

/* Where a request stands in its vectors. */
struct iov_cursor {
	const struct iovec *iov;
	int v;		/* current vector */
	size_t at;	/* bytes of it done */
};

/*
 * The next @n bytes of the vectors: a pointer into them when they are
 * contiguous there, else NULL and the cursor is left for iov_copy().
 */
static uint8_t *iov_take(struct iov_cursor *c, size_t n)
{
	uint8_t *p;

	while (c->iov[c->v].iov_len == c->at)	/* skip empty vectors */
		c->v++, c->at = 0;
	if (c->iov[c->v].iov_len - c->at < n)
		return NULL;
	p = (uint8_t *)c->iov[c->v].iov_base + c->at;
	c->at += n;
	return p;
}

/* Copy @n bytes between @buf and the vectors (a sector split across them). */
static void iov_copy(struct iov_cursor *c, uint8_t *buf, size_t n, bool to_iov)
{
	while (n) {
		size_t room = c->iov[c->v].iov_len - c->at;
		size_t k = room < n ? room : n;
		uint8_t *p = (uint8_t *)c->iov[c->v].iov_base + c->at;

		if (to_iov)
			memcpy(p, buf, k);
		else
			memcpy(buf, p, k);
		buf += k, n -= k, c->at += k;
		if (c->at == c->iov[c->v].iov_len)
			c->v++, c->at = 0;
	}
}

/*
 * A request in BTT mode: sector by sector on one lane the calling thread
 * holds for the whole request. A sector whose bytes span two vectors goes
 * through a bounce buffer; all others are copied straight to or from the
 * caller's memory by the BTT.
 */
static ssize_t btt_rw(struct ntm_blk *b, const struct iovec *iov, size_t len,
		      uint64_t off, bool write)
{
	uint8_t bounce[4096] __attribute__((aligned(64)));
	struct iov_cursor c = { iov, 0, 0 };
	uint64_t lba = off / b->sector, end = (off + len) / b->sector;
	unsigned lane = ntm_btt_lane_get(b->btt);
	int ret = 0;

	/* iov_total() made sure the vectors hold exactly @len bytes. */
	for (; lba < end && !ret; lba++) {
		uint8_t *p = iov_take(&c, b->sector);

		if (!p) {
			p = bounce;
			if (write)
				iov_copy(&c, p, b->sector, false);
		}
		ret = write ? ntm_btt_write(b->btt, lane, lba, p)
			    : ntm_btt_read(b->btt, lane, lba, p);
		if (!ret && !write && p == bounce)
			iov_copy(&c, p, b->sector, true);
	}
	ntm_btt_lane_put(b->btt, lane);
	return ret ? ret : (ssize_t)len;
}

static ssize_t do_read(struct ntm_blk *b, const struct iovec *iov, int iovcnt,
		       size_t len, uint64_t off)
{
	uint64_t pos = off;

	if (ntm_bb_shared_overlaps(&b->bad, off, len))
		return ntm_error(-EIO, "offset %llu length %zu: bad sector",
				 (unsigned long long)off, len);
	if (b->btt)
		return btt_rw(b, iov, len, off, false);
	if (b->hardened && check_pages(b, off, len))
		return -EFAULT;
	for (int v = 0; v < iovcnt; v++) {
		uint8_t *dst = iov[v].iov_base;

		for (size_t left = iov[v].iov_len; left;) {
			size_t n = chunk_at(pos, left);

			if (ntm_copy_mc(dst, b->base + pos, n))
				return ntm_error(-EIO, "offset %llu: media error",
						 (unsigned long long)pos);
			dst += n, pos += n, left -= n;
		}
	}
	return (ssize_t)len;
}

/*
 * What a write fault at @addr means: the file lost the page (truncated
 * underneath) or its file system has no block left for it.
 */
static int write_fault_error(const struct ntm_blk *b, uintptr_t addr)
{
	unsigned long long pos = addr - (uintptr_t)b->base;
	const char *path = ntm_ns_path(b->ns);
	struct statvfs vfs;
	struct stat st;

	if (*path && !ntm_ns_is_temporary(b->ns) && stat(path, &st) == 0 &&
	    (unsigned long long)st.st_size <= pos)
		return ntm_error(-EIO, "offset %llu: the file '%s' was truncated "
				 "to %lld bytes underneath", pos, path,
				 (long long)st.st_size);
	if (*path && statvfs(path, &vfs) == 0 &&
	    (uint64_t)vfs.f_bavail * vfs.f_frsize < RESERVE_CHUNK)
		return ntm_error(-ENOSPC, "offset %llu: no space left for the "
				 "file '%s'", pos, path);
	return ntm_error(-EIO, "offset %llu: the page cannot be written", pos);
}

/*
 * Allocate the backing of every RESERVE_CHUNK that [off, off + len) meets
 * and no write has reserved yet: MADV_POPULATE_WRITE faults the pages in
 * writable without changing their contents, and reports the SIGBUS of a
 * full file system or a truncated file as EFAULT instead of raising it.
 */
static int reserve_space(struct ntm_blk *b, uint64_t off, size_t len)
{
	for (uint64_t c = off / RESERVE_CHUNK; c <= (off + len - 1) / RESERVE_CHUNK;
	     c++) {
		uint64_t *word = &b->reserved[c / 64], bit = 1ull << (c % 64);
		uint64_t start = c * RESERVE_CHUNK;
		size_t n = b->size - start < RESERVE_CHUNK ? (size_t)(b->size - start)
							   : RESERVE_CHUNK;

		if (__atomic_load_n(word, __ATOMIC_RELAXED) & bit)
			continue;
		if (madvise(b->base + start, n, MADV_POPULATE_WRITE)) {
			/* Before Linux 5.14: the fault guard alone must do. */
			if (errno == EINVAL) {
				__atomic_store_n(&b->reserve, false, __ATOMIC_RELAXED);
				return 0;
			}
			if (errno == ENOMEM)
				return ntm_error(-ENOMEM, "offset %llu: no memory "
						 "to back the write",
						 (unsigned long long)start);
			return write_fault_error(b, (uintptr_t)(b->base + start));
		}
		__atomic_fetch_or(word, bit, __ATOMIC_RELAXED);
	}
	return 0;
}

/*
 * The page-sized copies of a write, with the copy the namespace's domain
 * needs (ntm_ns_copy(): none of them leaves a line that needs writing
 * back), so that ntm_ns_persist_copied() - a fence, msync() behind a page
 * cache - is all a FUA write or a flush adds.
 */
static void store(struct ntm_blk *b, const struct iovec *iov, int iovcnt,
		  uint64_t pos)
{
	ntm_ns_copy_fn copy = ntm_ns_copy(b->ns);

	for (int v = 0; v < iovcnt; v++) {
		const uint8_t *src = iov[v].iov_base;

		for (size_t left = iov[v].iov_len; left;) {
			size_t n = chunk_at(pos, left);

			copy(b->base + pos, src, n);
			src += n, pos += n, left -= n;
		}
	}
}

/*
 * The stores of a write, and its persist when @durable, under a fault
 * guard: a page that vanishes under the copy, or a write-back of one,
 * returns -EIO or -ENOSPC instead of killing the process.
 */
static int store_guarded(struct ntm_blk *b, const struct iovec *iov,
			 int iovcnt, uint64_t off, size_t len, bool durable)
{
	struct ntm_fault_guard g;
	int ret;

	if (sigsetjmp(g.env, 0))
		return write_fault_error(b, g.addr);
	ntm_fault_guard_arm(&g, b->base + off, len);
	store(b, iov, iovcnt, off);
	ret = durable ? ntm_ns_persist_copied(b->ns, b->base + off, len) : 0;
	ntm_fault_guard_disarm();
	return ret;
}

static ssize_t do_write(struct ntm_blk *b, const struct iovec *iov, int iovcnt,
			size_t len, uint64_t off, unsigned flags)
{
	bool clears;
	int ret;

	if (flags & ~NTM_BLK_FUA)
		return ntm_error(-EINVAL, "flags: unknown bits 0x%x", flags);
	if (b->readonly)
		return ntm_error(-EROFS, "offset %llu: the namespace is read-only",
				 (unsigned long long)off);
	if (b->hardened && check_pages(b, off, len))
		return -EFAULT;
	/* Writing a bad sector clears it, as the pmem driver does. */
	clears = ntm_bb_shared_overlaps(&b->bad, off, len);
	if (clears && !b->managed)
		return ntm_error(-EIO, "offset %llu: bad sector on a real device "
				 "(the platform clears it: ndctl clear-errors)",
				 (unsigned long long)off);
	if (__atomic_load_n(&b->reserve, __ATOMIC_RELAXED)) {
		ret = reserve_space(b, off, len);
		if (ret)
			return ret;
	}
	/*
	 * A bad sector is cleared only once the new data is durable: a crash
	 * in between leaves it bad (a read fails), never good with old data.
	 * A BTT write is durable when it returns.
	 */
	if (b->btt) {
		ssize_t n = btt_rw(b, iov, len, off, true);

		ret = n < 0 ? (int)n : 0;
	} else {
		ret = store_guarded(b, iov, iovcnt, off, len,
				    clears || (flags & NTM_BLK_FUA));
	}
	if (ret)
		return ret;
	if (clears) {
		ret = bb_change(b, off / NTM_BADBLOCK_SECTOR,
				len / NTM_BADBLOCK_SECTOR, false);
		if (ret)
			return ret;
	}
	return (ssize_t)len;
}

/* Total length of @iov, or -EINVAL naming the bad argument. */
static ssize_t iov_total(const struct iovec *iov, int iovcnt)
{
	size_t len = 0;

	if (iovcnt <= 0 || iovcnt > IOV_MAX)
		return ntm_error(-EINVAL, "iovcnt %d: 1 to %d vectors", iovcnt,
				 IOV_MAX);
	if (!iov)
		return ntm_error(-EINVAL, "iov: NULL");
	for (int i = 0; i < iovcnt; i++) {
		if (!iov[i].iov_base && iov[i].iov_len)
			return ntm_error(-EINVAL, "iov[%d].iov_base: NULL", i);
		if (iov[i].iov_len > SSIZE_MAX - len)
			return ntm_error(-EINVAL, "iov: total length overflows");
		len += iov[i].iov_len;
	}
	return (ssize_t)len;
}

ssize_t ntm_blk_readv(struct ntm_blk *b, const struct iovec *iov, int iovcnt,
		      uint64_t off)
{
	ssize_t len;
	int ret;

	if (!b)
		return ntm_error(-EINVAL, "blk: NULL");
	len = iov_total(iov, iovcnt);
	if (len < 0)
		return len;
	ret = check_request(b, off, (size_t)len);
	return ret ? ret : do_read(b, iov, iovcnt, (size_t)len, off);
}

ssize_t ntm_blk_writev(struct ntm_blk *b, const struct iovec *iov, int iovcnt,
		       uint64_t off, unsigned flags)
{
	ssize_t len;
	int ret;

	if (!b)
		return ntm_error(-EINVAL, "blk: NULL");
	len = iov_total(iov, iovcnt);
	if (len < 0)
		return len;
	ret = check_request(b, off, (size_t)len);
	return ret ? ret : do_write(b, iov, iovcnt, (size_t)len, off, flags);
}

ssize_t ntm_blk_read(struct ntm_blk *b, void *buf, size_t len, uint64_t off)
{
	struct iovec iov = { buf, len };

	if (!buf && len)
		return ntm_error(-EINVAL, "buf: NULL");
	return ntm_blk_readv(b, &iov, 1, off);
}

ssize_t ntm_blk_write(struct ntm_blk *b, const void *buf, size_t len,
		      uint64_t off, unsigned flags)
{
	struct iovec iov = { (void *)buf, len };

	if (!buf && len)
		return ntm_error(-EINVAL, "buf: NULL");
	return ntm_blk_writev(b, &iov, 1, off, flags);
}

int ntm_blk_flush(struct ntm_blk *b)
{
	struct ntm_fault_guard g;
	int ret;

	if (!b)
		return ntm_error(-EINVAL, "blk: NULL");
	/*
	 * Nothing to do over a BTT: every BTT write returned durable, its
	 * data, flog and map each persisted and fenced (msync too behind a
	 * page cache), so no store of this device is pending. (A fence here
	 * would order nothing; the mutation proof showed no test needs it.)
	 */
	if (b->btt)
		return 0;
	/* msync() of a truncated file's pages faults like a load. */
	if (sigsetjmp(g.env, 0))
		return write_fault_error(b, g.addr);
	ntm_fault_guard_arm(&g, b->base, b->size);
	ret = ntm_ns_persist_copied(b->ns, b->base, b->size);
	ntm_fault_guard_disarm();
	return ret;
}
