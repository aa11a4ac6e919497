/* SPDX-License-Identifier: MIT */
/*
 * A POBJ_LIST / TX_ZALLOC workload: a transaction allocates four zeroed
 * nodes (TX_ZALLOC) and fills them, which the commit makes durable; each
 * is then linked into the root object's list with POBJ_LIST_INSERT_HEAD
 * (libpmemobj's atomic list, its own redo log). Bug: afterwards the head
 * node's value is changed with a plain store and never persisted. With
 * -DFIXED it is persisted. Expected: that value's 8 bytes.
 */
#include "pmemobj_corpus.h"

#define NODES 4

TOID_DECLARE(struct node, 1);

struct node {
	POBJ_LIST_ENTRY(struct node) link;
	char pad[8];
	uint64_t value;
	char tail[64];
};

struct root {
	POBJ_LIST_HEAD(nodes, struct node) head;
};

int main(int argc, char **argv)
{
	PMEMobjpool *pop = pobj_create(argc, argv);
	struct root *r = pobj_root(pop, sizeof(struct root));
	TOID(struct node) nodes[NODES];
	TOID(struct node) first;

	TX_BEGIN(pop) {
		for (int i = 0; i < NODES; i++) {
			nodes[i] = TX_ZALLOC(struct node, sizeof(struct node));
			D_RW(nodes[i])->value = (uint64_t)i + 1;
		}
	} TX_ONABORT {
		fprintf(stderr, "transaction aborted: %s\n", pmemobj_errormsg());
		exit(1);
	} TX_END
	for (int i = 0; i < NODES; i++)
		if (POBJ_LIST_INSERT_HEAD(pop, &r->head, nodes[i], link)) {
			fprintf(stderr, "POBJ_LIST_INSERT_HEAD: %s\n",
				pmemobj_errormsg());
			return 1;
		}
	first = POBJ_LIST_FIRST(&r->head);
	store8((char *)&D_RW(first)->value);
#ifdef FIXED
	MUTABLE(pmemobj_persist(pop, &D_RW(first)->value, sizeof(uint64_t)));
#endif
	pobj_expect(pop, &D_RO(first)->value, sizeof(uint64_t));
	pobj_close(pop);
	return 0;
}
