// SPDX-License-Identifier: MIT
/*
 * peer_pmemblk.c - dlopen() PMDK's libpmemblk.so.1 for side-by-side runs.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stdio.h>
#include <string.h>

#include "peer_pmdk.h"
#include "peer_pmemblk.h"

/* The functions of the loaded @p->handle; false, unloaded, when one lacks. */
static bool resolve(struct peer_pmemblk *p, char *why, size_t len)
{
	*(void **)&p->create = dlsym(p->handle, "pmemblk_create");
	*(void **)&p->open = dlsym(p->handle, "pmemblk_open");
	*(void **)&p->close = dlsym(p->handle, "pmemblk_close");
	*(void **)&p->nblock = dlsym(p->handle, "pmemblk_nblock");
	*(void **)&p->read = dlsym(p->handle, "pmemblk_read");
	*(void **)&p->write = dlsym(p->handle, "pmemblk_write");
	*(void **)&p->errormsg = dlsym(p->handle, "pmemblk_errormsg");
	if (!p->create || !p->open || !p->close || !p->nblock || !p->read ||
	    !p->write || !p->errormsg) {
		snprintf(why, len, "%s lacks the pmemblk_* functions", p->path);
		peer_pmemblk_unload(p);
		return false;
	}
	return true;
}

bool peer_pmemblk_load(struct peer_pmemblk *p, char *why, size_t len)
{
	memset(p, 0, sizeof(*p));
	p->handle = peer_dlopen("libpmemblk.so.1", "libpmemblk1", p->path,
				sizeof(p->path), why, len);
	return p->handle && resolve(p, why, len);
}

bool peer_pmemblk_load_path(struct peer_pmemblk *p, const char *path,
			    char *why, size_t len)
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

void peer_pmemblk_unload(struct peer_pmemblk *p)
{
	if (p->handle)
		dlclose(p->handle);
	p->handle = NULL;
}
