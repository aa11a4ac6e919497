// SPDX-License-Identifier: MIT
/*
 * watch_maps.c - the mappings the checker watches: those the library
 * tells of (ntm_watch_map(), ntm_watch_unmap()), every writable shared
 * file mapping the program makes (the preload shim's mmap(), reported on
 * once a pmem_* call names it), and shared file mappings a pmem_* call
 * touches that neither told of, discovered in /proc/self/maps; what makes
 * their stores durable (write-backs and fences, or msync() and fsync():
 * watch.h's rules); how a watched range is cut when part of it goes, and
 * the notes that tell of memory not watched.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include "watch/watch_internal.h"
#include "watch/watch_report.h"

/* Shared mappings found not to be pmem (or that could not be watched),
 * remembered so that a hot pmem_flush() on ordinary memory reads
 * /proc/self/maps only once (and a mapping not watched is noted once). */
#define MAX_NOT_PMEM 32

static struct { uintptr_t start, end; } not_pmem[MAX_NOT_PMEM];
static unsigned nnot_pmem, not_pmem_next;

static void watch_range(uintptr_t start, uintptr_t end, const char *path,
			off_t off, int prot, const struct wtraits *t);

/*
 * The rule of a shared mapping no library told of: a device (devdax) or a
 * MAP_SYNC mapping is the medium; a file PMEM_IS_PMEM_FORCE=1 has the
 * program told is pmem is judged as pmem; any other file has a page cache
 * in front of its medium.
 */
static bool sync_rule_of(bool device, bool map_sync)
{
	/* Read as libpmem reads it: atoi(), 1 is "always". */
	const char *force = getenv("PMEM_IS_PMEM_FORCE");

	return !device && !map_sync && !(force && atoi(force) == 1);
}

/* Whether the mapping starting at @lo was made with MAP_SYNC: its
 * VmFlags in /proc/self/smaps say "sf". */
static bool mapped_sync(uintptr_t lo)
{
	FILE *f = fopen("/proc/self/smaps", "re");
	char line[4096 + 128];
	bool in = false, sync = false;

	if (!f)
		return false;
	while (fgets(line, sizeof(line), f)) {
		unsigned long a, b;

		/* A mapping's first line; its fields' names are no range. */
		if (sscanf(line, "%lx-%lx ", &a, &b) == 2) {
			if (in)
				break;
			in = a == lo;
		} else if (in && !strncmp(line, "VmFlags:", 8)) {
			sync = strstr(line, " sf") != NULL;
			break;
		}
	}
	fclose(f);
	return sync;
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
		unsigned long lo, hi, off, ino;
		unsigned maj, min;
		char perms[5], path[4096];
		int n;

		path[0] = 0;
		n = sscanf(line, "%lx-%lx %4s %lx %x:%x %lu %4095[^\n]", &lo,
			   &hi, perms, &off, &maj, &min, &ino, path);
		if (n < 4 || a < lo || a >= hi)
			continue;
		if (n == 8 && perms[1] == 'w' && perms[3] == 's' && path[0] == '/') {
			struct stat st;
			bool device = !stat(path, &st) && S_ISCHR(st.st_mode);
			struct wtraits t = {
				.sync_rule = sync_rule_of(device, mapped_sync(lo)),
				.adopted = true,
				.dev = makedev(maj, min), .ino = (ino_t)ino,
			};

			watch_range(lo, hi, path, (off_t)off,
				    PROT_READ | PROT_WRITE |
				    (perms[2] == 'x' ? PROT_EXEC : 0), &t);
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
	WATCH_EACH_PAGE(wp, next) {
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

/*
 * A new range over [start, end), not yet protected, of what @t says;
 * NULL: no memory.
 */
struct wrange *watch_range_new(uintptr_t start, uintptr_t end,
				const char *path, off_t off, int prot,
				const struct wtraits *t)
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
	r->t = *t;
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

/* [a, e) of @r is no longer watched (said of the program's pmem only). */
void watch_note_unwatched(const struct wrange *r, uintptr_t a, uintptr_t e,
			   const char *why)
{
	if (!r->t.adopted)
		return;
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
						    r->prot, &r->t)))
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

/*
 * Watch [start, end), a mapping of @path at @off. One that fails to be
 * watched is noted if it is known to be pmem; one watched since its
 * mmap() (not adopted yet) is tried again when a pmem_* call names it.
 */
static void watch_range(uintptr_t start, uintptr_t end, const char *path,
			off_t off, int prot, const struct wtraits *t)
{
	struct wrange *r = watch_range_new(start, end, path, off, prot, t);
	const char *why = NULL;
	size_t n;

	if (!r) {
		if (t->adopted)
			unwatched_note(path && *path ? path : NULL,
				       (uint64_t)off, end - start,
				       "not watched", "no memory");
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
		if (t->adopted)		/* noted once, not per pmem_* call */
			not_pmem_add(start, end);
		watch_unlock();
		if (t->adopted)
			unwatched_note(r->path, (uint64_t)off, end - start,
				       "not watched", why);
		watch_range_destroy(r);
		return;
	}
	watch_unlock();
}

/* The file @path's device and inode into @t (0: none to find). */
static void traits_of_path(struct wtraits *t, const char *path)
{
	struct stat st;

	if (path && *path && !stat(path, &st)) {
		t->dev = st.st_dev;
		t->ino = st.st_ino;
	}
}

void watch_map_file(void *p, size_t n, const char *path, off_t off,
			enum ntm_rec_rule rule)
{
	uintptr_t a = (uintptr_t)p;
	struct wtraits t = { .sync_rule = rule == NTM_REC_RULE_SYNC,
			     .adopted = true };

	if (!n)
		return;
	watch_inside = 1;
	traits_of_path(&t, path);
	watch_range(watch_page_down(a), watch_page_up(a + n), path, off - (off_t)(a - watch_page_down(a)),
		    PROT_READ | PROT_WRITE, &t);
	watch_inside = 0;
}

void watch_mapped(void *p, size_t n, int prot, int flags, int fd, off_t off)
{
	uintptr_t a = (uintptr_t)p;
	char link[32], path[PATH_MAX];
	struct stat st;
	struct wtraits t = { 0 };
	ssize_t len;

	if (!n || watch_inside || fstat(fd, &st) ||
	    !(S_ISREG(st.st_mode) || S_ISCHR(st.st_mode)))
		return;
	watch_inside = 1;
	snprintf(link, sizeof(link), "/proc/self/fd/%d", fd);
	len = readlink(link, path, sizeof(path) - 1);
	path[len > 0 ? len : 0] = '\0';
	t.sync_rule = sync_rule_of(S_ISCHR(st.st_mode), flags & MAP_SYNC);
	t.dev = st.st_dev;
	t.ino = st.st_ino;
	watch_range(watch_page_down(a), watch_page_up(a + n), path, off,
		    prot & (PROT_READ | PROT_WRITE | PROT_EXEC), &t);
	watch_inside = 0;
}

void watch_set_rule(const void *p, size_t n, enum ntm_rec_rule rule)
{
	uintptr_t a = watch_page_down((uintptr_t)p), e = watch_page_up((uintptr_t)p + n);
	size_t nv;
	const struct ntm_interval *v;

	watch_inside = 1;
	watch_lock();
	v = watch_ranges_view(&nv);
	for (size_t i = ntm_interval_find(v, nv, a); i < nv && v[i].lo < e; i++) {
		struct wrange *r = v[i].user;

		r->t.sync_rule = rule == NTM_REC_RULE_SYNC;
	}
	/* Pages stored to already go where their rule's events find them. */
	WATCH_EACH_PAGE(wp, next)
		if (wp->addr >= a && wp->addr < e && wp->list != LIST_RESTING)
			watch_list_move(wp, watch_dirty_list(wp->range));
	watch_unlock();
	watch_inside = 0;
}

/*
 * [a, e) is named by a pmem_* call: the ranges it touches hold pmem, and
 * a shared file mapping not yet watched is watched from now on.
 */
static void touch(uintptr_t a, uintptr_t e)
{
	size_t nv;
	const struct ntm_interval *v;
	bool known;

	watch_lock();
	v = watch_ranges_view(&nv);
	known = watch_range_of(a) != NULL;
	for (size_t i = ntm_interval_find(v, nv, a); i < nv && v[i].lo < e; i++)
		((struct wrange *)v[i].user)->t.adopted = true;
	watch_unlock();
	if (!known)
		watch_discover(a);
}

void watch_touched(const void *p, size_t n)
{
	if (!n || watch_inside)
		return;
	watch_inside = 1;
	touch((uintptr_t)p, (uintptr_t)p + n);
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

void watch_unmapping(const void *p, size_t n, const char *why)
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

/*
 * The page @wp is durable as it is: an msync() or fsync() covering it
 * returned (the kernel writes whole pages). Lock held.
 */
static void page_synced(struct wpage *wp)
{
	const uint8_t *now = watch_page_now(wp);

	if (now == wp->image)
		return;		/* unreadable: nothing to take */
	memcpy(wp->image, now, PAGE);
	wp->wb = 0;
	wp->pending = 0;
	wp->deferred = 0;
	watch_page_settled(wp);	/* a store may come meanwhile */
}

/* Every page record of [a, e) whose range @match (with @arg) is synced. */
static void sync_pages(uintptr_t a, uintptr_t e,
		       bool (*match)(const struct wrange *r, const void *arg),
		       const void *arg)
{
	watch_lock();
	WATCH_EACH_PAGE(wp, next)
		if (wp->addr + PAGE > a && wp->addr < e &&
		    (!match || match(wp->range, arg)))
			page_synced(wp);
	watch_unlock();
}

void watch_synced(const void *p, size_t n)
{
	uintptr_t a = (uintptr_t)p;

	if (!n || watch_inside)
		return;
	watch_inside = 1;
	touch(a, a + n);
	sync_pages(watch_page_down(a), watch_page_up(a + n), NULL, NULL);
	watch_inside = 0;
}

void watch_program_synced(void *p, size_t n)
{
	uintptr_t a = (uintptr_t)p;

	if (!n || watch_inside)
		return;
	watch_inside = 1;
	sync_pages(watch_page_down(a), watch_page_up(a + n), NULL, NULL);
	watch_inside = 0;
}

/* What fsync() or syncfs() of a file covers (dev 0: every file). */
struct synced_file {
	dev_t dev;
	ino_t ino;	/* 0: every file of dev */
};

static bool of_file(const struct wrange *r, const void *arg)
{
	const struct synced_file *f = arg;

	return !f->dev || (r->t.dev == f->dev && (!f->ino || r->t.ino == f->ino));
}

void watch_file_synced(int fd, bool whole_fs)
{
	struct synced_file f = { 0 };
	struct stat st;

	if (watch_inside)
		return;
	if (fd >= 0) {
		if (fstat(fd, &st))
			return;
		f.dev = st.st_dev;
		f.ino = whole_fs ? 0 : st.st_ino;
	}
	watch_inside = 1;
	sync_pages(0, UINTPTR_MAX, of_file, &f);
	watch_inside = 0;
}
