// SPDX-License-Identifier: MIT
/*
 * bench_memmap.c - `ntmem bench memmap`: the seeds' experiment. How long
 * does initialising the memmap of a 100 GiB namespace take, per descriptor
 * layout and init strategy, against the streaming-write limit of the same
 * bytes measured in the same run?
 *
 * Default setups, as in the seeds: an fsdax-like namespace with map=dev
 * and 4 KiB pages (nd_pmem), and a devdax-like one with map=dev and
 * align=2M (dax_pmem). Without --device the namespace is a sparse file in
 * /dev/shm: only the memmap's pages are ever written, so 100 GiB costs the
 * memmap's 1.6-2.4 GB of memory.
 *
 * For each (setup, layout) the strategies' runs are interleaved with runs
 * of the limit (an NT fill of the memmap's bytes by the same number of
 * threads), each run preceded by an untimed write-back of the memmap so
 * none inherits another's dirty lines; one untimed warm-up init first
 * faults every page in.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <getopt.h>
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <ntmem.h>

#include "bench.h"
#include "commands.h"
#include "peer_pmdk.h"

#define MAX_LAYOUTS 3
#define MAX_STRATS 8
#define MAX_THREADS 64

struct setup {
	const char *name;	/* "fsdax" or "devdax" */
	size_t align;
	enum ntm_memmap_place place;
	bool dedup;		/* shared tail pages; 64-byte layout only */
};

struct options {
	size_t size;
	unsigned layouts[MAX_LAYOUTS];
	int nlayouts;
	int strategies[MAX_STRATS];	/* enum ntm_memmap_strategy, -1 = pmdk */
	int nstrategies;
	struct setup setups[3];
	int nsetups;
	unsigned threads;
	int runs;
	const char *device;
	const char *dir;
	bool json, csv, pmdk, dedup;
};

#define STRATEGY_PMDK (-1)

struct bench_case {
	const char *name;
	int strategy;		/* -1: the limit; else as in options */
	double ns[BENCH_MAX_RUNS];
	struct bench_stats st;
};

/* --- the limit: an NT fill of the memmap's bytes, split over threads --- */

struct fill_share {
	const struct ntm_variant *v;
	unsigned char *p;
	size_t n;
	pthread_t thread;
};

static void *fill_share_run(void *arg)
{
	struct fill_share *f = arg;

	f->v->memset_nt(f->p, 0xa5, f->n);
	ntm_drain();	/* each thread orders its own NT stores */
	return NULL;
}

static void fill_limit(void *p, size_t n, unsigned threads)
{
	struct fill_share share[MAX_THREADS];
	size_t per = (n / threads + 4095) & ~(size_t)4095;

	for (unsigned i = 0; i < threads; i++) {
		size_t off = per * i < n ? per * i : n;

		share[i].v = bench_widest_variant();
		share[i].p = (unsigned char *)p + off;
		share[i].n = n - off < per ? n - off : per;
		if (i && pthread_create(&share[i].thread, NULL, fill_share_run,
					&share[i]))
			share[i].n = 0, share[i].thread = 0;
	}
	fill_share_run(&share[0]);
	for (unsigned i = 1; i < threads; i++)
		if (share[i].thread)
			pthread_join(share[i].thread, NULL);
}

/* --- PMDK as the copy of the "call" strategy --- */

static void *pmdk_copy(void *dst, const void *src, size_t n, void *arg)
{
	const struct peer_pmdk *p = arg;

	return p->memcpy(dst, src, n,
			 PEER_PMEM_F_MEM_NONTEMPORAL | PEER_PMEM_F_MEM_NODRAIN);
}

/* --- one (setup, layout) group --- */

static const struct report_col columns[] = {
	{ "setup", COL_STR, 0 },   { "layout", COL_INT, 0 },
	{ "strategy", COL_STR, 0 }, { "threads", COL_INT, 0 },
	{ "pages", COL_INT, 0 },   { "median_ms", COL_REAL, 2 },
	{ "min_ms", COL_REAL, 2 }, { "max_ms", COL_REAL, 2 },
	{ "GBps", COL_REAL, 2 },   { "x_limit", COL_REAL, 2 },
	{ "x_field", COL_REAL, 2 }, { "mem_MiB", COL_REAL, 1 },
};
#define NCOLS ((int)(sizeof(columns) / sizeof(columns[0])))

/* Kernel pr_debug lines, printed after the table. */
static char kernel_lines[64][160];
static int nkernel;

static int run_group(const struct options *o, struct report *rep,
		     const struct setup *su, struct ntm_ns *ns, unsigned layout,
		     struct peer_pmdk *pmdk)
{
	struct ntm_memmap_config cfg = {
		.desc_size = layout, .align = su->align, .place = su->place,
		.strategy = NTM_INIT_FIXED, .threads = o->threads,
		.dedup_tails = su->dedup,
	};
	struct bench_case cases[MAX_STRATS + 1];
	struct ntm_memmap *mm;
	int n = 0, ret;
	double field = NAN;
	char setup_name[64];

	ret = ntm_memmap_create(&mm, ntm_ns_base(ns), ntm_ns_size(ns), ns, &cfg);
	if (ret) {
		fprintf(stderr, "ntmem bench memmap: %s\n", ntm_errmsg());
		return ret;
	}
	cases[n++] = (struct bench_case){ .name = "nt-fill", .strategy = -2 };
	for (int i = 0; i < o->nstrategies; i++) {
		int s = o->strategies[i];

		if (s == STRATEGY_PMDK && !pmdk->handle)
			continue;
		cases[n++] = (struct bench_case){
			.name = s == STRATEGY_PMDK ? "pmdk" : ntm_memmap_strategy_name(s),
			.strategy = s,
		};
	}

	/*
	 * The limit fills the bytes an init writes. With dedup those are the
	 * head pages and one tail run, not the read-only shared mappings, so
	 * the limit fills a scratch buffer of that size instead.
	 */
	void *fill = ntm_memmap_descs(mm);
	size_t fill_len = ntm_memmap_bytes(mm);
	struct bench_region scratch = { 0 };

	/* Warm-up: fault every page of the memmap in, untimed. */
	ntm_memmap_init(mm);
	if (su->dedup) {
		fill_len = ntm_memmap_mem_bytes(mm);
		ret = bench_region_alloc(&scratch, fill_len, true);
		if (ret) {
			fprintf(stderr, "ntmem bench memmap: cannot map %zu bytes: %s\n",
				fill_len, strerror(-ret));
			ntm_memmap_destroy(mm);
			return ret;
		}
		fill = scratch.base;
	}
	for (int r = 0; r < o->runs; r++) {
		for (int c = 0; c < n; c++) {
			int s = cases[c].strategy;
			uint64_t t0;

			if (s == STRATEGY_PMDK)
				ntm_memmap_set_init(mm, NTM_INIT_CALL, o->threads,
						    pmdk_copy, pmdk);
			else if (s >= 0)
				ntm_memmap_set_init(mm, s, o->threads, NULL, NULL);
			(ntm_persist)(ntm_memmap_descs(mm), ntm_memmap_bytes(mm));
			t0 = bench_now_ns();
			if (s == -2)
				fill_limit(fill, fill_len, o->threads);
			else
				ntm_memmap_init(mm);
			cases[c].ns[r] = (double)(bench_now_ns() - t0);
		}
	}

	snprintf(setup_name, sizeof(setup_name), "%s map=%s align=%s%s", su->name,
		 su->place == NTM_MEMMAP_DEV ? "dev" : "mem",
		 su->align == 4096 ? "4k" : su->align == (2u << 20) ? "2m" : "1g",
		 su->dedup ? " dedup" : "");
	for (int c = 0; c < n; c++) {
		bench_stats(cases[c].ns, o->runs, &cases[c].st);
		if (cases[c].strategy == NTM_INIT_FIELD)
			field = cases[c].st.median;
	}
	for (int c = 0; c < n; c++) {
		const struct bench_stats *st = &cases[c].st;
		union report_cell cell[NCOLS] = {
			{ .s = setup_name }, { .i = layout }, { .s = cases[c].name },
			{ .i = o->threads }, { .i = (long long)ntm_memmap_nr_pages(mm) },
			{ .r = st->median / 1e6 }, { .r = st->min / 1e6 },
			{ .r = st->max / 1e6 },
			{ .r = (double)fill_len / st->median },
			{ .r = st->median / cases[0].st.median },
			{ .r = st->median / field },
			{ .r = (double)ntm_memmap_mem_bytes(mm) / (1 << 20) },
		};

		report_row(rep, cell);
		if (c && nkernel < 64)
			snprintf(kernel_lines[nkernel++], sizeof(kernel_lines[0]),
				 "memmap_init_zone_device initialised %zu pages in "
				 "%.0fms   [%s, %u B, %s]",
				 ntm_memmap_nr_pages(mm), st->median / 1e6,
				 setup_name, layout, cases[c].name);
	}
	if (su->dedup && nkernel < 64)
		snprintf(kernel_lines[nkernel++], sizeof(kernel_lines[0]),
			 "dedup: %zu descriptors take %.1f MiB instead of %.1f MiB "
			 "(%.3fx)", ntm_memmap_nr_pages(mm),
			 ntm_memmap_mem_bytes(mm) / 1048576.0,
			 ntm_memmap_bytes(mm) / 1048576.0,
			 (double)ntm_memmap_mem_bytes(mm) / (double)ntm_memmap_bytes(mm));
	bench_region_free(&scratch);
	ntm_memmap_destroy(mm);
	return 0;
}

/*
 * Dedup maps two regions per compound page; 100 GiB of 2 MiB pages needs
 * more than the default vm.max_map_count. As root, raise it for the run
 * and put it back after; otherwise the dedup setup reports the error.
 */
static long raise_map_count(const struct options *o, long *old)
{
	FILE *f = fopen("/proc/sys/vm/max_map_count", "r");
	long need = 0;

	*old = 0;
	for (int s = 0; s < o->nsetups; s++)
		if (o->setups[s].dedup)
			need = 2 * (long)(o->size / o->setups[s].align) + 65536;
	if (!f)
		return 0;
	if (fscanf(f, "%ld", old) != 1)
		*old = 0;
	fclose(f);
	if (!need || *old >= need || geteuid() != 0)
		return 0;
	f = fopen("/proc/sys/vm/max_map_count", "w");
	if (!f)
		return 0;
	fprintf(f, "%ld\n", need);
	return fclose(f) == 0 ? need : 0;
}

static void restore_map_count(long old)
{
	FILE *f = fopen("/proc/sys/vm/max_map_count", "w");

	if (f) {
		fprintf(f, "%ld\n", old);
		fclose(f);
	}
}

static int open_namespace(const struct options *o, const struct setup *su,
			  struct ntm_ns **ns)
{
	char path[512];
	int ret;

	if (o->device) {
		ret = ntm_ns_open(ns, o->device, 0);
	} else {
		snprintf(path, sizeof(path), "%s/ntmem-bench-memmap-%d", o->dir,
			 (int)getpid());
		ret = ntm_ns_create(ns, path, o->size, su->align, NTM_NS_TEMPORARY);
	}
	if (ret)
		fprintf(stderr, "ntmem bench memmap: %s\n", ntm_errmsg());
	return ret;
}

static int run(struct options *o)
{
	struct peer_pmdk pmdk = { 0 };
	struct report rep;
	char why[256], buf[160];
	int groups = o->nsetups * o->nlayouts, done = 0, ret = 0;
	long old_maps, raised = raise_map_count(o, &old_maps);

	if (o->pmdk && !peer_pmdk_load(&pmdk, why, sizeof(why)))
		pmdk.handle = NULL;
	else if (!o->pmdk)
		snprintf(why, sizeof(why), "disabled");

	report_init(&rep, bench_format(o->json, o->csv), "ntmem bench memmap",
		    columns, NCOLS);
	report_meta(&rep, "version", "%s", ntm_version());
	report_meta(&rep, "cpu", "%s", bench_cpu_model(buf, sizeof(buf)));
	report_meta(&rep, "namespace", "%s", o->device ? o->device :
		    "emulated: a sparse file (no --device given)");
	if (!o->device)
		report_meta(&rep, "size", "%s in %s", bench_size_name(o->size, buf,
			    sizeof(buf)), o->dir);
	report_meta(&rep, "variant", "copies %s, limit = %s nt-fill",
		    ntm_variant_active()->name, bench_widest_variant()->name);
	report_meta(&rep, "runs", "%d, median [min, max]; memmap written back "
		    "before each run", o->runs);
	report_meta(&rep, "pmdk", "%s", pmdk.handle ? pmdk.path : why);
	if (raised)
		report_meta(&rep, "vm.max_map_count", "raised from %ld to %ld for "
			    "the dedup setup, restored after", old_maps, raised);
	report_meta(&rep, "ratios", "x_limit = time / nt-fill of the same bytes "
		    "with the same threads; x_field = time / field strategy");

	for (int s = 0; s < o->nsetups && !ret; s++) {
		struct ntm_ns *ns;

		ret = open_namespace(o, &o->setups[s], &ns);
		if (ret)
			break;
		if (o->device) /* a real device dictates its own alignment */
			o->setups[s].align = ntm_ns_align(ns);
		for (int l = 0; l < o->nlayouts && !ret; l++) {
			snprintf(buf, sizeof(buf), "%s, %u-byte descriptors",
				 o->setups[s].name, o->layouts[l]);
			bench_progress(++done, groups, buf);
			if (o->setups[s].dedup && o->layouts[l] != 64)
				continue;	/* only 64 bytes is a power of two */
			ret = run_group(o, &rep, &o->setups[s], ns, o->layouts[l],
					&pmdk);
		}
		ntm_ns_close(ns);
	}
	bench_progress_done();
	if (raised)
		restore_map_count(old_maps);
	/* A failure before the first row prints its error, not an empty table. */
	if (!ret || rep.rows)
		report_end(&rep);
	if (rep.format == REPORT_TABLE)
		for (int i = 0; i < nkernel; i++)
			printf("%s\n", kernel_lines[i]);
	if (pmdk.handle)
		peer_pmdk_unload(&pmdk);
	return ret ? 1 : 0;
}

static void usage(FILE *out)
{
	fputs("usage: ntmem bench memmap [options]\n"
	      "\n"
	      "Time to initialise the page descriptors (memmap) of a namespace, per\n"
	      "descriptor layout and init strategy, against the streaming-write limit\n"
	      "of the same bytes. Default: the seeds' two setups on an emulated\n"
	      "100 GiB namespace, fsdax map=dev with 4 KiB pages and devdax map=dev\n"
	      "with align=2M.\n"
	      "\n"
	      "  -s, --size BYTES       emulated namespace size (default 100g)\n"
	      "  -l, --layout LIST      descriptor sizes: 64,80,96 (default all)\n"
	      "  -a, --align A          4k, 2m or 1g: one setup with this alignment\n"
	      "  -m, --map PLACE        dev or mem: one setup with this placement\n"
	      "  -S, --strategy LIST    field,memcpy,nt,fixed,pmdk (default all)\n"
	      "  -t, --threads N        threads per init and per limit fill (default 1)\n"
	      "  -r, --runs N           runs, median reported (default 5)\n"
	      "  -d, --device PATH      a real devdax device or DAX file instead\n"
	      "      --dedup            add devdax map=mem align=2M with shared tail\n"
	      "                         pages (64-byte layout), and report its memory\n"
	      "      --dir DIR          where the emulated namespace lives (/dev/shm)\n"
	      "      --no-pmdk          skip PMDK\n"
	      "      --json, --csv      machine-readable output\n"
	      "  -h, --help             this text\n",
	      out);
}

static int parse_strategies(struct options *o, const char *list)
{
	char buf[256];
	char *save = NULL;

	if (strlen(list) >= sizeof(buf))
		return -EINVAL;
	strcpy(buf, list);
	o->nstrategies = 0;
	for (char *t = strtok_r(buf, ",", &save); t; t = strtok_r(NULL, ",", &save)) {
		int s = strcmp(t, "pmdk") == 0 ? STRATEGY_PMDK
						: ntm_memmap_strategy_parse(t);

		if (s == -EINVAL || s == NTM_INIT_CALL || o->nstrategies == MAX_STRATS)
			return -EINVAL;
		o->strategies[o->nstrategies++] = s;
	}
	return o->nstrategies ? 0 : -EINVAL;
}

int cmd_bench_memmap(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "size", required_argument, NULL, 's' },
		{ "layout", required_argument, NULL, 'l' },
		{ "align", required_argument, NULL, 'a' },
		{ "map", required_argument, NULL, 'm' },
		{ "strategy", required_argument, NULL, 'S' },
		{ "threads", required_argument, NULL, 't' },
		{ "runs", required_argument, NULL, 'r' },
		{ "device", required_argument, NULL, 'd' },
		{ "dir", required_argument, NULL, 'D' },
		{ "no-pmdk", no_argument, NULL, 'P' },
		{ "dedup", no_argument, NULL, 'X' },
		{ "json", no_argument, NULL, 'j' },
		{ "csv", no_argument, NULL, 'x' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	struct options o = {
		.size = 100ull << 30, .threads = 1, .runs = 5, .dir = "/dev/shm",
		.pmdk = true,
	};
	const char *layouts = "64,80,96", *strategies = "field,memcpy,nt,fixed,pmdk";
	const char *align = NULL, *map = NULL;
	size_t sizes[MAX_LAYOUTS], a = 4096;
	enum ntm_memmap_place place = NTM_MEMMAP_DEV;
	int opt, n;

	optind = 1;
	while ((opt = getopt_long(argc, argv, "s:l:a:m:S:t:r:d:h", longopts, NULL)) != -1) {
		switch (opt) {
		case 's':
			if (bench_parse_size(optarg, &o.size) || o.size == 0)
				return cmd_bad_arg("bench memmap", "--size", optarg,
						   "a size such as 100g");
			break;
		case 'l': layouts = optarg; break;
		case 'a': align = optarg; break;
		case 'm': map = optarg; break;
		case 'S': strategies = optarg; break;
		case 't':
			if (bench_opt_int("bench memmap", "--threads", optarg, 1,
					  MAX_THREADS, &n))
				return 2;
			o.threads = (unsigned)n;
			break;
		case 'r':
			if (bench_opt_runs("bench memmap", optarg, &o.runs))
				return 2;
			break;
		case 'd': o.device = optarg; break;
		case 'D': o.dir = optarg; break;
		case 'P': o.pmdk = false; break;
		case 'X': o.dedup = true; break;
		case 'j': o.json = true; break;
		case 'x': o.csv = true; break;
		case 'h': usage(stdout); return 0;
		default: usage(stderr); return 2;
		}
	}
	if (optind < argc)
		return cmd_bad_arg("bench memmap", "argument", argv[optind],
				   "options only");
	if (bench_parse_size_list(layouts, sizes, MAX_LAYOUTS, &o.nlayouts))
		return cmd_bad_arg("bench memmap", "--layout", layouts,
				   "a comma list of 64, 80 and 96");
	for (int i = 0; i < o.nlayouts; i++) {
		if (sizes[i] != 64 && sizes[i] != 80 && sizes[i] != 96)
			return cmd_bad_arg("bench memmap", "--layout", layouts,
					   "a comma list of 64, 80 and 96");
		o.layouts[i] = (unsigned)sizes[i];
	}
	if (parse_strategies(&o, strategies))
		return cmd_bad_arg("bench memmap", "--strategy", strategies,
				   "a comma list of field, memcpy, nt, fixed, pmdk");
	if (align && (bench_parse_size(align, &a) ||
		      (a != 4096 && a != (2u << 20) && a != (1u << 30))))
		return cmd_bad_arg("bench memmap", "--align", align, "4k, 2m or 1g");
	if (map && strcmp(map, "dev") && strcmp(map, "mem"))
		return cmd_bad_arg("bench memmap", "--map", map, "dev or mem");
	if (map)
		place = strcmp(map, "mem") ? NTM_MEMMAP_DEV : NTM_MEMMAP_MEM;
	if (!o.device && o.size % (a > 4096 ? a : 4096)) {
		char given[32];

		snprintf(given, sizeof(given), "%zu", o.size);
		return cmd_bad_arg("bench memmap", "--size", given,
				   "a multiple of --align");
	}
	if (bench_opt_format("bench memmap", o.json, o.csv))
		return 2;

	if (align || map || o.device) {
		o.setups[0] = (struct setup){ a == 4096 ? "fsdax" : "devdax", a,
					      place, o.dedup };
		o.nsetups = 1;
		if (o.dedup && (a == 4096 || place != NTM_MEMMAP_MEM))
			return cmd_bad_arg("bench memmap", "--dedup", "here",
					   "--map mem and --align 2m or 1g");
	} else {
		o.setups[0] = (struct setup){ "fsdax", 4096, NTM_MEMMAP_DEV, false };
		o.setups[1] = (struct setup){ "devdax", 2u << 20, NTM_MEMMAP_DEV, false };
		o.nsetups = 2;
		if (o.dedup)
			o.setups[o.nsetups++] = (struct setup){
				"devdax", 2u << 20, NTM_MEMMAP_MEM, true };
	}
	return run(&o);
}
