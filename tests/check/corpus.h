/* SPDX-License-Identifier: MIT */
/*
 * corpus.h - what every program of the checker's corpus shares: a 1 MiB
 * file named after the program in the directory argv[1], mapped and
 * filled durably, so that the one durability bug a checker can find is
 * the program's own. Built twice: as is (the bug) and with -DFIXED.
 *
 * Offsets are not multiples of 64: a checker that reports whole cache
 * lines or pages instead of the changed bytes gets them wrong.
 *
 * The libpmem programs persist by what pmem_is_pmem() says of their file,
 * as libpmem(7) tells a program to, so that each is correct (its -DFIXED
 * twin) on every kind of file: corpus_flush() and corpus_persist() are
 * pmem_flush() and pmem_persist() on pmem, pmem_msync() behind a page
 * cache; corpus_drain() is pmem_drain() on pmem, nothing there. Their
 * call sites are MUTABLE (mutable.h): the program-mutation proof deletes
 * them one at a time.
 */
#ifndef CORPUS_H
#define CORPUS_H

#include <libgen.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#define CORPUS_LEN ((size_t)1 << 20)
#define CORPUS_FILL 0x5a
/* 8 bytes in the second page, 24 bytes into a cache line */
#define CORPUS_OFF (4096 + 24)
/* No byte equals CORPUS_FILL: every byte of the store is a change. */
#define CORPUS_VALUE 0x0123456789abcdefULL

/* One 8-byte store the compiler can neither drop nor split. */
static inline void store8(char *p)
{
	*(volatile uint64_t *)p = CORPUS_VALUE;
}

/*
 * DIR/<program name>.pmem, the name the test expects in the report; DIR
 * may be a Device DAX instead (/dev/daxN.M): the libpmem programs then
 * use its first CORPUS_LEN bytes.
 */
static inline void corpus_path(char *path, size_t size, int argc, char **argv)
{
	struct stat st;

	if (argc != 2) {
		fprintf(stderr, "usage: %s DIR\n", argv[0]);
		exit(2);
	}
	if (!stat(argv[1], &st) && S_ISCHR(st.st_mode))
		snprintf(path, size, "%s", argv[1]);
	else
		snprintf(path, size, "%s/%s.pmem", argv[1], basename(argv[0]));
}

/* corpus_path() named a Device DAX (argv[1] itself), not a file in it. */
static inline bool corpus_device(const char *path, char **argv)
{
	return !strcmp(path, argv[1]);
}

#ifdef PMEM_FILE_CREATE		/* the program includes <libpmem.h> first */
#include "mutable.h"

/* pmem_is_pmem() of the program's mapping (corpus_map()), its length. */
static bool corpus_pmem;
static size_t corpus_mapped;

static inline void corpus_msync(const void *p, size_t n)
{
	if (pmem_msync(p, n)) {
		fprintf(stderr, "pmem_msync: %s\n", pmem_errormsg());
		exit(1);
	}
}

static inline void corpus_flush(const void *p, size_t n)
{
	if (corpus_pmem)
		pmem_flush(p, n);
	else
		corpus_msync(p, n);
}

static inline void corpus_drain(void)
{
	if (corpus_pmem)
		pmem_drain();
}

static inline void corpus_persist(const void *p, size_t n)
{
	if (corpus_pmem)
		pmem_persist(p, n);
	else
		corpus_msync(p, n);
}

/* After a copy that flushed or stored non-temporally without a drain:
 * the fence on pmem, the msync() behind a page cache. */
static inline void corpus_drain_range(const void *p, size_t n)
{
	if (corpus_pmem)
		pmem_drain();
	else
		corpus_msync(p, n);
}

/*
 * A device keeps the last run's bytes, and a store of the byte already
 * there changes nothing a checker could miss: back to zero first, the
 * state a new file starts in, so that what the program stores next is a
 * change as on a new file. Durable at once and no site of its own: this
 * is the program's starting state, not its work.
 */
static inline void corpus_device_reset(void *base, size_t len)
{
	memset(base, 0, len);
	pmem_persist(base, len);
}

static inline char *corpus_map(int argc, char **argv)
{
	char path[4096];
	size_t len;
	int is_pmem;

	corpus_path(path, sizeof(path), argc, argv);
	/* A device dax is mapped whole, with no length and no flags. */
	bool device = corpus_device(path, argv);
	char *base = pmem_map_file(path, device ? 0 : CORPUS_LEN,
				   device ? 0 : PMEM_FILE_CREATE, 0600, &len,
				   &is_pmem);
	if (base == NULL || len < CORPUS_LEN) {
		fprintf(stderr, "%s: %s\n", path, pmem_errormsg());
		exit(1);
	}
	corpus_pmem = is_pmem;
	corpus_mapped = len;
	if (device)
		corpus_device_reset(base, CORPUS_LEN);
	memset(base, CORPUS_FILL, CORPUS_LEN);
	MUTABLE(corpus_persist(base, CORPUS_LEN));
	return base;
}

static inline void corpus_unmap(char *base)
{
	if (pmem_unmap(base, corpus_mapped) != 0) {
		perror("pmem_unmap");
		exit(1);
	}
}
#endif

#endif /* CORPUS_H */
