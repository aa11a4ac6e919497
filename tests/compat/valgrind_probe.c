// SPDX-License-Identifier: MIT
/*
 * valgrind_probe.c - the libpmem drop-in as valgrind's tools see a
 * program that uses it (check_valgrind.sh runs it under them), built
 * against PMDK's header as PMDK's own tests are:
 *
 *   msync DIR     a page of a mapped file whose first bytes are marked not
 *                 addressable for memcheck, as libpmemobj marks its pool;
 *                 pmem_msync() of a few bytes after them (msync() starts
 *                 at the page): memcheck must find no error
 *   threads       eight threads make their first pmem_memcpy_persist()
 *                 at once (each binds the copy entries, relaxed atomics):
 *                 helgrind must find no race
 *
 * Exit 0 done, 1 a call failed.
 */
#define _GNU_SOURCE
#include <libpmem.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <valgrind/memcheck.h>

#define THREADS 8

static pthread_barrier_t start;

static void *copier(void *arg)
{
	char *dst = arg, src[4096];

	memset(src, 0x5a, sizeof(src));
	pthread_barrier_wait(&start);
	for (size_t n = 8; n <= sizeof(src); n *= 2)
		pmem_memcpy_persist(dst, src, n);
	return NULL;
}

int main(int argc, char **argv)
{
	if (argc == 3 && !strcmp(argv[1], "msync")) {
		char path[4096];
		size_t len;
		char *p;

		snprintf(path, sizeof(path), "%s/msync", argv[2]);
		p = pmem_map_file(path, 8192, PMEM_FILE_CREATE, 0600, &len,
				  NULL);
		if (!p) {
			fprintf(stderr, "pmem_map_file: %s\n", pmem_errormsg());
			return 1;
		}
		p[100] = 1;
		/* Before the bytes synced, in their page: msync() starts there. */
		VALGRIND_MAKE_MEM_NOACCESS(p, 64);
		if (pmem_msync(p + 100, 8)) {
			fprintf(stderr, "pmem_msync: %s\n", pmem_errormsg());
			return 1;
		}
		VALGRIND_MAKE_MEM_DEFINED(p, 64);
		return pmem_unmap(p, len) ? 1 : 0;
	}
	if (argc == 2 && !strcmp(argv[1], "threads")) {
		pthread_t t[THREADS];
		char *bufs = aligned_alloc(64, THREADS * 4096);

		if (!bufs)
			return 1;
		pthread_barrier_init(&start, NULL, THREADS);
		for (int i = 0; i < THREADS; i++)
			if (pthread_create(&t[i], NULL, copier, bufs + i * 4096))
				return 1;
		for (int i = 0; i < THREADS; i++)
			pthread_join(t[i], NULL);
		free(bufs);
		return 0;
	}
	fprintf(stderr, "usage: valgrind_probe msync DIR | threads\n");
	return 1;
}
