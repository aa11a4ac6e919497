/* SPDX-License-Identifier: MIT */
/*
 * ntmem/ns.h - namespaces: one mapped device region.
 *
 * A namespace is what the kernel's pmem and dax drivers hand out, seen
 * from user space: a devdax character device (/dev/daxX.Y), a file on a
 * DAX filesystem (mapped with MAP_SYNC), a plain file, or anonymous memory.
 * Each knows its size and alignment, and how data in it becomes durable:
 *
 *   devdax, fsdax   CPU cache write-back + SFENCE (ntm_persist()): the
 *                   mapping is the media, nothing else is needed
 *   file            msync(): the page cache stands between CPU and media
 *   emulated        a file standing in for pmem (NTM_NS_EMULATE). On tmpfs
 *                   or hugetlbfs the page cache is the medium: persisted as
 *                   devdax is, with write-back + SFENCE. On any other file
 *                   system (ext4, xfs, ...) write-back + SFENCE and then
 *                   msync(MS_SYNC) of the pages: slower, but a FUA write or
 *                   a flush is on the disk when it returns
 *   anon            nothing is durable; persist only orders the stores
 *
 * An emulated namespace is a sparse file (e.g. in /dev/shm): only the pages
 * that are touched cost memory, so a 100 GiB namespace fits a small machine
 * as long as only its memmap is written.
 *
 * Every mapping of 2 MiB or more starts on a 2 MiB boundary (the namespace
 * alignment, ntm_ns_align(), is unchanged), so DAX files and devices can be
 * mapped with huge pages; anonymous and tmpfs namespaces ask for
 * transparent huge pages (MADV_HUGEPAGE), which the kernel grants where
 * its settings or the tmpfs mount allow. A writable file or emulated
 * namespace keeps one file descriptor open until ntm_ns_close(), so the
 * blocks a memmap with map=dev writes to can be reserved up front.
 */
#ifndef NTMEM_NS_H
#define NTMEM_NS_H

#include <stdbool.h>
#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

struct ntm_ns;

enum ntm_ns_kind {
	NTM_NS_DEVDAX = 1,	/* character device of the dax subsystem */
	NTM_NS_FSDAX = 2,	/* file on a DAX filesystem, MAP_SYNC mapping */
	NTM_NS_FILE = 3,	/* ordinary file: durable through msync() */
	NTM_NS_ANON = 4,	/* anonymous memory: never durable */
	NTM_NS_EMULATED = 5,	/* a file standing in for pmem (NTM_NS_EMULATE) */
};

/*
 * Where a store becomes durable: the persistence domain of the platform
 * under a namespace, as the kernel's nd region reports it in sysfs
 * (/sys/bus/nd/devices/regionN/persistence_domain; CXL persistent memory
 * regions are nd regions too).
 */
enum ntm_persist_domain {
	/*
	 * Nothing is known: sysfs names no domain for the region (or there
	 * is no nd region), or the namespace has no CPU-cache durability at
	 * all (a plain file: msync; anonymous memory: never). Where persisting
	 * writes back, it writes back, as for memory_controller.
	 */
	NTM_PERSIST_NONE = 0,
	/* ADR: the memory controller's queues are flushed on power loss;
	 * a line must be written back from the CPU cache, then fenced. */
	NTM_PERSIST_MEMORY_CONTROLLER = 1,
	/* eADR, CXL Global Persistent Flush: the CPU caches are flushed too;
	 * a store is durable once a fence orders it, no write-back needed. */
	NTM_PERSIST_CPU_CACHE = 2,
};

/* ntm_ns_open() / ntm_ns_create() flags */
#define NTM_NS_READONLY (1u << 0)	/* map read-only; persist is a no-op */
#define NTM_NS_TEMPORARY (1u << 1)	/* create: unlink the file once mapped */
#define NTM_NS_EMULATE (1u << 2)	/* a non-DAX file emulates pmem */
/*
 * open: a regular file of any non-zero length maps, not only a multiple of
 * the page size; ntm_ns_size() is the file's length. For PMDK's pool
 * files, which need not be whole pages: the libpmem and libpmemblk
 * drop-ins open theirs with it (ntm_ns_open_fd(), ntmem/embed.h).
 */
#define NTM_NS_ANY_SIZE (1u << 3)

/**
 * ntm_ns_open() - map an existing device or file as a namespace
 * @ns:    set to the new namespace on success
 * @path:  /dev/daxX.Y, or a regular file (on a DAX filesystem or not)
 * @flags: NTM_NS_READONLY, NTM_NS_EMULATE, NTM_NS_ANY_SIZE
 *
 * A devdax device's size and alignment come from sysfs; a file's size is
 * its length and its alignment the page size, or 2 MiB for a DAX file
 * whose length is a multiple of it.
 *
 * The kind of file is looked at before it is opened (O_PATH), so no flag
 * combination blocks: a FIFO is refused, not opened and waited on.
 *
 * Return: 0, or -ENOENT (no such path), -EISDIR (a directory, with any
 * flags), -ENODEV (a FIFO, a socket, a block device, a character device
 * that is not a dax device: nothing a namespace can be), -EINVAL (an empty
 * file, a size that is not a multiple of the alignment, unknown flags),
 * -EACCES (no write permission without NTM_NS_READONLY), -EMFILE, -ENOMEM;
 * ntm_errmsg() names the path and says what it is or why.
 */
int ntm_ns_open(struct ntm_ns **ns, const char *path, unsigned flags);

/**
 * ntm_ns_create() - create a sparse file of @size bytes and map it
 * @ns:    set to the new namespace on success
 * @path:  file to create; must not exist
 * @size:  bytes; a non-zero multiple of @align
 * @align: the namespace alignment (4096, 2 MiB or 1 GiB; a power of two
 *         and a multiple of the page size); the mapping is aligned to it
 * @flags: NTM_NS_TEMPORARY to unlink the file as soon as it is mapped;
 *         NTM_NS_EMULATE to treat a non-DAX file as emulated pmem
 *
 * Return: 0, -EEXIST, -EINVAL (size or alignment), or the error of the
 * file system (-ENOSPC, -EACCES, ...).
 */
int ntm_ns_create(struct ntm_ns **ns, const char *path, size_t size,
		  size_t align, unsigned flags);

/** ntm_ns_anon() - anonymous memory as a namespace (for tests) */
int ntm_ns_anon(struct ntm_ns **ns, size_t size, size_t align);

/** ntm_ns_close() - unmap and free; NULL is ignored */
void ntm_ns_close(struct ntm_ns *ns);

void *ntm_ns_base(const struct ntm_ns *ns);
size_t ntm_ns_size(const struct ntm_ns *ns);
size_t ntm_ns_align(const struct ntm_ns *ns);
enum ntm_ns_kind ntm_ns_kind(const struct ntm_ns *ns);
/** ntm_ns_kind_name() - "devdax", "fsdax", "file", "anon" or "emulated" */
const char *ntm_ns_kind_name(enum ntm_ns_kind kind);
/** ntm_ns_path() - the path it was opened or created at ("" for anon) */
const char *ntm_ns_path(const struct ntm_ns *ns);

/**
 * ntm_ns_cpu_durable() - true when CPU cache write-back + drain makes data
 * durable, a cache line, not a page, at a time: devdax, fsdax, and an
 * emulated namespace on tmpfs or hugetlbfs. False for anything else,
 * including an emulated namespace on a disk file system, which needs
 * ntm_ns_persist() (it msync()s), and any namespace on an asynchronous
 * nd region (virtio-pmem), which only a flush request to the host makes
 * durable: ntm_ns_persist() sends it (msync() for a file; for devdax the
 * region's deep_flush attribute, which Linux 6.1 does not show there:
 * then it fails -EOPNOTSUPP, no durable path exists).
 */
bool ntm_ns_cpu_durable(const struct ntm_ns *ns);

/**
 * ntm_ns_persist_domain() - the persistence domain of @ns
 *
 * NTMEM_PERSIST_DOMAIN=cpu_cache|memory_controller, when set, is the
 * domain of every namespace. Otherwise: a devdax device's, and an fsdax
 * file's (the pmem block device under its file system), is what its nd
 * region reports in sysfs when the namespace is opened; an emulated
 * namespace's is memory_controller (it stands in for ADR pmem); a plain
 * file's and anonymous memory's is none. ntm_ns_set_persist_domain()
 * overrides all of these for one namespace.
 *
 * In a cpu_cache domain ntm_ns_persist() and FUA writes of a block device
 * on the namespace (ntmem/blk.h) only fence: no line is written back.
 */
enum ntm_persist_domain ntm_ns_persist_domain(const struct ntm_ns *ns);

/**
 * ntm_ns_set_persist_domain() - declare the persistence domain of @ns, for
 * a platform sysfs does not describe (a container without /sys, an
 * emulated namespace standing in for eADR pmem). Call it before the
 * namespace is used from other threads: persisting reads it on each call.
 *
 * Return: 0, or -EINVAL for a value that is not an enum ntm_persist_domain,
 * or for any domain but cpu_cache under NTMEM_PERSIST_DOMAIN=cpu_cache,
 * where nothing in the process writes back (ntm_flush_active() is none).
 */
int ntm_ns_set_persist_domain(struct ntm_ns *ns, enum ntm_persist_domain domain);

/**
 * ntm_persist_domain_name() - "none", "memory_controller" or "cpu_cache"
 * (the kernel's words), or "unknown" for any other value
 */
const char *ntm_persist_domain_name(enum ntm_persist_domain domain);

/**
 * ntm_persist_domain_active() - the domain ntm_persist(), ntm_flush() and
 * ntm_memcpy_flush() assume for memory outside any namespace:
 * NTMEM_PERSIST_DOMAIN when set, else memory_controller. It is never read
 * from sysfs: those functions do not know which memory they are given.
 * With cpu_cache, ntm_flush() writes nothing back, ntm_persist() only
 * fences and ntm_memcpy_flush() is the fastest copy whose stores a fence
 * makes durable (ntm_memcpy_nt(3)).
 */
enum ntm_persist_domain ntm_persist_domain_active(void);

/**
 * ntm_ns_persist() - make [@p, @p + @n) of @ns durable the way its kind
 * needs: ntm_persist() for devdax, fsdax and emulated on tmpfs/hugetlbfs
 * (devdax on virtio-pmem: then a flush request to the host through the
 * region's deep_flush, -EOPNOTSUPP without one as on Linux 6.1, its
 * -errno if it fails);
 * ntm_persist() then msync(MS_SYNC) of the pages for emulated on any other
 * file system; msync() for a file; ntm_persist() (ordering only) for anon.
 * In a cpu_cache domain (ntm_ns_persist_domain()) the write-back part of
 * ntm_persist() is skipped: the fence alone, and msync() where needed.
 *
 * Return: 0, -EINVAL when the range is not inside the namespace, or the
 * error of msync().
 */
int ntm_ns_persist(const struct ntm_ns *ns, const void *p, size_t n);

#ifdef __cplusplus
}
#endif

#endif /* NTMEM_NS_H */
