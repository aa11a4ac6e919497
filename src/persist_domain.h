/* SPDX-License-Identifier: MIT */
/*
 * persist_domain.h - persistence domains of nd regions, read from sysfs
 * (src/persist_domain.c). Never installed.
 */
#ifndef NTMEM_PERSIST_DOMAIN_H
#define NTMEM_PERSIST_DOMAIN_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "ntmem/introspect.h"	/* struct ntm_nd_region */

/*
 * Where sysfs is mounted: "/sys". A test points it at a fake tree before
 * the first namespace opens (not thread-safe, not exported).
 */
extern const char *ntm_sysfs_root;

/*
 * The domain of the nd region holding device @dev under @root: a character
 * device (@chr: devdax) or a block device (a file's st_dev: fsdax).
 * NTM_PERSIST_NONE when no nd region holds it, its attribute is missing or
 * empty; a negative errno when the attribute cannot be read.
 */
int ntm_persist_domain_of_dev(const char *root, dev_t dev, bool chr);

/*
 * The number a sysfs attribute starts with (decimal, or hex with 0x as
 * resource attributes print it) into *@out: 0, or -errno (-EINVAL when
 * the file holds no number; *@out is then untouched or meaningless).
 */
int ntm_sysfs_read_u64(const char *path, uint64_t *out);
/* The first line of @path into @buf, without its newline ("" when it
 * cannot be read). */
void ntm_sysfs_read_line(const char *path, char *buf, size_t len);

/* Region @name under @root into @out; its bus's files may be missing. */
void ntm_nd_region_read(const char *root, const char *name,
			struct ntm_nd_region *out);
/*
 * @out's cxl_* fields, for the region @out->name of a CXL bus: the CXL
 * region at its address under @root/bus/cxl/devices (cxl_region.c); left
 * as they are when there is none.
 */
void ntm_cxl_region_read(const char *root, struct ntm_nd_region *out);

/*
 * The nd region holding device @dev (as ntm_persist_domain_of_dev()):
 * 1 and @out filled, 0 when no nd region holds it, or a negative errno
 * when the nd bus cannot be listed.
 */
int ntm_nd_region_of_dev(const char *root, dev_t dev, bool chr,
			 struct ntm_nd_region *out);
/*
 * Ask the platform to flush region @name: "1" written to its deep_flush
 * attribute, which makes the kernel call nvdimm_flush() (on virtio-pmem
 * a flush request the host answers once it has fsync()ed its file; but
 * 6.1 shows the attribute only for regions with DIMMs, which virtio-pmem's
 * have not). 0, or
 * -EOPNOTSUPP without the attribute, or the -errno of opening or writing
 * it (-EACCES for a user who may not write sysfs).
 */
int ntm_nd_region_deep_flush(const char *root, const char *name);
/*
 * @fn(@arg, name, domain) for each nd region under @root, in name order
 * (region2 before region10): domain is an enum ntm_persist_domain, or a
 * negative errno when the region's attribute cannot be read. A non-zero
 * return of @fn stops the walk and is returned. Return: the number of
 * regions (0 without an nd bus), or a negative errno.
 */
int ntm_persist_domain_regions(const char *root,
			       int (*fn)(void *arg, const char *region, int domain),
			       void *arg);
/*
 * The weakest domain of the nd regions under @root (ntm_persist_domain_system()
 * without the variable): NTM_PERSIST_NONE without any region; a negative
 * errno when one cannot be read and every one read is cpu_cache (one
 * weaker settles whether lines must be written back, read or not).
 */
int ntm_persist_domain_weakest(const char *root);
/*
 * pmem_has_auto_flush()'s answer under @root: 1 when there are nd regions
 * and every one is cpu_cache; 0 when one is not, or there are none; -1
 * when one cannot be read and none is known not to be cpu_cache.
 */
int ntm_persist_domain_all_cpu_cache(const char *root);

#endif /* NTMEM_PERSIST_DOMAIN_H */
