// SPDX-License-Identifier: MIT
/*
 * bench_pmemobj.c - ntmem-bench-pmemobj WORKLOAD DIR OPS: a correct
 * libpmemobj program (Debian's libpmemobj; libpmem.so.1 is its
 * dependency) for `ntmem bench check`, which runs it plain and under
 * `ntmem check` and compares the two. It makes a pool of POOL_SIZE bytes,
 * DIR/bench.pmem (which must not exist), runs OPS operations of
 * WORKLOAD and prints
 *
 *   workload NAME ops N seconds S ops_per_sec R
 *
 * timed around the loop only: making and closing the pool, loading the
 * libraries and the checker's report at exit are not in the figure.
 *
 *   tx      one transaction per operation, updating three 8-byte fields
 *           of one of OBJECTS objects, each added first (TX_ADD_FIELD,
 *           pmemobj_tx_add_range underneath): the undo log's traffic
 *   alloc   one transaction per operation allocating a zeroed object
 *           (TX_ZNEW) into one of SLOTS slots of the root and freeing
 *           the one it replaces (TX_FREE): the allocator's traffic
 *
 * Exit 0, 1 when libpmemobj fails (its message on stderr), 2 for a usage
 * error.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <libpmemobj.h>

#define POOL_SIZE (16u << 20)	/* twice libpmemobj's minimum */
#define OBJECTS 64		/* tx: the objects updated in turn */
#define SLOTS 16		/* alloc: the objects alive at once */
#define LAYOUT "ntmem_bench_pmemobj"

POBJ_LAYOUT_BEGIN(ntmem_bench_pmemobj);
POBJ_LAYOUT_ROOT(ntmem_bench_pmemobj, struct bench_root);
POBJ_LAYOUT_TOID(ntmem_bench_pmemobj, struct record);
POBJ_LAYOUT_END(ntmem_bench_pmemobj);

/* A small object: a few fields a transaction changes, and a payload. */
struct record {
	uint64_t count;
	uint64_t last_op;
	uint64_t checksum;
	char payload[104];
};

struct bench_root {
	struct record records[OBJECTS];
	TOID(struct record) slots[SLOTS];
};

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/*
 * One operation each, in a function of its own: TX_BEGIN is a setjmp(),
 * and only what is volatile keeps its value through an abort's longjmp().
 */
static int tx_one(PMEMobjpool *pop, struct record *r, uint64_t op)
{
	volatile int failed = 0;

	TX_BEGIN(pop) {
		pmemobj_tx_add_range_direct(&r->count, sizeof(r->count));
		pmemobj_tx_add_range_direct(&r->last_op, sizeof(r->last_op));
		pmemobj_tx_add_range_direct(&r->checksum, sizeof(r->checksum));
		r->count++;
		r->last_op = op;
		r->checksum = r->count ^ op;
	} TX_ONABORT {
		failed = 1;
	} TX_END
	return failed;
}

static int alloc_one(PMEMobjpool *pop, TOID(struct record) *slot, uint64_t op)
{
	volatile int failed = 0;

	TX_BEGIN(pop) {
		TX_ADD_DIRECT(slot);
		if (!TOID_IS_NULL(*slot))
			TX_FREE(*slot);
		*slot = TX_ZNEW(struct record);
		D_RW(*slot)->last_op = op;
	} TX_ONABORT {
		failed = 1;
	} TX_END
	return failed;
}

static int run_loop(PMEMobjpool *pop, TOID(struct bench_root) root,
		    const char *workload, uint64_t ops)
{
	bool tx = !strcmp(workload, "tx");

	for (uint64_t op = 0; op < ops; op++) {
		struct bench_root *r = D_RW(root);
		int failed = tx ? tx_one(pop, &r->records[op % OBJECTS], op)
				: alloc_one(pop, &r->slots[op % SLOTS], op);

		if (failed) {
			fprintf(stderr, "ntmem-bench-pmemobj: %s %" PRIu64 " aborted: %s\n",
				workload, op, pmemobj_errormsg());
			return 1;
		}
	}
	return 0;
}

int main(int argc, char **argv)
{
	char path[4096], *end;
	PMEMobjpool *pop;
	TOID(struct bench_root) root;
	uint64_t ops;
	double t0, t1;
	int ret;

	if (argc != 4 || (strcmp(argv[1], "tx") && strcmp(argv[1], "alloc"))) {
		fprintf(stderr, "usage: ntmem-bench-pmemobj tx|alloc DIR OPS\n");
		return 2;
	}
	errno = 0;
	ops = strtoull(argv[3], &end, 10);
	if (errno || end == argv[3] || *end || ops == 0 || argv[3][0] == '-') {
		fprintf(stderr, "ntmem-bench-pmemobj: invalid OPS '%s': a positive "
			"number\n", argv[3]);
		return 2;
	}
	if ((size_t)snprintf(path, sizeof(path), "%s/bench.pmem", argv[2]) >=
	    sizeof(path)) {
		fprintf(stderr, "ntmem-bench-pmemobj: invalid DIR: too long\n");
		return 2;
	}
	pop = pmemobj_create(path, LAYOUT, POOL_SIZE, 0600);
	if (!pop) {
		fprintf(stderr, "ntmem-bench-pmemobj: pmemobj_create %s: %s\n", path,
			pmemobj_errormsg());
		return 1;
	}
	root = POBJ_ROOT(pop, struct bench_root);
	if (TOID_IS_NULL(root)) {
		fprintf(stderr, "ntmem-bench-pmemobj: the root object: %s\n",
			pmemobj_errormsg());
		pmemobj_close(pop);
		return 1;
	}
	t0 = now_s();
	ret = run_loop(pop, root, argv[1], ops);
	t1 = now_s();
	pmemobj_close(pop);
	if (ret)
		return ret;
	printf("workload %s ops %" PRIu64 " seconds %.6f ops_per_sec %.1f\n",
	       argv[1], ops, t1 - t0, (double)ops / (t1 - t0));
	return 0;
}
