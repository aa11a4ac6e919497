/* SPDX-License-Identifier: MIT */
/*
 * A performance note, not a bug: a transaction adds a field, stores to it
 * and persists it with pmemobj_persist(); the commit writes every range the
 * transaction added back again, so that persist bought nothing. With
 * -DFIXED the transaction leaves the field to its commit, and persists
 * only a second field it added with POBJ_XADD_NO_FLUSH (which the commit
 * does not write back: that persist is the program's job).
 * Expected: one "tx-flush-repeat" note (count 1: one line) at the
 * pmemobj_persist() (ntmem check --perf), no bug.
 */
#include "pmemobj_corpus.h"

struct root {
	uint64_t value;
	char gap[56];		/* the two fields on lines of their own */
	uint64_t unflushed;
	char tail[56];
};

int main(int argc, char **argv)
{
	PMEMobjpool *pop = pobj_create(argc, argv);
	struct root *r = pobj_root(pop, sizeof(*r));

	TX_BEGIN(pop) {
		MUTABLE(pmemobj_tx_add_range_direct(&r->value, sizeof(r->value)));
		store8((char *)&r->value);
#ifndef FIXED
		MUTABLE(pmemobj_persist(pop, &r->value, sizeof(r->value)));
#else
		MUTABLE(pmemobj_tx_xadd_range_direct(&r->unflushed, sizeof(r->unflushed), POBJ_XADD_NO_FLUSH));
		store8((char *)&r->unflushed);
		MUTABLE(pmemobj_persist(pop, &r->unflushed, sizeof(r->unflushed)));
#endif
	} TX_ONABORT {
		fprintf(stderr, "transaction aborted: %s\n", pmemobj_errormsg());
		exit(1);
	} TX_END
	pobj_close(pop);
	return 0;
}
