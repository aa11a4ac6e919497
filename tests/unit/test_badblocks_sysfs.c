// SPDX-License-Identifier: MIT
/*
 * test_badblocks_sysfs.c - a devdax device's media errors from sysfs.
 *
 * There is no NVDIMM here, so the reader runs on a fake sysfs tree in a
 * temporary directory: a device window inside one of two regions, region
 * lists with ranges before, across, inside and after the window. The
 * translation alone is checked on the same ranges, plus bad geometry.
 *
 * An fsdax file's list is its block device's mapped through its FIEMAP
 * extents: the mapping alone on made-up extents, then a real file on the
 * scratch file system (skipped where FIEMAP is not supported, as on
 * tmpfs) under a fake sysfs tree whose block device, whole or a
 * partition, is the file's st_dev, with a bad range where FIEMAP says the
 * file's second 4 KiB lie.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <fcntl.h>
#include <linux/fiemap.h>
#include <linux/fs.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include <cmocka.h>

#include "badblocks.h"
#include "../lib/testutil.h"
#include "../lib/sysfs_tree.h"

#define REGION0 0x100000000ull		/* region0's first byte */
#define WINDOW (REGION0 + (1u << 20))	/* the device: sector 2048 on */
#define WINDOW_SIZE (4u << 20)		/* 8192 sectors */

/* Region-relative ranges: before, across the start, inside, at the end. */
static const char region0_list[] =
	"0 10\n2040 16\n4096 8\n10230 20\n10240 100\n";

struct got {
	uint64_t s[16], n[16];
	int count;
};

static int collect(void *arg, uint64_t sector, uint64_t count)
{
	struct got *g = arg;

	if (g->count == 16)
		return -ENOSPC;
	g->s[g->count] = sector;
	g->n[g->count++] = count;
	return 0;
}

static void expect_window(const struct got *g)
{
	/* 2040+16 clipped to 2048..2056; 4096+8; 10230+20 clipped to 10240. */
	assert_int_equal(g->count, 3);
	assert_int_equal(g->s[0], 0);
	assert_int_equal(g->n[0], 8);
	assert_int_equal(g->s[1], 4096 - 2048);
	assert_int_equal(g->n[1], 8);
	assert_int_equal(g->s[2], 10230 - 2048);
	assert_int_equal(g->n[2], 10);
}

static void test_translate(void **state)
{
	struct got g = { .count = 0 };

	(void)state;
	assert_int_equal(ntm_badblocks_translate(region0_list, REGION0, WINDOW,
						 WINDOW_SIZE, collect, &g), 0);
	expect_window(&g);

	/* A window before its region, unaligned, or empty is refused. */
	assert_int_equal(ntm_badblocks_translate("", REGION0, REGION0 - 512,
						 WINDOW_SIZE, collect, &g), -EINVAL);
	assert_int_equal(ntm_badblocks_translate("", REGION0, WINDOW + 1,
						 WINDOW_SIZE, collect, &g), -EINVAL);
	assert_int_equal(ntm_badblocks_translate("", REGION0, WINDOW, 0,
						 collect, &g), -EINVAL);

	/* An error from the callback stops the walk and is returned. */
	g.count = 16;
	assert_int_equal(ntm_badblocks_translate(region0_list, REGION0, WINDOW,
						 WINDOW_SIZE, collect, &g), -ENOSPC);
}

static void put(const char *root, const char *rel, const char *text)
{
	char path[512], dir[640];
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", root, rel);
	snprintf(dir, sizeof(dir), "mkdir -p \"$(dirname '%s')\"", path);
	assert_int_equal(system(dir), 0);
	f = fopen(path, "w");
	assert_non_null(f);
	fputs(text, f);
	fclose(f);
}

static void test_devdax_tree(void **state)
{
	char root[128], cmd[600], res[32];
	struct got g = { .count = 0 };
	dev_t dev = makedev(250, 3);

	(void)state;
	assert_int_equal(tu_scratch_dir(root, sizeof(root), "ntmem-sysfs"), 0);

	/* No tree at all: no list, no error. */
	assert_int_equal(ntm_badblocks_devdax(root, dev, WINDOW_SIZE, collect, &g), 0);
	assert_int_equal(g.count, 0);

	snprintf(res, sizeof(res), "0x%llx\n", (unsigned long long)WINDOW);
	put(root, "dev/char/250:3/resource", res);
	put(root, "bus/nd/devices/region0/resource", "0x100000000\n");
	put(root, "bus/nd/devices/region0/size", "0x40000000\n");
	put(root, "bus/nd/devices/region0/badblocks", region0_list);
	/* A region that does not hold the window: its list must be ignored. */
	put(root, "bus/nd/devices/region1/resource", "0x200000000\n");
	put(root, "bus/nd/devices/region1/size", "0x40000000\n");
	put(root, "bus/nd/devices/region1/badblocks", "0 100000\n");
	put(root, "bus/nd/devices/namespace0.0/resource", "0x100000000\n");

	assert_int_equal(ntm_badblocks_devdax(root, dev, WINDOW_SIZE, collect, &g), 0);
	expect_window(&g);

	/* Another device number has no resource file: nothing. */
	g.count = 0;
	assert_int_equal(ntm_badblocks_devdax(root, makedev(250, 4), WINDOW_SIZE,
					      collect, &g), 0);
	assert_int_equal(g.count, 0);

	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", root);
	assert_int_equal(system(cmd), 0);
}

static void test_map_extents(void **state)
{
	/* 64 KiB at disk byte 1 MiB, then 64 KiB at 8 MiB (of the partition). */
	static const struct ntm_bb_extent ext[] = {
		{ 0, 1u << 20, 64u << 10 },
		{ 64u << 10, 8u << 20, 64u << 10 },
	};
	/*
	 * Disk sectors, partition from 2048: before it; 2 in the second
	 * extent at its 4 KiB; across the first extent's end; nowhere in the
	 * file; the last sectors of the second extent (past the file's end).
	 */
	static const char list[] = "0 10\n18440 2\n4222 4\n100000 8\n18554 8\n";
	struct got g = { 0 };
	uint64_t size = (128u << 10) - 1536;	/* the last 3 sectors not in it */

	(void)state;
	assert_int_equal(ntm_badblocks_map_extents(list, 2048, ext, 2, size,
						   collect, &g), 0);
	assert_int_equal(g.count, 3);
	assert_int_equal(g.s[0], 136);		/* 64 KiB + 4 KiB */
	assert_int_equal(g.n[0], 2);
	assert_int_equal(g.s[1], 126);		/* the first extent's last 2 */
	assert_int_equal(g.n[1], 2);
	assert_int_equal(g.s[2], 250);		/* clipped to the file */
	assert_int_equal(g.n[2], 3);
	/* Whole disk: the same list means other bytes. */
	g.count = 0;
	assert_int_equal(ntm_badblocks_map_extents("2056 8\n", 0, ext, 2, size,
						   collect, &g), 0);
	assert_int_equal(g.count, 1);
	assert_int_equal(g.s[0], 8);
	assert_int_equal(g.n[0], 8);
}

/* Where byte 4096 of @fd is on its device, or -1 without FIEMAP. */
static long long physical_of_second_page(int fd)
{
	struct {
		struct fiemap fm;
		struct fiemap_extent e[1];
	} q;

	memset(&q, 0, sizeof(q));
	q.fm.fm_start = 4096;
	q.fm.fm_length = 4096;
	q.fm.fm_flags = FIEMAP_FLAG_SYNC;
	q.fm.fm_extent_count = 1;
	if (ioctl(fd, FS_IOC_FIEMAP, &q.fm) || q.fm.fm_mapped_extents != 1)
		return -1;
	return (long long)(q.e[0].fe_physical + (4096 - q.e[0].fe_logical));
}

static void test_fsdax_file(void **state)
{
	char dir[] = "/tmp/ntmem-bb-fsdax-XXXXXX", path[192], rel[64], text[192];
	char buf[4096];
	struct got g = { 0 };
	long long phys;
	struct stat st;
	int fd;

	(void)state;
	assert_non_null(mkdtemp(dir));
	snprintf(path, sizeof(path), "%s/file", dir);
	fd = open(path, O_RDWR | O_CREAT | O_EXCL, 0600);
	assert_true(fd >= 0);
	memset(buf, 0x5a, sizeof(buf));
	for (int i = 0; i < 32; i++)
		assert_int_equal(write(fd, buf, sizeof(buf)), (ssize_t)sizeof(buf));
	assert_int_equal(fsync(fd), 0);
	assert_int_equal(fstat(fd, &st), 0);
	phys = physical_of_second_page(fd);
	if (phys < 0 || phys % 512) {
		close(fd);
		tu_remove_tree(dir);
		skip();
	}
	snprintf(rel, sizeof(rel), "sys/dev/block/%u:%u", major(st.st_dev),
		 minor(st.st_dev));

	/* The file's device is a whole disk: its own list. */
	st_dir(dir, "sys/devices/virtual/block/pmem0");
	snprintf(text, sizeof(text), "%lld 8\n", phys / 512);
	st_put(dir, "sys/devices/virtual/block/pmem0/badblocks", text);
	st_link(dir, rel, "../../devices/virtual/block/pmem0");
	snprintf(path, sizeof(path), "%s/sys", dir);
	assert_int_equal(ntm_badblocks_fsdax(path, fd, 32 * 4096, collect, &g), 0);
	assert_int_equal(g.count, 1);
	assert_int_equal(g.s[0], 8);
	assert_int_equal(g.n[0], 8);

	/* A partition from disk sector 2048: the disk's list, shifted. */
	snprintf(path, sizeof(path), "%s/%s", dir, rel);
	assert_int_equal(unlink(path), 0);
	st_put(dir, "sys/devices/virtual/block/pmem1/pmem1p1/partition", "1\n");
	st_put(dir, "sys/devices/virtual/block/pmem1/pmem1p1/start", "2048\n");
	snprintf(text, sizeof(text), "%lld 8\n", 2048 + phys / 512);
	st_put(dir, "sys/devices/virtual/block/pmem1/badblocks", text);
	st_link(dir, rel, "../../devices/virtual/block/pmem1/pmem1p1");
	snprintf(path, sizeof(path), "%s/sys", dir);
	g.count = 0;
	assert_int_equal(ntm_badblocks_fsdax(path, fd, 32 * 4096, collect, &g), 0);
	assert_int_equal(g.count, 1);
	assert_int_equal(g.s[0], 8);
	assert_int_equal(g.n[0], 8);

	/* An empty list, and a device with none: nothing. */
	st_put(dir, "sys/devices/virtual/block/pmem1/badblocks", "");
	g.count = 0;
	assert_int_equal(ntm_badblocks_fsdax(path, fd, 32 * 4096, collect, &g), 0);
	assert_int_equal(g.count, 0);
	snprintf(text, sizeof(text), "%s/sys/devices/virtual/block/pmem1/badblocks", dir);
	assert_int_equal(unlink(text), 0);
	assert_int_equal(ntm_badblocks_fsdax(path, fd, 32 * 4096, collect, &g), 0);
	assert_int_equal(g.count, 0);
	close(fd);
	assert_int_equal(tu_remove_tree(dir), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_translate),
		cmocka_unit_test(test_devdax_tree),
		cmocka_unit_test(test_map_extents),
		cmocka_unit_test(test_fsdax_file),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
