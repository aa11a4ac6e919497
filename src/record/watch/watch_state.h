/* SPDX-License-Identifier: MIT */
/*
 * watch/watch_state.h - the state of the checker behind `ntmem check`,
 * all of it (defined in watch_state.c), and the inline helpers over it
 * that the hot paths (a write-back, a fence, a fault) call across files,
 * inline so that the split into files costs them no call: the watched
 * ranges and their page records, the lists of pages not yet durable, the
 * record allocator, the lock, the run's settings, the per-thread flags
 * and libc's real functions. Private: only src/record/watch/ includes it
 * (through watch_internal.h).
 *
 * Locking: one spin lock, taken by the fault handler too (a signal handler
 * cannot take a mutex). No code holding it stores to a watched page, so a
 * thread never faults while holding it; it may read them.
 */
#ifndef NTMEM_WATCH_STATE_H
#define NTMEM_WATCH_STATE_H

#include <sched.h>
#include <signal.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/types.h>

#include "durability_rules.h"
#include "interval/interval.h"
#include "watch/watch.h"
#include "watch/watch_pmemobj.h"

/* Nothing here is exported: no GOT between the checker's files. */
#pragma GCC visibility push(hidden)

#define PAGE 4096u
#define LINE 64u
#define LINES (PAGE / LINE)	/* 64: one bit per line in a uint64_t */
#define MAX_FRAMES 16
/* Mappings watched at once: namespaces, pmem_map_file()s, discoveries. */
#define MAX_RANGES 256
/* Records allocated with one mmap() (the handler cannot malloc()). */
#define RECORDS_PER_CHUNK 64

/* --- ranges and pages (watch_pages.c, watch_maps.c) ---------------------- */

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
	bool warm;		/* meta or hot, kept writable across fences */
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
 * UNSYNCED pages belong to a mapping of the SYNC rule: no fence settles
 * them, only an msync() or fsync() (they stay writable until then).
 */
enum page_list { LIST_NONE, LIST_ACTIVE, LIST_RESTING, LIST_UNSYNCED,
		 LIST_COUNT };
#define LIST_FIRST LIST_ACTIVE

/* What a program's mprotect() set on a page (PROT_SET | its prot). */
#define PROT_SET 0x40000000

/*
 * A page found all durable this many times and stored to again is hot:
 * the program keeps coming back to it (a transaction's objects, a run's
 * header, a root), and at its next fences it stays writable rather than
 * costing two mprotect() calls and a fault each time (watch_judge.c,
 * keep_warm()). Two: a page stored to once, or once more to finish it,
 * as a sequential writer does, never pays for the comparisons a warm page
 * costs.
 */
#define HOT_AFTER 2

/* A page of a watched mapping. */
struct wslot {
	struct wpage *page;	/* NULL when all durable */
	int prot;		/* 0: the range's; else PROT_SET | the program's */
	uint8_t settled;	/* times found all durable, up to HOT_AFTER */
};

/* What a watched mapping is, kept by each piece a cut or mremap() makes. */
struct wtraits {
	bool sync_rule;		/* NTM_REC_RULE_SYNC: durable by msync only */
	/*
	 * Known to hold the program's pmem: a pmem_* call or the library
	 * named it. A mapping watched since its mmap() (the preload shim)
	 * that nothing named yet is judged, but nothing is reported of it:
	 * an ordinary shared mapping of the program's is not pmem.
	 */
	bool adopted;
	dev_t dev;		/* the file's, for fsync(); 0: unknown */
	ino_t ino;
};

/* A watched mapping. */
struct wrange {
	uintptr_t start, end;	/* page aligned */
	int prot;		/* what the program mapped it with */
	off_t off;		/* file offset of start */
	char *path;		/* NULL: anonymous */
	struct wtraits t;
	struct wslot *slots;	/* per page */
	size_t table_bytes;	/* of slots, as mapped (a cut keeps them) */
};

/* A persistence point that left lines pending. */
struct point {
	const char *name;	/* the API function: pmem_drain, ... */
	int nframes;
	void *frames[MAX_FRAMES];
};

/* Pages not all durable, per enum page_list; page records free. */
extern struct wpage *watch_lists[LIST_COUNT];
/* Page records with warm set (watch_judge.c, keep_warm()). */
extern unsigned watch_warm_pages;

/*
 * A loop header over every page record of every list: @wp each record,
 * @next the one after it (read first, so the body may move or free @wp).
 * Lock held.
 */
#define WATCH_EACH_PAGE(wp, next)                                       \
	for (int list_ = LIST_FIRST; list_ < LIST_COUNT; list_++)       \
		for (struct wpage *wp = watch_lists[list_], *next;      \
		     wp && (next = wp->next, true); wp = next)
/*
 * Fixed-size records for code the fault handler runs (a signal handler
 * cannot malloc()), watch_chunks.c: a free list refilled RECORDS_PER_CHUNK
 * records at a time by one mmap(), which is async-signal-safe; a free
 * record's first word links the list. Lock held.
 */
struct watch_chunks {
	size_t size;	/* of one record: at least a pointer's */
	void *free;	/* the free records */
};

/* A record, or NULL when mmap() fails. */
void *watch_chunk_get(struct watch_chunks *c);

static inline void watch_chunk_put(struct watch_chunks *c, void *rec)
{
	memcpy(rec, &c->free, sizeof(c->free));
	c->free = rec;
}

/* The page records' (struct wpage). */
extern struct watch_chunks watch_page_records;
/*
 * The watched mappings (watch_maps.c): [start, end) of each, its struct
 * wrange the user pointer, at most MAX_RANGES. Changed and read under
 * watch_lock only, the fault handler's lookups included, so a reader
 * takes ntm_interval_view() (no reader counting) and the array it gives
 * stays as it is until the next change.
 */
extern struct ntm_interval_table watch_table;

/* --- the checker's run: its report, rules, lock and flags ----------------- */

extern int watch_report_fd;
/* NTMEM_CHECK_EAGER=1: a line not durable is reported at its point. */
extern bool watch_eager;
/* NTMEM_PERSIST_DOMAIN's, for the rules of durability_rules.h (cpu_cache:
 * a fence alone makes stores durable). */
extern enum ntm_persist_domain watch_domain;
extern int watch_lock_word;
/* The preload shim registered: it tells of the calls into libpmemobj. */
extern bool watch_shim_present;

/* Inside the checker: a fault here is a real one, events are ours. */
extern __thread int watch_inside __attribute__((tls_model("initial-exec")));
/* Fences of this thread: a run of noted write-backs ends at one. */
extern __thread uint64_t watch_my_fences
	__attribute__((tls_model("initial-exec")));

/* libc's own, past the preload shim's (watch_start()). */
extern int (*watch_real_sigaction)(int, const struct sigaction *,
				   struct sigaction *);
extern int (*watch_real_mprotect)(void *, size_t, int);
extern int (*watch_real_munmap)(void *, size_t);
extern void *(*watch_real_mremap)(void *, size_t, size_t, int, ...);
/* libc's pthread_sigmask(), past the shim's (watch_signals.c). */
extern int (*watch_real_sigmask)(int, const sigset_t *, sigset_t *);

/* --- libpmemobj transactions (watch_tx.c uses them) ---------------------- */

struct wtx;
/* Calls into libpmemobj this thread is in (the shim's wrappers), and
 * calls of its persistence functions (pmemobj_persist(), ...). */
extern __thread unsigned watch_obj_depth
	__attribute__((tls_model("initial-exec")));
extern __thread unsigned watch_obj_asked
	__attribute__((tls_model("initial-exec")));
/* The calling thread's open transaction, or NULL. */
extern __thread struct wtx *watch_my_tx
	__attribute__((tls_model("initial-exec")));

/* --- helpers of every file ----------------------------------------------- */

static inline void watch_lock(void)
{
	while (__atomic_exchange_n(&watch_lock_word, 1, __ATOMIC_ACQUIRE))
		while (__atomic_load_n(&watch_lock_word, __ATOMIC_RELAXED))
			sched_yield();	/* the holder may need this core */
}

static inline void watch_unlock(void)
{
	__atomic_store_n(&watch_lock_word, 0, __ATOMIC_RELEASE);
}

/* The library's one thread number (durability_rules.h), as the recorder's. */
static inline uint32_t watch_thread_number(void)
{
	return ntm_thread_number();
}

static inline uintptr_t watch_page_down(uintptr_t a)
{
	return a & ~(uintptr_t)(PAGE - 1);
}

static inline uintptr_t watch_page_up(uintptr_t a)
{
	return (a + PAGE - 1) & ~(uintptr_t)(PAGE - 1);
}

/* The watched ranges in address order, *@n of them. Lock held. */
static inline const struct ntm_interval *watch_ranges_view(size_t *n)
{
	return ntm_interval_view(&watch_table, n);
}

/* The watched range holding @a, or NULL. Lock held. */
static inline struct wrange *watch_range_of(uintptr_t a)
{
	size_t n;
	const struct ntm_interval *v = watch_ranges_view(&n);
	size_t i = ntm_interval_find(v, n, a);

	return i < n && v[i].lo <= a ? v[i].user : NULL;
}

static inline struct wslot *watch_slot_at(const struct wrange *r, uintptr_t a)
{
	return &r->slots[(a - r->start) / PAGE];
}

static inline struct wpage **watch_slot_of(const struct wrange *r, uintptr_t a)
{
	return &watch_slot_at(r, a)->page;
}

/*
 * Whether @wp's page is hot (HOT_AFTER): its slot counts only the records
 * freed as durable, so the answer stays the same while @wp lives.
 */
static inline bool watch_page_hot(const struct wpage *wp)
{
	return watch_slot_at(wp->range, wp->addr)->settled >= HOT_AFTER;
}

/* The list a page of @r goes on once it is stored to. */
static inline enum page_list watch_dirty_list(const struct wrange *r)
{
	return r->t.sync_rule ? LIST_UNSYNCED : LIST_ACTIVE;
}

/* The protection the program wants page @a of @r to have. */
static inline int watch_prog_prot(const struct wrange *r, uintptr_t a)
{
	int p = watch_slot_at(r, a)->prot;

	return p ? p & ~PROT_SET : r->prot;
}

/*
 * What a page gets while it is watched: the program's protection, less
 * PROT_WRITE unless its record says its stores go unseen (so that the
 * first store faults). A page the program cannot write stays as it asked.
 */
static inline int watch_watched_prot(int prog, bool writable)
{
	return writable ? prog : prog & ~PROT_WRITE;
}

static inline bool watch_prot_readable(int prot)
{
	return prot & (PROT_READ | PROT_WRITE);
}

/* @wp is no longer kept writable across fences (watch_judge.c). */
static inline void watch_page_cool(struct wpage *wp)
{
	if (wp->warm)
		watch_warm_pages--;
	wp->warm = false;
}

static inline void watch_page_free(struct wpage *wp)
{
	watch_page_cool(wp);
	watch_chunk_put(&watch_page_records, wp);
}

static inline void watch_list_del(struct wpage *wp)
{
	if (wp->prev)
		wp->prev->next = wp->next;
	else
		watch_lists[wp->list] = wp->next;
	if (wp->next)
		wp->next->prev = wp->prev;
	wp->list = LIST_NONE;
}

static inline void watch_list_move(struct wpage *wp, enum page_list to)
{
	if (wp->list == to)
		return;
	if (wp->list != LIST_NONE)
		watch_list_del(wp);
	wp->prev = NULL;
	wp->next = watch_lists[to];
	if (wp->next)
		wp->next->prev = wp;
	watch_lists[to] = wp;
	wp->list = (uint8_t)to;
}

/* Write-protect a page again: its next store faults. */
static inline void watch_page_protect(struct wpage *wp)
{
	if (wp->writable)
		watch_real_mprotect((void *)wp->addr, PAGE,
			      watch_watched_prot(watch_prog_prot(wp->range, wp->addr), false));
	wp->writable = false;
	watch_page_cool(wp);
}

/*
 * Forget a page that is all durable (or judged): protect it again. One
 * found durable while it may be writable goes through watch_page_settled().
 */
static inline void watch_page_clean(struct wpage *wp)
{
	watch_list_del(wp);
	*watch_slot_of(wp->range, wp->addr) = NULL;
	watch_page_protect(wp);
	watch_page_free(wp);
}

/* Whether line @l of a page whose contents are @now is as in @copy. */
static inline bool watch_line_is(const uint8_t *now, unsigned l, const uint8_t *copy)
{
	return !memcmp(now + l * LINE, copy + l * LINE, LINE);
}

const uint8_t *watch_page_read(const struct wpage *wp);

/*
 * The contents of @wp now: the page itself, or when the program made it
 * unreadable, a copy (watch_page_read()). Lock held.
 */
static inline const uint8_t *watch_page_now(const struct wpage *wp)
{
	if (watch_prot_readable(watch_prog_prot(wp->range, wp->addr)))
		return (const uint8_t *)wp->addr;
	return watch_page_read(wp);
}

/*
 * Forget @wp, just found all durable (its contents its image), unless a
 * store changed it since. The lock keeps out the checker, not the
 * program's stores: the page may still be writable while it is compared,
 * and a thread stores to it whenever it likes, typically right after its
 * fault made it writable, when its handler returns, while another
 * thread's fence has taken the lock and finds the page as it was. Were
 * the page protected and its record freed after such a store, the store
 * would be in no record and fault no more: never judged, a bug the report
 * is silent about. So it is write-protected first, then compared again:
 * once mprotect() returns, every store made through the writable mapping
 * is in memory and any later one faults (and waits for the lock). A page
 * that changed in between keeps its record, protected, for the next
 * fences and the end to judge. A page that was protected already cannot
 * have changed: a store to it faults, and the fault waits for the lock.
 * True when forgotten. Lock held.
 */
static inline bool watch_page_settled(struct wpage *wp)
{
	bool was_writable = wp->writable;
	struct wslot *sl = watch_slot_at(wp->range, wp->addr);

	watch_page_protect(wp);
	if (was_writable && memcmp(watch_page_now(wp), wp->image, PAGE))
		return false;
	if (sl->settled < HOT_AFTER)
		sl->settled++;
	watch_page_clean(wp);
	return true;
}

/*
 * Whether what the calling thread writes back and fences under the call
 * into libpmemobj @entry (the outermost libpmemobj frame of its backtrace;
 * NULL: none) is libpmemobj's own doing, not asked for by the program. The
 * shim tells when the program called one of libpmemobj's persistence
 * functions; without it the entry's name tells, where no tail call hid
 * it.
 */
static inline bool watch_obj_own_call(const void *entry)
{
	if (!entry)
		return false;
	return watch_shim_present ? !watch_obj_asked : watch_obj_entry_own(entry);
}

#pragma GCC visibility pop

#endif /* NTMEM_WATCH_STATE_H */
