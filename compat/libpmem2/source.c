// SPDX-License-Identifier: MIT
/*
 * source.c - pmem2_source_*(): what is mapped. A descriptor names a
 * regular file or a devdax character device (its size and alignment from
 * sysfs, /sys/dev/char/MAJ:MIN/, as PMDK reads them: "size" and
 * "device/align", or "align" where the devdax is on the dax bus); an
 * anonymous source only has a size. The descriptor stays the caller's:
 * the source neither duplicates nor closes it.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include "pmem2.h"

/* Whether @rdev is a device of the dax subsystem. */
static bool is_dax_device(dev_t rdev)
{
	char path[PATH_MAX], link[PATH_MAX];
	const char *base;
	ssize_t n;

	snprintf(path, sizeof(path), "%s/dev/char/%u:%u/subsystem",
		 pmem2_sysfs_root(), major(rdev), minor(rdev));
	n = readlink(path, link, sizeof(link) - 1);
	if (n < 0)
		return false;
	link[n] = '\0';
	base = strrchr(link, '/');
	base = base ? base + 1 : link;
	return strcmp(base, "dax") == 0;
}

/*
 * A decimal (size) or hexadecimal-or-decimal (align) number from the
 * devdax's sysfs file @attr: 0, -errno of the read, or @bad_format.
 */
static int devdax_attr(dev_t rdev, const char *attr, const char *fn,
		       int bad_format, size_t *value)
{
	char path[PATH_MAX], buf[64], *end;
	unsigned long long v;
	ssize_t n;
	int fd;

	snprintf(path, sizeof(path), "%s/dev/char/%u:%u/%s", pmem2_sysfs_root(),
		 major(rdev), minor(rdev), attr);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return pmem2_err_errno(errno, "%s: open %s", fn, path);
	n = read(fd, buf, sizeof(buf) - 1);
	if (n < 0) {
		int err = errno;

		close(fd);
		return pmem2_err_errno(err, "%s: read %s", fn, path);
	}
	close(fd);
	buf[n] = '\0';
	errno = 0;
	v = strtoull(buf, &end, 0);
	if (errno || end == buf || (*end != '\0' && *end != '\n'))
		return pmem2_err(bad_format, "%s: %s holds '%.*s', not a number",
				 fn, path, (int)strcspn(buf, "\n"), buf);
	*value = (size_t)v;
	return 0;
}

/*
 * The devdax's alignment attribute: "device/align" under a kernel with
 * the dax class (/sys/dev/char/M:m is the class device, its device/ the
 * devdax), else "align" (since 5.1 the devdax is a device of the dax bus:
 * /sys/dev/char/M:m is the devdax itself, with no device/ link).
 */
static const char *devdax_align_attr(dev_t rdev)
{
	char path[PATH_MAX];

	snprintf(path, sizeof(path), "%s/dev/char/%u:%u/device/align",
		 pmem2_sysfs_root(), major(rdev), minor(rdev));
	return access(path, F_OK) == 0 ? "device/align" : "align";
}

int pmem2_source_from_fd(struct pmem2_source **src, int fd)
{
	struct pmem2_source *s;
	struct stat st;
	int flags;

	*src = NULL;
	flags = fd < 0 ? -1 : fcntl(fd, F_GETFL);
	if (flags < 0)
		return pmem2_err(PMEM2_E_INVALID_FILE_HANDLE,
				 "pmem2_source_from_fd: fd %d is not an open "
				 "descriptor", fd);
	if ((flags & O_ACCMODE) == O_WRONLY)
		return pmem2_err(PMEM2_E_INVALID_FILE_HANDLE,
				 "pmem2_source_from_fd: fd %d is open O_WRONLY: "
				 "a mapping must be readable", fd);
	if (fstat(fd, &st))
		return pmem2_err_errno(errno, "pmem2_source_from_fd: fstat fd %d",
				       fd);
	if (!S_ISREG(st.st_mode) &&
	    !(S_ISCHR(st.st_mode) && is_dax_device(st.st_rdev)))
		return pmem2_err(PMEM2_E_INVALID_FILE_TYPE,
				 "pmem2_source_from_fd: fd %d is %s, neither a "
				 "regular file nor a devdax device", fd,
				 S_ISDIR(st.st_mode) ? "a directory" :
				 S_ISCHR(st.st_mode) ? "a character device" :
				 S_ISBLK(st.st_mode) ? "a block device" :
				 S_ISFIFO(st.st_mode) ? "a FIFO" :
				 S_ISSOCK(st.st_mode) ? "a socket" : "special");
	s = malloc(sizeof(*s));
	if (!s)
		return pmem2_err_errno(ENOMEM, "pmem2_source_from_fd");
	*s = (struct pmem2_source){
		.type = PMEM2_SOURCE_FD,
		.fd = fd,
		.devdax = S_ISCHR(st.st_mode),
		.rdev = st.st_rdev,
		.st_dev = st.st_dev,
		.access = flags & O_ACCMODE,
	};
	*src = s;
	return 0;
}

int pmem2_source_from_anon(struct pmem2_source **src, size_t size)
{
	struct pmem2_source *s = malloc(sizeof(*s));

	if (!s) {
		*src = NULL;
		return pmem2_err_errno(ENOMEM, "pmem2_source_from_anon");
	}
	*s = (struct pmem2_source){ .type = PMEM2_SOURCE_ANON,
				    .anon_size = size, .fd = -1 };
	*src = s;
	return 0;
}

int pmem2_source_delete(struct pmem2_source **src)
{
	free(*src);
	*src = NULL;
	return 0;
}

int pmem2_source_get_fd(const struct pmem2_source *src, int *fd)
{
	if (src->type != PMEM2_SOURCE_FD)
		return pmem2_err(PMEM2_E_FILE_DESCRIPTOR_NOT_SET,
				 "pmem2_source_get_fd: src is an anonymous "
				 "source, it has no descriptor");
	*fd = src->fd;
	return 0;
}

int pmem2_source_geometry(const struct pmem2_source *src, const char *fn,
			  size_t *size, size_t *align)
{
	size_t sz, al = (size_t)sysconf(_SC_PAGESIZE);
	int ret, saved_errno = errno;
	struct stat st;

	if (src->type == PMEM2_SOURCE_ANON) {
		sz = src->anon_size;
	} else if (src->devdax) {
		ret = devdax_attr(src->rdev, "size", fn,
				  PMEM2_E_INVALID_SIZE_FORMAT, &sz);
		if (!ret)
			ret = devdax_attr(src->rdev,
					  devdax_align_attr(src->rdev), fn,
					  PMEM2_E_INVALID_ALIGNMENT_FORMAT, &al);
		if (ret)
			return ret;
		if (al == 0 || (al & (al - 1)))
			return pmem2_err(PMEM2_E_INVALID_ALIGNMENT_VALUE,
					 "%s: devdax %u:%u has alignment %zu, "
					 "not a power of two", fn,
					 major(src->rdev), minor(src->rdev), al);
	} else {
		/* A file's size now, not when the source was made. */
		if (fstat(src->fd, &st))
			return pmem2_err_errno(errno, "%s: fstat fd %d", fn,
					       src->fd);
		sz = (size_t)st.st_size;
	}
	if (size)
		*size = sz;
	if (align)
		*align = al;
	/*
	 * The attribute a kernel does not have (device/align since the dax
	 * bus) was looked for, not missed: errno as the caller had it.
	 */
	errno = saved_errno;
	return 0;
}

int pmem2_source_size(const struct pmem2_source *src, size_t *size)
{
	return pmem2_source_geometry(src, "pmem2_source_size", size, NULL);
}

int pmem2_source_alignment(const struct pmem2_source *src, size_t *alignment)
{
	return pmem2_source_geometry(src, "pmem2_source_alignment", NULL,
				     alignment);
}
