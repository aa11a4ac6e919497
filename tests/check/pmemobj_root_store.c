/* SPDX-License-Identifier: MIT */
/*
 * A libpmemobj program (Debian's libpmemobj, which reaches libpmem.so.1 as
 * its own dependency, after libc): it persists one field of its root
 * object, then stores another outside any transaction and closes the pool
 * without persisting it. Prints the pool file's offset of that field, the
 * one report the test looks for among whatever libpmemobj's own stores
 * bring. With -DFIXED the field is persisted.
 */
#include <libpmemobj.h>
#include <stdint.h>
#include <stdio.h>

#include "corpus.h"

struct root {
	uint64_t persisted;
	char pad[64];
	uint64_t forgotten;	/* in a cache line of its own */
	char tail[64];
};

int main(int argc, char **argv)
{
	char path[4096];
	PMEMobjpool *pop;
	struct root *r;

	corpus_path(path, sizeof(path), argc, argv);
	pop = pmemobj_create(path, "corpus", PMEMOBJ_MIN_POOL, 0600);
	if (!pop) {
		fprintf(stderr, "%s: %s\n", path, pmemobj_errormsg());
		return 1;
	}
	r = pmemobj_direct(pmemobj_root(pop, sizeof(*r)));
	if (!r) {
		fprintf(stderr, "pmemobj_root: %s\n", pmemobj_errormsg());
		return 1;
	}
	r->persisted = CORPUS_VALUE;
	pmemobj_persist(pop, &r->persisted, sizeof(r->persisted));
	store8((char *)&r->forgotten);
#ifdef FIXED
	pmemobj_persist(pop, &r->forgotten, sizeof(r->forgotten));
#endif
	/* A single-file pool is mapped from the file's first byte. */
	printf("offset %llu\n",
	       (unsigned long long)((char *)&r->forgotten - (char *)pop));
	fflush(stdout);
	pmemobj_close(pop);
	return 0;
}
