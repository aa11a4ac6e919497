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

/* The library is built without the front-door macros: name the inline one. */
#define COPY_fixed(d, t, n) ntm_memcpy_nt_inline(d, t, n)
#define COPY_memcpy(d, t, n) ntm_store_copy(d, t, n)
#define COPY_nt(d, t, n) (ntm_memcpy_nt)(d, t, n)
#define COPY_call(d, t, n) mm->copy(d, t, n, mm->copy_arg)

#define TEMPLATE_LOOP(STRAT, SIZE)                                            \
	static void loop_##STRAT##_##SIZE(const struct ntm_memmap *mm,        \
					  size_t pfn, size_t end)             \
	{                                                                     \
		uint8_t *d = ntm_memmap_desc(mm, pfn);                        \
		size_t tail_mask = ((size_t)1 << mm->order) - 1;             \
		struct ntm_page96 head __attribute__((aligned(64)));         \
		struct ntm_page96 tail __attribute__((aligned(64)));         \
                                                                              \
		while (pfn < end) {                                           \
			size_t sec_end = min_size(                            \
				end, next_boundary(pfn, NTM_SECTION_PAGES)); \
                                                                              \
			ntm_memmap_templates(mm, pfn, &head, &tail);          \
			while (pfn < sec_end) {                               \
				size_t pb_end = min_size(                     \
					sec_end,                              \
					next_boundary(pfn, NTM_PAGEBLOCK_PAGES)); \
                                                                              \
				if (pfn % NTM_PAGEBLOCK_PAGES == 0)           \
					mm->pageblock[pfn / NTM_PAGEBLOCK_PAGES] = \
						NTM_PAGEBLOCK_MOVABLE;        \
				for (; pfn < pb_end; pfn++, d += SIZE)        \
					COPY_##STRAT(d,                       \
						     (pfn & tail_mask) ? &tail \
								       : &head, \
						     SIZE);                   \
			}                                                     \
		}                                                             \
	}

#define LAYOUT_LOOPS(STRAT) \
	TEMPLATE_LOOP(STRAT, 64) TEMPLATE_LOOP(STRAT, 80) TEMPLATE_LOOP(STRAT, 96)

LAYOUT_LOOPS(fixed)
LAYOUT_LOOPS(memcpy)
LAYOUT_LOOPS(nt)
LAYOUT_LOOPS(call)

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
