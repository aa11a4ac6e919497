// SPDX-License-Identifier: MIT
/*
 * test_record_ns.c - ntm_ns_persist() of every namespace kind, checked
 * with the recorder (ntmem/check.h) and, where the recorder cannot see,
 * with msync() interposed.
 *
 * Each case stores to a range at an odd offset and of an odd length (the
 * test's own memset, reported with ntm_check_store(): the recorder does
 * not see plain stores), then persists exactly that range:
 *
 *   anon   every unit the range touches DURABLE: write-back and fence,
 *          ordering only, as ns.h says; no msync()
 *   shm    (emulated on tmpfs) the same: the page cache is the medium
 *   disk   (emulated on /tmp, a disk file system) DURABLE as well, and
 *          then msync(MS_SYNC) of the pages holding the range, called
 *          after the fence: the range was already durable in the model
 *          when msync() began, as on the pmem the file stands for
 *   file   (plain file) msync(MS_SYNC) of the pages holding the range.
 *          The recorder models the CPU cache, and on a plain file the
 *          page cache - not the cache lines - is what msync() writes to
 *          disk: the recorder sees no write-back and no fence, so the
 *          units stay DIRTY (asserted, so a change of that design shows
 *          up here), and whether the pages reached the disk it cannot
 *          see at all. The interposed msync() checks what can be seen:
 *          called, synchronous, covering the range.
 */
#define _GNU_SOURCE
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <ntmem.h>
#include <ntmem/check.h>

#include "../lib/record_util.h"

#define KiB ((size_t)1 << 10)
#define NS_SIZE (64 * KiB)
#define ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))

/* --- msync(), interposed: the library is linked statically into us ------ */

static struct {
	unsigned calls;
	uintptr_t addr;		/* of the last call */
	size_t len;
	int flags;
	const void *watch;	/* the range persisted: was it durable... */
	size_t watch_n;
	bool watch_durable;	/* ...when the first msync() began? */
} ms;

int msync(void *addr, size_t len, int flags)
{
	if (ms.watch && ms.calls == 0) {
		struct ntm_check_counts c;

		ms.watch_durable = ntm_check_query(ms.watch, ms.watch_n, &c) == 0 &&
				   c.units[NTM_CHECK_DURABLE] == rec_total(&c);
	}
	ms.calls++;
	ms.addr = (uintptr_t)addr;
	ms.len = len;
	ms.flags = flags;
	return (int)syscall(SYS_msync, addr, len, flags);
}

/* --- cases -------------------------------------------------------------- */

struct range {
	size_t off, len;
};

/*
 * Odd offsets and lengths: within one unit, across a unit, a line, a
 * page, ending one byte into the next line, the last bytes, everything.
 */
static const struct range ranges[] = {
	{ 0, 1 }, { 1, 7 }, { 7, 2 }, { 3, 64 }, { 63, 2 }, { 60, 70 },
	{ 100, 1000 }, { 4095, 2 }, { 4097, 8191 }, { 5, 4155 },
	{ NS_SIZE - 5, 5 }, { 0, NS_SIZE },
};

static void persist_kind(enum rec_ns_kind k)
{
	struct ntm_ns *ns = rec_ns_create(k, NS_SIZE);
	unsigned char *base;
	long pg = sysconf(_SC_PAGESIZE);

	if (!ns)
		skip();		/* no such file system here */
	base = ntm_ns_base(ns);
	assert_int_equal(ntm_check_track(base, NS_SIZE), 0);
	ntm_check_start();
	for (size_t i = 0; i < ARRAY_SIZE(ranges); i++) {
		unsigned char *p = base + ranges[i].off;
		size_t n = ranges[i].len;
		uintptr_t end = (uintptr_t)p + n;

		ntm_check_reset();
		memset(p, 0xa5 ^ (int)i, n);
		ntm_check_store(p, n);
		memset(&ms, 0, sizeof(ms));
		ms.watch = p, ms.watch_n = n;
		assert_int_equal(ntm_ns_persist(ns, p, n), 0);

		if (k == REC_NS_FILE) {
			/* No CPU write-back or fence: see the top of the file. */
			struct ntm_check_counts c;

			rec_expect_all(p, n, NTM_CHECK_DIRTY, "file: %zu+%zu",
				       ranges[i].off, n);
			rec_query(p, n, &c);
			assert_int_equal(c.writebacks, 0);
		} else {
			rec_expect_durable(p, n, "%s: persist %zu+%zu",
					   rec_ns_names[k], ranges[i].off, n);
		}

		if (k == REC_NS_ANON || k == REC_NS_SHM) {
			if (ms.calls)
				fail_msg("%s: persist %zu+%zu called msync()",
					 rec_ns_names[k], ranges[i].off, n);
			continue;
		}
		if (ms.calls != 1 || ms.flags != MS_SYNC || ms.addr % pg ||
		    ms.addr > (uintptr_t)p || ms.addr + ms.len < end)
			fail_msg("%s: persist %zu+%zu: want one msync(MS_SYNC) "
				 "of whole pages covering [%p, +%zu); got %u "
				 "calls, the last %#lx+%zu flags %d",
				 rec_ns_names[k], ranges[i].off, n, (void *)p, n,
				 ms.calls, (unsigned long)ms.addr, ms.len,
				 ms.flags);
		if (k == REC_NS_DISK && !ms.watch_durable)
			fail_msg("disk: persist %zu+%zu: msync() began before "
				 "the range was written back and fenced",
				 ranges[i].off, n);
	}
	ntm_check_stop();
	ntm_check_untrack(base);
	ntm_ns_close(ns);
}

/* @state: the kind (main() names each test after it). */
static void persist(void **state)
{
	persist_kind(*(const enum rec_ns_kind *)*state);
}

int main(void)
{
	static const enum rec_ns_kind kinds[] = { REC_NS_ANON, REC_NS_SHM,
						  REC_NS_DISK, REC_NS_FILE };
	/* One test per kind, named after it; the kind is its state. */
#define PERSIST(i, kind) { .name = "persist_" kind, .test_func = persist, \
			   .initial_state = (void *)&kinds[i] }
	const struct CMUnitTest tests[] = {
		PERSIST(0, "anon"), PERSIST(1, "shm"), PERSIST(2, "disk"),
		PERSIST(3, "file"),
	};
#undef PERSIST

	return cmocka_run_group_tests(tests, NULL, NULL);
}
