// SPDX-License-Identifier: MIT
/*
 * memmap_loops.c - the init loop of every strategy and layout.
 *
 * Built twice (src/meson.build): as ntm_memmap_loops_base with the
 * baseline ISA, and on x86-64 as ntm_memmap_loops_avx with -mavx, where
 * the constant-size inline copy uses 32-byte stores: two per line, which
 * reach the streaming-write limit where four 16-byte stores took ~1.2x as
 * long. memmap.c picks the second when the CPU runs AVX code.
 *
 * Each loop walks sections (templates rebuilt once per 32768 pages), then
 * pageblocks (one migrate-type byte per 512 pages, as the kernel sets per
 * pageblock-aligned pfn), then pages: one constant-size copy of the head
 * or tail template per descriptor, so every store is a straight run. The
 * fixed strategy copies groups of descriptors instead, whole lines at a
 * time (group_loop()).
 */
#include <string.h>

#include "dispatch.h"
#include "memmap_internal.h"

#ifndef LOOPS_NAME
#error "build with -DLOOPS_NAME=ntm_memmap_loops_base or ntm_memmap_loops_avx"
#endif

static inline size_t min_size(size_t a, size_t b)
{
	return a < b ? a : b;
}

/* Round @pfn up to the next multiple of the power of two @unit. */
static inline size_t next_boundary(size_t pfn, size_t unit)
{
	return (pfn | (unit - 1)) + 1;
}

/*
 * One descriptor from its template, the strategy's way. Inlined with
 * constant @strategy and @size into each loop below, so the switch folds
 * away and the fixed strategy's copy is the constant-size inline one.
 * The library is built without the front-door macros: the inline copy is
 * named, and (ntm_memcpy_nt) is the out-of-line call.
 */
static inline __attribute__((always_inline)) void
copy_desc(const struct ntm_memmap *mm, enum ntm_memmap_strategy strategy,
	  uint8_t *d, const struct ntm_page96 *t, size_t size)
{
	switch (strategy) {
	case NTM_INIT_FIXED:
		ntm_memcpy_nt_inline(d, t, size);
		break;
	case NTM_INIT_MEMCPY:
		ntm_store_copy(d, t, size);
		break;
	case NTM_INIT_NT:
		(ntm_memcpy_nt)(d, t, size);
		break;
	default:	/* NTM_INIT_CALL */
		mm->copy(d, t, size, mm->copy_arg);
		break;
	}
}

/*
 * Pages [pfn, end) from templates: sections, then pageblocks, then one
 * copy per descriptor. Always inlined, so each loop below is this body
 * for one strategy and one descriptor size, its copies straight runs.
 */
static inline __attribute__((always_inline)) void
template_loop(const struct ntm_memmap *mm, size_t pfn, size_t end,
	      enum ntm_memmap_strategy strategy, size_t size)
{
	uint8_t *d = ntm_memmap_desc(mm, pfn);
	size_t tail_mask = ((size_t)1 << mm->order) - 1;
	struct ntm_page96 head __attribute__((aligned(64)));
	struct ntm_page96 tail __attribute__((aligned(64)));

	while (pfn < end) {
		size_t sec_end = min_size(end, next_boundary(pfn, NTM_SECTION_PAGES));

		ntm_memmap_templates(mm, pfn, &head, &tail);
		while (pfn < sec_end) {
			size_t pb_end = min_size(sec_end,
						 next_boundary(pfn, NTM_PAGEBLOCK_PAGES));

			if (pfn % NTM_PAGEBLOCK_PAGES == 0)
				mm->pageblock[pfn / NTM_PAGEBLOCK_PAGES] =
					NTM_PAGEBLOCK_MOVABLE;
			for (; pfn < pb_end; pfn++, d += size)
				copy_desc(mm, strategy, d,
					  (pfn & tail_mask) ? &tail : &head, size);
		}
	}
}

#if NTM_ARCH_HAS_NT_STORES
/*
 * Descriptors per group of the fixed strategy's loop: whole 64-byte lines
 * (4 x 80 = 5 lines, 2 x 96 = 3, 4 x 64 = 4). A descriptor of 80 or 96
 * bytes ends inside a line the next one completes; copied one by one,
 * with a choice of template and of the stores' alignment per descriptor,
 * the 80-byte rows of `ntmem bench memmap` ran at 1.07-1.12x a
 * non-temporal fill of the same bytes on a Zen 5 (64 bytes: 1.05-1.09x).
 * Groups, the groups between two compound heads copied as one run from
 * one template (copy_run()), took them to 1.00-1.05x, every size, both
 * setups, one thread or two; a microbenchmark of the same
 * stores (4 x 80 bytes as ten 32-byte stores) ran at 1.00-1.04x a 64-byte
 * fill, so 64-byte stores would gain little beyond the noise.
 */
#define GROUP_DESCS(size) ((size) == 96 ? 2 : 4)
#define GROUP_MAX_BYTES 320

/* A group's templates: [k] has the head in slot k, [descs] none. */
struct group_templates {
	uint8_t t[4 + 1][GROUP_MAX_BYTES] __attribute__((aligned(64)));
};

static inline __attribute__((always_inline)) void
build_groups(struct group_templates *g, const struct ntm_page96 *head,
	     const struct ntm_page96 *tail, size_t size)
{
	size_t descs = GROUP_DESCS(size);

	for (size_t k = 0; k <= descs; k++)
		for (size_t slot = 0; slot < descs; slot++)
			memcpy(g->t[k] + slot * size, slot == k ? head : tail, size);
}

/* @n bytes, whole lines, from @s to the line-aligned @d. */
static inline __attribute__((always_inline)) void
copy_lines(uint8_t *d, const uint8_t *s, size_t n)
{
#ifdef NTM_ARCH_HAS_STREAM32
	ntm_nt_fixed32(d, s, n);
#else
	ntm_nt_fixed16(d, s, n);
#endif
	(void)ntm_arch_nt_finish(d, n);
}

/*
 * @groups groups of @n bytes, each from @s: one source for a whole run of
 * groups. Choosing each group's template in the loop (a computed address
 * ahead of its loads) kept the devdax rows at 1.04-1.14x the limit; runs
 * of one template took them to 1.01-1.03x.
 */
static inline __attribute__((always_inline)) void
copy_run(uint8_t *d, const uint8_t *s, size_t groups, size_t n)
{
	for (size_t g = 0; g < groups; g++, d += n)
		copy_lines(d, s, n);
}

/*
 * The fixed strategy's loop, section by section: single descriptors up to
 * the first line boundary (a section starts on one only when the first
 * described page's descriptor does: a memmap at the start of its region
 * begins after its own descriptors' pages, any number of them), then
 * whole groups, then single descriptors to the section's end; the same
 * bytes as template_loop() writes. The pageblock bytes are set apart from
 * the descriptors, so no group is cut at a pageblock. A group holding a
 * compound head (order 9 or 18: at most one in a group) is copied from
 * the template with the head in its slot, the groups between two heads
 * as one run.
 */
static inline __attribute__((always_inline)) void
group_loop(const struct ntm_memmap *mm, size_t pfn, size_t end, size_t size)
{
	const size_t descs = GROUP_DESCS(size);
	uint8_t *d = ntm_memmap_desc(mm, pfn);
	size_t unit = (size_t)1 << mm->order, tail_mask = unit - 1;
	struct ntm_page96 head __attribute__((aligned(64)));
	struct ntm_page96 tail __attribute__((aligned(64)));
	struct group_templates groups;

	while (pfn < end) {
		size_t sec_end = min_size(end, next_boundary(pfn, NTM_SECTION_PAGES));
		/* Order 0: every descriptor is the head template. */
		const struct ntm_page96 *t = mm->order ? &tail : &head;

		ntm_memmap_templates(mm, pfn, &head, &tail);
		build_groups(&groups, &head, t, size);
		for (size_t pb = pfn; pb < sec_end;
		     pb = next_boundary(pb, NTM_PAGEBLOCK_PAGES))
			if (pb % NTM_PAGEBLOCK_PAGES == 0)
				mm->pageblock[pb / NTM_PAGEBLOCK_PAGES] =
					NTM_PAGEBLOCK_MOVABLE;
		for (; pfn < sec_end && ((uintptr_t)d & 63); pfn++, d += size)
			ntm_memcpy_nt_inline(d, (pfn & tail_mask) ? t : &head, size);
		while (sec_end - pfn >= descs) {
			size_t into = pfn & tail_mask;
			size_t run = (sec_end - pfn) / descs;

			if (mm->order && (into == 0 || unit - into < descs)) {
				/* The group holding a compound head. */
				copy_lines(d, groups.t[into ? unit - into : 0],
					   descs * size);
				pfn += descs;
				d += descs * size;
				continue;
			}
			/* Groups of tails only, up to the next head. */
			if (mm->order && (unit - into) / descs < run)
				run = (unit - into) / descs;
			copy_run(d, groups.t[descs], run, descs * size);
			pfn += run * descs;
			d += run * descs * size;
		}
		for (; pfn < sec_end; pfn++, d += size)
			ntm_memcpy_nt_inline(d, (pfn & tail_mask) ? t : &head, size);
	}
}

#define FIXED_LOOP(size)                                                       \
	static void loop_fixed_##size(const struct ntm_memmap *mm, size_t pfn, \
				      size_t end)                              \
	{                                                                      \
		group_loop(mm, pfn, end, size);                                \
	}
#else
#define FIXED_LOOP(size) TEMPLATE_LOOP(fixed, NTM_INIT_FIXED, size)
#endif

/* The loops memmap.c calls: template_loop() for each strategy and size. */
#define TEMPLATE_LOOP(name, strategy, size)                                    \
	static void loop_##name##_##size(const struct ntm_memmap *mm,         \
					 size_t pfn, size_t end)               \
	{                                                                      \
		template_loop(mm, pfn, end, strategy, size);                   \
	}
#define LAYOUT_LOOPS(name, strategy)                                           \
	TEMPLATE_LOOP(name, strategy, 64)                                      \
	TEMPLATE_LOOP(name, strategy, 80)                                      \
	TEMPLATE_LOOP(name, strategy, 96)

FIXED_LOOP(64)
FIXED_LOOP(80)
FIXED_LOOP(96)
LAYOUT_LOOPS(memcpy, NTM_INIT_MEMCPY)
LAYOUT_LOOPS(nt, NTM_INIT_NT)
LAYOUT_LOOPS(call, NTM_INIT_CALL)

/* Per-field stores: no template, every descriptor built in place. */
static void loop_field(const struct ntm_memmap *mm, size_t pfn, size_t end)
{
	uint8_t *d = ntm_memmap_desc(mm, pfn);

	for (; pfn < end; pfn++, d += mm->size) {
		if (pfn % NTM_PAGEBLOCK_PAGES == 0)
			mm->pageblock[pfn / NTM_PAGEBLOCK_PAGES] = NTM_PAGEBLOCK_MOVABLE;
		ntm_memmap_init_fields(mm, d, pfn);
	}
}

#define LOOPS_OF(STRAT) { loop_##STRAT##_64, loop_##STRAT##_80, loop_##STRAT##_96 }

const struct ntm_memmap_loops LOOPS_NAME = {
	.loop = {
		[NTM_INIT_FIXED] = LOOPS_OF(fixed),
		[NTM_INIT_FIELD] = { loop_field, loop_field, loop_field },
		[NTM_INIT_MEMCPY] = LOOPS_OF(memcpy),
		[NTM_INIT_NT] = LOOPS_OF(nt),
		[NTM_INIT_CALL] = LOOPS_OF(call),
	},
};
