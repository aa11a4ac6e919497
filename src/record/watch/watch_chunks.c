// SPDX-License-Identifier: MIT
/*
 * watch_chunks.c - the one allocator of the checker's fixed-size records
 * (page records, a transaction's pages): what the fault handler allocates
 * cannot come from malloc(), so each kind of record has a free list that
 * one mmap() refills, RECORDS_PER_CHUNK records at a time. Chunks are
 * never returned: a program's records are few, and reused.
 */
#include <string.h>
#include <sys/mman.h>

#include "watch/watch_internal.h"

void *watch_chunk_get(struct watch_chunks *c)
{
	void *rec = c->free;

	if (!rec) {
		char *chunk = mmap(NULL, c->size * RECORDS_PER_CHUNK,
				   PROT_READ | PROT_WRITE,
				   MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

		if (chunk == MAP_FAILED)
			return NULL;
		for (unsigned i = 0; i < RECORDS_PER_CHUNK; i++)
			watch_chunk_put(c, chunk + (size_t)i * c->size);
		rec = c->free;
	}
	memcpy(&c->free, rec, sizeof(c->free));
	return rec;
}
