/* SPDX-License-Identifier: MIT */
/*
 * libpmem.h - PMDK's libpmem API (version 1.1), served by ntmem's drop-in
 * libpmem.so.1. The declarations and flag values are PMDK's, so programs
 * written against PMDK build against this header unchanged.
 */
#ifndef LIBPMEM_H
#define LIBPMEM_H 1

#include <stddef.h>
#include <sys/types.h>

#ifdef __cplusplus
extern "C" {
#endif

/* pmem_map_file() flags */
#define PMEM_FILE_CREATE (1 << 0)	/* create the file if missing */
#define PMEM_FILE_EXCL (1 << 1)		/* with CREATE: fail if it exists */
#define PMEM_FILE_SPARSE (1 << 2)	/* do not allocate the file's blocks */
#define PMEM_FILE_TMPFILE (1 << 3)	/* path is a directory: unnamed file */

/* Minimum size of a pool part (PMDK's constant, kept for compatibility) */
#define PMEM_MIN_PART ((size_t)(1024 * 1024 * 2))

void *pmem_map_file(const char *path, size_t len, int flags, mode_t mode,
		    size_t *mapped_lenp, int *is_pmemp);
int pmem_unmap(void *addr, size_t len);
int pmem_is_pmem(const void *addr, size_t len);
void pmem_persist(const void *addr, size_t len);
int pmem_msync(const void *addr, size_t len);
int pmem_has_auto_flush(void);
void pmem_flush(const void *addr, size_t len);
void pmem_deep_flush(const void *addr, size_t len);
int pmem_deep_drain(const void *addr, size_t len);
int pmem_deep_persist(const void *addr, size_t len);
void pmem_drain(void);
int pmem_has_hw_drain(void);

void *pmem_memmove_persist(void *pmemdest, const void *src, size_t len);
void *pmem_memcpy_persist(void *pmemdest, const void *src, size_t len);
void *pmem_memset_persist(void *pmemdest, int c, size_t len);
void *pmem_memmove_nodrain(void *pmemdest, const void *src, size_t len);
void *pmem_memcpy_nodrain(void *pmemdest, const void *src, size_t len);
void *pmem_memset_nodrain(void *pmemdest, int c, size_t len);

/* pmem_memcpy() / pmem_memmove() / pmem_memset() flags */
#define PMEM_F_MEM_NODRAIN (1U << 0)	/* no drain at the end */
#define PMEM_F_MEM_NONTEMPORAL (1U << 1) /* non-temporal stores */
#define PMEM_F_MEM_TEMPORAL (1U << 2)	/* ordinary stores + flush */
#define PMEM_F_MEM_WC (1U << 3)		/* write-combining: as NONTEMPORAL */
#define PMEM_F_MEM_WB (1U << 4)		/* write-back: as TEMPORAL */
#define PMEM_F_MEM_NOFLUSH (1U << 5)	/* no flush at all (implies NODRAIN) */

#define PMEM_F_MEM_VALID_FLAGS (PMEM_F_MEM_NODRAIN | \
				PMEM_F_MEM_NONTEMPORAL | \
				PMEM_F_MEM_TEMPORAL | \
				PMEM_F_MEM_WC | \
				PMEM_F_MEM_WB | \
				PMEM_F_MEM_NOFLUSH)

void *pmem_memmove(void *pmemdest, const void *src, size_t len, unsigned flags);
void *pmem_memcpy(void *pmemdest, const void *src, size_t len, unsigned flags);
void *pmem_memset(void *pmemdest, int c, size_t len, unsigned flags);

/* The API version this library provides. */
#define PMEM_MAJOR_VERSION 1
#define PMEM_MINOR_VERSION 1

const char *pmem_check_version(unsigned major_required,
			       unsigned minor_required);
const char *pmem_errormsg(void);

#ifdef __cplusplus
}
#endif

#endif /* LIBPMEM_H */
