/* SPDX-License-Identifier: MIT */
/*
 * Bug: a store, then pmem_drain() without a write-back of its line. The
 * fence orders nothing; the 8 bytes may still be in the CPU cache.
 * Expected: not-written-back at pmem_drain.
 */
#include <libpmem.h>
#include "corpus.h"

int main(int argc, char **argv)
{
	char *base = corpus_map(argc, argv);
	char *p = base + CORPUS_OFF;

	store8(p);
#ifdef FIXED
	MUTABLE(corpus_flush(p, 8));
#endif
	MUTABLE(corpus_drain());
	corpus_unmap(base);
	return 0;
}
