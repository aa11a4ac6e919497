/* SPDX-License-Identifier: MIT */
/*
 * Bug: the line is written back before the store, not after it; the
 * drain then fences a write-back of the old contents. Expected:
 * not-written-back (or stored-after-write-back) at pmem_drain.
 */
#include <libpmem.h>
#include "corpus.h"

int main(int argc, char **argv)
{
	char *base = corpus_map(argc, argv);
	char *p = base + CORPUS_OFF;

#ifdef FIXED
	store8(p);
	MUTABLE(corpus_flush(p, 8));
#else
	MUTABLE(corpus_flush(p, 8));
	store8(p);
#endif
	MUTABLE(corpus_drain());
	corpus_unmap(base);
	return 0;
}
