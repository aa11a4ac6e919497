/* SPDX-License-Identifier: MIT */
/*
 * interval.h - a table of disjoint address intervals [lo, hi), each with a
 * pointer of its user, whose lookups are lock-free and async-signal-safe
 * (src/interval/interval.c). Never installed.
 *
 * The table is an immutable array sorted by address (a snapshot); a change
 * builds the next snapshot aside and publishes it with one atomic pointer
 * exchange. A reader loads the pointer and binary-searches what it got:
 * O(log n), no lock, no allocation, no system call, so a signal handler may
 * look up while another thread (or the very thread it interrupted, outside
 * a change) changes the table.
 *
 * Who may call what:
 *
 *   readers    ntm_interval_lookup() and ntm_interval_read_begin() ...
 *              ntm_interval_read_end(): from any thread and from signal
 *              handlers, concurrently with a change. Between begin and end
 *              the array stays as it was (a later change is not seen); keep
 *              that short, never block or leave it with longjmp() (a
 *              writer may wait for it). They may nest (a handler reading
 *              while the code it interrupted was reading).
 *   writers    every other function: serialised by the caller's lock
 *              (the table has none), never from a signal handler (they may
 *              allocate and may wait for readers). A writer may also read
 *              the current array with ntm_interval_view() under that lock.
 *
 * Reclamation: a snapshot replaced by a change may still be read. Each
 * table counts its readers between their begin and end, in one of two
 * counters, the one the table's epoch names when the reader begins (an
 * atomic increment, then the epoch read again: a reader that raced a flip
 * steps back and retries; all sequentially consistent with the writer's
 * exchange). A reader that holds an old snapshot was counted before it
 * loaded the pointer, which was before the exchange. A writer that
 * needs a replaced snapshot's buffer flips the epoch and waits for the old
 * epoch's counter to reach 0: readers that begin after the flip count in
 * the other counter and see the new snapshot, so the wait is for the
 * lookups already in flight (a bsearch each), however many readers keep
 * coming. Replaced snapshots are kept in a few spare buffers
 * (NTM_INTERVAL_SPARES) and reused once no reader can hold them: both
 * counters seen at 0, or the wait above. So memory is bounded (the
 * current array and NTM_INTERVAL_SPARES others), and nothing is freed or
 * rewritten under a reader.
 *
 * Errors (0 or -errno, with ntm_error()'s message naming the argument): a
 * change either happens whole or not at all.
 *   -EINVAL   an empty or reversed interval (lo >= hi)
 *   -EEXIST   ntm_interval_insert() of an interval overlapping one present
 *   -ENOMEM   the table's capacity is reached, or no memory for a larger
 *             snapshot. Only a change that grows the table can fail so:
 *             one that removes or trims never allocates and never fails,
 *             and ntm_interval_reserve() makes the next growth by up to
 *             NTM_INTERVAL_RESERVE_MAX intervals infallible too.
 */
#ifndef NTMEM_INTERVAL_H
#define NTMEM_INTERVAL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct ntm_interval {
	uintptr_t lo, hi;	/* [lo, hi), lo < hi */
	void *user;
};

/* Buffers kept beside the current snapshot (for reuse and reservation). */
#define NTM_INTERVAL_SPARES 3
/* The most ntm_interval_reserve() can promise at once. */
#define NTM_INTERVAL_RESERVE_MAX (NTM_INTERVAL_SPARES - 1)

/* A snapshot: private, but read by the inline functions below. */
struct ntm_interval_snap {
	size_t n;		/* intervals in v */
	size_t room;		/* intervals v has room for */
	struct ntm_interval v[];
};

/*
 * One table, zero-initialised or NTM_INTERVAL_TABLE_INIT(cap): empty,
 * holding at most @cap intervals (0: as many as memory allows). Nothing is
 * allocated until the first insert.
 */
struct ntm_interval_table {
	size_t capacity;
	/* private */
	struct ntm_interval_snap *current;	/* NULL: empty */
	unsigned readers[2];	/* readers inside, by the epoch they began in */
	unsigned epoch;		/* 0 or 1: the counter new readers use */
	struct ntm_interval_snap *spare[NTM_INTERVAL_SPARES];
	bool spare_read[NTM_INTERVAL_SPARES];	/* may still be read */
};

#define NTM_INTERVAL_TABLE_INIT(cap) { .capacity = (cap) }

/* --- readers: any thread, signal handlers included --------------------- */

/*
 * The interval holding @a into @out: true, or false when none does.
 * Lock-free and async-signal-safe.
 */
bool ntm_interval_lookup(struct ntm_interval_table *t, uintptr_t a,
			 struct ntm_interval *out);

/* One reader's view, from ntm_interval_read_begin() to its end. */
struct ntm_interval_read {
	const struct ntm_interval *v;	/* sorted and disjoint; NULL: none */
	size_t n;
	unsigned epoch;			/* private */
};

/*
 * The current intervals into @r, valid until ntm_interval_read_end(t, r).
 * Async-signal-safe.
 */
void ntm_interval_read_begin(struct ntm_interval_table *t,
			     struct ntm_interval_read *r);
void ntm_interval_read_end(struct ntm_interval_table *t,
			   const struct ntm_interval_read *r);

/*
 * In the sorted array @v of @n intervals, the index of the first one that
 * ends after @a (hi > a): the one holding @a if any, else the next one up;
 * @n when there is none. Reads only @v: for readers and writers alike.
 *
 * Inline and without a data-dependent branch (the halving is a
 * conditional move): the recorder calls it on every event, mostly over a
 * few ranges, where a mispredicted branch or a call would cost more than
 * the search.
 */
static inline size_t ntm_interval_find(const struct ntm_interval *v, size_t n,
				       uintptr_t a)
{
	const struct ntm_interval *base = v;

	if (!n)
		return 0;
	/* The answer stays within [base, base + n]. */
	while (n > 1) {
		size_t half = n / 2;

		base = base[half].hi <= a ? base + half : base;
		n -= half;
	}
	return (size_t)(base - v) + (base->hi <= a);
}

/* --- writers: serialised by the caller, never in a signal handler ------ */

/* The current intervals under the writers' lock (no reader count). */
static inline const struct ntm_interval *
ntm_interval_view(const struct ntm_interval_table *t, size_t *n)
{
	*n = t->current ? t->current->n : 0;
	return t->current ? t->current->v : NULL;
}

/* Add [@lo, @hi) for @user: 0, -EINVAL, -EEXIST or -ENOMEM. */
int ntm_interval_insert(struct ntm_interval_table *t, uintptr_t lo,
			uintptr_t hi, void *user);

/*
 * Take out the interval holding @a: its user pointer, or NULL when none
 * holds @a (nothing changes). Never fails, never allocates.
 */
void *ntm_interval_remove(struct ntm_interval_table *t, uintptr_t a);

/*
 * Take [@lo, @hi) out of the table: intervals inside it go, those across
 * its ends are trimmed, one around it splits in two (both halves keep its
 * user pointer). Once the change is published, @fn (if not NULL) is called
 * for each interval it touched, as it was, with how many pieces are left
 * of it (0, 1 or 2). 0, -EINVAL, or -ENOMEM (only when it splits an
 * interval: the table grows by one; reserve first if that must not fail).
 */
int ntm_interval_cut(struct ntm_interval_table *t, uintptr_t lo, uintptr_t hi,
		     void (*fn)(void *arg, const struct ntm_interval *was,
				unsigned left),
		     void *arg);

/*
 * ntm_interval_cut(), except that when [@lo, @hi) lies strictly inside one
 * interval the piece above @hi gets @tail_user instead of that interval's
 * pointer, in the same snapshot that trims the piece below: a reader sees
 * the interval whole with its old pointer, or both pieces each with its
 * own, never the tail with the head's. @tail_user NULL drops the tail too
 * (@fn then hears of one piece left). A cut that splits nothing is
 * ntm_interval_cut()'s, and @tail_user is not used.
 */
int ntm_interval_cut_split(struct ntm_interval_table *t, uintptr_t lo,
			   uintptr_t hi, void *tail_user,
			   void (*fn)(void *arg, const struct ntm_interval *was,
				      unsigned left),
			   void *arg);

/*
 * Memory for the table to grow by @more intervals (at most
 * NTM_INTERVAL_RESERVE_MAX) through the changes that follow, under the same
 * hold of the writers' lock: they cannot fail with -ENOMEM except at the
 * capacity. 0, -EINVAL (@more too large) or -ENOMEM.
 */
int ntm_interval_reserve(struct ntm_interval_table *t, size_t more);

/* Free everything; the table is empty again. No reader may be inside. */
void ntm_interval_destroy(struct ntm_interval_table *t);

#endif /* NTMEM_INTERVAL_H */
