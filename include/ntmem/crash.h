/* SPDX-License-Identifier: MIT */
/*
 * ntmem/crash.h - crash images: every media state a power cut may leave,
 * run through the caller's recovery and invariant.
 *
 * A workload runs under the recorder (ntmem/check.h) on a tracked region.
 * At each crash point (each fence, each write-back, or every N-th store)
 * the media may hold, per DESIGN.md's crash model, every unit that is
 * CLEAN or DURABLE as the recorder saved it, and each unit that is not yet
 * durable (DIRTY, WB or NT) either as it was when last durable or as it
 * is now, independently: 8-byte aligned stores are power-fail atomic, and
 * a dirty line may be written back at any moment. With k such units there
 * are 2^k states: all of them when k <= exhaustive_max, else `samples`
 * seeded random subsets (plus the all-old and all-new states).
 *
 * Each state is materialised in a scratch copy of the region (never the
 * region itself) and handed to check(), which runs recovery on it and
 * tests the invariant. Recording is suspended while check() runs, so it
 * may use any ntmem function on the image, and query the recorder
 * (ntm_check_query() & co.), but not track, untrack, reset, start or stop.
 *
 * Crash points are exact for a workload that stores from one thread (the
 * one that called ntm_crash_run(), or one other at a time): the new value
 * of a unit is read from the region when the point is reached.
 */
#ifndef NTMEM_CRASH_H
#define NTMEM_CRASH_H

#include <stddef.h>
#include <stdint.h>

#include <ntmem/check.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Crash points (ntm_crash_config.points). */
#define NTM_CRASH_AT_FENCE (1u << 0)	/* before each fence takes effect */
#define NTM_CRASH_AT_WRITEBACK (1u << 1)	/* after each write-back */
#define NTM_CRASH_AT_STORE (1u << 2)	/* after every store_every-th store
					 * (ordinary or non-temporal) */

/* ntm_crash_result.first_kind of the point after the workload returned. */
#define NTM_CRASH_END 0

struct ntm_crash_config {
	void *region;			/* tracked by ntm_crash_run() itself;
					 * readable, read-only will do */
	size_t size;
	unsigned points;		/* NTM_CRASH_AT_*; 0 means AT_FENCE */
	unsigned store_every;		/* with AT_STORE; 0 means 1 */
	unsigned exhaustive_max;	/* 0 means 12: up to 4096 states */
	unsigned samples;		/* beyond it; 0 means 256 */
	uint64_t seed;			/* of the samples; 0 means a fixed one */
	/*
	 * Recovery and invariant on one image of the region (a scratch copy,
	 * @size bytes, writable). Return 0 when the state is acceptable,
	 * anything else when it is not: the run records the failure (and
	 * goes on, or stops when stop_at_first).
	 */
	int (*check)(void *image, size_t size, void *arg);
	void *arg;
	int stop_at_first;
	/*
	 * Room to grow without breaking the ABI: bits of @flags and the
	 * reserved words get meanings in later releases, zero meaning what
	 * the library does today. Both must be 0 here (-EINVAL otherwise),
	 * as a config cleared with { 0 } or built with designated
	 * initialisers is. Four words: twice what the config structs grew
	 * by from 0.1 to 0.3 (a callback and its argument, a path and a
	 * count); 32 bytes in a struct passed once per run.
	 */
	unsigned flags;		/* none defined yet */
	uint64_t reserved[4];
};

struct ntm_crash_result {
	uint64_t points;		/* crash points reached */
	uint64_t states;		/* images checked */
	uint64_t failures;		/* images check() refused */
	uint64_t max_pending;		/* most units not yet durable at a point */
	/* The first failure: */
	uint64_t first_point;		/* crash point number, from 1 */
	enum ntm_rec_kind first_kind;	/* the event at that point, or
					 * NTM_CRASH_END */
	uint64_t first_step;		/* its event number, from 1 (0: END) */
	char first_where[160];		/* where in the code, "function+0x.."
					 * or "object+0x.." without a symbol */
	size_t first_pending;		/* units not yet durable there */
	size_t first_units;		/* of those, units that were new */
	uintptr_t first_unit_offsets[8];/* the first of them: byte offsets
					 * from region, ascending */
};

/**
 * ntm_crash_run() - run @workload(@warg) on cfg->region under the
 * recorder and check every crash image at every crash point; then one
 * last point after the workload returns.
 *
 * The region must not be tracked already; it is untracked, and recording
 * stopped, when the call returns. With cfg->stop_at_first the run stops
 * checking at the first failure and lets the workload finish.
 *
 * The run reads the region and never writes it (each image is a scratch
 * copy), so every page of it must be readable, which is checked before
 * anything runs; a read-only region is accepted (recovery of an image
 * mapped read-only, with a workload that stores nothing there: a store
 * to it faults as it would without the run).
 *
 * Return: 0 when every image passed, 1 when some failed (see @res), or
 * -EINVAL (a NULL pointer or size 0, a size that runs past the end of the
 * address space, unknown points, exhaustive_max above 63, a region
 * already tracked, a flag bit or reserved word that is not 0), -EFAULT
 * (a page of the region cannot be read: unmapped, PROT_NONE, or a file
 * mapping past the end of its file), -ENOMEM, -EBUSY (another run is
 * going on: the recorder has one hook). ntm_errmsg() names the argument;
 * a call refused for its arguments, or busy, writes nothing to @res.
 */
int ntm_crash_run(const struct ntm_crash_config *cfg,
		  void (*workload)(void *arg), void *warg,
		  struct ntm_crash_result *res);

/**
 * ntm_crash_report() - print @res as a few lines, for tests and tools
 * @file: a FILE *, or NULL for stderr
 */
void ntm_crash_report(const struct ntm_crash_result *res, void *file);

#ifdef __cplusplus
}
#endif

#endif /* NTMEM_CRASH_H */
