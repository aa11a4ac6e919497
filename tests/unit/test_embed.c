// SPDX-License-Identifier: MIT
/*
 * test_embed.c - the embedding API (ntmem/embed.h), in the order a
 * library that embeds ntmem calls it:
 *
 *   verbose       NTMEM_VERBOSE's one rule (ntm_env_switch()): every word
 *                 of both tables in any case, empty, unset, an unknown
 *                 word (off and described for the warning line); and
 *                 ntm_verbose() before the choice, which it must not make.
 *   caps          ntm_dispatch_set_caps(): -EINVAL out of range (and the
 *                 choice still not made), 0 before the choice, the
 *                 ceilings applied by it, -EBUSY after it.
 *   open_fd       ntm_ns_open_fd() on a descriptor the test keeps and
 *                 closes: NTM_NS_ANY_SIZE for a length that is not whole
 *                 pages, unknown flags, a closed descriptor, NULLs.
 *   domain        ntm_persist_domain_system() on fake sysfs trees and
 *                 under NTMEM_PERSIST_DOMAIN.
 *
 * One process, tests in this order: the first two run before anything
 * makes the dispatcher's choice.
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
#include <unistd.h>

#include <cmocka.h>

#include <ntmem.h>
#include <ntmem/embed.h>

#include "dispatch.h"
#include "env.h"
#include "persist_domain.h"
#include "../lib/testutil.h"
#include "../lib/sysfs_tree.h"

static void test_verbose(void **state)
{
	static const char *const on[] = { "1", "yes", "YES", "Yes", "true",
					  "TRUE", "on", "On" };
	static const char *const off[] = { "0", "no", "NO", "false", "False",
					   "off", "OFF", "" };
	static const char *const unknown[] = { "2", "y", "yess", "enable",
					       " 1", "1 ", "-1", "verbose" };
	struct ntm_env env;

	(void)state;
	for (size_t i = 0; i < sizeof(on) / sizeof(*on); i++) {
		assert_int_equal(ntm_env_switch(on[i]), 1);
		assert_int_equal(setenv("NTMEM_VERBOSE", on[i], 1), 0);
		assert_true(ntm_verbose());
		ntm_env_read(&env);
		assert_true(env.verbose);
		assert_string_equal(env.bad, "");
	}
	for (size_t i = 0; i < sizeof(off) / sizeof(*off); i++) {
		assert_int_equal(ntm_env_switch(off[i]), 0);
		assert_int_equal(setenv("NTMEM_VERBOSE", off[i], 1), 0);
		assert_false(ntm_verbose());
		ntm_env_read(&env);
		assert_false(env.verbose);
		assert_string_equal(env.bad, "");
	}
	assert_int_equal(ntm_env_switch(NULL), 0);
	for (size_t i = 0; i < sizeof(unknown) / sizeof(*unknown); i++) {
		char want[64];

		assert_int_equal(ntm_env_switch(unknown[i]), -1);
		assert_int_equal(setenv("NTMEM_VERBOSE", unknown[i], 1), 0);
		assert_false(ntm_verbose());
		ntm_env_read(&env);
		assert_false(env.verbose);
		snprintf(want, sizeof(want), "NTMEM_VERBOSE=%s ignored", unknown[i]);
		assert_non_null(strstr(env.bad, want));
	}
	assert_int_equal(unsetenv("NTMEM_VERBOSE"), 0);
	assert_false(ntm_verbose());
	/* Asking made no choice: the ceilings below can still be set. */
	assert_null(__atomic_load_n(&ntm_dispatch_published, __ATOMIC_ACQUIRE));
}

static void test_caps(void **state)
{
	(void)state;
	assert_null(__atomic_load_n(&ntm_dispatch_published, __ATOMIC_ACQUIRE));
	assert_int_equal(ntm_dispatch_set_caps(-2, -1), -EINVAL);
	assert_non_null(strstr(ntm_errmsg(), "isa_cap -2"));
	assert_int_equal(ntm_dispatch_set_caps(NTM_ISA_AVX512 + 1, -1), -EINVAL);
	assert_int_equal(ntm_dispatch_set_caps(-1, -2), -EINVAL);
	assert_non_null(strstr(ntm_errmsg(), "flush_cap -2"));
	assert_int_equal(ntm_dispatch_set_caps(-1, NTM_FLUSH_DC_CVADP + 1), -EINVAL);
	/* A refused call made no choice either. */
	assert_null(__atomic_load_n(&ntm_dispatch_published, __ATOMIC_ACQUIRE));

	/* Every value in range is taken; the last call before the choice wins. */
	assert_int_equal(ntm_dispatch_set_caps(NTM_ISA_AVX512, NTM_FLUSH_DC_CVADP), 0);
	assert_int_equal(ntm_dispatch_set_caps(-1, -1), 0);
	assert_int_equal(ntm_dispatch_set_caps(NTM_ISA_GENERIC, NTM_FLUSH_NONE), 0);
	assert_int_equal(ntm_variant_isa(ntm_variant_active()), NTM_ISA_GENERIC);
	assert_int_equal(ntm_flush_active(), NTM_FLUSH_NONE);

	/* Chosen: a ceiling now would be ignored, so it is refused. */
	assert_int_equal(ntm_dispatch_set_caps(-1, -1), -EBUSY);
	assert_non_null(strstr(ntm_errmsg(), "chosen already"));
	assert_int_equal(ntm_dispatch_set_caps(NTM_ISA_GENERIC, NTM_FLUSH_NONE),
			 -EBUSY);
	assert_int_equal(ntm_variant_isa(ntm_variant_active()), NTM_ISA_GENERIC);
	assert_int_equal(ntm_flush_active(), NTM_FLUSH_NONE);
}

static void test_open_fd(void **state)
{
	char dir[64], path[96];
	unsigned char *base, want[5000];
	struct ntm_ns *ns = NULL;
	enum ntm_ns_kind kind;
	int fd;

	(void)state;
	assert_int_equal(tu_scratch_dir(dir, sizeof(dir), "ntmem-embed"), 0);
	/* The real thing beats the emulation: fsdax on a DAX file system. */
	kind = tu_dir_is_dax(dir) ? NTM_NS_FSDAX : NTM_NS_EMULATED;
	snprintf(path, sizeof(path), "%s/pool", dir);
	/* A PMDK pool need not be whole pages: 5000 bytes. */
	tu_write_file(path, 5000, 7, 0600);
	fd = open(path, O_RDWR | O_CLOEXEC);
	assert_true(fd >= 0);

	assert_int_equal(ntm_ns_open_fd(&ns, fd, path, 0), -EINVAL);
	assert_non_null(strstr(ntm_errmsg(), "size 5000"));
	assert_int_equal(ntm_ns_open_fd(&ns, fd, path, 1u << 4), -EINVAL);
	assert_non_null(strstr(ntm_errmsg(), "unknown bits 0x10"));
	assert_int_equal(ntm_ns_open_fd(NULL, fd, path, NTM_NS_ANY_SIZE), -EINVAL);
	assert_int_equal(ntm_ns_open_fd(&ns, fd, NULL, NTM_NS_ANY_SIZE), -EINVAL);
	assert_null(ns);

	assert_int_equal(ntm_ns_open_fd(&ns, fd, path, NTM_NS_ANY_SIZE |
					NTM_NS_EMULATE), 0);
	/* The descriptor stays the caller's: closing it unmaps nothing. */
	assert_int_equal(close(fd), 0);
	assert_int_equal(ntm_ns_size(ns), 5000);
	assert_string_equal(ntm_ns_path(ns), path);
	assert_int_equal(ntm_ns_kind(ns), kind);
	base = ntm_ns_base(ns);
	memset(want, 0xa5, sizeof(want));
	memcpy(base, want, sizeof(want));
	assert_int_equal(ntm_ns_persist(ns, base, sizeof(want)), 0);
	ntm_ns_close(ns);
	tu_check_file_bytes(path, 0, want, sizeof(want));

	/* Closed (or never open): fstat's -EBADF. */
	assert_int_equal(ntm_ns_open_fd(&ns, fd, path, NTM_NS_ANY_SIZE), -EBADF);
	/* ntm_ns_open() takes the flag as well. */
	assert_int_equal(ntm_ns_open(&ns, path, 0), -EINVAL);
	assert_int_equal(ntm_ns_open(&ns, path, NTM_NS_ANY_SIZE), 0);
	assert_int_equal(ntm_ns_size(ns), 5000);
	ntm_ns_close(ns);
	assert_int_equal(tu_remove_tree(dir), 0);
}

static void test_domain(void **state)
{
	char root[128];

	(void)state;
	assert_int_equal(tu_scratch_dir(root, sizeof(root), "ntmem-embed-sysfs"), 0);
	ntm_sysfs_root = root;
	assert_int_equal(unsetenv("NTMEM_PERSIST_DOMAIN"), 0);
	/* No nd bus, an empty one: none. */
	assert_int_equal(ntm_persist_domain_system(), NTM_PERSIST_NONE);
	st_dir(root, "bus/nd/devices");
	assert_int_equal(ntm_persist_domain_system(), NTM_PERSIST_NONE);
	st_region(root, "platform/ndbus0", "region0", "cpu_cache\n");
	assert_int_equal(ntm_persist_domain_system(), NTM_PERSIST_CPU_CACHE);
	/* Unreadable beside cpu_cache only: cannot tell. */
	st_region_unreadable(root, "platform/ndbus0", "region1");
	assert_true(ntm_persist_domain_system() < 0);
	assert_non_null(strstr(ntm_errmsg(), "persistence_domain cannot be read"));
	/* The weakest wins; an unreadable one cannot make it stronger. */
	st_region(root, "platform/ndbus0", "region2", "memory_controller\n");
	assert_int_equal(ntm_persist_domain_system(),
			 NTM_PERSIST_MEMORY_CONTROLLER);
	st_region(root, "platform/ndbus0", "region3", "\n");
	assert_int_equal(ntm_persist_domain_system(), NTM_PERSIST_NONE);
	/* The variable, read on each call, wins over sysfs. */
	assert_int_equal(setenv("NTMEM_PERSIST_DOMAIN", "cpu_cache", 1), 0);
	assert_int_equal(ntm_persist_domain_system(), NTM_PERSIST_CPU_CACHE);
	assert_int_equal(setenv("NTMEM_PERSIST_DOMAIN", "eadr", 1), 0);
	assert_int_equal(ntm_persist_domain_system(), NTM_PERSIST_NONE);
	assert_int_equal(unsetenv("NTMEM_PERSIST_DOMAIN"), 0);
	ntm_sysfs_root = "/sys";
	assert_int_equal(tu_remove_tree(root), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_verbose),
		cmocka_unit_test(test_caps),
		cmocka_unit_test(test_open_fd),
		cmocka_unit_test(test_domain),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
