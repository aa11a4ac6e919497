/* SPDX-License-Identifier: MIT */
/*
 * pmem2.h - what the files of the libpmem2 drop-in share: the objects
 * behind PMDK's opaque types, and the internal calls between the files.
 *
 * Later parts (virtual-memory reservations, bad blocks, mcsafe I/O, the
 * recorder's proofs) build on these structs; the hook points for a
 * reservation are marked in struct pmem2_config and struct pmem2_map.
 */
#ifndef NTMEM_COMPAT_LIBPMEM2_H
#define NTMEM_COMPAT_LIBPMEM2_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

#include "include/libpmem2.h"
#include "miniasync_abi.h"	/* struct vdm, struct pmem2_future */

/* --- errors (errors.c) ---------------------------------------------------- */

/*
 * Set the thread's pmem2_errormsg() text (printf-style) and return @code,
 * so a failing path reads "return pmem2_err(PMEM2_E_..., "fn: ...", ...)".
 * Messages start with the function's name and name the argument at fault.
 */
int pmem2_err(int code, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

/* As pmem2_err(), with errno's text appended: returns -@err. */
int pmem2_err_errno(int err, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

/* --- sources (source.c) --------------------------------------------------- */

enum pmem2_source_type {
	PMEM2_SOURCE_ANON = 1,	/* anonymous memory: size only */
	PMEM2_SOURCE_FD = 2,	/* a descriptor: a regular file or devdax */
};

struct pmem2_source {
	enum pmem2_source_type type;
	size_t anon_size;	/* PMEM2_SOURCE_ANON: the size given */
	int fd;			/* PMEM2_SOURCE_FD: the caller's, never closed */
	bool devdax;		/* PMEM2_SOURCE_FD: a dax character device */
	dev_t rdev;		/* devdax: its device number */
	dev_t st_dev;		/* regular file: the file system's device */
	int access;		/* O_RDONLY or O_RDWR, as the fd was opened */
};

/*
 * The size and alignment of @src, as pmem2_source_size() and
 * pmem2_source_alignment() answer (for @fn's messages). 0 or a code.
 */
int pmem2_source_geometry(const struct pmem2_source *src, const char *fn,
			  size_t *size, size_t *align);

/* --- the source's hardware (device.c) ------------------------------------- */

/* Where sysfs is: NTMEM_SYSFS_ROOT (tests' fake trees), or "/sys". */
const char *pmem2_sysfs_root(void);

/*
 * The sysfs directory of the nd region @src lies on, into @dir (@len
 * bytes): 1 found, 0 none (anonymous memory, a file not on pmem), or a
 * code (for @fn's messages).
 */
int pmem2_source_region(const struct pmem2_source *src, const char *fn,
			char *dir, size_t len);

/* --- configurations (config.c) -------------------------------------------- */

/* No granularity set yet: pmem2_map_new() refuses (GRANULARITY_NOT_SET). */
#define PMEM2_GRANULARITY_UNSET (-1)

/*
 * Whether @g is one of PMDK's three granularities: what a configuration
 * may require and pmem2_map_from_existing() may be told (anything else
 * is PMEM2_E_GRANULARITY_NOT_SUPPORTED; the map's functions are chosen by
 * it).
 */
static inline bool pmem2_granularity_valid(int g)
{
	return g == PMEM2_GRANULARITY_BYTE ||
	       g == PMEM2_GRANULARITY_CACHE_LINE ||
	       g == PMEM2_GRANULARITY_PAGE;
}

struct pmem2_config {
	size_t offset;		/* into the source; a multiple of its alignment */
	size_t length;		/* 0: from offset to the end of the source */
	int granularity;	/* the required one, or PMEM2_GRANULARITY_UNSET */
	enum pmem2_sharing_type sharing;
	unsigned prot;		/* PMEM2_PROT_* */
	/*
	 * pmem2_config_set_vm_reservation() sets these; pmem2_map_new() maps
	 * into [rsv + rsv_offset, +length) when rsv is set.
	 */
	struct pmem2_vm_reservation *rsv;
	size_t rsv_offset;
	/* pmem2_config_set_vdm(): the maps' data mover; NULL: their own. */
	struct vdm *vdm;
};

/* --- mappings (map.c, persist.c) ------------------------------------------ */

struct pmem2_map {
	void *addr;
	size_t size;		/* pmem2_map_get_size() */
	/* What stores need to become durable, chosen by pmem2_map_new(). */
	enum pmem2_granularity granularity;
	bool owned;		/* pmem2_map_new() mapped it: delete unmaps */
	bool devdax;		/* of a devdax source (deep flush: the region) */
	dev_t rdev;		/* devdax: its device number */
	enum pmem2_source_type source_type;
	/* The functions pmem2_get_*_fn() return, set once per granularity. */
	pmem2_persist_fn persist_fn;
	pmem2_flush_fn flush_fn;
	pmem2_drain_fn drain_fn;
	pmem2_memmove_fn memmove_fn;
	pmem2_memcpy_fn memcpy_fn;
	pmem2_memset_fn memset_fn;
	/*
	 * The reservation it lies in (pmem2_map_new() into one), or NULL;
	 * its offset there (kept by a shrink from the start).
	 */
	struct pmem2_vm_reservation *rsv;
	size_t rsv_offset;
	/*
	 * The data mover pmem2_*_async() use (async.c): the config's, or
	 * &mover, the map's own synchronous one.
	 */
	struct vdm *vdm;
	struct vdm mover;
	/* The registry's list of maps of length 0 (map.c). */
	struct pmem2_map *next_empty;
};

/* Fill @map's function pointers for its granularity (persist.c). */
void pmem2_map_set_fns(struct pmem2_map *map);

/*
 * The registry of live mappings (map.c): pmem2_map_from_existing() refuses
 * a range that overlaps one (PMEM2_E_MAP_EXISTS), as PMDK's does; a map
 * of length 0 is the point at its address.
 * pmem2_map_register() returns 0 or that code. pmem2_map_delete() takes
 * a map out before its pages go.
 */
int pmem2_map_register(struct pmem2_map *map);

/* --- asynchronous copies (async.c) ---------------------------------------- */

/*
 * Set @map's own mover up, and make @vdm (NULL: that one) the one its
 * futures use. After pmem2_map_set_fns(): the mover copies with them.
 */
void pmem2_map_set_mover(struct pmem2_map *map, struct vdm *vdm);

/* The exported calls (<libpmem2/async.h> declares them for programs). */
int pmem2_config_set_vdm(struct pmem2_config *cfg, struct vdm *vdm);
struct pmem2_future pmem2_memcpy_async(struct pmem2_map *map, void *pmemdest,
				       const void *src, size_t len,
				       unsigned flags);
struct pmem2_future pmem2_memmove_async(struct pmem2_map *map, void *pmemdest,
					const void *src, size_t len,
					unsigned flags);
struct pmem2_future pmem2_memset_async(struct pmem2_map *map, void *str,
				       int c, size_t n, unsigned flags);

/* --- virtual memory reservations (vm_reservation.c) ---------------------- */

/*
 * pmem2_map_new() into a reservation: check that [@offset, +@length) of
 * @rsv is inside it, page aligned (the address also to @align, a devdax
 * source's), and free, and take the reservation's write lock; the
 * address to map at (MAP_FIXED over the placeholder) in *@at. 0 with the
 * lock held, or a code with it released. pmem2_vm_reservation_map_end()
 * then adds @map (NULL: the mapping failed, nothing added; the caller
 * has put the placeholder back) and releases the lock; it cannot fail.
 */
int pmem2_vm_reservation_map_begin(struct pmem2_vm_reservation *rsv,
				   size_t offset, size_t length, size_t align,
				   void **at);
void pmem2_vm_reservation_map_end(struct pmem2_vm_reservation *rsv,
				  struct pmem2_map *map);

/*
 * pmem2_map_delete() of @map (map->rsv set, already out of the registry):
 * the placeholder back over it and out of the reservation, under the
 * reservation's lock, so the range can be mapped again at once. 0 or a
 * code (nothing changed).
 */
int pmem2_vm_reservation_map_remove(struct pmem2_map *map);

/* Map the PROT_NONE placeholder over [@addr, +@len): 0 or -errno. */
int pmem2_vm_reservation_placeholder(void *addr, size_t len);

#endif /* NTMEM_COMPAT_LIBPMEM2_H */
