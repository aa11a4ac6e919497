/* SPDX-License-Identifier: MIT */
/*
 * Bug: a record is persisted, then its valid flag is stored and the
 * program exits (without unmapping) before persisting the flag.
 * Expected: never-written-back at exit, for the flag's 8 bytes.
 */
#include <libpmem.h>
#include "corpus.h"

int main(int argc, char **argv)
{
	char *base = corpus_map(argc, argv);
	char record[40];

	memset(record, 0xc3, sizeof(record));
	pmem_memcpy_nodrain(base + 8192 + 8, record, sizeof(record));
	MUTABLE(corpus_drain_range(base + 8192 + 8, sizeof(record)));
	store8(base + CORPUS_OFF);	/* the valid flag */
#ifdef FIXED
	MUTABLE(corpus_persist(base + CORPUS_OFF, 8));
#endif
	return 0;
}
