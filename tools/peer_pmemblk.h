/* SPDX-License-Identifier: MIT */
/*
 * peer_pmemblk.h - PMDK's libpmemblk (Debian's libpmemblk1) as a benchmark
 * peer of the BTT, loaded at run time so ntmem never depends on it. Absent
 * library: the peer rows are skipped.
 */
#ifndef NTMEM_TOOL_PEER_PMEMBLK_H
#define NTMEM_TOOL_PEER_PMEMBLK_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

/* PMEMblkpool is opaque in libpmemblk.h too. */
struct peer_pmemblk {
	void *handle;
	char path[256];		/* the file the dynamic loader picked */
	void *(*create)(const char *path, size_t bsize, size_t poolsize,
			mode_t mode);
	void *(*open)(const char *path, size_t bsize);
	void (*close)(void *pbp);
	size_t (*nblock)(void *pbp);
	int (*read)(void *pbp, void *buf, long long blockno);
	int (*write)(void *pbp, const void *buf, long long blockno);
	const char *(*errormsg)(void);
};

/*
 * Load libpmemblk.so.1. Returns true when every function resolved; on
 * false, @why says what was missing.
 */
bool peer_pmemblk_load(struct peer_pmemblk *p, char *why, size_t len);
/*
 * Load the libpmemblk.so.1 at @path (ntmem's drop-in, for a side-by-side
 * run): as peer_pmemblk_load(). Load PMDK's first: once a library of that
 * soname is loaded, dlopen() by the soname returns it.
 */
bool peer_pmemblk_load_path(struct peer_pmemblk *p, const char *path,
			    char *why, size_t len);
void peer_pmemblk_unload(struct peer_pmemblk *p);

#endif
