/* SPDX-License-Identifier: MIT */
/*
 * Bug: through libpmem2, a record is copied and persisted, then its valid
 * flag is stored and the map deleted before the flag is persisted. Run
 * with each granularity's persist (check_corpus.sh: CACHE_LINE's
 * write-back and fence, and as pmem2_page_store_after_persist PAGE's
 * msync()): the record is durable either way, the flag never is.
 * Expected: never-written-back at pmem2_map_delete, the flag's 8 bytes.
 */
#include "pmem2_corpus.h"

int main(int argc, char **argv)
{
	struct corpus2 c;
	char record[40];

	corpus2_map(&c, argc, argv);
	memset(record, 0xc3, sizeof(record));
	c.memcpy(c.base + 8192 + 8, record, sizeof(record), 0);
	store8(c.base + CORPUS_OFF);	/* the valid flag */
#ifdef FIXED
	MUTABLE(c.persist(c.base + CORPUS_OFF, 8));
#endif
	corpus2_unmap(&c);
	return 0;
}
