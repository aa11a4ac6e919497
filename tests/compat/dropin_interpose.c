/* SPDX-License-Identifier: MIT */
/*
 * dropin_interpose LIBRARY pmem|blk PATH - a program that interposes on
 * ftruncate() and posix_fallocate() as PMDK's mocks and LD_PRELOAD shims
 * do: it defines them (counting the calls, then forwarding to libc through
 * dlsym(RTLD_NEXT)), exports them (-rdynamic), dlopen()s LIBRARY, a
 * libpmem.so.1 or libpmemblk.so.1, and makes it create PATH:
 *
 *   pmem  pmem_map_file(PATH, 4 MiB, PMEM_FILE_CREATE, 0600), then unmap
 *   blk   pmemblk_create(PATH, 512, PMEMBLK_MIN_POOL, 0600), then close
 *
 * and prints "ftruncate N posix_fallocate M", the calls LIBRARY made. A
 * library that calls ftruncate64() or posix_fallocate64() instead (built
 * with _FILE_OFFSET_BITS=64) shows 0 here. Built without
 * _FILE_OFFSET_BITS=64, so that <unistd.h> and <fcntl.h> name the plain
 * functions; needs an LP64 off_t. dlopen() rather than linking: the same
 * program runs ntmem's drop-ins and PMDK's. Exit 0 when LIBRARY's call
 * succeeded, 1 otherwise.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/types.h>
#include <unistd.h>

#include <libpmem.h>
#include <libpmemblk.h>

_Static_assert(sizeof(off_t) == 8, "the plain names take a 64-bit off_t");

/* The library makes its calls on the caller's thread: plain counters. */
static unsigned long ftruncate_calls, posix_fallocate_calls;

/* libc's definition of NAME: the next after this program. */
static void *next(const char *name)
{
	void *f = dlsym(RTLD_NEXT, name);

	if (!f) {
		fprintf(stderr, "dlsym(RTLD_NEXT, %s): %s\n", name, dlerror());
		_exit(1);
	}
	return f;
}

int ftruncate(int fd, off_t length)
{
	static int (*real)(int, off_t);

	if (!real)
		real = (int (*)(int, off_t))next("ftruncate");
	ftruncate_calls++;
	return real(fd, length);
}

int posix_fallocate(int fd, off_t offset, off_t len)
{
	static int (*real)(int, off_t, off_t);

	if (!real)
		real = (int (*)(int, off_t, off_t))next("posix_fallocate");
	posix_fallocate_calls++;
	return real(fd, offset, len);
}

/* FUNC from @lib, or NULL with the reason on stderr. */
static void *lookup(void *lib, const char *func)
{
	void *f = dlsym(lib, func);

	if (!f)
		fprintf(stderr, "dlsym %s: %s\n", func, dlerror());
	return f;
}

static int create_pmem(void *lib, const char *path)
{
	__typeof__(pmem_map_file) *map = lookup(lib, "pmem_map_file");
	__typeof__(pmem_unmap) *unmap = lookup(lib, "pmem_unmap");
	size_t mapped;
	int is_pmem;
	void *p;

	if (!map || !unmap)
		return 1;
	p = map(path, 4u << 20, PMEM_FILE_CREATE, 0600, &mapped, &is_pmem);
	if (!p) {
		fprintf(stderr, "pmem_map_file %s: %s\n", path, strerror(errno));
		return 1;
	}
	return unmap(p, mapped) ? 1 : 0;
}

static int create_blk(void *lib, const char *path)
{
	__typeof__(pmemblk_create) *create = lookup(lib, "pmemblk_create");
	__typeof__(pmemblk_close) *close_pool = lookup(lib, "pmemblk_close");
	PMEMblkpool *pbp;

	if (!create || !close_pool)
		return 1;
	pbp = create(path, 512, PMEMBLK_MIN_POOL, 0600);
	if (!pbp) {
		fprintf(stderr, "pmemblk_create %s: %s\n", path, strerror(errno));
		return 1;
	}
	close_pool(pbp);
	return 0;
}

int main(int argc, char **argv)
{
	void *lib;
	int ret;

	if (argc != 4 || (strcmp(argv[2], "pmem") && strcmp(argv[2], "blk"))) {
		fprintf(stderr, "usage: %s LIBRARY pmem|blk PATH\n", argv[0]);
		return 2;
	}
	lib = dlopen(argv[1], RTLD_NOW | RTLD_LOCAL);
	if (!lib) {
		fprintf(stderr, "dlopen %s: %s\n", argv[1], dlerror());
		return 1;
	}
	/* Only the library's calls: none of the loading's are counted. */
	ftruncate_calls = posix_fallocate_calls = 0;
	ret = strcmp(argv[2], "pmem") ? create_blk(lib, argv[3])
				       : create_pmem(lib, argv[3]);
	printf("ftruncate %lu posix_fallocate %lu\n", ftruncate_calls,
	       posix_fallocate_calls);
	return ret;
}
