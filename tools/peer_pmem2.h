/* SPDX-License-Identifier: MIT */
/*
 * peer_pmem2.h - a libpmem2.so.1 as a benchmark peer: PMDK's (Debian's
 * libpmem2) or ntmem's drop-in, loaded at run time so ntmem never
 * depends on either, and both in one process side by side. Absent
 * library: its rows are skipped.
 */
#ifndef NTMEM_TOOL_PEER_PMEM2_H
#define NTMEM_TOOL_PEER_PMEM2_H

#include <stdbool.h>
#include <stddef.h>

/* PMDK's values (libpmem2/base.h), so no PMDK header is needed to build. */
#define PEER_PMEM2_F_MEM_NODRAIN (1u << 0)
#define PEER_PMEM2_F_MEM_NONTEMPORAL (1u << 1)
#define PEER_PMEM2_GRANULARITY_CACHE_LINE 1

typedef void *(*peer_pmem2_memcpy_fn)(void *dst, const void *src, size_t n,
				      unsigned flags);

/* The library's structures are opaque in libpmem2.h too. */
struct peer_pmem2 {
	void *handle;
	char path[256];		/* the file the dynamic loader picked */
	int (*source_from_anon)(void **src, size_t size);
	int (*source_delete)(void **src);
	int (*map_from_existing)(void **map, const void *src, void *addr,
				 size_t len, int granularity);
	int (*map_delete)(void **map);
	peer_pmem2_memcpy_fn (*get_memcpy_fn)(void *map);
	const char *(*errormsg)(void);
	void *source, *map;	/* peer_pmem2_map()'s */
	peer_pmem2_memcpy_fn memcpy;	/* the map's, after peer_pmem2_map() */
};

/*
 * Load PMDK's libpmem2.so.1 from the loader's search path, refusing
 * ntmem's drop-in under that name. Returns true when every function
 * resolved; on false, @why says what was missing. Load it before
 * ntmem's: once a library of that soname is loaded, dlopen() by the
 * soname returns it.
 */
bool peer_pmem2_load(struct peer_pmem2 *p, char *why, size_t len);
/* Load the libpmem2.so.1 at @path (ntmem's drop-in): as peer_pmem2_load(). */
bool peer_pmem2_load_path(struct peer_pmem2 *p, const char *path, char *why,
			  size_t len);
/*
 * Make [@addr, @addr + @len) a map of the library with cache-line store
 * granularity (pmem2_map_from_existing() on an anonymous source): the
 * memory a benchmark already has, with the same granularity for both
 * libraries whatever the memory is. Sets p->memcpy; false with @why.
 */
bool peer_pmem2_map(struct peer_pmem2 *p, void *addr, size_t len, char *why,
		    size_t wlen);
/* Deletes the map (the memory stays) and closes the library. */
void peer_pmem2_unload(struct peer_pmem2 *p);

#endif
