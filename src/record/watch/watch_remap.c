// SPDX-License-Identifier: MIT
/*
 * watch_remap.c - the program's own mprotect() and mremap() of watched
 * memory, as the preload shim hands them to the checker: the protections
 * the program asks for are remembered per page (a watched page keeps
 * PROT_WRITE off until its first store), and a mapping mremap() moves or
 * grows is followed, its page records with it.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <string.h>
#include <sys/mman.h>

#include "watch/watch_internal.h"

/* --- the program's mprotect() ---------------------------------------------- */

/* Protection bits a page keeps (PROT_GROWS* apply to the call only). */
#define PROT_KEPT (~(PROT_GROWSDOWN | PROT_GROWSUP))

/* The first watched range that starts in (a, e), or e. Lock held. */
static uintptr_t next_watched(uintptr_t a, uintptr_t e)
{
	size_t n;
	const struct ntm_interval *v = watch_ranges_view(&n);
	size_t i = ntm_interval_find(v, n, a);

	if (i < n && v[i].lo <= a)
		i++;	/* the one holding a starts before it */
	return i < n && v[i].lo < e ? v[i].lo : e;
}

/*
 * mprotect(a, e - a, prot) of the program over watched pages: in runs of
 * pages that get the same protection, in ascending order, stopping at the
 * first that fails (as the kernel does). A watched page gets @prot less
 * PROT_WRITE unless its stores go unseen already, so that the first store
 * after it is still trapped; what the program asked is remembered per
 * page. Lock held. 0, or -1 with errno set.
 */
static int protect_runs(uintptr_t a, uintptr_t e, int prot)
{
	for (uintptr_t run = a; run < e;) {
		struct wrange *r = watch_range_of(run);
		uintptr_t x;
		int eff = prot;

		if (!r) {
			x = next_watched(run, e);
		} else {
			uintptr_t stop = e < r->end ? e : r->end;
			const struct wpage *wp = *watch_slot_of(r, run);

			eff = watch_watched_prot(prot, wp && wp->writable);
			for (x = run + PAGE; x < stop; x += PAGE) {
				wp = *watch_slot_of(r, x);
				if (watch_watched_prot(prot, wp && wp->writable) != eff)
					break;
			}
		}
		if (watch_real_mprotect((void *)run, x - run, eff))
			return -1;
		for (uintptr_t y = run; r && y < x; y += PAGE) {
			struct wslot *sl = watch_slot_at(r, y);

			sl->prot = PROT_SET | (prot & PROT_KEPT);
			if (sl->page && !(prot & PROT_WRITE)) {
				sl->page->writable = false;
				watch_page_cool(sl->page);
			}
		}
		run = x;
	}
	return 0;
}

int watch_protect(void *p, size_t n, int prot)
{
	uintptr_t a = (uintptr_t)p, e = watch_page_up(a + n);
	int saved = errno, ret;

	if (watch_inside || !NTM_WATCH_ON() || (a & (PAGE - 1)) || e <= a)
		return watch_real_mprotect(p, n, prot);
	watch_inside = 1;
	watch_lock();
	if (!watch_overlaps(a, e)) {
		watch_unlock();
		watch_inside = 0;
		return watch_real_mprotect(p, n, prot);
	}
	ret = protect_runs(a, e, prot);
	if (!ret)
		errno = saved;
	saved = errno;
	watch_unlock();
	watch_inside = 0;
	errno = saved;
	return ret;
}

/* --- the program's mremap() ------------------------------------------------ */

/* Ranges one mremap() may move together (one mapping is one, usually). */
#define MAX_PARTS 8

/*
 * [a, e) is about to be unmapped by mremap(): judge it like munmap() (the
 * point is @end), give its pages the protections the program asked for
 * (should the call fail, they stay usable, unwatched), and cut it out.
 * Lock held.
 */
static void unwatch_for_remap(uintptr_t a, uintptr_t e, const struct point *end)
{
	struct bad_list bl = { 0 };
	struct wpage *gone = NULL;
	size_t n;
	const struct ntm_interval *v = watch_ranges_view(&n);

	watch_drop_records(a, e, &bl, &gone);
	if (bl.n)
		watch_report_all(&bl, WHEN_UNMAP, end);
	watch_free_list(gone);
	for (size_t i = ntm_interval_find(v, n, a); i < n && v[i].lo < e; i++)
		watch_restore_prot(v[i].user, a, e);
	watch_ranges_cut(a, e);
}

enum follow_how {
	FOLLOW,		/* the checker follows the mapping */
	FOLLOW_MIXED,	/* protections differ: the kernel refuses the call */
	FOLLOW_NOT,	/* only partly watched, or too many parts: forget it */
};

/*
 * Whether [a, e) can be followed: it lies in watched ranges whole, with
 * one protection the program asked for (*@prot), in at most MAX_PARTS
 * ranges (@parts, *@nparts). Lock held.
 */
static enum follow_how followable(uintptr_t a, uintptr_t e, int *prot,
				  struct wrange **parts, unsigned *nparts)
{
	unsigned n = 0;
	size_t watched;
	int p = -1;

	for (uintptr_t x = a; x < e;) {
		struct wrange *r = watch_range_of(x);
		uintptr_t stop;

		if (!r || n == MAX_PARTS)
			return FOLLOW_NOT;
		stop = e < r->end ? e : r->end;
		for (; x < stop; x += PAGE) {
			if (p >= 0 && watch_prog_prot(r, x) != p)
				return FOLLOW_MIXED;
			p = watch_prog_prot(r, x);
		}
		parts[n++] = r;
	}
	*prot = p;
	*nparts = n;
	watch_ranges_view(&watched);
	return n > 0 && watched + n + 1 <= MAX_RANGES ? FOLLOW : FOLLOW_NOT;
}

/*
 * The watched parts of [a, a + keep) now at @to (the kernel moved them, or
 * left them and grew the mapping by @grow after them): each becomes the
 * range made ready in @fresh, with its page records, and the last grows by
 * @grow, its new pages watched as the old ones were. Lock held.
 */
static void follow(uintptr_t a, uintptr_t keep, uintptr_t to, uintptr_t grow,
		   int prot, struct wrange **parts, struct wrange **fresh,
		   unsigned nparts)
{
	for (unsigned i = 0; i < nparts; i++) {
		struct wrange *r = parts[i], *nr = fresh[i];
		uintptr_t s = a > r->start ? a : r->start;
		uintptr_t t = a + keep < r->end ? a + keep : r->end;
		size_t npages = (t - s) / PAGE;

		nr->start = to + (s - a);
		nr->end = nr->start + (t - s) + (t == a + keep ? grow : 0);
		memcpy(nr->slots, watch_slot_at(r, s), npages * sizeof(*nr->slots));
		memset(watch_slot_at(r, s), 0, npages * sizeof(*nr->slots));
		for (size_t k = 0; k < npages; k++) {
			struct wpage *wp = nr->slots[k].page;

			if (wp) {
				wp->range = nr;
				wp->addr = nr->start + k * PAGE;
			}
		}
		if (prot != nr->prot)
			for (uintptr_t x = nr->start + (t - s); x < nr->end; x += PAGE)
				watch_slot_at(nr, x)->prot = PROT_SET | prot;
	}
	watch_ranges_cut(a, a + keep);
	for (unsigned i = 0; i < nparts; i++) {
		struct wrange *nr = fresh[i];

		if (!ntm_interval_insert(&watch_table, nr->start, nr->end, nr))
			continue;
		/*
		 * watch_remap() reserved the memory: only a range still
		 * watched where the kernel put it (unmapped behind the
		 * checker's back) makes the table refuse. The moved pages are
		 * left usable, unwatched.
		 */
		watch_note_unwatched(nr, nr->start, nr->end,
				     "a watched range is where mremap() moved it");
		watch_drop_records(nr->start, nr->end, NULL, NULL);
		watch_restore_prot(nr, nr->start, nr->end);
		watch_range_destroy(nr);
	}
}

void *watch_remap(void *old, size_t olen, size_t nlen, int flags, void *want)
{
	uintptr_t a = (uintptr_t)old, ae = watch_page_up(a + olen), nl = watch_page_up(nlen);
	uintptr_t w = (uintptr_t)want, keep, grow;
	struct point end = { .name = "mremap" };
	struct wrange *parts[MAX_PARTS], *fresh[MAX_PARTS];
	unsigned nparts = 0;
	enum follow_how how;
	int saved = errno, prot = 0, err;
	bool fixed = flags & MREMAP_FIXED, moves;
	void *got;

	if (watch_inside || !NTM_WATCH_ON() || (a & (PAGE - 1)) || ae < a || nl < nlen)
		return watch_real_mremap(old, olen, nlen, flags, want);
	watch_inside = 1;
	watch_lock();
	if (!watch_overlaps(a, ae > a ? ae : a + PAGE) &&
	    !(fixed && !(w & (PAGE - 1)) && watch_overlaps(w, w + nl))) {
		watch_unlock();
		watch_inside = 0;
		return watch_real_mremap(old, olen, nlen, flags, want);
	}
	/* The backtrace only when it is needed (it takes no lock of ours). */
	end.nframes = watch_capture(end.frames);
	/* A fixed target is unmapped first (the kernel refuses an overlap). */
	if (fixed && !(w & (PAGE - 1)) && (w + nl <= a || w >= ae))
		unwatch_for_remap(w, w + nl, &end);
	if (!olen) {
		/* A second mapping of the same pages: as the program asked,
		 * not with the checker's protection, and not watched. */
		struct wrange *r = watch_range_of(a);
		int want_prot = r ? watch_prog_prot(r, a) : 0;

		got = watch_real_mremap(old, olen, nlen, flags, want);
		err = errno;
		if (got != MAP_FAILED && r) {
			watch_real_mprotect(got, nl, want_prot);
			watch_note_unwatched(r, a, a + nl, "the second mapping of it "
				       "mremap() made is not watched");
		}
		goto out;
	}
	moves = fixed || nl > ae - a;
	if (!moves) {
		/* Shrunk in place (this works across mappings): the tail
		 * is unmapped. */
		if (nl < ae - a)
			unwatch_for_remap(a + nl, ae, &end);
		got = watch_real_mremap(old, olen, nlen, flags, want);
		err = errno;
		goto out;
	}
	how = followable(a, ae, &prot, parts, &nparts);
	if (how != FOLLOW) {
		/*
		 * Mixed protections: the kernel refuses the move as it would
		 * without the checker. Watched in part only: the kernel would
		 * refuse it for the checker's protections, so stop watching.
		 */
		if (how == FOLLOW_NOT)
			watch_forget(a, ae, "mremap() of a mapping only partly watched");
		got = watch_real_mremap(old, olen, nlen, flags, want);
		err = errno;
		goto out;
	}
	if (flags & MREMAP_DONTUNMAP) {
		watch_forget(a, ae, "mremap(MREMAP_DONTUNMAP) leaves two mappings");
		got = watch_real_mremap(old, olen, nlen, flags, want);
		err = errno;
		goto out;
	}
	/* Moved or grown: one protection over all of it, so that the kernel
	 * sees one mapping, as the program made it. */
	WATCH_EACH_PAGE(wp, next)
		if (wp->addr >= a && wp->addr < ae)
			watch_page_protect(wp);
	keep = nl < ae - a ? nl : ae - a;
	grow = nl > ae - a ? nl - (ae - a) : 0;
	for (unsigned i = 0; i < nparts; i++) {
		struct wrange *r = parts[i];
		uintptr_t s = a > r->start ? a : r->start;
		uintptr_t t = a + keep < r->end ? a + keep : r->end;

		fresh[i] = t > s ? watch_range_new(0, (t - s) + (t == a + keep ? grow : 0),
					     r->path, r->off + (off_t)(s - r->start),
					     r->prot, &r->t) : NULL;
		if (!fresh[i]) {
			while (i-- > 0)
				watch_range_destroy(fresh[i]);
			goto no_memory;
		}
	}
	/*
	 * And the table's growth: follow() cuts the parts out (which may
	 * split one) and adds the fresh ranges, at most 2 more in all.
	 * After mremap() there is no way back.
	 */
	if (ntm_interval_reserve(&watch_table, 2)) {
		for (unsigned i = 0; i < nparts; i++)
			watch_range_destroy(fresh[i]);
		goto no_memory;
	}
	if (nl < ae - a)
		unwatch_for_remap(a + nl, ae, &end);
	got = watch_real_mremap(old, olen, nlen, flags, want);
	err = errno;
	if (got == MAP_FAILED) {
		for (unsigned i = 0; i < nparts; i++)
			watch_range_destroy(fresh[i]);
		goto out;
	}
	follow(a, keep, (uintptr_t)got, grow, prot, parts, fresh, nparts);
	goto out;
no_memory:
	watch_forget(a, ae, "no memory to follow mremap()");
	got = watch_real_mremap(old, olen, nlen, flags, want);
	err = errno;
out:
	watch_unlock();
	watch_inside = 0;
	errno = got == MAP_FAILED ? err : saved;
	return got;
}

