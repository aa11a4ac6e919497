// SPDX-License-Identifier: MIT
/* corpus_dep.c - libcorpus_dep.so (corpus_dep.h): libpmem behind a library. */
#include <libpmem.h>
#include "corpus.h"
#include "corpus_dep.h"

char *dep_map(int argc, char **argv)
{
	return corpus_map(argc, argv);
}

void dep_flush(const void *p, size_t n)
{
	pmem_flush(p, n);
}

void dep_drain(void)
{
	pmem_drain();
}

void dep_unmap(char *base)
{
	corpus_unmap(base);
}
