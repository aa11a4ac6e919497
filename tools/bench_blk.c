// SPDX-License-Identifier: MIT
/*
 * bench_blk.c - `ntmem bench blk`: psync-style block I/O on a namespace,
 * one request at a time on one thread, as fio's psync and libpmem engines
 * issue it: IOPS and latency percentiles for sequential and random reads
 * and FUA writes, through
 *
 *   direct         ntm_blk: bounds checked once per request
 *   hardened-mem   + the per-page check of the seed, memmap in DRAM
 *   hardened-dev   + the per-page check, memmap on the device (map=dev)
 *   pmdk           PMDK on the same mapping: pmem_memcpy_persist() writes,
 *                  memcpy() reads (what fio's libpmem engine does)
 *   direct-D       with --domain D: direct, with the namespace's persistence
 *                  domain set to D for its runs (ntm_ns_set_persist_domain();
 *                  cpu_cache: FUA writes only fence), so x_direct compares
 *                  the two domains in one run
 *
 * and with --btt, atomic sectors:
 *
 *   btt            ntm_blk in BTT mode on a second namespace of the same
 *                  size in the same directory
 *   btt-2t         the same, random writes from two threads at once
 *   direct-2t      direct random writes from two threads at once: what
 *                  two threads gain on this machine without a BTT, the
 *                  ceiling btt-2t is judged against
 *   pmemblk        PMDK's libpmemblk (Debian's libpmemblk1, dlopen()ed)
 *                  on a pool file of the same size in the same directory
 *
 * Every row uses the same offsets (after the map=dev memmap's reserve;
 * the BTT and pmemblk rows the same block numbers), the same request
 * sequence and the same buffer; runs are interleaved and every device is
 * written whole before timing so no page is faulted in while measured.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <ntmem.h>

#include "bench.h"
#include "bench_blk_open.h"
#include "commands.h"
#include "parse.h"
#include "peer_pmdk.h"
#include "peer_pmemblk.h"

enum impl { I_DIRECT, I_HARD_MEM, I_HARD_DEV, I_DOMAIN, I_PMDK, I_BTT,
	    I_BTT2, I_DIRECT2, I_PMEMBLK, NIMPL };
static const char *impl_names[] = { "direct", "hardened-mem",
				    "hardened-dev", "direct-domain", "pmdk",
				    "btt", "btt-2t", "direct-2t", "pmemblk" };
enum pattern { P_SEQ_READ, P_RAND_READ, P_SEQ_WRITE, P_RAND_WRITE, NPAT };
static const char *const pattern_names[] = { "seq-read", "rand-read",
					     "seq-write-fua", "rand-write-fua" };

struct options {
	uint64_t size, bs, ops;
	int runs;
	const char *device, *dir;
	const char *domain;	/* --domain: the direct-<domain> row, or NULL */
	bool json, csv, pmdk, btt;
};

struct target {
	struct ntm_ns *ns;
	struct ntm_blk *blk[I_PMDK];
	struct ntm_memmap *mm_mem, *mm_dev;
	struct peer_pmdk pmdk;
	/* --btt: the BTT's namespace and device, libpmemblk's pool */
	struct ntm_ns *btt_ns;
	struct ntm_blk *btt;
	struct peer_pmemblk pmemblk;
	void *pool;
	bool pmemblk_forced;		/* we set PMEM_IS_PMEM_FORCE=1 */
	bool on[NIMPL];			/* which rows run */
	enum ntm_persist_domain domain;	/* the direct-<domain> row's */
	uint8_t *base;
	uint64_t first;			/* first byte offset used */
	uint64_t *seq, *rand;		/* offsets per request */
	uint8_t *buf;
	uint32_t *lat;			/* ns per request, every run */
};

/* One run of @ops requests; latencies go to @lat. 0 or -errno. */
static int run_once(struct target *t, const struct options *o, enum impl im,
		    enum pattern p, uint32_t *lat)
{
	const uint64_t *offs = (p == P_SEQ_READ || p == P_SEQ_WRITE) ? t->seq : t->rand;
	bool write = p == P_SEQ_WRITE || p == P_RAND_WRITE;

	for (unsigned long i = 0; i < o->ops; i++) {
		uint64_t t0 = bench_now_ns();
		ssize_t r = (ssize_t)o->bs;

		if (im == I_PMDK) {
			if (write)
				t->pmdk.memcpy_persist(t->base + offs[i], t->buf, o->bs);
			else
				memcpy(t->buf, t->base + offs[i], o->bs);
		} else if (im == I_PMEMBLK) {
			long long blk = (long long)((offs[i] - t->first) / o->bs);

			r = (write ? t->pmemblk.write(t->pool, t->buf, blk)
				   : t->pmemblk.read(t->pool, t->buf, blk)) ? -EIO : r;
		} else if (im == I_BTT) {
			r = write ? ntm_blk_write(t->btt, t->buf, o->bs,
						  offs[i] - t->first, NTM_BLK_FUA)
				  : ntm_blk_read(t->btt, t->buf, o->bs,
						 offs[i] - t->first);
		} else if (write) {
			r = ntm_blk_write(t->blk[im], t->buf, o->bs, offs[i], NTM_BLK_FUA);
		} else {
			r = ntm_blk_read(t->blk[im], t->buf, o->bs, offs[i]);
		}
		if (r != (ssize_t)o->bs)
			return r < 0 ? (int)r : -EIO;
		lat[i] = (uint32_t)(bench_now_ns() - t0);
	}
	return 0;
}

/*
 * Half of a two-thread run: requests [from, to) of the random sequence,
 * to @dev (the BTT's offsets start at the rows' first byte, @skip).
 */
struct half {
	struct target *t;
	const struct options *o;
	unsigned long from, to;
	uint32_t *lat;
	int ret;
	struct ntm_blk *dev;
	uint64_t skip;
};

static void *write_half(void *arg)
{
	struct half *h = arg;

	for (unsigned long i = h->from; i < h->to; i++) {
		uint64_t t0 = bench_now_ns();
		ssize_t r = ntm_blk_write(h->dev, h->t->buf, h->o->bs,
					  h->t->rand[i] - h->skip, NTM_BLK_FUA);

		if (r != (ssize_t)h->o->bs) {
			h->ret = r < 0 ? (int)r : -EIO;
			return NULL;
		}
		h->lat[i] = (uint32_t)(bench_now_ns() - t0);
	}
	return NULL;
}

/*
 * btt-2t, direct-2t: the @ops random writes split between this thread and
 * one more (on the BTT each on its own lane); the run's time is the wall
 * time of both.
 */
static int run_two(struct target *t, const struct options *o, enum impl im,
		   uint32_t *lat)
{
	struct ntm_blk *dev = im == I_BTT2 ? t->btt : t->blk[I_DIRECT];
	uint64_t skip = im == I_BTT2 ? t->first : 0;
	struct half h[2] = {
		{ t, o, 0, o->ops / 2, lat, 0, dev, skip },
		{ t, o, o->ops / 2, o->ops, lat, 0, dev, skip },
	};
	pthread_t th;
	int ret = pthread_create(&th, NULL, write_half, &h[1]);

	if (ret)
		return -ret;
	write_half(&h[0]);
	pthread_join(th, NULL);
	return h[0].ret ? h[0].ret : h[1].ret;
}

/*
 * One run of row (@im, @p). The direct-<domain> row has the namespace in
 * its domain for the run only: every other row keeps the namespace's own.
 */
static int run_row(struct target *t, const struct options *o, enum impl im,
		   enum pattern p, uint32_t *lat)
{
	enum ntm_persist_domain own = ntm_ns_persist_domain(t->ns);
	int ret;

	if (im == I_BTT2 || im == I_DIRECT2)
		return run_two(t, o, im, lat);
	if (im != I_DOMAIN)
		return run_once(t, o, im, p, lat);
	ntm_ns_set_persist_domain(t->ns, t->domain);
	ret = run_once(t, o, im, p, lat);
	ntm_ns_set_persist_domain(t->ns, own);
	return ret;
}

/* The two-thread rows measure random writes only. */
static bool row_runs(const struct target *t, enum impl im, enum pattern p)
{
	return t->on[im] && ((im != I_BTT2 && im != I_DIRECT2) ||
			     p == P_RAND_WRITE);
}

static int cmp_u32(const void *a, const void *b)
{
	uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;

	return (x > y) - (x < y);
}

static double pct(const uint32_t *sorted, size_t n, double p)
{
	return sorted[(size_t)(p / 100.0 * (double)(n - 1))];
}

/*
 * --btt: a BTT over a second namespace of the same size, and libpmemblk's
 * pool of the same size and block size, both in --dir. 0 or -errno with
 * the reason in @why.
 */
static int setup_btt(struct target *t, const struct options *o, char *why,
		     size_t wlen)
{
	struct ntm_blk_config c = { .sector_size = (unsigned)o->bs,
				    .btt = true, .btt_create = true };
	size_t size = ntm_ns_size(t->ns);
	char path[512];
	int ret;

	snprintf(path, sizeof(path), "%s/ntmem-bench-btt-%d", o->dir,
		 (int)getpid());
	ret = ntm_ns_create(&t->btt_ns, path, size, 4096,
			    NTM_NS_TEMPORARY | NTM_NS_EMULATE);
	if (!ret)
		ret = ntm_blk_open(&t->btt, t->btt_ns, &c);
	if (ret) {
		snprintf(why, wlen, "%s", ntm_errmsg());
		return ret;
	}
	if (!t->on[I_PMEMBLK])
		return 0;
	/*
	 * On a tmpfs ntmem persists with write-back + fence (the page cache
	 * is the medium); PMDK would msync() there unless told the mapping
	 * is pmem. Same persistence for both, unless the user chose.
	 */
	if (ntm_ns_cpu_durable(t->btt_ns) && !getenv("PMEM_IS_PMEM_FORCE")) {
		setenv("PMEM_IS_PMEM_FORCE", "1", 1);
		t->pmemblk_forced = true;
	}
	snprintf(path, sizeof(path), "%s/ntmem-bench-pmemblk-%d", o->dir,
		 (int)getpid());
	t->pool = t->pmemblk.create(path, o->bs, size, 0600);
	if (!t->pool) {
		ret = -errno;
		fprintf(stderr, "ntmem bench blk: pmemblk_create %s: %s\n", path,
			t->pmemblk.errormsg());
		why[0] = '\0';
		return ret < 0 ? ret : -EIO;
	}
	/* The mapping is all the pool needs: nothing is left behind. */
	unlink(path);
	return 0;
}

/* 0, or -errno with the reason in @why. */
static int setup(struct target *t, const struct options *o, char *kind, size_t klen,
		 char *why, size_t wlen)
{
	struct ntm_memmap_config mem = { .desc_size = 64, .threads = 1 };
	struct ntm_memmap_config dev = { .desc_size = 64, .threads = 1,
					 .place = NTM_MEMMAP_DEV };
	struct bench_room room = {
		.disk_what = "the namespace, written whole before timing",
		.mem_what = "a map=mem memmap, request offsets and latencies",
	};
	char path[512];
	int ret;

	if (o->device) {
		ret = ntm_ns_open(&t->ns, o->device, 0);
	} else {
		snprintf(path, sizeof(path), "%s/ntmem-bench-blk-%d", o->dir,
			 (int)getpid());
		ret = ntm_ns_create(&t->ns, path, o->size, 4096,
				    NTM_NS_TEMPORARY | NTM_NS_EMULATE);
	}
	if (ret) {
		snprintf(why, wlen, "%s", ntm_errmsg());
		return ret;
	}
	/*
	 * Before anything is written: the run fills the whole namespace (a
	 * file in --dir unless --device) and keeps a map=mem memmap, the
	 * request offsets and every run's latencies in memory.
	 */
	room.dir = o->device ? NULL : o->dir;
	room.disk = o->device ? 0 : ntm_ns_size(t->ns);
	/* --btt: the BTT's namespace and pmemblk's pool, each as large. */
	if (o->btt)
		room.disk += (t->on[I_PMEMBLK] ? 2 : 1) * ntm_ns_size(t->ns);
	room.mem = ntm_ns_size(t->ns) / NTM_PAGE_SIZE * 64 + 2 * o->ops * 8 +
		   (uint64_t)o->runs * o->ops * 4 + o->bs;
	if (bench_check_room("bench blk", &room)) {
		why[0] = '\0';
		return -ENOSPC;
	}
	snprintf(kind, klen, "%s", ntm_ns_kind_name(ntm_ns_kind(t->ns)));
	t->base = ntm_ns_base(t->ns);
	/* Given the namespace, map=dev allocates its descriptors' blocks. */
	mem.ns = t->ns;
	dev.ns = t->ns;
	ret = ntm_memmap_create(&t->mm_mem, t->base, ntm_ns_size(t->ns), t->ns, &mem);
	if (!ret)
		ret = ntm_memmap_create(&t->mm_dev, t->base, ntm_ns_size(t->ns),
					t->ns, &dev);
	if (!ret)
		ret = ntm_memmap_init(t->mm_mem);
	if (!ret)
		ret = ntm_memmap_init(t->mm_dev);
	for (int i = 0; !ret && i < I_PMDK; i++) {
		struct ntm_blk_config c = {
			.sector_size = 512,
			.hardened = i != I_DIRECT && i != I_DOMAIN,
			.memmap = i == I_HARD_MEM ? t->mm_mem
				: i == I_HARD_DEV ? t->mm_dev : NULL,
		};

		ret = ntm_blk_open(&t->blk[i], t->ns, &c);
	}
	if (ret) {
		snprintf(why, wlen, "%s", ntm_errmsg());
		return ret;
	}
	if (o->btt) {
		ret = setup_btt(t, o, why, wlen);
		if (ret)
			return ret;
	}
	/* Every row keeps off the map=dev memmap at the start. */
	t->first = ntm_memmap_first_pfn(t->mm_dev) * (uint64_t)NTM_PAGE_SIZE;
	if (t->first + o->bs > ntm_ns_size(t->ns)) {
		snprintf(why, wlen, "--size %llu: no room for a request after the "
			 "memmap", (unsigned long long)o->size);
		return -EINVAL;
	}
	return 0;
}

static void teardown(struct target *t)
{
	for (int i = 0; i < I_PMDK; i++)
		ntm_blk_close(t->blk[i]);
	ntm_blk_close(t->btt);
	ntm_ns_close(t->btt_ns);
	if (t->pool)
		t->pmemblk.close(t->pool);
	if (t->pmemblk.handle)
		peer_pmemblk_unload(&t->pmemblk);
	ntm_memmap_destroy(t->mm_mem);
	ntm_memmap_destroy(t->mm_dev);
	ntm_ns_close(t->ns);
	free(t->seq);
	free(t->rand);
	free(t->buf);
	free(t->lat);
	if (t->pmdk.handle)
		peer_pmdk_unload(&t->pmdk);
}

static const struct report_col columns[] = {
	{ "pattern", COL_STR, 0 }, { "impl", COL_STR, 0 },
	{ "threads", COL_INT, 0 }, { "bs", COL_INT, 0 },
	{ "kiops", COL_REAL, 0 },  { "min_kiops", COL_REAL, 0 },
	{ "max_kiops", COL_REAL, 0 }, { "p50_ns", COL_INT, 0 },
	{ "p99_ns", COL_INT, 0 },  { "p999_ns", COL_INT, 0 },
	{ "x_direct", COL_REAL, 2 }, { "x_pmdk", COL_REAL, 2 },
	{ "x_pmemblk", COL_REAL, 2 },
};
#define NCOLS ((int)(sizeof(columns) / sizeof(columns[0])))

/* Write every block of the BTT and pmemblk devices once, untimed. */
static int fill_btt(struct target *t, const struct options *o)
{
	for (uint64_t off = 0; t->btt && off < ntm_blk_size(t->btt); off += o->bs)
		if (ntm_blk_write(t->btt, t->buf, o->bs, off, 0) != (ssize_t)o->bs) {
			fprintf(stderr, "ntmem bench blk: btt: ntm_blk_write: %s\n",
				ntm_errmsg());
			return -1;
		}
	for (size_t b = 0; t->pool && b < t->pmemblk.nblock(t->pool); b++)
		if (t->pmemblk.write(t->pool, t->buf, (long long)b)) {
			fprintf(stderr, "ntmem bench blk: pmemblk_write: %s\n",
				t->pmemblk.errormsg());
			return -1;
		}
	return 0;
}

/*
 * The floor under a BTT write's latency on this machine: a write is
 * durable in three ordered steps (the data with the flog's first half,
 * the flog's sequence number, the map entry), each a fence that waits for
 * the write-backs before it. Measured on the direct namespace after its
 * runs, over the rows' random blocks, median of up to 20000 each:
 *   nt4k  a 4 KiB ntm_memcpy_flush() + fence (a raw FUA write)
 *   flog  a 16-byte store to one line, its write-back, a fence (the flog
 *         pair of a lane stays in the cache)
 *   map   a 4-byte store to a random line, its write-back, a fence (a
 *         map entry: the line is usually not cached)
 *   locked  the same store and write-back, then a locked instruction
 *         (an atomic exchange) instead of the fence: what a write whose
 *         map fence is left to the next request would wait for anyway,
 *         since that request takes its lane with one (where it costs
 *         what the fence does, deferring the map fence saves nothing)
 *   load  a 4-byte load from a random line (a read's map lookup, which
 *         the data's address depends on, so nothing overlaps it)
 */
struct btt_floor {
	double nt4k, flog, map, locked, load;
};

static unsigned locked_word;	/* floor step 3's exchange */

static double floor_step(struct target *t, unsigned long n, int step)
{
	uint64_t *line = (uint64_t *)(t->base + t->first);

	for (unsigned long i = 0; i < n; i++) {
		unsigned char *at = t->base + t->rand[i];
		uint64_t t0 = bench_now_ns();

		if (step == 4) {
			/*
			 * The clock's ordered TSC read (the vDSO's) waits for
			 * the load to complete, as a read's copy waits for its
			 * map entry.
			 */
			(void)__atomic_load_n((uint32_t *)at, __ATOMIC_ACQUIRE);
			t->lat[i] = (uint32_t)(bench_now_ns() - t0);
			continue;
		}
		if (step == 0) {
			ntm_memcpy_flush(at, t->buf, 4096);
		} else if (step == 1) {
			__atomic_store_n(&line[0], i, __ATOMIC_RELAXED);
			__atomic_store_n(&line[1], i, __ATOMIC_RELAXED);
			ntm_flush(line, 16);
		} else {	/* steps 2 and 3 */
			uint32_t *e = (uint32_t *)at;	/* a random block's line */

			__atomic_store_n(e, (uint32_t)i, __ATOMIC_RELAXED);
			ntm_flush(e, 4);
		}
		/*
		 * The library's drain, not inline.h's SFENCE: `ntmem check`
		 * runs this benchmark and sees only the library's fences.
		 * Step 3 times a locked instruction in the fence's place, then
		 * fences untimed, so that no write-back is left unfenced.
		 */
		if (step == 3)
			__atomic_exchange_n(&locked_word, (unsigned)i,
					    __ATOMIC_SEQ_CST);
		else
			(ntm_drain)();
		t->lat[i] = (uint32_t)(bench_now_ns() - t0);
		if (step == 3)
			(ntm_drain)();
	}
	qsort(t->lat, n, sizeof(*t->lat), cmp_u32);
	return pct(t->lat, n, 50);
}

static void btt_floor(struct target *t, const struct options *o,
		      struct btt_floor *f)
{
	unsigned long n = o->ops < 20000 ? o->ops : 20000;

	/* A 4 KiB copy fits a request's block only with --bs 4k. */
	f->nt4k = o->bs >= 4096 ? floor_step(t, n, 0) : NAN;
	f->flog = floor_step(t, n, 1);
	f->map = floor_step(t, n, 2);
	f->locked = floor_step(t, n, 3);
	f->load = floor_step(t, n, 4);
}

/* What the issue measures the BTT by, from the rows; NaN when not run. */
static void btt_ratios(struct report *rep, struct target *t,
		       const struct options *o, double kiops[NPAT][NIMPL],
		       double p50[NPAT][NIMPL])
{
	struct btt_floor f;
	double nan = NAN;
	double wr = t->on[I_PMEMBLK] ? kiops[P_RAND_WRITE][I_BTT] /
				       kiops[P_RAND_WRITE][I_PMEMBLK] : nan;
	double rd = t->on[I_PMEMBLK] ? kiops[P_RAND_READ][I_BTT] /
				       kiops[P_RAND_READ][I_PMEMBLK] : nan;

	report_meta(rep, "btt_rand_write_x_pmemblk", "%.2f", wr);
	report_meta(rep, "btt_rand_read_x_pmemblk", "%.2f", rd);
	report_meta(rep, "btt_p50_write_x_direct", "%.2f",
		    p50[P_RAND_WRITE][I_BTT] / p50[P_RAND_WRITE][I_DIRECT]);
	report_meta(rep, "btt_p50_read_x_direct", "%.2f",
		    p50[P_RAND_READ][I_BTT] / p50[P_RAND_READ][I_DIRECT]);
	report_meta(rep, "btt_2t_write_x_1t", "%.2f",
		    kiops[P_RAND_WRITE][I_BTT2] / kiops[P_RAND_WRITE][I_BTT]);
	/* What two threads gain without a BTT: btt_2t's ceiling here. */
	report_meta(rep, "direct_2t_write_x_1t", "%.2f",
		    kiops[P_RAND_WRITE][I_DIRECT2] /
			    kiops[P_RAND_WRITE][I_DIRECT]);
	btt_floor(t, o, &f);
	report_meta(rep, "btt_floor_nt4k_ns", "%.0f", f.nt4k);
	report_meta(rep, "btt_floor_flog_fence_ns", "%.0f", f.flog);
	report_meta(rep, "btt_floor_map_fence_ns", "%.0f", f.map);
	report_meta(rep, "btt_floor_map_locked_ns", "%.0f", f.locked);
	report_meta(rep, "btt_floor_map_load_ns", "%.0f", f.load);
	/* The lowest median write ratio three ordered fences allow. */
	report_meta(rep, "btt_floor_write_x_direct", "%.2f",
		    (f.nt4k + f.flog + f.map) / f.nt4k);
	/* A read is the raw read plus its map lookup, at the least. */
	report_meta(rep, "btt_floor_read_x_direct", "%.2f",
		    (p50[P_RAND_READ][I_DIRECT] + f.load) /
			    p50[P_RAND_READ][I_DIRECT]);
}

static int run(const struct options *o)
{
	struct target t = { 0 };
	struct report rep;
	char kind[32], why[256], bwhy[256], buf[160];
	double ns[NPAT][NIMPL][BENCH_MAX_RUNS];
	double kiops[NPAT][NIMPL], p50[NPAT][NIMPL], p99[NPAT][NIMPL],
	       p999[NPAT][NIMPL];
	struct bench_stats st[NPAT][NIMPL];
	uint64_t blocks;
	int ret;
	uint64_t x = 0x2545f4914f6cdd1dull;

	for (int im = 0; im < I_PMDK; im++)
		t.on[im] = true;
	t.on[I_DOMAIN] = o->domain != NULL;
	if (o->domain) {
		static char name[48];

		t.domain = strcmp(o->domain, "cpu_cache") == 0 ?
			   NTM_PERSIST_CPU_CACHE : NTM_PERSIST_MEMORY_CONTROLLER;
		snprintf(name, sizeof(name), "direct-%s", o->domain);
		impl_names[I_DOMAIN] = name;
	}
	t.on[I_PMDK] = o->pmdk && peer_pmdk_load(&t.pmdk, why, sizeof(why));
	if (!o->pmdk)
		snprintf(why, sizeof(why), "disabled");
	t.on[I_BTT] = t.on[I_BTT2] = t.on[I_DIRECT2] = o->btt;
	t.on[I_PMEMBLK] = o->btt && o->pmdk &&
			  peer_pmemblk_load(&t.pmemblk, bwhy, sizeof(bwhy));
	if (!o->pmdk || !o->btt)
		snprintf(bwhy, sizeof(bwhy), "%s", o->btt ? "disabled" : "no --btt");
	ret = setup(&t, o, kind, sizeof(kind), why, sizeof(why));
	if (ret) {
		if (why[0])	/* else setup() said why */
			fprintf(stderr, "ntmem bench blk: %s\n", why);
		teardown(&t);
		return 1;
	}
	/* The same block numbers must exist on every device. */
	blocks = (ntm_ns_size(t.ns) - t.first) / o->bs;
	if (t.btt && ntm_blk_size(t.btt) / o->bs < blocks)
		blocks = ntm_blk_size(t.btt) / o->bs;
	if (t.pool && t.pmemblk.nblock(t.pool) < blocks)
		blocks = t.pmemblk.nblock(t.pool);
	t.seq = calloc(o->ops, sizeof(*t.seq));
	t.rand = calloc(o->ops, sizeof(*t.rand));
	t.buf = aligned_alloc(4096, (o->bs + 4095) & ~(size_t)4095);
	t.lat = calloc((size_t)o->runs * o->ops, sizeof(*t.lat));
	if (!t.seq || !t.rand || !t.buf || !t.lat) {
		fprintf(stderr, "ntmem bench blk: out of memory\n");
		teardown(&t);
		return 1;
	}
	for (unsigned long i = 0; i < o->ops; i++) {
		x ^= x << 13, x ^= x >> 7, x ^= x << 17;
		t.seq[i] = t.first + (i % blocks) * o->bs;
		t.rand[i] = t.first + (x % blocks) * o->bs;
	}
	bench_fill_pattern(t.buf, o->bs, 7);
	/* Fault the namespace in with data, untimed: tmpfs holes read as zero. */
	for (uint64_t off = t.first; off + o->bs <= ntm_ns_size(t.ns); off += o->bs) {
		if (ntm_blk_write(t.blk[I_DIRECT], t.buf, o->bs, off, 0) != (ssize_t)o->bs) {
			fprintf(stderr, "ntmem bench blk: ntm_blk_write: %s\n",
				ntm_errmsg());
			teardown(&t);
			return 1;
		}
	}
	if (ntm_blk_flush(t.blk[I_DIRECT])) {
		fprintf(stderr, "ntmem bench blk: ntm_blk_flush: %s\n",
			ntm_errmsg());
		teardown(&t);
		return 1;
	}
	if (fill_btt(&t, o)) {
		teardown(&t);
		return 1;
	}

	for (int p = 0; p < NPAT; p++) {
		bench_progress(p + 1, NPAT, pattern_names[p]);
		for (int r = 0; r < o->runs; r++)
			for (int im = 0; im < NIMPL; im++) {
				uint64_t t0 = bench_now_ns();

				if (!row_runs(&t, im, p))
					continue;
				ret = run_row(&t, o, im, p, t.lat);
				if (ret) {
					fprintf(stderr, "ntmem bench blk: %s %s: %s\n",
						pattern_names[p], impl_names[im],
						im == I_PMEMBLK ? t.pmemblk.errormsg()
								: ntm_errmsg());
					goto out;
				}
				ns[p][im][r] = (double)(bench_now_ns() - t0);
			}
	}
	/* Latencies of one more run of each row, sorted: before any row prints. */
	for (int p = 0; p < NPAT; p++)
		for (int im = 0; im < NIMPL; im++) {
			kiops[p][im] = p50[p][im] = p99[p][im] = p999[p][im] = NAN;
			if (!row_runs(&t, im, p))
				continue;
			bench_stats(ns[p][im], o->runs, &st[p][im]);
			kiops[p][im] = (double)o->ops / st[p][im].median * 1e6;
			ret = run_row(&t, o, im, p, t.lat);
			if (ret)
				goto out;
			qsort(t.lat, o->ops, sizeof(*t.lat), cmp_u32);
			p50[p][im] = pct(t.lat, o->ops, 50);
			p99[p][im] = pct(t.lat, o->ops, 99);
			p999[p][im] = pct(t.lat, o->ops, 99.9);
		}
	bench_progress_done();

	report_init(&rep, bench_format(o->json, o->csv), "ntmem bench blk",
		    columns, NCOLS);
	report_meta(&rep, "version", "%s", ntm_version());
	report_meta(&rep, "cpu", "%s", bench_cpu_model(buf, sizeof(buf)));
	report_meta(&rep, "namespace", "%s (%s), %s", o->device ? o->device :
		    "emulated: a sparse file", kind,
		    parse_size_name(ntm_ns_size(t.ns), buf, sizeof(buf)));
	report_meta(&rep, "requests", "%llu of %llu bytes per run, one thread "
		    "(btt-2t: two, half each), queue depth 1; %d runs, median "
		    "[min, max]; latency percentiles from one more run of each "
		    "row", (unsigned long long)o->ops, (unsigned long long)o->bs,
		    o->runs);
	report_meta(&rep, "persist domain", "%s (the namespace's; "
		    "NTMEM_PERSIST_DOMAIN %s)%s%s",
		    ntm_persist_domain_name(ntm_ns_persist_domain(t.ns)),
		    getenv("NTMEM_PERSIST_DOMAIN") ? getenv("NTMEM_PERSIST_DOMAIN")
						   : "not set",
		    o->domain ? "; direct-" : "", o->domain ? o->domain : "");
	report_meta(&rep, "pmdk", "%s", t.on[I_PMDK] ? t.pmdk.path : why);
	if (o->btt) {
		report_meta(&rep, "btt", "ntm_blk BTT mode, a second namespace of "
			    "the same size, %llu blocks used of %llu",
			    (unsigned long long)blocks,
			    (unsigned long long)(ntm_blk_size(t.btt) / o->bs));
		report_meta(&rep, "pmemblk", "%s%s", t.on[I_PMEMBLK] ?
			    t.pmemblk.path : bwhy, t.on[I_PMEMBLK] &&
			    t.pmemblk_forced ? ", PMEM_IS_PMEM_FORCE=1 (the "
			    "page cache of a tmpfs is the medium, as for ntmem)" : "");
		btt_ratios(&rep, &t, o, kiops, p50);
	}
	for (int p = 0; p < NPAT; p++)
		for (int im = 0; im < NIMPL; im++) {
			if (!row_runs(&t, im, p))
				continue;
			union report_cell cell[NCOLS] = {
				{ .s = pattern_names[p] }, { .s = impl_names[im] },
				{ .i = im == I_BTT2 || im == I_DIRECT2 ? 2 : 1 },
				{ .i = (long long)o->bs }, { .r = kiops[p][im] },
				{ .r = (double)o->ops / st[p][im].max * 1e6 },
				{ .r = (double)o->ops / st[p][im].min * 1e6 },
				{ .i = (long long)p50[p][im] },
				{ .i = (long long)p99[p][im] },
				{ .i = (long long)p999[p][im] },
				{ .r = kiops[p][im] / kiops[p][I_DIRECT] },
				{ .r = kiops[p][im] / kiops[p][I_PMDK] },
				{ .r = kiops[p][im] / kiops[p][I_PMEMBLK] },
			};
			report_row(&rep, cell);
		}
	report_end(&rep);
	ret = 0;
out:
	teardown(&t);
	return ret ? 1 : 0;
}

static void usage(FILE *out)
{
	fputs("usage: ntmem bench blk [options]\n"
	      "\n"
	      "psync-style block I/O on a namespace: IOPS and latency percentiles of\n"
	      "sequential and random reads and FUA writes through ntm_blk (direct, and\n"
	      "hardened with the memmap in DRAM and on the device) and through PMDK on\n"
	      "the same mapping, in one run. x_direct, x_pmdk and x_pmemblk are IOPS\n"
	      "ratios.\n"
	      "\n"
	      "--btt adds atomic sectors: ntm_blk in BTT mode (rows btt, and btt-2t:\n"
	      "random writes from two threads) on a second namespace, direct-2t (the\n"
	      "raw device from two threads), and PMDK's libpmemblk on a pool file,\n"
	      "both of the same size in DIR; the meta lines btt_* give BTT/libpmemblk\n"
	      "random write and read IOPS, BTT/direct median write latency, and\n"
	      "two-thread/one-thread write IOPS; btt_floor_* what this machine's\n"
	      "fences and map lookups allow at best.\n"
	      "\n"
	      "--open instead measures libpmemblk pools by size, ntmem's drop-in and\n"
	      "PMDK's side by side: create+close, open, first write, close, reopen and\n"
	      "first read times, and the file's allocated and written KiB, with the\n"
	      "ratios ntmem/PMDK (rows x_pmdk). DIR must be on a disk file system.\n"
	      "\n"
	      "  -s, --size BYTES   emulated namespace size (default 8g; 4g with --btt)\n"
	      "  -b, --bs BYTES     request size, a multiple of 512 (default 4k)\n"
	      "  -n, --ops N        requests per run (default 200000)\n"
	      "  -r, --runs N       runs, median reported (default 5; 1 with --open)\n"
	      "  -d, --device PATH  a real devdax device or DAX file instead\n"
	      "      --domain D     add a direct-D row: the namespace in persistence\n"
	      "                     domain D (cpu_cache or memory_controller) for its runs\n"
	      "      --dir DIR      where the emulated namespace lives (/dev/shm)\n"
	      "      --btt          add the BTT and libpmemblk rows (--bs 512 or 4k)\n"
	      "      --open         pool open costs instead (--bs 512 or 4k)\n"
	      "      --sizes LIST   --open's pool sizes (default 1g,32g,512g)\n"
	      "      --no-pmdk      skip PMDK (libpmem and libpmemblk)\n"
	      "      --json, --csv  machine-readable output\n"
	      "  -h, --help         this text\n"
	      "\n"
	      "Sizes are whole decimal numbers of bytes with an optional k, m, g or t\n"
	      "suffix (binary units); N is a decimal number. The run writes the whole\n"
	      "namespace: one that does not fit in DIR's free space, or a run whose\n"
	      "memory (latencies, a map=mem memmap, and the namespace on a tmpfs)\n"
	      "exceeds MemAvailable, is refused before it starts.\n",
	      out);
}

int cmd_bench_blk(int argc, char **argv)
{
	struct options o = {
		.size = 8ull << 30, .bs = 4096, .ops = 200000, .runs = 5,
		.dir = "/dev/shm", .pmdk = true,
	};
	struct blk_open_options oo = {
		.sizes = { 1ull << 30, 32ull << 30, 512ull << 30 }, .nsizes = 3,
	};
	bool no_pmdk = false, have_size = false, open_pools = false,
	     have_sizes = false, have_ops = false, have_runs = false;
	const struct opt opts[] = {
		{ .name = "size", .letter = 's', .kind = OPT_U64,
		  .dest = &o.size, .min = 4096,
		  .max = PARSE_SIZE_MAX, .flags = PARSE_SUFFIX,
		  .multiple = 4096, .given = &have_size },
		{ .name = "btt", .kind = OPT_FLAG, .dest = &o.btt },
		{ .name = "open", .kind = OPT_FLAG, .dest = &open_pools },
		/* a pool is at least PMDK's PMEMBLK_MIN_POOL, 16 MiB */
		{ .name = "sizes", .kind = OPT_U64_LIST, .dest = oo.sizes,
		  .min = 16u << 20, .max = PARSE_SIZE_MAX, .flags = PARSE_SUFFIX,
		  .multiple = 4096, .max_count = BLK_OPEN_MAX_SIZES,
		  .count = &oo.nsizes, .given = &have_sizes },
		{ .name = "domain", .kind = OPT_STR, .dest = &o.domain },
		{ .name = "bs", .letter = 'b', .kind = OPT_U64, .dest = &o.bs,
		  .min = 512, .max = 64u << 20,
		  .flags = PARSE_SUFFIX, .multiple = 512 },
		{ .name = "ops", .letter = 'n', .kind = OPT_U64, .dest = &o.ops,
		  .min = 1, .max = 100000000, .given = &have_ops },
		{ .name = "runs", .letter = 'r', .kind = OPT_INT, .dest = &o.runs,
		  .min = 1, .max = BENCH_MAX_RUNS, .given = &have_runs },
		BENCH_OPTS_NAMESPACE(&o.device, &o.dir),
		BENCH_OPT_NO_PMDK(&no_pmdk),
		BENCH_OPTS_FORMAT(&o.json, &o.csv),
		{ 0 },
	};
	const struct opt_cmd cmd = {
		.name = "bench blk", .opts = opts, .usage = usage,
	};
	int status;

	if (!parse_args(&cmd, argc, argv, &status))
		return status;
	o.pmdk = !no_pmdk;
	if (bench_opt_format("bench blk", o.json, o.csv))
		return 2;
	if (o.domain && strcmp(o.domain, "cpu_cache") &&
	    strcmp(o.domain, "memory_controller"))
		return parse_bad_arg("bench blk", "--domain", o.domain,
				     "cpu_cache or memory_controller");
	if (have_sizes && !open_pools)
		return parse_bad_arg("bench blk", "--sizes", "(given)",
				     "--open with it (the pool sizes it measures)");
	if (open_pools) {
		/* --open measures pools, not I/O on a namespace. */
		static const char *const io_only[] = { "--size", "--ops", "--btt",
						       "--device", "--domain" };
		const bool given[] = { have_size, have_ops, o.btt, o.device,
				       o.domain };

		for (size_t i = 0; i < sizeof(given) / sizeof(given[0]); i++)
			if (given[i])
				return parse_bad_arg("bench blk", io_only[i],
						     "(given)", "no such option "
						     "with --open (it takes "
						     "--sizes, --bs, --runs, "
						     "--dir, --no-pmdk, --json, "
						     "--csv)");
		if (o.bs != 512 && o.bs != 4096) {
			char v[24];

			snprintf(v, sizeof(v), "%llu", (unsigned long long)o.bs);
			return parse_bad_arg("bench blk", "--bs", v,
					     "512 or 4k with --open (a pool's "
					     "block size)");
		}
		oo.bs = o.bs;
		oo.runs = have_runs ? o.runs : 1;
		oo.dir = o.dir;
		oo.json = o.json, oo.csv = o.csv, oo.pmdk = !no_pmdk;
		return bench_blk_open(&oo);
	}
	/* Under the override nothing writes back: one domain only. */
	if (o.domain && strcmp(o.domain, "cpu_cache") &&
	    ntm_persist_domain_active() == NTM_PERSIST_CPU_CACHE)
		return parse_bad_arg("bench blk", "--domain", o.domain,
				     "cpu_cache (NTMEM_PERSIST_DOMAIN=cpu_cache "
				     "is set)");
	if (o.btt && o.bs != 512 && o.bs != 4096) {
		char v[24];

		snprintf(v, sizeof(v), "%llu", (unsigned long long)o.bs);
		return parse_bad_arg("bench blk", "--bs", v,
				     "512 or 4k with --btt (a BTT sector)");
	}
	/* The BTT and pmemblk devices are files in --dir; a device is not. */
	if (o.btt && o.device)
		return parse_bad_arg("bench blk", "--device", o.device,
				     "no --device with --btt (its rows run "
				     "on emulated namespaces in --dir)");
	/* Three namespaces of --size: 8g each would not fit 24 GiB of RAM. */
	if (o.btt && !have_size)
		o.size = 4ull << 30;
	return run(&o);
}
