// SPDX-License-Identifier: MIT
/*
 * watch.c - the checker behind `ntmem check`: it watches a program's plain
 * stores into pmem, which no recorder hook can see, and judges them at the
 * program's persistence points against the write-backs and non-temporal
 * stores the library's recorder hooks do see (ntmem/hook.h).
 *
 * Pages. Every writable pmem mapping (ntm_ns_*, hence pmem_map_file(), and
 * shared file mappings that pmem_* calls touch) is write-protected. The
 * first store to a page faults; the handler copies the page (its "image":
 * what is durable of it), makes it writable again and remembers the store's
 * backtrace. Later stores to the page are not seen: the judgement compares
 * contents, not store events, so it needs none.
 *
 * Lines. A write-back (or NT store) of a line of a stored-to page copies the
 * line as it is at that moment: what the write-back makes durable at the
 * next fence.
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
 *
 * Performance notes: a write-back of a line that did not change since it
 * was last durable, and a second write-back of a line with no change
 * between; counted per call site, reported at exit.
 *
 * Locking: one spin lock, taken by the fault handler too (a signal handler
 * cannot take a mutex). No code holding it stores to a watched page, so a
 * thread never faults while holding it; it may read them.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <execinfo.h>
#include <fcntl.h>
#include <gnu/lib-names.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <ucontext.h>
#include <unistd.h>

#include <ntmem/ns.h>

#include "sigchain.h"
#include "watch/watch.h"
#include "watch/watch_pmemobj.h"
#include "watch/watch_report.h"

#define PAGE 4096u
#define LINE 64u
#define LINES (PAGE / LINE)	/* 64: one bit per line in a uint64_t */
#define MAX_FRAMES 16
/* Mappings watched at once: namespaces, pmem_map_file()s, discoveries. */
#define MAX_RANGES 256
/* Page records allocated with one mmap() (the handler cannot malloc()). */
#define PAGES_PER_CHUNK 64
/* Distinct call sites the performance notes keep apart. */
#define MAX_PERF 256
/* Shared mappings found not to be pmem (or that could not be watched),
 * remembered so that a hot pmem_flush() on ordinary memory reads
 * /proc/self/maps only once (and a mapping not watched is noted once). */
#define MAX_NOT_PMEM 32

int ntm_watch_on;

enum bug_kind {
	BUG_NONE,
	BUG_NOT_WRITTEN_BACK,	/* changed, not written back after the change */
	BUG_STORED_AFTER_WB,	/* written back, then changed again */
	BUG_NOT_FENCED,		/* written back or NT-stored, never fenced */
	BUG_NEVER_WRITTEN_BACK,	/* changed after the last point, at the end */
};

static const char *const bug_names[] = {
	[BUG_NOT_WRITTEN_BACK] = "not-written-back",
	[BUG_STORED_AFTER_WB] = "stored-after-write-back",
	[BUG_NOT_FENCED] = "not-fenced",
	[BUG_NEVER_WRITTEN_BACK] = "never-written-back",
};

struct wrange;

/* A page stored to since it was last all durable. */
struct wpage {
	uint8_t image[PAGE];	/* each line as it was when last durable */
	uint8_t wbdata[PAGE];	/* each line as its last write-back saw it */
	uint64_t wb;		/* lines written back since last durable */
	uint32_t wb_thread[LINES];	/* wb: the thread whose fence counts */
	uint64_t pending;	/* lines a point passed while not durable */
	uint64_t deferred;	/* pending, not reported eagerly: the end judges */
	uint8_t reason[LINES];	/* pending: enum bug_kind at that point */
	uint32_t point[LINES];	/* pending: the first point that passed it */
	uintptr_t addr;
	struct wrange *range;
	uint32_t thread;	/* the thread that last made it writable */
	bool writable;		/* not write-protected: stores go unseen */
	bool meta;		/* all libpmemobj's metadata (its lanes...) */
	bool warm;		/* meta, kept writable after it was durable */
	uint8_t idle;		/* warm: fences since it last changed */
	uint8_t list;		/* enum page_list */
	int nframes;
	void *frames[MAX_FRAMES];	/* the first store */
	struct wpage *prev, *next;	/* in its list (next: the free list) */
};

/*
 * Where a page record is: ACTIVE pages were stored to or written back
 * since their thread's last fence, which settles them; RESTING pages hold
 * pending lines but are write-protected again, and a fence passes them by
 * until a store or a write-back makes them active again (so a program
 * that leaves many lines pending does not pay for them at every fence).
 */
enum page_list { LIST_NONE, LIST_ACTIVE, LIST_RESTING, LIST_COUNT };

/* What a program's mprotect() set on a page (PROT_SET | its prot). */
#define PROT_SET 0x40000000

/* A page of a watched mapping. */
struct wslot {
	struct wpage *page;	/* NULL when all durable */
	int prot;		/* 0: the range's; else PROT_SET | the program's */
};

/* A watched mapping. */
struct wrange {
	uintptr_t start, end;	/* page aligned */
	int prot;		/* what the program mapped it with */
	off_t off;		/* file offset of start */
	char *path;		/* NULL: anonymous */
	struct wslot *slots;	/* per page */
	size_t table_bytes;	/* of slots, as mapped (a cut keeps them) */
};

/* A persistence point that left lines pending. */
struct point {
	const char *name;	/* the API function: pmem_drain, ... */
	int nframes;
	void *frames[MAX_FRAMES];
};

/* The kinds of performance notes (perf_report() names them). */
enum perf_kind {
	PERF_UNCHANGED, PERF_REPEATED, PERF_TX_ADD_TWICE, PERF_TX_FLUSH_REPEAT
};

struct perf {
	int kind;		/* enum perf_kind */
	const void *site;	/* the first frame outside the library */
	const void *entry;	/* its call into libpmemobj, or NULL */
	bool own;		/* libpmemobj's own doing (obj_own_call()) */
	int nframes;
	void *frames[MAX_FRAMES];
	uint64_t count;
};

static struct wrange *ranges[MAX_RANGES];
static unsigned nranges;
static struct wpage *lists[LIST_COUNT];	/* pages not all durable */
static struct wpage *free_pages;
static struct point *points;		/* [0] unused: "no point" */
static uint32_t npoints, points_cap;
static struct perf perf[MAX_PERF];
static unsigned nperf;
static uint64_t perf_dropped;
static struct { uintptr_t start, end; } not_pmem[MAX_NOT_PMEM];
static unsigned nnot_pmem, not_pmem_next;

static int report_fd = -1;
static bool eager;
/* NTMEM_PERSIST_DOMAIN=cpu_cache: a fence alone makes stores durable. */
static bool cpu_cache;
static int lock_word;
static uint32_t next_thread = 1;

static __thread uint32_t self __attribute__((tls_model("initial-exec")));
/* Inside the checker: a fault here is a real one, events are ours. */
static __thread int inside __attribute__((tls_model("initial-exec")));
/* Fences of this thread: a run of noted write-backs ends at one. */
static __thread uint64_t my_fences __attribute__((tls_model("initial-exec")));
/* Calls into libpmemobj this thread is in (the shim's wrappers), and
 * calls of its persistence functions (pmemobj_persist(), ...). */
static __thread unsigned obj_depth __attribute__((tls_model("initial-exec")));
static __thread unsigned obj_asked __attribute__((tls_model("initial-exec")));
/* The preload shim registered: it tells of the calls above. */
static bool shim_present;

static int (*real_sigaction)(int, const struct sigaction *, struct sigaction *);
static int (*real_mprotect)(void *, size_t, int);
static int (*real_munmap)(void *, size_t);
static void *(*real_mremap)(void *, size_t, size_t, int, ...);

static void lock(void)
{
	while (__atomic_exchange_n(&lock_word, 1, __ATOMIC_ACQUIRE))
		while (__atomic_load_n(&lock_word, __ATOMIC_RELAXED))
			sched_yield();	/* the holder may need this core */
}

static void unlock(void)
{
	__atomic_store_n(&lock_word, 0, __ATOMIC_RELEASE);
}

static uint32_t thread_number(void)
{
	if (!self)
		self = __atomic_fetch_add(&next_thread, 1, __ATOMIC_RELAXED);
	return self;
}

static uintptr_t page_down(uintptr_t a)
{
	return a & ~(uintptr_t)(PAGE - 1);
}

static uintptr_t page_up(uintptr_t a)
{
	return (a + PAGE - 1) & ~(uintptr_t)(PAGE - 1);
}

static void note(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static void note(const char *fmt, ...)
{
	struct wrec w;
	char msg[512];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	wrec_begin(&w, "note");
	wrec_str(&w, "message", msg);
	wrec_num(&w, "pid", (uint64_t)getpid());
	wrec_emit(&w, report_fd);
}

/*
 * Nothing of this process is watched, and why: a note of kind "unchecked"
 * (its message ends "nothing is watched"), so that `ntmem check` does not
 * take the silence that follows for a clean run.
 */
static void unchecked(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static void unchecked(const char *fmt, ...)
{
	struct wrec w;
	char why[400], msg[512];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(why, sizeof(why), fmt, ap);
	va_end(ap);
	snprintf(msg, sizeof(msg), "%s: nothing is watched", why);
	wrec_begin(&w, "note");
	wrec_str(&w, "kind", "unchecked");
	wrec_str(&w, "message", msg);
	wrec_num(&w, "pid", (uint64_t)getpid());
	wrec_emit(&w, report_fd);
}

/* --- ranges and pages ---------------------------------------------------- */

static struct wrange *range_of(uintptr_t a)
{
	for (unsigned i = 0; i < nranges; i++)
		if (a >= ranges[i]->start && a < ranges[i]->end)
			return ranges[i];
	return NULL;
}

static struct wslot *slot_at(const struct wrange *r, uintptr_t a)
{
	return &r->slots[(a - r->start) / PAGE];
}

static struct wpage **slot_of(const struct wrange *r, uintptr_t a)
{
	return &slot_at(r, a)->page;
}

/* The protection the program wants page @a of @r to have. */
static int prog_prot(const struct wrange *r, uintptr_t a)
{
	int p = slot_at(r, a)->prot;

	return p ? p & ~PROT_SET : r->prot;
}

/*
 * What a page gets while it is watched: the program's protection, less
 * PROT_WRITE unless its record says its stores go unseen (so that the
 * first store faults). A page the program cannot write stays as it asked.
 */
static int watched_prot(int prog, bool writable)
{
	return writable ? prog : prog & ~PROT_WRITE;
}

static bool prot_readable(int prot)
{
	return prot & (PROT_READ | PROT_WRITE);
}

/* A page record from the free list, or a new chunk: no malloc() (the
 * fault handler calls this), mmap() is async-signal-safe. Lock held. */
static struct wpage *page_alloc(void)
{
	struct wpage *wp = free_pages;

	if (!wp) {
		struct wpage *chunk = mmap(NULL, sizeof(*chunk) * PAGES_PER_CHUNK,
					   PROT_READ | PROT_WRITE,
					   MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

		if (chunk == MAP_FAILED)
			return NULL;
		for (unsigned i = 0; i < PAGES_PER_CHUNK; i++) {
			chunk[i].next = free_pages;
			free_pages = &chunk[i];
		}
		wp = free_pages;
	}
	free_pages = wp->next;
	return wp;
}

static void page_free(struct wpage *wp)
{
	wp->next = free_pages;
	free_pages = wp;
}

static void list_del(struct wpage *wp)
{
	if (wp->prev)
		wp->prev->next = wp->next;
	else
		lists[wp->list] = wp->next;
	if (wp->next)
		wp->next->prev = wp->prev;
	wp->list = LIST_NONE;
}

static void list_move(struct wpage *wp, enum page_list to)
{
	if (wp->list == to)
		return;
	if (wp->list != LIST_NONE)
		list_del(wp);
	wp->prev = NULL;
	wp->next = lists[to];
	if (wp->next)
		wp->next->prev = wp;
	lists[to] = wp;
	wp->list = (uint8_t)to;
}

static bool page_is_meta(struct wrange *r, uintptr_t a);

/*
 * Page @a of @r, write-protected, is being stored to: keep its image (a
 * resting page has one already), make it writable, make it active. Lock
 * held. 0, or -errno (then nothing changed).
 */
static int page_dirty(struct wrange *r, uintptr_t a, void *const *frames,
		      int nframes)
{
	struct wpage *wp = *slot_of(r, a);
	bool fresh = !wp;

	if (fresh) {
		wp = page_alloc();
		if (!wp)
			return -ENOMEM;
		memcpy(wp->image, (const void *)a, PAGE);
		wp->wb = 0;
		wp->pending = 0;
		wp->deferred = 0;
		wp->addr = a;
		wp->range = r;
		wp->list = LIST_NONE;
		wp->meta = page_is_meta(r, a);
		wp->warm = false;
		wp->nframes = nframes;
		memcpy(wp->frames, frames, sizeof(void *) * (size_t)nframes);
	}
	if (real_mprotect((void *)a, PAGE, prog_prot(r, a))) {
		int err = -errno;

		if (fresh)
			page_free(wp);
		return err;
	}
	wp->writable = true;
	wp->thread = thread_number();
	*slot_of(r, a) = wp;
	list_move(wp, LIST_ACTIVE);
	return 0;
}

/* Write-protect a page again: its next store faults. */
static void page_protect(struct wpage *wp)
{
	if (wp->writable)
		real_mprotect((void *)wp->addr, PAGE,
			      watched_prot(prog_prot(wp->range, wp->addr), false));
	wp->writable = false;
	wp->warm = false;
}

/*
 * The contents of @wp now. A page the program made unreadable
 * (PROT_NONE) is read through /proc/self/mem, which does not change what
 * any thread of the program sees; if even that fails, its image stands in
 * (nothing is judged of it). Lock held: one buffer serves.
 */
static const uint8_t *page_now(const struct wpage *wp)
{
	static uint8_t copy[PAGE];
	int fd;
	ssize_t got = -1;

	if (prot_readable(prog_prot(wp->range, wp->addr)))
		return (const uint8_t *)wp->addr;
	fd = open("/proc/self/mem", O_RDONLY | O_CLOEXEC);
	if (fd >= 0) {
		got = pread(fd, copy, PAGE, (off_t)wp->addr);
		close(fd);
	}
	return got == PAGE ? copy : wp->image;
}

/* Forget a page that is all durable (or judged): protect it again. */
static void page_clean(struct wpage *wp)
{
	list_del(wp);
	*slot_of(wp->range, wp->addr) = NULL;
	page_protect(wp);
	page_free(wp);
}

/* --- points and judgements ----------------------------------------------- */

/* The backtrace of the calling thread, from its caller's caller on. */
static int capture(void **frames)
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

/*
 * Whether what the calling thread writes back and fences under the call
 * into libpmemobj @entry (the outermost libpmemobj frame of its backtrace;
 * NULL: none) is libpmemobj's own doing, not asked for by the program. The
 * shim tells when the program called one of libpmemobj's persistence
 * functions; without it the entry's name tells, where no tail call hid
 * it.
 */
static bool obj_own_call(const void *entry)
{
	if (!entry)
		return false;
	return shim_present ? !obj_asked : watch_obj_entry_own(entry);
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

		lp->n = capture(lp->frames);
		lp->id = point_new(entry_name(lp->frames, lp->n, lp->dflt),
				   lp->frames, lp->n);
		while (i < lp->n && watch_frame_ours(lp->frames[i]))
			i++;
		entry = watch_obj_entry(lp->frames + i, lp->n - i);
		lp->pmemobj = obj_own_call(entry);
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

struct bad_list {
	struct bad *v;
	size_t n, cap;
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
			real_munmap(bl->v, sizeof(*v) * bl->cap);
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
		   const char *when, const struct point *end)
{
	const struct wrange *r = first->wp->range;
	const struct point *pt = first->point ? &points[first->point] : end;
	struct wrec w;

	wrec_begin(&w, "bug");
	wrec_str(&w, "kind", bug_names[first->kind]);
	wrec_str(&w, "when", when);
	wrec_str(&w, "file", r->path);
	wrec_num(&w, "offset", (uint64_t)(first->lo - r->start) + (uint64_t)r->off);
	wrec_num(&w, "length", last->hi - first->lo);
	wrec_addr(&w, "address", first->lo);
	wrec_str(&w, "point", pt ? pt->name : when);
	wrec_frames(&w, "backtrace", pt ? pt->frames : NULL, pt ? pt->nframes : 0);
	wrec_frames(&w, "first_store", first->wp->frames, first->wp->nframes);
	wrec_num(&w, "pid", (uint64_t)getpid());
	wrec_emit(&w, report_fd);
}

/* Report @bl sorted, adjacent lines of one kind and point as one run. */
static void report_all(struct bad_list *bl, const char *when,
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
		real_munmap(bl->v, sizeof(*bl->v) * bl->cap);
	bl->v = NULL;
	bl->n = bl->cap = 0;
}

/*
 * Reads a mapping that starts at its file's first byte, for
 * watch_pmemobj.c: @ctx is the range, @off a file offset. Only pages the
 * program can read. Lock held.
 */
static bool range_read(void *ctx, uint64_t off, void *buf, size_t n)
{
	const struct wrange *r = ctx;
	uintptr_t a = r->start + (uintptr_t)off;

	if (off >= r->end - r->start || n > r->end - a)
		return false;
	for (uintptr_t x = page_down(a); x < a + n; x += PAGE)
		if (!prot_readable(prog_prot(r, x)))
			return false;
	memcpy(buf, (const void *)a, n);
	return true;
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
	return watch_obj_unflushed(range_read, r, wp->addr - r->start + l * LINE,
				   wp->addr + l * LINE, now + l * LINE, wp->image + l * LINE,
				   wp->wbdata + l * LINE, when);
}

/*
 * Page @a of @r holds only libpmemobj's metadata: its lanes (the undo and
 * redo logs every transaction writes and persists several times), the
 * pool's header and descriptor, heap, zone and chunk headers. Lock held.
 */
static bool page_is_meta(struct wrange *r, uintptr_t a)
{
	return r->off == 0 && r->path &&
	       watch_obj_metadata(range_read, r, a - r->start, PAGE);
}

/* Whether line @l of a page whose contents are @now is as in @copy. */
static bool line_is(const uint8_t *now, unsigned l, const uint8_t *copy)
{
	return !memcmp(now + l * LINE, copy + l * LINE, LINE);
}

/*
 * A fence of thread @me. A line written back by @me and unchanged since
 * becomes durable (a write-back is ordered by the fence of the thread that
 * issued it); a line @me wrote back and then changed keeps what was written
 * back as durable, the change is pending. A changed line that no one wrote
 * back is pending if @me made the page writable (which thread stored to the
 * line is not known: the page's is taken). Lines other threads wrote back
 * wait for those threads' fences. True when every line matches its image
 * again. Lock held.
 */
static bool page_settle(struct wpage *wp, uint32_t me, struct lazy_point *lp,
			struct bad_list *eagerly, bool *unchanged)
{
	const uint8_t *now = page_now(wp);
	bool clean = true;
	/* A warm page's stores were not seen: any thread may have made
	 * them, and any thread's fence settles them. */
	bool mine = wp->thread == me || wp->warm;

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

		if (line_is(now, l, wp->image) ||
		    ((own = pmemobj_own(wp, now, l, WATCH_OBJ_POINT)) ==
		     WATCH_OBJ_TAKEN && line_is(now, l, wp->image))) {
			wp->wb &= ~bit;
			wp->pending &= ~bit;
			continue;
		}
		if (wp->wb & bit) {
			if (wp->wb_thread[l] != me) {
				clean = false;	/* that thread's fence decides */
				continue;
			}
			wp->wb &= ~bit;
			if (line_is(now, l, wp->wbdata)) {
				memcpy(wp->image + l * LINE,
				       now + l * LINE, LINE);
				wp->pending &= ~bit;
				continue;
			}
			/* What was written back is durable; the change is not. */
			memcpy(wp->image + l * LINE, wp->wbdata + l * LINE, LINE);
			kind = BUG_STORED_AFTER_WB;
		} else if (mine && cpu_cache) {
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
		 * judges them. Nor one of a warm page: the thread that
		 * stored to it may not have fenced yet.
		 */
		if (own == WATCH_OBJ_LATER || lp->pmemobj || wp->warm)
			wp->deferred |= bit;
		else
			wp->deferred &= ~bit;
		if (eager && !(wp->deferred & bit))
			bad_add(eagerly, wp, now, l, kind, wp->point[l]);
	}
	return clean;
}

/* At unmap or exit: every line of @wp that is not durable. Lock held. */
static void page_judge(struct wpage *wp, struct bad_list *bl)
{
	const uint8_t *now = page_now(wp);

	for (unsigned l = 0; l < LINES; l++) {
		uint64_t bit = 1ull << l;

		if (line_is(now, l, wp->image))
			continue;
		if (pmemobj_own(wp, now, l, WATCH_OBJ_END) == WATCH_OBJ_TAKEN &&
		    line_is(now, l, wp->image))
			continue;
		if (eager && (wp->pending & bit) && !(wp->deferred & bit))
			continue;	/* reported at its point */
		if (wp->wb & bit)
			bad_add(bl, wp, now, l, line_is(now, l, wp->wbdata) ?
				BUG_NOT_FENCED : BUG_STORED_AFTER_WB, 0);
		else if (wp->pending & bit)
			bad_add(bl, wp, now, l, (enum bug_kind)wp->reason[l],
				wp->point[l]);
		else
			bad_add(bl, wp, now, l, BUG_NEVER_WRITTEN_BACK, 0);
	}
}

/*
 * A page of libpmemobj's metadata that is all durable stays writable
 * ("warm") while it keeps changing: libpmemobj stores to a lane and
 * persists it several times in every transaction, and protecting it at
 * each of those fences costs two mprotect() calls and a fault per fence.
 * Its stores then go unseen, which the judgement does not need (it
 * compares contents at every fence); what is lost is the frames of each
 * store, and these would name libpmemobj: the program stores nothing
 * there. It is protected again after WARM_FENCES fences that found it
 * unchanged, so that a pool's pages libpmemobj is done with (those
 * pmemobj_create() wrote) do not cost every later fence a comparison.
 * Lock held.
 */
#define WARM_FENCES 8

static bool keep_warm(struct wpage *wp, bool unchanged)
{
	if (!wp->meta || !wp->writable)
		return false;
	if (!wp->warm) {
		wp->warm = true;
		wp->idle = 0;
		return true;
	}
	wp->idle = unchanged ? (uint8_t)(wp->idle + 1) : 0;
	return wp->idle < WARM_FENCES;
}

static void fence(void)
{
	uint32_t me = thread_number();
	struct lazy_point lp = { .dflt = "fence" };
	struct bad_list now = { 0 };
	struct wpage *wp, *next;

	my_fences++;
	lock();
	for (wp = lists[LIST_ACTIVE]; wp; wp = next) {
		bool unchanged;

		next = wp->next;
		if (page_settle(wp, me, &lp, &now, &unchanged)) {
			if (!keep_warm(wp, unchanged))
				page_clean(wp);
		} else if (wp->thread == me && !wp->wb) {
			/*
			 * Only pending lines left, and this thread made it
			 * writable: protect it, so the next store is seen,
			 * and pass it by until then. Write-backs of other
			 * threads keep it active for their fences.
			 */
			page_protect(wp);
			list_move(wp, LIST_RESTING);
		}
	}
	if (now.n)
		report_all(&now, "point", NULL);
	unlock();
}

/* --- write-backs and performance notes ------------------------------------ */

/*
 * The calling thread's last noted write-back: the write-backs of one call
 * (a pmem_persist() of a range flushes it line by line) come in a run of
 * consecutive lines with no fence between, and are counted at the site
 * the run's first one found, without a backtrace each: pmemobj_create()
 * writes back megabytes of unchanged lanes.
 */
static __thread struct perf_run {
	uintptr_t next;		/* where the run's next line starts */
	uint64_t fences;	/* my_fences when it started */
	unsigned slot;		/* in perf[]; nperf or more: none */
	int kind;
} perf_run __attribute__((tls_model("initial-exec")));

/* A performance event of @kind at a write-back of [lo, hi). */
static void perf_count(int kind, uintptr_t lo, uintptr_t hi)
{
	void *frames[MAX_FRAMES];
	int n;
	const void *site = NULL, *entry = NULL;
	struct perf_run *run = &perf_run;
	unsigned i;

	lock();
	if (run->next == lo && lo && run->kind == kind &&
	    run->fences == my_fences && run->slot < nperf &&
	    perf[run->slot].kind == kind) {
		perf[run->slot].count++;
		run->next = hi;
		unlock();
		return;
	}
	unlock();
	n = capture(frames);
	for (int f = 0; f < n && !site; f++)
		if (!watch_frame_ours(frames[f])) {
			site = frames[f];
			entry = watch_obj_entry(frames + f, n - f);
		}
	lock();
	for (i = 0; i < nperf; i++)
		if (perf[i].kind == kind && perf[i].site == site &&
		    perf[i].entry == entry)
			break;
	if (i < nperf) {
		perf[i].count++;
	} else if (nperf < MAX_PERF) {
		perf[nperf] = (struct perf){ .kind = kind, .site = site,
					     .entry = entry,
					     .own = obj_own_call(entry),
					     .nframes = n, .count = 1 };
		memcpy(perf[nperf].frames, frames, sizeof(void *) * (size_t)n);
		nperf++;
	} else {
		perf_dropped++;
	}
	*run = (struct perf_run){ .next = hi, .fences = my_fences, .slot = i,
				  .kind = kind };
	unlock();
}

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

static void watch_range(uintptr_t start, uintptr_t end, const char *path,
			off_t off, int prot);

/*
 * A pmem_* call touched memory no watched mapping holds: if it is a shared
 * mapping of a file, watch it from now on (stores before this are not
 * seen); else remember it is not pmem.
 */
static void discover(uintptr_t a)
{
	FILE *maps;
	char line[4096 + 128];
	bool known;

	lock();
	known = not_pmem_known(a) || range_of(a);
	unlock();
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
			lock();
			not_pmem_add(lo, hi);
			unlock();
		}
		break;
	}
	fclose(maps);
}

static int tx_perf_kind(uintptr_t lo, uintptr_t hi, int kind);

/* A write-back (one line) or an NT store (any bytes) hit [lo, hi). */
static void written_back(enum ntm_rec_kind kind, uintptr_t lo, uintptr_t hi)
{
	uint32_t me = thread_number();
	uintptr_t unknown = 0;
	int perf_kind = -1;

	lock();
	for (uintptr_t a = lo & ~(uintptr_t)(LINE - 1); a < hi; a += LINE) {
		struct wrange *r = range_of(a);
		const uint8_t *now;
		struct wpage *wp;
		unsigned l;

		if (!r) {
			unknown = a;
			continue;
		}
		wp = *slot_of(r, a);
		if (!wp) {
			/* Write-protected: not stored since it was durable. */
			if (kind == NTM_REC_WRITEBACK)
				perf_kind = 0;
			continue;
		}
		/* The next fence of the page's thread settles it. */
		list_move(wp, LIST_ACTIVE);
		l = (unsigned)((a - wp->addr) / LINE);
		now = page_now(wp);
		if (kind == NTM_REC_WRITEBACK) {
			if (line_is(now, l, wp->image))
				perf_kind = 0;
			else if ((wp->wb & (1ull << l)) && line_is(now, l, wp->wbdata))
				perf_kind = 1;
		}
		memcpy(wp->wbdata + l * LINE, now + l * LINE, LINE);
		wp->wb |= 1ull << l;
		wp->wb_thread[l] = me;
	}
	perf_kind = tx_perf_kind(lo, hi, perf_kind);
	unlock();
	if (perf_kind >= 0)
		perf_count(perf_kind, lo & ~(uintptr_t)(LINE - 1),
			   (hi + LINE - 1) & ~(uintptr_t)(LINE - 1));
	if (unknown)
		discover(unknown);
}

void ntm_watch_event_slow(enum ntm_rec_kind kind, const void *p, size_t n,
			  const void *where)
{
	uintptr_t lo = (uintptr_t)p;

	if (inside)
		return;
	inside = 1;
	switch (kind) {
	case NTM_REC_FENCE:
		(void)where;
		fence();
		break;
	case NTM_REC_WRITEBACK:
		written_back(kind, lo, (lo | (LINE - 1)) + 1);
		break;
	case NTM_REC_NT:
		if (lo + n > lo)
			written_back(kind, lo, lo + n);
		break;
	case NTM_REC_STORE:
		break;	/* the page fault saw the first one */
	}
	inside = 0;
}

/* --- mappings ------------------------------------------------------------- */

/*
 * Take the page records of [a, e) out of the lists. With @bl, each is
 * judged into it and put on @gone, to be freed after the report (which
 * reads its frames); without, each is freed unjudged. Lock held.
 */
static void drop_records(uintptr_t a, uintptr_t e, struct bad_list *bl,
			 struct wpage **gone)
{
	for (int l = LIST_ACTIVE; l <= LIST_RESTING; l++) {
		struct wpage *wp, *next;

		for (wp = lists[l]; wp; wp = next) {
			next = wp->next;
			if (wp->addr < a || wp->addr >= e)
				continue;
			list_del(wp);
			*slot_of(wp->range, wp->addr) = NULL;
			if (!bl) {
				page_free(wp);
				continue;
			}
			page_judge(wp, bl);
			wp->next = *gone;
			*gone = wp;
		}
	}
}

static void free_list(struct wpage *wp)
{
	while (wp) {
		struct wpage *next = wp->next;

		page_free(wp);
		wp = next;
	}
}

static void range_destroy(struct wrange *r)
{
	real_munmap(r->slots, r->table_bytes);
	free(r->path);
	free(r);
}

/* A new range over [start, end), not yet protected; NULL: no memory. */
static struct wrange *range_new(uintptr_t start, uintptr_t end,
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
			real_munmap(r->slots, bytes);
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
static void restore_prot(const struct wrange *r, uintptr_t a, uintptr_t e)
{
	uintptr_t run;

	a = a > r->start ? a : r->start;
	e = e < r->end ? e : r->end;
	for (run = a; run < e;) {
		int prot = prog_prot(r, run);
		uintptr_t x = run + PAGE;

		while (x < e && prog_prot(r, x) == prot)
			x += PAGE;
		real_mprotect((void *)run, x - run, prot);
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
	wrec_begin(&w, "note");
	wrec_str(&w, "kind", "unwatched");
	wrec_str(&w, "message", msg);
	wrec_str(&w, "file", path);
	wrec_num(&w, "offset", off);
	wrec_num(&w, "length", len);
	wrec_num(&w, "pid", (uint64_t)getpid());
	wrec_emit(&w, report_fd);
}

/* [a, e) of @r is no longer watched. */
static void note_unwatched(const struct wrange *r, uintptr_t a, uintptr_t e,
			   const char *why)
{
	unwatched_note(r->path, (uint64_t)(a - r->start) + (uint64_t)r->off,
		       e - a, "no longer watched", why);
}

/*
 * Take [a, e) out of the watched ranges: trim, split or drop the ranges it
 * covers. Its pages hold no records any more. Lock held.
 */
static void ranges_cut(uintptr_t a, uintptr_t e)
{
	for (unsigned i = 0; i < nranges;) {
		struct wrange *r = ranges[i];

		if (e <= r->start || a >= r->end) {
			i++;
			continue;
		}
		if (a > r->start && e < r->end) {
			/* A hole in the middle: the rest becomes a range. */
			struct wrange *tail = nranges < MAX_RANGES ?
				range_new(e, r->end, r->path,
					  r->off + (off_t)(e - r->start), r->prot) : NULL;

			if (tail) {
				memcpy(tail->slots, slot_at(r, e),
				       (r->end - e) / PAGE * sizeof(*r->slots));
				for (uintptr_t p = e; p < r->end; p += PAGE)
					if (*slot_of(tail, p))
						(*slot_of(tail, p))->range = tail;
				ranges[nranges++] = tail;
			} else {
				/* Not watched, but as the program wants it. */
				note_unwatched(r, e, r->end, nranges < MAX_RANGES ?
					       "no memory" : "too many mappings");
				drop_records(e, r->end, NULL, NULL);
				restore_prot(r, e, r->end);
			}
			r->end = a;	/* the table keeps its size: unmapped whole */
			i++;
			continue;
		}
		if (a <= r->start && e >= r->end) {
			ranges[i] = ranges[--nranges];
			range_destroy(r);
			continue;
		}
		if (a <= r->start) {
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
		i++;
	}
}

/*
 * Unmap [a, e) from the watched ranges: judge its dirty pages (reported
 * under @when), then cut it out. Lock held.
 */
static void unwatch(uintptr_t a, uintptr_t e, const char *when,
		    const struct point *end)
{
	struct bad_list bl = { 0 };
	struct wpage *gone = NULL;

	drop_records(a, e, &bl, &gone);
	if (bl.n)
		report_all(&bl, when, end);
	free_list(gone);
	ranges_cut(a, e);
}

/*
 * Stop watching [a, e), which stays mapped: its records are dropped
 * unjudged, its pages get the program's protections back, and a note
 * per range says so (@why). Lock held.
 */
static void forget(uintptr_t a, uintptr_t e, const char *why)
{
	drop_records(a, e, NULL, NULL);
	for (unsigned i = 0; i < nranges; i++) {
		const struct wrange *r = ranges[i];

		if (e <= r->start || a >= r->end)
			continue;
		note_unwatched(r, a > r->start ? a : r->start,
			       e < r->end ? e : r->end, why);
		restore_prot(r, a, e);
	}
	ranges_cut(a, e);
}

static void watch_range(uintptr_t start, uintptr_t end, const char *path,
			off_t off, int prot)
{
	struct wrange *r = range_new(start, end, path, off, prot);

	if (!r) {
		unwatched_note(path && *path ? path : NULL, (uint64_t)off,
			       end - start, "not watched", "no memory");
		return;
	}
	lock();
	/* Whatever was watched there before was unmapped behind our back. */
	unwatch(start, end, "unmap", NULL);
	if (nranges == MAX_RANGES ||
	    real_mprotect((void *)start, end - start, watched_prot(prot, false))) {
		const char *why = nranges == MAX_RANGES ? "too many mappings"
							: strerror(errno);

		not_pmem_add(start, end);	/* noted once, not per pmem_* call */
		unlock();
		unwatched_note(r->path, (uint64_t)off, end - start,
			       "not watched", why);
		range_destroy(r);
		return;
	}
	ranges[nranges++] = r;
	unlock();
}

void ntm_watch_map_slow(void *p, size_t n, const char *path, off_t off)
{
	uintptr_t a = (uintptr_t)p;

	if (!n)
		return;
	inside = 1;
	watch_range(page_down(a), page_up(a + n), path, off - (off_t)(a - page_down(a)),
		    PROT_READ | PROT_WRITE);
	inside = 0;
}

/* Whether [a, e) overlaps a watched range. Lock held. */
static bool overlaps(uintptr_t a, uintptr_t e)
{
	for (unsigned i = 0; i < nranges; i++)
		if (a < ranges[i]->end && ranges[i]->start < e)
			return true;
	return false;
}

void ntm_watch_unmap_slow(const void *p, size_t n, const char *why)
{
	uintptr_t a = page_down((uintptr_t)p), e = page_up((uintptr_t)p + n);
	struct point end = { .name = why };
	bool hit;

	if (e <= a || inside)
		return;
	inside = 1;
	lock();
	nnot_pmem = 0;	/* addresses may be mapped again */
	hit = overlaps(a, e);
	unlock();
	if (hit) {
		/* The backtrace only when it is needed: munmap() is common. */
		end.nframes = capture(end.frames);
		lock();
		unwatch(a, e, "unmap", &end);
		unlock();
	}
	inside = 0;
}

void ntm_watch_synced_slow(const void *p, size_t n)
{
	uintptr_t a = (uintptr_t)p, e = a + n;
	inside = 1;
	lock();
	for (int list = LIST_ACTIVE; list <= LIST_RESTING; list++)
	for (struct wpage *wp = lists[list], *next; wp; wp = next) {
		const uint8_t *now;

		next = wp->next;
		if (wp->addr + PAGE <= a || wp->addr >= e)
			continue;
		now = page_now(wp);
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
			page_clean(wp);
	}
	unlock();
	inside = 0;
}

/* --- libpmemobj transactions ---------------------------------------------- */

/*
 * A thread's libpmemobj transaction, from its outermost pmemobj_tx_begin()
 * to its outermost commit (or abort), as the preload shim tells of it:
 * the ranges it added and allocated, and each page of its pool it stored
 * to, with the page as it was when the program last had it from
 * libpmemobj ("before"). Every call into libpmemobj is a checkpoint: the
 * bytes that changed since are the program's stores (libpmemobj's own,
 * made inside the calls, are folded into "before" when a call returns,
 * of every thread's transaction); those that no added or allocated range
 * of an open transaction covers, in the pool's chunks (where objects
 * live), are a transaction bug ("tx-unadded"), whether or not a flush of
 * the commit happens to reach their line.
 *
 * At the outermost begin every writable page of the pool is protected
 * again, so that the transaction's first store to each page faults: the
 * fault names the storing thread (a store of another thread is not this
 * transaction's) and gives the store's frames. A page libpmemobj stored
 * to first is protected once more when its call returns, so that the
 * program's first store to it names the program. Pages of libpmemobj's
 * metadata (page_is_meta()) join no transaction: no byte of them can be
 * the program's. Lock held throughout.
 */
struct txpage {
	uint8_t before[PAGE];
	uintptr_t addr;
	bool lib;		/* its first store was libpmemobj's */
	bool reprotected;	/* ...and it was protected again for that */
	int nframes;
	void *frames[MAX_FRAMES];	/* the first store */
	struct txpage *next;
};

struct txspan {
	uintptr_t lo, hi;
	bool added;		/* else allocated */
	bool commit_flushes;	/* added without POBJ_XADD_NO_FLUSH */
};

/* Bytes found changed and not covered, reported at the thread's next
 * call into libpmemobj (another thread's call may find them). */
struct txfound {
	uintptr_t lo, hi;
	const struct txpage *page;
};

struct wtx {
	uintptr_t lo, hi;	/* its pool's mapping; 0, 0: not watched */
	unsigned levels;	/* nesting: begins less ends */
	bool done;		/* committed or aborted: stores are not its */
	int nframes;
	void *frames[MAX_FRAMES];	/* the outermost pmemobj_tx_begin() */
	struct txpage *pages;
	struct txspan *spans;	/* added and allocated */
	size_t nspans, spans_cap;
	struct txfound *found;
	size_t nfound, found_cap;
	struct wtx *next;	/* in txs */
};

static struct wtx *txs;		/* every thread's open transaction */
static struct txpage *free_txpages;
static __thread struct wtx *my_tx __attribute__((tls_model("initial-exec")));
/* Threads inside a call into libpmemobj: while another is, what changed
 * cannot be told from libpmemobj's stores, and is not judged. */
static unsigned obj_inside;

/* As page_alloc(): the fault handler calls it. Lock held. */
static struct txpage *txpage_alloc(void)
{
	struct txpage *tp = free_txpages;

	if (!tp) {
		struct txpage *chunk = mmap(NULL, sizeof(*chunk) * PAGES_PER_CHUNK,
					    PROT_READ | PROT_WRITE,
					    MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

		if (chunk == MAP_FAILED)
			return NULL;
		for (unsigned i = 0; i < PAGES_PER_CHUNK; i++) {
			chunk[i].next = free_txpages;
			free_txpages = &chunk[i];
		}
		tp = free_txpages;
	}
	free_txpages = tp->next;
	return tp;
}

/*
 * The calling thread faults on page @a (before its store lands): the
 * first time in its open transaction, the page joins it. Lock held.
 */
static void tx_fault(uintptr_t a, void *const *frames, int n)
{
	struct wtx *tx = my_tx;
	struct txpage *tp;

	if (!tx || tx->done || a < tx->lo || a >= tx->hi)
		return;
	for (tp = tx->pages; tp; tp = tp->next) {
		if (tp->addr != a)
			continue;
		if (tp->lib && !obj_depth) {
			/* The program's first store to it: its frames. */
			tp->lib = false;
			tp->nframes = n;
			memcpy(tp->frames, frames, sizeof(void *) * (size_t)n);
		}
		return;
	}
	tp = txpage_alloc();
	if (!tp)
		return;		/* no memory: its stores go unjudged */
	memcpy(tp->before, (const void *)a, PAGE);
	tp->addr = a;
	tp->lib = obj_depth > 0;
	tp->reprotected = false;
	tp->nframes = n;
	memcpy(tp->frames, frames, sizeof(void *) * (size_t)n);
	tp->next = tx->pages;
	tx->pages = tp;
}

/* Bits of the line at @line that some open transaction's span covers. */
static uint64_t tx_covered(uintptr_t line)
{
	uint64_t bits = 0;

	for (const struct wtx *t = txs; t; t = t->next)
		for (size_t i = 0; i < t->nspans; i++) {
			uintptr_t lo = t->spans[i].lo, hi = t->spans[i].hi;

			if (hi <= line || lo >= line + LINE)
				continue;
			lo = lo > line ? lo - line : 0;
			hi = hi < line + LINE ? hi - line : LINE;
			bits |= (hi - lo == 64 ? ~0ull : ((1ull << (hi - lo)) - 1))
				<< lo;
		}
	return bits;
}

static void tx_found(struct wtx *tx, uintptr_t lo, uintptr_t hi,
		     const struct txpage *tp)
{
	struct txfound *f;

	if (tx->nfound && tx->found[tx->nfound - 1].hi == lo &&
	    tx->found[tx->nfound - 1].page == tp) {
		tx->found[tx->nfound - 1].hi = hi;
		return;
	}
	if (tx->nfound == tx->found_cap) {
		size_t cap = tx->found_cap ? tx->found_cap * 2 : 16;

		f = realloc(tx->found, sizeof(*f) * cap);
		if (!f)
			return;	/* no memory: fewer reported */
		tx->found = f;
		tx->found_cap = cap;
	}
	tx->found[tx->nfound++] = (struct txfound){ lo, hi, tp };
}

/* The bytes of @tp's page changed since its "before" and not covered. */
static void tx_judge_page(struct wtx *tx, struct txpage *tp)
{
	struct wrange *r = range_of(tp->addr);
	const uint8_t *now = (const uint8_t *)tp->addr;
	uintptr_t run = 0;

	if (!r || !prot_readable(prog_prot(r, tp->addr)) ||
	    !memcmp(now, tp->before, PAGE))
		return;
	for (unsigned l = 0; l < LINES; l++) {
		uintptr_t line = tp->addr + l * LINE;
		uint64_t bad = 0, cov;

		if (line_is(now, l, tp->before)) {
			/* Most lines did not change: no byte loop. */
			if (run)
				tx_found(tx, run, line, tp);
			run = 0;
			continue;
		}
		for (unsigned b = 0; b < LINE; b++)
			if (now[l * LINE + b] != tp->before[l * LINE + b])
				bad |= 1ull << b;
		if (bad && (cov = tx_covered(line)) != 0)
			bad &= ~cov;
		if (bad && !watch_obj_in_chunks(range_read, r,
						line - r->start + (uint64_t)r->off))
			bad = 0;	/* libpmemobj's metadata */
		for (unsigned b = 0; b < LINE; b++) {
			uintptr_t x = line + b;

			if (bad & (1ull << b)) {
				if (!run)
					run = x;
				continue;
			}
			if (run)
				tx_found(tx, run, x, tp);
			run = 0;
		}
	}
	if (run)
		tx_found(tx, run, tp->addr + PAGE, tp);
	memcpy(tp->before, now, PAGE);
}

/* A checkpoint of every open transaction: what changed is its program's. */
static void tx_judge_all(void)
{
	for (struct wtx *t = txs; t; t = t->next)
		if (!t->done)
			for (struct txpage *tp = t->pages; tp; tp = tp->next)
				tx_judge_page(t, tp);
}

/* A call into libpmemobj returned: what it stored is libpmemobj's. */
static void tx_fold_all(void)
{
	for (struct wtx *t = txs; t; t = t->next)
		for (struct txpage *tp = t->pages; tp; tp = tp->next) {
			struct wrange *r = range_of(tp->addr);

			if (r && prot_readable(prog_prot(r, tp->addr)))
				memcpy(tp->before, (const void *)tp->addr, PAGE);
		}
	if (!my_tx)
		return;
	for (struct txpage *tp = my_tx->pages; tp; tp = tp->next) {
		struct wrange *r = range_of(tp->addr);
		struct wpage *wp = r ? *slot_of(r, tp->addr) : NULL;

		if (tp->lib && !tp->reprotected && wp && wp->writable) {
			page_protect(wp);
			tp->reprotected = true;
		}
	}
}

/*
 * Report what was found of the calling thread's transaction, at the call
 * @name (frames @frames): each once, and not again as a durability bug
 * (the bytes are taken as durable in their page's image: the fix of one
 * is the fix of the other). Lock held.
 */
static void tx_report(struct wtx *tx, const char *name, void *const *frames,
		      int n)
{
	for (size_t i = 0; i < tx->nfound; i++) {
		const struct txfound *f = &tx->found[i];
		struct wrange *r = range_of(f->lo);
		struct wpage *wp = r ? *slot_of(r, f->lo) : NULL;
		struct wrec w;

		if (!r)
			continue;
		if (wp) {
			size_t o = f->lo - wp->addr;

			memcpy(wp->image + o, (const void *)f->lo, f->hi - f->lo);
			memcpy(wp->wbdata + o, (const void *)f->lo, f->hi - f->lo);
		}
		wrec_begin(&w, "bug");
		wrec_str(&w, "kind", "tx-unadded");
		wrec_str(&w, "when", "transaction");
		wrec_str(&w, "file", r->path);
		wrec_num(&w, "offset", (uint64_t)(f->lo - r->start) + (uint64_t)r->off);
		wrec_num(&w, "length", f->hi - f->lo);
		wrec_addr(&w, "address", f->lo);
		wrec_str(&w, "point", name);
		wrec_frames(&w, "backtrace", frames, n);
		wrec_frames(&w, "first_store", f->page->frames, f->page->nframes);
		wrec_frames(&w, "tx_begin", tx->frames, tx->nframes);
		wrec_num(&w, "pid", (uint64_t)getpid());
		wrec_emit(&w, report_fd);
	}
	tx->nfound = 0;
}

static void tx_free(struct wtx *tx)
{
	for (struct wtx **pp = &txs; *pp; pp = &(*pp)->next)
		if (*pp == tx) {
			*pp = tx->next;
			break;
		}
	while (tx->pages) {
		struct txpage *tp = tx->pages;

		tx->pages = tp->next;
		tp->next = free_txpages;
		free_txpages = tp;
	}
	free(tx->spans);
	free(tx->found);
	free(tx);
}

/* [lo, hi) added (@what ADD or ADD_NO_FLUSH) or allocated; true when
 * added twice. */
static bool tx_span(struct wtx *tx, uintptr_t lo, uintptr_t hi,
		    enum ntm_watch_obj what)
{
	bool added = what != NTM_WATCH_OBJ_ALLOCATED;
	bool twice = false;

	if (hi <= lo)
		return false;
	for (size_t i = 0; added && i < tx->nspans; i++)
		if (tx->spans[i].added && tx->spans[i].lo < hi &&
		    lo < tx->spans[i].hi)
			twice = true;
	if (tx->nspans == tx->spans_cap) {
		size_t cap = tx->spans_cap ? tx->spans_cap * 2 : 16;
		struct txspan *s = realloc(tx->spans, sizeof(*s) * cap);

		if (!s)
			return twice;
		tx->spans = s;
		tx->spans_cap = cap;
	}
	tx->spans[tx->nspans++] = (struct txspan){
		lo, hi, added, what == NTM_WATCH_OBJ_ADD
	};
	return twice;
}

/*
 * The performance note that the calling thread's write-back (or
 * non-temporal store) of [lo, hi) earns, given what its lines said (@kind,
 * or -1): none for one made inside a call into libpmemobj's transactions
 * (libpmemobj's own write-backs are its policy, and telling so would take
 * a backtrace per write-back); tx-flush-repeat for the program's own of a
 * range its open transaction added, which the commit writes back again.
 * Lock held.
 */
static int tx_perf_kind(uintptr_t lo, uintptr_t hi, int kind)
{
	if (obj_depth)
		return -1;
	if (my_tx && !my_tx->done)
		for (size_t i = 0; i < my_tx->nspans; i++)
			if (my_tx->spans[i].commit_flushes &&
			    my_tx->spans[i].lo < hi && lo < my_tx->spans[i].hi)
				return PERF_TX_FLUSH_REPEAT;
	return kind;
}

/* The outermost pmemobj_tx_begin(@pop) returned. Lock held. */
static void tx_open(const void *pop, bool started, void *const *frames, int n)
{
	struct wtx *tx = calloc(1, sizeof(*tx));
	struct wrange *r = range_of((uintptr_t)pop);

	if (!tx)
		return;
	tx->levels = 1;
	tx->done = !started;
	tx->nframes = n;
	memcpy(tx->frames, frames, sizeof(void *) * (size_t)n);
	/* A pool is one mapping of its file from offset 0 (not a pool set
	 * of several parts: only its first part is judged). */
	if (r && r->path && r->off == 0 && (uintptr_t)pop == r->start) {
		tx->lo = r->start;
		tx->hi = r->end;
		for (struct wpage *wp = lists[LIST_ACTIVE]; wp; wp = wp->next)
			if (wp->addr >= tx->lo && wp->addr < tx->hi && !wp->meta)
				page_protect(wp);
	}
	tx->next = txs;
	txs = tx;
	my_tx = tx;
}

static void obj_enter(unsigned flags, const char *name)
{
	void *frames[MAX_FRAMES];
	int n;

	lock();
	if ((flags & NTM_WATCH_OBJ_FROM_PROGRAM) && obj_depth) {
		/* An abort's longjmp() skipped the returns of its calls. */
		obj_depth = 0;
		obj_inside--;
		tx_fold_all();
	}
	if (obj_depth++) {
		unlock();
		return;
	}
	if (obj_inside++ == 0)
		tx_judge_all();
	if (my_tx && (flags & NTM_WATCH_OBJ_NOT_WORK) &&
	    (my_tx->levels <= 1 || !strcmp(name, "pmemobj_tx_abort")))
		my_tx->done = true;
	if (!my_tx || !my_tx->nfound) {
		unlock();
		return;
	}
	unlock();
	/* The backtrace only when there is something to report. */
	n = capture(frames);
	lock();
	if (my_tx)
		tx_report(my_tx, name, frames, n);
	unlock();
}

static void pmemobj_tx_event(enum ntm_watch_obj what, const void *p, size_t n,
			     const char *name)
{
	uintptr_t a = (uintptr_t)p;
	void *frames[MAX_FRAMES];
	int nf;
	bool twice = false;

	if (inside || !NTM_WATCH_ON())
		return;
	inside = 1;
	switch (what) {
	case NTM_WATCH_OBJ_ENTER:
		obj_enter((unsigned)n, name);
		break;
	case NTM_WATCH_OBJ_LEAVE:
		lock();
		if (obj_depth && !--obj_depth) {
			obj_inside--;
			tx_fold_all();
		}
		unlock();
		break;
	case NTM_WATCH_OBJ_BEGUN:
		if (my_tx) {
			my_tx->levels++;
			break;
		}
		nf = capture(frames);
		lock();
		tx_open(p, n == 0, frames, nf);
		unlock();
		break;
	case NTM_WATCH_OBJ_ADD:
	case NTM_WATCH_OBJ_ADD_NO_FLUSH:
	case NTM_WATCH_OBJ_ALLOCATED:
		lock();
		if (my_tx && !my_tx->done && a && a + n > a)
			twice = tx_span(my_tx, a, a + n, what);
		unlock();
		if (twice)
			perf_count(PERF_TX_ADD_TWICE, 0, 0);
		break;
	case NTM_WATCH_OBJ_COMMIT:
		if (my_tx && my_tx->levels == 1)
			my_tx->done = true;
		break;
	case NTM_WATCH_OBJ_ASK:
		obj_asked++;
		break;
	case NTM_WATCH_OBJ_ASKED:
		if (obj_asked)
			obj_asked--;
		break;
	case NTM_WATCH_OBJ_ENDED:
		if (!my_tx)
			break;
		lock();
		/* TX_STAGE_NONE: the outermost ended (a failed begin too). */
		if (n == 0 || !--my_tx->levels) {
			tx_free(my_tx);
			my_tx = NULL;
		}
		unlock();
		break;
	}
	inside = 0;
}

/* --- the fault handler ---------------------------------------------------- */

static void *fault_pc(const void *ucv)
{
	const ucontext_t *uc = ucv;

#if defined(__x86_64__)
	return (void *)uc->uc_mcontext.gregs[REG_RIP];
#elif defined(__aarch64__)
	return (void *)uc->uc_mcontext.pc;
#else
	(void)uc;
	return NULL;
#endif
}

/* The frames of a fault: from the faulting instruction on. */
static int fault_frames(const void *ucv, void **frames)
{
	void *all[MAX_FRAMES + 8];
	void *pc = fault_pc(ucv);
	int n = backtrace(all, MAX_FRAMES + 8);

	for (int i = 0; i < n; i++) {
		if (all[i] != pc)
			continue;
		n -= i;
		if (n > MAX_FRAMES)
			n = MAX_FRAMES;
		memcpy(frames, all + i, sizeof(void *) * (size_t)n);
		return n;
	}
	frames[0] = pc;
	return pc ? 1 : 0;
}

/* A write fault at @addr: ours when it hit a protected watched page. */
static bool take_fault(uintptr_t addr, const void *ucv)
{
	void *frames[MAX_FRAMES];
	int n = fault_frames(ucv, frames);
	uintptr_t a = page_down(addr);
	struct wrange *r;
	int err;

	lock();
	r = range_of(a);
	/* A page the program made read-only faults for the program. */
	if (!r || !(prog_prot(r, a) & PROT_WRITE)) {
		unlock();
		return false;
	}
	if (*slot_of(r, a) && (*slot_of(r, a))->writable) {
		/*
		 * Another thread made it writable after this fault and before
		 * this handler got the lock (and it may have been protected and
		 * made writable again since): make sure it is, and retry.
		 */
		err = real_mprotect((void *)a, PAGE, prog_prot(r, a)) ? -errno : 0;
		unlock();
		return err == 0;
	}
	/* Only the chunks' bytes can be a transaction's (tx_judge_page()). */
	if (!page_is_meta(r, a))
		tx_fault(a, frames, n);
	err = page_dirty(r, a, frames, n);
	unlock();
	return err == 0;
}

static void judge_end(const char *point, const char *how, int status,
		      int sig);

/*
 * A SIGSEGV the program's action is for: judge what is known, as at exit,
 * before the default action ends the process as it would have without
 * the checker.
 */
static void segv_default(int sig)
{
	judge_end("SIGSEGV", "signal", 0, sig);
}

/* Past the preload shim, which would keep SIG_DFL instead of setting it. */
static int set_real_action(int sig, const struct sigaction *act,
			   struct sigaction *old)
{
	return real_sigaction(sig, act, old);
}

/* The program's SIGSEGV action (sigchain.h). */
static struct ntm_sigchain segv_chain = {
	.set_action = set_real_action,
	.before_default = segv_default,
};

static void on_segv(int sig, siginfo_t *si, void *uc)
{
	int saved = errno;

	if (si->si_code == SEGV_ACCERR && !inside) {
		inside = 1;
		bool ours = take_fault((uintptr_t)si->si_addr, uc);

		inside = 0;
		if (ours) {
			errno = saved;
			return;
		}
	}
	errno = saved;
	ntm_sigchain_deliver(&segv_chain, sig, si, uc);
}

/* --- signals that end the program ----------------------------------------- */

/*
 * The signals whose default action ends the process (SIGSEGV aside, which
 * has the handler above). While the program leaves one at SIG_DFL, the
 * checker's handler stands in for it: it judges what is known, puts
 * SIG_DFL back and sends the signal again, so the process still dies of
 * it (core dump and all). The program is told SIG_DFL, as it set.
 * SIGKILL and SIGSTOP cannot be caught.
 */
static const int fatal_list[] = {
	SIGHUP, SIGINT, SIGQUIT, SIGILL, SIGTRAP, SIGABRT, SIGBUS, SIGFPE,
	SIGUSR1, SIGUSR2, SIGPIPE, SIGALRM, SIGTERM, SIGXCPU, SIGXFSZ,
	SIGVTALRM, SIGPROF, SIGIO, SIGPWR, SIGSYS,
#ifdef SIGSTKFLT
	SIGSTKFLT,
#endif
};

static bool fatal_ours[NSIG];		/* the checker's handler stands in */
static struct sigaction fatal_view[NSIG];	/* the program's SIG_DFL action */
static int sig_lock_word;
static struct sigaction fatal_act;	/* the checker's, for all of them */

static bool fatal_signal(int sig)
{
	if (sig >= SIGRTMIN && sig <= SIGRTMAX)
		return true;
	for (size_t i = 0; i < sizeof(fatal_list) / sizeof(*fatal_list); i++)
		if (fatal_list[i] == sig)
			return true;
	return false;
}

/* "SIGTERM", "SIGRTMIN+2": for the report. */
static const char *signal_name(int sig, char *buf, size_t len)
{
	const char *abbrev = sig < SIGRTMIN ? sigabbrev_np(sig) : NULL;

	if (abbrev)
		snprintf(buf, len, "SIG%s", abbrev);
	else if (sig >= SIGRTMIN && sig <= SIGRTMAX)
		snprintf(buf, len, "SIGRTMIN+%d", sig - SIGRTMIN);
	else
		snprintf(buf, len, "signal %d", sig);
	return buf;
}

static void on_fatal(int sig, siginfo_t *si, void *uc)
{
	struct sigaction dfl = { .sa_handler = SIG_DFL };
	char name[32];

	(void)si, (void)uc;
	judge_end(signal_name(sig, name, sizeof(name)), "signal", 0, sig);
	/*
	 * The program's disposition from here: blocked while this handler
	 * runs, the signal sent again arrives when it returns, and kills.
	 */
	real_sigaction(sig, &dfl, NULL);
	raise(sig);
}

/*
 * sigaction() of the program for a signal of fatal_list: SIG_DFL installs
 * the checker's handler in its place, anything else is installed as it
 * is. All signals are blocked around it, so a handler that calls
 * sigaction() cannot meet the lock held.
 */
static int fatal_action(int sig, const struct sigaction *act,
			struct sigaction *old)
{
	sigset_t all, mask;
	int ret = 0, err = errno;

	sigfillset(&all);
	pthread_sigmask(SIG_BLOCK, &all, &mask);
	while (__atomic_exchange_n(&sig_lock_word, 1, __ATOMIC_ACQUIRE))
		sched_yield();
	if (old) {
		if (fatal_ours[sig])
			*old = fatal_view[sig];
		else
			ret = real_sigaction(sig, NULL, old);
	}
	if (!ret && act) {
		bool dfl = act->sa_handler == SIG_DFL;

		ret = real_sigaction(sig, dfl ? &fatal_act : act, NULL);
		if (!ret) {
			fatal_ours[sig] = dfl;
			if (dfl)
				fatal_view[sig] = *act;
		}
	}
	if (ret)
		err = errno;
	__atomic_store_n(&sig_lock_word, 0, __ATOMIC_RELEASE);
	pthread_sigmask(SIG_SETMASK, &mask, NULL);
	errno = err;
	return ret;
}

/* At start: the checker's handler for each fatal signal left at SIG_DFL
 * (one the program was started ignoring stays ignored). */
static void fatal_install(void)
{
	fatal_act.sa_sigaction = on_fatal;
	fatal_act.sa_flags = SA_SIGINFO | SA_RESTART;
	sigfillset(&fatal_act.sa_mask);
	for (int sig = 1; sig < NSIG; sig++) {
		struct sigaction cur;

		if (!fatal_signal(sig) || real_sigaction(sig, NULL, &cur) ||
		    cur.sa_handler != SIG_DFL)
			continue;
		if (!real_sigaction(sig, &fatal_act, NULL)) {
			fatal_view[sig] = cur;
			fatal_ours[sig] = true;
		}
	}
}

/* --- the preload shim's requests ------------------------------------------ */

/* The program's SIGSEGV action is kept, not installed (sigchain.h). */
static int segv_action(const struct sigaction *act, struct sigaction *old)
{
	if (old)
		ntm_sigchain_get(&segv_chain, old);
	if (act && ntm_sigchain_keep(&segv_chain, act)) {
		errno = ENOMEM;
		return -1;
	}
	return 0;
}

static bool keeps_signal(int sig)
{
	return sig == SIGSEGV || fatal_signal(sig);
}

static int signal_action(int sig, const struct sigaction *act,
			 struct sigaction *old)
{
	if (sig == SIGSEGV)
		return segv_action(act, old);
	if (fatal_signal(sig))
		return fatal_action(sig, act, old);
	return real_sigaction(sig, act, old);
}

static void will_store(void *p, size_t n)
{
	uintptr_t a = page_down((uintptr_t)p), e = page_up((uintptr_t)p + n);
	void *frames[MAX_FRAMES];
	bool hit;
	int nf;

	if (!n || e <= a || inside)
		return;
	inside = 1;
	lock();
	hit = overlaps(a, e);
	unlock();
	if (hit) {
		nf = capture(frames);
		lock();
		for (; a < e; a += PAGE) {
			struct wrange *r = range_of(a);

			/* A page the program cannot write: the kernel says so. */
			if (r && (prog_prot(r, a) & PROT_WRITE) &&
			    (!*slot_of(r, a) || !(*slot_of(r, a))->writable))
				page_dirty(r, a, frames, nf);
		}
		unlock();
	}
	inside = 0;
}

static void will_unmap(void *p, size_t n)
{
	ntm_watch_unmap_slow(p, n, "munmap");
}

/* --- the program's mprotect() ---------------------------------------------- */

/* Protection bits a page keeps (PROT_GROWS* apply to the call only). */
#define PROT_KEPT (~(PROT_GROWSDOWN | PROT_GROWSUP))

/* The first watched range that starts in (a, e), or e. Lock held. */
static uintptr_t next_watched(uintptr_t a, uintptr_t e)
{
	for (unsigned i = 0; i < nranges; i++)
		if (ranges[i]->start > a && ranges[i]->start < e)
			e = ranges[i]->start;
	return e;
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
		struct wrange *r = range_of(run);
		uintptr_t x;
		int eff = prot;

		if (!r) {
			x = next_watched(run, e);
		} else {
			uintptr_t stop = e < r->end ? e : r->end;
			const struct wpage *wp = *slot_of(r, run);

			eff = watched_prot(prot, wp && wp->writable);
			for (x = run + PAGE; x < stop; x += PAGE) {
				wp = *slot_of(r, x);
				if (watched_prot(prot, wp && wp->writable) != eff)
					break;
			}
		}
		if (real_mprotect((void *)run, x - run, eff))
			return -1;
		for (uintptr_t y = run; r && y < x; y += PAGE) {
			struct wslot *sl = slot_at(r, y);

			sl->prot = PROT_SET | (prot & PROT_KEPT);
			if (sl->page && !(prot & PROT_WRITE)) {
				sl->page->writable = false;
				sl->page->warm = false;
			}
		}
		run = x;
	}
	return 0;
}

static int protect(void *p, size_t n, int prot)
{
	uintptr_t a = (uintptr_t)p, e = page_up(a + n);
	int saved = errno, ret;

	if (inside || !NTM_WATCH_ON() || (a & (PAGE - 1)) || e <= a)
		return real_mprotect(p, n, prot);
	inside = 1;
	lock();
	if (!overlaps(a, e)) {
		unlock();
		inside = 0;
		return real_mprotect(p, n, prot);
	}
	ret = protect_runs(a, e, prot);
	if (!ret)
		errno = saved;
	saved = errno;
	unlock();
	inside = 0;
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

	drop_records(a, e, &bl, &gone);
	if (bl.n)
		report_all(&bl, "unmap", end);
	free_list(gone);
	for (unsigned i = 0; i < nranges; i++)
		restore_prot(ranges[i], a, e);
	ranges_cut(a, e);
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
	int p = -1;

	for (uintptr_t x = a; x < e;) {
		struct wrange *r = range_of(x);
		uintptr_t stop;

		if (!r || n == MAX_PARTS)
			return FOLLOW_NOT;
		stop = e < r->end ? e : r->end;
		for (; x < stop; x += PAGE) {
			if (p >= 0 && prog_prot(r, x) != p)
				return FOLLOW_MIXED;
			p = prog_prot(r, x);
		}
		parts[n++] = r;
	}
	*prot = p;
	*nparts = n;
	return n > 0 && nranges + n + 1 <= MAX_RANGES ? FOLLOW : FOLLOW_NOT;
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
		memcpy(nr->slots, slot_at(r, s), npages * sizeof(*nr->slots));
		memset(slot_at(r, s), 0, npages * sizeof(*nr->slots));
		for (size_t k = 0; k < npages; k++) {
			struct wpage *wp = nr->slots[k].page;

			if (wp) {
				wp->range = nr;
				wp->addr = nr->start + k * PAGE;
			}
		}
		if (prot != nr->prot)
			for (uintptr_t x = nr->start + (t - s); x < nr->end; x += PAGE)
				slot_at(nr, x)->prot = PROT_SET | prot;
	}
	ranges_cut(a, a + keep);
	for (unsigned i = 0; i < nparts; i++)
		ranges[nranges++] = fresh[i];
}

static void *remap(void *old, size_t olen, size_t nlen, int flags, void *want)
{
	uintptr_t a = (uintptr_t)old, ae = page_up(a + olen), nl = page_up(nlen);
	uintptr_t w = (uintptr_t)want, keep, grow;
	struct point end = { .name = "mremap" };
	struct wrange *parts[MAX_PARTS], *fresh[MAX_PARTS];
	unsigned nparts = 0;
	enum follow_how how;
	int saved = errno, prot = 0, err;
	bool fixed = flags & MREMAP_FIXED, moves;
	void *got;

	if (inside || !NTM_WATCH_ON() || (a & (PAGE - 1)) || ae < a || nl < nlen)
		return real_mremap(old, olen, nlen, flags, want);
	inside = 1;
	lock();
	if (!overlaps(a, ae > a ? ae : a + PAGE) &&
	    !(fixed && !(w & (PAGE - 1)) && overlaps(w, w + nl))) {
		unlock();
		inside = 0;
		return real_mremap(old, olen, nlen, flags, want);
	}
	/* The backtrace only when it is needed (it takes no lock of ours). */
	end.nframes = capture(end.frames);
	/* A fixed target is unmapped first (the kernel refuses an overlap). */
	if (fixed && !(w & (PAGE - 1)) && (w + nl <= a || w >= ae))
		unwatch_for_remap(w, w + nl, &end);
	if (!olen) {
		/* A second mapping of the same pages: as the program asked,
		 * not with the checker's protection, and not watched. */
		struct wrange *r = range_of(a);
		int want_prot = r ? prog_prot(r, a) : 0;

		got = real_mremap(old, olen, nlen, flags, want);
		err = errno;
		if (got != MAP_FAILED && r) {
			real_mprotect(got, nl, want_prot);
			note_unwatched(r, a, a + nl, "the second mapping of it "
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
		got = real_mremap(old, olen, nlen, flags, want);
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
			forget(a, ae, "mremap() of a mapping only partly watched");
		got = real_mremap(old, olen, nlen, flags, want);
		err = errno;
		goto out;
	}
	if (flags & MREMAP_DONTUNMAP) {
		forget(a, ae, "mremap(MREMAP_DONTUNMAP) leaves two mappings");
		got = real_mremap(old, olen, nlen, flags, want);
		err = errno;
		goto out;
	}
	/* Moved or grown: one protection over all of it, so that the kernel
	 * sees one mapping, as the program made it. */
	for (int l = LIST_ACTIVE; l <= LIST_RESTING; l++)
		for (struct wpage *wp = lists[l]; wp; wp = wp->next)
			if (wp->addr >= a && wp->addr < ae)
				page_protect(wp);
	keep = nl < ae - a ? nl : ae - a;
	grow = nl > ae - a ? nl - (ae - a) : 0;
	for (unsigned i = 0; i < nparts; i++) {
		struct wrange *r = parts[i];
		uintptr_t s = a > r->start ? a : r->start;
		uintptr_t t = a + keep < r->end ? a + keep : r->end;

		fresh[i] = t > s ? range_new(0, (t - s) + (t == a + keep ? grow : 0),
					     r->path, r->off + (off_t)(s - r->start),
					     r->prot) : NULL;
		if (!fresh[i]) {
			while (i-- > 0)
				range_destroy(fresh[i]);
			forget(a, ae, "no memory to follow mremap()");
			got = real_mremap(old, olen, nlen, flags, want);
			err = errno;
			goto out;
		}
	}
	if (nl < ae - a)
		unwatch_for_remap(a + nl, ae, &end);
	got = real_mremap(old, olen, nlen, flags, want);
	err = errno;
	if (got == MAP_FAILED) {
		for (unsigned i = 0; i < nparts; i++)
			range_destroy(fresh[i]);
		goto out;
	}
	follow(a, keep, (uintptr_t)got, grow, prot, parts, fresh, nparts);
out:
	unlock();
	inside = 0;
	errno = got == MAP_FAILED ? err : saved;
	return got;
}

/* --- start and end -------------------------------------------------------- */

static void perf_report(void)
{
	static const char *const kinds[] = {
		[PERF_UNCHANGED] = "unchanged-write-back",
		[PERF_REPEATED] = "repeated-write-back",
		[PERF_TX_ADD_TWICE] = "tx-add-twice",
		[PERF_TX_FLUSH_REPEAT] = "tx-flush-repeat",
	};

	for (unsigned i = 0; i < nperf; i++) {
		struct wrec w;

		/* libpmemobj's own write-backs are its policy, not the
		 * program's to change (ntmem-check(1), LIBPMEMOBJ). */
		if (perf[i].own)
			continue;
		wrec_begin(&w, "perf");
		wrec_str(&w, "kind", kinds[perf[i].kind]);
		wrec_num(&w, "count", perf[i].count);
		wrec_frames(&w, "site", perf[i].frames, perf[i].nframes);
		wrec_num(&w, "pid", (uint64_t)getpid());
		wrec_emit(&w, report_fd);
	}
	if (perf_dropped)
		note("%llu performance events at more than %u call sites were "
		     "not kept apart", (unsigned long long)perf_dropped, MAX_PERF);
}

/* Set by the first ending of the process to be judged. */
static int ended;
/*
 * The process whose memory this is: a child of vfork() shares it, and its
 * _exit() must not judge (nor end the checking of) its parent's pages.
 * A child of fork() takes it over (fork_child()).
 */
static pid_t owner;

/*
 * How the process ends, judged or not: {"type":"end","how":"exit"|"_exit"|
 * "signal", "status" (of _exit), "signal" (its name), "judged": 1 or 0}.
 */
static void end_record(const char *how, int status, int sig, bool judged)
{
	struct wrec w;
	char name[32];

	wrec_begin(&w, "end");
	wrec_str(&w, "how", how);
	if (!strcmp(how, "_exit"))
		wrec_num(&w, "status", (uint64_t)(status & 0xff));
	if (sig)
		wrec_str(&w, "signal", signal_name(sig, name, sizeof(name)));
	wrec_num(&w, "judged", judged);
	wrec_num(&w, "pid", (uint64_t)getpid());
	wrec_emit(&w, report_fd);
}

/*
 * The process ends (exit, _exit, a fatal signal: @point names it): every
 * line still not durable is reported, once. Async-signal-safe enough for
 * a signal handler: no malloc(), no stdio streams, the lock taken only
 * when this thread was not inside the checker (a signal that interrupts
 * the checker is recorded unjudged).
 */
static void judge_end(const char *point, const char *how, int status, int sig)
{
	struct point end = { .name = point };
	struct bad_list bl = { 0 };
	struct wpage *gone = NULL;
	bool judged = false;

	if (!NTM_WATCH_ON() || getpid() != owner ||
	    __atomic_exchange_n(&ended, 1, __ATOMIC_ACQ_REL))
		return;
	if (!inside) {
		inside = 1;
		lock();
		drop_records(0, UINTPTR_MAX, &bl, &gone);
		if (bl.n)
			report_all(&bl, "exit", &end);
		free_list(gone);
		perf_report();
		/* Nothing after this is judged: stores in later destructors
		 * are not seen (and pages get the program's protections, so
		 * they do not fault). */
		__atomic_store_n(&ntm_watch_on, 0, __ATOMIC_RELAXED);
		for (unsigned i = 0; i < nranges; i++)
			restore_prot(ranges[i], ranges[i]->start, ranges[i]->end);
		unlock();
		inside = 0;
		judged = true;
	}
	end_record(how, status, sig, judged);
}

/* _exit() or _Exit() (@name) of the program, with @status. */
static void ending(const char *name, int status)
{
	judge_end(name, "_exit", status, 0);
}

__attribute__((destructor))
static void watch_end(void)
{
	judge_end("exit", "exit", 0, 0);
}

/*
 * fork(): the lock is taken around it, so the child does not inherit it
 * held; the child starts from a clean slate (every page record dropped,
 * its pages protected again, the performance counts zeroed): what the
 * parent left not durable is the parent's to make durable, and to be
 * reported for.
 */
static __thread bool fork_locked __attribute__((tls_model("initial-exec")));

static void fork_prepare(void)
{
	if (!inside) {
		lock();
		fork_locked = true;
	}
}

static void fork_parent(void)
{
	if (fork_locked) {
		fork_locked = false;
		unlock();
	}
}

static void fork_child(void)
{
	owner = getpid();
	if (!fork_locked)
		return;
	for (int l = LIST_ACTIVE; l <= LIST_RESTING; l++)
		while (lists[l])
			page_clean(lists[l]);
	nperf = 0;
	perf_dropped = 0;
	fork_parent();
}

static void pmemobj_lock(const void *l)
{
	if (inside || !NTM_WATCH_ON())
		return;
	inside = 1;
	lock();
	watch_obj_lock_seen((uintptr_t)l);
	unlock();
	inside = 0;
}

static const struct ntm_watch_ops ops = {
	.keeps_signal = keeps_signal,
	.signal_action = signal_action,
	.will_store = will_store,
	.will_unmap = will_unmap,
	.protect = protect,
	.remap = remap,
	.ending = ending,
	.pmemobj_lock = pmemobj_lock,
	.pmemobj_tx = pmemobj_tx_event,
};

/*
 * {"type":"start","pid":N}: this process is watched from here on, the
 * positive evidence `ntmem check` needs before it calls a run checked.
 */
static void start_record(void)
{
	struct wrec w;

	wrec_begin(&w, "start");
	wrec_num(&w, "pid", (uint64_t)getpid());
	wrec_emit(&w, report_fd);
}

/*
 * libc's own @name, past the preload shim's (and any other interposer's):
 * looked up in libc itself, not with RTLD_NEXT, which searches only the
 * objects after this one. This library comes after libc when it is a
 * dependency's dependency (a libpmemobj program's libpmem.so.1), and then
 * RTLD_NEXT finds nothing; were the shim after it, RTLD_NEXT would find
 * the shim's, which calls back into the checker. @libc: the handle of the
 * libc already loaded.
 */
static void *real(void *libc, const char *name)
{
	void *f = libc ? dlsym(libc, name) : NULL;

	if (!f)
		unchecked("cannot find libc's %s: %s", name,
			  libc ? "not in it" : "libc is not loaded as " LIBC_SO);
	return f;
}

__attribute__((constructor))
static void watch_start(void)
{
	const char *on = getenv("NTMEM_CHECK_WATCH");
	const char *path = getenv("NTMEM_CHECK_REPORT");
	const char *e = getenv("NTMEM_CHECK_EAGER");
	void (*reg)(const struct ntm_watch_ops *);
	struct sigaction act = { 0 }, old;
	void *warm[2], *libc;

	if (!on || strcmp(on, "1"))
		return;
	eager = e && !strcmp(e, "1");
	owner = getpid();
	cpu_cache = ntm_persist_domain_active() == NTM_PERSIST_CPU_CACHE;
	report_fd = path && *path ? open(path, O_WRONLY | O_APPEND | O_CLOEXEC)
				  : -1;
	if (report_fd < 0)
		report_fd = dup(STDERR_FILENO);
	/*
	 * The real functions, past the preload shim's: the checker's own
	 * handlers, protections and unmappings must not be taken for the
	 * program's.
	 */
	libc = dlopen(LIBC_SO, RTLD_LAZY | RTLD_NOLOAD);
	real_sigaction = (int (*)(int, const struct sigaction *,
				  struct sigaction *))real(libc, "sigaction");
	real_mprotect = (int (*)(void *, size_t, int))real(libc, "mprotect");
	real_munmap = (int (*)(void *, size_t))real(libc, "munmap");
	real_mremap = (void *(*)(void *, size_t, size_t, int, ...))
		real(libc, "mremap");
	if (!real_sigaction || !real_mprotect || !real_munmap || !real_mremap)
		return;
	/* backtrace() loads its unwinder on first use: not in a handler. */
	backtrace(warm, 2);
	act.sa_sigaction = on_segv;
	act.sa_flags = SA_SIGINFO | SA_RESTART;
	sigemptyset(&act.sa_mask);
	if (real_sigaction(SIGSEGV, &act, &old)) {
		unchecked("cannot install the SIGSEGV handler: %s",
			  strerror(errno));
		return;
	}
	if (old.sa_handler != SIG_DFL)
		segv_action(&old, NULL);
	reg = (void (*)(const struct ntm_watch_ops *))
		dlsym(RTLD_DEFAULT, "ntm_watch_preload_register");
	/* Which frames are the shim's is looked up now, not in a handler. */
	(void)watch_frame_ours((const void *)watch_start);
	if (reg) {
		/* Without the shim the program's own handlers would replace
		 * these: only SIGSEGV's, which the checker needs, then. */
		fatal_install();
		shim_present = true;
		reg(&ops);
	} else {
		note("no preload shim: a SIGSEGV handler the program installs "
		     "replaces the checker's");
	}
	if (pthread_atfork(fork_prepare, fork_parent, fork_child))
		note("cannot register the fork handlers: a child of fork() "
		     "inherits its parent's pending lines");
	start_record();
	__atomic_store_n(&ntm_watch_on, 1, __ATOMIC_RELEASE);
}
