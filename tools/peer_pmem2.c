// SPDX-License-Identifier: MIT
/*
 * peer_pmem2.c - dlopen() a libpmem2.so.1, PMDK's or ntmem's drop-in, and
 * make the benchmark's memory one of its maps.
 *
 * Both libraries export the same names. Each is opened RTLD_LOCAL, so
 * neither's symbols join the global scope, and every function is
 * resolved with dlsym() on its own handle; a library's calls to its own
 * functions find them in its own local scope, as the tool links neither.
 * (RTLD_DEEPBIND is not needed for that, and the sanitizers refuse it.)
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "peer_pmdk.h"	/* peer_dlopen() */
#include "peer_pmem2.h"

#ifndef NTMEM_CHECK_LIBDIR_DEFAULT
#error "NTMEM_CHECK_LIBDIR_DEFAULT: the installed checking library's directory (tools/meson.build)"
#endif

static bool resolve(struct peer_pmem2 *p, char *why, size_t len)
{
	*(void **)&p->source_from_anon = dlsym(p->handle, "pmem2_source_from_anon");
	*(void **)&p->source_delete = dlsym(p->handle, "pmem2_source_delete");
	*(void **)&p->map_from_existing = dlsym(p->handle, "pmem2_map_from_existing");
	*(void **)&p->map_delete = dlsym(p->handle, "pmem2_map_delete");
	*(void **)&p->get_memcpy_fn = dlsym(p->handle, "pmem2_get_memcpy_fn");
	*(void **)&p->errormsg = dlsym(p->handle, "pmem2_errormsg");
	if (!p->source_from_anon || !p->source_delete || !p->map_from_existing ||
	    !p->map_delete || !p->get_memcpy_fn || !p->errormsg) {
		snprintf(why, len, "%s lacks pmem2_map_from_existing() or "
			 "another function of libpmem2 1.11", p->path);
		peer_pmem2_unload(p);
		return false;
	}
	return true;
}

bool peer_pmem2_load(struct peer_pmem2 *p, char *why, size_t len)
{
	memset(p, 0, sizeof(*p));
	p->handle = peer_dlopen("libpmem2.so.1", "libpmem2", p->path,
				sizeof(p->path), why, len);
	return p->handle && resolve(p, why, len);
}

bool peer_pmem2_load_path(struct peer_pmem2 *p, const char *path, char *why,
			  size_t len)
{
	memset(p, 0, sizeof(*p));
	p->handle = dlopen(path, RTLD_NOW | RTLD_LOCAL);
	if (!p->handle) {
		snprintf(why, len, "%s", dlerror());
		return false;
	}
	snprintf(p->path, sizeof(p->path), "%s", path);
	return resolve(p, why, len);
}

bool peer_pmem2_map(struct peer_pmem2 *p, void *addr, size_t len, char *why,
		    size_t wlen)
{
	int ret = p->source_from_anon(&p->source, len);

	if (ret == 0)
		ret = p->map_from_existing(&p->map, p->source, addr, len,
					   PEER_PMEM2_GRANULARITY_CACHE_LINE);
	if (ret) {
		snprintf(why, wlen, "%s: pmem2_map_from_existing: %s", p->path,
			 p->errormsg());
		return false;
	}
	p->memcpy = p->get_memcpy_fn(p->map);
	return true;
}

void peer_pmem2_unload(struct peer_pmem2 *p)
{
	if (p->map)
		p->map_delete(&p->map);
	if (p->source)
		p->source_delete(&p->source);
	/*
	 * Left loaded, not dlclose()d: PMDK's libpmem2 keeps 144 bytes
	 * reachable only from its globals, which an unload would turn into
	 * a leak (LeakSanitizer fails the sanitizer build's bench runs), and
	 * the process ends soon after anyway.
	 */
	p->handle = NULL;
}
