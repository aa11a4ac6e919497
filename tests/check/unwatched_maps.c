/* SPDX-License-Identifier: MIT */
/*
 * unwatched_maps DIR MODE - a correct program whose memory the checker
 * cannot watch all of (every store it makes is persisted):
 *   second  mremap() with an old size of 0 makes a second mapping of a
 *           watched page, which is not watched;
 *   many    257 files mapped at once, one more than the checker watches.
 * `ntmem check` must not call either run checked.
 */
#define _GNU_SOURCE
#include <libpmem.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>

#define NFILES 257
#define FILE_LEN ((size_t)4096)

static char *map(const char *dir, const char *name, size_t n)
{
	char path[4096];
	size_t len;
	int is_pmem;
	char *p;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	p = pmem_map_file(path, n, PMEM_FILE_CREATE, 0600, &len, &is_pmem);
	if (!p || len != n) {
		fprintf(stderr, "%s: %s\n", path, pmem_errormsg());
		return NULL;
	}
	pmem_memset_persist(p, 0x5a, n);
	return p;
}

static int second(const char *dir)
{
	char *base = map(dir, "second.pmem", 2 * FILE_LEN);
	char *again;

	if (!base)
		return 1;
	again = mremap(base + FILE_LEN, 0, FILE_LEN, MREMAP_MAYMOVE);
	if (again == MAP_FAILED) {
		perror("mremap");
		return 1;
	}
	munmap(again, FILE_LEN);
	return pmem_unmap(base, 2 * FILE_LEN) ? 1 : 0;
}

static int many(const char *dir)
{
	static char *maps[NFILES];
	char name[32];
	int ret = 0;

	for (int i = 0; i < NFILES; i++) {
		snprintf(name, sizeof(name), "many-%03d.pmem", i);
		maps[i] = map(dir, name, FILE_LEN);
		if (!maps[i])
			return 1;
	}
	for (int i = 0; i < NFILES; i++)
		ret |= pmem_unmap(maps[i], FILE_LEN);
	return ret ? 1 : 0;
}

int main(int argc, char **argv)
{
	if (argc == 3 && !strcmp(argv[2], "second"))
		return second(argv[1]);
	if (argc == 3 && !strcmp(argv[2], "many"))
		return many(argv[1]);
	fprintf(stderr, "usage: %s DIR second|many\n", argv[0]);
	return 2;
}
