/* SPDX-License-Identifier: MIT */
/*
 * ntmem/variant.h - the out-of-line copy variants and how one is chosen.
 *
 * Every out-of-line copy (any size that is not a constant of an inlined
 * size) goes through one table of functions, a "variant", chosen once per
 * process from the CPU's features:
 *
 *   avx512   64-byte VMOVNTDQ stores     needs AVX512F, ZMM state enabled
 *   avx2     32-byte VMOVNTDQ stores     needs AVX2, YMM state enabled
 *   sse2     16-byte MOVNTDQ stores      every x86-64 CPU
 *   neon     32-byte STNP stores, every  aarch64 with Advanced SIMD
 *            line written back
 *   generic  memcpy()/memset() + write-back, portable C
 *
 * The write-back instruction used for partial lines and by ntm_flush() is
 * chosen separately: clwb > clflushopt > clflush > none on x86-64,
 * cvap > cvac > none on aarch64 (cvadp, to the Point of Deep Persistence,
 * only when NTMEM_FLUSH=cvadp asks for it).
 *
 * Environment, read once on the first call into the library:
 *   NTMEM_ISA=generic|sse2|avx2|avx512     a ceiling on the variant
 *             (generic|neon on aarch64)
 *   NTMEM_FLUSH=clwb|clflushopt|clflush|none   a ceiling on the write-back
 *             (cvadp|cvap|cvac|none on aarch64; a name of the other
 *             architecture's instructions is no ceiling)
 *   NTMEM_VERBOSE=1|yes|true|on            print the choice once to stderr
 *             (any case; 0|no|false|off or empty: silent)
 * An unknown value is ignored, with one warning line on stderr per process
 * (the only line the library prints without NTMEM_VERBOSE on).
 *
 * Benchmarks and tests call each variant directly: ntm_variant_count()
 * and ntm_variant_at() walk the table, ntm_variant_memcpy_nt() and its
 * siblings hand out its functions; applications just call ntm_memcpy_nt()
 * and friends.
 */
#ifndef NTMEM_VARIANT_H
#define NTMEM_VARIANT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Instruction-set levels, lowest first; a higher level includes the lower. */
enum ntm_isa {
	NTM_ISA_GENERIC = 0,
	NTM_ISA_SSE2 = 1,
	NTM_ISA_AVX2 = 2,
	NTM_ISA_AVX512 = 3,
	/* aarch64's levels: its baseline vector ISA is level 1, as SSE2 is. */
	NTM_ISA_NEON = 1,
};

/* Cache-line write-back instructions, weakest first. */
enum ntm_flush_insn {
	NTM_FLUSH_NONE = 0,	  /* no write-back: eADR platforms, or no such insn */
	NTM_FLUSH_CLFLUSH = 1,	  /* write back and invalidate, self-ordered */
	NTM_FLUSH_CLFLUSHOPT = 2, /* write back and invalidate, weakly ordered */
	NTM_FLUSH_CLWB = 3,	  /* write back, line may stay cached */
	/* aarch64, weakest first; the line may stay cached after each. */
	NTM_FLUSH_DC_CVAC = 4,	  /* clean to the Point of Coherency */
	NTM_FLUSH_DC_CVAP = 5,	  /* clean to the Point of Persistence */
	NTM_FLUSH_DC_CVADP = 6,	  /* clean to the Point of Deep Persistence */
};

/* CPU feature bits reported by ntm_cpu_features(). */
enum ntm_cpu_feature {
	NTM_CPU_SSE2 = 1u << 0,
	NTM_CPU_AVX = 1u << 1,
	NTM_CPU_AVX2 = 1u << 2,
	NTM_CPU_AVX512F = 1u << 3,
	NTM_CPU_AVX512BW = 1u << 4,
	NTM_CPU_OS_YMM = 1u << 5,  /* the OS saves YMM state (XCR0 bits 1-2) */
	NTM_CPU_OS_ZMM = 1u << 6,  /* the OS saves ZMM state (XCR0 bits 5-7) */
	NTM_CPU_CLFLUSH = 1u << 7,
	NTM_CPU_CLFLUSHOPT = 1u << 8,
	NTM_CPU_CLWB = 1u << 9,
	NTM_CPU_ERMS = 1u << 10,   /* fast REP MOVSB */
	NTM_CPU_FSRM = 1u << 11,   /* fast short REP MOVSB */
	NTM_CPU_MOVDIR64B = 1u << 12,
	/* aarch64 (hwcaps from getauxval()) */
	NTM_CPU_ASIMD = 1u << 13,  /* Advanced SIMD (NEON) */
	NTM_CPU_DC_CVAC = 1u << 14, /* DC CVAC/CIVAC allowed at EL0 (Linux) */
	NTM_CPU_DCPOP = 1u << 15,  /* DC CVAP (HWCAP_DCPOP) */
	NTM_CPU_DCPODP = 1u << 16, /* DC CVADP (HWCAP2_DCPODP) */
	NTM_CPU_FEATURE_COUNT = 17,
};

/* The signatures of the copy and fill functions a variant provides. */
typedef void *(*ntm_memcpy_fn)(void *dst, const void *src, size_t n);
typedef void *(*ntm_memset_fn)(void *dst, int c, size_t n);

/*
 * One out-of-line implementation of the copy primitives. Opaque since
 * 0.4: its fields are read through the accessors below, so the library
 * can add to it without breaking programs built against it.
 */
struct ntm_variant;

/**
 * ntm_variant_count() - how many variants are compiled into the library,
 * including those this CPU cannot run (check ntm_variant_supported())
 */
size_t ntm_variant_count(void);

/**
 * ntm_variant_at() - variant @i, ordered from the lowest ISA to the highest
 *
 * Return: the variant, or NULL when @i >= ntm_variant_count().
 */
const struct ntm_variant *ntm_variant_at(size_t i);

/*
 * What a variant is: its name ("avx512", "avx2", "sse2", "neon",
 * "generic"), its instruction-set level, the ntm_cpu_feature bits it
 * requires. @v must be a variant of the library (ntm_variant_at(),
 * ntm_variant_find(), ntm_variant_active()).
 */
const char *ntm_variant_name(const struct ntm_variant *v);
enum ntm_isa ntm_variant_isa(const struct ntm_variant *v);
uint32_t ntm_variant_needs(const struct ntm_variant *v);

/*
 * The variant's own functions, with the contracts of ntm_memcpy_nt(),
 * ntm_memcpy_flush() and ntm_memset_flush() but without their dispatch
 * or copy policy: what benchmarks and tests call to measure or check one
 * variant. Only a variant ntm_variant_supported() accepts may be called.
 * Fetch the pointer once, outside a hot loop.
 */
ntm_memcpy_fn ntm_variant_memcpy_nt(const struct ntm_variant *v);
ntm_memcpy_fn ntm_variant_memcpy_flush(const struct ntm_variant *v);
ntm_memset_fn ntm_variant_memset_flush(const struct ntm_variant *v);

/**
 * ntm_variant_list() - every variant compiled into the library, as an array
 * @count: set to the number of entries
 *
 * Deprecated: kept for programs built against 0.1, which index the array
 * with the struct's 0.1 layout (the library keeps it). With the struct
 * opaque a program built now cannot index it: use ntm_variant_count()
 * and ntm_variant_at().
 */
const struct ntm_variant *ntm_variant_list(size_t *count)
	__attribute__((deprecated("use ntm_variant_count() and ntm_variant_at()")));

/** ntm_variant_find() - the variant called @name, or NULL */
const struct ntm_variant *ntm_variant_find(const char *name);

/** ntm_variant_supported() - true when this CPU and OS can run @v */
bool ntm_variant_supported(const struct ntm_variant *v);

/** ntm_variant_active() - the variant the dispatched entry points use */
const struct ntm_variant *ntm_variant_active(void);

/** ntm_flush_active() - the write-back instruction in use */
enum ntm_flush_insn ntm_flush_active(void);

/**
 * ntm_flush_insn_name() - "clwb", "clflushopt", "clflush", "cvadp",
 * "cvap", "cvac" or "none"; "unknown" for a value outside enum ntm_flush_insn
 */
const char *ntm_flush_insn_name(enum ntm_flush_insn insn);

/** ntm_cpu_features() - ntm_cpu_feature bits of this CPU */
uint32_t ntm_cpu_features(void);

/** ntm_cpu_feature_name() - lower-case name of one feature bit */
const char *ntm_cpu_feature_name(uint32_t bit);

/** ntm_cache_line_size() - bytes per cache line used for write-backs */
size_t ntm_cache_line_size(void);

#ifdef __cplusplus
}
#endif

#endif /* NTMEM_VARIANT_H */
