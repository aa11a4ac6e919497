/* SPDX-License-Identifier: MIT */
/*
 * Bug: a non-temporal copy asked not to drain, and the program exits
 * without the drain (and without unmapping). The stores may still be in
 * the write-combining buffers. Expected: not-fenced at exit, for the
 * 4096 copied bytes.
 */
#include <libpmem.h>
#include "corpus.h"

int main(int argc, char **argv)
{
	char *base = corpus_map(argc, argv);
	static char src[4096];

	memset(src, 0xc3, sizeof(src));	/* every byte differs from the fill */
	pmem_memcpy(base + 8192 + 24, src, sizeof(src),
		    PMEM_F_MEM_NONTEMPORAL | PMEM_F_MEM_NODRAIN);
#ifdef FIXED
	MUTABLE(corpus_drain_range(base + 8192 + 24, sizeof(src)));
#endif
	return 0;
}
