/* SPDX-License-Identifier: MIT */
/*
 * Correct: a 4 KiB root object, larger than the allocation classes that
 * a small root comes from, so libpmemobj builds it in a run of a larger
 * class (or a chunk of its own). The program stores to every byte of it
 * and persists them all. Expected: no report, as for any correct program:
 * what libpmemobj stores to make the root is libpmemobj's business.
 */
#include <string.h>

#include "pmemobj_corpus.h"

#define ROOT_SIZE 4096

int main(int argc, char **argv)
{
	PMEMobjpool *pop = pobj_create(argc, argv);
	char *r = pobj_root(pop, ROOT_SIZE);

	memset(r, 0x5a, ROOT_SIZE);
	MUTABLE(pmemobj_persist(pop, r, ROOT_SIZE));
	pobj_close(pop);
	return 0;
}
