// SPDX-License-Identifier: MIT
/*
 * ns_probe.c - what ntmem makes of a real device or file, for the checks
 * that run inside a kernel guest (tests/kernel/stage.sh) on namespaces the
 * guest's nd and dax drivers made. One line of key=value words per
 * command, so a shell check can match the words it cares about:
 *
 *   kernel_ns_probe info PATH    ntm_ns_open(): kind, size, alignment,
 *                                cpu_durable, persistence domain, and
 *                                ntm_ns_region()'s region (its CXL one)
 *   kernel_ns_probe write PATH   a pattern over the first 4 KiB with
 *                                ntm_memcpy_flush(), ntm_ns_persist(),
 *                                then opened again and compared
 *   kernel_ns_probe btt PATH N   a BTT of N-byte sectors laid over the
 *                                whole namespace through ntm_blk_open(),
 *                                one sector written and read back after
 *                                the BTT is closed and opened again
 *   kernel_ns_probe badblocks PATH   ntm_blk_open()'s bad-sector list of
 *                                PATH and how a read of its first 4 KiB
 *                                ends (ntm_blk_read(): "ok" or "eio")
 *   kernel_ns_probe fiemap PATH  where PATH's first byte is on its block
 *                                device (FIEMAP), in bytes: for a check
 *                                to mark that sector bad under the file
 *   kernel_ns_probe zero PATH N  the first N bytes zeroed and persisted
 *                                (a devdax device cannot be written with
 *                                dd: write(2) on it is EINVAL)
 *   kernel_ns_probe pattern N SEED    N bytes of the probe's pattern, on
 *                                standard output (for dd to a device)
 *   kernel_ns_probe btt-write DEV OFF LBASIZE LBA SEED [PARENT_UUID]
 *   kernel_ns_probe btt-read DEV OFF LBASIZE LBA SEED
 *                                ntm_btt_open() at byte OFF of the raw
 *                                block device DEV (mapped through its
 *                                page cache, persisted with msync; or a
 *                                Device DAX, persisted by the CPU): lay
 *                                out a BTT and write the pattern to LBA,
 *                                or open the BTT there and compare LBA
 *                                with the pattern (exit 3 when it
 *                                differs: wrong data read with success);
 *                                a labelled namespace's BTT names it as
 *                                its parent (its uuid, from sysfs);
 *                                PROBE_BTT_VERSION=2.0 lays out (or
 *                                requires) BTT 2.0; the BTT's version
 *                                is printed
 *
 * Exit status 0, or 1 with the library's message on standard error. It
 * overwrites what it is pointed at: only for scratch namespaces.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <linux/fiemap.h>
#include <linux/fs.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include <ntmem.h>
#include <ntmem/introspect.h>

#define PROBE_LEN 4096

static int fail(const char *what, int ret)
{
	fprintf(stderr, "kernel_ns_probe: %s: %s (%s)\n", what, ntm_errmsg(),
		strerror(-ret));
	return 1;
}

static int info(const char *path)
{
	struct ntm_ns *ns;
	struct ntm_nd_region r;
	int ret = ntm_ns_open(&ns, path, 0);

	if (ret)
		return fail("open", ret);
	printf("path=%s kind=%s size=%zu align=%zu cpu_durable=%d domain=%s",
	       path, ntm_ns_kind_name(ntm_ns_kind(ns)), ntm_ns_size(ns),
	       ntm_ns_align(ns), ntm_ns_cpu_durable(ns),
	       ntm_persist_domain_name(ntm_ns_persist_domain(ns)));
	/* The nd region under it, and the CXL region behind that. */
	if (ntm_ns_region(ns, &r) == 1) {
		printf(" region=%s provider=%s", r.name, r.provider);
		if (r.cxl_region[0])
			printf(" cxl_region=%s cxl_ways=%u cxl_memdevs=%s",
			       r.cxl_region, r.cxl_ways, r.cxl_memdevs);
	}
	printf("\n");
	ntm_ns_close(ns);
	return 0;
}

static void pattern(unsigned char *buf, size_t len, unsigned seed)
{
	for (size_t i = 0; i < len; i++)
		buf[i] = (unsigned char)(i * 131u + seed);
}

static int write_back(const char *path)
{
	static unsigned char want[PROBE_LEN];
	struct ntm_ns *ns;
	int ret;

	pattern(want, sizeof(want), 7);
	ret = ntm_ns_open(&ns, path, 0);
	if (ret)
		return fail("open", ret);
	ntm_memcpy_flush(ntm_ns_base(ns), want, sizeof(want));
	ret = ntm_ns_persist(ns, ntm_ns_base(ns), sizeof(want));
	ntm_ns_close(ns);
	if (ret)
		return fail("persist", ret);
	ret = ntm_ns_open(&ns, path, NTM_NS_READONLY);
	if (ret)
		return fail("open again", ret);
	ret = memcmp(ntm_ns_base(ns), want, sizeof(want));
	ntm_ns_close(ns);
	if (ret) {
		fprintf(stderr, "kernel_ns_probe: %s: the pattern did not read back\n",
			path);
		return 1;
	}
	printf("path=%s written=%d persisted=1 read_back=1\n", path, PROBE_LEN);
	return 0;
}

static int zero(const char *path, size_t n)
{
	struct ntm_ns *ns;
	int ret = ntm_ns_open(&ns, path, 0);

	if (ret)
		return fail("open", ret);
	if (n > ntm_ns_size(ns))
		n = ntm_ns_size(ns);
	ntm_memset_flush(ntm_ns_base(ns), 0, n);
	ret = ntm_ns_persist(ns, ntm_ns_base(ns), n);
	ntm_ns_close(ns);
	if (ret)
		return fail("persist", ret);
	printf("path=%s zeroed=%zu\n", path, n);
	return 0;
}

/* Opens @path's BTT (laid out anew with @create); 0 or a message. */
static int btt_open(struct ntm_ns **ns, struct ntm_blk **blk, const char *path,
		    unsigned sector, bool create)
{
	struct ntm_blk_config c = {
		.sector_size = sector, .btt = true, .btt_create = create,
	};
	int ret = ntm_ns_open(ns, path, 0);

	if (ret)
		return fail("open", ret);
	ret = ntm_blk_open(blk, *ns, &c);
	if (ret) {
		ntm_ns_close(*ns);
		return fail(create ? "lay out a BTT" : "open the BTT", ret);
	}
	return 0;
}

static int btt(const char *path, unsigned sector)
{
	static unsigned char want[4096], got[4096];
	struct ntm_blk *blk;
	struct ntm_ns *ns;
	uint64_t size, last;
	ssize_t n;

	if (btt_open(&ns, &blk, path, sector, true))
		return 1;
	size = ntm_blk_size(blk);
	/* The last sector: the far end of the map and of the data blocks. */
	last = size - sector;
	pattern(want, sector, 11);
	n = ntm_blk_write(blk, want, sector, last, 0);
	ntm_blk_close(blk);
	ntm_ns_close(ns);
	if (n != (ssize_t)sector)
		return fail("write a sector", (int)n);
	if (btt_open(&ns, &blk, path, sector, false))
		return 1;
	n = ntm_blk_read(blk, got, sector, last);
	ntm_blk_close(blk);
	ntm_ns_close(ns);
	if (n != (ssize_t)sector)
		return fail("read the sector", (int)n);
	if (memcmp(got, want, sector)) {
		fprintf(stderr, "kernel_ns_probe: %s: BTT sector %llu did not read back\n",
			path, (unsigned long long)(last / sector));
		return 1;
	}
	printf("path=%s btt_sector=%u btt_size=%llu read_back=1\n", path, sector,
	       (unsigned long long)size);
	return 0;
}

static int badblocks(const char *path)
{
	static unsigned char buf[4096];
	struct ntm_blk_config c = { .sector_size = 512 };
	struct ntm_badblock bb[16];
	struct ntm_blk *blk;
	struct ntm_ns *ns;
	size_t nbb;
	ssize_t n;
	int ret = ntm_ns_open(&ns, path, 0);

	if (ret)
		return fail("open", ret);
	ret = ntm_blk_open(&blk, ns, &c);
	if (ret) {
		ntm_ns_close(ns);
		return fail("ntm_blk_open", ret);
	}
	nbb = ntm_blk_badblocks(blk, bb, sizeof(bb) / sizeof(*bb));
	printf("path=%s badblocks=", path);
	for (size_t i = 0; i < nbb && i < sizeof(bb) / sizeof(*bb); i++)
		printf("%s%llu+%llu", i ? "," : "", (unsigned long long)bb[i].sector,
		       (unsigned long long)bb[i].count);
	n = ntm_blk_read(blk, buf, sizeof(buf), 0);
	printf("%s read=%s\n", nbb ? "" : "none", n == (ssize_t)sizeof(buf) ? "ok"
	       : n == -EIO ? "eio" : "error");
	if (n < 0 && n != -EIO)
		fprintf(stderr, "kernel_ns_probe: read: %s\n", ntm_errmsg());
	ntm_blk_close(blk);
	ntm_ns_close(ns);
	return 0;
}

static int fiemap(const char *path)
{
	union {
		struct fiemap map;
		char room[sizeof(struct fiemap) + sizeof(struct fiemap_extent)];
	} u = { .map = { .fm_length = ~0ull, .fm_flags = FIEMAP_FLAG_SYNC,
			 .fm_extent_count = 1 } };
	int fd = open(path, O_RDONLY | O_CLOEXEC), ret;

	if (fd < 0 || ioctl(fd, FS_IOC_FIEMAP, &u.map)) {
		fprintf(stderr, "kernel_ns_probe: fiemap %s: %s\n", path, strerror(errno));
		if (fd >= 0)
			close(fd);
		return 1;
	}
	close(fd);
	ret = u.map.fm_mapped_extents == 1 && u.map.fm_extents[0].fe_logical == 0;
	if (!ret) {
		fprintf(stderr, "kernel_ns_probe: fiemap %s: no extent at offset 0\n", path);
		return 1;
	}
	printf("path=%s physical=%llu length=%llu\n", path,
	       (unsigned long long)u.map.fm_extents[0].fe_physical,
	       (unsigned long long)u.map.fm_extents[0].fe_length);
	return 0;
}

static int pattern_out(unsigned long long n, unsigned seed)
{
	static unsigned char buf[4096];

	while (n) {
		size_t len = n < sizeof(buf) ? (size_t)n : sizeof(buf);

		pattern(buf, len, seed);
		if (fwrite(buf, 1, len, stdout) != len)
			return 1;
		n -= len;
		seed += (unsigned)len * 131u;	/* the next chunk continues it */
	}
	return fflush(stdout) ? 1 : 0;
}

/* ntm_btt_config.persist for a mapping of a block device's page cache. */
static int msync_range(void *arg, const void *p, size_t n)
{
	uintptr_t page = (uintptr_t)sysconf(_SC_PAGESIZE);
	uintptr_t start = (uintptr_t)p & ~(page - 1);

	(void)arg;
	return msync((void *)start, (uintptr_t)p + n - start, MS_SYNC) ? -errno : 0;
}

/* A Device DAX's size, as sysfs gives it; 0 when it does not. */
static uint64_t devdax_size(int fd)
{
	char path[64];
	unsigned long long v = 0;
	struct stat st;
	FILE *f;

	if (fstat(fd, &st) || !S_ISCHR(st.st_mode))
		return 0;
	snprintf(path, sizeof(path), "/sys/dev/char/%u:%u/size", major(st.st_rdev),
		 minor(st.st_rdev));
	f = fopen(path, "re");
	if (!f)
		return 0;
	if (fscanf(f, "%llu", &v) != 1)
		v = 0;
	fclose(f);
	return v;
}

/* A block device (its size by ioctl) or a Device DAX (*@dax), mapped
 * whole: 0, or 1 with a message. */
static int map_device(const char *dev, unsigned char **base, uint64_t *size,
		      bool *dax)
{
	int fd = open(dev, O_RDWR | O_CLOEXEC);

	*dax = fd >= 0 && (*size = devdax_size(fd)) != 0;
	if (!*dax && (fd < 0 || ioctl(fd, BLKGETSIZE64, size))) {
		fprintf(stderr, "kernel_ns_probe: %s: %s\n", dev, strerror(errno));
		if (fd >= 0)
			close(fd);
		return 1;
	}
	*base = mmap(NULL, *size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	close(fd);
	if (*base == MAP_FAILED) {
		fprintf(stderr, "kernel_ns_probe: mmap %s: %s\n", dev, strerror(errno));
		return 1;
	}
	return 0;
}

/* "xxxxxxxx-xxxx-xxxx-xxxx-xxxxxxxxxxxx" as sysfs prints it, in byte order. */
static int parse_uuid(const char *text, uint8_t uuid[16])
{
	int n = 0;

	for (const char *p = text; *p && n < 32; p++) {
		unsigned v;

		if (*p == '-')
			continue;
		if (sscanf(p, "%1x", &v) != 1)
			return -1;
		uuid[n / 2] = (uint8_t)(n % 2 ? uuid[n / 2] | v : v << 4);
		n++;
	}
	return n == 32 ? 0 : -1;
}

static int btt_raw(bool write, const char *dev, uint64_t off, uint32_t lbasize,
		   uint64_t lba, unsigned seed, const char *parent)
{
	static unsigned char want[4096], got[4096];
	uint8_t parent_uuid[16];
	struct ntm_btt_config c = {
		.lbasize = lbasize, .persist = msync_range,
		.flags = write ? NTM_BTT_CREATE : 0,
	};
	struct ntm_btt *btt;
	unsigned char *base;
	uint64_t size;
	unsigned lane;
	int ret, status = 0;
	bool dax;
	const char *version = getenv("PROBE_BTT_VERSION");

	if (version && !strcmp(version, "2.0"))
		c.flags |= NTM_BTT_V2;
	if (parent) {
		if (parse_uuid(parent, parent_uuid)) {
			fprintf(stderr, "kernel_ns_probe: '%s' is not a uuid\n", parent);
			return 2;
		}
		c.parent_uuid = parent_uuid;
	}
	if (map_device(dev, &base, &size, &dax))
		return 1;
	if (dax)
		c.persist = NULL;	/* no page cache: the CPU persists */
	if (off >= size) {
		fprintf(stderr, "kernel_ns_probe: %s: offset past the end\n", dev);
		munmap(base, size);
		return 1;
	}
	ret = ntm_btt_open(&btt, base + off, size - off, &c);
	if (ret) {
		munmap(base, size);
		return fail(write ? "lay out a BTT" : "open the BTT", ret);
	}
	pattern(want, lbasize, seed);
	lane = ntm_btt_lane_get(btt);
	if (write)
		ret = ntm_btt_write(btt, lane, lba, want);
	else
		ret = ntm_btt_read(btt, lane, lba, got);
	ntm_btt_lane_put(btt, lane);
	printf("dev=%s btt_offset=%llu version=%u.%u lbasize=%u nlba=%llu "
	       "readonly=%d lba=%llu", dev, (unsigned long long)off,
	       ntm_btt_version(btt) >> 16, ntm_btt_version(btt) & 0xffff,
	       ntm_btt_lbasize(btt), (unsigned long long)ntm_btt_nlba(btt),
	       ntm_btt_readonly(btt), (unsigned long long)lba);
	if (ret) {
		printf(" status=%d\n", ret);
		fprintf(stderr, "kernel_ns_probe: %s LBA %llu: %s (%s)\n",
			write ? "write" : "read", (unsigned long long)lba, ntm_errmsg(),
			strerror(-ret));
		status = 1;
	} else if (write) {
		printf(" written=1\n");
	} else {
		ret = memcmp(got, want, lbasize) == 0;
		printf(" read_back=%d\n", ret);
		status = ret ? 0 : 3;
	}
	ntm_btt_close(btt);
	munmap(base, size);
	return status;
}

int main(int argc, char **argv)
{
	if (argc == 3 && !strcmp(argv[1], "info"))
		return info(argv[2]);
	if (argc == 3 && !strcmp(argv[1], "write"))
		return write_back(argv[2]);
	if (argc == 3 && !strcmp(argv[1], "badblocks"))
		return badblocks(argv[2]);
	if (argc == 3 && !strcmp(argv[1], "fiemap"))
		return fiemap(argv[2]);
	if (argc == 4 && !strcmp(argv[1], "zero"))
		return zero(argv[2], (size_t)strtoull(argv[3], NULL, 10));
	if (argc == 4 && !strcmp(argv[1], "pattern"))
		return pattern_out(strtoull(argv[2], NULL, 10),
				   (unsigned)strtoul(argv[3], NULL, 10));
	if ((argc == 7 || argc == 8) &&
	    (!strcmp(argv[1], "btt-write") || !strcmp(argv[1], "btt-read")))
		return btt_raw(argv[1][4] == 'w', argv[2], strtoull(argv[3], NULL, 10),
			       (uint32_t)strtoul(argv[4], NULL, 10),
			       strtoull(argv[5], NULL, 10),
			       (unsigned)strtoul(argv[6], NULL, 10),
			       argc == 8 ? argv[7] : NULL);
	if (argc == 4 && !strcmp(argv[1], "btt") &&
	    (!strcmp(argv[3], "512") || !strcmp(argv[3], "4096")))
		return btt(argv[2], (unsigned)atoi(argv[3]));
	fprintf(stderr, "usage: kernel_ns_probe info|write|badblocks|fiemap PATH\n"
			"       kernel_ns_probe btt PATH 512|4096\n"
			"       kernel_ns_probe zero PATH BYTES\n"
			"       kernel_ns_probe pattern BYTES SEED\n"
			"       kernel_ns_probe btt-write|btt-read DEV OFFSET LBASIZE LBA SEED"
			" [PARENT_UUID]\n");
	return 2;
}
