/* SPDX-License-Identifier: MIT */
/*
 * pmemobj_corpus.h - what the libpmemobj programs of the checker's corpus
 * share (Debian's libpmemobj-dev; libpmem.so.1 is libpmemobj's dependency):
 * a PMEMOBJ_MIN_POOL pool named after the program in the directory argv[1]
 * (corpus_path()), and the line the test reads to know where the one bug
 * is: "expect OFFSET LENGTH", the pool file's offset and length of the
 * bytes left not durable. Where libpmemobj puts an object is its business,
 * so the program says, not the test. Built twice: as is (the bug) and with
 * -DFIXED (the same work, durable).
 *
 * On a Device DAX (corpus_path()) the pool is the device, as libpmemobj
 * makes it there: of the device's size, over a header that must read
 * zero.
 */
#ifndef PMEMOBJ_CORPUS_H
#define PMEMOBJ_CORPUS_H

#include <fcntl.h>
#include <libpmemobj.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <unistd.h>

#include "corpus.h"
#include "mutable.h"

/*
 * The bytes a program of the corpus can touch: on a file, its pool is
 * PMEMOBJ_MIN_POOL; a device's larger heap starts at the same place, and
 * twice that leaves room for what libpmemobj lays out differently there.
 */
#define POBJ_DEVICE_TOUCHED (2 * (size_t)PMEMOBJ_MIN_POOL)

/*
 * A device keeps the last run's pool: back to zero as a new file is, so
 * that libpmemobj makes a pool there at all (a header that does not read
 * zero is refused) and each store of the program is a change, as on a new
 * file (corpus_device_reset()'s why). Mapped by the program itself: the
 * programs link libpmemobj alone, so the libpmem they load is libpmemobj's
 * choice; nothing of this mapping is judged (no pmem_* call names it),
 * and a Device DAX has no cache of its own to write back to.
 */
static inline void pobj_device_reset(const char *path)
{
	int fd = open(path, O_RDWR);
	void *p = fd < 0 ? MAP_FAILED :
		  mmap(NULL, POBJ_DEVICE_TOUCHED, PROT_READ | PROT_WRITE,
		       MAP_SHARED, fd, 0);

	if (p == MAP_FAILED) {
		perror(path);
		exit(1);
	}
	memset(p, 0, POBJ_DEVICE_TOUCHED);
	munmap(p, POBJ_DEVICE_TOUCHED);
	close(fd);
}

static inline PMEMobjpool *pobj_create(int argc, char **argv)
{
	char path[4096];
	PMEMobjpool *pop;

	corpus_path(path, sizeof(path), argc, argv);
	bool device = corpus_device(path, argv);

	if (device)
		pobj_device_reset(path);
	/* A device's pool is of the device's size: 0, as libpmemobj asks. */
	pop = pmemobj_create(path, "corpus", device ? 0 : PMEMOBJ_MIN_POOL, 0600);
	if (!pop) {
		fprintf(stderr, "%s: %s\n", path, pmemobj_errormsg());
		exit(1);
	}
	return pop;
}

/* The root object of @size bytes, zeroed and durable (libpmemobj's). */
static inline void *pobj_root(PMEMobjpool *pop, size_t size)
{
	void *r = pmemobj_direct(pmemobj_root(pop, size));

	if (!r) {
		fprintf(stderr, "pmemobj_root: %s\n", pmemobj_errormsg());
		exit(1);
	}
	return r;
}

/* "expect OFFSET LENGTH" of [p, p + len): a single-file pool is mapped
 * from the file's first byte. */
static inline void pobj_expect(PMEMobjpool *pop, const void *p, size_t len)
{
	printf("expect %llu %zu\n",
	       (unsigned long long)((const char *)p - (const char *)pop), len);
	fflush(stdout);
}

static inline void pobj_close(PMEMobjpool *pop)
{
	pmemobj_close(pop);
}

#endif /* PMEMOBJ_CORPUS_H */
