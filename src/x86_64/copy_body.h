/* SPDX-License-Identifier: MIT */
/*
 * x86_64/copy_body.h - the one non-temporal copy and fill body, specialised
 * by each ISA file (copy_sse2.c, copy_avx2.c, copy_avx512.c) with its own
 * vector type and compiler flags.
 *
 * The including file defines:
 *   VARIANT        the variant name (sse2, avx2, avx512)
 *   VEC            vector bytes (16, 32, 64); the vector NT store needs a
 *                  destination aligned to VEC
 *   vec_t, vec_loadu(p), vec_splat(c)
 *   vec_nt(p, v)   the vector NT store instruction; used only by the
 *                  recorded primitives vec_stream(), copy_groups() and
 *                  fill_groups() here
 *
 * Shape of a copy, after the kernel's __memcpy_flushcache():
 *   0. a struct-sized copy (a multiple of 8 up to NTM_INLINE_MAX) into an
 *      8-byte aligned slot makes the inline path's stores (small_copy()):
 *      at 64 bytes a copy has ~11 cycles at the streaming limit, and the
 *      general path below spends ~25.
 *      A short copy into an unaligned destination is copied with ordinary
 *      stores by "nt": its lines are shared with the neighbouring bytes,
 *      and mixing cached and NT stores in one line evicts it twice - NT
 *      stores do not pay there: below ntm_nt_short_unaligned() of the
 *      variant (copy_policy.h, the contract of ntmem/copy.h). "flush" stores it
 *      non-temporally at every size: whether a cached copy plus write-back
 *      would be faster is the copy policy of the entry points (below and
 *      src/copy.c, NTMEM_NT_THRESHOLD), which benchmarks measure against
 *      this one; into a destination that is not 8-byte aligned it stores
 *      only the whole lines so, the partial head and tail lines through
 *      the cache and written back, as PMDK does (flush_unaligned()).
 *      Steps 1-4 are every other copy: "nt" (into an unaligned
 *      destination from its short size on), "flush" into an 8-byte
 *      aligned one.
 *   1. 1-3 head bytes up to 4-byte alignment: ordinary stores (no NT store
 *      is that narrow); written back when the caller asked for "flush".
 *   2. one 4-byte MOVNTI up to 8-byte alignment, then 8-byte MOVNTI up to
 *      VEC alignment (at most VEC/8 - 1 of them).
 *   3. the body: 4 vectors per iteration, so each iteration writes whole
 *      lines (64 B for SSE2) and the loop overhead stays under the stores.
 *   4. tail: single vectors, then 8- and 4-byte MOVNTI, then 1-3 bytes with
 *      ordinary stores, written back for "flush".
 * Nothing fences; see ntmem/copy.h.
 *
 * Each variant also has an entry per function (ntm_<variant>_*_entry),
 * what the exported ntm_memcpy_nt() & co. resolve to when this is the
 * best variant for the CPU: the same copy, behind a check that the
 * dispatch table uses this variant, with the struct-sized path inline
 * and the copy policy of ntm_memcpy_flush().
 *
 * Every store to the destination goes through one of the always_inline
 * primitives below (or ntmem/arch/x86_64.h, ntm_store_copy()), each of
 * which reports its instruction to the recorder (ntmem/hook.h): no store
 * is emitted anywhere else, so the recorder build sees every one.
 */
#include <stdbool.h>
#include <stdint.h>
#include <string.h>

#include "copy_policy.h"

/*
 * The widest store the struct-sized path makes, as the inline path of a
 * caller built with this file's flags does (ntmem/inline.h).
 */
#if defined(__AVX__)
#define WIDE 32
#else
#define WIDE 16
#endif

/* Source prefetch distance of the bulk copy loop, bytes. */
#define PREFETCH_AHEAD 1024

#define CAT3(a, b, c) a##b##c
#define NAME3(a, b, c) CAT3(a, b, c)
#define FN(op) NAME3(ntm_, VARIANT, _##op)
#define STR_(x) #x
#define STR(x) STR_(x)
/* FN(op)'s name as a string, for an alias attribute. */
#define NAME_STR(op) STR(FN(op))

static inline __attribute__((always_inline)) void movnti8(void *d, uint64_t v)
{
	__asm__ volatile("movntiq %1, %0" : "=m"(*(ntm_arch_u64 *)d) : "r"(v));
	NTM_REC(NTM_REC_NT, d, 8);
}

static inline __attribute__((always_inline)) void movnti4(void *d, uint32_t v)
{
	__asm__ volatile("movntil %1, %0" : "=m"(*(ntm_arch_u32 *)d) : "r"(v));
	NTM_REC(NTM_REC_NT, d, 4);
}

/* One vector NT store; @d aligned to VEC. */
static inline __attribute__((always_inline)) void vec_stream(void *d, vec_t v)
{
	vec_nt(d, v);
	NTM_REC(NTM_REC_NT, d, VEC);
}

/*
 * The bulk loop: @groups times 4 vectors (whole lines), ascending, and one
 * record for all of them after the loop. The recorder serialises its
 * events with a locked instruction, which waits for the write-combining
 * buffers to drain: one event per group made a recorded 1 MiB copy ~50x
 * slower than an unrecorded one, one per loop keeps it within a few x.
 */
static inline __attribute__((always_inline)) void
copy_groups(unsigned char *d, const unsigned char *s, size_t groups)
{
	unsigned char *d0 __attribute__((unused)) = d; /* for the record */

	for (size_t g = 0; g < groups; g++, d += 4 * VEC, s += 4 * VEC) {
		vec_t v0, v1, v2, v3;

		/*
		 * Ask for the source a kilobyte ahead: with the stores
		 * bypassing the cache, the loads are what a large copy waits
		 * on (1 MiB copies: 1.12x -> 1.01x the NT-fill time). A
		 * prefetch past the end of the source is harmless.
		 */
		__builtin_prefetch(s + PREFETCH_AHEAD);
		v0 = vec_loadu(s), v1 = vec_loadu(s + VEC);
		v2 = vec_loadu(s + 2 * VEC), v3 = vec_loadu(s + 3 * VEC);
		vec_nt(d, v0);
		vec_nt(d + VEC, v1);
		vec_nt(d + 2 * VEC, v2);
		vec_nt(d + 3 * VEC, v3);
	}
	if (groups)
		NTM_REC(NTM_REC_NT, d0, groups * 4 * VEC);
}

/* The fill's bulk loop, recorded the same way. */
static inline __attribute__((always_inline)) void
fill_groups(unsigned char *d, vec_t v, size_t groups)
{
	unsigned char *d0 __attribute__((unused)) = d; /* for the record */

	for (size_t g = 0; g < groups; g++, d += 4 * VEC) {
		vec_nt(d, v);
		vec_nt(d + VEC, v);
		vec_nt(d + 2 * VEC, v);
		vec_nt(d + 3 * VEC, v);
	}
	if (groups)
		NTM_REC(NTM_REC_NT, d0, groups * 4 * VEC);
}

static inline __attribute__((always_inline)) uint64_t load8(const void *s)
{
	return *(const ntm_arch_u64 *)s;
}

static inline __attribute__((always_inline)) uint32_t load4(const void *s)
{
	return *(const ntm_arch_u32 *)s;
}

/* Byte copy for 1-3 bytes; a memcpy() call would cost more than it moves. */
static inline __attribute__((always_inline)) void
copy_bytes(unsigned char *d, const unsigned char *s, size_t n)
{
	for (size_t i = 0; i < n; i++)
		d[i] = s[i];
	NTM_REC(NTM_REC_STORE, d, n);
}

/* Byte fill for 1-3 bytes, for the same reason. */
static inline __attribute__((always_inline)) void
fill_bytes(unsigned char *d, unsigned char c, size_t n)
{
	for (size_t i = 0; i < n; i++)
		d[i] = c;
	NTM_REC(NTM_REC_STORE, d, n);
}

/*
 * The longest copy store_short() makes: below every variant's short size
 * (ntm_nt_short_for(), 256 at least), so a copy this short into an
 * unaligned destination is always an ordinary one.
 */
#define STORE_SHORT_MAX 64
_Static_assert(STORE_SHORT_MAX < 256, "store_short() copies are short ones");

/*
 * An ordinary copy of 1-64 bytes with no call: the first and the last 32,
 * 16, 8 or 4 bytes (the widest that fits twice), overlapping in the
 * middle, as glibc's memcpy() moves short copies; 1-3 bytes as the first,
 * middle and last byte. The caller's source and destination do not
 * overlap (memcpy()'s contract), so loads and stores may interleave.
 * Where ntm_memcpy_nt() into an unaligned destination jumped to memcpy()
 * for these, an 8-byte copy cost 2.4x glibc's own call and a 64-byte one
 * 1.18x (Zen 5, family 26): the jumps on the way there, not the copy.
 * The order of the tests is what a call pays in taken jumps: 33-64 bytes
 * fall through from the entry's length test, 8-16 need one jump more,
 * as in glibc's own memcpy(); with 8-16 behind the 17-32 test an 8-byte
 * copy took three and cost 1.13-1.16x glibc's, 0.98-1.03x now (Zen 5).
 */
static inline __attribute__((always_inline)) void
store_short(unsigned char *d, const unsigned char *s, size_t n)
{
	if (n > 32) {
		__builtin_memcpy(d, s, 32);
		__builtin_memcpy(d + n - 32, s + n - 32, 32);
	} else if (__builtin_expect(n - 8 <= 8, 1)) {
		__builtin_memcpy(d, s, 8);
		__builtin_memcpy(d + n - 8, s + n - 8, 8);
	} else if (n > 16) {
		__builtin_memcpy(d, s, 16);
		__builtin_memcpy(d + n - 16, s + n - 16, 16);
	} else if (n >= 4) {
		__builtin_memcpy(d, s, 4);
		__builtin_memcpy(d + n - 4, s + n - 4, 4);
	} else if (n) {
		unsigned char a = s[0], m = s[n / 2], z = s[n - 1];

		d[0] = a;
		d[n / 2] = m;
		d[n - 1] = z;
	}
	NTM_REC(NTM_REC_STORE, d, n);
}

/* One store of @unit bytes (a constant: 32, 16 or 8). */
static inline __attribute__((always_inline)) void
stream_unit(unsigned char *d, const unsigned char *s, size_t unit)
{
#if defined(__AVX__)
	if (unit == 32) {
		ntm_arch_stream32(d, s);
		return;
	}
#endif
	if (unit == 16)
		ntm_arch_stream16(d, s);
	else
		ntm_arch_stream8(d, s);
}

/*
 * @bytes in stores of @unit bytes, ascending; both constants, at most 16
 * stores. Written out: GCC kept a loop for "GCC unroll" here.
 */
static inline __attribute__((always_inline)) void
stream_units(unsigned char *d, const unsigned char *s, size_t bytes,
	     size_t unit)
{
#define UNIT(k)                                                    \
	if ((k) * unit < bytes)                                    \
		stream_unit(d + (k) * unit, s + (k) * unit, unit)
	UNIT(0); UNIT(1); UNIT(2); UNIT(3); UNIT(4); UNIT(5); UNIT(6); UNIT(7);
	UNIT(8); UNIT(9); UNIT(10); UNIT(11); UNIT(12); UNIT(13); UNIT(14);
	UNIT(15);
#undef UNIT
}

/*
 * @n bytes, a multiple of 8 up to NTM_INLINE_MAX, in stores of at most
 * @width bytes (a constant @d is aligned to): the largest power-of-two
 * part first, so the stores ascend, and a return as soon as nothing is
 * left. The branches are laid out for a copy of one line: a 64-byte copy
 * takes no jump from the entry to its return (one taken jump on that path
 * measured 0.1-0.3x of the inline path's time), other sizes take one or
 * two.
 */
static inline __attribute__((always_inline)) void
stream_pow2(unsigned char *d, const unsigned char *s, size_t n, size_t width)
{
	_Static_assert(NTM_INLINE_MAX == 128, "the parts below cover 8..128");
#define PART(bytes)                                                          \
	if (__builtin_expect((n & (bytes)) != 0, (bytes) == 64)) {           \
		stream_units(d, s, bytes, (bytes) < width ? (bytes) : width); \
		if (__builtin_expect((n & ((bytes) - 1)) == 0, 1))            \
			return;                                               \
		d += (bytes), s += (bytes);                                   \
	}
	PART(128) PART(64) PART(32) PART(16) PART(8)
#undef PART
}

/*
 * The stores of a struct-sized copy: @n a multiple of 8 up to
 * NTM_INLINE_MAX, @d 8-byte aligned, @a what the alignment decisions read
 * (the address, or a constant offset: then, with a constant @n, every
 * branch below folds and what is left is the straight-line stores
 * ntm_memcpy_nt_fixed() makes for that size and offset: the widest the
 * alignment takes, a 16-byte one first to reach 32-byte alignment).
 */
static inline __attribute__((always_inline)) void
slot_stores(unsigned char *d, const unsigned char *s, size_t n, uintptr_t a)
{
	/*
	 * Whole wide stores into a slot aligned for them.
	 * (The mask tells the compiler the low parts are empty.)
	 */
	if (((a | n) & (WIDE - 1)) == 0) {
		stream_pow2(d, s, n & ~(size_t)(WIDE - 1), WIDE);
		return;
	}
#if defined(__AVX__)
	/*
	 * Multiples of 16 into 16-byte aligned slots (80-byte descriptors):
	 * one 16-byte store up to 32-byte alignment, then as above.
	 */
	if (((a | n) & 15) == 0 && n >= 32) {
		if (a & 16) {
			ntm_arch_stream16(d, s);
			stream_pow2(d + 16, s + 16, (n - 16) & ~(size_t)15, 32);
		} else {
			stream_pow2(d, s, n & ~(size_t)15, 32);
		}
		return;
	}
#endif
	if (n < 16 || (a & 15)) {
		stream_pow2(d, s, n, 8);
		return;
	}
#if defined(__AVX__)
	if (n >= 32 && (a & 16)) {
		ntm_arch_stream16(d, s);
		d += 16, s += 16, n -= 16;
		stream_pow2(d, s, n, 32);
		return;
	}
	if (!(a & 16)) {
		stream_pow2(d, s, n, 32);
		return;
	}
#endif
	stream_pow2(d, s, n, 16);
}

/*
 * One compare per (size, offset in a wide store) pair: @n below 256 and
 * the offset in the bits above, so a single equality says both.
 */
#define SLOT_KEY(n, off) ((size_t)(n) | (size_t)(off) << 8)

/*
 * A struct-sized copy (@n a multiple of 8 up to NTM_INLINE_MAX, @d 8-byte
 * aligned): made, and true; false for any other copy, untouched.
 *
 * What a call of 64 to 96 bytes costs over the inline path is mostly the
 * taken jumps on its way to the stores (AVX2 on a Zen 3, per copy, in a
 * loop of them: each taken jump ~0.1-0.3x of the inline path's time). So
 * the common struct sizes, at the offsets a packed array of them visits,
 * are a chain of compares of size and alignment at once (SLOT_KEY), each
 * jumping out to its own straight-line stores and return: 80 bytes (at
 * both 32-byte offsets an array of them takes) and 96 take that one taken
 * jump; 64 bytes, compared last of the four, none: its stores follow the
 * chain. The bits of @n walked in turn (stream_pow2(), what every other
 * size and offset still does) took a jump per part after the first: 3 for
 * 96 bytes, 5 for 80, 1.1-1.7x the inline path; a jump table before that
 * cost its indirect jump (1.3x at 64 bytes). An 8-byte copy makes one
 * MOVNTI at every 8-byte aligned offset, so one compare with the offset's
 * word bits masked off matches all of them, first after 64: with a slot
 * per offset, the ones a packed array visits at 8, 16 and 24 came last of
 * the chain (8 bytes at dst+0: 1.18-1.20x glibc's call, 0.98x now, Zen 5).
 */
static inline __attribute__((always_inline)) bool
small_copy(unsigned char *d, const unsigned char *s, size_t n)
{
	size_t key __attribute__((unused)) = /* not at -O0 */
		SLOT_KEY(n, (uintptr_t)d & (WIDE - 1));

	if (n > NTM_INLINE_MAX)
		return false;
#if defined(__OPTIMIZE__)
	/*
	 * Only where the compiler folds each SLOT to its stores: unoptimised
	 * (the sanitizer builds' -O0), every one is the whole walk of
	 * slot_stores() again, and the file took minutes to compile.
	 */
#define SLOT(size, off)                                                \
	if (__builtin_expect(key == SLOT_KEY(size, off), 0)) {         \
		slot_stores(d, s, size, off);                          \
		return true;                                           \
	}
	SLOT(80, 0)
#if defined(__AVX__)
	SLOT(80, 16)
#endif
	SLOT(96, 0)
	if (__builtin_expect(key == SLOT_KEY(64, 0), 1)) {
		slot_stores(d, s, 64, 0);
		return true;
	}
	if (__builtin_expect((key & ~SLOT_KEY(0, WIDE - 8)) == 8, 1)) {
		movnti8(d, load8(s));
		return true;
	}
	SLOT(128, 0)
	SLOT(32, 0)
	SLOT(16, 0)
#if defined(__AVX__)
	SLOT(16, 16)
#endif
#undef SLOT
#endif
	if ((((uintptr_t)d | n) & 7) != 0)
		return false;
	slot_stores(d, s, n, (uintptr_t)d);
	return true;
}

/*
 * The entries' return value, in the return register before small_copy():
 * left to itself the compiler computes the chain's key in RAX, and every
 * body jumps back to one `mov %rdi,%rax; ret`, a second taken jump per
 * copy; with RAX taken, each body ends in its own return.
 */
static inline __attribute__((always_inline)) void *
in_return_register(void *p)
{
	__asm__("" : "+a"(p));
	return p;
}

/* x86-64's cache line, the unit a partial NT store costs a whole write of. */
#define LINE_BYTES 64

/*
 * ntm_memcpy_flush() into a destination that is not 8-byte aligned (what
 * the entry's policy leaves to the variant: from NTMEM_NT_THRESHOLD up),
 * in PMDK's shape: the partial head and tail lines through the cache and
 * written back, only the whole lines between them stored non-temporally.
 * Its NT stores of a line's part, the 4- and 8-byte ones up to vector
 * alignment and after the last vector, each left the write-combining
 * buffer a partial line to write: at 4 KiB dst+1, 1.24x PMDK's time on a
 * Zen 3. An 8-byte aligned destination keeps the words (copy_body()):
 * there no store shares a line with a cached one.
 */
static inline __attribute__((always_inline)) void
flush_unaligned(unsigned char *d, const unsigned char *s, size_t n)
{
	size_t head = (-(uintptr_t)d) & (LINE_BYTES - 1), whole, groups;

	if (head > n)
		head = n;
	if (head) {
		ntm_store_copy(d, s, head);
		ntm_flush_lines(d, head);
		d += head, s += head, n -= head;
	}
	whole = n & ~(size_t)(LINE_BYTES - 1);
	groups = whole / (4 * VEC);
	copy_groups(d, s, groups);
	d += groups * 4 * VEC, s += groups * 4 * VEC;
	whole -= groups * 4 * VEC, n -= groups * 4 * VEC;
	for (; whole; d += VEC, s += VEC, n -= VEC, whole -= VEC)
		vec_stream(d, vec_loadu(s));
	if (n) {
		ntm_store_copy(d, s, n);
		ntm_flush_lines(d, n);
	}
}

static inline __attribute__((always_inline)) void *
copy_body(void *dst, const void *src, size_t n, bool flush_partial)
{
	unsigned char *d = dst;
	const unsigned char *s = src;
	size_t head;

	/* 8-byte aligned: the fixed path never needs its out-of-line copy. */
	if (small_copy(d, s, n))
		return dst;
	if (!flush_partial && ((uintptr_t)d & 7) &&
	    n < ntm_dispatch()->nt_short) {
		if (n <= STORE_SHORT_MAX)
			store_short(d, s, n);
		else
			ntm_store_copy(d, s, n);
		return dst;
	}
	if (flush_partial && ((uintptr_t)d & 7)) {
		flush_unaligned(d, s, n);
		return dst;
	}
	/*
	 * From here on a flushing copy's destination is 8-byte aligned (an
	 * unaligned one went through flush_unaligned() above): only the
	 * non-temporal copy has head bytes, and none of them to write back.
	 */
	head = (-(uintptr_t)d) & 3;
	if (head) {
		if (head > n)
			head = n;
		copy_bytes(d, s, head);
		d += head, s += head, n -= head;
	}
	if (n >= 4 && ((uintptr_t)d & 4)) {
		movnti4(d, load4(s));
		d += 4, s += 4, n -= 4;
	}
	while (n >= 8 && ((uintptr_t)d & (VEC - 1))) {
		movnti8(d, load8(s));
		d += 8, s += 8, n -= 8;
	}
	if (n >= 4 * VEC) {
		size_t groups = n / (4 * VEC);

		copy_groups(d, s, groups);
		d += groups * 4 * VEC, s += groups * 4 * VEC;
		n -= groups * 4 * VEC;
	}
	for (; n >= VEC; d += VEC, s += VEC, n -= VEC)
		vec_stream(d, vec_loadu(s));
	for (; n >= 8; d += 8, s += 8, n -= 8)
		movnti8(d, load8(s));
	if (n >= 4) {
		movnti4(d, load4(s));
		d += 4, s += 4, n -= 4;
	}
	if (n) {
		copy_bytes(d, s, n);
		if (flush_partial)
			ntm_flush_lines(d, n);
	}
	return dst;
}

void *FN(memcpy_nt)(void *dst, const void *src, size_t n)
{
	return copy_body(dst, src, n, false);
}

void *FN(memcpy_flush)(void *dst, const void *src, size_t n)
{
	return copy_body(dst, src, n, true);
}

void *FN(memset_flush)(void *dst, int c, size_t n)
{
	unsigned char *d = dst;
	unsigned char byte = (unsigned char)c;
	uint64_t word = 0x0101010101010101ull * byte;
	vec_t v = vec_splat(byte);
	size_t head = (-(uintptr_t)d) & 3;

	if (head) {
		if (head > n)
			head = n;
		fill_bytes(d, byte, head);
		ntm_flush_lines(d, head);
		d += head, n -= head;
	}
	if (n >= 4 && ((uintptr_t)d & 4)) {
		movnti4(d, (uint32_t)word);
		d += 4, n -= 4;
	}
	while (n >= 8 && ((uintptr_t)d & (VEC - 1))) {
		movnti8(d, word);
		d += 8, n -= 8;
	}
	if (n >= 4 * VEC) {
		size_t groups = n / (4 * VEC);

		fill_groups(d, v, groups);
		d += groups * 4 * VEC, n -= groups * 4 * VEC;
	}
	for (; n >= VEC; d += VEC, n -= VEC)
		vec_stream(d, v);
	for (; n >= 8; d += 8, n -= 8)
		movnti8(d, word);
	if (n >= 4) {
		movnti4(d, (uint32_t)word);
		d += 4, n -= 4;
	}
	if (n) {
		fill_bytes(d, byte, n);
		ntm_flush_lines(d, n);
	}
	return dst;
}

/*
 * The variant's functions under hidden names, for the entries' checks
 * below: the exported names are local only by the version script, so the
 * compiler loaded their addresses from the GOT, one more load per call;
 * a hidden alias is a RIP-relative LEA. The same address.
 */
#define SELF(op) NAME3(ntm_, VARIANT, _##op##_self)
extern __typeof__(FN(memcpy_nt)) SELF(memcpy_nt)
	__attribute__((alias(NAME_STR(memcpy_nt)), visibility("hidden")));
extern __typeof__(FN(memcpy_flush)) SELF(memcpy_flush)
	__attribute__((alias(NAME_STR(memcpy_flush)), visibility("hidden")));
extern __typeof__(FN(memset_flush)) SELF(memset_flush)
	__attribute__((alias(NAME_STR(memset_flush)), visibility("hidden")));

/*
 * The entries. Each first checks that the dispatch table runs this
 * variant's function (ntm_bound, bound by the first call through the
 * table): src/copy.c resolves the exported names to the best variant for
 * the CPU when the library is loaded, before NTMEM_ISA, a caller's
 * ceiling (ntm_dispatch_set_caps()) or the persistence domain can be
 * known, so until the table agrees every call goes through it. Once it
 * does, a call costs that one load and compare over the copy itself, with
 * no jump between the caller and the stores of a struct-sized copy.
 */
static inline __attribute__((always_inline)) bool
bound_to(void *(*bound)(void *, const void *, size_t),
	 void *(*mine)(void *, const void *, size_t))
{
	return __builtin_expect(bound == mine, 1);
}

void *FN(memcpy_nt_entry)(void *dst, const void *src, size_t n)
{
	void *ret;

	if (!bound_to(__atomic_load_n(&ntm_bound.memcpy_nt, __ATOMIC_RELAXED),
		      SELF(memcpy_nt)))
		return ntm_memcpy_nt_unbound(dst, src, n);
	ret = in_return_register(dst);
	/*
	 * An unaligned destination first: small_copy()'s slots are all
	 * 8-byte aligned, so its chain of compares could only fall through.
	 * Below nt_short the copy is copy_body()'s ordinary one, made the
	 * same way: up to STORE_SHORT_MAX bytes with no call, tested before
	 * nt_short (never that short, so the load waits for longer copies);
	 * longer, here a jump to memcpy(), so it costs the caller what
	 * glibc's does plus the checks above. That jump is in a function of
	 * its own (src/copy.c): here the vector code's stack realignment
	 * made the call a frame.
	 */
	if (__builtin_expect((uintptr_t)dst & 7, 0)) {
		if (n <= STORE_SHORT_MAX) {
			store_short(dst, src, n);
			return ret;
		}
		if (n >= __atomic_load_n(&ntm_bound.nt_short, __ATOMIC_RELAXED))
			return FN(memcpy_nt)(dst, src, n);
		return ntm_memcpy_store(dst, src, n);
	}
	if (small_copy(dst, src, n))
		return ret;
	return FN(memcpy_nt)(dst, src, n);
}

/*
 * The copy policy of src/copy.c (ntm_memcpy_flush_unbound()). Not inlined
 * into the entry: its calls would give the struct-sized path a frame.
 */
static __attribute__((noinline)) void *
FN(memcpy_flush_policy)(void *dst, const void *src, size_t n)
{
	if (ntm_flush_cached(dst, n, ntm_dispatch()->nt_threshold))
		return ntm_memcpy_cached(dst, src, n);
	return FN(memcpy_flush)(dst, src, n);
}

void *FN(memcpy_flush_entry)(void *dst, const void *src, size_t n)
{
	void *ret;

	if (!bound_to(__atomic_load_n(&ntm_bound.memcpy_flush, __ATOMIC_RELAXED),
		      SELF(memcpy_flush)))
		return ntm_memcpy_flush_unbound(dst, src, n);
	ret = in_return_register(dst);
	if (small_copy(dst, src, n))
		return ret;
	return FN(memcpy_flush_policy)(dst, src, n);
}

void *FN(memset_flush_entry)(void *dst, int c, size_t n)
{
	if (__builtin_expect(__atomic_load_n(&ntm_bound.memset_flush,
					     __ATOMIC_RELAXED) !=
			     SELF(memset_flush), 0))
		return ntm_memset_flush_unbound(dst, c, n);
	return FN(memset_flush)(dst, c, n);
}
