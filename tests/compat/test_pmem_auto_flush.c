// SPDX-License-Identifier: MIT
/*
 * test_pmem_auto_flush.c - the libpmem drop-in's pmem_has_auto_flush() on
 * fake sysfs trees (sysfs_tree.h): PMDK's answer is 1 only when there are
 * nd regions and every one says cpu_cache, 0 when one does not (an empty
 * or missing attribute included) or there is none, -1 when one cannot be
 * read. NTMEM_PERSIST_DOMAIN, when set, is the answer instead (PMDK has no
 * such variable; the drop-in follows ntmem's own write-backs with it).
 *
 * Built with the drop-in's sources and the library's internal archive, so
 * the test can point the sysfs reader at its tree (ntm_sysfs_root).
 */
#define _GNU_SOURCE
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>

#include <cmocka.h>

#include <libpmem.h>

#include "persist_domain.h"
#include "../lib/testutil.h"
#include "../lib/sysfs_tree.h"

static char root[64];

static int setup(void **state)
{
	(void)state;
	snprintf(root, sizeof(root), "/tmp/ntmem-auto-flush-XXXXXX");
	if (!mkdtemp(root))
		return -1;
	ntm_sysfs_root = root;
	unsetenv("NTMEM_PERSIST_DOMAIN");
	return 0;
}

static int teardown(void **state)
{
	(void)state;
	ntm_sysfs_root = "/sys";
	return tu_remove_tree(root);
}

static void test_regions(void **state)
{
	(void)state;
	/* No nd bus, then a bus without regions: nothing flushes itself. */
	assert_int_equal(pmem_has_auto_flush(), 0);
	st_dir(root, "bus/nd/devices");
	assert_int_equal(pmem_has_auto_flush(), 0);
	/* eADR everywhere, a CXL region among them. */
	st_region(root, "platform/ndbus0", "region0", "cpu_cache\n");
	st_region(root, "cxl/region9/ndbus1", "region1", "cpu_cache\n");
	assert_int_equal(pmem_has_auto_flush(), 1);
	/* Repeated calls read sysfs again and agree. */
	assert_int_equal(pmem_has_auto_flush(), 1);
	/* One unreadable region: PMDK's -1. */
	st_region_unreadable(root, "platform/ndbus0", "region2");
	assert_int_equal(pmem_has_auto_flush(), -1);
	/* One that promises only ADR: 0, whatever else there is. */
	st_region(root, "platform/ndbus0", "region3", "memory_controller\n");
	assert_int_equal(pmem_has_auto_flush(), 0);
}

static void test_empty_and_missing(void **state)
{
	char sub[96];

	(void)state;
	for (int i = 0; i < 2; i++) {
		snprintf(sub, sizeof(sub), "%s/t%d", root, i);
		ntm_sysfs_root = sub;
		st_region(sub, "platform/ndbus0", "region0", "cpu_cache\n");
		/* The kernel's empty line, then no attribute at all. */
		st_region(sub, "platform/ndbus0", "region1", i ? NULL : "\n");
		assert_int_equal(pmem_has_auto_flush(), 0);
	}
	ntm_sysfs_root = root;
}

static void test_override(void **state)
{
	char eadr[96], adr[96];

	(void)state;
	snprintf(eadr, sizeof(eadr), "%s/eadr", root);
	snprintf(adr, sizeof(adr), "%s/adr", root);
	st_region(eadr, "platform/ndbus0", "region0", "cpu_cache\n");
	st_region(adr, "platform/ndbus0", "region0", "memory_controller\n");

	ntm_sysfs_root = eadr;
	assert_int_equal(pmem_has_auto_flush(), 1);
	setenv("NTMEM_PERSIST_DOMAIN", "memory_controller", 1);
	assert_int_equal(pmem_has_auto_flush(), 0);
	/* ADR in sysfs; the user says the caches are persistent. */
	ntm_sysfs_root = adr;
	setenv("NTMEM_PERSIST_DOMAIN", "cpu_cache", 1);
	assert_int_equal(pmem_has_auto_flush(), 1);
	/* An unknown value is ignored: sysfs answers again. */
	setenv("NTMEM_PERSIST_DOMAIN", "eadr", 1);
	assert_int_equal(pmem_has_auto_flush(), 0);
	unsetenv("NTMEM_PERSIST_DOMAIN");
	ntm_sysfs_root = root;
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_regions),
		cmocka_unit_test(test_empty_and_missing),
		cmocka_unit_test(test_override),
	};

	return cmocka_run_group_tests(tests, setup, teardown);
}
