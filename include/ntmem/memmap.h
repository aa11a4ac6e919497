/* SPDX-License-Identifier: MIT */
/*
 * ntmem/memmap.h - page descriptors over device memory.
 *
 * The kernel describes every 4 KiB page of a ZONE_DEVICE namespace with a
 * struct page (64, 80 or 96 bytes on x86-64, depending on KMSAN and where
 * last_cpupid lives), 25 million of them for 100 GiB. A memmap here is the
 * same thing in user space, over any memory range: one descriptor per page,
 * initialised from a template, with compound pages for 2 MiB and 1 GiB
 * namespaces, stored in DRAM (NTM_MEMMAP_MEM) or at the start of the device
 * region itself (NTM_MEMMAP_DEV, ndctl's --map=dev, the kernel's altmap).
 *
 * Template initialisation: everything that is the same for a run of pages
 * is built once and each descriptor is written with one constant-size
 * non-temporal copy (the seeds' fast path). The only pfn-derived word, the
 * memory section number kept in the flags, changes every 32768 pages, so
 * the templates are rebuilt per section, outside the per-page loop; no
 * template is patched in memory between two copies (the store-to-load
 * forwarding stall that costs 3x).
 */
#ifndef NTMEM_MEMMAP_H
#define NTMEM_MEMMAP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define NTM_PAGE_SIZE 4096u

struct ntm_ns;	/* ntmem/ns.h */

/* flags word */
#define NTM_PG_RESERVED (1ull << 0)	/* device page: not for the allocator */
#define NTM_PG_HEAD (1ull << 1)		/* first page of a compound page */
#define NTM_PG_ORDER_SHIFT 8		/* head: compound order, 8 bits */
#define NTM_PG_ZONE_DEVICE (4ull << 16)	/* zone bits: ZONE_DEVICE */
#define NTM_PG_SECTION_SHIFT 32		/* memory section number, 32 bits */
#define NTM_SECTION_PAGES 32768u	/* 128 MiB sections, as on x86-64 */
#define NTM_PAGEBLOCK_PAGES 512u	/* 2 MiB pageblocks, one type each */

/* compound_info of a tail page: bit 0 set, the order above it. Every tail
 * of one order is byte-identical, so tail descriptor pages can be shared. */
#define NTM_COMPOUND_TAIL 1ull
/* mapping of a tail page: a poison value, as the kernel's TAIL_MAPPING */
#define NTM_TAIL_MAPPING 0x400ull

/* The 64-byte descriptor: the base x86-64 struct page. */
struct ntm_page {
	uint64_t flags;		   /* NTM_PG_* | zone | section << 32 */
	uint64_t compound_info;	   /* tail: NTM_COMPOUND_TAIL | order << 1 */
	const void *owner;	   /* the namespace (the kernel's pgmap) */
	void *zone_device_data;	   /* the owner's per-page pointer; NULL */
	uint64_t mapping;	   /* tail: NTM_TAIL_MAPPING; otherwise 0 */
	uint64_t priv;		   /* private word; 0 */
	int32_t mapcount;	   /* -1: mapped nowhere */
	int32_t refcount;	   /* 0 at init (fsdax/devdax pages) */
	uint64_t memcg_data;	   /* 0 */
};

/* 80 bytes: the KMSAN shadow/origin pointers follow the base page. */
struct ntm_page80 {
	struct ntm_page page;
	uint64_t kmsan_shadow;
	uint64_t kmsan_origin;
};

/* 96 bytes: KMSAN pointers and last_cpupid outside the flags. */
struct ntm_page96 {
	struct ntm_page page;
	uint64_t kmsan_shadow;
	uint64_t kmsan_origin;
	int32_t last_cpupid;	/* -1: no CPU yet */
	uint32_t pad0;
	uint64_t pad1;
};

_Static_assert(sizeof(struct ntm_page) == 64, "struct ntm_page is 64 bytes");
_Static_assert(sizeof(struct ntm_page80) == 80, "struct ntm_page80 is 80 bytes");
_Static_assert(sizeof(struct ntm_page96) == 96, "struct ntm_page96 is 96 bytes");

enum ntm_memmap_place {
	NTM_MEMMAP_MEM = 0,	/* descriptors in DRAM (default) */
	NTM_MEMMAP_DEV = 1,	/* descriptors at the start of the region */
};

enum ntm_memmap_strategy {
	NTM_INIT_FIXED = 0,	/* template + constant-size inline NT copy (default) */
	NTM_INIT_FIELD = 1,	/* per-field stores, as before the kernel series */
	NTM_INIT_MEMCPY = 2,	/* template + memcpy() */
	NTM_INIT_NT = 3,	/* template + out-of-line ntm_memcpy_nt() */
	NTM_INIT_CALL = 4,	/* template + the config's copy function */
};

struct ntm_memmap_config {
	unsigned desc_size;	/* 64, 80 or 96; 0 means 64 */
	size_t align;		/* 4096 (0), 2 MiB or 1 GiB: compound page size */
	enum ntm_memmap_place place;
	enum ntm_memmap_strategy strategy;
	unsigned threads;	/* 1 to 256; 0 means 1 */
	/*
	 * Share identical tail descriptor pages (the kernel's vmemmap
	 * optimisation): needs NTM_MEMMAP_MEM, 64-byte descriptors and
	 * compound pages; see ntm_memmap_mem_bytes(). Section numbers are
	 * then left out of the flags, as in the kernel's virtual memmap.
	 */
	bool dedup_tails;
	/* NTM_INIT_CALL: copies one descriptor; e.g. a peer library's copy */
	void *(*copy)(void *dst, const void *src, size_t n, void *arg);
	void *copy_arg;
	/*
	 * Room to grow without breaking the ABI: bits of @flags and the
	 * reserved words get meanings in later releases, zero meaning what
	 * the library does today. Both must be 0 here (-EINVAL otherwise),
	 * as a config cleared with { 0 } or built with designated
	 * initialisers is. Four words: twice what the config structs grew
	 * by from 0.1 to 0.3 (a callback and its argument, a path and a
	 * count); 32 bytes in a struct passed once per create.
	 */
	unsigned flags;		/* none defined yet */
	/*
	 * Since 0.5 (the first of the reserved words of 0.1.0): the
	 * namespace that holds [base, base + len), or NULL. NTM_MEMMAP_DEV
	 * reserves the file blocks of the descriptors through it; without
	 * one the region is plain memory the caller owns and nothing is
	 * reserved. The union keeps the field one 64-bit word wide where a
	 * pointer is narrower, so the layout is 0.1.0's everywhere.
	 */
	union {
		const struct ntm_ns *ns;
		uint64_t ns_word;
	};
	uint64_t reserved[3];
};

struct ntm_memmap;

/**
 * ntm_memmap_create() - a memmap for the region [@base, @base + @len)
 * @mm:    set to the new memmap on success
 * @base:  the region (a namespace's base); aligned to @cfg->align
 * @len:   region bytes: a non-zero multiple of @cfg->align (and 4096)
 * @owner: stored in every descriptor's owner field (may be NULL)
 * @cfg:   layout, alignment, placement, strategy and threads; NULL for
 *         the defaults (64 bytes, 4 KiB pages, mem, fixed, one thread)
 *
 * With NTM_MEMMAP_DEV the descriptors take the start of the region itself:
 * room for one descriptor per page of the whole region, rounded up to the
 * alignment, is reserved and those pages are not described (they hold the
 * memmap). When @cfg->ns names the namespace holding the region and it is
 * a writable file or emulated namespace (not DAX), the file blocks the
 * descriptors will be written to are allocated here (fallocate()), so
 * that ntm_memmap_init() cannot meet a full file system through the
 * mapping (SIGBUS). Without @cfg->ns the region is plain memory the
 * caller owns: nothing is reserved, and a sparse file under it is the
 * caller's to allocate. Nothing is initialised yet; see ntm_memmap_init().
 *
 * Return: 0, -EINVAL (ntm_errmsg() names the argument: a length that is
 * not a multiple of the page size or alignment, a region smaller than its
 * own memmap with NTM_MEMMAP_DEV, an unknown layout, more than 256
 * threads, a missing copy function, a @cfg->ns that does not hold the
 * whole region, a flag bit or reserved word that is
 * not 0), -ENOSPC (NTM_MEMMAP_DEV: the file
 * system has no room for the descriptors; ntm_errmsg() names the namespace
 * path and the bytes needed; the file's contents are unchanged), -ESTALE
 * (NTM_MEMMAP_DEV: the namespace's path names another file now), another
 * error of the file system, or -ENOMEM.
 */
int ntm_memmap_create(struct ntm_memmap **mm, void *base, size_t len,
		      const void *owner, const struct ntm_memmap_config *cfg);

/**
 * ntm_memmap_init() - write every descriptor with the configured strategy
 *
 * Every strategy writes byte-identical memmaps. With several threads each
 * takes a contiguous share of whole compound pages and drains its own
 * non-temporal stores before it reports done, so on return every
 * descriptor is ordered before the caller's next store. A share whose
 * thread cannot be started runs on the calling thread instead.
 *
 * Return: 0.
 */
int ntm_memmap_init(struct ntm_memmap *mm);

/**
 * ntm_memmap_set_init() - change how ntm_memmap_init() writes: @strategy,
 * @threads (1 to 256, 0 means 1), and for NTM_INIT_CALL the @copy function and its
 * @copy_arg. Return: 0 or -EINVAL naming the argument.
 */
int ntm_memmap_set_init(struct ntm_memmap *mm, enum ntm_memmap_strategy strategy,
			unsigned threads,
			void *(*copy)(void *dst, const void *src, size_t n, void *arg),
			void *copy_arg);

/** ntm_memmap_destroy() - free the memmap (not the region); NULL is ignored */
void ntm_memmap_destroy(struct ntm_memmap *mm);

/* Geometry. Page frame numbers count 4 KiB pages from the region base. */
size_t ntm_memmap_first_pfn(const struct ntm_memmap *mm); /* first described */
size_t ntm_memmap_nr_pages(const struct ntm_memmap *mm);  /* described pages */
size_t ntm_memmap_desc_size(const struct ntm_memmap *mm);
/* Bytes of descriptors written by ntm_memmap_init(). */
size_t ntm_memmap_bytes(const struct ntm_memmap *mm);
/*
 * Memory the descriptors occupy: the whole array, or with dedup_tails the
 * unique head pages plus one shared run of tail pages.
 */
size_t ntm_memmap_mem_bytes(const struct ntm_memmap *mm);
/* Start of the descriptor array. */
void *ntm_memmap_descs(const struct ntm_memmap *mm);

/*
 * Lookups; NULL / SIZE_MAX for a pfn or pointer outside the memmap or off
 * a descriptor boundary. ntm_memmap_head() is NULL too for a tail whose
 * order is not the memmap's (a descriptor never initialised, or
 * overwritten).
 */
struct ntm_page *ntm_memmap_page(const struct ntm_memmap *mm, size_t pfn);
size_t ntm_memmap_pfn(const struct ntm_memmap *mm, const struct ntm_page *page);
void *ntm_memmap_addr(const struct ntm_memmap *mm, const struct ntm_page *page);
/* The head of the compound page holding @page (@page itself when single). */
struct ntm_page *ntm_memmap_head(const struct ntm_memmap *mm,
				 const struct ntm_page *page);
/* Order of the compound page holding @page: 0, 9 (2 MiB) or 18 (1 GiB). */
unsigned ntm_memmap_order(const struct ntm_memmap *mm);

/*
 * Reference counts live on the compound head, as the kernel's folio
 * refcount does. Both are atomic (sequentially consistent) and return the
 * new count, or -EINVAL when ntm_memmap_head() finds no head for @page: a
 * pointer outside the memmap (NULL, another memmap's descriptor, a page
 * of the map=dev reserve), off a descriptor boundary, or a tail with a
 * garbage order; no count changes and ntm_errmsg() names the page. The
 * checks are the lookup's own range checks, nothing more. Still undefined:
 * a NULL or destroyed @mm, a plausible but wrong descriptor (uninitialised
 * map=dev memory that happens to look like a tail of the right order), a
 * count taken below zero or past INT_MAX (it wraps; a count of -22 then
 * reads as -EINVAL), and a memmap destroyed while another thread counts.
 */
int ntm_page_get(const struct ntm_memmap *mm, struct ntm_page *page);
int ntm_page_put(const struct ntm_memmap *mm, struct ntm_page *page);

/** ntm_memmap_strategy_name() - "fixed", "field", "memcpy", "nt", "call" */
const char *ntm_memmap_strategy_name(enum ntm_memmap_strategy s);
/** ntm_memmap_strategy_parse() - the strategy called @name, or -EINVAL */
int ntm_memmap_strategy_parse(const char *name);

#ifdef __cplusplus
}
#endif

#endif /* NTMEM_MEMMAP_H */
