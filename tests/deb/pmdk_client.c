/* SPDX-License-Identifier: MIT */
/*
 * pmdk_client.c - a program written against PMDK's own headers (Debian's
 * libpmem-dev and libpmemblk-dev) and linked as a PMDK program is, with
 * -lpmem -lpmemblk. scripts/check-deb.sh runs it on the drop-ins of the
 * ntmem-pmem-compat package and checks from their NTMEM_VERBOSE banners
 * that they, not PMDK, answered.
 *
 *   pmdk_client DIR   maps DIR/map with pmem_map_file(), copies a string
 *                     in with pmem_memcpy_persist() and reads it back;
 *                     creates the pool DIR/pool with pmemblk_create(),
 *                     writes a block and reads it back after a reopen.
 */
#include <libpmem.h>
#include <libpmemblk.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define BLOCK_SIZE 4096

static int fail(const char *what, const char *msg)
{
	fprintf(stderr, "pmdk_client: %s: %s\n", what, msg);
	return 1;
}

static int check_pmem(const char *dir)
{
	static const char text[] = "written through PMDK's libpmem API";
	char path[4096];
	size_t mapped;
	int is_pmem;
	char *p;

	snprintf(path, sizeof(path), "%s/map", dir);
	p = pmem_map_file(path, 1 << 20, PMEM_FILE_CREATE, 0600, &mapped, &is_pmem);
	if (!p)
		return fail("pmem_map_file", pmem_errormsg());
	/* As libpmem(7) says: persist by what pmem_is_pmem() says (ntmem
	 * check holds a file behind a page cache to msync()). */
	if (is_pmem) {
		pmem_memcpy_persist(p, text, sizeof(text));
	} else {
		memcpy(p, text, sizeof(text));
		if (pmem_msync(p, sizeof(text)))
			return fail("pmem_msync", pmem_errormsg());
	}
	if (memcmp(p, text, sizeof(text)))
		return fail("pmem_memcpy_persist", "read back differs");
	pmem_unmap(p, mapped);
	return 0;
}

static int check_pmemblk(const char *dir)
{
	static char in[BLOCK_SIZE], out[BLOCK_SIZE];
	char path[4096];
	PMEMblkpool *pool;

	snprintf(path, sizeof(path), "%s/pool", dir);
	pool = pmemblk_create(path, BLOCK_SIZE, PMEMBLK_MIN_POOL, 0600);
	if (!pool)
		return fail("pmemblk_create", pmemblk_errormsg());
	memset(in, 0x5a, sizeof(in));
	if (pmemblk_write(pool, in, 3))
		return fail("pmemblk_write", pmemblk_errormsg());
	pmemblk_close(pool);

	pool = pmemblk_open(path, BLOCK_SIZE);
	if (!pool)
		return fail("pmemblk_open", pmemblk_errormsg());
	if (pmemblk_read(pool, out, 3))
		return fail("pmemblk_read", pmemblk_errormsg());
	pmemblk_close(pool);
	if (memcmp(in, out, sizeof(in)))
		return fail("pmemblk_read", "block 3 differs from what was written");
	return 0;
}

int main(int argc, char **argv)
{
	const char *msg;

	if (argc != 2) {
		fprintf(stderr, "usage: pmdk_client DIR\n");
		return 2;
	}
	msg = pmem_check_version(PMEM_MAJOR_VERSION, PMEM_MINOR_VERSION);
	if (msg)
		return fail("pmem_check_version", msg);
	msg = pmemblk_check_version(PMEMBLK_MAJOR_VERSION, PMEMBLK_MINOR_VERSION);
	if (msg)
		return fail("pmemblk_check_version", msg);
	if (check_pmem(argv[1]) || check_pmemblk(argv[1]))
		return 1;
	printf("pmdk_client: libpmem and libpmemblk calls ok\n");
	return 0;
}
