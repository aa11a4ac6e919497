/* SPDX-License-Identifier: MIT */
/*
 * Bug: libc's memcpy() into pmem where pmem_memcpy_persist() was needed;
 * the drain after it fences nothing. Expected: not-written-back at
 * pmem_drain, for the 100 copied bytes.
 */
#include <libpmem.h>
#include "corpus.h"

int main(int argc, char **argv)
{
	char *base = corpus_map(argc, argv);
	char src[100];

	memset(src, 0xc3, sizeof(src));	/* every byte differs from the fill */
#ifdef FIXED
	pmem_memcpy_nodrain(base + 12288 + 40, src, sizeof(src));
	MUTABLE(corpus_drain_range(base + 12288 + 40, sizeof(src)));
#else
	memcpy(base + 12288 + 40, src, sizeof(src));
	MUTABLE(corpus_drain());
#endif
	corpus_unmap(base);
	return 0;
}
