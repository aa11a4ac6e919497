// SPDX-License-Identifier: MIT
/*
 * interval.c - the interval table of interval.h: sorted immutable
 * snapshots, published with one atomic exchange, read by binary search,
 * their buffers reused once no reader can hold them.
 *
 * Buffers: the current snapshot and up to NTM_INTERVAL_SPARES spares.
 * A change takes a spare large enough, writes the next snapshot into it
 * (no reader sees a spare), exchanges it for the current one, and puts the
 * old one where the spare was, marked as possibly read. Marks are cleared
 * whenever the writer reads the reader count as 0.
 *
 * Why a removal never fails: a growing change first makes sure two spares
 * can hold the grown table, and uses one; every change puts the old
 * snapshot back as a spare. So after any change a spare holds at least as
 * many intervals as the table has, which is all a change that does not
 * grow needs.
 */
#include <errno.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>

#include "error.h"
#include "interval/interval.h"

/* --- readers ------------------------------------------------------------- */

void ntm_interval_read_begin(struct ntm_interval_table *t,
			     struct ntm_interval_read *r)
{
	struct ntm_interval_snap *s;
	unsigned e;

	/*
	 * Counted in the epoch's counter before the load, all sequentially
	 * consistent: a writer that exchanged the pointer after this load
	 * and then flips the epoch waits for this counter. If the epoch
	 * flipped between its read and the increment, the writer may have
	 * looked at this counter already: step back, count in the new one.
	 */
	for (;;) {
		e = __atomic_load_n(&t->epoch, __ATOMIC_SEQ_CST);
		__atomic_fetch_add(&t->readers[e], 1, __ATOMIC_SEQ_CST);
		if (__atomic_load_n(&t->epoch, __ATOMIC_SEQ_CST) == e)
			break;
		__atomic_fetch_sub(&t->readers[e], 1, __ATOMIC_RELEASE);
	}
	s = __atomic_load_n(&t->current, __ATOMIC_SEQ_CST);
	r->v = s ? s->v : NULL;
	r->n = s ? s->n : 0;
	r->epoch = e;
}

void ntm_interval_read_end(struct ntm_interval_table *t,
			   const struct ntm_interval_read *r)
{
	/* Release: the reads above happen before a writer reuses the buffer. */
	__atomic_fetch_sub(&t->readers[r->epoch], 1, __ATOMIC_RELEASE);
}

bool ntm_interval_lookup(struct ntm_interval_table *t, uintptr_t a,
			 struct ntm_interval *out)
{
	struct ntm_interval_read r;
	size_t i;
	bool found;

	ntm_interval_read_begin(t, &r);
	i = ntm_interval_find(r.v, r.n, a);
	found = i < r.n && r.v[i].lo <= a;
	if (found)
		*out = r.v[i];
	ntm_interval_read_end(t, &r);
	return found;
}

/* --- the writers' buffers ------------------------------------------------ */

/* No reader is inside now: every spare is free to be written. */
static bool readers_gone(struct ntm_interval_table *t)
{
	if (__atomic_load_n(&t->readers[0], __ATOMIC_SEQ_CST) ||
	    __atomic_load_n(&t->readers[1], __ATOMIC_SEQ_CST))
		return false;
	memset(t->spare_read, 0, sizeof(t->spare_read));
	return true;
}

/*
 * Wait until no reader can hold a replaced snapshot: flip the epoch and
 * wait for the readers of the old one. Those never block, and new readers
 * count in the new epoch (and see the current snapshot), so this ends
 * after the lookups in flight now.
 */
static void drain(struct ntm_interval_table *t)
{
	unsigned old = t->epoch;

	if (readers_gone(t))
		return;
	__atomic_store_n(&t->epoch, !old, __ATOMIC_SEQ_CST);
	while (__atomic_load_n(&t->readers[old], __ATOMIC_SEQ_CST))
		sched_yield();
	memset(t->spare_read, 0, sizeof(t->spare_read));
}

/* Room for a buffer that must hold @m intervals: some to grow into. */
static size_t room_for(const struct ntm_interval_table *t, size_t m)
{
	size_t room = m < 4 ? 4 : m + m / 2;

	if (t->capacity && room > t->capacity)
		room = t->capacity > m ? t->capacity : m;
	return room;
}

/* At least @count spares with room for @m intervals: 0 or -ENOMEM. */
static int ensure(struct ntm_interval_table *t, size_t m, unsigned count)
{
	unsigned have = 0;

	for (unsigned i = 0; i < NTM_INTERVAL_SPARES; i++)
		have += t->spare[i] && t->spare[i]->room >= m;
	while (have < count) {
		struct ntm_interval_snap *s;
		unsigned small = NTM_INTERVAL_SPARES;

		/* The emptiest slot, or the spare with the least room. */
		for (unsigned i = 0; i < NTM_INTERVAL_SPARES; i++) {
			if (t->spare[i] && t->spare[i]->room >= m)
				continue;
			if (small == NTM_INTERVAL_SPARES || !t->spare[i] ||
			    (t->spare[small] &&
			     t->spare[i]->room < t->spare[small]->room))
				small = i;
		}
		if (m > (SIZE_MAX - sizeof(*s)) / sizeof(s->v[0]))
			return -ENOMEM;
		s = malloc(sizeof(*s) + room_for(t, m) * sizeof(s->v[0]));
		if (!s)
			return -ENOMEM;
		s->n = 0;
		s->room = room_for(t, m);
		if (t->spare[small] && t->spare_read[small])
			drain(t);	/* a reader may hold the one it replaces */
		free(t->spare[small]);
		t->spare[small] = s;
		t->spare_read[small] = false;
		have++;
	}
	return 0;
}

/*
 * The spare to write a snapshot of @m intervals into, waiting for readers
 * if it may still be read: its slot, or -1 when none has the room.
 */
static int take(struct ntm_interval_table *t, size_t m)
{
	int best = -1;

	readers_gone(t);
	for (int i = 0; i < NTM_INTERVAL_SPARES; i++) {
		const struct ntm_interval_snap *s = t->spare[i];

		if (!s || s->room < m)
			continue;
		/* Unread first, then the least room: big ones stay reserved. */
		if (best < 0 || (t->spare_read[best] && !t->spare_read[i]) ||
		    (t->spare_read[best] == t->spare_read[i] &&
		     s->room < t->spare[best]->room))
			best = i;
	}
	if (best >= 0 && t->spare_read[best])
		drain(t);
	return best;
}

/* The snapshot in spare @slot becomes current; the old one its spare. */
static void publish(struct ntm_interval_table *t, int slot)
{
	struct ntm_interval_snap *next = t->spare[slot];

	t->spare[slot] = __atomic_exchange_n(&t->current, next, __ATOMIC_SEQ_CST);
	t->spare_read[slot] = t->spare[slot] != NULL;
	readers_gone(t);
}

/* --- changes --------------------------------------------------------------- */

/* @k intervals from @src[@from]: none, and no pointer arithmetic, from
 * the NULL array of an empty table (NULL + 0 is undefined too). */
static void copy_intervals(struct ntm_interval *dst,
			   const struct ntm_interval *src, size_t from, size_t k)
{
	if (k)
		memcpy(dst, src + from, k * sizeof(*src));
}

/* Grow to @m intervals: capacity and memory; 0 or -ENOMEM, named. */
static int grow(struct ntm_interval_table *t, size_t m, uintptr_t lo,
		uintptr_t hi)
{
	if (t->capacity && m > t->capacity)
		return ntm_error(-ENOMEM, "interval [%#lx, %#lx): the table's "
				 "capacity of %zu intervals is reached",
				 (unsigned long)lo, (unsigned long)hi,
				 t->capacity);
	if (ensure(t, m, 2))
		return ntm_error(-ENOMEM, "interval [%#lx, %#lx): no memory "
				 "for %zu intervals", (unsigned long)lo,
				 (unsigned long)hi, m);
	return 0;
}

static int check_order(uintptr_t lo, uintptr_t hi)
{
	if (lo >= hi)
		return ntm_error(-EINVAL, "interval [%#lx, %#lx): lo must be "
				 "below hi", (unsigned long)lo,
				 (unsigned long)hi);
	return 0;
}

int ntm_interval_insert(struct ntm_interval_table *t, uintptr_t lo,
			uintptr_t hi, void *user)
{
	size_t n, i;
	const struct ntm_interval *v = ntm_interval_view(t, &n);
	struct ntm_interval_snap *s;
	int err, slot;

	err = check_order(lo, hi);
	if (err)
		return err;
	i = ntm_interval_find(v, n, lo);
	if (i < n && v[i].lo < hi)
		return ntm_error(-EEXIST, "interval [%#lx, %#lx) overlaps "
				 "[%#lx, %#lx)", (unsigned long)lo,
				 (unsigned long)hi, (unsigned long)v[i].lo,
				 (unsigned long)v[i].hi);
	err = grow(t, n + 1, lo, hi);
	if (err)
		return err;
	slot = take(t, n + 1);
	s = t->spare[slot];
	copy_intervals(s->v, v, 0, i);
	s->v[i] = (struct ntm_interval){ .lo = lo, .hi = hi, .user = user };
	copy_intervals(s->v + i + 1, v, i, n - i);
	s->n = n + 1;
	publish(t, slot);
	return 0;
}

void *ntm_interval_remove(struct ntm_interval_table *t, uintptr_t a)
{
	size_t n, i;
	const struct ntm_interval *v = ntm_interval_view(t, &n);
	struct ntm_interval_snap *s;
	void *user;
	int slot;

	i = ntm_interval_find(v, n, a);
	if (i == n || v[i].lo > a)
		return NULL;
	user = v[i].user;
	slot = take(t, n - 1);	/* never -1: see the top of the file */
	s = t->spare[slot];
	copy_intervals(s->v, v, 0, i);
	copy_intervals(s->v + i, v, i + 1, n - i - 1);
	s->n = n - 1;
	publish(t, slot);
	return user;
}

/*
 * Both cuts: @renew says a split's tail takes @tail_user (and goes when it
 * is NULL) rather than keeping the pointer of the interval it came from.
 */
static int cut(struct ntm_interval_table *t, uintptr_t lo, uintptr_t hi,
	       bool renew, void *tail_user,
	       void (*fn)(void *arg, const struct ntm_interval *was,
			  unsigned left),
	       void *arg)
{
	size_t n, i, j, m;
	const struct ntm_interval *v = ntm_interval_view(t, &n);
	struct ntm_interval_snap *s;
	bool head, tail;
	int err, slot;

	err = check_order(lo, hi);
	if (err)
		return err;
	i = ntm_interval_find(v, n, lo);
	for (j = i; j < n && v[j].lo < hi; j++)
		;
	if (i == j)
		return 0;
	head = v[i].lo < lo;		/* [v[i].lo, lo) stays */
	tail = v[j - 1].hi > hi;	/* [hi, v[j-1].hi) stays */
	renew = renew && head && tail && j == i + 1;
	if (renew && !tail_user)
		tail = false;
	m = n - (j - i) + head + tail;
	if (m > n) {
		err = grow(t, m, lo, hi);
		if (err)
			return err;
	}
	slot = take(t, m);
	s = t->spare[slot];
	copy_intervals(s->v, v, 0, i);
	s->n = i;
	if (head)
		s->v[s->n++] = (struct ntm_interval){ v[i].lo, lo, v[i].user };
	if (tail)
		s->v[s->n++] = (struct ntm_interval){
			hi, v[j - 1].hi, renew ? tail_user : v[j - 1].user };
	copy_intervals(s->v + s->n, v, j, n - j);
	s->n += n - j;
	publish(t, slot);
	/* v is the old snapshot, now a spare nobody writes until the next change. */
	for (size_t k = i; fn && k < j; k++)
		fn(arg, &v[k], (k == i && head) + (k == j - 1 && tail));
	return 0;
}

int ntm_interval_cut(struct ntm_interval_table *t, uintptr_t lo, uintptr_t hi,
		     void (*fn)(void *arg, const struct ntm_interval *was,
				unsigned left),
		     void *arg)
{
	return cut(t, lo, hi, false, NULL, fn, arg);
}

int ntm_interval_cut_split(struct ntm_interval_table *t, uintptr_t lo,
			   uintptr_t hi, void *tail_user,
			   void (*fn)(void *arg, const struct ntm_interval *was,
				      unsigned left),
			   void *arg)
{
	return cut(t, lo, hi, true, tail_user, fn, arg);
}

int ntm_interval_reserve(struct ntm_interval_table *t, size_t more)
{
	size_t n, m;

	if (more > NTM_INTERVAL_RESERVE_MAX)
		return ntm_error(-EINVAL, "more %zu: at most %d intervals can "
				 "be reserved", more, NTM_INTERVAL_RESERVE_MAX);
	ntm_interval_view(t, &n);
	m = n + more;
	if (t->capacity && m > t->capacity)
		m = t->capacity > n ? t->capacity : n;
	/* A growth by one uses one of them and needs another after it. */
	if (ensure(t, m, (unsigned)more + 1))
		return ntm_error(-ENOMEM, "more %zu: no memory for %zu "
				 "intervals", more, m);
	return 0;
}

void ntm_interval_destroy(struct ntm_interval_table *t)
{
	free(t->current);
	t->current = NULL;
	for (unsigned i = 0; i < NTM_INTERVAL_SPARES; i++) {
		free(t->spare[i]);
		t->spare[i] = NULL;
		t->spare_read[i] = false;
	}
}
