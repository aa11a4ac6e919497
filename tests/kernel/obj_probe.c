// SPDX-License-Identifier: MIT
/*
 * obj_probe.c - a libpmemobj program written against PMDK's own
 * libpmemobj.h and built against Debian's libpmemobj-dev, for the checks
 * inside a kernel guest (tests/kernel/stage.sh). It links libpmemobj
 * only: libpmem.so.1 is libpmemobj's own dependency, so LD_LIBRARY_PATH
 * naming ntmem's drop-in (compat/libpmem) puts the drop-in under
 * Debian's libpmemobj, and a pool made on one libpmem is opened on the
 * other.
 *
 *   kernel_obj_probe create POOL SIZE   pmemobj_create() (SIZE 0: an
 *                                       existing file or a device dax,
 *                                       whole), a root object set in a
 *                                       transaction (TX_ADD) and a
 *                                       TX_ZNEW'd item linked from it;
 *                                       then a transaction that changes
 *                                       both and allocates another item,
 *                                       aborted: the committed contents
 *                                       must be back ("aborted=1")
 *   kernel_obj_probe verify POOL        pmemobj_open(), the contents as
 *                                       create left them
 *   kernel_obj_probe check POOL         pmemobj_check() (consistent=1)
 *
 * create and verify print one line:
 *   value=0x... items=1 pool_is_pmem=N devdax=N map_sync=N
 *   pmem_is_pmem=N lib=FILE obj=FILE
 * lib is the libpmem.so.1 that answers pmem_persist (dlsym(RTLD_DEFAULT)
 * and dladdr: the one libpmemobj is bound to), obj the libpmemobj.so.1.
 * libpmemobj has no is_pmem API; pool_is_pmem is its decision made the
 * way PMDK 1.12 makes it (a device dax, or a MAP_SYNC mapping, or
 * libpmem's pmem_is_pmem() of the mapping): devdax from the pool's file
 * type, map_sync from the pool mapping's VmFlags in /proc/self/smaps
 * ("sf": synchronous page faults). PMEM_IS_PMEM_FORCE must not be set:
 * the probe is there to see the real answer, and refuses (exit 2).
 * Exit status 0, or 1 with what was wrong (pmemobj_errormsg() where
 * libpmemobj failed) on standard error.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <inttypes.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include <libpmemobj.h>

#define LAYOUT "ntmem_kernel_obj"
/* The root's value once create committed ("ntmemobj"), and what the
 * aborted transaction writes over it. */
#define ROOT_VALUE UINT64_C(0x6e746d656d6f626a)
#define ABORTED_VALUE UINT64_C(0xab0e7ed)
#define ITEM_HEAD UINT64_C(0x68656164)
#define ITEM_TAIL UINT64_C(0x7461696c)
#define ITEM_ZEROS 62

struct item;
TOID_DECLARE(struct item, 1);
struct root;
TOID_DECLARE_ROOT(struct root);

/* 512 bytes: set at both ends, zero between (TX_ZNEW zeroed it). */
struct item {
	uint64_t head;
	uint64_t zeros[ITEM_ZEROS];
	uint64_t tail;
};

struct root {
	uint64_t value;
	TOID(struct item) item;
};

static const char *prog = "kernel_obj_probe";

static int fail(const char *what, const char *why)
{
	fprintf(stderr, "%s: %s: %s\n", prog, what, why);
	return 1;
}

/* lib_of SYMBOL: the file of the loaded library that defines SYMBOL. */
static const char *lib_of(const char *symbol)
{
	void *addr = dlsym(RTLD_DEFAULT, symbol);
	Dl_info where;

	if (!addr || !dladdr(addr, &where) || !where.dli_fname)
		return "unknown";
	return where.dli_fname;
}

/*
 * mapping_of ADDR: the length of the mapping that holds ADDR and whether
 * it is MAP_SYNC (VmFlags "sf"), from /proc/self/smaps; -1 if not found.
 */
static int mapping_of(const void *addr, size_t *len, int *map_sync)
{
	FILE *f = fopen("/proc/self/smaps", "r");
	uintptr_t at = (uintptr_t)addr;
	char line[512];
	int found = 0;

	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f)) {
		uintptr_t start, end;

		if (!found) {
			if (sscanf(line, "%" SCNxPTR "-%" SCNxPTR " ", &start, &end) == 2 &&
			    start <= at && at < end) {
				found = 1;
				*len = end - start;
			}
			continue;
		}
		if (strncmp(line, "VmFlags:", 8) == 0) {
			*map_sync = strstr(line, " sf") != NULL;
			fclose(f);
			return 0;
		}
	}
	fclose(f);
	return -1;
}

/*
 * report: the pool's contents checked against what create committed,
 * and one line of what was found; 0 if they are as expected.
 */
static int report(PMEMobjpool *pop, const char *path)
{
	TOID(struct root) root = POBJ_ROOT(pop, struct root);
	int (*is_pmem)(const void *, size_t);
	int devdax, map_sync = 0, pmem = -1, bad = 0;
	unsigned items = 0;
	struct stat st;
	size_t len = 0;
	PMEMoid oid;

	if (TOID_IS_NULL(root))
		return fail(path, "no root object");
	POBJ_FOREACH(pop, oid) {
		if (pmemobj_type_num(oid) == TOID_TYPE_NUM(struct item))
			items++;
	}
	if (D_RO(root)->value != ROOT_VALUE) {
		fprintf(stderr, "%s: %s: root value 0x%" PRIx64 ", not 0x%" PRIx64 "\n",
			prog, path, D_RO(root)->value, ROOT_VALUE);
		bad = 1;
	}
	if (items != 1) {
		fprintf(stderr, "%s: %s: %u items, not 1\n", prog, path, items);
		bad = 1;
	}
	if (TOID_IS_NULL(D_RO(root)->item)) {
		bad = fail(path, "the root links no item");
	} else {
		const struct item *item = D_RO(D_RO(root)->item);

		if (item->head != ITEM_HEAD || item->tail != ITEM_TAIL)
			bad = fail(path, "the item's ends are not as written");
		for (int i = 0; i < ITEM_ZEROS; i++) {
			if (item->zeros[i]) {
				bad = fail(path, "the zeroed item is not zero");
				break;
			}
		}
	}

	devdax = stat(path, &st) == 0 && S_ISCHR(st.st_mode);
	if (mapping_of(pop, &len, &map_sync))
		return fail(path, "the pool's mapping is not in /proc/self/smaps");
	*(void **)&is_pmem = dlsym(RTLD_DEFAULT, "pmem_is_pmem");
	if (is_pmem)
		pmem = is_pmem(pop, len);
	printf("value=0x%" PRIx64 " items=%u pool_is_pmem=%d devdax=%d map_sync=%d"
	       " pmem_is_pmem=%d lib=%s obj=%s\n",
	       D_RO(root)->value, items, devdax || map_sync || pmem == 1, devdax,
	       map_sync, pmem, lib_of("pmem_persist"), lib_of("pmemobj_create"));
	return bad;
}

/*
 * abort_tx: a transaction that changes the root and the item and
 * allocates a second item, aborted: "aborted=1" when it was (ECANCELED),
 * and the caller's report then finds the committed contents.
 */
static int abort_tx(PMEMobjpool *pop, const char *path)
{
	TOID(struct root) root = POBJ_ROOT(pop, struct root);
	volatile int committed = 0, tx_errno = 0;

	TX_BEGIN(pop) {
		TOID(struct item) item = D_RO(root)->item;

		TX_ADD(root);
		D_RW(root)->value = ABORTED_VALUE;
		if (!TOID_IS_NULL(item)) {
			TX_ADD(item);
			D_RW(item)->head = 0;
			D_RW(item)->zeros[0] = ABORTED_VALUE;
		}
		/* A second item, which the abort must free. */
		D_RW(root)->item = TX_ZNEW(struct item);
		pmemobj_tx_abort(ECANCELED);
	} TX_ONCOMMIT {
		committed = 1;
	} TX_ONABORT {
		tx_errno = pmemobj_tx_errno();
	} TX_END
	if (committed || tx_errno != ECANCELED) {
		fprintf(stderr, "%s: %s: the transaction %s (errno %d), not aborted\n",
			prog, path, committed ? "committed" : "failed", tx_errno);
		return 1;
	}
	printf("aborted=1\n");
	return 0;
}

static int create(const char *path, size_t size)
{
	PMEMobjpool *pop = pmemobj_create(path, LAYOUT, size, 0600);
	TOID(struct root) root;
	volatile int committed = 0;
	int bad;

	if (!pop)
		return fail(path, pmemobj_errormsg());
	root = POBJ_ROOT(pop, struct root);
	if (TOID_IS_NULL(root)) {
		pmemobj_close(pop);
		return fail(path, pmemobj_errormsg());
	}
	TX_BEGIN(pop) {
		TOID(struct item) item = TX_ZNEW(struct item);

		D_RW(item)->head = ITEM_HEAD;
		D_RW(item)->tail = ITEM_TAIL;
		TX_ADD(root);
		D_RW(root)->value = ROOT_VALUE;
		D_RW(root)->item = item;
	} TX_ONCOMMIT {
		committed = 1;
	} TX_END
	if (!committed) {
		fail(path, pmemobj_errormsg());
		pmemobj_close(pop);
		return 1;
	}
	bad = abort_tx(pop, path);
	bad |= report(pop, path);
	pmemobj_close(pop);
	return bad;
}

static int verify(const char *path)
{
	PMEMobjpool *pop = pmemobj_open(path, LAYOUT);
	int bad;

	if (!pop)
		return fail(path, pmemobj_errormsg());
	bad = report(pop, path);
	pmemobj_close(pop);
	return bad;
}

static int check(const char *path)
{
	int consistent = pmemobj_check(path, LAYOUT);

	if (consistent < 0)
		return fail(path, pmemobj_errormsg());
	printf("consistent=%d lib=%s obj=%s\n", consistent, lib_of("pmem_persist"),
	       lib_of("pmemobj_check"));
	return consistent != 1;
}

int main(int argc, char **argv)
{
	const char *cmd = argc > 1 ? argv[1] : "";
	char *end;

	if (getenv("PMEM_IS_PMEM_FORCE")) {
		fprintf(stderr, "%s: PMEM_IS_PMEM_FORCE is set: the probe is to see "
			"the real answer\n", prog);
		return 2;
	}
	if (argc == 4 && strcmp(cmd, "create") == 0) {
		unsigned long long size = strtoull(argv[3], &end, 0);

		if (*argv[3] && !*end)
			return create(argv[2], (size_t)size);
	} else if (argc == 3 && strcmp(cmd, "verify") == 0) {
		return verify(argv[2]);
	} else if (argc == 3 && strcmp(cmd, "check") == 0) {
		return check(argv[2]);
	}
	fprintf(stderr, "usage: %s create POOL SIZE | verify POOL | check POOL\n",
		prog);
	return 2;
}
