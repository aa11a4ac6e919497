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
 * A region's parent directory is its nd bus (ndbusN), whose provider
 * attribute names the driver that registered it. virtio-pmem's regions
 * are the one kind the kernel marks ND_REGION_ASYNC: a host file mapped
 * into the guest, which no cache write-back makes durable, only a flush
 * request to the host (sysfs shows no flag for it; the provider is what
 * tells). Writing 1 to a region's deep_flush calls nvdimm_flush(), which
 * there sends that request; but the kernel shows the attribute only for
 * regions with DIMMs (6.1's nvdimm_has_flush()), and virtio-pmem's have
 * none: a devdax device there has no durable path at all.
 *
 * These return -errno and leave the message to their callers, who know
 * what was being done (ns.c, dispatch.c, introspect.c).
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/sysmacros.h>
#include <unistd.h>

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

int ntm_sysfs_read_u64(const char *path, uint64_t *out)
{
	char buf[64];
	FILE *f = fopen(path, "r");
	int ret = -EINVAL;

	if (!f)
		return -errno;
	if (fgets(buf, sizeof(buf), f)) {
		char *end;

		errno = 0;
		*out = strtoull(buf, &end, 0);
		if (!errno && end != buf)
			ret = 0;
	}
	fclose(f);
	return ret;
}

void ntm_sysfs_read_line(const char *path, char *buf, size_t len)
{
	FILE *f = fopen(path, "r");

	buf[0] = '\0';
	if (!f)
		return;
	if (!fgets(buf, (int)len, f))
		buf[0] = '\0';
	buf[strcspn(buf, "\n")] = '\0';
	fclose(f);
}

/* Buses whose regions the kernel registers with ND_REGION_ASYNC. */
static bool provider_is_async(const char *provider)
{
	return strcmp(provider, "virtio-pmem") == 0;
}

void ntm_nd_region_read(const char *root, const char *name,
			struct ntm_nd_region *out)
{
	char path[PATH_MAX + 16], region_path[PATH_MAX];
	char *slash;

	memset(out, 0, sizeof(*out));
	snprintf(out->name, sizeof(out->name), "%s", name);
	out->domain = region_domain(root, name);
	snprintf(path, sizeof(path), "%s/bus/nd/devices/%s/deep_flush", root, name);
	out->deep_flush = access(path, F_OK) == 0;
	snprintf(path, sizeof(path), "%s/bus/nd/devices/%s", root, name);
	if (!realpath(path, region_path))
		return;
	slash = strrchr(region_path, '/');
	if (!slash || slash == region_path)
		return;
	*slash = '\0';
	if (strncmp(strrchr(region_path, '/') + 1, "ndbus", 5) != 0)
		return;		/* not below an nd bus: nothing to say of it */
	snprintf(out->bus, sizeof(out->bus), "%s", strrchr(region_path, '/') + 1);
	snprintf(path, sizeof(path), "%s/provider", region_path);
	ntm_sysfs_read_line(path, out->provider, sizeof(out->provider));
	out->async = provider_is_async(out->provider);
	if (!strcmp(out->provider, "CXL"))
		ntm_cxl_region_read(root, out);
}

int ntm_nd_region_of_dev(const char *root, dev_t dev, bool chr,
			 struct ntm_nd_region *out)
{
	char path[PATH_MAX], dev_path[PATH_MAX], region_path[PATH_MAX];
	struct dirent **names;
	int n, ret = 0;

	snprintf(path, sizeof(path), "%s/dev/%s/%u:%u", root,
		 chr ? "char" : "block", major(dev), minor(dev));
	if (!realpath(path, dev_path))
		return 0;	/* no such device in sysfs */
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
			ntm_nd_region_read(root, names[i]->d_name, out);
			ret = 1;
			break;
		}
	}
	free_regions(names, n > 0 ? n : 0);
	return n < 0 ? n : ret;
}

int ntm_nd_region_deep_flush(const char *root, const char *name)
{
	char path[PATH_MAX];
	int fd, ret = 0;

	snprintf(path, sizeof(path), "%s/bus/nd/devices/%s/deep_flush", root,
		 name);
	fd = open(path, O_WRONLY | O_CLOEXEC);
	if (fd < 0)
		return errno == ENOENT ? -EOPNOTSUPP : -errno;
	/* The kernel flushes inside this write; its error is the flush's. */
	if (write(fd, "1\n", 2) != 2)
		ret = errno ? -errno : -EIO;
	close(fd);
	return ret;
}

int ntm_persist_domain_of_dev(const char *root, dev_t dev, bool chr)
{
	struct ntm_nd_region r;
	int ret = ntm_nd_region_of_dev(root, dev, chr, &r);

	if (ret <= 0)
		return ret < 0 ? ret : NTM_PERSIST_NONE;
	return r.domain;
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
