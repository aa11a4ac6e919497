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
 *
 * Every row uses the same offsets (after the map=dev memmap's reserve),
 * the same request sequence and the same buffer; runs are interleaved and
 * the namespace is written once before timing so no page is faulted in
 * while measured.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <ntmem.h>

#include "bench.h"
#include "commands.h"
#include "parse.h"
#include "peer_pmdk.h"


enum impl { I_DIRECT, I_HARD_MEM, I_HARD_DEV, I_PMDK, NIMPL };
static const char *const impl_names[] = { "direct", "hardened-mem",
					  "hardened-dev", "pmdk" };
enum pattern { P_SEQ_READ, P_RAND_READ, P_SEQ_WRITE, P_RAND_WRITE, NPAT };
static const char *const pattern_names[] = { "seq-read", "rand-read",
					     "seq-write-fua", "rand-write-fua" };

struct options {
	uint64_t size, bs, ops;
	int runs;
	const char *device, *dir;
	bool json, csv, pmdk;
};

struct target {
	struct ntm_ns *ns;
	struct ntm_blk *blk[NIMPL];	/* I_PMDK: none */
	struct ntm_memmap *mm_mem, *mm_dev;
	struct peer_pmdk pmdk;
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

static int cmp_u32(const void *a, const void *b)
{
	uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;

	return (x > y) - (x < y);
}

static double pct(const uint32_t *sorted, size_t n, double p)
{
	return sorted[(size_t)(p / 100.0 * (double)(n - 1))];
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
	room.mem = ntm_ns_size(t->ns) / NTM_PAGE_SIZE * 64 + 2 * o->ops * 8 +
		   (uint64_t)o->runs * o->ops * 4 + o->bs;
	if (bench_check_room("bench blk", &room)) {
		why[0] = '\0';
		return -ENOSPC;
	}
	snprintf(kind, klen, "%s", ntm_ns_kind_name(ntm_ns_kind(t->ns)));
	t->base = ntm_ns_base(t->ns);
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
			.hardened = i != I_DIRECT,
			.memmap = i == I_HARD_MEM ? t->mm_mem
				: i == I_HARD_DEV ? t->mm_dev : NULL,
		};

		ret = ntm_blk_open(&t->blk[i], t->ns, &c);
	}
	if (ret) {
		snprintf(why, wlen, "%s", ntm_errmsg());
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
	{ "pattern", COL_STR, 0 }, { "impl", COL_STR, 0 }, { "bs", COL_INT, 0 },
	{ "kiops", COL_REAL, 0 },  { "min_kiops", COL_REAL, 0 },
	{ "max_kiops", COL_REAL, 0 }, { "p50_ns", COL_INT, 0 },
	{ "p99_ns", COL_INT, 0 },  { "p999_ns", COL_INT, 0 },
	{ "x_direct", COL_REAL, 2 }, { "x_pmdk", COL_REAL, 2 },
};
#define NCOLS ((int)(sizeof(columns) / sizeof(columns[0])))

static int run(const struct options *o)
{
	struct target t = { 0 };
	struct report rep;
	char kind[32], why[256], buf[160];
	double ns[NPAT][NIMPL][BENCH_MAX_RUNS];
	size_t blocks;
	int ret, nimpl = NIMPL;
	uint64_t x = 0x2545f4914f6cdd1dull;

	ret = setup(&t, o, kind, sizeof(kind), why, sizeof(why));
	if (ret) {
		if (why[0])	/* else setup() said why */
			fprintf(stderr, "ntmem bench blk: %s\n", why);
		teardown(&t);
		return 1;
	}
	if (!o->pmdk || !peer_pmdk_load(&t.pmdk, why, sizeof(why))) {
		if (!o->pmdk)
			snprintf(why, sizeof(why), "disabled");
		nimpl = I_PMDK;
	}
	blocks = (ntm_ns_size(t.ns) - t.first) / o->bs;
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

	report_init(&rep, bench_format(o->json, o->csv), "ntmem bench blk",
		    columns, NCOLS);
	report_meta(&rep, "version", "%s", ntm_version());
	report_meta(&rep, "cpu", "%s", bench_cpu_model(buf, sizeof(buf)));
	report_meta(&rep, "namespace", "%s (%s), %s", o->device ? o->device :
		    "emulated: a sparse file", kind,
		    parse_size_name(ntm_ns_size(t.ns), buf, sizeof(buf)));
	report_meta(&rep, "requests", "%llu of %llu bytes per run, one thread, "
		    "queue depth 1; %d runs, median [min, max]; latency "
		    "percentiles from one more run of each row",
		    (unsigned long long)o->ops, (unsigned long long)o->bs, o->runs);
	report_meta(&rep, "pmdk", "%s", nimpl == NIMPL ? t.pmdk.path : why);

	for (int p = 0; p < NPAT; p++) {
		bench_progress(p + 1, NPAT, pattern_names[p]);
		for (int r = 0; r < o->runs; r++)
			for (int im = 0; im < nimpl; im++) {
				uint64_t t0 = bench_now_ns();

				ret = run_once(&t, o, im, p, t.lat);
				if (ret) {
					fprintf(stderr, "ntmem bench blk: %s %s: %s\n",
						pattern_names[p], impl_names[im],
						ntm_errmsg());
					goto out;
				}
				ns[p][im][r] = (double)(bench_now_ns() - t0);
			}
	}
	bench_progress_done();

	for (int p = 0; p < NPAT; p++) {
		struct bench_stats st[NIMPL];

		for (int im = 0; im < nimpl; im++)
			bench_stats(ns[p][im], o->runs, &st[im]);
		for (int im = 0; im < nimpl; im++) {
			double kiops = (double)o->ops / st[im].median * 1e6;
			uint32_t *lat = t.lat;

			/* Latencies of one more run of this row, sorted. */
			ret = run_once(&t, o, im, p, lat);
			if (ret)
				goto out;
			qsort(lat, o->ops, sizeof(*lat), cmp_u32);
			union report_cell cell[NCOLS] = {
				{ .s = pattern_names[p] }, { .s = impl_names[im] },
				{ .i = (long long)o->bs }, { .r = kiops },
				{ .r = (double)o->ops / st[im].max * 1e6 },
				{ .r = (double)o->ops / st[im].min * 1e6 },
				{ .i = (long long)pct(lat, o->ops, 50) },
				{ .i = (long long)pct(lat, o->ops, 99) },
				{ .i = (long long)pct(lat, o->ops, 99.9) },
				{ .r = st[I_DIRECT].median / st[im].median },
				{ .r = nimpl == NIMPL ? st[I_PMDK].median / st[im].median
						      : NAN },
			};
			report_row(&rep, cell);
		}
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
	      "the same mapping, in one run. x_direct and x_pmdk are IOPS ratios.\n"
	      "\n"
	      "  -s, --size BYTES   emulated namespace size (default 8g)\n"
	      "  -b, --bs BYTES     request size, a multiple of 512 (default 4k)\n"
	      "  -n, --ops N        requests per run (default 200000)\n"
	      "  -r, --runs N       runs, median reported (default 5)\n"
	      "  -d, --device PATH  a real devdax device or DAX file instead\n"
	      "      --dir DIR      where the emulated namespace lives (/dev/shm)\n"
	      "      --no-pmdk      skip PMDK\n"
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
	bool no_pmdk = false;
	const struct opt opts[] = {
		{ .name = "size", .letter = 's', .kind = OPT_U64,
		  .dest = &o.size, .min = 4096,
		  .max = PARSE_SIZE_MAX, .flags = PARSE_SUFFIX,
		  .multiple = 4096 },
		{ .name = "bs", .letter = 'b', .kind = OPT_U64, .dest = &o.bs,
		  .min = 512, .max = 64u << 20,
		  .flags = PARSE_SUFFIX, .multiple = 512 },
		{ .name = "ops", .letter = 'n', .kind = OPT_U64, .dest = &o.ops,
		  .min = 1, .max = 100000000 },
		BENCH_OPT_RUNS(&o.runs),
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
	return run(&o);
}
