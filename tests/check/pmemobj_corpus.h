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
 */
#ifndef PMEMOBJ_CORPUS_H
#define PMEMOBJ_CORPUS_H

#include <libpmemobj.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include "corpus.h"
#include "mutable.h"

static inline PMEMobjpool *pobj_create(int argc, char **argv)
{
	char path[4096];
	PMEMobjpool *pop;

	corpus_path(path, sizeof(path), argc, argv);
	pop = pmemobj_create(path, "corpus", PMEMOBJ_MIN_POOL, 0600);
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
