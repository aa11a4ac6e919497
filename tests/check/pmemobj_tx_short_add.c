/* SPDX-License-Identifier: MIT */
/*
 * Bug: a transaction adds 8 bytes of a field and stores 16: the second 8
 * bytes are not in its undo log, so an abort (or a crash before the
 * commit) leaves them changed. The commit flushes the added range, whose
 * cache line holds the other 8 bytes too: a cache-line checker sees them
 * durable. With -DFIXED all 16 bytes are added.
 */
#include "pmemobj_corpus.h"

struct root {
	char pad[24];
	uint64_t pair[2];	/* 16 bytes, 24 bytes into a cache line */
	char tail[88];
};

int main(int argc, char **argv)
{
	PMEMobjpool *pop = pobj_create(argc, argv);
	struct root *r = pobj_root(pop, sizeof(*r));

	TX_BEGIN(pop) {
#ifdef FIXED
		MUTABLE(pmemobj_tx_add_range_direct(r->pair, sizeof(r->pair)));
#else
		MUTABLE(pmemobj_tx_add_range_direct(r->pair, sizeof(r->pair[0])));
#endif
		store8((char *)&r->pair[0]);
		store8((char *)&r->pair[1]);
	} TX_ONABORT {
		fprintf(stderr, "transaction aborted: %s\n", pmemobj_errormsg());
		exit(1);
	} TX_END
	pobj_expect(pop, &r->pair[1], sizeof(r->pair[1]));
	pobj_close(pop);
	return 0;
}
