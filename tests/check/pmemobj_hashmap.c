/* SPDX-License-Identifier: MIT */
/*
 * A transactional hash map written against libpmemobj's documented API
 * only: chained buckets, inserts that grow the table (a rehash splits the
 * chains over a new bucket array four times larger in one transaction
 * and frees the old one), updates in place, and removals that free their
 * entries and shrink the table (chains merged into one a quarter the
 * size) when it is less than half full. Every
 * change is one transaction that adds what it stores to.
 * Bug: the last removal stores the map's count without adding it to its
 * transaction. With -DFIXED it adds it, and the program is correct: no
 * report at all (libpmemobj's own stores inside its calls, the undo logs,
 * allocations and frees in transactions are libpmemobj's).
 * Expected: tx-unadded at the count's changed byte (or bytes).
 */
#include <stdbool.h>
#include <stddef.h>
#include <string.h>

#include "pmemobj_corpus.h"

#define KEYS 1500	/* inserted; every other one removed after */
#define INITIAL_BUCKETS 8

struct entry {
	uint64_t key;
	uint64_t value;
	PMEMoid next;
};

struct map {
	PMEMoid buckets;	/* nbuckets PMEMoids */
	uint64_t nbuckets;
	uint64_t count;
};

static PMEMobjpool *pop;
static struct map *m;

static PMEMoid *bucket_of(uint64_t key, PMEMoid buckets, uint64_t n)
{
	PMEMoid *b = pmemobj_direct(buckets);

	/* A multiplicative hash: consecutive keys spread over the table. */
	return &b[(key * 0x9e3779b97f4a7c15ull >> 17) % n];
}

/* In a transaction: a table of @n buckets with every entry moved to it. */
static void rehash(uint64_t n)
{
	PMEMoid fresh = pmemobj_tx_zalloc(n * sizeof(PMEMoid), 1);
	PMEMoid *old = pmemobj_direct(m->buckets);

	for (uint64_t i = 0; i < m->nbuckets; i++) {
		PMEMoid e = old[i];

		while (!OID_IS_NULL(e)) {
			struct entry *en = pmemobj_direct(e);
			PMEMoid next = en->next;
			PMEMoid *slot = bucket_of(en->key, fresh, n);

			/* fresh was allocated in this transaction: no add. */
			MUTABLE(pmemobj_tx_add_range_direct(&en->next, sizeof(en->next)));
			en->next = *slot;
			*slot = e;
			e = next;
		}
	}
	pmemobj_tx_free(m->buckets);
	/* Not the count: the insert or removal added it already. */
	MUTABLE(pmemobj_tx_add_range_direct(m, offsetof(struct map, count)));
	m->buckets = fresh;
	m->nbuckets = n;
}

static void insert(uint64_t key, uint64_t value)
{
	TX_BEGIN(pop) {
		PMEMoid *slot = bucket_of(key, m->buckets, m->nbuckets);
		PMEMoid e = *slot;
		PMEMoid fresh;
		struct entry *en;

		for (; !OID_IS_NULL(e); e = en->next) {
			en = pmemobj_direct(e);
			if (en->key == key) {
				MUTABLE(pmemobj_tx_add_range_direct(&en->value, sizeof(en->value)));
				en->value = value;
				break;
			}
		}
		if (OID_IS_NULL(e)) {
			fresh = pmemobj_tx_alloc(sizeof(*en), 2);
			en = pmemobj_direct(fresh);
			en->key = key;
			en->value = value;
			en->next = *slot;
			MUTABLE(pmemobj_tx_add_range_direct(slot, sizeof(*slot)));
			*slot = fresh;
			MUTABLE(pmemobj_tx_add_range_direct(&m->count, sizeof(m->count)));
			m->count++;
			if (m->count > 2 * m->nbuckets)
				rehash(4 * m->nbuckets);
		}
	} TX_ONABORT {
		fprintf(stderr, "insert %llu: %s\n", (unsigned long long)key,
			pmemobj_errormsg());
		exit(1);
	} TX_END
}

/* Removes @key; @add_count false: the count's store is left unadded. */
static bool remove_key(uint64_t key, bool add_count)
{
	volatile bool found = false;	/* set in the transaction */

	TX_BEGIN(pop) {
		PMEMoid *link = bucket_of(key, m->buckets, m->nbuckets);

		while (!OID_IS_NULL(*link)) {
			struct entry *en = pmemobj_direct(*link);

			if (en->key == key) {
				PMEMoid gone = *link;

				MUTABLE(pmemobj_tx_add_range_direct(link, sizeof(*link)));
				*link = en->next;
				pmemobj_tx_free(gone);
				if (add_count)
					MUTABLE(pmemobj_tx_add_range_direct(&m->count, sizeof(m->count)));
				m->count--;
				/* Shrink (entries of buckets merged) when a
				 * quarter of the table would hold them. */
				if (m->count < m->nbuckets / 2 &&
				    m->nbuckets > INITIAL_BUCKETS)
					rehash(m->nbuckets / 4);
				found = true;
				break;
			}
			link = &en->next;
		}
	} TX_ONABORT {
		fprintf(stderr, "remove %llu: %s\n", (unsigned long long)key,
			pmemobj_errormsg());
		exit(1);
	} TX_END
	return found;
}

static uint64_t lookup(uint64_t key, bool *found)
{
	PMEMoid e = *bucket_of(key, m->buckets, m->nbuckets);

	for (; !OID_IS_NULL(e);) {
		struct entry *en = pmemobj_direct(e);

		if (en->key == key) {
			*found = true;
			return en->value;
		}
		e = en->next;
	}
	*found = false;
	return 0;
}

/* "expect" the bytes of the count that its last decrement changed. */
static void expect_count_change(uint64_t before)
{
	uint64_t after = m->count;
	const uint8_t *a = (const uint8_t *)&before, *b = (const uint8_t *)&after;
	size_t lo = 0, hi = sizeof(after);

	while (lo < hi && a[lo] == b[lo])
		lo++;
	while (hi > lo && a[hi - 1] == b[hi - 1])
		hi--;
	pobj_expect(pop, (const char *)&m->count + lo, hi - lo);
}

static void map_init(void)
{
	TX_BEGIN(pop) {
		MUTABLE(pmemobj_tx_add_range_direct(m, sizeof(*m)));
		m->buckets = pmemobj_tx_zalloc(INITIAL_BUCKETS * sizeof(PMEMoid), 1);
		m->nbuckets = INITIAL_BUCKETS;
		m->count = 0;
	} TX_ONABORT {
		fprintf(stderr, "map_init: %s\n", pmemobj_errormsg());
		exit(1);
	} TX_END
}

int main(int argc, char **argv)
{
	uint64_t key = 1, before;
	bool found;

	pop = pobj_create(argc, argv);
	m = pobj_root(pop, sizeof(*m));
	map_init();
	/* Keys in a scattered order (an LCG), each inserted, some twice. */
	for (int i = 0; i < KEYS; i++) {
		key = key * 6364136223846793005ull + 1442695040888963407ull;
		insert(key % 100000, (uint64_t)i);
		if (i % 7 == 0)
			insert(key % 100000, (uint64_t)i + 1);	/* an update */
	}
	key = 1;
	for (int i = 0; i < KEYS; i++) {
		key = key * 6364136223846793005ull + 1442695040888963407ull;
		if (i % 2 == 0 || i == KEYS - 1)
			continue;
		before = m->count;
		remove_key(key % 100000, true);
	}
	/* The last key, removed last: the bug, or (FIXED) as all others. */
	before = m->count;
#ifdef FIXED
	if (!remove_key(key % 100000, true))
#else
	if (!remove_key(key % 100000, false))
#endif
		fprintf(stderr, "key %llu not found\n", (unsigned long long)(key % 100000));
	(void)lookup(key % 100000, &found);
	if (found) {
		fprintf(stderr, "key %llu still there\n", (unsigned long long)(key % 100000));
		return 1;
	}
	expect_count_change(before);
	pobj_close(pop);
	return 0;
}
