// SPDX-License-Identifier: MIT
/*
 * map.c - pmem_map_file(), pmem_unmap(), pmem_is_pmem() and pmem_msync()
 * on ntmem's namespaces.
 *
 * pmem_map_file() opens or creates the file as PMDK does (flags, len and
 * devdax rules below), then maps it with ntm_ns_open_fd(): MAP_SYNC is
 * tried first, so a file on a DAX file system or a devdax device is
 * "pmem". Those ranges are kept in a registry that pmem_is_pmem() consults;
 * PMEM_IS_PMEM_FORCE overrides it either way.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <ntmem.h>

#include "compat.h"
#include "include/libpmem.h"
#include "internal.h"

#define FILE_FLAGS (PMEM_FILE_CREATE | PMEM_FILE_EXCL | PMEM_FILE_SPARSE | \
		    PMEM_FILE_TMPFILE)

static pthread_mutex_t registry_lock = PTHREAD_MUTEX_INITIALIZER;
static struct ntm_ns **registry;
static size_t nregistry, registry_cap;

static int registry_add(struct ntm_ns *ns)
{
	int ret = 0;

	pthread_mutex_lock(&registry_lock);
	if (nregistry == registry_cap) {
		size_t cap = registry_cap ? 2 * registry_cap : 16;
		struct ntm_ns **r = realloc(registry, cap * sizeof(*r));

		if (r) {
			registry = r;
			registry_cap = cap;
		} else {
			ret = -1;
		}
	}
	if (!ret)
		registry[nregistry++] = ns;
	pthread_mutex_unlock(&registry_lock);
	return ret;
}

/* Remove and return the namespace mapped at @addr, or NULL. */
static struct ntm_ns *registry_take(const void *addr)
{
	struct ntm_ns *ns = NULL;

	pthread_mutex_lock(&registry_lock);
	for (size_t i = 0; i < nregistry; i++)
		if (ntm_ns_base(registry[i]) == addr) {
			ns = registry[i];
			registry[i] = registry[--nregistry];
			break;
		}
	pthread_mutex_unlock(&registry_lock);
	return ns;
}

/* Fail with errno @err and a message, the way every entry point does. */
static void *fail(int err, const char *what, const char *path)
{
	pmem_set_error("%s '%s': %s", what, path ? path : "", strerror(err));
	errno = err;
	return NULL;
}

/* Open (and for CREATE size) the file; -1 with errno set on failure. */
static int open_file(const char *path, size_t len, int flags, mode_t mode,
		     bool *created)
{
	int fd, oflags = O_RDWR | O_CLOEXEC;

	*created = false;
	if (flags & PMEM_FILE_TMPFILE) {
		fd = open(path, O_TMPFILE | oflags, mode);
	} else {
		if (flags & PMEM_FILE_CREATE)
			oflags |= O_CREAT | (flags & PMEM_FILE_EXCL ? O_EXCL : 0);
		/* Did this call create it? Needed to remove it on failure. */
		*created = (flags & PMEM_FILE_EXCL) != 0;
		fd = open(path, oflags, mode);
	}
	if (fd < 0 || !(flags & PMEM_FILE_CREATE))
		return fd;
	if (ftruncate(fd, (off_t)len))
		goto out_err;
	if (!(flags & PMEM_FILE_SPARSE)) {
		int err = posix_fallocate(fd, 0, (off_t)len);

		if (err) {
			errno = err;
			goto out_err;
		}
	}
	return fd;
out_err:
	close(fd);
	return -1;
}

void *pmem_map_file(const char *path, size_t len, int flags, mode_t mode,
		    size_t *mapped_lenp, int *is_pmemp)
{
	struct ntm_ns *ns;
	struct stat st;
	bool created = false, devdax;
	int fd, err, ret;

	if (!path)
		return fail(EINVAL, "path", "(null)");
	if (flags & ~FILE_FLAGS)
		return fail(EINVAL, "invalid flags for", path);
	if ((flags & (PMEM_FILE_EXCL | PMEM_FILE_TMPFILE)) &&
	    !(flags & PMEM_FILE_CREATE))
		return fail(EINVAL, "EXCL and TMPFILE need PMEM_FILE_CREATE:", path);
	devdax = stat(path, &st) == 0 && S_ISCHR(st.st_mode);
	if (devdax) {
		/* A device has a size: CREATE and SPARSE are accepted, unused. */
		if (flags & ~(PMEM_FILE_CREATE | PMEM_FILE_SPARSE))
			return fail(EINVAL, "EXCL and TMPFILE do not apply to "
				    "a device:", path);
		flags = 0;
	} else if ((flags & PMEM_FILE_CREATE) && len == 0) {
		return fail(EINVAL, "PMEM_FILE_CREATE needs a non-zero len for",
			    path);
	} else if (!(flags & PMEM_FILE_CREATE) && len != 0) {
		return fail(EINVAL, "a non-zero len needs PMEM_FILE_CREATE for",
			    path);
	}

	fd = open_file(path, len, flags, mode, &created);
	if (fd < 0)
		return fail(errno, "cannot open", path);
	ret = ntm_ns_open_fd(&ns, fd, path, NTM_NS_ANY_SIZE);
	if (ret) {
		err = -ret;
		pmem_set_error("%s", ntm_errmsg());
		goto out_close;
	}
	if (devdax && len && len != ntm_ns_size(ns)) {
		ntm_ns_close(ns);
		err = EINVAL;
		fail(err, "len must be 0 or the device size for", path);
		goto out_close;
	}
	if (registry_add(ns)) {
		ntm_ns_close(ns);
		err = ENOMEM;
		fail(err, "no memory to map", path);
		goto out_close;
	}
	close(fd);
	if (mapped_lenp)
		*mapped_lenp = ntm_ns_size(ns);
	/* As PMDK: the answer pmem_is_pmem() gives, PMEM_IS_PMEM_FORCE too. */
	if (is_pmemp)
		*is_pmemp = pmem_is_pmem(ntm_ns_base(ns), ntm_ns_size(ns));
	return ntm_ns_base(ns);

out_close:
	close(fd);
	if (created)
		unlink(path);
	errno = err;
	return NULL;
}

int pmem_unmap(void *addr, size_t len)
{
	struct ntm_ns *ns = registry_take(addr);

	if (ns) {
		ntm_ns_close(ns);
		return 0;
	}
	/* Not ours: PMDK unmaps any range it is given. */
	if (munmap(addr, len)) {
		pmem_set_error("munmap %p+%zu: %s", addr, len, strerror(errno));
		return -1;
	}
	return 0;
}

int pmem_is_pmem(const void *addr, size_t len)
{
	uintptr_t a = (uintptr_t)addr;
	int pmem = 0;

	if (len == 0)
		return 0;
	if (pmem_env.is_pmem_force >= 0)
		return pmem_env.is_pmem_force != 0;
	pthread_mutex_lock(&registry_lock);
	for (size_t i = 0; i < nregistry && !pmem; i++) {
		uintptr_t b = (uintptr_t)ntm_ns_base(registry[i]);

		pmem = a >= b && len <= ntm_ns_size(registry[i]) &&
		       a - b <= ntm_ns_size(registry[i]) - len &&
		       ntm_ns_cpu_durable(registry[i]);
	}
	pthread_mutex_unlock(&registry_lock);
	return pmem;
}

int pmem_msync(const void *addr, size_t len)
{
	uintptr_t start = (uintptr_t)addr & ~(uintptr_t)(sysconf(_SC_PAGESIZE) - 1);

	/* msync() wants a page-aligned start: widen the range down to it. */
	if (msync((void *)start, len + ((uintptr_t)addr - start), MS_SYNC)) {
		pmem_set_error("msync %p+%zu: %s", addr, len, strerror(errno));
		return -1;
	}
	return 0;
}
