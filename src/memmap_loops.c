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
 * or tail template per descriptor, so every store is a straight run.
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

LAYOUT_LOOPS(fixed, NTM_INIT_FIXED)
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
