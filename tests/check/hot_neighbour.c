/* SPDX-License-Identifier: MIT */
/*
 * Bug: neighbour_flush's, on a page the program keeps coming back to.
 * HOT_ROUNDS times it first changes the page's last line and persists it:
 * the checker then keeps the page writable across fences (a hot page,
 * ntmem-check(1), HOT PAGES), so the buggy store faults nowhere and only the
 * comparison at the fences finds it. Expected: not-written-back at
 * pmem_persist, for the 8 stored bytes only, as neighbour_flush's.
 */
#include <libpmem.h>
#include "corpus.h"

/* More than the faults it takes to make a page hot (two), and the fences
 * it stays so. */
#define HOT_ROUNDS 16

int main(int argc, char **argv)
{
	char *base = corpus_map(argc, argv);
	char *p = base + CORPUS_OFF;
	/* The page's last line: no persist of the bug's lines covers it. */
	volatile uint64_t *last = (volatile uint64_t *)(base + (CORPUS_OFF & ~4095) +
							4096 - 64);

	for (uint64_t i = 1; i <= HOT_ROUNDS; i++) {
		*last = CORPUS_VALUE + i;	/* a change every round */
		MUTABLE(corpus_persist((const void *)last, 8));
	}
	store8(p);
#ifdef FIXED
	MUTABLE(corpus_persist(p, 8));
#else
	MUTABLE(corpus_persist(base + (CORPUS_OFF & ~63) + 64, 64));
#endif
	corpus_unmap(base);
	return 0;
}
