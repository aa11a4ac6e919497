// SPDX-License-Identifier: MIT
/*
 * bench_copy.c - `ntmem bench copy`: copy throughput of every variant,
 * side by side with glibc, PMDK and the machine's streaming-write limit.
 *
 * Workload: a run copies --total bytes as total/size copies of one source
 * buffer into consecutive slots of a destination region (copies under 64
 * bytes write total * size / 64: their flush peers pay one write-back per
 * copy and would take minutes otherwise), the way a memmap
 * is initialised from a template (small sizes) or a buffer is written out
 * (large sizes). The region is larger than the last-level cache by default,
 * pre-faulted and filled with non-zero data.
 *
 * Every (size, destination offset) group is measured as a set: the runs of
 * its cases are interleaved (run 1 of every case, then run 2, ...) so a
 * drift of the machine's speed hits all of them alike. Before each timed
 * run the region is written back (untimed), so no case inherits dirty
 * lines from the one before it, and a cached-store case cannot leave part
 * of its write-back cost untimed for the next one to pay. Each case reports
 * the median and the range over --runs runs, and two ratios, each the
 * median over the runs of run r's ratio (paired_ratio()):
 *   x_limit  time / time of the streaming limit for the same bytes: an NT
 *            fill of the same region with a non-zero pattern by the widest
 *            store this CPU has. 1.00 is as fast as this machine writes.
 *   x_peer   time / time of the best peer (glibc, PMDK) with the same
 *            semantics: nt rows (the inline path through the
 *            ntm_memcpy_nt() front door among them) against glibc memcpy
 *            and PMDK; flush rows against glibc memcpy + ntm_flush and
 *            PMDK. Below 1 is faster. The pmem2 row against pmem2-pmdk
 *            alone: the same function of the same library's interface.
 *
 * Rows: "inline" is the constant-size path as a default build compiles it
 * (16-byte stores), "inline-avx" as a build with -mavx or -march=native
 * does (32-byte stores); one row per variant for each semantics, called
 * directly through its table; "variable" and "variable-avx", the front
 * doors of ntmem/inline.h with a size the compiler cannot see, as those
 * two builds compile them: what a C program gets for a size that is not
 * constant (inline for struct sizes, else the exported function);
 * "dispatched", the exported ntm_memcpy_nt() and ntm_memcpy_flush()
 * called out of line, what an FFI, dlsym() or function-pointer caller
 * gets (in the process's persistence domain: with
 * NTMEM_PERSIST_DOMAIN=cpu_cache the flush row is the cpu_cache copy);
 * then the peers. The variant rows are its copies as they are; the
 * dispatched ones add ntm_memcpy_flush()'s copy policy (NTMEM_NT_THRESHOLD).
 * Last, libpmem2's memcpy function, pmem2_get_memcpy_fn(map)(NONTEMPORAL |
 * NODRAIN), of ntmem's drop-in ("pmem2") and of PMDK's ("pmem2-pmdk"),
 * each on a map of the same destination made with pmem2_map_from_existing()
 * at cache-line granularity (peer_pmem2.c): the same stores and write-back
 * for both, whatever memory the region is.
 *
 * After the table: the worst default path (the inline and variable rows,
 * what C code gets from the header) against its best peer, the same for
 * the out-of-line calls (dispatched), the worst and best pmem2 over
 * pmem2-pmdk, and the variable and dispatched ntm_memcpy_nt() over the
 * inline path of the same size, what a run-time size costs.
 * --calibrate is bench_calibrate.c.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <limits.h>
#include <sched.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <ntmem.h>
#include <ntmem/introspect.h>

#include "bench.h"
#include "bench_calibrate.h"
#include "bench_inline.h"
#include "commands.h"
#include "parse.h"
#include "peer_pmdk.h"
#include "peer_pmem2.h"

#define MAX_SIZES 64
#define MAX_ALIGNS 16
#define MAX_CASES 32

enum sem { SEM_LIMIT, SEM_NT, SEM_FLUSH, SEM_BOTH };
static const char *const sem_names[] = { "limit", "nt", "flush", "nt+flush" };

enum kind {
	K_LIMIT,	/* best variant's memset_flush over the whole region */
	K_INLINE,	/* constant-size inline path */
	K_VARIABLE,	/* a front door with a run-time size */
	K_VARIANT,	/* one variant's table entry, called directly */
	K_GLIBC,	/* memcpy() */
	K_GLIBC_FLUSH,	/* memcpy() + ntm_flush() of the copied range */
	K_PMDK,		/* pmem_memcpy(NONTEMPORAL | NODRAIN) */
	K_PMEM2,	/* a map's memcpy (NONTEMPORAL | NODRAIN) */
};

struct copy_case {
	enum sem sem;
	enum kind kind;
	const char *impl;
	void *(*fn)(void *dst, const void *src, size_t n);	/* K_VARIANT */
	inline_loop_fn inline_loop;			/* K_INLINE, K_VARIABLE */
	peer_pmem2_memcpy_fn pmem2_memcpy;			/* K_PMEM2 */
	bool ntmem_pmem2;	/* K_PMEM2: ntmem's drop-in, not PMDK's */
	double ns[BENCH_MAX_RUNS];	/* in run order */
	struct bench_stats st;
};

struct options {
	uint64_t sizes[MAX_SIZES];
	int nsizes;
	uint64_t aligns[MAX_ALIGNS];
	int naligns;
	uint64_t total;
	int runs;
	int cpu;
	bool json, csv, huge, pmdk, want_const, want_var;
	const char *variants;	/* comma list or NULL for all supported */
};

static const struct peer_pmdk *pmdk_peer;
/* libpmem2's, mapped over the destination: ntmem's drop-in and PMDK's */
static const struct peer_pmem2 *pmem2_ntmem, *pmem2_pmdk;
static const struct ntm_variant *limit_variant;
static ntm_memset_fn limit_fill;	/* limit_variant's, fetched once */

/* --- the timed loops: one per case kind, each ends with a drain --- */

/*
 * A loop of calls through @fn (a variant, the exported entry point, or
 * glibc memcpy), as an application's loop over slots is. Not inlined into
 * time_case(), where a spilled pointer was reloaded from the stack on
 * every call, work the inline loops do not do: at 64 bytes a copy has
 * ~11 cycles, so the loop around the call should add nothing else.
 */
static __attribute__((noinline)) void
call_loop(void *(*fn)(void *, const void *, size_t), const struct loop *l,
	  bool flush)
{
	unsigned char *d = l->dst;
	const unsigned char *src = l->src;
	size_t size = l->size, count = l->count;

	if (!flush) {
		for (size_t i = 0; i < count; i++, d += size)
			fn(d, src, size);
		return;
	}
	for (size_t i = 0; i < count; i++, d += size) {
		fn(d, src, size);
		(ntm_flush)(d, size);
	}
}

static void pmdk_loop(const struct loop *l)
{
	void *(*pmem_memcpy)(void *, const void *, size_t, unsigned) =
		pmdk_peer->memcpy;
	unsigned char *d = l->dst;
	const unsigned char *src = l->src;
	size_t size = l->size, count = l->count;

	for (size_t i = 0; i < count; i++, d += size)
		pmem_memcpy(d, src, size,
			    PEER_PMEM_F_MEM_NONTEMPORAL | PEER_PMEM_F_MEM_NODRAIN);
}

/* As pmdk_loop(), through the memcpy function of a libpmem2 map. */
static void pmem2_loop(peer_pmem2_memcpy_fn pmem2_memcpy, const struct loop *l)
{
	unsigned char *d = l->dst;
	const unsigned char *src = l->src;
	size_t size = l->size, count = l->count;

	for (size_t i = 0; i < count; i++, d += size)
		pmem2_memcpy(d, src, size, PEER_PMEM2_F_MEM_NONTEMPORAL |
					   PEER_PMEM2_F_MEM_NODRAIN);
}

/*
 * The untimed write-back before each run. ntm_persist() writes nothing
 * back in a cpu_cache domain (or under NTMEM_FLUSH=none); ntm_invalidate()
 * always does, so no case inherits another's dirty lines there either.
 */
static void write_back(void *p, size_t n)
{
	if (ntm_flush_active() == NTM_FLUSH_NONE)
		ntm_invalidate(p, n);
	(ntm_persist)(p, n);
}

static double time_case(const struct copy_case *c, const struct loop *l,
			unsigned char *region_base)
{
	/* volatile: glibc's memcpy is called, not expanded by the compiler */
	void *(*volatile libc_memcpy)(void *, const void *, size_t) = memcpy;
	uint64_t t0 = bench_now_ns();

	switch (c->kind) {
	case K_LIMIT:
		limit_fill(region_base, 0xa5, l->size * l->count);
		break;
	case K_INLINE:
	case K_VARIABLE:
		c->inline_loop(l);
		break;
	case K_VARIANT:
		call_loop(c->fn, l, false);
		break;
	case K_GLIBC:
		call_loop(libc_memcpy, l, false);
		break;
	case K_GLIBC_FLUSH:
		call_loop(libc_memcpy, l, true);
		break;
	case K_PMDK:
		pmdk_loop(l);
		break;
	case K_PMEM2:
		pmem2_loop(c->pmem2_memcpy, l);
		break;
	}
	/* Every case ends drained: NT stores are only done once ordered. */
	ntm_drain();
	return (double)(bench_now_ns() - t0);
}

/* The -mavx build of the inline loops runs only where AVX state is on. */
static bool avx_usable(void)
{
	uint32_t need = NTM_CPU_AVX | NTM_CPU_OS_YMM;

	return (ntm_cpu_features() & need) == need;
}

static bool variant_wanted(const struct options *o, const struct ntm_variant *v)
{
	char list[256];
	char *save = NULL;

	if (!ntm_variant_supported(v))
		return false;
	if (!o->variants)
		return true;
	snprintf(list, sizeof(list), "%s", o->variants);
	for (char *t = strtok_r(list, ",", &save); t; t = strtok_r(NULL, ",", &save))
		if (strcmp(t, ntm_variant_name(v)) == 0)
			return true;
	return false;
}

/* The cases of one (size, offset) group, limit first. */
static int build_cases(const struct options *o, size_t size,
		       struct copy_case *cases)
{
	size_t nv = ntm_variant_count();
	int n = 0;

#define ADD(...) (cases[n++] = (struct copy_case){ __VA_ARGS__ })
	ADD(.sem = SEM_LIMIT, .kind = K_LIMIT, .impl = "nt-fill");
	if (o->want_const && inline_loop_baseline(size))
		ADD(.sem = SEM_NT, .kind = K_INLINE, .impl = "inline",
		    .inline_loop = inline_loop_baseline(size));
	if (o->want_const && inline_loop_avx(size) && avx_usable())
		ADD(.sem = SEM_NT, .kind = K_INLINE, .impl = "inline-avx",
		    .inline_loop = inline_loop_avx(size));
	if (o->want_var) {
		/* Each case holds its function: the timed loop calls it directly. */
		for (size_t i = 0; i < nv; i++)
			if (variant_wanted(o, ntm_variant_at(i)))
				ADD(.sem = SEM_NT, .kind = K_VARIANT,
				    .impl = ntm_variant_name(ntm_variant_at(i)),
				    .fn = ntm_variant_memcpy_nt(ntm_variant_at(i)));
		for (size_t i = 0; i < nv; i++)
			if (variant_wanted(o, ntm_variant_at(i)))
				ADD(.sem = SEM_FLUSH, .kind = K_VARIANT,
				    .impl = ntm_variant_name(ntm_variant_at(i)),
				    .fn = ntm_variant_memcpy_flush(ntm_variant_at(i)));
	}
	if (o->want_var) {
		ADD(.sem = SEM_NT, .kind = K_VARIABLE, .impl = "variable",
		    .inline_loop = variable_loop_baseline(false));
		if (avx_usable())
			ADD(.sem = SEM_NT, .kind = K_VARIABLE,
			    .impl = "variable-avx",
			    .inline_loop = variable_loop_avx(false));
		ADD(.sem = SEM_FLUSH, .kind = K_VARIABLE, .impl = "variable",
		    .inline_loop = variable_loop_baseline(true));
		if (avx_usable())
			ADD(.sem = SEM_FLUSH, .kind = K_VARIABLE,
			    .impl = "variable-avx",
			    .inline_loop = variable_loop_avx(true));
		ADD(.sem = SEM_NT, .kind = K_VARIANT, .impl = "dispatched",
		    .fn = ntm_memcpy_nt);
		ADD(.sem = SEM_FLUSH, .kind = K_VARIANT, .impl = "dispatched",
		    .fn = ntm_memcpy_flush);
	}
	ADD(.sem = SEM_NT, .kind = K_GLIBC, .impl = "glibc");
	ADD(.sem = SEM_FLUSH, .kind = K_GLIBC_FLUSH, .impl = "glibc+flush");
	if (pmdk_peer)
		ADD(.sem = SEM_BOTH, .kind = K_PMDK, .impl = "pmdk");
	if (pmem2_ntmem)
		ADD(.sem = SEM_BOTH, .kind = K_PMEM2, .impl = "pmem2",
		    .pmem2_memcpy = pmem2_ntmem->memcpy, .ntmem_pmem2 = true);
	if (pmem2_pmdk)
		ADD(.sem = SEM_BOTH, .kind = K_PMEM2, .impl = "pmem2-pmdk",
		    .pmem2_memcpy = pmem2_pmdk->memcpy);
#undef ADD
	return n;
}

/* The peer of semantics @sem with the lowest median, NULL when none. */
static const struct copy_case *best_peer(const struct copy_case *cases, int n,
					 enum sem sem)
{
	const struct copy_case *best = NULL;

	for (int i = 0; i < n; i++) {
		bool peer = cases[i].kind == K_PMDK ||
			    (sem == SEM_NT && cases[i].kind == K_GLIBC) ||
			    (sem != SEM_NT && cases[i].kind == K_GLIBC_FLUSH);

		if (peer && (!best || cases[i].st.median < best->st.median))
			best = &cases[i];
	}
	return best;
}

/* Bytes one run writes for copies of @size; see the file comment. */
static size_t group_bytes(size_t total, size_t size)
{
	if (size < 64)
		total = total / 64 * size;
	return total > size ? total : size;
}

static const struct report_col columns[] = {
	{ "size", COL_STR, 0 }, { "bytes", COL_INT, 0 }, { "dst_off", COL_INT, 0 }, { "sem", COL_STR, 0 },
	{ "impl", COL_STR, 0 }, { "median_ms", COL_REAL, 3 },
	{ "min_ms", COL_REAL, 3 }, { "max_ms", COL_REAL, 3 },
	{ "GBps", COL_REAL, 2 }, { "x_limit", COL_REAL, 2 },
	{ "x_peer", COL_REAL, 2 },
};
#define NCOLS ((int)(sizeof(columns) / sizeof(columns[0])))

struct worst {
	double ratio;
	char where[96];
};

/*
 * The worst rows against their best peer: of the header's paths (inline,
 * variable: what C code compiled against ntmem.h gets without choosing)
 * and of the exported functions called out of line (dispatched).
 */
struct verdict {
	struct worst header, call;
};

static void note_worst(struct worst *w, double ratio, const char *sname,
		       size_t align, const struct copy_case *c)
{
	if (isnan(ratio) || ratio <= w->ratio)
		return;
	w->ratio = ratio;
	snprintf(w->where, sizeof(w->where), "size %s dst+%zu %s %s", sname,
		 align, sem_names[c->sem], c->impl);
}

/*
 * The streaming limit's speed over the groups of 64 bytes and up (each
 * writes --total bytes): bench_limit_note(), bench.h.
 */

/* pmem2 over pmem2-pmdk, worst and best over every group. */
struct pmem2_verdict {
	struct worst worst, best;
};

/* The pmem2-pmdk row, NULL when there is none. */
static const struct copy_case *pmem2_pmdk_case(const struct copy_case *cases,
					       int n)
{
	for (int i = 0; i < n; i++)
		if (cases[i].kind == K_PMEM2 && !cases[i].ntmem_pmem2)
			return &cases[i];
	return NULL;
}

/* What @c's x_peer is against: its best peer, or for pmem2, PMDK's. */
static const struct copy_case *peer_of(const struct copy_case *cases, int n,
				       const struct copy_case *c)
{
	switch (c->kind) {
	case K_PMEM2:
		return c->ntmem_pmem2 ? pmem2_pmdk_case(cases, n) : NULL;
	case K_LIMIT:
	case K_GLIBC:
	case K_GLIBC_FLUSH:
	case K_PMDK:
		return NULL;
	default:
		return best_peer(cases, n, c->sem);
	}
}

/*
 * @c's time over @peer's, the median of the per-run ratios: run r of
 * every case of a group is timed in the same round (run()), so a slower
 * phase of the machine hits both sides of run r's ratio, where it would
 * move one median and not the other. On a shared 2-vCPU VM the ratio of
 * medians of one row moved 0.1-0.3x between runs of the same command.
 * NaN without a peer.
 */
static double paired_ratio(const struct copy_case *c,
			   const struct copy_case *peer, int runs)
{
	double r[BENCH_MAX_RUNS];
	struct bench_stats st;

	if (!peer)
		return NAN;
	for (int i = 0; i < runs; i++)
		r[i] = c->ns[i] / peer->ns[i];
	bench_stats(r, runs, &st);
	return st.median;
}

static void emit_group(struct report *r, const struct options *o, size_t size,
		       size_t align, struct copy_case *cases, int n,
		       struct verdict *v, struct pmem2_verdict *pv)
{
	char sname[32];

	parse_size_name(size, sname, sizeof(sname));
	for (int i = 0; i < n; i++) {
		struct copy_case *c = &cases[i];
		double x_peer = paired_ratio(c, peer_of(cases, n, c), o->runs);
		union report_cell cell[NCOLS] = {
			{ .s = sname }, { .i = (long long)size },
			{ .i = (long long)align },
			{ .s = sem_names[c->sem] }, { .s = c->impl },
			{ .r = c->st.median / 1e6 }, { .r = c->st.min / 1e6 },
			{ .r = c->st.max / 1e6 },
			{ .r = (double)(size * (group_bytes(o->total, size) / size)) /
			       c->st.median },
			{ .r = paired_ratio(c, &cases[0], o->runs) }, { .r = x_peer },
		};

		report_row(r, cell);
		if (c->kind == K_INLINE || c->kind == K_VARIABLE)
			note_worst(&v->header, x_peer, sname, align, c);
		else if (c->kind == K_VARIANT && !strcmp(c->impl, "dispatched"))
			note_worst(&v->call, x_peer, sname, align, c);
		if (c->kind != K_PMEM2 || isnan(x_peer))
			continue;
		if (!pv->worst.where[0] || x_peer > pv->worst.ratio) {
			pv->worst.ratio = x_peer;
			snprintf(pv->worst.where, sizeof(pv->worst.where),
				 "size %s dst+%zu", sname, align);
		}
		if (!pv->best.where[0] || x_peer < pv->best.ratio) {
			pv->best.ratio = x_peer;
			snprintf(pv->best.where, sizeof(pv->best.where),
				 "size %s dst+%zu", sname, align);
		}
	}
}

/*
 * ntm_memcpy_nt() with a run-time size against the inline path of the
 * same size, per group: the header's variable rows over the inline row
 * of their build, and the out-of-line call over the baseline one.
 */
struct call_cost {
	char line[256][112];
	int n;
};

/* The nt row @impl of @kind, NULL when there is none. */
static const struct copy_case *nt_case(const struct copy_case *cases, int n,
				       enum kind kind, const char *impl)
{
	for (int i = 0; i < n; i++)
		if (cases[i].kind == kind && cases[i].sem == SEM_NT &&
		    !strcmp(cases[i].impl, impl))
			return &cases[i];
	return NULL;
}

static void note_call_cost(struct call_cost *cc, size_t size, size_t align,
			   const struct copy_case *cases, int n, int runs)
{
	const struct copy_case *inl = nt_case(cases, n, K_INLINE, "inline"),
			       *inl_avx = nt_case(cases, n, K_INLINE, "inline-avx"),
			       *var = nt_case(cases, n, K_VARIABLE, "variable"),
			       *var_avx = nt_case(cases, n, K_VARIABLE, "variable-avx"),
			       *disp = nt_case(cases, n, K_VARIANT, "dispatched");
	char sname[32], avx[48] = "";

	if (!disp || !inl || !var || cc->n == (int)(sizeof(cc->line) /
						    sizeof(cc->line[0])))
		return;
	if (var_avx && inl_avx)
		snprintf(avx, sizeof(avx), ", variable-avx %.2fx inline-avx",
			 paired_ratio(var_avx, inl_avx, runs));
	snprintf(cc->line[cc->n++], sizeof(cc->line[0]),
		 "size %s dst+%zu: variable %.2fx inline%s; out of line %.2fx "
		 "inline", parse_size_name(size, sname, sizeof(sname)), align,
		 paired_ratio(var, inl, runs), avx, paired_ratio(disp, inl, runs));
}

/*
 * The NTMEM_* variables this process's ntmem ignored, unset while ntmem's
 * drop-in (which embeds its own ntmem) reads the environment, and put
 * back: an ignored value is as good as none, and the user has been
 * warned about each once already.
 */
struct hidden_env {
	char *name[8], *value[8];
	int n;
};

static void hide_ignored_env(struct hidden_env *h)
{
	struct ntm_env_info info;

	h->n = 0;
	if (ntm_introspect_env(&info, sizeof(info)))
		return;
	for (const char *line = info.ignored; *line && h->n < 8;) {
		size_t len = strcspn(line, "=\n");
		char *name = strndup(line, len);
		const char *value = name ? getenv(name) : NULL;

		if (value && (h->value[h->n] = strdup(value))) {
			h->name[h->n++] = name;
			unsetenv(name);
		} else {
			free(name);
		}
		line += strcspn(line, "\n");
		line += *line == '\n';
	}
}

static void restore_ignored_env(struct hidden_env *h)
{
	for (int i = 0; i < h->n; i++) {
		setenv(h->name[i], h->value[i], 1);
		free(h->name[i]);
		free(h->value[i]);
	}
	h->n = 0;
}

/*
 * Both libpmem2s, each with a map of the destination region: PMDK's first
 * (by its soname: once ntmem's is loaded, that name would return it),
 * then ntmem's drop-in. One that cannot be had leaves its pointer NULL
 * and says why in @why[0] (ntmem's) or @why[1] (PMDK's).
 */
static void load_pmem2(const struct options *o, struct bench_region *dst,
		       size_t dst_len, const void *src, struct peer_pmem2 *ntmem,
		       struct peer_pmem2 *pmdk, char why[2][PATH_MAX + 160],
		       char *path, size_t plen)
{
	size_t wlen = sizeof(why[0]);
	struct hidden_env hidden;

	pmem2_ntmem = pmem2_pmdk = NULL;
	snprintf(why[1], wlen, "disabled (--no-pmdk)");
	if (o->pmdk && peer_pmem2_load(pmdk, why[1], wlen)) {
		if (peer_pmem2_map(pmdk, dst->base, dst_len, why[1], wlen))
			pmem2_pmdk = pmdk;
		else
			peer_pmem2_unload(pmdk);
	}
	hide_ignored_env(&hidden);
	if (peer_dropin_path("libpmem2", "libpmem2.so.1", path, plen, why[0],
			     wlen) &&
	    peer_pmem2_load_path(ntmem, path, why[0], wlen)) {
		if (peer_pmem2_map(ntmem, dst->base, dst_len, why[0], wlen))
			pmem2_ntmem = ntmem;
		else
			peer_pmem2_unload(ntmem);
	}
	/*
	 * One copy each, untimed: what a library sets up on its first copy
	 * (ntmem's drop-in embeds its own ntmem, which picks its variant
	 * then) is no part of a copy's cost.
	 */
	if (pmem2_pmdk)
		pmem2_pmdk->memcpy(dst->base, src, 64, PEER_PMEM2_F_MEM_NONTEMPORAL);
	if (pmem2_ntmem)
		pmem2_ntmem->memcpy(dst->base, src, 64, PEER_PMEM2_F_MEM_NONTEMPORAL);
	restore_ignored_env(&hidden);
}

static int run(const struct options *o)
{
	struct bench_region dst = { 0 }, src = { 0 };
	struct copy_case cases[MAX_CASES];
	struct peer_pmdk pmdk;
	struct peer_pmem2 p2_ntmem, p2_pmdk;
	struct report rep;
	struct verdict verdict = { { 0, "" }, { 0, "" } };
	struct bench_limit_range limit = { 0, 0 };
	struct pmem2_verdict pv = { { 0, "" }, { 0, "" } };
	struct call_cost cost = { .n = 0 };
	size_t max_size = 0, dst_len, src_len;
	char why[256], buf[160], p2_why[2][PATH_MAX + 160], path[PATH_MAX];
	int groups = o->nsizes * o->naligns, done = 0;

	for (int i = 0; i < o->nsizes; i++)
		if (o->sizes[i] > max_size)
			max_size = o->sizes[i];
	dst_len = (o->total > max_size ? o->total : max_size) + 2 * 4096;
	src_len = max_size + 4096;
	/* The limit: the widest variant this CPU runs, always aligned. */
	limit_variant = bench_widest_variant();
	limit_fill = ntm_variant_memset_flush(limit_variant);

	/* Both regions are filled before timing: all of it is touched. */
	if (bench_map_copy_regions("bench copy", o->cpu, o->huge,
				   "destination and source regions for --total "
				   "and --sizes", &dst, dst_len, &src, src_len))
		return 1;
	pmdk_peer = NULL;
	if (o->pmdk && peer_pmdk_load(&pmdk, why, sizeof(why)))
		pmdk_peer = &pmdk;
	load_pmem2(o, &dst, dst_len, src.base, &p2_ntmem, &p2_pmdk, p2_why, path,
		   sizeof(path));

	report_init(&rep, bench_format(o->json, o->csv),
		    "ntmem bench copy", columns, NCOLS);
	report_meta(&rep, "version", "%s", ntm_version());
	report_meta(&rep, "cpu", "%s (running on cpu %d)",
		    bench_cpu_model(buf, sizeof(buf)), bench_current_cpu());
	report_meta(&rep, "variant", "dispatched %s; limit = %s nt-fill, "
		    "write-back %s, persistence domain %s",
		    ntm_variant_name(ntm_variant_active()),
		    ntm_variant_name(limit_variant),
		    ntm_flush_insn_name(ntm_flush_active()),
		    ntm_persist_domain_name(ntm_persist_domain_active()));
	report_meta(&rep, "workload", "%s per run (x size/64 below 64 bytes), "
		    "copies of one source into consecutive slots; %d runs, "
		    "median [min, max]",
		    parse_size_name(o->total, buf, sizeof(buf)), o->runs);
	report_meta(&rep, "memory", "pre-faulted, non-zero data, written back "
		    "before each run, huge pages %s (THP %s)", o->huge ? "requested" : "not requested",
		    bench_thp_mode(buf, sizeof(buf)));
	report_meta(&rep, "pmdk", "%s", pmdk_peer ? pmdk.path : o->pmdk ? why : "disabled");
	report_meta(&rep, "pmem2", "%s", pmem2_ntmem ? p2_ntmem.path : p2_why[0]);
	report_meta(&rep, "pmem2-pmdk", "%s", pmem2_pmdk ? p2_pmdk.path : p2_why[1]);
	report_meta(&rep, "ratios", "x_limit = time / nt-fill time for the same "
		    "bytes; x_peer = time / best of glibc and pmdk with the same "
		    "semantics, for pmem2 / pmem2-pmdk (below 1 is faster); "
		    "each the median of the runs' ratios, run r of every "
		    "row timed in the same round");

	for (int si = 0; si < o->nsizes; si++) {
		size_t size = o->sizes[si];
		int n = build_cases(o, size, cases);

		for (int ai = 0; ai < o->naligns; ai++) {
			size_t align = o->aligns[ai];
			struct loop l = {
				.dst = (unsigned char *)dst.base + align,
				.src = src.base,
				.size = size,
				.count = group_bytes(o->total, size) / size,
			};

			snprintf(buf, sizeof(buf), "size %zu, dst+%zu", size, align);
			bench_progress(++done, groups, buf);
			for (int r = 0; r < o->runs; r++)
				for (int c = 0; c < n; c++) {
					write_back(dst.base, l.count * size + align);
					cases[c].ns[r] = time_case(&cases[c], &l, dst.base);
				}
			for (int c = 0; c < n; c++)
				bench_stats(cases[c].ns, o->runs, &cases[c].st);
			emit_group(&rep, o, size, align, cases, n, &verdict, &pv);
			/* Only groups that write --total bytes compare:
			 * one under 64 bytes writes less (group_bytes()),
			 * and an 8-byte group's fill of 32 MiB ran 5%
			 * faster than the 256 MiB ones. */
			if (group_bytes(o->total, size) == o->total)
				bench_limit_note(&limit, (double)(size * l.count) /
							   cases[0].st.median);
			note_call_cost(&cost, size, align, cases, n, o->runs);
		}
	}
	bench_progress_done();
	report_end(&rep);
	if (rep.format == REPORT_TABLE && verdict.header.where[0])
		printf("worst default path against the best peer: %.2fx (%s)\n",
		       verdict.header.ratio, verdict.header.where);
	if (rep.format == REPORT_TABLE && verdict.call.where[0])
		printf("worst out-of-line call (FFI, dlsym, function pointer) "
		       "against the best peer: %.2fx (%s)\n",
		       verdict.call.ratio, verdict.call.where);
	if (rep.format == REPORT_TABLE && limit.lo > 0)
		printf("streaming limit over the sizes and offsets: %.1f-%.1f "
		       "GB/s%s\n", limit.lo, limit.hi,
		       bench_limit_verdict(&limit));
	if (rep.format == REPORT_TABLE && pv.worst.where[0])
		printf("libpmem2 memcpy, ntmem over PMDK: worst %.2fx (%s), "
		       "best %.2fx (%s)\n", pv.worst.ratio, pv.worst.where,
		       pv.best.ratio, pv.best.where);
	if (rep.format == REPORT_TABLE && cost.n)
		printf("ntm_memcpy_nt() with a run-time size over the inline "
		       "path (medians):\n");
	for (int i = 0; rep.format == REPORT_TABLE && i < cost.n; i++)
		printf("  %s\n", cost.line[i]);

	if (pmdk_peer)
		peer_pmdk_unload(&pmdk);
	if (pmem2_ntmem)
		peer_pmem2_unload(&p2_ntmem);
	if (pmem2_pmdk)
		peer_pmem2_unload(&p2_pmdk);
	bench_region_free(&src);
	bench_region_free(&dst);
	return 0;
}

static void usage(FILE *out)
{
	fputs("usage: ntmem bench copy [options]\n"
	      "\n"
	      "Copy throughput of every copy variant against glibc memcpy, PMDK\n"
	      "pmem_memcpy (when libpmem.so.1 is installed) and the streaming-write\n"
	      "limit of this machine, and libpmem2's memcpy function of ntmem's\n"
	      "drop-in against PMDK's (when libpmem2.so.1 is installed), all\n"
	      "measured in the same run.\n"
	      "\n"
	      "  -s, --sizes LIST    copy sizes, e.g. 8,64,4k,1m (default: 8 B to 64 MiB)\n"
	      "  -a, --align LIST    destination offsets from a page boundary (default 0,1)\n"
	      "  -t, --total BYTES   bytes written per run (default 256m)\n"
	      "  -r, --runs N        runs per case, median reported (default 5, max 101)\n"
	      "  -v, --variant LIST  variants to run (default: every supported one)\n"
	      "      --const-only    only the constant-size inline rows\n"
	      "      --var-only      only the run-time-size rows (variable,\n"
	      "                      variants, dispatched)\n"
	      "  -c, --cpu N         pin to CPU N (default: the current CPU)\n"
	      "      --no-huge       do not ask for transparent huge pages\n"
	      "      --no-pmdk       do not load PMDK's libpmem and libpmem2\n"
	      "      --quick         8 sizes, offset 0 (unless --sizes, --align given)\n"
	      "      --calibrate     where non-temporal stores beat cached stores +\n"
	      "                      write-back, and the NTMEM_NT_THRESHOLD and\n"
	      "                      PMEM_MOVNT_THRESHOLD to set (default: 64 B to\n"
	      "                      4 MiB at offsets 0,1; with --quick 6 sizes)\n"
	      "      --json, --csv   machine-readable output\n"
	      "  -h, --help          this text\n"
	      "\n"
	      "Sizes are whole decimal numbers of bytes with an optional k, m, g or t\n"
	      "suffix (binary units: 4k = 4096); N is a decimal number. A run that\n"
	      "needs more memory than MemAvailable is refused before it starts.\n",
	      out);
}

static const uint64_t default_sizes[] = {
	8, 16, 32, 64, 80, 96, 128, 256, 1 << 10, 4 << 10, 16 << 10, 64 << 10,
	256 << 10, 1 << 20, 4 << 20, 16 << 20, 64 << 20,
};
static const uint64_t quick_sizes[] = { 8, 64, 80, 96, 256, 4 << 10, 64 << 10, 4 << 20 };

/*
 * --calibrate (bench_calibrate.c), with the options it shares; @conflict
 * names an option it does not take, or is NULL.
 */
static int start_calibrate(const struct options *o, bool sizes_given,
			   bool aligns_given, bool quick, const char *conflict)
{
	struct calibrate_options c = {
		.quick = quick, .total = o->total, .runs = o->runs,
		.cpu = o->cpu, .huge = o->huge, .json = o->json, .csv = o->csv,
	};

	_Static_assert(MAX_SIZES == CALIBRATE_MAX_SIZES &&
		       MAX_ALIGNS == CALIBRATE_MAX_ALIGNS, "the same lists");
	if (conflict)
		return parse_bad_arg("bench copy", conflict, "with --calibrate",
				     "--calibrate without it (the active "
				     "variant against glibc + ntm_flush)");
	if (bench_opt_format("bench copy", o->json, o->csv))
		return 2;
	if (sizes_given) {
		memcpy(c.sizes, o->sizes, sizeof(c.sizes));
		c.nsizes = o->nsizes;
	}
	if (aligns_given) {
		memcpy(c.aligns, o->aligns, sizeof(c.aligns));
		c.naligns = o->naligns;
	}
	return bench_copy_calibrate(&c);
}

int cmd_bench_copy(int argc, char **argv)
{
	struct options o = {
		.aligns = { 0, 1 }, .naligns = 2, .total = 256u << 20, .runs = 5,
		.cpu = -1, .huge = true, .pmdk = true, .want_const = true,
		.want_var = true,
	};
	bool const_only = false, var_only = false, no_huge = false,
	     no_pmdk = false, quick = false, sizes_given = false,
	     aligns_given = false, calibrate = false;
	const struct opt opts[] = {
		{ .name = "sizes", .letter = 's', .kind = OPT_U64_LIST,
		  .dest = o.sizes, .min = 1,
		  .max = PARSE_SIZE_MAX, .flags = PARSE_SUFFIX,
		  .max_count = MAX_SIZES, .count = &o.nsizes,
		  .given = &sizes_given },
		{ .name = "align", .letter = 'a', .kind = OPT_U64_LIST,
		  .dest = o.aligns, .min = 0, .max = 4095,
		  .flags = PARSE_SUFFIX, .max_count = MAX_ALIGNS,
		  .count = &o.naligns, .given = &aligns_given },
		{ .name = "total", .letter = 't', .kind = OPT_U64,
		  .dest = &o.total, .min = 1, .max = PARSE_SIZE_MAX,
		  .flags = PARSE_SUFFIX },
		BENCH_OPT_RUNS(&o.runs),
		{ .name = "variant", .letter = 'v', .kind = OPT_STR,
		  .dest = &o.variants },
		{ .name = "cpu", .letter = 'c', .kind = OPT_INT, .dest = &o.cpu,
		  .min = 0, .max = CPU_SETSIZE - 1 },
		{ .name = "const-only", .kind = OPT_FLAG, .dest = &const_only },
		{ .name = "var-only", .kind = OPT_FLAG, .dest = &var_only },
		{ .name = "no-huge", .kind = OPT_FLAG, .dest = &no_huge },
		BENCH_OPT_NO_PMDK(&no_pmdk),
		{ .name = "quick", .kind = OPT_FLAG, .dest = &quick },
		{ .name = "calibrate", .kind = OPT_FLAG, .dest = &calibrate },
		BENCH_OPTS_FORMAT(&o.json, &o.csv),
		{ 0 },
	};
	const struct opt_cmd cmd = {
		.name = "bench copy", .opts = opts, .usage = usage,
	};
	int status;

	memcpy(o.sizes, default_sizes, sizeof(default_sizes));
	o.nsizes = (int)(sizeof(default_sizes) / sizeof(*default_sizes));
	if (!parse_args(&cmd, argc, argv, &status))
		return status;
	o.want_var = !const_only;
	o.want_const = !var_only;
	o.huge = !no_huge;
	o.pmdk = !no_pmdk;
	if (calibrate)
		return start_calibrate(&o, sizes_given, aligns_given, quick,
				       o.variants ? "--variant" :
				       const_only ? "--const-only" :
				       var_only ? "--var-only" :
				       no_pmdk ? "--no-pmdk" : NULL);
	/* --quick is a short overview; explicit --sizes / --align still win */
	if (quick && !sizes_given) {
		memcpy(o.sizes, quick_sizes, sizeof(quick_sizes));
		o.nsizes = (int)(sizeof(quick_sizes) / sizeof(*quick_sizes));
	}
	if (quick && !aligns_given)
		o.naligns = 1, o.aligns[0] = 0;
	if (o.variants) {
		char list[256];
		char *save = NULL;

		snprintf(list, sizeof(list), "%s", o.variants);
		for (char *t = strtok_r(list, ",", &save); t; t = strtok_r(NULL, ",", &save)) {
			const struct ntm_variant *v = ntm_variant_find(t);

			if (!v || !ntm_variant_supported(v))
				return parse_bad_arg("bench copy", "--variant", t,
						     "a variant this CPU runs (see ntmem info)");
		}
	}
	if (bench_opt_format("bench copy", o.json, o.csv))
		return 2;
	return run(&o);
}
