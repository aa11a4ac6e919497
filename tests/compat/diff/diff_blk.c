// SPDX-License-Identifier: MIT
/*
 * diff_blk.c - libpmemblk's part of dropin_diff (diff.h).
 *
 * Each thread has two pools of its own, each with a model of what every
 * block holds (zeros, an error, or a version of the thread's data). Its
 * calls: pmemblk_create() (block sizes 512 and 4096, sizes at and above
 * the minimum, and the refusals: below it, a block size of 0, a pool
 * that exists, a missing file with no size), pmemblk_open() with the
 * right, no or a wrong block size, a second open of an open pool (its
 * lock), pmemblk_close(), pmemblk_read(), _write(), _set_zero() and
 * _set_error() on blocks inside and outside the pool (-1, nblock and
 * past it), pmemblk_nblock() and _bsize(), pmemblk_check() of a closed
 * pool, and removing a closed one. Every read is compared with the
 * model, and each pool's written blocks are read back before it closes.
 *
 * One pool is shared: the main thread creates it anew every third round
 * (its BTT is laid out by the first write, which the threads make at
 * once, right after they are let go), reopens it in the next and keeps
 * it open in the one after; each thread reads and writes blocks of its
 * own part of it, and the main thread compares every block with the
 * threads' models at the end of each round.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <libpmemblk.h>

#include "diff.h"

#define BLK_POOLS 2
#define SHARED_POOL BLK_POOLS	/* its number in the blocks' tags */
#define VER_ERROR UINT32_MAX	/* the model of a block set_error made */
#define BSIZE_MAX 4096

struct bpool {
	char path[PATH_MAX];
	PMEMblkpool *pbp;	/* open, or NULL */
	bool exists;		/* a pool in the file */
	size_t bsize, nblock;
	uint32_t *ver;		/* per block: 0 zeros, VER_ERROR, or a version */
};

struct diff_blk {
	struct bpool p[BLK_POOLS];
	uint32_t next_ver;	/* the versions this thread wrote */
	uint32_t *shared_ver;	/* the model of its part of the shared pool */
};

struct diff_blk_shared {
	char path[PATH_MAX];
	PMEMblkpool *pbp;
	size_t nblock;
	size_t part;		/* blocks of each thread */
};

/* What block @block of pool @pool holds at version @ver of thread @id. */
static void block_data(unsigned char *buf, size_t bsize, unsigned id,
		       unsigned pool, uint64_t block, uint32_t ver)
{
	if (ver == 0) {
		memset(buf, 0, bsize);
		return;
	}
	diff_fill(buf, bsize, (uint64_t)(id + 1) << 48 ^ (uint64_t)pool << 44 ^
			      block << 16 ^ ver);
}

/*
 * Read @block of @pbp and compare it with the model (a VER_ERROR block
 * must fail with EIO). Traced as @what. The errno of the read.
 */
static int read_block(struct diff_thread *t, PMEMblkpool *pbp, size_t bsize,
		      unsigned id, unsigned pool, long long block, uint32_t ver,
		      const char *what)
{
	unsigned char buf[BSIZE_MAX], want[BSIZE_MAX];
	int ret, err;

	errno = 0;
	ret = pmemblk_read(pbp, buf, block);
	err = ret ? errno : 0;
	t->calls++;
	if (ver == VER_ERROR) {
		if (ret == 0 || err != EIO)
			diff_bad(t, "%s: block %lld has the error flag, read "
				 "returned %d %s", what, block, ret,
				 diff_errno_name(err));
		return err;
	}
	if (ret) {
		diff_bad(t, "%s: block %lld: read failed: %s", what, block,
			 diff_errno_name(err));
		return err;
	}
	block_data(want, bsize, id, pool, (uint64_t)block, ver);
	(void)diff_same(t, buf, want, bsize, what);
	return 0;
}

/*
 * One I/O call on @pbp (@nblock blocks of @bsize), whose model is @ver,
 * at a block of the model's or outside the pool: read (compared),
 * write, set_zero or set_error. @first: the blocks [first, first + n)
 * are the thread's; @pool tags its data.
 */
static void block_io(struct diff_thread *t, PMEMblkpool *pbp, size_t bsize,
		     size_t nblock, uint32_t *ver, size_t first, size_t n,
		     unsigned pool, unsigned how)
{
	unsigned where = diff_below(t, 10);
	long long block = where == 0 ? -1 : where == 1 ? (long long)nblock :
			  where == 2 ? (long long)nblock + 7 :
			  (long long)(first + diff_rand(t) % n);
	bool inside = where > 2;
	uint32_t *v = inside ? &ver[(size_t)block - first] : NULL;
	unsigned char buf[BSIZE_MAX];
	const char *names[] = { "read", "write", "zero", "error" };
	int ret, err;

	errno = 0;
	switch (how) {
	case 0:
		if (inside) {
			err = read_block(t, pbp, bsize, t->id, pool, block, *v,
					 "libpmemblk read");
			ret = err ? -1 : 0;
		} else {
			ret = pmemblk_read(pbp, buf, block);
			err = ret ? errno : 0;
			t->calls++;
		}
		break;
	case 1: {
		uint32_t nv = ++t->blk->next_ver;

		if (nv == VER_ERROR)
			nv = t->blk->next_ver = 1;
		block_data(buf, bsize, t->id, pool, (uint64_t)block, nv);
		ret = pmemblk_write(pbp, buf, block);
		err = ret ? errno : 0;
		t->calls++;
		if (ret == 0 && v)
			*v = nv;
		break;
	}
	case 2:
		ret = pmemblk_set_zero(pbp, block);
		err = ret ? errno : 0;
		t->calls++;
		if (ret == 0 && v)
			*v = 0;
		break;
	default:
		ret = pmemblk_set_error(pbp, block);
		err = ret ? errno : 0;
		t->calls++;
		if (ret == 0 && v)
			*v = VER_ERROR;
		break;
	}
	diff_trace(t, "blk %s pool %u block %s -> %d %s", names[how], pool,
		   where == 0 ? "-1" : where == 1 ? "nblock" :
		   where == 2 ? "nblock+7" : "mine", ret, diff_errno_name(err));
}

/* Read every block the model says was written; a few never written. */
static void check_pool(struct diff_thread *t, struct bpool *b, unsigned k)
{
	char what[64];

	snprintf(what, sizeof(what), "libpmemblk pool %u", k);
	for (size_t i = 0; i < b->nblock; i++)
		if (b->ver[i] || i % 997 == 0)
			(void)read_block(t, b->pbp, b->bsize, t->id, k,
					 (long long)i, b->ver[i], what);
}

/* --- a thread's own pools ------------------------------------------------- */

static void pool_opened(struct diff_thread *t, struct bpool *b, bool fresh)
{
	b->bsize = pmemblk_bsize(b->pbp);
	b->nblock = pmemblk_nblock(b->pbp);
	t->calls += 2;
	if (fresh) {
		free(b->ver);
		b->ver = calloc(b->nblock ? b->nblock : 1, sizeof(*b->ver));
		if (!b->ver)
			exit(1);
	}
}

static void op_create(struct diff_thread *t, unsigned k)
{
	static const size_t bsizes[] = { 512, 512, 4096, 0 };
	static const size_t sizes[] = {
		PMEMBLK_MIN_POOL, PMEMBLK_MIN_POOL, PMEMBLK_MIN_POOL + (1 << 20),
		PMEMBLK_MIN_POOL - 4096, 0,
	};
	struct bpool *b = &t->blk->p[k];
	size_t bsize = bsizes[diff_below(t, 4)];
	size_t size = sizes[diff_below(t, 5)];
	int err;

	if (b->pbp)
		return;
	errno = 0;
	b->pbp = pmemblk_create(b->path, bsize, size, 0600);
	err = errno;
	t->calls++;
	if (!b->pbp) {
		diff_trace(t, "blk create %u bsize %zu size %zu -> NULL %s", k,
			   bsize, size, diff_errno_name(err));
		return;
	}
	pool_opened(t, b, true);
	b->exists = true;
	diff_trace(t, "blk create %u bsize %zu size %zu -> %zu blocks of %zu, "
		   "errno %s", k, bsize, size, b->nblock, b->bsize,
		   diff_errno_name(err));
}

static void op_open(struct diff_thread *t, unsigned k)
{
	struct bpool *b = &t->blk->p[k];
	unsigned how = diff_below(t, 4);
	size_t bsize = how == 0 ? 0 : how == 1 ? 1024 : b->bsize;
	PMEMblkpool *p;
	int err;

	if (!b->exists)
		return;
	errno = 0;
	p = pmemblk_open(b->path, bsize);
	err = errno;
	t->calls++;
	diff_trace(t, "blk open %u bsize %s%s -> %s %s", k,
		   how == 0 ? "0" : how == 1 ? "wrong" : "right",
		   b->pbp ? " (open already)" : "", p ? "pool" : "NULL",
		   diff_errno_name(err));
	if (!p)
		return;
	if (b->pbp) {
		diff_bad(t, "libpmemblk pool %u opened twice", k);
		pmemblk_close(p);
		return;
	}
	b->pbp = p;
	pool_opened(t, b, false);
}

static void op_close(struct diff_thread *t, unsigned k)
{
	struct bpool *b = &t->blk->p[k];

	if (!b->pbp)
		return;
	check_pool(t, b, k);
	pmemblk_close(b->pbp);
	t->calls++;
	b->pbp = NULL;
	diff_trace(t, "blk close %u", k);
}

static void op_check(struct diff_thread *t, unsigned k)
{
	struct bpool *b = &t->blk->p[k];
	unsigned how = diff_below(t, 3);
	int ret, err;

	if (!b->exists || b->pbp)
		return;
	errno = 0;
	ret = pmemblk_check(b->path, how == 0 ? 0 : how == 1 ? 1024 : b->bsize);
	err = errno;
	t->calls++;
	diff_trace(t, "blk check %u how %u -> %d %s", k, how, ret,
		   diff_errno_name(ret < 0 ? err : 0));
}

/* --- the harness's calls -------------------------------------------------- */

static int blk_run_init(struct diff_run *run)
{
	struct diff_blk_shared *s = calloc(1, sizeof(*s));

	if (!s)
		return -1;
	snprintf(s->path, sizeof(s->path), "%s/blk-shared", run->dir);
	run->blk = s;
	return 0;
}

/* Round 0, 3, ...: a new pool; 1, 4, ...: reopened; 2, 5, ...: kept open. */
static int blk_round_begin(struct diff_thread *main_t, unsigned round)
{
	struct diff_run *run = main_t->run;
	struct diff_blk_shared *s = run->blk;

	if (round % 3 == 2)
		return 0;
	if (s->pbp)
		pmemblk_close(s->pbp);
	if (round % 3 == 0) {
		unlink(s->path);
		s->pbp = pmemblk_create(s->path, 512, PMEMBLK_MIN_POOL, 0600);
	} else {
		s->pbp = pmemblk_open(s->path, 512);
	}
	if (!s->pbp) {
		fprintf(stderr, "dropin_diff: the shared pool %s: %s\n", s->path,
			pmemblk_errormsg());
		return -1;
	}
	s->nblock = pmemblk_nblock(s->pbp);
	s->part = s->nblock / run->threads;
	diff_trace(main_t, "blk shared %s: %zu blocks",
		   round % 3 ? "reopened" : "created", s->nblock);
	/* A new pool reads zeros everywhere. */
	for (unsigned i = 0; round % 3 == 0 && i < run->threads; i++)
		if (run->t[i].blk)
			memset(run->t[i].blk->shared_ver, 0,
			       s->part * sizeof(uint32_t));
	return 0;
}

static int blk_thread_init(struct diff_thread *t)
{
	t->blk = calloc(1, sizeof(*t->blk));
	if (!t->blk)
		return -1;
	for (unsigned k = 0; k < BLK_POOLS; k++)
		diff_path(t, t->blk->p[k].path, "blk-%u", k);
	t->blk->shared_ver = calloc(t->run->blk->part ? t->run->blk->part : 1,
				    sizeof(uint32_t));
	return t->blk->shared_ver ? 0 : -1;
}

static void shared_io(struct diff_thread *t, unsigned how)
{
	struct diff_blk_shared *s = t->run->blk;

	block_io(t, s->pbp, 512, s->nblock, t->blk->shared_ver,
		 (size_t)t->id * s->part, s->part, SHARED_POOL, how);
}

static void blk_burst(struct diff_thread *t)
{
	if (!t->blk)
		return;
	/*
	 * A fresh pool's first writes, from every other thread at once,
	 * while the rest ask for the pool's size and read for a while (their
	 * blocks are zeros until they write them): the layout one writer
	 * makes must not change what the others see of the pool.
	 */
	for (int i = 0; i < (t->id % 2 ? 128 : 2); i++) {
		size_t n = pmemblk_nblock(t->run->blk->pbp);

		t->calls++;
		if (n != t->run->blk->nblock)
			diff_trace(t, "blk shared nblock %zu", n);
		shared_io(t, t->id % 2 ? 0 : 1);
	}
	shared_io(t, 1);
	shared_io(t, 0);
}

static void blk_op(struct diff_thread *t)
{
	unsigned k = diff_below(t, BLK_POOLS);
	struct bpool *b;

	if (!t->blk)
		return;
	b = &t->blk->p[k];
	switch (diff_below(t, 16)) {
	case 0:
		op_create(t, k);
		break;
	case 1:
		op_open(t, k);
		break;
	case 2:
		op_close(t, k);
		break;
	case 3:
		op_check(t, k);
		break;
	case 4:
		if (b->exists && !b->pbp) {
			unlink(b->path);
			b->exists = false;
			diff_trace(t, "blk unlink %u", k);
		}
		break;
	case 5:
	case 6:
	case 7:
	case 8:
		shared_io(t, diff_below(t, 4));
		break;
	default:
		if (b->pbp)
			block_io(t, b->pbp, b->bsize, b->nblock, b->ver, 0,
				 b->nblock, k, diff_below(t, 4));
		break;
	}
}

static void blk_round_end(struct diff_thread *main_t, unsigned round)
{
	const struct diff_run *run = main_t->run;
	const struct diff_blk_shared *s = run->blk;

	(void)round;
	for (unsigned i = 0; i < run->threads; i++) {
		const struct diff_thread *t = &run->t[i];

		if (!t->blk)
			continue;
		for (size_t j = 0; j < s->part; j++)
			(void)read_block(main_t, s->pbp, 512, t->id, SHARED_POOL,
					 (long long)(t->id * s->part + j),
					 t->blk->shared_ver[j],
					 "shared libpmemblk pool");
	}
	diff_trace(main_t, "blk shared pool compared");
}

static void blk_thread_fini(struct diff_thread *t)
{
	if (!t->blk)
		return;
	for (unsigned k = 0; k < BLK_POOLS; k++) {
		op_close(t, k);
		if (t->blk->p[k].exists)
			unlink(t->blk->p[k].path);
		free(t->blk->p[k].ver);
	}
	free(t->blk->shared_ver);
	free(t->blk);
	t->blk = NULL;
}

static void blk_run_fini(struct diff_thread *main_t)
{
	struct diff_blk_shared *s = main_t->run->blk;

	if (s->pbp)
		pmemblk_close(s->pbp);
	unlink(s->path);
	free(s);
	main_t->run->blk = NULL;
}

const struct diff_lib diff_blk_lib = {
	.name = "blk",
	.bit = DIFF_LIB_BLK,
	.run_init = blk_run_init,
	.round_begin = blk_round_begin,
	.thread_init = blk_thread_init,
	.burst = blk_burst,
	.op = blk_op,
	.round_end = blk_round_end,
	.thread_fini = blk_thread_fini,
	.run_fini = blk_run_fini,
};
