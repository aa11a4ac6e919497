// SPDX-License-Identifier: MIT
/*
 * device.c - what a source's hardware is: pmem2_source_device_id(),
 * pmem2_source_device_usc() and pmem2_source_numa_node().
 *
 * PMDK asks libndctl for the nd region under the source and then for that
 * region's NVDIMMs; the drop-in reads the same sysfs attributes libndctl
 * does, without libndctl. The region is the "regionN" directory the
 * source's device lies under in sysfs: /sys/dev/char/MAJ:MIN of a devdax
 * device, /sys/dev/block/MAJ:MIN of the device a file's file system is on
 * (a pmem namespace's block device, or a partition of it). Each NVDIMM
 * of the region is named by a regionN/mappingK file ("nmemX,offset,
 * length,position"); its unique id is nmemX/nfit/id and its dirty-shutdown
 * count nmemX/nfit/dirty_shutdown, which the kernel exposes for NFIT
 * NVDIMMs that report one. No region (a file not on pmem): device id and
 * count are NOSUPP and the numa node DAX_REGION_NOT_FOUND, as PMDK's.
 * The walk ends at the first mapping file that is not there: a call that
 * succeeds puts errno back as it found it, as PMDK's leaves it.
 *
 * The NVDIMMs are taken in mapping order, the region's interleave
 * positions; PMDK concatenates ids in libndctl's order of the bus's
 * devices, which may differ on a region of several NVDIMMs: an id is
 * only ever compared with one made by the same library.
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include "pmem2.h"

const char *pmem2_sysfs_root(void)
{
	const char *root = getenv("NTMEM_SYSFS_ROOT");

	return root && *root ? root : "/sys";
}

int pmem2_source_region(const struct pmem2_source *src, const char *fn,
			char *dir, size_t len)
{
	char path[PATH_MAX], real[PATH_MAX], *p;
	struct stat st;
	dev_t dev;

	if (src->devdax) {
		dev = src->rdev;
	} else {
		if (fstat(src->fd, &st))
			return pmem2_err_errno(errno, "%s: fstat fd %d", fn,
					       src->fd);
		dev = st.st_dev;
	}
	snprintf(path, sizeof(path), "%s/dev/%s/%u:%u", pmem2_sysfs_root(),
		 src->devdax ? "char" : "block", major(dev), minor(dev));
	if (!realpath(path, real))
		return 0;	/* no such device in sysfs: not on pmem */
	/* The innermost "regionN" directory the device lies under. */
	while ((p = strrchr(real, '/')) && p != real) {
		const char *name = p + 1;

		if (strncmp(name, "region", 6) == 0 && name[6] &&
		    strspn(name + 6, "0123456789") == strlen(name + 6)) {
			if (strlen(real) >= len)
				return 0;
			strcpy(dir, real);
			return 1;
		}
		*p = '\0';
	}
	return 0;
}

/*
 * Read the one-line sysfs attribute @dir/@attr into @buf (newline
 * dropped): 0, or -errno of open/read.
 */
static int read_attr(const char *dir, const char *attr, char *buf, size_t len)
{
	char path[PATH_MAX];
	ssize_t n;
	int fd;

	snprintf(path, sizeof(path), "%s/%s", dir, attr);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	n = read(fd, buf, len - 1);
	if (n < 0) {
		int err = errno;

		close(fd);
		return -err;
	}
	close(fd);
	buf[n] = '\0';
	buf[strcspn(buf, "\n")] = '\0';
	return 0;
}

/* Called with each NVDIMM's sysfs directory; nonzero stops the walk. */
typedef int (*dimm_fn)(void *arg, const char *dimm_dir);

/*
 * Call @fn for each NVDIMM of region @region, in mapping order: 0, the
 * first nonzero return of @fn, or NOSUPP for a mapping that names no
 * NVDIMM.
 */
static int for_each_dimm(const char *region, const char *fn, dimm_fn cb,
			 void *arg)
{
	char attr[32], buf[256], dimm[PATH_MAX + 64];
	int ret;

	for (unsigned k = 0;; k++) {
		snprintf(attr, sizeof(attr), "mapping%u", k);
		if (read_attr(region, attr, buf, sizeof(buf)))
			return 0;	/* past the last mapping */
		buf[strcspn(buf, ",")] = '\0';
		if (strncmp(buf, "nmem", 4) || strchr(buf, '/'))
			return pmem2_err(PMEM2_E_NOSUPP,
					 "%s: %s/%s names no NVDIMM", fn,
					 region, attr);
		/* nmemX is a sibling of the region on its nd bus. */
		snprintf(dimm, sizeof(dimm), "%.*s/%s",
			 (int)(strrchr(region, '/') - region), region, buf);
		ret = cb(arg, dimm);
		if (ret)
			return ret;
	}
}

struct id_walk {
	const char *fn;
	char *id;		/* NULL: only measure */
	size_t cap;		/* bytes at @id */
	size_t len;		/* bytes so far, with the terminating NUL */
};

static int add_dimm_id(void *arg, const char *dimm)
{
	struct id_walk *w = arg;
	char uid[256];
	size_t n;

	if (read_attr(dimm, "nfit/id", uid, sizeof(uid)) || !uid[0])
		return pmem2_err(PMEM2_E_NOSUPP,
				 "%s: %s has no unique id (nfit/id)", w->fn,
				 dimm);
	n = strlen(uid);
	if (w->id) {
		if (w->len + n > w->cap)
			return pmem2_err(PMEM2_E_BUFFER_TOO_SMALL,
					 "%s: len %zu is too small for the "
					 "NVDIMMs' ids", w->fn, w->cap);
		memcpy(w->id + w->len - 1, uid, n + 1);
	}
	w->len += n;
	return 0;
}

int pmem2_source_device_id(const struct pmem2_source *src, char *id,
			   size_t *len)
{
	static const char fn[] = "pmem2_source_device_id";
	struct id_walk w = { .fn = fn, .len = 1 };
	char region[PATH_MAX];
	int ret, saved_errno = errno;

	if (src->type != PMEM2_SOURCE_FD)
		return pmem2_err(PMEM2_E_NOSUPP,
				 "%s: src is an anonymous source: it has no "
				 "device", fn);
	ret = pmem2_source_region(src, fn, region, sizeof(region));
	if (ret < 0)
		return ret;
	if (ret == 0)
		return pmem2_err(PMEM2_E_NOSUPP,
				 "%s: src is not on an nd region: no NVDIMM to "
				 "identify", fn);
	/* Measure first: a buffer too small is refused before a byte. */
	ret = for_each_dimm(region, fn, add_dimm_id, &w);
	if (ret)
		return ret;
	if (!id) {
		*len = w.len;
		errno = saved_errno;
		return 0;
	}
	if (w.len > *len)
		return pmem2_err(PMEM2_E_BUFFER_TOO_SMALL,
				 "%s: len %zu is too small for the NVDIMMs' "
				 "ids (%zu bytes)", fn, *len, w.len);
	w = (struct id_walk){ .fn = fn, .id = id, .cap = *len, .len = 1 };
	id[0] = '\0';
	ret = for_each_dimm(region, fn, add_dimm_id, &w);
	if (!ret)
		errno = saved_errno;
	return ret;
}

struct usc_walk {
	const char *fn;
	uint64_t sum;
};

static int add_dimm_usc(void *arg, const char *dimm)
{
	struct usc_walk *w = arg;
	char buf[64], *end;
	long long v;

	if (read_attr(dimm, "nfit/dirty_shutdown", buf, sizeof(buf)))
		return pmem2_err(PMEM2_E_NOSUPP,
				 "%s: %s reports no unsafe shutdown count "
				 "(nfit/dirty_shutdown)", w->fn, dimm);
	errno = 0;
	v = strtoll(buf, &end, 0);
	if (errno || end == buf || *end || v < 0)
		return pmem2_err(PMEM2_E_NOSUPP,
				 "%s: %s/nfit/dirty_shutdown holds '%s', not "
				 "a count", w->fn, dimm, buf);
	w->sum += (uint64_t)v;
	return 0;
}

int pmem2_source_device_usc(const struct pmem2_source *src, uint64_t *usc)
{
	static const char fn[] = "pmem2_source_device_usc";
	struct usc_walk w = { .fn = fn };
	char region[PATH_MAX];
	int ret, saved_errno = errno;

	if (src->type != PMEM2_SOURCE_FD)
		return pmem2_err(PMEM2_E_NOSUPP,
				 "%s: src is an anonymous source: it has no "
				 "unsafe shutdown count", fn);
	ret = pmem2_source_region(src, fn, region, sizeof(region));
	if (ret < 0)
		return ret;
	if (ret == 0)
		return pmem2_err(PMEM2_E_NOSUPP,
				 "%s: src is not on an nd region: no unsafe "
				 "shutdown count", fn);
	ret = for_each_dimm(region, fn, add_dimm_usc, &w);
	if (ret)
		return ret;
	*usc = w.sum;
	errno = saved_errno;
	return 0;
}

int pmem2_source_numa_node(const struct pmem2_source *src, int *numa_node)
{
	static const char fn[] = "pmem2_source_numa_node";
	char region[PATH_MAX], buf[32], *end;
	int ret, saved_errno = errno;
	long v;

	if (src->type != PMEM2_SOURCE_FD)
		return pmem2_err(PMEM2_E_NOSUPP,
				 "%s: src is an anonymous source: it is bound "
				 "to no numa node", fn);
	ret = pmem2_source_region(src, fn, region, sizeof(region));
	if (ret < 0)
		return ret;
	if (ret == 0)
		return pmem2_err(PMEM2_E_DAX_REGION_NOT_FOUND,
				 "%s: src is not on an nd region", fn);
	/* libndctl's answer when the region has no numa_node: -1. */
	v = -1;
	if (read_attr(region, "numa_node", buf, sizeof(buf)) == 0) {
		errno = 0;
		v = strtol(buf, &end, 0);
		if (errno || end == buf || v < -1 || v > INT_MAX)
			v = -1;
	}
	*numa_node = (int)v;
	errno = saved_errno;
	return 0;
}
