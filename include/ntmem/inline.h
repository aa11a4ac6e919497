/* SPDX-License-Identifier: MIT */
/*
 * ntmem/inline.h - constant-size fast paths for the copy primitives.
 *
 * Included by ntmem/copy.h, whose out-of-line functions a fast path falls
 * back to; included on its own, it includes ntmem/copy.h first.
 *
 * The kernel copies a template struct page into 25 million slots with a
 * compile-time constant size (64, 80 or 96 bytes). A call per copy costs
 * more than the stores themselves, so for a constant size the copy is
 * expanded in place: straight-line non-temporal stores in ascending address
 * order (write-combining buffers see one forward stream and close each line
 * as soon as it is full).
 *
 * Store width follows the destination alignment, checked once per copy (a
 * single well-predicted branch in a loop over an array): the widest store
 * the alignment and the caller's compiler flags allow, because fewer stores
 * per line is what reaches the streaming-write limit (measured with 64-,
 * 80- and 96-byte slots: 32-byte stores 1.00-1.03x the limit, 16-byte
 * stores 1.17-1.20x, 8-byte stores slower still):
 *   dst 16-byte aligned  built with AVX (-mavx, -march=native): one 16-byte
 *                        store up to 32-byte alignment, then 32-byte
 *                        VMOVNTDQ stores; baseline x86-64: 16-byte MOVNTDQ.
 *                        An odd multiple of 8 ends with one 8-byte MOVNTI.
 *   dst 8-byte aligned   8-byte MOVNTI stores, as the kernel does.
 *   size 4, dst 4-byte aligned: one 4-byte MOVNTI.
 *   aarch64: the same shapes with STNP pairs (32-byte Q, 16-byte X, 8-byte
 *   W; a plain 4-byte store), then one ntm_flush() call for the lines:
 *   STNP is only a hint (ntmem/arch/aarch64.h).
 *   anything else        ntm_memcpy_nt(): an ordinary copy in place (a
 *                        constant-size memcpy(), a few moves), what the
 *                        out-of-line function makes of a short unaligned
 *                        copy, without its call: the lines stay dirty, as
 *                        its contract allows. ntm_memcpy_flush(): out of
 *                        line (ordinary stores, lines written back).
 * Where its stores are non-temporal it leaves no line dirty, so it serves
 * both contracts. It never fences.
 *
 * Only the baseline ISA of the caller's compiler flags is used; no -m flag
 * is needed. Wider vectors are used out of line, chosen at run time.
 *
 * Each size also has a named function, ntm_memcpy_nt_<N>(dst, src), with
 * an exported out-of-line twin of the same name in libntmem for FFI and
 * dlsym() users.
 *
 * A run-time size of a struct (a multiple of 8 up to NTM_INLINE_VAR_MAX)
 * into a 16-byte aligned destination takes the same stores in place too:
 * the variable-size path below.
 */
#ifndef NTMEM_INLINE_H
#define NTMEM_INLINE_H

/* A no-op when ntmem/copy.h includes this header, at its end. */
#include <ntmem/copy.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#if defined(__x86_64__)
#include <ntmem/arch/x86_64.h>
#if defined(__AVX__)
#define NTM_ARCH_HAS_STREAM32 1
#endif
#elif defined(__aarch64__)
#include <ntmem/arch/aarch64.h>
#else
#include <ntmem/arch/generic.h>
#endif

/*
 * What a fixed-size copy does after its non-temporal stores to leave no
 * line dirty: nothing where they bypass the cache (x86-64); aarch64's STNP
 * is only a hint, so its header writes the lines back.
 */
#ifndef NTM_ARCH_NT_NEEDS_FINISH
#define ntm_arch_nt_finish(d, n) ((void)(n), (d))
#endif

#ifdef __cplusplus
extern "C" {
#endif

/*
 * Ordinary (cached) stores of a whole range, as the library makes them on a
 * destination: memcpy()/memset() and the recorder's NTM_REC() together, so
 * no ordinary store to a destination escapes the recorder (ntmem/hook.h).
 *
 * Not API: the library's own primitives, here only because the arch
 * headers that use them are installed. They may change or go in any
 * release, and no man page describes them; a program copies with
 * ntm_memcpy_flush() and ntm_memcpy_nt() (ntm_memcpy_nt(3)).
 */
static inline __attribute__((always_inline)) void
ntm_store_copy(void *d, const void *s, size_t n)
{
	memcpy(d, s, n);
	NTM_REC(NTM_REC_STORE, d, n);
}

static inline __attribute__((always_inline)) void
ntm_store_fill(void *d, int c, size_t n)
{
	memset(d, c, n);
	NTM_REC(NTM_REC_STORE, d, n);
}

/* The same for a copy whose source and destination may overlap. */
static inline __attribute__((always_inline)) void
ntm_store_move(void *d, const void *s, size_t n)
{
	memmove(d, s, n);
	NTM_REC(NTM_REC_STORE, d, n);
}

/* Largest constant size expanded inline: two struct pages' worth of 64 B. */
#define NTM_INLINE_MAX 128

/* Every size with an inline path and an exported ntm_memcpy_nt_<N> twin. */
#define NTM_FIXED_SIZES(X) X(4) NTM_FIXED_SIZES_8(X)
/* The multiples of 8 among them. */
#define NTM_FIXED_SIZES_8(X)                                                  \
	X(8) X(16) X(24) X(32) X(40) X(48) X(56) X(64) X(72) X(80) X(88) X(96) \
	X(104) X(112) X(120) X(128)

/* True when the fixed path handles @n; folds to a constant for constant n. */
#define NTM_FIXED_SIZE_OK(n) \
	((n) == 4 || ((n) >= 8 && (n) <= NTM_INLINE_MAX && (n) % 8 == 0))

#if defined(__GNUC__) && !defined(__clang__)
#define NTM_UNROLL _Pragma("GCC unroll 16")
#elif defined(__clang__)
#define NTM_UNROLL _Pragma("unroll")
#else
#define NTM_UNROLL
#endif

#if NTM_ARCH_HAS_NT_STORES
/* Straight-line 16-byte stores (+ 8-byte tail); @d 16-byte aligned. */
static inline __attribute__((always_inline)) void
ntm_nt_fixed16(unsigned char *d, const unsigned char *s, size_t n)
{
	size_t i;

	NTM_UNROLL
	for (i = 0; i + 16 <= n; i += 16)
		ntm_arch_stream16(d + i, s + i);
	if (n & 8)
		ntm_arch_stream8(d + i, s + i);
}

#ifdef NTM_ARCH_HAS_STREAM32
/* Straight-line 32-byte stores (+ 16- and 8-byte tail); @d 32-aligned. */
static inline __attribute__((always_inline)) void
ntm_nt_fixed32(unsigned char *d, const unsigned char *s, size_t n)
{
	size_t i;

	NTM_UNROLL
	for (i = 0; i + 32 <= n; i += 32)
		ntm_arch_stream32(d + i, s + i);
	if (n & 16) {
		ntm_arch_stream16(d + i, s + i);
		i += 16;
	}
	if (n & 8)
		ntm_arch_stream8(d + i, s + i);
}
#endif
#endif

/*
 * ntm_memcpy_nt_fixed_or() - the fixed-size body; @n must satisfy
 * NTM_FIXED_SIZE_OK and be a compile-time constant for the loops to unroll
 * into straight-line stores; @unaligned (a constant too) copies a
 * destination the stores cannot take, NULL for an ordinary copy in place.
 */
static inline __attribute__((always_inline)) void *
ntm_memcpy_nt_fixed_or(void *dst, const void *src, size_t n,
		       void *(*unaligned)(void *, const void *, size_t))
{
#if NTM_ARCH_HAS_NT_STORES
	unsigned char *d = (unsigned char *)dst;
	const unsigned char *s = (const unsigned char *)src;
	uintptr_t a = (uintptr_t)dst;
	size_t i;

	if (n >= 16 && (a & 15) == 0) {
#ifdef NTM_ARCH_HAS_STREAM32
		if (n >= 32 && (a & 16)) {
			ntm_arch_stream16(d, s);
			ntm_nt_fixed32(d + 16, s + 16, n - 16);
			return ntm_arch_nt_finish(dst, n);
		}
		if (n >= 32) {
			ntm_nt_fixed32(d, s, n);
			return ntm_arch_nt_finish(dst, n);
		}
#endif
		ntm_nt_fixed16(d, s, n);
		return ntm_arch_nt_finish(dst, n);
	}
	if (n >= 8 && (a & 7) == 0) {
		NTM_UNROLL
		for (i = 0; i < n; i += 8)
			ntm_arch_stream8(d + i, s + i);
		return ntm_arch_nt_finish(dst, n);
	}
	if (n == 4 && (a & 3) == 0) {
		ntm_arch_stream4(d, s);
		return ntm_arch_nt_finish(dst, n);
	}
	if (!unaligned) {
		/*
		 * A constant-size memcpy() is a few moves, no call: the out-of-
		 * line ntm_memcpy_nt() made the same ordinary copy after a call
		 * and its checks, 2-3x glibc's time at 8 and 64 bytes.
		 */
		ntm_store_copy(dst, src, n);
		return dst;
	}
	return unaligned(dst, src, n);
#else
	/* No non-temporal store: the out-of-line copy does what it can. */
	(void)n;
	return (unaligned ? unaligned : ntm_memcpy_nt)(dst, src, n);
#endif
}

/*
 * The fixed-size body with the non-temporal contract. An unaligned
 * destination gets an ordinary copy in place: ntm_memcpy_nt() leaves the
 * whole of a copy below every variant's short size (256 bytes, the
 * smallest: ntmem/copy.h) dirty, and NTM_INLINE_MAX is below it.
 */
static inline __attribute__((always_inline)) void *
ntm_memcpy_nt_fixed(void *dst, const void *src, size_t n)
{
	return ntm_memcpy_nt_fixed_or(dst, src, n, NULL);
}

#ifdef NTM_BUILD_FIXED_TWINS
/* src/fixed.c: emit each fixed-size function as an exported symbol. */
#define NTM_FIXED_LINKAGE
#else
#define NTM_FIXED_LINKAGE static inline __attribute__((always_inline))
#endif

#define NTM_DEFINE_FIXED(N)                                                 \
	NTM_FIXED_LINKAGE void *ntm_memcpy_nt_##N(void *dst, const void *src) \
	{                                                                   \
		return ntm_memcpy_nt_fixed(dst, src, N);                    \
	}
NTM_FIXED_SIZES(NTM_DEFINE_FIXED)
#undef NTM_DEFINE_FIXED

/*
 * The variable-size path: a run-time @n that is a multiple of 8 from 8 to
 * NTM_INLINE_VAR_MAX into a 16-byte aligned destination, the struct-sized
 * copies of a loop over an array whose element size the compiler cannot
 * see. Any out-of-line function costs such a copy more than its stores:
 * on an AMD Zen 5 a bare function of two 32-byte loads and two
 * non-temporal stores, called through a pointer, took 1.30-1.42x the time
 * of the same stores inline (64-byte slots), whatever its entry did.
 *
 * @n is split into its 64-, 32-, 16- and 8-byte parts, each copied by the
 * fixed path's straight-line stores in ascending address order: four
 * branches on bits of @n, which a loop over one size predicts every time,
 * and no loop counter between the stores (a loop of 16-byte stores
 * measured 1.09-1.18x the fixed path there; this 0.94-1.04x). 120 is the
 * sum of the parts; 128 would need a part of its own for one size.
 */
#define NTM_INLINE_VAR_MAX 120

/* True when the variable-size path copies @n bytes to @d. */
#define NTM_VAR_SIZE_OK(d, n)                                  \
	(((((uintptr_t)(d)) & 15) | ((n) & 7)) == 0 &&         \
	 (n) - 8 <= (size_t)(NTM_INLINE_VAR_MAX - 8))

#if NTM_ARCH_HAS_NT_STORES
/* @d 16-byte aligned, @n as NTM_VAR_SIZE_OK() admits. */
static inline __attribute__((always_inline)) void
ntm_nt_var(unsigned char *d, const unsigned char *s, size_t n)
{
#ifdef NTM_ARCH_HAS_STREAM32
	/* The fixed path's shape: one 16-byte store to 32-byte alignment. */
	if (((uintptr_t)d & 16) && n >= 16) {
		ntm_arch_stream16(d, s);
		d += 16;
		s += 16;
		n -= 16;
	}
#define NTM_NT_VAR_PART ntm_nt_fixed32
#else
#define NTM_NT_VAR_PART ntm_nt_fixed16
#endif
	if (n & 64) {
		NTM_NT_VAR_PART(d, s, 64);
		d += 64;
		s += 64;
	}
	if (n & 32) {
		NTM_NT_VAR_PART(d, s, 32);
		d += 32;
		s += 32;
	}
#undef NTM_NT_VAR_PART
	if (n & 16) {
		ntm_arch_stream16(d, s);
		d += 16;
		s += 16;
	}
	if (n & 8)
		ntm_arch_stream8(d, s);
}

#else
static inline __attribute__((always_inline)) void
ntm_nt_var(unsigned char *d, const unsigned char *s, size_t n)
{
	(void)d, (void)s, (void)n;	/* never called: NTM_VAR_INLINE is 0 */
}
#endif

/*
 * True when a front door copies @n bytes to @dst inline with a run-time
 * @n. Only where the compiler optimises, as for constant sizes (an -O0
 * build calls the library for every size), and only with non-temporal
 * stores.
 */
#if NTM_ARCH_HAS_NT_STORES && defined(__OPTIMIZE__)
#define NTM_VAR_INLINE(dst, n) \
	(!__builtin_constant_p(n) && NTM_VAR_SIZE_OK(dst, n))
#else
#define NTM_VAR_INLINE(dst, n) 0
#endif

/*
 * Front doors: a constant size of a fixed-path size is expanded inline,
 * so is a run-time size the variable-size path takes; every other call
 * goes to the exported, dispatched function. Write
 * (ntm_memcpy_nt)(d, s, n) to force the out-of-line call.
 */
static inline __attribute__((always_inline)) void *
ntm_memcpy_nt_inline(void *dst, const void *src, size_t n)
{
	if (__builtin_constant_p(n) && NTM_FIXED_SIZE_OK(n))
		return ntm_memcpy_nt_fixed(dst, src, n);
	if (NTM_VAR_INLINE(dst, n)) {
		ntm_nt_var((unsigned char *)dst, (const unsigned char *)src, n);
		return ntm_arch_nt_finish(dst, n);
	}
	return (ntm_memcpy_nt)(dst, src, n);
}

/* Non-temporal stores leave no line dirty: the flush contract holds. */
static inline __attribute__((always_inline)) void *
ntm_memcpy_flush_inline(void *dst, const void *src, size_t n)
{
	if (__builtin_constant_p(n) && NTM_FIXED_SIZE_OK(n))
		return ntm_memcpy_nt_fixed_or(dst, src, n, ntm_memcpy_flush);
	if (NTM_VAR_INLINE(dst, n)) {
		ntm_nt_var((unsigned char *)dst, (const unsigned char *)src, n);
		return ntm_arch_nt_finish(dst, n);
	}
	return (ntm_memcpy_flush)(dst, src, n);
}

#ifndef NTM_NO_INLINE_FRONT_DOORS
#define ntm_memcpy_nt(dst, src, n) ntm_memcpy_nt_inline(dst, src, n)
#define ntm_memcpy_flush(dst, src, n) ntm_memcpy_flush_inline(dst, src, n)
#define ntm_drain() ntm_arch_drain()
#endif

#ifdef __cplusplus
}
#endif

#endif /* NTMEM_INLINE_H */
