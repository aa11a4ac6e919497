/* SPDX-License-Identifier: MIT */
/*
 * ntmem/hook.h - where the recorder hears about stores, write-backs and
 * fences. Included by the arch headers and the library's store sites.
 *
 * In an ordinary build (NTM_RECORD undefined) NTM_REC() expands to nothing
 * and costs nothing: the installed library and every program built
 * against it are unchanged. In the recorder build (the library target
 * ntmem_check, and programs compiled with -DNTM_RECORD=1 against it) each
 * store, write-back and fence reports to the shadow cache model of
 * ntmem/check.h.
 *
 * The rule that makes the recorder trustworthy: every store, write-back
 * and fence instruction the library executes on a destination exists in
 * exactly one always_inline primitive that also records it (NTM_REC()
 * next to the instruction, in the same function). No call site emits the
 * instruction on its own. So a call site that is deleted (a write-back
 * that is forgotten) takes its record with it, and the recorder sees the
 * line left dirty.
 */
#ifndef NTMEM_HOOK_H
#define NTMEM_HOOK_H

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

/* What one event is. */
enum ntm_rec_kind {
	NTM_REC_STORE = 1,	/* ordinary (cached) store of [p, p+n) */
	NTM_REC_NT = 2,		/* non-temporal store of [p, p+n) */
	NTM_REC_WRITEBACK = 3,	/* write-back (CLWB/CLFLUSHOPT/CLFLUSH, DC CVAP)
				 * of the one cache line holding p */
	NTM_REC_FENCE = 4,	/* SFENCE / DSB: this thread's pending lines
				 * become durable; p and n unused */
};

#ifdef NTM_RECORD
/*
 * Report one event of the calling thread. @where is the code address the
 * event is blamed on (crash reports name it). Defined by the recorder
 * build of the library; safe to call from any thread, any time: events
 * outside tracked ranges, or while recording is stopped, are ignored.
 */
void ntm_rec_event(enum ntm_rec_kind kind, const void *p, size_t n,
		   const void *where);
#define NTM_REC(kind, p, n) \
	ntm_rec_event((kind), (p), (n), __builtin_return_address(0))
#else
#define NTM_REC(kind, p, n) ((void)0)
#endif

#ifdef __cplusplus
}
#endif

#endif /* NTMEM_HOOK_H */
