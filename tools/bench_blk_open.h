/* SPDX-License-Identifier: MIT */
/*
 * bench_blk_open.h - `ntmem bench blk --open`: what a libpmemblk pool costs
 * before its first I/O is done, by pool size, for ntmem's drop-in and
 * PMDK's library side by side.
 */
#ifndef NTMEM_TOOL_BENCH_BLK_OPEN_H
#define NTMEM_TOOL_BENCH_BLK_OPEN_H

#include <stdbool.h>
#include <stdint.h>

#define BLK_OPEN_MAX_SIZES 8

struct blk_open_options {
	uint64_t sizes[BLK_OPEN_MAX_SIZES];	/* pool sizes, in order */
	int nsizes;
	uint64_t bs;		/* the pools' block size */
	int runs;		/* medians over this many pools of each size */
	const char *dir;	/* where the pools are created */
	bool json, csv, pmdk;
};

/* Run it: the exit status (0, 1, or 2 for a --dir on a tmpfs or ramfs). */
int bench_blk_open(const struct blk_open_options *o);

#endif
