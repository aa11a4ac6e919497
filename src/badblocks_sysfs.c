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
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/sysmacros.h>

#include "badblocks.h"

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

/* The first number in @path (hex with 0x, or decimal); 0 or -errno. */
static int read_u64(const char *path, uint64_t *out)
{
	FILE *f = fopen(path, "r");
	unsigned long long v;
	int ok;

	if (!f)
		return -errno;
	ok = fscanf(f, "%lli", (long long *)&v) == 1;
	fclose(f);
	if (!ok)
		return -EINVAL;
	*out = v;
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
	if (read_u64(path, &dev_start))
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
		if (read_u64(path, &start))
			continue;
		snprintf(path, sizeof(path), "%s/bus/nd/devices/%s/size", root,
			 e->d_name);
		if (read_u64(path, &size) || dev_start < start ||
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
