// SPDX-License-Identifier: MIT
/*
 * test_btt_crash.c - crash images over BTT writes: the sector atomicity
 * the BTT exists for, proven on every media state a power cut may leave.
 *
 * A small BTT (64 KiB, 512-byte blocks, 4 free blocks) is written under
 * ntm_crash_run(), crash points at every fence and write-back. At each
 * point every pending 8-byte unit may be old or new (all mixes up to 2^12,
 * seeded samples beyond). Every image is opened with ntm_btt_open() (the
 * flog replay runs on it), must check clean, and each LBA written must
 * read back entirely as its last completed write or entirely as the write
 * in flight - never a mix, never another LBA's data; opened read-only
 * first (no replay: an unfinished map update is rolled back), it must
 * read the same way, so every write's map store is durable when the call
 * returns. Torn sectors are counted and must be 0.
 *
 * Workloads: one lane writing LBAs in a pattern that reuses every free
 * block and hits the same LBA back to back; two lanes whose writes are
 * interleaved at every persist (two threads passing a baton in the
 * persist callback, so one stores at a time, as the crash engine needs;
 * their LBAs lie under different map locks);
 * set_zero/set_error among the writes; the first writes of a BTT opened
 * with NTM_BTT_LAZY over a zero range (PMDK's fresh pool), whose first
 * lays the BTT out: every image opens (lazily) as no BTT yet, every
 * sector zero, or as the whole layout holding the writes made or in
 * flight - never a half-laid-out BTT refused, read-only or reading
 * wrong data. With NTM_BTT_ZEROED too (the map's zeros not written).
 *
 * NTMEM_CRASH_SCALE=N multiplies the writes and the samples per point
 * (`make crash` runs it with a large N; a fraction makes a lighter run).
 * Arguments name the workloads to run (one-lane, two-lanes, lazy: both
 * lazy ones); none, all of them.
 * make check runs each as a test of its own, so that they run side by
 * side: under qemu-user the three together took 210 s of one core.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <ntmem.h>
#include <ntmem/btt.h>
#include <ntmem/crash.h>

#define SIZE (64u << 10)
#define LBASIZE 512u
#define NFREE 4u
#define NLBA_USED 22u		/* the LBAs the workloads write */

struct run {
	unsigned char *base;
	struct ntm_btt *btt;
	/* Per LBA: last completed version, version in flight (0: none). */
	uint32_t done[NLBA_USED], flight[NLBA_USED];
	int flag[NLBA_USED];	/* 1 zero, 2 error: last completed setf */
	unsigned nwrites;
	int lanes;		/* 1 or 2 */
	unsigned open_flags;	/* how check() opens an image */
	bool ro_too;		/* check() opens it read-only first */
	/* Two-lane baton: whose turn it is to store. */
	pthread_mutex_t m;
	pthread_cond_t cv;
	int turn, finished[2];
	pthread_t owner[2];
	int failed;
	/* Figures. */
	uint64_t images, torn, other, old, new;
};

/* NTMEM_CRASH_SCALE: a multiplier, or a fraction (0.25) for a lighter run. */
static double scale = 1;

/* @n scaled, never below 1. */
static unsigned scaled(unsigned n)
{
	double v = n * scale;

	return v < 1 ? 1 : (unsigned)v;
}

static void pattern(unsigned char *p, uint64_t lba, uint32_t ver)
{
	uint64_t x = (lba + 1) * 0x9e3779b97f4a7c15ull ^
		     (uint64_t)(ver + 1) * 0xc2b2ae3d27d4eb4full;

	for (unsigned i = 0; i < LBASIZE; i += 8) {
		x ^= x >> 31;
		x *= 0xbf58476d1ce4e5b9ull;
		memcpy(p + i, &x, 8);
	}
	memcpy(p, &lba, 8);
	memcpy(p + 8, &ver, 4);
}

/* Is @buf exactly version @ver of @lba (0: never written, zeros)? */
static int is_version(const unsigned char *buf, uint64_t lba, uint32_t ver)
{
	unsigned char want[LBASIZE];

	if (!ver)
		memset(want, 0, sizeof(want));
	else
		pattern(want, lba, ver);
	return !memcmp(buf, want, LBASIZE);
}

/* Every LBA written reads as its last completed write or the one in flight. */
static int read_all(struct run *r, struct ntm_btt *b)
{
	unsigned char buf[LBASIZE];
	int bad = 0;

	for (unsigned l = 0; l < NLBA_USED; l++) {
		int ret = ntm_btt_read(b, 0, l, buf);
		uint32_t d = r->done[l], f = r->flight[l];

		if (ret == -EIO && (r->flag[l] == 2 || f == UINT32_MAX))
			continue;	/* error flag set, or being set */
		if (ret) {
			fprintf(stderr, "btt_crash: lba %u: read %d\n", l, ret);
			bad = 1;
			continue;
		}
		if (r->flag[l] == 1 || f == UINT32_MAX - 1) {
			if (is_version(buf, l, 0))
				continue;	/* zero flag */
		}
		if (r->flag[l] == 0 && is_version(buf, l, d)) {
			r->old++;
			continue;
		}
		if (f && f < UINT32_MAX - 1 && is_version(buf, l, f)) {
			r->new++;
			continue;
		}
		/* Which version is it, if any? */
		uint64_t stamp_lba;

		memcpy(&stamp_lba, buf, 8);
		if (stamp_lba != l && stamp_lba < NLBA_USED)
			r->other++;
		else
			r->torn++;
		fprintf(stderr, "btt_crash: lba %u: neither version %u nor "
			"%u\n", l, d, f);
		bad = 1;
	}
	return bad;
}

/*
 * Open the image read-only first (it must not change it): no replay
 * writes the map, an entry whose map store is not on media is rolled
 * back, so this read shows that the map store of every write that
 * returned is durable. Then read-write: the flog replay finishes the
 * write in flight, and the BTT must check clean.
 */
static int check(void *image, size_t size, void *arg)
{
	struct run *r = arg;
	struct ntm_btt *b;
	/* nfree: the geometry of a lazy open that finds no BTT yet. */
	struct ntm_btt_config cfg = { .lbasize = LBASIZE, .nfree = NFREE,
				      .flags = r->open_flags };
	struct ntm_btt_config ro = { .lbasize = LBASIZE,
				     .flags = NTM_BTT_READONLY };
	int bad;

	r->images++;
	if (r->ro_too) {
		if (ntm_btt_open(&b, image, size, &ro)) {
			fprintf(stderr, "btt_crash: read-only open failed: "
				"%s\n", ntm_errmsg());
			return 1;
		}
		bad = read_all(r, b);
		ntm_btt_close(b);
		if (bad) {
			fprintf(stderr, "btt_crash: (read-only open)\n");
			return 1;
		}
	}
	if (ntm_btt_open(&b, image, size, &cfg)) {
		fprintf(stderr, "btt_crash: recovery failed: %s\n",
			ntm_errmsg());
		return 1;
	}
	if (ntm_btt_readonly(b) || ntm_btt_check(b)) {
		fprintf(stderr, "btt_crash: recovered BTT not clean: %s\n",
			ntm_errmsg());
		ntm_btt_close(b);
		return 1;
	}
	bad = read_all(r, b);
	ntm_btt_close(b);
	return bad;
}

/* --- workloads ---------------------------------------------------------------- */

static void do_write(struct run *r, unsigned lane, unsigned l, uint32_t ver)
{
	unsigned char buf[LBASIZE];

	pattern(buf, l, ver);
	r->flight[l] = ver;
	if (ntm_btt_write(r->btt, lane, l, buf)) {
		fprintf(stderr, "btt_crash: write: %s\n", ntm_errmsg());
		r->failed = 1;
	}
	r->done[l] = ver;
	r->flag[l] = 0;
	r->flight[l] = 0;
}

static void one_lane(void *arg)
{
	struct run *r = arg;
	uint32_t ver = 100;

	for (unsigned i = 0; i < r->nwrites; i++) {
		/* Same LBA twice in a row, then spread: every free block
		 * and every flog slot of the lane comes round. */
		unsigned l = i % 5 == 1 ? (i - 1) % NLBA_USED : i % NLBA_USED;

		do_write(r, 0, l, ++ver);
		if (i % 17 == 16) {
			unsigned z = (i / 17) % NLBA_USED;

			r->flight[z] = UINT32_MAX - 1;
			if (ntm_btt_set_zero(r->btt, 0, z))
				r->failed = 1;
			r->flag[z] = 1;
			r->flight[z] = 0;
		}
		if (i % 23 == 22) {
			unsigned e = (i / 23 + 5) % NLBA_USED;

			r->flight[e] = UINT32_MAX;
			if (ntm_btt_set_error(r->btt, 0, e))
				r->failed = 1;
			r->flag[e] = 2;
			r->flight[e] = 0;
		}
	}
}

/* The persist callback of the two-lane run: persist, then hand over. */
static int baton_persist(void *arg, const void *p, size_t n)
{
	struct run *r = arg;
	int me = pthread_equal(pthread_self(), r->owner[1]) ? 1 : 0;

	ntm_persist(p, n);
	pthread_mutex_lock(&r->m);
	if (!r->finished[!me]) {
		r->turn = !me;
		pthread_cond_broadcast(&r->cv);
		while (r->turn != me)
			pthread_cond_wait(&r->cv, &r->m);
	}
	pthread_mutex_unlock(&r->m);
	return 0;
}

struct lane_arg {
	struct run *r;
	int me;
};

static void *lane_thread(void *arg)
{
	struct lane_arg *la = arg;
	struct run *r = la->r;
	uint32_t ver = la->me ? 5000 : 100;

	pthread_mutex_lock(&r->m);
	while (r->turn != la->me)
		pthread_cond_wait(&r->cv, &r->m);
	pthread_mutex_unlock(&r->m);
	for (unsigned i = 0; i < r->nwrites / 2; i++) {
		/*
		 * Lane 0 writes LBAs 0-5, lane 1 LBAs 16-21: map entries in
		 * different cache lines, so different map locks (a lane
		 * waiting for the baton holds its map lock; same-LBA writes
		 * from two lanes are raced in test_btt.c instead).
		 */
		unsigned l = (i * 7 + (i % 3 == 1)) % 6 + (la->me ? 16 : 0);

		do_write(r, (unsigned)la->me, l, ++ver);
	}
	pthread_mutex_lock(&r->m);
	r->finished[la->me] = 1;
	r->turn = !la->me;
	pthread_cond_broadcast(&r->cv);
	pthread_mutex_unlock(&r->m);
	return NULL;
}

static void two_lanes(void *arg)
{
	struct run *r = arg;
	struct lane_arg la[2] = { { r, 0 }, { r, 1 } };

	r->turn = -1;
	for (int i = 0; i < 2; i++)
		pthread_create(&r->owner[i], NULL, lane_thread, &la[i]);
	pthread_mutex_lock(&r->m);
	r->turn = 0;	/* both owners are known now */
	pthread_cond_broadcast(&r->cv);
	pthread_mutex_unlock(&r->m);
	for (int i = 0; i < 2; i++)
		pthread_join(r->owner[i], NULL);
}

/*
 * A crash run has ended: print its figures (@what after the writes' count),
 * report a failure, add its images to @total and close its BTT. 0 when
 * it passed, 1 when it failed.
 */
static int run_ended(const char *name, const char *what, struct run *r,
		     struct ntm_crash_result *res, int ret, struct run *total)
{
	printf("btt_crash %s: %u writes%s %llu crash points (at most %llu "
	       "units pending), %llu states, %llu failures; sectors read "
	       "old %llu, new %llu, torn %llu, other LBA %llu\n", name,
	       r->nwrites, what, (unsigned long long)res->points,
	       (unsigned long long)res->max_pending,
	       (unsigned long long)res->states,
	       (unsigned long long)res->failures,
	       (unsigned long long)r->old, (unsigned long long)r->new,
	       (unsigned long long)r->torn, (unsigned long long)r->other);
	if (ret)
		ntm_crash_report(res, NULL);
	total->images += res->states;
	total->torn += r->torn + r->other;
	ntm_btt_close(r->btt);
	return ret || r->failed || !res->states;
}

/* The first writes of a lazy BTT: the first lays it out. */
static void lazy_first(void *arg)
{
	struct run *r = arg;

	for (unsigned i = 0; i < r->nwrites; i++)
		do_write(r, 0, (i * 5 + 3) % NLBA_USED, i + 1);
}

static int run_lazy(const char *name, unsigned flags, struct run *total)
{
	struct run *r = calloc(1, sizeof(*r));
	struct ntm_btt_config bc = {
		.lbasize = LBASIZE, .nfree = NFREE, .nlanes = 2,
		.flags = NTM_BTT_LAZY | flags,
	};
	struct ntm_crash_config cc = {
		.size = SIZE,
		.points = NTM_CRASH_AT_FENCE | NTM_CRASH_AT_WRITEBACK,
		.samples = scaled(192),
		.seed = 0x6c617a79 + flags,
		.check = check,
		.stop_at_first = 1,
	};
	struct ntm_crash_result res;
	int ret;

	r->base = aligned_alloc(4096, SIZE);
	memset(r->base, 0, SIZE);	/* a fresh pool: nothing written */
	r->lanes = 1;
	r->nwrites = 3;
	/* The images hold no BTT or a whole one: both open lazily. */
	r->open_flags = NTM_BTT_LAZY;
	if (ntm_btt_open(&r->btt, r->base, SIZE, &bc)) {
		fprintf(stderr, "btt_crash: lazy open: %s\n", ntm_errmsg());
		return 1;
	}
	cc.region = r->base;
	cc.arg = r;
	ret = ntm_crash_run(&cc, lazy_first, r, &res);
	if (run_ended(name, ", the first laying the BTT out:", r, &res, ret,
		      total))
		return 1;
	/* After the run: laid out, durable, opening without NTM_BTT_LAZY. */
	r->open_flags = 0;
	ret = check(r->base, SIZE, r);
	free(r->base);
	free(r);
	return ret;
}

/* --- driver --------------------------------------------------------------------- */

static int run_one(const char *name, int lanes, unsigned nwrites,
		   struct run *total)
{
	struct run *r = calloc(1, sizeof(*r));
	struct ntm_btt_config bc = {
		.lbasize = LBASIZE, .nfree = NFREE, .nlanes = 2,
		.flags = NTM_BTT_CREATE,
	};
	struct ntm_crash_config cc = {
		.size = SIZE,
		.points = NTM_CRASH_AT_FENCE | NTM_CRASH_AT_WRITEBACK,
		.samples = scaled(192),
		.seed = 0x627474 + (uint64_t)lanes,
		.check = check,
		.stop_at_first = 1,
	};
	struct ntm_crash_result res;
	int ret;

	r->base = aligned_alloc(4096, SIZE);
	memset(r->base, 0, SIZE);
	r->lanes = lanes;
	r->nwrites = nwrites;
	r->ro_too = true;
	pthread_mutex_init(&r->m, NULL);
	pthread_cond_init(&r->cv, NULL);
	/* No hand-over until the run: one thread lays out and seeds. */
	r->turn = 0;
	r->owner[0] = pthread_self();
	r->finished[1] = 1;
	if (lanes == 2) {
		bc.persist = baton_persist;
		bc.persist_arg = r;
	}
	if (ntm_btt_open(&r->btt, r->base, SIZE, &bc)) {
		fprintf(stderr, "btt_crash: create: %s\n", ntm_errmsg());
		return 1;
	}
	/* An old version of every LBA, durable before the run. */
	for (unsigned l = 0; l < NLBA_USED; l++) {
		unsigned char buf[LBASIZE];

		pattern(buf, l, 1);
		if (ntm_btt_write(r->btt, 0, l, buf))
			return 1;
		r->done[l] = 1;
	}
	r->finished[1] = 0;
	cc.region = r->base;
	cc.arg = r;
	ret = ntm_crash_run(&cc, lanes == 2 ? two_lanes : one_lane, r, &res);
	if (run_ended(name, ",", r, &res, ret, total))
		return 1;
	/* After the run the region is durable and the BTT clean. */
	ret = check(r->base, SIZE, r);
	free(r->base);
	free(r);
	return ret;
}

/* The workloads, each also a test of its own (tests/record/meson.build). */
static const char *const parts[] = { "one-lane", "two-lanes", "lazy" };

static bool wanted(int argc, char **argv, const char *part)
{
	if (argc < 2)
		return true;	/* no argument: every workload */
	for (int i = 1; i < argc; i++)
		if (strcmp(argv[i], part) == 0)
			return true;
	return false;
}

int main(int argc, char **argv)
{
	const char *s = getenv("NTMEM_CRASH_SCALE");
	struct run total = { 0 };
	struct timespec t0, t1;
	int fail = 0;

	for (int i = 1; i < argc; i++) {
		bool known = false;

		for (size_t k = 0; k < sizeof(parts) / sizeof(parts[0]); k++)
			known |= strcmp(argv[i], parts[k]) == 0;
		if (!known) {
			fprintf(stderr, "btt_crash: unknown workload '%s' "
				"(one-lane, two-lanes, lazy)\n", argv[i]);
			return 2;
		}
	}
	if (s && *s)
		scale = strtod(s, NULL);
	if (!(scale > 0)) {
		fprintf(stderr, "btt_crash: NTMEM_CRASH_SCALE '%s' is not a "
			"positive number\n", s ? s : "");
		return 2;
	}
	clock_gettime(CLOCK_MONOTONIC, &t0);
	if (wanted(argc, argv, "one-lane"))
		fail |= run_one("one lane", 1, scaled(200), &total);
	if (wanted(argc, argv, "two-lanes"))
		fail |= run_one("two lanes", 2, scaled(80), &total);
	if (wanted(argc, argv, "lazy")) {
		fail |= run_lazy("lazy layout", 0, &total);
		fail |= run_lazy("lazy layout, zeroed", NTM_BTT_ZEROED, &total);
	}
	clock_gettime(CLOCK_MONOTONIC, &t1);
	printf("btt_crash: %llu crash states in %.1f s, torn sectors %llu\n",
	       (unsigned long long)total.images,
	       (double)(t1.tv_sec - t0.tv_sec) +
		       (double)(t1.tv_nsec - t0.tv_nsec) / 1e9,
	       (unsigned long long)total.torn);
	/* Every workload asked for checked states: none ran empty. */
	return fail || total.torn || !total.images;
}
