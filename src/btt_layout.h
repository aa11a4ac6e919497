/* SPDX-License-Identifier: MIT */
/*
 * btt_layout.h - the BTT on media: info block, flog entries, map entries,
 * the arena geometry and the info block checksum.
 *
 * Facts (NVDIMM namespace specification; the Linux kernel's
 * drivers/nvdimm/btt.h and btt.rst; PMDK 1.12.1 src/libpmemblk/btt.c and
 * btt_layout.h). Every integer on media is little-endian.
 *
 * Info block, 4096 bytes, at the start of each arena and again (the
 * backup) in the arena's last 4 KiB:
 *   off  size field
 *     0   16  sig "BTT_ARENA_INFO" followed by two NULs
 *    16   16  uuid of this BTT
 *    32   16  parent_uuid (PMDK: the pool's uuid; it must match on open)
 *    48    4  flags (bit 0: arena in error state, read-only)
 *    52    2  major, 54 2 minor
 *    56    4  external_lbasize, 60 4 external_nlba
 *    64    4  internal_lbasize, 68 4 internal_nlba
 *    72    4  nfree, 76 4 infosize (4096)
 *    80    8  nextoff (to the next arena, 0 in the last one)
 *    88    8  dataoff, 96 8 mapoff, 104 8 flogoff, 112 8 infooff (backup)
 *   120 3968  unused, zero
 *  4088    8  checksum
 * All offsets are relative to the start of the arena.
 *
 * Checksum: both the kernel (nd_fletcher64) and PMDK (util_checksum) use
 * the same Fletcher-64 over 32-bit little-endian words: lo += word,
 * hi += lo, both 32-bit, result hi << 32 | lo, with the checksum field
 * counted as zero.
 *
 * Arena geometry (PMDK's btt_info_set, which the kernel matches):
 *   - arenas of at most 512 GiB (1 << 39); the BTT has size / 512 GiB
 *     full arenas plus one more when the rest is at least 16 MiB
 *     (BTT_MIN_SIZE; the kernel's ARENA_MIN_SIZE is the same).
 *   - internal_lbasize = max(external_lbasize, 512) rounded up to 256
 *     (PMDK). The kernel rounds up to 64 instead (INT_LBASIZE_ALIGNMENT);
 *     opening accepts any internal_lbasize >= external_lbasize.
 *   - flog size = nfree * 64 (a pair of 16-byte entries padded to a cache
 *     line), rounded up to 4 KiB; map size = external_nlba * 4 rounded up
 *     to 4 KiB (BTT_ALIGNMENT, PMDK).
 *   - internal_nlba = (arena - 2 * 4096 - flog size - 4096) /
 *     (internal_lbasize + 4); external_nlba = internal_nlba - nfree.
 *   - dataoff = 4096, infooff = arena - 4096, flogoff = infooff - flog
 *     size, mapoff = flogoff - map size; nextoff = arena size when at
 *     least 16 MiB remain after this arena, else 0.
 *   - nfree = 256 in both (the kernel: ND_MAX_LANES); lanes are
 *     min(nfree, CPUs) in the kernel, nfree capped by the caller's
 *     maxlane (libpmemblk: the CPU count) in PMDK.
 *   - version: pools written by Debian's libpmemblk 1.12.1 carry major 1
 *     minor 1 (bytes 01 00 01 00 at offset 52, observed); the kernel
 *     writes 1.1 or 2.0 depending on the namespace label version
 *     (drivers/nvdimm/btt_devs.c: claim class BTT2, from v1.2 labels,
 *     means 2.0 at namespace offset 0; otherwise 1.1 at offset 4096;
 *     each probe takes only its exact major.minor). Nothing else in the
 *     layout differs between the two (btt.c writes the same info block,
 *     map and flog for both). We write 1.1, as PMDK does, or 2.0 when
 *     asked (NTM_BTT_V2), and accept majors 1 and 2.
 *
 * Map: one 32-bit entry per external LBA. Bit 31 zero flag, bit 30 error
 * flag, bits 0-29 the internal (post-map) block. Both flags set: a normal
 * entry. Neither set: the initial state, meaning "block = this LBA" (the
 * identity); PMDK reads such a block as zeros (a fresh layout is not
 * zeroed), the kernel reads the identity block. We follow PMDK: zeros.
 *
 * Flog: nfree pairs of {lba, old_map, new_map, seq} (16 bytes each), the
 * pair padded to 64 bytes (the kernel's log_entry is 32 bytes with 16 of
 * padding: the same offsets). seq is 2 bits cycling 1 -> 2 -> 3 -> 1; 0
 * marks a never-written slot. Of the pair, the entry with the later seq
 * is current (equal seqs: a consistency error). An update goes to the
 * other slot: {lba, old_map} first as one 8-byte store, then {new_map,
 * seq} as one 8-byte store (PMDK's order: the seq is written last and
 * together with new_map). A fresh flog entry i is {lba i, old_map =
 * new_map = (external_nlba + i) | zero flag, seq 1} plus an all-zero
 * slot (PMDK); old_map == new_map marks it complete.
 *
 * Lazy layout (PMDK): libpmemblk's pmemblk_create() writes no BTT at all;
 * until the first write (or set_error) every block reads as zeros and the
 * first write lays out every arena. NTM_BTT_LAZY does the same.
 */
#ifndef NTMEM_BTT_LAYOUT_H
#define NTMEM_BTT_LAYOUT_H

#include <endian.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#define BTT_SIG "BTT_ARENA_INFO\0"	/* 14 characters and two NULs */
#define BTT_SIG_LEN 16
#define BTT_INFO_SIZE 4096u
#define BTT_ALIGN 4096u			/* map and flog sizes */
#define BTT_FLOG_PAIR 64u		/* one flog pair, padded */
#define BTT_MAP_ENTRY 4u
#define BTT_MAX_ARENA (1ull << 39)	/* 512 GiB */
#define BTT_MIN_ARENA (16ull << 20)	/* 16 MiB */
#define BTT_MIN_LBASIZE 512u
#define BTT_INTERNAL_ALIGN 256u
#define BTT_DEFAULT_NFREE 256u
#define BTT_MAJOR 1		/* what we write without NTM_BTT_V2 */
#define BTT_MINOR 1
#define BTT2_MAJOR 2		/* with it */
#define BTT2_MINOR 0

#define BTT_INFO_FLAG_ERROR 0x1u

#define BTT_MAP_ZERO 0x80000000u
#define BTT_MAP_ERROR 0x40000000u
#define BTT_MAP_NORMAL 0xc0000000u	/* both flags */
#define BTT_MAP_FLAGS 0xc0000000u
#define BTT_MAP_LBA 0x3fffffffu

/*
 * The arena size limits: BTT_MAX_ARENA and BTT_MIN_ARENA, except in tests
 * that lower them to have several arenas in a few MiB (btt.c; hidden).
 */
extern uint64_t ntm_btt_max_arena;
extern uint64_t ntm_btt_min_arena;

struct btt_info {
	char sig[BTT_SIG_LEN];
	uint8_t uuid[16];
	uint8_t parent_uuid[16];
	uint32_t flags;
	uint16_t major;
	uint16_t minor;
	uint32_t external_lbasize;
	uint32_t external_nlba;
	uint32_t internal_lbasize;
	uint32_t internal_nlba;
	uint32_t nfree;
	uint32_t infosize;
	uint64_t nextoff;
	uint64_t dataoff;
	uint64_t mapoff;
	uint64_t flogoff;
	uint64_t infooff;
	uint8_t unused[3968];
	uint64_t checksum;
};
_Static_assert(sizeof(struct btt_info) == BTT_INFO_SIZE, "info block size");
_Static_assert(offsetof(struct btt_info, nextoff) == 80, "nextoff offset");
_Static_assert(offsetof(struct btt_info, checksum) == 4088, "checksum offset");

struct btt_flog {
	uint32_t lba;
	uint32_t old_map;
	uint32_t new_map;
	uint32_t seq;
};
_Static_assert(sizeof(struct btt_flog) == 16, "flog entry size");

/* The next sequence number: 1 -> 2 -> 3 -> 1 (0 never follows). */
static inline uint32_t btt_seq_next(uint32_t seq)
{
	static const uint32_t next[4] = { 1, 2, 3, 1 };

	return next[seq & 3];
}

/* Fletcher-64 over 32-bit LE words, the checksum field read as zero. */
static inline uint64_t btt_info_checksum(const struct btt_info *info)
{
	const unsigned char *p = (const unsigned char *)info;
	uint32_t lo = 0, hi = 0;

	for (size_t off = 0; off < sizeof(*info); off += 4) {
		uint32_t w = 0;

		if (off < offsetof(struct btt_info, checksum)) {
			memcpy(&w, p + off, 4);
			w = le32toh(w);
		}
		lo += w;
		hi += lo;
	}
	return (uint64_t)hi << 32 | lo;
}

static inline uint64_t btt_roundup(uint64_t v, uint64_t a)
{
	return (v + a - 1) / a * a;
}

/* PMDK's internal block size for an external one; 0 if it overflows. */
static inline uint32_t btt_internal_lbasize(uint32_t ext)
{
	uint64_t v = ext < BTT_MIN_LBASIZE ? BTT_MIN_LBASIZE : ext;

	v = btt_roundup(v, BTT_INTERNAL_ALIGN);
	return v > BTT_MAP_LBA ? 0 : (uint32_t)v;
}

static inline uint64_t btt_flog_size(uint32_t nfree)
{
	return btt_roundup((uint64_t)nfree * BTT_FLOG_PAIR, BTT_ALIGN);
}

static inline uint64_t btt_map_size(uint32_t external_nlba)
{
	return btt_roundup((uint64_t)external_nlba * BTT_MAP_ENTRY, BTT_ALIGN);
}

/*
 * Fill @info (host byte order) for an arena of @arena_size bytes with
 * @rest bytes of the BTT after it. Return 0, or -1 when fewer than
 * 2 * nfree blocks fit (PMDK's lower bound) or counts overflow.
 */
static inline int btt_info_geometry(struct btt_info *info, uint32_t lbasize,
				    uint32_t nfree, uint64_t arena_size,
				    uint64_t rest)
{
	uint32_t ilbasize = btt_internal_lbasize(lbasize);
	uint64_t meta = 2ull * BTT_INFO_SIZE + btt_flog_size(nfree);
	uint64_t nlba;

	if (!ilbasize || !nfree || arena_size < meta + BTT_ALIGN)
		return -1;
	/* BTT_ALIGN: room for the map's rounding up to 4 KiB. */
	nlba = (arena_size - meta - BTT_ALIGN) / (ilbasize + BTT_MAP_ENTRY);
	if (nlba < 2ull * nfree || nlba > BTT_MAP_LBA)
		return -1;
	info->external_lbasize = lbasize;
	info->internal_lbasize = ilbasize;
	info->nfree = nfree;
	info->infosize = BTT_INFO_SIZE;
	info->internal_nlba = (uint32_t)nlba;
	info->external_nlba = (uint32_t)nlba - nfree;
	info->dataoff = BTT_INFO_SIZE;
	info->nextoff = rest >= ntm_btt_min_arena ? arena_size : 0;
	info->infooff = arena_size - BTT_INFO_SIZE;
	info->flogoff = info->infooff - btt_flog_size(nfree);
	info->mapoff = info->flogoff - btt_map_size(info->external_nlba);
	return 0;
}

/*
 * The arenas of a BTT of @size bytes: PMDK's rule, with one extension: a
 * BTT smaller than 16 MiB is one arena of the whole size (PMDK and the
 * kernel refuse those; small ones serve tests and small pools).
 */
static inline unsigned btt_narena(uint64_t size)
{
	uint64_t n;

	if (size < ntm_btt_min_arena)
		return 1;
	n = size / ntm_btt_max_arena;
	if (size % ntm_btt_max_arena >= ntm_btt_min_arena)
		n++;
	return n > 4096 ? 4096 : (unsigned)n;
}

#endif /* NTMEM_BTT_LAYOUT_H */
