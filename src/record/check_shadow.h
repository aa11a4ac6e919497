/* SPDX-License-Identifier: MIT */
/*
 * check_shadow.h - what the crash engine (crash.c) sees of the recorder's
 * shadow (check.c). Recorder build only; never installed.
 *
 * The recorder keeps, per tracked range, the durable image (what the media
 * holds for units that are CLEAN or DURABLE, and the last durable value of
 * every other unit) and one state byte per 8-byte unit. The live memory of
 * the range is the "new" value of every unit.
 */
#ifndef NTMEM_CHECK_SHADOW_H
#define NTMEM_CHECK_SHADOW_H

#include <stddef.h>
#include <stdint.h>

#include "ntmem/check.h"

struct ntm_shadow_view {
	uint8_t *base;		/* first tracked byte (unit aligned) */
	size_t units;		/* 8-byte units from base */
	const uint8_t *durable;	/* units * 8 bytes: the last durable values */
	const uint8_t *state;	/* units: enum ntm_check_state */
};

/*
 * The view of the tracked range holding @p. Valid until the range is
 * untracked; read it only from a crash hook (the recorder is locked then),
 * or once recording is stopped and no thread tracks or untracks ranges
 * (crash.c's point after the workload). Units' new values are read from
 * live memory: every store primitive records after its instruction.
 * Return: 0 or -EINVAL.
 */
int ntm_shadow_view(const void *p, struct ntm_shadow_view *v);

/*
 * The crash engine learns of the events as the sink after the recorder's
 * (NTM_REC_SINK_CRASH of rec_sink.h): it is passed every recorded event in
 * a tracked range, after the event changed the model, and every fence,
 * before it takes effect (the crash happens "just before the fence took
 * effect"). The recorder lock is held and recording of this thread is
 * suspended while it runs; the event's step counts events from 1 since
 * ntm_check_start().
 */

#endif /* NTMEM_CHECK_SHADOW_H */
