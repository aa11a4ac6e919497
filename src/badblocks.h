/* SPDX-License-Identifier: MIT */
/*
 * badblocks.h - the bad-sector list of an emulated namespace: a sorted
 * array of disjoint, non-touching ranges of 512-byte sectors, and the file
 * that keeps it across runs (badblocks.c); one device's list shared by
 * its requests (badblocks_shared.c); a devdax device's list as sysfs has
 * it (badblocks_sysfs.c). Never installed.
 *
 * A list is a value: a change builds a new list and leaves the old one as
 * it was, so the block device can write the new one to disk first and
 * switch to it only when that worked (a failed call changes nothing).
 *
 * The file holds one "sector count" line per range, in decimal, as the
 * kernel's sysfs badblocks files do. Loading is strict: any other line is
 * refused with -EINVAL naming the file and line, because a list cut short
 * at a bad line would make bad sectors read as good.
 */
#ifndef NTMEM_BADBLOCKS_H
#define NTMEM_BADBLOCKS_H

#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "ntmem/blk.h"

struct ntm_bb_list {
	size_t n;
	struct ntm_badblock *v;	/* sorted by sector; NULL when n == 0 */
};

/* Free the ranges and empty the list. */
void ntm_bb_free(struct ntm_bb_list *list);

/* True when [sector, sector + count) meets a range of @list. */
bool ntm_bb_overlaps(const struct ntm_bb_list *list, uint64_t sector,
		     uint64_t count);

/*
 * A new list @out: @in with [sector, sector + count) added (@add) or
 * removed. @in is not changed. Return: 0 or -ENOMEM.
 */
int ntm_bb_change(const struct ntm_bb_list *in, uint64_t sector,
		  uint64_t count, bool add, struct ntm_bb_list *out);

/*
 * Merge [sector, sector + count) into the list @arg (a struct
 * ntm_bb_list *), kept sorted and disjoint: the collector the readers of
 * the kernel's lists below take. Return: 0 or -ENOMEM (the list as it was).
 */
int ntm_bb_list_add(void *arg, uint64_t sector, uint64_t count);

/*
 * Parse @len bytes of list text into @out. Ranges past @nsectors (a list
 * written for a larger device) are clipped or dropped; overlapping or
 * unsorted ranges are merged. Blank lines are not allowed, and the last
 * line may lack its newline. Return: 0, -ENOMEM, or -EINVAL with
 * *@bad_line set to the first line (from 1) that is not "sector count"
 * with two decimal numbers, a count of at least 1 and no overflow.
 */
int ntm_bb_parse(const char *text, size_t len, uint64_t nsectors,
		 struct ntm_bb_list *out, size_t *bad_line);

/*
 * Load the list file at @path (read access only). A missing file is an
 * empty list. Return: 0, or -EINVAL (a line that does not parse, or a
 * path that is not a regular file: FIFOs are opened without blocking),
 * -EISDIR, -EFBIG, -ENOMEM or the error of open/read; ntm_errmsg() names
 * the file and, for a bad line, its number.
 */
int ntm_bb_load(const char *path, uint64_t nsectors, struct ntm_bb_list *out);

/*
 * Replace the file at @path with @list, durably: write a temporary file
 * beside it, fsync it, rename it over @path, fsync the directory. On an
 * error the file at @path is left as it was (the temporary is removed).
 * Return: 0 or -errno, with ntm_errmsg() naming the step that failed.
 */
int ntm_bb_save(const char *path, const struct ntm_bb_list *list);

/*
 * Add (@add) or remove [sector, sector + count) in the list file at
 * @path, as one step against every other change of that file from any
 * process: under a lock on the file, its list is loaded (ntm_bb_load(),
 * ranges past @nsectors dropped), changed and saved (ntm_bb_save()).
 * The list saved in *@out. On an error the file is as it was. 0 or
 * -errno with the message set.
 */
int ntm_bb_update(const char *path, uint64_t nsectors, uint64_t sector,
		  uint64_t count, bool add, struct ntm_bb_list *out);

/* --- badblocks_shared.c: one device's list, read by every request --- */

/*
 * The list of a block device, shared between the requests that read it
 * and the calls that change it (injects, a write that clears a sector).
 * n mirrors list.n and is read without the lock on every request: an
 * empty list costs one load, and a request that races with a change sees
 * the list before or after it, as with the kernel's seqlock-protected
 * badblocks. A change is built aside under @change, written to @path
 * when there is one, and only then switched in under @lock.
 */
struct ntm_bb_shared {
	pthread_mutex_t change;
	pthread_rwlock_t lock;
	size_t n;
	struct ntm_bb_list list;
	char *path;		/* the file that keeps it, or NULL */
	uint64_t nsectors;	/* the device's: the file's ranges past it go */
};

/* An empty list kept nowhere. */
void ntm_bb_shared_init(struct ntm_bb_shared *bb);
void ntm_bb_shared_destroy(struct ntm_bb_shared *bb);
/*
 * Keep the list in the file at @path from now on, starting with what it
 * holds (ntm_bb_load(); ranges past @nsectors dropped). 0 or -errno with
 * the message set. Before the device is shared between threads.
 */
int ntm_bb_shared_load(struct ntm_bb_shared *bb, const char *path,
		       uint64_t nsectors);
/*
 * Add devdax device @rdev's media errors, read under sysfs @root (never
 * written back: the platform owns that list). 0 or -errno with the message
 * set. Before the device is shared between threads.
 */
int ntm_bb_shared_load_devdax(struct ntm_bb_shared *bb, const char *root,
			      dev_t rdev, uint64_t dev_size);
/*
 * Add the bad sectors under fsdax file @path (@file_size bytes): its block
 * device's list read under sysfs @root, mapped through the file's extents
 * (never written back: the device's list is the kernel's). 0 or -errno
 * with the message set. Before the device is shared between threads.
 */
int ntm_bb_shared_load_fsdax(struct ntm_bb_shared *bb, const char *root,
			     const char *path, uint64_t file_size);
/* True when the bytes [off, off + len) meet a bad sector. */
bool ntm_bb_shared_overlaps_slow(struct ntm_bb_shared *bb, uint64_t off,
				 uint64_t len);
static inline bool ntm_bb_shared_overlaps(struct ntm_bb_shared *bb,
					  uint64_t off, uint64_t len)
{
	if (__atomic_load_n(&bb->n, __ATOMIC_ACQUIRE) == 0)
		return false;
	return ntm_bb_shared_overlaps_slow(bb, off, len);
}
/*
 * Add (@add) or clear sectors [sector, sector + count), durably in the
 * file first when there is one (ntm_bb_update(): the file's list, with
 * what other processes changed since, becomes this device's). Any
 * failure leaves the list in memory and on disk as it was. 0, -ENOMEM
 * or the error of ntm_bb_update().
 */
int ntm_bb_shared_change(struct ntm_bb_shared *bb, uint64_t sector,
			 uint64_t count, bool add);
/* Copy up to @max ranges into @out; return how many the list holds. */
size_t ntm_bb_shared_get(struct ntm_bb_shared *bb, struct ntm_badblock *out,
			 size_t max);

/* --- badblocks_sysfs.c: a devdax device's media errors --- */

/*
 * Shift the region-relative "sector count" lines of @text into the device
 * window [dev_start, dev_start + dev_size) of a region starting at
 * @region_start; @add receives each clipped range in device sectors.
 */
int ntm_badblocks_translate(const char *text, uint64_t region_start,
			    uint64_t dev_start, uint64_t dev_size,
			    int (*add)(void *arg, uint64_t sector, uint64_t count),
			    void *arg);
/* Feed @add the media errors of devdax device @rdev, read under @root. */
int ntm_badblocks_devdax(const char *root, dev_t rdev, uint64_t dev_size,
			 int (*add)(void *arg, uint64_t sector, uint64_t count),
			 void *arg);

/* One FIEMAP extent of a file: @length bytes at @logical, on the device at
 * @physical (both in bytes). */
struct ntm_bb_extent {
	uint64_t logical, physical, length;
};
/*
 * Map the "sector count" lines of a block device's list @text (sectors of
 * the whole disk) through a file's extents @ext: the file lies in a
 * partition starting at disk sector @part_start (0: the whole disk), and
 * @add receives each file range (512-byte sectors of the file, every one a
 * bad byte touches, clipped to @file_size).
 */
int ntm_badblocks_map_extents(const char *text, uint64_t part_start,
			      const struct ntm_bb_extent *ext, size_t n_ext,
			      uint64_t file_size,
			      int (*add)(void *arg, uint64_t sector, uint64_t count),
			      void *arg);
/*
 * Feed @add the bad sectors of the file open at @fd (an fsdax file of
 * @file_size bytes): its block device's list under sysfs @root, mapped
 * through the file's FIEMAP extents. 0 when the device has no list; the
 * -errno of FIEMAP when there is one and the file cannot be mapped.
 */
int ntm_badblocks_fsdax(const char *root, int fd, uint64_t file_size,
			int (*add)(void *arg, uint64_t sector, uint64_t count),
			void *arg);

#endif /* NTMEM_BADBLOCKS_H */
