/* SPDX-License-Identifier: MIT */
/*
 * Bug: a store written back with pmem_flush() but never fenced before
 * pmem_unmap(): the write-back may not have reached the medium.
 * Expected: not-fenced at pmem_unmap.
 */
#include <libpmem.h>
#include "corpus.h"

int main(int argc, char **argv)
{
	char *base = corpus_map(argc, argv);
	char *p = base + CORPUS_OFF;

	store8(p);
	MUTABLE(corpus_flush(p, 8));
#ifdef FIXED
	MUTABLE(corpus_drain());
#endif
	corpus_unmap(base);
	return 0;
}
