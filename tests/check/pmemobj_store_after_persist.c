/* SPDX-License-Identifier: MIT */
/*
 * Bug: a field persisted with pmemobj_persist(), then another field of the
 * same cache line stored and never persisted: the first persist does not
 * cover a store made after it. With -DFIXED the second field is persisted
 * too. Expected: the second field's 8 bytes.
 */
#include "pmemobj_corpus.h"

struct root {
	char pad[16];
	uint64_t first;
	uint64_t second;	/* the same cache line as first */
	char tail[96];
};

int main(int argc, char **argv)
{
	PMEMobjpool *pop = pobj_create(argc, argv);
	struct root *r = pobj_root(pop, sizeof(*r));

	store8((char *)&r->first);
	MUTABLE(pmemobj_persist(pop, &r->first, sizeof(r->first)));
	store8((char *)&r->second);
#ifdef FIXED
	MUTABLE(pmemobj_persist(pop, &r->second, sizeof(r->second)));
#endif
	pobj_expect(pop, &r->second, sizeof(r->second));
	pobj_close(pop);
	return 0;
}
