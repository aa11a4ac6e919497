/* SPDX-License-Identifier: MIT */
/*
 * record_util.h - assertions on the recorder's model (ntmem/check.h) for
 * the record suite's tests.
 *
 * "Durable" here is stricter than ntm_check_durable(): that accepts CLEAN
 * units (not stored since tracking), so a path whose stores the recorder
 * never saw would pass it. rec_expect_durable() wants every unit of the
 * range stored AND made durable: a deleted write-back leaves a unit DIRTY,
 * a deleted fence leaves it WB or NT, and a store the recorder did not
 * hear about leaves it CLEAN; each fails.
 *
 * Include after <cmocka.h>. Failures name the caller's file and line, the
 * range, every state's count and ntm_check_message().
 */
#ifndef NTMEM_TEST_RECORD_UTIL_H
#define NTMEM_TEST_RECORD_UTIL_H

#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <unistd.h>

#include <ntmem.h>
#include <ntmem/check.h>

static inline size_t rec_total(const struct ntm_check_counts *c)
{
	size_t t = 0;

	for (int s = 0; s < NTM_CHECK_NSTATES; s++)
		t += c->units[s];
	return t;
}

static inline void rec_query(const void *p, size_t n,
			     struct ntm_check_counts *c)
{
	int ret = ntm_check_query(p, n, c);

	if (ret)
		fail_msg("ntm_check_query(%p, %zu): %d (range not tracked?)",
			 p, n, ret);
}

/* Print the counts and the recorder's last message, then fail. */
static inline void __attribute__((format(printf, 7, 8)))
rec_fail(const char *file, int line, const void *p, size_t n,
	 const struct ntm_check_counts *c, const char *expected,
	 const char *fmt, ...)
{
	char what[256];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(what, sizeof(what), fmt, ap);
	va_end(ap);
	fail_msg("%s:%d: %s: [%p, +%zu) should be %s; units clean %zu "
		 "dirty %zu wb %zu nt %zu durable %zu; lines %zu written "
		 "back %zu (%zu write-backs); recorder: %s",
		 file, line, what, p, n, expected, c->units[NTM_CHECK_CLEAN],
		 c->units[NTM_CHECK_DIRTY], c->units[NTM_CHECK_WB],
		 c->units[NTM_CHECK_NT], c->units[NTM_CHECK_DURABLE], c->lines,
		 c->lines_written_back, c->writebacks, ntm_check_message());
}

/*
 * The expectations. Each is a macro so a failure names the line of the
 * test that stated it; the trailing arguments say which case it was.
 */

/* Every unit stored and durable. */
#define rec_expect_durable(p, n, ...)                                       \
	do {                                                                \
		struct ntm_check_counts c_;                                 \
		bool ok_ = ntm_check_durable((p), (n));                     \
                                                                            \
		rec_query((p), (n), &c_);                                   \
		if (!ok_ || c_.units[NTM_CHECK_DURABLE] != rec_total(&c_))  \
			rec_fail(__FILE__, __LINE__, (p), (n), &c_,         \
				 "durable, every unit", __VA_ARGS__);       \
	} while (0)

/*
 * Every unit stored, none left in the cache (ntm_memcpy_flush's contract)
 * and none durable yet: written back or non-temporal, waiting for a fence.
 */
#define rec_expect_pending(p, n, ...)                                       \
	do {                                                                \
		struct ntm_check_counts c_;                                 \
		bool ok_ = ntm_check_not_dirty((p), (n));                   \
                                                                            \
		rec_query((p), (n), &c_);                                   \
		if (!ok_ || c_.units[NTM_CHECK_WB] + c_.units[NTM_CHECK_NT] \
				    != rec_total(&c_))                      \
			rec_fail(__FILE__, __LINE__, (p), (n), &c_,         \
				 "written back or NT, not yet fenced",      \
				 __VA_ARGS__);                              \
	} while (0)

/* Every unit in state @st (DIRTY, CLEAN: what a path left alone). */
#define rec_expect_all(p, n, st, ...)                                       \
	do {                                                                \
		struct ntm_check_counts c_;                                 \
                                                                            \
		rec_query((p), (n), &c_);                                   \
		if (c_.units[(st)] != rec_total(&c_))                       \
			rec_fail(__FILE__, __LINE__, (p), (n), &c_,         \
				 ntm_check_state_name(st), __VA_ARGS__);    \
	} while (0)

/*
 * Namespaces of every kind the write paths distinguish, each a temporary
 * file (unlinked once mapped) or anonymous memory:
 *   anon   ntm_ns_anon(): persist writes back and fences (ordering only)
 *   shm    emulated on tmpfs (/dev/shm): CPU-durable, a fence suffices
 *          after ntm_memcpy_flush()
 *   disk   emulated on a disk file system (/tmp): write-back + fence, then
 *          msync()
 *   file   a plain file in /tmp: msync() only
 * rec_ns_create() returns NULL when the machine has no such place (the
 * caller skips): /dev/shm not tmpfs, /tmp not a disk file system.
 */
enum rec_ns_kind { REC_NS_ANON, REC_NS_SHM, REC_NS_DISK, REC_NS_FILE };

static const char *const rec_ns_names[] = { "anon", "shm", "disk", "file" };

static inline struct ntm_ns *rec_ns_create(enum rec_ns_kind k, size_t size)
{
	static unsigned seq;
	struct ntm_ns *ns = NULL;
	char path[96];
	int ret;

	if (k == REC_NS_ANON) {
		ret = ntm_ns_anon(&ns, size, 4096);
		if (ret)
			fail_msg("ntm_ns_anon: %d %s", ret, ntm_errmsg());
		return ns;
	}
	snprintf(path, sizeof(path), "%s/ntmem-record-%d-%u",
		 k == REC_NS_SHM ? "/dev/shm" : "/tmp", (int)getpid(), seq++);
	ret = ntm_ns_create(&ns, path, size, 4096,
			    (k == REC_NS_FILE ? 0 : NTM_NS_EMULATE) |
			    NTM_NS_TEMPORARY);
	if (ret)
		fail_msg("ntm_ns_create(%s): %d %s", path, ret, ntm_errmsg());
	/* tmpfs is CPU-durable, a disk file system is not */
	if (ntm_ns_cpu_durable(ns) != (k == REC_NS_SHM)) {
		ntm_ns_close(ns);
		return NULL;
	}
	return ns;
}

#endif /* NTMEM_TEST_RECORD_UTIL_H */
