// SPDX-License-Identifier: MIT
/*
 * io.c - pmemblk_read(), pmemblk_write(), pmemblk_set_zero(),
 * pmemblk_set_error(), pmemblk_bsize() and pmemblk_nblock(): one block at
 * a time through the BTT, each call on a lane of its own, with PMDK's
 * checks and messages (a negative block number, a read-only pool, a block
 * past the end).
 */
#include <errno.h>
#include <string.h>

#include <ntmem.h>

#include "blk.h"
#include "include/libpmemblk.h"

enum blk_op { OP_READ, OP_WRITE, OP_ZERO, OP_ERROR };

static int blk_io(PMEMblkpool *pbp, enum blk_op op, void *buf,
		  long long blockno)
{
	uint64_t nlba;
	unsigned lane;
	int ret;

	if (op != OP_READ && pbp->rdonly) {
		blk_error(EROFS, "EROFS (pool is read-only)");
		return -1;
	}
	if (blockno < 0) {
		blk_error(EINVAL, "negative block number");
		return -1;
	}
	nlba = ntm_btt_nlba(pbp->btt);
	if ((unsigned long long)blockno >= nlba) {
		blk_error(EINVAL, "lba out of range (nlba %llu)",
			  (unsigned long long)nlba);
		return -1;
	}
	lane = ntm_btt_lane_get(pbp->btt);
	switch (op) {
	case OP_READ:
		ret = ntm_btt_read(pbp->btt, lane, (uint64_t)blockno, buf);
		break;
	case OP_WRITE:
		ret = ntm_btt_write(pbp->btt, lane, (uint64_t)blockno, buf);
		break;
	case OP_ZERO:
		ret = ntm_btt_set_zero(pbp->btt, lane, (uint64_t)blockno);
		break;
	default:
		ret = ntm_btt_set_error(pbp->btt, lane, (uint64_t)blockno);
		break;
	}
	ntm_btt_lane_put(pbp->btt, lane);
	if (ret) {
		blk_error(-ret, "%s", ntm_errmsg());
		return -1;
	}
	return 0;
}

int pmemblk_read(PMEMblkpool *pbp, void *buf, long long blockno)
{
	return blk_io(pbp, OP_READ, buf, blockno);
}

int pmemblk_write(PMEMblkpool *pbp, const void *buf, long long blockno)
{
	/* The BTT only reads from it. */
	return blk_io(pbp, OP_WRITE, (void *)(uintptr_t)buf, blockno);
}

int pmemblk_set_zero(PMEMblkpool *pbp, long long blockno)
{
	return blk_io(pbp, OP_ZERO, NULL, blockno);
}

int pmemblk_set_error(PMEMblkpool *pbp, long long blockno)
{
	return blk_io(pbp, OP_ERROR, NULL, blockno);
}

size_t pmemblk_bsize(PMEMblkpool *pbp)
{
	return pbp->bsize;
}

size_t pmemblk_nblock(PMEMblkpool *pbp)
{
	return (size_t)ntm_btt_nlba(pbp->btt);
}
