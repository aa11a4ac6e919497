/* SPDX-License-Identifier: MIT */
/*
 * ntmem/arch/aarch64.h - store and barrier primitives of the inline fast
 * paths on aarch64 (baseline Armv8.0-A with Advanced SIMD, which every
 * aarch64 Linux system has; no -m flag is needed).
 *
 * What STNP buys, and what it does not. The Arm ARM describes the
 * non-temporal pairs (LDNP/STNP) as a hint to the memory system that the
 * access is streaming and unlikely to be repeated soon, so caching the
 * data is not required. A core may then write the data without first
 * reading the line for ownership and without evicting lines that will be
 * used again: for write-once data (a log, a descriptor array) that is the
 * point of ntm_memcpy_nt(). But it is only a hint: a core may treat STNP
 * as an ordinary STP, so the line can still sit dirty in a cache, and
 * unlike x86-64's MOVNT* nothing about STNP puts the data in the
 * persistence domain or orders it. So every STNP here is recorded as an
 * ordinary store (NTM_REC_STORE, ntmem/hook.h), and its line must still
 * be written back (DC CVAP, else DC CVAC) and the write-back completed
 * (ntm_arch_drain()) before the data is durable.
 *
 * The write-back of a fixed-size copy is one call to ntm_flush(): which
 * DC instruction is right is known only at run time (HWCAP_DCPOP, and
 * NTMEM_FLUSH, see ntmem/variant.h), and a header compiled into the
 * application cannot know it. Only the stores are inline.
 *
 * Each store is its own asm volatile statement, kept in program order by
 * the compiler: a fixed-size copy stores in ascending address order. The
 * "=Q" operand (a base register, no offset: what STNP's addressing takes
 * here) names exactly the bytes written, so no "memory" clobber keeps the
 * compiler from moving the source loads around the stores. Each primitive
 * reports to the recorder (NTM_REC(), nothing unless NTM_RECORD is
 * defined) after its instruction.
 */
#ifndef NTMEM_ARCH_AARCH64_H
#define NTMEM_ARCH_AARCH64_H

#include <stddef.h>
#include <stdint.h>
#include <arm_neon.h>

#include <ntmem/hook.h>

#ifdef __cplusplus
extern "C" {
#endif

#define NTM_ARCH_HAS_NT_STORES 1
/* A Q-register pair stores 32 bytes: the fixed path's widest store. */
#define NTM_ARCH_HAS_STREAM32 1

typedef struct { unsigned char b[32]; } ntm_arch_b32;
typedef struct { unsigned char b[16]; } ntm_arch_b16;
typedef uint64_t ntm_arch_u64 __attribute__((may_alias, aligned(1)));
typedef uint32_t ntm_arch_u32 __attribute__((may_alias, aligned(1)));

/* ntmem/copy.h; declared here too for the write-back below. */
void ntm_flush(const void *p, size_t n);

/*
 * 32 bytes, STNP of a Q-register pair; @d 32-byte aligned keeps it inside
 * one line, @s may be unaligned.
 */
static inline __attribute__((always_inline)) void
ntm_arch_stream32(void *d, const void *s)
{
	uint8x16_t lo = vld1q_u8((const uint8_t *)s);
	uint8x16_t hi = vld1q_u8((const uint8_t *)s + 16);

	__asm__ volatile("stnp %q1, %q2, %0"
			 : "=Q"(*(ntm_arch_b32 *)d) : "w"(lo), "w"(hi));
	NTM_REC(NTM_REC_STORE, d, 32);
}

/* 16 bytes, STNP of an X-register pair; @d 16-byte aligned. */
static inline __attribute__((always_inline)) void
ntm_arch_stream16(void *d, const void *s)
{
	uint64_t lo = *(const ntm_arch_u64 *)s;
	uint64_t hi = *(const ntm_arch_u64 *)((const char *)s + 8);

	__asm__ volatile("stnp %x1, %x2, %0"
			 : "=Q"(*(ntm_arch_b16 *)d) : "r"(lo), "r"(hi));
	NTM_REC(NTM_REC_STORE, d, 16);
}

/* 8 bytes, STNP of a W-register pair; @d 8-byte aligned. */
static inline __attribute__((always_inline)) void
ntm_arch_stream8(void *d, const void *s)
{
	uint32_t lo = *(const ntm_arch_u32 *)s;
	uint32_t hi = *(const ntm_arch_u32 *)((const char *)s + 4);

	__asm__ volatile("stnp %w1, %w2, %0"
			 : "=Q"(*(ntm_arch_u64 *)d) : "r"(lo), "r"(hi));
	NTM_REC(NTM_REC_STORE, d, 8);
}

/* 4 bytes: no non-temporal store is that narrow, so an ordinary STR. */
static inline __attribute__((always_inline)) void
ntm_arch_stream4(void *d, const void *s)
{
	uint32_t v = *(const ntm_arch_u32 *)s;

	__asm__ volatile("str %w1, %0" : "=Q"(*(ntm_arch_u32 *)d) : "r"(v));
	NTM_REC(NTM_REC_STORE, d, 4);
}

/*
 * After a fixed-size copy's stores: write back its lines (see above), so
 * the inline path leaves no line dirty, as on x86-64. Not a fence.
 */
#define NTM_ARCH_NT_NEEDS_FINISH 1
static inline __attribute__((always_inline)) void *
ntm_arch_nt_finish(void *d, size_t n)
{
	ntm_flush(d, n);
	return d;
}

/*
 * DSB SY: waits until every earlier memory access and every earlier cache
 * maintenance instruction (the DC CVAP / DC CVAC write-backs) of this PE
 * has completed, and no later instruction executes before that.
 *
 * Why a DSB and not a DMB: the Arm ARM guarantees the completion of a
 * data cache instruction by VA only through a DSB, and it is completion
 * of DC CVAP that puts the line at the Point of Persistence. A DMB orders
 * accesses only as other observers see them: a later store (a commit
 * record) could then become visible, and be written back, before an
 * earlier clean had reached the PoP.
 *
 * Why SY (the full system) and not ISH or OSH: the PoP is in the memory
 * system, beyond the PEs of the Inner and Outer Shareable domains (the
 * memory controller, the persistent media), and the clean must be
 * complete for the system, not only for the other cores. Linux does the
 * same: its dcache_clean_pop() (behind arch_wb_cache_pmem(), DC CVAP per
 * line, or DC CVAC without DCPoP) ends with DSB SY, and pmem_wmb(), which
 * arm64 leaves to the generic wmb(), is a full-system DSB ST. A DSB ST
 * would wait only for stores; DSB SY does not depend on a DC instruction
 * counting as one. Between a store and the DC clean of its line no
 * barrier is needed: Linux's DMB OSH before its cleans orders earlier
 * non-cacheable writes, and the library's stores are cacheable.
 *
 * The "memory" clobber also keeps the compiler from moving memory
 * accesses across it.
 */
static inline __attribute__((always_inline)) void ntm_arch_drain(void)
{
	__asm__ volatile("dsb sy" ::: "memory");
	NTM_REC(NTM_REC_FENCE, NULL, 0);
}

#ifdef __cplusplus
}
#endif

#endif /* NTMEM_ARCH_AARCH64_H */
