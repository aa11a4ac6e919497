/* SPDX-License-Identifier: MIT */
/*
 * blk.h - what the files of the libpmemblk drop-in share: PMDK 1.12.1's
 * on-media pool header, the pool handle, errors and allocation.
 *
 * A pool file, as PMDK writes it (all integers little-endian):
 *
 *   0     pool header, 4096 bytes (struct blk_pool_hdr)
 *   4096  bsize (uint32), is_zeroed (int32), then the run-time state
 *         PMDK's library keeps there (struct blk_desc), never read back
 *         by a library but read by pmempool info
 *   8192  the BTT, to the end of the file (its parent UUID is the
 *         header's poolset_uuid)
 *
 * A pool set (poolset.c) is the same pool over several part files, each
 * with a pool header of its own, mapped as one range.
 */
#ifndef NTMEM_COMPAT_LIBPMEMBLK_H
#define NTMEM_COMPAT_LIBPMEMBLK_H

#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include <ntmem/btt.h>

#define BLK_SIG "PMEMBLK"	/* 8 bytes with its NUL */
#define BLK_MAJOR 1
#define BLK_HDR_SIZE 4096
#define BLK_DESC_OFF 4096	/* bsize and is_zeroed */
#define BLK_DATA_OFF 8192	/* the BTT */

/* Feature bits of PMDK's pool header. */
#define BLK_FEAT_CHECK_BAD_BLOCKS 0x0001u	/* compat */
#define BLK_FEAT_SINGLEHDR 0x0001u		/* incompat: multi-part sets */
#define BLK_FEAT_CKSUM_2K 0x0002u		/* incompat */
#define BLK_FEAT_SDS 0x0004u			/* incompat: shutdown state */
#define BLK_FEAT_INCOMPAT_KNOWN \
	(BLK_FEAT_SINGLEHDR | BLK_FEAT_CKSUM_2K | BLK_FEAT_SDS)

/* The checksum covers the first 2 KiB with CKSUM_2K, else all but itself. */
#define BLK_HDR_CSUM_2K_END 2048

struct blk_pool_hdr {
	char signature[8];
	uint32_t major;
	uint32_t compat;
	uint32_t incompat;
	uint32_t ro_compat;
	uint8_t poolset_uuid[16];
	uint8_t uuid[16];
	uint8_t prev_part_uuid[16];
	uint8_t next_part_uuid[16];
	uint8_t prev_repl_uuid[16];
	uint8_t next_repl_uuid[16];
	uint64_t crtime;		/* seconds since the epoch */
	uint64_t alignment_desc;	/* arch flags: see blk_alignment_desc() */
	uint8_t machine_class;		/* 2: 64-bit */
	uint8_t data;			/* 1: little-endian */
	uint8_t arch_reserved[4];
	uint16_t machine;		/* ELF e_machine */
	uint8_t unused[1904];
	uint8_t unused2[1976];		/* never checksummed */
	uint8_t sds[64];		/* shutdown state, PMDK's to maintain */
	uint64_t checksum;		/* Fletcher64 */
};

_Static_assert(sizeof(struct blk_pool_hdr) == BLK_HDR_SIZE, "PMDK pool_hdr");
_Static_assert(__builtin_offsetof(struct blk_pool_hdr, crtime) == 120, "crtime");
_Static_assert(__builtin_offsetof(struct blk_pool_hdr, unused2) ==
	       BLK_HDR_CSUM_2K_END, "2K checksum end");
_Static_assert(__builtin_offsetof(struct blk_pool_hdr, checksum) == 4088,
	       "checksum");

/*
 * PMDK's struct pmemblk after the pool header, on a 64-bit machine: the
 * format's bsize and is_zeroed, then the run-time state PMDK's library
 * stores into the mapped pool at every create and open and never reads
 * back. PMDK's pmempool info does read it: it finds the BTT at data -
 * addr (8192), and refuses a pool where that is not positive ("wrong
 * BTT layout offset"). Host byte order, as PMDK stores it.
 */
struct blk_desc {
	uint32_t bsize;
	int32_t is_zeroed;
	uint64_t addr;		/* where the pool is mapped */
	uint64_t size;		/* bytes mapped */
	int32_t is_pmem;	/* persisted by flush + drain */
	int32_t rdonly;
	uint64_t data;		/* addr + BLK_DATA_OFF: the BTT */
	uint64_t datasize;	/* bytes of the BTT */
	uint64_t nlba;		/* never set by PMDK: 0 */
	uint64_t bttp;		/* PMDK's BTT handle: 0 here */
	uint32_t nlane;		/* lanes of the BTT */
	uint32_t next_lane;	/* PMDK's lane rotor: 0 */
	uint64_t locks;		/* PMDK's lane locks: 0 here */
	int32_t is_dev_dax;
	uint32_t pad;
	uint64_t ctl;		/* PMDK's ctl tree: 0 here */
	uint64_t set;		/* PMDK's pool set: 0 here */
};

_Static_assert(__builtin_offsetof(struct blk_desc, addr) == 8, "addr");
_Static_assert(__builtin_offsetof(struct blk_desc, data) == 32, "data");
_Static_assert(__builtin_offsetof(struct blk_desc, nlane) == 64, "nlane");
_Static_assert(__builtin_offsetof(struct blk_desc, is_dev_dax) == 80,
	       "is_dev_dax");
_Static_assert(sizeof(struct blk_desc) == 104, "PMDK's struct pmemblk");

struct pmemblk {
	struct ntm_ns *ns;	/* NULL for a pool set */
	unsigned char *base;	/* the whole file (or set), mapped */
	size_t size;
	bool set_mapped;	/* base is a pool set's parts (poolset.c) */
	bool is_pmem;		/* persist by flush + drain, else msync */
	bool rdonly;
	uint32_t bsize;
	struct ntm_btt *btt;
};

/* --- misc.c --- */

/* Set pmemblk_errormsg() (printf-style) and errno to @err. */
void blk_error(int err, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
/* The allocation functions pmemblk_set_funcs() chose. */
void *blk_malloc(size_t n);
void blk_free(void *p);
/* ctl values that change what create and open do. */
extern int blk_ctl_fallocate_at_create;
extern int blk_ctl_verbose;

/* --- pool.c --- */

uint64_t blk_fletcher64(const void *p, size_t len, size_t csum_off,
			size_t end_off);
uint64_t blk_alignment_desc(void);

/* --- poolset.c --- */

struct blk_part {
	char *path;
	size_t size;		/* as the set file says */
	int fd;			/* open during one call only, else -1 */
	bool made;		/* this call created the file */
};

struct blk_set {
	char *path;		/* the set file */
	unsigned nparts;
	struct blk_part *part;
};

/*
 * Parse the pool set file open on @fd; 0, or -1 with errno and a message
 * naming @path and the line.
 */
int blk_set_parse(const char *path, int fd, struct blk_set **set);
void blk_set_free(struct blk_set *set);
/* The bytes of the pool: every part's whole pages less the headers. */
size_t blk_set_size(const struct blk_set *set);
/*
 * Check the sizes, open and lock every part (@create: making the missing
 * ones), map them as one range; the parts' descriptors stay open in @set
 * until blk_set_close_parts(). NULL with errno and the message on failure
 * (nothing left open or made).
 */
struct pmemblk *blk_set_map(struct blk_set *set, bool create, bool rdonly,
			    mode_t mode);
/* Close the parts' descriptors; @failed: remove the files this call made. */
void blk_set_close_parts(struct blk_set *set, bool failed);
/* Make [p, p + n) of a pool set's mapping durable (msync); 0 or -errno. */
int blk_set_persist(const void *p, size_t n);

#endif
