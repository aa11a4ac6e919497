/* SPDX-License-Identifier: MIT */
/*
 * Bug: the store is at CORPUS_OFF, the persist covers the next cache line
 * (an off-by-one-line address computation). Expected: not-written-back at
 * pmem_persist, for the 8 stored bytes only.
 */
#include <libpmem.h>
#include "corpus.h"

int main(int argc, char **argv)
{
	char *base = corpus_map(argc, argv);
	char *p = base + CORPUS_OFF;

	store8(p);
#ifdef FIXED
	MUTABLE(corpus_persist(p, 8));
#else
	MUTABLE(corpus_persist(base + (CORPUS_OFF & ~63) + 64, 64));
#endif
	corpus_unmap(base);
	return 0;
}
