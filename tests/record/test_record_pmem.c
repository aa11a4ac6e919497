// SPDX-License-Identifier: MIT
/*
 * test_record_pmem.c - the libpmem drop-in's durability (compat/libpmem),
 * checked with the recorder (ntmem/check.h), not with bytes.
 *
 * The drop-in's sources are compiled into this program with NTM_RECORD
 * and linked with the recorder build, so its calls into ntmem (the NT
 * copies, ntm_flush(), ntm_drain()) report every NT store, write-back and
 * fence. Its ordinary copies are libc's memmove()/memset(), which the
 * recorder cannot hear: before each call the destination is marked DIRTY
 * (ntm_check_store()), standing for those stores. A call that then
 * forgets a write-back leaves units DIRTY, one that forgets its fence
 * leaves them WB or NT, and both fail rec_expect_durable().
 *
 * Durable afterwards (every unit stored and fenced):
 *   - pmem_memcpy_persist(), pmem_memmove_persist(), pmem_memset_persist(),
 *     pmem_persist() after the test's own stores, pmem_flush() +
 *     pmem_drain(), pmem_*_nodrain() + pmem_drain() (or pmem_persist());
 *   - pmem_memcpy(), pmem_memmove() (disjoint and overlapping) and
 *     pmem_memset() with each of the 64 combinations of PMEM_F_MEM_* flags
 *     followed by pmem_drain();
 *   - pmem_deep_flush() + pmem_deep_drain(), pmem_deep_persist().
 * Except where PMDK documents that nothing is written back:
 *   - PMEM_F_MEM_NOFLUSH: "Don't flush anything. This implies
 *     PMEM_F_MEM_NODRAIN. Using this flag only makes sense when it's
 *     followed by any function that flushes data" (pmem_memmove(3)). The
 *     recorder sees every unit left DIRTY and no write-back, through the
 *     pmem_drain() too; the pmem_persist() that must follow makes it
 *     durable.
 *   - PMEM_NO_FLUSH=1 (libpmem(7): skip CPU cache flushing, as on a
 *     platform whose cache is flushed on power loss; also the default
 *     there, pmem_has_auto_flush() == 1). The recorder models a platform
 *     without that (ADR), so it sees what the drop-in leaves: ordinary
 *     stores DIRTY and never written back, non-temporal stores fenced and
 *     DURABLE, nothing WB or NT pending after a drain. Asserted exactly:
 *     a copy by ordinary stores is all DIRTY with no write-back; a
 *     non-temporal memcpy has no write-back and every unit wholly inside
 *     a copy of 256 bytes or more DURABLE (shorter unaligned copies are
 *     ordinary stores in ntm_memcpy_nt()); a non-temporal memset all
 *     DURABLE (ntm_memset_flush() writes back its byte-stored ends itself).
 *     The deep functions write back regardless, as PMDK's do.
 *
 * pmem_msync() goes through the page cache, which the recorder cannot see:
 * msync() is interposed and each call must be one MS_SYNC covering the
 * range from a page boundary.
 *
 * Each PMEM_* variable the pmem_compat tests use runs this program again
 * in its own process (tests/record/meson.build): the drop-in reads them when it
 * is loaded. The test reads the same variables to know which path a copy
 * takes, by PMDK's documented rules (libpmem(7), pmem_memmove(3)).
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
#include <sys/syscall.h>
#include <unistd.h>

#include <ntmem/check.h>
#include <ntmem/introspect.h>

#include "libpmem.h"
#include "../lib/record_util.h"
#include "../lib/testutil.h"

#define BUF_SIZE ((size_t)64 << 10)
#define ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))

/* What PMDK's variables say, read as the drop-in reads them (env.c). */
static struct {
	bool no_flush;
	bool no_movnt;
	size_t threshold;
} env;

static unsigned char *buf;	/* tracked: the "pmem" */
static unsigned char *src;	/* not tracked */

static int env_int(const char *name, int unset)
{
	const char *v = getenv(name);

	return v && *v ? atoi(v) : unset;
}

static int setup(void **state)
{
	const char *thr = getenv("PMEM_MOVNT_THRESHOLD");
	int nf = env_int("PMEM_NO_FLUSH", -1);

	(void)state;
	env.no_flush = nf < 0 ? pmem_has_auto_flush() == 1 : nf != 0;
	env.no_movnt = env_int("PMEM_NO_MOVNT", 0) != 0;
	env.threshold = thr && *thr && atoll(thr) >= 0 ? (size_t)atoll(thr) : 256;
	buf = tu_map_fenced(BUF_SIZE);
	src = malloc(BUF_SIZE);
	if (!buf || !src)
		return -1;
	tu_fill_random(src, BUF_SIZE, 0x5eed);
	if (ntm_check_track(buf, BUF_SIZE))
		return -1;
	ntm_check_start();
	return 0;
}

static int teardown(void **state)
{
	(void)state;
	ntm_check_stop();
	ntm_check_untrack(buf);
	tu_unmap_fenced(buf, BUF_SIZE);
	free(src);
	return 0;
}

/* Destinations: offset into buf and length; odd, aligned, short, long. */
static const struct {
	size_t off, len;
} cases[] = {
	{ 0, 8 }, { 0, 64 }, { 3, 100 }, { 0, 128 }, { 8, 256 }, { 5, 1000 },
	{ 0, 4096 }, { 61, 4099 }, { 4096 + 7, 20001 },
};

/* Which copy the drop-in makes: PMDK's rules (pmem_memmove(3)). */
static bool takes_nt(size_t len, unsigned flags)
{
	if (env.no_movnt)
		return false;
	if (flags & (PMEM_F_MEM_NONTEMPORAL | PMEM_F_MEM_WC))
		return true;
	if (flags & (PMEM_F_MEM_TEMPORAL | PMEM_F_MEM_WB))
		return false;
	return len >= env.threshold;
}

/* Begin a case: the model clean, the destination's stores-to-be DIRTY. */
static void begin(unsigned char *d, size_t len)
{
	ntm_check_reset();
	ntm_check_store(d, len);
}

/*
 * After a flushing call and its drain, under PMEM_NO_FLUSH=1: what the
 * recorder sees (see the top of the file). @nt: the copy was non-temporal;
 * @memset: by ntm_memset_flush().
 */
static void expect_no_flush(const unsigned char *d, size_t len, bool nt,
			    bool is_memset, const char *what, unsigned flags)
{
	struct ntm_check_counts c;
	uintptr_t lo = ((uintptr_t)d + 7) & ~(uintptr_t)7;
	uintptr_t hi = ((uintptr_t)d + len) & ~(uintptr_t)7;

	if (nt && is_memset) {
		rec_expect_durable(d, len, "PMEM_NO_FLUSH %s flags %#x", what,
				   flags);
		return;
	}
	rec_query(d, len, &c);
	if (c.writebacks || c.units[NTM_CHECK_WB] || c.units[NTM_CHECK_NT])
		rec_fail(__FILE__, __LINE__, d, len, &c,
			 "fenced, with no write-back", "PMEM_NO_FLUSH %s "
			 "flags %#x", what, flags);
	if (!nt)
		rec_expect_all(d, len, NTM_CHECK_DIRTY, "PMEM_NO_FLUSH %s "
			       "flags %#x", what, flags);
	else if (len >= 256 && lo < hi)
		rec_expect_durable((const void *)lo, hi - lo, "PMEM_NO_FLUSH %s "
				   "flags %#x, whole units", what, flags);
}

/* After a call that promises durability (with its drain, if needed). */
static void expect_persisted(const unsigned char *d, size_t len, bool nt,
			     bool is_memset, const char *what, unsigned flags)
{
	if (env.no_flush)
		expect_no_flush(d, len, nt, is_memset, what, flags);
	else
		rec_expect_durable(d, len, "%s flags %#x", what, flags);
}

/* --- ntmem's NTMEM_NT_THRESHOLD under PMDK's threshold -------------------- */

/*
 * Which units a non-temporal copy leaves NT is x86-64's shape
 * (copy_body.h); elsewhere only the cached side (no NT unit) is checked.
 */
#if defined(__x86_64__)
#define NT_UNITS_KNOWN 1
#else
#define NT_UNITS_KNOWN 0
#endif

/*
 * NTMEM_NT_THRESHOLD as tests/record/meson.build sets it, a plain number;
 * unset, the CPU's default, as the library reports it (test_introspect.c
 * checks that default against the contract).
 */
static size_t ntmem_threshold(void)
{
	const char *v = getenv("NTMEM_NT_THRESHOLD");
	struct ntm_env_info info;

	if (v && *v)
		return (size_t)strtoull(v, NULL, 10);
	assert_int_equal(ntm_introspect_env(&info, sizeof(info)), 0);
	return info.nt_threshold_default;
}

/*
 * man ntmem-libpmem(7): PMEM_MOVNT_THRESHOLD (PMDK's 256 when unset, never
 * NTMEM_NT_THRESHOLD) picks the flag-less copies that go non-temporal, and
 * ntm_memcpy_flush() then copies those to a destination that is not 8-byte
 * aligned through the cache below NTMEM_NT_THRESHOLD. So a copy has NT
 * units exactly when both say so and it holds a unit the NT path stores
 * whole (between the ordinary head and tail bytes).
 */
static void nt_threshold(void **state)
{
	static const unsigned flag_sets[] = { 0, PMEM_F_MEM_NONTEMPORAL };
	size_t ntmem = ntmem_threshold();

	(void)state;
	if (env.no_flush || env.no_movnt) {
		print_message("no ntm_memcpy_flush() copies here\n");
		skip();
	}
	for (size_t i = 0; i < ARRAY_SIZE(cases); i++)
		for (size_t f = 0; f < ARRAY_SIZE(flag_sets); f++) {
			unsigned char *d = buf + cases[i].off;
			size_t len = cases[i].len;
			uintptr_t a = (uintptr_t)d, lo, hi;
			bool nt = takes_nt(len, flag_sets[f]) &&
				  !((a & 7) && len < ntmem);
			struct ntm_check_counts c;

			lo = (a + 3) & ~(uintptr_t)3;
			hi = lo + ((a + len - lo) & ~(uintptr_t)3);
			/*
			 * Into an unaligned destination ntm_memcpy_flush()
			 * stores only whole lines non-temporally, as PMDK
			 * does; the partial head and tail lines are cached.
			 */
			if (a & 7)
				nt = nt && ((a + 63) & ~(uintptr_t)63) + 64 <=
						   a + len;
			else
				nt = nt &&
				     ((lo + 7) & ~(uintptr_t)7) + 8 <= hi;
			begin(d, len);
			pmem_memcpy(d, src, len, flag_sets[f] | PMEM_F_MEM_NODRAIN);
			rec_query(d, len, &c);
			if ((!nt || NT_UNITS_KNOWN) &&
			    nt != (c.units[NTM_CHECK_NT] != 0))
				rec_fail(__FILE__, __LINE__, d, len, &c, nt ?
					 "non-temporal units" : "no non-temporal unit",
					 "pmem_memcpy flags %#x, PMEM_MOVNT_THRESHOLD "
					 "%zu, NTMEM_NT_THRESHOLD %zu", flag_sets[f],
					 env.threshold, ntmem);
			pmem_drain();
			rec_expect_durable(d, len, "pmem_memcpy flags %#x + drain",
					   flag_sets[f]);
		}
}

/* --- the _persist functions -------------------------------------------- */

static void persist_functions(void **state)
{
	(void)state;
	for (size_t i = 0; i < ARRAY_SIZE(cases); i++) {
		unsigned char *d = buf + cases[i].off;
		size_t len = cases[i].len;
		bool nt = takes_nt(len, 0);

		begin(d, len);
		assert_ptr_equal(pmem_memcpy_persist(d, src, len), d);
		expect_persisted(d, len, nt, false, "pmem_memcpy_persist", 0);

		begin(d, len);
		assert_ptr_equal(pmem_memmove_persist(d, src, len), d);
		expect_persisted(d, len, nt, false, "pmem_memmove_persist", 0);

		begin(d, len);
		assert_ptr_equal(pmem_memset_persist(d, 0x3c, len), d);
		expect_persisted(d, len, nt, true, "pmem_memset_persist", 0);

		/* The caller's own stores, then pmem_persist(). */
		begin(d, len);
		memcpy(d, src, len);
		pmem_persist(d, len);
		expect_persisted(d, len, false, false, "memcpy + pmem_persist",
				 0);

		begin(d, len);
		memcpy(d, src, len);
		pmem_flush(d, len);
		pmem_drain();
		expect_persisted(d, len, false, false,
				 "memcpy + pmem_flush + pmem_drain", 0);
	}
}

static void nodrain_functions(void **state)
{
	(void)state;
	for (size_t i = 0; i < ARRAY_SIZE(cases); i++) {
		unsigned char *d = buf + cases[i].off;
		size_t len = cases[i].len;
		bool nt = takes_nt(len, PMEM_F_MEM_NODRAIN);

		begin(d, len);
		assert_ptr_equal(pmem_memcpy_nodrain(d, src, len), d);
		pmem_drain();
		expect_persisted(d, len, nt, false,
				 "pmem_memcpy_nodrain + pmem_drain", 0);

		begin(d, len);
		assert_ptr_equal(pmem_memmove_nodrain(d, src, len), d);
		pmem_drain();
		expect_persisted(d, len, nt, false,
				 "pmem_memmove_nodrain + pmem_drain", 0);

		begin(d, len);
		assert_ptr_equal(pmem_memset_nodrain(d, 0x3c, len), d);
		pmem_drain();
		expect_persisted(d, len, nt, true,
				 "pmem_memset_nodrain + pmem_drain", 0);

		/*
		 * pmem_persist() fences what came before it, too: under
		 * PMEM_NO_FLUSH=1 its fence is all that makes this copy's
		 * non-temporal stores durable.
		 */
		begin(d, len);
		assert_ptr_equal(pmem_memcpy_nodrain(d, src, len), d);
		pmem_persist(d, len);
		expect_persisted(d, len, nt, false,
				 "pmem_memcpy_nodrain + pmem_persist", 0);
	}
}

/* --- every flag combination -------------------------------------------- */

enum op { OP_MEMCPY, OP_MEMMOVE, OP_MEMMOVE_UP, OP_MEMMOVE_DOWN, OP_MEMSET };

static const char *const op_names[] = {
	"pmem_memcpy", "pmem_memmove", "pmem_memmove (overlap, dst above src)",
	"pmem_memmove (overlap, dst below src)", "pmem_memset",
};

static void flags_one(enum op op, unsigned flags, unsigned char *d, size_t len)
{
	const char *what = op_names[op];
	bool nt = takes_nt(len, flags);

	switch (op) {
	case OP_MEMCPY:
		begin(d, len);
		assert_ptr_equal(pmem_memcpy(d, src, len, flags), d);
		break;
	case OP_MEMMOVE:
		begin(d, len);
		assert_ptr_equal(pmem_memmove(d, src, len, flags), d);
		break;
	case OP_MEMMOVE_UP:
	case OP_MEMMOVE_DOWN:
		/*
		 * Source and destination overlap by half in the tracked
		 * buffer: the drop-in moves with memmove() and writes back.
		 */
		begin(d, len);
		assert_ptr_equal(pmem_memmove(d, op == OP_MEMMOVE_UP ?
					      d - len / 2 : d + len / 2, len,
					      flags), d);
		nt = false;
		break;
	case OP_MEMSET:
		begin(d, len);
		assert_ptr_equal(pmem_memset(d, 0xe1, len, flags), d);
		break;
	}
	pmem_drain();
	if (flags & PMEM_F_MEM_NOFLUSH) {
		struct ntm_check_counts c;

		/* pmem_memmove(3): nothing flushed, no drain; see the top. */
		rec_expect_all(d, len, NTM_CHECK_DIRTY, "%s flags %#x", what,
			       flags);
		rec_query(d, len, &c);
		assert_int_equal(c.writebacks, 0);
		/* ...until the flush that has to follow. */
		pmem_persist(d, len);
		expect_persisted(d, len, false, false, what, flags);
		return;
	}
	expect_persisted(d, len, nt, op == OP_MEMSET, what, flags);
}

static void flag_combinations(void **state)
{
	(void)state;
	for (unsigned flags = 0; flags <= PMEM_F_MEM_VALID_FLAGS; flags++)
		for (size_t i = 0; i < ARRAY_SIZE(cases); i++)
			for (int op = OP_MEMCPY; op <= OP_MEMSET; op++)
				/* room for the overlapping moves' sources */
				flags_one(op, flags, buf + 16384 + cases[i].off,
					  cases[i].len);
}

/* --- deep flush: always written back ------------------------------------ */

static void deep_functions(void **state)
{
	(void)state;
	for (size_t i = 0; i < ARRAY_SIZE(cases); i++) {
		unsigned char *d = buf + cases[i].off;
		size_t len = cases[i].len;

		/* PMDK writes back even on an auto-flush platform. */
		begin(d, len);
		memcpy(d, src, len);
		pmem_deep_flush(d, len);
		assert_int_equal(pmem_deep_drain(d, len), 0);
		rec_expect_durable(d, len, "pmem_deep_flush + pmem_deep_drain");

		begin(d, len);
		memcpy(d, src, len);
		assert_int_equal(pmem_deep_persist(d, len), 0);
		rec_expect_durable(d, len, "pmem_deep_persist");
	}
}

/* --- pmem_msync(): what the recorder cannot see, interposed ---------------- */

/*
 * pmem_msync() makes a file mapping durable through the page cache, where
 * no cache-line event tells the recorder anything. The drop-in is linked
 * into this test, so its msync() calls come here: each must be one
 * MS_SYNC call whose page-aligned range covers the caller's.
 */
static unsigned msync_calls;
static uintptr_t msync_start, msync_end;
static int msync_flags;

int msync(void *addr, size_t len, int flags)
{
	msync_calls++;
	msync_start = (uintptr_t)addr;
	msync_end = (uintptr_t)addr + len;
	msync_flags = flags;
	return (int)syscall(SYS_msync, addr, len, flags);
}

static void msync_function(void **state)
{
	uintptr_t page = (uintptr_t)sysconf(_SC_PAGESIZE);

	(void)state;
	for (size_t i = 0; i < ARRAY_SIZE(cases); i++) {
		unsigned char *d = buf + cases[i].off;
		size_t len = cases[i].len;

		msync_calls = 0;
		assert_int_equal(pmem_msync(d, len), 0);
		if (msync_calls != 1 || msync_flags != MS_SYNC ||
		    msync_start % page || msync_start > (uintptr_t)d ||
		    msync_end < (uintptr_t)d + len)
			fail_msg("pmem_msync(%p, %zu): %u msync() calls, the last "
				 "of [%#lx, %#lx) flags %#x; want one MS_SYNC "
				 "covering the range from a page boundary", d,
				 len, msync_calls, (unsigned long)msync_start,
				 (unsigned long)msync_end, msync_flags);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(msync_function),
		cmocka_unit_test(persist_functions),
		cmocka_unit_test(nodrain_functions),
		cmocka_unit_test(flag_combinations),
		cmocka_unit_test(deep_functions),
		cmocka_unit_test(nt_threshold),
	};

	return cmocka_run_group_tests(tests, setup, teardown);
}
