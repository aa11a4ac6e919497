/* SPDX-License-Identifier: MIT */
/*
 * Bug: pmemobj_tx_unadded's, on a page the program keeps coming back to.
 * HOT_ROUNDS transactions first add and change a counter beside the
 * field: the checker then keeps the page writable across fences (a hot
 * page, ntmem-check(1), HOT PAGES), so the page joins the buggy transaction at
 * its begin as it is, its stores fault nowhere, and only the comparison
 * at the next call into libpmemobj finds the store. With -DFIXED the
 * field is added first. Expected: the store reported.
 */
#include "pmemobj_corpus.h"

/* More than the faults it takes to make a page hot (two). */
#define HOT_ROUNDS 16

struct root {
	uint64_t counter;
	char pad[120];
	uint64_t unadded;	/* in a cache line of its own */
	char tail[56];
};

static void count(PMEMobjpool *pop, struct root *r, uint64_t i)
{
	TX_BEGIN(pop) {
		MUTABLE(pmemobj_tx_add_range_direct(&r->counter, sizeof(r->counter)));
		r->counter = i;
	} TX_ONABORT {
		fprintf(stderr, "transaction aborted: %s\n", pmemobj_errormsg());
		exit(1);
	} TX_END
}

int main(int argc, char **argv)
{
	PMEMobjpool *pop = pobj_create(argc, argv);
	struct root *r = pobj_root(pop, sizeof(*r));

	for (uint64_t i = 1; i <= HOT_ROUNDS; i++)
		count(pop, r, i);
	TX_BEGIN(pop) {
		MUTABLE(pmemobj_tx_add_range_direct(&r->counter, sizeof(r->counter)));
		r->counter = 0;
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
