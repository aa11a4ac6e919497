/* SPDX-License-Identifier: MIT */
/*
 * copy_policy.h - the exported copy entry points (src/copy.c, and on
 * x86-64 each variant's entries in src/x86_64/copy_body.h) and
 * ntm_memcpy_flush()'s choice between a cached and a non-temporal copy.
 * Never installed.
 */
#ifndef NTMEM_COPY_POLICY_H
#define NTMEM_COPY_POLICY_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "dispatch.h"

/*
 * What the exported ntm_memcpy_nt(), ntm_memcpy_flush() and ntm_memset_flush()
 * resolve to (src/copy.c): each variant's functions behind a check that
 * the dispatch table uses them, with the copy policy; x86-64 only.
 */
#define NTM_VARIANT(name, isa, needs)                                            \
	void *ntm_##name##_memcpy_nt_entry(void *dst, const void *src, size_t n); \
	void *ntm_##name##_memcpy_flush_entry(void *dst, const void *src,         \
					      size_t n);                          \
	void *ntm_##name##_memset_flush_entry(void *dst, int c, size_t n);
#include "variants.def"
#undef NTM_VARIANT

/*
 * NTMEM_NT_THRESHOLD's default, bytes: below it, ntm_memcpy_flush() into a
 * destination that is not 8-byte aligned stores through the cache and
 * writes the lines back; from it, non-temporally. Measured with `ntmem
 * bench copy --align 1` on the machine the library was written on, where
 * the cached copy plus write-back beat the split non-temporal one at
 * every size under it. Machines differ: `ntmem bench copy --calibrate`
 * found 1536 on a Xeon VM, so the default is the first measurement and
 * the variable says what another machine needs.
 */
#define NTM_NT_THRESHOLD_DEFAULT 256

/*
 * True when ntm_memcpy_flush() copies @n bytes to @dst with ordinary
 * stores and write-backs rather than the variant's non-temporal copy. An
 * 8-byte aligned destination never does: its stores are whole non-temporal
 * words with no line shared with a cached store, and NT stores beat the
 * cached copy plus write-back there at every size measured.
 */
static inline bool ntm_flush_cached(const void *dst, size_t n, size_t threshold)
{
	return ((uintptr_t)dst & 7) && n < threshold;
}

/* The other side of that choice: through the cache, lines written back. */
static inline void *ntm_memcpy_cached(void *dst, const void *src, size_t n)
{
	ntm_store_copy(dst, src, n);
	ntm_flush_lines(dst, n);
	return dst;
}

/*
 * An ordinary copy and nothing else, what ntm_memcpy_nt() makes of a
 * short copy into an unaligned destination: out of line in a file built
 * without vector flags, so it is a jump to memcpy() with no frame.
 */
void *ntm_memcpy_store(void *dst, const void *src, size_t n)
	__attribute__((visibility("hidden")));

/*
 * The functions of the dispatch table the entries (ntm_<variant>_*_entry)
 * run directly when they are their own variant's; NULL until the first
 * call through the table binds them. Hidden, so the entries load it
 * without a GOT lookup.
 */
struct ntm_bound {
	void *(*memcpy_nt)(void *dst, const void *src, size_t n);
	void *(*memcpy_flush)(void *dst, const void *src, size_t n);
	void *(*memset_flush)(void *dst, int c, size_t n);
};
extern struct ntm_bound ntm_bound __attribute__((visibility("hidden")));

/*
 * Through the dispatch table, binding it: what an entry calls when the
 * table does not use its variant (NTMEM_ISA, a caller's ceiling, the
 * persistence domain's copy) or on the first call.
 */
void *ntm_memcpy_nt_unbound(void *dst, const void *src, size_t n)
	__attribute__((visibility("hidden")));
void *ntm_memcpy_flush_unbound(void *dst, const void *src, size_t n)
	__attribute__((visibility("hidden")));
void *ntm_memset_flush_unbound(void *dst, int c, size_t n)
	__attribute__((visibility("hidden")));

#endif /* NTMEM_COPY_POLICY_H */
