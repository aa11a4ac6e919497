/* SPDX-License-Identifier: MIT */
/*
 * ntmem/btt.h - atomic sectors: a Block Translation Table over a byte
 * range of persistent memory.
 *
 * The layout on media is the BTT of the NVDIMM namespace specification, as
 * the Linux kernel's btt driver and PMDK's libpmemblk write it: arenas of
 * at most 512 GiB, each with an info block and its backup (checksummed),
 * the data blocks, the map (one 32-bit entry per external LBA, with the
 * zero and error flags) and the flog (one entry pair per free block, with
 * sequence numbers). A write goes to a free block, the flog entry is
 * written last, then the map entry: a power cut leaves every sector
 * entirely old or entirely new, and the next open replays the flog.
 *
 * Lanes: each writer takes one of min(nfree, CPUs) lanes, so writers on
 * different lanes never serialise. A read-tracking table keeps a block
 * that a reader is copying from being handed out as free.
 *
 * Every media write goes through ntmem's copy and persist primitives, so
 * the recorder (ntmem/check.h) sees it and crash images can prove the
 * atomicity.
 */
#ifndef NTMEM_BTT_H
#define NTMEM_BTT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#ifdef __cplusplus
extern "C" {
#endif

struct ntm_btt;

#define NTM_BTT_CREATE (1u << 0)	/* lay out a new BTT over the range */
#define NTM_BTT_READONLY (1u << 1)	/* never write the media */
/*
 * With no BTT in the range (no info block signature at its start nor at
 * the first arena's backup position), open anyway as PMDK's libpmemblk
 * does: every block reads as zeros and the first write (or
 * ntm_btt_set_error()) lays out the BTT. libpmemblk's pmemblk_create()
 * writes no BTT, so its fresh pools need this.
 */
#define NTM_BTT_LAZY (1u << 2)
/*
 * NTM_BTT_CREATE | NTM_BTT_LAZY: create as libpmemblk's pmemblk_create()
 * does, writing no BTT; the first write lays it out. An old BTT's arena 0
 * info blocks (the primary, and the backup where this range's geometry
 * puts it) are zeroed if they carry the signature, so it is never taken
 * for the new one; nothing else is written.
 */
/*
 * BTT 2.0 instead of 1.1. The two layouts are the same but for the info
 * blocks' version (major 2 minor 0, or major 1 minor 1) and where a
 * namespace keeps them, which is the caller's range: the Linux kernel
 * looks for a 1.1 BTT at namespace offset 4096 (label-less namespaces
 * and v1.1 labels) and for a 2.0 one at offset 0 (v1.2 labels, the
 * namespace's claim class BTT2), and ignores the other version there.
 * With NTM_BTT_CREATE or a lazy layout: write 2.0 (without: 1.1, as
 * PMDK's libpmemblk does). Opening a BTT already there: it must be 2.0
 * (-EINVAL otherwise); without the flag either version opens.
 */
#define NTM_BTT_V2 (1u << 3)
/*
 * The range reads as zeros where the map goes (a file just allocated,
 * PMDK's pool descriptor's is_zeroed): the layout (NTM_BTT_CREATE, or a
 * lazy first write) does not write the map's zeros, as PMDK skips them.
 * Taken as a hint only: an arena whose flog area is not all zero was laid
 * out before, and its map is zeroed anyway.
 */
#define NTM_BTT_ZEROED (1u << 4)

struct ntm_btt_config {
	uint32_t lbasize;	/* external block size; 0 means 512 (on
				 * open: whatever the media has) */
	uint32_t nfree;		/* free blocks per arena; 0 means 256 */
	unsigned nlanes;	/* 0 means min(nfree, CPUs) */
	const uint8_t *parent_uuid;	/* 16 bytes, or NULL for zeros (on
					 * open: NULL accepts any, else the
					 * media's must match) */
	unsigned flags;		/* NTM_BTT_* */
	/*
	 * Makes [p, p + n) durable; NULL means flush + drain (ntm_persist),
	 * right for devdax, fsdax and emulation on tmpfs. A namespace on a
	 * page cache passes one that ends in msync (ntm_ns_persist).
	 */
	int (*persist)(void *arg, const void *p, size_t n);
	void *persist_arg;
	/*
	 * Room to grow without breaking the ABI: the bits of @flags no
	 * NTM_BTT_* names and the reserved words get meanings in later
	 * releases, zero meaning what the library does today. Both must
	 * be 0 here (-EINVAL otherwise), as a config cleared with { 0 } or
	 * built with designated initialisers is. Four words: twice what the config structs grew
	 * by from 0.1 to 0.3 (a callback and its argument, a path and a
	 * count); 32 bytes in a struct passed once per open.
	 */
	uint64_t reserved[4];
};

/**
 * ntm_btt_open() - open (or with NTM_BTT_CREATE, lay out) the BTT in
 * [@base, @base + @size)
 *
 * Opening reads every arena's info block (the backup when the primary's
 * checksum fails, and only if it describes this range: it lies where its
 * infooff says, with the nextoff the range's geometry gives; a BTT laid
 * out at another offset is refused), checks the geometry against @size
 * and replays the
 * flog of every lane. Metadata that cannot be trusted is never used to
 * write: the BTT opens read-only (ntm_btt_readonly() says so, reads of
 * blocks whose map entry is sound still work) or fails with -EINVAL and
 * a message (ntm_errmsg()) naming the arena and the field.
 *
 * Return: 0, -EINVAL (also: a flag bit no NTM_BTT_* names, a reserved
 * word that is not 0), -ENOMEM, -ENOSPC (@size too small for one arena).
 */
int ntm_btt_open(struct ntm_btt **btt, void *base, size_t size,
		 const struct ntm_btt_config *cfg);
void ntm_btt_close(struct ntm_btt *btt);

uint64_t ntm_btt_nlba(const struct ntm_btt *btt);	/* external blocks */
/*
 * The BTT's version, major << 16 | minor: NTM_BTT_VERSION(1, 1) or
 * NTM_BTT_VERSION(2, 0) (what the media's info blocks say; a lazy BTT
 * not laid out yet: the version it will write). 0 for NULL.
 */
#define NTM_BTT_VERSION(major, minor) ((uint32_t)(major) << 16 | (minor))
uint32_t ntm_btt_version(const struct ntm_btt *btt);
uint32_t ntm_btt_lbasize(const struct ntm_btt *btt);
bool ntm_btt_readonly(const struct ntm_btt *btt);

/*
 * Read or write one external block. The write is atomic and durable on
 * return: any crash leaves the block entirely old or entirely new.
 * Return: 0, -EINVAL (lba out of range, NULL buffer), -EIO (the block's
 * map entry has the error flag, or its media cannot be read), -EROFS.
 */
int ntm_btt_read(struct ntm_btt *btt, unsigned lane, uint64_t lba, void *buf);
int ntm_btt_write(struct ntm_btt *btt, unsigned lane, uint64_t lba,
		  const void *buf);
/* Zero (the map's zero flag) or mark bad (the error flag) one block. */
int ntm_btt_set_zero(struct ntm_btt *btt, unsigned lane, uint64_t lba);
int ntm_btt_set_error(struct ntm_btt *btt, unsigned lane, uint64_t lba);

/*
 * Lanes: ntm_btt_lane_get() returns a lane for the calling thread (held
 * until ntm_btt_lane_put()); ntm_btt_nlanes() how many there are.
 */
unsigned ntm_btt_nlanes(const struct ntm_btt *btt);
unsigned ntm_btt_lane_get(struct ntm_btt *btt);
void ntm_btt_lane_put(struct ntm_btt *btt, unsigned lane);

/**
 * ntm_btt_check() - verify the metadata without changing it: info blocks
 * and their backups, map entries in range and unique, the flog's free
 * blocks disjoint from the map. Return: 0 when consistent, -EINVAL with
 * ntm_errmsg() naming the first problem.
 */
int ntm_btt_check(struct ntm_btt *btt);

#ifdef __cplusplus
}
#endif

#endif /* NTMEM_BTT_H */
