// SPDX-License-Identifier: MIT
/*
 * test_record_copy.c - the copy contracts of ntmem/copy.h checked by the
 * recorder (ntmem/check.h), not by comparing bytes: a byte comparison
 * cannot see a write-back or a fence that is missing.
 *
 * Built with NTM_RECORD=1 against libntmem-check (ntmem_check_dep), so
 * every store, write-back and fence of the library and of the inline
 * paths compiled here reports to the shadow model. For every variant this
 * CPU runs and for the dispatched entry points:
 *   ntm_memcpy_flush(), ntm_memset_flush() no unit of the range DIRTY; after
 *                                        ntm_drain() all CLEAN or DURABLE
 *   ntm_memcpy_nt()                      DIRTY only where copy.h allows it
 *                                        (the whole copy when dst is not
 *                                        8-byte aligned and n below the
 *                                        variant's short size, which is
 *                                        then an ordinary copy, or the
 *                                        generic variant; else the 1-3
 *                                        head and tail bytes); nothing else
 *                                        pending after ntm_drain()
 * and for all of them no unit wholly outside the range changes state.
 * ntm_flush() writes back each line of the range once and no other line;
 * ntm_persist() leaves a stored range durable. The constant-size inline
 * paths (every NTM_FIXED_SIZES size, 4/8/16/32-byte aligned and not) leave
 * no unit dirty where they store non-temporally and ntm_memcpy_flush()'s
 * leaves none anywhere; ntm_memcpy_nt()'s copy an unaligned destination
 * with ordinary stores, which its contract allows (expect_nt()). The
 * front doors' variable-size path (a run-time size of 0 to 136 bytes)
 * leaves no unit dirty where it takes the copy, and the dispatched
 * contract holds elsewhere. meson builds this file again with -mavx for
 * the 32-byte stores.
 *
 * Sizes and destination offsets (the alignment classes of the head, the
 * 8-byte and vector steps and the tail all repeat within a 64-byte line,
 * and a copy's shape repeats with n every 4 vectors, 256 bytes at most):
 *   n 0..319      every offset 0..63: all short unaligned copies, the
 *                 256-byte boundary, and one more line of sizes past it;
 *   n 320..1024   every n at offsets 0, 1, 3, 4, 8, 63 and two that walk
 *                 with n ((13n) % 64 and (29n + 5) % 64), so each offset
 *                 meets many tail lengths; a full sweep here took 2.5x as
 *                 long and the recorder is what a test pays for;
 *   then samples to 1 MiB around the vector loop and page sizes at
 *   offsets 0, 1, 3, 4, 7, 8, 32 and 63.
 *
 * Arguments: test-name globs; only the tests matching one of them run
 * (meson runs "copy_dispatched flush_persist" again under each NTMEM_FLUSH
 * and NTMEM_ISA=generic).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <fnmatch.h>
#include <pthread.h>

#include <cmocka.h>

#include <ntmem.h>
#include <ntmem/check.h>
#include <ntmem/introspect.h>

#include "../lib/copy_contract.h"
#include "../lib/testutil.h"

#define UNIT NTM_CHECK_UNIT
#define LINE NTM_CHECK_LINE
/* Lines of untouched, tracked bytes on each side of every destination. */
#define GUARD (2 * LINE)
#define SMALL_MAX 1024
/* Sizes below this are checked at every destination offset. */
#define FULL_SWEEP_MAX 320
#define LARGE_MAX ((size_t)1 << 20)
/*
 * ntmem/copy.h: ntm_memcpy_nt() into an unaligned destination below this
 * is an ordinary copy and may be left dirty whole; the active variant's
 * vector store width and the CPU decide it (tu_nt_short_unaligned()).
 */
static size_t nt_short_unaligned(void)
{
	return tu_nt_short_unaligned(ntm_variant_isa(ntm_variant_active()));
}

typedef void *(*copy_fn)(void *, const void *, size_t);
typedef void *(*set_fn)(void *, int, size_t);

struct target {
	char name[32];
	copy_fn nt, flush;
	set_fn set;
	bool generic;		/* no NT stores: ntm_memcpy_nt() may leave all */
};

static struct target targets[8];
static size_t ntargets;
static unsigned char *arena;	/* GUARD + 64 + LARGE_MAX + GUARD bytes */
static unsigned char *srcbuf;	/* LARGE_MAX + 64 random bytes */
static size_t arena_len;

static uintptr_t down(uintptr_t a, size_t to)
{
	return a & ~(uintptr_t)(to - 1);
}

static uintptr_t up(uintptr_t a, size_t to)
{
	return down(a + to - 1, to);
}

/* The tracked window for copies of up to @n bytes: [arena, +len). */
static size_t window(size_t n)
{
	return up(GUARD + LINE + n + GUARD, LINE);
}

static void track(size_t n)
{
	ntm_check_untrack(arena);	/* left tracked by a failed test */
	assert_int_equal(ntm_check_track(arena, window(n)), 0);
}

static void untrack(void)
{
	ntm_check_untrack(arena);
}

static struct ntm_check_counts query(uintptr_t lo, uintptr_t hi)
{
	struct ntm_check_counts c;

	assert_int_equal(ntm_check_query((const void *)lo, hi - lo, &c), 0);
	return c;
}

/* Units wholly outside [d, d+n) in the window of @win bytes: all CLEAN. */
static bool outside_clean(const unsigned char *d, size_t n, size_t win,
			  const char **why)
{
	uintptr_t lo = down((uintptr_t)d, UNIT);
	uintptr_t hi = up((uintptr_t)d + n, UNIT);
	uintptr_t end = (uintptr_t)arena + win;
	struct ntm_check_counts c;

	c = query((uintptr_t)arena, lo);
	if (c.units[NTM_CHECK_CLEAN] != (lo - (uintptr_t)arena) / UNIT) {
		*why = "a unit before the range changed state";
		return false;
	}
	if (hi < end) {
		c = query(hi, end);
		if (c.units[NTM_CHECK_CLEAN] != (end - hi) / UNIT) {
			*why = "a unit after the range changed state";
			return false;
		}
	}
	return true;
}

#define FAIL(t, what, n, off, msg)                                          \
	fail_msg("%s %s n=%zu dst offset %u: %s", (t)->name, (what), (n),     \
		 (unsigned)(off), (msg))

/* After a copy that promises no dirty line: the checks and the drain. */
static void expect_flushed(const struct target *t, const char *what,
			   unsigned char *d, size_t n, unsigned off, size_t win)
{
	const char *why;

	if (n && !ntm_check_not_dirty(d, n))
		FAIL(t, what, n, off, ntm_check_message());
	if (!outside_clean(d, n, win, &why))
		FAIL(t, what, n, off, why);
	(ntm_drain)();
	if (n && !ntm_check_durable(d, n))
		FAIL(t, what, n, off, ntm_check_message());
}

/* ntm_memcpy_nt(): DIRTY only where ntmem/copy.h allows it. */
static void expect_nt(const struct target *t, unsigned char *d, size_t n,
		      unsigned off, size_t win)
{
	uintptr_t a = (uintptr_t)d;
	size_t head = (size_t)(-a & 3), tail;
	uintptr_t lo, hi;
	const char *why;
	struct ntm_check_counts c;

	if (!outside_clean(d, n, win, &why))
		FAIL(t, "memcpy_nt", n, off, why);
	if (!n)
		return;
	if (!t->generic && (a & 7) && n < nt_short_unaligned() &&
	    query(down(a, UNIT), up(a + n, UNIT)).units[NTM_CHECK_NT])
		FAIL(t, "memcpy_nt", n, off,
		     "non-temporal stores in a short unaligned copy");
	if (!t->generic && !((a & 7) && n < nt_short_unaligned())) {
		if (head > n)
			head = n;
		tail = (n - head) & 3;
		/* The units holding the ordinary head and tail bytes may stay. */
		lo = head ? up(a + head, UNIT) : a;
		hi = tail ? down(a + n - tail, UNIT) : a + n;
		if (lo < hi && !ntm_check_not_dirty((void *)lo, hi - lo))
			FAIL(t, "memcpy_nt", n, off, ntm_check_message());
	}
	(ntm_drain)();
	c = query(down(a, UNIT), up(a + n, UNIT));
	if (c.units[NTM_CHECK_WB] || c.units[NTM_CHECK_NT])
		FAIL(t, "memcpy_nt then drain", n, off,
		     "units still pending after the fence");
}

static void expect_bytes(const struct target *t, const char *what,
			 const unsigned char *d, const unsigned char *want,
			 size_t n, unsigned off)
{
	if (memcmp(d, want, n))
		FAIL(t, what, n, off, "wrong bytes");
}

static void check_case(const struct target *t, size_t n, unsigned off,
		       size_t win)
{
	unsigned char *d = arena + GUARD + off;
	const unsigned char *s = srcbuf + ((off * 5 + n) & 63);
	int c = (int)(n * 7 + off) & 0xff;

	ntm_check_reset();
	t->flush(d, s, n);
	expect_bytes(t, "memcpy_flush", d, s, n, off);
	expect_flushed(t, "memcpy_flush", d, n, off, win);

	ntm_check_reset();
	t->set(d, c, n);
	for (size_t i = 0; i < n; i++)
		if (d[i] != (unsigned char)c)
			FAIL(t, "memset_flush", n, off, "wrong bytes");
	expect_flushed(t, "memset_flush", d, n, off, win);

	ntm_check_reset();
	t->nt(d, s, n);
	expect_bytes(t, "memcpy_nt", d, s, n, off);
	expect_nt(t, d, n, off, win);
}

static const size_t large_sizes[] = {
	1025, 1087, 1536 + 3, 2047, 2048, 4093, 4096 + 5, 8191,
	65536 + 17, 262144 - 1, LARGE_MAX,
};
static const unsigned large_offsets[] = { 0, 1, 3, 4, 7, 8, 32, 63 };

static void test_copy(void **state)
{
	const struct target *t = *state;

	for (size_t n = 0; n <= SMALL_MAX; n++) {
		track(n);
		if (n < FULL_SWEEP_MAX) {
			for (unsigned off = 0; off < LINE; off++)
				check_case(t, n, off, window(n));
		} else {
			const unsigned offs[] = {
				0, 1, 3, 4, 8, 63, (unsigned)(13 * n) % 64,
				(unsigned)(29 * n + 5) % 64,
			};

			for (size_t k = 0; k < sizeof(offs) / sizeof(*offs); k++)
				check_case(t, n, offs[k], window(n));
		}
		untrack();
	}
	for (size_t i = 0; i < sizeof(large_sizes) / sizeof(*large_sizes); i++) {
		size_t n = large_sizes[i];

		track(n);
		for (size_t k = 0; k < sizeof(large_offsets) / sizeof(*large_offsets); k++)
			check_case(t, n, large_offsets[k], window(n));
		untrack();
	}
}

/* ntm_flush(): every line of the range written back once, no other. */
static void flush_case(size_t n, unsigned off, size_t win)
{
	static const struct target t = { .name = "ntm_flush" };
	unsigned char *d = arena + GUARD + off;
	uintptr_t lo = down((uintptr_t)d, LINE), hi = up((uintptr_t)d + n, LINE);
	uintptr_t end = (uintptr_t)arena + win;
	struct ntm_check_counts c;

	ntm_check_reset();
	ntm_flush(d, n);
	if (n) {
		c = query(lo, hi);
		if (c.lines_written_back != c.lines || c.writebacks != c.lines)
			FAIL(&t, "flush", n, off,
			     "not every line of the range written back once");
	}
	c = query((uintptr_t)arena, lo);
	if (c.writebacks)
		FAIL(&t, "flush", n, off, "a line before the range written back");
	if (hi < end && query(hi, end).writebacks)
		FAIL(&t, "flush", n, off, "a line after the range written back");

	/* ntm_persist() of a stored range: durable, and only it changed. */
	ntm_check_reset();
	ntm_check_store(d, n);
	ntm_persist(d, n);
	if (n && !ntm_check_durable(d, n))
		FAIL(&t, "persist", n, off, ntm_check_message());
	if (!ntm_check_not_dirty(arena, win))
		FAIL(&t, "persist", n, off, ntm_check_message());
}

static void test_flush_persist(void **state)
{
	(void)state;
	for (size_t n = 0; n <= SMALL_MAX; n++) {
		track(n);
		for (unsigned off = 0; off < LINE; off++)
			flush_case(n, off, window(n));
		untrack();
	}
	track(LARGE_MAX);
	for (size_t k = 0; k < sizeof(large_offsets) / sizeof(*large_offsets); k++)
		flush_case(LARGE_MAX, large_offsets[k], window(LARGE_MAX));
	untrack();
}

/*
 * The drain records a fence: NT stores become durable only after it. The
 * checks call the library's (ntm_drain)(), not the header's inline front
 * door, so deleting the fence in src/copy.c fails them.
 */
static void test_drain_needed(void **state)
{
	unsigned char *d = arena + GUARD;

	(void)state;
	track(4096);
	ntm_check_reset();
	(ntm_memcpy_nt)(d, srcbuf, 4096);
	assert_true(ntm_check_not_dirty(d, 4096));
	assert_false(ntm_check_durable(d, 4096));
	(ntm_drain)();
	assert_true(ntm_check_durable(d, 4096));
	/* A write-back alone is not durable either. */
	ntm_check_store(d, 100);
	ntm_flush(d, 100);
	assert_false(ntm_check_durable(d, 100));
	ntm_drain();	/* the inline front door: ntm_arch_drain() */
	assert_true(ntm_check_durable(d, 100));
	untrack();
}

/* Another thread's fence does not make this thread's NT stores durable. */
static void *other_fence(void *arg)
{
	(void)arg;
	(ntm_drain)();
	return NULL;
}

static void test_fence_owner(void **state)
{
	unsigned char *d = arena + GUARD;
	pthread_t th;

	(void)state;
	track(256);
	ntm_check_reset();
	(ntm_memcpy_nt)(d, srcbuf, 256);
	assert_int_equal(pthread_create(&th, NULL, other_fence, NULL), 0);
	assert_int_equal(pthread_join(th, NULL), 0);
	assert_false(ntm_check_durable(d, 256));
	(ntm_drain)();
	assert_true(ntm_check_durable(d, 256));
	untrack();
}

/*
 * The exported entry points resolve to the best variant for the CPU when
 * the library is loaded (src/copy.c) and check on each call that the
 * dispatch table chose it. Under NTMEM_ISA=generic it did not: copies
 * through ntm_memcpy_nt() and ntm_memcpy_flush(), struct-sized and not,
 * must then be the generic variant's ordinary stores (left dirty, or
 * written back), where every other variant's are non-temporal.
 */
/*
 * What a non-temporal store leaves in the model: NT on x86-64. On aarch64
 * STNP is only a hint, recorded as an ordinary store that the copy writes
 * back (ntmem/arch/aarch64.h): the unit is WB there.
 */
#if defined(__aarch64__)
#define NT_STATE NTM_CHECK_WB
#else
#define NT_STATE NTM_CHECK_NT
#endif

static void test_dispatched_caps(void **state)
{
	static const size_t sizes[] = { 64, 96, 4096 };
	static const struct target t = { .name = "dispatched" };
	bool generic = ntm_variant_isa(ntm_variant_active()) == NTM_ISA_GENERIC;
	unsigned char *d = arena + GUARD;	/* 64-byte aligned */
	struct ntm_check_counts c;

	(void)state;
	track(4096);
	for (size_t i = 0; i < sizeof(sizes) / sizeof(*sizes); i++) {
		size_t n = sizes[i], units = n / UNIT;

		ntm_check_reset();
		(ntm_memcpy_nt)(d, srcbuf, n);
		expect_bytes(&t, "memcpy_nt", d, srcbuf, n, 0);
		c = query((uintptr_t)d, (uintptr_t)d + n);
		if (c.units[generic ? NTM_CHECK_DIRTY : NT_STATE] != units)
			FAIL(&t, "memcpy_nt", n, 0, generic ?
			     "not the generic variant's ordinary stores" :
			     "not non-temporal stores");
		(ntm_drain)();

		ntm_check_reset();
		(ntm_memcpy_flush)(d, srcbuf, n);
		expect_bytes(&t, "memcpy_flush", d, srcbuf, n, 0);
		c = query((uintptr_t)d, (uintptr_t)d + n);
		if (c.units[generic ? NTM_CHECK_WB : NT_STATE] != units)
			FAIL(&t, "memcpy_flush", n, 0, generic ?
			     "not the generic variant's stores written back" :
			     "not non-temporal stores");
		(ntm_drain)();
	}
	untrack();
}

/* NTMEM_NT_THRESHOLD as the meson runs set it: a plain number, or unset. */
static size_t threshold_from_env(void)
{
	const char *v = getenv("NTMEM_NT_THRESHOLD");
	char *end;
	unsigned long long t;

	if (!v || !*v) {
		/* the CPU's default, as the library derived it (copy_policy.h) */
		struct ntm_env_info env;

		assert_int_equal(ntm_introspect_env(&env, sizeof(env)), 0);
		return env.nt_threshold_default;
	}
	t = strtoull(v, &end, 10);
	if (*end)
		fail_msg("NTMEM_NT_THRESHOLD=%s: the test takes a plain number", v);
	return (size_t)t;
}

/* The units of [lo, hi) in the NT state; none in an empty range. */
static size_t nt_units(uintptr_t lo, uintptr_t hi)
{
	return lo < hi ? query(lo, hi).units[NTM_CHECK_NT] : 0;
}

static void threshold_case(size_t n, unsigned off, size_t threshold)
{
	static const struct target t = { .name = "ntm_memcpy_flush" };
	unsigned char *d = arena + GUARD + off;
	uintptr_t a = (uintptr_t)d;
	bool cached = (off & 7) && n < threshold;
	/*
	 * The NT path into an 8-byte aligned destination stores the 4-byte
	 * words between the ordinary head and tail bytes; a unit it stores
	 * whole is NT, if there is one. Into an unaligned one it stores only
	 * the whole lines non-temporally, as PMDK does: the partial head and
	 * tail lines go through the cache and are written back (a partial
	 * line's NT stores each cost a partial write).
	 */
	uintptr_t nt_lo = up(a, 4) < a + n ? up(a, 4) : a + n;
	uintptr_t nt_hi = nt_lo + ((a + n - nt_lo) & ~(uintptr_t)3);
	uintptr_t lines_lo = up(a, LINE), lines_hi = down(a + n, LINE);
	bool whole_line = lines_lo < lines_hi;
	bool nt_word = (off & 7) ? whole_line : up(nt_lo, UNIT) + UNIT <= nt_hi;
	struct ntm_check_counts c;

	ntm_check_reset();
	(ntm_memcpy_flush)(d, srcbuf, n);
	expect_bytes(&t, "threshold", d, srcbuf, n, off);
	c = query(down(a, UNIT), up(a + n, UNIT));
	if (c.units[NTM_CHECK_DIRTY])
		FAIL(&t, "threshold", n, off, "a unit left dirty");
	if (cached && c.units[NTM_CHECK_NT])
		FAIL(&t, "below the threshold", n, off,
		     "non-temporal stores instead of written-back ones");
	if (cached && c.lines_written_back != c.lines)
		FAIL(&t, "below the threshold", n, off,
		     "a line of the copy not written back");
	if (!cached && nt_word && !c.units[NT_STATE])
		FAIL(&t, "from the threshold", n, off,
		     "no non-temporal store");
	if (!cached && (off & 7) &&
	    (whole_line ? nt_units(down(a, UNIT), lines_lo) ||
			  nt_units(lines_hi, up(a + n, UNIT))
			: c.units[NTM_CHECK_NT]))
		FAIL(&t, "from the threshold", n, off,
		     "non-temporal stores in a partial line");
	(ntm_drain)();
}

/*
 * ntm_memcpy_flush()'s copy policy (src/copy.c): below NTMEM_NT_THRESHOLD
 * (the CPU's default unless the environment says otherwise) a copy to a destination that
 * is not 8-byte aligned goes through the cache and has its lines written
 * back; from it, non-temporal stores for its whole lines only (the partial
 * ones as below it), and at every size to an 8-byte aligned destination,
 * non-temporal stores. Needs NT stores and a write-back to tell them apart.
 */
static void test_flush_threshold(void **state)
{
	static const unsigned offs[] = { 0, 1, 3, 4, 8, 13, 32, 63 };
	static const size_t sizes[] = {
		1, 3, 4, 7, 8, 12, 24, 63, 64, 65, 100, 128, 129, 200, 255,
		256, 257, 511, 512, 1000, 1023, 1024, 1025, 2048, 4096,
	};
	size_t threshold = threshold_from_env();

	(void)state;
	if (ntm_variant_isa(ntm_variant_active()) == NTM_ISA_GENERIC ||
	    ntm_flush_active() == NTM_FLUSH_NONE) {
		print_message("no NT stores or no write-back: nothing to tell\n");
		skip();
	}
	track(4096 + LINE);
	for (size_t k = 0; k < sizeof(offs) / sizeof(*offs); k++) {
		for (size_t i = 0; i < sizeof(sizes) / sizeof(*sizes); i++)
			threshold_case(sizes[i], offs[k], threshold);
		/* each side of the threshold itself */
		if (threshold > 1 && threshold <= 4096)
			threshold_case(threshold - 1, offs[k], threshold);
		if (threshold && threshold < 4096)
			threshold_case(threshold, offs[k], threshold);
	}
	untrack();
}

/* --- constant-size inline paths ------------------------------------------ */

/* which: 0 named ntm_memcpy_nt_N, 1 front door nt, 2 front door flush */
#define FIXED_FN(N)                                                        \
	static void fixed_##N(unsigned char *d, const unsigned char *s,     \
			      int which)                                    \
	{                                                                   \
		if (which == 0)                                             \
			ntm_memcpy_nt_##N(d, s);                            \
		else if (which == 1)                                        \
			ntm_memcpy_nt(d, s, N);                             \
		else                                                        \
			ntm_memcpy_flush(d, s, N);                          \
	}
NTM_FIXED_SIZES(FIXED_FN)
#undef FIXED_FN

struct fixed {
	size_t n;
	void (*fn)(unsigned char *, const unsigned char *, int);
};

#define FIXED_ENTRY(N) { N, fixed_##N },
static const struct fixed fixed_paths[] = { NTM_FIXED_SIZES(FIXED_ENTRY) };
#undef FIXED_ENTRY

/* The front doors expand inline only when the compiler optimises. */
#ifdef __OPTIMIZE__
#define FRONT_DOOR_INLINES 1
#else
#define FRONT_DOOR_INLINES 0
#endif

/* Aligned to 32, 16, 8 and 4 bytes, and not at all. */
static const unsigned fixed_offsets[] = { 0, 32, 16, 48, 8, 24, 4, 12, 1, 3, 6 };

static void test_inline(void **state)
{
#if defined(__AVX__)
	struct target t = { .name = "inline -mavx" };
#else
	struct target t = { .name = "inline" };
#endif
	static const char *const names[] = { "ntm_memcpy_nt_N", "ntm_memcpy_nt",
					     "ntm_memcpy_flush" };

	(void)state;
	/*
	 * An unaligned ntm_memcpy_nt() is an ordinary copy, inline or out of
	 * line (the dispatched variant's, generic or not: NTM_INLINE_MAX is
	 * below every short size).
	 */
	t.generic = ntm_variant_isa(ntm_variant_active()) == NTM_ISA_GENERIC;
	track(NTM_INLINE_MAX);
	for (size_t i = 0; i < sizeof(fixed_paths) / sizeof(*fixed_paths); i++) {
		for (size_t k = 0; k < sizeof(fixed_offsets) / sizeof(*fixed_offsets); k++) {
			size_t n = fixed_paths[i].n;
			unsigned off = fixed_offsets[k];
			unsigned char *d = arena + GUARD + off;
			/* Where the fixed path stays inline; else out of line. */
			bool inline_ok = (off % 8) == 0 || (n == 4 && off % 4 == 0);

			for (int which = 0; which < 3; which++) {
				/*
				 * Without optimisation __builtin_constant_p()
				 * is false and the front door calls the
				 * dispatched ntm_memcpy_nt(), as copy.h says:
				 * its contract applies then.
				 */
				bool fixed = inline_ok &&
					     (which != 1 || FRONT_DOOR_INLINES);

				ntm_check_reset();
				fixed_paths[i].fn(d, srcbuf, which);
				expect_bytes(&t, names[which], d, srcbuf, n, off);
				if (fixed || which == 2)
					expect_flushed(&t, names[which], d, n,
						       off, window(NTM_INLINE_MAX));
				else
					expect_nt(&t, d, n, off,
						  window(NTM_INLINE_MAX));
			}
		}
	}
	untrack();
}

/*
 * The front doors with a run-time size, every size from 0 to 136 (both
 * edges of the variable-size path, 8 and NTM_INLINE_VAR_MAX, and the
 * sizes around them) at every offset above. Where the variable-size path
 * takes the copy (an optimised build, a 16-byte aligned destination, a
 * multiple of 8 from 8 to 120) its non-temporal stores must leave no
 * line dirty and be durable after a drain, whichever door; elsewhere
 * the dispatched function's contract applies.
 */
static void test_inline_variable(void **state)
{
#if defined(__AVX__)
	struct target t = { .name = "variable -mavx" };
#else
	struct target t = { .name = "variable" };
#endif
	static const char *const names[] = { "ntm_memcpy_nt", "ntm_memcpy_flush" };
	volatile size_t vn;

	(void)state;
	t.generic = ntm_variant_isa(ntm_variant_active()) == NTM_ISA_GENERIC;
	track(NTM_INLINE_MAX + 8);
	for (size_t n = 0; n <= NTM_INLINE_MAX + 8; n++) {
		for (size_t k = 0; k < sizeof(fixed_offsets) / sizeof(*fixed_offsets); k++) {
			unsigned off = fixed_offsets[k];
			unsigned char *d = arena + GUARD + off;
			bool var = FRONT_DOOR_INLINES && NTM_ARCH_HAS_NT_STORES &&
				   off % 16 == 0 && n % 8 == 0 && n >= 8 &&
				   n <= NTM_INLINE_VAR_MAX;

			assert_int_equal(NTM_VAR_SIZE_OK(d, n) ? 1 : 0,
					 off % 16 == 0 && n % 8 == 0 && n >= 8 &&
					 n <= NTM_INLINE_VAR_MAX);
			for (int which = 0; which < 2; which++) {
				ntm_check_reset();
				vn = n;
				if (which == 0)
					ntm_memcpy_nt(d, srcbuf, vn);
				else
					ntm_memcpy_flush(d, srcbuf, vn);
				expect_bytes(&t, names[which], d, srcbuf, n, off);
				if (var || which == 1)
					expect_flushed(&t, names[which], d, n,
						       off, window(NTM_INLINE_MAX + 8));
				else
					expect_nt(&t, d, n, off,
						  window(NTM_INLINE_MAX + 8));
			}
		}
	}
	untrack();
}

/* --- setup ------------------------------------------------------------------ */

static void add_target(const char *name, copy_fn nt, copy_fn flush, set_fn set,
		       bool generic)
{
	struct target *t = &targets[ntargets++];

	snprintf(t->name, sizeof(t->name), "%s", name);
	t->nt = nt;
	t->flush = flush;
	t->set = set;
	t->generic = generic;
}

/* True when no globs were given or @name matches one. */
static bool wanted(const char *name, int argc, char **argv)
{
	if (argc < 2)
		return true;
	for (int i = 1; i < argc; i++)
		if (fnmatch(argv[i], name, 0) == 0)
			return true;
	return false;
}

int main(int argc, char **argv)
{
	static char names[8][48];
	static const struct {
		const char *name;
		CMUnitTestFunction fn;
	} fixed_tests[] = {
		{ "flush_persist", test_flush_persist },
		{ "drain_needed", test_drain_needed },
		{ "fence_owner", test_fence_owner },
		{ "inline", test_inline },
		{ "inline_variable", test_inline_variable },
		{ "dispatched_caps", test_dispatched_caps },
		{ "flush_threshold", test_flush_threshold },
	};
	struct CMUnitTest tests[16];
	size_t ntests = 0;
	const struct ntm_variant *v;

#if defined(__AVX__)
	if (!__builtin_cpu_supports("avx"))
		return 77;
#endif
	arena_len = window(LARGE_MAX);
	arena = tu_map_fenced(arena_len);
	srcbuf = tu_map_fenced(LARGE_MAX + LINE);
	if (!arena || !srcbuf)
		return 1;
	tu_fill_random(srcbuf, LARGE_MAX + LINE, 42);

	for (size_t i = 0; (v = ntm_variant_at(i)); i++)
		if (ntm_variant_supported(v))
			add_target(ntm_variant_name(v), ntm_variant_memcpy_nt(v),
				   ntm_variant_memcpy_flush(v),
				   ntm_variant_memset_flush(v),
				   ntm_variant_isa(v) == NTM_ISA_GENERIC);
	add_target("dispatched", (ntm_memcpy_nt), (ntm_memcpy_flush),
		   ntm_memset_flush,
		   ntm_variant_isa(ntm_variant_active()) == NTM_ISA_GENERIC);

	for (size_t i = 0; i < ntargets; i++) {
		/* %.31s: a target's name is char[32] (aarch64's gcc 12 cannot tell) */
		snprintf(names[i], sizeof(names[i]), "copy_%.31s", targets[i].name);
		if (wanted(names[i], argc, argv))
			tests[ntests++] = (struct CMUnitTest){
				.name = names[i], .test_func = test_copy,
				.initial_state = &targets[i],
			};
	}
	for (size_t i = 0; i < sizeof(fixed_tests) / sizeof(*fixed_tests); i++)
		if (wanted(fixed_tests[i].name, argc, argv))
			tests[ntests++] = (struct CMUnitTest){
				.name = fixed_tests[i].name,
				.test_func = fixed_tests[i].fn,
			};

	ntm_check_start();
	return _cmocka_run_group_tests("record", tests, ntests, NULL, NULL);
}
