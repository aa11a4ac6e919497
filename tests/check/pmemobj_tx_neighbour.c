/* SPDX-License-Identifier: MIT */
/*
 * Bug: a transaction adds one field (TX_ADD_FIELD) and stores it and its
 * neighbour, which it never adds: an abort (or a crash before the commit)
 * cannot undo the neighbour. Both are in one cache line, which the commit
 * flushes for the added field: a cache-line checker sees the neighbour
 * durable. With -DFIXED the neighbour is stored with TX_SET, which adds it.
 */
#include "pmemobj_corpus.h"

struct root {
	char pad[8];
	uint64_t added;
	uint64_t neighbour;	/* the same cache line as added */
	char tail[104];
};

POBJ_LAYOUT_BEGIN(neighbour);
POBJ_LAYOUT_ROOT(neighbour, struct root);
POBJ_LAYOUT_END(neighbour);

int main(int argc, char **argv)
{
	PMEMobjpool *pop = pobj_create(argc, argv);
	TOID(struct root) r;

	pobj_root(pop, sizeof(struct root));
	r = POBJ_ROOT(pop, struct root);
	TX_BEGIN(pop) {
		MUTABLE(TX_ADD_FIELD(r, added));
		store8((char *)&D_RW(r)->added);
#ifdef FIXED
		TX_SET(r, neighbour, CORPUS_VALUE);
#else
		store8((char *)&D_RW(r)->neighbour);
#endif
	} TX_ONABORT {
		fprintf(stderr, "transaction aborted: %s\n", pmemobj_errormsg());
		exit(1);
	} TX_END
	pobj_expect(pop, &D_RO(r)->neighbour, sizeof(uint64_t));
	pobj_close(pop);
	return 0;
}
