// SPDX-License-Identifier: MIT
/*
 * rec_sink.c - the recorder build's one event door (ntm_rec_event() and
 * ntm_rec_mapping() of ntmem/hook.h) and the ordered list of sinks it
 * feeds (rec_sink.h): one atomic pointer per position, read without a
 * lock, and the two counters of dispatches in flight that let a sink be
 * removed safely.
 */
#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <stdbool.h>

#include "rec_sink.h"

static const struct ntm_rec_sink *sinks[NTM_REC_SINKS];
/* Dispatches in flight, in the counter the epoch named when they began. */
static unsigned long inflight[2];
static unsigned epoch;
/* Serialises register and unregister (the epoch flips and waits). */
static pthread_mutex_t change = PTHREAD_MUTEX_INITIALIZER;

int ntm_rec_sink_register(enum ntm_rec_sink_pos pos,
			  const struct ntm_rec_sink *sink)
{
	const struct ntm_rec_sink *none = NULL;
	int ret = 0;

	if ((unsigned)pos >= NTM_REC_SINKS || !sink || !sink->fn)
		return -EINVAL;
	pthread_mutex_lock(&change);
	if (!__atomic_compare_exchange_n(&sinks[pos], &none, sink, false,
					 __ATOMIC_SEQ_CST, __ATOMIC_SEQ_CST))
		ret = -EBUSY;
	pthread_mutex_unlock(&change);
	return ret;
}

void ntm_rec_sink_unregister(enum ntm_rec_sink_pos pos,
			     const struct ntm_rec_sink *sink)
{
	const struct ntm_rec_sink *want = sink;
	unsigned old;

	if ((unsigned)pos >= NTM_REC_SINKS || !sink)
		return;
	pthread_mutex_lock(&change);
	if (__atomic_compare_exchange_n(&sinks[pos], &want, NULL, false,
					__ATOMIC_SEQ_CST, __ATOMIC_SEQ_CST)) {
		/*
		 * A dispatch that begins after the flip counts in the other
		 * counter and loads the empty slot; the ones in the old
		 * counter may hold the sink: wait for them (each is one
		 * event, so this ends however many keep coming).
		 */
		old = __atomic_fetch_add(&epoch, 1, __ATOMIC_SEQ_CST) & 1;
		while (__atomic_load_n(&inflight[old], __ATOMIC_SEQ_CST))
			sched_yield();
	}
	pthread_mutex_unlock(&change);
}

/* @ev to the first sink at @first or after it. */
static void pass_from(struct ntm_rec_ev *ev, unsigned first)
{
	for (unsigned i = first; i < NTM_REC_SINKS; i++) {
		const struct ntm_rec_sink *s =
			__atomic_load_n(&sinks[i], __ATOMIC_SEQ_CST);

		if (s) {
			/* That sink passes it on further, if it will. */
			s->fn(ev, (enum ntm_rec_sink_pos)i, s->arg);
			return;
		}
	}
}

void ntm_rec_sink_pass(struct ntm_rec_ev *ev, enum ntm_rec_sink_pos pos)
{
	pass_from(ev, (unsigned)pos + 1);
}

void ntm_rec_sink_dispatch(struct ntm_rec_ev *ev)
{
	unsigned e;

	for (;;) {
		e = __atomic_load_n(&epoch, __ATOMIC_SEQ_CST) & 1;
		__atomic_fetch_add(&inflight[e], 1, __ATOMIC_SEQ_CST);
		if ((__atomic_load_n(&epoch, __ATOMIC_SEQ_CST) & 1) == e)
			break;
		/* Raced a flip: count in the epoch's counter instead. */
		__atomic_fetch_sub(&inflight[e], 1, __ATOMIC_SEQ_CST);
	}
	pass_from(ev, 0);
	__atomic_fetch_sub(&inflight[e], 1, __ATOMIC_SEQ_CST);
}

void ntm_rec_event(enum ntm_rec_kind kind, const void *p, size_t n,
		   const void *where)
{
	struct ntm_rec_ev ev = { .kind = kind, .p = p, .n = n,
				 .where = where };

	/* The checker of ntmem check, the model, the crash engine, in
	 * this order (rec_sink.h). */
	ntm_rec_sink_dispatch(&ev);
}

void ntm_rec_mapping(enum ntm_rec_kind kind, const void *p, size_t n,
		     const void *detail)
{
	struct ntm_rec_ev ev = { .kind = kind, .p = p, .n = n,
				 .where = __builtin_return_address(0),
				 .detail = detail };

	/* The same list: the checker takes them, the model lets them by. */
	ntm_rec_sink_dispatch(&ev);
}
