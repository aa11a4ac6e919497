// SPDX-License-Identifier: MIT
/*
 * test_pmem2_vm_reservation.c - the libpmem2 drop-in's virtual-memory
 * reservations, on ntmem's own header: every error path with its code
 * and message and nothing changed, maps into and out of a reservation
 * (the placeholder back after each), and what PMDK 1.12.1 gets wrong but
 * the man pages promise: shrink frees the pages it removes, delete frees
 * all, and an extension over another mapping is refused.
 * (pmem2_rsv_interop.c compares the codes with Debian's library.)
 *
 *   test_pmem2_vm_reservation            the cmocka cases
 *   test_pmem2_vm_reservation threads    many threads mapping, unmapping
 *                                        and finding in one reservation
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <sched.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include <cmocka.h>

#include <libpmem2.h>

#ifndef MAP_FIXED_NOREPLACE
#define MAP_FIXED_NOREPLACE 0x100000
#endif

#define PAGE ((size_t)4096)
#define HUGE ((size_t)2 << 20)

/* Whether anything (a placeholder counts) is mapped in [addr, +len). */
static bool taken(void *addr, size_t len)
{
	void *p = mmap(addr, len, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS |
		       MAP_FIXED_NOREPLACE, -1, 0);

	if (p == MAP_FAILED)
		return errno == EEXIST;
	munmap(p, len);
	return p != addr;
}

static bool msg_has(const char *what)
{
	if (strstr(pmem2_errormsg(), what))
		return true;
	print_error("message \"%s\" lacks \"%s\"\n", pmem2_errormsg(), what);
	return false;
}

static struct pmem2_source *anon(void)
{
	struct pmem2_source *src;

	assert_int_equal(pmem2_source_from_anon(&src, 64 * PAGE), 0);
	return src;
}

/* Map @len bytes of @src into @rsv at @offset: the code, the map in *@m. */
static int map_in(struct pmem2_vm_reservation *rsv, size_t offset,
		  size_t len, struct pmem2_source *src, struct pmem2_map **m)
{
	struct pmem2_config *cfg;
	int ret;

	assert_int_equal(pmem2_config_new(&cfg), 0);
	pmem2_config_set_required_store_granularity(cfg, PMEM2_GRANULARITY_PAGE);
	pmem2_config_set_length(cfg, len);
	assert_int_equal(pmem2_config_set_vm_reservation(cfg, rsv, offset), 0);
	*m = (struct pmem2_map *)1;
	ret = pmem2_map_new(m, cfg, src);
	pmem2_config_delete(&cfg);
	if (ret)
		assert_null(*m);
	return ret;
}

static char *rsv_at(struct pmem2_vm_reservation *rsv, size_t offset)
{
	return (char *)pmem2_vm_reservation_get_address(rsv) + offset;
}

static void test_new_errors(void **state)
{
	struct pmem2_vm_reservation *rsv = (void *)1;
	char *plain, *hole;

	(void)state;
	assert_int_equal(pmem2_vm_reservation_new(&rsv, NULL, PAGE + 1),
			 PMEM2_E_LENGTH_UNALIGNED);
	assert_null(rsv);
	assert_true(msg_has("pmem2_vm_reservation_new: size 4097"));
	rsv = (void *)1;
	assert_int_equal(pmem2_vm_reservation_new(&rsv, (void *)(PAGE + 1),
						  PAGE),
			 PMEM2_E_ADDRESS_UNALIGNED);
	assert_null(rsv);
	assert_true(msg_has("addr 0x1001"));

	plain = mmap(NULL, 4 * PAGE, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS,
		     -1, 0);
	assert_true(plain != MAP_FAILED);
	rsv = (void *)1;
	assert_int_equal(pmem2_vm_reservation_new(&rsv, plain + PAGE,
						  4 * PAGE),
			 PMEM2_E_MAPPING_EXISTS);
	assert_null(rsv);
	assert_true(msg_has("overlaps an existing mapping"));
	/* The plain mapping is untouched. */
	assert_int_equal(plain[PAGE], 0);
	munmap(plain, 4 * PAGE);

	/* Exactly the range asked for, and only that, is taken. */
	hole = mmap(NULL, 6 * PAGE, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS,
		    -1, 0);
	assert_true(hole != MAP_FAILED);
	munmap(hole, 6 * PAGE);
	assert_int_equal(pmem2_vm_reservation_new(&rsv, hole + PAGE, 4 * PAGE),
			 0);
	assert_ptr_equal(pmem2_vm_reservation_get_address(rsv), hole + PAGE);
	assert_int_equal(pmem2_vm_reservation_get_size(rsv), 4 * PAGE);
	assert_true(taken(hole + PAGE, 4 * PAGE));
	assert_false(taken(hole, PAGE));
	assert_false(taken(hole + 5 * PAGE, PAGE));
	assert_int_equal(pmem2_vm_reservation_delete(&rsv), 0);
	assert_null(rsv);
	assert_false(taken(hole + PAGE, 4 * PAGE));
}

static void test_new_sizes(void **state)
{
	struct pmem2_vm_reservation *rsv;
	char *addr;

	(void)state;
	/* Empty: an address, nothing held; it can grow. */
	assert_int_equal(pmem2_vm_reservation_new(&rsv, NULL, 0), 0);
	assert_int_equal(pmem2_vm_reservation_get_size(rsv), 0);
	addr = pmem2_vm_reservation_get_address(rsv);
	assert_non_null(addr);
	assert_int_equal(pmem2_vm_reservation_extend(rsv, 0), 0);
	assert_int_equal(pmem2_vm_reservation_extend(rsv, PAGE), 0);
	assert_int_equal(pmem2_vm_reservation_get_size(rsv), PAGE);
	assert_true(taken(addr, PAGE));
	assert_int_equal(pmem2_vm_reservation_delete(&rsv), 0);
	assert_false(taken(addr, PAGE));

	/* 2 MiB and more start on a 2 MiB boundary, and hold no more. */
	assert_int_equal(pmem2_vm_reservation_new(&rsv, NULL, HUGE + PAGE), 0);
	addr = pmem2_vm_reservation_get_address(rsv);
	assert_int_equal((uintptr_t)addr % HUGE, 0);
	assert_int_equal(pmem2_vm_reservation_get_size(rsv), HUGE + PAGE);
	assert_false(taken(addr + HUGE + PAGE, PAGE));
	assert_int_equal(pmem2_vm_reservation_delete(&rsv), 0);
	assert_false(taken(addr, HUGE + PAGE));
}

/*
 * A size whose alignment slack, or whose end, would wrap past the top of
 * the address space: -ENOMEM, what mmap() says of a length no process can
 * have, and nothing reserved. (PMDK 1.12.1 reserves 1 GiB for SIZE_MAX -
 * 4095 and shows the whole size: a map into it lands on other memory.)
 */
static void test_sizes_that_wrap(void **state)
{
	static const size_t sizes[] = {
		SIZE_MAX & ~(PAGE - 1),			/* + 2 MiB wraps */
		(SIZE_MAX & ~(PAGE - 1)) - HUGE + PAGE,	/* to 0 exactly */
		(size_t)1 << 62,			/* no wrap, too big */
	};
	struct pmem2_vm_reservation *rsv;
	char *base;

	(void)state;
	for (size_t i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++) {
		rsv = (void *)1;
		assert_int_equal(pmem2_vm_reservation_new(&rsv, NULL, sizes[i]),
				 -ENOMEM);
		assert_null(rsv);
		assert_true(msg_has("no such range of address space"));
	}
	/* At an address: its end wraps. */
	rsv = (void *)1;
	assert_int_equal(pmem2_vm_reservation_new(&rsv, (void *)(64 * HUGE),
						  sizes[0]), -ENOMEM);
	assert_null(rsv);

	/* An extension that would wrap: refused, the reservation as it was. */
	assert_int_equal(pmem2_vm_reservation_new(&rsv, NULL, 4 * PAGE), 0);
	base = pmem2_vm_reservation_get_address(rsv);
	for (size_t i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++) {
		assert_int_equal(pmem2_vm_reservation_extend(rsv, sizes[i]),
				 -ENOMEM);
		assert_true(msg_has("pmem2_vm_reservation_extend: size"));
		assert_int_equal(pmem2_vm_reservation_get_size(rsv), 4 * PAGE);
		assert_ptr_equal(pmem2_vm_reservation_get_address(rsv), base);
	}
	/* A shrink whose end wraps is past the end (PMDK: NOSUPP). */
	assert_int_equal(pmem2_vm_reservation_shrink(rsv, PAGE, sizes[0]),
			 PMEM2_E_LENGTH_OUT_OF_RANGE);
	assert_int_equal(pmem2_vm_reservation_get_size(rsv), 4 * PAGE);
	assert_true(taken(base, 4 * PAGE));
	assert_int_equal(pmem2_vm_reservation_delete(&rsv), 0);
	assert_false(taken(base, 4 * PAGE));
}

static void test_map_errors(void **state)
{
	struct pmem2_vm_reservation *rsv;
	struct pmem2_source *src = anon();
	struct pmem2_map *a, *m;

	(void)state;
	assert_int_equal(pmem2_vm_reservation_new(&rsv, NULL, 8 * PAGE), 0);
	assert_int_equal(map_in(rsv, 2 * PAGE, 2 * PAGE, src, &a), 0);
	assert_ptr_equal(pmem2_map_get_address(a), rsv_at(rsv, 2 * PAGE));

	assert_int_equal(map_in(rsv, 3 * PAGE, 2 * PAGE, src, &m),
			 PMEM2_E_MAPPING_EXISTS);
	assert_true(msg_has("reservation offset 12288 + length 8192 overlaps"));
	assert_int_equal(map_in(rsv, PAGE, 2 * PAGE, src, &m),
			 PMEM2_E_MAPPING_EXISTS);
	assert_int_equal(map_in(rsv, PAGE + 1, PAGE, src, &m),
			 PMEM2_E_OFFSET_UNALIGNED);
	assert_true(msg_has("reservation offset 4097 is not a multiple"));
	assert_int_equal(map_in(rsv, 6 * PAGE, 4 * PAGE, src, &m),
			 PMEM2_E_LENGTH_OUT_OF_RANGE);
	assert_true(msg_has("past the reservation's end (32768 bytes)"));
	assert_int_equal(map_in(rsv, 8 * PAGE, PAGE, src, &m),
			 PMEM2_E_LENGTH_OUT_OF_RANGE);
	assert_int_equal(map_in(rsv, SIZE_MAX & ~(PAGE - 1), PAGE, src, &m),
			 PMEM2_E_LENGTH_OUT_OF_RANGE);
	/* The source's own checks come first. */
	assert_int_equal(map_in(rsv, PAGE + 1, 128 * PAGE, src, &m),
			 PMEM2_E_MAP_RANGE);

	/* None of these touched a or the placeholder around it. */
	memset(pmem2_map_get_address(a), 'a', 2 * PAGE);
	assert_true(taken(rsv_at(rsv, 0), 8 * PAGE));
	assert_int_equal(pmem2_vm_reservation_map_find_first(rsv, &m), 0);
	assert_ptr_equal(m, a);
	assert_int_equal(pmem2_vm_reservation_map_find_last(rsv, &m), 0);
	assert_ptr_equal(m, a);

	assert_int_equal(pmem2_vm_reservation_delete(&rsv),
			 PMEM2_E_VM_RESERVATION_NOT_EMPTY);
	assert_non_null(rsv);
	assert_true(msg_has("still holds 1 mapping(s)"));
	assert_int_equal(rsv_at(rsv, 2 * PAGE)[0], 'a');

	/* Delete: the placeholder is back, and the range maps again. */
	assert_int_equal(pmem2_map_delete(&a), 0);
	assert_null(a);
	assert_true(taken(rsv_at(rsv, 2 * PAGE), 2 * PAGE));
	assert_int_equal(pmem2_vm_reservation_map_find(rsv, 0, 8 * PAGE, &m),
			 PMEM2_E_MAPPING_NOT_FOUND);
	assert_int_equal(map_in(rsv, 2 * PAGE, 2 * PAGE, src, &a), 0);
	assert_int_equal(((char *)pmem2_map_get_address(a))[0], 0);
	assert_int_equal(pmem2_map_delete(&a), 0);
	assert_int_equal(pmem2_vm_reservation_delete(&rsv), 0);
	pmem2_source_delete(&src);
}

/* A map refused after its mmap (granularity) leaves the placeholder. */
static void test_failed_map_keeps_placeholder(void **state)
{
	char path[256];
	const char *dir = getenv("TMPDIR");
	struct pmem2_vm_reservation *rsv;
	struct pmem2_source *src;
	struct pmem2_config *cfg;
	struct pmem2_map *m = (void *)1;
	int fd;

	(void)state;
	snprintf(path, sizeof(path), "%s/pmem2_rsv_XXXXXX", dir ? dir : "/tmp");
	fd = mkstemp(path);
	assert_true(fd >= 0);
	unlink(path);
	assert_int_equal(ftruncate(fd, 4 * PAGE), 0);
	assert_int_equal(pmem2_source_from_fd(&src, fd), 0);
	assert_int_equal(pmem2_vm_reservation_new(&rsv, NULL, 4 * PAGE), 0);
	assert_int_equal(pmem2_config_new(&cfg), 0);
	pmem2_config_set_required_store_granularity(cfg,
						    PMEM2_GRANULARITY_BYTE);
	pmem2_config_set_vm_reservation(cfg, rsv, 0);
	assert_int_equal(pmem2_map_new(&m, cfg, src),
			 PMEM2_E_GRANULARITY_NOT_SUPPORTED);
	assert_null(m);
	assert_true(taken(rsv_at(rsv, 0), 4 * PAGE));
	assert_int_equal(pmem2_vm_reservation_map_find_first(rsv, &m),
			 PMEM2_E_MAPPING_NOT_FOUND);
	/* The lock was let go: the same range maps now, at page granularity. */
	pmem2_config_set_required_store_granularity(cfg, PMEM2_GRANULARITY_PAGE);
	assert_int_equal(pmem2_map_new(&m, cfg, src), 0);
	assert_ptr_equal(pmem2_map_get_address(m), rsv_at(rsv, 0));
	memcpy(pmem2_map_get_address(m), "rsv", 3);
	pmem2_get_persist_fn(m)(pmem2_map_get_address(m), 3);
	assert_int_equal(pmem2_map_delete(&m), 0);
	assert_int_equal(pread(fd, path, 3, 0), 3);
	assert_memory_equal(path, "rsv", 3);
	/* A NULL reservation maps anywhere again. */
	pmem2_config_set_vm_reservation(cfg, NULL, 0);
	assert_int_equal(pmem2_map_new(&m, cfg, src), 0);
	assert_int_equal(pmem2_map_delete(&m), 0);
	pmem2_config_delete(&cfg);
	assert_int_equal(pmem2_vm_reservation_delete(&rsv), 0);
	pmem2_source_delete(&src);
	close(fd);
}

static void test_find(void **state)
{
	struct pmem2_vm_reservation *rsv;
	struct pmem2_source *src = anon();
	struct pmem2_map *a, *b, *c, *m = (void *)1;

	(void)state;
	assert_int_equal(pmem2_vm_reservation_new(&rsv, NULL, 16 * PAGE), 0);
	assert_int_equal(pmem2_vm_reservation_map_find_first(rsv, &m),
			 PMEM2_E_MAPPING_NOT_FOUND);
	assert_null(m);
	assert_true(msg_has("pmem2_vm_reservation_map_find_first: the "
			    "reservation holds no mapping"));
	m = (void *)1;
	assert_int_equal(pmem2_vm_reservation_map_find_last(rsv, &m),
			 PMEM2_E_MAPPING_NOT_FOUND);
	assert_null(m);
	/* Mapped out of order: found in address order. */
	assert_int_equal(map_in(rsv, 8 * PAGE, 4 * PAGE, src, &b), 0);
	assert_int_equal(map_in(rsv, 0, PAGE, src, &c), 0);
	assert_int_equal(map_in(rsv, 2 * PAGE, 2 * PAGE, src, &a), 0);

	assert_int_equal(pmem2_vm_reservation_map_find(rsv, 0, 16 * PAGE, &m),
			 0);
	assert_ptr_equal(m, c);
	assert_int_equal(pmem2_vm_reservation_map_find(rsv, 3 * PAGE, 16, &m),
			 0);
	assert_ptr_equal(m, a);
	/* Length 0 asks about the byte at the offset. */
	assert_int_equal(pmem2_vm_reservation_map_find(rsv, 2 * PAGE, 0, &m),
			 0);
	assert_ptr_equal(m, a);
	m = (void *)1;
	assert_int_equal(pmem2_vm_reservation_map_find(rsv, 4 * PAGE, 0, &m),
			 PMEM2_E_MAPPING_NOT_FOUND);
	assert_null(m);
	assert_int_equal(pmem2_vm_reservation_map_find(rsv, 4 * PAGE,
						       4 * PAGE, &m),
			 PMEM2_E_MAPPING_NOT_FOUND);
	assert_true(msg_has("no mapping at offset 16384 + len 16384"));
	assert_int_equal(pmem2_vm_reservation_map_find(rsv, 11 * PAGE,
						       SIZE_MAX, &m), 0);
	assert_ptr_equal(m, b);
	assert_int_equal(pmem2_vm_reservation_map_find(rsv, SIZE_MAX, 1, &m),
			 PMEM2_E_MAPPING_NOT_FOUND);

	assert_int_equal(pmem2_vm_reservation_map_find_first(rsv, &m), 0);
	assert_ptr_equal(m, c);
	assert_int_equal(pmem2_vm_reservation_map_find_last(rsv, &m), 0);
	assert_ptr_equal(m, b);
	assert_int_equal(pmem2_vm_reservation_map_find_next(rsv, c, &m), 0);
	assert_ptr_equal(m, a);
	assert_int_equal(pmem2_vm_reservation_map_find_next(rsv, a, &m), 0);
	assert_ptr_equal(m, b);
	m = (void *)1;
	assert_int_equal(pmem2_vm_reservation_map_find_next(rsv, b, &m),
			 PMEM2_E_MAPPING_NOT_FOUND);
	assert_null(m);
	assert_true(msg_has("pmem2_vm_reservation_map_find_next: no mapping "
			    "after map"));
	assert_int_equal(pmem2_vm_reservation_map_find_prev(rsv, b, &m), 0);
	assert_ptr_equal(m, a);
	assert_int_equal(pmem2_vm_reservation_map_find_prev(rsv, a, &m), 0);
	assert_ptr_equal(m, c);
	m = (void *)1;
	assert_int_equal(pmem2_vm_reservation_map_find_prev(rsv, c, &m),
			 PMEM2_E_MAPPING_NOT_FOUND);
	assert_null(m);
	assert_true(msg_has("no mapping before map"));

	/* The middle one gone: its neighbours are each other's. */
	assert_int_equal(pmem2_map_delete(&a), 0);
	assert_int_equal(pmem2_vm_reservation_map_find_next(rsv, c, &m), 0);
	assert_ptr_equal(m, b);
	assert_int_equal(pmem2_vm_reservation_map_find_prev(rsv, b, &m), 0);
	assert_ptr_equal(m, c);
	assert_int_equal(pmem2_map_delete(&b), 0);
	assert_int_equal(pmem2_map_delete(&c), 0);
	assert_int_equal(pmem2_vm_reservation_delete(&rsv), 0);
	pmem2_source_delete(&src);
}

static void test_shrink(void **state)
{
	struct pmem2_vm_reservation *rsv;
	struct pmem2_source *src = anon();
	struct pmem2_map *a, *c, *m;
	char *base;

	(void)state;
	assert_int_equal(pmem2_vm_reservation_new(&rsv, NULL, 16 * PAGE), 0);
	base = rsv_at(rsv, 0);
	assert_int_equal(map_in(rsv, 0, PAGE, src, &c), 0);
	assert_int_equal(map_in(rsv, 4 * PAGE, 2 * PAGE, src, &a), 0);
	memset(pmem2_map_get_address(a), 'a', 2 * PAGE);

	assert_int_equal(pmem2_vm_reservation_shrink(rsv, 1, PAGE),
			 PMEM2_E_OFFSET_UNALIGNED);
	assert_true(msg_has("pmem2_vm_reservation_shrink: offset 1 is not"));
	assert_int_equal(pmem2_vm_reservation_shrink(rsv, 0, 1),
			 PMEM2_E_LENGTH_UNALIGNED);
	assert_true(msg_has("size 1 is not a multiple"));
	assert_int_equal(pmem2_vm_reservation_shrink(rsv, 16 * PAGE, PAGE),
			 PMEM2_E_OFFSET_OUT_OF_RANGE);
	assert_true(msg_has("offset 65536 is not inside"));
	assert_int_equal(pmem2_vm_reservation_shrink(rsv, 15 * PAGE, 0),
			 PMEM2_E_LENGTH_OUT_OF_RANGE);
	assert_true(msg_has("size is 0"));
	assert_int_equal(pmem2_vm_reservation_shrink(rsv, 15 * PAGE, 2 * PAGE),
			 PMEM2_E_LENGTH_OUT_OF_RANGE);
	assert_true(msg_has("past the reservation's end"));
	assert_int_equal(pmem2_vm_reservation_shrink(rsv, 15 * PAGE,
						     SIZE_MAX & ~(PAGE - 1)),
			 PMEM2_E_LENGTH_OUT_OF_RANGE);
	assert_int_equal(pmem2_vm_reservation_shrink(rsv, 8 * PAGE, PAGE),
			 PMEM2_E_NOSUPP);
	assert_true(msg_has("in the middle"));
	assert_int_equal(pmem2_vm_reservation_shrink(rsv, 0, 16 * PAGE),
			 PMEM2_E_NOSUPP);
	assert_true(msg_has("the whole reservation"));
	assert_int_equal(pmem2_vm_reservation_shrink(rsv, 0, PAGE),
			 PMEM2_E_VM_RESERVATION_NOT_EMPTY);
	assert_true(msg_has("holds a mapping"));
	assert_int_equal(pmem2_vm_reservation_shrink(rsv, 5 * PAGE, 11 * PAGE),
			 PMEM2_E_VM_RESERVATION_NOT_EMPTY);
	/* Nothing changed. */
	assert_ptr_equal(rsv_at(rsv, 0), base);
	assert_int_equal(pmem2_vm_reservation_get_size(rsv), 16 * PAGE);
	assert_true(taken(base, 16 * PAGE));

	/* From the end: those pages are free again (PMDK 1.12.1's are not). */
	assert_int_equal(pmem2_vm_reservation_shrink(rsv, 12 * PAGE, 4 * PAGE),
			 0);
	assert_int_equal(pmem2_vm_reservation_get_size(rsv), 12 * PAGE);
	assert_false(taken(base + 12 * PAGE, 4 * PAGE));
	/* From the start: the address moves, offsets count from it. */
	assert_int_equal(pmem2_map_delete(&c), 0);
	assert_int_equal(pmem2_vm_reservation_shrink(rsv, 0, 2 * PAGE), 0);
	assert_ptr_equal(rsv_at(rsv, 0), base + 2 * PAGE);
	assert_int_equal(pmem2_vm_reservation_get_size(rsv), 10 * PAGE);
	assert_false(taken(base, 2 * PAGE));
	assert_int_equal(pmem2_vm_reservation_map_find(rsv, 2 * PAGE, 1, &m),
			 0);
	assert_ptr_equal(m, a);
	assert_int_equal(base[4 * PAGE], 'a');
	assert_int_equal(map_in(rsv, 0, 2 * PAGE, src, &c), 0);
	assert_ptr_equal(pmem2_map_get_address(c), base + 2 * PAGE);
	assert_int_equal(map_in(rsv, 9 * PAGE, 2 * PAGE, src, &m),
			 PMEM2_E_LENGTH_OUT_OF_RANGE);
	assert_int_equal(pmem2_map_delete(&c), 0);
	assert_int_equal(pmem2_map_delete(&a), 0);
	assert_int_equal(pmem2_vm_reservation_delete(&rsv), 0);
	assert_false(taken(base, 16 * PAGE));
	pmem2_source_delete(&src);
}

static void test_extend(void **state)
{
	struct pmem2_vm_reservation *rsv;
	struct pmem2_source *src = anon();
	struct pmem2_map *a, *m;
	char *base, *blocker;

	(void)state;
	/* At the start of a free hole (mmap places a new range right
	 * below the last one: nothing could grow). */
	base = mmap(NULL, 16 * PAGE, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS,
		    -1, 0);
	assert_true(base != MAP_FAILED);
	munmap(base, 16 * PAGE);
	assert_int_equal(pmem2_vm_reservation_new(&rsv, base, 4 * PAGE), 0);
	assert_int_equal(map_in(rsv, 2 * PAGE, 2 * PAGE, src, &a), 0);
	memset(pmem2_map_get_address(a), 'a', 2 * PAGE);
	assert_int_equal(pmem2_vm_reservation_extend(rsv, PAGE + 1),
			 PMEM2_E_LENGTH_UNALIGNED);
	assert_true(msg_has("pmem2_vm_reservation_extend: size 4097"));
	assert_int_equal(pmem2_vm_reservation_get_size(rsv), 4 * PAGE);

	/* Something in the way, one page past the end: refused. */
	blocker = mmap(base + 5 * PAGE, PAGE, PROT_NONE, MAP_PRIVATE |
		       MAP_ANONYMOUS | MAP_FIXED_NOREPLACE, -1, 0);
	if (blocker == base + 5 * PAGE) {
		assert_int_equal(pmem2_vm_reservation_extend(rsv, 2 * PAGE),
				 PMEM2_E_MAPPING_EXISTS);
		assert_true(msg_has("are not free"));
		assert_int_equal(pmem2_vm_reservation_get_size(rsv), 4 * PAGE);
		assert_false(taken(base + 4 * PAGE, PAGE));
		munmap(blocker, PAGE);
	} else {
		fail_msg("the hole after the reservation was taken");
	}
	assert_int_equal(pmem2_vm_reservation_extend(rsv, 4 * PAGE), 0);
	assert_int_equal(pmem2_vm_reservation_get_size(rsv), 8 * PAGE);
	assert_true(taken(base + 4 * PAGE, 4 * PAGE));
	assert_int_equal(base[2 * PAGE], 'a');
	/* A map may now straddle the old end. */
	assert_int_equal(map_in(rsv, 2 * PAGE, 2 * PAGE, src, &m),
			 PMEM2_E_MAPPING_EXISTS);
	assert_int_equal(map_in(rsv, 4 * PAGE, 4 * PAGE, src, &m), 0);
	assert_int_equal(pmem2_vm_reservation_map_find_last(rsv, &m), 0);
	assert_ptr_equal(pmem2_map_get_address(m), base + 4 * PAGE);
	assert_int_equal(pmem2_map_delete(&m), 0);
	assert_int_equal(pmem2_map_delete(&a), 0);
	assert_int_equal(pmem2_vm_reservation_delete(&rsv), 0);
	assert_false(taken(base, 8 * PAGE));
	pmem2_source_delete(&src);
}

/* --- threads ----------------------------------------------------------------- */

#define THREADS 4
#define ROUNDS 300
#define SLOTS 4		/* pages of its own per thread */

struct worker {
	pthread_t tid;
	struct pmem2_vm_reservation *rsv;
	struct pmem2_source *src;
	int id;
	int failures;
	int shared_wins;
};

static void *work(void *arg)
{
	struct worker *w = arg;
	/* Each thread's own pages, then one page every thread wants. */
	size_t own = (size_t)w->id * SLOTS * PAGE;
	size_t shared = (size_t)THREADS * SLOTS * PAGE;

	for (int r = 0; r < ROUNDS; r++) {
		size_t off = own + (size_t)(r % SLOTS) * PAGE;
		struct pmem2_map *m, *f;
		struct pmem2_config *cfg;
		int ret;

		pmem2_config_new(&cfg);
		pmem2_config_set_required_store_granularity(cfg,
						PMEM2_GRANULARITY_PAGE);
		pmem2_config_set_length(cfg, PAGE);
		pmem2_config_set_vm_reservation(cfg, w->rsv, off);
		if (pmem2_map_new(&m, cfg, w->src)) {
			w->failures++;
		} else {
			char *p = pmem2_map_get_address(m);

			memset(p, w->id + 1, PAGE);
			if (pmem2_vm_reservation_map_find(w->rsv, off, 1, &f) ||
			    f != m || p[PAGE - 1] != w->id + 1)
				w->failures++;
			if (pmem2_map_delete(&m))
				w->failures++;
		}
		/* Exactly one thread at a time may hold the shared page. */
		pmem2_config_set_vm_reservation(cfg, w->rsv, shared);
		ret = pmem2_map_new(&m, cfg, w->src);
		if (ret == 0) {
			volatile char *p = pmem2_map_get_address(m);

			w->shared_wins++;
			p[0] = (char)(w->id + 1);
			sched_yield();
			if (p[0] != w->id + 1)
				w->failures++;
			if (pmem2_map_delete(&m))
				w->failures++;
		} else if (ret != PMEM2_E_MAPPING_EXISTS) {
			w->failures++;
		}
		pmem2_config_delete(&cfg);
		/* Readers meanwhile: whatever they find is a live map. */
		ret = pmem2_vm_reservation_map_find_first(w->rsv, &f);
		if (ret && ret != PMEM2_E_MAPPING_NOT_FOUND)
			w->failures++;
		ret = pmem2_vm_reservation_map_find(w->rsv, 0, shared + PAGE,
						    &f);
		if (ret && ret != PMEM2_E_MAPPING_NOT_FOUND)
			w->failures++;
	}
	return NULL;
}

static int run_threads(void)
{
	struct pmem2_vm_reservation *rsv;
	struct pmem2_source *src;
	struct pmem2_map *m;
	struct worker w[THREADS];
	int failures = 0, wins = 0;

	if (pmem2_vm_reservation_new(&rsv, NULL,
				     (THREADS * SLOTS + 1) * PAGE) ||
	    pmem2_source_from_anon(&src, PAGE))
		return 1;
	for (int i = 0; i < THREADS; i++) {
		w[i] = (struct worker){ .rsv = rsv, .src = src, .id = i };
		if (pthread_create(&w[i].tid, NULL, work, &w[i]))
			return 1;
	}
	for (int i = 0; i < THREADS; i++) {
		pthread_join(w[i].tid, NULL);
		failures += w[i].failures;
		wins += w[i].shared_wins;
	}
	printf("%d threads x %d rounds: %d failures, shared page won %d "
	       "times\n", THREADS, ROUNDS, failures, wins);
	if (pmem2_vm_reservation_map_find_first(rsv, &m) !=
	    PMEM2_E_MAPPING_NOT_FOUND)
		failures++;
	if (pmem2_vm_reservation_delete(&rsv))
		failures++;
	pmem2_source_delete(&src);
	return failures || wins == 0;
}

int main(int argc, char **argv)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_new_errors),
		cmocka_unit_test(test_new_sizes),
		cmocka_unit_test(test_sizes_that_wrap),
		cmocka_unit_test(test_map_errors),
		cmocka_unit_test(test_failed_map_keeps_placeholder),
		cmocka_unit_test(test_find),
		cmocka_unit_test(test_shrink),
		cmocka_unit_test(test_extend),
	};

	if (argc == 2 && !strcmp(argv[1], "threads"))
		return run_threads();
	return cmocka_run_group_tests(tests, NULL, NULL);
}
