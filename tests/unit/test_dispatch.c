// SPDX-License-Identifier: MIT
/*
 * test_dispatch.c - how a variant and a write-back instruction are chosen.
 *
 * ntm_variant_select() and ntm_flush_select() are pure functions of
 * (feature bits, ceiling), so they are fed fake CPUs: hand-picked ones for
 * the documented rules (no state saved by the OS means no AVX, ...) and
 * then every subset of the feature bits with every
 * ceiling -1..4, checked against the rule stated in dispatch.h ("highest
 * variant whose needs are in the features and whose ISA <= the ceiling").
 * Needs are read from the variant table, not copied here, so a change to
 * variants.def is tested as written.
 *
 * Also: threads racing to make the first call into the library; the name
 * tables (ntm_variant_find, ntm_cpu_feature_name, ntm_flush_insn_name, and
 * the NTMEM_* parsers that must agree with them); the environment reader;
 * each write-back loop; and, on x86-64, the detected features against the
 * compiler's own CPUID probe.
 */
#define _GNU_SOURCE
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <ctype.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include <ntmem.h>
#include "copy_policy.h"
#include "cpu.h"
#include "env.h"
#include "flush.h"
#include "variant_impl.h"
#include "../lib/testutil.h"

#define ALL_FEATURES ((1u << NTM_CPU_FEATURE_COUNT) - 1)
/* The x86-64 bits come first, aarch64's from NTM_CPU_ASIMD on. */
#define X86_FEATURES (NTM_CPU_ASIMD - 1)
#define A64_FEATURES (ALL_FEATURES & ~X86_FEATURES)

/* ISA level 1 is named after this build's architecture (src/env.c). */
#if defined(__aarch64__)
#define LEVEL1_NAME "neon"
#define OTHER_LEVEL1_NAME "sse2"
#else
#define LEVEL1_NAME "sse2"
#define OTHER_LEVEL1_NAME "neon"
#endif

/* Variant @i of the table, which must exist. */
static const struct ntm_variant *at(size_t i)
{
	const struct ntm_variant *v = ntm_variant_at(i);

	if (!v)
		fail_msg("no variant %zu (count %zu)", i, ntm_variant_count());
	return v;
}

static const struct ntm_variant *must_find(const char *name)
{
	const struct ntm_variant *v = ntm_variant_find(name);

	if (!v)
		fail_msg("variant %s missing from the table", name);
	return v;
}

static void test_variant_table(void **state)
{
	size_t count = ntm_variant_count(), count2;
	const struct ntm_variant *l;

	(void)state;
	assert_true(count >= 1);
	assert_null(ntm_variant_at(count));
	assert_null(ntm_variant_at((size_t)-1));
	/*
	 * The deprecated array is the same table (0.1 binaries index it; its
	 * layout is checked against theirs in test_abi.c). NULL count is
	 * allowed and the table does not move.
	 */
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wdeprecated-declarations"
	l = ntm_variant_list(&count2);
	assert_ptr_equal(ntm_variant_list(NULL), l);
#pragma GCC diagnostic pop
	assert_int_equal(count2, count);
	for (size_t i = 0; i < count; i++)
		assert_ptr_equal(at(i), &l[i]);

	assert_string_equal(ntm_variant_name(at(0)), "generic");
	assert_int_equal(ntm_variant_isa(at(0)), NTM_ISA_GENERIC);
	assert_int_equal(ntm_variant_needs(at(0)), 0);
	for (size_t i = 0; i < count; i++) {
		assert_non_null(ntm_variant_name(at(i)));
		assert_non_null(ntm_variant_memcpy_nt(at(i)));
		assert_non_null(ntm_variant_memcpy_flush(at(i)));
		assert_non_null(ntm_variant_memset_flush(at(i)));
		/* needs only name known feature bits */
		assert_int_equal(ntm_variant_needs(at(i)) & ~ALL_FEATURES, 0);
		/* lowest ISA first, one variant per level */
		if (i > 0)
			assert_true(ntm_variant_isa(at(i)) >
				    ntm_variant_isa(at(i - 1)));
		for (size_t j = 0; j < i; j++)
			assert_true(strcmp(ntm_variant_name(at(i)),
					   ntm_variant_name(at(j))) != 0);
	}
#if defined(__x86_64__)
	assert_int_equal(count, 4);
	assert_string_equal(ntm_variant_name(at(1)), "sse2");
	assert_string_equal(ntm_variant_name(at(2)), "avx2");
	assert_string_equal(ntm_variant_name(at(3)), "avx512");
	assert_int_equal(ntm_variant_isa(at(1)), NTM_ISA_SSE2);
	assert_int_equal(ntm_variant_isa(at(2)), NTM_ISA_AVX2);
	assert_int_equal(ntm_variant_isa(at(3)), NTM_ISA_AVX512);
	/* a vector ISA is usable only with its OS state bit */
	assert_true(ntm_variant_needs(at(2)) & NTM_CPU_AVX2);
	assert_true(ntm_variant_needs(at(2)) & NTM_CPU_OS_YMM);
	assert_true(ntm_variant_needs(at(3)) & NTM_CPU_AVX512F);
	assert_true(ntm_variant_needs(at(3)) & NTM_CPU_OS_ZMM);
#elif defined(__aarch64__)
	assert_int_equal(count, 2);
	assert_string_equal(ntm_variant_name(at(1)), "neon");
	assert_int_equal(ntm_variant_isa(at(1)), NTM_ISA_NEON);
	assert_int_equal(ntm_variant_needs(at(1)), NTM_CPU_ASIMD);
#else
	assert_int_equal(count, 1);
#endif
}

static void test_variant_find(void **state)
{
	size_t count = ntm_variant_count();

	(void)state;
	for (size_t i = 0; i < count; i++)
		assert_ptr_equal(ntm_variant_find(ntm_variant_name(at(i))),
				 at(i));
	assert_ptr_equal(ntm_variant_find("generic"), at(0));
#if defined(__x86_64__)
	assert_ptr_equal(ntm_variant_find("sse2"), at(1));
	assert_ptr_equal(ntm_variant_find("avx2"), at(2));
	assert_ptr_equal(ntm_variant_find("avx512"), at(3));
#elif defined(__aarch64__)
	assert_ptr_equal(ntm_variant_find("neon"), at(1));
	assert_null(ntm_variant_find("sse2"));
#else
	assert_null(ntm_variant_find("sse2"));
#endif
	assert_null(ntm_variant_find("nope"));
	assert_null(ntm_variant_find(""));
	assert_null(ntm_variant_find(NULL));
	/* whole names only: no prefix or extension matches */
	assert_null(ntm_variant_find("avx"));
	assert_null(ntm_variant_find("avx2x"));
	assert_null(ntm_variant_find("gen"));
	assert_null(ntm_variant_find("generic "));
}

static void test_variant_supported(void **state)
{
	size_t count = ntm_variant_count();
	uint32_t f = ntm_cpu_features();

	(void)state;
	assert_false(ntm_variant_supported(NULL));
	assert_true(ntm_variant_supported(at(0)));
	for (size_t i = 0; i < count; i++) {
		uint32_t needs = ntm_variant_needs(at(i));

		assert_int_equal(ntm_variant_supported(at(i)),
				 (needs & f) == needs);
	}
#if defined(__x86_64__)
	/* SSE2 is architectural on x86-64 */
	assert_true(f & NTM_CPU_SSE2);
	assert_true(ntm_variant_supported(must_find("sse2")));
#elif defined(__aarch64__)
	/* Linux lets EL0 clean lines by VA on every aarch64 system */
	assert_true(f & NTM_CPU_DC_CVAC);
	assert_int_equal(ntm_variant_supported(must_find("neon")),
			 !!(f & NTM_CPU_ASIMD));
#endif
	/* one architecture's bits only */
	assert_true(!(f & X86_FEATURES) || !(f & A64_FEATURES));
}

/* --- ntm_variant_select on hand-picked CPUs ------------------------------ */

static void expect_select(uint32_t f, int cap, const char *name)
{
	const struct ntm_variant *v = ntm_variant_select(f, cap);

	assert_non_null(v);
	if (strcmp(ntm_variant_name(v), name) != 0)
		fail_msg("features 0x%x cap %d: chose %s, expected %s", f, cap,
			 ntm_variant_name(v), name);
}

static void test_select_no_features(void **state)
{
	(void)state;
	for (int cap = -1; cap <= 4; cap++)
		expect_select(0, cap, "generic");
}

#if defined(__x86_64__)
static void test_select_x86(void **state)
{
	const struct ntm_variant *avx512 = must_find("avx512");
	const uint32_t sse2 = NTM_CPU_SSE2;
	const uint32_t avx2_os = sse2 | NTM_CPU_AVX | NTM_CPU_AVX2 |
				 NTM_CPU_OS_YMM;
	uint32_t f;

	(void)state;
	/* SSE2 only */
	expect_select(sse2, -1, "sse2");
	expect_select(sse2, 0, "generic");
	for (int cap = 1; cap <= 4; cap++)
		expect_select(sse2, cap, "sse2");

	/* AVX2 in CPUID but the OS does not save YMM state */
	f = sse2 | NTM_CPU_AVX | NTM_CPU_AVX2;
	expect_select(f, -1, "sse2");
	expect_select(f, 3, "sse2");
	/* ... and the OS bit alone is not AVX2 either */
	expect_select(sse2 | NTM_CPU_OS_YMM, -1, "sse2");

	/* AVX2 usable */
	expect_select(avx2_os, -1, "avx2");
	expect_select(avx2_os, 0, "generic");
	expect_select(avx2_os, 1, "sse2");
	expect_select(avx2_os, 2, "avx2");
	expect_select(avx2_os, 3, "avx2");

	/* AVX-512F in CPUID, no ZMM state: falls back to avx2 */
	f = avx2_os | NTM_CPU_AVX512F | NTM_CPU_AVX512BW;
	expect_select(f, -1, "avx2");
	expect_select(f, 3, "avx2");

	/* AVX-512F with ZMM state */
	f |= NTM_CPU_OS_ZMM;
	expect_select(f, -1, "avx512");
	expect_select(f, 0, "generic");
	expect_select(f, 1, "sse2");
	expect_select(f, 2, "avx2");
	expect_select(f, 3, "avx512");
	expect_select(f, 4, "avx512");

	/*
	 * AVX512F and ZMM state without AVX2: avx512 only if what the table
	 * says it needs is there; otherwise the best lower one (sse2).
	 */
	f = sse2 | NTM_CPU_AVX512F | NTM_CPU_OS_ZMM;
	expect_select(f, -1, (ntm_variant_needs(avx512) & f) ==
			     ntm_variant_needs(avx512) ? "avx512" : "sse2");
	expect_select(f | ntm_variant_needs(avx512), -1, "avx512");
	expect_select(f | ntm_variant_needs(avx512), 2, "sse2");

	/* no SSE2 bit at all (never on x86-64): generic, whatever else */
	expect_select(ALL_FEATURES & ~sse2 & ~avx2_os & ~NTM_CPU_AVX512F, -1,
		      "generic");
}
#endif

#if defined(__aarch64__)
static void test_select_aarch64(void **state)
{
	const uint32_t simd = NTM_CPU_ASIMD;

	(void)state;
	expect_select(simd, -1, "neon");
	expect_select(simd, 0, "generic");
	for (int cap = 1; cap <= 4; cap++)
		expect_select(simd, cap, "neon");
	/* the write-back bits are not Advanced SIMD */
	expect_select(A64_FEATURES & ~simd, -1, "generic");
	expect_select(A64_FEATURES, -1, "neon");
}
#endif

/*
 * Every subset of the feature bits, every ceiling: the choice is supported
 * by the features, under the ceiling, and nothing better would have been.
 */
static void test_select_exhaustive(void **state)
{
	size_t count = ntm_variant_count();

	(void)state;
	for (uint32_t f = 0; f <= ALL_FEATURES; f++) {
		for (int cap = -1; cap <= 4; cap++) {
			const struct ntm_variant *v = ntm_variant_select(f, cap);
			bool ok = false;

			for (size_t i = 0; i < count; i++)
				ok |= v == at(i);
			if (!ok)
				fail_msg("f=0x%x cap=%d: not a table entry", f,
					 cap);
			if ((ntm_variant_needs(v) & f) != ntm_variant_needs(v))
				fail_msg("f=0x%x cap=%d: %s needs 0x%x", f, cap,
					 ntm_variant_name(v), ntm_variant_needs(v));
			if (cap >= 0 && (int)ntm_variant_isa(v) > cap)
				fail_msg("f=0x%x cap=%d: %s above the ceiling",
					 f, cap, ntm_variant_name(v));
			for (size_t i = 0; i < count; i++) {
				uint32_t needs = ntm_variant_needs(at(i));

				if ((needs & f) != needs)
					continue;
				if (cap >= 0 && (int)ntm_variant_isa(at(i)) > cap)
					continue;
				if (ntm_variant_isa(at(i)) > ntm_variant_isa(v))
					fail_msg("f=0x%x cap=%d: chose %s but %s "
						 "fits", f, cap, ntm_variant_name(v),
						 ntm_variant_name(at(i)));
			}
#if defined(__x86_64__)
			/* never AVX-512 without AVX512F and ZMM state */
			if (ntm_variant_isa(v) == NTM_ISA_AVX512 &&
			    (!(f & NTM_CPU_AVX512F) || !(f & NTM_CPU_OS_ZMM)))
				fail_msg("f=0x%x cap=%d: avx512 chosen", f, cap);
			if (ntm_variant_isa(v) == NTM_ISA_AVX2 &&
			    (!(f & NTM_CPU_AVX2) || !(f & NTM_CPU_OS_YMM)))
				fail_msg("f=0x%x cap=%d: avx2 chosen", f, cap);
#endif
			if (cap == 0 && ntm_variant_isa(v) != NTM_ISA_GENERIC)
				fail_msg("f=0x%x: cap 0 gave %s", f, ntm_variant_name(v));
		}
	}
}

/* --- ntm_flush_select ---------------------------------------------------- */

static void expect_flush(uint32_t f, int cap, enum ntm_flush_insn want)
{
	enum ntm_flush_insn got = ntm_flush_select(f, cap);

	if (got != want)
		fail_msg("features 0x%x cap %d: chose %s, expected %s", f, cap,
			 ntm_flush_insn_name(got), ntm_flush_insn_name(want));
}

static void test_flush_select(void **state)
{
	const uint32_t all = NTM_CPU_CLFLUSH | NTM_CPU_CLFLUSHOPT |
			     NTM_CPU_CLWB;
	const uint32_t a64 = NTM_CPU_DC_CVAC | NTM_CPU_DCPOP | NTM_CPU_DCPODP;

	(void)state;
	/* clwb > clflushopt > clflush > none */
	expect_flush(all, -1, NTM_FLUSH_CLWB);
	expect_flush(all, 4, NTM_FLUSH_CLWB);
	expect_flush(all, 3, NTM_FLUSH_CLWB);
	expect_flush(all, 2, NTM_FLUSH_CLFLUSHOPT);
	expect_flush(all, 1, NTM_FLUSH_CLFLUSH);
	expect_flush(all, 0, NTM_FLUSH_NONE);
	expect_flush(NTM_CPU_CLFLUSH | NTM_CPU_CLFLUSHOPT, -1,
		     NTM_FLUSH_CLFLUSHOPT);
	expect_flush(NTM_CPU_CLFLUSH, -1, NTM_FLUSH_CLFLUSH);
	expect_flush(NTM_CPU_CLFLUSH, 3, NTM_FLUSH_CLFLUSH);
	expect_flush(0, -1, NTM_FLUSH_NONE);
	/* a ceiling never promotes: CLWB only, capped at clflushopt */
	expect_flush(NTM_CPU_CLWB, 2, NTM_FLUSH_NONE);
	expect_flush(NTM_CPU_CLWB | NTM_CPU_CLFLUSH, 2, NTM_FLUSH_CLFLUSH);
	/* unrelated bits do not count */
	expect_flush(X86_FEATURES & ~all, -1, NTM_FLUSH_NONE);
	expect_flush(ALL_FEATURES & ~all & ~a64, -1, NTM_FLUSH_NONE);

	/* aarch64: cvap > cvac > none; cvadp only when the ceiling names it */
	expect_flush(a64, -1, NTM_FLUSH_DC_CVAP);
	expect_flush(a64, NTM_FLUSH_DC_CVADP, NTM_FLUSH_DC_CVADP);
	expect_flush(a64 & ~NTM_CPU_DCPODP, NTM_FLUSH_DC_CVADP,
		     NTM_FLUSH_DC_CVAP);
	expect_flush(a64, NTM_FLUSH_DC_CVAP, NTM_FLUSH_DC_CVAP);
	expect_flush(a64, NTM_FLUSH_DC_CVAC, NTM_FLUSH_DC_CVAC);
	expect_flush(a64, NTM_FLUSH_NONE, NTM_FLUSH_NONE);
	expect_flush(NTM_CPU_DC_CVAC, -1, NTM_FLUSH_DC_CVAC);
	/* a ceiling of the other architecture is none: never "none" */
	expect_flush(a64, NTM_FLUSH_CLFLUSH, NTM_FLUSH_DC_CVAP);
	expect_flush(a64, NTM_FLUSH_CLFLUSHOPT, NTM_FLUSH_DC_CVAP);
	expect_flush(all, NTM_FLUSH_DC_CVAC, NTM_FLUSH_CLWB);
	/* a ceiling never promotes: DCPoP only, capped at cvac */
	expect_flush(NTM_CPU_DCPOP, NTM_FLUSH_DC_CVAC, NTM_FLUSH_NONE);

	/* every subset of aarch64's bits, every ceiling */
	for (uint32_t f = 0; f <= ALL_FEATURES; f += NTM_CPU_ASIMD) {
		for (int cap = -1; cap <= NTM_FLUSH_DC_CVADP; cap++) {
			enum ntm_flush_insn want = NTM_FLUSH_NONE;
			bool own = cap >= NTM_FLUSH_DC_CVAC;

			if (cap == NTM_FLUSH_DC_CVADP && (f & NTM_CPU_DCPODP))
				want = NTM_FLUSH_DC_CVADP;
			else if (cap != 0 && (!own || cap >= NTM_FLUSH_DC_CVAP) &&
				 (f & NTM_CPU_DCPOP))
				want = NTM_FLUSH_DC_CVAP;
			else if (cap != 0 && (f & NTM_CPU_DC_CVAC))
				want = NTM_FLUSH_DC_CVAC;
			expect_flush(f, cap, want);
		}
	}

	/* every subset of x86-64's bits, every ceiling */
	for (uint32_t f = 0; f <= X86_FEATURES; f++) {
		for (int cap = -1; cap <= NTM_FLUSH_DC_CVADP; cap++) {
			enum ntm_flush_insn want = NTM_FLUSH_NONE;
			bool any = cap < 0 || cap >= 3;

			if (any && (f & NTM_CPU_CLWB))
				want = NTM_FLUSH_CLWB;
			else if ((any || cap == 2) && (f & NTM_CPU_CLFLUSHOPT))
				want = NTM_FLUSH_CLFLUSHOPT;
			else if ((any || cap >= 1) && (f & NTM_CPU_CLFLUSH))
				want = NTM_FLUSH_CLFLUSH;
			expect_flush(f, cap, want);
		}
	}
}

/* --- names --------------------------------------------------------------- */

static void test_feature_names(void **state)
{
	const char *names[NTM_CPU_FEATURE_COUNT];

	(void)state;
	for (unsigned i = 0; i < NTM_CPU_FEATURE_COUNT; i++) {
		const char *n = ntm_cpu_feature_name(1u << i);

		if (!n || !*n)
			fail_msg("feature bit %u has no name", i);
		for (const char *c = n; *c; c++)
			assert_true(islower((unsigned char)*c) ||
				    isdigit((unsigned char)*c) || *c == '_');
		for (unsigned j = 0; j < i; j++)
			assert_true(strcmp(n, names[j]) != 0);
		names[i] = n;
	}
	assert_string_equal(ntm_cpu_feature_name(NTM_CPU_SSE2), "sse2");
	assert_string_equal(ntm_cpu_feature_name(NTM_CPU_AVX512F), "avx512f");
	assert_string_equal(ntm_cpu_feature_name(NTM_CPU_CLWB), "clwb");
	/* not exactly one known bit */
	assert_null(ntm_cpu_feature_name(0));
	assert_null(ntm_cpu_feature_name(1u << NTM_CPU_FEATURE_COUNT));
	assert_null(ntm_cpu_feature_name(1u << 31));
	assert_null(ntm_cpu_feature_name(NTM_CPU_SSE2 | NTM_CPU_AVX));
	assert_null(ntm_cpu_feature_name(0xffffffffu));
}

static void test_flush_names(void **state)
{
	(void)state;
	assert_string_equal(ntm_flush_insn_name(NTM_FLUSH_NONE), "none");
	assert_string_equal(ntm_flush_insn_name(NTM_FLUSH_CLFLUSH), "clflush");
	assert_string_equal(ntm_flush_insn_name(NTM_FLUSH_CLFLUSHOPT),
			    "clflushopt");
	assert_string_equal(ntm_flush_insn_name(NTM_FLUSH_CLWB), "clwb");
	assert_string_equal(ntm_flush_insn_name(NTM_FLUSH_DC_CVAC), "cvac");
	assert_string_equal(ntm_flush_insn_name(NTM_FLUSH_DC_CVAP), "cvap");
	assert_string_equal(ntm_flush_insn_name(NTM_FLUSH_DC_CVADP), "cvadp");
	/* out of range: some string, never NULL or a crash */
	assert_non_null(ntm_flush_insn_name((enum ntm_flush_insn)7));
	assert_non_null(ntm_flush_insn_name((enum ntm_flush_insn)-1));
}

/* The NTMEM_* parsers must accept exactly the names the tables print. */
static void test_env_parsers(void **state)
{
	size_t count = ntm_variant_count();
	static const char *const bad[] = { "", "nope", "avx", "avx5122",
					   "sse2 ", " sse2", "clflush ", "-1" };

	(void)state;
	for (size_t i = 0; i < count; i++)
		assert_int_equal(ntm_isa_from_name(ntm_variant_name(at(i))), ntm_variant_isa(at(i)));
	assert_int_equal(ntm_isa_from_name("generic"), NTM_ISA_GENERIC);
#if defined(__aarch64__)
	assert_int_equal(ntm_isa_from_name("neon"), NTM_ISA_NEON);
	/* another architecture's levels are unknown names here */
	assert_int_equal(ntm_isa_from_name("sse2"), -1);
	assert_int_equal(ntm_isa_from_name("avx512"), -1);
#else
	assert_int_equal(ntm_isa_from_name("sse2"), NTM_ISA_SSE2);
	assert_int_equal(ntm_isa_from_name("avx2"), NTM_ISA_AVX2);
	assert_int_equal(ntm_isa_from_name("avx512"), NTM_ISA_AVX512);
	assert_int_equal(ntm_isa_from_name("neon"), -1);
#endif
	for (int i = NTM_FLUSH_NONE; i <= NTM_FLUSH_DC_CVADP; i++)
		assert_int_equal(
			ntm_flush_from_name(
				ntm_flush_insn_name((enum ntm_flush_insn)i)),
			i);
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		assert_int_equal(ntm_isa_from_name(bad[i]), -1);
		assert_int_equal(ntm_flush_from_name(bad[i]), -1);
	}
}

/* Set or unset one variable; NULL unsets. */
static void set_env(const char *name, const char *val)
{
	if (val)
		assert_int_equal(setenv(name, val, 1), 0);
	else
		assert_int_equal(unsetenv(name), 0);
}

static void read_env(struct ntm_env *env, const char *isa, const char *flush,
		     const char *verbose)
{
	set_env("NTMEM_ISA", isa);
	set_env("NTMEM_FLUSH", flush);
	set_env("NTMEM_VERBOSE", verbose);
	memset(env, 0x5a, sizeof(*env));
	ntm_env_read(env);
	assert_true(memchr(env->bad, '\0', sizeof(env->bad)) != NULL);
}

/*
 * The environment reader, in process. The dispatcher read the variables
 * once before this test (test_active_choice runs first), so changing them
 * here cannot change the running choice - which is checked at the end.
 */
static void test_env_read(void **state)
{
	const struct ntm_variant *act = ntm_variant_active();
	enum ntm_flush_insn fl = ntm_flush_active();
	struct ntm_env env;
	char longval[400];

	(void)state;
	read_env(&env, NULL, NULL, NULL);
	assert_int_equal(env.isa_cap, -1);
	assert_int_equal(env.flush_cap, -1);
	assert_false(env.verbose);
	assert_string_equal(env.bad, "");

	read_env(&env, "", "", "");
	assert_int_equal(env.isa_cap, -1);
	assert_int_equal(env.flush_cap, -1);
	assert_false(env.verbose);
	assert_string_equal(env.bad, "");

	read_env(&env, LEVEL1_NAME, "clflushopt", "1");
	assert_int_equal(env.isa_cap, 1);
	assert_int_equal(env.flush_cap, NTM_FLUSH_CLFLUSHOPT);
	assert_true(env.verbose);
	assert_string_equal(env.bad, "");

	read_env(&env, "generic", "none", "0");
	assert_int_equal(env.isa_cap, NTM_ISA_GENERIC);
	assert_int_equal(env.flush_cap, NTM_FLUSH_NONE);
	assert_false(env.verbose);

	read_env(&env, LEVEL1_NAME, "clwb", NULL);
	assert_int_equal(env.isa_cap, 1);
	assert_int_equal(env.flush_cap, NTM_FLUSH_CLWB);

	read_env(&env, OTHER_LEVEL1_NAME, "cvap", NULL);
	assert_int_equal(env.isa_cap, -1);
	assert_int_equal(env.flush_cap, NTM_FLUSH_DC_CVAP);
	assert_non_null(strstr(env.bad, "NTMEM_ISA=" OTHER_LEVEL1_NAME));

	/* unknown values: ignored (no ceiling) and described */
	read_env(&env, "bogus", "clflush", NULL);
	assert_int_equal(env.isa_cap, -1);
	assert_int_equal(env.flush_cap, NTM_FLUSH_CLFLUSH);
	assert_non_null(strstr(env.bad, "NTMEM_ISA=bogus"));
	assert_null(strstr(env.bad, "NTMEM_FLUSH"));

	read_env(&env, "bogus", "worse", NULL);
	assert_int_equal(env.isa_cap, -1);
	assert_int_equal(env.flush_cap, -1);
	assert_non_null(strstr(env.bad, "NTMEM_ISA=bogus"));
	assert_non_null(strstr(env.bad, "NTMEM_FLUSH=worse"));

	/* values longer than the description buffer are cut, not overrun */
	memset(longval, 'x', sizeof(longval) - 1);
	longval[sizeof(longval) - 1] = '\0';
	read_env(&env, longval, longval, NULL);
	assert_int_equal(env.isa_cap, -1);
	assert_int_equal(env.flush_cap, -1);
	assert_true(strlen(env.bad) < sizeof(env.bad));
	assert_non_null(strstr(env.bad, "NTMEM_ISA="));

	set_env("NTMEM_ISA", NULL);
	set_env("NTMEM_FLUSH", NULL);
	set_env("NTMEM_VERBOSE", NULL);
	/* read once per process: the choice made earlier stands */
	assert_ptr_equal(ntm_variant_active(), act);
	assert_int_equal(ntm_flush_active(), fl);
}

/*
 * The copy policy's rules (copy_policy.h) on fake CPUs, at each edge:
 * ntm_memcpy_flush()'s default by vendor and family, capped at glibc's
 * REP MOVSB threshold; that threshold from GLIBC_TUNABLES or glibc's
 * formula; and ntm_memcpy_nt()'s short unaligned size by the variant's
 * store width and the family (Zen 5's, 26, and the families either side).
 */
static void test_copy_policy_rules(void **state)
{
	const uint32_t avx2 = NTM_CPU_SSE2 | NTM_CPU_AVX | NTM_CPU_AVX2 | NTM_CPU_OS_YMM;
	const char *key = "glibc.cpu.x86_rep_movsb_threshold";
	char tun[160];

	/* ntm_memcpy_flush()'s default: vendor, family, glibc's cap -> bytes */
	static const struct {
		enum ntm_cpu_vendor vendor;
		unsigned family;
		size_t rep_movsb, want;
	} thresholds[] = {
		{ NTM_VENDOR_AMD, 25, 2112, 256 },
		{ NTM_VENDOR_OTHER, 26, 0, 256 },
		{ NTM_VENDOR_INTEL, 6, 4096, 1536 },
		{ NTM_VENDOR_INTEL, 6, 1537, 1536 },
		{ NTM_VENDOR_INTEL, 6, 1535, 1535 },
		{ NTM_VENDOR_AMD, 25, 255, 255 },
		{ NTM_VENDOR_INTEL, 6, 0, 1536 },
		/* Zen 5 and later: 3072, under glibc's cap (2112 with FSRM) */
		{ NTM_VENDOR_AMD, 26, 0, 3072 },
		{ NTM_VENDOR_AMD, 27, 4096, 3072 },
		{ NTM_VENDOR_AMD, 26, 2112, 2112 },
		{ NTM_VENDOR_AMD, 26, 3073, 3072 },
		/* the family counts for AMD only */
		{ NTM_VENDOR_INTEL, 26, 0, 1536 },
	};
	/* ntm_memcpy_nt()'s short size: at least 768 from Zen 5 on */
	static const struct {
		enum ntm_isa isa;
		enum ntm_cpu_vendor vendor;
		unsigned family;
		size_t want;
	} shorts[] = {
		{ NTM_ISA_AVX512, NTM_VENDOR_AMD, 25, 256 },
		{ NTM_ISA_AVX2, NTM_VENDOR_AMD, 25, 512 },
		{ NTM_ISA_AVX512, NTM_VENDOR_AMD, 26, 768 },
		{ NTM_ISA_AVX2, NTM_VENDOR_AMD, 27, 768 },
		{ NTM_ISA_SSE2, NTM_VENDOR_AMD, 26, 1024 },
		{ NTM_ISA_GENERIC, NTM_VENDOR_AMD, 26, 256 },
		{ NTM_ISA_AVX512, NTM_VENDOR_INTEL, 26, 256 },
		{ NTM_ISA_AVX512, NTM_VENDOR_OTHER, 26, 256 },
	};

	(void)state;
	for (size_t i = 0; i < sizeof(thresholds) / sizeof(thresholds[0]); i++)
		assert_int_equal(ntm_nt_threshold_for(thresholds[i].vendor,
						      thresholds[i].family,
						      thresholds[i].rep_movsb),
				 thresholds[i].want);
#if defined(__x86_64__)
	for (size_t i = 0; i < sizeof(shorts) / sizeof(shorts[0]); i++)
		assert_int_equal(ntm_nt_short_for(shorts[i].isa, shorts[i].vendor,
						  shorts[i].family),
				 shorts[i].want);
#else
	/* aarch64's NEON (its level is SSE2's number): 256 whatever the CPU */
	(void)shorts;
	assert_int_equal(ntm_nt_short_for(NTM_ISA_NEON, NTM_VENDOR_OTHER, 0), 256);
	assert_int_equal(ntm_nt_short_for(NTM_ISA_GENERIC, NTM_VENDOR_OTHER, 0), 256);
#endif

#if defined(__x86_64__) && defined(__GLIBC__)
	assert_int_equal(ntm_glibc_rep_movsb_threshold(NTM_CPU_SSE2, NULL), 2048);
	assert_int_equal(ntm_glibc_rep_movsb_threshold(avx2, NULL), 4096);
	/* AVX2 without the OS saving YMM state: glibc's SSE2 copy */
	assert_int_equal(ntm_glibc_rep_movsb_threshold(avx2 & ~NTM_CPU_OS_YMM, NULL),
			 2048);
	assert_int_equal(ntm_glibc_rep_movsb_threshold(avx2 | NTM_CPU_FSRM, NULL),
			 2112);
	snprintf(tun, sizeof(tun), "%s=1000", key);
	assert_int_equal(ntm_glibc_rep_movsb_threshold(avx2, tun), 1000);
	/* glibc's minimum, 8 vectors: at it taken, under it ignored */
	snprintf(tun, sizeof(tun), "%s=256", key);
	assert_int_equal(ntm_glibc_rep_movsb_threshold(avx2, tun), 256);
	snprintf(tun, sizeof(tun), "%s=255", key);
	assert_int_equal(ntm_glibc_rep_movsb_threshold(avx2, tun), 4096);
	snprintf(tun, sizeof(tun), "%s=128", key);
	assert_int_equal(ntm_glibc_rep_movsb_threshold(NTM_CPU_SSE2, tun), 128);
	/* among others, in hex, and not a number */
	snprintf(tun, sizeof(tun), "glibc.malloc.check=3:%s=0x800:glibc.x=1", key);
	assert_int_equal(ntm_glibc_rep_movsb_threshold(avx2, tun), 2048);
	snprintf(tun, sizeof(tun), "%s=12q", key);
	assert_int_equal(ntm_glibc_rep_movsb_threshold(avx2, tun), 4096);
	snprintf(tun, sizeof(tun), "x%s=1000", key);
	assert_int_equal(ntm_glibc_rep_movsb_threshold(avx2, tun), 4096);
	assert_int_equal(ntm_glibc_rep_movsb_threshold(avx2, ""), 4096);
#else
	(void)avx2, (void)key, (void)tun;
	assert_int_equal(ntm_glibc_rep_movsb_threshold(0, NULL), 0);
#endif

	for (size_t i = 0; i < ntm_variant_count(); i++) {
		const struct ntm_variant *v = ntm_variant_at(i);

		assert_int_equal(ntm_nt_short_unaligned(v),
				 ntm_nt_short_for(v->isa, ntm_cpu_vendor(),
						  ntm_cpu_family()));
	}
	/* The table holds its variant's, and the entries' copy of it. */
	assert_int_equal(ntm_dispatch()->nt_short,
			 ntm_nt_short_unaligned(ntm_dispatch()->variant));
	assert_int_equal(ntm_bound.nt_short, ntm_dispatch()->nt_short);
	assert_int_equal(NTM_NT_THRESHOLD_DEFAULT,
			 ntm_nt_threshold_for(ntm_cpu_vendor(), ntm_cpu_family(),
					      ntm_glibc_rep_movsb_threshold(
						      ntm_cpu_features(),
						      getenv("GLIBC_TUNABLES"))));
}

/*
 * NTMEM_NT_THRESHOLD: sizes as the tool's options take them; anything else
 * is ignored (the default stands) and described, as an unknown ceiling is.
 */
static void test_env_nt_threshold(void **state)
{
	static const struct {
		const char *val;
		size_t want;
	} good[] = {
		{ "0", 0 }, { "1", 1 }, { "256", 256 }, { "1024", 1024 },
		{ "4k", 4096 }, { "4K", 4096 }, { "3m", 3u << 20 },
		{ "1g", (size_t)1 << 30 }, { "0k", 0 },
		{ "18446744073709551615", SIZE_MAX },
	};
	static const char *const bad[] = {
		"-1", "+5", "01", "0x10", "1.5k", "4kb", "4 ", " 4", "k", "abc",
		"1e3", "4q", "18446744073709551616", "17179869184g", "16777216t",
	};
	const size_t before = ntm_dispatch()->nt_threshold;
	struct ntm_env env;
	char want[96];

	(void)state;
	set_env("NTMEM_NT_THRESHOLD", NULL);
	ntm_env_read(&env);
	assert_int_equal(env.nt_threshold, NTM_NT_THRESHOLD_DEFAULT);
	assert_string_equal(env.bad, "");
	set_env("NTMEM_NT_THRESHOLD", "");
	ntm_env_read(&env);
	assert_int_equal(env.nt_threshold, NTM_NT_THRESHOLD_DEFAULT);
	assert_string_equal(env.bad, "");
	for (size_t i = 0; i < sizeof(good) / sizeof(*good); i++) {
		set_env("NTMEM_NT_THRESHOLD", good[i].val);
		ntm_env_read(&env);
		if (env.nt_threshold != good[i].want || env.bad[0])
			fail_msg("NTMEM_NT_THRESHOLD=%s: %zu, \"%s\"", good[i].val,
				 env.nt_threshold, env.bad);
	}
	for (size_t i = 0; i < sizeof(bad) / sizeof(*bad); i++) {
		set_env("NTMEM_NT_THRESHOLD", bad[i]);
		ntm_env_read(&env);
		snprintf(want, sizeof(want), "NTMEM_NT_THRESHOLD=%s ignored",
			 bad[i]);
		if (env.nt_threshold != NTM_NT_THRESHOLD_DEFAULT ||
		    strncmp(env.bad, want, strlen(want)) != 0 ||
		    strchr(env.bad, '\n'))
			fail_msg("NTMEM_NT_THRESHOLD=%s: %zu, \"%s\"", bad[i],
				 env.nt_threshold, env.bad);
	}
	/* with another ignored value: one line each */
	set_env("NTMEM_ISA", "bogus");
	set_env("NTMEM_NT_THRESHOLD", "12q");
	ntm_env_read(&env);
	assert_non_null(strstr(env.bad, "NTMEM_ISA=bogus ignored"));
	assert_non_null(strstr(env.bad, "\nNTMEM_NT_THRESHOLD=12q ignored"));
	set_env("NTMEM_ISA", NULL);
	set_env("NTMEM_NT_THRESHOLD", NULL);
	/* read once per process: the running threshold stands */
	assert_int_equal(ntm_dispatch()->nt_threshold, before);
}

/* --- the live choice, this CPU -------------------------------------------- */

/*
 * Runs first, before anything has triggered the one-time choice: threads
 * released together all make their first call into the library at once
 * (a copy, then the queries) and must all see the same, complete table.
 */
#define RACE_THREADS 8

static pthread_barrier_t race_barrier;

struct race {
	const struct ntm_variant *active;
	enum ntm_flush_insn flush;
	size_t line;
	unsigned char src[200], dst[200];
	bool copy_ok;
};

static void *race_thread(void *arg)
{
	struct race *r = arg;

	pthread_barrier_wait(&race_barrier);
	(ntm_memcpy_nt)(r->dst + 1, r->src + 3, 150);
	r->copy_ok = memcmp(r->dst + 1, r->src + 3, 150) == 0;
	r->active = ntm_variant_active();
	r->flush = ntm_flush_active();
	r->line = ntm_cache_line_size();
	return NULL;
}

static void test_first_use_threads(void **state)
{
	static struct race r[RACE_THREADS];
	pthread_t tid[RACE_THREADS];

	(void)state;
	/* nothing may have chosen yet, or this tests nothing */
	assert_null(__atomic_load_n(&ntm_dispatch_published,
				    __ATOMIC_ACQUIRE));
	assert_int_equal(pthread_barrier_init(&race_barrier, NULL,
					      RACE_THREADS), 0);
	for (int i = 0; i < RACE_THREADS; i++) {
		tu_fill_random(r[i].src, sizeof(r[i].src), 100 + i);
		tu_fill_random(r[i].dst, sizeof(r[i].dst), 200 + i);
		assert_int_equal(pthread_create(&tid[i], NULL, race_thread,
						&r[i]), 0);
	}
	for (int i = 0; i < RACE_THREADS; i++)
		assert_int_equal(pthread_join(tid[i], NULL), 0);
	pthread_barrier_destroy(&race_barrier);

	assert_non_null(ntm_dispatch_published);
	for (int i = 0; i < RACE_THREADS; i++) {
		assert_true(r[i].copy_ok);
		assert_non_null(r[i].active);
		assert_ptr_equal(r[i].active, ntm_variant_active());
		assert_int_equal(r[i].flush, ntm_flush_active());
		assert_int_equal(r[i].line, ntm_cache_line_size());
	}
}

/* Then: the choice is select(detected features, env ceiling). */
static void test_active_choice(void **state)
{
	struct ntm_env env;
	uint32_t f;

	(void)state;
	ntm_env_read(&env);
	f = ntm_cpu_features();
	assert_int_equal(f, ntm_cpu_detect());
	assert_int_equal(f & ~ALL_FEATURES, 0);
	assert_ptr_equal(ntm_variant_active(), ntm_variant_select(f, env.isa_cap));
	assert_int_equal(ntm_flush_active(), ntm_flush_select(f, env.flush_cap));
	assert_int_equal(ntm_dispatch()->nt_threshold, env.nt_threshold);
	assert_true(ntm_variant_supported(ntm_variant_active()));
	assert_int_equal(ntm_cache_line_size(), ntm_cpu_line_size());
	assert_true(ntm_cache_line_size() >= 8);
	assert_int_equal(ntm_cache_line_size() & (ntm_cache_line_size() - 1), 0);
	/* stable across calls */
	assert_int_equal(ntm_cpu_features(), f);
}

#if defined(__x86_64__)
#include <cpuid.h>

/*
 * The detected bits against independent probes: the compiler runtime's
 * __builtin_cpu_supports() (which, like ntmem, reports AVX/AVX-512 only when
 * the OS saves their state), and CPUID leaf 7 read here with bit numbers
 * taken from the Intel SDM.
 */
static void test_cpu_features_x86(void **state)
{
	uint32_t f = ntm_cpu_features();
	unsigned a = 0, b = 0, c = 0, d = 0;

	(void)state;
	__builtin_cpu_init();
	assert_int_equal(!!(f & NTM_CPU_SSE2), !!__builtin_cpu_supports("sse2"));
	assert_int_equal((f & NTM_CPU_AVX) && (f & NTM_CPU_OS_YMM),
			 !!__builtin_cpu_supports("avx"));
	assert_int_equal((f & NTM_CPU_AVX2) && (f & NTM_CPU_OS_YMM),
			 !!__builtin_cpu_supports("avx2"));
	assert_int_equal((f & NTM_CPU_AVX512F) && (f & NTM_CPU_OS_ZMM),
			 !!__builtin_cpu_supports("avx512f"));
	assert_int_equal((f & NTM_CPU_AVX512BW) && (f & NTM_CPU_OS_ZMM),
			 !!__builtin_cpu_supports("avx512bw"));
	/* ZMM state implies YMM state */
	if (f & NTM_CPU_OS_ZMM)
		assert_true(f & NTM_CPU_OS_YMM);

	assert_true(__get_cpuid(1, &a, &b, &c, &d));
	assert_int_equal(!!(f & NTM_CPU_CLFLUSH), !!(d & (1u << 19)));
	if (__get_cpuid_max(0, NULL) >= 7) {
		__cpuid_count(7, 0, a, b, c, d);
		assert_int_equal(!!(f & NTM_CPU_CLFLUSHOPT), !!(b & (1u << 23)));
		assert_int_equal(!!(f & NTM_CPU_CLWB), !!(b & (1u << 24)));
		assert_int_equal(!!(f & NTM_CPU_ERMS), !!(b & (1u << 9)));
		assert_int_equal(!!(f & NTM_CPU_MOVDIR64B), !!(c & (1u << 28)));
		assert_int_equal(!!(f & NTM_CPU_FSRM), !!(d & (1u << 4)));
	}
}
#endif

#if defined(__aarch64__)
#include <sys/auxv.h>

/*
 * The detected bits against the hwcaps read here, with the bit numbers of
 * Linux's arm64 uapi asm/hwcap.h (HWCAP_ASIMD 1, HWCAP_DCPOP 16,
 * HWCAP2_DCPODP 0).
 */
static void test_cpu_features_aarch64(void **state)
{
	uint32_t f = ntm_cpu_features();
	unsigned long hw = getauxval(AT_HWCAP), hw2 = getauxval(AT_HWCAP2);

	(void)state;
	assert_int_equal(!!(f & NTM_CPU_ASIMD), !!(hw & (1ul << 1)));
	assert_int_equal(!!(f & NTM_CPU_DCPOP), !!(hw & (1ul << 16)));
	assert_int_equal(!!(f & NTM_CPU_DCPODP), !!(hw2 & (1ul << 0)));
	assert_true(f & NTM_CPU_DC_CVAC);
	assert_int_equal(f & X86_FEATURES, 0);
	print_message("hwcaps: asimd %d dcpop %d dcpodp %d\n",
		      !!(f & NTM_CPU_ASIMD), !!(f & NTM_CPU_DCPOP),
		      !!(f & NTM_CPU_DCPODP));
}
#endif

/* Each write-back loop this CPU has: odd ranges, data unchanged. */
static void test_flush_impls(void **state)
{
	static const size_t offs[] = { 0, 1, 63, 64, 65, 4095 };
	static const size_t lens[] = { 0, 1, 63, 64, 65, 4096, 4097, 9000 };
	static const struct { enum ntm_flush_insn insn; uint32_t bit; } fl[] = {
		{ NTM_FLUSH_CLFLUSH, NTM_CPU_CLFLUSH },
		{ NTM_FLUSH_CLFLUSHOPT, NTM_CPU_CLFLUSHOPT },
		{ NTM_FLUSH_CLWB, NTM_CPU_CLWB },
		{ NTM_FLUSH_DC_CVAC, NTM_CPU_DC_CVAC },
		{ NTM_FLUSH_DC_CVAP, NTM_CPU_DCPOP },
		{ NTM_FLUSH_DC_CVADP, NTM_CPU_DCPODP },
	};
	size_t len = 4 * tu_page_size(), line = ntm_cache_line_size();
	unsigned char *buf = tu_map_fenced(len), *ref = malloc(len);
	uint32_t f = ntm_cpu_features();
	int ran = 0;

	(void)state;
	assert_non_null(buf);
	assert_non_null(ref);
	tu_fill_random(ref, len, 77);
	memcpy(buf, ref, len);
	assert_null(ntm_flush_impl(NTM_FLUSH_NONE));
	for (size_t k = 0; k < sizeof(fl) / sizeof(fl[0]); k++) {
		ntm_flush_fn fn = ntm_flush_impl(fl[k].insn);

#if defined(__x86_64__)
		if (fl[k].insn <= NTM_FLUSH_CLWB) {
			assert_non_null(fn);
			for (size_t j = 0; j < k; j++)
				assert_true(fn != ntm_flush_impl(fl[j].insn));
		}
#elif defined(__aarch64__)
		if (fl[k].insn >= NTM_FLUSH_DC_CVAC) {
			assert_non_null(fn);
			for (size_t j = 0; j < k; j++)
				assert_true(fn != ntm_flush_impl(fl[j].insn));
		} else {
			assert_null(fn);
		}
		/*
		 * NTMEM_FLUSH caps what runs: an emulator that advertises
		 * DCPoP without running DC CVAP (qemu-user) is run with
		 * NTMEM_FLUSH=cvac, so a loop above the active one is skipped.
		 */
		if (fl[k].insn > ntm_flush_active())
			continue;
#endif
		if (!fn || !(f & fl[k].bit))
			continue;
		for (size_t i = 0; i < sizeof(offs) / sizeof(offs[0]); i++)
			for (size_t j = 0; j < sizeof(lens) / sizeof(lens[0]); j++) {
				fn(buf + offs[i], lens[j], line);
				/* ending exactly at the PROT_NONE fence */
				fn(buf + len - lens[j], lens[j], line);
			}
		ran++;
	}
	assert_memory_equal(buf, ref, len);
	print_message("%d write-back loops exercised\n", ran);
	tu_unmap_fenced(buf, len);
	free(ref);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		/* first: nothing else may have triggered the choice yet */
		cmocka_unit_test(test_first_use_threads),
		cmocka_unit_test(test_active_choice),
		cmocka_unit_test(test_variant_table),
		cmocka_unit_test(test_variant_find),
		cmocka_unit_test(test_variant_supported),
		cmocka_unit_test(test_select_no_features),
#if defined(__x86_64__)
		cmocka_unit_test(test_select_x86),
		cmocka_unit_test(test_cpu_features_x86),
#endif
#if defined(__aarch64__)
		cmocka_unit_test(test_select_aarch64),
		cmocka_unit_test(test_cpu_features_aarch64),
#endif
		cmocka_unit_test(test_select_exhaustive),
		cmocka_unit_test(test_flush_select),
		cmocka_unit_test(test_feature_names),
		cmocka_unit_test(test_flush_names),
		cmocka_unit_test(test_env_parsers),
		cmocka_unit_test(test_env_read),
		cmocka_unit_test(test_env_nt_threshold),
		cmocka_unit_test(test_copy_policy_rules),
		cmocka_unit_test(test_flush_impls),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
