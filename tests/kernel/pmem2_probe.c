// SPDX-License-Identifier: MIT
/*
 * pmem2_probe.c - a program written against PMDK's own libpmem2.h and
 * built against Debian's libpmem2-dev, as a PMDK user's program is, for
 * the checks inside a kernel guest (tests/kernel/stage.sh,
 * stage-domain.sh). The same binary runs on Debian's libpmem2.so.1 or,
 * with LD_LIBRARY_PATH naming its directory, on ntmem's drop-in
 * (compat/libpmem2): which one answered is the last line (dladdr), so a
 * check cannot pass on the wrong library.
 *
 *   kernel_pmem2_probe PATH SEED [PREV]
 *
 * PATH is an existing file or devdax device, mapped whole. One
 * "name=value" line per answer, in a fixed order, so the lines of the two
 * libraries can be compared with diff (all but lib=):
 *
 *   size= align=         pmem2_source_size(), pmem2_source_alignment()
 *   map_byte= map_cache_line= map_page=   pmem2_map_new()'s code with
 *                        each required granularity (0: mapped)
 *   granularity=         pmem2_map_get_store_granularity() of the PAGE map
 *   map_size=            pmem2_map_get_size() of it
 *   previous=0|1         with PREV: the 64 KiB at offset align hold the
 *                        pattern of seed PREV (another run, maybe on the
 *                        other library, wrote it)
 *   deep_flush=          pmem2_deep_flush()'s code after the pattern of
 *                        SEED was copied there (the map's memcpy_fn,
 *                        then a memset_fn and persist_fn of one line)
 *   read_back=0|1        the pattern there after pmem2_map_delete() and a
 *                        new map
 *   device_id= device_id_len= id= usc= usc_value= numa= numa_node=
 *                        pmem2_source_device_id/device_usc/numa_node's
 *                        codes and answers (the answers "-" on failure)
 *   badblock_ctx= badblocks= badblock_end=   pmem2_badblock_context_new's
 *                        code, how many pmem2_badblock_next() gave, and
 *                        the code that ended the walk
 *   lib=FILE             the library that answered
 *
 * Exit status 0 when the PAGE map and its remap succeeded, 1 otherwise
 * (pmem2_errormsg() on standard error), 2 on bad usage.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <libpmem2.h>

#define PATTERN_SIZE (64 * 1024)

/* The bytes of seed @seed: a different pattern per seed, never all zero. */
static void pattern(unsigned char *buf, unsigned seed)
{
	uint32_t x = seed * 2654435761u + 1;

	for (size_t i = 0; i < PATTERN_SIZE; i++) {
		x = x * 1103515245u + 12345u;
		buf[i] = (unsigned char)(x >> 16);
	}
}

static const char *granularity_name(enum pmem2_granularity g)
{
	return g == PMEM2_GRANULARITY_BYTE ? "BYTE" :
	       g == PMEM2_GRANULARITY_CACHE_LINE ? "CACHE_LINE" :
	       g == PMEM2_GRANULARITY_PAGE ? "PAGE" : "unknown";
}

/* pmem2_map_new() of all of @src with @gran required: its code; *@map. */
static int map_with(struct pmem2_source *src, enum pmem2_granularity gran,
		    struct pmem2_map **map)
{
	struct pmem2_config *cfg;
	int ret;

	*map = NULL;
	ret = pmem2_config_new(&cfg);
	if (ret)
		return ret;
	ret = pmem2_config_set_required_store_granularity(cfg, gran);
	if (!ret)
		ret = pmem2_map_new(map, cfg, src);
	pmem2_config_delete(&cfg);
	return ret;
}

/* One try of @gran, printed as @name=code; unmapped again. */
static void try_granularity(struct pmem2_source *src,
			    enum pmem2_granularity gran, const char *name)
{
	struct pmem2_map *map;
	int ret = map_with(src, gran, &map);

	printf("%s=%d\n", name, ret);
	if (!ret)
		pmem2_map_delete(&map);
}

static void device_info(struct pmem2_source *src)
{
	size_t len = 0;
	uint64_t usc = 0;
	int ret, node = -1;
	char *id;

	ret = pmem2_source_device_id(src, NULL, &len);
	if (!ret && (id = calloc(1, len + 1)) != NULL) {
		ret = pmem2_source_device_id(src, id, &len);
		printf("device_id=%d\ndevice_id_len=%zu\nid=%s\n", ret, len,
		       ret ? "-" : id);
		free(id);
	} else {
		printf("device_id=%d\ndevice_id_len=-\nid=-\n", ret);
	}
	ret = pmem2_source_device_usc(src, &usc);
	if (ret)
		printf("usc=%d\nusc_value=-\n", ret);
	else
		printf("usc=0\nusc_value=%llu\n", (unsigned long long)usc);
	ret = pmem2_source_numa_node(src, &node);
	if (ret)
		printf("numa=%d\nnuma_node=-\n", ret);
	else
		printf("numa=0\nnuma_node=%d\n", node);
}

static void badblocks(struct pmem2_source *src)
{
	struct pmem2_badblock_context *ctx;
	struct pmem2_badblock bb;
	int ret, n = 0;

	ret = pmem2_badblock_context_new(&ctx, src);
	printf("badblock_ctx=%d\n", ret);
	if (ret)
		return;
	while ((ret = pmem2_badblock_next(ctx, &bb)) == 0 && n < 1000)
		n++;
	printf("badblocks=%d\nbadblock_end=%d\n", n, ret);
	pmem2_badblock_context_delete(&ctx);
}

static int fail(const char *what)
{
	fprintf(stderr, "kernel_pmem2_probe: %s: %s\n", what, pmem2_errormsg());
	return 1;
}

int main(int argc, char **argv)
{
	static unsigned char want[PATTERN_SIZE], prev[PATTERN_SIZE];
	struct pmem2_source *src;
	struct pmem2_map *map;
	size_t size = 0, align = 0, off;
	unsigned char *p;
	Dl_info where;
	int fd, ret;

	if (argc != 3 && argc != 4) {
		fprintf(stderr, "usage: kernel_pmem2_probe PATH SEED [PREV]\n");
		return 2;
	}
	fd = open(argv[1], O_RDWR);
	if (fd < 0) {
		perror(argv[1]);
		return 1;
	}
	if (pmem2_source_from_fd(&src, fd))
		return fail("pmem2_source_from_fd");
	if (pmem2_source_size(src, &size))
		return fail("pmem2_source_size");
	printf("size=%zu\n", size);
	ret = pmem2_source_alignment(src, &align);
	if (ret || align == 0)
		return fail("pmem2_source_alignment");
	printf("align=%zu\n", align);
	try_granularity(src, PMEM2_GRANULARITY_BYTE, "map_byte");
	try_granularity(src, PMEM2_GRANULARITY_CACHE_LINE, "map_cache_line");
	try_granularity(src, PMEM2_GRANULARITY_PAGE, "map_page");
	if (map_with(src, PMEM2_GRANULARITY_PAGE, &map))
		return fail("pmem2_map_new (PAGE)");
	printf("granularity=%s\nmap_size=%zu\n",
	       granularity_name(pmem2_map_get_store_granularity(map)),
	       pmem2_map_get_size(map));
	/* At the source's alignment: past a devdax device's first page. */
	off = align;
	if (off + PATTERN_SIZE > pmem2_map_get_size(map))
		return fail("the map is too small for the pattern");
	p = (unsigned char *)pmem2_map_get_address(map) + off;
	if (argc == 4) {
		pattern(prev, (unsigned)strtoul(argv[3], NULL, 0));
		printf("previous=%d\n", memcmp(p, prev, PATTERN_SIZE) == 0);
	}
	pattern(want, (unsigned)strtoul(argv[2], NULL, 0));
	pmem2_get_memcpy_fn(map)(p, want, PATTERN_SIZE, 0);
	/* The first line again, through memset and an explicit persist. */
	pmem2_get_memset_fn(map)(p, 0, 64, PMEM2_F_MEM_NODRAIN);
	memcpy(p, want, 64);
	pmem2_get_persist_fn(map)(p, 64);
	printf("deep_flush=%d\n", pmem2_deep_flush(map, p, PATTERN_SIZE));
	if (pmem2_map_delete(&map))
		return fail("pmem2_map_delete");
	if (map_with(src, PMEM2_GRANULARITY_PAGE, &map))
		return fail("pmem2_map_new (again)");
	p = (unsigned char *)pmem2_map_get_address(map) + off;
	printf("read_back=%d\n", memcmp(p, want, PATTERN_SIZE) == 0);
	if (pmem2_map_delete(&map))
		return fail("pmem2_map_delete (again)");
	device_info(src);
	badblocks(src);
	if (!dladdr((void *)pmem2_map_new, &where) || !where.dli_fname)
		where.dli_fname = "unknown";
	printf("lib=%s\n", where.dli_fname);
	pmem2_source_delete(&src);
	close(fd);
	return 0;
}
