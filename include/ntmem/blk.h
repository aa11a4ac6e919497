/* SPDX-License-Identifier: MIT */
/*
 * ntmem/blk.h - a block device on a namespace, the kernel pmem driver's
 * data path in user space.
 *
 * Writes copy with ntm_memcpy_flush() (no line left dirty) and fence only
 * where the caller asks for durability (NTM_BLK_FUA, ntm_blk_flush()).
 * Reads copy with ntm_copy_mc(): poison or a vanished page returns -EIO
 * instead of killing the process. Bounds and alignment are checked once
 * per request, then the page-sized copies run unchecked - the point of the
 * seed that took the per-copy hardened-usercopy check out of the pmem
 * driver (~375K -> ~519K 4 KiB write IOPS). The per-copy check is still
 * here as the "hardened" mode, for debugging and for the benchmark.
 *
 * Bad sectors (512-byte units, as the kernel's badblocks): a read that
 * touches one returns -EIO without touching the media; a write to an
 * emulated namespace clears them once its data is durable (the kernel
 * clears poison the same way); on a real device clearing needs the
 * platform (ndctl clear-errors) and such a write is -EIO. A devdax
 * device's list is read from sysfs when it is opened: its nd region's
 * badblocks, shifted and clipped to the device's window. An fsdax file's
 * is its block device's (/sys/dev/block/MAJ:MIN/badblocks, a partition's
 * disk's less its start) mapped through the file's FIEMAP extents into
 * sectors of the file, also read at open.
 *
 * An emulated namespace keeps its list in a file of "sector count" lines.
 * A change is written to a temporary file, fsync'd, renamed over the list
 * and the directory fsync'd before the device uses it: a change that
 * cannot be made durable returns the error and changes nothing. A list
 * file with any other line is refused (-EINVAL, naming file and line).
 *
 * Writes never die of SIGBUS: a file-backed namespace's space is
 * allocated (2 MiB at a time) before the first write to it, so a full file
 * system is -ENOSPC before anything is stored; a file truncated underneath
 * is -EIO, even when it happens during the copy (the bytes of the request
 * before the missing page may then hold new data, as after a crash).
 *
 * BTT mode (ntm_blk_config.btt): the device is the BTT's external blocks,
 * sector size = its lbasize (512 or 4096), size = blocks x lbasize. Each
 * sector is read and written by ntm_btt_read()/ntm_btt_write() on a lane
 * the calling thread holds for the request, and is atomic on its own: a
 * request of several sectors is not, and one that fails part way leaves
 * the sectors before the failure written. Every write is durable on
 * return (FUA is implied); ntm_blk_flush() has nothing left to do. A BTT whose
 * metadata cannot be trusted opens read-only: writes are -EROFS. The bad-sector
 * list applies on top, in 512-byte units of the device the caller sees:
 * a read touching one is -EIO, a write clears it once durable. A devdax
 * device's sysfs list describes the raw media under the BTT's layout, so
 * it is not loaded: a poisoned block read through the BTT is -EIO from
 * the machine-check-safe copy instead. A file-backed namespace is
 * allocated whole (fallocate) when the device opens, since the BTT may
 * place a sector anywhere: a full file system is -ENOSPC then, not a
 * SIGBUS later. Hardened mode does not apply (the copies are the BTT's).
 *
 * Pointers are checked once per request: a NULL device, buffer, vector
 * or vector base is -EINVAL naming it. Other invalid pointers in the
 * caller's memory are undefined behaviour, as with read(2) into them
 * from a library: the fault is the caller's and is not caught.
 */
#ifndef NTMEM_BLK_H
#define NTMEM_BLK_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>
#include <sys/uio.h>

#ifdef __cplusplus
extern "C" {
#endif

struct ntm_ns;
struct ntm_memmap;
struct ntm_blk;

/* ntm_blk_write() flags */
#define NTM_BLK_FUA (1u << 0)	/* durable on return: drain (or msync) */

#define NTM_BADBLOCK_SECTOR 512u	/* unit of the bad-sector list */

/*
 * ntm_blk_config.flags: the BTT is 2.0 (ntmem/btt.h's NTM_BTT_V2): laid
 * out as 2.0 with @btt_create, required to be 2.0 without. Unset: 1.1 is
 * laid out, either version opens.
 */
#define NTM_BLK_BTT_V2 (1u << 0)

struct ntm_blk_config {
	unsigned sector_size;	/* 512 or 4096; 0 means 512 */
	/*
	 * Re-validate every page-sized copy against the namespace bounds
	 * and, with @memmap, the page's descriptor (owner and reserved
	 * flag): the per-copy check the seed removed. Off by default.
	 */
	bool hardened;
	const struct ntm_memmap *memmap;	/* over the same namespace */
	/*
	 * Where an emulated namespace keeps its bad-sector list: NULL means
	 * "<namespace path>.badblocks" for a file, nowhere for anonymous or
	 * temporary memory. A devdax device reads its list from sysfs.
	 */
	const char *badblocks_path;
	/*
	 * Atomic sectors: with @btt every sector goes through a BTT over the
	 * whole namespace (ntmem/btt.h), so a crash or a racing reader sees
	 * each sector entirely old or entirely new. @btt_create lays a new
	 * BTT out (what the namespace held is lost); without it the BTT
	 * already there is opened and its lbasize is the sector size
	 * (@sector_size 0, or the same value). @btt_nfree: free blocks per
	 * arena when creating; 0 means 256 (also the most lanes).
	 */
	bool btt;
	bool btt_create;
	uint32_t btt_nfree;
	/*
	 * Room to grow without breaking the ABI: bits of @flags and the
	 * reserved words get meanings in later releases, zero meaning what
	 * the library does today. Both must be 0 here (-EINVAL otherwise),
	 * as a config cleared with { 0 } or built with designated
	 * initialisers is. Four words: twice what the config structs grew
	 * by from 0.1 to 0.3 (a callback and its argument, a path and a
	 * count); 32 bytes in a struct passed once per open.
	 */
	unsigned flags;		/* NTM_BLK_BTT_V2 */
	uint64_t reserved[4];
};

struct ntm_badblock {
	uint64_t sector;	/* first bad 512-byte sector */
	uint64_t count;		/* sectors */
};

/**
 * ntm_blk_open() - a block device over @ns
 *
 * Return: 0, or -EINVAL (a flag bit or reserved word of @cfg that is not
 * 0; sector size; a namespace size that is not a
 * multiple of it; a bad-sector list file with a line that is not
 * "sector count", or that is not a regular file; with a BTT: hardened
 * mode, a sector size other than the BTT's, metadata that cannot be
 * trusted), -EISDIR (the list path is a directory), -EFBIG (a list file
 * over 64 MiB), -EROFS (btt_create on a read-only namespace), -EIO (a
 * persist failed while the BTT was laid out or its flog replayed),
 * -ENOMEM, -ENOSPC (no room for a BTT, or for a file-backed namespace's
 * blocks), -ESTALE (a BTT on a file whose path names another file now:
 * the blocks are reserved through the path), or the error reading the
 * bad-sector list.
 */
int ntm_blk_open(struct ntm_blk **blk, struct ntm_ns *ns,
		 const struct ntm_blk_config *cfg);
void ntm_blk_close(struct ntm_blk *blk);

uint64_t ntm_blk_size(const struct ntm_blk *blk);	/* bytes */
unsigned ntm_blk_sector_size(const struct ntm_blk *blk);

/*
 * Read or write @len bytes at byte offset @off; both multiples of the
 * sector size. Return: @len, or -EINVAL (zero length, unaligned offset or
 * length, too many vectors, a NULL pointer), -ERANGE (past the end, or
 * off + len wraps), -EIO (a bad sector, a media error during the read, a
 * file truncated underneath), -ENOSPC (a sparse file's file system is
 * full), -EROFS (a write to a read-only namespace), -EFAULT (hardened
 * mode: a page outside the device or not this namespace's), or the error
 * of saving the bad-sector list when a write clears a bad sector (which
 * then stays bad). Nothing is written when the request is rejected.
 */
ssize_t ntm_blk_read(struct ntm_blk *blk, void *buf, size_t len, uint64_t off);
ssize_t ntm_blk_write(struct ntm_blk *blk, const void *buf, size_t len,
		      uint64_t off, unsigned flags);
ssize_t ntm_blk_readv(struct ntm_blk *blk, const struct iovec *iov, int iovcnt,
		      uint64_t off);
ssize_t ntm_blk_writev(struct ntm_blk *blk, const struct iovec *iov, int iovcnt,
		       uint64_t off, unsigned flags);

/** ntm_blk_flush() - make every completed write durable (drain, or msync) */
int ntm_blk_flush(struct ntm_blk *blk);

/*
 * The bad-sector list. Adding (inject) and clearing change an emulated
 * namespace's list and persist it durably; a real device returns
 * -EOPNOTSUPP, a read-only namespace -EROFS, a range past the end
 * -ERANGE, a list file that cannot be written the error of that step
 * (the list is then unchanged, in memory and on disk).
 * ntm_blk_badblocks() copies up to @max entries (none when @out is NULL)
 * and returns how many there are.
 */
int ntm_blk_badblocks_add(struct ntm_blk *blk, uint64_t sector, uint64_t count);
int ntm_blk_badblocks_clear(struct ntm_blk *blk, uint64_t sector, uint64_t count);
size_t ntm_blk_badblocks(struct ntm_blk *blk, struct ntm_badblock *out,
			 size_t max);

#ifdef __cplusplus
}
#endif

#endif /* NTMEM_BLK_H */
