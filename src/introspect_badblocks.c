// SPDX-License-Identifier: MIT
/*
 * introspect_badblocks.c - ntm_introspect_badblocks(): the media errors
 * under a devdax device or a file on an fsdax file system, through the
 * readers ntm_blk_open() loads a device's list with (badblocks_sysfs.c),
 * so a drop-in or tool that reports them reports what the block device
 * would refuse to read.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include "badblocks.h"
#include "error.h"
#include "ntmem/introspect.h"

/* A devdax device's size, from sysfs: 0 or -errno. */
static int devdax_size(const char *root, dev_t rdev, uint64_t *size)
{
	char path[512], buf[32], *end;
	ssize_t n;
	int fd;

	snprintf(path, sizeof(path), "%s/dev/char/%u:%u/size", root,
		 major(rdev), minor(rdev));
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n <= 0)
		return n < 0 ? -errno : -EINVAL;
	buf[n] = '\0';
	errno = 0;
	*size = strtoull(buf, &end, 0);
	if (errno || end == buf || (*end && *end != '\n'))
		return -EINVAL;
	return 0;
}

int ntm_introspect_badblocks(const char *sysfs_root, int fd,
			     int (*fn)(void *arg, uint64_t offset,
				       uint64_t length),
			     void *arg)
{
	struct ntm_bb_list list = { 0 };
	uint64_t size = 0;
	struct stat st;
	int ret;

	if (!sysfs_root)
		return ntm_error(-EINVAL, "sysfs_root: NULL");
	if (!fn)
		return ntm_error(-EINVAL, "fn: NULL");
	if (fstat(fd, &st))
		return ntm_error(-errno, "fd %d: fstat", fd);
	if (S_ISCHR(st.st_mode)) {
		ret = devdax_size(sysfs_root, st.st_rdev, &size);
		if (ret == -ENOENT)
			return 0;	/* not a dax device sysfs knows */
		if (ret)
			return ntm_error(ret, "fd %d: cannot read the size of "
					 "device %u:%u in sysfs", fd,
					 major(st.st_rdev), minor(st.st_rdev));
		ret = ntm_badblocks_devdax(sysfs_root, st.st_rdev, size,
					   ntm_bb_list_add, &list);
		if (ret)
			ret = ntm_error(ret, "fd %d: cannot read its region's "
					"bad blocks in sysfs", fd);
	} else if (S_ISREG(st.st_mode)) {
		ret = ntm_badblocks_fsdax(sysfs_root, fd, (uint64_t)st.st_size,
					  ntm_bb_list_add, &list);
		if (ret)
			ret = ntm_error(ret, "fd %d: cannot map its block "
					"device's bad sectors to the file "
					"(FIEMAP)", fd);
	} else {
		return ntm_error(-EINVAL, "fd %d: neither a regular file nor "
				 "a character device", fd);
	}
	if (ret) {
		ntm_bb_free(&list);
		return ret;
	}
	for (size_t i = 0; i < list.n; i++) {
		ret = (int)i + 1;
		if (fn(arg, list.v[i].sector * 512, list.v[i].count * 512))
			break;
	}
	ntm_bb_free(&list);
	return ret;
}
