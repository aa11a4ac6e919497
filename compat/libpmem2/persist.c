// SPDX-License-Identifier: MIT
/*
 * persist.c - pmem2_get_{persist,flush,drain,memmove,memcpy,memset}_fn():
 * one set of functions per store granularity, chosen when the map is made
 * (so the getters return the same function for the same map).
 *
 *   BYTE        a fence makes a store durable (eADR), or nothing needs to
 *               be (private, anonymous): flush does nothing, persist and
 *               drain fence, copies write no line back
 *   CACHE_LINE  ntmem's dispatched write-back and copies (ntmem/copy.h)
 *   PAGE        the page cache is between CPU and media: flush and
 *               persist msync() the pages the range covers, drain does
 *               nothing, copies store then msync()
 *
 * The copy flags, after libpmem2's man page (pmem2_get_memcpy_fn(3)):
 *   NOFLUSH                  ordinary stores, neither flush nor drain
 *   NONTEMPORAL or WC        non-temporal stores (CACHE_LINE:
 *                            ntm_memcpy_flush(), head and tail written back)
 *   TEMPORAL or WB           ordinary stores, then the lines written back
 *   none of these            non-temporal from PMEM_MOVNT_THRESHOLD bytes
 *                            (256 unless set), as PMDK
 *   NODRAIN                  no fence at the end
 * PMEM_NO_MOVNT=1 makes every copy temporal, whatever its flags, and the
 * other variables PMDK's libpmem2 reads at load (compat/pmdk_env.h) cap
 * ntmem's instructions as they do libpmem's drop-in's.
 * An overlapping move is made with memmove() and written back: ntmem's
 * non-temporal copies are forward-only.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include <ntmem.h>
#include <ntmem/hook.h>	/* NTM_REC_MAPPING(): the checker of ntmem check */

#include "dropin_note.h"	/* ntm_dropin_banner() */
#include "pmdk_env.h"
#include "pmem2.h"

#define NT_FLAGS (PMEM2_F_MEM_NONTEMPORAL | PMEM2_F_MEM_WC)
#define TEMPORAL_FLAGS (PMEM2_F_MEM_TEMPORAL | PMEM2_F_MEM_WB)

static struct pmdk_copy_env copy_env = { .movnt_threshold = 256 };

/*
 * Read once at load, as PMDK's libpmem2 reads them; then, with
 * NTMEM_VERBOSE, the line the other drop-ins print too, naming the copies
 * those ceilings left (dropin_note.h). PMDK's libpmem2 has no version
 * macros: 1.0 is its ABI's, LIBPMEM2_1.0.
 */
__attribute__((constructor)) static void read_copy_env(void)
{
	pmdk_copy_env_read(&copy_env, "libpmem2");
	ntm_dropin_banner("libpmem2", 1, 0, true);
}

static bool overlaps(const void *dst, const void *src, size_t len)
{
	uintptr_t d = (uintptr_t)dst, s = (uintptr_t)src;

	return d < s + len && s < d + len;
}

static bool nontemporal(size_t len, unsigned flags)
{
	if (copy_env.no_movnt)
		return false;
	if (flags & NT_FLAGS)
		return true;
	if (flags & TEMPORAL_FLAGS)
		return false;
	return len >= copy_env.movnt_threshold;
}

static void drain_unless(unsigned flags)
{
	if (!(flags & (PMEM2_F_MEM_NODRAIN | PMEM2_F_MEM_NOFLUSH)))
		ntm_drain();
}

/* --- BYTE ------------------------------------------------------------------ */

static void byte_flush(const void *p, size_t n)
{
	(void)p;
	(void)n;
}

static void byte_persist(const void *p, size_t n)
{
	(void)p;
	(void)n;
	ntm_drain();
}

static void *byte_memmove(void *dst, const void *src, size_t len,
			  unsigned flags)
{
	if (len && dst != src) {
		/* Lines left in the cache are durable: only the speed differs. */
		if (!(flags & PMEM2_F_MEM_NOFLUSH) && nontemporal(len, flags) &&
		    !overlaps(dst, src, len))
			(ntm_memcpy_nt)(dst, src, len);
		else
			ntm_store_move(dst, src, len);
	}
	drain_unless(flags);
	return dst;
}

static void *byte_memset(void *dst, int c, size_t len, unsigned flags)
{
	/* ntmem has no hint-only fill: the flush one is the non-temporal. */
	if (len && !(flags & PMEM2_F_MEM_NOFLUSH) && nontemporal(len, flags))
		ntm_memset_flush(dst, c, len);
	else if (len)
		ntm_store_fill(dst, c, len);
	drain_unless(flags);
	return dst;
}

/* --- CACHE_LINE ------------------------------------------------------------ */

static void line_flush(const void *p, size_t n)
{
	ntm_flush(p, n);
}

static void line_persist(const void *p, size_t n)
{
	ntm_persist(p, n);
}

static void *line_memmove(void *dst, const void *src, size_t len,
			  unsigned flags)
{
	if (len && dst != src) {
		if (flags & PMEM2_F_MEM_NOFLUSH) {
			ntm_store_move(dst, src, len);
		} else if (nontemporal(len, flags) && !overlaps(dst, src, len)) {
			(ntm_memcpy_flush)(dst, src, len);
		} else {
			ntm_store_move(dst, src, len);
			ntm_flush(dst, len);
		}
	}
	drain_unless(flags);
	return dst;
}

static void *line_memset(void *dst, int c, size_t len, unsigned flags)
{
	if (len) {
		if (flags & PMEM2_F_MEM_NOFLUSH) {
			ntm_store_fill(dst, c, len);
		} else if (nontemporal(len, flags)) {
			ntm_memset_flush(dst, c, len);
		} else {
			ntm_store_fill(dst, c, len);
			ntm_flush(dst, len);
		}
	}
	drain_unless(flags);
	return dst;
}

/* --- PAGE ------------------------------------------------------------------ */

/*
 * msync(MS_SYNC) of every page [p, p + n) touches. The functions are void,
 * as PMDK's: a failure (a range that is not mapped) cannot be reported.
 */
static void page_persist(const void *p, size_t n)
{
	uintptr_t page = (uintptr_t)sysconf(_SC_PAGESIZE);
	uintptr_t lo = (uintptr_t)p & ~(page - 1);

	/* The pages reached the file: ntmem check takes them as durable. */
	if (n && msync((void *)lo, (uintptr_t)p + n - lo, MS_SYNC) == 0)
		NTM_REC_MAPPING(NTM_REC_SYNC, p, n, NULL);
}

static void page_drain(void)
{
}

static void *page_memmove(void *dst, const void *src, size_t len,
			  unsigned flags)
{
	memmove(dst, src, len);
	if (!(flags & PMEM2_F_MEM_NOFLUSH))
		page_persist(dst, len);
	return dst;
}

static void *page_memset(void *dst, int c, size_t len, unsigned flags)
{
	memset(dst, c, len);
	if (!(flags & PMEM2_F_MEM_NOFLUSH))
		page_persist(dst, len);
	return dst;
}

/* --- the getters ------------------------------------------------------------ */

static void drain(void)
{
	ntm_drain();
}

void pmem2_map_set_fns(struct pmem2_map *map)
{
	switch (map->granularity) {
	case PMEM2_GRANULARITY_BYTE:
		map->persist_fn = byte_persist;
		map->flush_fn = byte_flush;
		map->drain_fn = drain;
		map->memmove_fn = byte_memmove;
		map->memset_fn = byte_memset;
		break;
	case PMEM2_GRANULARITY_CACHE_LINE:
		map->persist_fn = line_persist;
		map->flush_fn = line_flush;
		map->drain_fn = drain;
		map->memmove_fn = line_memmove;
		map->memset_fn = line_memset;
		break;
	default:
		map->persist_fn = page_persist;
		map->flush_fn = page_persist;
		map->drain_fn = page_drain;
		map->memmove_fn = page_memmove;
		map->memset_fn = page_memset;
		break;
	}
	/* memcpy and memmove are one function, as in PMDK. */
	map->memcpy_fn = map->memmove_fn;
}

pmem2_persist_fn pmem2_get_persist_fn(struct pmem2_map *map)
{
	return map->persist_fn;
}

pmem2_flush_fn pmem2_get_flush_fn(struct pmem2_map *map)
{
	return map->flush_fn;
}

pmem2_drain_fn pmem2_get_drain_fn(struct pmem2_map *map)
{
	return map->drain_fn;
}

pmem2_memmove_fn pmem2_get_memmove_fn(struct pmem2_map *map)
{
	return map->memmove_fn;
}

pmem2_memcpy_fn pmem2_get_memcpy_fn(struct pmem2_map *map)
{
	return map->memcpy_fn;
}

pmem2_memset_fn pmem2_get_memset_fn(struct pmem2_map *map)
{
	return map->memset_fn;
}
