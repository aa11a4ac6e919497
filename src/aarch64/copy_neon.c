// SPDX-License-Identifier: MIT
/*
 * aarch64/copy_neon.c - the "neon" variant: STNP stores of Q-register
 * pairs (32 bytes), then every line of the destination written back.
 *
 * STNP is only a hint (ntmem/arch/aarch64.h): a line it stored may still
 * be dirty in a cache, so the lines are written back (DC CVAP, else DC
 * CVAC, as dispatched: ntm_flush_lines()) in ntm_memcpy_nt() too, which
 * on x86-64 needs no write-back. That keeps ntmem/copy.h's contracts: the
 * two copies differ only in a short copy into an unaligned destination,
 * which ntm_memcpy_nt() makes with ordinary stores and leaves dirty, as on
 * x86-64 (below the table's nt_short, the copy policy's
 * ntm_nt_short_unaligned(): copy_policy.h). What the hint buys is the
 * store side: lines a core need not read for ownership nor keep, for
 * write-once data.
 *
 * Shape of a copy (the x86-64 body's, x86_64/copy_body.h):
 *   0. a struct-sized copy (a multiple of 8 up to NTM_INLINE_MAX) into an
 *      8-byte aligned slot takes the inline path's straight-line stores;
 *   1. ntm_memcpy_nt() of a short copy into an unaligned destination:
 *      ordinary stores;
 *   2. head: ordinary stores up to 16-byte alignment, one X-pair STNP up
 *      to 32-byte alignment, so no Q-pair store straddles a 64-byte line;
 *   3. body: 64 bytes per iteration (two Q pairs, whole lines);
 *   4. tail: a Q pair, an X pair, a W pair, then ordinary stores;
 *   5. the write-back of every line of [dst, dst + n), after the stores,
 *      as Linux's memcpy_flushcache() cleans after its copy.
 * Nothing fences; see ntmem/copy.h.
 *
 * Every store to the destination goes through an always_inline primitive
 * that records it (here, ntmem/arch/aarch64.h, ntm_store_copy()). STNP is
 * recorded as an ordinary store: it becomes durable only through the
 * write-back and the drain, as the recorder must model it.
 */
#include <arm_neon.h>
#include <stdbool.h>
#include <stdint.h>
#include <string.h>

#include "dispatch.h"

/*
 * Two Q-pair STNPs: 64 bytes at a 32-byte aligned @d. Used only by the
 * recorded loops below, which record the whole run once: one event per
 * group would cost the recorder build a lock per 64 bytes.
 */
static inline __attribute__((always_inline)) void
stnp64(unsigned char *d, uint8x16_t v0, uint8x16_t v1, uint8x16_t v2,
       uint8x16_t v3)
{
	__asm__ volatile("stnp %q1, %q2, %0"
			 : "=Q"(*(ntm_arch_b32 *)d) : "w"(v0), "w"(v1));
	__asm__ volatile("stnp %q1, %q2, %0"
			 : "=Q"(*(ntm_arch_b32 *)(d + 32)) : "w"(v2), "w"(v3));
}

static inline __attribute__((always_inline)) void
copy_groups(unsigned char *d, const unsigned char *s, size_t groups)
{
	unsigned char *d0 __attribute__((unused)) = d; /* for the record */

	for (size_t g = 0; g < groups; g++, d += 64, s += 64)
		stnp64(d, vld1q_u8(s), vld1q_u8(s + 16), vld1q_u8(s + 32),
		       vld1q_u8(s + 48));
	if (groups)
		NTM_REC(NTM_REC_STORE, d0, groups * 64);
}

static inline __attribute__((always_inline)) void
fill_groups(unsigned char *d, uint8x16_t v, size_t groups)
{
	unsigned char *d0 __attribute__((unused)) = d; /* for the record */

	for (size_t g = 0; g < groups; g++, d += 64)
		stnp64(d, v, v, v, v);
	if (groups)
		NTM_REC(NTM_REC_STORE, d0, groups * 64);
}

/*
 * The STNP copy of [s, s + n) to @d, @d 16-byte aligned, with ordinary
 * stores for the last n % 8 bytes; no write-back.
 */
static inline __attribute__((always_inline)) void
stream_aligned(unsigned char *d, const unsigned char *s, size_t n)
{
	size_t groups;

	if (n >= 16 && ((uintptr_t)d & 16)) {
		ntm_arch_stream16(d, s);
		d += 16, s += 16, n -= 16;
	}
	groups = n / 64;
	copy_groups(d, s, groups);
	d += groups * 64, s += groups * 64, n -= groups * 64;
	if (n >= 32) {
		ntm_arch_stream32(d, s);
		d += 32, s += 32, n -= 32;
	}
	if (n >= 16) {
		ntm_arch_stream16(d, s);
		d += 16, s += 16, n -= 16;
	}
	if (n >= 8) {
		ntm_arch_stream8(d, s);
		d += 8, s += 8, n -= 8;
	}
	if (n)
		ntm_store_copy(d, s, n);
}

static inline __attribute__((always_inline)) void *
copy_body(void *dst, const void *src, size_t n, bool nt)
{
	unsigned char *d = dst;
	const unsigned char *s = src;
	size_t head = (-(uintptr_t)d) & 15;

	/* 8-byte aligned: the fixed path never needs its out-of-line copy. */
	if (n <= NTM_INLINE_MAX && (((uintptr_t)d | n) & 7) == 0) {
		switch (n) {
#define SMALL_CASE(N)                                  \
	case N:                                        \
		return ntm_memcpy_nt_fixed(dst, src, N);
			NTM_FIXED_SIZES_8(SMALL_CASE)
#undef SMALL_CASE
		default: /* 0 */
			return dst;
		}
	}
	/*
	 * The copy policy (copy_policy.h), as on x86-64: ntm_memcpy_nt() of
	 * a short copy into an unaligned destination is an ordinary one,
	 * left dirty as ntmem/copy.h allows (tests/record/test_record_copy.c
	 * derives the same size). ntm_memcpy_flush()'s cached copy plus
	 * write-back below NTMEM_NT_THRESHOLD is the entry point's choice
	 * (src/copy.c, ntm_flush_cached()), not the variant's: this one
	 * stores with STNP at every size, so the threshold a user sets is
	 * the one in force.
	 */
	if (nt && ((uintptr_t)d & 7) && n < ntm_dispatch()->nt_short) {
		ntm_store_copy(d, s, n);
		return dst;
	}
	if (head > n)
		head = n;
	if (head)
		ntm_store_copy(d, s, head);
	stream_aligned(d + head, s + head, n - head);
	ntm_flush_lines(dst, n);
	return dst;
}

void *ntm_neon_memcpy_nt(void *dst, const void *src, size_t n)
{
	return copy_body(dst, src, n, true);
}

void *ntm_neon_memcpy_flush(void *dst, const void *src, size_t n)
{
	return copy_body(dst, src, n, false);
}

void *ntm_neon_memset_flush(void *dst, int c, size_t n)
{
	unsigned char *d = dst;
	unsigned char pattern[32];
	uint8x16_t v = vdupq_n_u8((uint8_t)c);
	size_t head = (-(uintptr_t)d) & 15, groups, left;

	if (head > n)
		head = n;
	if (head)
		ntm_store_fill(d, c, head);
	d += head;
	left = n - head;
	/* The stream primitives copy from memory: a line's worth of @c. */
	vst1q_u8(pattern, v);
	vst1q_u8(pattern + 16, v);
	if (left >= 16 && ((uintptr_t)d & 16)) {
		ntm_arch_stream16(d, pattern);
		d += 16, left -= 16;
	}
	groups = left / 64;
	fill_groups(d, v, groups);
	d += groups * 64, left -= groups * 64;
	if (left >= 32) {
		ntm_arch_stream32(d, pattern);
		d += 32, left -= 32;
	}
	if (left >= 16) {
		ntm_arch_stream16(d, pattern);
		d += 16, left -= 16;
	}
	if (left >= 8) {
		ntm_arch_stream8(d, pattern);
		d += 8, left -= 8;
	}
	if (left)
		ntm_store_fill(d, c, left);
	ntm_flush_lines(dst, n);
	return dst;
}
