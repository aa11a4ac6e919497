/* SPDX-License-Identifier: MIT */
/*
 * Bug: pmemobj_memcpy_persist() replaced by memcpy(): 100 bytes of the
 * root object copied and never written back. With -DFIXED the copy is
 * pmemobj_memcpy_persist(). Expected: the 100 bytes, one record.
 */
#include "pmemobj_corpus.h"

struct root {
	char pad[40];
	char buf[100];		/* across two cache lines */
	char tail[116];
};

int main(int argc, char **argv)
{
	PMEMobjpool *pop = pobj_create(argc, argv);
	struct root *r = pobj_root(pop, sizeof(*r));
	char src[sizeof(r->buf)];

	memset(src, 0xa5, sizeof(src));	/* every byte a change from 0 */
#ifdef FIXED
	pmemobj_memcpy_persist(pop, r->buf, src, sizeof(src));
#else
	memcpy(r->buf, src, sizeof(src));
#endif
	pobj_expect(pop, r->buf, sizeof(r->buf));
	pobj_close(pop);
	return 0;
}
