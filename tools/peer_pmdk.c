// SPDX-License-Identifier: MIT
/*
 * peer_pmdk.c - dlopen() PMDK's libpmem.so.1 for side-by-side runs, and the
 * dlopen() every peer library goes through.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <limits.h>
#include <link.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "peer_pmdk.h"
#include "dropin_note.h"	/* compat/: dropin_note_dep */

struct note_search {
	ElfW(Addr) base;	/* the object's load address (l_addr) */
	bool found;
};

/* Does this loaded object's PT_NOTE hold ntmem's drop-in note? */
static int find_dropin_note(struct dl_phdr_info *info, size_t size, void *arg)
{
	struct note_search *ns = arg;

	(void)size;
	if (info->dlpi_addr != ns->base)
		return 0;
	for (ElfW(Half) i = 0; i < info->dlpi_phnum; i++) {
		const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
		const unsigned char *p, *end;

		if (ph->p_type != PT_NOTE)
			continue;
		p = (const unsigned char *)(info->dlpi_addr + ph->p_vaddr);
		end = p + ph->p_memsz;
		while ((size_t)(end - p) >= sizeof(ElfW(Nhdr))) {
			const ElfW(Nhdr) *n = (const void *)p;
			const char *name = (const char *)(n + 1);
			size_t namesz = (n->n_namesz + 3) & ~(size_t)3;
			size_t descsz = (n->n_descsz + 3) & ~(size_t)3;

			if (n->n_type == NTM_DROPIN_NOTE_TYPE &&
			    n->n_namesz == sizeof(NTM_DROPIN_NOTE_NAME) &&
			    memcmp(name, NTM_DROPIN_NOTE_NAME, n->n_namesz) == 0) {
				ns->found = true;
				return 1;
			}
			if ((size_t)(end - p) < sizeof(*n) + namesz + descsz)
				break;
			p += sizeof(*n) + namesz + descsz;
		}
	}
	return 1;
}

void *peer_dlopen(const char *soname, const char *package, char *path,
		  size_t plen, char *why, size_t wlen)
{
	struct link_map *map = NULL;
	void *handle = dlopen(soname, RTLD_NOW | RTLD_LOCAL);
	struct note_search ns = { 0, false };

	if (!handle) {
		snprintf(why, wlen, "%s not found (apt-get install %s)", soname,
			 package);
		return NULL;
	}
	if (dlinfo(handle, RTLD_DI_LINKMAP, &map) == 0 && map) {
		snprintf(path, plen, "%s", map->l_name);
		ns.base = map->l_addr;
		dl_iterate_phdr(find_dropin_note, &ns);
	}
	/*
	 * ntmem's own drop-in under PMDK's soname (ntmem-pmem-system, or
	 * LD_LIBRARY_PATH): measuring it as the peer would compare ntmem
	 * with itself.
	 */
	if (ns.found) {
		snprintf(why, wlen, "%s is ntmem's drop-in, not PMDK's %s (the "
			 "ntmem-pmem-system package or LD_LIBRARY_PATH put it "
			 "first)", path, soname);
		dlclose(handle);
		return NULL;
	}
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

bool peer_dropin_path(const char *dir, const char *soname, char *path,
		      size_t len, char *why, size_t wlen)
{
	char self[PATH_MAX], cand[2][2 * PATH_MAX];
	ssize_t n = readlink("/proc/self/exe", self, sizeof(self) - 1);
	char *slash;

	self[n > 0 ? n : 0] = '\0';
	slash = strrchr(self, '/');
	if (slash)
		*slash = '\0';
	snprintf(cand[0], sizeof(cand[0]), "%s/../compat/%s/%s", self, dir,
		 soname);
	snprintf(cand[1], sizeof(cand[1]), "%s/../%s",
		 NTMEM_CHECK_LIBDIR_DEFAULT, soname);
	for (int i = 0; i < 2; i++) {
		char *real = realpath(cand[i], NULL);

		if (real && strlen(real) < len) {
			snprintf(path, len, "%s", real);
			free(real);
			return true;
		}
		free(real);
	}
	snprintf(why, wlen, "ntmem's %s is in neither %s nor %s", soname,
		 cand[0], cand[1]);
	return false;
}
