// SPDX-License-Identifier: MIT
/*
 * ns.c - namespaces: map a devdax device, a (DAX) file or anonymous memory
 * and remember how its data becomes durable. See ntmem/ns.h.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <linux/magic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include "dispatch.h"
#include "error.h"
#include "ns_internal.h"
#include "ntmem/embed.h"
#include "persist_domain.h"
#include "ntmem/hook.h"	/* NTM_REC_MAPPING(): the checker of ntmem check */

#ifndef MAP_SHARED_VALIDATE
#define MAP_SHARED_VALIDATE 0x03
#endif
#ifndef MAP_SYNC
#define MAP_SYNC 0x80000
#endif

#define PAGE 4096u
#define HUGE_2M (2u << 20)
#define HUGE_1G ((size_t)1 << 30)

struct ntm_ns {
	void *base;		/* aligned start of the namespace */
	void *map;		/* what mmap() returned (base may be inside) */
	size_t map_len;
	size_t size;
	size_t align;
	enum ntm_ns_kind kind;
	bool readonly;
	bool temporary;		/* created with NTM_NS_TEMPORARY: unlinked */
	bool cache_is_media;	/* a tmpfs/hugetlbfs file: no disk behind it */
	/* cpu_cache: persisting only fences; read on each call (settable) */
	enum ntm_persist_domain domain;
	/*
	 * The nd region under a devdax or fsdax namespace, as sysfs said at
	 * open (ntm_ns_region()); all zero when there is none. On an
	 * asynchronous one (virtio-pmem: nd_region.async) no write-back makes
	 * a store durable, only a flush request to the host, sent through the
	 * region's deep_flush attribute.
	 */
	struct ntm_nd_region nd_region;
	/*
	 * A temporary namespace's file, which has no name left to open it
	 * by; -1 for every other namespace, which keeps no descriptor (a
	 * program may hold more mappings than it may open files).
	 */
	int fd;
	dev_t dev;		/* the mapped file, to know it again by path */
	ino_t ino;
	char *path;		/* "" for anonymous memory */
};

static bool is_pow2(size_t x)
{
	return x && !(x & (x - 1));
}

/*
 * Map @len bytes of @fd (or anonymous memory when @fd < 0) where PMDK
 * places a pool or a pmem_map_file() mapping: len + A bytes of address
 * space are reserved wherever the kernel likes, the mapping goes at the
 * first address in them aligned to A, and the rest is given back. A is 2
 * MiB, 1 GiB from 2 GiB on (PMDK's util_map_hint()), or @align when that
 * is larger (a devdax device's). So every mapping can use huge pages
 * (the kernel maps a DAX file or a transparent huge page with one PMD
 * only where the virtual address is as aligned as the page, and a random
 * access over many 4 KiB TLB entries costs a page walk each), and a
 * program written against PMDK finds the same free room around it: up to
 * A bytes above it, which PMDK's own tests map into (a mapping that ended
 * where the next began made them fail "cannot map files in memory
 * order").
 *
 * Never at an address that another thread may hold: the file is mapped
 * with MAP_FIXED over the call's own reservation, and MAP_FIXED replaces
 * only that. A file that cannot be mapped (MAP_SYNC off DAX, a device
 * without mmap) is refused before the kernel touches the reservation.
 * Should the mapping still fail (no memory), the kernel may have freed
 * the middle of the reservation already and another thread may have
 * mapped there since, so only the slack on both sides, which is ours
 * whatever happened, is unmapped.
 */
static int map_aligned(struct ntm_ns *ns, int fd, size_t len, size_t align,
		       int prot, int flags)
{
	size_t addr_align = len >= 2 * HUGE_1G ? HUGE_1G : HUGE_2M;
	uint8_t *res, *want, *got;
	size_t res_len;
	int err = 0;

	if (align > addr_align)
		addr_align = align;
	if (__builtin_add_overflow(len, addr_align, &res_len))
		return -ENOMEM;
	res = mmap(NULL, res_len, PROT_NONE,
		   MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	if (res == MAP_FAILED)
		return -errno;
	want = (uint8_t *)(((uintptr_t)res + addr_align - 1) &
			   ~(uintptr_t)(addr_align - 1));
	got = mmap(want, len, prot, flags | MAP_FIXED, fd, 0);
	if (got == MAP_FAILED)
		err = -errno;
	if (want > res)
		munmap(res, (size_t)(want - res));
	if (res + res_len > want + len)
		munmap(want + len, (size_t)(res + res_len - (want + len)));
	if (err)
		return err;
	ns->map = ns->base = got;
	ns->map_len = len;
	return 0;
}

static struct ntm_ns *ns_alloc(const char *path)
{
	struct ntm_ns *ns = calloc(1, sizeof(*ns));

	if (ns) {
		ns->fd = -1;
		ns->path = strdup(path ? path : "");
		if (!ns->path) {
			free(ns);
			ns = NULL;
		}
	}
	return ns;
}

static void ns_free(struct ntm_ns *ns)
{
	free(ns->path);
	free(ns);
}

/* [@a, @a + @n) lies inside the namespace (written so that it cannot wrap). */
static bool ns_holds(const struct ntm_ns *ns, uintptr_t a, size_t n)
{
	uintptr_t base = (uintptr_t)ns->base;

	return a >= base && n <= ns->size && a - base <= ns->size - n;
}

/*
 * Ask for transparent huge pages. Only a hint: where the kernel or the
 * tmpfs mount says never, nothing changes; anonymous and tmpfs memory is
 * RAM either way, so it costs no disk space, and a tmpfs mount that is
 * full falls back to 4 KiB pages.
 */
static void hint_huge(const struct ntm_ns *ns)
{
	if (ns->map_len >= HUGE_2M)
		madvise(ns->map, ns->map_len, MADV_HUGEPAGE);
}

/*
 * Only a regular file (DAX or not) or a character device (devdax) can be
 * a namespace. Anything else is named in the message: a directory is
 * -EISDIR, every other kind -ENODEV, as mmap() says of a file it cannot map.
 */
static int check_file_type(const struct stat *st, const char *path)
{
	const char *what;

	if (S_ISREG(st->st_mode) || S_ISCHR(st->st_mode))
		return 0;
	if (S_ISDIR(st->st_mode))
		return ntm_error(-EISDIR, "path '%s': a directory", path);
	if (S_ISFIFO(st->st_mode))
		what = "a FIFO";
	else if (S_ISSOCK(st->st_mode))
		what = "a socket";
	else if (S_ISBLK(st->st_mode))
		what = "a block device (map a file on its DAX file system, or "
		       "its devdax device)";
	else
		what = "not a file or a device";
	return ntm_error(-ENODEV, "path '%s': %s; only a regular file or a dax "
			 "device is a namespace", path, what);
}

/*
 * A read-only mapping cannot ask for MAP_SYNC, so a file opened read-only
 * is recognised as DAX from its statx() attribute (Linux 5.8 and later).
 */
static bool file_is_dax(int fd)
{
#if defined(STATX_ATTR_DAX)
	struct statx stx;

	if (statx(fd, "", AT_EMPTY_PATH, 0, &stx) == 0)
		return stx.stx_attributes_mask & stx.stx_attributes & STATX_ATTR_DAX;
#else
	(void)fd;
#endif
	return false;
}

/* Size and alignment of a devdax device from /sys/dev/char/MAJ:MIN/. */
static int devdax_geometry(const char *path, dev_t rdev, size_t *size,
			   size_t *align)
{
	char sys[128], link[256];
	uint64_t v;
	ssize_t n;
	int ret;

	snprintf(sys, sizeof(sys), "/sys/dev/char/%u:%u/subsystem",
		 major(rdev), minor(rdev));
	n = readlink(sys, link, sizeof(link) - 1);
	if (n < 0 || (link[n] = '\0', !strstr(link, "dax")))
		return ntm_error(-ENODEV, "path '%s': a character device, but "
				 "not a dax device", path);
	snprintf(sys, sizeof(sys), "/sys/dev/char/%u:%u/size", major(rdev),
		 minor(rdev));
	ret = ntm_sysfs_read_u64(sys, &v);
	if (ret)
		return ntm_error(ret, "path '%s': cannot read %s", path, sys);
	*size = v;
	snprintf(sys, sizeof(sys), "/sys/dev/char/%u:%u/align", major(rdev),
		 minor(rdev));
	*align = ntm_sysfs_read_u64(sys, &v) == 0 && is_pow2(v) ? v : HUGE_2M;
	return 0;
}

/*
 * Map a regular file. MAP_SYNC succeeds only on a DAX file system: then the
 * mapping is the media and CPU write-back makes data durable (fsdax, with
 * @dax_align). Anywhere else the kernel refuses it, and an ordinary shared
 * mapping needs msync() (file, with @align).
 */
static int map_file(struct ntm_ns *ns, int fd, size_t size, size_t align,
		    size_t dax_align, int prot, bool ro)
{
	int ret;

	if (ro)
		ret = file_is_dax(fd) ? map_aligned(ns, fd, size, dax_align,
						    prot, MAP_SHARED)
				      : -EOPNOTSUPP;
	else
		ret = map_aligned(ns, fd, size, dax_align, prot,
				  MAP_SHARED_VALIDATE | MAP_SYNC);
	if (ret == 0) {
		ns->kind = NTM_NS_FSDAX;
		ns->align = dax_align;
		return 0;
	}
	ns->kind = NTM_NS_FILE;
	ns->align = align;
	return map_aligned(ns, fd, size, align, prot, MAP_SHARED);
}

/*
 * The persistence domain a namespace of @ns->kind starts with (see
 * ntm_ns_persist_domain() in ntmem/ns.h); @st is what fstat() said of the
 * device or file. The override wins, so a platform sysfs misreports can be
 * corrected, or an emulated namespace made to stand in for eADR pmem.
 * Whatever the override says, a devdax or fsdax namespace on an
 * asynchronous region is marked so (@ns->nd_region): no domain makes a store
 * there durable without the host.
 */
static enum ntm_persist_domain initial_domain(struct ntm_ns *ns,
					      const struct stat *st)
{
	enum ntm_persist_domain over = ntm_dispatch()->domain_override;
	struct ntm_nd_region r;
	int found;

	switch (ns->kind) {
	case NTM_NS_DEVDAX:
	case NTM_NS_FSDAX:
		found = ntm_nd_region_of_dev(ntm_sysfs_root,
					     ns->kind == NTM_NS_DEVDAX ?
						st->st_rdev : st->st_dev,
					     ns->kind == NTM_NS_DEVDAX, &r);
		if (found > 0)
			ns->nd_region = r;
		if (over != NTM_PERSIST_NONE)
			return over;
		/* Unreadable: write back, which is never wrong. */
		return found <= 0 || r.domain < 0 ? NTM_PERSIST_NONE :
						   (enum ntm_persist_domain)r.domain;
	case NTM_NS_EMULATED:
		return over != NTM_PERSIST_NONE ? over :
						  NTM_PERSIST_MEMORY_CONTROLLER;
	default:
		return over;
	}
}

/*
 * What a mapped regular file still needs: whether its page cache is its
 * medium, its kind under NTM_NS_EMULATE, and (file or emulated, writable)
 * what ntm_ns_reserve() needs to open the file again (a temporary one's
 * descriptor).
 * 0 or -errno; on failure the caller closes the namespace.
 */
static int finish_file(struct ntm_ns *ns, int fd, unsigned flags)
{
	struct statfs sfs;
	struct stat st;

	if (fstatfs(fd, &sfs) || fstat(fd, &st))
		return ntm_error(-errno, "path '%s': cannot stat its file system",
				 ns->path);
	/*
	 * tmpfs and hugetlbfs have no disk behind the page cache: a store
	 * there is as durable as it will ever be once it leaves the CPU
	 * cache. Any other file system writes the page cache back later.
	 */
	ns->cache_is_media = sfs.f_type == TMPFS_MAGIC ||
			     sfs.f_type == HUGETLBFS_MAGIC;
	if (ns->kind != NTM_NS_FILE)
		return 0;
	if (flags & NTM_NS_EMULATE)
		ns->kind = NTM_NS_EMULATED;
	if (sfs.f_type == TMPFS_MAGIC)
		hint_huge(ns);
	if (ns->readonly)
		return 0;
	ns->dev = st.st_dev;
	ns->ino = st.st_ino;
	if (flags & NTM_NS_TEMPORARY) {
		ns->fd = fcntl(fd, F_DUPFD_CLOEXEC, 0);
		if (ns->fd < 0)
			return ntm_error(-errno, "path '%s': cannot keep the "
					 "unlinked file open", ns->path);
	}
	return 0;
}

/* What ntm_ns_open() and ntm_ns_open_fd() take. */
#define OPEN_FLAGS (NTM_NS_READONLY | NTM_NS_EMULATE | NTM_NS_ANY_SIZE)

static void watch_map(const struct ntm_ns *ns);

int ntm_ns_open(struct ntm_ns **out, const char *path, unsigned flags)
{
	bool ro = flags & NTM_NS_READONLY;
	struct stat st;
	int fd, ret;

	if (!out || !path || !*path)
		return ntm_error(-EINVAL, "path: none given");
	if (flags & ~OPEN_FLAGS)
		return ntm_error(-EINVAL, "flags: unknown bits 0x%x",
				 flags & ~OPEN_FLAGS);
	/*
	 * Look before opening: an O_PATH descriptor opens nothing, so a FIFO
	 * does not wait for a writer, a socket does not fail with ENXIO and a
	 * device node sees no open(), whatever the flags.
	 */
	fd = open(path, O_PATH | O_CLOEXEC);
	if (fd < 0)
		return ntm_error(-errno, "path '%s': cannot open", path);
	ret = fstat(fd, &st) ? ntm_error(-errno, "path '%s': cannot stat", path)
			     : check_file_type(&st, path);
	close(fd);
	if (ret)
		return ret;
	/* O_NONBLOCK: should the path turn into a FIFO meanwhile, no wait. */
	fd = open(path, (ro ? O_RDONLY : O_RDWR) | O_CLOEXEC | O_NOCTTY |
			O_NONBLOCK);
	if (fd < 0)
		return ntm_error(-errno, "path '%s': cannot open%s", path,
				 ro ? "" : " for writing");
	ret = ntm_ns_open_fd(out, fd, path, flags);
	close(fd);
	return ret;
}

int ntm_ns_open_fd(struct ntm_ns **out, int fd, const char *path, unsigned flags)
{
	bool ro = flags & NTM_NS_READONLY;
	int prot = PROT_READ | (ro ? 0 : PROT_WRITE);
	struct ntm_ns *ns;
	struct stat st;
	size_t size = 0, align = PAGE;
	int ret;

	if (!out || !path)
		return ntm_error(-EINVAL, "%s: NULL", out ? "path" : "ns");
	if (flags & ~OPEN_FLAGS)
		return ntm_error(-EINVAL, "flags: unknown bits 0x%x",
				 flags & ~OPEN_FLAGS);
	if (fstat(fd, &st))
		return ntm_error(-errno, "path '%s': cannot stat", path);
	ret = check_file_type(&st, path);
	if (ret)
		return ret;
	if (S_ISCHR(st.st_mode)) {
		ret = devdax_geometry(path, st.st_rdev, &size, &align);
		if (ret)
			return ret;
	} else {
		size = (size_t)st.st_size;
	}
	if (size == 0 || (size % PAGE && !(flags & NTM_NS_ANY_SIZE)))
		return ntm_error(-EINVAL, "path '%s': size %zu is not a non-zero "
				 "multiple of %u", path, size, PAGE);
	if (size % align && !(S_ISREG(st.st_mode) && (flags & NTM_NS_ANY_SIZE)))
		return ntm_error(-EINVAL, "path '%s': size %zu is not a multiple "
				 "of its alignment %zu", path, size, align);

	ns = ns_alloc(path);
	if (!ns)
		return ntm_error(-ENOMEM, "path '%s': no memory", path);
	ns->size = size;
	ns->readonly = ro;
	if (S_ISCHR(st.st_mode)) {
		ns->kind = NTM_NS_DEVDAX;
		ns->align = align;
		ret = map_aligned(ns, fd, size, align, prot, MAP_SHARED);
	} else {
		/* A DAX file of whole 2 MiB pages can use huge mappings. */
		ret = map_file(ns, fd, size, PAGE, size % HUGE_2M ? PAGE : HUGE_2M,
			       prot, ro);
	}
	if (ret) {
		ret = ntm_error(ret, "path '%s': cannot map %zu bytes", path, size);
		ns_free(ns);
		return ret;
	}
	if (S_ISREG(st.st_mode)) {
		ret = finish_file(ns, fd, flags);
		if (ret) {
			ntm_ns_close(ns);
			return ret;
		}
	}
	ns->domain = initial_domain(ns, &st);
	if (!ro)
		watch_map(ns);
	*out = ns;
	return 0;
}

/* A created or anonymous namespace's size and alignment; 0 or -EINVAL. */
static int check_geometry(size_t size, size_t align)
{
	if (!is_pow2(align) || align < PAGE)
		return ntm_error(-EINVAL, "align %zu: not a power of two of at "
				 "least %u", align, PAGE);
	if (size == 0 || size % align)
		return ntm_error(-EINVAL, "size %zu: not a non-zero multiple of "
				 "the alignment %zu", size, align);
	return 0;
}

int ntm_ns_create(struct ntm_ns **out, const char *path, size_t size,
		  size_t align, unsigned flags)
{
	struct ntm_ns *ns;
	struct stat st;
	int fd, ret;

	if (!out || !path || !*path)
		return ntm_error(-EINVAL, "path: none given");
	if (flags & ~(NTM_NS_TEMPORARY | NTM_NS_EMULATE))
		return ntm_error(-EINVAL, "flags: unknown bits 0x%x", flags);
	ret = check_geometry(size, align);
	if (ret)
		return ret;
	fd = open(path, O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
	if (fd < 0)
		return ntm_error(-errno, "path '%s': cannot create", path);
	/* Sparse: no block is allocated until it is written. */
	if (ftruncate(fd, (off_t)size)) {
		ret = ntm_error(-errno, "path '%s': cannot grow to %zu bytes",
				path, size);
		goto out_unlink;
	}
	ns = ns_alloc(path);
	if (!ns) {
		ret = ntm_error(-ENOMEM, "path '%s': no memory", path);
		goto out_unlink;
	}
	ns->size = size;
	ret = map_file(ns, fd, size, align, align, PROT_READ | PROT_WRITE, false);
	if (ret) {
		ret = ntm_error(ret, "path '%s': cannot map %zu bytes", path, size);
		ns_free(ns);
		goto out_unlink;
	}
	ret = finish_file(ns, fd, flags);
	if (ret) {
		ntm_ns_close(ns);
		goto out_unlink;
	}
	if (fstat(fd, &st) == 0)
		ns->domain = initial_domain(ns, &st);
	close(fd);
	if (flags & NTM_NS_TEMPORARY)
		unlink(path);
	ns->temporary = flags & NTM_NS_TEMPORARY;
	watch_map(ns);
	*out = ns;
	return 0;

out_unlink:
	close(fd);
	unlink(path);
	return ret;
}

int ntm_ns_anon(struct ntm_ns **out, size_t size, size_t align)
{
	struct ntm_ns *ns;
	int ret;

	if (!out)
		return ntm_error(-EINVAL, "ns: NULL");
	ret = check_geometry(size, align);
	if (ret)
		return ret;
	ns = ns_alloc(NULL);
	if (!ns)
		return ntm_error(-ENOMEM, "anonymous namespace: no memory");
	ns->size = size;
	ns->align = align;
	ns->kind = NTM_NS_ANON;
	ret = map_aligned(ns, -1, size, align, PROT_READ | PROT_WRITE,
			  MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE);
	if (ret) {
		ns_free(ns);
		return ntm_error(ret, "size %zu: cannot map anonymous memory", size);
	}
	hint_huge(ns);
	ns->domain = initial_domain(ns, NULL);
	*out = ns;
	return 0;
}

void ntm_ns_close(struct ntm_ns *ns)
{
	if (!ns)
		return;
	if (ns->fd >= 0)
		close(ns->fd);
	NTM_REC_MAPPING(NTM_REC_UNMAP, ns->base, ns->size, "ntm_ns_close");
	munmap(ns->map, ns->map_len);
	ns_free(ns);
}

void *ntm_ns_base(const struct ntm_ns *ns)
{
	return ns->base;
}

size_t ntm_ns_size(const struct ntm_ns *ns)
{
	return ns->size;
}

size_t ntm_ns_align(const struct ntm_ns *ns)
{
	return ns->align;
}

enum ntm_ns_kind ntm_ns_kind(const struct ntm_ns *ns)
{
	return ns->kind;
}

const char *ntm_ns_path(const struct ntm_ns *ns)
{
	return ns->path;
}

const char *ntm_ns_kind_name(enum ntm_ns_kind kind)
{
	switch (kind) {
	case NTM_NS_DEVDAX:
		return "devdax";
	case NTM_NS_FSDAX:
		return "fsdax";
	case NTM_NS_FILE:
		return "file";
	case NTM_NS_ANON:
		return "anon";
	case NTM_NS_EMULATED:
		return "emulated";
	}
	return "unknown";
}

bool ntm_ns_cpu_durable(const struct ntm_ns *ns)
{
	if (ns->nd_region.async)
		return false;	/* the host's page cache holds the stores */
	return ns->kind == NTM_NS_DEVDAX || ns->kind == NTM_NS_FSDAX ||
	       (ns->kind == NTM_NS_EMULATED && ns->cache_is_media);
}

enum ntm_persist_domain ntm_ns_persist_domain(const struct ntm_ns *ns)
{
	return ns->domain;
}

int ntm_ns_set_persist_domain(struct ntm_ns *ns, enum ntm_persist_domain domain)
{
	if (!ns)
		return ntm_error(-EINVAL, "ns: NULL");
	if (domain != NTM_PERSIST_NONE && domain != NTM_PERSIST_MEMORY_CONTROLLER &&
	    domain != NTM_PERSIST_CPU_CACHE)
		return ntm_error(-EINVAL, "domain %d: not an enum ntm_persist_domain",
				 (int)domain);
	/* The process has no write-back to offer then (ntm_flush_active()). */
	if (domain != NTM_PERSIST_CPU_CACHE &&
	    ntm_dispatch()->domain_override == NTM_PERSIST_CPU_CACHE)
		return ntm_error(-EINVAL, "domain %s: NTMEM_PERSIST_DOMAIN="
				 "cpu_cache, nothing is written back in this "
				 "process", ntm_persist_domain_name(domain));
	ns->domain = domain;
	return 0;
}

bool ntm_ns_is_readonly(const struct ntm_ns *ns)
{
	return ns->readonly;
}

bool ntm_ns_is_temporary(const struct ntm_ns *ns)
{
	return ns->temporary || ns->kind == NTM_NS_ANON;
}

/* A page cache stands between the CPU and the medium: msync() persists. */
static bool page_cached(const struct ntm_ns *ns)
{
	return ns->kind == NTM_NS_FILE ||
	       (ns->kind == NTM_NS_EMULATED && !ns->cache_is_media);
}

bool ntm_ns_persist_beyond_cpu(const struct ntm_ns *ns)
{
	return page_cached(ns) || ns->nd_region.async;
}

/*
 * The namespace's mapping, to the checker of ntmem check (the recorder
 * build's NTM_REC_MAP), judged by the kernel's msync() where persist()
 * ends in one, by write-backs and fences elsewhere.
 */
static void watch_map(const struct ntm_ns *ns)
{
	struct ntm_rec_map m = {
		.path = ns->path,
		.rule = ntm_ns_persist_beyond_cpu(ns) &&
			ns->kind != NTM_NS_DEVDAX ? NTM_REC_RULE_SYNC :
						    NTM_REC_RULE_CPU,
	};

	NTM_REC_MAPPING(NTM_REC_MAP, ns->base, ns->size, &m);
}

/*
 * Make the stores in @ns, an asynchronous (virtio-pmem) devdax namespace,
 * durable: they are in the host's page cache, which only a flush request
 * writes out. A device has no fsync() to send one (msync() of it fails),
 * and the 6.1 kernel hides the region's deep_flush, which would (it shows
 * it only for regions with DIMMs): then no durable path exists, and this
 * says so rather than return as if the data were safe. Where deep_flush
 * exists, it is used: a system call and a host fsync() of its whole file
 * per persist.
 */
static int host_flush(const struct ntm_ns *ns, const void *p, size_t n)
{
	int ret = ntm_nd_region_deep_flush(ntm_sysfs_root, ns->nd_region.name);

	if (ret == -EOPNOTSUPP)
		return ntm_error(ret, "range %p+%zu: namespace '%s' is on an "
				 "asynchronous region (%s, virtio-pmem): only the "
				 "host makes writes durable, and a devdax device "
				 "has no durable path to it (no fsync, no "
				 "deep_flush)", p, n, ns->path, ns->nd_region.name);
	if (ret)
		return ntm_error(ret, "range %p+%zu: namespace '%s' is on an "
				 "asynchronous region (%s, virtio-pmem): only the "
				 "host makes writes durable, and "
				 "%s/bus/nd/devices/%s/deep_flush cannot ask it",
				 p, n, ns->path, ns->nd_region.name, ntm_sysfs_root,
				 ns->nd_region.name);
	return 0;
}

/*
 * The one persist policy of a namespace; @lines_dirty: the stores may have
 * left lines of the range in the CPU cache (anything but ntm_ns_copy()).
 */
static int persist(const struct ntm_ns *ns, const void *p, size_t n,
		   bool lines_dirty)
{
	uintptr_t a = (uintptr_t)p;

	if (!ns_holds(ns, a, n))
		return ntm_error(-EINVAL, "range %p+%zu: outside the namespace",
				 p, n);
	if (ns->readonly || n == 0)
		return 0;
	/*
	 * An emulated namespace on a disk file system takes this step too,
	 * so the lines are clean as on the pmem it stands for. A plain file
	 * needs no write-back (msync reads the page cache), but it does need
	 * the fence: non-temporal stores may still sit in write-combining
	 * buffers, where the write-out msync starts does not see them. In a
	 * cpu_cache domain the cache is inside it: the fence alone will do.
	 */
	if (lines_dirty && ns->kind != NTM_NS_FILE &&
	    ns->domain != NTM_PERSIST_CPU_CACHE)
		ntm_flush_lines(p, n);
	/* Orders the write-backs and NT stores before what follows. */
	ntm_arch_drain();
	if (ns->nd_region.async && ns->kind == NTM_NS_DEVDAX)
		return host_flush(ns, p, n);
	if (page_cached(ns) || ns->nd_region.async) {
		uintptr_t start = a & ~(uintptr_t)(PAGE - 1);

		if (msync((void *)start, a + n - start, MS_SYNC))
			return ntm_error(-errno, "range %p+%zu: msync failed", p, n);
		NTM_REC_MAPPING(NTM_REC_SYNC, p, n, NULL);
	}
	return 0;
}

int ntm_ns_persist(const struct ntm_ns *ns, const void *p, size_t n)
{
	return persist(ns, p, n, true);
}

int ntm_ns_persist_copied(const struct ntm_ns *ns, const void *p, size_t n)
{
	return persist(ns, p, n, false);
}

#if defined(__aarch64__)
/* Ordinary stores, nothing written back: aarch64's cpu_cache copy. */
static void *copy_cached(void *dst, const void *src, size_t n)
{
	ntm_store_copy(dst, src, n);
	return dst;
}
#endif

/*
 * In a cpu_cache domain no line needs writing back: on x86-64 the
 * non-temporal copy, whose cached edges stay in the cache, is the fastest
 * a fence makes durable (dispatch.c); on aarch64 ntm_memcpy_nt() writes
 * every line back (STNP is only a hint), so ordinary stores are the copy
 * there. Anywhere else the flush copy, which leaves no line dirty.
 */
ntm_ns_copy_fn ntm_ns_copy(const struct ntm_ns *ns)
{
	if (ns->domain != NTM_PERSIST_CPU_CACHE)
		return ntm_memcpy_flush;
#if defined(__aarch64__)
	return copy_cached;
#else
	return ntm_memcpy_nt;
#endif
}

/*
 * A descriptor of @ns's file for a moment: its own (temporary), or the
 * file opened again by its path, which must still name the file that is
 * mapped (a file put in its place is never touched). The descriptor, or
 * -errno with the path named.
 */
static int file_again(const struct ntm_ns *ns)
{
	struct stat st;
	int fd;

	if (ns->fd >= 0)
		return ns->fd;
	fd = open(ns->path, O_RDWR | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
	if (fd < 0)
		return ntm_error(-errno, "path '%s': cannot open the mapped file "
				 "again", ns->path);
	if (fstat(fd, &st) || st.st_dev != ns->dev || st.st_ino != ns->ino) {
		close(fd);
		return ntm_error(-ESTALE, "path '%s': no longer names the mapped "
				 "file", ns->path);
	}
	return fd;
}

/* A writable file or emulated namespace: its blocks can be reserved. */
static bool reservable(const struct ntm_ns *ns)
{
	return !ns->readonly &&
	       (ns->kind == NTM_NS_FILE || ns->kind == NTM_NS_EMULATED);
}

int ntm_ns_reserve(const struct ntm_ns *ns, size_t off, size_t n,
		   const char *what)
{
	int ret = 0, fd, err;

	if (!ns)
		return ntm_error(-EINVAL, "ns: NULL");
	if (off > ns->size || n > ns->size - off)
		return ntm_error(-EINVAL, "off %zu, n %zu: outside the %zu "
				 "bytes of namespace '%s' (for %s)", off, n,
				 ns->size, ns->path, what);
	if (n == 0 || !reservable(ns))
		return 0;
	fd = file_again(ns);
	if (fd < 0)
		return fd;
	do
		err = fallocate(fd, FALLOC_FL_KEEP_SIZE, (off_t)off, (off_t)n) ?
			      errno : 0;
	while (err == EINTR);
	/* A file system without fallocate() stays as sparse as before. */
	if (err == EOPNOTSUPP)
		err = 0;
	if (err == ENOSPC)
		ret = ntm_error(-err, "path '%s': no room for the %zu bytes of "
				"%s", ns->path, n, what);
	else if (err)
		ret = ntm_error(-err, "path '%s': cannot reserve %zu bytes for "
				"%s", ns->path, n, what);
	if (fd != ns->fd)
		close(fd);
	return ret;
}

int ntm_ns_region(const struct ntm_ns *ns, struct ntm_nd_region *out)
{
	if (!ns)
		return ntm_error(-EINVAL, "ns: NULL");
	if (!out)
		return ntm_error(-EINVAL, "out: NULL");
	if (!ns->nd_region.name[0]) {
		memset(out, 0, sizeof(*out));
		return 0;
	}
	*out = ns->nd_region;
	return 1;
}
