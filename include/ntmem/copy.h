/* SPDX-License-Identifier: MIT */
/*
 * ntmem/copy.h - non-temporal and flush-cache copy primitives.
 *
 * Two kinds of copy, after the kernel's memcpy_nontemporal() and
 * memcpy_flushcache():
 *
 *   ntm_memcpy_nt()     a hint: use non-temporal (cache-bypassing) stores
 *                       where the destination alignment allows them. What
 *                       is copied with ordinary stores may stay dirty in
 *                       the cache, and that is exactly:
 *                       - the whole copy, when @dst is not 8-byte aligned
 *                         and @n is below the active variant's short size
 *                         (256 for avx512 and aarch64's neon, 512 for
 *                         avx2, 1024 for sse2, and at least 768 on AMD's
 *                         Zen 5 and later, cpuid family 26: NT stores do
 *                         not pay on lines shared with neighbouring bytes
 *                         until enough whole lines lie between them), or
 *                         when
 *                         the active variant is "generic" (no NT stores);
 *                       - otherwise at most 1-3 head bytes (up to 4-byte
 *                         alignment of @dst) and 1-3 tail bytes.
 *   ntm_memcpy_flush()  a guarantee: when it returns, no cache line of
 *                       [dst, dst + n) is dirty in this CPU's cache. A
 *                       copy to a destination that is not 8-byte aligned
 *                       and shorter than NTMEM_NT_THRESHOLD bytes (unless
 *                       set, the CPU's default: 1536 on Intel, 3072 on
 *                       AMD's Zen 5 and later, 256 elsewhere, at most
 *                       glibc's REP MOVSB threshold)
 *                       is made with ordinary stores; a longer one to
 *                       such a destination stores its whole lines
 *                       non-temporally and its partial head and tail
 *                       lines with ordinary stores (as PMDK does); any
 *                       other non-temporally, its 1-3 head and tail bytes
 *                       with ordinary stores. What is stored ordinarily
 *                       has its lines written back (CLWB > CLFLUSHOPT >
 *                       CLFLUSH).
 *
 *   Both contracts are checked by machine (tests/record/test_record_copy.c, the
 *   recorder of ntmem/check.h) for every variant, size and alignment.
 *
 * Ordering - who must fence, and when:
 *   Non-temporal stores and cache-line write-backs are weakly ordered: a
 *   later ordinary store (a flag, a doorbell, a commit record) can become
 *   visible before them. No function in this header fences. A caller that
 *   hands the copied data to another CPU, a device or the persistence domain
 *   calls ntm_drain() after the copies and before the publishing store.
 *   Stores that the same CPU later reads back need no fence: a CPU always
 *   sees its own stores.
 *
 * Constant sizes:
 *   When @n is a compile-time constant of 4 or a multiple of 8 up to
 *   NTM_INLINE_MAX (128) and the compiler optimises (-O1 and up, where
 *   __builtin_constant_p sees the constant), ntm_memcpy_nt() and
 *   ntm_memcpy_flush() expand to straight-line non-temporal stores in
 *   ascending address order and call nothing into an 8-byte aligned
 *   destination; into an unaligned one ntm_memcpy_nt() is an ordinary
 *   copy in place and ntm_memcpy_flush() calls its out-of-line function
 *   (see ntmem/inline.h).
 *
 * Run-time sizes:
 *   A size the compiler cannot see that is a multiple of 8 from 8 to
 *   NTM_INLINE_VAR_MAX (120), into a 16-byte aligned destination, is
 *   copied in place as well, with the same non-temporal stores (an
 *   optimised build; ntmem/inline.h). Every other size goes out of line
 *   through a dispatch table chosen once per process (see
 *   ntmem/variant.h).
 */
#ifndef NTMEM_COPY_H
#define NTMEM_COPY_H

#include <stddef.h>

/*
 * The copy entry points are called through the caller's GOT entry, not a
 * PLT slot: the dynamic linker writes the variant's function into the GOT
 * (they are GNU indirect functions), and a PLT slot would only add its
 * jump through that GOT entry to every call. Where the attribute is
 * unknown (clang) the call goes through the PLT, as any other. A program
 * that wants PLT calls (ltrace(1) sees only those) defines
 * NTM_CALL_VIA_GOT empty before including ntmem.h.
 */
#ifndef NTM_CALL_VIA_GOT
#if defined(__x86_64__) && defined(__has_attribute)
#if __has_attribute(noplt)
#define NTM_CALL_VIA_GOT __attribute__((noplt))
#endif
#endif
#endif
#ifndef NTM_CALL_VIA_GOT
#define NTM_CALL_VIA_GOT
#endif

#ifdef __cplusplus
extern "C" {
#endif

/**
 * ntm_memcpy_nt() - copy with non-temporal stores, never a fence
 * @dst: destination; any alignment
 * @src: source; any alignment; must not overlap @dst
 * @n:   bytes to copy
 *
 * The kernel's memcpy_nontemporal(): for write-once data that nobody will
 * read soon (a descriptor array, a log), so the copy neither pollutes the
 * cache nor reads the destination lines in first. Call ntm_drain() before
 * publishing the data. A constant @n of an inlined size costs no call.
 *
 * Lines it may leave dirty (stored with ordinary stores): all of the
 * range when @dst is not 8-byte aligned and @n is below the active
 * variant's short size (256 for avx512 and neon, 512 for avx2, 1024 for
 * sse2, at least 768 on AMD's Zen 5 and later), or with the generic
 * variant; otherwise only the lines of the 1-3 bytes before the first
 * 4-byte aligned address and of the 1-3 bytes after the last one. Use
 * ntm_memcpy_flush() when no line may stay dirty.
 *
 * Return: @dst.
 */
NTM_CALL_VIA_GOT void *ntm_memcpy_nt(void *dst, const void *src, size_t n);

/**
 * ntm_memcpy_flush() - copy so that no destination line is left dirty
 * @dst: destination; any alignment (an unaligned head/tail line is copied
 *       with ordinary stores and written back)
 * @src: source; any alignment; must not overlap @dst
 * @n:   bytes to copy
 *
 * The kernel's memcpy_flushcache(): after it returns, the data has left the
 * CPU cache on its way to memory; ntm_drain() then makes it durable on a
 * platform whose memory controller is in the persistence domain (ADR).
 * Below NTMEM_NT_THRESHOLD bytes (default: 1536 on Intel CPUs, 3072 on
 * AMD's Zen 5 and later, 256 on others, at most glibc's REP MOVSB
 * threshold) a destination that is not
 * 8-byte aligned is copied through the cache and its lines written back,
 * the faster way there; `ntmem bench copy --calibrate` measures the
 * crossover on the machine at hand.
 *
 * Return: @dst.
 */
NTM_CALL_VIA_GOT void *ntm_memcpy_flush(void *dst, const void *src, size_t n);

/**
 * ntm_memset_flush() - fill so that no destination line is left dirty,
 * never a fence
 * @dst: destination; any alignment
 * @c:   byte value
 * @n:   bytes to fill
 *
 * The fill counterpart of ntm_memcpy_flush(), with its store and
 * write-back rules: non-temporal stores where the alignment allows them,
 * the 1-3 head and tail bytes stored ordinarily and their lines written
 * back. After ntm_drain() the fill is durable on an ADR platform.
 *
 * Return: @dst.
 */
NTM_CALL_VIA_GOT void *ntm_memset_flush(void *dst, int c, size_t n);

/*
 * ntm_memset_nt() - the name ntm_memset_flush() had up to 0.3: the same
 * function (the same code, exported under both names), kept for programs
 * built against it. Its contract was always the flush one, not
 * ntm_memcpy_nt()'s hint; new code calls ntm_memset_flush().
 */
void *ntm_memset_nt(void *dst, int c, size_t n);

/**
 * ntm_flush() - write back every cache line that overlaps [@p, @p + @n)
 * @p: first byte; any alignment
 * @n: bytes; 0 does nothing
 *
 * Uses CLWB, else CLFLUSHOPT, else CLFLUSH (NTMEM_FLUSH caps the choice).
 * Weakly ordered: ntm_drain() orders the write-backs.
 */
void ntm_flush(const void *p, size_t n);

/**
 * ntm_drain() - wait until earlier non-temporal stores and write-backs are
 * ordered before any later store (SFENCE on x86-64)
 */
void ntm_drain(void);

/**
 * ntm_invalidate() - write back and drop from the CPU cache every line that
 * overlaps [@p, @p + @n), and wait until that is done
 * @p: first byte; any alignment
 * @n: bytes; 0 does nothing
 *
 * For memory shared with another host (CXL shared memory, famfs) that the
 * CPU caches but the other host's writes do not update: the reader calls
 * it before reading data another host wrote, so its loads miss and fetch
 * that data instead of stale lines. Dirty lines of its own are written
 * back first, not lost. CLFLUSHOPT (else CLFLUSH) then MFENCE on x86-64,
 * DC CIVAC then DSB on aarch64; nothing where the build knows no cache
 * instruction. The protocol (writer: copy, flush, drain, publish; reader:
 * invalidate, read) is in ntm_invalidate(3).
 */
void ntm_invalidate(const void *p, size_t n);

/**
 * ntm_persist() - ntm_flush() then ntm_drain(): the range is durable on
 * return on an ADR platform
 * @p: first byte
 * @n: bytes
 */
void ntm_persist(const void *p, size_t n);

#ifdef __cplusplus
}
#endif

#include <ntmem/inline.h>

#endif /* NTMEM_COPY_H */
