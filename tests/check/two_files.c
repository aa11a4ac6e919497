/* SPDX-License-Identifier: MIT */
/*
 * Two threads, each with a file of its own (DIR/two_files.other.pmem and
 * DIR/two_files.pmem), store 50 records of 8 bytes and persist each, as
 * pmem_is_pmem() says (corpus.h), while the other does the same.
 * Bug: the second thread's last record is never persisted.
 * Expected: never-written-back (not-synced behind a page cache) in
 * two_files.pmem at 4096 + 49 * 64 + 24 = 7256, 8 bytes, at pmem_unmap.
 * On a Device DAX (corpus_path()) the two "files" are two mappings of
 * the device, one a thread: the first thread's works in the device's
 * second MiB, the second's in its first.
 */
#include <pthread.h>

#include <libpmem.h>
#include "corpus.h"

#define ROUNDS 50

struct file {
	char path[4096];
	char *map;		/* pmem_map_file()'s mapping, of len bytes */
	size_t len;
	char *base;		/* the thread's CORPUS_LEN bytes in it */
	bool last_forgotten;
};

static void *work(void *arg)
{
	struct file *f = arg;

	for (int r = 0; r < ROUNDS; r++) {
		char *p = f->base + 4096 + 64 * r + 24;

		store8(p);
		if (r == ROUNDS - 1 && f->last_forgotten)
			continue;
		MUTABLE(corpus_persist(p, 8));
	}
	return NULL;
}

int main(int argc, char **argv)
{
	struct file f[2] = { 0 };
	pthread_t t[2];
	int is_pmem;

	corpus_path(f[1].path, sizeof(f[1].path), argc, argv);
	bool device = corpus_device(f[1].path, argv);

	if (device)
		snprintf(f[0].path, sizeof(f[0].path), "%s", argv[1]);
	else
		snprintf(f[0].path, sizeof(f[0].path), "%s/two_files.other.pmem", argv[1]);
#ifndef FIXED
	f[1].last_forgotten = true;
#endif
	for (int i = 0; i < 2; i++) {
		/* A device is mapped whole (corpus_map()). */
		f[i].map = pmem_map_file(f[i].path, device ? 0 : CORPUS_LEN,
					 device ? 0 : PMEM_FILE_CREATE, 0600,
					 &f[i].len, &is_pmem);
		if (!f[i].map || f[i].len < (device ? 2 : 1) * CORPUS_LEN) {
			fprintf(stderr, "%s: %s\n", f[i].path, pmem_errormsg());
			return 1;
		}
		corpus_pmem = is_pmem;
		f[i].base = f[i].map + (device && i == 0 ? CORPUS_LEN : 0);
		if (device)
			corpus_device_reset(f[i].base, CORPUS_LEN);
		memset(f[i].base, CORPUS_FILL, CORPUS_LEN);
		MUTABLE(corpus_persist(f[i].base, CORPUS_LEN));
	}
	for (int i = 0; i < 2; i++)
		if (pthread_create(&t[i], NULL, work, &f[i])) {
			perror("pthread_create");
			return 1;
		}
	for (int i = 0; i < 2; i++) {
		pthread_join(t[i], NULL);
		if (pmem_unmap(f[i].map, f[i].len)) {
			perror("pmem_unmap");
			return 1;
		}
	}
	return 0;
}
