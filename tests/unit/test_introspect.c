// SPDX-License-Identifier: MIT
/*
 * test_introspect.c - ntmem/introspect.h through the installed library's
 * interface only (public headers, libntmem.so), as `ntmem info` uses it:
 *
 *   regions       ntm_introspect_regions() on a fake tree whose regions,
 *                 buses and providers exist only there: each in name
 *                 order with its domain (an unreadable one's errno), bus,
 *                 provider, async and deep_flush; a stop from the
 *                 callback; a tree without an nd bus; NULL arguments.
 *   regions_cxl   a CXL bus's regions on a fake tree: the CXL region at
 *                 the nd region's address (not the one at another), its
 *                 interleave and its targets' memory devices (a target
 *                 whose port names none by its decoder), a region whose
 *                 address no CXL region has, and a region of another
 *                 bus with a CXL region at its address (none of it).
 *   env           ntm_introspect_env() against the environment meson
 *                 sets (NTMEM_TEST_EXPECT_*): the threshold in effect,
 *                 the override, the ignored lines; a larger size zeroed
 *                 past the struct, a smaller one refused untouched.
 *   badblocks     ntm_introspect_badblocks() with /dev/zero as a devdax
 *                 device of a fake tree: its region's ranges unsorted and
 *                 overlapping, merged, clipped to the device's window and
 *                 in device bytes; a stop; a device and a file the tree
 *                 does not know (none); a directory and NULL arguments.
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
#include <unistd.h>

#include <cmocka.h>

#include <ntmem.h>
#include <ntmem/introspect.h>

#include "../lib/copy_contract.h"
#include "../lib/testutil.h"
#include "../lib/sysfs_tree.h"

static char root[256];

static int setup_tree(void **state)
{
	(void)state;
	if (tu_scratch_dir(root, sizeof(root), "ntmem-introspect"))
		return -1;
	return 0;
}

static int remove_tree(void **state)
{
	(void)state;
	return tu_remove_tree(root);
}

/* What the walk saw: up to eight regions, copied out of the callback. */
struct seen {
	int n, stop_after;
	struct ntm_nd_region r[8];
};

static int collect(void *arg, const struct ntm_nd_region *region)
{
	struct seen *s = arg;

	if (s->n < 8)
		s->r[s->n] = *region;
	s->n++;
	return s->stop_after && s->n == s->stop_after;
}

static void test_regions(void **state)
{
	struct seen s = { 0 };
	char empty[300];

	(void)state;
	st_put(root, "devices/ntmt7/ndbus7/provider", "ntmem.TEST.only-here\n");
	st_region(root, "ntmt7/ndbus7", "region7", "cpu_cache\n");
	st_put(root, "devices/ntmt7/ndbus7/region7/deep_flush", "");
	st_put(root, "devices/ntmt42/ndbus42/provider", "virtio-pmem\n");
	st_region(root, "ntmt42/ndbus42", "region42", NULL);
	st_region_unreadable(root, "ntmt7/ndbus7", "region10");
	/* A region not below an nd bus: no bus, no provider. */
	st_region(root, "elsewhere", "region3", "memory_controller\n");

	assert_int_equal(ntm_introspect_regions(root, collect, &s), 4);
	assert_int_equal(s.n, 4);
	assert_string_equal(s.r[0].name, "region3");
	assert_int_equal(s.r[0].domain, NTM_PERSIST_MEMORY_CONTROLLER);
	assert_string_equal(s.r[0].bus, "");
	assert_string_equal(s.r[0].provider, "");
	assert_false(s.r[0].async);
	assert_false(s.r[0].deep_flush);

	assert_string_equal(s.r[1].name, "region7");
	assert_int_equal(s.r[1].domain, NTM_PERSIST_CPU_CACHE);
	assert_string_equal(s.r[1].bus, "ndbus7");
	assert_string_equal(s.r[1].provider, "ntmem.TEST.only-here");
	assert_false(s.r[1].async);
	assert_true(s.r[1].deep_flush);

	assert_string_equal(s.r[2].name, "region10");
	assert_int_equal(s.r[2].domain, -EISDIR);
	assert_string_equal(s.r[2].bus, "ndbus7");

	assert_string_equal(s.r[3].name, "region42");
	assert_int_equal(s.r[3].domain, NTM_PERSIST_NONE);
	assert_string_equal(s.r[3].bus, "ndbus42");
	assert_string_equal(s.r[3].provider, "virtio-pmem");
	assert_true(s.r[3].async);
	assert_false(s.r[3].deep_flush);

	/* The callback stops the walk: only the regions it was given count. */
	memset(&s, 0, sizeof(s));
	s.stop_after = 2;
	assert_int_equal(ntm_introspect_regions(root, collect, &s), 2);
	assert_int_equal(s.n, 2);

	/* No nd bus under the root: no region, not an error. */
	snprintf(empty, sizeof(empty), "%s/devices", root);
	memset(&s, 0, sizeof(s));
	assert_int_equal(ntm_introspect_regions(empty, collect, &s), 0);
	assert_int_equal(s.n, 0);

	assert_int_equal(ntm_introspect_regions(NULL, collect, &s), -EINVAL);
	assert_non_null(strstr(ntm_errmsg(), "sysfs_root"));
	assert_int_equal(ntm_introspect_regions(root, NULL, &s), -EINVAL);
	assert_non_null(strstr(ntm_errmsg(), "fn"));
	assert_int_equal(s.n, 0);
}

/* A CXL region of the fake tree: its address, interleave and targets. */
static void cxl_region(const char *name, const char *at, const char *ways,
		       const char *const *targets)
{
	char rel[256];

	snprintf(rel, sizeof(rel), "bus/cxl/devices/%s/resource", name);
	st_put(root, rel, at);
	snprintf(rel, sizeof(rel), "bus/cxl/devices/%s/interleave_ways", name);
	st_put(root, rel, ways);
	snprintf(rel, sizeof(rel), "bus/cxl/devices/%s/interleave_granularity", name);
	st_put(root, rel, "256\n");
	for (int i = 0; targets[i]; i++) {
		snprintf(rel, sizeof(rel), "bus/cxl/devices/%s/target%d", name, i);
		st_put(root, rel, targets[i]);
	}
}

static void test_regions_cxl(void **state)
{
	static const char *const two[] = { "decoder2.0\n", "decoder3.0\n", NULL };
	static const char *const one[] = { "decoder4.0\n", NULL };
	struct seen s = { 0 };

	(void)state;
	st_put(root, "devices/cxlroot/ndbus5/provider", "CXL\n");
	st_region(root, "cxlroot/ndbus5", "region5", "memory_controller\n");
	st_put(root, "devices/cxlroot/ndbus5/region5/resource", "0x3d0000000\n");
	st_region(root, "cxlroot/ndbus5", "region6", "memory_controller\n");
	st_put(root, "devices/cxlroot/ndbus5/region6/resource", "0x500000000\n");
	/* Another bus's region, at a CXL region's address. */
	st_put(root, "devices/nfit/ndbus1/provider", "ACPI.NFIT\n");
	st_region(root, "nfit/ndbus1", "region1", "memory_controller\n");
	st_put(root, "devices/nfit/ndbus1/region1/resource", "0x3d0000000\n");
	cxl_region("region0", "0x300000000\n", "1\n", one);
	cxl_region("region2", "0x3d0000000\n", "2\n", two);
	st_link(root, "bus/cxl/devices/endpoint2/uport",
		"../../../../devices/pci0000:0c/0000:0c:00.0/0000:0d:00.0/mem0");

	assert_int_equal(ntm_introspect_regions(root, collect, &s), 3);
	assert_string_equal(s.r[0].name, "region1");
	assert_string_equal(s.r[0].provider, "ACPI.NFIT");
	assert_string_equal(s.r[0].cxl_region, "");
	assert_int_equal(s.r[0].cxl_ways, 0);

	assert_string_equal(s.r[1].name, "region5");
	assert_string_equal(s.r[1].provider, "CXL");
	assert_int_equal(s.r[1].domain, NTM_PERSIST_MEMORY_CONTROLLER);
	assert_string_equal(s.r[1].cxl_region, "region2");
	assert_int_equal(s.r[1].cxl_ways, 2);
	assert_int_equal(s.r[1].cxl_granularity, 256);
	/* endpoint3 names no memory device: its decoder stands in. */
	assert_string_equal(s.r[1].cxl_memdevs, "mem0 decoder3.0");

	assert_string_equal(s.r[2].name, "region6");
	assert_string_equal(s.r[2].provider, "CXL");
	assert_string_equal(s.r[2].cxl_region, "");
	assert_int_equal(s.r[2].cxl_ways, 0);
	assert_string_equal(s.r[2].cxl_memdevs, "");
}

/* An NTMEM_TEST_EXPECT_* value, "" when unset. */
static const char *expected(const char *name)
{
	const char *v = getenv(name);

	return v ? v : "";
}

static void test_env(void **state)
{
	struct {
		struct ntm_env_info info;
		unsigned char past[64];
	} big;
	struct ntm_env_info info;
	const char *domain = expected("NTMEM_TEST_EXPECT_DOMAIN");

	(void)state;
	memset(&info, 0xa5, sizeof(info));
	assert_int_equal(ntm_introspect_env(&info, sizeof(info)), 0);
	/* the CPU's default, which NTMEM_TEST_EXPECT_THRESHOLD "default" names */
	assert_int_equal(info.nt_threshold_default,
			 tu_nt_threshold_default(info.glibc_rep_movsb_threshold));
	assert_int_equal(info.nt_threshold,
			 strcmp(expected("NTMEM_TEST_EXPECT_THRESHOLD"), "default") ?
				 strtoull(expected("NTMEM_TEST_EXPECT_THRESHOLD"),
					  NULL, 0) :
				 info.nt_threshold_default);
	assert_string_equal(ntm_persist_domain_name(info.persist_domain_override),
			    *domain ? domain : "none");
	assert_string_equal(info.ignored, expected("NTMEM_TEST_EXPECT_IGNORED"));

	/* A caller of a later release: the bytes past this struct are 0. */
	memset(&big, 0xa5, sizeof(big));
	assert_int_equal(ntm_introspect_env(&big.info, sizeof(big)), 0);
	assert_memory_equal(&big.info, &info, sizeof(info));
	for (size_t i = 0; i < sizeof(big.past); i++)
		assert_int_equal(big.past[i], 0);

	/*
	 * The copy policy fields (0.5): the active variant's short size,
	 * the facts the default keys on.
	 */
	assert_int_equal(info.nt_short_unaligned,
			 tu_nt_short_unaligned(ntm_variant_isa(ntm_variant_active())));
	assert_true(strcmp(info.cpu_vendor, "intel") == 0 ||
		    strcmp(info.cpu_vendor, "amd") == 0 ||
		    strcmp(info.cpu_vendor, "other") == 0);
#if defined(__x86_64__)
	{
		bool amd, intel;
		unsigned family;

		tu_cpu_id(&amd, &intel, &family);
		assert_int_equal(info.cpu_family, family);
		assert_string_equal(info.cpu_vendor, amd ? "amd" :
					  intel ? "intel" : info.cpu_vendor);
	}
#else
	assert_int_equal(info.cpu_family, 0);
#endif
#if defined(__x86_64__) && defined(__GLIBC__)
	assert_true(info.glibc_rep_movsb_threshold >= 256);
#else
	assert_int_equal(info.glibc_rep_movsb_threshold, 0);
#endif

	/* A caller of the first release: its fields, nothing past them. */
	memset(&big, 0xa5, sizeof(big));
	assert_int_equal(ntm_introspect_env(&big.info, offsetof(struct ntm_env_info,
						     nt_short_unaligned)), 0);
	assert_memory_equal(&big.info, &info,
			    offsetof(struct ntm_env_info, nt_short_unaligned));
	for (size_t i = offsetof(struct ntm_env_info, nt_short_unaligned);
	     i < sizeof(big); i++)
		assert_int_equal(((unsigned char *)&big)[i], 0xa5);

	/* Too small, or no struct: refused, nothing written. */
	memset(&big, 0xa5, sizeof(big));
	assert_int_equal(ntm_introspect_env(&big.info,
					    offsetof(struct ntm_env_info,
						     nt_short_unaligned) - 1),
			 -EINVAL);
	assert_non_null(strstr(ntm_errmsg(), "size"));
	for (size_t i = 0; i < sizeof(big); i++)
		assert_int_equal(((unsigned char *)&big)[i], 0xa5);
	assert_int_equal(ntm_introspect_env(NULL, sizeof(info)), -EINVAL);
	assert_non_null(strstr(ntm_errmsg(), "info"));
}

struct ranges {
	int n, stop_after;
	uint64_t off[8], len[8];
};

static int collect_range(void *arg, uint64_t offset, uint64_t length)
{
	struct ranges *r = arg;

	if (r->n < 8) {
		r->off[r->n] = offset;
		r->len[r->n] = length;
	}
	r->n++;
	return r->stop_after && r->n == r->stop_after;
}

static void test_badblocks(void **state)
{
	struct ranges r = { 0 };
	int zero = open("/dev/zero", O_RDONLY | O_CLOEXEC);
	int null = open("/dev/null", O_RDONLY | O_CLOEXEC);
	int dir = open(root, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	char path[300];
	int file;

	(void)state;
	assert_true(zero >= 0 && null >= 0 && dir >= 0);
	/* /dev/zero (1:5): 1 MiB from sector 2048 of region0. */
	st_put(root, "dev/char/1:5/resource", "0x100100000\n");
	st_put(root, "dev/char/1:5/size", "1048576\n");
	st_put(root, "bus/nd/devices/region0/resource", "0x100000000\n");
	st_put(root, "bus/nd/devices/region0/size", "0x40000000\n");
	/* Out of order, overlapping, one before and one across the end. */
	st_put(root, "bus/nd/devices/region0/badblocks",
	       "2060 4\n2056 6\n10 8\n4094 100\n");
	assert_int_equal(ntm_introspect_badblocks(root, zero, collect_range, &r),
			 2);
	assert_int_equal(r.off[0], 8 * 512);
	assert_int_equal(r.len[0], 8 * 512);
	assert_int_equal(r.off[1], (4094 - 2048) * 512);
	assert_int_equal(r.len[1], 2 * 512);
	r = (struct ranges){ .stop_after = 1 };
	assert_int_equal(ntm_introspect_badblocks(root, zero, collect_range, &r),
			 1);
	assert_int_equal(r.n, 1);

	/* /dev/null (1:3) and a file are not in the tree: none. */
	r = (struct ranges){ 0 };
	assert_int_equal(ntm_introspect_badblocks(root, null, collect_range, &r),
			 0);
	snprintf(path, sizeof(path), "%s/dev/char/1:5/size", root);
	file = open(path, O_RDONLY | O_CLOEXEC);
	assert_true(file >= 0);
	assert_int_equal(ntm_introspect_badblocks(root, file, collect_range, &r),
			 0);
	assert_int_equal(r.n, 0);

	assert_int_equal(ntm_introspect_badblocks(root, dir, collect_range, &r),
			 -EINVAL);
	assert_non_null(strstr(ntm_errmsg(), "neither a regular file"));
	assert_int_equal(ntm_introspect_badblocks(NULL, zero, collect_range, &r),
			 -EINVAL);
	assert_non_null(strstr(ntm_errmsg(), "sysfs_root"));
	assert_int_equal(ntm_introspect_badblocks(root, zero, NULL, &r), -EINVAL);
	assert_non_null(strstr(ntm_errmsg(), "fn"));
	assert_int_equal(ntm_introspect_badblocks(root, -1, collect_range, &r),
			 -EBADF);
	assert_int_equal(r.n, 0);
	close(file);
	close(dir);
	close(null);
	close(zero);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_regions, setup_tree, remove_tree),
		cmocka_unit_test_setup_teardown(test_regions_cxl, setup_tree,
						remove_tree),
		cmocka_unit_test(test_env),
		cmocka_unit_test_setup_teardown(test_badblocks, setup_tree,
						remove_tree),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
