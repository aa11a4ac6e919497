// SPDX-License-Identifier: MIT
/*
 * test_copy_inline.c - the constant-size inline paths of ntmem/inline.h.
 *
 * For every N of NTM_FIXED_SIZES, three spellings are called with N as a
 * literal constant (the X-macro pastes the number): the named inline
 * ntm_memcpy_nt_N(d, s), and the front doors ntm_memcpy_nt(d, s, N) and
 * ntm_memcpy_flush(d, s, N). Each is compared with memcpy() at destination
 * offsets 0..31 from a 64-byte boundary (every class mod 16 and mod 8 twice:
 * the 16-byte MOVNTDQ path, the 8-byte MOVNTI path, the 4-byte store for
 * N = 4, and the unaligned fallback) and source offsets {0, 1, 5, 8, 15}
 * (aligned, odd, 4-aligned, 8-aligned, and one byte short of 16), with 64
 * canary bytes on each side of the destination.
 *
 * When the linker supports --wrap, the out-of-line ntm_memcpy_nt() and
 * ntm_memcpy_flush() are wrapped with call counters (NTM_TEST_WRAP), which
 * shows which path ran: an aligned destination must cost no call at all,
 * an unaligned one none with ntm_memcpy_nt()'s contract (an ordinary copy
 * in place) and exactly one call to ntm_memcpy_flush() with its, and a size that
 * is not constant or not a fixed size exactly one call to the matching
 * out-of-line function, unless the variable-size path takes it
 * (test_variable: a run-time size of every length up to 144 bytes).
 * Without optimisation (__OPTIMIZE__ undefined), __builtin_constant_p() is
 * false and the front doors always call out.
 *
 * tests/unit/meson.build builds this file with the default flags, with
 * -mavx512f (the header must not depend on the ISA flags) and at -O0, and
 * once more against the recorder build (NTM_RECORD, copy_inline_record),
 * where the drain test runs: a fence leaves no trace in the bytes, so only
 * the recorder can see that ntm_drain() executed one.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <ntmem.h>
#include "../lib/testutil.h"
#ifdef NTM_RECORD
#include <ntmem/check.h>
#include "../lib/record_util.h"
#endif

#define GUARD 64
#define DST_OFFS 32
#define REGION (GUARD + 64 + NTM_INLINE_MAX + 64 + GUARD)

static const size_t src_offs[] = { 0, 1, 5, 8, 15 };
#define NSRC_OFFS (sizeof(src_offs) / sizeof(src_offs[0]))

static unsigned char *dst_region, *canary, *src, *nsrc;

#ifdef NTM_TEST_WRAP
static unsigned long calls_nt, calls_flush;

void *__real_ntm_memcpy_nt(void *d, const void *s, size_t n);
void *__real_ntm_memcpy_flush(void *d, const void *s, size_t n);
void *__wrap_ntm_memcpy_nt(void *d, const void *s, size_t n);
void *__wrap_ntm_memcpy_flush(void *d, const void *s, size_t n);

void *__wrap_ntm_memcpy_nt(void *d, const void *s, size_t n)
{
	calls_nt++;
	return __real_ntm_memcpy_nt(d, s, n);
}

void *__wrap_ntm_memcpy_flush(void *d, const void *s, size_t n)
{
	calls_flush++;
	return __real_ntm_memcpy_flush(d, s, n);
}
#endif

enum form { NAMED, DOOR_NT, DOOR_FLUSH };
static const char *const form_names[] = { "ntm_memcpy_nt_N", "ntm_memcpy_nt",
					  "ntm_memcpy_flush" };

typedef void *(*fixed_fn)(void *dst, const void *src);

/* Three wrappers per size; inside each, N is a literal. */
#define DEFINE_FORMS(N)                                              \
	static void *named_##N(void *d, const void *s)               \
	{                                                            \
		return ntm_memcpy_nt_##N(d, s);                      \
	}                                                            \
	static void *door_nt_##N(void *d, const void *s)             \
	{                                                            \
		return ntm_memcpy_nt(d, s, N);                       \
	}                                                            \
	static void *door_flush_##N(void *d, const void *s)          \
	{                                                            \
		return ntm_memcpy_flush(d, s, N);                    \
	}
NTM_FIXED_SIZES(DEFINE_FORMS)
#undef DEFINE_FORMS

static int setup(void **state)
{
	(void)state;
	dst_region = tu_map_fenced(REGION);
	canary = malloc(REGION);
	src = tu_map_fenced(2 * NTM_INLINE_MAX + 64);
	nsrc = malloc(2 * NTM_INLINE_MAX + 64);
	if (!dst_region || !canary || !src || !nsrc)
		return -1;
	tu_fill_random(canary, REGION, 0xca11ab1e);
	memcpy(dst_region, canary, REGION);
	tu_fill_random(src, 2 * NTM_INLINE_MAX + 64, 0x5eed);
	for (size_t i = 0; i < 2 * NTM_INLINE_MAX + 64; i++)
		nsrc[i] = (unsigned char)~src[i];
	return 0;
}

static int teardown(void **state)
{
	(void)state;
	tu_unmap_fenced(dst_region, REGION);
	tu_unmap_fenced(src, 2 * NTM_INLINE_MAX + 64);
	free(canary);
	free(nsrc);
	return 0;
}

/* Per test: a failed test may leave copied bytes in the region. */
static int reset_region(void **state)
{
	(void)state;
	memcpy(dst_region, canary, REGION);
	return 0;
}

/*
 * Does the fixed path store this (size, dst) without calling out? Without
 * NT stores (arch/generic.h) it is memcpy() plus ntm_flush(), never a call
 * to the copy functions.
 */
static bool inline_ok(size_t n, uintptr_t d)
{
	if (!NTM_ARCH_HAS_NT_STORES)
		return true;
	return n == 4 ? (d & 3) == 0 : (d & 7) == 0;
}

static void check_one(size_t n, enum form form, fixed_fn fn, size_t doff,
		      size_t soff)
{
	/* 64-byte aligned base, so doff is the offset from a line boundary */
	unsigned char *d = dst_region + GUARD + 64 + doff;
	const unsigned char *s = src + soff;
	const unsigned char *ref = canary + (d - dst_region);
	void *r;

	memcpy(d, nsrc + soff, n);
#ifdef NTM_TEST_WRAP
	calls_nt = calls_flush = 0;
#endif
	r = fn(d, s);
	if (r != d)
		fail_msg("%s N=%zu dst%%64=%zu: returned %p, not %p",
			 form_names[form], n, doff, r, (void *)d);
	if (memcmp(d, s, n) != 0) {
		size_t i = tu_first_diff(d, s, n);

		fail_msg("%s N=%zu dst%%64=%zu src%%64=%zu: byte %zu is 0x%02x, "
			 "expected 0x%02x", form_names[form], n, doff, soff, i,
			 d[i], s[i]);
	}
	if (memcmp(d - GUARD, ref - GUARD, GUARD) != 0 ||
	    memcmp(d + n, ref + n, GUARD) != 0)
		fail_msg("%s N=%zu dst%%64=%zu src%%64=%zu: guard bytes written",
			 form_names[form], n, doff, soff);
#ifdef NTM_TEST_WRAP
	{
		unsigned long want_nt = 0, want_flush = 0;
		bool folded = form == NAMED;

#ifdef __OPTIMIZE__
		folded = true;
#endif
		/*
		 * Out of line: the function the caller named when not folded
		 * (nt for the named ntm_memcpy_nt_N and the nt door, flush
		 * for the flush door), and the flush door's destination the
		 * stores cannot take. The nt forms copy such a destination
		 * inline with ordinary stores, as ntm_memcpy_nt() would.
		 */
		if (!folded) {
			if (form == DOOR_FLUSH)
				want_flush = 1;
			else
				want_nt = 1;
		} else if (!inline_ok(n, (uintptr_t)d) && form == DOOR_FLUSH) {
			want_flush = 1;
		}
		if (calls_nt != want_nt || calls_flush != want_flush)
			fail_msg("%s N=%zu dst%%64=%zu: %lu calls to "
				 "ntm_memcpy_nt and %lu to ntm_memcpy_flush, "
				 "expected %lu and %lu", form_names[form], n,
				 doff, calls_nt, calls_flush, want_nt,
				 want_flush);
	}
#else
	(void)inline_ok;
#endif
	memcpy(d, ref, n);
}

static void run_size(size_t n, fixed_fn named, fixed_fn door_nt,
		     fixed_fn door_flush)
{
	const fixed_fn fns[] = { named, door_nt, door_flush };

	assert_true(NTM_FIXED_SIZE_OK(n));
	for (int form = NAMED; form <= DOOR_FLUSH; form++)
		for (size_t doff = 0; doff < DST_OFFS; doff++)
			for (size_t k = 0; k < NSRC_OFFS; k++)
				check_one(n, form, fns[form], doff, src_offs[k]);
	assert_memory_equal(dst_region, canary, REGION);
}

#define DEFINE_TEST(N)                                                  \
	static void test_fixed_##N(void **state)                        \
	{                                                               \
		(void)state;                                            \
		run_size(N, named_##N, door_nt_##N, door_flush_##N);    \
	}
NTM_FIXED_SIZES(DEFINE_TEST)
#undef DEFINE_TEST

/*
 * Sizes the fixed path must not take: not a constant, or a constant that is
 * not 4 or a multiple of 8 up to NTM_INLINE_MAX. All go out of line.
 */
static void test_not_fixed(void **state)
{
	static const size_t odd[] = { 0, 1, 2, 3, 5, 7, 12, 60, 100, 127,
				      129, 136 };
	volatile size_t vn = 64;
	unsigned char *d = dst_region + GUARD + 64;

	(void)state;
	for (size_t i = 0; i < sizeof(odd) / sizeof(odd[0]); i++)
		assert_false(NTM_FIXED_SIZE_OK(odd[i]));
	assert_true(NTM_FIXED_SIZE_OK(4));
	assert_true(NTM_FIXED_SIZE_OK(NTM_INLINE_MAX));
	assert_false(NTM_FIXED_SIZE_OK(NTM_INLINE_MAX + 8));

#ifdef NTM_TEST_WRAP
#define EXPECT_CALLS(nt, fl)                                               \
	do {                                                               \
		if (calls_nt != (nt) || calls_flush != (fl))               \
			fail_msg("line %d: %lu/%lu calls, expected %d/%d", \
				 __LINE__, calls_nt, calls_flush, (nt),    \
				 (fl));                                    \
		calls_nt = calls_flush = 0;                                \
	} while (0)
#else
#define EXPECT_CALLS(nt, fl) do { } while (0)
#endif

#ifdef NTM_TEST_WRAP
	calls_nt = calls_flush = 0;
#endif
	/* a run-time size the variable-size path does not take */
	assert_ptr_equal(ntm_memcpy_nt(d + 8, src, vn), d + 8);
	EXPECT_CALLS(1, 0);
	assert_memory_equal(d + 8, src, 64);
	assert_ptr_equal(ntm_memcpy_flush(d + 1, src + 3, vn), d + 1);
	EXPECT_CALLS(0, 1);
	assert_memory_equal(d + 1, src + 3, 64);

	/* constants without a fixed path */
	assert_ptr_equal(ntm_memcpy_nt(d, src, 60), d);
	EXPECT_CALLS(1, 0);
	assert_memory_equal(d, src, 60);
	assert_ptr_equal(ntm_memcpy_flush(d, src + 1, 136), d);
	EXPECT_CALLS(0, 1);
	assert_memory_equal(d, src + 1, 136);
	assert_ptr_equal(ntm_memcpy_nt(d + 8, src + 2, 12), d + 8);
	EXPECT_CALLS(1, 0);
	assert_memory_equal(d + 8, src + 2, 12);
	assert_ptr_equal(ntm_memcpy_nt(d, src, 0), d);
	EXPECT_CALLS(1, 0);
#undef EXPECT_CALLS

	memcpy(dst_region, canary, REGION);
}

/*
 * The front doors with a run-time size: every size from 0 to
 * NTM_INLINE_MAX + 16 at every destination offset 0..31 and each source
 * offset, against memcpy(), with the guards. The variable-size path
 * (NTM_VAR_SIZE_OK: a 16-byte aligned destination, a multiple of 8 from 8
 * to NTM_INLINE_VAR_MAX) must call nothing in an optimised build with
 * non-temporal stores; every other copy calls its door's function once
 * (a short unaligned one too: the library's own ordinary copy measured
 * faster than a call of glibc's memcpy() from the caller).
 */
static void *var_nt(void *d, const void *s, size_t n)
{
	return ntm_memcpy_nt(d, s, n);
}

static void *var_flush(void *d, const void *s, size_t n)
{
	return ntm_memcpy_flush(d, s, n);
}

static void check_variable(size_t n, bool flush, size_t doff, size_t soff)
{
	unsigned char *d = dst_region + GUARD + 64 + doff;
	const unsigned char *s = src + soff;
	const unsigned char *ref = canary + (d - dst_region);
	const char *name = flush ? "ntm_memcpy_flush" : "ntm_memcpy_nt";
	/* volatile: the compiler must not see the size */
	void *(*volatile fn)(void *, const void *, size_t) =
		flush ? var_flush : var_nt;
	volatile size_t vn = n;
	bool inl = NTM_VAR_SIZE_OK(d, n);

	assert_int_equal(inl, doff % 16 == 0 && n % 8 == 0 && n >= 8 &&
				      n <= NTM_INLINE_VAR_MAX);
	memcpy(d, nsrc + soff, n);
#ifdef NTM_TEST_WRAP
	calls_nt = calls_flush = 0;
#endif
	if (fn(d, s, vn) != d)
		fail_msg("%s n=%zu dst%%64=%zu: wrong return", name, n, doff);
	if (memcmp(d, s, n) != 0) {
		size_t i = tu_first_diff(d, s, n);

		fail_msg("%s n=%zu dst%%64=%zu src%%64=%zu: byte %zu is 0x%02x, "
			 "expected 0x%02x", name, n, doff, soff, i, d[i], s[i]);
	}
	if (memcmp(d - GUARD, ref - GUARD, GUARD) != 0 ||
	    memcmp(d + n, ref + n, GUARD) != 0)
		fail_msg("%s n=%zu dst%%64=%zu src%%64=%zu: guard bytes written",
			 name, n, doff, soff);
#ifdef NTM_TEST_WRAP
	{
		bool called = true;

#ifdef __OPTIMIZE__
		called = !(inl && NTM_ARCH_HAS_NT_STORES);
#endif
		if (calls_nt != (called && !flush) || calls_flush != (called && flush))
			fail_msg("%s n=%zu dst%%64=%zu: %lu calls to ntm_memcpy_nt "
				 "and %lu to ntm_memcpy_flush, expected %d", name,
				 n, doff, calls_nt, calls_flush, called);
	}
#endif
	memcpy(d, ref, n);
}

static void test_variable(void **state)
{
	(void)state;
	assert_int_equal(NTM_INLINE_VAR_MAX % 8, 0);
	assert_true(NTM_INLINE_VAR_MAX <= NTM_INLINE_MAX);
	for (size_t n = 0; n <= NTM_INLINE_MAX + 16; n++)
		for (int flush = 0; flush < 2; flush++)
			for (size_t doff = 0; doff < DST_OFFS; doff++)
				for (size_t k = 0; k < NSRC_OFFS; k++)
					check_variable(n, flush, doff,
						       src_offs[k]);
	assert_memory_equal(dst_region, canary, REGION);
}

#ifdef NTM_RECORD
/*
 * The fence of both spellings of ntm_drain(), the inline front door
 * (ntm_arch_drain()) and the exported function, and of ntm_persist(), as
 * the recorder sees it. The inline 64-byte copy leaves every unit of its
 * line NT (WB on an architecture without NT stores), not durable, until
 * this thread fences: a drain that lost its fence leaves them so, and
 * rec_expect_durable() fails.
 */
static void test_drain(void **state)
{
	unsigned char *d = dst_region + GUARD + 64;	/* one whole line */

	(void)state;
	ntm_check_untrack(d);	/* left tracked by a failed run */
	assert_int_equal(ntm_check_track(d, 64), 0);

	ntm_check_reset();
	ntm_memcpy_nt_64(d, src);
	rec_expect_pending(d, 64, "ntm_memcpy_nt_64");
	ntm_drain();
	rec_expect_durable(d, 64, "ntm_memcpy_nt_64, the inline ntm_drain()");

	ntm_check_reset();
	ntm_memcpy_nt_64(d, nsrc);
	rec_expect_pending(d, 64, "ntm_memcpy_nt_64 again");
	(ntm_drain)();
	rec_expect_durable(d, 64, "ntm_memcpy_nt_64, the exported ntm_drain()");
	assert_memory_equal(d, nsrc, 64);

	/* Ordinary stores, reported to the recorder: written back, fenced. */
	ntm_check_reset();
	memcpy(d, src, 64);
	ntm_check_store(d, 64);
	ntm_persist(d, 64);
	rec_expect_durable(d, 64, "stores, ntm_persist()");
	assert_memory_equal(d, src, 64);

	ntm_check_untrack(d);
	memcpy(dst_region, canary, REGION);
}
#endif

int main(void)
{
#define TEST_ENTRY(N) cmocka_unit_test_setup(test_fixed_##N, reset_region),
	const struct CMUnitTest tests[] = {
		NTM_FIXED_SIZES(TEST_ENTRY)
		cmocka_unit_test_setup(test_not_fixed, reset_region),
		cmocka_unit_test_setup(test_variable, reset_region),
#ifdef NTM_RECORD
		cmocka_unit_test_setup(test_drain, reset_region),
#endif
	};
#undef TEST_ENTRY

#ifdef NTM_RECORD
	/* The model's domain: ADR's, where a fence makes NT stores durable. */
	if (ntm_check_set_domain(NTM_PERSIST_MEMORY_CONTROLLER))
		return 1;
	ntm_check_start();
#endif
	return cmocka_run_group_tests(tests, setup, teardown);
}
