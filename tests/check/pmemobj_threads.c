/* SPDX-License-Identifier: MIT */
/*
 * Several threads, each with its own object and its own transactions
 * (each adds its counter, then increments it, 50 times), on one pool.
 * Bug: the first thread, after its transactions, stores its object's last
 * field with a plain store and never persists it. With -DFIXED it is
 * persisted. Expected: that field's 8 bytes.
 *
 * The store waits until every thread has left its transactions (a
 * barrier): the checker does not judge stores made while another thread
 * is inside libpmemobj (ntmem-check(1), LIBPMEMOBJ), so without it the
 * bug would be found or not by the schedule.
 */
#include <pthread.h>

#include "pmemobj_corpus.h"

#define THREADS 4
#define ROUNDS 50

static pthread_barrier_t transactions_done;

struct obj {
	uint64_t count;
	char pad[56];
	uint64_t last;		/* a cache line of its own */
	char tail[56];
};

struct worker {
	PMEMobjpool *pop;
	PMEMoid oid;
	int index;
	int failed;
};

static void *work(void *arg)
{
	struct worker *w = arg;
	struct obj *o;

	if (pmemobj_zalloc(w->pop, &w->oid, sizeof(struct obj), 1)) {
		w->failed = 1;
		pthread_barrier_wait(&transactions_done);
		return NULL;
	}
	o = pmemobj_direct(w->oid);
	for (int i = 0; i < ROUNDS; i++) {
		TX_BEGIN(w->pop) {
			MUTABLE(pmemobj_tx_add_range_direct(&o->count, sizeof(o->count)));
			o->count++;
		} TX_ONABORT {
			w->failed = 1;
		} TX_END
	}
	pthread_barrier_wait(&transactions_done);
	if (w->index == 0) {
		store8((char *)&o->last);
#ifdef FIXED
		MUTABLE(pmemobj_persist(w->pop, &o->last, sizeof(o->last)));
#endif
	}
	return NULL;
}

int main(int argc, char **argv)
{
	PMEMobjpool *pop = pobj_create(argc, argv);
	struct worker w[THREADS];
	pthread_t t[THREADS];
	struct obj *o;

	pthread_barrier_init(&transactions_done, NULL, THREADS);
	for (int i = 0; i < THREADS; i++) {
		w[i] = (struct worker){ .pop = pop, .index = i };
		if (pthread_create(&t[i], NULL, work, &w[i])) {
			perror("pthread_create");
			return 1;
		}
	}
	for (int i = 0; i < THREADS; i++) {
		pthread_join(t[i], NULL);
		if (w[i].failed) {
			fprintf(stderr, "thread %d: %s\n", i, pmemobj_errormsg());
			return 1;
		}
		o = pmemobj_direct(w[i].oid);
		if (o->count != ROUNDS) {
			fprintf(stderr, "thread %d: count %llu\n", i,
				(unsigned long long)o->count);
			return 1;
		}
	}
	o = pmemobj_direct(w[0].oid);
	pobj_expect(pop, &o->last, sizeof(o->last));
	pobj_close(pop);
	return 0;
}
