// SPDX-License-Identifier: MIT
/*
 * diff_pmem2.c - libpmem2's part of dropin_diff (diff.h).
 *
 * Each thread has two files of its own (one a page and 100 bytes longer
 * than whole pages), open read-write and one also read-only, each with a
 * model of its bytes, up to six live maps, and a reservation of its own.
 * Its calls: sources of a descriptor or of anonymous memory (sizes 0 and
 * odd ones too) and their size, alignment, device and bad blocks;
 * configs with every granularity, offsets and lengths aligned, not, past
 * the end, both sharings and protections, and invalid values of each;
 * pmem2_map_new() into free address space and into a reservation,
 * pmem2_map_delete(), pmem2_map_from_existing() (twice over one range
 * too); writes through each map's persist, flush + drain, memcpy,
 * memmove and memset functions with every flag; pmem2_deep_flush()
 * inside and outside a map; a reservation made, searched, shrunk at its
 * end (PMDK 1.12.1 shrinks the start wrongly) and deleted, with and
 * without maps in it. Shared maps of a file are compared with the file's
 * model when made and before they go, and every write is read back.
 *
 * One reservation is shared: each thread maps its first file into its
 * own slot of it, finds it there and deletes it, while the others do the
 * same in theirs, and maps and deletes maps of its own outside it, so
 * the library's registry of maps is changed by every thread at once.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include <libpmem2.h>

#include "diff.h"

#define P2_FILES 2
#define P2_MAPS 6
#define PAGE 4096
#define SLOT (64 << 10)		/* each thread's part of the shared reservation */
#define WRITE_MAX (32 << 10)

/* The file sizes: whole pages, and 16 pages and 100 bytes. */
static const size_t file_size[P2_FILES] = { 16 * PAGE, 16 * PAGE + 100 };

enum src_kind { SRC_FILE, SRC_FILE_RDONLY, SRC_ANON };

struct p2file {
	char path[PATH_MAX];
	int fd, fd_ro;
	unsigned char *model;	/* the file's bytes */
};

struct p2map {
	struct pmem2_map *map;	/* NULL: a free slot */
	int file;		/* the file shared-mapped, or -1 */
	size_t off, len;	/* of the file, in bytes */
	bool writable;
	bool private_file;	/* a private map of a file: own pages */
	unsigned char *own;	/* the model of an anonymous or private map */
	void *region;		/* pmem2_map_from_existing(): our mmap() */
	size_t region_len;
	int rsv;		/* 0 none, 1 the thread's, 2 the shared one */
	/*
	 * pmem2_deep_flush() answers by what the source was, which PMDK
	 * 1.12.1 does not know of a CACHE_LINE map from
	 * pmem2_map_from_existing() of anonymous memory (it reads a field
	 * of the source it never set): not asked there.
	 */
	bool no_deep_flush;
};

struct diff_pmem2 {
	struct p2file f[P2_FILES];
	struct p2map m[P2_MAPS];
	struct pmem2_vm_reservation *rsv;	/* the thread's own */
	int shared_slot;	/* the map in the shared reservation, or -1 */
};

struct diff_pmem2_shared {
	struct pmem2_vm_reservation *rsv;
};

/* A map slot of @t, counting from a random one: a live one or a free one. */
static int pick_map(struct diff_thread *t, bool live)
{
	unsigned start = diff_below(t, P2_MAPS);

	for (unsigned i = 0; i < P2_MAPS; i++) {
		unsigned k = (start + i) % P2_MAPS;

		if ((t->pmem2->m[k].map != NULL) == live)
			return (int)k;
	}
	return -1;
}

/* The bytes @m's model says it holds. */
static const unsigned char *map_model(struct diff_thread *t,
				      const struct p2map *m)
{
	return m->own ? m->own : t->pmem2->f[m->file].model + m->off;
}

/* How many of @m's bytes have a model (a file's map may end past it). */
static size_t modelled(struct diff_thread *t, const struct p2map *m)
{
	size_t fsize;

	if (m->own || m->file < 0)
		return m->len;
	fsize = file_size[m->file];
	(void)t;
	return m->off >= fsize ? 0 : fsize - m->off < m->len ?
				 fsize - m->off : m->len;
}

static void check_map(struct diff_thread *t, int k)
{
	struct p2map *m = &t->pmem2->m[k];
	char what[64];

	/* A private map's untouched pages follow the file: not compared. */
	if (m->private_file)
		return;
	snprintf(what, sizeof(what), "libpmem2 map %d", k);
	(void)diff_same(t, pmem2_map_get_address(m->map), map_model(t, m),
			modelled(t, m), what);
}

static void forget_map(struct diff_thread *t, int k)
{
	struct p2map *m = &t->pmem2->m[k];

	free(m->own);
	if (m->region)
		munmap(m->region, m->region_len);
	if (t->pmem2->shared_slot == k)
		t->pmem2->shared_slot = -1;
	memset(m, 0, sizeof(*m));
}

/* --- sources and configs --------------------------------------------------- */

/* A source of one of the kinds; its description into @what. 0 or a code. */
static int new_source(struct diff_thread *t, struct pmem2_source **src,
		      enum src_kind kind, unsigned file, size_t anon,
		      char *what, size_t len)
{
	int ret;

	if (kind == SRC_ANON) {
		ret = pmem2_source_from_anon(src, anon);
		snprintf(what, len, "anon %zu", anon);
	} else {
		ret = pmem2_source_from_fd(src, kind == SRC_FILE ?
					   t->pmem2->f[file].fd :
					   t->pmem2->f[file].fd_ro);
		snprintf(what, len, "file %u%s", file,
			 kind == SRC_FILE ? "" : " rdonly");
	}
	t->calls++;
	if (ret)
		diff_trace(t, "pmem2 source %s -> %d", what, ret);
	return ret;
}

static const size_t anon_sizes[] = { 0, 4097, 16 * PAGE, 64 * PAGE };
static const size_t offsets[] = { 0, 0, 0, PAGE, 2 * PAGE, 100, 32 * PAGE };
static const size_t lengths[] = { 0, 0, PAGE, 4 * PAGE, 100, 1ull << 30 };

/*
 * How map_new() sets its config up: every way at random, the thread's
 * slot of the shared reservation, or the plain way (a whole file,
 * shared, PAGE, into free address space: what most programs do, and
 * the same size in every thread, so the address one unmaps is the
 * next one another maps).
 */
enum map_how { MAP_RANDOM, MAP_SHARED_SLOT, MAP_PLAIN };

/*
 * pmem2_map_new() into free slot @k: a source, a config set up one of
 * the ways (each setter's result traced), into no reservation, the
 * thread's or its slot of the shared one.
 */
static void map_new(struct diff_thread *t, int k, enum map_how mh)
{
	struct diff_pmem2 *p = t->pmem2;
	struct p2map *m = &p->m[k];
	bool fixed = mh != MAP_RANDOM, shared = mh == MAP_SHARED_SLOT;
	enum src_kind kind = fixed ? SRC_FILE : (enum src_kind)diff_below(t, 3);
	unsigned file = fixed ? 0 : diff_below(t, P2_FILES);
	size_t anon = anon_sizes[diff_below(t, 4)];
	size_t off = fixed ? 0 : offsets[diff_below(t, 7)];
	size_t len = shared ? SLOT : fixed ? 0 : lengths[diff_below(t, 6)];
	unsigned gran = fixed ? PMEM2_GRANULARITY_PAGE : diff_below(t, 5);
	unsigned sharing = fixed ? 0 : diff_below(t, 8);
	unsigned prot = fixed ? 0 : diff_below(t, 8);
	int rsv = shared ? 2 : !fixed && p->rsv && diff_below(t, 3) == 0 ? 1 : 0;
	size_t rsv_off = shared ? (size_t)t->id * SLOT :
			 (size_t)diff_below(t, 4) * 16 * PAGE +
			 (diff_below(t, 8) ? 0 : 100);
	struct pmem2_source *src = NULL;
	struct pmem2_config *cfg = NULL;
	struct pmem2_map *map = NULL;
	char what[64];
	int ret;

	if (new_source(t, &src, kind, file, anon, what, sizeof(what)))
		return;
	ret = pmem2_config_new(&cfg);
	t->calls++;
	if (ret) {
		diff_trace(t, "pmem2 config_new -> %d", ret);
		goto out;
	}
	/* 3: none set (GRANULARITY_NOT_SET), 4: a value PMDK refuses. */
	if (gran < 4 && gran != 3)
		ret = pmem2_config_set_required_store_granularity(cfg, gran);
	else if (gran == 4)
		ret = pmem2_config_set_required_store_granularity(cfg, 7);
	t->calls += gran != 3;
	diff_trace(t, "pmem2 cfg gran %u -> %d", gran, gran == 3 ? 0 : ret);
	if (off) {
		ret = pmem2_config_set_offset(cfg, off);
		t->calls++;
		diff_trace(t, "pmem2 cfg offset %zu -> %d", off, ret);
	}
	if (len) {
		ret = pmem2_config_set_length(cfg, len);
		t->calls++;
		diff_trace(t, "pmem2 cfg length %zu -> %d", len, ret);
	}
	if (sharing >= 6) {
		ret = pmem2_config_set_sharing(cfg, sharing == 6 ?
					       PMEM2_PRIVATE : 5);
		t->calls++;
		diff_trace(t, "pmem2 cfg sharing %u -> %d", sharing, ret);
	}
	if (prot >= 6) {
		ret = pmem2_config_set_protection(cfg, prot == 6 ?
						  PMEM2_PROT_READ : 1);
		t->calls++;
		diff_trace(t, "pmem2 cfg prot %u -> %d", prot, ret);
	}
	if (rsv) {
		ret = pmem2_config_set_vm_reservation(cfg, rsv == 1 ? p->rsv :
						      t->run->pmem2->rsv,
						      rsv_off);
		t->calls++;
		diff_trace(t, "pmem2 cfg rsv %d offset %zu -> %d", rsv, rsv_off,
			   ret);
	}
	ret = pmem2_map_new(&map, cfg, src);
	t->calls++;
	if (ret) {
		diff_trace(t, "pmem2 map_new %s -> %d", what, ret);
		goto out;
	}
	diff_trace(t, "pmem2 map_new %s -> 0 size %zu gran %d", what,
		   pmem2_map_get_size(map), pmem2_map_get_store_granularity(map));
	t->calls += 2;
	*m = (struct p2map){
		.map = map, .file = kind == SRC_ANON ? -1 : (int)file,
		.off = off, .len = pmem2_map_get_size(map),
		.writable = prot != 6, .private_file = sharing == 6 &&
						       kind != SRC_ANON,
		.rsv = rsv,
	};
	if (m->private_file) {
		size_t n = modelled(t, m);

		(void)diff_same(t, pmem2_map_get_address(map),
				p->f[file].model + off, n,
				"libpmem2 private map, new");
		/* Its own pages from here on: a model of its own. */
		m->own = calloc(1, m->len ? m->len : 1);
		if (!m->own)
			exit(1);
		memcpy(m->own, p->f[file].model + off, n);
		m->len = n;
	} else if (kind == SRC_ANON) {
		m->own = calloc(1, m->len ? m->len : 1);
		if (!m->own)
			exit(1);
	}
	check_map(t, k);
	if (shared)
		p->shared_slot = k;
out:
	if (cfg)
		pmem2_config_delete(&cfg);
	pmem2_source_delete(&src);
	t->calls += 2;
}

static void map_delete(struct diff_thread *t, int k)
{
	struct p2map *m = &t->pmem2->m[k];
	int ret;

	check_map(t, k);
	ret = pmem2_map_delete(&m->map);
	t->calls++;
	diff_trace(t, "pmem2 map_delete %d -> %d%s", k, ret,
		   ret == 0 && m->map ? " map not NULL" : "");
	if (ret == 0)
		forget_map(t, k);
}

/*
 * pmem2_map_from_existing() over an anonymous region of our own. Never
 * of length 0: PMDK 1.12.1 cannot find such a map again to delete it
 * (PMEM2_E_MAPPING_NOT_FOUND, and it is never freed), where ntmem
 * deletes it (ntmem-libpmem2(7)).
 */
static void map_existing(struct diff_thread *t, int k)
{
	struct p2map *m = &t->pmem2->m[k];
	size_t len = 16 * PAGE;
	unsigned gran = diff_below(t, 3);
	bool again = diff_below(t, 2);
	struct pmem2_source *src = NULL;
	struct pmem2_map *map = NULL, *second = NULL;
	char what[64];
	void *region;
	int ret;

	if (new_source(t, &src, SRC_ANON, 0, 16 * PAGE, what, sizeof(what)))
		return;
	region = mmap(NULL, 16 * PAGE, PROT_READ | PROT_WRITE,
		      MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	if (region == MAP_FAILED)
		exit(1);
	ret = pmem2_map_from_existing(&map, src, region, len, gran);
	t->calls++;
	diff_trace(t, "pmem2 from_existing len %zu gran %u -> %d", len, gran,
		   ret);
	if (ret) {
		munmap(region, 16 * PAGE);
		goto out;
	}
	if (again) {
		second = map;
		ret = pmem2_map_from_existing(&second, src, region, len, gran);
		t->calls++;
		/* PMDK leaves the pointer as it was when it refuses. */
		diff_trace(t, "pmem2 from_existing again -> %d %s", ret,
			   second == map ? "map kept" :
			   second ? "other map" : "NULL");
		if (ret == 0 && second != map)
			(void)pmem2_map_delete(&second);
	}
	/*
	 * Not written through at PAGE granularity: PMDK 1.12.1's persist
	 * there walks the maps by their reserved length, which is 0 for
	 * such a map, and spins in msync() of 0 bytes forever.
	 */
	*m = (struct p2map){
		.map = map, .file = -1, .len = len,
		.writable = gran != PMEM2_GRANULARITY_PAGE,
		.region = region, .region_len = 16 * PAGE,
		.no_deep_flush = gran == PMEM2_GRANULARITY_CACHE_LINE,
	};
	m->own = calloc(1, 16 * PAGE);
	if (!m->own)
		exit(1);
out:
	pmem2_source_delete(&src);
	t->calls++;
}

/* --- writes ---------------------------------------------------------------- */

static void map_write(struct diff_thread *t, int k)
{
	static const unsigned flag_bits[] = {
		PMEM2_F_MEM_NODRAIN, PMEM2_F_MEM_NONTEMPORAL,
		PMEM2_F_MEM_TEMPORAL, PMEM2_F_MEM_WC, PMEM2_F_MEM_WB,
		PMEM2_F_MEM_NOFLUSH,
	};
	struct p2map *m = &t->pmem2->m[k];
	size_t size = modelled(t, m), off, len, from;
	unsigned char *base, *model, *src;
	unsigned how, flags = 0;
	int c;
	void *r;

	if (!m->writable || size == 0)
		return;
	base = pmem2_map_get_address(m->map);
	t->calls++;
	model = (unsigned char *)map_model(t, m);
	off = diff_rand(t) % size;
	len = 1 + diff_rand(t) % (size - off < WRITE_MAX ? size - off :
				  WRITE_MAX);
	from = diff_rand(t) % (size - len + 1);
	how = diff_below(t, 6);
	c = (int)diff_below(t, 256);
	for (unsigned b = 0; b < sizeof(flag_bits) / sizeof(flag_bits[0]); b++)
		if (diff_below(t, 3) == 0)
			flags |= flag_bits[b];
	src = malloc(len);
	if (!src)
		exit(1);
	diff_fill(src, len, diff_rand(t));
	/* A private map's pages not yet written follow the file: no moves. */
	if (how == 4 && m->private_file)
		how = 3;
	r = base + off;
	switch (how) {
	case 0:
		memcpy(base + off, src, len);
		pmem2_get_persist_fn(m->map)(base + off, len);
		break;
	case 1:
		memcpy(base + off, src, len);
		pmem2_get_flush_fn(m->map)(base + off, len);
		pmem2_get_drain_fn(m->map)();
		t->calls += 2;
		break;
	case 2:
	case 3:
		r = pmem2_get_memcpy_fn(m->map)(base + off, src, len, flags);
		break;
	case 4:
		r = pmem2_get_memmove_fn(m->map)(base + off, base + from, len,
						 flags);
		memmove(model + off, model + from, len);
		break;
	default:
		r = pmem2_get_memset_fn(m->map)(base + off, c, len, flags);
		memset(model + off, c, len);
		break;
	}
	t->calls += 2;
	if (how <= 3)
		memcpy(model + off, src, len);
	diff_trace(t, "pmem2 write %d how %u off %zu len %zu flags %#x -> %s",
		   k, how, off, len, flags, r == base + off ? "dst" : "other");
	(void)diff_same(t, base + off, model + off, len, "libpmem2 write");
	free(src);
}

static void map_deep_flush(struct diff_thread *t, int k)
{
	struct p2map *m = &t->pmem2->m[k];
	char *base = pmem2_map_get_address(m->map);
	size_t off = m->len ? diff_rand(t) % m->len : 0;
	size_t len = m->len - off;
	unsigned how = diff_below(t, 4);
	int ret;

	if (m->no_deep_flush)
		return;
	/* 3: a range that starts before the map (DEEP_FLUSH_RANGE). */
	if (how == 3)
		ret = pmem2_deep_flush(m->map, base - PAGE, PAGE);
	else
		ret = pmem2_deep_flush(m->map, base + off, len);
	t->calls += 2;
	diff_trace(t, "pmem2 deep_flush %d how %u -> %d", k, how, ret);
}

/* --- sources, reservations ------------------------------------------------- */

static void source_query(struct diff_thread *t)
{
	enum src_kind kind = (enum src_kind)diff_below(t, 3);
	size_t anon = anon_sizes[diff_below(t, 4)], size = 7, align = 7;
	struct pmem2_source *src = NULL;
	struct pmem2_badblock_context *bb = NULL;
	uint64_t usc = 5;
	char what[64];
	int a, b, c;

	if (new_source(t, &src, kind, diff_below(t, P2_FILES), anon, what,
		       sizeof(what)))
		return;
	a = pmem2_source_size(src, &size);
	b = pmem2_source_alignment(src, &align);
	c = pmem2_source_device_usc(src, &usc);
	/*
	 * The count only where it was given: when it fails PMDK 1.12.1 has
	 * set it to 0, ntmem leaves it as it was (ntmem-libpmem2(7)).
	 */
	diff_trace(t, "pmem2 source %s size %d %zu alignment %d %zu usc %d %llu",
		   what, a, size, b, align, c, c ? 0ull : (unsigned long long)usc);
	a = pmem2_badblock_context_new(&bb, src);
	t->calls += 4;
	if (a == 0) {
		struct pmem2_badblock one = { 0 };

		b = pmem2_badblock_next(bb, &one);
		pmem2_badblock_context_delete(&bb);
		t->calls += 2;
		diff_trace(t, "pmem2 badblocks %s -> 0, next %d", what, b);
	} else {
		diff_trace(t, "pmem2 badblocks %s -> %d", what, a);
	}
	pmem2_source_delete(&src);
	t->calls++;
}

/* Index of @map in @t's table, or -1 (a map that is not the thread's). */
static int index_of(struct diff_thread *t, struct pmem2_map *map)
{
	for (int k = 0; k < P2_MAPS; k++)
		if (map && t->pmem2->m[k].map == map)
			return k;
	return -1;
}

static void rsv_op(struct diff_thread *t)
{
	static const size_t sizes[] = { 64 * PAGE, 256 * PAGE, 4097 };
	struct diff_pmem2 *p = t->pmem2;
	struct pmem2_map *found = NULL;
	size_t size;
	int ret;

	if (!p->rsv) {
		size = sizes[diff_below(t, 3)];
		ret = pmem2_vm_reservation_new(&p->rsv, NULL, size);
		t->calls++;
		diff_trace(t, "pmem2 rsv_new %zu -> %d", size, ret);
		if (ret)
			p->rsv = NULL;
		return;
	}
	size = pmem2_vm_reservation_get_size(p->rsv);
	t->calls++;
	switch (diff_below(t, 6)) {
	case 0: { /* the maps it holds, by offset */
		size_t off = (size_t)diff_below(t, 4) * 16 * PAGE;

		ret = pmem2_vm_reservation_map_find(p->rsv, off, PAGE, &found);
		t->calls++;
		diff_trace(t, "pmem2 rsv_find %zu -> %d map %d", off, ret,
			   ret ? -1 : index_of(t, found));
		break;
	}
	case 1:
		ret = pmem2_vm_reservation_map_find_first(p->rsv, &found);
		t->calls++;
		diff_trace(t, "pmem2 rsv_first -> %d map %d", ret,
			   ret ? -1 : index_of(t, found));
		break;
	case 2: /* the last page, a page that is not the end, a bad offset */
	case 3: {
		unsigned how = diff_below(t, 4);
		size_t off = how == 0 ? size - PAGE : how == 1 ? 100 :
			     how == 2 ? PAGE : 0;
		size_t len = how == 3 ? size : PAGE;

		ret = pmem2_vm_reservation_shrink(p->rsv, off, len);
		t->calls++;
		diff_trace(t, "pmem2 rsv_shrink how %u -> %d size %zu", how,
			   ret, pmem2_vm_reservation_get_size(p->rsv));
		t->calls++;
		break;
	}
	default:
		ret = pmem2_vm_reservation_delete(&p->rsv);
		t->calls++;
		diff_trace(t, "pmem2 rsv_delete -> %d", ret);
		if (ret == 0)
			p->rsv = NULL;
		break;
	}
}

/* The thread's slot of the shared reservation: map, find, or delete. */
static void shared_op(struct diff_thread *t)
{
	struct diff_pmem2 *p = t->pmem2;
	struct pmem2_map *found = NULL;
	int k = p->shared_slot, ret;

	if (k < 0) {
		k = pick_map(t, false);
		if (k >= 0)
			map_new(t, k, MAP_SHARED_SLOT);
		return;
	}
	if (diff_below(t, 2)) {
		ret = pmem2_vm_reservation_map_find(t->run->pmem2->rsv,
						    (size_t)t->id * SLOT, SLOT,
						    &found);
		t->calls++;
		diff_trace(t, "pmem2 shared find -> %d %s", ret,
			   found == p->m[k].map ? "mine" : "other");
		return;
	}
	map_delete(t, k);
}

/* --- the harness's calls --------------------------------------------------- */

static int pmem2_run_init(struct diff_run *run)
{
	struct diff_pmem2_shared *s = calloc(1, sizeof(*s));
	int ret;

	if (!s)
		return -1;
	ret = pmem2_vm_reservation_new(&s->rsv, NULL,
				       (size_t)run->threads * SLOT);
	if (ret) {
		fprintf(stderr, "dropin_diff: pmem2_vm_reservation_new: %s\n",
			pmem2_errormsg());
		return -1;
	}
	run->pmem2 = s;
	return 0;
}

static int pmem2_thread_init(struct diff_thread *t)
{
	struct diff_pmem2 *p = calloc(1, sizeof(*p));

	if (!p)
		return -1;
	t->pmem2 = p;
	p->shared_slot = -1;
	for (unsigned k = 0; k < P2_FILES; k++) {
		struct p2file *f = &p->f[k];

		diff_path(t, f->path, "pmem2-%u", k);
		f->model = malloc(file_size[k]);
		f->fd = open(f->path, O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC,
			     0600);
		f->fd_ro = open(f->path, O_RDONLY | O_CLOEXEC);
		if (!f->model || f->fd < 0 || f->fd_ro < 0)
			return -1;
		diff_fill(f->model, file_size[k], diff_rand(t));
		if (pwrite(f->fd, f->model, file_size[k], 0) !=
		    (ssize_t)file_size[k])
			return -1;
	}
	return 0;
}

static void pmem2_burst(struct diff_thread *t)
{
	int k;

	if (!t->pmem2)
		return;
	/*
	 * Every thread maps and deletes at once: one thread's unmap hands
	 * its addresses to another's mmap() at once, while the library's
	 * registry of maps is changed by both.
	 */
	for (int i = 0; i < 16; i++) {
		k = pick_map(t, false);
		if (k < 0)
			break;
		map_new(t, k, MAP_PLAIN);
		if (t->pmem2->m[k].map)
			map_delete(t, k);
	}
	shared_op(t);
}

static void pmem2_op(struct diff_thread *t)
{
	int k;

	if (!t->pmem2)
		return;
	switch (diff_below(t, 12)) {
	case 0:
	case 1:
	case 2:
		k = pick_map(t, false);
		if (k >= 0)
			map_new(t, k, MAP_RANDOM);
		break;
	case 3:
	case 4:
		k = pick_map(t, true);
		if (k >= 0)
			map_delete(t, k);
		break;
	case 5:
		k = pick_map(t, false);
		if (k >= 0)
			map_existing(t, k);
		break;
	case 6:
		k = pick_map(t, true);
		if (k >= 0)
			map_deep_flush(t, k);
		break;
	case 7:
		source_query(t);
		break;
	case 8:
		rsv_op(t);
		break;
	case 9:
		shared_op(t);
		break;
	default:
		k = pick_map(t, true);
		if (k >= 0)
			map_write(t, k);
		break;
	}
}

static void pmem2_thread_fini(struct diff_thread *t)
{
	struct diff_pmem2 *p = t->pmem2;

	if (!p)
		return;
	for (int k = 0; k < P2_MAPS; k++)
		if (p->m[k].map) {
			map_delete(t, k);
			if (p->m[k].map)
				diff_bad(t, "libpmem2 map %d cannot be deleted",
					 k);
		}
	if (p->rsv) {
		int ret = pmem2_vm_reservation_delete(&p->rsv);

		t->calls++;
		diff_trace(t, "pmem2 rsv_delete at the end -> %d", ret);
	}
	for (unsigned k = 0; k < P2_FILES; k++) {
		/* What the maps wrote is in the file. */
		unsigned char *now = malloc(file_size[k]);

		if (now && pread(p->f[k].fd, now, file_size[k], 0) ==
			   (ssize_t)file_size[k])
			(void)diff_same(t, now, p->f[k].model, file_size[k],
					"libpmem2 file at the end");
		free(now);
		close(p->f[k].fd);
		close(p->f[k].fd_ro);
		unlink(p->f[k].path);
		free(p->f[k].model);
	}
	free(p);
	t->pmem2 = NULL;
}

static void pmem2_run_fini(struct diff_thread *main_t)
{
	struct diff_pmem2_shared *s = main_t->run->pmem2;
	int ret = pmem2_vm_reservation_delete(&s->rsv);

	diff_trace(main_t, "pmem2 shared rsv_delete -> %d", ret);
	free(s);
	main_t->run->pmem2 = NULL;
}

const struct diff_lib diff_pmem2_lib = {
	.name = "pmem2",
	.bit = DIFF_LIB_PMEM2,
	.run_init = pmem2_run_init,
	.thread_init = pmem2_thread_init,
	.burst = pmem2_burst,
	.op = pmem2_op,
	.thread_fini = pmem2_thread_fini,
	.run_fini = pmem2_run_fini,
};
