// SPDX-License-Identifier: MIT
/*
 * copy.c - the exported, dispatched entry points of the copy primitives,
 * and ntm_memcpy_flush()'s copy policy. Constant sizes never get here;
 * ntmem/inline.h expands them in the caller.
 *
 * On x86-64 with glibc, ntm_memcpy_nt(), ntm_memcpy_flush() and
 * ntm_memset_flush() are GNU indirect functions: the dynamic linker asks the
 * resolvers below once which function each name stands for and writes
 * the answer into the caller's GOT, so a call goes through that GOT entry
 * (ntmem/copy.h declares them noplt for GCC, so there is no PLT slot's
 * jump either: a variable-size 64-byte copy into an unaligned destination
 * measured 0.99-1.17x glibc's call through the PLT and 0.96-1.00x through
 * the GOT, 0.95-1.13x and 0.91-0.95x built with -mavx, three runs of each
 * alternating on a Zen 5) straight into the best variant's entry
 * (x86_64/copy_body.h) with no function of ours in between. These
 * functions used to load the table, test it and jump, and the variant
 * jumped again through a table of struct sizes: a variable-size 64-byte
 * copy into consecutive slots took
 * 1.8x the inline path's time, and takes 1.0x (80 bytes: 1.65x, now 1.2x;
 * 96 bytes: 1.3x, now 1.0x; the old and new library in one process, runs
 * interleaved, on a quiet Xeon VM; `ntmem bench copy --sizes 64 --align 0`
 * prints the ratio). A function pointer bound at the first call keeps one
 * jump: 1.3x at 64 bytes with the same struct-sized path behind it.
 *
 * A resolver runs while the library is relocated: before the C library
 * has its environment, before any constructor (the libpmem drop-in sets
 * its ceilings in one, ntm_dispatch_set_caps()) and before the sanitizer
 * runtimes. So it reads only the CPU (ntm_cpu_detect(), NTM_EARLY) and
 * picks what the table would with no ceiling; the entry it returns checks
 * on every call that the table (dispatch.c, chosen at the first call)
 * runs the same function, and otherwise - NTMEM_ISA, a caller's ceiling,
 * NTMEM_PERSIST_DOMAIN's copy, or before the first call - goes through the
 * table as the *_unbound functions below do. Elsewhere (no IFUNC) the
 * exported functions are those.
 *
 * The copy policy (its rules and measurements: copy_policy.h):
 * ntm_memcpy_flush() into a destination that is not 8-byte aligned copies
 * fewer than NTMEM_NT_THRESHOLD bytes (default: the CPU's,
 * ntm_nt_threshold_default()) through the cache and writes the lines back, and longer ones with the
 * variant's non-temporal copy (ntm_flush_cached()). Either leaves no line
 * dirty, which is all ntm_memcpy_flush() promises. ntm_memcpy_nt() has no
 * such choice: what it may leave dirty is its contract (ntmem/copy.h),
 * and its cached copy writes nothing back. `ntmem bench copy --calibrate`
 * measures where the two copies cross on the machine at hand.
 */
#include <stdlib.h>
#include <string.h>

#include "copy_policy.h"
#include "cpu.h"
#include "variant_impl.h"

struct ntm_bound ntm_bound;

/*
 * ntmem/inline.h copies a constant size into an unaligned destination
 * ordinarily in place for ntm_memcpy_nt(): the contract's whole-copy case
 * at every variant's short size below.
 */
_Static_assert(NTM_INLINE_MAX < 256, "an inline size is a short copy");

size_t ntm_nt_short_for(enum ntm_isa isa, enum ntm_cpu_vendor vendor,
			unsigned family)
{
	size_t n;

#if defined(__x86_64__)
	switch (isa) {
	case NTM_ISA_AVX512:
		n = 256;
		break;
	case NTM_ISA_AVX2:
		n = 512;
		break;
	case NTM_ISA_SSE2:
		return 1024;
	default:
		/* generic: no NT store, the contract's "whole copy" */
		return 256;
	}
	if (vendor == NTM_VENDOR_AMD && family >= NTM_AMD_FAMILY_ZEN5 && n < 768)
		n = 768;
	return n;
#else
	/*
	 * aarch64's NEON, whose level shares SSE2's number: 256, as the
	 * contract says (it took SSE2's 1024 here before).
	 */
	(void)isa, (void)vendor, (void)family, (void)n;
	return 256;
#endif
}

size_t ntm_nt_short_unaligned(const struct ntm_variant *v)
{
	return ntm_nt_short_for(v->isa, ntm_cpu_vendor(), ntm_cpu_family());
}

const char *ntm_cpu_vendor_name(enum ntm_cpu_vendor vendor)
{
	switch (vendor) {
	case NTM_VENDOR_INTEL:
		return "intel";
	case NTM_VENDOR_AMD:
		return "amd";
	default:
		return "other";
	}
}

#if defined(__x86_64__) && defined(__GLIBC__)
/* @name's value in a GLIBC_TUNABLES string (a:b=v:c=w), or NULL. */
static const char *tunable(const char *tunables, const char *name)
{
	size_t len = strlen(name);
	const char *p = tunables;

	while (p && *p) {
		if (strncmp(p, name, len) == 0 && p[len] == '=')
			return p + len + 1;
		p = strchr(p, ':');
		if (p)
			p++;
	}
	return NULL;
}
#endif

size_t ntm_glibc_rep_movsb_threshold(uint32_t features, const char *tunables)
{
#if defined(__x86_64__) && defined(__GLIBC__)
	uint32_t avx2 = NTM_CPU_AVX2 | NTM_CPU_OS_YMM;
	size_t vec = (features & avx2) == avx2 ? 32 : 16;
	const char *set = tunable(tunables, "glibc.cpu.x86_rep_movsb_threshold");

	if (set) {
		char *end;
		unsigned long long v = strtoull(set, &end, 0);

		if (end != set && (*end == ':' || !*end) && v >= 8 * vec)
			return (size_t)v;
	}
	if (features & NTM_CPU_FSRM)
		return 2112;
	return 2048 * vec / 16;
#else
	(void)features, (void)tunables;
	return 0;
#endif
}

size_t ntm_nt_threshold_for(enum ntm_cpu_vendor vendor, unsigned family,
			    size_t rep_movsb)
{
	size_t t = 256;

	if (vendor == NTM_VENDOR_INTEL)
		t = 1536;
	else if (vendor == NTM_VENDOR_AMD && family >= NTM_AMD_FAMILY_ZEN5)
		t = 3072;

	return rep_movsb && rep_movsb < t ? rep_movsb : t;
}

size_t ntm_nt_threshold_default(void)
{
	static size_t cached; /* 0: not yet; the same answer from any thread */
	size_t t = __atomic_load_n(&cached, __ATOMIC_RELAXED);

	if (!t) {
		t = ntm_nt_threshold_for(
			ntm_cpu_vendor(), ntm_cpu_family(),
			ntm_glibc_rep_movsb_threshold(ntm_cpu_detect(),
						      getenv("GLIBC_TUNABLES")));
		__atomic_store_n(&cached, t, __ATOMIC_RELAXED);
	}
	return t;
}

/*
 * Through the table, and bind the table's function for the entries. The
 * store only when it changes: a capped process calls these on every copy,
 * from every thread, and would otherwise keep bouncing the line.
 */
void *ntm_memcpy_nt_unbound(void *dst, const void *src, size_t n)
{
	const struct ntm_dispatch *d = ntm_dispatch();

	if (__atomic_load_n(&ntm_bound.memcpy_nt, __ATOMIC_RELAXED) != d->memcpy_nt)
		__atomic_store_n(&ntm_bound.memcpy_nt, d->memcpy_nt, __ATOMIC_RELAXED);
	return d->memcpy_nt(dst, src, n);
}

void *ntm_memcpy_flush_unbound(void *dst, const void *src, size_t n)
{
	const struct ntm_dispatch *d = ntm_dispatch();

	if (__atomic_load_n(&ntm_bound.memcpy_flush, __ATOMIC_RELAXED) != d->memcpy_flush)
		__atomic_store_n(&ntm_bound.memcpy_flush, d->memcpy_flush,
				 __ATOMIC_RELAXED);
	/*
	 * The policy chooses between the variant's copy and a cached one;
	 * a persistence domain's own copy owes no write-back and is taken
	 * as it is.
	 */
	if (d->memcpy_flush == d->variant->memcpy_flush &&
	    ntm_flush_cached(dst, n, d->nt_threshold))
		return ntm_memcpy_cached(dst, src, n);
	return d->memcpy_flush(dst, src, n);
}

void *ntm_memset_flush_unbound(void *dst, int c, size_t n)
{
	const struct ntm_dispatch *d = ntm_dispatch();

	if (__atomic_load_n(&ntm_bound.memset_flush, __ATOMIC_RELAXED) != d->memset_flush)
		__atomic_store_n(&ntm_bound.memset_flush, d->memset_flush,
				 __ATOMIC_RELAXED);
	return d->memset_flush(dst, c, n);
}

void *ntm_memcpy_store(void *dst, const void *src, size_t n)
{
#ifdef NTM_RECORD
	ntm_store_copy(dst, src, n);
	return dst;
#else
	/*
	 * ntm_store_copy() records nothing in this build: the same copy,
	 * written so the compiler makes it a jump (it kept a call for
	 * "copy, then return dst").
	 */
	return memcpy(dst, src, n);
#endif
}

/* GNU IFUNC: ELF, a GNU C compiler, and glibc's dynamic linker to run it. */
#if defined(__x86_64__) && defined(__ELF__) && defined(__GNUC__) && \
	defined(__GLIBC__)
#define NTM_USE_IFUNC 1
#endif

#ifdef NTM_USE_IFUNC
typedef void *(*copy_fn)(void *dst, const void *src, size_t n);
typedef void *(*set_fn)(void *dst, int c, size_t n);

/* The generic variant has no fast path: its entries are the table's. */
void *ntm_generic_memcpy_nt_entry(void *dst, const void *src, size_t n)
{
	return ntm_memcpy_nt_unbound(dst, src, n);
}

void *ntm_generic_memcpy_flush_entry(void *dst, const void *src, size_t n)
{
	return ntm_memcpy_flush_unbound(dst, src, n);
}

void *ntm_generic_memset_flush_entry(void *dst, int c, size_t n)
{
	return ntm_memset_flush_unbound(dst, c, n);
}

/* Named only in an ifunc attribute, which clang 14 does not count as a use. */
#define RESOLVER static __attribute__((used))

/*
 * ntm_variant_select(features, no ceiling)'s ISA, without its table: a
 * resolver may run before the relocations of this object's data.
 */
NTM_EARLY static int best_isa(void)
{
	uint32_t f = ntm_cpu_detect();
	int isa = NTM_ISA_GENERIC;

	/* variants.def lists the lowest ISA first: the last match is best. */
#define NTM_VARIANT(name, level, needs) \
	if ((f & (needs)) == (needs))   \
		isa = level;
#include "variants.def"
#undef NTM_VARIANT
	return isa;
}

NTM_EARLY RESOLVER copy_fn resolve_memcpy_nt(void)
{
	switch (best_isa()) {
#define NTM_VARIANT(name, level, needs) \
	case level:                     \
		return ntm_##name##_memcpy_nt_entry;
#include "variants.def"
#undef NTM_VARIANT
	}
	return ntm_memcpy_nt_unbound;
}

NTM_EARLY RESOLVER copy_fn resolve_memcpy_flush(void)
{
	switch (best_isa()) {
#define NTM_VARIANT(name, level, needs) \
	case level:                     \
		return ntm_##name##_memcpy_flush_entry;
#include "variants.def"
#undef NTM_VARIANT
	}
	return ntm_memcpy_flush_unbound;
}

NTM_EARLY RESOLVER set_fn resolve_memset_flush(void)
{
	switch (best_isa()) {
#define NTM_VARIANT(name, level, needs) \
	case level:                     \
		return ntm_##name##_memset_flush_entry;
#include "variants.def"
#undef NTM_VARIANT
	}
	return ntm_memset_flush_unbound;
}

void *ntm_memcpy_nt(void *dst, const void *src, size_t n)
	__attribute__((ifunc("resolve_memcpy_nt")));
void *ntm_memcpy_flush(void *dst, const void *src, size_t n)
	__attribute__((ifunc("resolve_memcpy_flush")));
void *ntm_memset_flush(void *dst, int c, size_t n)
	__attribute__((ifunc("resolve_memset_flush")));
/*
 * The 0.1 name of ntm_memset_flush(): a second IFUNC symbol with the same
 * resolver, so both names bind to the same entry. (An alias of an IFUNC
 * symbol would do as much, but states less plainly that the old name is
 * resolved the same way.)
 */
void *ntm_memset_nt(void *dst, int c, size_t n)
	__attribute__((ifunc("resolve_memset_flush")));
#else
void *ntm_memcpy_nt(void *dst, const void *src, size_t n)
{
	return ntm_memcpy_nt_unbound(dst, src, n);
}

void *ntm_memcpy_flush(void *dst, const void *src, size_t n)
{
	return ntm_memcpy_flush_unbound(dst, src, n);
}

void *ntm_memset_flush(void *dst, int c, size_t n)
{
	return ntm_memset_flush_unbound(dst, c, n);
}

/* The 0.1 name of ntm_memset_flush(): the same code under a second name. */
void *ntm_memset_nt(void *dst, int c, size_t n)
	__attribute__((alias("ntm_memset_flush")));
#endif

void ntm_flush(const void *p, size_t n)
{
	ntm_flush_lines(p, n);
}

void ntm_drain(void)
{
	ntm_arch_drain();
}

void ntm_invalidate(const void *p, size_t n)
{
	const struct ntm_dispatch *d = ntm_dispatch();

	if (d->invalidate && n)
		d->invalidate(p, n, d->line);
}

void ntm_persist(const void *p, size_t n)
{
	ntm_flush_lines(p, n);
	/* Orders the write-backs above before any later store. */
	ntm_arch_drain();
}
