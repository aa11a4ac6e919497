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

#include "cpu.h"	/* enum ntm_cpu_vendor */
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
 * The copy policy: at which size a copy into a destination that is not
 * 8-byte aligned stops being an ordinary one. Derived from what the CPU
 * tells, not from one machine's constant; every rule below names the
 * measurement behind it and the fact it keys on. (`ntmem bench copy
 * --align 1` shows where a machine crosses; --calibrate prints the
 * NTMEM_NT_THRESHOLD to set when the derived one does not fit it.)
 *
 * ntm_memcpy_nt() below ntm_nt_short_unaligned() bytes is an ordinary
 * copy (memcpy()): such a copy's head and tail lines are shared with the
 * neighbouring bytes, and only the whole lines between them pay for
 * non-temporal stores. Keyed on the NT store width of the variant in
 * force (ISA; NTMEM_ISA lowers it): the partial lines cost about the same
 * at any width, the whole lines cost one store per VEC bytes, so a
 * narrower store needs more whole lines before it wins:
 *   64-byte stores (avx512): 256, measured on a Zen 4 (below it the cached
 *     copy won at every size, from it the NT one);
 *   32-byte stores (avx2):   512, measured on a Zen 3 (EPYC family 25,
 *     model 1) at dst+1: 256 B NT 1.98x glibc, 512 B 0.66x, 1 KiB 0.43x;
 *   16-byte stores (sse2):  1024, the same rule (16 KiB / VEC) extended,
 *     unmeasured. The generic variant has no NT store at all.
 * And keyed on the cpuid family: on AMD's family 1Ah (Zen 5) and later
 * at least 768, whatever the width. Measured on an EPYC of family 26,
 * model 2 (2 vCPUs), avx512 at dst+1 against glibc: 256 B 1.91x, 512 B
 * 1.20-1.30x, 640 B 1.03x, 768 B 0.71x, 1 KiB 0.57-0.69x; avx2 at 512 B
 * 1.02x. Its partial lines cost more there than on a Zen 3 or Zen 4.
 * It is ntm_memcpy_nt()'s contract (ntmem/copy.h), which
 * tests/record/test_record_copy.c derives the same way: change both.
 *
 * ntm_memcpy_flush() below ntm_nt_threshold_default() bytes
 * (NTMEM_NT_THRESHOLD overrides it) copies through the cache and writes
 * the lines back (ntm_flush_cached()). Keyed on the cpuid vendor:
 *   AMD (and any vendor not below): 256, measured on a Zen 4 and a Zen 3
 *     (at 256 B dst+1 the NT copy ties PMDK's, 1.05x; cached plus
 *     write-back was 1.07-1.3x the NT copy from 512 B to 2 KiB);
 *   AMD family 1Ah (Zen 5) and later: 3072, what --calibrate found on
 *     an EPYC of family 26, model 2 (2 vCPUs): at dst+1 the cached copy
 *     plus write-back won up to 1 KiB (the NT copy 1.49-1.69x its time
 *     at 768 B-1 KiB, 1.33x at 1.5 KiB), tied at 2 KiB (1.04x), lost from
 *     3 KiB (0.46x); the cap below makes it 2112 with glibc's formula;
 *   Intel: 1536, what --calibrate found on a Xeon VM.
 *   Capped at glibc's REP MOVSB threshold (ntm_glibc_rep_movsb_threshold()):
 *   the cached copy is glibc's memcpy(), which from there is REP MOVSB,
 *   7x slower than the NT copy into an unaligned destination at 4 KiB on
 *   the Zen 3. glibc's other threshold, x86_non_temporal_threshold (where
 *   its own memcpy() turns non-temporal, 3/4 of the shared cache), is far
 *   above every size here and decides nothing.
 * aarch64 by reasoning: STNP is a hint and the copy writes its lines back
 * either way, so the Zen 4's 256 (the smallest, the least ordinary
 * copying) stands; there is no REP MOVSB to stay under.
 */
size_t ntm_nt_short_unaligned(const struct ntm_variant *v)
	__attribute__((visibility("hidden")));
size_t ntm_nt_threshold_default(void) __attribute__((visibility("hidden")));

/* AMD's cpuid family 1Ah: Zen 5, where both rules above change. */
#define NTM_AMD_FAMILY_ZEN5 0x1a

/*
 * The pure rule behind ntm_nt_short_unaligned(), for the tests' fake
 * CPUs: @isa the variant's, @family cpuid's (ntm_cpu_family()).
 */
size_t ntm_nt_short_for(enum ntm_isa isa, enum ntm_cpu_vendor vendor,
			unsigned family) __attribute__((visibility("hidden")));

/*
 * The pure rule behind ntm_nt_threshold_default(), for the tests' fake
 * CPUs: @rep_movsb is glibc's REP MOVSB threshold, 0 when there is none.
 */
size_t ntm_nt_threshold_for(enum ntm_cpu_vendor vendor, unsigned family,
			    size_t rep_movsb) __attribute__((visibility("hidden")));

/*
 * glibc's x86_rep_movsb_threshold as glibc computed it for this process,
 * bytes, 0 where there is no such thing (not x86-64, not glibc). A library
 * cannot run `ld.so --list-tunables`, and glibc exports no reader: this
 * takes GLIBC_TUNABLES' glibc.cpu.x86_rep_movsb_threshold when set (glibc
 * ignores one under its minimum, 8 * VEC; so does this), else glibc
 * 2.33-2.38's formula from the ISA: 2112 with FSRM, else 2048 * VEC / 16
 * (VEC 32 with AVX2, else 16: the AVX-512 CPUs glibc knows prefer its
 * AVX2 copy, Prefer_No_AVX512). Reading the tunable beats assuming the
 * formula: a user who moved glibc's threshold moved the cached copy's.
 * @tunables is GLIBC_TUNABLES' value (NULL: unset).
 */
size_t ntm_glibc_rep_movsb_threshold(uint32_t features, const char *tunables)
	__attribute__((visibility("hidden")));

/* "intel", "amd", "other": struct ntm_env_info's cpu_vendor. */
const char *ntm_cpu_vendor_name(enum ntm_cpu_vendor vendor)
	__attribute__((visibility("hidden")));

/* NTMEM_NT_THRESHOLD's default, bytes (env.c, introspect.c). */
#define NTM_NT_THRESHOLD_DEFAULT ntm_nt_threshold_default()

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
	/*
	 * ntm_nt_short_unaligned() of the table's variant, set before the
	 * table is published; 0 (every copy non-temporal, which the
	 * contract allows) until then.
	 */
	size_t nt_short;
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
