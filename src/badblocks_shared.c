// SPDX-License-Identifier: MIT
/*
 * badblocks_shared.c - one block device's bad-sector list, checked by
 * every request without a lock while it is empty, changed by injects and
 * by writes that clear a sector, and kept in its file. See badblocks.h.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "badblocks.h"
#include "error.h"

void ntm_bb_shared_init(struct ntm_bb_shared *bb)
{
	memset(bb, 0, sizeof(*bb));
	pthread_mutex_init(&bb->change, NULL);
	pthread_rwlock_init(&bb->lock, NULL);
}

void ntm_bb_shared_destroy(struct ntm_bb_shared *bb)
{
	free(bb->path);
	ntm_bb_free(&bb->list);
	pthread_rwlock_destroy(&bb->lock);
	pthread_mutex_destroy(&bb->change);
}

int ntm_bb_shared_load(struct ntm_bb_shared *bb, const char *path,
		       uint64_t nsectors)
{
	int ret;

	bb->path = strdup(path);
	if (!bb->path)
		return ntm_error(-ENOMEM, "badblocks: no memory");
	bb->nsectors = nsectors;
	ret = ntm_bb_load(bb->path, nsectors, &bb->list);
	if (ret == 0)
		bb->n = bb->list.n;
	return ret;
}

int ntm_bb_shared_load_devdax(struct ntm_bb_shared *bb, const char *root,
			      dev_t rdev, uint64_t dev_size)
{
	int ret = ntm_badblocks_devdax(root, rdev, dev_size, ntm_bb_list_add, &bb->list);

	bb->n = bb->list.n;
	if (ret)
		return ntm_error(ret, "badblocks: cannot read the region's list "
				 "in sysfs");
	return 0;
}

int ntm_bb_shared_load_fsdax(struct ntm_bb_shared *bb, const char *root,
			     const char *path, uint64_t file_size)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC), ret;

	if (fd < 0)
		return 0;	/* renamed or unlinked since: nothing to map */
	ret = ntm_badblocks_fsdax(root, fd, file_size, ntm_bb_list_add, &bb->list);
	close(fd);
	bb->n = bb->list.n;
	if (ret)
		return ntm_error(ret, "badblocks: path '%s': cannot map its block "
				 "device's bad sectors to the file (FIEMAP)", path);
	return 0;
}

bool ntm_bb_shared_overlaps_slow(struct ntm_bb_shared *bb, uint64_t off,
				 uint64_t len)
{
	bool hit;

	pthread_rwlock_rdlock(&bb->lock);
	hit = ntm_bb_overlaps(&bb->list, off / NTM_BADBLOCK_SECTOR,
			      (len + NTM_BADBLOCK_SECTOR - 1) / NTM_BADBLOCK_SECTOR);
	pthread_rwlock_unlock(&bb->lock);
	return hit;
}

/* Make @next the list readers see; the old one is freed. */
static void switch_to(struct ntm_bb_shared *bb, struct ntm_bb_list *next)
{
	struct ntm_bb_list old;

	pthread_rwlock_wrlock(&bb->lock);
	old = bb->list;
	bb->list = *next;
	__atomic_store_n(&bb->n, next->n, __ATOMIC_RELEASE);
	pthread_rwlock_unlock(&bb->lock);
	ntm_bb_free(&old);
}

int ntm_bb_shared_change(struct ntm_bb_shared *bb, uint64_t sector,
			 uint64_t count, bool add)
{
	struct ntm_bb_list next;
	int ret;

	/* Changers queue here; readers only wait for the switch. */
	pthread_mutex_lock(&bb->change);
	if (bb->path)
		ret = ntm_bb_update(bb->path, bb->nsectors, sector, count, add,
				    &next);
	else if ((ret = ntm_bb_change(&bb->list, sector, count, add, &next)))
		ret = ntm_error(ret, "badblocks: no memory");
	if (!ret)
		switch_to(bb, &next);
	pthread_mutex_unlock(&bb->change);
	return ret;
}

size_t ntm_bb_shared_get(struct ntm_bb_shared *bb, struct ntm_badblock *out,
			 size_t max)
{
	size_t n;

	pthread_rwlock_rdlock(&bb->lock);
	n = bb->list.n;
	if (n && max && out)
		memcpy(out, bb->list.v, (n < max ? n : max) * sizeof(*out));
	pthread_rwlock_unlock(&bb->lock);
	return n;
}
