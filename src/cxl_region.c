// SPDX-License-Identifier: MIT
/*
 * cxl_region.c - what sysfs says of the CXL region behind an nd region of
 * a CXL bus (struct ntm_nd_region's cxl_* fields): the kernel's cxl_pmem
 * driver makes each CXL pmem region an nd region on an nd bus whose
 * provider is "CXL", below an nvdimm bridge, with no link from one to
 * the other. What ties them is the physical address: the nd region's
 * resource is the CXL region's. The CXL region names its interleave and
 * its targets, endpoint decoders "decoderP.N" of the port endpointP, whose
 * uport is the memory device.
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "persist_domain.h"

/*
 * @src into @dst of @len bytes, cut to fit, always NUL-terminated (an
 * snprintf() into a shorter buffer than the source's is -Wformat-truncation).
 */
static void copy_cut(char *dst, size_t len, const char *src)
{
	size_t n = strlen(src);

	if (n > len - 1)
		n = len - 1;
	memcpy(dst, src, n);
	dst[n] = '\0';
}

/* @name's attribute @attr under @root/bus/@bus/devices. */
static uint64_t attr(const char *root, const char *bus, const char *name,
		     const char *attr_name, uint64_t dflt)
{
	char path[PATH_MAX];
	uint64_t v;

	snprintf(path, sizeof(path), "%s/bus/%s/devices/%s/%s", root, bus, name,
		 attr_name);
	return ntm_sysfs_read_u64(path, &v) ? dflt : v;
}

/* The memory device behind endpoint decoder @decoder ("decoder2.0"), or
 * the decoder's own name when its port says none, into @out. */
static void memdev_of(const char *root, const char *decoder, char *out,
		      size_t len)
{
	char path[PATH_MAX], link[PATH_MAX];
	unsigned port;
	ssize_t n;
	const char *slash;

	copy_cut(out, len, decoder);
	if (sscanf(decoder, "decoder%u.", &port) != 1)
		return;
	snprintf(path, sizeof(path), "%s/bus/cxl/devices/endpoint%u/uport", root,
		 port);
	n = readlink(path, link, sizeof(link) - 1);
	if (n <= 0)
		return;
	link[n] = '\0';
	slash = strrchr(link, '/');
	copy_cut(out, len, slash ? slash + 1 : link);
}

static int is_cxl_region(const struct dirent *e)
{
	unsigned id;
	char rest;

	return sscanf(e->d_name, "region%u%c", &id, &rest) == 1;
}

/* @out's interleave and memory devices, from CXL region @name. */
static void read_region(const char *root, const char *name,
			struct ntm_nd_region *out)
{
	char path[PATH_MAX], target[32], memdev[64];
	size_t used = 0;

	copy_cut(out->cxl_region, sizeof(out->cxl_region), name);
	out->cxl_ways = (unsigned)attr(root, "cxl", name, "interleave_ways", 0);
	out->cxl_granularity = (unsigned)attr(root, "cxl", name,
					      "interleave_granularity", 0);
	for (unsigned t = 0; t < out->cxl_ways; t++) {
		snprintf(path, sizeof(path), "%s/bus/cxl/devices/%s/target%u",
			 root, name, t);
		ntm_sysfs_read_line(path, target, sizeof(target));
		if (!target[0])
			continue;	/* a position not filled */
		memdev_of(root, target, memdev, sizeof(memdev));
		used += (size_t)snprintf(out->cxl_memdevs + used,
					 sizeof(out->cxl_memdevs) - used, "%s%s",
					 used ? " " : "", memdev);
		if (used >= sizeof(out->cxl_memdevs))
			break;	/* cut, NUL-terminated by snprintf */
	}
}

void ntm_cxl_region_read(const char *root, struct ntm_nd_region *out)
{
	uint64_t at = attr(root, "nd", out->name, "resource", UINT64_MAX);
	char path[PATH_MAX];
	struct dirent **names;
	int n;

	if (at == UINT64_MAX)
		return;
	snprintf(path, sizeof(path), "%s/bus/cxl/devices", root);
	n = scandir(path, &names, is_cxl_region, versionsort);
	if (n < 0)
		return;
	for (int i = 0; i < n; i++)
		if (attr(root, "cxl", names[i]->d_name, "resource", UINT64_MAX) == at) {
			read_region(root, names[i]->d_name, out);
			break;
		}
	for (int i = 0; i < n; i++)
		free(names[i]);
	free(names);
}
