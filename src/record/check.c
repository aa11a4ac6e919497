// SPDX-License-Identifier: MIT
/*
 * check.c - the recorder: a shadow model of the CPU cache over the tracked
 * ranges, fed by every store, write-back and fence of the recorder build
 * (ntmem/hook.h), queried by the checks of ntmem/check.h and read by the
 * crash engine through check_shadow.h.
 *
 * Layout, per tracked range: one state byte and one owner (thread number)
 * per 8-byte unit, the durable image (8 bytes per unit), and per cache
 * line a write-back count and the code that last changed the line (per
 * line, not per unit: the shadow written per event is what a recorded
 * copy pays for, and a line names the culprit well enough). Everything is indexed directly by
 * (address - base) / 8, so an event costs a range lookup (a binary
 * search of the interval table, interval/interval.h) and a loop over its
 * units.
 *
 * One spin lock serialises every event and query. Events are short (a few
 * dozen units) and the tests' threads are few, so a lock word beats a
 * mutex: no system call on the uncontended path, and the holder never
 * sleeps while holding it.
 *
 * In a cpu_cache persistence domain (ntm_check_set_domain(); by default
 * the process's, NTMEM_PERSIST_DOMAIN) a stored unit belongs to the
 * thread that stored it and becomes DURABLE at that thread's fence, with
 * no write-back: the cache is inside the domain, only ordering is owed.
 * What a fence settles is durability_rules.h's, as for the checker.
 *
 * Events come through the sink list (rec_sink.h): the model is the sink
 * at NTM_REC_SINK_MODEL, after the checker's; it passes the events it
 * counts on to the crash engine's, with the lock held.
 *
 * A fence must find the units this thread made WB or NT (or DIRTY). Each thread keeps
 * a short list of the extents it touched (adjacent ones merged: a copy is
 * one extent); when the list overflows, the fence scans every range for
 * units this thread owns instead.
 */
#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ntmem/ns.h"
#include "check_shadow.h"
#include "durability_rules.h"
#include "interval/interval.h"
#include "rec_sink.h"

#define UNIT NTM_CHECK_UNIT
#define LINE NTM_CHECK_LINE
#define UNITS_PER_LINE (LINE / UNIT)

/* Ranges are few (a test's buffer, a namespace, a crash region). */
#define MAX_RANGES 64
/* Extents one thread remembers between fences before it falls back. */
#define MAX_PENDING 64

struct range {
	uintptr_t base;		/* first unit, UNIT aligned */
	uintptr_t end;		/* past the last unit, UNIT aligned */
	uintptr_t user;		/* the pointer track() was given */
	size_t units;
	uintptr_t line_base;	/* first line, LINE aligned */
	size_t lines;
	uint8_t *state;		/* units: enum ntm_check_state */
	uint32_t *owner;	/* units: thread number of a WB/NT unit */
	const void **where;	/* lines: code that last changed the line */
	uint8_t *durable;	/* units * UNIT bytes */
	uint32_t *wb;		/* lines: write-backs since track/reset */
};

/*
 * The tracked ranges, [base, end) each, the struct range its user pointer.
 * Changed and read under the lock, except by ntm_shadow_view(), which the
 * crash engine may call outside it.
 */
static struct ntm_interval_table ranges = NTM_INTERVAL_TABLE_INIT(MAX_RANGES);
/* Bumped by track/untrack so stale per-thread hints are dropped. */
static unsigned range_gen;

/* Set while recording; read without the lock on every event. */
static int recording;
static int lock_word;
static uint64_t steps;
/* The model's domain; set by ntm_check_set_domain(), else at start. Read
 * on every event under the lock. */
static enum ntm_persist_domain domain;
static int domain_set;

struct pending {
	uintptr_t lo, hi;
};

static __thread int suspended;		/* inside the later sinks */
static __thread unsigned held;		/* lock depth of this thread */
static __thread struct pending pend[MAX_PENDING];
static __thread unsigned npend;
static __thread int pend_overflow;
static __thread unsigned pend_gen;	/* range_gen the list was built under */
static __thread char message[256];

/*
 * The lock is re-entrant per thread: the crash engine's sink runs with it
 * held and may query the model (ntm_check_query(), ntm_shadow_view()).
 */
static void lock(void)
{
	if (held++)
		return;
	while (__atomic_exchange_n(&lock_word, 1, __ATOMIC_ACQUIRE)) {
		/* The holder may be waiting for this core: let it run. */
		while (__atomic_load_n(&lock_word, __ATOMIC_RELAXED))
			sched_yield();
	}
}

static void unlock(void)
{
	if (--held)
		return;
	__atomic_store_n(&lock_word, 0, __ATOMIC_RELEASE);
}

const char *ntm_check_state_name(enum ntm_check_state s)
{
	static const char *const names[] = {
		[NTM_CHECK_CLEAN] = "clean", [NTM_CHECK_DIRTY] = "dirty",
		[NTM_CHECK_WB] = "wb",	     [NTM_CHECK_NT] = "nt",
		[NTM_CHECK_DURABLE] = "durable",
	};

	if ((unsigned)s < NTM_CHECK_NSTATES)
		return names[s];
	return "?";
}

/* --- ranges ---------------------------------------------------------------- */

static uintptr_t down(uintptr_t a, size_t to)
{
	return a & ~(uintptr_t)(to - 1);
}

/* The tracked ranges, sorted by address, @n of them; lock held. */
static const struct ntm_interval *ranges_view(size_t *n)
{
	return ntm_interval_view(&ranges, n);
}

static struct range *range_at(const struct ntm_interval *v, size_t i)
{
	return v[i].user;
}

/* The range holding @a, or NULL; lock held. */
static struct range *range_of(uintptr_t a)
{
	size_t n, i;
	const struct ntm_interval *v = ranges_view(&n);

	i = ntm_interval_find(v, n, a);
	return i < n && v[i].lo <= a ? range_at(v, i) : NULL;
}

static void range_free(struct range *r)
{
	if (!r)
		return;
	free(r->state);
	free(r->owner);
	free(r->where);
	free(r->durable);
	free(r->wb);
	free(r);
}

/* Every unit CLEAN, the live contents durable, no write-back counted. */
static void range_clear(struct range *r)
{
	memset(r->state, NTM_CHECK_CLEAN, r->units);
	memset(r->owner, 0, r->units * sizeof(*r->owner));
	memset(r->where, 0, r->lines * sizeof(*r->where));
	memcpy(r->durable, (const void *)r->base, r->units * UNIT);
	memset(r->wb, 0, r->lines * sizeof(*r->wb));
}

int ntm_check_track(void *p, size_t n)
{
	struct range *r;
	int err;

	if (!p || !n || (uintptr_t)p + n < (uintptr_t)p)
		return -EINVAL;
	r = calloc(1, sizeof(*r));
	if (!r)
		return -ENOMEM;
	r->user = (uintptr_t)p;
	r->base = (uintptr_t)p & ~(uintptr_t)(UNIT - 1);
	r->end = ((uintptr_t)p + n + UNIT - 1) & ~(uintptr_t)(UNIT - 1);
	r->units = (r->end - r->base) / UNIT;
	r->line_base = r->base & ~(uintptr_t)(LINE - 1);
	r->lines = (r->end - r->line_base + LINE - 1) / LINE;
	r->state = malloc(r->units);
	r->owner = malloc(r->units * sizeof(*r->owner));
	r->where = malloc(r->lines * sizeof(*r->where));
	r->durable = malloc(r->units * UNIT);
	r->wb = malloc(r->lines * sizeof(*r->wb));
	if (!r->state || !r->owner || !r->where || !r->durable || !r->wb) {
		range_free(r);
		return -ENOMEM;
	}

	lock();
	/* Cleared before it is published: the crash engine may look it up. */
	range_clear(r);
	err = ntm_interval_insert(&ranges, r->base, r->end, r);
	if (!err)
		range_gen++;
	unlock();
	if (err)
		range_free(r);
	/* An overlap is this call's -EINVAL; the full table its -ENOMEM. */
	return err == -EEXIST ? -EINVAL : err;
}

void ntm_check_untrack(void *p)
{
	struct range *gone;

	lock();
	gone = range_of((uintptr_t)p);
	if (gone && gone->user == (uintptr_t)p) {
		ntm_interval_remove(&ranges, gone->base);
		range_gen++;
	} else {
		gone = NULL;
	}
	unlock();
	range_free(gone);
}

int ntm_check_set_domain(enum ntm_persist_domain d)
{
	if (d != NTM_PERSIST_NONE && d != NTM_PERSIST_MEMORY_CONTROLLER &&
	    d != NTM_PERSIST_CPU_CACHE)
		return -EINVAL;
	lock();
	domain = d;
	domain_set = 1;
	unlock();
	return 0;
}

enum ntm_persist_domain ntm_check_domain(void)
{
	enum ntm_persist_domain d = ntm_persist_domain_active();

	lock();
	if (domain_set)
		d = domain;
	unlock();
	return d;
}

static void model_event(struct ntm_rec_ev *ev, enum ntm_rec_sink_pos pos,
			void *arg);
static const struct ntm_rec_sink model_sink = { model_event, NULL };

void ntm_check_start(void)
{
	/* Outside the lock: the first call chooses the dispatch table. */
	enum ntm_persist_domain active = ntm_persist_domain_active();

	/* Events reach the model once it is a sink; -EBUSY: it is already
	 * (nothing else takes its position). */
	(void)ntm_rec_sink_register(NTM_REC_SINK_MODEL, &model_sink);
	lock();
	steps = 0;
	if (!domain_set)
		domain = active;
	unlock();
	__atomic_store_n(&recording, 1, __ATOMIC_RELEASE);
}

void ntm_check_stop(void)
{
	__atomic_store_n(&recording, 0, __ATOMIC_RELEASE);
}

void ntm_check_reset(void)
{
	size_t n;
	const struct ntm_interval *v;

	lock();
	v = ranges_view(&n);
	for (size_t i = 0; i < n; i++)
		range_clear(range_at(v, i));
	unlock();
}

/* --- events ---------------------------------------------------------------- */

/* Remember [lo, hi) for this thread's next fence; merges a running copy. */
static void pending_add(uintptr_t lo, uintptr_t hi)
{
	if (pend_gen != range_gen) {
		/* Ranges changed: a scan is always right, and lists rebuild. */
		pend_gen = range_gen;
		npend = 0;
		pend_overflow = 1;
	}
	if (pend_overflow)
		return;
	if (npend) {
		struct pending *last = &pend[npend - 1];

		if (lo <= last->hi && hi >= last->lo) {
			if (lo < last->lo)
				last->lo = lo;
			if (hi > last->hi)
				last->hi = hi;
			return;
		}
	}
	if (npend == MAX_PENDING) {
		pend_overflow = 1;
		return;
	}
	pend[npend++] = (struct pending){ lo, hi };
}

/* Units [u, e) of @r, hit by an event of @kind covering bytes [lo, hi). */
static void apply(struct range *r, enum ntm_rec_kind kind, uintptr_t lo,
		  uintptr_t hi, const void *where, uint32_t me)
{
	size_t u = (lo - r->base) / UNIT;
	size_t e = (hi - r->base + UNIT - 1) / UNIT;

	if (kind != NTM_REC_WRITEBACK) {
		size_t l = (down(lo, LINE) - r->line_base) / LINE;
		size_t le = (hi - 1 - r->line_base) / LINE + 1;

		for (; l < le; l++)
			r->where[l] = where;
	}
	switch (kind) {
	case NTM_REC_STORE:
		memset(r->state + u, NTM_CHECK_DIRTY, e - u);
		if (ntm_rule_cache_persists(domain)) {
			/* cpu_cache: this thread's fence makes them durable. */
			for (size_t i = u; i < e; i++)
				r->owner[i] = me;
			pending_add(lo, hi);
		}
		break;
	case NTM_REC_NT: {
		/*
		 * An NT store of part of a unit leaves the rest of it as it
		 * was: a dirty unit stays dirty, its other bytes still sit in
		 * the cache. Whole units in between take the fast path.
		 */
		size_t fu = (lo - r->base + UNIT - 1) / UNIT;	/* first whole */
		size_t fe = (hi - r->base) / UNIT;		/* past last whole */

		if (fe < fu)
			fe = fu;	/* inside one unit */
		for (size_t i = u; i < e; i++) {
			if (i == fu && fe > fu) {
				memset(r->state + fu, NTM_CHECK_NT, fe - fu);
				for (size_t k = fu; k < fe; k++)
					r->owner[k] = me;
				i = fe - 1;
				continue;
			}
			if (r->state[i] == NTM_CHECK_DIRTY)
				continue;
			r->state[i] = NTM_CHECK_NT;
			r->owner[i] = me;
		}
		pending_add(lo, hi);
		break;
	}
	case NTM_REC_WRITEBACK:
		for (size_t i = u; i < e; i++) {
			if (r->state[i] != NTM_CHECK_DIRTY)
				continue;
			r->state[i] = NTM_CHECK_WB;
			r->owner[i] = me;
		}
		r->wb[((lo & ~(uintptr_t)(LINE - 1)) - r->line_base) / LINE]++;
		pending_add(lo, hi);
		break;
	case NTM_REC_FENCE:
		break;
	default:
		break;	/* a mapping's: model_event() lets them by */
	}
}

/* A unit this thread's fence makes durable. */
static bool settles(const struct range *r, size_t i, uint32_t me)
{
	switch (r->state[i]) {
	case NTM_CHECK_WB:
	case NTM_CHECK_NT:
		return ntm_rule_wb_settles(r->owner[i], me);
	case NTM_CHECK_DIRTY:
		return ntm_rule_store_settles(domain, r->owner[i], me);
	default:
		return false;
	}
}

/*
 * This thread's WB and NT units (and in a cpu_cache domain its DIRTY
 * ones) of [u, e) in @r become durable: each run of them is copied into
 * the durable image at once.
 */
static void settle(struct range *r, size_t u, size_t e, uint32_t me)
{
	size_t i = u;

	while (i < e) {
		size_t run = i;

		while (run < e && settles(r, run, me))
			run++;
		if (run > i) {
			memset(r->state + i, NTM_CHECK_DURABLE, run - i);
			memcpy(r->durable + i * UNIT,
			       (const void *)(r->base + i * UNIT),
			       (run - i) * UNIT);
			i = run;
		} else {
			i++;
		}
	}
}

static void fence(uint32_t me)
{
	size_t n;
	const struct ntm_interval *v = ranges_view(&n);

	if (pend_overflow || pend_gen != range_gen) {
		for (size_t i = 0; i < n; i++)
			settle(range_at(v, i), 0, range_at(v, i)->units, me);
	} else {
		for (unsigned k = 0; k < npend; k++) {
			/* The ranges the extent meets, from the first up. */
			for (size_t i = ntm_interval_find(v, n, pend[k].lo);
			     i < n && v[i].lo < pend[k].hi; i++) {
				struct range *r = range_at(v, i);
				uintptr_t lo = pend[k].lo, hi = pend[k].hi;

				if (lo < r->base)
					lo = r->base;
				if (hi > r->end)
					hi = r->end;
				if (lo < hi)
					settle(r, (lo - r->base) / UNIT,
					       (hi - r->base + UNIT - 1) / UNIT,
					       me);
			}
		}
	}
	npend = 0;
	pend_overflow = 0;
	pend_gen = range_gen;
}

/*
 * @ev, counted, to the sinks after the model (the crash engine's), with
 * the lock held and this thread's events ignored while they run.
 */
static void pass_on(struct ntm_rec_ev *ev, enum ntm_rec_sink_pos pos)
{
	ev->step = steps;
	suspended = 1;
	ntm_rec_sink_pass(ev, pos);
	suspended = 0;
}

static void model_event(struct ntm_rec_ev *ev, enum ntm_rec_sink_pos pos,
			void *arg)
{
	enum ntm_rec_kind kind = ev->kind;
	uintptr_t lo = (uintptr_t)ev->p, hi;
	const struct ntm_interval *v;
	size_t nv;
	uint32_t me;
	int hit = 0;

	(void)arg;
	/* A mapping's event is the checker's (rec_sink.h): not a store,
	 * write-back or fence of a tracked range, nothing to pass on. */
	if (kind >= NTM_REC_MAP)
		return;
	if (!__atomic_load_n(&recording, __ATOMIC_ACQUIRE) || suspended)
		return;
	me = ntm_thread_number();
	if (kind == NTM_REC_WRITEBACK) {
		/* A write-back acts on the whole line holding p. */
		lo &= ~(uintptr_t)(LINE - 1);
		hi = lo + LINE;
	} else {
		hi = lo + ev->n;
		if (kind != NTM_REC_FENCE && hi <= lo)
			return;
	}

	lock();
	if (kind == NTM_REC_FENCE) {
		steps++;
		/* The crash happens just before the fence takes effect. */
		pass_on(ev, pos);
		fence(me);
		unlock();
		return;
	}
	/* Each range [lo, hi) meets, in address order. */
	v = ranges_view(&nv);
	for (size_t i = ntm_interval_find(v, nv, lo); i < nv && v[i].lo < hi;
	     i++) {
		struct range *r = range_at(v, i);
		uintptr_t a = lo > r->base ? lo : r->base;
		uintptr_t b = hi < r->end ? hi : r->end;

		apply(r, kind, a, b, ev->where, me);
		hit = 1;
	}
	if (hit) {
		steps++;
		pass_on(ev, pos);
	}
	unlock();
}

void ntm_check_store(const void *p, size_t n)
{
	ntm_rec_event(NTM_REC_STORE, p, n, __builtin_return_address(0));
}

/* --- queries --------------------------------------------------------------- */

/* How bad a state is for the messages: dirty worst, then pending. */
static int badness(uint8_t s)
{
	switch (s) {
	case NTM_CHECK_DIRTY:
		return 3;
	case NTM_CHECK_WB:
		return 2;
	case NTM_CHECK_NT:
		return 1;
	default:
		return 0;
	}
}

/* The range holding all of [p, p+n), or NULL; lock held. */
static struct range *range_covering(const void *p, size_t n)
{
	struct range *r = range_of((uintptr_t)p);

	if (!r || !n || (uintptr_t)p + n > r->end || (uintptr_t)p + n < (uintptr_t)p)
		return NULL;
	return r;
}

static void count(struct range *r, const void *p, size_t n,
		  struct ntm_check_counts *c, size_t *bad_unit)
{
	size_t u = ((uintptr_t)p - r->base) / UNIT;
	size_t e = ((uintptr_t)p + n - r->base + UNIT - 1) / UNIT;
	size_t l = (((uintptr_t)p & ~(uintptr_t)(LINE - 1)) - r->line_base) / LINE;
	size_t le = ((uintptr_t)p + n - 1 - r->line_base) / LINE + 1;
	int worst = 0;

	memset(c, 0, sizeof(*c));
	for (size_t i = u; i < e; i++) {
		uint8_t s = r->state[i];
		int b = badness(s);

		c->units[s]++;
		if (b > worst) {
			worst = b;
			*bad_unit = i;
		}
	}
	for (size_t i = l; i < le; i++) {
		c->lines++;
		c->lines_written_back += r->wb[i] != 0;
		c->writebacks += r->wb[i];
	}
	if (worst) {
		c->first_bad = r->base + *bad_unit * UNIT;
		c->first_bad_state = r->state[*bad_unit];
	}
}

int ntm_check_query(const void *p, size_t n, struct ntm_check_counts *out)
{
	struct range *r;
	size_t bad;

	lock();
	r = range_covering(p, n);
	if (r)
		count(r, p, n, out, &bad);
	unlock();
	return r ? 0 : -EINVAL;
}

/*
 * True when no unit of the range is in a state @refuse marks; otherwise
 * the message names the first unit in the worst refused state.
 */
static bool check_states(const void *p, size_t n, const bool refuse[])
{
	struct range *r;
	bool ok = true;

	lock();
	r = range_covering(p, n);
	if (!r) {
		snprintf(message, sizeof(message),
			 "[%p, +%zu) is not inside one tracked range", p, n);
		ok = false;
		goto out;
	}
	size_t u = ((uintptr_t)p - r->base) / UNIT;
	size_t e = ((uintptr_t)p + n - r->base + UNIT - 1) / UNIT;
	size_t bad = 0;
	int worst = 0;

	for (size_t i = u; i < e; i++) {
		uint8_t s = r->state[i];

		if (refuse[s] && badness(s) > worst) {
			worst = badness(s);
			bad = i;
		}
	}
	if (worst) {
		uintptr_t a = r->base + bad * UNIT;
		snprintf(message, sizeof(message),
			 "unit %#lx (offset %ld of [%p, +%zu)) is %s; its line last stored at %p",
			 (unsigned long)a, (long)(a - (uintptr_t)p), p, n,
			 ntm_check_state_name(r->state[bad]),
			 r->where[(a - r->line_base) / LINE]);
		ok = false;
	}
out:
	unlock();
	return ok;
}

bool ntm_check_durable(const void *p, size_t n)
{
	static const bool refuse[NTM_CHECK_NSTATES] = {
		[NTM_CHECK_DIRTY] = true, [NTM_CHECK_WB] = true,
		[NTM_CHECK_NT] = true,
	};

	return check_states(p, n, refuse);
}

bool ntm_check_not_dirty(const void *p, size_t n)
{
	static const bool refuse[NTM_CHECK_NSTATES] = {
		[NTM_CHECK_DIRTY] = true,
	};

	return check_states(p, n, refuse);
}

const char *ntm_check_message(void)
{
	return message;
}

/* --- the crash engine's view ------------------------------------------------- */

int ntm_shadow_view(const void *p, struct ntm_shadow_view *v)
{
	struct ntm_interval found;
	struct range *r;

	/* Lock-free: the crash engine may call this with or without the lock. */
	if (!ntm_interval_lookup(&ranges, (uintptr_t)p, &found))
		return -EINVAL;
	r = found.user;
	v->base = (uint8_t *)r->base;
	v->units = r->units;
	v->durable = r->durable;
	v->state = r->state;
	return 0;
}

