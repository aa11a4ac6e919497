// SPDX-License-Identifier: MIT
/*
 * memmap.c - page descriptors over a device region: creation and
 * validation, templates, the threads that run the init loops
 * (memmap_loops.c), lookups and reference counts. See ntmem/memmap.h.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stddef.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "config_check.h"
#include "dispatch.h"
#include "error.h"
#include "memmap_internal.h"
#include "ns_internal.h"

#define MAX_THREADS 256u
#define ALIGN_2M (2ul << 20)
#define ALIGN_1G (1ul << 30)

static size_t round_up(size_t x, size_t unit)
{
	return (x + unit - 1) / unit * unit;
}

/*
 * The ns field took the first reserved word of 0.1.0 and the layout
 * stays: one 64-bit word, and nothing after the reserved words. The ABI
 * check lets this struct take members in (abi/reserved.suppr); these keep
 * it from growing.
 */
_Static_assert(offsetof(struct ntm_memmap_config, reserved) -
			       offsetof(struct ntm_memmap_config, ns) ==
		       sizeof(uint64_t),
	       "ntm_memmap_config.ns is one 64-bit word, as reserved[0] was");
_Static_assert(sizeof(struct ntm_memmap_config) ==
		       offsetof(struct ntm_memmap_config, reserved) +
			       3 * sizeof(uint64_t),
	       "ntm_memmap_config ends with its reserved words, as in 0.1.0");

/* True when [@base, @base + @len) lies inside @ns's mapping. */
static bool ns_holds_region(const struct ntm_ns *ns, const void *base,
			    size_t len)
{
	uintptr_t lo = (uintptr_t)ntm_ns_base(ns), a = (uintptr_t)base;

	return a >= lo && a - lo <= ntm_ns_size(ns) &&
	       len <= ntm_ns_size(ns) - (a - lo);
}

static unsigned layout_index(unsigned size)
{
	return size == 64 ? 0 : size == 80 ? 1 : 2;
}

/* Validate @cfg into @mm; 0 or -EINVAL with the argument named. */
static int apply_config(struct ntm_memmap *mm, const struct ntm_memmap_config *cfg)
{
	size_t align = cfg->align ? cfg->align : NTM_PAGE_SIZE;

	mm->size = cfg->desc_size ? cfg->desc_size : 64;
	if (mm->size != 64 && mm->size != 80 && mm->size != 96)
		return ntm_error(-EINVAL, "layout %u: descriptors are 64, 80 "
				 "or 96 bytes", cfg->desc_size);
	if (align == NTM_PAGE_SIZE)
		mm->order = 0;
	else if (align == ALIGN_2M)
		mm->order = 9;
	else if (align == ALIGN_1G)
		mm->order = 18;
	else
		return ntm_error(-EINVAL, "align %zu: one of 4096, 2 MiB or "
				 "1 GiB", cfg->align);
	if (cfg->place != NTM_MEMMAP_MEM && cfg->place != NTM_MEMMAP_DEV)
		return ntm_error(-EINVAL, "place %d: mem or dev", (int)cfg->place);
	mm->place = cfg->place;
	if (cfg->dedup_tails && (mm->place != NTM_MEMMAP_MEM || mm->size != 64 ||
				 mm->order == 0))
		return ntm_error(-EINVAL, "dedup: needs map=mem, 64-byte "
				 "descriptors and compound pages (align 2 MiB "
				 "or 1 GiB)");
	mm->dedup = cfg->dedup_tails;
	mm->section_bits = !mm->dedup;
	return 0;
}

int ntm_memmap_set_init(struct ntm_memmap *mm, enum ntm_memmap_strategy strategy,
			unsigned threads,
			void *(*copy)(void *dst, const void *src, size_t n, void *arg),
			void *copy_arg)
{
	if ((unsigned)strategy > NTM_INIT_CALL)
		return ntm_error(-EINVAL, "strategy %d: unknown", (int)strategy);
	if (strategy == NTM_INIT_CALL && !copy)
		return ntm_error(-EINVAL, "copy: the call strategy needs a copy "
				 "function");
	if (threads > MAX_THREADS)
		return ntm_error(-EINVAL, "threads %u: 0 (one) to %u", threads,
				 MAX_THREADS);
	mm->strategy = strategy;
	/* 0 is the default, as for every other field of the config. */
	mm->threads = threads ? threads : 1;
	mm->copy = copy;
	mm->copy_arg = copy_arg;
	/* 32-byte stores where the CPU runs AVX code (see memmap_loops.c). */
	mm->loop = (ntm_variant_isa(ntm_variant_active()) >= NTM_ISA_AVX2
			    ? &ntm_memmap_loops_avx
			    : &ntm_memmap_loops_base)
			   ->loop[strategy][layout_index(mm->size)];
	return 0;
}

int ntm_memmap_create(struct ntm_memmap **out, void *base, size_t len,
		      const void *owner, const struct ntm_memmap_config *cfg)
{
	const struct ntm_memmap_config defaults = { 0 };
	struct ntm_memmap *mm;
	size_t align, memmap_len;
	int ret;

	if (!out)
		return ntm_error(-EINVAL, "mm: NULL");
	if (!base || (uintptr_t)base % NTM_PAGE_SIZE)
		return ntm_error(-EINVAL, "base %p: not page aligned", base);
	/* Before anything is allocated: a refused config changes nothing. */
	ret = cfg ? NTM_CONFIG_CHECK(cfg, 0 /* no flag defined */) : 0;
	if (ret)
		return ret;
	mm = calloc(1, sizeof(*mm));
	if (!mm)
		return ntm_error(-ENOMEM, "memmap: no memory");
	mm->memfd = -1;
	if (!cfg)
		cfg = &defaults;
	ret = apply_config(mm, cfg);
	if (!ret)
		ret = ntm_memmap_set_init(mm, cfg->strategy, cfg->threads,
					  cfg->copy, cfg->copy_arg);
	if (ret)
		goto out_free;
	align = (size_t)NTM_PAGE_SIZE << mm->order;
	/* Compound heads are pfns aligned to the compound size. */
	if ((uintptr_t)base % align) {
		ret = ntm_error(-EINVAL, "base %p: not aligned to the alignment "
				"%zu", base, align);
		goto out_free;
	}
	if (len == 0 || len % NTM_PAGE_SIZE) {
		ret = ntm_error(-EINVAL, "len %zu: not a non-zero multiple of "
				"the page size %u", len, NTM_PAGE_SIZE);
		goto out_free;
	}
	if (len % align) {
		ret = ntm_error(-EINVAL, "len %zu: not a multiple of the "
				"alignment %zu", len, align);
		goto out_free;
	}
	if (cfg->ns && !ns_holds_region(cfg->ns, base, len)) {
		ret = ntm_error(-EINVAL, "cfg->ns: namespace '%s' [%p, +%zu) "
				"does not hold the region [%p, +%zu)",
				ntm_ns_path(cfg->ns), ntm_ns_base(cfg->ns),
				ntm_ns_size(cfg->ns), base, len);
		goto out_free;
	}
	mm->region = base;
	mm->len = len;
	mm->owner = owner;
	mm->total_pfns = len / NTM_PAGE_SIZE;

	if (mm->place == NTM_MEMMAP_DEV) {
		/*
		 * As ndctl --map=dev: room for a descriptor for every page of
		 * the region, rounded up to the alignment so the first
		 * described page starts a compound page.
		 */
		size_t reserve = round_up(mm->total_pfns * mm->size, align);

		if (reserve >= len) {
			ret = ntm_error(-EINVAL, "len %zu: the region is not larger "
					"than its own memmap (%zu bytes) with "
					"map=dev", len, reserve);
			goto out_free;
		}
		mm->first_pfn = reserve / NTM_PAGE_SIZE;
		mm->descs = mm->region;
	} else if (mm->dedup) {
		ret = ntm_memmap_dedup_map(mm);
		if (ret)
			goto out_free;
	} else {
		memmap_len = round_up(mm->total_pfns * mm->size, NTM_PAGE_SIZE);
		mm->dram = mmap(NULL, memmap_len, PROT_READ | PROT_WRITE,
				MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		if (mm->dram == MAP_FAILED) {
			ret = ntm_error(-ENOMEM, "len %zu: cannot map %zu bytes "
					"of descriptors", len, memmap_len);
			goto out_free;
		}
		mm->dram_len = memmap_len;
		mm->descs = mm->dram;
		/*
		 * Every byte is written by init and lookups land anywhere in
		 * it: huge pages spare a TLB miss per lookup, waste nothing.
		 */
		madvise(mm->dram, memmap_len, MADV_HUGEPAGE);
	}
	mm->pageblock = calloc(mm->total_pfns / NTM_PAGEBLOCK_PAGES + 1, 1);
	if (!mm->pageblock) {
		ret = ntm_error(-ENOMEM, "memmap: no memory for pageblocks");
		goto out_unmap;
	}
	if (mm->place == NTM_MEMMAP_DEV && cfg->ns) {
		/*
		 * Init stores into a sparse file through its mapping, where a
		 * full file system is a SIGBUS; allocate the blocks now, when
		 * it can still be an error. Last, as nothing can undo it.
		 * Without a namespace the region is the caller's plain memory.
		 */
		ret = ntm_ns_reserve(cfg->ns,
				     (uintptr_t)mm->descs -
					     (uintptr_t)ntm_ns_base(cfg->ns),
				     round_up(ntm_memmap_bytes(mm), NTM_PAGE_SIZE),
				     "map=dev descriptors");
		if (ret)
			goto out_unmap;
	}
	*out = mm;
	return 0;

out_unmap:
	free(mm->pageblock);
	ntm_memmap_dedup_unmap(mm);
	if (mm->dram)
		munmap(mm->dram, mm->dram_len);
out_free:
	free(mm);
	return ret;
}

void ntm_memmap_destroy(struct ntm_memmap *mm)
{
	if (!mm)
		return;
	ntm_memmap_dedup_unmap(mm);
	if (mm->dram)
		munmap(mm->dram, mm->dram_len);
	free(mm->pageblock);
	free(mm);
}

/* --- templates --------------------------------------------------------- */

/* The section number's bits in the flags of @pfn's descriptor. */
static uint64_t section_flags(const struct ntm_memmap *mm, size_t pfn)
{
	if (!mm->section_bits)
		return 0;
	return (uint64_t)(pfn / NTM_SECTION_PAGES) << NTM_PG_SECTION_SHIFT;
}

/* The words every descriptor of the section holding @pfn shares. */
static void base_template(const struct ntm_memmap *mm, size_t pfn,
			  struct ntm_page96 *t)
{
	memset(t, 0, sizeof(*t));
	t->page.flags = NTM_PG_RESERVED | NTM_PG_ZONE_DEVICE | section_flags(mm, pfn);
	t->page.owner = mm->owner;
	t->page.mapcount = -1;
	t->page.refcount = 0;
	if (mm->size == 96)
		t->last_cpupid = -1;
}

void ntm_memmap_templates(const struct ntm_memmap *mm, size_t pfn,
			  struct ntm_page96 *head, struct ntm_page96 *tail)
{
	base_template(mm, pfn, head);
	if (mm->order == 0)
		return;
	*tail = *head;
	head->page.flags |= NTM_PG_HEAD | (uint64_t)mm->order << NTM_PG_ORDER_SHIFT;
	tail->page.compound_info = NTM_COMPOUND_TAIL | (uint64_t)mm->order << 1;
	tail->page.mapping = NTM_TAIL_MAPPING;
}

void ntm_memmap_init_fields(const struct ntm_memmap *mm, uint8_t *desc,
			    size_t pfn)
{
	struct ntm_page96 *p = (struct ntm_page96 *)desc;
	bool compound = mm->order != 0;
	bool tail = compound && (pfn & (((size_t)1 << mm->order) - 1));

	/* The order of the kernel's __init_single_page() and friends. */
	ntm_store_fill(desc, 0, mm->size);
	p->page.flags = NTM_PG_ZONE_DEVICE | section_flags(mm, pfn);
	p->page.refcount = 1;
	p->page.mapcount = -1;
	if (mm->size == 96)
		p->last_cpupid = -1;
	p->page.flags |= NTM_PG_RESERVED;
	p->page.owner = mm->owner;
	p->page.zone_device_data = NULL;
	p->page.refcount = 0;
	if (tail) {
		p->page.mapping = NTM_TAIL_MAPPING;
		p->page.compound_info = NTM_COMPOUND_TAIL | (uint64_t)mm->order << 1;
		p->page.priv = 0;
	} else if (compound) {
		p->page.flags |= NTM_PG_HEAD |
				 (uint64_t)mm->order << NTM_PG_ORDER_SHIFT;
	}
	/*
	 * The field stores above land inside the range the fill recorded;
	 * record them once more so the recorder sees the last store here.
	 */
	NTM_REC(NTM_REC_STORE, desc, mm->size);
}

/* --- init: split over threads ------------------------------------------ */

struct init_share {
	const struct ntm_memmap *mm;
	size_t start, end;
	pthread_t thread;
	bool started;		/* on a thread of its own, to be joined */
};

/*
 * Initialise [pfn, end) and, for the strategies that store through the
 * cache (field, memcpy), write their lines back: descriptors on the
 * device (map=dev) must not be left dirty when init returns, and the NT
 * strategies leave nothing dirty to begin with.
 */
static void init_run(const struct ntm_memmap *mm, size_t pfn, size_t end)
{
	mm->loop(mm, pfn, end);
	if (mm->strategy == NTM_INIT_FIELD || mm->strategy == NTM_INIT_MEMCPY)
		ntm_flush_lines(ntm_memmap_desc(mm, pfn), (end - pfn) * mm->size);
}

static void *init_share_run(void *arg)
{
	struct init_share *s = arg;
	const struct ntm_memmap *mm = s->mm;

	if (mm->dedup) {
		/* Only each compound page's own first descriptor page. */
		size_t own = NTM_PAGE_SIZE / mm->size;

		for (size_t head = s->start; head < s->end; head += (size_t)1 << mm->order)
			init_run(mm, head, head + own);
	} else {
		init_run(mm, s->start, s->end);
	}
	/*
	 * Each thread orders its own non-temporal stores and write-backs
	 * before it reports done (its return, seen by pthread_join): an
	 * SFENCE on one CPU does not order another CPU's stores.
	 */
	ntm_arch_drain();
	return NULL;
}

int ntm_memmap_init(struct ntm_memmap *mm)
{
	struct init_share share[MAX_THREADS];
	/* Shares hold whole compound pages and whole pageblocks. */
	size_t unit = (size_t)1 << (mm->order > 9 ? mm->order : 9);
	size_t pages = mm->total_pfns - mm->first_pfn;
	size_t per = round_up((pages + mm->threads - 1) / mm->threads, unit);
	unsigned n = 0;

	if (mm->dedup)
		ntm_memmap_dedup_init_run(mm);
	for (size_t start = mm->first_pfn; start < mm->total_pfns; start += per) {
		share[n].mm = mm;
		share[n].start = start;
		share[n].end = mm->total_pfns - start > per ? start + per : mm->total_pfns;
		n++;
	}
	/*
	 * Share 0 runs on the calling thread, and so does every share whose
	 * thread cannot be started (EAGAIN under a thread limit): init then
	 * takes longer but still writes every descriptor, where returning
	 * the error would leave the memmap half-written.
	 */
	for (unsigned i = 1; i < n; i++)
		share[i].started = pthread_create(&share[i].thread, NULL,
						  init_share_run, &share[i]) == 0;
	for (unsigned i = 0; i < n; i++)
		if (i == 0 || !share[i].started)
			init_share_run(&share[i]);
	for (unsigned i = 1; i < n; i++)
		if (share[i].started)
			pthread_join(share[i].thread, NULL);
	return 0;
}

/* --- geometry and lookups ---------------------------------------------- */

size_t ntm_memmap_first_pfn(const struct ntm_memmap *mm)
{
	return mm->first_pfn;
}

size_t ntm_memmap_nr_pages(const struct ntm_memmap *mm)
{
	return mm->total_pfns - mm->first_pfn;
}

size_t ntm_memmap_desc_size(const struct ntm_memmap *mm)
{
	return mm->size;
}

size_t ntm_memmap_bytes(const struct ntm_memmap *mm)
{
	return ntm_memmap_nr_pages(mm) * mm->size;
}

size_t ntm_memmap_mem_bytes(const struct ntm_memmap *mm)
{
	if (mm->dedup)
		return ntm_memmap_dedup_bytes(mm);
	if (mm->place == NTM_MEMMAP_DEV)
		return mm->first_pfn * NTM_PAGE_SIZE;
	return mm->dram_len;
}

void *ntm_memmap_descs(const struct ntm_memmap *mm)
{
	return mm->descs;
}

unsigned ntm_memmap_order(const struct ntm_memmap *mm)
{
	return mm->order;
}

struct ntm_page *ntm_memmap_page(const struct ntm_memmap *mm, size_t pfn)
{
	if (pfn < mm->first_pfn || pfn >= mm->total_pfns)
		return NULL;
	return (struct ntm_page *)ntm_memmap_desc(mm, pfn);
}

size_t ntm_memmap_pfn(const struct ntm_memmap *mm, const struct ntm_page *page)
{
	uintptr_t p = (uintptr_t)page, d = (uintptr_t)mm->descs;

	if (p < d || (p - d) % mm->size || (p - d) / mm->size >= ntm_memmap_nr_pages(mm))
		return SIZE_MAX;
	return mm->first_pfn + (p - d) / mm->size;
}

void *ntm_memmap_addr(const struct ntm_memmap *mm, const struct ntm_page *page)
{
	size_t pfn = ntm_memmap_pfn(mm, page);

	return pfn == SIZE_MAX ? NULL : mm->region + pfn * NTM_PAGE_SIZE;
}

struct ntm_page *ntm_memmap_head(const struct ntm_memmap *mm,
				 const struct ntm_page *page)
{
	size_t pfn = ntm_memmap_pfn(mm, page);
	unsigned order;

	if (pfn == SIZE_MAX)
		return NULL;
	if (!(page->compound_info & NTM_COMPOUND_TAIL))
		return (struct ntm_page *)page;
	/*
	 * The order is in the tail itself: no per-folio state is read. A
	 * tail whose order is not the memmap's is garbage (never
	 * initialised, or overwritten): no head, rather than a shift past
	 * the word's width.
	 */
	order = (unsigned)(page->compound_info >> 1);
	if (order != mm->order)
		return NULL;
	return ntm_memmap_page(mm, pfn & ~(((size_t)1 << order) - 1));
}

/*
 * The head whose count @page's get or put changes, or NULL with the
 * message set. The range checks are the ones ntm_memmap_head() makes
 * anyway: a stray pointer costs a predicted branch, not a fault.
 */
static struct ntm_page *refcount_head(const struct ntm_memmap *mm,
				      const struct ntm_page *page)
{
	struct ntm_page *head = ntm_memmap_head(mm, page);

	if (!head)
		ntm_error(-EINVAL, "page %p: not a descriptor of this memmap",
			  (const void *)page);
	return head;
}

int ntm_page_get(const struct ntm_memmap *mm, struct ntm_page *page)
{
	struct ntm_page *head = refcount_head(mm, page);

	if (!head)
		return -EINVAL;
	return __atomic_add_fetch(&head->refcount, 1, __ATOMIC_SEQ_CST);
}

int ntm_page_put(const struct ntm_memmap *mm, struct ntm_page *page)
{
	struct ntm_page *head = refcount_head(mm, page);

	if (!head)
		return -EINVAL;
	return __atomic_sub_fetch(&head->refcount, 1, __ATOMIC_SEQ_CST);
}

static const char *const strategy_names[] = {
	[NTM_INIT_FIXED] = "fixed",
	[NTM_INIT_FIELD] = "field",
	[NTM_INIT_MEMCPY] = "memcpy",
	[NTM_INIT_NT] = "nt",
	[NTM_INIT_CALL] = "call",
};

const char *ntm_memmap_strategy_name(enum ntm_memmap_strategy s)
{
	return (unsigned)s <= NTM_INIT_CALL ? strategy_names[s] : "unknown";
}

int ntm_memmap_strategy_parse(const char *name)
{
	for (unsigned i = 0; name && i <= NTM_INIT_CALL; i++)
		if (strcmp(name, strategy_names[i]) == 0)
			return (int)i;
	return ntm_error(-EINVAL, "strategy \"%s\": not field, memcpy, fixed, "
			 "nt or call", name ? name : "(null)");
}
