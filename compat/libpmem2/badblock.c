// SPDX-License-Identifier: MIT
/*
 * badblock.c - pmem2_badblock_*(): the media errors under a source, and
 * clearing them.
 *
 * The list is ntm_introspect_badblocks()'s, read once when the context is
 * made: a devdax device's nd region badblocks clipped to the device, or a
 * file's block-device badblocks mapped through its extents, in bytes of
 * the device or file, as PMDK reports them. A file not on pmem has an
 * empty list (the context is made; the first next() is
 * NO_BAD_BLOCK_FOUND), as with PMDK.
 *
 * Clearing does what PMDK does. A file: punch the range out
 * (FALLOC_FL_PUNCH_HOLE, which on fsdax makes the file system give the
 * blocks back and the driver clear their poison) and allocate it again,
 * so the range reads as zeros and a later store does not fault on a
 * hole. A devdax device: the platform's clear-error command on the
 * range's physical address, through the nd bus's control device
 * (/dev/ndctlN): ND_CMD_ARS_CAP for the range, then ND_CMD_CLEAR_ERROR,
 * which must clear all of it; the kernel drops the range from the
 * region's badblocks when it does. The range is not checked against the
 * list, as PMDK does not: a caller may clear what it knows to be bad.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <linux/ndctl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include <ntmem.h>
#include <ntmem/introspect.h>

#include "pmem2.h"

struct pmem2_badblock_context {
	int fd;			/* the source's, never closed */
	bool devdax;
	dev_t rdev;		/* devdax: its device number */
	size_t n, next;		/* ranges, and the one next() returns */
	struct pmem2_badblock *v;
};

static int collect(void *arg, uint64_t offset, uint64_t length)
{
	struct pmem2_badblock_context *c = arg;
	struct pmem2_badblock *v = realloc(c->v, (c->n + 1) * sizeof(*v));

	if (!v)
		return 1;	/* stops the walk; reported as ENOMEM */
	v[c->n++] = (struct pmem2_badblock){ .offset = offset,
					     .length = length };
	c->v = v;
	return 0;
}

int pmem2_badblock_context_new(struct pmem2_badblock_context **bbctx,
			       const struct pmem2_source *src)
{
	static const char fn[] = "pmem2_badblock_context_new";
	struct pmem2_badblock_context *c;
	int ret, saved_errno = errno;

	if (src->type != PMEM2_SOURCE_FD)
		return pmem2_err(PMEM2_E_NOSUPP,
				 "%s: src is an anonymous source: it has no "
				 "bad blocks", fn);
	c = calloc(1, sizeof(*c));
	if (!c)
		return pmem2_err_errno(ENOMEM, "%s", fn);
	*c = (struct pmem2_badblock_context){ .fd = src->fd,
					      .devdax = src->devdax,
					      .rdev = src->rdev };
	ret = ntm_introspect_badblocks(pmem2_sysfs_root(), src->fd, collect, c);
	if (ret >= 0 && (size_t)ret != c->n)
		ret = -ENOMEM;	/* collect() stopped the walk */
	if (ret < 0) {
		free(c->v);
		free(c);
		return ret == -ENOMEM ?
			pmem2_err_errno(ENOMEM, "%s", fn) :
			pmem2_err(ret, "%s: %s", fn, ntm_errmsg());
	}
	*bbctx = c;
	/*
	 * The sysfs files a file not on pmem lacks (ENOENT) were looked
	 * for, not missed: a call that succeeds leaves errno as it was, as
	 * PMDK's does.
	 */
	errno = saved_errno;
	return 0;
}

void pmem2_badblock_context_delete(struct pmem2_badblock_context **bbctx)
{
	if (!*bbctx)
		return;
	free((*bbctx)->v);
	free(*bbctx);
	*bbctx = NULL;
}

int pmem2_badblock_next(struct pmem2_badblock_context *bbctx,
			struct pmem2_badblock *bb)
{
	if (bbctx->next >= bbctx->n)
		return pmem2_err(PMEM2_E_NO_BAD_BLOCK_FOUND,
				 "pmem2_badblock_next: no more bad blocks");
	*bb = bbctx->v[bbctx->next++];
	return 0;
}

/* A file: punch the range out, then allocate it again. */
static int clear_file(const struct pmem2_badblock_context *c, const char *fn,
		      const struct pmem2_badblock *bb)
{
	if (bb->offset > (uint64_t)INT64_MAX || bb->length > (uint64_t)INT64_MAX)
		return pmem2_err_errno(EINVAL, "%s: bb offset %zu length %zu",
				       fn, bb->offset, bb->length);
	if (fallocate(c->fd, FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE,
		      (off_t)bb->offset, (off_t)bb->length))
		return pmem2_err_errno(errno, "%s: punching %zu bytes at "
				       "offset %zu of fd %d", fn, bb->length,
				       bb->offset, c->fd);
	if (fallocate(c->fd, FALLOC_FL_KEEP_SIZE, (off_t)bb->offset,
		      (off_t)bb->length))
		return pmem2_err_errno(errno, "%s: allocating %zu bytes at "
				       "offset %zu of fd %d again", fn,
				       bb->length, bb->offset, c->fd);
	return 0;
}

/* A number in sysfs file @dir/@attr: 0 or -errno (-EINVAL: not one). */
static int read_u64(const char *dir, const char *attr, uint64_t *v)
{
	char path[PATH_MAX + 32], buf[32], *end;
	ssize_t n;
	int fd;

	snprintf(path, sizeof(path), "%s/%s", dir, attr);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n < 0)
		return -errno;
	buf[n] = '\0';
	errno = 0;
	*v = strtoull(buf, &end, 0);
	return errno || end == buf || (*end && *end != '\n') ? -EINVAL : 0;
}

/* A devdax device: the bus's clear-error command on the physical range. */
static int clear_devdax(const struct pmem2_badblock_context *c, const char *fn,
			const struct pmem2_badblock *bb)
{
	char dev[PATH_MAX], region[PATH_MAX], ctl[64];
	struct nd_cmd_ars_cap cap = { 0 };
	struct nd_cmd_clear_error clr = { 0 };
	struct pmem2_source src = { .type = PMEM2_SOURCE_FD, .fd = c->fd,
				    .devdax = true, .rdev = c->rdev };
	const char *bus;
	uint64_t start = 0;
	int ret, fd;

	snprintf(dev, sizeof(dev), "%s/dev/char/%u:%u", pmem2_sysfs_root(),
		 major(c->rdev), minor(c->rdev));
	ret = read_u64(dev, "resource", &start);
	if (ret)
		return pmem2_err_errno(-ret, "%s: %s/resource (the device's "
				       "physical address)", fn, dev);
	ret = pmem2_source_region(&src, fn, region, sizeof(region));
	if (ret < 0)
		return ret;
	/* The region's parent is its nd bus, "ndbusN": /dev/ndctlN. */
	bus = NULL;
	if (ret == 1) {
		*strrchr(region, '/') = '\0';
		bus = strrchr(region, '/');
	}
	if (!bus || strncmp(bus + 1, "ndbus", 5))
		return pmem2_err(PMEM2_E_NOSUPP, "%s: devdax %u:%u is on no nd "
				 "bus: nothing to send the clear-error command "
				 "to", fn, major(c->rdev), minor(c->rdev));
	snprintf(ctl, sizeof(ctl), "/dev/ndctl%s", bus + 6);
	fd = open(ctl, O_RDWR | O_CLOEXEC);
	if (fd < 0)
		return pmem2_err_errno(errno, "%s: open %s", fn, ctl);
	cap.address = start + bb->offset;
	cap.length = bb->length;
	if (ioctl(fd, ND_IOCTL_ARS_CAP, &cap)) {
		ret = pmem2_err_errno(errno, "%s: ND_CMD_ARS_CAP on %s", fn,
				      ctl);
		goto out;
	}
	if (cap.status & 0xffff) {
		ret = pmem2_err(PMEM2_E_NOSUPP, "%s: the platform refuses "
				"address range scrub on %s (status %#x)", fn,
				ctl, cap.status);
		goto out;
	}
	clr.address = cap.address;
	clr.length = cap.length;
	if (ioctl(fd, ND_IOCTL_CLEAR_ERROR, &clr)) {
		ret = pmem2_err_errno(errno, "%s: ND_CMD_CLEAR_ERROR on %s",
				      fn, ctl);
		goto out;
	}
	if ((clr.status & 0xffff) || clr.cleared != bb->length)
		ret = pmem2_err(PMEM2_E_IO_FAIL, "%s: the platform cleared %llu "
				"of %zu bytes at offset %zu (status %#x)", fn,
				(unsigned long long)clr.cleared, bb->length,
				bb->offset, clr.status);
out:
	close(fd);
	return ret;
}

int pmem2_badblock_clear(struct pmem2_badblock_context *bbctx,
			 const struct pmem2_badblock *bb)
{
	static const char fn[] = "pmem2_badblock_clear";

	return bbctx->devdax ? clear_devdax(bbctx, fn, bb) :
			       clear_file(bbctx, fn, bb);
}
