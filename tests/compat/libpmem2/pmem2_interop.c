// SPDX-License-Identifier: MIT
/*
 * pmem2_interop.c - one fixed run through libpmem2's core API on a file,
 * printing every return code and answer, for check_pmem2_interop.sh.
 *
 * Compiled against PMDK's own <libpmem2.h> and linked with -lpmem2, then
 * run once on Debian's libpmem2.so.1 and once on ntmem's drop-in
 * (LD_LIBRARY_PATH): the two outputs must be the same line for line. It
 * prints no address and no message text (those may differ), only what a
 * program can branch on: codes, sizes, granularities and the bytes it
 * reads back, including after the file is mapped a second time.
 *
 *   pmem2_interop DIR    (a directory for its two scratch files)
 */
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <libpmem2.h>

#define FILE_SIZE (4 * 4096)

/* Print one step's code. */
static int step(const char *what, int ret)
{
	printf("%s %d\n", what, ret);
	return ret;
}

static int make_file(const char *path, size_t size)
{
	int fd = open(path, O_RDWR | O_CREAT | O_TRUNC, 0600);

	if (fd < 0 || ftruncate(fd, (off_t)size)) {
		perror(path);
		exit(2);
	}
	return fd;
}

/* The config's errors: none maps anything. */
static void config_errors(void)
{
	struct pmem2_config *cfg;

	if (step("config_new", pmem2_config_new(&cfg)))
		exit(2);
	step("set_offset_huge", pmem2_config_set_offset(cfg, (size_t)1 << 63));
	step("set_offset_ok", pmem2_config_set_offset(cfg, 0));
	step("set_length", pmem2_config_set_length(cfg, 12345));
	step("set_granularity_bad",
	     pmem2_config_set_required_store_granularity(cfg, 7));
	step("set_sharing_bad", pmem2_config_set_sharing(cfg, 2));
	step("set_sharing_private",
	     pmem2_config_set_sharing(cfg, PMEM2_PRIVATE));
	step("set_protection_bad", pmem2_config_set_protection(cfg, 1));
	step("set_protection_none",
	     pmem2_config_set_protection(cfg, PMEM2_PROT_NONE));
	step("config_delete", pmem2_config_delete(&cfg));
	printf("config_deleted_null %d\n", cfg == NULL);
	step("config_delete_again", pmem2_config_delete(&cfg));
}

/* Map @src with @cfg; print the code and, if mapped, what it is. */
static struct pmem2_map *try_map(const char *what, struct pmem2_config *cfg,
				 struct pmem2_source *src)
{
	struct pmem2_map *map = (struct pmem2_map *)1;
	int ret = pmem2_map_new(&map, cfg, src);

	printf("%s %d", what, ret);
	if (ret) {
		printf(" map_null %d\n", map == NULL);
		return NULL;
	}
	printf(" size %zu granularity %d\n", pmem2_map_get_size(map),
	       (int)pmem2_map_get_store_granularity(map));
	return map;
}

static void map_errors(struct pmem2_source *src)
{
	struct pmem2_config *cfg;
	struct pmem2_map *map;

	pmem2_config_new(&cfg);
	try_map("map_granularity_not_set", cfg, src);
	pmem2_config_set_required_store_granularity(cfg, PMEM2_GRANULARITY_PAGE);
	pmem2_config_set_offset(cfg, 4097);
	try_map("map_offset_unaligned", cfg, src);
	pmem2_config_set_offset(cfg, 0);
	pmem2_config_set_length(cfg, 4097);
	try_map("map_length_unaligned", cfg, src);
	pmem2_config_set_length(cfg, 2 * FILE_SIZE);
	try_map("map_length_past_end", cfg, src);
	pmem2_config_set_length(cfg, 0);
	pmem2_config_set_offset(cfg, 2 * FILE_SIZE);
	try_map("map_offset_past_end", cfg, src);
	pmem2_config_set_offset(cfg, FILE_SIZE);
	try_map("map_offset_at_end", cfg, src);
	pmem2_config_set_offset(cfg, 4096);
	pmem2_config_set_length(cfg, 4096);
	map = try_map("map_window", cfg, src);
	if (map)
		step("map_delete_window", pmem2_map_delete(&map));
	pmem2_config_set_offset(cfg, 0);
	pmem2_config_set_length(cfg, 0);
	pmem2_config_set_required_store_granularity(cfg,
						    PMEM2_GRANULARITY_BYTE);
	/* A plain file gives page granularity: byte and cache line refused. */
	try_map("map_byte_refused", cfg, src);
	pmem2_config_set_required_store_granularity(cfg,
					     PMEM2_GRANULARITY_CACHE_LINE);
	try_map("map_cache_line_refused", cfg, src);
	/* A private mapping needs no flush: byte granularity. */
	pmem2_config_set_sharing(cfg, PMEM2_PRIVATE);
	map = try_map("map_private", cfg, src);
	if (map) {
		memset(pmem2_map_get_address(map), 'p', 16);
		pmem2_get_persist_fn(map)(pmem2_map_get_address(map), 16);
		/* msync()ed, as any map of a file: 0 on both. */
		step("deep_flush_private", pmem2_deep_flush(map,
				pmem2_map_get_address(map), 16));
		step("map_delete_private", pmem2_map_delete(&map));
	}
	pmem2_config_delete(&cfg);
}

/* Write through every function of a shared page-granularity mapping. */
static void map_write(struct pmem2_source *src)
{
	struct pmem2_config *cfg;
	struct pmem2_map *map;
	char *p;

	pmem2_config_new(&cfg);
	pmem2_config_set_required_store_granularity(cfg, PMEM2_GRANULARITY_PAGE);
	/* A call that succeeds leaves errno as it was (MAP_SYNC refused). */
	errno = 0;
	map = try_map("map_shared", cfg, src);
	printf("map_shared_errno_kept %d\n", errno == 0);
	if (!map)
		exit(1);
	p = pmem2_map_get_address(map);
	pmem2_get_memcpy_fn(map)(p, "memcpy", 6, 0);
	pmem2_get_memmove_fn(map)(p + 100, p, 6, PMEM2_F_MEM_NONTEMPORAL);
	pmem2_get_memset_fn(map)(p + 200, 's', 8, PMEM2_F_MEM_NODRAIN);
	pmem2_get_drain_fn(map)();
	pmem2_get_memcpy_fn(map)(p + 4096, "page", 4,
				 PMEM2_F_MEM_NOFLUSH);
	pmem2_get_flush_fn(map)(p + 4096, 4);
	pmem2_get_drain_fn(map)();
	memcpy(p + 8192, "stored", 6);
	pmem2_get_persist_fn(map)(p + 8192, 6);
	printf("same_fn %d\n",
	       pmem2_get_memcpy_fn(map) == pmem2_get_memcpy_fn(map));
	step("deep_flush", pmem2_deep_flush(map, p, 4096));
	step("deep_flush_outside", pmem2_deep_flush(map, p + FILE_SIZE, 1));
	step("map_delete", pmem2_map_delete(&map));
	printf("map_deleted_null %d\n", map == NULL);
	pmem2_config_delete(&cfg);
}

/* Map the file again, read-only: what the first mapping wrote is there. */
static void map_read_back(struct pmem2_source *src)
{
	struct pmem2_config *cfg;
	struct pmem2_map *map;
	const char *p;

	pmem2_config_new(&cfg);
	pmem2_config_set_required_store_granularity(cfg, PMEM2_GRANULARITY_PAGE);
	pmem2_config_set_protection(cfg, PMEM2_PROT_READ);
	map = try_map("map_read_only", cfg, src);
	if (!map)
		exit(1);
	p = pmem2_map_get_address(map);
	printf("read %.6s %.6s %.8s %.4s %.6s private_gone %d\n", p, p + 100,
	       p + 200, p + 4096, p + 8192, p[0] != 'p');
	pmem2_map_delete(&map);
	pmem2_config_delete(&cfg);
}

static void source_file(const char *dir)
{
	char path[4096];
	struct pmem2_source *src;
	size_t size = 0, align = 0;
	int fd, got = -1, ro;

	snprintf(path, sizeof(path), "%s/pmem2_interop_file", dir);
	fd = make_file(path, FILE_SIZE);
	if (step("source_from_fd", pmem2_source_from_fd(&src, fd)))
		exit(1);
	step("source_size", pmem2_source_size(src, &size));
	step("source_alignment", pmem2_source_alignment(src, &align));
	printf("size %zu alignment %zu\n", size, align);
	step("source_get_fd", pmem2_source_get_fd(src, &got));
	printf("same_fd %d\n", got == fd);
	map_errors(src);
	map_write(src);
	map_read_back(src);
	step("source_delete", pmem2_source_delete(&src));
	printf("source_deleted_null %d\n", src == NULL);
	close(fd);

	/* A read-only descriptor: a writable shared mapping is refused. */
	ro = open(path, O_RDONLY);
	if (step("source_from_fd_ro", pmem2_source_from_fd(&src, ro)) == 0) {
		struct pmem2_config *cfg;

		pmem2_config_new(&cfg);
		pmem2_config_set_required_store_granularity(cfg,
						PMEM2_GRANULARITY_PAGE);
		try_map("map_ro_fd_rw", cfg, src);
		pmem2_config_set_protection(cfg, PMEM2_PROT_READ);
		struct pmem2_map *map = try_map("map_ro_fd_ro", cfg, src);
		if (map)
			pmem2_map_delete(&map);
		pmem2_config_delete(&cfg);
		pmem2_source_delete(&src);
	}
	close(ro);
	unlink(path);

	/* An empty file, a directory, a write-only and a closed descriptor. */
	fd = make_file(path, 0);
	if (step("source_from_fd_empty", pmem2_source_from_fd(&src, fd)) == 0) {
		struct pmem2_config *cfg;

		pmem2_config_new(&cfg);
		pmem2_config_set_required_store_granularity(cfg,
						PMEM2_GRANULARITY_PAGE);
		try_map("map_empty", cfg, src);
		pmem2_config_delete(&cfg);
		pmem2_source_delete(&src);
	}
	close(fd);
	fd = open(path, O_WRONLY);
	step("source_from_fd_wronly", pmem2_source_from_fd(&src, fd));
	close(fd);
	unlink(path);
	fd = open(dir, O_RDONLY);
	step("source_from_fd_dir", pmem2_source_from_fd(&src, fd));
	close(fd);
	step("source_from_fd_closed", pmem2_source_from_fd(&src, fd));
	step("source_from_fd_minus1", pmem2_source_from_fd(&src, -1));
}

static void source_anon(void)
{
	struct pmem2_source *src;
	struct pmem2_config *cfg;
	struct pmem2_map *map;
	size_t size = 0, align = 0;
	int fd = 12345, ret;

	step("source_from_anon", pmem2_source_from_anon(&src, FILE_SIZE));
	step("anon_size", pmem2_source_size(src, &size));
	step("anon_alignment", pmem2_source_alignment(src, &align));
	printf("anon size %zu alignment %zu\n", size, align);
	ret = pmem2_source_get_fd(src, &fd);
	printf("anon_get_fd %d fd %d\n", ret, fd);
	pmem2_config_new(&cfg);
	pmem2_config_set_required_store_granularity(cfg, PMEM2_GRANULARITY_PAGE);
	/* The offset of an anonymous source is ignored. */
	pmem2_config_set_offset(cfg, 4096);
	map = try_map("map_anon", cfg, src);
	if (map) {
		char *p = pmem2_map_get_address(map);

		printf("anon_zero %d\n", p[0] == 0 && p[FILE_SIZE - 1] == 0);
		pmem2_get_memset_fn(map)(p, 1, FILE_SIZE, 0);
		/* No device under it: the deep flush did not happen. */
		step("deep_flush_anon", pmem2_deep_flush(map, p, 100));
		step("deep_flush_anon_outside",
		     pmem2_deep_flush(map, p + FILE_SIZE, 1));
		step("map_delete_anon", pmem2_map_delete(&map));
	}
	pmem2_config_delete(&cfg);
	step("source_delete_anon", pmem2_source_delete(&src));
}

/*
 * The offset of an anonymous source is checked as a file's is (the map
 * starts at the source's start all the same); an empty one, or one too
 * big for any address space, is refused.
 */
static void anon_offsets(void)
{
	static const size_t offsets[] = { 0, 4096, 8192, (size_t)1 << 30, 1,
					  4095 };
	struct pmem2_source *src;
	struct pmem2_config *cfg;
	struct pmem2_map *map;
	char what[64];

	pmem2_config_new(&cfg);
	pmem2_config_set_required_store_granularity(cfg, PMEM2_GRANULARITY_PAGE);
	pmem2_source_from_anon(&src, 0);
	try_map("map_anon_empty", cfg, src);
	pmem2_source_delete(&src);
	pmem2_source_from_anon(&src, 4097);
	for (size_t i = 0; i < sizeof(offsets) / sizeof(offsets[0]); i++) {
		pmem2_config_set_offset(cfg, offsets[i]);
		snprintf(what, sizeof(what), "map_anon_4097_offset_%zu",
			 offsets[i]);
		map = try_map(what, cfg, src);
		if (map)
			pmem2_map_delete(&map);
	}
	pmem2_config_set_offset(cfg, 4096);
	pmem2_config_set_length(cfg, 4096);
	try_map("map_anon_4097_offset_4096_length_4096", cfg, src);
	pmem2_config_set_offset(cfg, 0);
	map = try_map("map_anon_4097_length_4096", cfg, src);
	if (map)
		pmem2_map_delete(&map);
	pmem2_source_delete(&src);
	pmem2_config_set_length(cfg, 0);
	pmem2_source_from_anon(&src, SIZE_MAX & ~(size_t)4095);
	try_map("map_anon_size_max", cfg, src);
	pmem2_source_delete(&src);
	pmem2_source_from_anon(&src, SIZE_MAX - ((size_t)2 << 20) + 4097);
	try_map("map_anon_size_max_less_2m", cfg, src);
	pmem2_source_delete(&src);
	pmem2_config_delete(&cfg);
}

static void from_existing(void)
{
	struct pmem2_source *src;
	struct pmem2_map *map, *again;
	static char buf[8192];

	pmem2_source_from_anon(&src, sizeof(buf));
	step("from_existing", pmem2_map_from_existing(&map, src, buf,
			sizeof(buf), PMEM2_GRANULARITY_CACHE_LINE));
	printf("existing size %zu granularity %d address_same %d\n",
	       pmem2_map_get_size(map),
	       (int)pmem2_map_get_store_granularity(map),
	       pmem2_map_get_address(map) == (void *)buf);
	/* A failure leaves *map as it was. */
	again = (struct pmem2_map *)1;
	step("from_existing_again", pmem2_map_from_existing(&again, src, buf,
			sizeof(buf), PMEM2_GRANULARITY_CACHE_LINE));
	printf("from_existing_again_untouched %d\n",
	       again == (struct pmem2_map *)1);
	step("from_existing_overlap", pmem2_map_from_existing(&again, src,
			buf + 4096, 4096, PMEM2_GRANULARITY_BYTE));
	printf("from_existing_overlap_untouched %d\n",
	       again == (struct pmem2_map *)1);
	pmem2_get_memcpy_fn(map)(buf, "existing", 8, 0);
	step("map_delete_existing", pmem2_map_delete(&map));
	printf("buffer_kept %.8s\n", buf);

	/*
	 * An empty map: the point at its address. Its delete is not
	 * compared: PMDK cannot find it again (PMEM2_E_MAPPING_NOT_FOUND,
	 * the map is never freed), the drop-in deletes it.
	 */
	step("from_existing_empty", pmem2_map_from_existing(&map, src, buf, 0,
			PMEM2_GRANULARITY_PAGE));
	printf("empty size %zu\n", pmem2_map_get_size(map));
	step("from_existing_at_empty", pmem2_map_from_existing(&again, src,
			buf, sizeof(buf), PMEM2_GRANULARITY_PAGE));
	step("map_delete_at_empty", pmem2_map_delete(&again));
	pmem2_map_delete(&map);

	/*
	 * The deep flush of anonymous memory: nothing to push it to (BYTE);
	 * a PAGE map's persist was its msync(), all a deep flush does there.
	 */
	pmem2_map_from_existing(&map, src, buf, sizeof(buf),
				PMEM2_GRANULARITY_BYTE);
	step("deep_flush_existing_anon_byte", pmem2_deep_flush(map, buf, 10));
	pmem2_map_delete(&map);
	pmem2_map_from_existing(&map, src, buf, sizeof(buf),
				PMEM2_GRANULARITY_PAGE);
	step("deep_flush_existing_anon_page", pmem2_deep_flush(map, buf, 10));
	pmem2_map_delete(&map);
	pmem2_source_delete(&src);
}

int main(int argc, char **argv)
{
	if (argc != 2) {
		fprintf(stderr, "usage: %s DIR\n", argv[0]);
		return 2;
	}
	setvbuf(stdout, NULL, _IOLBF, 0);
	config_errors();
	source_file(argv[1]);
	source_anon();
	anon_offsets();
	from_existing();
	printf("done\n");
	return 0;
}
