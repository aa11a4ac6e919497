/* SPDX-License-Identifier: MIT */
/*
 * rec_sink.h - where the recorder build's events go: ntm_rec_event()
 * (ntmem/hook.h) hands every store, write-back and fence, ntm_rec_mapping()
 * every map, unmap and msync() of pmem, to an ordered list of sinks
 * (src/record/rec_sink.c). Recorder build only; never installed.
 *
 * The list has one slot per position, and the positions are its order:
 *
 *   NTM_REC_SINK_WATCH  the checker of `ntmem check` (watch/watch_perf.c),
 *                       registered when it starts: it sees every event,
 *                       whether or not the recorder is recording, before
 *                       the recorder's model does; the mappings' events
 *                       are for it alone.
 *   NTM_REC_SINK_MODEL  the recorder's shadow model (check.c), registered
 *                       always. It ignores the mappings' events (its
 *                       ranges are the ones ntm_check_track() names), and
 *                       passes on only the events it counted
 *                       (recording, and a fence or an event in a tracked
 *                       range), with its lock held, the step number set,
 *                       and this thread's recording suspended; a fence is
 *                       passed on before it takes effect in the model.
 *   NTM_REC_SINK_CRASH  the crash engine's points (crash.c), during one
 *                       ntm_crash_run(): what it sees is the model's as
 *                       the model passed it (the view of check_shadow.h is
 *                       stable, a fence is "just about to take effect").
 *
 * Passing on. A sink is called with the event and its own position, and
 * passes the event on to the sinks after it with ntm_rec_sink_pass(), when
 * it chooses to (or not at all): so a sink can hold its lock around the
 * later sinks, or act after them (the model settles a fence after the
 * crash point saw the state before it).
 *
 * Concurrency. Dispatch takes no lock and allocates nothing: events come
 * from any thread and from signal-sensitive paths (the checker's SIGSEGV
 * handler, code interrupted anywhere). It counts itself in one of two
 * counters, the one the epoch names when it begins (an increment, then the
 * epoch read again; all sequentially consistent), so that
 * ntm_rec_sink_unregister() can flip the epoch and wait for the dispatches
 * that might still hold the sink it removed: when it returns, the sink is
 * not running and will not be called again. Register and unregister are
 * serialised by a mutex: never call them from a sink or a signal handler.
 */
#ifndef NTMEM_REC_SINK_H
#define NTMEM_REC_SINK_H

#include <stddef.h>
#include <stdint.h>

#include "ntmem/hook.h"

enum ntm_rec_sink_pos {
	NTM_REC_SINK_WATCH,
	NTM_REC_SINK_MODEL,
	NTM_REC_SINK_CRASH,
	NTM_REC_SINKS
};

/* One event on its way down the list. */
struct ntm_rec_ev {
	enum ntm_rec_kind kind;
	const void *p;		/* NTM_REC_FENCE: unused, as n */
	size_t n;
	const void *where;	/* the code the event is blamed on */
	/* A mapping's event (NTM_REC_MAP ..): what its kind says it
	 * carries (ntmem/hook.h); NULL for the others. */
	const void *detail;
	/* Set by the model for the sinks after it: events it counted, from
	 * 1 since ntm_check_start(); 0 before it. */
	uint64_t step;
};

struct ntm_rec_sink {
	/* @ev: the event, which the sink may annotate for the later ones;
	 * @pos: its position, for ntm_rec_sink_pass(). */
	void (*fn)(struct ntm_rec_ev *ev, enum ntm_rec_sink_pos pos, void *arg);
	void *arg;
};

/*
 * Put @sink (which must stay valid until unregistered) at @pos.
 * Return: 0, -EINVAL (no such position, or no function), -EBUSY (the
 * position holds another sink).
 */
int ntm_rec_sink_register(enum ntm_rec_sink_pos pos,
			  const struct ntm_rec_sink *sink);

/* Empty @pos if it holds @sink; once this returns, @sink is not running. */
void ntm_rec_sink_unregister(enum ntm_rec_sink_pos pos,
			     const struct ntm_rec_sink *sink);

/* @ev to every sink, from the first on (ntm_rec_event()). */
void ntm_rec_sink_dispatch(struct ntm_rec_ev *ev);

/* From a sink at @pos: @ev to the sinks after it. */
void ntm_rec_sink_pass(struct ntm_rec_ev *ev, enum ntm_rec_sink_pos pos);

#endif /* NTMEM_REC_SINK_H */
