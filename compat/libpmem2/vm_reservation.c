// SPDX-License-Identifier: MIT
/*
 * vm_reservation.c - pmem2_vm_reservation_*(): a range of address space
 * held by a PROT_NONE placeholder, that pmem2_map_new() maps sources into
 * (MAP_FIXED over the placeholder) and pmem2_map_delete() gives back to
 * (the placeholder mapped again), with PMDK's checks and codes.
 *
 * Each reservation keeps its maps in an array sorted by address, under a
 * rwlock, as PMDK keeps an interval tree under one: finds read, mapping
 * and unmapping write. pmem2_map_new() holds the write lock from the
 * check that the range is free until the map is in the array, so two
 * threads can never map the same range. A program has few maps in a
 * reservation: the insert's memmove is cheap.
 *
 * Where PMDK 1.12.1 differs from its man pages, the codes follow what it
 * does (a map past the reservation's end: LENGTH_OUT_OF_RANGE, not the
 * man page's ADDRESS_UNALIGNED); where it mismanages address space (it
 * reserves up to 4 MiB more than it shows, shrink unmaps the wrong range,
 * delete leaks the hidden rest), this file does what the man pages say.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "pmem2.h"

#ifndef MAP_FIXED_NOREPLACE
#define MAP_FIXED_NOREPLACE 0x100000
#endif

/* A reservation of 2 MiB or more starts on a 2 MiB boundary, as PMDK's. */
#define HUGE_2M ((size_t)2 << 20)

#define PLACEHOLDER_FLAGS (MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE)

struct pmem2_vm_reservation {
	pthread_rwlock_t lock;
	char *addr;
	size_t size;
	struct pmem2_map **maps;	/* sorted by address, not overlapping */
	size_t nmaps, cap;
};

static size_t page_size(void)
{
	return (size_t)sysconf(_SC_PAGESIZE);
}

static uintptr_t map_start(const struct pmem2_map *m)
{
	return (uintptr_t)m->addr;
}

static uintptr_t map_end(const struct pmem2_map *m)
{
	return (uintptr_t)m->addr + m->size;
}

/* The index of the first map that ends after @lo (nmaps if none). */
static size_t first_ending_after(const struct pmem2_vm_reservation *rsv,
				 uintptr_t lo)
{
	size_t a = 0, b = rsv->nmaps;

	while (a < b) {
		size_t mid = a + (b - a) / 2;

		if (map_end(rsv->maps[mid]) <= lo)
			a = mid + 1;
		else
			b = mid;
	}
	return a;
}

/*
 * The earliest map overlapping [@offset, +@len) of @rsv, or NULL. A
 * length of 0 asks about the one byte at @offset, as PMDK answers.
 * Called with the lock held.
 */
static struct pmem2_map *find_overlap(const struct pmem2_vm_reservation *rsv,
				      size_t offset, size_t len)
{
	uintptr_t lo, hi;
	size_t i;

	if (__builtin_add_overflow((uintptr_t)rsv->addr, offset, &lo))
		return NULL;
	if (__builtin_add_overflow(lo, len ? len : 1, &hi))
		hi = UINTPTR_MAX;
	i = first_ending_after(rsv, lo);
	if (i < rsv->nmaps && map_start(rsv->maps[i]) < hi)
		return rsv->maps[i];
	return NULL;
}

int pmem2_vm_reservation_placeholder(void *addr, size_t len)
{
	if (mmap(addr, len, PROT_NONE, PLACEHOLDER_FLAGS | MAP_FIXED, -1, 0) ==
	    MAP_FAILED)
		return -errno;
	return 0;
}

/*
 * Take [@addr, +@len) as a placeholder: exactly there if @addr (anything
 * in the way: PMEM2_E_MAPPING_EXISTS), else anywhere, aligned to @align.
 * 0 or a code; the address in *@out.
 *
 * A range that would wrap past the top of the address space (@addr +
 * @len, or @len plus the alignment slack) is -ENOMEM, what mmap() says of
 * a length no process can have: computed, the sum would wrap to a small
 * number, a small placeholder would be taken, and a reservation would
 * show a size it does not hold (a later MAP_FIXED into it would land on
 * whatever else the process has mapped).
 */
static int take_range(void *addr, size_t len, size_t align, char **out)
{
	uintptr_t p, a, end;
	size_t n;

	if (addr) {
		void *got;

		if (__builtin_add_overflow((uintptr_t)addr, len, &end))
			return -ENOMEM;
		got = mmap(addr, len, PROT_NONE,
			   PLACEHOLDER_FLAGS | MAP_FIXED_NOREPLACE, -1, 0);
		if (got == MAP_FAILED)
			return errno == EEXIST ? PMEM2_E_MAPPING_EXISTS : -errno;
		if (got != addr) {
			/* A kernel before 4.17 took the flag as a hint. */
			munmap(got, len);
			return PMEM2_E_MAPPING_EXISTS;
		}
		*out = got;
		return 0;
	}
	if (__builtin_add_overflow(len, align > page_size() ? align : 0, &n))
		return -ENOMEM;
	p = (uintptr_t)mmap(NULL, n, PROT_NONE, PLACEHOLDER_FLAGS, -1, 0);
	if ((void *)p == MAP_FAILED)
		return -errno;
	a = (p + align - 1) & ~(uintptr_t)(align - 1);
	/* Give back what lies before and after the aligned range. */
	if (a > p)
		munmap((void *)p, a - p);
	if (p + n > a + len)
		munmap((void *)(a + len), p + n - (a + len));
	*out = (char *)a;
	return 0;
}

int pmem2_vm_reservation_new(struct pmem2_vm_reservation **rsv_ptr,
			     void *addr, size_t size)
{
	size_t page = page_size();
	struct pmem2_vm_reservation *rsv;
	int ret;

	*rsv_ptr = NULL;
	if ((uintptr_t)addr % page)
		return pmem2_err(PMEM2_E_ADDRESS_UNALIGNED,
				 "pmem2_vm_reservation_new: addr %p is not a "
				 "multiple of the page size %zu", addr, page);
	if (size % page)
		return pmem2_err(PMEM2_E_LENGTH_UNALIGNED,
				 "pmem2_vm_reservation_new: size %zu is not a "
				 "multiple of the page size %zu", size, page);
	rsv = calloc(1, sizeof(*rsv));
	if (!rsv)
		return pmem2_err_errno(ENOMEM, "pmem2_vm_reservation_new");
	ret = pthread_rwlock_init(&rsv->lock, NULL);
	if (ret) {
		free(rsv);
		return pmem2_err_errno(ret, "pmem2_vm_reservation_new: "
				       "pthread_rwlock_init");
	}
	if (size == 0) {
		/*
		 * PMDK gives an empty reservation an address too: one that
		 * was free, where an extension would go. Nothing is held.
		 */
		ret = take_range(addr, page, page, &rsv->addr);
		if (!ret)
			munmap(rsv->addr, page);
	} else {
		ret = take_range(addr, size, size >= HUGE_2M ? HUGE_2M : page,
				 &rsv->addr);
	}
	if (ret) {
		pthread_rwlock_destroy(&rsv->lock);
		free(rsv);
		if (ret == PMEM2_E_MAPPING_EXISTS)
			return pmem2_err(ret, "pmem2_vm_reservation_new: "
					 "addr %p + size %zu overlaps an "
					 "existing mapping", addr, size);
		return pmem2_err_errno(-ret, "pmem2_vm_reservation_new: "
				       "addr %p + size %zu: no such range of "
				       "address space", addr, size);
	}
	rsv->size = size;
	*rsv_ptr = rsv;
	return 0;
}

int pmem2_vm_reservation_delete(struct pmem2_vm_reservation **rsv_ptr)
{
	struct pmem2_vm_reservation *rsv = *rsv_ptr;

	pthread_rwlock_wrlock(&rsv->lock);
	if (rsv->nmaps) {
		size_t n = rsv->nmaps;

		pthread_rwlock_unlock(&rsv->lock);
		return pmem2_err(PMEM2_E_VM_RESERVATION_NOT_EMPTY,
				 "pmem2_vm_reservation_delete: rsv %p still "
				 "holds %zu mapping(s) (pmem2_map_delete them "
				 "first)", (void *)rsv, n);
	}
	if (rsv->size && munmap(rsv->addr, rsv->size)) {
		int err = errno;

		pthread_rwlock_unlock(&rsv->lock);
		return pmem2_err_errno(err, "pmem2_vm_reservation_delete: "
				       "munmap %p + %zu", (void *)rsv->addr,
				       rsv->size);
	}
	pthread_rwlock_unlock(&rsv->lock);
	pthread_rwlock_destroy(&rsv->lock);
	free(rsv->maps);
	free(rsv);
	*rsv_ptr = NULL;
	return 0;
}

void *pmem2_vm_reservation_get_address(struct pmem2_vm_reservation *rsv)
{
	void *addr;

	pthread_rwlock_rdlock(&rsv->lock);
	addr = rsv->addr;
	pthread_rwlock_unlock(&rsv->lock);
	return addr;
}

size_t pmem2_vm_reservation_get_size(struct pmem2_vm_reservation *rsv)
{
	size_t size;

	pthread_rwlock_rdlock(&rsv->lock);
	size = rsv->size;
	pthread_rwlock_unlock(&rsv->lock);
	return size;
}

int pmem2_vm_reservation_extend(struct pmem2_vm_reservation *rsv, size_t size)
{
	size_t page = page_size();
	char *end, *got;
	int ret;

	if (size % page)
		return pmem2_err(PMEM2_E_LENGTH_UNALIGNED,
				 "pmem2_vm_reservation_extend: size %zu is not "
				 "a multiple of the page size %zu", size, page);
	if (size == 0)
		return 0;
	pthread_rwlock_wrlock(&rsv->lock);
	end = rsv->addr + rsv->size;
	ret = take_range(end, size, page, &got);
	if (!ret)
		rsv->size += size;
	pthread_rwlock_unlock(&rsv->lock);
	if (ret == PMEM2_E_MAPPING_EXISTS)
		return pmem2_err(ret, "pmem2_vm_reservation_extend: the %zu "
				 "bytes after the reservation's end %p are "
				 "not free", size, (void *)end);
	if (ret)
		return pmem2_err_errno(-ret, "pmem2_vm_reservation_extend: "
				       "size %zu after the reservation's end "
				       "%p: no such range of address space",
				       size, (void *)end);
	return 0;
}

/* The checks of pmem2_vm_reservation_shrink(), in PMDK's order. */
static int check_shrink(const struct pmem2_vm_reservation *rsv,
			size_t offset, size_t size)
{
	size_t page = page_size();

	if (offset % page)
		return pmem2_err(PMEM2_E_OFFSET_UNALIGNED,
				 "pmem2_vm_reservation_shrink: offset %zu is "
				 "not a multiple of the page size %zu", offset,
				 page);
	if (size % page)
		return pmem2_err(PMEM2_E_LENGTH_UNALIGNED,
				 "pmem2_vm_reservation_shrink: size %zu is not "
				 "a multiple of the page size %zu", size, page);
	if (offset >= rsv->size)
		return pmem2_err(PMEM2_E_OFFSET_OUT_OF_RANGE,
				 "pmem2_vm_reservation_shrink: offset %zu is "
				 "not inside the reservation (%zu bytes)",
				 offset, rsv->size);
	if (size == 0)
		return pmem2_err(PMEM2_E_LENGTH_OUT_OF_RANGE,
				 "pmem2_vm_reservation_shrink: size is 0");
	if (size > rsv->size - offset)
		return pmem2_err(PMEM2_E_LENGTH_OUT_OF_RANGE,
				 "pmem2_vm_reservation_shrink: offset %zu + "
				 "size %zu is past the reservation's end (%zu "
				 "bytes)", offset, size, rsv->size);
	if (offset != 0 && offset + size != rsv->size)
		return pmem2_err(PMEM2_E_NOSUPP,
				 "pmem2_vm_reservation_shrink: offset %zu + "
				 "size %zu is in the middle: only the start or "
				 "the end can go", offset, size);
	if (offset == 0 && size == rsv->size)
		return pmem2_err(PMEM2_E_NOSUPP,
				 "pmem2_vm_reservation_shrink: the whole "
				 "reservation cannot go "
				 "(pmem2_vm_reservation_delete)");
	if (find_overlap(rsv, offset, size))
		return pmem2_err(PMEM2_E_VM_RESERVATION_NOT_EMPTY,
				 "pmem2_vm_reservation_shrink: offset %zu + "
				 "size %zu holds a mapping", offset, size);
	return 0;
}

int pmem2_vm_reservation_shrink(struct pmem2_vm_reservation *rsv,
				size_t offset, size_t size)
{
	int ret;

	pthread_rwlock_wrlock(&rsv->lock);
	ret = check_shrink(rsv, offset, size);
	if (!ret && munmap(rsv->addr + offset, size))
		ret = pmem2_err_errno(errno, "pmem2_vm_reservation_shrink: "
				      "munmap %p + %zu",
				      (void *)(rsv->addr + offset), size);
	if (!ret) {
		if (offset == 0) {
			rsv->addr += size;
			for (size_t i = 0; i < rsv->nmaps; i++)
				rsv->maps[i]->rsv_offset -= size;
		}
		rsv->size -= size;
	}
	pthread_rwlock_unlock(&rsv->lock);
	return ret;
}

/* --- finding maps ---------------------------------------------------------- */

static int not_found(struct pmem2_map **map, const char *fn, const char *what)
{
	*map = NULL;
	return pmem2_err(PMEM2_E_MAPPING_NOT_FOUND, "%s: %s", fn, what);
}

int pmem2_vm_reservation_map_find(struct pmem2_vm_reservation *rsv,
				  size_t reserv_offset, size_t len,
				  struct pmem2_map **map)
{
	pthread_rwlock_rdlock(&rsv->lock);
	*map = find_overlap(rsv, reserv_offset, len);
	pthread_rwlock_unlock(&rsv->lock);
	if (!*map)
		return pmem2_err(PMEM2_E_MAPPING_NOT_FOUND,
				 "pmem2_vm_reservation_map_find: no mapping "
				 "at offset %zu + len %zu of the reservation",
				 reserv_offset, len);
	return 0;
}

int pmem2_vm_reservation_map_find_first(struct pmem2_vm_reservation *rsv,
					struct pmem2_map **map)
{
	pthread_rwlock_rdlock(&rsv->lock);
	*map = rsv->nmaps ? rsv->maps[0] : NULL;
	pthread_rwlock_unlock(&rsv->lock);
	if (!*map)
		return not_found(map, "pmem2_vm_reservation_map_find_first",
				 "the reservation holds no mapping");
	return 0;
}

int pmem2_vm_reservation_map_find_last(struct pmem2_vm_reservation *rsv,
				       struct pmem2_map **map)
{
	pthread_rwlock_rdlock(&rsv->lock);
	*map = rsv->nmaps ? rsv->maps[rsv->nmaps - 1] : NULL;
	pthread_rwlock_unlock(&rsv->lock);
	if (!*map)
		return not_found(map, "pmem2_vm_reservation_map_find_last",
				 "the reservation holds no mapping");
	return 0;
}

/* The first map that starts at or after @map's end. */
int pmem2_vm_reservation_map_find_next(struct pmem2_vm_reservation *rsv,
				       struct pmem2_map *map,
				       struct pmem2_map **next_map)
{
	size_t i;

	pthread_rwlock_rdlock(&rsv->lock);
	i = first_ending_after(rsv, map_end(map));
	*next_map = i < rsv->nmaps ? rsv->maps[i] : NULL;
	pthread_rwlock_unlock(&rsv->lock);
	if (!*next_map)
		return not_found(next_map, "pmem2_vm_reservation_map_find_next",
				 "no mapping after map");
	return 0;
}

/* The last map that ends at or before @map's start. */
int pmem2_vm_reservation_map_find_prev(struct pmem2_vm_reservation *rsv,
				       struct pmem2_map *map,
				       struct pmem2_map **prev_map)
{
	size_t i;

	pthread_rwlock_rdlock(&rsv->lock);
	i = first_ending_after(rsv, map_start(map));
	*prev_map = i > 0 ? rsv->maps[i - 1] : NULL;
	pthread_rwlock_unlock(&rsv->lock);
	if (!*prev_map)
		return not_found(prev_map, "pmem2_vm_reservation_map_find_prev",
				 "no mapping before map");
	return 0;
}

/* --- pmem2_map_new() and pmem2_map_delete() (map.c) ------------------------ */

int pmem2_vm_reservation_map_begin(struct pmem2_vm_reservation *rsv,
				   size_t offset, size_t length, size_t align,
				   void **at)
{
	size_t page = page_size();
	struct pmem2_map **maps;
	int ret = 0;

	pthread_rwlock_wrlock(&rsv->lock);
	if (offset % page)
		ret = pmem2_err(PMEM2_E_OFFSET_UNALIGNED, "pmem2_map_new: "
				"reservation offset %zu is not a multiple of "
				"the page size %zu", offset, page);
	else if (offset > rsv->size || length > rsv->size - offset)
		ret = pmem2_err(PMEM2_E_LENGTH_OUT_OF_RANGE, "pmem2_map_new: "
				"reservation offset %zu + length %zu is past "
				"the reservation's end (%zu bytes)", offset,
				length, rsv->size);
	else if ((uintptr_t)(rsv->addr + offset) % align)
		ret = pmem2_err(PMEM2_E_ADDRESS_UNALIGNED, "pmem2_map_new: "
				"reservation address + offset %zu is not a "
				"multiple of the source's alignment %zu",
				offset, align);
	else if (find_overlap(rsv, offset, length))
		ret = pmem2_err(PMEM2_E_MAPPING_EXISTS, "pmem2_map_new: "
				"reservation offset %zu + length %zu overlaps "
				"a mapping in it", offset, length);
	else if (rsv->nmaps == rsv->cap) {
		/* Room for the insert now: _map_end cannot fail. */
		size_t cap = rsv->cap ? 2 * rsv->cap : 8;

		maps = realloc(rsv->maps, cap * sizeof(*maps));
		if (maps) {
			rsv->maps = maps;
			rsv->cap = cap;
		} else {
			ret = pmem2_err_errno(ENOMEM, "pmem2_map_new");
		}
	}
	if (ret) {
		pthread_rwlock_unlock(&rsv->lock);
		return ret;
	}
	*at = rsv->addr + offset;
	return 0;
}

void pmem2_vm_reservation_map_end(struct pmem2_vm_reservation *rsv,
				  struct pmem2_map *map)
{
	if (map) {
		size_t i = first_ending_after(rsv, map_start(map));

		memmove(&rsv->maps[i + 1], &rsv->maps[i],
			(rsv->nmaps - i) * sizeof(rsv->maps[0]));
		rsv->maps[i] = map;
		rsv->nmaps++;
	}
	pthread_rwlock_unlock(&rsv->lock);
}

int pmem2_vm_reservation_map_remove(struct pmem2_map *map)
{
	struct pmem2_vm_reservation *rsv = map->rsv;
	size_t i;
	int ret;

	pthread_rwlock_wrlock(&rsv->lock);
	i = first_ending_after(rsv, map_start(map));
	if (i == rsv->nmaps || rsv->maps[i] != map) {
		pthread_rwlock_unlock(&rsv->lock);
		return pmem2_err(PMEM2_E_MAPPING_NOT_FOUND, "pmem2_map_delete: "
				 "map %p is not in its reservation",
				 (void *)map);
	}
	ret = pmem2_vm_reservation_placeholder(map->addr, map->size);
	if (ret) {
		pthread_rwlock_unlock(&rsv->lock);
		return pmem2_err_errno(-ret, "pmem2_map_delete: mmap the "
				       "placeholder over %p + %zu", map->addr,
				       map->size);
	}
	memmove(&rsv->maps[i], &rsv->maps[i + 1],
		(rsv->nmaps - i - 1) * sizeof(rsv->maps[0]));
	rsv->nmaps--;
	pthread_rwlock_unlock(&rsv->lock);
	return 0;
}
