// SPDX-License-Identifier: MIT
/*
 * bench_calibrate.c - `ntmem bench copy --calibrate`: the size from which
 * ntm_memcpy_flush()'s non-temporal copy beats a copy through the cache
 * plus write-back on the machine at hand, and the thresholds to set:
 * NTMEM_NT_THRESHOLD for the library, PMEM_MOVNT_THRESHOLD for its libpmem
 * drop-in.
 *
 * Workload and method are bench copy's (bench_copy.c): copies of one
 * non-zero source into consecutive slots of a pre-faulted region filled
 * with non-zero data (this machine writes zero lines faster), the cases
 * of each (size, destination offset) group interleaved run by run, the
 * region written back before each run, each run ending with the fence its
 * copies need before their data is durable (ntm_drain()). The cases:
 *   cached   memcpy() then ntm_flush() of the copy, per copy: the other
 *            way to leave no line dirty
 *   nt       the active variant's flush copy, called directly: its
 *            non-temporal stores with no policy in front
 *   default  ntm_memcpy_flush(): what the library does now, with the
 *            threshold in force (NTMEM_NT_THRESHOLD or the default)
 *
 * The crossover at one offset is the smallest size from which nt beat
 * cached (medians) at every larger size measured. The library applies
 * NTMEM_NT_THRESHOLD only to destinations that are not 8-byte aligned
 * (ntm_memcpy_flush(3)): its line is the largest crossover
 * at such offsets. The drop-in applies PMEM_MOVNT_THRESHOLD, PMDK's, at
 * every alignment and hands longer copies to ntm_memcpy_flush(), which
 * applies NTMEM_NT_THRESHOLD to the unaligned ones: its line is the
 * largest crossover at 8-byte aligned offsets.
 */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <ntmem.h>
#include <ntmem/introspect.h>	/* the threshold in effect, and its default */

#include "bench.h"
#include "bench_calibrate.h"
#include "bench_inline.h"
#include "parse.h"

enum ccase { C_CACHED, C_NT, C_DEFAULT, NCASES };

struct group {
	size_t size, align;
	double ns[NCASES][BENCH_MAX_RUNS];
	struct bench_stats st[NCASES];
};

static const uint64_t default_sizes[] = {
	64, 96, 128, 192, 256, 384, 512, 768, 1 << 10, 1536, 2 << 10, 3 << 10,
	4 << 10, 8 << 10, 16 << 10, 64 << 10, 256 << 10, 1 << 20, 4 << 20,
};
static const uint64_t quick_sizes[] = {
	64, 256, 1 << 10, 4 << 10, 64 << 10, 1 << 20,
};

/* The active variant's flush copy: non-temporal, no policy in front. */
static void *(*nt_flush)(void *dst, const void *src, size_t n);

static double time_case(enum ccase c, const struct loop *l)
{
	/* volatile: glibc's memcpy is called, not expanded by the compiler */
	void *(*volatile libc_memcpy)(void *, const void *, size_t) = memcpy;
	void *(*cpy)(void *, const void *, size_t) = libc_memcpy;
	unsigned char *d = l->dst;
	size_t size = l->size, count = l->count;
	uint64_t t0 = bench_now_ns();

	switch (c) {
	case C_CACHED:
		for (size_t i = 0; i < count; i++, d += size) {
			cpy(d, l->src, size);
			(ntm_flush)(d, size);
		}
		break;
	case C_NT:
		for (size_t i = 0; i < count; i++, d += size)
			nt_flush(d, l->src, size);
		break;
	case C_DEFAULT:
		for (size_t i = 0; i < count; i++, d += size)
			(ntm_memcpy_flush)(d, l->src, size);
		break;
	case NCASES:
		break;
	}
	/* Neither copy is durable before this fence. */
	ntm_drain();
	return (double)(bench_now_ns() - t0);
}

static void measure(struct group *g, const struct calibrate_options *o,
		    unsigned char *base, const unsigned char *src)
{
	struct loop l = {
		.dst = base + g->align,
		.src = src,
		.size = g->size,
		.count = (o->total > g->size ? o->total : g->size) / g->size,
	};

	for (int r = 0; r < o->runs; r++)
		for (int c = 0; c < NCASES; c++) {
			/* No case inherits the dirty lines of the one before. */
			(ntm_persist)(base, l.count * l.size + g->align);
			g->ns[c][r] = time_case((enum ccase)c, &l);
		}
	for (int c = 0; c < NCASES; c++)
		bench_stats(g->ns[c], o->runs, &g->st[c]);
}

/*
 * The groups of offset @a are @g[a], @g[a + naligns], ... (ascending
 * sizes). The index of the first size from which nt beat cached at every
 * larger size; nsizes when cached won at the largest.
 */
static int crossover(const struct group *g, int a, int naligns, int nsizes)
{
	int i = nsizes;

	while (i > 0 && g[(i - 1) * naligns + a].st[C_NT].median <
				g[(i - 1) * naligns + a].st[C_CACHED].median)
		i--;
	return i;
}

/* The threshold a crossover asks for: its size, or past the largest. */
static uint64_t threshold_of(const struct calibrate_options *o, int i)
{
	return i < o->nsizes ? o->sizes[i] : o->sizes[o->nsizes - 1] + 1;
}

static const struct report_col columns[] = {
	{ "size", COL_STR, 0 }, { "bytes", COL_INT, 0 },
	{ "dst_off", COL_INT, 0 }, { "cached_ms", COL_REAL, 3 },
	{ "nt_ms", COL_REAL, 3 }, { "default_ms", COL_REAL, 3 },
	{ "nt_x_cached", COL_REAL, 2 }, { "faster", COL_STR, 0 },
};
#define NCOLS ((int)(sizeof(columns) / sizeof(columns[0])))

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return (x > y) - (x < y);
}

/* What the machine lacks for a comparison, or NULL. */
static const char *cannot_compare(void)
{
	if (ntm_flush_active() == NTM_FLUSH_NONE)
		return "nothing is written back here (write-back \"none\": "
		       "NTMEM_FLUSH=none or a cpu_cache persistence domain), "
		       "so there is no write-back to weigh against "
		       "non-temporal stores";
	if (ntm_variant_isa(ntm_variant_active()) == NTM_ISA_GENERIC)
		return "the active variant, generic, has no non-temporal "
		       "stores (NTMEM_ISA=generic?)";
	return NULL;
}

static int run(struct calibrate_options *o, struct group *g)
{
	struct bench_region dst = { 0 }, src = { 0 };
	uint64_t max_size = o->sizes[o->nsizes - 1], max_align = 0;
	size_t dst_len, src_len;
	int ngroups = o->nsizes * o->naligns;
	char buf[160];

	for (int i = 0; i < o->naligns; i++)
		if (o->aligns[i] > max_align)
			max_align = o->aligns[i];
	dst_len = (o->total > max_size ? o->total : max_size) + max_align + 4096;
	src_len = max_size + 4096;
	if (bench_map_copy_regions("bench copy", o->cpu, o->huge,
				   "destination and source regions for --total "
				   "and --sizes", &dst, dst_len, &src, src_len))
		return 1;
	for (int si = 0; si < o->nsizes; si++)
		for (int ai = 0; ai < o->naligns; ai++) {
			struct group *gr = &g[si * o->naligns + ai];

			gr->size = o->sizes[si];
			gr->align = o->aligns[ai];
			snprintf(buf, sizeof(buf), "size %zu, dst+%zu", gr->size,
				 gr->align);
			bench_progress(si * o->naligns + ai + 1, ngroups, buf);
			measure(gr, o, dst.base, src.base);
		}
	bench_progress_done();
	bench_region_free(&src);
	bench_region_free(&dst);
	return 0;
}

/* The lines to set and the crossover of each offset, as report meta. */
struct verdict {
	char crossover[CALIBRATE_MAX_ALIGNS][96];
	bool have_unaligned, have_aligned;
	uint64_t nt_threshold, movnt_threshold;
};

static void judge(const struct calibrate_options *o, const struct group *g,
		  struct verdict *v)
{
	char name[32];

	memset(v, 0, sizeof(*v));
	for (int a = 0; a < o->naligns; a++) {
		int i = crossover(g, a, o->naligns, o->nsizes);
		uint64_t t = threshold_of(o, i);
		bool unaligned = o->aligns[a] & 7;

		if (i == o->nsizes)
			snprintf(v->crossover[a], sizeof(v->crossover[a]),
				 "none: cached faster at %s, the largest size "
				 "measured", parse_size_name(o->sizes[i - 1], name,
							     sizeof(name)));
		else
			snprintf(v->crossover[a], sizeof(v->crossover[a]),
				 "nt faster from %llu bytes%s",
				 (unsigned long long)t,
				 i == 0 ? ", the smallest size measured" : "");
		if (unaligned) {
			v->have_unaligned = true;
			if (t > v->nt_threshold)
				v->nt_threshold = t;
		} else {
			v->have_aligned = true;
			if (t > v->movnt_threshold)
				v->movnt_threshold = t;
		}
	}
}

static void emit(const struct calibrate_options *o, const struct group *g,
		 const struct verdict *v)
{
	const struct ntm_variant *act = ntm_variant_active();
	struct ntm_env_info env;
	struct report rep;
	char key[CALIBRATE_MAX_ALIGNS][32], buf[160];

	/* Cannot fail: a struct of this release's size. */
	(void)ntm_introspect_env(&env, sizeof(env));
	report_init(&rep, bench_format(o->json, o->csv),
		    "ntmem bench copy --calibrate", columns, NCOLS);
	report_meta(&rep, "version", "%s", ntm_version());
	report_meta(&rep, "cpu", "%s (running on cpu %d)",
		    bench_cpu_model(buf, sizeof(buf)), bench_current_cpu());
	report_meta(&rep, "cases", "cached = memcpy + ntm_flush; nt = %s flush "
		    "copy; default = ntm_memcpy_flush, threshold %zu (%s); "
		    "write-back %s", ntm_variant_name(act), env.nt_threshold,
		    env.nt_threshold == env.nt_threshold_default ? "default"
							   : "NTMEM_NT_THRESHOLD",
		    ntm_flush_insn_name(ntm_flush_active()));
	report_meta(&rep, "workload", "%s per run, copies of one source into "
		    "consecutive slots, each run fenced; %d runs, median",
		    parse_size_name(o->total, buf, sizeof(buf)), o->runs);
	report_meta(&rep, "memory", "pre-faulted, non-zero data, written back "
		    "before each run, huge pages %s (THP %s)",
		    o->huge ? "requested" : "not requested",
		    bench_thp_mode(buf, sizeof(buf)));
	for (int a = 0; a < o->naligns; a++) {
		snprintf(key[a], sizeof(key[a]), "crossover_dst_%llu",
			 (unsigned long long)o->aligns[a]);
		report_meta(&rep, key[a], "%s", v->crossover[a]);
	}
	if (v->have_unaligned)
		report_meta(&rep, "NTMEM_NT_THRESHOLD", "%llu",
			    (unsigned long long)v->nt_threshold);
	if (v->have_aligned)
		report_meta(&rep, "PMEM_MOVNT_THRESHOLD", "%llu",
			    (unsigned long long)v->movnt_threshold);

	for (int i = 0; i < o->nsizes * o->naligns; i++) {
		const struct group *gr = &g[i];
		double ratio = gr->st[C_NT].median / gr->st[C_CACHED].median;
		char sname[32];
		union report_cell cell[NCOLS] = {
			{ .s = parse_size_name(gr->size, sname, sizeof(sname)) },
			{ .i = (long long)gr->size }, { .i = (long long)gr->align },
			{ .r = gr->st[C_CACHED].median / 1e6 },
			{ .r = gr->st[C_NT].median / 1e6 },
			{ .r = gr->st[C_DEFAULT].median / 1e6 },
			{ .r = ratio },
			{ .s = ratio < 1 ? "nt" : "cached" },
		};

		report_row(&rep, cell);
	}
	report_end(&rep);
	if (rep.format != REPORT_TABLE)
		return;
	for (int a = 0; a < o->naligns; a++)
		printf("dst+%llu (%s): %s\n", (unsigned long long)o->aligns[a],
		       o->aligns[a] & 7 ? "not 8-byte aligned" : "8-byte aligned",
		       v->crossover[a]);
	if (v->have_unaligned)
		printf("# the library: ntm_memcpy_flush() to a destination that "
		       "is not 8-byte aligned\nNTMEM_NT_THRESHOLD=%llu\n",
		       (unsigned long long)v->nt_threshold);
	else
		printf("# no destination offset that is not 8-byte aligned was "
		       "measured: nothing to say of NTMEM_NT_THRESHOLD\n");
	if (v->have_aligned)
		printf("# the libpmem drop-in: flag-less pmem_memcpy() & co. at "
		       "any alignment\nPMEM_MOVNT_THRESHOLD=%llu\n",
		       (unsigned long long)v->movnt_threshold);
	else
		printf("# no 8-byte aligned destination offset was measured: "
		       "nothing to say of PMEM_MOVNT_THRESHOLD\n");
}

int bench_copy_calibrate(struct calibrate_options *o)
{
	const char *why = cannot_compare();
	struct group *g;
	int ret;

	if (why) {
		fprintf(stderr, "ntmem bench copy --calibrate: %s\n", why);
		return 1;
	}
	if (!o->nsizes) {
		const uint64_t *s = o->quick ? quick_sizes : default_sizes;
		size_t n = o->quick ? sizeof(quick_sizes) / sizeof(*quick_sizes)
				    : sizeof(default_sizes) / sizeof(*default_sizes);

		memcpy(o->sizes, s, n * sizeof(*s));
		o->nsizes = (int)n;
	}
	if (!o->naligns)
		o->naligns = 2, o->aligns[0] = 0, o->aligns[1] = 1;
	/* The crossover is a walk down the sizes: measure them in order. */
	qsort(o->sizes, (size_t)o->nsizes, sizeof(*o->sizes), cmp_u64);
	nt_flush = ntm_variant_memcpy_flush(ntm_variant_active());

	g = calloc((size_t)o->nsizes * (size_t)o->naligns, sizeof(*g));
	if (!g) {
		fprintf(stderr, "ntmem bench copy: out of memory\n");
		return 1;
	}
	ret = run(o, g);
	if (!ret) {
		struct verdict v;

		judge(o, g, &v);
		emit(o, g, &v);
	}
	free(g);
	return ret;
}
