// SPDX-License-Identifier: MIT
/*
 * test_persist_domain.c - persistence domains: sysfs, the override, the
 * namespaces' getters and the dispatch table.
 *
 * There is no NVDIMM here, so the sysfs reader runs on fake trees in a
 * temporary directory, laid out as the kernel lays them out: regions
 * under an nd bus in devices/, links to them in bus/nd/devices/, a devdax
 * device and pmem block devices (one partitioned) below regions, linked
 * from dev/char/ and dev/block/. The regions say cpu_cache,
 * memory_controller, nothing (an empty line), have no attribute (newer
 * kernels hide it then), or one that cannot be read (a directory, which
 * fails even for root). A CXL-style bus region, named regionN too but not
 * an nd region, holds an nd region: the device below must get the nd
 * region's domain, not the outer one's. A second tree has a virtio-pmem
 * bus beside an NFIT one: its regions are asynchronous.
 *
 * NTMEM_TEST_EXPECT_DOMAIN (meson runs the test with and without
 * NTMEM_PERSIST_DOMAIN=cpu_cache) is the override the process must see;
 * unset means none.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
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

#include <ntmem.h>

#include "dispatch.h"
#include "env.h"
#include "persist_domain.h"
#include "../lib/testutil.h"
#include "../lib/sysfs_tree.h"

static char root[64];

static void region(const char *parent, const char *name, const char *domain)
{
	st_region(root, parent, name, domain);
}

static int setup_tree(void **state)
{
	(void)state;
	snprintf(root, sizeof(root), "/tmp/ntmem-domain-XXXXXX");
	assert_non_null(mkdtemp(root));
	region("platform/ndbus0", "region0", "cpu_cache\n");
	region("platform/ndbus0", "region1", "memory_controller\n");
	region("platform/ndbus0", "region2", "\n");
	region("platform/ndbus0", "region3", NULL);
	st_region_unreadable(root, "platform/ndbus0", "region4");
	region("platform/ndbus0", "region10", "memory_controller\n");
	/* A CXL bus region (not on the nd bus) around an nd region. */
	st_put(root, "devices/cxl/region7/persistence_domain", "memory_controller\n");
	region("cxl/region7/ndbus1", "region5", "cpu_cache\n");

	/* devdax0.0 in region0, dax5.0 in region5 (inside the CXL region). */
	st_dir(root, "devices/platform/ndbus0/region0/dax0.0/dax0.0");
	st_link(root, "dev/char/250:0",
		"../../devices/platform/ndbus0/region0/dax0.0/dax0.0");
	st_dir(root, "devices/cxl/region7/ndbus1/region5/dax5.0/dax5.0");
	st_link(root, "dev/char/250:5",
		"../../devices/cxl/region7/ndbus1/region5/dax5.0/dax5.0");
	/* pmem1 (and its partition) in region1; pmem2, 3, 4 in theirs. */
	st_dir(root, "devices/platform/ndbus0/region1/namespace1.0/block/pmem1/pmem1p1");
	st_link(root, "dev/block/259:1",
		"../../devices/platform/ndbus0/region1/namespace1.0/block/pmem1");
	st_link(root, "dev/block/259:2",
		"../../devices/platform/ndbus0/region1/namespace1.0/block/pmem1/pmem1p1");
	for (int i = 2; i <= 4; i++) {
		char rel[128], target[160];

		snprintf(rel, sizeof(rel),
			 "devices/platform/ndbus0/region%d/namespace%d.0/block/pmem%d",
			 i, i, i);
		st_dir(root, rel);
		snprintf(rel, sizeof(rel), "dev/block/259:%d", 10 + i);
		snprintf(target, sizeof(target),
			 "../../devices/platform/ndbus0/region%d/namespace%d.0/block/pmem%d",
			 i, i, i);
		st_link(root, rel, target);
	}
	/* A block device outside every region (device-mapper). */
	st_dir(root, "devices/virtual/block/dm-0");
	st_link(root, "dev/block/253:0", "../../devices/virtual/block/dm-0");
	return 0;
}

static int teardown_tree(void **state)
{
	(void)state;
	return tu_remove_tree(root);
}

static void test_names(void **state)
{
	(void)state;
	assert_string_equal(ntm_persist_domain_name(NTM_PERSIST_NONE), "none");
	assert_string_equal(ntm_persist_domain_name(NTM_PERSIST_MEMORY_CONTROLLER),
			    "memory_controller");
	assert_string_equal(ntm_persist_domain_name(NTM_PERSIST_CPU_CACHE),
			    "cpu_cache");
	assert_string_equal(ntm_persist_domain_name((enum ntm_persist_domain)7),
			    "unknown");
}

static void test_of_dev(void **state)
{
	(void)state;
	assert_int_equal(ntm_persist_domain_of_dev(root, makedev(250, 0), true),
			 NTM_PERSIST_CPU_CACHE);
	/* The nd region inside the CXL region, not the CXL region. */
	assert_int_equal(ntm_persist_domain_of_dev(root, makedev(250, 5), true),
			 NTM_PERSIST_CPU_CACHE);
	assert_int_equal(ntm_persist_domain_of_dev(root, makedev(259, 1), false),
			 NTM_PERSIST_MEMORY_CONTROLLER);
	assert_int_equal(ntm_persist_domain_of_dev(root, makedev(259, 2), false),
			 NTM_PERSIST_MEMORY_CONTROLLER);
	/* Empty attribute, no attribute: nothing promised. */
	assert_int_equal(ntm_persist_domain_of_dev(root, makedev(259, 12), false),
			 NTM_PERSIST_NONE);
	assert_int_equal(ntm_persist_domain_of_dev(root, makedev(259, 13), false),
			 NTM_PERSIST_NONE);
	/* An attribute that cannot be read is an error, not a guess. */
	assert_true(ntm_persist_domain_of_dev(root, makedev(259, 14), false) < 0);
	/* Outside every region; not in sysfs; char vs block namespaces. */
	assert_int_equal(ntm_persist_domain_of_dev(root, makedev(253, 0), false),
			 NTM_PERSIST_NONE);
	assert_int_equal(ntm_persist_domain_of_dev(root, makedev(250, 9), true),
			 NTM_PERSIST_NONE);
	assert_int_equal(ntm_persist_domain_of_dev(root, makedev(250, 0), false),
			 NTM_PERSIST_NONE);
}

/*
 * A guest's two buses: an NFIT one and virtio-pmem's, whose region the
 * kernel marks asynchronous. sysfs shows it only in the bus's provider.
 */
static void test_virtio_bus(void **state)
{
	char vroot[] = "/tmp/ntmem-domain-virtio-XXXXXX", path[128], text[8] = "";
	struct ntm_nd_region r;
	FILE *f;

	(void)state;
	assert_non_null(mkdtemp(vroot));
	st_region(vroot, "ACPI0012:00/ndbus0", "region0", "memory_controller\n");
	st_put(vroot, "devices/ACPI0012:00/ndbus0/provider", "ACPI.NFIT\n");
	st_region(vroot, "pci0000:00/virtio1/ndbus1", "region1", NULL);
	st_put(vroot, "devices/pci0000:00/virtio1/ndbus1/provider", "virtio-pmem\n");
	st_put(vroot, "devices/pci0000:00/virtio1/ndbus1/region1/deep_flush", "1\n");
	st_dir(vroot, "devices/ACPI0012:00/ndbus0/region0/dax0.0/dax0.0");
	st_link(vroot, "dev/char/250:0",
		"../../devices/ACPI0012:00/ndbus0/region0/dax0.0/dax0.0");
	st_dir(vroot, "devices/pci0000:00/virtio1/ndbus1/region1/dax1.0/dax1.0");
	st_link(vroot, "dev/char/250:1",
		"../../devices/pci0000:00/virtio1/ndbus1/region1/dax1.0/dax1.0");
	st_dir(vroot, "devices/pci0000:00/virtio1/ndbus1/region1/namespace1.0/block/pmem1");
	st_link(vroot, "dev/block/259:1",
		"../../devices/pci0000:00/virtio1/ndbus1/region1/namespace1.0/block/pmem1");

	assert_int_equal(ntm_nd_region_of_dev(vroot, makedev(250, 0), true, &r), 1);
	assert_string_equal(r.name, "region0");
	assert_string_equal(r.bus, "ndbus0");
	assert_string_equal(r.provider, "ACPI.NFIT");
	assert_int_equal(r.domain, NTM_PERSIST_MEMORY_CONTROLLER);
	assert_false(r.async);
	assert_false(r.deep_flush);
	/* devdax and fsdax on virtio-pmem: asynchronous, no domain. */
	assert_int_equal(ntm_nd_region_of_dev(vroot, makedev(250, 1), true, &r), 1);
	assert_string_equal(r.name, "region1");
	assert_string_equal(r.bus, "ndbus1");
	assert_string_equal(r.provider, "virtio-pmem");
	assert_int_equal(r.domain, NTM_PERSIST_NONE);
	assert_true(r.async);
	assert_true(r.deep_flush);
	assert_int_equal(ntm_nd_region_of_dev(vroot, makedev(259, 1), false, &r), 1);
	assert_true(r.async);
	assert_int_equal(ntm_nd_region_of_dev(vroot, makedev(259, 9), false, &r), 0);

	/* The flush request: "1" written to deep_flush; none without it. */
	assert_int_equal(ntm_nd_region_deep_flush(vroot, "region1"), 0);
	snprintf(path, sizeof(path),
		 "%s/devices/pci0000:00/virtio1/ndbus1/region1/deep_flush", vroot);
	f = fopen(path, "r");
	assert_non_null(f);
	assert_non_null(fgets(text, sizeof(text), f));
	fclose(f);
	assert_string_equal(text, "1\n");
	assert_int_equal(ntm_nd_region_deep_flush(vroot, "region0"), -EOPNOTSUPP);
	assert_int_equal(tu_remove_tree(vroot), 0);
}

struct seen {
	char names[16][32];
	int domains[16];
	int n;
	int stop_at;	/* stop the walk after this many, 0: never */
};

static int collect(void *arg, const char *name, int domain)
{
	struct seen *s = arg;

	snprintf(s->names[s->n], sizeof(s->names[s->n]), "%s", name);
	s->domains[s->n++] = domain;
	return s->stop_at && s->n == s->stop_at ? 42 : 0;
}

static void test_regions(void **state)
{
	static const char *const want[] = { "region0", "region1", "region2",
					    "region3", "region4", "region5",
					    "region10" };
	struct seen s = { .n = 0 };

	(void)state;
	assert_int_equal(ntm_persist_domain_regions(root, collect, &s), 7);
	assert_int_equal(s.n, 7);
	for (int i = 0; i < 7; i++)
		assert_string_equal(s.names[i], want[i]);
	assert_int_equal(s.domains[0], NTM_PERSIST_CPU_CACHE);
	assert_int_equal(s.domains[1], NTM_PERSIST_MEMORY_CONTROLLER);
	assert_int_equal(s.domains[2], NTM_PERSIST_NONE);
	assert_int_equal(s.domains[3], NTM_PERSIST_NONE);
	assert_true(s.domains[4] < 0);
	assert_int_equal(s.domains[5], NTM_PERSIST_CPU_CACHE);
	assert_int_equal(s.domains[6], NTM_PERSIST_MEMORY_CONTROLLER);

	/* The callback's non-zero return stops the walk and is returned. */
	memset(&s, 0, sizeof(s));
	s.stop_at = 2;
	assert_int_equal(ntm_persist_domain_regions(root, collect, &s), 42);
	assert_int_equal(s.n, 2);
}

/* pmem_has_auto_flush()'s rule on trees of a few regions each. */
static void test_all_cpu_cache(void **state)
{
	char base[] = "/tmp/ntmem-domain-all-XXXXXX", saved[sizeof(root)];

	(void)state;
	/* The full tree has memory_controller regions. */
	assert_int_equal(ntm_persist_domain_all_cpu_cache(root), 0);

	memcpy(saved, root, sizeof(root));
	assert_non_null(mkdtemp(base));
	snprintf(root, sizeof(root), "%s", base);
	/* No nd bus at all, then an empty one: no region, no auto flush. */
	assert_int_equal(ntm_persist_domain_all_cpu_cache(root), 0);
	st_dir(root, "bus/nd/devices");
	assert_int_equal(ntm_persist_domain_all_cpu_cache(root), 0);
	region("platform/ndbus0", "region0", "cpu_cache\n");
	region("platform/ndbus0", "region1", "cpu_cache\n");
	assert_int_equal(ntm_persist_domain_all_cpu_cache(root), 1);
	/* One unreadable region: cannot tell. */
	st_region_unreadable(root, "platform/ndbus0", "region2");
	assert_int_equal(ntm_persist_domain_all_cpu_cache(root), -1);
	/* One known not to be cpu_cache settles it, unreadable or not. */
	region("platform/ndbus0", "region3", "\n");
	assert_int_equal(ntm_persist_domain_all_cpu_cache(root), 0);
	assert_int_equal(tu_remove_tree(root), 0);
	memcpy(root, saved, sizeof(root));
}

static void test_env(void **state)
{
	const char *started = getenv("NTMEM_PERSIST_DOMAIN");
	char *saved = started ? strdup(started) : NULL;
	struct ntm_env env;

	(void)state;
	setenv("NTMEM_PERSIST_DOMAIN", "cpu_cache", 1);
	ntm_env_read(&env);
	assert_int_equal(env.persist_domain, NTM_PERSIST_CPU_CACHE);
	assert_string_equal(env.bad, "");
	setenv("NTMEM_PERSIST_DOMAIN", "memory_controller", 1);
	ntm_env_read(&env);
	assert_int_equal(env.persist_domain, NTM_PERSIST_MEMORY_CONTROLLER);
	setenv("NTMEM_PERSIST_DOMAIN", "", 1);
	ntm_env_read(&env);
	assert_int_equal(env.persist_domain, -1);
	/* Unknown, and "none" (not a value one can ask for): ignored, named. */
	for (int i = 0; i < 2; i++) {
		setenv("NTMEM_PERSIST_DOMAIN", i ? "none" : "eadr", 1);
		ntm_env_read(&env);
		assert_int_equal(env.persist_domain, -1);
		assert_non_null(strstr(env.bad, "NTMEM_PERSIST_DOMAIN="));
		assert_non_null(strstr(env.bad, "memory_controller|cpu_cache"));
	}
	/* As meson started the process, for the dispatcher's first read. */
	if (saved)
		setenv("NTMEM_PERSIST_DOMAIN", saved, 1);
	else
		unsetenv("NTMEM_PERSIST_DOMAIN");
	free(saved);
}

/* What this process was started with (meson sets both variables). */
static enum ntm_persist_domain expected_override(void)
{
	const char *e = getenv("NTMEM_TEST_EXPECT_DOMAIN");

	if (!e || !*e)
		return NTM_PERSIST_NONE;
	if (strcmp(e, "cpu_cache") == 0)
		return NTM_PERSIST_CPU_CACHE;
	assert_string_equal(e, "memory_controller");
	return NTM_PERSIST_MEMORY_CONTROLLER;
}

static void test_dispatch(void **state)
{
	enum ntm_persist_domain over = expected_override();
	const struct ntm_dispatch *d = ntm_dispatch();

	(void)state;
	assert_int_equal(d->domain_override, over);
	assert_int_equal(ntm_persist_domain_active(),
			 over ? over : NTM_PERSIST_MEMORY_CONTROLLER);
	/* The variant's copy, whose edges get the write-back below, if any. */
	assert_ptr_equal(d->memcpy_flush, ntm_variant_memcpy_flush(d->variant));
	if (over == NTM_PERSIST_CPU_CACHE) {
		/* Nothing to write back: the table says so. */
		assert_int_equal(ntm_flush_active(), NTM_FLUSH_NONE);
		assert_null(d->flush);
	} else if (ntm_cpu_features() & NTM_CPU_CLFLUSH) {
		assert_int_not_equal(ntm_flush_active(), NTM_FLUSH_NONE);
	}
}

static void check_ns_domain(struct ntm_ns *ns, enum ntm_persist_domain own)
{
	enum ntm_persist_domain over = expected_override();
	char *p = ntm_ns_base(ns);

	assert_int_equal(ntm_ns_persist_domain(ns), over ? over : own);
	/* The setter wins over both, and refuses what is no domain. */
	assert_int_equal(ntm_ns_set_persist_domain(ns, NTM_PERSIST_CPU_CACHE), 0);
	assert_int_equal(ntm_ns_persist_domain(ns), NTM_PERSIST_CPU_CACHE);
	memset(p, 0x5a, 4096);
	assert_int_equal(ntm_ns_persist(ns, p, 4096), 0);
	assert_int_equal(ntm_ns_set_persist_domain(ns, (enum ntm_persist_domain)3),
			 -EINVAL);
	assert_non_null(strstr(ntm_errmsg(), "domain 3"));
	assert_int_equal(ntm_ns_persist_domain(ns), NTM_PERSIST_CPU_CACHE);
	if (over == NTM_PERSIST_CPU_CACHE) {
		/* Nothing writes back in this process: refused, named. */
		assert_int_equal(ntm_ns_set_persist_domain(ns,
				 NTM_PERSIST_MEMORY_CONTROLLER), -EINVAL);
		assert_non_null(strstr(ntm_errmsg(), "NTMEM_PERSIST_DOMAIN"));
		assert_int_equal(ntm_ns_persist_domain(ns), NTM_PERSIST_CPU_CACHE);
	} else {
		assert_int_equal(ntm_ns_set_persist_domain(ns,
				 NTM_PERSIST_MEMORY_CONTROLLER), 0);
		assert_int_equal(ntm_ns_persist_domain(ns),
				 NTM_PERSIST_MEMORY_CONTROLLER);
	}
	assert_int_equal(ntm_ns_persist(ns, p, 4096), 0);
	assert_int_equal(ntm_ns_set_persist_domain(NULL, NTM_PERSIST_NONE), -EINVAL);
}

static void test_ns(void **state)
{
	char dir_path[] = "/tmp/ntmem-domain-ns-XXXXXX", path[96];
	const char *shm = access("/dev/shm", W_OK) == 0 ? "/dev/shm" : "/tmp";
	struct ntm_ns *ns;

	(void)state;
	/* Anonymous memory and a plain file have no CPU-cache durability. */
	assert_int_equal(ntm_ns_anon(&ns, 1 << 20, 4096), 0);
	check_ns_domain(ns, NTM_PERSIST_NONE);
	ntm_ns_close(ns);

	assert_non_null(mkdtemp(dir_path));
	snprintf(path, sizeof(path), "%s/file", dir_path);
	assert_int_equal(ntm_ns_create(&ns, path, 1 << 20, 4096, NTM_NS_TEMPORARY), 0);
	if (ntm_ns_kind(ns) == NTM_NS_FILE)	/* not on a DAX file system */
		check_ns_domain(ns, NTM_PERSIST_NONE);
	ntm_ns_close(ns);
	/* An emulated namespace stands in for ADR pmem, on disk or tmpfs. */
	snprintf(path, sizeof(path), "%s/emu", dir_path);
	assert_int_equal(ntm_ns_create(&ns, path, 1 << 20, 4096,
				       NTM_NS_TEMPORARY | NTM_NS_EMULATE), 0);
	if (ntm_ns_kind(ns) == NTM_NS_EMULATED)
		check_ns_domain(ns, NTM_PERSIST_MEMORY_CONTROLLER);
	ntm_ns_close(ns);
	rmdir(dir_path);

	snprintf(path, sizeof(path), "%s/ntmem-domain-%d", shm, (int)getpid());
	assert_int_equal(ntm_ns_create(&ns, path, 1 << 20, 4096, NTM_NS_EMULATE), 0);
	ntm_ns_close(ns);
	/* Opened again: the same domain as when created. */
	assert_int_equal(ntm_ns_open(&ns, path, NTM_NS_EMULATE), 0);
	check_ns_domain(ns, NTM_PERSIST_MEMORY_CONTROLLER);
	ntm_ns_close(ns);
	unlink(path);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_names),
		cmocka_unit_test(test_of_dev),
		cmocka_unit_test(test_virtio_bus),
		cmocka_unit_test(test_regions),
		cmocka_unit_test(test_all_cpu_cache),
		cmocka_unit_test(test_env),
		cmocka_unit_test(test_dispatch),
		cmocka_unit_test(test_ns),
	};

	return cmocka_run_group_tests(tests, setup_tree, teardown_tree);
}
