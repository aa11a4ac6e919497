/* SPDX-License-Identifier: MIT */
/*
 * corpus.h - what every program of the checker's corpus shares: a 1 MiB
 * file named after the program in the directory argv[1], mapped and
 * filled durably, so that the one durability bug a checker can find is
 * the program's own. Built twice: as is (the bug) and with -DFIXED.
 *
 * Offsets are not multiples of 64: a checker that reports whole cache
 * lines or pages instead of the changed bytes gets them wrong.
 */
#ifndef CORPUS_H
#define CORPUS_H

#include <libgen.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

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

/* DIR/<program name>.pmem, the name the test expects in the report */
static inline void corpus_path(char *path, size_t size, int argc, char **argv)
{
	if (argc != 2) {
		fprintf(stderr, "usage: %s DIR\n", argv[0]);
		exit(2);
	}
	snprintf(path, size, "%s/%s.pmem", argv[1], basename(argv[0]));
}

#ifdef PMEM_FILE_CREATE		/* the program includes <libpmem.h> first */
static inline char *corpus_map(int argc, char **argv)
{
	char path[4096];
	size_t len;
	int is_pmem;

	corpus_path(path, sizeof(path), argc, argv);
	char *base = pmem_map_file(path, CORPUS_LEN, PMEM_FILE_CREATE, 0600,
				   &len, &is_pmem);
	if (base == NULL || len != CORPUS_LEN) {
		fprintf(stderr, "%s: %s\n", path, pmem_errormsg());
		exit(1);
	}
	/* is_pmem is ignored: the persistence calls are the program's,
	 * whatever the medium (the tests force it to 1). */
	pmem_memset_persist(base, CORPUS_FILL, len);
	return base;
}

static inline void corpus_unmap(char *base)
{
	if (pmem_unmap(base, CORPUS_LEN) != 0) {
		perror("pmem_unmap");
		exit(1);
	}
}
#endif

#endif /* CORPUS_H */
