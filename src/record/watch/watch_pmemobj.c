// SPDX-License-Identifier: MIT
/*
 * watch_pmemobj.c - the stores libpmemobj (PMDK 1.12, pool format 6)
 * leaves unflushed on purpose, so that `ntmem check` does not report them
 * in a correct program, found by experiment and told pmemcheck by PMDK's
 * own annotations. Each is a structure at a place computed from the pool's
 * own header and heap layout, never a whole pool: a program's own store
 * without a persist (its root object, an allocated object) in the same
 * pool is still reported.
 *
 *   - the run-time part of the pool descriptor, from its "addr" field to
 *     the end of its 8 KiB (file offsets 6688 to 8192): pointers, locks,
 *     the heap's run-time state, rebuilt by every pmemobj_open() and
 *     never read from the file (PMDK removes it from pmemcheck's mapping:
 *     VALGRIND_REMOVE_PMEM_MAPPING);
 *   - chunk footers: the copy of a free or used multi-chunk block's header
 *     in its last chunk's header slot, rebuilt when a zone is first used
 *     (heap_chunk_write_footer(): "no need to persist", VALGRIND_SET_CLEAN);
 *   - the contents of free chunks, which libpmemobj uses as scratch space
 *     (it keeps a memory block descriptor with run-time pointers there) and
 *     no one reads after a crash: a chunk whose header says free has no
 *     contents. Judged at the end only (unmap, exit): an object being
 *     allocated is in a chunk whose header is not yet "used" while its
 *     constructor runs;
 *   - the contents of a run's free units, for the same reason: a chunk
 *     libpmemobj used as scratch while it was free keeps that scratch
 *     (the memory block descriptor of the free block it was part of,
 *     22 bytes at the chunk's byte 72) when it becomes a run of a larger
 *     class, in the units that the first allocation from it leaves free
 *     (a root object over 2 KiB); a unit whose bit in the run's bitmap
 *     is clear has no contents. Judged at the end only, as free chunks:
 *     an object being allocated from a run has its bit set once its
 *     constructor has run;
 *   - the generation number of a lane's second undo log (the first
 *     extension, kept from one transaction to the next): each commit and
 *     abort increments it without a persist (ulog_clobber_data(): after a
 *     crash the extension is freed, its generation never read;
 *     VALGRIND_SET_CLEAN). A program's transaction that snapshots more
 *     than a lane's own undo log holds gets such an extension;
 *   - the persistent locks (PMEMmutex, PMEMrwlock, PMEMcond: 64 bytes in
 *     an object) libpmemobj was seen to use through its lock functions
 *     (the preload shim), while their first 8 bytes hold the pool's
 *     current run id (or the one before: being initialised): a lock whose
 *     run id is not the pool's is initialised afresh on first use after
 *     pmemobj_open(), so its contents are never read from the file (PMDK
 *     removes them from pmemcheck's mapping when it initialises them).
 *
 * In the pool header and the persistent part of the descriptor, which
 * libpmemobj stores first and persists later, across persists of other
 * data, lines are judged at the end only, never at a point
 * (NTMEM_CHECK_EAGER=1).
 *
 * The pool is recognised by its header ("PMEMOBJ", major 6) at the mapped
 * file's offset 0, and the heap by its signature and each zone's magic; a
 * pool of another format, or a mapping that does not start at its file's
 * first byte, is judged as any other memory.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <string.h>

#include "watch/watch_pmemobj.h"

#define LINE 64u

/* The pool header and descriptor of format 6 (PMDK's obj.h, pool_hdr.h). */
#define POOL_SIG "PMEMOBJ"	/* 8 bytes with its NUL */
#define POOL_MAJOR_OFF 8
#define POOL_MAJOR 6
#define DSC_LANES_OFFSET_OFF (4096 + 1024)
#define DSC_NLANES_OFF (4096 + 1024 + 8)
#define DSC_HEAP_OFFSET_OFF (4096 + 1024 + 16)
#define DSC_HEAP_SIZE_OFF 6176
#define DSC_RUN_ID_OFF 6152
#define DSC_RUNTIME_START 6688	/* offsetof(struct pmemobjpool, addr) */
#define DSC_END 8192		/* sizeof(struct pmemobjpool) */

/* The heap (PMDK's heap_layout.h). */
#define HEAP_SIG "MEMORY_HEAP_HDR"	/* 16 bytes with its NUL */
#define HEAP_HDR_SIZE 1024u
#define ZONE_HDR_SIZE 64u
#define ZONE_MAGIC 0xC3F0A2D2u
#define MAX_CHUNK 65528u		/* UINT16_MAX - 7 */
#define CHUNK_SIZE 262144u
#define CHUNK_HDR_SIZE 8u
#define ZONE_SIZE ((uint64_t)ZONE_HDR_SIZE + \
		   (uint64_t)MAX_CHUNK * (CHUNK_HDR_SIZE + CHUNK_SIZE))
#define ZONE_DATA_OFF ((uint64_t)ZONE_HDR_SIZE + \
		       (uint64_t)MAX_CHUNK * CHUNK_HDR_SIZE)

/*
 * The lanes (PMDK's lane.h): 3 KiB each, three ulogs in a row (internal
 * redo 64 + 192 bytes, external redo 64 + 640, undo 64 + 2112). A ulog's
 * 64-byte header: checksum, next (the file offset of its extension's
 * allocation, which starts at the next cache line: ulog_by_offset()),
 * capacity, gen_num, flags, three unused words that are 0.
 */
#define LANE_SIZE 3072u
#define LANE_UNDO_OFF (256u + 704u)
#define MAX_LANES 65536u
#define ULOG_NEXT_OFF 8u
#define ULOG_CAPACITY_OFF 16u
#define ULOG_GEN_NUM_OFF 24u
#define ULOG_USER_OWNED 1u	/* the only flag */

enum chunk_type {
	CHUNK_FOOTER = 1,
	CHUNK_FREE = 2,
	CHUNK_USED = 3,
	CHUNK_RUN = 4,
};

/* A run: its header (block size, alignment) starts its first chunk, its
 * bitmap follows (a set bit is a unit in use), then its units. */
#define RUN_HDR_SIZE 16u
#define RUN_HDR_VALUES (RUN_HDR_SIZE / 8u)
#define RUN_BITS_PER_VALUE 64u
enum chunk_flag {
	CHUNK_FLAG_COMPACT_HEADER = 0x1,
	CHUNK_FLAG_HEADER_NONE = 0x2,
	CHUNK_FLAG_ALIGNED = 0x4,
	CHUNK_FLAG_FLEX_BITMAP = 0x8,
};
/* The allocation header before an object: legacy, compact. */
#define ALLOC_HDR_LEGACY 64u
#define ALLOC_HDR_COMPACT 16u

struct chunk_hdr {
	uint16_t type;
	uint16_t flags;
	uint32_t size_idx;
};

struct pool {
	uint64_t heap_off, heap_size;
};

/* A PMEMmutex, PMEMrwlock or PMEMcond (_POBJ_CL_SIZE, 8-byte aligned). */
#define LOCK_SIZE 64u
/* The locks seen: an open-addressing set of addresses, never emptied (a
 * lock whose run id went is not taken). */
#define MAX_LOCKS 4096u
static uintptr_t locks[MAX_LOCKS];
static unsigned nlocks;

void watch_obj_lock_seen(uintptr_t lock)
{
	unsigned i = (unsigned)((lock >> 3) % MAX_LOCKS);

	if (!lock || nlocks >= MAX_LOCKS / 2)
		return;		/* full: its lines are judged as any */
	for (; locks[i]; i = (i + 1) % MAX_LOCKS)
		if (locks[i] == lock)
			return;
	locks[i] = lock;
	nlocks++;
}

static bool lock_known(uintptr_t lock)
{
	for (unsigned i = (unsigned)((lock >> 3) % MAX_LOCKS); locks[i];
	     i = (i + 1) % MAX_LOCKS)
		if (locks[i] == lock)
			return true;
	return false;
}

/* Whether the mapping starts with a format-6 pool's header. */
static bool pool_hdr(watch_obj_read_fn read, void *ctx)
{
	char sig[sizeof(POOL_SIG)];
	uint32_t major;

	return read(ctx, 0, sig, sizeof(sig)) &&
	       !memcmp(sig, POOL_SIG, sizeof(sig)) &&
	       read(ctx, POOL_MAJOR_OFF, &major, sizeof(major)) &&
	       major == POOL_MAJOR;
}

/* Whether the mapping holds a format-6 pool with a heap; *@p the heap. */
static bool pool_of(watch_obj_read_fn read, void *ctx, struct pool *p)
{
	char hsig[sizeof(HEAP_SIG)];

	if (!pool_hdr(read, ctx) ||
	    !read(ctx, DSC_HEAP_OFFSET_OFF, &p->heap_off, sizeof(p->heap_off)) ||
	    !read(ctx, DSC_HEAP_SIZE_OFF, &p->heap_size, sizeof(p->heap_size)))
		return false;
	return p->heap_off >= DSC_END && p->heap_size > HEAP_HDR_SIZE &&
	       read(ctx, p->heap_off, hsig, sizeof(hsig)) &&
	       !memcmp(hsig, HEAP_SIG, sizeof(hsig));
}

/* Zone @z's file offset and chunk count; false if it is not one. */
static bool zone_of(watch_obj_read_fn read, void *ctx, const struct pool *p,
		    uint64_t z, uint64_t *zoff, uint32_t *nchunks)
{
	uint32_t hdr[2];

	*zoff = p->heap_off + HEAP_HDR_SIZE + z * ZONE_SIZE;
	return *zoff + ZONE_DATA_OFF <= p->heap_off + p->heap_size &&
	       read(ctx, *zoff, hdr, sizeof(hdr)) && hdr[0] == ZONE_MAGIC &&
	       hdr[1] <= MAX_CHUNK && (*nchunks = hdr[1]) > 0;
}

static bool chunk_hdr(watch_obj_read_fn read, void *ctx, uint64_t zoff,
		      uint32_t c, struct chunk_hdr *h)
{
	return read(ctx, zoff + ZONE_HDR_SIZE + (uint64_t)c * CHUNK_HDR_SIZE,
		    h, sizeof(*h));
}

/* Bytes [lo, hi) of the line (file offsets) are libpmemobj's own. */
static void take(uint64_t off, uint64_t lo, uint64_t hi, const uint8_t *now,
		 uint8_t *image, uint8_t *wbdata)
{
	lo = lo > off ? lo - off : 0;
	hi = hi < off + LINE ? hi - off : LINE;
	if (lo < hi) {
		memcpy(image + lo, now + lo, hi - lo);
		memcpy(wbdata + lo, now + lo, hi - lo);
	}
}

/* Chunk header slots of the line that hold a footer of their block. */
static bool footers(watch_obj_read_fn read, void *ctx, uint64_t zoff,
		    uint32_t nchunks, uint64_t off, const uint8_t *now,
		    uint8_t *image, uint8_t *wbdata)
{
	uint64_t first = zoff + ZONE_HDR_SIZE;
	bool took = false;

	for (unsigned i = 0; i < LINE; i += CHUNK_HDR_SIZE) {
		uint64_t slot = off + i;
		struct chunk_hdr f, owner;
		uint32_t c;

		if (slot < first || slot >= first + (uint64_t)nchunks * CHUNK_HDR_SIZE ||
		    !memcmp(now + i, image + i, CHUNK_HDR_SIZE))
			continue;
		memcpy(&f, now + i, sizeof(f));
		c = (uint32_t)((slot - first) / CHUNK_HDR_SIZE);
		/* A footer repeats the header of the block it ends. */
		if (f.type != CHUNK_FOOTER || f.size_idx < 2 || f.size_idx > c + 1 ||
		    !chunk_hdr(read, ctx, zoff, c + 1 - f.size_idx, &owner) ||
		    (owner.type != CHUNK_FREE && owner.type != CHUNK_USED) ||
		    owner.size_idx != f.size_idx)
			continue;
		take(off, slot, slot + CHUNK_HDR_SIZE, now, image, wbdata);
		took = true;
	}
	return took;
}

/* The block chunk @c of the zone belongs to: its first chunk *@first,
 * its header *@h. */
static bool block_of(watch_obj_read_fn read, void *ctx, uint64_t zoff,
		     uint32_t nchunks, uint32_t c, uint32_t *first,
		     struct chunk_hdr *h)
{
	/* Headers are walked from the zone's first: a block's size says
	 * where the next one starts. */
	for (uint32_t i = 0; i < nchunks;) {
		if (!chunk_hdr(read, ctx, zoff, i, h) || !h->size_idx)
			return false;
		if (c < i + h->size_idx) {
			*first = i;
			return true;
		}
		i += h->size_idx;
	}
	return false;
}

/* The units of a run (memblock_run_bitmap() of PMDK 1.12, flexible
 * bitmaps only: the only kind format 6 makes). */
struct run {
	uint64_t bitmap;	/* file offset of its bitmap */
	uint64_t data;		/* of its first unit */
	uint64_t unit;		/* unit size */
	uint64_t nunits;	/* units that can be allocated */
};

/* The run whose first chunk is at file offset @roff, its header @h; false
 * if its layout is not one known (the line is then judged as any). */
static bool run_of(watch_obj_read_fn read, void *ctx, uint64_t roff,
		   uintptr_t base, const struct chunk_hdr *h, struct run *r)
{
	uint64_t rhdr[2], content, values, bsize, hsize, at;

	if (!(h->flags & CHUNK_FLAG_FLEX_BITMAP) ||
	    !read(ctx, roff, rhdr, sizeof(rhdr)) || !rhdr[0])
		return false;
	r->unit = rhdr[0];
	content = (uint64_t)h->size_idx * CHUNK_SIZE - RUN_HDR_SIZE;
	if (r->unit > content)
		return false;
	/* Enough values for every unit, padded so that the units start
	 * on a cache line; then the units that fit beside them. */
	values = (content / r->unit + RUN_BITS_PER_VALUE - 1) /
		 RUN_BITS_PER_VALUE;
	values = (values + RUN_HDR_VALUES + 7u) / 8u * 8u - RUN_HDR_VALUES;
	bsize = values * 8u;
	if (bsize >= content)
		return false;
	r->nunits = (content - bsize) / r->unit - (rhdr[1] ? 1u : 0u);
	r->bitmap = roff + RUN_HDR_SIZE;
	r->data = r->bitmap + bsize;
	if (h->flags & CHUNK_FLAG_ALIGNED) {
		/* The objects, after their headers, are aligned in memory. */
		if (!rhdr[1] || (rhdr[1] & (rhdr[1] - 1)))
			return false;
		hsize = h->flags & CHUNK_FLAG_COMPACT_HEADER ? ALLOC_HDR_COMPACT
			: h->flags & CHUNK_FLAG_HEADER_NONE ? 0 : ALLOC_HDR_LEGACY;
		at = base + r->data + hsize;
		r->data += ((at + rhdr[1] - 1) & ~(rhdr[1] - 1)) - at;
	}
	return true;
}

/*
 * The bytes of the line in units of the run that its bitmap says are
 * free (or that no allocation can have: past its last unit), and differ
 * from @image: taken, or only told of when !@take_them.
 */
static bool free_units(watch_obj_read_fn read, void *ctx, const struct run *r,
		       uint64_t end, uint64_t off, const uint8_t *now,
		       uint8_t *image, uint8_t *wbdata, bool take_them)
{
	uint64_t lo = off > r->data ? off : r->data, hi = off + LINE;
	bool took = false;

	if (hi > end)
		hi = end;
	for (uint64_t u = lo >= hi ? 0 : (lo - r->data) / r->unit;
	     lo < hi; u++) {
		uint64_t ustart = r->data + u * r->unit, uend = ustart + r->unit;
		uint64_t value;

		if (uend > hi)
			uend = hi;
		if (u < r->nunits &&
		    (!read(ctx, r->bitmap + u / RUN_BITS_PER_VALUE * 8u, &value,
			   sizeof(value)) ||
		     (value >> (u % RUN_BITS_PER_VALUE) & 1u))) {
			lo = uend;
			continue;	/* in use, or unknown */
		}
		if (memcmp(now + (lo - off), image + (lo - off), uend - lo)) {
			if (take_them)
				take(off, lo, uend, now, image, wbdata);
			took = true;
		}
		lo = uend;
	}
	return took;
}

/*
 * Whether the line at file offset @off (a line's start) is the header of
 * the second ulog of a lane's undo log: a ulog's header (a capacity, no
 * flag but ULOG_USER_OWNED, its unused words 0), then, only for such a
 * line, one that some lane's undo log names as its extension (a read per
 * lane: the header's shape keeps a fence's other changed lines from it).
 */
static bool second_undo_ulog(watch_obj_read_fn read, void *ctx, uint64_t off)
{
	/* From the capacity on: capacity, gen_num, flags, unused[3]. */
	uint64_t h[6], lanes, nlanes, next;

	if (off % LINE ||
	    !read(ctx, off + ULOG_CAPACITY_OFF, h, sizeof(h)) || !h[0] ||
	    (h[2] & ~(uint64_t)ULOG_USER_OWNED) || (h[3] | h[4] | h[5]) ||
	    !read(ctx, DSC_LANES_OFFSET_OFF, &lanes, sizeof(lanes)) ||
	    !read(ctx, DSC_NLANES_OFF, &nlanes, sizeof(nlanes)) ||
	    nlanes > MAX_LANES)
		return false;
	for (uint64_t i = 0; i < nlanes; i++)
		if (read(ctx, lanes + i * LANE_SIZE + LANE_UNDO_OFF + ULOG_NEXT_OFF,
			 &next, sizeof(next)) && next &&
		    (next + LINE - 1) / LINE * LINE == off)
			return true;
	return false;
}

/* The live locks libpmemobj used that overlap the line. */
static bool live_locks(watch_obj_read_fn read, void *ctx, uint64_t off,
		       uintptr_t addr, const uint8_t *now, uint8_t *image,
		       uint8_t *wbdata)
{
	uint64_t run_id, id;
	bool took = false;

	if (!nlocks || !read(ctx, DSC_RUN_ID_OFF, &run_id, sizeof(run_id)))
		return false;
	for (uintptr_t l = addr - LOCK_SIZE + 8; l < addr + LINE; l += 8) {
		uint64_t loff = off - (addr - l);

		if (!lock_known(l) || !read(ctx, loff, &id, sizeof(id)) ||
		    (id != run_id && id + 1 != run_id))
			continue;
		take(off, loff, loff + LOCK_SIZE, now, image, wbdata);
		took = true;
	}
	return took;
}

enum watch_obj_own watch_obj_unflushed(watch_obj_read_fn read, void *ctx,
				       uint64_t off, uintptr_t addr,
				       const uint8_t *now,
				       uint8_t *image, uint8_t *wbdata,
				       enum watch_obj_when when)
{
	struct pool p;
	uint64_t z, zoff, data, boff;
	uint32_t nchunks, first;
	struct chunk_hdr h;
	struct run run;

	if (off < DSC_END) {
		if (!pool_hdr(read, ctx))
			return WATCH_OBJ_NONE;
		take(off, DSC_RUNTIME_START, DSC_END, now, image, wbdata);
		/*
		 * The header and the persistent descriptor: libpmemobj
		 * stores them first and persists them later, across other
		 * persists (pmemobj_create(), each open's run id), so only
		 * the end judges them.
		 */
		if (memcmp(now, image, LINE))
			return when == WATCH_OBJ_POINT ? WATCH_OBJ_LATER
						       : WATCH_OBJ_NONE;
		return WATCH_OBJ_TAKEN;
	}
	if (!pool_of(read, ctx, &p))
		return WATCH_OBJ_NONE;
	if (off < p.heap_off + HEAP_HDR_SIZE || off >= p.heap_off + p.heap_size)
		return WATCH_OBJ_NONE;
	/* Locks are in objects, which are in chunks; a taken lock may
	 * leave the rest of the line to judge. */
	if (live_locks(read, ctx, off, addr, now, image, wbdata) &&
	    !memcmp(now, image, LINE))
		return WATCH_OBJ_TAKEN;
	if (memcmp(now + ULOG_GEN_NUM_OFF, image + ULOG_GEN_NUM_OFF, 8) &&
	    second_undo_ulog(read, ctx, off)) {
		take(off, off + ULOG_GEN_NUM_OFF, off + ULOG_GEN_NUM_OFF + 8, now,
		     image, wbdata);
		if (!memcmp(now, image, LINE))
			return WATCH_OBJ_TAKEN;
	}
	z = (off - p.heap_off - HEAP_HDR_SIZE) / ZONE_SIZE;
	if (!zone_of(read, ctx, &p, z, &zoff, &nchunks))
		return WATCH_OBJ_NONE;
	data = zoff + ZONE_DATA_OFF;
	if (off < data)
		return footers(read, ctx, zoff, nchunks, off, now, image, wbdata)
			? WATCH_OBJ_TAKEN : WATCH_OBJ_NONE;
	if ((off - data) / CHUNK_SIZE >= nchunks ||
	    !block_of(read, ctx, zoff, nchunks,
		      (uint32_t)((off - data) / CHUNK_SIZE), &first, &h))
		return WATCH_OBJ_NONE;
	boff = data + (uint64_t)first * CHUNK_SIZE;
	if (h.type == CHUNK_RUN) {
		if (first + h.size_idx > nchunks ||
		    !run_of(read, ctx, boff, addr - off, &h, &run) ||
		    !free_units(read, ctx, &run, boff + h.size_idx * CHUNK_SIZE,
				off, now, image, wbdata,
				when == WATCH_OBJ_END))
			return WATCH_OBJ_NONE;
		return when == WATCH_OBJ_POINT ? WATCH_OBJ_LATER
					       : WATCH_OBJ_TAKEN;
	}
	if (h.type != CHUNK_FREE)
		return WATCH_OBJ_NONE;
	if (when == WATCH_OBJ_POINT)
		return WATCH_OBJ_LATER;
	take(off, off, off + LINE, now, image, wbdata);
	return WATCH_OBJ_TAKEN;
}

bool watch_obj_in_chunks(watch_obj_read_fn read, void *ctx, uint64_t off)
{
	struct pool p;
	uint64_t zoff;
	uint32_t nchunks;

	if (!pool_of(read, ctx, &p) || off < p.heap_off + HEAP_HDR_SIZE ||
	    off >= p.heap_off + p.heap_size ||
	    !zone_of(read, ctx, &p, (off - p.heap_off - HEAP_HDR_SIZE) / ZONE_SIZE,
		     &zoff, &nchunks))
		return false;
	return off >= zoff + ZONE_DATA_OFF &&
	       off < zoff + ZONE_DATA_OFF + (uint64_t)nchunks * CHUNK_SIZE;
}

/*
 * Whether [off, off + len) holds no byte of a zone's chunks: a chunk's
 * data is at least 256 KiB, so a range with neither end in chunks has
 * none in between (@len is at most a page).
 */
bool watch_obj_metadata(watch_obj_read_fn read, void *ctx, uint64_t off,
			uint64_t len)
{
	struct pool p;

	return len && off + len > off && pool_of(read, ctx, &p) &&
	       off + len <= p.heap_off + p.heap_size &&
	       !watch_obj_in_chunks(read, ctx, off) &&
	       !watch_obj_in_chunks(read, ctx, off + len - 1);
}

/* --- whose write-backs ------------------------------------------------- */

/* Per code address: whether it is in libpmemobj ((pc << 2) | 2 | yes). */
#define PC_CACHE 1024
static uintptr_t pc_cache[PC_CACHE];

static bool in_pmemobj(const void *pc)
{
	uintptr_t a = (uintptr_t)pc, slot = (a >> 2) % PC_CACHE;
	uintptr_t c = __atomic_load_n(&pc_cache[slot], __ATOMIC_RELAXED);
	const char *base;
	Dl_info info;
	bool yes;

	if (c && c >> 2 == a)
		return c & 1;
	yes = dladdr(pc, &info) && info.dli_fname &&
	      (base = strrchr(info.dli_fname, '/'), base = base ? base + 1
							      : info.dli_fname,
	       !strncmp(base, "libpmemobj.so", strlen("libpmemobj.so")));
	__atomic_store_n(&pc_cache[slot], (a << 2) | 2 | yes, __ATOMIC_RELAXED);
	return yes;
}

const void *watch_obj_entry(void *const *frames, int n)
{
	const void *entry = NULL;

	for (int i = 0; i < n && in_pmemobj(frames[i]); i++)
		entry = frames[i];
	return entry;
}

bool watch_obj_entry_own(const void *entry)
{
	/* What a program calls to make its own stores durable. */
	static const char *const asked[] = {
		"pmemobj_persist", "pmemobj_flush", "pmemobj_drain",
		"pmemobj_xpersist", "pmemobj_xflush", "pmemobj_memcpy_persist",
		"pmemobj_memset_persist", "pmemobj_memcpy", "pmemobj_memmove",
		"pmemobj_memset",
	};
	Dl_info info;

	if (!dladdr(entry, &info) || !info.dli_sname)
		return true;	/* an internal function */
	for (size_t i = 0; i < sizeof(asked) / sizeof(*asked); i++)
		if (!strcmp(info.dli_sname, asked[i]))
			return false;
	return true;
}
