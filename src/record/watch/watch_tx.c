// SPDX-License-Identifier: MIT
/*
 * watch_tx.c - libpmemobj's transactions, as the preload shim tells of
 * them, and the program's stores in one to what it did not add
 * (tx-unadded). What libpmemobj leaves unflushed on purpose, and which of
 * a pool's bytes are its metadata, is watch_pmemobj.c's.
 */
#define _GNU_SOURCE
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "watch/watch_internal.h"
#include "watch/watch_report.h"

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
 * program's first store to it names the program. A warm page (a hot one,
 * watch_judge.c, keep_warm()) is not protected: it joins the transaction
 * at its begin as it is, and its stores are found by the same comparison
 * at each call; which thread made them is not known, so another thread's
 * store to it, outside a transaction of its own, is taken as this one's. Pages of libpmemobj's
 * metadata (watch_page_is_meta()) join no transaction: no byte of them can be
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
/* The transactions' page records (watch_chunks.c). */
static struct watch_chunks txpage_records = { .size = sizeof(struct txpage) };
/* Threads inside a call into libpmemobj: while another is, what changed
 * cannot be told from libpmemobj's stores, and is not judged. */
static unsigned obj_inside;

/*
 * Page @a joins @tx as it is now; @frames (@n of them) its first store,
 * libpmemobj's when @lib. Lock held (the fault handler's too).
 */
static void tx_join(struct wtx *tx, uintptr_t a, void *const *frames, int n,
		    bool lib)
{
	struct txpage *tp = watch_chunk_get(&txpage_records);

	if (!tp)
		return;		/* no memory: its stores go unjudged */
	memcpy(tp->before, (const void *)a, PAGE);
	tp->addr = a;
	tp->lib = lib;
	tp->reprotected = false;
	tp->nframes = n;
	memcpy(tp->frames, frames, sizeof(void *) * (size_t)n);
	tp->next = tx->pages;
	tx->pages = tp;
}

/*
 * The calling thread faults on page @a (before its store lands): the
 * first time in its open transaction, the page joins it. Lock held.
 */
void watch_tx_fault(uintptr_t a, void *const *frames, int n)
{
	struct wtx *tx = watch_my_tx;
	struct txpage *tp;

	if (!tx || tx->done || a < tx->lo || a >= tx->hi)
		return;
	for (tp = tx->pages; tp; tp = tp->next) {
		if (tp->addr != a)
			continue;
		if (tp->lib && !watch_obj_depth) {
			/* The program's first store to it: its frames. */
			tp->lib = false;
			tp->nframes = n;
			memcpy(tp->frames, frames, sizeof(void *) * (size_t)n);
		}
		return;
	}
	tx_join(tx, a, frames, n, watch_obj_depth > 0);
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
	struct wrange *r = watch_range_of(tp->addr);
	const uint8_t *now = (const uint8_t *)tp->addr;
	uintptr_t run = 0;

	if (!r || !watch_prot_readable(watch_prog_prot(r, tp->addr)) ||
	    !memcmp(now, tp->before, PAGE))
		return;
	for (unsigned l = 0; l < LINES; l++) {
		uintptr_t line = tp->addr + l * LINE;
		uint64_t bad = 0, cov;

		if (watch_line_is(now, l, tp->before)) {
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
		if (bad && !watch_obj_in_chunks(watch_range_read, r,
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
			struct wrange *r = watch_range_of(tp->addr);

			if (r && watch_prot_readable(watch_prog_prot(r, tp->addr)))
				memcpy(tp->before, (const void *)tp->addr, PAGE);
		}
	if (!watch_my_tx)
		return;
	for (struct txpage *tp = watch_my_tx->pages; tp; tp = tp->next) {
		struct wrange *r = watch_range_of(tp->addr);
		struct wpage *wp = r ? *watch_slot_of(r, tp->addr) : NULL;

		/* Not a hot page (watch_state.h): it would fault in every
		 * transaction; its first store stays libpmemobj's. */
		if (tp->lib && !tp->reprotected && wp && wp->writable &&
		    !watch_page_hot(wp)) {
			watch_page_protect(wp);
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
		struct wrange *r = watch_range_of(f->lo);
		struct wpage *wp = r ? *watch_slot_of(r, f->lo) : NULL;
		struct wrec w;

		if (!r)
			continue;
		if (wp) {
			size_t o = f->lo - wp->addr;

			memcpy(wp->image + o, (const void *)f->lo, f->hi - f->lo);
			memcpy(wp->wbdata + o, (const void *)f->lo, f->hi - f->lo);
		}
		wrec_begin(&w, watch_record_names[REC_BUG]);
		wrec_str(&w, "kind", watch_bug_names[BUG_TX_UNADDED]);
		wrec_str(&w, "when", watch_when_names[WHEN_TRANSACTION]);
		wrec_str(&w, "file", r->path);
		wrec_num(&w, "offset", (uint64_t)(f->lo - r->start) + (uint64_t)r->off);
		wrec_num(&w, "length", f->hi - f->lo);
		wrec_addr(&w, "address", f->lo);
		wrec_str(&w, "point", name);
		wrec_frames(&w, "backtrace", frames, n);
		wrec_frames(&w, "first_store", f->page->frames, f->page->nframes);
		wrec_frames(&w, "tx_begin", tx->frames, tx->nframes);
		wrec_num(&w, "pid", (uint64_t)getpid());
		wrec_emit(&w, watch_report_fd);
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
		watch_chunk_put(&txpage_records, tp);
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

/* The calling thread's open transaction's part of watch_tx_perf_kind(). */
int watch_tx_flush_repeat(uintptr_t lo, uintptr_t hi, int kind)
{
	if (!watch_my_tx->done)
		for (size_t i = 0; i < watch_my_tx->nspans; i++)
			if (watch_my_tx->spans[i].commit_flushes &&
			    watch_my_tx->spans[i].lo < hi && lo < watch_my_tx->spans[i].hi)
				return PERF_TX_FLUSH_REPEAT;
	return kind;
}

/* The outermost pmemobj_tx_begin(@pop) returned. Lock held. */
static void tx_open(const void *pop, bool started, void *const *frames, int n)
{
	struct wtx *tx = calloc(1, sizeof(*tx));
	struct wrange *r = watch_range_of((uintptr_t)pop);

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
		WATCH_EACH_PAGE(wp, next) {
			if (wp->addr < tx->lo || wp->addr >= tx->hi || wp->meta)
				continue;
			if (wp->warm)
				tx_join(tx, wp->addr, wp->frames, wp->nframes, false);
			else
				watch_page_protect(wp);
		}
	}
	tx->next = txs;
	txs = tx;
	watch_my_tx = tx;
}

static void obj_enter(unsigned flags, const char *name)
{
	void *frames[MAX_FRAMES];
	int n;

	watch_lock();
	if ((flags & NTM_WATCH_OBJ_FROM_PROGRAM) && watch_obj_depth) {
		/* An abort's longjmp() skipped the returns of its calls. */
		watch_obj_depth = 0;
		obj_inside--;
		tx_fold_all();
	}
	if (watch_obj_depth++) {
		watch_unlock();
		return;
	}
	if (obj_inside++ == 0)
		tx_judge_all();
	if (watch_my_tx && (flags & NTM_WATCH_OBJ_NOT_WORK) &&
	    (watch_my_tx->levels <= 1 || !strcmp(name, "pmemobj_tx_abort")))
		watch_my_tx->done = true;
	if (!watch_my_tx || !watch_my_tx->nfound) {
		watch_unlock();
		return;
	}
	watch_unlock();
	/* The backtrace only when there is something to report. */
	n = watch_capture(frames);
	watch_lock();
	if (watch_my_tx)
		tx_report(watch_my_tx, name, frames, n);
	watch_unlock();
}

void watch_pmemobj_tx(enum ntm_watch_obj what, const void *p, size_t n,
			     const char *name)
{
	uintptr_t a = (uintptr_t)p;
	void *frames[MAX_FRAMES];
	int nf;
	bool twice = false;

	if (watch_inside || !NTM_WATCH_ON())
		return;
	watch_inside = 1;
	switch (what) {
	case NTM_WATCH_OBJ_ENTER:
		obj_enter((unsigned)n, name);
		break;
	case NTM_WATCH_OBJ_LEAVE:
		watch_lock();
		if (watch_obj_depth && !--watch_obj_depth) {
			obj_inside--;
			tx_fold_all();
		}
		watch_unlock();
		break;
	case NTM_WATCH_OBJ_BEGUN:
		if (watch_my_tx) {
			watch_my_tx->levels++;
			break;
		}
		nf = watch_capture(frames);
		watch_lock();
		tx_open(p, n == 0, frames, nf);
		watch_unlock();
		break;
	case NTM_WATCH_OBJ_ADD:
	case NTM_WATCH_OBJ_ADD_NO_FLUSH:
	case NTM_WATCH_OBJ_ALLOCATED:
		watch_lock();
		if (watch_my_tx && !watch_my_tx->done && a && a + n > a)
			twice = tx_span(watch_my_tx, a, a + n, what);
		watch_unlock();
		if (twice)
			watch_perf_count(PERF_TX_ADD_TWICE, 0, 0);
		break;
	case NTM_WATCH_OBJ_COMMIT:
		if (watch_my_tx && watch_my_tx->levels == 1)
			watch_my_tx->done = true;
		break;
	case NTM_WATCH_OBJ_ASK:
		watch_obj_asked++;
		break;
	case NTM_WATCH_OBJ_ASKED:
		if (watch_obj_asked)
			watch_obj_asked--;
		break;
	case NTM_WATCH_OBJ_ENDED:
		if (!watch_my_tx)
			break;
		watch_lock();
		/* TX_STAGE_NONE: the outermost ended (a failed begin too). */
		if (n == 0 || !--watch_my_tx->levels) {
			tx_free(watch_my_tx);
			watch_my_tx = NULL;
		}
		watch_unlock();
		break;
	}
	watch_inside = 0;
}

void watch_pmemobj_lock(const void *l)
{
	if (watch_inside || !NTM_WATCH_ON())
		return;
	watch_inside = 1;
	watch_lock();
	watch_obj_lock_seen((uintptr_t)l);
	watch_unlock();
	watch_inside = 0;
}

