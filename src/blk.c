// SPDX-License-Identifier: MIT
/*
 * blk.c - a block device on a namespace: validate a request once, then
 * copy page by page without further checks (unless hardened); bad sectors
 * kept as a sorted list of ranges. See ntmem/blk.h.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <limits.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "internal.h"
#include "ntmem/blk.h"
#include "ntmem/mc.h"

#define CHUNK 4096u	/* the kernel copies pmem a page at a time */

struct ntm_blk {
	struct ntm_ns *ns;
	uint8_t *base;
	uint64_t size;
	unsigned sector;
	bool hardened;
	bool readonly;		/* a read-only namespace: no writes, no injects */
	bool managed;		/* the library owns the bad-sector list */
	bool cpu_durable;	/* FUA/flush need only a drain */
	const struct ntm_memmap *memmap;
	char *bb_path;		/* where the list persists, or NULL */
	/*
	 * The bad-sector list. nbad is read without the lock on every
	 * request: an empty list costs one load, and a request that races
	 * with an inject sees the list before or after it, as with the
	 * kernel's seqlock-protected badblocks.
	 */
	pthread_rwlock_t bb_lock;
	size_t nbad, cap;
	struct ntm_badblock *bad;
};

/* --- the bad-sector list ------------------------------------------------ */

static bool bb_overlaps_locked(const struct ntm_blk *b, uint64_t s, uint64_t n)
{
	for (size_t i = 0; i < b->nbad && b->bad[i].sector < s + n; i++)
		if (b->bad[i].sector + b->bad[i].count > s)
			return true;
	return false;
}

static bool bb_overlaps(struct ntm_blk *b, uint64_t off, uint64_t len)
{
	bool hit;

	if (__atomic_load_n(&b->nbad, __ATOMIC_ACQUIRE) == 0)
		return false;
	pthread_rwlock_rdlock(&b->bb_lock);
	hit = bb_overlaps_locked(b, off / NTM_BADBLOCK_SECTOR,
				 (len + NTM_BADBLOCK_SECTOR - 1) / NTM_BADBLOCK_SECTOR);
	pthread_rwlock_unlock(&b->bb_lock);
	return hit;
}

/* Rebuild the list from a bitmap-free merge: add [s, s+n), keep sorted. */
static int bb_insert_locked(struct ntm_blk *b, uint64_t s, uint64_t n)
{
	size_t i = 0, j;

	if (b->nbad == b->cap) {
		size_t cap = b->cap ? 2 * b->cap : 16;
		struct ntm_badblock *bad = realloc(b->bad, cap * sizeof(*bad));

		if (!bad)
			return -ENOMEM;
		b->bad = bad;
		b->cap = cap;
	}
	while (i < b->nbad && b->bad[i].sector + b->bad[i].count < s)
		i++;
	/* Merge every range that overlaps or touches [s, s + n). */
	for (j = i; j < b->nbad && b->bad[j].sector <= s + n; j++) {
		uint64_t end = b->bad[j].sector + b->bad[j].count;

		if (b->bad[j].sector < s)
			n += s - b->bad[j].sector, s = b->bad[j].sector;
		if (end > s + n)
			n = end - s;
	}
	memmove(&b->bad[i + 1], &b->bad[j], (b->nbad - j) * sizeof(*b->bad));
	b->bad[i] = (struct ntm_badblock){ s, n };
	__atomic_store_n(&b->nbad, b->nbad - (j - i) + 1, __ATOMIC_RELEASE);
	return 0;
}

static int bb_remove_locked(struct ntm_blk *b, uint64_t s, uint64_t n)
{
	struct ntm_badblock *out = malloc((b->nbad + 1) * sizeof(*out));
	size_t k = 0;

	if (!out)
		return -ENOMEM;
	for (size_t i = 0; i < b->nbad; i++) {
		uint64_t bs = b->bad[i].sector, be = bs + b->bad[i].count;

		if (be <= s || bs >= s + n) {
			out[k++] = b->bad[i];
			continue;
		}
		if (bs < s)	/* the part before the cleared range */
			out[k++] = (struct ntm_badblock){ bs, s - bs };
		if (be > s + n)	/* the part after it */
			out[k++] = (struct ntm_badblock){ s + n, be - (s + n) };
	}
	free(b->bad);
	b->bad = out;
	b->cap = b->nbad + 1;
	__atomic_store_n(&b->nbad, k, __ATOMIC_RELEASE);
	return 0;
}

/* Write the list to bb_path: "sector count" per line, as sysfs does. */
static int bb_save_locked(const struct ntm_blk *b)
{
	char tmp[PATH_MAX];
	FILE *f;

	if (!b->bb_path)
		return 0;
	snprintf(tmp, sizeof(tmp), "%s.tmp", b->bb_path);
	f = fopen(tmp, "w");
	if (!f)
		return ntm_error(-errno, "badblocks '%s': cannot write", tmp);
	for (size_t i = 0; i < b->nbad; i++)
		fprintf(f, "%llu %llu\n", (unsigned long long)b->bad[i].sector,
			(unsigned long long)b->bad[i].count);
	if (fclose(f) || rename(tmp, b->bb_path))
		return ntm_error(-errno, "badblocks '%s': cannot write", b->bb_path);
	return 0;
}

static int bb_load(struct ntm_blk *b, const char *path)
{
	unsigned long long s, n;
	FILE *f = fopen(path, "r");
	int ret = 0;

	if (!f)
		return errno == ENOENT ? 0 : ntm_error(-errno, "badblocks '%s': "
						       "cannot read", path);
	while (!ret && fscanf(f, "%llu %llu", &s, &n) == 2) {
		uint64_t limit = b->size / NTM_BADBLOCK_SECTOR;

		/* Entries past the device (a list from a larger one) are dropped. */
		if (s >= limit)
			continue;
		if (n > limit - s)
			n = limit - s;
		if (n)
			ret = bb_insert_locked(b, s, n);
	}
	fclose(f);
	return ret;
}

static int bb_change(struct ntm_blk *b, uint64_t sector, uint64_t count, bool add)
{
	uint64_t limit = b->size / NTM_BADBLOCK_SECTOR;
	int ret;

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
	pthread_rwlock_wrlock(&b->bb_lock);
	ret = add ? bb_insert_locked(b, sector, count)
		  : bb_remove_locked(b, sector, count);
	if (!ret)
		ret = bb_save_locked(b);
	pthread_rwlock_unlock(&b->bb_lock);
	return ret == -ENOMEM ? ntm_error(ret, "badblocks: no memory") : ret;
}

int ntm_blk_badblocks_add(struct ntm_blk *b, uint64_t sector, uint64_t count)
{
	return bb_change(b, sector, count, true);
}

int ntm_blk_badblocks_clear(struct ntm_blk *b, uint64_t sector, uint64_t count)
{
	return bb_change(b, sector, count, false);
}

size_t ntm_blk_badblocks(struct ntm_blk *b, struct ntm_badblock *out, size_t max)
{
	size_t n;

	pthread_rwlock_rdlock(&b->bb_lock);
	n = b->nbad;
	if (n && max)
		memcpy(out, b->bad, (n < max ? n : max) * sizeof(*out));
	pthread_rwlock_unlock(&b->bb_lock);
	return n;
}

static int bb_add_cb(void *arg, uint64_t sector, uint64_t count)
{
	return bb_insert_locked(arg, sector, count);
}

/* --- open / close ------------------------------------------------------- */

int ntm_blk_open(struct ntm_blk **out, struct ntm_ns *ns,
		 const struct ntm_blk_config *cfg)
{
	const struct ntm_blk_config defaults = { 0 };
	enum ntm_ns_kind kind;
	struct ntm_blk *b;
	const char *path;
	int ret;

	if (!out || !ns)
		return ntm_error(-EINVAL, "ns: NULL");
	if (!cfg)
		cfg = &defaults;
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
	b->cpu_durable = ntm_ns_cpu_durable(ns) || ntm_ns_kind(ns) == NTM_NS_ANON;
	kind = ntm_ns_kind(ns);
	b->managed = kind != NTM_NS_DEVDAX && kind != NTM_NS_FSDAX;
	pthread_rwlock_init(&b->bb_lock, NULL);
	if (b->sector != 512 && b->sector != 4096) {
		ret = ntm_error(-EINVAL, "sector_size %u: 512 or 4096",
				cfg->sector_size);
		goto out_free;
	}
	if (b->size % b->sector) {
		ret = ntm_error(-EINVAL, "ns: size %llu is not a multiple of the "
				"sector size %u", (unsigned long long)b->size,
				b->sector);
		goto out_free;
	}
	path = cfg->badblocks_path;
	if (!path && b->managed && !ntm_ns_is_temporary(ns) && *ntm_ns_path(ns)) {
		if (asprintf(&b->bb_path, "%s.badblocks", ntm_ns_path(ns)) < 0) {
			b->bb_path = NULL;
			ret = ntm_error(-ENOMEM, "blk: no memory");
			goto out_free;
		}
	} else if (path) {
		b->bb_path = strdup(path);
	}
	if (b->bb_path) {
		ret = bb_load(b, b->bb_path);
		if (ret)
			goto out_free;
	}
	if (!b->managed) {
		struct stat st;

		/* The platform's list is read, never written. */
		free(b->bb_path);
		b->bb_path = NULL;
		if (kind == NTM_NS_DEVDAX && stat(ntm_ns_path(ns), &st) == 0) {
			ret = ntm_badblocks_devdax("/sys", st.st_rdev, b->size,
						   bb_add_cb, b);
			if (ret) {
				ret = ntm_error(ret, "badblocks: cannot read the "
						"region's list in sysfs");
				goto out_free;
			}
		}
	}
	*out = b;
	return 0;

out_free:
	free(b->bb_path);
	free(b->bad);
	pthread_rwlock_destroy(&b->bb_lock);
	free(b);
	return ret;
}

void ntm_blk_close(struct ntm_blk *b)
{
	if (!b)
		return;
	free(b->bb_path);
	free(b->bad);
	pthread_rwlock_destroy(&b->bb_lock);
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

static ssize_t do_read(struct ntm_blk *b, const struct iovec *iov, int iovcnt,
		       size_t len, uint64_t off)
{
	uint64_t pos = off;

	if (bb_overlaps(b, off, len))
		return ntm_error(-EIO, "offset %llu length %zu: bad sector",
				 (unsigned long long)off, len);
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

static ssize_t do_write(struct ntm_blk *b, const struct iovec *iov, int iovcnt,
			size_t len, uint64_t off, unsigned flags)
{
	uint64_t pos = off;

	if (flags & ~NTM_BLK_FUA)
		return ntm_error(-EINVAL, "flags: unknown bits 0x%x", flags);
	if (b->readonly)
		return ntm_error(-EROFS, "offset %llu: the namespace is read-only",
				 (unsigned long long)off);
	if (b->hardened && check_pages(b, off, len))
		return -EFAULT;
	if (bb_overlaps(b, off, len)) {
		/* Writing a bad sector clears it, as the pmem driver does. */
		int ret = ntm_blk_badblocks_clear(b, off / NTM_BADBLOCK_SECTOR,
						  len / NTM_BADBLOCK_SECTOR);

		if (ret)
			return ret == -EOPNOTSUPP ? ntm_error(-EIO, "offset %llu: "
					"bad sector on a real device",
					(unsigned long long)off) : ret;
	}
	for (int v = 0; v < iovcnt; v++) {
		const uint8_t *src = iov[v].iov_base;

		for (size_t left = iov[v].iov_len; left;) {
			size_t n = chunk_at(pos, left);

			(ntm_memcpy_flush)(b->base + pos, src, n);
			src += n, pos += n, left -= n;
		}
	}
	if (flags & NTM_BLK_FUA) {
		int ret;

		if (b->cpu_durable) {
			/*
			 * ntm_memcpy_flush left no dirty line: one SFENCE orders
			 * the NT stores and write-backs before we return.
			 */
			ntm_arch_drain();
			return (ssize_t)len;
		}
		ret = ntm_ns_persist(b->ns, b->base + off, len);
		if (ret)
			return ret;
	}
	return (ssize_t)len;
}

/* Total length of @iov, or -EINVAL. */
static ssize_t iov_total(const struct iovec *iov, int iovcnt)
{
	size_t len = 0;

	if (!iov || iovcnt <= 0 || iovcnt > IOV_MAX)
		return ntm_error(-EINVAL, "iovcnt %d: 1 to %d vectors", iovcnt,
				 IOV_MAX);
	for (int i = 0; i < iovcnt; i++) {
		if (iov[i].iov_len > SSIZE_MAX - len)
			return ntm_error(-EINVAL, "iov: total length overflows");
		len += iov[i].iov_len;
	}
	return (ssize_t)len;
}

ssize_t ntm_blk_readv(struct ntm_blk *b, const struct iovec *iov, int iovcnt,
		      uint64_t off)
{
	ssize_t len = iov_total(iov, iovcnt);
	int ret;

	if (len < 0)
		return len;
	ret = check_request(b, off, (size_t)len);
	return ret ? ret : do_read(b, iov, iovcnt, (size_t)len, off);
}

ssize_t ntm_blk_writev(struct ntm_blk *b, const struct iovec *iov, int iovcnt,
		       uint64_t off, unsigned flags)
{
	ssize_t len = iov_total(iov, iovcnt);
	int ret;

	if (len < 0)
		return len;
	ret = check_request(b, off, (size_t)len);
	return ret ? ret : do_write(b, iov, iovcnt, (size_t)len, off, flags);
}

ssize_t ntm_blk_read(struct ntm_blk *b, void *buf, size_t len, uint64_t off)
{
	struct iovec iov = { buf, len };

	return ntm_blk_readv(b, &iov, 1, off);
}

ssize_t ntm_blk_write(struct ntm_blk *b, const void *buf, size_t len,
		      uint64_t off, unsigned flags)
{
	struct iovec iov = { (void *)buf, len };

	return ntm_blk_writev(b, &iov, 1, off, flags);
}

int ntm_blk_flush(struct ntm_blk *b)
{
	if (b->cpu_durable) {
		/* Orders every earlier NT store and write-back of this CPU. */
		ntm_arch_drain();
		return 0;
	}
	return ntm_ns_persist(b->ns, b->base, b->size);
}
