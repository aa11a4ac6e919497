/* SPDX-License-Identifier: MIT */
/*
 * mutable.h - the persistence call sites of the checker's corpus, for the
 * program-mutation proof (check_mutants.sh): MUTABLE(call) makes a
 * persistence call (pmem_persist, pmem_flush, pmem_drain, pmem_msync,
 * pmemobj_persist, a pmemobj_tx_add_range*, a pmem2 persist function,
 * ...) a site the proof can delete, one site per source line.
 *
 *   CORPUS_MUTANT=FILE:LINE  the call of that site is not made: the
 *                            mutant, as if the line were deleted (one
 *                            binary serves every mutant of a program);
 *   CORPUS_SITES=PATH        each site the run reaches is appended to PATH
 *                            once ("FILE:LINE"): the proof tells a site no
 *                            run reaches on a file kind (the branch of the
 *                            other kind) from one the checker missed.
 *
 * Unset, MUTABLE(call) is the call.
 */
#ifndef CORPUS_MUTABLE_H
#define CORPUS_MUTABLE_H

#include <libgen.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MUTABLE(call)                                                   \
	do {                                                            \
		if (!corpus_site_deleted(__FILE__, __LINE__))           \
			call;                                           \
	} while (0)

/* Sites reached, told once each (a loop reaches one many times). */
#define CORPUS_MAX_SITES 256

/* Whether the site at @file:@line is the deleted one; notes it reached. */
static inline bool corpus_site_deleted(const char *file, int line)
{
	static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
	static const char *seen_file[CORPUS_MAX_SITES];
	static int seen_line[CORPUS_MAX_SITES], nseen;
	const char *mutant = getenv("CORPUS_MUTANT");
	const char *log = getenv("CORPUS_SITES");
	/* __FILE__ is the path the compiler was given: its base name names
	 * the site in the table of equivalent mutants. */
	const char *base = strrchr(file, '/') ? strrchr(file, '/') + 1 : file;
	char site[256];

	snprintf(site, sizeof(site), "%s:%d", base, line);
	if (log && *log) {
		bool known = false;

		pthread_mutex_lock(&lock);
		for (int i = 0; i < nseen && !known; i++)
			known = seen_line[i] == line && seen_file[i] == file;
		if (!known && nseen < CORPUS_MAX_SITES) {
			FILE *f = fopen(log, "a");

			seen_file[nseen] = file;
			seen_line[nseen++] = line;
			if (f) {
				fprintf(f, "%s\n", site);
				fclose(f);
			}
		}
		pthread_mutex_unlock(&lock);
	}
	return mutant && !strcmp(mutant, site);
}

#endif /* CORPUS_MUTABLE_H */
