/* SPDX-License-Identifier: MIT */
/*
 * ntmem/hook.h - where the recorder hears about stores, write-backs and
 * fences, and about the mappings they land in. Included by the arch
 * headers, the library's store sites and the places that map, unmap and
 * msync() pmem (the namespaces, the libpmem and libpmem2 drop-ins).
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
#include <stdint.h>

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
	/*
	 * What happens to a mapping (ntm_rec_mapping(), NTM_REC_MAPPING()):
	 * the checker of `ntmem check` watches and judges by them; the
	 * recorder's model and crash engine ignore them.
	 */
	NTM_REC_MAP = 5,	/* [p, p+n) is a writable shared mapping of a
				 * file whose stores the program must make
				 * durable; detail: struct ntm_rec_map */
	NTM_REC_RULE = 6,	/* [p, p+n), mapped, is judged by a rule
				 * other than its kind's from now on (the
				 * program was told it is pmem); detail:
				 * enum ntm_rec_rule */
	NTM_REC_UNMAP = 7,	/* [p, p+n) is about to be unmapped; detail:
				 * the call unmapping it, a string */
	NTM_REC_SYNC = 8,	/* an msync() of [p, p+n) returned: its pages
				 * are durable, and the mapping is the
				 * program's pmem (as NTM_REC_TOUCH) */
	NTM_REC_TOUCH = 9,	/* a pmem_* call (pmem_is_pmem(), ...) names
				 * [p, p+n) as the program's pmem */
};

/*
 * What makes a store to a mapping durable (ntmem-check(1), DURABILITY
 * RULES):
 *   CPU   its line written back (or NT-stored) and then fenced by the same
 *         thread, or a fence alone in a cpu_cache domain: pmem (DAX with
 *         MAP_SYNC, devdax, a file PMEM_IS_PMEM_FORCE=1 calls pmem, an
 *         emulated namespace whose cache is its medium);
 *   SYNC  the kernel's rule for a page cache: an msync(), fsync() or
 *         fdatasync() covering its page that returns after it. Write-backs
 *         and fences do nothing for it (a file on a disk or tmpfs that
 *         nothing calls pmem; PAGE granularity in libpmem2).
 * An msync() covering a page makes it durable under either rule: on DAX
 * the kernel writes the page's lines back.
 */
enum ntm_rec_rule { NTM_REC_RULE_CPU, NTM_REC_RULE_SYNC };

/* NTM_REC_MAP's detail. */
struct ntm_rec_map {
	const char *path;	/* the file mapped */
	uint64_t off;		/* the file offset of p */
	enum ntm_rec_rule rule;	/* what makes its stores durable */
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

/*
 * Report what happens to the mapping [@p, @p + @n): @kind one of
 * NTM_REC_MAP .. NTM_REC_TOUCH, @detail what the kind says (NULL where it
 * says nothing). Rare events (a map, an unmap, an msync()), so an
 * out-of-line call; safe from any thread, any time: ignored until the
 * checker of `ntmem check` runs.
 */
void ntm_rec_mapping(enum ntm_rec_kind kind, const void *p, size_t n,
		     const void *detail);
#define NTM_REC_MAPPING(kind, p, n, detail) \
	ntm_rec_mapping((kind), (p), (n), (detail))
#else
#define NTM_REC(kind, p, n) ((void)0)
/* Its arguments evaluated for nothing, so that what only it uses is used. */
#define NTM_REC_MAPPING(kind, p, n, detail) \
	((void)(kind), (void)(p), (void)(n), (void)(detail))
#endif

#ifdef __cplusplus
}
#endif

#endif /* NTMEM_HOOK_H */
