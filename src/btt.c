// SPDX-License-Identifier: MIT
/*
 * btt.c - atomic sectors over persistent memory: the Block Translation
 * Table of the NVDIMM namespace specification, in the layout the Linux
 * kernel and PMDK's libpmemblk write (btt_layout.h has the facts).
 *
 * A write never overwrites live data: it fills the lane's free block,
 * makes it durable, records {lba, old block, new block} in the lane's
 * flog entry (the sequence number written last), then switches the map
 * entry with one 4-byte store. A power cut before the flog's seq store is
 * durable leaves the old block mapped; after it, the next open finds the
 * flog entry and finishes the map update. Either way the sector is
 * entirely old or entirely new.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/random.h>
#include <unistd.h>

#include "config_check.h"
#include "btt_layout.h"
#include "dispatch.h"
#include "error.h"
#include "ntmem/btt.h"
#include "ntmem/mc.h"

uint64_t ntm_btt_max_arena = BTT_MAX_ARENA;
uint64_t ntm_btt_min_arena = BTT_MIN_ARENA;

#define RTT_IDLE UINT32_MAX	/* a read-tracking slot nobody reads from */
#define NMAP_LOCKS 256u		/* per-LBA map locks, hashed */
#define CACHE_LINE 64u

/*
 * Per-lane state is padded to a cache line each: lanes exist so that
 * threads do not wait for each other, and two lanes' words in one line
 * would still make every update of one bounce the line out of the other
 * thread's cache (measured: two writers' lane flags, flog state and
 * read-tracking slots shared lines).
 */
struct flog_rt {
	uint32_t lba, old_map, new_map, seq;	/* the current entry */
	unsigned next;		/* the slot (0/1) the next update goes to */
	uint32_t free;		/* the lane's free block */
} __attribute__((aligned(CACHE_LINE)));

struct lane_flag {
	_Atomic unsigned char busy;
} __attribute__((aligned(CACHE_LINE)));

struct rtt_slot {
	_Atomic uint32_t blk;	/* the block this lane's reader holds */
} __attribute__((aligned(CACHE_LINE)));

/* @n zeroed elements of @size bytes (a multiple of the line), line-aligned. */
static void *calloc_lines(size_t n, size_t size)
{
	void *p = aligned_alloc(CACHE_LINE, n * size);

	if (p)
		memset(p, 0, n * size);
	return p;
}

struct arena {
	uint64_t ext_start;	/* first external LBA of this arena */
	uint32_t external_nlba, internal_nlba, internal_lbasize, nfree;
	unsigned char *start;	/* the primary info block */
	unsigned char *data, *flog, *backup;
	uint32_t *map;
	struct flog_rt *flogs;	/* nfree entries, lane i uses entry i */
	struct rtt_slot *rtt;	/* per lane: the block its reader holds */
	uint8_t *suspect;	/* blocks referenced twice: reads fail */
	_Atomic bool bad;	/* metadata not trusted: no writes */
	/*
	 * The map was scanned (arena_ready()), or laid out by us. Open
	 * reads only the info blocks and the flog, so that it costs the
	 * same at 1 GiB and at 512 GiB; the pass over the map that keeps a
	 * flipped entry from returning another LBA's data is made before
	 * the arena's first read or write instead.
	 */
	_Atomic bool scanned;
};

struct map_lock {
	pthread_mutex_t m;
	char pad[64 - sizeof(pthread_mutex_t) % 64];
};

struct ntm_btt {
	unsigned char *base;
	size_t size;
	uint32_t lbasize;
	uint32_t nfree;		/* the smallest of all arenas */
	unsigned nlanes;
	unsigned narena;
	uint64_t nlba;
	struct arena *arenas;
	/*
	 * Asked for, or metadata not trusted. Set by whichever lane's write
	 * fails, under that lane's lock only, and read by every writer before
	 * it takes its own: atomic, like an arena's bad, so the failure is
	 * seen by the next write on any lane (turn_readonly()).
	 */
	_Atomic bool readonly;
	bool ro_flag;		/* NTM_BTT_READONLY: never write media */
	_Atomic bool laidout;	/* false: lazy, no layout on media yet */
	pthread_mutex_t layout_lock;
	struct lane_flag *lane_busy;
	struct map_lock locks[NMAP_LOCKS];
	uint8_t parent_uuid[16];
	bool check_parent;
	uint16_t major, minor;	/* what the media has, or what we write */
	bool want_v2;		/* NTM_BTT_V2: an existing BTT must be 2.0 */
	bool zeroed;		/* NTM_BTT_ZEROED: the map area reads zero */
	int (*persist)(void *arg, const void *p, size_t n);
	void *persist_arg;
};

/*
 * Stop all writes: the media holds a store nobody knows to be durable, or
 * metadata that cannot be trusted (@a's, when given). Release: what the
 * failing lane stored before is visible to whoever sees the flag.
 */
static void turn_readonly(struct ntm_btt *b, struct arena *a)
{
	if (a)
		atomic_store_explicit(&a->bad, true, memory_order_release);
	atomic_store_explicit(&b->readonly, true, memory_order_release);
}

static bool is_readonly(const struct ntm_btt *b)
{
	return atomic_load_explicit(&b->readonly, memory_order_acquire);
}

static bool arena_is_bad(const struct arena *a)
{
	return atomic_load_explicit(&a->bad, memory_order_acquire);
}

/* --- media access: every write goes through the recorded primitives --- */

/*
 * Make [p, p + n) durable. Without a callback the range was written with
 * ntm_memcpy_flush() (lines already written back) or non-temporal stores,
 * so one fence completes it: the SFENCE orders the write-backs and NT
 * stores before every later store, and that ordering is what the BTT's
 * protocol relies on (data before flog, flog before map).
 */
static int media_persist(struct ntm_btt *b, const void *p, size_t n)
{
	if (b->persist) {
		/* A failing callback's own message is kept (ntm_error_cause). */
		ntm_error_clear();
		return b->persist(b->persist_arg, p, n) ? -EIO : 0;
	}
	ntm_drain();
	return 0;
}

/*
 * The flog's and map's small updates: one aligned store (power-fail
 * atomic at 8 bytes and below) through the cache, then a write-back of
 * its line; the caller's persist fences. A non-temporal store of 8 or 4
 * bytes leaves a partial write-combining line whose eviction costs far
 * more than a cached store and a CLWB (PMDK writes these the same way):
 * measured, it made a BTT write ~1.5x slower.
 */
static void media_store8(void *dst, uint32_t lo, uint32_t hi)
{
	uint32_t w[2] = { htole32(lo), htole32(hi) };	/* lo at the lower address */
	uint64_t v;

	memcpy(&v, w, sizeof(v));
	__atomic_store_n((uint64_t *)dst, v, __ATOMIC_RELAXED);
	NTM_REC(NTM_REC_STORE, dst, 8);
	ntm_flush(dst, 8);
}

/* One little-endian 4-byte store (a map entry), written back the same way. */
static void media_store4(uint32_t *dst, uint32_t v)
{
	__atomic_store_n(dst, htole32(v), __ATOMIC_RELAXED);
	NTM_REC(NTM_REC_STORE, dst, 4);
	ntm_flush(dst, 4);
}

static uint32_t map_load(const uint32_t *e)
{
	return le32toh(__atomic_load_n(e, __ATOMIC_SEQ_CST));
}

static bool bit_test(const uint8_t *bm, uint32_t i)
{
	return bm[i / 8] & (1u << (i % 8));
}

static void bit_set(uint8_t *bm, uint32_t i)
{
	bm[i / 8] |= (uint8_t)(1u << (i % 8));
}

/* --- info blocks --- */

static void info_to_host(struct btt_info *i)
{
	i->flags = le32toh(i->flags);
	i->major = le16toh(i->major);
	i->minor = le16toh(i->minor);
	i->external_lbasize = le32toh(i->external_lbasize);
	i->external_nlba = le32toh(i->external_nlba);
	i->internal_lbasize = le32toh(i->internal_lbasize);
	i->internal_nlba = le32toh(i->internal_nlba);
	i->nfree = le32toh(i->nfree);
	i->infosize = le32toh(i->infosize);
	i->nextoff = le64toh(i->nextoff);
	i->dataoff = le64toh(i->dataoff);
	i->mapoff = le64toh(i->mapoff);
	i->flogoff = le64toh(i->flogoff);
	i->infooff = le64toh(i->infooff);
}

static void info_to_le(struct btt_info *i)
{
	i->flags = htole32(i->flags);
	i->major = htole16(i->major);
	i->minor = htole16(i->minor);
	i->external_lbasize = htole32(i->external_lbasize);
	i->external_nlba = htole32(i->external_nlba);
	i->internal_lbasize = htole32(i->internal_lbasize);
	i->internal_nlba = htole32(i->internal_nlba);
	i->nfree = htole32(i->nfree);
	i->infosize = htole32(i->infosize);
	i->nextoff = htole64(i->nextoff);
	i->dataoff = htole64(i->dataoff);
	i->mapoff = htole64(i->mapoff);
	i->flogoff = htole64(i->flogoff);
	i->infooff = htole64(i->infooff);
	i->checksum = htole64(btt_info_checksum(i));
}

static bool has_sig(const void *p)
{
	return !memcmp(p, BTT_SIG, BTT_SIG_LEN);
}

/*
 * Copy the info block at @p to @out (host order) and check every field
 * against the @room bytes the arena may span. Return NULL when sound,
 * else what is wrong.
 */
static const char *info_read(const struct ntm_btt *b, const void *p,
			     uint64_t room, struct btt_info *out)
{
	struct btt_info *i = out;
	uint64_t blocks;

	memcpy(i, p, sizeof(*i));
	if (!has_sig(i->sig))
		return "no signature";
	if (le64toh(i->checksum) != btt_info_checksum(i))
		return "checksum mismatch";
	if (b->check_parent && memcmp(i->parent_uuid, b->parent_uuid, 16))
		return "parent uuid mismatch";
	info_to_host(i);
	if (i->major != 1 && i->major != 2)
		return "unknown major version";
	if (i->infosize != BTT_INFO_SIZE)
		return "infosize is not 4096";
	if (!i->external_lbasize || i->internal_lbasize < i->external_lbasize ||
	    i->internal_lbasize > BTT_MAP_LBA)
		return "bad lbasize";
	if (!i->nfree || i->internal_nlba <= i->nfree ||
	    i->internal_nlba - 1 > BTT_MAP_LBA)
		return "bad nfree or internal_nlba";
	if (i->external_nlba != i->internal_nlba - i->nfree)
		return "external_nlba is not internal_nlba - nfree";
	/*
	 * The backup info block may lie past the end (infooff + 4096 >
	 * room) as long as everything else is in the range: a pool file
	 * whose last 4 KiB were cut off, which PMDK opens (it never reads
	 * the backup). Nothing writes the backup after the layout, so such
	 * an arena is safe to use; arena_load() and ntm_btt_check() know it
	 * is missing. Only the last arena: a middle one's nextoff points
	 * past the end and fails below.
	 */
	if (room < BTT_INFO_SIZE || i->infooff > room || i->infooff % 8)
		return "infooff outside the namespace";
	if (i->nextoff && (i->nextoff != i->infooff + BTT_INFO_SIZE ||
			   i->nextoff >= room))
		return "bad nextoff";
	if (i->dataoff < BTT_INFO_SIZE || i->dataoff > i->infooff)
		return "dataoff outside the arena";
	blocks = (uint64_t)i->internal_nlba * i->internal_lbasize;
	if (blocks > i->infooff - i->dataoff ||
	    i->mapoff < i->dataoff + blocks)
		return "data area overlaps the map";
	if (i->mapoff % 4 || i->mapoff > i->infooff ||
	    (uint64_t)i->external_nlba * 4 > i->infooff - i->mapoff ||
	    i->flogoff < i->mapoff + (uint64_t)i->external_nlba * 4)
		return "map overlaps the flog";
	if (i->flogoff % BTT_FLOG_PAIR || i->flogoff > i->infooff ||
	    (uint64_t)i->nfree * BTT_FLOG_PAIR > i->infooff - i->flogoff)
		return "flog overlaps the backup info block";
	return NULL;
}

/*
 * A backup info block is read only when the primary is unsound, at the
 * place this range's geometry puts the backup of the arena starting at
 * @off: the last 4 KiB of the first min(room, 512 GiB) bytes. Nothing in
 * it says where its arena starts, so a BTT laid out at another offset
 * (the kernel's at 4096 of a namespace, opened at 0) can put a sound
 * backup exactly there, whose offsets then point at the wrong bytes.
 * Trust it only when it describes the arena this range has at @off:
 *   - it lies where it says: infooff == asize - 4096 (hence its arena
 *     starts at @off and ends at asize, inside the range);
 *   - nextoff is what the geometry gives: asize when at least a minimal
 *     arena of the range follows (16 MiB), else 0, so a "last arena"
 *     claim cannot hide the arenas after it.
 * The primary needs neither: it is found at the arena's start, and may
 * describe a BTT shorter than the range, or (the last arena) one whose
 * backup lies past the end. Return NULL when trusted, else why not.
 */
static const char *backup_describes(const struct btt_info *bak, uint64_t asize,
				    uint64_t room)
{
	uint64_t want_next = room - asize >= ntm_btt_min_arena ? asize : 0;

	if (bak->infooff != asize - BTT_INFO_SIZE)
		return "it does not lie where its infooff says (it belongs to a "
		       "BTT at another offset or of another size)";
	if (bak->nextoff != want_next)
		return want_next ? "its nextoff says the last arena, but the "
				   "range holds another after it" :
				   "its nextoff does not fit the range";
	return NULL;
}

/*
 * Write a whole info block (already little-endian) and make it durable:
 * all of it but the signature, durable, then the signature. A power cut
 * in between leaves a block without the signature (has_sig() wants all
 * 16 bytes), which open takes for none, never a signed block whose
 * checksum fails: a lazy first write interrupted there leaves a range
 * that opens as "no BTT yet", not one refused as damaged.
 */
static int info_write(struct ntm_btt *b, void *dst, const struct btt_info *i)
{
	static const char nosig[BTT_SIG_LEN];
	unsigned char *d = dst;
	int ret;

	ntm_memcpy_flush(d, nosig, BTT_SIG_LEN);
	ntm_memcpy_flush(d + BTT_SIG_LEN, (const unsigned char *)i + BTT_SIG_LEN,
			 sizeof(*i) - BTT_SIG_LEN);
	ret = media_persist(b, d, sizeof(*i));
	if (ret)
		return ret;
	ntm_memcpy_flush(d, i->sig, BTT_SIG_LEN);
	return media_persist(b, d, BTT_SIG_LEN);
}

/* --- layout --- */

static void make_uuid(uint8_t u[16])
{
	if (getrandom(u, 16, 0) != 16) {
		/* No entropy source: still unique enough per process. */
		uint64_t t = (uint64_t)(uintptr_t)u ^ (uint64_t)getpid() << 32;

		memcpy(u, &t, 8);
		memcpy(u + 8, &t, 8);
	}
	u[6] = (uint8_t)((u[6] & 0x0f) | 0x40);	/* version 4 */
	u[8] = (uint8_t)((u[8] & 0x3f) | 0x80);	/* variant 1 */
}

/* The geometry of arena @k of a BTT of @size bytes; -1 if it fits none. */
static int arena_geometry(uint64_t size, unsigned k, uint32_t lbasize,
			  uint32_t nfree, struct btt_info *i, uint64_t *off)
{
	uint64_t o = 0, rest = size, asize;

	for (unsigned j = 0;; j++) {
		asize = rest > ntm_btt_max_arena ? ntm_btt_max_arena : rest;
		if (j == k)
			break;
		o += asize;
		rest -= asize;
	}
	memset(i, 0, sizeof(*i));
	*off = o;
	return btt_info_geometry(i, lbasize, nfree, asize, rest - asize);
}

/* Compute nlba of a BTT not laid out yet (lazy open, create). */
static int layout_size(struct ntm_btt *b)
{
	struct btt_info i;
	uint64_t off;

	b->narena = btt_narena(b->size);
	b->nlba = 0;
	for (unsigned k = 0; k < b->narena; k++) {
		if (arena_geometry(b->size, k, b->lbasize, b->nfree, &i, &off))
			return ntm_error(-ENOSPC, "btt: %zu bytes hold no arena "
					 "of %u-byte blocks and %u free blocks "
					 "(arena %u)", b->size, b->lbasize,
					 b->nfree, k);
		b->nlba += i.external_nlba;
	}
	return 0;
}

static bool is_zero(const unsigned char *p, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (p[i])
			return false;
	return true;
}

/*
 * Write a fresh BTT: per arena the map (all zero: every entry initial;
 * skipped with NTM_BTT_ZEROED while the arena's flog area is zero, i.e.
 * nothing was ever laid out there, as PMDK skips it for a pool it knows
 * to be zero), the flog (entry i owns block external_nlba + i), then the
 * info blocks.
 * The info blocks go last, and arena 0's primary last of all, each after
 * a persist: a valid info block proves the map and flog under it are on
 * media, so a crash during the layout leaves either no BTT or a whole one.
 */
static int layout_write(struct ntm_btt *b)
{
	uint8_t uuid[16];
	int ret;

	make_uuid(uuid);
	for (unsigned k = b->narena; k-- > 0;) {
		struct btt_info i;
		uint64_t off;
		unsigned char *a, *flog;

		if (arena_geometry(b->size, k, b->lbasize, b->nfree, &i, &off))
			return ntm_error(-ENOSPC, "btt: arena %u does not fit",
					 k);
		a = b->base + off;
		flog = a + i.flogoff;
		if (!b->zeroed || !is_zero(flog, btt_flog_size(i.nfree)))
			ntm_memset_flush(a + i.mapoff, 0,
					 btt_map_size(i.external_nlba));
		for (uint32_t f = 0; f < i.nfree; f++) {
			uint32_t pair[BTT_FLOG_PAIR / 4] = { 0 };
			uint32_t blk = (i.external_nlba + f) | BTT_MAP_ZERO;

			pair[0] = htole32(f);
			pair[1] = pair[2] = htole32(blk);
			pair[3] = htole32(1);
			ntm_memcpy_flush(flog + (size_t)f * BTT_FLOG_PAIR, pair,
					 sizeof(pair));
		}
		/* Map and flog durable before any info block claims them. */
		ret = media_persist(b, a + i.mapoff, i.infooff - i.mapoff);
		if (ret)
			return ntm_error_cause(ret, "btt: persist of arena %u", k);
		memcpy(i.sig, BTT_SIG, BTT_SIG_LEN);
		memcpy(i.uuid, uuid, 16);
		memcpy(i.parent_uuid, b->parent_uuid, 16);
		i.major = b->major;
		i.minor = b->minor;
		info_to_le(&i);
		/* The backup first: the primary is what says "laid out". */
		ret = info_write(b, a + le64toh(i.infooff), &i);
		if (!ret)
			ret = info_write(b, a, &i);
		if (ret)
			return ntm_error_cause(ret, "btt: persist of arena %u's info "
					 "block", k);
		/* Dropped from the cache: layout_create() reads them back
		 * from the device (layout_read()). */
		ntm_invalidate(a + le64toh(i.infooff), sizeof(i));
		ntm_invalidate(a, sizeof(i));
	}
	return 0;
}

/* --- open: arenas, flog replay, consistency --- */

/* The current entry of a flog pair: -1 when the seqs are inconsistent. */
static int flog_current(const struct btt_flog p[2])
{
	if (p[0].seq > 3 || p[1].seq > 3 || p[0].seq == p[1].seq)
		return -1;
	if (!p[0].seq)
		return 1;
	if (!p[1].seq)
		return 0;
	return btt_seq_next(p[0].seq) == p[1].seq ? 1 : 0;
}

static void arena_bad(struct ntm_btt *b, struct arena *a, unsigned k,
		      const char *what, uint32_t n)
{
	if (!arena_is_bad(a))
		ntm_error(-EINVAL, "btt: arena %u: %s %u: metadata not trusted, "
			  "read-only", k, what, n);
	turn_readonly(b, a);
}

/*
 * Replay the flog of arena @k: an entry whose map update did not reach
 * media is finished (or, read-only, the old mapping is kept and the new
 * block counted free). Leaves each entry's free block in flogs[].free.
 */
static int arena_replay(struct ntm_btt *b, struct arena *a, unsigned k)
{
	for (uint32_t f = 0; f < a->nfree; f++) {
		const uint32_t *raw = (const uint32_t *)(a->flog +
						(size_t)f * BTT_FLOG_PAIR);
		struct btt_flog p[2];
		struct flog_rt *rt = &a->flogs[f];
		int cur;
		uint32_t e;

		for (int s = 0; s < 2; s++) {
			p[s].lba = le32toh(raw[4 * s]);
			p[s].old_map = le32toh(raw[4 * s + 1]);
			p[s].new_map = le32toh(raw[4 * s + 2]);
			p[s].seq = le32toh(raw[4 * s + 3]);
		}
		cur = flog_current(p);
		if (cur < 0) {
			arena_bad(b, a, k, "flog entry with bad seqs", f);
			continue;
		}
		rt->lba = p[cur].lba;
		rt->old_map = p[cur].old_map;
		rt->new_map = p[cur].new_map;
		rt->seq = p[cur].seq;
		rt->next = (unsigned)!cur;
		rt->free = rt->old_map & BTT_MAP_LBA;
		if (rt->lba >= a->external_nlba ||
		    (rt->old_map & BTT_MAP_LBA) >= a->internal_nlba ||
		    (rt->new_map & BTT_MAP_LBA) >= a->internal_nlba) {
			arena_bad(b, a, k, "flog entry out of range", f);
			continue;
		}
		if (rt->old_map == rt->new_map)
			continue;	/* fresh entry: nothing in flight */
		e = map_load(&a->map[rt->lba]);
		if (!(e & BTT_MAP_FLAGS))
			e = rt->lba | BTT_MAP_NORMAL;
		if (e == rt->new_map || e != rt->old_map)
			continue;	/* the update completed */
		/*
		 * The flog entry is durable but the map still holds old_map:
		 * the write's data and flog were persisted in that order
		 * before the crash, so the map update is finished now.
		 */
		if (b->ro_flag) {
			rt->free = rt->new_map & BTT_MAP_LBA;	/* rolled back */
			continue;
		}
		media_store4(&a->map[rt->lba], rt->new_map);
		if (media_persist(b, &a->map[rt->lba], 4))
			return ntm_error_cause(-EIO, "btt: arena %u: persist of the "
					 "recovered map entry %u", k, rt->lba);
	}
	return 0;
}

/* The state of one scan: blocks seen, blocks seen twice. */
struct scan {
	uint64_t *seen;		/* one bit per block, 64 to a word */
	uint8_t *dup;		/* the suspect[] to be: bit_test()'s layout */
	bool report;		/* ntm_btt_check(): stop at the first problem */
};

/*
 * Count block @blk as referenced by @who @n. A block referenced twice
 * makes the arena read-only and the block unreadable, or with @report
 * fails the check. Return 0 or -EINVAL (report).
 */
static int scan_claim(struct ntm_btt *b, struct arena *a, unsigned k,
		      struct scan *s, uint32_t blk, const char *who,
		      uint32_t n)
{
	uint64_t bit = 1ull << (blk % 64);

	if (__builtin_expect(s->seen[blk / 64] & bit, 0)) {
		if (s->report)
			return ntm_error(-EINVAL, "btt: arena %u: %s %u: block "
					 "%u referenced twice", k, who, n, blk);
		bit_set(s->dup, blk);
		arena_bad(b, a, k, who, n);
	}
	s->seen[blk / 64] |= bit;
	return 0;
}

/*
 * Map bytes scanned per step. Each step first asks the kernel to read its
 * range in (large reads, not one fault per page), then loads the entries.
 */
#define SCAN_STEP (4u << 20)
#define SCAN_GROUP 64u		/* entries checked at once: one seen[] word */

/*
 * Fault [p, p + n) in ahead of the loads. Advice only: where it fails,
 * each load faults its page in as without it (and a page that cannot be
 * read raises SIGBUS there, as before).
 */
static void map_populate(const uint32_t *p, size_t n)
{
	static long page;
	uintptr_t start, end;

	if (!page)
		page = sysconf(_SC_PAGESIZE);
	start = (uintptr_t)p & ~(uintptr_t)(page - 1);
	end = (uintptr_t)p + n;
	/* MADV_POPULATE_READ came in Linux 5.14; before, read-ahead. */
	if (madvise((void *)start, end - start, MADV_POPULATE_READ) &&
	    errno == EINVAL)
		madvise((void *)start, end - start, MADV_WILLNEED);
}

/*
 * Map entries [l, l + SCAN_GROUP) that are all zero map each LBA to its
 * own block: claim the group's word at once unless one of its blocks is
 * taken already (then scan_claim() names it). Return true when claimed.
 * Relaxed loads: no write reaches this arena's map during its scan
 * (writers wait in arena_ready()); they only keep ntm_btt_check()'s scan
 * beside running writers a defined race.
 */
static bool scan_identity(struct scan *s, const uint32_t *map, uint32_t l)
{
	uint32_t any = 0;

	for (uint32_t i = 0; i < SCAN_GROUP; i++)
		any |= __atomic_load_n(&map[l + i], __ATOMIC_RELAXED);
	if (any || s->seen[l / 64])
		return false;
	s->seen[l / 64] = UINT64_MAX;
	return true;
}

/*
 * Every internal block must be referenced exactly once, by a map entry or
 * a flog free block. A flipped map entry points out of range or at a
 * block another entry holds: the arena turns read-only and reads of the
 * blocks involved fail, so no LBA returns another LBA's data.
 * With @report, stop at the first problem and return -EINVAL (check).
 * The pass costs a read of the map at memory speed: the map is faulted
 * in by large reads, step by step, and a group of entries never written
 * (zero: the LBA's own block) is checked with one word of seen[].
 */
static int arena_scan(struct ntm_btt *b, struct arena *a, unsigned k,
		      bool report)
{
	size_t words = a->internal_nlba / 64 + 1;
	struct scan s = { calloc(words, sizeof(uint64_t)),
			  calloc(1, a->internal_nlba / 8 + 1), report };
	uint32_t step = SCAN_STEP / BTT_MAP_ENTRY;
	int ret = 0;

	if (!s.seen || !s.dup) {
		ret = ntm_error(-ENOMEM, "btt: arena %u: scan", k);
		goto out;
	}
	for (uint32_t l = 0; l < a->external_nlba && !ret; l++) {
		uint32_t e, blk;

		if (l % step == 0)
			map_populate(&a->map[l],
				     (size_t)(a->external_nlba - l < step ?
					      a->external_nlba - l : step) *
					     BTT_MAP_ENTRY);
		/* internal_nlba > external_nlba: the group's blocks exist. */
		if (l % SCAN_GROUP == 0 && a->external_nlba - l >= SCAN_GROUP &&
		    scan_identity(&s, a->map, l)) {
			l += SCAN_GROUP - 1;
			continue;
		}
		e = map_load(&a->map[l]);
		blk = e & BTT_MAP_FLAGS ? e & BTT_MAP_LBA : l;
		if (blk < a->internal_nlba)
			ret = scan_claim(b, a, k, &s, blk, "map entry", l);
		else if (report)
			ret = ntm_error(-EINVAL, "btt: arena %u: map entry %u "
					"points outside the data area", k, l);
		else
			arena_bad(b, a, k, "map entry out of range, lba", l);
	}
	/* Out-of-range free blocks were reported by the replay. */
	for (uint32_t f = 0; f < a->nfree && !ret; f++)
		if (a->flogs[f].free < a->internal_nlba)
			ret = scan_claim(b, a, k, &s, a->flogs[f].free,
					 "flog entry", f);
	for (uint32_t i = 0; report && !ret && i < a->internal_nlba; i++) {
		if (i % 64 == 0 && s.seen[i / 64] == UINT64_MAX &&
		    a->internal_nlba - i >= 64) {
			i += 63;
			continue;
		}
		if (!(s.seen[i / 64] & (1ull << (i % 64))))
			ret = ntm_error(-EINVAL, "btt: arena %u: block %u is "
					"neither mapped nor free", k, i);
	}
	if (!report && arena_is_bad(a)) {
		a->suspect = s.dup;
		s.dup = NULL;
	}
out:
	free(s.seen);
	free(s.dup);
	return ret;
}

/* Read arena @k at offset @off from its info block (host order). */
static int arena_load(struct ntm_btt *b, unsigned k, uint64_t off,
		      const struct btt_info *i, uint64_t ext_start)
{
	struct arena *a = &b->arenas[k];

	a->ext_start = ext_start;
	a->external_nlba = i->external_nlba;
	a->internal_nlba = i->internal_nlba;
	a->internal_lbasize = i->internal_lbasize;
	a->nfree = i->nfree;
	a->start = b->base + off;
	a->data = a->start + i->dataoff;
	a->map = (uint32_t *)(a->start + i->mapoff);
	a->flog = a->start + i->flogoff;
	/* NULL: the backup info block is past the end (info_read()). */
	a->backup = i->infooff + BTT_INFO_SIZE <= b->size - off ?
			    a->start + i->infooff : NULL;
	a->flogs = calloc_lines(a->nfree, sizeof(*a->flogs));
	a->rtt = calloc_lines(a->nfree, sizeof(*a->rtt));
	if (!a->flogs || !a->rtt)
		return ntm_error(-ENOMEM, "btt: arena %u", k);
	for (uint32_t l = 0; l < a->nfree; l++)
		atomic_init(&a->rtt[l].blk, RTT_IDLE);
	if (i->flags & BTT_INFO_FLAG_ERROR)
		arena_bad(b, a, k, "info block has the error flag, flags",
			  i->flags);
	return arena_replay(b, a, k);
}

/*
 * Before the first read or write of an arena opened from media: scan its
 * map once (arena_scan()), so that a block referenced twice is never read
 * or handed out as free. Every later access costs one acquire load.
 */
static int arena_ready(struct ntm_btt *b, struct arena *a)
{
	int ret = 0;

	if (atomic_load_explicit(&a->scanned, memory_order_acquire))
		return 0;
	pthread_mutex_lock(&b->layout_lock);
	if (!atomic_load_explicit(&a->scanned, memory_order_relaxed)) {
		ret = arena_scan(b, a, (unsigned)(a - b->arenas), false);
		if (!ret)
			/* Release: suspect[] and bad are set before it shows. */
			atomic_store_explicit(&a->scanned, true,
					      memory_order_release);
	}
	pthread_mutex_unlock(&b->layout_lock);
	return ret;
}

static void arenas_free(struct ntm_btt *b)
{
	if (!b->arenas)
		return;
	for (unsigned k = 0; k < b->narena; k++) {
		free(b->arenas[k].flogs);
		free((void *)b->arenas[k].rtt);
		free(b->arenas[k].suspect);
	}
	free(b->arenas);
	b->arenas = NULL;
}

/*
 * Whether the arenas of @infos (@n of them) give the geometry @b already
 * has: what a lazy BTT computed at open (layout_size()) and its readers
 * use, which its own layout must not change.
 */
static bool layout_matches(const struct ntm_btt *b,
			   const struct btt_info *infos, unsigned n)
{
	uint64_t nlba = 0;

	for (unsigned k = 0; k < n; k++)
		nlba += infos[k].external_nlba;
	return n == b->narena && nlba == b->nlba &&
	       infos[0].external_lbasize == b->lbasize &&
	       infos[0].major == b->major && infos[0].minor == b->minor;
}

/*
 * Find the arenas' info blocks (primary, else the backup where the
 * geometry puts it), validate them, replay the flogs. Return 0, 1 when
 * arena 0 has no BTT at all (neither block has the signature), or -errno.
 *
 * @adopt: the BTT takes the media's geometry (block count and size,
 * version, arenas), at open, before anyone else sees it. Otherwise it
 * is the first write of a lazy BTT, whose geometry other threads read
 * without a lock (a block number's check, ntm_btt_nlba(), a read of
 * zeros): the media must give exactly that geometry, and only the
 * arenas, which no one reads before laidout shows, are set. Rebuilding
 * the block count there made concurrent callers see 0 blocks and fail.
 */
static int layout_read(struct ntm_btt *b, bool adopt)
{
	struct btt_info *infos = NULL;
	uint64_t off = 0, nlba;
	unsigned n = 0, cap = 0;
	uint32_t nfree;
	int ret;

	for (;;) {
		uint64_t room = b->size - off;
		uint64_t asize = room > ntm_btt_max_arena ? ntm_btt_max_arena :
							    room;
		struct btt_info pri, bak;
		const char *perr, *berr = "arena too small";
		unsigned char *a = b->base + off;

		if (n == cap) {
			struct btt_info *t;

			cap = cap ? 2 * cap : 4;
			t = realloc(infos, cap * sizeof(*infos));
			if (!t) {
				ret = ntm_error(-ENOMEM, "btt: open");
				goto out;
			}
			infos = t;
		}
		perr = info_read(b, a, room, &pri);
		if (asize >= BTT_INFO_SIZE)
			berr = info_read(b, a + asize - BTT_INFO_SIZE, room,
					 &bak);
		if (perr && !berr)
			berr = backup_describes(&bak, asize, room);
		if (perr && berr) {
			if (n == 0 && !has_sig(a) &&
			    (asize < BTT_INFO_SIZE ||
			     !has_sig(a + asize - BTT_INFO_SIZE))) {
				ret = 1;
				goto out;
			}
			ret = ntm_error(-EINVAL, "btt: arena %u at offset %llu:"
					" info block: %s; backup: %s", n,
					(unsigned long long)off, perr, berr);
			goto out;
		}
		if (perr) {
			/*
			 * The backup is sound: restore the primary from it
			 * (PMDK reads only the primary, and would take the
			 * arena for unformatted).
			 */
			if (!b->ro_flag) {
				struct btt_info le;

				memcpy(&le, a + asize - BTT_INFO_SIZE,
				       sizeof(le));
				ret = info_write(b, a, &le);
				if (ret) {
					ret = ntm_error_cause(ret, "btt: arena %u: "
							      "restoring the info "
							      "block", n);
					goto out;
				}
			}
			pri = bak;
		} else if (berr && !b->ro_flag &&
			   pri.infooff + BTT_INFO_SIZE <= room) {
			ret = info_write(b, a + pri.infooff,
					 (const struct btt_info *)a);
			if (ret) {
				ret = ntm_error_cause(ret, "btt: arena %u: restoring"
						      " the backup info block", n);
				goto out;
			}
		}
		/* One version for the whole BTT, as every writer makes it. */
		if (n && (pri.major != infos[0].major ||
			  pri.minor != infos[0].minor)) {
			ret = ntm_error(-EINVAL, "btt: arena %u: version %u.%u "
					"differs from arena 0's %u.%u", n,
					pri.major, pri.minor, infos[0].major,
					infos[0].minor);
			goto out;
		}
		if (n && (pri.external_lbasize != infos[0].external_lbasize)) {
			ret = ntm_error(-EINVAL, "btt: arena %u: block size %u "
					"differs from arena 0's %u", n,
					pri.external_lbasize,
					infos[0].external_lbasize);
			goto out;
		}
		infos[n++] = pri;
		if (!pri.nextoff)
			break;
		off += pri.nextoff;
		if (n >= 4096) {
			ret = ntm_error(-EINVAL, "btt: too many arenas");
			goto out;
		}
	}
	if (b->lbasize && b->lbasize != infos[0].external_lbasize) {
		ret = ntm_error(-EINVAL, "btt: block size %u asked, the media "
				"has %u", b->lbasize, infos[0].external_lbasize);
		goto out;
	}
	if (b->want_v2 && infos[0].major != BTT2_MAJOR) {
		ret = ntm_error(-EINVAL, "btt: the media's BTT is %u.%u, "
				"NTM_BTT_V2 asks for 2.0", infos[0].major,
				infos[0].minor);
		goto out;
	}
	if (adopt) {
		b->lbasize = infos[0].external_lbasize;
		b->major = infos[0].major;
		b->minor = infos[0].minor;
		b->narena = n;
	} else if (!layout_matches(b, infos, n)) {
		ret = ntm_error(-EIO, "btt: the new layout reads back as %u "
				"arena(s) of %u-byte blocks, not the %u the "
				"BTT was opened with", n,
				infos[0].external_lbasize, b->narena);
		goto out;
	}
	b->arenas = calloc(n, sizeof(*b->arenas));
	if (!b->arenas) {
		ret = ntm_error(-ENOMEM, "btt: open");
		goto out;
	}
	nfree = UINT32_MAX;
	nlba = 0;
	off = 0;
	ret = 0;
	for (unsigned k = 0; k < n; k++) {
		if (infos[k].nfree < nfree)
			nfree = infos[k].nfree;
		ret = arena_load(b, k, off, &infos[k], nlba);
		if (ret)
			break;
		nlba += infos[k].external_nlba;
		off += infos[k].nextoff;
	}
	if (!ret && adopt) {
		b->nfree = nfree;
		b->nlba = nlba;
	}
out:
	/* The one way out: whatever failed, the info blocks read are freed. */
	free(infos);
	return ret;
}

/*
 * NTM_BTT_CREATE | NTM_BTT_LAZY: create without a layout, as PMDK's
 * pmemblk_create(). An old BTT in the range must not be taken for the new
 * one: open looks at arena 0's primary and at the backup position the
 * range's geometry gives, so a signature in either is zeroed (those two
 * 4 KiB blocks are all that is written, and only if signed). The other
 * arenas' info blocks are reached only through arena 0's nextoff and are
 * overwritten by the layout before arena 0's are written.
 */
static int layout_forget(struct ntm_btt *b)
{
	uint64_t asize = b->size > ntm_btt_max_arena ? ntm_btt_max_arena :
						       b->size;
	unsigned char *at[2] = { b->base, b->base + asize - BTT_INFO_SIZE };

	for (int k = 0; k < 2; k++) {
		int ret;

		if (!has_sig(at[k]))
			continue;
		ntm_memset_flush(at[k], 0, BTT_INFO_SIZE);
		ret = media_persist(b, at[k], BTT_INFO_SIZE);
		if (ret)
			return ntm_error_cause(ret, "btt: persist of the old BTT's "
					       "%s info block, zeroed",
					       k ? "backup" : "primary");
	}
	return 0;
}

/*
 * Lay out a BTT over a range that has none yet, and load it (@adopt as
 * for layout_read(): false at a lazy BTT's first write).
 */
static int layout_create(struct ntm_btt *b, bool adopt)
{
	int ret = layout_write(b);

	if (!ret)
		ret = layout_read(b, adopt);
	/*
	 * Read from the device, not the cache (layout_write() dropped the
	 * info blocks): a region that takes stores without keeping them
	 * seems to hold namespaces, file systems and a BTT. QEMU 7.2's CXL
	 * memory behind a host bridge with one root port is one: Linux 6.1
	 * takes that bridge for a pass-through and never programs its
	 * decoder, which QEMU routes the memory through.
	 */
	if (ret == 1)
		ret = ntm_error(-EIO, "btt: the new layout, written and persisted, "
				"does not read back: stores to this memory do not "
				"reach its device (a CXL region behind a host bridge "
				"with one root port under QEMU 7.2 loses them all)");
	/* Maps we just wrote need no scan: every entry is initial. */
	for (unsigned k = 0; !ret && k < b->narena; k++)
		atomic_store_explicit(&b->arenas[k].scanned, true,
				      memory_order_relaxed);
	return ret;
}

/* --- the API --- */

int ntm_btt_open(struct ntm_btt **bttp, void *base, size_t size,
		 const struct ntm_btt_config *cfg)
{
	static const struct ntm_btt_config defaults;
	struct ntm_btt *b;
	long ncpu;
	int ret;

	if (!bttp || !base)
		return ntm_error(-EINVAL, "btt: NULL argument");
	*bttp = NULL;
	if (!cfg)
		cfg = &defaults;
	if ((uintptr_t)base % 64)
		return ntm_error(-EINVAL, "btt: base is not 64-byte aligned");
	if ((cfg->flags & NTM_BTT_CREATE) && (cfg->flags & NTM_BTT_READONLY))
		return ntm_error(-EINVAL, "btt: CREATE and READONLY together");
	ret = NTM_CONFIG_CHECK(cfg, NTM_BTT_CREATE | NTM_BTT_READONLY |
				   NTM_BTT_LAZY | NTM_BTT_V2 | NTM_BTT_ZEROED);
	if (ret)
		return ret;
	if (size < 3ull * BTT_INFO_SIZE + BTT_ALIGN)
		return ntm_error(-ENOSPC, "btt: %zu bytes hold no arena", size);
	b = calloc(1, sizeof(*b));
	if (!b)
		return ntm_error(-ENOMEM, "btt: open");
	b->base = base;
	b->size = size;
	b->lbasize = cfg->lbasize;
	b->nfree = cfg->nfree ? cfg->nfree : BTT_DEFAULT_NFREE;
	b->ro_flag = cfg->flags & NTM_BTT_READONLY;
	atomic_init(&b->readonly, b->ro_flag);
	b->persist = cfg->persist;
	b->persist_arg = cfg->persist_arg;
	b->want_v2 = cfg->flags & NTM_BTT_V2;
	b->zeroed = cfg->flags & NTM_BTT_ZEROED;
	b->major = b->want_v2 ? BTT2_MAJOR : BTT_MAJOR;
	b->minor = b->want_v2 ? BTT2_MINOR : BTT_MINOR;
	if (cfg->parent_uuid) {
		memcpy(b->parent_uuid, cfg->parent_uuid, 16);
		b->check_parent = true;
	}
	pthread_mutex_init(&b->layout_lock, NULL);
	for (unsigned i = 0; i < NMAP_LOCKS; i++)
		pthread_mutex_init(&b->locks[i].m, NULL);

	if (cfg->flags & NTM_BTT_CREATE) {
		if (!b->lbasize)
			b->lbasize = BTT_MIN_LBASIZE;
		ret = layout_size(b);
		if (!ret && (cfg->flags & NTM_BTT_LAZY))
			ret = layout_forget(b);	/* laid out at the first write */
		else if (!ret)
			ret = layout_create(b, true);
		if (!ret && !(cfg->flags & NTM_BTT_LAZY))
			atomic_store(&b->laidout, true);
	} else {
		ret = layout_read(b, true);
		if (ret == 1 && (cfg->flags & NTM_BTT_LAZY)) {
			/* PMDK: no layout yet; reads see zeros. */
			if (!b->lbasize)
				b->lbasize = BTT_MIN_LBASIZE;
			ret = layout_size(b);
		} else if (ret == 1) {
			ret = ntm_error(-EINVAL, "btt: no BTT info block at the"
					" start of the range (nor its backup)");
		} else if (!ret) {
			atomic_store(&b->laidout, true);
		}
	}
	if (ret)
		goto fail;

	ncpu = sysconf(_SC_NPROCESSORS_ONLN);
	b->nlanes = ncpu > 0 ? (unsigned)ncpu : 1;
	if (cfg->nlanes)
		b->nlanes = cfg->nlanes;
	if (b->nlanes > b->nfree)
		b->nlanes = b->nfree;
	b->lane_busy = calloc_lines(b->nlanes, sizeof(*b->lane_busy));
	if (!b->lane_busy) {
		ret = ntm_error(-ENOMEM, "btt: open");
		goto fail;
	}
	*bttp = b;
	return 0;
fail:
	ntm_btt_close(b);
	return ret;
}

void ntm_btt_close(struct ntm_btt *b)
{
	if (!b)
		return;
	arenas_free(b);
	free((void *)b->lane_busy);
	pthread_mutex_destroy(&b->layout_lock);
	for (unsigned i = 0; i < NMAP_LOCKS; i++)
		pthread_mutex_destroy(&b->locks[i].m);
	free(b);
}

uint64_t ntm_btt_nlba(const struct ntm_btt *b)
{
	return b ? b->nlba : 0;
}

uint32_t ntm_btt_version(const struct ntm_btt *b)
{
	return b ? NTM_BTT_VERSION(b->major, b->minor) : 0;
}

uint32_t ntm_btt_lbasize(const struct ntm_btt *b)
{
	return b ? b->lbasize : 0;
}

bool ntm_btt_readonly(const struct ntm_btt *b)
{
	return !b || is_readonly(b);
}

unsigned ntm_btt_nlanes(const struct ntm_btt *b)
{
	return b ? b->nlanes : 0;
}

/*
 * The lane this thread held last: taking it again is one uncontended
 * compare-and-swap on a line this CPU already owns, where asking for the
 * CPU number first cost a call per request (measured: ~7% of a write).
 */
static __thread unsigned lane_hint;

unsigned ntm_btt_lane_get(struct ntm_btt *b)
{
	unsigned start = lane_hint;

	if (!b)
		return 0;
	if (start >= b->nlanes)
		start %= b->nlanes;
	for (;;) {
		for (unsigned i = 0; i < b->nlanes; i++) {
			unsigned l = (start + i) % b->nlanes;
			unsigned char idle = 0;

			if (atomic_compare_exchange_strong(&b->lane_busy[l].busy,
							   &idle, 1)) {
				lane_hint = l;
				return l;
			}
		}
		sched_yield();	/* every lane is held: wait for one */
	}
}

void ntm_btt_lane_put(struct ntm_btt *b, unsigned lane)
{
	if (b && lane < b->nlanes)
		atomic_store_explicit(&b->lane_busy[lane].busy, 0,
				      memory_order_release);
}

/* The arena of external @lba and its pre-map LBA inside it. */
static struct arena *lba_arena(struct ntm_btt *b, uint64_t lba, uint32_t *pre)
{
	struct arena *a = b->arenas;

	while (lba >= a->ext_start + a->external_nlba)
		a++;
	*pre = (uint32_t)(lba - a->ext_start);
	return a;
}

static pthread_mutex_t *map_lock_of(struct ntm_btt *b, struct arena *a,
				    uint32_t pre)
{
	/* One lock per map cache line (16 entries), as PMDK. */
	size_t h = (size_t)(a - b->arenas) * 7919u + pre / 16;

	return &b->locks[h % NMAP_LOCKS].m;
}

static int check_args(struct ntm_btt *b, unsigned lane, uint64_t lba,
		      const void *buf)
{
	if (!b || !buf)
		return ntm_error(-EINVAL, "btt: NULL argument");
	if (lba >= b->nlba)
		return ntm_error(-EINVAL, "btt: lba %llu out of range (%llu "
				 "blocks)", (unsigned long long)lba,
				 (unsigned long long)b->nlba);
	if (lane >= b->nlanes)
		return ntm_error(-EINVAL, "btt: lane %u out of range (%u "
				 "lanes)", lane, b->nlanes);
	return 0;
}

int ntm_btt_read(struct ntm_btt *b, unsigned lane, uint64_t lba, void *buf)
{
	struct arena *a;
	uint32_t pre, e, e2, blk;
	size_t left;
	int ret = check_args(b, lane, lba, buf);

	if (ret)
		return ret;
	if (!atomic_load_explicit(&b->laidout, memory_order_acquire)) {
		memset(buf, 0, b->lbasize);	/* lazy: nothing written */
		return 0;
	}
	a = lba_arena(b, lba, &pre);
	ret = arena_ready(b, a);
	if (ret)
		return ret;
	e = map_load(&a->map[pre]);
	for (;;) {
		uint32_t fl = e & BTT_MAP_FLAGS;

		if (fl == BTT_MAP_ERROR)
			return ntm_error(-EIO, "btt: lba %llu has the error "
					 "flag", (unsigned long long)lba);
		if (fl != BTT_MAP_NORMAL) {
			/* Zero flag, or initial (PMDK: never written). */
			memset(buf, 0, b->lbasize);
			return 0;
		}
		blk = e & BTT_MAP_LBA;
		if (blk >= a->internal_nlba ||
		    (a->suspect && bit_test(a->suspect, blk)))
			return ntm_error(-EIO, "btt: lba %llu: map entry not "
					 "trusted", (unsigned long long)lba);
		/*
		 * Publish the block, then look at the map again (both
		 * sequentially consistent, against the writer's map store
		 * and its fence before scanning the table): if the map still
		 * points here, no writer can take this block as free until
		 * the slot is cleared; if it moved, the block may already be
		 * a free block being overwritten, so follow the new entry.
		 */
		atomic_store(&a->rtt[lane].blk, blk);
		e2 = map_load(&a->map[pre]);
		if (e2 == e)
			break;
		e = e2;
	}
	left = ntm_copy_mc(buf, a->data + (uint64_t)blk * a->internal_lbasize,
			   b->lbasize);
	atomic_store_explicit(&a->rtt[lane].blk, RTT_IDLE, memory_order_release);
	if (left)
		return ntm_error(-EIO, "btt: lba %llu: media error",
				 (unsigned long long)lba);
	return 0;
}

/* Lay out a lazily opened BTT on its first write. */
static int ensure_layout(struct ntm_btt *b)
{
	int ret = 0;

	if (atomic_load_explicit(&b->laidout, memory_order_acquire))
		return 0;
	pthread_mutex_lock(&b->layout_lock);
	if (!atomic_load_explicit(&b->laidout, memory_order_relaxed)) {
		ret = layout_create(b, false);
		if (!ret)
			/* Release: the arenas are built before it shows. */
			atomic_store_explicit(&b->laidout, true,
					      memory_order_release);
		else
			arenas_free(b);
	}
	pthread_mutex_unlock(&b->layout_lock);
	return ret;
}

/*
 * The flog update of @lane: {lba, old_map} into the older slot, durable,
 * then {new_map, seq} as one 8-byte store, durable. Until the second
 * store is durable the other slot stays current (its seq is the later
 * one), so a crash in between changes nothing; the seq and new_map travel
 * together, so a current entry is never half new.
 */
static int flog_write(struct ntm_btt *b, struct arena *a, unsigned lane,
		      uint32_t lba, uint32_t old_map, uint32_t new_map)
{
	struct flog_rt *rt = &a->flogs[lane];
	unsigned char *slot = a->flog + (size_t)lane * BTT_FLOG_PAIR +
			      rt->next * sizeof(struct btt_flog);
	uint32_t seq = btt_seq_next(rt->seq);
	int ret;

	media_store8(slot, lba, old_map);
	/* lba and old_map on media before the seq can make them current. */
	ret = media_persist(b, slot, 8);
	if (ret)
		return ret;
	media_store8(slot + 8, new_map, seq);
	/* The entry is committed before the map may change. */
	ret = media_persist(b, slot + 8, 8);
	if (ret)
		return ret;
	rt->lba = lba;
	rt->old_map = old_map;
	rt->new_map = new_map;
	rt->seq = seq;
	rt->next ^= 1;
	return 0;
}

static int write_prep(struct ntm_btt *b, unsigned lane, uint64_t lba,
		      const void *buf, struct arena **ap, uint32_t *pre)
{
	int ret = check_args(b, lane, lba, buf);

	if (ret)
		return ret;
	if (is_readonly(b))
		return ntm_error(-EROFS, "btt: read-only");
	ret = ensure_layout(b);
	if (ret)
		return ret;
	*ap = lba_arena(b, lba, pre);
	ret = arena_ready(b, *ap);
	if (ret)
		return ret;
	if (arena_is_bad(*ap))
		return ntm_error(-EROFS, "btt: lba %llu: its arena is read-only",
				 (unsigned long long)lba);
	return 0;
}

int ntm_btt_write(struct ntm_btt *b, unsigned lane, uint64_t lba,
		  const void *buf)
{
	struct arena *a;
	struct flog_rt *rt;
	pthread_mutex_t *lock;
	uint32_t pre, old, new, blk;
	unsigned char *dst;
	int ret = write_prep(b, lane, lba, buf, &a, &pre);

	if (ret)
		return ret;
	rt = &a->flogs[lane];
	blk = rt->free;
	/*
	 * A reader that found this block mapped before our last write moved
	 * the map may still be copying from it. Full fence: our earlier map
	 * store is globally visible before we read the table, so a reader
	 * that publishes after this point sees the moved map and retries.
	 */
	atomic_thread_fence(memory_order_seq_cst);
	for (unsigned i = 0; i < b->nlanes; i++)
		while (atomic_load(&a->rtt[i].blk) == blk)
			sched_yield();

	/*
	 * The map lock is taken before the data is copied, not after: a
	 * locked instruction waits for the write-backs and non-temporal
	 * stores still in flight, and on the AMD EPYC this was measured on
	 * it waits 2-3x longer than a fence does (`ntmem bench blk --btt`:
	 * btt_floor_map_locked_ns against btt_floor_map_fence_ns). Taken
	 * after the copy, it paid that for the 4 KiB of data: a write took
	 * 860-930 ns, 670-720 ns with the lock taken first. Holding it
	 * through the copy costs only writers of another LBA under the
	 * same lock (1 in 256), and the old entry's load (a cache miss)
	 * now overlaps the copy instead of following it.
	 */
	lock = map_lock_of(b, a, pre);
	pthread_mutex_lock(lock);
	old = map_load(&a->map[pre]);
	dst = a->data + (uint64_t)blk * a->internal_lbasize;
	ntm_memcpy_flush(dst, buf, b->lbasize);
	/*
	 * The data must be durable before the flog's sequence number can
	 * point at it. ntm_memcpy_flush() left no line dirty, so with the
	 * default persist the fence after the flog's first store (which
	 * commits nothing) orders the data before the sequence store: a
	 * fence of its own here would cost a write ~10% for nothing (the
	 * crash images check this order). A callback that syncs only the
	 * range it is given (msync) needs its own call for the data.
	 */
	if (b->persist) {
		ret = media_persist(b, dst, b->lbasize);
		if (ret) {
			pthread_mutex_unlock(lock);
			return ntm_error_cause(ret, "btt: lba %llu: persist of the data",
					 (unsigned long long)lba);
		}
	}

	if (!(old & BTT_MAP_FLAGS))
		old = pre | BTT_MAP_NORMAL;	/* initial: the identity */
	new = blk | BTT_MAP_NORMAL;
	ret = flog_write(b, a, lane, pre, old, new);
	if (ret) {
		pthread_mutex_unlock(lock);
		/* Nothing is known about the flog slot: stop writing. */
		turn_readonly(b, a);
		return ntm_error_cause(-EIO, "btt: lba %llu: persist of the flog",
				 (unsigned long long)lba);
	}
	media_store4(&a->map[pre], new);
	/*
	 * Durable before the call returns. Not needed for atomicity: the
	 * committed flog entry would redo this store on the next open (the
	 * crash images pass without it); it keeps the media map current for
	 * a reader of the image that does not replay the flog.
	 */
	ret = media_persist(b, &a->map[pre], 4);
	pthread_mutex_unlock(lock);
	if (ret) {
		turn_readonly(b, a);
		return ntm_error_cause(-EIO, "btt: lba %llu: persist of the map",
				 (unsigned long long)lba);
	}
	rt->free = old & BTT_MAP_LBA;
	return 0;
}

/* Set a flag on a map entry in place (PMDK: no flog, one 4-byte store). */
static int map_setf(struct ntm_btt *b, unsigned lane, uint64_t lba,
		    uint32_t flag)
{
	static const char one = 0;
	struct arena *a;
	pthread_mutex_t *lock;
	uint32_t pre, e;
	int ret;

	/* PMDK: zeroing a BTT with no layout yet changes nothing. */
	if (b && flag == BTT_MAP_ZERO && lba < b->nlba && lane < b->nlanes &&
	    !is_readonly(b) &&
	    !atomic_load_explicit(&b->laidout, memory_order_acquire))
		return 0;
	ret = write_prep(b, lane, lba, &one, &a, &pre);
	if (ret)
		return ret;
	lock = map_lock_of(b, a, pre);
	pthread_mutex_lock(lock);
	e = map_load(&a->map[pre]);
	if (!(e & BTT_MAP_FLAGS))
		e = pre;	/* initial: the identity block keeps its owner */
	e = (e & BTT_MAP_LBA) | flag;
	media_store4(&a->map[pre], e);
	ret = media_persist(b, &a->map[pre], 4);
	pthread_mutex_unlock(lock);
	if (ret) {
		/* As in a write: the entry's durability is unknown, stop. */
		turn_readonly(b, a);
		return ntm_error_cause(-EIO, "btt: lba %llu: persist of the map",
				 (unsigned long long)lba);
	}
	return 0;
}

int ntm_btt_set_zero(struct ntm_btt *b, unsigned lane, uint64_t lba)
{
	return map_setf(b, lane, lba, BTT_MAP_ZERO);
}

int ntm_btt_set_error(struct ntm_btt *b, unsigned lane, uint64_t lba)
{
	return map_setf(b, lane, lba, BTT_MAP_ERROR);
}

int ntm_btt_check(struct ntm_btt *b)
{
	if (!b)
		return ntm_error(-EINVAL, "btt: NULL argument");
	if (!atomic_load_explicit(&b->laidout, memory_order_acquire))
		return 0;	/* nothing on media yet: consistent */
	for (unsigned k = 0; k < b->narena; k++) {
		struct arena *a = &b->arenas[k];
		uint64_t room = b->size - (uint64_t)(a->start - b->base);
		struct btt_info pri, bak;
		const char *err;
		int ret;

		err = info_read(b, a->start, room, &pri);
		if (err)
			return ntm_error(-EINVAL, "btt: arena %u: info block: "
					 "%s", k, err);
		if (!a->backup)
			return ntm_error(-EINVAL, "btt: arena %u: the backup "
					 "info block lies past the end of the "
					 "range", k);
		err = info_read(b, a->backup, room, &bak);
		if (err)
			return ntm_error(-EINVAL, "btt: arena %u: backup info "
					 "block: %s", k, err);
		if (memcmp(a->start, a->backup, BTT_INFO_SIZE))
			return ntm_error(-EINVAL, "btt: arena %u: the info "
					 "block and its backup differ", k);
		if (arena_is_bad(a))
			return ntm_error(-EINVAL, "btt: arena %u: metadata not "
					 "trusted (read-only)", k);
		ret = arena_scan(b, a, k, true);
		if (ret)
			return ret;
	}
	return 0;
}
