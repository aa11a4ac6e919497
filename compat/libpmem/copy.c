// SPDX-License-Identifier: MIT
/*
 * copy.c - pmem_memcpy/memmove/memset and the flush, drain and persist
 * family on ntmem's primitives, with PMDK's flag semantics:
 *
 *   NOFLUSH                  ordinary copy, no flush, no drain
 *   NONTEMPORAL or WC        non-temporal stores (ntm_memcpy_flush: the
 *                            unaligned head/tail are written back too)
 *   TEMPORAL or WB           ordinary copy, then write the lines back
 *   none                     non-temporal from PMEM_MOVNT_THRESHOLD bytes
 *   NODRAIN                  no SFENCE at the end
 *
 * They work on any address, mapped by pmem_map_file() or not (fio's
 * dev-dax engine maps the device itself). An overlapping move is copied
 * with memmove() and written back: ntmem's non-temporal copies are
 * forward-only.
 */
#include <stdbool.h>
#include <stdint.h>
#include <string.h>

#include <ntmem.h>

#include "compat.h"
#include "include/libpmem.h"

static bool overlaps(const void *dst, const void *src, size_t len)
{
	uintptr_t d = (uintptr_t)dst, s = (uintptr_t)src;

	return d < s + len && s < d + len;
}

static bool nontemporal(size_t len, unsigned flags)
{
	if (pmem_env.no_movnt)
		return false;
	if (flags & (PMEM_F_MEM_NONTEMPORAL | PMEM_F_MEM_WC))
		return true;
	if (flags & (PMEM_F_MEM_TEMPORAL | PMEM_F_MEM_WB))
		return false;
	return len >= pmem_env.movnt_threshold;
}

/* The fence at the end of a copy, unless the caller said otherwise. */
static void drain_unless(unsigned flags)
{
	if (!(flags & (PMEM_F_MEM_NODRAIN | PMEM_F_MEM_NOFLUSH)))
		ntm_drain();
}

void *pmem_memmove(void *dst, const void *src, size_t len, unsigned flags)
{
	if (len && dst != src) {
		if (flags & PMEM_F_MEM_NOFLUSH) {
			ntm_store_move(dst, src, len);
		} else if (nontemporal(len, flags) && !overlaps(dst, src, len)) {
			/* With auto flush, cached head/tail bytes are durable. */
			if (pmem_env.no_flush)
				(ntm_memcpy_nt)(dst, src, len);
			else
				(ntm_memcpy_flush)(dst, src, len);
		} else {
			ntm_store_move(dst, src, len);
			if (!pmem_env.no_flush)
				ntm_flush(dst, len);
		}
	}
	drain_unless(flags);
	return dst;
}

void *pmem_memcpy(void *dst, const void *src, size_t len, unsigned flags)
{
	return pmem_memmove(dst, src, len, flags);
}

void *pmem_memset(void *dst, int c, size_t len, unsigned flags)
{
	if (len) {
		if (flags & PMEM_F_MEM_NOFLUSH) {
			ntm_store_fill(dst, c, len);
		} else if (nontemporal(len, flags)) {
			ntm_memset_flush(dst, c, len);
		} else {
			ntm_store_fill(dst, c, len);
			if (!pmem_env.no_flush)
				ntm_flush(dst, len);
		}
	}
	drain_unless(flags);
	return dst;
}

void *pmem_memmove_nodrain(void *dst, const void *src, size_t len)
{
	return pmem_memmove(dst, src, len, PMEM_F_MEM_NODRAIN);
}

void *pmem_memcpy_nodrain(void *dst, const void *src, size_t len)
{
	return pmem_memmove(dst, src, len, PMEM_F_MEM_NODRAIN);
}

void *pmem_memset_nodrain(void *dst, int c, size_t len)
{
	return pmem_memset(dst, c, len, PMEM_F_MEM_NODRAIN);
}

void *pmem_memmove_persist(void *dst, const void *src, size_t len)
{
	return pmem_memmove(dst, src, len, 0);
}

void *pmem_memcpy_persist(void *dst, const void *src, size_t len)
{
	return pmem_memmove(dst, src, len, 0);
}

void *pmem_memset_persist(void *dst, int c, size_t len)
{
	return pmem_memset(dst, c, len, 0);
}

void pmem_flush(const void *addr, size_t len)
{
	if (!pmem_env.no_flush)
		ntm_flush(addr, len);
}

void pmem_drain(void)
{
	ntm_drain();
}

void pmem_persist(const void *addr, size_t len)
{
	pmem_flush(addr, len);
	ntm_drain();
}

/* Deep flush always writes back, auto flush or not, as PMDK's does. */
void pmem_deep_flush(const void *addr, size_t len)
{
	ntm_flush(addr, len);
}

int pmem_deep_drain(const void *addr, size_t len)
{
	(void)addr;
	(void)len;
	ntm_drain();
	return 0;
}

int pmem_deep_persist(const void *addr, size_t len)
{
	pmem_deep_flush(addr, len);
	return pmem_deep_drain(addr, len);
}

/* SFENCE is needed after CLWB/CLFLUSHOPT: the drain is never in hardware. */
int pmem_has_hw_drain(void)
{
	return 0;
}

int pmem_has_auto_flush(void)
{
	return pmem_auto_flush_detect();
}
