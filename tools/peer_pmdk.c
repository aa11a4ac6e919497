// SPDX-License-Identifier: MIT
/*
 * peer_pmdk.c - dlopen() PMDK's libpmem.so.1 for side-by-side runs.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <link.h>
#include <stdio.h>
#include <string.h>

#include "peer_pmdk.h"

bool peer_pmdk_load(struct peer_pmdk *p, char *why, size_t len)
{
	struct link_map *map = NULL;

	memset(p, 0, sizeof(*p));
	p->handle = dlopen("libpmem.so.1", RTLD_NOW | RTLD_LOCAL);
	if (!p->handle) {
		snprintf(why, len, "libpmem.so.1 not found (apt-get install libpmem1)");
		return false;
	}
	if (dlinfo(p->handle, RTLD_DI_LINKMAP, &map) == 0 && map)
		snprintf(p->path, sizeof(p->path), "%s", map->l_name);

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
