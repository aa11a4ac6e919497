/* SPDX-License-Identifier: MIT */
/*
 * A performance note, not a bug: a transaction adds a field, then a range
 * that overlaps it (the whole object): libpmemobj looks the second up in
 * its undo log for nothing. With -DFIXED the object is added once.
 * Expected: one "tx-add-twice" note at the second pmemobj_tx_add_range
 * (ntmem check --perf), no bug.
 */
#include "pmemobj_corpus.h"

struct root {
	uint64_t first;
	uint64_t second;
	char tail[112];
};

int main(int argc, char **argv)
{
	PMEMobjpool *pop = pobj_create(argc, argv);
	struct root *r = pobj_root(pop, sizeof(*r));

	TX_BEGIN(pop) {
#ifndef FIXED
		MUTABLE(pmemobj_tx_add_range_direct(&r->first, sizeof(r->first)));
		store8((char *)&r->first);
#endif
		MUTABLE(pmemobj_tx_add_range_direct(r, sizeof(*r)));
		store8((char *)&r->first);
		store8((char *)&r->second);
	} TX_ONABORT {
		fprintf(stderr, "transaction aborted: %s\n", pmemobj_errormsg());
		exit(1);
	} TX_END
	pobj_close(pop);
	return 0;
}
