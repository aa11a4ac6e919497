// SPDX-License-Identifier: MIT
/*
 * watch_judge.c - the checker's persistence points and judgements: whether
 * the lines of the pages the program stored to are durable.
 *
 * Persistence points. At a fence of thread T (pmem_drain, pmem_persist,
 * ntm_drain, a FUA write: every fence the library executes), each page T
 * stored to first is compared with its image, line by line:
 *   - unchanged: nothing to do;
 *   - written back and unchanged since: durable, the image takes it;
 *   - written back, then changed: the written-back contents are durable,
 *     the change is not (stored-after-write-back);
 *   - changed, not written back: not durable (not-written-back).
 * A line that is not durable stays pending, remembering the first point
 * that passed it. A page whose lines all match its image is protected again.
 *
 * Reports. A pending line is not yet a bug: programs store first and
 * persist later, across fences of other data (an undo log's drains, say).
 * It is one when the mapping is unmapped or the program exits with the line
 * still not durable: then it is reported with its kind, the first point that
 * passed it and the page's first store. With NTMEM_CHECK_EAGER=1 it is
 * reported at that point already.
 */
#define _GNU_SOURCE
#include <execinfo.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "watch/watch_internal.h"
#include "watch/watch_report.h"

static struct point *points;		/* [0] unused: "no point" */
static uint32_t npoints, points_cap;

/* The backtrace of the calling thread, from its caller's caller on. */
int watch_capture(void **frames)
{
	void *all[MAX_FRAMES + 4];
	int n = backtrace(all, MAX_FRAMES + 4);

	/* Drop this function and the checker's entry: they name nothing. */
	n = n > 2 ? n - 2 : 0;
	if (n > MAX_FRAMES)
		n = MAX_FRAMES;
	memcpy(frames, all + 2, sizeof(void *) * (size_t)n);
	return n;
}

/* The API function a backtrace entered the library through. */
static const char *entry_name(void *const *frames, int n, const char *dflt)
{
	const char *name = NULL;

	for (int i = 0; i < n; i++) {
		if (!watch_frame_ours(frames[i]))
			break;
		name = watch_frame_symbol(frames[i]);
	}
	return name ? name : dflt;
}

/* A new point; 0 when no memory (the reports then name no point). */
static uint32_t point_new(const char *name, void *const *frames, int n)
{
	if (npoints == points_cap) {
		uint32_t cap = points_cap ? points_cap * 2 : 64;
		struct point *p = realloc(points, sizeof(*p) * cap);

		if (!p)
			return 0;
		points = p;
		points_cap = cap;
		if (!npoints)
			npoints = 1;	/* [0]: none */
	}
	points[npoints].name = name;
	points[npoints].nframes = n;
	memcpy(points[npoints].frames, frames, sizeof(void *) * (size_t)n);
	return npoints++;
}

/* A point created only when a page has lines left pending. */
struct lazy_point {
	uint32_t id;
	const char *dflt;
	void *frames[MAX_FRAMES];
	int n;
	bool pmemobj;	/* libpmemobj's own fence, not the program's */
};

static uint32_t lazy_id(struct lazy_point *lp)
{
	if (!lp->id) {
		int i = 0;
		const void *entry;

		lp->n = watch_capture(lp->frames);
		lp->id = point_new(entry_name(lp->frames, lp->n, lp->dflt),
				   lp->frames, lp->n);
		while (i < lp->n && watch_frame_ours(lp->frames[i]))
			i++;
		entry = watch_obj_entry(lp->frames + i, lp->n - i);
		lp->pmemobj = watch_obj_own_call(entry);
	}
	return lp->id;
}

/* The range of bytes in which line @l of @wp differs from its image. */
static void changed_bytes(const struct wpage *wp, const uint8_t *now,
			  unsigned l, uintptr_t *lo, uintptr_t *hi)
{
	const uint8_t *cur = now + l * LINE;
	const uint8_t *img = wp->image + l * LINE;
	unsigned a = 0, b = LINE;

	while (a < LINE && cur[a] == img[a])
		a++;
	while (b > a && cur[b - 1] == img[b - 1])
		b--;
	*lo = wp->addr + l * LINE + a;
	*hi = wp->addr + l * LINE + b;
}

/* One line found not durable, before the runs are merged. */
struct bad {
	uintptr_t line;		/* its address */
	uintptr_t lo, hi;	/* the changed bytes */
	enum bug_kind kind;
	uint32_t point;
	const struct wpage *wp;
};

/*
 * The list grows by mmap(), not realloc(): it is also built in a signal
 * handler (a fatal signal is judged where it is caught).
 */
static void bad_add(struct bad_list *bl, const struct wpage *wp,
		    const uint8_t *now, unsigned l, enum bug_kind kind,
		    uint32_t point)
{
	struct bad *b;

	if (bl->n == bl->cap) {
		size_t cap = bl->cap ? bl->cap * 2 : PAGE / sizeof(*b);
		struct bad *v = mmap(NULL, sizeof(*v) * cap, PROT_READ | PROT_WRITE,
				     MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

		if (v == MAP_FAILED)
			return;	/* out of memory: fewer lines reported */
		if (bl->v) {
			memcpy(v, bl->v, sizeof(*v) * bl->n);
			watch_real_munmap(bl->v, sizeof(*v) * bl->cap);
		}
		bl->v = v;
		bl->cap = cap;
	}
	b = &bl->v[bl->n++];
	b->line = wp->addr + l * LINE;
	changed_bytes(wp, now, l, &b->lo, &b->hi);
	b->kind = kind;
	b->point = point;
	b->wp = wp;
}

static void bad_sift(struct bad *v, size_t i, size_t n)
{
	for (;;) {
		size_t c = 2 * i + 1;
		struct bad t;

		if (c >= n)
			return;
		if (c + 1 < n && v[c + 1].line > v[c].line)
			c++;
		if (v[i].line >= v[c].line)
			return;
		t = v[i];
		v[i] = v[c];
		v[c] = t;
		i = c;
	}
}

/* By address; a heap sort, as qsort() may allocate (signal handlers). */
static void bad_sort(struct bad *v, size_t n)
{
	for (size_t i = n / 2; i-- > 0;)
		bad_sift(v, i, n);
	for (size_t end = n; end > 1; end--) {
		struct bad t = v[0];

		v[0] = v[end - 1];
		v[end - 1] = t;
		bad_sift(v, 0, end - 1);
	}
}

static void report(const struct bad *first, const struct bad *last,
		   enum bug_when when, const struct point *end)
{
	const struct wrange *r = first->wp->range;
	const struct point *pt = first->point ? &points[first->point] : end;
	struct wrec w;

	/* A shared mapping no pmem_* call named is the program's own
	 * business, not its pmem: judged, never reported. */
	if (!r->t.adopted)
		return;
	wrec_begin(&w, watch_record_names[REC_BUG]);
	wrec_str(&w, "kind", watch_bug_names[first->kind]);
	wrec_str(&w, "when", watch_when_names[when]);
	wrec_str(&w, "file", r->path);
	wrec_num(&w, "offset", (uint64_t)(first->lo - r->start) + (uint64_t)r->off);
	wrec_num(&w, "length", last->hi - first->lo);
	wrec_addr(&w, "address", first->lo);
	wrec_str(&w, "point", pt ? pt->name : watch_when_names[when]);
	wrec_frames(&w, "backtrace", pt ? pt->frames : NULL, pt ? pt->nframes : 0);
	wrec_frames(&w, "first_store", first->wp->frames, first->wp->nframes);
	wrec_num(&w, "pid", (uint64_t)getpid());
	wrec_emit(&w, watch_report_fd);
}

/* Report @bl sorted, adjacent lines of one kind and point as one run. */
void watch_report_all(struct bad_list *bl, enum bug_when when,
		      const struct point *end)
{
	size_t i = 0;

	bad_sort(bl->v, bl->n);
	while (i < bl->n) {
		size_t j = i;

		while (j + 1 < bl->n && bl->v[j + 1].line == bl->v[j].line + LINE &&
		       bl->v[j + 1].kind == bl->v[i].kind &&
		       bl->v[j + 1].point == bl->v[i].point &&
		       bl->v[j + 1].wp->range == bl->v[i].wp->range)
			j++;
		report(&bl->v[i], &bl->v[j], when, end);
		i = j + 1;
	}
	if (bl->v)
		watch_real_munmap(bl->v, sizeof(*bl->v) * bl->cap);
	bl->v = NULL;
	bl->n = bl->cap = 0;
}

/*
 * Line @l of @wp, not as in its image: take the bytes of it libpmemobj
 * leaves unflushed on purpose as durable (watch_pmemobj.c). Lock held.
 */
static enum watch_obj_own pmemobj_own(struct wpage *wp, const uint8_t *now,
				      unsigned l, enum watch_obj_when when)
{
	struct wrange *r = wp->range;

	if (r->off != 0 || !r->path)
		return WATCH_OBJ_NONE;	/* a pool is mapped from its start */
	return watch_obj_unflushed(watch_range_read, r, wp->addr - r->start + l * LINE,
				   wp->addr + l * LINE, now + l * LINE, wp->image + l * LINE,
				   wp->wbdata + l * LINE, when);
}

/*
 * A fence of thread @me, judged by the rules of durability_rules.h. A line
 * written back by @me and unchanged since becomes durable (a write-back is
 * ordered by the fence of the thread that issued it); a line @me wrote back
 * and then changed keeps what was written back as durable, the change is
 * pending. A changed line that no one wrote back is pending if @me made the
 * page writable (which thread stored to the line is not known: the page's
 * is taken), or durable if the cache persists. Lines other threads wrote
 * back wait for those threads' fences. True when every line matches its
 * image again. Lock held.
 */
static bool page_settle(struct wpage *wp, uint32_t me, struct lazy_point *lp,
			struct bad_list *eagerly, bool *unchanged)
{
	const uint8_t *now = watch_page_now(wp);
	bool clean = true;
	/*
	 * The thread taken as the storer of its changed lines: the one that
	 * made the page writable, as for any writable page. A warm page of
	 * libpmemobj's metadata is every thread's (each stores to its lane
	 * and the heap's headers in its own calls): any thread's fence
	 * settles it, so this one's does. A hot page stays its thread's,
	 * so that a store another thread made to it and never persisted is
	 * not taken as made before this thread's fence.
	 */
	uint32_t storer = wp->warm && wp->meta ? me : wp->thread;
	bool mine = storer == me;

	*unchanged = !memcmp(now, wp->image, PAGE);
	if (*unchanged) {
		wp->wb = 0;	/* as the loop below would find, line by line */
		wp->pending = 0;
		return true;
	}
	for (unsigned l = 0; l < LINES; l++) {
		uint64_t bit = 1ull << l;
		enum watch_obj_own own = WATCH_OBJ_NONE;
		enum bug_kind kind;

		if (watch_line_is(now, l, wp->image) ||
		    ((own = pmemobj_own(wp, now, l, WATCH_OBJ_POINT)) ==
		     WATCH_OBJ_TAKEN && watch_line_is(now, l, wp->image))) {
			wp->wb &= ~bit;
			wp->pending &= ~bit;
			continue;
		}
		if (wp->wb & bit) {
			if (!ntm_rule_wb_settles(wp->wb_thread[l], me)) {
				clean = false;	/* that thread's fence decides */
				continue;
			}
			wp->wb &= ~bit;
			if (watch_line_is(now, l, wp->wbdata)) {
				/* What was written back, not the page: a
				 * store since the comparison is not durable. */
				memcpy(wp->image + l * LINE,
				       wp->wbdata + l * LINE, LINE);
				wp->pending &= ~bit;
				continue;
			}
			/* What was written back is durable; the change is not. */
			memcpy(wp->image + l * LINE, wp->wbdata + l * LINE, LINE);
			kind = BUG_STORED_AFTER_WB;
		} else if (ntm_rule_store_settles(watch_domain, storer, me)) {
			/* The cache is persistent: the fence is all it takes. */
			memcpy(wp->image + l * LINE,
			       now + l * LINE, LINE);
			wp->pending &= ~bit;
			continue;
		} else if (mine) {
			kind = BUG_NOT_WRITTEN_BACK;
		} else {
			clean = false;	/* the storing thread's fence decides */
			continue;
		}
		clean = false;
		if (wp->pending & bit)
			continue;	/* the first point that passed it stays */
		wp->pending |= bit;
		wp->reason[l] = (uint8_t)kind;
		wp->point[l] = lazy_id(lp);
		/*
		 * A line only the end can judge is not reported here, nor one
		 * a fence libpmemobj makes for its own logs passes (in a
		 * transaction, say): the program's stores are made durable
		 * by its own points (a commit, pmemobj_persist()) or the end
		 * judges them. Nor one of a warm page of libpmemobj's
		 * metadata: the thread that stored to it may not have
		 * fenced yet.
		 */
		if (own == WATCH_OBJ_LATER || lp->pmemobj || (wp->warm && wp->meta))
			wp->deferred |= bit;
		else
			wp->deferred &= ~bit;
		if (watch_eager && !(wp->deferred & bit))
			bad_add(eagerly, wp, now, l, kind, wp->point[l]);
	}
	return clean;
}

/* At unmap or exit: every line of @wp that is not durable. Lock held. */
void watch_page_judge(struct wpage *wp, struct bad_list *bl)
{
	const uint8_t *now = watch_page_now(wp);

	for (unsigned l = 0; l < LINES; l++) {
		uint64_t bit = 1ull << l;

		if (watch_line_is(now, l, wp->image))
			continue;
		if (pmemobj_own(wp, now, l, WATCH_OBJ_END) == WATCH_OBJ_TAKEN &&
		    watch_line_is(now, l, wp->image))
			continue;
		if (watch_eager && (wp->pending & bit) && !(wp->deferred & bit))
			continue;	/* reported at its point */
		if (wp->range->t.sync_rule)
			bad_add(bl, wp, now, l, BUG_NOT_SYNCED, 0);
		else if (wp->wb & bit)
			bad_add(bl, wp, now, l, watch_line_is(now, l, wp->wbdata) ?
				BUG_NOT_FENCED : BUG_STORED_AFTER_WB, 0);
		else if (wp->pending & bit)
			bad_add(bl, wp, now, l, (enum bug_kind)wp->reason[l],
				wp->point[l]);
		else
			bad_add(bl, wp, now, l, BUG_NEVER_WRITTEN_BACK, 0);
	}
}

/*
 * A page stays writable across fences ("warm") while it keeps changing,
 * when it is all libpmemobj's metadata or hot (HOT_AFTER): libpmemobj
 * stores to a lane and persists it several times in every transaction,
 * and a program stores to its objects and the run headers beside them in
 * every one; protecting such a page at each of those fences costs two
 * mprotect() calls (each a TLB shootdown of every core the process runs
 * on) and a fault with its signal per fence. Its stores then go unseen,
 * which the judgement does not need (it compares contents at every fence,
 * and a transaction compares the pages it joined at each call into
 * libpmemobj, watch_tx.c); what is lost is the frames of each store after
 * the first (a report names the store that first dirtied the page since
 * it was last protected). A page is kept whether it is all durable or
 * holds lines still pending (a transaction stores to its objects between
 * the fences of its undo log and persists them at its commit). It is
 * protected again after WARM_FENCES fences that found it unchanged, so
 * that pages the program is done with (those pmemobj_create() wrote, a
 * log it filled) do not cost every later fence a comparison; and no more
 * than MAX_WARM pages are kept at once, so that a fence compares at most
 * that many pages it was not told of (a program cycling through many hot
 * pages pays for their faults, as without the rule). Lock held.
 */
#define WARM_FENCES 64
#define MAX_WARM 32

static bool keep_warm(struct wpage *wp, bool unchanged)
{
	if (!(wp->meta || watch_page_hot(wp)) || !wp->writable)
		return false;
	if (!wp->warm) {
		if (watch_warm_pages >= MAX_WARM)
			return false;
		wp->warm = true;
		watch_warm_pages++;
		wp->idle = 0;
		return true;
	}
	wp->idle = unchanged ? (uint8_t)(wp->idle + 1) : 0;
	return wp->idle < WARM_FENCES;
}

void watch_fence(void)
{
	uint32_t me = watch_thread_number();
	struct lazy_point lp = { .dflt = "fence" };
	struct bad_list now = { 0 };
	struct wpage *wp, *next;

	watch_my_fences++;
	watch_lock();
	for (wp = watch_lists[LIST_ACTIVE]; wp; wp = next) {
		bool unchanged;

		next = wp->next;
		if (page_settle(wp, me, &lp, &now, &unchanged)) {
			/* Another thread may store to it meanwhile: see
			 * watch_page_settled(). */
			if (!keep_warm(wp, unchanged))
				watch_page_settled(wp);
		} else if (wp->thread == me && !wp->wb &&
			   (wp->meta || !keep_warm(wp, false))) {
			/*
			 * Only pending lines left, and this thread made it
			 * writable: protect it, so the next store is seen,
			 * and pass it by until then (a hot page stays warm
			 * and active, keep_warm()). Write-backs of other
			 * threads keep it active for their fences.
			 */
			watch_page_protect(wp);
			watch_list_move(wp, LIST_RESTING);
		}
	}
	if (now.n)
		watch_report_all(&now, WHEN_POINT, NULL);
	watch_unlock();
}

