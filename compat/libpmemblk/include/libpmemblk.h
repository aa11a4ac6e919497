/* SPDX-License-Identifier: MIT */
/*
 * libpmemblk.h - PMDK's libpmemblk API (version 1.1), served by ntmem's
 * drop-in libpmemblk.so.1: an array of blocks of one size in a pool file,
 * each block written atomically. The declarations, types and constants
 * are PMDK's (x86-64, aarch64 and riscv64 values), so programs written
 * against PMDK build against this header unchanged.
 */
#ifndef LIBPMEMBLK_H
#define LIBPMEMBLK_H 1

#include <stddef.h>
#include <sys/types.h>

#ifdef __cplusplus
extern "C" {
#endif

/* An open pool; its contents are the library's. */
typedef struct pmemblk PMEMblkpool;

/* The API version this header describes, for pmemblk_check_version(). */
#define PMEMBLK_MAJOR_VERSION 1
#define PMEMBLK_MINOR_VERSION 1

const char *pmemblk_check_version(unsigned major_required,
				  unsigned minor_required);

/* Smallest pool: 16 MiB of BTT plus 8 KiB of headers. */
#define PMEMBLK_MIN_POOL ((size_t)((1u << 20) * 16 + (1u << 10) * 8))

/* Smallest part of a pool set (pool sets are PMDK's; see ntmem-libpmemblk(7)) */
#define PMEMBLK_MIN_PART ((size_t)(1024 * 1024 * 2))

/* Smallest block the BTT stores; a smaller bsize is padded to it. */
#define PMEMBLK_MIN_BLK ((size_t)512)

PMEMblkpool *pmemblk_open(const char *path, size_t bsize);
PMEMblkpool *pmemblk_create(const char *path, size_t bsize, size_t poolsize,
			    mode_t mode);
int pmemblk_check(const char *path, size_t bsize);
void pmemblk_close(PMEMblkpool *pbp);
size_t pmemblk_bsize(PMEMblkpool *pbp);
size_t pmemblk_nblock(PMEMblkpool *pbp);
int pmemblk_read(PMEMblkpool *pbp, void *buf, long long blockno);
int pmemblk_write(PMEMblkpool *pbp, const void *buf, long long blockno);
int pmemblk_set_zero(PMEMblkpool *pbp, long long blockno);
int pmemblk_set_error(PMEMblkpool *pbp, long long blockno);

/*
 * Allocation functions the library uses for its own memory; NULL keeps
 * the default. They must not call back into the library.
 */
void pmemblk_set_funcs(void *(*malloc_func)(size_t size),
		       void (*free_func)(void *ptr),
		       void *(*realloc_func)(void *ptr, size_t size),
		       char *(*strdup_func)(const char *s));

const char *pmemblk_errormsg(void);

/* PMDK's control interface (marked experimental there). */
int pmemblk_ctl_get(PMEMblkpool *pbp, const char *name, void *arg);
int pmemblk_ctl_set(PMEMblkpool *pbp, const char *name, void *arg);
int pmemblk_ctl_exec(PMEMblkpool *pbp, const char *name, void *arg);

#ifdef __cplusplus
}
#endif

#endif /* LIBPMEMBLK_H */
