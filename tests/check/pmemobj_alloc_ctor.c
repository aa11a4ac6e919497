/* SPDX-License-Identifier: MIT */
/*
 * Bug: a pmemobj_alloc() constructor that writes the new object without
 * persisting it: libpmemobj publishes the allocation after the
 * constructor returns, trusting it to have made the contents durable.
 * With -DFIXED the constructor persists what it wrote. Expected: the
 * field's 8 bytes in the allocated object.
 */
#include "pmemobj_corpus.h"

struct obj {
	char pad[40];
	uint64_t value;
	char tail[208];
};

static int construct(PMEMobjpool *pop, void *ptr, void *arg)
{
	struct obj *o = ptr;

	(void)arg;
	store8((char *)&o->value);
#ifdef FIXED
	MUTABLE(pmemobj_persist(pop, &o->value, sizeof(o->value)));
#else
	(void)pop;
#endif
	return 0;
}

int main(int argc, char **argv)
{
	PMEMobjpool *pop = pobj_create(argc, argv);
	PMEMoid oid;
	struct obj *o;

	if (pmemobj_alloc(pop, &oid, sizeof(struct obj), 1, construct, NULL)) {
		fprintf(stderr, "pmemobj_alloc: %s\n", pmemobj_errormsg());
		return 1;
	}
	o = pmemobj_direct(oid);
	pobj_expect(pop, &o->value, sizeof(o->value));
	pobj_close(pop);
	return 0;
}
