/* SPDX-License-Identifier: MIT */
/*
 * A correct libpmemobj program whose pool a killed run left behind:
 *   pmemobj_recover DIR crash  creates DIR/pmemobj_recover.pmem, makes its
 *                              root's value 1, then kills itself with
 *                              SIGKILL in a transaction that set it to 2;
 *   pmemobj_recover DIR open   opens the pool (libpmemobj rolls that
 *                              transaction back: prints "value 1"), sets
 *                              the value to 3 in a transaction, closes.
 * Under `ntmem check` the open run is to have no report: recovery,
 * pmemobj_open() and pmemobj_close() are libpmemobj's.
 */
#include <signal.h>
#include <string.h>

#include "pmemobj_corpus.h"

struct root {
	uint64_t value;
	char pad[56];
};

int main(int argc, char **argv)
{
	char path[4096];
	PMEMobjpool *pop;
	struct root *r;
	int crash;

	if (argc != 3 || (strcmp(argv[2], "crash") && strcmp(argv[2], "open"))) {
		fprintf(stderr, "usage: %s DIR crash|open\n", argv[0]);
		return 2;
	}
	crash = !strcmp(argv[2], "crash");
	snprintf(path, sizeof(path), "%s/pmemobj_recover.pmem", argv[1]);
	pop = crash ? pmemobj_create(path, "corpus", PMEMOBJ_MIN_POOL, 0600)
		    : pmemobj_open(path, "corpus");
	if (!pop) {
		fprintf(stderr, "%s: %s\n", path, pmemobj_errormsg());
		return 1;
	}
	r = pobj_root(pop, sizeof(*r));
	if (crash) {
		r->value = 1;
		pmemobj_persist(pop, &r->value, sizeof(r->value));
		TX_BEGIN(pop) {
			pmemobj_tx_add_range_direct(&r->value, sizeof(r->value));
			r->value = 2;
			pmemobj_persist(pop, &r->value, sizeof(r->value));
			raise(SIGKILL);
		} TX_END
		return 1;	/* not reached */
	}
	printf("value %llu\n", (unsigned long long)r->value);
	TX_BEGIN(pop) {
		pmemobj_tx_add_range_direct(&r->value, sizeof(r->value));
		r->value = 3;
	} TX_ONABORT {
		fprintf(stderr, "transaction aborted: %s\n", pmemobj_errormsg());
		exit(1);
	} TX_END
	pobj_close(pop);
	return 0;
}
