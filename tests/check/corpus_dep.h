/* SPDX-License-Identifier: MIT */
/*
 * corpus_dep.h - libcorpus_dep.so, a library of the tests' own that links
 * libpmem.so.1, so that a program linked against it alone reaches libpmem
 * as a dependency's dependency: loaded after libc, as libpmemobj's
 * programs load it. Each function is corpus.h's or libpmem's, called from
 * inside the library.
 */
#ifndef CORPUS_DEP_H
#define CORPUS_DEP_H

#include <stddef.h>

char *dep_map(int argc, char **argv);
void dep_flush(const void *p, size_t n);
void dep_drain(void);
void dep_unmap(char *base);

#endif /* CORPUS_DEP_H */
