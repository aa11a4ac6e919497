/* SPDX-License-Identifier: MIT */
/*
 * A program that maps its file itself (open(), mmap(MAP_SHARED)) and asks
 * pmem_is_pmem() how to persist: pmem_persist() on pmem, pmem_msync()
 * elsewhere, as libpmem(7) tells a program to. The checker learns of the
 * mapping from the mmap() (its preload shim), and that it is pmem from
 * pmem_is_pmem().
 * Bug: of two 8-byte stores on two pages, only the second is persisted.
 * Expected: on pmem (PMEM_IS_PMEM_FORCE=1) not-written-back at
 * pmem_persist; behind a page cache not-synced, both found at munmap.
 */
#include <fcntl.h>
#include <sys/mman.h>
#include <unistd.h>

#include <libpmem.h>
#include "corpus.h"

static int is_pmem;

static void persist(void *p, size_t n)
{
	if (is_pmem)
		pmem_persist(p, n);
	else if (pmem_msync(p, n)) {
		perror("pmem_msync");
		exit(1);
	}
}

int main(int argc, char **argv)
{
	char path[4096];
	char *base;
	int fd;

	corpus_path(path, sizeof(path), argc, argv);
	/* A Device DAX: its first CORPUS_LEN bytes, mapped the same way;
	 * no libpmem calls that pmem, and a device's msync() fails, so the
	 * program ends at its first persist there (make check-kernel shows
	 * it). */
	bool device = corpus_device(path, argv);

	fd = device ? open(path, O_RDWR) :
		      open(path, O_RDWR | O_CREAT | O_TRUNC, 0600);
	if (fd < 0 || (!device && ftruncate(fd, (off_t)CORPUS_LEN))) {
		perror(path);
		return 1;
	}
	base = mmap(NULL, CORPUS_LEN, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	if (base == MAP_FAILED) {
		perror("mmap");
		return 1;
	}
	close(fd);
	is_pmem = pmem_is_pmem(base, CORPUS_LEN);
	memset(base, CORPUS_FILL, CORPUS_LEN);
	MUTABLE(persist(base, CORPUS_LEN));

	store8(base + CORPUS_OFF);
	store8(base + 2 * CORPUS_OFF);
#ifdef FIXED
	MUTABLE(persist(base + CORPUS_OFF, 8));
#endif
	MUTABLE(persist(base + 2 * CORPUS_OFF, 8));
	if (munmap(base, CORPUS_LEN)) {
		perror("munmap");
		return 1;
	}
	return 0;
}
