/* SPDX-License-Identifier: MIT */
/*
 * peer_pmdk.h - PMDK's libpmem as a benchmark peer, loaded at run time so
 * ntmem never depends on it. Absent library: the peer rows are skipped.
 */
#ifndef NTMEM_TOOL_PEER_PMDK_H
#define NTMEM_TOOL_PEER_PMDK_H

#include <stdbool.h>
#include <stddef.h>

/* PMDK's flag values (libpmem.h), so no PMDK header is needed to build. */
#define PEER_PMEM_F_MEM_NODRAIN (1u << 0)
#define PEER_PMEM_F_MEM_NONTEMPORAL (1u << 1)
#define PEER_PMEM_F_MEM_TEMPORAL (1u << 2)

struct peer_pmdk {
	void *handle;
	char path[256];		/* the file the dynamic loader picked */
	void *(*memcpy)(void *dst, const void *src, size_t n, unsigned flags);
	void *(*memcpy_persist)(void *dst, const void *src, size_t n);
	void *(*memset)(void *dst, int c, size_t n, unsigned flags);
	void (*persist)(const void *p, size_t n);
	void (*drain)(void);
};

/*
 * Load libpmem.so.1. Returns true when every function resolved; on false,
 * @why says what was missing.
 */
bool peer_pmdk_load(struct peer_pmdk *p, char *why, size_t len);

/*
 * dlopen() @soname from the loader's search path; @path gets the file it
 * picked. NULL with @why naming the Debian @package to install.
 */
void *peer_dlopen(const char *soname, const char *package, char *path,
		  size_t plen, char *why, size_t wlen);

/*
 * Where ntmem's own drop-in @soname is: a build tree's compat/@dir beside
 * the tool's tools/, else where it is installed ($libdir/ntmem, the
 * checking library's parent). True with @path set to the real path;
 * false with @why naming both places looked in.
 */
bool peer_dropin_path(const char *dir, const char *soname, char *path,
		      size_t len, char *why, size_t wlen);
void peer_pmdk_unload(struct peer_pmdk *p);

#endif
