/* SPDX-License-Identifier: MIT */
/*
 * missing_flush, with libpmem a dependency's dependency: the program links
 * only libcorpus_dep.so (corpus_dep.h), which links libpmem.so.1, so libc
 * comes before libpmem in the program's search order.
 * Expected: not-written-back at pmem_drain.
 */
#include "corpus.h"
#include "corpus_dep.h"

int main(int argc, char **argv)
{
	char *base = dep_map(argc, argv);
	char *p = base + CORPUS_OFF;

	store8(p);
#ifdef FIXED
	dep_flush(p, 8);
#endif
	dep_drain();
	dep_unmap(base);
	return 0;
}
