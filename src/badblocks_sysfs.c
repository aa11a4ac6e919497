// SPDX-License-Identifier: MIT
/*
 * badblocks_sysfs.c - a devdax device's media errors, from sysfs.
 *
 * The kernel lists media errors per nd region: each line of
 * /sys/bus/nd/devices/regionN/badblocks is "sector count" in 512-byte
 * sectors from the region's first byte (regionN/resource). A devdax device
 * is a window of one region's physical address space, starting at
 * /sys/dev/char/MAJ:MIN/resource, so its list is every region range that
 * overlaps the window, shifted to the window's start and clipped to it.
 *
 * An fsdax file's bad sectors are its block device's: each line of
 * /sys/dev/block/MAJ:MIN/badblocks is "sector count" from the disk's
 * first byte (a partition has no list of its own: its disk's, less the
 * partition's start). The file's FIEMAP extents say where its bytes are
 * on the device, so each bad range is mapped through them into the file,
 * as PMDK's libpmem2 does: a namespace then knows its bad sectors before
 * a read faults on one.
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <limits.h>
#include <linux/fiemap.h>
#include <linux/fs.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include "badblocks.h"
#include "persist_domain.h"	/* ntm_sysfs_read_u64() */

#define SECTOR 512u

int ntm_badblocks_translate(const char *text, uint64_t region_start,
			    uint64_t dev_start, uint64_t dev_size,
			    int (*add)(void *arg, uint64_t sector, uint64_t count),
			    void *arg)
{
	uint64_t first, last;	/* the device's sectors, region-relative */
	unsigned long long s, n;
	int used, ret;

	if (dev_start < region_start || dev_start % SECTOR || dev_size < SECTOR)
		return -EINVAL;
	first = (dev_start - region_start) / SECTOR;
	last = first + dev_size / SECTOR;
	while (sscanf(text, "%llu %llu%n", &s, &n, &used) == 2) {
		uint64_t lo = s > first ? s : first;
		uint64_t hi = s + n < last ? s + n : last;

		text += used;
		if (n == 0 || s + n < s || lo >= hi)
			continue;
		ret = add(arg, lo - first, hi - lo);
		if (ret)
			return ret;
	}
	return 0;
}

static char *read_all(const char *path)
{
	FILE *f = fopen(path, "r");
	char *buf = NULL;
	size_t len = 0;

	if (!f)
		return NULL;
	if (getdelim(&buf, &len, '\0', f) < 0) {
		free(buf);
		buf = NULL;
	}
	fclose(f);
	return buf;
}

int ntm_badblocks_devdax(const char *root, dev_t rdev, uint64_t dev_size,
			 int (*add)(void *arg, uint64_t sector, uint64_t count),
			 void *arg)
{
	char path[512];
	uint64_t dev_start;
	struct dirent *e;
	DIR *d;
	int ret = 0;

	snprintf(path, sizeof(path), "%s/dev/char/%u:%u/resource", root,
		 major(rdev), minor(rdev));
	if (ntm_sysfs_read_u64(path, &dev_start))
		return 0;	/* no physical address: nothing to match */
	snprintf(path, sizeof(path), "%s/bus/nd/devices", root);
	d = opendir(path);
	if (!d)
		return 0;	/* no nd bus: not NVDIMM-backed */
	while (!ret && (e = readdir(d))) {
		uint64_t start, size;
		char *text;

		if (strncmp(e->d_name, "region", 6))
			continue;
		snprintf(path, sizeof(path), "%s/bus/nd/devices/%s/resource",
			 root, e->d_name);
		if (ntm_sysfs_read_u64(path, &start))
			continue;
		snprintf(path, sizeof(path), "%s/bus/nd/devices/%s/size", root,
			 e->d_name);
		if (ntm_sysfs_read_u64(path, &size) || dev_start < start ||
		    dev_start >= start + size)
			continue;
		snprintf(path, sizeof(path), "%s/bus/nd/devices/%s/badblocks",
			 root, e->d_name);
		text = read_all(path);
		if (text)
			ret = ntm_badblocks_translate(text, start, dev_start,
						      dev_size, add, arg);
		free(text);
	}
	closedir(d);
	return ret;
}

int ntm_badblocks_map_extents(const char *text, uint64_t part_start,
			      const struct ntm_bb_extent *ext, size_t n_ext,
			      uint64_t file_size,
			      int (*add)(void *arg, uint64_t sector, uint64_t count),
			      void *arg)
{
	unsigned long long s, n;
	int used, ret;

	while (sscanf(text, "%llu %llu%n", &s, &n, &used) == 2) {
		uint64_t lo, hi;

		text += used;
		if (n == 0 || s + n < s || s + n <= part_start)
			continue;
		/* Bytes of the partition (or whole device) that are bad. */
		lo = (s > part_start ? s - part_start : 0) * SECTOR;
		hi = (s + n - part_start) * SECTOR;
		for (size_t i = 0; i < n_ext; i++) {
			uint64_t p0 = ext[i].physical, p1 = p0 + ext[i].length;
			uint64_t a = lo > p0 ? lo : p0, b = hi < p1 ? hi : p1;
			uint64_t f0, f1;

			if (a >= b)
				continue;
			f0 = ext[i].logical + (a - p0);
			f1 = ext[i].logical + (b - p0);
			if (f0 >= file_size)
				continue;
			if (f1 > file_size)
				f1 = file_size;
			/* Every file sector a bad byte touches is bad. */
			f0 /= SECTOR;
			f1 = (f1 + SECTOR - 1) / SECTOR;
			ret = add(arg, f0, f1 - f0);
			if (ret)
				return ret;
		}
	}
	return 0;
}

/*
 * The extents of @fd in [0, @size), mapped (no delayed allocation, no
 * inline data: nothing without a place on the device). Count or -errno;
 * *@out is malloc'ed.
 */
static int file_extents(int fd, uint64_t size, struct ntm_bb_extent **out)
{
	enum { BATCH = 64 };
	struct fiemap *fm = malloc(sizeof(*fm) + BATCH * sizeof(struct fiemap_extent));
	struct ntm_bb_extent *v = NULL;
	uint64_t start = 0;
	size_t n = 0, cap = 0;
	bool last = false;

	if (!fm)
		return -ENOMEM;
	while (!last && start < size) {
		memset(fm, 0, sizeof(*fm));
		fm->fm_start = start;
		fm->fm_length = size - start;
		fm->fm_flags = FIEMAP_FLAG_SYNC;
		fm->fm_extent_count = BATCH;
		if (ioctl(fd, FS_IOC_FIEMAP, fm)) {
			int err = -errno;

			free(fm);
			free(v);
			return err;
		}
		if (fm->fm_mapped_extents == 0)
			break;
		for (unsigned i = 0; i < fm->fm_mapped_extents; i++) {
			const struct fiemap_extent *e = &fm->fm_extents[i];

			last = e->fe_flags & FIEMAP_EXTENT_LAST;
			start = e->fe_logical + e->fe_length;
			if (e->fe_flags & (FIEMAP_EXTENT_UNKNOWN |
					   FIEMAP_EXTENT_DELALLOC |
					   FIEMAP_EXTENT_DATA_INLINE |
					   FIEMAP_EXTENT_ENCODED))
				continue;
			if (n == cap) {
				size_t c = cap ? 2 * cap : 16;
				struct ntm_bb_extent *g = realloc(v, c * sizeof(*v));

				if (!g) {
					free(fm);
					free(v);
					return -ENOMEM;
				}
				v = g;
				cap = c;
			}
			v[n].logical = e->fe_logical;
			v[n].physical = e->fe_physical;
			v[n++].length = e->fe_length;
		}
	}
	free(fm);
	*out = v;
	return (int)n;
}

int ntm_badblocks_fsdax(const char *root, int fd, uint64_t file_size,
			int (*add)(void *arg, uint64_t sector, uint64_t count),
			void *arg)
{
	char path[PATH_MAX], dev_path[PATH_MAX], list[PATH_MAX + 16];
	struct ntm_bb_extent *ext = NULL;
	uint64_t part_start = 0;
	struct stat st;
	char *text;
	int n, ret;

	if (fstat(fd, &st))
		return -errno;
	snprintf(path, sizeof(path), "%s/dev/block/%u:%u", root,
		 major(st.st_dev), minor(st.st_dev));
	if (!realpath(path, dev_path))
		return 0;	/* no block device in sysfs: no list */
	/* A partition: its disk's list, from the partition's start. */
	snprintf(list, sizeof(list), "%s/partition", dev_path);
	if (access(list, F_OK) == 0) {
		snprintf(list, sizeof(list), "%s/start", dev_path);
		if (ntm_sysfs_read_u64(list, &part_start))
			return 0;
		*strrchr(dev_path, '/') = '\0';
	}
	snprintf(list, sizeof(list), "%s/badblocks", dev_path);
	text = read_all(list);
	if (!text)
		return 0;	/* not a device with a list (not pmem) */
	if (strspn(text, " \n") == strlen(text)) {
		free(text);
		return 0;	/* nothing bad: no FIEMAP needed */
	}
	n = file_extents(fd, file_size, &ext);
	ret = n < 0 ? n : ntm_badblocks_map_extents(text, part_start, ext,
						    (size_t)n, file_size, add, arg);
	free(ext);
	free(text);
	return ret;
}
