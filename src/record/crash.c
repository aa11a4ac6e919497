// SPDX-License-Identifier: MIT
/*
 * crash.c - crash images: at each crash point of a recorded workload,
 * every media state the crash model allows (ntmem/crash.h), each handed
 * to the caller's check.
 *
 * Cost model. A state is one scratch image of the region. Between two
 * states only pending units (DIRTY, WB or NT) differ, so the engine keeps
 * a "master" image that it updates in place, one 8-byte unit at a time:
 * in Gray-code order for the exhaustive case (exactly one unit flips per
 * state), each pending unit from its random bit for samples. check() may
 * write its image (recovery does), so it gets a fresh copy of the master
 * each time: one memcpy of the region per state, no allocation. Buffers
 * are allocated once per run. Measured: about 10 ns per state for a
 * 256-byte region, 36 ns for 4 KiB; beyond ~16 KiB the copy dominates.
 *
 * Locking. Points are reached from the recorder's sink list, which
 * passes events on to this engine's sink (rec_sink.h) with
 * the recorder locked and recording of the calling thread suspended
 * (check_shadow.h): the shadow view is stable, and whatever check() does
 * with ntmem functions is not recorded. The last point, after the
 * workload, runs with recording stopped.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "config_check.h"
#include "check_shadow.h"
#include "error.h"
#include "ntmem/crash.h"
#include "rec_sink.h"

#define UNIT NTM_CHECK_UNIT

#define DEFAULT_EXHAUSTIVE_MAX 12
#define DEFAULT_SAMPLES 256
/* Any fixed value: a run with seed 0 is reproducible. */
#define DEFAULT_SEED 0x6e746d2d63726173ull

/* One run; only the hook and ntm_crash_run() touch it. */
struct run {
	const struct ntm_crash_config *cfg;
	struct ntm_crash_result *res;
	unsigned exhaustive_max;
	unsigned samples;
	unsigned store_every;
	uint64_t seed;
	uint64_t stores;	/* store events seen, for AT_STORE */

	uint8_t *base;		/* first tracked byte: region rounded down */
	size_t units;		/* units from base that overlap the region */
	size_t skew;		/* region - base, 0..7 */
	uint8_t *master;	/* the state being enumerated, units * 8 */
	uint8_t *image;		/* what check() gets: a copy of master */
	size_t *pend;		/* indexes of the units pending at this point */
	uint8_t *isnew;		/* per pending unit: 1 when master holds new */
	const uint8_t *durable;	/* the view's, valid during one point */

	bool done;		/* stop_at_first met: no further points */
	int err;		/* the view failed inside the hook */
};

/* Only one run at a time: the sink list has one place for the engine. */
static atomic_flag running = ATOMIC_FLAG_INIT;

/* splitmix64: tiny, statistically fine for picking subsets. */
static uint64_t next_random(uint64_t *s)
{
	uint64_t z = (*s += 0x9e3779b97f4a7c15ull);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	return z ^ (z >> 31);
}

/* Flip pending unit @j between its durable and its live value. */
static inline void toggle(struct run *r, size_t j)
{
	size_t off = r->pend[j] * UNIT;

	r->isnew[j] ^= 1;
	memcpy(r->master + off, (r->isnew[j] ? r->base : r->durable) + off,
	       UNIT);
}

static void name_where(char *buf, size_t len, const void *where)
{
	Dl_info info;

	if (!where) {
		snprintf(buf, len, "(end of workload)");
		return;
	}
	if (dladdr(where, &info) && info.dli_sname && info.dli_saddr) {
		snprintf(buf, len, "%s+0x%tx", info.dli_sname,
			 (const char *)where - (const char *)info.dli_saddr);
	} else if (info.dli_fname && info.dli_fbase) {
		/* No symbol (static function, executable without
		 * -rdynamic): the object and the offset in it still let
		 * addr2line find the line. */
		const char *slash = strrchr(info.dli_fname, '/');

		snprintf(buf, len, "%s+0x%tx",
			 slash ? slash + 1 : info.dli_fname,
			 (const char *)where - (const char *)info.dli_fbase);
	} else {
		snprintf(buf, len, "%p", where);
	}
}

static void note_failure(struct run *r, size_t k, enum ntm_rec_kind kind,
			 const void *where, uint64_t step)
{
	struct ntm_crash_result *res = r->res;
	size_t n = 0;

	res->first_point = res->points;
	res->first_kind = kind;
	res->first_step = step;
	res->first_pending = k;
	name_where(res->first_where, sizeof(res->first_where), where);
	for (size_t j = 0; j < k; j++) {
		uintptr_t off;

		if (!r->isnew[j])
			continue;
		/* From the region's first byte: the first unit may start
		 * before it when the region is not 8-byte aligned. */
		off = r->pend[j] * UNIT;
		off = off > r->skew ? off - r->skew : 0;
		if (n < sizeof(res->first_unit_offsets) /
			    sizeof(res->first_unit_offsets[0]))
			res->first_unit_offsets[n] = off;
		n++;
	}
	res->first_units = n;
}

/* Check the master image as it is now. Return true to stop enumerating. */
static bool try_state(struct run *r, size_t k, enum ntm_rec_kind kind,
		      const void *where, uint64_t step)
{
	const struct ntm_crash_config *cfg = r->cfg;
	int bad;

	memcpy(r->image, r->master, r->units * UNIT);
	bad = cfg->check(r->image + r->skew, cfg->size, cfg->arg);
	r->res->states++;
	if (!bad)
		return false;
	if (!r->res->failures++)
		note_failure(r, k, kind, where, step);
	if (cfg->stop_at_first)
		r->done = true;
	return r->done;
}

/* All 2^k states, each one unit flip away from the one before. */
static void enumerate_all(struct run *r, size_t k, enum ntm_rec_kind kind,
			  const void *where, uint64_t step)
{
	uint64_t n = (uint64_t)1 << k;

	if (try_state(r, k, kind, where, step))
		return;
	for (uint64_t i = 1; i < n; i++) {
		/* Gray code: state i differs from state i-1 in bit ctz(i). */
		toggle(r, (size_t)__builtin_ctzll(i));
		if (try_state(r, k, kind, where, step))
			return;
	}
}

/*
 * All-old, all-new, then r->samples random subsets. The generator is
 * seeded per point, so the states of one point do not depend on how many
 * points came before it with other configurations of `points`.
 */
static void enumerate_sampled(struct run *r, size_t k, enum ntm_rec_kind kind,
			      const void *where, uint64_t step)
{
	uint64_t s = r->seed ^ (r->res->points * 0xd1342543de82ef95ull);

	if (try_state(r, k, kind, where, step))
		return;
	for (size_t j = 0; j < k; j++)
		toggle(r, j);
	if (try_state(r, k, kind, where, step))
		return;
	for (unsigned i = 0; i < r->samples; i++) {
		uint64_t bits = 0;

		/*
		 * Every unit is rewritten without a branch: half of them
		 * change, at random, and a branch on a random bit would be
		 * mispredicted half the time (3x slower at k = 500).
		 */
		for (size_t j = 0; j < k; j++) {
			size_t off = r->pend[j] * UNIT;
			uint64_t old, new, pick;

			if (j % 64 == 0)
				bits = next_random(&s);
			pick = bits & 1;
			bits >>= 1;
			memcpy(&old, r->durable + off, UNIT);
			memcpy(&new, r->base + off, UNIT);
			old ^= (old ^ new) & -pick;
			memcpy(r->master + off, &old, UNIT);
			r->isnew[j] = (uint8_t)pick;
		}
		if (try_state(r, k, kind, where, step))
			return;
	}
}

/* The pending units of a state array: states 1, 2, 3 (DIRTY, WB, NT). */
static size_t collect_pending(struct run *r, const uint8_t *state)
{
	/* 0 (CLEAN) and 4 (DURABLE) have both low bits clear; the pending
	 * states have one set. Skip 8 units a word at a time: a large
	 * region usually has few pending units. */
	const uint64_t low2 = 0x0303030303030303ull;
	size_t k = 0, i = 0;

	for (; i + 8 <= r->units; i += 8) {
		uint64_t w;

		memcpy(&w, state + i, sizeof(w));
		if (!(w & low2))
			continue;
		for (size_t j = i; j < i + 8; j++)
			if (state[j] & 3)
				r->pend[k++] = j;
	}
	for (; i < r->units; i++)
		if (state[i] & 3)
			r->pend[k++] = i;
	return k;
}

static void crash_point(struct run *r, enum ntm_rec_kind kind,
			const void *where, uint64_t step)
{
	struct ntm_shadow_view v;
	size_t k;

	if (ntm_shadow_view(r->cfg->region, &v) || v.base != r->base ||
	    v.units != r->units) {
		/* Someone untracked or replaced the region under the run. */
		r->err = -EINVAL;
		r->done = true;
		return;
	}
	r->res->points++;
	r->durable = v.durable;
	k = collect_pending(r, v.state);
	if (k > r->res->max_pending)
		r->res->max_pending = k;

	memcpy(r->master, v.durable, r->units * UNIT);
	memset(r->isnew, 0, k);
	if (k <= r->exhaustive_max)
		enumerate_all(r, k, kind, where, step);
	else
		enumerate_sampled(r, k, kind, where, step);
}

static void crash_hook(enum ntm_rec_kind kind, const void *where,
		       uint64_t step, void *arg)
{
	struct run *r = arg;
	unsigned points = r->cfg->points ? r->cfg->points : NTM_CRASH_AT_FENCE;

	if (r->done)
		return;
	switch (kind) {
	case NTM_REC_FENCE:
		if (!(points & NTM_CRASH_AT_FENCE))
			return;
		break;
	case NTM_REC_WRITEBACK:
		if (!(points & NTM_CRASH_AT_WRITEBACK))
			return;
		break;
	case NTM_REC_STORE:
	case NTM_REC_NT:
		if (!(points & NTM_CRASH_AT_STORE) ||
		    ++r->stores % r->store_every)
			return;
		break;
	default:
		return;
	}
	crash_point(r, kind, where, step);
}

/* The engine's place in the sink list, after the model's: last, so it
 * passes nothing on. */
static void crash_sink_event(struct ntm_rec_ev *ev, enum ntm_rec_sink_pos pos,
			     void *arg)
{
	(void)pos;
	crash_hook(ev->kind, ev->where, ev->step, arg);
}

/*
 * The offset from @p of the first byte of [@p, @p + @n) that the process
 * cannot read, or @n when it can read all of them; -errno when it cannot
 * tell. The run reads the whole region (the recorder's copy of its durable
 * state, each pending unit's new value) and writes none of it: a load from
 * an unmapped or PROT_NONE page is a SIGSEGV, from a file mapping past the
 * file's end a SIGBUS. write(2) of one byte of each page to a pipe reads
 * it in the kernel, which turns either fault into EFAULT and changes
 * nothing; the byte is read back at once, so the pipe never fills.
 * mincore() would miss PROT_NONE and past-EOF pages, which it calls mapped.
 * Two system calls a page: measured 2.6 us a page, 0.17 s for 256 MiB, the
 * time of a few of the copies of the region every state costs.
 */
static int first_unreadable(const void *p, size_t n, size_t *off)
{
	long pg = sysconf(_SC_PAGESIZE);
	uintptr_t start = (uintptr_t)p, end = start + n, at = start;
	int fds[2], ret = 0;

	*off = n;
	if (pg <= 0)
		pg = 4096;
	if (pipe2(fds, O_CLOEXEC | O_NONBLOCK))
		return -errno;
	while (at < end) {
		ssize_t w = write(fds[1], (const void *)at, 1);
		char byte;

		if (w < 0 && errno == EINTR)
			continue;
		if (w < 0) {
			if (errno == EFAULT)
				*off = at - start;
			else
				ret = -errno;
			break;
		}
		if (read(fds[0], &byte, 1) != 1) {
			ret = -EIO;
			break;
		}
		/* The next page's first byte. */
		at = (at | (uintptr_t)(pg - 1)) + 1;
		if (!at)
			break;	/* the last page of the address space */
	}
	close(fds[0]);
	close(fds[1]);
	return ret;
}

/* Each refusal names the argument; nothing is written or allocated yet. */
static int check_config(const struct ntm_crash_config *cfg,
			void (*workload)(void *), struct ntm_crash_result *res)
{
	const unsigned all = NTM_CRASH_AT_FENCE | NTM_CRASH_AT_WRITEBACK |
			     NTM_CRASH_AT_STORE;
	size_t off;
	int ret;

	if (!cfg)
		return ntm_error(-EINVAL, "cfg: NULL");
	if (!workload)
		return ntm_error(-EINVAL, "workload: NULL");
	if (!res)
		return ntm_error(-EINVAL, "res: NULL");
	if (!cfg->region)
		return ntm_error(-EINVAL, "cfg->region: NULL");
	if (!cfg->size)
		return ntm_error(-EINVAL, "cfg->size: 0");
	/* The last unit, rounded up, must not wrap either. */
	if (cfg->size > UINTPTR_MAX - (uintptr_t)cfg->region - UNIT)
		return ntm_error(-EINVAL, "cfg->size %zu: the region at %p "
				 "runs past the end of the address space",
				 cfg->size, cfg->region);
	if (!cfg->check)
		return ntm_error(-EINVAL, "cfg->check: NULL");
	if (cfg->points & ~all)
		return ntm_error(-EINVAL, "cfg->points has unknown bits 0x%x",
				 cfg->points & ~all);
	/* 2^k must fit the 64-bit state counter. */
	if (cfg->exhaustive_max > 63)
		return ntm_error(-EINVAL, "cfg->exhaustive_max %u: at most 63",
				 cfg->exhaustive_max);
	ret = NTM_CONFIG_CHECK(cfg, 0 /* no flag defined */);
	if (ret)
		return ret;

	ret = first_unreadable(cfg->region, cfg->size, &off);
	if (ret)
		return ntm_error(ret, "cfg->region %p+%zu: cannot probe its "
				 "mapping", cfg->region, cfg->size);
	if (off < cfg->size)
		return ntm_error(-EFAULT, "cfg->region: %zu bytes into %p+%zu, "
				 "a page that cannot be read (unmapped, "
				 "PROT_NONE or past the end of its file)", off,
				 cfg->region, cfg->size);
	return 0;
}

int ntm_crash_run(const struct ntm_crash_config *cfg,
		  void (*workload)(void *arg), void *warg,
		  struct ntm_crash_result *res)
{
	struct run r;
	struct ntm_rec_sink sink;
	uintptr_t start, end;
	size_t span, lead, stride;
	uint8_t *bufs = NULL;
	int ret;

	ret = check_config(cfg, workload, res);
	if (ret)
		return ret;
	memset(&r, 0, sizeof(r));
	r.cfg = cfg;
	r.res = res;
	r.exhaustive_max = cfg->exhaustive_max ? cfg->exhaustive_max :
						 DEFAULT_EXHAUSTIVE_MAX;
	r.samples = cfg->samples ? cfg->samples : DEFAULT_SAMPLES;
	r.store_every = cfg->store_every ? cfg->store_every : 1;
	r.seed = cfg->seed ? cfg->seed : DEFAULT_SEED;

	start = (uintptr_t)cfg->region;
	end = start + cfg->size;
	r.base = (uint8_t *)(start & ~(uintptr_t)(UNIT - 1));
	r.units = ((end + UNIT - 1) / UNIT) - start / UNIT;
	r.skew = start - (uintptr_t)r.base;
	span = r.units * UNIT;

	if (atomic_flag_test_and_set(&running))
		return ntm_error(-EBUSY, "another ntm_crash_run() is going on "
				 "(the recorder has one hook)");

	/*
	 * The image keeps the region's offset in its page, so a check that
	 * relies on alignment (16-byte atomics, 64-byte lines) sees the
	 * same alignment as the workload did.
	 */
	lead = (uintptr_t)r.base % 4096;
	stride = (lead + span + 4095) & ~(size_t)4095;
	if (posix_memalign((void **)&bufs, 4096, 2 * stride)) {
		ret = ntm_error(-ENOMEM, "cfg->size %zu: no memory for two "
				"scratch images", cfg->size);
		goto out_running;
	}
	r.master = bufs + lead;
	r.image = bufs + stride + lead;
	r.pend = malloc(r.units * sizeof(*r.pend));
	r.isnew = malloc(r.units);
	if (!r.pend || !r.isnew) {
		ret = ntm_error(-ENOMEM, "cfg->size %zu: no memory for the "
				"pending units", cfg->size);
		goto out_free;
	}

	/* Tracking starts every unit CLEAN. No ntm_check_reset(): it would
	 * also wipe the state of ranges the caller tracks. */
	ret = ntm_check_track(cfg->region, cfg->size);
	if (ret == -EINVAL) {
		/* Every other argument was checked: the overlap is left. */
		ret = ntm_error(ret, "cfg->region %p+%zu: overlaps a range "
				"tracked already", cfg->region, cfg->size);
		goto out_free;
	}
	if (ret) {
		ret = ntm_error(ret, "cfg->region %p+%zu: the recorder cannot "
				"track it (64 ranges tracked, or no memory)",
				cfg->region, cfg->size);
		goto out_free;
	}
	memset(res, 0, sizeof(*res));
	sink = (struct ntm_rec_sink){ crash_sink_event, &r };
	/* The running flag keeps the position free. */
	(void)ntm_rec_sink_register(NTM_REC_SINK_CRASH, &sink);
	ntm_check_start();

	workload(warg);

	/* The state after the workload: recording stopped, so whatever
	 * check() calls is ignored here too. */
	ntm_check_stop();
	if (!r.done)
		crash_point(&r, (enum ntm_rec_kind)NTM_CRASH_END, NULL, 0);
	ntm_rec_sink_unregister(NTM_REC_SINK_CRASH, &sink);
	ntm_check_untrack(cfg->region);

	if (r.err)
		ret = ntm_error(r.err, "cfg->region %p: untracked or replaced "
				"during the run", cfg->region);
	else
		ret = res->failures ? 1 : 0;
out_free:
	free(r.isnew);
	free(r.pend);
	free(bufs);
out_running:
	atomic_flag_clear(&running);
	return ret;
}

static const char *kind_name(enum ntm_rec_kind kind)
{
	switch ((int)kind) {
	case NTM_REC_STORE:
		return "store";
	case NTM_REC_NT:
		return "nt store";
	case NTM_REC_WRITEBACK:
		return "write-back";
	case NTM_REC_FENCE:
		return "fence";
	case NTM_CRASH_END:
		return "end";
	}
	return "?";
}

void ntm_crash_report(const struct ntm_crash_result *res, void *file)
{
	FILE *f = file ? file : stderr;
	size_t shown;

	if (!res)
		return;
	fprintf(f, "crash images: %llu points, %llu states, %llu failed; "
		   "at most %llu units pending at a point\n",
		(unsigned long long)res->points,
		(unsigned long long)res->states,
		(unsigned long long)res->failures,
		(unsigned long long)res->max_pending);
	if (!res->failures)
		return;
	fprintf(f, "first failure: point %llu, %s at %s (event %llu): "
		   "%zu of %zu pending units new",
		(unsigned long long)res->first_point,
		kind_name(res->first_kind), res->first_where,
		(unsigned long long)res->first_step, res->first_units,
		res->first_pending);
	shown = res->first_units;
	if (shown > sizeof(res->first_unit_offsets) /
			    sizeof(res->first_unit_offsets[0]))
		shown = sizeof(res->first_unit_offsets) /
			sizeof(res->first_unit_offsets[0]);
	for (size_t i = 0; i < shown; i++)
		fprintf(f, "%s%ju", i ? ", " : ", at offsets ",
			(uintmax_t)res->first_unit_offsets[i]);
	fprintf(f, "%s\n", shown < res->first_units ? ", ..." : "");
}
