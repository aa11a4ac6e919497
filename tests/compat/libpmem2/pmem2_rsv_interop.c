// SPDX-License-Identifier: MIT
/*
 * pmem2_rsv_interop.c - one fixed run through libpmem2's virtual-memory
 * reservations (pmem2_vm_reservation_*() and mapping into one), printing
 * every return code and answer, for check_pmem2_interop.sh.
 *
 * Built against PMDK's own <libpmem2.h> and linked with -lpmem2, as
 * pmem2_interop.c is, and run on Debian's library and on the drop-in: the
 * outputs must be the same line for line. It prints no absolute address,
 * only codes, sizes, offsets into a reservation, whether an out pointer
 * was set to NULL, whether a range of address space is taken, and an
 * address's alignment where both libraries promise it (never one that
 * chance gives: the outputs would differ now and then).
 *
 *   pmem2_rsv_interop DIR    (a directory for its scratch file)
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include <libpmem2.h>

#ifndef MAP_FIXED_NOREPLACE
#define MAP_FIXED_NOREPLACE 0x100000
#endif

#define PAGE ((size_t)4096)
#define HUGE ((size_t)2 << 20)

static int step(const char *what, int ret)
{
	printf("%s %d\n", what, ret);
	return ret;
}

/*
 * Whether [addr, +len) has anything mapped in it (a reservation's
 * placeholder counts): MAP_FIXED_NOREPLACE refuses such a range.
 */
static int taken(void *addr, size_t len)
{
	void *p = mmap(addr, len, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS |
		       MAP_FIXED_NOREPLACE, -1, 0);

	if (p == MAP_FAILED)
		return errno == EEXIST;
	munmap(p, len);
	return p != addr;	/* an old kernel took it as a hint */
}

static long off_in(struct pmem2_vm_reservation *rsv, struct pmem2_map *map)
{
	if (!map)
		return -1;
	return (long)((char *)pmem2_map_get_address(map) -
		      (char *)pmem2_vm_reservation_get_address(rsv));
}

/* Map @src into @rsv at @offset; print the code, the offset it got. */
static struct pmem2_map *map_at(const char *what,
				struct pmem2_vm_reservation *rsv, size_t offset,
				size_t length, struct pmem2_source *src)
{
	struct pmem2_config *cfg;
	struct pmem2_map *map = (struct pmem2_map *)1;
	int ret;

	pmem2_config_new(&cfg);
	pmem2_config_set_required_store_granularity(cfg, PMEM2_GRANULARITY_PAGE);
	pmem2_config_set_length(cfg, length);
	step("set_vm_reservation", pmem2_config_set_vm_reservation(cfg, rsv,
								   offset));
	ret = pmem2_map_new(&map, cfg, src);
	pmem2_config_delete(&cfg);
	printf("%s %d", what, ret);
	if (ret) {
		printf(" map_null %d\n", map == NULL);
		return NULL;
	}
	printf(" offset %ld size %zu\n", off_in(rsv, map),
	       pmem2_map_get_size(map));
	return map;
}

/* Print what a find call answered. */
static void found(const char *what, struct pmem2_vm_reservation *rsv,
		  int ret, struct pmem2_map *map)
{
	printf("%s %d", what, ret);
	if (ret)
		printf(" map_null %d\n", map == NULL);
	else
		printf(" offset %ld\n", off_in(rsv, map));
}

static void new_errors(void)
{
	struct pmem2_vm_reservation *rsv = (void *)1, *other;
	void *plain;
	int ret;

	ret = pmem2_vm_reservation_new(&rsv, NULL, PAGE + 1);
	printf("rsv_new_size_unaligned %d null %d\n", ret, rsv == NULL);
	rsv = (void *)1;
	ret = pmem2_vm_reservation_new(&rsv, (void *)(PAGE + 1), PAGE);
	printf("rsv_new_addr_unaligned %d null %d\n", ret, rsv == NULL);

	/* A reservation over a plain mapping, and over another one. */
	plain = mmap(NULL, 4 * PAGE, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS,
		     -1, 0);
	rsv = (void *)1;
	ret = pmem2_vm_reservation_new(&rsv, (char *)plain + PAGE, PAGE);
	printf("rsv_new_over_mapping %d null %d\n", ret, rsv == NULL);
	munmap(plain, 4 * PAGE);
	/*
	 * A free address gets the reservation there. PMDK 1.12.1 takes 4 MiB
	 * at a fixed address whatever the size: ask inside a free 16 MiB.
	 */
	plain = mmap(NULL, 16 * HUGE / 2, PROT_NONE, MAP_PRIVATE |
		     MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	munmap(plain, 16 * HUGE / 2);
	ret = pmem2_vm_reservation_new(&rsv, plain, 4 * PAGE);
	printf("rsv_new_fixed %d same_address %d size %zu taken %d\n", ret,
	       !ret && pmem2_vm_reservation_get_address(rsv) == plain,
	       ret ? 0 : pmem2_vm_reservation_get_size(rsv),
	       taken(plain, 4 * PAGE));
	other = (void *)1;
	ret = pmem2_vm_reservation_new(&other, (char *)plain + 2 * PAGE,
				       4 * PAGE);
	printf("rsv_new_over_reservation %d null %d\n", ret, other == NULL);
	if (rsv) {
		step("rsv_delete_fixed", pmem2_vm_reservation_delete(&rsv));
		printf("rsv_deleted_null %d freed %d\n", rsv == NULL,
		       !taken(plain, 4 * PAGE));
	}
}

static void new_sizes(void)
{
	struct pmem2_vm_reservation *rsv;
	size_t size;
	int ret;

	ret = pmem2_vm_reservation_new(&rsv, NULL, 0);
	printf("rsv_new_zero %d\n", ret);
	if (!ret)
		pmem2_vm_reservation_delete(&rsv);
	ret = pmem2_vm_reservation_new(&rsv, NULL, 3 * PAGE);
	printf("rsv_new_small %d size %zu page_aligned %d\n", ret,
	       pmem2_vm_reservation_get_size(rsv),
	       (uintptr_t)pmem2_vm_reservation_get_address(rsv) % PAGE == 0);
	pmem2_vm_reservation_delete(&rsv);
	/* A reservation of 2 MiB or more starts on a 2 MiB boundary. */
	ret = pmem2_vm_reservation_new(&rsv, NULL, 2 * HUGE);
	printf("rsv_new_huge %d size %zu huge_aligned %d\n", ret,
	       pmem2_vm_reservation_get_size(rsv),
	       (uintptr_t)pmem2_vm_reservation_get_address(rsv) % HUGE == 0);
	step("extend_zero", pmem2_vm_reservation_extend(rsv, 0));
	printf("after_extend_zero size %zu\n",
	       pmem2_vm_reservation_get_size(rsv));
	/*
	 * More than any address space: -ENOMEM, mmap()'s word, on both.
	 * (A size whose alignment slack wraps, SIZE_MAX - 4095, is not
	 * compared: PMDK 1.12.1 then reserves 1 GiB and shows the whole.)
	 */
	size = pmem2_vm_reservation_get_size(rsv);
	step("extend_impossible", pmem2_vm_reservation_extend(rsv,
							      (size_t)1 << 62));
	printf("after_extend_impossible same_size %d\n",
	       pmem2_vm_reservation_get_size(rsv) == size);
	pmem2_vm_reservation_delete(&rsv);
	rsv = (void *)1;
	ret = pmem2_vm_reservation_new(&rsv, NULL, (size_t)1 << 62);
	printf("rsv_new_impossible %d null %d\n", ret, rsv == NULL);
	/*
	 * Only the 2 MiB alignment both libraries promise is printed: whether
	 * the address is also a multiple of 1 GiB is chance (ASLR), one run
	 * in a few hundred, and would differ between the two runs.
	 */
	ret = pmem2_vm_reservation_new(&rsv, NULL, (size_t)1 << 30);
	printf("rsv_new_gib %d size %zu huge_aligned %d\n", ret,
	       pmem2_vm_reservation_get_size(rsv),
	       (uintptr_t)pmem2_vm_reservation_get_address(rsv) % HUGE == 0);
	pmem2_vm_reservation_delete(&rsv);
}

/* Maps in a reservation: overlap, range, find, delete. */
static void maps(struct pmem2_source *anon)
{
	struct pmem2_vm_reservation *rsv;
	struct pmem2_map *a, *b, *c, *m = (void *)1;
	char *base;
	int ret;

	if (step("rsv_new", pmem2_vm_reservation_new(&rsv, NULL, 16 * PAGE)))
		exit(1);
	base = pmem2_vm_reservation_get_address(rsv);
	ret = pmem2_vm_reservation_map_find_first(rsv, &m);
	found("find_first_empty", rsv, ret, m);
	m = (void *)1;
	ret = pmem2_vm_reservation_map_find_last(rsv, &m);
	found("find_last_empty", rsv, ret, m);
	m = (void *)1;
	ret = pmem2_vm_reservation_map_find(rsv, 0, 16 * PAGE, &m);
	found("find_empty", rsv, ret, m);

	a = map_at("map_a", rsv, 2 * PAGE, 2 * PAGE, anon);
	b = map_at("map_b", rsv, 8 * PAGE, 4 * PAGE, anon);
	c = map_at("map_c", rsv, 0, PAGE, anon);
	map_at("map_overlap_start", rsv, PAGE, 2 * PAGE, anon);
	map_at("map_overlap_inside", rsv, 9 * PAGE, PAGE, anon);
	map_at("map_overlap_same", rsv, 2 * PAGE, 2 * PAGE, anon);
	map_at("map_offset_unaligned", rsv, 5 * PAGE + 1, PAGE, anon);
	map_at("map_past_end", rsv, 14 * PAGE, 4 * PAGE, anon);
	map_at("map_offset_past_end", rsv, 20 * PAGE, PAGE, anon);
	map_at("map_offset_at_end", rsv, 16 * PAGE, PAGE, anon);
	map_at("map_unaligned_and_too_long", rsv, 5 * PAGE + 1, 20 * PAGE,
	       anon);
	map_at("map_length_unaligned", rsv, 4 * PAGE, PAGE + 1, anon);
	map_at("map_past_source", rsv, 0, 128 * PAGE, anon);
	map_at("map_unaligned_past_source", rsv, 1, 128 * PAGE, anon);
	printf("gap_still_reserved %d\n", taken(base + 4 * PAGE, 4 * PAGE));

	if (a) {
		memset(pmem2_map_get_address(a), 'a', 2 * PAGE);
		printf("a_written %d\n", base[2 * PAGE] == 'a');
	}
	ret = pmem2_vm_reservation_map_find(rsv, 0, 16 * PAGE, &m);
	found("find_all", rsv, ret, m);
	ret = pmem2_vm_reservation_map_find(rsv, 3 * PAGE, 8 * PAGE, &m);
	found("find_from_a", rsv, ret, m);
	ret = pmem2_vm_reservation_map_find(rsv, 3 * PAGE + 100, 1, &m);
	found("find_byte_in_a", rsv, ret, m);
	m = (void *)1;
	ret = pmem2_vm_reservation_map_find(rsv, 3 * PAGE, 0, &m);
	found("find_len_zero_in_a", rsv, ret, m);
	m = (void *)1;
	ret = pmem2_vm_reservation_map_find(rsv, 4 * PAGE, 0, &m);
	found("find_len_zero_at_a_end", rsv, ret, m);
	m = (void *)1;
	ret = pmem2_vm_reservation_map_find(rsv, 2 * PAGE, 0, &m);
	found("find_len_zero_at_a_start", rsv, ret, m);
	m = (void *)1;
	ret = pmem2_vm_reservation_map_find(rsv, 4 * PAGE, 4 * PAGE, &m);
	found("find_gap", rsv, ret, m);
	m = (void *)1;
	ret = pmem2_vm_reservation_map_find(rsv, 12 * PAGE, 4 * PAGE, &m);
	found("find_tail", rsv, ret, m);
	ret = pmem2_vm_reservation_map_find_first(rsv, &m);
	found("find_first", rsv, ret, m);
	ret = pmem2_vm_reservation_map_find_last(rsv, &m);
	found("find_last", rsv, ret, m);
	if (a && b && c) {
		ret = pmem2_vm_reservation_map_find_next(rsv, c, &m);
		found("find_next_c", rsv, ret, m);
		ret = pmem2_vm_reservation_map_find_next(rsv, a, &m);
		found("find_next_a", rsv, ret, m);
		m = (void *)1;
		ret = pmem2_vm_reservation_map_find_next(rsv, b, &m);
		found("find_next_b", rsv, ret, m);
		ret = pmem2_vm_reservation_map_find_prev(rsv, b, &m);
		found("find_prev_b", rsv, ret, m);
		ret = pmem2_vm_reservation_map_find_prev(rsv, a, &m);
		found("find_prev_a", rsv, ret, m);
		m = (void *)1;
		ret = pmem2_vm_reservation_map_find_prev(rsv, c, &m);
		found("find_prev_c", rsv, ret, m);
	}

	ret = pmem2_vm_reservation_delete(&rsv);
	printf("rsv_delete_not_empty %d kept %d\n", ret, rsv != NULL);

	/* Shrink: every check, then from each end. */
	step("shrink_offset_unaligned", pmem2_vm_reservation_shrink(rsv, 1,
								    PAGE));
	step("shrink_size_unaligned", pmem2_vm_reservation_shrink(rsv, 0, 1));
	step("shrink_offset_at_end", pmem2_vm_reservation_shrink(rsv,
							16 * PAGE, PAGE));
	step("shrink_size_zero", pmem2_vm_reservation_shrink(rsv, 15 * PAGE,
							     0));
	step("shrink_past_end", pmem2_vm_reservation_shrink(rsv, 15 * PAGE,
							    2 * PAGE));
	step("shrink_middle", pmem2_vm_reservation_shrink(rsv, 4 * PAGE,
							  PAGE));
	step("shrink_whole", pmem2_vm_reservation_shrink(rsv, 0, 16 * PAGE));
	step("shrink_occupied_front", pmem2_vm_reservation_shrink(rsv, 0,
								  PAGE));
	step("shrink_occupied_back", pmem2_vm_reservation_shrink(rsv,
							8 * PAGE, 8 * PAGE));
	printf("size_kept %zu\n", pmem2_vm_reservation_get_size(rsv));
	step("shrink_back", pmem2_vm_reservation_shrink(rsv, 14 * PAGE,
							2 * PAGE));
	/*
	 * Not compared: whether the pages shrunk off are free again (PMDK
	 * 1.12.1 unmaps the wrong range, see test_pmem2_vm_reservation.c).
	 */
	printf("after_shrink_back size %zu\n",
	       pmem2_vm_reservation_get_size(rsv));
	if (c) {
		step("map_delete_c", pmem2_map_delete(&c));
		printf("c_placeholder_back %d deleted_null %d\n",
		       taken(base, PAGE), c == NULL);
		ret = pmem2_vm_reservation_map_find_first(rsv, &m);
		found("find_first_after_c", rsv, ret, m);
	}
	step("shrink_front", pmem2_vm_reservation_shrink(rsv, 0, 2 * PAGE));
	printf("after_shrink_front size %zu moved %ld\n",
	       pmem2_vm_reservation_get_size(rsv),
	       (long)((char *)pmem2_vm_reservation_get_address(rsv) - base));
	if (a)
		printf("a_offset_now %ld a_kept %d\n", off_in(rsv, a),
		       base[2 * PAGE] == 'a');

	/*
	 * Extend. Not compared: an extension over another mapping (PMDK
	 * 1.12.1 reserved more than it shows, and grows into that).
	 */
	step("extend_unaligned", pmem2_vm_reservation_extend(rsv, 1));
	step("extend", pmem2_vm_reservation_extend(rsv, 2 * PAGE));
	printf("after_extend size %zu taken %d\n",
	       pmem2_vm_reservation_get_size(rsv),
	       taken(base + 2 * PAGE, pmem2_vm_reservation_get_size(rsv)));
	m = map_at("map_in_extension", rsv, 12 * PAGE, 2 * PAGE, anon);
	if (m)
		pmem2_map_delete(&m);
	if (a)
		step("map_delete_a", pmem2_map_delete(&a));
	if (b)
		step("map_delete_b", pmem2_map_delete(&b));
	m = (void *)1;
	ret = pmem2_vm_reservation_map_find(rsv, 0,
				pmem2_vm_reservation_get_size(rsv), &m);
	found("find_after_deletes", rsv, ret, m);
	printf("placeholders_back %d\n",
	       taken(pmem2_vm_reservation_get_address(rsv),
		     pmem2_vm_reservation_get_size(rsv)));
	step("rsv_delete", pmem2_vm_reservation_delete(&rsv));
	printf("rsv_deleted_null %d\n", rsv == NULL);
}

/* A file mapped into a reservation, and a failed map leaving it whole. */
static void file_maps(const char *dir)
{
	char path[4096];
	struct pmem2_vm_reservation *rsv;
	struct pmem2_source *src;
	struct pmem2_config *cfg;
	struct pmem2_map *m;
	char *base;
	int fd, ret;

	snprintf(path, sizeof(path), "%s/pmem2_rsv_interop_file", dir);
	fd = open(path, O_RDWR | O_CREAT | O_TRUNC, 0600);
	if (fd < 0 || ftruncate(fd, (off_t)(8 * PAGE))) {
		perror(path);
		exit(2);
	}
	if (pmem2_source_from_fd(&src, fd) ||
	    pmem2_vm_reservation_new(&rsv, NULL, 8 * PAGE))
		exit(1);
	base = pmem2_vm_reservation_get_address(rsv);
	m = map_at("map_file", rsv, 4 * PAGE, 4 * PAGE, src);
	map_at("map_file_past_end", rsv, 6 * PAGE, 0, src);
	if (m) {
		memcpy((char *)pmem2_map_get_address(m) + 10, "file", 4);
		pmem2_get_persist_fn(m)((char *)pmem2_map_get_address(m), 16);
		step("map_delete_file", pmem2_map_delete(&m));
	}
	pread(fd, path, 4, 10);
	printf("file_written %d\n", memcmp(path, "file", 4) == 0);
	/* Byte granularity is refused for a plain file: nothing changes. */
	pmem2_config_new(&cfg);
	pmem2_config_set_required_store_granularity(cfg,
						    PMEM2_GRANULARITY_BYTE);
	pmem2_config_set_vm_reservation(cfg, rsv, 0);
	m = (void *)1;
	ret = pmem2_map_new(&m, cfg, src);
	printf("map_file_byte %d null %d placeholder_kept %d\n", ret,
	       m == NULL, taken(base, 8 * PAGE));
	ret = pmem2_vm_reservation_map_find_first(rsv, &m);
	found("find_after_refused", rsv, ret, m);
	/* A NULL reservation maps anywhere. */
	pmem2_config_set_required_store_granularity(cfg,
						    PMEM2_GRANULARITY_PAGE);
	step("set_vm_reservation_null",
	     pmem2_config_set_vm_reservation(cfg, NULL, 12345));
	ret = pmem2_map_new(&m, cfg, src);
	printf("map_no_reservation %d size %zu\n", ret,
	       ret ? 0 : pmem2_map_get_size(m));
	if (!ret)
		pmem2_map_delete(&m);
	pmem2_config_delete(&cfg);
	step("rsv_delete_file", pmem2_vm_reservation_delete(&rsv));
	pmem2_source_delete(&src);
	close(fd);
	unlink(path);
}

int main(int argc, char **argv)
{
	struct pmem2_source *anon;

	if (argc != 2) {
		fprintf(stderr, "usage: %s DIR\n", argv[0]);
		return 2;
	}
	setvbuf(stdout, NULL, _IOLBF, 0);
	new_errors();
	new_sizes();
	if (pmem2_source_from_anon(&anon, 64 * PAGE))
		return 1;
	maps(anon);
	pmem2_source_delete(&anon);
	file_maps(argv[1]);
	printf("done\n");
	return 0;
}
