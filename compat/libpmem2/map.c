// SPDX-License-Identifier: MIT
/*
 * map.c - pmem2_map_new(), pmem2_map_from_existing(), pmem2_map_delete()
 * and the getters, with PMDK's checks and codes.
 *
 * A shared mapping of a file is tried with MAP_SHARED_VALIDATE|MAP_SYNC
 * first: the kernel grants it only where the mapping is the media (a DAX
 * file system), and falls back to MAP_SHARED where it refuses the flag
 * (EINVAL, EOPNOTSUPP), as PMDK does. The store granularity then follows
 * PMDK's rules (granularity()). Every live mapping is in a registry, so
 * pmem2_map_from_existing() can refuse a range that is already one.
 */
#define _GNU_SOURCE
#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/mman.h>
#include <unistd.h>

#include <ntmem/embed.h>	/* ntm_persist_domain_system() */
#include <ntmem/hook.h>	/* NTM_REC_MAPPING(): the checker of ntmem check */

#include "interval.h"	/* src/interval/: the registry of live maps */
#include "pmem2.h"

#ifndef MAP_SYNC
#define MAP_SYNC 0x80000
#endif
#ifndef MAP_SHARED_VALIDATE
#define MAP_SHARED_VALIDATE 0x03
#endif

#define HUGE_2M ((size_t)2 << 20)

/* --- the registry ---------------------------------------------------------- */

/*
 * The live maps by address, in the interval table the other address-keyed
 * registries use (src/interval/); changed and read under registry_lock,
 * which also keeps the maps it names alive while a caller compares them.
 *
 * A map of length 0 (pmem2_map_from_existing() makes one, as PMDK's does)
 * is no interval: it is on the list empty_maps instead. As in PMDK's
 * tree, it is the point at its address: it collides with a map that has
 * that address strictly inside it, with nothing else.
 */
static pthread_mutex_t registry_lock = PTHREAD_MUTEX_INITIALIZER;
static struct ntm_interval_table registry = NTM_INTERVAL_TABLE_INIT(0);
static struct pmem2_map *empty_maps;

/* Whether [@lo, @hi) overlaps a registered map, under registry_lock. */
static bool registry_collides(uintptr_t lo, uintptr_t hi)
{
	const struct ntm_interval *v;
	size_t n, i;

	v = ntm_interval_view(&registry, &n);
	if (lo == hi) {
		i = ntm_interval_find(v, n, lo);
		return i < n && v[i].lo < lo;
	}
	for (const struct pmem2_map *e = empty_maps; e; e = e->next_empty)
		if (lo < (uintptr_t)e->addr && (uintptr_t)e->addr < hi)
			return true;
	return false;	/* an overlapping interval: the insert says so */
}

int pmem2_map_register(struct pmem2_map *map)
{
	uintptr_t lo = (uintptr_t)map->addr;
	int ret = 0;

	pthread_mutex_lock(&registry_lock);
	if (registry_collides(lo, lo + map->size)) {
		ret = -EEXIST;
	} else if (map->size == 0) {
		map->next_empty = empty_maps;
		empty_maps = map;
	} else {
		ret = ntm_interval_insert(&registry, lo, lo + map->size, map);
	}
	pthread_mutex_unlock(&registry_lock);
	if (ret == -EEXIST)
		return PMEM2_E_MAP_EXISTS;	/* as Debian's library */
	return ret;
}

/*
 * Take @map out of the registry: false if it is not there. @map may be a
 * pointer a program freed already (a second pmem2_map_delete()): it is
 * compared, never dereferenced, so the maps are searched by pointer.
 */
static bool registry_remove(struct pmem2_map *map)
{
	const struct ntm_interval *v;
	bool found = false;
	size_t n;

	pthread_mutex_lock(&registry_lock);
	v = ntm_interval_view(&registry, &n);
	for (size_t i = 0; i < n; i++)
		if (v[i].user == map) {
			found = true;
			(void)ntm_interval_remove(&registry, v[i].lo);
			break;
		}
	for (struct pmem2_map **e = &empty_maps; !found && *e;
	     e = &(*e)->next_empty)
		if (*e == map) {
			found = true;
			*e = map->next_empty;
			break;
		}
	pthread_mutex_unlock(&registry_lock);
	return found;
}

/*
 * At dlclose() (and exit) the table's buffers would outlive the only
 * pointers to them, this library's globals: give them back when no map
 * is left (a map still live keeps the table as it is).
 */
__attribute__((destructor)) static void registry_release(void)
{
	size_t n;

	pthread_mutex_lock(&registry_lock);
	(void)ntm_interval_view(&registry, &n);
	if (n == 0)
		ntm_interval_destroy(&registry);
	pthread_mutex_unlock(&registry_lock);
}

/* --- granularity ----------------------------------------------------------- */

/*
 * PMEM2_FORCE_GRANULARITY, as PMDK reads it: BYTE, CACHE_LINE (or
 * CACHELINE) or PAGE in any case; anything else is ignored (-1).
 */
static int forced_granularity(void)
{
	const char *v = getenv("PMEM2_FORCE_GRANULARITY");

	if (!v)
		return -1;
	if (!strcasecmp(v, "BYTE"))
		return PMEM2_GRANULARITY_BYTE;
	if (!strcasecmp(v, "CACHE_LINE") || !strcasecmp(v, "CACHELINE"))
		return PMEM2_GRANULARITY_CACHE_LINE;
	if (!strcasecmp(v, "PAGE"))
		return PMEM2_GRANULARITY_PAGE;
	return -1;
}

/*
 * PMDK's order: a private or anonymous mapping needs no flush at all
 * (byte); then PMEM2_FORCE_GRANULARITY; a mapping that is not the media
 * (no MAP_SYNC, not devdax) needs msync() (page); on the media, byte
 * where the persistence domain is the CPU cache (eADR: ntmem's reading of
 * sysfs, or NTMEM_PERSIST_DOMAIN), else cache line.
 */
static enum pmem2_granularity granularity(bool needs_no_flush, bool on_media)
{
	int force = forced_granularity();

	if (needs_no_flush)
		return PMEM2_GRANULARITY_BYTE;
	if (force >= 0)
		return (enum pmem2_granularity)force;
	if (!on_media)
		return PMEM2_GRANULARITY_PAGE;
	if (ntm_persist_domain_system() == NTM_PERSIST_CPU_CACHE)
		return PMEM2_GRANULARITY_BYTE;
	return PMEM2_GRANULARITY_CACHE_LINE;
}

static const char *granularity_name(int g)
{
	return g == PMEM2_GRANULARITY_BYTE ? "BYTE" :
	       g == PMEM2_GRANULARITY_CACHE_LINE ? "CACHE_LINE" : "PAGE";
}

/* --- ntmem check ------------------------------------------------------------ */

/*
 * Tell ntmem check's watcher of a new mapping whose stores must be made
 * durable by the program: a file's, shared and writable (a private or
 * anonymous one is never persisted to anything). Only the checking
 * library (NTM_RECORD) has a watcher: the ordinary drop-in does not look
 * the file's name up.
 */
static void watch_new_map(const struct pmem2_map *map,
			  const struct pmem2_config *cfg,
			  const struct pmem2_source *src)
{
#ifdef NTM_RECORD
	char link[32], path[PATH_MAX];
	ssize_t n;

	if (src->type != PMEM2_SOURCE_FD ||
	    cfg->sharing != PMEM2_SHARED || !(cfg->prot & PMEM2_PROT_WRITE))
		return;
	snprintf(link, sizeof(link), "/proc/self/fd/%d", src->fd);
	n = readlink(link, path, sizeof(path) - 1);
	path[n > 0 ? n : 0] = '\0';
	/* PAGE: the program's persist is msync() (a page cache). */
	struct ntm_rec_map m = {
		.path = path,
		.off = cfg->offset,
		.rule = map->granularity == PMEM2_GRANULARITY_PAGE ?
			NTM_REC_RULE_SYNC : NTM_REC_RULE_CPU,
	};

	NTM_REC_MAPPING(NTM_REC_MAP, map->addr, map->size, &m);
#else
	(void)map, (void)cfg, (void)src;
#endif
}

/* --- pmem2_map_new --------------------------------------------------------- */

static int mmap_prot(unsigned prot)
{
	return (prot & PMEM2_PROT_READ ? PROT_READ : 0) |
	       (prot & PMEM2_PROT_WRITE ? PROT_WRITE : 0) |
	       (prot & PMEM2_PROT_EXEC ? PROT_EXEC : 0);
}

/*
 * An unused range of @len bytes aligned to @align: a PROT_NONE
 * placeholder the mapping replaces (MAP_FIXED), so a devdax device (which
 * refuses a misaligned address) and huge pages get their alignment.
 */
static void *reserve(size_t len, size_t align, size_t *placeholder_len)
{
	uintptr_t p, a;
	size_t n;

	/*
	 * A length no process can have (an anonymous source's size near
	 * SIZE_MAX): the sum would wrap to a small placeholder, and the
	 * trimming below would unmap memory that is not the placeholder's.
	 */
	if (__builtin_add_overflow(len, align, &n)) {
		errno = ENOMEM;
		return MAP_FAILED;
	}
	p = (uintptr_t)mmap(NULL, n, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS |
			    MAP_NORESERVE, -1, 0);
	if ((void *)p == MAP_FAILED)
		return MAP_FAILED;
	a = (p + align - 1) & ~(uintptr_t)(align - 1);
	/* Give back what lies before and after the aligned range. */
	if (a > p)
		munmap((void *)p, a - p);
	if (p + n > a + len)
		munmap((void *)(a + len), p + n - (a + len));
	*placeholder_len = len;
	return (void *)a;
}

/*
 * Give back [@at, +@len) after a failed pmem2_map_new(): unmapped, or in a
 * reservation the placeholder put back and the reservation's lock let go.
 */
static void give_back(const struct pmem2_config *cfg, void *at, size_t len)
{
	if (cfg->rsv) {
		(void)pmem2_vm_reservation_placeholder(at, len);
		pmem2_vm_reservation_map_end(cfg->rsv, NULL);
	} else {
		munmap(at, len);
	}
}

/*
 * Check @cfg against @src (@size bytes, @align its alignment), in PMDK's
 * order; the length to map in *@length. 0 or a code.
 *
 * The configured offset is checked for an anonymous source too, as PMDK
 * checks it (aligned, and offset + length within the source's size),
 * although such a source is always mapped from its start: the same
 * configuration is refused, or not, on both libraries.
 */
static int check_range(const struct pmem2_config *cfg,
		       const struct pmem2_source *src, size_t size,
		       size_t align, size_t *length)
{
	bool anon = src->type == PMEM2_SOURCE_ANON;
	size_t end, limit = size;

	if (cfg->offset % align)
		return pmem2_err(PMEM2_E_OFFSET_UNALIGNED, "pmem2_map_new: "
				 "offset %zu is not a multiple of the "
				 "alignment %zu", cfg->offset, align);
	if (src->devdax && cfg->sharing == PMEM2_PRIVATE)
		return pmem2_err(PMEM2_E_SRC_DEVDAX_PRIVATE, "pmem2_map_new: "
				 "a devdax device cannot be mapped PMEM2_PRIVATE");
	if (size == 0) {
		if (anon)
			return pmem2_err(PMEM2_E_SOURCE_EMPTY, "pmem2_map_new: "
					 "src is an anonymous source of size 0: "
					 "nothing to map");
		return pmem2_err(PMEM2_E_SOURCE_EMPTY, "pmem2_map_new: src "
				 "(fd %d) has size 0: nothing to map", src->fd);
	}
	if (cfg->length % align)
		return pmem2_err(PMEM2_E_LENGTH_UNALIGNED, "pmem2_map_new: "
				 "length %zu is not a multiple of the "
				 "alignment %zu", cfg->length, align);
	if (__builtin_add_overflow(cfg->offset, cfg->length, &end))
		return pmem2_err(PMEM2_E_MAP_RANGE, "pmem2_map_new: offset %zu "
				 "+ length %zu overflows", cfg->offset,
				 cfg->length);
	/* A file's last partial page maps whole, as with mmap() itself. */
	if (!anon && size % align)
		limit = size + (align - size % align);
	if (end > limit || cfg->offset > size)
		return pmem2_err(PMEM2_E_MAP_RANGE, "pmem2_map_new: offset %zu "
				 "+ length %zu is past the end of the source "
				 "(%zu bytes)", cfg->offset, cfg->length, size);
	if (cfg->length)
		*length = cfg->length;
	else
		*length = anon ? size : size - cfg->offset;
	return 0;
}

/* Map @length bytes of @src at @at (reserved); MAP_SYNC in *@sync. */
static void *map_source(const struct pmem2_config *cfg,
			const struct pmem2_source *src, void *at,
			size_t length, bool *sync)
{
	int prot = mmap_prot(cfg->prot);
	off_t off = (off_t)cfg->offset;
	void *p;

	*sync = false;
	if (src->type == PMEM2_SOURCE_ANON)
		return mmap(at, length, prot, MAP_FIXED | MAP_ANONYMOUS |
			    (cfg->sharing == PMEM2_PRIVATE ? MAP_PRIVATE
							   : MAP_SHARED),
			    -1, 0);
	if (cfg->sharing == PMEM2_PRIVATE)
		return mmap(at, length, prot, MAP_FIXED | MAP_PRIVATE, src->fd,
			    off);
	p = mmap(at, length, prot, MAP_FIXED | MAP_SHARED_VALIDATE | MAP_SYNC,
		 src->fd, off);
	if (p != MAP_FAILED) {
		*sync = true;
		return p;
	}
	if (errno != EINVAL && errno != EOPNOTSUPP)
		return MAP_FAILED;
	return mmap(at, length, prot, MAP_FIXED | MAP_SHARED, src->fd, off);
}

int pmem2_map_new(struct pmem2_map **map_ptr, const struct pmem2_config *cfg,
		  const struct pmem2_source *src)
{
	size_t size, align, length = 0, placeholder = 0;
	enum pmem2_granularity avail;
	struct pmem2_map *map;
	bool sync, no_flush;
	void *at, *addr;
	int ret, saved_errno = errno;

	*map_ptr = NULL;
	if (cfg->granularity == PMEM2_GRANULARITY_UNSET)
		return pmem2_err(PMEM2_E_GRANULARITY_NOT_SET, "pmem2_map_new: "
				 "cfg has no required store granularity "
				 "(pmem2_config_set_required_store_granularity)");
	ret = pmem2_source_geometry(src, "pmem2_map_new", &size, &align);
	if (ret)
		return ret;
	ret = check_range(cfg, src, size, align, &length);
	if (ret)
		return ret;
	if (length == 0)
		return pmem2_err_errno(EINVAL, "pmem2_map_new: offset %zu is "
				       "the end of the source: length 0",
				       cfg->offset);
	if (cfg->rsv) {
		/* Over the reservation's placeholder, under its lock. */
		ret = pmem2_vm_reservation_map_begin(cfg->rsv, cfg->rsv_offset,
						     length, align, &at);
		if (ret)
			return ret;
		placeholder = length;
	} else {
		if (length >= HUGE_2M && align < HUGE_2M)
			align = HUGE_2M;
		at = reserve(length, align, &placeholder);
		if (at == MAP_FAILED)
			return pmem2_err_errno(errno, "pmem2_map_new: no %zu "
					       "bytes of address space", length);
	}
	/*
	 * The access the descriptor allows is the kernel's to check, at the
	 * mmap(), as in PMDK: so a reservation's refusals come first.
	 */
	addr = map_source(cfg, src, at, length, &sync);
	if (addr == MAP_FAILED) {
		ret = errno;
		give_back(cfg, at, placeholder);
		if (ret == EACCES)
			return pmem2_err(PMEM2_E_NO_ACCESS, "pmem2_map_new: the "
					 "mapping's protection needs an access "
					 "fd %d was not opened for (a writable "
					 "shared map of an O_RDONLY descriptor: "
					 "map PMEM2_PROT_READ or PMEM2_PRIVATE)",
					 src->type == PMEM2_SOURCE_FD ? src->fd
								      : -1);
		return pmem2_err_errno(ret, "pmem2_map_new: mmap %zu bytes at "
				       "offset %zu", length, cfg->offset);
	}
	no_flush = cfg->sharing == PMEM2_PRIVATE ||
		   src->type == PMEM2_SOURCE_ANON;
	avail = granularity(no_flush, sync || src->devdax);
	if ((int)avail > cfg->granularity) {
		give_back(cfg, addr, length);
		return pmem2_err(PMEM2_E_GRANULARITY_NOT_SUPPORTED,
				 "pmem2_map_new: granularity %s required, the "
				 "mapping gives %s only (%s)",
				 granularity_name(cfg->granularity),
				 granularity_name(avail),
				 avail == PMEM2_GRANULARITY_PAGE
				 ? "not a DAX file, or no MAP_SYNC"
				 : "the persistence domain is not cpu_cache");
	}
	map = calloc(1, sizeof(*map));
	if (!map) {
		give_back(cfg, addr, length);
		return pmem2_err_errno(ENOMEM, "pmem2_map_new");
	}
	map->addr = addr;
	map->size = length;
	map->granularity = avail;
	map->owned = true;
	map->devdax = src->devdax;
	map->rdev = src->rdev;
	map->source_type = src->type;
	map->rsv = cfg->rsv;
	map->rsv_offset = cfg->rsv ? cfg->rsv_offset : 0;
	pmem2_map_set_fns(map);
	pmem2_map_set_mover(map, cfg->vdm);
	ret = pmem2_map_register(map);
	if (ret) {
		/* New pages overlap nothing live: only ENOMEM gets here. */
		give_back(cfg, addr, length);
		free(map);
		return pmem2_err(ret, "pmem2_map_new: no memory to register "
				 "the mapping");
	}
	if (cfg->rsv)
		pmem2_vm_reservation_map_end(cfg->rsv, map);
	watch_new_map(map, cfg, src);
	*map_ptr = map;
	/*
	 * The MAP_SYNC attempt a file's kernel refused (EOPNOTSUPP) is no
	 * news to the program: a call that succeeds leaves errno as it was,
	 * as PMDK's does.
	 */
	errno = saved_errno;
	return 0;
}

/*
 * A map of what the program mapped itself. A failure leaves *@map_ptr as
 * it was, as PMDK's does (it never writes it before it has a map). A
 * length of 0 is a map too, as in PMDK: it covers no byte.
 */
int pmem2_map_from_existing(struct pmem2_map **map_ptr,
			    const struct pmem2_source *src, void *addr,
			    size_t len, enum pmem2_granularity gran)
{
	struct pmem2_map *map;
	uintptr_t end;
	int ret;

	/*
	 * The granularity chooses the map's functions: PMDK aborts on one
	 * it does not know; a value that is none of the three is refused.
	 */
	if (!pmem2_granularity_valid((int)gran))
		return pmem2_err(PMEM2_E_GRANULARITY_NOT_SUPPORTED,
				 "pmem2_map_from_existing: gran %d is not "
				 "BYTE, CACHE_LINE or PAGE", (int)gran);
	if (__builtin_add_overflow((uintptr_t)addr, len, &end))
		return pmem2_err_errno(EINVAL, "pmem2_map_from_existing: addr "
				       "%p + len %zu wraps past the end of the "
				       "address space", addr, len);
	map = calloc(1, sizeof(*map));
	if (!map)
		return pmem2_err_errno(ENOMEM, "pmem2_map_from_existing");
	*map = (struct pmem2_map){
		.addr = addr, .size = len, .granularity = gran,
		.devdax = src->devdax, .rdev = src->rdev,
		.source_type = src->type,
	};
	pmem2_map_set_fns(map);
	pmem2_map_set_mover(map, NULL);
	ret = pmem2_map_register(map);
	if (ret) {
		free(map);
		if (ret != PMEM2_E_MAP_EXISTS)
			return pmem2_err_errno(-ret, "pmem2_map_from_existing: "
					       "registering addr %p + len %zu",
					       addr, len);
		return pmem2_err(ret, "pmem2_map_from_existing: addr %p + len "
				 "%zu overlaps a mapping libpmem2 already has",
				 addr, len);
	}
	*map_ptr = map;
	return 0;
}

int pmem2_map_delete(struct pmem2_map **map_ptr)
{
	struct pmem2_map *map = *map_ptr;
	int ret;

	/*
	 * Out of the registry before the pages go, as PMDK: the moment they
	 * are unmapped another thread's mmap() may get the same addresses,
	 * and its pmem2_map_new() must not find this map still registered
	 * there (PMEM2_E_MAP_EXISTS). A failure below registers it again.
	 */
	if (!registry_remove(map))
		return pmem2_err(PMEM2_E_MAPPING_NOT_FOUND, "pmem2_map_delete: "
				 "map %p is not a live mapping", (void *)map);
	/* What is not durable when its mapping goes is reported as such. */
	if (map->owned)
		NTM_REC_MAPPING(NTM_REC_UNMAP, map->addr, map->size,
				"pmem2_map_delete");
	if (map->rsv) {
		/* The placeholder goes back: the range stays reserved. */
		ret = pmem2_vm_reservation_map_remove(map);
	} else if (map->owned && munmap(map->addr, map->size)) {
		ret = pmem2_err_errno(errno, "pmem2_map_delete: munmap %p + %zu",
				      map->addr, map->size);
	} else {
		ret = 0;
	}
	if (ret) {
		/* Nothing changed: the range was never given up. */
		(void)pmem2_map_register(map);
		return ret;
	}
	free(map);
	*map_ptr = NULL;
	return 0;
}

void *pmem2_map_get_address(struct pmem2_map *map)
{
	return map->addr;
}

size_t pmem2_map_get_size(struct pmem2_map *map)
{
	return map->size;
}

enum pmem2_granularity pmem2_map_get_store_granularity(struct pmem2_map *map)
{
	return map->granularity;
}
