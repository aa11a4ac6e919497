/* SPDX-License-Identifier: MIT */
/*
 * watch/watch_pmemobj.h - what the checker knows of libpmemobj (PMDK 1.12,
 * pool format 6): the bytes of a pool it leaves unflushed on purpose,
 * found from the pool's own header and heap layout (watch_pmemobj.c), and
 * whether a write-back was libpmemobj's own doing. Private.
 */
#ifndef NTMEM_WATCH_PMEMOBJ_H
#define NTMEM_WATCH_PMEMOBJ_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/*
 * Reads @n bytes at file offset @off of the mapping being judged (one
 * that maps its file from offset 0); false when they are not mapped or
 * not readable.
 */
typedef bool (*watch_obj_read_fn)(void *ctx, uint64_t off, void *buf,
				  size_t n);

/* When a line is judged. */
enum watch_obj_when {
	WATCH_OBJ_POINT,	/* at a persistence point (a fence) */
	WATCH_OBJ_END,		/* at unmap or exit */
};

enum watch_obj_own {
	WATCH_OBJ_NONE,		/* nothing of the line is libpmemobj's own */
	WATCH_OBJ_TAKEN,	/* its own bytes were taken as durable */
	WATCH_OBJ_LATER,	/* may be its own: only the end can say */
};

/*
 * The 64-byte line at file offset @off (aligned) and address @addr, whose
 * contents are @now,
 * of a mapping that may hold a libpmemobj pool: the bytes of it that
 * libpmemobj leaves unflushed on purpose are copied from @now into @image
 * and @wbdata (what is durable of the line, what its last write-back
 * saw), so that they are not judged.
 */
enum watch_obj_own watch_obj_unflushed(watch_obj_read_fn read, void *ctx,
				       uint64_t off, uintptr_t addr,
				       const uint8_t *now,
				       uint8_t *image, uint8_t *wbdata,
				       enum watch_obj_when when);

/*
 * Whether file offset @off of the mapping is in a zone's chunks, where
 * objects live: not in the pool's header, descriptor, lanes (undo and
 * redo logs), heap header or chunk headers, which only libpmemobj stores
 * to. False when the mapping holds no format-6 pool.
 */
bool watch_obj_in_chunks(watch_obj_read_fn read, void *ctx, uint64_t off);

/*
 * Whether the @len bytes (at most a page) at file offset @off of the
 * mapping are all libpmemobj's metadata: in a format-6 pool, and none in a
 * zone's chunks. The program stores nothing there; libpmemobj stores to
 * its lanes at every transaction. False when the mapping holds no pool.
 */
bool watch_obj_metadata(watch_obj_read_fn read, void *ctx, uint64_t off,
			uint64_t len);

/*
 * libpmemobj is using the lock (PMEMmutex, PMEMrwlock, PMEMcond) at
 * @lock: its 64 bytes are run-time state while its first 8 (the pool's
 * run id when it was last initialised) say it is live. Not thread-safe:
 * the checker's lock is held.
 */
void watch_obj_lock_seen(uintptr_t lock);

/*
 * The call into libpmemobj that a backtrace (innermost first, from the
 * first frame outside the checker) went through: the address of the
 * outermost of the libpmemobj frames it starts with, or NULL when it does
 * not start in libpmemobj. Cached: cheap enough for every write-back.
 */
const void *watch_obj_entry(void *const *frames, int n);

/*
 * Whether the write-backs made under the call @entry (not NULL) are
 * libpmemobj's own: true unless the program called one of libpmemobj's
 * persistence functions (pmemobj_persist(), pmemobj_memcpy_persist(), ...)
 * to ask for them.
 */
bool watch_obj_entry_own(const void *entry);

#endif /* NTMEM_WATCH_PMEMOBJ_H */
