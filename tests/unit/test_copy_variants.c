// SPDX-License-Identifier: MIT
/*
 * test_copy_variants.c - every out-of-line copy variant against memcpy() and
 * memset(), plus the exported dispatched entry points and the write-back
 * functions.
 *
 * Full mode (no argument): each variant of ntm_variant_at() that this CPU
 * runs has its memcpy_nt, memcpy_flush and memset_flush functions called
 * directly; then the dispatched ntm_memcpy_nt() & co. and ntm_flush(),
 * ntm_persist(), ntm_drain().
 * Dispatch mode ("--dispatch"): only the dispatched part, plus a check that
 * the variant and write-back instruction the library chose match what the
 * environment asked for. tests/unit/meson.build runs it under several NTMEM_ISA
 * and NTMEM_FLUSH values and says what it requested through
 * NTMEM_TEST_EXPECT_ISA / NTMEM_TEST_EXPECT_FLUSH ("best" = no ceiling);
 * NTMEM_TEST_EXPECT_VERBOSE lists '|'-separated strings the NTMEM_VERBOSE
 * report must contain. Without NTMEM_VERBOSE the library must print
 * nothing at all.
 *
 * Sizes: 0..1024 every size (each head/body/tail split of every vector
 * width, the 4x-vector body loop entered 0..4 times for AVX-512), then
 * 2^k - 1, 2^k, 2^k + 1 up to 1 MiB (page and many-page copies, tails of
 * 63 / 0 / 1 bytes after a long body).
 *
 * Offsets: the source and destination sit at 0..63 bytes past a 64-byte
 * (cache line, AVX-512 vector) boundary. Sizes 0..160 take all 64 x 64
 * pairs: that is every size up to 2.5 lines, so every combination of head
 * length, tail length and source misalignment there is, and every size of
 * the struct-sized path (multiples of 8 up to NTM_INLINE_MAX into an
 * 8-byte aligned slot) next to its near misses. Larger sizes only
 * repeat the body loop, so they take a subset of destination offsets that
 * still hits every alignment class of the head logic in copy_body.h:
 *   - 1-3 ordinary head bytes up to 4-byte alignment: offset mod 4 is
 *     0, 1, 2, 3 (all of 0..8 are in the set);
 *   - the single 4-byte MOVNTI up to 8-byte alignment, taken exactly when
 *     offset mod 8 is 1..4: present for every 8-byte lane below;
 *   - then 0..VEC/8 - 1 8-byte MOVNTIs up to VEC alignment: the offset
 *     rounded up to 8 takes every value 0, 8, ..., 56 mod 64, each both
 *     with the 4-byte store (8k - 7) and without it (8k - 1, 8k), which
 *     covers VEC = 16, 32 and 64 at once (mod 16 and mod 32 classes are
 *     projections of the mod 64 ones).
 * The source offset only changes how the unaligned loads straddle lines, so
 * it rotates through {0,1,3,4,7,8,15,16,31,32,33,63} (every misalignment
 * class mod 4, 8, 16, 32, 64 and both sides of each boundary) as the size
 * changes: 4 source offsets per destination offset up to 4 KiB, 1 above.
 * The tail class is the end address mod 64 = (offset + size) mod 64, and
 * consecutive sizes walk it through every value for each offset. memset_flush
 * takes the same destination offsets, its value rotating through 0x00,
 * 0xa5, 0x1ff and -0x7f (the last two must be truncated to a byte).
 *
 * Checks per call: return value; the destination equals the source (it was
 * pre-filled with the complement of the source, so every byte must have
 * been written); GUARD bytes of canary on both sides untouched. The
 * destination is placed so that its right guard ends less than 128 bytes
 * before a PROT_NONE page, and an "edge" pass (sizes 0..300 and 1023..64K)
 * puts source and destination flush against PROT_NONE pages on either
 * side, so an over- or under-run of a load or a store faults.
 */
#define _GNU_SOURCE
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include <ntmem.h>
#include "copy_policy.h"
#include "../lib/testutil.h"

#define GUARD 128		/* canary bytes checked on each side of dst */
#define OFFS 64			/* offsets 0..63 from a 64-byte boundary */
#define MAX_N (((size_t)1 << 20) + 1)
#define FULL_PAIRS_MAX 160	/* all 64 x 64 offset pairs up to here */
#define MID_MAX 4096		/* 4 source offsets per dst offset up to here */
#define EDGE_MAX 300		/* every size of the PROT_NONE edge pass */

typedef void *(*copy_fn)(void *dst, const void *src, size_t n);
typedef void *(*set_fn)(void *dst, int c, size_t n);

/* memset values: a zero byte, a pattern, and ints that must be truncated */
static const int set_vals[] = { 0x00, 0xa5, 0x1ff, -0x7f };
static const unsigned char set_bytes[] = { 0x00, 0xa5, 0xff, 0x81 };
#define NVALS (sizeof(set_vals) / sizeof(set_vals[0]))

static const unsigned char dst_subset[] = {
	0, 1, 2, 3, 4, 5, 6, 7, 8,
	9, 15, 16, 17, 23, 24, 25, 31, 32,
	33, 39, 40, 41, 47, 48, 49, 55, 56, 57, 63,
};
static const unsigned char src_subset[] = {
	0, 1, 3, 4, 7, 8, 15, 16, 31, 32, 33, 63,
};
#define NDST (sizeof(dst_subset) / sizeof(dst_subset[0]))
#define NSRC (sizeof(src_subset) / sizeof(src_subset[0]))

/*
 * One mapping, carved into regions separated by PROT_NONE pages:
 *   src     pseudo-random source bytes
 *   nsrc    ~src, byte for byte: pre-fills the destination
 *   canary  what dst holds wherever no copy is in progress
 *   fill[]  memset references, one per set_vals[] entry
 *   dst     the destination window
 */
static struct {
	unsigned char *map;
	size_t map_len, src_len, dst_len;
	unsigned char *src, *src_end, *nsrc, *canary, *fill[NVALS];
	unsigned char *dst, *dst_end;
} A;

static size_t sizes[1100];
static size_t nsizes;

enum op { OP_MEMCPY_NT, OP_MEMCPY_FLUSH, OP_MEMSET_FLUSH };
static const char *const op_names[] = { "memcpy_nt", "memcpy_flush",
					"memset_flush" };

/* What one cmocka test exercises. */
struct tcase {
	const struct ntm_variant *v;	/* NULL: the dispatched entry points */
	enum op op;
	char name[64];
};

static void *disp_memcpy_nt(void *d, const void *s, size_t n)
{
	return (ntm_memcpy_nt)(d, s, n);
}

static void *disp_memcpy_flush(void *d, const void *s, size_t n)
{
	return (ntm_memcpy_flush)(d, s, n);
}

static void *disp_memset_flush(void *d, int c, size_t n)
{
	return (ntm_memset_flush)(d, c, n);
}

/* --- arena -------------------------------------------------------------- */

static int arena_setup(void **state)
{
	size_t pg = tu_page_size();
	size_t fill_len = tu_round_up(MAX_N, pg);
	unsigned char *p;

	(void)state;
	A.src_len = tu_round_up(MAX_N + 2 * OFFS, pg);
	A.dst_len = tu_round_up(MAX_N + 2 * GUARD + 2 * OFFS, pg);
	/* fence, src, fence, nsrc, fence, canary, fence, fills.., dst, fence */
	A.map_len = 2 * (A.src_len + pg) + (A.dst_len + pg) +
		    NVALS * (fill_len + pg) + (A.dst_len + pg) + pg;
	A.map = mmap(NULL, A.map_len, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS,
		     -1, 0);
	if (A.map == MAP_FAILED)
		return -1;

	p = A.map + pg;
#define CARVE(ptr, len)                                                   \
	do {                                                              \
		if (mprotect(p, (len), PROT_READ | PROT_WRITE) != 0)      \
			return -1;                                        \
		(ptr) = p;                                                \
		p += (len) + pg;                                          \
	} while (0)
	CARVE(A.src, A.src_len);
	CARVE(A.nsrc, A.src_len);
	CARVE(A.canary, A.dst_len);
	for (size_t i = 0; i < NVALS; i++)
		CARVE(A.fill[i], fill_len);
	CARVE(A.dst, A.dst_len);
#undef CARVE
	A.src_end = A.src + A.src_len;
	A.dst_end = A.dst + A.dst_len;

	tu_fill_random(A.src, A.src_len, 0x6e746d656d737263ull);
	for (size_t i = 0; i < A.src_len; i++)
		A.nsrc[i] = (unsigned char)~A.src[i];
	tu_fill_random(A.canary, A.dst_len, 0x63616e6172792121ull);
	memcpy(A.dst, A.canary, A.dst_len);
	for (size_t i = 0; i < NVALS; i++)
		memset(A.fill[i], set_bytes[i], fill_len);

	/* 0..1024, then 2^k - 1, 2^k, 2^k + 1 up to 1 MiB + 1 */
	nsizes = 0;
	for (size_t n = 0; n <= 1024; n++)
		sizes[nsizes++] = n;
	for (size_t p2 = 1024; p2 <= ((size_t)1 << 20); p2 <<= 1)
		for (size_t n = p2 - 1; n <= p2 + 1; n++)
			if (n > 1024)
				sizes[nsizes++] = n;
	return 0;
}

static int arena_teardown(void **state)
{
	(void)state;
	if (A.map && A.map != MAP_FAILED)
		munmap(A.map, A.map_len);
	return 0;
}

/* Per test: a failed test may leave copied bytes in the window. */
static int reset_window(void **state)
{
	(void)state;
	memcpy(A.dst, A.canary, A.dst_len);
	return 0;
}

/* Destination @doff bytes past a 64-byte boundary, right guard near the end */
static unsigned char *place_dst(size_t n, size_t doff)
{
	uintptr_t p = (uintptr_t)A.dst_end - GUARD - n - (OFFS - 1);

	return (unsigned char *)(p & ~(uintptr_t)(OFFS - 1)) + doff;
}

/* --- one checked call --------------------------------------------------- */

static void check_guards(const char *what, const char *fn,
			 const unsigned char *d, size_t n)
{
	size_t left = (size_t)(d - A.dst) < GUARD ? (size_t)(d - A.dst) : GUARD;
	size_t after = (size_t)(A.dst_end - (d + n));
	size_t right = after < GUARD ? after : GUARD;
	const unsigned char *ref = A.canary + (d - A.dst);
	size_t i;

	if (memcmp(d - left, ref - left, left) != 0) {
		i = tu_first_diff(d - left, ref - left, left);
		fail_msg("%s %s n=%zu dst%%64=%zu: wrote %zu bytes BEFORE dst",
			 what, fn, n, (size_t)((uintptr_t)d & 63), left - i);
	}
	if (memcmp(d + n, ref + n, right) != 0) {
		i = tu_first_diff(d + n, ref + n, right);
		fail_msg("%s %s n=%zu dst%%64=%zu: wrote byte %zu AFTER the end",
			 what, fn, n, (size_t)((uintptr_t)d & 63), i);
	}
}

static void check_copy(const char *what, const char *fn, copy_fn f,
		       unsigned char *d, const unsigned char *s, size_t n)
{
	void *r;

	/* Every byte differs from its final value, so each must be stored. */
	memcpy(d, A.nsrc + (s - A.src), n);
	r = f(d, s, n);
	if (r != d)
		fail_msg("%s %s n=%zu: returned %p, not dst %p", what, fn, n,
			 r, (void *)d);
	if (memcmp(d, s, n) != 0) {
		size_t i = tu_first_diff(d, s, n);

		fail_msg("%s %s n=%zu dst%%64=%zu src%%64=%zu: byte %zu is "
			 "0x%02x, expected 0x%02x",
			 what, fn, n, (size_t)((uintptr_t)d & 63),
			 (size_t)((uintptr_t)s & 63), i, d[i], s[i]);
	}
	check_guards(what, fn, d, n);
	memcpy(d, A.canary + (d - A.dst), n);
}

static void check_set(const char *what, const char *fn, set_fn f,
		      unsigned char *d, size_t n, size_t vi)
{
	void *r;

	memset(d, (unsigned char)~set_bytes[vi], n);
	r = f(d, set_vals[vi], n);
	if (r != d)
		fail_msg("%s %s n=%zu: returned %p, not dst %p", what, fn, n,
			 r, (void *)d);
	if (memcmp(d, A.fill[vi], n) != 0) {
		size_t i = tu_first_diff(d, A.fill[vi], n);

		fail_msg("%s %s(c=%d) n=%zu dst%%64=%zu: byte %zu is 0x%02x, "
			 "expected 0x%02x",
			 what, fn, set_vals[vi], n, (size_t)((uintptr_t)d & 63),
			 i, d[i], set_bytes[vi]);
	}
	check_guards(what, fn, d, n);
	memcpy(d, A.canary + (d - A.dst), n);
}

/* The source must never be written: compare it with its complement. */
static void check_source_intact(const char *what)
{
	for (size_t i = 0; i < A.src_len; i++)
		if ((unsigned char)(A.src[i] ^ A.nsrc[i]) != 0xff)
			fail_msg("%s: source byte %zu was modified", what, i);
}

/* --- sweeps ------------------------------------------------------------- */

/*
 * @light: the dispatched entry points run a variant tested in full (its
 * struct-sized path inlined into them, or through the table) plus the
 * copy policy, so they take one source offset per destination offset and
 * only four destination offsets above MID_MAX.
 */
static void sweep_copy(const char *what, const char *fn, copy_fn f,
		       bool light)
{
	static const unsigned char big_dst[] = { 0, 1, 33, 63 };

	for (size_t k = 0; k < nsizes; k++) {
		size_t n = sizes[k];

		if (n <= FULL_PAIRS_MAX && !light) {
			for (size_t doff = 0; doff < OFFS; doff++)
				for (size_t soff = 0; soff < OFFS; soff++)
					check_copy(what, fn, f,
						   place_dst(n, doff),
						   A.src + soff, n);
		} else if (n <= MID_MAX || !light) {
			size_t per = n <= MID_MAX && !light ? 4 : 1;

			for (size_t di = 0; di < NDST; di++)
				for (size_t j = 0; j < per; j++) {
					size_t soff = src_subset[
						(di + n + 3 * j) % NSRC];

					check_copy(what, fn, f,
						   place_dst(n, dst_subset[di]),
						   A.src + soff, n);
				}
		} else {
			for (size_t di = 0; di < sizeof(big_dst); di++)
				check_copy(what, fn, f, place_dst(n, big_dst[di]),
					   A.src + src_subset[(di + n) % NSRC],
					   n);
		}
	}
}

static void sweep_set(const char *what, const char *fn, set_fn f, bool light)
{
	for (size_t k = 0; k < nsizes; k++) {
		size_t n = sizes[k];

		if (n <= FULL_PAIRS_MAX && !light) {
			for (size_t doff = 0; doff < OFFS; doff++)
				check_set(what, fn, f, place_dst(n, doff), n,
					  (n + doff) % NVALS);
		} else {
			for (size_t di = 0; di < NDST; di++)
				check_set(what, fn, f,
					  place_dst(n, dst_subset[di]), n,
					  (n + di) % NVALS);
		}
	}
}

/*
 * Edge pass: source and destination flush against PROT_NONE pages, so
 * touching one byte outside [ptr, ptr + n) faults. Sizes 0..EDGE_MAX and
 * the large ones up to 64 KiB.
 */
static void edge_copy(const char *what, const char *fn, copy_fn f)
{
	for (size_t k = 0; k < nsizes; k++) {
		size_t n = sizes[k];

		if (n > EDGE_MAX && (n < 1023 || n > 65537))
			continue;
		/* dst ends at the fence, src starts right after one */
		check_copy(what, fn, f, A.dst_end - n, A.src, n);
		/* dst starts right after a fence, src ends at one */
		check_copy(what, fn, f, A.dst, A.src_end - n, n);
		/* both end at a fence */
		check_copy(what, fn, f, A.dst_end - n, A.src_end - n, n);
	}
}

static void edge_set(const char *what, const char *fn, set_fn f)
{
	for (size_t k = 0; k < nsizes; k++) {
		size_t n = sizes[k];

		if (n > EDGE_MAX && (n < 1023 || n > 65537))
			continue;
		check_set(what, fn, f, A.dst_end - n, n, n % NVALS);
		check_set(what, fn, f, A.dst, n, (n + 1) % NVALS);
	}
}

static void run_case(const struct tcase *tc, copy_fn cpy, copy_fn flush,
		     set_fn set, bool light)
{
	const char *what = tc->v ? ntm_variant_name(tc->v) : "dispatched";
	const char *fn = op_names[tc->op];

	switch (tc->op) {
	case OP_MEMCPY_NT:
		sweep_copy(what, fn, cpy, light);
		edge_copy(what, fn, cpy);
		break;
	case OP_MEMCPY_FLUSH:
		sweep_copy(what, fn, flush, light);
		edge_copy(what, fn, flush);
		break;
	case OP_MEMSET_FLUSH:
		sweep_set(what, fn, set, light);
		edge_set(what, fn, set);
		break;
	}
	check_source_intact(what);
	/* The whole destination window is back to the canary image. */
	if (memcmp(A.dst, A.canary, A.dst_len) != 0)
		fail_msg("%s %s: destination window differs from canary at %zu",
			 what, fn, tu_first_diff(A.dst, A.canary, A.dst_len));
}

/* --- tests -------------------------------------------------------------- */

static void test_variant(void **state)
{
	const struct tcase *tc = *state;
	const struct ntm_variant *v = tc->v;

	assert_non_null(ntm_variant_memcpy_nt(v));
	assert_non_null(ntm_variant_memcpy_flush(v));
	assert_non_null(ntm_variant_memset_flush(v));
	if (!ntm_variant_supported(v)) {
		print_message("variant %s not supported by this CPU\n",
			      ntm_variant_name(v));
		skip();
	}
	run_case(tc, ntm_variant_memcpy_nt(v), ntm_variant_memcpy_flush(v),
		 ntm_variant_memset_flush(v), false);
}

static void test_dispatched(void **state)
{
	const struct tcase *tc = *state;
	const struct ntm_variant *act = ntm_variant_active();
	const struct ntm_dispatch *d = ntm_dispatch();

	/* The entry points go through the active variant's table. */
	assert_non_null(act);
	assert_ptr_equal(d->variant, act);
	assert_ptr_equal(d->memcpy_nt, ntm_variant_memcpy_nt(act));
	assert_ptr_equal(d->memcpy_flush, ntm_variant_memcpy_flush(act));
	assert_ptr_equal(d->memset_flush, ntm_variant_memset_flush(act));
	assert_true(ntm_variant_supported(act));
	run_case(tc, disp_memcpy_nt, disp_memcpy_flush, disp_memset_flush, true);
	/*
	 * The first call bound the table's function for the entries the
	 * exported names resolve to (src/copy.c): they run a variant's copy
	 * directly only when it is this one.
	 */
	switch (tc->op) {
	case OP_MEMCPY_NT:
		assert_ptr_equal(__atomic_load_n(&ntm_bound.memcpy_nt,
						 __ATOMIC_RELAXED), d->memcpy_nt);
		break;
	case OP_MEMCPY_FLUSH:
		assert_ptr_equal(__atomic_load_n(&ntm_bound.memcpy_flush,
						 __ATOMIC_RELAXED), d->memcpy_flush);
		break;
	case OP_MEMSET_FLUSH:
		assert_ptr_equal(__atomic_load_n(&ntm_bound.memset_flush,
						 __ATOMIC_RELAXED), d->memset_flush);
		break;
	}
}

/* Write-backs and fences: odd ranges, fences, read-only memory. */
static void test_flush_persist_drain(void **state)
{
	static const size_t offs[] = { 0, 1, 31, 63, 64, 65, 4095 };
	static const size_t lens[] = { 0, 1, 2, 63, 64, 65, 127, 128, 129,
				       4095, 4096, 4097, 65537 };
	size_t line = ntm_cache_line_size();
	size_t pg = tu_page_size();
	unsigned char *ro;

	(void)state;
	/* The flush loops step by the line size and round down with it. */
	assert_true(line >= 8 && line <= 4096 && (line & (line - 1)) == 0);

	for (size_t i = 0; i < sizeof(offs) / sizeof(offs[0]); i++) {
		for (size_t j = 0; j < sizeof(lens) / sizeof(lens[0]); j++) {
			unsigned char *p = A.dst + offs[i];

			ntm_flush(p, lens[j]);
			ntm_persist(p + 1, lens[j]);
			(ntm_drain)();
			/* ranges that end exactly at the PROT_NONE fence */
			ntm_flush(A.dst_end - lens[j], lens[j]);
			ntm_persist(A.dst_end - lens[j], lens[j]);
		}
	}
	/* n == 0 touches nothing, wherever p points */
	ntm_flush(A.dst_end, 0);
	ntm_persist(A.dst_end, 0);
	ntm_flush(NULL, 0);
	ntm_persist(NULL, 0);
	ntm_drain();
	if (memcmp(A.dst, A.canary, A.dst_len) != 0)
		fail_msg("flush changed data at byte %zu",
			 tu_first_diff(A.dst, A.canary, A.dst_len));

	/* const void *: a read-only mapping may be written back */
	ro = mmap(NULL, 2 * pg, PROT_READ | PROT_WRITE,
		  MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	assert_true(ro != MAP_FAILED);
	memcpy(ro, A.canary, 2 * pg);
	assert_int_equal(mprotect(ro, 2 * pg, PROT_READ), 0);
	ntm_flush(ro + 3, 2 * pg - 3);
	ntm_persist(ro, 2 * pg);
	ntm_drain();
	assert_memory_equal(ro, A.canary, 2 * pg);
	munmap(ro, 2 * pg);
}

/* --- the choice the environment asked for -------------------------------- */

static char verbose_out[1024];
static bool verbose_captured;

/*
 * Trigger the dispatcher's one-time choice with stderr redirected, so the
 * test can check what NTMEM_VERBOSE printed (and that nothing is printed
 * without it). Must run before anything else calls into the library.
 */
static void capture_first_dispatch(void)
{
	FILE *tmp = tmpfile();
	int saved;
	size_t got;

	if (!tmp)
		return;
	fflush(stderr);
	saved = dup(2);
	if (saved < 0 || dup2(fileno(tmp), 2) < 0) {
		fclose(tmp);
		return;
	}
	(void)ntm_variant_active();
	fflush(stderr);
	dup2(saved, 2);
	close(saved);
	rewind(tmp);
	got = fread(verbose_out, 1, sizeof(verbose_out) - 1, tmp);
	verbose_out[got] = '\0';
	fclose(tmp);
	verbose_captured = true;
}

static const struct { const char *name; int level; } isa_levels[] = {
	{ "generic", NTM_ISA_GENERIC }, { "sse2", NTM_ISA_SSE2 },
	{ "avx2", NTM_ISA_AVX2 },	{ "avx512", NTM_ISA_AVX512 },
	{ "neon", NTM_ISA_NEON },
};
static const struct { const char *name; int level; } flush_levels[] = {
	{ "none", NTM_FLUSH_NONE },
	{ "clflush", NTM_FLUSH_CLFLUSH },
	{ "clflushopt", NTM_FLUSH_CLFLUSHOPT },
	{ "clwb", NTM_FLUSH_CLWB },
	{ "cvac", NTM_FLUSH_DC_CVAC },
	{ "cvap", NTM_FLUSH_DC_CVAP },
	{ "cvadp", NTM_FLUSH_DC_CVADP },
};

/* "best" -> -1 (no ceiling); a known name -> its level; else fail. */
#define LEVEL_OF(table, want)                                               \
	({                                                                  \
		int lvl_ = -2;                                              \
		if (strcmp((want), "best") == 0)                            \
			lvl_ = -1;                                          \
		for (size_t i_ = 0; i_ < sizeof(table) / sizeof(table[0]); \
		     i_++)                                                  \
			if (strcmp((want), table[i_].name) == 0)            \
				lvl_ = table[i_].level;                     \
		if (lvl_ == -2)                                             \
			fail_msg("unknown expectation '%s'", (want));       \
		lvl_;                                                       \
	})

/* Highest supported variant at or below @cap, from the public API only. */
static const struct ntm_variant *expected_variant(int cap)
{
	const struct ntm_variant *best = NULL, *v;

	for (size_t i = 0; (v = ntm_variant_at(i)); i++) {
		if (!ntm_variant_supported(v))
			continue;
		if (cap >= 0 && (int)ntm_variant_isa(v) > cap)
			continue;
		if (!best || ntm_variant_isa(v) > ntm_variant_isa(best))
			best = v;
	}
	return best;
}

static enum ntm_flush_insn expected_flush(uint32_t f, int cap)
{
	if ((cap < 0 || cap >= NTM_FLUSH_CLWB) && (f & NTM_CPU_CLWB))
		return NTM_FLUSH_CLWB;
	if ((cap < 0 || cap >= NTM_FLUSH_CLFLUSHOPT) && (f & NTM_CPU_CLFLUSHOPT))
		return NTM_FLUSH_CLFLUSHOPT;
	if ((cap < 0 || cap >= NTM_FLUSH_CLFLUSH) && (f & NTM_CPU_CLFLUSH))
		return NTM_FLUSH_CLFLUSH;
	/*
	 * aarch64 (its CPUs have none of the bits above): a ceiling of
	 * x86-64's instructions is none, and cvadp only when it is named.
	 */
	if (cap == NTM_FLUSH_DC_CVADP && (f & NTM_CPU_DCPODP))
		return NTM_FLUSH_DC_CVADP;
	if (cap != NTM_FLUSH_NONE &&
	    (cap < NTM_FLUSH_DC_CVAC || cap >= NTM_FLUSH_DC_CVAP) &&
	    (f & NTM_CPU_DCPOP))
		return NTM_FLUSH_DC_CVAP;
	if (cap != NTM_FLUSH_NONE && (f & NTM_CPU_DC_CVAC))
		return NTM_FLUSH_DC_CVAC;
	return NTM_FLUSH_NONE;
}

static void test_env_choice(void **state)
{
	const char *want_isa = getenv("NTMEM_TEST_EXPECT_ISA");
	const char *want_flush = getenv("NTMEM_TEST_EXPECT_FLUSH");
	const char *want_verbose = getenv("NTMEM_TEST_EXPECT_VERBOSE");
	const char *verbose = getenv("NTMEM_VERBOSE");
	const struct ntm_variant *act = ntm_variant_active();
	uint32_t f = ntm_cpu_features();

	(void)state;
	print_message("active variant %s, write-back %s, features 0x%x\n",
		      ntm_variant_name(act),
		      ntm_flush_insn_name(ntm_flush_active()), f);

	if (want_isa) {
		int cap = LEVEL_OF(isa_levels, want_isa);
		const struct ntm_variant *exp = ntm_variant_select(f, cap);

		assert_non_null(exp);
		assert_ptr_equal(exp, expected_variant(cap));
		if (act != exp)
			fail_msg("NTMEM_ISA ceiling %s: active variant %s, "
				 "expected %s", want_isa, ntm_variant_name(act),
				 ntm_variant_name(exp));
		assert_string_equal(ntm_variant_name(act), ntm_variant_name(exp));
		/* fails if the ceiling in the environment was ignored */
		if (cap >= 0 && (int)ntm_variant_isa(act) > cap)
			fail_msg("variant %s is above the ceiling %s",
				 ntm_variant_name(act), want_isa);
	}
	if (want_flush) {
		int cap = LEVEL_OF(flush_levels, want_flush);
		enum ntm_flush_insn exp = ntm_flush_select(f, cap);

		assert_int_equal(exp, expected_flush(f, cap));
		if (ntm_flush_active() != exp)
			fail_msg("NTMEM_FLUSH ceiling %s: active %s, expected %s",
				 want_flush,
				 ntm_flush_insn_name(ntm_flush_active()),
				 ntm_flush_insn_name(exp));
		if (cap >= 0 && (int)ntm_flush_active() > cap)
			fail_msg("write-back %s is above the ceiling %s",
				 ntm_flush_insn_name(ntm_flush_active()),
				 want_flush);
	}

	if (!verbose_captured)
		return;
	if (want_verbose) {
		/* '|'-separated substrings, each must appear */
		char buf[256], *tok, *save = NULL;

		snprintf(buf, sizeof(buf), "%s", want_verbose);
		for (tok = strtok_r(buf, "|", &save); tok;
		     tok = strtok_r(NULL, "|", &save))
			if (!strstr(verbose_out, tok))
				fail_msg("NTMEM_VERBOSE output lacks '%s': '%s'",
					 tok, verbose_out);
		if (!strstr(verbose_out, ntm_variant_name(act)))
			fail_msg("NTMEM_VERBOSE output does not name the "
				 "variant %s: '%s'", ntm_variant_name(act),
				 verbose_out);
	} else if (!verbose || !*verbose || strcmp(verbose, "0") == 0) {
		/* The library never prints unless NTMEM_VERBOSE=1. */
		if (verbose_out[0])
			fail_msg("library printed without NTMEM_VERBOSE: '%s'",
				 verbose_out);
	}
	if (!want_isa && !want_flush && !want_verbose)
		skip();
}

/* --- main --------------------------------------------------------------- */

int main(int argc, char **argv)
{
	static struct tcase cases[3 * 16 + 3];
	static struct CMUnitTest tests[3 * 16 + 8];
	bool dispatch_only = argc > 1 && strcmp(argv[1], "--dispatch") == 0;
	size_t nt = 0, nc = 0, count = ntm_variant_count();

	if (argc > 1 && !dispatch_only) {
		fprintf(stderr, "usage: %s [--dispatch]\n", argv[0]);
		return 2;
	}
	capture_first_dispatch();

	tests[nt++] = (struct CMUnitTest){ .name = "env_choice",
					   .test_func = test_env_choice };
	for (size_t i = 0; !dispatch_only && i < count && i < 16; i++) {
		for (int op = OP_MEMCPY_NT; op <= OP_MEMSET_FLUSH; op++) {
			struct tcase *tc = &cases[nc++];

			tc->v = ntm_variant_at(i);
			tc->op = op;
			snprintf(tc->name, sizeof(tc->name), "%s.%s",
				 ntm_variant_name(tc->v), op_names[op]);
			tests[nt++] = (struct CMUnitTest){
				.name = tc->name, .test_func = test_variant,
				.setup_func = reset_window,
				.initial_state = tc };
		}
	}
	for (int op = OP_MEMCPY_NT; op <= OP_MEMSET_FLUSH; op++) {
		struct tcase *tc = &cases[nc++];

		tc->v = NULL;
		tc->op = op;
		snprintf(tc->name, sizeof(tc->name), "dispatched.ntm_%s",
			 op_names[op]);
		tests[nt++] = (struct CMUnitTest){ .name = tc->name,
						   .test_func = test_dispatched,
						   .setup_func = reset_window,
						   .initial_state = tc };
	}
	tests[nt++] = (struct CMUnitTest){ .name = "flush_persist_drain",
					   .test_func = test_flush_persist_drain,
					   .setup_func = reset_window };

	return _cmocka_run_group_tests(dispatch_only ? "copy_dispatched"
						     : "copy_variants",
				       tests, nt, arena_setup, arena_teardown);
}
