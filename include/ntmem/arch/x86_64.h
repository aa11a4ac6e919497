/* SPDX-License-Identifier: MIT */
/*
 * ntmem/arch/x86_64.h - baseline-ISA (SSE2) store and fence primitives for
 * the inline fast paths. Every x86-64 CPU has them, so no -m flag is needed.
 *
 * Each store is its own asm volatile statement: the compiler keeps volatile
 * asm in program order, which is what keeps the stores of a fixed-size copy
 * in ascending address order. The "=m" operand names exactly the bytes
 * written, so no blanket "memory" clobber stops the compiler from
 * scheduling the source loads around the stores.
 *
 * Each primitive also reports its instruction to the recorder (NTM_REC(),
 * nothing unless NTM_RECORD is defined), after the instruction, so the
 * recorder's crash hook sees the new bytes in memory.
 */
#ifndef NTMEM_ARCH_X86_64_H
#define NTMEM_ARCH_X86_64_H

#include <stdint.h>
#include <string.h>
#include <emmintrin.h>

#include <ntmem/hook.h>

#define NTM_ARCH_HAS_NT_STORES 1

typedef struct { unsigned char b[16]; } ntm_arch_b16;
typedef uint64_t ntm_arch_u64 __attribute__((may_alias, aligned(1)));
typedef uint32_t ntm_arch_u32 __attribute__((may_alias, aligned(1)));

/* 16-byte MOVNTDQ; @d must be 16-byte aligned, @s may be unaligned. */
static inline __attribute__((always_inline)) void
ntm_arch_stream16(void *d, const void *s)
{
	__m128i v = _mm_loadu_si128((const __m128i *)s);

	__asm__ volatile("movntdq %1, %0" : "=m"(*(ntm_arch_b16 *)d) : "x"(v));
	NTM_REC(NTM_REC_NT, d, 16);
}

#if defined(__AVX__)
#include <immintrin.h>

typedef struct { unsigned char b[32]; } ntm_arch_b32;

/*
 * 32-byte VMOVNTDQ, when the caller's compiler flags allow AVX (-mavx,
 * -march=x86-64-v3, -march=native); @d must be 32-byte aligned. Two
 * stores per line measured at the streaming-write limit where four
 * 16-byte stores took 1.17-1.20x as long (ntmem bench copy).
 */
static inline __attribute__((always_inline)) void
ntm_arch_stream32(void *d, const void *s)
{
	__m256i v = _mm256_loadu_si256((const __m256i *)s);

	__asm__ volatile("vmovntdq %1, %0" : "=m"(*(ntm_arch_b32 *)d) : "x"(v));
	NTM_REC(NTM_REC_NT, d, 32);
}
#endif

/* 8-byte MOVNTI; any alignment is correct, 8-byte alignment is fast. */
static inline __attribute__((always_inline)) void
ntm_arch_stream8(void *d, const void *s)
{
	uint64_t v = *(const ntm_arch_u64 *)s;

	__asm__ volatile("movntiq %1, %0" : "=m"(*(ntm_arch_u64 *)d) : "r"(v));
	NTM_REC(NTM_REC_NT, d, 8);
}

/* 4-byte MOVNTI. */
static inline __attribute__((always_inline)) void
ntm_arch_stream4(void *d, const void *s)
{
	uint32_t v = *(const ntm_arch_u32 *)s;

	__asm__ volatile("movntil %1, %0" : "=m"(*(ntm_arch_u32 *)d) : "r"(v));
	NTM_REC(NTM_REC_NT, d, 4);
}

/*
 * SFENCE: orders every earlier store, non-temporal stores and CLWB /
 * CLFLUSHOPT write-backs included, before any later store. The "memory"
 * clobber also stops the compiler from moving memory accesses across it.
 */
static inline __attribute__((always_inline)) void ntm_arch_drain(void)
{
	__asm__ volatile("sfence" ::: "memory");
	NTM_REC(NTM_REC_FENCE, NULL, 0);
}

#endif /* NTMEM_ARCH_X86_64_H */
