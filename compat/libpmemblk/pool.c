// SPDX-License-Identifier: MIT
/*
 * pool.c - pmemblk_create(), pmemblk_open(), pmemblk_close() and
 * pmemblk_check(): PMDK 1.12.1's pool file (blk.h) mapped whole through
 * ntmem's namespaces, its header written and checked as PMDK does, and the
 * BTT after it (ntmem/btt.h).
 *
 * PMDK lays the BTT out at the first write, and so does this library
 * (NTM_BTT_LAZY): pmemblk_create() writes the pool header and descriptor
 * only, and the same layout follows, so a pool either library made opens
 * on the other. The descriptor's is_zeroed (a file the create allocated)
 * spares the layout the map's zeros, as in PMDK (NTM_BTT_ZEROED). A pool stays locked
 * (flock) while open, as with PMDK: a second opener gets EAGAIN.
 *
 * PMDK maps a pool in whole pages (its Mmap_align is the page size): a
 * file of any length is a pool of its whole pages, the bytes after the
 * last one unused. So a pool's size here is always pool_pages() of the
 * file's, and the BTT gets the pages after the headers.
 *
 * As PMDK's, a successful create, open or check leaves errno 0.
 *
 * A device dax is a pool too, as in PMDK: pmemblk_create() with poolsize
 * 0 makes one of the whole device (never allocated, chmod'ed or removed;
 * its first page must be zero), the header at offset 0, locked (flock)
 * like a file, mapped at the device's alignment and persisted with flush
 * + drain (ntm_ns_cpu_durable()).
 *
 * A pool set file (PMEMPOOLSET) names the pool's part files: poolset.c
 * parses it and maps the parts as one range; the headers, the descriptor
 * and the BTT are then what they are in a single file, and every part's
 * header is written and checked here too.
 */
#define _GNU_SOURCE
#include <endian.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/mman.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <time.h>
#include <unistd.h>

#include <ntmem.h>
#include <ntmem/embed.h>

#include "blk.h"
#include "include/libpmemblk.h"

#define POOLSET_SIG "PMEMPOOLSET"

/*
 * PMDK's Fletcher64 over 32-bit little-endian words: the 8 bytes at
 * @csum_off and everything from @end_off on count as zeros, yet still
 * advance the running sums, so the result depends on @len.
 */
uint64_t blk_fletcher64(const void *p, size_t len, size_t csum_off,
			size_t end_off)
{
	const unsigned char *b = p;
	uint32_t lo = 0, hi = 0;

	for (size_t off = 0; off + 4 <= len; off += 4) {
		uint32_t w;

		if (off < end_off && (off < csum_off || off >= csum_off + 8)) {
			memcpy(&w, b + off, 4);
			lo += le32toh(w);
		}
		hi += lo;
	}
	return (uint64_t)hi << 32 | lo;
}

/*
 * PMDK's architecture descriptor: for each of 11 basic types, its
 * alignment minus one in 4 bits, char in the lowest.
 */
#define ALIGN_OF(t) ((uint64_t)__builtin_offsetof(struct { char c; t x; }, x))
uint64_t blk_alignment_desc(void)
{
	const uint64_t a[] = {
		ALIGN_OF(char), ALIGN_OF(short), ALIGN_OF(int), ALIGN_OF(long),
		ALIGN_OF(long long), ALIGN_OF(size_t), ALIGN_OF(off_t),
		ALIGN_OF(float), ALIGN_OF(double), ALIGN_OF(long double),
		ALIGN_OF(void *),
	};
	uint64_t d = 0;

	for (unsigned i = 0; i < sizeof(a) / sizeof(a[0]); i++)
		d |= ((a[i] - 1) & 0xf) << (4 * i);
	return d;
}

static uint16_t elf_machine(void)
{
#if defined(__x86_64__)
	return 62;
#elif defined(__aarch64__)
	return 183;
#elif defined(__riscv)
	return 243;
#else
#error "the pool header needs this architecture's ELF machine number"
#endif
}

static size_t hdr_csum_end(const struct blk_pool_hdr *h)
{
	return le32toh(h->incompat) & BLK_FEAT_CKSUM_2K ? BLK_HDR_CSUM_2K_END
							: BLK_HDR_SIZE;
}

static uint64_t hdr_checksum(const struct blk_pool_hdr *h)
{
	return blk_fletcher64(h, BLK_HDR_SIZE,
			      __builtin_offsetof(struct blk_pool_hdr, checksum),
			      hdr_csum_end(h));
}

/* @size in whole pages, as PMDK maps a pool (see the top). */
static size_t pool_pages(size_t size)
{
	size_t page = (size_t)sysconf(_SC_PAGESIZE);

	return size / page * page;
}

/* Make [p, p + n) of the pool durable: flush + drain on pmem, else msync. */
static int pool_persist(void *arg, const void *p, size_t n)
{
	struct pmemblk *pbp = arg;

	if (pbp->is_pmem) {
		ntm_persist(p, n);
		return 0;
	}
	if (pbp->set_mapped)
		return blk_set_persist(p, n);
	return ntm_ns_persist(pbp->ns, p, n);
}

/* A random (version 4) UUID, as PMDK's pools carry. */
static int uuid_generate(uint8_t u[16])
{
	size_t got = 0;

	while (got < 16) {
		ssize_t r = getrandom(u + got, 16 - got, 0);

		if (r < 0 && errno != EINTR)
			return -1;
		if (r > 0)
			got += (size_t)r;
	}
	u[6] = (uint8_t)((u[6] & 0x0f) | 0x40);
	u[8] = (uint8_t)((u[8] & 0x3f) | 0x80);
	return 0;
}

/* PMEM_IS_PMEM_FORCE as PMDK's pmem_is_pmem() reads it: -1, 0 or 1. */
static int is_pmem_force(void)
{
	const char *v = getenv("PMEM_IS_PMEM_FORCE");

	if (!v || !*v)
		return -1;
	switch (atoi(v)) {
	case 0: return 0;
	case 1: return 1;
	default: return -1;
	}
}

/*
 * PMDK's choice of persist for a pool (util_replica_set_is_pmem()): flush
 * + drain when the pool is device dax or mapped with MAP_SYNC (@dax: a
 * CPU-durable DAX namespace here; virtio-pmem's never is, where ntmem
 * deliberately differs), whatever PMEM_IS_PMEM_FORCE says; else what
 * pmem_is_pmem() answers: PMEM_IS_PMEM_FORCE when set, else @detected.
 */
static bool pool_is_pmem(bool dax, bool detected)
{
	int force = is_pmem_force();

	return dax || (force >= 0 ? force == 1 : detected);
}

/*
 * Whether the character device @st is a device dax, by its sysfs class
 * (/sys/dev/char/MAJ:MIN/subsystem), as PMDK tells one.
 */
static bool is_devdax(const struct stat *st)
{
	char sys[64], link[256];
	ssize_t n;

	snprintf(sys, sizeof(sys), "/sys/dev/char/%u:%u/subsystem",
		 major(st->st_rdev), minor(st->st_rdev));
	n = readlink(sys, link, sizeof(link) - 1);
	if (n < 0)
		return false;
	link[n] = '\0';
	return strstr(link, "/dax") != NULL;
}

/* A character device other than a device dax is no pool: EINVAL, as PMDK. */
static int check_char_device(const struct stat *st, const char *path)
{
	if (!S_ISCHR(st->st_mode) || is_devdax(st))
		return 0;
	blk_error(EINVAL, "\"%s\" is a character device, but not a device dax",
		  path);
	return -1;
}

static bool is_poolset(int fd)
{
	char sig[sizeof(POOLSET_SIG) - 1];

	return pread(fd, sig, sizeof(sig), 0) == (ssize_t)sizeof(sig) &&
	       memcmp(sig, POOLSET_SIG, sizeof(sig)) == 0;
}

static void pool_free(struct pmemblk *pbp)
{
	if (pbp->btt)
		ntm_btt_close(pbp->btt);
	ntm_ns_close(pbp->ns);
	/*
	 * Unmapping drops the locks: a mapping holds its file open, and
	 * with it the flock (a set's parts too: poolset.c).
	 */
	if (pbp->set_mapped)
		munmap(pbp->base, pbp->size);
	blk_free(pbp);
}

/*
 * Lock and map the pool file open on @fd, which is closed here whatever
 * happens: the mapping holds the file open, and with it the lock, until
 * the pool is closed, so no descriptor is kept per pool (PMDK keeps none
 * either). Return the pool, or NULL with errno and the message set.
 */
static struct pmemblk *pool_map(int fd, const char *path, bool rdonly)
{
	struct pmemblk *pbp = blk_malloc(sizeof(*pbp));
	int ret;

	if (!pbp) {
		close(fd);
		blk_error(ENOMEM, "cannot allocate the pool handle");
		return NULL;
	}
	memset(pbp, 0, sizeof(*pbp));
	pbp->rdonly = rdonly;
	if (flock(fd, LOCK_EX | LOCK_NB)) {
		blk_error(errno, "flock \"%s\": %s", path, strerror(errno));
		close(fd);
		pool_free(pbp);
		return NULL;
	}
	ret = ntm_ns_open_fd(&pbp->ns, fd, path,
			     NTM_NS_ANY_SIZE | (rdonly ? NTM_NS_READONLY : 0));
	close(fd);
	if (ret) {
		blk_error(-ret, "%s", ntm_errmsg());
		pool_free(pbp);
		return NULL;
	}
	pbp->base = ntm_ns_base(pbp->ns);
	pbp->size = pool_pages(ntm_ns_size(pbp->ns));
	/* PMDK's choice: flush + drain on DAX or when pmem_is_pmem(), else msync. */
	pbp->is_pmem = pool_is_pmem(ntm_ns_cpu_durable(pbp->ns) &&
				    ntm_ns_kind(pbp->ns) != NTM_NS_EMULATED,
				    ntm_ns_cpu_durable(pbp->ns));
	return pbp;
}

/*
 * Check one part's pool header as PMDK's open does, in its order (so its
 * first complaint is ours): @single, a file that must link only to
 * itself. 0, or -1 with errno and the message.
 */
static int hdr_check_part(const struct blk_pool_hdr *h, bool single)
{
	uint32_t incompat = le32toh(h->incompat);

	if (le32toh(h->major) == 0) {
		blk_error(EINVAL, "invalid major version (0)");
		return -1;
	}
	if (memcmp(h->signature, BLK_SIG, sizeof(h->signature))) {
		blk_error(EINVAL, "wrong pool type: \"%.8s\"", h->signature);
		return -1;
	}
	if (le32toh(h->major) != BLK_MAJOR) {
		blk_error(EINVAL, "pool version %u (library expects %u)",
			  le32toh(h->major), BLK_MAJOR);
		return -1;
	}
	if (le64toh(h->checksum) != hdr_checksum(h)) {
		blk_error(EINVAL, "invalid checksum of pool header");
		return -1;
	}
	if (incompat & ~BLK_FEAT_INCOMPAT_KNOWN) {
		blk_error(EINVAL, "unsafe to continue due to unknown incompat "
			  "features: %#x", incompat & ~BLK_FEAT_INCOMPAT_KNOWN);
		return -1;
	}
	if (incompat & BLK_FEAT_SINGLEHDR) {
		blk_error(ENOTSUP, "the pool has one header for all its parts "
			  "(OPTION SINGLEHDR): not supported by ntmem's "
			  "libpmemblk");
		return -1;
	}
	/* A part of a multi-part pool set links to other files. */
	if (single && (memcmp(h->next_part_uuid, h->uuid, 16) ||
		       memcmp(h->prev_part_uuid, h->uuid, 16))) {
		blk_error(EINVAL, "the file is a part of a pool set: open the "
			  "pool set file");
		return -1;
	}
	if (le64toh(h->alignment_desc) != blk_alignment_desc() ||
	    h->machine_class != 2 || h->data != 1 ||
	    le16toh(h->machine) != elf_machine()) {
		blk_error(EINVAL, "wrong architecture flags");
		return -1;
	}
	return 0;
}

/*
 * Check the pool header and descriptor as PMDK's open does (a pool set's
 * other parts are checked by set_open()). 0, or -1 with errno and the
 * message.
 */
static int hdr_check(struct pmemblk *pbp, size_t *bsize)
{
	const struct blk_pool_hdr *h = (const void *)pbp->base;
	const struct blk_desc *d = (const void *)(pbp->base + BLK_DESC_OFF);
	size_t hdr_bsize;

	if (pbp->size < PMEMBLK_MIN_PART) {
		blk_error(EINVAL, "size %zu smaller than %zu", pbp->size,
			  PMEMBLK_MIN_PART);
		return -1;
	}
	if (hdr_check_part(h, !pbp->set_mapped))
		return -1;
	/* A feature this library cannot honour: PMDK opens it read-only. */
	if (le32toh(h->ro_compat))
		pbp->rdonly = true;
	hdr_bsize = le32toh(d->bsize);
	if (*bsize && *bsize != hdr_bsize) {
		blk_error(EINVAL, "wrong bsize (%zu), pool created with bsize %zu",
			  *bsize, hdr_bsize);
		return -1;
	}
	*bsize = hdr_bsize;
	return 0;
}

/*
 * Open the BTT after the headers of the pool set @parent (its UUID), or
 * with @create make a new pool's (no layout until the first write, an old
 * BTT's info blocks forgotten: ntm_btt_open(3)). A BTT not laid out yet
 * (neither arena 0 info block signed, whatever else the bytes hold: a
 * pool made over a file of old data) opens lazily, every block reading
 * as zeros, as PMDK's; the descriptor's is_zeroed spares its layout the
 * map's zeros. 0 or -1 with errno set.
 */
static int pool_btt(struct pmemblk *pbp, const uint8_t parent[16], bool create)
{
	const struct blk_desc *d = (const void *)(pbp->base + BLK_DESC_OFF);
	long ncpus = sysconf(_SC_NPROCESSORS_ONLN);
	struct ntm_btt_config cfg = {
		.lbasize = pbp->bsize,
		/* PMDK asks for two lanes per CPU; nfree (256) caps them. */
		.nlanes = (unsigned)(ncpus < 1 ? 2 : 2 * ncpus),
		.parent_uuid = parent,
		.flags = (create ? NTM_BTT_CREATE : 0) | NTM_BTT_LAZY |
			 (le32toh(d->is_zeroed) ? NTM_BTT_ZEROED : 0) |
			 (pbp->rdonly ? NTM_BTT_READONLY : 0),
		.persist = pool_persist,
		.persist_arg = pbp,
	};
	int ret = ntm_btt_open(&pbp->btt, pbp->base + BLK_DATA_OFF,
			       pbp->size - BLK_DATA_OFF, &cfg);

	if (ret) {
		pbp->btt = NULL;
		/*
		 * -ENOSPC: the BTT fits no arena of these blocks in the pool;
		 * PMDK's btt_init() calls that EINVAL, as every geometry it
		 * cannot lay out.
		 */
		blk_error(ret == -ENOSPC ? EINVAL : -ret, "%s", ntm_errmsg());
		return -1;
	}
	if (ntm_btt_readonly(pbp->btt))
		pbp->rdonly = true;
	return 0;
}

/*
 * The run-time state PMDK's library keeps in the descriptor page (struct
 * blk_desc, blk.h), with this pool's values: where it is mapped, its
 * BTT's place and size, its lanes. PMDK's pointers to its own objects
 * stay 0. Not made durable here.
 */
static void desc_runtime_fill(struct pmemblk *pbp)
{
	struct blk_desc *d = (void *)(pbp->base + BLK_DESC_OFF);

	d->addr = (uint64_t)(uintptr_t)pbp->base;
	d->size = pbp->size;
	d->is_pmem = pbp->is_pmem;
	d->rdonly = pbp->rdonly;
	d->data = (uint64_t)(uintptr_t)(pbp->base + BLK_DATA_OFF);
	d->datasize = pbp->size - BLK_DATA_OFF;
	d->nlba = 0;	/* PMDK declares it and never sets it */
	d->bttp = 0;
	d->nlane = ntm_btt_nlanes(pbp->btt);
	d->next_lane = 0;
	d->locks = 0;
	d->is_dev_dax = pbp->ns && ntm_ns_kind(pbp->ns) == NTM_NS_DEVDAX;
	d->pad = 0;
	d->ctl = 0;
	d->set = 0;
}

/* A new pool's two header pages, its run-time state filled in, made durable. */
static int pool_persist_new(struct pmemblk *pbp)
{
	desc_runtime_fill(pbp);
	return pool_persist(pbp, pbp->base, BLK_DATA_OFF);
}

/*
 * At a writable open: a pool whose run-time state does not lead to its
 * BTT (a pool only an older ntmem wrote, zeros there) gets it, so PMDK's
 * pmempool info reads it. Every other open leaves the page alone: the
 * values are PMDK's to refresh, and rewriting them would cost a persist
 * (an msync off pmem) at every open. 0, or -1 with errno and the message.
 */
static int desc_runtime_repair(struct pmemblk *pbp)
{
	const struct blk_desc *d = (const void *)(pbp->base + BLK_DESC_OFF);
	int ret;

	if (d->data - d->addr == BLK_DATA_OFF)
		return 0;
	desc_runtime_fill(pbp);
	ret = pool_persist(pbp, d, sizeof(*d));
	if (ret) {
		blk_error(-ret, "cannot persist the pool descriptor: %s",
			  strerror(-ret));
		return -1;
	}
	return 0;
}

/*
 * A pool header as PMDK writes it: of part @uuid of pool set @set_uuid,
 * between parts @prev and @next (a single file: itself, both), in the
 * replica whose first part is @repl.
 */
static void hdr_fill(struct blk_pool_hdr *h, const uint8_t set_uuid[16],
		     const uint8_t uuid[16], const uint8_t prev[16],
		     const uint8_t next[16], const uint8_t repl[16],
		     uint64_t crtime)
{
	memset(h, 0, sizeof(*h));
	memcpy(h->signature, BLK_SIG, sizeof(h->signature));
	h->major = htole32(BLK_MAJOR);
	h->compat = htole32(BLK_FEAT_CHECK_BAD_BLOCKS);
	/* No SDS: its unsafe-shutdown count is PMDK's (libndctl) to keep. */
	h->incompat = htole32(BLK_FEAT_CKSUM_2K);
	memcpy(h->poolset_uuid, set_uuid, 16);
	memcpy(h->uuid, uuid, 16);
	memcpy(h->prev_part_uuid, prev, 16);
	memcpy(h->next_part_uuid, next, 16);
	memcpy(h->prev_repl_uuid, repl, 16);
	memcpy(h->next_repl_uuid, repl, 16);
	h->crtime = htole64(crtime);
	h->alignment_desc = htole64(blk_alignment_desc());
	h->machine_class = 2;
	h->data = 1;
	h->machine = htole16(elf_machine());
	h->checksum = htole64(hdr_checksum(h));
}

static bool page_is_zero(const unsigned char *p)
{
	for (size_t i = 0; i < BLK_HDR_SIZE; i++)
		if (p[i])
			return false;
	return true;
}

/* pmemblk_create() of a pool set file (@fd, closed here): its parts. */
static struct pmemblk *set_create(const char *path, int fd, size_t bsize,
				  mode_t mode)
{
	unsigned char was[BLK_DATA_OFF], page[BLK_HDR_SIZE];
	uint8_t set_uuid[16], (*uuid)[16] = NULL;
	struct pmemblk *pbp = NULL;
	struct blk_set *set;
	struct blk_desc *d;
	uint64_t crtime = (uint64_t)time(NULL);
	int oerrno;
	unsigned n, i;

	if (blk_set_parse(path, fd, &set)) {
		close(fd);
		return NULL;
	}
	close(fd);
	n = set->nparts;
	pbp = blk_set_map(set, true, false, mode);
	if (!pbp)
		goto out;
	/* blk_set_map(): MAP_SYNC parts are pmem, whatever the variable says. */
	pbp->is_pmem = pool_is_pmem(pbp->is_pmem, false);
	/* As a single file: an existing part only while its header is zero. */
	for (i = 0; i < n; i++) {
		const unsigned char *hp = pbp->base;

		if (i && pread(set->part[i].fd, page, sizeof(page), 0) !=
				 (ssize_t)sizeof(page)) {
			blk_error(EIO, "cannot read the header of \"%s\"",
				  set->part[i].path);
			goto fail;
		}
		if (i)
			hp = page;
		if (!page_is_zero(hp)) {
			blk_error(EEXIST, "Non-empty file detected: %s",
				  set->part[i].path);
			goto fail;
		}
	}
	uuid = n ? calloc(n, sizeof(*uuid)) : NULL;
	if (!uuid) {
		blk_error(ENOMEM, "cannot allocate the part UUIDs");
		goto fail;
	}
	if (uuid_generate(set_uuid)) {
		blk_error(errno, "cannot generate a UUID: %s", strerror(errno));
		goto fail;
	}
	for (i = 0; i < n; i++) {
		if (uuid_generate(uuid[i])) {
			blk_error(errno, "cannot generate a UUID: %s",
				  strerror(errno));
			goto fail;
		}
	}
	/* The other parts' headers first: part 0's says the pool exists. */
	for (i = 1; i < n; i++) {
		struct blk_pool_hdr hb;

		hdr_fill(&hb, set_uuid, uuid[i], uuid[(i + n - 1) % n],
			 uuid[(i + 1) % n], uuid[0], crtime);
		if (pwrite(set->part[i].fd, &hb, sizeof(hb), 0) !=
			   (ssize_t)sizeof(hb) || fdatasync(set->part[i].fd)) {
			blk_error(errno ? errno : EIO, "cannot write the header "
				  "of \"%s\": %s", set->part[i].path,
				  strerror(errno));
			goto fail;
		}
	}
	memcpy(was, pbp->base, sizeof(was));
	hdr_fill((struct blk_pool_hdr *)pbp->base, set_uuid, uuid[0],
		 uuid[n - 1], uuid[1 % n], uuid[0], crtime);
	d = (void *)(pbp->base + BLK_DESC_OFF);
	d->bsize = htole32((uint32_t)bsize);
	d->is_zeroed = htole32(1);
	for (i = 0; i < n; i++)
		if (!set->part[i].made)
			d->is_zeroed = htole32(0);	/* as PMDK: all new */
	pbp->bsize = (uint32_t)bsize;
	/* The BTT first, as in pmemblk_create(). */
	if (pool_btt(pbp, set_uuid, true) || pool_persist_new(pbp)) {
		oerrno = errno;
		memcpy(pbp->base, was, sizeof(was));
		pool_persist(pbp, pbp->base, sizeof(was));
		memset(page, 0, sizeof(page));
		for (i = 1; i < n; i++)
			if (!set->part[i].made)
				(void)!pwrite(set->part[i].fd, page,
					      sizeof(page), 0);
		blk_error(oerrno, "pool initialization failed");
		goto fail;
	}
	blk_set_close_parts(set, false);
	free(uuid);
	blk_set_free(set);
	errno = 0;
	return pbp;
fail:
	oerrno = errno;
	blk_set_close_parts(set, true);
	pool_free(pbp);
	pbp = NULL;
	errno = oerrno;
out:
	free(uuid);
	blk_set_free(set);
	return pbp;
}

/*
 * pmemblk_open() / pmemblk_check() of a pool set file (@fd, closed here):
 * its parts mapped, every part's header checked, and each part the one
 * its neighbours' headers name. Part 0's descriptor is hdr_check()'s.
 */
static struct pmemblk *set_open(const char *path, int fd, bool rdonly)
{
	struct blk_pool_hdr *hdrs = NULL;
	struct pmemblk *pbp;
	struct blk_set *set;
	int oerrno;
	unsigned n;

	if (blk_set_parse(path, fd, &set)) {
		close(fd);
		return NULL;
	}
	close(fd);
	n = set->nparts;
	pbp = blk_set_map(set, false, rdonly, 0);
	if (!pbp)
		goto out;
	/* blk_set_map(): MAP_SYNC parts are pmem, whatever the variable says. */
	pbp->is_pmem = pool_is_pmem(pbp->is_pmem, false);
	hdrs = malloc(n * sizeof(*hdrs));
	if (!hdrs) {
		blk_error(ENOMEM, "cannot allocate the part headers");
		goto fail;
	}
	memcpy(&hdrs[0], pbp->base, sizeof(*hdrs));
	for (unsigned i = 1; i < n; i++) {
		if (pread(set->part[i].fd, &hdrs[i], sizeof(*hdrs), 0) !=
		    (ssize_t)sizeof(*hdrs)) {
			blk_error(EIO, "cannot read the header of \"%s\"",
				  set->part[i].path);
			goto fail;
		}
	}
	for (unsigned i = 0; i < n; i++) {
		const struct blk_pool_hdr *h = &hdrs[i];

		if (hdr_check_part(h, false)) {
			char why[256];

			snprintf(why, sizeof(why), "%s", pmemblk_errormsg());
			blk_error(errno, "%s: %s", set->part[i].path, why);
			goto fail;
		}
		if (memcmp(h->poolset_uuid, hdrs[0].poolset_uuid, 16) ||
		    memcmp(h->prev_part_uuid, hdrs[(i + n - 1) % n].uuid, 16) ||
		    memcmp(h->next_part_uuid, hdrs[(i + 1) % n].uuid, 16) ||
		    memcmp(h->prev_repl_uuid, hdrs[0].uuid, 16) ||
		    memcmp(h->next_repl_uuid, hdrs[0].uuid, 16)) {
			blk_error(EINVAL, "%s: part %u of pool set %s is not "
				  "the part its neighbours' headers name (a "
				  "part of another pool, or the parts out of "
				  "order)", set->part[i].path, i, path);
			goto fail;
		}
	}
	blk_set_close_parts(set, false);
	free(hdrs);
	blk_set_free(set);
	return pbp;
fail:
	oerrno = errno;
	blk_set_close_parts(set, false);
	pool_free(pbp);
	pbp = NULL;
	errno = oerrno;
out:
	free(hdrs);
	blk_set_free(set);
	return pbp;
}

PMEMblkpool *pmemblk_create(const char *path, size_t bsize, size_t poolsize,
			    mode_t mode)
{
	unsigned char was[BLK_DATA_OFF];	/* an existing file's headers */
	uint8_t set_uuid[16], uuid[16];
	struct blk_pool_hdr *h;
	struct blk_desc *d;
	struct pmemblk *pbp;
	bool created = poolsize != 0, devdax;
	int fd, zeroed = created, oerrno;
	struct stat st;

	if (bsize == 0 || bsize > UINT32_MAX) {
		blk_error(EINVAL, "Invalid block size %zu", bsize);
		return NULL;
	}
	if (!path) {
		blk_error(EINVAL, "no path");
		return NULL;
	}
	/*
	 * A device dax is a pool of its whole size, as in PMDK: it exists
	 * already, so @poolsize must be 0, and it is never allocated,
	 * chmod'ed or removed; its size is checked once it is mapped.
	 */
	devdax = stat(path, &st) == 0 && S_ISCHR(st.st_mode);
	if (devdax && !created && check_char_device(&st, path))
		return NULL;
	if (devdax && created && is_devdax(&st)) {
		blk_error(EINVAL, "size must be zero for device dax");
		return NULL;
	}
	fd = open(path, O_RDWR | O_CLOEXEC | (created ? O_CREAT | O_EXCL : 0),
		  mode);
	if (fd < 0) {
		if (errno == EEXIST)
			blk_error(EEXIST, "file %s already exists", path);
		else
			blk_error(errno, "open \"%s\": %s", path, strerror(errno));
		return NULL;
	}
	if (fstat(fd, &st)) {
		blk_error(errno, "stat \"%s\": %s", path, strerror(errno));
		goto fail;
	}
	if (!created && is_poolset(fd))
		return set_create(path, fd, bsize, mode);
	/* PMDK names the whole pages (the file is still @poolsize long). */
	if (created && pool_pages(poolsize) < PMEMBLK_MIN_POOL) {
		blk_error(EINVAL, "reservation pool size %zu smaller than %zu",
			  pool_pages(poolsize), PMEMBLK_MIN_POOL);
		goto fail;
	}
	if (!created && !devdax && (size_t)st.st_size < PMEMBLK_MIN_POOL) {
		blk_error(EINVAL, "file is not a poolset file and its size (%zu) "
			  "is smaller than %zu", (size_t)st.st_size,
			  PMEMBLK_MIN_POOL);
		goto fail;
	}
	/*
	 * As PMDK 1.12.1: a file this call creates is always allocated
	 * (util_file_create); fallocate.at_create only decides whether an
	 * existing file given with poolsize 0 is (util_part_open). Either
	 * way the file's bytes are unchanged.
	 */
	if (created || (blk_ctl_fallocate_at_create && !devdax)) {
		size_t len = created ? poolsize : (size_t)st.st_size;
		int err = posix_fallocate(fd, 0, (off_t)len);

		if (err) {
			blk_error(err, "cannot allocate %zu bytes for \"%s\": %s",
				  len, path, strerror(err));
			goto fail;
		}
	}
	if (created) {
		/* The mode exactly, whatever the umask (PMDK chmods too). */
		if (fchmod(fd, mode)) {
			blk_error(errno, "chmod \"%s\": %s", path, strerror(errno));
			goto fail;
		}
	}
	pbp = pool_map(fd, path, false);
	if (!pbp)
		goto unlink_file;
	if (devdax && pbp->size < PMEMBLK_MIN_POOL) {
		size_t size = pbp->size;

		pool_free(pbp);
		blk_error(EINVAL, "device dax \"%s\": its size (%zu) is smaller "
			  "than %zu", path, size, PMEMBLK_MIN_POOL);
		return NULL;
	}
	h = (void *)pbp->base;
	d = (void *)(pbp->base + BLK_DESC_OFF);
	/* An existing file may be used only while its header page is zero. */
	for (size_t i = 0; !created && i < BLK_HDR_SIZE; i++) {
		if (pbp->base[i]) {
			pool_free(pbp);
			blk_error(EEXIST, "Non-empty file detected");
			return NULL;
		}
	}
	/* Put back if the BTT cannot be laid out: a failed call changes nothing. */
	memcpy(was, pbp->base, sizeof(was));

	/* A single-file pool links its parts and replicas to itself. */
	if (uuid_generate(set_uuid) || uuid_generate(uuid)) {
		blk_error(errno, "cannot generate a UUID: %s", strerror(errno));
		pool_free(pbp);
		goto unlink_file;
	}
	hdr_fill(h, set_uuid, uuid, uuid, uuid, uuid, (uint64_t)time(NULL));
	d->bsize = htole32((uint32_t)bsize);
	d->is_zeroed = htole32((uint32_t)zeroed);
	pbp->bsize = (uint32_t)bsize;
	/*
	 * The BTT before the header is persisted: opening it lazily writes
	 * nothing but, in a reused file, zeros over an old BTT's arena 0
	 * info blocks, which carry the old pool's UUID and would make the
	 * new pool refuse to open (PMDK takes them for no BTT and lays a new
	 * one out). So a power cut leaves no pool, or one whose BTT is
	 * absent: never a pool header over a stale BTT.
	 */
	if (pool_btt(pbp, set_uuid, true) || pool_persist_new(pbp)) {
		oerrno = errno;
		/*
		 * PMDK leaves its header in an existing file; this library
		 * takes it back (the BTT wrote nothing, or zeros over an old
		 * BTT's first info blocks, which a zero header page makes
		 * unreadable anyway).
		 */
		if (!created) {
			memcpy(pbp->base, was, sizeof(was));
			pool_persist(pbp, pbp->base, sizeof(was));
		}
		pool_free(pbp);
		blk_error(oerrno, "pool initialization failed");
		goto unlink_file;
	}
	errno = 0;
	return pbp;

fail:
	oerrno = errno;
	close(fd);
	errno = oerrno;
unlink_file:
	if (created) {
		oerrno = errno;
		unlink(path);
		errno = oerrno;
	}
	return NULL;
}

/* Open and check the pool; the BTT only if @with_btt. */
static struct pmemblk *pool_open(const char *path, size_t bsize, bool rdonly,
				 bool with_btt)
{
	struct pmemblk *pbp;
	struct stat st;
	int fd;

	if (!path) {
		blk_error(EINVAL, "no path");
		return NULL;
	}
	fd = open(path, (rdonly ? O_RDONLY : O_RDWR) | O_CLOEXEC);
	if (fd < 0) {
		blk_error(errno, "open \"%s\": %s", path, strerror(errno));
		return NULL;
	}
	/* A pool file, or a device dax (ntm_ns_open_fd() refuses other devices). */
	if (fstat(fd, &st) || !(S_ISREG(st.st_mode) || S_ISCHR(st.st_mode))) {
		blk_error(EINVAL, "\"%s\" is not a pool file", path);
		close(fd);
		return NULL;
	}
	if (check_char_device(&st, path)) {
		close(fd);
		return NULL;
	}
	pbp = is_poolset(fd) ? set_open(path, fd, rdonly) :
			       pool_map(fd, path, rdonly);
	if (!pbp)
		return NULL;
	if (hdr_check(pbp, &bsize)) {
		int oerrno = errno;

		pool_free(pbp);
		errno = oerrno;
		return NULL;
	}
	pbp->bsize = (uint32_t)bsize;
	if (with_btt && (pool_btt(pbp, ((const struct blk_pool_hdr *)pbp->base)
						       ->poolset_uuid, false) ||
			 (!pbp->rdonly && desc_runtime_repair(pbp)))) {
		int oerrno = errno;

		pool_free(pbp);
		errno = oerrno;
		return NULL;
	}
	return pbp;
}

PMEMblkpool *pmemblk_open(const char *path, size_t bsize)
{
	struct pmemblk *pbp = pool_open(path, bsize, false, true);

	if (pbp && blk_ctl_verbose)
		fprintf(stderr, "ntmem libpmemblk: %s: bsize %u, %llu blocks, "
			"%s\n", path, pbp->bsize,
			(unsigned long long)ntm_btt_nlba(pbp->btt),
			pbp->is_pmem ? "flush + drain" : "msync");
	if (pbp)
		errno = 0;
	return pbp;
}

void pmemblk_close(PMEMblkpool *pbp)
{
	if (pbp)
		pool_free(pbp);
}

/*
 * 1 consistent, 0 not, -1 when the pool cannot be opened (errno). Nothing
 * is written: the file is mapped read-only and the BTT opened read-only,
 * so no flog is replayed.
 */
int pmemblk_check(const char *path, size_t bsize)
{
	struct pmemblk *pbp = pool_open(path, bsize, true, false);
	int ret;

	if (!pbp)
		return -1;
	/* A BTT never laid out is consistent (ntm_btt_check()), as PMDK's. */
	if (pool_btt(pbp, ((const struct blk_pool_hdr *)pbp->base)->poolset_uuid,
		     false)) {
		pool_free(pbp);
		return 0;
	}
	ret = ntm_btt_check(pbp->btt);
	pool_free(pbp);
	if (ret) {
		blk_error(-ret, "%s", ntm_errmsg());
		return 0;
	}
	errno = 0;
	return 1;
}
