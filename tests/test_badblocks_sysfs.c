// SPDX-License-Identifier: MIT
/*
 * test_badblocks_sysfs.c - a devdax device's media errors from sysfs.
 *
 * There is no NVDIMM here, so the reader runs on a fake sysfs tree in a
 * temporary directory: a device window inside one of two regions, region
 * lists with ranges before, across, inside and after the window. The
 * translation alone is checked on the same ranges, plus bad geometry.
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
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include <cmocka.h>

#include "badblocks.h"
#include "testutil.h"

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

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_translate),
		cmocka_unit_test(test_devdax_tree),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
