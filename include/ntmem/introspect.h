/* SPDX-License-Identifier: MIT */
/*
 * ntmem/introspect.h - what ntmem read from the environment, and the nd
 * regions it reads persistence domains from, for tools that show them
 * (`ntmem info`, `ntmem bench copy --calibrate`): the library's own
 * readers, so a tool shows what the library judged, by the library's
 * rules, and never a second copy of them. Applications need none of it:
 * <ntmem.h> is their API. Not included by <ntmem.h>; include it as
 * <ntmem/introspect.h>.
 */
#ifndef NTMEM_INTROSPECT_H
#define NTMEM_INTROSPECT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <ntmem/ns.h>		/* enum ntm_persist_domain */

#ifdef __cplusplus
extern "C" {
#endif

/*
 * The environment as the library read it when it made its choices, once
 * per process (ntm_variant_active() and the like make them too). A later
 * release may add fields at the end: ntm_introspect_env() is told the
 * size the caller was compiled with and fills that much.
 */
struct ntm_env_info {
	/*
	 * NTMEM_NT_THRESHOLD in effect, bytes: below it ntm_memcpy_flush()
	 * into a destination that is not 8-byte aligned stores through the
	 * cache and writes the lines back.
	 */
	size_t nt_threshold;
	/* What it is when NTMEM_NT_THRESHOLD is unset, empty or ignored. */
	size_t nt_threshold_default;
	/*
	 * NTMEM_PERSIST_DOMAIN: NTM_PERSIST_MEMORY_CONTROLLER or
	 * NTM_PERSIST_CPU_CACHE; NTM_PERSIST_NONE when it is unset, empty
	 * or was ignored (ntm_persist_domain_active() is then
	 * memory_controller).
	 */
	enum ntm_persist_domain persist_domain_override;
	/*
	 * The values that were ignored, one line each without a final
	 * newline, "VAR=VALUE ignored (WHY)", as ntmem warns about them on
	 * stderr; "" when none was. Lines past its size are cut.
	 */
	char ignored[512];
	/*
	 * Since 0.5: the copy policy in force and the facts it keys on
	 * (ntm_memcpy_nt(3)); 0 and "" for a caller whose struct ends above.
	 * Below nt_short_unaligned bytes ntm_memcpy_nt() into a destination
	 * that is not 8-byte aligned is an ordinary copy: the active
	 * variant's short size.
	 */
	size_t nt_short_unaligned;
	/*
	 * glibc's REP MOVSB threshold, bytes (from GLIBC_TUNABLES when set
	 * there, else glibc's formula), which caps nt_threshold_default; 0
	 * where there is none (not x86-64 glibc).
	 */
	size_t glibc_rep_movsb_threshold;
	/* The cpuid vendor nt_threshold_default keys on: "intel", "amd", "other". */
	char cpu_vendor[16];
	/*
	 * Since 0.5 too: the cpuid family both sizes above key on with the
	 * vendor (25 for AMD's Zen 3 and Zen 4, 26 for Zen 5, 6 for Intel's
	 * cores); 0 off x86-64, and for a caller whose struct ends above.
	 */
	unsigned cpu_family;
};

/**
 * ntm_introspect_env() - the environment as the library read it
 * @info: filled on success
 * @size: sizeof(struct ntm_env_info), as the caller was compiled with
 *
 * Makes the library's choices when they are not made yet (reading the
 * environment then, and warning about ignored values on stderr, once per
 * process); later changes to the environment are not seen. A @size larger
 * than this release's struct has the bytes past it set to 0.
 *
 * Return: 0; -EINVAL when @info is NULL or @size is smaller than the
 * first release's struct ntm_env_info (@info is then untouched).
 */
int ntm_introspect_env(struct ntm_env_info *info, size_t size);

/*
 * What sysfs says of one nd region. Strings are NUL-terminated (a longer
 * one is cut). A region on an asynchronous bus (the kernel's
 * ND_REGION_ASYNC: virtio-pmem's) is a host file mapped into the guest: a
 * store reaches the host's page cache, and only a flush request, which
 * makes the host fsync that file, makes it durable; no CPU instruction
 * does, whatever its domain says. The library owns the struct: a later
 * release may add fields at the end.
 */
struct ntm_nd_region {
	char name[32];		/* "region1" */
	char bus[32];		/* its nd bus, "ndbus1"; "" when not below one */
	char provider[64];	/* the bus's provider: "ACPI.NFIT", "virtio-pmem" */
	int domain;		/* an enum ntm_persist_domain, or -errno unread */
	bool async;		/* only a flush request to the host persists */
	bool deep_flush;	/* it has a deep_flush attribute */
	/*
	 * A region of a CXL bus (provider "CXL"): the CXL region it is
	 * (/sys/bus/cxl/devices/regionN, the one at the same physical
	 * address), "" when there is none to be found; how it interleaves
	 * (ways 0: not known) and the memory devices behind it, in target
	 * order ("mem0 mem1", space-separated).
	 */
	char cxl_region[32];
	unsigned cxl_ways;
	unsigned cxl_granularity;	/* bytes on one device before the next */
	char cxl_memdevs[128];
};

/**
 * ntm_introspect_regions() - each nd region under a sysfs tree
 * @sysfs_root: where sysfs is: "/sys", or a copy of its nd part
 * @fn:         called with @arg and each region, in name order (region2
 *              before region10); the region is valid during the call only.
 *              It returns 0 to go on, anything else to stop the walk.
 * @arg:        passed to @fn
 *
 * Reads @sysfs_root/bus/nd/devices/regionN: persistence_domain
 * ("cpu_cache", "memory_controller"; NTM_PERSIST_NONE when missing, empty
 * or a word ntmem does not know), deep_flush, and the provider of the
 * region's parent nd bus; for a CXL bus's region, the CXL region of
 * @sysfs_root/bus/cxl/devices at its address, its interleave_ways,
 * interleave_granularity and targets (each an endpoint decoder, whose
 * port's uport is the memory device). Reads only under @sysfs_root, on
 * each call: the library keeps nothing of it.
 *
 * Return: the number of regions @fn was called for (0 without an nd bus);
 * -EINVAL when @sysfs_root or @fn is NULL; the negative errno of listing
 * @sysfs_root/bus/nd/devices when it exists and cannot be listed (@fn is
 * not called).
 */
int ntm_introspect_regions(const char *sysfs_root,
			   int (*fn)(void *arg, const struct ntm_nd_region *region),
			   void *arg);

struct ntm_ns;

/**
 * ntm_ns_region() - the nd region under a namespace, as sysfs described
 * it when the namespace was opened (ntm_introspect_regions()'s fields,
 * the CXL region behind a CXL bus's region included)
 * @ns:  an open namespace
 * @out: filled with the region; zeroed when there is none
 *
 * Return: 1 for a devdax or fsdax namespace whose nd region sysfs names;
 * 0 for one it does not and for every other kind (a file, an emulated
 * namespace, anonymous memory); -EINVAL when @ns or @out is NULL (@out
 * is then untouched).
 */
int ntm_ns_region(const struct ntm_ns *ns, struct ntm_nd_region *out);

/**
 * ntm_introspect_badblocks() - the media errors under a devdax device or
 * a file on an fsdax file system, as ntm_blk_open() loads them
 * @sysfs_root: where sysfs is: "/sys", or a copy of its nd part
 * @fd:         a devdax character device, or a regular file
 * @fn:         called with @arg and each bad range, in bytes from the
 *              start of the device or file, sorted and disjoint; it
 *              returns 0 to go on, anything else to stop
 * @arg:        passed to @fn
 *
 * A devdax device's ranges are its nd region's badblocks clipped to the
 * device's window; a file's are its block device's badblocks mapped
 * through its FIEMAP extents (a range the file has no block in is not
 * the file's). A character device sysfs does not know, and a file on a
 * device without a badblocks list (not pmem), have none. Reads sysfs and
 * the file's extents on each call: the library keeps nothing of it.
 *
 * Return: the number of ranges @fn was called for (0: none); -EINVAL
 * when @sysfs_root or @fn is NULL or @fd is neither a regular file nor a
 * character device; the negative errno of fstat(), of reading the
 * device's size or its region's list, or of FIEMAP (@fn is then not
 * called).
 */
int ntm_introspect_badblocks(const char *sysfs_root, int fd,
			     int (*fn)(void *arg, uint64_t offset,
				       uint64_t length),
			     void *arg);

#ifdef __cplusplus
}
#endif

#endif /* NTMEM_INTROSPECT_H */
