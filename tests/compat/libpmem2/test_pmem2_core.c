// SPDX-License-Identifier: MIT
/*
 * test_pmem2_core.c - the libpmem2 drop-in's core, on ntmem's own header:
 * the messages name the argument, a failed call changes nothing, and each
 * granularity's functions store what they are given with every flag.
 * (check_pmem2_interop.sh compares the codes with Debian's library.)
 */
#include <fcntl.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include <libpmem2.h>

#define SIZE (4 * 4096)

static const unsigned all_flags[] = {
	0, PMEM2_F_MEM_NODRAIN, PMEM2_F_MEM_NONTEMPORAL, PMEM2_F_MEM_TEMPORAL,
	PMEM2_F_MEM_WC, PMEM2_F_MEM_WB, PMEM2_F_MEM_NOFLUSH,
	PMEM2_F_MEM_NONTEMPORAL | PMEM2_F_MEM_NODRAIN,
	PMEM2_F_MEM_WB | PMEM2_F_MEM_NODRAIN,
};

/* A scratch file of SIZE bytes in TMPDIR (or /tmp), already unlinked. */
static int scratch_fd(void)
{
	char path[256];
	const char *dir = getenv("TMPDIR");
	int fd;

	snprintf(path, sizeof(path), "%s/pmem2_core_XXXXXX", dir ? dir : "/tmp");
	fd = mkstemp(path);
	assert_true(fd >= 0);
	unlink(path);
	assert_int_equal(ftruncate(fd, SIZE), 0);
	return fd;
}

static void test_messages_name_the_argument(void **state)
{
	struct pmem2_config *cfg;
	struct pmem2_source *src;
	struct pmem2_map *map;
	int fd = scratch_fd();

	(void)state;
	assert_int_equal(pmem2_config_new(&cfg), 0);
	assert_int_equal(pmem2_config_set_offset(cfg, (size_t)1 << 63),
			 PMEM2_E_OFFSET_OUT_OF_RANGE);
	assert_non_null(strstr(pmem2_errormsg(), "pmem2_config_set_offset: offset"));
	assert_int_equal(pmem2_config_set_protection(cfg, 7),
			 PMEM2_E_INVALID_PROT_FLAG);
	assert_non_null(strstr(pmem2_errormsg(), "prot 0x7"));
	assert_int_equal(pmem2_source_from_fd(&src, fd), 0);
	assert_int_equal(pmem2_map_new(&map, cfg, src),
			 PMEM2_E_GRANULARITY_NOT_SET);
	assert_null(map);
	pmem2_config_set_required_store_granularity(cfg, PMEM2_GRANULARITY_PAGE);
	pmem2_config_set_offset(cfg, 4097);
	assert_int_equal(pmem2_map_new(&map, cfg, src), PMEM2_E_OFFSET_UNALIGNED);
	assert_string_equal(pmem2_errormsg(), "pmem2_map_new: offset 4097 is "
			    "not a multiple of the alignment 4096");
	pmem2_config_set_offset(cfg, 0);
	pmem2_config_set_length(cfg, 2 * SIZE);
	assert_int_equal(pmem2_map_new(&map, cfg, src), PMEM2_E_MAP_RANGE);
	assert_non_null(strstr(pmem2_errormsg(), "length 32768"));
	pmem2_config_set_length(cfg, 0);
	pmem2_config_set_required_store_granularity(cfg,
						    PMEM2_GRANULARITY_BYTE);
	assert_int_equal(pmem2_map_new(&map, cfg, src),
			 PMEM2_E_GRANULARITY_NOT_SUPPORTED);
	assert_non_null(strstr(pmem2_errormsg(), "BYTE required"));
	pmem2_source_delete(&src);
	pmem2_config_delete(&cfg);
	close(fd);
}

/* A failed setter keeps the old value: the map made after it shows it. */
static void test_failed_setters_change_nothing(void **state)
{
	struct pmem2_config *cfg;
	struct pmem2_source *src;
	struct pmem2_map *map;
	int fd = scratch_fd();

	(void)state;
	pmem2_config_new(&cfg);
	pmem2_config_set_required_store_granularity(cfg, PMEM2_GRANULARITY_PAGE);
	pmem2_config_set_offset(cfg, 4096);
	pmem2_config_set_sharing(cfg, PMEM2_PRIVATE);
	assert_int_equal(pmem2_config_set_offset(cfg, SIZE_MAX),
			 PMEM2_E_OFFSET_OUT_OF_RANGE);
	assert_int_equal(pmem2_config_set_sharing(cfg, 9),
			 PMEM2_E_INVALID_SHARING_VALUE);
	assert_int_equal(pmem2_config_set_required_store_granularity(cfg, -1),
			 PMEM2_E_GRANULARITY_NOT_SUPPORTED);
	pmem2_source_from_fd(&src, fd);
	assert_int_equal(pmem2_map_new(&map, cfg, src), 0);
	assert_int_equal(pmem2_map_get_size(map), SIZE - 4096);
	/* Still private: byte granularity. */
	assert_int_equal(pmem2_map_get_store_granularity(map),
			 PMEM2_GRANULARITY_BYTE);
	assert_int_equal(pmem2_map_delete(&map), 0);
	assert_null(map);
	pmem2_source_delete(&src);
	pmem2_config_delete(&cfg);
	close(fd);
}

/* Every copy function with every flag, on each granularity. */
static void check_copies(struct pmem2_map *map, char *p)
{
	char src[5000];

	for (size_t i = 0; i < sizeof(src); i++)
		src[i] = (char)(i * 7 + 1);
	for (size_t f = 0; f < sizeof(all_flags) / sizeof(all_flags[0]); f++) {
		unsigned fl = all_flags[f];
		size_t lens[] = { 1, 7, 64, 255, 256, 4097, sizeof(src) };

		for (size_t l = 0; l < sizeof(lens) / sizeof(lens[0]); l++) {
			size_t n = lens[l];

			memset(p, 0, 8192);
			pmem2_get_memcpy_fn(map)(p + 3, src, n, fl);
			assert_memory_equal(p + 3, src, n);
			pmem2_get_memmove_fn(map)(p + 1, p + 3, n, fl);
			assert_memory_equal(p + 1, src, n);
			pmem2_get_memset_fn(map)(p + 5, 0x5a, n, fl);
			for (size_t i = 0; i < n; i++)
				assert_int_equal((unsigned char)p[5 + i], 0x5a);
			if (fl & PMEM2_F_MEM_NOFLUSH)
				pmem2_get_flush_fn(map)(p, n + 5);
			pmem2_get_drain_fn(map)();
		}
	}
	pmem2_get_persist_fn(map)(p, 8192);
}

static void test_copies_per_granularity(void **state)
{
	static char buf[3][16384] __attribute__((aligned(4096)));
	struct pmem2_source *src;
	struct pmem2_map *map;

	(void)state;
	pmem2_source_from_anon(&src, sizeof(buf[0]));
	for (int g = PMEM2_GRANULARITY_BYTE; g <= PMEM2_GRANULARITY_PAGE; g++) {
		assert_int_equal(pmem2_map_from_existing(&map, src, buf[g],
				 sizeof(buf[g]), (enum pmem2_granularity)g), 0);
		assert_int_equal(pmem2_map_get_store_granularity(map), g);
		check_copies(map, buf[g]);
		assert_int_equal(pmem2_deep_flush(map, buf[g], 100), 0);
		assert_int_equal(pmem2_deep_flush(map, buf[g] + 16000, 1000),
				 PMEM2_E_DEEP_FLUSH_RANGE);
		assert_int_equal(pmem2_map_delete(&map), 0);
	}
	pmem2_source_delete(&src);
}

/* A file mapped shared (page granularity): stores reach the file. */
static void test_shared_file_reaches_the_file(void **state)
{
	struct pmem2_config *cfg;
	struct pmem2_source *src;
	struct pmem2_map *map;
	char back[16];
	int fd = scratch_fd();

	(void)state;
	pmem2_config_new(&cfg);
	pmem2_config_set_required_store_granularity(cfg, PMEM2_GRANULARITY_PAGE);
	pmem2_source_from_fd(&src, fd);
	assert_int_equal(pmem2_map_new(&map, cfg, src), 0);
	check_copies(map, pmem2_map_get_address(map));
	pmem2_get_memcpy_fn(map)(pmem2_map_get_address(map), "durable", 8, 0);
	assert_int_equal(pmem2_deep_flush(map, pmem2_map_get_address(map), 8), 0);
	assert_int_equal(pread(fd, back, 8, 0), 8);
	assert_string_equal(back, "durable");
	/* Deleted once: a second delete of the same object is refused. */
	struct pmem2_map *stale = map;
	assert_int_equal(pmem2_map_delete(&map), 0);
	assert_int_equal(pmem2_map_delete(&stale), PMEM2_E_MAPPING_NOT_FOUND);
	pmem2_source_delete(&src);
	pmem2_config_delete(&cfg);
	close(fd);
}

static void test_anon_source(void **state)
{
	struct pmem2_source *src;
	int fd = 42;

	(void)state;
	assert_int_equal(pmem2_source_from_anon(&src, 5000), 0);
	assert_int_equal(pmem2_source_get_fd(src, &fd),
			 PMEM2_E_FILE_DESCRIPTOR_NOT_SET);
	assert_int_equal(fd, 42);
	assert_int_equal(pmem2_source_delete(&src), 0);
	assert_null(src);
	assert_int_equal(pmem2_source_delete(&src), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_messages_name_the_argument),
		cmocka_unit_test(test_failed_setters_change_nothing),
		cmocka_unit_test(test_copies_per_granularity),
		cmocka_unit_test(test_shared_file_reaches_the_file),
		cmocka_unit_test(test_anon_source),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
