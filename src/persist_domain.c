// SPDX-License-Identifier: MIT
/*
 * persist_domain.c - where a store becomes durable, from sysfs.
 *
 * Every nd region (/sys/bus/nd/devices/regionN, a link into /sys/devices)
 * says in its persistence_domain attribute what the platform flushes on
 * power loss (the kernel's drivers/nvdimm/region_devs.c):
 *
 *   "cpu_cache"          the CPU caches too (eADR; CXL Global Persistent
 *                        Flush for CXL regions, which cxl_pmem registers
 *                        as nd regions): a store is durable once ordered
 *   "memory_controller"  the memory controller's queues (ADR): a line must
 *                        be written back from the cache first
 *   "" or no attribute   neither is promised (newer kernels hide the
 *                        attribute then)
 *
 * A devdax device (/sys/dev/char/MAJ:MIN) and the pmem block device under
 * an fsdax file system (/sys/dev/block/MAJ:MIN, a partition included) are
 * devices below their region in /sys/devices: the region holding one is
 * the nd region whose resolved path is a prefix of the device's. Matching
 * against the nd bus's own list, rather than by a "regionN" directory
 * name, keeps a CXL bus region (also called regionN) from being taken for
 * the nd region below it.
 *
 * libc only: `ntmem info` compiles this file into the tool as well.
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/sysmacros.h>

#include "env.h"
#include "ntmem/embed.h"
#include "persist_domain.h"

const char *ntm_sysfs_root = "/sys";

const char *ntm_persist_domain_name(enum ntm_persist_domain domain)
{
	switch (domain) {
	case NTM_PERSIST_NONE:
		return "none";
	case NTM_PERSIST_MEMORY_CONTROLLER:
		return "memory_controller";
	case NTM_PERSIST_CPU_CACHE:
		return "cpu_cache";
	}
	return "unknown";
}

/*
 * One region's attribute: its domain, NTM_PERSIST_NONE when it is absent
 * (neither flag set), empty or a word this code does not know (writing
 * back is never wrong), or -errno when it exists but cannot be read.
 */
static int region_domain(const char *root, const char *region)
{
	char path[PATH_MAX], text[64];
	size_t len;
	FILE *f;
	int err;

	snprintf(path, sizeof(path), "%s/bus/nd/devices/%s/persistence_domain",
		 root, region);
	f = fopen(path, "r");
	if (!f)
		return errno == ENOENT ? NTM_PERSIST_NONE : -errno;
	len = fread(text, 1, sizeof(text) - 1, f);
	err = ferror(f) ? (errno ? -errno : -EIO) : 0;
	fclose(f);
	if (err)
		return err;
	text[len] = '\0';
	text[strcspn(text, "\n")] = '\0';
	if (strcmp(text, "cpu_cache") == 0)
		return NTM_PERSIST_CPU_CACHE;
	if (strcmp(text, "memory_controller") == 0)
		return NTM_PERSIST_MEMORY_CONTROLLER;
	return NTM_PERSIST_NONE;
}

static int is_region(const struct dirent *e)
{
	return strncmp(e->d_name, "region", 6) == 0 && e->d_name[6] >= '0' &&
	       e->d_name[6] <= '9';
}

/* The nd regions' names, region2 before region10; count or -errno. */
static int list_regions(const char *root, struct dirent ***names)
{
	char path[PATH_MAX];
	int n;

	snprintf(path, sizeof(path), "%s/bus/nd/devices", root);
	n = scandir(path, names, is_region, versionsort);
	if (n < 0) {
		*names = NULL;
		/* No nd bus: no NVDIMM or CXL pmem driver, no regions. */
		return errno == ENOENT || errno == ENOTDIR ? 0 : -errno;
	}
	return n;
}

static void free_regions(struct dirent **names, int n)
{
	for (int i = 0; i < n; i++)
		free(names[i]);
	free(names);
}

int ntm_persist_domain_regions(const char *root,
			       int (*fn)(void *arg, const char *region, int domain),
			       void *arg)
{
	struct dirent **names;
	int n = list_regions(root, &names), ret = 0;

	for (int i = 0; i < n && !ret; i++)
		ret = fn(arg, names[i]->d_name, region_domain(root, names[i]->d_name));
	free_regions(names, n > 0 ? n : 0);
	return ret ? ret : n;
}

int ntm_persist_domain_of_dev(const char *root, dev_t dev, bool chr)
{
	char path[PATH_MAX], dev_path[PATH_MAX], region_path[PATH_MAX];
	struct dirent **names;
	int n, ret = NTM_PERSIST_NONE;

	snprintf(path, sizeof(path), "%s/dev/%s/%u:%u", root,
		 chr ? "char" : "block", major(dev), minor(dev));
	if (!realpath(path, dev_path))
		return NTM_PERSIST_NONE;	/* no such device in sysfs */
	n = list_regions(root, &names);
	for (int i = 0; i < n; i++) {
		size_t len;

		snprintf(path, sizeof(path), "%s/bus/nd/devices/%s", root,
			 names[i]->d_name);
		if (!realpath(path, region_path))
			continue;
		len = strlen(region_path);
		if (strncmp(dev_path, region_path, len) == 0 &&
		    dev_path[len] == '/') {
			ret = region_domain(root, names[i]->d_name);
			break;
		}
	}
	free_regions(names, n > 0 ? n : 0);
	return n < 0 ? n : ret;
}

/* The weakest domain read so far, and the first error of one unread. */
struct weakest {
	int domain, err;
};

static int weaker(void *arg, const char *region, int domain)
{
	struct weakest *w = arg;

	(void)region;
	if (domain < 0)
		w->err = w->err ? w->err : domain;
	else if (domain < w->domain)
		w->domain = domain;
	return 0;
}

int ntm_persist_domain_weakest(const char *root)
{
	struct weakest w = { NTM_PERSIST_CPU_CACHE, 0 };
	int n = ntm_persist_domain_regions(root, weaker, &w);

	if (n < 0)
		return n;
	if (n == 0)
		return NTM_PERSIST_NONE;
	/* A region known not to be cpu_cache settles it, readable or not. */
	if (w.err && w.domain == NTM_PERSIST_CPU_CACHE)
		return w.err;
	return w.domain;
}

int ntm_persist_domain_all_cpu_cache(const char *root)
{
	int d = ntm_persist_domain_weakest(root);

	return d < 0 ? -1 : d == NTM_PERSIST_CPU_CACHE;
}
