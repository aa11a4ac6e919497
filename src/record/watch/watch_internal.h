/* SPDX-License-Identifier: MIT */
/*
 * watch/watch_internal.h - what the files of the checker behind
 * `ntmem check` call of each other (watch.c gives the overview): the
 * report's names and each file's functions. The state they share (the
 * watched ranges and their page records, the lock, the per-thread flags,
 * libc's real functions) and the inline helpers over it are
 * watch_state.h's. Private: only src/record/watch/watch*.c include it.
 */
#ifndef NTMEM_WATCH_INTERNAL_H
#define NTMEM_WATCH_INTERNAL_H

#include <sched.h>
#include <signal.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/types.h>

#include "durability_rules.h"
#include "interval/interval.h"
#include "watch/watch.h"
#include "watch/watch_pmemobj.h"
#include "watch/watch_state.h"

/* Nothing here is exported: no GOT between the checker's files. */
#pragma GCC visibility push(hidden)

/* --- the report's names (<ntmem/check_report.def>; watch_names.c) ------- */

enum rec_type {
#define NTM_CHECK_RECORD(id, name) REC_##id,
#include <ntmem/check_report.def>
};

/* What a line not durable is found to be (BUG_NONE: nothing). */
enum bug_kind {
	BUG_NONE,
#define NTM_CHECK_BUG_KIND(id, name, found, words) BUG_##id,
#include <ntmem/check_report.def>
};

enum bug_when {
#define NTM_CHECK_BUG_WHEN(id, name) WHEN_##id,
#include <ntmem/check_report.def>
};

/* The kinds of performance notes. */
enum perf_kind {
#define NTM_CHECK_PERF_KIND(id, name, words) PERF_##id,
#include <ntmem/check_report.def>
};

enum note_kind {
#define NTM_CHECK_NOTE_KIND(id, name) NOTE_##id,
#include <ntmem/check_report.def>
};

enum end_how {
#define NTM_CHECK_END_HOW(id, name) HOW_##id,
#include <ntmem/check_report.def>
};

/* Each enum's names as the report spells them, indexed by it. */
extern const char *const watch_record_names[];
extern const char *const watch_bug_names[];	/* [BUG_NONE]: NULL */
extern const char *const watch_when_names[];
extern const char *const watch_perf_names[];
extern const char *const watch_note_names[];
extern const char *const watch_how_names[];

/* --- watch.c ------------------------------------------------------------- */

/* A note record: information for the report's reader. */
void watch_note(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void watch_judge_end(const char *point, enum end_how how, int status,
		     int sig);

/* --- watch_pages.c ------------------------------------------------------- */

int watch_page_dirty(struct wrange *r, uintptr_t a, void *const *frames,
		     int nframes);
bool watch_range_read(void *ctx, uint64_t off, void *buf, size_t n);
bool watch_page_is_meta(struct wrange *r, uintptr_t a);

/* --- watch_judge.c ------------------------------------------------------- */

struct bad;

/* Lines found not durable, to be reported together. */
struct bad_list {
	struct bad *v;
	size_t n, cap;
};

int watch_capture(void **frames);
void watch_page_judge(struct wpage *wp, struct bad_list *bl);
void watch_report_all(struct bad_list *bl, enum bug_when when,
		      const struct point *end);
void watch_fence(void);

/* --- watch_perf.c -------------------------------------------------------- */

void watch_perf_count(int kind, uintptr_t lo, uintptr_t hi);
/* The recorder's events start coming (watch_start()): the checker takes
 * its place in the sink list, first (rec_sink.h). */
void watch_events_start(void);
void watch_perf_report(void);
void watch_perf_forget(void);

/* --- watch_maps.c -------------------------------------------------------- */

void watch_drop_records(uintptr_t a, uintptr_t e, struct bad_list *bl,
			struct wpage **gone);
void watch_free_list(struct wpage *wp);
struct wrange *watch_range_new(uintptr_t start, uintptr_t end,
			       const char *path, off_t off, int prot,
			       const struct wtraits *t);
void watch_range_destroy(struct wrange *r);
void watch_restore_prot(const struct wrange *r, uintptr_t a, uintptr_t e);
void watch_note_unwatched(const struct wrange *r, uintptr_t a, uintptr_t e,
			  const char *why);
void watch_ranges_cut(uintptr_t a, uintptr_t e);
void watch_forget(uintptr_t a, uintptr_t e, const char *why);
bool watch_overlaps(uintptr_t a, uintptr_t e);
void watch_discover(uintptr_t a);
void watch_mapped(void *p, size_t n, int prot, int flags, int fd, off_t off);
/* The library's mappings, as its events tell (NTM_REC_MAP .. NTM_REC_TOUCH,
 * ntmem/hook.h, which says what each means; watch_perf.c's sink). */
void watch_map_file(void *p, size_t n, const char *path, off_t off,
		    enum ntm_rec_rule rule);
void watch_set_rule(const void *p, size_t n, enum ntm_rec_rule rule);
void watch_unmapping(const void *p, size_t n, const char *why);
void watch_synced(const void *p, size_t n);
void watch_touched(const void *p, size_t n);
void watch_program_synced(void *p, size_t n);
void watch_file_synced(int fd, bool whole_fs);

/* --- watch_remap.c ------------------------------------------------------- */

int watch_protect(void *p, size_t n, int prot);
void *watch_remap(void *old, size_t olen, size_t nlen, int flags, void *want);

/* --- watch_tx.c ---------------------------------------------------------- */

void watch_tx_fault(uintptr_t a, void *const *frames, int n);
int watch_tx_flush_repeat(uintptr_t lo, uintptr_t hi, int kind);
void watch_pmemobj_tx(enum ntm_watch_obj what, const void *p, size_t n,
		      const char *name);
void watch_pmemobj_lock(const void *l);

/*
 * The performance note that the calling thread's write-back (or
 * non-temporal store) of [lo, hi) earns, given what its lines said (@kind,
 * or -1): none for one made inside a call into libpmemobj's transactions
 * (libpmemobj's own write-backs are its policy, and telling so would take
 * a backtrace per write-back); tx-flush-repeat for the program's own of a
 * range its open transaction added, which the commit writes back again
 * (watch_tx_flush_repeat()). Lock held.
 */
static inline int watch_tx_perf_kind(uintptr_t lo, uintptr_t hi, int kind)
{
	if (watch_obj_depth)
		return -1;
	if (!watch_my_tx)
		return kind;
	return watch_tx_flush_repeat(lo, hi, kind);
}

/* --- watch_signals.c ----------------------------------------------------- */

void watch_on_segv(int sig, siginfo_t *si, void *uc);
int watch_sigmask(int how, const sigset_t *set, sigset_t *old,
		  int (*real)(int, const sigset_t *, sigset_t *));
bool watch_segv_blocked(void);
void watch_thread_start(bool inherit);
void watch_segv_open(void);
int watch_segv_action(const struct sigaction *act, struct sigaction *old);
void watch_fatal_install(void);
const char *watch_signal_name(int sig, char *buf, size_t len);
int watch_signal_action(int sig, const struct sigaction *act,
			struct sigaction *old);
void watch_will_store(void *p, size_t n);
void watch_will_unmap(void *p, size_t n);

#pragma GCC visibility pop

#endif /* NTMEM_WATCH_INTERNAL_H */
