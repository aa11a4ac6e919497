/* SPDX-License-Identifier: MIT */
/*
 * memmap_internal.h - the memmap object shared by memmap.c (creation,
 * lookups, threads) and memmap_loops.c (the per-strategy init loops, built
 * once per instruction set).
 */
#ifndef NTMEM_MEMMAP_INTERNAL_H
#define NTMEM_MEMMAP_INTERNAL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "ntmem/memmap.h"

/* Pageblock migrate types (one byte per 512 pages). */
#define NTM_PAGEBLOCK_MOVABLE 1

/* Initialise the descriptors of pages [pfn, end). */
typedef void (*ntm_memmap_loop_fn)(const struct ntm_memmap *mm, size_t pfn,
				   size_t end);

/* Loops for every strategy x layout (index: 0 = 64, 1 = 80, 2 = 96 bytes). */
struct ntm_memmap_loops {
	ntm_memmap_loop_fn loop[NTM_INIT_CALL + 1][3];
};

/* Compiled with the baseline ISA, and (x86-64) with -mavx: 32-byte stores. */
extern const struct ntm_memmap_loops ntm_memmap_loops_base;
extern const struct ntm_memmap_loops ntm_memmap_loops_avx;

struct ntm_memmap {
	uint8_t *region;	/* the described device region */
	size_t len;
	const void *owner;
	unsigned size;		/* descriptor bytes: 64, 80 or 96 */
	unsigned order;		/* compound order: 0, 9 or 18 */
	enum ntm_memmap_place place;
	enum ntm_memmap_strategy strategy;
	unsigned threads;
	void *(*copy)(void *dst, const void *src, size_t n, void *arg);
	void *copy_arg;
	size_t total_pfns;	/* pages in the region */
	size_t first_pfn;	/* first described page (after a DEV memmap) */
	uint8_t *descs;		/* descriptor of first_pfn */
	uint8_t *pageblock;	/* migrate type per 512 pages of the region */
	void *dram;		/* NTM_MEMMAP_MEM: the descriptors' mapping */
	size_t dram_len;
	bool dedup;		/* shared tail pages (memmap_dedup.c) */
	bool section_bits;	/* section number in the flags */
	int memfd;		/* dedup: backs heads and the shared run */
	uint8_t *tail_run;	/* dedup: writable view of the shared run */
	size_t tail_run_len;
	ntm_memmap_loop_fn loop;
};

/* Descriptor of @pfn, no range check. */
static inline uint8_t *ntm_memmap_desc(const struct ntm_memmap *mm, size_t pfn)
{
	return mm->descs + (pfn - mm->first_pfn) * mm->size;
}

/*
 * Build the descriptors of the section holding @pfn: @head for a single
 * page or a compound head, @tail for a compound tail. Both buffers hold a
 * struct ntm_page96; mm->size bytes of each are meaningful.
 */
void ntm_memmap_templates(const struct ntm_memmap *mm, size_t pfn,
			  struct ntm_page96 *head, struct ntm_page96 *tail);

/* memmap_dedup.c: map, fill the shared tail run, unmap, memory used. */
int ntm_memmap_dedup_map(struct ntm_memmap *mm);
void ntm_memmap_dedup_init_run(const struct ntm_memmap *mm);
void ntm_memmap_dedup_unmap(struct ntm_memmap *mm);
size_t ntm_memmap_dedup_bytes(const struct ntm_memmap *mm);

/* The "field" strategy: one descriptor, field by field, cached stores. */
void ntm_memmap_init_fields(const struct ntm_memmap *mm, uint8_t *desc,
			    size_t pfn);

#endif
