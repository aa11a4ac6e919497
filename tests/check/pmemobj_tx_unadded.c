/* SPDX-License-Identifier: MIT */
/*
 * Bug: a store in a transaction to a range never added to it
 * (pmemobj_tx_add_range): the commit neither snapshots nor flushes it, so
 * an abort cannot undo it and a crash may lose it. With -DFIXED the field
 * is added first. Expected: the store reported (its own cache line, which
 * nothing of the transaction flushes).
 */
#include "pmemobj_corpus.h"

struct root {
	uint64_t added;
	char pad[120];
	uint64_t unadded;	/* in a cache line of its own */
	char tail[56];
};

int main(int argc, char **argv)
{
	PMEMobjpool *pop = pobj_create(argc, argv);
	struct root *r = pobj_root(pop, sizeof(*r));

	TX_BEGIN(pop) {
		MUTABLE(pmemobj_tx_add_range_direct(&r->added, sizeof(r->added)));
		store8((char *)&r->added);
#ifdef FIXED
		MUTABLE(pmemobj_tx_add_range_direct(&r->unadded, sizeof(r->unadded)));
#endif
		store8((char *)&r->unadded);
	} TX_ONABORT {
		fprintf(stderr, "transaction aborted: %s\n", pmemobj_errormsg());
		exit(1);
	} TX_END
	pobj_expect(pop, &r->unadded, sizeof(r->unadded));
	pobj_close(pop);
	return 0;
}
