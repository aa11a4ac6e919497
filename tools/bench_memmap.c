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
#include <fcntl.h>
#include <math.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <ntmem.h>

#include "bench.h"
#include "commands.h"
#include "parse.h"
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
	uint64_t size;
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
	ntm_memset_fn fill;	/* the widest variant's */
	unsigned char *p;
	size_t n;
	pthread_t thread;
};

static void *fill_share_run(void *arg)
{
	struct fill_share *f = arg;

	f->fill(f->p, 0xa5, f->n);
	ntm_drain();	/* each thread orders its own NT stores */
	return NULL;
}

/* 0, or the error of a thread that could not start (the fill is partial). */
static int fill_limit(void *p, size_t n, unsigned threads)
{
	struct fill_share share[MAX_THREADS];
	size_t per = (n / threads + 4095) & ~(size_t)4095;
	unsigned started = 1;
	int err = 0;

	for (unsigned i = 0; i < threads && !err; i++) {
		size_t off = per * i < n ? per * i : n;

		share[i].fill = ntm_variant_memset_flush(bench_widest_variant());
		share[i].p = (unsigned char *)p + off;
		share[i].n = n - off < per ? n - off : per;
		if (i) {
			err = pthread_create(&share[i].thread, NULL,
					     fill_share_run, &share[i]);
			started += !err;
		}
	}
	fill_share_run(&share[0]);
	for (unsigned i = 1; i < started; i++)
		pthread_join(share[i].thread, NULL);
	return -err;
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

/*
 * The headline, printed after the table: the fixed strategy's worst row
 * against the limit (the strategy the library uses unless told), and the
 * limit's speed over the groups, whose spread says whether the run was
 * steady enough to trust it (bench_limit_verdict()).
 */
struct memmap_verdict {
	double worst;		/* x_limit; 0 before the first fixed row */
	char where[96];
	struct bench_limit_range limit;
};

/* Kernel pr_debug lines, printed after the table. */
static char kernel_lines[64][160];
static int nkernel;

static int run_group(const struct options *o, struct report *rep,
		     const struct setup *su, struct ntm_ns *ns, unsigned layout,
		     struct peer_pmdk *pmdk, struct memmap_verdict *v)
{
	struct ntm_memmap_config cfg = {
		.desc_size = layout, .align = su->align, .place = su->place,
		.strategy = NTM_INIT_FIXED, .threads = o->threads,
		.dedup_tails = su->dedup, .ns = ns,
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
	ret = ntm_memmap_init(mm);
	if (ret) {
		fprintf(stderr, "ntmem bench memmap: ntm_memmap_init: %s\n",
			ntm_errmsg());
		ntm_memmap_destroy(mm);
		return ret;
	}
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
	/* A failed init or fill must not be timed as a fast one. */
	for (int r = 0; r < o->runs && !ret; r++) {
		for (int c = 0; c < n && !ret; c++) {
			int s = cases[c].strategy;
			uint64_t t0;

			if (s == STRATEGY_PMDK)
				ret = ntm_memmap_set_init(mm, NTM_INIT_CALL, o->threads,
							  pmdk_copy, pmdk);
			else if (s >= 0)
				ret = ntm_memmap_set_init(mm, s, o->threads, NULL, NULL);
			if (ret) {
				fprintf(stderr, "ntmem bench memmap: ntm_memmap_set_init: "
					"%s\n", ntm_errmsg());
				break;
			}
			(ntm_persist)(ntm_memmap_descs(mm), ntm_memmap_bytes(mm));
			t0 = bench_now_ns();
			ret = s == -2 ? fill_limit(fill, fill_len, o->threads)
				      : ntm_memmap_init(mm);
			cases[c].ns[r] = (double)(bench_now_ns() - t0);
			if (ret)
				fprintf(stderr, "ntmem bench memmap: %s: %s\n",
					s == -2 ? "the limit's fill" : "ntm_memmap_init",
					s == -2 ? strerror(-ret) : ntm_errmsg());
		}
	}
	if (ret) {
		bench_region_free(&scratch);
		ntm_memmap_destroy(mm);
		return ret;
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
	bench_limit_note(&v->limit, (double)fill_len / cases[0].st.median);
	for (int c = 1; c < n; c++) {
		double x = cases[c].st.median / cases[0].st.median;

		if (cases[c].strategy == NTM_INIT_FIXED && x > v->worst) {
			v->worst = x;
			snprintf(v->where, sizeof(v->where), "%s, %u-byte descriptors",
				 setup_name, layout);
		}
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
 * more than the default vm.max_map_count. As root the run raises it and
 * puts the old value back when it ends, also when it ends by SIGINT,
 * SIGTERM, SIGHUP or SIGQUIT: the handler writes the saved text with
 * open/write/close (async-signal-safe) and dies of the same signal. Not
 * as root, a value too low is refused before the run, with the command
 * that raises it.
 */
#define MAP_COUNT_PATH "/proc/sys/vm/max_map_count"

static char map_count_old[24];	/* "65530\n", written by the handler */
static size_t map_count_old_len;
static const int fatal_signals[] = { SIGHUP, SIGINT, SIGQUIT, SIGTERM };
static struct sigaction fatal_old[sizeof(fatal_signals) / sizeof(*fatal_signals)];
#define NFATAL (sizeof(fatal_signals) / sizeof(*fatal_signals))

/* Async-signal-safe: 0 or -errno. */
static int map_count_write(const char *text, size_t len)
{
	int fd = open(MAP_COUNT_PATH, O_WRONLY | O_CLOEXEC), err = 0;

	if (fd < 0)
		return -errno;
	if (write(fd, text, len) != (ssize_t)len)
		err = -errno;
	close(fd);
	return err;
}

static void map_count_restore_and_die(int sig)
{
	map_count_write(map_count_old, map_count_old_len);
	/* SA_RESETHAND put the default action back; the signal is blocked
	 * until this returns, then it ends the process as it would have. */
	raise(sig);
}

static void map_count_restore(void)
{
	map_count_write(map_count_old, map_count_old_len);
	for (size_t i = 0; i < NFATAL; i++)
		if (fatal_old[i].sa_handler != SIG_IGN)
			sigaction(fatal_signals[i], &fatal_old[i], NULL);
}

/* 0 with *@raised the new value (0: left alone), or 1 after saying why. */
static int map_count_raise(const struct options *o, uint64_t ns_size,
			   long *old, long *raised)
{
	struct sigaction sa = { .sa_handler = map_count_restore_and_die,
				.sa_flags = SA_RESETHAND };
	FILE *f = fopen(MAP_COUNT_PATH, "r");
	char text[24];
	long need = 0;
	int ret;

	*old = *raised = 0;
	for (int s = 0; s < o->nsetups; s++)
		if (o->setups[s].dedup)
			need = 2 * (long)(ns_size / o->setups[s].align) + 65536;
	if (!f)
		return 0;
	if (fscanf(f, "%ld", old) != 1)
		*old = 0;
	fclose(f);
	if (!need || !*old || *old >= need)
		return 0;
	if (geteuid() != 0) {
		fprintf(stderr, "ntmem bench memmap: the dedup setup maps up to "
			"%ld regions, vm.max_map_count is %ld: raise it (sysctl -w "
			"vm.max_map_count=%ld) or run as root\n", need, *old, need);
		return 1;
	}
	map_count_old_len = (size_t)snprintf(map_count_old, sizeof(map_count_old),
					     "%ld\n", *old);
	/*
	 * The handlers first: a signal after the write must find them. A
	 * signal the run was started ignoring (nohup, a background job of a
	 * script) stays ignored: it cannot end the run.
	 */
	sigemptyset(&sa.sa_mask);
	for (size_t i = 0; i < NFATAL; i++) {
		sigaction(fatal_signals[i], NULL, &fatal_old[i]);
		if (fatal_old[i].sa_handler != SIG_IGN)
			sigaction(fatal_signals[i], &sa, NULL);
	}
	ret = map_count_write(text, (size_t)snprintf(text, sizeof(text), "%ld\n",
						     need));
	if (ret) {
		map_count_restore();
		fprintf(stderr, "ntmem bench memmap: cannot raise vm.max_map_count "
			"from %ld to %ld for the dedup setup: %s\n", *old, need,
			strerror(-ret));
		return 1;
	}
	*raised = need;
	return 0;
}

/*
 * What the run needs, refused up front when it does not fit: the largest
 * map=dev memmap is written into the namespace (a file in --dir), the
 * largest map=mem memmap, and with dedup its limit's scratch copy, into
 * memory. Setups run one after the other, so the largest counts.
 */
static int check_room(const struct options *o, uint64_t ns_size)
{
	uint64_t pages = ns_size / NTM_PAGE_SIZE, disk = 0, mem = 0;
	struct bench_room room = {
		.disk_what = "the map=dev memmap at the start of the namespace",
		.mem_what = "the map=mem memmap",
	};

	for (int s = 0; s < o->nsetups; s++) {
		const struct setup *su = &o->setups[s];

		for (int l = 0; l < o->nlayouts; l++) {
			uint64_t bytes = pages * o->layouts[l];
			uint64_t per_comp = su->align / NTM_PAGE_SIZE;

			if (su->dedup && o->layouts[l] != 64)
				continue;
			if (su->place == NTM_MEMMAP_DEV) {
				bytes = (bytes + su->align - 1) / su->align * su->align;
				disk = bytes > disk ? bytes : disk;
				continue;
			}
			/* dedup: a head page per compound page, one shared tail
			 * run (ntm_memmap_mem_bytes()), and the limit's copy */
			if (su->dedup)
				bytes = 2 * (pages / per_comp + 64 * per_comp /
					     NTM_PAGE_SIZE) * NTM_PAGE_SIZE;
			mem = bytes > mem ? bytes : mem;
		}
	}
	room.dir = o->device ? NULL : o->dir;
	room.disk = o->device ? 0 : disk;
	room.mem = mem;
	return bench_check_room("bench memmap", &room);
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

/*
 * A real device dictates its own setup: devdax has the compound pages of
 * its alignment; a DAX file (or any other file) stands for fsdax, whose
 * kernel memmap has one 4 KiB page per struct page however the file
 * happens to be mapped.
 */
static void device_setup(struct setup *su, const struct ntm_ns *ns)
{
	if (ntm_ns_kind(ns) == NTM_NS_DEVDAX) {
		su->name = "devdax";
		su->align = ntm_ns_align(ns);
	} else {
		su->name = "fsdax";
		su->align = 4096;
	}
}

static int run(struct options *o)
{
	struct peer_pmdk pmdk = { 0 };
	struct report rep;
	char why[256], buf[160];
	int groups = o->nsetups * o->nlayouts, done = 0, ret = 0;
	struct memmap_verdict verdict = { 0 };
	uint64_t ns_size = o->size;
	long old_maps, raised;

	if (o->device) {
		/* A real device dictates its own size and alignment. */
		struct ntm_ns *ns;

		if (open_namespace(o, &o->setups[0], &ns))
			return 1;
		ns_size = ntm_ns_size(ns);
		device_setup(&o->setups[0], ns);
		ntm_ns_close(ns);
	}
	if (check_room(o, ns_size) || map_count_raise(o, ns_size, &old_maps, &raised))
		return 1;

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
		report_meta(&rep, "size", "%s in %s", parse_size_name(o->size, buf,
			    sizeof(buf)), o->dir);
	report_meta(&rep, "variant", "copies %s, limit = %s nt-fill",
		    ntm_variant_name(ntm_variant_active()),
		    ntm_variant_name(bench_widest_variant()));
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
		if (o->device)
			device_setup(&o->setups[s], ns);
		for (int l = 0; l < o->nlayouts && !ret; l++) {
			snprintf(buf, sizeof(buf), "%s, %u-byte descriptors",
				 o->setups[s].name, o->layouts[l]);
			bench_progress(++done, groups, buf);
			if (o->setups[s].dedup && o->layouts[l] != 64)
				continue;	/* only 64 bytes is a power of two */
			ret = run_group(o, &rep, &o->setups[s], ns, o->layouts[l],
					&pmdk, &verdict);
		}
		ntm_ns_close(ns);
	}
	bench_progress_done();
	if (raised)
		map_count_restore();
	/* A failure before the first row prints its error, not an empty table. */
	if (!ret || rep.rows)
		report_end(&rep);
	if (rep.format == REPORT_TABLE)
		for (int i = 0; i < nkernel; i++)
			printf("%s\n", kernel_lines[i]);
	if (rep.format == REPORT_TABLE && verdict.worst > 0)
		printf("fixed strategy, worst row against the limit: %.2fx (%s); "
		       "limit %.1f-%.1f GB/s over the groups%s\n", verdict.worst,
		       verdict.where, verdict.limit.lo, verdict.limit.hi,
		       bench_limit_verdict(&verdict.limit));
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
	      "  -h, --help             this text\n"
	      "\n"
	      "Sizes are whole decimal numbers of bytes with an optional k, m, g or t\n"
	      "suffix (binary units: 2m = 2097152); N is a decimal number. A run\n"
	      "whose map=dev memmap does not fit in DIR's free space, or whose map=mem\n"
	      "memmap does not fit in MemAvailable, is refused before it starts.\n"
	      "--dedup needs vm.max_map_count above 2 x size / align: as root the\n"
	      "run raises it and puts it back at its end, also when ended by SIGINT,\n"
	      "SIGTERM, SIGHUP or SIGQUIT; otherwise it says how to raise it.\n",
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

/* The compound page sizes a namespace of the seeds' setups has. */
static bool valid_align(uint64_t a)
{
	return a == 4096 || a == (2u << 20) || a == (1u << 30);
}

int cmd_bench_memmap(int argc, char **argv)
{
	/* indexed by enum ntm_memmap_place */
	static const char *const places[] = { "mem", "dev", NULL };
	struct options o = {
		.size = 100ull << 30, .threads = 1, .runs = 5, .dir = "/dev/shm",
		.pmdk = true,
	};
	const char *strategies = "field,memcpy,nt,fixed,pmdk";
	uint64_t layouts[MAX_LAYOUTS] = { 64, 80, 96 }, a = 4096;
	int map = NTM_MEMMAP_DEV, threads = 1, status;
	bool no_pmdk = false, align_given = false, map_given = false;
	const struct opt opts[] = {
		{ .name = "size", .letter = 's', .kind = OPT_U64,
		  .dest = &o.size, .min = 4096,
		  .max = PARSE_SIZE_MAX, .flags = PARSE_SUFFIX,
		  .multiple = 4096 },
		{ .name = "layout", .letter = 'l', .kind = OPT_U64_LIST,
		  .dest = layouts, .min = 64, .max = 96,
		  .multiple = 16, .max_count = MAX_LAYOUTS,
		  .count = &o.nlayouts,
		  .expected = "a comma list of 64, 80 and 96" },
		{ .name = "align", .letter = 'a', .kind = OPT_U64, .dest = &a,
		  .min = 4096, .max = 1u << 30,
		  .flags = PARSE_SUFFIX, .valid = valid_align,
		  .expected = "4k, 2m or 1g", .given = &align_given },
		{ .name = "map", .letter = 'm', .kind = OPT_CHOICE,
		  .dest = &map, .choices = places,
		  .given = &map_given },
		{ .name = "strategy", .letter = 'S', .kind = OPT_STR,
		  .dest = &strategies },
		{ .name = "threads", .letter = 't', .kind = OPT_INT,
		  .dest = &threads, .min = 1, .max = MAX_THREADS },
		BENCH_OPT_RUNS(&o.runs),
		BENCH_OPTS_NAMESPACE(&o.device, &o.dir),
		BENCH_OPT_NO_PMDK(&no_pmdk),
		{ .name = "dedup", .kind = OPT_FLAG, .dest = &o.dedup },
		BENCH_OPTS_FORMAT(&o.json, &o.csv),
		{ 0 },
	};
	const struct opt_cmd cmd = {
		.name = "bench memmap", .opts = opts, .usage = usage,
	};
	enum ntm_memmap_place place;

	o.nlayouts = MAX_LAYOUTS;
	if (!parse_args(&cmd, argc, argv, &status))
		return status;
	o.pmdk = !no_pmdk;
	o.threads = (unsigned)threads;
	place = (enum ntm_memmap_place)map;
	for (int i = 0; i < o.nlayouts; i++)
		o.layouts[i] = (unsigned)layouts[i];
	if (parse_strategies(&o, strategies))
		return parse_bad_arg("bench memmap", "--strategy", strategies,
				     "a comma list of field, memcpy, nt, fixed, pmdk");
	if (!o.device && o.size % a) {
		char given[32];

		snprintf(given, sizeof(given), "%llu", (unsigned long long)o.size);
		return parse_bad_arg("bench memmap", "--size", given,
				     "a multiple of --align");
	}
	if (bench_opt_format("bench memmap", o.json, o.csv))
		return 2;

	if (align_given || map_given || o.device) {
		o.setups[0] = (struct setup){ a == 4096 ? "fsdax" : "devdax", a,
					      place, o.dedup };
		o.nsetups = 1;
		if (o.dedup && (a == 4096 || place != NTM_MEMMAP_MEM))
			return parse_bad_arg("bench memmap", "--dedup", "here",
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
