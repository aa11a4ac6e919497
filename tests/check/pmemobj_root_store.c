/* SPDX-License-Identifier: MIT */
/*
 * Bug: a non-transactional store with no pmemobj_persist(). The program
 * persists one field of its root object, then stores another outside any
 * transaction and closes the pool without persisting it. With -DFIXED the
 * field is persisted. Expected: that field's 8 bytes ("expect OFFSET 8").
 */
#include "pmemobj_corpus.h"

struct root {
	uint64_t persisted;
	char pad[64];
	uint64_t forgotten;	/* in a cache line of its own */
	char tail[64];
};

int main(int argc, char **argv)
{
	PMEMobjpool *pop = pobj_create(argc, argv);
	struct root *r = pobj_root(pop, sizeof(*r));

	r->persisted = CORPUS_VALUE;
	MUTABLE(pmemobj_persist(pop, &r->persisted, sizeof(r->persisted)));
	store8((char *)&r->forgotten);
#ifdef FIXED
	MUTABLE(pmemobj_persist(pop, &r->forgotten, sizeof(r->forgotten)));
#endif
	pobj_expect(pop, &r->forgotten, sizeof(r->forgotten));
	pobj_close(pop);
	return 0;
}
