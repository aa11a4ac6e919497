// SPDX-License-Identifier: MIT
/*
 * test_pmem2_core.c - the libpmem2 drop-in's core, on ntmem's own header:
 * the messages name the argument, a failed call changes nothing, and each
 * granularity's functions store what they are given with every flag.
 * (check_pmem2_interop.sh compares the codes with Debian's library.)
 */
#define _GNU_SOURCE	/* memmem() */
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
		/* Anonymous memory: no device, no deep flush (PAGE: 0). */
		assert_int_equal(pmem2_deep_flush(map, buf[g], 100),
				 g == PMEM2_GRANULARITY_PAGE ? 0 :
				 PMEM2_E_NOSUPP);
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

/*
 * Map @src with @cfg at @offset + @length: the code (*map set to NULL on
 * failure), the map's size in *@size; the map is read and deleted again.
 */
static int map_anon(struct pmem2_config *cfg, struct pmem2_source *src,
		    size_t offset, size_t length, size_t *size)
{
	struct pmem2_map *map = (struct pmem2_map *)1;
	int ret;

	pmem2_config_set_offset(cfg, offset);
	pmem2_config_set_length(cfg, length);
	ret = pmem2_map_new(&map, cfg, src);
	if (ret) {
		assert_null(map);
		return ret;
	}
	*size = pmem2_map_get_size(map);
	assert_int_equal(((char *)pmem2_map_get_address(map))[0], 0);
	assert_int_equal(pmem2_map_delete(&map), 0);
	return 0;
}

static struct pmem2_config *page_cfg(void)
{
	struct pmem2_config *cfg;

	assert_int_equal(pmem2_config_new(&cfg), 0);
	pmem2_config_set_required_store_granularity(cfg, PMEM2_GRANULARITY_PAGE);
	return cfg;
}

/* An empty anonymous source is SOURCE_EMPTY, as an empty file. */
static void test_anon_empty(void **state)
{
	struct pmem2_config *cfg = page_cfg();
	struct pmem2_source *src;
	size_t size = 0;

	(void)state;
	assert_int_equal(pmem2_source_from_anon(&src, 0), 0);
	assert_int_equal(map_anon(cfg, src, 0, 0, &size),
			 PMEM2_E_SOURCE_EMPTY);
	assert_non_null(strstr(pmem2_errormsg(), "anonymous source of size 0"));
	pmem2_source_delete(&src);
	pmem2_config_delete(&cfg);
}

/*
 * An anonymous source is mapped from its start, but its configured offset
 * is checked as PMDK checks it: aligned, and offset + length within the
 * source.
 */
static void test_anon_offset_checked(void **state)
{
	struct pmem2_config *cfg = page_cfg();
	struct pmem2_source *src;
	size_t size = 0;

	(void)state;
	assert_int_equal(pmem2_source_from_anon(&src, 4097), 0);
	assert_int_equal(map_anon(cfg, src, 8192, 0, &size),
			 PMEM2_E_MAP_RANGE);
	assert_non_null(strstr(pmem2_errormsg(), "offset 8192 + length 0 is "
			       "past the end of the source (4097 bytes)"));
	assert_int_equal(map_anon(cfg, src, (size_t)1 << 30, 0, &size),
			 PMEM2_E_MAP_RANGE);
	assert_int_equal(map_anon(cfg, src, 4096, 4096, &size),
			 PMEM2_E_MAP_RANGE);
	assert_int_equal(map_anon(cfg, src, 1, 0, &size),
			 PMEM2_E_OFFSET_UNALIGNED);
	assert_int_equal(map_anon(cfg, src, 4095, 0, &size),
			 PMEM2_E_OFFSET_UNALIGNED);
	/* Within the source: the whole of it, from its start. */
	assert_int_equal(map_anon(cfg, src, 4096, 0, &size), 0);
	assert_int_equal(size, 4097);
	assert_int_equal(map_anon(cfg, src, 0, 4096, &size), 0);
	assert_int_equal(size, 4096);
	pmem2_source_delete(&src);
	pmem2_config_delete(&cfg);
}

/*
 * The process's mappings, as /proc/self/maps lists them, into @buf
 * (read without allocating), less the heap and the stack, which move on
 * their own.
 */
static void maps_snapshot(char *buf, size_t len)
{
	static char raw[1 << 16];
	size_t n = 0, out = 0;
	ssize_t got;
	int fd = open("/proc/self/maps", O_RDONLY);

	assert_true(fd >= 0);
	while ((got = read(fd, raw + n, sizeof(raw) - 1 - n)) > 0)
		n += (size_t)got;
	close(fd);
	raw[n] = '\0';
	for (char *line = raw, *nl; *line; line = nl + 1) {
		nl = strchr(line, '\n');
		if (!nl)
			break;
		if (memmem(line, (size_t)(nl - line), "[heap]", 6) ||
		    memmem(line, (size_t)(nl - line), "[stack]", 7))
			continue;
		assert_true(out + (size_t)(nl - line) + 2 <= len);
		memcpy(buf + out, line, (size_t)(nl - line) + 1);
		out += (size_t)(nl - line) + 1;
	}
	buf[out] = '\0';
}

/*
 * A size that leaves no room for the alignment slack: no address space
 * (-ENOMEM, as PMDK), and the process's mappings as they were (the sum
 * wrapped: a small placeholder was taken and kept, and trimming its slack
 * could unmap memory below it).
 */
static void test_anon_size_without_room(void **state)
{
	static const size_t sizes[] = { SIZE_MAX - ((size_t)2 << 20) + 4097,
					SIZE_MAX & ~(size_t)4095, SIZE_MAX };
	static char before[1 << 16], after[1 << 16];
	struct pmem2_config *cfg = page_cfg();
	struct pmem2_source *src;
	struct pmem2_map *map;

	(void)state;
	for (size_t i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++) {
		assert_int_equal(pmem2_source_from_anon(&src, sizes[i]), 0);
		map = (struct pmem2_map *)1;
		maps_snapshot(before, sizeof(before));
		assert_int_equal(pmem2_map_new(&map, cfg, src), -ENOMEM);
		maps_snapshot(after, sizeof(after));
		assert_null(map);
		assert_string_equal(before, after);
		assert_non_null(strstr(pmem2_errormsg(), "no "));
		pmem2_source_delete(&src);
	}
	pmem2_config_delete(&cfg);
}

/* pmem2_deep_flush() of a map of no device, and of a private file map. */
static void test_deep_flush_without_device(void **state)
{
	struct pmem2_config *cfg;
	struct pmem2_source *src;
	struct pmem2_map *map;
	char *p;
	int fd = scratch_fd();

	(void)state;
	pmem2_config_new(&cfg);
	pmem2_config_set_required_store_granularity(cfg, PMEM2_GRANULARITY_PAGE);
	pmem2_source_from_anon(&src, SIZE);
	assert_int_equal(pmem2_map_new(&map, cfg, src), 0);
	p = pmem2_map_get_address(map);
	assert_int_equal(pmem2_deep_flush(map, p, 100), PMEM2_E_NOSUPP);
	assert_non_null(strstr(pmem2_errormsg(), "pmem2_deep_flush: map is of "
			       "an anonymous source"));
	assert_int_equal(pmem2_deep_flush(map, p + SIZE, 0), PMEM2_E_NOSUPP);
	/* The range is checked first, without wrapping. */
	assert_int_equal(pmem2_deep_flush(map, p, SIZE_MAX),
			 PMEM2_E_DEEP_FLUSH_RANGE);
	assert_int_equal(pmem2_deep_flush(map, p + 1, SIZE_MAX),
			 PMEM2_E_DEEP_FLUSH_RANGE);
	assert_int_equal(pmem2_map_delete(&map), 0);
	pmem2_source_delete(&src);

	/* A file: shared (PAGE) and private (BYTE) maps are msync()ed. */
	pmem2_source_from_fd(&src, fd);
	assert_int_equal(pmem2_map_new(&map, cfg, src), 0);
	p = pmem2_map_get_address(map);
	assert_int_equal(pmem2_deep_flush(map, p, SIZE), 0);
	assert_int_equal(pmem2_deep_flush(map, p + 100, SIZE_MAX - 50),
			 PMEM2_E_DEEP_FLUSH_RANGE);
	assert_int_equal(pmem2_map_delete(&map), 0);
	pmem2_config_set_sharing(cfg, PMEM2_PRIVATE);
	assert_int_equal(pmem2_map_new(&map, cfg, src), 0);
	assert_int_equal(pmem2_map_get_store_granularity(map),
			 PMEM2_GRANULARITY_BYTE);
	assert_int_equal(pmem2_deep_flush(map, pmem2_map_get_address(map), 8),
			 0);
	assert_int_equal(pmem2_map_delete(&map), 0);
	pmem2_source_delete(&src);
	pmem2_config_delete(&cfg);
	close(fd);
}

/*
 * pmem2_map_from_existing() with a granularity that is none of PMDK's
 * three (PMDK aborts): refused, nothing registered, *map as it was.
 */
static void test_from_existing_granularity(void **state)
{
	static char buf[4 * 4096] __attribute__((aligned(4096)));
	static const int bad[] = { 7, -1, 100000, 3, INT32_MIN };
	struct pmem2_map *map, *m = (struct pmem2_map *)1;
	struct pmem2_source *src;

	(void)state;
	pmem2_source_from_anon(&src, sizeof(buf));
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		char want[64];

		assert_int_equal(pmem2_map_from_existing(&m, src, buf,
				 sizeof(buf), (enum pmem2_granularity)bad[i]),
				 PMEM2_E_GRANULARITY_NOT_SUPPORTED);
		assert_ptr_equal(m, (struct pmem2_map *)1);
		snprintf(want, sizeof(want), "pmem2_map_from_existing: gran %d "
			 "is not", bad[i]);
		assert_non_null(strstr(pmem2_errormsg(), want));
	}
	/* Nothing was registered: the range is free. */
	assert_int_equal(pmem2_map_from_existing(&map, src, buf, sizeof(buf),
			 PMEM2_GRANULARITY_PAGE), 0);
	assert_int_equal(pmem2_map_get_store_granularity(map),
			 PMEM2_GRANULARITY_PAGE);
	assert_int_equal(pmem2_map_delete(&map), 0);
	pmem2_source_delete(&src);
}

/* A failed pmem2_map_from_existing() leaves *map as it was, as PMDK's. */
static void test_from_existing_failure_keeps_map(void **state)
{
	static char buf[4 * 4096] __attribute__((aligned(4096)));
	struct pmem2_map *map, *m = (struct pmem2_map *)1;
	struct pmem2_source *src;

	(void)state;
	pmem2_source_from_anon(&src, sizeof(buf));
	assert_int_equal(pmem2_map_from_existing(&map, src, buf, sizeof(buf),
			 PMEM2_GRANULARITY_PAGE), 0);
	assert_int_equal(pmem2_map_from_existing(&m, src, buf + 4096, 4096,
			 PMEM2_GRANULARITY_PAGE), PMEM2_E_MAP_EXISTS);
	assert_ptr_equal(m, (struct pmem2_map *)1);
	assert_int_equal(pmem2_map_delete(&map), 0);
	/* A range that wraps past the top of the address space. */
	assert_int_equal(pmem2_map_from_existing(&m, src,
			 (void *)(UINTPTR_MAX & ~(uintptr_t)4095), 8192,
			 PMEM2_GRANULARITY_PAGE), -EINVAL);
	assert_ptr_equal(m, (struct pmem2_map *)1);
	assert_non_null(strstr(pmem2_errormsg(), "wraps"));
	pmem2_source_delete(&src);
}

/*
 * A length of 0 is a map, as in PMDK: the point at its address, which
 * collides only with a map that has it strictly inside.
 */
static void test_from_existing_empty(void **state)
{
	static char buf[4 * 4096] __attribute__((aligned(4096)));
	struct pmem2_map *map, *empty, *stale, *m = (struct pmem2_map *)1;
	struct pmem2_source *src;

	(void)state;
	pmem2_source_from_anon(&src, sizeof(buf));
	assert_int_equal(pmem2_map_from_existing(&empty, src, buf, 0,
			 PMEM2_GRANULARITY_BYTE), 0);
	assert_int_equal(pmem2_map_get_size(empty), 0);
	assert_ptr_equal(pmem2_map_get_address(empty), buf);
	assert_int_equal(pmem2_deep_flush(empty, buf, 0), PMEM2_E_NOSUPP);
	/* A map that starts at it, and a second empty one there. */
	assert_int_equal(pmem2_map_from_existing(&map, src, buf, sizeof(buf),
			 PMEM2_GRANULARITY_PAGE), 0);
	assert_int_equal(pmem2_map_from_existing(&m, src, buf, 0,
			 PMEM2_GRANULARITY_PAGE), 0);
	assert_int_equal(pmem2_map_delete(&m), 0);
	/* Strictly inside a registered map: refused. */
	m = (struct pmem2_map *)1;
	assert_int_equal(pmem2_map_from_existing(&m, src, buf + 4096, 0,
			 PMEM2_GRANULARITY_PAGE), PMEM2_E_MAP_EXISTS);
	assert_ptr_equal(m, (struct pmem2_map *)1);
	assert_int_equal(pmem2_map_delete(&map), 0);
	assert_int_equal(pmem2_map_delete(&empty), 0);
	assert_null(empty);

	/* A registered empty map: a range around it is refused. */
	assert_int_equal(pmem2_map_from_existing(&empty, src, buf + 4096, 0,
			 PMEM2_GRANULARITY_BYTE), 0);
	assert_int_equal(pmem2_map_from_existing(&m, src, buf, sizeof(buf),
			 PMEM2_GRANULARITY_PAGE), PMEM2_E_MAP_EXISTS);
	assert_ptr_equal(m, (struct pmem2_map *)1);
	assert_int_equal(pmem2_map_from_existing(&map, src, buf + 4096, 4096,
			 PMEM2_GRANULARITY_PAGE), 0);
	assert_int_equal(pmem2_map_delete(&map), 0);
	/* Deleted once, as any map: a second delete is refused. */
	stale = empty;
	assert_int_equal(pmem2_map_delete(&empty), 0);
	assert_int_equal(pmem2_map_delete(&stale), PMEM2_E_MAPPING_NOT_FOUND);
	assert_int_equal(pmem2_map_from_existing(&map, src, buf, sizeof(buf),
			 PMEM2_GRANULARITY_PAGE), 0);
	assert_int_equal(pmem2_map_delete(&map), 0);
	pmem2_source_delete(&src);
}

/* Every granularity value the config setter refuses, nothing changed. */
static void test_config_granularity_values(void **state)
{
	static const int bad[] = { 7, -1, 100000, 3, INT32_MIN };
	struct pmem2_config *cfg;
	struct pmem2_source *src;
	struct pmem2_map *map;

	(void)state;
	pmem2_config_new(&cfg);
	pmem2_source_from_anon(&src, SIZE);
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		assert_int_equal(pmem2_config_set_required_store_granularity(cfg,
				 (enum pmem2_granularity)bad[i]),
				 PMEM2_E_GRANULARITY_NOT_SUPPORTED);
		assert_non_null(strstr(pmem2_errormsg(), "granularity"));
	}
	/* Still unset. */
	assert_int_equal(pmem2_map_new(&map, cfg, src),
			 PMEM2_E_GRANULARITY_NOT_SET);
	pmem2_source_delete(&src);
	pmem2_config_delete(&cfg);
}

/*
 * A call that succeeds leaves errno as the program had it, as PMDK's
 * does: the MAP_SYNC attempt a file system refuses, and the sysfs files a
 * file not on pmem lacks, are not the program's failures.
 */
static void test_map_new_keeps_errno(void **state)
{
	struct pmem2_config *cfg = page_cfg();
	struct pmem2_source *src;
	struct pmem2_map *map;
	int fd = scratch_fd();

	(void)state;
	pmem2_source_from_fd(&src, fd);
	errno = 0;
	assert_int_equal(pmem2_map_new(&map, cfg, src), 0);
	assert_int_equal(errno, 0);
	errno = EDOM;
	assert_int_equal(pmem2_map_delete(&map), 0);
	assert_int_equal(errno, EDOM);
	pmem2_source_delete(&src);
	pmem2_config_delete(&cfg);
	close(fd);
}

static void test_badblock_context_keeps_errno(void **state)
{
	struct pmem2_badblock_context *bbctx;
	struct pmem2_source *src;
	int fd = scratch_fd();

	(void)state;
	pmem2_source_from_fd(&src, fd);
	errno = 0;
	assert_int_equal(pmem2_badblock_context_new(&bbctx, src), 0);
	assert_int_equal(errno, 0);
	errno = EDOM;
	pmem2_badblock_context_delete(&bbctx);
	assert_int_equal(errno, EDOM);
	pmem2_source_delete(&src);
	close(fd);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_messages_name_the_argument),
		cmocka_unit_test(test_failed_setters_change_nothing),
		cmocka_unit_test(test_copies_per_granularity),
		cmocka_unit_test(test_shared_file_reaches_the_file),
		cmocka_unit_test(test_anon_source),
		cmocka_unit_test(test_anon_empty),
		cmocka_unit_test(test_anon_offset_checked),
		cmocka_unit_test(test_anon_size_without_room),
		cmocka_unit_test(test_deep_flush_without_device),
		cmocka_unit_test(test_from_existing_granularity),
		cmocka_unit_test(test_from_existing_failure_keeps_map),
		cmocka_unit_test(test_from_existing_empty),
		cmocka_unit_test(test_config_granularity_values),
		cmocka_unit_test(test_map_new_keeps_errno),
		cmocka_unit_test(test_badblock_context_keeps_errno),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
