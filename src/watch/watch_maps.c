// SPDX-License-Identifier: MIT
/*
 * watch_maps.c - the mappings the checker watches: those the library
 * tells of (ntm_watch_map(), ntm_watch_unmap(), ntm_watch_synced()), and
 * shared file mappings a pmem_* call touches, discovered in
 * /proc/self/maps; how a watched range is cut when part of it goes, and
 * the notes that tell of memory not watched.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "watch/watch_internal.h"
#include "watch/watch_report.h"

/* Shared mappings found not to be pmem (or that could not be watched),
 * remembered so that a hot pmem_flush() on ordinary memory reads
 * /proc/self/maps only once (and a mapping not watched is noted once). */
#define MAX_NOT_PMEM 32

struct ntm_interval_table watch_table = NTM_INTERVAL_TABLE_INIT(MAX_RANGES);
static struct { uintptr_t start, end; } not_pmem[MAX_NOT_PMEM];
static unsigned nnot_pmem, not_pmem_next;

static void watch_range(uintptr_t start, uintptr_t end, const char *path,
			off_t off, int prot);

/* [lo, hi) is not to be discovered again. Lock held. */
static void not_pmem_add(uintptr_t lo, uintptr_t hi)
{
	not_pmem[not_pmem_next].start = lo;
	not_pmem[not_pmem_next].end = hi;
	not_pmem_next = (not_pmem_next + 1) % MAX_NOT_PMEM;
	if (nnot_pmem < MAX_NOT_PMEM)
		nnot_pmem++;
}

static bool not_pmem_known(uintptr_t a)
{
	for (unsigned i = 0; i < nnot_pmem; i++)
		if (a >= not_pmem[i].start && a < not_pmem[i].end)
			return true;
	return false;
}


/*
 * A pmem_* call touched memory no watched mapping holds: if it is a shared
 * mapping of a file, watch it from now on (stores before this are not
 * seen); else remember it is not pmem.
 */
void watch_discover(uintptr_t a)
{
	FILE *maps;
	char line[4096 + 128];
	bool known;

	watch_lock();
	known = not_pmem_known(a) || watch_range_of(a);
	watch_unlock();
	if (known)
		return;
	maps = fopen("/proc/self/maps", "re");
	if (!maps)
		return;
	while (fgets(line, sizeof(line), maps)) {
		unsigned long lo, hi, off;
		char perms[5], path[4096];
		int n;

		path[0] = 0;
		n = sscanf(line, "%lx-%lx %4s %lx %*s %*s %4095[^\n]", &lo, &hi,
			   perms, &off, path);
		if (n < 4 || a < lo || a >= hi)
			continue;
		if (perms[1] == 'w' && perms[3] == 's' && path[0] == '/') {
			watch_range(lo, hi, path, (off_t)off,
				    PROT_READ | PROT_WRITE |
				    (perms[2] == 'x' ? PROT_EXEC : 0));
		} else {
			watch_lock();
			not_pmem_add(lo, hi);
			watch_unlock();
		}
		break;
	}
	fclose(maps);
}

/*
 * Take the page records of [a, e) out of the lists. With @bl, each is
 * judged into it and put on @gone, to be freed after the report (which
 * reads its frames); without, each is freed unjudged. Lock held.
 */
void watch_drop_records(uintptr_t a, uintptr_t e, struct bad_list *bl,
			 struct wpage **gone)
{
	for (int l = LIST_ACTIVE; l <= LIST_RESTING; l++) {
		struct wpage *wp, *next;

		for (wp = watch_lists[l]; wp; wp = next) {
			next = wp->next;
			if (wp->addr < a || wp->addr >= e)
				continue;
			watch_list_del(wp);
			*watch_slot_of(wp->range, wp->addr) = NULL;
			if (!bl) {
				watch_page_free(wp);
				continue;
			}
			watch_page_judge(wp, bl);
			wp->next = *gone;
			*gone = wp;
		}
	}
}

void watch_free_list(struct wpage *wp)
{
	while (wp) {
		struct wpage *next = wp->next;

		watch_page_free(wp);
		wp = next;
	}
}

void watch_range_destroy(struct wrange *r)
{
	watch_real_munmap(r->slots, r->table_bytes);
	free(r->path);
	free(r);
}

/* A new range over [start, end), not yet protected; NULL: no memory. */
struct wrange *watch_range_new(uintptr_t start, uintptr_t end,
				const char *path, off_t off, int prot)
{
	struct wrange *r = calloc(1, sizeof(*r));
	size_t bytes = (end - start) / PAGE * sizeof(*r->slots);

	if (!r)
		return NULL;
	/* Untouched parts of a large namespace's table cost nothing. */
	r->slots = mmap(NULL, bytes, PROT_READ | PROT_WRITE,
			MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	r->path = path && *path ? strdup(path) : NULL;
	if (r->slots == MAP_FAILED || (path && *path && !r->path)) {
		if (r->slots != MAP_FAILED)
			watch_real_munmap(r->slots, bytes);
		free(r->path);
		free(r);
		return NULL;
	}
	r->table_bytes = bytes;
	r->start = start;
	r->end = end;
	r->off = off;
	r->prot = prot;
	return r;
}

/*
 * Give [a, e) of @r (clipped to it) the protections the program asked
 * for, one mprotect() per run of pages that want the same. Lock held.
 */
void watch_restore_prot(const struct wrange *r, uintptr_t a, uintptr_t e)
{
	uintptr_t run;

	a = a > r->start ? a : r->start;
	e = e < r->end ? e : r->end;
	for (run = a; run < e;) {
		int prot = watch_prog_prot(r, run);
		uintptr_t x = run + PAGE;

		while (x < e && watch_prog_prot(r, x) == prot)
			x += PAGE;
		watch_real_mprotect((void *)run, x - run, prot);
		run = x;
	}
}

/*
 * A note that @len bytes at file offset @off of @path (NULL: anonymous
 * memory) are not watched (@state: "not watched", "no longer watched"),
 * and why: machine-readable ("kind":"unwatched", the file, offset and
 * length), so a run that did not watch all of a mapping is visible in the
 * report, and `ntmem check` does not call it checked.
 */
static void unwatched_note(const char *path, uint64_t off, uint64_t len,
			   const char *state, const char *why)
{
	struct wrec w;
	char msg[512];

	snprintf(msg, sizeof(msg), "%s offset %llu length %llu: %s: %s",
		 path ? path : "anonymous memory", (unsigned long long)off,
		 (unsigned long long)len, state, why);
	wrec_begin(&w, watch_record_names[REC_NOTE]);
	wrec_str(&w, "kind", watch_note_names[NOTE_UNWATCHED]);
	wrec_str(&w, "message", msg);
	wrec_str(&w, "file", path);
	wrec_num(&w, "offset", off);
	wrec_num(&w, "length", len);
	wrec_num(&w, "pid", (uint64_t)getpid());
	wrec_emit(&w, watch_report_fd);
}

/* [a, e) of @r is no longer watched. */
void watch_note_unwatched(const struct wrange *r, uintptr_t a, uintptr_t e,
			   const char *why)
{
	unwatched_note(r->path, (uint64_t)(a - r->start) + (uint64_t)r->off,
		       e - a, "no longer watched", why);
}

/* What watch_ranges_cut() tells range_cut() of the cut. */
struct cut {
	uintptr_t a, e;
	struct wrange *tail;	/* a hole in the middle: the rest, or NULL */
	const char *why;	/* no tail: why not */
};

/*
 * The table no longer holds [c->a, c->e): make range @was->user, which it
 * touched, say the same (@left pieces of it are in the table).
 */
static void range_cut(void *arg, const struct ntm_interval *was, unsigned left)
{
	const struct cut *c = arg;
	struct wrange *r = was->user;
	uintptr_t a = c->a, e = c->e;

	if (left == 0) {
		watch_range_destroy(r);
	} else if (left == 2) {
		/* A hole in the middle: the rest is c->tail, with its pages. */
		struct wrange *tail = c->tail;

		memcpy(tail->slots, watch_slot_at(r, e),
		       (r->end - e) / PAGE * sizeof(*r->slots));
		for (uintptr_t p = e; p < r->end; p += PAGE)
			if (*watch_slot_of(tail, p))
				(*watch_slot_of(tail, p))->range = tail;
		r->end = a;	/* the table keeps its size: unmapped whole */
	} else if (a > r->start && e < r->end) {
		/* A hole in the middle, the rest not watched, but as the
		 * program wants it. */
		watch_note_unwatched(r, e, r->end, c->why);
		watch_drop_records(e, r->end, NULL, NULL);
		watch_restore_prot(r, e, r->end);
		r->end = a;
	} else if (a <= r->start) {
		/* The head goes: the table is shifted, not reallocated. */
		size_t cut = (e - r->start) / PAGE;

		memmove(r->slots, r->slots + cut,
			(r->end - e) / PAGE * sizeof(*r->slots));
		memset(r->slots + (r->end - e) / PAGE, 0,
		       cut * sizeof(*r->slots));
		r->off += (off_t)(e - r->start);
		r->start = e;
	} else {
		r->end = a;
	}
}

/*
 * Take [a, e) out of the watched ranges: trim, split or drop the ranges it
 * covers. Its pages hold no records any more. Lock held.
 */
void watch_ranges_cut(uintptr_t a, uintptr_t e)
{
	struct cut c = { .a = a, .e = e };
	size_t n;
	const struct ntm_interval *v = watch_ranges_view(&n);
	size_t i = ntm_interval_find(v, n, a);

	if (e <= a)
		return;
	if (i < n && v[i].lo < a && v[i].hi > e) {
		/* A hole in the middle: the rest becomes a range. */
		struct wrange *r = v[i].user;

		if (n >= MAX_RANGES)
			c.why = "too many mappings";
		else if (!(c.tail = watch_range_new(e, r->end, r->path,
						    r->off + (off_t)(e - r->start),
						    r->prot)))
			c.why = "no memory";
	}
	/* The tail and its pointer in one change; it fails only for memory
	 * (MAX_RANGES is the table's capacity), and then nothing changed. */
	if (c.tail && !ntm_interval_cut_split(&watch_table, a, e, c.tail,
					      range_cut, &c))
		return;
	if (c.tail) {
		watch_range_destroy(c.tail);
		c.tail = NULL;
		c.why = "no memory";
	}
	/* No piece is added: this never fails. */
	ntm_interval_cut_split(&watch_table, a, e, NULL, range_cut, &c);
}

/*
 * Unmap [a, e) from the watched ranges: judge its dirty pages (reported
 * under @when), then cut it out. Lock held.
 */
static void unwatch(uintptr_t a, uintptr_t e, enum bug_when when,
		    const struct point *end)
{
	struct bad_list bl = { 0 };
	struct wpage *gone = NULL;

	watch_drop_records(a, e, &bl, &gone);
	if (bl.n)
		watch_report_all(&bl, when, end);
	watch_free_list(gone);
	watch_ranges_cut(a, e);
}

/*
 * Stop watching [a, e), which stays mapped: its records are dropped
 * unjudged, its pages get the program's protections back, and a note
 * per range says so (@why). Lock held.
 */
void watch_forget(uintptr_t a, uintptr_t e, const char *why)
{
	size_t n;
	const struct ntm_interval *v = watch_ranges_view(&n);

	watch_drop_records(a, e, NULL, NULL);
	for (size_t i = ntm_interval_find(v, n, a); i < n && v[i].lo < e; i++) {
		const struct wrange *r = v[i].user;

		watch_note_unwatched(r, a > r->start ? a : r->start,
			       e < r->end ? e : r->end, why);
		watch_restore_prot(r, a, e);
	}
	watch_ranges_cut(a, e);
}

static void watch_range(uintptr_t start, uintptr_t end, const char *path,
			off_t off, int prot)
{
	struct wrange *r = watch_range_new(start, end, path, off, prot);
	const char *why = NULL;
	size_t n;

	if (!r) {
		unwatched_note(path && *path ? path : NULL, (uint64_t)off,
			       end - start, "not watched", "no memory");
		return;
	}
	watch_lock();
	/* Whatever was watched there before was unmapped behind our back. */
	unwatch(start, end, WHEN_UNMAP, NULL);
	watch_ranges_view(&n);
	/* In the table first: nobody looks before the lock is let go, and
	 * taking it out again cannot fail, unlike taking back mprotect(). */
	if (n >= MAX_RANGES) {
		why = "too many mappings";
	} else if (ntm_interval_insert(&watch_table, start, end, r)) {
		why = "no memory";
	} else if (watch_real_mprotect((void *)start, end - start,
				       watch_watched_prot(prot, false))) {
		why = strerror(errno);
		ntm_interval_remove(&watch_table, start);
	}
	if (why) {
		not_pmem_add(start, end);	/* noted once, not per pmem_* call */
		watch_unlock();
		unwatched_note(r->path, (uint64_t)off, end - start,
			       "not watched", why);
		watch_range_destroy(r);
		return;
	}
	watch_unlock();
}

void ntm_watch_map_slow(void *p, size_t n, const char *path, off_t off)
{
	uintptr_t a = (uintptr_t)p;

	if (!n)
		return;
	watch_inside = 1;
	watch_range(watch_page_down(a), watch_page_up(a + n), path, off - (off_t)(a - watch_page_down(a)),
		    PROT_READ | PROT_WRITE);
	watch_inside = 0;
}

/* Whether [a, e) overlaps a watched range. Lock held. */
bool watch_overlaps(uintptr_t a, uintptr_t e)
{
	size_t n;
	const struct ntm_interval *v = watch_ranges_view(&n);
	size_t i = ntm_interval_find(v, n, a);

	return i < n && v[i].lo < e;
}

void ntm_watch_unmap_slow(const void *p, size_t n, const char *why)
{
	uintptr_t a = watch_page_down((uintptr_t)p), e = watch_page_up((uintptr_t)p + n);
	struct point end = { .name = why };
	bool hit;

	if (e <= a || watch_inside)
		return;
	watch_inside = 1;
	watch_lock();
	nnot_pmem = 0;	/* addresses may be mapped again */
	hit = watch_overlaps(a, e);
	watch_unlock();
	if (hit) {
		/* The backtrace only when it is needed: munmap() is common. */
		end.nframes = watch_capture(end.frames);
		watch_lock();
		unwatch(a, e, WHEN_UNMAP, &end);
		watch_unlock();
	}
	watch_inside = 0;
}

void ntm_watch_synced_slow(const void *p, size_t n)
{
	uintptr_t a = (uintptr_t)p, e = a + n;
	watch_inside = 1;
	watch_lock();
	for (int list = LIST_ACTIVE; list <= LIST_RESTING; list++)
	for (struct wpage *wp = watch_lists[list], *next; wp; wp = next) {
		const uint8_t *now;

		next = wp->next;
		if (wp->addr + PAGE <= a || wp->addr >= e)
			continue;
		now = watch_page_now(wp);
		if (now == wp->image)
			continue;	/* unreadable: nothing to take */
		for (unsigned l = 0; l < LINES; l++) {
			uintptr_t la = wp->addr + l * LINE;
			uint64_t bit = 1ull << l;

			if (la + LINE <= a || la >= e)
				continue;
			memcpy(wp->image + l * LINE, now + l * LINE, LINE);
			wp->wb &= ~bit;
			wp->pending &= ~bit;
		}
		if (!wp->pending && !wp->wb &&
		    !memcmp(wp->image, now, PAGE))
			watch_page_settled(wp);	/* a store may come meanwhile */
	}
	watch_unlock();
	watch_inside = 0;
}

