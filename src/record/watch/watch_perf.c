// SPDX-License-Identifier: MIT
/*
 * watch_perf.c - the write-backs and non-temporal stores the library's
 * recorder hooks tell the checker of, and the performance notes they earn.
 *
 * Lines. A write-back (or NT store) of a line of a stored-to page copies the
 * line as it is at that moment: what the write-back makes durable at the
 * next fence.
 *
 * Performance notes: a write-back of a line that did not change since it
 * was last durable, and a second write-back of a line with no change
 * between; counted per call site, reported at exit.
 */
#define _GNU_SOURCE
#include <string.h>
#include <unistd.h>

#include "rec_sink.h"
#include "watch/watch_internal.h"
#include "watch/watch_report.h"

/* Distinct call sites the performance notes keep apart. */
#define MAX_PERF 256

struct perf {
	int kind;		/* enum perf_kind */
	const void *site;	/* the first frame outside the library */
	const void *entry;	/* its call into libpmemobj, or NULL */
	bool own;		/* libpmemobj's own doing (watch_obj_own_call()) */
	int nframes;
	void *frames[MAX_FRAMES];
	uint64_t count;
};


static struct perf perf[MAX_PERF];
static unsigned nperf;
static uint64_t perf_dropped;

/* The counts start again (a child of fork()'s: the parent's are its own). */
void watch_perf_forget(void)
{
	nperf = 0;
	perf_dropped = 0;
}

/*
 * The calling thread's last noted write-back: the write-backs of one call
 * (a pmem_persist() of a range flushes it line by line) come in a run of
 * consecutive lines with no fence between, and are counted at the site
 * the run's first one found, without a backtrace each: pmemobj_create()
 * writes back megabytes of unchanged lanes.
 */
static __thread struct perf_run {
	uintptr_t next;		/* where the run's next line starts */
	uint64_t fences;	/* my_fences when it started */
	unsigned slot;		/* in perf[]; nperf or more: none */
	int kind;
} perf_run __attribute__((tls_model("initial-exec")));

/* A performance event of @kind at a write-back of [lo, hi). */
void watch_perf_count(int kind, uintptr_t lo, uintptr_t hi)
{
	void *frames[MAX_FRAMES];
	int n;
	const void *site = NULL, *entry = NULL;
	struct perf_run *run = &perf_run;
	unsigned i;

	watch_lock();
	if (run->next == lo && lo && run->kind == kind &&
	    run->fences == watch_my_fences && run->slot < nperf &&
	    perf[run->slot].kind == kind) {
		perf[run->slot].count++;
		run->next = hi;
		watch_unlock();
		return;
	}
	watch_unlock();
	n = watch_capture(frames);
	for (int f = 0; f < n && !site; f++)
		if (!watch_frame_ours(frames[f])) {
			site = frames[f];
			entry = watch_obj_entry(frames + f, n - f);
		}
	watch_lock();
	for (i = 0; i < nperf; i++)
		if (perf[i].kind == kind && perf[i].site == site &&
		    perf[i].entry == entry)
			break;
	if (i < nperf) {
		perf[i].count++;
	} else if (nperf < MAX_PERF) {
		perf[nperf] = (struct perf){ .kind = kind, .site = site,
					     .entry = entry,
					     .own = watch_obj_own_call(entry),
					     .nframes = n, .count = 1 };
		memcpy(perf[nperf].frames, frames, sizeof(void *) * (size_t)n);
		nperf++;
	} else {
		perf_dropped++;
	}
	*run = (struct perf_run){ .next = hi, .fences = watch_my_fences, .slot = i,
				  .kind = kind };
	watch_unlock();
}

/* A write-back (one line) or an NT store (any bytes) hit [lo, hi). */
static void written_back(enum ntm_rec_kind kind, uintptr_t lo, uintptr_t hi)
{
	uint32_t me = watch_thread_number();
	uintptr_t unknown = 0;
	int perf_kind = -1;

	watch_lock();
	for (uintptr_t a = lo & ~(uintptr_t)(LINE - 1); a < hi; a += LINE) {
		struct wrange *r = watch_range_of(a);
		const uint8_t *now;
		struct wpage *wp;
		unsigned l;

		if (!r) {
			unknown = a;
			continue;
		}
		r->t.adopted = true;	/* the program persists it: pmem */
		/* Behind a page cache a write-back makes nothing durable. */
		if (r->t.sync_rule)
			continue;
		wp = *watch_slot_of(r, a);
		if (!wp) {
			/* Write-protected: not stored since it was durable. */
			if (kind == NTM_REC_WRITEBACK)
				perf_kind = PERF_UNCHANGED;
			continue;
		}
		/* The next fence of the page's thread settles it. */
		watch_list_move(wp, LIST_ACTIVE);
		l = (unsigned)((a - wp->addr) / LINE);
		now = watch_page_now(wp);
		if (kind == NTM_REC_WRITEBACK) {
			if (watch_line_is(now, l, wp->image))
				perf_kind = PERF_UNCHANGED;
			else if ((wp->wb & (1ull << l)) && watch_line_is(now, l, wp->wbdata))
				perf_kind = PERF_REPEATED;
		}
		memcpy(wp->wbdata + l * LINE, now + l * LINE, LINE);
		wp->wb |= 1ull << l;
		wp->wb_thread[l] = me;
	}
	perf_kind = watch_tx_perf_kind(lo, hi, perf_kind);
	watch_unlock();
	if (perf_kind >= 0)
		watch_perf_count(perf_kind, lo & ~(uintptr_t)(LINE - 1),
			   (hi + LINE - 1) & ~(uintptr_t)(LINE - 1));
	if (unknown)
		watch_discover(unknown);
}

static void watch_event(enum ntm_rec_kind kind, const void *p, size_t n)
{
	uintptr_t lo = (uintptr_t)p;

	if (watch_inside)
		return;
	watch_inside = 1;
	switch (kind) {
	case NTM_REC_FENCE:
		watch_fence();
		break;
	case NTM_REC_WRITEBACK:
		written_back(kind, lo, (lo | (LINE - 1)) + 1);
		break;
	case NTM_REC_NT:
		if (lo + n > lo)
			written_back(kind, lo, lo + n);
		break;
	case NTM_REC_STORE:
		break;	/* the page fault saw the first one */
	default:
		break;	/* a mapping's: watch_mapping_event() */
	}
	watch_inside = 0;
}

/* A mapping's event (ntmem/hook.h says what each carries). */
static void watch_mapping_event(const struct ntm_rec_ev *ev)
{
	void *p = (void *)ev->p;
	const struct ntm_rec_map *m = ev->detail;

	switch (ev->kind) {
	case NTM_REC_MAP:
		watch_map_file(p, ev->n, m->path, (off_t)m->off, m->rule);
		break;
	case NTM_REC_RULE:
		watch_set_rule(p, ev->n, *(const enum ntm_rec_rule *)ev->detail);
		break;
	case NTM_REC_UNMAP:
		watch_unmapping(p, ev->n, ev->detail);
		break;
	case NTM_REC_SYNC:
		watch_synced(p, ev->n);
		break;
	case NTM_REC_TOUCH:
		watch_touched(p, ev->n);
		break;
	default:
		break;
	}
}

/* Every event, before the recorder's model: it passes them all on (the
 * model lets the mappings' events by). */
static void watch_sink_event(struct ntm_rec_ev *ev, enum ntm_rec_sink_pos pos,
			     void *arg)
{
	(void)arg;
	/* Off again once the end was judged (watch_judge_end()). */
	if (NTM_WATCH_ON()) {
		if (ev->kind >= NTM_REC_MAP)
			watch_mapping_event(ev);
		else
			watch_event(ev->kind, ev->p, ev->n);
	}
	ntm_rec_sink_pass(ev, pos);
}

static const struct ntm_rec_sink watch_sink = { watch_sink_event, NULL };

void watch_events_start(void)
{
	if (ntm_rec_sink_register(NTM_REC_SINK_WATCH, &watch_sink))
		watch_note("cannot take the first place among the recorder's "
			   "event sinks: write-backs and fences are not seen");
}

void watch_perf_report(void)
{
	for (unsigned i = 0; i < nperf; i++) {
		struct wrec w;

		/* libpmemobj's own write-backs are its policy, not the
		 * program's to change (ntmem-check(1), LIBPMEMOBJ). */
		if (perf[i].own)
			continue;
		wrec_begin(&w, watch_record_names[REC_PERF]);
		wrec_str(&w, "kind", watch_perf_names[perf[i].kind]);
		wrec_num(&w, "count", perf[i].count);
		wrec_frames(&w, "site", perf[i].frames, perf[i].nframes);
		wrec_num(&w, "pid", (uint64_t)getpid());
		wrec_emit(&w, watch_report_fd);
	}
	if (perf_dropped)
		watch_note("%llu performance events at more than %u call sites were "
		     "not kept apart", (unsigned long long)perf_dropped, MAX_PERF);
}

