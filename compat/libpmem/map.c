// SPDX-License-Identifier: MIT
/*
 * map.c - pmem_map_file(), pmem_unmap(), pmem_is_pmem() and pmem_msync()
 * on ntmem's namespaces.
 *
 * pmem_map_file() opens or creates the file as PMDK does (flags, len and
 * devdax rules below), then maps it with ntm_ns_open_fd(): MAP_SYNC is
 * tried first, so a file on a DAX file system or a devdax device is
 * "pmem". The mapped ranges are kept in a registry (an interval table,
 * src/interval/interval.h) that pmem_is_pmem() consults (PMEM_IS_PMEM_FORCE overrides it either way) and that
 * pmem_unmap() trims: like PMDK's, it unmaps exactly the pages it is given,
 * so a mapping can be split, and whatever is left keeps its answer.
 *
 * A devdax device on an asynchronous region (virtio-pmem) is not pmem
 * (ntm_ns_cpu_durable() is false: only the host makes stores durable), so
 * a program calls pmem_msync(), which asks the host there through
 * ntm_ns_persist() (a device's msync() would do nothing).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <ntmem.h>
#include <ntmem/embed.h>
#include <ntmem/hook.h>	/* NTM_REC_MAPPING(): the checker of ntmem check */

#include "compat.h"
#include "include/libpmem.h"
#include "interval.h"	/* src/interval/: the registry's table */
#include "ntm_valgrind.h"	/* src/valgrind/: memcheck and msync() */

#define FILE_FLAGS (PMEM_FILE_CREATE | PMEM_FILE_EXCL | PMEM_FILE_SPARSE | \
		    PMEM_FILE_TMPFILE)

/*
 * The tests build these sources once more with NTMEM_PMEM_TEST_EMULATE:
 * files are then mapped as emulated pmem, which is "pmem" on tmpfs, so the
 * registry's pmem_is_pmem() answers can be checked without a DAX file
 * system. The library itself never does this.
 */
#ifdef NTMEM_PMEM_TEST_EMULATE
#define NS_FLAGS (NTM_NS_ANY_SIZE | NTM_NS_EMULATE)
#else
#define NS_FLAGS NTM_NS_ANY_SIZE
#endif

/* --- the registry -------------------------------------------------------- */

/* A namespace pmem_map_file() made, and how much of its mapping is left. */
struct owner {
	struct ntm_ns *ns;
	size_t pieces;		/* ranges of the registry in its mapping */
	bool pmem;		/* ntm_ns_cpu_durable() of its namespace */
	struct owner *next;	/* in the list of owners that never close */
};

/*
 * What pmem_map_file() mapped and pmem_unmap() has not unmapped yet:
 * disjoint ranges, their owner each. A range starts page aligned and ends
 * where its file ends (PMDK's registry does too: the rest of the last page
 * is not pmem) or at a page boundary where a pmem_unmap() cut it. Changed
 * and read under registry_lock, which also keeps the owners alive.
 */
static pthread_mutex_t registry_lock = PTHREAD_MUTEX_INITIALIZER;
static struct ntm_interval_table registry = NTM_INTERVAL_TABLE_INIT(0);

/*
 * Namespaces whose pages were all unmapped piece by piece, but some of
 * them were mapped again by someone else before the last piece went (see
 * owner_release()): never closed, kept reachable.
 */
static struct owner *kept;

static uintptr_t page_size(void)
{
	return (uintptr_t)sysconf(_SC_PAGESIZE);
}

static uintptr_t page_up(uintptr_t a)
{
	return (a + page_size() - 1) & ~(page_size() - 1);
}

static struct owner *owner_of(const struct ntm_interval *r)
{
	return r->user;
}

/* The range is all that is left of its namespace's mapping, and all of it. */
static bool range_whole(const struct ntm_interval *r)
{
	const struct owner *own = owner_of(r);
	uintptr_t base = (uintptr_t)ntm_ns_base(own->ns);

	return own->pieces == 1 && r->lo == base &&
	       r->hi == base + ntm_ns_size(own->ns);
}

/*
 * Every page of @own's mapping has been unmapped, piece by piece.
 * ntm_ns_close() would munmap its whole original range once more, so it
 * may run only while nothing else is mapped there: claim the range back
 * with a placeholder the kernel refuses if any page of it was mapped again
 * meanwhile (MAP_FIXED_NOREPLACE), and let ntm_ns_close() unmap that. If
 * a page was reused, the namespace is kept and never closed.
 */
static void owner_release(struct owner *own)
{
	void *base = ntm_ns_base(own->ns), *p;
	size_t len = ntm_ns_size(own->ns);

	p = mmap(base, len, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS |
		 MAP_NORESERVE | MAP_FIXED_NOREPLACE, -1, 0);
	if (p == base) {
		ntm_ns_close(own->ns);
		free(own);
		return;
	}
	/* A kernel before 4.17 takes the flag for a hint: elsewhere. */
	if (p != MAP_FAILED)
		munmap(p, len);
	own->next = kept;
	kept = own;
}

/* A range @cut touched: its owner counts the pieces, goes with the last. */
static void range_cut(void *arg, const struct ntm_interval *was, unsigned left)
{
	struct owner *own = owner_of(was);

	(void)arg;
	own->pieces += left;
	if (--own->pieces == 0)
		owner_release(own);
}

/*
 * Drop [lo, hi) (page aligned, already unmapped) from the registry: ranges
 * inside it go, ranges across its ends are cut, a range around it splits
 * in two (a range's unaligned end counts as its last page's end: lo and hi
 * are aligned). The caller reserved room for one more range, so this
 * cannot fail.
 */
static void registry_cut(uintptr_t lo, uintptr_t hi)
{
	(void)ntm_interval_cut(&registry, lo, hi, range_cut, NULL);
}

static int registry_add(struct ntm_ns *ns)
{
	struct owner *own = malloc(sizeof(*own));
	uintptr_t start = (uintptr_t)ntm_ns_base(ns);
	uintptr_t end = start + ntm_ns_size(ns);
	int err;

	if (!own)
		return -1;
	*own = (struct owner){ .ns = ns, .pieces = 1,
			       .pmem = ntm_ns_cpu_durable(ns) };
	pthread_mutex_lock(&registry_lock);
	/* The new range, and one more if a stale one splits around it. */
	err = ntm_interval_reserve(&registry, 2);
	if (!err) {
		/*
		 * The kernel just handed out these pages, so whatever the
		 * registry still has there was unmapped behind its back
		 * (munmap(), MAP_FIXED): forget it (PMDK refuses the new
		 * mapping instead, with ENOMEM).
		 */
		registry_cut(start, page_up(end));
		err = ntm_interval_insert(&registry, start, end, own);
	}
	pthread_mutex_unlock(&registry_lock);
	if (err) {
		free(own);
		return -1;
	}
	return 0;
}

/*
 * Unmap [a, e) (page aligned) and keep the registry true. A range that is
 * all of its namespace's mapping and lies inside [a, e) is closed with
 * ntm_ns_close() (whose munmap is exactly that range); everything else is
 * munmap()ed here, in address order, each page once, so nothing another
 * thread maps meanwhile is hit. 0 or -errno (then the registry describes
 * what was unmapped before the failure).
 */
static int unmap_locked(uintptr_t a, uintptr_t e)
{
	uintptr_t lo = a;

	/* Room for the second half of a range split in the middle. */
	if (ntm_interval_reserve(&registry, 1))
		return -ENOMEM;
	while (lo < e) {
		uintptr_t hi = e;
		struct ntm_interval whole;
		const struct ntm_interval *v;
		size_t n, i;

		/* The first whole mapping inside [lo, e), in address order. */
		v = ntm_interval_view(&registry, &n);
		for (i = ntm_interval_find(v, n, lo); i < n && v[i].lo < e; i++)
			if (v[i].lo >= lo && page_up(v[i].hi) <= e &&
			    range_whole(&v[i])) {
				hi = v[i].lo;
				break;
			}
		if (hi > lo) {
			NTM_REC_MAPPING(NTM_REC_UNMAP, (void *)lo, hi - lo,
					"pmem_unmap");
			if (munmap((void *)lo, hi - lo))
				return -errno;
			registry_cut(lo, hi);
		}
		if (hi == e)
			break;
		/* registry_cut() changed the table: find it by address. */
		v = ntm_interval_view(&registry, &n);
		whole = v[ntm_interval_find(v, n, hi)];
		lo = page_up(whole.hi);
		NTM_REC_MAPPING(NTM_REC_UNMAP, (void *)whole.lo,
				whole.hi - whole.lo, "pmem_unmap");
		ntm_interval_remove(&registry, whole.lo);
		ntm_ns_close(owner_of(&whole)->ns);
		free(owner_of(&whole));
	}
	return 0;
}

/* --- pmem_map_file ------------------------------------------------------- */

/*
 * Under ntmem check: PMEM_IS_PMEM_FORCE=1 tells the program its mapping
 * is pmem, so it persists with write-backs, whatever the file (ntmem-check
 * (1), "Which mappings"). Read here without latching it, as PMDK reads it
 * at the first pmem_is_pmem() call only.
 */
static void watch_forced(const struct ntm_ns *ns)
{
#ifdef NTM_RECORD
	static const enum ntm_rec_rule cpu = NTM_REC_RULE_CPU;
	const char *v = getenv("PMEM_IS_PMEM_FORCE");

	if (v && atoi(v) == 1)
		NTM_REC_MAPPING(NTM_REC_RULE, ntm_ns_base(ns), ntm_ns_size(ns),
				&cpu);
#else
	(void)ns;
#endif
}

/*
 * Fail with errno @err and a message naming the step (printf-style, the
 * error's text appended), as every path out of pmem_map_file() does.
 */
__attribute__((format(printf, 2, 3)))
static void *map_fail(int err, const char *fmt, ...)
{
	char what[320];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(what, sizeof(what), fmt, ap);
	va_end(ap);
	pmem_set_error("%s: %s", what, strerror(err));
	errno = err;
	return NULL;
}

/* What the call changed on the file system, to undo when it fails. */
struct file_undo {
	bool created;		/* this call created the file: unlink it */
	bool via_link;		/* ...as the target of a dangling symlink */
	off_t old_size;		/* an existing file's size before, or -1 */
};

/*
 * Put the file back the way the call found it: a file it created is
 * removed (PMDK removes it only with PMEM_FILE_EXCL), a file it grew is
 * shrunk back. A file it shrank keeps its new size: the cut-off bytes
 * are gone.
 */
static void file_undo(const char *path, int fd, size_t len,
		      const struct file_undo *undo)
{
	if (undo->created && undo->via_link) {
		/* Remove the file made behind the link, not the link itself. */
		char fdpath[64], target[PATH_MAX];
		ssize_t n;

		snprintf(fdpath, sizeof(fdpath), "/proc/self/fd/%d", fd);
		n = readlink(fdpath, target, sizeof(target) - 1);
		if (n > 0) {
			target[n] = '\0';
			unlink(target);
		}
	} else if (undo->created)
		unlink(path);
	else if (undo->old_size >= 0 && undo->old_size < (off_t)len)
		(void)!ftruncate(fd, undo->old_size);
}

/*
 * Open (and for CREATE size) the file; the descriptor and in @undo what
 * to undo if a later step fails, or -1 with errno and the message set and
 * the file as it was.
 */
static int open_file(const char *path, size_t len, int flags, mode_t mode,
		     struct file_undo *undo)
{
	int fd, err, oflags = O_RDWR | O_CLOEXEC;
	struct stat st;

	if (flags & PMEM_FILE_TMPFILE) {
		/* Unnamed: nothing to remove. With EXCL it can never get a name. */
		fd = open(path, oflags | O_TMPFILE |
			  (flags & PMEM_FILE_EXCL ? O_EXCL : 0), mode);
	} else if (flags & PMEM_FILE_CREATE) {
		/* O_EXCL first tells whether this call creates the file. */
		fd = open(path, oflags | O_CREAT | O_EXCL, mode);
		undo->created = fd >= 0;
		if (fd < 0 && errno == EEXIST && !(flags & PMEM_FILE_EXCL)) {
			/* The name exists: a file, or a link O_EXCL did not follow. */
			fd = open(path, oflags);
			if (fd < 0 && errno == ENOENT) {
				/* A dangling link: creating makes its target. */
				fd = open(path, oflags | O_CREAT, mode);
				undo->created = undo->via_link = fd >= 0;
			}
		}
	} else {
		/* EXCL without CREATE is ignored, as by PMDK's open(2). */
		fd = open(path, oflags);
	}
	if (fd < 0) {
		map_fail(errno, "open '%s'", path);
		return -1;
	}
	if (!(flags & PMEM_FILE_CREATE))
		return fd;
	if (!undo->created && !(flags & PMEM_FILE_TMPFILE) &&
	    fstat(fd, &st) == 0 && S_ISREG(st.st_mode))
		undo->old_size = st.st_size;
	/* Always to len, growing or shrinking an existing file, as PMDK. */
	if (ftruncate(fd, (off_t)len)) {
		err = errno;
		map_fail(err, "ftruncate '%s' to %zu bytes", path, len);
		goto out_undo;
	}
	if (!(flags & PMEM_FILE_SPARSE)) {
		err = posix_fallocate(fd, 0, (off_t)len);
		if (err) {
			map_fail(err, "posix_fallocate '%s' of %zu bytes", path,
				 len);
			goto out_undo;
		}
	}
	return fd;

out_undo:
	file_undo(path, fd, len, undo);
	close(fd);
	errno = err;
	return -1;
}

void *pmem_map_file(const char *path, size_t len, int flags, mode_t mode,
		    size_t *mapped_lenp, int *is_pmemp)
{
	struct file_undo undo = { .created = false, .via_link = false,
				  .old_size = -1 };
	struct ntm_ns *ns;
	struct stat st;
	bool devdax;
	int fd, err, ret;

	if (!path)
		return map_fail(EINVAL, "path (null)");
	if (flags & ~FILE_FLAGS)
		return map_fail(EINVAL, "invalid flag 0x%x for '%s'", flags,
				path);
	devdax = stat(path, &st) == 0 && S_ISCHR(st.st_mode);
	if (devdax) {
		/* A device has a size: CREATE and SPARSE are accepted, unused. */
		if (flags & ~(PMEM_FILE_CREATE | PMEM_FILE_SPARSE))
			return map_fail(EINVAL, "flag 0x%x unsupported for "
					"device '%s'", flags, path);
		flags = 0;
	} else if ((flags & PMEM_FILE_CREATE) && (off_t)len < 0) {
		/* Checked before anything is created, as PMDK does. */
		return map_fail(EINVAL, "invalid file length %zu for '%s'", len,
				path);
	} else if ((flags & PMEM_FILE_CREATE) && len == 0) {
		return map_fail(EINVAL, "zero len not allowed with "
				"PMEM_FILE_CREATE for '%s'", path);
	} else if (!(flags & PMEM_FILE_CREATE) && len != 0) {
		return map_fail(EINVAL, "non-zero len not allowed without "
				"PMEM_FILE_CREATE for '%s'", path);
	}
	if ((flags & PMEM_FILE_TMPFILE) && !(flags & PMEM_FILE_CREATE))
		return map_fail(EINVAL, "PMEM_FILE_TMPFILE not allowed without "
				"PMEM_FILE_CREATE for '%s'", path);

	fd = open_file(path, len, flags, mode, &undo);
	if (fd < 0)
		return NULL;
	ret = ntm_ns_open_fd(&ns, fd, path, NS_FLAGS);
	if (ret) {
		/*
		 * PMDK says EINVAL of every file it cannot map (/dev/null, a
		 * FIFO), where ntm_ns_open() says -ENODEV; the message keeps
		 * what the file is.
		 */
		err = ret == -ENODEV ? EINVAL : -ret;
		pmem_set_error("mmap: %s", ntm_errmsg());
		goto out_undo;
	}
	if (devdax && len && len != ntm_ns_size(ns)) {
		ntm_ns_close(ns);
		err = EINVAL;
		map_fail(err, "len %zu must be 0 or the size of device '%s'",
			 len, path);
		goto out_undo;
	}
	if (registry_add(ns)) {
		ntm_ns_close(ns);
		err = ENOMEM;
		map_fail(err, "no memory to register the mapping of '%s'", path);
		goto out_undo;
	}
	close(fd);
	watch_forced(ns);
	if (mapped_lenp)
		*mapped_lenp = ntm_ns_size(ns);
	/* As PMDK: the answer pmem_is_pmem() gives, PMEM_IS_PMEM_FORCE too. */
	if (is_pmemp)
		*is_pmemp = pmem_is_pmem(ntm_ns_base(ns), ntm_ns_size(ns));
	return ntm_ns_base(ns);

out_undo:
	file_undo(path, fd, len, &undo);
	close(fd);
	errno = err;
	return NULL;
}

int pmem_unmap(void *addr, size_t len)
{
	uintptr_t a = (uintptr_t)addr, e;
	int ret;

	/*
	 * munmap(2)'s own rules: a page-aligned start, a non-zero length
	 * rounded up to whole pages. Anything else unmaps nothing.
	 */
	if (len == 0 || a % page_size() || __builtin_add_overflow(a, len, &e) ||
	    e > UINTPTR_MAX - page_size()) {
		ret = -EINVAL;
	} else {
		/* Any range: PMDK munmaps what it is given, its own or not. */
		pthread_mutex_lock(&registry_lock);
		ret = unmap_locked(a, page_up(e));
		pthread_mutex_unlock(&registry_lock);
	}
	if (ret) {
		pmem_set_error("munmap %p+%zu: %s", addr, len, strerror(-ret));
		errno = -ret;
		return -1;
	}
	return 0;
}

int pmem_is_pmem(const void *addr, size_t len)
{
	uintptr_t a = (uintptr_t)addr, e;
	int force = pmem_env_is_pmem_force(), pmem = 0;
	const struct ntm_interval *v;
	size_t n;

	if (len == 0 || __builtin_add_overflow(a, len, &e))
		return 0;
	/* A program asks before it persists a mapping of its own. */
	NTM_REC_MAPPING(NTM_REC_TOUCH, addr, len, NULL);
	if (force >= 0)
		return force;
	/* Every byte in registered pmem ranges; adjacent ones may add up. */
	pthread_mutex_lock(&registry_lock);
	v = ntm_interval_view(&registry, &n);
	for (size_t i = ntm_interval_find(v, n, a); i < n && !pmem; i++) {
		if (v[i].lo > a || !owner_of(&v[i])->pmem)
			break;
		a = v[i].hi;
		pmem = a >= e;
	}
	pthread_mutex_unlock(&registry_lock);
	return pmem;
}

/*
 * Whether @addr lies in a registered devdax range that is not pmem: one
 * on an asynchronous (virtio-pmem) region, whose stores only the host's
 * flush makes durable. msync(2) of a device does nothing of the kind, and
 * Linux 6.1 shows no deep_flush for such a region (the one way user space
 * could ask the host, which ntm_ns_persist() takes where it exists; no
 * kernel the tests boot has it, so the drop-in does not rely on it):
 * pmem_msync() says there is no durable path rather than return as if the
 * data were safe. The device's path goes into @path (@n bytes).
 */
static bool no_durable_path(const void *addr, char *path, size_t n)
{
	uintptr_t a = (uintptr_t)addr;
	const struct ntm_interval *v;
	const struct owner *own;
	bool found = false;
	size_t nv, i;

	pthread_mutex_lock(&registry_lock);
	v = ntm_interval_view(&registry, &nv);
	i = ntm_interval_find(v, nv, a);
	own = i < nv && v[i].lo <= a ? owner_of(&v[i]) : NULL;
	if (own && !own->pmem && ntm_ns_kind(own->ns) == NTM_NS_DEVDAX) {
		snprintf(path, n, "%s", ntm_ns_path(own->ns));
		found = true;
	}
	pthread_mutex_unlock(&registry_lock);
	return found;
}

int pmem_msync(const void *addr, size_t len)
{
	uintptr_t start = (uintptr_t)addr & ~(uintptr_t)(sysconf(_SC_PAGESIZE) - 1);
	char path[PATH_MAX];
	int ret;

	if (no_durable_path(addr, path, sizeof(path))) {
		pmem_set_error("msync %p+%zu: devdax '%s' is on an asynchronous "
			       "(virtio-pmem) region and has no durable path: "
			       "only the host makes its stores durable, and a "
			       "device has no fsync", addr, len, path);
		errno = EOPNOTSUPP;
		return -1;
	}

	/*
	 * msync() wants a page-aligned start: widen the range down to it.
	 * The rest of those pages may be what the program told memcheck is
	 * not addressable (libpmemobj marks its pool so): no error of its.
	 */
	NTM_VG_QUIET_BEGIN();
	ret = msync((void *)start, len + ((uintptr_t)addr - start), MS_SYNC);
	NTM_VG_QUIET_END();
	if (ret) {
		pmem_set_error("msync %p+%zu: %s", addr, len, strerror(errno));
		return -1;
	}
	NTM_REC_MAPPING(NTM_REC_SYNC, addr, len, NULL);
	return 0;
}
