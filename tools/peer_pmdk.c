// SPDX-License-Identifier: MIT
/*
 * peer_pmdk.c - dlopen() PMDK's libpmem.so.1 for side-by-side runs, and the
 * dlopen() every peer library goes through.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <link.h>
#include <stdio.h>
#include <string.h>

#include "peer_pmdk.h"

void *peer_dlopen(const char *soname, const char *package, char *path,
		  size_t plen, char *why, size_t wlen)
{
	struct link_map *map = NULL;
	void *handle = dlopen(soname, RTLD_NOW | RTLD_LOCAL);

	if (!handle) {
		snprintf(why, wlen, "%s not found (apt-get install %s)", soname,
			 package);
		return NULL;
	}
	if (dlinfo(handle, RTLD_DI_LINKMAP, &map) == 0 && map)
		snprintf(path, plen, "%s", map->l_name);
	return handle;
}

bool peer_pmdk_load(struct peer_pmdk *p, char *why, size_t len)
{
	memset(p, 0, sizeof(*p));
	p->handle = peer_dlopen("libpmem.so.1", "libpmem1", p->path,
				sizeof(p->path), why, len);
	if (!p->handle)
		return false;

	*(void **)&p->memcpy = dlsym(p->handle, "pmem_memcpy");
	*(void **)&p->memcpy_persist = dlsym(p->handle, "pmem_memcpy_persist");
	*(void **)&p->memset = dlsym(p->handle, "pmem_memset");
	*(void **)&p->persist = dlsym(p->handle, "pmem_persist");
	*(void **)&p->drain = dlsym(p->handle, "pmem_drain");
	if (!p->memcpy || !p->memcpy_persist || !p->memset || !p->persist ||
	    !p->drain) {
		snprintf(why, len, "%s lacks the pmem_memcpy family", p->path);
		peer_pmdk_unload(p);
		return false;
	}
	return true;
}

void peer_pmdk_unload(struct peer_pmdk *p)
{
	if (p->handle)
		dlclose(p->handle);
	p->handle = NULL;
}
