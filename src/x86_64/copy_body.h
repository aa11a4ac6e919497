/* SPDX-License-Identifier: MIT */
/*
 * x86_64/copy_body.h - the one non-temporal copy and fill body, specialised
 * by each ISA file (copy_sse2.c, copy_avx2.c, copy_avx512.c) with its own
 * vector type and compiler flags.
 *
 * The including file defines:
 *   VARIANT        the variant name (sse2, avx2, avx512)
 *   VEC            vector bytes (16, 32, 64); the vector NT store needs a
 *                  destination aligned to VEC
 *   vec_t, vec_loadu(p), vec_splat(c)
 *   vec_nt(p, v)   the vector NT store instruction; used only by the
 *                  recorded primitives vec_stream(), copy_groups() and
 *                  fill_groups() here
 *
 * Shape of a copy, after the kernel's __memcpy_flushcache():
 *   0. a struct-sized copy (a multiple of 8 up to NTM_INLINE_MAX) into an
 *      8-byte aligned slot takes the inline path's straight-line stores
 *      through one jump table: at 64 bytes a copy has ~11 cycles at the
 *      streaming limit, and the general path below spends ~25.
 *      A short copy into an unaligned destination is copied with ordinary
 *      stores (and written back for "flush"): its lines are shared with
 *      the neighbouring bytes, and mixing cached and NT stores in one line
 *      evicts it twice - NT stores do not pay there (see SHORT_UNALIGNED).
 *   1. 1-3 head bytes up to 4-byte alignment: ordinary stores (no NT store
 *      is that narrow); written back when the caller asked for "flush".
 *   2. one 4-byte MOVNTI up to 8-byte alignment, then 8-byte MOVNTI up to
 *      VEC alignment (at most VEC/8 - 1 of them).
 *   3. the body: 4 vectors per iteration, so each iteration writes whole
 *      lines (64 B for SSE2) and the loop overhead stays under the stores.
 *   4. tail: single vectors, then 8- and 4-byte MOVNTI, then 1-3 bytes with
 *      ordinary stores, written back for "flush".
 * Nothing fences; see ntmem/copy.h.
 *
 * Every store to the destination goes through one of the always_inline
 * primitives below (or ntmem/arch/x86_64.h, ntm_store_copy()), each of
 * which reports its instruction to the recorder (ntmem/hook.h): no store
 * is emitted anywhere else, so the recorder build sees every one.
 */
#include <stdbool.h>
#include <stdint.h>
#include <string.h>

#include "internal.h"

/*
 * Below this many bytes an unaligned copy uses ordinary stores. Measured
 * with `ntmem bench copy --align 1`: under it, the cached copy (plus the
 * write-back for "flush") beat the split NT path at every size. It is part
 * of ntm_memcpy_nt()'s contract (ntmem/copy.h: such a copy may stay dirty
 * whole), which tests/test_record_copy.c enforces: change both together.
 */
#define SHORT_UNALIGNED 256

/* Source prefetch distance of the bulk copy loop, bytes. */
#define PREFETCH_AHEAD 1024

#define CAT3(a, b, c) a##b##c
#define NAME3(a, b, c) CAT3(a, b, c)
#define FN(op) NAME3(ntm_, VARIANT, _##op)

static inline __attribute__((always_inline)) void movnti8(void *d, uint64_t v)
{
	__asm__ volatile("movntiq %1, %0" : "=m"(*(ntm_arch_u64 *)d) : "r"(v));
	NTM_REC(NTM_REC_NT, d, 8);
}

static inline __attribute__((always_inline)) void movnti4(void *d, uint32_t v)
{
	__asm__ volatile("movntil %1, %0" : "=m"(*(ntm_arch_u32 *)d) : "r"(v));
	NTM_REC(NTM_REC_NT, d, 4);
}

/* One vector NT store; @d aligned to VEC. */
static inline __attribute__((always_inline)) void vec_stream(void *d, vec_t v)
{
	vec_nt(d, v);
	NTM_REC(NTM_REC_NT, d, VEC);
}

/*
 * The bulk loop: @groups times 4 vectors (whole lines), ascending, and one
 * record for all of them after the loop. The recorder serialises its
 * events with a locked instruction, which waits for the write-combining
 * buffers to drain: one event per group made a recorded 1 MiB copy ~50x
 * slower than an unrecorded one, one per loop keeps it within a few x.
 */
static inline __attribute__((always_inline)) void
copy_groups(unsigned char *d, const unsigned char *s, size_t groups)
{
	unsigned char *d0 __attribute__((unused)) = d; /* for the record */

	for (size_t g = 0; g < groups; g++, d += 4 * VEC, s += 4 * VEC) {
		vec_t v0, v1, v2, v3;

		/*
		 * Ask for the source a kilobyte ahead: with the stores
		 * bypassing the cache, the loads are what a large copy waits
		 * on (1 MiB copies: 1.12x -> 1.01x the NT-fill time). A
		 * prefetch past the end of the source is harmless.
		 */
		__builtin_prefetch(s + PREFETCH_AHEAD);
		v0 = vec_loadu(s), v1 = vec_loadu(s + VEC);
		v2 = vec_loadu(s + 2 * VEC), v3 = vec_loadu(s + 3 * VEC);
		vec_nt(d, v0);
		vec_nt(d + VEC, v1);
		vec_nt(d + 2 * VEC, v2);
		vec_nt(d + 3 * VEC, v3);
	}
	if (groups)
		NTM_REC(NTM_REC_NT, d0, groups * 4 * VEC);
}

/* The fill's bulk loop, recorded the same way. */
static inline __attribute__((always_inline)) void
fill_groups(unsigned char *d, vec_t v, size_t groups)
{
	unsigned char *d0 __attribute__((unused)) = d; /* for the record */

	for (size_t g = 0; g < groups; g++, d += 4 * VEC) {
		vec_nt(d, v);
		vec_nt(d + VEC, v);
		vec_nt(d + 2 * VEC, v);
		vec_nt(d + 3 * VEC, v);
	}
	if (groups)
		NTM_REC(NTM_REC_NT, d0, groups * 4 * VEC);
}

static inline __attribute__((always_inline)) uint64_t load8(const void *s)
{
	return *(const ntm_arch_u64 *)s;
}

static inline __attribute__((always_inline)) uint32_t load4(const void *s)
{
	return *(const ntm_arch_u32 *)s;
}

/* Byte copy for 1-3 bytes; a memcpy() call would cost more than it moves. */
static inline __attribute__((always_inline)) void
copy_bytes(unsigned char *d, const unsigned char *s, size_t n)
{
	for (size_t i = 0; i < n; i++)
		d[i] = s[i];
	NTM_REC(NTM_REC_STORE, d, n);
}

/* Byte fill for 1-3 bytes, for the same reason. */
static inline __attribute__((always_inline)) void
fill_bytes(unsigned char *d, unsigned char c, size_t n)
{
	for (size_t i = 0; i < n; i++)
		d[i] = c;
	NTM_REC(NTM_REC_STORE, d, n);
}

static inline __attribute__((always_inline)) void *
copy_body(void *dst, const void *src, size_t n, bool flush_partial)
{
	unsigned char *d = dst;
	const unsigned char *s = src;
	size_t head = (-(uintptr_t)d) & 3;

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
	if (n < SHORT_UNALIGNED && ((uintptr_t)d & 7)) {
		ntm_store_copy(d, s, n);
		if (flush_partial)
			ntm_flush_lines(d, n);
		return dst;
	}
	if (head) {
		if (head > n)
			head = n;
		copy_bytes(d, s, head);
		if (flush_partial)
			ntm_flush_lines(d, head);
		d += head, s += head, n -= head;
	}
	if (n >= 4 && ((uintptr_t)d & 4)) {
		movnti4(d, load4(s));
		d += 4, s += 4, n -= 4;
	}
	while (n >= 8 && ((uintptr_t)d & (VEC - 1))) {
		movnti8(d, load8(s));
		d += 8, s += 8, n -= 8;
	}
	if (n >= 4 * VEC) {
		size_t groups = n / (4 * VEC);

		copy_groups(d, s, groups);
		d += groups * 4 * VEC, s += groups * 4 * VEC;
		n -= groups * 4 * VEC;
	}
	for (; n >= VEC; d += VEC, s += VEC, n -= VEC)
		vec_stream(d, vec_loadu(s));
	for (; n >= 8; d += 8, s += 8, n -= 8)
		movnti8(d, load8(s));
	if (n >= 4) {
		movnti4(d, load4(s));
		d += 4, s += 4, n -= 4;
	}
	if (n) {
		copy_bytes(d, s, n);
		if (flush_partial)
			ntm_flush_lines(d, n);
	}
	return dst;
}

void *FN(memcpy_nt)(void *dst, const void *src, size_t n)
{
	return copy_body(dst, src, n, false);
}

void *FN(memcpy_flush)(void *dst, const void *src, size_t n)
{
	return copy_body(dst, src, n, true);
}

void *FN(memset_nt)(void *dst, int c, size_t n)
{
	unsigned char *d = dst;
	unsigned char byte = (unsigned char)c;
	uint64_t word = 0x0101010101010101ull * byte;
	vec_t v = vec_splat(byte);
	size_t head = (-(uintptr_t)d) & 3;

	if (head) {
		if (head > n)
			head = n;
		fill_bytes(d, byte, head);
		ntm_flush_lines(d, head);
		d += head, n -= head;
	}
	if (n >= 4 && ((uintptr_t)d & 4)) {
		movnti4(d, (uint32_t)word);
		d += 4, n -= 4;
	}
	while (n >= 8 && ((uintptr_t)d & (VEC - 1))) {
		movnti8(d, word);
		d += 8, n -= 8;
	}
	if (n >= 4 * VEC) {
		size_t groups = n / (4 * VEC);

		fill_groups(d, v, groups);
		d += groups * 4 * VEC, n -= groups * 4 * VEC;
	}
	for (; n >= VEC; d += VEC, n -= VEC)
		vec_stream(d, v);
	for (; n >= 8; d += 8, n -= 8)
		movnti8(d, word);
	if (n >= 4) {
		movnti4(d, (uint32_t)word);
		d += 4, n -= 4;
	}
	if (n) {
		fill_bytes(d, byte, n);
		ntm_flush_lines(d, n);
	}
	return dst;
}
