/* SPDX-License-Identifier: MIT */
/*
 * missing_flush, with libpmem.so.1 dlopen()ed once main() runs (as fio
 * loads its engines): the program links no libpmem, and the checking
 * library starts inside dlopen(), long after libc and the preload shim.
 * Expected: not-written-back at pmem_drain.
 */
#include <dlfcn.h>
#include "corpus.h"
/* After corpus.h: PMDK's types and flags only, no corpus_map(). */
#include <libpmem.h>

static void *fn(void *lib, const char *name)
{
	void *f = dlsym(lib, name);

	if (!f) {
		fprintf(stderr, "dlsym %s: %s\n", name, dlerror());
		exit(1);
	}
	return f;
}

int main(int argc, char **argv)
{
	char path[4096];
	void *lib;
	__typeof__(pmem_map_file) *map_file;
	__typeof__(pmem_memset_persist) *memset_persist;
	__typeof__(pmem_flush) *flush;
	__typeof__(pmem_drain) *drain;
	__typeof__(pmem_unmap) *unmap;
	size_t len;
	int is_pmem;
	char *base, *p;

	corpus_path(path, sizeof(path), argc, argv);
	lib = dlopen("libpmem.so.1", RTLD_NOW | RTLD_LOCAL);
	if (!lib) {
		fprintf(stderr, "dlopen libpmem.so.1: %s\n", dlerror());
		return 1;
	}
	map_file = (__typeof__(map_file))fn(lib, "pmem_map_file");
	memset_persist = (__typeof__(memset_persist))fn(lib, "pmem_memset_persist");
	flush = (__typeof__(flush))fn(lib, "pmem_flush");
	drain = (__typeof__(drain))fn(lib, "pmem_drain");
	unmap = (__typeof__(unmap))fn(lib, "pmem_unmap");
	base = map_file(path, CORPUS_LEN, PMEM_FILE_CREATE, 0600, &len, &is_pmem);
	if (!base || len != CORPUS_LEN) {
		fprintf(stderr, "%s: cannot map\n", path);
		return 1;
	}
	memset_persist(base, CORPUS_FILL, len);
	p = base + CORPUS_OFF;
	store8(p);
#ifdef FIXED
	flush(p, 8);
#endif
	drain();
	if (unmap(base, CORPUS_LEN)) {
		perror("pmem_unmap");
		return 1;
	}
	return 0;
}
