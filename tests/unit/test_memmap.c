// SPDX-License-Identifier: MIT
/*
 * test_memmap.c - page descriptor arrays (ntmem/memmap.h) over anonymous
 * namespaces from ntm_ns_anon().
 *
 * The header promises that every init strategy writes byte-identical
 * memmaps, and says what each descriptor holds. Both are checked here:
 *
 *   init_*     per alignment (4 KiB, 2 MiB, 1 GiB) and placement (mem, dev),
 *              for every layout (64, 80, 96): the field strategy's memmap is
 *              compared, descriptor by descriptor, with one built here from
 *              the header's definitions alone (not the library's templates),
 *              and a few pfns (first, a head, a tail, both sides of a
 *              section boundary, last) are checked field by field. Then
 *              every strategy (field, memcpy, nt, fixed, and call with a
 *              counting memcpy wrapper) must reproduce it byte for byte,
 *              once switched in with ntm_memmap_set_init() and once given
 *              to ntm_memmap_create() in the config. Before each init the
 *              descriptors are filled with a garbage byte, so a strategy
 *              that skips a descriptor fails; with map=dev, bytes after the
 *              array are a canary, and with map=mem the region itself must
 *              stay untouched.
 *   lookup_*   geometry (first_pfn, nr_pages, bytes, order, where the
 *              descriptors are), page/pfn/addr round trips for every pfn,
 *              NULL / SIZE_MAX outside the memmap or off a descriptor
 *              boundary, and ntm_memmap_head() for every page of the first
 *              compound page after the dev reserve and of the last one.
 *   threads_*  1..8 threads (and 256, and more threads than there are
 *              shares) give the 1-thread memmap, over sizes that are not a
 *              multiple of any thread's share, so the last share is short;
 *              the call strategy is called exactly once per descriptor.
 *   refcount_* ntm_page_get/put on tails land on the head, from two threads
 *              racing 100000 times each: no update is lost. A table of
 *              pointers that are no descriptor of the memmap (NULL, before
 *              or after the array, inside a descriptor, another memmap's,
 *              the map=dev reserve, a tail with a garbage order): -EINVAL
 *              for get and put, the page named, no byte of either memmap
 *              changed.
 *   dev_reserve map=dev over an emulated namespace on a 16 MiB tmpfs
 *              mounted here (root only, else skipped): descriptors that do
 *              not fit are -ENOSPC at create, naming the path and the
 *              bytes, with the file system's free space unchanged; ones
 *              that fit are allocated at create, before init writes them.
 *   dev_reserve_two  map=dev memmaps over two emulated namespaces in a
 *              scratch directory, created by several threads at once:
 *              each file gets the blocks of its own descriptors, no more
 *              (each config names its namespace in cfg->ns).
 *   dev_no_ns  map=dev over a sparse emulated namespace without cfg->ns:
 *              the region is the caller's plain memory and create
 *              allocates none of the file's blocks; with cfg->ns it does.
 *   bad_*      every invalid argument is -EINVAL, leaves *mm alone, and
 *              ntm_errmsg() names the argument (cfg->ns for a namespace
 *              that does not hold the whole region).
 *
 * Anonymous namespaces are MAP_NORESERVE: only the pages descriptors are
 * written to cost memory, so the 1 GiB-aligned cases (2 and 3 GiB
 * namespaces) touch tens of MiB, not gigabytes.
 *
 * Arguments, if any, are fnmatch() patterns of the tests to run:
 * tests/unit/meson.build runs the 4 KiB and 2 MiB init and thread tests again
 * under NTMEM_ISA=sse2, where the library picks its baseline-ISA init loops
 * instead of the AVX ones; NTMEM_TEST_EXPECT_BASE_LOOPS=1 makes the test
 * check that it did.
 */
#define _GNU_SOURCE
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <errno.h>
#include <fnmatch.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/vfs.h>
#include <unistd.h>

#include <ntmem.h>
#include "../lib/testutil.h"

#define MiB ((size_t)1 << 20)
#define GiB ((size_t)1 << 30)
#define PG ((size_t)NTM_PAGE_SIZE)

static const unsigned layouts[] = { 64, 80, 96 };
#define NLAYOUTS (sizeof(layouts) / sizeof(layouts[0]))

static const enum ntm_memmap_strategy strategies[] = {
	NTM_INIT_FIELD, NTM_INIT_MEMCPY, NTM_INIT_NT, NTM_INIT_FIXED,
	NTM_INIT_CALL,
};
#define NSTRATS (sizeof(strategies) / sizeof(strategies[0]))

/* The owner pointer stored in every descriptor: any recognisable value. */
static const char owner_tag[] = "ntmem test owner";
#define OWNER ((const void *)owner_tag)

/* A *mm a failing create must leave alone. */
#define MM_SENTINEL ((struct ntm_memmap *)(uintptr_t)0x5e17e1)

/* --- helpers ------------------------------------------------------------ */

/* NTM_INIT_CALL's copy: memcpy, counting calls and wrong sizes. */
struct copy_count {
	size_t calls;
	size_t bad_size;	/* calls whose n was not the descriptor size */
	size_t size;		/* the descriptor size expected */
};

static void *counting_copy(void *dst, const void *src, size_t n, void *arg)
{
	struct copy_count *c = arg;

	__atomic_add_fetch(&c->calls, 1, __ATOMIC_RELAXED);
	if (n != c->size)
		__atomic_add_fetch(&c->bad_size, 1, __ATOMIC_RELAXED);
	return memcpy(dst, src, n);
}

static struct ntm_ns *anon_ns(size_t size, size_t align)
{
	struct ntm_ns *ns = NULL;
	int ret = ntm_ns_anon(&ns, size, align);

	if (ret)
		fail_msg("ntm_ns_anon(%zu, %zu): %d %s", size, align, ret,
			 ntm_errmsg());
	return ns;
}

static struct ntm_memmap *memmap_over(struct ntm_ns *ns,
				      const struct ntm_memmap_config *cfg)
{
	struct ntm_memmap_config named = *cfg;
	struct ntm_memmap *mm = NULL;
	int ret;

	/* As a caller that holds its namespace does (nothing to reserve in
	 * an anonymous one, but it must be accepted). */
	named.ns = ns;
	ret = ntm_memmap_create(&mm, ntm_ns_base(ns), ntm_ns_size(ns), OWNER,
				&named);
	if (ret)
		fail_msg("ntm_memmap_create(len %zu, layout %u, align %zu, "
			 "place %d): %d %s", ntm_ns_size(ns), cfg->desc_size,
			 cfg->align, (int)cfg->place, ret, ntm_errmsg());
	return mm;
}

static size_t order_of(size_t align)
{
	return align == GiB ? 18 : align == 2 * MiB ? 9 : 0;
}

/*
 * What the descriptor of @pfn must hold, from the header alone: every page
 * is reserved ZONE_DEVICE memory with its section number in the flags;
 * a compound head adds PG_HEAD and its order, a tail the tail marker and
 * TAIL_MAPPING; the rest is the owner, mapcount -1, refcount 0 and for 96
 * bytes last_cpupid -1. Every other byte is zero.
 */
static void expected_desc(struct ntm_page96 *e, unsigned layout,
			  unsigned order, size_t pfn)
{
	size_t nr = (size_t)1 << order;

	memset(e, 0, sizeof(*e));
	e->page.flags = NTM_PG_RESERVED | NTM_PG_ZONE_DEVICE |
			(uint64_t)(pfn / NTM_SECTION_PAGES) << NTM_PG_SECTION_SHIFT;
	if (order && pfn % nr == 0) {
		e->page.flags |= NTM_PG_HEAD |
				 (uint64_t)order << NTM_PG_ORDER_SHIFT;
	} else if (order) {
		e->page.compound_info = NTM_COMPOUND_TAIL | (uint64_t)order << 1;
		e->page.mapping = NTM_TAIL_MAPPING;
	}
	e->page.owner = OWNER;
	e->page.mapcount = -1;
	e->page.refcount = 0;
	if (layout == 96)
		e->last_cpupid = -1;
}

/* Every descriptor of @mm against expected_desc(). */
static void check_all_descs(const struct ntm_memmap *mm, size_t total,
			    const char *what)
{
	unsigned layout = (unsigned)ntm_memmap_desc_size(mm);
	unsigned order = ntm_memmap_order(mm);
	const unsigned char *d = ntm_memmap_descs(mm);
	struct ntm_page96 e;

	for (size_t pfn = ntm_memmap_first_pfn(mm); pfn < total;
	     pfn++, d += layout) {
		const unsigned char *want = (const unsigned char *)&e;
		size_t at;

		expected_desc(&e, layout, order, pfn);
		at = tu_first_diff(d, want, layout);
		if (at != layout)
			fail_msg("%s: pfn %zu (layout %u, order %u): byte %zu "
				 "is 0x%02x, expected 0x%02x", what, pfn, layout,
				 order, at, d[at], want[at]);
	}
}

/* The header's description of one descriptor, field by field. */
static void check_fields(const struct ntm_memmap *mm, size_t pfn)
{
	unsigned layout = (unsigned)ntm_memmap_desc_size(mm);
	unsigned order = ntm_memmap_order(mm);
	const struct ntm_page *p = ntm_memmap_page(mm, pfn);
	uint64_t want_flags = NTM_PG_RESERVED | NTM_PG_ZONE_DEVICE |
			      (uint64_t)(pfn / NTM_SECTION_PAGES)
				      << NTM_PG_SECTION_SHIFT;
	bool tail = order && pfn % ((size_t)1 << order);

	assert_non_null(p);
	if (order && !tail)
		want_flags |= NTM_PG_HEAD | (uint64_t)order << NTM_PG_ORDER_SHIFT;
	if (p->flags != want_flags)
		fail_msg("pfn %zu: flags 0x%llx, expected 0x%llx", pfn,
			 (unsigned long long)p->flags,
			 (unsigned long long)want_flags);
	assert_int_equal(p->flags >> NTM_PG_SECTION_SHIFT,
			 pfn / NTM_SECTION_PAGES);
	assert_int_equal(p->compound_info,
			 tail ? NTM_COMPOUND_TAIL | (uint64_t)order << 1 : 0);
	assert_int_equal(p->mapping, tail ? NTM_TAIL_MAPPING : 0);
	assert_ptr_equal(p->owner, OWNER);
	assert_null(p->zone_device_data);
	assert_int_equal(p->priv, 0);
	assert_int_equal(p->mapcount, -1);
	assert_int_equal(p->refcount, 0);
	assert_int_equal(p->memcg_data, 0);
	if (layout >= 80) {
		const struct ntm_page80 *p80 = (const void *)p;

		assert_int_equal(p80->kmsan_shadow, 0);
		assert_int_equal(p80->kmsan_origin, 0);
	}
	if (layout == 96) {
		const struct ntm_page96 *p96 = (const void *)p;

		assert_int_equal(p96->last_cpupid, -1);
		assert_int_equal(p96->pad0, 0);
		assert_int_equal(p96->pad1, 0);
	}
}

/* First, head, tail, both sides of a section boundary, last head, last. */
static void check_sample_fields(const struct ntm_memmap *mm, size_t total)
{
	size_t first = ntm_memmap_first_pfn(mm);
	size_t nr = (size_t)1 << ntm_memmap_order(mm);
	size_t sec = (first / NTM_SECTION_PAGES + 1) * NTM_SECTION_PAGES;
	size_t pfns[] = { first, first + 1, first + nr - 1, sec - 1, sec,
			  total - nr, total - nr + 1, total - 1 };

	for (size_t i = 0; i < sizeof(pfns) / sizeof(pfns[0]); i++)
		if (pfns[i] >= first && pfns[i] < total)
			check_fields(mm, pfns[i]);
}

/* Bytes after the descriptor array a map=dev init must not write. */
#define CANARY 256

struct init_guard {
	unsigned char canary[CANARY];
	unsigned char *after;		/* map=dev: right after the array */
	unsigned char *region_first;	/* map=mem: region's first/last page */
	unsigned char *region_last;
};

/* Fill the descriptors with @garbage and arm the guards. */
static void prepare_init(struct ntm_memmap *mm, struct ntm_ns *ns,
			 struct init_guard *g, unsigned char garbage)
{
	unsigned char *descs = ntm_memmap_descs(mm);
	unsigned char *base = ntm_ns_base(ns);

	memset(descs, garbage, ntm_memmap_bytes(mm));
	tu_fill_random(g->canary, CANARY, 0xca4a41ull + garbage);
	g->after = g->region_first = g->region_last = NULL;
	if (descs == base) {
		g->after = descs + ntm_memmap_bytes(mm);
		memcpy(g->after, g->canary, CANARY);
	} else {
		g->region_first = base;
		g->region_last = base + ntm_ns_size(ns) - CANARY;
		memcpy(g->region_first, g->canary, CANARY);
		memcpy(g->region_last, g->canary, CANARY);
	}
}

static void check_guards(const struct init_guard *g, const char *what)
{
	if (g->after && memcmp(g->after, g->canary, CANARY))
		fail_msg("%s: wrote past the descriptor array", what);
	if (g->region_first && (memcmp(g->region_first, g->canary, CANARY) ||
				memcmp(g->region_last, g->canary, CANARY)))
		fail_msg("%s: map=mem init wrote into the region", what);
}

static void compare_with(const struct ntm_memmap *mm, const unsigned char *ref,
			 const char *what)
{
	const unsigned char *d = ntm_memmap_descs(mm);
	size_t n = ntm_memmap_bytes(mm);
	size_t at = tu_first_diff(d, ref, n);

	if (at != n)
		fail_msg("%s: differs from the field strategy's memmap at pfn "
			 "%zu (byte %zu of its descriptor): 0x%02x vs 0x%02x",
			 what, ntm_memmap_first_pfn(mm) +
				 at / ntm_memmap_desc_size(mm),
			 at % ntm_memmap_desc_size(mm), d[at], ref[at]);
}

/* Reset ntm_errmsg() to a message naming none of the memmap arguments. */
static void reset_errmsg(void)
{
	struct ntm_ns *ns = NULL;

	assert_int_equal(ntm_ns_open(&ns, NULL, 0), -EINVAL);
	assert_non_null(strstr(ntm_errmsg(), "path"));
}

static void check_errmsg_names(const char *arg, const char *what)
{
	const char *msg = ntm_errmsg();

	if (!strstr(msg, arg))
		fail_msg("%s: ntm_errmsg() '%s' does not name '%s'", what, msg,
			 arg);
}

/* --- cases -------------------------------------------------------------- */

struct geo {
	const char *name;
	size_t align;
	size_t ns_size;		/* init tests */
	size_t lookup_size;	/* lookup tests */
	enum ntm_memmap_place place;
};

/*
 * 192 MiB crosses a section boundary (128 MiB); 4k_dev's 193 MiB does too,
 * and its memmap takes 965 pages with 80-byte descriptors, so the second
 * section's first descriptor is not on a line (the fixed loop's single
 * descriptors before its first whole group). For the lookups, 2 GiB
 * map=mem and 3 GiB map=dev (two 1 GiB pages after the 1 GiB reserve) have
 * a first and a last compound page that differ; the init tests take one
 * 1 GiB page with map=mem, since every memmap created there is faulted in
 * afresh.
 */
static const struct geo geos[] = {
	{ "4k_mem", PG, 192 * MiB, 192 * MiB, NTM_MEMMAP_MEM },
	{ "4k_dev", PG, 193 * MiB, 192 * MiB, NTM_MEMMAP_DEV },
	{ "2m_mem", 2 * MiB, 192 * MiB, 192 * MiB, NTM_MEMMAP_MEM },
	{ "2m_dev", 2 * MiB, 192 * MiB, 192 * MiB, NTM_MEMMAP_DEV },
	{ "1g_mem", GiB, GiB, 2 * GiB, NTM_MEMMAP_MEM },
	{ "1g_dev", GiB, 3 * GiB, 3 * GiB, NTM_MEMMAP_DEV },
};
#define NGEOS (sizeof(geos) / sizeof(geos[0]))

static void check_base_loops(void)
{
	const char *want = getenv("NTMEM_TEST_EXPECT_BASE_LOOPS");

	/* memmap.c picks the AVX loops from NTM_ISA_AVX2 up. */
	if (want && *want == '1' && ntm_variant_isa(ntm_variant_active()) >= NTM_ISA_AVX2)
		fail_msg("NTMEM_ISA did not lower the active variant below "
			 "AVX2 (%s): the baseline init loops are not tested",
			 ntm_variant_name(ntm_variant_active()));
}

/* Every strategy x layout on one geometry gives the field memmap. */
static void test_init(void **state)
{
	const struct geo *g = *state;
	struct ntm_ns *ns = anon_ns(g->ns_size, g->align);
	size_t total = g->ns_size / PG;
	struct init_guard guard;
	char what[128];

	check_base_loops();
	for (size_t l = 0; l < NLAYOUTS; l++) {
		struct ntm_memmap_config cfg = {
			.desc_size = layouts[l], .align = g->align,
			.place = g->place, .strategy = NTM_INIT_FIELD,
			/* .threads left 0: the default, one thread */
		};
		struct ntm_memmap *mm = memmap_over(ns, &cfg);
		struct copy_count cc = { .size = layouts[l] };
		size_t bytes = ntm_memmap_bytes(mm);
		unsigned char *ref;

		/* The reference, checked against the header alone. */
		prepare_init(mm, ns, &guard, 0xa5);
		assert_int_equal(ntm_memmap_init(mm), 0);
		snprintf(what, sizeof(what), "%s layout %u field", g->name,
			 layouts[l]);
		check_guards(&guard, what);
		check_all_descs(mm, total, what);
		check_sample_fields(mm, total);
		ref = malloc(bytes);
		assert_non_null(ref);
		memcpy(ref, ntm_memmap_descs(mm), bytes);

		/* Switched on the same memmap. */
		for (size_t s = 0; s < NSTRATS; s++) {
			snprintf(what, sizeof(what), "%s layout %u %s (set_init)",
				 g->name, layouts[l],
				 ntm_memmap_strategy_name(strategies[s]));
			cc.calls = cc.bad_size = 0;
			assert_int_equal(ntm_memmap_set_init(mm, strategies[s], 1,
							     counting_copy, &cc),
					 0);
			prepare_init(mm, ns, &guard, (unsigned char)(0x5a + s));
			assert_int_equal(ntm_memmap_init(mm), 0);
			check_guards(&guard, what);
			compare_with(mm, ref, what);
			/* The copy is the call strategy's, and only its. */
			assert_int_equal(cc.calls, strategies[s] == NTM_INIT_CALL
							   ? ntm_memmap_nr_pages(mm)
							   : 0);
			assert_int_equal(cc.bad_size, 0);
		}
		ntm_memmap_destroy(mm);

		/* Given at creation. */
		for (size_t s = 0; s < NSTRATS; s++) {
			cfg.strategy = strategies[s];
			cfg.copy = strategies[s] == NTM_INIT_CALL ? counting_copy
								  : NULL;
			cfg.copy_arg = &cc;
			cc.calls = cc.bad_size = 0;
			snprintf(what, sizeof(what), "%s layout %u %s (config)",
				 g->name, layouts[l],
				 ntm_memmap_strategy_name(strategies[s]));
			mm = memmap_over(ns, &cfg);
			assert_int_equal(ntm_memmap_bytes(mm), bytes);
			prepare_init(mm, ns, &guard, (unsigned char)(0xc3 + s));
			assert_int_equal(ntm_memmap_init(mm), 0);
			check_guards(&guard, what);
			compare_with(mm, ref, what);
			assert_int_equal(cc.calls, strategies[s] == NTM_INIT_CALL
							   ? ntm_memmap_nr_pages(mm)
							   : 0);
			assert_int_equal(cc.bad_size, 0);
			ntm_memmap_destroy(mm);
		}
		free(ref);
	}
	ntm_ns_close(ns);
}

/* Geometry, lookups for every pfn, heads of the first and last compound. */
static void test_lookup(void **state)
{
	const struct geo *g = *state;
	struct ntm_ns *ns = anon_ns(g->lookup_size, g->align);
	unsigned char *base = ntm_ns_base(ns);
	size_t total = g->lookup_size / PG;
	unsigned order = (unsigned)order_of(g->align);
	size_t nr = (size_t)1 << order;

	assert_int_equal((uintptr_t)base % g->align, 0);
	for (size_t l = 0; l < NLAYOUTS; l++) {
		unsigned layout = layouts[l];
		struct ntm_memmap_config cfg = {
			.desc_size = layout, .align = g->align,
			.place = g->place, .strategy = NTM_INIT_FIXED,
			.threads = 1,
		};
		struct ntm_memmap *mm = memmap_over(ns, &cfg);
		size_t first = ntm_memmap_first_pfn(mm);
		uintptr_t descs = (uintptr_t)ntm_memmap_descs(mm);
		uintptr_t end = descs + ntm_memmap_bytes(mm);
		struct ntm_page *p, *head;

		/* Geometry: ndctl --map=dev reserves room for every page. */
		if (g->place == NTM_MEMMAP_DEV) {
			size_t reserve = tu_round_up(total * layout, g->align);

			assert_int_equal(first, reserve / PG);
			assert_ptr_equal(ntm_memmap_descs(mm), base);
			assert_true(ntm_memmap_bytes(mm) <= reserve);
		} else {
			assert_int_equal(first, 0);
			/* Outside the region. */
			assert_true(end <= (uintptr_t)base ||
				    descs >= (uintptr_t)base + g->lookup_size);
		}
		assert_int_equal(first % nr, 0);
		assert_int_equal(ntm_memmap_nr_pages(mm), total - first);
		assert_int_equal(ntm_memmap_desc_size(mm), layout);
		assert_int_equal(ntm_memmap_bytes(mm), (total - first) * layout);
		assert_int_equal(ntm_memmap_order(mm), order);
		assert_int_equal(ntm_memmap_init(mm), 0);

		/* Every pfn round-trips. */
		for (size_t pfn = 0; pfn < total; pfn++) {
			p = ntm_memmap_page(mm, pfn);
			if (pfn < first) {
				if (p)
					fail_msg("pfn %zu in the dev reserve "
						 "(first %zu) has a page", pfn,
						 first);
				continue;
			}
			if ((uintptr_t)p != descs + (pfn - first) * layout)
				fail_msg("pfn %zu: page %p, expected %p", pfn,
					 (void *)p,
					 (void *)(descs + (pfn - first) * layout));
			if (ntm_memmap_pfn(mm, p) != pfn)
				fail_msg("pfn %zu: ntm_memmap_pfn() gives %zu",
					 pfn, ntm_memmap_pfn(mm, p));
			if (ntm_memmap_addr(mm, p) != base + pfn * PG)
				fail_msg("pfn %zu: ntm_memmap_addr() gives %p, "
					 "expected %p", pfn,
					 ntm_memmap_addr(mm, p),
					 (void *)(base + pfn * PG));
		}
		assert_null(ntm_memmap_page(mm, total));
		assert_null(ntm_memmap_page(mm, total + 1));
		assert_null(ntm_memmap_page(mm, SIZE_MAX));
		if (first)
			assert_null(ntm_memmap_page(mm, first - 1));

		/* Pointers that are no descriptor. */
		{
			uintptr_t bad[] = {
				descs + 1, descs + layout - 8, descs + layout + 16,
				end - layout + 8, end, end + layout,
				descs - layout, descs - 1, 0,
			};

			for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
				const struct ntm_page *q = (const void *)bad[i];

				if (ntm_memmap_pfn(mm, q) != SIZE_MAX)
					fail_msg("layout %u: pointer descs%+td "
						 "gives pfn %zu", layout,
						 (ptrdiff_t)(bad[i] - descs),
						 ntm_memmap_pfn(mm, q));
				assert_null(ntm_memmap_addr(mm, q));
				assert_null(ntm_memmap_head(mm, q));
			}
		}

		/* Heads of every page of the first and the last compound. */
		for (size_t c = 0; c < 2; c++) {
			size_t start = c == 0 ? first : total - nr;

			head = ntm_memmap_page(mm, start);
			assert_non_null(head);
			if (order)
				assert_true(head->flags & NTM_PG_HEAD);
			for (size_t pfn = start; pfn < start + nr; pfn++) {
				p = ntm_memmap_page(mm, pfn);
				if (ntm_memmap_head(mm, p) != head)
					fail_msg("%s layout %u: head of pfn %zu "
						 "is %p, expected pfn %zu (%p)",
						 g->name, layout, pfn,
						 (void *)ntm_memmap_head(mm, p),
						 start, (void *)head);
			}
			/* The neighbours belong to other compounds. */
			if (start > first)
				assert_ptr_equal(ntm_memmap_head(mm,
						 ntm_memmap_page(mm, start - 1)),
						 ntm_memmap_page(mm, start - nr));
			if (start + nr < total)
				assert_ptr_equal(ntm_memmap_head(mm,
						 ntm_memmap_page(mm, start + nr)),
						 ntm_memmap_page(mm, start + nr));
		}

		/* A get on the last tail lands on the last head. */
		p = ntm_memmap_page(mm, total - 1);
		head = ntm_memmap_page(mm, total - nr);
		assert_int_equal(ntm_page_get(mm, p), 1);
		assert_int_equal(head->refcount, 1);
		if (p != head)
			assert_int_equal(p->refcount, 0);
		assert_int_equal(ntm_page_put(mm, p), 0);
		assert_int_equal(head->refcount, 0);
		ntm_memmap_destroy(mm);
	}
	ntm_ns_close(ns);
}

/* --- threads ------------------------------------------------------------ */

/*
 * The library's pthread_create() calls (linked with
 * -Wl,--wrap=pthread_create, tests/unit/meson.build): while fail_thread_starts
 * is set, every other start fails with EAGAIN, as under a thread limit.
 */
static bool fail_thread_starts;
static unsigned thread_starts;

int __real_pthread_create(pthread_t *thread, const pthread_attr_t *attr,
			  void *(*fn)(void *), void *arg);
int __wrap_pthread_create(pthread_t *thread, const pthread_attr_t *attr,
			  void *(*fn)(void *), void *arg);
int __wrap_pthread_create(pthread_t *thread, const pthread_attr_t *attr,
			  void *(*fn)(void *), void *arg)
{
	if (fail_thread_starts && thread_starts++ % 2 == 0)
		return EAGAIN;
	return __real_pthread_create(thread, attr, fn, arg);
}

struct thread_case {
	const char *name;
	size_t align;
	size_t ns_size;
	enum ntm_memmap_place place;
	unsigned layout;
	unsigned max_threads;	/* 1..8 plus this, when above 8 */
};

/*
 * 77 MiB + 12 KiB is 19715 pages: no multiple of the 512-page share unit;
 * 74 MiB is 37 (prime) 2 MiB pages; 6 MiB (3 compound pages) has fewer
 * shares than threads; 512 MiB is 256 shares of 512 pages for 256 threads.
 */
static const struct thread_case thread_cases[] = {
	{ "threads_4k_mem", PG, 77 * MiB + 12 * 1024, NTM_MEMMAP_MEM, 80, 8 },
	{ "threads_4k_dev", PG, 77 * MiB + 12 * 1024, NTM_MEMMAP_DEV, 96, 8 },
	{ "threads_2m_mem", 2 * MiB, 74 * MiB, NTM_MEMMAP_MEM, 64, 8 },
	{ "threads_2m_dev", 2 * MiB, 74 * MiB, NTM_MEMMAP_DEV, 80, 8 },
	{ "threads_2m_few", 2 * MiB, 6 * MiB, NTM_MEMMAP_MEM, 96, 8 },
	{ "threads_4k_256", PG, 512 * MiB, NTM_MEMMAP_MEM, 64, 256 },
};
#define NTHREAD_CASES (sizeof(thread_cases) / sizeof(thread_cases[0]))

static void test_threads(void **state)
{
	const struct thread_case *tc = *state;
	struct ntm_ns *ns = anon_ns(tc->ns_size, tc->align);
	struct ntm_memmap_config cfg = {
		.desc_size = tc->layout, .align = tc->align, .place = tc->place,
		.strategy = NTM_INIT_FIXED, .threads = 1,
	};
	struct ntm_memmap *mm = memmap_over(ns, &cfg);
	struct copy_count cc = { .size = tc->layout };
	size_t bytes = ntm_memmap_bytes(mm);
	struct init_guard guard;
	unsigned char *ref;
	unsigned counts[10], ncounts = 0;
	char what[96];

	check_base_loops();
	for (unsigned t = 1; t <= 8; t++)
		counts[ncounts++] = t;
	if (tc->max_threads > 8)
		counts[ncounts++] = tc->max_threads;

	prepare_init(mm, ns, &guard, 0x3c);
	assert_int_equal(ntm_memmap_init(mm), 0);
	check_guards(&guard, tc->name);
	check_all_descs(mm, tc->ns_size / PG, tc->name);
	ref = malloc(bytes);
	assert_non_null(ref);
	memcpy(ref, ntm_memmap_descs(mm), bytes);

	for (unsigned i = 0; i < ncounts; i++) {
		for (int pass = 0; pass < 2; pass++) {
			enum ntm_memmap_strategy s =
				pass ? NTM_INIT_CALL : NTM_INIT_FIXED;

			snprintf(what, sizeof(what), "%s %s threads %u",
				 tc->name, ntm_memmap_strategy_name(s),
				 counts[i]);
			cc.calls = cc.bad_size = 0;
			assert_int_equal(ntm_memmap_set_init(mm, s, counts[i],
							     counting_copy, &cc),
					 0);
			prepare_init(mm, ns, &guard,
				     (unsigned char)(0x11 * (i + 1) + pass));
			assert_int_equal(ntm_memmap_init(mm), 0);
			check_guards(&guard, what);
			compare_with(mm, ref, what);
			/* Each descriptor copied once: no share overlaps. */
			assert_int_equal(cc.calls, pass ? ntm_memmap_nr_pages(mm)
							: 0);
			assert_int_equal(cc.bad_size, 0);
		}
	}
	/*
	 * Threads that cannot be started: their shares run on the caller,
	 * so init still succeeds and writes every descriptor once.
	 */
	snprintf(what, sizeof(what), "%s, half the threads not started",
		 tc->name);
	assert_int_equal(ntm_memmap_set_init(mm, NTM_INIT_CALL, 8,
					     counting_copy, &cc), 0);
	cc.calls = cc.bad_size = 0;
	prepare_init(mm, ns, &guard, 0x77);
	fail_thread_starts = true;
	thread_starts = 0;
	assert_int_equal(ntm_memmap_init(mm), 0);
	fail_thread_starts = false;
	assert_true(thread_starts > 0);
	check_guards(&guard, what);
	compare_with(mm, ref, what);
	assert_int_equal(cc.calls, ntm_memmap_nr_pages(mm));
	assert_int_equal(cc.bad_size, 0);
	free(ref);
	ntm_memmap_destroy(mm);
	ntm_ns_close(ns);
}

/* --- reference counts --------------------------------------------------- */

#define REF_ITERS 100000

struct ref_worker {
	const struct ntm_memmap *mm;
	struct ntm_page *page;		/* a tail */
	pthread_barrier_t *barrier;
	long errors;			/* results out of order or range */
	int first_bad, prev_bad;
};

static void ref_error(struct ref_worker *w, int got, int prev)
{
	if (!w->errors++) {
		w->first_bad = got;
		w->prev_bad = prev;
	}
}

static void *ref_worker_run(void *arg)
{
	struct ref_worker *w = arg;
	int prev, r;

	/* Gets only: each thread sees its own results strictly increase. */
	pthread_barrier_wait(w->barrier);
	prev = 0;
	for (int i = 0; i < REF_ITERS; i++) {
		r = ntm_page_get(w->mm, w->page);
		if (r <= prev)
			ref_error(w, r, prev);
		prev = r;
	}
	/* Puts only: strictly decreasing, never negative. */
	pthread_barrier_wait(w->barrier);
	pthread_barrier_wait(w->barrier);
	prev = 2 * REF_ITERS + 1;
	for (int i = 0; i < REF_ITERS; i++) {
		r = ntm_page_put(w->mm, w->page);
		if (r >= prev || r < 0)
			ref_error(w, r, prev);
		prev = r;
	}
	/* Mixed: a get leaves at least our own reference. */
	pthread_barrier_wait(w->barrier);
	for (int i = 0; i < REF_ITERS; i++) {
		r = ntm_page_get(w->mm, w->page);
		if (r < 1 || r > 2)
			ref_error(w, r, 0);
		r = ntm_page_put(w->mm, w->page);
		if (r < 0 || r > 1)
			ref_error(w, r, 1);
	}
	return NULL;
}

static void test_refcount_threads(void **state)
{
	struct ntm_ns *ns = anon_ns(6 * MiB, 2 * MiB);
	struct ntm_memmap_config cfg = {
		.desc_size = 80, .align = 2 * MiB, .place = NTM_MEMMAP_MEM,
		.strategy = NTM_INIT_FIXED, .threads = 1,
	};
	struct ntm_memmap *mm = memmap_over(ns, &cfg);
	struct ntm_page *head = ntm_memmap_page(mm, 512);
	struct ntm_page *t1 = ntm_memmap_page(mm, 513);
	struct ntm_page *t2 = ntm_memmap_page(mm, 1023);
	pthread_barrier_t barrier;
	struct ref_worker w[2] = {
		{ .mm = mm, .page = t1, .barrier = &barrier },
		{ .mm = mm, .page = t2, .barrier = &barrier },
	};
	pthread_t thread;

	(void)state;
	assert_int_equal(ntm_memmap_init(mm), 0);
	assert_true(head->flags & NTM_PG_HEAD);

	/* One thread: a tail's get moves the head, and counts up by one. */
	for (int i = 1; i <= 3; i++)
		assert_int_equal(ntm_page_get(mm, t1), i);
	assert_int_equal(head->refcount, 3);
	assert_int_equal(t1->refcount, 0);
	assert_int_equal(ntm_page_get(mm, head), 4);
	assert_int_equal(ntm_page_put(mm, t2), 3);
	for (int i = 2; i >= 0; i--)
		assert_int_equal(ntm_page_put(mm, t1), i);
	assert_int_equal(head->refcount, 0);

	/* Two threads on two tails of the same compound page. */
	assert_int_equal(pthread_barrier_init(&barrier, NULL, 2), 0);
	assert_int_equal(pthread_create(&thread, NULL, ref_worker_run, &w[1]), 0);
	pthread_barrier_wait(&barrier);
	{
		int prev = 0, r;

		for (int i = 0; i < REF_ITERS; i++) {
			r = ntm_page_get(mm, t1);
			if (r <= prev)
				ref_error(&w[0], r, prev);
			prev = r;
		}
	}
	pthread_barrier_wait(&barrier);
	/* Both threads are between the phases: nothing may be lost. */
	assert_int_equal(head->refcount, 2 * REF_ITERS);
	assert_int_equal(t1->refcount, 0);
	assert_int_equal(t2->refcount, 0);
	pthread_barrier_wait(&barrier);
	{
		int prev = 2 * REF_ITERS + 1, r;

		for (int i = 0; i < REF_ITERS; i++) {
			r = ntm_page_put(mm, t1);
			if (r >= prev || r < 0)
				ref_error(&w[0], r, prev);
			prev = r;
		}
	}
	pthread_barrier_wait(&barrier);
	for (int i = 0; i < REF_ITERS; i++) {
		int r = ntm_page_get(mm, t1);

		if (r < 1 || r > 2)
			ref_error(&w[0], r, 0);
		r = ntm_page_put(mm, t1);
		if (r < 0 || r > 1)
			ref_error(&w[0], r, 1);
	}
	pthread_join(thread, NULL);
	pthread_barrier_destroy(&barrier);
	for (int i = 0; i < 2; i++)
		if (w[i].errors)
			fail_msg("thread %d: %ld results out of order, first %d "
				 "after %d", i, w[i].errors, w[i].first_bad,
				 w[i].prev_bad);
	assert_int_equal(head->refcount, 0);
	assert_int_equal(t1->refcount, 0);
	assert_int_equal(t2->refcount, 0);
	/* The other compound pages were not touched. */
	assert_int_equal(ntm_memmap_page(mm, 0)->refcount, 0);
	assert_int_equal(ntm_memmap_page(mm, 1024)->refcount, 0);

	ntm_memmap_destroy(mm);
	ntm_ns_close(ns);
}

/* Single pages are their own head. */
static void test_refcount_single(void **state)
{
	struct ntm_ns *ns = anon_ns(4 * MiB, PG);
	struct ntm_memmap *mm = NULL;
	struct ntm_page *p, *next;

	(void)state;
	/* NULL config: 64 bytes, 4 KiB pages, map=mem, fixed, one thread. */
	assert_int_equal(ntm_memmap_create(&mm, ntm_ns_base(ns), 4 * MiB, OWNER,
					   NULL), 0);
	assert_int_equal(ntm_memmap_desc_size(mm), 64);
	assert_int_equal(ntm_memmap_order(mm), 0);
	assert_int_equal(ntm_memmap_first_pfn(mm), 0);
	assert_int_equal(ntm_memmap_nr_pages(mm), 1024);
	assert_int_equal(ntm_memmap_init(mm), 0);
	check_all_descs(mm, 1024, "defaults");
	p = ntm_memmap_page(mm, 7);
	next = ntm_memmap_page(mm, 8);
	assert_ptr_equal(ntm_memmap_head(mm, p), p);
	assert_int_equal(ntm_page_get(mm, p), 1);
	assert_int_equal(ntm_page_get(mm, p), 2);
	assert_int_equal(p->refcount, 2);
	assert_int_equal(next->refcount, 0);
	assert_int_equal(ntm_page_put(mm, p), 1);
	assert_int_equal(ntm_page_put(mm, p), 0);
	ntm_memmap_destroy(mm);
	ntm_memmap_destroy(NULL);
	ntm_ns_close(ns);
}

/*
 * Pointers that are no descriptor of the memmap they are passed with: get
 * and put are -EINVAL and change nothing (they used to dereference NULL).
 */
static void test_refcount_outside(void **state)
{
	const struct ntm_memmap_config mem = { .desc_size = 64,
					       .align = 2 * MiB, .threads = 1 };
	const struct ntm_memmap_config dev = { .desc_size = 64,
					       .align = 2 * MiB, .threads = 1,
					       .place = NTM_MEMMAP_DEV };
	struct ntm_ns *ns = anon_ns(8 * MiB, 2 * MiB), *ns2 = anon_ns(8 * MiB, 2 * MiB);
	struct ntm_memmap *mm = memmap_over(ns, &mem), *other = memmap_over(ns2, &dev);
	unsigned char *d = ntm_memmap_descs(mm), *od = ntm_memmap_descs(other);
	size_t n = ntm_memmap_bytes(mm), on = ntm_memmap_bytes(other);
	struct ntm_page *order200, *order40;
	unsigned char *snap, *osnap;

	(void)state;
	assert_int_equal(ntm_memmap_init(mm), 0);
	assert_int_equal(ntm_memmap_init(other), 0);
	/* Tails whose order is garbage: a shift past 63 bits, or a wrong head. */
	order200 = ntm_memmap_page(mm, 513);
	order200->compound_info = NTM_COMPOUND_TAIL | 200ull << 1;
	order40 = ntm_memmap_page(mm, 514);
	order40->compound_info = NTM_COMPOUND_TAIL | 40ull << 1;
	assert_null(ntm_memmap_head(mm, order200));
	assert_null(ntm_memmap_head(mm, order40));
	snap = malloc(n);
	osnap = malloc(on);
	assert_non_null(snap);
	assert_non_null(osnap);
	memcpy(snap, d, n);
	memcpy(osnap, od, on);
	{
		const struct {
			const char *what;
			const struct ntm_memmap *mm;
			uintptr_t page;
		} rows[] = {
			{ "NULL", mm, 0 },
			{ "one descriptor before the array", mm, (uintptr_t)d - 64 },
			{ "just past the last descriptor", mm, (uintptr_t)d + n },
			{ "inside a descriptor", mm, (uintptr_t)d + 64 + 8 },
			{ "another memmap's descriptor", mm, (uintptr_t)od + 64 },
			{ "a tail of order 200", mm, (uintptr_t)order200 },
			{ "a tail of order 40", mm, (uintptr_t)order40 },
			{ "map=dev: the reserve past the array", other,
			  (uintptr_t)od + on },
			{ "map=dev: a described page's memory", other,
			  (uintptr_t)ntm_ns_base(ns2) +
			  ntm_memmap_first_pfn(other) * PG },
		};

		for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
			struct ntm_page *p = (struct ntm_page *)rows[i].page;
			int r;

			reset_errmsg();
			r = ntm_page_get(rows[i].mm, p);
			if (r != -EINVAL)
				fail_msg("get on %s: %d, expected -EINVAL",
					 rows[i].what, r);
			check_errmsg_names("page", rows[i].what);
			r = ntm_page_put(rows[i].mm, p);
			if (r != -EINVAL)
				fail_msg("put on %s: %d, expected -EINVAL",
					 rows[i].what, r);
			if (memcmp(d, snap, n) || memcmp(od, osnap, on))
				fail_msg("get/put on %s changed a descriptor",
					 rows[i].what);
		}
	}
	/* A good tail still counts on its head. */
	assert_int_equal(ntm_page_get(mm, ntm_memmap_page(mm, 515)), 1);
	assert_int_equal(ntm_page_put(mm, ntm_memmap_page(mm, 515)), 0);
	free(snap);
	free(osnap);
	ntm_memmap_destroy(mm);
	ntm_memmap_destroy(other);
	ntm_ns_close(ns);
	ntm_ns_close(ns2);
}

/* --- map=dev on a full file system -------------------------------------- */

static char tmpfs_dir[64];

/* Unmount and remove the test's tmpfs, even after a failure. */
static int tmpfs_teardown(void **state)
{
	(void)state;
	if (tmpfs_dir[0]) {
		if (umount(tmpfs_dir))
			umount2(tmpfs_dir, MNT_DETACH);
		rmdir(tmpfs_dir);
		tmpfs_dir[0] = '\0';
	}
	return 0;
}

/* Bytes of descriptors a map=dev memmap of @len bytes writes. */
static size_t dev_desc_bytes(size_t len, size_t size)
{
	size_t total = len / PG, first = tu_round_up(total * size, PG) / PG;

	return tu_round_up((total - first) * size, PG);
}

/*
 * `ntmem bench memmap --dir D` on a 16 MiB tmpfs died with SIGBUS: map=dev
 * wrote descriptors into a sparse file the file system had no room for.
 * The blocks are now allocated at create, where it is an error.
 */
static void test_dev_reserve(void **state)
{
	static const struct {
		size_t len;
		int ret;
	} cases[] = {
		{ 2 * GiB, -ENOSPC },	/* 31.5 MiB of descriptors */
		{ 256 * MiB, 0 },	/* 3.9 MiB */
	};
	struct ntm_memmap_config cfg = { .desc_size = 64, .threads = 2,
					 .place = NTM_MEMMAP_DEV };
	char path[96];

	(void)state;
	snprintf(tmpfs_dir, sizeof(tmpfs_dir), "/tmp/ntmem-test-memmap-XXXXXX");
	if (!mkdtemp(tmpfs_dir)) {
		tmpfs_dir[0] = '\0';
		skip();
	}
	if (mount("tmpfs", tmpfs_dir, "tmpfs", MS_NOSUID | MS_NODEV,
		  "size=16m,mode=0700")) {
		print_message("dev_reserve: cannot mount a tmpfs: %s\n",
			      strerror(errno));
		rmdir(tmpfs_dir);
		tmpfs_dir[0] = '\0';
		skip();
	}
	snprintf(path, sizeof(path), "%s/ns", tmpfs_dir);
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		size_t len = cases[i].len, need = dev_desc_bytes(len, 64);
		struct ntm_memmap *mm = MM_SENTINEL;
		struct statfs before, after;
		struct ntm_ns *ns = NULL;
		char bytes[32];
		int ret;

		ret = ntm_ns_create(&ns, path, len, PG,
				    NTM_NS_EMULATE | NTM_NS_TEMPORARY);
		if (ret)
			fail_msg("ntm_ns_create(%s, %zu): %d %s", path, len, ret,
				 ntm_errmsg());
		assert_int_equal(statfs(tmpfs_dir, &before), 0);
		cfg.ns = ns;
		ret = ntm_memmap_create(&mm, ntm_ns_base(ns), len, ns, &cfg);
		assert_int_equal(statfs(tmpfs_dir, &after), 0);
		if (ret != cases[i].ret)
			fail_msg("map=dev over %zu bytes on a 16 MiB tmpfs: %d "
				 "(%s), expected %d", len, ret, ntm_errmsg(),
				 cases[i].ret);
		if (ret) {
			assert_ptr_equal(mm, MM_SENTINEL);
			check_errmsg_names(path, "no room for map=dev");
			snprintf(bytes, sizeof(bytes), "%zu", need);
			check_errmsg_names(bytes, "no room for map=dev");
			/* Nothing was allocated and kept. */
			assert_int_equal(after.f_bfree, before.f_bfree);
		} else {
			/* Allocated before a descriptor is written. */
			if ((before.f_bfree - after.f_bfree) * after.f_bsize < need)
				fail_msg("map=dev over %zu bytes: create "
					 "allocated %llu bytes, the descriptors "
					 "need %zu", len,
					 (unsigned long long)(before.f_bfree -
							      after.f_bfree) *
						 after.f_bsize, need);
			assert_int_equal(ntm_memmap_init(mm), 0);
			assert_true(ntm_memmap_nr_pages(mm) * 64 <= need);
			ntm_memmap_destroy(mm);
		}
		ntm_ns_close(ns);
	}
}

/* One thread's memmaps: @rounds map=dev creates over @ns, each destroyed. */
struct dev_share {
	struct ntm_ns *ns;
	unsigned rounds;
	int ret;
	pthread_t thread;
};

static void *dev_share_run(void *arg)
{
	struct dev_share *s = arg;
	const struct ntm_memmap_config cfg = { .desc_size = 64, .threads = 1,
					       .place = NTM_MEMMAP_DEV,
					       .ns = s->ns };

	for (unsigned i = 0; i < s->rounds && !s->ret; i++) {
		struct ntm_memmap *mm = NULL;

		s->ret = ntm_memmap_create(&mm, ntm_ns_base(s->ns),
					   ntm_ns_size(s->ns), s->ns, &cfg);
		ntm_memmap_destroy(mm);
	}
	return NULL;
}

/*
 * Two sparse namespaces of different sizes, three threads creating
 * map=dev memmaps over each at once: each file ends up with the blocks of
 * its own descriptors (1 MiB and 2 MiB), none of the other's.
 */
static void test_dev_reserve_two(void **state)
{
	enum { THREADS = 3 };
	static const size_t len[2] = { 64 * MiB, 128 * MiB };
	struct dev_share share[2 * THREADS];
	struct ntm_ns *ns[2];
	char dir[96], path[2][128];
	size_t got[2];
	struct stat st;

	(void)state;
	assert_int_equal(tu_scratch_dir(dir, sizeof(dir), "ntmem-test-memmap"), 0);
	if (tu_dir_is_dax(dir)) {
		rmdir(dir);
		print_message("skipped: %s is DAX, and this test needs sparse "
			      "emulated namespaces\n", dir);
		skip();
	}
	for (int i = 0; i < 2; i++) {
		snprintf(path[i], sizeof(path[i]), "%s/ns%d", dir, i);
		assert_int_equal(ntm_ns_create(&ns[i], path[i], len[i], PG,
					       NTM_NS_EMULATE), 0);
	}
	for (unsigned t = 0; t < 2 * THREADS; t++) {
		share[t] = (struct dev_share){ .ns = ns[t % 2], .rounds = 4 };
		assert_int_equal(pthread_create(&share[t].thread, NULL,
						dev_share_run, &share[t]), 0);
	}
	for (unsigned t = 0; t < 2 * THREADS; t++) {
		assert_int_equal(pthread_join(share[t].thread, NULL), 0);
		if (share[t].ret)
			fail_msg("thread %u: %d %s", t, share[t].ret, ntm_errmsg());
	}
	for (int i = 0; i < 2; i++) {
		assert_int_equal(stat(path[i], &st), 0);
		got[i] = (size_t)st.st_blocks * 512;
	}
	if (got[0] == 0 && got[1] == 0) {
		print_message("%s: nothing allocated: no fallocate() here\n", dir);
	} else {
		for (int i = 0; i < 2; i++) {
			size_t need = dev_desc_bytes(len[i], 64);

			/* Extent metadata may add a few blocks, never a MiB. */
			if (got[i] < need || got[i] >= need + MiB)
				fail_msg("%s: %zu bytes allocated, its map=dev "
					 "descriptors need %zu", path[i], got[i],
					 need);
		}
	}
	for (int i = 0; i < 2; i++)
		ntm_ns_close(ns[i]);
	assert_int_equal(tu_remove_tree(dir), 0);
}

/* Bytes of @path the file system has allocated. */
static size_t allocated(const char *path)
{
	struct stat st;

	assert_int_equal(stat(path, &st), 0);
	return (size_t)st.st_blocks * 512;
}

/*
 * Without cfg->ns the region is memory the caller owns: map=dev over a
 * sparse namespace reserves none of its blocks (there used to be a search
 * of the open namespaces by address that found it anyway). With cfg->ns
 * the descriptors' blocks are allocated.
 */
static void test_dev_no_ns(void **state)
{
	struct ntm_memmap_config cfg = { .desc_size = 64, .threads = 1,
					 .place = NTM_MEMMAP_DEV };
	size_t len = 64 * MiB, before, need = dev_desc_bytes(len, 64);
	struct ntm_memmap *mm = NULL;
	struct ntm_ns *ns = NULL;
	char dir[96], path[128];

	(void)state;
	assert_int_equal(tu_scratch_dir(dir, sizeof(dir), "ntmem-test-memmap"), 0);
	if (tu_dir_is_dax(dir)) {
		rmdir(dir);
		print_message("skipped: %s is DAX, and this test needs a sparse "
			      "emulated namespace\n", dir);
		skip();
	}
	snprintf(path, sizeof(path), "%s/ns", dir);
	assert_int_equal(ntm_ns_create(&ns, path, len, PG, NTM_NS_EMULATE), 0);
	before = allocated(path);
	assert_int_equal(ntm_memmap_create(&mm, ntm_ns_base(ns), len, ns, &cfg),
			 0);
	if (allocated(path) != before)
		fail_msg("map=dev without cfg->ns allocated %zu bytes of %s "
			 "(%zu before)", allocated(path), path, before);
	ntm_memmap_destroy(mm);

	cfg.ns = ns;
	assert_int_equal(ntm_memmap_create(&mm, ntm_ns_base(ns), len, ns, &cfg),
			 0);
	if (allocated(path) == before)
		print_message("%s: nothing allocated: no fallocate() here\n",
			      dir);
	else if (allocated(path) < before + need)
		fail_msg("map=dev with cfg->ns allocated %zu bytes of %s, its "
			 "descriptors need %zu", allocated(path) - before, path,
			 need);
	assert_int_equal(ntm_memmap_init(mm), 0);
	ntm_memmap_destroy(mm);
	ntm_ns_close(ns);
	assert_int_equal(tu_remove_tree(dir), 0);
}

/* --- bad input ---------------------------------------------------------- */

struct bad_create {
	const char *what;
	const char *names;	/* ntm_errmsg() must contain this */
	ptrdiff_t base_off;	/* from the namespace base */
	bool null_base;
	size_t len;
	struct ntm_memmap_config cfg;
};

static void test_bad_create(void **state)
{
	struct ntm_ns *ns = anon_ns(64 * MiB, 2 * MiB);
	struct ntm_ns *other = anon_ns(4 * MiB, PG);
	const struct bad_create cases[] = {
		{ "len not a page multiple", "len", 0, false, 64 * MiB - 100,
		  { .threads = 1 } },
		{ "len 0", "len", 0, false, 0, { .threads = 1 } },
		{ "len not a 2 MiB multiple", "len", 0, false, 62 * MiB + PG,
		  { .align = 2 * MiB, .threads = 1 } },
		{ "map=dev, one page", "len", 0, false, PG,
		  { .place = NTM_MEMMAP_DEV, .threads = 1 } },
		{ "map=dev, one 2 MiB page", "len", 0, false, 2 * MiB,
		  { .align = 2 * MiB, .place = NTM_MEMMAP_DEV, .threads = 1 } },
		{ "layout 72", "layout", 0, false, 64 * MiB,
		  { .desc_size = 72, .threads = 1 } },
		{ "layout 128", "layout", 0, false, 64 * MiB,
		  { .desc_size = 128, .threads = 1 } },
		{ "align 8192", "align", 0, false, 64 * MiB,
		  { .align = 8192, .threads = 1 } },
		{ "align 4 MiB", "align", 0, false, 64 * MiB,
		  { .align = 4 * MiB, .threads = 1 } },
		{ "place 2", "place", 0, false, 64 * MiB,
		  { .place = (enum ntm_memmap_place)2, .threads = 1 } },
		{ "threads 257", "threads", 0, false, 64 * MiB,
		  { .threads = 257 } },
		{ "call without copy", "copy", 0, false, 64 * MiB,
		  { .strategy = NTM_INIT_CALL, .threads = 1 } },
		{ "strategy 99", "strategy", 0, false, 64 * MiB,
		  { .strategy = (enum ntm_memmap_strategy)99, .threads = 1 } },
		{ "NULL base", "base", 0, true, 64 * MiB, { .threads = 1 } },
		{ "base + 1", "base", 1, false, 62 * MiB, { .threads = 1 } },
		{ "base + 2 KiB", "base", 2048, false, 62 * MiB,
		  { .threads = 1 } },
		/* The growth rule (config_check.h): a field of a later release. */
		{ "flags bit 0", "cfg->flags has unknown bits 0x1", 0, false,
		  64 * MiB, { .threads = 1, .flags = 1 } },
		{ "flags bit 31", "cfg->flags has unknown bits 0x80000000", 0,
		  false, 64 * MiB, { .threads = 1, .flags = 1u << 31 } },
		{ "reserved[0]", "cfg->reserved[0] must be 0", 0, false, 64 * MiB,
		  { .threads = 1, .reserved[0] = 1 } },
		{ "reserved[1]", "cfg->reserved[1] must be 0", 0, false, 64 * MiB,
		  { .threads = 1, .reserved[1] = 1ull << 63 } },
		{ "reserved[2], map=dev", "cfg->reserved[2] must be 0", 0, false,
		  64 * MiB, { .place = NTM_MEMMAP_DEV, .threads = 1,
			      .reserved[2] = 2 } },
		/* cfg->ns must hold [base, base + len), all of it. */
		{ "ns another namespace, map=dev", "cfg->ns", 0, false, 64 * MiB,
		  { .place = NTM_MEMMAP_DEV, .threads = 1, .ns = other } },
		{ "ns another namespace, map=mem", "cfg->ns", 0, false, 4 * MiB,
		  { .threads = 1, .ns = other } },
		{ "ns ending inside the region", "cfg->ns", 62 * MiB, false,
		  4 * MiB, { .place = NTM_MEMMAP_DEV, .threads = 1, .ns = ns } },
	};
	unsigned char *base = ntm_ns_base(ns);

	(void)state;
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		const struct bad_create *c = &cases[i];
		struct ntm_memmap *mm = MM_SENTINEL;
		void *b = c->null_base ? NULL : base + c->base_off;
		int ret;

		reset_errmsg();
		ret = ntm_memmap_create(&mm, b, c->len, OWNER, &c->cfg);
		if (ret != -EINVAL)
			fail_msg("%s: returned %d, expected -EINVAL", c->what, ret);
		if (mm != MM_SENTINEL)
			fail_msg("%s: *mm written on failure", c->what);
		check_errmsg_names(c->names, c->what);
	}
	/* No place to put the result. */
	assert_int_equal(ntm_memmap_create(NULL, base, 64 * MiB, OWNER, NULL),
			 -EINVAL);

	/*
	 * The smallest regions map=dev accepts: the reserve is rounded up to
	 * the alignment and must leave at least one page. A 64 KiB region with
	 * 96-byte descriptors needs one page of them.
	 */
	{
		struct ntm_memmap_config cfg = {
			.desc_size = 96, .place = NTM_MEMMAP_DEV, .threads = 1,
		};
		struct ntm_memmap *mm = NULL;

		assert_int_equal(ntm_memmap_create(&mm, base, 2 * PG, OWNER,
						   &cfg), 0);
		assert_int_equal(ntm_memmap_first_pfn(mm), 1);
		assert_int_equal(ntm_memmap_nr_pages(mm), 1);
		assert_int_equal(ntm_memmap_init(mm), 0);
		check_all_descs(mm, 2, "two-page map=dev");
		ntm_memmap_destroy(mm);

		assert_int_equal(ntm_memmap_create(&mm, base, 64 * 1024, OWNER,
						   &cfg), 0);
		assert_int_equal(ntm_memmap_first_pfn(mm), 1);
		assert_int_equal(ntm_memmap_nr_pages(mm), 15);
		ntm_memmap_destroy(mm);

		cfg.align = 2 * MiB;
		assert_int_equal(ntm_memmap_create(&mm, base, 4 * MiB, OWNER,
						   &cfg), 0);
		assert_int_equal(ntm_memmap_first_pfn(mm), 512);
		assert_int_equal(ntm_memmap_nr_pages(mm), 512);
		assert_int_equal(ntm_memmap_init(mm), 0);
		check_all_descs(mm, 1024, "4 MiB map=dev align=2m");
		ntm_memmap_destroy(mm);
	}
	ntm_ns_close(other);
	ntm_ns_close(ns);
}

static void test_bad_set_init(void **state)
{
	struct ntm_ns *ns = anon_ns(4 * MiB, 2 * MiB);
	struct ntm_memmap_config cfg = {
		.desc_size = 96, .align = 2 * MiB, .threads = 1,
	};
	struct ntm_memmap *mm = memmap_over(ns, &cfg);
	struct copy_count cc = { .size = 96 };
	const struct {
		const char *what, *names;
		enum ntm_memmap_strategy s;
		unsigned threads;
		bool copy;
	} cases[] = {
		{ "threads 257", "threads", NTM_INIT_FIXED, 257, false },
		{ "threads UINT_MAX", "threads", NTM_INIT_NT, ~0u, false },
		{ "call without copy", "copy", NTM_INIT_CALL, 1, false },
		{ "strategy 99", "strategy", (enum ntm_memmap_strategy)99, 1,
		  true },
		{ "strategy -1", "strategy", (enum ntm_memmap_strategy)-1, 1,
		  true },
	};

	(void)state;
	/* The last good setting: call, counted. */
	assert_int_equal(ntm_memmap_set_init(mm, NTM_INIT_CALL, 2, counting_copy,
					     &cc), 0);
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		int ret;

		reset_errmsg();
		ret = ntm_memmap_set_init(mm, cases[i].s, cases[i].threads,
					  cases[i].copy ? counting_copy : NULL,
					  &cc);
		if (ret != -EINVAL)
			fail_msg("%s: returned %d, expected -EINVAL",
				 cases[i].what, ret);
		check_errmsg_names(cases[i].names, cases[i].what);
	}
	/* A rejected setting changed nothing: still call, still counted. */
	memset(ntm_memmap_descs(mm), 0xee, ntm_memmap_bytes(mm));
	assert_int_equal(ntm_memmap_init(mm), 0);
	assert_int_equal(cc.calls, ntm_memmap_nr_pages(mm));
	check_all_descs(mm, 1024, "after rejected set_init");

	/* The bounds themselves are accepted; 0 threads is the default, 1. */
	assert_int_equal(ntm_memmap_set_init(mm, NTM_INIT_FIXED, 0, NULL,
					     NULL), 0);
	memset(ntm_memmap_descs(mm), 0xee, ntm_memmap_bytes(mm));
	assert_int_equal(ntm_memmap_init(mm), 0);
	check_all_descs(mm, 1024, "threads 0");
	assert_int_equal(ntm_memmap_set_init(mm, NTM_INIT_FIXED, 256, NULL,
					     NULL), 0);
	assert_int_equal(ntm_memmap_set_init(mm, NTM_INIT_FIELD, 1, NULL, NULL),
			 0);
	ntm_memmap_destroy(mm);
	ntm_ns_close(ns);
}

static void test_strategy_names(void **state)
{
	static const struct {
		enum ntm_memmap_strategy s;
		const char *name;
	} names[] = {
		{ NTM_INIT_FIXED, "fixed" }, { NTM_INIT_FIELD, "field" },
		{ NTM_INIT_MEMCPY, "memcpy" }, { NTM_INIT_NT, "nt" },
		{ NTM_INIT_CALL, "call" },
	};

	(void)state;
	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
		assert_string_equal(ntm_memmap_strategy_name(names[i].s),
				    names[i].name);
		assert_int_equal(ntm_memmap_strategy_parse(names[i].name),
				 names[i].s);
	}
	assert_string_equal(ntm_memmap_strategy_name((enum ntm_memmap_strategy)99),
			    "unknown");
	assert_int_equal(ntm_memmap_strategy_parse("bogus"), -EINVAL);
	assert_non_null(strstr(ntm_errmsg(), "\"bogus\""));
	assert_int_equal(ntm_memmap_strategy_parse(""), -EINVAL);
	assert_int_equal(ntm_memmap_strategy_parse("FIXED"), -EINVAL);
	assert_int_equal(ntm_memmap_strategy_parse(NULL), -EINVAL);
}

/* --- tail de-duplication ------------------------------------------------ */

/*
 * Shared tail pages: every strategy writes the same memmap as field, the
 * descriptors take one own page per compound page plus one shared run, the
 * tails carry no section number, refcounts still reach the head, and the
 * conditions (mem, 64 bytes, compound pages) are enforced.
 */
static void test_dedup(void **state)
{
	static const size_t aligns[] = { 2u << 20, 1u << 30 };
	(void)state;

	for (size_t a = 0; a < sizeof(aligns) / sizeof(*aligns); a++) {
		size_t align = aligns[a];
		size_t len = align == (2u << 20) ? 64u << 20 : 2ul << 30;
		struct ntm_ns *ns = anon_ns(len, align);
		struct ntm_memmap_config cfg = {
			.desc_size = 64, .align = align, .place = NTM_MEMMAP_MEM,
			.strategy = NTM_INIT_FIELD, .threads = 2,
			.dedup_tails = true,
		};
		struct ntm_memmap *mm = memmap_over(ns, &cfg);
		size_t comps = len / align, per_comp = align / 4096 * 64 / 4096;
		size_t n = ntm_memmap_bytes(mm);
		unsigned char *ref = malloc(n);
		struct ntm_page *tail, *head;

		assert_non_null(ref);
		assert_int_equal(ntm_memmap_init(mm), 0);
		memcpy(ref, ntm_memmap_descs(mm), n);
		for (size_t s = 0; s < sizeof(strategies) / sizeof(*strategies); s++) {
			struct copy_count cc = { .size = 64 };

			assert_int_equal(ntm_memmap_set_init(mm, strategies[s], 3,
							     counting_copy, &cc), 0);
			assert_int_equal(ntm_memmap_init(mm), 0);
			compare_with(mm, ref, ntm_memmap_strategy_name(strategies[s]));
		}
		assert_int_equal(ntm_memmap_mem_bytes(mm),
				 (per_comp - 1 + comps) * 4096);
		/* The shared run pays off over many compound pages (2 MiB). */
		if (comps >= 32)
			assert_true(ntm_memmap_mem_bytes(mm) * 10 <= n * 3);

		/* A tail in a shared page; its compound page's head. */
		tail = ntm_memmap_page(mm, len / 4096 - 1);
		head = ntm_memmap_page(mm, len / 4096 - align / 4096);
		assert_true(tail->compound_info & NTM_COMPOUND_TAIL);
		assert_ptr_equal(ntm_memmap_head(mm, tail), head);
		assert_int_equal(tail->flags >> NTM_PG_SECTION_SHIFT, 0);
		assert_int_equal(ntm_page_get(mm, tail), 1);
		assert_int_equal(ntm_page_put(mm, tail), 0);
		assert_int_equal(tail->refcount, 0);

		free(ref);
		ntm_memmap_destroy(mm);
		ntm_ns_close(ns);
	}

	/* Conditions: map=mem, 64-byte descriptors, compound pages. */
	{
		struct ntm_ns *ns = anon_ns(8u << 20, 2u << 20);
		const struct ntm_memmap_config bad[] = {
			{ .desc_size = 64, .align = 2u << 20, .place = NTM_MEMMAP_DEV,
			  .threads = 1, .dedup_tails = true },
			{ .desc_size = 80, .align = 2u << 20, .threads = 1,
			  .dedup_tails = true },
			{ .desc_size = 64, .align = 4096, .threads = 1,
			  .dedup_tails = true },
		};

		for (size_t i = 0; i < sizeof(bad) / sizeof(*bad); i++) {
			struct ntm_memmap *mm = MM_SENTINEL;

			reset_errmsg();
			assert_int_equal(ntm_memmap_create(&mm, ntm_ns_base(ns),
							   ntm_ns_size(ns), OWNER,
							   &bad[i]), -EINVAL);
			assert_ptr_equal(mm, MM_SENTINEL);
			check_errmsg_names("dedup", "dedup conditions");
		}
		ntm_ns_close(ns);
	}
}

/* --- main --------------------------------------------------------------- */

static int npatterns;
static char **patterns;

/* Add a test when no pattern was given or one of them matches its name. */
static void add_test(struct CMUnitTest *tests, size_t *nt, const char *name,
		     CMUnitTestFunction fn, const void *state)
{
	bool match = npatterns == 0;

	for (int i = 0; i < npatterns && !match; i++)
		match = fnmatch(patterns[i], name, 0) == 0;
	if (match)
		tests[(*nt)++] = (struct CMUnitTest){
			.name = name, .test_func = fn,
			.initial_state = (void *)state };
}

int main(int argc, char **argv)
{
	static char names[2 * NGEOS][32];
	static struct CMUnitTest tests[2 * NGEOS + NTHREAD_CASES + 11];
	size_t nt = 0;

	/* Arguments: fnmatch() patterns of the tests to run (default all). */
	npatterns = argc - 1;
	patterns = argv + 1;

	add_test(tests, &nt, "strategy_names", test_strategy_names, NULL);
	for (size_t i = 0; i < NGEOS; i++) {
		snprintf(names[2 * i], sizeof(names[0]), "init_%s", geos[i].name);
		snprintf(names[2 * i + 1], sizeof(names[0]), "lookup_%s",
			 geos[i].name);
		add_test(tests, &nt, names[2 * i], test_init, &geos[i]);
		add_test(tests, &nt, names[2 * i + 1], test_lookup, &geos[i]);
	}
	for (size_t i = 0; i < NTHREAD_CASES; i++)
		add_test(tests, &nt, thread_cases[i].name, test_threads,
			 &thread_cases[i]);
	add_test(tests, &nt, "refcount_single", test_refcount_single, NULL);
	add_test(tests, &nt, "refcount_threads", test_refcount_threads, NULL);
	add_test(tests, &nt, "refcount_outside", test_refcount_outside, NULL);
	add_test(tests, &nt, "dev_reserve", test_dev_reserve, NULL);
	if (nt && tests[nt - 1].test_func == test_dev_reserve)
		tests[nt - 1].teardown_func = tmpfs_teardown;
	add_test(tests, &nt, "dev_reserve_two", test_dev_reserve_two, NULL);
	add_test(tests, &nt, "dev_no_ns", test_dev_no_ns, NULL);
	add_test(tests, &nt, "bad_create", test_bad_create, NULL);
	add_test(tests, &nt, "bad_set_init", test_bad_set_init, NULL);
	add_test(tests, &nt, "dedup", test_dedup, NULL);
	if (nt == 0) {
		fprintf(stderr, "%s: no test matches\n", argv[0]);
		return 2;
	}
	return _cmocka_run_group_tests("memmap", tests, nt, NULL, NULL);
}
