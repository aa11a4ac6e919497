/* SPDX-License-Identifier: MIT */
/*
 * pmem2_client.c - a program written against PMDK's own <libpmem2.h>
 * (Debian's libpmem2-dev) and linked as a PMDK program is, with -lpmem2.
 * scripts/check-deb.sh runs it on ntmem-pmem-compat's drop-in directory
 * and checks which libpmem2.so.1 answered: the drop-in has no banner of
 * its own, so the program says where the library it called lives.
 *
 *   pmem2_client DIR   maps DIR/map2 (1 MiB, shared, PAGE granularity
 *                      required: any file will do), copies a string in
 *                      with the map's memcpy function, reads it back, and
 *                      prints "pmem2_client: libpmem2 calls ok, from PATH",
 *                      PATH the file pmem2_map_new() was found in.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <fcntl.h>
#include <libpmem2.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

static int fail(const char *what)
{
	fprintf(stderr, "pmem2_client: %s: %s\n", what, pmem2_errormsg());
	return 1;
}

int main(int argc, char **argv)
{
	static const char text[] = "written through PMDK's libpmem2 API";
	struct pmem2_config *cfg;
	struct pmem2_source *src;
	struct pmem2_map *map;
	char path[4096];
	Dl_info info;
	char *p;
	int fd;

	if (argc != 2) {
		fprintf(stderr, "usage: pmem2_client DIR\n");
		return 2;
	}
	snprintf(path, sizeof(path), "%s/map2", argv[1]);
	fd = open(path, O_RDWR | O_CREAT | O_TRUNC, 0600);
	if (fd < 0 || ftruncate(fd, 1 << 20)) {
		perror(path);
		return 1;
	}
	if (pmem2_source_from_fd(&src, fd))
		return fail("pmem2_source_from_fd");
	if (pmem2_config_new(&cfg) ||
	    pmem2_config_set_required_store_granularity(cfg,
						PMEM2_GRANULARITY_PAGE))
		return fail("pmem2_config");
	if (pmem2_map_new(&map, cfg, src))
		return fail("pmem2_map_new");
	p = pmem2_map_get_address(map);
	pmem2_get_memcpy_fn(map)(p, text, sizeof(text), 0);
	if (memcmp(p, text, sizeof(text))) {
		fprintf(stderr, "pmem2_client: read back differs\n");
		return 1;
	}
	if (pmem2_map_delete(&map))
		return fail("pmem2_map_delete");
	pmem2_config_delete(&cfg);
	pmem2_source_delete(&src);
	close(fd);
	if (!dladdr((void *)pmem2_map_new, &info) || !info.dli_fname) {
		fprintf(stderr, "pmem2_client: dladdr(pmem2_map_new) failed\n");
		return 1;
	}
	printf("pmem2_client: libpmem2 calls ok, from %s\n", info.dli_fname);
	return 0;
}
