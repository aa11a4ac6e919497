// SPDX-License-Identifier: MIT
/*
 * test_record_pmem2.c - the libpmem2 drop-in's durability (compat/libpmem2),
 * checked with the recorder (ntmem/check.h), not with bytes.
 *
 * The drop-in's sources are compiled into this program with NTM_RECORD
 * and linked with the recorder build (as test_record_pmem.c does for
 * libpmem's), so its calls into ntmem (NT copies, ntm_flush(),
 * ntm_drain()) report every NT store, write-back and fence. Before each
 * call the destination is marked DIRTY (ntm_check_store()), standing for
 * the ordinary stores the recorder cannot hear (the program's own, or
 * memmove()'s). A function that forgets a write-back leaves units DIRTY,
 * one that forgets its fence leaves them WB or NT (or, in a cpu_cache
 * domain, DIRTY), and rec_expect_durable() fails.
 *
 * A map of each store granularity (pmem2_map_from_existing() over the
 * tracked buffer), and for each, every function pmem2_get_*_fn() returns,
 * held to libpmem2's contract (pmem2_get_persist_fn(3),
 * pmem2_get_memcpy_fn(3)):
 *   - persist: the range durable on return;
 *   - flush, then drain: durable after the drain;
 *   - memmove/memcpy/memset with each of the 64 combinations of the
 *     PMEM2_F_MEM_* flags: durable on return; with NODRAIN after the
 *     map's drain; with NOFLUSH ("neither flush nor drain") the caller's
 *     business: every unit is still DIRTY and the map's persist then makes
 *     it durable;
 *   - pmem2_memcpy_async(), pmem2_memmove_async(), pmem2_memset_async()
 *     through the map's own mover: durable once the future is complete
 *     (polled until it is);
 *   - pmem2_deep_flush(): durable on return;
 *   - pmem2_source_pwrite_mcsafe() to a devdax device: durable before the
 *     call unmaps the window it mapped for the copy. /dev/zero stands in
 *     for the device (a fake sysfs tree, NTMEM_SYSFS_ROOT, says it is
 *     dax0.0), and mmap() and munmap() are interposed: the window is
 *     tracked when it is mapped and judged when it is unmapped.
 * The model's domain is the granularity's: BYTE means the CPU cache is in
 * the persistence domain (eADR), so the model is set to cpu_cache, where
 * a store needs only its thread's fence; CACHE_LINE and PAGE are
 * memory_controller (ADR), where it needs a write-back too.
 *
 * PAGE persists with msync(), through the page cache, which no cache-line
 * event shows. The drop-in is linked into this test, so its msync() calls
 * come here (as in test_record_pmem.c): one that succeeds with MS_SYNC
 * stands for the pages reaching the file, and is recorded as a write-back
 * and fence of exactly the range it was given (ntm_persist()). A range
 * not page aligned fails in the kernel and makes nothing durable; one
 * that misses part of the caller's leaves that part DIRTY.
 */
#define _GNU_SOURCE
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <fcntl.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <ntmem/check.h>

#define PMEM2_USE_MINIASYNC 1	/* the asynchronous copies too */
#include "libpmem2.h"
#include "../lib/record_util.h"
#include "../lib/testutil.h"
#include "../lib/sysfs_tree.h"

#define BUF_SIZE ((size_t)64 << 10)
#define ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))
#define ALL_FLAGS 64u	/* the six PMEM2_F_MEM_* bits */

static unsigned char *buf;	/* tracked: the "pmem" */
static unsigned char *src;	/* not tracked */

static const struct {
	enum pmem2_granularity g;
	const char *name;
} grans[] = {
	{ PMEM2_GRANULARITY_BYTE, "BYTE" },
	{ PMEM2_GRANULARITY_CACHE_LINE, "CACHE_LINE" },
	{ PMEM2_GRANULARITY_PAGE, "PAGE" },
};

/* Destinations: offset into buf and length; odd, aligned, short, long. */
static const struct {
	size_t off, len;
} cases[] = {
	{ 0, 8 }, { 0, 64 }, { 3, 100 }, { 8, 256 }, { 5, 1000 },
	{ 0, 4096 }, { 61, 4099 }, { 4096 + 7, 20001 },
};

/* --- msync(): the page cache, interposed --------------------------------- */

static unsigned msync_calls;

int msync(void *addr, size_t len, int flags)
{
	int ret = (int)syscall(SYS_msync, addr, len, flags);

	msync_calls++;
	if (ret == 0 && (flags & MS_SYNC))
		ntm_persist(addr, len);
	return ret;
}

/*
 * mmap() and munmap() of the mcsafe case: a mapping of @mc_fd is tracked
 * from its mmap(); at its munmap() whether every unit is CLEAN or DURABLE
 * is kept (mc_durable, with the recorder's message) and it is untracked.
 * Every other mapping (the recorder's own shadows, anonymous) passes.
 */
static int mc_fd = -1;
static void *mc_base;
static size_t mc_len;
static unsigned mc_unmaps;
static bool mc_durable;
static char mc_why[256];

void *mmap(void *addr, size_t len, int prot, int flags, int fd, off_t off)
{
	void *p = (void *)syscall(SYS_mmap, addr, len, prot, flags, fd, off);

	if (fd >= 0 && fd == mc_fd && p != MAP_FAILED && !mc_base &&
	    ntm_check_track(p, len) == 0) {
		mc_base = p;
		mc_len = len;
	}
	return p;
}

int munmap(void *addr, size_t len)
{
	if (mc_base && addr == mc_base) {
		mc_durable = ntm_check_durable(mc_base, mc_len);
		snprintf(mc_why, sizeof(mc_why), "%s",
			 mc_durable ? "" : ntm_check_message());
		mc_unmaps++;
		ntm_check_untrack(mc_base);
		mc_base = NULL;
	}
	return (int)syscall(SYS_munmap, addr, len);
}

/* --- the maps -------------------------------------------------------------- */

struct gmap {
	struct pmem2_source *src;
	struct pmem2_map *map;
	pmem2_persist_fn persist;
	pmem2_flush_fn flush;
	pmem2_drain_fn drain;
	pmem2_memmove_fn memmove;
	pmem2_memcpy_fn memcpy;
	pmem2_memset_fn memset;
	const char *name;
};

/* A map of granularity grans[@i] over buf, of anonymous memory or @fd. */
static void gmap_open(struct gmap *m, size_t i, int fd)
{
	if (fd >= 0)
		assert_int_equal(pmem2_source_from_fd(&m->src, fd), 0);
	else
		assert_int_equal(pmem2_source_from_anon(&m->src, BUF_SIZE), 0);
	assert_int_equal(pmem2_map_from_existing(&m->map, m->src, buf,
						 BUF_SIZE, grans[i].g), 0);
	m->persist = pmem2_get_persist_fn(m->map);
	m->flush = pmem2_get_flush_fn(m->map);
	m->drain = pmem2_get_drain_fn(m->map);
	m->memmove = pmem2_get_memmove_fn(m->map);
	m->memcpy = pmem2_get_memcpy_fn(m->map);
	m->memset = pmem2_get_memset_fn(m->map);
	m->name = grans[i].name;
}

static void gmap_close(struct gmap *m)
{
	assert_int_equal(pmem2_map_delete(&m->map), 0);
	assert_int_equal(pmem2_source_delete(&m->src), 0);
}

/* Begin a case: the model clean in @g's domain, the stores-to-be DIRTY. */
static void begin(enum pmem2_granularity g, void *d, size_t len)
{
	ntm_check_reset();
	assert_int_equal(ntm_check_set_domain(g == PMEM2_GRANULARITY_BYTE
					      ? NTM_PERSIST_CPU_CACHE
					      : NTM_PERSIST_MEMORY_CONTROLLER),
			 0);
	ntm_check_store(d, len);
}

static int setup(void **state)
{
	(void)state;
	buf = tu_map_fenced(BUF_SIZE);
	src = malloc(BUF_SIZE);
	if (!buf || !src)
		return -1;
	tu_fill_random(src, BUF_SIZE, 0x5eed2);
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

/* --- persist, flush + drain -------------------------------------------------- */

static void persist_flush_drain(void **state)
{
	(void)state;
	for (size_t g = 0; g < ARRAY_SIZE(grans); g++) {
		struct gmap m;

		gmap_open(&m, g, -1);
		for (size_t i = 0; i < ARRAY_SIZE(cases); i++) {
			unsigned char *d = buf + cases[i].off;
			size_t len = cases[i].len;

			begin(grans[g].g, d, len);
			m.persist(d, len);
			rec_expect_durable(d, len, "%s persist off %zu len %zu",
					   m.name, cases[i].off, len);

			begin(grans[g].g, d, len);
			m.flush(d, len);
			m.drain();
			rec_expect_durable(d, len, "%s flush + drain off %zu "
					   "len %zu", m.name, cases[i].off, len);
		}
		gmap_close(&m);
	}
}

/* --- the copies, every flag combination ---------------------------------------- */

enum copy_fn { COPY_MEMMOVE, COPY_MEMCPY, COPY_MEMSET, COPY_OVERLAP };

static const char *const copy_names[] = {
	"memmove", "memcpy", "memset", "memmove (overlapping)",
};

static void copy(const struct gmap *m, enum copy_fn fn, unsigned char *d,
		 size_t len, unsigned flags)
{
	switch (fn) {
	case COPY_MEMMOVE:
		m->memmove(d, src, len, flags);
		break;
	case COPY_MEMCPY:
		m->memcpy(d, src, len, flags);
		break;
	case COPY_MEMSET:
		m->memset(d, 0xa5, len, flags);
		break;
	case COPY_OVERLAP:
		/* From 40 bytes further on in the map: source and destination
		 * overlap whenever len > 40. */
		m->memmove(d, d + 40, len, flags);
		break;
	}
}

static void copy_flags(void **state)
{
	(void)state;
	for (size_t g = 0; g < ARRAY_SIZE(grans); g++) {
		struct gmap m;

		gmap_open(&m, g, -1);
		for (int fn = COPY_MEMMOVE; fn <= COPY_OVERLAP; fn++)
		for (unsigned flags = 0; flags < ALL_FLAGS; flags++)
		for (size_t i = 0; i < ARRAY_SIZE(cases); i++) {
			unsigned char *d = buf + cases[i].off;
			size_t len = cases[i].len;
			const char *what = copy_names[fn];

			begin(grans[g].g, d, len);
			copy(&m, (enum copy_fn)fn, d, len, flags);
			if (flags & PMEM2_F_MEM_NOFLUSH) {
				/* Neither flush nor drain: the caller's. */
				rec_expect_all(d, len, NTM_CHECK_DIRTY, "%s %s "
					       "flags %#x len %zu: NOFLUSH",
					       m.name, what, flags, len);
				m.persist(d, len);
			} else if (flags & PMEM2_F_MEM_NODRAIN) {
				m.drain();
			}
			rec_expect_durable(d, len, "%s %s flags %#x off %zu "
					   "len %zu", m.name, what, flags,
					   cases[i].off, len);
		}
		gmap_close(&m);
	}
}

/* --- the asynchronous copies, the map's own mover ------------------------------ */

static void poll_to_complete(struct pmem2_future *f, const char *what)
{
	for (int i = 0; i < 1000; i++)
		if (future_poll(FUTURE_AS_RUNNABLE(f), NULL) ==
		    FUTURE_STATE_COMPLETE)
			return;
	fail_msg("%s: not complete after 1000 polls", what);
}

static void async_copies(void **state)
{
	(void)state;
	for (size_t g = 0; g < ARRAY_SIZE(grans); g++) {
		struct gmap m;

		gmap_open(&m, g, -1);
		for (int fn = COPY_MEMMOVE; fn <= COPY_MEMSET; fn++)
		for (size_t i = 0; i < ARRAY_SIZE(cases); i++) {
			unsigned char *d = buf + cases[i].off;
			size_t len = cases[i].len;
			struct pmem2_future f;

			begin(grans[g].g, d, len);
			f = fn == COPY_MEMMOVE
			    ? pmem2_memmove_async(m.map, d, src, len, 0)
			    : fn == COPY_MEMCPY
			    ? pmem2_memcpy_async(m.map, d, src, len, 0)
			    : pmem2_memset_async(m.map, d, 0x3c, len, 0);
			poll_to_complete(&f, copy_names[fn]);
			/*
			 * pmem2_async(3): "by the time the future is complete,
			 * all the data is safely written into a persistent
			 * domain" -- on BYTE too, where the map's persist step
			 * is the fence (async.c).
			 */
			rec_expect_durable(d, len, "%s %s_async off %zu len %zu",
					   m.name, copy_names[fn], cases[i].off,
					   len);
		}
		gmap_close(&m);
	}
}

/* --- pmem2_deep_flush ------------------------------------------------------------ */

/*
 * Durable on return, on a map of a file and on a PAGE map of anonymous
 * memory; refused (PMEM2_E_NOSUPP, as PMDK) on an anonymous map of the
 * other granularities, which has no device to flush. A file's
 * deep flush also syncs the file (PMDK's pmem2_deep_flush() msync()s a
 * non-devdax file, for what the file system keeps of it), which the
 * recorder cannot see: at least one msync() call on every granularity.
 */
static void deep_flush(void **state)
{
	char path[] = "/tmp/ntmem-record-pmem2-XXXXXX";
	int fd = mkstemp(path);

	(void)state;
	assert_true(fd >= 0);
	unlink(path);
	assert_int_equal(ftruncate(fd, (off_t)BUF_SIZE), 0);
	for (int with_file = 0; with_file <= 1; with_file++)
	for (size_t g = 0; g < ARRAY_SIZE(grans); g++) {
		struct gmap m;

		gmap_open(&m, g, with_file ? fd : -1);
		for (size_t i = 0; i < ARRAY_SIZE(cases); i++) {
			unsigned char *d = buf + cases[i].off;
			size_t len = cases[i].len;

			begin(grans[g].g, d, len);
			msync_calls = 0;
			/*
			 * Anonymous memory has no device: PMEM2_E_NOSUPP, as
			 * PMDK (a PAGE map: 0, its persist's msync()).
			 */
			if (!with_file &&
			    grans[g].g != PMEM2_GRANULARITY_PAGE) {
				assert_int_equal(pmem2_deep_flush(m.map, d, len),
						 PMEM2_E_NOSUPP);
				continue;
			}
			assert_int_equal(pmem2_deep_flush(m.map, d, len), 0);
			rec_expect_durable(d, len, "%s pmem2_deep_flush (%s) off "
					   "%zu len %zu", m.name, with_file
					   ? "file" : "anonymous", cases[i].off,
					   len);
			if (with_file && msync_calls == 0)
				fail_msg("%s pmem2_deep_flush of a file's map: "
					 "no msync()", m.name);
		}
		gmap_close(&m);
	}
	close(fd);
}

/* --- pmem2_source_pwrite_mcsafe to a devdax device ----------------------------- */

/* /dev/zero (1:5) as a dax device of 16 MiB, 4 KiB aligned. */
static void zero_dax_tree(const char *root)
{
	st_put(root, "dev/char/1:5/size", "16777216\n");
	st_put(root, "dev/char/1:5/device/align", "4096\n");
	st_link(root, "dev/char/1:5/subsystem", "../../../class/dax");
}

static void mcsafe_devdax(void **state)
{
	/*
	 * Inside the first page: the window then starts at offset 0. A
	 * MAP_SHARED mapping of /dev/zero at a later offset faults when read
	 * (past its shmem object), and tracking reads the window.
	 */
	static const size_t offsets[] = { 0, 100, 4095 };
	char root[128];
	struct pmem2_source *s;

	(void)state;
	assert_int_equal(tu_scratch_dir(root, sizeof(root),
					"ntmem-record-pmem2"), 0);
	zero_dax_tree(root);
	assert_int_equal(setenv("NTMEM_SYSFS_ROOT", root, 1), 0);
	mc_fd = open("/dev/zero", O_RDWR | O_CLOEXEC);
	assert_true(mc_fd >= 0);
	assert_int_equal(pmem2_source_from_fd(&s, mc_fd), 0);
	for (size_t i = 0; i < ARRAY_SIZE(offsets); i++)
		for (size_t len = 1; len <= 8192; len *= 8) {
			mc_unmaps = 0;
			ntm_check_reset();
			ntm_check_set_domain(NTM_PERSIST_MEMORY_CONTROLLER);
			assert_int_equal(pmem2_source_pwrite_mcsafe(s, src, len,
								    offsets[i]), 0);
			if (mc_unmaps != 1 || !mc_durable)
				fail_msg("pmem2_source_pwrite_mcsafe(%zu bytes at "
					 "%zu): %u windows unmapped, durable %d: %s",
					 len, offsets[i], mc_unmaps, mc_durable,
					 mc_why);
		}
	assert_int_equal(pmem2_source_delete(&s), 0);
	close(mc_fd);
	mc_fd = -1;
	unsetenv("NTMEM_SYSFS_ROOT");
	assert_int_equal(tu_remove_tree(root), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(persist_flush_drain),
		cmocka_unit_test(copy_flags),
		cmocka_unit_test(async_copies),
		cmocka_unit_test(deep_flush),
		cmocka_unit_test(mcsafe_devdax),
	};

	return cmocka_run_group_tests(tests, setup, teardown);
}
