// SPDX-License-Identifier: MIT
/*
 * dispatch.c - chooses the copy variant and the write-back instruction once
 * per process, from the CPU's features capped by NTMEM_ISA / NTMEM_FLUSH.
 *
 * The choice is a pure function of (features, ceiling), kept separate from
 * detection so the tests can feed it fake CPUs.
 */
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "copy_policy.h"
#include "cpu.h"
#include "dispatch.h"
#include "env.h"
#include "error.h"
#include "flush.h"
#include "ntmem.h"
#include "ntm_valgrind.h"	/* valgrind/: the table, unchecked */
#include "ntmem/embed.h"
#include "persist_domain.h"
#include "variant_impl.h"

static const struct ntm_variant variants[] = {
#define NTM_VARIANT(nm, level, need)                                       \
	{ .name = #nm, .isa = level, .needs = need,                        \
	  .memcpy_nt = ntm_##nm##_memcpy_nt,                               \
	  .memcpy_flush = ntm_##nm##_memcpy_flush,                         \
	  .memset_flush = ntm_##nm##_memset_flush },
#include "variants.def"
#undef NTM_VARIANT
};

#define VARIANT_COUNT (sizeof(variants) / sizeof(variants[0]))

const struct ntm_dispatch *ntm_dispatch_published;
static struct ntm_dispatch chosen;
static pthread_once_t chosen_once = PTHREAD_ONCE_INIT;
/*
 * Ceilings set by an embedding library before the choice (-1: none), and
 * whether choose() has read them: under one lock, so a ceiling set while
 * another thread chooses is either used or refused, never lost.
 */
static pthread_mutex_t caps_lock = PTHREAD_MUTEX_INITIALIZER;
static int caller_isa_cap = -1, caller_flush_cap = -1;
static bool caps_read;

int ntm_dispatch_set_caps(int isa_cap, int flush_cap)
{
	int ret = 0;

	if (isa_cap < -1 || isa_cap > NTM_ISA_AVX512)
		return ntm_error(-EINVAL, "isa_cap %d: -1 or an enum ntm_isa",
				 isa_cap);
	if (flush_cap < -1 || flush_cap > NTM_FLUSH_DC_CVADP)
		return ntm_error(-EINVAL, "flush_cap %d: -1 or an enum "
				 "ntm_flush_insn", flush_cap);
	pthread_mutex_lock(&caps_lock);
	if (caps_read) {
		ret = -EBUSY;
	} else {
		caller_isa_cap = isa_cap;
		caller_flush_cap = flush_cap;
	}
	pthread_mutex_unlock(&caps_lock);
	if (ret)
		return ntm_error(ret, "ceilings: the variant and write-back are "
				 "chosen already (set them before the first "
				 "copy or query)");
	return 0;
}

/* The lower of two ceilings, -1 meaning none. */
static int lower_cap(int a, int b)
{
	if (a < 0)
		return b;
	if (b < 0)
		return a;
	return a < b ? a : b;
}

const struct ntm_variant *ntm_variant_select(uint32_t features, int cap)
{
	/* variants.def lists the lowest ISA first; generic needs nothing. */
	for (size_t i = VARIANT_COUNT; i-- > 0;) {
		const struct ntm_variant *v = &variants[i];

		if ((v->needs & features) != v->needs)
			continue;
		if (cap >= 0 && (int)v->isa > cap)
			continue;
		return v;
	}
	return &variants[0];
}

/* x86-64's instructions are 1-3, aarch64's 4-6; none belongs to both. */
static bool same_family(enum ntm_flush_insn a, enum ntm_flush_insn b)
{
	return (a >= NTM_FLUSH_DC_CVAC) == (b >= NTM_FLUSH_DC_CVAC);
}

/*
 * One table for both architectures: a CPU has the feature bits of one of
 * them only. A ceiling applies to the instructions of its own family
 * ("none" to all): NTMEM_FLUSH=clflush, or the libpmem drop-in's
 * PMEM_NO_CLWB, must not leave an aarch64 CPU writing nothing back.
 *
 * DC CVADP cleans to the Point of Deep Persistence, a further point than
 * the one ntm_persist() promises (DC CVAP's) and one a CPU may reach only
 * more slowly: it is used only when the ceiling names it.
 */
enum ntm_flush_insn ntm_flush_select(uint32_t features, int cap)
{
	static const struct {
		enum ntm_flush_insn insn;
		uint32_t feature;
	} best_first[] = {
		{ NTM_FLUSH_CLWB, NTM_CPU_CLWB },
		{ NTM_FLUSH_CLFLUSHOPT, NTM_CPU_CLFLUSHOPT },
		{ NTM_FLUSH_CLFLUSH, NTM_CPU_CLFLUSH },
		{ NTM_FLUSH_DC_CVADP, NTM_CPU_DCPODP },
		{ NTM_FLUSH_DC_CVAP, NTM_CPU_DCPOP },
		{ NTM_FLUSH_DC_CVAC, NTM_CPU_DC_CVAC },
	};

	for (size_t i = 0; i < sizeof(best_first) / sizeof(*best_first); i++) {
		enum ntm_flush_insn insn = best_first[i].insn;

		if (insn == NTM_FLUSH_DC_CVADP && cap != NTM_FLUSH_DC_CVADP)
			continue;
		if (cap == NTM_FLUSH_NONE)
			break;
		if (cap > 0 && same_family(insn, (enum ntm_flush_insn)cap) &&
		    (int)insn > cap)
			continue;
		if (features & best_first[i].feature)
			return insn;
	}
	return NTM_FLUSH_NONE;
}

/* The domain memory outside namespaces is in: the override, else ADR's. */
static enum ntm_persist_domain active_domain(const struct ntm_dispatch *d)
{
	return d->domain_override == NTM_PERSIST_NONE ?
		       NTM_PERSIST_MEMORY_CONTROLLER : d->domain_override;
}

/* The table keeps every line ntm_env_read() wrote, cut nowhere. */
_Static_assert(sizeof(((struct ntm_dispatch *)0)->env_ignored) ==
		       sizeof(((struct ntm_env *)0)->bad),
	       "env_ignored holds struct ntm_env's bad");

static void choose(void)
{
	struct ntm_env env;
	const struct ntm_variant *best;
	int isa_cap, flush_cap;

	/*
	 * The table is written here, once, and published with a release
	 * store that every reader's acquire load pairs with; the entries'
	 * bindings are relaxed atomics. helgrind models neither, and took
	 * every later read for a race: these are not for it to check.
	 */
	NTM_VG_UNCHECKED(&chosen, sizeof(chosen));
	NTM_VG_UNCHECKED(&ntm_dispatch_published,
			 sizeof(ntm_dispatch_published));
	NTM_VG_UNCHECKED(&ntm_bound, sizeof(ntm_bound));

	ntm_env_read(&env);
	pthread_mutex_lock(&caps_lock);
	caps_read = true;
	isa_cap = lower_cap(env.isa_cap, caller_isa_cap);
	flush_cap = lower_cap(env.flush_cap, caller_flush_cap);
	pthread_mutex_unlock(&caps_lock);
	chosen.features = ntm_cpu_detect();
	chosen.variant = ntm_variant_select(chosen.features, isa_cap);
	chosen.memcpy_nt = chosen.variant->memcpy_nt;
	chosen.memcpy_flush = chosen.variant->memcpy_flush;
	chosen.memset_flush = chosen.variant->memset_flush;
	chosen.nt_threshold = env.nt_threshold;
	chosen.nt_short = ntm_nt_short_unaligned(chosen.variant);
	/* Before the table is published: an entry bound to it reads this. */
	__atomic_store_n(&ntm_bound.nt_short, chosen.nt_short, __ATOMIC_RELAXED);
	chosen.flush_insn = ntm_flush_select(chosen.features, flush_cap);
	chosen.domain_override = env.persist_domain < 0 ? NTM_PERSIST_NONE
							: env.persist_domain;
	/*
	 * NTMEM_PERSIST_DOMAIN=cpu_cache: the user says the CPU cache is
	 * inside the persistence domain, so nothing needs writing back. The
	 * variant's flush copy then writes none of its cached edges back and
	 * is the fastest copy a fence makes durable: against glibc's
	 * memcpy() its non-temporal stores won at every size from 64 B to
	 * 1 MiB when streaming (memcpy 2.1-3.0x slower: it reads each line
	 * first), and from 1 KiB up fenced per request (1.4-2.6x); memcpy
	 * won only short isolated copies. The entry points stay bound to it
	 * (copy.c), with no jump through this table.
	 */
	if (chosen.domain_override == NTM_PERSIST_CPU_CACHE)
		chosen.flush_insn = NTM_FLUSH_NONE;
	chosen.flush = ntm_flush_impl(chosen.flush_insn);
	/*
	 * NTMEM_FLUSH=clflush asks for the oldest instruction: invalidation
	 * uses it too, as if the CPU had no CLFLUSHOPT (so it can be tested).
	 */
	chosen.invalidate = ntm_invalidate_impl(
		chosen.flush_insn == NTM_FLUSH_CLFLUSH ?
		chosen.features & ~(uint32_t)NTM_CPU_CLFLUSHOPT : chosen.features);
	chosen.line = ntm_cpu_line_size();
	memcpy(chosen.env_ignored, env.bad, sizeof(chosen.env_ignored));

	/*
	 * The one exception to "never prints unless NTMEM_VERBOSE": a ceiling
	 * the user set but misspelt would otherwise be dropped without a
	 * trace. Once per process, as this runs once.
	 */
	for (const char *line = env.bad; *line;) {
		size_t len = strcspn(line, "\n");

		fprintf(stderr, "ntmem: %.*s\n", (int)len, line);
		line += len + (line[len] == '\n');
	}
	if (env.verbose) {
		best = ntm_variant_select(chosen.features, -1);
		fprintf(stderr,
			"ntmem %s: copy variant %s (best for this cpu: %s), "
			"write-back %s, cache line %zu bytes, unaligned "
			"destinations copied through the cache below %zu "
			"bytes (ntm_memcpy_nt) and %zu (ntm_memcpy_flush), "
			"persistence domain %s\n",
			ntm_version(), chosen.variant->name, best->name,
			ntm_flush_insn_name(chosen.flush_insn), chosen.line,
			chosen.nt_short, chosen.nt_threshold,
			ntm_persist_domain_name(active_domain(&chosen)));
	}
	/* ntm_verbose() answers as the choice read the environment. */
	ntm_env_verbose_chosen(env.verbose);
	__atomic_store_n(&ntm_dispatch_published, &chosen, __ATOMIC_RELEASE);
}

const struct ntm_dispatch *ntm_dispatch_init(void)
{
	pthread_once(&chosen_once, choose);
	return &chosen;
}

void ntm_flush_lines(const void *p, size_t n)
{
	const struct ntm_dispatch *d = ntm_dispatch();

	if (d->flush && n)
		d->flush(p, n, d->line);
}

/* Deprecated, kept for 0.1 binaries: variant_impl.h holds its layout. */
const struct ntm_variant *ntm_variant_list(size_t *count)
{
	if (count)
		*count = VARIANT_COUNT;
	return variants;
}

size_t ntm_variant_count(void)
{
	return VARIANT_COUNT;
}

const struct ntm_variant *ntm_variant_at(size_t i)
{
	return i < VARIANT_COUNT ? &variants[i] : NULL;
}

const char *ntm_variant_name(const struct ntm_variant *v)
{
	return v->name;
}

enum ntm_isa ntm_variant_isa(const struct ntm_variant *v)
{
	return v->isa;
}

uint32_t ntm_variant_needs(const struct ntm_variant *v)
{
	return v->needs;
}

ntm_memcpy_fn ntm_variant_memcpy_nt(const struct ntm_variant *v)
{
	return v->memcpy_nt;
}

ntm_memcpy_fn ntm_variant_memcpy_flush(const struct ntm_variant *v)
{
	return v->memcpy_flush;
}

ntm_memset_fn ntm_variant_memset_flush(const struct ntm_variant *v)
{
	return v->memset_flush;
}

const struct ntm_variant *ntm_variant_find(const char *name)
{
	for (size_t i = 0; name && i < VARIANT_COUNT; i++)
		if (strcmp(variants[i].name, name) == 0)
			return &variants[i];
	return NULL;
}

bool ntm_variant_supported(const struct ntm_variant *v)
{
	return v && (v->needs & ntm_dispatch()->features) == v->needs;
}

const struct ntm_variant *ntm_variant_active(void)
{
	return ntm_dispatch()->variant;
}

enum ntm_flush_insn ntm_flush_active(void)
{
	return ntm_dispatch()->flush_insn;
}

enum ntm_persist_domain ntm_persist_domain_active(void)
{
	return active_domain(ntm_dispatch());
}

/*
 * Beside the active domain, not in persist_domain.c, whose readers leave
 * the message to their callers.
 */
int ntm_persist_domain_system(void)
{
	struct ntm_env env;
	int d;

	/* Read now, not at the dispatcher's choice: PMDK reads sysfs per call. */
	ntm_env_read(&env);
	if (env.persist_domain >= 0)
		return env.persist_domain;
	d = ntm_persist_domain_weakest(ntm_sysfs_root);
	if (d < 0)
		return ntm_error(d, "%s/bus/nd/devices: a region's "
				 "persistence_domain cannot be read", ntm_sysfs_root);
	return d;
}

uint32_t ntm_cpu_features(void)
{
	return ntm_dispatch()->features;
}

size_t ntm_cache_line_size(void)
{
	return ntm_dispatch()->line;
}

const char *ntm_cpu_feature_name(uint32_t bit)
{
	static const char *const names[NTM_CPU_FEATURE_COUNT] = {
		"sse2", "avx", "avx2", "avx512f", "avx512bw", "os_ymm",
		"os_zmm", "clflush", "clflushopt", "clwb", "erms", "fsrm",
		"movdir64b", "asimd", "dc_cvac", "dcpop", "dcpodp",
	};

	for (unsigned i = 0; i < NTM_CPU_FEATURE_COUNT; i++)
		if (bit == 1u << i)
			return names[i];
	return NULL;
}
