// SPDX-License-Identifier: MIT
/*
 * deep_flush.c - pmem2_deep_flush(): the range persisted the map's way,
 * then pushed past the platform's power-fail buffers where software can:
 * a devdax device's nd region has a deep_flush attribute (writing "1"
 * flushes the memory controller's queues); a file is msync()ed, which on
 * a DAX file system asks the pmem driver for the same flush.
 *
 * Anonymous memory has no device to push to: the call says so
 * (PMEM2_E_NOSUPP) rather than claim a durability that cannot be, as
 * PMDK's does for every anonymous map pmem2_map_new() makes (BYTE). A
 * PAGE map of an anonymous source (pmem2_map_from_existing() only) gets
 * PMDK's answer for a PAGE map, 0: its persist's msync() was all. A
 * private map of a file is msync()ed and answers 0, as PMDK's.
 *
 * The range must lie inside the map, computed without wrapping: PMDK's
 * check adds ptr + size, so a size that carries it past the top of the
 * address space passes there (and the flush then covers nothing sane);
 * here it is PMEM2_E_DEEP_FLUSH_RANGE, as any other range past the end.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include <ntmem/hook.h>	/* NTM_REC_MAPPING(): the checker of ntmem check */

#include "pmem2.h"

/*
 * Write "1" to the deep_flush of the nd region above the devdax @rdev:
 * its sysfs directory lies below regionN (.../regionN/daxN.M/daxN.M).
 */
static int region_deep_flush(dev_t rdev)
{
	char link[PATH_MAX], dir[PATH_MAX], *slash;
	int fd, ret = 0;

	snprintf(link, sizeof(link), "%s/dev/char/%u:%u", pmem2_sysfs_root(),
		 major(rdev), minor(rdev));
	if (!realpath(link, dir))
		return pmem2_err(PMEM2_E_DAX_REGION_NOT_FOUND, "pmem2_deep_flush: "
				 "devdax %u:%u has no %s", major(rdev),
				 minor(rdev), link);
	while ((slash = strrchr(dir, '/')) && slash != dir) {
		if (!strncmp(slash + 1, "region", 6))
			break;
		*slash = '\0';
	}
	if (!slash || slash == dir)
		return pmem2_err(PMEM2_E_DAX_REGION_NOT_FOUND, "pmem2_deep_flush: "
				 "devdax %u:%u is below no nd region",
				 major(rdev), minor(rdev));
	if (strlen(dir) + sizeof("/deep_flush") > sizeof(dir))
		return pmem2_err(PMEM2_E_DAX_REGION_NOT_FOUND, "pmem2_deep_flush: "
				 "region path too long");
	strcat(dir, "/deep_flush");
	/*
	 * "0": the region has no flush hints, nothing to flush (the kernel
	 * makes the file read-only then: a write is EACCES). PMDK reads it
	 * first too.
	 */
	fd = open(dir, O_RDONLY | O_CLOEXEC);
	if (fd >= 0) {
		char now[2];
		ssize_t n = read(fd, now, sizeof(now));

		close(fd);
		if (n >= 1 && now[0] == '0')
			return 0;
	}
	fd = open(dir, O_WRONLY | O_CLOEXEC);
	/* A region without the attribute: a fence was all software could do. */
	if (fd < 0)
		return errno == ENOENT ? 0 : pmem2_err_errno(errno,
					"pmem2_deep_flush: open %s", dir);
	if (write(fd, "1", 1) != 1)
		ret = pmem2_err_errno(errno, "pmem2_deep_flush: write %s", dir);
	close(fd);
	return ret;
}

int pmem2_deep_flush(struct pmem2_map *map, void *ptr, size_t size)
{
	uintptr_t lo = (uintptr_t)map->addr, hi = lo + map->size;
	uintptr_t p = (uintptr_t)ptr, page = (uintptr_t)sysconf(_SC_PAGESIZE);
	uintptr_t start = p & ~(page - 1);
	int ret, saved_errno = errno;

	if (p < lo || p > hi || size > hi - p)
		return pmem2_err(PMEM2_E_DEEP_FLUSH_RANGE, "pmem2_deep_flush: "
				 "ptr %p + size %zu is not inside the map "
				 "[%p, +%zu)", ptr, size, map->addr, map->size);
	if (map->source_type == PMEM2_SOURCE_ANON &&
	    map->granularity != PMEM2_GRANULARITY_PAGE)
		return pmem2_err(PMEM2_E_NOSUPP, "pmem2_deep_flush: map is of "
				 "an anonymous source: no device to flush to");
	map->persist_fn(ptr, size);
	if (map->source_type == PMEM2_SOURCE_ANON || size == 0)
		return 0;
	if (map->devdax) {
		ret = region_deep_flush(map->rdev);
		/* A region without the attribute (ENOENT) is no failure. */
		if (!ret)
			errno = saved_errno;
		return ret;
	}
	if (map->granularity != PMEM2_GRANULARITY_PAGE) {
		if (msync((void *)start, p + size - start, MS_SYNC))
			return pmem2_err_errno(errno, "pmem2_deep_flush: msync "
					       "%p + %zu", ptr, size);
		NTM_REC_MAPPING(NTM_REC_SYNC, ptr, size, NULL);
	}
	return 0;
}
