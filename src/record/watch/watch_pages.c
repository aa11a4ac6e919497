// SPDX-License-Identifier: MIT
/*
 * watch_pages.c - the checker's page records: what `ntmem check` keeps of
 * each page of a watched mapping the program stored to.
 *
 * Pages. Every writable pmem mapping (ntm_ns_*, hence pmem_map_file(), and
 * shared file mappings that pmem_* calls touch) is write-protected. The
 * first store to a page faults; the handler copies the page (its "image":
 * what is durable of it), makes it writable again and remembers the store's
 * backtrace. Later stores to the page are not seen: the judgement compares
 * contents, not store events, so it needs none.
 *
 * The small helpers of pages and ranges (watch_slot_of(), watch_list_move(),
 * watch_page_protect(), ...) are inline in watch_internal.h: the fault handler,
 * a write-back and a fence all take them.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "watch/watch_internal.h"

/*
 * Page @a of @r, write-protected, is being stored to: keep its image (a
 * resting page has one already), make it writable, make it active. Lock
 * held. 0, or -errno (then nothing changed).
 */
int watch_page_dirty(struct wrange *r, uintptr_t a, void *const *frames,
		      int nframes)
{
	struct wpage *wp = *watch_slot_of(r, a);
	bool fresh = !wp;

	if (fresh) {
		wp = watch_chunk_get(&watch_page_records);
		if (!wp)
			return -ENOMEM;
		memcpy(wp->image, (const void *)a, PAGE);
		wp->wb = 0;
		wp->pending = 0;
		wp->deferred = 0;
		wp->addr = a;
		wp->range = r;
		wp->list = LIST_NONE;
		wp->meta = watch_page_is_meta(r, a);
		wp->warm = false;
		wp->nframes = nframes;
		memcpy(wp->frames, frames, sizeof(void *) * (size_t)nframes);
	}
	if (watch_real_mprotect((void *)a, PAGE, watch_prog_prot(r, a))) {
		int err = -errno;

		if (fresh)
			watch_page_free(wp);
		return err;
	}
	wp->writable = true;
	wp->thread = watch_thread_number();
	*watch_slot_of(r, a) = wp;
	watch_list_move(wp, watch_dirty_list(r));
	return 0;
}

/*
 * The contents of @wp, which the program made unreadable (PROT_NONE):
 * read through /proc/self/mem, which does not change what any thread of
 * the program sees; if even that fails, its image stands in (nothing is
 * judged of it). Lock held: one buffer serves.
 */
const uint8_t *watch_page_read(const struct wpage *wp)
{
	static uint8_t copy[PAGE];
	int fd;
	ssize_t got = -1;

	fd = open("/proc/self/mem", O_RDONLY | O_CLOEXEC);
	if (fd >= 0) {
		got = pread(fd, copy, PAGE, (off_t)wp->addr);
		close(fd);
	}
	return got == PAGE ? copy : wp->image;
}

/*
 * Reads a mapping that starts at its file's first byte, for
 * watch_pmemobj.c: @ctx is the range, @off a file offset. Only pages the
 * program can read. Lock held.
 */
bool watch_range_read(void *ctx, uint64_t off, void *buf, size_t n)
{
	const struct wrange *r = ctx;
	uintptr_t a = r->start + (uintptr_t)off;

	if (off >= r->end - r->start || n > r->end - a)
		return false;
	for (uintptr_t x = watch_page_down(a); x < a + n; x += PAGE)
		if (!watch_prot_readable(watch_prog_prot(r, x)))
			return false;
	memcpy(buf, (const void *)a, n);
	return true;
}

/*
 * Page @a of @r holds only libpmemobj's metadata: its lanes (the undo and
 * redo logs every transaction writes and persists several times), the
 * pool's header and descriptor, heap, zone and chunk headers. Lock held.
 */
bool watch_page_is_meta(struct wrange *r, uintptr_t a)
{
	return r->off == 0 && r->path &&
	       watch_obj_metadata(watch_range_read, r, a - r->start, PAGE);
}

